/*
 * Many nodes, one finding: the folding rule of fold.h, in one place.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/buf.h"
#include "fold.h"

struct hp_fold_item {
	const char *node;  /* the process-wide id (hp_finding_id_ref); NULL: not known */
	char *msg;         /* the node's own finding; NULL: not kept */
	char *line;        /* its line in a folded finding; NULL: msg */
	cJSON *evidence;   /* of its own finding */
	cJSON *vars;       /* placeholder values of its own finding, or NULL */
	enum hp_fold_keep keep;
};

enum hp_fold_keep hp_fold_keeps(enum hp_tag tag, size_t index)
{
	if (index < HP_FOLD_MIN)
		return HP_FOLD_KEEP_ALL;
	if ((tag == HP_TAG_FAIL || tag == HP_TAG_WARN || tag == HP_TAG_SKIP) &&
	    index < HP_FOLD_SAMPLE)
		return HP_FOLD_KEEP_LINE;
	return HP_FOLD_KEEP_NODE;
}

/* fmt formatted, cut (never dropped) at the line cap; caller frees. */
static char *vformat(const char *fmt, va_list ap) HP_PRINTF(1, 0);

static char *vformat(const char *fmt, va_list ap)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

	if (hp_buf_vaddf(&b, fmt, ap))
		hp_buf_puts(&b, "(message too long)");
	return hp_buf_detach(&b, NULL);
}

static struct hp_fold_item *push(struct hp_fold *f, const char *node)
{
	struct hp_fold_item *it = hp_array_push(f);

	it->keep = hp_fold_keeps(f->tag, f->n - 1);
	it->node = hp_finding_id_ref(node);
	return it;
}

struct hp_fold_item *hp_fold_vadd(struct hp_fold *f, const char *node, const char *fmt,
				  va_list ap)
{
	struct hp_fold_item *it = push(f, node);

	if (it->keep != HP_FOLD_KEEP_NODE)
		it->msg = vformat(fmt, ap);
	return it;
}

struct hp_fold_item *hp_fold_add_node(struct hp_fold *f, const char *node)
{
	struct hp_fold_item *it = push(f, node);

	if (it->keep != HP_FOLD_KEEP_NODE)
		hp_die("internal error: a fold result without the message it needs");
	return it;
}

struct hp_fold_item *hp_fold_add(struct hp_fold *f, const char *node, const char *fmt, ...)
{
	struct hp_fold_item *it;
	va_list ap;

	va_start(ap, fmt);
	it = hp_fold_vadd(f, node, fmt, ap);
	va_end(ap);
	return it;
}

void hp_fold_evidence(struct hp_fold_item *it, const char *line)
{
	if (it->keep != HP_FOLD_KEEP_ALL)
		return;
	if (!it->evidence && !(it->evidence = cJSON_CreateArray()))
		hp_die("out of memory");
	cJSON_AddItemToArray(it->evidence, cJSON_CreateString(line));
}

void hp_fold_var(struct hp_fold_item *it, const char *name, const char *value)
{
	if (!name || !value || it->keep != HP_FOLD_KEEP_ALL)
		return;
	if (!it->vars && !(it->vars = cJSON_CreateObject()))
		hp_die("out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(it->vars, name);
	cJSON_AddStringToObject(it->vars, name, value);
}

void hp_fold_line(struct hp_fold_item *it, const char *fmt, ...)
{
	va_list ap;

	if (it->keep == HP_FOLD_KEEP_NODE)
		return;
	free(it->line);
	va_start(ap, fmt);
	it->line = vformat(fmt, ap);
	va_end(ap);
}

size_t hp_fold_count(const struct hp_fold *f)
{
	return f->n;
}

void hp_fold_release(struct hp_fold *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		free(f->v[i].msg);
		free(f->v[i].line);
		cJSON_Delete(f->v[i].evidence);
		cJSON_Delete(f->v[i].vars);
	}
	free(f->v);
	f->v = NULL;
	f->n = f->alloc = 0;
}

static void emit_each(struct hp_emit *em, const struct hp_fold *f)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		struct hp_finding *x = hp_emitx(em, f->tag, f->prio, f->section, f->v[i].node, "%s",
						f->v[i].msg);
		const cJSON *e;

		cJSON_ArrayForEach(e, f->v[i].evidence)
			if (cJSON_IsString(e))
				hp_finding_evidence(x, e->valuestring);
		cJSON_ArrayForEach(e, f->v[i].vars)
			if (e->string && cJSON_IsString(e))
				hp_finding_var(x, e->string, e->valuestring);
	}
}

static struct hp_finding *emit_folded(struct hp_emit *em, const struct hp_fold *f,
				      const char *fmt, va_list ap) HP_PRINTF(3, 0);

static struct hp_finding *emit_folded(struct hp_emit *em, const struct hp_fold *f,
				      const char *fmt, va_list ap)
{
	char *msg = vformat(fmt, ap);
	struct hp_finding *x = hp_emitx(em, f->tag, f->prio, f->section, NULL, "%s", msg);
	size_t i;

	free(msg);
	for (i = 0; i < f->n; i++)
		hp_finding_node(x, f->v[i].node);
	if (f->tag == HP_TAG_FAIL || f->tag == HP_TAG_WARN || f->tag == HP_TAG_SKIP) {
		for (i = 0; i < f->n && i < HP_FOLD_SAMPLE; i++)
			hp_finding_evidence(x, f->v[i].line ? f->v[i].line : f->v[i].msg);
		/* Every node has its line: the ids would only repeat them. */
		if (f->n <= HP_FOLD_SAMPLE)
			return x;
	}
	/* "nodes 1-100 of 250: i-… i-…" lines over the known ids, made when read. */
	hp_finding_list_ids(x);
	return x;
}

struct hp_finding *hp_fold_emit(struct hp_emit *em, struct hp_fold *f, const char *fmt, ...)
{
	struct hp_finding *x = NULL;
	va_list ap;

	if (f->n >= HP_FOLD_MIN) {
		va_start(ap, fmt);
		x = emit_folded(em, f, fmt, ap);
		va_end(ap);
	} else {
		emit_each(em, f);
	}
	hp_fold_release(f);
	return x;
}

struct hp_finding *hp_fold_emit_one(struct hp_emit *em, struct hp_fold *f, const char *fmt, ...)
{
	struct hp_finding *x = NULL;
	va_list ap;

	if (f->n) {
		va_start(ap, fmt);
		x = emit_folded(em, f, fmt, ap);
		va_end(ap);
	}
	hp_fold_release(f);
	return x;
}
