/*
 * hp_collect_cluster with its steps running at once, against a fake that
 * answers by operation from any thread: the snapshot equals the one-at-a-
 * time run whatever order the replies come back in, the node pager really
 * overlaps the network reads, a failed call is recorded in its sequential
 * place, the run budget cuts calls on every thread, and the client counts
 * the connections the transport opened. The fake's handler runs on worker
 * threads, so it never asserts: it notes what it saw for the test.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-sys.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "hp/tasks.h"
#include "t.h"

#define WAIT_MS 5000


struct route {
	const char *op;
	long status;
	const char *body;
};

/* The replies of a healthy EKS cluster with one VPC, by operation. */
static const struct route healthy[] = {
	{ "GetCallerIdentity", 200,
	  "<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/t</Arn>"
	  "<Account>123456789012</Account><UserId>AIDAEXAMPLE</UserId></GetCallerIdentityResult>"
	  "</GetCallerIdentityResponse>" },
	{ "DescribeCluster", 200,
	  "{\"ClusterArn\":\"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456\","
	  "\"ClusterName\":\"c1\",\"ClusterStatus\":\"InService\",\"NodeProvisioningMode\":\"Continuous\","
	  "\"Orchestrator\":{\"Eks\":{\"ClusterArn\":\"arn:aws:eks:us-west-2:123456789012:cluster/e\"}},"
	  "\"VpcConfig\":{\"SecurityGroupIds\":[\"sg-1\"],\"Subnets\":[\"subnet-1\"]},"
	  "\"InstanceGroups\":[{\"InstanceGroupName\":\"w\",\"InstanceType\":\"ml.p5.48xlarge\"}]}" },
	{ "ListClusterEvents", 200,
	  "{\"Events\":[{\"EventId\":\"ev-1\",\"EventLevel\":\"Error\",\"EventTime\":100,"
	  "\"Description\":\"node failed\"},{\"EventId\":\"ev-2\",\"EventLevel\":\"Info\",\"EventTime\":90}]}" },
	{ "DescribeClusterEvent", 200,
	  "{\"EventDetails\":{\"EventId\":\"ev-1\",\"EventDetails\":{\"EventMetadata\":{\"Instance\":"
	  "{\"FailureMessage\":\"lifecycle script failed\"}}}}}" },
	{ "DescribeInstanceTypes", 200,
	  "<DescribeInstanceTypesResponse><instanceTypeSet><item><instanceType>p5.48xlarge</instanceType>"
	  "</item></instanceTypeSet></DescribeInstanceTypesResponse>" },
	{ "DescribeLogGroups", 200,
	  "{\"logGroups\":[{\"logGroupName\":\"/aws/sagemaker/Clusters/c1/abcdef123456\"}]}" },
	{ "FilterLogEvents", 200,
	  "{\"events\":[{\"logStreamName\":\"LifecycleConfig/w/i-1\",\"timestamp\":1,\"message\":\"error: x\"}]}" },
	{ "eks:DescribeCluster", 200,
	  "{\"cluster\":{\"name\":\"e\",\"resourcesVpcConfig\":{\"securityGroupIds\":[\"sg-2\"],"
	  "\"clusterSecurityGroupId\":\"sg-3\"}}}" },
	{ "DescribeSecurityGroups", 200,
	  "<DescribeSecurityGroupsResponse><securityGroupInfo>"
	  "<item><groupId>sg-1</groupId><vpcId>vpc-1</vpcId></item>"
	  "<item><groupId>sg-2</groupId><vpcId>vpc-1</vpcId></item>"
	  "<item><groupId>sg-3</groupId><vpcId>vpc-1</vpcId></item>"
	  "</securityGroupInfo></DescribeSecurityGroupsResponse>" },
	{ "DescribeSubnets", 200,
	  "<DescribeSubnetsResponse><subnetSet><item><subnetId>subnet-1</subnetId><vpcId>vpc-1</vpcId>"
	  "<availabilityZone>us-west-2a</availabilityZone></item></subnetSet></DescribeSubnetsResponse>" },
	{ "DescribeVpcs", 200,
	  "<DescribeVpcsResponse><vpcSet><item><vpcId>vpc-1</vpcId></item></vpcSet></DescribeVpcsResponse>" },
	{ "DescribeVpcAttribute", 200, NULL },   /* built from the request */
	{ "DescribeRouteTables", 200,
	  "<DescribeRouteTablesResponse><routeTableSet><item><routeTableId>rtb-1</routeTableId>"
	  "<vpcId>vpc-1</vpcId></item></routeTableSet></DescribeRouteTablesResponse>" },
	{ "DescribeVpcEndpoints", 200,
	  "<DescribeVpcEndpointsResponse><vpcEndpointSet><item><vpcEndpointId>vpce-1</vpcEndpointId>"
	  "</item></vpcEndpointSet></DescribeVpcEndpointsResponse>" },
	{ "DescribeNetworkInterfaces", 200,
	  "<DescribeNetworkInterfacesResponse><networkInterfaceSet><item><vpcId>vpc-1</vpcId></item>"
	  "</networkInterfaceSet></DescribeNetworkInterfacesResponse>" },
	{ "GetServiceQuota", 200,
	  "{\"Quota\":{\"Value\":5000,\"QuotaName\":\"Network interfaces per Region\"}}" },
	{ "DescribeInstanceTypeOfferings", 200,
	  "<DescribeInstanceTypeOfferingsResponse><instanceTypeOfferingSet><item>"
	  "<instanceType>p5.48xlarge</instanceType><location>us-west-2a</location></item>"
	  "</instanceTypeOfferingSet></DescribeInstanceTypeOfferingsResponse>" },
};

static const char denied_json[] =
	"{\"__type\":\"AccessDeniedException\",\"message\":\"User: u is not authorized to perform: x\"}";
static const char denied_xml[] =
	"<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are not authorized to "
	"perform this operation.</Message></Error></Errors></Response>";

/* What the fake does, and what it saw. */
struct scene {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	unsigned seed;              /* per-reply delays from it (0: none) */
	const char *deny;           /* this operation is refused */
	const char *hold_page;      /* hold this node page's reply ... */
	const char *until_op;       /* ... until this operation has been answered */
	int held_timeout;           /* the hold gave up: the calls did not overlap */
	int answered_until;
	int ec2_timeout;            /* every EC2 request times out */
	int ec2_sent;               /* EC2 requests that reached the fake */
	int late_clock;             /* advance the clock past the budget after: 1 both first reads
				     * (identity and DescribeCluster, sent at once), 2 page 1 */
	int64_t late_ms;
	int first_reads;            /* of GetCallerIdentity and DescribeCluster, answered */
	int first_connection_done;
};

static struct fake_sys fs;
static struct hp_aws aws;
static struct scene sc;
/* Requests of one healthy collection: STS, DescribeCluster, 3 node pages, events and one
 * event's details, instance types, the log group and its 2 searches, then EKS, groups,
 * subnets, VPCs, 2 DNS attributes, routes, endpoints, ENIs, the quota, offerings. */
#define HEALTHY_REQUESTS 22

/* The operation a request names: X-Amz-Target, Action=, or the EKS path. */
static void op_of(const struct hp_http_req *req, char *op, size_t n)
{
	size_t i;

	op[0] = '\0';
	for (i = 0; i < req->nheaders; i++)
		if (!strcmp(req->headers[i].name, "X-Amz-Target")) {
			const char *dot = strchr(req->headers[i].value, '.');
			hp_strlcpy(op, dot ? dot + 1 : req->headers[i].value, n);
			return;
		}
	if (!strcmp(req->method, "GET")) {
		hp_strlcpy(op, "eks:DescribeCluster", n);
		return;
	}
	if (req->body && hp_starts_with(req->body, "Action=")) {
		size_t len = strcspn(req->body + 7, "&");
		snprintf(op, n, "%.*s", (int)len, req->body + 7);
	}
}

static int page_of(const char *body)
{
	const char *t = strstr(body ? body : "", "\"NextToken\":\"p");
	return t ? atoi(t + 14) : 1;
}

static void nodes_page(struct hp_buf *b, int page)
{
	int i;

	hp_buf_puts(b, "{\"ClusterNodeSummaries\":[");
	for (i = 0; i < 3; i++)
		hp_buf_printf(b, "%s{\"InstanceId\":\"i-%d%d\",\"InstanceGroupName\":\"w\",\"InstanceStatus\":"
			      "{\"Status\":\"Running\"}}", i ? "," : "", page, i);
	if (page < 3)
		hp_buf_printf(b, "],\"NextToken\":\"p%d\"}", page + 1);
	else
		hp_buf_puts(b, "]}");
}

static int until_answered(void)
{
	return sc.answered_until;
}

static int route(struct fake_sys *f, const struct hp_http_req *req, struct hp_http_resp *resp)
{
	char op[64];
	const struct route *r = NULL;
	size_t i;
	int xml, ec2;

	(void)f;
	op_of(req, op, sizeof(op));
	pthread_mutex_lock(&sc.lock);
	if (!sc.first_connection_done) {
		/* The first request opens a connection; the rest reuse it. */
		resp->connects = 1;
		sc.first_connection_done = 1;
	}
	if (sc.hold_page && !strcmp(op, "ListClusterNodes") &&
	    page_of(req->body) == atoi(sc.hold_page)) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += WAIT_MS / 1000;
		while (!until_answered())
			if (pthread_cond_timedwait(&sc.cv, &sc.lock, &until) == ETIMEDOUT) {
				sc.held_timeout = 1;
				break;
			}
	}
	ec2 = req->body && hp_starts_with(req->body, "Action=") && strcmp(op, "GetCallerIdentity");
	if (ec2)
		sc.ec2_sent++;
	pthread_mutex_unlock(&sc.lock);
	if (ec2 && sc.ec2_timeout) {
		resp->net = HP_NET_TIMEOUT;
		hp_strlcpy(resp->errmsg, "fake: timed out", sizeof(resp->errmsg));
		return -1;
	}
	if (sc.seed) {
		/* A delay of 0-3 ms from the operation and the seed: a different end order per seed. */
		unsigned h = sc.seed;
		const char *c;

		for (c = op; *c; c++)
			h = h * 31 + (unsigned char)*c;
		h = h * 2654435761u + (unsigned)page_of(req->body);
		nanosleep(&(struct timespec){ 0, (long)((h >> 8) % 3000) * 1000 }, NULL);
	}
	for (i = 0; i < HP_ARRAY_LEN(healthy); i++)
		if (!strcmp(healthy[i].op, op))
			r = &healthy[i];
	xml = req->body && hp_starts_with(req->body, "Action=");
	hp_buf_puts(&resp->headers, xml ? "Content-Type: text/xml\r\n" :
		    "Content-Type: application/x-amz-json-1.1\r\n");
	if (sc.deny && !strcmp(sc.deny, op)) {
		resp->status = xml ? 403 : 400;
		hp_buf_puts(&resp->body, xml ? denied_xml : denied_json);
	} else if (!strcmp(op, "ListClusterNodes")) {
		resp->status = 200;
		nodes_page(&resp->body, page_of(req->body));
	} else if (!strcmp(op, "DescribeVpcAttribute")) {
		const char *attr = strstr(req->body, "Attribute=") + 10;
		size_t n = strcspn(attr, "&");

		resp->status = 200;
		hp_buf_printf(&resp->body, "<DescribeVpcAttributeResponse><vpcId>vpc-1</vpcId><%.*s><value>true"
			      "</value></%.*s></DescribeVpcAttributeResponse>", (int)n, attr, (int)n, attr);
	} else if (r) {
		resp->status = r->status;
		hp_buf_puts(&resp->body, r->body);
	} else {
		resp->status = 400;
		hp_buf_printf(&resp->body, "{\"__type\":\"UnknownOperationException\",\"message\":\"%s\"}", op);
	}
	pthread_mutex_lock(&sc.lock);
	if (sc.until_op && !strcmp(sc.until_op, op)) {
		sc.answered_until = 1;
		pthread_cond_broadcast(&sc.cv);
	}
	if (!strcmp(op, "GetCallerIdentity") || !strcmp(op, "DescribeCluster"))
		sc.first_reads++;
	if ((sc.late_clock == 1 && sc.first_reads == 2 &&
	     (!strcmp(op, "GetCallerIdentity") || !strcmp(op, "DescribeCluster"))) ||
	    (sc.late_clock == 2 && !strcmp(op, "ListClusterNodes") && page_of(req->body) == 1))
		fake_advance(&fs, sc.late_ms);
	pthread_mutex_unlock(&sc.lock);
	return 0;
}

static void scene_reset(void)
{
	fake_aws(&fs, &aws, 1);
	fs.handler = route;
	memset(&sc, 0, sizeof(sc));
	pthread_mutex_init(&sc.lock, NULL);
	pthread_cond_init(&sc.cv, NULL);
}

/* One collection at the given concurrency; the snapshot as text (meta.collected_at_ms is fixed). */
static char *collect(int concurrency, struct hp_snapshot *keep)
{
	struct hp_collect_opts o = { "c1", NULL, 0, 0 };
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot s;
	char *out;

	aws.concurrency = concurrency;
	hp_snapshot_init(&s);
	if (hp_collect_cluster(&aws, &o, &s, &e))
		T_FAILF("collection failed: %s", e.msg);
	out = cJSON_PrintUnformatted(s.root);
	if (keep)
		*keep = s;
	else
		hp_snapshot_release(&s);
	return out;
}

static const cJSON *call_named(const struct hp_snapshot *s, const char *action)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, hp_snapshot_get(s, "calls")) {
		const char *a = hp_json_str(c, "action");

		if (a && !strcmp(a, action))
			return c;
	}
	return NULL;
}

/* The names of obj's members, comma-separated, in order. */
static void keys_of(const cJSON *obj, char *out, size_t n)
{
	const cJSON *it;
	size_t len = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(it, obj)
		len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s", len ? "," : "",
					it->string);
}

static void t_snapshot_is_the_sequential_one_for_any_reply_order(void)
{
	char keys[400];
	struct hp_snapshot s;
	char *want, *got;
	unsigned seed;

	scene_reset();
	want = collect(1, &s);
	/* The sequential run read everything. */
	T_EQ(cJSON_GetArraySize(hp_snapshot_get(&s, "nodes")), 9);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(hp_snapshot_get(&s, "events"), 0),
			    "EventDetails.EventMetadata.Instance.FailureMessage"), "lifecycle script failed");
	T_ASSERT(hp_json_bool(hp_snapshot_get(&s, "logs"), "group_found", 0));
	T_EQ(hp_json_num(hp_snapshot_get(&s, "network"), "eni_quota.value", 0), 5000);
	T_ASSERT(cJSON_GetObjectItemCaseSensitive(hp_json_get(hp_snapshot_get(&s, "network"), "offerings"),
						  "p5.48xlarge") != NULL);
	T_ASSERT(cJSON_IsObject(hp_json_get(hp_snapshot_get(&s, "network"), "vpc_attributes.vpc-1")));
	T_ASSERT(hp_snapshot_get(&s, "calls") == NULL);
	T_EQ(fs.nreq, HEALTHY_REQUESTS);
	/* The order the sequential collectors always wrote in (as the build before tasks did). */
	keys_of(s.root, keys, sizeof(keys));
	T_STREQ(keys, "version,meta,identity,cluster,nodes,nodes_truncated,events,events_truncated,"
		"events_details_capped,events_details_failed,events_details_cap,instance_types,logs,network");
	keys_of(hp_snapshot_get(&s, "network"), keys, sizeof(keys));
	T_STREQ(keys, "sg_ids,subnet_ids,eks_name,eks,eks_sg_ids,security_groups,security_group_errors,"
		"subnets,subnet_errors,vpcs,vpc_attributes,route_tables,route_tables_truncated,"
		"vpc_endpoints,vpc_endpoints_truncated,enis,eni_quota,offerings");
	hp_snapshot_release(&s);
	for (seed = 1; seed <= 12; seed++) {
		scene_reset();
		sc.seed = seed;
		got = collect(8, NULL);
		if (strcmp(got, want)) {
			free(got);
			free(want);
			T_FAILF("seed %u: the concurrent snapshot differs from the sequential one", seed);
		}
		free(got);
		T_EQ(fs.nreq, HEALTHY_REQUESTS);
	}
	free(want);
}

static void t_node_pager_overlaps_the_network_reads(void)
{
	struct hp_snapshot s;
	char *out;

	scene_reset();
	/* Page 2 of the node list is answered only after the offerings, the last network read. */
	sc.hold_page = "2";
	sc.until_op = "DescribeInstanceTypeOfferings";
	out = collect(8, &s);
	T_EQ(sc.held_timeout, 0);
	T_EQ(cJSON_GetArraySize(hp_snapshot_get(&s, "nodes")), 9);
	T_ASSERT(hp_json_get(hp_snapshot_get(&s, "network"), "offerings") != NULL);
	free(out);
	hp_snapshot_release(&s);
}

static void t_failed_concurrent_call_is_recorded_in_place(void)
{
	static const char *const ops[] = { "DescribeSubnets", "FilterLogEvents", "ListClusterEvents",
					   "DescribeSecurityGroups", "ListClusterNodes" };
	size_t k;

	for (k = 0; k < HP_ARRAY_LEN(ops); k++) {
		struct hp_snapshot s;
		char *want, *got;
		const cJSON *c;

		scene_reset();
		sc.deny = ops[k];
		want = collect(1, NULL);
		scene_reset();
		sc.deny = ops[k];
		sc.seed = 7 + (unsigned)k;
		got = collect(8, &s);
		c = call_named(&s, ops[k]);
		T_ASSERT(c != NULL);
		T_STREQ(hp_json_str(c, "class"), "denied");
		if (strcmp(got, want))
			T_FAILF("%s denied: the concurrent snapshot differs from the sequential one", ops[k]);
		free(want);
		free(got);
		hp_snapshot_release(&s);
	}
}

static void t_budget_spent_before_the_steps_cuts_them_all(void)
{
	static const char *const order[] = {
		"ListClusterNodes", "ListClusterEvents", "DescribeInstanceTypes", "DescribeLogGroups",
		"DescribeCluster", "DescribeSecurityGroups", "DescribeSubnets", "DescribeNetworkInterfaces",
		"GetServiceQuota",
	};
	struct hp_snapshot s;
	const cJSON *c;
	char *out;
	size_t i = 0;

	scene_reset();
	aws.deadline_ms = fake_now(&fs) + 1000;
	aws.budget_s = 1;
	sc.late_clock = 1;
	sc.late_ms = 2000;
	out = collect(8, &s);
	/* Identity and DescribeCluster were sent; nothing after them. */
	T_EQ(fs.nreq, 2);
	T_ASSERT(hp_snapshot_get(&s, "nodes") == NULL && hp_snapshot_get(&s, "instance_types") == NULL);
	cJSON_ArrayForEach(c, hp_snapshot_get(&s, "calls")) {
		T_STREQ(hp_json_str(c, "code"), "RunBudgetExceeded");
		T_CONTAINS(hp_json_str(c, "message"), "--max-runtime 1 s");
		if (i < HP_ARRAY_LEN(order))
			T_STREQ(hp_json_str(c, "action"), order[i]);
		i++;
	}
	T_EQ(i, HP_ARRAY_LEN(order));
	free(out);
	hp_snapshot_release(&s);
}

/* Each fact is either there or its call is recorded: a cut never reads as an empty result. */
static void t_budget_spent_mid_pager_leaves_no_silent_gap(void)
{
	static const struct { const char *key, *action; } facts[] = {
		{ "events", "ListClusterEvents" }, { "instance_types", "DescribeInstanceTypes" },
		{ "logs", "DescribeLogGroups" },
	};
	struct hp_snapshot s;
	const cJSON *c;
	char *out;
	size_t i;

	scene_reset();
	aws.deadline_ms = fake_now(&fs) + 1000;
	aws.budget_s = 1;
	sc.late_clock = 2;
	sc.late_ms = 2000;
	sc.seed = 3;
	out = collect(8, &s);
	T_ASSERT(hp_snapshot_get(&s, "nodes") == NULL);
	c = call_named(&s, "ListClusterNodes");
	T_ASSERT(c != NULL);
	T_STREQ(hp_json_str(c, "code"), "RunBudgetExceeded");
	for (i = 0; i < HP_ARRAY_LEN(facts); i++)
		if (!hp_snapshot_get(&s, facts[i].key) && !call_named(&s, facts[i].action))
			T_FAILF("%s is absent and %s is not recorded", facts[i].key, facts[i].action);
	free(out);
	hp_snapshot_release(&s);
}

/*
 * EC2 (on its own endpoint) times out on every request, and timeouts are
 * retried (3 attempts): the four EC2 reads would send 12 requests, but the
 * breaker opens after 3 consecutive timeouts however many were in flight,
 * so at most 3 more (the other EC2 slots) are sent. Every EC2 read is
 * recorded as a timeout; the other services' reads are untouched.
 */
static void t_breaker_holds_across_concurrent_calls(void)
{
	struct hp_snapshot s;
	const cJSON *c;
	char *out;
	int recorded = 0;

	scene_reset();
	aws.max_attempts = 3;
	hp_strlcpy(aws.endpoint[HP_SVC_EC2], "http://127.0.0.1:10", sizeof(aws.endpoint[HP_SVC_EC2]));
	sc.ec2_timeout = 1;
	out = collect(8, &s);
	T_ASSERT(sc.ec2_sent >= HP_AWS_BREAKER_LIMIT);
	T_ASSERT(sc.ec2_sent <= HP_AWS_BREAKER_LIMIT + hp_task_limit(HP_SVC_EC2) - 1);
	cJSON_ArrayForEach(c, hp_snapshot_get(&s, "calls")) {
		T_STREQ(hp_json_str(c, "service"), "ec2");
		T_STREQ(hp_json_str(c, "code"), "Timeout");
		recorded++;
	}
	/* DescribeInstanceTypes, DescribeSecurityGroups, DescribeSubnets, DescribeNetworkInterfaces. */
	T_EQ(recorded, 4);
	T_EQ(cJSON_GetArraySize(hp_snapshot_get(&s, "nodes")), 9);
	T_ASSERT(hp_json_bool(hp_snapshot_get(&s, "logs"), "group_found", 0));
	T_ASSERT(hp_snapshot_get(&s, "instance_types") == NULL);
	free(out);
	hp_snapshot_release(&s);
}

static void t_connections_opened_are_counted(void)
{
	char *out;

	scene_reset();
	out = collect(8, NULL);
	T_EQ(aws.stats.calls, HEALTHY_REQUESTS);
	T_EQ(aws.stats.connections, 1);
	free(out);
}

T_MAIN(T(t_snapshot_is_the_sequential_one_for_any_reply_order), T(t_node_pager_overlaps_the_network_reads),
       T(t_failed_concurrent_call_is_recorded_in_place), T(t_budget_spent_before_the_steps_cuts_them_all),
       T(t_budget_spent_mid_pager_leaves_no_silent_gap), T(t_breaker_holds_across_concurrent_calls),
       T(t_connections_opened_are_counted))
