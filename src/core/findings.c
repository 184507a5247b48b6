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

void hp_finding_evidence(struct hp_finding *f, const char *line)
{
	if (!f->evidence)
		f->evidence = cJSON_CreateArray();
	cJSON_AddItemToArray(f->evidence, cJSON_CreateString(line));
}

/* Sets one placeholder value on a finding, replacing an earlier one. */
void hp_finding_var(struct hp_finding *f, const char *name, const char *value)
{
	if (!f->vars && !(f->vars = cJSON_CreateObject()))
		hp_die("out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(f->vars, name);
	if (!cJSON_AddStringToObject(f->vars, name, value))
		hp_die("out of memory");
}

void hp_finding_node(struct hp_finding *f, const char *id)
{
	if (!id)
		return;
	if (!f->nodes && !(f->nodes = cJSON_CreateArray()))
		hp_die("out of memory");
	cJSON_AddItemToArray(f->nodes, cJSON_CreateString(id));
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
		cJSON_Delete(f->v[i].nodes);
	}
	hp_array_release(f);
}
