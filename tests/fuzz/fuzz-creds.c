/*
 * The shared config and credentials files (src/collect/aws/profile.c) and the
 * credential chain (src/collect/aws/creds/) with a fuzzed credential_process
 * answer; then region and endpoint resolution. Input: config file, NUL,
 * credentials file, NUL, what credential_process prints, NUL, flags
 * ("p": --profile dev; "e": AWS_PROFILE=dev; "x": the process exits 1 with
 * the output as stderr; "k": environment keys; "v": the file variables
 * spelled "${FZROOT}cfg" and "$FZCREDS"). Oracles: a secret that
 * was resolved (or that the process printed as SecretAccessKey or
 * SessionToken) never appears in the provider trace or an error message;
 * error messages are clean once sanitised.
 */
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "fuzz.h"
#include "hp/creds.h"
#include "hp/profile.h"
#include "hp/util.h"

/*
 * A secret worth checking for: long, secret-like (a digit or mixed case,
 * no space: no word of a message), and written exactly once in the input.
 */
static int checkable(const char *v, const struct fz_parts *ps)
{
	size_t i, n = v ? strlen(v) : 0, count = 0;

	if (n < 10 || strpbrk(v, " \t") ||
	    !(strpbrk(v, "0123456789") || (strpbrk(v, "abcdefghijklmnopqrstuvwxyz") &&
					   strpbrk(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))))
		return 0;
	for (i = 0; i < ps->n; i++) {
		const char *p = ps->p[i];

		while ((p = strstr(p, v))) {
			count++;
			p++;
		}
	}
	return count == 1;
}

/* The string value of "key" in JSON-ish text, into out; "" when absent. */
static void json_value(const char *text, const char *key, char *out, size_t n)
{
	const char *p = strstr(text, key), *q;

	out[0] = 0;
	if (!p)
		return;
	p += strlen(key);
	while (*p == '"' || *p == ' ' || *p == ':')
		p++;
	q = strchr(p, '"');
	if (q && (size_t)(q - p) < n) {
		memcpy(out, p, (size_t)(q - p));
		out[q - p] = 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_parts ps;
	struct fake_sys f;
	struct hp_profile p;
	struct hp_creds c;
	struct hp_buf trace = HP_BUF_INIT(1 << 20);
	struct hp_error e = HP_ERROR_INIT;
	const char *flags, *secrets[8];
	char proc_sk[256], proc_tok[1024], region[64], url[512];
	size_t ns = 0;
	const char *src = NULL;
	int svc;

	if (size > (256u << 10))
		return 0;
	fz_split(data, size, 4, &ps);
	while (ps.n < 4) {
		ps.p[ps.n] = xstrdup("");
		ps.len[ps.n++] = 0;
	}
	flags = ps.p[3];
	memset(&f, 0, sizeof(f));
	fake_sys_init(&f);
	/* 'v': the path variables spelled with $NAME and ${NAME}, expanded as botocore does. */
	fake_setenv(&f, "FZROOT", "/");
	fake_setenv(&f, "FZCREDS", "/creds");
	fake_setenv(&f, "AWS_CONFIG_FILE", strchr(flags, 'v') ? "${FZROOT}cfg" : "/cfg");
	fake_setenv(&f, "AWS_SHARED_CREDENTIALS_FILE", strchr(flags, 'v') ? "$FZCREDS" : "/creds");
	fake_setenv(&f, "HOME", "/home/u");
	if (strchr(flags, 'e'))
		fake_setenv(&f, "AWS_PROFILE", "dev");
	if (strchr(flags, 'k')) {
		fake_setenv(&f, "AWS_ACCESS_KEY_ID", "AKIDFUZZENV");
		fake_setenv(&f, "AWS_SECRET_ACCESS_KEY", "envSECRETfuzz0123456789");
	}
	fake_file(&f, "/cfg", ps.p[0]);
	fake_file(&f, "/creds", ps.p[1]);
	if (strchr(flags, 'x')) {
		f.run_status = 1;
		f.run_err = ps.p[2];
	} else {
		f.run_out = ps.p[2];
	}

	memset(&p, 0, sizeof(p));
	memset(&c, 0, sizeof(c));
	if (hp_profile_load(&f.sys, strchr(flags, 'p') ? "dev" : NULL, &p, &e)) {
		fz_check_error(e.msg, NULL);
		goto out;
	}
	json_value(ps.p[2], "\"SecretAccessKey\"", proc_sk, sizeof(proc_sk));
	json_value(ps.p[2], "\"SessionToken\"", proc_tok, sizeof(proc_tok));
	if (checkable(proc_sk, &ps))
		secrets[ns++] = proc_sk;
	if (checkable(proc_tok, &ps))
		secrets[ns++] = proc_tok;
	if (hp_creds_resolve(&f.sys, &p, &c, &trace, &e) == 0) {
		if (!c.access_key || !c.secret_key)
			fz_fail("resolved credentials without keys", NULL, 0);
		if (checkable(c.secret_key, &ps))
			secrets[ns++] = c.secret_key;
		if (checkable(c.session_token, &ps))
			secrets[ns++] = c.session_token;
	} else if (c.access_key || c.secret_key) {
		fz_fail("failed resolution left keys behind", NULL, 0);
	}
	secrets[ns] = NULL;
	for (ns = 0; secrets[ns]; ns++) {
		fz_assert_absent("credential trace", trace.buf, trace.len, secrets[ns]);
		fz_assert_absent("credential error", e.msg, strlen(e.msg), secrets[ns]);
	}
	fz_check_error(e.msg, NULL);

	e.code = HP_OK;
	e.msg[0] = 0;
	if (hp_region_resolve(&f.sys, &p, NULL, region, sizeof(region), &src, &e) == 0) {
		for (svc = 0; svc < HP_SVC__COUNT; svc++) {
			e.code = HP_OK;
			e.msg[0] = 0;
			if (hp_endpoint_resolve(&f.sys, &p, (enum hp_svc)svc, region, NULL, url,
						sizeof(url), &e))
				fz_check_error(e.msg, NULL);
		}
	} else {
		fz_check_error(e.msg, NULL);
	}
	hp_ca_bundle(&f.sys, &p);
out:
	hp_creds_release(&c);
	hp_profile_release(&p);
	hp_buf_release(&trace);
	fake_sys_release(&f);
	fz_parts_release(&ps);
	return 0;
}
