/*
 * What the report-producing commands (triage, efa-sg, vpc) share: the
 * common options, the usage-error convention, AWS setup, the fatal-error
 * messages, snapshot save/replay and the report with its exit status.
 * A command adds its own options and its collection step; the rest is here.
 */
#ifndef HP_CMDUTIL_H
#define HP_CMDUTIL_H

#include <getopt.h>
#include <signal.h>

#include "hp/aws.h"
#include "hp/check.h"
#include "hp/snapshot.h"
#include "hp/sys.h"

/* The options every report command takes. */
struct hp_cmd_opts {
	const char *name;           /* command name for messages: "triage" */
	const char *region, *profile, *endpoint;
	const char *save, *replay;  /* --save-snapshot, --snapshot */
	int json, no_color, debug;
	int suggest;                /* --suggest: suggested commands under each FAIL/WARN */
	enum hp_prio fail_on;
	const char *title;          /* report banner; NULL = the triage banner */
	const char *const *only;    /* check ids to run ("x.*" = prefix); NULL = every check */
	long max_runtime_s;         /* --max-runtime; 0 = HP_CMD_MAX_RUNTIME_S */
	int junit;                  /* --output junit */
	const char *output_file;    /* --output-file: the --output format, written atomically */
	const char *json_file, *junit_file, *text_file;  /* --json-file, --junit-file, --text-file */
	int quiet;                  /* --quiet: nothing on stdout */
	int argc;                   /* the command's arguments (argv[0] = command name) */
	char **argv;
};

/* The default run budget: 15 minutes for the whole run, retries included. */
#define HP_CMD_MAX_RUNTIME_S 900L

/* The usage lines of the shared options, for a command's --help text. */
#define HP_CMD_COMMON_USAGE \
	"  --region R             AWS region (else AWS_REGION, AWS_DEFAULT_REGION, profile)\n" \
	"  --profile P            AWS profile from the shared config files\n" \
	"  --endpoint-url URL     send every AWS call to URL (testing, private endpoints)\n" \
	"  --output text|json|junit  report format (default text)\n" \
	"  --output-file FILE     write the --output report to FILE (atomically); the\n" \
	"                         terminal still shows the text report unless --quiet\n" \
	"  --text-file FILE, --json-file FILE, --junit-file FILE\n" \
	"                         also write that format to FILE (any number at once)\n" \
	"  --quiet                print no report on stdout (files only)\n" \
	"  --fail-on P0|P1|P2     exit 3 when a finding of that priority or worse exists\n" \
	"  --suggest              under each FAIL/WARN, the reference's suggested commands with\n" \
	"                         this cluster's ids filled in (printed for you; never run)\n" \
	"  --save-snapshot FILE   write what was collected to FILE (JSON)\n" \
	"  --snapshot FILE        replay a saved snapshot instead of calling AWS\n" \
	"  --no-color             no ANSI colours (also NO_COLOR, TERM=dumb, non-terminal)\n" \
	"  --debug                log each AWS call and the credential source to stderr\n" \
	"  --max-runtime S        run budget in seconds, retries included (default 900); what\n" \
	"                         it leaves uncollected is reported as not checked\n" \
	"  -h, --help             this help\n"

/* The shared options use getopt_long codes from this up; a command's own use 256 and on. */
#define HP_CMD_OPT_BASE 1000

/* A command's own options: its table (ending in a zero row) and handler. */
struct hp_cmd_spec {
	const char *usage;                /* full --help text */
	const struct option *options;     /* NULL or zero-terminated */
	/* 0 accepted; otherwise an exit status (print with hp_cmd_usage_error). */
	int (*option)(void *ctx, int code, const char *arg);
	void *ctx;
};

/*
 * Parse argv: the shared options into o, the command's own through spec.
 * Returns 0 to go on, -1 when --help was printed (exit 0), or an exit status.
 */
int hp_cmd_parse(const struct hp_cmd_spec *spec, int argc, char **argv, struct hp_cmd_opts *o);

/* Print "hpnode NAME: <msg>" and the --help hint to stderr; returns HP_EXIT_USAGE. */
int hp_cmd_usage_error(const char *name, const char *fmt, ...) HP_PRINTF(2, 3);

/* Whether s matches the extended regular expression re (a built-in pattern). */
int hp_cmd_match(const char *re, const char *s);

/* Whether s is a HyperPod cluster name or ARN. */
int hp_cmd_valid_cluster(const char *s);

/* The run's interrupt flag: 0, or the signal (SIGINT, SIGTERM) that asked to stop. */
const volatile sig_atomic_t *hp_cmd_stop_flag(void);
/*
 * From now on SIGINT/SIGTERM only set the stop flag (a sweep then winds
 * down and the partial report is printed); a second one exits at once.
 */
void hp_cmd_catch_signals(void);

/*
 * Write len bytes to path atomically through sys->write_file (a temporary
 * file in the same directory, then rename(2); never through a symlink),
 * mode 0666 less the umask (HP_SYS_MODE_DEFAULT). 0, or -1 with e set (HP_ERR_FILE).
 */
int hp_cmd_write_file(struct hp_sys *sys, const char *path, const char *data, size_t len,
		      struct hp_error *e);
/* Whether a file can be created at path (sys->can_write); -1 with e set. */
int hp_cmd_check_writable(struct hp_sys *sys, const char *path, struct hp_error *e);

/* Gathers what a command knows about its run into the snapshot; -1 with e set is fatal. */
typedef int (*hp_cmd_collect_fn)(struct hp_aws *a, struct hp_snapshot *s, void *arg,
				 struct hp_error *e);

/*
 * The rest of a command: replay the --snapshot file, or set up AWS, run
 * collect, save --save-snapshot; then run the checks (o->only) and print
 * the report. Returns the exit status.
 */
int hp_cmd_run(const struct hp_cmd_opts *o, struct hp_sys *sys, hp_cmd_collect_fn collect,
	       void *arg);

#endif
