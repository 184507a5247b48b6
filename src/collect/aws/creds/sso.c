/*
 * SSO profiles (legacy keys and sso-session): the cached token, refreshed
 * with the OIDC refresh-token grant when due, traded at the portal for
 * role credentials (sso:GetRoleCredentials).
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "creds-int.h"

#define SSO_TIMEOUT_MS 10000L
#define SSO_REFRESH_WINDOW_MS (15 * 60 * 1000L)

static void sha1_hex(const char *s, char out[41])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	EVP_Digest(s, strlen(s), md, &n, EVP_sha1(), NULL);
	for (i = 0; i < n && i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[40] = '\0';
}

/*
 * The SSO portal's or OIDC service's URL: the configured endpoint of the
 * profile the run names (AWS_ENDPOINT_URL_<SVC>, AWS_ENDPOINT_URL, its
 * [services] section, its endpoint_url), else https://<host>.<region>.amazonaws.com.
 */
static enum prov_result sso_endpoint(struct chain *c, const char *suffix, const char *key,
				     const char *host, const char *region, char *out, size_t n)
{
	struct hp_error ee = HP_ERROR_INIT;
	int rc = c->top ? hp_endpoint_configured(c->sys, c->top, suffix, key, out, n, &ee) : 0;
	size_t len;

	if (rc < 0)
		return cr_fail(c, "%s", ee.msg);
	if (rc == 0)
		snprintf(out, n, "https://%s.%s.amazonaws.com", host, region);
	/* The operation's path follows with one slash between. */
	len = strlen(out);
	if (len && out[len - 1] == '/')
		out[len - 1] = '\0';
	return PROV_ANSWERED;
}

struct sso_cfg {
	const char *session;      /* sso_session name, NULL for the legacy keys */
	const char *start_url, *region, *account, *role;
};

/*
 * botocore's rules: the profile is an SSO profile only when it has
 * sso_account_id or sso_role_name (a profile with only sso_session or only
 * a start URL falls through to the next provider); the sso-session's
 * values fill the profile's, and a key set differently in both is an error.
 */
static enum prov_result sso_config(struct chain *c, struct sso_cfg *s)
{
	char sect[200];
	size_t i;

	memset(s, 0, sizeof(*s));
	s->session = cr_cfg(c->p, "sso_session");
	s->account = cr_cfg(c->p, "sso_account_id");
	s->role = cr_cfg(c->p, "sso_role_name");
	s->start_url = cr_cfg(c->p, "sso_start_url");
	s->region = cr_cfg(c->p, "sso_region");
	if (!s->account && !s->role)
		return cr_not_configured(c, "profile '%s' has no sso_account_id or sso_role_name",
					 c->profile);
	if (s->session) {
		snprintf(sect, sizeof(sect), "sso-session %s", s->session);
		if (!hp_ini_has_section(&c->p->config, sect))
			return cr_fail(c, "profile '%s' names sso_session '%.100s', but the config file "
				       "has no [sso-session %.100s] section", c->profile, s->session,
				       s->session);
		for (i = 0; i < c->p->config.n; i++) {
			const struct hp_ini_kv *kv = &c->p->config.kv[i];
			const char *mine;

			if (strcmp(kv->section, sect))
				continue;
			mine = hp_profile_config(c->p, kv->key);
			if (mine && strcmp(mine, kv->value))
				return cr_fail(c, "profile '%s' sets %.64s to '%.200s' but its sso-session "
					       "'%.100s' sets it to '%.200s'", c->profile, kv->key, mine,
					       s->session, kv->value);
		}
		if (cr_nonempty(hp_ini_get(&c->p->config, sect, "sso_start_url")))
			s->start_url = hp_ini_get(&c->p->config, sect, "sso_start_url");
		if (cr_nonempty(hp_ini_get(&c->p->config, sect, "sso_region")))
			s->region = hp_ini_get(&c->p->config, sect, "sso_region");
	}
	if (!s->start_url || !s->region || !s->account || !s->role)
		return cr_fail(c, "SSO profile '%s' is incomplete: it needs %s", c->profile,
			       !s->start_url ? "sso_start_url" : !s->region ? "sso_region" :
			       !s->account ? "sso_account_id" : "sso_role_name");
	return PROV_ANSWERED;
}

/* botocore refreshes only with a client registration that has not expired. */
static int sso_refreshable(const cJSON *cache, int64_t now)
{
	const char *reg = cr_json_string(cache, "registrationExpiresAt");
	int64_t until;

	if (!cr_json_string(cache, "clientId") || !cr_json_string(cache, "clientSecret") ||
	    !cr_json_string(cache, "refreshToken") || !reg || cr_parse_time(reg, &until))
		return 0;
	return until > now;
}

/* Refresh a token with the OIDC refresh-token grant; rewrites the cache. */
static enum prov_result sso_refresh(struct chain *c, const struct sso_cfg *s, const char *path,
				    cJSON *cache, char **token)
{
	const char *cid = cr_json_string(cache, "clientId"), *csec = cr_json_string(cache, "clientSecret");
	const char *rt = cr_json_string(cache, "refreshToken");
	struct hp_header hdr[1] = { { "Content-Type", "application/json" } };
	cJSON *in = NULL, *j = NULL;
	char *body = NULL, *text = NULL, url[512], err[400], when[32], word[300];
	const char *at, *nrt;
	const cJSON *ein;
	struct hp_http_req req;
	struct hp_http_resp resp;
	enum prov_result r = PROV_ERROR;
	int64_t now = c->sys->now_ms(c->sys);

	if (!cid || !csec || !rt)
		return cr_fail(c, "the SSO session of profile '%s' has expired and cannot be refreshed; "
			       "run `aws sso login --profile %s`", c->profile,
			       hp_shell_word_s(c->profile, word, sizeof(word)));
	if (!c->sys->write_file)
		return cr_fail(c, "cannot rewrite the SSO token cache");
	if (sso_endpoint(c, "SSO_OIDC", "sso_oidc", "oidc", s->region, url, sizeof(url) - 8) !=
	    PROV_ANSWERED)
		return PROV_ERROR;
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
	if (cr_http_try(c->sys, &req, &resp, 2) || resp.status != 200) {
		cr_reply_error(&resp, err, sizeof(err));
		r = cr_fail(c, "refreshing the SSO token of profile '%s' (sso-oidc:CreateToken) failed: "
			    "%s; run `aws sso login --profile %s`", c->profile, err,
			    hp_shell_word_s(c->profile, word, sizeof(word)));
		goto out;
	}
	j = hp_json_parse(resp.body.buf, resp.body.len, NULL);
	at = cr_json_string(j, "accessToken");
	ein = cJSON_GetObjectItemCaseSensitive(j, "expiresIn");
	if (!at || !cJSON_IsNumber(ein)) {
		r = cr_fail(c, "sso-oidc:CreateToken for profile '%s' returned no accessToken/expiresIn",
			    c->profile);
		goto out;
	}
	/* Checked before it is a whole number: a lifetime of seconds from 0 to 90 days. */
	if (!(ein->valuedouble >= 0 && ein->valuedouble <= 90.0 * 86400)) {
		r = cr_fail(c, "sso-oidc:CreateToken for profile '%s' returned expiresIn %.0g, not a "
			    "lifetime from 0 to 90 days", c->profile, ein->valuedouble);
		goto out;
	}
	cr_format_time(now + (int64_t)ein->valuedouble * 1000, when, sizeof(when));
	cJSON_ReplaceItemInObjectCaseSensitive(cache, "accessToken", cJSON_CreateString(at));
	if (cJSON_HasObjectItem(cache, "expiresAt"))
		cJSON_ReplaceItemInObjectCaseSensitive(cache, "expiresAt", cJSON_CreateString(when));
	else
		cJSON_AddStringToObject(cache, "expiresAt", when);
	nrt = cr_json_string(j, "refreshToken");
	if (nrt)
		cJSON_ReplaceItemInObjectCaseSensitive(cache, "refreshToken", cJSON_CreateString(nrt));
	text = cJSON_Print(cache);
	if (!text || c->sys->write_file(c->sys, path, text, strlen(text), 0600) < 0) {
		int e = errno;

		r = cr_fail(c, "cannot rewrite the SSO token cache '%.300s': %s", path, strerror(e));
		goto out;
	}
	*token = xstrdup(at);
	cr_trace(c, "sso: token refreshed (sso-oidc:CreateToken), cache rewritten, valid until %s",
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
	cr_json_wipe(in);
	cJSON_Delete(in);
	cr_json_wipe(j);
	cJSON_Delete(j);
	cr_resp_done(&resp);
	return r;
}

enum prov_result cr_prov_sso(struct chain *c)
{
	static const char *const names[4] = { "accessKeyId", "secretAccessKey", "sessionToken",
					      "expiration" };
	struct sso_cfg s;
	struct hp_buf file = HP_BUF_INIT(1 << 20), url = HP_BUF_INIT(4096);
	struct hp_header hdr[1];
	struct hp_http_req req;
	struct hp_http_resp resp;
	enum prov_result r;
	const char *home = cr_env_get(c->sys, "HOME"), *exp;
	cJSON *cache = NULL, *j = NULL;
	char hex[41], *path = NULL, *token = NULL, base[512], err[400], word[300];
	int64_t expires = 0, now;

	r = sso_config(c, &s);
	if (r != PROV_ANSWERED)
		return r;
	if (!home)
		return cr_fail(c, "SSO profile '%s': HOME is not set, so the token cache cannot be "
			       "found", c->profile);
	sha1_hex(s.session ? s.session : s.start_url, hex);
	path = xasprintf("%s/.aws/sso/cache/%s.json", home, hex);
	if (c->sys->read_file(c->sys, path, &file) < 0 ||
	    !(cache = hp_json_parse(file.buf, file.len, NULL)) || !cJSON_IsObject(cache) ||
	    !cr_json_string(cache, "accessToken")) {
		r = cr_fail(c, "no valid SSO token cached for profile '%s' (%.300s); run `aws sso login "
			    "--profile %s`", c->profile, path, hp_shell_word_s(c->profile, word, sizeof(word)));
		goto out;
	}
	exp = cr_json_string(cache, "expiresAt");
	if (!exp || cr_parse_time(exp, &expires))
		expires = 0;
	now = c->sys->now_ms(c->sys);
	/*
	 * As botocore: a token is good until its expiry; an sso-session token
	 * within 15 minutes of it is refreshed when the cache can refresh it, and
	 * a failed refresh keeps the old token while it lasts.
	 */
	if (s.session && expires - now < SSO_REFRESH_WINDOW_MS && sso_refreshable(cache, now)) {
		struct hp_error re = HP_ERROR_INIT;
		struct chain sub = *c;

		sub.e = &re;
		r = sso_refresh(&sub, &s, path, cache, &token);
		if (r != PROV_ANSWERED && expires <= now) {
			hp_error_set(c->e, re.code, "%s", re.msg);
			goto out;
		}
		if (r != PROV_ANSWERED)
			cr_trace(c, "sso: refresh failed, the cached token is used until it expires: "
				 "%s", re.msg);
	}
	if (!token && expires <= now) {
		r = cr_fail(c, "the SSO token of profile '%s' has expired%s; run `aws sso login "
			    "--profile %s`", c->profile, s.session ? " and cannot be refreshed" : "",
			    hp_shell_word_s(c->profile, word, sizeof(word)));
		goto out;
	}
	if (!token)
		token = xstrdup(cr_json_string(cache, "accessToken"));
	if (sso_endpoint(c, "SSO", "sso", "portal.sso", s.region, base, sizeof(base)) !=
	    PROV_ANSWERED) {
		r = PROV_ERROR;
		goto out;
	}
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
	if (cr_http_try(c->sys, &req, &resp, 2) || resp.status != 200) {
		cr_reply_error(&resp, err, sizeof(err));
		r = cr_fail(c, "sso:GetRoleCredentials for profile '%s' (account %.20s, role %.64s) "
			    "failed: %s%s%s%s", c->profile, s.account, s.role, err,
			    resp.status == 401 || resp.status == 403 ?
			    "; run `aws sso login --profile " : "", resp.status == 401 || resp.status == 403 ?
			    hp_shell_word_s(c->profile, word, sizeof(word)) : "", resp.status == 401 || resp.status == 403 ? "`" : "");
	} else {
		j = hp_json_parse(resp.body.buf, resp.body.len, NULL);
		r = cr_from_json(c, cJSON_GetObjectItemCaseSensitive(j, "roleCredentials"), names,
				 "sso:GetRoleCredentials");
		if (r == PROV_ANSWERED)
			cr_source(c, "sso via profile %s", c->profile);
	}
	cr_resp_done(&resp);
out:
	cr_json_wipe(j);
	cJSON_Delete(j);
	cr_json_wipe(cache);
	cJSON_Delete(cache);
	if (token)
		hp_free_secret(token);
	hp_buf_release_secure(&file);
	hp_buf_release(&url);
	free(path);
	return r;
}
