/*
 * The NCCL collector (src/collect/nccl-read.c) with a scripted kubectl and canned
 * CloudWatch replies: it reads a job's pods by the Kubeflow label, else by
 * job-name, never passes a job name kubectl would read as more than one
 * requirement, keeps only the NCCL environment (no secrets), reads each
 * container's log and --previous only where a previous container exists
 * (a job's pods a batch of replica indexes per call, split by prefix),
 * scans them into bounded hits, records forbidden reads, uses kubectl only
 * when it was verified, and searches CloudWatch with bounded pages and
 * de-duplicated events.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/collect/nccl-exec.h"
#include "checks-t.h"
#include "fake-sys.h"
#include "hp/aws.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "hp/kube.h"
#include "hp/nccl-facts.h"
#include "t.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char calls[64][320];
static size_t ncalls;
static int forbid_services, empty_kubeflow;
static int big_job(const char *line, struct hp_run_res *res);

static const char pods_llama[] =
	"{\"items\":["
	"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"llama-master-0\",\"labels\":{"
	"\"training.kubeflow.org/job-name\":\"llama\",\"training.kubeflow.org/replica-type\":"
	"\"master\"},\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":"
	"\"PyTorchJob\",\"name\":\"llama\"}]},"
	"\"spec\":{\"nodeName\":\"hyperpod-i-0aaaaaaaaaaaaaaa1\",\"containers\":[{\"name\":\"pytorch\","
	"\"image\":\"123.dkr.ecr/train:1\",\"env\":[{\"name\":\"NCCL_DEBUG\",\"value\":\"INFO\"},"
	"{\"name\":\"WANDB_API_KEY\",\"value\":\"do-not-keep\"},{\"name\":\"NCCL_SECRET_TOKEN\","
	"\"value\":\"do-not-keep\"},{\"name\":\"MASTER_ADDR\",\"valueFrom\":{\"fieldRef\":{}}},"
	"{\"name\":\"FI_PROVIDER\",\"value\":\"efa\"}],\"resources\":{\"limits\":{"
	"\"vpc.amazonaws.com/efa\":\"32\",\"nvidia.com/gpu\":\"8\"}},\"volumeMounts\":[{\"name\":"
	"\"dshm\",\"mountPath\":\"/dev/shm\"}],\"securityContext\":{\"capabilities\":{\"add\":"
	"[\"IPC_LOCK\"]}}}],\"volumes\":[{\"name\":\"dshm\",\"emptyDir\":{\"medium\":\"Memory\","
	"\"sizeLimit\":\"64Gi\"}}]},"
	"\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
	"\"containerStatuses\":[{\"name\":\"pytorch\",\"ready\":true,\"restartCount\":0,"
	"\"state\":{\"running\":{}}}]}},"
	"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"llama-worker-0\",\"labels\":{"
	"\"training.kubeflow.org/job-name\":\"llama\",\"training.kubeflow.org/replica-type\":"
	"\"worker\"}},"
	"\"spec\":{\"nodeName\":\"hyperpod-i-0aaaaaaaaaaaaaaa2\",\"initContainers\":[{\"name\":"
	"\"fetch\"}],\"containers\":[{\"name\":\"pytorch\",\"resources\":{\"requests\":{"
	"\"vpc.amazonaws.com/efa\":\"32\"}}}]},"
	"\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
	"\"reason\":\"ContainersNotReady\",\"message\":\"containers with unready status: [pytorch]\"}],"
	"\"initContainerStatuses\":[{\"name\":\"fetch\",\"ready\":true,\"restartCount\":0,\"state\":"
	"{\"terminated\":{\"reason\":\"Completed\",\"exitCode\":0}}}],"
	"\"containerStatuses\":[{\"name\":\"pytorch\",\"ready\":false,\"restartCount\":4,\"state\":"
	"{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":\"back-off\"}},\"lastState\":{"
	"\"terminated\":{\"reason\":\"Error\",\"exitCode\":1}}}]}}"
	"]}";

static const char pods_batch[] =
	"{\"items\":[{\"metadata\":{\"namespace\":\"default\",\"name\":\"nccljob-x1\",\"labels\":{"
	"\"job-name\":\"nccljob\"}},\"spec\":{\"containers\":[{\"name\":\"t\"}]},\"status\":{"
	"\"phase\":\"Succeeded\",\"containerStatuses\":[{\"name\":\"t\",\"ready\":false,"
	"\"restartCount\":0,\"state\":{\"terminated\":{\"reason\":\"Completed\",\"exitCode\":0}}}]}}]}";

static const char pods_all[] =
	"{\"items\":["
	"{\"metadata\":{\"namespace\":\"web\",\"name\":\"nginx\"},\"spec\":{\"containers\":[{\"name\":"
	"\"nginx\"}]},\"status\":{\"phase\":\"Running\"}},"
	"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"gpu-notebook\"},\"spec\":{\"containers\":[{"
	"\"name\":\"nb\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]},\"status\":{"
	"\"phase\":\"Pending\",\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\","
	"\"reason\":\"Unschedulable\",\"message\":\"0/4 nodes are available: 4 Insufficient "
	"nvidia.com/gpu.\"}]}}"
	"]}";

/*
 * Job "big": a PyTorchJob of a master and 20 workers (replica indexes 0..19;
 * worker 19 Pending, never started). Its batched reads answer as kubectl
 * logs --selector --prefix --ignore-errors does: each pod's lines behind
 * "[pod/NAME/pytorch] ", kubectl's "error: ..." line for a read that failed;
 * with big_abort, the batch of indexes from 10 on stops after its first pod
 * as an older kubectl does at the first error.
 */
static int big_abort;

static void big_pods(struct hp_buf *b)
{
	int i;

	hp_buf_puts(b, "{\"items\":[{\"metadata\":{\"namespace\":\"ml\",\"name\":\"big-master-0\","
		       "\"labels\":{\"training.kubeflow.org/job-name\":\"big\",\"training.kubeflow.org/"
		       "replica-type\":\"master\",\"training.kubeflow.org/replica-index\":\"0\"}},"
		       "\"spec\":{\"containers\":[{\"name\":\"pytorch\"}]},\"status\":{\"phase\":"
		       "\"Running\",\"containerStatuses\":[{\"name\":\"pytorch\",\"ready\":true,"
		       "\"restartCount\":0,\"state\":{\"running\":{}}}]}}");
	for (i = 0; i < 20; i++)
		hp_buf_printf(b, ",{\"metadata\":{\"namespace\":\"ml\",\"name\":\"big-worker-%d\","
			      "\"labels\":{\"training.kubeflow.org/job-name\":\"big\",\"training."
			      "kubeflow.org/replica-type\":\"worker\",\"training.kubeflow.org/replica-"
			      "index\":\"%d\"}},\"spec\":{\"containers\":[{\"name\":\"pytorch\"}]},"
			      "\"status\":{\"phase\":\"%s\",\"containerStatuses\":[{\"name\":"
			      "\"pytorch\",\"ready\":%s,\"restartCount\":0,\"state\":{%s}}]}}", i, i,
			      i == 19 ? "Pending" : "Running", i == 19 ? "false" : "true",
			      i == 19 ? "\"waiting\":{\"reason\":\"ContainerCreating\"}" : "\"running\":{}");
	hp_buf_puts(b, "]}");
}

/* The batch's output for the indexes of its selector ("... in (a,b,...)"). */
static void big_batch(const char *line, struct hp_run_res *res)
{
	const char *p = strstr(line, " in (");
	char *end;

	if (!p)
		return;
	for (p += 5; *p && *p != ')'; p = *end == ',' ? end + 1 : end) {
		long i = strtol(p, &end, 10);

		if (end == p)
			break;
		if (i == 3)
			hp_buf_puts(&res->out, "[pod/big-worker-3/pytorch] NCCL INFO Using network Socket\n");
		else if (i == 4)
			/* A line that holds another pod's prefix is still worker-4's. */
			hp_buf_puts(&res->out, "[pod/big-worker-4/pytorch] [pod/big-worker-5/pytorch] [Rank 0] "
					       "Watchdog caught collective operation timeout\n");
		else if (i == 6)
			hp_buf_puts(&res->out, "error: container \"pytorch\" in pod \"big-worker-6\" is "
					       "waiting to start: ContainerCreating\n");
		else if (i == 7) {
			/* A line longer than the stream keeps: its start is scanned. */
			hp_buf_puts(&res->out, "[pod/big-worker-7/pytorch] NCCL INFO Using network Socket ");
			while (res->out.len < 200000)
				hp_buf_puts(&res->out, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
			hp_buf_puts(&res->out, " unhandled system error\n[pod/big-worker-7/pytorch] step 2\n");
		} else if (i == 8)
			hp_buf_puts(&res->out, "error: pods \"big-worker-8\" is forbidden: User \"v\" cannot "
					       "get resource \"pods/log\" in API group \"\" in the namespace "
					       "\"ml\"\n");
		else if (i == 18)
			hp_buf_puts(&res->out, "[pod/big-worker-18/pytorch] step 1\n"
					       "[pod/big-worker-18/pytorch] NCCL INFO Using network Socket\n");
		else
			hp_buf_printf(&res->out, "[pod/big-worker-%ld/pytorch] step 1\n"
				      "[pod/big-worker-%ld/pytorch] step 2\n", i, i);
		if (i == 5)
			hp_buf_puts(&res->out, "[pod/intruder/pytorch] NCCL WARN not ours\n"
					       "Defaulted note without a prefix\n[pod/\n"
					       "[pod/big-worker-5/pytorch]\n[pod/big-worker-5] x\n"
					       "error: pod \"big-worker-5 unhandled system error\n");
		if (i == 10 && big_abort) {
			res->exit_status = 1;
			hp_buf_puts(&res->err, "error: container \"pytorch\" in pod \"big-worker-13\" is "
					       "waiting to start: ContainerCreating\n");
			return;
		}
	}
	/* The last line without its newline. */
	if (res->out.len && res->out.buf[res->out.len - 1] == '\n')
		res->out.buf[--res->out.len] = '\0';
}

static int big_job(const char *line, struct hp_run_res *res)
{
	if (strstr(line, "get pods") && strstr(line, "training.kubeflow.org/job-name=big ")) {
		big_pods(&res->out);
		return 1;
	}
	if (strstr(line, "logs") && strstr(line, "--selector=training.kubeflow.org/job-name=big,")) {
		big_batch(line, res);
		return 1;
	}
	if (strstr(line, "logs") && strstr(line, " big-")) {
		hp_buf_puts(&res->out, "NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>\n");
		return 1;
	}
	return 0;
}

static int run_kubectl(struct hp_sys *s, const struct hp_run_req *req, struct hp_run_res *res)
{
	char line[320] = "";
	size_t i;

	(void)s;
	for (i = 1; req->argv[i]; i++) {
		if (hp_starts_with(req->argv[i], "--request-timeout"))
			continue;
		strncat(line, req->argv[i], sizeof(line) - strlen(line) - 2);
		strcat(line, " ");
	}
	pthread_mutex_lock(&lock);
	if (ncalls < 64)
		hp_strlcpy(calls[ncalls++], line, sizeof(calls[0]));
	pthread_mutex_unlock(&lock);
	res->exit_status = 0;
	if (big_job(line, res))
		return 0;
	if (strstr(line, "get pods") && strstr(line, "training.kubeflow.org/job-name=llama ")) {
		hp_buf_puts(&res->out, pods_llama);
	} else if (strstr(line, "get pods") && strstr(line, "training.kubeflow.org/job-name=")) {
		hp_buf_puts(&res->out, "{\"items\":[]}");
	} else if (strstr(line, "get pods") && strstr(line, "--selector=job-name=nccljob")) {
		hp_buf_puts(&res->out, pods_batch);
	} else if (strstr(line, "get pods")) {
		hp_buf_puts(&res->out, pods_all);
	} else if (strstr(line, "get services")) {
		if (forbid_services) {
			res->exit_status = 1;
			hp_buf_puts(&res->err, "Error from server (Forbidden): services is forbidden: "
					       "User \"v\" cannot list resource \"services\"\n");
		} else {
			hp_buf_puts(&res->out, "{\"items\":[{\"metadata\":{\"namespace\":\"ml\",\"name\":"
					       "\"llama-master-0\"},\"spec\":{\"clusterIP\":\"None\","
					       "\"selector\":{\"training.kubeflow.org/job-name\":\"llama\"},"
					       "\"ports\":[{\"port\":29500}]}}]}");
		}
	} else if (strstr(line, "get networkpolicies")) {
		hp_buf_puts(&res->out, "{\"items\":[{\"metadata\":{\"namespace\":\"ml\",\"name\":"
				       "\"deny\"},\"spec\":{\"podSelector\":{},\"policyTypes\":"
				       "[\"Ingress\",\"Egress\"],\"egress\":[{\"ports\":[{\"port\":53}]}]}}]}");
	} else if (strstr(line, "get daemonsets")) {
		hp_buf_puts(&res->out, "{\"items\":[{\"metadata\":{\"namespace\":\"kube-system\",\"name\":"
				       "\"aws-efa-k8s-device-plugin-daemonset\"},\"spec\":{\"template\":"
				       "{\"spec\":{\"containers\":[{\"image\":\"602401143452.dkr.ecr."
				       "us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.6\"}]}}},"
				       "\"status\":{\"desiredNumberScheduled\":2,\"numberReady\":2}}]}");
	} else if (strstr(line, "logs") && strstr(line, "llama-master-0") && strstr(line, "--previous")) {
		res->exit_status = 1;
		hp_buf_puts(&res->err, "Error from server (BadRequest): previous terminated container "
				       "\"pytorch\" in pod \"llama-master-0\" not found\n");
	} else if (strstr(line, "logs") && strstr(line, "llama-master-0")) {
		hp_buf_puts(&res->out, "NCCL INFO NET/OFI Selected Provider is efa (found 32 nics)\n"
				       "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL("
				       "SeqNum=1) ran for 600012 milliseconds before timing out.\n");
	} else if (strstr(line, "logs") && strstr(line, "llama-worker-0") && strstr(line, "--previous")) {
		hp_buf_puts(&res->out, "NCCL INFO Using network Socket\n"
				       "NCCL WARN Error: failed to extend /dev/shm/nccl-x to 9637892 bytes\r\n"
				       "\x1b[31mNCCL INFO Using network Socket\x1b[0m\n");
	} else if (strstr(line, "logs") && strstr(line, "llama-worker-0")) {
		hp_buf_puts(&res->out, "NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>\n");
	} else if (strstr(line, "logs")) {
		hp_buf_puts(&res->out, "AllReduce SUCCESS\n");
	} else {
		res->exit_status = 1;
	}
	return 0;
}

#define TRUSTED "'kube':{'kubectl':{'server':'https://x','verified_by':'endpoint'}}"
#define CLUSTER "'cluster':{'ClusterName':'hp-nccl','ClusterArn':'arn:aws:sagemaker:us-west-2:" \
	"123456789012:cluster/nccl0demo001','Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:" \
	"123456789012:cluster/e'}}}"

static void setup(struct fake_sys *f, struct hp_aws *a, struct ck *c, const char *snap)
{
	memset(f, 0, sizeof(*f));
	fake_aws(f, a, 1);
	f->sys.run = run_kubectl;
	ncalls = 0;
	forbid_services = empty_kubeflow = big_abort = 0;
	ck_load(c, snap);
}

static const cJSON *nccl(const struct ck *c)
{
	return hp_snapshot_get(&c->snap, "nccl");
}

static const cJSON *find_pod(const cJSON *n, const char *name)
{
	const cJSON *p;

	cJSON_ArrayForEach(p, hp_json_arr(n, "pods"))
		if (!strcmp(hp_json_str(p, "name"), name))
			return p;
	return NULL;
}

/* A member whose name holds dots (labels, resources): no dotted-path lookup. */
static const char *key(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int called(const char *text)
{
	size_t i;

	for (i = 0; i < ncalls; i++)
		if (strstr(calls[i], text))
			return 1;
	return 0;
}

static const cJSON *scan_hit(const cJSON *scan, const char *code, const char *source)
{
	const cJSON *h;

	cJSON_ArrayForEach(h, hp_json_arr(scan, "hits"))
		if (!strcmp(hp_json_str(h, "code"), code) && !strcmp(hp_json_str(h, "source"), source))
			return h;
	return NULL;
}

static void t_job_pods_objects_and_logs(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	struct hp_kube_opts ko = { NULL, NULL, NULL, NULL, 0, 0, NULL, NULL };
	struct hp_nccl_collect_opts o = { "ml", "llama", HP_NCCL_LABEL_ANY, 0, 0, 0, 0, 0, 0, 0 };
	const cJSON *n, *p, *x, *h;
	char *dump;

	setup(&f, &a, &c, "{" CLUSTER "," TRUSTED "}");
	hp_nccl_collect(&a, &ko, &o, &c.snap);
	n = nccl(&c);
	T_ASSERT(n != NULL);
	T_ASSERT(!hp_json_get(n, "kube_skipped"));
	T_STREQ(hp_json_str(n, "job.label"), "kubeflow");
	T_STREQ(hp_json_str(n, "job.selector"), "training.kubeflow.org/job-name=llama");
	T_ASSERT(called("get pods --namespace ml --selector=training.kubeflow.org/job-name=llama -o json"));
	T_EQ(hp_json_len(n, "pods"), 2);
	T_EQ(hp_json_num(n, "pods_requesting_efa", 0), 2);
	p = find_pod(n, "llama-master-0");
	T_STREQ(hp_json_str(p, "owner.kind"), "PyTorchJob");
	T_STREQ(key(cJSON_GetObjectItem(p, "labels"), "training.kubeflow.org/replica-type"), "master");
	x = cJSON_GetArrayItem(hp_json_arr(p, "spec.containers"), 0);
	T_STREQ(hp_json_str(x, "env.NCCL_DEBUG"), "INFO");
	T_STREQ(hp_json_str(x, "env.MASTER_ADDR"), "(valueFrom)");
	T_ASSERT(!hp_json_get(x, "env.WANDB_API_KEY"));
	T_ASSERT(!hp_json_get(x, "env.NCCL_SECRET_TOKEN"));
	T_STREQ(key(cJSON_GetObjectItem(x, "limits"), "vpc.amazonaws.com/efa"), "32");
	T_ASSERT(hp_json_bool(x, "ipc_lock", 0));
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_json_arr(x, "mounts"), 0), "path"), "/dev/shm");
	x = cJSON_GetArrayItem(hp_json_arr(p, "spec.volumes"), 0);
	T_STREQ(hp_json_str(x, "kind"), "emptyDir");
	T_STREQ(hp_json_str(x, "medium"), "Memory");
	T_STREQ(hp_json_str(x, "size_limit"), "64Gi");
	T_ASSERT(!hp_json_bool(p, "problem", 1));
	p = find_pod(n, "llama-worker-0");
	T_ASSERT(hp_json_bool(p, "problem", 0));
	T_ASSERT(hp_json_bool(p, "restarted", 0));
	T_EQ(hp_json_len(p, "spec.volumes"), 0);
	x = cJSON_GetArrayItem(hp_json_arr(p, "containers"), 0);
	T_ASSERT(hp_json_bool(x, "init", 0));
	T_STREQ(hp_json_str(x, "reason"), "Completed");
	x = cJSON_GetArrayItem(hp_json_arr(p, "containers"), 1);
	T_STREQ(hp_json_str(x, "reason"), "CrashLoopBackOff");
	T_STREQ(hp_json_str(x, "last_reason"), "Error");
	T_EQ(hp_json_num(x, "restarts", 0), 4);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_json_arr(p, "conditions_false"), 0), "reason"),
		"ContainersNotReady");
	/* The other objects. */
	T_ASSERT(hp_json_bool(cJSON_GetArrayItem(hp_json_arr(n, "services"), 0), "headless", 0));
	x = cJSON_GetArrayItem(hp_json_arr(n, "network_policies"), 0);
	T_EQ(hp_json_num(x, "ingress_rules", -1), 0);
	T_EQ(hp_json_num(x, "egress_rules", -1), 1);
	T_EQ(hp_json_len(x, "policy_types"), 2);
	T_ASSERT(called("get daemonsets --all-namespaces -o json"));
	T_ASSERT(called("get services --namespace ml -o json"));
	T_CONTAINS(cJSON_GetArrayItem(hp_json_arr(cJSON_GetArrayItem(hp_json_arr(n, "daemonsets"), 0),
						  "images"), 0)->valuestring, "aws-efa-k8s-device-plugin");
	/* Logs: each container, --previous only for the restarted one. */
	T_EQ(hp_json_len(n, "log_reads"), 3);
	T_ASSERT(called("logs --namespace ml llama-master-0 --container pytorch --tail=500 "));
	T_ASSERT(!called("llama-master-0 --container pytorch --tail=500 --previous"));
	T_ASSERT(called("logs --namespace ml llama-worker-0 --container pytorch --tail=500 --previous"));
	T_ASSERT(!called("--container fetch"));
	h = scan_hit(hp_json_get(n, "log_scan"), "WATCHDOG_TIMEOUT", "ml/llama-master-0/pytorch");
	T_ASSERT(h != NULL);
	T_STREQ(hp_json_str(h, "section"), "NC1");
	h = scan_hit(hp_json_get(n, "log_scan"), "EFA_TCP_FALLBACK",
		     "ml/llama-worker-0/pytorch (previous)");
	T_ASSERT(h != NULL);
	T_EQ(hp_json_num(h, "count", 0), 2);
	/* The evidence is clean: no CR, no escape sequences. */
	T_STREQ(cJSON_GetArrayItem(hp_json_get(h, "evidence"), 1)->valuestring,
		"NCCL INFO Using network Socket");
	T_ASSERT(scan_hit(hp_json_get(n, "log_scan"), "SHM_FULL",
			  "ml/llama-worker-0/pytorch (previous)") != NULL);
	T_EQ(hp_json_num(n, "log_scan.tail", 0), 500);
	dump = cJSON_PrintUnformatted(n);
	T_NOT_CONTAINS(dump, "do-not-keep");
	free(dump);
	T_ASSERT(!hp_json_get(n, "cloudwatch"));
	T_EQ(f.nreq, 0);
	ck_free(&c);
	fake_sys_release(&f);
}

static const cJSON *find_read(const cJSON *n, const char *pod)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, hp_json_arr(n, "log_reads"))
		if (!strcmp(hp_json_str(r, "pod"), pod) && !hp_json_bool(r, "previous", 0))
			return r;
	return NULL;
}

/* A job's pods read a batch of replica indexes per kubectl call, the lines told apart by prefix. */
static void t_job_logs_in_batches(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	struct hp_kube_opts ko = { NULL, NULL, NULL, NULL, 0, 0, NULL, NULL };
	struct hp_nccl_collect_opts o = { "ml", "big", HP_NCCL_LABEL_ANY, 0, 0, 0, 0, 0, 0, 0 };
	const cJSON *n, *b, *r, *scan, *h;
	char name[64];
	int i;

	setup(&f, &a, &c, "{" CLUSTER "," TRUSTED "}");
	hp_nccl_collect(&a, &ko, &o, &c.snap);
	n = nccl(&c);
	T_EQ(hp_json_len(n, "pods"), 21);
	/* 19 started workers: two even batches by index; the master (a replica type of one) alone. */
	T_EQ(hp_json_len(n, "log_batches"), 2);
	b = cJSON_GetArrayItem(hp_json_arr(n, "log_batches"), 0);
	T_STREQ(hp_json_str(b, "selector"), "training.kubeflow.org/job-name=big,training.kubeflow.org/"
		"replica-type=worker,training.kubeflow.org/replica-index in (0,1,2,3,4,5,6,7,8,9)");
	T_EQ(hp_json_num(b, "pods", 0), 10);
	T_STREQ(hp_json_str(b, "status"), "ok");
	/* The intruder's line, kubectl's note and four lines of no pod's form. */
	T_EQ(hp_json_num(b, "other_lines", 0), 6);
	r = find_read(n, "big-worker-5");
	T_STREQ(hp_json_str(r, "status"), "ok");
	T_EQ(hp_json_num(r, "lines", 0), 2);
	b = cJSON_GetArrayItem(hp_json_arr(n, "log_batches"), 1);
	T_CONTAINS(hp_json_str(b, "selector"), "replica-index in (10,11,12,13,14,15,16,17,18)");
	T_EQ(hp_json_num(b, "pods", 0), 9);
	T_ASSERT(called("logs --namespace ml --selector=training.kubeflow.org/job-name=big,"));
	T_ASSERT(called(" --container=pytorch --tail=500 --prefix --ignore-errors "));
	T_ASSERT(called("logs --namespace ml big-master-0 --container pytorch --tail=500 "));
	T_ASSERT(!called("logs --namespace ml big-worker-2 "));
	T_ASSERT(!called("big-worker-19"));
	T_EQ(hp_json_len(n, "log_reads"), 20);
	r = find_read(n, "big-worker-2");
	T_STREQ(hp_json_str(r, "status"), "ok");
	T_EQ(hp_json_num(r, "lines", 0), 2);
	T_ASSERT(hp_json_bool(r, "batched", 0));
	/* kubectl's error line for one pod is that pod's failed read. */
	r = find_read(n, "big-worker-6");
	T_STREQ(hp_json_str(r, "status"), "error");
	T_CONTAINS(hp_json_str(r, "error"), "is waiting to start: ContainerCreating");
	r = find_read(n, "big-worker-8");
	T_STREQ(hp_json_str(r, "status"), "error");
	T_CONTAINS(hp_json_str(r, "error"), "is forbidden");
	T_EQ(hp_json_num(find_read(n, "big-worker-7"), "lines", 0), 2);
	/* The stream's last line, without its newline, is still read. */
	T_EQ(hp_json_num(find_read(n, "big-worker-18"), "lines", 0), 2);
	T_ASSERT(scan_hit(hp_json_get(n, "log_scan"), "EFA_TCP_FALLBACK", "ml/big-worker-18/pytorch") != NULL);
	scan = hp_json_get(n, "log_scan");
	T_ASSERT(scan_hit(scan, "EFA_TCP_FALLBACK", "ml/big-worker-3/pytorch") != NULL);
	T_ASSERT(scan_hit(scan, "WATCHDOG_TIMEOUT", "ml/big-worker-4/pytorch") != NULL);
	T_ASSERT(!scan_hit(scan, "WATCHDOG_TIMEOUT", "ml/big-worker-5/pytorch"));
	T_ASSERT(!scan_hit(scan, "NCCL_WARN", "ml/intruder/pytorch"));
	h = scan_hit(scan, "EFA_TCP_FALLBACK", "ml/big-worker-7/pytorch");
	T_ASSERT(h != NULL);
	/* Cut where the stream stops keeping the line: the end of it is not seen. */
	T_ASSERT(!scan_hit(scan, "SYSTEM_ERROR", "ml/big-worker-7/pytorch"));
	T_ASSERT(strlen(cJSON_GetArrayItem(hp_json_get(h, "evidence"), 0)->valuestring) <= 300);
	ck_free(&c);
	fake_sys_release(&f);

	/* An older kubectl stops at the first error: what it did not read is read pod by pod. */
	setup(&f, &a, &c, "{" CLUSTER "," TRUSTED "}");
	big_abort = 1;
	hp_nccl_collect(&a, &ko, &o, &c.snap);
	n = nccl(&c);
	b = cJSON_GetArrayItem(hp_json_arr(n, "log_batches"), 1);
	T_STREQ(hp_json_str(b, "status"), "error");
	T_CONTAINS(hp_json_str(b, "error"), "waiting to start");
	T_ASSERT(!called("logs --namespace ml big-worker-10 "));
	r = find_read(n, "big-worker-10");
	T_ASSERT(hp_json_bool(r, "batched", 0));
	T_STREQ(hp_json_str(r, "status"), "ok");
	for (i = 11; i <= 18; i++) {
		snprintf(name, sizeof(name), "big-worker-%d", i);
		r = find_read(n, name);
		T_STREQ(hp_json_str(r, "status"), "ok");
		T_ASSERT(!hp_json_bool(r, "batched", 0));
		snprintf(name, sizeof(name), "logs --namespace ml big-worker-%d ", i);
		T_ASSERT(called(name));
	}
	ck_free(&c);
	fake_sys_release(&f);

	/* --log-pods below the job: a selector would read more than asked, so pod by pod. */
	o.log_pods = 5;
	setup(&f, &a, &c, "{" CLUSTER "," TRUSTED "}");
	hp_nccl_collect(&a, &ko, &o, &c.snap);
	n = nccl(&c);
	T_EQ(hp_json_len(n, "log_batches"), 0);
	T_EQ(hp_json_len(n, "log_reads"), 5);
	T_ASSERT(!called("--selector=training.kubeflow.org/job-name=big,"));
	T_ASSERT(called("logs --namespace ml big-worker-3 --container pytorch --tail=500 "));
	T_EQ(hp_json_num(n, "options.log_pods", 0), 5);
	ck_free(&c);
	fake_sys_release(&f);
}

static void t_job_name_label_and_refusals(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	struct hp_kube_opts ko = { NULL, NULL, NULL, NULL, 0, 0, NULL, NULL };
	struct hp_nccl_collect_opts o = { NULL, "nccljob", HP_NCCL_LABEL_ANY, 0, 0, 0, 0, 0, 0, 0 };
	const cJSON *n;

	/* No Kubeflow pods by that name: the batch Job label. */
	setup(&f, &a, &c, "{" CLUSTER "," TRUSTED "}");
	hp_nccl_collect(&a, &ko, &o, &c.snap);
	n = nccl(&c);
	T_STREQ(hp_json_str(n, "job.label"), "job-name");
	T_EQ(hp_json_len(n, "pods"), 1);
	T_ASSERT(called("get pods --all-namespaces --selector=training.kubeflow.org/job-name=nccljob"));
	T_ASSERT(called("get pods --all-namespaces --selector=job-name=nccljob"));
	/* A Succeeded pod with no restart: its log is read, no --previous. */
	T_EQ(hp_json_len(n, "log_reads"), 1);
	ck_free(&c);
	fake_sys_release(&f);

	/* Only the label asked for. */
	o.label = HP_NCCL_LABEL_KUBEFLOW;
	setup(&f, &a, &c, "{" CLUSTER "," TRUSTED "}");
	hp_nccl_collect(&a, &ko, &o, &c.snap);
	T_EQ(hp_json_len(nccl(&c), "pods"), 0);
	T_ASSERT(!called("--selector=job-name="));
	ck_free(&c);
	fake_sys_release(&f);

	/* A job name that would be a second requirement is never handed to kubectl. */
	o.job = "x,job-name!=y";
	o.label = HP_NCCL_LABEL_ANY;
	setup(&f, &a, &c, "{" CLUSTER "," TRUSTED "}");
	hp_nccl_collect(&a, &ko, &o, &c.snap);
	T_CONTAINS(hp_json_str(nccl(&c), "job.error"), "not a valid Kubernetes label value");
	T_ASSERT(!called("get pods"));
	T_ASSERT(!hp_json_get(nccl(&c), "pods"));
	ck_free(&c);
	fake_sys_release(&f);

	/* A forbidden read is recorded, not an empty list. */
	o.job = "llama";
	setup(&f, &a, &c, "{" CLUSTER "," TRUSTED "}");
	forbid_services = 1;
	hp_nccl_collect(&a, &ko, &o, &c.snap);
	T_STREQ(hp_json_str(nccl(&c), "errors.services.status"), "forbidden");
	T_ASSERT(!hp_json_get(nccl(&c), "services"));
	T_ASSERT(hp_json_get(nccl(&c), "network_policies") != NULL);
	ck_free(&c);
	fake_sys_release(&f);
}

static void t_without_a_job_only_training_pods(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	struct hp_kube_opts ko = { NULL, NULL, NULL, NULL, 0, 0, NULL, NULL };
	const cJSON *n, *p;

	setup(&f, &a, &c, "{" CLUSTER "," TRUSTED "}");
	hp_nccl_collect(&a, &ko, NULL, &c.snap);
	n = nccl(&c);
	T_ASSERT(called("get pods --all-namespaces -o json"));
	T_EQ(hp_json_num(n, "pods_listed", 0), 2);
	T_EQ(hp_json_len(n, "pods"), 1);
	p = cJSON_GetArrayItem(hp_json_arr(n, "pods"), 0);
	T_STREQ(hp_json_str(p, "name"), "gpu-notebook");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_json_arr(p, "conditions_false"), 0), "reason"),
		"Unschedulable");
	/* Pending and never started: no log to read. */
	T_EQ(hp_json_len(n, "log_reads"), 0);
	ck_free(&c);
	fake_sys_release(&f);
}

static void t_untrusted_kubectl_is_not_used(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	struct hp_kube_opts ko = { NULL, NULL, NULL, NULL, 0, 0, NULL, NULL };

	setup(&f, &a, &c, "{" CLUSTER ",'kube':{'skipped':{'kind':'server_mismatch','message':'other'}}}");
	hp_nccl_collect(&a, &ko, NULL, &c.snap);
	T_STREQ(hp_json_str(nccl(&c), "kube_skipped.kind"), "server_mismatch");
	T_EQ(ncalls, 0);
	T_ASSERT(!hp_json_get(nccl(&c), "pods"));
	ck_free(&c);
	fake_sys_release(&f);
	setup(&f, &a, &c, "{" CLUSTER "}");
	hp_nccl_collect(&a, &ko, NULL, &c.snap);
	T_STREQ(hp_json_str(nccl(&c), "kube_skipped.kind"), "not_collected");
	T_EQ(ncalls, 0);
	ck_free(&c);
	fake_sys_release(&f);
}

#define EV(id, stream, msg) "{\"eventId\":\"" id "\",\"logStreamName\":\"" stream "\"," \
	"\"timestamp\":1,\"message\":\"" msg "\"}"

static void t_cloudwatch(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	struct hp_nccl_collect_opts o = { NULL, NULL, HP_NCCL_LABEL_ANY, 0, 0, 0, 0, 0, 1, 0 };
	char *filters[16];
	size_t nf = hp_nccl_cloudwatch_filters(filters, 16, 1000), i;
	const cJSON *cw, *h;
	cJSON *body;

	for (i = 0; i < nf; i++)
		free(filters[i]);
	T_ASSERT(nf >= 2 && nf < 16);
	setup(&f, &a, &c, "{" CLUSTER ",'kube':{'skipped':{'kind':'disabled'}}}");
	f.now_ms = 1800000000000;
	/* Filter 1: two pages; filter 2: the same event again and a new one; the rest: nothing. */
	fake_reply(&f, 200, NULL, "{\"events\":[" EV("e1", "i-1/nccl", "NCCL INFO Using network Socket")
		   "],\"nextToken\":\"t1\"}");
	fake_reply(&f, 200, NULL, "{\"events\":[" EV("e2", "i-1/nccl", "x NCCL WARN Cuda failure 'y'")
		   "]}");
	fake_reply(&f, 200, NULL, "{\"events\":[" EV("e1", "i-1/nccl", "NCCL INFO Using network Socket")
		   "," EV("e3", "i-2/nccl", "Watchdog caught collective operation timeout") "]}");
	for (i = 2; i < nf; i++)
		fake_reply(&f, 200, NULL, "{\"events\":[]}");
	hp_nccl_collect(&a, NULL, &o, &c.snap);
	cw = hp_json_get(nccl(&c), "cloudwatch");
	T_STREQ(hp_json_str(cw, "group"), "/aws/sagemaker/Clusters/hp-nccl/nccl0demo001");
	T_EQ(hp_json_num(cw, "events", 0), 3);
	T_EQ(hp_json_num(cw, "pages", 0), (double)nf + 1);
	T_ASSERT(!hp_json_bool(cw, "truncated", 1));
	T_EQ(hp_json_num(cw, "start_ms", 0), 1800000000000.0 - 7200000);
	h = scan_hit(hp_json_get(cw, "scan"), "EFA_TCP_FALLBACK", "i-1/nccl");
	T_ASSERT(h != NULL);
	T_EQ(hp_json_num(h, "count", 0), 1);
	T_ASSERT(scan_hit(hp_json_get(cw, "scan"), "CUDA_ERROR", "i-1/nccl") != NULL);
	T_ASSERT(scan_hit(hp_json_get(cw, "scan"), "WATCHDOG_TIMEOUT", "i-2/nccl") != NULL);
	T_EQ(f.nreq, nf + 1);
	body = cJSON_Parse(f.req_body[1]);
	T_STREQ(hp_json_str(body, "nextToken"), "t1");
	T_STREQ(hp_json_str(body, "logGroupName"), "/aws/sagemaker/Clusters/hp-nccl/nccl0demo001");
	T_ASSERT(hp_starts_with(hp_json_str(body, "filterPattern"), "?\""));
	T_EQ(hp_json_num(body, "endTime", 0), 1800000000000.0);
	cJSON_Delete(body);
	T_CONTAINS(f.req_headers[0], "Logs_20140328.FilterLogEvents");
	ck_free(&c);
	fake_sys_release(&f);
}

static void t_cloudwatch_bounds_and_failures(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	struct hp_nccl_collect_opts o = { NULL, NULL, HP_NCCL_LABEL_ANY, 0, 0, 0, 2, 0, 1, 0 };
	const cJSON *cw;
	size_t i;

	/* Pages are bounded: every reply has a next token, two pages per filter are read. */
	setup(&f, &a, &c, "{" CLUSTER "}");
	for (i = 0; i < 40; i++)
		fake_reply(&f, 200, NULL, "{\"events\":[],\"nextToken\":\"again\"}");
	hp_nccl_collect(&a, NULL, &o, &c.snap);
	cw = hp_json_get(nccl(&c), "cloudwatch");
	T_ASSERT(hp_json_bool(cw, "truncated", 0));
	T_EQ(hp_json_num(cw, "pages", 0), 2 * hp_json_num(cw, "filters", 0));
	ck_free(&c);
	fake_sys_release(&f);

	/* A denied search is recorded and gives no scan: nothing reads as "no NCCL errors". */
	setup(&f, &a, &c, "{" CLUSTER "}");
	fake_reply(&f, 400, "x-amzn-ErrorType: AccessDeniedException\r\n",
		   "{\"__type\":\"AccessDeniedException\",\"message\":\"User is not authorized to "
		   "perform: logs:FilterLogEvents\"}");
	hp_nccl_collect(&a, NULL, &o, &c.snap);
	cw = hp_json_get(nccl(&c), "cloudwatch");
	T_STREQ(hp_json_str(cw, "error.class"), "denied");
	T_ASSERT(!hp_json_get(cw, "scan"));
	T_EQ(f.nreq, 1);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_json_arr(c.snap.root, "calls"), 0), "action"),
		"FilterLogEvents");
	ck_free(&c);
	fake_sys_release(&f);

	/* No log group: nothing asked. */
	setup(&f, &a, &c, "{" CLUSTER ",'logs':{'group':'g','group_found':false}}");
	hp_nccl_collect(&a, NULL, &o, &c.snap);
	T_STREQ(hp_json_str(nccl(&c), "cloudwatch.skipped"), "the cluster has no log group");
	T_EQ(f.nreq, 0);
	ck_free(&c);
	fake_sys_release(&f);
}

/* The --exec script's Python import writes nothing in the container (no __pycache__). */
static void t_exec_script_writes_no_bytecode(void)
{
	const char *sc = hp_nccl_exec_script();

	T_CONTAINS(sc, "PYTHONDONTWRITEBYTECODE=1 python3 -B -c 'import torch;");
	T_ASSERT(!strstr(sc, "\n  python3 "));
}

T_MAIN(T(t_exec_script_writes_no_bytecode), T(t_job_pods_objects_and_logs), T(t_job_logs_in_batches), T(t_job_name_label_and_refusals),
       T(t_without_a_job_only_training_pods), T(t_untrusted_kubectl_is_not_used),
       T(t_cloudwatch), T(t_cloudwatch_bounds_and_failures))
