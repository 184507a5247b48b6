/*
 * The credential chain and region resolution. Providers are rows of one
 * table tried in botocore's order; SSO, assume-role, web identity, login,
 * container and IMDS rows only detect their configuration and say that
 * hpnode cannot use it yet.
 */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/creds.h"

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

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

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

static int digits(const char **s, int n, int *out)
{
	int v = 0;

	while (n--) {
		if (**s < '0' || **s > '9')
			return -1;
		v = v * 10 + (*(*s)++ - '0');
	}
	*out = v;
	return 0;
}

/*
 * ISO-8601 date-time to ms since the epoch: "2024-05-01T10:00:00Z",
 * fractions, "+02:00"/"+0200" offsets. No zone is read as UTC.
 */
static int parse_iso8601(const char *s, int64_t *ms)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0, frac_ms = 0, scale = 100;
	int64_t t;

	if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) || *s++ != '-' ||
	    digits(&s, 2, &d) || (*s != 'T' && *s != 't' && *s != ' '))
		return -1;
	s++;
	if (digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi) || *s++ != ':' ||
	    digits(&s, 2, &sec))
		return -1;
	if (*s == '.' || *s == ',') {
		s++;
		if (*s < '0' || *s > '9')
			return -1;
		for (; *s >= '0' && *s <= '9'; s++, scale /= 10)
			frac_ms += (*s - '0') * scale;
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s++ == '-' ? -1 : 1;
		if (digits(&s, 2, &oh))
			return -1;
		if (*s == ':')
			s++;
		if (digits(&s, 2, &om))
			return -1;
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 ||
	    oh > 23 || om > 59)
		return -1;
	t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	t -= sign * (oh * 3600 + om * 60);
	*ms = t * 1000 + frac_ms;
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

enum prov_result {
	PROV_ANSWERED,
	PROV_NOT_CONFIGURED,
	PROV_ERROR
};

struct chain {
	struct hp_sys *sys;
	const struct hp_profile *p;
	const char *profile;        /* name for messages */
	struct hp_creds *out;
	struct hp_error *e;
	char reason[256];           /* why the provider did not answer; "" = say nothing */
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

/* Records a configuration error for the chain's caller. */
static enum prov_result fail(struct chain *c, const char *fmt, ...) HP_PRINTF(2, 3);

static enum prov_result fail(struct chain *c, const char *fmt, ...)
{
	char msg[sizeof(c->e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hp_error_set(c->e, HP_ERR_CONFIG, "%s", msg);
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

static enum prov_result prov_environment(struct chain *c)
{
	const char *ak = env_get(c->sys, "AWS_ACCESS_KEY_ID");
	const char *sk = env_get(c->sys, "AWS_SECRET_ACCESS_KEY");
	const char *exp = env_get(c->sys, "AWS_CREDENTIAL_EXPIRATION");
	/* botocore takes the legacy AWS_SECURITY_TOKEN first when both are set. */
	const char *token = env_get(c->sys, "AWS_SECURITY_TOKEN");
	int64_t expires_ms = 0;
	char when[32];

	if (c->p && c->p->explicit_profile)
		return not_configured(c, "skipped because --profile was given");
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
	return PROV_ANSWERED;
}

/* A source of credentials hpnode sees configured but cannot use yet. */
static enum prov_result unsupported(struct chain *c, const char *what)
{
	return fail(c, "%s, which hpnode does not support yet; export credentials with "
		    "'aws configure export-credentials --profile %s --format env'", what,
		    c->profile);
}

static enum prov_result prov_assume_role(struct chain *c)
{
	char what[256];

	/* Not implemented: STS AssumeRole signed with the source profile's keys. */
	if (!cfg(c->p, "role_arn") || cfg(c->p, "web_identity_token_file"))
		return PROV_NOT_CONFIGURED;
	snprintf(what, sizeof(what), "profile '%s' assumes a role (role_arn)", c->profile);
	return unsupported(c, what);
}

static enum prov_result prov_web_identity(struct chain *c)
{
	char what[256];

	/* Not implemented: unsigned STS AssumeRoleWithWebIdentity. */
	if (cfg(c->p, "web_identity_token_file"))
		snprintf(what, sizeof(what), "profile '%s' uses web identity "
			 "(web_identity_token_file)", c->profile);
	else if (env_get(c->sys, "AWS_WEB_IDENTITY_TOKEN_FILE") && env_get(c->sys, "AWS_ROLE_ARN"))
		snprintf(what, sizeof(what), "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are set "
			 "(web identity)");
	else
		return PROV_NOT_CONFIGURED;
	return unsupported(c, what);
}

static enum prov_result prov_sso(struct chain *c)
{
	static const char *const keys[] = { "sso_session", "sso_start_url", "sso_account_id",
					    "sso_role_name" };
	char what[256];
	size_t i;

	/* Not implemented: the SSO token cache and GetRoleCredentials. */
	for (i = 0; i < HP_ARRAY_LEN(keys); i++) {
		if (cfg(c->p, keys[i])) {
			snprintf(what, sizeof(what), "profile '%s' uses SSO (sso_*)", c->profile);
			return unsupported(c, what);
		}
	}
	return PROV_NOT_CONFIGURED;
}

static enum prov_result prov_shared_file(struct chain *c)
{
	char where[200];
	const char *token;

	if (!c->p || !hp_ini_has_section(&c->p->credentials, c->p->name))
		return not_configured(c, "no [%s] section in the credentials file", c->profile);
	snprintf(where, sizeof(where), "section [%s] of the credentials file", c->profile);
	token = cred(c->p, "aws_security_token");
	if (!token)
		token = cred(c->p, "aws_session_token");
	return static_keys(c, cred(c->p, "aws_access_key_id"), cred(c->p, "aws_secret_access_key"),
			   token, where);
}

static enum prov_result prov_login(struct chain *c)
{
	char what[256];

	/* Not implemented: sessions made by 'aws login'. */
	if (!cfg(c->p, "login_session"))
		return PROV_NOT_CONFIGURED;
	snprintf(what, sizeof(what), "profile '%s' uses an 'aws login' session (login_session)",
		 c->profile);
	return unsupported(c, what);
}

/* ---- credential_process ---- */

struct argv_list {
	char **v;
	size_t n, alloc;
};

static void argv_push(struct argv_list *a, char *s)
{
	if (a->n + 2 > a->alloc) {
		a->alloc = a->alloc ? a->alloc * 2 : 8;
		a->v = xrealloc(a->v, a->alloc * sizeof(*a->v));
	}
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
			if (!*++s)
				err = "a backslash ends the line";
			else
				hp_buf_putc(&w, *s);
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
	cJSON *j = cJSON_ParseWithLength(out->buf, out->len);
	const cJSON *ver;
	const char *ak, *sk, *exp;
	int64_t expires_ms = 0;
	enum prov_result r = PROV_ERROR;
	char when[32];

	if (!cJSON_IsObject(j)) {
		hp_error_set(c->e, HP_ERR_CONFIG, "credential_process '%s' of profile '%s' did not "
			     "print a JSON object", prog, c->profile);
		goto out;
	}
	ver = cJSON_GetObjectItemCaseSensitive(j, "Version");
	if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
		if (cJSON_IsNumber(ver))
			hp_error_set(c->e, HP_ERR_CONFIG, "credential_process '%s' of profile '%s' "
				     "printed Version %g; only Version 1 is supported", prog,
				     c->profile, ver->valuedouble);
		else
			hp_error_set(c->e, HP_ERR_CONFIG, "credential_process '%s' of profile '%s' "
				     "printed no numeric Version; only Version 1 is supported", prog,
				     c->profile);
		goto out;
	}
	ak = json_string(j, "AccessKeyId");
	sk = json_string(j, "SecretAccessKey");
	if (!ak || !sk) {
		hp_error_set(c->e, HP_ERR_CONFIG, "credential_process '%s' of profile '%s' printed "
			     "no %s", prog, c->profile, ak ? "SecretAccessKey" : "AccessKeyId");
		goto out;
	}
	exp = json_string(j, "Expiration");
	if (exp && parse_iso8601(exp, &expires_ms)) {
		hp_error_set(c->e, HP_ERR_CONFIG, "credential_process '%s' of profile '%s' printed an "
			     "Expiration that is not an ISO-8601 time", prog, c->profile);
		goto out;
	}
	if (exp && expires_ms <= c->sys->now_ms(c->sys)) {
		format_time(expires_ms, when, sizeof(when));
		hp_error_set(c->e, HP_ERR_CONFIG, "credential_process '%s' of profile '%s' returned "
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
		hp_error_set(c->e, HP_ERR_CONFIG, "cannot run credential_process '%s' of profile '%s'",
			     prog, c->profile);
	} else if (res.timed_out) {
		hp_error_set(c->e, HP_ERR_CONFIG, "credential_process '%s' of profile '%s' did not "
			     "finish within %ld s", prog, c->profile, PROCESS_TIMEOUT_MS / 1000);
	} else if (res.exit_status != 0) {
		first_line(&res.err, err1, sizeof(err1));
		/* A tool that printed its credentials on stderr must not have them echoed. */
		if (strcasestr(err1, "SecretAccessKey") || strcasestr(err1, "SessionToken") ||
		    strcasestr(err1, "secret_access_key") || strcasestr(err1, "session_token"))
			hp_strlcpy(err1, "(stderr not shown: it names a credential field)",
				   sizeof(err1));
		hp_error_set(c->e, HP_ERR_CONFIG, "credential_process '%s' of profile '%s' exited "
			     "with status %d: %s", prog, c->profile, res.exit_status,
			     err1[0] ? err1 : "(nothing on stderr)");
	} else {
		r = process_parse(c, prog, &res.out);
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

	snprintf(where, sizeof(where), "profile '%s' of the config file", c->profile);
	token = cfg(c->p, "aws_security_token");
	if (!token)
		token = cfg(c->p, "aws_session_token");
	return static_keys(c, cfg(c->p, "aws_access_key_id"), cfg(c->p, "aws_secret_access_key"),
			   token, where);
}

static enum prov_result prov_container(struct chain *c)
{
	static const char *const vars[] = { "AWS_CONTAINER_CREDENTIALS_FULL_URI",
					    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI" };
	size_t i;

	/* Not implemented: the ECS / EKS Pod Identity credential endpoint. */
	for (i = 0; i < HP_ARRAY_LEN(vars); i++)
		if (env_get(c->sys, vars[i]))
			return not_configured(c, "%s is set, but container credentials are not "
					      "supported yet", vars[i]);
	return PROV_NOT_CONFIGURED;
}

static enum prov_result prov_imds(struct chain *c)
{
	(void)c;
	/* Not implemented: IMDSv2 token, role name, then the role's keys. */
	return PROV_NOT_CONFIGURED;
}

static const struct {
	const char *name;
	enum prov_result (*fn)(struct chain *c);
} providers[] = {
	{ "environment", prov_environment },
	{ "assume-role", prov_assume_role },            /* detects only */
	{ "web-identity", prov_web_identity },          /* detects only */
	{ "sso", prov_sso },                            /* detects only */
	{ "shared-credentials-file", prov_shared_file },
	{ "login", prov_login },                        /* detects only */
	{ "credential-process", prov_process },
	{ "config-file", prov_config_file },
	{ "container", prov_container },                /* detects only */
	{ "imds", prov_imds },                          /* not yet */
};

int hp_creds_resolve(struct hp_sys *sys, const struct hp_profile *p, struct hp_creds *out,
		     struct hp_buf *trace, struct hp_error *e)
{
	struct chain c;
	struct hp_buf tried = HP_BUF_INIT(4096);
	size_t i;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.sys = sys;
	c.p = p;
	c.profile = p ? p->name : "default";
	c.out = out;
	c.e = e;
	for (i = 0; i < HP_ARRAY_LEN(providers); i++) {
		enum prov_result r;

		c.reason[0] = '\0';
		r = providers[i].fn(&c);
		if (r == PROV_ANSWERED) {
			hp_strlcpy(out->provider, providers[i].name, sizeof(out->provider));
			if (trace)
				hp_buf_printf(trace, "%s: answered%s\n", providers[i].name,
					      out->session_token ? " (session credentials)" : "");
			hp_buf_release(&tried);
			return 0;
		}
		if (r == PROV_ERROR) {
			if (trace)
				hp_buf_printf(trace, "%s: failed\n", providers[i].name);
			hp_creds_release(out);
			hp_buf_release(&tried);
			return -1;
		}
		if (!c.reason[0])
			continue;
		if (trace)
			hp_buf_printf(trace, "%s: %s\n", providers[i].name, c.reason);
		hp_buf_printf(&tried, "%s%s", tried.len ? ", " : "", providers[i].name);
	}
	hp_error_set(e, HP_ERR_NO_CREDS, "no AWS credentials found for profile '%s' (tried %s); "
		     "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add keys or a "
		     "credential_process to the profile (container and instance-metadata "
		     "credentials are not read yet)", c.profile, tried.buf);
	hp_buf_release(&tried);
	return -1;
}

void hp_creds_release(struct hp_creds *c)
{
	hp_free_secret(c->access_key);
	hp_free_secret(c->secret_key);
	hp_free_secret(c->session_token);
	hp_wipe(c, sizeof(*c));
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
