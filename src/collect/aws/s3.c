/*
 * `hpnode bundle --upload`: the archive into the caller's bucket (include/hp/s3.h).
 * The only place hpnode writes anything to AWS. Requests are signed here
 * with S3's rules (the path as sent, x-amz-content-sha256 always signed)
 * and sent through hp_sys like every other call; transient failures are
 * retried as the client retries them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "hp/text.h"
#include "hp/json.h"
#include "hp/s3.h"
#include "hp/sigv4.h"
#include "hp/util.h"

#define PUT_MAX ((uint64_t)64 << 20)   /* one PutObject is held in memory: its bound */
#define READ_PIECE ((size_t)1 << 20)
#define FILE_MAX ((uint64_t)5 << 40)  /* S3's largest object */
#define BACKOFF_CAP_MS 20000L
#define XML_NS "http://s3.amazonaws.com/doc/2006-03-01/"

const char *hp_s3_fail_name(enum hp_s3_fail f)
{
	static const char *const names[] = {
		"ok", "no_bucket", "denied", "wrong_region", "auth", "checksum", "local", "network", "other"
	};
	return (unsigned)f < sizeof(names) / sizeof(names[0]) ? names[f] : "other";
}

/* ---- names ---- */

static int bucket_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

static int alnum_lower(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* "192.168.5.4": S3 refuses bucket names formatted as an IP address. */
static int looks_like_ip(const char *b)
{
	int dots = 0;

	for (; *b; b++) {
		if (*b == '.')
			dots++;
		else if (*b < '0' || *b > '9')
			return 0;
	}
	return dots == 3;
}

int hp_s3_uri_parse(const char *uri, struct hp_s3_uri *u, char *why, size_t n)
{
	const char *b, *slash, *p;
	size_t blen, plen;

	memset(u, 0, sizeof(*u));
	why[0] = '\0';
	if (!uri || strncmp(uri, "s3://", 5)) {
		snprintf(why, n, "expected s3://BUCKET or s3://BUCKET/PREFIX");
		return -1;
	}
	b = uri + 5;
	slash = strchr(b, '/');
	blen = slash ? (size_t)(slash - b) : strlen(b);
	if (blen < 3 || blen > 63) {
		snprintf(why, n, "a bucket name has 3 to 63 characters");
		return -1;
	}
	for (p = b; p < b + blen; p++)
		if (!bucket_char(*p)) {
			snprintf(why, n, "a bucket name has only lower-case letters, digits, '.' and '-'");
			return -1;
		}
	memcpy(u->bucket, b, blen);
	u->bucket[blen] = '\0';
	if (!alnum_lower(u->bucket[0]) || !alnum_lower(u->bucket[blen - 1]) ||
	    strstr(u->bucket, "..") || strstr(u->bucket, ".-") || strstr(u->bucket, "-.") ||
	    looks_like_ip(u->bucket)) {
		snprintf(why, n, "'%s' is not a bucket name S3 accepts (it starts and ends with a "
			 "letter or digit, has no '..', and is not an IP address)", u->bucket);
		return -1;
	}
	p = slash ? slash + 1 : "";
	plen = strlen(p);
	if (plen > 900) {
		snprintf(why, n, "the prefix is longer than 900 bytes");
		return -1;
	}
	{
		const char *s = p;

		for (; *s; s++)
			if ((unsigned char)*s < 0x20 || *s == 0x7f) {
				snprintf(why, n, "the prefix contains control characters");
				return -1;
			}
		/* Segments: none empty inside, none "." or "..". */
		for (s = p; *s;) {
			size_t l = strcspn(s, "/");

			if ((l == 0 && s[l] == '/') || (l == 1 && s[0] == '.') ||
			    (l == 2 && s[0] == '.' && s[1] == '.')) {
				snprintf(why, n, "the prefix has an empty, '.' or '..' part");
				return -1;
			}
			s += l;
			if (*s == '/')
				s++;
		}
	}
	memcpy(u->prefix, p, plen + 1);
	if (plen && p[plen - 1] != '/') {
		u->prefix[plen] = '/';
		u->prefix[plen + 1] = '\0';
	}
	return 0;
}

int hp_s3_key(const struct hp_s3_uri *u, const char *local_path, char *key, size_t n)
{
	const char *base = strrchr(local_path, '/');
	int w;

	base = base ? base + 1 : local_path;
	if (!*base)
		return -1;
	w = snprintf(key, n, "%s%s", u->prefix, base);
	return w < 0 || (size_t)w >= n || w > 1024 ? -1 : 0;
}

uint64_t hp_s3_part_size(uint64_t size, uint64_t want)
{
	uint64_t part = want ? want : HP_S3_PART_SIZE, need;

	if (part < HP_S3_MIN_PART)
		part = HP_S3_MIN_PART;
	need = (size + HP_S3_MAX_PARTS - 1) / HP_S3_MAX_PARTS;
	if (part < need)  /* whole MiB */
		part = (need + ((uint64_t)1 << 20) - 1) & ~(((uint64_t)1 << 20) - 1);
	return part;
}

/* ---- replies ---- */

static void copy_member(const cJSON *j, const char *name, char *out, size_t n)
{
	const char *v = hp_json_str(j, name);

	if (n)
		hp_text_str(HP_TEXT_SAFE, v ? v : "", out, n);
}

int hp_s3_parse_error(const char *body, size_t len, char *code, size_t cn, char *msg, size_t mn,
		      char *region, size_t rn)
{
	char root[64];
	cJSON *j;

	if (cn)
		code[0] = '\0';
	if (mn)
		msg[0] = '\0';
	if (rn)
		region[0] = '\0';
	if (!body || !len)
		return -1;
	j = hp_xml_to_json(body, len, root, sizeof(root));
	if (!j)
		return -1;
	if (strcmp(root, "Error") || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return -1;
	}
	copy_member(j, "Code", code, cn);
	copy_member(j, "Message", msg, mn);
	copy_member(j, "Region", region, rn);
	cJSON_Delete(j);
	return 0;
}

int hp_s3_parse_upload_id(const char *body, size_t len, char *id, size_t n)
{
	char root[64];
	const char *v;
	cJSON *j;
	int rc = -1;

	id[0] = '\0';
	if (!body || !len || !(j = hp_xml_to_json(body, len, root, sizeof(root))))
		return -1;
	v = hp_json_str(j, "UploadId");
	/* Printable ASCII only: it goes back into a URL and a signature. */
	if (!strcmp(root, "InitiateMultipartUploadResult") && v && *v && strlen(v) < n) {
		const char *c;

		for (c = v; *c && (unsigned char)*c > 0x20 && (unsigned char)*c < 0x7f; c++)
			;
		if (!*c) {
			hp_strlcpy(id, v, n);
			rc = 0;
		}
	}
	cJSON_Delete(j);
	return rc;
}

int hp_s3_parse_complete(const char *body, size_t len, char *etag, size_t en, char *checksum,
			 size_t cn)
{
	char root[64];
	cJSON *j;
	int rc = -1;

	if (en)
		etag[0] = '\0';
	if (cn)
		checksum[0] = '\0';
	if (!body || !len || !(j = hp_xml_to_json(body, len, root, sizeof(root))))
		return -1;
	/* S3 names it ...Result; moto 5.2 answers ...Response with the same members. */
	if ((!strcmp(root, "CompleteMultipartUploadResult") ||
	     !strcmp(root, "CompleteMultipartUploadResponse")) && cJSON_IsObject(j)) {
		copy_member(j, "ETag", etag, en);
		copy_member(j, "ChecksumSHA256", checksum, cn);
		rc = 0;
	}
	cJSON_Delete(j);
	return rc;
}

/* ---- digests ---- */

static void b64(const unsigned char *in, size_t n, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

static void hex(const unsigned char *in, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = d[in[i] >> 4];
		out[2 * i + 1] = d[in[i] & 15];
	}
	out[2 * n] = '\0';
}

/* The digests one payload is sent with. md5_b64 is "" where MD5 is not available (FIPS). */
struct digests {
	unsigned char sha[32];
	char sha_hex[65], sha_b64[48], md5_hex[33], md5_b64[28];
};

static void digest(const void *p, size_t n, struct digests *d)
{
	unsigned char md5[16];
	unsigned int len = 0;

	EVP_Digest(p, n, d->sha, &len, EVP_sha256(), NULL);
	hex(d->sha, 32, d->sha_hex);
	b64(d->sha, 32, d->sha_b64);
	d->md5_hex[0] = d->md5_b64[0] = '\0';
	if (EVP_Digest(p, n, md5, &len, EVP_md5(), NULL) == 1 && len == 16) {
		hex(md5, 16, d->md5_hex);
		b64(md5, 16, d->md5_b64);
	}
}

/* ---- addressing ---- */

struct target {
	char base[700];    /* scheme://host[:port] */
	char host[400];    /* the Host header */
	char path[4200];   /* URI-encoded: /bucket/key (path style) or /key */
};

static void add_encoded_key(struct hp_buf *b, const char *key)
{
	static const char hx[] = "0123456789ABCDEF";

	for (; *key; key++) {
		unsigned char c = (unsigned char)*key;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
			hp_buf_putc(b, (char)c);
		} else {
			hp_buf_putc(b, '%');
			hp_buf_putc(b, hx[c >> 4]);
			hp_buf_putc(b, hx[c & 15]);
		}
	}
}

/* An AWS S3 host (s3.<region>.amazonaws.com and its FIPS, dual-stack, China forms) over https. */
static int aws_s3_host(const char *endpoint, const char *host, const char *prefix)
{
	if (strncmp(endpoint, "https://", 8) || *prefix)
		return 0;
	if (strncmp(host, "s3.", 3) && strncmp(host, "s3-", 3))
		return 0;
	return hp_ends_with(host, ".amazonaws.com") || hp_ends_with(host, ".amazonaws.com.cn") ||
	       hp_ends_with(host, ".api.aws");
}

/*
 * Virtual-hosted style (bucket.s3.<region>.amazonaws.com/key) on AWS's own
 * hosts, path style (endpoint/bucket/key) on any other endpoint (an
 * emulator, a private gateway) and for bucket names with dots, which the
 * hosts' TLS certificates do not cover.
 */
static int make_target(const char *endpoint, const char *bucket, const char *key, struct target *t)
{
	const char *h = strstr(endpoint, "://"), *slash;
	char host[400], prefix[600];
	size_t hl, sl;
	struct hp_buf path = HP_BUF_INIT(sizeof(t->path) - 1);
	int rc = 0;

	if (!h)
		return -1;
	sl = (size_t)(h + 3 - endpoint);
	h += 3;
	slash = strchr(h, '/');
	hl = slash ? (size_t)(slash - h) : strlen(h);
	if (hl >= sizeof(host) || sl + hl + 64 >= sizeof(t->base))
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	hp_strlcpy(prefix, slash ? slash : "", sizeof(prefix));
	if (*prefix && prefix[strlen(prefix) - 1] == '/')
		prefix[strlen(prefix) - 1] = '\0';
	if (aws_s3_host(endpoint, host, prefix) && !strchr(bucket, '.')) {
		int w = snprintf(t->host, sizeof(t->host), "%s.%s", bucket, host);

		if (w < 0 || (size_t)w >= sizeof(t->host))
			rc = -1;
		w = snprintf(t->base, sizeof(t->base), "%.*s%s", (int)sl, endpoint, t->host);
		if (w < 0 || (size_t)w >= sizeof(t->base))
			rc = -1;
		hp_buf_putc(&path, '/');
	} else {
		int w = snprintf(t->base, sizeof(t->base), "%.*s%s", (int)sl, endpoint, host);

		if (w < 0 || (size_t)w >= sizeof(t->base))
			rc = -1;
		hp_strlcpy(t->host, host, sizeof(t->host));
		hp_buf_printf(&path, "%s/%s/", prefix, bucket);
	}
	add_encoded_key(&path, key);
	if (rc || path.len >= sizeof(t->path))
		rc = -1;
	else
		memcpy(t->path, path.buf, path.len + 1);
	hp_buf_release(&path);
	return rc;
}

/* ---- one request ---- */

struct up {
	struct hp_aws *a;
	const struct hp_s3_put_opts *o;
	struct hp_s3_put_result *r;
	struct target t;
};

struct s3req {
	const char *op;             /* for messages */
	const char *method;
	const char *query;          /* NULL, "uploads", "partNumber=1&uploadId=..." */
	const char *body;
	size_t len;
	const char *content_type;   /* NULL: none */
	const struct digests *d;    /* the payload's; NULL: the empty payload's hash only */
	int sums;                   /* 1: with Content-MD5 and x-amz-checksum-sha256 (object data) */
	int create;                 /* PutObject / CreateMultipartUpload: encryption, checksum algorithm */
};

/* Sign and send once. 0: a reply arrived; -1: none (resp->net, errmsg); -2: no credentials. */
static int send_once(struct up *u, const struct s3req *q, struct hp_http_resp *resp)
{
	struct hp_aws *a = u->a;
	struct hp_header hdr[14];
	struct hp_sigv4_params sp;
	struct hp_sigv4_request sr;
	struct hp_http_req req;
	struct hp_creds fresh;
	const struct hp_creds *cr = &a->creds;
	struct hp_buf url = HP_BUF_INIT(8192), authz = HP_BUF_INIT(4096);
	char amzdate[17], date[9], empty_hash[65];
	size_t nh = 0;
	time_t now;
	int rc;

	memset(&fresh, 0, sizeof(fresh));
	if (a->cp) {
		struct hp_error ce = HP_ERROR_INIT;

		if (hp_creds_provider_get(a->cp, a->debug, &fresh, &ce)) {
			hp_strlcpy(resp->errmsg, ce.msg, sizeof(resp->errmsg));
			return -2;
		}
		cr = &fresh;
	}
	now = (time_t)(a->sys->now_ms(a->sys) / 1000);
	hp_sigv4_amz_date(now, amzdate, date);
	hp_sha256_hex("", 0, empty_hash);
	hdr[nh++] = (struct hp_header){ "Host", u->t.host };
	hdr[nh++] = (struct hp_header){ "X-Amz-Date", amzdate };
	hdr[nh++] = (struct hp_header){ "X-Amz-Content-SHA256", q->d ? q->d->sha_hex : empty_hash };
	if (q->content_type)
		hdr[nh++] = (struct hp_header){ "Content-Type", q->content_type };
	if (q->d && q->sums) {
		if (q->d->md5_b64[0])
			hdr[nh++] = (struct hp_header){ "Content-MD5", q->d->md5_b64 };
		hdr[nh++] = (struct hp_header){ "x-amz-checksum-sha256", q->d->sha_b64 };
	}
	if (q->create) {
		/* CreateMultipartUpload: every part then carries its SHA-256. */
		if (!q->d)
			hdr[nh++] = (struct hp_header){ "x-amz-checksum-algorithm", "SHA256" };
		/* Never an x-amz-acl or x-amz-grant-* header: the bucket's own policy decides. */
		hdr[nh++] = (struct hp_header){ "x-amz-server-side-encryption",
						 u->o->kms_key_id ? "aws:kms" : "AES256" };
		if (u->o->kms_key_id)
			hdr[nh++] = (struct hp_header){ "x-amz-server-side-encryption-aws-kms-key-id",
							 u->o->kms_key_id };
	}
	if (cr->session_token)
		hdr[nh++] = (struct hp_header){ "X-Amz-Security-Token", cr->session_token };
	memset(&sp, 0, sizeof(sp));
	sp.access_key = cr->access_key;
	sp.secret_key = cr->secret_key;
	sp.session_token = cr->session_token;
	sp.region = u->r->region;
	sp.service = hp_svc_info(HP_SVC_S3)->signing_name;
	sp.now = now;
	memset(&sr, 0, sizeof(sr));
	sr.method = q->method;
	sr.path = u->t.path;
	sr.query = q->query;
	sr.headers = hdr;
	sr.nheaders = nh;
	sr.payload = q->body;
	sr.payload_len = q->len;
	sr.s3 = 1;
	if (hp_sigv4_sign(&sp, &sr, &authz)) {
		hp_creds_release(&fresh);
		hp_buf_release(&url);
		hp_buf_release(&authz);
		hp_strlcpy(resp->errmsg, "cannot sign the request", sizeof(resp->errmsg));
		resp->net = HP_NET_IO;
		return -1;
	}
	hdr[nh++] = (struct hp_header){ "Authorization", authz.buf };
	hp_buf_printf(&url, "%s%s%s%s", u->t.base, u->t.path, q->query ? "?" : "",
		      q->query ? q->query : "");
	memset(&req, 0, sizeof(req));
	req.method = q->method;
	req.url = url.buf;
	req.headers = hdr;
	req.nheaders = nh;
	req.body = q->body;
	req.body_len = q->len;
	/* A minute, and as long again as the payload takes at 128 KiB/s. */
	req.timeout_ms = a->timeout_ms * 2 + (long)(q->len / 128);
	req.ca_bundle = a->ca_bundle;
	u->r->attempts++;
	__atomic_add_fetch(&a->stats.calls, 1, __ATOMIC_RELAXED);
	rc = a->sys->http(a->sys, &req, resp);
	hp_creds_release(&fresh);
	hp_buf_release(&url);
	hp_buf_release(&authz);
	return rc;
}

static int transient(const struct hp_http_resp *resp, int rc, const char *code)
{
	if (rc == -2)
		return 0;
	if (rc)
		return resp->net == HP_NET_CONNECT || resp->net == HP_NET_TIMEOUT || resp->net == HP_NET_IO;
	return resp->status == 500 || resp->status == 502 || resp->status == 503 ||
	       resp->status == 504 || !strcmp(code, "SlowDown") || !strcmp(code, "RequestTimeout") ||
	       !strcmp(code, "InternalError");
}

static enum hp_s3_fail classify(long status, const char *code)
{
	static const char *const auth[] = {
		"InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "TokenRefreshRequired",
		"RequestTimeTooSkewed", "InvalidToken", "InvalidSecurity", "MissingSecurityHeader",
	};
	size_t i;

	if (!strcmp(code, "NoSuchBucket"))
		return HP_S3_NO_BUCKET;
	if (status == 301 || status == 307 || !strcmp(code, "PermanentRedirect") ||
	    !strcmp(code, "TemporaryRedirect") || !strcmp(code, "AuthorizationHeaderMalformed") ||
	    !strcmp(code, "IllegalLocationConstraintException"))
		return HP_S3_WRONG_REGION;
	for (i = 0; i < sizeof(auth) / sizeof(auth[0]); i++)
		if (!strcmp(code, auth[i]))
			return HP_S3_AUTH;
	if (status == 403 || !strcmp(code, "AccessDenied") || !strcmp(code, "AllAccessDisabled") ||
	    hp_starts_with(code, "KMS."))
		return HP_S3_DENIED;
	if (!strcmp(code, "BadDigest") || !strcmp(code, "InvalidDigest") ||
	    !strcmp(code, "XAmzContentSHA256Mismatch"))
		return HP_S3_CHECKSUM;
	return HP_S3_OTHER;
}

static void fail_at(struct up *u, const char *op, enum hp_s3_fail f, long status, const char *code,
		    const char *msg)
{
	struct hp_s3_put_result *r = u->r;

	r->fail = f;
	r->status = status;
	hp_strlcpy(r->op, op, sizeof(r->op));
	hp_text_str(HP_TEXT_SAFE, code ? code : "", r->code, sizeof(r->code));
	hp_text_str(HP_TEXT_SAFE, msg ? msg : "", r->message, sizeof(r->message));
}

static long backoff_ms(struct hp_aws *a, int attempt)
{
	long cap = 1000L << (attempt - 1 < 5 ? attempt - 1 : 5);
	double rnd = (double)a->sys->random(a->sys) / 4294967296.0;

	if (cap > BACKOFF_CAP_MS)
		cap = BACKOFF_CAP_MS;
	return (long)(rnd * (double)cap);
}

/*
 * One operation with its retries. 0 with resp holding the 2xx reply (the
 * caller releases it), or -1 with u->r's failure filled.
 */
static int s3_call(struct up *u, const struct s3req *q, struct hp_http_resp *resp)
{
	struct hp_aws *a = u->a;
	int attempt, max = a->max_attempts > 0 ? a->max_attempts : 3;

	for (attempt = 1;; attempt++) {
		char code[96], msg[512], region[40], hdr[64];
		int rc;

		hp_http_resp_init(resp);
		rc = send_once(u, q, resp);
		code[0] = msg[0] = region[0] = '\0';
		if (!rc) {
			hp_http_resp_header(resp, "x-amz-request-id", u->r->request_id,
					    sizeof(u->r->request_id));
			if (resp->status >= 200 && resp->status < 300)
				return 0;
			hp_s3_parse_error(resp->body.buf, resp->body.len, code, sizeof(code), msg,
					  sizeof(msg), region, sizeof(region));
			if (!code[0])
				snprintf(code, sizeof(code), "HTTP%ld", resp->status);
		}
		if (attempt < max && transient(resp, rc, code)) {
			long ms = backoff_ms(a, attempt);

			if (a->debug)
				fprintf(stderr, "hpnode: debug: s3 %s: %s, retry %d in %ld ms\n", q->op,
					rc ? "no reply" : code, attempt, ms);
			__atomic_add_fetch(&a->stats.retries, 1, __ATOMIC_RELAXED);
			hp_http_resp_release(resp);
			a->sys->sleep_ms(a->sys, ms);
			continue;
		}
		if (rc == -2)
			fail_at(u, q->op, HP_S3_AUTH, 0, "CredentialsExpired", resp->errmsg);
		else if (rc)
			fail_at(u, q->op, HP_S3_NETWORK, 0, resp->net == HP_NET_TIMEOUT ? "Timeout" :
				resp->net == HP_NET_TLS ? "TLSError" : "ConnectionError", resp->errmsg);
		else
			fail_at(u, q->op, classify(resp->status, code), resp->status, code, msg);
		if (!rc && !hp_http_resp_header(resp, "x-amz-bucket-region", hdr, sizeof(hdr)) && hdr[0])
			hp_text_str(HP_TEXT_SAFE, hdr, u->r->bucket_region, sizeof(u->r->bucket_region));
		else if (region[0])
			hp_strlcpy(u->r->bucket_region, region, sizeof(u->r->bucket_region));
		if (u->r->fail == HP_S3_WRONG_REGION && !strcmp(code, "AuthorizationHeaderMalformed") &&
		    (!u->r->bucket_region[0] || !strcmp(u->r->bucket_region, u->r->region)))
			u->r->fail = HP_S3_AUTH;
		if (a->debug)
			fprintf(stderr, "hpnode: debug: s3 %s -> %s %s (HTTP %ld)\n", q->op,
				hp_s3_fail_name(u->r->fail), u->r->code, u->r->status);
		hp_http_resp_release(resp);
		return -1;
	}
}

/*
 * What S3 says it stored against what was sent: its x-amz-checksum-sha256
 * when it returns one, else (SSE-S3 only: with KMS the ETag is no MD5) the
 * ETag against the MD5. -1 on a mismatch (u->r filled).
 */
static int confirm(struct up *u, const char *op, const struct hp_http_resp *resp,
		   const struct digests *d, char *etag, size_t en)
{
	char sum[64], tag[96], clean[96];
	size_t tl;

	hp_http_resp_header(resp, "ETag", tag, sizeof(tag));
	hp_text_str(HP_TEXT_SAFE, tag, clean, sizeof(clean));
	if (etag)
		hp_strlcpy(etag, clean, en);
	if (!hp_http_resp_header(resp, "x-amz-checksum-sha256", sum, sizeof(sum)) && sum[0]) {
		if (strcmp(sum, d->sha_b64)) {
			char m[256];

			snprintf(m, sizeof(m), "S3 stored SHA-256 %.60s, hpnode sent %s", sum, d->sha_b64);
			fail_at(u, op, HP_S3_CHECKSUM, resp->status, "ChecksumMismatch", m);
			return -1;
		}
		return 0;
	}
	tl = strlen(clean);
	if (!u->o->kms_key_id && d->md5_hex[0] && tl == 34 && clean[0] == '"' &&
	    strncmp(clean + 1, d->md5_hex, 32)) {
		char m[256];

		snprintf(m, sizeof(m), "S3's ETag %s is not the MD5 %s hpnode sent", clean, d->md5_hex);
		fail_at(u, op, HP_S3_CHECKSUM, resp->status, "ChecksumMismatch", m);
		return -1;
	}
	return 0;
}

static void note_sse(struct up *u, const struct hp_http_resp *resp)
{
	char v[32];

	if (!hp_http_resp_header(resp, "x-amz-server-side-encryption", v, sizeof(v)) && v[0])
		hp_text_str(HP_TEXT_SAFE, v, u->r->sse, sizeof(u->r->sse));
}

/* ---- the file ---- */

/* Up to n bytes of f into b (appended): the count read, -1 on an error. */
static long read_up_to(struct hp_file_in *f, struct hp_buf *b, size_t n)
{
	char piece[64 << 10];
	size_t got = 0;

	while (got < n) {
		size_t want = n - got < sizeof(piece) ? n - got : sizeof(piece);
		long k = f->read(f, piece, want);

		if (k < 0)
			return -1;
		if (k == 0)
			break;
		if (hp_buf_add(b, piece, (size_t)k))
			return -1;
		got += (size_t)k;
	}
	return (long)got;
}

/* First pass: size and SHA-256 of the whole file. */
static int measure(struct up *u)
{
	struct hp_sys *sys = u->a->sys;
	struct hp_file_in *f = sys->open_read(sys, u->o->path, FILE_MAX);
	EVP_MD_CTX *ctx;
	unsigned char md[32];
	unsigned int len = 0;
	char *piece;
	long k;

	if (!f) {
		fail_at(u, "read", HP_S3_LOCAL, 0, "", strerror(errno));
		return -1;
	}
	ctx = EVP_MD_CTX_new();
	piece = xmalloc(READ_PIECE);
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		hp_die("out of memory");
	while ((k = f->read(f, piece, READ_PIECE)) > 0) {
		EVP_DigestUpdate(ctx, piece, (size_t)k);
		u->r->size += (uint64_t)k;
	}
	if (k < 0)
		fail_at(u, "read", HP_S3_LOCAL, 0, "", strerror(errno));
	EVP_DigestFinal_ex(ctx, md, &len);
	EVP_MD_CTX_free(ctx);
	free(piece);
	f->close(f);
	hex(md, 32, u->r->sha256);
	return k < 0 ? -1 : 0;
}

static int put_object(struct up *u, const struct hp_buf *data)
{
	struct hp_http_resp resp;
	struct digests d;
	struct s3req q;
	int rc;

	digest(data->buf, data->len, &d);
	memset(&q, 0, sizeof(q));
	q.op = "PutObject";
	q.method = "PUT";
	q.body = data->buf;
	q.len = data->len;
	q.content_type = "application/gzip";
	q.d = &d;
	q.sums = 1;
	q.create = 1;
	if (s3_call(u, &q, &resp))
		return -1;
	rc = confirm(u, "PutObject", &resp, &d, u->r->etag, sizeof(u->r->etag));
	if (!rc)
		hp_strlcpy(u->r->checksum, d.sha_b64, sizeof(u->r->checksum));
	note_sse(u, &resp);
	hp_http_resp_release(&resp);
	return rc;
}

struct part {
	char etag[80];
	char sha_b64[48];
	unsigned char sha[32];
};

static void xml_text(struct hp_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '&')
			hp_buf_puts(b, "&amp;");
		else if (*s == '<')
			hp_buf_puts(b, "&lt;");
		else if (*s == '>')
			hp_buf_puts(b, "&gt;");
		else
			hp_buf_putc(b, *s);
	}
}

static void abort_upload(struct up *u, const char *query)
{
	struct hp_http_resp resp;
	struct hp_s3_put_result keep = *u->r;
	struct s3req q;

	memset(&q, 0, sizeof(q));
	q.op = "AbortMultipartUpload";
	q.method = "DELETE";
	q.query = query;
	if (!s3_call(u, &q, &resp)) {
		keep.aborted = 1;
		hp_http_resp_release(&resp);
	}
	keep.attempts = u->r->attempts;
	*u->r = keep;   /* the failure reported is the one that stopped the upload */
}

static int multipart(struct up *u, struct hp_file_in *f, uint64_t part_size)
{
	struct hp_http_resp resp;
	struct s3req q;
	char upload_id[1024], op[32];
	struct hp_buf query = HP_BUF_INIT(4096), data = HP_BUF_INIT((size_t)part_size + 1);
	struct hp_buf body = HP_BUF_INIT((size_t)4 << 20);
	struct part *parts;
	unsigned nparts = (unsigned)((u->r->size + part_size - 1) / part_size), i;
	int rc = -1;

	if (!nparts)
		nparts = 1;
	memset(&q, 0, sizeof(q));
	q.op = "CreateMultipartUpload";
	q.method = "POST";
	q.query = "uploads";
	q.content_type = "application/gzip";
	q.create = 1;
	if (s3_call(u, &q, &resp))
		goto out;
	note_sse(u, &resp);
	if (hp_s3_parse_upload_id(resp.body.buf, resp.body.len, upload_id, sizeof(upload_id))) {
		fail_at(u, q.op, HP_S3_OTHER, resp.status, "MalformedReply",
			"the reply has no UploadId");
		hp_http_resp_release(&resp);
		goto out;
	}
	hp_http_resp_release(&resp);
	parts = xcalloc(nparts, sizeof(*parts));
	for (i = 0; i < nparts; i++) {
		struct digests d;
		long got;

		hp_buf_reset(&data);
		got = read_up_to(f, &data, (size_t)part_size);
		if (got < 0 || (got == 0 && i > 0)) {
			fail_at(u, "read", HP_S3_LOCAL, 0, "", got < 0 ? strerror(errno) :
				"the file became shorter while it was read");
			break;
		}
		digest(data.buf, data.len, &d);
		hp_buf_reset(&query);
		hp_buf_printf(&query, "partNumber=%u&uploadId=", i + 1);
		hp_aws_form_encode(&query, upload_id);
		snprintf(op, sizeof(op), "UploadPart %u", i + 1);
		memset(&q, 0, sizeof(q));
		q.op = op;
		q.method = "PUT";
		q.query = query.buf;
		q.body = data.buf;
		q.len = data.len;
		/* Named, or libcurl would call the bytes a form (and servers parse them so). */
		q.content_type = "application/octet-stream";
		q.d = &d;
		q.sums = 1;
		if (s3_call(u, &q, &resp))
			break;
		rc = confirm(u, op, &resp, &d, parts[i].etag, sizeof(parts[i].etag));
		hp_http_resp_release(&resp);
		if (rc)
			break;
		rc = -1;
		if (!parts[i].etag[0]) {
			fail_at(u, op, HP_S3_OTHER, 200, "MalformedReply", "the reply has no ETag");
			break;
		}
		memcpy(parts[i].sha, d.sha, 32);
		hp_strlcpy(parts[i].sha_b64, d.sha_b64, sizeof(parts[i].sha_b64));
	}
	if (i == nparts) {
		unsigned char all[32];
		unsigned int len = 0;
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();
		char want[64], etag[80], sum[64];
		struct digests bd;

		/* The multipart checksum: SHA-256 of the parts' SHA-256s, "-N". */
		if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
			hp_die("out of memory");
		hp_buf_printf(&body, "<CompleteMultipartUpload xmlns=\"%s\">", XML_NS);
		for (i = 0; i < nparts; i++) {
			EVP_DigestUpdate(ctx, parts[i].sha, 32);
			hp_buf_printf(&body, "<Part><ChecksumSHA256>%s</ChecksumSHA256><ETag>",
				      parts[i].sha_b64);
			xml_text(&body, parts[i].etag);
			hp_buf_printf(&body, "</ETag><PartNumber>%u</PartNumber></Part>", i + 1);
		}
		hp_buf_puts(&body, "</CompleteMultipartUpload>");
		EVP_DigestFinal_ex(ctx, all, &len);
		EVP_MD_CTX_free(ctx);
		b64(all, 32, want);
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "-%u", nparts);
		hp_buf_reset(&query);
		hp_buf_puts(&query, "uploadId=");
		hp_aws_form_encode(&query, upload_id);
		digest(body.buf, body.len, &bd);
		memset(&q, 0, sizeof(q));
		q.op = "CompleteMultipartUpload";
		q.method = "POST";
		q.query = query.buf;
		q.body = body.buf;
		q.len = body.len;
		q.content_type = "application/xml";
		/* No x-amz-checksum-sha256 here: on this request it would name the whole object's. */
		q.d = &bd;
		if (!s3_call(u, &q, &resp)) {
			size_t wl = strcspn(want, "-");
			const char *dash;

			if (hp_s3_parse_complete(resp.body.buf, resp.body.len, etag, sizeof(etag), sum,
						 sizeof(sum))) {
				/* A 200 that carries an <Error>: S3 failed after accepting the request. */
				char code[96], msg[512], region[40];

				if (hp_s3_parse_error(resp.body.buf, resp.body.len, code, sizeof(code), msg,
						      sizeof(msg), region, sizeof(region)))
					fail_at(u, q.op, HP_S3_OTHER, resp.status, "MalformedReply",
						"the reply is no CompleteMultipartUploadResult");
				else
					fail_at(u, q.op, classify(resp.status, code), resp.status, code, msg);
			} else if ((dash = strchr(sum, '-')) && !strcmp(dash, want + wl) &&
				   ((size_t)(dash - sum) != wl || strncmp(sum, want, wl))) {
				char m[256];

				snprintf(m, sizeof(m), "S3's checksum of the parts %.60s is not %s", sum, want);
				fail_at(u, q.op, HP_S3_CHECKSUM, resp.status, "ChecksumMismatch", m);
			} else {
				hp_strlcpy(u->r->etag, etag, sizeof(u->r->etag));
				hp_strlcpy(u->r->checksum, sum[0] ? sum : want, sizeof(u->r->checksum));
				u->r->parts = nparts;
				rc = 0;
			}
			hp_http_resp_release(&resp);
		}
	}
	free(parts);
	if (rc) {
		hp_buf_reset(&query);
		hp_buf_puts(&query, "uploadId=");
		hp_aws_form_encode(&query, upload_id);
		abort_upload(u, query.buf);
	}
out:
	hp_buf_release(&query);
	hp_buf_release(&data);
	hp_buf_release(&body);
	return rc;
}

int hp_s3_put_file(struct hp_aws *a, const struct hp_s3_put_opts *o, struct hp_s3_put_result *r)
{
	struct up u;
	struct hp_file_in *f;
	uint64_t threshold = o->threshold ? o->threshold : HP_S3_MULTIPART_THRESHOLD;
	int rc;

	memset(r, 0, sizeof(*r));
	memset(&u, 0, sizeof(u));
	u.a = a;
	u.o = o;
	u.r = r;
	hp_strlcpy(r->region, a->region, sizeof(r->region));
	snprintf(r->url, sizeof(r->url), "s3://%s/%s", o->bucket, o->key);
	if (threshold > PUT_MAX)
		threshold = PUT_MAX;
	if (make_target(a->endpoint[HP_SVC_S3], o->bucket, o->key, &u.t)) {
		fail_at(&u, "PutObject", HP_S3_OTHER, 0, "InvalidURI", "the object's URL is too long");
		return -1;
	}
	if (measure(&u))
		return -1;
	f = a->sys->open_read(a->sys, o->path, FILE_MAX);
	if (!f) {
		fail_at(&u, "read", HP_S3_LOCAL, 0, "", strerror(errno));
		return -1;
	}
	if (r->size <= threshold) {
		struct hp_buf data = HP_BUF_INIT((size_t)threshold + 1);

		if (read_up_to(f, &data, (size_t)threshold + 1) != (long)r->size) {
			fail_at(&u, "read", HP_S3_LOCAL, 0, "", "the file changed while it was read");
			rc = -1;
		} else {
			rc = put_object(&u, &data);
		}
		hp_buf_release(&data);
	} else {
		rc = multipart(&u, f, hp_s3_part_size(r->size, o->part_size));
	}
	f->close(f);
	return rc;
}
