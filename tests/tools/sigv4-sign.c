/*
 * sigv4-sign: signs one raw HTTP request read from stdin (the AWS SigV4
 * test-suite ".req" layout) with src/collect/aws/sigv4.c and prints the canonical
 * request, the string to sign and the Authorization value, separated by
 * blank lines. A conformance tool for the tests; it sends nothing.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "hp/buf.h"
#include "hp/sigv4.h"
#include "hp/util.h"

#define MAX_HEADERS 256

static const char usage[] =
	"usage: sigv4-sign --access-key AK --secret-key SK [--token TOKEN]\n"
	"                  --region REGION --service SERVICE --time YYYYMMDDTHHMMSSZ < request\n";

/* The parsed request: every string points into heap copies owned here. */
struct raw_request {
	char *method;
	char *path;
	char *query;
	struct hp_header headers[MAX_HEADERS];
	char *values[MAX_HEADERS];
	size_t nheaders;
	const char *body;
	size_t body_len;
};

static int fail_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "sigv4-sign: %s", msg);
	if (arg)
		fprintf(stderr, " '%s'", arg);
	fprintf(stderr, "\n%s", usage);
	return 2;
}

static int fail_input(const char *msg)
{
	fprintf(stderr, "sigv4-sign: %s\n", msg);
	return 1;
}

/* Parses "YYYYMMDDTHHMMSSZ" (UTC); -1 when malformed or out of range. */
static int parse_time(const char *s, time_t *out)
{
	static const char shape[] = "ddddddddTddddddZ";
	struct tm tm, back;
	size_t i;
	int v[6], field = 0, width[6] = { 4, 2, 2, 2, 2, 2 };
	const char *p = s;

	if (strlen(s) != sizeof(shape) - 1)
		return -1;
	for (i = 0; shape[i]; i++) {
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return -1;
	}
	for (field = 0; field < 6; field++) {
		int k;

		if (*p == 'T')
			p++;
		v[field] = 0;
		for (k = 0; k < width[field]; k++)
			v[field] = v[field] * 10 + (*p++ - '0');
	}
	if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = v[0] - 1900;
	tm.tm_mon = v[1] - 1;
	tm.tm_mday = v[2];
	tm.tm_hour = v[3];
	tm.tm_min = v[4];
	tm.tm_sec = v[5];
	*out = timegm(&tm);
	/* Reject dates that timegm() had to normalise, such as 20150231. */
	if (!gmtime_r(out, &back) || back.tm_mday != v[2] || back.tm_mon != v[1] - 1 ||
	    back.tm_sec != v[5])
		return -1;
	return 0;
}

/* Next line of [*pos, end): its length without "\n" or "\r\n"; moves *pos. */
static size_t next_line(const char **pos, const char *end, const char **line)
{
	const char *p = *pos, *nl = memchr(p, '\n', (size_t)(end - p));
	size_t len;

	*line = p;
	if (nl) {
		len = (size_t)(nl - p);
		*pos = nl + 1;
	} else {
		len = (size_t)(end - p);
		*pos = end;
	}
	if (len && p[len - 1] == '\r')
		len--;
	return len;
}

static int parse_request_line(struct raw_request *r, const char *line, size_t len)
{
	const char *sp = memchr(line, ' ', len), *ver = NULL, *q, *target;
	size_t i, tlen;

	for (i = 0; i + 6 <= len; i++)
		if (!memcmp(line + i, " HTTP/", 6))
			ver = line + i;
	if (!sp || sp == line || !ver || ver <= sp)
		return -1;
	/* The target runs to the last " HTTP/", so a path may hold spaces. */
	target = sp + 1;
	tlen = (size_t)(ver - target);
	r->method = xstrndup(line, (size_t)(sp - line));
	q = memchr(target, '?', tlen);
	if (q) {
		r->path = xstrndup(target, (size_t)(q - target));
		r->query = xstrndup(q + 1, tlen - (size_t)(q - target) - 1);
	} else {
		r->path = xstrndup(target, tlen);
	}
	return 0;
}

/* Splits input into request line, headers (folded lines joined with "\n"),
 * and body. Returns NULL or a message. */
static const char *parse_request(struct raw_request *r, const char *buf, size_t n)
{
	const char *pos = buf, *end = buf + n, *line;
	size_t len = next_line(&pos, end, &line);

	if (memchr(line, '\0', len))
		return "NUL byte in the request line";
	if (parse_request_line(r, line, len))
		return "cannot parse the request line";
	while (pos < end) {
		len = next_line(&pos, end, &line);
		if (!len)
			break;
		if (memchr(line, '\0', len))
			return "NUL byte in a header line";
		if (line[0] == ' ' || line[0] == '\t') {
			char *joined;

			if (!r->nheaders)
				return "continuation line before the first header";
			joined = xasprintf("%s\n%.*s", r->values[r->nheaders - 1], (int)len, line);
			free(r->values[r->nheaders - 1]);
			r->values[r->nheaders - 1] = joined;
			r->headers[r->nheaders - 1].value = joined;
			continue;
		} else {
			const char *colon = memchr(line, ':', len);

			if (!colon || colon == line)
				return "header line without a name";
			if (r->nheaders == MAX_HEADERS)
				return "too many headers";
			r->headers[r->nheaders].name = xstrndup(line, (size_t)(colon - line));
			r->values[r->nheaders] = xstrndup(colon + 1, len - (size_t)(colon + 1 - line));
			r->headers[r->nheaders].value = r->values[r->nheaders];
			r->nheaders++;
		}
	}
	r->body = pos;
	r->body_len = (size_t)(end - pos);
	return NULL;
}

static void free_request(struct raw_request *r)
{
	size_t i;

	free(r->method);
	free(r->path);
	free(r->query);
	for (i = 0; i < r->nheaders; i++) {
		free((char *)r->headers[i].name);
		free(r->values[i]);
	}
}

/* Index of the header named name (any case), or -1. */
static long find_header(const struct raw_request *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nheaders; i++)
		if (!strcasecmp(r->headers[i].name, name))
			return (long)i;
	return -1;
}

/* Trimmed copy of s for comparing header values. */
static char *trimmed(const char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return xstrndup(s, n);
}

static int read_all(FILE *f, struct hp_buf *b)
{
	char chunk[65536];
	size_t got;

	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (hp_buf_add(b, chunk, got))
			return -1;
	return ferror(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "access-key", required_argument, NULL, 'a' },
		{ "secret-key", required_argument, NULL, 's' },
		{ "token", required_argument, NULL, 't' },
		{ "region", required_argument, NULL, 'r' },
		{ "service", required_argument, NULL, 'v' },
		{ "time", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hp_sigv4_params p;
	struct hp_sigv4_request req;
	struct raw_request raw;
	struct hp_buf in = HP_BUF_INIT(HP_MAX_HTTP_BODY);
	struct hp_buf creq = HP_BUF_INIT(HP_MAX_FILE);
	struct hp_buf sts = HP_BUF_INIT(HP_MAX_LINE);
	struct hp_buf authz = HP_BUF_INIT(HP_MAX_FILE);
	const char *time_arg = NULL, *err;
	int c, rc = 0;

	memset(&p, 0, sizeof(p));
	memset(&raw, 0, sizeof(raw));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a': p.access_key = optarg; break;
		case 's': p.secret_key = optarg; break;
		case 't': p.session_token = optarg; break;
		case 'r': p.region = optarg; break;
		case 'v': p.service = optarg; break;
		case 'T': time_arg = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		default:
			return fail_usage("unknown option or missing value", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fail_usage("unexpected argument", argv[optind]);
	if (!p.access_key || !*p.access_key)
		return fail_usage("missing --access-key", NULL);
	if (!p.secret_key || !*p.secret_key)
		return fail_usage("missing --secret-key", NULL);
	if (!p.region || !*p.region)
		return fail_usage("missing --region", NULL);
	if (!p.service || !*p.service)
		return fail_usage("missing --service", NULL);
	if (!time_arg)
		return fail_usage("missing --time", NULL);
	if (parse_time(time_arg, &p.now))
		return fail_usage("bad --time, want YYYYMMDDTHHMMSSZ:", time_arg);
	if (p.session_token && !*p.session_token)
		return fail_usage("empty --token", NULL);

	if (read_all(stdin, &in))
		return fail_input("cannot read the request from stdin");
	err = parse_request(&raw, in.buf, in.len);
	if (err) {
		rc = fail_input(err);
		goto out;
	}
	if (p.session_token) {
		long at = find_header(&raw, "X-Amz-Security-Token");

		if (at < 0 && raw.nheaders == MAX_HEADERS) {
			rc = fail_input("too many headers");
			goto out;
		} else if (at < 0) {
			raw.headers[raw.nheaders].name = xstrdup("X-Amz-Security-Token");
			raw.values[raw.nheaders] = xstrdup(p.session_token);
			raw.headers[raw.nheaders].value = raw.values[raw.nheaders];
			raw.nheaders++;
		} else {
			char *have = trimmed(raw.headers[at].value);
			int same = !strcmp(have, p.session_token);

			free(have);
			if (!same) {
				rc = fail_usage("--token differs from the request's X-Amz-Security-Token", NULL);
				goto out;
			}
		}
	}
	memset(&req, 0, sizeof(req));
	req.method = raw.method;
	req.path = raw.path;
	req.query = raw.query;
	req.headers = raw.headers;
	req.nheaders = raw.nheaders;
	req.payload = raw.body;
	req.payload_len = raw.body_len;
	if (hp_sigv4_canonical_request(&req, &creq, NULL) ||
	    hp_sigv4_string_to_sign(&p, &creq, &sts) || hp_sigv4_sign(&p, &req, &authz)) {
		rc = fail_input("cannot sign the request");
		goto out;
	}
	fwrite(creq.buf, 1, creq.len, stdout);
	printf("\n\n%s\n\n%s\n", sts.buf, authz.buf);
	if (fflush(stdout) || ferror(stdout))
		rc = fail_input("cannot write the output");
out:
	free_request(&raw);
	hp_buf_release(&in);
	hp_buf_release(&creq);
	hp_buf_release(&sts);
	hp_buf_release(&authz);
	return rc;
}
