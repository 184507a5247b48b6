/*
 * The shared fuzz helpers of fuzz.h.
 */
#include <expat.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "fuzz.h"
#include "hp/aws.h"
#include "hp/check.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/report.h"
#include "hp/text.h"
#include "hp/util.h"

/* As main() does: cJSON allocates through xmalloc (include/hp/json.h). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	hp_json_init();
	return 0;
}

void fz_split(const uint8_t *data, size_t size, size_t max, struct fz_parts *out)
{
	size_t start = 0, i;

	memset(out, 0, sizeof(*out));
	if (max > 32)
		max = 32;
	for (i = 0; i <= size && out->n < max; i++) {
		if (i == size || (data[i] == 0 && out->n + 1 < max)) {
			size_t n = i - start;

			out->p[out->n] = xmalloc(n + 1);
			if (n)
				memcpy(out->p[out->n], data + start, n);
			out->p[out->n][n] = 0;
			out->len[out->n] = n;
			out->n++;
			start = i + 1;
		}
	}
}

void fz_parts_release(struct fz_parts *ps)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		free(ps->p[i]);
	ps->n = 0;
}

void fz_fail(const char *what, const char *text, size_t len)
{
	fprintf(stderr, "fuzz oracle failed: %s\n", what);
	if (text) {
		fprintf(stderr, "--- output (%zu bytes) ---\n", len);
		fwrite(text, 1, len > 4000 ? 4000 : len, stderr);
		fprintf(stderr, "\n--- end ---\n");
	}
	abort();
}

/* Length of the UTF-8 sequence at p (valid, shortest form, no surrogates), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n, unsigned *cp)
{
	unsigned c = p[0], v;
	size_t need, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 3;
		v = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 4;
		v = c & 0x07;
	} else {
		return 0;
	}
	if (n < need)
		return 0;
	for (i = 1; i < need; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3f);
	}
	if ((need == 3 && v < 0x800) || (need == 4 && (v < 0x10000 || v > 0x10ffff)) ||
	    (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return need;
}

void fz_assert_clean(const char *what, const char *text, size_t len, int allow_tab)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t i = 0;

	while (i < len) {
		unsigned cp;
		size_t k = utf8_len(p + i, len - i, &cp);
		char msg[160];

		if (!k) {
			snprintf(msg, sizeof(msg), "%s: invalid UTF-8 byte 0x%02x at offset %zu", what,
				 p[i], i);
			fz_fail(msg, text, len);
		}
		if ((cp < 0x20 && cp != '\n' && !(allow_tab && cp == '\t')) || cp == 0x7f ||
		    (cp >= 0x80 && cp <= 0x9f)) {
			snprintf(msg, sizeof(msg), "%s: control character U+%04X at offset %zu", what,
				 cp, i);
			fz_fail(msg, text, len);
		}
		i += k;
	}
}

void fz_assert_absent(const char *what, const char *text, size_t len, const char *needle)
{
	size_t n = strlen(needle), i;
	char msg[160];

	if (n < 8 || len < n)
		return;
	for (i = 0; i + n <= len; i++) {
		if (text[i] == needle[0] && !memcmp(text + i, needle, n)) {
			snprintf(msg, sizeof(msg), "%s: a secret appears in the output", what);
			fz_fail(msg, text, len);
		}
	}
}

static void check_out(const char *what, const struct hp_buf *b, const char *const *secrets,
		      int allow_tab)
{
	size_t i;

	fz_assert_clean(what, b->buf, b->len, allow_tab);
	for (i = 0; secrets && secrets[i]; i++)
		fz_assert_absent(what, b->buf, b->len, secrets[i]);
}

void fz_check_error(const char *msg, const char *const *secrets)
{
	struct hp_buf b = HP_BUF_INIT(4096);

	hp_text_add(HP_TEXT_REPORT, msg, &b, 2048);
	check_out("error message", &b, secrets, 0);
	hp_buf_release(&b);
}

/*
 * The words a printed command splits into in a POSIX shell, with its
 * placeholders (<instance-id>) standing for one word each: -1 when an
 * unquoted operator, expansion or glob is in it (a value that could run
 * something), -2 for an unterminated quote.
 */
int fz_shell_words(const char *cmd)
{
	int words = 0, in = 0;
	const char *p = cmd;

	while (*p) {
		unsigned char c = (unsigned char)*p;

		if (c == ' ' || c == '\t') {
			in = 0;
			p++;
			continue;
		}
		if (!in) {
			words++;
			in = 1;
		}
		if (c == '<') {
			size_t n = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-");

			if (n && p[1 + n] == '>') {
				p += n + 2;
				continue;
			}
		}
		if (c == '\'') {
			const char *q = strchr(p + 1, '\'');

			if (!q)
				return -2;
			p = q + 1;
			continue;
		}
		if (strchr(";&|<>()`$\\\"*?[{}\n", c))
			return -1;
		p++;
	}
	return words;
}

/*
 * Every printed command of the text report splits into the words it
 * should, no more. A command is found where the report puts one: a next
 * step's line starts with its fixed text; the kubectl hint is the last
 * thing of its finding's message (remote text only comes before it, so
 * the last "point kubectl at this cluster: " of the line is the report's).
 */
static void check_commands(const struct hp_buf *text)
{
	static const struct { const char *line_start, *cmd, *last; int words; } cmds[] = {
		{ "    \xe2\x80\xa2 If a workload still fails on one node, focus on it: ",
		  "hpnode triage --cluster ", NULL, 8 },
		{ "    3. After a fix, confirm on the affected node: ", "hpnode triage --cluster ", NULL, 8 },
		{ NULL, "aws eks update-kubeconfig ", "point kubectl at this cluster: ", 7 },
	};
	const char *line = text->buf;

	while (*line) {
		size_t n = strcspn(line, "\n"), i;

		for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			const char *at = NULL, *q;
			char *l = xstrndup(line, n), *cmd, msg[160];
			size_t m;
			int w;

			if (cmds[i].line_start) {
				if (!strncmp(l, cmds[i].line_start, strlen(cmds[i].line_start)))
					at = l + strlen(cmds[i].line_start);
			} else {
				for (q = l; (q = strstr(q, cmds[i].last)) != NULL; q++)
					at = q + strlen(cmds[i].last);
			}
			if (!at || strncmp(at, cmds[i].cmd, strlen(cmds[i].cmd))) {
				free(l);
				continue;
			}
			m = strlen(at);
			if ((q = strstr(at, " \xe2\x86\x92 ")) != NULL)
				m = (size_t)(q - at);
			cmd = xstrndup(at, m);
			while (m && cmd[m - 1] == ' ')
				cmd[--m] = '\0';
			/* A line cut short (ends in an ellipsis) is not a whole command. */
			if (!strstr(cmd, "\xe2\x80\xa6") && (w = fz_shell_words(cmd)) != cmds[i].words) {
				snprintf(msg, sizeof(msg), "printed command splits into %d shell words, not %d",
					 w, cmds[i].words);
				fz_fail(msg, cmd, m);
			}
			free(cmd);
			free(l);
		}
		line += n + (line[n] == '\n');
	}
}

/* The JUnit report parses as XML 1.0 with a real parser (expat). */
void fz_check_junit(const struct hp_buf *junit)
{
	XML_Parser x = XML_ParserCreate("UTF-8");
	char msg[200];

	if (!x)
		return;
	if (XML_Parse(x, junit->buf, (int)junit->len, 1) != XML_STATUS_OK) {
		snprintf(msg, sizeof(msg), "JUnit report is not well-formed XML: %s at line %lu",
			 XML_ErrorString(XML_GetErrorCode(x)), (unsigned long)XML_GetCurrentLineNumber(x));
		XML_ParserFree(x);
		fz_fail(msg, junit->buf, junit->len);
	}
	XML_ParserFree(x);
}

void fz_check_report(struct hp_snapshot *s, const char *const *secrets)
{
	struct hp_findings f = { 0 };
	struct hp_report_opts ro;
	struct hp_buf text = HP_BUF_INIT((size_t)1 << 30);
	struct hp_buf json = HP_BUF_INIT((size_t)1 << 30);
	const char *cluster = hp_snap_cluster_name(s);

	hp_facts_prepare(s);
	hp_checks_run(s, &f);
	memset(&ro, 0, sizeof(ro));
	ro.cluster = *cluster ? cluster : NULL;
	ro.region = hp_json_str(hp_snapshot_get(s, "meta"), "region");
	ro.orchestrator = hp_snap_orchestrator(s);
	ro.suggest = 1;
	ro.snap = s;
	hp_report_text(&f, &ro, &text);
	/* HP_FUZZ_SHOW=1: print the report, to see what an input reaches. */
	if (getenv("HP_FUZZ_SHOW"))
		fwrite(text.buf, 1, text.len, stderr);
	check_out("text report", &text, secrets, 0);
	check_commands(&text);
	hp_report_json(&f, &ro, &json);
	/* JSON escapes control characters; the document must still be UTF-8 and parse. */
	check_out("JSON report", &json, secrets, 0);
	{
		cJSON *doc = cJSON_ParseWithLength(json.buf, json.len);

		if (!doc)
			fz_fail("JSON report does not parse", json.buf, json.len);
		cJSON_Delete(doc);
	}
	hp_buf_reset(&json);
	hp_report_junit(&f, &ro, &json);
	check_out("JUnit report", &json, secrets, 0);
	fz_check_junit(&json);
	hp_buf_release(&text);
	hp_buf_release(&json);
	hp_findings_release(&f);
}

static const struct fz_parts *http_parts;
static size_t http_next, http_max_body;

static int fz_http(struct hp_sys *sys, const struct hp_http_req *req, struct hp_http_resp *resp)
{
	const char *body, *ctype = "text/xml;charset=UTF-8";
	size_t len, i;
	long status = 200;

	(void)sys;
	if (!http_parts || http_next >= http_parts->n) {
		resp->net = HP_NET_CONNECT;
		hp_strlcpy(resp->errmsg, "fuzz: no reply left", sizeof(resp->errmsg));
		return -1;
	}
	body = http_parts->p[http_next];
	len = http_parts->len[http_next];
	http_next++;
	if (len >= 5 && body[0] == '@' && body[1] >= '1' && body[1] <= '5' && body[2] >= '0' &&
	    body[2] <= '9' && body[3] >= '0' && body[3] <= '9' && body[4] == ' ') {
		status = (body[1] - '0') * 100 + (body[2] - '0') * 10 + (body[3] - '0');
		body += 5;
		len -= 5;
	}
	if (len > http_max_body)
		len = http_max_body;
	if (!strcmp(req->method, "GET"))
		ctype = "application/json";
	for (i = 0; i < req->nheaders; i++)
		if (!strcasecmp(req->headers[i].name, "X-Amz-Target"))
			ctype = "application/x-amz-json-1.1";
	resp->status = status;
	hp_buf_printf(&resp->headers, "Content-Type: %s\r\nx-amzn-RequestId: fuzz-1\r\n", ctype);
	hp_buf_putn(&resp->body, body, len);
	return 0;
}

void fz_aws(struct fake_sys *f, struct hp_aws *a, const struct fz_parts *ps, size_t first,
	    size_t max_body)
{
	fake_aws(f, a, 1);
	a->creds.secret_key = (char *)(uintptr_t)FZ_SECRET;
	a->creds.session_token = (char *)(uintptr_t)FZ_TOKEN;
	f->sys.http = fz_http;
	http_parts = ps;
	http_next = first;
	http_max_body = max_body;
}
