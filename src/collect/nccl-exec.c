/*
 * `hpnode nccl --exec`: a fixed, read-only script run by `kubectl exec` in
 * one running container per replica type of each job (and a few more pods
 * of the job, for the version comparison), its output decoded at once
 * (hp_nccl_exec_parse) into nccl.exec (layout in hp/snapshot.h). Nothing
 * else is ever run in a container, and nothing without --exec.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "hp/kube.h"
#include "hp/nccl-facts.h"
#include "hp/text.h"
#include "nccl-exec.h"

#define EXEC_WORKERS 4
#define EXEC_PER_JOB 8
#define EXEC_MAX 32

/*
 * Read-only, POSIX sh; every file under ${HPNODE_PROBE_ROOT} (empty in a real
 * container) so a test can point it at a prepared tree. The environment is
 * filtered before it leaves the container: NCCL, libfabric and rendezvous
 * names only, never one holding KEY, SECRET, TOKEN, PASSWORD or CREDENTIAL.
 */
static const char script[] =
	"R=${HPNODE_PROBE_ROOT:-}\n"
	"echo '@@HP@@ BEGIN env'\n"
	"env 2>/dev/null | grep -E '^(NCCL_[A-Z0-9_]*|FI_[A-Z0-9_]*|TORCH_NCCL_[A-Z0-9_]*|"
	"TORCH_DISTRIBUTED_DEBUG|MASTER_ADDR|MASTER_PORT|WORLD_SIZE|RANK|LOCAL_RANK|"
	"CUDA_VISIBLE_DEVICES|LD_LIBRARY_PATH|PYTORCH_CUDA_ALLOC_CONF|"
	"OMPI_MCA_btl_tcp_if_(include|exclude))=' | "
	"grep -Ev '^[^=]*(KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL)' | head -n 200\n"
	"echo '@@HP@@ END env 0'\n"
	"echo '@@HP@@ BEGIN torch'\n"
	"if command -v python3 >/dev/null 2>&1; then\n"
	"  PYTHONDONTWRITEBYTECODE=1 python3 -B -c 'import torch; print(\"torch\", torch.__version__); "
	"print(\"nccl\", torch.cuda.nccl.version())' 2>&1 | head -n 5\n"
	"else echo 'no python3'; fi\n"
	"echo '@@HP@@ END torch 0'\n"
	"echo '@@HP@@ BEGIN libnccl'\n"
	"for f in \"$R\"/usr/local/cuda/lib64/libnccl.so* \"$R\"/usr/local/cuda/lib/libnccl.so* "
	"\"$R\"/usr/lib/x86_64-linux-gnu/libnccl.so* \"$R\"/usr/lib64/libnccl.so* "
	"\"$R\"/usr/lib/libnccl.so* \"$R\"/usr/local/lib/libnccl.so* \"$R\"/opt/nccl/lib/libnccl.so* "
	"\"$R\"/opt/conda/lib/libnccl.so* "
	"\"$R\"/usr/local/lib/python3*/*-packages/nvidia/nccl/lib/libnccl.so* "
	"\"$R\"/usr/lib/python3*/*-packages/nvidia/nccl/lib/libnccl.so* "
	"\"$R\"/opt/conda/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so*; do\n"
	"  [ -e \"$f\" ] && echo \"${f#\"$R\"}\"\n"
	"done | head -n 20\n"
	"echo '@@HP@@ END libnccl 0'\n"
	"echo '@@HP@@ BEGIN shm'\n"
	"df -Pk \"$R/dev/shm\" 2>&1 | tail -n 1\n"
	"echo '@@HP@@ END shm 0'\n"
	"echo '@@HP@@ DONE'\n";

const char *hp_nccl_exec_script(void)
{
	return script;
}


struct exec_task {
	const cJSON *pod;
	char ns[256], pod_name[256], container[256], replica[64];
	/* filled by the worker */
	enum hp_kube_status status;
	char message[512];
	cJSON *facts;
};

struct exec_pool {
	struct hp_kube *k;
	struct exec_task *t;
	size_t n, next;
	pthread_mutex_t lock;
};

static const char *label(const cJSON *pod, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(hp_json_get(pod, "labels"), key);

	return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

static double quantity(const cJSON *c, const char *key)
{
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(hp_json_get(c, "limits"), key);

	if (!q)
		q = cJSON_GetObjectItemCaseSensitive(hp_json_get(c, "requests"), key);
	return cJSON_IsString(q) ? atof(q->valuestring) : cJSON_IsNumber(q) ? q->valuedouble : 0;
}

/* The container the checks judge: the first asking for GPUs or EFA, else the first. */
static const char *main_container(const cJSON *pod)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, hp_json_arr(pod, "spec.containers"))
		if (quantity(c, "nvidia.com/gpu") > 0 || quantity(c, "vpc.amazonaws.com/efa") > 0)
			return hp_json_str(c, "name");
	return hp_json_str(cJSON_GetArrayItem(hp_json_arr(pod, "spec.containers"), 0), "name");
}

/* The pod runs, and so does that container (kubectl exec needs a running one). */
static int running(const cJSON *pod, const char *container)
{
	const cJSON *c;

	if (!container || strcmp(hp_json_str(pod, "phase") ? hp_json_str(pod, "phase") : "", "Running"))
		return 0;
	cJSON_ArrayForEach(c, hp_json_arr(pod, "containers")) {
		const char *st = hp_json_str(c, "state");

		if (!cJSON_IsTrue(cJSON_GetObjectItem(c, "init")) && hp_json_str(c, "name") &&
		    !strcmp(hp_json_str(c, "name"), container))
			return st && !strcmp(st, "running");
	}
	return 0;
}

static const char *job_of(const cJSON *pod)
{
	const char *j = label(pod, "training.kubeflow.org/job-name");

	return j ? j : label(pod, "job-name");
}

static int same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static int planned(const struct exec_task *t, size_t n, const cJSON *pod)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (t[i].pod == pod)
			return 1;
	return 0;
}

static void plan_one(struct exec_task *t, size_t *n, const cJSON *pod, const char *container)
{
	const char *r = label(pod, "training.kubeflow.org/replica-type");

	memset(&t[*n], 0, sizeof(t[*n]));
	t[*n].pod = pod;
	hp_strlcpy(t[*n].ns, hp_json_str(pod, "namespace") ? hp_json_str(pod, "namespace") : "",
		   sizeof(t[*n].ns));
	hp_strlcpy(t[*n].pod_name, hp_json_str(pod, "name") ? hp_json_str(pod, "name") : "",
		   sizeof(t[*n].pod_name));
	hp_strlcpy(t[*n].container, container, sizeof(t[*n].container));
	hp_strlcpy(t[*n].replica, r ? r : "", sizeof(t[*n].replica));
	if (*t[*n].ns && *t[*n].pod_name)
		(*n)++;
}

/*
 * Per job: first one running pod of each replica type (its environment stands
 * for the type), then more running pods of the job up to EXEC_PER_JOB, for
 * the version comparison; EXEC_MAX in all.
 */
static size_t plan(const cJSON *pods, struct exec_task *t)
{
	const cJSON *pod;
	size_t n = 0;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		cJSON_ArrayForEach(pod, pods) {
			const char *job = job_of(pod), *c = main_container(pod);
			const char *r = label(pod, "training.kubeflow.org/replica-type");
			size_t i, of_job = 0, of_type = 0;

			if (n >= EXEC_MAX || !job || !running(pod, c) || planned(t, n, pod))
				continue;
			for (i = 0; i < n; i++) {
				if (!same(job_of(t[i].pod), job) ||
				    !same(hp_json_str(t[i].pod, "namespace"), hp_json_str(pod, "namespace")))
					continue;
				of_job++;
				of_type += !strcmp(t[i].replica, r ? r : "");
			}
			if ((pass == 0 && of_type) || of_job >= EXEC_PER_JOB)
				continue;
			plan_one(t, &n, pod, c);
		}
	}
	return n;
}

static void run_task(struct exec_pool *p, struct exec_task *t)
{
	const char *args[] = { "exec", "--namespace", t->ns, t->pod_name, "--container", t->container,
			       "--", "sh", "-c", hp_nccl_exec_script(), NULL };
	struct hp_kube_result r;
	cJSON *facts = NULL;

	hp_kube_run(p->k, args, 0, &r);
	if (r.status == HP_KUBE_OK || r.status == HP_KUBE_TOO_BIG)
		facts = hp_nccl_exec_parse(r.out.buf, r.out.len);
	pthread_mutex_lock(&p->lock);
	t->status = r.status;
	hp_strlcpy(t->message, r.message, sizeof(t->message));
	t->facts = facts;
	pthread_mutex_unlock(&p->lock);
	hp_kube_result_release(&r);
}

static void *worker(void *arg)
{
	struct exec_pool *p = arg;

	for (;;) {
		struct exec_task *t;

		pthread_mutex_lock(&p->lock);
		t = p->next < p->n ? &p->t[p->next++] : NULL;
		pthread_mutex_unlock(&p->lock);
		if (!t)
			return NULL;
		run_task(p, t);
	}
}

void hp_nccl_exec_pods(struct hp_kube *k, cJSON *nccl)
{
	struct exec_task *t = xcalloc(EXEC_MAX, sizeof(*t));
	struct exec_pool p;
	pthread_t th[EXEC_WORKERS];
	size_t i, started = 0, workers;
	cJSON *exec = cJSON_AddObjectToObject(nccl, "exec"), *list;

	memset(&p, 0, sizeof(p));
	p.k = k;
	p.t = t;
	p.n = plan(cJSON_GetObjectItemCaseSensitive(nccl, "pods"), t);
	if (!p.n)
		cJSON_AddStringToObject(exec, "skipped", "no pod of a job has a running container");
	pthread_mutex_init(&p.lock, NULL);
	workers = p.n < EXEC_WORKERS ? p.n : EXEC_WORKERS;
	for (i = 0; i < workers; i++)
		if (!pthread_create(&th[started], NULL, worker, &p))
			started++;
	if (!started)
		worker(&p);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&p.lock);
	list = cJSON_AddArrayToObject(exec, "pods");
	for (i = 0; i < p.n; i++) {
		cJSON *x = t[i].facts ? t[i].facts : cJSON_CreateObject();
		struct hp_buf clean = HP_BUF_INIT(HP_MAX_LINE);

		cJSON_AddStringToObject(x, "namespace", t[i].ns);
		cJSON_AddStringToObject(x, "pod", t[i].pod_name);
		cJSON_AddStringToObject(x, "container", t[i].container);
		if (*t[i].replica)
			cJSON_AddStringToObject(x, "replica", t[i].replica);
		cJSON_AddStringToObject(x, "status", hp_kube_status_name(t[i].status));
		if (t[i].status != HP_KUBE_OK) {
			hp_text_addn(HP_TEXT_LOG, t[i].message, strlen(t[i].message), 400, &clean);
			cJSON_AddStringToObject(x, "error", clean.buf);
		}
		hp_buf_release(&clean);
		cJSON_AddItemToArray(list, x);
	}
	free(t);
}
