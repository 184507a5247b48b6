/*
 * Web identity: a token file (AWS_WEB_IDENTITY_TOKEN_FILE or the profile's
 * web_identity_token_file) exchanged with sts:AssumeRoleWithWebIdentity.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "creds-int.h"

static void form_add(struct hp_buf *b, const char *name, const char *value)
{
	if (b->len)
		hp_buf_putc(b, '&');
	hp_aws_form_encode(b, name);
	hp_buf_putc(b, '=');
	hp_aws_form_encode(b, value);
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

	if (c->env && c->env->sts_error)
		return cr_fail(c, "web identity (%s): %.600s", via, c->env->sts_error);
	if (!c->env || !c->env->sts_endpoint)
		return cr_fail(c, "web identity (%s) needs an AWS region for STS: pass --region or set "
			       "AWS_REGION", via);
	if (!session) {
		cr_default_session_name(c, name, sizeof(name));
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
	snprintf(what, sizeof(what), "sts:AssumeRoleWithWebIdentity of %.150s (%.100s)", role, via);
	if (cr_http_try(c->sys, &req, &resp, 2) || resp.status != 200) {
		cr_reply_error(&resp, err, sizeof(err));
		res = cr_fail(c, "%s failed: %s", what, err);
		goto out;
	}
	j = hp_xml_to_json(resp.body.buf, resp.body.len, root, sizeof(root));
	result = cJSON_GetObjectItemCaseSensitive(j, "AssumeRoleWithWebIdentityResult");
	cr = cJSON_GetObjectItemCaseSensitive(result, "Credentials");
	res = cJSON_IsObject(cr) ? cr_from_json(c, cr, cr_sts_names, what) :
		cr_fail(c, "%s returned no Credentials", what);
out:
	cr_json_wipe(j);
	cJSON_Delete(j);
	hp_buf_release_secure(&body);
	cr_resp_done(&resp);
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
		return cr_fail(c, "cannot read the web identity token file '%.300s' (%s): %s", file, via,
			       strerror(err));
	}
	t = cr_trim(tok.buf);
	if (!*t) {
		hp_buf_release_secure(&tok);
		return cr_fail(c, "the web identity token file '%.300s' (%s) is empty", file, via);
	}
	r = sts_web_identity(c, role, session, t, via);
	hp_buf_release_secure(&tok);
	return r;
}

/*
 * Each of AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN and AWS_ROLE_SESSION_NAME
 * beats the profile's web_identity_token_file, role_arn and
 * role_session_name, as in botocore; none is read under --profile or for a
 * source profile.
 */
static const char *web_setting(struct chain *c, const char *var, const char *key,
			       const char **from)
{
	const char *v = c->no_env ? NULL : cr_env_get(c->sys, var);

	if (v) {
		*from = var;
		return v;
	}
	*from = key;
	return cr_cfg(c->p, key);
}

enum prov_result cr_prov_web_identity(struct chain *c)
{
	const char *ffrom, *rfrom, *sfrom;
	const char *file = web_setting(c, "AWS_WEB_IDENTITY_TOKEN_FILE", "web_identity_token_file",
				       &ffrom);
	const char *role = web_setting(c, "AWS_ROLE_ARN", "role_arn", &rfrom);
	const char *session = web_setting(c, "AWS_ROLE_SESSION_NAME", "role_session_name", &sfrom);
	int file_env = file && !strcmp(ffrom, "AWS_WEB_IDENTITY_TOKEN_FILE");
	enum prov_result r;
	char via[200];

	(void)sfrom;
	if (!file) {
		/* Stricter than botocore, which skips: a role without its token is a mistake. */
		if (role && !strcmp(rfrom, "AWS_ROLE_ARN"))
			return cr_fail(c, "AWS_ROLE_ARN is set but AWS_WEB_IDENTITY_TOKEN_FILE is not (web "
				       "identity needs both)");
		if (c->no_env)
			return cr_not_configured(c, "profile '%s' has no web_identity_token_file",
						 c->profile);
		return cr_not_configured(c, "AWS_WEB_IDENTITY_TOKEN_FILE not set and profile '%s' has no "
					 "web_identity_token_file", c->profile);
	}
	if (!role)
		return cr_fail(c, "%s is set but %s", file_env ? "AWS_WEB_IDENTITY_TOKEN_FILE" :
			       "web_identity_token_file", file_env ? "AWS_ROLE_ARN is not (web identity "
			       "needs both)" : "the profile has no role_arn");
	if (file_env)
		snprintf(via, sizeof(via), "AWS_WEB_IDENTITY_TOKEN_FILE");
	else
		snprintf(via, sizeof(via), "web_identity_token_file of profile '%s'", c->profile);
	r = web_identity(c, file, role, session, via);
	if (r == PROV_ANSWERED) {
		if (file_env)
			cr_source(c, "web identity via AWS_WEB_IDENTITY_TOKEN_FILE");
		else
			cr_source(c, "web identity via profile %s", c->profile);
	}
	return r;
}
