/*
 * The providers that read the shared files as hp_profile parsed them:
 * static keys of the credentials file and of the config file, and the
 * 'aws login' sessions, which are detected and refused.
 */
#include <stdio.h>

#include "creds-int.h"

/* The config file alone, for the config-file provider. */
static const char *cfg_file(const struct hp_profile *p, const char *key)
{
	return p ? cr_nonempty(hp_profile_config_file(p, key)) : NULL;
}

static const char *cred(const struct hp_profile *p, const char *key)
{
	return p ? cr_nonempty(hp_profile_cred(p, key)) : NULL;
}

/* Static keys from a mapping: shared by the credentials and config files. */
static enum prov_result static_keys(struct chain *c, const char *ak, const char *sk,
				    const char *token, const char *where)
{
	if (!ak && !sk)
		return cr_not_configured(c, "no aws_access_key_id in %s", where);
	if (!ak || !sk)
		return cr_fail(c, "%s has %s but not %s", where,
			       ak ? "aws_access_key_id" : "aws_secret_access_key",
			       ak ? "aws_secret_access_key" : "aws_access_key_id");
	cr_set_creds(c, ak, sk, token, 0);
	return PROV_ANSWERED;
}

enum prov_result cr_prov_shared_file(struct chain *c)
{
	char where[200];
	const char *token;
	enum prov_result r;

	if (!c->p || !hp_ini_has_section(&c->p->credentials, c->p->name))
		return cr_not_configured(c, "no [%s] section in the credentials file", c->profile);
	snprintf(where, sizeof(where), "section [%s] of the credentials file", c->profile);
	token = cred(c->p, "aws_security_token");
	if (!token)
		token = cred(c->p, "aws_session_token");
	r = static_keys(c, cred(c->p, "aws_access_key_id"), cred(c->p, "aws_secret_access_key"),
			token, where);
	if (r == PROV_ANSWERED)
		cr_source(c, "shared credentials file, profile %s", c->profile);
	return r;
}

enum prov_result cr_prov_login(struct chain *c)
{
	/* Not implemented: sessions made by 'aws login'. */
	if (!cr_cfg(c->p, "login_session"))
		return PROV_NOT_CONFIGURED;
	return cr_fail(c, "profile '%s' uses an 'aws login' session (login_session), which hpnode "
		       "does not read; export credentials with 'aws configure export-credentials "
		       "--profile %s --format env'", c->profile, c->profile);
}

enum prov_result cr_prov_config_file(struct chain *c)
{
	char where[200];
	const char *token;
	enum prov_result r;

	snprintf(where, sizeof(where), "profile '%s' of the config file", c->profile);
	token = cfg_file(c->p, "aws_security_token");
	if (!token)
		token = cfg_file(c->p, "aws_session_token");
	r = static_keys(c, cfg_file(c->p, "aws_access_key_id"),
			cfg_file(c->p, "aws_secret_access_key"), token, where);
	if (r == PROV_ANSWERED)
		cr_source(c, "config file, profile %s", c->profile);
	return r;
}
