/*
 * The service table, standard hosts per partition (FIPS, dual-stack),
 * endpoint overrides and their order, and the CA bundle setting.
 */
#include <stdio.h>
#include <string.h>

#include "fake-sys.h"
#include "hp/creds.h"
#include "t.h"

struct env_pair {
	const char *name, *value;
};

/* Resolve one service's URL with these variables and config file. */
static int resolve(enum hp_svc svc, const char *region, const char *flag,
		   const struct env_pair *env, const char *config, char *url, size_t n,
		   struct hp_error *e)
{
	struct fake_sys f;
	struct hp_profile p;
	int rc;

	fake_sys_init(&f);
	fake_setenv(&f, "AWS_CONFIG_FILE", "/cfg");
	for (; env && env->name; env++)
		fake_setenv(&f, env->name, env->value);
	/* The order tests use plain-http names; a case may turn this off (the first value wins). */
	fake_setenv(&f, "HPNODE_ALLOW_PLAIN_HTTP", "1");
	if (config)
		fake_file(&f, "/cfg", config);
	hp_error_clear(e);
	if (hp_profile_load(&f.sys, NULL, &p, e))
		T_FAILF("profile: %.500s", e->msg);
	url[0] = '\0';
	rc = hp_endpoint_resolve(&f.sys, &p, svc, region, flag, url, n, e);
	hp_profile_release(&p);
	fake_sys_release(&f);
	return rc;
}

static void t_service_table(void)
{
	static const struct {
		enum hp_svc svc;
		const char *name, *signing, *prefix, *env, *key;
	} want[] = {
		{ HP_SVC_SAGEMAKER, "sagemaker", "sagemaker", "api.sagemaker", "SAGEMAKER", "sagemaker" },
		{ HP_SVC_EKS, "eks", "eks", "eks", "EKS", "eks" },
		{ HP_SVC_EC2, "ec2", "ec2", "ec2", "EC2", "ec2" },
		{ HP_SVC_LOGS, "logs", "logs", "logs", "CLOUDWATCH_LOGS", "cloudwatch_logs" },
		{ HP_SVC_SSM, "ssm", "ssm", "ssm", "SSM", "ssm" },
		{ HP_SVC_QUOTAS, "service-quotas", "servicequotas", "servicequotas", "SERVICE_QUOTAS",
		  "service_quotas" },
		{ HP_SVC_STS, "sts", "sts", "sts", "STS", "sts" },
		{ HP_SVC_S3, "s3", "s3", "s3", "S3", "s3" },
	};
	size_t i;

	T_EQ(HP_ARRAY_LEN(want), HP_SVC__COUNT);
	for (i = 0; i < HP_ARRAY_LEN(want); i++) {
		const struct hp_svc_info *s = hp_svc_info(want[i].svc);

		T_ASSERT(s != NULL);
		T_EQ(s->svc, want[i].svc);
		T_STREQ(s->name, want[i].name);
		T_STREQ(s->signing_name, want[i].signing);
		T_STREQ(s->host_prefix, want[i].prefix);
		T_STREQ(s->env_suffix, want[i].env);
		T_STREQ(s->config_key, want[i].key);
	}
	T_ASSERT(hp_svc_info(HP_SVC__COUNT) == NULL);
}

/* Hosts by partition and switch, as botocore 1.43.11 resolves them. */
static void t_standard_hosts(void)
{
	static const struct env_pair none[] = { { NULL, NULL } };
	static const struct env_pair fips[] = { { "AWS_USE_FIPS_ENDPOINT", "true" }, { NULL, NULL } };
	static const struct env_pair dual[] = { { "AWS_USE_DUALSTACK_ENDPOINT", "TRUE" },
						{ NULL, NULL } };
	static const struct env_pair both[] = { { "AWS_USE_FIPS_ENDPOINT", "true" },
						{ "AWS_USE_DUALSTACK_ENDPOINT", "true" },
						{ NULL, NULL } };
	static const struct {
		const struct env_pair *env;
		const char *region;
		const char *host[HP_SVC__COUNT];
	} cases[] = {
		{ none, "us-west-2",
		  { "api.sagemaker.us-west-2.amazonaws.com", "eks.us-west-2.amazonaws.com",
		    "ec2.us-west-2.amazonaws.com", "logs.us-west-2.amazonaws.com",
		    "ssm.us-west-2.amazonaws.com", "servicequotas.us-west-2.amazonaws.com",
		    "sts.us-west-2.amazonaws.com",
		    "s3.us-west-2.amazonaws.com" } },
		{ none, "cn-north-1",
		  { "api.sagemaker.cn-north-1.amazonaws.com.cn", "eks.cn-north-1.amazonaws.com.cn",
		    "ec2.cn-north-1.amazonaws.com.cn", "logs.cn-north-1.amazonaws.com.cn",
		    "ssm.cn-north-1.amazonaws.com.cn", "servicequotas.cn-north-1.amazonaws.com.cn",
		    "sts.cn-north-1.amazonaws.com.cn",
		    "s3.cn-north-1.amazonaws.com.cn" } },
		{ none, "us-gov-west-1",
		  { "api.sagemaker.us-gov-west-1.amazonaws.com", "eks.us-gov-west-1.amazonaws.com",
		    "ec2.us-gov-west-1.amazonaws.com", "logs.us-gov-west-1.amazonaws.com",
		    "ssm.us-gov-west-1.amazonaws.com", "servicequotas.us-gov-west-1.amazonaws.com",
		    "sts.us-gov-west-1.amazonaws.com",
		    "s3.us-gov-west-1.amazonaws.com" } },
		{ fips, "us-east-1",
		  { "api-fips.sagemaker.us-east-1.amazonaws.com", "fips.eks.us-east-1.amazonaws.com",
		    "ec2-fips.us-east-1.amazonaws.com", "logs-fips.us-east-1.amazonaws.com",
		    "ssm-fips.us-east-1.amazonaws.com", "servicequotas-fips.us-east-1.amazonaws.com",
		    "sts-fips.us-east-1.amazonaws.com",
		    "s3-fips.us-east-1.amazonaws.com" } },
		{ fips, "us-gov-west-1",
		  { "api-fips.sagemaker.us-gov-west-1.amazonaws.com", "eks.us-gov-west-1.amazonaws.com",
		    "ec2.us-gov-west-1.amazonaws.com", "logs.us-gov-west-1.amazonaws.com",
		    "ssm.us-gov-west-1.amazonaws.com", "servicequotas.us-gov-west-1.amazonaws.com",
		    "sts.us-gov-west-1.amazonaws.com",
		    "s3-fips.us-gov-west-1.amazonaws.com" } },
		{ fips, "cn-north-1",
		  { "api.sagemaker-fips.cn-north-1.amazonaws.com.cn",
		    "eks-fips.cn-north-1.amazonaws.com.cn", "ec2-fips.cn-north-1.amazonaws.com.cn",
		    "logs-fips.cn-north-1.amazonaws.com.cn", "ssm-fips.cn-north-1.amazonaws.com.cn",
		    "servicequotas-fips.cn-north-1.amazonaws.com.cn",
		    "sts-fips.cn-north-1.amazonaws.com.cn",
		    "s3-fips.cn-north-1.amazonaws.com.cn" } },
		{ dual, "us-west-2",
		  { "api.sagemaker.us-west-2.api.aws", "eks.us-west-2.api.aws",
		    "ec2.us-west-2.api.aws", "logs.us-west-2.api.aws", "ssm.us-west-2.api.aws",
		    "servicequotas.us-west-2.api.aws", "sts.us-west-2.api.aws",
		    "s3.dualstack.us-west-2.amazonaws.com" } },
		{ dual, "cn-north-1",
		  { "api.sagemaker.cn-north-1.api.amazonwebservices.com.cn",
		    "eks.cn-north-1.api.amazonwebservices.com.cn",
		    "ec2.cn-north-1.api.amazonwebservices.com.cn",
		    "logs.cn-north-1.api.amazonwebservices.com.cn",
		    "ssm.cn-north-1.api.amazonwebservices.com.cn",
		    "servicequotas.cn-north-1.api.amazonwebservices.com.cn",
		    "sts.cn-north-1.api.amazonwebservices.com.cn",
		    "s3.dualstack.cn-north-1.amazonaws.com.cn" } },
		{ both, "us-gov-west-1",
		  { "api.sagemaker-fips.us-gov-west-1.api.aws", "eks-fips.us-gov-west-1.api.aws",
		    "ec2-fips.us-gov-west-1.api.aws", "logs-fips.us-gov-west-1.api.aws",
		    "ssm-fips.us-gov-west-1.api.aws", "servicequotas-fips.us-gov-west-1.api.aws",
		    "sts-fips.us-gov-west-1.api.aws",
		    "s3-fips.dualstack.us-gov-west-1.amazonaws.com" } },
	};
	size_t i;
	int s;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		for (s = 0; s < HP_SVC__COUNT; s++) {
			struct hp_error e = HP_ERROR_INIT;
			char url[256], want[256];

			if (resolve((enum hp_svc)s, cases[i].region, NULL, cases[i].env, NULL, url,
				    sizeof(url), &e))
				T_FAILF("case %zu svc %d: %.500s", i, s, e.msg);
			snprintf(want, sizeof(want), "https://%s", cases[i].host[s]);
			T_STREQ(url, want);
		}
	}
}

static void t_switches_from_config(void)
{
	static const struct env_pair env_off[] = { { "AWS_USE_FIPS_ENDPOINT", "false" },
						   { NULL, NULL } };
	struct hp_error e = HP_ERROR_INIT;
	char url[256];

	T_EQ(resolve(HP_SVC_EC2, "us-west-2", NULL, NULL,
		     "[default]\nuse_fips_endpoint = true\nuse_dualstack_endpoint = false\n", url,
		     sizeof(url), &e), 0);
	T_STREQ(url, "https://ec2-fips.us-west-2.amazonaws.com");
	/* The variable wins over the profile, even when it says false. */
	T_EQ(resolve(HP_SVC_EC2, "us-west-2", NULL, env_off, "[default]\nuse_fips_endpoint = true\n",
		     url, sizeof(url), &e), 0);
	T_STREQ(url, "https://ec2.us-west-2.amazonaws.com");
}

static void t_sts_stays_regional(void)
{
	static const struct env_pair legacy[] = { { "AWS_STS_REGIONAL_ENDPOINTS", "legacy" },
						  { NULL, NULL } };
	struct hp_error e = HP_ERROR_INIT;
	char url[256];

	T_EQ(resolve(HP_SVC_STS, "us-east-1", NULL, legacy, NULL, url, sizeof(url), &e), 0);
	T_STREQ(url, "https://sts.us-east-1.amazonaws.com");
	T_EQ(resolve(HP_SVC_STS, "ap-northeast-1", NULL, legacy, NULL, url, sizeof(url), &e), 0);
	T_STREQ(url, "https://sts.ap-northeast-1.amazonaws.com");
}

static const char services_config[] =
	"[default]\n"
	"services = local\n"
	"endpoint_url = http://profile-wide:1\n"
	"[services local]\n"
	"sagemaker =\n"
	"  endpoint_url = http://svc-section:2/\n"
	"cloudwatch_logs =\n"
	"  endpoint_url = http://logs-section:3\n"
	"service_quotas =\n"
	"  endpoint_url = http://quotas-section:4\n";

static void t_override_order(void)
{
	static const struct env_pair all[] = {
		{ "AWS_ENDPOINT_URL_SAGEMAKER", "http://env-svc:5" },
		{ "AWS_ENDPOINT_URL", "http://env-global:6" },
		{ NULL, NULL } };
	static const struct env_pair global[] = { { "AWS_ENDPOINT_URL", "http://env-global:6/" },
						  { NULL, NULL } };
	static const struct env_pair logs[] = { { "AWS_ENDPOINT_URL_CLOUDWATCH_LOGS", "http://l:7" },
						{ "AWS_ENDPOINT_URL_SERVICE_QUOTAS", "http://q:8" },
						{ NULL, NULL } };
	static const struct {
		enum hp_svc svc;
		const char *flag;
		const struct env_pair *env;
		const char *config, *want;
	} cases[] = {
		{ HP_SVC_SAGEMAKER, "https://flag:9/", all, services_config, "https://flag:9" },
		{ HP_SVC_SAGEMAKER, NULL, all, services_config, "http://env-svc:5" },
		{ HP_SVC_EKS, NULL, all, services_config, "http://env-global:6" },
		{ HP_SVC_SAGEMAKER, NULL, global, services_config, "http://env-global:6" },
		{ HP_SVC_SAGEMAKER, NULL, NULL, services_config, "http://svc-section:2" },
		{ HP_SVC_LOGS, NULL, NULL, services_config, "http://logs-section:3" },
		{ HP_SVC_QUOTAS, NULL, NULL, services_config, "http://quotas-section:4" },
		{ HP_SVC_EC2, NULL, NULL, services_config, "http://profile-wide:1" },
		{ HP_SVC_LOGS, NULL, logs, services_config, "http://l:7" },
		{ HP_SVC_QUOTAS, NULL, logs, services_config, "http://q:8" },
		{ HP_SVC_SSM, NULL, logs, NULL, "https://ssm.eu-west-1.amazonaws.com" },
		/* A [services] section the profile does not select is not used. */
		{ HP_SVC_SAGEMAKER, NULL, NULL, "[services local]\nsagemaker =\n  endpoint_url = "
						"http://x:1\n", "https://api.sagemaker.eu-west-1.amazonaws.com" },
		/* The flag needs no region. */
		{ HP_SVC_STS, "http://127.0.0.1:5000", NULL, NULL, "http://127.0.0.1:5000" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct hp_error e = HP_ERROR_INIT;
		char url[256];

		if (resolve(cases[i].svc, cases[i].flag && !cases[i].env ? NULL : "eu-west-1",
			    cases[i].flag, cases[i].env, cases[i].config, url, sizeof(url), &e))
			T_FAILF("case %zu: %.500s", i, e.msg);
		T_STREQ(url, cases[i].want);
	}
}

/* botocore's rule: a services key naming an absent or empty section is a configuration error. */
static void t_services_section_missing(void)
{
	static const struct env_pair global[] = { { "AWS_ENDPOINT_URL", "http://g:1" },
						  { NULL, NULL } };
	static const char *const configs[] = {
		"[default]\nservices = gone\n",
		"[default]\nservices = empty\n[services empty]\n",
	};
	struct hp_error e = HP_ERROR_INIT;
	char url[256];
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(configs); i++) {
		T_EQ(resolve(HP_SVC_SAGEMAKER, "eu-west-1", NULL, NULL, configs[i], url,
			     sizeof(url), &e), -1);
		T_EQ(e.code, HP_ERR_CONFIG);
		T_EQ(hp_err_exit_status(e.code), HP_EXIT_USAGE);
		T_CONTAINS(e.msg, "names services '");
		/* A variable decides first: the section is not looked at. */
		T_EQ(resolve(HP_SVC_SAGEMAKER, "eu-west-1", NULL, global, configs[i], url,
			     sizeof(url), &e), 0);
		T_STREQ(url, "http://g:1");
		/* Nor with the flag. */
		T_EQ(resolve(HP_SVC_SAGEMAKER, "eu-west-1", "http://f:2", NULL, configs[i], url,
			     sizeof(url), &e), 0);
	}
	/* A path prefix is kept as written, its trailing slash too. */
	T_EQ(resolve(HP_SVC_SAGEMAKER, "eu-west-1", NULL, NULL,
		     "[default]\nservices = s\n[services s]\nsagemaker =\n"
		     "  endpoint_url = http://127.0.0.1:9/prefix/\n", url, sizeof(url), &e), 0);
	T_STREQ(url, "http://127.0.0.1:9/prefix/");
}

static void t_ignore_configured(void)
{
	static const struct env_pair env_on[] = {
		{ "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true" },
		{ "AWS_ENDPOINT_URL_SAGEMAKER", "http://env-svc:5" },
		{ "AWS_ENDPOINT_URL", "http://env-global:6" },
		{ NULL, NULL } };
	static const struct env_pair env_off[] = {
		{ "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "false" },
		{ NULL, NULL } };
	struct hp_error e = HP_ERROR_INIT;
	static const char config[] = "[default]\nignore_configured_endpoint_urls = true\n"
				     "endpoint_url = http://profile-wide:1\n";
	char url[256];

	T_EQ(resolve(HP_SVC_SAGEMAKER, "us-west-2", NULL, env_on, services_config, url, sizeof(url),
		     &e), 0);
	T_STREQ(url, "https://api.sagemaker.us-west-2.amazonaws.com");
	/* The flag is never ignored. */
	T_EQ(resolve(HP_SVC_SAGEMAKER, "us-west-2", "http://flag:1", env_on, services_config, url,
		     sizeof(url), &e), 0);
	T_STREQ(url, "http://flag:1");

	T_EQ(resolve(HP_SVC_EKS, "us-west-2", NULL, NULL, config, url, sizeof(url), &e), 0);
	T_STREQ(url, "https://eks.us-west-2.amazonaws.com");
	/* The variable set to false wins over the profile. */
	T_EQ(resolve(HP_SVC_EKS, "us-west-2", NULL, env_off, config, url, sizeof(url), &e), 0);
	T_STREQ(url, "http://profile-wide:1");
}

static void t_override_validation(void)
{
	static const struct {
		const char *value;
		int from_flag;
		const char *want;     /* NULL: rejected */
	} cases[] = {
		{ "http://localhost:4566", 0, "http://localhost:4566" },
		{ "https://vpce-1.api.sagemaker.us-west-2.vpce.amazonaws.com/", 0,
		  "https://vpce-1.api.sagemaker.us-west-2.vpce.amazonaws.com" },
		{ "HTTPS://Host//", 0, "HTTPS://Host//" },
		{ "https://host/prefix", 1, "https://host/prefix" },
		{ "localhost:4566", 0, NULL },
		{ "ftp://host", 0, NULL },
		{ "https://", 0, NULL },
		{ "https:///path", 1, NULL },
		{ "http://host name", 0, NULL },
		{ "http://host\t", 1, NULL },
		{ "http://host\n", 0, NULL },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct env_pair env[] = { { "AWS_ENDPOINT_URL_EKS", cases[i].value }, { NULL, NULL } };
		struct hp_error e = HP_ERROR_INIT;
		char url[256];
		int rc;

		if (cases[i].from_flag)
			rc = resolve(HP_SVC_EKS, "us-west-2", cases[i].value, NULL, NULL, url,
				     sizeof(url), &e);
		else
			rc = resolve(HP_SVC_EKS, "us-west-2", NULL, env, NULL, url, sizeof(url), &e);
		if (cases[i].want) {
			if (rc)
				T_FAILF("case %zu: %.500s", i, e.msg);
			T_STREQ(url, cases[i].want);
			continue;
		}
		if (!rc)
			T_FAILF("case %zu accepted as '%s'", i, url);
		T_EQ(e.code, cases[i].from_flag ? HP_ERR_USAGE : HP_ERR_CONFIG);
		T_CONTAINS(e.msg, "invalid endpoint URL");
		T_CONTAINS(e.msg, cases[i].from_flag ? "from --endpoint-url" : "from AWS_ENDPOINT_URL_EKS");
	}
}

static void t_override_sources_named(void)
{
	struct hp_error e = HP_ERROR_INIT;
	char url[256], tiny[12];

	T_EQ(resolve(HP_SVC_LOGS, "us-west-2", NULL, NULL,
		     "[default]\nservices = s\n[services s]\ncloudwatch_logs =\n  endpoint_url = nope\n",
		     url, sizeof(url), &e), -1);
	T_EQ(e.code, HP_ERR_CONFIG);
	T_CONTAINS(e.msg, "from [services s] cloudwatch_logs.endpoint_url");
	T_EQ(resolve(HP_SVC_LOGS, "us-west-2", NULL, NULL, "[default]\nendpoint_url = nope\n", url,
		     sizeof(url), &e), -1);
	T_CONTAINS(e.msg, "from the profile's endpoint_url");
	T_EQ(resolve(HP_SVC_LOGS, "us-west-2", "http://long-host:1", NULL, NULL, tiny, sizeof(tiny),
		     &e), -1);
	T_CONTAINS(e.msg, "endpoint URL from --endpoint-url is too long");
}

static void t_region_problems(void)
{
	struct hp_error e = HP_ERROR_INIT;
	char url[256];

	T_EQ(resolve(HP_SVC_EC2, "us-iso-east-1", NULL, NULL, NULL, url, sizeof(url), &e), -1);
	T_EQ(e.code, HP_ERR_CONFIG);
	T_CONTAINS(e.msg, "region 'us-iso-east-1' is in an isolated partition");
	T_EQ(resolve(HP_SVC_EC2, NULL, NULL, NULL, NULL, url, sizeof(url), &e), -1);
	T_EQ(e.code, HP_ERR_NO_REGION);
	T_EQ(resolve(HP_SVC__COUNT, "us-west-2", NULL, NULL, NULL, url, sizeof(url), &e), -1);
	T_EQ(e.code, HP_ERR_INTERNAL);
}

static void t_ca_bundle(void)
{
	struct fake_sys f;
	struct hp_profile p;
	struct hp_error e = HP_ERROR_INIT;

	fake_sys_init(&f);
	fake_setenv(&f, "AWS_CONFIG_FILE", "/cfg");
	fake_file(&f, "/cfg", "[default]\nca_bundle = /etc/corp.pem\n");
	T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), 0);
	T_STREQ(hp_ca_bundle(&f.sys, &p), "/etc/corp.pem");
	fake_setenv(&f, "AWS_CA_BUNDLE", "/env.pem");
	T_STREQ(hp_ca_bundle(&f.sys, &p), "/env.pem");
	hp_profile_release(&p);
	fake_sys_release(&f);

	fake_sys_init(&f);
	fake_setenv(&f, "AWS_CA_BUNDLE", "");
	T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), 0);
	T_ASSERT(hp_ca_bundle(&f.sys, &p) == NULL);
	hp_profile_release(&p);
	fake_sys_release(&f);
}

/*
 * Link-local and metadata addresses in every spelling, plain http to a host
 * that is not loopback (unless HPNODE_ALLOW_PLAIN_HTTP=1), empty and
 * malformed ports: refused, whoever names the endpoint.
 */
static void t_endpoint_refusals(void)
{
	static const struct {
		const char *value;
		int allow_http;
		const char *says;     /* NULL: accepted */
	} cases[] = {
		{ "https://169.254.169.254", 0, "link-local or metadata" },
		{ "http://169.254.169.254/latest", 1, "link-local or metadata" },
		{ "https://2852039166", 0, "link-local or metadata" },
		{ "https://0xa9fea9fe", 0, "link-local or metadata" },
		{ "https://0251.0376.0251.0376", 0, "link-local or metadata" },
		{ "https://169.254.43518", 0, "link-local or metadata" },
		{ "https://169.254.169.254.:443", 0, "link-local or metadata" },
		{ "https://[::ffff:169.254.169.254]", 0, "link-local or metadata" },
		{ "https://[::ffff:a9fe:a9fe]:443", 0, "link-local or metadata" },
		{ "https://[fd00:ec2::254]", 0, "link-local or metadata" },
		{ "https://[FD00:EC2::254]:8443/", 0, "link-local or metadata" },
		{ "https://[fe80::1]", 0, "link-local or metadata" },
		{ "https://user:pw@169.254.170.2", 0, "link-local or metadata" },
		{ "https://127.0.0.1:", 0, "an empty port" },
		{ "https://[::1]:", 0, "an empty port" },
		{ "https://host:0", 0, "from 1 to 65535" },
		{ "https://host:65536", 0, "from 1 to 65535" },
		{ "https://host:44x", 0, "from 1 to 65535" },
		{ "https://host:-1", 0, "from 1 to 65535" },
		{ "https://[::1", 0, "closing ']'" },
		{ "http://sagemaker.internal.example", 0, "plain http://" },
		{ "http://10.0.0.5:8080", 0, "plain http://" },
		{ "http://127.0.0.2.nip.io", 0, "plain http://" },
		{ "http://sagemaker.internal.example", 1, NULL },
		{ "http://127.0.0.1:5000", 0, NULL },
		{ "http://127.9.9.9:5000/", 0, NULL },
		{ "http://[::1]:5000", 0, NULL },
		{ "http://localhost:4566", 0, NULL },
		{ "https://host:443", 0, NULL },
		{ "https://[2001:db8::1]:443", 0, NULL },
		{ "https://vpce-1.sts.us-west-2.vpce.amazonaws.com", 0, NULL },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct env_pair env[] = { { "AWS_ENDPOINT_URL_STS", cases[i].value },
					  { "HPNODE_ALLOW_PLAIN_HTTP", cases[i].allow_http ? "1" : "" },
					  { NULL, NULL } };
		struct hp_error e = HP_ERROR_INIT;
		char url[256];
		int rc = resolve(HP_SVC_STS, "us-west-2", NULL, env, NULL, url, sizeof(url), &e);

		if (!cases[i].says) {
			if (rc)
				T_FAILF("case %zu (%s): %.500s", i, cases[i].value, e.msg);
			continue;
		}
		if (!rc)
			T_FAILF("case %zu accepted as '%s'", i, url);
		T_EQ(e.code, HP_ERR_CONFIG);
		T_CONTAINS(e.msg, cases[i].says);
		T_CONTAINS(e.msg, "from AWS_ENDPOINT_URL_STS");
	}
	/* The flag is held to the same, as a usage error. */
	{
		struct env_pair env[] = { { "HPNODE_ALLOW_PLAIN_HTTP", "" }, { NULL, NULL } };
		struct hp_error e = HP_ERROR_INIT;
		char url[256];

		T_EQ(resolve(HP_SVC_EC2, "us-west-2", "http://0xa9.0xfe.0xa9.0xfe", env, NULL, url,
			     sizeof(url), &e), -1);
		T_EQ(e.code, HP_ERR_USAGE);
		T_CONTAINS(e.msg, "link-local or metadata");
	}
}

T_MAIN(T(t_endpoint_refusals), T(t_service_table), T(t_standard_hosts), T(t_switches_from_config),
       T(t_sts_stays_regional), T(t_override_order), T(t_services_section_missing),
       T(t_ignore_configured),
       T(t_override_validation), T(t_override_sources_named), T(t_region_problems),
       T(t_ca_bundle))
