/*
 * AWS Signature Version 4 (header signing, HMAC-SHA256) for the non-S3
 * services hpnode calls: canonical request, string to sign, signing key and
 * Authorization value. Pure functions: no clock, environment or network.
 * S3's canonical URI (the path as sent) on request; left out: presigned
 * URLs, chunked payloads and SigV4a.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "hp/sigv4.h"
#include "hp/util.h"

#define ALGORITHM "AWS4-HMAC-SHA256"
#define TERMINATOR "aws4_request"

static const char hexdigits[] = "0123456789abcdef";
static const char hexupper[] = "0123456789ABCDEF";

/* One header after canonicalisation: lower-case name, trimmed value. */
struct canon_header {
	char *name;
	char *value;
	size_t order;   /* position in the request, keeps duplicates in order */
};

/* One decoded and re-encoded query parameter. */
struct canon_param {
	char *name;
	char *value;
};

static int is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == '~';
}

static int is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void to_hex(const unsigned char *in, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hexdigits[in[i] >> 4];
		out[2 * i + 1] = hexdigits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Append n bytes, percent-encoding everything but the unreserved set. */
static int add_encoded(struct hp_buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[3];

		if (is_unreserved(c)) {
			if (hp_buf_addc(b, (char)c))
				return -1;
			continue;
		}
		esc[0] = '%';
		esc[1] = hexupper[c >> 4];
		esc[2] = hexupper[c & 15];
		if (hp_buf_add(b, esc, 3))
			return -1;
	}
	return 0;
}

/* Percent-decode s[0..n) into a fresh string; a '%' not followed by two hex
 * digits stays a literal '%'. '+' is a literal plus, not a space. */
static char *uri_decode(const char *s, size_t n)
{
	char *out = xmalloc(n + 1);
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval((unsigned char)s[i + 1]) >= 0 &&
		    hexval((unsigned char)s[i + 2]) >= 0) {
			out[o++] = (char)(hexval((unsigned char)s[i + 1]) * 16 +
					  hexval((unsigned char)s[i + 2]));
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return out;
}

/* Encoded form of the (possibly encoded) bytes s[0..n), as a fresh string. */
static char *reencode(const char *s, size_t n, size_t cap)
{
	struct hp_buf b = HP_BUF_INIT(cap);
	char *raw = uri_decode(s, n);
	char *out = NULL;

	if (!add_encoded(&b, raw, strlen(raw)))
		out = hp_buf_detach(&b, NULL);
	hp_buf_release(&b);
	free(raw);
	return out;
}

/*
 * Canonical URI for non-S3 services: drop empty and "." segments, let ".."
 * remove the segment before it, then percent-encode every segment. A path
 * that is already percent-encoded gets encoded once more ('%' -> "%25"), as
 * the services expect. Like botocore, a trailing '/' survives only when the
 * path ends in '/' and some segment remains.
 */
static int add_canonical_path(struct hp_buf *out, const char *path)
{
	struct hp_str *seg;
	size_t nseg = 0, maxseg = 1, i;
	const char *p, *end;
	int rc = 0;

	if (!path || !*path)
		path = "/";
	for (p = path; *p; p++)
		if (*p == '/')
			maxseg++;
	seg = xcalloc(maxseg, sizeof(*seg));
	for (p = path; *p; p = end) {
		size_t len;

		while (*p == '/')
			p++;
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		len = (size_t)(end - p);
		if (!len || (len == 1 && p[0] == '.'))
			continue;
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (nseg)
				nseg--;
			continue;
		}
		seg[nseg].p = p;
		seg[nseg].len = len;
		nseg++;
	}
	if (hp_buf_addc(out, '/'))
		rc = -1;
	for (i = 0; !rc && i < nseg; i++) {
		if (i && hp_buf_addc(out, '/'))
			rc = -1;
		else if (add_encoded(out, seg[i].p, seg[i].len))
			rc = -1;
	}
	if (!rc && nseg && path[strlen(path) - 1] == '/' && hp_buf_addc(out, '/'))
		rc = -1;
	free(seg);
	return rc;
}

static int cmp_param(const void *a, const void *b)
{
	const struct canon_param *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->value, y->value);
}

static void free_params(struct canon_param *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

/*
 * Canonical query: each "name=value" piece is decoded and re-encoded with
 * the unreserved set, a piece without '=' gets an empty value, empty pieces
 * are dropped, and the list is sorted by encoded name, then encoded value.
 */
static int add_canonical_query(struct hp_buf *out, const char *query)
{
	struct canon_param *v;
	size_t n = 0, max = 1, i;
	const char *p, *end;
	int rc = 0;

	if (!query || !*query)
		return 0;
	for (p = query; *p; p++)
		if (*p == '&')
			max++;
	v = xcalloc(max, sizeof(*v));
	for (p = query; !rc && *p; p = *end ? end + 1 : end) {
		const char *eq;

		end = strchr(p, '&');
		if (!end)
			end = p + strlen(p);
		if (end == p)
			continue;
		eq = memchr(p, '=', (size_t)(end - p));
		if (!eq)
			eq = end;
		v[n].name = reencode(p, (size_t)(eq - p), out->max);
		v[n].value = eq < end ? reencode(eq + 1, (size_t)(end - eq - 1), out->max)
				      : xstrdup("");
		if (!v[n].name || !v[n].value)
			rc = -1;
		n++;
	}
	if (!rc)
		qsort(v, n, sizeof(*v), cmp_param);
	for (i = 0; !rc && i < n; i++) {
		if ((i && hp_buf_addc(out, '&')) || hp_buf_adds(out, v[i].name) ||
		    hp_buf_addc(out, '=') || hp_buf_adds(out, v[i].value))
			rc = -1;
	}
	free_params(v, n);
	return rc;
}

/* Trimmed copy of s with every inner whitespace run (newlines of folded
 * values included) turned into one space. */
static char *collapse_spaces(const char *s)
{
	char *out = xmalloc(strlen(s) + 1);
	size_t o = 0;
	int pending = 0;

	for (; *s; s++) {
		if (is_space((unsigned char)*s)) {
			pending = o > 0;
			continue;
		}
		if (pending)
			out[o++] = ' ';
		pending = 0;
		out[o++] = *s;
	}
	out[o] = '\0';
	return out;
}

/* Lower-case copy of a header name without surrounding whitespace. */
static char *lower_name(const char *s)
{
	size_t n;
	char *out, *q;

	while (is_space((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && is_space((unsigned char)s[n - 1]))
		n--;
	out = xstrndup(s, n);
	for (q = out; *q; q++)
		if (*q >= 'A' && *q <= 'Z')
			*q = (char)(*q - 'A' + 'a');
	return out;
}

static int cmp_header(const void *a, const void *b)
{
	const struct canon_header *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void free_headers(struct canon_header *h, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(h[i].name);
		hp_free_secret(h[i].value);   /* may be the session token */
	}
	free(h);
}

/*
 * Canonical header block ("name:value\n" per distinct name, values of a
 * repeated name joined with ',' in request order) plus the signed-header
 * list. When the request carries one x-amz-content-sha256 header, a copy of
 * its value goes to *payload_hash: it then stands in for the payload digest.
 */
static int add_canonical_headers(struct hp_buf *out, struct hp_buf *signed_headers,
				 const struct hp_sigv4_request *req, char **payload_hash)
{
	struct canon_header *h;
	size_t i, n = req->nheaders;
	int rc = 0;

	if (!n)
		return 0;
	h = xcalloc(n, sizeof(*h));
	for (i = 0; i < n; i++) {
		h[i].name = lower_name(req->headers[i].name ? req->headers[i].name : "");
		h[i].value = collapse_spaces(req->headers[i].value ? req->headers[i].value : "");
		h[i].order = i;
		if (!*h[i].name)
			rc = -1;
	}
	if (!rc)
		qsort(h, n, sizeof(*h), cmp_header);
	for (i = 0; !rc && i < n; i++) {
		int first = i == 0 || strcmp(h[i].name, h[i - 1].name) != 0;
		int last = i + 1 == n || strcmp(h[i].name, h[i + 1].name) != 0;

		if (first) {
			if (hp_buf_adds(out, h[i].name) || hp_buf_addc(out, ':'))
				rc = -1;
			if (signed_headers && ((signed_headers->len && hp_buf_addc(signed_headers, ';')) ||
					       hp_buf_adds(signed_headers, h[i].name)))
				rc = -1;
		} else if (hp_buf_addc(out, ',')) {
			rc = -1;
		}
		if (!rc && (hp_buf_adds(out, h[i].value) || (last && hp_buf_addc(out, '\n'))))
			rc = -1;
		if (!rc && first && last && !strcmp(h[i].name, "x-amz-content-sha256"))
			*payload_hash = xstrdup(h[i].value);
	}
	free_headers(h, n);
	return rc;
}

int hp_sigv4_canonical_request(const struct hp_sigv4_request *req, struct hp_buf *out,
			       struct hp_buf *signed_headers)
{
	struct hp_buf sh = HP_BUF_INIT(out->max);
	char digest[65];
	char *payload_hash = NULL;
	const char *m;
	int rc = 0;

	if (!req->method || !*req->method)
		return -1;
	for (m = req->method; !rc && *m; m++) {
		char c = *m >= 'a' && *m <= 'z' ? (char)(*m - 'a' + 'A') : *m;

		rc = hp_buf_addc(out, c);
	}
	if (!rc)
		rc = hp_buf_addc(out, '\n');
	if (!rc && req->s3)
		rc = hp_buf_adds(out, req->path && *req->path ? req->path : "/");
	else if (!rc)
		rc = add_canonical_path(out, req->path);
	if (!rc)
		rc = hp_buf_addc(out, '\n');
	if (!rc)
		rc = add_canonical_query(out, req->query);
	if (!rc)
		rc = hp_buf_addc(out, '\n');
	if (!rc)
		rc = add_canonical_headers(out, &sh, req, &payload_hash);
	if (!rc && (hp_buf_addc(out, '\n') || hp_buf_add(out, sh.buf, sh.len) ||
		    hp_buf_addc(out, '\n')))
		rc = -1;
	if (!rc && !payload_hash) {
		hp_sha256_hex(req->payload ? req->payload : "", req->payload ? req->payload_len : 0,
			      digest);
		rc = hp_buf_adds(out, digest);
	} else if (!rc) {
		rc = hp_buf_adds(out, payload_hash);
	}
	if (!rc && signed_headers)
		rc = hp_buf_add(signed_headers, sh.buf, sh.len);
	free(payload_hash);
	hp_buf_release(&sh);
	return rc;
}

void hp_sigv4_amz_date(time_t now, char *amzdate, char *date)
{
	struct tm tm;

	if (!gmtime_r(&now, &tm) || strftime(amzdate, 17, "%Y%m%dT%H%M%SZ", &tm) != 16)
		memcpy(amzdate, "00000000T000000Z", 17);
	memcpy(date, amzdate, 8);
	date[8] = '\0';
}

/*
 * SHA-256 fetched from the default provider once: OpenSSL 3 otherwise looks
 * the algorithm up by name (locks, hash tables) on every digest, which cost
 * more than the hashing itself — seven times per signed request.
 */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void fetch_sha256(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *sha256(void)
{
	pthread_once(&sha256_once, fetch_sha256);
	return sha256_md ? sha256_md : EVP_sha256();
}

/* out = SHA-256(a || b); dies if libcrypto fails. */
static void sha256_2(const void *a, size_t an, const void *b, size_t bn, unsigned char out[32])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int len = 0;

	if (!ctx || !EVP_DigestInit_ex2(ctx, sha256(), NULL) || !EVP_DigestUpdate(ctx, a, an) ||
	    (bn && !EVP_DigestUpdate(ctx, b, bn)) || !EVP_DigestFinal_ex(ctx, out, &len) || len != 32)
		hp_die("sha-256 digest failed");
	EVP_MD_CTX_free(ctx);
}

void hp_sha256_hex(const void *data, size_t n, char out[65])
{
	unsigned char md[32];

	sha256_2(n ? data : "", n, NULL, 0, md);
	to_hex(md, 32, out);
}

/* Scope "<date>/<region>/<service>/aws4_request" into out. */
static int add_scope(struct hp_buf *out, const struct hp_sigv4_params *p, const char *date)
{
	if (!p->region || !*p->region || !p->service || !*p->service)
		return -1;
	return hp_buf_addf(out, "%s/%s/%s/" TERMINATOR, date, p->region, p->service);
}

int hp_sigv4_string_to_sign(const struct hp_sigv4_params *p, const struct hp_buf *creq,
			    struct hp_buf *out)
{
	char amzdate[17], date[9], digest[65];

	hp_sigv4_amz_date(p->now, amzdate, date);
	hp_sha256_hex(creq->buf, creq->len, digest);
	if (hp_buf_addf(out, ALGORITHM "\n%s\n", amzdate) || add_scope(out, p, date) ||
	    hp_buf_addf(out, "\n%s", digest))
		return -1;
	return 0;
}

/*
 * out = HMAC-SHA256(key, msg) (RFC 2104: H((K ^ opad) || H((K ^ ipad) || msg))
 * with K the key, or its digest when longer than the 64-byte block),
 * on the SHA-256 fetched once; dies if libcrypto fails.
 */
static void hmac256(const void *key, size_t keylen, const void *msg, size_t msglen,
		    unsigned char out[32])
{
	unsigned char k[64], pad[64], inner[32];
	size_t i;

	memset(k, 0, sizeof(k));
	if (keylen > sizeof(k))
		sha256_2(key, keylen, NULL, 0, k);
	else
		memcpy(k, key, keylen);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = (unsigned char)(k[i] ^ 0x36);
	sha256_2(pad, sizeof(pad), msg, msglen, inner);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = (unsigned char)(k[i] ^ 0x5c);
	sha256_2(pad, sizeof(pad), inner, sizeof(inner), out);
	OPENSSL_cleanse(k, sizeof(k));
	OPENSSL_cleanse(pad, sizeof(pad));
	OPENSSL_cleanse(inner, sizeof(inner));
}

void hp_sigv4_signing_key(const struct hp_sigv4_params *p, unsigned char key[32])
{
	const char *secret = p->secret_key ? p->secret_key : "";
	const char *region = p->region ? p->region : "";
	const char *service = p->service ? p->service : "";
	size_t slen = strlen(secret);
	char amzdate[17], date[9];
	unsigned char k1[32], k2[32];
	char *seed = xmalloc(slen + 5);

	hp_sigv4_amz_date(p->now, amzdate, date);
	memcpy(seed, "AWS4", 4);
	memcpy(seed + 4, secret, slen + 1);
	hmac256(seed, slen + 4, date, 8, k1);                          /* kDate */
	OPENSSL_cleanse(seed, slen + 5);
	free(seed);
	hmac256(k1, 32, region, strlen(region), k2);                   /* kRegion */
	hmac256(k2, 32, service, strlen(service), k1);                 /* kService */
	hmac256(k1, 32, TERMINATOR, sizeof(TERMINATOR) - 1, key);      /* kSigning */
	OPENSSL_cleanse(k1, sizeof(k1));
	OPENSSL_cleanse(k2, sizeof(k2));
}

/* 1 when the request carries x-amz-security-token with exactly token. */
static int carries_token(const struct hp_sigv4_request *req, const char *token)
{
	size_t i;
	int found = 0;

	for (i = 0; i < req->nheaders; i++) {
		char *name = lower_name(req->headers[i].name ? req->headers[i].name : "");

		if (!strcmp(name, "x-amz-security-token")) {
			char *v = collapse_spaces(req->headers[i].value ? req->headers[i].value : "");

			found = !strcmp(v, token);
			hp_free_secret(v);
		}
		free(name);
	}
	return found;
}

/*
 * The signing keys of the last few (secret, date, region, service): one key
 * serves every request of its day, region and service, and deriving it is
 * four HMACs, eight of the twelve digests a signature costs. An entry knows
 * its secret by the secret's SHA-256 only (the secret itself is never kept
 * here), so another secret, or the same one refreshed, never gets its key.
 */
#define KEY_CACHE 8

static struct key_entry {
	int used;
	unsigned char secret_md[32];
	char scope[96];             /* "date/region/service" */
	unsigned char key[32];
} key_cache[KEY_CACHE];
static unsigned key_next;
static pthread_mutex_t key_lock = PTHREAD_MUTEX_INITIALIZER;

static void cached_signing_key(const struct hp_sigv4_params *p, unsigned char key[32])
{
	const char *secret = p->secret_key ? p->secret_key : "";
	char amzdate[17], date[9], scope[sizeof(key_cache[0].scope)];
	unsigned char md[32];
	struct key_entry *e;
	size_t i;

	hp_sigv4_amz_date(p->now, amzdate, date);
	if (snprintf(scope, sizeof(scope), "%s/%s/%s", date, p->region ? p->region : "",
		     p->service ? p->service : "") >= (int)sizeof(scope)) {
		hp_sigv4_signing_key(p, key);   /* a scope too long to keep */
		return;
	}
	sha256_2(secret, strlen(secret), NULL, 0, md);
	pthread_mutex_lock(&key_lock);
	for (i = 0; i < KEY_CACHE; i++) {
		e = &key_cache[i];
		if (e->used && !strcmp(e->scope, scope) && !CRYPTO_memcmp(e->secret_md, md, 32)) {
			memcpy(key, e->key, 32);
			pthread_mutex_unlock(&key_lock);
			OPENSSL_cleanse(md, sizeof(md));
			return;
		}
	}
	pthread_mutex_unlock(&key_lock);
	hp_sigv4_signing_key(p, key);
	pthread_mutex_lock(&key_lock);
	e = &key_cache[key_next++ % KEY_CACHE];
	e->used = 1;
	memcpy(e->secret_md, md, 32);
	memcpy(e->scope, scope, sizeof(scope));
	memcpy(e->key, key, 32);
	pthread_mutex_unlock(&key_lock);
	OPENSSL_cleanse(md, sizeof(md));
}

int hp_sigv4_sign(const struct hp_sigv4_params *p, const struct hp_sigv4_request *req,
		  struct hp_buf *authorization)
{
	struct hp_buf creq = HP_BUF_INIT(HP_MAX_FILE);
	struct hp_buf sh = HP_BUF_INIT(HP_MAX_FILE);
	struct hp_buf sts = HP_BUF_INIT(HP_MAX_LINE);
	unsigned char key[32], sig[32];
	char amzdate[17], date[9], sighex[65];
	int rc = 0;

	if (!p->access_key || !*p->access_key || !p->secret_key)
		rc = -1;
	/* The caller adds the token header; refuse to sign a request that lost it. */
	if (!rc && p->session_token && *p->session_token && !carries_token(req, p->session_token))
		rc = -1;
	if (!rc)
		rc = hp_sigv4_canonical_request(req, &creq, &sh);
	if (!rc)
		rc = hp_sigv4_string_to_sign(p, &creq, &sts);
	if (!rc) {
		cached_signing_key(p, key);
		hmac256(key, sizeof(key), sts.buf, sts.len, sig);
		to_hex(sig, sizeof(sig), sighex);
		OPENSSL_cleanse(key, sizeof(key));
		OPENSSL_cleanse(sig, sizeof(sig));
		hp_sigv4_amz_date(p->now, amzdate, date);
		if (hp_buf_addf(authorization, ALGORITHM " Credential=%s/", p->access_key) ||
		    add_scope(authorization, p, date) ||
		    hp_buf_addf(authorization, ", SignedHeaders=%s, Signature=%s", sh.buf, sighex))
			rc = -1;
		OPENSSL_cleanse(sighex, sizeof(sighex));
	}
	hp_buf_release_secure(&creq);   /* holds the session token */
	hp_buf_release(&sh);
	hp_buf_release(&sts);
	return rc;
}
