/*
 * The reporter: turns findings into the text report (banner, one block per
 * report group, triage summary, footer) or into one JSON document. It does
 * no I/O and decides no verdicts; every string that came from the cluster
 * passes through hp_text_add(HP_TEXT_REPORT) before it is written.
 *
 * JSON output (`--output json`), schema "hpnode.triage/1":
 *
 *   {
 *     "schema": "hpnode.triage/1",
 *     "tool": "hpnode",
 *     "cluster": "<name>" | null,
 *     "region": "<region>" | null,
 *     "orchestrator": "EKS" | "Slurm" | "Unknown" | null,
 *     "findings": [
 *       {
 *         "check": "<check id>" | null,
 *         "tag": "PASS" | "FAIL" | "WARN" | "INFO" | "SKIP",
 *         "priority": "P0" | "P1" | "P2" | null,
 *         "section": "A+B" | null,
 *         "title": "EFA / Security Group + VPC / Routing" | null,
 *         "explain": "hpnode explain A B" | null,
 *         "group": "Cluster Events (Root Cause Signals)",
 *         "message": "<text>",
 *         "node": "<instance id>" | null,
 *         "evidence": ["<line>", ...],
 *         "suggestions": [...], "suggestions_skipped": n    (with --suggest)
 *       }
 *     ],
 *     "summary": {"P0": n, "P1": n, "P2": n,
 *                 "pass": n, "fail": n, "warn": n, "info": n, "skip": n,
 *                 "not_checked": n}
 *   }
 *
 * - findings come in the order of the text report: by group (the order of
 *   the numbered text sections), then in the order the checks emitted them;
 * - priority is set only on FAIL and WARN findings that count as issues;
 *   section and title are null when the finding points nowhere; title joins
 *   the section titles with " + " like the text pointer does;
 * - explain is the command that prints the finding's sections offline
 *   (null when it points nowhere);
 * - group is the text section title without its number;
 * - evidence is always an array and holds every line (the text report
 *   shows at most ten per finding);
 * - summary.P0/P1/P2 count issues (the "Issues found" list of the text
 *   report); pass..skip count findings by tag; not_checked counts the
 *   findings the text summary lists under "Not checked" (every SKIP and
 *   every failed AWS call, the api.* checks, and each phase an interrupt
 *   left unfinished); a partial report has run.interrupted (for a
 *   triage also its "phase" and the "unfinished" phases);
 * - with --suggest every finding also has "suggestions" (empty unless it
 *   is a FAIL or WARN with a section; objects described in
 *   src/report/suggest.c) and "suggestions_skipped"; should the built-in
 *   guide not parse, the document has "suggestions_error" instead;
 * - strings are sanitised as in the text report (control characters and
 *   terminal escape sequences removed, invalid UTF-8 replaced by '?'), so
 *   the document is valid UTF-8; it is written compact, on one line.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hp/json.h"
#include "hp/report.h"
#include "hp/suggest.h"

#define C_RED "\033[0;31m"
#define C_GREEN "\033[0;32m"
#define C_YELLOW "\033[1;33m"
#define C_CYAN "\033[0;36m"
#define C_BOLD "\033[1m"
#define C_RESET "\033[0m"

#define DEFAULT_TITLE "HyperPod Node Triage \xe2\x80\x94 READ-ONLY"
#define ARROW "\xe2\x86\x92"   /* U+2192 */
#define SECT "\xc2\xa7"        /* U+00A7 */
#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */

/* Caps on one sanitised string. */
#define MAX_TEXT_FIELD ((size_t)4096)
#define MAX_JSON_FIELD HP_MAX_LINE
#define MAX_NAME ((size_t)512)

/* Evidence lines shown per finding in the text report. */
#define TEXT_EVIDENCE 10
/* A PASS or INFO covering more nodes than this shows a sample of TEXT_NODE_SAMPLE ids. */
#define TEXT_NODES_MAX 10
#define TEXT_NODE_SAMPLE 5

static const struct {
	const char *num;
	const char *name;
} groups[HP_GROUP__COUNT] = {
	[HP_GROUP_IDENTITY] = { "1", "Cluster Identity" },
	[HP_GROUP_EVENTS] = { "2", "Cluster Events (Root Cause Signals)" },
	[HP_GROUP_NODES] = { "3", "Node Health Status" },
	[HP_GROUP_EKS] = { "4", "EKS Node Health Labels" },
	[HP_GROUP_CNI] = { "4a", "EKS CNI & System Pod Health" },
	[HP_GROUP_SLURM] = { "4b", "Slurm Node States" },
	[HP_GROUP_PODS] = { "4c", "EKS Workload Pods" },
	[HP_GROUP_VPC] = { "5", "Cluster VPC Resources" },
	[HP_GROUP_NCCL_JOB] = { "5a", "Training Job Pods" },
	[HP_GROUP_NCCL_NET] = { "5b", "Job Services and NetworkPolicies" },
	[HP_GROUP_NCCL_LOGS] = { "5c", "Job Pod Logs" },
	[HP_GROUP_NCCL_ENV] = { "5d", "NCCL Environment and Versions" },
	[HP_GROUP_LOGS] = { "6", "CloudWatch Logs" },
	[HP_GROUP_SSM] = { "7", "SSM Connectivity" },
	[HP_GROUP_ONNODE] = { "8", "On-Node Resource Checks (via SSM)" },
	[HP_GROUP_NCCL_NODE] = { "8a", "NCCL On-Node Checks (via SSM)" },
	[HP_GROUP_SLURM_MAP] = { "8b", "Slurm Node Mapping" },
};

static const char *const tag_names[] = {
	[HP_TAG_PASS] = "PASS",
	[HP_TAG_FAIL] = "FAIL",
	[HP_TAG_WARN] = "WARN",
	[HP_TAG_INFO] = "INFO",
	[HP_TAG_SKIP] = "SKIP",
};

static const char *const prio_names[] = { "P0", "P1", "P2" };

static const char *const prio_headers[] = {
	"[P0 \xe2\x80\x94 Fix Immediately]",
	"[P1 \xe2\x80\x94 Fix Soon]",
	"[P2 \xe2\x80\x94 Informational]",
};

struct tally {
	size_t tag[HP_TAG_SKIP + 1];
	size_t prio[HP_PNONE];
	size_t issues;
	size_t unchecked;       /* is_unchecked */
};

/* A finding with no check (or a bad group) is shown with the identity block. */
static enum hp_group finding_group(const struct hp_finding *f)
{
	if (f->check && (unsigned)f->check->group < HP_GROUP__COUNT)
		return f->check->group;
	return HP_GROUP_IDENTITY;
}

static int is_issue(const struct hp_finding *f)
{
	return (f->tag == HP_TAG_FAIL || f->tag == HP_TAG_WARN) &&
	       (unsigned)f->prio < HP_PNONE;
}

/*
 * A finding that says part of the cluster went unchecked: a failed AWS call
 * (the api.* checks) or a SKIP. The summary lists them under "Not checked".
 */
static int is_unchecked(const struct hp_finding *f)
{
	if (f->tag == HP_TAG_SKIP)
		return 1;
	return (f->tag == HP_TAG_FAIL || f->tag == HP_TAG_WARN) && f->check && f->check->id &&
	       !strncmp(f->check->id, "api.", 4);
}

static int tag_ok(enum hp_tag t)
{
	return (unsigned)t < HP_ARRAY_LEN(tag_names);
}

static void tally_count(const struct hp_findings *f, struct tally *t)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < f->n; i++) {
		if (tag_ok(f->v[i].tag))
			t->tag[f->v[i].tag]++;
		if (is_issue(&f->v[i])) {
			t->prio[f->v[i].prio]++;
			t->issues++;
		}
		if (is_unchecked(&f->v[i]))
			t->unchecked++;
	}
}

/* Indices of the findings in report order: by group, stable within one. */
static size_t *report_order(const struct hp_findings *f)
{
	size_t *order = xcalloc(f->n, sizeof(*order));
	size_t i, k = 0;
	int g;

	for (g = 0; g < HP_GROUP__COUNT; g++)
		for (i = 0; i < f->n; i++)
			if (finding_group(&f->v[i]) == (enum hp_group)g)
				order[k++] = i;
	return order;
}

/*
 * Next id of a '+'-joined section list; advances *sp. Returns 0 at the
 * end. Empty parts ("A++B") are skipped.
 */
static int section_next(const char **sp, struct hp_str *id)
{
	const char *s = *sp;

	while (*s == '+')
		s++;
	if (!*s)
		return 0;
	id->p = s;
	while (*s && *s != '+')
		s++;
	id->len = (size_t)(s - id->p);
	*sp = s;
	return 1;
}

/* Title of one section id (given as a view) of f's reference document; NULL when unknown. */
static const char *section_title(const struct hp_finding *f, struct hp_str id)
{
	char key[32];

	if (id.len >= sizeof(key))
		return NULL;
	memcpy(key, id.p, id.len);
	key[id.len] = '\0';
	return hp_finding_section_title(f, key);
}

/* Appends s sanitised, or fallback when s is NULL. */
static void put_clean(struct hp_buf *out, const char *s, size_t max, const char *fallback)
{
	if (s)
		hp_text_add(HP_TEXT_REPORT, s, out, max);
	else
		hp_buf_puts(out, fallback);
}

/*
 * " → references/node-diagnostics-detail.md § A (Title) + § B (Title)": the
 * finding's sections in the reference document of its check.
 */
static void put_pointer(struct hp_buf *out, const struct hp_finding *f)
{
	struct hp_buf id = HP_BUF_INIT(MAX_NAME);
	struct hp_str part;
	const char *section = f->section, *s = section;
	int first = 1;

	if (!section || !*section)
		return;
	while (section_next(&s, &part)) {
		const char *title = section_title(f, part);
		char *raw = xstrndup(part.p, part.len);

		hp_buf_reset(&id);
		hp_text_add(HP_TEXT_REPORT, raw, &id, MAX_NAME);
		free(raw);
		if (first) {
			hp_buf_puts(out, " " ARROW " references/");
			hp_buf_puts(out, hp_check_doc(f->check));
			hp_buf_puts(out, " " SECT " ");
		} else
			hp_buf_puts(out, " + " SECT " ");
		hp_buf_puts(out, id.buf);
		if (title)
			hp_buf_printf(out, " (%s)", title);
		first = 0;
	}
	hp_buf_release(&id);
}

/* Whether a section id may go into a printed command as is (letters, digits, dots). */
static int plain_id(struct hp_str id)
{
	size_t i;

	if (!id.len || id.len > 16)
		return 0;
	for (i = 0; i < id.len; i++) {
		unsigned char c = (unsigned char)id.p[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '.'))
			return 0;
	}
	return 1;
}

/*
 * The section ids of f not yet in ids (" A.1 B" as it grows, a space before
 * each) appended to it, at most max ids in all; returns how many ids it holds.
 */
static size_t add_section_ids(struct hp_buf *ids, const struct hp_finding *f, size_t have,
			      size_t max)
{
	const char *s = f->section;
	struct hp_str part;
	char key[20];

	while (s && have < max && section_next(&s, &part)) {
		if (!plain_id(part))
			continue;
		snprintf(key, sizeof(key), " %.*s", (int)part.len, part.p);
		/* Already there: followed by a space or the end. */
		{
			const char *at = ids->buf;
			size_t k = strlen(key);
			int seen = 0;

			while (at && (at = strstr(at, key)) != NULL) {
				if (at[k] == ' ' || at[k] == '\0') {
					seen = 1;
					break;
				}
				at += k;
			}
			if (seen)
				continue;
		}
		hp_buf_puts(ids, key);
		have++;
	}
	return have;
}

void hp_report_explain(struct hp_buf *out, const struct hp_finding *f)
{
	struct hp_buf ids = HP_BUF_INIT(MAX_NAME);

	hp_buf_puts(&ids, "");
	if (add_section_ids(&ids, f, 0, 16)) {
		hp_buf_puts(out, "hpnode explain");
		hp_buf_puts(out, ids.buf);
	}
	hp_buf_release(&ids);
}

/* Most section ids one "hpnode explain" line of the summary names. */
#define EXPLAIN_MAX_IDS 40

/*
 * "    <lead>hpnode explain A B.1 …\n": the sections the report cites, in
 * report order (those of its FAIL and WARN lines, the issues' only when
 * issues_only is set); nothing when it cites none.
 */
static void put_explain_step(struct hp_buf *out, const struct hp_findings *f, const size_t *order,
			     int issues_only, const char *lead)
{
	struct hp_buf ids = HP_BUF_INIT(EXPLAIN_MAX_IDS * 20);
	size_t i, n = 0;

	hp_buf_puts(&ids, "");
	for (i = 0; i < f->n && n < EXPLAIN_MAX_IDS; i++) {
		const struct hp_finding *x = &f->v[order[i]];

		/* Only FAIL and WARN lines print a pointer. */
		if (issues_only ? !is_issue(x) : x->tag != HP_TAG_FAIL && x->tag != HP_TAG_WARN)
			continue;
		n = add_section_ids(&ids, x, n, EXPLAIN_MAX_IDS);
	}
	if (n) {
		hp_buf_puts(out, "    ");
		hp_buf_puts(out, lead);
		hp_buf_puts(out, "hpnode explain");
		hp_buf_puts(out, ids.buf);
		hp_buf_putc(out, '\n');
	}
	hp_buf_release(&ids);
}

static void put_colored(struct hp_buf *out, int color, const char *code, const char *text)
{
	if (color)
		hp_buf_puts(out, code);
	hp_buf_puts(out, text);
	if (color)
		hp_buf_puts(out, C_RESET);
}

static void put_rule(struct hp_buf *out, int color)
{
	int i;

	if (color)
		hp_buf_puts(out, C_CYAN);
	for (i = 0; i < 56; i++)
		hp_buf_puts(out, "\xe2\x95\x90"); /* U+2550 */
	if (color)
		hp_buf_puts(out, C_RESET);
	hp_buf_putc(out, '\n');
}

static void put_header(struct hp_buf *out, int color, const char *num, const char *name)
{
	hp_buf_putc(out, '\n');
	put_rule(out, color);
	if (color)
		hp_buf_puts(out, C_CYAN C_BOLD);
	hp_buf_printf(out, "  %s. %s", num, name);
	if (color)
		hp_buf_puts(out, C_RESET);
	hp_buf_putc(out, '\n');
	put_rule(out, color);
}

static void put_run(struct hp_buf *out, const struct hp_report_opts *o);

static void put_banner(struct hp_buf *out, const struct hp_report_opts *o)
{
	int color = o->color;

	hp_buf_putc(out, '\n');
	if (color)
		hp_buf_puts(out, C_CYAN C_BOLD);
	put_clean(out, o->title, MAX_NAME, DEFAULT_TITLE);
	if (color)
		hp_buf_puts(out, C_RESET);
	hp_buf_putc(out, '\n');
	put_colored(out, color, C_CYAN,
		    "Only reads: no cluster, node or workload state is modified.");
	hp_buf_putc(out, '\n');
	if (o->layout && o->layout->docs) {
		if (color)
			hp_buf_puts(out, C_CYAN);
		hp_buf_printf(out, "Each FAIL/WARN line names its section in %s.", o->layout->docs);
		if (color)
			hp_buf_puts(out, C_RESET);
	} else {
		put_colored(out, color, C_CYAN,
			    "Each FAIL/WARN line names its section in " HP_REF_DOC ".");
	}
	hp_buf_putc(out, '\n');
	if (o->suggest) {
		put_colored(out, color, C_CYAN,
			    "Suggested commands are for you to run after review; hpnode never runs "
			    "them.");
		hp_buf_putc(out, '\n');
	}
	if (o->run)
		put_run(out, o);
}

void hp_report_iso8601(int64_t ms, char *out, size_t n)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		hp_strlcpy(out, "unknown", n);
}

/* One argument, sanitised, with the password of a scheme://user:pass@host URL hidden. */
static void clean_arg(const char *a, struct hp_buf *out)
{
	const char *scheme = strstr(a, "://"), *at;

	if (scheme && (at = strchr(scheme + 3, '@')) != NULL &&
	    (size_t)(at - scheme - 3) < strcspn(scheme + 3, "/?#")) {
		char *redacted = xasprintf("%.*s***%s", (int)(scheme + 3 - a), a, at);
		hp_text_add(HP_TEXT_REPORT, redacted, out, MAX_TEXT_FIELD);
		free(redacted);
	} else {
		hp_text_add(HP_TEXT_REPORT, a, out, MAX_TEXT_FIELD);
	}
}

void hp_report_command_line(const char *const *argv, struct hp_buf *out)
{
	struct hp_buf clean = HP_BUF_INIT(MAX_TEXT_FIELD);
	size_t i;

	for (i = 0; argv && argv[i]; i++) {
		hp_buf_reset(&clean);
		/* The program is named by name, never by the path it was started from. */
		clean_arg(i == 0 ? "hpnode" : argv[i], &clean);
		if (i)
			hp_buf_putc(out, ' ');
		hp_shell_word(clean.buf, out);
	}
	hp_buf_release(&clean);
}

static const char *signal_name(int sig)
{
	return sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "a signal";
}

const char *hp_report_phase_name(const char *id)
{
	static const char *const names[][2] = {
		{ "api", "the AWS API reads" },
		{ "kube", "the Kubernetes reads (kubectl)" },
		{ "probes", "the SSM probe sweep" },
		{ "slurm", "the Slurm controller probe" },
	};
	size_t i;

	for (i = 0; id && i < HP_ARRAY_LEN(names); i++)
		if (!strcmp(id, names[i][0]))
			return names[i][1];
	return id ? id : "?";
}

/* Whether the report is partial: the run (or its sweep) was interrupted. */
static int partial(const struct hp_report_opts *o)
{
	return o->run && o->run->interrupted;
}

/* "the AWS API reads, the SSM probe sweep" (made safe: a replayed snapshot's ids are untrusted). */
static void put_unfinished(struct hp_buf *out, const struct hp_report_run *r)
{
	size_t i;

	for (i = 0; i < r->nunfinished; i++) {
		if (i)
			hp_buf_puts(out, ", ");
		put_clean(out, hp_report_phase_name(r->unfinished[i]), MAX_NAME, "?");
	}
}

/* "Label: value" pieces of one header line, joined by "  |  ". */
static void put_field(struct hp_buf *out, int *first, const char *label, const char *value)
{
	if (!*first)
		hp_buf_puts(out, "  |  ");
	*first = 0;
	hp_buf_puts(out, label);
	hp_buf_puts(out, ": ");
	put_clean(out, value, MAX_NAME, "unknown");
}

/* The run header: tool, time, command line, identity, cluster, replay, interruption. */
static void put_run(struct hp_buf *out, const struct hp_report_opts *o)
{
	const struct hp_report_run *r = o->run;
	struct hp_buf cmd = HP_BUF_INIT(HP_MAX_LINE);
	char when[32], tool[128];
	int first = 1;

	snprintf(tool, sizeof(tool), "hpnode %s%s%s%s", r->version ? r->version : HP_VERSION,
		 r->revision ? " (" : "", r->revision ? r->revision : "", r->revision ? ")" : "");
	hp_report_iso8601(r->started_ms, when, sizeof(when));
	hp_buf_putc(out, '\n');
	put_field(out, &first, "Tool", tool);
	put_field(out, &first, "Started", r->started_ms ? when : NULL);
	if (r->duration_ms >= 0)
		hp_buf_printf(out, "  |  Duration: %.1f s", (double)r->duration_ms / 1000.0);
	hp_buf_puts(out, "\nCommand: ");
	hp_report_command_line(r->argv, &cmd);
	hp_buf_puts(out, cmd.len ? cmd.buf : "unknown");
	hp_buf_putc(out, '\n');
	first = 1;
	put_field(out, &first, "Account", r->account);
	put_field(out, &first, "Caller", r->caller_arn);
	put_field(out, &first, "Credentials", r->credential_source);
	hp_buf_putc(out, '\n');
	first = 1;
	put_field(out, &first, "Cluster", o->cluster);
	put_field(out, &first, "ARN", r->cluster_arn);
	put_field(out, &first, "Region", o->region);
	put_field(out, &first, "Orchestrator", o->orchestrator);
	hp_buf_putc(out, '\n');
	if (r->node) {
		hp_buf_puts(out, "Node: ");
		put_clean(out, r->node, MAX_NAME, "");
		if (r->node_group) {
			hp_buf_puts(out, " (group ");
			put_clean(out, r->node_group, MAX_NAME, "");
			hp_buf_putc(out, ')');
		}
		hp_buf_printf(out, " \xe2\x80\x94 its findings and the cluster's that bear on it; "
			      "%zu about other nodes or groups left out\n", r->focus_left_out);
	}
	if (r->replay_file) {
		hp_report_iso8601(r->collected_ms, when, sizeof(when));
		hp_buf_puts(out, "Replayed from ");
		put_clean(out, r->replay_file, MAX_NAME, "");
		hp_buf_printf(out, ", collected at %s by ", r->collected_ms ? when : "an unknown time");
		put_clean(out, r->collected_by, MAX_NAME, "an unknown hpnode");
		hp_buf_putc(out, '\n');
	}
	if (r->concurrency_used > 0)
		hp_buf_printf(out, "SSM sessions at once: %d, lowered from %d to fit the open-file "
			      "limit (%ld; raise it with ulimit -n)\n", r->concurrency_used,
			      r->concurrency_asked, r->open_file_limit);
	if (r->interrupted) {
		put_colored(out, o->color, C_YELLOW,
			    "PARTIAL REPORT");
		if (!r->interrupted_phase || !strcmp(r->interrupted_phase, "probes")) {
			hp_buf_printf(out, " \xe2\x80\x94 interrupted: %zu of %zu nodes probed (%s); "
				      "nodes not probed are listed as skipped\n",
				      r->probed, r->to_probe, signal_name(r->interrupted));
		} else {
			hp_buf_puts(out, " \xe2\x80\x94 interrupted during ");
			put_clean(out, hp_report_phase_name(r->interrupted_phase), MAX_NAME, "?");
			hp_buf_printf(out, " (%s)\n", signal_name(r->interrupted));
		}
		if (r->nunfinished) {
			hp_buf_puts(out, "Not finished: ");
			put_unfinished(out, r);
			hp_buf_puts(out, " \xe2\x80\x94 what they did not read is not checked\n");
		}
	}
	hp_buf_release(&cmd);
}

/* One evidence element; a non-string element is shown as its JSON text. */
static void put_evidence_item(struct hp_buf *out, const cJSON *item, size_t max)
{
	if (cJSON_IsString(item)) {
		hp_text_add(HP_TEXT_REPORT, item->valuestring, out, max);
	} else {
		char *s = cJSON_PrintUnformatted(item);

		if (s)
			hp_text_add(HP_TEXT_REPORT, s, out, max);
		free(s);
	}
}

/* An evidence line that only lists ids: "nodes 1-100 of 250: i-… i-…" (src/checks/fold.c). */
static int is_id_list(const cJSON *item)
{
	unsigned a, b, n;
	char colon = 0;
	const char *s = cJSON_IsString(item) ? item->valuestring : "";

	return sscanf(s, "nodes %u-%u of %u%c", &a, &b, &n, &colon) == 4 && colon == ':';
}

/* "    250 nodes, e.g. i-… i-… (every id: --output json, --junit-file)" */
static void put_node_sample(struct hp_buf *out, const struct hp_finding *f)
{
	size_t k;

	hp_buf_printf(out, "    %zu nodes, e.g.", f->nnodes);
	for (k = 0; k < f->nnodes && k < TEXT_NODE_SAMPLE; k++) {
		hp_buf_putc(out, ' ');
		put_clean(out, f->nodes[k], MAX_NAME, "?");
	}
	hp_buf_puts(out, " " ELLIPSIS " (every id: --json-file or --junit-file)\n");
}

void hp_report_drain(const struct hp_report_opts *o, struct hp_buf *out, int all)
{
	if (!o || !o->sink || !out->len || (!all && out->len < ((size_t)64 << 10)))
		return;
	o->sink(o->sink_ud, out->buf, out->len);
	hp_buf_reset(out);
}

static void put_finding(struct hp_buf *out, int color, const struct hp_finding *f,
			const struct hp_suggest *sg, const struct hp_diff *base)
{
	static const char *const colors[] = {
		[HP_TAG_PASS] = C_GREEN,
		[HP_TAG_FAIL] = C_RED,
		[HP_TAG_WARN] = C_YELLOW,
		[HP_TAG_INFO] = C_BOLD,
		[HP_TAG_SKIP] = NULL,
	};
	const cJSON *item, *list = cJSON_IsArray(f->evidence) ? f->evidence : NULL;
	size_t k, ids = hp_finding_id_lines(f);
	int shown = 0, total = (list ? cJSON_GetArraySize(list) : 0) + (int)ids;
	int sample = (f->tag == HP_TAG_PASS || f->tag == HP_TAG_INFO) && f->nnodes > TEXT_NODES_MAX;

	hp_buf_puts(out, "  ");
	if (tag_ok(f->tag)) {
		if (color && colors[f->tag])
			hp_buf_puts(out, colors[f->tag]);
		hp_buf_printf(out, "[%s]", tag_names[f->tag]);
		if (color && colors[f->tag])
			hp_buf_puts(out, C_RESET);
	} else {
		hp_buf_puts(out, "[????]");
	}
	hp_buf_putc(out, ' ');
	if (base && hp_diff_known(base, f) >= 0)
		put_colored(out, color, C_BOLD, hp_diff_known(base, f) ? "[known] " : "[NEW] ");
	put_clean(out, f->message, MAX_TEXT_FIELD, "");
	if (f->tag == HP_TAG_FAIL || f->tag == HP_TAG_WARN)
		put_pointer(out, f);
	hp_buf_putc(out, '\n');

	if (sample)
		put_node_sample(out, f);
	cJSON_ArrayForEach(item, list) {
		if (sample && is_id_list(item)) {
			total--;
			continue;
		}
		if (shown == TEXT_EVIDENCE)
			break;
		hp_buf_puts(out, "    ");
		put_evidence_item(out, item, MAX_TEXT_FIELD);
		hp_buf_putc(out, '\n');
		shown++;
	}
	/* The id lines after them: left out with the sample, else shown as lines. */
	if (sample)
		total -= (int)ids;
	for (k = 0; !sample && k < ids && shown < TEXT_EVIDENCE; k++) {
		struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);

		hp_finding_id_line(f, k, &line);
		hp_buf_puts(out, "    ");
		hp_text_add(HP_TEXT_REPORT, line.buf, out, MAX_TEXT_FIELD);
		hp_buf_putc(out, '\n');
		hp_buf_release(&line);
		shown++;
	}
	if (total > shown)
		hp_buf_printf(out, "    " ELLIPSIS " and %d more\n", total - shown);
	if (sg)
		hp_suggest_text(sg, f, color, out);
}

/* The suggestion context when --suggest is on and the document parses; NULL otherwise. */
static struct hp_suggest *suggest_open(const struct hp_report_opts *o, struct hp_suggest *sg,
				       struct hp_error *e)
{
	if (!o->suggest)
		return NULL;
	if (hp_suggest_init(sg, o->snap, o->cluster, o->region, e))
		return NULL;
	return sg;
}

/* The issues by priority, each with its pointer ("Issues found (N):" and the groups). */
static void put_issue_list(struct hp_buf *out, const struct hp_findings *f, const size_t *order,
			   const struct tally *t, int color)
{
	static const char *const colors[] = { C_RED, C_YELLOW, C_BOLD };
	size_t i;
	int p, pass;

	hp_buf_puts(out, "  ");
	if (color)
		hp_buf_puts(out, C_RED C_BOLD);
	hp_buf_printf(out, "Issues found (%zu):", t->issues);
	if (color)
		hp_buf_puts(out, C_RESET);
	hp_buf_puts(out, "\n\n");
	for (p = HP_P0; p < HP_PNONE; p++) {
		if (!t->prio[p])
			continue;
		hp_buf_puts(out, "  ");
		put_colored(out, color, colors[p], prio_headers[p]);
		hp_buf_putc(out, '\n');
		/* Causes that explain other findings first, then the rest, each in report order. */
		for (pass = 0; pass < 2; pass++)
			for (i = 0; i < f->n; i++) {
				const struct hp_finding *x = &f->v[order[i]];

				if (!is_issue(x) || (int)x->prio != p || (x->cause ? 0 : 1) != pass)
					continue;
				hp_buf_puts(out, "    " ARROW " ");
				put_clean(out, x->message, MAX_TEXT_FIELD, "");
				put_pointer(out, x);
				hp_buf_putc(out, '\n');
			}
	}
}

/* Lines of the "Not checked" block before "… and N more". */
#define NOT_CHECKED_SHOWN 20

/* "Not checked (N):" and what went unchecked, in report order; nothing when all was checked. */
static void put_not_checked(struct hp_buf *out, const struct hp_findings *f, const size_t *order,
			    const struct tally *t, const struct hp_report_opts *o)
{
	const struct hp_report_run *r = partial(o) ? o->run : NULL;
	size_t i, shown = 0, phases = r ? r->nunfinished : 0;
	int color = o->color;

	if (!t->unchecked && !phases)
		return;
	hp_buf_puts(out, "\n  ");
	if (color)
		hp_buf_puts(out, C_YELLOW);
	hp_buf_printf(out, "Not checked (%zu):", t->unchecked + phases);
	if (color)
		hp_buf_puts(out, C_RESET);
	hp_buf_putc(out, '\n');
	/* The phases the interrupt cut short come first: they cover the most. */
	for (i = 0; i < phases; i++) {
		hp_buf_puts(out, "    - ");
		put_clean(out, hp_report_phase_name(r->unfinished[i]), MAX_NAME, "?");
		hp_buf_printf(out, ": not finished (interrupted by %s)\n", signal_name(r->interrupted));
	}
	for (i = 0; i < f->n && shown < NOT_CHECKED_SHOWN; i++) {
		const struct hp_finding *x = &f->v[order[i]];

		if (!is_unchecked(x))
			continue;
		hp_buf_puts(out, "    - ");
		put_clean(out, x->message, MAX_TEXT_FIELD, "");
		if (x->tag != HP_TAG_SKIP)
			put_pointer(out, x);
		hp_buf_putc(out, '\n');
		shown++;
	}
	if (t->unchecked > shown)
		hp_buf_printf(out, "    " ELLIPSIS " and %zu more (the [SKIP] lines above)\n",
			      t->unchecked - shown);
}

/* A partial report's summary begins by saying so, and what did not finish. */
static void put_partial(struct hp_buf *out, const struct hp_report_opts *o)
{
	const struct hp_report_run *r = o->run;

	if (!partial(o))
		return;
	hp_buf_puts(out, "  ");
	put_colored(out, o->color, C_YELLOW, "PARTIAL REPORT");
	hp_buf_printf(out, ": the run was interrupted (%s)", signal_name(r->interrupted));
	if (r->nunfinished) {
		hp_buf_puts(out, "; not finished: ");
		put_unfinished(out, r);
	} else if (r->to_probe) {
		hp_buf_printf(out, "; %zu of %zu nodes probed", r->probed, r->to_probe);
	}
	hp_buf_puts(out, ". What was not read is not checked.\n\n");
}

/* A command's own summary block: its title, its fields, the mode, the issues, next steps. */
static void put_layout_summary(struct hp_buf *out, const struct hp_findings *f,
			       const size_t *order, const struct hp_report_opts *o)
{
	const struct hp_report_layout *l = o->layout;
	struct tally t;
	size_t i;
	int color = o->color;

	tally_count(f, &t);
	put_header(out, color, l->summary_num ? l->summary_num : "9",
		   l->summary_title ? l->summary_title : "Summary");
	put_partial(out, o);
	for (i = 0; i < l->nfields && i < HP_REPORT_MAX_FIELDS; i++) {
		hp_buf_printf(out, "  %s: ", l->fields[i].label ? l->fields[i].label : "?");
		put_clean(out, l->fields[i].value, MAX_TEXT_FIELD, "all");
		hp_buf_putc(out, '\n');
	}
	if (l->mode) {
		hp_buf_puts(out, "  Mode: ");
		hp_buf_puts(out, l->mode);
		hp_buf_putc(out, '\n');
	}
	hp_buf_putc(out, '\n');
	if (!t.issues) {
		hp_buf_puts(out, "  ");
		put_colored(out, color, partial(o) ? C_YELLOW : C_GREEN C_BOLD,
			    partial(o) ? "No critical issues in what was read before the interruption." :
			    l->no_issue ? l->no_issue : "No critical issues detected from available signals.");
		hp_buf_putc(out, '\n');
		put_not_checked(out, f, order, &t, o);
		hp_buf_puts(out, "\n  Next steps:\n");
		hp_buf_puts(out, "    \xe2\x80\xa2 [INFO] and [SKIP] lines above show what this run "
			     "could not judge.\n");
		if (l->confirm) {
			hp_buf_puts(out, "    \xe2\x80\xa2 If the job still fails, run this again while it fails: ");
			put_clean(out, l->confirm, MAX_TEXT_FIELD, "");
			hp_buf_putc(out, '\n');
		}
		put_explain_step(out, f, order, 0, "\xe2\x80\xa2 The sections cited above, offline: ");
		return;
	}
	put_issue_list(out, f, order, &t, color);
	put_not_checked(out, f, order, &t, o);
	hp_buf_puts(out, "\n  Recommended next steps:\n");
	hp_buf_puts(out, "    1. Fix the P0 issues first, then P1; P2 lines are for information.\n");
	hp_buf_puts(out, "    2. Read the section each issue points to (hpnode explain <ID> prints "
		     "it) for the cause and the fix.\n");
	if (l->confirm) {
		hp_buf_puts(out, "    3. After a fix, confirm: ");
		put_clean(out, l->confirm, MAX_TEXT_FIELD, "");
		hp_buf_putc(out, '\n');
	}
	put_explain_step(out, f, order, 1, l->confirm ? "4. The cited sections, offline: "
						      : "3. The cited sections, offline: ");
}

/* A value read from the cluster as one shell word of a printed command (none: the placeholder). */
static void put_word(struct hp_buf *out, const char *v, const char *none)
{
	struct hp_buf clean = HP_BUF_INIT(MAX_NAME);

	if (!v || !*v) {
		hp_buf_puts(out, none);
		return;
	}
	put_clean(&clean, v, MAX_NAME, "");
	hp_shell_word(clean.buf, out);
	hp_buf_release(&clean);
}

static void put_summary(struct hp_buf *out, const struct hp_findings *f, const size_t *order,
			const struct hp_report_opts *o)
{
	struct hp_buf cluster = HP_BUF_INIT(MAX_NAME), region = HP_BUF_INIT(MAX_NAME);
	struct tally t;
	int color = o->color;

	tally_count(f, &t);
	put_word(&cluster, o->cluster, "<cluster>");
	put_word(&region, o->region, "<region>");
	put_header(out, color, "9", "Triage Summary");
	put_partial(out, o);
	if (!t.issues) {
		hp_buf_puts(out, "  ");
		put_colored(out, color, partial(o) ? C_YELLOW : C_GREEN C_BOLD,
			    partial(o) ? "No critical issues in what was read before the interruption."
				       : "No critical issues detected from available signals.");
		hp_buf_putc(out, '\n');
		put_not_checked(out, f, order, &t, o);
		hp_buf_puts(out, "\n  Next steps:\n");
		hp_buf_printf(out, "    \xe2\x80\xa2 If a workload still fails on one node, focus on it: "
			      "hpnode triage --cluster %s --region %s --node <instance-id>\n",
			      cluster.buf, region.buf);
		hp_buf_puts(out, "    \xe2\x80\xa2 [INFO] and [SKIP] lines above show what this run "
			     "could not judge.\n");
		hp_buf_puts(out, "    \xe2\x80\xa2 " HP_REF_DOC " lists further checks by "
			     "symptom.\n");
		put_explain_step(out, f, order, 0, "\xe2\x80\xa2 The sections cited above, offline: ");
		goto out;
	}
	put_issue_list(out, f, order, &t, color);
	put_not_checked(out, f, order, &t, o);
	hp_buf_puts(out, "\n  Recommended next steps:\n");
	hp_buf_puts(out, "    1. Fix the P0 issues first, then P1; P2 lines are for information.\n");
	hp_buf_puts(out, "    2. Read the section each issue points to in " HP_REF_DOC
		     " for the cause and the fix.\n");
	hp_buf_printf(out, "    3. After a fix, confirm on the affected node: "
		      "hpnode triage --cluster %s --region %s --node <instance-id>\n",
		      cluster.buf, region.buf);
	hp_buf_puts(out, "    4. To look inside a node, open an SSM session to it; see " SECT
		     " K (Node Access via SSM).\n");
	put_explain_step(out, f, order, 1, "5. The cited sections, offline: ");
out:
	hp_buf_release(&cluster);
	hp_buf_release(&region);
}

static void put_footer(struct hp_buf *out, const struct hp_report_opts *o)
{
	hp_buf_putc(out, '\n');
	if (o->color)
		hp_buf_puts(out, C_BOLD);
	hp_buf_puts(out, "Cluster: ");
	put_clean(out, o->cluster, MAX_NAME, "unknown");
	hp_buf_puts(out, "  |  Region: ");
	put_clean(out, o->region, MAX_NAME, "unknown");
	hp_buf_puts(out, "  |  Orchestrator: ");
	put_clean(out, o->orchestrator, MAX_NAME, "unknown");
	if (o->color)
		hp_buf_puts(out, C_RESET);
	hp_buf_puts(out, "\n\n");
}

/* Writes the text report: banner, one block per group with findings, summary, footer. */
void hp_report_text(const struct hp_findings *f, const struct hp_report_opts *o, struct hp_buf *out)
{
	static const struct hp_report_opts none;
	struct hp_suggest store, *sg;
	struct hp_error e = HP_ERROR_INIT;
	size_t *order;
	size_t i;
	int g;

	if (!o)
		o = &none;
	order = report_order(f);
	sg = suggest_open(o, &store, &e);
	put_banner(out, o);
	if (o->suggest && !sg)
		hp_buf_printf(out, "No suggested commands: %s\n", e.msg);
	for (g = 0; g < HP_GROUP__COUNT && !o->summary_only; g++) {
		int header = 0;

		for (i = 0; i < f->n; i++) {
			const struct hp_finding *x = &f->v[order[i]];

			if (finding_group(x) != (enum hp_group)g)
				continue;
			if (!header) {
				const char *num, *name = hp_report_group_title(o, (enum hp_group)g, &num);

				put_header(out, o->color, num, name);
			}
			header = 1;
			put_finding(out, o->color, x, sg, o->baseline);
			hp_report_drain(o, out, 0);
		}
	}
	if (o->baseline)
		hp_diff_text_resolved(o->baseline, o->color, out);
	if (o->layout)
		put_layout_summary(out, f, order, o);
	else
		put_summary(out, f, order, o);
	if (o->gate && o->gate->given) {
		struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);

		hp_report_gate_line(o->gate, &line);
		hp_buf_printf(out, "\n  Exit gate: %s%s\n", line.buf,
			      o->gate->findings ? ": exit status 3" : "");
		hp_buf_release(&line);
	}
	put_footer(out, o);
	hp_report_drain(o, out, 1);
	if (sg)
		hp_suggest_release(sg);
	free(order);
}

/* cJSON returns NULL when malloc fails; hpnode dies on that like x*alloc. */
static void json_add_str(cJSON *obj, const char *key, const char *s)
{
	struct hp_buf b = HP_BUF_INIT(MAX_JSON_FIELD + 8);

	if (!s) {
		cJSON_AddNullToObject(obj, key);
		return;
	}
	hp_text_add(HP_TEXT_REPORT, s, &b, MAX_JSON_FIELD);
	cJSON_AddStringToObject(obj, key, b.buf);
	hp_buf_release(&b);
}

static void json_add_const(cJSON *obj, const char *key, const char *s)
{
	if (s)
		cJSON_AddStringToObject(obj, key, s);
	else
		cJSON_AddNullToObject(obj, key);
}

static void json_add_item_str(cJSON *arr, const char *s)
{
	struct hp_buf b = HP_BUF_INIT(MAX_JSON_FIELD + 8);

	hp_text_add(HP_TEXT_REPORT, s, &b, MAX_JSON_FIELD);
	cJSON_AddItemToArray(arr, cJSON_CreateString(b.buf));
	hp_buf_release(&b);
}

/* The "run" object: the header of the text report. */
static cJSON *json_run(const struct hp_report_opts *o)
{
	const struct hp_report_run *r = o->run;
	cJSON *run = cJSON_CreateObject(), *argv = cJSON_CreateArray();
	struct hp_buf cmd = HP_BUF_INIT(HP_MAX_LINE);
	char when[32];
	size_t i;

	json_add_const(run, "version", r->version ? r->version : HP_VERSION);
	json_add_str(run, "revision", r->revision);
	hp_report_iso8601(r->started_ms, when, sizeof(when));
	json_add_const(run, "started_at", r->started_ms ? when : NULL);
	if (r->duration_ms >= 0)
		cJSON_AddNumberToObject(run, "duration_s", (double)r->duration_ms / 1000.0);
	else
		cJSON_AddNullToObject(run, "duration_s");
	hp_report_command_line(r->argv, &cmd);
	json_add_str(run, "command_line", cmd.len ? cmd.buf : NULL);
	hp_buf_release(&cmd);
	for (i = 1; r->argv && r->argv[i]; i++) {
		clean_arg(r->argv[i], &cmd);
		cJSON_AddItemToArray(argv, cJSON_CreateString(cmd.buf));
		hp_buf_reset(&cmd);
	}
	hp_buf_release(&cmd);
	cJSON_AddItemToObject(run, "arguments", argv);
	json_add_str(run, "account", r->account);
	json_add_str(run, "caller_arn", r->caller_arn);
	json_add_str(run, "credential_source", r->credential_source);
	json_add_str(run, "cluster_arn", r->cluster_arn);
	if (r->replay_file) {
		cJSON *rp = cJSON_CreateObject();
		json_add_str(rp, "file", r->replay_file);
		hp_report_iso8601(r->collected_ms, when, sizeof(when));
		json_add_const(rp, "collected_at", r->collected_ms ? when : NULL);
		json_add_str(rp, "collected_by", r->collected_by);
		cJSON_AddItemToObject(run, "replay", rp);
	} else {
		cJSON_AddNullToObject(run, "replay");
	}
	if (r->node) {
		cJSON *nd = cJSON_CreateObject();
		json_add_str(nd, "id", r->node);
		json_add_str(nd, "group", r->node_group);
		cJSON_AddNumberToObject(nd, "left_out", (double)r->focus_left_out);
		cJSON_AddItemToObject(run, "node", nd);
	} else {
		cJSON_AddNullToObject(run, "node");
	}
	if (r->interrupted) {
		cJSON *it = cJSON_CreateObject();
		json_add_const(it, "signal", signal_name(r->interrupted));
		cJSON_AddNumberToObject(it, "probed", (double)r->probed);
		cJSON_AddNumberToObject(it, "to_probe", (double)r->to_probe);
		if (r->interrupted_phase) {
			cJSON *un = cJSON_CreateArray();

			json_add_str(it, "phase", r->interrupted_phase);
			for (i = 0; i < r->nunfinished; i++)
				json_add_item_str(un, r->unfinished[i]);
			cJSON_AddItemToObject(it, "unfinished", un);
		}
		cJSON_AddItemToObject(run, "interrupted", it);
	} else {
		cJSON_AddNullToObject(run, "interrupted");
	}
	return run;
}

/* "EFA / Security Group + VPC / Routing"; NULL when no part has a title. */
static char *section_titles(const struct hp_finding *f)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
	struct hp_str part;
	const char *s = f->section;

	while (section_next(&s, &part)) {
		const char *title = section_title(f, part);

		if (!title)
			continue;
		if (b.len)
			hp_buf_puts(&b, " + ");
		hp_buf_puts(&b, title);
	}
	if (!b.len)
		return NULL;
	return hp_buf_detach(&b, NULL);
}

/* "key" (hp_finding_key) and "keys": one per node of a finding about many, else [key]. */
static void json_keys(cJSON *o, const struct hp_finding *f)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
	cJSON *keys = cJSON_CreateArray();
	size_t k;

	hp_finding_key(f, &b);
	json_add_str(o, "key", b.buf);
	if (hp_finding_per_node(f)) {
		for (k = 0; k < f->nnodes; k++) {
			hp_finding_node_key(f, k, &b);
			json_add_item_str(keys, b.buf);
		}
	} else {
		json_add_item_str(keys, b.buf);
	}
	cJSON_AddItemToObject(o, "keys", keys);
	hp_buf_release(&b);
}

static cJSON *json_finding(const struct hp_finding *f, const struct hp_suggest *sg,
			   const struct hp_report_opts *ro)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *ev = cJSON_CreateArray();
	const cJSON *item, *list = cJSON_IsArray(f->evidence) ? f->evidence : NULL;
	int has_section = f->section && *f->section;
	char *titles = has_section ? section_titles(f) : NULL;

	json_add_str(o, "check", f->check ? f->check->id : NULL);
	json_keys(o, f);
	json_add_const(o, "tag", tag_ok(f->tag) ? tag_names[f->tag] : NULL);
	json_add_const(o, "priority", is_issue(f) ? prio_names[f->prio] : NULL);
	json_add_str(o, "section", has_section ? f->section : NULL);
	json_add_str(o, "title", titles);
	{
		struct hp_buf ex = HP_BUF_INIT(MAX_NAME);

		hp_report_explain(&ex, f);
		json_add_const(o, "explain", ex.len ? ex.buf : NULL);
		hp_buf_release(&ex);
	}
	json_add_const(o, "group", hp_report_group_title(ro, finding_group(f), NULL));
	json_add_str(o, "message", f->message ? f->message : "");
	json_add_str(o, "node", f->node);
	{
		cJSON *nodes = cJSON_CreateArray();
		size_t k;

		if (f->nodes) {
			for (k = 0; k < f->nnodes; k++)
				json_add_item_str(nodes, f->nodes[k]);
		} else if (f->node) {
			json_add_item_str(nodes, f->node);
		}
		cJSON_AddItemToObject(o, "nodes", nodes);
	}
	cJSON_ArrayForEach(item, list) {
		struct hp_buf b = HP_BUF_INIT(MAX_JSON_FIELD + 8);

		put_evidence_item(&b, item, MAX_JSON_FIELD);
		cJSON_AddItemToArray(ev, cJSON_CreateString(b.buf));
		hp_buf_release(&b);
	}
	{
		struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);
		size_t k, ids = hp_finding_id_lines(f);

		for (k = 0; k < ids; k++) {
			hp_finding_id_line(f, k, &line);
			json_add_item_str(ev, line.buf);
		}
		hp_buf_release(&line);
	}
	cJSON_AddItemToObject(o, "evidence", ev);
	if (ro->baseline) {
		int known = hp_diff_known(ro->baseline, f);

		json_add_const(o, "baseline", known < 0 ? NULL : known ? "known" : "new");
	}
	if (sg)
		hp_suggest_json(sg, f, o);
	free(titles);
	return o;
}

/* ,"key":<item> as cJSON prints a member (item is freed). */
static void put_member(struct hp_buf *out, const char *key, cJSON *item)
{
	cJSON *wrap = cJSON_CreateObject();
	char *text;
	size_t n;

	cJSON_AddItemToObject(wrap, key, item);
	text = cJSON_PrintUnformatted(wrap);
	if (!text)
		hp_die("out of memory");
	n = strlen(text);
	/* "{"key":...}" without its braces. */
	hp_buf_putc(out, ',');
	hp_buf_putn(out, text + 1, n - 2);
	free(text);
	cJSON_Delete(wrap);
}

/*
 * Writes the JSON document described at the top of this file, on one
 * line, a finding at a time: the same bytes cJSON would print for the
 * whole document, without the whole document in memory.
 */
void hp_report_json(const struct hp_findings *f, const struct hp_report_opts *o, struct hp_buf *out)
{
	static const struct hp_report_opts none;
	cJSON *doc = cJSON_CreateObject();
	cJSON *sum = cJSON_CreateObject();
	struct hp_suggest store, *sg;
	struct hp_error e = HP_ERROR_INIT;
	size_t *order;
	struct tally t;
	char *text;
	size_t i;

	if (!o)
		o = &none;
	order = report_order(f);
	sg = suggest_open(o, &store, &e);
	tally_count(f, &t);
	json_add_const(doc, "schema", o->layout && o->layout->json_schema ? o->layout->json_schema
									  : "hpnode.triage/2");
	json_add_const(doc, "tool", "hpnode");
	json_add_str(doc, "cluster", o->cluster);
	json_add_str(doc, "region", o->region);
	json_add_str(doc, "orchestrator", o->orchestrator);
	if (o->run)
		cJSON_AddItemToObject(doc, "run", json_run(o));
	else
		cJSON_AddNullToObject(doc, "run");
	if (o->layout && o->layout->nfields) {
		cJSON *scope = cJSON_CreateObject();

		for (i = 0; i < o->layout->nfields && i < HP_REPORT_MAX_FIELDS; i++)
			json_add_str(scope, o->layout->fields[i].key, o->layout->fields[i].value);
		if (o->layout->mode)
			json_add_str(scope, "mode", o->layout->mode);
		cJSON_AddItemToObject(doc, "scope", scope);
	}
	text = cJSON_PrintUnformatted(doc);
	if (!text)
		hp_die("out of memory");
	/* The members before "findings", without the closing brace. */
	hp_buf_putn(out, text, strlen(text) - 1);
	free(text);
	cJSON_Delete(doc);
	hp_buf_puts(out, ",\"findings\":[");
	for (i = 0; i < f->n; i++) {
		cJSON *x = json_finding(&f->v[order[i]], sg, o);

		text = cJSON_PrintUnformatted(x);
		if (!text)
			hp_die("out of memory");
		if (i)
			hp_buf_putc(out, ',');
		hp_buf_puts(out, text);
		free(text);
		cJSON_Delete(x);
		hp_report_drain(o, out, 0);
	}
	hp_buf_putc(out, ']');
	if (o->baseline)
		put_member(out, "baseline", hp_diff_baseline_json(o->baseline));
	if (o->snap) {
		cJSON *inv = hp_diff_inventory(o->snap);

		if (inv)
			put_member(out, "inventory", inv);
	}
	cJSON_AddNumberToObject(sum, "P0", (double)t.prio[HP_P0]);
	cJSON_AddNumberToObject(sum, "P1", (double)t.prio[HP_P1]);
	cJSON_AddNumberToObject(sum, "P2", (double)t.prio[HP_P2]);
	cJSON_AddNumberToObject(sum, "pass", (double)t.tag[HP_TAG_PASS]);
	cJSON_AddNumberToObject(sum, "fail", (double)t.tag[HP_TAG_FAIL]);
	cJSON_AddNumberToObject(sum, "warn", (double)t.tag[HP_TAG_WARN]);
	cJSON_AddNumberToObject(sum, "info", (double)t.tag[HP_TAG_INFO]);
	cJSON_AddNumberToObject(sum, "skip", (double)t.tag[HP_TAG_SKIP]);
	cJSON_AddNumberToObject(sum, "not_checked",
				(double)(t.unchecked + (partial(o) ? o->run->nunfinished : 0)));
	put_member(out, "summary", sum);
	if (o->suggest && !sg) {
		cJSON *tmp = cJSON_CreateObject();

		json_add_str(tmp, "x", e.msg);
		put_member(out, "suggestions_error", cJSON_DetachItemFromObject(tmp, "x"));
		cJSON_Delete(tmp);
	}
	hp_buf_puts(out, "}\n");
	hp_report_drain(o, out, 1);
	if (sg)
		hp_suggest_release(sg);
	free(order);
}

const char *hp_report_group_title(const struct hp_report_opts *o, enum hp_group g,
				  const char **num)
{
	size_t i;

	if ((unsigned)g >= HP_GROUP__COUNT)
		g = HP_GROUP_IDENTITY;
	for (i = 0; o && o->layout && i < o->layout->ngroups; i++) {
		const struct hp_report_group_title *t = &o->layout->groups[i];

		if (t->group != g)
			continue;
		if (num)
			*num = t->num ? t->num : groups[g].num;
		return t->name ? t->name : groups[g].name;
	}
	return hp_report_group_name(g, num);
}

const char *hp_report_group_name(enum hp_group g, const char **num)
{
	if ((unsigned)g >= HP_GROUP__COUNT)
		g = HP_GROUP_IDENTITY;
	if (num)
		*num = groups[g].num;
	return groups[g].name;
}

const char *hp_report_tag_name(enum hp_tag t)
{
	return tag_ok(t) ? tag_names[t] : "????";
}

const char *hp_report_issue_prio(const struct hp_finding *f)
{
	return is_issue(f) ? prio_names[f->prio] : NULL;
}

void hp_report_pointer(struct hp_buf *out, const struct hp_finding *f)
{
	put_pointer(out, f);
}

/* Lowest P number among the issues (FAIL/WARN with a priority), HP_PNONE when none. */
enum hp_prio hp_report_worst(const struct hp_findings *f)
{
	enum hp_prio worst = HP_PNONE;
	size_t i;

	for (i = 0; i < f->n; i++)
		if (is_issue(&f->v[i]) && f->v[i].prio < worst)
			worst = f->v[i].prio;
	return worst;
}

void hp_report_gate(const struct hp_findings *f, enum hp_prio prio, int given, struct hp_gate *g)
{
	size_t i;

	memset(g, 0, sizeof(*g));
	g->prio = prio;
	g->given = given;
	for (i = 0; i < f->n; i++) {
		const struct hp_finding *x = &f->v[i];

		if (!hp_report_gate_counts(g, x))
			continue;
		g->findings++;
		g->keys += hp_finding_per_node(x) ? x->nnodes : 1;
		g->by_prio[x->prio]++;
	}
}

int hp_report_gate_counts(const struct hp_gate *g, const struct hp_finding *x)
{
	return is_issue(x) && x->prio <= (g ? g->prio : HP_P1);
}

void hp_report_gate_line(const struct hp_gate *g, struct hp_buf *out)
{
	const char *p = prio_names[(unsigned)g->prio < HP_PNONE ? g->prio : HP_P2];
	int k, first = 1;

	hp_buf_reset(out);
	if (!g->findings) {
		hp_buf_printf(out, "--fail-on %s counts no finding at %s or worse", p, p);
		return;
	}
	hp_buf_printf(out, "--fail-on %s counts %zu finding%s at %s or worse (", p, g->findings,
		      g->findings == 1 ? "" : "s", p);
	for (k = HP_P0; k <= (int)g->prio && k < HP_PNONE; k++) {
		if (!g->by_prio[k])
			continue;
		hp_buf_printf(out, "%s%zu %s", first ? "" : ", ", g->by_prio[k], prio_names[k]);
		first = 0;
	}
	if (g->keys != g->findings)
		hp_buf_printf(out, "; %zu keys, one per node of a finding about many nodes", g->keys);
	hp_buf_putc(out, ')');
}

/* Colour only on a terminal, without --no-color, a non-empty NO_COLOR or TERM=dumb. */
int hp_report_want_color(int flag_no_color, const char *no_color_env, const char *term, int is_tty)
{
	if (flag_no_color || !is_tty)
		return 0;
	if (no_color_env && *no_color_env)
		return 0;
	if (term && !strcmp(term, "dumb"))
		return 0;
	return 1;
}
