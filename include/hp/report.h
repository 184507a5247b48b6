/*
 * The reporter: findings to text (the original's conventions) or JSON.
 * The only place that formats findings; it sanitises every string that
 * came from the cluster.
 */
#ifndef HP_REPORT_H
#define HP_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "hp/array.h"
#include "hp/buf.h"
#include "hp/check.h"
#include "hp/err.h"
#include "hp/snapshot.h"
/* Report text goes through one rule, HP_TEXT_REPORT (hp_text_add). */
#include "hp/text.h"

#define HP_REF_DOC "references/node-diagnostics-detail.md"
/* Phases a partial report names as not finished, at most. */
#define HP_REPORT_MAX_PHASES 8

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
	int interrupted;              /* 0, or the signal that stopped the run (or its sweep) */
	size_t probed, to_probe;      /* with interrupted: N of M nodes probed */
	/*
	 * With interrupted, from the snapshot's meta.interrupted: the phase the
	 * signal came in ("api", "kube", "probes", "slurm"; NULL: the sweep, as
	 * older snapshots and other commands record it) and the phases that did
	 * not finish, in order. The report names them and lists them as not
	 * checked.
	 */
	const char *interrupted_phase;
	const char *unfinished[HP_REPORT_MAX_PHASES];
	size_t nunfinished;
	int concurrency_asked;        /* SSM sessions at once asked for, */
	int concurrency_used;         /* and the fewer the open-file limit allowed (0: not lowered) */
	long open_file_limit;
	const char *node;             /* --node: the report is that node's; NULL for the cluster */
	const char *node_group;       /* its instance group, NULL unknown */
	size_t focus_left_out;        /* with node: findings about other nodes and groups left out */
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
/* "the AWS API reads" for "api", ...: a phase as the report names it (the id itself when unknown). */
const char *hp_report_phase_name(const char *id);

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

struct hp_diff;

/*
 * The exit gate (--fail-on): the FAIL and WARN findings of priority prio
 * or worse (an area left unchecked by a failed AWS call is a WARN P1, so
 * it counts at P1 and P2). They are the JUnit report's <failure>s, one per
 * key: a finding about many nodes once per node. Without --fail-on the
 * JUnit report fails at P1 (given 0) and the text report names no gate.
 */
struct hp_gate {
	enum hp_prio prio;
	int given;              /* --fail-on was given */
	size_t findings;        /* findings at prio or worse */
	size_t keys;            /* their keys (JUnit failures) */
	size_t by_prio[HP_PNONE]; /* findings at each priority of them */
};

/* The gate at prio over f (every finding: before --only). */
void hp_report_gate(const struct hp_findings *f, enum hp_prio prio, int given, struct hp_gate *g);
/* Whether the gate counts finding x; without a gate (NULL), the JUnit default, P1. */
int hp_report_gate_counts(const struct hp_gate *g, const struct hp_finding *x);
/*
 * "--fail-on P1 counts 9 findings at P1 or worse (42 keys: …)" or
 * "--fail-on P1 counts no finding at P1 or worse", into out (emptied first).
 */
void hp_report_gate_line(const struct hp_gate *g, struct hp_buf *out);

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
	/*
	 * triage --baseline: the comparison with the baseline; each FAIL and
	 * WARN is marked [NEW] or [known] (JSON "baseline"), the resolved ones
	 * are listed before the summary. NULL: none.
	 */
	const struct hp_diff *baseline;
	int summary_only;       /* --summary: the text report's header and summary, no group blocks */
	/*
	 * The exit gate (--fail-on): what fails in JUnit, and the text
	 * summary's last line when given. NULL: JUnit fails at P1, no line.
	 */
	const struct hp_gate *gate;
	/*
	 * Seconds the checks of each report group took to judge the collected
	 * data (HP_GROUP__COUNT entries, hp_checks_run_timed): the JUnit
	 * testsuites' time. NULL: not measured, and no testsuite has a time.
	 */
	const double *group_s;
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
/*
 * "hpnode explain A B.1": the command that prints the finding's sections
 * offline, into out (nothing when it has none).
 */
void hp_report_explain(struct hp_buf *out, const struct hp_finding *f);

struct hp_snapshot;
/*
 * The findings of a report about one node (--node): those naming it, and
 * the cluster's own unless they name only another instance group or only
 * subnets and security groups its group does not use. The rest are
 * removed from f (and freed); returns how many.
 */
size_t hp_report_focus(const struct hp_snapshot *s, const char *node, struct hp_findings *f);
/* --only: keep the findings whose tag's bit (1 << HP_TAG_x) is in tags; returns how many went. */
size_t hp_report_keep_tags(struct hp_findings *f, unsigned tags);
/* The node's instance group (DescribeClusterNode's, else the node list's); NULL unknown. */
const char *hp_report_node_group(const struct hp_snapshot *s, const char *node);

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
 * The one XML escaping every XML writer calls (text and attribute values):
 * s sanitised, the five specials as entities, and only XML 1.0 Char text
 * out: a noncharacter (U+FFFE, U+FFFF, U+FDD0..U+FDEF, each plane's last
 * two) or control becomes U+FFFD, never dropped.
 */
void hp_xml_escape(struct hp_buf *out, const char *s);

/* Colour decision: --no-color, NO_COLOR, TERM=dumb, isatty. */
int hp_report_want_color(int flag_no_color, const char *no_color_env, const char *term, int is_tty);

/*
 * Two runs compared (src/report/diff.c; `hpnode diff`, `triage --baseline`).
 * A side is one run's FAIL and WARN findings, one item per key (a finding
 * about many nodes one per node), and its inventory when known.
 */
struct hp_diff_item {
	char *key, *check, *message;
	char *pointer;          /* " → references/….md § X (Title)", or NULL */
	char *node;             /* or NULL */
	enum hp_tag tag;
	enum hp_prio prio;      /* HP_PNONE when it is not an issue */
};

struct hp_diff_node {
	char *id, *group, *status;
};

struct hp_diff_group {
	char *name;
	long current, target;   /* -1 unknown */
};

struct hp_diff_side {
	char *file;             /* as named on the command line */
	const char *kind;       /* "snapshot", "report", "run" */
	char *cluster, *collected_at;
	HP_ARRAY(struct hp_diff_item) items;
	int has_inventory;
	HP_ARRAY(struct hp_diff_node) nodes;
	HP_ARRAY(struct hp_diff_group) groups;
};

struct hp_diff_pair {
	const struct hp_diff_item *old_item, *new_item;
};

struct hp_diff_change {
	const struct hp_diff_node *old_node, *new_node;
};

struct hp_diff_gchange {
	const struct hp_diff_group *old_group, *new_group;   /* NULL: absent on that side */
};

struct hp_diff {
	struct hp_diff_side *old_side, *new_side;
	HP_ARRAY(const struct hp_diff_item *) fresh, resolved;  /* by key */
	HP_ARRAY(struct hp_diff_pair) persisting;
	size_t prio_changes;    /* persisting ones whose priority or tag changed */
	enum hp_prio worst_new; /* HP_PNONE: no new issue */
	HP_ARRAY(const struct hp_diff_node *) added, removed;
	HP_ARRAY(struct hp_diff_change) replaced, status;
	HP_ARRAY(struct hp_diff_gchange) groups;
};

void hp_diff_side_init(struct hp_diff_side *s, const char *file, const char *kind);
void hp_diff_side_release(struct hp_diff_side *s);
/* The problems of a list of findings (after hp_findings_number_keys). */
void hp_diff_side_findings(struct hp_diff_side *s, const struct hp_findings *f);
/* A saved JSON report (hpnode.triage/2 with keys): its problems and "inventory". */
int hp_diff_side_report(struct hp_diff_side *s, const cJSON *doc, struct hp_error *e);
/* The cluster, collection time and inventory of a snapshot. */
void hp_diff_side_snapshot(struct hp_diff_side *s, const struct hp_snapshot *snap);
/* A snapshot's inventory as the JSON report's "inventory" member; NULL when it lists nothing. */
cJSON *hp_diff_inventory(const struct hp_snapshot *snap);
/* Compare (sorts both sides' items by key); the sides must outlive d. */
void hp_diff_compare(struct hp_diff *d, struct hp_diff_side *old_side, struct hp_diff_side *new_side);
void hp_diff_release(struct hp_diff *d);
/* A side's item of key (after hp_diff_compare), or NULL. */
const struct hp_diff_item *hp_diff_find(const struct hp_diff_side *s, const char *key);
/* The comparison as text (colour: new red/yellow, resolved struck through), JSON hpnode.diff/1, JUnit. */
void hp_diff_text(const struct hp_diff *d, int color, struct hp_buf *out);
void hp_diff_text_inventory(const struct hp_diff *d, int color, struct hp_buf *out);
void hp_diff_json(const struct hp_diff *d, struct hp_buf *out);
void hp_diff_junit(const struct hp_diff *d, struct hp_buf *out);

/*
 * triage --baseline: whether a finding was in the baseline (d's old side):
 * 1 known, 0 new (for a finding about many nodes: some node's key was
 * not), -1 not a FAIL or WARN; the resolved ones as a text block and the
 * JSON "baseline" member.
 */
int hp_diff_known(const struct hp_diff *d, const struct hp_finding *f);
void hp_diff_text_resolved(const struct hp_diff *d, int color, struct hp_buf *out);
cJSON *hp_diff_baseline_json(const struct hp_diff *d);

#endif
