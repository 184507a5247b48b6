/*
 * Container credentials (ECS, EKS Pod Identity): the relative or full URI,
 * plain HTTP only to the hosts the SDKs allow, with the authorization
 * token or token file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/json.h"
#include "creds-int.h"

#define CONTAINER_TIMEOUT_MS 2000L
#define CONTAINER_ATTEMPTS 2

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

enum prov_result cr_prov_container(struct chain *c)
{
	static const char *const names[4] = { "AccessKeyId", "SecretAccessKey", "Token",
					      "Expiration" };
	const char *rel = cr_env_get(c->sys, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = cr_env_get(c->sys, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
	const char *tfile = cr_env_get(c->sys, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tok = cr_env_get(c->sys, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
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
			return cr_fail(c, "AWS_CONTAINER_CREDENTIALS_FULL_URI '%.200s' is not an http(s) "
				       "URL", full);
		if (!https && !container_host_allowed(host))
			return cr_fail(c, "AWS_CONTAINER_CREDENTIALS_FULL_URI names host %s over plain "
				       "HTTP; only loopback, 169.254.170.2, 169.254.170.23 and "
				       "fd00:ec2::23 are allowed without HTTPS", host);
		url = xstrdup(full);
	} else {
		return cr_not_configured(c, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and "
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
			return cr_fail(c, "cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE '%.300s': %s",
				       tfile, strerror(e));
		}
		tok = cr_trim(tbuf.buf);
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
	if (cr_http_try(c->sys, &req, &resp, CONTAINER_ATTEMPTS) || resp.status != 200) {
		cr_reply_error(&resp, err, sizeof(err));
		r = cr_fail(c, "%s failed: %s", what, err);
	} else {
		j = hp_json_parse(resp.body.buf, resp.body.len, NULL);
		r = cJSON_IsObject(j) ? cr_from_json(c, j, names, what) :
			cr_fail(c, "%s did not answer with a JSON object", what);
		if (r == PROV_ANSWERED)
			cr_source(c, "container credentials from %s", host);
	}
	cr_json_wipe(j);
	cJSON_Delete(j);
	cr_resp_done(&resp);
	hp_buf_release_secure(&tbuf);
	free(url);
	return r;
}
