/*
 * The credential chain (order, every error, no secret in any message) and
 * region resolution.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-sys.h"
#include "hp/creds.h"
#include "t.h"

/* Every secret in these tests carries one of these markers. */
#define SK "SeCrEt"
#define TOK "ToKeN"

/*
 * Match on an error message after the provider's name: containment plus the
 * same ending (T_STREQ on the 1024-byte message array trips
 * -Wformat-truncation).
 */
#define T_MSG(msg, want)                                               \
	do {                                                           \
		T_CONTAINS(msg, want);                                 \
		T_ASSERT(hp_ends_with(msg, want));                     \
	} while (0)

struct env_pair {
	const char *name, *value;
};

struct fixture {
	struct fake_sys f;
	struct hp_profile p;
	struct hp_creds c;
	struct hp_buf trace;
	struct hp_error e;
	int rc;
};

static void fx_init(struct fixture *x)
{
	memset(x, 0, sizeof(*x));
	fake_sys_init(&x->f);
	hp_buf_init(&x->trace, 1 << 16);
	fake_setenv(&x->f, "AWS_CONFIG_FILE", "/cfg");
	fake_setenv(&x->f, "AWS_SHARED_CREDENTIALS_FILE", "/creds");
}

/* Load the profile from the canned files, then walk the chain. */
static int fx_resolve(struct fixture *x, const char *flag_profile, const char *config,
		      const char *creds)
{
	if (config)
		fake_file(&x->f, "/cfg", config);
	if (creds)
		fake_file(&x->f, "/creds", creds);
	if (hp_profile_load(&x->f.sys, flag_profile, &x->p, &x->e))
		T_FAILF("profile load: %.500s", x->e.msg);
	x->rc = hp_creds_resolve(&x->f.sys, &x->p, &x->c, &x->trace, &x->e);
	/* Whatever happened, no secret reaches a message. */
	T_NOT_CONTAINS(x->trace.buf, SK);
	T_NOT_CONTAINS(x->trace.buf, TOK);
	T_NOT_CONTAINS(x->e.msg, SK);
	T_NOT_CONTAINS(x->e.msg, TOK);
	if (x->rc) {
		T_ASSERT(x->c.access_key == NULL && x->c.secret_key == NULL);
		T_ASSERT(x->e.code != HP_OK);
	}
	return x->rc;
}

static void fx_release(struct fixture *x)
{
	hp_creds_release(&x->c);
	hp_profile_release(&x->p);
	hp_buf_release(&x->trace);
	fake_sys_release(&x->f);
}

static void set_env_keys(struct fixture *x)
{
	fake_setenv(&x->f, "AWS_ACCESS_KEY_ID", "AKIDENV");
	fake_setenv(&x->f, "AWS_SECRET_ACCESS_KEY", SK "env");
}

static const char creds_file[] = "[default]\naws_access_key_id = AKIDFILE\n"
				 "aws_secret_access_key = " SK "file\n"
				 "aws_session_token = " TOK "file\n"
				 "[dev]\naws_access_key_id = AKIDDEVFILE\n"
				 "aws_secret_access_key = " SK "devfile\n";

static const char process_json[] =
	"{\"Version\": 1, \"AccessKeyId\": \"AKIDPROC\", \"SecretAccessKey\": \"" SK "proc\", "
	"\"SessionToken\": \"" TOK "proc\", \"Expiration\": \"2015-08-30T13:36:00Z\"}";

/* ---- order ---- */

static void t_chain_order(void)
{
	static const struct {
		const char *what;
		int env;                  /* set env keys */
		const char *flag;         /* --profile */
		const char *config, *creds;
		const char *provider, *access_key;
	} cases[] = {
		{ "env beats everything", 1, NULL,
		  "[default]\ncredential_process = tool\naws_access_key_id = AKIDCFG\n"
		  "aws_secret_access_key = " SK "cfg\n", creds_file, "environment", "AKIDENV" },
		{ "env wins over an SSO profile named by AWS_PROFILE", 1, NULL, "[default]\n"
		  "sso_session = corp\nsso_account_id = 1\nsso_role_name = R\n[sso-session corp]\n"
		  "sso_start_url = https://corp/start\nsso_region = us-east-1\n", NULL,
		  "environment", "AKIDENV" },
		{ "--profile skips env", 1, "dev", "[profile dev]\n", creds_file,
		  "shared-credentials-file", "AKIDDEVFILE" },
		{ "credentials file beats process and config", 0, NULL,
		  "[default]\ncredential_process = tool\naws_access_key_id = AKIDCFG\n"
		  "aws_secret_access_key = " SK "cfg\n", creds_file, "shared-credentials-file",
		  "AKIDFILE" },
		{ "process beats config keys", 0, "dev",
		  "[profile dev]\ncredential_process = tool\naws_access_key_id = AKIDCFG\n"
		  "aws_secret_access_key = " SK "cfg\n", "[other]\n", "credential-process",
		  "AKIDPROC" },
		{ "config keys last", 0, "dev",
		  "[profile dev]\naws_access_key_id = AKIDCFG\naws_secret_access_key = " SK "cfg\n",
		  "[default]\n", "config-file", "AKIDCFG" },
		{ "credentials-file section without keys falls through", 0, NULL,
		  "[default]\naws_access_key_id = AKIDCFG\naws_secret_access_key = " SK "cfg\n",
		  "[default]\nregion = x\n", "config-file", "AKIDCFG" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;

		fx_init(&x);
		if (cases[i].env)
			set_env_keys(&x);
		x.f.run_out = process_json;
		if (fx_resolve(&x, cases[i].flag, cases[i].config, cases[i].creds))
			T_FAILF("%s: %.500s", cases[i].what, x.e.msg);
		T_STREQ(x.c.provider, cases[i].provider);
		T_STREQ(x.c.access_key, cases[i].access_key);
		fx_release(&x);
	}
}

static void t_trace_lines(void)
{
	struct fixture x;

	fx_init(&x);
	x.f.run_out = process_json;
	T_EQ(fx_resolve(&x, "dev", "[profile dev]\ncredential_process = tool\n",
			"[dev]\nregion = us-west-2\n"), 0);
	T_STREQ(x.trace.buf, "environment: skipped because --profile was given\n"
			     "assume-role: profile 'dev' has no role_arn\n"
			     "web-identity: profile 'dev' has no web_identity_token_file\n"
			     "sso: profile 'dev' has no sso_account_id or sso_role_name\n"
			     "shared-credentials-file: no aws_access_key_id in section [dev] of the "
			     "credentials file\n"
			     "credential-process: answered (session credentials)\n");
	T_NOT_CONTAINS(x.trace.buf, "AKIDPROC");
	fx_release(&x);
}

/* ---- environment ---- */

static void t_env_tokens(void)
{
	static const struct {
		const char *session, *security, *want;
	} cases[] = {
		{ NULL, NULL, NULL },
		{ TOK "new", NULL, TOK "new" },
		{ NULL, TOK "old", TOK "old" },
		/* botocore reads the legacy name first. */
		{ TOK "new", TOK "old", TOK "old" },
		{ "", NULL, NULL },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;

		fx_init(&x);
		set_env_keys(&x);
		if (cases[i].session)
			fake_setenv(&x.f, "AWS_SESSION_TOKEN", cases[i].session);
		if (cases[i].security)
			fake_setenv(&x.f, "AWS_SECURITY_TOKEN", cases[i].security);
		T_EQ(fx_resolve(&x, NULL, NULL, NULL), 0);
		T_STREQ(x.c.provider, "environment");
		T_STREQ(x.c.secret_key, SK "env");
		if (cases[i].want)
			T_STREQ(x.c.session_token, cases[i].want);
		else
			T_ASSERT(x.c.session_token == NULL);
		T_EQ(x.c.expires_ms, 0);
		fx_release(&x);
	}
}

static void t_env_expiration(void)
{
	static const struct {
		const char *value;
		int rc;
		long long ms;
		const char *msg;
	} cases[] = {
		/* The fake clock reads 2015-08-30T12:36:00Z. */
		{ "2015-08-30T13:36:00Z", 0, 1440941760000LL, NULL },
		{ "2015-08-30T13:36:00.250Z", 0, 1440941760250LL, NULL },
		{ "2015-08-30T15:36:00+02:00", 0, 1440941760000LL, NULL },
		{ "2015-08-30T09:36:00-0400", 0, 1440941760000LL, NULL },
		{ "2015-08-30 13:36:00", 0, 1440941760000LL, NULL },
		{ "2015-08-30T12:00:00Z", -1, 0,
		  "the credentials in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY expired at "
		  "2015-08-30T12:00:00Z (AWS_CREDENTIAL_EXPIRATION)" },
		{ "tomorrow", -1, 0, "AWS_CREDENTIAL_EXPIRATION 'tomorrow' is not an ISO-8601 time" },
		{ "2015-13-30T12:00:00Z", -1, 0, NULL },
		{ "2015-08-30T12:00:00Zjunk", -1, 0, NULL },
		{ "2015-08-30T12:00:00.Z", -1, 0, NULL },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;

		fx_init(&x);
		set_env_keys(&x);
		fake_setenv(&x.f, "AWS_CREDENTIAL_EXPIRATION", cases[i].value);
		if (fx_resolve(&x, NULL, NULL, NULL) != cases[i].rc)
			T_FAILF("case %zu: rc %d (%.500s)", i, x.rc, x.e.msg);
		if (!cases[i].rc) {
			T_EQ(x.c.expires_ms, cases[i].ms);
		} else {
			T_EQ(x.e.code, HP_ERR_CREDS);
			if (cases[i].msg)
				T_MSG(x.e.msg, cases[i].msg);
		}
		fx_release(&x);
	}
}

static void t_env_partial(void)
{
	static const struct {
		const char *ak, *sk, *msg;
	} cases[] = {
		{ "AKIDENV", NULL, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not" },
		{ NULL, SK "env", "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not" },
		{ "AKIDENV", "", "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;

		fx_init(&x);
		if (cases[i].ak)
			fake_setenv(&x.f, "AWS_ACCESS_KEY_ID", cases[i].ak);
		if (cases[i].sk)
			fake_setenv(&x.f, "AWS_SECRET_ACCESS_KEY", cases[i].sk);
		/* A complete credentials file does not hide the broken environment. */
		T_EQ(fx_resolve(&x, NULL, NULL, creds_file), -1);
		T_EQ(x.e.code, HP_ERR_CREDS);
		T_MSG(x.e.msg, cases[i].msg);
		T_STREQ(x.trace.buf, "environment: failed\n");
		fx_release(&x);
	}
}

/* ---- files ---- */

static void t_file_keys(void)
{
	static const struct {
		const char *config, *creds, *token, *msg;
	} cases[] = {
		{ NULL, "[default]\naws_access_key_id = A\naws_secret_access_key = " SK "\n"
		  "aws_security_token = " TOK "old\naws_session_token = " TOK "new\n",
		  TOK "old", NULL },
		{ NULL, "[default]\naws_access_key_id = A\n", NULL,
		  "section [default] of the credentials file has aws_access_key_id but not "
		  "aws_secret_access_key" },
		{ NULL, "[default]\naws_secret_access_key = " SK "\n", NULL,
		  "section [default] of the credentials file has aws_secret_access_key but not "
		  "aws_access_key_id" },
		{ "[default]\naws_access_key_id = A\naws_secret_access_key = " SK "\n"
		  "aws_session_token = " TOK "cfg\n", NULL, TOK "cfg", NULL },
		{ "[default]\naws_access_key_id = A\n", NULL, NULL,
		  "profile 'default' of the config file has aws_access_key_id but not "
		  "aws_secret_access_key" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;
		int rc;

		fx_init(&x);
		rc = fx_resolve(&x, NULL, cases[i].config, cases[i].creds);
		if (cases[i].msg) {
			T_EQ(rc, -1);
			T_EQ(x.e.code, HP_ERR_CREDS);
			T_MSG(x.e.msg, cases[i].msg);
		} else {
			if (rc)
				T_FAILF("case %zu: %.500s", i, x.e.msg);
			T_STREQ(x.c.access_key, "A");
			T_STREQ(x.c.secret_key, SK);
			T_STREQ(x.c.session_token, cases[i].token);
		}
		fx_release(&x);
	}
}

/* ---- credential_process ---- */

static char *seen_argv[16];
static size_t seen_argc;
static long seen_timeout_ms;
static int (*fake_run)(struct hp_sys *, const struct hp_run_req *, struct hp_run_res *);

static void seen_clear(void)
{
	while (seen_argc)
		free(seen_argv[--seen_argc]);
}

static int capture_run(struct hp_sys *sys, const struct hp_run_req *req, struct hp_run_res *res)
{
	size_t i;

	seen_clear();
	for (i = 0; req->argv[i] && i < HP_ARRAY_LEN(seen_argv); i++)
		seen_argv[seen_argc++] = xstrdup(req->argv[i]);
	seen_timeout_ms = req->timeout_ms;
	return fake_run(sys, req, res);
}

static int slow_run(struct hp_sys *sys, const struct hp_run_req *req, struct hp_run_res *res)
{
	(void)sys;
	(void)req;
	res->timed_out = 1;
	res->exit_status = 137;
	return 0;
}

static void t_process_split(void)
{
	static const struct {
		const char *line;
		const char *argv[6];
	} cases[] = {
		{ "tool", { "tool" } },
		{ "  /usr/bin/tool   --a  b  ", { "/usr/bin/tool", "--a", "b" } },
		{ "\"/opt/my tools/get\" --profile 'prod admin'",
		  { "/opt/my tools/get", "--profile", "prod admin" } },
		{ "a\\ b c\\\\d", { "a b", "c\\d" } },
		{ "x \"q\\\"uote\" \"back\\\\slash\" \"keep\\n\"", { "x", "q\"uote", "back\\slash",
								   "keep\\n" } },
		{ "x 'no $expansion \\ here' \"$HOME\"", { "x", "no $expansion \\ here", "$HOME" } },
		{ "x a'b'\"c\"d '' \"\"", { "x", "abcd", "", "" } },
		{ "x\t#not-a-comment", { "x", "#not-a-comment" } },
	};
	size_t i, k;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;
		char *config;

		fx_init(&x);
		x.f.run_out = process_json;
		fake_run = x.f.sys.run;
		x.f.sys.run = capture_run;
		config = xasprintf("[default]\ncredential_process = %s\n", cases[i].line);
		if (fx_resolve(&x, NULL, config, NULL))
			T_FAILF("case %zu: %.500s", i, x.e.msg);
		for (k = 0; cases[i].argv[k]; k++) {
			if (k >= seen_argc)
				T_FAILF("case %zu: %zu words, expected more", i, seen_argc);
			T_STREQ(seen_argv[k], cases[i].argv[k]);
		}
		T_EQ(seen_argc, k);
		T_EQ(seen_timeout_ms, 60000);
		free(config);
		seen_clear();
		fx_release(&x);
	}
}

static void t_process_split_errors(void)
{
	static const struct {
		const char *line, *why;
	} cases[] = {
		{ "tool 'open", "a single quote is not closed" },
		{ "tool \"open", "a double quote is not closed" },
		{ "tool \\", "a backslash ends the line" },
		/* Regression: the split read one byte past the value's end here. */
		{ "/usr/local/bin/creds --profile prod\\", "a backslash ends the line" },
		{ "\\", "a backslash ends the line" },
		{ "'' ", NULL },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;
		char *config;

		fx_init(&x);
		x.f.run_out = process_json;
		config = xasprintf("[default]\ncredential_process = %s\n", cases[i].line);
		if (!cases[i].why) {
			/* An empty first word is still a word: the run fails instead. */
			x.f.run_fail = 1;
			T_EQ(fx_resolve(&x, NULL, config, NULL), -1);
			T_MSG(x.e.msg, "cannot run credential_process '' of profile 'default'");
		} else {
			T_EQ(fx_resolve(&x, NULL, config, NULL), -1);
			T_EQ(x.e.code, HP_ERR_CREDS);
			T_CONTAINS(x.e.msg, "cannot split the credential_process of profile 'default'");
			T_CONTAINS(x.e.msg, cases[i].why);
			T_ASSERT(x.f.run_argv0 == NULL);
		}
		free(config);
		fx_release(&x);
	}
}

static void t_process_answers(void)
{
	static const struct {
		const char *out;
		const char *token;
		long long expires_ms;
	} cases[] = {
		{ process_json, TOK "proc", 1440941760000LL },
		{ "{\"Version\":1,\"AccessKeyId\":\"AKIDPROC\",\"SecretAccessKey\":\"" SK "\"}", NULL, 0 },
		{ "\n  {\"Version\":1.0,\"AccessKeyId\":\"AKIDPROC\",\"SecretAccessKey\":\"" SK "\","
		  "\"Expiration\":\"2016-01-01T00:00:00+00:00\",\"Extra\":[1,2]}\n", NULL,
		  1451606400000LL },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;

		fx_init(&x);
		x.f.run_out = cases[i].out;
		x.f.run_err = "a warning on stderr";
		if (fx_resolve(&x, NULL, "[default]\ncredential_process = /bin/creds --x\n", NULL))
			T_FAILF("case %zu: %.500s", i, x.e.msg);
		T_STREQ(x.f.run_argv0, "/bin/creds");
		T_STREQ(x.c.provider, "credential-process");
		T_STREQ(x.c.access_key, "AKIDPROC");
		if (cases[i].token)
			T_STREQ(x.c.session_token, cases[i].token);
		else
			T_ASSERT(x.c.session_token == NULL);
		T_EQ(x.c.expires_ms, cases[i].expires_ms);
		fx_release(&x);
	}
}

static void t_process_errors(void)
{
	static const struct {
		int status, fail, slow;
		const char *out, *err, *msg;
	} cases[] = {
		{ 0, 1, 0, NULL, NULL, "cannot run credential_process 'tool' of profile 'default'" },
		{ 0, 0, 1, NULL, NULL,
		  "credential_process 'tool' of profile 'default' did not finish within 60 s" },
		{ 2, 0, 0, process_json, "\n  token expired: run login\nsecond line " SK "\n",
		  "credential_process 'tool' of profile 'default' exited with status 2: "
		  "token expired: run login" },
		{ 1, 0, 0, process_json, NULL,
		  "credential_process 'tool' of profile 'default' exited with status 1: "
		  "(nothing on stderr)" },
		{ 1, 0, 0, NULL, "bad\tthing\r\n",
		  "credential_process 'tool' of profile 'default' exited with status 1: bad thing" },
		{ 0, 0, 0, "AccessKeyId=AKID " SK, NULL,
		  "credential_process 'tool' of profile 'default' did not print a JSON object" },
		{ 0, 0, 0, "[\"" SK "\"]", NULL,
		  "credential_process 'tool' of profile 'default' did not print a JSON object" },
		{ 0, 0, 0, "", NULL,
		  "credential_process 'tool' of profile 'default' did not print a JSON object" },
		{ 0, 0, 0, "{\"Version\":2,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"" SK "\"}", NULL,
		  "credential_process 'tool' of profile 'default' printed Version 2; only Version 1 "
		  "is supported" },
		{ 0, 0, 0, "{\"Version\":\"1\",\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"" SK "\"}",
		  NULL, "credential_process 'tool' of profile 'default' printed no numeric Version; "
			"only Version 1 is supported" },
		{ 0, 0, 0, "{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"" SK "\"}", NULL,
		  "credential_process 'tool' of profile 'default' printed no numeric Version; "
		  "only Version 1 is supported" },
		{ 0, 0, 0, "{\"Version\":1,\"SecretAccessKey\":\"" SK "\"}", NULL,
		  "credential_process 'tool' of profile 'default' printed no AccessKeyId" },
		{ 0, 0, 0, "{\"Version\":1,\"AccessKeyId\":\"A\",\"SessionToken\":\"" TOK "\"}", NULL,
		  "credential_process 'tool' of profile 'default' printed no SecretAccessKey" },
		{ 0, 0, 0, "{\"Version\":1,\"AccessKeyId\":\"A\",\"SecretAccessKey\":7}", NULL,
		  "credential_process 'tool' of profile 'default' printed no SecretAccessKey" },
		{ 0, 0, 0, "{\"Version\":1,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"" SK "\","
		  "\"Expiration\":\"soon " SK "\"}", NULL,
		  "credential_process 'tool' of profile 'default' printed an Expiration that is not "
		  "an ISO-8601 time" },
		{ 0, 0, 0, "{\"Version\":1,\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"" SK "\","
		  "\"Expiration\":\"2015-08-30T12:35:59Z\"}", NULL,
		  "credential_process 'tool' of profile 'default' returned credentials that expired "
		  "at 2015-08-30T12:35:59Z" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;

		fx_init(&x);
		x.f.run_status = cases[i].status;
		x.f.run_fail = cases[i].fail;
		x.f.run_out = cases[i].out;
		x.f.run_err = cases[i].err;
		if (cases[i].slow)
			x.f.sys.run = slow_run;
		/* Keys in the config file do not rescue a broken process. */
		if (fx_resolve(&x, NULL, "[default]\ncredential_process = tool arg\n"
				   "aws_access_key_id = AKIDCFG\naws_secret_access_key = " SK "\n",
			       NULL) != -1)
			T_FAILF("case %zu answered", i);
		T_EQ(x.e.code, HP_ERR_CREDS);
		T_MSG(x.e.msg, cases[i].msg);
		T_CONTAINS(x.trace.buf, "credential-process: failed\n");
		fx_release(&x);
	}
}

/* ---- configuration errors of the other providers ---- */

static void t_config_errors(void)
{
	static const struct {
		const char *config;
		const struct env_pair env[2];
		const char *msg;
	} cases[] = {
		{ "[profile p]\nsso_start_url = https://x/start\nsso_role_name = R\n", { { NULL, NULL } },
		  "sso: SSO profile 'p' is incomplete: it needs sso_region" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\n", { { NULL, NULL } },
		  "assume-role: profile 'p' has role_arn but neither source_profile nor "
		  "credential_source" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = q\n"
		  "credential_source = Environment\n", { { NULL, NULL } },
		  "assume-role: profile 'p' has both source_profile and credential_source" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = q\n"
		  "mfa_serial = arn:aws:iam::1:mfa/u\n", { { NULL, NULL } },
		  "assume-role: profile 'p' assumes role arn:aws:iam::1:role/r with mfa_serial, and "
		  "hpnode does not prompt for MFA codes" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = q\n",
		  { { NULL, NULL } },
		  "assume-role: source_profile 'q' of profile 'p' does not exist in the config or "
		  "credentials file" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = q\n"
		  "[profile q]\nrole_arn = arn:aws:iam::1:role/s\nsource_profile = z\n"
		  "[profile z]\nrole_arn = arn:aws:iam::1:role/t\nsource_profile = q\n",
		  { { NULL, NULL } }, "assume-role: source_profile loop: p -> q -> z -> q" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = p\n",
		  { { NULL, NULL } },
		  "source_profile loop: p (profile 'p' names itself but holds no keys)" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\ncredential_source = Ec2\n",
		  { { NULL, NULL } },
		  "credential_source 'Ec2' of profile 'p' must be Environment, Ec2InstanceMetadata "
		  "or EcsContainer" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\ncredential_source = Environment\n",
		  { { NULL, NULL } },
		  "assume-role: credential_source Environment of profile 'p' gave no credentials: "
		  "AWS_ACCESS_KEY_ID not set" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = q\n"
		  "duration_seconds = 60\n[profile q]\naws_access_key_id = A\n"
		  "aws_secret_access_key = " SK "\n", { { NULL, NULL } },
		  "duration_seconds '60' of profile 'p' must be a number of seconds from 900 to "
		  "43200" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\nweb_identity_token_file = /t\n",
		  { { NULL, NULL } },
		  "web-identity: cannot read the web identity token file '/t' "
		  "(web_identity_token_file of profile 'p'): No such file or directory" },
		{ "[profile p]\n", { { "AWS_ROLE_ARN", "arn:aws:iam::1:role/r" }, { NULL, NULL } },
		  "web-identity: AWS_ROLE_ARN is set but AWS_WEB_IDENTITY_TOKEN_FILE is not" },
		{ "[profile p]\nlogin_session = arn:aws:iam::1:user/u\n", { { NULL, NULL } },
		  "login: profile 'p' uses an 'aws login' session (login_session)" },
		{ "[profile p]\n", { { "AWS_CONTAINER_CREDENTIALS_FULL_URI",
				       "http://203.0.113.9/creds" }, { NULL, NULL } },
		  "container: AWS_CONTAINER_CREDENTIALS_FULL_URI names host 203.0.113.9 over plain "
		  "HTTP" },
		{ "[profile p]\n", { { "AWS_CONTAINER_CREDENTIALS_FULL_URI",
				       "http://localhost.evil.example/creds" }, { NULL, NULL } },
		  "names host localhost.evil.example over plain HTTP" },
		{ "[profile p]\n", { { "AWS_CONTAINER_CREDENTIALS_FULL_URI",
				       "http://127.0.0.1:1/creds" },
				     { "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "/nope" } },
		  "container: cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE '/nope'" },
	};
	size_t i, k;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;

		fx_init(&x);
		fake_setenv(&x.f, "AWS_PROFILE", "p");
		fake_setenv(&x.f, "AWS_REGION", "us-west-2");
		for (k = 0; k < 2 && cases[i].env[k].name; k++)
			fake_setenv(&x.f, cases[i].env[k].name, cases[i].env[k].value);
		if (fx_resolve(&x, NULL, cases[i].config, "[x]\n") != -1)
			T_FAILF("case %zu answered from %s", i, x.c.provider);
		T_EQ(x.e.code, HP_ERR_CREDS);
		T_EQ(hp_err_exit_status(x.e.code), HP_EXIT_CREDS);
		T_CONTAINS(x.e.msg, cases[i].msg);
		fx_release(&x);
	}
}

/* ---- the providers that call out ---- */

#define STS_REPLY(op, ak)                                                               \
	"<" op "Response xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><" op "Result>" \
	"<Credentials><AccessKeyId>" ak "</AccessKeyId><SecretAccessKey>" SK "role"       \
	"</SecretAccessKey><SessionToken>" TOK "role</SessionToken><Expiration>"          \
	"2015-08-30T13:36:00Z</Expiration></Credentials></" op "Result></" op "Response>"

static void t_assume_role(void)
{
	struct fixture x;

	/* ops <- mid (a role itself) <- base (keys): two AssumeRole calls, in order. */
	fx_init(&x);
	fake_setenv(&x.f, "AWS_REGION", "us-west-2");
	fake_setenv(&x.f, "AWS_ENDPOINT_URL_STS", "http://127.0.0.1:9");
	fake_reply(&x.f, 200, NULL, STS_REPLY("AssumeRole", "ASIAMID"));
	fake_reply(&x.f, 200, NULL, STS_REPLY("AssumeRole", "ASIAOPS"));
	T_EQ(fx_resolve(&x, "ops",
			"[profile ops]\nrole_arn = arn:aws:iam::123456789012:role/triage\n"
			"source_profile = mid\nexternal_id = ext-1\nrole_session_name = me\n"
			"duration_seconds = 3600\n"
			"[profile mid]\nrole_arn = arn:aws:iam::123456789012:role/mid\n"
			"source_profile = base\n",
			"[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = " SK "b\n"), 0);
	T_STREQ(x.c.provider, "assume-role");
	T_STREQ(x.c.access_key, "ASIAOPS");
	T_STREQ(x.c.session_token, TOK "role");
	T_EQ(x.c.expires_ms, x.f.now_ms + 3600000);
	T_STREQ(x.c.source, "assume-role via profile ops (source profile mid)");
	T_EQ(x.f.nreq, 2);
	T_CONTAINS(x.f.req_headers[0], "Credential=AKIDBASE/");
	T_CONTAINS(x.f.req_body[0], "Action=AssumeRole&");
	T_CONTAINS(x.f.req_body[0], "RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fmid");
	T_CONTAINS(x.f.req_headers[1], "Credential=ASIAMID/");
	T_CONTAINS(x.f.req_headers[1], "X-Amz-Security-Token: " TOK "role");
	T_CONTAINS(x.f.req_body[1], "RoleSessionName=me&ExternalId=ext-1&DurationSeconds=3600");
	T_STREQ(x.f.req_url[1], "http://127.0.0.1:9/");
	T_CONTAINS(x.trace.buf, "assume-role: source profile 'base' answered (shared credentials "
				"file, profile base)");
	fx_release(&x);

	/* A refusal names the role, the profile and the STS error. */
	fx_init(&x);
	fake_setenv(&x.f, "AWS_REGION", "us-west-2");
	fake_reply(&x.f, 403, NULL, "<ErrorResponse><Error><Code>AccessDenied</Code><Message>not "
		   "authorized to perform sts:AssumeRole</Message></Error></ErrorResponse>");
	T_EQ(fx_resolve(&x, "ops", "[profile ops]\nrole_arn = arn:aws:iam::1:role/r\n"
			"credential_source = Environment\n", NULL), -1);
	T_EQ(x.e.code, HP_ERR_CREDS);
	T_CONTAINS(x.e.msg, "assume-role: credential_source Environment of profile 'ops' gave no "
			    "credentials");
	fx_release(&x);

	fx_init(&x);
	fake_setenv(&x.f, "AWS_REGION", "us-west-2");
	set_env_keys(&x);
	fake_reply(&x.f, 403, NULL, "<ErrorResponse><Error><Code>AccessDenied</Code><Message>not "
		   "authorized to perform sts:AssumeRole</Message></Error></ErrorResponse>");
	T_EQ(fx_resolve(&x, "ops", "[profile ops]\nrole_arn = arn:aws:iam::1:role/r\n"
			"credential_source = Environment\n", NULL), -1);
	T_EQ(x.e.code, HP_ERR_CREDS);
	T_CONTAINS(x.e.msg, "assume-role: sts:AssumeRole of arn:aws:iam::1:role/r for profile 'ops' "
			    "failed: AccessDenied: not authorized to perform sts:AssumeRole");
	T_CONTAINS(x.f.req_headers[0], "Credential=AKIDENV/");
	fx_release(&x);
}

static void t_web_identity(void)
{
	struct fixture x;

	fx_init(&x);
	fake_setenv(&x.f, "AWS_REGION", "us-west-2");
	fake_setenv(&x.f, "AWS_ROLE_ARN", "arn:aws:iam::1:role/irsa");
	fake_setenv(&x.f, "AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token");
	fake_setenv(&x.f, "AWS_ROLE_SESSION_NAME", "pod-1");
	fake_file(&x.f, "/var/run/token", "eyJ" TOK "jwt\n");
	fake_reply(&x.f, 200, NULL, STS_REPLY("AssumeRoleWithWebIdentity", "ASIAWEB"));
	T_EQ(fx_resolve(&x, NULL, "[default]\n", "[default]\naws_access_key_id = AKIDFILE\n"
			"aws_secret_access_key = " SK "\n"), 0);
	T_STREQ(x.c.provider, "web-identity");
	T_STREQ(x.c.access_key, "ASIAWEB");
	T_STREQ(x.c.source, "web identity via AWS_WEB_IDENTITY_TOKEN_FILE");
	T_EQ(x.f.nreq, 1);
	T_NOT_CONTAINS(x.f.req_headers[0], "Authorization");
	T_CONTAINS(x.f.req_body[0], "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&"
				    "RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Firsa&"
				    "RoleSessionName=pod-1&WebIdentityToken=eyJ" TOK "jwt");
	fx_release(&x);

	/* --profile turns the environment off: the profile's keys answer. */
	fx_init(&x);
	fake_setenv(&x.f, "AWS_ROLE_ARN", "arn:aws:iam::1:role/irsa");
	fake_setenv(&x.f, "AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token");
	T_EQ(fx_resolve(&x, "dev", "[profile dev]\n", creds_file), 0);
	T_STREQ(x.c.provider, "shared-credentials-file");
	T_EQ(x.f.nreq, 0);
	fx_release(&x);
}

static void t_container(void)
{
	struct fixture x;

	fx_init(&x);
	fake_setenv(&x.f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:8080/v1/creds");
	fake_setenv(&x.f, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "ignored");
	fake_setenv(&x.f, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "/tok");
	fake_file(&x.f, "/tok", TOK "pod\n");
	fake_net_error(&x.f, HP_NET_CONNECT);  /* one retry */
	fake_reply(&x.f, 200, NULL, "{\"AccessKeyId\":\"ASIACTR\",\"SecretAccessKey\":\"" SK "c\","
		   "\"Token\":\"" TOK "c\",\"Expiration\":\"2015-08-30T18:36:00Z\"}");
	T_EQ(fx_resolve(&x, NULL, NULL, NULL), 0);
	T_STREQ(x.c.provider, "container");
	T_STREQ(x.c.access_key, "ASIACTR");
	T_STREQ(x.c.source, "container credentials from 127.0.0.1");
	T_EQ(x.f.nreq, 2);
	T_CONTAINS(x.f.req_headers[1], "Authorization: " TOK "pod\n");
	T_STREQ(x.f.req_url[1], "http://127.0.0.1:8080/v1/creds");
	fx_release(&x);

	/* RELATIVE_URI goes to 169.254.170.2; HTTPS may name any host. */
	fx_init(&x);
	fake_setenv(&x.f, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc");
	fake_reply(&x.f, 401, NULL, "{\"message\":\"bad token\"}");
	T_EQ(fx_resolve(&x, NULL, NULL, NULL), -1);
	T_STREQ(x.f.req_url[0], "http://169.254.170.2/v2/credentials/abc");
	T_CONTAINS(x.e.msg, "container: the container credentials endpoint at 169.254.170.2 "
			    "failed: HTTP 401");
	fx_release(&x);
}

static const char imds_creds[] =
	"{\"Code\":\"Success\",\"Type\":\"AWS-HMAC\",\"AccessKeyId\":\"ASIAIMDS\","
	"\"SecretAccessKey\":\"" SK "i\",\"Token\":\"" TOK "i\","
	"\"Expiration\":\"2015-08-30T12:46:00Z\"}";

static void t_imds(void)
{
	struct fixture x;
	char region[40];
	int absent = 9;

	fx_init(&x);
	fake_setenv(&x.f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:7/");
	fake_reply(&x.f, 200, NULL, "imds-" TOK);
	fake_reply(&x.f, 200, NULL, "jump-host-role\n");
	fake_reply(&x.f, 200, NULL, imds_creds);
	T_EQ(fx_resolve(&x, NULL, NULL, NULL), 0);
	T_STREQ(x.c.provider, "imds");
	T_STREQ(x.c.source, "instance metadata (role jump-host-role)");
	T_STREQ(x.f.req_method[0], "PUT");
	T_STREQ(x.f.req_url[0], "http://127.0.0.1:7/latest/api/token");
	T_CONTAINS(x.f.req_headers[0], "X-aws-ec2-metadata-token-ttl-seconds: 21600");
	T_STREQ(x.f.req_url[2], "http://127.0.0.1:7/latest/meta-data/iam/security-credentials/"
				"jump-host-role");
	T_CONTAINS(x.f.req_headers[2], "X-aws-ec2-metadata-token: imds-" TOK);
	fx_release(&x);

	/* No instance profile: skipped, not an error. */
	fx_init(&x);
	fake_reply(&x.f, 200, NULL, "tok");
	fake_reply(&x.f, 404, NULL, "");
	T_EQ(fx_resolve(&x, NULL, NULL, NULL), -1);
	T_EQ(x.e.code, HP_ERR_NO_CREDS);
	T_CONTAINS(x.trace.buf, "imds: this EC2 instance has no instance profile");
	fx_release(&x);

	/* The region, and a service that is not there. */
	fx_init(&x);
	fake_reply(&x.f, 200, NULL, "tok");
	fake_reply(&x.f, 200, NULL, "eu-north-1\n");
	T_EQ(hp_imds_region(&x.f.sys, NULL, region, sizeof(region), &absent), 0);
	T_STREQ(region, "eu-north-1");
	T_EQ(absent, 0);
	T_EQ(hp_imds_region(&x.f.sys, NULL, region, sizeof(region), &absent), -1);
	T_EQ(absent, 1);
	fx_release(&x);
}

static void t_sso(void)
{
	static const char cfg[] =
		"[profile dev]\nsso_session = corp\nsso_account_id = 111122223333\n"
		"sso_role_name = Triage\n[sso-session corp]\nsso_start_url = https://corp/start\n"
		"sso_region = us-east-1\n";
	static const char path[] = "/home/u/.aws/sso/cache/"
				   "ee0bfd2552fbd840c02cc48b6e823320543c450f.json";
	static const char portal[] = "{\"roleCredentials\":{\"accessKeyId\":\"ASIASSO\","
				     "\"secretAccessKey\":\"" SK "s\",\"sessionToken\":\"" TOK "s\","
				     "\"expiration\":1440945360000}}";
	struct fixture x;

	/* A valid cached token: straight to GetRoleCredentials. */
	fx_init(&x);
	fake_setenv(&x.f, "HOME", "/home/u");
	fake_setenv(&x.f, "AWS_ENDPOINT_URL_SSO", "http://127.0.0.1:5/");
	fake_file(&x.f, path, "{\"startUrl\":\"https://corp/start\",\"region\":\"us-east-1\","
		  "\"accessToken\":\"" TOK "access\",\"expiresAt\":\"2015-08-30T20:00:00Z\"}");
	fake_reply(&x.f, 200, NULL, portal);
	T_EQ(fx_resolve(&x, "dev", cfg, NULL), 0);
	T_STREQ(x.c.provider, "sso");
	T_STREQ(x.c.access_key, "ASIASSO");
	T_EQ(x.c.expires_ms, 1440945360000LL);
	T_STREQ(x.c.source, "sso via profile dev");
	T_STREQ(x.f.req_url[0], "http://127.0.0.1:5/federation/credentials?account_id=111122223333"
				"&role_name=Triage");
	T_CONTAINS(x.f.req_headers[0], "x-amz-sso_bearer_token: " TOK "access\n");
	T_EQ(x.f.nwrote, 0);
	fx_release(&x);

	/* Expired with a refresh token: CreateToken, the cache rewritten (0600), then the portal. */
	fx_init(&x);
	fake_setenv(&x.f, "HOME", "/home/u");
	fake_setenv(&x.f, "AWS_ENDPOINT_URL_SSO", "http://127.0.0.1:5");
	fake_setenv(&x.f, "AWS_ENDPOINT_URL_SSO_OIDC", "http://127.0.0.1:6");
	fake_file(&x.f, path, "{\"startUrl\":\"https://corp/start\",\"region\":\"us-east-1\","
		  "\"accessToken\":\"" TOK "old\",\"expiresAt\":\"2015-08-30T12:00:00Z\","
		  "\"clientId\":\"cid\",\"clientSecret\":\"" SK "client\","
		  "\"registrationExpiresAt\":\"2099-01-01T00:00:00Z\","
		  "\"refreshToken\":\"" TOK "refresh\"}");
	fake_reply(&x.f, 200, NULL, "{\"accessToken\":\"" TOK "new\",\"expiresIn\":3600,"
		   "\"refreshToken\":\"" TOK "refresh2\",\"tokenType\":\"Bearer\"}");
	fake_reply(&x.f, 200, NULL, portal);
	T_EQ(fx_resolve(&x, "dev", cfg, NULL), 0);
	T_STREQ(x.c.access_key, "ASIASSO");
	T_STREQ(x.f.req_url[0], "http://127.0.0.1:6/token");
	T_CONTAINS(x.f.req_body[0], "\"grantType\":\"refresh_token\"");
	T_CONTAINS(x.f.req_body[0], "\"refreshToken\":\"" TOK "refresh\"");
	T_CONTAINS(x.f.req_headers[1], "x-amz-sso_bearer_token: " TOK "new\n");
	T_EQ(x.f.nwrote, 1);
	T_STREQ(x.f.wrote[0][0], path);
	T_EQ(x.f.wrote_mode[0], 0600);
	T_CONTAINS(x.f.wrote[0][1], "\"accessToken\":\t\"" TOK "new\"");
	T_CONTAINS(x.f.wrote[0][1], "\"expiresAt\":\t\"2015-08-30T13:36:00Z\"");
	T_CONTAINS(x.f.wrote[0][1], "\"refreshToken\":\t\"" TOK "refresh2\"");
	T_CONTAINS(x.f.wrote[0][1], "\"clientId\":\t\"cid\"");
	T_CONTAINS(x.trace.buf, "sso: token refreshed");
	fx_release(&x);

	/* An expiresIn no lifetime has (1e300 s) is refused before it becomes a whole number. */
	fx_init(&x);
	fake_setenv(&x.f, "HOME", "/home/u");
	fake_setenv(&x.f, "AWS_ENDPOINT_URL_SSO", "http://127.0.0.1:5");
	fake_setenv(&x.f, "AWS_ENDPOINT_URL_SSO_OIDC", "http://127.0.0.1:6");
	fake_file(&x.f, path, "{\"startUrl\":\"https://corp/start\",\"region\":\"us-east-1\","
		  "\"accessToken\":\"" TOK "old\",\"expiresAt\":\"2015-08-30T12:00:00Z\","
		  "\"clientId\":\"cid\",\"clientSecret\":\"" SK "client\","
		  "\"registrationExpiresAt\":\"2099-01-01T00:00:00Z\","
		  "\"refreshToken\":\"" TOK "refresh\"}");
	fake_reply(&x.f, 200, NULL, "{\"accessToken\":\"" TOK "new\",\"expiresIn\":1e300}");
	T_EQ(fx_resolve(&x, "dev", cfg, NULL), -1);
	T_CONTAINS(x.e.msg, "returned expiresIn 1e+300, not a lifetime from 0 to 90 days");
	T_EQ(x.f.nwrote, 0);
	fx_release(&x);

	/* No cache: log in first. Legacy keys hash the start URL. */
	fx_init(&x);
	fake_setenv(&x.f, "HOME", "/home/u");
	T_EQ(fx_resolve(&x, "dev", cfg, NULL), -1);
	T_MSG(x.e.msg, "sso: no valid SSO token cached for profile 'dev' (/home/u/.aws/sso/cache/"
		       "ee0bfd2552fbd840c02cc48b6e823320543c450f.json); run `aws sso login "
		       "--profile dev`");
	T_EQ(x.e.code, HP_ERR_CREDS);
	fx_release(&x);

	fx_init(&x);
	fake_setenv(&x.f, "HOME", "/home/u");
	fake_file(&x.f, "/home/u/.aws/sso/cache/717f6b50ccf65f10839b090b78b6ff0786091a96.json",
		  "{\"accessToken\":\"" TOK "old\",\"expiresAt\":\"2015-08-30T12:00:00Z\"}");
	T_EQ(fx_resolve(&x, "old", "[profile old]\nsso_start_url = https://corp/start\n"
			"sso_region = us-east-1\nsso_account_id = 1\nsso_role_name = R\n", NULL), -1);
	T_CONTAINS(x.e.msg, "sso: the SSO token of profile 'old' has expired; run `aws sso login "
			    "--profile old`");
	T_EQ(x.f.nreq, 0);
	fx_release(&x);
}

/* The rules the CLI and botocore follow where hpnode once differed. */
static void t_cli_rules(void)
{
	static const char portal[] = "{\"roleCredentials\":{\"accessKeyId\":\"ASIASSO\","
				     "\"secretAccessKey\":\"" SK "s\",\"sessionToken\":\"" TOK "s\","
				     "\"expiration\":1440945360000}}";
	static const char sess[] = "/home/u/.aws/sso/cache/"
				   "ee0bfd2552fbd840c02cc48b6e823320543c450f.json";
	struct fixture x;

	/* A source profile with keys and its own role_arn gives its keys: one AssumeRole. */
	fx_init(&x);
	fake_setenv(&x.f, "AWS_REGION", "us-west-2");
	fake_setenv(&x.f, "AWS_ENDPOINT_URL_STS", "http://127.0.0.1:9");
	fake_reply(&x.f, 200, NULL, STS_REPLY("AssumeRole", "ASIAOPS"));
	T_EQ(fx_resolve(&x, "ops", "[profile ops]\nrole_arn = arn:aws:iam::1:role/ops\n"
			"source_profile = base\n[profile base]\nrole_arn = arn:aws:iam::1:role/b\n"
			"source_profile = other\n",
			"[base]\naws_access_key_id = AKIDBASE\naws_secret_access_key = " SK "\n"), 0);
	T_STREQ(x.c.access_key, "ASIAOPS");
	T_EQ(x.f.nreq, 1);
	T_CONTAINS(x.f.req_headers[0], "Credential=AKIDBASE/");
	T_CONTAINS(x.f.req_body[0], "RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fops");
	fx_release(&x);

	/* Settings in the credentials file count: role_arn and source_profile there. */
	fx_init(&x);
	fake_setenv(&x.f, "AWS_REGION", "us-west-2");
	fake_setenv(&x.f, "AWS_ENDPOINT_URL_STS", "http://127.0.0.1:9");
	fake_reply(&x.f, 200, NULL, STS_REPLY("AssumeRole", "ASIAOPS"));
	T_EQ(fx_resolve(&x, "ops", "[profile base]\naws_access_key_id = AKIDCFG\n"
			"aws_secret_access_key = " SK "\n",
			"[ops]\nrole_arn = arn:aws:iam::1:role/ops\nsource_profile = base\n"), 0);
	T_STREQ(x.c.provider, "assume-role");
	T_CONTAINS(x.f.req_headers[0], "Credential=AKIDCFG/");
	fx_release(&x);

	/* Each web-identity variable beats the profile's setting on its own. */
	fx_init(&x);
	fake_setenv(&x.f, "AWS_REGION", "us-west-2");
	fake_setenv(&x.f, "AWS_PROFILE", "ci");
	fake_setenv(&x.f, "AWS_ROLE_ARN", "arn:aws:iam::1:role/env");
	fake_file(&x.f, "/tok", "eyJprofile\n");
	fake_reply(&x.f, 200, NULL, STS_REPLY("AssumeRoleWithWebIdentity", "ASIAWEB"));
	T_EQ(fx_resolve(&x, NULL, "[profile ci]\nweb_identity_token_file = /tok\n"
			"role_arn = arn:aws:iam::1:role/prof\nrole_session_name = prof\n", NULL), 0);
	T_CONTAINS(x.f.req_body[0], "RoleArn=arn%3Aaws%3Aiam%3A%3A1%3Arole%2Fenv&"
				    "RoleSessionName=prof&WebIdentityToken=eyJprofile");
	fx_release(&x);

	/* Only sso_session, no account or role: not SSO; the credentials file's keys answer. */
	fx_init(&x);
	T_EQ(fx_resolve(&x, "dev", "[profile dev]\nsso_session = corp\n[sso-session corp]\n"
			"sso_start_url = https://corp/start\nsso_region = us-east-1\n", creds_file), 0);
	T_STREQ(x.c.provider, "shared-credentials-file");
	fx_release(&x);

	/* A token with 30 s left is still used, and the portal comes from [services]. */
	fx_init(&x);
	fake_setenv(&x.f, "HOME", "/home/u");
	fake_file(&x.f, "/home/u/.aws/sso/cache/717f6b50ccf65f10839b090b78b6ff0786091a96.json",
		  "{\"accessToken\":\"" TOK "last\",\"expiresAt\":\"2015-08-30T12:36:30Z\"}");
	fake_reply(&x.f, 200, NULL, portal);
	T_EQ(fx_resolve(&x, "old", "[profile old]\nsso_start_url = https://corp/start\n"
			"sso_region = us-east-1\nsso_account_id = 1\nsso_role_name = R\n"
			"services = s\n[services s]\nsso =\n  endpoint_url = http://127.0.0.1:7/p/\n",
			NULL), 0);
	T_STREQ(x.c.access_key, "ASIASSO");
	T_STREQ(x.f.req_url[0], "http://127.0.0.1:7/p/federation/credentials?account_id=1"
				"&role_name=R");
	T_CONTAINS(x.f.req_headers[0], "x-amz-sso_bearer_token: " TOK "last\n");
	fx_release(&x);

	/* In the refresh window a failed refresh keeps the token while it lasts. */
	fx_init(&x);
	fake_setenv(&x.f, "HOME", "/home/u");
	fake_setenv(&x.f, "AWS_ENDPOINT_URL", "http://127.0.0.1:5");
	fake_file(&x.f, sess, "{\"accessToken\":\"" TOK "old\",\"expiresAt\":\"2015-08-30T12:40:00Z\","
		  "\"clientId\":\"cid\",\"clientSecret\":\"" SK "c\",\"registrationExpiresAt\":"
		  "\"2099-01-01T00:00:00Z\",\"refreshToken\":\"" TOK "r\"}");
	fake_reply(&x.f, 400, NULL, "{\"error\":\"invalid_grant\"}");
	fake_reply(&x.f, 200, NULL, portal);
	if (fx_resolve(&x, "dev", "[profile dev]\nsso_session = corp\nsso_account_id = 1\n"
		       "sso_role_name = R\n[sso-session corp]\nsso_start_url = https://corp/start\n"
		       "sso_region = us-east-1\n", NULL))
		T_FAILF("%s", x.e.msg);
	T_STREQ(x.f.req_url[0], "http://127.0.0.1:5/token");
	T_CONTAINS(x.f.req_headers[x.f.nreq - 1], "x-amz-sso_bearer_token: " TOK "old\n");
	T_CONTAINS(x.trace.buf, "sso: refresh failed, the cached token is used until it expires");
	fx_release(&x);

	/*
	 * An sso_session without its section (or without its start URL and
	 * region) fails every command, as botocore's token provider does, even
	 * when the environment has keys.
	 */
	fx_init(&x);
	set_env_keys(&x);
	fake_file(&x.f, "/cfg", "[profile p]\nsso_session = corp\n[sso-session lab]\n"
		  "sso_region = us-east-1\n");
	T_EQ(hp_profile_load(&x.f.sys, "p", &x.p, &x.e), -1);
	T_EQ(x.e.code, HP_ERR_CONFIG);
	T_CONTAINS(x.e.msg, "profile 'p' names sso_session 'corp', but '/cfg' has no "
			    "[sso-session corp] section");
	fx_release(&x);
	fx_init(&x);
	fake_file(&x.f, "/cfg", "[profile p]\nsso_session = lab\n[sso-session lab]\n"
		  "sso_region = us-east-1\n");
	T_EQ(hp_profile_load(&x.f.sys, "p", &x.p, &x.e), -1);
	T_CONTAINS(x.e.msg, "[sso-session lab] of profile 'p' needs sso_start_url and sso_region");
	fx_release(&x);

	/* A value set differently in the profile and its sso-session is an error. */
	fx_init(&x);
	T_EQ(fx_resolve(&x, "dev", "[profile dev]\nsso_session = corp\nsso_account_id = 1\n"
			"sso_role_name = R\nsso_region = eu-west-1\n[sso-session corp]\n"
			"sso_start_url = https://corp/start\nsso_region = us-east-1\n", NULL), -1);
	T_CONTAINS(x.e.msg, "sso: profile 'dev' sets sso_region to 'eu-west-1' but its "
			    "sso-session 'corp' sets it to 'us-east-1'");
	fx_release(&x);
}

/* ---- refresh ---- */

static void t_refresh(void)
{
	struct fixture x;
	struct hp_creds_provider *cp = NULL;
	struct hp_creds_env env;
	struct hp_creds got;
	static const char later[] =
		"{\"Code\":\"Success\",\"AccessKeyId\":\"ASIAIMDS2\",\"SecretAccessKey\":\"" SK "2\","
		"\"Token\":\"" TOK "2\",\"Expiration\":\"2015-08-30T12:56:00Z\"}";

	fx_init(&x);
	fake_setenv(&x.f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:7");
	T_EQ(hp_profile_load(&x.f.sys, NULL, &x.p, &x.e), 0);
	fake_reply(&x.f, 200, NULL, "tok");
	fake_reply(&x.f, 200, NULL, "role");
	fake_reply(&x.f, 200, NULL, imds_creds);  /* 10 minutes: refreshed after 5 */
	memset(&env, 0, sizeof(env));
	T_EQ(hp_creds_provider_open(&x.f.sys, &x.p, &env, &x.trace, &cp, &x.e), 0);
	T_STREQ(hp_creds_provider_desc(cp), "instance metadata (role role)");
	T_CONTAINS(x.trace.buf, "credentials: instance metadata (role role), valid until "
				"2015-08-30T12:46:00Z");
	x.f.now_ms += 4 * 60000;
	T_EQ(hp_creds_provider_get(cp, 0, &got, &x.e), 0);
	T_STREQ(got.access_key, "ASIAIMDS");
	hp_creds_release(&got);
	T_EQ(x.f.nreq, 3);
	/* Inside the window: asked again. */
	x.f.now_ms += 2 * 60000;
	fake_reply(&x.f, 200, NULL, "tok");
	fake_reply(&x.f, 200, NULL, "role");
	fake_reply(&x.f, 200, NULL, later);
	T_EQ(hp_creds_provider_get(cp, 0, &got, &x.e), 0);
	T_STREQ(got.access_key, "ASIAIMDS2");
	T_STREQ(got.provider, "imds");
	T_EQ(hp_creds_provider_refreshes(cp), 1);
	hp_creds_release(&got);
	/* The next refresh fails: the old keys serve until they expire, then an error. */
	x.f.now_ms += 10 * 60000;
	fake_reply(&x.f, 500, NULL, "");
	fake_reply(&x.f, 500, NULL, "");
	T_EQ(hp_creds_provider_get(cp, 0, &got, &x.e), 0);
	T_STREQ(got.access_key, "ASIAIMDS2");
	hp_creds_release(&got);
	x.f.now_ms += 5 * 60000;
	fake_reply(&x.f, 500, NULL, "");
	fake_reply(&x.f, 500, NULL, "");
	T_EQ(hp_creds_provider_get(cp, 0, &got, &x.e), -1);
	T_EQ(x.e.code, HP_ERR_CREDS);
	T_CONTAINS(x.e.msg, "imds: the credentials (instance metadata (role role), profile "
			    "'default') expired at 2015-08-30T12:56:00Z and could not be refreshed");
	T_NOT_CONTAINS(x.e.msg, SK);
	T_NOT_CONTAINS(x.e.msg, TOK);
	T_ASSERT(got.access_key == NULL);
	hp_creds_provider_close(cp);
	fx_release(&x);

	/* Static keys never expire and are never asked again. */
	fx_init(&x);
	set_env_keys(&x);
	T_EQ(hp_profile_load(&x.f.sys, NULL, &x.p, &x.e), 0);
	T_EQ(hp_creds_provider_open(&x.f.sys, &x.p, NULL, NULL, &cp, &x.e), 0);
	x.f.now_ms += 86400000LL * 365;
	T_EQ(hp_creds_provider_get(cp, 0, &got, &x.e), 0);
	T_STREQ(got.access_key, "AKIDENV");
	T_STREQ(hp_creds_provider_desc(cp), "environment variables");
	hp_creds_release(&got);
	hp_creds_provider_close(cp);
	fx_release(&x);
}

static void t_nobody_answered(void)
{
	struct fixture x;

	fx_init(&x);
	fake_setenv(&x.f, "AWS_PROFILE", "dev");
	fake_setenv(&x.f, "AWS_EC2_METADATA_DISABLED", "true");
	T_EQ(fx_resolve(&x, NULL, "[profile dev]\nregion = us-west-2\n", NULL), -1);
	T_EQ(x.e.code, HP_ERR_NO_CREDS);
	T_CONTAINS(x.e.msg, "no AWS credentials found for profile 'dev' (tried environment, "
			    "assume-role, web-identity, sso, shared-credentials-file, "
			    "credential-process, config-file, container, imds)");
	T_CONTAINS(x.e.msg, "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
	T_STREQ(x.trace.buf,
		"environment: AWS_ACCESS_KEY_ID not set\n"
		"assume-role: profile 'dev' has no role_arn\n"
		"web-identity: AWS_WEB_IDENTITY_TOKEN_FILE not set and profile 'dev' has no "
		"web_identity_token_file\n"
		"sso: profile 'dev' has no sso_account_id or sso_role_name\n"
		"shared-credentials-file: no [dev] section in the credentials file\n"
		"credential-process: profile 'dev' has no credential_process\n"
		"config-file: no aws_access_key_id in profile 'dev' of the config file\n"
		"container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and "
		"AWS_CONTAINER_CREDENTIALS_FULL_URI not set\n"
		"imds: AWS_EC2_METADATA_DISABLED is true\n");
	fx_release(&x);

	/* A NULL trace is allowed; IMDS that does not answer is skipped, not an error. */
	fx_init(&x);
	T_EQ(hp_profile_load(&x.f.sys, NULL, &x.p, &x.e), 0);
	T_EQ(hp_creds_resolve(&x.f.sys, &x.p, &x.c, NULL, &x.e), -1);
	T_EQ(x.e.code, HP_ERR_NO_CREDS);
	T_CONTAINS(x.e.msg, "container, imds)");
	/* The token PUT was tried twice (one retry), then nothing else. */
	T_EQ(x.f.nreq, 2);
	T_STREQ(x.f.req_method[0], "PUT");
	T_STREQ(x.f.req_url[0], "http://169.254.169.254/latest/api/token");
	fx_release(&x);
}

static void t_release_wipes(void)
{
	struct fixture x;

	fx_init(&x);
	set_env_keys(&x);
	fake_setenv(&x.f, "AWS_SESSION_TOKEN", TOK);
	T_EQ(fx_resolve(&x, NULL, NULL, NULL), 0);
	hp_creds_release(&x.c);
	T_ASSERT(x.c.access_key == NULL && x.c.secret_key == NULL && x.c.session_token == NULL);
	T_EQ(x.c.provider[0], 0);
	/* A second release is harmless. */
	fx_release(&x);
}

/*
 * Many threads signing at once: an hp_sys whose clock moves 100 ms at every
 * reading and whose metadata service mints keys that live 60 s. Every copy
 * handed out must still be valid, and keys are minted only when due.
 */
struct tsys {
	struct hp_sys sys;
	pthread_mutex_t mu;
	int64_t now;
	unsigned minted;
	int in_http, overlap;
};

static int ts_http(struct hp_sys *s, const struct hp_http_req *req, struct hp_http_resp *resp)
{
	struct tsys *t = s->impl;
	struct tm tm;
	time_t exp;
	char when[32];

	pthread_mutex_lock(&t->mu);
	if (t->in_http++)
		t->overlap = 1;
	resp->status = 200;
	if (hp_ends_with(req->url, "/api/token")) {
		hp_buf_puts(&resp->body, "tok");
	} else if (hp_ends_with(req->url, "/security-credentials/")) {
		hp_buf_puts(&resp->body, "role");
	} else {
		exp = (time_t)(t->now / 1000 + 60);
		gmtime_r(&exp, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		hp_buf_printf(&resp->body, "{\"Code\":\"Success\",\"AccessKeyId\":\"AK%u\","
			      "\"SecretAccessKey\":\"" SK "\",\"Token\":\"" TOK "\","
			      "\"Expiration\":\"%s\"}", t->minted++, when);
	}
	t->in_http--;
	pthread_mutex_unlock(&t->mu);
	return 0;
}

static int64_t ts_now(struct hp_sys *s)
{
	struct tsys *t = s->impl;
	int64_t v;

	pthread_mutex_lock(&t->mu);
	t->now += 100;
	v = t->now;
	pthread_mutex_unlock(&t->mu);
	return v;
}

static const char *ts_getenv(struct hp_sys *s, const char *name)
{
	(void)s;
	return !strcmp(name, "AWS_EC2_METADATA_SERVICE_ENDPOINT") ? "http://127.0.0.1:7" : NULL;
}

static int ts_read(struct hp_sys *s, const char *path, struct hp_buf *out)
{
	(void)s;
	(void)path;
	(void)out;
	errno = ENOENT;
	return -1;
}

struct worker {
	struct hp_creds_provider *cp;
	struct tsys *t;
	int bad;
};

static void *ts_work(void *arg)
{
	struct worker *w = arg;
	int i;

	for (i = 0; i < 300; i++) {
		struct hp_error e = HP_ERROR_INIT;
		struct hp_creds c;
		/*
		 * The other threads move the clock too, so the test is against the
		 * time before the call: a copy is handed out only with more than
		 * the 1 s signing margin left at the moment of the call.
		 */
		int64_t before = ts_now(&w->t->sys);

		if (hp_creds_provider_get(w->cp, 0, &c, &e)) {
			w->bad++;
			continue;
		}
		if (c.expires_ms <= before + 1000 || !c.access_key || strncmp(c.access_key, "AK", 2))
			w->bad++;
		hp_creds_release(&c);
	}
	return NULL;
}

static void t_refresh_threads(void)
{
	struct tsys t;
	struct hp_profile p;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_creds_provider *cp = NULL;
	struct worker w[8];
	pthread_t tid[8];
	int i, bad = 0;

	memset(&t, 0, sizeof(t));
	memset(&p, 0, sizeof(p));
	hp_strlcpy(p.name, "default", sizeof(p.name));
	pthread_mutex_init(&t.mu, NULL);
	t.now = 1440938160000LL;
	t.sys.http = ts_http;
	t.sys.now_ms = ts_now;
	t.sys.monotonic_ms = ts_now;
	t.sys.getenv = ts_getenv;
	t.sys.read_file = ts_read;
	t.sys.impl = &t;
	T_EQ(hp_creds_provider_open(&t.sys, &p, NULL, NULL, &cp, &e), 0);
	for (i = 0; i < 8; i++) {
		w[i].cp = cp;
		w[i].t = &t;
		w[i].bad = 0;
		T_EQ(pthread_create(&tid[i], NULL, ts_work, &w[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(tid[i], NULL);
		bad += w[i].bad;
	}
	T_EQ(bad, 0);
	T_EQ(t.overlap, 0);
	/* 2,400 reads x 200 ms of fake time: 480 s, a refresh every 30 s or so. */
	if (t.minted < 10 || t.minted > 30)
		T_FAILF("%u keys minted", t.minted);
	T_EQ(hp_creds_provider_refreshes(cp), t.minted - 1);
	hp_creds_provider_close(cp);
	pthread_mutex_destroy(&t.mu);
}

/* ---- region ---- */

static void t_region_order(void)
{
	static const struct {
		const char *flag, *env_region, *env_default, *config;
		const char *want, *source;
	} cases[] = {
		{ "eu-west-1", "us-east-1", "us-east-2", "[default]\nregion = us-west-1\n",
		  "eu-west-1", "--region" },
		{ NULL, "us-east-1", "us-east-2", "[default]\nregion = us-west-1\n", "us-east-1",
		  "AWS_REGION" },
		{ NULL, NULL, "us-east-2", "[default]\nregion = us-west-1\n", "us-east-2",
		  "AWS_DEFAULT_REGION" },
		{ NULL, "", "us-east-2", NULL, "us-east-2", "AWS_DEFAULT_REGION" },
		{ NULL, NULL, NULL, "[default]\nregion = us-west-1\n", "us-west-1", "config file" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fake_sys f;
		struct hp_profile p;
		struct hp_error e = HP_ERROR_INIT;
		char region[32];
		const char *src = NULL;

		fake_sys_init(&f);
		fake_setenv(&f, "AWS_CONFIG_FILE", "/cfg");
		if (cases[i].config)
			fake_file(&f, "/cfg", cases[i].config);
		if (cases[i].env_region)
			fake_setenv(&f, "AWS_REGION", cases[i].env_region);
		if (cases[i].env_default)
			fake_setenv(&f, "AWS_DEFAULT_REGION", cases[i].env_default);
		T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), 0);
		if (hp_region_resolve(&f.sys, &p, cases[i].flag, region, sizeof(region), &src, &e))
			T_FAILF("case %zu: %s", i, e.msg);
		T_STREQ(region, cases[i].want);
		T_STREQ(src, cases[i].source);
		hp_profile_release(&p);
		fake_sys_release(&f);
	}
}

static void t_region_validation(void)
{
	static const struct {
		const char *region;
		int ok;
	} cases[] = {
		{ "us-west-2", 1 }, { "us-gov-west-1", 1 }, { "cn-northwest-1", 1 },
		{ "ap-southeast-4", 1 }, { "il-central-1", 1 }, { "us-iso-east-1", 1 },
		{ "eu-central-12", 1 },
		{ "US-WEST-2", 0 }, { "us-west", 0 }, { "us_west_2", 0 }, { "uswest2", 0 },
		{ "us-west-2a", 0 }, { "u-west-2", 0 }, { "usa-west-2", 0 },
		{ "us-gov-west-east-1", 0 }, { "us--west-2", 0 }, { "us-west-", 0 },
		{ " us-west-2", 0 }, { "us-west-2 ", 0 }, { "", 0 }, { "us-2", 0 },
		{ "us-west-2/../x", 0 },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fake_sys f;
		struct hp_error e = HP_ERROR_INIT;
		char region[32];
		const char *src = NULL;
		int rc;

		fake_sys_init(&f);
		rc = hp_region_resolve(&f.sys, NULL, cases[i].region, region, sizeof(region), &src, &e);
		if (cases[i].ok) {
			if (rc)
				T_FAILF("'%s' rejected: %s", cases[i].region, e.msg);
			T_STREQ(region, cases[i].region);
		} else {
			if (!rc)
				T_FAILF("'%s' accepted", cases[i].region);
			T_EQ(e.code, HP_ERR_USAGE);
			T_CONTAINS(e.msg, "from --region: expected a name like 'us-west-2'");
		}
		fake_sys_release(&f);
	}
}

static void t_region_errors(void)
{
	struct fake_sys f;
	struct hp_profile p;
	struct hp_error e = HP_ERROR_INIT;
	char region[32], tiny[6];

	fake_sys_init(&f);
	fake_setenv(&f, "HOME", "/h");
	T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), 0);
	T_EQ(hp_region_resolve(&f.sys, &p, NULL, region, sizeof(region), NULL, &e), -1);
	T_EQ(e.code, HP_ERR_NO_REGION);
	T_MSG(e.msg, "no AWS region configured: pass --region, set AWS_REGION, or set 'region' "
		       "in profile 'default' of the config file");

	hp_error_clear(&e);
	fake_setenv(&f, "AWS_REGION", "Oregon");
	T_EQ(hp_region_resolve(&f.sys, &p, NULL, region, sizeof(region), NULL, &e), -1);
	T_EQ(e.code, HP_ERR_USAGE);
	T_MSG(e.msg, "invalid region 'Oregon' from AWS_REGION: expected a name like 'us-west-2'");

	hp_error_clear(&e);
	T_EQ(hp_region_resolve(&f.sys, &p, "us-west-2", tiny, sizeof(tiny), NULL, &e), -1);
	T_EQ(e.code, HP_ERR_USAGE);
	hp_profile_release(&p);
	fake_sys_release(&f);
}

T_MAIN(T(t_chain_order), T(t_trace_lines), T(t_env_tokens), T(t_env_expiration), T(t_env_partial),
       T(t_file_keys), T(t_process_split), T(t_process_split_errors), T(t_process_answers),
       T(t_process_errors), T(t_config_errors), T(t_assume_role), T(t_web_identity),
       T(t_container), T(t_imds), T(t_sso), T(t_cli_rules), T(t_refresh),
       T(t_refresh_threads), T(t_nobody_answered), T(t_release_wipes),
       T(t_region_order), T(t_region_validation), T(t_region_errors))
