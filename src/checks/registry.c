/*
 * The check registry: every check, by pointer, in report order, and the
 * loop that runs them over a snapshot. Also the few text helpers the area
 * files share (clipping remote text, formatting epoch times).
 */
#include <string.h>
#include <time.h>

#include "hp/array.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/text.h"
#include "checks.h"
#include "node.h"

/*
 * hp_checks.h lists every HP_CHECK row of the area files, sorted by report
 * group and order within the group (tests/tools/check-list.sh). Findings
 * come out in this order, and the reporter keeps it within each group; a
 * group's failed-call row (api.*) comes first, so the reason a check is
 * silent is read before the checks themselves.
 */
#define HP_CHECK_ROW(name) extern const struct hp_check hp_check_##name;
#include "hp_checks.h"
#undef HP_CHECK_ROW

const struct hp_check *const hp_checks[] = {
#define HP_CHECK_ROW(name) &hp_check_##name,
#include "hp_checks.h"
#undef HP_CHECK_ROW
};

const size_t hp_checks_count = HP_ARRAY_LEN(hp_checks);

const struct hp_check *hp_check_find(const char *id)
{
	size_t i;

	for (i = 0; i < hp_checks_count; i++)
		if (!strcmp(hp_checks[i]->id, id))
			return hp_checks[i];
	return NULL;
}

/* Checks judge a prepared snapshot only (hp_facts_prepare): what they read is decoded. */
static void must_be_prepared(const struct hp_snapshot *snap)
{
	if (!hp_facts_prepared(snap))
		hp_die("internal error: checks run on a snapshot whose facts were not prepared");
}

void hp_check_run(const struct hp_check *c, const struct hp_snapshot *snap,
		  struct hp_findings *out)
{
	struct hp_emit em = { c, out };

	must_be_prepared(snap);

	if (c->each_node && c->source == HP_SOURCE_NCCL_PROBE)
		hp_node_each_nccl(snap, &em, c->each_node);
	else if (c->each_node)
		hp_node_each(snap, &em, c->each_node);
	else if (c->run)
		c->run(snap, &em);
}

/*
 * The checks with sel[i] set, in registry order. The on-node checks of
 * each probe source are judged first, in one pass over the nodes (each
 * node's facts decoded once for all of them, hp_node_pass), and their
 * findings are put in at their checks' places, so the order is the
 * registry's as if each had run alone.
 */
static void run_selected(const struct hp_snapshot *snap, const unsigned char *sel,
			 struct hp_findings *out, double *secs)
{
	static const enum hp_probe_source sources[] = { HP_SOURCE_NODE_PROBE, HP_SOURCE_NCCL_PROBE };
	struct hp_findings *pre = xcalloc(hp_checks_count, sizeof(*pre));
	const struct hp_check **batch = xcalloc(hp_checks_count, sizeof(*batch));
	size_t *where = xcalloc(hp_checks_count, sizeof(*where));
	double *spent;
	size_t i, k, s;

	must_be_prepared(snap);

	for (s = 0; s < HP_ARRAY_LEN(sources); s++) {
		struct hp_findings *outs;
		size_t n = 0;

		for (i = 0; i < hp_checks_count; i++)
			if (sel[i] && hp_checks[i]->each_node && hp_checks[i]->source == sources[s]) {
				batch[n] = hp_checks[i];
				where[n++] = i;
			}
		if (!n)
			continue;
		outs = xcalloc(n, sizeof(*outs));
		spent = secs ? xcalloc(n, sizeof(*spent)) : NULL;
		hp_node_pass(snap, sources[s], batch, n, outs, spent);
		for (k = 0; k < n; k++) {
			pre[where[k]] = outs[k];
			if (spent)
				secs[where[k]] += spent[k];
		}
		free(outs);
		free(spent);
	}
	for (i = 0; i < hp_checks_count; i++) {
		if (!sel[i])
			continue;
		if (hp_checks[i]->each_node) {
			for (k = 0; k < pre[i].n; k++)
				*(struct hp_finding *)hp_array_push(out) = pre[i].v[k];
			free(pre[i].v);
		} else if (hp_checks[i]->run) {
			struct hp_emit em = { hp_checks[i], out };
			double t0 = secs ? hp_check_clock() : 0;

			hp_checks[i]->run(snap, &em);
			if (secs)
				secs[i] += hp_check_clock() - t0;
		}
	}
	free(pre);
	free(batch);
	free(where);
}

double hp_check_clock(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void hp_checks_run(const struct hp_snapshot *snap, struct hp_findings *out)
{
	hp_checks_run_timed(snap, NULL, out, NULL);
}

/* Whether id is named by pattern: equal, or pattern "x.*" and id starts with "x.". */
static int id_matches(const char *pattern, const char *id)
{
	size_t n = strlen(pattern);

	if (n >= 2 && !strcmp(pattern + n - 2, ".*"))
		return !strncmp(pattern, id, n - 1);
	return !strcmp(pattern, id);
}

void hp_checks_run_only(const struct hp_snapshot *snap, const char *const *ids,
			struct hp_findings *out)
{
	static const char *const none[] = { NULL };

	hp_checks_run_timed(snap, ids ? ids : none, out, NULL);
}

void hp_checks_run_timed(const struct hp_snapshot *snap, const char *const *ids,
			 struct hp_findings *out, double *secs)
{
	unsigned char *sel = xcalloc(hp_checks_count, 1);
	size_t i, k;

	if (!ids)
		memset(sel, 1, hp_checks_count);
	for (i = 0; ids && i < hp_checks_count; i++)
		for (k = 0; ids[k] && !sel[i]; k++)
			sel[i] = (unsigned char)id_matches(ids[k], hp_checks[i]->id);
	run_selected(snap, sel, out, secs);
	free(sel);
	hp_findings_number_keys(out);
}

const char *hp_check_clip(const char *s, char out[HP_CHECK_CLIP_SIZE])
{
	return hp_text_clip(s, HP_CHECK_CLIP_CHARS, out);
}

const char *hp_check_iso_time(double s, char out[32])
{
	struct tm tm;
	time_t t;

	/* Beyond year 9999 is not a time any API sends. */
	if (!(s >= 0 && s < 253402300800.0)) {
		hp_strlcpy(out, "unknown time", 32);
		return out;
	}
	t = (time_t)s;
	if (!gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		hp_strlcpy(out, "unknown time", 32);
	return out;
}

const char *hp_check_str(const cJSON *obj, const char *path, const char *def)
{
	const char *v = hp_json_str(obj, path);

	return v && *v ? v : def;
}
