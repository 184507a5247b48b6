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
#include <strings.h>

#include "hp/array.h"
#include "hp/json.h"
#include "checks.h"

enum {
	TOK_START = 1 << 0, /* no letter or digit right before it ("default" is no fault) */
	TOK_END = 1 << 1,   /* no letter right after it */
	TOK_NEG = 1 << 2,   /* "0 errors", "no errors", "errors: 0" do not count */
	TOK_CODE = 1 << 3   /* "exit code 0" does not count */
};

struct token {
	const char *word;
	unsigned flags;
};

static const struct token lifecycle_tokens[] = {
	{ "error", TOK_NEG },
	{ "failed", TOK_NEG },
	{ "failure", TOK_NEG },
	{ "traceback", 0 },
	{ "exit code", TOK_CODE },
	{ "exit status", TOK_CODE },
	{ "timed out", 0 },
	{ "no such file", 0 },
	{ "permission denied", 0 },
	{ "command not found", 0 },
	{ NULL, 0 },
};

static const struct token hma_tokens[] = {
	{ "error", TOK_NEG },
	{ "fault", TOK_START | TOK_NEG },
	{ "unhealthy", TOK_NEG },
	{ "failed", TOK_NEG },
	{ "xid", TOK_START | TOK_END },
	{ "nvlink", TOK_START },
	{ "ecc", TOK_START | TOK_END },
	{ "reboot", TOK_START },
	{ "replace", TOK_START },
	{ NULL, 0 },
};

static int is_alnum(char c)
{
	return isalnum((unsigned char)c);
}

/* The word before `at` (skipping spaces) is one that cancels it. */
static int negated_before(const char *line, const char *at)
{
	static const char *const words[] = { "0", "no", "zero", "without", "none" };
	const char *end = at, *start;
	size_t i;

	while (end > line && end[-1] == ' ')
		end--;
	start = end;
	while (start > line && is_alnum(start[-1]))
		start--;
	for (i = 0; i < HP_ARRAY_LEN(words); i++)
		if ((size_t)(end - start) == strlen(words[i]) &&
		    !strncasecmp(start, words[i], (size_t)(end - start)))
			return 1;
	return 0;
}

/* After the word: more word characters, then ":" or "=", then a lone 0. */
static int negated_after(const char *p)
{
	while (isalpha((unsigned char)*p) || *p == '_')
		p++;
	while (*p == ' ')
		p++;
	if (*p != ':' && *p != '=')
		return 0;
	p++;
	while (*p == ' ')
		p++;
	return p[0] == '0' && !isdigit((unsigned char)p[1]);
}

/* "exit code 0", "exit code: 0", "exit status=0" */
static int zero_code_after(const char *p)
{
	while (*p == ' ' || *p == ':' || *p == '=')
		p++;
	if (!strncasecmp(p, "is ", 3))
		p += 3;
	return p[0] == '0' && !isdigit((unsigned char)p[1]);
}

/* Whether any token occurs in line in a way that counts. */
static int line_matches(const char *line, const struct token *tokens)
{
	const struct token *t;

	for (t = tokens; t->word; t++) {
		size_t len = strlen(t->word);
		const char *p = line;

		while ((p = hp_strcasestr(p, t->word))) {
			const char *after = p + len;
			int counts = 1;

			if ((t->flags & TOK_START) && p > line && is_alnum(p[-1]))
				counts = 0;
			if ((t->flags & TOK_END) && isalpha((unsigned char)*after))
				counts = 0;
			if ((t->flags & TOK_NEG) && (negated_before(line, p) || negated_after(after)))
				counts = 0;
			if ((t->flags & TOK_CODE) && zero_code_after(after))
				counts = 0;
			if (counts)
				return 1;
			p += len;
		}
	}
	return 0;
}

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
	const struct token *tokens;
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

		if (!msg || !line_matches(msg, sc->tokens))
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
		.tokens = lifecycle_tokens,
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
		.tokens = hma_tokens,
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
