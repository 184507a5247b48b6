/*
 * Stable finding keys (include/hp/check.h): the check, the subject and the
 * class of problem, never the wording; the same key for a node whether its
 * finding stands alone or is folded with others; equal keys numbered per
 * family; "key"/"keys" in JSON and the key as the JUnit testcase name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/checks/fold.h"
#include "hp/report.h"
#include "t.h"

static const struct hp_check c_disk = {
	.id = "node.disk-root", .section = "C", .prio = HP_P1, .group = HP_GROUP_ONNODE,
};
static const struct hp_check c_groups = {
	.id = "cluster.instance-groups", .section = "J", .prio = HP_P1, .group = HP_GROUP_NODES,
};

static char *key_of(const struct hp_finding *f)
{
	struct hp_buf b = HP_BUF_INIT(4096);

	hp_finding_key(f, &b);
	return hp_buf_detach(&b, NULL);
}

/* A reworded message (a count, other words) keeps its key; subject and class change it. */
static void t_wording_is_not_identity(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_disk, &f };
	char *a, *b, *c, *d;

	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, "i-0abc", "Root volume 93%% full on node i-0abc");
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, "i-0abc", "The root filesystem of i-0abc is at 97 %%");
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, "i-0def", "Root volume 93%% full on node i-0def");
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, "C.2", "i-0abc", "Root volume 93%% full on node i-0abc");
	a = key_of(&f.v[0]);
	b = key_of(&f.v[1]);
	c = key_of(&f.v[2]);
	d = key_of(&f.v[3]);
	T_STREQ(a, "node.disk-root/i-0abc");
	T_STREQ(a, b);                         /* reworded: same key */
	T_STREQ(c, "node.disk-root/i-0def");   /* other subject */
	T_STREQ(d, "node.disk-root/i-0abc#C.2"); /* other class (section) */
	/* A priority change is not a new problem either. */
	f.v[1].prio = HP_P0;
	free(b);
	b = key_of(&f.v[1]);
	T_STREQ(a, b);
	free(a);
	free(b);
	free(c);
	free(d);
	hp_findings_release(&f);
}

/* Subjects from the check, else from placeholder values; classes from the check. */
static void t_subject_and_class(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_groups, &f };
	struct hp_finding *x;
	char *k;

	x = hp_emit(&em, HP_TAG_FAIL, "Group worker-g5 is 1 node short");
	hp_finding_var(x, "GROUP", "worker-g5");
	k = key_of(x);
	T_STREQ(k, "cluster.instance-groups/worker-g5");
	free(k);
	x = hp_emit(&em, HP_TAG_WARN, "Pod is crash-looping");
	hp_finding_var(x, "NAMESPACE", "training");
	hp_finding_var(x, "POD", "llama-0");
	hp_finding_var(x, "GROUP", "gpu");
	k = key_of(x);
	T_STREQ(k, "cluster.instance-groups/training/llama-0");
	free(k);
	hp_finding_subject(x, "sg 1\tx");
	hp_finding_class(x, "OOM");
	k = key_of(x);
	T_STREQ(k, "cluster.instance-groups/sg_1_x#OOM"); /* one token, no blank */
	free(k);
	x = hp_emit(&em, HP_TAG_PASS, "Every group at target");
	k = key_of(x);
	T_STREQ(k, "cluster.instance-groups");
	free(k);
	hp_findings_release(&f);
}

/* A node folded with others has the key it has alone. */
static void t_folded_keeps_node_keys(void)
{
	struct hp_findings few = { 0 }, many = { 0 };
	struct hp_emit e1 = { &c_disk, &few }, e2 = { &c_disk, &many };
	struct hp_fold a = HP_FOLD_INIT(HP_TAG_FAIL, HP_P1, NULL);
	struct hp_fold b = HP_FOLD_INIT(HP_TAG_FAIL, HP_P1, NULL);
	struct hp_buf k = HP_BUF_INIT(4096);
	char *alone;
	size_t i;

	hp_fold_add(&a, "i-2", "node i-2 is full");
	hp_fold_emit(&e1, &a, "%zu nodes full", hp_fold_count(&a));
	T_EQ(few.n, 1);
	alone = key_of(&few.v[0]);
	for (i = 0; i < 6; i++) {
		char id[8];

		snprintf(id, sizeof(id), "i-%zu", i);
		hp_fold_add(&b, id, "node %s is full", id);
	}
	hp_fold_emit(&e2, &b, "%zu nodes full", hp_fold_count(&b));
	T_EQ(many.n, 1);
	T_ASSERT(hp_finding_per_node(&many.v[0]));
	hp_finding_node_key(&many.v[0], 2, &k);
	T_STREQ(k.buf, alone);
	hp_finding_key(&many.v[0], &k);
	T_STREQ(k.buf, "node.disk-root/nodes");
	free(alone);
	hp_buf_release(&k);
	hp_findings_release(&few);
	hp_findings_release(&many);
}

/* Equal keys are numbered in order, FAIL/WARN apart from the others. */
static void t_numbering(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_groups, &f };
	char *k;

	hp_emit(&em, HP_TAG_PASS, "one");
	hp_emit(&em, HP_TAG_FAIL, "two");
	hp_emit(&em, HP_TAG_PASS, "three");
	hp_emit(&em, HP_TAG_WARN, "four");
	hp_findings_number_keys(&f);
	k = key_of(&f.v[0]);
	T_STREQ(k, "cluster.instance-groups");
	free(k);
	k = key_of(&f.v[1]);
	T_STREQ(k, "cluster.instance-groups");  /* the first problem: a PASS before it moves nothing */
	free(k);
	k = key_of(&f.v[2]);
	T_STREQ(k, "cluster.instance-groups~2");
	free(k);
	k = key_of(&f.v[3]);
	T_STREQ(k, "cluster.instance-groups~2");
	free(k);
	hp_findings_release(&f);
}

/* JSON "key"/"keys" and the JUnit testcase names. */
static void t_reports_carry_keys(void)
{
	struct hp_findings f = { 0 };
	struct hp_emit em = { &c_disk, &f };
	struct hp_report_opts o;
	struct hp_buf b = HP_BUF_INIT((size_t)1 << 20);
	struct hp_finding *x;
	size_t i;

	memset(&o, 0, sizeof(o));
	x = hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "5 nodes full");
	for (i = 0; i < 5; i++) {
		char id[8];

		snprintf(id, sizeof(id), "i-%zu", i);
		hp_finding_node(x, id);
	}
	hp_emitx(&em, HP_TAG_WARN, HP_P2, "C.3", "i-9", "almost full");
	hp_findings_number_keys(&f);
	hp_report_json(&f, &o, &b);
	T_CONTAINS(b.buf, "\"key\":\"node.disk-root/nodes\",\"keys\":[\"node.disk-root/i-0\","
		   "\"node.disk-root/i-1\",\"node.disk-root/i-2\",\"node.disk-root/i-3\","
		   "\"node.disk-root/i-4\"]");
	T_CONTAINS(b.buf, "\"key\":\"node.disk-root/i-9#C.3\",\"keys\":[\"node.disk-root/i-9#C.3\"]");
	hp_buf_reset(&b);
	hp_report_junit(&f, &o, &b);
	T_CONTAINS(b.buf, "name=\"node.disk-root/i-3\"");
	T_CONTAINS(b.buf, "name=\"node.disk-root/i-9#C.3\"");
	hp_buf_release(&b);
	hp_findings_release(&f);
}

T_MAIN(T(t_wording_is_not_identity), T(t_subject_and_class), T(t_folded_keeps_node_keys),
       T(t_numbering), T(t_reports_carry_keys))
