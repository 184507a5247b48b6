/*
 * The check table itself (ids, sections in the reference documents,
 * groups, report order), the check tables of references/checks.md against it, the run loop
 * over whole snapshots (empty: nothing at all; healthy: no FAIL or WARN),
 * and the shared text helpers.
 */
#include <ctype.h>
#include <string.h>

#include "../../src/checks/checks.h"
#include "hp/text.h"
#include "hp/refdoc.h"
#include "checks-t.h"
#include "hp/report.h"
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

/*
 * The first problem of a check table, written into why; 0 when there is
 * none. The table must be sorted by group and order (each pair once),
 * every id well formed and unique, exactly one of run and each_node set,
 * and every section named in the check's reference document.
 */
static int table_problem(const struct hp_check *const *v, size_t n, char *why, size_t len)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		const struct hp_check *c = v[i];
		char sec[64], *part, *save = NULL;

		if (!c)
			return snprintf(why, len, "row %zu is NULL", i), 1;
		if (!c->id || !id_ok(c->id))
			return snprintf(why, len, "bad id '%s'", c->id ? c->id : "(null)"), 1;
		for (j = 0; j < i; j++)
			if (!strcmp(v[j]->id, c->id))
				return snprintf(why, len, "duplicate id '%s'", c->id), 1;
		if (!c->run == !c->each_node)
			return snprintf(why, len, "'%s': not exactly one of run and each_node", c->id), 1;
		if ((unsigned)c->group >= HP_GROUP__COUNT || (unsigned)c->prio > HP_PNONE)
			return snprintf(why, len, "'%s': group or priority out of range", c->id), 1;
		if (i && (v[i - 1]->group > c->group ||
			  (v[i - 1]->group == c->group && v[i - 1]->order >= c->order)))
			return snprintf(why, len, "'%s' (group %d, order %u) after '%s' (group %d, order %u)",
					c->id, c->group, c->order, v[i - 1]->id, v[i - 1]->group,
					v[i - 1]->order), 1;
		if (!hp_refdoc_get(hp_check_doc(c)))
			return snprintf(why, len, "'%s': document '%s' is not embedded", c->id,
					hp_check_doc(c)), 1;
		if (!c->section || strlen(c->section) >= sizeof(sec))
			return snprintf(why, len, "'%s': no section string", c->id), 1;
		strcpy(sec, c->section);
		if (*sec && (sec[0] == '+' || sec[strlen(sec) - 1] == '+' || strstr(sec, "++")))
			return snprintf(why, len, "'%s': empty part in section '%s'", c->id, c->section), 1;
		for (part = strtok_r(sec, "+", &save); part; part = strtok_r(NULL, "+", &save))
			if (!hp_refdoc_title(hp_check_doc(c), part))
				return snprintf(why, len, "'%s': section '%s' is not in %s", c->id, part,
						hp_check_doc(c)), 1;
	}
	return 0;
}

static void noop(const struct hp_snapshot *s, struct hp_emit *em)
{
	(void)s;
	(void)em;
}

static void judge_noop(struct node_ctx *c)
{
	(void)c;
}

/* The table check itself catches each kind of bad row. */
static void t_table_problem_catches(void)
{
	static const struct hp_check a = { .id = "x.a", .section = "F", .group = HP_GROUP_NODES,
					   .order = 10, .run = noop };
	static const struct hp_check b = { .id = "x.b", .section = "G.1.a+F", .group = HP_GROUP_NODES,
					   .order = 20, .each_node = judge_noop };
	static const struct hp_check same_place = { .id = "x.c", .section = "", .group = HP_GROUP_NODES,
						    .order = 20, .run = noop };
	static const struct hp_check early_group = { .id = "x.d", .section = "",
						     .group = HP_GROUP_IDENTITY, .order = 90,
						     .run = noop };
	static const struct hp_check dup = { .id = "x.a", .section = "", .group = HP_GROUP_VPC,
					     .order = 10, .run = noop };
	static const struct hp_check both = { .id = "x.e", .section = "", .group = HP_GROUP_VPC,
					      .order = 10, .run = noop, .each_node = judge_noop };
	static const struct hp_check neither = { .id = "x.e", .section = "", .group = HP_GROUP_VPC,
						 .order = 10 };
	static const struct hp_check no_section = { .id = "x.e", .section = "F.9", .group = HP_GROUP_VPC,
						    .order = 10, .run = noop };
	static const struct hp_check empty_part = { .id = "x.e", .section = "F+", .group = HP_GROUP_VPC,
						    .order = 10, .run = noop };
	static const struct hp_check bad_id = { .id = "X.e", .section = "", .group = HP_GROUP_VPC,
						.order = 10, .run = noop };
	static const struct hp_check other_doc = { .id = "x.e", .section = "F", .group = HP_GROUP_VPC,
						   .order = 10, .run = noop, .doc = "no-such.md" };
	const struct hp_check *v[2];
	char why[256];

	v[0] = &a;
	v[1] = &b;
	T_EQ(table_problem(v, 2, why, sizeof(why)), 0);
	v[0] = &b;
	v[1] = &same_place;
	T_ASSERT(table_problem(v, 2, why, sizeof(why)));
	T_CONTAINS(why, "'x.c' (group 2, order 20) after 'x.b' (group 2, order 20)");
	v[1] = &a;
	T_ASSERT(table_problem(v, 2, why, sizeof(why)));
	T_CONTAINS(why, "'x.a' (group 2, order 10) after 'x.b'");
	v[0] = &a;
	v[1] = &early_group;
	T_ASSERT(table_problem(v, 2, why, sizeof(why)));
	T_CONTAINS(why, "'x.d' (group 0, order 90) after 'x.a'");
	v[1] = &dup;
	T_ASSERT(table_problem(v, 2, why, sizeof(why)));
	T_STREQ(why, "duplicate id 'x.a'");
	v[1] = &both;
	T_ASSERT(table_problem(v, 2, why, sizeof(why)));
	T_CONTAINS(why, "not exactly one of run and each_node");
	v[1] = &neither;
	T_ASSERT(table_problem(v, 2, why, sizeof(why)));
	T_CONTAINS(why, "not exactly one of run and each_node");
	v[1] = &no_section;
	T_ASSERT(table_problem(v, 2, why, sizeof(why)));
	T_STREQ(why, "'x.e': section 'F.9' is not in node-diagnostics-detail.md");
	v[1] = &empty_part;
	T_ASSERT(table_problem(v, 2, why, sizeof(why)));
	T_CONTAINS(why, "empty part");
	v[1] = &bad_id;
	T_ASSERT(table_problem(v, 2, why, sizeof(why)));
	T_STREQ(why, "bad id 'X.e'");
	v[1] = &other_doc;
	T_ASSERT(table_problem(v, 2, why, sizeof(why)));
	T_STREQ(why, "'x.e': document 'no-such.md' is not embedded");
}

static void t_table_well_formed(void)
{
	char why[256];
	size_t i;

	T_ASSERT(hp_checks_count > 0);
	if (table_problem(hp_checks, hp_checks_count, why, sizeof(why)))
		T_FAILF("%s", why);
	for (i = 0; i < hp_checks_count; i++)
		T_ASSERT(hp_check_find(hp_checks[i]->id) == hp_checks[i]);
	T_ASSERT(hp_check_find("no.such-check") == NULL);
}

/*
 * Every check, in report order (group, then order within it): the order
 * findings come out in is part of the output, so a row that moves fails
 * here.
 */
static void t_report_order(void)
{
	static const struct {
		const char *id;
		enum hp_group group;
	} want[] = {
		{ "cluster.identity", HP_GROUP_IDENTITY },
		{ "api.identity", HP_GROUP_IDENTITY },
		{ "cluster.status", HP_GROUP_IDENTITY },
		{ "cluster.node-recovery", HP_GROUP_IDENTITY },
		{ "nccl.applicable", HP_GROUP_IDENTITY },
		{ "api.events", HP_GROUP_EVENTS },
		{ "events.signals", HP_GROUP_EVENTS },
		{ "api.nodes", HP_GROUP_NODES },
		{ "nodes.target", HP_GROUP_NODES },
		{ "nodes.status", HP_GROUP_NODES },
		{ "cluster.instance-groups", HP_GROUP_NODES },
		{ "cluster.threads-per-core", HP_GROUP_NODES },
		{ "node.version-drift", HP_GROUP_NODES },
		{ "api.eks", HP_GROUP_EKS },
		{ "kube.access", HP_GROUP_EKS },
		{ "kube.node-health", HP_GROUP_EKS },
		{ "kube.deep-health", HP_GROUP_EKS },
		{ "kube.node-ready", HP_GROUP_EKS },
		{ "kube.node-conditions", HP_GROUP_EKS },
		{ "kube.node-events", HP_GROUP_EKS },
		{ "kube.namespace", HP_GROUP_EKS },
		{ "kube.aws-node", HP_GROUP_CNI },
		{ "kube.kube-proxy", HP_GROUP_CNI },
		{ "kube.coredns", HP_GROUP_CNI },
		{ "kube.sandbox", HP_GROUP_CNI },
		{ "slurm.controller", HP_GROUP_SLURM },
		{ "slurm.slurmctld", HP_GROUP_SLURM },
		{ "slurm.munge", HP_GROUP_SLURM },
		{ "slurm.nodes", HP_GROUP_SLURM },
		{ "slurm.jobs", HP_GROUP_SLURM },
		{ "kube.workload-pods", HP_GROUP_PODS },
		{ "kube.evictions", HP_GROUP_PODS },
		{ "api.vpc", HP_GROUP_VPC },
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
		{ "nccl.job", HP_GROUP_NCCL_JOB },
		{ "nccl.efa-plugin", HP_GROUP_NCCL_JOB },
		{ "nccl.pod-status", HP_GROUP_NCCL_JOB },
		{ "nccl.containers", HP_GROUP_NCCL_JOB },
		{ "nccl.init-containers", HP_GROUP_NCCL_JOB },
		{ "nccl.dshm", HP_GROUP_NCCL_JOB },
		{ "nccl.slurm-job", HP_GROUP_NCCL_JOB },
		{ "nccl.headless-service", HP_GROUP_NCCL_NET },
		{ "nccl.network-policy", HP_GROUP_NCCL_NET },
		{ "nccl.logs", HP_GROUP_NCCL_LOGS },
		{ "nccl.slurm-logs", HP_GROUP_NCCL_LOGS },
		{ "nccl.env", HP_GROUP_NCCL_ENV },
		{ "nccl.versions", HP_GROUP_NCCL_ENV },
		{ "nccl.slurm-env", HP_GROUP_NCCL_ENV },
		{ "nccl.node-versions", HP_GROUP_NCCL_ENV },
		{ "api.logs", HP_GROUP_LOGS },
		{ "logs.group", HP_GROUP_LOGS },
		{ "logs.lifecycle", HP_GROUP_LOGS },
		{ "logs.health-agent", HP_GROUP_LOGS },
		{ "nccl.cloudwatch", HP_GROUP_LOGS },
		{ "api.ssm", HP_GROUP_SSM },
		{ "ssm.targets", HP_GROUP_SSM },
		{ "ssm.reachability", HP_GROUP_SSM },
		{ "nccl.probe-nodes", HP_GROUP_SSM },
		{ "node.probe", HP_GROUP_ONNODE },
		{ "node.disk-root", HP_GROUP_ONNODE },
		{ "node.disk-sagemaker", HP_GROUP_ONNODE },
		{ "node.inodes", HP_GROUP_ONNODE },
		{ "node.shm", HP_GROUP_ONNODE },
		{ "node.nvme", HP_GROUP_ONNODE },
		{ "node.readonly", HP_GROUP_ONNODE },
		{ "node.disk-containerd", HP_GROUP_ONNODE },
		{ "node.memory", HP_GROUP_ONNODE },
		{ "node.oom", HP_GROUP_ONNODE },
		{ "node.time", HP_GROUP_ONNODE },
		{ "node.ssm-agent", HP_GROUP_ONNODE },
		{ "node.containerd", HP_GROUP_ONNODE },
		{ "node.kubelet", HP_GROUP_ONNODE },
		{ "node.provisioning", HP_GROUP_ONNODE },
		{ "node.slurm", HP_GROUP_ONNODE },
		{ "node.kernel", HP_GROUP_ONNODE },
		{ "node.storage-errors", HP_GROUP_ONNODE },
		{ "node.gpu-count", HP_GROUP_ONNODE },
		{ "node.gpu-xid", HP_GROUP_ONNODE },
		{ "node.gpu-ecc", HP_GROUP_ONNODE },
		{ "node.gpu-remap", HP_GROUP_ONNODE },
		{ "node.gpu-recovery", HP_GROUP_ONNODE },
		{ "node.gpu-clocks", HP_GROUP_ONNODE },
		{ "node.gpu-dcgm", HP_GROUP_ONNODE },
		{ "node.gpu-nvvs", HP_GROUP_ONNODE },
		{ "node.gpu-nvlink", HP_GROUP_ONNODE },
		{ "node.nvswitch", HP_GROUP_ONNODE },
		{ "node.fabric-manager", HP_GROUP_ONNODE },
		{ "node.neuron", HP_GROUP_ONNODE },
		{ "node.efa", HP_GROUP_ONNODE },
		{ "node.pcie-link", HP_GROUP_ONNODE },
		{ "node.net-errors", HP_GROUP_ONNODE },
		{ "node.imds", HP_GROUP_ONNODE },
		{ "nccl.node-probe", HP_GROUP_NCCL_NODE },
		{ "nccl.topology", HP_GROUP_NCCL_NODE },
		{ "nccl.p2p", HP_GROUP_NCCL_NODE },
		{ "nccl.peermem", HP_GROUP_NCCL_NODE },
		{ "nccl.ofi-plugin", HP_GROUP_NCCL_NODE },
		{ "nccl.efa-software", HP_GROUP_NCCL_NODE },
		{ "nccl.nccl-lib", HP_GROUP_NCCL_NODE },
		{ "nccl.mtu", HP_GROUP_NCCL_NODE },
		{ "nccl.limits", HP_GROUP_NCCL_NODE },
		{ "nccl.hugepages", HP_GROUP_NCCL_NODE },
		{ "nccl.shm-stale", HP_GROUP_NCCL_NODE },
		{ "nccl.numa", HP_GROUP_NCCL_NODE },
		{ "nccl.firewall", HP_GROUP_NCCL_NODE },
		{ "slurm.mapping", HP_GROUP_SLURM_MAP },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(want) && i < hp_checks_count; i++)
		if (strcmp(hp_checks[i]->id, want[i].id) || hp_checks[i]->group != want[i].group)
			T_FAILF("check %zu is '%s' (group %d), expected '%s' (group %d)", i,
				hp_checks[i]->id, hp_checks[i]->group, want[i].id, want[i].group);
	T_EQ(hp_checks_count, HP_ARRAY_LEN(want));
	/*
	 * Every on-node check goes through the per-node frame, and only they do;
	 * the NCCL probe's own group and only it walks the NCCL probe's nodes.
	 */
	for (i = 0; i < hp_checks_count; i++) {
		T_EQ(!!hp_checks[i]->each_node, hp_checks[i]->group == HP_GROUP_ONNODE ||
						hp_checks[i]->group == HP_GROUP_NCCL_NODE);
		T_EQ(hp_checks[i]->source == HP_SOURCE_NCCL_PROBE,
		     hp_checks[i]->group == HP_GROUP_NCCL_NODE);
	}
}

/* ---- README's check tables against the registry ---- */

#define README_MAX_IDS 256

struct readme_ids {
	char id[README_MAX_IDS][64];
	int n;
	int too_many;
};

/* Cell k (0-based, after the leading '|') of a table line, trimmed, into out. */
static int table_cell(const char *line, size_t len, int k, char *out, size_t outlen)
{
	size_t i = 1, start, o = 0;
	int cell = 0;

	if (!len || line[0] != '|')
		return -1;
	for (;;) {
		start = i;
		while (i < len && !(line[i] == '|' && line[i - 1] != '\\'))
			i++;
		if (i >= len)
			return -1;
		if (cell == k) {
			while (start < i && line[start] == ' ')
				start++;
			while (i > start && line[i - 1] == ' ')
				i--;
			for (; start < i && o + 1 < outlen; start++)
				out[o++] = line[start];
			out[o] = '\0';
			return 0;
		}
		cell++;
		i++;
	}
}

/*
 * The check ids in the "check" or "checks" column of every Markdown table
 * of text: the backquoted words of that column shaped like an id.
 */
static void readme_check_ids(const char *text, struct readme_ids *r)
{
	const char *p = text;
	int col = -1, in_table = 0;

	memset(r, 0, sizeof(*r));
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char cell[2048];
		int k;

		if (!len || p[0] != '|') {
			in_table = 0;
			col = -1;
		} else if (!in_table) {
			/* The header row: which column, if any, names checks. */
			in_table = 1;
			for (k = 0; table_cell(p, len, k, cell, sizeof(cell)) == 0; k++)
				if (!strcmp(cell, "check") || !strcmp(cell, "checks"))
					col = k;
		} else if (col >= 0 && table_cell(p, len, col, cell, sizeof(cell)) == 0) {
			char *a = cell, *b;

			while ((a = strchr(a, '`')) && (b = strchr(a + 1, '`'))) {
				*b = '\0';
				if (id_ok(a + 1)) {
					if (r->n < README_MAX_IDS)
						hp_strlcpy(r->id[r->n++], a + 1, sizeof(r->id[0]));
					else
						r->too_many = 1;
				}
				a = b + 1;
			}
		}
		p += len + (nl ? 1 : 0);
	}
}

static int readme_has(const struct readme_ids *r, const char *id)
{
	int i, n = 0;

	for (i = 0; i < r->n; i++)
		n += !strcmp(r->id[i], id);
	return n;
}

static void t_readme_ids_parser(void)
{
	static const char text[] =
		"Intro `not.a-table` text.\n"
		"\n"
		"| area | checks | what |\n"
		"| --- | --- | --- |\n"
		"| one | `a.one`, `a.two` | reads `x.mentioned` |\n"
		"| two | `--opt A\\|B` and `b.three` | `c.four` |\n"
		"| none | — | nothing |\n"
		"\n"
		"| option | meaning |\n"
		"| --- | --- |\n"
		"| `d.five` | not a check column |\n"
		"\n"
		"| check | what |\n"
		"| --- | --- |\n"
		"| `Node.bad` `e.six` | x |\n";
	struct readme_ids r;

	readme_check_ids(text, &r);
	T_EQ(r.n, 4);
	T_STREQ(r.id[0], "a.one");
	T_STREQ(r.id[1], "a.two");
	T_STREQ(r.id[2], "b.three");
	T_STREQ(r.id[3], "e.six");
	T_EQ(readme_has(&r, "x.mentioned"), 0);
	T_EQ(readme_has(&r, "d.five"), 0);
}

/* The check reference lists every check exactly once, and nothing that is not one. */
#define CHECKS_DOC "references/checks.md"
static void t_readme_lists_the_registry(void)
{
	struct hp_buf text = HP_BUF_INIT(1 << 22);
	struct readme_ids r;
	size_t i;
	int k;

	if (ck_read_file(NULL, CHECKS_DOC, &text))
		T_FAILF("cannot read " CHECKS_DOC " (tests run from the repository root)");
	readme_check_ids(text.buf, &r);
	hp_buf_release(&text);
	T_ASSERT(!r.too_many);
	for (i = 0; i < hp_checks_count; i++) {
		k = readme_has(&r, hp_checks[i]->id);
		if (k != 1)
			T_FAILF(CHECKS_DOC " lists check '%s' %d times in its check tables, expected once",
				hp_checks[i]->id, k);
	}
	for (k = 0; k < r.n; k++)
		if (!hp_check_find(r.id[k]))
			T_FAILF(CHECKS_DOC " lists '%s', which is not a check", r.id[k]);
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
		{ "api.events", HP_TAG_WARN, HP_P1, "K.1", NULL,
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
	/* Cut inside an escape sequence: the printed line still ends in its ellipsis. */
	{
		static const char *const seqs[] = { "\x1b]0;a title that runs past the cut",
						    "\x1b[38;5;196;48;5;21;1;4;5;7m", "\x1bP1$r0m long DCS" };
		size_t k;

		for (k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++) {
			struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

			memset(in, 'a', 190);
			snprintf(in + 190, sizeof(in) - 190, "%s and more text after it", seqs[k]);
			hp_check_clip(in, out);
			hp_text_add(HP_TEXT_REPORT, out, &b, 1000);
			T_ASSERT(b.len >= 3 && !strcmp(b.buf + b.len - 3, "\xE2\x80\xA6"));
			hp_buf_release(&b);
		}
	}
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

T_MAIN(T(t_id_format_helper), T(t_table_problem_catches), T(t_table_well_formed),
       T(t_report_order), T(t_readme_ids_parser), T(t_readme_lists_the_registry),
       T(t_empty_snapshot_says_nothing), T(t_healthy_cluster), T(t_degraded_cluster),
       T(t_clip), T(t_iso_time))
