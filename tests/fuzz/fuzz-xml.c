/*
 * EC2 and STS XML replies: the converter (src/collect/aws/xml.c) on the raw input,
 * then the same bytes as a 200 reply to an EC2 query call and as a 400
 * error body through the client (src/collect/aws/client.c). Inputs are cut at
 * 64 KiB. Oracles: no crash, a converted tree that prints, an error code
 * and message that are NUL-terminated within their fields.
 */
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "fuzz.h"
#include "hp/aws.h"

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
