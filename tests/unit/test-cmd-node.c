/*
 * `hpnode node` with a canned hp_sys, through the real command table and
 * frame: the metadata lookup (IMDSv2, turned off by
 * AWS_EC2_METADATA_DISABLED, ids validated), the snapshot entry it builds
 * around the probe output, the report header and output files the frame
 * gives it, exit statuses and usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake-sys.h"
#include "hp/cmd.h"
#include "hp/err.h"
#include "hp/json.h"
#include "probe-t.h"
#include "t.h"

#define SNAP "build/test-cmd-node.json"

/* The whole of a file, freed by the caller; the file is removed. */
static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *text;
	long n;

	T_ASSERT(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	text = calloc(1, (size_t)n + 1);
	T_ASSERT(text && fread(text, 1, (size_t)n, fp) == (size_t)n);
	fclose(fp);
	unlink(path);
	return text;
}

/* What the last run_node() wrote to stderr. */
static char last_err[4096];

/*
 * Run `hpnode ARGS` (the real command table and frame) on a NULL-terminated
 * argument list (copied: getopt may permute it) with stdout and stderr
 * going to files; returns the status, *out the standard output.
 */
static int run_node(struct fake_sys *f, char **out, const char *const *args)
{
	char opath[] = "/tmp/hpnode-node-XXXXXX", epath[] = "/tmp/hpnode-node-XXXXXX", *argv[24], *err;
	int ofd = mkstemp(opath), efd = mkstemp(epath), saved_out, saved_err, rc, argc = 1;

	T_ASSERT(ofd >= 0 && efd >= 0);
	argv[0] = strdup("hpnode");
	while (args[argc - 1] && argc < 23) {
		argv[argc] = strdup(args[argc - 1]);
		argc++;
	}
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved_err = dup(2);
	dup2(ofd, 1);
	dup2(efd, 2);
	rc = hp_main(argc, argv, &f->sys);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	close(ofd);
	close(efd);
	while (argc--)
		free(argv[argc]);
	*out = slurp(opath);
	err = slurp(epath);
	snprintf(last_err, sizeof(last_err), "%s", err);
	free(err);
	return rc;
}

/* The snapshot the command wrote through hp_sys. */
static cJSON *saved_snapshot(const struct fake_sys *f)
{
	cJSON *doc;

	T_STREQ(f->written_path, SNAP);
	doc = cJSON_Parse(f->written);
	T_ASSERT(doc);
	return doc;
}

static void t_imds_names_the_node(void)
{
	struct fake_sys f;
	const char *const argv[] = { "node", "--output", "json", "--save-snapshot", SNAP, NULL };
	char *text = pt_file("probe-debian-vm.txt"), *out;
	const cJSON *e;
	cJSON *doc;

	fake_sys_init(&f);
	fake_reply(&f, 200, NULL, "AQAEAtoken==\n");
	fake_reply(&f, 200, NULL, "i-0123456789abcdef0");
	fake_reply(&f, 200, NULL, "p5.48xlarge");
	f.run_out = text;
	T_EQ(run_node(&f, &out, argv), HP_EXIT_OK);
	T_STREQ(f.run_argv0, "sh");
	T_EQ(f.nreq, 3);
	T_STREQ(f.req_method[0], "PUT");
	T_STREQ(f.req_url[0], "http://169.254.169.254/latest/api/token");
	T_CONTAINS(f.req_headers[0], "X-aws-ec2-metadata-token-ttl-seconds: 60");
	T_STREQ(f.req_url[1], "http://169.254.169.254/latest/meta-data/instance-id");
	T_CONTAINS(f.req_headers[1], "X-aws-ec2-metadata-token: AQAEAtoken==");
	T_STREQ(f.req_url[2], "http://169.254.169.254/latest/meta-data/instance-type");
	/* The report names the instance. */
	T_CONTAINS(out, "\"node\":\"i-0123456789abcdef0\"");
	T_CONTAINS(out, "Root volume 17% used on node i-0123456789abcdef0");
	doc = saved_snapshot(&f);
	e = hp_json_get(doc, "probes.i-0123456789abcdef0");
	T_STREQ(hp_json_str(e, "state"), "probed");
	T_STREQ(hp_json_str(e, "instance_type"), "p5.48xlarge");
	T_ASSERT(cJSON_IsFalse(hp_json_get(e, "truncated")));
	T_STREQ(hp_json_str(e, "stdout"), text);
	T_STREQ(hp_json_str(doc, "probes_meta.transport"), "local");
	T_EQ(hp_json_num(doc, "probes_meta.probed", 0), 1);
	T_STREQ(hp_json_str(doc, "meta.mode"), "node");
	cJSON_Delete(doc);
	free(out);
	free(text);
	fake_sys_release(&f);
}

static void t_imds_off_or_odd(void)
{
	struct fake_sys f;
	const char *const argv[] = { "node", "--output", "json", "--save-snapshot", SNAP, NULL };
	char *out;
	cJSON *doc;

	/* Turned off: not one request, the node is "local". */
	fake_sys_init(&f);
	fake_setenv(&f, "AWS_EC2_METADATA_DISABLED", "TRUE");
	f.run_out = "@@HP@@ BEGIN hugepages\n0\n@@HP@@ END hugepages 0\n@@HP@@ DONE\n";
	T_EQ(run_node(&f, &out, argv), HP_EXIT_OK);
	T_EQ(f.nreq, 0);
	doc = saved_snapshot(&f);
	T_ASSERT(hp_json_get(doc, "probes.local") != NULL);
	T_ASSERT(cJSON_IsNull(hp_json_get(doc, "probes.local.instance_type")));
	cJSON_Delete(doc);
	free(out);
	fake_sys_release(&f);

	/* A reply that is not an instance id is not used; another endpoint is honoured. */
	fake_sys_init(&f);
	fake_setenv(&f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1338/");
	fake_reply(&f, 200, NULL, "t");
	fake_reply(&f, 200, NULL, "<html>captive portal</html>");
	fake_reply(&f, 200, NULL, "p5.48xlarge; rm -rf /");
	f.run_out = "@@HP@@ DONE\n";
	T_EQ(run_node(&f, &out, argv), HP_EXIT_OK);
	T_STREQ(f.req_url[0], "http://127.0.0.1:1338/latest/api/token");
	doc = saved_snapshot(&f);
	T_ASSERT(hp_json_get(doc, "probes.local") != NULL);
	T_ASSERT(cJSON_IsNull(hp_json_get(doc, "probes.local.instance_type")));
	cJSON_Delete(doc);
	free(out);
	fake_sys_release(&f);

	/* No token (IMDSv2 refused): no further request. */
	fake_sys_init(&f);
	fake_reply(&f, 403, NULL, "");
	f.run_out = "@@HP@@ DONE\n";
	T_EQ(run_node(&f, &out, argv), HP_EXIT_OK);
	T_EQ(f.nreq, 1);
	free(out);
	fake_sys_release(&f);
}

static void t_probe_results_and_exit_status(void)
{
	struct fake_sys f;
	const char *const fail_on[] = { "node", "--fail-on", "P0", "--no-color", NULL };
	const char *const plain[] = { "node", NULL };
	char *out;

	fake_sys_init(&f);
	fake_setenv(&f, "AWS_EC2_METADATA_DISABLED", "true");
	f.run_out = "@@HP@@ BEGIN df\nFilesystem 1024-blocks Used Available Capacity Mounted on\n"
		    "/dev/x 100 95 5 95% /\n@@HP@@ END df 0\n@@HP@@ DONE\n";
	T_EQ(run_node(&f, &out, fail_on), HP_EXIT_FINDINGS);
	T_CONTAINS(out, "[FAIL] Root volume 95% full on this node");
	T_CONTAINS(out, "HyperPod Node Check");
	free(out);
	T_EQ(run_node(&f, &out, plain), HP_EXIT_OK);
	free(out);

	/* An output cut short still reports, and says so. */
	f.run_out = "@@HP@@ BEGIN df\nFilesystem 1024-blocks Used Available Capacity Mounted on\n";
	T_EQ(run_node(&f, &out, plain), HP_EXIT_OK);
	T_CONTAINS(out, "Probe output from this node ended early");
	free(out);

	f.run_fail = 1;
	T_EQ(run_node(&f, &out, plain), HP_EXIT_FATAL);
	T_EQ(strlen(out), 0);
	T_CONTAINS(last_err, "cannot run the probe");
	free(out);
	fake_sys_release(&f);
}

static void t_print_probe(void)
{
	struct fake_sys f;
	const char *const argv[] = { "node", "--print-probe", NULL };
	char *out;

	fake_sys_init(&f);
	T_EQ(run_node(&f, &out, argv), HP_EXIT_OK);
	T_STREQ(out, hp_probe_script());
	T_ASSERT(f.run_argv0 == NULL);
	free(out);
	fake_sys_release(&f);
}

static void t_usage_errors(void)
{
	static const char *const cases[][5] = {
		{ "node", "--output", "yaml", NULL },
		{ "node", "--fail-on", "P9", NULL },
		{ "node", "--timeout", "0", NULL },
		{ "node", "--timeout", "12x", NULL },
		{ "node", "--orchestrator", "k8s", NULL },
		{ "node", "extra", NULL, NULL },
		{ "node", "--bogus", NULL, NULL },
		{ "node", "--snapshot", "x.json", "--orchestrator", "eks" },
	};
	struct fake_sys f;
	size_t i;
	char *out;

	fake_sys_init(&f);
	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		const char *args[6] = { 0 };

		memcpy(args, cases[i], sizeof(cases[i]));
		T_EQ(run_node(&f, &out, args), HP_EXIT_USAGE);
		T_CONTAINS(last_err, "Run 'hpnode node --help' for usage.");
		T_EQ(strlen(out), 0);
		free(out);
	}
	T_ASSERT(f.run_argv0 == NULL);
	fake_sys_release(&f);
}

static void t_replay_snapshot(void)
{
	struct fake_sys f;
	const char *const argv[] = { "node", "--snapshot", "saved.json", NULL };
	const char *const missing[] = { "node", "--snapshot", "missing.json", NULL };
	char *out;

	fake_sys_init(&f);
	fake_file(&f, "saved.json",
		  "{\"version\":1,\"meta\":{\"orchestrator\":\"Slurm\"},\"probes\":{\"i-0123456789abcdef0\":"
		  "{\"state\":\"probed\",\"stdout\":\"@@HP@@ BEGIN systemd\\nId=munge.service\\n"
		  "LoadState=loaded\\nActiveState=failed\\n@@HP@@ END systemd 0\\n@@HP@@ DONE\\n\"}}}");
	T_EQ(run_node(&f, &out, argv), HP_EXIT_OK);
	T_CONTAINS(out, "[FAIL] munge inactive on node i-0123456789abcdef0");
	T_CONTAINS(out, "Orchestrator: Slurm");
	T_ASSERT(f.run_argv0 == NULL);
	free(out);
	T_EQ(run_node(&f, &out, missing), HP_EXIT_FATAL);
	T_CONTAINS(last_err, "missing.json");
	free(out);
	fake_sys_release(&f);
}

static const char df_full[] =
	"@@HP@@ BEGIN df\nFilesystem 1024-blocks Used Available Capacity Mounted on\n"
	"/dev/x 100 95 5 95% /\n@@HP@@ END df 0\n@@HP@@ DONE\n";

/* The report header of every report command: tool, command line, in text and JSON. */
static void t_report_header(void)
{
	struct fake_sys f;
	const char *const text[] = { "node", "--no-color", NULL };
	const char *const json[] = { "node", "--output", "json", NULL };
	char *out;
	cJSON *doc;

	fake_sys_init(&f);
	fake_setenv(&f, "AWS_EC2_METADATA_DISABLED", "true");
	f.run_out = df_full;
	T_EQ(run_node(&f, &out, text), HP_EXIT_OK);
	T_CONTAINS(out, "HyperPod Node Check");
	T_CONTAINS(out, "\nTool: hpnode " HP_VERSION);
	T_CONTAINS(out, "Started: 2015-08-30T12:36:00Z");
	T_CONTAINS(out, "\nCommand: hpnode node --no-color\n");
	free(out);
	T_EQ(run_node(&f, &out, json), HP_EXIT_OK);
	doc = cJSON_Parse(out);
	T_ASSERT(doc);
	T_STREQ(hp_json_str(doc, "run.command_line"), "hpnode node --output json");
	T_STREQ(hp_json_str(doc, "run.started_at"), "2015-08-30T12:36:00Z");
	T_ASSERT(cJSON_IsNull(hp_json_get(doc, "run.replay")));
	/* Still no cluster and no orchestrator guessed for the footer. */
	T_ASSERT(cJSON_IsNull(hp_json_get(doc, "orchestrator")));
	T_ASSERT(cJSON_IsNull(hp_json_get(doc, "cluster")));
	cJSON_Delete(doc);
	free(out);
	fake_sys_release(&f);
}

/* --text-file, --json-file, --junit-file, --output-file and --quiet, as for triage. */
static void t_output_files(void)
{
	struct fake_sys f;
	const char *const files[] = { "node", "--quiet", "--json-file", "n.json", "--junit-file",
				      "n.xml", "--text-file", "n.txt", "--fail-on", "P0", NULL };
	const char *const output_file[] = { "node", "--output", "junit", "--output-file", "r.xml",
					    "--no-color", NULL };
	char *out;
	cJSON *doc;
	size_t i;

	fake_sys_init(&f);
	fake_setenv(&f, "AWS_EC2_METADATA_DISABLED", "true");
	f.run_out = df_full;
	T_EQ(run_node(&f, &out, files), HP_EXIT_FINDINGS);
	T_STREQ(out, "");
	T_EQ(f.nwrote, 3);
	for (i = 0; i < f.nwrote; i++)
		T_EQ(f.wrote_mode[i], HP_SYS_MODE_DEFAULT);
	T_STREQ(f.wrote[0][0], "n.txt");
	T_CONTAINS(f.wrote[0][1], "[FAIL] Root volume 95% full on this node");
	T_NOT_CONTAINS(f.wrote[0][1], "\x1b[");
	T_STREQ(f.wrote[1][0], "n.json");
	doc = cJSON_Parse(f.wrote[1][1]);
	T_ASSERT(doc);
	T_STREQ(hp_json_str(doc, "schema"), "hpnode.triage/2");
	T_ASSERT(hp_json_get(doc, "run.command_line") != NULL);
	cJSON_Delete(doc);
	T_STREQ(f.wrote[2][0], "n.xml");
	T_CONTAINS(f.wrote[2][1], "<testsuites");
	T_CONTAINS(f.wrote[2][1], "node.disk-root");
	free(out);
	fake_sys_release(&f);

	/* --output junit goes to the file; the terminal shows the text report. */
	fake_sys_init(&f);
	fake_setenv(&f, "AWS_EC2_METADATA_DISABLED", "true");
	f.run_out = df_full;
	T_EQ(run_node(&f, &out, output_file), HP_EXIT_OK);
	T_STREQ(f.written_path, "r.xml");
	T_CONTAINS(f.written, "<testsuites");
	T_CONTAINS(out, "[FAIL] Root volume 95% full on this node");
	free(out);
	fake_sys_release(&f);
}

/* Output paths are checked before the probe runs; a snapshot that cannot be saved still reports. */
static void t_output_failures(void)
{
	struct fake_sys f;
	const char *const unwritable[] = { "node", "--json-file", "/ro/n.json", NULL };
	const char *const same[] = { "node", "--json-file", "x", "--save-snapshot", "x", NULL };
	const char *const save[] = { "node", "--save-snapshot", "s.json", "--no-color", NULL };
	char *out;

	fake_sys_init(&f);
	fake_setenv(&f, "AWS_EC2_METADATA_DISABLED", "true");
	f.run_out = df_full;
	f.unwritable[0] = "/ro/n.json";
	T_EQ(run_node(&f, &out, unwritable), HP_EXIT_USAGE);
	T_CONTAINS(last_err, "hpnode node: cannot write '/ro/n.json': Permission denied; nothing was "
		   "collected");
	T_ASSERT(f.run_argv0 == NULL);
	T_STREQ(out, "");
	free(out);
	T_EQ(run_node(&f, &out, same), HP_EXIT_USAGE);
	T_CONTAINS(last_err, "'x' is named for two outputs");
	free(out);
	f.write_errno = ENOSPC;
	T_EQ(run_node(&f, &out, save), HP_EXIT_FATAL);
	T_CONTAINS(last_err, "cannot write snapshot 's.json': No space left on device");
	T_CONTAINS(out, "[FAIL] Root volume 95% full on this node");
	free(out);
	fake_sys_release(&f);
}

T_MAIN(T(t_imds_names_the_node), T(t_imds_off_or_odd), T(t_probe_results_and_exit_status),
       T(t_print_probe), T(t_usage_errors), T(t_replay_snapshot), T(t_report_header),
       T(t_output_files), T(t_output_failures))
