/*
 * `hpnode triage`: collect -> snapshot -> checks -> report for one cluster.
 * Also replays a saved snapshot (--snapshot) without touching AWS. The
 * shared options, setup, fatal messages and report live in cmd-common.c.
 */
#include <string.h>

#include "hp/cmd.h"
#include "hp/cmdutil.h"
#include "hp/collect.h"
#include "hp/kube.h"

struct triage_args {
	const char *cluster, *node;
	const char *kubeconfig, *kube_context, *profile;
	int no_kube;
};

static const char usage_text[] =
	"usage: hpnode triage --cluster NAME|ARN [--region R] [options]\n"
	"\n"
	"  --cluster NAME|ARN     HyperPod cluster name or ARN (required)\n"
	"  --node i-...           focus on one node (never switches to another)\n"
	"  --kubeconfig FILE      kubeconfig for the EKS checks (default: kubectl's own)\n"
	"  --context NAME         kubeconfig context for the EKS checks\n"
	"  --no-kube              skip the Kubernetes checks (reported as skipped)\n"
	HP_CMD_COMMON_USAGE
	"\n"
	"Exit status: 0 triage complete, 1 fatal (credentials, cluster not found),\n"
	"2 usage, 3 findings at or above --fail-on.\n";

enum { O_CLUSTER = 256, O_NODE, O_KUBECONFIG, O_KUBE_CONTEXT, O_NO_KUBE };

static const struct option triage_options[] = {
	{ "cluster", required_argument, NULL, O_CLUSTER },
	{ "node", required_argument, NULL, O_NODE },
	{ "kubeconfig", required_argument, NULL, O_KUBECONFIG },
	{ "context", required_argument, NULL, O_KUBE_CONTEXT },
	{ "no-kube", no_argument, NULL, O_NO_KUBE },
	{ NULL, 0, NULL, 0 },
};

static int triage_option(void *ctx, int code, const char *arg)
{
	struct triage_args *t = ctx;

	if (code == O_CLUSTER)
		t->cluster = arg;
	else if (code == O_NODE)
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

static int collect(struct hp_aws *a, struct hp_snapshot *s, void *arg, struct hp_error *e)
{
	const struct triage_args *t = arg;
	struct hp_collect_opts co;
	struct hp_kube_opts ko;

	memset(&co, 0, sizeof(co));
	co.cluster = t->cluster;
	co.node = t->node;
	if (hp_collect_cluster(a, &co, s, e))
		return -1;
	memset(&ko, 0, sizeof(ko));
	ko.kubeconfig = t->kubeconfig;
	ko.context = t->kube_context;
	ko.aws_profile = t->profile;
	ko.disabled = t->no_kube;
	hp_collect_kube(a, &ko, s);
	/* The controller probe's entry comes from the SSM driver; none yet. */
	hp_collect_slurm(s, NULL);
	return 0;
}

int cmd_triage(int argc, char **argv, struct hp_sys *sys)
{
	struct triage_args t = { NULL, NULL, NULL, NULL, NULL, 0 };
	struct hp_cmd_spec spec = { usage_text, triage_options, triage_option, &t };
	struct hp_cmd_opts o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.name = "triage";
	rc = hp_cmd_parse(&spec, argc, argv, &o);
	if (rc)
		return rc < 0 ? HP_EXIT_OK : rc;
	if (!t.cluster && !o.replay)
		return hp_cmd_usage_error(o.name, "%s", "--cluster is required");
	if (t.cluster && !hp_cmd_valid_cluster(t.cluster))
		return hp_cmd_usage_error(o.name, "--cluster must be a HyperPod cluster name or ARN (got '%s')",
					  t.cluster);
	if (t.node && !hp_cmd_match("^i-[0-9a-f]{8,17}$", t.node))
		return hp_cmd_usage_error(o.name, "--node must be an EC2 instance id like "
					  "i-0123456789abcdef0 (got '%s')", t.node);
	if (o.replay && (t.kubeconfig || t.kube_context))
		return hp_cmd_usage_error(o.name, "%s", "--snapshot replays saved data: it cannot be "
					  "combined with --kubeconfig or --context");
	t.profile = o.profile;
	return hp_cmd_run(&o, sys, collect, &t);
}
