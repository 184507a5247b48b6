/*
 * The NCCL collector (src/collect/nccl.c) with a scripted kubectl and canned
 * CloudWatch replies: it reads a job's pods by the Kubeflow label, else by
 * job-name, never passes a job name kubectl would read as more than one
 * requirement, keeps only the NCCL environment (no secrets), reads each
 * container's log and --previous only where a previous container exists,
 * scans them into bounded hits, records forbidden reads, uses kubectl only
 * when it was verified, and searches CloudWatch with bounded pages and
 * de-duplicated events.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks-t.h"
#include "fake-sys.h"
#include "hp/aws.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "hp/kube.h"
#include "hp/nccl.h"
#include "t.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char calls[64][320];
static size_t ncalls;
static int forbid_services, empty_kubeflow;

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
	forbid_services = empty_kubeflow = 0;
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
	struct hp_kube_opts ko = { NULL, NULL, NULL, NULL, 0, 0 };
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

static void t_job_name_label_and_refusals(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	struct hp_kube_opts ko = { NULL, NULL, NULL, NULL, 0, 0 };
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
	struct hp_kube_opts ko = { NULL, NULL, NULL, NULL, 0, 0 };
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
	struct hp_kube_opts ko = { NULL, NULL, NULL, NULL, 0, 0 };

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

T_MAIN(T(t_job_pods_objects_and_logs), T(t_job_name_label_and_refusals),
       T(t_without_a_job_only_training_pods), T(t_untrusted_kubectl_is_not_used),
       T(t_cloudwatch), T(t_cloudwatch_bounds_and_failures))
