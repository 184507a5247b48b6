/*
 * The check table itself (ids, sections, groups), the run loop over whole
 * snapshots (empty: nothing at all; healthy: no FAIL or WARN), and the
 * shared text helpers.
 */
#include <ctype.h>
#include <string.h>

#include "../../src/checks/checks.h"
#include "checks-t.h"
#include "t.h"

/* dotted lower-case: "area.name", each part [a-z][a-z0-9-]* */
static int id_ok(const char *id)
{
	int parts = 0;
	const char *p = id;

	for (;;) {
		if (!islower((unsigned char)*p))
			return 0;
		while (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-')
			p++;
		parts++;
		if (!*p)
			break;
		if (*p != '.')
			return 0;
		p++;
	}
	return parts >= 2 && p[-1] != '-';
}

static void t_id_format_helper(void)
{
	T_ASSERT(id_ok("cluster.status"));
	T_ASSERT(id_ok("cluster.node-recovery"));
	T_ASSERT(!id_ok("cluster"));
	T_ASSERT(!id_ok("Cluster.status"));
	T_ASSERT(!id_ok("cluster..status"));
	T_ASSERT(!id_ok("cluster.status."));
	T_ASSERT(!id_ok("cluster.status_x"));
}

static void t_table_well_formed(void)
{
	size_t i, j;

	T_ASSERT(hp_checks_count > 0);
	for (i = 0; i < hp_checks_count; i++) {
		const struct hp_check *c = hp_checks[i];
		char sec[64], *part, *save = NULL;

		T_ASSERT(c != NULL);
		if (!id_ok(c->id))
			T_FAILF("bad id '%s'", c->id);
		for (j = 0; j < i; j++)
			if (!strcmp(hp_checks[j]->id, c->id))
				T_FAILF("duplicate id '%s'", c->id);
		T_ASSERT(c->run != NULL);
		T_ASSERT(c->summary && *c->summary);
		T_ASSERT((unsigned)c->group < HP_GROUP__COUNT);
		T_ASSERT((unsigned)c->prio <= HP_PNONE);
		T_ASSERT(c->scope == HP_SCOPE_CLUSTER || c->scope == HP_SCOPE_NODE);
		T_ASSERT(c->section != NULL);
		T_ASSERT(strlen(c->section) < sizeof(sec));
		strcpy(sec, c->section);
		for (part = strtok_r(sec, "+", &save); part; part = strtok_r(NULL, "+", &save))
			if (!hp_section_title(part))
				T_FAILF("check '%s': section '%s' has no title", c->id, part);
		T_ASSERT(hp_check_find(c->id) == c);
	}
	T_ASSERT(hp_check_find("no.such-check") == NULL);
}

/* Every check the design names is in the table, in the group it reports under. */
static void t_expected_checks(void)
{
	static const struct {
		const char *id;
		enum hp_group group;
	} want[] = {
		{ "api.identity", HP_GROUP_IDENTITY }, { "api.events", HP_GROUP_EVENTS },
		{ "api.nodes", HP_GROUP_NODES },       { "api.vpc", HP_GROUP_VPC },
		{ "api.logs", HP_GROUP_LOGS },         { "api.eks", HP_GROUP_EKS },
		{ "api.ssm", HP_GROUP_SSM },
		{ "cluster.identity", HP_GROUP_IDENTITY },
		{ "cluster.status", HP_GROUP_IDENTITY },
		{ "cluster.node-recovery", HP_GROUP_IDENTITY },
		{ "cluster.instance-groups", HP_GROUP_NODES },
		{ "cluster.threads-per-core", HP_GROUP_NODES },
		{ "events.signals", HP_GROUP_EVENTS },
		{ "nodes.status", HP_GROUP_NODES },
		{ "nodes.target", HP_GROUP_NODES },
		{ "logs.group", HP_GROUP_LOGS },
		{ "logs.lifecycle", HP_GROUP_LOGS },
		{ "logs.health-agent", HP_GROUP_LOGS },
		{ "cluster.vpc-config", HP_GROUP_VPC },
		{ "network.efa-sg", HP_GROUP_VPC },
		{ "network.vpc", HP_GROUP_VPC },
		{ "network.dns", HP_GROUP_VPC },
		{ "network.routing", HP_GROUP_VPC },
		{ "network.endpoints", HP_GROUP_VPC },
		{ "network.eks", HP_GROUP_VPC },
		{ "network.subnet-ips", HP_GROUP_VPC },
		{ "network.eni", HP_GROUP_VPC },
		{ "network.capacity", HP_GROUP_VPC },
		{ "ssm.targets", HP_GROUP_SSM },
		{ "node.probe", HP_GROUP_ONNODE },
		{ "node.disk-root", HP_GROUP_ONNODE },
		{ "node.disk-sagemaker", HP_GROUP_ONNODE },
		{ "node.inodes", HP_GROUP_ONNODE },
		{ "node.shm", HP_GROUP_ONNODE },
		{ "node.nvme", HP_GROUP_ONNODE },
		{ "node.memory", HP_GROUP_ONNODE },
		{ "node.oom", HP_GROUP_ONNODE },
		{ "node.time", HP_GROUP_ONNODE },
		{ "node.ssm-agent", HP_GROUP_ONNODE },
		{ "node.containerd", HP_GROUP_ONNODE },
		{ "node.slurm", HP_GROUP_ONNODE },
		{ "node.kernel", HP_GROUP_ONNODE },
		{ "node.gpu-count", HP_GROUP_ONNODE },
		{ "node.gpu-xid", HP_GROUP_ONNODE },
		{ "node.gpu-ecc", HP_GROUP_ONNODE },
		{ "node.gpu-remap", HP_GROUP_ONNODE },
		{ "node.gpu-recovery", HP_GROUP_ONNODE },
		{ "node.gpu-clocks", HP_GROUP_ONNODE },
		{ "node.gpu-dcgm", HP_GROUP_ONNODE },
		{ "node.neuron", HP_GROUP_ONNODE },
		{ "node.efa", HP_GROUP_ONNODE },
		{ "node.disk-containerd", HP_GROUP_ONNODE },
		{ "node.kubelet", HP_GROUP_ONNODE },
		{ "node.provisioning", HP_GROUP_ONNODE },
		{ "node.gpu-nvvs", HP_GROUP_ONNODE },
		{ "node.gpu-nvlink", HP_GROUP_ONNODE },
		{ "node.net-errors", HP_GROUP_ONNODE },
		{ "node.imds", HP_GROUP_ONNODE },
		{ "kube.access", HP_GROUP_EKS },
		{ "kube.node-health", HP_GROUP_EKS },
		{ "kube.deep-health", HP_GROUP_EKS },
		{ "kube.node-ready", HP_GROUP_EKS },
		{ "kube.namespace", HP_GROUP_EKS },
		{ "kube.aws-node", HP_GROUP_CNI },
		{ "kube.kube-proxy", HP_GROUP_CNI },
		{ "kube.coredns", HP_GROUP_CNI },
		{ "kube.sandbox", HP_GROUP_CNI },
		{ "kube.workload-pods", HP_GROUP_PODS },
		{ "slurm.controller", HP_GROUP_SLURM },
		{ "slurm.slurmctld", HP_GROUP_SLURM },
		{ "slurm.munge", HP_GROUP_SLURM },
		{ "slurm.nodes", HP_GROUP_SLURM },
		{ "slurm.jobs", HP_GROUP_SLURM },
		{ "slurm.mapping", HP_GROUP_SLURM_MAP },
		{ "ssm.reachability", HP_GROUP_SSM },
	};
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct hp_check *c = hp_check_find(want[i].id);

		if (!c)
			T_FAILF("check '%s' missing", want[i].id);
		T_EQ(c->group, want[i].group);
	}
	T_EQ(hp_checks_count, sizeof(want) / sizeof(want[0]));
}

/* Nothing collected means nothing judged: not one PASS, not one line. */
static void t_empty_snapshot_says_nothing(void)
{
	struct ck c;

	ck_load(&c, "{'version':1}");
	ck_run_all(&c);
	if (c.f.n)
		T_FAILF("findings from an empty snapshot: %s", ck_dump(&c));
	ck_free(&c);

	ck_load(&c, "{'version':1,'meta':{'cluster_arg':'x','region':'us-east-1'},'calls':[]}");
	ck_run_all(&c);
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_healthy_cluster(void)
{
	struct ck c;
	size_t i;

	ck_load_file(&c, "healthy-eks.json");
	ck_run_all(&c);
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "Cluster status is InService");
	ck_one(&c, HP_TAG_PASS, "NodeRecovery is Automatic");
	ck_one(&c, HP_TAG_PASS, "All 3 nodes are Running");
	ck_one(&c, HP_TAG_PASS, "2 instance groups at target size");
	ck_one(&c, HP_TAG_PASS, "Log group exists: /aws/sagemaker/Clusters/ml-cluster/abc123def456");
	ck_one(&c, HP_TAG_PASS, "No lifecycle script errors");
	ck_one(&c, HP_TAG_PASS, "No faults in SagemakerHealthMonitoringAgent");
	ck_one(&c, HP_TAG_INFO, "Read 2 cluster events");
	ck_one(&c, HP_TAG_INFO, "Orchestrator: EKS (arn:aws:eks:us-west-2:123456789012:cluster/ml-eks)");
	/* Findings come out grouped in table order. */
	for (i = 1; i < c.f.n; i++) {
		size_t a, b;

		for (a = 0; hp_checks[a] != c.f.v[i - 1].check; a++)
			;
		for (b = 0; hp_checks[b] != c.f.v[i].check; b++)
			;
		T_ASSERT(a <= b);
	}
	ck_free(&c);
}

/* A cluster with several problems: exactly these FAIL and WARN findings. */
static void t_degraded_cluster(void)
{
	static const struct {
		const char *check;
		enum hp_tag tag;
		enum hp_prio prio;
		const char *section;
		const char *node;
		const char *msg;
	} want[] = {
		{ "cluster.node-recovery", HP_TAG_WARN, HP_P1, "F", NULL, "NodeRecovery is 'None'" },
		{ "api.events", HP_TAG_WARN, HP_P2, "", NULL,
		  "Could not run sagemaker:ListClusterEvents (ValidationException: " },
		{ "nodes.target", HP_TAG_FAIL, HP_P1, "F.1+F.2", "i-0c0c0c0c0c0c0c0c3",
		  "i-0c0c0c0c0c0c0c0c3 (workers / ml.p5.48xlarge) is Failure: Lifecycle script" },
		{ "nodes.status", HP_TAG_FAIL, HP_P1, "F.1+F.2", "i-0c0c0c0c0c0c0c0c3",
		  "i-0c0c0c0c0c0c0c0c3 (workers / ml.p5.48xlarge) is Failure: Lifecycle script" },
		{ "nodes.status", HP_TAG_WARN, HP_P2, "F.1", "i-0c0c0c0c0c0c0c0c2",
		  "i-0c0c0c0c0c0c0c0c2 (workers / ml.p5.48xlarge) is Pending" },
		{ "cluster.instance-groups", HP_TAG_FAIL, HP_P1, "C", NULL,
		  "Instance group 'workers' has 3 of 4 nodes (ml.p5.48xlarge)" },
		{ "cluster.threads-per-core", HP_TAG_WARN, HP_P2, "J.2", NULL,
		  "nodes show 96 vCPUs instead of 192" },
		{ "logs.lifecycle", HP_TAG_FAIL, HP_P1, "D", "i-0c0c0c0c0c0c0c0c3",
		  "Lifecycle script errors on i-0c0c0c0c0c0c0c0c3 (workers): 2 matching lines" },
		{ "logs.health-agent", HP_TAG_FAIL, HP_P1, "F", "i-0c0c0c0c0c0c0c0c1",
		  "Health monitoring agent reported faults on i-0c0c0c0c0c0c0c0c1" },
	};
	size_t i, j = 0, problems = 0;
	struct ck c;

	ck_load_file(&c, "degraded-slurm.json");
	ck_run_all(&c);
	/* The problems come out in this order, and there are no others. */
	for (i = 0; i < c.f.n; i++) {
		const struct hp_finding *f = &c.f.v[i];

		if (f->tag != HP_TAG_FAIL && f->tag != HP_TAG_WARN)
			continue;
		problems++;
		if (j >= sizeof(want) / sizeof(want[0]))
			T_FAILF("unexpected finding: %s", f->message);
		if (strcmp(f->check->id, want[j].check) || f->tag != want[j].tag ||
		    f->prio != want[j].prio || strcmp(f->section, want[j].section) ||
		    !strstr(f->message, want[j].msg) ||
		    (want[j].node ? !f->node || strcmp(f->node, want[j].node) : f->node != NULL))
			T_FAILF("finding %zu: [%s] %s P%d '%s' node %s: %s", j, ck_tag_name(f->tag),
				f->check->id, f->prio, f->section, f->node ? f->node : "-",
				f->message);
		j++;
	}
	T_EQ(problems, sizeof(want) / sizeof(want[0]));
	ck_one(&c, HP_TAG_INFO, "Orchestrator: Slurm");
	ck_one(&c, HP_TAG_INFO, "NodeProvisioningMode: legacy (not Continuous)");
	ck_one(&c, HP_TAG_PASS, "1 instance group at target size: controller (1)");
	T_EQ(ck_count_msg(&c, HP_TAG_PASS, "nodes are Running"), 0);
	T_EQ(ck_count_msg(&c, HP_TAG_PASS, "No lifecycle script errors"), 0);
	ck_free(&c);
}

static void t_clip(void)
{
	char out[HP_CHECK_CLIP_SIZE], in[1200];
	size_t i;

	T_STREQ(hp_check_clip(NULL, out), "");
	T_STREQ(hp_check_clip("short", out), "short");
	memset(in, 'a', 200);
	in[200] = '\0';
	T_EQ(strlen(hp_check_clip(in, out)), 200);
	in[200] = 'b';
	in[201] = '\0';
	hp_check_clip(in, out);
	T_EQ(strlen(out), 203);
	T_STREQ(out + 200, "\xE2\x80\xA6");
	/* 300 two-byte characters: cut after 200 characters, never inside one. */
	for (i = 0; i < 300; i++)
		memcpy(in + 2 * i, "\xC3\xA9", 2);
	in[600] = '\0';
	hp_check_clip(in, out);
	T_EQ(strlen(out), 403);
	T_ASSERT(!memcmp(out + 398, "\xC3\xA9\xE2\x80\xA6", 5));
	/* Runs of stray continuation bytes cannot overrun the buffer. */
	memset(in, 0x80, 1100);
	in[0] = 'x';
	in[1100] = '\0';
	hp_check_clip(in, out);
	T_ASSERT(strlen(out) < sizeof(out));
}

static void t_iso_time(void)
{
	char out[32];

	T_STREQ(hp_check_iso_time(0, out), "1970-01-01T00:00:00Z");
	T_STREQ(hp_check_iso_time(1735732800.75, out), "2025-01-01T12:00:00Z");
	T_STREQ(hp_check_iso_time(-1, out), "unknown time");
	T_STREQ(hp_check_iso_time(1e300, out), "unknown time");
}

T_MAIN(T(t_id_format_helper), T(t_table_well_formed), T(t_expected_checks),
       T(t_empty_snapshot_says_nothing), T(t_healthy_cluster), T(t_degraded_cluster),
       T(t_clip), T(t_iso_time))
