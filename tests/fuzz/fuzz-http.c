/*
 * HTTP replies as hpnode reads them before any body parser: the header
 * block (Date, Content-Type, x-amzn-ErrorType, the request id, looked up
 * case-insensitively by hp_http_resp_header), the error classification of
 * a reply from its headers and body (hp_aws_parse_error, every status
 * class), and the SSM StreamUrl parser (hp_ssm_parse_url) of a
 * StartSession reply. Input: headers NUL body NUL url (parts may be
 * missing). Oracles: no crash; every value NUL-terminated within its
 * buffer; an error code and message clean once sanitised; a parsed URL
 * gives a non-empty host without '/', a port from 1 to 65535 and a path
 * starting with '/'.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hp/aws.h"
#include "../../src/collect/ssm/ssm-int.h"
#include "hp/sys.h"

static void header(const struct hp_http_resp *r, const char *name)
{
	char small[8], big[256];

	memset(small, 'x', sizeof(small));
	memset(big, 'x', sizeof(big));
	if (!hp_http_resp_header(r, name, small, sizeof(small)) && !memchr(small, 0, sizeof(small)))
		fz_fail("header value not terminated in a small buffer", small, sizeof(small));
	if (!hp_http_resp_header(r, name, big, sizeof(big))) {
		if (!memchr(big, 0, sizeof(big)))
			fz_fail("header value not terminated", big, sizeof(big));
		if (strpbrk(big, "\r\n"))
			fz_fail("header value holds a line break", big, strlen(big));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "Date", "Content-Type", "x-amzn-ErrorType",
					     "x-amzn-RequestId", "x-amz-request-id", "" };
	static const long statuses[] = { 200, 400, 403, 404, 429, 500, 503 };
	struct fz_parts ps;
	struct hp_http_resp r;
	size_t i;

	if (size > (64u << 10))
		size = 64u << 10;
	fz_split(data, size, 3, &ps);
	hp_http_resp_init(&r);
	if (ps.n > 0 && hp_buf_add(&r.headers, ps.p[0], ps.len[0]))
		goto out;
	if (ps.n > 1 && hp_buf_add(&r.body, ps.p[1], ps.len[1]))
		goto out;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		header(&r, names[i]);
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		struct hp_aws_result out;

		memset(&out, 0, sizeof(out));
		r.status = statuses[i];
		hp_aws_parse_error(&r, &out);
		if (!memchr(out.code, 0, sizeof(out.code)) || !memchr(out.message, 0, sizeof(out.message)))
			fz_fail("error code or message not terminated", NULL, 0);
		fz_check_error(out.code, NULL);
		fz_check_error(out.message, NULL);
		hp_aws_result_release(&out);
	}
	if (ps.n > 2) {
		char host[512], path[8192];
		int port = 0;

		if (!hp_ssm_parse_url(ps.p[2], host, sizeof(host), &port, path, sizeof(path))) {
			if (!host[0] || strchr(host, '/') || !memchr(host, 0, sizeof(host)))
				fz_fail("StreamUrl: bad host", host, strnlen(host, sizeof(host)));
			if (port < 1 || port > 65535)
				fz_fail("StreamUrl: port out of range", NULL, 0);
			if (path[0] != '/' || !memchr(path, 0, sizeof(path)))
				fz_fail("StreamUrl: path does not start with '/'", path,
					strnlen(path, sizeof(path)));
		}
	}
out:
	hp_http_resp_release(&r);
	fz_parts_release(&ps);
	return 0;
}
