/*
 * The command frame (include/hp/cmd.h), second half: the run of a report
 * command. Output paths are checked before anything is collected; then a
 * saved snapshot is replayed, or AWS is set up (HP_CMD_NEED_AWS), the
 * command collects and --save-snapshot saves; then the checks run and the
 * report goes to its files and stdout. The fatal-error messages and the
 * exit status are decided here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-int.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/profile.h"
#include "hp/report.h"
#include "hp/text.h"

#define K_POINTER "→ " HP_REF_DOC " § K.2 (AWS Credentials)"

/* Whether a file can be created at path (sys->can_write); -1 with e set. */
static int check_writable(struct hp_sys *sys, const char *path, struct hp_error *e)
{
	if (!*path)
		return hp_error_set(e, HP_ERR_FILE, "an empty output path");
	if (sys->can_write(sys, path)) {
		if (errno == EISDIR)
			return hp_error_set(e, HP_ERR_FILE, "cannot write '%s': it is a directory", path);
		return hp_error_set(e, HP_ERR_FILE, "cannot write '%s': %s", path, strerror(errno));
	}
	return 0;
}

static void print_clusters(const struct hp_snapshot *s, const char *region)
{
	const cJSON *list = hp_snapshot_get(s, "clusters"), *c;

	fprintf(stderr, "Available clusters in %s:\n", region);
	if (!cJSON_IsArray(list)) {
		fputs("  (unable to list)\n", stderr);
		return;
	}
	if (!cJSON_GetArraySize(list))
		fputs("  (none)\n", stderr);
	cJSON_ArrayForEach(c, list) {
		struct hp_buf n = HP_BUF_INIT(512), st = HP_BUF_INIT(128), arn = HP_BUF_INIT(512);
		const char *v;
		v = hp_json_str(c, "ClusterName");
		hp_text_add(HP_TEXT_REPORT, v ? v : "?", &n, 256);
		v = hp_json_str(c, "ClusterStatus");
		hp_text_add(HP_TEXT_REPORT, v ? v : "?", &st, 64);
		v = hp_json_str(c, "ClusterArn");
		hp_text_add(HP_TEXT_REPORT, v ? v : "?", &arn, 256);
		fprintf(stderr, "  %-40s %-14s %s\n", n.buf, st.buf, arn.buf);
		hp_buf_release(&n);
		hp_buf_release(&st);
		hp_buf_release(&arn);
	}
}

/* Messages for the conditions that stop a run. */
static int fatal(const struct hp_error *e, const struct hp_snapshot *s, const char *region)
{
	struct hp_buf msg = HP_BUF_INIT(4096);

	hp_text_add(HP_TEXT_REPORT, e->msg, &msg, 2048);
	switch (e->code) {
	case HP_ERR_CREDS:
	case HP_ERR_NO_CREDS:
		fprintf(stderr, "ERROR: AWS credentials not configured or expired.\n  %s\n\n"
			"Fix AWS credentials and rerun. " K_POINTER "\n", msg.buf);
		break;
	case HP_ERR_NOT_FOUND:
		fprintf(stderr, "ERROR: %s\n", msg.buf);
		print_clusters(s, region);
		fputs("Confirm the cluster name and region.\n", stderr);
		break;
	default:
		fprintf(stderr, "ERROR: %s\n", msg.buf);
		break;
	}
	hp_buf_release(&msg);
	return hp_err_exit_status(e->code);
}

/* When and how the run started, for the report header. */
struct run_clock {
	int64_t wall_ms, mono_ms;
};

/* The header facts: tool, time, command line, identity, cluster, replay, interruption. */
static void run_info(const struct hp_snapshot *s, const struct hp_cmd_ctx *c,
		     const struct run_clock *clock, const char **argv, struct hp_report_run *r)
{
	const cJSON *meta = hp_snapshot_get(s, "meta"), *pm = hp_snapshot_get(s, "probes_meta");
	const cJSON *id = hp_snapshot_get(s, "identity"), *it;
	const struct hp_cmd_opts *o = &c->o;
	int i;

	memset(r, 0, sizeof(*r));
	r->version = HP_VERSION;
	r->revision = hp_revision();
	r->started_ms = clock->wall_ms;
	r->duration_ms = c->sys->monotonic_ms(c->sys) - clock->mono_ms;
	argv[0] = "hpnode";
	argv[1] = c->cmd->name;
	for (i = 1; i < c->full_argc; i++)
		argv[i + 1] = c->full_argv[i];
	argv[c->full_argc > 0 ? c->full_argc + 1 : 2] = NULL;
	r->argv = argv;
	r->account = hp_json_str(id, "Account");
	r->caller_arn = hp_json_str(id, "Arn");
	r->cluster_arn = hp_snap_cluster_arn(s);
	r->credential_source = hp_json_str(meta, "credential_source");
	if (o->replay) {
		r->replay_file = strcmp(o->replay, "-") ? o->replay : "<stdin>";
		r->collected_ms = (int64_t)hp_json_num(meta, "collected_at_ms", 0);
		r->collected_by = hp_json_str(meta, "tool");
	}
	if (hp_json_num(pm, "interrupted", 0) > 0) {
		r->interrupted = (int)hp_json_num(pm, "interrupted", 0);
		r->probed = (size_t)hp_json_num(pm, "probed", 0);
		r->to_probe = (size_t)hp_json_num(pm, "to_probe", 0);
	}
	/* A triage interrupted in any phase: which one, and what did not finish. */
	it = hp_json_get(meta, "interrupted");
	if (cJSON_IsObject(it) && hp_json_num(it, "signal", 0) > 0) {
		const cJSON *ph;

		r->interrupted = (int)hp_json_num(it, "signal", 0);
		r->interrupted_phase = hp_json_str(it, "phase");
		cJSON_ArrayForEach(ph, hp_json_arr(it, "unfinished"))
			if (cJSON_IsString(ph) && r->nunfinished < HP_REPORT_MAX_PHASES)
				r->unfinished[r->nunfinished++] = ph->valuestring;
	}
	if (hp_json_num(pm, "concurrency_used", 0) > 0) {
		r->concurrency_asked = (int)hp_json_num(pm, "concurrency", 0);
		r->concurrency_used = (int)hp_json_num(pm, "concurrency_used", 0);
		r->open_file_limit = (long)hp_json_num(pm, "open_file_limit", 0);
	}
}

enum fmt { FMT_TEXT, FMT_JSON, FMT_JUNIT };

/*
 * The checks of ids (NULL: every check) over s, timed: group_s gets the
 * seconds the checks of each report group took (the JUnit testsuites' time).
 */
static void judge(const struct hp_snapshot *s, const char *const *ids, struct hp_findings *f,
		  double group_s[HP_GROUP__COUNT])
{
	double *secs = xcalloc(hp_checks_count ? hp_checks_count : 1, sizeof(*secs));
	size_t i;

	hp_checks_run_timed(s, ids, f, secs);
	for (i = 0; i < HP_GROUP__COUNT; i++)
		group_s[i] = 0;
	for (i = 0; i < hp_checks_count; i++)
		if ((unsigned)hp_checks[i]->group < HP_GROUP__COUNT)
			group_s[hp_checks[i]->group] += secs[i];
	free(secs);
}

static const char *prio_name(enum hp_prio p)
{
	static const char *const names[] = { "P0", "P1", "P2" };

	return (unsigned)p < HP_ARRAY_LEN(names) ? names[p] : "P?";
}

/* "hpnode triage: exit status 3: --fail-on P1 counts 9 findings at P1 or worse (…)" */
static void gate_reason(const char *name, const struct hp_gate *g)
{
	struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);

	hp_report_gate_line(g, &line);
	fprintf(stderr, "hpnode %s: exit status 3: %s\n", name, line.buf);
	hp_buf_release(&line);
}

static void render(enum fmt fmt, const struct hp_findings *f, const struct hp_report_opts *ro,
		   struct hp_buf *out)
{
	if (fmt == FMT_JSON)
		hp_report_json(f, ro, out);
	else if (fmt == FMT_JUNIT)
		hp_report_junit(f, ro, out);
	else
		hp_report_text(f, ro, out);
}

/* A report file as it is rendered: its pieces go to sys->open_write's file; the first error is kept. */
struct file_sink {
	struct hp_file_out *out;
	int err;
};

static void to_file(void *ud, const char *p, size_t n)
{
	struct file_sink *fs = ud;

	if (!fs->err && fs->out->write(fs->out, p, n))
		fs->err = errno ? errno : EIO;
}

static void to_stdout(void *ud, const char *p, size_t n)
{
	(void)ud;
	fwrite(p, 1, n, stdout);
}

/*
 * One output file, rendered without colour and written atomically, piece
 * by piece as it is rendered (a report of 20,000 nodes is never whole in
 * memory).
 */
static int write_output(struct hp_sys *sys, const char *path, enum fmt fmt,
			const struct hp_findings *f, const struct hp_report_opts *ro, const char *name)
{
	struct hp_report_opts plain = *ro;
	struct hp_buf out = HP_BUF_INIT((size_t)1 << 30);
	struct file_sink fs;
	int err = 0;

	if (!path)
		return 0;
	fs.err = 0;
	fs.out = sys->open_write(sys, path, HP_SYS_MODE_DEFAULT);
	if (!fs.out) {
		err = errno ? errno : EIO;
	} else {
		plain.color = 0;
		plain.sink = to_file;
		plain.sink_ud = &fs;
		render(fmt, f, &plain, &out);
		hp_report_drain(&plain, &out, 1);
		if (fs.err) {
			err = fs.err;
			fs.out->abort(fs.out);
		} else if (fs.out->commit(fs.out)) {
			err = errno ? errno : EIO;
		}
	}
	hp_buf_release(&out);
	if (err) {
		fprintf(stderr, "hpnode %s: cannot write '%s': %s\n", name, path, strerror(err));
		return -1;
	}
	return 0;
}

/*
 * The orchestrator the report names: the cluster's; a local command's
 * snapshot without a cluster names what it recorded in meta (or nothing).
 */
static const char *report_orchestrator(const struct hp_snapshot *s, const struct hp_cmd *cmd)
{
	if ((cmd->flags & HP_CMD_LOCAL_ONLY) && !cJSON_IsObject(hp_snapshot_get(s, "cluster")))
		return hp_json_str(hp_snapshot_get(s, "meta"), "orchestrator");
	return hp_snap_orchestrator(s);
}

/* --debug: every finding's key and tag, one "hpnode: debug: finding" line each. */
static void debug_keys(const struct hp_findings *f)
{
	struct hp_buf key = HP_BUF_INIT(HP_MAX_LINE), safe = HP_BUF_INIT(HP_MAX_LINE);
	size_t i;

	for (i = 0; i < f->n; i++) {
		hp_finding_key(&f->v[i], &key);
		hp_buf_reset(&safe);
		hp_text_add(HP_TEXT_REPORT, key.buf, &safe, 1024);
		hp_debug("finding %s %s", safe.buf,
			hp_report_tag_name(f->v[i].tag));
	}
	hp_buf_release(&key);
	hp_buf_release(&safe);
}

/* One round of hpnode watch: the changes since the saved state, or a heartbeat line. */
static int watch_round(struct hp_cmd_ctx *c, const struct hp_snapshot *s,
		       const struct hp_findings *f)
{
	const struct hp_cmd_opts *o = &c->o;
	struct hp_diff_side none, cur, *prev = &none;
	struct hp_buf out = HP_BUF_INIT((size_t)1 << 30), name = HP_BUF_INIT(512);
	struct hp_diff d;
	char when[32];
	int color = !o->json && hp_report_want_color(o->no_color, c->sys->getenv(c->sys, "NO_COLOR"),
						     c->sys->getenv(c->sys, "TERM"), isatty(1));

	hp_report_iso8601(c->sys->now_ms(c->sys), when, sizeof(when));
	hp_text_add(HP_TEXT_REPORT, hp_snap_cluster_name(s), &name, 256);
	hp_diff_side_init(&cur, "this round", "run");
	hp_diff_side_findings(&cur, f);
	hp_diff_side_snapshot(&cur, s);
	/* The saved side is the watch's (it releases it); the comparison sorts it in place. */
	if (o->watch_prev)
		prev = (struct hp_diff_side *)o->watch_prev;
	else
		hp_diff_side_init(&none, "(no earlier round)", "none");
	hp_diff_compare(&d, prev, &cur);
	if (o->json) {
		hp_diff_json(&d, &out);
	} else if (!o->watch_prev) {
		hp_buf_printf(&out, "hpnode watch: %s cluster %s: first round, %zu issues; state saved "
			      "to %s\n", when, name.buf, cur.items.n, o->save ? o->save : "?");
	} else if (!d.fresh.n && !d.resolved.n && !d.prio_changes && !d.added.n && !d.removed.n &&
		   !d.replaced.n && !d.status.n && !d.groups.n) {
		hp_buf_printf(&out, "hpnode watch: %s cluster %s: no change (%zu issues)\n", when,
			      name.buf, cur.items.n);
	} else {
		hp_buf_printf(&out, "hpnode watch: %s cluster %s: changed since the last round\n",
			      when, name.buf);
		hp_diff_text(&d, color, &out);
	}
	if (!o->quiet)
		fwrite(out.buf, 1, out.len, stdout);
	hp_diff_release(&d);
	if (!o->watch_prev)
		hp_diff_side_release(&none);
	hp_diff_side_release(&cur);
	hp_buf_release(&out);
	hp_buf_release(&name);
	return HP_EXIT_OK;
}

/* --baseline: the baseline read and compared with this run's findings. */
struct baseline {
	struct hp_diff_side old_side, new_side;
	struct hp_diff d;
};

static int baseline_compare(struct hp_cmd_ctx *c, const struct hp_snapshot *s,
			    const struct hp_findings *f, struct baseline *b)
{
	struct hp_error e = HP_ERROR_INIT;

	memset(b, 0, sizeof(*b));
	if (hp_cmd_diff_load(c, c->o.baseline, &b->old_side, &e)) {
		struct hp_buf msg = HP_BUF_INIT(4096);

		hp_text_add(HP_TEXT_REPORT, e.msg, &msg, 2048);
		/* The run's report still comes, without the comparison. */
		fprintf(stderr, "hpnode %s: baseline: %s\n", c->cmd->name, msg.buf);
		hp_buf_release(&msg);
		return -1;
	}
	hp_diff_side_init(&b->new_side, "this run", "run");
	hp_diff_side_findings(&b->new_side, f);
	hp_diff_side_snapshot(&b->new_side, s);
	hp_diff_compare(&b->d, &b->old_side, &b->new_side);
	return 0;
}

static void baseline_release(struct baseline *b)
{
	hp_diff_release(&b->d);
	hp_diff_side_release(&b->old_side);
	hp_diff_side_release(&b->new_side);
}

/* Node ids listed per instance group when --node names a node the cluster does not have. */
#define MISSING_IDS_PER_GROUP 20

/*
 * --node names a node the cluster does not have (DescribeClusterNode found
 * none): the cluster's node ids by instance group and type, as a wrong
 * cluster name lists the clusters. 1 when it printed that, else 0.
 */
static int node_missing(const struct hp_snapshot *s)
{
	const char *want = hp_json_str(hp_snapshot_get(s, "meta"), "node_filter");
	const cJSON *m = hp_snapshot_get(s, "node_missing");
	const char *missing = cJSON_IsString(m) ? m->valuestring : NULL;
	const cJSON *groups = hp_json_get(hp_snapshot_get(s, "cluster"), "InstanceGroups");
	const cJSON *nodes = hp_snapshot_get(s, "nodes"), *g, *n;
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

	if (!want || !missing || strcmp(want, missing))
		return 0;
	hp_text_add(HP_TEXT_REPORT, want, &b, 64);
	fprintf(stderr, "ERROR: Node %s not found in cluster ", b.buf);
	hp_buf_reset(&b);
	hp_text_add(HP_TEXT_REPORT, hp_snap_cluster_name(s), &b, 256);
	fprintf(stderr, "%s\nNodes of the cluster by instance group:\n", b.buf);
	if (!cJSON_IsArray(nodes) || !cJSON_GetArraySize(nodes))
		fputs("  (none listed)\n", stderr);
	cJSON_ArrayForEach(g, (cJSON_IsArray(groups) ? groups : NULL)) {
		const char *name = hp_json_str(g, "InstanceGroupName");
		size_t shown = 0, all = 0;

		if (!name)
			continue;
		hp_buf_reset(&b);
		hp_text_add(HP_TEXT_REPORT, name, &b, 128);
		hp_buf_puts(&b, " (");
		hp_text_add(HP_TEXT_REPORT,
			    hp_json_str(g, "InstanceType") ? hp_json_str(g, "InstanceType") : "?", &b, 64);
		hp_buf_puts(&b, "):");
		cJSON_ArrayForEach(n, (cJSON_IsArray(nodes) ? nodes : NULL)) {
			const char *ng = hp_json_str(n, "InstanceGroupName");
			const char *id = hp_json_str(n, "InstanceId");

			if (!ng || !id || strcmp(ng, name))
				continue;
			all++;
			if (shown < MISSING_IDS_PER_GROUP) {
				hp_buf_putc(&b, ' ');
				hp_text_add(HP_TEXT_REPORT, id, &b, 64);
				shown++;
			}
		}
		if (!all)
			hp_buf_puts(&b, " (no nodes)");
		else if (all > shown)
			hp_buf_printf(&b, " \xe2\x80\xa6 and %zu more", all - shown);
		fprintf(stderr, "  %s\n", b.buf);
	}
	fputs("Confirm the instance id (--node) and the cluster.\n", stderr);
	hp_buf_release(&b);
	return 1;
}

/*
 * triage --node (the snapshot's node_filter): the report keeps that node's
 * findings and the cluster's about it. (nccl --node only picks the node to
 * probe: a job's findings on its other nodes stay.)
 */
static void focus(const struct hp_cmd_ctx *c, const struct hp_snapshot *s, struct hp_findings *f,
		  struct hp_report_run *run)
{
	const char *node = hp_json_str(hp_snapshot_get(s, "meta"), "node_filter");

	if (c->cmd->ops != &hp_cmd_triage || !node || !*node)
		return;
	run->node = node;
	run->node_group = hp_report_node_group(s, node);
	run->focus_left_out = hp_report_focus(s, node, f);
}

/* The checks, the report files, the terminal copy; the exit status (--fail-on, a file not written). */
static int report(const struct hp_snapshot *s, struct hp_cmd_ctx *c,
		  const struct run_clock *clock)
{
	const struct hp_cmd_opts *o = &c->o;
	const char *name = c->cmd->name;
	struct hp_sys *sys = c->sys;
	struct hp_findings f = { 0 };
	struct hp_report_opts ro;
	struct hp_report_run run;
	struct hp_buf out = HP_BUF_INIT((size_t)1 << 30);
	const cJSON *meta = hp_snapshot_get(s, "meta");
	const char *cluster = hp_snap_cluster_name(s);
	const char **argv = xcalloc((size_t)(c->full_argc > 0 ? c->full_argc : 1) + 2, sizeof(*argv));
	enum fmt fmt = o->json ? FMT_JSON : o->junit ? FMT_JUNIT : FMT_TEXT;
	enum hp_prio worst;
	struct baseline base;
	struct hp_gate gate;
	double group_s[HP_GROUP__COUNT];
	int rc = HP_EXIT_OK, failed = 0;

	if (c->cmd->ops == &hp_cmd_triage && node_missing(s)) {
		free(argv);
		return HP_EXIT_FATAL;
	}
	judge(s, c->cmd->ops->checks, &f, group_s);
	if (o->debug)
		debug_keys(&f);
	if (o->watch) {
		rc = watch_round(c, s, &f);
		hp_findings_release(&f);
		free(argv);
		return rc;
	}
	run_info(s, c, clock, argv, &run);
	focus(c, s, &f, &run);
	/* --fail-on judges every finding, whatever --only shows. */
	worst = hp_report_worst(&f);
	hp_report_gate(&f, o->fail_on != HP_PNONE ? o->fail_on : HP_P1, o->fail_on != HP_PNONE, &gate);
	if (o->only)
		hp_report_keep_tags(&f, o->only);
	memset(&ro, 0, sizeof(ro));
	ro.cluster = *cluster ? cluster : NULL;
	ro.region = hp_json_str(meta, "region");
	ro.orchestrator = report_orchestrator(s, c->cmd);
	ro.title = c->cmd->ops->title;
	ro.suggest = o->suggest;
	ro.snap = s;
	ro.run = &run;
	ro.gate = &gate;
	ro.group_s = group_s;
	if (c->cmd->ops->layout)
		c->cmd->ops->layout(c, s, &ro);
	if (o->baseline && baseline_compare(c, s, &f, &base))
		failed = 1;
	else if (o->baseline)
		ro.baseline = &base.d;
	/* Files first: they are the artefact; the terminal copy is a courtesy. */
	if (o->output_file && !strcmp(o->output_file, "-")) {
		/* --output-file -: the --output report on standard output, without colour, alone. */
		struct hp_report_opts plain = ro;

		plain.color = 0;
		plain.sink = to_stdout;
		render(fmt, &f, &plain, &out);
		hp_report_drain(&plain, &out, 1);
		hp_buf_reset(&out);
	} else {
		failed |= write_output(sys, o->output_file, fmt, &f, &ro, name);
	}
	failed |= write_output(sys, o->text_file, FMT_TEXT, &f, &ro, name);
	failed |= write_output(sys, o->json_file, FMT_JSON, &f, &ro, name);
	failed |= write_output(sys, o->junit_file, FMT_JUNIT, &f, &ro, name);
	if (!o->quiet && !(o->output_file && !strcmp(o->output_file, "-"))) {
		/* With --output-file the --output format went to the file; the terminal reads text. */
		enum fmt shown = o->output_file ? FMT_TEXT : fmt;
		ro.color = shown == FMT_TEXT &&
			   (o->color == HP_COLOR_ALWAYS ||
			    (o->color == HP_COLOR_AUTO &&
			     hp_report_want_color(o->no_color, sys->getenv(sys, "NO_COLOR"),
						  sys->getenv(sys, "TERM"), isatty(1))));
		ro.sink = to_stdout;
		ro.summary_only = o->summary;
		render(shown, &f, &ro, &out);
		hp_report_drain(&ro, &out, 1);
	}
	if (o->fail_on != HP_PNONE && worst <= o->fail_on) {
		rc = HP_EXIT_FINDINGS;
		/*
		 * --quiet prints no report: the reason on stderr. (A JSON or JUnit
		 * report on stdout stays alone there: many read it with 2>&1.)
		 */
		if (o->quiet)
			gate_reason(name, &gate);
	}
	if (ro.baseline && o->fail_on_new != HP_PNONE && base.d.worst_new <= o->fail_on_new) {
		if (o->quiet && rc != HP_EXIT_FINDINGS)
			fprintf(stderr, "hpnode %s: exit status 3: a new finding at %s or worse "
				"(--fail-on-new %s)\n", name, prio_name(o->fail_on_new),
				prio_name(o->fail_on_new));
		rc = HP_EXIT_FINDINGS;
	}
	if (failed)
		rc = HP_EXIT_FATAL;
	hp_buf_release(&out);
	if (o->baseline)
		baseline_release(&base);
	hp_findings_release(&f);
	free(argv);
	return rc;
}

/* Every output path must be writable before anything is collected. */
static int check_outputs(const struct hp_cmd_ctx *c)
{
	const struct hp_cmd_opts *o = &c->o;
	const char *paths[] = { o->save, o->output_file, o->text_file, o->json_file, o->junit_file };
	struct hp_error e = HP_ERROR_INIT;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(paths); i++) {
		/* --output-file - is standard output. */
		if (paths[i] == o->output_file && paths[i] && !strcmp(paths[i], "-"))
			continue;
		if (paths[i] && check_writable(c->sys, paths[i], &e)) {
			fprintf(stderr, "hpnode %s: %s; nothing was collected\n", c->cmd->name, e.msg);
			return HP_EXIT_USAGE;
		}
	}
	return 0;
}

/* The credential/region trace, one "hpnode: debug:" line each. */
static void debug_trace(const struct hp_buf *trace)
{
	const char *p = trace->buf;

	while (*p) {
		size_t n = strcspn(p, "\n");
		char line[1024], safe[1024];

		/* Never a URL's userinfo, never a control character. */
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		hp_text_str(HP_TEXT_SAFE, line, safe, sizeof(safe));
		hp_debug("%s", safe);
		p += n + (p[n] == '\n');
	}
}

/* The saved snapshot instead of collecting: the report, or exit 1 when it cannot be read. */
static int replay(struct hp_cmd_ctx *c, struct hp_snapshot *snap, const struct run_clock *clock)
{
	struct hp_error e = HP_ERROR_INIT;

	if (hp_snapshot_load(snap, c->sys, c->o.replay, &e)) {
		fprintf(stderr, "hpnode %s: %s\n", c->cmd->name, e.msg);
		return HP_EXIT_FATAL;
	}
	/* --cluster with --snapshot must name the snapshot's cluster: never another's report. */
	if (c->cluster && strcmp(c->cluster, hp_snap_cluster_name(snap)) &&
	    (!hp_snap_cluster_arn(snap) || strcmp(c->cluster, hp_snap_cluster_arn(snap))))
		return hp_cmd_usage_error(c->cmd->name, "--snapshot holds cluster '%s', not '%s' (drop "
					  "--cluster, or name the snapshot's cluster)",
					  *hp_snap_cluster_name(snap) ? hp_snap_cluster_name(snap) : "unknown",
					  c->cluster);
	hp_facts_prepare(snap);
	return report(snap, c, clock);
}

/*
 * Descriptor exhaustion met while collecting (hp_sys_fd_exhausted): what
 * failed for it says nothing about the cluster (a node "unreachable", a
 * program "not installed"), so nothing is reported or saved; exit 1 naming
 * the limit. 0 when none was met.
 */
static int fd_exhausted(const struct hp_cmd_ctx *c)
{
	int e = hp_sys_fd_exhausted();

	if (!e)
		return 0;
	fprintf(stderr, "hpnode %s: this machine ran out of file descriptors (%s; the open-file "
		"limit is %ld): calls that failed for it would be reported as faults of the cluster, "
		"so no report is written; raise the limit (ulimit -n) or lower --concurrency\n",
		c->cmd->name, e == ENFILE ? "ENFILE: too many open files in the system" :
		"EMFILE: too many open files", hp_sys_fd_limit());
	return HP_EXIT_FATAL;
}

/*
 * Profile, region and credentials into aws (the debug trace printed with
 * --debug) and the run budget from t0; 0, or the exit status of a failure.
 */
static int aws_setup(struct hp_cmd_ctx *c, struct hp_profile *prof, struct hp_aws *aws,
		     struct hp_snapshot *snap, int64_t t0)
{
	const struct hp_cmd_opts *o = &c->o;
	struct hp_buf trace = HP_BUF_INIT(HP_MAX_LINE);
	struct hp_error e = HP_ERROR_INIT;
	int rc = 0;

	const char *region = o->region;
	char arn_region[64];

	/* No --region: a cluster ARN's own region (a cluster is read in its region only). */
	if (!region && c->cluster && hp_starts_with(c->cluster, "arn:") &&
	    sscanf(c->cluster, "arn:%*[^:]:sagemaker:%63[a-z0-9-]:", arn_region) == 1) {
		region = arn_region;
		hp_buf_printf(&trace, "region %s from the cluster ARN\n", region);
	}
	if (hp_profile_load(c->sys, o->profile, prof, &e) ||
	    hp_aws_init(aws, c->sys, prof, region, o->endpoint, &trace, &e)) {
		if (o->debug)
			debug_trace(&trace);
		if ((rc = fd_exhausted(c)))
			;
		else if (e.code == HP_ERR_NO_CREDS || e.code == HP_ERR_CREDS) {
			rc = fatal(&e, snap, "");
		} else {
			fprintf(stderr, "hpnode %s: %s\n", c->cmd->name, e.msg);
			rc = hp_err_exit_status(e.code);
		}
	} else {
		aws->debug = o->debug;
		/* The run budget counts from the start of the run, credential lookup included. */
		aws->budget_s = o->max_runtime_s > 0 ? o->max_runtime_s : HP_CMD_MAX_RUNTIME_S;
		aws->deadline_ms = t0 + (int64_t)aws->budget_s * 1000;
		if (o->debug)
			debug_trace(&trace);
	}
	hp_buf_release(&trace);
	return rc;
}

/*
 * collect(), --save-snapshot and the report; the exit status. The snapshot
 * file is begun before collecting, so a probe sweep writes each node's raw
 * output to it as the node is done instead of keeping it; a file that
 * cannot be begun is reported where a failed save is.
 */
static int collect_and_report(struct hp_cmd_ctx *c, struct hp_snapshot *snap,
			      const struct run_clock *clock)
{
	struct hp_error e = HP_ERROR_INIT, open_e = HP_ERROR_INIT;
	int rc, saved, opened = 0;

	if (c->o.save)
		opened = !hp_snapshot_stream_open(snap, c->sys, c->o.save, &open_e);
	if (c->cmd->ops->collect(c, snap, &e)) {
		/* Nothing is saved: the file begun is removed with the snapshot. */
		if ((rc = fd_exhausted(c)))
			return rc;
		if (c->aws)
			return fatal(&e, snap, c->aws->region);
		fprintf(stderr, "hpnode %s: %s\n", c->cmd->name, e.msg);
		return hp_err_exit_status(e.code);
	}
	if ((rc = fd_exhausted(c)))
		return rc;
	saved = !c->o.save || (opened && !hp_snapshot_save(snap, c->sys, c->o.save, &e));
	if (!saved)
		fprintf(stderr, "hpnode %s: %s\n", c->cmd->name, opened ? e.msg : open_e.msg);
	/* The report is printed even when the snapshot could not be saved. */
	hp_facts_prepare(snap);
	rc = report(snap, c, clock);
	if (!saved)
		rc = HP_EXIT_FATAL;
	/* Interrupted: the partial report is out; exit as the signal asks (130, 143). */
	if (*hp_cmd_stop_flag())
		rc = 128 + *hp_cmd_stop_flag();
	return rc;
}

/* The run's end: a save not finished is removed; the memory may be left to the exit. */
static void snapshot_done(struct hp_snapshot *s)
{
	if (hp_heap_leave_at_exit())
		hp_snapshot_stream_abort(s);
	else
		hp_snapshot_release(s);
}

int hp_cmd_report_run(struct hp_cmd_ctx *c)
{
	struct hp_snapshot snap;
	struct hp_profile prof;
	struct hp_aws aws;
	int64_t t0 = c->sys->monotonic_ms(c->sys);
	struct run_clock clock;
	int rc;

	clock.wall_ms = c->sys->now_ms(c->sys);
	clock.mono_ms = c->sys->monotonic_ms(c->sys);
	if ((rc = check_outputs(c)))
		return rc;
	hp_snapshot_init(&snap);
	if (c->o.replay) {
		rc = replay(c, &snap, &clock);
		snapshot_done(&snap);
		return rc;
	}
	memset(&prof, 0, sizeof(prof));
	memset(&aws, 0, sizeof(aws));
	if (c->cmd->flags & HP_CMD_NEED_AWS) {
		rc = aws_setup(c, &prof, &aws, &snap, t0);
		c->aws = &aws;
		/* Interrupted while the credentials were looked up: nothing was collected. */
		if (rc && *hp_cmd_stop_flag()) {
			fprintf(stderr, "hpnode %s: interrupted before anything was collected\n",
				c->cmd->name);
			rc = 128 + *hp_cmd_stop_flag();
		}
	}
	if (!rc)
		rc = collect_and_report(c, &snap, &clock);
	c->aws = NULL;
	hp_aws_release(&aws);
	hp_profile_release(&prof);
	snapshot_done(&snap);
	return rc;
}

/* ---- for a command without a report that still calls AWS and renders one (`hpnode bundle`) ---- */

int hp_cmd_aws_begin(struct hp_cmd_ctx *c, struct hp_profile *prof, struct hp_aws *aws,
		     struct hp_snapshot *snap)
{
	return aws_setup(c, prof, aws, snap, c->sys->monotonic_ms(c->sys));
}

int hp_cmd_fatal(const struct hp_error *e, const struct hp_snapshot *s, const char *region)
{
	return fatal(e, s, region);
}

void hp_cmd_reports(struct hp_cmd_ctx *c, const struct hp_snapshot *s, int64_t wall_ms,
		    int64_t mono_ms, struct hp_buf out[3], struct hp_findings *f)
{
	const char **argv = xcalloc((size_t)(c->full_argc > 0 ? c->full_argc : 1) + 2, sizeof(*argv));
	const char *cluster = hp_snap_cluster_name(s);
	struct run_clock clock;
	struct hp_report_opts ro;
	struct hp_report_run run;
	double group_s[HP_GROUP__COUNT];
	int i;

	judge(s, NULL, f, group_s);
	clock.wall_ms = wall_ms;
	clock.mono_ms = mono_ms;
	run_info(s, c, &clock, argv, &run);
	memset(&ro, 0, sizeof(ro));
	ro.cluster = *cluster ? cluster : NULL;
	ro.region = hp_json_str(hp_snapshot_get(s, "meta"), "region");
	ro.orchestrator = report_orchestrator(s, c->cmd);
	ro.snap = s;
	ro.run = &run;
	ro.group_s = group_s;
	for (i = 0; i < 3; i++)
		render((enum fmt)i, f, &ro, &out[i]);
	free(argv);
}
