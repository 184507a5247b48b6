/*
 * The credential chain (order, every error, no secret in any message) and
 * region resolution.
 */
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "hp/creds.h"
#include "t.h"

/* Every secret in these tests carries one of these markers. */
#define SK "SeCrEt"
#define TOK "ToKeN"

/*
 * Exact match on an error message: containment plus equal length (T_STREQ
 * on the 1024-byte message array trips -Wformat-truncation).
 */
#define T_MSG(msg, want)                                               \
	do {                                                           \
		T_CONTAINS(msg, want);                                 \
		T_EQ(strlen(msg), strlen(want));                       \
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
		  "sso_session = corp\n", NULL, "environment", "AKIDENV" },
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
			T_EQ(x.e.code, HP_ERR_CONFIG);
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
		T_EQ(x.e.code, HP_ERR_CONFIG);
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
			T_EQ(x.e.code, HP_ERR_CONFIG);
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
			T_EQ(x.e.code, HP_ERR_CONFIG);
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
		T_EQ(x.e.code, HP_ERR_CONFIG);
		T_MSG(x.e.msg, cases[i].msg);
		T_CONTAINS(x.trace.buf, "credential-process: failed\n");
		fx_release(&x);
	}
}

/* ---- providers hpnode does not implement ---- */

static void t_unsupported(void)
{
	static const struct {
		const char *config;
		const struct env_pair env[2];
		const char *msg;
	} cases[] = {
		{ "[profile p]\nsso_session = corp\nsso_account_id = 1\n", { { NULL, NULL } },
		  "profile 'p' uses SSO (sso_*), which hpnode does not support yet; export "
		  "credentials with 'aws configure export-credentials --profile p --format env'" },
		{ "[profile p]\nsso_start_url = https://x/start\n", { { NULL, NULL } },
		  "profile 'p' uses SSO (sso_*)" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = q\n",
		  { { NULL, NULL } },
		  "profile 'p' assumes a role (role_arn), which hpnode does not support yet" },
		{ "[profile p]\nrole_arn = arn:aws:iam::1:role/r\nweb_identity_token_file = /t\n",
		  { { NULL, NULL } }, "profile 'p' uses web identity (web_identity_token_file)" },
		{ "[profile p]\n", { { "AWS_WEB_IDENTITY_TOKEN_FILE", "/t" },
				     { "AWS_ROLE_ARN", "arn:aws:iam::1:role/r" } },
		  "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are set (web identity), which hpnode "
		  "does not support yet; export credentials with 'aws configure export-credentials "
		  "--profile p --format env'" },
		{ "[profile p]\nlogin_session = arn:aws:iam::1:user/u\n", { { NULL, NULL } },
		  "profile 'p' uses an 'aws login' session (login_session)" },
	};
	size_t i, k;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fixture x;

		fx_init(&x);
		for (k = 0; k < 2 && cases[i].env[k].name; k++)
			fake_setenv(&x.f, cases[i].env[k].name, cases[i].env[k].value);
		/*
		 * These come before the credentials file in the chain, except
		 * login, which comes after it.
		 */
		if (fx_resolve(&x, "p", cases[i].config,
			       strstr(cases[i].config, "login_session") ? "[p]\n" :
			       "[p]\naws_access_key_id = A\naws_secret_access_key = " SK "\n") != -1)
			T_FAILF("case %zu answered from %s", i, x.c.provider);
		T_EQ(x.e.code, HP_ERR_CONFIG);
		T_CONTAINS(x.e.msg, cases[i].msg);
		fx_release(&x);
	}
}

static void t_nobody_answered(void)
{
	struct fixture x;

	fx_init(&x);
	fake_setenv(&x.f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://169.254.170.23/v1/c");
	fake_setenv(&x.f, "AWS_PROFILE", "dev");
	T_EQ(fx_resolve(&x, NULL, "[profile dev]\nregion = us-west-2\n", NULL), -1);
	T_EQ(x.e.code, HP_ERR_NO_CREDS);
	T_CONTAINS(x.e.msg, "no AWS credentials found for profile 'dev' (tried environment, "
			    "shared-credentials-file, credential-process, config-file, container)");
	T_CONTAINS(x.e.msg, "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
	T_STREQ(x.trace.buf,
		"environment: AWS_ACCESS_KEY_ID not set\n"
		"shared-credentials-file: no [dev] section in the credentials file\n"
		"credential-process: profile 'dev' has no credential_process\n"
		"config-file: no aws_access_key_id in profile 'dev' of the config file\n"
		"container: AWS_CONTAINER_CREDENTIALS_FULL_URI is set, but container credentials "
		"are not supported yet\n");
	fx_release(&x);

	/* Unused rows stay out of the trace; a NULL trace is allowed. */
	fx_init(&x);
	T_EQ(hp_profile_load(&x.f.sys, NULL, &x.p, &x.e), 0);
	T_EQ(hp_creds_resolve(&x.f.sys, &x.p, &x.c, NULL, &x.e), -1);
	T_CONTAINS(x.e.msg, "(tried environment, shared-credentials-file, credential-process, "
			    "config-file)");
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
       T(t_process_errors), T(t_unsupported), T(t_nobody_answered), T(t_release_wipes),
       T(t_region_order), T(t_region_validation), T(t_region_errors))
