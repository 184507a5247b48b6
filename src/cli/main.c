/*
 * hpnode entry point: the command table and the dispatch (help, --version,
 * a command through the frame of include/hp/cmd.h), then the flush of
 * stdout, so a write error there fails the run instead of exiting 0. The
 * unit tests build this file with -DHP_NO_MAIN to run commands through the
 * real table.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <expat.h>
#include <openssl/crypto.h>
#include <yaml.h>

#include "hp/cmd.h"
#include "hp/err.h"
#include "hp/json.h"
#include "hp/sys.h"
#include "hp/text.h"

/*
 * Adding a command (say `hpnode foo`):
 *
 *  1. Write src/cli/cmd-foo.c with `const struct hp_cmd_ops hp_cmd_foo`:
 *     its --help text (usage before the options, exit statuses after),
 *     its own options as struct hp_opt rows with their help lines (codes
 *     256 and up), and the parts it needs: init/option/check for its
 *     options, collect() filling the snapshot for a report command, or
 *     run() for one without a report. Nothing else: the frame parses the
 *     shared options, prints --help and usage errors, sets up AWS, replays
 *     and saves snapshots, runs the checks and prints the report.
 *  2. Declare hp_cmd_foo in include/hp/cmd.h.
 *  3. Add its row below, in name order, with the flags it needs:
 *     HP_CMD_NEED_AWS or HP_CMD_LOCAL_ONLY (exactly one), HP_CMD_REPORT,
 *     HP_CMD_SNAPSHOT, HP_CMD_NEED_CLUSTER, HP_CMD_OPERANDS.
 *  4. Document it in the man page src/man/hpnode.1, references/usage.md and the completions
 *     (src/completion/); tests/unit/test-cli.c already checks that it is
 *     in order, that --help works and that --help names every option it
 *     takes; add its own tests (tests/unit/test-cmd-*.c, tests/e2e/).
 */
const struct hp_cmd hp_commands[] = {
	{ "bundle", &hp_cmd_bundle, HP_CMD_NEED_AWS | HP_CMD_NEED_CLUSTER,
	  "collect a redacted support bundle (.tar.gz): triage, logs, node files" },
	{ "completion", &hp_cmd_completion, HP_CMD_LOCAL_ONLY | HP_CMD_OPERANDS,
	  "print the bash or zsh completion script" },
	{ "diff", &hp_cmd_diff, HP_CMD_LOCAL_ONLY | HP_CMD_OPERANDS,
	  "compare two runs (snapshots or JSON reports): new, resolved, replaced" },
	{ "efa-sg", &hp_cmd_efa_sg, HP_CMD_NEED_AWS | HP_CMD_REPORT | HP_CMD_SNAPSHOT,
	  "check the EFA rules of the cluster's security groups (or --sg-id)" },
	{ "explain", &hp_cmd_explain, HP_CMD_LOCAL_ONLY | HP_CMD_OPERANDS,
	  "print a section of the reference guide (offline)" },
	{ "fleet", &hp_cmd_fleet, HP_CMD_NEED_AWS | HP_CMD_REPORT,
	  "triage every cluster of the account in some or all regions: one table" },
	{ "nccl", &hp_cmd_nccl, HP_CMD_NEED_AWS | HP_CMD_NEED_CLUSTER | HP_CMD_REPORT | HP_CMD_SNAPSHOT,
	  "diagnose a multi-node training job's NCCL: pods, logs, env, nodes" },
	{ "node", &hp_cmd_node, HP_CMD_LOCAL_ONLY | HP_CMD_REPORT | HP_CMD_SNAPSHOT,
	  "run the on-node checks on this machine (disks, kernel, GPUs, EFA)" },
	{ "triage", &hp_cmd_triage,
	  HP_CMD_NEED_AWS | HP_CMD_NEED_CLUSTER | HP_CMD_REPORT | HP_CMD_SNAPSHOT,
	  "triage a HyperPod cluster (AWS APIs, events, nodes, logs)" },
	{ "vpc", &hp_cmd_vpc, HP_CMD_NEED_AWS | HP_CMD_NEED_CLUSTER | HP_CMD_REPORT | HP_CMD_SNAPSHOT,
	  "check the cluster's VPC: DNS, routes, endpoints, EKS, IPs, zones" },
	{ "watch", &hp_cmd_watch, HP_CMD_NEED_AWS | HP_CMD_NEED_CLUSTER | HP_CMD_REPORT,
	  "triage every interval, print only what changed (state kept on disk)" },
};

const size_t hp_ncommands = HP_ARRAY_LEN(hp_commands);

static void usage(FILE *f)
{
	size_t i;

	fputs("usage: hpnode <command> [options]\n\ncommands:\n", f);
	for (i = 0; i < hp_ncommands; i++)
		fprintf(f, "  %-10s %s\n", hp_commands[i].name, hp_commands[i].summary);
	fputs("\nRun 'hpnode <command> --help' (or 'hpnode help <command>') for a command's options.\n"
	      "hpnode is read-only: it never changes cluster, node or workload state.\n", f);
}

static int finish(int rc)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "hpnode: cannot write output: %s\n", strerror(errno));
		return HP_EXIT_FATAL;
	}
	return rc;
}

/* The version, the revision built from, and the libraries linked in. */
static void version(void)
{
	const curl_version_info_data *c = curl_version_info(CURLVERSION_NOW);
	const char *rev = hp_revision();

	printf("hpnode %s%s%s\n", HP_VERSION, rev ? " revision " : "", rev ? rev : "");
	printf("libcurl %s\n", c && c->version ? c->version : "unknown");
	printf("%s\n", OpenSSL_version(OPENSSL_VERSION));
	printf("cJSON %s\n", cJSON_Version());
	printf("libyaml %s\n", yaml_get_version_string());
	printf("%s\n", XML_ExpatVersion());
}

static const struct hp_cmd *find(const char *name)
{
	size_t i;

	for (i = 0; i < hp_ncommands; i++)
		if (!strcmp(name, hp_commands[i].name))
			return &hp_commands[i];
	return NULL;
}

static int unknown(const char *name)
{
	char clean[256];

	const char *names[16], *near;
	size_t i;

	for (i = 0; i < hp_ncommands && i < HP_ARRAY_LEN(names); i++)
		names[i] = hp_commands[i].name;
	near = hp_cmd_closest(name, names, i);
	hp_text_str(HP_TEXT_SAFE, name, clean, sizeof(clean));
	if (near)
		fprintf(stderr, "hpnode: unknown command '%s' (did you mean '%s'?)\n\n", clean, near);
	else
		fprintf(stderr, "hpnode: unknown command '%s'\n\n", clean);
	usage(stderr);
	return HP_EXIT_USAGE;
}

/*
 * "hpnode --region R triage --cluster C" as "hpnode triage --region R
 * --cluster C": shared options before the command move after it (argv is
 * reordered in place). Returns 0, or the usage status when they are not
 * followed by a command.
 */
static int options_first(int argc, char **argv)
{
	int i = 1, takes, k;
	char *cmd;

	while (i < argc && argv[i][0] == '-' && hp_cmd_shared_option(argv[i], &takes))
		i += takes ? 2 : 1;
	if (i == 1)
		return 0;
	if (i >= argc || argv[i][0] == '-') {
		char clean[256];

		hp_text_str(HP_TEXT_SAFE, i < argc ? argv[i] : "", clean, sizeof(clean));
		if (i < argc)
			fprintf(stderr, "hpnode: '%s' before the command: only the shared options "
				"(--region, --output, ...) may come first\n\n", clean);
		else
			fputs("hpnode: options before the command need a command after them\n\n", stderr);
		usage(stderr);
		return HP_EXIT_USAGE;
	}
	cmd = argv[i];
	for (k = i; k > 1; k--)
		argv[k] = argv[k - 1];
	argv[1] = cmd;
	return 0;
}

int hp_main(int argc, char **argv, struct hp_sys *sys)
{
	const struct hp_cmd *cmd;
	int rc;

	if (argc < 2) {
		usage(stderr);
		return HP_EXIT_USAGE;
	}
	if ((rc = options_first(argc, argv)))
		return rc;
	/* "hpnode help CMD" is "hpnode CMD --help". */
	if (!strcmp(argv[1], "help") && argc == 3) {
		char help_flag[] = "--help";
		char *args[3];

		if (!(cmd = find(argv[2])))
			return unknown(argv[2]);
		args[0] = argv[2];
		args[1] = help_flag;
		args[2] = NULL;
		return finish(hp_cmd_main(cmd, 2, args, sys));
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return finish(HP_EXIT_OK);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		version();
		return finish(HP_EXIT_OK);
	}
	if (!(cmd = find(argv[1])))
		return unknown(argv[1]);
	return finish(hp_cmd_main(cmd, argc - 1, argv + 1, sys));
}

#ifndef HP_NO_MAIN
int main(int argc, char **argv)
{
	hp_sys_proc_setup();
	hp_heap_setup();
	hp_json_init();
	return hp_main(argc, argv, hp_sys_real());
}
#endif
