/*
 * ssm.reachability: how the on-node probe sweep went ("probes" and
 * "probes_meta"): a summary line, every unreachable node (§ K.5), nodes
 * skipped and why, the plugin and KMS cases (§ K.4). Nodes that share a
 * reason fold by the rule of fold.h.
 * What the probes found on the nodes is judged by the on-node checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"
#include "fold.h"

struct group {
	char key[96];           /* the reason without its node-specific detail */
	char **reasons;         /* each node's full reason (owned copies) */
	char **ids;             /* their ids (owned): n of each, room for v_alloc and ids_alloc */
	size_t n, v_alloc, ids_alloc;
};

struct groups {
	struct group *g;
	size_t n, alloc;
};

/*
 * The reason without its node-specific tail, cut at the first ": " or " (":
 * "TargetNotConnected: x is not connected." -> "TargetNotConnected".
 */
static void reason_key(const char *reason, char *out, size_t n)
{
	const char *a = strstr(reason, ": "), *b = strstr(reason, " (");
	size_t len = strlen(reason);

	if (a && (size_t)(a - reason) < len)
		len = (size_t)(a - reason);
	if (b && (size_t)(b - reason) < len)
		len = (size_t)(b - reason);
	if (!len) {
		hp_strlcpy(out, "no reason given", n);
		return;
	}
	if (len >= n)
		len = n - 1;
	memcpy(out, reason, len);
	out[len] = '\0';
}

static void add(struct groups *gs, const char *id, const cJSON *e)
{
	char key[96];
	struct group *g = NULL;
	size_t i;

	reason_key(hp_check_str(e, "reason", ""), key, sizeof(key));
	for (i = 0; i < gs->n; i++)
		if (!strcmp(gs->g[i].key, key))
			g = &gs->g[i];
	if (!g) {
		gs->g = hp_array_grow(gs->g, &gs->alloc, gs->n, 1, sizeof(*gs->g));
		g = &gs->g[gs->n++];
		memset(g, 0, sizeof(*g));
		hp_strlcpy(g->key, key, sizeof(g->key));
	}
	/* Copies: an entry of the probe store is good only until the walk moves on. */
	g->reasons = hp_array_grow(g->reasons, &g->v_alloc, g->n, 1, sizeof(*g->reasons));
	g->ids = hp_array_grow(g->ids, &g->ids_alloc, g->n, 1, sizeof(*g->ids));
	g->reasons[g->n] = xstrdup(hp_check_str(e, "reason", ""));
	g->ids[g->n] = xstrdup(id);
	g->n++;
}

static void release(struct groups *gs)
{
	size_t i;

	for (i = 0; i < gs->n; i++) {
		size_t k;

		for (k = 0; k < gs->g[i].n; k++) {
			free(gs->g[i].reasons[k]);
			free(gs->g[i].ids[k]);
		}
		free(gs->g[i].reasons);
		free(gs->g[i].ids);
	}
	free(gs->g);
}

static int by_size(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->key, y->key);
}

/*
 * The nodes of one reason in a fold: each one's own message (used when
 * they are few), and "<id>: <full reason>" for the folded finding.
 */
static void fill(struct hp_fold *fold, const struct group *g, const char *hint)
{
	char clip[HP_CHECK_CLIP_SIZE];
	size_t k;

	for (k = 0; k < g->n; k++) {
		const char *reason = hp_check_clip(g->reasons[k], clip);
		struct hp_fold_item *it;

		if (fold->tag == HP_TAG_SKIP)
			it = hp_fold_add(fold, g->ids[k], "Node %s not probed: %s", g->ids[k], reason);
		else
			it = hp_fold_add(fold, g->ids[k], "Cannot reach node %s via SSM: %s%s",
					 g->ids[k], reason, hint);
		hp_fold_line(it, "%.40s: %s", g->ids[k], reason);
	}
}

static void report_unreachable(struct hp_emit *em, struct groups *gs, size_t attempted)
{
	size_t i;

	if (gs->n)
		qsort(gs->g, gs->n, sizeof(*gs->g), by_size);
	for (i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];
		/* Every node failing alike points away from the nodes. */
		int everyone = gs->n == 1 && g->n == attempted && g->n >= 2;
		const char *hint = everyone
			? " \xE2\x80\x94 every probed node failed the same way: check the ssm, "
			  "ssmmessages and ec2messages endpoints and IAM before the nodes"
			: "";
		struct hp_fold fold = HP_FOLD_INIT(HP_TAG_FAIL, HP_P1, everyone ? "K.5+B.4" : "K.5");

		fill(&fold, g, hint);
		hp_fold_emit(em, &fold, "Cannot reach %zu nodes via SSM: %s%s", g->n, g->key, hint);
	}
}

/* Skips that deserve more than an INFO line: one finding for all their nodes. */
static int special_skip(struct hp_emit *em, const struct group *g)
{
	const char *r = g->reasons[0];
	struct hp_fold fold = HP_FOLD_INIT(HP_TAG_WARN, HP_P2, "K.5");

	if (strstr(r, "session-manager-plugin") && strstr(r, "not found")) {
		fold.section = "K.4";
		fill(&fold, g, "");
		hp_fold_emit_one(em, &fold,
				 "SSM plugin missing \xE2\x80\x94 on-node checks skipped on %zu node%s "
				 "(--ssm-transport plugin needs session-manager-plugin on PATH)",
				 g->n, g->n == 1 ? "" : "s");
	} else if (strstr(r, "session-manager-plugin") && strstr(r, "broken")) {
		fold.prio = HP_P1;
		fold.section = "K.4";
		fill(&fold, g, "");
		hp_fold_emit_one(em, &fold,
				 "SSM plugin installed but broken \xE2\x80\x94 on-node checks skipped on "
				 "%zu node%s", g->n, g->n == 1 ? "" : "s");
	} else if (strstr(r, "handshake action") && strstr(r, "does not support")) {
		fill(&fold, g, "");
		hp_fold_emit_one(em, &fold,
				 "SSM agent asked for a session feature hpnode does not support; %zu node%s "
				 "answered but %s not probed (a newer hpnode or --ssm-transport plugin "
				 "may handle it)", g->n, g->n == 1 ? "" : "s",
				 g->n == 1 ? "was" : "were");
	} else if (strstr(r, "KMS-encrypted")) {
		fill(&fold, g, "");
		hp_fold_emit_one(em, &fold,
				 "SSM sessions are KMS-encrypted; %zu node%s not probed \xE2\x80\x94 run with "
				 "--ssm-transport plugin (or auto) and session-manager-plugin installed",
				 g->n, g->n == 1 ? "" : "s");
	} else {
		return 0;
	}
	return 1;
}

static void report_skipped(struct hp_emit *em, struct groups *gs)
{
	size_t i;

	if (gs->n)
		qsort(gs->g, gs->n, sizeof(*gs->g), by_size);
	for (i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];
		struct hp_fold fold = HP_FOLD_INIT(HP_TAG_SKIP, HP_PNONE, "");

		if (special_skip(em, g))
			continue;
		fill(&fold, g, "");
		hp_fold_emit(em, &fold, "%zu nodes not probed: %s", g->n, g->key);
	}
}

/*
 * How the probed set was chosen when not every node could be probed (a
 * sample, or more nodes than the run budget reaches): the nodes other
 * signals named first, then the groups in turn, and what each group got.
 */
static void report_order(struct hp_emit *em, const cJSON *meta)
{
	const char *reason = hp_check_str(meta, "order_reason", NULL);
	const cJSON *g;
	struct hp_buf by = HP_BUF_INIT(HP_MAX_LINE);
	char clip[HP_CHECK_CLIP_SIZE];
	size_t ngroups = 0;

	if (!hp_json_get(meta, "order"))
		return;
	cJSON_ArrayForEach(g, hp_json_get(meta, "probed_by_group")) {
		if (!g->string || !cJSON_IsNumber(g) || ngroups++ >= 16)
			continue;
		hp_buf_printf(&by, "%s%s %.0f", by.len ? ", " : "", hp_check_clip(g->string, clip),
			      g->valuedouble);
	}
	if (ngroups > 16)
		hp_buf_printf(&by, ", and %zu more groups", ngroups - 16);
	HP_CHECK_INFO(em, "Probe order (%s): %.0f node%s named by other signals (events, health-agent "
		      "and lifecycle logs, Kubernetes, Slurm) first, then each instance group in turn; "
		      "per group: %s; %d Running node%s not probed (probes_meta.unprobed in the JSON)",
		      reason && !strcmp(reason, "sample") ? "--sample" : "more nodes than the run "
		      "budget reaches", hp_json_num(meta, "signalled", 0),
		      hp_json_num(meta, "signalled", 0) == 1 ? "" : "s", by.len ? by.buf : "none",
		      hp_json_len(meta, "unprobed"), hp_json_len(meta, "unprobed") == 1 ? "" : "s");
	hp_buf_release(&by);
}

static void run_reachability(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *meta = hp_snapshot_get(snap, "probes_meta");
	struct hp_probe_iter it;
	const cJSON *e;
	struct groups unreachable = { NULL, 0, 0 }, skipped = { NULL, 0, 0 };
	size_t probed = 0, nunreach = 0, nskip = 0, terminated = 0;
	const char *note;
	char clip[HP_CHECK_CLIP_SIZE];

	if (!cJSON_IsObject(meta))
		return;
	note = hp_check_str(meta, "note", NULL);
	if (note && !hp_probes_count(snap, "probes")) {
		HP_CHECK_INFO(em, "On-node probes not run: %s", hp_check_clip(note, clip));
		return;
	}
	for (e = hp_probes_first(snap, "probes", &it); e; e = hp_probes_next(&it)) {
		const char *st = hp_check_str(e, "state", "");

		if (!cJSON_IsObject(e) || !e->string)
			continue;
		if (hp_json_bool(e, "terminated", 0))
			terminated++;
		if (!strcmp(st, "probed")) {
			probed++;
		} else if (!strcmp(st, "unreachable")) {
			nunreach++;
			add(&unreachable, e->string, e);
		} else {
			nskip++;
			add(&skipped, e->string, e);
		}
	}
	{
		struct hp_finding *f = HP_CHECK_INFO(
			em, "SSM probes: %zu node%s probed, %zu unreachable, %zu not probed "
			"(%s transport, %.0f at once, %g StartSession/s, %.0f s per node)",
			probed, probed == 1 ? "" : "s", nunreach, nskip,
			hp_check_str(meta, "transport", "native"), hp_json_num(meta, "concurrency", 0),
			hp_json_num(meta, "rate_per_s", 0), hp_json_num(meta, "timeout_s", 0));
		char line[128];

		if (note)
			hp_finding_evidence(f, hp_check_clip(note, clip));
		if (hp_json_get(meta, "wall_ms")) {
			snprintf(line, sizeof(line), "sweep took %.1f s",
				 hp_json_num(meta, "wall_ms", 0) / 1000.0);
			hp_finding_evidence(f, line);
		}
		if (terminated) {
			snprintf(line, sizeof(line), "TerminateSession called for %zu unfinished session%s",
				 terminated, terminated == 1 ? "" : "s");
			hp_finding_evidence(f, line);
		}
	}
	report_order(em, meta);
	report_unreachable(em, &unreachable, probed + nunreach);
	report_skipped(em, &skipped);
	if (probed && !nunreach)
		hp_emit(em, HP_TAG_PASS, "All %zu probed node%s answered over SSM", probed,
			probed == 1 ? "" : "s");
	release(&unreachable);
	release(&skipped);
}

HP_CHECK(ssm_reachability, HP_GROUP_SSM, 30,
	 .id = "ssm.reachability", .section = "K.5", .prio = HP_P1, .run = run_reachability);
