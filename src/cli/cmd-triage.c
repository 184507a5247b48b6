/*
 * `hpnode triage`: everything hpnode collects about one cluster (AWS APIs,
 * Kubernetes, the nodes over SSM, the Slurm controller), then every check.
 * What is particular to it: its options and the order of the collectors.
 * The frame (include/hp/cmd.h) does the rest, --snapshot replay included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hp/cmd.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/kube.h"
#include "hp/ssm.h"

struct triage_args {
	const char *node;
	const char *kubeconfig, *kube_context;
	int no_kube, no_probe;
	struct hp_probe_opts probe;
};

enum { O_NODE = 256, O_KUBECONFIG, O_KUBE_CONTEXT, O_NO_KUBE, O_NO_PROBE, O_SAMPLE,
       O_CONCURRENCY, O_SSM_RATE, O_PROBE_TIMEOUT, O_SSM_TRANSPORT };

static const struct hp_opt triage_options[] = {
	{ "node", required_argument, O_NODE,
	  "  --node i-...           focus on one node (never switches to another)\n" },
	{ "kubeconfig", required_argument, O_KUBECONFIG,
	  "  --kubeconfig FILE      kubeconfig for the EKS checks (default: kubectl's own)\n" },
	{ "context", required_argument, O_KUBE_CONTEXT,
	  "  --context NAME         kubeconfig context for the EKS checks\n" },
	{ "no-kube", no_argument, O_NO_KUBE,
	  "  --no-kube              skip the Kubernetes checks (reported as skipped)\n" },
	{ "no-probe", no_argument, O_NO_PROBE,
	  "  --no-probe             do not open SSM sessions to the nodes\n" },
	{ "sample", required_argument, O_SAMPLE,
	  "  --sample N             probe N Running nodes spread over the groups (default all)\n" },
	{ "concurrency", required_argument, O_CONCURRENCY,
	  "  --concurrency N        SSM sessions at once (default 16, at most 256)\n" },
	{ "ssm-rate", required_argument, O_SSM_RATE,
	  "  --ssm-rate R           StartSession calls per second (default 3)\n" },
	{ "probe-timeout", required_argument, O_PROBE_TIMEOUT,
	  "  --probe-timeout S      seconds per node, session included (default 180)\n" },
	{ "ssm-transport", required_argument, O_SSM_TRANSPORT,
	  "  --ssm-transport T      native (default), plugin (session-manager-plugin),\n"
	  "                         or auto (native, the plugin for KMS-encrypted sessions)\n" },
	{ NULL, 0, 0, NULL },
};

/* A number within [lo, hi] with nothing after it (whole when whole is set). */
static int number(const char *s, double lo, double hi, int whole, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo && v <= hi) || (whole && v != (double)(long)v))
		return -1;
	*out = v;
	return 0;
}

static int probe_option(struct triage_args *t, int code, const char *arg)
{
	double v;

	switch (code) {
	case O_NO_PROBE:
		t->no_probe = 1;
		return 0;
	case O_SAMPLE:
		if (number(arg, 1, 1000000, 1, &v))
			return hp_cmd_usage_error("triage", "--sample must be a whole number from 1 to "
						  "1000000 (got '%s')", arg);
		t->probe.sample = (int)v;
		return 0;
	case O_CONCURRENCY:
		if (number(arg, 1, 256, 1, &v))
			return hp_cmd_usage_error("triage", "--concurrency must be a whole number from 1 "
						  "to 256 (got '%s')", arg);
		t->probe.concurrency = (int)v;
		return 0;
	case O_SSM_RATE:
		if (number(arg, 0.1, 1000, 0, &v))
			return hp_cmd_usage_error("triage", "--ssm-rate must be a number from 0.1 to "
						  "1000 (got '%s')", arg);
		t->probe.rate_per_s = v;
		return 0;
	case O_PROBE_TIMEOUT:
		if (number(arg, 1, 3600, 1, &v))
			return hp_cmd_usage_error("triage", "--probe-timeout must be whole seconds from "
						  "1 to 3600 (got '%s')", arg);
		t->probe.timeout_ms = (long)v * 1000;
		return 0;
	case O_SSM_TRANSPORT:
		if (!strcmp(arg, "native"))
			t->probe.transport = HP_SSM_NATIVE;
		else if (!strcmp(arg, "plugin"))
			t->probe.transport = HP_SSM_PLUGIN;
		else if (!strcmp(arg, "auto"))
			t->probe.transport = HP_SSM_AUTO;
		else
			return hp_cmd_usage_error("triage", "--ssm-transport must be native, plugin or "
						  "auto (got '%s')", arg);
		return 0;
	}
	return HP_EXIT_USAGE;
}

static int triage_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct triage_args *t = c->args;

	if (code >= O_NO_PROBE)
		return probe_option(t, code, arg);
	if (code == O_NODE)
		t->node = arg;
	else if (code == O_KUBECONFIG)
		t->kubeconfig = arg;
	else if (code == O_KUBE_CONTEXT)
		t->kube_context = arg;
	else if (code == O_NO_KUBE)
		t->no_kube = 1;
	else
		return HP_EXIT_USAGE;
	return 0;
}

#define PROGRESS_WIDTH 72

/*
 * "SSM probes: 37/100 done, 2 unreachable, 0 not probed" redrawn in place
 * on a terminal with a carriage return (plain text, no escape sequences).
 */
static void progress(void *ud, const struct hp_ssm_progress *p)
{
	int *shown = ud;

	fprintf(stderr, "\r%-*.*s", PROGRESS_WIDTH, PROGRESS_WIDTH, "");
	fprintf(stderr, "\rSSM probes: %zu/%zu done, %zu unreachable, %zu not probed", p->done,
		p->total, p->unreachable, p->skipped);
	fflush(stderr);
	*shown = 1;
}

/* "Reading ListClusterNodes: page 3 (300 so far)" redrawn in place, API phase, terminal only. */
static void api_progress(void *ud, const char *action, int page, size_t items)
{
	int *shown = ud;

	fprintf(stderr, "\r%-*.*s", PROGRESS_WIDTH, PROGRESS_WIDTH, "");
	fprintf(stderr, "\rReading %.30s: page %d (%zu so far)", action, page, items);
	fflush(stderr);
	*shown = 1;
}

static void probe_nodes(struct hp_aws *a, struct triage_args *t, struct hp_snapshot *s)
{
	int shown = 0;

	if (t->no_probe) {
		cJSON *meta = cJSON_CreateObject();
		cJSON_AddStringToObject(meta, "note", "--no-probe was given");
		cJSON_AddNumberToObject(meta, "requested", 0);
		hp_snapshot_set(s, "probes_meta", meta);
		return;
	}
	t->probe.node = t->node;
	/* No node waits past the run budget; past it StartSession is not sent at all. */
	if (hp_aws_budget_left_ms(a) < t->probe.timeout_ms)
		t->probe.timeout_ms = hp_aws_budget_left_ms(a) > 1000 ? (long)hp_aws_budget_left_ms(a) : 1000;
	/* From here Ctrl-C ends the sweep early and still prints the (partial) report. */
	hp_cmd_catch_signals();
	t->probe.stop = hp_cmd_stop_flag();
	if (isatty(2)) {
		t->probe.progress = progress;
		t->probe.progress_ud = &shown;
	}
	hp_collect_probes(a, &t->probe, s);
	if (shown)
		fprintf(stderr, "\r%-*s\r", PROGRESS_WIDTH, "");
}

static int collect(struct hp_cmd_ctx *c, struct hp_snapshot *s, struct hp_error *e)
{
	struct triage_args *t = c->args;
	struct hp_aws *a = c->aws;
	struct hp_collect_opts co;
	struct hp_kube_opts ko;
	int shown = 0, rc;

	memset(&co, 0, sizeof(co));
	co.cluster = c->cluster;
	co.node = t->node;
	if (isatty(2))
		hp_collect_set_progress(api_progress, &shown);
	rc = hp_collect_cluster(a, &co, s, e);
	hp_collect_set_progress(NULL, NULL);
	if (shown)
		fprintf(stderr, "\r%-*s\r", PROGRESS_WIDTH, "");
	if (rc)
		return -1;
	memset(&ko, 0, sizeof(ko));
	ko.kubeconfig = t->kubeconfig;
	ko.context = t->kube_context;
	ko.aws_profile = c->o.profile;
	ko.disabled = t->no_kube;
	hp_collect_kube(a, &ko, s);
	/* The API phase's replies are parsed: their text and buffers go back before the sweep. */
	hp_heap_trim();
	probe_nodes(a, t, s);
	hp_heap_trim();
	hp_collect_slurm_controller(a, &t->probe, !t->no_probe, s);
	return 0;
}

static void triage_init(struct hp_cmd_ctx *c)
{
	struct triage_args *t = c->args;

	hp_probe_opts_defaults(&t->probe);
}

static int triage_check(struct hp_cmd_ctx *c)
{
	const struct triage_args *t = c->args;
	const char *name = c->cmd->name;

	if (t->node && !hp_cmd_match("^i-[0-9a-f]{8,17}$", t->node))
		return hp_cmd_usage_error(name, "--node must be an EC2 instance id like "
					  "i-0123456789abcdef0 (got '%s')", t->node);
	if (t->node && t->probe.sample)
		return hp_cmd_usage_error(name, "%s", "--sample and --node cannot be combined");
	if (c->o.replay && (t->probe.sample || t->no_probe))
		return hp_cmd_usage_error(name, "%s", "--snapshot replays saved data: probe options "
					  "do not apply");
	if (c->o.replay && (t->kubeconfig || t->kube_context))
		return hp_cmd_usage_error(name, "%s", "--snapshot replays saved data: it cannot be "
					  "combined with --kubeconfig or --context");
	return 0;
}

const struct hp_cmd_ops hp_cmd_triage = {
	.usage = "usage: hpnode triage --cluster NAME|ARN [--region R] [options]\n"
		 "\n",
	.exit_text = "\n"
		     "Exit status: 0 triage complete, 1 fatal (AWS error, cluster not found),\n"
		     "2 usage or configuration (also an output path that cannot be written),\n"
		     "3 findings at or above --fail-on, 4 credentials, 130/143 interrupted\n"
		     "(SIGINT/SIGTERM during the SSM sweep: the partial report is printed).\n",
	.options = triage_options,
	.args_size = sizeof(struct triage_args),
	.init = triage_init,
	.option = triage_option,
	.check = triage_check,
	.collect = collect,
};
