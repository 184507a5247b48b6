/*
 * The one folding rule (src/checks/fold.h): below HP_FOLD_MIN nodes one
 * finding each, from HP_FOLD_MIN on one finding with the count, every id
 * in nodes and a bounded evidence.
 */
#include <stdio.h>
#include <string.h>

#include "../../src/checks/fold.h"
#include "checks-t.h"
#include "t.h"

static const struct hp_check chk = {
	.id = "x.fold", .section = "F.1", .prio = HP_P1, .group = HP_GROUP_NODES,
};

static void fill(struct hp_fold *f, size_t n, int with_evidence)
{
	char id[32];
	size_t i;

	for (i = 0; i < n; i++) {
		struct hp_fold_item *it;

		snprintf(id, sizeof(id), "i-%03zu", i);
		it = hp_fold_add(f, id, "node %s is down", id);
		if (with_evidence)
			hp_fold_evidence(it, "its own evidence");
	}
}

static void t_empty_says_nothing(void)
{
	struct hp_findings out = { 0 };
	struct hp_emit em = { &chk, &out };
	struct hp_fold f = HP_FOLD_INIT(HP_TAG_FAIL, HP_P0, NULL);

	T_ASSERT(hp_fold_emit(&em, &f, "%zu nodes", hp_fold_count(&f)) == NULL);
	T_ASSERT(hp_fold_emit_one(&em, &f, "%zu nodes", hp_fold_count(&f)) == NULL);
	T_EQ(out.n, 0);
}

/* HP_FOLD_MIN - 1 nodes: one finding each, as a node alone would get it. */
static void t_few_stay_apart(void)
{
	struct hp_findings out = { 0 };
	struct hp_emit em = { &chk, &out };
	struct hp_fold f = HP_FOLD_INIT(HP_TAG_FAIL, HP_P0, NULL);
	size_t i;

	T_EQ(HP_FOLD_MIN, 4);
	fill(&f, HP_FOLD_MIN - 1, 1);
	T_EQ(hp_fold_count(&f), 3);
	T_ASSERT(hp_fold_emit(&em, &f, "%zu nodes are down", hp_fold_count(&f)) == NULL);
	T_EQ(out.n, 3);
	for (i = 0; i < out.n; i++) {
		T_EQ(out.v[i].tag, HP_TAG_FAIL);
		T_EQ(out.v[i].prio, HP_P0);
		T_STREQ(out.v[i].section, "F.1"); /* NULL: the check's own */
		T_ASSERT(out.v[i].nodes == NULL);
		T_EQ(ck_evidence_len(&out.v[i]), 1);
	}
	T_STREQ(out.v[2].node, "i-002");
	T_STREQ(out.v[2].message, "node i-002 is down");
	/* Emitting released the results: the fold is empty and can be filled again. */
	T_EQ(hp_fold_count(&f), 0);
	hp_findings_release(&out);
}

/* HP_FOLD_MIN nodes: one finding, every id, own lines, no own evidence. */
static void t_many_fold(void)
{
	struct hp_findings out = { 0 };
	struct hp_emit em = { &chk, &out };
	struct hp_fold f = HP_FOLD_INIT(HP_TAG_WARN, HP_P2, "F.2");
	struct hp_finding *x;

	fill(&f, HP_FOLD_MIN, 1);
	x = hp_fold_emit(&em, &f, "%zu nodes are down", hp_fold_count(&f));
	T_ASSERT(x == &out.v[0]);
	T_EQ(out.n, 1);
	T_STREQ(x->message, "4 nodes are down");
	T_ASSERT(x->node == NULL);
	T_STREQ(x->section, "F.2");
	T_EQ(x->prio, HP_P2);
	T_EQ((int)x->nnodes, 4);
	T_STREQ(x->nodes[3], "i-003");
	/* Each node's line; no id lines, as every node has its line. */
	T_EQ(ck_evidence_len(x), 4);
	T_STREQ(ck_line(x, 0), "node i-000 is down");
	T_STREQ(ck_line(x, 3), "node i-003 is down");
	T_ASSERT(!ck_evidence_has(x, "its own evidence"));
	T_ASSERT(!ck_evidence_has(x, "nodes 1-"));
	hp_findings_release(&out);
}

/* The evidence is bounded: HP_FOLD_SAMPLE lines, then 100 ids a line. */
static void t_bounded_evidence(void)
{
	struct hp_findings out = { 0 };
	struct hp_emit em = { &chk, &out };
	struct hp_fold f = HP_FOLD_INIT(HP_TAG_SKIP, HP_P1, "");
	struct hp_finding *x;

	fill(&f, 250, 0);
	x = hp_fold_emit(&em, &f, "%zu nodes not probed", hp_fold_count(&f));
	T_EQ(x->prio, HP_PNONE);
	T_EQ((int)x->nnodes, 250);
	T_EQ(ck_evidence_len(x), HP_FOLD_SAMPLE + 3);
	T_STREQ(ck_line(x, HP_FOLD_SAMPLE - 1),
		"node i-024 is down");
	T_CONTAINS(ck_line(x, HP_FOLD_SAMPLE),
		   "nodes 1-100 of 250: i-000 i-001");
	T_CONTAINS(ck_line(x, HP_FOLD_SAMPLE + 2),
		   "nodes 201-250 of 250: i-200");
	T_CONTAINS(ck_line(x, HP_FOLD_SAMPLE + 2), " i-249");
	hp_findings_release(&out);
}

/* PASS and INFO folds list only ids; hp_fold_line shortens a node's line. */
static void t_passes_list_ids_and_lines(void)
{
	struct hp_findings out = { 0 };
	struct hp_emit em = { &chk, &out };
	struct hp_fold pass = HP_FOLD_INIT(HP_TAG_PASS, HP_P1, NULL);
	struct hp_fold fail = HP_FOLD_INIT(HP_TAG_FAIL, HP_P1, NULL);
	struct hp_finding *x;
	size_t i;

	fill(&pass, 5, 0);
	x = hp_fold_emit(&em, &pass, "Fine on %zu nodes", hp_fold_count(&pass));
	T_EQ(x->prio, HP_PNONE);
	T_EQ(ck_evidence_len(x), 1);
	T_STREQ(ck_line(x, 0),
		"nodes 1-5 of 5: i-000 i-001 i-002 i-003 i-004");
	for (i = 0; i < 5; i++) {
		struct hp_fold_item *it = hp_fold_add(&fail, i == 2 ? NULL : "i-x", "long %zu", i);

		hp_fold_line(it, "short %zu", i);
	}
	x = hp_fold_emit(&em, &fail, "%zu bad", hp_fold_count(&fail));
	T_STREQ(x->message, "5 bad");
	T_STREQ(ck_line(x, 0), "short 0");
	T_EQ(ck_evidence_len(x), 5);
	/* A node the check could not name counts, but has no id to list. */
	T_EQ((int)x->nnodes, 4);
	hp_findings_release(&out);

	/* Past the sample, the id lines count only the named nodes. */
	for (i = 0; i < HP_FOLD_SAMPLE + 2; i++)
		hp_fold_add(&fail, i == 2 ? NULL : "i-x", "long %zu", i);
	x = hp_fold_emit(&em, &fail, "%zu bad", hp_fold_count(&fail));
	T_EQ(ck_evidence_len(x), HP_FOLD_SAMPLE + 1);
	T_CONTAINS(ck_line(x, HP_FOLD_SAMPLE), "nodes 1-26 of 26: i-x");
	hp_findings_release(&out);
}

/* hp_fold_emit_one: the folded form whatever the count. */
static void t_emit_one(void)
{
	struct hp_findings out = { 0 };
	struct hp_emit em = { &chk, &out };
	struct hp_fold f = HP_FOLD_INIT(HP_TAG_WARN, HP_P2, "K.4");
	struct hp_finding *x;

	fill(&f, 1, 1);
	x = hp_fold_emit_one(&em, &f, "plugin missing on %zu node", hp_fold_count(&f));
	T_EQ(out.n, 1);
	T_STREQ(x->message, "plugin missing on 1 node");
	T_ASSERT(x->node == NULL);
	T_EQ((int)x->nnodes, 1);
	T_EQ(ck_evidence_len(x), 1);
	T_STREQ(ck_line(x, 0), "node i-000 is down");
	hp_findings_release(&out);
}

/*
 * What a fold keeps: only what its rule can still use, so a fold over a
 * fleet formats a message for the first results alone and gives the same
 * findings as one that kept everything.
 */
static void t_keeps_only_what_it_uses(void)
{
	static const enum hp_tag tags[] = { HP_TAG_FAIL, HP_TAG_WARN, HP_TAG_SKIP, HP_TAG_PASS,
					    HP_TAG_INFO };
	struct hp_findings out = { 0 };
	struct hp_emit em = { &chk, &out };
	size_t t, i;

	for (t = 0; t < HP_ARRAY_LEN(tags); t++) {
		int problem = tags[t] != HP_TAG_PASS && tags[t] != HP_TAG_INFO;
		struct hp_fold f = HP_FOLD_INIT(tags[t], HP_P1, NULL);
		struct hp_finding *x;
		char id[32];

		T_EQ(hp_fold_keeps(tags[t], 0), HP_FOLD_KEEP_ALL);
		T_EQ(hp_fold_keeps(tags[t], HP_FOLD_MIN - 1), HP_FOLD_KEEP_ALL);
		T_EQ(hp_fold_keeps(tags[t], HP_FOLD_MIN),
		     problem ? HP_FOLD_KEEP_LINE : HP_FOLD_KEEP_NODE);
		T_EQ(hp_fold_keeps(tags[t], HP_FOLD_SAMPLE - 1),
		     problem ? HP_FOLD_KEEP_LINE : HP_FOLD_KEEP_NODE);
		T_EQ(hp_fold_keeps(tags[t], HP_FOLD_SAMPLE), HP_FOLD_KEEP_NODE);
		for (i = 0; i < 1000; i++) {
			struct hp_fold_item *it;

			snprintf(id, sizeof(id), "i-%04zu", i);
			if (hp_fold_keeps(tags[t], i) == HP_FOLD_KEEP_NODE && i % 2) {
				/* What hp_node_each hands over for a result it kept no message of. */
				it = hp_fold_add_node(&f, id);
			} else {
				it = hp_fold_add(&f, id, "node %s is down", id);
			}
			hp_fold_evidence(it, "its own evidence");
			hp_fold_line(it, "%s: down", id);
		}
		T_EQ(hp_fold_count(&f), 1000);
		x = hp_fold_emit(&em, &f, "%zu nodes are down", hp_fold_count(&f));
		T_EQ((int)x->nnodes, 1000);
		T_STREQ(x->nodes[999], "i-0999");
		T_EQ(ck_evidence_len(x), (problem ? HP_FOLD_SAMPLE : 0) + 10);
		if (problem) {
			T_STREQ(ck_line(x, 0), "i-0000: down");
			T_STREQ(ck_line(x, HP_FOLD_SAMPLE - 1), "i-0024: down");
		}
		T_CONTAINS(ck_line(x, problem ? HP_FOLD_SAMPLE : 0), "nodes 1-100 of 1000: i-0000");
		/* Ids are the process-wide copies findings name. */
		T_ASSERT(x->nodes[5] == hp_finding_id_ref("i-0005"));
		hp_findings_release(&out);
	}
}

T_MAIN(T(t_empty_says_nothing), T(t_few_stay_apart), T(t_many_fold), T(t_bounded_evidence),
       T(t_passes_list_ids_and_lines), T(t_emit_one), T(t_keeps_only_what_it_uses))
