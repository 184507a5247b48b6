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

/*
 * The node cap counts nodes, not pages: one page of 250 with a cap of two
 * pages keeps 200 and says the list was cut; an id listed twice (across
 * pages or in one) is kept once and named.
 */
static void t_node_cap_per_node_and_duplicates(void)
{
	struct hp_collect_opts o = { "c1", NULL, 0, 2 };
	struct hp_error e = HP_ERROR_INIT;
	struct hp_buf page = HP_BUF_INIT(1 << 20);
	const cJSON *dups;
	int i;

	hp_buf_puts(&page, "{\"ClusterNodeSummaries\":[{\"InstanceId\":\"i-1\"},{\"InstanceId\":\"i-1\"}");
	for (i = 2; i <= 250; i++)
		hp_buf_printf(&page, ",{\"InstanceId\":\"i-%d\"}", i);
	hp_buf_puts(&page, ",{\"InstanceId\":\"i-7\"}]}");
	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, cluster_ok);
	fake_reply(&fs, 200, NULL, page.buf);
	queue_tail();
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), 0);
	T_EQ(cJSON_GetArraySize(hp_snapshot_get(&snap, "nodes")), 200);
	T_ASSERT(cJSON_IsTrue(hp_snapshot_get(&snap, "nodes_truncated")));
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_snapshot_get(&snap, "nodes"), 1), "InstanceId"), "i-2");
	dups = hp_snapshot_get(&snap, "nodes_duplicates");
	T_EQ(cJSON_GetArraySize(dups), 2);
	T_STREQ(cJSON_GetArrayItem(dups, 0)->valuestring, "i-1");
	T_STREQ(cJSON_GetArrayItem(dups, 1)->valuestring, "i-7");
	hp_buf_release(&page);
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

/*
 * A silent STS endpoint: the preflight gives up after two attempts of at
 * most 6 s each (no time judged: the attempts and the limit asked for are
 * counted), naming the endpoint; the calls after it keep the run's limit.
 */
static void t_sts_preflight_silent_endpoint(void)
{
	struct hp_collect_opts o = { "c1", NULL, 0, 0 };
	struct hp_error e = HP_ERROR_INIT;

	setup();
	aws.max_attempts = 3;
	aws.timeout_ms = 30000;
	fake_net_error(&fs, HP_NET_TIMEOUT);
	fake_net_error(&fs, HP_NET_TIMEOUT);
	fake_net_error(&fs, HP_NET_TIMEOUT);
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), -1);
	T_EQ(fs.nreq, 2);
	T_EQ(fs.req_timeout_ms, 6000);
	T_EQ(e.code, HP_ERR_HTTP);
	T_CONTAINS(e.msg, "cannot reach AWS STS at '");
	T_ASSERT(strstr(e.msg, aws.endpoint[HP_SVC_STS]) != NULL);
	T_CONTAINS(e.msg, "(2 attempts, 6 s each at most)");
	T_EQ(aws.timeout_ms, 30000);
	T_EQ(aws.max_attempts, 3);
	/* A later call has its own limit again. */
	setup();
	aws.timeout_ms = 30000;
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, cluster_ok);
	queue_tail();
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), 0);
	T_EQ(fs.req_timeout_ms, 30000);
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

/* A DescribeCluster reply about another cluster than the one asked for is an error. */
static void t_describe_cluster_other_name_is_fatal(void)
{
	struct hp_collect_opts o = { "c2", NULL, 0, 0 };
	struct hp_error e = HP_ERROR_INIT;

	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, cluster_ok);
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), -1);
	T_EQ(e.code, HP_ERR_API);
	T_CONTAINS(e.msg, "DescribeCluster answered for cluster 'c1' when 'c2' was asked for");
	T_ASSERT(hp_snapshot_get(&snap, "cluster") == NULL);
}


static const char cluster_parts[] =
	"{\"ClusterArn\":\"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456\","
	"\"ClusterName\":\"c1\",\"ClusterStatus\":\"InService\",\"NodeProvisioningMode\":\"Continuous\","
	"\"InstanceGroups\":[{\"InstanceGroupName\":\"login\",\"InstanceType\":\"ml.m5.xlarge\",\"CurrentCount\":50},"
	"{\"InstanceGroupName\":\"gpu\",\"InstanceType\":\"ml.p5.48xlarge\",\"CurrentCount\":400},"
	"{\"InstanceGroupName\":\"gpu-b\",\"InstanceType\":\"ml.p5.48xlarge\",\"CurrentCount\":50}]}";

#define NODE(id, g, t) "{\"InstanceId\":\"" id "\",\"InstanceGroupName\":\"" g "\",\"LaunchTime\":" #t "}"

/*
 * More than a page: one partition per group whose name holds no other's
 * ("gpu" covers "gpu-b"), the large one read as its oldest and newest page,
 * then creation-time windows reaching past their edges; nodes read twice
 * are kept once, a node of another group is dropped, and the list is
 * sorted by creation time, then id.
 */
static void t_node_list_partitions(void)
{
	struct hp_collect_opts o = { "c1", NULL, 0, 0 };
	struct hp_error e = HP_ERROR_INIT;
	const cJSON *n;
	char ids[256] = "";

	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, cluster_parts);
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[" NODE("i-l1", "login", 50) ","
		   NODE("i-x1", "login-old", 51) "]}");
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[" NODE("i-g1", "gpu", 100) ","
		   NODE("i-g2", "gpu", 100) "," NODE("i-b1", "gpu-b", 100) "],\"NextToken\":\"a1\"}");
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[" NODE("i-g9", "gpu", 200) ","
		   NODE("i-g8", "gpu", 160) "],\"NextToken\":\"d1\"}");
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[" NODE("i-g2", "gpu", 100) ","
		   NODE("i-g3", "gpu", 130) "]}");
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[" NODE("i-g3", "gpu", 130) ","
		   NODE("i-g4", "gpu", 150) "," NODE("i-g8", "gpu", 160) "]}");
	queue_tail();
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), 0);
	T_CONTAINS(fs.req_body[2], "\"InstanceGroupNameContains\":\"login\"");
	T_CONTAINS(fs.req_body[3], "\"InstanceGroupNameContains\":\"gpu\"");
	T_CONTAINS(fs.req_body[3], "\"SortOrder\":\"Ascending\"");
	T_NOT_CONTAINS(fs.req_body[3], "CreationTime");
	T_CONTAINS(fs.req_body[4], "\"SortOrder\":\"Descending\"");
	/* Between the oldest page's last time (100) and the newest page's (160): two windows. */
	T_CONTAINS(fs.req_body[5], "\"CreationTimeAfter\":98");
	T_CONTAINS(fs.req_body[5], "\"CreationTimeBefore\":132");
	T_CONTAINS(fs.req_body[6], "\"CreationTimeAfter\":128");
	T_CONTAINS(fs.req_body[6], "\"CreationTimeBefore\":162");
	T_NOT_CONTAINS(fs.req_body[6], "NextToken");
	T_CONTAINS(fs.req_headers[6], "ListClusterNodes");
	T_NOT_CONTAINS(fs.req_headers[7], "ListClusterNodes");
	cJSON_ArrayForEach(n, hp_snapshot_get(&snap, "nodes")) {
		strcat(ids, hp_json_str(n, "InstanceId"));
		strcat(ids, " ");
	}
	T_STREQ(ids, "i-l1 i-b1 i-g1 i-g2 i-g3 i-g4 i-g8 i-g9 ");
	T_ASSERT(cJSON_IsFalse(hp_snapshot_get(&snap, "nodes_truncated")));
	T_ASSERT(hp_snapshot_get(&snap, "nodes_partial") == NULL);
	T_EQ(hp_json_num(snap.root, "nodes_pages", 0), 5);
}

/* A window that fails keeps what the rest read and names the groups it cut; a refusal keeps nothing. */
static void t_node_list_partition_cut(void)
{
	struct hp_collect_opts o = { "c1", NULL, 0, 0 };
	struct hp_error e = HP_ERROR_INIT;
	const cJSON *c;

	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, cluster_parts);
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[" NODE("i-l1", "login", 50) "]}");
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[" NODE("i-g1", "gpu", 100) "],"
		   "\"NextToken\":\"a1\"}");
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[" NODE("i-g9", "gpu", 200) "],"
		   "\"NextToken\":\"d1\"}");
	fake_reply(&fs, 400, NULL, "{\"__type\":\"ValidationException\",\"message\":\"bad window\"}");
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[" NODE("i-g5", "gpu", 170) "]}");
	queue_tail();
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), 0);
	T_EQ(cJSON_GetArraySize(hp_snapshot_get(&snap, "nodes")), 4);
	c = hp_snapshot_get(&snap, "nodes_partial");
	T_EQ(cJSON_GetArraySize(c), 2);
	T_ASSERT(hp_json_has_str(c, "gpu") && hp_json_has_str(c, "gpu-b"));
	c = find_call("ListClusterNodes");
	T_ASSERT(c != NULL);
	T_STREQ(hp_json_str(c, "code"), "ValidationException");

	setup();
	fake_reply(&fs, 200, NULL, sts_ok);
	fake_reply(&fs, 200, NULL, cluster_parts);
	fake_reply(&fs, 400, NULL, "{\"__type\":\"AccessDeniedException\",\"message\":\"not authorized\"}");
	queue_tail();
	T_EQ(hp_collect_cluster(&aws, &o, &snap, &e), 0);
	T_ASSERT(hp_snapshot_get(&snap, "nodes") == NULL);
	T_STREQ(hp_json_str(find_call("ListClusterNodes"), "class"), "denied");
	/* After the refusal no other node page was asked for. */
	T_CONTAINS(fs.req_headers[2], "ListClusterNodes");
	T_NOT_CONTAINS(fs.req_headers[3], "ListClusterNodes");
}

T_MAIN(T(t_describe_cluster_other_name_is_fatal), T(t_node_list_partitions), T(t_node_list_partition_cut),
       T(t_events_skipped_without_continuous_mode), T(t_full_collection_and_node_cap),
       T(t_node_cap_per_node_and_duplicates), T(t_denied_page_drops_partial_list),
       T(t_node_not_found_is_recorded), T(t_cluster_not_found_lists_clusters),
       T(t_bad_credentials_are_fatal), T(t_events_cap_and_log_streams),
       T(t_sts_preflight_says_what_happened), T(t_sts_preflight_silent_endpoint),
       T(t_html_describe_cluster_is_fatal))
