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
#include "hp/nccl.h"

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
	const struct hp_kube_index *x = hp_facts_kube(s);
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
