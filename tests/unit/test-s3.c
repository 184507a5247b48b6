/*
 * `hpnode bundle --upload` (src/collect/aws/s3.c) against canned S3 replies:
 * the s3:// value, object keys and part sizes; PutObject's request (address,
 * signed headers, encryption, checksums, never an ACL); the checksum S3
 * returns compared; a multipart upload's requests, and its abort when a step
 * fails; S3's errors (published replies, sources named at each) classified;
 * transient errors retried.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "fake-sys.h"
#include "hp/s3.h"
#include "hp/sigv4.h"
#include "t.h"

static struct fake_sys fs;
static struct hp_aws aws;
static char *big;

static void setup(const char *content)
{
	fake_aws(&fs, &aws, 3);
	fake_file(&fs, "/w/case-42.tar.gz", content);
}

static int put(const char *endpoint, const char *bucket, const char *kms, uint64_t threshold,
	       struct hp_s3_put_result *r)
{
	struct hp_s3_put_opts o;

	if (endpoint)
		hp_strlcpy(aws.endpoint[HP_SVC_S3], endpoint, sizeof(aws.endpoint[0]));
	memset(&o, 0, sizeof(o));
	o.path = "/w/case-42.tar.gz";
	o.bucket = bucket;
	o.key = "cases/42/case-42.tar.gz";
	o.kms_key_id = kms;
	o.threshold = threshold;
	o.part_size = threshold ? HP_S3_MIN_PART : 0;
	return hp_s3_put_file(&aws, &o, r);
}

static void sha_b64(const char *s, size_t n, char out[48])
{
	unsigned char md[32];
	unsigned int len = 0;

	EVP_Digest(s, n, md, &len, EVP_sha256(), NULL);
	EVP_EncodeBlock((unsigned char *)out, md, 32);
}

static void t_uri(void)
{
	static const struct {
		const char *uri, *bucket, *prefix;
	} good[] = {
		{ "s3://hp-support", "hp-support", "" },
		{ "s3://hp-support/", "hp-support", "" },
		{ "s3://hp-support/cases/42", "hp-support", "cases/42/" },
		{ "s3://my.bucket.example/a b/", "my.bucket.example", "a b/" },
	};
	static const char *const bad[] = {
		"hp-support", "https://hp-support/x", "s3://", "s3://ab", "s3://Hp-Support",
		"s3://hp_support", "s3://-hp", "s3://hp-", "s3://a..b", "s3://192.168.1.2",
		"s3://hp-support//x", "s3://hp-support/a/../b", "s3://hp-support/./b",
		"s3://hp-support/a\tb",
	};
	struct hp_s3_uri u;
	char why[256], key[200];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		T_EQ(hp_s3_uri_parse(good[i].uri, &u, why, sizeof(why)), 0);
		T_STREQ(u.bucket, good[i].bucket);
		T_ASSERT(!strcmp(u.prefix, good[i].prefix));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!hp_s3_uri_parse(bad[i], &u, why, sizeof(why)))
			T_FAILF("'%s' was accepted", bad[i]);
		T_ASSERT(why[0] != '\0');
	}
	T_EQ(hp_s3_uri_parse("s3://hp-support/cases/42", &u, why, sizeof(why)), 0);
	T_EQ(hp_s3_key(&u, "/tmp/out/b.tar.gz", key, sizeof(key)), 0);
	T_STREQ(key, "cases/42/b.tar.gz");
	T_EQ(hp_s3_key(&u, "b.tar.gz", key, sizeof(key)), 0);
	T_STREQ(key, "cases/42/b.tar.gz");
	T_EQ(hp_s3_key(&u, "/tmp/", key, sizeof(key)), -1);
}

static void t_part_size(void)
{
	T_EQ(hp_s3_part_size(100, 0), HP_S3_PART_SIZE);
	T_EQ(hp_s3_part_size(100, 1024), HP_S3_MIN_PART);      /* never under S3's floor */
	T_EQ(hp_s3_part_size((uint64_t)10000 << 20, 0), HP_S3_PART_SIZE);
	/* 1 TiB in at most 10,000 parts: 105 MiB parts (whole MiB). */
	T_EQ(hp_s3_part_size((uint64_t)1 << 40, 0), (uint64_t)105 << 20);
	T_ASSERT(((uint64_t)1 << 40) / hp_s3_part_size((uint64_t)1 << 40, 0) < HP_S3_MAX_PARTS);
}

static void t_put_object_request(void)
{
	struct hp_s3_put_result r;
	char sum[48], hdr[256];
	const char *h;

	setup("archive bytes");
	sha_b64("archive bytes", 13, sum);
	snprintf(hdr, sizeof(hdr), "x-amz-checksum-sha256: %s\r\nx-amz-server-side-encryption: AES256\r\n"
		 "ETag: \"0000\"\r\nx-amz-request-id: R1\r\n", sum);
	fake_reply(&fs, 200, hdr, "");
	T_EQ(put("https://s3.us-west-2.amazonaws.com", "hp-support", NULL, 0, &r), 0);
	T_EQ(fs.nreq, 1);
	T_STREQ(fs.req_method[0], "PUT");
	/* AWS's own host: virtual-hosted style. */
	T_STREQ(fs.req_url[0], "https://hp-support.s3.us-west-2.amazonaws.com/cases/42/case-42.tar.gz");
	T_STREQ(fs.req_body[0], "archive bytes");
	h = fs.req_headers[0];
	T_CONTAINS(h, "Host: hp-support.s3.us-west-2.amazonaws.com\n");
	T_CONTAINS(h, "X-Amz-Content-SHA256: ");
	T_CONTAINS(h, "x-amz-server-side-encryption: AES256\n");
	T_CONTAINS(h, "Content-MD5: ");
	T_CONTAINS(h, "Content-Type: application/gzip\n");
	T_CONTAINS(h, sum);
	T_CONTAINS(h, "Credential=AKIDEXAMPLE/20150830/us-west-2/s3/aws4_request, SignedHeaders="
		   "content-md5;content-type;host;x-amz-checksum-sha256;x-amz-content-sha256;x-amz-date;"
		   "x-amz-server-side-encryption, Signature=");
	T_NOT_CONTAINS(h, "x-amz-acl");
	T_NOT_CONTAINS(h, "x-amz-grant");
	T_STREQ(r.sse, "AES256");
	T_STREQ(r.checksum, sum);
	T_EQ(r.parts, 0);
	T_EQ(r.size, 13);
	T_ASSERT(!strcmp(r.url, "s3://hp-support/cases/42/case-42.tar.gz"));
	fake_sys_release(&fs);
}

static void t_addressing(void)
{
	struct hp_s3_put_result r;

	/* A configured endpoint: path style under its own path. */
	setup("x");
	fake_reply(&fs, 200, NULL, "");
	T_EQ(put("http://127.0.0.1:9/gw", "hp-support", NULL, 0, &r), 0);
	T_STREQ(fs.req_url[0], "http://127.0.0.1:9/gw/hp-support/cases/42/case-42.tar.gz");
	T_CONTAINS(fs.req_headers[0], "Host: 127.0.0.1:9\n");
	fake_sys_release(&fs);
	/* A bucket with dots on AWS: path style (the certificate covers one label). */
	setup("x");
	fake_reply(&fs, 200, NULL, "");
	T_EQ(put("https://s3.us-west-2.amazonaws.com", "my.bucket.example", NULL, 0, &r), 0);
	T_STREQ(fs.req_url[0], "https://s3.us-west-2.amazonaws.com/my.bucket.example/cases/42/case-42.tar.gz");
	fake_sys_release(&fs);
}

static void t_kms(void)
{
	struct hp_s3_put_result r;

	setup("x");
	fake_reply(&fs, 200, "x-amz-server-side-encryption: aws:kms\r\n", "");
	T_EQ(put(NULL, "hp-support", "alias/hp-bundles", 0, &r), 0);
	T_CONTAINS(fs.req_headers[0], "x-amz-server-side-encryption: aws:kms\n");
	T_CONTAINS(fs.req_headers[0], "x-amz-server-side-encryption-aws-kms-key-id: alias/hp-bundles\n");
	T_STREQ(r.sse, "aws:kms");
	fake_sys_release(&fs);
}

static void t_checksum_mismatch(void)
{
	struct hp_s3_put_result r;

	setup("archive bytes");
	fake_reply(&fs, 200, "x-amz-checksum-sha256: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n", "");
	T_EQ(put(NULL, "hp-support", NULL, 0, &r), -1);
	T_EQ(r.fail, HP_S3_CHECKSUM);
	fake_sys_release(&fs);
	/* No checksum back: the ETag (SSE-S3) must be the MD5 sent. */
	setup("archive bytes");
	fake_reply(&fs, 200, "ETag: \"d41d8cd98f00b204e9800998ecf8427e\"\r\n", "");
	T_EQ(put(NULL, "hp-support", NULL, 0, &r), -1);
	T_EQ(r.fail, HP_S3_CHECKSUM);
	T_CONTAINS(r.message, "not the MD5");
	fake_sys_release(&fs);
}

/*
 * Replies as S3 sent them, from public issue threads:
 * - 301 PermanentRedirect with x-amz-bucket-region: yanganto/s3rs issue #18
 *   (https://github.com/yanganto/s3rs/issues/18);
 * - 400 AuthorizationHeaderMalformed with <Region>: jsoma/flatware issue #10
 *   (https://github.com/jsoma/flatware/issues/10);
 * - 404 NoSuchBucket: moto 5.2.1's reply (the fixture's), the shape of S3's
 *   REST error responses.
 */
static const char redirect_body[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access must "
	"be addressed using the specified endpoint. Please send all future requests to this "
	"endpoint.</Message><Endpoint>ant-lab.s3-ap-northeast-1.amazonaws.com</Endpoint><Bucket>"
	"ant-lab</Bucket><RequestId>24035885437204DC</RequestId><HostId>rfhhIFBaGS2tstKHG3tLVCyQn+"
	"JrrFpuNTvA2s+ltQji92zsCwZ0ZbOHnhuDlgeIUP8elpC1rxM=</HostId></Error>";
static const char malformed_body[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<Error><Code>AuthorizationHeaderMalformed</Code><Message>The authorization header is "
	"malformed; the region 'us-east-1' is wrong; expecting 'eu-central-1'</Message><Region>"
	"eu-central-1</Region><RequestId>D5F2662865713BDC</RequestId><HostId>BisYpzkFJqTt3Aw5Lb9PtSG"
	"xim8A1nu7ndZrVp04DNNiga64JePe2gpklGTp6DWeycle6MJ4wI8=</HostId></Error>";
static const char no_bucket_body[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchBucket</Code><Message>The "
	"specified bucket does not exist</Message><BucketName>nope-bucket</BucketName><RequestId>"
	"6EWIZQ0nWpRWM3YfHCHTxe6Khd1J5GmKIjku2HChRnTLFf5GCZdD</RequestId></Error>";

static void t_errors(void)
{
	static const struct {
		long status;
		const char *headers, *body;
		enum hp_s3_fail fail;
		const char *code, *region;
	} cases[] = {
		{ 301, "x-amz-bucket-region: ap-northeast-1\r\nx-amz-request-id: 24035885437204DC\r\n",
		  redirect_body, HP_S3_WRONG_REGION, "PermanentRedirect", "ap-northeast-1" },
		{ 400, "x-amz-bucket-region: eu-central-1\r\n", malformed_body, HP_S3_WRONG_REGION,
		  "AuthorizationHeaderMalformed", "eu-central-1" },
		{ 400, NULL, malformed_body, HP_S3_WRONG_REGION, "AuthorizationHeaderMalformed",
		  "eu-central-1" },
		{ 404, NULL, no_bucket_body, HP_S3_NO_BUCKET, "NoSuchBucket", "" },
		{ 403, NULL, "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>",
		  HP_S3_DENIED, "AccessDenied", "" },
		{ 403, NULL, "<Error><Code>SignatureDoesNotMatch</Code><Message>x</Message></Error>",
		  HP_S3_AUTH, "SignatureDoesNotMatch", "" },
		{ 400, NULL, "<Error><Code>KMS.NotFoundException</Code><Message>Invalid keyId</Message></Error>",
		  HP_S3_DENIED, "KMS.NotFoundException", "" },
		{ 400, NULL, "<Error><Code>BadDigest</Code><Message>x</Message></Error>",
		  HP_S3_CHECKSUM, "BadDigest", "" },
		{ 418, NULL, "not xml", HP_S3_OTHER, "HTTP418", "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hp_s3_put_result r;

		setup("x");
		fake_reply(&fs, cases[i].status, cases[i].headers, cases[i].body);
		T_EQ(put(NULL, "hp-support", NULL, 0, &r), -1);
		if (r.fail != cases[i].fail)
			T_FAILF("case %zu: %s, expected %s", i, hp_s3_fail_name(r.fail),
				hp_s3_fail_name(cases[i].fail));
		T_STREQ(r.code, cases[i].code);
		T_STREQ(r.bucket_region, cases[i].region);
		T_STREQ(r.op, "PutObject");
		T_EQ(r.status, cases[i].status);
		T_EQ(fs.nreq, 1);   /* none of these is retried */
		fake_sys_release(&fs);
	}
}

static void t_retries(void)
{
	struct hp_s3_put_result r;

	setup("x");
	fake_reply(&fs, 503, NULL, "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>");
	fake_net_error(&fs, HP_NET_IO);
	fake_reply(&fs, 200, NULL, "");
	T_EQ(put(NULL, "hp-support", NULL, 0, &r), 0);
	T_EQ(fs.nreq, 3);
	T_EQ(r.attempts, 3);
	fake_sys_release(&fs);
	/* Out of attempts: the last error is the answer. */
	setup("x");
	fake_reply(&fs, 500, NULL, "<Error><Code>InternalError</Code><Message>x</Message></Error>");
	fake_reply(&fs, 500, NULL, "<Error><Code>InternalError</Code><Message>x</Message></Error>");
	fake_reply(&fs, 500, NULL, "<Error><Code>InternalError</Code><Message>x</Message></Error>");
	T_EQ(put(NULL, "hp-support", NULL, 0, &r), -1);
	T_EQ(r.fail, HP_S3_OTHER);
	T_STREQ(r.code, "InternalError");
	T_EQ(fs.nreq, 3);
	fake_sys_release(&fs);
}

static void multipart_setup(void)
{
	size_t n = (size_t)HP_S3_MIN_PART + 10;

	free(big);   /* the previous case's: its fake was released before this setup */
	big = malloc(n + 1);
	memset(big, 'a', n);
	big[n] = '\0';
	setup(big);
}

static void t_multipart(void)
{
	static const char created[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<InitiateMultipartUploadResult xmlns="
		"\"http://s3.amazonaws.com/doc/2006-03-01/\"><Bucket>hp-support</Bucket><Key>cases/42/"
		"case-42.tar.gz</Key><UploadId>up/1+x=</UploadId></InitiateMultipartUploadResult>";
	static const char done[] =
		"<CompleteMultipartUploadResult><Bucket>hp-support</Bucket><ETag>\"e-2\"</ETag>"
		"</CompleteMultipartUploadResult>";
	struct hp_s3_put_result r;
	char sum1[48], sum2[48];

	multipart_setup();
	sha_b64(big, (size_t)HP_S3_MIN_PART, sum1);
	sha_b64(big, 10, sum2);
	fake_reply(&fs, 200, "x-amz-server-side-encryption: AES256\r\n", created);
	fake_reply(&fs, 200, "ETag: \"e1\"\r\n", "");
	fake_reply(&fs, 200, "ETag: \"e2\"\r\n", "");
	fake_reply(&fs, 200, NULL, done);
	T_EQ(put(NULL, "hp-support", NULL, 4096, &r), 0);
	T_EQ(fs.nreq, 4);
	T_EQ(r.parts, 2);
	T_STREQ(r.sse, "AES256");
	T_STREQ(fs.req_method[0], "POST");
	T_STREQ(fs.req_url[0], "http://127.0.0.1:9/hp-support/cases/42/case-42.tar.gz?uploads");
	T_CONTAINS(fs.req_headers[0], "x-amz-server-side-encryption: AES256\n");
	T_CONTAINS(fs.req_headers[0], "x-amz-checksum-algorithm: SHA256\n");
	T_STREQ(fs.req_method[1], "PUT");
	T_STREQ(fs.req_url[1], "http://127.0.0.1:9/hp-support/cases/42/case-42.tar.gz?partNumber=1&uploadId=up%2F1%2Bx%3D");
	T_EQ(strlen(fs.req_body[1]), (size_t)HP_S3_MIN_PART);
	T_CONTAINS(fs.req_headers[1], sum1);
	T_CONTAINS(fs.req_headers[1], "Content-MD5: ");
	T_STREQ(fs.req_url[2], "http://127.0.0.1:9/hp-support/cases/42/case-42.tar.gz?partNumber=2&uploadId=up%2F1%2Bx%3D");
	T_STREQ(fs.req_body[2], "aaaaaaaaaa");
	T_CONTAINS(fs.req_headers[2], sum2);
	T_STREQ(fs.req_method[3], "POST");
	T_STREQ(fs.req_url[3], "http://127.0.0.1:9/hp-support/cases/42/case-42.tar.gz?uploadId=up%2F1%2Bx%3D");
	T_CONTAINS(fs.req_body[3], "<Part><ChecksumSHA256>");
	T_CONTAINS(fs.req_body[3], sum1);
	T_CONTAINS(fs.req_body[3], "<ETag>\"e1\"</ETag><PartNumber>1</PartNumber></Part>");
	T_CONTAINS(fs.req_body[3], "<ETag>\"e2\"</ETag><PartNumber>2</PartNumber></Part>");
	T_NOT_CONTAINS(fs.req_headers[3], "x-amz-checksum-sha256");
	T_NOT_CONTAINS(fs.req_headers[1], "x-amz-server-side-encryption");
	for (size_t i = 0; i < 4; i++)
		T_NOT_CONTAINS(fs.req_headers[i], "x-amz-acl");
	T_STREQ(r.etag, "\"e-2\"");
	fake_sys_release(&fs);
	free(big);
	big = NULL;
}

static void t_multipart_aborted(void)
{
	static const char created[] =
		"<InitiateMultipartUploadResult><UploadId>U1</UploadId></InitiateMultipartUploadResult>";
	struct hp_s3_put_result r;

	/* Part 2 denied: the upload is aborted, the denial reported. */
	multipart_setup();
	fake_reply(&fs, 200, NULL, created);
	fake_reply(&fs, 200, "ETag: \"e1\"\r\n", "");
	fake_reply(&fs, 403, NULL, "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>");
	fake_reply(&fs, 204, NULL, "");
	T_EQ(put(NULL, "hp-support", NULL, 4096, &r), -1);
	T_EQ(r.fail, HP_S3_DENIED);
	T_STREQ(r.op, "UploadPart 2");
	T_EQ(r.aborted, 1);
	T_EQ(fs.nreq, 4);
	T_STREQ(fs.req_method[3], "DELETE");
	T_STREQ(fs.req_url[3], "http://127.0.0.1:9/hp-support/cases/42/case-42.tar.gz?uploadId=U1");
	fake_sys_release(&fs);
	/* A 200 to Complete that carries an <Error>: a failure, and aborted. */
	multipart_setup();
	fake_reply(&fs, 200, NULL, created);
	fake_reply(&fs, 200, "ETag: \"e1\"\r\n", "");
	fake_reply(&fs, 200, "ETag: \"e2\"\r\n", "");
	fake_reply(&fs, 200, NULL, "<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>");
	fake_reply(&fs, 204, NULL, "");
	T_EQ(put(NULL, "hp-support", NULL, 4096, &r), -1);
	T_STREQ(r.op, "CompleteMultipartUpload");
	T_STREQ(r.code, "InternalError");
	T_EQ(r.aborted, 1);
	fake_sys_release(&fs);
	/* No UploadId: nothing more is sent. */
	multipart_setup();
	fake_reply(&fs, 200, NULL, "<InitiateMultipartUploadResult/>");
	T_EQ(put(NULL, "hp-support", NULL, 4096, &r), -1);
	T_STREQ(r.code, "MalformedReply");
	T_EQ(fs.nreq, 1);
	fake_sys_release(&fs);
	free(big);
	big = NULL;
}

static void t_local_file(void)
{
	struct hp_s3_put_result r;

	fake_aws(&fs, &aws, 3);
	T_EQ(put(NULL, "hp-support", NULL, 0, &r), -1);
	T_EQ(r.fail, HP_S3_LOCAL);
	T_EQ(fs.nreq, 0);
	fake_sys_release(&fs);
}

/* S3's canonical URI is the path as sent: not normalised, not encoded again. */
static void t_canonical_path(void)
{
	static const struct hp_header h[] = { { "Host", "b.s3.us-west-2.amazonaws.com" } };
	struct hp_sigv4_request q;
	struct hp_buf out = HP_BUF_INIT(4096);

	memset(&q, 0, sizeof(q));
	q.method = "PUT";
	q.path = "/cases//a%20b/./x.tar.gz";
	q.headers = h;
	q.nheaders = 1;
	q.s3 = 1;
	T_EQ(hp_sigv4_canonical_request(&q, &out, NULL), 0);
	T_ASSERT(hp_starts_with(out.buf, "PUT\n/cases//a%20b/./x.tar.gz\n\n"));
	hp_buf_reset(&out);
	q.s3 = 0;   /* the other services' rule, for contrast */
	T_EQ(hp_sigv4_canonical_request(&q, &out, NULL), 0);
	T_ASSERT(hp_starts_with(out.buf, "PUT\n/cases/a%2520b/x.tar.gz\n\n"));
	hp_buf_release(&out);
}

/* A string literal and its length. */
#define LIT(s) s, sizeof(s) - 1

static void t_parsers(void)
{
	char code[96], msg[512], region[40], id[64], etag[80], sum[64];

	T_EQ(hp_s3_parse_error(malformed_body, strlen(malformed_body), code, sizeof(code), msg,
			       sizeof(msg), region, sizeof(region)), 0);
	T_STREQ(code, "AuthorizationHeaderMalformed");
	T_STREQ(region, "eu-central-1");
	T_CONTAINS(msg, "expecting 'eu-central-1'");
	T_EQ(hp_s3_parse_error(LIT("<Other/>"), code, sizeof(code), msg, sizeof(msg), region,
			       sizeof(region)), -1);
	/* A control character is no XML: never a code. */
	T_EQ(hp_s3_parse_error(LIT("<Error><Code>A\x01" "B</Code></Error>"), code, sizeof(code), msg,
			       sizeof(msg), region, sizeof(region)), -1);
	T_STREQ(code, "");
	T_EQ(hp_s3_parse_upload_id(LIT("<InitiateMultipartUploadResult><UploadId>a b</UploadId>"
				       "</InitiateMultipartUploadResult>"), id, sizeof(id)), -1);
	T_EQ(hp_s3_parse_complete(LIT("<CompleteMultipartUploadResult><ETag>\"x-2\"</ETag><ChecksumSHA256>"
				      "abc=-2</ChecksumSHA256></CompleteMultipartUploadResult>"), etag,
				  sizeof(etag), sum, sizeof(sum)), 0);
	T_STREQ(etag, "\"x-2\"");
	T_STREQ(sum, "abc=-2");
	T_EQ(hp_s3_parse_complete(LIT("<Error><Code>x</Code></Error>"), etag, sizeof(etag), sum,
				  sizeof(sum)), -1);
}

T_MAIN(T(t_uri), T(t_part_size), T(t_put_object_request), T(t_addressing), T(t_kms),
       T(t_checksum_mismatch), T(t_errors), T(t_retries), T(t_multipart), T(t_multipart_aborted),
       T(t_local_file), T(t_canonical_path), T(t_parsers))
