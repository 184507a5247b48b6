/*
 * The Slurm decoders (include/hp/facts.h): the controller probe's framed
 * output into facts, which node is the controller, and what Slurm calls
 * an instance. The controller comes from the instance groups'
 * SlurmConfig, else from a group name that says so; there is no fallback
 * to an arbitrary node, which could belong to nothing Slurm knows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts-int.h"
#include "hp/array.h"
#include "hp/json.h"
#include "hp/util.h"

#define MARK "@@HP@@ "
/* Lines of a block kept as its text (for messages). */
#define TEXT_LINES 5
#define TEXT_MAX 600

/* ------------------------------------------------------------ probe output */

static int final_byte(unsigned char c)
{
	return c >= 0x40 && c <= 0x7e;
}

/* Drop carriage returns and terminal escape sequences (CSI, OSC, two-byte ESC x). */
static char *clean(const char *in, size_t len)
{
	char *out = xmalloc(len + 1);
	size_t i = 0, o = 0;

	while (i < len) {
		unsigned char c = (unsigned char)in[i];

		if (c == '\r' || c == '\0') {
			i++;
		} else if (c == 0x1b && i + 1 < len && in[i + 1] == '[') {
			i += 2;
			/* Parameters until the final byte, 0x40..0x7e. */
			while (i < len && !final_byte((unsigned char)in[i]))
				i++;
			i++;
		} else if (c == 0x1b && i + 1 < len && in[i + 1] == ']') {
			i += 2;
			/* Until BEL or ESC \. */
			while (i < len && in[i] != '\a' &&
			       !(in[i] == 0x1b && i + 1 < len && in[i + 1] == '\\'))
				i++;
			i += (i < len && in[i] == 0x1b) ? 2 : 1;
		} else if (c == 0x1b) {
			i += 2;
		} else {
			out[o++] = (char)c;
			i++;
		}
	}
	out[o] = '\0';
	return out;
}

/* A block between its markers: its lines point into the cleaned text. */
struct block {
	char name[32];
	HP_ARRAY(char *) lines;
	int exit;
	int ended;
};

typedef HP_ARRAY(struct block) block_list;

/*
 * One marker; *cur is the open block (an index + 1 into blocks, 0 for
 * none), as a pointer would move when the list grows.
 */
static void parse_marker(const char *m, block_list *blocks, size_t *cur, int *done)
{
	char name[32];
	int rc;

	if (sscanf(m, "BEGIN %31s", name) == 1) {
		hp_strlcpy(hp_array_push(blocks)->name, name, sizeof(name));
		*cur = blocks->n;
	} else if (sscanf(m, "END %31s %d", name, &rc) == 2) {
		struct block *b = *cur ? &blocks->v[*cur - 1] : NULL;

		if (b && !strcmp(b->name, name)) {
			b->exit = rc;
			b->ended = 1;
		}
		*cur = 0;
	} else if (hp_starts_with(m, "DONE")) {
		*done = 1;
		*cur = 0;
	}
}

static const struct block *find(const block_list *blocks, const char *name)
{
	size_t i;

	for (i = 0; i < blocks->n; i++)
		if (!strcmp(blocks->v[i].name, name))
			return &blocks->v[i];
	return NULL;
}

/* {exit, text}: the common part of every block's facts. */
static cJSON *block_obj(const struct block *b)
{
	cJSON *o = cJSON_CreateObject();
	struct hp_buf t = HP_BUF_INIT(TEXT_MAX + 8);
	size_t i;

	if (b->ended)
		cJSON_AddNumberToObject(o, "exit", b->exit);
	else
		cJSON_AddNullToObject(o, "exit");
	for (i = 0; i < b->lines.n && i < TEXT_LINES; i++) {
		if (i && hp_buf_addc(&t, '\n'))
			break;
		if (hp_buf_adds(&t, b->lines.v[i]))
			break;
	}
	cJSON_AddStringToObject(o, "text", t.buf);
	hp_buf_release(&t);
	return o;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

static void parse_meta(cJSON *facts, const struct block *b)
{
	cJSON *o = block_obj(b);
	size_t i;

	for (i = 0; i < b->lines.n; i++) {
		char *eq = strchr(b->lines.v[i], '=');

		if (!eq)
			continue;
		*eq = '\0';
		if (!strcmp(b->lines.v[i], "now_epoch") && *trim(eq + 1))
			cJSON_AddNumberToObject(o, "now_epoch", strtod(eq + 1, NULL));
		else if (!strcmp(b->lines.v[i], "now_local") || !strcmp(b->lines.v[i], "host"))
			cJSON_AddStringToObject(o, b->lines.v[i], trim(eq + 1));
		*eq = '=';
	}
	cJSON_AddItemToObject(facts, "meta", o);
}

/*
 * scontrol ping: "Slurmctld(primary) at ctl is UP" (newer Slurm, one line per
 * controller) or "Slurmctld(primary/backup) at ctl/(NULL) are UP/DOWN"
 * (older). Only the primary counts.
 */
static void parse_ping(cJSON *facts, const struct block *b)
{
	cJSON *o = block_obj(b);
	size_t i;

	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i], *p;

		if (!strstr(l, "Slurmctld(primary"))
			continue;
		if ((p = strstr(l, " is ")) != NULL) {
			cJSON_AddBoolToObject(o, "up", hp_starts_with(p + 4, "UP"));
			break;
		}
		if ((p = strstr(l, " are ")) != NULL) {
			cJSON_AddBoolToObject(o, "up", hp_starts_with(p + 5, "UP"));
			break;
		}
	}
	cJSON_AddItemToObject(facts, "ping", o);
}

/* Split at '|' into at most max fields (the last keeps any further '|'). */
static size_t split(char *line, char **f, size_t max)
{
	size_t n = 0;

	f[n++] = line;
	while (n < max) {
		char *bar = strchr(f[n - 1], '|');

		if (!bar)
			break;
		*bar = '\0';
		f[n++] = bar + 1;
	}
	return n;
}

/* "down*" -> states ["down"], flags "*"; "idle+drain" -> ["idle","drain"]. */
static void add_state(cJSON *node, const char *state)
{
	cJSON *states = cJSON_AddArrayToObject(node, "states");
	char flags[16] = "", word[64];
	size_t nf = 0, nw = 0;
	const char *p;

	cJSON_AddStringToObject(node, "state", state);
	for (p = state;; p++) {
		char c = *p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
			if (nw < sizeof(word) - 1)
				word[nw++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
			continue;
		}
		if (nw) {
			word[nw] = '\0';
			cJSON_AddItemToArray(states, cJSON_CreateString(word));
			nw = 0;
		}
		if (!c)
			break;
		if (c != '+' && nf < sizeof(flags) - 1 && !strchr(flags, c))
			flags[nf++] = c;
	}
	flags[nf] = '\0';
	cJSON_AddStringToObject(node, "flags", flags);
}

struct row {
	char *line;               /* owned copy; fields point into it */
	char *f[3];
	size_t idx;
	int dup;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(x->f[0], y->f[0]);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static int row_idx_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* One entry per node, in sinfo's order; sinfo repeats a node for each of its partitions. */
static void parse_sinfo(cJSON *facts, const struct block *b)
{
	cJSON *o = block_obj(b), *nodes = cJSON_AddArrayToObject(o, "nodes");
	struct row *rows = xcalloc(b->lines.n + 1, sizeof(*rows));
	size_t i, n = 0;

	for (i = 0; i < b->lines.n; i++) {
		struct row *r = &rows[n];

		r->line = xstrdup(b->lines.v[i]);
		if (split(r->line, r->f, 3) == 3 && *(r->f[0] = trim(r->f[0])) &&
		    *(r->f[1] = trim(r->f[1]))) {
			r->f[2] = trim(r->f[2]);
			r->idx = n++;
		} else {
			free(r->line);
		}
	}
	qsort(rows, n, sizeof(*rows), row_cmp);
	for (i = 1; i < n; i++)
		rows[i].dup = !strcmp(rows[i].f[0], rows[i - 1].f[0]);
	qsort(rows, n, sizeof(*rows), row_idx_cmp);
	for (i = 0; i < n; i++) {
		if (!rows[i].dup) {
			cJSON *node = cJSON_CreateObject();

			cJSON_AddStringToObject(node, "name", rows[i].f[0]);
			add_state(node, rows[i].f[1]);
			cJSON_AddStringToObject(node, "reason", rows[i].f[2]);
			cJSON_AddItemToArray(nodes, node);
		}
		free(rows[i].line);
	}
	free(rows);
	cJSON_AddItemToObject(facts, "sinfo", o);
}

static void parse_squeue(cJSON *facts, const struct block *b)
{
	static const char *const keys[] = { "id", "state", "end", "start", "nodes", "name" };
	cJSON *o = block_obj(b), *jobs = cJSON_AddArrayToObject(o, "jobs");
	size_t i, k;

	for (i = 0; i < b->lines.n; i++) {
		char *f[6], *line = xstrdup(b->lines.v[i]);

		if (split(line, f, 6) == 6 && *trim(f[0])) {
			cJSON *job = cJSON_CreateObject();

			for (k = 0; k < 6; k++)
				cJSON_AddStringToObject(job, keys[k], trim(f[k]));
			cJSON_AddItemToArray(jobs, job);
		}
		free(line);
	}
	cJSON_AddItemToObject(facts, "squeue", o);
}

/* systemctl show: "Key=Value" lines, one unit after another, Id= first. */
static void parse_services(cJSON *facts, const struct block *b)
{
	cJSON *o = block_obj(b), *units = cJSON_AddObjectToObject(o, "units"), *unit = NULL;
	size_t i;

	for (i = 0; i < b->lines.n; i++) {
		char *eq = strchr(b->lines.v[i], '=');
		const char *key, *val;

		if (!eq)
			continue;
		*eq = '\0';
		key = b->lines.v[i];
		val = eq + 1;
		if (!strcmp(key, "Id")) {
			char name[64];

			hp_strlcpy(name, val, sizeof(name));
			if (hp_ends_with(name, ".service"))
				name[strlen(name) - 8] = '\0';
			cJSON_DeleteItemFromObjectCaseSensitive(units, name);
			unit = cJSON_AddObjectToObject(units, name);
		} else if (unit && (!strcmp(key, "LoadState") || !strcmp(key, "ActiveState") ||
				    !strcmp(key, "SubState"))) {
			cJSON_DeleteItemFromObjectCaseSensitive(unit, key);
			cJSON_AddStringToObject(unit, key, val);
		}
		*eq = '=';
	}
	cJSON_AddItemToObject(facts, "services", o);
}

/* ------------------------------------------------------------ hostlists */

#define HOSTLIST_MAX 4096
#define HOSTNAME_MAX 256

/* Appends every name of one host expression (brackets anywhere, any number of them). */
static int expand_one(const char *expr, size_t len, char ***out, size_t *n, size_t max)
{
	const char *open = memchr(expr, '[', len), *close;
	size_t pre, i;

	if (!open) {
		if (!len || len >= HOSTNAME_MAX)
			return len ? -1 : 0;
		if (*n >= max)
			return -1;
		(*out)[(*n)++] = xstrndup(expr, len);
		return 0;
	}
	close = memchr(open, ']', len - (size_t)(open - expr));
	if (!close)
		return -1;
	pre = (size_t)(open - expr);
	/* Each comma-separated range inside the brackets: "1-3", "07", "10-12". */
	for (i = pre + 1; i < (size_t)(close - expr);) {
		size_t end = i, dash = 0, k;
		unsigned long lo, hi, v;
		int width;

		while (end < (size_t)(close - expr) && expr[end] != ',')
			end++;
		for (k = i; k < end; k++)
			if (expr[k] == '-' && !dash)
				dash = k;
			else if (expr[k] < '0' || expr[k] > '9')
				return -1;
		if (end == i || dash == i || (dash && dash + 1 == end) || end - i > 20)
			return -1;
		lo = strtoul(expr + i, NULL, 10);
		hi = dash ? strtoul(expr + dash + 1, NULL, 10) : lo;
		width = (int)((dash ? dash : end) - i);
		if (hi < lo || hi - lo >= max)
			return -1;
		for (v = lo; v <= hi; v++) {
			char buf[HOSTNAME_MAX * 2];
			int m = snprintf(buf, sizeof(buf), "%.*s%0*lu%.*s", (int)pre, expr, width, v,
					 (int)(len - (size_t)(close + 1 - expr)), close + 1);

			if (m < 0 || (size_t)m >= sizeof(buf) || expand_one(buf, (size_t)m, out, n, max))
				return -1;
		}
		i = end + 1;
	}
	return 0;
}

size_t hp_slurm_hostlist(const char *list, char ***names, size_t max, int *bad)
{
	size_t n = 0, i = 0, len = list ? strlen(list) : 0;
	char **out;

	if (!max || max > HOSTLIST_MAX)
		max = HOSTLIST_MAX;
	out = xcalloc(max, sizeof(*out));
	*bad = 0;
	/* "(null)" and "None assigned": no node. */
	if (!len || list[0] == '(' || !strncmp(list, "None", 4)) {
		*names = out;
		return 0;
	}
	while (i < len) {
		size_t start = i;
		int depth = 0;

		/* A comma outside brackets ends one expression. */
		while (i < len && (depth || list[i] != ',')) {
			depth += list[i] == '[' ? 1 : list[i] == ']' ? -1 : 0;
			if (depth < 0)
				break;
			i++;
		}
		if (depth || expand_one(list + start, i - start, &out, &n, max)) {
			*bad = 1;
			break;
		}
		i++;
	}
	*names = out;
	return n;
}

void hp_slurm_hostlist_free(char **names, size_t n)
{
	size_t i;

	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

/* ------------------------------------------------------------ scontrol show job */

#define JOB_RECORDS 64

static int key_start(const char *tok)
{
	const char *eq = strchr(tok, '='), *p;

	if (!eq || eq == tok || !((*tok >= 'A' && *tok <= 'Z') || (*tok >= 'a' && *tok <= 'z')))
		return 0;
	for (p = tok; p < eq; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
		      *p == '_' || *p == ':' || *p == '/'))
			return 0;
	return 1;
}

/*
 * The records of `scontrol show job` in either layout: -o (one record a
 * line) or the default (a record over indented lines, records apart by
 * blank lines). A token "JobId=" starts a record; "Key=Value" tokens are
 * its fields, and a token that is no "Key=" continues the value before it.
 */
static void job_records(const struct block *b, cJSON *records)
{
	static const char *const keep[] = { "JobId", "ArrayJobId", "ArrayTaskId", "JobName", "JobState",
					    "Reason", "ExitCode", "NodeList", "BatchHost", "NumNodes",
					    "StdOut", "StdErr", "WorkDir", "Partition", "RunTime",
					    "StartTime", "EndTime" };
	cJSON *rec = NULL;
	size_t i, k;

	for (i = 0; i < b->lines.n; i++) {
		char *line = xstrdup(b->lines.v[i]), *save = NULL, *tok;
		char *last = NULL;

		for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			char *eq;

			if (!key_start(tok)) {
				/* A value with a blank ("Reason=launch failed"): joined back. */
				if (rec && last) {
					const cJSON *v = cJSON_GetObjectItemCaseSensitive(rec, last);
					char joined[1024];

					if (cJSON_IsString(v)) {
						snprintf(joined, sizeof(joined), "%s %s", v->valuestring, tok);
						cJSON_ReplaceItemInObjectCaseSensitive(rec, last,
										       cJSON_CreateString(joined));
					}
				}
				continue;
			}
			eq = strchr(tok, '=');
			*eq = '\0';
			if (!strcmp(tok, "JobId")) {
				if (cJSON_GetArraySize(records) >= JOB_RECORDS) {
					rec = NULL;
					break;
				}
				rec = cJSON_CreateObject();
				cJSON_AddItemToArray(records, rec);
			}
			last = NULL;
			if (!rec)
				continue;
			for (k = 0; k < HP_ARRAY_LEN(keep) && strcmp(keep[k], tok); k++)
				;
			if (k == HP_ARRAY_LEN(keep) || cJSON_GetObjectItemCaseSensitive(rec, tok))
				continue;
			cJSON_AddStringToObject(rec, tok, eq + 1);
			last = (char *)keep[k];
		}
		free(line);
	}
}

static void parse_job(cJSON *facts, const struct block *b)
{
	cJSON *o = block_obj(b), *records = cJSON_AddArrayToObject(o, "records"), *nodes;
	const cJSON *r;
	size_t i;
	int bad_list = 0;

	job_records(b, records);
	for (i = 0; i < b->lines.n; i++)
		if (strstr(b->lines.v[i], "Invalid job id specified")) {
			cJSON_AddStringToObject(o, "error", "unknown");
			break;
		} else if (hp_strcasestr(b->lines.v[i], "not found") ||
			   hp_strcasestr(b->lines.v[i], "command not found")) {
			cJSON_AddStringToObject(o, "error", "no_scontrol");
			break;
		}
	cJSON_AddBoolToObject(o, "found", cJSON_GetArraySize(records) > 0);
	/* Every node of every record once, in record order. */
	nodes = cJSON_AddArrayToObject(o, "nodes");
	cJSON_ArrayForEach(r, records) {
		char **names = NULL;
		int bad = 0;
		size_t n = hp_slurm_hostlist(hp_json_str(r, "NodeList"), &names, 0, &bad), k;

		bad_list |= bad;
		for (k = 0; k < n && cJSON_GetArraySize(nodes) < HOSTLIST_MAX; k++) {
			const cJSON *x;
			int dup = 0;

			cJSON_ArrayForEach(x, nodes)
				dup |= !strcmp(x->valuestring, names[k]);
			if (!dup)
				cJSON_AddItemToArray(nodes, cJSON_CreateString(names[k]));
		}
		hp_slurm_hostlist_free(names, n);
	}
	if (bad_list)
		cJSON_AddTrueToObject(o, "nodelist_unreadable");
	cJSON_AddItemToObject(facts, "job", o);
}

/* The job's output files: {path, status: read|missing|unreadable|link|pattern, lines}. */
static void parse_joblogs(cJSON *facts, const block_list *blocks)
{
	cJSON *logs = NULL;
	size_t i, k;

	for (i = 0; i < blocks->n; i++) {
		const struct block *b = &blocks->v[i];
		cJSON *o;

		if (strcmp(b->name, "joblog"))
			continue;
		if (!logs)
			logs = cJSON_AddArrayToObject(facts, "joblogs");
		if (cJSON_GetArraySize(logs) >= 16)
			break;
		o = cJSON_CreateObject();
		for (k = 0; k < b->lines.n && k < 3; k++) {
			const char *l = b->lines.v[k];

			if (!strncmp(l, "path ", 5) && !cJSON_GetObjectItem(o, "path"))
				cJSON_AddStringToObject(o, "path", l + 5);
			else if (!strncmp(l, "status ", 7) && !cJSON_GetObjectItem(o, "status"))
				cJSON_AddStringToObject(o, "status", l + 7);
			else if (!strncmp(l, "lines ", 6) && !cJSON_GetObjectItem(o, "lines"))
				cJSON_AddNumberToObject(o, "lines", strtod(l + 6, NULL));
		}
		if (!cJSON_GetObjectItem(o, "lines"))
			cJSON_AddNumberToObject(o, "lines", b->lines.n > 2 ? (double)(b->lines.n - 2) : 0);
		cJSON_AddBoolToObject(o, "ended", b->ended);
		cJSON_AddItemToArray(logs, o);
	}
}

/* Parse the probe's framed output into facts. */
/*
 * The NCCL/FI/MASTER settings of the profile and prolog files: "file <path>"
 * for each file read, then "<path>:<line>" per setting. The first file that
 * sets a name wins (the order of the probe: profile, environment, nccl.conf,
 * prolog).
 */
static void parse_nccl_env(cJSON *facts, const struct block *b)
{
	cJSON *o = block_obj(b), *files = cJSON_AddArrayToObject(o, "files");
	cJSON *vars = cJSON_AddObjectToObject(o, "vars"), *from = cJSON_AddObjectToObject(o, "from");
	size_t i;

	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i], *colon, *eq;
		char name[128], file[512];
		size_t n;

		if (!strncmp(l, "file ", 5)) {
			if (cJSON_GetArraySize(files) < 64)
				cJSON_AddItemToArray(files, cJSON_CreateString(l + 5));
			continue;
		}
		if (l[0] != '/' || !(colon = strchr(l, ':')) || (size_t)(colon - l) >= sizeof(file))
			continue;
		memcpy(file, l, (size_t)(colon - l));
		file[colon - l] = '\0';
		l = colon + 1;
		while (*l == ' ' || *l == '\t')
			l++;
		if (!strncmp(l, "export", 6) && (l[6] == ' ' || l[6] == '\t'))
			for (l += 6; *l == ' ' || *l == '\t'; l++)
				;
		if (!(eq = strchr(l, '=')) || (n = (size_t)(eq - l)) == 0 || n >= sizeof(name))
			continue;
		memcpy(name, l, n);
		name[n] = '\0';
		if ((strncmp(name, "NCCL_", 5) && strncmp(name, "FI_", 3) && strncmp(name, "MASTER_", 7)) ||
		    cJSON_GetObjectItemCaseSensitive(vars, name) || cJSON_GetArraySize(vars) >= 100)
			continue;
		{
			char value[256];
			size_t k;

			/* The value without surrounding quotes or a trailing comment. */
			hp_strlcpy(value, eq + 1, sizeof(value));
			k = strcspn(value, "#");
			value[k] = '\0';
			while (k && (value[k - 1] == ' ' || value[k - 1] == '\t'))
				value[--k] = '\0';
			if (k >= 2 && (value[0] == '"' || value[0] == '\'') && value[k - 1] == value[0]) {
				value[k - 1] = '\0';
				memmove(value, value + 1, k - 1);
			}
			cJSON_AddStringToObject(vars, name, value);
			cJSON_AddStringToObject(from, name, file);
		}
	}
	cJSON_AddItemToObject(facts, "nccl_env", o);
}

cJSON *hp_slurm_parse(const char *text, size_t len)
{
	char *buf = clean(text ? text : "", text ? len : 0), *p = buf;
	block_list blocks = HP_ARRAY_INIT;
	const struct block *b;
	size_t cur = 0, i;
	int done = 0;
	cJSON *facts = cJSON_CreateObject();

	hp_facts_count_run(FACTS_SLURM);
	while (*p) {
		char *nl = strchr(p, '\n'), *m;

		if (nl)
			*nl = '\0';
		m = strstr(p, MARK);
		if (m)
			parse_marker(m + strlen(MARK), &blocks, &cur, &done);
		else if (cur)
			hp_array_append(&blocks.v[cur - 1].lines, p);
		if (!nl)
			break;
		p = nl + 1;
	}
	cJSON_AddBoolToObject(facts, "done", done);
	if ((b = find(&blocks, "meta")) != NULL)
		parse_meta(facts, b);
	if ((b = find(&blocks, "ping")) != NULL)
		parse_ping(facts, b);
	if ((b = find(&blocks, "sinfo")) != NULL)
		parse_sinfo(facts, b);
	if ((b = find(&blocks, "squeue")) != NULL)
		parse_squeue(facts, b);
	if ((b = find(&blocks, "services")) != NULL)
		parse_services(facts, b);
	if ((b = find(&blocks, "nccl_env")) != NULL)
		parse_nccl_env(facts, b);
	if ((b = find(&blocks, "job")) != NULL)
		parse_job(facts, b);
	parse_joblogs(facts, &blocks);
	for (i = 0; i < blocks.n; i++)
		hp_array_release(&blocks.v[i].lines);
	hp_array_release(&blocks);
	free(buf);
	return facts;
}

/* ------------------------------------------------------------ controller */

/* The first Running node of group g, or NULL. */
static const char *running_node(const struct hp_snapshot *s, const char *g)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, hp_snapshot_get(s, "nodes")) {
		const char *grp = hp_json_str(n, "InstanceGroupName");

		if (grp && !strcmp(grp, g) && hp_snap_node_running(n))
			return hp_json_str(n, "InstanceId");
	}
	return NULL;
}

static int named_like_controller(const char *g)
{
	return hp_strcasestr(g, "controller") || hp_strcasestr(g, "head") ||
	       hp_strcasestr(g, "master");
}

/* Pick the Slurm controller node from the instance groups. */
int hp_slurm_controller(const struct hp_snapshot *s, const char **iid, const char **group,
			const char **how)
{
	const cJSON *groups = hp_json_arr(hp_snapshot_get(s, "cluster"), "InstanceGroups"), *g;
	int pass;

	*iid = *group = *how = NULL;
	for (pass = 0; pass < 2; pass++) {
		cJSON_ArrayForEach(g, groups) {
			const char *name = hp_json_str(g, "InstanceGroupName");
			const char *type = hp_json_str(g, "SlurmConfig.NodeType");

			if (!name)
				continue;
			if (pass == 0 ? !(type && !strcmp(type, "Controller")) :
					(type || !named_like_controller(name)))
				continue;
			*group = name;
			*how = pass == 0 ? "SlurmConfig" : "group name";
			*iid = running_node(s, name);
			return 0;
		}
	}
	return -1;
}

/* The Slurm node name (first DNS label) of a cluster node. */
const char *hp_slurm_node_name(const cJSON *node, char *out, size_t n)
{
	const char *dns = hp_json_str(node, "PrivateDnsHostname");
	size_t len;

	if (!dns || !*dns || !n)
		return NULL;
	len = strcspn(dns, ".");
	if (!len || len >= n)
		return NULL;
	memcpy(out, dns, len);
	out[len] = '\0';
	return out;
}

int hp_slurm_node_bad(const cJSON *node)
{
	static const char *const bad[] = {
		"down", "drain", "drained", "draining", "fail", "failing", "inval", "unknown",
		"not_responding", "no_respond", NULL
	};
	const cJSON *st, *flags = cJSON_GetObjectItemCaseSensitive(node, "flags");
	size_t i;

	if (cJSON_IsString(flags) && strchr(flags->valuestring, '*'))
		return 1;
	cJSON_ArrayForEach(st, cJSON_GetObjectItemCaseSensitive(node, "states"))
		for (i = 0; cJSON_IsString(st) && bad[i]; i++)
			if (!strcmp(st->valuestring, bad[i]))
				return 1;
	return 0;
}
