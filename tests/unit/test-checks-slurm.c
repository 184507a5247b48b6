/*
 * The Slurm checks on snapshots carrying a controller probe: slurmctld and
 * munge up or down, node states and reasons (Action:Reboot/Replace exact,
 * almost, unexpected reboot, plain down) joined to instance ids, stuck
 * jobs by age, a probe that did not run or was cut off, and the full node
 * name table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks-t.h"
#include "hp/json.h"
#include "t.h"

#define CTL "i-0c0c0c0c0c0c0c0c0"
#define W1 "i-0c0c0c0c0c0c0c0c1"
#define W2 "i-0c0c0c0c0c0c0c0c2"

#define CLUSTER                                                                                \
	"'meta':{'region':'us-west-2'},"                                                       \
	"'cluster':{'ClusterName':'s','ClusterArn':'arn:aws:sagemaker:us-west-2:1:cluster/abcdefabcdef'," \
	"'Orchestrator':{'Slurm':{}},'InstanceGroups':[{'InstanceGroupName':'controller',"     \
	"'SlurmConfig':{'NodeType':'Controller'}},{'InstanceGroupName':'workers','SlurmConfig':" \
	"{'NodeType':'Compute'}}]},"                                                           \
	"'nodes':[{'InstanceId':'" CTL "','InstanceGroupName':'controller','InstanceType':'ml.m5.4xlarge'," \
	"'PrivateDnsHostname':'ip-10-1-0-5.us-west-2.compute.internal','InstanceStatus':{'Status':'Running'}}," \
	"{'InstanceId':'" W2 "','InstanceGroupName':'workers','InstanceType':'ml.p5.48xlarge',"  \
	"'PrivateDnsHostname':'ip-10-1-2-4.us-west-2.compute.internal','InstanceStatus':{'Status':'Running'}}," \
	"{'InstanceId':'" W1 "','InstanceGroupName':'workers','InstanceType':'ml.p5.48xlarge',"  \
	"'PrivateDnsHostname':'ip-10-1-2-3.us-west-2.compute.internal','InstanceStatus':{'Status':'Running'}}]"

#define META "@@HP@@ BEGIN meta\nnow_epoch=1735732800\nnow_local=2025-01-01T12:00:00\nhost=ip-10-1-0-5\n@@HP@@ END meta 0\n"
#define PING_UP "@@HP@@ BEGIN ping\nSlurmctld(primary) at ip-10-1-0-5 is UP\n@@HP@@ END ping 0\n"
#define SERVICES(munge)                                                                        \
	"@@HP@@ BEGIN services\nId=munge.service\nLoadState=loaded\nActiveState=" munge          \
	"\nSubState=running\n\nId=slurmctld.service\nLoadState=loaded\nActiveState=active\n"     \
	"SubState=running\n@@HP@@ END services 0\n"
#define SINFO_OK "@@HP@@ BEGIN sinfo\nip-10-1-2-3|idle|none\nip-10-1-2-4|allocated|none\n@@HP@@ END sinfo 0\n"
#define SQUEUE_NONE "@@HP@@ BEGIN squeue\n@@HP@@ END squeue 0\n"
#define DONE "@@HP@@ DONE\n"

/* The cluster with a "slurm" key whose probe ran with this stdout (NULL: not probed). */
static void load(struct ck *c, const char *state, const char *out)
{
	cJSON *slurm, *probe;

	ck_load(c, "{" CLUSTER "}");
	slurm = cJSON_CreateObject();
	cJSON_AddStringToObject(slurm, "controller", CTL);
	cJSON_AddStringToObject(slurm, "group", "controller");
	cJSON_AddStringToObject(slurm, "how", "SlurmConfig");
	if (state) {
		probe = cJSON_AddObjectToObject(slurm, "probe");
		cJSON_AddStringToObject(probe, "state", state);
		if (out)
			cJSON_AddStringToObject(probe, "stdout", out);
		cJSON_AddStringToObject(probe, "reason", "TargetNotConnected");
	}
	hp_snapshot_set(&c->snap, "slurm", slurm);
}

static const char *const slurm_ids[] = {
	"slurm.controller", "slurm.slurmctld", "slurm.munge", "slurm.nodes", "slurm.jobs",
};

/* Run the probe-based checks into one findings list. */
static void run_slurm(struct ck *c)
{
	struct hp_findings all = { 0 };
	size_t i, j;

	for (i = 0; i < sizeof(slurm_ids) / sizeof(slurm_ids[0]); i++) {
		ck_run(c, slurm_ids[i]);
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

static void t_healthy(void)
{
	struct ck c;

	load(&c, "probed", META PING_UP SINFO_OK SQUEUE_NONE SERVICES("active") DONE);
	run_slurm(&c);
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_INFO, "Slurm controller: ip-10-1-0-5 on " CTL " (controller, from "
				"SlurmConfig NodeType Controller)");
	ck_one(&c, HP_TAG_PASS, "slurmctld responding (Slurmctld(primary) at ip-10-1-0-5 is UP)");
	ck_one(&c, HP_TAG_PASS, "munge active on the Slurm controller");
	ck_one(&c, HP_TAG_PASS, "All 2 Slurm nodes are up");
	ck_one(&c, HP_TAG_PASS, "No Slurm job is stuck");
	ck_free(&c);
}

/*
 * A probe whose meta block has no host= line (no hostname/uname output):
 * the controller line names the node by its PrivateDnsHostname's first
 * label, as Slurm does, instead of "?".
 */
static void t_controller_name_from_dns(void)
{
	struct ck c;

	load(&c, "probed", "@@HP@@ BEGIN meta\nnow_epoch=1735732800\n@@HP@@ END meta 0\n"
		 PING_UP SINFO_OK SQUEUE_NONE SERVICES("active") DONE);
	run_slurm(&c);
	ck_one(&c, HP_TAG_INFO, "Slurm controller: ip-10-1-0-5 on " CTL " (controller, from "
				"SlurmConfig NodeType Controller)");
	T_NOT_CONTAINS(ck_dump(&c), "Slurm controller: ?");
	ck_free(&c);
}

static void t_slurmctld_and_munge_down(void)
{
	const struct hp_finding *f;
	struct ck c;

	load(&c, "probed", META "@@HP@@ BEGIN ping\nSlurmctld(primary) at ip-10-1-0-5 is DOWN\n"
		 "@@HP@@ END ping 1\n" SERVICES("inactive") DONE);
	run_slurm(&c);
	f = ck_one(&c, HP_TAG_FAIL, "slurmctld not responding on the controller");
	T_EQ(f->prio, HP_P0);
	T_STREQ(f->section, "H.5");
	T_STREQ(f->node, CTL);
	T_ASSERT(ck_evidence_has(f, "scontrol ping (exit 1): Slurmctld(primary) at ip-10-1-0-5 is DOWN"));
	T_ASSERT(ck_evidence_has(f, "systemd slurmctld: active/running"));
	f = ck_one(&c, HP_TAG_FAIL, "munge service inactive on the controller (inactive/running)");
	T_EQ(f->prio, HP_P0);
	T_STREQ(f->section, "H.6");
	/* Blocks that never came: skipped, not passed. */
	ck_one(&c, HP_TAG_SKIP, "Slurm node states not checked");
	ck_one(&c, HP_TAG_SKIP, "Stuck Slurm jobs not checked");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	/* Tools missing on the controller: unknown, not down. */
	load(&c, "probed", META "@@HP@@ BEGIN ping\nsh: 1: scontrol: not found\n@@HP@@ END ping 127\n"
		 "@@HP@@ BEGIN services\nsh: 1: systemctl: not found\n@@HP@@ END services 127\n" DONE);
	run_slurm(&c);
	f = ck_one(&c, HP_TAG_WARN, "scontrol not found on the Slurm controller " CTL);
	T_EQ(f->prio, HP_P2);
	f = ck_one(&c, HP_TAG_WARN, "munge state unknown on the Slurm controller (systemctl not found)");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 0);
	ck_free(&c);
}

static void t_node_states(void)
{
	const struct hp_finding *f;
	struct ck c;

	load(&c, "probed", META PING_UP
		 "@@HP@@ BEGIN sinfo\n"
		 "ip-10-1-2-3|drained|Action:Replace\n"
		 "ip-10-1-2-4|down*|Not responding\n"
		 "ip-10-1-2-9|draining|action: reboot\n"
		 "ip-10-1-2-8|down|Node unexpectedly rebooted\n"
		 "ip-10-1-2-7|idle+drain|none\n"
		 "ip-10-1-2-6|mixed|none\n"
		 "ip-10-1-2-5|idle~|none\n"
		 "@@HP@@ END sinfo 0\n" SQUEUE_NONE SERVICES("active") DONE);
	ck_run(&c, "slurm.nodes");
	f = ck_one(&c, HP_TAG_FAIL, "Slurm node ip-10-1-2-3 (" W1 ") is drained with reason "
				    "Action:Replace \xE2\x80\x94 HyperPod auto-repair will replace it");
	T_STREQ(f->section, "F.2");
	T_STREQ(f->node, W1);
	f = ck_one(&c, HP_TAG_FAIL, "Slurm node ip-10-1-2-4 (" W2 ") is down* (not responding): Not "
				    "responding");
	T_STREQ(f->section, "H.1");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->node, W2);
	f = ck_one(&c, HP_TAG_FAIL, "Slurm node ip-10-1-2-9 is draining with reason 'action: reboot', "
				    "not exactly Action:Reboot or Action:Replace");
	T_STREQ(f->section, "F.3");
	T_ASSERT(f->node == NULL);
	f = ck_one(&c, HP_TAG_FAIL, "ip-10-1-2-8 is down: Node unexpectedly rebooted");
	T_STREQ(f->section, "H.2");
	f = ck_one(&c, HP_TAG_FAIL, "Slurm node ip-10-1-2-7 is idle+drain");
	T_STREQ(f->section, "H.1");
	/* mixed and powered-down idle nodes are fine. */
	T_EQ(ck_count(&c, HP_TAG_FAIL), 5);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

static void t_many_down_nodes_aggregate(void)
{
	char *out = malloc(8192), *p = out;
	const struct hp_finding *f;
	struct ck c;
	int i;

	p += sprintf(p, META PING_UP "@@HP@@ BEGIN sinfo\n");
	for (i = 0; i < 40; i++)
		p += sprintf(p, "ip-10-9-0-%d|down*|Not responding\n", i);
	sprintf(p, "@@HP@@ END sinfo 0\n" DONE);
	load(&c, "probed", out);
	ck_run(&c, "slurm.nodes");
	f = ck_one(&c, HP_TAG_FAIL, "40 Slurm nodes are down, drained, failed or not responding");
	/* The first 25 nodes' lines; no id lines, as no name maps to an instance. */
	T_EQ(ck_evidence_len(f), 25);
	T_ASSERT(ck_evidence_has(f, "ip-10-9-0-24"));
	T_ASSERT(!ck_evidence_has(f, "ip-10-9-0-25"));
	T_ASSERT(f->nodes == NULL);
	T_EQ(c.f.n, 1);
	ck_free(&c);
	free(out);
}

static void t_stuck_jobs(void)
{
	const struct hp_finding *f;
	struct ck c;

	load(&c, "probed", META PING_UP
		 "@@HP@@ BEGIN squeue\n"
		 "101|COMPLETING|2025-01-01T11:20:00|2025-01-01T09:00:00|ip-10-1-2-4|train\n"
		 "102|COMPLETING|2025-01-01T11:58:00|2025-01-01T10:00:00|ip-10-1-2-3|eval\n"
		 "103|CONFIGURING|N/A|2025-01-01T10:30:00|ip-10-1-2-[5-6]|big\n"
		 "104|CONFIGURING|Unknown|Unknown|(null)|odd\n"
		 "105|PENDING|N/A|N/A||not-stuck\n"
		 "@@HP@@ END squeue 0\n" DONE);
	ck_run(&c, "slurm.jobs");
	f = ck_one(&c, HP_TAG_WARN, "3 Slurm job(s) stuck in COMPLETING or CONFIGURING for 10 minutes "
				    "or more");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "H.3");
	T_ASSERT(ck_evidence_has(f, "job 101 (train) COMPLETING for 40 min on ip-10-1-2-4"));
	T_ASSERT(ck_evidence_has(f, "job 103 (big) CONFIGURING for 90 min on ip-10-1-2-[5-6]"));
	T_ASSERT(ck_evidence_has(f, "job 104 (odd) CONFIGURING since Unknown"));
	T_ASSERT(!ck_evidence_has(f, "not-stuck"));
	ck_one(&c, HP_TAG_INFO, "1 Slurm job(s) COMPLETING or CONFIGURING for less than 10 minutes");
	ck_free(&c);
}

static void t_probe_did_not_run(void)
{
	const struct hp_finding *f;
	struct ck c;

	load(&c, NULL, NULL);
	run_slurm(&c);
	ck_one(&c, HP_TAG_SKIP, "Slurm controller " CTL " (controller, from SlurmConfig NodeType "
				"Controller) was not probed");
	T_EQ(ck_count(&c, HP_TAG_SKIP), 5);
	T_EQ(c.f.n, 5);
	ck_free(&c);

	load(&c, "unreachable", NULL);
	run_slurm(&c);
	f = ck_one(&c, HP_TAG_WARN, "Slurm controller SSM probe failed on " CTL " (controller): "
				    "TargetNotConnected");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "K+H");
	T_EQ(ck_count(&c, HP_TAG_SKIP), 4);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	/* Cut off after ping: what arrived is judged, the rest skipped, the cut reported. */
	load(&c, "probed", META PING_UP "@@HP@@ BEGIN sinfo\nip-10-1-2-3|idle|none\n");
	run_slurm(&c);
	ck_one(&c, HP_TAG_WARN, "Slurm controller probe output from " CTL " is incomplete");
	ck_one(&c, HP_TAG_PASS, "slurmctld responding");
	ck_one(&c, HP_TAG_SKIP, "Slurm node states not checked");
	T_EQ(ck_count(&c, HP_TAG_PASS), 1);
	ck_free(&c);

	/* No snapshot "slurm" key at all: the controller is still named. */
	ck_load(&c, "{" CLUSTER "}");
	ck_run(&c, "slurm.controller");
	ck_one(&c, HP_TAG_SKIP, "Slurm controller " CTL " (controller, from SlurmConfig NodeType "
				"Controller) was not probed");
	ck_free(&c);
}

static void t_controller_problems(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'cluster':{'ClusterArn':'x','Orchestrator':{'Slurm':{}},'InstanceGroups':["
		    "{'InstanceGroupName':'workers'}]}}");
	ck_run(&c, "slurm.controller");
	f = ck_one(&c, HP_TAG_WARN, "Cannot tell which node is the Slurm controller");
	T_EQ(f->prio, HP_P2);
	ck_free(&c);

	ck_load(&c, "{'cluster':{'ClusterArn':'x','Orchestrator':{'Slurm':{}},'InstanceGroups':["
		    "{'InstanceGroupName':'head'}]},'nodes':[{'InstanceId':'i-1','InstanceGroupName':"
		    "'head','InstanceStatus':{'Status':'Failure'}}]}");
	ck_run(&c, "slurm.controller");
	f = ck_one(&c, HP_TAG_FAIL, "The Slurm controller group head has no Running node");
	T_EQ(f->prio, HP_P0);
	ck_free(&c);

	/* A denied ListClusterNodes is no "no Running node": not checked, and why. */
	ck_load(&c, "{'cluster':{'ClusterArn':'x','Orchestrator':{'Slurm':{}},'InstanceGroups':["
		    "{'InstanceGroupName':'head'}]},'calls':[{'service':'sagemaker','action':"
		    "'ListClusterNodes','class':'denied','code':'AccessDeniedException'}]}");
	ck_run(&c, "slurm.controller");
	ck_one(&c, HP_TAG_SKIP, "Slurm controller group head: nodes not checked \xE2\x80\x94"
	       " ListClusterNodes denied, so whether it has a Running node is unknown");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 0);
	ck_free(&c);
	ck_load(&c, "{'cluster':{'ClusterArn':'x','Orchestrator':{'Slurm':{}},'InstanceGroups':["
		    "{'InstanceGroupName':'head'}]},'calls':[{'service':'sagemaker','action':"
		    "'ListClusterNodes','class':'server','code':'InternalFailure'}]}");
	ck_run(&c, "slurm.controller");
	ck_one(&c, HP_TAG_SKIP, "ListClusterNodes failed (InternalFailure)");
	ck_free(&c);

	/* EKS clusters have no Slurm checks. */
	ck_load(&c, "{'cluster':{'ClusterArn':'x','Orchestrator':{'Eks':{'ClusterArn':'a'}}}}");
	run_slurm(&c);
	ck_run(&c, "slurm.mapping");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_mapping(void)
{
	const struct hp_finding *f;
	struct ck c;
	size_t i;

	load(&c, "probed", META PING_UP "@@HP@@ BEGIN sinfo\nip-10-1-2-4|down*|x\nip-10-1-2-3|idle|none\n"
		 "@@HP@@ END sinfo 0\n" DONE);
	ck_run(&c, "slurm.mapping");
	T_EQ(c.f.n, 5);
	ck_one(&c, HP_TAG_INFO, "all 3 nodes (name from PrivateDnsHostname, Slurm state from sinfo)");
	ck_one(&c, HP_TAG_INFO, "SLURM NAME           INSTANCE ID");
	/* Sorted by name, each row carries its node. */
	f = &c.f.v[2];
	T_CONTAINS(f->message, "ip-10-1-0-5          " CTL " controller");
	T_STREQ(f->node, CTL);
	f = ck_one(&c, HP_TAG_INFO, "ip-10-1-2-3          " W1);
	T_CONTAINS(f->message, "ml.p5.48xlarge       Running    idle");
	f = ck_one(&c, HP_TAG_INFO, "ip-10-1-2-4          " W2);
	T_CONTAINS(f->message, "down*");
	for (i = 0; i < c.f.n; i++)
		T_ASSERT(c.f.v[i].tag == HP_TAG_INFO);
	ck_free(&c);

	ck_load(&c, "{'cluster':{'ClusterArn':'x','Orchestrator':{'Slurm':{}}},'nodes':[{'InstanceId':"
		    "'i-1'},{'InstanceId':'i-2'}]}");
	ck_run(&c, "slurm.mapping");
	f = ck_one(&c, HP_TAG_INFO, "ListClusterNodes gave no PrivateDnsHostname for the 2 nodes");
	T_STREQ(f->section, "H.4");
	ck_free(&c);
}

/* Every node of a big cluster is in the table, not the first 20. */
static void t_mapping_is_complete(void)
{
	cJSON *nodes;
	struct ck c;
	int i;

	ck_load(&c, "{'cluster':{'ClusterArn':'x','Orchestrator':{'Slurm':{}}}}");
	nodes = cJSON_CreateArray();
	for (i = 0; i < 1500; i++) {
		char iid[32], dns[64];
		cJSON *n = cJSON_CreateObject();

		snprintf(iid, sizeof(iid), "i-%017x", i);
		snprintf(dns, sizeof(dns), "ip-10-2-%d-%d.ec2.internal", i / 250, i % 250);
		cJSON_AddStringToObject(n, "InstanceId", iid);
		cJSON_AddStringToObject(n, "PrivateDnsHostname", dns);
		cJSON_AddItemToArray(nodes, n);
	}
	hp_snapshot_set(&c.snap, "nodes", nodes);
	ck_run(&c, "slurm.mapping");
	T_EQ(c.f.n, 1502);
	ck_one(&c, HP_TAG_INFO, "ip-10-2-5-249 ");
	ck_free(&c);
}

T_MAIN(T(t_healthy), T(t_controller_name_from_dns), T(t_slurmctld_and_munge_down), T(t_node_states), T(t_many_down_nodes_aggregate),
       T(t_stuck_jobs), T(t_probe_did_not_run), T(t_controller_problems), T(t_mapping),
       T(t_mapping_is_complete))
