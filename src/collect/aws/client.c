/*
 * The AWS client: builds a request for one of the four wire protocols,
 * signs it, sends it through hp_sys, retries in the "standard" mode and
 * classifies every failure. Pagination and the meaning of replies belong
 * to the collectors.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hp/array.h"
#include "hp/json.h"
#include "hp/aws.h"
#include "hp/sigv4.h"

#define DEFAULT_ATTEMPTS 3
#define RETRY_QUOTA 500
#define RETRY_COST 5
#define RETRY_COST_TIMEOUT 10
#define BACKOFF_CAP_MS 20000
#define DEFAULT_TIMEOUT_MS 30000L

static const struct {
	enum hp_svc svc;
	const char *target_prefix;  /* JSON 1.1 X-Amz-Target prefix */
	const char *query_version;  /* query protocols */
} protocols[] = {
	{ HP_SVC_SAGEMAKER, "SageMaker.", NULL },
	{ HP_SVC_EKS, NULL, NULL },
	{ HP_SVC_EC2, NULL, "2016-11-15" },
	{ HP_SVC_LOGS, "Logs_20140328.", NULL },
	{ HP_SVC_SSM, "AmazonSSM.", NULL },
	{ HP_SVC_QUOTAS, "ServiceQuotasV20190624.", NULL },
	{ HP_SVC_STS, NULL, "2011-06-15" },
	{ HP_SVC_S3, NULL, NULL },   /* rest-xml: src/collect/aws/s3.c sends its own requests */
};

static const char *const throttle_codes[] = {
	"Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
	"TooManyRequestsException", "ProvisionedThroughputExceededException",
	"TransactionInProgressException", "RequestLimitExceeded", "BandwidthLimitExceeded",
	"LimitExceededException", "RequestThrottled", "SlowDown", "PriorRequestNotComplete",
	"EC2ThrottledException",
};

static const char *const denied_codes[] = {
	"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "AuthorizationError",
	"UnauthorizedException", "Forbidden",
};

static const char *const auth_codes[] = {
	"InvalidClientTokenId", "SignatureDoesNotMatch", "UnrecognizedClientException",
	"InvalidSignatureException", "ExpiredToken", "ExpiredTokenException",
	"IncompleteSignature", "IncompleteSignatureException", "MissingAuthenticationToken",
	"MissingAuthenticationTokenException", "AuthFailure", "RequestExpired",
	"InvalidAccessKeyId", "InvalidToken",
};

static const char *const not_found_codes[] = {
	"ResourceNotFound", "ResourceNotFoundException", "NoSuchResourceException",
	"NoSuchEntity", "NotFoundException",
};

static const char *const transient_codes[] = {
	"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete",
	"InternalFailure", "InternalError", "ServiceUnavailable", "InternalServerError",
};

static int in_list(const char *code, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(code, list[i]))
			return 1;
	return 0;
}

const char *hp_aws_class_name(enum hp_aws_class c)
{
	static const char *const names[] = {
		"ok", "denied", "throttled", "not_found", "auth", "client", "server", "network", "parse"
	};
	return (unsigned)c < HP_ARRAY_LEN(names) ? names[c] : "unknown";
}

int hp_aws_is_throttle_code(const char *code)
{
	return in_list(code, throttle_codes, HP_ARRAY_LEN(throttle_codes));
}

enum hp_aws_class hp_aws_classify(long status, const char *code)
{
	if (status >= 200 && status < 300)
		return HP_AWS_OK;
	if (hp_aws_is_throttle_code(code))
		return HP_AWS_THROTTLED;
	if (in_list(code, denied_codes, HP_ARRAY_LEN(denied_codes)))
		return HP_AWS_DENIED;
	if (in_list(code, auth_codes, HP_ARRAY_LEN(auth_codes)))
		return HP_AWS_AUTH;
	if (in_list(code, not_found_codes, HP_ARRAY_LEN(not_found_codes)) ||
	    hp_ends_with(code, ".NotFound") || hp_starts_with(code, "InvalidInstanceType"))
		return HP_AWS_NOT_FOUND;
	if (status >= 500)
		return HP_AWS_SERVER;
	return HP_AWS_CLIENT;
}

void hp_aws_result_release(struct hp_aws_result *r)
{
	cJSON_Delete(r->json);
	memset(r, 0, sizeof(*r));
}

/* "ns#Code" -> "Code", "Code:http://..." -> "Code". */
static void clean_code(const char *in, char *out, size_t n)
{
	const char *h = strrchr(in, '#');
	size_t len;

	if (h)
		in = h + 1;
	len = strcspn(in, ":");
	if (len >= n)
		len = n - 1;
	memcpy(out, in, len);
	out[len] = '\0';
}

static const char *first_str(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);

	if (!cJSON_IsString(v))
		v = cJSON_GetObjectItemCaseSensitive(o, b);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

void hp_aws_parse_error(const struct hp_http_resp *resp, struct hp_aws_result *out)
{
	const char *body = resp->body.buf;
	char hdr[128];
	const char *code = NULL, *msg = NULL;
	cJSON *j = NULL;

	out->code[0] = '\0';
	out->message[0] = '\0';
	if (!hp_http_resp_header(resp, "x-amzn-ErrorType", hdr, sizeof(hdr)) && hdr[0])
		clean_code(hdr, out->code, sizeof(out->code));
	while (*body == ' ' || *body == '\n' || *body == '\r' || *body == '\t')
		body++;
	if (*body == '{') {
		j = hp_json_parse(body, strlen(body), NULL);
		if (j) {
			const cJSON *err = cJSON_GetObjectItemCaseSensitive(j, "Error");
			if (cJSON_IsObject(err)) {  /* query protocol in JSON form */
				code = first_str(err, "Code", "code");
				msg = first_str(err, "Message", "message");
			} else {
				code = first_str(j, "__type", "code");
				if (!code)
					code = first_str(j, "Code", "Code");
				msg = first_str(j, "message", "Message");
			}
		}
	} else if (*body == '<') {
		char root[64];
		j = hp_xml_to_json(body, strlen(body), root, sizeof(root));
		if (j) {
			/* <Response><Errors><Error> or <ErrorResponse><Error>. */
			const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "Errors");
			if (cJSON_IsObject(e))
				e = cJSON_GetObjectItemCaseSensitive(e, "Error");
			if (cJSON_IsArray(e))
				e = cJSON_GetArrayItem(e, 0);
			if (!cJSON_IsObject(e))
				e = cJSON_GetObjectItemCaseSensitive(j, "Error");
			if (cJSON_IsObject(e)) {
				code = first_str(e, "Code", "code");
				msg = first_str(e, "Message", "message");
			}
			if (!out->request_id[0]) {
				const char *rid = first_str(j, "RequestID", "RequestId");
				if (rid)
					hp_strlcpy(out->request_id, rid, sizeof(out->request_id));
			}
		}
	} else if (*body) {
		msg = body;
	}
	/* An XML or JSON body code is more specific than the header when both exist. */
	if (code && *code)
		clean_code(code, out->code, sizeof(out->code));
	if (!out->code[0])
		snprintf(out->code, sizeof(out->code), "HTTP%ld", resp->status);
	if (msg)
		hp_strlcpy(out->message, msg, sizeof(out->message));
	cJSON_Delete(j);
}

static int svc_index(enum hp_svc svc)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(protocols); i++)
		if (protocols[i].svc == svc)
			return (int)i;
	hp_die("unknown service %d", (int)svc);
}

int hp_aws_init(struct hp_aws *a, struct hp_sys *sys, const struct hp_profile *p,
		const char *flag_region, const char *flag_endpoint, struct hp_buf *trace,
		struct hp_error *e)
{
	const char *src, *v;
	struct hp_creds_env cenv;
	struct hp_error re = HP_ERROR_INIT;
	struct hp_error se = HP_ERROR_INIT;
	char chain_sts[sizeof(a->endpoint[0])];
	int s, imds_absent = 0;

	memset(a, 0, sizeof(*a));
	a->sys = sys;
	a->max_attempts = DEFAULT_ATTEMPTS;
	a->retry_tokens = RETRY_QUOTA;
	a->timeout_ms = DEFAULT_TIMEOUT_MS;
	if (hp_region_resolve(sys, p, flag_region, a->region, sizeof(a->region), &src, &re)) {
		/* As the SDKs do, an EC2 instance's own region is the last resort. */
		if (re.code != HP_ERR_NO_REGION ||
		    hp_imds_region(sys, p, a->region, sizeof(a->region), &imds_absent)) {
			*e = e->code == HP_OK ? re : *e;
			return -1;
		}
		src = "instance metadata";
	}
	/*
	 * S3 is resolved by `bundle --upload` alone (src/cli/cmd-bundle.c): an S3
	 * setting meant for other tools never stops a read-only command.
	 */
	for (s = 0; s < HP_SVC__COUNT; s++)
		if (s != HP_SVC_S3 &&
		    hp_endpoint_resolve(sys, p, (enum hp_svc)s, a->region, flag_endpoint,
					a->endpoint[s], sizeof(a->endpoint[s]), e))
			return -1;
	a->ca_bundle = hp_ca_bundle(sys, p);
	v = hp_sys_env(sys, "AWS_MAX_ATTEMPTS");
	if (!v)
		v = hp_profile_config(p, "max_attempts");
	if (v) {
		char *end;
		long n = strtol(v, &end, 10);
		if (*end || n < 1 || n > 20)
			return hp_error_set(e, HP_ERR_CONFIG, "AWS_MAX_ATTEMPTS must be a number from 1 to 20, not '%s'", v);
		a->max_attempts = (int)n;
	}
	v = hp_sys_env(sys, "HPNODE_API_CONCURRENCY");
	if (v) {
		char *end;
		long n = strtol(v, &end, 10);
		if (*end || n < 1 || n > HP_AWS_CONCURRENCY_MAX)
			return hp_error_set(e, HP_ERR_CONFIG, "HPNODE_API_CONCURRENCY must be a number from 1 to %d, not '%s'",
					    HP_AWS_CONCURRENCY_MAX, v);
		a->concurrency = (int)n;
	}
	v = hp_sys_env(sys, "AWS_RETRY_MODE");
	if (v && strcmp(v, "standard") && strcmp(v, "legacy") && strcmp(v, "adaptive"))
		return hp_error_set(e, HP_ERR_CONFIG, "AWS_RETRY_MODE must be standard, legacy or adaptive, not '%s'", v);
	if (trace)
		hp_buf_printf(trace, "region: %s (from %s)\n", a->region, src);
	memset(&cenv, 0, sizeof(cenv));
	cenv.region = a->region;
	/*
	 * As in the CLI, --endpoint-url is the commands' endpoint: the STS calls
	 * of the credential chain use the configured STS endpoint.
	 */
	if (!flag_endpoint)
		cenv.sts_endpoint = a->endpoint[HP_SVC_STS];
	else if (!hp_endpoint_resolve(sys, p, HP_SVC_STS, a->region, NULL, chain_sts,
				      sizeof(chain_sts), &se))
		cenv.sts_endpoint = chain_sts;
	else
		cenv.sts_error = se.msg;  /* an error only if a role is to be assumed */
	cenv.ca_bundle = a->ca_bundle;
	cenv.imds_absent = imds_absent;
	if (hp_creds_provider_open(sys, p, &cenv, trace, &a->cp, e))
		return -1;
	a->owns_cp = 1;
	return 0;
}

void hp_aws_release(struct hp_aws *a)
{
	if (a->owns_cp)
		hp_creds_provider_close(a->cp);
	a->cp = NULL;
	a->owns_cp = 0;
	hp_creds_release(&a->creds);
}

const char *hp_creds_source_desc(const struct hp_aws *a)
{
	if (a->cp)
		return hp_creds_provider_desc(a->cp);
	return a->creds.source;
}

/* Split "scheme://host[:port][/prefix]" into host (with port) and path prefix. */
static void split_url(const char *url, char *host, size_t hn, char *prefix, size_t pn)
{
	const char *h = strstr(url, "://");
	const char *slash;

	h = h ? h + 3 : url;
	slash = strchr(h, '/');
	if (slash) {
		size_t n = (size_t)(slash - h);
		if (n >= hn)
			n = hn - 1;
		memcpy(host, h, n);
		host[n] = '\0';
		hp_strlcpy(prefix, slash, pn);
	} else {
		hp_strlcpy(host, h, hn);
		prefix[0] = '\0';
	}
}

static long backoff_ms(struct hp_aws *a, int attempt)
{
	long cap = 1000L << (attempt - 1 < 5 ? attempt - 1 : 5);
	double r = (double)a->sys->random(a->sys) / 4294967296.0;

	if (cap > BACKOFF_CAP_MS)
		cap = BACKOFF_CAP_MS;
	return (long)(r * (double)cap);
}

static int is_transient(const struct hp_http_resp *resp, const char *code)
{
	if (resp->net == HP_NET_CONNECT || resp->net == HP_NET_TIMEOUT || resp->net == HP_NET_IO)
		return 1;
	if (resp->net != HP_NET_OK)
		return 0;
	if (resp->status == 500 || resp->status == 502 || resp->status == 503 || resp->status == 504)
		return 1;
	return in_list(code, transient_codes, HP_ARRAY_LEN(transient_codes));
}

/* Seconds between our clock and the server's Date header, 0 when unknown. */
static long clock_skew_s(struct hp_aws *a, const struct hp_http_resp *resp)
{
	char date[64];
	struct tm tm;

	if (hp_http_resp_header(resp, "Date", date, sizeof(date)))
		return 0;
	memset(&tm, 0, sizeof(tm));
	if (!strptime(date, "%a, %d %b %Y %H:%M:%S GMT", &tm))
		return 0;
	return (long)(a->sys->now_ms(a->sys) / 1000 - (int64_t)timegm(&tm));
}

struct call {
	enum hp_svc svc;
	const char *op;
	const char *method;
	const char *path;           /* path relative to the endpoint */
	const char *content_type;   /* NULL: none */
	const char *target;         /* X-Amz-Target or NULL */
	const char *body;
	size_t body_len;
};

/*
 * A call that undoes what the run began (ssm:TerminateSession of a session
 * it opened): it is still sent after an interrupt, which ends everything else.
 */
static int cleanup_call(const struct call *c)
{
	return c->svc == HP_SVC_SSM && !strcmp(c->op, "TerminateSession");
}

/* Returns 0, -1 on a transport failure, -2 when no valid credentials exist (errmsg says why). */
static int send_once(struct hp_aws *a, const struct call *c, struct hp_http_resp *resp,
		     int64_t left_ms)
{
	const struct hp_svc_info *info = hp_svc_info(c->svc);
	char host[256], prefix[256], amzdate[17], date[9];
	struct hp_header hdr[8];
	struct hp_buf url = HP_BUF_INIT(4096), authz = HP_BUF_INIT(4096), path = HP_BUF_INIT(4096);
	struct hp_sigv4_params sp;
	struct hp_sigv4_request sr;
	struct hp_http_req req;
	size_t nh = 0;
	time_t now;
	struct hp_creds fresh;
	const struct hp_creds *cr = &a->creds;
	int rc;

	memset(&fresh, 0, sizeof(fresh));
	if (a->cp) {
		struct hp_error ce = HP_ERROR_INIT;

		if (hp_creds_provider_get(a->cp, a->debug, &fresh, &ce)) {
			hp_strlcpy(resp->errmsg, ce.msg, sizeof(resp->errmsg));
			hp_buf_release(&url);
			hp_buf_release(&path);
			return -2;
		}
		cr = &fresh;
	}
	now = (time_t)(a->sys->now_ms(a->sys) / 1000);
	split_url(a->endpoint[c->svc], host, sizeof(host), prefix, sizeof(prefix));
	/*
	 * botocore's join: the operation's path "/" is the endpoint's own path
	 * as configured ("/" when it has none); a longer path follows the
	 * prefix, with one slash between them.
	 */
	if (!strcmp(c->path, "/"))
		hp_buf_puts(&path, prefix[0] ? prefix : "/");
	else if (prefix[0] && prefix[strlen(prefix) - 1] == '/' && c->path[0] == '/')
		hp_buf_printf(&path, "%.*s%s", (int)strlen(prefix) - 1, prefix, c->path);
	else
		hp_buf_printf(&path, "%s%s", prefix, c->path);
	hp_buf_printf(&url, "%.*s%s", (int)(strlen(a->endpoint[c->svc]) - strlen(prefix)),
		      a->endpoint[c->svc], path.buf);
	hp_sigv4_amz_date(now, amzdate, date);
	hdr[nh++] = (struct hp_header){ "Host", host };
	hdr[nh++] = (struct hp_header){ "X-Amz-Date", amzdate };
	if (c->content_type)
		hdr[nh++] = (struct hp_header){ "Content-Type", c->content_type };
	if (c->target)
		hdr[nh++] = (struct hp_header){ "X-Amz-Target", c->target };
	if (cr->session_token)
		hdr[nh++] = (struct hp_header){ "X-Amz-Security-Token", cr->session_token };
	sp.access_key = cr->access_key;
	sp.secret_key = cr->secret_key;
	sp.session_token = cr->session_token;
	sp.region = a->region;
	sp.service = info->signing_name;
	sp.now = now;
	memset(&sr, 0, sizeof(sr));
	sr.method = c->method;
	sr.path = path.buf;
	sr.query = NULL;
	sr.headers = hdr;
	sr.nheaders = nh;
	sr.payload = c->body;
	sr.payload_len = c->body_len;
	if (hp_sigv4_sign(&sp, &sr, &authz)) {
		hp_buf_release(&url);
		hp_buf_release(&path);
		hp_strlcpy(resp->errmsg, "cannot sign request", sizeof(resp->errmsg));
		resp->net = HP_NET_IO;
		hp_creds_release(&fresh);
		return -1;
	}
	hdr[nh++] = (struct hp_header){ "Authorization", authz.buf };
	memset(&req, 0, sizeof(req));
	req.method = c->method;
	req.url = url.buf;
	req.headers = hdr;
	req.nheaders = nh;
	req.body = c->body;
	req.body_len = c->body_len;
	req.timeout_ms = a->timeout_ms;
	req.cleanup = cleanup_call(c);
	if (left_ms < req.timeout_ms)
		req.timeout_ms = left_ms > 1 ? (long)left_ms : 1;
	req.ca_bundle = a->ca_bundle;
	rc = a->sys->http(a->sys, &req, resp);
	hp_buf_release(&url);
	hp_buf_release(&path);
	hp_buf_release(&authz);
	hp_creds_release(&fresh);
	return rc;
}

/*
 * The members each operation's reply always carries (after the query
 * protocols' <OpResult> is unwrapped), by type: 's' string, 'a' array,
 * 'o' object, 'A' an array when present (the API model does not promise
 * it). A 2xx reply without them is not that operation's reply
 * (an error page, a proxy's answer, a cut body), never an empty result.
 * shared: a list read page by page and kept whole, thousands of items
 * repeating the same names and values, parsed with shared strings
 * (hp_json_parse_shared); other replies keep their own.
 */
static const struct {
	enum hp_svc svc;
	const char *op;
	const char *members;   /* "Name:t,Name:t" */
	int shared;
} reply_shapes[] = {
	{ HP_SVC_STS, "GetCallerIdentity", "Arn:s,Account:s,UserId:s", 0 },
	{ HP_SVC_SAGEMAKER, "DescribeCluster", "ClusterArn:s,ClusterStatus:s,InstanceGroups:a", 0 },
	{ HP_SVC_SAGEMAKER, "ListClusters", "ClusterSummaries:a", 1 },
	{ HP_SVC_SAGEMAKER, "ListClusterNodes", "ClusterNodeSummaries:a", 1 },
	{ HP_SVC_SAGEMAKER, "ListClusterEvents", "Events:A", 1 },
	{ HP_SVC_SAGEMAKER, "DescribeClusterNode", "NodeDetails:o", 0 },
	{ HP_SVC_EC2, "DescribeInstanceTypes", "instanceTypeSet:a", 0 },
	{ HP_SVC_EC2, "DescribeSecurityGroups", "securityGroupInfo:a", 0 },
	{ HP_SVC_EC2, "DescribeSubnets", "subnetSet:a", 0 },
	{ HP_SVC_EC2, "DescribeVpcs", "vpcSet:a", 0 },
	{ HP_SVC_EC2, "DescribeVpcAttribute", "vpcId:s", 0 },
	{ HP_SVC_EC2, "DescribeRouteTables", "routeTableSet:a", 0 },
	{ HP_SVC_EC2, "DescribeVpcEndpoints", "vpcEndpointSet:a", 0 },
	{ HP_SVC_EC2, "DescribeNetworkInterfaces", "networkInterfaceSet:a", 0 },
	{ HP_SVC_EC2, "DescribeInstanceTypeOfferings", "instanceTypeOfferingSet:a", 0 },
	{ HP_SVC_LOGS, "DescribeLogGroups", "logGroups:a", 0 },
	{ HP_SVC_LOGS, "FilterLogEvents", "events:a", 1 },
	{ HP_SVC_QUOTAS, "GetServiceQuota", "Quota:o", 0 },
	{ HP_SVC_EKS, "DescribeCluster", "cluster:o", 0 },
	{ HP_SVC_SSM, "StartSession", "SessionId:s", 0 },
};

/* The reply_shapes row of c's operation, or -1. */
static int shape_of(const struct call *c)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(reply_shapes); i++)
		if (reply_shapes[i].svc == c->svc && !strcmp(reply_shapes[i].op, c->op))
			return (int)i;
	return -1;
}

/* "" when j has every member the operation always returns, else what is missing. */
static void check_shape(const struct call *c, const cJSON *j, char *why, size_t n)
{
	int i = shape_of(c);
	const char *m = i >= 0 ? reply_shapes[i].members : "";

	why[0] = '\0';
	while (*m) {
		char name[64];
		size_t len = strcspn(m, ":");
		char type = m[len + 1];
		const cJSON *v;
		int ok;

		snprintf(name, sizeof(name), "%.*s", (int)len, m);
		v = cJSON_GetObjectItemCaseSensitive(j, name);
		ok = type == 's' ? cJSON_IsString(v) : type == 'a' ? cJSON_IsArray(v) :
		     type == 'A' ? !v || cJSON_IsArray(v) : cJSON_IsObject(v);
		if (!ok) {
			snprintf(why, n, "reply has no %s '%s'",
				 type == 's' ? "string" : type == 'o' ? "object" : "list", name);
			return;
		}
		m += len + 2;
		if (*m == ',')
			m++;
	}
}

/* The two families of wire formats: JSON (JSON 1.1, rest-json) or XML (the query protocols). */
static int wants_xml(const struct call *c)
{
	return protocols[svc_index(c->svc)].query_version != NULL;
}

/*
 * Turn a 2xx reply into data. It is data only when it has the protocol's
 * content type and shape (a JSON object; an <OpResponse> XML document) and
 * the members the operation always returns; otherwise -1 with why set.
 */
static int parse_ok(const struct call *c, const struct hp_http_resp *resp, struct hp_aws_result *out,
		    char *why, size_t why_n)
{
	const char *b = resp->body.buf;
	char ctype[128], root[128], want[160];
	int xml = wants_xml(c);
	cJSON *j;

	why[0] = '\0';
	hp_http_resp_header(resp, "Content-Type", ctype, sizeof(ctype));
	if (!ctype[0]) {
		snprintf(why, why_n, "reply has no Content-Type (expected %s)", xml ? "XML" : "JSON");
		return -1;
	}
	if (!hp_strcasestr(ctype, xml ? "xml" : "json")) {
		/* Remote text: kept short; the reporter sanitises it. */
		snprintf(why, why_n, "reply is %.60s, not %s", ctype, xml ? "XML" : "JSON");
		return -1;
	}
	while (*b == ' ' || *b == '\n' || *b == '\r' || *b == '\t')
		b++;
	if (!*b) {
		snprintf(why, why_n, "reply body is empty");
		return -1;
	}
	if (xml) {
		cJSON *res;

		if (*b != '<' || !(j = hp_xml_to_json(b, strlen(b), root, sizeof(root)))) {
			snprintf(why, why_n, "reply of %zu bytes is not valid XML", resp->body.len);
			return -1;
		}
		snprintf(want, sizeof(want), "%sResponse", c->op);
		if (strcmp(root, want) || !cJSON_IsObject(j)) {
			snprintf(why, why_n, "reply is a <%.60s> document, not <%s>", root, want);
			cJSON_Delete(j);
			return -1;
		}
		/* Query protocol: unwrap <OpResult> inside <OpResponse>. */
		snprintf(want, sizeof(want), "%sResult", c->op);
		res = cJSON_DetachItemFromObjectCaseSensitive(j, want);
		if (res) {
			cJSON_Delete(j);
			j = res;
			if (!cJSON_IsObject(j)) {
				cJSON_Delete(j);
				j = cJSON_CreateObject();
			}
		} else if (c->svc == HP_SVC_STS) {
			snprintf(why, why_n, "reply has no <%s>", want);
			cJSON_Delete(j);
			return -1;
		}
	} else {
		const char *end = NULL;
		int shape = shape_of(c);

		/* Shared strings: a list of 20,000 nodes repeats a few names and values. */
		j = shape >= 0 && reply_shapes[shape].shared ? hp_json_parse_shared(b, strlen(b), &end)
							       : hp_json_parse(b, strlen(b), &end);
		/* One JSON value and nothing after it (no second document, no NUL). */
		while (j && end && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
			end++;
		if (j && end != resp->body.buf + resp->body.len) {
			cJSON_Delete(j);
			j = NULL;
		}
		if (!cJSON_IsObject(j)) {
			snprintf(why, why_n, "reply of %zu bytes is not %s", resp->body.len,
				 j ? "a JSON object" : "valid JSON");
			cJSON_Delete(j);
			return -1;
		}
	}
	check_shape(c, j, why, why_n);
	if (why[0]) {
		cJSON_Delete(j);
		return -1;
	}
	out->json = j;
	return 0;
}

int64_t hp_aws_budget_left_ms(struct hp_aws *a)
{
	int64_t left;

	if (!a->deadline_ms)
		return INT64_MAX;
	left = a->deadline_ms - a->sys->monotonic_ms(a->sys);
	return left > 0 ? left : 0;
}

/* Consecutive timeouts to svc's endpoint, counted on every service that shares it. */
static void breaker_note(struct hp_aws *a, enum hp_svc svc, int timed_out)
{
	int s;

	for (s = 0; s < HP_SVC__COUNT; s++) {
		if (s != (int)svc && strcmp(a->endpoint[s], a->endpoint[svc]))
			continue;
		if (timed_out)
			__atomic_add_fetch(&a->timeouts[s], 1, __ATOMIC_RELAXED);
		else
			__atomic_store_n(&a->timeouts[s], 0, __ATOMIC_RELAXED);
	}
}

static int breaker_open(struct hp_aws *a, enum hp_svc svc)
{
	int limit = a->breaker_limit > 0 ? a->breaker_limit : HP_AWS_BREAKER_LIMIT;

	return __atomic_load_n(&a->timeouts[svc], __ATOMIC_RELAXED) >= limit;
}

/*
 * The retry quota is shared by every thread calling through a: taking and
 * refunding are atomic, so concurrent calls never spend a token twice.
 */
static int retry_take(struct hp_aws *a, int cost)
{
	int have = __atomic_load_n(&a->retry_tokens, __ATOMIC_RELAXED);

	while (have >= cost)
		if (__atomic_compare_exchange_n(&a->retry_tokens, &have, have - cost, 0,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return 1;
	return 0;
}

static void retry_refund(struct hp_aws *a, int n)
{
	int have = __atomic_load_n(&a->retry_tokens, __ATOMIC_RELAXED), want;

	do
		want = have + n > RETRY_QUOTA ? RETRY_QUOTA : have + n;
	while (want != have && !__atomic_compare_exchange_n(&a->retry_tokens, &have, want, 0,
							     __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* One call's progress through its attempts. */
struct attempts {
	int attempt;
	int last_cost;       /* quota tokens the last retry took (refunded on success) */
	int parse_retried;   /* a malformed reply is asked again once */
};

static void set_result(struct hp_aws_result *out, enum hp_aws_class cls, const char *code)
{
	out->cls = cls;
	out->status = 0;
	hp_strlcpy(out->code, code, sizeof(out->code));
}

/*
 * Before an attempt: 1 (out filled for a first attempt) when nothing may be
 * sent, because the run was interrupted, the run budget is spent or the
 * endpoint's breaker is open.
 * A retry that is stopped keeps the error it had.
 */
static int not_sent(struct hp_aws *a, const struct call *c, int attempt, int64_t left,
		    struct hp_aws_result *out)
{
	if (a->sys->stop && *a->sys->stop && !cleanup_call(c)) {
		if (attempt == 1) {
			set_result(out, HP_AWS_NETWORK, "Interrupted");
			hp_strlcpy(out->message, "not sent: the run was interrupted",
				   sizeof(out->message));
		}
		return 1;
	}
	if (left <= 0) {
		if (attempt == 1) {
			set_result(out, HP_AWS_NETWORK, "RunBudgetExceeded");
			snprintf(out->message, sizeof(out->message),
				 "not sent: the run budget (--max-runtime %ld s) was spent", a->budget_s);
		}
		return 1;
	}
	if (breaker_open(a, c->svc)) {
		if (attempt == 1) {
			set_result(out, HP_AWS_NETWORK, "Timeout");
			snprintf(out->message, sizeof(out->message),
				 "not sent: the last %d requests to %.300s timed out",
				 __atomic_load_n(&a->timeouts[c->svc], __ATOMIC_RELAXED),
				 a->endpoint[c->svc]);
		}
		return 1;
	}
	return 0;
}

/* No reply: a credential failure (-2, never retried) or a transport error. */
static void classify_no_reply(int rc, const struct hp_http_resp *resp, struct hp_aws_result *out)
{
	if (rc == -2) {
		set_result(out, HP_AWS_AUTH, "CredentialsExpired");
	} else {
		set_result(out, HP_AWS_NETWORK, resp->net == HP_NET_STOPPED ? "Interrupted" :
			   resp->net == HP_NET_TIMEOUT ? "Timeout" :
			   resp->net == HP_NET_TLS ? "TLSError" :
			   resp->net == HP_NET_TOO_BIG ? "ReplyTooLarge" : "ConnectionError");
	}
	hp_strlcpy(out->message, resp->errmsg, sizeof(out->message));
}

/* An error reply: its code, class, and what the message tells beyond the code. */
static void classify_error(struct hp_aws *a, const struct hp_http_resp *resp, struct hp_aws_result *out)
{
	hp_aws_parse_error(resp, out);
	out->cls = hp_aws_classify(resp->status, out->code);
	if (out->cls == HP_AWS_CLIENT && hp_strcasestr(out->message, "could not find"))
		out->cls = HP_AWS_NOT_FOUND;
	if (out->cls == HP_AWS_CLIENT && (hp_strcasestr(out->message, "not authorized to perform") ||
					  hp_strcasestr(out->message, "access denied")))
		out->cls = HP_AWS_DENIED;
	if (out->cls == HP_AWS_AUTH) {
		long skew = clock_skew_s(a, resp);

		if (skew > 240 || skew < -240) {
			size_t l = strlen(out->message);
			snprintf(out->message + l, sizeof(out->message) - l,
				 " (local clock is %ld s %s the server's: fix the clock)",
				 skew < 0 ? -skew : skew, skew > 0 ? "ahead of" : "behind");
		}
	}
}

/* A reply arrived: its request id, then data (2xx that parses) or a classified error. */
static void classify_reply(struct hp_aws *a, const struct call *c, const struct hp_http_resp *resp,
			   struct hp_aws_result *out)
{
	char why[256];

	__atomic_add_fetch(&a->stats.bytes_in, resp->body.len, __ATOMIC_RELAXED);
	out->status = resp->status;
	hp_http_resp_header(resp, "x-amzn-RequestId", out->request_id, sizeof(out->request_id));
	if (!out->request_id[0])
		hp_http_resp_header(resp, "x-amz-request-id", out->request_id, sizeof(out->request_id));
	if (resp->status < 200 || resp->status >= 300) {
		classify_error(a, resp, out);
	} else if (parse_ok(c, resp, out, why, sizeof(why))) {
		out->cls = HP_AWS_PARSE;
		hp_strlcpy(out->code, "MalformedReply", sizeof(out->code));
		snprintf(out->message, sizeof(out->message), "malformed reply (HTTP %ld): %s",
			 resp->status, why);
	} else {
		out->cls = HP_AWS_OK;
	}
}

/* One attempt: sign, send, classify. resp is the caller's (released by it). */
static void attempt_once(struct hp_aws *a, const struct call *c, int64_t left,
			 struct hp_http_resp *resp, struct hp_aws_result *out)
{
	int rc;

	out->code[0] = out->message[0] = '\0';
	__atomic_add_fetch(&a->stats.calls, 1, __ATOMIC_RELAXED);
	rc = send_once(a, c, resp, left);
	__atomic_add_fetch(&a->stats.connections, (unsigned)resp->connects, __ATOMIC_RELAXED);
	if (rc)
		classify_no_reply(rc, resp, out);
	else
		classify_reply(a, c, resp, out);
	breaker_note(a, c->svc, resp->net == HP_NET_TIMEOUT);
}

/*
 * Whether to try again, paying from the retry quota ("standard" mode):
 * throttling and transient errors, and a malformed reply once. A success
 * refunds what its last retry cost (or one token).
 */
static int want_retry(struct hp_aws *a, const struct hp_http_resp *resp, struct attempts *st,
		      struct hp_aws_result *out)
{
	int cost;

	if (out->cls == HP_AWS_OK) {
		retry_refund(a, st->last_cost ? st->last_cost : 1);
		return 0;
	}
	if (out->cls == HP_AWS_PARSE) {
		if (st->parse_retried || st->attempt >= a->max_attempts || !retry_take(a, RETRY_COST))
			return 0;
		st->last_cost = RETRY_COST;
		st->parse_retried = 1;
		return 1;
	}
	if (out->cls != HP_AWS_THROTTLED && !is_transient(resp, out->code))
		return 0;
	if (out->cls == HP_AWS_CLIENT && resp->net == HP_NET_OK && resp->status >= 500)
		out->cls = HP_AWS_SERVER;
	cost = resp->net == HP_NET_TIMEOUT ? RETRY_COST_TIMEOUT : RETRY_COST;
	if (st->attempt >= a->max_attempts || !retry_take(a, cost))
		return 0;
	st->last_cost = cost;
	return 1;
}

/* Full-jitter backoff before the next attempt, never past the run budget. */
static void back_off(struct hp_aws *a, const struct call *c, const struct hp_aws_result *out,
		     int attempt)
{
	long ms = backoff_ms(a, attempt);
	int64_t rest = hp_aws_budget_left_ms(a);

	__atomic_add_fetch(&a->stats.retries, 1, __ATOMIC_RELAXED);
	if (ms > rest)
		ms = (long)rest;
	if (a->debug)
		hp_debug("%s %s: %s, retry %d in %ld ms", hp_svc_info(c->svc)->name,
			c->op, out->code, attempt, ms);
	a->sys->sleep_ms(a->sys, ms);
}

static int call(struct hp_aws *a, const struct call *c, struct hp_aws_result *out)
{
	int64_t t0 = a->sys->monotonic_ms(a->sys);
	struct attempts st = { 0, 0, 0 };

	memset(out, 0, sizeof(*out));
	for (st.attempt = 1;; st.attempt++) {
		struct hp_http_resp resp;
		int64_t left = hp_aws_budget_left_ms(a);
		int retry;

		if (not_sent(a, c, st.attempt, left, out))
			break;
		hp_http_resp_init(&resp);
		if (c->svc == HP_SVC_STS)  /* AssumeRole replies carry secrets */
			hp_buf_set_secret(&resp.body);
		out->attempts = st.attempt;
		attempt_once(a, c, left, &resp, out);
		retry = want_retry(a, &resp, &st, out);
		if (c->svc == HP_SVC_STS)  /* AssumeRole replies carry secrets */
			hp_buf_release_secure(&resp.body);
		hp_http_resp_release(&resp);
		if (!retry)
			break;
		back_off(a, c, out, st.attempt);
	}
	if (a->debug)
		hp_debug("%s:%s -> %s%s%s (HTTP %ld, %d attempt%s, %lld ms)",
			hp_svc_info(c->svc)->name, c->op, hp_aws_class_name(out->cls),
			out->code[0] ? " " : "", out->code, out->status, out->attempts,
			out->attempts == 1 ? "" : "s",
			(long long)(a->sys->monotonic_ms(a->sys) - t0));
	return out->cls == HP_AWS_OK ? 0 : -1;
}

int hp_aws_json(struct hp_aws *a, enum hp_svc svc, const char *op, const cJSON *input,
		struct hp_aws_result *out)
{
	char target[160];
	struct call c;
	char *body;
	int rc;

	snprintf(target, sizeof(target), "%s%s", protocols[svc_index(svc)].target_prefix, op);
	body = input ? cJSON_PrintUnformatted(input) : xstrdup("{}");
	if (!body)
		hp_die("out of memory");
	memset(&c, 0, sizeof(c));
	c.svc = svc;
	c.op = op;
	c.method = "POST";
	c.path = "/";
	c.content_type = "application/x-amz-json-1.1";
	c.target = target;
	c.body = body;
	c.body_len = strlen(body);
	rc = call(a, &c, out);
	free(body);
	return rc;
}

int hp_aws_rest_get(struct hp_aws *a, enum hp_svc svc, const char *op, const char *path,
		    struct hp_aws_result *out)
{
	struct call c;

	memset(&c, 0, sizeof(c));
	c.svc = svc;
	c.op = op;
	c.method = "GET";
	c.path = path;
	c.body = "";
	return call(a, &c, out);
}

void hp_aws_params_add(struct hp_aws_params *p, const char *name, const char *value)
{
	p->kv = hp_array_grow(p->kv, &p->alloc, p->n, 2, sizeof(*p->kv));
	p->kv[p->n++] = xstrdup(name);
	p->kv[p->n++] = xstrdup(value);
}

void hp_aws_params_addf(struct hp_aws_params *p, const char *name, const char *fmt, ...)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
	va_list ap;

	va_start(ap, fmt);
	if (hp_buf_vaddf(&b, fmt, ap))
		hp_die("parameter too long");
	va_end(ap);
	hp_aws_params_add(p, name, b.buf);
	hp_buf_release(&b);
}

void hp_aws_params_release(struct hp_aws_params *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->kv[i]);
	free(p->kv);
	memset(p, 0, sizeof(*p));
}

void hp_aws_form_encode(struct hp_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '_' || ch == '.' || ch == '~') {
			hp_buf_putc(b, (char)ch);
		} else {
			hp_buf_putc(b, '%');
			hp_buf_putc(b, hex[ch >> 4]);
			hp_buf_putc(b, hex[ch & 15]);
		}
	}
}

int hp_aws_query(struct hp_aws *a, enum hp_svc svc, const char *op,
		 const struct hp_aws_params *params, struct hp_aws_result *out)
{
	struct hp_buf body = HP_BUF_INIT(HP_MAX_HTTP_BODY);
	struct call c;
	size_t i;
	int rc;

	hp_buf_puts(&body, "Action=");
	hp_aws_form_encode(&body, op);
	hp_buf_puts(&body, "&Version=");
	hp_aws_form_encode(&body, protocols[svc_index(svc)].query_version);
	for (i = 0; params && i + 1 < params->n; i += 2) {
		hp_buf_putc(&body, '&');
		hp_aws_form_encode(&body, params->kv[i]);
		hp_buf_putc(&body, '=');
		hp_aws_form_encode(&body, params->kv[i + 1]);
	}
	memset(&c, 0, sizeof(c));
	c.svc = svc;
	c.op = op;
	c.method = "POST";
	c.path = "/";
	c.content_type = "application/x-www-form-urlencoded; charset=utf-8";
	c.body = body.buf;
	c.body_len = body.len;
	rc = call(a, &c, out);
	hp_buf_release(&body);
	return rc;
}
