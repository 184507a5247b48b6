/*
 * Credentials, region and endpoint resolution.
 *
 * The credential chain is a table of providers tried in order (see
 * src/collect/aws/creds/chain.c, one file per provider beside it); each
 * records why it did not answer, so --debug can say which provider
 * answered without ever printing a secret.
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
	char source[192];     /* the source kind in words: "assume-role via profile ops" */
};

void hp_creds_release(struct hp_creds *c);

/*
 * A resolved credential source that refreshes itself: the chain is walked
 * once, and the provider that answered is asked again, by whichever thread
 * signs next, before its credentials are within 5 minutes of expiring (half
 * their lifetime when that is shorter). One thread refreshes at a time;
 * the others wait for it. A failed refresh keeps the old keys until they
 * expire, then every call gets a credential error.
 */
struct hp_creds_provider;

/* Where the provider's own STS calls go and what they trust. */
struct hp_creds_env {
	const char *region;        /* may be NULL: assume-role then needs one */
	const char *sts_endpoint;  /* "https://sts.us-west-2.amazonaws.com" */
	const char *sts_error;     /* why sts_endpoint is NULL when the configuration is at fault */
	const char *ca_bundle;     /* NULL: the system store */
	int imds_absent;           /* 1: the metadata service already did not answer */
};

int hp_creds_provider_open(struct hp_sys *sys, const struct hp_profile *p,
			   const struct hp_creds_env *env, struct hp_buf *trace,
			   struct hp_creds_provider **out, struct hp_error *e);
/*
 * A copy of the current credentials (release it with hp_creds_release),
 * refreshed first when due. debug: one stderr line per refresh. Returns -1
 * with e set (HP_ERR_CREDS) when the credentials expired and no refresh
 * worked.
 */
int hp_creds_provider_get(struct hp_creds_provider *cp, int debug, struct hp_creds *out,
			  struct hp_error *e);
/* The source kind, for the report and the snapshot: "assume-role via profile ops". */
const char *hp_creds_provider_desc(const struct hp_creds_provider *cp);
/* Number of refreshes done so far (for --debug and tests). */
unsigned hp_creds_provider_refreshes(struct hp_creds_provider *cp);
void hp_creds_provider_close(struct hp_creds_provider *cp);

/*
 * The region of the EC2 instance from IMDSv2 (1 s limit, one retry), for
 * when no flag, variable or profile names one. Returns 0, or -1 and sets
 * *absent when the service did not answer.
 */
int hp_imds_region(struct hp_sys *sys, const struct hp_profile *p, char *region, size_t n,
		   int *absent);

/*
 * Walk the chain once. trace receives one line per provider tried
 * ("environment: AWS_ACCESS_KEY_ID not set"), never a secret. The region
 * and STS endpoint for assume-role and web identity come from the
 * environment and profile. Returns 0, or -1 with e set (HP_ERR_NO_CREDS
 * when nobody answered, HP_ERR_CREDS for a provider that is configured but
 * failed; the message starts with the provider's name and names the
 * profile).
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

/* Services hpnode calls. The table in src/collect/aws/endpoint.c holds their names. */
enum hp_svc {
	HP_SVC_SAGEMAKER,
	HP_SVC_EKS,
	HP_SVC_EC2,
	HP_SVC_LOGS,
	HP_SVC_SSM,
	HP_SVC_QUOTAS,
	HP_SVC_STS,
	HP_SVC_S3,         /* only `hpnode bundle --upload` writes, and only there */
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

/*
 * The configured endpoint of any service, by its AWS_ENDPOINT_URL_<suffix>
 * name and its [services] sub-key ("SSO", "sso"): the variable,
 * AWS_ENDPOINT_URL, the [services NAME] section the profile's "services"
 * key names (a missing or empty section is HP_ERR_CONFIG, as in botocore),
 * the profile's endpoint_url; none when AWS_IGNORE_CONFIGURED_ENDPOINT_URLS
 * (or the profile's ignore_configured_endpoint_urls) is true. Returns 1 with
 * url set (no trailing slash), 0 when nothing is configured, -1 with e set.
 */
int hp_endpoint_configured(struct hp_sys *sys, const struct hp_profile *p,
			   const char *env_suffix, const char *config_key, char *url, size_t n,
			   struct hp_error *e);

/* CA bundle: AWS_CA_BUNDLE, else the profile's ca_bundle, else NULL. */
const char *hp_ca_bundle(struct hp_sys *sys, const struct hp_profile *p);

#endif
