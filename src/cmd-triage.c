/*
 * `hpnode triage`: collect -> snapshot -> checks -> report for one cluster.
 * Also replays a saved snapshot (--snapshot) without touching AWS. The
 * shared options, setup, fatal messages and report live in cmd-common.c.
 */
#include <string.h>

#include "hp/cmd.h"
#include "hp/cmdutil.h"
#include "hp/collect.h"

struct triage_args {
	const char *cluster, *node;
};

static const char usage_text[] =
	"usage: hpnode triage --cluster NAME|ARN [--region R] [options]\n"
	"\n"
	"  --cluster NAME|ARN     HyperPod cluster name or ARN (required)\n"
	"  --node i-...           focus on one node (never switches to another)\n"
	HP_CMD_COMMON_USAGE
	"\n"
	"Exit status: 0 triage complete, 1 fatal (credentials, cluster not found),\n"
	"2 usage, 3 findings at or above --fail-on.\n";

enum { O_CLUSTER = 256, O_NODE };

static const struct option triage_options[] = {
	{ "cluster", required_argument, NULL, O_CLUSTER },
	{ "node", required_argument, NULL, O_NODE },
	{ NULL, 0, NULL, 0 },
};

static int triage_option(void *ctx, int code, const char *arg)
{
	struct triage_args *t = ctx;

	if (code == O_CLUSTER)
		t->cluster = arg;
	else if (code == O_NODE)
		t->node = arg;
	else
		return HP_EXIT_USAGE;
	return 0;
}

static int collect(struct hp_aws *a, struct hp_snapshot *s, void *arg, struct hp_error *e)
{
	const struct triage_args *t = arg;
	struct hp_collect_opts co;

	memset(&co, 0, sizeof(co));
	co.cluster = t->cluster;
	co.node = t->node;
	return hp_collect_cluster(a, &co, s, e);
}

int cmd_triage(int argc, char **argv, struct hp_sys *sys)
{
	struct triage_args t = { NULL, NULL };
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
	return hp_cmd_run(&o, sys, collect, &t);
}
