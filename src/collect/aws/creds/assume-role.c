/*
 * Assume-role profiles: the source credentials (a source_profile, walked
 * with loop and depth checks, or a credential_source), then sts:AssumeRole
 * signed with them through hpnode's own client.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "creds-int.h"

static enum prov_result assume_role(struct chain *c, const char *role);

static enum prov_result session_params(struct chain *c, const char *session,
				       const char **duration)
{
	const char *d = cr_cfg(c->p, "duration_seconds");
	char *end;
	long n;

	(void)session;
	*duration = NULL;
	if (!d)
		return PROV_ANSWERED;
	n = strtol(d, &end, 10);
	if (*end || n < 900 || n > 43200)
		return cr_fail(c, "duration_seconds '%.32s' of profile '%s' must be a number of seconds "
			       "from 900 to 43200", d, c->profile);
	*duration = d;
	return PROV_ANSWERED;
}

/* sts:AssumeRole signed with `base`, through hpnode's own client. */
static enum prov_result sts_assume_role(struct chain *c, const char *role,
					const struct hp_creds *base)
{
	struct hp_aws *a = xcalloc(1, sizeof(*a));
	struct hp_aws_params params;
	struct hp_aws_result r;
	const char *session = cr_cfg(c->p, "role_session_name"), *ext = cr_cfg(c->p, "external_id");
	const char *duration;
	const cJSON *cr;
	enum prov_result res;
	char name[64], what[300];

	if (session_params(c, session, &duration) != PROV_ANSWERED) {
		free(a);
		return PROV_ERROR;
	}
	if (c->env && c->env->sts_error) {
		free(a);
		return cr_fail(c, "profile '%s' assumes role %.200s: %.600s", c->profile, role,
			       c->env->sts_error);
	}
	if (!c->env || !c->env->region || !c->env->sts_endpoint) {
		free(a);
		return cr_fail(c, "profile '%s' assumes role %.200s, which needs an AWS region: pass "
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
		cr_default_session_name(c, name, sizeof(name));
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
		res = cr_fail(c, "%s failed: %s%s%.400s", what, r.code, r.message[0] ? ": " : "",
			      r.message);
	} else {
		cr = cJSON_GetObjectItemCaseSensitive(r.json, "Credentials");
		res = cJSON_IsObject(cr) ? cr_from_json(c, cr, cr_sts_names, what) :
			cr_fail(c, "%s returned no Credentials", what);
	}
	cr_json_wipe(r.json);
	hp_aws_result_release(&r);
	hp_aws_params_release(&params);
	memset(&a->creds, 0, sizeof(a->creds));
	free(a);
	return res;
}

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
		cr_prov_web_identity, cr_prov_sso, cr_prov_shared_file, cr_prov_process,
		cr_prov_config_file
	};
	struct hp_profile *view;
	struct chain sub;
	const char *role;
	enum prov_result r = PROV_NOT_CONFIGURED;
	char path[512];
	size_t i;

	if (!strcmp(name, c->profile)) {
		/* A profile may name itself when it holds the keys of the role's source. */
		r = cr_prov_shared_file(c);
		if (r == PROV_NOT_CONFIGURED)
			r = cr_prov_config_file(c);
		if (r == PROV_NOT_CONFIGURED) {
			chain_path(c, name, path, sizeof(path));
			return cr_fail(c, "source_profile loop: %s (profile '%s' names itself but holds "
				       "no keys)", path, name);
		}
		snprintf(how, hn, "its own keys");
		return r;
	}
	for (i = 0; i < c->nvisited; i++) {
		if (!strcmp(c->visited[i], name)) {
			chain_path(c, name, path, sizeof(path));
			return cr_fail(c, "source_profile loop: %s", path);
		}
	}
	if (c->nvisited + 1 >= MAX_DEPTH)
		return cr_fail(c, "source_profile chain of profile '%s' is deeper than %d profiles",
			       c->profile, MAX_DEPTH);
	if (!profile_exists(c->p, name))
		return cr_fail(c, "source_profile '%.128s' of profile '%s' does not exist in the config "
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
	role = cr_cfg(view, "role_arn");
	/*
	 * botocore: a source profile with static keys gives those keys (through
	 * the profile's own providers) even when it also has a role_arn; only a
	 * keyless one assumes its own role.
	 */
	if (role && !cr_cfg(view, "web_identity_token_file") && !cr_cfg(view, "aws_access_key_id") &&
	    !cr_cfg(view, "aws_secret_access_key")) {
		r = assume_role(&sub, role);
		snprintf(how, hn, "source profile %s", name);
	} else {
		for (i = 0; i < HP_ARRAY_LEN(rows) && r == PROV_NOT_CONFIGURED; i++) {
			sub.reason[0] = '\0';
			r = rows[i](&sub);
		}
		if (r == PROV_NOT_CONFIGURED)
			r = cr_fail(c, "source_profile '%s' of profile '%s' holds no credentials (no keys, "
				    "credential_process, SSO or web identity)", name, c->profile);
		snprintf(how, hn, "source profile %s", name);
	}
	if (r == PROV_ANSWERED)
		cr_trace(c, "assume-role: source profile '%s' answered (%s)", name, sub.source);
	free(view);
	return r;
}

static enum prov_result credential_source(struct chain *c, const char *cs)
{
	struct chain sub = *c;
	enum prov_result r;

	sub.reason[0] = '\0';
	if (!strcmp(cs, "Environment"))
		r = cr_env_keys(&sub);
	else if (!strcmp(cs, "Ec2InstanceMetadata"))
		r = cr_prov_imds(&sub);
	else if (!strcmp(cs, "EcsContainer"))
		r = cr_prov_container(&sub);
	else
		return cr_fail(c, "credential_source '%.64s' of profile '%s' must be Environment, "
			       "Ec2InstanceMetadata or EcsContainer", cs, c->profile);
	if (r == PROV_NOT_CONFIGURED)
		return cr_fail(c, "credential_source %s of profile '%s' gave no credentials: %s", cs,
			       c->profile, sub.reason);
	return r;
}

static enum prov_result assume_role(struct chain *c, const char *role)
{
	const char *src = cr_cfg(c->p, "source_profile"), *cs = cr_cfg(c->p, "credential_source");
	struct hp_creds base;
	struct chain sub;
	enum prov_result r;
	char how[200], word[300];

	if (cr_cfg(c->p, "mfa_serial"))
		return cr_fail(c, "profile '%s' assumes role %.200s with mfa_serial, and hpnode does not "
			       "prompt for MFA codes: use an SSO profile, or export session credentials "
			       "first ('aws configure export-credentials --profile %s --format env')",
			       c->profile, role, hp_shell_word_s(c->profile, word, sizeof(word)));
	if (src && cs)
		return cr_fail(c, "profile '%s' has both source_profile and credential_source; it may "
			       "have only one", c->profile);
	if (!src && !cs)
		return cr_fail(c, "profile '%s' has role_arn but neither source_profile nor "
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
		cr_source(c, "assume-role via profile %s (%s)", c->profile, how);
	return r;
}

enum prov_result cr_prov_assume_role(struct chain *c)
{
	const char *role = cr_cfg(c->p, "role_arn");

	if (!role)
		return cr_not_configured(c, "profile '%s' has no role_arn", c->profile);
	if (cr_cfg(c->p, "web_identity_token_file"))
		return cr_not_configured(c, "profile '%s' uses web identity", c->profile);
	return assume_role(c, role);
}
