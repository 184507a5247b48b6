/*
 * The command frame (include/hp/cmd.h), first half: the shared options
 * and the command's own in one getopt table, --help built from the same
 * rows, usage errors, the checks every command shares, and hp_cmd_main,
 * which runs a command's parts in order. The report half (AWS set-up,
 * replay and save, checks, report, exit status) is cmd-report.c.
 */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "hp/text.h"
#include "cmd-int.h"

enum {
	O_REGION = HP_CMD_OPT_BASE, O_PROFILE, O_ENDPOINT, O_OUTPUT, O_FAIL_ON, O_SAVE, O_REPLAY,
	O_NO_COLOR, O_DEBUG, O_SUGGEST, O_MAX_RUNTIME, O_OUTPUT_FILE, O_TEXT_FILE, O_JSON_FILE,
	O_JUNIT_FILE, O_QUIET, O_CLUSTER, O_COLOR, O_SUMMARY, O_ONLY, O_HELP = 'h', O_SHORT_OUTPUT = 'o'
};

/* A shared option: taken by a command whose flags include every bit of needs. */
struct shared_opt {
	struct hp_opt opt;
	unsigned needs;
	const char *local_help;     /* the help lines for a HP_CMD_LOCAL_ONLY command, if other */
};

#define AWS HP_CMD_NEED_AWS
#define REPORT HP_CMD_REPORT
#define SNAP (HP_CMD_SNAPSHOT | HP_CMD_REPORT)

/* In --help order, after the command's own options. */
static const struct shared_opt shared[] = {
	{ { "region", required_argument, O_REGION,
	    "  --region R             AWS region (else AWS_REGION, AWS_DEFAULT_REGION, profile)\n" },
	  AWS, NULL },
	{ { "profile", required_argument, O_PROFILE,
	    "  --profile P            AWS profile from the shared config files\n" }, AWS, NULL },
	{ { "endpoint-url", required_argument, O_ENDPOINT,
	    "  --endpoint-url URL     send every AWS call to URL (testing, private endpoints)\n" },
	  AWS, NULL },
	{ { "output", required_argument, O_OUTPUT,
	    "  -o, --output text|json|junit  report format (default text)\n" }, REPORT, NULL },
	{ { "output-file", required_argument, O_OUTPUT_FILE,
	    "  --output-file FILE     write the --output report to FILE (atomically); the\n"
	    "                         terminal still shows the text report unless --quiet;\n"
	    "                         - is standard output (the report there, nothing else)\n" },
	  REPORT, NULL },
	{ { "text-file", required_argument, O_TEXT_FILE,
	    "  --text-file FILE, --json-file FILE, --junit-file FILE\n"
	    "                         also write that format to FILE (any number at once)\n" },
	  REPORT, NULL },
	{ { "json-file", required_argument, O_JSON_FILE, NULL }, REPORT, NULL },
	{ { "junit-file", required_argument, O_JUNIT_FILE, NULL }, REPORT, NULL },
	{ { "quiet", no_argument, O_QUIET,
	    "  --quiet                print no report on stdout (files only)\n" }, REPORT, NULL },
	{ { "summary", no_argument, O_SUMMARY,
	    "  --summary              the terminal copy: header and summary only (issues, not\n"
	    "                         checked); files keep the whole report\n" }, REPORT, NULL },
	{ { "only", required_argument, O_ONLY,
	    "  --only TAGS            only findings of these tags, e.g. FAIL,WARN (PASS, FAIL,\n"
	    "                         WARN, INFO, SKIP); --fail-on still counts every finding\n" },
	  REPORT, NULL },
	{ { "fail-on", required_argument, O_FAIL_ON,
	    "  --fail-on P0|P1|P2     exit 3 when a finding of that priority or worse exists\n" },
	  REPORT, NULL },
	{ { "suggest", no_argument, O_SUGGEST,
	    "  --suggest              under each FAIL/WARN, the reference's suggested commands with\n"
	    "                         this cluster's ids filled in (printed for you; never run)\n" },
	  REPORT | AWS, NULL },
	{ { "save-snapshot", required_argument, O_SAVE,
	    "  --save-snapshot FILE   write what was collected to FILE (JSON)\n" }, SNAP, NULL },
	{ { "snapshot", required_argument, O_REPLAY,
	    "  --snapshot FILE        replay a saved snapshot instead of calling AWS\n" }, SNAP,
	  "  --snapshot FILE        report on a saved snapshot instead of collecting\n" },
	{ { "no-color", no_argument, O_NO_COLOR,
	    "  --no-color             no ANSI colours (also NO_COLOR, TERM=dumb, non-terminal)\n" },
	  REPORT, NULL },
	{ { "color", required_argument, O_COLOR,
	    "  --color=always|never|auto  colours on the terminal copy: always, never, or\n"
	    "                         auto (default: a terminal without NO_COLOR or TERM=dumb)\n" },
	  REPORT, NULL },
	{ { "debug", no_argument, O_DEBUG,
	    "  --debug                log each AWS call and the credential source to stderr\n" },
	  AWS, NULL },
	{ { "max-runtime", required_argument, O_MAX_RUNTIME,
	    "  --max-runtime S        run budget in seconds, retries included (default 900); what\n"
	    "                         it leaves uncollected is reported as not checked\n" },
	  AWS, NULL },
	{ { "help", no_argument, O_HELP, "  -h, --help             this help\n" }, 0, NULL },
};

/* --cluster of HP_CMD_NEED_CLUSTER, first among the command's own options. */
static const struct hp_opt cluster_opt = {
	"cluster", required_argument, O_CLUSTER,
	"  --cluster NAME|ARN     HyperPod cluster name or ARN (required)\n"
};

#undef AWS
#undef REPORT
#undef SNAP

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
	hp_text_str(HP_TEXT_SAFE, raw, msg, sizeof(msg));
	fprintf(stderr, "hpnode %s: %s\nRun 'hpnode %s --help' for usage.\n", name, msg, name);
	return HP_EXIT_USAGE;
}

/* Edit distance of a and b (insertions, deletions, substitutions), for the first 63 bytes. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[64], prev, cur;

	la = la > 63 ? 63 : la;
	lb = lb > 63 ? 63 : lb;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j] > row[j - 1] + 1)
				row[j] = row[j - 1] + 1;
			if (row[j] > cur + 1)
				row[j] = cur + 1;
			prev = cur;
		}
	}
	return row[lb];
}

const char *hp_cmd_closest(const char *word, const char *const *names, size_t n)
{
	size_t i, best = (size_t)-1, d, limit = strlen(word) / 3;
	const char *pick = NULL;

	if (limit < 2)
		limit = 2;
	for (i = 0; i < n; i++) {
		if (!names[i])
			continue;
		/* A prefix of a name ("--junit" for --junit-file) counts as close. */
		d = hp_starts_with(names[i], word) && *word ? 1 : distance(word, names[i]);
		if (d < best) {
			best = d;
			pick = names[i];
		}
	}
	return best <= limit ? pick : NULL;
}

int hp_cmd_shared_option(const char *arg, int *takes_value)
{
	char name[64];
	size_t i;

	if (!strcmp(arg, "-o")) {
		*takes_value = 1;
		return 1;
	}
	if (strncmp(arg, "--", 2))
		return 0;
	snprintf(name, sizeof(name), "%s", arg + 2);
	*takes_value = !strchr(name, '=');
	name[strcspn(name, "=")] = '\0';
	if (!strcmp(name, cluster_opt.name)) {
		*takes_value = *takes_value && cluster_opt.has_arg == required_argument;
		return 1;
	}
	for (i = 0; i < HP_ARRAY_LEN(shared); i++) {
		if (strcmp(name, shared[i].opt.name) || shared[i].opt.code == O_HELP)
			continue;
		*takes_value = *takes_value && shared[i].opt.has_arg == required_argument;
		return 1;
	}
	return 0;
}

/* ---- the option table of one command ---- */

static int takes(const struct hp_cmd *cmd, const struct shared_opt *s)
{
	return (cmd->flags & s->needs) == s->needs;
}

/*
 * Every option cmd takes, in --help order: --cluster, its own, then the
 * shared ones its flags ask for. Returns how many; *out is freed by the caller.
 */
static size_t option_rows(const struct hp_cmd *cmd, struct hp_opt **out)
{
	const struct hp_opt *own = cmd->ops->options;
	size_t n = 0, nown = 0, i;
	struct hp_opt *rows;

	while (own && own[nown].name)
		nown++;
	*out = rows = xcalloc(nown + HP_ARRAY_LEN(shared) + 2, sizeof(*rows));
	if (cmd->flags & HP_CMD_NEED_CLUSTER)
		rows[n++] = cluster_opt;
	for (i = 0; i < nown; i++)
		rows[n++] = own[i];
	for (i = 0; i < HP_ARRAY_LEN(shared); i++) {
		if (!takes(cmd, &shared[i]))
			continue;
		rows[n] = shared[i].opt;
		if ((cmd->flags & HP_CMD_LOCAL_ONLY) && shared[i].local_help)
			rows[n].help = shared[i].local_help;
		n++;
	}
	return n;
}

size_t hp_cmd_option_names(const struct hp_cmd *cmd, const char **names, size_t max)
{
	struct hp_opt *rows;
	size_t n = option_rows(cmd, &rows), i;

	for (i = 0; i < n && i < max; i++)
		names[i] = rows[i].name;
	free(rows);
	return n;
}

/* The --help text: the command's usage, every option's lines, its exit statuses. */
static void print_help(const struct hp_cmd *cmd)
{
	struct hp_opt *rows;
	size_t n = option_rows(cmd, &rows), i;

	fputs(cmd->ops->usage, stdout);
	for (i = 0; i < n; i++)
		if (rows[i].help)
			fputs(rows[i].help, stdout);
	if (cmd->ops->exit_text)
		fputs(cmd->ops->exit_text, stdout);
	free(rows);
}

/* ---- parsing ---- */

/* "FAIL,WARN" (any case) into tag bits; a usage error for anything else. */
static int only_tags(const char *name, const char *arg, unsigned *out)
{
	static const struct { const char *name; enum hp_tag tag; } tags[] = {
		{ "PASS", HP_TAG_PASS }, { "FAIL", HP_TAG_FAIL }, { "WARN", HP_TAG_WARN },
		{ "INFO", HP_TAG_INFO }, { "SKIP", HP_TAG_SKIP },
	};
	const char *p = arg;
	unsigned bits = 0;

	while (*p) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < HP_ARRAY_LEN(tags); i++)
			if (n == strlen(tags[i].name) && !strncasecmp(p, tags[i].name, n))
				break;
		if (i == HP_ARRAY_LEN(tags))
			return hp_cmd_usage_error(name, "--only takes tags among PASS, FAIL, WARN, INFO, "
						  "SKIP, comma-separated (got '%s')", arg);
		bits |= 1u << tags[i].tag;
		p += n + (p[n] == ',');
	}
	if (!bits)
		return hp_cmd_usage_error(name, "%s", "--only needs at least one tag, e.g. FAIL,WARN");
	*out = bits;
	return 0;
}

static int report_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct hp_cmd_opts *o = &c->o;
	const char *name = c->cmd->name;

	switch (code) {
	case O_OUTPUT:
		o->json = !strcmp(arg, "json");
		o->junit = !strcmp(arg, "junit");
		if (!o->json && !o->junit && strcmp(arg, "text"))
			return hp_cmd_usage_error(name, "--output must be 'text', 'json' or 'junit' "
						  "(got '%s')", arg);
		return 0;
	case O_FAIL_ON:
		/* p1 as P1, as the other tools' flags take their values. */
		if (!strcasecmp(arg, "P0"))
			o->fail_on = HP_P0;
		else if (!strcasecmp(arg, "P1"))
			o->fail_on = HP_P1;
		else if (!strcasecmp(arg, "P2"))
			o->fail_on = HP_P2;
		else
			return hp_cmd_usage_error(name, "--fail-on must be P0, P1 or P2 (got '%s')", arg);
		return 0;
	case O_COLOR:
		if (!strcmp(arg, "always"))
			o->color = HP_COLOR_ALWAYS;
		else if (!strcmp(arg, "never"))
			o->color = HP_COLOR_NEVER;
		else if (!strcmp(arg, "auto"))
			o->color = HP_COLOR_AUTO;
		else
			return hp_cmd_usage_error(name, "--color must be always, never or auto (got '%s')",
						  arg);
		return 0;
	case O_ONLY:
		return only_tags(name, arg, &o->only);
	case O_MAX_RUNTIME: {
		char *end;
		long v = strtol(arg, &end, 10);

		if (end == arg || *end || v < 1 || v > 86400)
			return hp_cmd_usage_error(name, "--max-runtime must be whole seconds from 1 "
						  "to 86400 (got '%s')", arg);
		o->max_runtime_s = v;
		return 0;
	}
	case O_CLUSTER:
		if (!hp_cmd_valid_cluster(arg))
			return hp_cmd_usage_error(name, "--cluster must be a HyperPod cluster name or ARN "
						  "(got '%s')", arg);
		c->cluster = arg;
		return 0;
	}
	return HP_EXIT_USAGE;
}

static int shared_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct hp_cmd_opts *o = &c->o;

	switch (code) {
	case O_REGION: o->region = arg; break;
	case O_PROFILE: o->profile = arg; break;
	case O_ENDPOINT: o->endpoint = arg; break;
	case O_SAVE: o->save = arg; break;
	case O_REPLAY: o->replay = arg; break;
	case O_NO_COLOR: o->no_color = 1; break;
	case O_DEBUG: o->debug = 1; break;
	case O_SUGGEST: o->suggest = 1; break;
	case O_OUTPUT_FILE: o->output_file = arg; break;
	case O_TEXT_FILE: o->text_file = arg; break;
	case O_JSON_FILE: o->json_file = arg; break;
	case O_JUNIT_FILE: o->junit_file = arg; break;
	case O_QUIET: o->quiet = 1; break;
	case O_SUMMARY: o->summary = 1; break;
	default: return report_option(c, code, arg);
	}
	return 0;
}

/* "unknown option '--outptu'", with the closest option this command takes when one is near. */
static int unknown_option(const struct hp_cmd_ctx *c, const struct hp_opt *rows, size_t n,
			  const char *arg)
{
	const char **names = xcalloc(n + 1, sizeof(*names));
	char word[64];
	const char *near;
	size_t i;

	for (i = 0; i < n; i++)
		names[i] = rows[i].name;
	snprintf(word, sizeof(word), "%s", arg + strspn(arg, "-"));
	word[strcspn(word, "=")] = '\0';
	near = arg[0] == '-' && arg[1] == '-' ? hp_cmd_closest(word, names, n) : NULL;
	free(names);
	if (near)
		return hp_cmd_usage_error(c->cmd->name, "unknown option '%s' (did you mean --%s?)", arg,
					  near);
	return hp_cmd_usage_error(c->cmd->name, "unknown option '%s'", arg);
}

/* Options into c; 0 to go on, HP_CMD_DONE after --help, or a usage status. */
static int parse(struct hp_cmd_ctx *c, int argc, char **argv)
{
	struct hp_opt *rows;
	size_t n = option_rows(c->cmd, &rows), i;
	struct option *all = xcalloc(n + 1, sizeof(*all));
	const char *name = c->cmd->name;
	int code, rc = 0;

	for (i = 0; i < n; i++) {
		all[i].name = rows[i].name;
		all[i].has_arg = rows[i].has_arg;
		all[i].val = rows[i].code;
	}
	opterr = 0;
	optind = 1;
	while (!rc && (code = getopt_long(argc, argv, (c->cmd->flags & HP_CMD_REPORT) ? ":ho:" : ":h",
					  all, NULL)) != -1) {
		if (code == O_SHORT_OUTPUT)
			code = O_OUTPUT;
		if (code == O_HELP) {
			print_help(c->cmd);
			rc = HP_CMD_DONE;
		} else if (code == ':') {
			rc = hp_cmd_usage_error(name, "option '%s' needs a value", argv[optind - 1]);
		} else if (code == '?') {
			rc = unknown_option(c, rows, n, argv[optind - 1]);
		} else if (code >= HP_CMD_OPT_BASE) {
			rc = shared_option(c, code, optarg);
		} else {
			rc = c->cmd->ops->option ? c->cmd->ops->option(c, code, optarg) : HP_EXIT_USAGE;
		}
	}
	free(all);
	free(rows);
	if (rc)
		return rc;
	c->argc = argc - optind;
	c->argv = argv + optind;
	if (c->argc && !(c->cmd->flags & HP_CMD_OPERANDS))
		return hp_cmd_usage_error(name, "unexpected argument '%s'", c->argv[0]);
	return 0;
}

/* What no command may combine, and what HP_CMD_NEED_CLUSTER requires. */
static int shared_checks(const struct hp_cmd_ctx *c)
{
	const struct hp_cmd_opts *o = &c->o;
	const char *paths[] = { o->save, o->output_file, o->text_file, o->json_file, o->junit_file };
	const char *name = c->cmd->name;
	size_t a, b;

	for (a = 0; a < HP_ARRAY_LEN(paths); a++)
		for (b = a + 1; b < HP_ARRAY_LEN(paths); b++)
			if (paths[a] && paths[b] && !strcmp(paths[a], paths[b]))
				return hp_cmd_usage_error(name, "'%s' is named for two outputs", paths[a]);
	if ((c->cmd->flags & HP_CMD_NEED_AWS) && o->replay && (o->save || o->endpoint || o->profile))
		return hp_cmd_usage_error(name, "%s", "--snapshot replays saved data: it cannot be "
					  "combined with --save-snapshot, --endpoint-url or --profile");
	if ((c->cmd->flags & HP_CMD_NEED_CLUSTER) && !c->cluster && !o->replay)
		return hp_cmd_usage_error(name, "%s", "--cluster is required");
	return 0;
}

int hp_cmd_main(const struct hp_cmd *cmd, int argc, char **argv, struct hp_sys *sys)
{
	const struct hp_cmd_ops *ops = cmd->ops;
	struct hp_cmd_ctx c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.cmd = cmd;
	c.sys = sys;
	c.o.fail_on = HP_PNONE;
	c.o.fail_on_new = HP_PNONE;
	c.full_argc = argc;
	c.full_argv = argv;
	c.args = xcalloc(1, ops->args_size ? ops->args_size : 1);
	if (ops->init)
		ops->init(&c);
	rc = parse(&c, argc, argv);
	if (!rc)
		rc = shared_checks(&c);
	if (!rc && ops->check)
		rc = ops->check(&c);
	if (!rc)
		rc = (cmd->flags & HP_CMD_REPORT) && !ops->run ? hp_cmd_report_run(&c) : ops->run(&c);
	free(c.args);
	return rc == HP_CMD_DONE ? HP_EXIT_OK : rc;
}

/* ---- signals ---- */

static volatile sig_atomic_t stop_signal;

const volatile sig_atomic_t *hp_cmd_stop_flag(void)
{
	return &stop_signal;
}

static void on_signal(int sig)
{
	static const char again[] = "\nhpnode: interrupted again; exiting now\n";
	static const char first[] = "\nhpnode: interrupted; stopping what is under way for the "
				    "partial report (press Ctrl-C again to exit at once)\n";

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
