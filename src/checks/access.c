/*
 * Where the cluster lives and how to reach its nodes: the VpcConfig the
 * cluster and its instance groups declare (the network checks read these
 * ids), and the SSM targets of the Running nodes. Neither judges the
 * network itself; that is the network checks' job.
 */
#include <stdio.h>
#include <string.h>

#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"

/* "a, b, c" from a JSON array of strings. */
static void join_ids(const cJSON *arr, struct hp_buf *out)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, arr) {
		if (!cJSON_IsString(v))
			continue;
		if (out->len)
			hp_buf_puts(out, ", ");
		hp_buf_puts(out, v->valuestring);
	}
	if (!out->len)
		hp_buf_puts(out, "none");
}

static void describe_vpc(struct hp_emit *em, const cJSON *vpc, const char *who)
{
	struct hp_buf sgs = HP_BUF_INIT(HP_MAX_LINE), subnets = HP_BUF_INIT(HP_MAX_LINE);

	join_ids(hp_json_arr(vpc, "SecurityGroupIds"), &sgs);
	join_ids(hp_json_arr(vpc, "Subnets"), &subnets);
	HP_CHECK_INFO(em, "%s: security groups %s; subnets %s", who, sgs.buf, subnets.buf);
	hp_buf_release(&sgs);
	hp_buf_release(&subnets);
}

static void run_vpc_config(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *cluster = hp_snapshot_get(snap, "cluster"), *vpc;
	struct hp_vpc_walk w;
	int any = 0;

	if (!cluster)
		return;
	for (vpc = hp_vpc_first(&w, cluster); vpc; vpc = hp_vpc_next(&w)) {
		char who[256];

		if (!w.group) {
			/* The cluster's own, when it names anything. */
			if (!hp_json_len(vpc, "Subnets") && !hp_json_len(vpc, "SecurityGroupIds"))
				continue;
			hp_strlcpy(who, "Cluster VpcConfig", sizeof(who));
		} else {
			snprintf(who, sizeof(who), "Instance group '%s' OverrideVpcConfig",
				 hp_check_str(w.group, "InstanceGroupName", "?"));
		}
		describe_vpc(em, vpc, who);
		any = 1;
	}
	if (!any)
		hp_emit(em, HP_TAG_WARN,
			"No VpcConfig on the cluster or its instance groups — the cluster may not use a "
			"customer VPC; EFA and private-subnet setups need one");
}

static void run_ssm_targets(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nodes = hp_json_arr(snap->root, "nodes"), *n;
	const char *only = hp_json_str(hp_snapshot_get(snap, "meta"), "node_filter");
	struct hp_finding *f = NULL;
	char id[64], target[512];
	int total = 0, shown = 0;

	hp_snap_cluster_id(snap, id);
	if (!nodes || !id[0])
		return;
	cJSON_ArrayForEach(n, nodes) {
		const char *iid = hp_json_str(n, "InstanceId"), *grp = hp_json_str(n, "InstanceGroupName");

		if (!hp_snap_node_running(n) || !iid || !grp || (only && strcmp(only, iid)))
			continue;
		total++;
		if (shown >= 3)
			continue;
		if (!f)
			f = HP_CHECK_INFO(em, "SSM targets of Running nodes (start-session with document "
					  "AWS-StartNonInteractiveCommand), for example:");
		snprintf(target, sizeof(target), "sagemaker-cluster:%s_%s-%s", id, grp, iid);
		hp_finding_evidence(f, target);
		shown++;
	}
	if (total)
		HP_CHECK_INFO(em, "%d Running node%s reachable by SSM target (cluster id %s)", total,
			      total == 1 ? "" : "s", id);
	else if (!only)
		hp_emit(em, HP_TAG_WARN,
			"No Running nodes — SSM sessions to nodes are not possible until nodes are healthy");
}

HP_CHECK(cluster_vpc_config, HP_GROUP_VPC, 20,
	 .id = "cluster.vpc-config", .section = "B", .prio = HP_P2, .run = run_vpc_config);
HP_CHECK(ssm_targets, HP_GROUP_SSM, 20,
	 .id = "ssm.targets", .section = "K", .prio = HP_P1, .run = run_ssm_targets);
