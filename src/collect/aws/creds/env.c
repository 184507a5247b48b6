/*
 * The environment provider: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, the
 * session token and AWS_CREDENTIAL_EXPIRATION (also the credential_source
 * Environment of an assume-role profile).
 */
#include "creds-int.h"

enum prov_result cr_env_keys(struct chain *c)
{
	const char *ak = cr_env_get(c->sys, "AWS_ACCESS_KEY_ID");
	const char *sk = cr_env_get(c->sys, "AWS_SECRET_ACCESS_KEY");
	const char *exp = cr_env_get(c->sys, "AWS_CREDENTIAL_EXPIRATION");
	/* botocore takes the legacy AWS_SECURITY_TOKEN first when both are set. */
	const char *token = cr_env_get(c->sys, "AWS_SECURITY_TOKEN");
	int64_t expires_ms = 0;
	char when[32];

	if (!token)
		token = cr_env_get(c->sys, "AWS_SESSION_TOKEN");
	if (!ak && !sk)
		return cr_not_configured(c, "AWS_ACCESS_KEY_ID not set");
	if (!ak || !sk)
		return cr_fail(c, "%s is set but %s is not",
			       ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
			       ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
	if (exp) {
		if (cr_parse_time(exp, &expires_ms))
			return cr_fail(c, "AWS_CREDENTIAL_EXPIRATION '%.64s' is not an ISO-8601 time",
				       exp);
		if (expires_ms <= c->sys->now_ms(c->sys)) {
			cr_format_time(expires_ms, when, sizeof(when));
			return cr_fail(c, "the credentials in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY "
				       "expired at %s (AWS_CREDENTIAL_EXPIRATION)", when);
		}
	}
	cr_set_creds(c, ak, sk, token, expires_ms);
	cr_source(c, "environment variables");
	return PROV_ANSWERED;
}

enum prov_result cr_prov_environment(struct chain *c)
{
	if (c->no_env)
		return cr_not_configured(c, "skipped because --profile was given");
	return cr_env_keys(c);
}
