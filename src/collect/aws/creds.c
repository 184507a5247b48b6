/*
 * The credential chain and region resolution. Providers are rows of one
 * table tried in botocore's order: environment, assume-role, web identity,
 * SSO, the credentials file, credential_process, the config file, container
 * credentials and IMDSv2. The provider that answers is kept and asked again
 * before its credentials expire (hp_creds_provider_get). No secret is ever
 * written to a message, a trace or the debug log.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/json.h"
#include "hp/aws.h"
#include "hp/creds.h"
#include "hp/iso8601.h"

#define PROCESS_TIMEOUT_MS 60000L

static const char *env_get(struct hp_sys *sys, const char *name)
{
	const char *v = sys->getenv(sys, name);

	return v && *v ? v : NULL;
}

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

static const char *cfg(const struct hp_profile *p, const char *key)
{
	return p ? nonempty(hp_profile_config(p, key)) : NULL;
}

static const char *cred(const struct hp_profile *p, const char *key)
{
	return p ? nonempty(hp_profile_cred(p, key)) : NULL;
}

/* ---- time ---- */

static void civil_from_days(int64_t z, int *y, int *m, int *d)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = (int)(yoe + era * 400 + (*m <= 2));
}

/* An ISO-8601 time (no zone reads as UTC) to ms since the epoch. */
static int parse_iso8601(const char *s, int64_t *ms)
{
	struct hp_iso8601 t;

	if (hp_iso8601_parse(s, NULL, &t))
		return -1;
	*ms = t.sec * 1000 + t.nsec / 1000000;
	return 0;
}

static void format_time(int64_t ms, char *out, size_t n)
{
	int64_t s = ms / 1000, days = s / 86400, rem = s % 86400;
	int y, m, d;

	if (rem < 0) {
		rem += 86400;
		days--;
	}
	civil_from_days(days, &y, &m, &d);
	snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, m, d, (int)(rem / 3600),
		 (int)(rem / 60 % 60), (int)(rem % 60));
}


/* ---- the chain ---- */

static void json_wipe(cJSON *j);
static const char *json_string(const cJSON *obj, const char *key);

#define REFRESH_WINDOW_MS (5 * 60 * 1000L)
#define SIGN_MARGIN_MS 1000L
#define RETRY_FAILED_REFRESH_MS 1000L
#define IMDS_TIMEOUT_MS 1000L
#define IMDS_ATTEMPTS 2
#define CONTAINER_TIMEOUT_MS 2000L
#define CONTAINER_ATTEMPTS 2
#define STS_TIMEOUT_MS 10000L
#define SSO_TIMEOUT_MS 10000L
#define MAX_DEPTH 16

enum prov_result {
	PROV_ANSWERED,
	PROV_NOT_CONFIGURED,
	PROV_ERROR
};

struct chain {
	struct hp_sys *sys;
	const struct hp_profile *p;  /* the profile read (a view of it for source profiles) */
	const char *profile;         /* name for messages */
	const struct hp_creds_env *env;
	int *imds_absent;
	struct hp_creds *out;
	struct hp_error *e;
	struct hp_buf *trace;        /* may be NULL */
	char reason[256];            /* why the provider did not answer; "" = say nothing */
	char source[192];            /* what answered, in words */
	int no_env;                  /* 1: environment variables are not read (--profile) */
	int debug;
	const char *visited[MAX_DEPTH];
	size_t nvisited;
};

static enum prov_result not_configured(struct chain *c, const char *fmt, ...) HP_PRINTF(2, 3);

static enum prov_result not_configured(struct chain *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	return PROV_NOT_CONFIGURED;
}

/* Records a credential error for the chain's caller. */
static enum prov_result fail(struct chain *c, const char *fmt, ...) HP_PRINTF(2, 3);

static enum prov_result fail(struct chain *c, const char *fmt, ...)
{
	char msg[sizeof(c->e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hp_error_set(c->e, HP_ERR_CREDS, "%s", msg);
	return PROV_ERROR;
}

static void set_creds(struct chain *c, const char *ak, const char *sk, const char *token,
		      int64_t expires_ms)
{
	c->out->access_key = xstrdup(ak);
	c->out->secret_key = xstrdup(sk);
	c->out->session_token = token ? xstrdup(token) : NULL;
	c->out->expires_ms = expires_ms;
}

static void source(struct chain *c, const char *fmt, ...) HP_PRINTF(2, 3);

static void source(struct chain *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->source, sizeof(c->source), fmt, ap);
	va_end(ap);
}

static void trace_line(struct chain *c, const char *fmt, ...) HP_PRINTF(2, 3);

static void trace_line(struct chain *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->trace)
		return;
	va_start(ap, fmt);
	if (hp_buf_vaddf(c->trace, fmt, ap) == 0)
		hp_buf_putc(c->trace, '\n');
	va_end(ap);
}

/* Static keys from a mapping: shared by the credentials and config files. */
static enum prov_result static_keys(struct chain *c, const char *ak, const char *sk,
				    const char *token, const char *where)
{
	if (!ak && !sk)
		return not_configured(c, "no aws_access_key_id in %s", where);
	if (!ak || !sk)
		return fail(c, "%s has %s but not %s", where,
			    ak ? "aws_access_key_id" : "aws_secret_access_key",
			    ak ? "aws_secret_access_key" : "aws_access_key_id");
	set_creds(c, ak, sk, token, 0);
	return PROV_ANSWERED;
}

static enum prov_result env_keys(struct chain *c)
{
	const char *ak = env_get(c->sys, "AWS_ACCESS_KEY_ID");
	const char *sk = env_get(c->sys, "AWS_SECRET_ACCESS_KEY");
	const char *exp = env_get(c->sys, "AWS_CREDENTIAL_EXPIRATION");
	/* botocore takes the legacy AWS_SECURITY_TOKEN first when both are set. */
	const char *token = env_get(c->sys, "AWS_SECURITY_TOKEN");
	int64_t expires_ms = 0;
	char when[32];

	if (!token)
		token = env_get(c->sys, "AWS_SESSION_TOKEN");
	if (!ak && !sk)
		return not_configured(c, "AWS_ACCESS_KEY_ID not set");
	if (!ak || !sk)
		return fail(c, "%s is set but %s is not",
			    ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
			    ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
	if (exp) {
		if (parse_iso8601(exp, &expires_ms))
			return fail(c, "AWS_CREDENTIAL_EXPIRATION '%.64s' is not an ISO-8601 time",
				    exp);
		if (expires_ms <= c->sys->now_ms(c->sys)) {
			format_time(expires_ms, when, sizeof(when));
			return fail(c, "the credentials in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY "
				    "expired at %s (AWS_CREDENTIAL_EXPIRATION)", when);
		}
	}
	set_creds(c, ak, sk, token, expires_ms);
	source(c, "environment variables");
	return PROV_ANSWERED;
}

static enum prov_result prov_environment(struct chain *c)
{
	if (c->no_env)
		return not_configured(c, "skipped because --profile was given");
	return env_keys(c);
}

/* ---- HTTP helpers for the providers' own calls ---- */

static void form_add(struct hp_buf *b, const char *name, const char *value)
{
	if (b->len)
		hp_buf_putc(b, '&');
	hp_aws_form_encode(b, name);
	hp_buf_putc(b, '=');
	hp_aws_form_encode(b, value);
}

/*
 * One request with a retry on a transport failure or a 5xx. Returns 0 with
 * a reply, -1 when none came (resp->errmsg says why).
 */
static int http_try(struct hp_sys *sys, struct hp_http_req *req, struct hp_http_resp *resp,
		    int attempts)
{
	int i, rc = -1;

	for (i = 0; i < attempts; i++) {
		if (i) {
			hp_buf_release_secure(&resp->body);
			hp_http_resp_release(resp);
			hp_http_resp_init(resp);
		}
		rc = sys->http(sys, req, resp);
		if (rc == 0 && resp->status < 500)
			break;
		if (rc != 0 && resp->net != HP_NET_TIMEOUT && resp->net != HP_NET_CONNECT &&
		    resp->net != HP_NET_IO)
			break;
	}
	return rc;
}

static void resp_done(struct hp_http_resp *resp)
{
	hp_buf_release_secure(&resp->body);
	hp_http_resp_release(resp);
}

/* Trim blanks from both ends of a buffer's text, in place. */
static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
			   end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/*
 * Credentials from a JSON object: the names of the four members differ
 * between STS (XML turned JSON), the container endpoint, IMDS and the SSO
 * portal. An expiry may be ISO-8601 or milliseconds since the epoch.
 */
static enum prov_result creds_from_json(struct chain *c, const cJSON *o, const char *const names[4],
					const char *what)
{
	const char *ak = json_string(o, names[0]), *sk = json_string(o, names[1]);
	const char *tok = json_string(o, names[2]);
	const cJSON *exp = cJSON_GetObjectItemCaseSensitive(o, names[3]);
	int64_t expires_ms = 0;

	if (!ak || !sk)
		return fail(c, "%s returned no %s", what, ak ? names[1] : names[0]);
	if (cJSON_IsNumber(exp))
		expires_ms = (int64_t)exp->valuedouble;
	else if (cJSON_IsString(exp) && parse_iso8601(exp->valuestring, &expires_ms))
		return fail(c, "%s returned an expiry that is not a time", what);
	set_creds(c, ak, sk, tok, expires_ms);
	return PROV_ANSWERED;
}

/* Error code and message of a failed reply, for a message line. */
static void reply_error(const struct hp_http_resp *resp, char *out, size_t n)
{
	struct hp_aws_result r;

	memset(&r, 0, sizeof(r));
	if (resp->net != HP_NET_OK) {
		snprintf(out, n, "no reply: %s", resp->errmsg);
		return;
	}
	hp_aws_parse_error(resp, &r);
	snprintf(out, n, "HTTP %ld %.64s%s%.200s", resp->status, r.code, r.message[0] ? ": " : "",
		 r.message);
}

/* ---- STS: AssumeRole (signed) and AssumeRoleWithWebIdentity (unsigned) ---- */

static const char *const sts_names[4] = { "AccessKeyId", "SecretAccessKey", "SessionToken",
					  "Expiration" };

static enum prov_result session_params(struct chain *c, const char *session,
				       const char **duration)
{
	const char *d = cfg(c->p, "duration_seconds");
	char *end;
	long n;

	(void)session;
	*duration = NULL;
	if (!d)
		return PROV_ANSWERED;
	n = strtol(d, &end, 10);
	if (*end || n < 900 || n > 43200)
		return fail(c, "duration_seconds '%.32s' of profile '%s' must be a number of seconds "
			    "from 900 to 43200", d, c->profile);
	*duration = d;
	return PROV_ANSWERED;
}

static void default_session_name(struct chain *c, char *out, size_t n)
{
	snprintf(out, n, "hpnode-session-%lld", (long long)(c->sys->now_ms(c->sys) / 1000));
}

/* sts:AssumeRole signed with `base`, through hpnode's own client. */
static enum prov_result sts_assume_role(struct chain *c, const char *role,
					const struct hp_creds *base)
{
	struct hp_aws *a = xcalloc(1, sizeof(*a));
	struct hp_aws_params params;
	struct hp_aws_result r;
	const char *session = cfg(c->p, "role_session_name"), *ext = cfg(c->p, "external_id");
	const char *duration;
	const cJSON *cr;
	enum prov_result res;
	char name[64], what[300];

	if (session_params(c, session, &duration) != PROV_ANSWERED) {
		free(a);
		return PROV_ERROR;
	}
	if (!c->env || !c->env->region || !c->env->sts_endpoint) {
		free(a);
		return fail(c, "profile '%s' assumes role %.200s, which needs an AWS region: pass "
			    "--region or set 'region' in the profile", c->profile, role);
	}
	a->sys = c->sys;
	hp_strlcpy(a->region, c->env->region, sizeof(a->region));
	hp_strlcpy(a->endpoint[HP_SVC_STS], c->env->sts_endpoint, sizeof(a->endpoint[0]));
	a->ca_bundle = c->env->ca_bundle;
	a->max_attempts = 3;
	a->retry_tokens = 500;
	a->timeout_ms = STS_TIMEOUT_MS;
	a->debug = c->debug;
	a->creds = *base;  /* borrowed: not released with a */
	if (!session) {
		default_session_name(c, name, sizeof(name));
		session = name;
	}
	memset(&params, 0, sizeof(params));
	hp_aws_params_add(&params, "RoleArn", role);
	hp_aws_params_add(&params, "RoleSessionName", session);
	if (ext)
		hp_aws_params_add(&params, "ExternalId", ext);
	if (duration)
		hp_aws_params_add(&params, "DurationSeconds", duration);
	snprintf(what, sizeof(what), "sts:AssumeRole of %.200s for profile '%s'", role, c->profile);
	if (hp_aws_query(a, HP_SVC_STS, "AssumeRole", &params, &r)) {
		res = fail(c, "%s failed: %s%s%.400s", what, r.code, r.message[0] ? ": " : "",
			   r.message);
	} else {
		cr = cJSON_GetObjectItemCaseSensitive(r.json, "Credentials");
		res = cJSON_IsObject(cr) ? creds_from_json(c, cr, sts_names, what) :
			fail(c, "%s returned no Credentials", what);
	}
	json_wipe(r.json);
	hp_aws_result_release(&r);
	hp_aws_params_release(&params);
	memset(&a->creds, 0, sizeof(a->creds));
	free(a);
	return res;
}

/* sts:AssumeRoleWithWebIdentity: no signature, the token is the proof. */
static enum prov_result sts_web_identity(struct chain *c, const char *role, const char *session,
					 const char *token, const char *via)
{
	struct hp_buf body = HP_BUF_INIT(1 << 20);
	struct hp_header hdr[1] = { { "Content-Type",
				      "application/x-www-form-urlencoded; charset=utf-8" } };
	struct hp_http_req req;
	struct hp_http_resp resp;
	enum prov_result res;
	cJSON *j = NULL;
	const cJSON *cr, *result;
	char name[64], what[300], err[400], root[128];

	if (!c->env || !c->env->sts_endpoint)
		return fail(c, "web identity (%s) needs an AWS region for STS: pass --region or set "
			    "AWS_REGION", via);
	if (!session) {
		default_session_name(c, name, sizeof(name));
		session = name;
	}
	form_add(&body, "Action", "AssumeRoleWithWebIdentity");
	form_add(&body, "Version", "2011-06-15");
	form_add(&body, "RoleArn", role);
	form_add(&body, "RoleSessionName", session);
	form_add(&body, "WebIdentityToken", token);
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = c->env->sts_endpoint;
	req.headers = hdr;
	req.nheaders = 1;
	req.body = body.buf;
	req.body_len = body.len;
	req.timeout_ms = STS_TIMEOUT_MS;
	req.ca_bundle = c->env->ca_bundle;
	hp_http_resp_init(&resp);
	snprintf(what, sizeof(what), "sts:AssumeRoleWithWebIdentity of %.200s (%s)", role, via);
	if (http_try(c->sys, &req, &resp, 2) || resp.status != 200) {
		reply_error(&resp, err, sizeof(err));
		res = fail(c, "%s failed: %s", what, err);
		goto out;
	}
	j = hp_xml_to_json(resp.body.buf, resp.body.len, root, sizeof(root));
	result = cJSON_GetObjectItemCaseSensitive(j, "AssumeRoleWithWebIdentityResult");
	cr = cJSON_GetObjectItemCaseSensitive(result, "Credentials");
	res = cJSON_IsObject(cr) ? creds_from_json(c, cr, sts_names, what) :
		fail(c, "%s returned no Credentials", what);
out:
	json_wipe(j);
	cJSON_Delete(j);
	hp_buf_release_secure(&body);
	resp_done(&resp);
	return res;
}

static enum prov_result web_identity(struct chain *c, const char *file, const char *role,
				     const char *session, const char *via)
{
	struct hp_buf tok = HP_BUF_INIT(1 << 20);
	enum prov_result r;
	char *t;

	if (c->sys->read_file(c->sys, file, &tok) < 0) {
		int err = errno;

		hp_buf_release_secure(&tok);
		return fail(c, "cannot read the web identity token file '%.300s' (%s): %s", file, via,
			    strerror(err));
	}
	t = trim(tok.buf);
	if (!*t) {
		hp_buf_release_secure(&tok);
		return fail(c, "the web identity token file '%.300s' (%s) is empty", file, via);
	}
	r = sts_web_identity(c, role, session, t, via);
	hp_buf_release_secure(&tok);
	return r;
}

static enum prov_result prov_web_identity(struct chain *c)
{
	const char *file = cfg(c->p, "web_identity_token_file"), *role = cfg(c->p, "role_arn");
	enum prov_result r;
	char via[200];

	if (file) {
		if (!role)
			return fail(c, "profile '%s' has web_identity_token_file but no role_arn",
				    c->profile);
		snprintf(via, sizeof(via), "web_identity_token_file of profile '%s'", c->profile);
		r = web_identity(c, file, role, cfg(c->p, "role_session_name"), via);
		if (r == PROV_ANSWERED)
			source(c, "web identity via profile %s", c->profile);
		return r;
	}
	if (c->no_env)
		return not_configured(c, "profile '%s' has no web_identity_token_file", c->profile);
	file = env_get(c->sys, "AWS_WEB_IDENTITY_TOKEN_FILE");
	role = env_get(c->sys, "AWS_ROLE_ARN");
	if (!file && !role)
		return not_configured(c, "AWS_WEB_IDENTITY_TOKEN_FILE not set and profile '%s' has no "
				      "web_identity_token_file", c->profile);
	if (!file || !role)
		return fail(c, "%s is set but %s is not (web identity needs both)",
			    file ? "AWS_WEB_IDENTITY_TOKEN_FILE" : "AWS_ROLE_ARN",
			    file ? "AWS_ROLE_ARN" : "AWS_WEB_IDENTITY_TOKEN_FILE");
	r = web_identity(c, file, role, env_get(c->sys, "AWS_ROLE_SESSION_NAME"),
			 "AWS_WEB_IDENTITY_TOKEN_FILE");
	if (r == PROV_ANSWERED)
		source(c, "web identity via AWS_WEB_IDENTITY_TOKEN_FILE");
	return r;
}

/* ---- assume role ---- */

static enum prov_result prov_sso(struct chain *c);
static enum prov_result prov_shared_file(struct chain *c);
static enum prov_result prov_process(struct chain *c);
static enum prov_result prov_config_file(struct chain *c);
static enum prov_result prov_container(struct chain *c);
static enum prov_result prov_imds(struct chain *c);
static enum prov_result assume_role(struct chain *c, const char *role);

static int profile_exists(const struct hp_profile *p, const char *name)
{
	char sect[160];

	snprintf(sect, sizeof(sect), "profile %s", name);
	return hp_ini_has_section(&p->config, sect) ||
	       (!strcmp(name, "default") && hp_ini_has_section(&p->config, "default")) ||
	       hp_ini_has_section(&p->credentials, name);
}

/* The chain so far, "a -> b -> c", for a loop message. */
static void chain_path(const struct chain *c, const char *next, char *out, size_t n)
{
	size_t i, k = 0;

	out[0] = '\0';
	for (i = 0; i < c->nvisited && k < n; i++)
		k += (size_t)snprintf(out + k, n - k, "%s -> ", c->visited[i]);
	if (k < n && strcmp(c->profile, next))
		k += (size_t)snprintf(out + k, n - k, "%s -> ", c->profile);
	if (k < n)
		snprintf(out + k, n - k, "%s", next);
}

/* Credentials of a source_profile: any provider a profile itself can hold. */
static enum prov_result source_profile(struct chain *c, const char *name, char *how, size_t hn)
{
	static enum prov_result (*const rows[])(struct chain *c) = {
		prov_web_identity, prov_sso, prov_shared_file, prov_process, prov_config_file
	};
	struct hp_profile *view;
	struct chain sub;
	const char *role;
	enum prov_result r = PROV_NOT_CONFIGURED;
	char path[512];
	size_t i;

	if (!strcmp(name, c->profile)) {
		/* A profile may name itself when it holds the keys of the role's source. */
		r = prov_shared_file(c);
		if (r == PROV_NOT_CONFIGURED)
			r = prov_config_file(c);
		if (r == PROV_NOT_CONFIGURED) {
			chain_path(c, name, path, sizeof(path));
			return fail(c, "source_profile loop: %s (profile '%s' names itself but holds "
				    "no keys)", path, name);
		}
		snprintf(how, hn, "its own keys");
		return r;
	}
	for (i = 0; i < c->nvisited; i++) {
		if (!strcmp(c->visited[i], name)) {
			chain_path(c, name, path, sizeof(path));
			return fail(c, "source_profile loop: %s", path);
		}
	}
	if (c->nvisited + 1 >= MAX_DEPTH)
		return fail(c, "source_profile chain of profile '%s' is deeper than %d profiles",
			    c->profile, MAX_DEPTH);
	if (!profile_exists(c->p, name))
		return fail(c, "source_profile '%.128s' of profile '%s' does not exist in the config "
			    "or credentials file", name, c->profile);
	view = xcalloc(1, sizeof(*view));
	*view = *c->p;  /* shares the parsed files; never released */
	hp_strlcpy(view->name, name, sizeof(view->name));
	view->explicit_profile = 1;
	sub = *c;
	sub.p = view;
	sub.profile = view->name;
	sub.no_env = 1;
	sub.visited[sub.nvisited++] = c->profile;
	role = cfg(view, "role_arn");
	if (role && !cfg(view, "web_identity_token_file")) {
		r = assume_role(&sub, role);
		snprintf(how, hn, "source profile %s", name);
	} else {
		for (i = 0; i < HP_ARRAY_LEN(rows) && r == PROV_NOT_CONFIGURED; i++) {
			sub.reason[0] = '\0';
			r = rows[i](&sub);
		}
		if (r == PROV_NOT_CONFIGURED)
			r = fail(c, "source_profile '%s' of profile '%s' holds no credentials (no keys, "
				 "credential_process, SSO or web identity)", name, c->profile);
		snprintf(how, hn, "source profile %s", name);
	}
	if (r == PROV_ANSWERED)
		trace_line(c, "assume-role: source profile '%s' answered (%s)", name, sub.source);
	free(view);
	return r;
}

static enum prov_result credential_source(struct chain *c, const char *cs)
{
	struct chain sub = *c;
	enum prov_result r;

	sub.reason[0] = '\0';
	if (!strcmp(cs, "Environment"))
		r = env_keys(&sub);
	else if (!strcmp(cs, "Ec2InstanceMetadata"))
		r = prov_imds(&sub);
	else if (!strcmp(cs, "EcsContainer"))
		r = prov_container(&sub);
	else
		return fail(c, "credential_source '%.64s' of profile '%s' must be Environment, "
			    "Ec2InstanceMetadata or EcsContainer", cs, c->profile);
	if (r == PROV_NOT_CONFIGURED)
		return fail(c, "credential_source %s of profile '%s' gave no credentials: %s", cs,
			    c->profile, sub.reason);
	return r;
}

static enum prov_result assume_role(struct chain *c, const char *role)
{
	const char *src = cfg(c->p, "source_profile"), *cs = cfg(c->p, "credential_source");
	struct hp_creds base;
	struct chain sub;
	enum prov_result r;
	char how[200];

	if (cfg(c->p, "mfa_serial"))
		return fail(c, "profile '%s' assumes role %.200s with mfa_serial, and hpnode does not "
			    "prompt for MFA codes: use an SSO profile, or export session credentials "
			    "first ('aws configure export-credentials --profile %s --format env')",
			    c->profile, role, c->profile);
	if (src && cs)
		return fail(c, "profile '%s' has both source_profile and credential_source; it may "
			    "have only one", c->profile);
	if (!src && !cs)
		return fail(c, "profile '%s' has role_arn but neither source_profile nor "
			    "credential_source", c->profile);
	memset(&base, 0, sizeof(base));
	sub = *c;
	sub.out = &base;
	if (src) {
		r = source_profile(&sub, src, how, sizeof(how));
	} else {
		r = credential_source(&sub, cs);
		snprintf(how, sizeof(how), "credential_source %s", cs);
	}
	if (r == PROV_ANSWERED)
		r = sts_assume_role(c, role, &base);
	hp_creds_release(&base);
	if (r == PROV_ANSWERED)
		source(c, "assume-role via profile %s (%s)", c->profile, how);
	return r;
}

static enum prov_result prov_assume_role(struct chain *c)
{
	const char *role = cfg(c->p, "role_arn");

	if (!role)
		return not_configured(c, "profile '%s' has no role_arn", c->profile);
	if (cfg(c->p, "web_identity_token_file"))
		return not_configured(c, "profile '%s' uses web identity", c->profile);
	return assume_role(c, role);
}

/* ---- SSO ---- */

static void sha1_hex(const char *s, char out[41])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	EVP_Digest(s, strlen(s), md, &n, EVP_sha1(), NULL);
	for (i = 0; i < n && i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[40] = '\0';
}

/* https://<prefix>.<region>.amazonaws.com, or AWS_ENDPOINT_URL_<SVC> / AWS_ENDPOINT_URL. */
static void sso_endpoint(struct chain *c, const char *var, const char *host,
			 const char *region, char *out, size_t n)
{
	const char *v = env_get(c->sys, var);
	size_t len;

	if (!v)
		v = env_get(c->sys, "AWS_ENDPOINT_URL");
	if (v)
		hp_strlcpy(out, v, n);
	else
		snprintf(out, n, "https://%s.%s.amazonaws.com", host, region);
	len = strlen(out);
	while (len && out[len - 1] == '/')
		out[--len] = '\0';
}

struct sso_cfg {
	const char *session;      /* sso_session name, NULL for the legacy keys */
	const char *start_url, *region, *account, *role;
};

static enum prov_result sso_config(struct chain *c, struct sso_cfg *s)
{
	char sect[200];

	memset(s, 0, sizeof(*s));
	s->session = cfg(c->p, "sso_session");
	s->account = cfg(c->p, "sso_account_id");
	s->role = cfg(c->p, "sso_role_name");
	if (s->session) {
		snprintf(sect, sizeof(sect), "sso-session %s", s->session);
		if (!hp_ini_has_section(&c->p->config, sect))
			return fail(c, "profile '%s' names sso_session '%.100s', but the config file "
				    "has no [sso-session %.100s] section", c->profile, s->session,
				    s->session);
		s->start_url = nonempty(hp_ini_get(&c->p->config, sect, "sso_start_url"));
		s->region = nonempty(hp_ini_get(&c->p->config, sect, "sso_region"));
	} else {
		s->start_url = cfg(c->p, "sso_start_url");
		s->region = cfg(c->p, "sso_region");
	}
	if (!s->session && !s->start_url && !s->account && !s->role)
		return not_configured(c, "profile '%s' has no sso_session or sso_start_url",
				      c->profile);
	if (!s->start_url || !s->region || !s->account || !s->role)
		return fail(c, "SSO profile '%s' is incomplete: it needs %s", c->profile,
			    !s->start_url ? "sso_start_url" : !s->region ? "sso_region" :
			    !s->account ? "sso_account_id" : "sso_role_name");
	return PROV_ANSWERED;
}

/* Refresh an expired token with the OIDC refresh-token grant; rewrites the cache. */
static enum prov_result sso_refresh(struct chain *c, const struct sso_cfg *s, const char *path,
				    cJSON *cache, char **token)
{
	const char *cid = json_string(cache, "clientId"), *csec = json_string(cache, "clientSecret");
	const char *rt = json_string(cache, "refreshToken");
	struct hp_header hdr[1] = { { "Content-Type", "application/json" } };
	cJSON *in = NULL, *j = NULL;
	char *body = NULL, *text = NULL, url[512], err[400], when[32];
	const char *at, *nrt;
	const cJSON *ein;
	struct hp_http_req req;
	struct hp_http_resp resp;
	enum prov_result r = PROV_ERROR;
	int64_t now = c->sys->now_ms(c->sys);

	if (!cid || !csec || !rt)
		return fail(c, "the SSO session of profile '%s' has expired and cannot be refreshed; "
			    "run `aws sso login --profile %s`", c->profile, c->profile);
	if (!c->sys->write_file)
		return fail(c, "cannot rewrite the SSO token cache");
	sso_endpoint(c, "AWS_ENDPOINT_URL_SSO_OIDC", "oidc", s->region,
		     url, sizeof(url) - 8);
	strcat(url, "/token");
	in = cJSON_CreateObject();
	cJSON_AddStringToObject(in, "grantType", "refresh_token");
	cJSON_AddStringToObject(in, "clientId", cid);
	cJSON_AddStringToObject(in, "clientSecret", csec);
	cJSON_AddStringToObject(in, "refreshToken", rt);
	body = cJSON_PrintUnformatted(in);
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = url;
	req.headers = hdr;
	req.nheaders = 1;
	req.body = body;
	req.body_len = body ? strlen(body) : 0;
	req.timeout_ms = SSO_TIMEOUT_MS;
	req.ca_bundle = c->env ? c->env->ca_bundle : NULL;
	hp_http_resp_init(&resp);
	if (http_try(c->sys, &req, &resp, 2) || resp.status != 200) {
		reply_error(&resp, err, sizeof(err));
		r = fail(c, "refreshing the SSO token of profile '%s' (sso-oidc:CreateToken) failed: "
			 "%s; run `aws sso login --profile %s`", c->profile, err, c->profile);
		goto out;
	}
	j = hp_json_parse(resp.body.buf, resp.body.len, NULL);
	at = json_string(j, "accessToken");
	ein = cJSON_GetObjectItemCaseSensitive(j, "expiresIn");
	if (!at || !cJSON_IsNumber(ein)) {
		r = fail(c, "sso-oidc:CreateToken for profile '%s' returned no accessToken/expiresIn",
			 c->profile);
		goto out;
	}
	format_time(now + (int64_t)ein->valuedouble * 1000, when, sizeof(when));
	cJSON_ReplaceItemInObjectCaseSensitive(cache, "accessToken", cJSON_CreateString(at));
	if (cJSON_HasObjectItem(cache, "expiresAt"))
		cJSON_ReplaceItemInObjectCaseSensitive(cache, "expiresAt", cJSON_CreateString(when));
	else
		cJSON_AddStringToObject(cache, "expiresAt", when);
	nrt = json_string(j, "refreshToken");
	if (nrt)
		cJSON_ReplaceItemInObjectCaseSensitive(cache, "refreshToken", cJSON_CreateString(nrt));
	text = cJSON_Print(cache);
	if (!text || c->sys->write_file(c->sys, path, text, strlen(text), 0600) < 0) {
		int e = errno;

		r = fail(c, "cannot rewrite the SSO token cache '%.300s': %s", path, strerror(e));
		goto out;
	}
	*token = xstrdup(at);
	trace_line(c, "sso: token refreshed (sso-oidc:CreateToken), cache rewritten, valid until %s",
		   when);
	r = PROV_ANSWERED;
out:
	if (text) {
		hp_wipe(text, strlen(text));
		free(text);
	}
	if (body) {
		hp_wipe(body, strlen(body));
		free(body);
	}
	json_wipe(in);
	cJSON_Delete(in);
	json_wipe(j);
	cJSON_Delete(j);
	resp_done(&resp);
	return r;
}

static enum prov_result prov_sso(struct chain *c)
{
	static const char *const names[4] = { "accessKeyId", "secretAccessKey", "sessionToken",
					      "expiration" };
	struct sso_cfg s;
	struct hp_buf file = HP_BUF_INIT(1 << 20), url = HP_BUF_INIT(4096);
	struct hp_header hdr[1];
	struct hp_http_req req;
	struct hp_http_resp resp;
	enum prov_result r;
	const char *home = env_get(c->sys, "HOME"), *exp;
	cJSON *cache = NULL, *j = NULL;
	char hex[41], *path = NULL, *token = NULL, base[512], err[400];
	int64_t expires = 0;

	r = sso_config(c, &s);
	if (r != PROV_ANSWERED)
		return r;
	if (!home)
		return fail(c, "SSO profile '%s': HOME is not set, so the token cache cannot be "
			    "found", c->profile);
	sha1_hex(s.session ? s.session : s.start_url, hex);
	path = xasprintf("%s/.aws/sso/cache/%s.json", home, hex);
	if (c->sys->read_file(c->sys, path, &file) < 0 ||
	    !(cache = hp_json_parse(file.buf, file.len, NULL)) || !cJSON_IsObject(cache) ||
	    !json_string(cache, "accessToken")) {
		r = fail(c, "no valid SSO token cached for profile '%s' (%.300s); run `aws sso login "
			 "--profile %s`", c->profile, path, c->profile);
		goto out;
	}
	exp = json_string(cache, "expiresAt");
	if (!exp || parse_iso8601(exp, &expires) || expires <= c->sys->now_ms(c->sys) + 60000) {
		if (!s.session) {
			r = fail(c, "the SSO token of profile '%s' has expired; run `aws sso login "
				 "--profile %s`", c->profile, c->profile);
			goto out;
		}
		r = sso_refresh(c, &s, path, cache, &token);
		if (r != PROV_ANSWERED)
			goto out;
	} else {
		token = xstrdup(json_string(cache, "accessToken"));
	}
	sso_endpoint(c, "AWS_ENDPOINT_URL_SSO", "portal.sso", s.region,
		     base, sizeof(base));
	hp_buf_printf(&url, "%s/federation/credentials?account_id=", base);
	hp_aws_form_encode(&url, s.account);
	hp_buf_puts(&url, "&role_name=");
	hp_aws_form_encode(&url, s.role);
	hdr[0].name = "x-amz-sso_bearer_token";
	hdr[0].value = token;
	memset(&req, 0, sizeof(req));
	req.method = "GET";
	req.url = url.buf;
	req.headers = hdr;
	req.nheaders = 1;
	req.timeout_ms = SSO_TIMEOUT_MS;
	req.ca_bundle = c->env ? c->env->ca_bundle : NULL;
	hp_http_resp_init(&resp);
	if (http_try(c->sys, &req, &resp, 2) || resp.status != 200) {
		reply_error(&resp, err, sizeof(err));
		r = fail(c, "sso:GetRoleCredentials for profile '%s' (account %.20s, role %.64s) "
			 "failed: %s%s%s%s", c->profile, s.account, s.role, err,
			 resp.status == 401 || resp.status == 403 ?
			 "; run `aws sso login --profile " : "", resp.status == 401 || resp.status == 403 ? c->profile : "", resp.status == 401 || resp.status == 403 ? "`" : "");
	} else {
		j = hp_json_parse(resp.body.buf, resp.body.len, NULL);
		r = creds_from_json(c, cJSON_GetObjectItemCaseSensitive(j, "roleCredentials"), names,
				    "sso:GetRoleCredentials");
		if (r == PROV_ANSWERED)
			source(c, "sso via profile %s", c->profile);
	}
	resp_done(&resp);
out:
	json_wipe(j);
	cJSON_Delete(j);
	json_wipe(cache);
	cJSON_Delete(cache);
	if (token)
		hp_free_secret(token);
	hp_buf_release_secure(&file);
	hp_buf_release(&url);
	free(path);
	return r;
}

static enum prov_result prov_shared_file(struct chain *c)
{
	char where[200];
	const char *token;
	enum prov_result r;

	if (!c->p || !hp_ini_has_section(&c->p->credentials, c->p->name))
		return not_configured(c, "no [%s] section in the credentials file", c->profile);
	snprintf(where, sizeof(where), "section [%s] of the credentials file", c->profile);
	token = cred(c->p, "aws_security_token");
	if (!token)
		token = cred(c->p, "aws_session_token");
	r = static_keys(c, cred(c->p, "aws_access_key_id"), cred(c->p, "aws_secret_access_key"),
			token, where);
	if (r == PROV_ANSWERED)
		source(c, "shared credentials file, profile %s", c->profile);
	return r;
}

static enum prov_result prov_login(struct chain *c)
{
	/* Not implemented: sessions made by 'aws login'. */
	if (!cfg(c->p, "login_session"))
		return PROV_NOT_CONFIGURED;
	return fail(c, "profile '%s' uses an 'aws login' session (login_session), which hpnode "
		    "does not read; export credentials with 'aws configure export-credentials "
		    "--profile %s --format env'", c->profile, c->profile);
}

/* ---- credential_process ---- */

struct argv_list {
	char **v;
	size_t n, alloc;
};

static void argv_push(struct argv_list *a, char *s)
{
	hp_array_reserve(a, 2);  /* s and the NULL after it */
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static void argv_free(struct argv_list *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		hp_free_secret(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/*
 * Split a command line the way a POSIX shell splits words (and the way
 * Python's shlex.split does): blanks separate, '...' is literal, "..."
 * honours \" and \\, a backslash outside quotes escapes any character.
 * No expansion of any kind. Returns NULL on success or what is wrong.
 */
static const char *shell_split(const char *s, struct argv_list *out)
{
	struct hp_buf w = HP_BUF_INIT(HP_MAX_LINE);
	const char *err = NULL;
	int in_word = 0;

	memset(out, 0, sizeof(*out));
	for (; *s && !err; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
			if (in_word)
				argv_push(out, hp_buf_detach(&w, NULL));
			in_word = 0;
			continue;
		}
		in_word = 1;
		if (*s == '\\') {
			/* Never step onto the terminator: the loop would read past it. */
			if (!s[1])
				err = "a backslash ends the line";
			else
				hp_buf_putc(&w, *++s);
		} else if (*s == '\'') {
			const char *q = strchr(s + 1, '\'');

			if (!q)
				err = "a single quote is not closed";
			else
				hp_buf_putn(&w, s + 1, (size_t)(q - s - 1));
			s = q ? q : s + strlen(s) - 1;
		} else if (*s == '"') {
			for (s++; *s && *s != '"'; s++) {
				if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
					s++;
				hp_buf_putc(&w, *s);
			}
			if (!*s) {
				err = "a double quote is not closed";
				s--;
			}
		} else {
			hp_buf_putc(&w, *s);
		}
	}
	if (!err && in_word)
		argv_push(out, hp_buf_detach(&w, NULL));
	hp_buf_release_secure(&w);
	if (!err && !out->n)
		err = "it is empty";
	if (err)
		argv_free(out);
	return err;
}

/* First non-blank line of a process's stderr, cleaned for one message line. */
static void first_line(const struct hp_buf *b, char *out, size_t n)
{
	const char *p = b->buf, *end = b->buf + b->len;
	size_t k = 0;

	while (p < end && (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t'))
		p++;
	for (; p < end && *p != '\n' && *p != '\r' && k + 1 < n; p++)
		out[k++] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
	while (k && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
}

/* Zero every string in a cJSON tree before it is freed. */
static void json_wipe(cJSON *j)
{
	for (; j; j = j->next) {
		if (j->valuestring)
			hp_wipe(j->valuestring, strlen(j->valuestring));
		json_wipe(j->child);
	}
}

static const char *json_string(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? nonempty(v->valuestring) : NULL;
}

static enum prov_result process_parse(struct chain *c, const char *prog, const struct hp_buf *out)
{
	cJSON *j = hp_json_parse(out->buf, out->len, NULL);
	const cJSON *ver;
	const char *ak, *sk, *exp;
	int64_t expires_ms = 0;
	enum prov_result r = PROV_ERROR;
	char when[32];

	if (!cJSON_IsObject(j)) {
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' did not "
			     "print a JSON object", prog, c->profile);
		goto out;
	}
	ver = cJSON_GetObjectItemCaseSensitive(j, "Version");
	if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
		if (cJSON_IsNumber(ver))
			hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' "
				     "printed Version %g; only Version 1 is supported", prog,
				     c->profile, ver->valuedouble);
		else
			hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' "
				     "printed no numeric Version; only Version 1 is supported", prog,
				     c->profile);
		goto out;
	}
	ak = json_string(j, "AccessKeyId");
	sk = json_string(j, "SecretAccessKey");
	if (!ak || !sk) {
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' printed "
			     "no %s", prog, c->profile, ak ? "SecretAccessKey" : "AccessKeyId");
		goto out;
	}
	exp = json_string(j, "Expiration");
	if (exp && parse_iso8601(exp, &expires_ms)) {
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' printed an "
			     "Expiration that is not an ISO-8601 time", prog, c->profile);
		goto out;
	}
	if (exp && expires_ms <= c->sys->now_ms(c->sys)) {
		format_time(expires_ms, when, sizeof(when));
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' returned "
			     "credentials that expired at %s", prog, c->profile, when);
		goto out;
	}
	set_creds(c, ak, sk, json_string(j, "SessionToken"), expires_ms);
	r = PROV_ANSWERED;
out:
	json_wipe(j);
	cJSON_Delete(j);
	return r;
}

static enum prov_result prov_process(struct chain *c)
{
	const char *line = cfg(c->p, "credential_process"), *why;
	struct argv_list argv;
	struct hp_run_req req;
	struct hp_run_res res;
	enum prov_result r = PROV_ERROR;
	char prog[128], err1[200];

	if (!line)
		return not_configured(c, "profile '%s' has no credential_process", c->profile);
	why = shell_split(line, &argv);
	if (why)
		return fail(c, "cannot split the credential_process of profile '%s': %s",
			    c->profile, why);
	hp_strlcpy(prog, argv.v[0], sizeof(prog));
	memset(&req, 0, sizeof(req));
	req.argv = (const char *const *)argv.v;
	req.timeout_ms = PROCESS_TIMEOUT_MS;
	memset(&res, 0, sizeof(res));
	res.exit_status = -1;
	hp_buf_init(&res.out, HP_MAX_PROC_OUT);
	hp_buf_init(&res.err, HP_MAX_PROC_OUT);

	if (c->sys->run(c->sys, &req, &res) < 0) {
		hp_error_set(c->e, HP_ERR_CREDS, "cannot run credential_process '%s' of profile '%s'",
			     prog, c->profile);
	} else if (res.timed_out) {
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' did not "
			     "finish within %ld s", prog, c->profile, PROCESS_TIMEOUT_MS / 1000);
	} else if (res.exit_status != 0) {
		first_line(&res.err, err1, sizeof(err1));
		/* A tool that printed its credentials on stderr must not have them echoed. */
		if (strcasestr(err1, "SecretAccessKey") || strcasestr(err1, "SessionToken") ||
		    strcasestr(err1, "secret_access_key") || strcasestr(err1, "session_token"))
			hp_strlcpy(err1, "(stderr not shown: it names a credential field)",
				   sizeof(err1));
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' exited "
			     "with status %d: %s", prog, c->profile, res.exit_status,
			     err1[0] ? err1 : "(nothing on stderr)");
	} else {
		r = process_parse(c, prog, &res.out);
		if (r == PROV_ANSWERED)
			source(c, "credential_process of profile %s", c->profile);
	}
	hp_buf_release_secure(&res.out);
	hp_buf_release_secure(&res.err);
	argv_free(&argv);
	return r;
}


static enum prov_result prov_config_file(struct chain *c)
{
	char where[200];
	const char *token;
	enum prov_result r;

	snprintf(where, sizeof(where), "profile '%s' of the config file", c->profile);
	token = cfg(c->p, "aws_security_token");
	if (!token)
		token = cfg(c->p, "aws_session_token");
	r = static_keys(c, cfg(c->p, "aws_access_key_id"), cfg(c->p, "aws_secret_access_key"),
			token, where);
	if (r == PROV_ANSWERED)
		source(c, "config file, profile %s", c->profile);
	return r;
}

/* ---- container credentials (ECS, EKS Pod Identity) ---- */

/* Host part of an http(s) URL ("127.0.0.1", "[fd00:ec2::23]"), without the port. */
static int url_host(const char *url, char *host, size_t n, int *https)
{
	const char *h, *end;
	size_t len;

	if (hp_starts_with(url, "http://"))
		*https = 0;
	else if (hp_starts_with(url, "https://"))
		*https = 1;
	else
		return -1;
	h = strstr(url, "://") + 3;
	if (*h == '[') {
		end = strchr(h, ']');
		if (!end)
			return -1;
		end++;
	} else {
		end = h + strcspn(h, ":/?#");
	}
	len = (size_t)(end - h);
	if (!len || len >= n)
		return -1;
	memcpy(host, h, len);
	host[len] = '\0';
	return 0;
}

/* The SDKs' list of hosts that may serve container credentials over plain HTTP. */
static int container_host_allowed(const char *host)
{
	static const char *const allowed[] = { "169.254.170.2", "169.254.170.23",
					       "[fd00:ec2::23]", "localhost", "[::1]" };
	size_t i;
	int a, b, d, e;
	char tail;

	for (i = 0; i < HP_ARRAY_LEN(allowed); i++)
		if (!strcasecmp(host, allowed[i]))
			return 1;
	/* 127.0.0.0/8 */
	if (sscanf(host, "%d.%d.%d.%d%c", &a, &b, &d, &e, &tail) == 4 && a == 127 &&
	    b >= 0 && b < 256 && d >= 0 && d < 256 && e >= 0 && e < 256)
		return 1;
	return 0;
}

static enum prov_result prov_container(struct chain *c)
{
	static const char *const names[4] = { "AccessKeyId", "SecretAccessKey", "Token",
					      "Expiration" };
	const char *rel = env_get(c->sys, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = env_get(c->sys, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *tfile = env_get(c->sys, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tok = env_get(c->sys, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
	struct hp_buf tbuf = HP_BUF_INIT(1 << 16);
	struct hp_header hdr[1];
	struct hp_http_req req;
	struct hp_http_resp resp;
	enum prov_result r;
	cJSON *j = NULL;
	char *url, host[256], err[400], what[300];
	int https = 0;

	if (rel) {
		url = xasprintf("http://169.254.170.2%s%s", rel[0] == '/' ? "" : "/", rel);
	} else if (full) {
		if (url_host(full, host, sizeof(host), &https))
			return fail(c, "AWS_CONTAINER_CREDENTIALS_FULL_URI '%.200s' is not an http(s) "
				    "URL", full);
		if (!https && !container_host_allowed(host))
			return fail(c, "AWS_CONTAINER_CREDENTIALS_FULL_URI names host %s over plain "
				    "HTTP; only loopback, 169.254.170.2, 169.254.170.23 and "
				    "fd00:ec2::23 are allowed without HTTPS", host);
		url = xstrdup(full);
	} else {
		return not_configured(c, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and "
				      "AWS_CONTAINER_CREDENTIALS_FULL_URI not set");
	}
	if (url_host(url, host, sizeof(host), &https))
		hp_strlcpy(host, "?", sizeof(host));
	snprintf(what, sizeof(what), "the container credentials endpoint at %s", host);
	if (tfile) {
		if (c->sys->read_file(c->sys, tfile, &tbuf) < 0) {
			int e = errno;

			free(url);
			hp_buf_release_secure(&tbuf);
			return fail(c, "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE '%.300s': %s",
				    tfile, strerror(e));
		}
		tok = trim(tbuf.buf);
	}
	memset(&req, 0, sizeof(req));
	req.method = "GET";
	req.url = url;
	if (tok && *tok) {
		hdr[0].name = "Authorization";
		hdr[0].value = tok;
		req.headers = hdr;
		req.nheaders = 1;
	}
	req.timeout_ms = CONTAINER_TIMEOUT_MS;
	req.no_proxy = 1;
	req.ca_bundle = c->env ? c->env->ca_bundle : NULL;
	hp_http_resp_init(&resp);
	if (http_try(c->sys, &req, &resp, CONTAINER_ATTEMPTS) || resp.status != 200) {
		reply_error(&resp, err, sizeof(err));
		r = fail(c, "%s failed: %s", what, err);
	} else {
		j = hp_json_parse(resp.body.buf, resp.body.len, NULL);
		r = cJSON_IsObject(j) ? creds_from_json(c, j, names, what) :
			fail(c, "%s did not answer with a JSON object", what);
		if (r == PROV_ANSWERED)
			source(c, "container credentials from %s", host);
	}
	json_wipe(j);
	cJSON_Delete(j);
	resp_done(&resp);
	hp_buf_release_secure(&tbuf);
	free(url);
	return r;
}

/* ---- instance metadata (IMDSv2 only) ---- */

static int imds_disabled(struct hp_sys *sys)
{
	const char *v = env_get(sys, "AWS_EC2_METADATA_DISABLED");

	return v && !strcasecmp(v, "true");
}

static void imds_base(struct hp_sys *sys, const struct hp_profile *p, char *out, size_t n)
{
	const char *v = env_get(sys, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	const char *mode = env_get(sys, "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
	size_t len;

	if (!v)
		v = cfg(p, "ec2_metadata_service_endpoint");
	if (!mode)
		mode = cfg(p, "ec2_metadata_service_endpoint_mode");
	if (!v)
		v = mode && !strcasecmp(mode, "IPv6") ? "http://[fd00:ec2::254]" :
			"http://169.254.169.254";
	hp_strlcpy(out, v, n);
	len = strlen(out);
	while (len && out[len - 1] == '/')
		out[--len] = '\0';
}

/* One IMDS request; token NULL for the token PUT itself. */
static int imds_call(struct hp_sys *sys, const char *method, const char *base, const char *path,
		     const char *token, struct hp_http_resp *resp)
{
	struct hp_header hdr[1];
	struct hp_http_req req;
	char *url = xasprintf("%s%s", base, path);
	int rc;

	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	if (token) {
		hdr[0].name = "X-aws-ec2-metadata-token";
		hdr[0].value = token;
	} else {
		hdr[0].name = "X-aws-ec2-metadata-token-ttl-seconds";
		hdr[0].value = "21600";
	}
	req.headers = hdr;
	req.nheaders = 1;
	req.timeout_ms = IMDS_TIMEOUT_MS;
	req.no_proxy = 1;
	rc = http_try(sys, &req, resp, IMDS_ATTEMPTS);
	free(url);
	return rc;
}

/* Session token: 0, or -1 with why (absent = no service answered at all). */
static int imds_token(struct hp_sys *sys, const char *base, char **token, char *why, size_t n,
		      int *absent)
{
	struct hp_http_resp resp;
	int rc = -1;

	*absent = 0;
	hp_http_resp_init(&resp);
	if (imds_call(sys, "PUT", base, "/latest/api/token", NULL, &resp)) {
		snprintf(why, n, "no instance metadata service at %s (%s)", base,
			 resp.net == HP_NET_TIMEOUT ? "timed out" : "no connection");
		*absent = 1;
	} else if (resp.status != 200 || !resp.body.len) {
		snprintf(why, n, "the instance metadata service at %s gave no IMDSv2 session token "
			 "(HTTP %ld)", base, resp.status);
	} else {
		*token = xstrdup(trim(resp.body.buf));
		rc = 0;
	}
	resp_done(&resp);
	return rc;
}

static enum prov_result prov_imds(struct chain *c)
{
	static const char *const names[4] = { "AccessKeyId", "SecretAccessKey", "Token",
					      "Expiration" };
	struct hp_http_resp resp;
	enum prov_result r;
	cJSON *j = NULL;
	const char *code;
	char base[512], why[600], role[256], path[400], err[400], what[900], *token = NULL;
	int absent;

	if (imds_disabled(c->sys))
		return not_configured(c, "AWS_EC2_METADATA_DISABLED is true");
	imds_base(c->sys, c->p, base, sizeof(base));
	if (c->imds_absent && *c->imds_absent)
		return not_configured(c, "no instance metadata service at %s (no answer earlier)",
				      base);
	if (imds_token(c->sys, base, &token, why, sizeof(why), &absent)) {
		if (absent && c->imds_absent)
			*c->imds_absent = 1;
		return not_configured(c, "%s", why);
	}
	hp_http_resp_init(&resp);
	if (imds_call(c->sys, "GET", base, "/latest/meta-data/iam/security-credentials/", token,
		      &resp) || resp.status != 200) {
		r = resp.status == 404 ?
			not_configured(c, "this EC2 instance has no instance profile (IMDS at %s)",
				       base) :
			(reply_error(&resp, err, sizeof(err)),
			 fail(c, "the instance metadata service at %s did not list a role: %s", base,
			      err));
		goto out;
	}
	hp_strlcpy(role, trim(resp.body.buf), sizeof(role));
	role[strcspn(role, "\r\n")] = '\0';
	resp_done(&resp);
	hp_http_resp_init(&resp);
	if (!role[0] || strchr(role, '/')) {
		r = fail(c, "the instance metadata service at %s listed no usable role name", base);
		goto out;
	}
	snprintf(path, sizeof(path), "/latest/meta-data/iam/security-credentials/%s", role);
	snprintf(what, sizeof(what), "the instance metadata service at %s (role %s)", base, role);
	if (imds_call(c->sys, "GET", base, path, token, &resp) || resp.status != 200) {
		reply_error(&resp, err, sizeof(err));
		r = fail(c, "%s gave no credentials: %s", what, err);
		goto out;
	}
	j = hp_json_parse(resp.body.buf, resp.body.len, NULL);
	code = json_string(j, "Code");
	if (!cJSON_IsObject(j) || (code && strcmp(code, "Success"))) {
		r = fail(c, "%s answered Code %.64s instead of Success", what, code ? code : "?");
		goto out;
	}
	r = creds_from_json(c, j, names, what);
	if (r == PROV_ANSWERED)
		source(c, "instance metadata (role %s)", role);
out:
	json_wipe(j);
	cJSON_Delete(j);
	resp_done(&resp);
	if (token)
		hp_free_secret(token);
	return r;
}

int hp_imds_region(struct hp_sys *sys, const struct hp_profile *p, char *region, size_t n,
		   int *absent)
{
	struct hp_http_resp resp;
	char base[512], why[600], *token = NULL;
	int rc = -1;

	*absent = 0;
	if (imds_disabled(sys))
		return -1;
	imds_base(sys, p, base, sizeof(base));
	if (imds_token(sys, base, &token, why, sizeof(why), absent))
		return -1;
	hp_http_resp_init(&resp);
	if (!imds_call(sys, "GET", base, "/latest/meta-data/placement/region", token, &resp) &&
	    resp.status == 200 && resp.body.len) {
		hp_strlcpy(region, trim(resp.body.buf), n);
		rc = 0;
	}
	resp_done(&resp);
	hp_free_secret(token);
	return rc;
}

/* ---- the table, the walk, and the refreshing provider ---- */

static const struct {
	const char *name;
	enum prov_result (*fn)(struct chain *c);
} providers[] = {
	{ "environment", prov_environment },
	{ "assume-role", prov_assume_role },
	{ "web-identity", prov_web_identity },
	{ "sso", prov_sso },
	{ "shared-credentials-file", prov_shared_file },
	{ "login", prov_login },                        /* detects only */
	{ "credential-process", prov_process },
	{ "config-file", prov_config_file },
	{ "container", prov_container },
	{ "imds", prov_imds },
};

/* Prefixes a provider's error with its name, unless it is there already. */
static void name_error(struct hp_error *e, const char *prov)
{
	char msg[sizeof(e->msg)];
	size_t n = strlen(prov);

	if (!strncmp(e->msg, prov, n) && e->msg[n] == ':' && e->msg[n + 1] == ' ')
		return;
	snprintf(msg, sizeof(msg), "%s: %.960s", prov, e->msg);
	hp_strlcpy(e->msg, msg, sizeof(e->msg));
}

/* Walks the chain; *row is the provider that answered. */
static int walk(struct chain *c, size_t *row)
{
	struct hp_buf tried = HP_BUF_INIT(4096);
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(providers); i++) {
		enum prov_result r;

		c->reason[0] = '\0';
		c->source[0] = '\0';
		r = providers[i].fn(c);
		if (r == PROV_ANSWERED) {
			hp_strlcpy(c->out->provider, providers[i].name, sizeof(c->out->provider));
			hp_strlcpy(c->out->source, c->source[0] ? c->source : providers[i].name,
				   sizeof(c->out->source));
			if (c->trace)
				hp_buf_printf(c->trace, "%s: answered%s\n", providers[i].name,
					      c->out->session_token ? " (session credentials)" : "");
			*row = i;
			hp_buf_release(&tried);
			return 0;
		}
		if (r == PROV_ERROR) {
			if (c->trace)
				hp_buf_printf(c->trace, "%s: failed\n", providers[i].name);
			name_error(c->e, providers[i].name);
			hp_creds_release(c->out);
			hp_buf_release(&tried);
			return -1;
		}
		if (!c->reason[0])
			continue;
		if (c->trace)
			hp_buf_printf(c->trace, "%s: %s\n", providers[i].name, c->reason);
		hp_buf_printf(&tried, "%s%s", tried.len ? ", " : "", providers[i].name);
	}
	hp_error_set(c->e, HP_ERR_NO_CREDS, "no AWS credentials found for profile '%s' (tried %s); "
		     "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add keys, a role, SSO or "
		     "a credential_process to the profile", c->profile, tried.buf);
	hp_buf_release(&tried);
	return -1;
}

static void chain_init(struct chain *c, struct hp_sys *sys, const struct hp_profile *p,
		       const struct hp_creds_env *env, int *imds_absent, struct hp_creds *out,
		       struct hp_buf *trace, struct hp_error *e)
{
	memset(c, 0, sizeof(*c));
	c->sys = sys;
	c->p = p;
	c->profile = p ? p->name : "default";
	c->env = env;
	c->imds_absent = imds_absent;
	c->out = out;
	c->e = e;
	c->trace = trace;
	c->no_env = p && p->explicit_profile;
}

int hp_creds_resolve(struct hp_sys *sys, const struct hp_profile *p, struct hp_creds *out,
		     struct hp_buf *trace, struct hp_error *e)
{
	struct hp_creds_env env;
	struct chain c;
	char region[40], sts[512];
	int absent = 0;
	size_t row;

	memset(out, 0, sizeof(*out));
	memset(&env, 0, sizeof(env));
	if (!hp_region_resolve(sys, p, NULL, region, sizeof(region), NULL, &(struct hp_error)
			       HP_ERROR_INIT)) {
		env.region = region;
		if (!hp_endpoint_resolve(sys, p, HP_SVC_STS, region, NULL, sts, sizeof(sts),
					 &(struct hp_error)HP_ERROR_INIT))
			env.sts_endpoint = sts;
	}
	env.ca_bundle = hp_ca_bundle(sys, p);
	chain_init(&c, sys, p, &env, &absent, out, trace, e);
	return walk(&c, &row);
}

void hp_creds_release(struct hp_creds *c)
{
	hp_free_secret(c->access_key);
	hp_free_secret(c->secret_key);
	hp_free_secret(c->session_token);
	hp_wipe(c, sizeof(*c));
}

struct hp_creds_provider {
	pthread_mutex_t lock;
	struct hp_sys *sys;
	const struct hp_profile *p;
	struct hp_creds_env env;
	char region[40], sts_endpoint[512];
	char *ca_bundle;
	int imds_absent;
	size_t row;                 /* the provider that answered */
	struct hp_creds cur;
	int64_t fetched_ms;
	int64_t next_try_ms;        /* after a failed refresh */
	unsigned refreshes;
	char last_error[512];
	char desc[192];
};

int hp_creds_provider_open(struct hp_sys *sys, const struct hp_profile *p,
			   const struct hp_creds_env *env, struct hp_buf *trace,
			   struct hp_creds_provider **out, struct hp_error *e)
{
	struct hp_creds_provider *cp = xcalloc(1, sizeof(*cp));
	struct chain c;

	*out = NULL;
	pthread_mutex_init(&cp->lock, NULL);
	cp->sys = sys;
	cp->p = p;
	if (env && env->region) {
		hp_strlcpy(cp->region, env->region, sizeof(cp->region));
		cp->env.region = cp->region;
	}
	if (env && env->sts_endpoint) {
		hp_strlcpy(cp->sts_endpoint, env->sts_endpoint, sizeof(cp->sts_endpoint));
		cp->env.sts_endpoint = cp->sts_endpoint;
	}
	if (env && env->ca_bundle) {
		cp->ca_bundle = xstrdup(env->ca_bundle);
		cp->env.ca_bundle = cp->ca_bundle;
	}
	cp->imds_absent = env ? env->imds_absent : 0;
	chain_init(&c, sys, p, &cp->env, &cp->imds_absent, &cp->cur, trace, e);
	if (walk(&c, &cp->row)) {
		hp_creds_provider_close(cp);
		return -1;
	}
	cp->fetched_ms = sys->now_ms(sys);
	hp_strlcpy(cp->desc, cp->cur.source, sizeof(cp->desc));
	if (trace && cp->cur.expires_ms) {
		char when[32];

		format_time(cp->cur.expires_ms, when, sizeof(when));
		hp_buf_printf(trace, "credentials: %s, valid until %s, refreshed before expiry\n",
			      cp->desc, when);
	} else if (trace) {
		hp_buf_printf(trace, "credentials: %s, no expiry\n", cp->desc);
	}
	*out = cp;
	return 0;
}

/* How long before expiry a refresh is due: 5 minutes, or half the lifetime when shorter. */
static int64_t refresh_window(const struct hp_creds_provider *cp)
{
	int64_t life = cp->cur.expires_ms - cp->fetched_ms;

	return life / 2 < REFRESH_WINDOW_MS ? life / 2 : REFRESH_WINDOW_MS;
}

static void refresh(struct hp_creds_provider *cp, int debug, int64_t now)
{
	struct hp_creds fresh;
	struct hp_error fe = HP_ERROR_INIT;
	struct chain c;
	enum prov_result r;
	char when[32];

	memset(&fresh, 0, sizeof(fresh));
	chain_init(&c, cp->sys, cp->p, &cp->env, &cp->imds_absent, &fresh, NULL, &fe);
	c.debug = debug;
	r = providers[cp->row].fn(&c);
	if (r == PROV_ANSWERED && (!fresh.expires_ms || fresh.expires_ms > now + SIGN_MARGIN_MS)) {
		hp_strlcpy(fresh.provider, cp->cur.provider, sizeof(fresh.provider));
		hp_strlcpy(fresh.source, cp->cur.source, sizeof(fresh.source));
		hp_creds_release(&cp->cur);
		cp->cur = fresh;
		cp->fetched_ms = now;
		cp->refreshes++;
		cp->last_error[0] = '\0';
		if (debug) {
			format_time(cp->cur.expires_ms, when, sizeof(when));
			fprintf(stderr, "hpnode: debug: credentials: refreshed from %s, valid until %s\n",
				cp->desc, cp->cur.expires_ms ? when : "(no expiry)");
		}
		return;
	}
	if (r == PROV_ANSWERED)
		hp_strlcpy(cp->last_error, "the refreshed credentials were already expired",
			   sizeof(cp->last_error));
	else if (r == PROV_ERROR)
		hp_strlcpy(cp->last_error, fe.msg, sizeof(cp->last_error));
	else
		snprintf(cp->last_error, sizeof(cp->last_error), "%s", c.reason);
	hp_creds_release(&fresh);
	cp->next_try_ms = now + RETRY_FAILED_REFRESH_MS;
	if (debug)
		fprintf(stderr, "hpnode: debug: credentials: refresh from %s failed: %s\n", cp->desc,
			cp->last_error);
}

int hp_creds_provider_get(struct hp_creds_provider *cp, int debug, struct hp_creds *out,
			  struct hp_error *e)
{
	int64_t now;
	char when[32];

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&cp->lock);
	now = cp->sys->now_ms(cp->sys);
	if (cp->cur.expires_ms && now >= cp->cur.expires_ms - refresh_window(cp) &&
	    now >= cp->next_try_ms)
		refresh(cp, debug, now);
	if (cp->cur.expires_ms && now >= cp->cur.expires_ms - SIGN_MARGIN_MS) {
		format_time(cp->cur.expires_ms, when, sizeof(when));
		hp_error_set(e, HP_ERR_CREDS, "%s: the credentials (%s, profile '%s') expired at %s "
			     "and could not be refreshed: %s", cp->cur.provider, cp->desc,
			     cp->p ? cp->p->name : "default", when,
			     cp->last_error[0] ? cp->last_error : "no refresh possible");
		pthread_mutex_unlock(&cp->lock);
		return -1;
	}
	out->access_key = xstrdup(cp->cur.access_key);
	out->secret_key = xstrdup(cp->cur.secret_key);
	out->session_token = cp->cur.session_token ? xstrdup(cp->cur.session_token) : NULL;
	out->expires_ms = cp->cur.expires_ms;
	hp_strlcpy(out->provider, cp->cur.provider, sizeof(out->provider));
	hp_strlcpy(out->source, cp->cur.source, sizeof(out->source));
	pthread_mutex_unlock(&cp->lock);
	return 0;
}

const char *hp_creds_provider_desc(const struct hp_creds_provider *cp)
{
	return cp ? cp->desc : "";
}

unsigned hp_creds_provider_refreshes(struct hp_creds_provider *cp)
{
	unsigned n;

	pthread_mutex_lock(&cp->lock);
	n = cp->refreshes;
	pthread_mutex_unlock(&cp->lock);
	return n;
}

void hp_creds_provider_close(struct hp_creds_provider *cp)
{
	if (!cp)
		return;
	hp_creds_release(&cp->cur);
	free(cp->ca_bundle);
	pthread_mutex_destroy(&cp->lock);
	free(cp);
}


/* ---- region ---- */

/* ^[a-z]{2}(-[a-z]+){1,2}-[0-9]+$ */
static int region_valid(const char *s)
{
	int groups = 0;

	if (!(s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z'))
		return 0;
	s += 2;
	for (;;) {
		if (*s++ != '-')
			return 0;
		if (*s >= '0' && *s <= '9')
			break;
		if (!(*s >= 'a' && *s <= 'z'))
			return 0;
		while (*s >= 'a' && *s <= 'z')
			s++;
		groups++;
	}
	if (groups < 1 || groups > 2)
		return 0;
	while (*s >= '0' && *s <= '9')
		s++;
	return *s == '\0';
}

int hp_region_resolve(struct hp_sys *sys, const struct hp_profile *p, const char *flag_region,
		      char *region, size_t n, const char **source, struct hp_error *e)
{
	const char *v = NULL, *src = NULL;

	if (flag_region) {
		v = flag_region;
		src = "--region";
	} else if ((v = env_get(sys, "AWS_REGION"))) {
		src = "AWS_REGION";
	} else if ((v = env_get(sys, "AWS_DEFAULT_REGION"))) {
		src = "AWS_DEFAULT_REGION";
	} else if ((v = cfg(p, "region"))) {
		src = "config file";
	}
	if (!v)
		return hp_error_set(e, HP_ERR_NO_REGION, "no AWS region configured: pass --region, "
				    "set AWS_REGION, or set 'region' in profile '%s' of the config "
				    "file", p ? p->name : "default");
	if (!region_valid(v))
		return hp_error_set(e, HP_ERR_USAGE, "invalid region '%.64s' from %s: expected a "
				    "name like 'us-west-2'", v, src);
	if (hp_strlcpy(region, v, n) >= n)
		return hp_error_set(e, HP_ERR_USAGE, "region '%.64s' from %s is too long", v, src);
	if (source)
		*source = src;
	return 0;
}
