/*
 * The AWS client against canned replies: request shapes of each protocol,
 * error parsing from every shape, classification, retries and backoff, and
 * the XML-to-JSON conversion.
 */
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "hp/aws.h"
#include "hp/json.h"
#include "t.h"

static struct fake_sys fs;
static struct hp_aws aws;

static void setup(void)
{
	fake_aws(&fs, &aws, 3);
}

static void t_json_request_shape(void)
{
	struct hp_aws_result r;
	cJSON *in;

	setup();
	fake_reply(&fs, 200, "x-amzn-RequestId: abc\r\n", "{\"ClusterArn\":\"arn:c1\",\"ClusterName\":\"c1\",\"ClusterStatus\":\"InService\",\"InstanceGroups\":[]}");
	in = cJSON_CreateObject();
	cJSON_AddStringToObject(in, "ClusterName", "c1");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "DescribeCluster", in, &r), 0);
	cJSON_Delete(in);
	T_EQ(r.cls, HP_AWS_OK);
	T_STREQ(hp_json_str(r.json, "ClusterName"), "c1");
	T_STREQ(r.request_id, "abc");
	T_STREQ(fs.req_method[0], "POST");
	T_STREQ(fs.req_url[0], "http://127.0.0.1:9/");
	T_STREQ(fs.req_body[0], "{\"ClusterName\":\"c1\"}");
	T_CONTAINS(fs.req_headers[0], "X-Amz-Target: SageMaker.DescribeCluster\n");
	T_CONTAINS(fs.req_headers[0], "Content-Type: application/x-amz-json-1.1\n");
	T_CONTAINS(fs.req_headers[0], "X-Amz-Date: 20150830T123600Z\n");
	T_CONTAINS(fs.req_headers[0], "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-west-2/sagemaker/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=");
	T_NOT_CONTAINS(fs.req_headers[0], "X-Amz-Security-Token");
	hp_aws_result_release(&r);
}

static void t_session_token_is_sent_and_signed(void)
{
	struct hp_aws_result r;

	setup();
	aws.creds.session_token = (char *)(uintptr_t)"TOKEN123";
	fake_reply(&fs, 200, NULL, "{\"logGroups\":[]}");
	T_EQ(hp_aws_json(&aws, HP_SVC_LOGS, "DescribeLogGroups", NULL, &r), 0);
	T_STREQ(fs.req_body[0], "{}");
	T_CONTAINS(fs.req_headers[0], "X-Amz-Security-Token: TOKEN123\n");
	T_CONTAINS(fs.req_headers[0], "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target");
	T_CONTAINS(fs.req_headers[0], "X-Amz-Target: Logs_20140328.DescribeLogGroups");
	hp_aws_result_release(&r);
}

static void t_rest_get_shape(void)
{
	struct hp_aws_result r;

	setup();
	fake_reply(&fs, 200, NULL, "{\"cluster\":{\"name\":\"e\"}}");
	T_EQ(hp_aws_rest_get(&aws, HP_SVC_EKS, "DescribeCluster", "/clusters/e", &r), 0);
	T_STREQ(fs.req_method[0], "GET");
	T_STREQ(fs.req_url[0], "http://127.0.0.1:9/clusters/e");
	T_CONTAINS(fs.req_headers[0], "SignedHeaders=host;x-amz-date,");
	T_STREQ(hp_json_str(r.json, "cluster.name"), "e");
	hp_aws_result_release(&r);
}

/* botocore's join of an endpoint's path prefix and the operation's path. */
static void t_endpoint_path_prefix(void)
{
	static const struct {
		const char *endpoint;
		int rest;
		const char *url;
	} cases[] = {
		{ "http://127.0.0.1:9/p", 0, "http://127.0.0.1:9/p" },
		{ "http://127.0.0.1:9/p/", 0, "http://127.0.0.1:9/p/" },
		{ "http://127.0.0.1:9/p", 1, "http://127.0.0.1:9/p/clusters/e" },
		{ "http://127.0.0.1:9/p/", 1, "http://127.0.0.1:9/p/clusters/e" },
		{ "http://127.0.0.1:9", 0, "http://127.0.0.1:9/" },
		{ "http://127.0.0.1:9", 1, "http://127.0.0.1:9/clusters/e" },
	};
	struct hp_aws_result r;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		setup();
		hp_strlcpy(aws.endpoint[HP_SVC_EKS], cases[i].endpoint, sizeof(aws.endpoint[0]));
		hp_strlcpy(aws.endpoint[HP_SVC_LOGS], cases[i].endpoint, sizeof(aws.endpoint[0]));
		if (cases[i].rest) {
			fake_reply(&fs, 200, NULL, "{\"cluster\":{\"name\":\"e\"}}");
			T_EQ(hp_aws_rest_get(&aws, HP_SVC_EKS, "DescribeCluster", "/clusters/e", &r), 0);
		} else {
			fake_reply(&fs, 200, NULL, "{\"logGroups\":[]}");
			T_EQ(hp_aws_json(&aws, HP_SVC_LOGS, "DescribeLogGroups", NULL, &r), 0);
		}
		T_STREQ(fs.req_url[0], cases[i].url);
		hp_aws_result_release(&r);
	}
}

static void t_query_ec2_xml(void)
{
	struct hp_aws_params p = { 0 };
	struct hp_aws_result r;
	const cJSON *it;

	setup();
	fake_reply(&fs, 200, NULL,
		   "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<DescribeSubnetsResponse xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">"
		   "<requestId>r1</requestId><subnetSet>"
		   "<item><subnetId>subnet-1</subnetId><availableIpAddressCount>12</availableIpAddressCount>"
		   "<tagSet/><name>a &amp; b</name></item>"
		   "<item><subnetId>subnet-2</subnetId></item></subnetSet></DescribeSubnetsResponse>");
	hp_aws_params_add(&p, "SubnetId.1", "subnet-1");
	hp_aws_params_add(&p, "Filter.1.Name", "vpc-id");
	T_EQ(hp_aws_query(&aws, HP_SVC_EC2, "DescribeSubnets", &p, &r), 0);
	hp_aws_params_release(&p);
	T_STREQ(fs.req_body[0], "Action=DescribeSubnets&Version=2016-11-15&SubnetId.1=subnet-1&Filter.1.Name=vpc-id");
	T_CONTAINS(fs.req_headers[0], "Content-Type: application/x-www-form-urlencoded; charset=utf-8");
	T_CONTAINS(fs.req_headers[0], "/us-west-2/ec2/aws4_request");
	T_EQ(hp_json_len(r.json, "subnetSet"), 2);
	it = cJSON_GetArrayItem(hp_json_arr(r.json, "subnetSet"), 0);
	T_STREQ(hp_json_str(it, "subnetId"), "subnet-1");
	T_EQ(hp_json_num(it, "availableIpAddressCount", -1), 12);
	T_STREQ(hp_json_str(it, "name"), "a & b");
	T_ASSERT(cJSON_IsArray(hp_json_get(it, "tagSet")));
	hp_aws_result_release(&r);
}

static void t_query_sts_unwraps_result(void)
{
	struct hp_aws_result r;

	setup();
	fake_reply(&fs, 200, NULL,
		   "<GetCallerIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
		   "<GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/x</Arn>"
		   "<UserId>AID</UserId><Account>123456789012</Account></GetCallerIdentityResult>"
		   "<ResponseMetadata><RequestId>q</RequestId></ResponseMetadata></GetCallerIdentityResponse>");
	T_EQ(hp_aws_query(&aws, HP_SVC_STS, "GetCallerIdentity", NULL, &r), 0);
	T_STREQ(fs.req_body[0], "Action=GetCallerIdentity&Version=2011-06-15");
	T_STREQ(hp_json_str(r.json, "Account"), "123456789012");
	hp_aws_result_release(&r);
}

static const struct {
	long status;
	const char *headers, *body;
	const char *code;
	enum hp_aws_class cls;
	const char *msg_part;
} error_cases[] = {
	{ 400, "x-amzn-ErrorType: AccessDeniedException:http://internal\r\n",
	  "{\"__type\":\"com.amazon#AccessDeniedException\",\"message\":\"User: u is not authorized to perform: sagemaker:ListClusterNodes\"}",
	  "AccessDeniedException", HP_AWS_DENIED, "not authorized" },
	{ 400, NULL, "{\"__type\":\"ValidationException\",\"Message\":\"Could not find cluster 'nope'.\"}",
	  "ValidationException", HP_AWS_NOT_FOUND, "Could not find" },
	{ 404, "X-Amzn-ErrorType: ResourceNotFoundException\r\n",
	  "{\"message\":\"No cluster found for name: x.\"}", "ResourceNotFoundException", HP_AWS_NOT_FOUND, "No cluster" },
	{ 403, NULL,
	  "<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are not authorized to perform this operation.</Message></Error></Errors><RequestID>rid</RequestID></Response>",
	  "UnauthorizedOperation", HP_AWS_DENIED, "not authorized" },
	{ 403, NULL,
	  "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code><Message>The security token included in the request is invalid.</Message></Error></ErrorResponse>",
	  "InvalidClientTokenId", HP_AWS_AUTH, "security token" },
	{ 403, NULL,
	  "<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code><Message>sig</Message></Error></ErrorResponse>",
	  "SignatureDoesNotMatch", HP_AWS_AUTH, "sig" },
	{ 400, NULL, "{\"Error\":{\"Code\":\"ExpiredToken\",\"Message\":\"expired\"},\"RequestId\":\"x\"}",
	  "ExpiredToken", HP_AWS_AUTH, "expired" },
	{ 400, NULL, "{\"__type\":\"InvalidParameterException\",\"message\":\"bad\"}",
	  "InvalidParameterException", HP_AWS_CLIENT, "bad" },
	{ 404, NULL, "", "HTTP404", HP_AWS_CLIENT, "" },
	{ 400, NULL, "<Response><Errors><Error><Code>InvalidGroup.NotFound</Code><Message>no sg</Message></Error></Errors></Response>",
	  "InvalidGroup.NotFound", HP_AWS_NOT_FOUND, "no sg" },
};

static void t_error_shapes(void)
{
	size_t i;

	for (i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		struct hp_aws_result r;

		setup();
		fake_reply(&fs, error_cases[i].status, error_cases[i].headers, error_cases[i].body);
		T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "X", NULL, &r), -1);
		T_STREQ(r.code, error_cases[i].code);
		if (r.cls != error_cases[i].cls)
			T_FAILF("case %zu (%s): class %s, expected %s", i, error_cases[i].code,
				hp_aws_class_name(r.cls), hp_aws_class_name(error_cases[i].cls));
		T_CONTAINS(r.message, error_cases[i].msg_part);
		T_EQ(r.attempts, 1);
		T_ASSERT(r.json == NULL);
		hp_aws_result_release(&r);
	}
}

static void t_throttle_is_retried_with_backoff(void)
{
	struct hp_aws_result r;

	setup();
	fake_reply(&fs, 400, NULL, "{\"__type\":\"ThrottlingException\",\"message\":\"Rate exceeded\"}");
	fake_reply(&fs, 503, NULL, "<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>slow</Message></Error></Errors></Response>");
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[]}");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "ListClusterNodes", NULL, &r), 0);
	T_EQ(r.attempts, 3);
	T_EQ(fs.nreq, 3);
	/* fake random() is 0.5: backoff 0.5 * 1 s, then 0.5 * 2 s. */
	T_EQ(fs.slept_ms, 500 + 1000);
	T_EQ(aws.stats.retries, 2);
	hp_aws_result_release(&r);
}

static void t_retries_stop_at_max_attempts(void)
{
	struct hp_aws_result r;

	setup();
	fake_reply(&fs, 400, NULL, "{\"__type\":\"ThrottlingException\"}");
	fake_reply(&fs, 400, NULL, "{\"__type\":\"ThrottlingException\"}");
	fake_reply(&fs, 400, NULL, "{\"__type\":\"ThrottlingException\"}");
	fake_reply(&fs, 200, NULL, "{}");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "ListClusterNodes", NULL, &r), -1);
	T_EQ(r.cls, HP_AWS_THROTTLED);
	T_EQ(r.attempts, 3);
	T_EQ(fs.nreq, 3);
	hp_aws_result_release(&r);
}

static void t_server_and_network_errors_retry(void)
{
	struct hp_aws_result r;

	setup();
	fake_net_error(&fs, HP_NET_CONNECT);
	fake_reply(&fs, 500, NULL, "{\"__type\":\"InternalFailure\"}");
	fake_reply(&fs, 200, NULL, "{\"ClusterArn\":\"arn:c1\",\"ClusterName\":\"c1\",\"ClusterStatus\":\"InService\",\"InstanceGroups\":[]}");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "DescribeCluster", NULL, &r), 0);
	T_EQ(r.attempts, 3);
	hp_aws_result_release(&r);

	setup();
	fake_net_error(&fs, HP_NET_TIMEOUT);
	fake_net_error(&fs, HP_NET_TIMEOUT);
	fake_net_error(&fs, HP_NET_TIMEOUT);
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "DescribeCluster", NULL, &r), -1);
	T_EQ(r.cls, HP_AWS_NETWORK);
	T_STREQ(r.code, "Timeout");
	hp_aws_result_release(&r);
}

static void t_client_errors_are_not_retried(void)
{
	struct hp_aws_result r;

	setup();
	fake_reply(&fs, 400, NULL, "{\"__type\":\"AccessDeniedException\",\"message\":\"no\"}");
	fake_reply(&fs, 200, NULL, "{}");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "ListClusterEvents", NULL, &r), -1);
	T_EQ(fs.nreq, 1);
	T_EQ(r.cls, HP_AWS_DENIED);
	hp_aws_result_release(&r);
}

static void t_retry_quota_limits_retries(void)
{
	struct hp_aws_result r;

	setup();
	aws.retry_tokens = 4; /* less than one retry costs */
	fake_reply(&fs, 503, NULL, "");
	fake_reply(&fs, 200, NULL, "{}");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "DescribeCluster", NULL, &r), -1);
	T_EQ(fs.nreq, 1);
	T_EQ(r.cls, HP_AWS_SERVER);
	hp_aws_result_release(&r);
}

static void t_malformed_reply_is_parse_error(void)
{
	struct hp_aws_result r;

	setup();
	fake_reply(&fs, 200, NULL, "{\"truncated\": [1, 2");
	fake_reply(&fs, 200, NULL, "{\"truncated\": [1, 2");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "DescribeCluster", NULL, &r), -1);
	T_EQ(r.cls, HP_AWS_PARSE);
	hp_aws_result_release(&r);
	setup();
	fake_reply(&fs, 200, NULL, "<a><b></a>");
	fake_reply(&fs, 200, NULL, "<a><b></a>");
	T_EQ(hp_aws_query(&aws, HP_SVC_EC2, "DescribeVpcs", NULL, &r), -1);
	T_EQ(r.cls, HP_AWS_PARSE);
	hp_aws_result_release(&r);
}

/* A 200 reply is data only with the protocol's type, shape and members; else malformed, asked twice. */
static void t_malformed_200_is_never_data(void)
{
	static const struct {
		int query;               /* 1: ec2 DescribeSubnets; 0: sagemaker DescribeCluster */
		const char *headers, *body, *why;
	} cases[] = {
		{ 0, NULL, "", "body is empty" },
		{ 0, "Content-Type: text/html; charset=utf-8\r\n",
		  "<html><body>Sign in</body></html>", "text/html" },
		{ 0, "Content-Type: text/xml\r\n", "<DescribeClusterResponse/>", "not JSON" },
		{ 0, NULL, "[1,2]", "not a JSON object" },
		{ 0, NULL, "{\"ClusterArn\":\"a\",\"ClusterStatus\":\"InService\",\"InstanceGroups\":[]}{\"x\":1}",
		  "not valid JSON" },
		{ 0, NULL, "{}", "no string 'ClusterArn'" },
		{ 0, NULL, "{\"ClusterArn\":\"a\",\"ClusterStatus\":\"InService\"}",
		  "no list 'InstanceGroups'" },
		{ 0, "Content-Type: \r\n", "{\"ClusterArn\":\"a\",\"ClusterStatus\":\"InService\",\"InstanceGroups\":[]}",
		  "no Content-Type" },
		{ 1, "Content-Type: text/xml\r\n", "", "body is empty" },
		{ 1, "Content-Type: application/json\r\n", "{\"subnetSet\":[]}", "not XML" },
		{ 1, "Content-Type: text/html\r\n", "<html><body>hi</body></html>", "text/html" },
		{ 1, NULL, "<html><body>hi</body></html>", "<html> document" },
		{ 1, NULL, "<DescribeSubnetsResponse><requestId>r</requestId></DescribeSubnetsResponse>",
		  "no list 'subnetSet'" },
		{ 1, NULL, "<DescribeSubnetsResponse><subnetSet><item>", "not valid XML" },
	};
	struct hp_aws_result r_ok;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct hp_aws_result r;
		int rc;

		setup();
		fake_reply(&fs, 200, cases[i].headers, cases[i].body);
		fake_reply(&fs, 200, cases[i].headers, cases[i].body);
		fake_reply(&fs, 200, cases[i].headers, cases[i].body);
		if (cases[i].query)
			rc = hp_aws_query(&aws, HP_SVC_EC2, "DescribeSubnets", NULL, &r);
		else
			rc = hp_aws_json(&aws, HP_SVC_SAGEMAKER, "DescribeCluster", NULL, &r);
		T_EQ(rc, -1);
		T_EQ(r.cls, HP_AWS_PARSE);
		T_STREQ(r.code, "MalformedReply");
		T_CONTAINS(r.message, "malformed reply (HTTP 200)");
		T_CONTAINS(r.message, cases[i].why);
		T_ASSERT(r.json == NULL);
		/* Retried once, like a transient error, then given up. */
		T_EQ(fs.nreq, 2);
		T_EQ(r.attempts, 2);
		hp_aws_result_release(&r);
	}
	/* A malformed reply followed by a good one: the retry reads it. */
	setup();
	fake_reply(&fs, 200, "Content-Type: text/html\r\n", "<html/>");
	fake_reply(&fs, 200, NULL, "{\"ClusterArn\":\"a\",\"ClusterStatus\":\"InService\",\"InstanceGroups\":[]}");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "DescribeCluster", NULL, &r_ok), 0);
	T_STREQ(hp_json_str(r_ok.json, "ClusterStatus"), "InService");
	hp_aws_result_release(&r_ok);
	/* STS needs its <GetCallerIdentityResult>. */
	setup();
	fake_reply(&fs, 200, NULL, "<GetCallerIdentityResponse><ResponseMetadata/></GetCallerIdentityResponse>");
	fake_reply(&fs, 200, NULL, "<GetCallerIdentityResponse><ResponseMetadata/></GetCallerIdentityResponse>");
	T_EQ(hp_aws_query(&aws, HP_SVC_STS, "GetCallerIdentity", NULL, &r_ok), -1);
	T_EQ(r_ok.cls, HP_AWS_PARSE);
	hp_aws_result_release(&r_ok);
}

/* The run budget: attempts are cut to what is left, and nothing is sent once it is spent. */
static void t_run_budget(void)
{
	struct hp_aws_result r;

	setup();
	aws.budget_s = 20;
	aws.deadline_ms = fs.sys.monotonic_ms(&fs.sys) + 400;
	T_EQ(hp_aws_budget_left_ms(&aws), 400);
	fake_net_error(&fs, HP_NET_TIMEOUT);
	fake_net_error(&fs, HP_NET_TIMEOUT);
	fake_net_error(&fs, HP_NET_TIMEOUT);
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "DescribeCluster", NULL, &r), -1);
	T_STREQ(r.code, "Timeout");
	hp_aws_result_release(&r);
	T_EQ(fs.req_timeout_ms, 400);
	T_ASSERT(fs.slept_ms <= 400);

	setup();
	aws.budget_s = 20;
	aws.deadline_ms = fs.sys.monotonic_ms(&fs.sys);
	fake_reply(&fs, 200, NULL, "{\"logGroups\":[]}");
	T_EQ(hp_aws_json(&aws, HP_SVC_LOGS, "DescribeLogGroups", NULL, &r), -1);
	T_EQ(fs.nreq, 0);
	T_EQ(r.cls, HP_AWS_NETWORK);
	T_STREQ(r.code, "RunBudgetExceeded");
	T_CONTAINS(r.message, "--max-runtime 20 s");
	hp_aws_result_release(&r);
	T_EQ(hp_aws_budget_left_ms(&aws), 0);
}

/* After HP_AWS_BREAKER_LIMIT timeouts in a row to one endpoint, its calls fail fast. */
static void t_circuit_breaker(void)
{
	struct hp_aws_result r;
	int i;

	setup();
	hp_strlcpy(aws.endpoint[HP_SVC_LOGS], "http://127.0.0.1:7", sizeof(aws.endpoint[0]));
	for (i = 0; i < 3; i++)
		fake_net_error(&fs, HP_NET_TIMEOUT);
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "ListClusterNodes", NULL, &r), -1);
	T_EQ(fs.nreq, 3);
	hp_aws_result_release(&r);
	/* Same endpoint (ec2 shares http://127.0.0.1:9): not sent, same error. */
	fake_reply(&fs, 200, NULL, "<DescribeVpcsResponse><vpcSet/></DescribeVpcsResponse>");
	T_EQ(hp_aws_query(&aws, HP_SVC_EC2, "DescribeVpcs", NULL, &r), -1);
	T_EQ(fs.nreq, 3);
	T_EQ(r.cls, HP_AWS_NETWORK);
	T_STREQ(r.code, "Timeout");
	T_CONTAINS(r.message, "not sent: the last 3 requests to http://127.0.0.1:9 timed out");
	hp_aws_result_release(&r);
	/* Another endpoint is still asked. */
	fs.next_reply = fs.nreplies;
	fake_reply(&fs, 200, NULL, "{\"logGroups\":[]}");
	T_EQ(hp_aws_json(&aws, HP_SVC_LOGS, "DescribeLogGroups", NULL, &r), 0);
	T_EQ(fs.nreq, 4);
	hp_aws_result_release(&r);

	/* A reply in between resets the count. */
	setup();
	fake_net_error(&fs, HP_NET_TIMEOUT);
	fake_net_error(&fs, HP_NET_TIMEOUT);
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[]}");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "ListClusterNodes", NULL, &r), 0);
	hp_aws_result_release(&r);
	fake_net_error(&fs, HP_NET_TIMEOUT);
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[]}");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "ListClusterNodes", NULL, &r), 0);
	hp_aws_result_release(&r);
}

static void t_xml_edge_cases(void)
{
	char root[32];
	cJSON *j;

	const char *doc = "<r><a>1</a><a>2</a><a>3</a><b><item><c>x</c></item></b></r>";
	const char *bomb = "<!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><r>&b;</r>";

	j = hp_xml_to_json(doc, strlen(doc), root, sizeof(root));
	T_ASSERT(j != NULL);
	T_STREQ(root, "r");
	T_EQ(hp_json_len(j, "a"), 3);
	T_EQ(hp_json_len(j, "b"), 1);
	cJSON_Delete(j);
	T_ASSERT(hp_xml_to_json("", 0, NULL, 0) == NULL);
	T_ASSERT(hp_xml_to_json("<r>", 3, NULL, 0) == NULL);
	/* An entity-expansion bomb must not parse into something huge. */
	j = hp_xml_to_json(bomb, strlen(bomb), NULL, 0);
	if (j) {
		T_ASSERT(strlen(hp_json_str(j, "") ? hp_json_str(j, "") : "") < 1000);
		cJSON_Delete(j);
	}
}

static void t_classify_table(void)
{
	T_EQ(hp_aws_classify(200, ""), HP_AWS_OK);
	T_EQ(hp_aws_classify(400, "RequestLimitExceeded"), HP_AWS_THROTTLED);
	T_EQ(hp_aws_classify(429, "TooManyRequestsException"), HP_AWS_THROTTLED);
	T_EQ(hp_aws_classify(403, "AccessDenied"), HP_AWS_DENIED);
	T_EQ(hp_aws_classify(401, "AuthFailure"), HP_AWS_AUTH);
	T_EQ(hp_aws_classify(400, "InvalidSubnetID.NotFound"), HP_AWS_NOT_FOUND);
	T_EQ(hp_aws_classify(400, "InvalidInstanceType"), HP_AWS_NOT_FOUND);
	T_EQ(hp_aws_classify(502, "HTTP502"), HP_AWS_SERVER);
	T_EQ(hp_aws_classify(400, "ValidationException"), HP_AWS_CLIENT);
	T_ASSERT(hp_aws_is_throttle_code("EC2ThrottledException"));
	T_ASSERT(!hp_aws_is_throttle_code("AccessDenied"));
}

/*
 * A list kept by the thousand (ListClusterNodes) has its names and values
 * in the shared table; a reply kept once per node (StartSession) keeps its
 * own, so a sweep's session ids never grow the table for good.
 */
static void t_list_replies_share_strings(void)
{
	struct hp_aws_result r;
	const cJSON *n;

	setup();
	fake_reply(&fs, 200, NULL, "{\"ClusterNodeSummaries\":[{\"InstanceId\":\"i-1\","
		   "\"InstanceStatus\":{\"Status\":\"Running\"}}]}");
	fake_reply(&fs, 200, NULL, "{\"SessionId\":\"hpnode-0123456789abcdef0\","
		   "\"StreamUrl\":\"wss://x\",\"TokenValue\":\"t\"}");
	T_EQ(hp_aws_json(&aws, HP_SVC_SAGEMAKER, "ListClusterNodes", NULL, &r), 0);
	n = cJSON_GetArrayItem(hp_json_arr(r.json, "ClusterNodeSummaries"), 0);
	T_ASSERT(n != NULL);
	T_ASSERT(cJSON_GetObjectItemCaseSensitive(n, "InstanceId")->type & cJSON_IsReference);
	T_ASSERT(cJSON_GetObjectItemCaseSensitive(n, "InstanceId")->type & cJSON_StringIsConst);
	T_STREQ(hp_json_str(n, "InstanceStatus.Status"), "Running");
	hp_aws_result_release(&r);
	T_EQ(hp_aws_json(&aws, HP_SVC_SSM, "StartSession", NULL, &r), 0);
	n = cJSON_GetObjectItemCaseSensitive(r.json, "SessionId");
	T_ASSERT(n != NULL && !(n->type & cJSON_IsReference) && !(n->type & cJSON_StringIsConst));
	T_STREQ(n->valuestring, "hpnode-0123456789abcdef0");
	hp_aws_result_release(&r);
}

T_MAIN(T(t_json_request_shape), T(t_session_token_is_sent_and_signed), T(t_rest_get_shape),
       T(t_endpoint_path_prefix),
       T(t_query_ec2_xml), T(t_query_sts_unwraps_result), T(t_error_shapes),
       T(t_throttle_is_retried_with_backoff), T(t_retries_stop_at_max_attempts),
       T(t_server_and_network_errors_retry), T(t_client_errors_are_not_retried),
       T(t_retry_quota_limits_retries), T(t_malformed_reply_is_parse_error), T(t_malformed_200_is_never_data),
       T(t_run_budget), T(t_circuit_breaker), T(t_xml_edge_cases),
       T(t_classify_table), T(t_list_replies_share_strings))
