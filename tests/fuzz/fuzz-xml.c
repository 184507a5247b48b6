/*
 * EC2 and STS XML replies: the converter (src/collect/aws/xml.c) on the raw input,
 * then the same bytes as a 200 reply to an EC2 query call and as a 400
 * error body through the client (src/collect/aws/client.c), and as the S3
 * replies `bundle --upload` reads (src/collect/aws/s3.c: <Error>, UploadId,
 * CompleteMultipartUpload) and, up to a NUL, as an --upload value. Inputs are
 * cut at 64 KiB. Oracles: no crash, a converted tree that prints, an error
 * code and message that are NUL-terminated within their fields, an UploadId
 * of printable ASCII only, a parsed s3:// value whose bucket S3 would accept.
 */
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "fuzz.h"
#include "hp/aws.h"
#include "hp/s3.h"

#define MAX_XML (64u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_parts ps;
	struct fake_sys f;
	struct hp_aws a;
	struct hp_aws_result r;
	struct hp_aws_params params = { 0 };
	char root[128];
	cJSON *j;

	if (size > MAX_XML)
		size = MAX_XML;
	fz_split(data, size, 1, &ps);

	j = hp_xml_to_json(ps.p[0], ps.len[0], root, sizeof(root));
	if (j) {
		char *text = cJSON_PrintUnformatted(j);

		if (!text)
			fz_fail("converted XML does not print", NULL, 0);
		if (strlen(root) >= sizeof(root))
			fz_fail("root name overflows", NULL, 0);
		free(text);
		cJSON_Delete(j);
	}

	/* The S3 replies and the --upload value. */
	{
		char code[96], msg[512], region[40], id[1024], etag[80], sum[64], why[256];
		struct hp_s3_uri u;
		const char *c;

		if (!hp_s3_parse_error(ps.p[0], ps.len[0], code, sizeof(code), msg, sizeof(msg),
				       region, sizeof(region)) &&
		    (!memchr(code, 0, sizeof(code)) || !memchr(msg, 0, sizeof(msg)) ||
		     !memchr(region, 0, sizeof(region))))
			fz_fail("S3 error fields not terminated", NULL, 0);
		if (!hp_s3_parse_upload_id(ps.p[0], ps.len[0], id, sizeof(id)))
			for (c = id; *c; c++)
				if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
					fz_fail("an UploadId with a byte a URL cannot carry", NULL, 0);
		if (!hp_s3_parse_complete(ps.p[0], ps.len[0], etag, sizeof(etag), sum, sizeof(sum)) &&
		    (!memchr(etag, 0, sizeof(etag)) || !memchr(sum, 0, sizeof(sum))))
			fz_fail("CompleteMultipartUpload fields not terminated", NULL, 0);
		if (!hp_s3_uri_parse(ps.p[0], &u, why, sizeof(why))) {
			size_t bl = strlen(u.bucket);

			if (bl < 3 || bl > 63 || strspn(u.bucket, "abcdefghijklmnopqrstuvwxyz0123456789.-") != bl)
				fz_fail("an s3:// value with a bucket S3 refuses was accepted", NULL, 0);
		}
	}

	/* The same body (up to a NUL) as a successful EC2 reply, then as an error reply. */
	{
		struct fz_parts two;
		size_t n = strlen(ps.p[0]);
		uint8_t *buf = malloc(2 * n + 8);

		memcpy(buf, ps.p[0], n);
		buf[n] = 0;
		memcpy(buf + n + 1, "@400 ", 5);
		memcpy(buf + n + 6, ps.p[0], n);
		fz_split(buf, 2 * n + 6, 2, &two);
		free(buf);

		memset(&f, 0, sizeof(f));
		fz_aws(&f, &a, &two, 0, MAX_XML);
		hp_aws_params_add(&params, "GroupId.1", "sg-0123456789abcdef0");
		memset(&r, 0, sizeof(r));
		/* Which bodies count as a reply is the client's rule; a success carries a tree. */
		if (!hp_aws_query(&a, HP_SVC_EC2, "DescribeSecurityGroups", &params, &r) && !r.json)
			fz_fail("a successful query reply without a tree", NULL, 0);
		hp_aws_result_release(&r);
		memset(&r, 0, sizeof(r));
		if (!hp_aws_query(&a, HP_SVC_STS, "GetCallerIdentity", NULL, &r))
			fz_fail("a 400 reply was taken as success", NULL, 0);
		if (memchr(r.code, 0, sizeof(r.code)) == NULL ||
		    memchr(r.message, 0, sizeof(r.message)) == NULL)
			fz_fail("error fields not terminated", NULL, 0);
		hp_aws_result_release(&r);
		hp_aws_params_release(&params);
		fake_sys_release(&f);
		fz_parts_release(&two);
	}
	fz_parts_release(&ps);
	return 0;
}
