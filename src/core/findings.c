/*
 * Findings: how a check's run() records what it found (hp_emit*), and the
 * title of a section a finding points at, looked up in the reference
 * document of its check (the embedded file is the one source of section
 * ids and titles). Formatting belongs to the reporter, not here.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/check.h"
#include "hp/pool.h"
#include "hp/refdoc.h"

const char *hp_check_doc(const struct hp_check *c)
{
	return c && c->doc ? c->doc : HP_REFDOC_DETAIL;
}

const char *hp_finding_section_title(const struct hp_finding *f, const char *id)
{
	return hp_refdoc_title(hp_check_doc(f ? f->check : NULL), id);
}

static struct hp_finding *push(struct hp_emit *em, enum hp_tag tag, enum hp_prio prio,
			       const char *section, const char *node, const char *fmt, va_list ap)
	HP_PRINTF(6, 0);

static struct hp_finding *push(struct hp_emit *em, enum hp_tag tag, enum hp_prio prio,
			       const char *section, const char *node, const char *fmt, va_list ap)
{
	struct hp_findings *out = em->out;
	struct hp_finding *f;
	struct hp_buf msg = HP_BUF_INIT(HP_MAX_LINE);

	f = hp_array_push(out);
	f->check = em->check;
	f->tag = tag;
	if (tag == HP_TAG_FAIL || tag == HP_TAG_WARN)
		f->prio = prio;
	else
		f->prio = HP_PNONE;
	f->section = xstrdup(section ? section : (em->check ? em->check->section : ""));
	f->node = node ? xstrdup(node) : NULL;
	/* A message longer than the line cap is cut, never dropped. */
	if (hp_buf_vaddf(&msg, fmt, ap))
		hp_buf_puts(&msg, "(message too long)");
	f->message = hp_buf_detach(&msg, NULL);
	return f;
}

struct hp_finding *hp_emit(struct hp_emit *em, enum hp_tag tag, const char *fmt, ...)
{
	struct hp_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = push(em, tag, em->check ? em->check->prio : HP_P2, NULL, NULL, fmt, ap);
	va_end(ap);
	return f;
}

struct hp_finding *hp_emitx(struct hp_emit *em, enum hp_tag tag, enum hp_prio prio,
			    const char *section, const char *node, const char *fmt, ...)
{
	struct hp_finding *f;
	va_list ap;

	va_start(ap, fmt);
	f = push(em, tag, prio, section, node, fmt, ap);
	va_end(ap);
	return f;
}

static void add_line(struct hp_finding *f, const char *line)
{
	if (!f->evidence)
		f->evidence = cJSON_CreateArray();
	cJSON_AddItemToArray(f->evidence, cJSON_CreateString(line));
}

/* Id lines made lines of their own (so what comes after them keeps its place). */
static void keep_id_lines(struct hp_finding *f)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
	size_t k, n = hp_finding_id_lines(f);

	for (k = 0; k < n; k++) {
		hp_finding_id_line(f, k, &b);
		add_line(f, b.buf);
	}
	hp_buf_release(&b);
	f->id_lines = 0;
}

void hp_finding_evidence(struct hp_finding *f, const char *line)
{
	if (f->id_lines)
		keep_id_lines(f);
	add_line(f, line);
}

void hp_finding_list_ids(struct hp_finding *f)
{
	if (f->id_lines)
		keep_id_lines(f);
	f->id_lines = f->nnodes;
}

size_t hp_finding_id_lines(const struct hp_finding *f)
{
	return (f->id_lines + HP_FINDING_IDS_PER_LINE - 1) / HP_FINDING_IDS_PER_LINE;
}

void hp_finding_id_line(const struct hp_finding *f, size_t k, struct hp_buf *out)
{
	size_t first = k * HP_FINDING_IDS_PER_LINE, i;
	size_t last = first + HP_FINDING_IDS_PER_LINE;

	hp_buf_reset(out);
	if (first >= f->id_lines)
		return;
	if (last > f->id_lines)
		last = f->id_lines;
	hp_buf_printf(out, "nodes %zu-%zu of %zu:", first + 1, last, f->id_lines);
	for (i = first; i < last; i++)
		hp_buf_printf(out, " %.40s", f->nodes[i]);
}

size_t hp_finding_lines(const struct hp_finding *f)
{
	return (size_t)cJSON_GetArraySize(f->evidence) + hp_finding_id_lines(f);
}

/* Sets one placeholder value on a finding, replacing an earlier one. */
void hp_finding_var(struct hp_finding *f, const char *name, const char *value)
{
	if (!f || !value)
		return;
	if (!f->vars && !(f->vars = cJSON_CreateObject()))
		hp_die("out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(f->vars, name);
	if (!cJSON_AddStringToObject(f->vars, name, value))
		hp_die("out of memory");
}

/*
 * Every node id any finding named, once: findings about a fleet name the
 * same ids over and over (30 checks over 20,000 nodes are 600,000 names of
 * 20,000 ids). Kept for the life of the process, as findings may move
 * between lists.
 */
static struct hp_strtab node_ids = HP_STRTAB_INIT;

const char *hp_finding_id_ref(const char *id)
{
	return id ? hp_strtab_get(&node_ids, hp_strtab_adds(&node_ids, id)) : NULL;
}

void hp_finding_node(struct hp_finding *f, const char *id)
{
	if (!id)
		return;
	if (f->nnodes == f->nodes_alloc) {
		f->nodes_alloc = f->nodes_alloc ? 2 * f->nodes_alloc : 4;
		f->nodes = xrealloc(f->nodes, f->nodes_alloc * sizeof(*f->nodes));
	}
	f->nodes[f->nnodes++] = hp_finding_id_ref(id);
}

void hp_findings_release(struct hp_findings *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->v[i].section);
		free(f->v[i].message);
		free(f->v[i].node);
		cJSON_Delete(f->v[i].evidence);
		cJSON_Delete(f->v[i].vars);
		free(f->v[i].nodes);
		free(f->v[i].subject);
		free(f->v[i].kclass);
	}
	hp_array_release(f);
}

/* ---------------------------------------------------------------- keys */

#define KEY_PART_MAX 160

void hp_finding_subject(struct hp_finding *f, const char *subject)
{
	free(f->subject);
	f->subject = subject && *subject ? xstrdup(subject) : NULL;
}

void hp_finding_class(struct hp_finding *f, const char *cls)
{
	free(f->kclass);
	f->kclass = cls && *cls ? xstrdup(cls) : NULL;
}

int hp_finding_is_problem(const struct hp_finding *f)
{
	return f->tag == HP_TAG_FAIL || f->tag == HP_TAG_WARN;
}

/* A part of a key: one line, no blank or control byte, bounded. */
static void key_part(struct hp_buf *out, const char *s)
{
	size_t n;

	for (n = 0; s && *s && n < KEY_PART_MAX; s++, n++) {
		unsigned char c = (unsigned char)*s;

		hp_buf_putc(out, c <= 0x20 || c == 0x7f || c == '#' || c == '~' ? '_' : (char)c);
	}
}

static const char *var(const struct hp_finding *f, const char *name)
{
	const cJSON *v = f->vars ? cJSON_GetObjectItemCaseSensitive(f->vars, name) : NULL;

	return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

/* The subject from the placeholder values: the first that names a thing. */
static int var_subject(const struct hp_finding *f, struct hp_buf *out)
{
	static const char *const in_ns[] = { "POD", "JOB", "POLICY" };
	static const char *const plain[] = { "GROUP", "SG_ID", "ROLE_NAME", "INSTANCE_TYPE",
					     "NODE_NAME" };
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(in_ns); i++) {
		const char *v = var(f, in_ns[i]), *ns = var(f, "NAMESPACE");

		if (!v)
			continue;
		if (ns) {
			key_part(out, ns);
			hp_buf_putc(out, '/');
		}
		key_part(out, v);
		if (i == 0 && var(f, "CONTAINER")) {
			hp_buf_putc(out, '/');
			key_part(out, var(f, "CONTAINER"));
		}
		return 1;
	}
	for (i = 0; i < HP_ARRAY_LEN(plain); i++) {
		if (var(f, plain[i])) {
			key_part(out, var(f, plain[i]));
			return 1;
		}
	}
	return 0;
}

int hp_finding_per_node(const struct hp_finding *f)
{
	return !f->subject && !f->node && f->nnodes > 0;
}

static void key_class(const struct hp_finding *f, struct hp_buf *out)
{
	const char *dflt = f->check && f->check->section ? f->check->section : "";

	if (f->kclass) {
		hp_buf_putc(out, '#');
		key_part(out, f->kclass);
	} else if (hp_finding_is_problem(f) && f->section && *f->section &&
		   strcmp(f->section, dflt)) {
		hp_buf_putc(out, '#');
		key_part(out, f->section);
	}
}

static void key_check(const struct hp_finding *f, struct hp_buf *out)
{
	hp_buf_reset(out);
	key_part(out, f->check && f->check->id ? f->check->id : "finding");
}

/* The key without its ~n. */
static void key_base(const struct hp_finding *f, struct hp_buf *out)
{
	struct hp_buf subj = HP_BUF_INIT(4 * KEY_PART_MAX);

	key_check(f, out);
	if (f->subject)
		key_part(&subj, f->subject);
	else if (f->node)
		key_part(&subj, f->node);
	else if (f->nnodes)
		hp_buf_puts(&subj, "nodes");
	else
		var_subject(f, &subj);
	if (subj.len) {
		hp_buf_putc(out, '/');
		hp_buf_puts(out, subj.buf);
	}
	hp_buf_release(&subj);
	key_class(f, out);
}

void hp_finding_key(const struct hp_finding *f, struct hp_buf *out)
{
	key_base(f, out);
	if (f->key_seq > 1)
		hp_buf_printf(out, "~%u", f->key_seq);
}

void hp_finding_node_key(const struct hp_finding *f, size_t k, struct hp_buf *out)
{
	key_check(f, out);
	hp_buf_putc(out, '/');
	key_part(out, k < f->nnodes ? f->nodes[k] : "?");
	key_class(f, out);
}

/* Open addressing over the base keys: how many of each were seen, per family. */
struct key_count {
	char *key;
	unsigned n;
};

void hp_findings_number_keys(struct hp_findings *f)
{
	struct hp_buf b = HP_BUF_INIT(4 * KEY_PART_MAX);
	struct key_count *t;
	size_t cap = 64, i;

	while (cap < 4 * f->n)
		cap *= 2;
	t = xcalloc(cap, sizeof(*t));
	for (i = 0; i < f->n; i++) {
		struct hp_finding *x = &f->v[i];
		size_t h;

		key_base(x, &b);
		/* The two families are numbered apart: a PASS before a FAIL moves neither. */
		hp_buf_putc(&b, hp_finding_is_problem(x) ? '!' : '.');
		h = (size_t)hp_hash_bytes(b.buf, b.len) & (cap - 1);
		while (t[h].key && strcmp(t[h].key, b.buf))
			h = (h + 1) & (cap - 1);
		if (!t[h].key)
			t[h].key = xstrdup(b.buf);
		x->key_seq = ++t[h].n;
	}
	for (i = 0; i < cap; i++)
		free(t[i].key);
	free(t);
	hp_buf_release(&b);
}
