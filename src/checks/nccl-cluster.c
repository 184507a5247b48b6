/*
 * The cluster-level checks of `hpnode nccl` that triage has no row for:
 * whether NCCL applies to the cluster at all (accelerated instance groups,
 * read from DescribeInstanceTypes, never from a name pattern), and which
 * nodes the NCCL probe ran on. The rest of the cluster level (status,
 * NodeRecovery, nodes, events, EFA security groups) is triage's checks,
 * run in the command's check list.
 */
#include <stdio.h>
#include <string.h>

#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"
#include "fold.h"
#include "nccl-check.h"

/*
 * The group's instance type; a flexible group (InstanceTypeDetails) names
 * its first accelerated type, else its first.
 */
static const char *group_type(const struct hp_snapshot *snap, const cJSON *g)
{
	const char *type = hp_json_str(g, "InstanceType"), *first = NULL;
	const cJSON *d;

	if (type)
		return type;
	cJSON_ArrayForEach(d, hp_json_arr(g, "InstanceTypeDetails")) {
		const char *t = hp_json_str(d, "InstanceType");

		if (!t)
			continue;
		if (!first)
			first = t;
		if (hp_nccl_type_accelerated(snap, t) == 1)
			return t;
	}
	return first;
}

static void run_applicable(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *cluster = hp_snapshot_get(snap, "cluster"), *g;
	const char *forced = hp_json_str(hp_snapshot_get(snap, "nccl_run"), "orchestrator_arg");
	struct hp_buf accel = HP_BUF_INIT(HP_MAX_LINE), unknown = HP_BUF_INIT(HP_MAX_LINE);
	size_t naccel = 0, nunknown = 0, ngroups = 0;
	struct hp_finding *f;

	if (!hp_nccl_check_data(snap) || !cJSON_IsObject(cluster))
		goto out;
	cJSON_ArrayForEach(g, hp_json_arr(cluster, "InstanceGroups")) {
		const char *name = hp_check_str(g, "InstanceGroupName", "?");
		const char *type = group_type(snap, g);
		int a = hp_nccl_type_accelerated(snap, type);

		ngroups++;
		if (a < 0) {
			hp_buf_printf(&unknown, "%s%.100s (%.60s)", nunknown++ ? ", " : "", name,
				      type ? type : "no type");
		} else if (a) {
			hp_buf_printf(&accel, "%s%.100s (%.60s: %d GPUs, %d EFA interfaces)",
				      naccel++ ? ", " : "", name, type, hp_nccl_type_gpus(snap, type),
				      hp_nccl_type_efa(snap, type));
		}
	}
	if (naccel)
		hp_emit(em, HP_TAG_PASS, "NCCL applies: %zu of %zu instance groups are accelerated: %s",
			naccel, ngroups, accel.buf);
	else if (nunknown)
		hp_emit(em, HP_TAG_SKIP, "Cannot tell whether NCCL applies: no DescribeInstanceTypes "
			"facts for %s", unknown.buf);
	else
		HP_CHECK_INFO(em, "NCCL does not apply: none of the %zu instance groups has GPUs or EFA "
			      "(DescribeInstanceTypes)", ngroups);
	if (naccel && nunknown)
		HP_CHECK_INFO(em, "No DescribeInstanceTypes facts for %s", unknown.buf);
	if (forced && strcmp(forced, hp_snap_orchestrator(snap))) {
		f = hp_emitx(em, HP_TAG_WARN, HP_P2, "", NULL, "--orchestrator %s was given, but the "
			     "cluster is orchestrated by %s (DescribeCluster): its checks follow the "
			     "cluster", !strcmp(forced, "EKS") ? "eks" : "slurm",
			     hp_snap_orchestrator(snap));
		hp_finding_evidence(f, hp_json_get(cluster, "Orchestrator.Eks")
				       ? "Orchestrator.Eks is set in DescribeCluster"
				       : "DescribeCluster has no Orchestrator.Eks");
	}
out:
	hp_buf_release(&accel);
	hp_buf_release(&unknown);
}

/* The node probe reached this node (so ssm.reachability reported it when not). */
static int node_probe_reached(const struct hp_snapshot *snap, const char *id)
{
	struct hp_probe_iter it;
	const char *st = hp_json_str(hp_probes_find(snap, "probes", id, &it), "state");
	int reached = st && !strcmp(st, "probed");

	hp_probes_end(&it);
	return reached;
}

static void run_probe_nodes(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *run = hp_snapshot_get(snap, "nccl_run"), *rec, *x, *probes, *p;
	struct hp_probe_iter it;
	const char *note, *sel;
	struct hp_fold lost = HP_FOLD_INIT(HP_TAG_WARN, HP_P1, NULL);
	struct hp_finding *f;
	size_t n, reached = 0, total = 0;

	if (!cJSON_IsObject(run))
		return;
	rec = hp_json_get(run, "probe_nodes");
	sel = hp_check_str(rec, "selection", "sample");
	note = hp_json_str(rec, "note");
	n = (size_t)hp_json_len(rec, "chosen");
	if (note)
		hp_emit(em, HP_TAG_WARN, "--job was given, but %s", note);
	if (!n) {
		hp_emit(em, HP_TAG_SKIP, "No node to run the NCCL probe on: no Running node outside "
			"the controller and login groups");
		return;
	}
	f = HP_CHECK_INFO(em, "%zu node%s chosen for the NCCL probe (%s%s)", n, n == 1 ? "" : "s",
			  !strcmp(sel, "job") ? "the nodes of the job's pods" :
			  !strcmp(sel, "node") ? "--node" : "sample, accelerated groups first",
			  !strcmp(sel, "sample") && cJSON_IsNumber(hp_json_get(rec, "requested"))
			  ? "" : !strcmp(sel, "sample") ? ", every node" : "");
	cJSON_ArrayForEach(x, hp_json_arr(rec, "chosen")) {
		char line[512];

		snprintf(line, sizeof(line), "%s (%s, %s): %s", hp_check_str(x, "id", "?"),
			 hp_check_str(x, "group", "no group"), hp_check_str(x, "type", "no type"),
			 hp_check_str(x, "why", ""));
		hp_finding_evidence(f, line);
	}
	/* The sweep's entries: the document's member, or the snapshot's probe store. */
	probes = hp_snapshot_get(snap, "nccl_probes");
	if (probes ? !cJSON_IsObject(probes) : !hp_probes_stored(snap, "nccl_probes")) {
		const char *why = hp_json_str(hp_snapshot_get(snap, "nccl_probes_meta"), "note");

		hp_emit(em, HP_TAG_SKIP, "The NCCL probe did not run: %s", why ? why : "no result");
		return;
	}
	for (p = hp_probes_first(snap, "nccl_probes", &it); p; p = hp_probes_next(&it)) {
		const char *st = hp_json_str(p, "state");

		if (!p->string)
			continue;
		total++;
		if (st && !strcmp(st, "probed")) {
			reached++;
			continue;
		}
		/* A node the node probe could not reach either is reported by ssm.reachability. */
		if (!node_probe_reached(snap, p->string))
			continue;
		hp_fold_add(&lost, p->string, "Cannot run the NCCL probe on node %s via SSM: %s",
			    p->string, hp_check_str(p, "reason", "no reason given"));
	}
	hp_fold_emit(em, &lost, "Cannot run the NCCL probe on %zu nodes via SSM",
		     hp_fold_count(&lost));
	if (reached && reached == total)
		hp_emit(em, HP_TAG_PASS, "The NCCL probe ran on all %zu chosen node%s", total,
			total == 1 ? "" : "s");
}

HP_CHECK(nccl_applicable, HP_GROUP_IDENTITY, 50,
	 .id = "nccl.applicable", .doc = HP_REFDOC_NCCL, .section = "NC6", .prio = HP_P2,
	 .run = run_applicable);
HP_CHECK(nccl_probe_nodes, HP_GROUP_SSM, 40,
	 .id = "nccl.probe-nodes", .doc = HP_REFDOC_NCCL, .section = "NC28", .prio = HP_P1,
	 .run = run_probe_nodes);
