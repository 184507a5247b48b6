/*
 * `hpnode efa-sg` and `hpnode vpc`: the network part of a triage alone, so
 * an operator can re-run the part they are fixing. efa-sg judges the EFA
 * security group rules (§ A.1) of a cluster's groups (--cluster) or of
 * groups named by id (--sg-id); vpc the cluster's VPC (§ B.1-B.6, § C.1):
 * one VPC, DNS, routes, endpoints, EKS alignment, free addresses,
 * interface headroom and zone offerings. Both collect through
 * hp_collect_cluster_network and differ only in their options, the facts
 * they read and the checks they run; the frame does the rest.
 */
#include <string.h>

#include "hp/cmd.h"
#include "hp/collect.h"

#define MAX_SG_IDS 16

struct network_args {
	unsigned parts;              /* HP_NET_* */
	const char *cluster;         /* efa-sg --cluster (vpc's is ctx->cluster) */
	const char *sg_ids[MAX_SG_IDS];
	size_t n_sg_ids;
	const char *eks_name;        /* vpc --eks-name */
};

enum { O_CLUSTER = 256, O_SG_ID, O_EKS_NAME };

/* The cluster's network facts, or (efa-sg --sg-id) the named groups alone. */
static int collect(struct hp_cmd_ctx *c, struct hp_snapshot *s, struct hp_error *e)
{
	const struct network_args *t = c->args;
	const char *cluster = c->cluster ? c->cluster : t->cluster;
	struct hp_network_opts net = { t->parts, t->sg_ids, t->n_sg_ids, t->eks_name };

	if (cluster)
		return hp_collect_cluster_network(c->aws, cluster, &net, s, e);
	hp_collect_meta(c->aws, s, NULL, NULL);
	if (hp_collect_identity(c->aws, s, e))
		return -1;
	hp_collect_network(c->aws, &net, s);
	return 0;
}

static const char network_exit_text[] =
	"\n"
	"Exit status: 0 check complete, 1 fatal (credentials, cluster not found),\n"
	"2 usage, 3 findings at or above --fail-on.\n";

/* ---- efa-sg ---- */

static const struct hp_opt efa_options[] = {
	{ "cluster", required_argument, O_CLUSTER,
	  "  --cluster NAME|ARN     every security group of the cluster and its instance groups\n" },
	{ "sg-id", required_argument, O_SG_ID,
	  "  --sg-id sg-...         a security group by id (repeatable; not with --cluster)\n" },
	{ NULL, 0, 0, NULL },
};

static const char *const efa_checks[] = {
	"api.identity", "api.vpc", "cluster.vpc-config", "network.efa-sg", NULL
};

static void efa_init(struct hp_cmd_ctx *c)
{
	struct network_args *t = c->args;

	t->parts = HP_NET_SG;
}

static int efa_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct network_args *t = c->args;

	if (code == O_CLUSTER) {
		t->cluster = arg;
	} else if (code == O_SG_ID) {
		if (!hp_cmd_match("^sg-[a-fA-F0-9]{8,17}$", arg))
			return hp_cmd_usage_error(c->cmd->name, "--sg-id must be a security group id "
						  "like sg-0123456789abcdef0 (got '%s')", arg);
		if (t->n_sg_ids == MAX_SG_IDS)
			return hp_cmd_usage_error(c->cmd->name, "at most %d --sg-id options", MAX_SG_IDS);
		t->sg_ids[t->n_sg_ids++] = arg;
	} else {
		return HP_EXIT_USAGE;
	}
	return 0;
}

static int efa_check(struct hp_cmd_ctx *c)
{
	const struct network_args *t = c->args;
	const char *name = c->cmd->name;

	if (t->cluster && t->n_sg_ids)
		return hp_cmd_usage_error(name, "%s", "--cluster and --sg-id are mutually exclusive "
					  "(pick one)");
	if (!t->cluster && !t->n_sg_ids && !c->o.replay)
		return hp_cmd_usage_error(name, "%s", "--cluster or --sg-id is required");
	if (c->o.replay && (t->cluster || t->n_sg_ids))
		return hp_cmd_usage_error(name, "%s", "--snapshot replays saved data: it cannot be "
					  "combined with --cluster or --sg-id");
	if (t->cluster && !hp_cmd_valid_cluster(t->cluster))
		return hp_cmd_usage_error(name, "--cluster must be a HyperPod cluster name or ARN "
					  "(got '%s')", t->cluster);
	return 0;
}

const struct hp_cmd_ops hp_cmd_efa_sg = {
	.usage = "usage: hpnode efa-sg --cluster NAME|ARN [--region R] [options]\n"
		 "       hpnode efa-sg --sg-id sg-... [--sg-id sg-...] [--region R] [options]\n"
		 "\n"
		 "Checks the EFA rules of security groups: all traffic from and to the group\n"
		 "itself, and no all-traffic egress to 0.0.0.0/0.\n"
		 "\n",
	.exit_text = network_exit_text,
	.options = efa_options,
	.args_size = sizeof(struct network_args),
	.init = efa_init,
	.option = efa_option,
	.check = efa_check,
	.collect = collect,
	.title = "HyperPod EFA Security Group Check — READ-ONLY",
	.checks = efa_checks,
};

/* ---- vpc ---- */

static const struct hp_opt vpc_options[] = {
	{ "eks-name", required_argument, O_EKS_NAME,
	  "  --eks-name N           EKS cluster to compare (default: the cluster's orchestrator)\n" },
	{ NULL, 0, 0, NULL },
};

static const char *const vpc_checks[] = {
	"api.identity", "api.vpc", "api.eks", "cluster.vpc-config", "network.vpc", "network.dns",
	"network.routing", "network.endpoints", "network.eks", "network.subnet-ips", "network.eni",
	"network.capacity", NULL
};

static void vpc_init(struct hp_cmd_ctx *c)
{
	struct network_args *t = c->args;

	t->parts = HP_NET_ALL;
}

static int vpc_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct network_args *t = c->args;

	if (code != O_EKS_NAME)
		return HP_EXIT_USAGE;
	if (!hp_cmd_match("^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$", arg))
		return hp_cmd_usage_error(c->cmd->name, "--eks-name must be an EKS cluster name "
					  "(got '%s')", arg);
	t->eks_name = arg;
	return 0;
}

static int vpc_check(struct hp_cmd_ctx *c)
{
	const struct network_args *t = c->args;

	if (c->o.replay && (c->cluster || t->eks_name))
		return hp_cmd_usage_error(c->cmd->name, "%s", "--snapshot replays saved data: it "
					  "cannot be combined with --cluster or --eks-name");
	return 0;
}

const struct hp_cmd_ops hp_cmd_vpc = {
	.usage = "usage: hpnode vpc --cluster NAME|ARN [--eks-name N] [--region R] [options]\n"
		 "\n"
		 "Checks the cluster's VPC: subnets and security groups in one VPC, DNS\n"
		 "attributes, default routes, VPC endpoints, EKS alignment, free IP addresses,\n"
		 "network interface quota and instance type offerings by zone.\n"
		 "\n",
	.exit_text = network_exit_text,
	.options = vpc_options,
	.args_size = sizeof(struct network_args),
	.init = vpc_init,
	.option = vpc_option,
	.check = vpc_check,
	.collect = collect,
	.title = "HyperPod VPC Configuration Check — READ-ONLY",
	.checks = vpc_checks,
};
