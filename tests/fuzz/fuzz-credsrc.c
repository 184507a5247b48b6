/*
 * The replies of the credential sources that answer over HTTP
 * (src/collect/aws/creds/): sts:AssumeRole (XML), sts:AssumeRoleWithWebIdentity
 * (XML), the SSO token cache file, the SSO portal's GetRoleCredentials and
 * the OIDC CreateToken refresh (JSON), the container endpoint (JSON) and
 * IMDSv2 (token, role name, credentials JSON). Input: a source letter
 * ('a' assume role, 'w' web identity, 's' SSO, 'c' container, 'i' IMDS),
 * NUL, then the replies in the order the source asks ("@NNN body" for a
 * status other than 200; for SSO the first part is the token cache file).
 * Oracles: a secret that was resolved never appears in the provider trace
 * or the error message; the message is clean once sanitised; a failed
 * resolution leaves no keys behind.
 */
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "fuzz.h"
#include "hp/creds.h"
#include "hp/profile.h"
#include "hp/util.h"

#define START_URL "https://d-9067642ac7.awsapps.com/start"

/* One reply part: "@NNN body" sets the status. */
static void reply(struct fake_sys *f, const char *part)
{
	long status = 200;

	if (part[0] == '@' && strlen(part) >= 5 && part[4] == ' ') {
		status = strtol(part + 1, NULL, 10);
		part += 5;
	}
	fake_reply(f, status, NULL, part);
}

/*
 * A secret worth checking for: long, secret-like (a digit or mixed case, no
 * space: no word of a message), and written exactly once in the input.
 */
static int checkable(const char *v, const struct fz_parts *ps)
{
	size_t i, n = v ? strlen(v) : 0, count = 0;
	const char *q;

	if (n < 10 || strpbrk(v, " \t") || !strpbrk(v, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
		return 0;
	for (i = 0; i < ps->n; i++)
		for (q = ps->p[i]; (q = strstr(q, v)) != NULL; q++)
			count++;
	return count == 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char cache_path[128];
	struct fz_parts ps;
	struct fake_sys f;
	struct hp_profile p;
	struct hp_creds c;
	struct hp_buf trace = HP_BUF_INIT(1 << 20);
	struct hp_error e = HP_ERROR_INIT;
	const char *secrets[3];
	size_t i, first = 1, ns = 0;
	char src;

	if (size > (128u << 10))
		return 0;
	fz_split(data, size, 6, &ps);
	src = ps.n && ps.p[0][0] ? ps.p[0][0] : 'a';
	memset(&f, 0, sizeof(f));
	fake_sys_init(&f);
	fake_setenv(&f, "AWS_CONFIG_FILE", "/cfg");
	fake_setenv(&f, "AWS_SHARED_CREDENTIALS_FILE", "/creds");
	fake_setenv(&f, "HOME", "/home/u");
	fake_setenv(&f, "AWS_REGION", "us-west-2");
	fake_file(&f, "/creds", "");
	switch (src) {
	case 'w':
		fake_setenv(&f, "AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/fuzz");
		fake_setenv(&f, "AWS_WEB_IDENTITY_TOKEN_FILE", "/tok");
		fake_file(&f, "/tok", "eyJhbGciOiJSUzI1NiJ9.fuzz.token");
		fake_file(&f, "/cfg", "");
		break;
	case 's': {
		unsigned char md[SHA_DIGEST_LENGTH];
		int k;

		fake_file(&f, "/cfg", "[default]\nsso_start_url = " START_URL "\nsso_region = us-east-1\n"
			  "sso_account_id = 111122223333\nsso_role_name = Triage\n");
		SHA1((const unsigned char *)START_URL, strlen(START_URL), md);
		k = snprintf(cache_path, sizeof(cache_path), "/home/u/.aws/sso/cache/");
		for (i = 0; i < SHA_DIGEST_LENGTH; i++)
			k += snprintf(cache_path + k, sizeof(cache_path) - (size_t)k, "%02x", md[i]);
		snprintf(cache_path + k, sizeof(cache_path) - (size_t)k, ".json");
		fake_file(&f, cache_path, ps.n > 1 ? ps.p[1] : "");
		first = 2;
		break;
	}
	case 'c':
		fake_setenv(&f, "AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:51679/creds");
		fake_setenv(&f, "AWS_CONTAINER_AUTHORIZATION_TOKEN", "fuzz-authz-token");
		fake_file(&f, "/cfg", "");
		break;
	case 'i':
		fake_file(&f, "/cfg", "");
		break;
	default:
		fake_file(&f, "/cfg", "[default]\nrole_arn = arn:aws:iam::111122223333:role/fuzz\n"
			  "source_profile = base\n[profile base]\naws_access_key_id = AKIDFUZZBASE\n"
			  "aws_secret_access_key = baseSECRETfuzz0123456789\n");
		break;
	}
	for (i = first; i < ps.n; i++)
		reply(&f, ps.p[i]);
	memset(&p, 0, sizeof(p));
	memset(&c, 0, sizeof(c));
	if (hp_profile_load(&f.sys, NULL, &p, &e)) {
		fz_check_error(e.msg, NULL);
		goto out;
	}
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
	if (getenv("HP_FUZZ_SHOW"))
		fprintf(stderr, "%s: %s\n", c.access_key ? c.access_key : "no keys", e.msg);
	fz_check_error(e.msg, NULL);
out:
	hp_creds_release(&c);
	hp_profile_release(&p);
	hp_buf_release(&trace);
	fake_sys_release(&f);
	fz_parts_release(&ps);
	return 0;
}
