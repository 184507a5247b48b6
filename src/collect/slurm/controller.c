/*
 * Which node is the Slurm controller, and what Slurm calls an instance:
 * pure functions over the snapshot (include/hp/slurm.h). The controller
 * comes from the instance groups' SlurmConfig, else from a group name that
 * says so; there is no fallback to an arbitrary node, which could belong
 * to nothing Slurm knows.
 */
#include <string.h>

#include "hp/json.h"
#include "hp/slurm.h"
#include "hp/util.h"

/* The first Running node of group g, or NULL. */
static const char *running_node(const struct hp_snapshot *s, const char *g)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, hp_snapshot_get(s, "nodes")) {
		const char *grp = hp_json_str(n, "InstanceGroupName");

		if (grp && !strcmp(grp, g) && hp_snap_node_running(n))
			return hp_json_str(n, "InstanceId");
	}
	return NULL;
}

static int named_like_controller(const char *g)
{
	return hp_strcasestr(g, "controller") || hp_strcasestr(g, "head") ||
	       hp_strcasestr(g, "master");
}

/* Pick the Slurm controller node from the instance groups. */
int hp_slurm_controller(const struct hp_snapshot *s, const char **iid, const char **group,
			const char **how)
{
	const cJSON *groups = hp_json_arr(hp_snapshot_get(s, "cluster"), "InstanceGroups"), *g;
	int pass;

	*iid = *group = *how = NULL;
	for (pass = 0; pass < 2; pass++) {
		cJSON_ArrayForEach(g, groups) {
			const char *name = hp_json_str(g, "InstanceGroupName");
			const char *type = hp_json_str(g, "SlurmConfig.NodeType");

			if (!name)
				continue;
			if (pass == 0 ? !(type && !strcmp(type, "Controller")) :
					(type || !named_like_controller(name)))
				continue;
			*group = name;
			*how = pass == 0 ? "SlurmConfig" : "group name";
			*iid = running_node(s, name);
			return 0;
		}
	}
	return -1;
}

/* The Slurm node name (first DNS label) of a cluster node. */
const char *hp_slurm_node_name(const cJSON *node, char *out, size_t n)
{
	const char *dns = hp_json_str(node, "PrivateDnsHostname");
	size_t len;

	if (!dns || !*dns || !n)
		return NULL;
	len = strcspn(dns, ".");
	if (!len || len >= n)
		return NULL;
	memcpy(out, dns, len);
	out[len] = '\0';
	return out;
}
