/*
 * Credentials, region and endpoint resolution.
 *
 * The credential chain is a table of providers tried in order (see
 * src/aws/creds.c); each records why it did not answer, so --debug can say
 * which provider answered without ever printing a secret. New providers
 * (SSO, assume-role, web identity, container, IMDS) are one more table row.
 */
#ifndef HP_CREDS_H
#define HP_CREDS_H

#include <stdint.h>

#include "hp/buf.h"
#include "hp/err.h"
#include "hp/profile.h"
#include "hp/sys.h"

struct hp_creds {
	char *access_key;
	char *secret_key;     /* wiped on release */
	char *session_token;  /* NULL for long-term keys; wiped on release */
	int64_t expires_ms;   /* 0 = no expiry known */
	char provider[48];    /* which provider answered: "environment", "shared-credentials-file", ... */
};

void hp_creds_release(struct hp_creds *c);

/*
 * Walk the chain. trace receives one line per provider tried
 * ("environment: AWS_ACCESS_KEY_ID not set"), never a secret.
 * Returns 0, or -1 with e set (HP_ERR_NO_CREDS when nobody answered,
 * HP_ERR_CONFIG for a broken file or credential_process).
 */
int hp_creds_resolve(struct hp_sys *sys, const struct hp_profile *p, struct hp_creds *out,
		     struct hp_buf *trace, struct hp_error *e);

/*
 * Region: flag, then AWS_REGION, AWS_DEFAULT_REGION, then the profile's
 * "region". Writes the region and a short source name ("--region",
 * "AWS_REGION", ...). Returns -1 with HP_ERR_NO_REGION when none, and
 * HP_ERR_USAGE when the value is not a region name.
 */
int hp_region_resolve(struct hp_sys *sys, const struct hp_profile *p, const char *flag_region,
		      char *region, size_t n, const char **source, struct hp_error *e);

/* Services hpnode calls. The table in src/aws/endpoint.c holds their names. */
enum hp_svc {
	HP_SVC_SAGEMAKER,
	HP_SVC_EKS,
	HP_SVC_EC2,
	HP_SVC_LOGS,
	HP_SVC_SSM,
	HP_SVC_QUOTAS,
	HP_SVC_STS,
	HP_SVC__COUNT
};

struct hp_svc_info {
	enum hp_svc svc;
	const char *name;          /* IAM prefix: "sagemaker", "service-quotas" */
	const char *signing_name;  /* "sagemaker", "servicequotas" */
	const char *host_prefix;   /* "api.sagemaker", "servicequotas" */
	const char *env_suffix;    /* AWS_ENDPOINT_URL_<suffix>: "SAGEMAKER", "SERVICE_QUOTAS" */
	const char *config_key;    /* [services] sub-key: "sagemaker", "service_quotas" */
};

const struct hp_svc_info *hp_svc_info(enum hp_svc svc);

/*
 * Endpoint URL for svc: --endpoint-url, AWS_ENDPOINT_URL_<SVC>,
 * AWS_ENDPOINT_URL, the profile's [services] entry, the profile's
 * endpoint_url (steps after the flag skipped when
 * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true), else the standard host for the
 * region's partition ("https://api.sagemaker.us-west-2.amazonaws.com").
 * No trailing slash.
 */
int hp_endpoint_resolve(struct hp_sys *sys, const struct hp_profile *p, enum hp_svc svc,
			const char *region, const char *flag_endpoint, char *url, size_t n,
			struct hp_error *e);

/* CA bundle: AWS_CA_BUNDLE, else the profile's ca_bundle, else NULL. */
const char *hp_ca_bundle(struct hp_sys *sys, const struct hp_profile *p);

#endif
