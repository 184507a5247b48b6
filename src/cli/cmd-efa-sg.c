/*
 * `hpnode efa-sg`: the EFA security group rules (§ A.1) alone, for the
 * groups of a cluster (--cluster) or for groups named by id (--sg-id). Same
 * report, options and exit statuses as triage; no node, event or log data.
 */
#include <string.h>

#include "hp/cmd.h"
#include "hp/cmdutil.h"
#include "hp/collect.h"

#define MAX_SG_IDS 16

struct efa_args {
	const char *cluster;
	const char *sg_ids[MAX_SG_IDS];
	size_t n;
};

static const char usage_text[] =
	"usage: hpnode efa-sg --cluster NAME|ARN [--region R] [options]\n"
	"       hpnode efa-sg --sg-id sg-... [--sg-id sg-...] [--region R] [options]\n"
	"\n"
	"Checks the EFA rules of security groups: all traffic from and to the group\n"
	"itself, and no all-traffic egress to 0.0.0.0/0.\n"
	"\n"
	"  --cluster NAME|ARN     every security group of the cluster and its instance groups\n"
	"  --sg-id sg-...         a security group by id (repeatable; not with --cluster)\n"
	HP_CMD_COMMON_USAGE
	"\n"
	"Exit status: 0 check complete, 1 fatal (credentials, cluster not found),\n"
	"2 usage, 3 findings at or above --fail-on.\n";

enum { O_CLUSTER = 256, O_SG_ID };

static const struct option efa_options[] = {
	{ "cluster", required_argument, NULL, O_CLUSTER },
	{ "sg-id", required_argument, NULL, O_SG_ID },
	{ NULL, 0, NULL, 0 },
};

static const char *const efa_checks[] = {
	"api.identity", "api.vpc", "cluster.vpc-config", "network.efa-sg", NULL
};

static int efa_option(void *ctx, int code, const char *arg)
{
	struct efa_args *t = ctx;

	if (code == O_CLUSTER) {
		t->cluster = arg;
	} else if (code == O_SG_ID) {
		if (!hp_cmd_match("^sg-[a-fA-F0-9]{8,17}$", arg))
			return hp_cmd_usage_error("efa-sg", "--sg-id must be a security group id like "
						  "sg-0123456789abcdef0 (got '%s')", arg);
		if (t->n == MAX_SG_IDS)
			return hp_cmd_usage_error("efa-sg", "at most %d --sg-id options", MAX_SG_IDS);
		t->sg_ids[t->n++] = arg;
	} else {
		return HP_EXIT_USAGE;
	}
	return 0;
}

static int collect(struct hp_aws *a, struct hp_snapshot *s, void *arg, struct hp_error *e)
{
	const struct efa_args *t = arg;
	struct hp_network_opts net = { HP_NET_SG, NULL, 0, NULL };

	if (t->cluster)
		return hp_collect_cluster_network(a, t->cluster, &net, s, e);
	hp_collect_meta(a, s, NULL, NULL);
	if (hp_collect_identity(a, s, e))
		return -1;
	net.sg_ids = t->sg_ids;
	net.n_sg_ids = t->n;
	hp_collect_network(a, &net, s);
	return 0;
}

int cmd_efa_sg(int argc, char **argv, struct hp_sys *sys)
{
	struct efa_args t;
	struct hp_cmd_spec spec = { usage_text, efa_options, efa_option, &t };
	struct hp_cmd_opts o;
	int rc;

	memset(&t, 0, sizeof(t));
	memset(&o, 0, sizeof(o));
	o.name = "efa-sg";
	o.title = "HyperPod EFA Security Group Check — READ-ONLY";
	o.only = efa_checks;
	rc = hp_cmd_parse(&spec, argc, argv, &o);
	if (rc)
		return rc < 0 ? HP_EXIT_OK : rc;
	if (t.cluster && t.n)
		return hp_cmd_usage_error(o.name, "%s", "--cluster and --sg-id are mutually exclusive "
					  "(pick one)");
	if (!t.cluster && !t.n && !o.replay)
		return hp_cmd_usage_error(o.name, "%s", "--cluster or --sg-id is required");
	if (o.replay && (t.cluster || t.n))
		return hp_cmd_usage_error(o.name, "%s", "--snapshot replays saved data: it cannot be "
					  "combined with --cluster or --sg-id");
	if (t.cluster && !hp_cmd_valid_cluster(t.cluster))
		return hp_cmd_usage_error(o.name, "--cluster must be a HyperPod cluster name or ARN "
					  "(got '%s')", t.cluster);
	return hp_cmd_run(&o, sys, collect, &t);
}
