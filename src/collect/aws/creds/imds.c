/*
 * Instance metadata, IMDSv2 only: a session token, then the instance
 * profile's role and its credentials; also the instance's region.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "creds-int.h"

#define IMDS_TIMEOUT_MS 1000L
#define IMDS_ATTEMPTS 2

static int imds_disabled(struct hp_sys *sys)
{
	const char *v = cr_env_get(sys, "AWS_EC2_METADATA_DISABLED");

	return v && !strcasecmp(v, "true");
}

static void imds_base(struct hp_sys *sys, const struct hp_profile *p, char *out, size_t n)
{
	const char *v = cr_env_get(sys, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	const char *mode = cr_env_get(sys, "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
	size_t len;

	if (!v)
		v = cr_cfg(p, "ec2_metadata_service_endpoint");
	if (!mode)
		mode = cr_cfg(p, "ec2_metadata_service_endpoint_mode");
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
	rc = cr_http_try(sys, &req, resp, IMDS_ATTEMPTS);
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
		*token = xstrdup(cr_trim(resp.body.buf));
		rc = 0;
	}
	cr_resp_done(&resp);
	return rc;
}

enum prov_result cr_prov_imds(struct chain *c)
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
		return cr_not_configured(c, "AWS_EC2_METADATA_DISABLED is true");
	imds_base(c->sys, c->p, base, sizeof(base));
	if (c->imds_absent && *c->imds_absent)
		return cr_not_configured(c, "no instance metadata service at %s (no answer earlier)",
					 base);
	if (imds_token(c->sys, base, &token, why, sizeof(why), &absent)) {
		if (absent && c->imds_absent)
			*c->imds_absent = 1;
		return cr_not_configured(c, "%s", why);
	}
	hp_http_resp_init(&resp);
	if (imds_call(c->sys, "GET", base, "/latest/meta-data/iam/security-credentials/", token,
		      &resp) || resp.status != 200) {
		r = resp.status == 404 ?
			cr_not_configured(c, "this EC2 instance has no instance profile (IMDS at %s)",
					  base) :
			(cr_reply_error(&resp, err, sizeof(err)),
			 cr_fail(c, "the instance metadata service at %s did not list a role: %s", base,
				 err));
		goto out;
	}
	hp_strlcpy(role, cr_trim(resp.body.buf), sizeof(role));
	role[strcspn(role, "\r\n")] = '\0';
	cr_resp_done(&resp);
	hp_http_resp_init(&resp);
	if (!role[0] || strchr(role, '/')) {
		r = cr_fail(c, "the instance metadata service at %s listed no usable role name", base);
		goto out;
	}
	snprintf(path, sizeof(path), "/latest/meta-data/iam/security-credentials/%s", role);
	snprintf(what, sizeof(what), "the instance metadata service at %s (role %s)", base, role);
	if (imds_call(c->sys, "GET", base, path, token, &resp) || resp.status != 200) {
		cr_reply_error(&resp, err, sizeof(err));
		r = cr_fail(c, "%s gave no credentials: %s", what, err);
		goto out;
	}
	j = hp_json_parse(resp.body.buf, resp.body.len, NULL);
	code = cr_json_string(j, "Code");
	if (!cJSON_IsObject(j) || (code && strcmp(code, "Success"))) {
		r = cr_fail(c, "%s answered Code %.64s instead of Success", what, code ? code : "?");
		goto out;
	}
	r = cr_from_json(c, j, names, what);
	if (r == PROV_ANSWERED)
		cr_source(c, "instance metadata (role %s)", role);
out:
	cr_json_wipe(j);
	cJSON_Delete(j);
	cr_resp_done(&resp);
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
		hp_strlcpy(region, cr_trim(resp.body.buf), n);
		rc = 0;
	}
	cr_resp_done(&resp);
	hp_free_secret(token);
	return rc;
}
