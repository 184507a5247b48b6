/*
 * The parts every report command shares: option parsing around a command's
 * own options, AWS setup, the fatal-error messages, snapshot save/replay,
 * the checks and the report with its exit status. Commands keep only their
 * own options and their collection step.
 */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hp/cmdutil.h"
#include "hp/json.h"
#include "hp/profile.h"
#include "hp/report.h"

#define K_POINTER "→ " HP_REF_DOC " § K.2 (AWS Credentials)"

enum {
	O_REGION = HP_CMD_OPT_BASE, O_PROFILE, O_ENDPOINT, O_OUTPUT, O_FAIL_ON, O_SAVE, O_REPLAY,
	O_NO_COLOR, O_DEBUG, O_SUGGEST, O_MAX_RUNTIME, O_OUTPUT_FILE, O_TEXT_FILE, O_JSON_FILE,
	O_JUNIT_FILE, O_QUIET
};

static const struct option common_options[] = {
	{ "region", required_argument, NULL, O_REGION },
	{ "profile", required_argument, NULL, O_PROFILE },
	{ "endpoint-url", required_argument, NULL, O_ENDPOINT },
	{ "output", required_argument, NULL, O_OUTPUT },
	{ "fail-on", required_argument, NULL, O_FAIL_ON },
	{ "save-snapshot", required_argument, NULL, O_SAVE },
	{ "snapshot", required_argument, NULL, O_REPLAY },
	{ "no-color", no_argument, NULL, O_NO_COLOR },
	{ "debug", no_argument, NULL, O_DEBUG },
	{ "suggest", no_argument, NULL, O_SUGGEST },
	{ "max-runtime", required_argument, NULL, O_MAX_RUNTIME },
	{ "output-file", required_argument, NULL, O_OUTPUT_FILE },
	{ "text-file", required_argument, NULL, O_TEXT_FILE },
	{ "json-file", required_argument, NULL, O_JSON_FILE },
	{ "junit-file", required_argument, NULL, O_JUNIT_FILE },
	{ "quiet", no_argument, NULL, O_QUIET },
	{ "help", no_argument, NULL, 'h' },
};

int hp_cmd_match(const char *re, const char *s)
{
	regex_t r;
	int ok;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		hp_die("bad built-in pattern");
	ok = !regexec(&r, s, 0, NULL, 0);
	regfree(&r);
	return ok;
}

int hp_cmd_valid_cluster(const char *s)
{
	return hp_cmd_match("^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:[0-9]{12}:cluster/[a-z0-9]{12}$", s) ||
	       hp_cmd_match("^[a-zA-Z0-9][-a-zA-Z0-9]{0,62}$", s);
}

int hp_cmd_usage_error(const char *name, const char *fmt, ...)
{
	char raw[1024], msg[1024];
	va_list ap;

	/* Arguments are echoed back: cleaned and with URL userinfo hidden. */
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	hp_safe_text(raw, msg, sizeof(msg));
	fprintf(stderr, "hpnode %s: %s\nRun 'hpnode %s --help' for usage.\n", name, msg, name);
	return HP_EXIT_USAGE;
}

static int common_option(struct hp_cmd_opts *o, int c, const char *arg)
{
	switch (c) {
	case O_REGION: o->region = arg; break;
	case O_PROFILE: o->profile = arg; break;
	case O_ENDPOINT: o->endpoint = arg; break;
	case O_SAVE: o->save = arg; break;
	case O_REPLAY: o->replay = arg; break;
	case O_NO_COLOR: o->no_color = 1; break;
	case O_DEBUG: o->debug = 1; break;
	case O_SUGGEST: o->suggest = 1; break;
	case O_MAX_RUNTIME: {
		char *end;
		long v = strtol(arg, &end, 10);

		if (end == arg || *end || v < 1 || v > 86400)
			return hp_cmd_usage_error(o->name, "--max-runtime must be whole seconds from 1 "
						  "to 86400 (got '%s')", arg);
		o->max_runtime_s = v;
		break;
	}
	case O_OUTPUT_FILE: o->output_file = arg; break;
	case O_TEXT_FILE: o->text_file = arg; break;
	case O_JSON_FILE: o->json_file = arg; break;
	case O_JUNIT_FILE: o->junit_file = arg; break;
	case O_QUIET: o->quiet = 1; break;
	case O_OUTPUT:
		o->json = !strcmp(arg, "json");
		o->junit = !strcmp(arg, "junit");
		if (!o->json && !o->junit && strcmp(arg, "text"))
			return hp_cmd_usage_error(o->name, "--output must be 'text', 'json' or 'junit' "
						  "(got '%s')", arg);
		break;
	case O_FAIL_ON:
		if (!strcmp(arg, "P0"))
			o->fail_on = HP_P0;
		else if (!strcmp(arg, "P1"))
			o->fail_on = HP_P1;
		else if (!strcmp(arg, "P2"))
			o->fail_on = HP_P2;
		else
			return hp_cmd_usage_error(o->name, "--fail-on must be P0, P1 or P2 (got '%s')", arg);
		break;
	default:
		return -1;
	}
	return 0;
}

int hp_cmd_parse(const struct hp_cmd_spec *spec, int argc, char **argv, struct hp_cmd_opts *o)
{
	size_t nown = 0, i;
	struct option *all;
	int c, rc = 0;

	o->fail_on = HP_PNONE;
	while (spec->options && spec->options[nown].name)
		nown++;
	all = xcalloc(nown + HP_ARRAY_LEN(common_options) + 1, sizeof(*all));
	for (i = 0; i < nown; i++)
		all[i] = spec->options[i];
	for (i = 0; i < HP_ARRAY_LEN(common_options); i++)
		all[nown + i] = common_options[i];
	opterr = 0;
	optind = 1;
	while (!rc && (c = getopt_long(argc, argv, ":h", all, NULL)) != -1) {
		if (c == 'h') {
			fputs(spec->usage, stdout);
			rc = -1;
		} else if (c == ':') {
			rc = hp_cmd_usage_error(o->name, "option '%s' needs a value", argv[optind - 1]);
		} else if (c == '?') {
			rc = hp_cmd_usage_error(o->name, "unknown option '%s'", argv[optind - 1]);
		} else if (c >= HP_CMD_OPT_BASE) {
			rc = common_option(o, c, optarg);
		} else {
			rc = spec->option ? spec->option(spec->ctx, c, optarg) : HP_EXIT_USAGE;
		}
	}
	free(all);
	if (rc)
		return rc;
	if (optind < argc)
		return hp_cmd_usage_error(o->name, "unexpected argument '%s'", argv[optind]);
	o->argc = argc;
	o->argv = argv;
	{
		const char *paths[] = { o->save, o->output_file, o->text_file, o->json_file,
					o->junit_file };
		size_t a, b;

		for (a = 0; a < HP_ARRAY_LEN(paths); a++)
			for (b = a + 1; b < HP_ARRAY_LEN(paths); b++)
				if (paths[a] && paths[b] && !strcmp(paths[a], paths[b]))
					return hp_cmd_usage_error(o->name, "'%s' is named for two outputs",
								  paths[a]);
	}
	if (o->replay && (o->save || o->endpoint || o->profile))
		return hp_cmd_usage_error(o->name, "%s", "--snapshot replays saved data: it cannot be "
					  "combined with --save-snapshot, --endpoint-url or --profile");
	return 0;
}

static volatile sig_atomic_t stop_signal;

const volatile sig_atomic_t *hp_cmd_stop_flag(void)
{
	return &stop_signal;
}

static void on_signal(int sig)
{
	static const char again[] = "\nhpnode: interrupted again; exiting now\n";
	static const char first[] = "\nhpnode: interrupted; ending open SSM sessions (press "
				    "Ctrl-C again to exit at once)\n";

	if (stop_signal) {
		(void)!write(2, again, sizeof(again) - 1);
		_exit(128 + sig);
	}
	stop_signal = sig;
	(void)!write(2, first, sizeof(first) - 1);
}

void hp_cmd_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int hp_cmd_check_writable(struct hp_sys *sys, const char *path, struct hp_error *e)
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

int hp_cmd_write_file(struct hp_sys *sys, const char *path, const char *data, size_t len,
		      struct hp_error *e)
{
	/* Readable like any file the user creates; the snapshot alone is 0600. */
	if (sys->write_file(sys, path, data, len, HP_SYS_MODE_DEFAULT))
		return hp_error_set(e, HP_ERR_FILE, "cannot write '%s': %s", path, strerror(errno));
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
static void run_info(const struct hp_snapshot *s, const struct hp_cmd_opts *o, struct hp_sys *sys,
		     const struct run_clock *clock, const char **argv, struct hp_report_run *r)
{
	const cJSON *meta = hp_snapshot_get(s, "meta"), *pm = hp_snapshot_get(s, "probes_meta");
	const cJSON *id = hp_snapshot_get(s, "identity");
	int i;

	memset(r, 0, sizeof(*r));
	r->version = HP_VERSION;
	r->revision = hp_revision();
	r->started_ms = clock->wall_ms;
	r->duration_ms = sys->monotonic_ms(sys) - clock->mono_ms;
	argv[0] = "hpnode";
	argv[1] = o->name;
	for (i = 1; i < o->argc; i++)
		argv[i + 1] = o->argv[i];
	argv[o->argc > 0 ? o->argc + 1 : 2] = NULL;
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

/* One output file, rendered without colour and written atomically. */
static int write_output(struct hp_sys *sys, const char *path, enum fmt fmt,
			const struct hp_findings *f, const struct hp_report_opts *ro, const char *name)
{
	struct hp_report_opts plain = *ro;
	struct hp_buf out = HP_BUF_INIT((size_t)1 << 30);
	struct hp_error e = HP_ERROR_INIT;
	int rc = 0;

	if (!path)
		return 0;
	plain.color = 0;
	render(fmt, f, &plain, &out);
	if (hp_cmd_write_file(sys, path, out.buf, out.len, &e)) {
		fprintf(stderr, "hpnode %s: %s\n", name, e.msg);
		rc = -1;
	}
	hp_buf_release(&out);
	return rc;
}

static int report(const struct hp_snapshot *s, const struct hp_cmd_opts *o, struct hp_sys *sys,
		  const struct run_clock *clock)
{
	struct hp_findings f = { 0 };
	struct hp_report_opts ro;
	struct hp_report_run run;
	struct hp_buf out = HP_BUF_INIT((size_t)1 << 30);
	const cJSON *meta = hp_snapshot_get(s, "meta");
	const char *cluster = hp_snap_cluster_name(s);
	const char **argv = xcalloc((size_t)(o->argc > 0 ? o->argc : 1) + 2, sizeof(*argv));
	enum fmt fmt = o->json ? FMT_JSON : o->junit ? FMT_JUNIT : FMT_TEXT;
	enum hp_prio worst;
	int rc = HP_EXIT_OK, failed = 0;

	if (o->only)
		hp_checks_run_only(s, o->only, &f);
	else
		hp_checks_run(s, &f);
	run_info(s, o, sys, clock, argv, &run);
	memset(&ro, 0, sizeof(ro));
	ro.cluster = *cluster ? cluster : NULL;
	ro.region = hp_json_str(meta, "region");
	ro.orchestrator = hp_snap_orchestrator(s);
	ro.title = o->title;
	ro.suggest = o->suggest;
	ro.snap = s;
	ro.run = &run;
	/* Files first: they are the artefact; the terminal copy is a courtesy. */
	failed |= write_output(sys, o->output_file, fmt, &f, &ro, o->name);
	failed |= write_output(sys, o->text_file, FMT_TEXT, &f, &ro, o->name);
	failed |= write_output(sys, o->json_file, FMT_JSON, &f, &ro, o->name);
	failed |= write_output(sys, o->junit_file, FMT_JUNIT, &f, &ro, o->name);
	if (!o->quiet) {
		/* With --output-file the --output format went to the file; the terminal reads text. */
		enum fmt shown = o->output_file ? FMT_TEXT : fmt;
		ro.color = shown == FMT_TEXT &&
			   hp_report_want_color(o->no_color, sys->getenv(sys, "NO_COLOR"),
						sys->getenv(sys, "TERM"), isatty(1));
		render(shown, &f, &ro, &out);
		fwrite(out.buf, 1, out.len, stdout);
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
static int check_outputs(const struct hp_cmd_opts *o, struct hp_sys *sys)
{
	const char *paths[] = { o->save, o->output_file, o->text_file, o->json_file, o->junit_file };
	struct hp_error e = HP_ERROR_INIT;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(paths); i++) {
		if (paths[i] && hp_cmd_check_writable(sys, paths[i], &e)) {
			fprintf(stderr, "hpnode %s: %s; nothing was collected\n", o->name, e.msg);
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

int hp_cmd_run(const struct hp_cmd_opts *o, struct hp_sys *sys, hp_cmd_collect_fn collect,
	       void *arg)
{
	struct hp_snapshot snap;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_profile prof;
	struct hp_aws aws;
	struct hp_buf trace = HP_BUF_INIT(HP_MAX_LINE);
	int64_t t0 = sys->monotonic_ms(sys);
	struct run_clock clock;
	int rc;

	clock.wall_ms = sys->now_ms(sys);
	clock.mono_ms = sys->monotonic_ms(sys);
	if ((rc = check_outputs(o, sys)))
		return rc;
	hp_snapshot_init(&snap);
	if (o->replay) {
		if (hp_snapshot_load(&snap, sys, o->replay, &e)) {
			fprintf(stderr, "hpnode %s: %s\n", o->name, e.msg);
			rc = HP_EXIT_FATAL;
		} else {
			rc = report(&snap, o, sys, &clock);
		}
		hp_snapshot_release(&snap);
		hp_buf_release(&trace);
		return rc;
	}
	memset(&prof, 0, sizeof(prof));
	memset(&aws, 0, sizeof(aws));
	if (hp_profile_load(sys, o->profile, &prof, &e) ||
	    hp_aws_init(&aws, sys, &prof, o->region, o->endpoint, &trace, &e)) {
		if (o->debug)
			debug_trace(&trace);
		if (e.code == HP_ERR_NO_CREDS || e.code == HP_ERR_CREDS) {
			rc = fatal(&e, &snap, "");
		} else {
			fprintf(stderr, "hpnode %s: %s\n", o->name, e.msg);
			rc = hp_err_exit_status(e.code);
		}
		goto out;
	}
	aws.debug = o->debug;
	/* The run budget counts from the start of the run, credential lookup included. */
	aws.budget_s = o->max_runtime_s > 0 ? o->max_runtime_s : HP_CMD_MAX_RUNTIME_S;
	aws.deadline_ms = t0 + (int64_t)aws.budget_s * 1000;
	if (o->debug)
		debug_trace(&trace);
	if (collect(&aws, &snap, arg, &e)) {
		rc = fatal(&e, &snap, aws.region);
	} else {
		int saved = !o->save || !hp_snapshot_save(&snap, sys, o->save, &e);

		if (!saved)
			fprintf(stderr, "hpnode %s: %s\n", o->name, e.msg);
		/* The report is printed even when the snapshot could not be saved. */
		rc = report(&snap, o, sys, &clock);
		if (!saved)
			rc = HP_EXIT_FATAL;
		/* Interrupted: the partial report is out; exit as the signal asks (130, 143). */
		if (stop_signal)
			rc = 128 + stop_signal;
	}
out:
	hp_aws_release(&aws);
	hp_profile_release(&prof);
	hp_snapshot_release(&snap);
	hp_buf_release(&trace);
	return rc;
}
