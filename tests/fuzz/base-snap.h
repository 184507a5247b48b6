/*
 * A small cluster for the targets that put fuzzed node or controller
 * output into a snapshot: one EKS or Slurm cluster with a worker group,
 * a controller group and one Running node in each.
 */
#ifndef HP_FUZZ_BASE_SNAP_H
#define HP_FUZZ_BASE_SNAP_H

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "hp/util.h"

#define FZ_NODE "i-0a1b2c3d4e5f60718"
#define FZ_CTRL "i-0f0e0d0c0b0a09080"

static const char fz_base_eks[] =
	"{\"version\":1,\"meta\":{\"cluster_arg\":\"ml-cluster\",\"region\":\"us-west-2\","
	"\"collected_at_ms\":1795989600000,\"orchestrator\":\"EKS\"},"
	"\"identity\":{\"Account\":\"123456789012\",\"Arn\":\"arn:aws:iam::123456789012:user/t\"},"
	"\"cluster\":{\"ClusterName\":\"ml-cluster\",\"ClusterArn\":\"arn:aws:sagemaker:us-west-2:"
	"123456789012:cluster/abcdefabcdef\",\"ClusterStatus\":\"InService\",\"Orchestrator\":{\"Eks\":"
	"{\"ClusterArn\":\"arn:aws:eks:us-west-2:123456789012:cluster/ml-eks\"}},"
	"\"InstanceGroups\":[{\"InstanceGroupName\":\"worker\",\"InstanceType\":\"ml.p5.48xlarge\","
	"\"CurrentCount\":1,\"TargetCount\":1}]},"
	"\"nodes\":[{\"InstanceGroupName\":\"worker\",\"InstanceId\":\"" FZ_NODE "\","
	"\"InstanceType\":\"ml.p5.48xlarge\",\"InstanceStatus\":{\"Status\":\"Running\"}}],"
	"\"nodes_truncated\":false}";

static const char fz_base_slurm[] =
	"{\"version\":1,\"meta\":{\"cluster_arg\":\"ml-slurm\",\"region\":\"us-west-2\","
	"\"collected_at_ms\":1795989600000,\"orchestrator\":\"Slurm\"},"
	"\"cluster\":{\"ClusterName\":\"ml-slurm\",\"ClusterArn\":\"arn:aws:sagemaker:us-west-2:"
	"123456789012:cluster/abcdefabcdef\",\"ClusterStatus\":\"InService\","
	"\"InstanceGroups\":[{\"InstanceGroupName\":\"controller\",\"InstanceType\":\"ml.m5.xlarge\","
	"\"CurrentCount\":1,\"TargetCount\":1,\"SlurmConfig\":{\"NodeType\":\"Controller\"}},"
	"{\"InstanceGroupName\":\"worker\",\"InstanceType\":\"ml.p5.48xlarge\",\"CurrentCount\":1,"
	"\"TargetCount\":1}]},"
	"\"nodes\":[{\"InstanceGroupName\":\"controller\",\"InstanceId\":\"" FZ_CTRL "\","
	"\"InstanceType\":\"ml.m5.xlarge\",\"InstanceStatus\":{\"Status\":\"Running\"}},"
	"{\"InstanceGroupName\":\"worker\",\"InstanceId\":\"" FZ_NODE "\","
	"\"InstanceType\":\"ml.p5.48xlarge\",\"PrivateDnsHostname\":\"ip-10-1-2-3.ec2.internal\","
	"\"InstanceStatus\":{\"Status\":\"Running\"}}],\"nodes_truncated\":false}";

/* A "probes"-shaped entry for output that came back from a node. */
static inline cJSON *fz_probe_entry(const char *out, size_t outn, const char *err, size_t errn,
				    int exit_code, const char *group)
{
	cJSON *e = cJSON_CreateObject();
	char *o = xstrndup(out, outn), *r = xstrndup(err, errn);

	cJSON_AddStringToObject(e, "state", "probed");
	cJSON_AddNumberToObject(e, "exit_code", exit_code);
	cJSON_AddStringToObject(e, "stdout", o);
	cJSON_AddStringToObject(e, "stderr", r);
	cJSON_AddBoolToObject(e, "truncated", !strstr(o, "@@HP@@ DONE"));
	cJSON_AddNumberToObject(e, "duration_ms", 1234);
	cJSON_AddStringToObject(e, "group", group);
	cJSON_AddStringToObject(e, "instance_type", "ml.p5.48xlarge");
	cJSON_AddStringToObject(e, "transport", "native");
	cJSON_AddNumberToObject(e, "start_attempts", 1);
	cJSON_AddBoolToObject(e, "terminated", 0);
	cJSON_AddBoolToObject(e, "stdout_capped", 0);
	free(o);
	free(r);
	return e;
}

#endif
