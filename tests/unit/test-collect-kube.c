/*
 * The Kubernetes collector with a scripted kubectl: it believes kubectl
 * only when its server is the EKS endpoint (or, without one, a context
 * named after the EKS ARN), records every reason it did not, reduces what
 * it reads (labels, pods in a problem state, counts of healthy add-on
 * pods), records a forbidden read as an error, and fetches the previous
 * log of a crash-looping aws-node pod.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks-t.h"
#include "fake-sys.h"
#include "hp/aws.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "hp/kube.h"
#include "t.h"

#define EKS_ARN "arn:aws:eks:us-west-2:123456789012:cluster/ml-eks"
#define SERVER "https://ABC.gr7.us-west-2.eks.amazonaws.com"

static const char *cfg_json;          /* kubectl config view --minify */
static int fail_namespaces;           /* 0 ok, 1 auth, 2 forbidden */
static int no_kubectl;
static char calls[32][256];
static size_t ncalls;

static const char nodes_json[] =
	"{\"items\":[{\"metadata\":{\"name\":\"hyperpod-i-0000000000000000a\",\"labels\":{"
	"\"sagemaker.amazonaws.com/node-health-status\":\"Schedulable\",\"team\":\"x\","
	"\"topology.kubernetes.io/zone\":\"us-west-2a\"},\"annotations\":{\"sagemaker.amazonaws.com/"
	"fault-reasons\":\"none\",\"node.alpha.kubernetes.io/ttl\":\"0\"}},\"spec\":{\"providerID\":"
	"\"aws:///us-west-2a/i-0000000000000000a\"},\"status\":{\"conditions\":[{\"type\":"
	"\"MemoryPressure\",\"status\":\"False\"},{\"type\":\"Ready\",\"status\":\"True\",\"reason\":"
	"\"KubeletReady\",\"message\":\"ok\"}]}}]}";

#define CS_OK "{\"name\":\"%s\",\"ready\":true,\"restartCount\":0,\"state\":{\"running\":{}}}"

static const char pods_json[] =
	"{\"items\":["
	/* healthy aws-node and kube-proxy: counted, not kept */
	"{\"metadata\":{\"namespace\":\"kube-system\",\"name\":\"aws-node-ok\",\"labels\":{\"k8s-app\":"
	"\"aws-node\"}},\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\","
	"\"containerStatuses\":[{\"name\":\"aws-node\",\"ready\":true,\"restartCount\":0,\"state\":"
	"{\"running\":{}}}]}},"
	"{\"metadata\":{\"namespace\":\"kube-system\",\"name\":\"kube-proxy-ok\",\"labels\":{\"k8s-app\":"
	"\"kube-proxy\"}},\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\","
	"\"containerStatuses\":[{\"name\":\"kube-proxy\",\"ready\":true,\"restartCount\":0,\"state\":"
	"{\"running\":{}}}]}},"
	/* CoreDNS: always kept */
	"{\"metadata\":{\"namespace\":\"kube-system\",\"name\":\"coredns-1\",\"labels\":{\"k8s-app\":"
	"\"kube-dns\"}},\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\","
	"\"containerStatuses\":[{\"name\":\"coredns\",\"ready\":true,\"restartCount\":0,\"state\":"
	"{\"running\":{}}}]}},"
	/* crash-looping aws-node: kept, its previous log read */
	"{\"metadata\":{\"namespace\":\"kube-system\",\"name\":\"aws-node-bad\",\"labels\":{\"k8s-app\":"
	"\"aws-node\"},\"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"aws-node\"}]},"
	"\"spec\":{\"nodeName\":\"n2\"},\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":"
	"\"Ready\",\"status\":\"False\"}],\"initContainerStatuses\":[{\"name\":\"aws-vpc-cni-init\","
	"\"ready\":true,\"restartCount\":0,\"state\":{\"terminated\":{\"exitCode\":0,\"reason\":"
	"\"Completed\"}}}],\"containerStatuses\":[{\"name\":\"aws-node\",\"ready\":false,"
	"\"restartCount\":9,\"state\":{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":"
	"\"back-off\"}},\"lastState\":{\"terminated\":{\"reason\":\"Error\",\"exitCode\":1}}}]}},"
	/* healthy workload: dropped; running-but-not-ready workload: kept */
	"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"fine\"},\"spec\":{\"nodeName\":\"n1\"},"
	"\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"m\",\"ready\":true,"
	"\"restartCount\":0,\"state\":{\"running\":{}}}]}},"
	"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"unready\",\"labels\":{\"app.kubernetes.io/"
	"name\":\"trainer\"}},\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\","
	"\"containerStatuses\":[{\"name\":\"m\",\"ready\":false,\"restartCount\":0,\"state\":"
	"{\"running\":{}}}]}},"
	"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"pending\"},\"status\":{\"phase\":\"Pending\"}}"
	"]}";

static int run_kubectl(struct hp_sys *s, const struct hp_run_req *req, struct hp_run_res *res)
{
	char line[256] = "";
	size_t i;

	(void)s;
	for (i = 1; req->argv[i]; i++) {
		if (hp_starts_with(req->argv[i], "--request-timeout"))
			continue;
		strncat(line, req->argv[i], sizeof(line) - strlen(line) - 2);
		strcat(line, " ");
	}
	if (ncalls < 32)
		hp_strlcpy(calls[ncalls++], line, sizeof(calls[0]));
	if (no_kubectl) {
		res->exit_status = -1;
		return -1;
	}
	res->exit_status = 0;
	if (strstr(line, "config view")) {
		hp_buf_puts(&res->out, cfg_json);
	} else if (strstr(line, "get namespaces")) {
		if (fail_namespaces == 1) {
			res->exit_status = 1;
			hp_buf_puts(&res->out, "{\"items\":[]}");
			hp_buf_puts(&res->err, "error: You must be logged in to the server (Unauthorized)\n");
		} else if (fail_namespaces == 2) {
			res->exit_status = 1;
			hp_buf_puts(&res->err, "Error from server (Forbidden): namespaces is forbidden: "
					       "User \"v\" cannot list resource \"namespaces\"\n");
		} else {
			hp_buf_puts(&res->out, "{\"items\":[{\"metadata\":{\"name\":\"default\"}},"
					       "{\"metadata\":{\"name\":\"aws-hyperpod\"}}]}");
		}
	} else if (strstr(line, "get nodes")) {
		hp_buf_puts(&res->out, nodes_json);
	} else if (strstr(line, "get daemonsets")) {
		hp_buf_puts(&res->out, "{\"items\":[{\"metadata\":{\"name\":\"aws-node\"},\"spec\":"
				       "{\"selector\":{\"matchLabels\":{\"k8s-app\":\"aws-node\"}}},"
				       "\"status\":{\"desiredNumberScheduled\":2,\"numberReady\":1,"
				       "\"numberUnavailable\":1}}]}");
	} else if (strstr(line, "get pods")) {
		hp_buf_puts(&res->out, pods_json);
	} else if (strstr(line, "get events")) {
		res->exit_status = 1;
		hp_buf_puts(&res->err, "Error from server (Forbidden): events is forbidden: User \"v\" "
				       "cannot list resource \"events\"\n");
	} else if (strstr(line, "logs") && strstr(line, "--previous")) {
		hp_buf_puts(&res->out, "line 1\nipamd: failed\n");
	} else if (strstr(line, "logs")) {
		res->exit_status = 1;
		hp_buf_puts(&res->err, "Error from server (BadRequest): container is waiting\n");
	} else {
		res->exit_status = 1;
	}
	return 0;
}

static void setup(struct fake_sys *f, struct hp_aws *a, struct ck *c, const char *snap)
{
	fake_aws(f, a, 1);
	f->sys.run = run_kubectl;
	ncalls = 0;
	fail_namespaces = no_kubectl = 0;
	cfg_json = "{\"current-context\":\"ctx\",\"clusters\":[{\"name\":\"" EKS_ARN "\",\"cluster\":"
		   "{\"server\":\"https://abc.gr7.us-west-2.eks.amazonaws.com:443/\"}}],\"contexts\":[{"
		   "\"name\":\"ctx\",\"context\":{\"cluster\":\"" EKS_ARN "\"}}]}";
	ck_load(c, snap);
}

#define EKS_CLUSTER "'cluster':{'ClusterArn':'arn:aws:sagemaker:us-west-2:1:cluster/abcdefabcdef'," \
	"'Orchestrator':{'Eks':{'ClusterArn':'" EKS_ARN "'}}}"

static const cJSON *kube(const struct ck *c)
{
	return hp_snapshot_get(&c->snap, "kube");
}

/* What the progress callback was told: each call's done/total, and the read named. */
struct kube_prog {
	int n, done[16], total[16];
	char now[16][32];
};

static void kube_prog(void *ud, int done, int total, const char *now)
{
	struct kube_prog *p = ud;

	if (p->n < 16) {
		p->done[p->n] = done;
		p->total[p->n] = total;
		snprintf(p->now[p->n], sizeof(p->now[0]), "%s", now ? now : "(end)");
	}
	p->n++;
}

static void t_full_read(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	const cJSON *k, *p;
	struct kube_prog pr;
	struct hp_kube_opts o = { NULL, NULL, NULL, NULL, 0, 0, kube_prog, &pr };
	int i;

	memset(&pr, 0, sizeof(pr));
	memset(&f, 0, sizeof(f));
	setup(&f, &a, &c, "{" EKS_CLUSTER ",'eks':{'endpoint':'" SERVER "'}}");
	hp_collect_kube(&a, &o, &c.snap);
	/* Progress: 0/8 to 7/8 before each read, then 8/8 with none under way. */
	T_EQ(pr.n, 9);
	for (i = 0; i < 9; i++) {
		T_EQ(pr.done[i], i);
		T_EQ(pr.total[i], 8);
	}
	T_STREQ(pr.now[0], "server check");
	T_STREQ(pr.now[4], "pods");
	T_STREQ(pr.now[8], "(end)");
	k = kube(&c);
	T_ASSERT(!cJSON_GetObjectItem(k, "skipped"));
	T_STREQ(hp_json_str(k, "kubectl.verified_by"), "endpoint");
	T_STREQ(hp_json_str(k, "kubectl.context"), "ctx");
	T_EQ(f.nreq, 0); /* "eks" was there: no second DescribeCluster */
	/* Nodes: only the labels checks read. */
	p = cJSON_GetArrayItem(hp_json_arr(k, "nodes"), 0);
	T_STREQ(hp_json_str(p, "provider_id"), "aws:///us-west-2a/i-0000000000000000a");
	T_STREQ(hp_json_str(p, "ready.status"), "True");
	T_ASSERT(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "labels"),
				     "sagemaker.amazonaws.com/node-health-status"));
	T_ASSERT(!cJSON_GetObjectItem(cJSON_GetObjectItem(p, "labels"), "team"));
	T_ASSERT(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "annotations"),
				     "sagemaker.amazonaws.com/fault-reasons"));
	T_ASSERT(!cJSON_GetObjectItem(cJSON_GetObjectItem(p, "annotations"),
				      "node.alpha.kubernetes.io/ttl"));
	/* Pods: CoreDNS, the crashing aws-node, the unready and the pending workload. */
	T_EQ(hp_json_len(k, "pods"), 4);
	T_EQ(hp_json_num(k, "pods_total", 0), 7);
	T_EQ(hp_json_num(k, "pods_dropped", -1), 0);
	T_EQ(hp_json_num(k, "system_pods.aws-node", 0), 2);
	T_EQ(hp_json_num(k, "system_pods.kube-proxy", 0), 1);
	T_EQ(hp_json_num(k, "system_pods.kube-dns", 0), 1);
	p = cJSON_GetArrayItem(hp_json_arr(k, "pods"), 1);
	T_STREQ(hp_json_str(p, "name"), "aws-node-bad");
	T_STREQ(hp_json_str(p, "owner"), "DaemonSet/aws-node");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_json_arr(p, "containers"), 1), "reason"),
		"CrashLoopBackOff");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_json_arr(p, "containers"), 1), "last_reason"), "Error");
	p = cJSON_GetArrayItem(hp_json_arr(k, "pods"), 2);
	T_STREQ(hp_json_str(p, "name"), "unready");
	T_ASSERT(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "labels"), "app.kubernetes.io/name"));
	T_EQ(hp_json_num(cJSON_GetArrayItem(hp_json_arr(k, "daemonsets"), 0), "unavailable", 0), 1);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_json_arr(k, "daemonsets"), 0), "k8s_app"), "aws-node");
	/* Events forbidden: recorded, not an empty list. */
	T_ASSERT(!hp_json_get(k, "events"));
	T_STREQ(hp_json_str(k, "errors.events.status"), "forbidden");
	T_CONTAINS(hp_json_str(k, "errors.events.message"), "events is forbidden");
	T_EQ(hp_json_len(k, "namespaces"), 2);
	/* aws-node logs: the previous container first, then the current one's failure. */
	p = cJSON_GetArrayItem(hp_json_arr(k, "aws_node_logs"), 0);
	T_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(p, "previous")));
	T_STREQ(cJSON_GetArrayItem(hp_json_arr(p, "lines"), 1)->valuestring, "ipamd: failed");
	p = cJSON_GetArrayItem(hp_json_arr(k, "aws_node_logs"), 1);
	T_STREQ(hp_json_str(p, "status"), "error");
	T_CONTAINS(calls[ncalls - 2], "logs --namespace kube-system aws-node-bad --container aws-node "
				      "--tail=200 --previous");
	T_STREQ(calls[0], "config view --minify -o json ");
	ck_free(&c);
	fake_sys_release(&f);
}

static void t_refusals(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	struct kube_prog pr;
	struct hp_kube_opts o = { NULL, NULL, NULL, NULL, 0, 0, kube_prog, &pr };

	/* Another server: not one read; the progress stops at 0 of 8. */
	memset(&pr, 0, sizeof(pr));
	memset(&f, 0, sizeof(f));
	setup(&f, &a, &c, "{" EKS_CLUSTER ",'eks':{'endpoint':'https://OTHER.eks.amazonaws.com'}}");
	hp_collect_kube(&a, &o, &c.snap);
	T_EQ(pr.n, 2);
	T_EQ(pr.done[1], 0);
	T_STREQ(pr.now[1], "(end)");
	T_STREQ(hp_json_str(kube(&c), "skipped.kind"), "server_mismatch");
	T_CONTAINS(hp_json_str(kube(&c), "skipped.message"), "https://OTHER.eks.amazonaws.com");
	T_EQ(ncalls, 1);
	T_ASSERT(!hp_json_get(kube(&c), "nodes"));
	ck_free(&c);

	/* Rejected token: skipped as auth, the empty list kubectl printed is not data. */
	setup(&f, &a, &c, "{" EKS_CLUSTER ",'eks':{'endpoint':'" SERVER "'}}");
	fail_namespaces = 1;
	hp_collect_kube(&a, &o, &c.snap);
	T_STREQ(hp_json_str(kube(&c), "skipped.kind"), "auth");
	T_STREQ(hp_json_str(kube(&c), "skipped.detail"), "You must be logged in to the server (Unauthorized)");
	T_ASSERT(!hp_json_get(kube(&c), "namespaces"));
	T_ASSERT(!hp_json_get(kube(&c), "errors"));
	T_EQ(ncalls, 2);
	ck_free(&c);

	/* Forbidden namespaces: authenticated, so the rest is read. */
	setup(&f, &a, &c, "{" EKS_CLUSTER ",'eks':{'endpoint':'" SERVER "'}}");
	fail_namespaces = 2;
	hp_collect_kube(&a, &o, &c.snap);
	T_ASSERT(!hp_json_get(kube(&c), "skipped"));
	T_STREQ(hp_json_str(kube(&c), "errors.namespaces.status"), "forbidden");
	T_ASSERT(hp_json_get(kube(&c), "nodes"));
	ck_free(&c);

	/* No kubectl. */
	setup(&f, &a, &c, "{" EKS_CLUSTER ",'eks':{'endpoint':'" SERVER "'}}");
	no_kubectl = 1;
	hp_collect_kube(&a, &o, &c.snap);
	T_STREQ(hp_json_str(kube(&c), "skipped.kind"), "kubectl_missing");
	ck_free(&c);

	/* --no-kube: kubectl never runs. */
	setup(&f, &a, &c, "{" EKS_CLUSTER ",'eks':{'endpoint':'" SERVER "'}}");
	o.disabled = 1;
	hp_collect_kube(&a, &o, &c.snap);
	o.disabled = 0;
	T_STREQ(hp_json_str(kube(&c), "skipped.kind"), "disabled");
	T_EQ(ncalls, 0);
	ck_free(&c);

	/* A Slurm cluster: nothing at all. */
	setup(&f, &a, &c, "{'cluster':{'ClusterArn':'x','Orchestrator':{'Slurm':{}}}}");
	hp_collect_kube(&a, &o, &c.snap);
	T_ASSERT(kube(&c) == NULL);
	T_EQ(ncalls, 0);
	T_EQ(f.nreq, 0);
	ck_free(&c);
	fake_sys_release(&f);
}

/* Without the endpoint (DescribeCluster denied), only a context named after the ARN is trusted. */
static void t_without_endpoint(void)
{
	static const char denied[] = "{\"message\":\"User: x is not authorized to perform: "
				     "eks:DescribeCluster\"}";
	struct fake_sys f;
	struct hp_aws a;
	struct ck c;
	struct hp_kube_opts o = { NULL, NULL, NULL, NULL, 0, 0, NULL, NULL };

	memset(&f, 0, sizeof(f));
	setup(&f, &a, &c, "{" EKS_CLUSTER "}");
	fake_reply(&f, 403, "x-amzn-ErrorType: AccessDeniedException\r\n", denied);
	hp_collect_kube(&a, &o, &c.snap);
	T_EQ(f.nreq, 1);
	T_CONTAINS(f.req_url[0], "/clusters/ml-eks");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_snapshot_get(&c.snap, "calls"), 0), "class"), "denied");
	T_STREQ(hp_json_str(kube(&c), "kubectl.verified_by"), "cluster-arn");
	ck_free(&c);

	setup(&f, &a, &c, "{" EKS_CLUSTER "}");
	fake_reply(&f, 403, "x-amzn-ErrorType: AccessDeniedException\r\n", denied);
	cfg_json = "{\"current-context\":\"kind-dev\",\"clusters\":[{\"name\":\"kind-dev\",\"cluster\":"
		   "{\"server\":\"https://127.0.0.1:6443\"}}],\"contexts\":[{\"name\":\"kind-dev\","
		   "\"context\":{\"cluster\":\"kind-dev\"}}]}";
	hp_collect_kube(&a, &o, &c.snap);
	T_STREQ(hp_json_str(kube(&c), "skipped.kind"), "unverified");
	T_EQ(ncalls, 1);
	ck_free(&c);

	/* A context with no server at all. */
	setup(&f, &a, &c, "{" EKS_CLUSTER ",'eks':{'endpoint':'" SERVER "'}}");
	cfg_json = "{\"current-context\":\"x\",\"clusters\":[],\"contexts\":[]}";
	hp_collect_kube(&a, &o, &c.snap);
	T_STREQ(hp_json_str(kube(&c), "skipped.kind"), "kubeconfig");
	ck_free(&c);
	fake_sys_release(&f);
}

T_MAIN(T(t_full_read), T(t_refusals), T(t_without_endpoint))
