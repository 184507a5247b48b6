/*
 * Unit tests for src/collect/aws/sigv4.c: each stage on its own (canonical request,
 * string to sign, signing key, Authorization value), table-driven edge cases
 * of path, query and header canonicalisation, the golden cases under
 * tests/data/sigv4/, and a check that freed memory holds no key material.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "hp/buf.h"
#include "hp/sigv4.h"
#include "hp/util.h"
#include "t.h"

#define EXAMPLE_AK "AKIDEXAMPLE"
#define EXAMPLE_SK "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
#define T_20150830 ((time_t)1440938160)   /* 20150830T123600Z */
#define EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define GOLDEN_DIR "tests/data/sigv4/"

static struct hp_sigv4_params example_params(void)
{
	struct hp_sigv4_params p;

	memset(&p, 0, sizeof(p));
	p.access_key = EXAMPLE_AK;
	p.secret_key = EXAMPLE_SK;
	p.region = "us-east-1";
	p.service = "service";
	p.now = T_20150830;
	return p;
}

/* Canonical request of a bare GET with the given path and query; the
 * caller frees the result. */
static char *creq_of(const char *method, const char *path, const char *query,
		     const struct hp_header *h, size_t nh, const char *body)
{
	struct hp_sigv4_request r;
	struct hp_buf out = HP_BUF_INIT(1 << 20);

	memset(&r, 0, sizeof(r));
	r.method = method;
	r.path = path;
	r.query = query;
	r.headers = h;
	r.nheaders = nh;
	r.payload = body;
	r.payload_len = body ? strlen(body) : 0;
	if (hp_sigv4_canonical_request(&r, &out, NULL)) {
		hp_buf_release(&out);
		return NULL;
	}
	return hp_buf_detach(&out, NULL);
}

/* Line number n (0-based) of s, in a static buffer. */
static const char *line_of(const char *s, int n)
{
	static char line[4096];
	const char *end;

	for (; n > 0 && s; n--) {
		s = strchr(s, '\n');
		if (s)
			s++;
	}
	if (!s)
		return "(no such line)";
	end = strchr(s, '\n');
	if (!end)
		end = s + strlen(s);
	snprintf(line, sizeof(line), "%.*s", (int)(end - s), s);
	return line;
}

static void t_amz_date(void)
{
	static const struct {
		time_t t;
		const char *amz;
	} cases[] = {
		{ 0, "19700101T000000Z" },
		{ T_20150830, "20150830T123600Z" },
		{ 1329264000, "20120215T000000Z" },
		{ 951825600, "20000229T120000Z" },
		{ (time_t)4102444799LL, "20991231T235959Z" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		char amz[17], date[9];

		memset(amz, 'x', sizeof(amz));
		memset(date, 'x', sizeof(date));
		hp_sigv4_amz_date(cases[i].t, amz, date);
		T_STREQ(amz, cases[i].amz);
		T_ASSERT(strlen(date) == 8 && !memcmp(date, cases[i].amz, 8));
	}
}

static void t_sha256_hex(void)
{
	char out[65];

	hp_sha256_hex("", 0, out);
	T_STREQ(out, EMPTY_SHA256);
	hp_sha256_hex("abc", 3, out);
	T_STREQ(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hp_sha256_hex("a\0b", 3, out);   /* length, not NUL, ends the data */
	T_ASSERT(strcmp(out, "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"));
}

static void t_canonical_path(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "", "/" },
		{ NULL, "/" },
		{ "/", "/" },
		{ "//", "/" },
		{ "/clusters/my-cluster", "/clusters/my-cluster" },
		{ "//a//b//", "/a/b/" },
		{ "/a/./b/../c", "/a/c" },
		{ "/a/b/..", "/a" },
		{ "/a/.", "/a" },
		{ "/a/./", "/a/" },
		{ "/./", "/" },
		{ "/../../x", "/x" },
		{ "/..", "/" },
		{ "/.../.a/a.", "/.../.a/a." },
		{ "/-._~AZaz09", "/-._~AZaz09" },
		{ "/a b", "/a%20b" },
		{ "/a%2Fb", "/a%252Fb" },            /* encoded once more */
		{ "/a%20b/%", "/a%2520b/%25" },
		{ "/\xe1\x88\xb4", "/%E1%88%B4" },
		{ "/$&+,;=:@!*'()", "/%24%26%2B%2C%3B%3D%3A%40%21%2A%27%28%29" },
		{ "/x\x7f\x01", "/x%7F%01" },
		{ "relative/path", "/relative/path" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		char *c = creq_of("GET", cases[i].in, NULL, NULL, 0, NULL);

		T_ASSERT(c != NULL);
		if (strcmp(line_of(c, 1), cases[i].want))
			T_FAILF("path '%s': canonical '%s', expected '%s'", cases[i].in ? cases[i].in : "(null)",
				line_of(c, 1), cases[i].want);
		free(c);
	}
}

static void t_canonical_query(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ NULL, "" },
		{ "", "" },
		{ "&", "" },
		{ "b=2&a=1", "a=1&b=2" },
		{ "a=2&a=1&a=", "a=&a=1&a=2" },
		{ "a", "a=" },
		{ "a&&b", "a=&b=" },
		{ "=v", "=v" },
		{ "%41=x", "A=x" },
		{ "B=1&a=1", "B=1&a=1" },              /* byte order: upper case first */
		{ "a.b=1&a=2&a-b=3", "a=2&a-b=3&a.b=1" },
		{ "a=%7e&b=%7E", "a=~&b=~" },
		{ "a=b=c", "a=b%3Dc" },
		{ "a+b=c+d", "a%2Bb=c%2Bd" },           /* '+' is a plus, not a space */
		{ "sp=a%20b&t=a b", "sp=a%20b&t=a%20b" },
		{ "q=%zz%&r=%4", "q=%25zz%25&r=%254" },
		{ "k=%e1%88%b4", "k=%E1%88%B4" },
		{ "k=\xe1\x88\xb4", "k=%E1%88%B4" },
		{ "x=%2F/&y=:@", "x=%2F%2F&y=%3A%40" },
		{ "Action=DescribeSubnets&Version=2016-11-15&SubnetId.1=subnet-1",
		  "Action=DescribeSubnets&SubnetId.1=subnet-1&Version=2016-11-15" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		char *c = creq_of("GET", "/", cases[i].in, NULL, 0, NULL);

		T_ASSERT(c != NULL);
		if (strcmp(line_of(c, 2), cases[i].want))
			T_FAILF("query '%s': canonical '%s', expected '%s'", cases[i].in ? cases[i].in : "(null)",
				line_of(c, 2), cases[i].want);
		free(c);
	}
}

static void t_canonical_headers(void)
{
	static const struct hp_header h1[] = {
		{ "X-Note", "  a   b\t\tc  " },
		{ "host", "example.amazonaws.com" },
		{ "x-note", "second" },
		{ " Folded ", "one\r\n  two\n\tthree" },
		{ "X-Empty", "" },
		{ "X-Blank", " \t " },
		{ "X-Amz-Date", "20150830T123600Z" },
		{ "X-NOTE", "third" },
	};
	static const struct hp_header h2[] = {
		{ "Zeta", "z" }, { "alpha", "a" }, { "Alpha", "A" }, { "a-b", "x" }, { "a.b", "y" },
		{ "a", "q" },
	};
	char *c = creq_of("get", "/", NULL, h1, HP_ARRAY_LEN(h1), NULL);

	T_STREQ(c, "GET\n/\n\n"
		   "folded:one two three\n"
		   "host:example.amazonaws.com\n"
		   "x-amz-date:20150830T123600Z\n"
		   "x-blank:\n"
		   "x-empty:\n"
		   "x-note:a b c,second,third\n"
		   "\n"
		   "folded;host;x-amz-date;x-blank;x-empty;x-note\n" EMPTY_SHA256);
	free(c);
	c = creq_of("POST", "/", NULL, h2, HP_ARRAY_LEN(h2), NULL);
	T_STREQ(c, "POST\n/\n\na:q\na-b:x\na.b:y\nalpha:a,A\nzeta:z\n\na;a-b;a.b;alpha;zeta\n" EMPTY_SHA256);
	free(c);
}

static void t_canonical_request_whole(void)
{
	static const struct hp_header h[] = {
		{ "Content-Type", "application/x-www-form-urlencoded" },
		{ "Host", "example.amazonaws.com" },
		{ "X-Amz-Date", "20150830T123600Z" },
	};
	struct hp_sigv4_request r;
	struct hp_buf out = HP_BUF_INIT(4096), sh = HP_BUF_INIT(4096);

	memset(&r, 0, sizeof(r));
	r.method = "POST";
	r.path = "/";
	r.headers = h;
	r.nheaders = HP_ARRAY_LEN(h);
	r.payload = "Param1=value1";
	r.payload_len = 13;
	T_EQ(hp_sigv4_canonical_request(&r, &out, &sh), 0);
	T_STREQ(out.buf, "POST\n/\n\ncontent-type:application/x-www-form-urlencoded\n"
			 "host:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
			 "content-type;host;x-amz-date\n"
			 "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
	T_STREQ(sh.buf, "content-type;host;x-amz-date");
	hp_buf_release(&out);
	hp_buf_release(&sh);
}

static void t_canonical_payload_header(void)
{
	static const struct hp_header h[] = {
		{ "Host", "example.amazonaws.com" },
		{ "X-Amz-Content-Sha256", " UNSIGNED-PAYLOAD " },
	};
	char *c = creq_of("PUT", "/", NULL, h, HP_ARRAY_LEN(h), "ignored body");

	T_ASSERT(c != NULL);
	T_STREQ(line_of(c, 7), "UNSIGNED-PAYLOAD");
	free(c);
	c = creq_of("PUT", "/", NULL, h, 1, "");
	T_STREQ(line_of(c, 6), EMPTY_SHA256);
	free(c);
}

static void t_canonical_errors(void)
{
	static const struct hp_header bad[] = { { "  ", "v" } };
	static const struct hp_header ok[] = { { "Host", "example.amazonaws.com" } };
	struct hp_sigv4_request r;
	struct hp_buf small = HP_BUF_INIT(16);

	T_ASSERT(creq_of("GET", "/", NULL, bad, 1, NULL) == NULL);
	T_ASSERT(creq_of("", "/", NULL, ok, 1, NULL) == NULL);
	T_ASSERT(creq_of(NULL, "/", NULL, ok, 1, NULL) == NULL);
	memset(&r, 0, sizeof(r));
	r.method = "GET";
	r.path = "/a/long/path/that/does/not/fit";
	r.headers = ok;
	r.nheaders = 1;
	T_EQ(hp_sigv4_canonical_request(&r, &small, NULL), -1);
	hp_buf_release(&small);
}

static void t_string_to_sign(void)
{
	struct hp_sigv4_params p = example_params();
	struct hp_buf creq = HP_BUF_INIT(1024), sts = HP_BUF_INIT(1024);

	hp_buf_puts(&creq, "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
			   "host;x-amz-date\n" EMPTY_SHA256);
	T_EQ(hp_sigv4_string_to_sign(&p, &creq, &sts), 0);
	T_STREQ(sts.buf, "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
			 "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
	hp_buf_reset(&sts);
	p.region = "";
	T_EQ(hp_sigv4_string_to_sign(&p, &creq, &sts), -1);
	hp_buf_release(&creq);
	hp_buf_release(&sts);
}

static void t_signing_key(void)
{
	static const struct {
		const char *secret, *region, *service;
		time_t now;
		const char *want;
	} cases[] = {
		/* The key-derivation example of the AWS documentation. */
		{ EXAMPLE_SK, "us-east-1", "iam", 1329264000,
		  "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d" },
		{ EXAMPLE_SK, "us-east-1", "service", T_20150830,
		  "938127b5336810ddb6a5d6af445fcac9e371f9ed418ed386b022aed82901be75" },
		{ "", "r", "s", 0, "4ac8bfc9274200ee5509876c5295625efee4622fd24e6b8a4832d8c75bf82f79" },
	};
	char longsecret[301];
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct hp_sigv4_params p = example_params();
		unsigned char key[32];
		char hex[65];
		size_t k;

		p.secret_key = cases[i].secret;
		p.region = cases[i].region;
		p.service = cases[i].service;
		p.now = cases[i].now;
		hp_sigv4_signing_key(&p, key);
		for (k = 0; k < 32; k++)
			snprintf(hex + 2 * k, 3, "%02x", key[k]);
		T_STREQ(hex, cases[i].want);
	}
	/* A secret longer than any fixed-size scratch space. */
	memset(longsecret, 'x', 300);
	longsecret[300] = '\0';
	{
		struct hp_sigv4_params p = example_params();
		unsigned char key[32];
		char hex[65];
		size_t k;

		p.secret_key = longsecret;
		p.region = "cn-north-1";
		p.service = "servicequotas";
		p.now = (time_t)4102444799LL;
		hp_sigv4_signing_key(&p, key);
		for (k = 0; k < 32; k++)
			snprintf(hex + 2 * k, 3, "%02x", key[k]);
		T_STREQ(hex, "e1e9b3359e6985f2fbd5d6f6fcc43f2c7db760571d5d65023f80278b324f8409");
	}
}

/* Signature of the suite's get-vanilla / post-vanilla (public smoke values). */
static void t_sign_vanilla(void)
{
	static const struct hp_header h[] = {
		{ "Host", "example.amazonaws.com" },
		{ "X-Amz-Date", "20150830T123600Z" },
	};
	struct hp_sigv4_params p = example_params();
	struct hp_sigv4_request r;
	struct hp_buf a = HP_BUF_INIT(1024);

	memset(&r, 0, sizeof(r));
	r.method = "GET";
	r.path = "/";
	r.headers = h;
	r.nheaders = 2;
	T_EQ(hp_sigv4_sign(&p, &r, &a), 0);
	T_STREQ(a.buf, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
		       "SignedHeaders=host;x-amz-date, "
		       "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
	hp_buf_reset(&a);
	r.method = "POST";
	T_EQ(hp_sigv4_sign(&p, &r, &a), 0);
	T_CONTAINS(a.buf, "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");
	hp_buf_release(&a);
}

static void t_sign_token_and_params(void)
{
	static const struct hp_header with[] = {
		{ "Host", "example.amazonaws.com" },
		{ "X-Amz-Date", "20150830T123600Z" },
		{ "x-amz-security-token", "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267" },
	};
	struct hp_sigv4_params p = example_params();
	struct hp_sigv4_request r;
	struct hp_buf a = HP_BUF_INIT(1024);

	memset(&r, 0, sizeof(r));
	r.method = "GET";
	r.path = "/";
	r.headers = with;
	r.nheaders = 3;
	p.session_token = with[2].value;
	T_EQ(hp_sigv4_sign(&p, &r, &a), 0);
	/* The suite's get-vanilla-with-session-token. */
	T_STREQ(a.buf, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
		       "SignedHeaders=host;x-amz-date;x-amz-security-token, "
		       "Signature=07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8");
	/* A token in the params but not among the headers is a caller bug. */
	r.nheaders = 2;
	hp_buf_reset(&a);
	T_EQ(hp_sigv4_sign(&p, &r, &a), -1);
	p.session_token = "another-token";
	r.nheaders = 3;
	T_EQ(hp_sigv4_sign(&p, &r, &a), -1);
	p = example_params();
	p.region = NULL;
	T_EQ(hp_sigv4_sign(&p, &r, &a), -1);
	p = example_params();
	p.access_key = "";
	T_EQ(hp_sigv4_sign(&p, &r, &a), -1);
	p = example_params();
	p.secret_key = NULL;
	T_EQ(hp_sigv4_sign(&p, &r, &a), -1);
	hp_buf_release(&a);
}

/* ---- golden cases under tests/data/sigv4/<case>/ -------------------------- */

struct golden {
	char *context, *request, *creq, *sts, *authz;
	size_t request_len;
	char *method, *path, *query;
	struct hp_header headers[32];
	char *values[32];
	size_t nheaders;
	const char *body;
	size_t body_len;
	struct hp_sigv4_params p;
	char *fields[6];
};

static char *slurp(const char *dir, const char *file, size_t *len)
{
	char path[512];
	struct hp_buf b = HP_BUF_INIT(1 << 20);
	char chunk[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), GOLDEN_DIR "%s/%s", dir, file);
	f = fopen(path, "rb");
	if (!f)
		T_FAILF("cannot open '%s' (tests run from the repository root)", path);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		hp_buf_putn(&b, chunk, n);
	fclose(f);
	return hp_buf_detach(&b, len);
}

/* Value of "key=" in the context file, or NULL. */
static char *context_get(const char *ctx, const char *key)
{
	size_t kl = strlen(key);
	const char *p;

	for (p = ctx; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			const char *end = strchr(p + kl + 1, '\n');

			return xstrndup(p + kl + 1, end ? (size_t)(end - p - kl - 1) : strlen(p + kl + 1));
		}
	}
	return NULL;
}

static time_t parse_amz(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!s || sscanf(s, "%4d%2d%2dT%2d%2d%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
			 &tm.tm_min, &tm.tm_sec) != 6)
		T_FAILF("bad time '%s' in a golden context", s ? s : "(none)");
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return timegm(&tm);
}

/* Request line, "Name:value" headers (folded lines joined with "\n"), body. */
static void parse_golden_request(struct golden *g)
{
	char *s = g->request, *end = g->request + g->request_len, *nl, *sp, *ver = NULL, *q, *p;

	nl = memchr(s, '\n', (size_t)(end - s));
	T_ASSERT(nl != NULL);
	*nl = '\0';
	sp = strchr(s, ' ');
	for (p = s; (p = strstr(p, " HTTP/")) != NULL; p++)
		ver = p;
	T_ASSERT(sp && ver && ver > sp);
	*sp = *ver = '\0';
	g->method = s;
	q = strchr(sp + 1, '?');
	if (q)
		*q = '\0';
	g->path = sp + 1;
	g->query = q ? q + 1 : NULL;
	for (s = nl + 1; s < end; s = nl + 1) {
		char *colon;

		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			nl = end;
		*nl = '\0';
		if (!*s)
			break;
		if (*s == ' ' || *s == '\t') {
			char *joined;

			T_ASSERT(g->nheaders > 0);
			joined = xasprintf("%s\n%s", g->values[g->nheaders - 1], s);
			free(g->values[g->nheaders - 1]);
			g->values[g->nheaders - 1] = joined;
			g->headers[g->nheaders - 1].value = joined;
			continue;
		}
		colon = strchr(s, ':');
		T_ASSERT(colon && g->nheaders < HP_ARRAY_LEN(g->headers) - 1);
		*colon = '\0';
		g->headers[g->nheaders].name = s;
		g->values[g->nheaders] = xstrdup(colon + 1);
		g->headers[g->nheaders].value = g->values[g->nheaders];
		g->nheaders++;
	}
	g->body = nl < end ? nl + 1 : end;
	g->body_len = (size_t)(end - g->body);
}

static void golden_load(struct golden *g, const char *name)
{
	static const char *const keys[] = { "access_key", "secret_key", "token", "region", "service",
					    "time" };
	size_t i;

	memset(g, 0, sizeof(*g));
	g->context = slurp(name, "context", NULL);
	g->request = slurp(name, "request.txt", &g->request_len);
	g->creq = slurp(name, "canonical-request.txt", NULL);
	g->sts = slurp(name, "string-to-sign.txt", NULL);
	g->authz = slurp(name, "authorization.txt", NULL);
	for (i = 0; i < HP_ARRAY_LEN(keys); i++)
		g->fields[i] = context_get(g->context, keys[i]);
	g->p.access_key = g->fields[0];
	g->p.secret_key = g->fields[1];
	g->p.session_token = g->fields[2];
	g->p.region = g->fields[3];
	g->p.service = g->fields[4];
	g->p.now = parse_amz(g->fields[5]);
	parse_golden_request(g);
	if (g->p.session_token) {
		/* The caller adds the token header; the signer only signs it. */
		g->headers[g->nheaders].name = "X-Amz-Security-Token";
		g->values[g->nheaders] = xstrdup(g->p.session_token);
		g->headers[g->nheaders].value = g->values[g->nheaders];
		g->nheaders++;
	}
}

static void golden_free(struct golden *g)
{
	size_t i;

	for (i = 0; i < g->nheaders; i++)
		free(g->values[i]);
	for (i = 0; i < HP_ARRAY_LEN(g->fields); i++)
		hp_free_secret(g->fields[i]);
	free(g->context);
	free(g->request);
	free(g->creq);
	free(g->sts);
	free(g->authz);
}

/* Runs every stage on its own and names the first one that diverges. */
static void golden(const char *name)
{
	struct golden g;
	struct hp_sigv4_request r;
	struct hp_buf creq = HP_BUF_INIT(1 << 20), want_creq = HP_BUF_INIT(1 << 20);
	struct hp_buf sts = HP_BUF_INIT(4096), authz = HP_BUF_INIT(4096);
	unsigned char key[32], sig[32];
	unsigned int siglen = 0;
	char sighex[65];
	const char *at;
	size_t k;

	golden_load(&g, name);
	memset(&r, 0, sizeof(r));
	r.method = g.method;
	r.path = g.path;
	r.query = g.query;
	r.headers = g.headers;
	r.nheaders = g.nheaders;
	r.payload = g.body;
	r.payload_len = g.body_len;

	/* Stage 1: canonical request. */
	T_EQ(hp_sigv4_canonical_request(&r, &creq, NULL), 0);
	if (strcmp(creq.buf, g.creq))
		T_FAILF("%s: canonical request differs:\n%s\n--- expected ---\n%s", name, creq.buf, g.creq);

	/* Stage 2: string to sign, from the expected canonical request. */
	hp_buf_puts(&want_creq, g.creq);
	T_EQ(hp_sigv4_string_to_sign(&g.p, &want_creq, &sts), 0);
	if (strcmp(sts.buf, g.sts))
		T_FAILF("%s: string to sign differs:\n%s\n--- expected ---\n%s", name, sts.buf, g.sts);

	/* Stage 3: signing key, checked through the expected signature. */
	hp_sigv4_signing_key(&g.p, key);
	T_ASSERT(HMAC(EVP_sha256(), key, 32, (const unsigned char *)g.sts, strlen(g.sts), sig, &siglen));
	hp_wipe(key, sizeof(key));
	for (k = 0; k < 32; k++)
		snprintf(sighex + 2 * k, 3, "%02x", sig[k]);
	at = strstr(g.authz, "Signature=");
	T_ASSERT(at != NULL);
	if (strcmp(at + 10, sighex))
		T_FAILF("%s: signing key gives signature %s, expected %s", name, sighex, at + 10);

	/* Stage 4: the whole Authorization value. */
	T_EQ(hp_sigv4_sign(&g.p, &r, &authz), 0);
	if (strcmp(authz.buf, g.authz))
		T_FAILF("%s: authorization differs:\n%s\n--- expected ---\n%s", name, authz.buf, g.authz);

	hp_buf_release(&creq);
	hp_buf_release(&want_creq);
	hp_buf_release(&sts);
	hp_buf_release(&authz);
	golden_free(&g);
}

static void t_golden_sagemaker_describe_cluster(void) { golden("sagemaker-describe-cluster"); }
static void t_golden_eks_describe_cluster(void) { golden("eks-describe-cluster"); }
static void t_golden_ec2_describe_subnets(void) { golden("ec2-describe-subnets"); }
static void t_golden_sts_get_caller_identity_token(void) { golden("sts-get-caller-identity-token"); }
static void t_golden_servicequotas_get_quota_token(void) { golden("servicequotas-get-quota-token"); }
static void t_golden_eks_path_encoded(void) { golden("eks-path-encoded"); }
static void t_golden_logs_query_sorting(void) { golden("logs-query-sorting"); }
static void t_golden_ssm_header_whitespace(void) { golden("ssm-header-whitespace"); }

/* ---- no key material in freed memory -------------------------------------- */

/*
 * Every free() is watched while `scanning` is set: a freed block that still
 * holds the secret or one of the derived keys counts as a leak. Under
 * AddressSanitizer the sanitizer's free hook does the watching; otherwise
 * this program's free() looks at the block before handing it to glibc.
 * (Blocks that realloc() moves are freed inside the allocator and are not
 * seen in the glibc variant.)
 */
#define WIPE_SECRET "tEsT/SeCrEt+KeY0123456789abcdefghijKLMNOP"

static unsigned char wipe_patterns[5][48];
static size_t wipe_lens[5];
static volatile int scanning;
static volatile int leaks, freed_blocks;

static void scan_block(const unsigned char *p, size_t n)
{
	size_t i, k;

	freed_blocks++;
	for (k = 0; k < HP_ARRAY_LEN(wipe_patterns); k++) {
		size_t len = wipe_lens[k];

		for (i = 0; len && i + len <= n; i++)
			if (p[i] == wipe_patterns[k][0] && !memcmp(p + i, wipe_patterns[k], len)) {
				leaks++;
				return;
			}
	}
}

/* ASan and TSan bring their own allocator: watch frees through their hooks, never free() itself. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define T_UNDER_ASAN 1
#endif
#endif
#if (defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)) && !defined(T_UNDER_ASAN)
#define T_UNDER_ASAN 1
#endif

#ifdef T_UNDER_ASAN
int __sanitizer_install_malloc_and_free_hooks(void (*on_alloc)(const volatile void *, size_t),
					      void (*on_free)(const volatile void *));
size_t __sanitizer_get_allocated_size(const volatile void *p);

static void asan_alloc_hook(const volatile void *p, size_t n)
{
	(void)p;
	(void)n;
}

static void asan_free_hook(const volatile void *p)
{
	if (scanning && p)
		scan_block((const unsigned char *)(uintptr_t)p, __sanitizer_get_allocated_size(p));
}

static void watch_frees(void)
{
	static int installed;

	if (!installed)
		__sanitizer_install_malloc_and_free_hooks(asan_alloc_hook, asan_free_hook);
	installed = 1;
}
#else
void __libc_free(void *p);

void free(void *p)
{
	if (scanning && p)
		scan_block(p, malloc_usable_size(p));
	__libc_free(p);
}

static void watch_frees(void)
{
}
#endif

static void hex_to_bytes(const char *hex, unsigned char *out)
{
	size_t i;

	for (i = 0; hex[2 * i]; i++) {
		unsigned int v;

		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (unsigned char)v;
	}
}

static void t_secret_wiped(void)
{
	/* kDate, kRegion, kService, kSigning for WIPE_SECRET, 20150830,
	 * us-west-2, sagemaker (computed independently). */
	static const char *const derived[] = {
		"39f74d1b54dd702c815ff1834983c155a824f4f498f36ef9fca8235931954eda",
		"0fd85828c3c6b88eba72c30824b4d91881681b90823e542b05d6bfd8a38a371c",
		"664e1927d49bb6ab7de78dd67aa0bf9245f0b8b2be65f04a4a0051552bed8cb5",
		"403ce19fd11e65f84dc2131366733606fd185ca1ff1ddce46a46600780dc37e6",
	};
	static const struct hp_header h[] = {
		{ "Content-Type", "application/x-amz-json-1.1" },
		{ "Host", "api.sagemaker.us-west-2.amazonaws.com" },
		{ "X-Amz-Date", "20150830T123600Z" },
		{ "X-Amz-Target", "SageMaker.DescribeCluster" },
	};
	struct hp_sigv4_params p = example_params();
	struct hp_sigv4_request r;
	struct hp_buf a = HP_BUF_INIT(4096);
	unsigned char key[32];
	char *probe;
	size_t i;
	int rc;

	memcpy(wipe_patterns[0], WIPE_SECRET, strlen(WIPE_SECRET));
	wipe_lens[0] = strlen(WIPE_SECRET);
	for (i = 0; i < HP_ARRAY_LEN(derived); i++) {
		hex_to_bytes(derived[i], wipe_patterns[i + 1]);
		wipe_lens[i + 1] = 32;
	}
	p.secret_key = WIPE_SECRET;
	p.region = "us-west-2";
	p.service = "sagemaker";
	memset(&r, 0, sizeof(r));
	r.method = "POST";
	r.path = "/";
	r.headers = h;
	r.nheaders = HP_ARRAY_LEN(h);
	r.payload = "{\"ClusterName\":\"my-cluster\"}";
	r.payload_len = strlen(r.payload);
	watch_frees();

	/* The watcher must see a leak through both free() paths. */
	probe = xstrdup("prefix " WIPE_SECRET " suffix");
	leaks = 0;
	scanning = 1;
	free(probe);
	scanning = 0;
	T_EQ(leaks, 1);
	probe = OPENSSL_malloc(64);
	T_ASSERT(probe != NULL);
	memcpy(probe + 5, wipe_patterns[4], 32);
	leaks = 0;
	scanning = 1;
	OPENSSL_free(probe);
	scanning = 0;
	T_EQ(leaks, 1);

	/* Derivation alone, then a whole signature. */
	leaks = 0;
	freed_blocks = 0;
	scanning = 1;
	hp_sigv4_signing_key(&p, key);
	rc = hp_sigv4_sign(&p, &r, &a);
	scanning = 0;
	T_EQ(rc, 0);
	T_ASSERT(!memcmp(key, wipe_patterns[4], 32));
	hp_wipe(key, sizeof(key));
	T_ASSERT(freed_blocks > 0);
	T_EQ(leaks, 0);
	T_CONTAINS(a.buf, "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=");
	hp_buf_release(&a);
}

/* The signing key against OpenSSL's own HMAC, with secrets shorter and longer than a block. */
static void t_signing_key_matches_openssl_hmac(void)
{
	static const char *const secrets[] = {
		"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "",
		"a-secret-far-longer-than-the-sixty-four-bytes-of-one-sha256-block-0123456789",
	};
	size_t i;

	for (i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		struct hp_sigv4_params p;
		unsigned char got[32], k1[32], k2[32], want[32];
		char seed[128];
		unsigned int n;

		memset(&p, 0, sizeof(p));
		p.secret_key = secrets[i];
		p.region = "us-west-2";
		p.service = "sagemaker";
		p.now = 1440938160;
		hp_sigv4_signing_key(&p, got);
		snprintf(seed, sizeof(seed), "AWS4%s", secrets[i]);
		HMAC(EVP_sha256(), seed, (int)strlen(seed), (const unsigned char *)"20150830", 8, k1, &n);
		HMAC(EVP_sha256(), k1, 32, (const unsigned char *)"us-west-2", 9, k2, &n);
		HMAC(EVP_sha256(), k2, 32, (const unsigned char *)"sagemaker", 9, k1, &n);
		HMAC(EVP_sha256(), k1, 32, (const unsigned char *)"aws4_request", 12, want, &n);
		T_ASSERT(!memcmp(got, want, 32));
	}
}

/*
 * The kept signing keys: another secret, day, region or service in between
 * never lends its key; the right one still gives the suite's signature.
 */
static void t_signing_keys_kept_apart(void)
{
	static const struct hp_header h[] = {
		{ "Host", "example.amazonaws.com" },
		{ "X-Amz-Date", "20150830T123600Z" },
	};
	static const char want[] = "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31";
	struct hp_sigv4_params p = example_params(), q;
	struct hp_sigv4_request r;
	struct hp_buf a = HP_BUF_INIT(1024);
	int round, i;

	memset(&r, 0, sizeof(r));
	r.method = "GET";
	r.path = "/";
	r.headers = h;
	r.nheaders = 2;
	/* More others than the cache holds, twice, the right one between each. */
	for (round = 0; round < 2; round++) {
		for (i = 0; i < 12; i++) {
			char secret[64], region[32];

			q = p;
			snprintf(secret, sizeof(secret), "%sX%d", p.secret_key, i);
			snprintf(region, sizeof(region), "us-test-%d", i);
			if (i % 3 == 0)
				q.secret_key = secret;
			else if (i % 3 == 1)
				q.region = region;
			else
				q.now = p.now + 86400 * (i + 1);
			hp_buf_reset(&a);
			T_EQ(hp_sigv4_sign(&q, &r, &a), 0);
			T_NOT_CONTAINS(a.buf, want);
			hp_buf_reset(&a);
			T_EQ(hp_sigv4_sign(&p, &r, &a), 0);
			T_CONTAINS(a.buf, want);
		}
	}
	/* A secret that differs in its last byte only. */
	q = p;
	q.secret_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEZ";
	hp_buf_reset(&a);
	T_EQ(hp_sigv4_sign(&q, &r, &a), 0);
	T_NOT_CONTAINS(a.buf, want);
	hp_buf_release(&a);
}

T_MAIN(T(t_amz_date), T(t_sha256_hex), T(t_canonical_path), T(t_canonical_query),
       T(t_canonical_headers), T(t_canonical_request_whole), T(t_canonical_payload_header),
       T(t_canonical_errors), T(t_string_to_sign), T(t_signing_key), T(t_sign_vanilla),
       T(t_sign_token_and_params), T(t_golden_sagemaker_describe_cluster),
       T(t_golden_eks_describe_cluster), T(t_golden_ec2_describe_subnets),
       T(t_golden_sts_get_caller_identity_token), T(t_golden_servicequotas_get_quota_token),
       T(t_golden_eks_path_encoded), T(t_golden_logs_query_sorting),
       T(t_golden_ssm_header_whitespace), T(t_secret_wiped),
       T(t_signing_key_matches_openssl_hmac), T(t_signing_keys_kept_apart))
