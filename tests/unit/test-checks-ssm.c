/*
 * ssm.reachability over hand-built "probes" snapshots: the summary line,
 * unreachable nodes one by one and summarised, the every-node-failed hint,
 * skipped nodes, the plugin and KMS cases, and silence without a sweep.
 */
#include <stdio.h>
#include <string.h>

#include "checks-t.h"
#include "t.h"

static const char meta[] =
	"'probes_meta':{'transport':'native','concurrency':16,'rate_per_s':3,'timeout_s':180,"
	"'requested':3,'probed':1,'unreachable':1,'skipped':1,'wall_ms':4200}";

static void t_silent_without_a_sweep(void)
{
	struct ck c;

	ck_load(&c, "{'nodes':[]}");
	ck_run(&c, "ssm.reachability");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_not_run(void)
{
	struct ck c;

	ck_load(&c, "{'probes_meta':{'note':'--no-probe was given','requested':0},'probes':{}}");
	ck_run(&c, "ssm.reachability");
	T_EQ(c.f.n, 1);
	ck_one(&c, HP_TAG_INFO, "On-node probes not run: --no-probe was given");
	ck_free(&c);
}

static void t_mixed_outcomes(void)
{
	struct ck c;
	const struct hp_finding *f;
	char json[2048];

	snprintf(json, sizeof(json), "{%s,'probes':{"
		 "'i-1':{'state':'probed','reason':'','exit_code':0,'terminated':false},"
		 "'i-2':{'state':'unreachable','reason':'TargetNotConnected: sagemaker-cluster:x_w-i-2 is not connected.','terminated':false},"
		 "'i-3':{'state':'skipped','reason':'node not Running (Failure)'}}}", meta);
	ck_load(&c, json);
	ck_run(&c, "ssm.reachability");
	f = ck_one(&c, HP_TAG_INFO, "SSM probes: 1 node probed, 1 unreachable, 1 not probed "
		   "(native transport, 16 at once, 3 StartSession/s, 180 s per node)");
	T_ASSERT(ck_evidence_has(f, "sweep took 4.2 s"));
	f = ck_one(&c, HP_TAG_FAIL, "Cannot reach node i-2 via SSM: TargetNotConnected: sagemaker-cluster:x_w-i-2");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "K.5");
	T_STREQ(f->node, "i-2");
	f = ck_one(&c, HP_TAG_SKIP, "Node i-3 not probed: node not Running (Failure)");
	T_STREQ(f->node, "i-3");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

static void t_all_probed_passes(void)
{
	struct ck c;
	char json[1024];

	snprintf(json, sizeof(json), "{%s,'probes':{'i-1':{'state':'probed'},'i-2':{'state':'probed'}}}", meta);
	ck_load(&c, json);
	ck_run(&c, "ssm.reachability");
	ck_one(&c, HP_TAG_PASS, "All 2 probed nodes answered over SSM");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 0);
	ck_free(&c);
}

/* Many nodes with one reason: one finding, every id in the evidence. */
static void t_many_unreachable_summarised(void)
{
	struct ck c;
	const struct hp_finding *f;
	struct hp_buf j = HP_BUF_INIT(1 << 20);
	int i;

	hp_buf_printf(&j, "{%s,'probes':{'i-ok':{'state':'probed'}", meta);
	for (i = 0; i < 150; i++)
		hp_buf_printf(&j, ",'i-%03d':{'state':'unreachable','reason':'timeout after 180 s','terminated':true}", i);
	for (i = 0; i < 3; i++)
		hp_buf_printf(&j, ",'i-t%d':{'state':'unreachable','reason':'TargetNotConnected: i-t%d is not connected.'}", i, i);
	hp_buf_puts(&j, "}}");
	ck_load(&c, j.buf);
	ck_run(&c, "ssm.reachability");
	f = ck_one(&c, HP_TAG_FAIL, "Cannot reach 150 nodes via SSM: timeout after 180 s");
	T_ASSERT(f->node == NULL);
	T_STREQ(f->section, "K.5");
	T_ASSERT(ck_evidence_has(f, "nodes 1-100 of 150: i-000 i-001"));
	T_ASSERT(ck_evidence_has(f, "nodes 101-150 of 150: i-100"));
	T_ASSERT(ck_evidence_has(f, "i-149"));
	/* 25 full reasons, then the id lines; every id in nodes. */
	T_EQ(ck_evidence_len(f), 27);
	T_STREQ(ck_line(f, 24), "i-024: timeout after 180 s");
	T_EQ((int)f->nnodes, 150);
	/* The three TargetNotConnected nodes are few enough to list one by one. */
	T_EQ(ck_count_msg(&c, HP_TAG_FAIL, "Cannot reach node i-t"), 3);
	T_EQ(ck_count(&c, HP_TAG_FAIL), 4);
	f = ck_one(&c, HP_TAG_INFO, "SSM probes:");
	T_ASSERT(ck_evidence_has(f, "TerminateSession called for 150 unfinished sessions"));
	ck_free(&c);
	hp_buf_release(&j);
}

static void t_every_node_failed_alike(void)
{
	struct ck c;
	const struct hp_finding *f;
	char json[2048];

	snprintf(json, sizeof(json), "{%s,'probes':{"
		 "'i-1':{'state':'unreachable','reason':'data channel refused: cannot connect'},"
		 "'i-2':{'state':'unreachable','reason':'data channel refused: cannot connect'},"
		 "'i-3':{'state':'skipped','reason':'node not Running (Pending)'}}}", meta);
	ck_load(&c, json);
	ck_run(&c, "ssm.reachability");
	T_EQ(ck_count_msg(&c, HP_TAG_FAIL, "every probed node failed the same way"), 2);
	f = ck_one(&c, HP_TAG_FAIL, "Cannot reach node i-1");
	T_STREQ(f->section, "K.5+B.4");
	ck_free(&c);
}

static void t_plugin_and_kms_skips(void)
{
	struct ck c;
	const struct hp_finding *f;
	char json[2048];

	snprintf(json, sizeof(json), "{%s,'probes':{"
		 "'i-1':{'state':'skipped','reason':'--ssm-transport plugin: session-manager-plugin not found on PATH'},"
		 "'i-2':{'state':'skipped','reason':'--ssm-transport plugin: session-manager-plugin not found on PATH'}}}", meta);
	ck_load(&c, json);
	ck_run(&c, "ssm.reachability");
	f = ck_one(&c, HP_TAG_WARN, "SSM plugin missing");
	T_EQ(f->prio, HP_P2);
	T_STREQ(f->section, "K.4");
	T_CONTAINS(f->message, "2 nodes");
	T_EQ(ck_count(&c, HP_TAG_SKIP), 0);
	ck_free(&c);

	snprintf(json, sizeof(json), "{%s,'probes':{"
		 "'i-1':{'state':'skipped','reason':'--ssm-transport plugin: session-manager-plugin --version failed (exit status 2): installed but broken'}}}", meta);
	ck_load(&c, json);
	ck_run(&c, "ssm.reachability");
	f = ck_one(&c, HP_TAG_WARN, "SSM plugin installed but broken");
	T_EQ(f->prio, HP_P1);
	ck_free(&c);

	snprintf(json, sizeof(json), "{%s,'probes':{"
		 "'i-1':{'state':'skipped','reason':'the session is KMS-encrypted; the native client refuses KMS (use --ssm-transport plugin with session-manager-plugin installed)'}}}", meta);
	ck_load(&c, json);
	ck_run(&c, "ssm.reachability");
	f = ck_one(&c, HP_TAG_WARN, "KMS-encrypted");
	T_CONTAINS(f->message, "--ssm-transport plugin");
	ck_free(&c);

	/* The agent asked for an action the client refused: the node answered, not unreachable. */
	snprintf(json, sizeof(json), "{%s,'probes':{"
		 "'i-1':{'state':'skipped','reason':'the SSM agent asked for handshake action FutureAction, which hpnode does not support; the node answered but ended the session: x'}}}", meta);
	ck_load(&c, json);
	ck_run(&c, "ssm.reachability");
	f = ck_one(&c, HP_TAG_WARN, "session feature hpnode does not support");
	T_EQ(f->prio, HP_P2);
	T_CONTAINS(f->message, "1 node answered");
	T_EQ(ck_count_msg(&c, HP_TAG_FAIL, "Cannot reach"), 0);
	ck_free(&c);
}

static void t_note_and_many_skipped(void)
{
	struct ck c;
	const struct hp_finding *f;
	struct hp_buf j = HP_BUF_INIT(1 << 20);
	int i;

	hp_buf_puts(&j, "{'probes_meta':{'transport':'native','note':'on-node probes not run (--no-probe)'},'probes':{");
	for (i = 0; i < 12; i++)
		hp_buf_printf(&j, "%s'i-%d':{'state':'skipped','reason':'not probed after ssm:StartSession failed with AccessDeniedException'}",
			      i ? "," : "", i);
	hp_buf_puts(&j, "}}");
	ck_load(&c, j.buf);
	ck_run(&c, "ssm.reachability");
	f = ck_one(&c, HP_TAG_INFO, "SSM probes: 0 nodes probed, 0 unreachable, 12 not probed");
	T_ASSERT(ck_evidence_has(f, "--no-probe"));
	f = ck_one(&c, HP_TAG_SKIP, "12 nodes not probed: not probed after ssm:StartSession failed with AccessDeniedException");
	T_ASSERT(ck_evidence_has(f, "AccessDeniedException"));
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
	hp_buf_release(&j);
}

T_MAIN(T(t_silent_without_a_sweep), T(t_not_run), T(t_mixed_outcomes), T(t_all_probed_passes),
       T(t_many_unreachable_summarised), T(t_every_node_failed_alike), T(t_plugin_and_kms_skips),
       T(t_note_and_many_skipped))
