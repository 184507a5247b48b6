/*
 * credential_process: the command line split as a shell would (no
 * expansion), run with a time limit, and its Version 1 JSON read.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/json.h"
#include "creds-int.h"

#define PROCESS_TIMEOUT_MS 60000L

struct argv_list {
	char **v;
	size_t n, alloc;
};

static void argv_push(struct argv_list *a, char *s)
{
	hp_array_reserve(a, 2);  /* s and the NULL after it */
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static void argv_free(struct argv_list *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		hp_free_secret(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/*
 * Split a command line the way a POSIX shell splits words (and the way
 * Python's shlex.split does): blanks separate, '...' is literal, "..."
 * honours \" and \\, a backslash outside quotes escapes any character.
 * No expansion of any kind. Returns NULL on success or what is wrong.
 */
static const char *shell_split(const char *s, struct argv_list *out)
{
	struct hp_buf w = HP_BUF_INIT(HP_MAX_LINE);
	const char *err = NULL;
	int in_word = 0;

	memset(out, 0, sizeof(*out));
	for (; *s && !err; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
			if (in_word)
				argv_push(out, hp_buf_detach(&w, NULL));
			in_word = 0;
			continue;
		}
		in_word = 1;
		if (*s == '\\') {
			/* Never step onto the terminator: the loop would read past it. */
			if (!s[1])
				err = "a backslash ends the line";
			else
				hp_buf_putc(&w, *++s);
		} else if (*s == '\'') {
			const char *q = strchr(s + 1, '\'');

			if (!q)
				err = "a single quote is not closed";
			else
				hp_buf_putn(&w, s + 1, (size_t)(q - s - 1));
			s = q ? q : s + strlen(s) - 1;
		} else if (*s == '"') {
			for (s++; *s && *s != '"'; s++) {
				if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
					s++;
				hp_buf_putc(&w, *s);
			}
			if (!*s) {
				err = "a double quote is not closed";
				s--;
			}
		} else {
			hp_buf_putc(&w, *s);
		}
	}
	if (!err && in_word)
		argv_push(out, hp_buf_detach(&w, NULL));
	hp_buf_release_secure(&w);
	if (!err && !out->n)
		err = "it is empty";
	if (err)
		argv_free(out);
	return err;
}

/* First non-blank line of a process's stderr, cleaned for one message line. */
static void first_line(const struct hp_buf *b, char *out, size_t n)
{
	const char *p = b->buf, *end = b->buf + b->len;
	size_t k = 0;

	while (p < end && (*p == '\n' || *p == '\r' || *p == ' ' || *p == '\t'))
		p++;
	for (; p < end && *p != '\n' && *p != '\r' && k + 1 < n; p++)
		out[k++] = (unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p;
	while (k && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
}

static enum prov_result process_parse(struct chain *c, const char *prog, const struct hp_buf *out)
{
	cJSON *j = hp_json_parse(out->buf, out->len, NULL);
	const cJSON *ver;
	const char *ak, *sk, *exp;
	int64_t expires_ms = 0;
	enum prov_result r = PROV_ERROR;
	char when[32];

	if (!cJSON_IsObject(j)) {
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' did not "
			     "print a JSON object", prog, c->profile);
		goto out;
	}
	ver = cJSON_GetObjectItemCaseSensitive(j, "Version");
	if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
		if (cJSON_IsNumber(ver))
			hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' "
				     "printed Version %g; only Version 1 is supported", prog,
				     c->profile, ver->valuedouble);
		else
			hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' "
				     "printed no numeric Version; only Version 1 is supported", prog,
				     c->profile);
		goto out;
	}
	ak = cr_json_string(j, "AccessKeyId");
	sk = cr_json_string(j, "SecretAccessKey");
	if (!ak || !sk) {
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' printed "
			     "no %s", prog, c->profile, ak ? "SecretAccessKey" : "AccessKeyId");
		goto out;
	}
	exp = cr_json_string(j, "Expiration");
	if (exp && cr_parse_time(exp, &expires_ms)) {
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' printed an "
			     "Expiration that is not an ISO-8601 time", prog, c->profile);
		goto out;
	}
	if (exp && expires_ms <= c->sys->now_ms(c->sys)) {
		cr_format_time(expires_ms, when, sizeof(when));
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' returned "
			     "credentials that expired at %s", prog, c->profile, when);
		goto out;
	}
	cr_set_creds(c, ak, sk, cr_json_string(j, "SessionToken"), expires_ms);
	r = PROV_ANSWERED;
out:
	cr_json_wipe(j);
	cJSON_Delete(j);
	return r;
}

enum prov_result cr_prov_process(struct chain *c)
{
	const char *line = cr_cfg(c->p, "credential_process"), *why;
	struct argv_list argv;
	struct hp_run_req req;
	struct hp_run_res res;
	enum prov_result r = PROV_ERROR;
	char prog[128], err1[200];

	if (!line)
		return cr_not_configured(c, "profile '%s' has no credential_process", c->profile);
	why = shell_split(line, &argv);
	if (why)
		return cr_fail(c, "cannot split the credential_process of profile '%s': %s",
			       c->profile, why);
	hp_strlcpy(prog, argv.v[0], sizeof(prog));
	memset(&req, 0, sizeof(req));
	req.argv = (const char *const *)argv.v;
	req.timeout_ms = PROCESS_TIMEOUT_MS;
	memset(&res, 0, sizeof(res));
	res.exit_status = -1;
	hp_buf_init(&res.out, HP_MAX_PROC_OUT);
	hp_buf_init(&res.err, HP_MAX_PROC_OUT);

	if (c->sys->run(c->sys, &req, &res) < 0) {
		hp_error_set(c->e, HP_ERR_CREDS, "cannot run credential_process '%s' of profile '%s'",
			     prog, c->profile);
	} else if (res.timed_out) {
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' did not "
			     "finish within %ld s", prog, c->profile, PROCESS_TIMEOUT_MS / 1000);
	} else if (res.exit_status != 0) {
		first_line(&res.err, err1, sizeof(err1));
		/* A tool that printed its credentials on stderr must not have them echoed. */
		if (strcasestr(err1, "SecretAccessKey") || strcasestr(err1, "SessionToken") ||
		    strcasestr(err1, "secret_access_key") || strcasestr(err1, "session_token"))
			hp_strlcpy(err1, "(stderr not shown: it names a credential field)",
				   sizeof(err1));
		hp_error_set(c->e, HP_ERR_CREDS, "credential_process '%s' of profile '%s' exited "
			     "with status %d: %s", prog, c->profile, res.exit_status,
			     err1[0] ? err1 : "(nothing on stderr)");
	} else {
		r = process_parse(c, prog, &res.out);
		if (r == PROV_ANSWERED)
			cr_source(c, "credential_process of profile %s", c->profile);
	}
	hp_buf_release_secure(&res.out);
	hp_buf_release_secure(&res.err);
	argv_free(&argv);
	return r;
}
