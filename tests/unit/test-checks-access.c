/*
 * cluster.vpc-config and ssm.targets over hand-built snapshots.
 */
#include <string.h>

#include "checks-t.h"
#include "t.h"

static const char arn[] = "'ClusterArn':'arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456'";

static void t_vpc_config_listed_with_overrides(void)
{
	struct ck c;

	ck_load(&c, "{'cluster':{'ClusterName':'c',"
		    "'VpcConfig':{'SecurityGroupIds':['sg-1','sg-2'],'Subnets':['subnet-a']},"
		    "'InstanceGroups':[{'InstanceGroupName':'g1'},{'InstanceGroupName':'g2',"
		    "'OverrideVpcConfig':{'SecurityGroupIds':['sg-9'],'Subnets':['subnet-z']}}]}}");
	ck_run(&c, "cluster.vpc-config");
	T_EQ(c.f.n, 2);
	ck_one(&c, HP_TAG_INFO, "Cluster VpcConfig: security groups sg-1, sg-2; subnets subnet-a");
	ck_one(&c, HP_TAG_INFO, "Instance group 'g2' OverrideVpcConfig: security groups sg-9; subnets subnet-z");
	ck_free(&c);
}

static void t_no_vpc_config_warns(void)
{
	struct ck c;
	const struct hp_finding *f;

	ck_load(&c, "{'cluster':{'ClusterName':'c','InstanceGroups':[{'InstanceGroupName':'g1'}]}}");
	ck_run(&c, "cluster.vpc-config");
	T_EQ(c.f.n, 1);
	f = ck_one(&c, HP_TAG_WARN, "No VpcConfig");
	T_EQ(f->prio, HP_P2);
	T_STREQ(f->section, "B");
	ck_free(&c);
	ck_load(&c, "{}");
	ck_run(&c, "cluster.vpc-config");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_ssm_targets_examples(void)
{
	struct ck c;
	const struct hp_finding *f;
	char json[2048];

	snprintf(json, sizeof(json), "{'cluster':{%s},'nodes':["
		 "{'InstanceId':'i-1','InstanceGroupName':'w','InstanceStatus':{'Status':'Failure'}},"
		 "{'InstanceId':'i-2','InstanceGroupName':'w','InstanceStatus':{'Status':'Running'}},"
		 "{'InstanceId':'i-3','InstanceGroupName':'w','InstanceStatus':{'Status':'Running'}},"
		 "{'InstanceId':'i-4','InstanceGroupName':'c','InstanceStatus':{'Status':'Running'}},"
		 "{'InstanceId':'i-5','InstanceGroupName':'c','InstanceStatus':{'Status':'Running'}}]}", arn);
	ck_load(&c, json);
	ck_run(&c, "ssm.targets");
	f = ck_one(&c, HP_TAG_INFO, "SSM targets of Running nodes");
	T_EQ(ck_evidence_len(f), 3);
	T_ASSERT(ck_evidence_has(f, "sagemaker-cluster:abcdef123456_w-i-2"));
	T_ASSERT(!ck_evidence_has(f, "i-1"));
	ck_one(&c, HP_TAG_INFO, "4 Running nodes reachable by SSM target (cluster id abcdef123456)");
	ck_free(&c);
}

static void t_ssm_no_running_nodes_warns(void)
{
	struct ck c;
	const struct hp_finding *f;
	char json[1024];

	snprintf(json, sizeof(json), "{'cluster':{%s},'nodes':["
		 "{'InstanceId':'i-1','InstanceGroupName':'w','InstanceStatus':{'Status':'Pending'}}]}", arn);
	ck_load(&c, json);
	ck_run(&c, "ssm.targets");
	T_EQ(c.f.n, 1);
	f = ck_one(&c, HP_TAG_WARN, "No Running nodes");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "K");
	ck_free(&c);
	/* Nodes not collected: silent, never a PASS or a WARN. */
	snprintf(json, sizeof(json), "{'cluster':{%s}}", arn);
	ck_load(&c, json);
	ck_run(&c, "ssm.targets");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

T_MAIN(T(t_vpc_config_listed_with_overrides), T(t_no_vpc_config_warns), T(t_ssm_targets_examples),
       T(t_ssm_no_running_nodes_warns))
