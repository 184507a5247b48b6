/*
 * INI parsing of the shared AWS files and profile selection.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "hp/profile.h"
#include "t.h"

static int parse(const char *text, struct hp_ini *ini, struct hp_error *e)
{
	hp_error_clear(e);
	return hp_ini_parse(text, strlen(text), ini, e);
}

static void t_ini_values(void)
{
	static const char text[] =
		"# leading comment\n"
		"; another\n"
		"[default]\n"
		"Region = us-west-2\n"
		"output=json\n"
		"   # indented comment\n"
		"credential_process = /opt/tool  --flag \"a b\"   \n"
		"note = keep # this is not a comment\n"
		"colon: yes\n"
		"url = https://x/?a=b:c\n"
		"empty =\n"
		"\n"
		"[profile   dev]\n"
		"region = eu-west-1\n"
		"s3 =\n"
		"  max_concurrent_requests = 10\n"
		"  # a comment inside the block\n"
		"\n"
		"  addressing_style = path\n"
		"[services local]\n"
		"sagemaker =\n"
		"\tendpoint_url = http://127.0.0.1:5000\n"
		"cloudwatch_logs =\n"
		"  endpoint_url = http://127.0.0.1:5001/\n"
		"[profile \"quoted name\"]\n"
		"multi = first\n"
		"   second line\n"
		"[empty] ; trailing text after the header\n";
	static const struct {
		const char *section, *key, *value;
	} want[] = {
		{ "default", "region", "us-west-2" },
		{ "default", "output", "json" },
		{ "default", "credential_process", "/opt/tool  --flag \"a b\"" },
		{ "default", "note", "keep # this is not a comment" },
		{ "default", "colon", "yes" },
		{ "default", "url", "https://x/?a=b:c" },
		{ "default", "empty", "" },
		{ "profile dev", "region", "eu-west-1" },
		{ "profile dev", "s3.max_concurrent_requests", "10" },
		{ "profile dev", "s3.addressing_style", "path" },
		{ "services local", "sagemaker.endpoint_url", "http://127.0.0.1:5000" },
		{ "services local", "cloudwatch_logs.endpoint_url", "http://127.0.0.1:5001/" },
		{ "profile quoted name", "multi", "first\nsecond line" },
	};
	struct hp_ini ini;
	struct hp_error e = HP_ERROR_INIT;
	size_t i;

	T_EQ(parse(text, &ini, &e), 0);
	for (i = 0; i < HP_ARRAY_LEN(want); i++)
		T_STREQ(hp_ini_get(&ini, want[i].section, want[i].key), want[i].value);
	T_ASSERT(hp_ini_get(&ini, "default", "Region") == NULL);
	/* A block's parent is not a value of its own. */
	T_ASSERT(hp_ini_get(&ini, "profile dev", "s3") == NULL);
	T_ASSERT(hp_ini_get(&ini, "services local", "sagemaker") == NULL);
	T_ASSERT(hp_ini_has_section(&ini, "empty"));
	T_ASSERT(hp_ini_has_section(&ini, "profile dev"));
	T_ASSERT(!hp_ini_has_section(&ini, "profile   dev"));
	T_ASSERT(!hp_ini_has_section(&ini, "nope"));
	hp_ini_release(&ini);
	T_EQ(ini.n, 0);
}

static void t_ini_line_endings(void)
{
	static const char text[] = "\xef\xbb\xbf[default]\r\nregion = us-east-1\r\n"
				   "services = s\r\n[services s]\r\nsts =\r\n  endpoint_url = http://h\r\n";
	struct hp_ini ini;
	struct hp_error e = HP_ERROR_INIT;

	T_EQ(parse(text, &ini, &e), 0);
	T_STREQ(hp_ini_get(&ini, "default", "region"), "us-east-1");
	T_STREQ(hp_ini_get(&ini, "default", "services"), "s");
	T_STREQ(hp_ini_get(&ini, "services s", "sts.endpoint_url"), "http://h");
	hp_ini_release(&ini);
}

static void t_ini_malformed(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "region = us-west-2\n", "line 1: text before the first [section]" },
		{ "[default]\nregion = x\njunk line\n", "line 3: expected 'name = value'" },
		{ "[default\n", "line 1: section header has no closing ']'" },
		{ "# c\n[  ]\n", "line 2: empty section name" },
		{ "[a]\nk = 1\n[b]\n[a]\n", "line 4: section 'a' appears twice" },
		{ "[a]\nk = 1\nK = 2\n", "line 3: key 'k' appears twice in section 'a'" },
		{ "[a]\n = 2\n", "line 2: empty key" },
		{ "[services x]\nsagemaker =\n  endpoint_url\n", "line 3: expected 'name = value' "
								   "under 'sagemaker'" },
		{ "[services x]\nsagemaker =\n  = v\n", "line 3: empty key under 'sagemaker'" },
	};
	struct hp_ini ini;
	struct hp_error e = HP_ERROR_INIT;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		if (parse(cases[i].text, &ini, &e) != -1)
			T_FAILF("case %zu parsed", i);
		T_EQ(e.code, HP_ERR_CONFIG);
		T_STREQ(e.msg, cases[i].want);
		T_EQ(ini.n, 0);
	}
	/* A NUL inside the text is not silently cut short. */
	hp_error_clear(&e);
	T_EQ(hp_ini_parse("[a]\nk = v\0x\n", 11, &ini, &e), -1);
	T_STREQ(e.msg, "line 2: NUL byte");
}

static void t_ini_no_value_leaks_into_errors(void)
{
	struct hp_ini ini;
	struct hp_error e = HP_ERROR_INIT;

	T_EQ(parse("[dev]\naws_secret_access_key = s3cr3t\ns3cr3tline\n", &ini, &e), -1);
	T_NOT_CONTAINS(e.msg, "s3cr3t");
}

/* ---- hp_profile_load ---- */

static const char config_text[] =
	"[default]\n"
	"region = us-east-1\n"
	"[profile dev]\n"
	"region = eu-west-1\n"
	"[profile envdef]\n"
	"region = ap-south-1\n"
	"[profile envprof]\n"
	"region = sa-east-1\n"
	"[stray]\n"
	"region = ca-central-1\n";

static const char creds_text[] =
	"[default]\n"
	"aws_access_key_id = AKIDDEFAULT\n"
	"[ci]\n"
	"aws_access_key_id = AKIDCI\n";

static void home_files(struct fake_sys *f)
{
	fake_setenv(f, "HOME", "/home/u");
	fake_file(f, "/home/u/.aws/config", config_text);
	fake_file(f, "/home/u/.aws/credentials", creds_text);
}

static void t_profile_selection(void)
{
	static const struct {
		const char *flag, *def_env, *prof_env;
		const char *name, *region;
		int explicit_profile;
	} cases[] = {
		{ NULL, NULL, NULL, "default", "us-east-1", 0 },
		{ "dev", NULL, NULL, "dev", "eu-west-1", 1 },
		{ "dev", "envdef", "envprof", "dev", "eu-west-1", 1 },
		{ NULL, NULL, "envprof", "envprof", "sa-east-1", 0 },
		/* The CLI reads AWS_PROFILE first. */
		{ NULL, "envdef", "envprof", "envprof", "sa-east-1", 0 },
		{ NULL, "envdef", NULL, "envdef", "ap-south-1", 0 },
		{ NULL, "", "envprof", "envprof", "sa-east-1", 0 },
		/* A profile only in the credentials file exists. */
		{ "ci", NULL, NULL, "ci", NULL, 1 },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct fake_sys f;
		struct hp_profile p;
		struct hp_error e = HP_ERROR_INIT;

		fake_sys_init(&f);
		home_files(&f);
		if (cases[i].def_env)
			fake_setenv(&f, "AWS_DEFAULT_PROFILE", cases[i].def_env);
		if (cases[i].prof_env)
			fake_setenv(&f, "AWS_PROFILE", cases[i].prof_env);
		if (hp_profile_load(&f.sys, cases[i].flag, &p, &e))
			T_FAILF("case %zu: %s", i, e.msg);
		T_STREQ(p.name, cases[i].name);
		T_EQ(p.explicit_profile, cases[i].explicit_profile);
		if (cases[i].region)
			T_STREQ(hp_profile_config(&p, "region"), cases[i].region);
		else
			T_ASSERT(hp_profile_config(&p, "region") == NULL);
		hp_profile_release(&p);
		fake_sys_release(&f);
	}
}

static void t_profile_sections(void)
{
	struct fake_sys f;
	struct hp_profile p;
	struct hp_error e = HP_ERROR_INIT;

	fake_sys_init(&f);
	home_files(&f);
	T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), 0);
	T_STREQ(hp_profile_cred(&p, "aws_access_key_id"), "AKIDDEFAULT");
	hp_profile_release(&p);

	T_EQ(hp_profile_load(&f.sys, "ci", &p, &e), 0);
	T_STREQ(hp_profile_cred(&p, "aws_access_key_id"), "AKIDCI");
	hp_profile_release(&p);

	/* "[stray]" in the config file is not the profile "stray". */
	T_EQ(hp_profile_load(&f.sys, "stray", &p, &e), -1);
	T_EQ(e.code, HP_ERR_CONFIG);
	T_STREQ(e.msg, "profile 'stray' not found in '/home/u/.aws/config' or "
		       "'/home/u/.aws/credentials'");
	fake_sys_release(&f);
}

static void t_profile_default_spellings(void)
{
	struct fake_sys f;
	struct hp_profile p;
	struct hp_error e = HP_ERROR_INIT;

	fake_sys_init(&f);
	fake_setenv(&f, "AWS_CONFIG_FILE", "/c");
	fake_file(&f, "/c", "[profile default]\nregion = eu-north-1\n");
	T_EQ(hp_profile_load(&f.sys, "default", &p, &e), 0);
	T_STREQ(hp_profile_config(&p, "region"), "eu-north-1");
	hp_profile_release(&p);
	fake_sys_release(&f);

	fake_sys_init(&f);
	fake_setenv(&f, "AWS_CONFIG_FILE", "/c");
	fake_file(&f, "/c", "[default]\nregion = eu-west-3\n[profile default]\noutput = json\n");
	/* Both spellings at once: botocore keeps the last silently; hpnode refuses. */
	T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), -1);
	T_EQ(e.code, HP_ERR_CONFIG);
	T_CONTAINS(e.msg, "profile 'default' appears twice, as [default] and [profile default]");
	fake_sys_release(&f);
}

/* botocore's file rules: CR-only lines, $VAR and ~ in the path variables, the credentials file's settings. */
static void t_profile_botocore_files(void)
{
	struct fake_sys f;
	struct hp_profile p;
	struct hp_error e = HP_ERROR_INIT;

	fake_sys_init(&f);
	fake_setenv(&f, "HOME", "/home/u");
	fake_setenv(&f, "CONF", "/etc/aws");
	fake_setenv(&f, "AWS_CONFIG_FILE", "${CONF}/config");
	fake_setenv(&f, "AWS_SHARED_CREDENTIALS_FILE", "$HOME/creds");
	fake_file(&f, "/etc/aws/config", "[profile ops]\rregion = eu-west-1\rrole_arn = arn:a\r"
		  "[profile x]\r\noutput = json\r\n");
	fake_file(&f, "/home/u/creds", "[ops]\rregion = ap-south-1\rsource_profile = base\r");
	T_EQ(hp_profile_load(&f.sys, "ops", &p, &e), 0);
	/* The credentials file's value wins over the config file's, as botocore lays them. */
	T_STREQ(hp_profile_config(&p, "region"), "ap-south-1");
	T_STREQ(hp_profile_config_file(&p, "region"), "eu-west-1");
	T_STREQ(hp_profile_config(&p, "role_arn"), "arn:a");
	T_STREQ(hp_profile_config(&p, "source_profile"), "base");
	T_ASSERT(hp_ini_has_section(&p.config, "profile x"));
	hp_profile_release(&p);
	fake_sys_release(&f);
	/* An unset variable stays as written. */
	fake_sys_init(&f);
	fake_setenv(&f, "HOME", "/home/u");
	fake_setenv(&f, "AWS_CONFIG_FILE", "$NOPE/config");
	fake_setenv(&f, "AWS_SHARED_CREDENTIALS_FILE", "~/creds");
	fake_file(&f, "$NOPE/config", "[profile ops]\nregion = us-east-2\n"
		  "[ profile z ]\nregion = x\n[profile y ]\nregion = y\n");
	T_EQ(hp_profile_load(&f.sys, "ops", &p, &e), 0);
	T_STREQ(hp_profile_config(&p, "region"), "us-east-2");
	hp_profile_release(&p);
	/* "[ profile z ]" is no profile for botocore (the blank before the kind); "[profile z ]" is. */
	T_EQ(hp_profile_load(&f.sys, "z", &p, &e), -1);
	T_CONTAINS(e.msg, "profile 'z' not found");
	hp_error_clear(&e);
	if (hp_profile_load(&f.sys, "y", &p, &e))
		T_FAILF("%s", e.msg);
	T_STREQ(hp_profile_config(&p, "region"), "y");
	hp_profile_release(&p);
	fake_sys_release(&f);
}

static void t_profile_paths(void)
{
	struct fake_sys f;
	struct hp_profile p;
	struct hp_error e = HP_ERROR_INIT;

	/* The variables win over $HOME; "~/" expands to $HOME. */
	fake_sys_init(&f);
	home_files(&f);
	fake_setenv(&f, "AWS_CONFIG_FILE", "~/alt/config");
	fake_setenv(&f, "AWS_SHARED_CREDENTIALS_FILE", "/etc/aws-creds");
	fake_file(&f, "/home/u/alt/config", "[profile alt]\nregion = us-west-1\n");
	fake_file(&f, "/etc/aws-creds", "[alt]\naws_access_key_id = AKIDALT\n");
	T_EQ(hp_profile_load(&f.sys, "alt", &p, &e), 0);
	T_STREQ(hp_profile_config(&p, "region"), "us-west-1");
	T_STREQ(hp_profile_cred(&p, "aws_access_key_id"), "AKIDALT");
	hp_profile_release(&p);
	T_EQ(hp_profile_load(&f.sys, "dev", &p, &e), -1);
	T_STREQ(e.msg, "profile 'dev' not found in '/home/u/alt/config' or '/etc/aws-creds'");
	fake_sys_release(&f);
}

static void t_profile_missing_files(void)
{
	struct fake_sys f;
	struct hp_profile p;
	struct hp_error e = HP_ERROR_INIT;

	/* No files at all: fine for the default profile. */
	fake_sys_init(&f);
	fake_setenv(&f, "HOME", "/nowhere");
	T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), 0);
	T_STREQ(p.name, "default");
	T_EQ(p.config.n, 0);
	T_ASSERT(hp_profile_config(&p, "region") == NULL);
	hp_profile_release(&p);

	/* A profile named by AWS_PROFILE must exist. */
	fake_setenv(&f, "AWS_PROFILE", "ghost");
	T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), -1);
	T_EQ(e.code, HP_ERR_CONFIG);
	T_STREQ(e.msg, "profile 'ghost' not found in '/nowhere/.aws/config' or "
		       "'/nowhere/.aws/credentials'");
	fake_sys_release(&f);

	/* No HOME and no variables. */
	fake_sys_init(&f);
	hp_error_clear(&e);
	T_EQ(hp_profile_load(&f.sys, "x", &p, &e), -1);
	T_CONTAINS(e.msg, "(HOME not set)");
	hp_error_clear(&e);
	T_EQ(hp_profile_load(&f.sys, "", &p, &e), -1);
	T_EQ(e.code, HP_ERR_USAGE);
	fake_sys_release(&f);
}

static void t_profile_malformed_file(void)
{
	struct fake_sys f;
	struct hp_profile p;
	struct hp_error e = HP_ERROR_INIT;

	fake_sys_init(&f);
	fake_setenv(&f, "HOME", "/h");
	fake_file(&f, "/h/.aws/config", "[default]\nregion = us-west-2\n");
	fake_file(&f, "/h/.aws/credentials", "[default]\naws_access_key_id = A\n"
		  "aws_secret_access_key SECRETVALUE\n");
	T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), -1);
	T_EQ(e.code, HP_ERR_CONFIG);
	T_STREQ(e.msg, "malformed credentials file '/h/.aws/credentials': line 3: expected "
		       "'name = value'");
	T_NOT_CONTAINS(e.msg, "SECRETVALUE");
	T_EQ(p.config.n, 0);
	fake_sys_release(&f);

	fake_sys_init(&f);
	fake_setenv(&f, "AWS_CONFIG_FILE", "/cfg");
	fake_file(&f, "/cfg", "[default]\n\nregion\n");
	hp_error_clear(&e);
	T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), -1);
	T_STREQ(e.msg, "malformed config file '/cfg': line 3: expected 'name = value'");
	fake_sys_release(&f);
}

static int unreadable(struct hp_sys *sys, const char *path, struct hp_buf *out)
{
	(void)sys;
	(void)out;
	errno = strcmp(path, "/h/.aws/config") ? ENOENT : EACCES;
	return -1;
}

static void t_profile_unreadable_file(void)
{
	struct fake_sys f;
	struct hp_profile p;
	struct hp_error e = HP_ERROR_INIT;

	fake_sys_init(&f);
	fake_setenv(&f, "HOME", "/h");
	f.sys.read_file = unreadable;
	T_EQ(hp_profile_load(&f.sys, NULL, &p, &e), -1);
	T_EQ(e.code, HP_ERR_FILE);
	T_CONTAINS(e.msg, "cannot read config file '/h/.aws/config'");
	fake_sys_release(&f);
}

T_MAIN(T(t_ini_values), T(t_ini_line_endings), T(t_ini_malformed),
       T(t_ini_no_value_leaks_into_errors), T(t_profile_selection), T(t_profile_sections),
       T(t_profile_default_spellings), T(t_profile_botocore_files), T(t_profile_paths), T(t_profile_missing_files),
       T(t_profile_malformed_file), T(t_profile_unreadable_file))
