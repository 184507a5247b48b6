/*
 * The Slurm controller probe (include/hp/slurm.h): the embedded script, the
 * command line that runs it, and the parser of its framed output. It runs
 * nothing itself; the SSM driver does, and checks judge the parsed facts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "hp/slurm.h"
#include "hp/util.h"

/* The generated header names its arrays for the reference documents it was written for. */
#define hp_refdoc_0 slurm_probe_bytes
#define hp_refdocs slurm_probe_files
#include "hp_slurm_probe.h"
#undef hp_refdoc_0
#undef hp_refdocs

#define MARK "@@HP@@ "
/* Lines of a block kept as its text (for messages). */
#define TEXT_LINES 5
#define TEXT_MAX 600

/* The embedded probe script. */
const char *hp_slurm_probe_script(void)
{
	return (const char *)slurm_probe_files[0].text;
}

/* The sh command line that runs the probe remotely. */
void hp_slurm_probe_command(struct hp_buf *out)
{
	const char *script = hp_slurm_probe_script();
	size_t len = strlen(script);
	unsigned char *b64 = xmalloc(4 * ((len + 2) / 3) + 1);

	EVP_EncodeBlock(b64, (const unsigned char *)script, (int)len);
	hp_buf_printf(out, "sh -c 'echo %s | base64 -d | sh'", (const char *)b64);
	free(b64);
}

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

/* A block between its markers: lines [first, last) of the cleaned text. */
struct block {
	char name[32];
	char **lines;
	size_t n;
	int exit;
	int ended;
};

static void parse_marker(const char *m, struct block **blocks, size_t *nb, struct block **cur,
			 int *done)
{
	char name[32];
	int rc;

	if (sscanf(m, "BEGIN %31s", name) == 1) {
		*blocks = xrealloc(*blocks, (*nb + 1) * sizeof(**blocks));
		*cur = &(*blocks)[(*nb)++];
		memset(*cur, 0, sizeof(**cur));
		hp_strlcpy((*cur)->name, name, sizeof((*cur)->name));
	} else if (sscanf(m, "END %31s %d", name, &rc) == 2) {
		if (*cur && !strcmp((*cur)->name, name)) {
			(*cur)->exit = rc;
			(*cur)->ended = 1;
		}
		*cur = NULL;
	} else if (hp_starts_with(m, "DONE")) {
		*done = 1;
		*cur = NULL;
	}
}

static const struct block *find(const struct block *b, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(b[i].name, name))
			return &b[i];
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
	for (i = 0; i < b->n && i < TEXT_LINES; i++) {
		if (i && hp_buf_addc(&t, '\n'))
			break;
		if (hp_buf_adds(&t, b->lines[i]))
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

	for (i = 0; i < b->n; i++) {
		char *eq = strchr(b->lines[i], '=');

		if (!eq)
			continue;
		*eq = '\0';
		if (!strcmp(b->lines[i], "now_epoch") && *trim(eq + 1))
			cJSON_AddNumberToObject(o, "now_epoch", strtod(eq + 1, NULL));
		else if (!strcmp(b->lines[i], "now_local") || !strcmp(b->lines[i], "host"))
			cJSON_AddStringToObject(o, b->lines[i], trim(eq + 1));
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

	for (i = 0; i < b->n; i++) {
		const char *l = b->lines[i], *p;

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
	struct row *rows = xcalloc(b->n + 1, sizeof(*rows));
	size_t i, n = 0;

	for (i = 0; i < b->n; i++) {
		struct row *r = &rows[n];

		r->line = xstrdup(b->lines[i]);
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

	for (i = 0; i < b->n; i++) {
		char *f[6], *line = xstrdup(b->lines[i]);

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

	for (i = 0; i < b->n; i++) {
		char *eq = strchr(b->lines[i], '=');
		const char *key, *val;

		if (!eq)
			continue;
		*eq = '\0';
		key = b->lines[i];
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

/* Parse the probe's framed output into facts. */
cJSON *hp_slurm_parse(const char *text, size_t len)
{
	char *buf = clean(text ? text : "", text ? len : 0), *p = buf;
	struct block *blocks = NULL, *cur = NULL;
	const struct block *b;
	size_t nb = 0, i;
	int done = 0;
	cJSON *facts = cJSON_CreateObject();

	while (*p) {
		char *nl = strchr(p, '\n'), *m;

		if (nl)
			*nl = '\0';
		m = strstr(p, MARK);
		if (m) {
			parse_marker(m + strlen(MARK), &blocks, &nb, &cur, &done);
		} else if (cur) {
			cur->lines = xrealloc(cur->lines, (cur->n + 1) * sizeof(*cur->lines));
			cur->lines[cur->n++] = p;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	cJSON_AddBoolToObject(facts, "done", done);
	if ((b = find(blocks, nb, "meta")) != NULL)
		parse_meta(facts, b);
	if ((b = find(blocks, nb, "ping")) != NULL)
		parse_ping(facts, b);
	if ((b = find(blocks, nb, "sinfo")) != NULL)
		parse_sinfo(facts, b);
	if ((b = find(blocks, nb, "squeue")) != NULL)
		parse_squeue(facts, b);
	if ((b = find(blocks, nb, "services")) != NULL)
		parse_services(facts, b);
	for (i = 0; i < nb; i++)
		free(blocks[i].lines);
	free(blocks);
	free(buf);
	return facts;
}
