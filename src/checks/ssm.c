/*
 * ssm.reachability: how the on-node probe sweep went ("probes" and
 * "probes_meta"): a summary line, every unreachable node (§ K.5), nodes
 * skipped and why, the plugin and KMS cases (§ K.4). Nodes that share a
 * reason are summarised in one finding with every id in its evidence.
 * What the probes found on the nodes is judged by the on-node checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/json.h"
#include "checks.h"

/* Up to this many nodes per reason get one finding each. */
#define ONE_BY_ONE 10
#define IDS_PER_LINE 100
#define SAMPLES 5

struct group {
	char key[96];           /* the reason without its node-specific detail */
	const cJSON **v;        /* probe entries */
	const char **ids;       /* their ids: n of each, room for v_alloc and ids_alloc */
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
	g->v = hp_array_grow(g->v, &g->v_alloc, g->n, 1, sizeof(*g->v));
	g->ids = hp_array_grow(g->ids, &g->ids_alloc, g->n, 1, sizeof(*g->ids));
	g->v[g->n] = e;
	g->ids[g->n] = id;
	g->n++;
}

static void release(struct groups *gs)
{
	size_t i;

	for (i = 0; i < gs->n; i++) {
		free(gs->g[i].v);
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

/* A few full reasons, then every id. */
static void evidence(struct hp_finding *f, const struct group *g)
{
	char line[HP_CHECK_CLIP_SIZE + 64], clip[HP_CHECK_CLIP_SIZE];
	size_t i;

	for (i = 0; i < g->n; i++)
		hp_finding_node(f, g->ids[i]);
	for (i = 0; i < g->n && i < SAMPLES; i++) {
		snprintf(line, sizeof(line), "%.40s: %s", g->ids[i],
			 hp_check_clip(hp_check_str(g->v[i], "reason", ""), clip));
		hp_finding_evidence(f, line);
	}
	for (i = 0; i < g->n; i += IDS_PER_LINE) {
		struct hp_buf ids = HP_BUF_INIT(HP_MAX_LINE);
		size_t j, end = i + IDS_PER_LINE < g->n ? i + IDS_PER_LINE : g->n;

		hp_buf_printf(&ids, "ids %zu-%zu of %zu:", i + 1, end, g->n);
		for (j = i; j < end; j++)
			hp_buf_printf(&ids, " %.40s", g->ids[j]);
		hp_finding_evidence(f, ids.buf);
		hp_buf_release(&ids);
	}
}

static void report_unreachable(struct hp_emit *em, struct groups *gs, size_t attempted)
{
	char clip[HP_CHECK_CLIP_SIZE];
	size_t i, k;

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
		const char *section = everyone ? "K.5+B.4" : "K.5";
		struct hp_finding *f;

		if (g->n <= ONE_BY_ONE) {
			for (k = 0; k < g->n; k++)
				hp_emitx(em, HP_TAG_FAIL, HP_P1, section, g->ids[k],
					 "Cannot reach node %s via SSM: %s%s", g->ids[k],
					 hp_check_clip(hp_check_str(g->v[k], "reason", ""), clip), hint);
			continue;
		}
		f = hp_emitx(em, HP_TAG_FAIL, HP_P1, section, NULL,
			     "Cannot reach %zu nodes via SSM: %s%s", g->n, g->key, hint);
		evidence(f, g);
	}
}

/* Skips that deserve more than an INFO line. */
static int special_skip(struct hp_emit *em, const struct group *g)
{
	const char *r = hp_check_str(g->v[0], "reason", "");
	struct hp_finding *f;

	if (strstr(r, "session-manager-plugin") && strstr(r, "not found")) {
		f = hp_emitx(em, HP_TAG_WARN, HP_P2, "K.4", NULL,
			     "SSM plugin missing \xE2\x80\x94 on-node checks skipped on %zu node%s "
			     "(--ssm-transport plugin needs session-manager-plugin on PATH)",
			     g->n, g->n == 1 ? "" : "s");
	} else if (strstr(r, "session-manager-plugin") && strstr(r, "broken")) {
		f = hp_emitx(em, HP_TAG_WARN, HP_P1, "K.4", NULL,
			     "SSM plugin installed but broken \xE2\x80\x94 on-node checks skipped on %zu node%s",
			     g->n, g->n == 1 ? "" : "s");
	} else if (strstr(r, "handshake action") && strstr(r, "does not support")) {
		f = hp_emitx(em, HP_TAG_WARN, HP_P2, "K.5", NULL,
			     "SSM agent asked for a session feature hpnode does not support; %zu node%s "
			     "answered but %s not probed (a newer hpnode or --ssm-transport plugin "
			     "may handle it)", g->n, g->n == 1 ? "" : "s", g->n == 1 ? "was" : "were");
	} else if (strstr(r, "KMS-encrypted")) {
		f = hp_emitx(em, HP_TAG_WARN, HP_P2, "K.5", NULL,
			     "SSM sessions are KMS-encrypted; %zu node%s not probed \xE2\x80\x94 run with "
			     "--ssm-transport plugin (or auto) and session-manager-plugin installed",
			     g->n, g->n == 1 ? "" : "s");
	} else {
		return 0;
	}
	evidence(f, g);
	return 1;
}

static void report_skipped(struct hp_emit *em, struct groups *gs)
{
	char clip[HP_CHECK_CLIP_SIZE];
	size_t i, k;

	if (gs->n)
		qsort(gs->g, gs->n, sizeof(*gs->g), by_size);
	for (i = 0; i < gs->n; i++) {
		const struct group *g = &gs->g[i];
		struct hp_finding *f;

		if (special_skip(em, g))
			continue;
		if (g->n <= ONE_BY_ONE) {
			for (k = 0; k < g->n; k++)
				hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", g->ids[k], "Node %s not probed: %s",
					 g->ids[k], hp_check_clip(hp_check_str(g->v[k], "reason", ""), clip));
			continue;
		}
		f = hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL, "%zu nodes not probed: %s", g->n,
			     g->key);
		evidence(f, g);
	}
}

static void run_reachability(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *meta = hp_snapshot_get(snap, "probes_meta");
	const cJSON *probes = hp_snapshot_get(snap, "probes"), *e;
	struct groups unreachable = { NULL, 0, 0 }, skipped = { NULL, 0, 0 };
	size_t probed = 0, nunreach = 0, nskip = 0, terminated = 0;
	const char *note;
	char clip[HP_CHECK_CLIP_SIZE];

	if (!cJSON_IsObject(meta))
		return;
	note = hp_check_str(meta, "note", NULL);
	if (note && !cJSON_GetArraySize(probes)) {
		HP_CHECK_INFO(em, "On-node probes not run: %s", hp_check_clip(note, clip));
		return;
	}
	cJSON_ArrayForEach(e, probes) {
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
	report_unreachable(em, &unreachable, probed + nunreach);
	report_skipped(em, &skipped);
	if (probed && !nunreach)
		hp_emit(em, HP_TAG_PASS, "All %zu probed node%s answered over SSM", probed,
			probed == 1 ? "" : "s");
	release(&unreachable);
	release(&skipped);
}

const struct hp_check hp_check_ssm_reachability = {
	.id = "ssm.reachability",
	.section = "K.5",
	.prio = HP_P1,
	.scope = HP_SCOPE_NODE,
	.group = HP_GROUP_SSM,
	.summary = "on-node probe sweep over SSM: unreachable nodes (TargetNotConnected, timeouts, "
		   "dropped sessions), skipped nodes and why",
	.run = run_reachability,
};
