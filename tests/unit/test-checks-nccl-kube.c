/*
 * The Kubernetes checks of hpnode nccl over hand-built "nccl" keys (the
 * collector's layout, include/hp/snapshot.h): the job's pods, the EFA device
 * plugin, pod and container states, init containers, /dev/shm, the headless
 * Service, NetworkPolicies, the pod-log scan, the environment and versions.
 * Several cases are the original tool's bugs (seed-nccl.md § 5), each named
 * where it is tested.
 */
#include <stdio.h>
#include <string.h>

#include "checks-t.h"
#include "hp/json.h"
#include "t.h"

/* One pod of the collector's layout; quotes are ' (checks-t.h turns them into "). */
#define POD(ns, name, node, labels, phase, containers, spec) \
	"{'namespace':'" ns "','name':'" name "','node':'" node "','phase':'" phase "'," \
	"'labels':{" labels "},'containers':[" containers "],'spec':" spec "}"
#define KF(job, type) "'training.kubeflow.org/job-name':'" job "','training.kubeflow.org/replica-type':'" type "'"
#define RUNNING(name) "{'name':'" name "','ready':true,'restarts':0,'state':'running'}"
#define GPU_SPEC(env, mounts, volumes) \
	"{'containers':[{'name':'pytorch','image':'img:1','env':{" env "}," \
	"'requests':{'nvidia.com/gpu':'8','vpc.amazonaws.com/efa':'32'}," \
	"'limits':{'nvidia.com/gpu':'8','vpc.amazonaws.com/efa':'32'},'mounts':[" mounts "]}]," \
	"'init_containers':[],'volumes':[" volumes "]}"
#define DSHM_MOUNT "{'name':'dshm','path':'/dev/shm'}"
#define DSHM_VOL(limit) "{'name':'dshm','kind':'emptyDir','medium':'Memory','size_limit':'" limit "'}"
#define GOOD_ENV "'FI_PROVIDER':'efa','FI_EFA_USE_DEVICE_RDMA':'1','NCCL_DEBUG':'WARN'," \
	"'NCCL_SOCKET_IFNAME':'^lo,docker,efa,veth,virbr','MASTER_ADDR':'j-master-0','MASTER_PORT':'29500'"
#define GOOD_POD(name, node, type) \
	POD("ml", name, node, KF("j", type), "Running", RUNNING("pytorch"), \
	    GPU_SPEC(GOOD_ENV, DSHM_MOUNT, DSHM_VOL("64Gi")))

/* A snapshot of an EKS cluster with the given nccl key members (after '{'). */
static void load(struct ck *c, const char *nccl_members)
{
	char *text = xasprintf(
		"{'cluster':{'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:1:cluster/k'}}},"
		"'kube':{'nodes':[{'name':'n1','provider_id':'aws:///us-west-2a/i-0aaaaaaaaaaaaaaa1'},"
		"{'name':'n2','provider_id':'aws:///us-west-2a/i-0bbbbbbbbbbbbbbb2'}]},"
		"'nodes':[{'InstanceId':'i-0aaaaaaaaaaaaaaa1','InstanceType':'ml.p5.48xlarge'},"
		"{'InstanceId':'i-0bbbbbbbbbbbbbbb2','InstanceType':'ml.p5.48xlarge'}],"
		"'instance_types':{'p5.48xlarge':{'gpuInfo':{'gpus':[{'count':'8'}]},"
		"'networkInfo':{'efaSupported':'true','efaInfo':{'maximumEfaInterfaces':'32'}}}},"
		"'nccl':{'options':{'namespace':'ml','job':'j'},%s}}", nccl_members);

	ck_load(c, text);
	free(text);
}

static void t_job(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c, "'kube_skipped':{'kind':'server_mismatch','message':'kubectl points at another cluster'},"
		 "'cloudwatch':{'group':'g'}");
	ck_run(&c, "nccl.job");
	f = ck_one(&c, HP_TAG_SKIP, "Kubernetes checks of the job skipped (EFA device plugin, pods, "
		   "/dev/shm, services, NetworkPolicies, pod logs, environment): kubectl points at "
		   "another cluster; the cluster's CloudWatch logs are searched instead");
	T_EQ(f->prio, HP_PNONE);
	T_EQ(c.f.n, 1);
	/* The other Kubernetes checks stay silent: one SKIP, never a PASS. */
	ck_run(&c, "nccl.efa-plugin");
	T_EQ(c.f.n, 0);
	ck_run(&c, "nccl.dshm");
	T_EQ(c.f.n, 0);
	ck_run(&c, "nccl.logs");
	T_EQ(c.f.n, 0);
	ck_free(&c);

	load(&c, "'pods':[]");
	ck_run(&c, "nccl.job");
	f = ck_one(&c, HP_TAG_FAIL, "No pod of job j found in ml (labels "
		   "training.kubeflow.org/job-name=j and job-name=j)");
	T_STREQ(f->section, "NC20");
	ck_free(&c);

	load(&c, "'pods':[" GOOD_POD("j-master-0", "n1", "master") "," GOOD_POD("j-worker-0", "n2", "worker")
		 "," GOOD_POD("j-worker-1", "n2", "worker") "]");
	ck_run(&c, "nccl.job");
	ck_one(&c, HP_TAG_INFO, "Job ml/j (no owner, label training.kubeflow.org/job-name): 3 pods "
	       "(master 1, worker 2) on 2 nodes");
	ck_free(&c);

	load(&c, "'errors':{'pods':{'status':'forbidden','message':'pods is forbidden'}}");
	ck_run(&c, "nccl.job");
	ck_one(&c, HP_TAG_WARN, "Cannot list the pods (forbidden): pods is forbidden");
	ck_free(&c);
}

static void t_efa_plugin(void)
{
	struct ck c;
	const struct hp_finding *f;

	/* Seed bug A9: a DaemonSet in namespace "default" is no EFA plugin because "default" holds "efa". */
	load(&c, "'pods_requesting_efa':1,'pods':[" GOOD_POD("j-master-0", "n1", "master") "],"
		 "'daemonsets':[{'namespace':'default','name':'log-agent','images':['fluent-bit:2'],"
		 "'desired':2,'ready':2}]");
	ck_run(&c, "nccl.efa-plugin");
	f = ck_one(&c, HP_TAG_FAIL, "Pods request vpc.amazonaws.com/efa but no EFA device plugin "
		   "DaemonSet runs in any namespace (1 pod)");
	T_EQ(f->prio, HP_P0);
	T_STREQ(f->section, "NC6.1");
	T_ASSERT(ck_evidence_has(f, "ml/j-master-0"));
	ck_free(&c);

	/* Found by image in any namespace, readiness judged. */
	load(&c, "'pods_requesting_efa':1,'pods':[" GOOD_POD("j-master-0", "n1", "master") "],"
		 "'daemonsets':[{'namespace':'aws-hyperpod','name':'hp-dependencies-efa','images':["
		 "'602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin:v0.5.6'],"
		 "'desired':4,'ready':3}]");
	ck_run(&c, "nccl.efa-plugin");
	ck_one(&c, HP_TAG_WARN, "EFA device plugin aws-hyperpod/hp-dependencies-efa: 3 of 4 pods ready");
	ck_free(&c);

	/* A GPU pod on an EFA instance that asks for no EFA falls back to TCP. */
	load(&c, "'pods_requesting_efa':0,'pods':[" POD("ml", "j-worker-0", "n2", KF("j", "worker"),
		 "Running", RUNNING("pytorch"), "{'containers':[{'name':'pytorch','limits':"
		 "{'nvidia.com/gpu':'8'},'requests':{},'mounts':[]}],'volumes':[]}") "],"
		 "'daemonsets':[{'namespace':'kube-system','name':'aws-efa-k8s-device-plugin-daemonset',"
		 "'images':[],'desired':2,'ready':2}]");
	ck_run(&c, "nccl.efa-plugin");
	ck_one(&c, HP_TAG_PASS, "EFA device plugin DaemonSet kube-system/aws-efa-k8s-device-plugin-daemonset runs");
	f = ck_one(&c, HP_TAG_WARN, "Pod ml/j-worker-0 requests no vpc.amazonaws.com/efa on "
		   "ml.p5.48xlarge (32 EFA interfaces): NCCL inside it cannot use EFA");
	T_STREQ(f->node, "i-0bbbbbbbbbbbbbbb2");
	T_STREQ(hp_json_str(f->vars, "POD"), "j-worker-0");
	ck_free(&c);
}

static void t_pod_states(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c, "'pods':[" POD("ml", "j-worker-1", "", KF("j", "worker"), "Pending", "", "{}") ","
		 "{'namespace':'ml','name':'j-worker-2','phase':'Pending','labels':{},"
		 "'conditions_false':[{'type':'PodScheduled','status':'False','reason':'Unschedulable',"
		 "'message':'0/4 nodes are available: 4 Insufficient vpc.amazonaws.com/efa.'}],"
		 "'containers':[],'spec':{}},"
		 "{'namespace':'ml','name':'j-worker-3','phase':'Failed','message':'The node was low on "
		 "resource: memory.','labels':{},'containers':[],'spec':{}}]");
	ck_run(&c, "nccl.pod-status");
	ck_one(&c, HP_TAG_WARN, "Pod ml/j-worker-1 is Pending");
	f = ck_one(&c, HP_TAG_WARN, "Pod ml/j-worker-2 is Pending");
	T_ASSERT(ck_evidence_has(f, "PodScheduled=False Unschedulable: 0/4 nodes are available"));
	f = ck_one(&c, HP_TAG_FAIL, "Pod ml/j-worker-3 is Failed: The node was low on resource: memory.");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "NC20");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

static void t_containers(void)
{
	struct ck c;
	const struct hp_finding *f;

	/* Seed bug A11: OOMKilled is a lastState.terminated reason, never a waiting one. */
	load(&c, "'pods':[" POD("ml", "j-worker-0", "n2", KF("j", "worker"), "Running",
		 "{'name':'pytorch','ready':true,'restarts':1,'state':'running','last_reason':'OOMKilled',"
		 "'last_exit_code':137}", "{}") ","
		 POD("ml", "j-worker-1", "n2", KF("j", "worker"), "Running",
		 "{'name':'pytorch','ready':false,'restarts':4,'state':'waiting','reason':'CrashLoopBackOff',"
		 "'last_reason':'Error','last_exit_code':1}", "{}") ","
		 POD("ml", "j-worker-2", "n1", KF("j", "worker"), "Running",
		 "{'name':'pytorch','ready':true,'restarts':1,'state':'running','last_reason':'Completed',"
		 "'last_exit_code':0}", "{}") "]");
	ck_run(&c, "nccl.containers");
	f = ck_one(&c, HP_TAG_FAIL, "Container ml/j-worker-0/pytorch was OOMKilled (restarts 1, last "
		   "terminated OOMKilled (exit 137))");
	T_STREQ(f->section, "NC4");
	T_STREQ(hp_json_str(f->vars, "CONTAINER"), "pytorch");
	f = ck_one(&c, HP_TAG_FAIL, "Container ml/j-worker-1/pytorch is in CrashLoopBackOff (restarts "
		   "4, last terminated Error (exit 1))");
	T_STREQ(f->section, "NC20");
	f = ck_one(&c, HP_TAG_WARN, "Container ml/j-worker-2/pytorch restarted");
	T_EQ(f->prio, HP_P2);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	load(&c, "'pods':[" GOOD_POD("j-master-0", "n1", "master") "]");
	ck_run(&c, "nccl.containers");
	ck_one(&c, HP_TAG_PASS, "No container of the job's pods is crash-looping, OOM-killed or "
	       "restarting (1 containers)");
	ck_free(&c);
}

static void t_init_containers(void)
{
	struct ck c;

	load(&c, "'pods':[" POD("ml", "j-worker-0", "n2", KF("j", "worker"), "Pending",
		 "{'name':'fetch','init':true,'restarts':3,'state':'waiting','reason':'CrashLoopBackOff',"
		 "'message':'back-off 5m0s'},{'name':'pytorch','restarts':0,'state':'waiting',"
		 "'reason':'PodInitializing'}", "{}") ","
		 POD("ml", "j-worker-1", "n2", KF("j", "worker"), "Pending",
		 "{'name':'s3-sync','init':true,'restarts':0,'state':'terminated','reason':'Error',"
		 "'exit_code':2}", "{}") "]");
	ck_run(&c, "nccl.init-containers");
	ck_one(&c, HP_TAG_FAIL, "Init container ml/j-worker-0/fetch is CrashLoopBackOff (restarts 3)");
	ck_one(&c, HP_TAG_FAIL, "Init container ml/j-worker-1/s3-sync failed (exit 2, Error)");
	ck_free(&c);
}

static void t_dshm(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c, "'pods':["
		 POD("ml", "j-worker-0", "n2", KF("j", "worker"), "Running", RUNNING("pytorch"),
		     GPU_SPEC(GOOD_ENV, "", "")) ","
		 POD("ml", "j-worker-1", "n2", KF("j", "worker"), "Running", RUNNING("pytorch"),
		     GPU_SPEC(GOOD_ENV, DSHM_MOUNT, DSHM_VOL("64Mi"))) ","
		 POD("ml", "j-worker-2", "n1", KF("j", "worker"), "Running", RUNNING("pytorch"),
		     GPU_SPEC(GOOD_ENV, DSHM_MOUNT, "{'name':'dshm','kind':'emptyDir'}")) ","
		 POD("ml", "j-launcher", "n1", KF("j", "launcher"), "Running", RUNNING("launcher"),
		     "{'containers':[{'name':'launcher','mounts':[]}],'volumes':[]}") "]");
	ck_run(&c, "nccl.dshm");
	f = ck_one(&c, HP_TAG_FAIL, "Pod ml/j-worker-0 has no memory-backed /dev/shm: its containers "
		   "get the 64 MB default");
	T_STREQ(f->section, "NC17.1");
	ck_one(&c, HP_TAG_FAIL, "Pod ml/j-worker-1 limits /dev/shm to 64Mi (sizeLimit)");
	ck_one(&c, HP_TAG_WARN, "Pod ml/j-worker-2 mounts a disk-backed emptyDir at /dev/shm");
	/* The launcher runs no NCCL: not judged. */
	T_EQ(ck_count_msg(&c, HP_TAG_FAIL, "j-launcher"), 0);
	ck_free(&c);

	/* Seed bug A3: the size is measured, not rounded up to a gigabyte (64 MiB read by --exec). */
	load(&c, "'pods':[" GOOD_POD("j-master-0", "n1", "master") "],"
		 "'exec':{'pods':[{'namespace':'ml','pod':'j-master-0','status':'ok','shm_kb':65536}]}");
	ck_run(&c, "nccl.dshm");
	ck_one(&c, HP_TAG_FAIL, "Pod ml/j-master-0 has 64 MiB of /dev/shm in its container (df)");
	ck_free(&c);

	load(&c, "'pods':[" GOOD_POD("j-master-0", "n1", "master") "]");
	ck_run(&c, "nccl.dshm");
	ck_one(&c, HP_TAG_PASS, "Every GPU or EFA pod mounts a memory-backed /dev/shm of at least 1 GiB");
	ck_free(&c);
}

static void t_headless_service(void)
{
	struct ck c;
	const struct hp_finding *f;

	/* Seed bug A20: a headless Service of another job (or namespace) does not count. */
	load(&c, "'pods':[" GOOD_POD("j-master-0", "n1", "master") "],'services':["
		 "{'namespace':'other','name':'j-master-0','headless':true,'selector':"
		 "{'training.kubeflow.org/job-name':'j'}},"
		 "{'namespace':'ml','name':'x-master-0','headless':true,'selector':"
		 "{'training.kubeflow.org/job-name':'x'}}]");
	ck_run(&c, "nccl.headless-service");
	f = ck_one(&c, HP_TAG_FAIL, "MASTER_ADDR j-master-0 of job ml/j names no Service of "
		   "namespace ml: rendezvous cannot resolve it");
	T_STREQ(f->section, "NC12");
	ck_free(&c);

	load(&c, "'pods':[" GOOD_POD("j-master-0", "n1", "master") "],'services':["
		 "{'namespace':'ml','name':'j-master-0','headless':true,'selector':"
		 "{'training.kubeflow.org/job-name':'j','training.kubeflow.org/replica-type':'master'}}]");
	ck_run(&c, "nccl.headless-service");
	ck_one(&c, HP_TAG_PASS, "Headless Service ml/j-master-0 selects pods of job ml/j (MASTER_ADDR "
	       "j-master-0)");
	ck_free(&c);

	/* A Service named like MASTER_ADDR but with a ClusterIP and no headless one. */
	load(&c, "'pods':[" GOOD_POD("j-master-0", "n1", "master") "],'services':["
		 "{'namespace':'ml','name':'j-master-0','headless':false,'selector':"
		 "{'training.kubeflow.org/job-name':'j'}}]");
	ck_run(&c, "nccl.headless-service");
	ck_one(&c, HP_TAG_WARN, "No headless Service selects the pods of job ml/j");
	ck_free(&c);
}

static void t_network_policy(void)
{
	struct ck c;
	const struct hp_finding *f;

	/* Seed bug A19: no policyTypes is an Ingress policy (not allow-all); empty selector = all pods. */
	load(&c, "'pods':[" GOOD_POD("j-master-0", "n1", "master") "],'network_policies':["
		 "{'namespace':'ml','name':'default-deny','pod_selector':{},'policy_types':[],"
		 "'ingress_rules':0,'egress_rules':0},"
		 "{'namespace':'other','name':'deny-egress','pod_selector':{},'policy_types':['Egress'],"
		 "'ingress_rules':0,'egress_rules':0}]");
	ck_run(&c, "nccl.network-policy");
	f = ck_one(&c, HP_TAG_FAIL, "NetworkPolicy ml/default-deny blocks all ingress to the pods of "
		   "job ml/j (it selects them and allows no ingress)");
	T_STREQ(hp_json_str(f->vars, "POLICY"), "default-deny");
	T_STREQ(f->section, "NC22");
	T_EQ(ck_count_msg(&c, HP_TAG_FAIL, "egress"), 0);
	ck_free(&c);

	/* Allow rules limited to one port block NCCL's ephemeral ports. */
	load(&c, "'pods':[" GOOD_POD("j-master-0", "n1", "master") "],'network_policies':["
		 "{'namespace':'ml','name':'rdzv-only','pod_selector':{'matchLabels':"
		 "{'training.kubeflow.org/job-name':'j'}},'policy_types':['Ingress'],'ingress_rules':1,"
		 "'egress_rules':0,'ingress':[{'ports':[{'protocol':'TCP','port':29500}]}]},"
		 "{'namespace':'ml','name':'other-app','pod_selector':{'matchLabels':{'app':'web'}},"
		 "'policy_types':['Ingress','Egress'],'ingress_rules':0,'egress_rules':0}]");
	ck_run(&c, "nccl.network-policy");
	ck_one(&c, HP_TAG_WARN, "NetworkPolicy ml/rdzv-only allows ingress to the pods of job ml/j "
	       "only on ports 29500: NCCL connects on ephemeral ports");
	/* other-app selects app=web: not the job's pods. */
	T_EQ(ck_count(&c, HP_TAG_FAIL), 0);
	ck_free(&c);

	load(&c, "'pods':[" GOOD_POD("j-master-0", "n1", "master") "],'network_policies':[]");
	ck_run(&c, "nccl.network-policy");
	ck_one(&c, HP_TAG_PASS, "No NetworkPolicy selects the pods of job ml/j: all traffic is allowed");
	ck_free(&c);
}

static void t_logs(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c, "'pods':[" GOOD_POD("j-worker-0", "n2", "worker") "],"
		 "'log_reads':[{'namespace':'ml','pod':'j-worker-0','container':'pytorch','previous':false,"
		 "'status':'ok','lines':40},{'namespace':'ml','pod':'j-worker-0','container':'pytorch',"
		 "'previous':true,'status':'ok','lines':12},{'namespace':'ml','pod':'j-other',"
		 "'container':'c','previous':false,'status':'forbidden','error':'pods/log is forbidden'}],"
		 "'log_scan':{'lines':52,'tail':500,'hits':["
		 "{'code':'EFA_TCP_FALLBACK','pattern':'NET/OFI Using TCP','priority':'P1','section':'NC13',"
		 "'source':'ml/j-worker-0/pytorch','count':2,'evidence':['a NET/OFI Using TCP','b']},"
		 "{'code':'EFA_TCP_FALLBACK','pattern':'Using network Socket','priority':'P1',"
		 "'section':'NC13','source':'ml/j-worker-0/pytorch (previous)','count':1,"
		 "'evidence':['c Using network Socket']},"
		 "{'code':'CONN_REFUSED','pattern':'Connection refused','priority':'P2','section':'NC12',"
		 "'source':'ml/j-worker-0/pytorch','count':1,'evidence':['connect failed: Connection "
		 "refused']}],'markers':[{'marker':'NCCL_INIT_COMPLETE','source':'ml/j-worker-0/pytorch',"
		 "'count':1,'evidence':['Init COMPLETE']}]}");
	ck_run(&c, "nccl.logs");
	/* One finding per code and pod, current and previous log together. */
	f = ck_one(&c, HP_TAG_FAIL, "EFA_TCP_FALLBACK in ml/j-worker-0 (pytorch, current and previous "
		   "log): NCCL fell back from EFA to TCP (3 lines)");
	T_STREQ(f->section, "NC13");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->node, "i-0bbbbbbbbbbbbbbb2");
	T_ASSERT(ck_evidence_has(f, "> c Using network Socket"));
	f = ck_one(&c, HP_TAG_WARN, "CONN_REFUSED in ml/j-worker-0 (pytorch)");
	T_EQ(f->prio, HP_P2);
	ck_one(&c, HP_TAG_WARN, "Cannot read the logs of 1 container (forbidden)");
	ck_one(&c, HP_TAG_PASS, "ml/j-worker-0/pytorch shows the job getting through: Init COMPLETE");
	T_EQ(ck_count_msg(&c, HP_TAG_PASS, "No NCCL error pattern"), 0);
	ck_free(&c);

	load(&c, "'pods':[],'log_reads':[{'namespace':'ml','pod':'p','container':'c','previous':false,"
		 "'status':'ok','lines':3}],'log_scan':{'lines':3,'tail':500,'hits':[],'markers':[]}");
	ck_run(&c, "nccl.logs");
	ck_one(&c, HP_TAG_PASS, "No NCCL error pattern in the last 500 lines of 1 container log (3 lines)");
	ck_free(&c);
}


/*
 * CloudWatch on Slurm: NCCL's sockets judged by the stream's instance type
 * (a fallback on p5, expected on m5 without EFA), and a wrapper reported
 * with the cause of the line before it.
 */
static void t_cloudwatch_classes(void)
{
	struct ck c;
	const struct hp_finding *f;

	ck_load(&c,
		"{'nodes':[{'InstanceId':'i-0aaaaaaaaaaaaaaa1','InstanceType':'ml.p5.48xlarge'},"
		"{'InstanceId':'i-0ccccccccccccccc3','InstanceType':'ml.m5.2xlarge'}],"
		"'instance_types':{'p5.48xlarge':{'gpuInfo':{'gpus':[{'count':'8'}]},"
		"'networkInfo':{'efaSupported':'true','efaInfo':{'maximumEfaInterfaces':'32'}}},"
		"'m5.2xlarge':{'networkInfo':{'efaSupported':'false'}}},"
		"'nccl':{'cloudwatch':{'group':'g','window_s':7200,'events':5,'pages':1,"
		"'scan':{'markers':[],'hits':["
		"{'code':'EFA_TCP_FALLBACK','pattern':'NET/Socket : Using [','priority':'P1',"
		"'section':'NC13','source':'i-0aaaaaaaaaaaaaaa1/nccl','count':1,'symptom':true,"
		"'evidence':['NCCL INFO NET/Socket : Using [0]eth0:10.0.227.37<0>']},"
		"{'code':'EFA_TCP_FALLBACK','pattern':'NET/Socket : Using [','priority':'P1',"
		"'section':'NC13','source':'i-0ccccccccccccccc3/nccl','count':1,'symptom':true,"
		"'evidence':['NCCL INFO NET/Socket : Using [0]eth0:10.244.0.233<0>']},"
		"{'code':'NO_ROUTE','pattern':'No route to host','priority':'P1','section':'NC3',"
		"'source':'i-0aaaaaaaaaaaaaaa1/nccl','count':1,'evidence':['socketStartConnect: "
		"Connect to 192.168.19.14<52822> failed : No route to host']},"
		"{'code':'SYSTEM_ERROR','pattern':'unhandled system error','priority':'P1',"
		"'section':'NC23','source':'i-0aaaaaaaaaaaaaaa1/nccl','count':1,'wrapper':true,"
		"'cause':'NO_ROUTE','evidence':['unhandled system error']}]}}}}");
	ck_run(&c, "nccl.cloudwatch");
	f = ck_one(&c, HP_TAG_FAIL, "EFA_TCP_FALLBACK in CloudWatch stream i-0aaaaaaaaaaaaaaa1/nccl");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "NC13");
	f = ck_one(&c, HP_TAG_INFO, "EFA_TCP_FALLBACK in CloudWatch stream i-0ccccccccccccccc3/nccl: "
		   "NCCL uses its socket transport on ml.m5.2xlarge, which has no EFA: expected there");
	T_STREQ(f->node, "i-0ccccccccccccccc3");
	f = ck_one(&c, HP_TAG_FAIL, "NO_ROUTE in CloudWatch stream i-0aaaaaaaaaaaaaaa1/nccl: no route "
		   "to the peer");
	T_CONTAINS(f->message, "; it explains SYSTEM_ERROR ('unhandled system error')");
	T_STREQ(f->section, "NC3");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 2);
	ck_free(&c);
}

static void t_cloudwatch(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c, "'cloudwatch':{'group':'/aws/sagemaker/Clusters/c/abc','window_s':7200,'events':3,"
		 "'pages':1,'truncated':false,'scan':{'hits':[{'code':'WATCHDOG_TIMEOUT',"
		 "'priority':'P1','section':'NC1','source':'i-0aaaaaaaaaaaaaaa1/nccl','count':1,"
		 "'evidence':['Watchdog caught collective operation timeout']}],'markers':[]}}");
	ck_run(&c, "nccl.cloudwatch");
	f = ck_one(&c, HP_TAG_FAIL, "WATCHDOG_TIMEOUT in CloudWatch stream i-0aaaaaaaaaaaaaaa1/nccl: a "
		   "collective ran past the watchdog limit (1 event line in the last 2 h)");
	T_STREQ(f->node, "i-0aaaaaaaaaaaaaaa1");
	T_STREQ(f->section, "NC1");
	ck_free(&c);

	load(&c, "'cloudwatch':{'group':'g','window_s':5400,'events':0,'pages':1,'scan':{'hits':[],"
		 "'markers':[]}}");
	ck_run(&c, "nccl.cloudwatch");
	ck_one(&c, HP_TAG_PASS, "No NCCL error pattern in the 0 matching events of g over the last 90 min");
	ck_free(&c);

	/* A failed search finds nothing: it is no PASS. */
	load(&c, "'cloudwatch':{'group':'g','window_s':7200,'error':{'class':'denied','code':"
		 "'AccessDeniedException','message':'no'}}");
	ck_run(&c, "nccl.cloudwatch");
	ck_one(&c, HP_TAG_SKIP, "CloudWatch search of g failed (denied AccessDeniedException)");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

static void t_env(void)
{
	struct ck c;
	const struct hp_finding *f;

	/* Seed bug A13: the timeout is judged by nodes (2), not ranks; WORLD_SIZE by pods x GPUs. */
	load(&c, "'pods':["
		 POD("ml", "j-master-0", "n1", KF("j", "master"), "Running", RUNNING("pytorch"),
		     GPU_SPEC(GOOD_ENV ",'NCCL_TIMEOUT':'700','WORLD_SIZE':'16'", DSHM_MOUNT,
			      DSHM_VOL("64Gi"))) ","
		 POD("ml", "j-worker-0", "n2", KF("j", "worker"), "Running", RUNNING("pytorch"),
		     GPU_SPEC(GOOD_ENV ",'NCCL_TIMEOUT':'700','WORLD_SIZE':'16'", DSHM_MOUNT,
			      DSHM_VOL("64Gi"))) "]");
	ck_run(&c, "nccl.env");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "NCCL environment of job ml/j as the guide recommends: ml/j-master-0 "
	       "(master), ml/j-worker-0 (worker)");
	ck_free(&c);

	load(&c, "'pods':["
		 POD("ml", "j-master-0", "n1", KF("j", "master"), "Running", RUNNING("pytorch"),
		     GPU_SPEC("'NCCL_DEBUG':'TRACE','NCCL_P2P_DISABLE':'1','FI_PROVIDER':'tcp',"
			      "'NCCL_TIMEOUT':'300','WORLD_SIZE':'12','NCCL_SOCKET_IFNAME':'docker0',"
			      "'MASTER_ADDR':'m','MASTER_PORT':'1'", DSHM_MOUNT, DSHM_VOL("64Gi"))) ","
		 POD("ml", "j-worker-0", "n2", KF("j", "worker"), "Running", RUNNING("pytorch"),
		     GPU_SPEC("'NCCL_DEBUG':'INFO'", DSHM_MOUNT, DSHM_VOL("64Gi"))) "],"
		 "'exec':{'pods':[{'namespace':'ml','pod':'j-worker-0','status':'ok','env':"
		 "{'NCCL_DEBUG':'INFO','FI_PROVIDER':'efa','FI_EFA_USE_DEVICE_RDMA':'1',"
		 "'NCCL_SOCKET_IFNAME':'^lo,docker'}}]}");
	ck_run(&c, "nccl.env");
	f = ck_one(&c, HP_TAG_WARN, "NCCL_DEBUG=TRACE in job ml/j: tracing costs roughly 50-80% of "
		   "throughput; use WARN (master)");
	T_EQ(f->prio, HP_P1);
	f = ck_one(&c, HP_TAG_WARN, "NCCL_DEBUG=INFO in job ml/j: roughly 10-30% of throughput; use "
		   "WARN in production (worker)");
	T_EQ(f->prio, HP_P2);
	ck_one(&c, HP_TAG_WARN, "NCCL_P2P_DISABLE=1 in job ml/j");
	ck_one(&c, HP_TAG_WARN, "FI_PROVIDER=tcp in job ml/j on EFA pods: libfabric will not use EFA");
	ck_one(&c, HP_TAG_WARN, "NCCL_SOCKET_IFNAME=docker0 in job ml/j names interfaces");
	ck_one(&c, HP_TAG_WARN, "WORLD_SIZE=12 in job ml/j matches neither its 2 pods nor its 16 GPUs");
	f = ck_one(&c, HP_TAG_WARN, "NCCL_TIMEOUT=300 in job ml/j is below 610 s (2 nodes x 5 + 600)");
	T_STREQ(f->section, "NC1.2");
	/* The worker's environment came from the container (kubectl exec env): its RDMA is set there. */
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "FI_EFA_USE_DEVICE_RDMA"), 1);
	ck_free(&c);
}

static void t_versions(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c, "'pods':[" GOOD_POD("j-worker-0", "n1", "worker") "," GOOD_POD("j-worker-1", "n2", "worker")
		 "],'exec':{'pods':[{'namespace':'ml','pod':'j-worker-0','status':'ok','torch_nccl':'2.21.5',"
		 "'libnccl_version':'2.21.5'},{'namespace':'ml','pod':'j-worker-1','status':'ok',"
		 "'torch_nccl':'2.18.1','libnccl_version':'2.21.5'}]}");
	ck_run(&c, "nccl.versions");
	f = ck_one(&c, HP_TAG_FAIL, "NCCL version mismatch in job ml/j: torch reports 2 NCCL versions "
		   "across its pods");
	T_ASSERT(ck_evidence_has(f, "2.18.1 on ml/j-worker-1"));
	T_STREQ(f->section, "NC10");
	T_EQ(ck_count_msg(&c, HP_TAG_FAIL, "libnccl"), 0);
	ck_free(&c);

	/* Seed bug A8: every pod answering "unavailable" is a result, not an abort. */
	load(&c, "'pods':[" GOOD_POD("j-worker-0", "n1", "worker") "],'exec':{'pods':[{'namespace':'ml',"
		 "'pod':'j-worker-0','status':'ok','torch_error':'no python3'},{'namespace':'ml','pod':"
		 "'gone','status':'error','error':'container not found'}]}");
	ck_run(&c, "nccl.versions");
	ck_one(&c, HP_TAG_INFO, "No NCCL version found inside the 1 pods read of job ml/j");
	ck_one(&c, HP_TAG_WARN, "Cannot run the read-only commands in ml/gone (error): container not found");
	ck_free(&c);

	load(&c, "'pods':[" GOOD_POD("j-worker-0", "n1", "worker") "]");
	ck_run(&c, "nccl.versions");
	ck_one(&c, HP_TAG_INFO, "NCCL versions inside the containers not read (they need --exec)");
	ck_free(&c);
}

/* An MPIJob's launcher is judged only when it hands NCCL settings on (mpirun -x). */
static void t_env_mpi_launcher(void)
{
	struct ck c;

#define MPI_POD(name, type, spec) \
	"{'namespace':'ml','name':'" name "','node':'n1','phase':'Running','labels':{" \
	KF("m", type) "},'owner':{'kind':'MPIJob','name':'m'},'containers':[" \
	RUNNING("c") "],'spec':" spec "}"
	load(&c, "'pods':["
		 MPI_POD("m-launcher", "launcher", "{'containers':[{'name':'c','env':{'OMPI_ALLOW_RUN_AS_ROOT':'1'},"
			 "'mounts':[]}],'volumes':[]}") ","
		 MPI_POD("m-worker-0", "worker", GPU_SPEC(GOOD_ENV, DSHM_MOUNT, DSHM_VOL("64Gi"))) "]");
	ck_run(&c, "nccl.env");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "NCCL environment of job ml/m as the guide recommends: ml/m-worker-0 "
	       "(worker)");
	ck_free(&c);
	/* A launcher that sets NCCL variables passes them to the ranks: judged. */
	load(&c, "'pods':["
		 MPI_POD("m-launcher", "launcher", "{'containers':[{'name':'c','env':{'NCCL_DEBUG':'INFO'},"
			 "'mounts':[]}],'volumes':[]}") ","
		 MPI_POD("m-worker-0", "worker", GPU_SPEC(GOOD_ENV, DSHM_MOUNT, DSHM_VOL("64Gi"))) "]");
	ck_run(&c, "nccl.env");
	ck_one(&c, HP_TAG_WARN, "NCCL_DEBUG=INFO in job ml/m: roughly 10-30% of throughput; use "
	       "WARN in production (launcher)");
	ck_free(&c);
#undef MPI_POD
}

/* NCCL_SOCKET_IFNAME against the interfaces the NCCL probe found on the pod's node. */
static void t_env_ifname_nodes(void)
{
	static const char *const ifnames[] = { "eth1", "=enp7", "enp", "^lo,docker" };
	static const int fails[] = { 1, 1, 0, 0 };
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(ifnames); i++) {
		struct ck c;
		char *text = xasprintf(
			"{'cluster':{'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:1:cluster/k'}}},"
			"'kube':{'nodes':[{'name':'n1','provider_id':'aws:///us-west-2a/i-0aaaaaaaaaaaaaaa1'}]},"
			"'nodes':[{'InstanceId':'i-0aaaaaaaaaaaaaaa1','InstanceType':'ml.p5.48xlarge'}],"
			"'nccl_probes':{'i-0aaaaaaaaaaaaaaa1':{'state':'probed','stdout':'@@HP@@ BEGIN nccl\\n"
			"probe=nccl\\nuid=0\\n@@HP@@ END nccl 0\\n@@HP@@ BEGIN netif\\ndocker0 1500 down virtual\\n"
			"enp71s0 9001 up device\\n@@HP@@ END netif 0\\n@@HP@@ DONE\\n'}},"
			"'nccl':{'options':{'namespace':'ml','job':'j'},'pods':["
			POD("ml", "j-worker-0", "n1", KF("j", "worker"), "Running", RUNNING("pytorch"),
			    GPU_SPEC("'NCCL_SOCKET_IFNAME':'%s'", DSHM_MOUNT, DSHM_VOL("64Gi"))) "]}}",
			ifnames[i]);

		ck_load(&c, text);
		free(text);
		ck_run(&c, "nccl.env");
		if (fails[i]) {
			const struct hp_finding *f = ck_one(&c, HP_TAG_FAIL, "NCCL_SOCKET_IFNAME=");

			T_CONTAINS(f->message, "of pod ml/j-worker-0 names no interface of its node "
				   "i-0aaaaaaaaaaaaaaa1 (it has docker0, enp71s0)");
			T_STREQ(f->section, "NC3");
			T_EQ(f->prio, HP_P1);
		} else if (ck_count(&c, HP_TAG_FAIL)) {
			T_FAILF("NCCL_SOCKET_IFNAME=%s gave a FAIL", ifnames[i]);
		}
		ck_free(&c);
	}
}

T_MAIN(T(t_job), T(t_efa_plugin), T(t_pod_states), T(t_containers), T(t_init_containers),
       T(t_dshm), T(t_headless_service), T(t_network_policy), T(t_logs), T(t_cloudwatch), T(t_cloudwatch_classes), T(t_env_mpi_launcher), T(t_env_ifname_nodes),
       T(t_env), T(t_versions))
