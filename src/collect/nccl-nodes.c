/*
 * Which nodes `hpnode nccl` probes over SSM: the --node, else the nodes the
 * job's pods run on (--job), else a sample of the Running nodes: the
 * accelerated instance groups first (GPUs or EFA in the instance type's
 * DescribeInstanceTypes facts, never a name pattern), taking turns between
 * groups, then the others; never the Slurm controller or a login group. The
 * choice and the reason for each node are recorded, so a replayed report
 * says the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/nccl-facts.h"

/* A group no NCCL job runs on: the Slurm controller's, or a login group. */
static int excluded_group(const struct hp_snapshot *s, const char *group, const char *ctl_group)
{
	const cJSON *g;

	if (!group)
		return 1;
	if (ctl_group && !strcmp(group, ctl_group))
		return 1;
	cJSON_ArrayForEach(g, hp_json_arr(hp_snapshot_get(s, "cluster"), "InstanceGroups")) {
		const char *name = hp_json_str(g, "InstanceGroupName");
		const char *type = hp_json_str(g, "SlurmConfig.NodeType");

		if (name && !strcmp(name, group) && type &&
		    (!strcmp(type, "Controller") || !strcmp(type, "Login")))
			return 1;
	}
	return 0;
}

struct chosen {
	char **ids;           /* owned copies */
	size_t n, alloc;
	cJSON *list;
};

static int chosen_has(const struct chosen *c, const char *id)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->ids[i], id))
			return 1;
	return 0;
}

static void choose(struct chosen *c, const cJSON *node, const char *id, const char *why)
{
	cJSON *x;

	if (!id || chosen_has(c, id))
		return;
	if (c->n == c->alloc) {
		c->alloc = c->alloc ? c->alloc * 2 : 16;
		c->ids = xrealloc(c->ids, c->alloc * sizeof(*c->ids));
	}
	c->ids[c->n++] = xstrdup(id);
	x = cJSON_CreateObject();
	cJSON_AddStringToObject(x, "id", id);
	if (hp_json_str(node, "InstanceGroupName"))
		cJSON_AddStringToObject(x, "group", hp_json_str(node, "InstanceGroupName"));
	if (hp_json_str(node, "InstanceType"))
		cJSON_AddStringToObject(x, "type", hp_json_str(node, "InstanceType"));
	cJSON_AddStringToObject(x, "why", why);
	cJSON_AddItemToArray(c->list, x);
}

static const cJSON *listed(const struct hp_snapshot *s, const char *id)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, hp_json_arr(s->root, "nodes")) {
		const char *x = hp_json_str(n, "InstanceId");

		if (x && !strcmp(x, id))
			return n;
	}
	return NULL;
}

/* The nodes of the job's pods, in pod order; how many pods had no known node. */
static void job_nodes(const struct hp_snapshot *s, struct chosen *c, cJSON *rec)
{
	/* Collecting: the snapshot is not prepared yet, so the index is this call's own. */
	struct hp_kube_index *x = hp_kube_index_build(s);
	const cJSON *pod;
	int unmapped = 0;

	cJSON_ArrayForEach(pod, hp_json_arr(hp_snapshot_get(s, "nccl"), "pods")) {
		const char *node = hp_json_str(pod, "node"), *iid;
		char why[600];

		if (!node)
			continue;
		iid = hp_kube_index_iid(x, node);
		if (!iid) {
			unmapped++;
			continue;
		}
		snprintf(why, sizeof(why), "runs pod %.250s/%.250s", hp_json_str(pod, "namespace") ?
			 hp_json_str(pod, "namespace") : "?", hp_json_str(pod, "name") ?
			 hp_json_str(pod, "name") : "?");
		choose(c, listed(s, iid), iid, why);
	}
	if (unmapped)
		cJSON_AddNumberToObject(rec, "pods_unmapped", unmapped);
	hp_kube_index_free(x);
}

/*
 * The nodes of the Slurm job the controller probe described (its NodeList,
 * expanded), by Slurm name; 0 when the probe holds no such job (*why says so).
 */
static size_t slurm_job_nodes(const struct hp_snapshot *s, struct chosen *c, cJSON *rec,
			      const char **why)
{
	const cJSON *probe = hp_json_get(hp_snapshot_get(s, "slurm"), "probe"), *name, *n;
	const char *out = hp_json_str(probe, "stdout");
	const char *id = hp_json_str(hp_snapshot_get(s, "nccl"), "slurm_job.id");
	cJSON *facts;
	size_t before = c->n;
	int unmapped = 0;

	*why = "the Slurm controller was not probed";
	if (!out)
		return 0;
	facts = hp_slurm_parse(out, strlen(out));
	if (!hp_json_get(facts, "job"))
		*why = "the controller probe did not ask slurmctld about the job";
	else if (hp_json_str(facts, "job.error") && !strcmp(hp_json_str(facts, "job.error"), "unknown"))
		*why = "slurmctld no longer knows the job (Invalid job id specified)";
	else if (!hp_json_bool(hp_json_get(facts, "job"), "found", 0))
		*why = "scontrol gave no record of the job";
	else
		*why = "the job has no node allocated (NodeList)";
	cJSON_ArrayForEach(name, hp_json_get(facts, "job.nodes")) {
		int found = 0;

		cJSON_ArrayForEach(n, hp_json_arr(s->root, "nodes")) {
			char sn[256], why_node[400];

			if (!hp_slurm_node_name(n, sn, sizeof(sn)) || strcmp(sn, name->valuestring))
				continue;
			snprintf(why_node, sizeof(why_node), "runs Slurm job %.40s (node %.200s)",
				 id ? id : "?", sn);
			choose(c, n, hp_json_str(n, "InstanceId"), why_node);
			found = 1;
			break;
		}
		unmapped += !found;
	}
	if (unmapped)
		cJSON_AddNumberToObject(rec, "slurm_nodes_unmapped", unmapped);
	cJSON_Delete(facts);
	return c->n - before;
}

/*
 * Whether a pod failed, restarted or is stuck waiting (pass 0), or logged
 * an error: a P0/P1 log hit other than NCCL's sockets, which the checks
 * judge by the instance type (pass 1).
 */
static int troubled(const cJSON *nccl, const cJSON *pod, int pass)
{
	const char *phase = hp_json_str(pod, "phase"), *ns = hp_json_str(pod, "namespace");
	const char *name = hp_json_str(pod, "name");
	const cJSON *c, *h;
	char prefix[600];
	size_t len;

	if (pass == 0 && phase && (!strcmp(phase, "Failed") || !strcmp(phase, "Unknown")))
		return 1;
	cJSON_ArrayForEach(c, hp_json_arr(pod, "containers"))
		if (pass == 0 && (hp_json_num(c, "restarts", 0) > 0 || hp_json_get(c, "last_reason") ||
		    (hp_json_str(c, "state") && !strcmp(hp_json_str(c, "state"), "waiting") &&
		     hp_json_str(c, "reason") && strcmp(hp_json_str(c, "reason"), "ContainerCreating") &&
		     strcmp(hp_json_str(c, "reason"), "PodInitializing"))))
			return 1;
	if (pass == 0 || !ns || !name)
		return 0;
	len = (size_t)snprintf(prefix, sizeof(prefix), "%s/%s/", ns, name);
	cJSON_ArrayForEach(h, hp_json_arr(nccl, "log_scan.hits")) {
		const char *src = hp_json_str(h, "source"), *prio = hp_json_str(h, "priority");

		if (src && prio && strcmp(prio, "P2") && !strncmp(src, prefix, len) &&
		    strcmp((hp_json_str(h, "code") ? hp_json_str(h, "code") : ""), "EFA_TCP_FALLBACK"))
			return 1;
	}
	return 0;
}

/*
 * Without --job: the nodes of the pods that failed, restarted or logged
 * errors come first (the root cause is often on one of them), up to want.
 */
static void trouble_nodes(const struct hp_snapshot *s, int want, struct chosen *c)
{
	/* Collecting: the snapshot is not prepared yet, so the index is this call's own. */
	struct hp_kube_index *x = hp_kube_index_build(s);
	const cJSON *nccl = hp_snapshot_get(s, "nccl"), *pod;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		cJSON_ArrayForEach(pod, hp_json_arr(nccl, "pods")) {
			const char *iid = hp_kube_index_iid(x, hp_json_str(pod, "node"));
			const cJSON *n = iid ? listed(s, iid) : NULL;
			const char *ns = hp_json_str(pod, "namespace"), *name = hp_json_str(pod, "name");
			char why[600];

			if (want && c->n >= (size_t)want)
				goto done;
			if (!n || !hp_snap_node_running(n) || !troubled(nccl, pod, pass))
				continue;
			snprintf(why, sizeof(why), "runs pod %.250s/%.250s, which %s", ns ? ns : "?",
				 name ? name : "?", pass ? "logged errors" : "failed or restarted");
			choose(c, n, iid, why);
		}
	}
done:
	hp_kube_index_free(x);
}

/* Up to want Running nodes (0: all), accelerated groups first, taking turns between groups. */
static void sample(const struct hp_snapshot *s, int want, struct chosen *c)
{
	const cJSON *nodes = hp_json_arr(s->root, "nodes"), *n;
	const char *ctl_iid, *ctl_group, *how;
	const char **groups = NULL;
	int *accel = NULL;
	size_t ng = 0, k, before;
	int pass;

	hp_facts_slurm_controller(s, &ctl_iid, &ctl_group, &how);
	cJSON_ArrayForEach(n, nodes) {
		const char *g = hp_json_str(n, "InstanceGroupName");

		if (!hp_snap_node_running(n) || excluded_group(s, g, ctl_group))
			continue;
		for (k = 0; k < ng && strcmp(groups[k], g); k++)
			;
		if (k == ng) {
			groups = xrealloc(groups, (ng + 1) * sizeof(*groups));
			accel = xrealloc(accel, (ng + 1) * sizeof(*accel));
			groups[ng] = g;
			accel[ng++] = hp_nccl_type_accelerated(s, hp_json_str(n, "InstanceType")) == 1;
		}
	}
	/* Pass 0 the accelerated groups, pass 1 the others; one node per group per round. */
	for (pass = 0; pass < 2; pass++) {
		do {
			before = c->n;
			for (k = 0; k < ng; k++) {
				if (accel[k] != (pass == 0) || (want && c->n >= (size_t)want))
					continue;
				cJSON_ArrayForEach(n, nodes) {
					const char *id = hp_json_str(n, "InstanceId");
					const char *g = hp_json_str(n, "InstanceGroupName");
					char why[300];

					if (!id || !g || strcmp(g, groups[k]) || !hp_snap_node_running(n) ||
					    chosen_has(c, id))
						continue;
					snprintf(why, sizeof(why), "%s group %.200s", accel[k] ? "accelerated" :
						 "not accelerated:", groups[k]);
					choose(c, n, id, why);
					break;
				}
			}
		} while (c->n > before && (!want || c->n < (size_t)want));
	}
	free(groups);
	free(accel);
}

size_t hp_nccl_choose_nodes(const struct hp_snapshot *s, const struct hp_nccl_node_opts *o,
			    cJSON *rec, char ***ids)
{
	struct chosen c = { NULL, 0, 0, NULL };
	const cJSON *nccl = hp_snapshot_get(s, "nccl");
	const char *selection;

	c.list = cJSON_CreateArray();
	if (o->node) {
		selection = "node";
		choose(&c, listed(s, o->node), o->node, "--node");
	} else if (o->job && !strcmp(hp_snap_orchestrator(s), "Slurm")) {
		const char *why = NULL;
		char note[300];

		selection = "job";
		if (!slurm_job_nodes(s, &c, rec, &why)) {
			snprintf(note, sizeof(note), "%s; sampled instead", why);
			cJSON_AddStringToObject(rec, "note", note);
			selection = "sample";
			sample(s, o->sample, &c);
		}
	} else if (o->job && cJSON_IsArray(hp_json_get(nccl, "pods"))) {
		selection = "job";
		job_nodes(s, &c, rec);
		if (!c.n) {
			cJSON_AddStringToObject(rec, "note", "none of the job's pods runs on a known node; "
							   "sampled instead");
			selection = "sample";
			sample(s, o->sample, &c);
		}
	} else {
		if (o->job)
			cJSON_AddStringToObject(rec, "note", "the job's pods could not be read; sampled "
							   "instead");
		selection = "sample";
		trouble_nodes(s, o->sample, &c);
		sample(s, o->sample, &c);
	}
	cJSON_AddStringToObject(rec, "selection", selection);
	if (o->sample)
		cJSON_AddNumberToObject(rec, "requested", o->sample);
	else
		cJSON_AddStringToObject(rec, "requested", "all");
	cJSON_AddItemToObject(rec, "chosen", c.list);
	*ids = c.ids;
	return c.n;
}

void hp_nccl_nodes_free(char **ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}
