/*
 * nodes.status and nodes.target: per-state tags and priorities, the totals
 * line, folding from 4 nodes (fold.h), truncation, a denied ListClusterNodes,
 * and the --node target (found, failing, not found).
 */
#include <stdio.h>
#include <string.h>

#include "checks-t.h"
#include "t.h"

static void t_mixed_states(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'nodes':["
		    "{'InstanceId':'i-0000000000000000a','InstanceGroupName':'gpu','InstanceType':"
		    "'ml.p5.48xlarge','InstanceStatus':{'Status':'Running'}},"
		    "{'InstanceId':'i-0000000000000000b','InstanceGroupName':'gpu','InstanceType':"
		    "'ml.p5.48xlarge','InstanceStatus':{'Status':'Failure','Message':'EFA health check "
		    "failed'}},"
		    "{'InstanceId':'i-0000000000000000c','InstanceGroupName':'gpu','InstanceType':"
		    "'ml.p5.48xlarge','InstanceStatus':{'Status':'Pending'}},"
		    "{'InstanceId':'i-0000000000000000d','InstanceGroupName':'cpu','InstanceType':"
		    "'ml.m5.xlarge','InstanceStatus':{'Status':'NotFound'}},"
		    "{'InstanceId':'i-0000000000000000e','InstanceGroupName':'cpu','InstanceType':"
		    "'ml.m5.xlarge','InstanceStatus':{'Status':'Hibernated'}},"
		    "{'InstanceId':'i-0000000000000000f','InstanceGroupName':'cpu','InstanceType':"
		    "'ml.m5.xlarge','InstanceStatus':{'Status':'DeepHealthCheckInProgress'}},"
		    "{'InstanceId':'i-00000000000000010','InstanceGroupName':'cpu','InstanceType':"
		    "'ml.m5.xlarge'}]}");
	ck_run(&c, "nodes.status");
	f = ck_one(&c, HP_TAG_INFO, "Total: 7  Running: 1  Problems: 6");
	T_CONTAINS(f->message, "Failure: 1");
	T_CONTAINS(f->message, "Pending: 1");
	T_CONTAINS(f->message, "Hibernated: 1");
	T_CONTAINS(f->message, "no status: 1");
	T_STREQ(f->section, "");

	f = ck_one(&c, HP_TAG_FAIL, "i-0000000000000000b (gpu / ml.p5.48xlarge) is Failure: EFA "
				    "health check failed");
	T_EQ(f->prio, HP_P1);
	/* § F.1 explains the states; a failed node gets the reboot/replace steps of § F.2. */
	T_STREQ(f->section, "F.1+F.2");
	T_STREQ(f->node, "i-0000000000000000b");

	f = ck_one(&c, HP_TAG_WARN, "i-0000000000000000c (gpu / ml.p5.48xlarge) is Pending");
	T_EQ(f->prio, HP_P2);
	T_STREQ(f->section, "F.1");
	T_STREQ(f->node, "i-0000000000000000c");
	f = ck_one(&c, HP_TAG_WARN, "is DeepHealthCheckInProgress");
	T_EQ(f->prio, HP_P2);
	f = ck_one(&c, HP_TAG_WARN, "i-0000000000000000d (cpu / ml.m5.xlarge) is NotFound");
	T_EQ(f->prio, HP_P1);
	f = ck_one(&c, HP_TAG_WARN, "is Hibernated");
	T_EQ(f->prio, HP_P1);
	f = ck_one(&c, HP_TAG_WARN, "i-00000000000000010 (cpu / ml.m5.xlarge) has no status");
	T_EQ(f->prio, HP_P1);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	T_EQ(c.f.n, 7);
	/* Worst first: the FAIL, then the P1 warnings, then P2. */
	T_EQ(c.f.v[1].tag, HP_TAG_FAIL);
	T_EQ(c.f.v[2].prio, HP_P1);
	T_EQ(c.f.v[6].prio, HP_P2);
	ck_free(&c);
}

static void t_all_running(void)
{
	struct ck c;

	ck_load(&c, "{'nodes':["
		    "{'InstanceId':'i-0000000000000000a','InstanceStatus':{'Status':'Running'}},"
		    "{'InstanceId':'i-0000000000000000b','InstanceStatus':{'Status':'Running'}}]}");
	ck_run(&c, "nodes.status");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "All 2 nodes are Running");
	ck_one(&c, HP_TAG_INFO, "Total: 2  Running: 2  Problems: 0");
	T_EQ(c.f.n, 2);
	ck_free(&c);
}

static void t_no_nodes(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'nodes':[],'nodes_truncated':false}");
	ck_run(&c, "nodes.status");
	f = ck_one(&c, HP_TAG_WARN, "Cluster has no nodes");
	T_EQ(f->prio, HP_P1);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

/* The failed call is reported; no node line is made up from the missing list. */
static void t_denied_list(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'cluster':{'ClusterName':'c','ClusterStatus':'InService','NodeRecovery':"
		    "'Automatic'},'calls':[{'service':'sagemaker','action':'ListClusterNodes',"
		    "'class':'denied','code':'AccessDeniedException','message':'User: arn:aws:iam::1:"
		    "user/x is not authorized to perform: sagemaker:ListClusterNodes','status':400}]}");
	ck_run_all(&c);
	f = ck_one(&c, HP_TAG_FAIL, "Missing IAM permission for sagemaker:ListClusterNodes");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "K.1");
	T_STREQ(f->check->id, "api.nodes");
	T_EQ(f->check->group, HP_GROUP_NODES);
	T_EQ(ck_count_msg(&c, HP_TAG_PASS, "nodes are Running"), 0);
	T_EQ(ck_count_msg(&c, HP_TAG_INFO, "Total:"), 0);
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "no nodes"), 0);
	ck_free(&c);
}

static void many_nodes(struct ck *c, int nfail, int nrun, int truncated)
{
	struct hp_buf b = HP_BUF_INIT(1 << 22);
	int i;

	hp_buf_puts(&b, "{'nodes':[");
	for (i = 0; i < nfail + nrun; i++)
		hp_buf_printf(&b, "%s{'InstanceId':'i-%017x','InstanceGroupName':'gpu','InstanceType':"
			      "'ml.p5.48xlarge','InstanceStatus':{'Status':'%s','Message':'node %d "
			      "failed health checks'}}",
			      i ? "," : "", i + 1, i < nfail ? "Failure" : "Running", i + 1);
	hp_buf_printf(&b, "],'nodes_truncated':%s}", truncated ? "true" : "false");
	ck_load(c, b.buf);
	hp_buf_release(&b);
}

static void t_aggregate_many(void)
{
	const struct hp_finding *f;
	struct ck c;
	char id[32];
	int i;

	many_nodes(&c, 130, 5, 0);
	ck_run(&c, "nodes.status");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 1);
	f = ck_one(&c, HP_TAG_FAIL, "130 nodes are Failure");
	T_EQ(f->prio, HP_P1);
	T_ASSERT(f->node == NULL);
	/* 25 sample lines, then every id. */
	T_CONTAINS(ck_line(f, 0),
		   "i-00000000000000001 (gpu / ml.p5.48xlarge): node 1 failed health checks");
	T_CONTAINS(ck_line(f, 24), "node 25 failed");
	T_ASSERT(!ck_evidence_has(f, "node 26 failed"));
	T_CONTAINS(ck_line(f, 25), "nodes 1-100 of 130:");
	T_CONTAINS(ck_line(f, 26), "nodes 101-130 of 130:");
	T_EQ(ck_evidence_len(f), 27);
	T_EQ((int)f->nnodes, 130);
	for (i = 1; i <= 130; i++) {
		snprintf(id, sizeof(id), "i-%017x", i);
		if (!ck_evidence_has(f, id))
			T_FAILF("id %s missing from the evidence", id);
		T_STREQ(f->nodes[i - 1], id);
	}
	ck_one(&c, HP_TAG_INFO, "Total: 135  Running: 5  Problems: 130");
	ck_free(&c);

	/* The fold rule (fold.h): four nodes in one state make one finding ... */
	many_nodes(&c, 4, 1, 0);
	ck_run(&c, "nodes.status");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 1);
	f = ck_one(&c, HP_TAG_FAIL, "4 nodes are Failure");
	T_EQ((int)f->nnodes, 4);
	T_EQ(ck_evidence_len(f), 4);
	T_CONTAINS(ck_line(f, 3),
		   "i-00000000000000004 (gpu / ml.p5.48xlarge): node 4 failed health checks");
	ck_free(&c);

	/* ... three stay one by one, each naming its node. */
	many_nodes(&c, 3, 1, 0);
	ck_run(&c, "nodes.status");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 3);
	f = ck_one(&c, HP_TAG_FAIL, "i-00000000000000002 (gpu / ml.p5.48xlarge) is Failure: node 2");
	T_STREQ(f->node, "i-00000000000000002");
	ck_free(&c);
}

static void t_truncated(void)
{
	const struct hp_finding *f;
	struct ck c;

	many_nodes(&c, 0, 3, 1);
	ck_run(&c, "nodes.status");
	f = ck_one(&c, HP_TAG_WARN, "Node list stopped at its page cap (3 nodes read)");
	T_EQ(f->prio, HP_P2);
	T_STREQ(f->section, "");
	T_CONTAINS(f->message, "use --node to target specific nodes");
	ck_one(&c, HP_TAG_PASS, "All 3 listed nodes are Running");
	ck_free(&c);
}

static void t_target_missing(void)
{
	const struct hp_finding *f;
	struct ck c;

	/* Another node's details and a node list are present: neither may be used. */
	ck_load(&c, "{'meta':{'node_filter':'i-0123456789abcdef0','cluster_arg':'arg'},"
		    "'cluster':{'ClusterName':'prod'},'node_missing':'i-0123456789abcdef0',"
		    "'node':{'InstanceId':'i-0fffffffffffffff0','InstanceStatus':{'Status':'Failure'}},"
		    "'nodes':[{'InstanceId':'i-0fffffffffffffff0','InstanceStatus':{'Status':'Running'}}]}");
	ck_run(&c, "nodes.target");
	T_EQ(c.f.n, 1);
	f = ck_one(&c, HP_TAG_FAIL, "Node i-0123456789abcdef0 not found in cluster prod \xE2\x80\x94 "
				    "verify --cluster and --node");
	T_EQ(f->prio, HP_P0);
	/* Every FAIL names its section: the one that lists the cluster's node ids. */
	T_STREQ(f->section, "F.1");
	T_STREQ(f->node, "i-0123456789abcdef0");
	T_NOT_CONTAINS(ck_dump(&c), "i-0fffffffffffffff0");
	ck_free(&c);
}

static void t_target_found(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'meta':{'node_filter':'i-0123456789abcdef0'},"
		    "'node':{'InstanceId':'i-0123456789abcdef0','InstanceGroupName':'gpu',"
		    "'InstanceType':'ml.p5.48xlarge','LaunchTime':1735732800.25,"
		    "'InstanceStatus':{'Status':'Failure','Message':'DCGM diagnostics failed'},"
		    "'PrivatePrimaryIp':'10.1.2.3','Placement':{'AvailabilityZone':'us-west-2a',"
		    "'AvailabilityZoneId':'usw2-az1'}}}");
	ck_run(&c, "nodes.target");
	ck_one(&c, HP_TAG_INFO, "Target node i-0123456789abcdef0: status Failure");
	ck_one(&c, HP_TAG_INFO, "Launched: 2025-01-01T12:00:00Z");
	ck_one(&c, HP_TAG_INFO, "Message: DCGM diagnostics failed");
	ck_one(&c, HP_TAG_INFO, "Type: ml.p5.48xlarge");
	ck_one(&c, HP_TAG_INFO, "Group: gpu");
	ck_one(&c, HP_TAG_INFO, "Private IP: 10.1.2.3");
	ck_one(&c, HP_TAG_INFO, "Availability zone: us-west-2a (usw2-az1)");
	f = ck_one(&c, HP_TAG_FAIL, "i-0123456789abcdef0 (gpu / ml.p5.48xlarge) is Failure: DCGM "
				    "diagnostics failed");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "F.1+F.2");
	T_STREQ(f->node, "i-0123456789abcdef0");
	ck_free(&c);

	ck_load(&c, "{'meta':{'node_filter':'i-0123456789abcdef0'},"
		    "'node':{'InstanceId':'i-0123456789abcdef0','InstanceStatus':{'Status':'Running'}}}");
	ck_run(&c, "nodes.target");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "Target node i-0123456789abcdef0 is Running");
	ck_free(&c);

	/* Without --node the check is silent, whatever else is there. */
	ck_load(&c, "{'node':{'InstanceId':'i-0123456789abcdef0','InstanceStatus':{'Status':'Failure'}}}");
	ck_run(&c, "nodes.target");
	T_EQ(c.f.n, 0);
	ck_free(&c);

	/* --node given but DescribeClusterNode failed: the api check speaks, not this one. */
	ck_load(&c, "{'meta':{'node_filter':'i-0123456789abcdef0'}}");
	ck_run(&c, "nodes.target");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

/* A node list naming an id twice (a hostile reply or snapshot): counted once, the ids named. */
static void t_duplicate_ids(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'nodes':["
		    "{'InstanceId':'i-0000000000000000a','InstanceStatus':{'Status':'Failure'}},"
		    "{'InstanceId':'i-0000000000000000b','InstanceStatus':{'Status':'Running'}},"
		    "{'InstanceId':'i-0000000000000000a','InstanceStatus':{'Status':'Failure'}},"
		    "{'InstanceId':'i-0000000000000000a','InstanceStatus':{'Status':'Failure'}}]}");
	hp_snap_nodes_finish(&c.snap, HP_MAX_NODES);
	ck_run(&c, "nodes.status");
	ck_one(&c, HP_TAG_INFO, "Total: 2  Running: 1  Problems: 1");
	f = ck_one(&c, HP_TAG_WARN, "The node list named 1 instance id more than once "
		   "(i-0000000000000000a); each node is counted and reported once");
	T_EQ(f->prio, HP_P2);
	ck_free(&c);
}


/* Nodes per group against CurrentCount: a cut group and a short one are named, a whole one is not. */
static void t_group_counts(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'cluster':{'InstanceGroups':[{'InstanceGroupName':'gpu','CurrentCount':2},"
		    "{'InstanceGroupName':'gpu-spare','CurrentCount':3},{'InstanceGroupName':'login',"
		    "'CurrentCount':1},{'InstanceGroupName':'new'}]},'nodes':["
		    "{'InstanceId':'i-1','InstanceGroupName':'gpu','InstanceStatus':{'Status':'Running'}},"
		    "{'InstanceId':'i-2','InstanceGroupName':'gpu','InstanceStatus':{'Status':'Running'}},"
		    "{'InstanceId':'i-3','InstanceGroupName':'gpu-spare','InstanceStatus':{'Status':'Running'}},"
		    "{'InstanceId':'i-4','InstanceGroupName':'login','InstanceStatus':{'Status':'Running'}},"
		    "{'InstanceId':'i-5','InstanceGroupName':'login','InstanceStatus':{'Status':'Running'}}],"
		    "'nodes_truncated':false,'nodes_partial':['gpu-spare']}");
	ck_run(&c, "nodes.status");
	f = ck_one(&c, HP_TAG_WARN, "Node list of instance group gpu-spare is incomplete: 1 of 3 nodes read");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "F.1");
	f = ck_one(&c, HP_TAG_WARN, "Instance group login: 2 nodes listed, CurrentCount 1");
	T_EQ(f->prio, HP_P2);
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "group gpu:"), 0);
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "group gpu "), 0);
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "new"), 0);
	T_EQ(ck_count(&c, HP_TAG_WARN), 2);
	ck_free(&c);

	/* Under the page cap only the cut groups are named. */
	ck_load(&c, "{'cluster':{'InstanceGroups':[{'InstanceGroupName':'gpu','CurrentCount':9}]},"
		    "'nodes':[{'InstanceId':'i-1','InstanceGroupName':'gpu'}],'nodes_truncated':true,"
		    "'nodes_page_cap':1}");
	ck_run(&c, "nodes.status");
	ck_one(&c, HP_TAG_WARN, "Node list stopped at 1 pages (1 nodes read)");
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "CurrentCount"), 0);
	ck_free(&c);
}


T_MAIN(T(t_duplicate_ids), T(t_mixed_states), T(t_group_counts), T(t_all_running), T(t_no_nodes), T(t_denied_list),
       T(t_aggregate_many), T(t_truncated), T(t_target_missing), T(t_target_found))
