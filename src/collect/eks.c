/*
 * eks DescribeCluster for the cluster's orchestrator, stored once under
 * snapshot key "eks" for every area that needs the EKS cluster (the kubectl
 * server check); when the network collector already asked (network.eks),
 * its answer is shared instead of asking again. Nothing here judges it.
 */
#include <stdio.h>
#include <string.h>

#include "hp/collect.h"
#include "hp/json.h"

/* EKS names are [0-9A-Za-z][A-Za-z0-9-_]*: nothing to percent-encode, nothing to escape. */
static int eks_name_ok(const char *n)
{
	size_t i;

	if (!n || !*n || strlen(n) > 100)
		return 0;
	for (i = 0; n[i]; i++) {
		char c = n[i];
		int alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
			    (c >= 'A' && c <= 'Z');

		if (!alnum && (i == 0 || (c != '-' && c != '_')))
			return 0;
	}
	return 1;
}

/* The EKS cluster name of the orchestrator ARN, validated. */
const char *hp_collect_eks_name(const struct hp_snapshot *s, char *out, size_t n)
{
	const char *arn = hp_json_str(hp_snapshot_get(s, "cluster"), "Orchestrator.Eks.ClusterArn");
	const char *slash = arn ? strstr(arn, ":cluster/") : NULL;

	if (!slash || !hp_starts_with(arn, "arn:") || hp_strlcpy(out, slash + 9, n) >= n ||
	    !eks_name_ok(out)) {
		if (n)
			out[0] = '\0';
		return NULL;
	}
	return out;
}

/* Read eks DescribeCluster once into "eks". */
int hp_collect_eks(struct hp_aws *a, struct hp_snapshot *s)
{
	const cJSON *net = hp_snapshot_get(s, "network");
	struct hp_aws_result r;
	char name[128], path[160];
	cJSON *cluster;

	if (hp_snapshot_get(s, "eks"))
		return 0;
	/* The network collector may have asked already: share its answer, never ask twice. */
	if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(net, "eks"))) {
		hp_snapshot_set(s, "eks",
				cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(net, "eks"), 1));
		return 0;
	}
	if (cJSON_GetObjectItemCaseSensitive(net, "eks_name"))
		return -1;
	if (!hp_collect_eks_name(s, name, sizeof(name)))
		return -1;
	snprintf(path, sizeof(path), "/clusters/%s", name);
	if (hp_aws_rest_get(a, HP_SVC_EKS, "DescribeCluster", path, &r)) {
		hp_collect_record(s, HP_SVC_EKS, "DescribeCluster", &r);
		hp_aws_result_release(&r);
		return -1;
	}
	cluster = cJSON_DetachItemFromObjectCaseSensitive(r.json, "cluster");
	hp_aws_result_release(&r);
	if (!cJSON_IsObject(cluster)) {
		cJSON_Delete(cluster);
		hp_snapshot_add_call(s, "eks", "DescribeCluster", "parse", "",
				     "reply has no 'cluster' object", 200);
		return -1;
	}
	hp_snapshot_set(s, "eks", cluster);
	return 0;
}
