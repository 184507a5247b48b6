/*
 * The credential chain: providers are rows of one table tried in
 * botocore's order (environment, assume-role, web identity, SSO, the
 * credentials file, credential_process, the config file, container
 * credentials and IMDSv2). The provider that answers is kept and asked
 * again before its credentials expire (hp_creds_provider_get). No secret
 * is ever written to a message, a trace or the debug log.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "creds-int.h"

#define REFRESH_WINDOW_MS (5 * 60 * 1000L)
#define SIGN_MARGIN_MS 1000L
#define RETRY_FAILED_REFRESH_MS 1000L

static const struct {
	const char *name;
	enum prov_result (*fn)(struct chain *c);
} providers[] = {
	{ "environment", cr_prov_environment },
	{ "assume-role", cr_prov_assume_role },
	{ "web-identity", cr_prov_web_identity },
	{ "sso", cr_prov_sso },
	{ "shared-credentials-file", cr_prov_shared_file },
	{ "login", cr_prov_login },                        /* detects only */
	{ "credential-process", cr_prov_process },
	{ "config-file", cr_prov_config_file },
	{ "container", cr_prov_container },
	{ "imds", cr_prov_imds },
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
	c->top = p;
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
	char region[40], sts_endpoint[512], sts_error[512];
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
	if (env && env->sts_error) {
		hp_strlcpy(cp->sts_error, env->sts_error, sizeof(cp->sts_error));
		cp->env.sts_error = cp->sts_error;
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

		cr_format_time(cp->cur.expires_ms, when, sizeof(when));
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
			cr_format_time(cp->cur.expires_ms, when, sizeof(when));
			hp_debug("credentials: refreshed from %s, valid until %s",
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
		hp_debug("credentials: refresh from %s failed: %s", cp->desc,
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
		cr_format_time(cp->cur.expires_ms, when, sizeof(when));
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
