/*
 * The NCCL probe's output cut into framed blocks (the node probe's framing:
 * markers found anywhere in a line, a block without END keeps rc -1,
 * output without DONE is cut short), the helpers the decoders share, and
 * hp_nccl_probe_parse, which runs every decoder. Each line is cleaned once
 * here, so every string that reaches the facts is valid UTF-8 without
 * control characters.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hp/util.h"
#include "nccl-int.h"

#define MARK "@@HP@@"
#define MARK_LEN 6
/* A kept line is cut at this size (probe lines are short; a command line is 200 bytes). */
#define LINE_CLIP 1024

/* ---- helpers ---- */

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

const char *nf_skip(const char *s)
{
	while (blank(*s))
		s++;
	return s;
}

size_t nf_words(const char *s, char (*out)[NF_FIELD], size_t max)
{
	size_t k = 0;

	while (k < max) {
		size_t n = 0;

		s = nf_skip(s);
		if (!*s)
			break;
		while (s[n] && !blank(s[n]))
			n++;
		if (n >= NF_FIELD) {
			memcpy(out[k], s, NF_FIELD - 1);
			out[k][NF_FIELD - 1] = '\0';
		} else {
			memcpy(out[k], s, n);
			out[k][n] = '\0';
		}
		k++;
		s += n;
	}
	return k;
}

int nf_count(const char *s, double *out)
{
	double v = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return 0;
		v = v * 10 + (*s - '0');
		if (v > 9007199254740992.0)
			return 0;
	}
	*out = v;
	return 1;
}

int nf_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

cJSON *nf_obj(cJSON *parent, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);

	if (!cJSON_IsObject(o)) {
		cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
		o = cJSON_AddObjectToObject(parent, key);
	}
	if (!o)
		hp_die("out of memory");
	return o;
}

cJSON *nf_arr(cJSON *parent, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);

	if (!cJSON_IsArray(o)) {
		cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
		o = cJSON_AddArrayToObject(parent, key);
	}
	if (!o)
		hp_die("out of memory");
	return o;
}

void nf_num(cJSON *obj, const char *key, double v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	if (!cJSON_AddNumberToObject(obj, key, v))
		hp_die("out of memory");
}

void nf_str(cJSON *obj, const char *key, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	if (!cJSON_AddStringToObject(obj, key, v ? v : ""))
		hp_die("out of memory");
}

void nf_bool(cJSON *obj, const char *key, int v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	if (!cJSON_AddBoolToObject(obj, key, v))
		hp_die("out of memory");
}

void nf_rc(cJSON *obj, const struct hp_nccl_block *b)
{
	if (b->rc < 0) {
		cJSON_DeleteItemFromObjectCaseSensitive(obj, "rc");
		cJSON_AddNullToObject(obj, "rc");
	} else {
		nf_num(obj, "rc", b->rc);
	}
	nf_bool(obj, "present", b->rc != 127);
}

const char *nf_first(const struct hp_nccl_block *b)
{
	size_t i;

	for (i = 0; b && i < b->nkept; i++)
		if (*nf_skip(b->lines[i]))
			return nf_skip(b->lines[i]);
	return NULL;
}

int nf_limit(cJSON *obj, const char *key, const char *word, double scale)
{
	double v;

	if (!strcmp(word, "unlimited") || !strcmp(word, "infinity")) {
		nf_str(obj, key, "unlimited");
		return 1;
	}
	if (!nf_count(word, &v))
		return 0;
	nf_num(obj, key, v * scale);
	return 1;
}

/* ---- framing ---- */

static struct hp_nccl_block *open_block(struct hp_nccl_frame *f, const char *name)
{
	struct hp_nccl_block *b;

	if (f->n == f->alloc) {
		f->alloc = f->alloc ? f->alloc * 2 : 32;
		f->v = xrealloc(f->v, f->alloc * sizeof(*f->v));
	}
	b = &f->v[f->n++];
	memset(b, 0, sizeof(*b));
	hp_strlcpy(b->name, name, sizeof(b->name));
	b->rc = -1;
	return b;
}

static int name_ok(const char *s)
{
	if (!*s || strlen(s) >= 32)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* One marker's words after "@@HP@@": BEGIN x, END x rc, DONE. */
static struct hp_nccl_block *marker(struct hp_nccl_frame *f, struct hp_nccl_block *cur,
				    const char *text)
{
	char w[4][NF_FIELD];
	size_t n = nf_words(text, w, 4);
	double rc;

	if (n == 2 && !strcmp(w[0], "BEGIN") && name_ok(w[1]))
		return open_block(f, w[1]);
	if (n == 3 && !strcmp(w[0], "END") && cur && !strcmp(w[1], cur->name)) {
		if (nf_count(w[2], &rc) && rc <= 255)
			cur->rc = (int)rc;
		return NULL;
	}
	if (n == 1 && !strcmp(w[0], "DONE")) {
		f->done = 1;
		return NULL;
	}
	return cur;
}

static const char *find_mark(const char *p, size_t n)
{
	const char *end = p + n;

	while (p + MARK_LEN <= end) {
		const char *at = memchr(p, '@', (size_t)(end - p));

		if (!at || at + MARK_LEN > end)
			return NULL;
		if (!memcmp(at, MARK, MARK_LEN))
			return at;
		p = at + 1;
	}
	return NULL;
}

void hp_nccl_frame_split(struct hp_nccl_frame *f, const char *text, size_t len)
{
	struct hp_nccl_block *cur = NULL;
	const char *p = text, *end;
	struct hp_buf store = HP_BUF_INIT((size_t)-1);
	size_t *offs = NULL, noffs = 0, aoffs = 0, i, k;
	struct {
		size_t block, line;
	} *where = NULL;

	memset(f, 0, sizeof(*f));
	if (!text) {
		text = "";
		len = 0;
	}
	p = text;
	end = text + len;
	/* Cleaned lines go to one store; their offsets are fixed up once it stops growing. */
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *m = find_mark(p, n);
		size_t data = m ? (size_t)(m - p) : n;

		if (cur && (data || !m)) {
			cur->nlines++;
			if (cur->nkept < HP_NCCL_MAX_LINES) {
				if (noffs == aoffs) {
					aoffs = aoffs ? aoffs * 2 : 256;
					offs = xrealloc(offs, aoffs * sizeof(*offs));
					where = xrealloc(where, aoffs * sizeof(*where));
				}
				offs[noffs] = store.len;
				where[noffs].block = (size_t)(cur - f->v);
				where[noffs].line = cur->nkept++;
				noffs++;
				hp_nccl_clean(p, data, LINE_CLIP, &store);
				hp_buf_putc(&store, '\0');
			}
		}
		if (m) {
			struct hp_buf t = HP_BUF_INIT(512);
			size_t rest = n - data - MARK_LEN;

			hp_nccl_clean(m + MARK_LEN, rest, 256, &t);
			/* open_block may move f->v: keep the index of the current block. */
			cur = marker(f, cur, t.buf);
			hp_buf_release(&t);
			if (f->done)
				break;
		}
		p += n + (nl != NULL);
	}
	f->store = hp_buf_detach(&store, NULL);
	for (i = 0; i < f->n; i++) {
		f->v[i].alloc = f->v[i].nkept;
		f->v[i].lines = f->v[i].nkept ? xcalloc(f->v[i].nkept, sizeof(char *)) : NULL;
	}
	for (k = 0; k < noffs; k++)
		f->v[where[k].block].lines[where[k].line] = f->store + offs[k];
	free(offs);
	free(where);
}

void hp_nccl_frame_release(struct hp_nccl_frame *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->v[i].lines);
	free(f->v);
	free(f->store);
	memset(f, 0, sizeof(*f));
}

const struct hp_nccl_block *hp_nccl_frame_find(const struct hp_nccl_frame *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].name, name))
			return &f->v[i];
	return NULL;
}

/* ---- the probe's own block, the environment, and the whole parse ---- */

void hp_nccl_decode_probe(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "nccl");
	cJSON *o = nf_obj(facts, "probe"), *blocks = nf_obj(o, "blocks");
	size_t i;

	nf_bool(o, "truncated", !f->done);
	for (i = 0; i < f->n; i++) {
		cJSON *x;

		if (cJSON_GetObjectItemCaseSensitive(blocks, f->v[i].name))
			continue;
		x = nf_obj(blocks, f->v[i].name);
		if (f->v[i].rc < 0)
			cJSON_AddNullToObject(x, "rc");
		else
			nf_num(x, "rc", f->v[i].rc);
		nf_num(x, "lines", (double)f->v[i].nlines);
	}
	for (i = 0; b && i < b->nkept; i++) {
		const char *l = b->lines[i];
		double v;

		if (nf_prefix(l, "epoch=") && nf_count(l + 6, &v))
			nf_num(o, "epoch", v);
		else if (nf_prefix(l, "uid=") && nf_count(l + 4, &v)) {
			nf_num(o, "uid", v);
			nf_bool(o, "root", v == 0);
		}
	}
}

/* A value as a shell assignment writes it, without one level of quotes. */
static void unquote(char *v)
{
	size_t n = strlen(v);

	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
		memmove(v, v + 1, n - 2);
		v[n - 2] = '\0';
	}
}

void hp_nccl_decode_environment(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "environment");
	cJSON *o;
	size_t i;

	/* grep: 0 lines found, 1 none (known: nothing set), anything else unknown. */
	if (!b || (b->rc != 0 && b->rc != 1))
		return;
	o = nf_obj(facts, "environment");
	for (i = 0; i < b->nkept; i++) {
		const char *l = nf_skip(b->lines[i]), *eq;
		char name[NF_FIELD], value[NF_FIELD];
		size_t n;

		if (nf_prefix(l, "export "))
			l = nf_skip(l + 7);
		eq = strchr(l, '=');
		if (!eq || eq == l || (size_t)(eq - l) >= sizeof(name))
			continue;
		n = (size_t)(eq - l);
		memcpy(name, l, n);
		name[n] = '\0';
		hp_strlcpy(value, eq + 1, sizeof(value));
		n = strlen(value);
		while (n && value[n - 1] == ' ')
			value[--n] = '\0';
		unquote(value);
		nf_str(o, name, value);
	}
}

cJSON *hp_nccl_probe_parse(const char *text, size_t len)
{
	static void (*const decoders[])(const struct hp_nccl_frame *, cJSON *) = {
		hp_nccl_decode_probe, hp_nccl_decode_topo, hp_nccl_decode_pci_numa,
		hp_nccl_decode_acs, hp_nccl_decode_iommu, hp_nccl_decode_peermem,
		hp_nccl_decode_efa_installer, hp_nccl_decode_ofi_plugin,
		hp_nccl_decode_libfabric, hp_nccl_decode_nccl_lib, hp_nccl_decode_netif,
		hp_nccl_decode_limits, hp_nccl_decode_procs, hp_nccl_decode_hugepages,
		hp_nccl_decode_logind, hp_nccl_decode_shm, hp_nccl_decode_numa,
		hp_nccl_decode_firewall, hp_nccl_decode_environment,
	};
	struct hp_nccl_frame f;
	cJSON *facts = cJSON_CreateObject();
	size_t i;

	if (!facts)
		hp_die("out of memory");
	hp_nccl_frame_split(&f, text, text ? len : 0);
	for (i = 0; i < HP_ARRAY_LEN(decoders); i++)
		decoders[i](&f, facts);
	hp_nccl_frame_release(&f);
	return facts;
}
