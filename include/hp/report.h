/*
 * The reporter: findings to text (the original's conventions) or JSON.
 * The only place that formats findings; it sanitises every string that
 * came from the cluster.
 */
#ifndef HP_REPORT_H
#define HP_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "hp/buf.h"
#include "hp/check.h"

#define HP_REF_DOC "references/node-diagnostics-detail.md"

/*
 * What the report header says about the run itself (text, JSON "run",
 * JUnit properties). Every string may be NULL (unknown); strings that came
 * from AWS or the command line are sanitised by the reporter.
 */
struct hp_report_run {
	const char *version;          /* HP_VERSION */
	const char *revision;         /* git revision the binary was built from, or NULL */
	int64_t started_ms;           /* wall clock at start, ms since the epoch; 0 unknown */
	int64_t duration_ms;          /* -1 unknown */
	const char *const *argv;      /* the command line (NULL-terminated), or NULL */
	const char *account, *caller_arn;  /* sts:GetCallerIdentity */
	const char *cluster_arn;
	const char *credential_source;
	const char *replay_file;      /* set when the report replays a snapshot */
	int64_t collected_ms;         /* the snapshot's collection time; 0 unknown */
	const char *collected_by;     /* "hpnode 0.1.0" */
	int interrupted;              /* 0, or the signal that stopped the sweep */
	size_t probed, to_probe;      /* with interrupted: N of M nodes probed */
};

/* One report group as a command numbers and names it ("6", "Training Job Pods"). */
struct hp_report_group_title {
	enum hp_group group;
	const char *num;
	const char *name;
};

/* A line of a command's summary block: "Namespace: ml"; JSON "scope": {key: value}. */
struct hp_report_field {
	const char *key;        /* JSON member name: "namespace" */
	const char *label;      /* text label: "Namespace" */
	const char *value;      /* NULL: "all" / null */
};

#define HP_REPORT_MAX_FIELDS 12

/*
 * How a command other than triage lays out its report (NULL members keep
 * triage's): the numbers and names of its groups, the references its
 * pointers go to, and its summary block.
 */
struct hp_report_layout {
	const struct hp_report_group_title *groups;  /* overrides, in any order */
	size_t ngroups;
	const char *docs;            /* banner: "references/x.md or references/y.md" */
	const char *summary_num;     /* the summary's section number ("12"); NULL: "9" */
	const char *summary_title;   /* "NCCL Diagnostic Summary"; NULL: "Triage Summary" */
	struct hp_report_field fields[HP_REPORT_MAX_FIELDS];  /* summary lines, in order */
	size_t nfields;
	const char *mode;            /* "READ-ONLY (no changes applied)": the summary's Mode line */
	const char *confirm;         /* the command to confirm a fix with, "hpnode nccl --cluster C ..." */
	const char *no_issue;        /* the line when nothing counts as an issue */
	const char *json_schema;     /* NULL: "hpnode.triage/2" */
};

struct hp_report_opts {
	int color;              /* ANSI colours */
	const char *cluster;    /* for the footer */
	const char *region;
	const char *orchestrator;
	const char *title;      /* banner title, default "HyperPod Node Triage — READ-ONLY" */
	int suggest;            /* suggested commands under FAIL/WARN (include/hp/suggest.h) */
	const struct hp_snapshot *snap; /* where --suggest finds ids; may be NULL */
	const struct hp_report_run *run; /* header lines / JSON "run"; NULL = no header */
	/*
	 * Where the report goes as it is written: when set, what a renderer put
	 * in its out buffer is handed to sink whenever it passes 64 KiB and at
	 * the end (out is left empty), so no renderer holds a whole report (the
	 * JSON or JUnit report of 20,000 nodes is tens of megabytes). NULL: the
	 * whole report stays in out.
	 */
	void (*sink)(void *ud, const char *p, size_t n);
	void *sink_ud;
	const struct hp_report_layout *layout; /* a command's own layout; NULL = triage's */
};

/* Hand out's text to o's sink (past 64 KiB, or all of it when all is set); nothing without one. */
void hp_report_drain(const struct hp_report_opts *o, struct hp_buf *out, int all);

/* Text report into out. */
void hp_report_text(const struct hp_findings *f, const struct hp_report_opts *o, struct hp_buf *out);
/* JSON document into out (schema in README.md). */
void hp_report_json(const struct hp_findings *f, const struct hp_report_opts *o, struct hp_buf *out);

/* Title of a report group ("Cluster Identity") and its number ("1") into *num. */
const char *hp_report_group_name(enum hp_group g, const char **num);
/* The same as the report of o names it (its layout's title, else the default). */
const char *hp_report_group_title(const struct hp_report_opts *o, enum hp_group g,
				  const char **num);
/* Tag name ("FAIL"); "????" when out of range. */
const char *hp_report_tag_name(enum hp_tag t);
/* Issue priority name ("P0") of a FAIL/WARN that counts as an issue, else NULL. */
const char *hp_report_issue_prio(const struct hp_finding *f);
/*
 * " → references/….md § A (Title)" for the finding's section list, in the
 * reference document of its check, into out (nothing when it has none).
 */
void hp_report_pointer(struct hp_buf *out, const struct hp_finding *f);

/* JUnit XML document into out (one testsuite per report group). */
void hp_report_junit(const struct hp_findings *f, const struct hp_report_opts *o, struct hp_buf *out);

/* "2026-01-31T12:00:00Z" for ms since the epoch into out (size >= 21). */
void hp_report_iso8601(int64_t ms, char *out, size_t n);
/*
 * The command line as one shell-quoted line, sanitised, with any
 * user:password@ part of a URL argument replaced by "***@".
 */
void hp_report_command_line(const char *const *argv, struct hp_buf *out);

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
