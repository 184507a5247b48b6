/*
 * cluster.identity, cluster.status, cluster.node-recovery,
 * cluster.instance-groups and cluster.threads-per-core over hand-built
 * DescribeCluster replies.
 */
#include <string.h>

#include "checks-t.h"
#include "t.h"

static void t_identity_eks(void)
{
	struct ck c;

	ck_load(&c, "{'identity':{'Account':'123456789012','Arn':'arn:aws:iam::123456789012:user/bob'},"
		    "'cluster':{'ClusterName':'c1','ClusterStatus':'InService',"
		    "'ClusterArn':'arn:aws:sagemaker:us-east-1:123456789012:cluster/0123456789ab',"
		    "'NodeRecovery':'Automatic','NodeProvisioningMode':'Continuous',"
		    "'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-east-1:123456789012:cluster/k'}}}}");
	ck_run(&c, "cluster.identity");
	T_EQ(ck_count(&c, HP_TAG_INFO), c.f.n);
	ck_one(&c, HP_TAG_INFO, "Caller: arn:aws:iam::123456789012:user/bob (account 123456789012)");
	ck_one(&c, HP_TAG_INFO, "ARN: arn:aws:sagemaker:us-east-1:123456789012:cluster/0123456789ab");
	ck_one(&c, HP_TAG_INFO, "Status: InService");
	ck_one(&c, HP_TAG_INFO, "Orchestrator: EKS (arn:aws:eks:us-east-1:123456789012:cluster/k)");
	ck_one(&c, HP_TAG_INFO, "NodeRecovery: Automatic");
	ck_one(&c, HP_TAG_INFO, "Cluster id: 0123456789ab");
	ck_one(&c, HP_TAG_INFO, "NodeProvisioningMode: Continuous");
	T_STREQ(c.f.v[0].section, "");
	ck_free(&c);
}

static void t_identity_slurm_legacy(void)
{
	struct ck c;

	ck_load(&c, "{'cluster':{'ClusterName':'s1','ClusterStatus':'Creating',"
		    "'ClusterArn':'arn:aws:sagemaker:us-east-1:1:cluster/BAD'}}");
	ck_run(&c, "cluster.identity");
	ck_one(&c, HP_TAG_INFO, "Orchestrator: Slurm");
	ck_one(&c, HP_TAG_INFO, "NodeRecovery: (absent)");
	ck_one(&c, HP_TAG_INFO, "Cluster id: unknown");
	ck_one(&c, HP_TAG_INFO, "NodeProvisioningMode: legacy (not Continuous)");
	T_EQ(ck_count_msg(&c, HP_TAG_INFO, "Caller"), 0);
	ck_free(&c);
}

static void t_status_table(void)
{
	static const struct {
		const char *status;
		enum hp_tag tag;
		enum hp_prio prio;
		const char *msg;
	} cases[] = {
		{ "InService", HP_TAG_PASS, HP_PNONE, "Cluster status is InService" },
		{ "Failed", HP_TAG_FAIL, HP_P0, "Cluster status is Failed" },
		{ "RollingBack", HP_TAG_FAIL, HP_P0, "Cluster status is RollingBack" },
		{ "Creating", HP_TAG_WARN, HP_P2, "Cluster is Creating; node and event data may be changing" },
		{ "Updating", HP_TAG_WARN, HP_P2, "Cluster is Updating;" },
		{ "SystemUpdating", HP_TAG_WARN, HP_P2, "Cluster is SystemUpdating;" },
		{ "Deleting", HP_TAG_WARN, HP_P2, "Cluster is Deleting;" },
		{ "Hibernating", HP_TAG_WARN, HP_P2, "Cluster status 'Hibernating' is not a known status" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char json[256];
		const struct hp_finding *f;
		struct ck c;

		snprintf(json, sizeof(json),
			 "{'cluster':{'ClusterStatus':'%s','FailureMessage':'Lifecycle script on_create.sh "
			 "returned 1'}}",
			 cases[i].status);
		ck_load(&c, json);
		ck_run(&c, "cluster.status");
		T_EQ(c.f.n, 1);
		f = ck_one(&c, cases[i].tag, cases[i].msg);
		T_EQ(f->prio, cases[i].prio);
		T_STREQ(f->section, "J.1");
		if (cases[i].tag == HP_TAG_FAIL)
			T_ASSERT(ck_evidence_has(f, "Lifecycle script on_create.sh returned 1"));
		else
			T_ASSERT(f->evidence == NULL);
		ck_free(&c);
	}
}

static void t_status_absent(void)
{
	struct ck c;

	ck_load(&c, "{'cluster':{'ClusterName':'x'}}");
	ck_run(&c, "cluster.status");
	T_EQ(c.f.n, 0);
	ck_free(&c);
	ck_load(&c, "{'meta':{'cluster_arg':'x'}}");
	ck_run(&c, "cluster.status");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_failed_without_message(void)
{
	struct ck c;
	const struct hp_finding *f;

	ck_load(&c, "{'cluster':{'ClusterStatus':'Failed'}}");
	ck_run(&c, "cluster.status");
	f = ck_one(&c, HP_TAG_FAIL, "Cluster status is Failed");
	T_ASSERT(ck_evidence_has(f, "no FailureMessage"));
	ck_free(&c);
}

static void t_node_recovery(void)
{
	struct ck c;
	const struct hp_finding *f;

	ck_load(&c, "{'cluster':{'NodeRecovery':'Automatic'}}");
	ck_run(&c, "cluster.node-recovery");
	T_EQ(c.f.n, 1);
	ck_one(&c, HP_TAG_PASS, "NodeRecovery is Automatic");
	ck_free(&c);

	ck_load(&c, "{'cluster':{'NodeRecovery':'None'}}");
	ck_run(&c, "cluster.node-recovery");
	T_EQ(c.f.n, 1);
	f = ck_one(&c, HP_TAG_WARN, "NodeRecovery is 'None' \xE2\x80\x94 automatic node replacement is off");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "F");
	ck_free(&c);

	ck_load(&c, "{'cluster':{'ClusterStatus':'InService'}}");
	ck_run(&c, "cluster.node-recovery");
	f = ck_one(&c, HP_TAG_WARN, "NodeRecovery is 'absent'");
	T_EQ(f->prio, HP_P1);
	ck_free(&c);

	/* No DescribeCluster at all: nothing to judge. */
	ck_load(&c, "{'nodes':[]}");
	ck_run(&c, "cluster.node-recovery");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_instance_groups(void)
{
	struct ck c;
	const struct hp_finding *f;

	ck_load(&c, "{'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge','CurrentCount':2,"
		    "'TargetCount':4,'Status':'InService'},"
		    "{'InstanceGroupName':'ctrl','InstanceType':'ml.m5.xlarge','CurrentCount':1,"
		    "'TargetCount':1,'Status':'InService'},"
		    "{'InstanceGroupName':'login','InstanceType':'ml.m5.xlarge','CurrentCount':1,"
		    "'TargetCount':1,'Status':'InService'},"
		    "{'InstanceGroupName':'bad','InstanceType':'ml.g5.xlarge','CurrentCount':3,"
		    "'TargetCount':3,'Status':'Degraded'}]}}");
	ck_run(&c, "cluster.instance-groups");
	f = ck_one(&c, HP_TAG_FAIL, "Instance group 'gpu' has 2 of 4 nodes (ml.p5.48xlarge)");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "C");
	f = ck_one(&c, HP_TAG_FAIL, "Instance group 'bad' status is Degraded");
	T_EQ(f->prio, HP_P1);
	/* One PASS line for all groups at target, and not the degraded one. */
	T_EQ(ck_count(&c, HP_TAG_PASS), 1);
	f = ck_one(&c, HP_TAG_PASS, "2 instance groups at target size: ctrl (1), login (1)");
	T_NOT_CONTAINS(f->message, "bad");
	T_EQ(c.f.n, 3);
	ck_free(&c);
}

static void t_instance_groups_failed_and_unknown(void)
{
	struct ck c;

	ck_load(&c, "{'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'a','InstanceType':'ml.p4d.24xlarge','CurrentCount':0,"
		    "'TargetCount':2,'Status':'Failed'},"
		    "{'InstanceGroupName':'b','InstanceType':'ml.p4d.24xlarge','Status':'Creating'}]}}");
	ck_run(&c, "cluster.instance-groups");
	ck_one(&c, HP_TAG_FAIL, "Instance group 'a' status is Failed");
	ck_one(&c, HP_TAG_FAIL, "Instance group 'a' has 0 of 2 nodes");
	ck_one(&c, HP_TAG_INFO, "Instance group 'b' reports no CurrentCount/TargetCount");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	T_EQ(c.f.n, 3);
	ck_free(&c);

	ck_load(&c, "{'cluster':{'ClusterName':'x'}}");
	ck_run(&c, "cluster.instance-groups");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_threads_per_core_p5(void)
{
	struct ck c;
	const struct hp_finding *f;

	/* EC2 XML gives numbers as strings. */
	ck_load(&c, "{'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge','ThreadsPerCore':1},"
		    "{'InstanceGroupName':'gpu2','InstanceType':'ml.p5.48xlarge','ThreadsPerCore':2}]},"
		    "'instance_types':{'p5.48xlarge':{'vCpuInfo':{'defaultVCpus':'192',"
		    "'defaultCores':'96','defaultThreadsPerCore':'2'}}}}");
	ck_run(&c, "cluster.threads-per-core");
	T_EQ(c.f.n, 1);
	f = ck_one(&c, HP_TAG_WARN,
		   "Instance group 'gpu' runs ml.p5.48xlarge with ThreadsPerCore=1: nodes show 96 "
		   "vCPUs instead of 192");
	T_EQ(f->prio, HP_P2);
	T_STREQ(f->section, "J.2");
	ck_free(&c);
}

static void t_threads_per_core_unjudged(void)
{
	struct ck c;

	/* No EC2 facts for the type: say so, never PASS. */
	ck_load(&c, "{'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge','ThreadsPerCore':'1'}]},"
		    "'instance_types':{'g5.xlarge':{'vCpuInfo':{'defaultThreadsPerCore':'2'}}}}");
	ck_run(&c, "cluster.threads-per-core");
	T_EQ(c.f.n, 1);
	ck_one(&c, HP_TAG_INFO, "could not be judged");
	ck_free(&c);

	ck_load(&c, "{'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge','ThreadsPerCore':1}]}}");
	ck_run(&c, "cluster.threads-per-core");
	T_EQ(c.f.n, 1);
	ck_one(&c, HP_TAG_INFO, "could not be judged");
	ck_free(&c);

	/* A type whose default is one thread per core is fine at 1. */
	ck_load(&c, "{'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'trn','InstanceType':'ml.trn1.32xlarge','ThreadsPerCore':1}]},"
		    "'instance_types':{'trn1.32xlarge':{'vCpuInfo':{'defaultVCpus':'128',"
		    "'defaultThreadsPerCore':'1'}}}}");
	ck_run(&c, "cluster.threads-per-core");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_threads_per_core_type_details(void)
{
	struct ck c;

	/* Flexible groups list each type with its own ThreadsPerCore. */
	ck_load(&c, "{'cluster':{'InstanceGroups':[{'InstanceGroupName':'flex','ThreadsPerCore':2,"
		    "'InstanceTypeDetails':[{'InstanceType':'ml.p5.48xlarge','ThreadsPerCore':1},"
		    "{'InstanceType':'ml.p4d.24xlarge'}]}]},"
		    "'instance_types':{'p5.48xlarge':{'vCpuInfo':{'defaultVCpus':192,"
		    "'defaultThreadsPerCore':2}},'p4d.24xlarge':{'vCpuInfo':{'defaultVCpus':96,"
		    "'defaultThreadsPerCore':2}}}}");
	ck_run(&c, "cluster.threads-per-core");
	T_EQ(c.f.n, 1);
	ck_one(&c, HP_TAG_WARN, "'flex' runs ml.p5.48xlarge with ThreadsPerCore=1: nodes show 96");
	ck_free(&c);
}

T_MAIN(T(t_identity_eks), T(t_identity_slurm_legacy), T(t_status_table), T(t_status_absent),
       T(t_failed_without_message), T(t_node_recovery), T(t_instance_groups),
       T(t_instance_groups_failed_and_unknown), T(t_threads_per_core_p5),
       T(t_threads_per_core_unjudged), T(t_threads_per_core_type_details))
