/*
 * Private to src/checks: many nodes, one finding. Every check that says
 * the same thing about many nodes (HyperPod node states, Kubernetes
 * labels, Slurm states, SSM reachability, on-node results) folds through
 * here, so one rule decides when a list of nodes becomes one finding.
 *
 * The rule. A fold holds the results a check calls alike: same tag,
 * priority, section and wording, told apart only by the node. Then
 *
 *  - below HP_FOLD_MIN nodes, each node gets its own finding: its own
 *    message, node and evidence, in the order they were added;
 *  - from HP_FOLD_MIN nodes on, they become one finding. Its message is
 *    the check's wording with the count; its node is NULL and its `nodes`
 *    array lists every node id in the order added (JSON "nodes", one JUnit
 *    testcase each); its evidence is bounded. For FAIL, WARN and SKIP it
 *    is the lines of the first HP_FOLD_SAMPLE nodes (each node's own
 *    message, or the shorter line hp_fold_line gave), and when there are
 *    more nodes than that, all ids after them, HP_FOLD_IDS_PER_LINE to a
 *    line ("nodes 1-100 of 250: i-… i-…"); for PASS and INFO it is the id
 *    lines alone (made from the finding's ids when read, never kept:
 *    hp_finding_list_ids). The nodes' own evidence lines are not kept. The text
 *    report shows ten evidence lines and, for a PASS or INFO over more
 *    than ten nodes, a sample of five ids instead of the id lines.
 *
 * Use:
 *
 *	struct hp_fold down = HP_FOLD_INIT(HP_TAG_FAIL, HP_P1, "H.1");
 *	it = hp_fold_add(&down, iid, "Slurm node %s is %s", name, state);
 *	hp_fold_evidence(it, reason);
 *	...
 *	hp_fold_emit(em, &down, "%zu Slurm nodes are down", hp_fold_count(&down));
 *
 * hp_fold_emit releases the results, so the fold can be filled again.
 *
 * Memory. A fold keeps of each result only what the rule can still use
 * (hp_fold_keeps): from HP_FOLD_MIN results on it can only come out
 * folded, so a result added then keeps no evidence or placeholder values,
 * a PASS or INFO one no message either, and a FAIL, WARN or SKIP one after
 * the first HP_FOLD_SAMPLE only its node. A fold over 20,000 nodes holds
 * 20,000 pointers to the process-wide ids (hp_finding_id_ref), not 20,000
 * messages.
 */
#ifndef HP_CHECKS_FOLD_H
#define HP_CHECKS_FOLD_H

#include <stdarg.h>
#include <stddef.h>

#include "hp/check.h"

/* Results of this many nodes or more fold into one finding. */
#define HP_FOLD_MIN 4
/* Lines of this many nodes stand in the evidence of a folded FAIL, WARN or SKIP. */
#define HP_FOLD_SAMPLE 25
/* Node ids per "nodes a-b of n:" evidence line (hp_finding_list_ids). */
#define HP_FOLD_IDS_PER_LINE HP_FINDING_IDS_PER_LINE

struct hp_fold_item;

struct hp_fold {
	enum hp_tag tag;
	enum hp_prio prio;          /* of FAIL and WARN; the others get none */
	const char *section;        /* NULL: the check's own; "": none */
	struct hp_fold_item *v;
	size_t n, alloc;
};

#define HP_FOLD_INIT(tag, prio, section) { (tag), (prio), (section), NULL, 0, 0 }

/* What a fold keeps of a result (hp_fold_keeps). */
enum hp_fold_keep {
	HP_FOLD_KEEP_NODE = 0,      /* its node alone */
	HP_FOLD_KEEP_LINE = 1,      /* and its message or line (a folded finding's evidence) */
	HP_FOLD_KEEP_ALL = 2        /* and its evidence and values (a finding of its own) */
};

/* What the index-th result (from 0) of a fold of tag can still be used for. */
enum hp_fold_keep hp_fold_keeps(enum hp_tag tag, size_t index);

/*
 * Add one node's result: node is its instance id (NULL when the check
 * could not tell it), the message is what a finding of that node alone
 * says (not even formatted when the fold cannot use it). The item stays
 * valid until the next add.
 */
struct hp_fold_item *hp_fold_add(struct hp_fold *f, const char *node, const char *fmt, ...)
	HP_PRINTF(3, 4);
/* The same with a va_list. */
struct hp_fold_item *hp_fold_vadd(struct hp_fold *f, const char *node, const char *fmt,
				  va_list ap) HP_PRINTF(3, 0);
/*
 * A result whose message the fold cannot use (hp_fold_keeps gave
 * HP_FOLD_KEEP_NODE for its place): its node alone.
 */
struct hp_fold_item *hp_fold_add_node(struct hp_fold *f, const char *node);
/* An evidence line of the node's own finding (kept only when nothing folds). */
void hp_fold_evidence(struct hp_fold_item *it, const char *line);
/*
 * A placeholder value of the node's own finding (hp_finding_var, for
 * --suggest); a folded finding keeps none, since its nodes differ.
 */
void hp_fold_var(struct hp_fold_item *it, const char *name, const char *value);
/* The line standing for the node in a folded finding's evidence (default: its message). */
void hp_fold_line(struct hp_fold_item *it, const char *fmt, ...) HP_PRINTF(2, 3);
/* Results added so far. */
size_t hp_fold_count(const struct hp_fold *f);

/*
 * Emit the results by the rule above; fmt words the folded finding (with
 * the count, which the caller passes: hp_fold_count()). Returns the folded
 * finding, or NULL when each node got its own (or there was none).
 */
struct hp_finding *hp_fold_emit(struct hp_emit *em, struct hp_fold *f, const char *fmt, ...)
	HP_PRINTF(3, 4);
/*
 * One finding for all results whatever their number, in the folded form:
 * for a cause that concerns every node it lists (a missing plugin). NULL
 * when the fold is empty.
 */
struct hp_finding *hp_fold_emit_one(struct hp_emit *em, struct hp_fold *f, const char *fmt, ...)
	HP_PRINTF(3, 4);
/* Drop the results without emitting anything. */
void hp_fold_release(struct hp_fold *f);

#endif
