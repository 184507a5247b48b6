/*
 * What the credential providers share: the profile and environment
 * look-ups, times, the chain's messages and trace, the HTTP calls the
 * providers make themselves, and credentials read from a JSON reply.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hp/iso8601.h"
#include "creds-int.h"

const char *cr_env_get(struct hp_sys *sys, const char *name)
{
	const char *v = sys->getenv(sys, name);

	return v && *v ? v : NULL;
}

const char *cr_nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

const char *cr_cfg(const struct hp_profile *p, const char *key)
{
	return p ? cr_nonempty(hp_profile_config(p, key)) : NULL;
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
int cr_parse_time(const char *s, int64_t *ms)
{
	struct hp_iso8601 t;

	if (hp_iso8601_parse(s, NULL, &t))
		return -1;
	*ms = t.sec * 1000 + t.nsec / 1000000;
	return 0;
}

void cr_format_time(int64_t ms, char *out, size_t n)
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

enum prov_result cr_not_configured(struct chain *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->reason, sizeof(c->reason), fmt, ap);
	va_end(ap);
	return PROV_NOT_CONFIGURED;
}

/* Records a credential error for the chain's caller. */
enum prov_result cr_fail(struct chain *c, const char *fmt, ...)
{
	char msg[sizeof(c->e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hp_error_set(c->e, HP_ERR_CREDS, "%s", msg);
	return PROV_ERROR;
}

void cr_set_creds(struct chain *c, const char *ak, const char *sk, const char *token,
		  int64_t expires_ms)
{
	c->out->access_key = xstrdup(ak);
	c->out->secret_key = xstrdup(sk);
	c->out->session_token = token ? xstrdup(token) : NULL;
	c->out->expires_ms = expires_ms;
}

void cr_source(struct chain *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->source, sizeof(c->source), fmt, ap);
	va_end(ap);
}

void cr_trace(struct chain *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->trace)
		return;
	va_start(ap, fmt);
	if (hp_buf_vaddf(c->trace, fmt, ap) == 0)
		hp_buf_putc(c->trace, '\n');
	va_end(ap);
}

/*
 * One request with a retry on a transport failure or a 5xx. Returns 0 with
 * a reply, -1 when none came (resp->errmsg says why).
 */
int cr_http_try(struct hp_sys *sys, struct hp_http_req *req, struct hp_http_resp *resp,
		int attempts)
{
	int i, rc = -1;

	for (i = 0; i < attempts; i++) {
		if (i) {
			hp_buf_release_secure(&resp->body);
			hp_http_resp_release(resp);
			hp_http_resp_init(resp);
		}
		/* Every reply here may carry a credential: no unwiped copy on growth. */
		hp_buf_set_secret(&resp->body);
		rc = sys->http(sys, req, resp);
		if (rc == 0 && resp->status < 500)
			break;
		if (rc != 0 && resp->net != HP_NET_TIMEOUT && resp->net != HP_NET_CONNECT &&
		    resp->net != HP_NET_IO)
			break;
	}
	return rc;
}

void cr_resp_done(struct hp_http_resp *resp)
{
	hp_buf_release_secure(&resp->body);
	hp_http_resp_release(resp);
}

/* Trim blanks from both ends of a buffer's text, in place. */
char *cr_trim(char *s)
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
enum prov_result cr_from_json(struct chain *c, const cJSON *o, const char *const names[4],
			      const char *what)
{
	const char *ak = cr_json_string(o, names[0]), *sk = cr_json_string(o, names[1]);
	const char *tok = cr_json_string(o, names[2]);
	const cJSON *exp = cJSON_GetObjectItemCaseSensitive(o, names[3]);
	int64_t expires_ms = 0;

	if (!ak || !sk)
		return cr_fail(c, "%s returned no %s", what, ak ? names[1] : names[0]);
	if (cJSON_IsNumber(exp))
		expires_ms = (int64_t)exp->valuedouble;
	else if (cJSON_IsString(exp) && cr_parse_time(exp->valuestring, &expires_ms))
		return cr_fail(c, "%s returned an expiry that is not a time", what);
	cr_set_creds(c, ak, sk, tok, expires_ms);
	return PROV_ANSWERED;
}

/* Error code and message of a failed reply, for a message line. */
void cr_reply_error(const struct hp_http_resp *resp, char *out, size_t n)
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

const char *const cr_sts_names[4] = { "AccessKeyId", "SecretAccessKey", "SessionToken",
					  "Expiration" };

void cr_default_session_name(struct chain *c, char *out, size_t n)
{
	snprintf(out, n, "hpnode-session-%lld", (long long)(c->sys->now_ms(c->sys) / 1000));
}

/* Zero every string in a cJSON tree before it is freed. */
void cr_json_wipe(cJSON *j)
{
	for (; j; j = j->next) {
		if (j->valuestring)
			hp_wipe(j->valuestring, strlen(j->valuestring));
		cr_json_wipe(j->child);
	}
}

const char *cr_json_string(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? cr_nonempty(v->valuestring) : NULL;
}
