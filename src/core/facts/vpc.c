/*
 * The VpcConfig walk (include/hp/facts.h): the cluster's VpcConfig and
 * every instance group's OverrideVpcConfig, the one place that knows an
 * override stands beside the cluster's own configuration.
 */
#include <string.h>

#include "hp/facts.h"
#include "hp/json.h"

const cJSON *hp_vpc_first(struct hp_vpc_walk *w, const cJSON *cluster)
{
	const cJSON *vpc = hp_json_get(cluster, "VpcConfig");
	const cJSON *groups = hp_json_arr(cluster, "InstanceGroups");

	w->group = NULL;
	w->next_group = groups ? groups->child : NULL;
	if (cJSON_IsObject(vpc))
		return vpc;
	return hp_vpc_next(w);
}

const cJSON *hp_vpc_next(struct hp_vpc_walk *w)
{
	while (w->next_group) {
		const cJSON *g = w->next_group;
		const cJSON *ov = cJSON_GetObjectItemCaseSensitive(g, "OverrideVpcConfig");

		w->next_group = g->next;
		if (cJSON_IsObject(ov)) {
			w->group = g;
			return ov;
		}
	}
	w->group = NULL;
	return NULL;
}

const cJSON *hp_vpc_ids(const cJSON *cluster, const cJSON *group, const char *field)
{
	const cJSON *ids = hp_json_arr(hp_json_get(group, "OverrideVpcConfig"), field);

	if (cJSON_GetArraySize(ids) > 0)
		return ids;
	ids = hp_json_arr(hp_json_get(cluster, "VpcConfig"), field);
	return cJSON_GetArraySize(ids) > 0 ? ids : NULL;
}

int hp_sg_rule_all_traffic(const cJSON *perm)
{
	const char *p = hp_json_str(perm, "ipProtocol");

	return p && (!strcmp(p, "-1") || !strcmp(p, "all"));
}

int hp_sg_rule_names_group(const cJSON *perm, const char *id)
{
	const cJSON *g;

	cJSON_ArrayForEach(g, hp_json_arr(perm, "groups")) {
		const char *gid = hp_json_str(g, "groupId");

		if (gid && !strcmp(gid, id))
			return 1;
	}
	return 0;
}

int hp_sg_rule_any_ipv4(const cJSON *perm)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, hp_json_arr(perm, "ipRanges")) {
		const char *cidr = hp_json_str(r, "cidrIp");

		if (cidr && !strcmp(cidr, "0.0.0.0/0"))
			return 1;
	}
	return 0;
}
