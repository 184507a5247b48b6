/*
 * The cluster collector against canned replies: call order, pagination and
 * its caps, and how failures land in the snapshot (recorded, fact absent).
 */
#include <string.h>

#include "fake-sys.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "t.h"

static struct fake_sys fs;
static struct hp_aws aws;
static struct hp_snapshot snap;

static const char sts_ok[] =
	"<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/t</Arn>"
	"<Account>123456789012</Account><UserId>AIDAEXAMPLE</UserId></GetCallerIdentityResult></GetCallerIdentityResponse>";
static const char cluster_ok[] =
	"{\"ClusterArn\":\"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456\","
	"\"ClusterName\":\"c1\",\"ClusterStatus\":\"InService\",\"NodeProvisioningMode\":\"Continuous\",\"Orchestrator\":{\"Eks\":{\"ClusterArn\":\"arn:aws:eks:us-west-2:123456789012:cluster/e\"}},"
	"\"InstanceGroups\":[{\"InstanceGroupName\":\"w\",\"InstanceType\":\"ml.p5.48xlarge\"},"
	"{\"InstanceGroupName\":\"w2\",\"InstanceType\":\"ml.p5.48xlarge\"},{\"InstanceGroupName\":\"c\",\"InstanceType\":\"ml.m5.xlarge\"}]}";

static void setup(void)
{
	fake_aws(&fs, &aws, 1);
	hp_snapshot_release(&snap);
	hp_snapshot_init(&snap);
}

static const cJSON *find_call(const char *action)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, hp_snapshot_get(&snap, "calls")) {
		const char *a = hp_json_str(c, "action");
		if (a && !strcmp(a, action))
			return c;
	}
	return NULL;
}

static void queue_tail(void)
{
	/* events (1 page), instance types, log group absent. */
	fake_reply(&fs, 200, NULL, "{\"Events\":[]}");
	fake_reply(&fs, 200, NULL, "<DescribeInstanceTypesResponse><instanceTypeSet><item><instanceType>p5.48xlarge</instanceType>"
		   "<vCpuInfo><defaultVCpus>192</defaultVCpus><defaultThreadsPerCore>2</defaultThreadsPerCore></vCpuInfo></item>"
		   "<item><instanceType>m5.xlarge</instanceType></item></instanceTypeSet></DescribeInstanceTypesResponse>");
	fake_reply(&fs, 200, NULL, "{\"logGroups\":[]}");
}

static void t_full_collection_and_node_cap(void)
{
	struct hp_collect_opts o = { "c1", NULL, 0, 2 };
	struct hp_error e = HP_ERROR_INIT;

	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, cluster_ok);
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[{\"InstanceId\":\"i-1\"},{\"InstanceId\":\"i-2\"}],\"NextToken\":\"t1\"}");
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[{\"InstanceId\":\"i-3\"}],\"NextToken\":\"t2\"}");
	queue_tail();
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), 0);
	T_EQ(cJSON_GetArraySize(hp_snapshot_get(&snap, "nodes")), 3);
	T_ASSERT(cJSON_IsTrue(hp_snapshot_get(&snap, "nodes_truncated")));
	/* Node pages use the ARN, 100 per page, and carry the token. */
	T_CONTAINS(fs.req_body[2], "\"ClusterName\":\"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456\"");
	T_CONTAINS(fs.req_body[2], "\"MaxResults\":100");
	T_CONTAINS(fs.req_body[3], "\"NextToken\":\"t1\"");
	/* One DescribeInstanceTypes call for the two distinct types, without "ml.". */
	T_CONTAINS(fs.req_body[5], "InstanceType.1=p5.48xlarge&InstanceType.2=m5.xlarge");
	T_NOT_CONTAINS(fs.req_body[5], "InstanceType.3");
	T_EQ(hp_json_num(cJSON_GetObjectItemCaseSensitive(hp_snapshot_get(&snap, "instance_types"), "p5.48xlarge"),
			 "vCpuInfo.defaultVCpus", 0), 192);
	T_CONTAINS(fs.req_body[6], "/aws/sagemaker/Clusters/c1/abcdef123456");
	T_ASSERT(!hp_json_bool(hp_snapshot_get(&snap, "logs"), "group_found", 1));
	T_STREQ(hp_json_str(hp_snapshot_get(&snap, "meta"), "orchestrator"), "EKS");
	T_ASSERT(hp_snapshot_get(&snap, "calls") == NULL || cJSON_GetArraySize(hp_snapshot_get(&snap, "calls")) == 0);
}

static void t_denied_page_drops_partial_list(void)
{
	struct hp_collect_opts o = { "c1", NULL, 0, 0 };
	struct hp_error e = HP_ERROR_INIT;
	const cJSON *c;

	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, cluster_ok);
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[{\"InstanceId\":\"i-1\"}],\"NextToken\":\"t1\"}");
	fake_reply(&fs, 400, NULL, "{\"__type\":\"AccessDeniedException\",\"message\":\"not authorized\"}");
	queue_tail();
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), 0);
	T_ASSERT(hp_snapshot_get(&snap, "nodes") == NULL);
	c = find_call("ListClusterNodes");
	T_ASSERT(c != NULL);
	T_STREQ(hp_json_str(c, "service"), "sagemaker");
	T_STREQ(hp_json_str(c, "class"), "denied");
	T_STREQ(hp_json_str(c, "code"), "AccessDeniedException");
}

static void t_node_not_found_is_recorded(void)
{
	struct hp_collect_opts o = { "c1", "i-0123456789abcdef0", 0, 0 };
	struct hp_error e = HP_ERROR_INIT;

	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, cluster_ok);
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[{\"InstanceId\":\"i-1\",\"InstanceGroupName\":\"w\"}]}");
	fake_reply(&fs, 400, NULL, "{\"__type\":\"ResourceNotFound\",\"Message\":\"Could not find node 'i-0123456789abcdef0'\"}");
	queue_tail();
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), 0);
	T_STREQ(hp_json_str(hp_snapshot_get(&snap, "meta"), "node_filter"), "i-0123456789abcdef0");
	T_ASSERT(cJSON_IsString(hp_snapshot_get(&snap, "node_missing")));
	T_ASSERT(hp_snapshot_get(&snap, "node") == NULL);
}

static void t_cluster_not_found_lists_clusters(void)
{
	struct hp_collect_opts o = { "nope", NULL, 0, 0 };
	struct hp_error e = HP_ERROR_INIT;

	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 400, NULL, "{\"__type\":\"ValidationException\",\"Message\":\"Could not find cluster 'nope'.\"}");
	fake_reply(&fs, 200, NULL, "{\"ClusterSummaries\":[{\"ClusterName\":\"other\",\"ClusterStatus\":\"InService\"}]}");
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), -1);
	T_EQ(e.code, HP_ERR_NOT_FOUND);
	T_CONTAINS(e.msg, "'nope'");
	T_CONTAINS(e.msg, "us-west-2");
	T_EQ(cJSON_GetArraySize(hp_snapshot_get(&snap, "clusters")), 1);
}

static void t_bad_credentials_are_fatal(void)
{
	struct hp_collect_opts o = { "c1", NULL, 0, 0 };
	struct hp_error e = HP_ERROR_INIT;

	setup();
	fake_reply(&fs, 403, NULL, "<ErrorResponse><Error><Code>InvalidClientTokenId</Code><Message>bad token</Message></Error></ErrorResponse>");
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), -1);
	T_EQ(e.code, HP_ERR_CREDS);
	T_CONTAINS(e.msg, "InvalidClientTokenId");
	T_EQ(fs.nreq, 1);
}

static void t_events_cap_and_log_streams(void)
{
	struct hp_collect_opts o = { "c1", "i-1", 2, 0 };
	struct hp_error e = HP_ERROR_INIT;
	const cJSON *logs;

	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, cluster_ok);
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[{\"InstanceId\":\"i-1\",\"InstanceGroupName\":\"w\"}]}");
	fake_reply(&fs, 200, NULL, "{\"NodeDetails\":{\"InstanceId\":\"i-1\",\"InstanceGroupName\":\"w\"}}");
	fake_reply(&fs, 200, NULL, "{\"Events\":[{\"EventId\":\"1\"}],\"NextToken\":\"e1\"}");
	fake_reply(&fs, 200, NULL, "{\"Events\":[{\"EventId\":\"2\"}],\"NextToken\":\"e2\"}");
	fake_reply(&fs, 200, NULL, "<DescribeInstanceTypesResponse><instanceTypeSet/></DescribeInstanceTypesResponse>");
	fake_reply(&fs, 200, NULL, "{\"logGroups\":[{\"logGroupName\":\"/aws/sagemaker/Clusters/c1/abcdef123456\"}]}");
	fake_reply(&fs, 200, NULL, "{\"events\":[{\"logStreamName\":\"LifecycleConfig/w/i-1\",\"timestamp\":5,\"message\":\"ERROR x\"}]}");
	fake_reply(&fs, 200, NULL, "{\"events\":[]}");
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), 0);
	T_EQ(cJSON_GetArraySize(hp_snapshot_get(&snap, "events")), 2);
	T_ASSERT(cJSON_IsTrue(hp_snapshot_get(&snap, "events_truncated")));
	logs = hp_snapshot_get(&snap, "logs");
	T_ASSERT(hp_json_bool(logs, "group_found", 0));
	T_EQ(hp_json_len(logs, "lifecycle"), 1);
	T_EQ(hp_json_len(logs, "hma"), 0);
	/* --node narrows the stream prefix to the node's own streams. */
	T_CONTAINS(fs.req_body[8], "\"logStreamNamePrefix\":\"LifecycleConfig/w/i-1\"");
	T_CONTAINS(fs.req_body[9], "\"logStreamNamePrefix\":\"SagemakerHealthMonitoringAgent/w/i-1\"");
}

static void t_events_skipped_without_continuous_mode(void)
{
	struct hp_collect_opts o = { "c1", NULL, 0, 0 };
	struct hp_error e = HP_ERROR_INIT;
	size_t i;

	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, "{\"ClusterArn\":\"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456\","
		   "\"ClusterName\":\"c1\",\"ClusterStatus\":\"InService\",\"InstanceGroups\":[]}");
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[]}");
	fake_reply(&fs, 200, NULL, "{\"logGroups\":[]}");
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), 0);
	T_ASSERT(hp_snapshot_get(&snap, "events") == NULL);
	T_CONTAINS(hp_json_str(snap.root, "events_skipped"), "legacy");
	for (i = 0; i < fs.nreq; i++)
		T_NOT_CONTAINS(fs.req_headers[i], "ListClusterEvents");
	T_STREQ(hp_json_str(hp_snapshot_get(&snap, "meta"), "orchestrator"), "Slurm");
}

/* A failed STS preflight says what happened; only credential errors are credential problems (exit 4). */
static void t_sts_preflight_says_what_happened(void)
{
	static const struct {
		long status;
		const char *headers, *body;
		enum hp_err code;
		const char *says, *never;
	} cases[] = {
		{ 400, NULL, "<ErrorResponse><Error><Code>Throttling</Code><Message>Rate exceeded</Message></Error></ErrorResponse>",
		  HP_ERR_API, "AWS STS throttled the credentials check", "credentials not configured" },
		{ 500, NULL, "<ErrorResponse><Error><Code>InternalFailure</Code><Message>oops</Message></Error></ErrorResponse>",
		  HP_ERR_API, "AWS STS service error on the credentials check (sts:GetCallerIdentity, HTTP 500)",
		  "credentials not configured" },
		{ 200, "Content-Type: text/html\r\n", "<html><body>captive portal</body></html>",
		  HP_ERR_PARSE, "malformed reply (HTTP 200): reply is text/html, not XML", "credentials not configured" },
		{ 200, NULL, "", HP_ERR_PARSE, "malformed reply", "credentials not configured" },
		{ 400, NULL, "<ErrorResponse><Error><Code>ExpiredToken</Code><Message>expired</Message></Error></ErrorResponse>",
		  HP_ERR_CREDS, "ExpiredToken", "throttled" },
		{ 403, NULL, "<ErrorResponse><Error><Code>InvalidClientTokenId</Code><Message>bad</Message></Error></ErrorResponse>",
		  HP_ERR_CREDS, "AWS credentials not configured or expired", "throttled" },
	};
	size_t i;
	int k;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct hp_collect_opts o = { "c1", NULL, 0, 0 };
		struct hp_error e = HP_ERROR_INIT;

		setup();
		aws.max_attempts = 3;
		for (k = 0; k < 3; k++)
			fake_reply(&fs, cases[i].status, cases[i].headers, cases[i].body);
		T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), -1);
		T_EQ(e.code, cases[i].code);
		T_CONTAINS(e.msg, cases[i].says);
		T_NOT_CONTAINS(e.msg, cases[i].never);
		T_EQ(hp_err_exit_status(e.code), cases[i].code == HP_ERR_CREDS ? HP_EXIT_CREDS : HP_EXIT_FATAL);
	}
}

/* An HTML page served for DescribeCluster is an error, never a phantom cluster. */
static void t_html_describe_cluster_is_fatal(void)
{
	struct hp_collect_opts o = { "c1", NULL, 0, 0 };
	struct hp_error e = HP_ERROR_INIT;

	setup();
	aws.max_attempts = 3;
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, "Content-Type: text/html\r\n", "<html><body>Sign in</body></html>");
	fake_reply(&fs, 200, "Content-Type: text/html\r\n", "<html><body>Sign in</body></html>");
	fake_reply(&fs, 200, NULL, cluster_ok);
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), -1);
	T_EQ(e.code, HP_ERR_API);
	T_CONTAINS(e.msg, "cannot describe cluster 'c1': MalformedReply");
	T_ASSERT(hp_snapshot_get(&snap, "cluster") == NULL);
	/* Asked twice (one retry), then given up. */
	T_EQ(fs.nreq, 3);
}

T_MAIN(T(t_events_skipped_without_continuous_mode), T(t_full_collection_and_node_cap), T(t_denied_page_drops_partial_list),
       T(t_node_not_found_is_recorded), T(t_cluster_not_found_lists_clusters),
       T(t_bad_credentials_are_fatal), T(t_events_cap_and_log_streams),
       T(t_sts_preflight_says_what_happened), T(t_html_describe_cluster_is_fatal))
