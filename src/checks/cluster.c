/*
 * Cluster-level checks over the DescribeCluster reply: identity lines,
 * ClusterStatus, NodeRecovery, instance-group sizes and ThreadsPerCore.
 * Node-by-node state is in nodes.c; VPC and EKS facts are elsewhere.
 */
#include <stdio.h>
#include <string.h>

#include "hp/json.h"
#include "checks.h"

static const cJSON *cluster_of(const struct hp_snapshot *snap)
{
	const cJSON *c = hp_json_get(snap->root, "cluster");

	return cJSON_IsObject(c) ? c : NULL;
}

static void run_identity(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *ident = hp_json_get(snap->root, "identity");
	const cJSON *c = cluster_of(snap);
	char id[64];

	if (cJSON_IsObject(ident))
		HP_CHECK_INFO(em, "Caller: %s (account %s)",
			hp_check_str(ident, "Arn", "unknown ARN"),
			hp_check_str(ident, "Account", "unknown"));
	if (!c)
		return;
	HP_CHECK_INFO(em, "Cluster: %s", hp_check_str(c, "ClusterName", "(name missing)"));
	HP_CHECK_INFO(em, "ARN: %s", hp_check_str(c, "ClusterArn", "(missing)"));
	HP_CHECK_INFO(em, "Status: %s", hp_check_str(c, "ClusterStatus", "(missing)"));
	if (hp_json_get(c, "Orchestrator.Eks"))
		HP_CHECK_INFO(em, "Orchestrator: EKS (%s)",
			hp_check_str(c, "Orchestrator.Eks.ClusterArn", "EKS cluster ARN missing"));
	else
		HP_CHECK_INFO(em, "Orchestrator: Slurm");
	HP_CHECK_INFO(em, "NodeRecovery: %s", hp_check_str(c, "NodeRecovery", "(absent)"));
	hp_snap_cluster_id(snap, id);
	if (*id)
		HP_CHECK_INFO(em, "Cluster id: %s", id);
	else
		HP_CHECK_INFO(em, "Cluster id: unknown (ClusterArn missing or malformed)");
	HP_CHECK_INFO(em, "NodeProvisioningMode: %s",
		hp_check_str(c, "NodeProvisioningMode", "legacy (not Continuous)"));
}

static void run_status(const struct hp_snapshot *snap, struct hp_emit *em)
{
	static const char *const changing[] = { "Creating", "Updating", "SystemUpdating",
						"Deleting" };
	const cJSON *c = cluster_of(snap);
	const char *st;
	char clip[HP_CHECK_CLIP_SIZE];
	size_t i;

	st = c ? hp_json_str(c, "ClusterStatus") : NULL;
	if (!st)
		return;
	if (!strcmp(st, "InService")) {
		hp_emit(em, HP_TAG_PASS, "Cluster status is InService");
		return;
	}
	if (!strcmp(st, "Failed") || !strcmp(st, "RollingBack")) {
		struct hp_finding *f = hp_emitx(em, HP_TAG_FAIL, HP_P0, NULL, NULL,
						"Cluster status is %s", st);
		const char *why = hp_json_str(c, "FailureMessage");

		hp_finding_evidence(f, why && *why ? hp_check_clip(why, clip)
					: "no FailureMessage in DescribeCluster");
		return;
	}
	for (i = 0; i < HP_ARRAY_LEN(changing); i++) {
		if (!strcmp(st, changing[i])) {
			hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL,
				 "Cluster is %s; node and event data may be changing", st);
			return;
		}
	}
	hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL, "Cluster status '%s' is not a known status",
		 hp_check_clip(st, clip));
}

static void run_node_recovery(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *c = cluster_of(snap);
	const char *v;
	char clip[HP_CHECK_CLIP_SIZE];

	if (!c)
		return;
	v = hp_json_str(c, "NodeRecovery");
	if (v && !strcmp(v, "Automatic")) {
		hp_emit(em, HP_TAG_PASS, "NodeRecovery is Automatic");
		return;
	}
	hp_emit(em, HP_TAG_WARN,
		"NodeRecovery is '%s' \xE2\x80\x94 automatic node replacement is off; hardware "
		"failures need manual reboot/replace",
		v && *v ? hp_check_clip(v, clip) : "absent");
}

/* Names the instance group for `triage --suggest` when DescribeCluster gave its name. */
static void group_var(struct hp_finding *f, const cJSON *g)
{
	const char *name = hp_json_str(g, "InstanceGroupName");

	if (name && *name)
		hp_finding_var(f, "GROUP", name);
}

/* How many groups the PASS line names before it only counts. */
#define GROUPS_NAMED 20

static void run_instance_groups(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *c = cluster_of(snap);
	const cJSON *groups = c ? hp_json_arr(c, "InstanceGroups") : NULL;
	const cJSON *g;
	struct hp_buf ok = HP_BUF_INIT(HP_MAX_LINE);
	int nok = 0;

	if (!groups)
		return;
	if (!cJSON_GetArraySize(groups)) {
		HP_CHECK_INFO(em, "DescribeCluster lists no instance groups");
		return;
	}
	cJSON_ArrayForEach(g, groups) {
		const char *name = hp_check_str(g, "InstanceGroupName", "?");
		const char *type = hp_check_str(g, "InstanceType", "unknown type");
		const char *st = hp_json_str(g, "Status");
		double cur = hp_json_num(g, "CurrentCount", -1);
		double target = hp_json_num(g, "TargetCount", -1);
		struct hp_finding *f;
		int bad = 0;

		if (st && (!strcmp(st, "Failed") || !strcmp(st, "Degraded"))) {
			f = hp_emit(em, HP_TAG_FAIL, "Instance group '%s' status is %s (%s)", name, st,
				    type);
			group_var(f, g);
			bad = 1;
		}
		if (cur < 0 || target < 0) {
			HP_CHECK_INFO(em,
				"Instance group '%s' reports no CurrentCount/TargetCount; size not judged",
				name);
			continue;
		}
		if (cur < target) {
			f = hp_emit(em, HP_TAG_FAIL, "Instance group '%s' has %.0f of %.0f nodes (%s)",
				    name, cur, target, type);
			group_var(f, g);
			continue;
		}
		if (cur > target) {
			HP_CHECK_INFO(em,
				"Instance group '%s' has %.0f nodes, above its target of %.0f (scaling down?)",
				name, cur, target);
			continue;
		}
		if (bad)
			continue;
		/* The PASS line names the first groups and counts the rest. */
		if (nok < GROUPS_NAMED)
			hp_buf_printf(&ok, "%s%.64s (%.0f)", nok ? ", " : "", name, cur);
		nok++;
	}
	if (nok > GROUPS_NAMED)
		hp_buf_printf(&ok, " and %d more", nok - GROUPS_NAMED);
	if (nok)
		hp_emit(em, HP_TAG_PASS, "%d instance group%s at target size: %s", nok,
			nok == 1 ? "" : "s", ok.buf);
	hp_buf_release(&ok);
}

/* ThreadsPerCore of one (group, instance type) pair against EC2's default. */
static void judge_tpc(struct hp_emit *em, const cJSON *types, const cJSON *g,
		      const char *mltype, double tpc)
{
	const char *ec2 = hp_starts_with(mltype, "ml.") ? mltype + 3 : mltype;
	const char *group = hp_check_str(g, "InstanceGroupName", "?");
	const cJSON *info;
	struct hp_finding *f;
	double def_tpc, vcpus;

	if (tpc != 1)
		return;
	info = cJSON_IsObject(types) ? cJSON_GetObjectItemCaseSensitive(types, ec2) : NULL;
	def_tpc = hp_json_num(info, "vCpuInfo.defaultThreadsPerCore", -1);
	if (def_tpc < 0) {
		HP_CHECK_INFO(em,
			"Instance group '%s' runs %s with ThreadsPerCore=1; EC2 data for %s was not "
			"read, so the vCPU count could not be judged",
			group, mltype, ec2);
		return;
	}
	if (def_tpc != 2)
		return;
	vcpus = hp_json_num(info, "vCpuInfo.defaultVCpus", -1);
	if (vcpus > 0)
		f = hp_emit(em, HP_TAG_WARN,
			    "Instance group '%s' runs %s with ThreadsPerCore=1: nodes show %.0f vCPUs "
			    "instead of %.0f",
			    group, mltype, vcpus / 2, vcpus);
	else
		f = hp_emit(em, HP_TAG_WARN,
			    "Instance group '%s' runs %s with ThreadsPerCore=1: nodes show half their "
			    "default vCPUs",
			    group, mltype);
	group_var(f, g);
	hp_finding_var(f, "INSTANCE_TYPE", ec2);
}

static void run_threads_per_core(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *c = cluster_of(snap);
	const cJSON *groups = c ? hp_json_arr(c, "InstanceGroups") : NULL;
	const cJSON *types = hp_json_get(snap->root, "instance_types");
	const cJSON *g, *d;

	cJSON_ArrayForEach(g, groups) {
		const cJSON *details = hp_json_arr(g, "InstanceTypeDetails");
		double tpc = hp_json_num(g, "ThreadsPerCore", -1);

		/* A group with several instance types lists each with its own setting. */
		if (details && cJSON_GetArraySize(details)) {
			cJSON_ArrayForEach(d, details) {
				const char *t = hp_json_str(d, "InstanceType");

				if (t)
					judge_tpc(em, types, g, t,
						  hp_json_num(d, "ThreadsPerCore", tpc));
			}
			continue;
		}
		if (hp_json_str(g, "InstanceType"))
			judge_tpc(em, types, g, hp_json_str(g, "InstanceType"), tpc);
	}
}

HP_CHECK(cluster_identity, HP_GROUP_IDENTITY, 10,
	 .id = "cluster.identity", .section = "", .prio = HP_PNONE, .run = run_identity);
HP_CHECK(cluster_status, HP_GROUP_IDENTITY, 30,
	 .id = "cluster.status", .section = "J.1", .prio = HP_P0, .run = run_status);
HP_CHECK(cluster_node_recovery, HP_GROUP_IDENTITY, 40,
	 .id = "cluster.node-recovery", .section = "F", .prio = HP_P1, .run = run_node_recovery);
HP_CHECK(cluster_instance_groups, HP_GROUP_NODES, 40,
	 .id = "cluster.instance-groups", .section = "C", .prio = HP_P1, .run = run_instance_groups);
HP_CHECK(cluster_threads_per_core, HP_GROUP_NODES, 50,
	 .id = "cluster.threads-per-core", .section = "J.2", .prio = HP_P2,
	 .run = run_threads_per_core);
