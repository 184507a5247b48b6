/*
 * The Kubernetes checks on hand-built snapshots: every reason kubectl was
 * not used gives one WARN with the update-kubeconfig command and SKIPs
 * (never a PASS); node labels, readiness and the node-to-instance join;
 * the kube-system add-ons with log evidence; sandbox failures; workload
 * pods grouped by reason, namespace and node; the aws-hyperpod namespace.
 */
#include <stdio.h>
#include <string.h>

#include "checks-t.h"
#include "t.h"

#define I1 "i-0000000000000000a"
#define I2 "i-0000000000000000b"
#define I3 "i-0000000000000000c"

/* The AWS side of an EKS cluster with three Running nodes. */
#define AWS_SIDE                                                                               \
	"'meta':{'region':'us-west-2'},"                                                       \
	"'cluster':{'ClusterName':'c','ClusterArn':'arn:aws:sagemaker:us-west-2:1:cluster/abcdefabcdef'," \
	"'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:123456789012:cluster/ml-eks'}}}," \
	"'eks':{'name':'ml-eks','endpoint':'https://ABC.gr7.us-west-2.eks.amazonaws.com'},"    \
	"'nodes':[{'InstanceId':'" I1 "','InstanceGroupName':'gpu','InstanceStatus':{'Status':'Running'}}," \
	"{'InstanceId':'" I2 "','InstanceGroupName':'gpu','InstanceStatus':{'Status':'Running'}}," \
	"{'InstanceId':'" I3 "','InstanceGroupName':'sys','InstanceStatus':{'Status':'Running'}}]"

#define KUBECTL "'kubectl':{'server':'https://abc.gr7.us-west-2.eks.amazonaws.com','context':'ctx','verified_by':'endpoint'}"

/* A HyperPod node with this health label, deep-health label and Ready status. */
#define NODE(iid, health, ready)                                                               \
	"{'name':'hyperpod-" iid "','provider_id':'aws:///us-west-2a/" iid "',"                \
	"'labels':{'sagemaker.amazonaws.com/node-health-status':'" health "'},"                \
	"'ready':{'status':'" ready "','reason':'KubeletReady','message':'ok'}}"

#define HEALTHY_NODES "'nodes':[" NODE(I1, "Schedulable", "True") "," NODE(I2, "Schedulable", "True") "," NODE(I3, "Schedulable", "True") "]"

static const char *const kube_ids[] = {
	"kube.access", "kube.node-health", "kube.deep-health", "kube.node-ready", "kube.namespace",
	"kube.aws-node", "kube.kube-proxy", "kube.coredns", "kube.sandbox", "kube.workload-pods",
	"kube.node-conditions", "kube.node-events", "kube.evictions",
};

static void run_kube(struct ck *c)
{
	size_t i;
	struct hp_findings all = { 0 };

	for (i = 0; i < sizeof(kube_ids) / sizeof(kube_ids[0]); i++) {
		size_t j;

		ck_run(c, kube_ids[i]);
		/* Move this check's findings into all. */
		for (j = 0; j < c->f.n; j++) {
			if (all.n == all.alloc) {
				all.alloc = all.alloc ? all.alloc * 2 : 32;
				all.v = realloc(all.v, all.alloc * sizeof(*all.v));
			}
			all.v[all.n++] = c->f.v[j];
		}
		free(c->f.v);
		memset(&c->f, 0, sizeof(c->f));
	}
	c->f = all;
}

static void t_not_eks_says_nothing(void)
{
	struct ck c;

	ck_load(&c, "{" AWS_SIDE "}");
	run_kube(&c);
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

/* Every way kubectl can be unusable: one WARN with the fix, SKIPs, and no PASS at all. */
static void t_skips_never_pass(void)
{
	static const struct {
		const char *skipped;
		const char *says;
	} cases[] = {
		{ "{'kind':'kubectl_missing','message':'m','status':'missing'}", "kubectl is not installed" },
		{ "{'kind':'kubeconfig','message':'m','status':'config','detail':'current-context must "
		  "exist in order to minify'}", "no usable context (current-context must exist" },
		{ "{'kind':'server_mismatch','message':'m'}", "points at another cluster (https://other:6443)" },
		{ "{'kind':'unverified','message':'m'}", "cannot be confirmed" },
		{ "{'kind':'auth','message':'m','status':'auth','detail':'You must be logged in to the "
		  "server (Unauthorized)'}", "could not authenticate to https://other:6443 (You must be" },
		{ "{'kind':'unreachable','message':'m','status':'unreachable','detail':'dial tcp: i/o "
		  "timeout'}", "could not reach https://other:6443 (dial tcp" },
	};
	size_t i;
	char json[2048];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hp_finding *f;
		struct ck c;

		snprintf(json, sizeof(json), "{" AWS_SIDE ",'kube':{'kubectl':{'server':"
			 "'https://other:6443','context':'other'},'skipped':%s}}", cases[i].skipped);
		ck_load(&c, json);
		run_kube(&c);
		f = ck_one(&c, HP_TAG_WARN, cases[i].says);
		T_EQ(f->prio, HP_P1);
		T_CONTAINS(f->message, "Kubernetes checks skipped; point kubectl at this cluster: aws eks "
			   "update-kubeconfig --name ml-eks --region us-west-2");
		T_ASSERT(ck_evidence_has(f, "this cluster's EKS endpoint: https://ABC.gr7"));
		T_EQ(ck_count(&c, HP_TAG_WARN), 1);
		T_EQ(ck_count(&c, HP_TAG_PASS), 0);
		T_EQ(ck_count(&c, HP_TAG_FAIL), 0);
		T_EQ(ck_count(&c, HP_TAG_SKIP), 12);
		T_EQ(ck_count_msg(&c, HP_TAG_SKIP, "kubectl could not be used for this cluster"), 12);
		ck_free(&c);
	}
}

static void t_disabled_is_a_quiet_skip(void)
{
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{'skipped':{'kind':'disabled','message':'m'}}}");
	run_kube(&c);
	ck_one(&c, HP_TAG_SKIP, "Kubernetes checks skipped (--no-kube)");
	T_EQ(ck_count(&c, HP_TAG_SKIP), 13);
	T_EQ(c.f.n, 13);
	ck_free(&c);
}

static void t_access_verified(void)
{
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "}}");
	ck_run(&c, "kube.access");
	ck_one(&c, HP_TAG_PASS, "kubectl talks to this cluster's EKS API server "
				"(https://abc.gr7.us-west-2.eks.amazonaws.com)");
	ck_free(&c);
	ck_load(&c, "{" AWS_SIDE ",'kube':{'kubectl':{'server':'https://x','context':'arn:aws:eks:"
		    "us-west-2:123456789012:cluster/ml-eks','verified_by':'cluster-arn'}}}");
	ck_run(&c, "kube.access");
	ck_one(&c, HP_TAG_PASS, "the endpoint itself could not be read");
	ck_free(&c);
}

static void t_healthy_cluster_passes(void)
{
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ","
		    "'namespaces':['default','kube-system','aws-hyperpod'],"
		    "'daemonsets':[{'name':'aws-node','desired':3,'ready':3,'unavailable':0},"
		    "{'name':'kube-proxy','desired':3,'ready':3,'unavailable':0}],"
		    "'pods':[{'namespace':'kube-system','name':'coredns-1','node':'hyperpod-" I3 "',"
		    "'phase':'Running','labels':{'k8s-app':'kube-dns'},'containers':[{'name':'coredns',"
		    "'ready':true,'restarts':0,'state':'running'}]}],"
		    "'pods_total':9,'pods_dropped':0,'system_pods':{'kube-dns':1},'events':[]}}");
	run_kube(&c);
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "All 3 HyperPod nodes are Schedulable");
	ck_one(&c, HP_TAG_PASS, "All 3 HyperPod nodes are Ready");
	ck_one(&c, HP_TAG_PASS, "Namespace aws-hyperpod exists");
	ck_one(&c, HP_TAG_PASS, "aws-node DaemonSet healthy (3/3 ready)");
	ck_one(&c, HP_TAG_PASS, "kube-proxy DaemonSet healthy (3/3 ready)");
	ck_one(&c, HP_TAG_PASS, "CoreDNS healthy (1 pods)");
	ck_one(&c, HP_TAG_PASS, "No pod is stuck Pending");
	ck_one(&c, HP_TAG_PASS, "RunContainerError (9 pods read)");
	ck_one(&c, HP_TAG_PASS, "No pod was evicted for lack of node resources (9 pods read)");
	/* No deep-health labels: nothing said about them. */
	T_EQ(ck_count_msg(&c, HP_TAG_PASS, "deep health"), 0);
	ck_free(&c);
}

/*
 * AWS's documented label pairs: Unschedulable with deep-health-check-status
 * InProgress is the normal state while deep health checks run (WARN P2, the
 * expected duration said); with Failed it stays a FAIL.
 */
static void t_unschedulable_deep_checks(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'nodes':["
		    "{'name':'hyperpod-" I1 "','labels':{'sagemaker.amazonaws.com/node-health-status':"
		    "'Unschedulable','sagemaker.amazonaws.com/deep-health-check-status':'InProgress'}},"
		    "{'name':'hyperpod-" I2 "','labels':{'sagemaker.amazonaws.com/node-health-status':"
		    "'Unschedulable','sagemaker.amazonaws.com/deep-health-check-status':'Failed'}}]}}");
	ck_run(&c, "kube.node-health");
	f = ck_one(&c, HP_TAG_WARN, "hyperpod-" I1 " (gpu) is Unschedulable while its deep health "
				    "checks run (deep-health-check-status=InProgress)");
	T_EQ(f->prio, HP_P2);
	T_CONTAINS(f->message, "within 2 hours");
	T_STREQ(f->node, I1);
	f = ck_one(&c, HP_TAG_FAIL, "is Unschedulable after failing its deep health checks");
	T_STREQ(f->node, I2);
	T_STREQ(f->section, "G+F");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 1);
	ck_free(&c);
}

static void t_health_labels(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'nodes':["
		    NODE(I1, "UnschedulablePendingReplacement", "True") ","
		    "{'name':'hyperpod-" I2 "','labels':{'sagemaker.amazonaws.com/node-health-status':"
		    "'UnschedulablePendingReboot','sagemaker.amazonaws.com/fault-types':'NetworkFaultType',"
		    "'sagemaker.amazonaws.com/deep-health-check-status':'Passed'},"
		    "'annotations':{'sagemaker.amazonaws.com/fault-reasons':'EFA link down'}},"
		    "{'name':'ip-10-0-0-9.ec2.internal','provider_id':'aws:///us-west-2a/" I3 "',"
		    "'labels':{'sagemaker.amazonaws.com/node-health-status':'Unschedulable'}},"
		    "{'name':'odd','provider_id':'aws:///us-west-2a/i-0000000000000000d','labels':"
		    "{'sagemaker.amazonaws.com/node-health-status':'Quarantined',"
		    "'sagemaker.amazonaws.com/fault-type':'GpuFault'}},"
		    "{'name':'system-node','labels':{}}]}}");
	ck_run(&c, "kube.node-health");
	f = ck_one(&c, HP_TAG_FAIL, "hyperpod-" I1 " (gpu) is UnschedulablePendingReplacement "
				    "\xE2\x80\x94 HyperPod replaces it");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "F");
	T_STREQ(f->node, I1);
	/* A network fault goes to § A, with the labels and fault annotations as evidence. */
	f = ck_one(&c, HP_TAG_FAIL, "is UnschedulablePendingReboot");
	T_STREQ(f->section, "A");
	T_STREQ(f->node, I2);
	T_CONTAINS(f->message, "fault types: NetworkFaultType");
	T_ASSERT(ck_evidence_has(f, "sagemaker.amazonaws.com/fault-types=NetworkFaultType"));
	T_ASSERT(ck_evidence_has(f, "sagemaker.amazonaws.com/fault-reasons=EFA link down"));
	/* Node name without the id: the id is added; Unschedulable with no deep check running. */
	f = ck_one(&c, HP_TAG_FAIL, "ip-10-0-0-9.ec2.internal (" I3 ", sys) is Unschedulable with "
				    "no deep health check in progress (deep-health-check-status=not set)");
	T_EQ(f->prio, HP_P2);
	f = ck_one(&c, HP_TAG_FAIL, "odd (i-0000000000000000d) has health status Quarantined; fault "
				    "types: GpuFault");
	T_EQ(f->prio, HP_P1);
	T_EQ(ck_count(&c, HP_TAG_FAIL), 4);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	/* No HyperPod label anywhere: said, not passed. */
	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'nodes':[{'name':'a','labels':{}}]}}");
	ck_run(&c, "kube.node-health");
	ck_one(&c, HP_TAG_INFO, "No Kubernetes node carries sagemaker.amazonaws.com/node-health-status");
	T_EQ(c.f.n, 1);
	ck_free(&c);
}

/* Many nodes in one state: one finding listing them, not one line each. */
static void t_many_nodes_aggregate(void)
{
	char json[40000], *p = json;
	const struct hp_finding *f;
	struct ck c;
	int i;

	p += sprintf(p, "{" AWS_SIDE ",'kube':{" KUBECTL ",'nodes':[");
	for (i = 0; i < 30; i++)
		p += sprintf(p, "%s{'name':'n%d','provider_id':'aws:///z/i-%08x','labels':{"
			     "'sagemaker.amazonaws.com/node-health-status':'UnschedulablePendingReboot',"
			     "'sagemaker.amazonaws.com/deep-health-check-status':'Failed'},"
			     "'ready':{'status':'False','reason':'KubeletNotReady','message':'PLEG is not "
			     "healthy'}}", i ? "," : "", i, 0x1000 + i);
	strcpy(p, "]}}");
	ck_load(&c, json);
	ck_run(&c, "kube.node-health");
	f = ck_one(&c, HP_TAG_FAIL, "30 HyperPod nodes are UnschedulablePendingReboot");
	T_ASSERT(f->node == NULL);
	/* The first 25 nodes' lines, then every id; every id in nodes. */
	T_EQ(ck_evidence_len(f), 26);
	T_ASSERT(ck_evidence_has(f, "n24 (i-00001018) is UnschedulablePendingReboot"));
	T_ASSERT(!ck_evidence_has(f, "n25 (i-00001019)"));
	T_CONTAINS(ck_line(f, 25),
		   "nodes 1-30 of 30: i-00001000 i-00001001");
	T_EQ((int)f->nnodes, 30);
	T_STREQ(f->nodes[29], "i-0000101d");
	T_EQ(c.f.n, 1);
	ck_run(&c, "kube.deep-health");
	f = ck_one(&c, HP_TAG_FAIL, "30 HyperPod nodes failed their deep health checks");
	T_STREQ(f->section, "G+F");
	T_EQ(c.f.n, 1);
	ck_run(&c, "kube.node-ready");
	f = ck_one(&c, HP_TAG_FAIL, "30 HyperPod nodes are NotReady");
	T_EQ((int)f->nnodes, 30);
	ck_free(&c);

	/* The fold rule: four nodes alike fold, three stay one by one. */
	for (i = 3; i <= 4; i++) {
		int k;

		p = json;
		p += sprintf(p, "{" AWS_SIDE ",'kube':{" KUBECTL ",'nodes':[");
		for (k = 0; k < i; k++)
			p += sprintf(p, "%s{'name':'n%d','provider_id':'aws:///z/i-%08x','labels':{"
				     "'sagemaker.amazonaws.com/node-health-status':'Schedulable'},"
				     "'ready':{'status':'False','reason':'KubeletNotReady'}}",
				     k ? "," : "", k, 0x2000 + k);
		strcpy(p, "]}}");
		ck_load(&c, json);
		ck_run(&c, "kube.node-ready");
		T_EQ(ck_count(&c, HP_TAG_FAIL), i == 4 ? 1 : 3);
		if (i == 4) {
			f = ck_one(&c, HP_TAG_FAIL, "4 HyperPod nodes are NotReady");
			T_EQ((int)f->nnodes, 4);
			T_EQ(ck_evidence_len(f), 4);
			T_ASSERT(ck_evidence_has(f, "n3 (i-00002003)"));
		} else {
			f = ck_one(&c, HP_TAG_FAIL, "n2 (i-00002002)");
			T_STREQ(f->node, "i-00002002");
		}
		ck_free(&c);
	}
}

static void t_deep_health(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'nodes':["
		    "{'name':'hyperpod-" I1 "','labels':{'sagemaker.amazonaws.com/deep-health-check-status':'Failed'}},"
		    "{'name':'hyperpod-" I2 "','labels':{'sagemaker.amazonaws.com/deep-health-check-status':'InProgress'}},"
		    "{'name':'hyperpod-" I3 "','labels':{'sagemaker.amazonaws.com/deep-health-check-status':'Passed'}}]}}");
	ck_run(&c, "kube.deep-health");
	f = ck_one(&c, HP_TAG_FAIL, "hyperpod-" I1 " (gpu) failed its deep health checks");
	T_STREQ(f->section, "G+F");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->node, I1);
	ck_one(&c, HP_TAG_INFO, "1 HyperPod node(s) are running deep health checks");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

static void t_readiness_and_join(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'nodes':["
		    "{'name':'hyperpod-" I1 "','labels':{'sagemaker.amazonaws.com/node-health-status':"
		    "'Schedulable'},'ready':{'status':'False','reason':'KubeletNotReady','message':"
		    "'container runtime network not ready: cni plugin not initialized'}},"
		    "{'name':'hyperpod-" I2 "','labels':{'sagemaker.amazonaws.com/node-health-status':"
		    "'Schedulable'},'ready':{'status':'Unknown','reason':'NodeStatusUnknown','message':"
		    "'Kubelet stopped posting node status.'}},"
		    "{'name':'mng-1','provider_id':'aws:///z/i-0000000000000000f','labels':{},"
		    "'ready':{'status':'False','reason':'x'}}]}}");
	ck_run(&c, "kube.node-ready");
	f = ck_one(&c, HP_TAG_FAIL, "hyperpod-" I1 " (gpu) is NotReady: KubeletNotReady: container "
				    "runtime network not ready");
	T_STREQ(f->section, "O.1");
	T_STREQ(f->node, I1);
	f = ck_one(&c, HP_TAG_FAIL, "hyperpod-" I2 " (gpu) has Ready status Unknown");
	T_STREQ(f->section, "F");
	/* I3 is Running in HyperPod but Kubernetes has no node for it. */
	f = ck_one(&c, HP_TAG_WARN, I3 " (sys) is Running in HyperPod but has no Kubernetes node");
	T_STREQ(f->section, "A+B");
	T_STREQ(f->node, I3);
	/* The managed node group node is counted, not judged. */
	ck_one(&c, HP_TAG_INFO, "1 other Kubernetes node(s) are not HyperPod nodes");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 2);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

static void t_namespace(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'namespaces':['default','kube-system']}}");
	ck_run(&c, "kube.namespace");
	f = ck_one(&c, HP_TAG_FAIL, "Namespace aws-hyperpod is missing");
	T_STREQ(f->section, "B.1");
	T_EQ(f->prio, HP_P1);
	ck_free(&c);

	/* A read that failed is said, never taken for a missing namespace. */
	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'errors':{'namespaces':{'status':'forbidden',"
		    "'message':'namespaces is forbidden: User dev cannot list'}}}}");
	ck_run(&c, "kube.namespace");
	f = ck_one(&c, HP_TAG_WARN, "Could not read namespaces with kubectl (forbidden: namespaces is "
				    "forbidden");
	T_EQ(f->prio, HP_P2);
	T_EQ(c.f.n, 1);
	ck_free(&c);
}

#define POD(ns, name, node, app, phase, ct)                                                    \
	"{'namespace':'" ns "','name':'" name "','node':'" node "','phase':'" phase "',"       \
	"'labels':{'k8s-app':'" app "'},'containers':[" ct "]}"

static void t_aws_node(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ","
		    "'daemonsets':[{'name':'aws-node','desired':3,'ready':1,'unavailable':2}],"
		    "'pods':[" POD("kube-system", "aws-node-abc", "hyperpod-" I2, "aws-node", "Running",
				   "{'name':'aws-node','ready':false,'restarts':12,'state':'waiting',"
				   "'reason':'CrashLoopBackOff','last_reason':'Error','last_exit_code':1},"
				   "{'name':'aws-eks-nodeagent','ready':true,'restarts':0,'state':'running'}")
		    "],'aws_node_logs':[{'pod':'aws-node-abc','previous':true,'lines':["
		    "'info: starting','error: one','error: two','error: three','error: four',"
		    "'ipamd: five','gRPC six refused','all good'] },{'pod':'aws-node-zzz','lines':['error: other pod']}]}}");
	ck_run(&c, "kube.aws-node");
	f = ck_one(&c, HP_TAG_FAIL, "aws-node pod aws-node-abc on hyperpod-" I2 " (gpu) is "
				    "CrashLoopBackOff \xE2\x80\x94 pod networking broken on that node");
	T_EQ(f->prio, HP_P0);
	T_STREQ(f->section, "O.1");
	T_STREQ(f->node, I2);
	T_ASSERT(ck_evidence_has(f, "container aws-node: 12 restarts, last exit: Error"));
	/* The last five matching lines of this pod's log, in order. */
	T_ASSERT(ck_evidence_has(f, "log: gRPC six refused"));
	T_ASSERT(ck_evidence_has(f, "log: error: two"));
	T_ASSERT(!ck_evidence_has(f, "log: error: one"));
	T_ASSERT(!ck_evidence_has(f, "all good"));
	T_ASSERT(!ck_evidence_has(f, "other pod"));
	T_EQ(ck_evidence_len(f), 6);
	/* Two unavailable, one explained: the DaemonSet finding covers the rest. */
	f = ck_one(&c, HP_TAG_FAIL, "2 of 3 aws-node pods not ready");
	T_ASSERT(f->node == NULL);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	/* aws-node's JSON log lines are shown as level and msg, so the cause fits the line. */
	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'daemonsets':[],'pods':[" POD("kube-system",
		    "aws-node-j", "n", "aws-node", "Running", "{'name':'aws-node','ready':false,"
		    "'restarts':2,'state':'waiting','reason':'CrashLoopBackOff'}") "],'aws_node_logs':"
		    "[{'pod':'aws-node-j','lines':['{\\'level\\':\\'error\\',\\'ts\\':\\'2025\\',"
		    "\\'caller\\':\\'ipamd/ipamd.go:1\\',\\'msg\\':\\'ipamd: failed to increase IP pool\\'}']}]}}");
	ck_run(&c, "kube.aws-node");
	f = ck_one(&c, HP_TAG_FAIL, "aws-node pod aws-node-j on n is CrashLoopBackOff");
	T_ASSERT(ck_evidence_has(f, "log: error: ipamd: failed to increase IP pool"));
	T_ASSERT(!ck_evidence_has(f, "caller"));
	ck_free(&c);

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'daemonsets':[{'name':'aws-node','desired':0,"
		    "'ready':0,'unavailable':0}],'pods':[]}}");
	ck_run(&c, "kube.aws-node");
	ck_one(&c, HP_TAG_WARN, "aws-node DaemonSet schedules no pods");
	ck_free(&c);

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'daemonsets':[],'pods':[]}}");
	ck_run(&c, "kube.aws-node");
	ck_one(&c, HP_TAG_INFO, "aws-node DaemonSet not found in kube-system");
	T_EQ(c.f.n, 1);
	ck_free(&c);

	/* DaemonSets unreadable: said once, and the pods are still judged. */
	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'errors':{'daemonsets':{'status':'forbidden',"
		    "'message':'no'}},'pods':[" POD("kube-system", "aws-node-x", "n", "aws-node",
						   "Running", "{'name':'aws-node','ready':false,"
						   "'restarts':0,'state':'running'}") "]}}");
	ck_run(&c, "kube.aws-node");
	ck_one(&c, HP_TAG_WARN, "Could not read daemonsets with kubectl (forbidden: no)");
	f = ck_one(&c, HP_TAG_FAIL, "aws-node pod aws-node-x on n is not ready");
	T_ASSERT(f->node == NULL);
	ck_free(&c);
}

static void t_kube_proxy_and_coredns(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ","
		    "'daemonsets':[{'name':'kube-proxy','desired':3,'ready':2,'unavailable':1}],"
		    "'pods':[" POD("kube-system", "kube-proxy-1", "hyperpod-" I1, "kube-proxy", "Running",
				   "{'name':'kube-proxy','ready':false,'restarts':1,'state':'terminated',"
				   "'reason':'Error','exit_code':1}") ","
		    POD("kube-system", "coredns-a", "hyperpod-" I3, "kube-dns", "Pending",
			"{'name':'coredns','ready':false,'restarts':0,'state':'waiting','reason':"
			"'ImagePullBackOff'}") ","
		    POD("kube-system", "coredns-b", "hyperpod-" I3, "kube-dns", "Running",
			"{'name':'coredns','ready':true,'restarts':0,'state':'running'}") "],"
		    "'system_pods':{'kube-dns':2}}}");
	ck_run(&c, "kube.kube-proxy");
	f = ck_one(&c, HP_TAG_FAIL, "kube-proxy pod kube-proxy-1 on hyperpod-" I1 " (gpu) is Error "
				    "\xE2\x80\x94 service networking broken");
	T_STREQ(f->section, "O.3");
	T_EQ(f->prio, HP_P0);
	T_EQ(c.f.n, 1);
	ck_run(&c, "kube.coredns");
	f = ck_one(&c, HP_TAG_FAIL, "CoreDNS pod coredns-a on hyperpod-" I3 " (sys) is "
				    "ImagePullBackOff \xE2\x80\x94 DNS resolution");
	T_STREQ(f->section, "O.4");
	T_STREQ(f->node, I3);
	T_EQ(c.f.n, 1);
	ck_free(&c);

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'pods':[],'system_pods':{'kube-dns':0}}}");
	ck_run(&c, "kube.coredns");
	ck_one(&c, HP_TAG_INFO, "No CoreDNS pods (k8s-app=kube-dns) found");
	ck_free(&c);
}

static void t_sandbox(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ","
		    "'pods':[" POD("ml", "a", "hyperpod-" I1, "", "Pending",
				   "{'name':'m','state':'waiting','reason':'ContainerCreating'}") ","
		    POD("ml", "b", "hyperpod-" I1, "", "Pending",
			"{'name':'m','state':'waiting','reason':'ContainerCreating'}") ","
		    POD("ml", "c", "hyperpod-" I2, "", "Pending",
			"{'name':'m','state':'waiting','reason':'ContainerCreating'}") ","
		    POD("ml", "d", "hyperpod-" I3, "", "Running", "{'name':'m','state':'running'}") "],"
		    "'events':["
		    "{'namespace':'ml','kind':'Pod','name':'a','reason':'FailedCreatePodSandBox','message':"
		    "'plugin type=aws-cni failed: add cmd: Error received from AddNetwork gRPC call: "
		    "rpc error: dial tcp 127.0.0.1:50051: connect: connection refused'},"
		    "{'namespace':'ml','kind':'Pod','name':'a','reason':'FailedCreatePodSandBox','message':'again'},"
		    "{'namespace':'ml','kind':'Pod','name':'b','reason':'FailedCreatePodSandBox','message':'x'},"
		    "{'namespace':'ml','kind':'Pod','name':'c','reason':'FailedCreatePodSandBox','message':"
		    "'failed to assign an IP address to container'},"
		    "{'namespace':'ml','kind':'Pod','name':'d','reason':'FailedCreatePodSandBox','message':'old'}]}}");
	ck_run(&c, "kube.sandbox");
	f = ck_one(&c, HP_TAG_FAIL, "2 pod(s) on hyperpod-" I1 " (gpu) stuck Pending with "
				    "FailedCreatePodSandBox");
	T_STREQ(f->section, "O.1");
	T_STREQ(f->node, I1);
	T_EQ(f->prio, HP_P1);
	T_EQ(ck_evidence_len(f), 3);
	T_ASSERT(ck_evidence_has(f, "ml/a: plugin type=aws-cni failed"));
	f = ck_one(&c, HP_TAG_FAIL, "1 pod(s) on hyperpod-" I2 " (gpu) stuck Pending");
	T_STREQ(f->section, "O.2");
	/* The pod that recovered is not reported. */
	T_EQ(ck_count(&c, HP_TAG_FAIL), 2);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'pods':[],'errors':{'events':{'status':"
		    "'forbidden','message':'events is forbidden'}}}}");
	ck_run(&c, "kube.sandbox");
	ck_one(&c, HP_TAG_WARN, "Could not read events with kubectl (forbidden");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

static void t_workload_pods(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ",'pods_total':40,"
		    "'pods':["
		    POD("train", "w0", "hyperpod-" I1, "", "Running",
			"{'name':'torch','restarts':4,'state':'waiting','reason':'CrashLoopBackOff',"
			"'last_reason':'OOMKilled','last_exit_code':137}") ","
		    POD("train", "w1", "hyperpod-" I1, "", "Running",
			"{'name':'torch','restarts':2,'state':'running','last_reason':'OOMKilled',"
			"'last_exit_code':137}") ","
		    POD("train", "w2", "hyperpod-" I1, "", "Running",
			"{'name':'torch','restarts':9,'state':'waiting','reason':'CrashLoopBackOff',"
			"'last_reason':'Error','last_exit_code':1}") ","
		    POD("infer", "s0", "hyperpod-" I2, "", "Pending",
			"{'name':'srv','restarts':0,'state':'waiting','reason':'ErrImagePull'}") ","
		    POD("infer", "s1", "hyperpod-" I2, "", "Running",
			"{'name':'srv','restarts':1,'state':'waiting','reason':'RunContainerError'}") ","
		    POD("infer", "s2", "", "", "Pending",
			"{'name':'srv','restarts':0,'state':'waiting','reason':'ContainerCreating'}") ","
		    POD("kube-system", "aws-node-q", "hyperpod-" I2, "aws-node", "Running",
			"{'name':'aws-node','restarts':3,'state':'waiting','reason':'CrashLoopBackOff'}")
		    "]}}");
	ck_run(&c, "kube.workload-pods");
	f = ck_one(&c, HP_TAG_FAIL, "2 pod(s) in namespace train on hyperpod-" I1 " (gpu) are OOMKilled");
	T_STREQ(f->section, "M.1");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->node, I1);
	T_ASSERT(ck_evidence_has(f, "w0 (container torch, 4 restarts, last exit code 137)"));
	T_ASSERT(ck_evidence_has(f, "w1 (container torch, 2 restarts, last exit code 137)"));
	ck_one(&c, HP_TAG_FAIL, "1 pod(s) in namespace train on hyperpod-" I1 " (gpu) are CrashLoopBackOff");
	f = ck_one(&c, HP_TAG_FAIL, "1 pod(s) in namespace infer on hyperpod-" I2 " (gpu) are "
				    "ImagePullBackOff");
	T_ASSERT(ck_evidence_has(f, "s0 (container srv, 0 restarts)"));
	ck_one(&c, HP_TAG_FAIL, "are RunContainerError");
	/* kube-system belongs to the add-on checks; ContainerCreating is not a failure here. */
	T_EQ(ck_count(&c, HP_TAG_FAIL), 4);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'pods':[],'pods_dropped':12}}");
	ck_run(&c, "kube.workload-pods");
	f = ck_one(&c, HP_TAG_WARN, "12 more pods in a problem state were not kept");
	T_EQ(f->prio, HP_P2);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

/* A HyperPod node with these conditions (API objects, Ready left out as the collector does). */
#define CNODE(iid, conds)                                                                      \
	"{'name':'hyperpod-" iid "','provider_id':'aws:///us-west-2a/" iid "',"                \
	"'labels':{'sagemaker.amazonaws.com/node-health-status':'Schedulable'},"               \
	"'ready':{'status':'True','reason':'KubeletReady','message':'ok'},'conditions':[" conds "]}"
#define COND(type, status, reason, msg)                                                        \
	"{'type':'" type "','status':'" status "','reason':'" reason "','message':'" msg "',"  \
	"'since':'2026-01-01T00:00:00Z'}"
/* The kubelet's three pressure conditions, all False (pkg/kubelet/nodestatus/setters.go). */
#define PRESSURE_OK                                                                            \
	COND("MemoryPressure", "False", "KubeletHasSufficientMemory",                          \
	     "kubelet has sufficient memory available") ","                                    \
	COND("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure") "," \
	COND("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available")

/* node-problem-detector's default conditions, healthy (its config files). */
#define NPD_OK                                                                                 \
	COND("KernelDeadlock", "False", "KernelHasNoDeadlock", "kernel has no deadlock") ","   \
	COND("ReadonlyFilesystem", "False", "FilesystemIsNotReadOnly",                         \
	     "Filesystem is not read-only") ","                                                \
	COND("FrequentKubeletRestart", "False", "NoFrequentKubeletRestart",                    \
	     "kubelet is functioning properly") ","                                            \
	COND("FrequentContainerdRestart", "False", "NoFrequentContainerdRestart",              \
	     "containerd is functioning properly") ","                                         \
	COND("CperHardwareErrorFatal", "False", "CperHardwareHasNoFatalError",                 \
	     "UEFI CPER has no fatal error")

/* Every condition present and False: a PASS naming what was read, no INFO about NPD. */
static void t_conditions_false_pass(void)
{
	const struct hp_finding *f;
	struct ck c;
	char json[8192];

	snprintf(json, sizeof(json), "%s%s,%s,%s]}}", "{" AWS_SIDE ",'kube':{" KUBECTL ",'nodes':[",
		 CNODE(I1, PRESSURE_OK "," NPD_OK), CNODE(I2, PRESSURE_OK "," NPD_OK),
		 CNODE(I3, PRESSURE_OK "," NPD_OK));
	ck_load(&c, json);
	ck_run(&c, "kube.node-conditions");
	f = ck_one(&c, HP_TAG_PASS, "No HyperPod node reports a pressure or node-problem-detector "
				    "condition (3 nodes, 24 conditions False)");
	(void)f;
	T_EQ(c.f.n, 1);
	ck_free(&c);

	/* Pressure conditions only: the PASS, and an INFO that NPD is absent. */
	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL ",'nodes':[" CNODE(I1, PRESSURE_OK) "]}}");
	ck_run(&c, "kube.node-conditions");
	ck_one(&c, HP_TAG_PASS, "(1 nodes, 3 conditions False)");
	ck_one(&c, HP_TAG_INFO, "No HyperPod node carries a node-problem-detector condition");
	CK_NO_PROBLEMS(&c);
	ck_free(&c);

	/* A snapshot from before conditions were collected: SKIP, never PASS. */
	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES "}}");
	ck_run(&c, "kube.node-conditions");
	ck_one(&c, HP_TAG_SKIP, "no node's conditions were collected");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

/* Each condition's wording goes to its own section and priority. */
static void t_conditions_true(void)
{
	static const struct {
		const char *type, *reason, *msg, *section, *says;
		enum hp_tag tag;
		enum hp_prio prio;
	} cases[] = {
		{ "ReadonlyFilesystem", "FilesystemIsReadOnly",
		  "EXT4-fs (sda1): Remounting filesystem read-only", "I.8",
		  "writes to that filesystem fail", HP_TAG_FAIL, HP_P0 },
		{ "XfsShutdown", "XfsHasShutdown", "XFS (md0): Shutting down filesystem", "I.8",
		  "writes to that filesystem fail", HP_TAG_FAIL, HP_P0 },
		{ "CperHardwareErrorFatal", "CperHardwareErrorFatal",
		  "mce: [Hardware Error]: event severity: fatal", "N.1", "drain and replace",
		  HP_TAG_FAIL, HP_P0 },
		{ "DiskPressure", "KubeletHasDiskPressure", "kubelet has disk pressure", "I.2",
		  "the kubelet evicts pods and admits no new ones", HP_TAG_FAIL, HP_P1 },
		{ "MemoryPressure", "KubeletHasInsufficientMemory",
		  "kubelet has insufficient memory available", "I.3", "the kubelet evicts pods",
		  HP_TAG_FAIL, HP_P1 },
		{ "PIDPressure", "KubeletHasInsufficientPID", "kubelet has insufficient PID available",
		  "I", "new processes and pods cannot start", HP_TAG_FAIL, HP_P1 },
		{ "KernelDeadlock", "DockerHung", "INFO: task docker:20744 blocked for more than 120 "
		  "seconds.", "N.1", "tasks are stuck in the kernel", HP_TAG_FAIL, HP_P1 },
		{ "FrequentKubeletRestart", "FrequentKubeletRestart",
		  "Found 5 matching logs, which meets the threshold of 5", "M",
		  "pods on the node are not kept running", HP_TAG_FAIL, HP_P1 },
		{ "KubeletUnhealthy", "KubeletUnhealthy", "kubelet:kubelet.service was found "
		  "unhealthy; repair flag : true", "M", "pods on the node are not kept running", HP_TAG_FAIL,
		  HP_P1 },
		{ "FrequentContainerdRestart", "FrequentContainerdRestart",
		  "Found 6 matching logs, which meets the threshold of 5", "M.2",
		  "containers on the node fail to start", HP_TAG_FAIL, HP_P1 },
		{ "ContainerRuntimeUnhealthy", "ContainerdUnhealthy", "cri:containerd was found "
		  "unhealthy; repair flag : true", "M.2", "containers on the node fail to start",
		  HP_TAG_FAIL, HP_P1 },
		{ "GpuHealthy", "Custom", "set by a monitoring agent", "F",
		  "a condition hpnode does not know", HP_TAG_WARN, HP_P2 },
	};
	size_t i;
	char json[8192], want[512];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hp_finding *f;
		struct ck c;

		snprintf(json, sizeof(json), "{" AWS_SIDE ",'kube':{" KUBECTL ",'nodes':["
			 CNODE(I1, PRESSURE_OK "," NPD_OK) ","
			 CNODE(I2, "{'type':'%s','status':'True','reason':'%s','message':'%s',"
			       "'since':'2026-01-01T00:00:00Z'}") "]}}",
			 cases[i].type, cases[i].reason, cases[i].msg);
		ck_load(&c, json);
		ck_run(&c, "kube.node-conditions");
		snprintf(want, sizeof(want), "hyperpod-" I2 " (gpu): %s is True (%s: %s) \xE2\x80\x94 %s",
			 cases[i].type, cases[i].reason, cases[i].msg, cases[i].says);
		f = ck_one(&c, cases[i].tag, want);
		T_STREQ(f->section, cases[i].section);
		T_EQ(f->prio, cases[i].prio);
		T_STREQ(f->node, I2);
		T_ASSERT(ck_evidence_has(f, "since 2026-01-01T00:00:00Z"));
		/* The healthy node passes by itself, not as "all". */
		ck_one(&c, HP_TAG_PASS, "The other 1 HyperPod node(s) report no pressure");
		T_EQ(ck_count(&c, HP_TAG_FAIL) + ck_count(&c, HP_TAG_WARN), 1);
		ck_free(&c);
	}
}

#define NEV(node, reason, type, msg, count)                                                    \
	"{'kind':'Node','name':'" node "','reason':'" reason "','type':'" type "',"            \
	"'message':'" msg "','count':" #count ",'last':'2026-01-01T00:10:00Z',"                \
	"'source':'kernel-monitor'}"

static void t_node_events(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ",'node_events':["
		    NEV("hyperpod-" I1, "Ext4Error", "Warning", "EXT4-fs error (device dm-25): "
			"ext4_journal_check_start:56: Detected aborted journal", 2) ","
		    NEV("hyperpod-" I1, "Ext4Error", "Warning", "EXT4-fs error (device dm-25): "
			"ext4_journal_check_start:56: Detected aborted journal", 1) ","
		    NEV("hyperpod-" I1, "OOMKilling", "Warning", "Killed process 1012 (heapster) "
			"total-vm:327128kB, anon-rss:306328kB, file-rss:11132kB, shmem-rss:12345kB", 1) ","
		    NEV("hyperpod-" I2, "TaskHung", "Warning", "INFO: task umount.aufs:21568 blocked "
			"for more than 120 seconds.", 1) ","
		    NEV("hyperpod-" I2, "KernelOops", "Warning", "BUG: unable to handle kernel NULL "
			"pointer dereference at 0000000000000000", 1) ","
		    NEV("hyperpod-" I2, "EvictionThresholdMet", "Warning",
			"Attempting to reclaim memory", 3) ","
		    NEV("hyperpod-" I3, "EvictionThresholdMet", "Warning",
			"Attempting to reclaim ephemeral-storage", 1) ","
		    NEV("hyperpod-" I3, "CperHardwareErrorCorrected", "Warning",
			"mce: [Hardware Error]: event severity: corrected", 1) ","
		    NEV("hyperpod-" I3, "KernelHasNoDeadlock", "Normal", "Node condition "
			"KernelDeadlock is now: False", 1) ","
		    NEV("ip-10-0-0-9.ec2.internal", "Ext4Error", "Warning", "not a HyperPod node", 1) ","
		    NEV("hyperpod-" I3, "Rebooted", "Warning", "Node rebooted", 1)
		    "]}}");
	ck_run(&c, "kube.node-events");
	f = ck_one(&c, HP_TAG_FAIL, "hyperpod-" I1 " (gpu): Ext4Error 3 time(s) (kernel-monitor)");
	T_STREQ(f->section, "I.8");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->node, I1);
	T_ASSERT(ck_evidence_has(f, "Detected aborted journal"));
	f = ck_one(&c, HP_TAG_WARN, "OOMKilling 1 time(s)");
	T_STREQ(f->section, "I.3");
	f = ck_one(&c, HP_TAG_WARN, "TaskHung");
	T_STREQ(f->section, "N.1");
	f = ck_one(&c, HP_TAG_FAIL, "KernelOops");
	T_STREQ(f->section, "N.1");
	f = ck_one(&c, HP_TAG_WARN, "hyperpod-" I2 " (gpu): EvictionThresholdMet 3 time(s)");
	T_STREQ(f->section, "I.3");
	f = ck_one(&c, HP_TAG_WARN, "hyperpod-" I3 " (sys): EvictionThresholdMet 1 time(s)");
	T_STREQ(f->section, "I.2");
	ck_one(&c, HP_TAG_INFO, "1 node event(s) of hardware errors the hardware corrected");
	ck_one(&c, HP_TAG_INFO, "1 other kind(s) of Warning node events not judged");
	/* Normal events (recoveries) and other nodes' events are not findings. */
	T_EQ(ck_count(&c, HP_TAG_FAIL) + ck_count(&c, HP_TAG_WARN), 6);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	/* Only healthy events: PASS. */
	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ",'node_events':["
		    NEV("hyperpod-" I3, "KernelHasNoDeadlock", "Normal", "recovered", 1) "]}}");
	ck_run(&c, "kube.node-events");
	ck_one(&c, HP_TAG_PASS, "No HyperPod node has a node-problem-detector or kubelet problem "
				"event (1 Warning node events read)");
	CK_NO_PROBLEMS(&c);
	ck_free(&c);

	/* Truncated: a WARN, no PASS; unreadable: the read's WARN. */
	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ",'node_events':[],"
		    "'node_events_truncated':true}}");
	ck_run(&c, "kube.node-events");
	ck_one(&c, HP_TAG_WARN, "only the first were read");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ",'errors':{'node_events':"
		    "{'status':'forbidden','message':'events is forbidden'}}}}");
	ck_run(&c, "kube.node-events");
	ck_one(&c, HP_TAG_WARN, "Could not read node_events with kubectl (forbidden");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

#define EVPOD(ns, name, node, reason, msg)                                                     \
	"{'namespace':'" ns "','name':'" name "','node':'" node "','phase':'Failed',"          \
	"'reason':'" reason "','message':'" msg "','labels':{},'containers':[]}"

static void t_evictions(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ",'pods_total':30,'pods':["
		    EVPOD("train", "a", "hyperpod-" I1, "Evicted", "The node was low on resource: "
			  "ephemeral-storage. Container ebaogi-bff-app was using 34260Ki, which "
			  "exceeds its request of 0. ") ","
		    EVPOD("train", "b", "hyperpod-" I1, "Evicted", "The node was low on resource: "
			  "ephemeral-storage. Threshold quantity: 1Gi, available: 777784Ki.") ","
		    EVPOD("train", "c", "hyperpod-" I2, "Evicted", "The node was low on resource: "
			  "memory. Threshold quantity: 100Mi, available: 26444Ki. Container "
			  "sentry-worker was using 373428Ki, request is 0, has larger consumption "
			  "of memory.") ","
		    EVPOD("train", "d", "hyperpod-" I3, "Evicted", "Pod The node had condition: "
			  "[DiskPressure]. ") ","
		    EVPOD("train", "e", "hyperpod-" I3, "", "") "]}}");
	ck_run(&c, "kube.evictions");
	f = ck_one(&c, HP_TAG_FAIL, "2 pod(s) on hyperpod-" I1 " (gpu) were evicted: the node was "
				    "low on ephemeral-storage");
	T_STREQ(f->section, "I.2");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->node, I1);
	T_ASSERT(ck_evidence_has(f, "train/b: The node was low on resource: ephemeral-storage."));
	f = ck_one(&c, HP_TAG_FAIL, "1 pod(s) on hyperpod-" I2 " (gpu) were evicted: the node was "
				    "low on memory");
	T_STREQ(f->section, "I.3");
	f = ck_one(&c, HP_TAG_FAIL, "low on disk (DiskPressure)");
	T_STREQ(f->section, "I.2");
	/* A pod that failed by itself is no eviction. */
	T_EQ(ck_count(&c, HP_TAG_FAIL), 3);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ",'pods_total':30,'pods':["
		    EVPOD("train", "e", "hyperpod-" I3, "", "") "]}}");
	ck_run(&c, "kube.evictions");
	ck_one(&c, HP_TAG_PASS, "No pod was evicted for lack of node resources (30 pods read)");
	ck_free(&c);
}

/* A collected-but-missing list (older snapshot) is a SKIP, not a PASS. */
static void t_missing_data_is_skipped(void)
{
	struct ck c;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "}}");
	run_kube(&c);
	T_EQ(ck_count(&c, HP_TAG_PASS), 1); /* kube.access only */
	T_EQ(ck_count(&c, HP_TAG_SKIP), 12);
	CK_NO_PROBLEMS(&c);
	ck_free(&c);
}

/* Pods unreadable: one WARN naming every check left undone, the others point to it. */
static void t_unreadable_pods_said_once(void)
{
	struct ck c;
	size_t i, warns = 0, skips = 0;
	const struct hp_finding *f = NULL;

	ck_load(&c, "{" AWS_SIDE ",'kube':{" KUBECTL "," HEALTHY_NODES ",'daemonsets':[],'events':[],"
		    "'errors':{'pods':{'status':'forbidden','message':'pods is forbidden'}}}}");
	ck_run_all(&c);
	for (i = 0; i < c.f.n; i++) {
		if (!strstr(c.f.v[i].message, "pods"))
			continue;
		if (c.f.v[i].tag == HP_TAG_WARN && strstr(c.f.v[i].message, "Could not read pods")) {
			warns++;
			f = &c.f.v[i];
		} else if (c.f.v[i].tag == HP_TAG_SKIP &&
			   strstr(c.f.v[i].message, "kubectl could not read pods (kube.aws-node says why)")) {
			skips++;
		}
	}
	T_EQ(warns, 1);
	T_EQ(skips, 5);
	T_ASSERT(f);
	T_STREQ(f->check->id, "kube.aws-node");
	T_CONTAINS(f->message, "not checked: aws-node health, kube-proxy health, CoreDNS health, Pods "
		   "stuck on FailedCreatePodSandBox, Workload pod states, Evicted pods");
	ck_free(&c);
}

T_MAIN(T(t_unreadable_pods_said_once), T(t_not_eks_says_nothing), T(t_skips_never_pass), T(t_disabled_is_a_quiet_skip),
       T(t_access_verified), T(t_healthy_cluster_passes), T(t_unschedulable_deep_checks), T(t_health_labels),
       T(t_many_nodes_aggregate), T(t_deep_health), T(t_readiness_and_join), T(t_namespace),
       T(t_aws_node), T(t_kube_proxy_and_coredns), T(t_sandbox), T(t_workload_pods),
       T(t_missing_data_is_skipped), T(t_conditions_false_pass), T(t_conditions_true),
       T(t_node_events), T(t_evictions))
