/*
 * The services hpnode calls and the URL each is reached at: configured
 * overrides first (botocore's order), else the standard host of the
 * region's partition (aws, aws-cn, aws-us-gov) with FIPS and dual-stack
 * variants. The isolated (ISO) partitions and aws-eusc are not supported.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
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
	{ { HP_SVC_S3, "s3", "s3", "s3", "S3", "s3" }, NULL, NULL },
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

/* What the host of an endpoint URL is, as far as its text says. */
enum host_kind { HOST_NAME, HOST_LOOPBACK, HOST_LINK_LOCAL, HOST_IP };

/*
 * An IP literal in any form the resolver accepts (dotted, one decimal
 * number, hex, octal, shortened; IPv6 in brackets, IPv4-mapped), or a name.
 */
static enum host_kind host_kind(const char *h, size_t n)
{
	char buf[256];
	struct in_addr a4;
	struct in6_addr a6;

	if (n >= sizeof(buf))
		return HOST_NAME;
	memcpy(buf, h, n);
	buf[n] = '\0';
	if (n && buf[n - 1] == '.')
		buf[--n] = '\0';
	if (n > 2 && buf[0] == '[' && buf[n - 1] == ']') {
		buf[n - 1] = '\0';
		if (inet_pton(AF_INET6, buf + 1, &a6) != 1)
			return HOST_NAME;
		if (hp_ip6_link_local(a6.s6_addr))
			return HOST_LINK_LOCAL;
		return hp_ip6_loopback(a6.s6_addr) ? HOST_LOOPBACK : HOST_IP;
	}
	if (inet_aton(buf, &a4)) {
		uint32_t v = ntohl(a4.s_addr);

		if (hp_ip4_link_local(v))
			return HOST_LINK_LOCAL;
		return (v >> 24) == 127 ? HOST_LOOPBACK : HOST_IP;
	}
	return !strcasecmp(buf, "localhost") ? HOST_LOOPBACK : HOST_NAME;
}

/*
 * The validation step of every endpoint override: the authority's host
 * and port (userinfo left aside). A link-local or metadata address is
 * refused (only the instance and container credential providers reach
 * those), so is an empty or malformed port, and plain http:// to anything
 * but loopback unless allow_http (HPNODE_ALLOW_PLAIN_HTTP=1): the signed
 * requests and the session token would cross the network in clear.
 */
static int check_authority(const char *v, const char *host, int https, int allow_http,
			   const char *from, enum hp_err code, struct hp_error *e)
{
	size_t alen = strcspn(host, "/?#"), hlen;
	const char *at, *h = host, *port = NULL;
	enum host_kind kind;

	for (at = host; at < host + alen; at++)
		if (*at == '@')
			h = at + 1;
	if (*h == '[') {
		const char *close = memchr(h, ']', (size_t)(host + alen - h));

		if (!close)
			return hp_error_set(e, code, "invalid endpoint URL '%.200s' from %s: an IPv6 "
					    "address without its closing ']'", v, from);
		hlen = (size_t)(close + 1 - h);
		if (close + 1 < host + alen) {
			if (close[1] != ':')
				return hp_error_set(e, code, "invalid endpoint URL '%.200s' from %s: "
						    "text after the IPv6 address", v, from);
			port = close + 2;
		}
	} else {
		const char *colon = memchr(h, ':', (size_t)(host + alen - h));

		hlen = colon ? (size_t)(colon - h) : (size_t)(host + alen - h);
		port = colon ? colon + 1 : NULL;
	}
	if (!hlen)
		return hp_error_set(e, code, "invalid endpoint URL '%.200s' from %s: no host", v, from);
	if (port) {
		size_t plen = (size_t)(host + alen - port), i;
		long num = 0;

		if (!plen)
			return hp_error_set(e, code, "invalid endpoint URL '%.200s' from %s: an empty "
					    "port after ':'", v, from);
		for (i = 0; i < plen; i++) {
			if (!isdigit((unsigned char)port[i]) || i >= 5)
				return hp_error_set(e, code, "invalid endpoint URL '%.200s' from %s: the "
						    "port must be a number from 1 to 65535", v, from);
			num = num * 10 + (port[i] - '0');
		}
		if (num < 1 || num > 65535)
			return hp_error_set(e, code, "invalid endpoint URL '%.200s' from %s: the port "
					    "must be a number from 1 to 65535", v, from);
	}
	kind = host_kind(h, hlen);
	if (kind == HOST_LINK_LOCAL)
		return hp_error_set(e, code, "endpoint URL '%.200s' from %s is a link-local or "
				    "metadata address; a service endpoint may not be one", v, from);
	if (!https && kind != HOST_LOOPBACK && !allow_http)
		return hp_error_set(e, code, "endpoint URL '%.200s' from %s is plain http:// to a "
				    "host that is not loopback: the signed requests and the session "
				    "token would go in clear; use https://, or set "
				    "HPNODE_ALLOW_PLAIN_HTTP=1 to allow it", v, from);
	return 0;
}

/*
 * Check an override and copy it without one trailing slash. `from` names
 * the setting for the message; a bad flag is a usage error.
 */
static int take_override(struct hp_sys *sys, const char *v, const char *from, int is_flag,
			 char *url, size_t n, struct hp_error *e)
{
	enum hp_err code = is_flag ? HP_ERR_USAGE : HP_ERR_CONFIG;
	const char *host = NULL, *q, *allow = env_get(sys, "HPNODE_ALLOW_PLAIN_HTTP");
	size_t len;
	int https = 0;

	if (!strncasecmp(v, "https://", 8))
		host = v + 8, https = 1;
	else if (!strncasecmp(v, "http://", 7))
		host = v + 7;
	for (q = v; *q; q++)
		if ((unsigned char)*q <= 0x20 || *q == 0x7f)
			return hp_error_set(e, code, "invalid endpoint URL '%.200s' from %s: it "
					    "contains whitespace or control characters", v, from);
	if (!host || !*host || *host == '/')
		return hp_error_set(e, code, "invalid endpoint URL '%.200s' from %s: expected "
				    "http:// or https:// and a host", v, from);
	if (check_authority(v, host, https, allow && !strcmp(allow, "1"), from, code, e))
		return -1;
	len = strlen(v);
	/*
	 * "https://host/" loses its slash; a path prefix keeps what it was
	 * given, since botocore sends an operation on "/" to the prefix as
	 * written ("/p" or "/p/").
	 */
	if (v[len - 1] == '/' && strchr(host, '/') == v + len - 1)
		len--;
	if (len >= n)
		return hp_error_set(e, code, "endpoint URL from %s is too long", from);
	memcpy(url, v, len);
	url[len] = '\0';
	return 0;
}

/* 1 when the section holds at least one key. */
static int section_has_keys(const struct hp_profile *p, const char *section)
{
	size_t i;

	for (i = 0; i < p->config.n; i++)
		if (!strcmp(p->config.kv[i].section, section))
			return 1;
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
	/* S3 names its dual-stack hosts s3[-fips].dualstack.<region>.amazonaws.com. */
	if (dual && row->info.svc == HP_SVC_S3)
		w = snprintf(url, n, "https://%s.dualstack.%s.%s", prefix, region,
			     part == PART_CN ? "amazonaws.com.cn" : "amazonaws.com");
	else
		w = snprintf(url, n, "https://%s.%s.%s", prefix, region, suffix);
	if (w < 0 || (size_t)w >= n)
		return hp_error_set(e, HP_ERR_INTERNAL, "endpoint URL buffer too small");
	return 0;
}

int hp_endpoint_configured(struct hp_sys *sys, const struct hp_profile *p,
			   const char *env_suffix, const char *config_key, char *url, size_t n,
			   struct hp_error *e)
{
	char var[64], key[64], section[160], from[224];
	const char *v, *group;

	if (setting(sys, p, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
		    "ignore_configured_endpoint_urls"))
		return 0;
	snprintf(var, sizeof(var), "AWS_ENDPOINT_URL_%s", env_suffix);
	if ((v = env_get(sys, var)))
		return take_override(sys, v, var, 0, url, n, e) ? -1 : 1;
	if ((v = env_get(sys, "AWS_ENDPOINT_URL")))
		return take_override(sys, v, "AWS_ENDPOINT_URL", 0, url, n, e) ? -1 : 1;
	group = cfg(p, "services");
	if (group) {
		snprintf(section, sizeof(section), "services %s", group);
		/* botocore refuses a services key whose section is absent or empty. */
		if (!hp_ini_has_section(&p->config, section) || !section_has_keys(p, section))
			return hp_error_set(e, HP_ERR_CONFIG, "profile '%s' names services '%.100s', "
					    "but the config file has no [services %.100s] section "
					    "with settings", p->name, group, group);
		snprintf(key, sizeof(key), "%s.endpoint_url", config_key);
		v = hp_ini_get(&p->config, section, key);
		if (v && *v) {
			snprintf(from, sizeof(from), "[%.150s] %s", section, key);
			return take_override(sys, v, from, 0, url, n, e) ? -1 : 1;
		}
	}
	if ((v = cfg(p, "endpoint_url")))
		return take_override(sys, v, "the profile's endpoint_url", 0, url, n, e) ? -1 : 1;
	return 0;
}

int hp_endpoint_resolve(struct hp_sys *sys, const struct hp_profile *p, enum hp_svc svc,
			const char *region, const char *flag_endpoint, char *url, size_t n,
			struct hp_error *e)
{
	const struct svc_row *row;
	int rc;

	if ((int)svc < 0 || svc >= HP_SVC__COUNT)
		return hp_error_set(e, HP_ERR_INTERNAL, "unknown service %d", (int)svc);
	row = &services[svc];
	if (flag_endpoint)
		return take_override(sys, flag_endpoint, "--endpoint-url", 1, url, n, e);
	rc = p ? hp_endpoint_configured(sys, p, row->info.env_suffix, row->info.config_key, url,
					n, e) : 0;
	if (rc)
		return rc < 0 ? -1 : 0;
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
