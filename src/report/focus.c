/*
 * The report of one node (`--node i-…`): the findings that bear on it.
 * A finding that names nodes stays when the node is among them; one that
 * names none is the cluster's and stays unless it is plainly about another
 * part of the cluster: an instance group other than the node's, or subnets
 * and security groups none of which the node's group uses (its
 * OverrideVpcConfig, else the cluster's VpcConfig). What is left out never
 * reaches the report, its counts or --fail-on. Also --only's filter by tag.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "hp/report.h"
#include "hp/snapshot.h"

const char *hp_report_node_group(const struct hp_snapshot *s, const char *node)
{
	const cJSON *one = hp_snapshot_get(s, "node"), *list = hp_snapshot_get(s, "nodes"), *n;
	const char *id = hp_json_str(one, "InstanceId");

	if (id && !strcmp(id, node) && hp_json_str(one, "InstanceGroupName"))
		return hp_json_str(one, "InstanceGroupName");
	cJSON_ArrayForEach(n, (cJSON_IsArray(list) ? list : NULL)) {
		id = hp_json_str(n, "InstanceId");
		if (id && !strcmp(id, node))
			return hp_json_str(n, "InstanceGroupName");
	}
	return NULL;
}

/* The VpcConfig the node's group runs in: its OverrideVpcConfig, else the cluster's. */
static const cJSON *group_vpc(const struct hp_snapshot *s, const char *group)
{
	const cJSON *cluster = hp_snapshot_get(s, "cluster");
	const cJSON *groups = hp_json_get(cluster, "InstanceGroups"), *g;

	cJSON_ArrayForEach(g, (cJSON_IsArray(groups) ? groups : NULL)) {
		const char *name = hp_json_str(g, "InstanceGroupName");
		const cJSON *o = hp_json_get(g, "OverrideVpcConfig");

		if (group && name && !strcmp(name, group) && cJSON_IsObject(o))
			return o;
	}
	return hp_json_get(cluster, "VpcConfig");
}

static int in_list(const cJSON *list, const char *s, size_t n)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, (cJSON_IsArray(list) ? list : NULL))
		if (cJSON_IsString(x) && strlen(x->valuestring) == n && !strncmp(x->valuestring, s, n))
			return 1;
	return 0;
}

/*
 * Whether text names ids of prefix ("subnet-", "sg-") and none of them is
 * in mine: 1 when it names only others, 0 when it names one of mine or none.
 */
static int names_only_others(const char *text, const char *prefix, const cJSON *mine)
{
	size_t plen = strlen(prefix);
	const char *p = text;
	int others = 0;

	while ((p = strstr(p, prefix)) != NULL) {
		size_t n = plen;

		/* A whole id: not the tail of a longer word, hex digits after the prefix. */
		if (p > text && ((p[-1] >= 'a' && p[-1] <= 'z') || p[-1] == '-')) {
			p += plen;
			continue;
		}
		while ((p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'f'))
			n++;
		if (n > plen + 7) {
			if (in_list(mine, p, n))
				return 0;
			others = 1;
		}
		p += n;
	}
	return others;
}

/* Whether text names an instance group ("instance group 'x'", "(group 'x')") other than group. */
static int names_other_group(const char *text, const char *group)
{
	static const char *const marks[] = { "instance group '", "group '", "InstanceGroup " };
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(marks); i++) {
		const char *p = text;

		while ((p = strstr(p, marks[i])) != NULL) {
			const char *name = p + strlen(marks[i]);
			size_t n = strcspn(name, i < 2 ? "'" : " ,;:)");

			if (n && (!group || strlen(group) != n || strncmp(name, group, n)))
				return 1;
			p = name + n;
		}
	}
	return 0;
}

/* Whether finding x bears on node (of group, in vpc). */
static int bears_on(const struct hp_finding *x, const char *node, const char *group,
		    const cJSON *vpc)
{
	const char *msg = x->message ? x->message : "";
	size_t k;

	if (x->nnodes) {
		for (k = 0; k < x->nnodes; k++)
			if (x->nodes[k] && !strcmp(x->nodes[k], node))
				return 1;
		return 0;
	}
	if (x->node)
		return !strcmp(x->node, node);
	if (names_other_group(msg, group))
		return 0;
	if (names_only_others(msg, "subnet-", hp_json_get(vpc, "Subnets")) ||
	    names_only_others(msg, "sg-", hp_json_get(vpc, "SecurityGroupIds")))
		return 0;
	return 1;
}

/* What hp_findings_release frees of a finding (the node ids are not its own). */
static void drop(struct hp_finding *x)
{
	free(x->section);
	free(x->message);
	free(x->node);
	cJSON_Delete(x->evidence);
	cJSON_Delete(x->vars);
	free(x->nodes);
}

size_t hp_report_focus(const struct hp_snapshot *s, const char *node, struct hp_findings *f)
{
	const char *group = hp_report_node_group(s, node);
	const cJSON *vpc = group_vpc(s, group);
	size_t i, kept = 0, left;

	for (i = 0; i < f->n; i++) {
		if (bears_on(&f->v[i], node, group, vpc))
			f->v[kept++] = f->v[i];
		else
			drop(&f->v[i]);
	}
	left = f->n - kept;
	f->n = kept;
	return left;
}

size_t hp_report_keep_tags(struct hp_findings *f, unsigned tags)
{
	size_t i, kept = 0, left;

	for (i = 0; i < f->n; i++) {
		if ((unsigned)f->v[i].tag < 32 && (tags & (1u << f->v[i].tag)))
			f->v[kept++] = f->v[i];
		else
			drop(&f->v[i]);
	}
	left = f->n - kept;
	f->n = kept;
	return left;
}
