/*
 * The shared AWS config and credentials files (INI), read the way the AWS
 * CLI reads them: AWS_CONFIG_FILE (default ~/.aws/config, sections
 * "[default]" and "[profile NAME]") and AWS_SHARED_CREDENTIALS_FILE
 * (default ~/.aws/credentials, sections "[NAME]"), plus "[services NAME]"
 * sections with indented sub-keys. Files are read through hp_sys.
 */
#ifndef HP_PROFILE_H
#define HP_PROFILE_H

#include "hp/err.h"
#include "hp/sys.h"

struct hp_ini_kv {
	char *section;   /* e.g. "profile dev", "default", "services local" */
	char *key;       /* e.g. "region"; sub-keys are "parent.child" ("sagemaker.endpoint_url") */
	char *value;
};

struct hp_ini {
	struct hp_ini_kv *kv;
	size_t n, alloc;
	char **sections;         /* every section header seen, even empty ones */
	size_t nsections, sections_alloc;
};

/* Parse INI text (comments '#'/';', indented sub-keys). Returns 0 or -1 with e set. */
int hp_ini_parse(const char *text, size_t len, struct hp_ini *out, struct hp_error *e);
const char *hp_ini_get(const struct hp_ini *ini, const char *section, const char *key);
/* 1 when the text had a "[section]" header, even with no keys under it. */
int hp_ini_has_section(const struct hp_ini *ini, const char *section);
void hp_ini_release(struct hp_ini *ini);

/* One resolved profile: keys from the config file and the credentials file. */
struct hp_profile {
	char name[128];          /* --profile, AWS_PROFILE, AWS_DEFAULT_PROFILE, "default" */
	struct hp_ini config;    /* empty when the file is absent */
	struct hp_ini credentials;
	int explicit_profile;    /* 1 when named by --profile */
};

/* Loads both files; absent files are not errors, malformed ones are. */
int hp_profile_load(struct hp_sys *sys, const char *flag_profile, struct hp_profile *p,
		    struct hp_error *e);
/*
 * A setting of this profile as botocore sees it: the credentials file's
 * "[name]" section laid over the config file's "[default]"/"[profile x]",
 * so a key in both files takes the credentials file's value.
 */
const char *hp_profile_config(const struct hp_profile *p, const char *key);
/* Key from the config file section of this profile only. */
const char *hp_profile_config_file(const struct hp_profile *p, const char *key);
/* Key from the credentials file section "[name]". */
const char *hp_profile_cred(const struct hp_profile *p, const char *key);
void hp_profile_release(struct hp_profile *p);

#endif
