/*
 * The one write hpnode ever makes: `hpnode bundle --upload s3://bucket/prefix`
 * puts the finished archive into the caller's own bucket, through the same
 * signed client as every read (SigV4 with S3's rules, the payload hash
 * signed). Small archives go up in one PutObject, larger ones as a
 * multipart upload (CreateMultipartUpload, UploadPart, CompleteMultipartUpload;
 * AbortMultipartUpload when a step fails). Always server-side encrypted
 * (SSE-S3, or SSE-KMS with a key id), never with an ACL header, every
 * payload sent with its Content-MD5 and x-amz-checksum-sha256 and the
 * checksum S3 returns compared with the one sent.
 */
#ifndef HP_S3_H
#define HP_S3_H

#include <stddef.h>
#include <stdint.h>

#include "hp/aws.h"

/* Defaults: one PutObject up to the threshold, parts of PART_SIZE above it. */
#define HP_S3_MULTIPART_THRESHOLD ((uint64_t)16 << 20)
#define HP_S3_PART_SIZE ((uint64_t)16 << 20)
#define HP_S3_MIN_PART ((uint64_t)5 << 20)   /* S3's floor for every part but the last */
#define HP_S3_MAX_PARTS 10000

/* s3://bucket[/prefix]: the bucket and the key prefix ("" or ending in '/'). */
struct hp_s3_uri {
	char bucket[64];
	char prefix[1024];
};

/*
 * Parse an --upload value. 0, or -1 with why set: not s3://, a bucket name
 * S3 would refuse (3 to 63 of a-z 0-9 . -, starting and ending with a letter
 * or digit, no "..", not an IP address), a prefix with control characters,
 * "." or ".." segments, or over 900 bytes.
 */
int hp_s3_uri_parse(const char *uri, struct hp_s3_uri *u, char *why, size_t n);

/* The object key for a local file: the prefix, then the file's base name. */
int hp_s3_key(const struct hp_s3_uri *u, const char *local_path, char *key, size_t n);

struct hp_s3_put_opts {
	const char *path;           /* the local file, read in pieces */
	const char *bucket, *key;
	const char *kms_key_id;     /* NULL: SSE-S3 (AES256); else aws:kms with this key */
	uint64_t threshold;         /* 0: HP_S3_MULTIPART_THRESHOLD */
	uint64_t part_size;         /* 0: HP_S3_PART_SIZE; never below HP_S3_MIN_PART */
};

enum hp_s3_fail {
	HP_S3_OK = 0,
	HP_S3_NO_BUCKET,      /* NoSuchBucket */
	HP_S3_DENIED,         /* AccessDenied, a KMS key the caller may not use */
	HP_S3_WRONG_REGION,   /* 301 PermanentRedirect, AuthorizationHeaderMalformed: region known */
	HP_S3_AUTH,           /* credentials missing, rejected or expired */
	HP_S3_CHECKSUM,       /* S3 returned another checksum than the one sent */
	HP_S3_LOCAL,          /* the local file could not be read */
	HP_S3_NETWORK,        /* no reply after the retries */
	HP_S3_OTHER
};

const char *hp_s3_fail_name(enum hp_s3_fail f);

struct hp_s3_put_result {
	enum hp_s3_fail fail;
	long status;                /* HTTP status of the failed request (0: none) */
	char op[32];                /* the failed operation, "PutObject", "UploadPart 3", ... */
	char code[96];              /* S3's error code, "" when none */
	char message[512];          /* S3's message (remote text, cleaned) */
	char bucket_region[40];     /* x-amz-bucket-region or <Region>, "" when unknown */
	char request_id[80];
	char region[40];            /* the region requests were signed for */
	char url[1200];             /* s3://bucket/key */
	uint64_t size;
	unsigned parts;             /* 0: one PutObject */
	char sha256[65];            /* hex SHA-256 of the whole file */
	char checksum[64];          /* the x-amz-checksum-sha256 S3 returned for the object */
	char etag[80];
	char sse[16];               /* "AES256" or "aws:kms" as S3 confirmed it, "" when it did not */
	int aborted;                /* 1: the multipart upload was aborted after the failure */
	int attempts;               /* requests sent, retries included */
};

/* Upload o->path; 0, or -1 with r->fail and the reason filled. */
int hp_s3_put_file(struct hp_aws *a, const struct hp_s3_put_opts *o, struct hp_s3_put_result *r);

/* The part size for a file of size bytes: at least want (and HP_S3_MIN_PART), at most 10,000 parts. */
uint64_t hp_s3_part_size(uint64_t size, uint64_t want);

/*
 * S3 reply bodies (rest-xml), parsed with expat through hp_xml_to_json:
 * an <Error> document (code, message, region: each "" when absent; 0 when
 * the body is one, else -1), <InitiateMultipartUploadResult>'s UploadId,
 * <CompleteMultipartUploadResult>'s ETag and ChecksumSHA256 (-1 when the
 * body is not that document; a 200 reply may carry an <Error> instead).
 */
int hp_s3_parse_error(const char *body, size_t len, char *code, size_t cn, char *msg, size_t mn,
		      char *region, size_t rn);
int hp_s3_parse_upload_id(const char *body, size_t len, char *id, size_t n);
int hp_s3_parse_complete(const char *body, size_t len, char *etag, size_t en, char *checksum,
			 size_t cn);

#endif
