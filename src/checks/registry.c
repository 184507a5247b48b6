/*
 * The check registry: every check, by pointer, in report order, and the
 * loop that runs them over a snapshot. Also the few text helpers the area
 * files share (clipping remote text, formatting epoch times).
 */
#include <string.h>
#include <time.h>

#include "hp/json.h"
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

void hp_check_run(const struct hp_check *c, const struct hp_snapshot *snap,
		  struct hp_findings *out)
{
	struct hp_emit em = { c, out };

	if (c->each_node && c->source == HP_SOURCE_NCCL_PROBE)
		hp_node_each_nccl(snap, &em, c->each_node);
	else if (c->each_node)
		hp_node_each(snap, &em, c->each_node);
	else if (c->run)
		c->run(snap, &em);
}

void hp_checks_run(const struct hp_snapshot *snap, struct hp_findings *out)
{
	size_t i;

	for (i = 0; i < hp_checks_count; i++)
		hp_check_run(hp_checks[i], snap, out);
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
	size_t i, k;

	for (i = 0; i < hp_checks_count; i++) {
		for (k = 0; ids[k]; k++) {
			if (id_matches(ids[k], hp_checks[i]->id)) {
				hp_check_run(hp_checks[i], snap, out);
				break;
			}
		}
	}
}

const char *hp_check_clip(const char *s, char out[HP_CHECK_CLIP_SIZE])
{
	return hp_clip_utf8(s, HP_CHECK_CLIP_CHARS, out);
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
