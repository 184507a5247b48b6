/*
 * Private to src/checks: how a check is declared, and the small text
 * helpers the area files share. Nothing outside src/checks includes this;
 * the public side is include/hp/check.h.
 *
 * Adding a check
 * --------------
 *
 * A check is one HP_CHECK row in the area file it belongs to (cluster.c,
 * kube.c, node-gpu.c, ...) plus its judge function. There is no list to
 * extend: tests/tools/check-list.sh finds the rows at build time and
 * writes $(BUILD)/gen/hp_checks.h, which registry.c turns into hp_checks[].
 *
 * 1. Write the row, e.g.
 *
 *	HP_CHECK(node_gpu_power, HP_GROUP_ONNODE, 225,
 *		 .id = "node.gpu-power", .section = "G.1", .prio = HP_P1,
 *		 .each_node = judge_power);
 *
 *    The first three arguments stay on the HP_CHECK line (the script reads
 *    them there): the object's name (hp_check_<name>), the report group
 *    and the order within the group. Findings are reported by group, then
 *    by order; leave gaps (10, 20, ...) so a new row fits between two.
 *    .id is "area.name", lower case; .section names sections of the
 *    reference document (references/node-diagnostics-detail.md unless
 *    .doc names another embedded one), "+"-joined, "" for none.
 *
 * 2. Write the judge. A check over the whole snapshot sets
 *    .run = run_x and emits with hp_emit()/hp_emitx(); an on-node check
 *    sets .each_node = judge_x, reads the node's facts (c->facts, decoded
 *    once per snapshot and unpacked once per node for every on-node judge:
 *    the node pass, hp_node_pass) and records results with hp_node_say(),
 *    once per node. Results about many nodes go through one fold (fold.h), never a
 *    counter of their own.
 *
 * 3. If the check needs data nothing collects yet: the collector, and for
 *    an on-node check the probe (src/collect/probe/probe.sh and its block
 *    parser).
 *
 * 4. The reference document: the section the row points at exists (a
 *    unit test fails otherwise) and quotes the finding's text where the
 *    guide tells what hpnode prints (t0610-guide-quotes checks the quotes).
 *
 * 5. Tests: the judge's cases in tests/unit/test-checks-<area>.c, the id in
 *    its place in the report order of test-checks-registry.c, and a row in
 *    the check tables of references/checks.md (the same test compares them with the
 *    registry both ways).
 */
#ifndef HP_CHECKS_PRIVATE_H
#define HP_CHECKS_PRIVATE_H

#include <cjson/cJSON.h>

#include "hp/check.h"
#include "hp/text.h"

/*
 * Defines the check hp_check_<name> in report group grp at place ord,
 * with the remaining fields given as designated initialisers. Keep
 * "HP_CHECK(name, group, order," on one line.
 */
#define HP_CHECK(name, grp, ord, ...) \
	const struct hp_check hp_check_##name = { .group = (grp), .order = (ord), __VA_ARGS__ }

/* An INFO line: no priority, no section pointer, no node. */
#define HP_CHECK_INFO(em, ...) hp_emitx((em), HP_TAG_INFO, HP_PNONE, "", NULL, __VA_ARGS__)

/* Free text from the cluster is cut at this many characters, plus "…". */
#define HP_CHECK_CLIP_CHARS 200
#define HP_CHECK_CLIP_SIZE HP_CLIP_SIZE(HP_CHECK_CLIP_CHARS)

/*
 * Copy s (NULL reads as "") into out, cut after HP_CHECK_CLIP_CHARS UTF-8
 * characters with "…" appended when anything was cut; returns out.
 */
const char *hp_check_clip(const char *s, char out[HP_CHECK_CLIP_SIZE]);

/* Epoch seconds as "2025-01-31T12:00:00Z"; "unknown time" when s < 0. */
const char *hp_check_iso_time(double s, char out[32]);

/* String member at a dotted path, or def when absent or empty. */
const char *hp_check_str(const cJSON *obj, const char *path, const char *def);

#endif
