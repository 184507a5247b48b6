/*
 * `hpnode vpc`: the VPC checks alone (§ B.1-B.6, § C.1) for one cluster:
 * one VPC, DNS, routes, endpoints, EKS alignment, free addresses, interface
 * headroom and zone offerings. Same report, options and exit statuses as
 * triage; the security group rules are `hpnode efa-sg`.
 */
#include <string.h>

#include "hp/cmd.h"
#include "hp/cmdutil.h"
#include "hp/collect.h"

struct vpc_args {
	const char *cluster, *eks_name;
};

static const char usage_text[] =
	"usage: hpnode vpc --cluster NAME|ARN [--eks-name N] [--region R] [options]\n"
	"\n"
	"Checks the cluster's VPC: subnets and security groups in one VPC, DNS\n"
	"attributes, default routes, VPC endpoints, EKS alignment, free IP addresses,\n"
	"network interface quota and instance type offerings by zone.\n"
	"\n"
	"  --cluster NAME|ARN     HyperPod cluster name or ARN (required)\n"
	"  --eks-name N           EKS cluster to compare (default: the cluster's orchestrator)\n"
	HP_CMD_COMMON_USAGE
	"\n"
	"Exit status: 0 check complete, 1 fatal (credentials, cluster not found),\n"
	"2 usage, 3 findings at or above --fail-on.\n";

enum { O_CLUSTER = 256, O_EKS_NAME };

static const struct option vpc_options[] = {
	{ "cluster", required_argument, NULL, O_CLUSTER },
	{ "eks-name", required_argument, NULL, O_EKS_NAME },
	{ NULL, 0, NULL, 0 },
};

static const char *const vpc_checks[] = {
	"api.identity", "api.vpc", "api.eks", "cluster.vpc-config", "network.vpc", "network.dns",
	"network.routing", "network.endpoints", "network.eks", "network.subnet-ips", "network.eni",
	"network.capacity", NULL
};

static int vpc_option(void *ctx, int code, const char *arg)
{
	struct vpc_args *t = ctx;

	if (code == O_CLUSTER) {
		t->cluster = arg;
	} else if (code == O_EKS_NAME) {
		if (!hp_cmd_match("^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$", arg))
			return hp_cmd_usage_error("vpc", "--eks-name must be an EKS cluster name (got '%s')",
						  arg);
		t->eks_name = arg;
	} else {
		return HP_EXIT_USAGE;
	}
	return 0;
}

static int collect(struct hp_aws *a, struct hp_snapshot *s, void *arg, struct hp_error *e)
{
	const struct vpc_args *t = arg;
	struct hp_network_opts net = { HP_NET_ALL, NULL, 0, t->eks_name };

	return hp_collect_cluster_network(a, t->cluster, &net, s, e);
}

int cmd_vpc(int argc, char **argv, struct hp_sys *sys)
{
	struct vpc_args t = { NULL, NULL };
	struct hp_cmd_spec spec = { usage_text, vpc_options, vpc_option, &t };
	struct hp_cmd_opts o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.name = "vpc";
	o.title = "HyperPod VPC Configuration Check — READ-ONLY";
	o.only = vpc_checks;
	rc = hp_cmd_parse(&spec, argc, argv, &o);
	if (rc)
		return rc < 0 ? HP_EXIT_OK : rc;
	if (!t.cluster && !o.replay)
		return hp_cmd_usage_error(o.name, "%s", "--cluster is required");
	if (o.replay && (t.cluster || t.eks_name))
		return hp_cmd_usage_error(o.name, "%s", "--snapshot replays saved data: it cannot be "
					  "combined with --cluster or --eks-name");
	if (t.cluster && !hp_cmd_valid_cluster(t.cluster))
		return hp_cmd_usage_error(o.name, "--cluster must be a HyperPod cluster name or ARN "
					  "(got '%s')", t.cluster);
	return hp_cmd_run(&o, sys, collect, &t);
}
