/*
 * Helpers for tests that need probe output: read a captured sample from
 * tests/data/probe/, and compose framed blocks the way probe.sh prints them
 * ("@@HP@@ BEGIN x", lines, "@@HP@@ END x rc", "@@HP@@ DONE").
 */
#ifndef HP_PROBE_T_H
#define HP_PROBE_T_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/buf.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/probe.h"
#include "t.h"

/* Whole file under tests/data/probe/ (tests run from the repository root); caller frees. */
static inline char *pt_file(const char *name)
{
	return t_data("probe", name, NULL);
}

/* One block; content may lack its final newline. rc < 0: no END marker. */
static inline void pt_block(struct hp_buf *out, const char *name, int rc, const char *content)
{
	hp_buf_printf(out, "@@HP@@ BEGIN %s\n", name);
	if (content && *content) {
		hp_buf_puts(out, content);
		if (content[strlen(content) - 1] != '\n')
			hp_buf_putc(out, '\n');
	}
	if (rc >= 0)
		hp_buf_printf(out, "@@HP@@ END %s %d\n", name, rc);
}

static inline void pt_block_file(struct hp_buf *out, const char *name, int rc, const char *file)
{
	char *text = pt_file(file);

	pt_block(out, name, rc, text);
	free(text);
}

static inline void pt_done(struct hp_buf *out)
{
	hp_buf_puts(out, "@@HP@@ DONE\n");
}

static inline cJSON *pt_parse(const struct hp_buf *out)
{
	cJSON *f = hp_probe_parse(out->buf, out->len);

	T_ASSERT(cJSON_IsObject(f));
	return f;
}

/* Number at a dotted path of the facts, or -12345 when absent. */
static inline double pt_num(const cJSON *facts, const char *path)
{
	return hp_json_num(facts, path, -12345);
}

#endif
