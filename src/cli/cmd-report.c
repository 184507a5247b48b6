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
#include "hp/json.h"
#include "hp/profile.h"
#include "hp/report.h"

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
		hp_sanitize(v ? v : "?", &n, 256);
		v = hp_json_str(c, "ClusterStatus");
		hp_sanitize(v ? v : "?", &st, 64);
		v = hp_json_str(c, "ClusterArn");
		hp_sanitize(v ? v : "?", &arn, 256);
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

	hp_sanitize(e->msg, &msg, 2048);
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
	const cJSON *id = hp_snapshot_get(s, "identity");
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
		r->replay_file = o->replay;
		r->collected_ms = (int64_t)hp_json_num(meta, "collected_at_ms", 0);
		r->collected_by = hp_json_str(meta, "tool");
	}
	if (hp_json_num(pm, "interrupted", 0) > 0) {
		r->interrupted = (int)hp_json_num(pm, "interrupted", 0);
		r->probed = (size_t)hp_json_num(pm, "probed", 0);
		r->to_probe = (size_t)hp_json_num(pm, "to_probe", 0);
	}
}

enum fmt { FMT_TEXT, FMT_JSON, FMT_JUNIT };

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
	int rc = HP_EXIT_OK, failed = 0;

	if (c->cmd->ops->checks)
		hp_checks_run_only(s, c->cmd->ops->checks, &f);
	else
		hp_checks_run(s, &f);
	run_info(s, c, clock, argv, &run);
	memset(&ro, 0, sizeof(ro));
	ro.cluster = *cluster ? cluster : NULL;
	ro.region = hp_json_str(meta, "region");
	ro.orchestrator = report_orchestrator(s, c->cmd);
	ro.title = c->cmd->ops->title;
	ro.suggest = o->suggest;
	ro.snap = s;
	ro.run = &run;
	if (c->cmd->ops->layout)
		c->cmd->ops->layout(c, s, &ro);
	/* Files first: they are the artefact; the terminal copy is a courtesy. */
	failed |= write_output(sys, o->output_file, fmt, &f, &ro, name);
	failed |= write_output(sys, o->text_file, FMT_TEXT, &f, &ro, name);
	failed |= write_output(sys, o->json_file, FMT_JSON, &f, &ro, name);
	failed |= write_output(sys, o->junit_file, FMT_JUNIT, &f, &ro, name);
	if (!o->quiet) {
		/* With --output-file the --output format went to the file; the terminal reads text. */
		enum fmt shown = o->output_file ? FMT_TEXT : fmt;
		ro.color = shown == FMT_TEXT &&
			   hp_report_want_color(o->no_color, sys->getenv(sys, "NO_COLOR"),
						sys->getenv(sys, "TERM"), isatty(1));
		ro.sink = to_stdout;
		render(shown, &f, &ro, &out);
		hp_report_drain(&ro, &out, 1);
	}
	worst = hp_report_worst(&f);
	if (o->fail_on != HP_PNONE && worst <= o->fail_on)
		rc = HP_EXIT_FINDINGS;
	if (failed)
		rc = HP_EXIT_FATAL;
	hp_buf_release(&out);
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
		hp_safe_text(line, safe, sizeof(safe));
		fprintf(stderr, "hpnode: debug: %s\n", safe);
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
	return report(snap, c, clock);
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

	if (hp_profile_load(c->sys, o->profile, prof, &e) ||
	    hp_aws_init(aws, c->sys, prof, o->region, o->endpoint, &trace, &e)) {
		if (o->debug)
			debug_trace(&trace);
		if (e.code == HP_ERR_NO_CREDS || e.code == HP_ERR_CREDS) {
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
		if (c->aws)
			return fatal(&e, snap, c->aws->region);
		fprintf(stderr, "hpnode %s: %s\n", c->cmd->name, e.msg);
		return hp_err_exit_status(e.code);
	}
	saved = !c->o.save || (opened && !hp_snapshot_save(snap, c->sys, c->o.save, &e));
	if (!saved)
		fprintf(stderr, "hpnode %s: %s\n", c->cmd->name, opened ? e.msg : open_e.msg);
	/* The report is printed even when the snapshot could not be saved. */
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
	}
	if (!rc)
		rc = collect_and_report(c, &snap, &clock);
	c->aws = NULL;
	hp_aws_release(&aws);
	hp_profile_release(&prof);
	snapshot_done(&snap);
	return rc;
}
