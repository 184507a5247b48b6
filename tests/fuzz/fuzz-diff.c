/*
 * `hpnode diff` and `triage --baseline` on saved JSON reports
 * (src/report/diff.c): two documents separated by a NUL, each parsed as
 * cmd-diff.c parses a file and read as a report side, then compared and
 * rendered as text, JSON and JUnit. Oracles: a refused side leaves a clean
 * error message; the three renderings are clean text, the JSON parses and
 * the JUnit is well-formed XML.
 */
#include <string.h>

#include "fuzz.h"
#include "hp/buf.h"
#include "hp/err.h"
#include "hp/json.h"
#include "hp/report.h"

static int side(struct hp_diff_side *s, const char *name, const char *text, size_t len)
{
	struct hp_error e = HP_ERROR_INIT;
	cJSON *doc = hp_json_parse(text, len, NULL);
	int rc;

	hp_diff_side_init(s, name, "report");
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return -1;
	}
	rc = hp_diff_side_report(s, doc, &e);
	cJSON_Delete(doc);
	if (rc)
		fz_assert_clean("diff side error", e.msg, strlen(e.msg), 0);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hp_diff_side a, b;
	struct fz_parts ps;
	struct hp_diff d;
	struct hp_buf out = HP_BUF_INIT((size_t)16 << 20);
	cJSON *back;

	if (size > (1u << 20))
		return 0;
	fz_split(data, size, 2, &ps);
	if (ps.n == 2) {
		int ok = !side(&a, "old.json", ps.p[0], ps.len[0]);

		ok = !side(&b, "new.json", ps.p[1], ps.len[1]) && ok;
		if (ok) {
			memset(&d, 0, sizeof(d));
			hp_diff_compare(&d, &a, &b);
			hp_diff_text(&d, (int)(size & 1), &out);
			hp_diff_text_inventory(&d, 0, &out);
			if (!(size & 1))
				fz_assert_clean("diff text", out.buf, out.len, 0);
			hp_buf_reset(&out);
			hp_diff_json(&d, &out);
			fz_assert_clean("diff JSON", out.buf, out.len, 0);
			back = hp_json_parse(out.buf, out.len, NULL);
			if (!back)
				fz_fail("diff JSON does not parse", out.buf, out.len);
			cJSON_Delete(back);
			hp_buf_reset(&out);
			hp_diff_junit(&d, &out);
			fz_check_junit(&out);
			hp_diff_release(&d);
		}
		hp_diff_side_release(&a);
		hp_diff_side_release(&b);
	}
	hp_buf_release(&out);
	fz_parts_release(&ps);
	return 0;
}
