/*
 * The services hpnode calls and the URL each is reached at: configured
 * overrides first (botocore's order), else the standard host of the
 * region's partition (aws, aws-cn, aws-us-gov) with FIPS and dual-stack
 * variants. The isolated (ISO) partitions and aws-eusc are not supported.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hp/creds.h"

static const char *env_get(struct hp_sys *sys, const char *name)
{
	const char *v = sys->getenv(sys, name);

	return v && *v ? v : NULL;
}

static const char *cfg(const struct hp_profile *p, const char *key)
{
	const char *v = p ? hp_profile_config(p, key) : NULL;

	return v && *v ? v : NULL;
}

static int is_true(const char *v)
{
	return v && !strcasecmp(v, "true");
}

/* An environment switch, else the profile key of the same meaning. */
static int setting(struct hp_sys *sys, const struct hp_profile *p, const char *var,
		   const char *key)
{
	const char *v = env_get(sys, var);

	return is_true(v ? v : cfg(p, key));
}

/*
 * FIPS host prefixes where the service does not follow "<prefix>-fips":
 * NULL means the general pattern; "" (GovCloud) means the standard host,
 * which is FIPS there already.
 */
static const struct svc_row {
	struct hp_svc_info info;
	const char *fips_aws;
	const char *fips_gov;
} services[HP_SVC__COUNT] = {
	{ { HP_SVC_SAGEMAKER, "sagemaker", "sagemaker", "api.sagemaker", "SAGEMAKER", "sagemaker" },
	  "api-fips.sagemaker", "api-fips.sagemaker" },
	{ { HP_SVC_EKS, "eks", "eks", "eks", "EKS", "eks" }, "fips.eks", "" },
	{ { HP_SVC_EC2, "ec2", "ec2", "ec2", "EC2", "ec2" }, NULL, "" },
	{ { HP_SVC_LOGS, "logs", "logs", "logs", "CLOUDWATCH_LOGS", "cloudwatch_logs" }, NULL, "" },
	{ { HP_SVC_SSM, "ssm", "ssm", "ssm", "SSM", "ssm" }, NULL, "" },
	{ { HP_SVC_QUOTAS, "service-quotas", "servicequotas", "servicequotas", "SERVICE_QUOTAS",
	    "service_quotas" }, NULL, "" },
	{ { HP_SVC_STS, "sts", "sts", "sts", "STS", "sts" }, NULL, "" },
};

const struct hp_svc_info *hp_svc_info(enum hp_svc svc)
{
	if ((int)svc < 0 || svc >= HP_SVC__COUNT)
		return NULL;
	return &services[svc].info;
}

enum partition {
	PART_AWS,
	PART_CN,
	PART_GOV,
	PART_UNSUPPORTED
};

static enum partition partition_of(const char *region)
{
	static const char *const iso[] = { "us-iso-", "us-isob-", "us-isof-", "eu-isoe-" };
	size_t i;

	if (hp_starts_with(region, "cn-"))
		return PART_CN;
	if (hp_starts_with(region, "us-gov-"))
		return PART_GOV;
	for (i = 0; i < HP_ARRAY_LEN(iso); i++)
		if (hp_starts_with(region, iso[i]))
			return PART_UNSUPPORTED;
	/* botocore also falls back to the aws partition for unknown names. */
	return PART_AWS;
}

/*
 * Check an override and copy it without one trailing slash. `from` names
 * the setting for the message; a bad flag is a usage error.
 */
static int take_override(const char *v, const char *from, int is_flag, char *url, size_t n,
			 struct hp_error *e)
{
	enum hp_err code = is_flag ? HP_ERR_USAGE : HP_ERR_CONFIG;
	const char *host = NULL, *q;
	size_t len;

	if (!strncasecmp(v, "https://", 8))
		host = v + 8;
	else if (!strncasecmp(v, "http://", 7))
		host = v + 7;
	for (q = v; *q; q++)
		if ((unsigned char)*q <= 0x20 || *q == 0x7f)
			return hp_error_set(e, code, "invalid endpoint URL '%.200s' from %s: it "
					    "contains whitespace or control characters", v, from);
	if (!host || !*host || *host == '/')
		return hp_error_set(e, code, "invalid endpoint URL '%.200s' from %s: expected "
				    "http:// or https:// and a host", v, from);
	len = strlen(v);
	if (v[len - 1] == '/')
		len--;
	if (len >= n)
		return hp_error_set(e, code, "endpoint URL from %s is too long", from);
	memcpy(url, v, len);
	url[len] = '\0';
	return 0;
}

static int standard_url(const struct svc_row *row, const struct hp_profile *p,
			struct hp_sys *sys, const char *region, char *url, size_t n,
			struct hp_error *e)
{
	int fips = setting(sys, p, "AWS_USE_FIPS_ENDPOINT", "use_fips_endpoint");
	int dual = setting(sys, p, "AWS_USE_DUALSTACK_ENDPOINT", "use_dualstack_endpoint");
	enum partition part = partition_of(region);
	const char *suffix, *special = NULL;
	char fips_prefix[64];
	const char *prefix = row->info.host_prefix;
	int w;

	if (part == PART_UNSUPPORTED)
		return hp_error_set(e, HP_ERR_CONFIG, "region '%s' is in an isolated partition, "
				    "which hpnode has no endpoints for; pass --endpoint-url", region);
	if (dual)
		suffix = part == PART_CN ? "api.amazonwebservices.com.cn" : "api.aws";
	else
		suffix = part == PART_CN ? "amazonaws.com.cn" : "amazonaws.com";
	if (fips) {
		/* Dual-stack FIPS hosts and China follow the general pattern. */
		if (!dual && part == PART_AWS)
			special = row->fips_aws;
		else if (!dual && part == PART_GOV)
			special = row->fips_gov;
		if (!special) {
			snprintf(fips_prefix, sizeof(fips_prefix), "%s-fips", row->info.host_prefix);
			prefix = fips_prefix;
		} else if (*special) {
			prefix = special;
		}
	}
	/*
	 * STS stays regional even with AWS_STS_REGIONAL_ENDPOINTS=legacy: the
	 * global host signs with scope us-east-1 whatever the region, and a
	 * regional host needs no such exception. botocore's default agrees.
	 */
	w = snprintf(url, n, "https://%s.%s.%s", prefix, region, suffix);
	if (w < 0 || (size_t)w >= n)
		return hp_error_set(e, HP_ERR_INTERNAL, "endpoint URL buffer too small");
	return 0;
}

int hp_endpoint_resolve(struct hp_sys *sys, const struct hp_profile *p, enum hp_svc svc,
			const char *region, const char *flag_endpoint, char *url, size_t n,
			struct hp_error *e)
{
	const struct svc_row *row;
	char var[64], key[64], section[160];
	const char *v, *group;

	if ((int)svc < 0 || svc >= HP_SVC__COUNT)
		return hp_error_set(e, HP_ERR_INTERNAL, "unknown service %d", (int)svc);
	row = &services[svc];
	if (flag_endpoint)
		return take_override(flag_endpoint, "--endpoint-url", 1, url, n, e);
	if (!setting(sys, p, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
		     "ignore_configured_endpoint_urls")) {
		snprintf(var, sizeof(var), "AWS_ENDPOINT_URL_%s", row->info.env_suffix);
		if ((v = env_get(sys, var)))
			return take_override(v, var, 0, url, n, e);
		if ((v = env_get(sys, "AWS_ENDPOINT_URL")))
			return take_override(v, "AWS_ENDPOINT_URL", 0, url, n, e);
		group = cfg(p, "services");
		if (group) {
			snprintf(section, sizeof(section), "services %s", group);
			snprintf(key, sizeof(key), "%s.endpoint_url", row->info.config_key);
			v = hp_ini_get(&p->config, section, key);
			if (v && *v) {
				char from[224];

				snprintf(from, sizeof(from), "[%.150s] %s", section, key);
				return take_override(v, from, 0, url, n, e);
			}
		}
		if ((v = cfg(p, "endpoint_url")))
			return take_override(v, "the profile's endpoint_url", 0, url, n, e);
	}
	if (!region || !*region)
		return hp_error_set(e, HP_ERR_NO_REGION, "no AWS region to build the %s endpoint from",
				    row->info.name);
	return standard_url(row, p, sys, region, url, n, e);
}

const char *hp_ca_bundle(struct hp_sys *sys, const struct hp_profile *p)
{
	const char *v = env_get(sys, "AWS_CA_BUNDLE");

	return v ? v : cfg(p, "ca_bundle");
}
