/*
 * The command frame. Every subcommand is one row of the command table in
 * src/cli/main.c ({ name, parts, flags, summary }; the checklist for adding
 * one is beside the table) and one struct hp_cmd_ops in its own
 * src/cli/cmd-<name>.c with what is particular to it: its options, its
 * checks of them, and what it collects (or, for a command without a
 * report, what it does). Everything else is the frame's (cmd-common.c):
 * option parsing (the shared options the flags ask for plus the command's
 * own), --help, usage errors, the output paths checked before anything is
 * collected, AWS set-up, snapshot replay and save, the checks, the report
 * (header, output files, JUnit, --fail-on) and the exit status; main()
 * flushes stdout.
 */
#ifndef HP_CMD_H
#define HP_CMD_H

#include <getopt.h>
#include <signal.h>

#include "hp/aws.h"
#include "hp/check.h"
#include "hp/snapshot.h"
#include "hp/sys.h"

/*
 * What a command needs from the frame (the flags of its table row).
 * Exactly one of HP_CMD_NEED_AWS and HP_CMD_LOCAL_ONLY is set.
 */
enum {
	/* Calls AWS: --region, --profile, --endpoint-url, --debug, --max-runtime;
	   the profile, region and credentials are set up before collect(). */
	HP_CMD_NEED_AWS = 1u << 0,
	/* Never calls AWS and takes none of its options; a failure is
	   "hpnode NAME: <message>", never the credential or cluster messages. */
	HP_CMD_LOCAL_ONLY = 1u << 1,
	/* --cluster NAME|ARN: a cluster name or ARN, required unless replaying (ctx->cluster). */
	HP_CMD_NEED_CLUSTER = 1u << 2,
	/* collect -> checks -> report: --output, --output-file, --text-file,
	   --json-file, --junit-file, --quiet, --fail-on, --no-color (and
	   --suggest with HP_CMD_NEED_AWS). */
	HP_CMD_REPORT = 1u << 3,
	/* --save-snapshot FILE saves what was collected, --snapshot FILE replays
	   it instead of collecting (with HP_CMD_REPORT). */
	HP_CMD_SNAPSHOT = 1u << 4,
	/* Takes arguments after the options (ctx->argc, ctx->argv); others refuse them. */
	HP_CMD_OPERANDS = 1u << 5,
};

/* The options every report command may take (those its flags ask for). */
struct hp_cmd_opts {
	const char *region, *profile, *endpoint;
	const char *save, *replay;  /* --save-snapshot, --snapshot */
	int json, junit;            /* --output json, --output junit */
	int no_color, debug;
	int suggest;                /* --suggest: suggested commands under each FAIL/WARN */
	enum hp_prio fail_on;
	long max_runtime_s;         /* --max-runtime; 0 = HP_CMD_MAX_RUNTIME_S */
	const char *output_file;    /* --output-file: the --output format, written atomically */
	const char *json_file, *junit_file, *text_file;  /* --json-file, --junit-file, --text-file */
	int quiet;                  /* --quiet: nothing on stdout */
	/* triage --baseline FILE (a snapshot or a JSON report) and --fail-on-new (HP_PNONE: off). */
	const char *baseline;
	enum hp_prio fail_on_new;
	/*
	 * hpnode watch: a round prints only the changes since watch_prev (the
	 * last round saved; NULL: the first round), or a heartbeat line.
	 */
	int watch;
	const struct hp_diff_side *watch_prev;
	int color;                  /* --color: HP_COLOR_AUTO (default), _ALWAYS, _NEVER */
	int summary;                /* --summary: the terminal copy is the header and the summary */
	unsigned only;              /* --only: bits 1 << HP_TAG_x of the findings kept; 0 = all */
};

enum { HP_COLOR_AUTO, HP_COLOR_ALWAYS, HP_COLOR_NEVER };

/* The default run budget: 15 minutes for the whole run, retries included. */
#define HP_CMD_MAX_RUNTIME_S 900L

/*
 * One option of a command: its getopt row and its --help lines. A
 * command's own codes are 256 and up (the shared ones are taken from
 * HP_CMD_OPT_BASE); help is "  --name ARG   what it does\n" in the column
 * layout of the other lines, or NULL when another row's lines name it.
 */
struct hp_opt {
	const char *name;      /* without "--"; NULL ends a table */
	int has_arg;           /* no_argument or required_argument */
	int code;
	const char *help;
};

#define HP_CMD_OPT_BASE 1000

/* check() returns this when the command has done all it was asked (exit 0). */
#define HP_CMD_DONE (-1)

struct hp_cmd;
struct hp_report_opts;
struct hp_diff_side;

/* One run of a command, handed to each of its parts. */
struct hp_cmd_ctx {
	const struct hp_cmd *cmd;
	struct hp_cmd_opts o;
	void *args;                 /* the command's own state (ops->args_size bytes, zeroed) */
	const char *cluster;        /* --cluster (HP_CMD_NEED_CLUSTER), or NULL */
	int argc;                   /* the operands left after the options (HP_CMD_OPERANDS) */
	char **argv;
	struct hp_sys *sys;
	struct hp_aws *aws;         /* set up for HP_CMD_NEED_AWS, during collect(); else NULL */
	int full_argc;              /* the command's whole argument list (argv[0] = its name) */
	char **full_argv;
};

/* What is particular to a command; NULL members are not needed. */
struct hp_cmd_ops {
	const char *usage;          /* --help before the option list: synopsis, description, operands */
	const char *exit_text;      /* --help after the option list: "\nExit status: ..." */
	const struct hp_opt *options;  /* its own, listed first in --help */
	size_t args_size;           /* its own state, at ctx->args */
	void (*init)(struct hp_cmd_ctx *c);   /* defaults, before parsing */
	/* One of its own options: 0, or an exit status (print with hp_cmd_usage_error). */
	int (*option)(struct hp_cmd_ctx *c, int code, const char *arg);
	/* After parsing, before anything runs: 0, HP_CMD_DONE, or an exit status. */
	int (*check)(struct hp_cmd_ctx *c);
	/* HP_CMD_REPORT: fill the snapshot; -1 with e set ends the run without a report. */
	int (*collect)(struct hp_cmd_ctx *c, struct hp_snapshot *s, struct hp_error *e);
	/*
	 * Without HP_CMD_REPORT: the whole command; returns the exit status.
	 * A report command may have one too, to run its rounds of the report
	 * frame itself (hp_cmd_report_run, `hpnode watch`), or instead of
	 * collect() to write a report of its own with the report options
	 * (`hpnode fleet`: many clusters in one table).
	 */
	int (*run)(struct hp_cmd_ctx *c);
	const char *title;          /* report banner; NULL = the triage banner */
	const char *const *checks;  /* check ids the report runs ("x.*" = prefix); NULL = every check */
	/*
	 * HP_CMD_REPORT, optional: the command's own report layout (group
	 * titles, summary block) from the snapshot, collected or replayed, into
	 * ro->layout; storage in ctx->args lives until the report is written.
	 */
	void (*layout)(struct hp_cmd_ctx *c, const struct hp_snapshot *s,
		       struct hp_report_opts *ro);
};

/* A row of the command table. */
struct hp_cmd {
	const char *name;
	const struct hp_cmd_ops *ops;
	unsigned flags;             /* HP_CMD_* */
	const char *summary;        /* its line in `hpnode --help` */
};

/* The commands (src/cli/cmd-*.c). */
extern const struct hp_cmd_ops hp_cmd_bundle, hp_cmd_completion, hp_cmd_diff, hp_cmd_efa_sg, hp_cmd_explain,
	hp_cmd_fleet, hp_cmd_nccl, hp_cmd_node, hp_cmd_triage, hp_cmd_vpc, hp_cmd_watch;

/* The table and the dispatch of src/cli/main.c (also built into the unit tests). */
extern const struct hp_cmd hp_commands[];
extern const size_t hp_ncommands;
/* `hpnode ARGS...` (argv[0] = "hpnode"): help, --version or a command; stdout flushed. */
int hp_main(int argc, char **argv, struct hp_sys *sys);

/* Run one command through the frame (argv[0] = its name); returns the exit status. */
int hp_cmd_main(const struct hp_cmd *cmd, int argc, char **argv, struct hp_sys *sys);
/*
 * The long options cmd accepts, in --help order, into names (at most max;
 * "help" included). Returns how many there are.
 */
size_t hp_cmd_option_names(const struct hp_cmd *cmd, const char **names, size_t max);

/* Print "hpnode NAME: <msg>" and the --help hint to stderr; returns HP_EXIT_USAGE. */
int hp_cmd_usage_error(const char *name, const char *fmt, ...) HP_PRINTF(2, 3);

/* Whether s matches the extended regular expression re (a built-in pattern). */
int hp_cmd_match(const char *re, const char *s);

/* The name of names (n of them, NULL ones skipped) nearest word when it is near enough; else NULL. */
const char *hp_cmd_closest(const char *word, const char *const *names, size_t n);

/*
 * Whether arg ("--region", "--output=json", "-o") is a shared option (or
 * --cluster), which may come before the command; *takes_value: whether the
 * next argument is its value.
 */
int hp_cmd_shared_option(const char *arg, int *takes_value);

/* Whether s is a HyperPod cluster name or ARN. */
int hp_cmd_valid_cluster(const char *s);

/* The run's interrupt flag: 0, or the signal (SIGINT, SIGTERM) that asked to stop. */
const volatile sig_atomic_t *hp_cmd_stop_flag(void);
/*
 * From now on SIGINT/SIGTERM only set the stop flag (a sweep then winds
 * down, the partial report is printed and the run exits 128+signal); a
 * second one exits at once.
 */
void hp_cmd_catch_signals(void);

#endif
