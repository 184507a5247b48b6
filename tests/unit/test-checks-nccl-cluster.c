/*
 * nccl.applicable and nccl.probe-nodes over hand-built snapshots: accelerated
 * groups from DescribeInstanceTypes facts (never the type's name), a
 * flexible group, missing facts, the --orchestrator mismatch, the nodes
 * chosen for the probes and the ones the NCCL probe could not reach; and
 * nothing at all on a triage snapshot (no "nccl" key).
 */
#include <string.h>

#include "checks-t.h"
#include "t.h"

#define TYPES                                                                                    \
	"'instance_types':{'p5.48xlarge':{'gpuInfo':{'gpus':[{'count':'8'}]},"                   \
	"'networkInfo':{'efaSupported':'true','efaInfo':{'maximumEfaInterfaces':'32'}}},"        \
	"'m5.2xlarge':{'networkInfo':{'efaSupported':'false'}},"                                 \
	"'g5.48xlarge':{'gpuInfo':{'gpus':[{'count':'8'}]},'networkInfo':{'efaSupported':'true',"\
	"'efaInfo':{'maximumEfaInterfaces':'1'}}}}"

static void t_applicable_from_type_facts(void)
{
	struct ck c;
	const struct hp_finding *f;

	ck_load(&c, "{'nccl':{},'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge'},"
		    "{'InstanceGroupName':'sys','InstanceType':'ml.m5.2xlarge'}]}," TYPES "}");
	ck_run(&c, "nccl.applicable");
	f = ck_one(&c, HP_TAG_PASS, "NCCL applies: 1 of 2 instance groups are accelerated: gpu "
		   "(ml.p5.48xlarge: 8 GPUs, 32 EFA interfaces)");
	T_EQ(f->prio, HP_PNONE);
	T_EQ(c.f.n, 1);
	ck_free(&c);
}

static void t_applicable_not_by_name(void)
{
	struct ck c;

	/* A p5 name whose facts say no GPU and no EFA is not accelerated. */
	ck_load(&c, "{'nccl':{},'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'p5-lookalike','InstanceType':'ml.p5.48xlarge'}]},"
		    "'instance_types':{'p5.48xlarge':{'networkInfo':{'efaSupported':'false'}}}}");
	ck_run(&c, "nccl.applicable");
	ck_one(&c, HP_TAG_INFO, "NCCL does not apply: none of the 1 instance groups has GPUs or EFA");
	T_EQ(ck_count(&c, HP_TAG_WARN) + ck_count(&c, HP_TAG_FAIL), 0);
	ck_free(&c);

	/* A type no regex of the original tool knew (g5.48xlarge) is judged by its facts. */
	ck_load(&c, "{'nccl':{},'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'flex','InstanceTypeDetails':[{'InstanceType':'ml.m5.2xlarge'},"
		    "{'InstanceType':'ml.g5.48xlarge'}]}]}," TYPES "}");
	ck_run(&c, "nccl.applicable");
	ck_one(&c, HP_TAG_PASS, "flex (ml.g5.48xlarge: 8 GPUs, 1 EFA interfaces)");
	ck_free(&c);
}

static void t_applicable_unknown_and_forced(void)
{
	struct ck c;
	const struct hp_finding *f;

	ck_load(&c, "{'nccl':{},'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'gpu','InstanceType':'ml.p6-b200.48xlarge'}]}," TYPES "}");
	ck_run(&c, "nccl.applicable");
	ck_one(&c, HP_TAG_SKIP, "Cannot tell whether NCCL applies: no DescribeInstanceTypes facts "
	       "for gpu (ml.p6-b200.48xlarge)");
	ck_free(&c);

	ck_load(&c, "{'nccl':{},'nccl_run':{'orchestrator_arg':'Slurm'},'cluster':{"
		    "'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:1:cluster/k'}},"
		    "'InstanceGroups':[{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge'}]},"
		    TYPES "}");
	ck_run(&c, "nccl.applicable");
	f = ck_one(&c, HP_TAG_WARN, "--orchestrator slurm was given, but the cluster is orchestrated "
		   "by EKS (DescribeCluster): its checks follow the cluster");
	T_EQ(f->prio, HP_P2);
	T_STREQ(f->section, "");
	ck_free(&c);

	/* The right orchestrator says nothing more. */
	ck_load(&c, "{'nccl':{},'nccl_run':{'orchestrator_arg':'Slurm'},'cluster':{"
		    "'InstanceGroups':[{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge'}]},"
		    TYPES "}");
	ck_run(&c, "nccl.applicable");
	T_EQ(ck_count(&c, HP_TAG_WARN), 0);
	ck_free(&c);
}

static void t_probe_nodes(void)
{
	struct ck c;
	const struct hp_finding *f;

	ck_load(&c, "{'nccl':{},'nccl_run':{'probe_nodes':{'selection':'job','requested':3,'chosen':["
		    "{'id':'i-0aaaaaaaaaaaaaaa1','group':'gpu','type':'ml.p5.48xlarge','why':'runs pod ml/a'},"
		    "{'id':'i-0bbbbbbbbbbbbbbb2','group':'gpu','type':'ml.p5.48xlarge','why':'runs pod ml/b'},"
		    "{'id':'i-0ccccccccccccccc3','group':'gpu','type':'ml.p5.48xlarge','why':'runs pod ml/c'}]}},"
		    "'probes':{'i-0aaaaaaaaaaaaaaa1':{'state':'probed'},'i-0bbbbbbbbbbbbbbb2':{'state':'probed'},"
		    "'i-0ccccccccccccccc3':{'state':'unreachable','reason':'TargetNotConnected'}},"
		    "'nccl_probes':{'i-0aaaaaaaaaaaaaaa1':{'state':'probed'},"
		    "'i-0bbbbbbbbbbbbbbb2':{'state':'unreachable','reason':'probe timed out after 180 s'},"
		    "'i-0ccccccccccccccc3':{'state':'unreachable','reason':'TargetNotConnected'}}}");
	ck_run(&c, "nccl.probe-nodes");
	f = ck_one(&c, HP_TAG_INFO, "3 nodes chosen for the NCCL probe (the nodes of the job's pods)");
	T_ASSERT(ck_evidence_has(f, "i-0aaaaaaaaaaaaaaa1 (gpu, ml.p5.48xlarge): runs pod ml/a"));
	f = ck_one(&c, HP_TAG_WARN, "Cannot run the NCCL probe on node i-0bbbbbbbbbbbbbbb2 via SSM: "
		   "probe timed out after 180 s");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->node, "i-0bbbbbbbbbbbbbbb2");
	/* The node the node probe could not reach either is ssm.reachability's to report. */
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "i-0ccccccccccccccc3"), 0);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	ck_load(&c, "{'nccl':{},'nccl_run':{'probe_nodes':{'selection':'sample','requested':'all',"
		    "'note':'the job\\u0027s pods could not be read; sampled instead','chosen':["
		    "{'id':'i-0aaaaaaaaaaaaaaa1','why':'accelerated group gpu'}]}},"
		    "'nccl_probes':{'i-0aaaaaaaaaaaaaaa1':{'state':'probed'}}}");
	ck_run(&c, "nccl.probe-nodes");
	ck_one(&c, HP_TAG_INFO, "1 node chosen for the NCCL probe (sample, accelerated groups first, "
	       "every node)");
	ck_one(&c, HP_TAG_WARN, "--job was given, but the job's pods could not be read");
	ck_one(&c, HP_TAG_PASS, "The NCCL probe ran on all 1 chosen node");
	ck_free(&c);

	ck_load(&c, "{'nccl_run':{'probe_nodes':{'selection':'sample','requested':3,'chosen':[]}},"
		    "'nccl_probes_meta':{'note':'no node to probe'}}");
	ck_run(&c, "nccl.probe-nodes");
	ck_one(&c, HP_TAG_SKIP, "No node to run the NCCL probe on");
	ck_free(&c);

	ck_load(&c, "{'nccl_run':{'probe_nodes':{'selection':'node','requested':3,'chosen':["
		    "{'id':'i-0aaaaaaaaaaaaaaa1','why':'--node'}]}},"
		    "'nccl_probes_meta':{'note':'--no-probe was given'}}");
	ck_run(&c, "nccl.probe-nodes");
	ck_one(&c, HP_TAG_SKIP, "The NCCL probe did not run: --no-probe was given");
	ck_free(&c);
}

/* A triage snapshot has no "nccl" key: the NCCL checks say nothing there. */
static void t_silent_on_triage(void)
{
	struct ck c;
	size_t i;

	ck_load(&c, "{'cluster':{'ClusterName':'c','ClusterStatus':'InService','InstanceGroups':["
		    "{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge'}]}," TYPES ","
		    "'probes':{'i-0aaaaaaaaaaaaaaa1':{'state':'probed','stdout':''}}}");
	ck_run_all(&c);
	for (i = 0; i < c.f.n; i++)
		if (c.f.v[i].check && !strncmp(c.f.v[i].check->id, "nccl.", 5))
			T_FAILF("%s spoke on a triage snapshot: %s", c.f.v[i].check->id,
				c.f.v[i].message);
	ck_free(&c);
}

T_MAIN(T(t_applicable_from_type_facts), T(t_applicable_not_by_name),
       T(t_applicable_unknown_and_forced), T(t_probe_nodes), T(t_silent_on_triage))
