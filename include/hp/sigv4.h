/*
 * AWS Signature Version 4 as staged pure functions. Nothing here reads the
 * clock, the environment or the network: the time and the credentials come
 * in through struct hp_sigv4_params, so every stage can be tested against
 * fixed vectors.
 *
 * Stages: canonical request -> string to sign -> signing key -> signature ->
 * Authorization header value. hp_sigv4_sign() runs them all.
 */
#ifndef HP_SIGV4_H
#define HP_SIGV4_H

#include <stddef.h>
#include <time.h>

#include "hp/buf.h"
#include "hp/sys.h"

struct hp_sigv4_params {
	const char *access_key;
	const char *secret_key;     /* wiped copies only; never logged */
	const char *session_token;  /* NULL for long-term keys */
	const char *region;
	const char *service;        /* signing name, e.g. "sagemaker", "servicequotas" */
	time_t now;                 /* seconds since the epoch, UTC */
};

struct hp_sigv4_request {
	const char *method;
	const char *path;           /* raw path as sent, e.g. "/" or "/clusters/x" */
	const char *query;          /* raw query string without '?', or NULL */
	const struct hp_header *headers;  /* every header to sign, as sent */
	size_t nheaders;
	const void *payload;
	size_t payload_len;
	/*
	 * 1: S3's rule for the canonical URI: path is already URI-encoded (as
	 * sent) and goes in as it is, neither normalised nor encoded again.
	 */
	int s3;
};

/* "20150830T123600Z" into out (>= 17 bytes) and "20150830" into date (>= 9). */
void hp_sigv4_amz_date(time_t now, char *amzdate, char *date);

/* Canonical request; signed_headers receives "host;x-amz-date;...". */
int hp_sigv4_canonical_request(const struct hp_sigv4_request *req, struct hp_buf *out,
			       struct hp_buf *signed_headers);
/* "AWS4-HMAC-SHA256\n<amzdate>\n<scope>\n<hex sha256(creq)>". */
int hp_sigv4_string_to_sign(const struct hp_sigv4_params *p, const struct hp_buf *creq,
			    struct hp_buf *out);
/* The derived key; caller wipes key with hp_wipe() after use. */
void hp_sigv4_signing_key(const struct hp_sigv4_params *p, unsigned char key[32]);
/*
 * Full Authorization header value for req; wipes every intermediate secret.
 * The signing keys of the last 8 (secret, day, region, service) are kept,
 * known by the secret's SHA-256 (never the secret), and reused.
 */
int hp_sigv4_sign(const struct hp_sigv4_params *p, const struct hp_sigv4_request *req,
		  struct hp_buf *authorization);

/* Hex SHA-256 of data into out (65 bytes). */
void hp_sha256_hex(const void *data, size_t n, char out[65]);

#endif
