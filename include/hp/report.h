/*
 * The reporter: findings to text (the original's conventions) or JSON.
 * The only place that formats findings; it sanitises every string that
 * came from the cluster.
 */
#ifndef HP_REPORT_H
#define HP_REPORT_H

#include <stdio.h>

#include "hp/buf.h"
#include "hp/check.h"

#define HP_REF_DOC "references/node-diagnostics-detail.md"

struct hp_report_opts {
	int color;              /* ANSI colours */
	const char *cluster;    /* for the footer */
	const char *region;
	const char *orchestrator;
	const char *title;      /* banner title, default "HyperPod Node Triage — READ-ONLY" */
	int suggest;            /* suggested commands under FAIL/WARN (include/hp/suggest.h) */
	const struct hp_snapshot *snap; /* where --suggest finds ids; may be NULL */
};

/* Text report into out. */
void hp_report_text(const struct hp_findings *f, const struct hp_report_opts *o, struct hp_buf *out);
/* JSON document into out (schema in README.md). */
void hp_report_json(const struct hp_findings *f, const struct hp_report_opts *o, struct hp_buf *out);

/* Highest priority among FAIL/WARN findings, HP_PNONE when none. */
enum hp_prio hp_report_worst(const struct hp_findings *f);

/*
 * Copy s into out replacing control characters (C0, DEL, C1, ESC
 * sequences) with nothing or a space (tab/newline -> space), and invalid
 * UTF-8 bytes with '?'. Bounded by max bytes of output.
 */
void hp_sanitize(const char *s, struct hp_buf *out, size_t max);

/* Colour decision: --no-color, NO_COLOR, TERM=dumb, isatty. */
int hp_report_want_color(int flag_no_color, const char *no_color_env, const char *term, int is_tty);

#endif
