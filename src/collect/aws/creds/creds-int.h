/*
 * Private to the credential providers (src/collect/aws/creds/): the state
 * of one walk of the chain, the providers' entry points, and the helpers
 * they share (common.c). A provider answers, says why it is not
 * configured (the reason --debug prints), or fails with an error that
 * stops the chain, as in botocore.
 */
#ifndef HP_CREDS_INT_H
#define HP_CREDS_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "hp/aws.h"
#include "hp/creds.h"
#include "hp/util.h"

#define STS_TIMEOUT_MS 10000L
/* Profiles one source_profile chain may pass through. */
#define MAX_DEPTH 16

enum prov_result {
	PROV_ANSWERED,
	PROV_NOT_CONFIGURED,
	PROV_ERROR
};

struct chain {
	struct hp_sys *sys;
	const struct hp_profile *p;  /* the profile read (a view of it for source profiles) */
	const struct hp_profile *top; /* the profile the run names: its endpoints serve the chain */
	const char *profile;         /* name for messages */
	const struct hp_creds_env *env;
	int *imds_absent;
	struct hp_creds *out;
	struct hp_error *e;
	struct hp_buf *trace;        /* may be NULL */
	char reason[256];            /* why the provider did not answer; "" = say nothing */
	char source[192];            /* what answered, in words */
	int no_env;                  /* 1: environment variables are not read (--profile) */
	int debug;
	const char *visited[MAX_DEPTH];
	size_t nvisited;
};

/* The providers, in the chain's order (chain.c), each in its own file. */
enum prov_result cr_prov_environment(struct chain *c);  /* env.c */
enum prov_result cr_prov_assume_role(struct chain *c);  /* assume-role.c */
enum prov_result cr_prov_web_identity(struct chain *c); /* web-identity.c */
enum prov_result cr_prov_sso(struct chain *c);          /* sso.c */
enum prov_result cr_prov_shared_file(struct chain *c);  /* files.c */
enum prov_result cr_prov_login(struct chain *c);        /* files.c: detects only */
enum prov_result cr_prov_process(struct chain *c);      /* process.c */
enum prov_result cr_prov_config_file(struct chain *c);  /* files.c */
enum prov_result cr_prov_container(struct chain *c);    /* container.c */
enum prov_result cr_prov_imds(struct chain *c);         /* imds.c */
/* The environment's keys, also for credential_source Environment. */
enum prov_result cr_env_keys(struct chain *c);

/* A variable's value, NULL when unset or empty. */
const char *cr_env_get(struct hp_sys *sys, const char *name);
/* s, or NULL when it is NULL or empty. */
const char *cr_nonempty(const char *s);
/* A profile setting (config file, then credentials file), NULL when unset or empty. */
const char *cr_cfg(const struct hp_profile *p, const char *key);

/* An ISO-8601 time (no zone reads as UTC) to ms since the epoch. */
int cr_parse_time(const char *s, int64_t *ms);
/* ms since the epoch as "2024-05-01T10:11:12Z". */
void cr_format_time(int64_t ms, char *out, size_t n);

/* Why the provider did not answer (c->reason). */
enum prov_result cr_not_configured(struct chain *c, const char *fmt, ...) HP_PRINTF(2, 3);
/* Records a credential error for the chain's caller. */
enum prov_result cr_fail(struct chain *c, const char *fmt, ...) HP_PRINTF(2, 3);
void cr_set_creds(struct chain *c, const char *ak, const char *sk, const char *token,
		  int64_t expires_ms);
/* What answered, in words (c->source). */
void cr_source(struct chain *c, const char *fmt, ...) HP_PRINTF(2, 3);
/* One line of the --debug trace, when there is one. */
void cr_trace(struct chain *c, const char *fmt, ...) HP_PRINTF(2, 3);

/* One request, retried on a transport failure or a 5xx: 0 with a reply, -1 without. */
int cr_http_try(struct hp_sys *sys, struct hp_http_req *req, struct hp_http_resp *resp,
		int attempts);
void cr_resp_done(struct hp_http_resp *resp);
/* Blanks trimmed from both ends, in place. */
char *cr_trim(char *s);
/* Credentials from the JSON object o, its members named by names[4]. */
enum prov_result cr_from_json(struct chain *c, const cJSON *o, const char *const names[4],
			      const char *what);
/* Error code and message of a failed reply, for a message line. */
void cr_reply_error(const struct hp_http_resp *resp, char *out, size_t n);
/* The member names of STS credentials. */
extern const char *const cr_sts_names[4];
/* "hpnode-session-<epoch seconds>", when the profile names no session. */
void cr_default_session_name(struct chain *c, char *out, size_t n);

/* Zero every string in a cJSON tree before it is freed. */
void cr_json_wipe(cJSON *j);
/* A member's string, NULL when absent, not a string, or empty. */
const char *cr_json_string(const cJSON *obj, const char *key);

#endif
