/*
 * The AWS client: one call = sign, send, retry, classify, parse.
 *
 * Four wire protocols are spoken (JSON 1.1, rest-json, the EC2 query
 * protocol and the query protocol); every reply, XML included, comes back
 * as a cJSON tree, and every failure as a classified hp_aws_result.
 * All I/O goes through hp_sys.
 */
#ifndef HP_AWS_H
#define HP_AWS_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "hp/creds.h"
#include "hp/sys.h"

/* How a call ended. Only HP_AWS_OK carries a reply. */
enum hp_aws_class {
	HP_AWS_OK = 0,
	HP_AWS_DENIED,     /* AccessDenied family: a missing IAM permission */
	HP_AWS_THROTTLED,  /* still throttled after the retries */
	HP_AWS_NOT_FOUND,  /* the named resource does not exist */
	HP_AWS_AUTH,       /* credentials invalid, expired, or signature rejected */
	HP_AWS_CLIENT,     /* any other 4xx (validation, bad parameter) */
	HP_AWS_SERVER,     /* 5xx after the retries */
	HP_AWS_NETWORK,    /* no reply: connect, TLS, timeout */
	HP_AWS_PARSE       /* a reply that could not be parsed */
};

const char *hp_aws_class_name(enum hp_aws_class c);

struct hp_aws_result {
	enum hp_aws_class cls;
	long status;
	char code[96];        /* error code as AWS spelled it, "" on success */
	char message[512];    /* error message (sanitised later by the reporter) */
	char request_id[80];
	int attempts;
	cJSON *json;          /* reply (owned); NULL unless cls == HP_AWS_OK */
};

void hp_aws_result_release(struct hp_aws_result *r);

/* Counts of what the client did (updated atomically: calls may run on several threads). */
struct hp_aws_stats {
	unsigned calls;         /* attempts sent */
	unsigned retries;
	unsigned connections;   /* connections opened (an attempt on a kept one opens none) */
	uint64_t bytes_in;
};

/*
 * The client. Calls (hp_aws_json, hp_aws_rest_get, hp_aws_query) may be made
 * from several threads at once on one struct hp_aws: the retry quota, the
 * breaker's counts and the stats are updated atomically, the credential
 * provider has its own lock, and nothing else changes after set-up.
 */
struct hp_aws {
	struct hp_sys *sys;
	struct hp_creds creds;
	char region[40];
	char endpoint[HP_SVC__COUNT][512];
	const char *ca_bundle;
	int max_attempts;       /* standard mode: 3 */
	int retry_tokens;       /* standard mode quota: 500 */
	long timeout_ms;        /* per attempt */
	int debug;              /* 1: one stderr line per call */
	struct hp_aws_stats stats;
	/*
	 * Run budget: monotonic ms after which no request is sent (0: none);
	 * attempts and backoff are cut to what is left. budget_s names it in
	 * messages.
	 */
	int64_t deadline_ms;
	long budget_s;
	/*
	 * Circuit breaker: after breaker_limit consecutive timeouts to one
	 * endpoint (0: HP_AWS_BREAKER_LIMIT), calls to it fail fast with the same
	 * error. Counted per service; services sharing an endpoint share a count.
	 */
	int breaker_limit;
	int timeouts[HP_SVC__COUNT];
	/*
	 * The refreshing credential source (shared by copies of this struct,
	 * owned by the one hp_aws_init set up). NULL: `creds` is used as is.
	 */
	struct hp_creds_provider *cp;
	int owns_cp;
	/*
	 * Collector steps run at once (tasks.h): 0 = HP_AWS_CONCURRENCY, 1 = one
	 * after another in order. Set from HPNODE_API_CONCURRENCY by hp_aws_init.
	 */
	int concurrency;
};

#define HP_AWS_CONCURRENCY 8
#define HP_AWS_CONCURRENCY_MAX 32

#define HP_AWS_BREAKER_LIMIT 3

/* Milliseconds of the run budget left (LONG_MAX-like large value when none); 0 when spent. */
int64_t hp_aws_budget_left_ms(struct hp_aws *a);

/* Appends s percent-encoded for a query string or form body (RFC 3986 unreserved kept). */
void hp_aws_form_encode(struct hp_buf *b, const char *s);

/* The credential source kind for the report: "assume-role via profile ops", "" when unknown. */
const char *hp_creds_source_desc(const struct hp_aws *a);

/*
 * Set up from the environment, profile and flags (region, endpoint,
 * credentials). Returns 0 or -1 with e set. trace receives the credential
 * provider trace for --debug.
 */
int hp_aws_init(struct hp_aws *a, struct hp_sys *sys, const struct hp_profile *p,
		const char *flag_region, const char *flag_endpoint, struct hp_buf *trace,
		struct hp_error *e);
void hp_aws_release(struct hp_aws *a);

/* JSON 1.1 (sagemaker, logs, ssm, service-quotas). input may be NULL ("{}"); not consumed. */
int hp_aws_json(struct hp_aws *a, enum hp_svc svc, const char *op, const cJSON *input,
		struct hp_aws_result *out);
/* rest-json GET (eks). path is already encoded, e.g. "/clusters/name". */
int hp_aws_rest_get(struct hp_aws *a, enum hp_svc svc, const char *op, const char *path,
		    struct hp_aws_result *out);

/* Form parameters for the query protocols. */
struct hp_aws_params {
	char **kv;   /* name, value, name, value, ... */
	size_t n, alloc;
};
void hp_aws_params_add(struct hp_aws_params *p, const char *name, const char *value);
void hp_aws_params_addf(struct hp_aws_params *p, const char *name, const char *fmt, ...)
	HP_PRINTF(3, 4);
void hp_aws_params_release(struct hp_aws_params *p);

/*
 * Query protocol (ec2 with Version 2016-11-15, sts with 2011-06-15). The XML
 * reply is converted to cJSON: elements become members under their XML
 * names, elements whose children are all <item> become arrays, text becomes
 * strings. The root is the <OpResponse> element's content.
 */
int hp_aws_query(struct hp_aws *a, enum hp_svc svc, const char *op,
		 const struct hp_aws_params *params, struct hp_aws_result *out);

/* Exposed for tests: error classification and parsing. */
enum hp_aws_class hp_aws_classify(long status, const char *code);
int hp_aws_is_throttle_code(const char *code);
void hp_aws_parse_error(const struct hp_http_resp *resp, struct hp_aws_result *out);
/* XML text to cJSON by the rules above; NULL on malformed XML. */
cJSON *hp_xml_to_json(const char *xml, size_t len, char *root_name, size_t root_n);

#endif
