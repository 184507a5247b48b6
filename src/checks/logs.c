/*
 * CloudWatch Logs checks: the cluster's log group, lifecycle-script errors
 * in the LifecycleConfig streams, and faults the health monitoring agent
 * logged. The collector pre-filters lines server-side; here each line is
 * judged (so "0 errors" is not an error) and folded into one finding per node.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"

/*
 * "<Prefix>/<group>/<instance id>": group "?" and no node when the name
 * does not have that shape or the last part is not an instance id.
 */
static void parse_stream(const char *stream, char group[80], char iid[24])
{
	const char *a = strchr(stream, '/');
	const char *b = a ? strchr(a + 1, '/') : NULL;
	size_t glen, ilen, i;

	hp_strlcpy(group, "?", 80);
	iid[0] = '\0';
	if (!a || !b || strchr(b + 1, '/'))
		return;
	glen = (size_t)(b - a - 1);
	ilen = strlen(b + 1);
	if (!glen || glen >= 80 || ilen < 10 || ilen > 19 || strncmp(b + 1, "i-", 2))
		return;
	for (i = 2; i < ilen; i++)
		if (!isdigit((unsigned char)b[1 + i]) && !(b[1 + i] >= 'a' && b[1 + i] <= 'f'))
			return;
	memcpy(group, a + 1, glen);
	group[glen] = '\0';
	memcpy(iid, b + 1, ilen + 1);
}

/* Matching lines of one node (or, for odd stream names, one stream). */
struct log_bucket {
	char iid[24];
	char group[80];
	const char *stream;
	HP_ARRAY(const cJSON *) lines;
};

typedef HP_ARRAY(struct log_bucket) log_bucket_list;

static struct log_bucket *bucket_for(log_bucket_list *v, const char *stream)
{
	char group[80], iid[24];
	struct log_bucket *b;
	size_t i;

	parse_stream(stream, group, iid);
	for (i = 0; i < v->n; i++) {
		b = &v->v[i];
		if (*iid ? !strcmp(b->iid, iid) : (!*b->iid && !strcmp(b->stream, stream)))
			return b;
	}
	b = hp_array_push(v);
	hp_strlcpy(b->iid, iid, sizeof(b->iid));
	hp_strlcpy(b->group, group, sizeof(b->group));
	b->stream = stream;
	return b;
}

/* What differs between the lifecycle and the health-agent scan. */
struct log_scan {
	const char *key;          /* under "logs" */
	enum hp_log_kind kind;     /* how its lines are judged (hp_log_line_counts) */
	const char *what;         /* for the truncation note */
	const char *title;        /* FAIL message: "<title> on <node> (<group>)" */
	const char *pass_msg;
};

static void add_evidence(struct hp_finding *f, const struct log_bucket *b)
{
	size_t i;

	for (i = 0; i < b->lines.n && i < 3; i++) {
		char when[32], text[HP_CHECK_CLIP_SIZE], line[HP_CHECK_CLIP_SIZE + 64];

		snprintf(line, sizeof(line), "%s %s",
			 hp_check_iso_time(hp_json_num(b->lines.v[i], "timestamp", -1000) / 1000,
					   when),
			 hp_check_clip(hp_check_str(b->lines.v[i], "message", ""), text));
		hp_finding_evidence(f, line);
	}
}

static void scan(const struct hp_snapshot *snap, struct hp_emit *em, const struct log_scan *sc)
{
	const cJSON *logs = hp_json_get(snap->root, "logs");
	const cJSON *lines = hp_json_arr(logs, sc->key);
	const cJSON *l;
	log_bucket_list v = HP_ARRAY_INIT;
	size_t i;
	char key[48];

	if (!lines)
		return;
	cJSON_ArrayForEach(l, lines) {
		const char *msg = hp_json_str(l, "message");
		struct log_bucket *b;

		if (!msg || !hp_log_line_counts(sc->kind, msg))
			continue;
		b = bucket_for(&v, hp_check_str(l, "logStreamName", "?"));
		hp_array_append(&b->lines, l);
	}
	for (i = 0; i < v.n; i++) {
		const struct log_bucket *b = &v.v[i];
		char where[HP_CHECK_CLIP_SIZE + 128], clip[HP_CHECK_CLIP_SIZE];
		struct hp_finding *f;

		if (*b->iid)
			snprintf(where, sizeof(where), "%s (%s)", b->iid, b->group);
		else
			snprintf(where, sizeof(where), "log stream '%s'",
				 hp_check_clip(b->stream, clip));
		f = hp_emitx(em, HP_TAG_FAIL, em->check->prio, NULL, *b->iid ? b->iid : NULL,
			     "%s on %s: %zu matching line%s", sc->title, where, b->lines.n,
			     b->lines.n == 1 ? "" : "s");
		add_evidence(f, b);
	}
	snprintf(key, sizeof(key), "%s_truncated", sc->key);
	if (hp_json_bool(logs, key, 0))
		HP_CHECK_INFO(em, "The %s stopped at its cap; later lines were not read",
			sc->what);
	if (!v.n && hp_json_bool(logs, "group_found", 0))
		hp_emit(em, HP_TAG_PASS, "%s", sc->pass_msg);
	for (i = 0; i < v.n; i++)
		hp_array_release(&v.v[i].lines);
	hp_array_release(&v);
}

static void run_group(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *logs = hp_json_get(snap->root, "logs");
	const cJSON *found = hp_json_get(logs, "group_found");
	const char *group = hp_check_str(logs, "group", "(name unknown)");

	if (!cJSON_IsBool(found))
		return;
	if (cJSON_IsTrue(found))
		hp_emit(em, HP_TAG_PASS, "Log group exists: %s", group);
	else
		hp_emit(em, HP_TAG_WARN,
			"No CloudWatch log group %s \xE2\x80\x94 logging may not be configured, or the "
			"cluster is new",
			group);
}

static void run_lifecycle(const struct hp_snapshot *snap, struct hp_emit *em)
{
	static const struct log_scan sc = {
		.key = "lifecycle",
		.kind = HP_LOG_LIFECYCLE,
		.what = "lifecycle log search",
		.title = "Lifecycle script errors",
		.pass_msg = "No lifecycle script errors in LifecycleConfig streams",
	};

	scan(snap, em, &sc);
}

static void run_health_agent(const struct hp_snapshot *snap, struct hp_emit *em)
{
	static const struct log_scan sc = {
		.key = "hma",
		.kind = HP_LOG_HEALTH_AGENT,
		.what = "health monitoring agent log search",
		.title = "Health monitoring agent reported faults",
		.pass_msg = "No faults in SagemakerHealthMonitoringAgent streams",
	};

	scan(snap, em, &sc);
}

HP_CHECK(logs_group, HP_GROUP_LOGS, 20,
	 .id = "logs.group", .section = "L", .prio = HP_P2, .run = run_group);
HP_CHECK(logs_lifecycle, HP_GROUP_LOGS, 30,
	 .id = "logs.lifecycle", .section = "D", .prio = HP_P1, .run = run_lifecycle);
HP_CHECK(logs_health_agent, HP_GROUP_LOGS, 40,
	 .id = "logs.health-agent", .section = "F", .prio = HP_P1, .run = run_health_agent);
