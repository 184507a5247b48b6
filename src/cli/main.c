/*
 * hpnode entry point: the command table and dispatch. Options belong to
 * each command; here only --version, help, and the final flush of stdout
 * (a write error there fails the run instead of exiting 0).
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

struct hp_cmd {
	const char *name;
	int (*fn)(int argc, char **argv, struct hp_sys *sys);
	const char *help;
};

/* Keep sorted by name; a unit test could bsearch, the list is tiny. */
static const struct hp_cmd commands[] = {
	{ "efa-sg", cmd_efa_sg, "check the EFA rules of the cluster's security groups (or --sg-id)" },
	{ "explain", cmd_explain, "print a section of the reference guide (offline)" },
	{ "node", cmd_node, "run the on-node checks on this machine (disks, kernel, GPUs, EFA)" },
	{ "triage", cmd_triage, "triage a HyperPod cluster (AWS APIs, events, nodes, logs)" },
	{ "vpc", cmd_vpc, "check the cluster's VPC: DNS, routes, endpoints, EKS, IPs, zones" },
};

static void usage(FILE *f)
{
	size_t i;

	fputs("usage: hpnode <command> [options]\n\ncommands:\n", f);
	for (i = 0; i < HP_ARRAY_LEN(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
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

int main(int argc, char **argv)
{
	size_t i;
	char help_flag[] = "--help";

	hp_json_init();
	if (argc < 2) {
		usage(stderr);
		return HP_EXIT_USAGE;
	}
	/* "hpnode help CMD" is "hpnode CMD --help". */
	if (!strcmp(argv[1], "help") && argc == 3) {
		for (i = 0; i < HP_ARRAY_LEN(commands); i++)
			if (!strcmp(argv[2], commands[i].name)) {
				char *args[] = { argv[2], help_flag, NULL };
				return finish(commands[i].fn(2, args, hp_sys_real()));
			}
		fprintf(stderr, "hpnode: unknown command '%s'\n\n", argv[2]);
		usage(stderr);
		return HP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return finish(HP_EXIT_OK);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		version();
		return finish(HP_EXIT_OK);
	}
	for (i = 0; i < HP_ARRAY_LEN(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return finish(commands[i].fn(argc - 1, argv + 1, hp_sys_real()));
	{
		char clean[256];

		hp_safe_text(argv[1], clean, sizeof(clean));
		fprintf(stderr, "hpnode: unknown command '%s'\n\n", clean);
	}
	usage(stderr);
	return HP_EXIT_USAGE;
}
