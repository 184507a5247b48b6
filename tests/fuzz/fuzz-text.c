/*
 * The text cleaner (src/util/text.c) against the five cleaners it
 * replaced, kept here as they were: hp_sanitize (HP_TEXT_REPORT),
 * hp_nccl_clean (HP_TEXT_LOG), pb_clean (HP_TEXT_PROBE), hp_clean_text
 * (HP_TEXT_MESSAGE, in place), hp_safe_text (the same after the URL
 * userinfo is starred); hp_text_clip only for sanity. Input: two bytes
 * of limit, then the text. Oracle: every rule gives the bytes its old
 * cleaner gave, and the report rule's output is clean UTF-8.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hp/buf.h"
#include "hp/text.h"
#include "hp/util.h"

#define MAX_TEXT (16u << 10)

/* ---- the old cleaners, as they were ---- */

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */
#define ELLIPSIS_LEN (sizeof(ELLIPSIS) - 1)

/* Drop bytes from the end of b so that it holds len bytes. */
static void san_buf_cut(struct hp_buf *b, size_t len)
{
	if (len >= b->len)
		return;
	b->len = len;
	b->buf[len] = '\0';
}

static int san_in(unsigned char c, unsigned char lo, unsigned char hi)
{
	return c >= lo && c <= hi;
}

/*
 * p points at ESC; returns the first byte after the sequence it starts.
 * CSI (ESC [) runs to its final byte; OSC, DCS, SOS, PM and APC run to
 * BEL or ST (ESC \ or U+009C) or, unterminated, to the end of the string;
 * any other ESC takes its intermediates and final byte along.
 */
static const unsigned char *san_skip_escape(const unsigned char *p)
{
	const unsigned char *q = p + 1;

	switch (*q) {
	case '[':
		q++;
		while (san_in(*q, 0x20, 0x3f))
			q++;
		if (san_in(*q, 0x40, 0x7e))
			q++;
		return q;
	case ']':
	case 'P':
	case 'X':
	case '^':
	case '_':
		for (q++; *q; q++) {
			if (*q == 0x07)
				return q + 1;
			if (q[0] == 0x1b && q[1] == '\\')
				return q + 2;
			if (q[0] == 0xc2 && q[1] == 0x9c)
				return q + 2;
		}
		return q;
	default:
		break;
	}
	if (san_in(*q, 0x20, 0x2f)) {
		while (san_in(*q, 0x20, 0x2f))
			q++;
		if (san_in(*q, 0x30, 0x7e))
			q++;
		return q;
	}
	if (san_in(*q, 0x30, 0x7e))
		return q + 1;
	return q;
}

/*
 * Length of the well-formed UTF-8 sequence at p (2 to 4), or, when it is
 * ill-formed, minus the length of its maximal ill-formed prefix (at least
 * 1), which is replaced by one '?'. Ranges follow Unicode table 3-7, so
 * overlong forms, surrogates and values above U+10FFFF are rejected.
 */
static int san_utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (san_in(p[0], 0xc2, 0xdf))
		n = 2;
	else if (san_in(p[0], 0xe0, 0xef))
		n = 3;
	else if (san_in(p[0], 0xf0, 0xf4))
		n = 4;
	else
		return -1;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < n; i++) {
		if (!san_in(p[i], i == 1 ? lo : 0x80, i == 1 ? hi : 0xbf))
			return -i;
	}
	return n;
}

/*
 * Appends s to out, cleaned, using at most max bytes; text that does not fit
 * is cut after a whole character and ends in an ellipsis (U+2026).
 */
static void old_sanitize(const char *s, struct hp_buf *out, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t start = out->len, keep = out->len;

	if (!s)
		return;
	while (*p) {
		const void *chr = p;
		size_t n = 1;

		if (*p == 0x1b) {
			p = san_skip_escape(p);
			continue;
		}
		if (*p == '\t' || *p == '\r' || *p == '\n') {
			chr = " ";
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			p++;
			continue;
		} else if (*p < 0x80) {
			p++;
		} else {
			int len = san_utf8_len(p);

			if (len < 0) {
				chr = "?";
				p += -len;
			} else {
				n = (size_t)len;
				p += n;
				/* C1 controls U+0080..U+009F: C2 80..C2 9F */
				if (n == 2 && ((const unsigned char *)chr)[0] == 0xc2 &&
				    ((const unsigned char *)chr)[1] < 0xa0)
					continue;
			}
		}
		if (out->len - start + n > max) {
			san_buf_cut(out, keep);
			if (keep - start + ELLIPSIS_LEN <= max)
				hp_buf_puts(out, ELLIPSIS);
			return;
		}
		hp_buf_putn(out, chr, n);
		if (out->len - start + ELLIPSIS_LEN <= max)
			keep = out->len;
	}
}

/* Length of the UTF-8 sequence at s (n bytes available), 0 when it is not one. */
static size_t nccl_utf8_len(const unsigned char *s, size_t n)
{
	size_t k, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		k = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		k = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		k = 4;
	else
		return 0;
	if (k > n)
		return 0;
	for (i = 1; i < k; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	cp = k == 2 ? (s[0] & 0x1Fu) : k == 3 ? (s[0] & 0x0Fu) : (s[0] & 0x07u);
	for (i = 1; i < k; i++)
		cp = cp << 6 | (s[i] & 0x3Fu);
	/* Overlong forms, surrogates and values past U+10FFFF are not text. */
	if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	/* C1 controls (U+0080..U+009F). */
	if (cp >= 0x80 && cp <= 0x9F)
		return 0;
	return k;
}

static void old_nccl_clean(const char *src, size_t n, size_t clip, struct hp_buf *out)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, kept = 0;

	while (i < n && kept < clip) {
		size_t k;

		if (s[i] == 0x1b) {
			/*
			 * An escape sequence: CSI parameters up to the final byte; OSC,
			 * DCS and the like up to BEL or ESC \; otherwise one more byte.
			 */
			i++;
			if (i < n && s[i] == '[') {
				i++;
				while (i < n && (s[i] < 0x40 || s[i] > 0x7e))
					i++;
			} else if (i < n && s[i] && strchr("]PX^_", s[i])) {
				i++;
				while (i < n && s[i] != 0x07 && s[i] != 0x1b)
					i++;
				if (i < n && s[i] == 0x1b)
					i++;
			}
			i++;
			continue;
		}
		if (s[i] == '\t') {
			if (hp_buf_addc(out, ' '))
				return;
			kept++;
			i++;
			continue;
		}
		if (s[i] < 0x20 || s[i] == 0x7f) {
			i++;
			continue;
		}
		k = nccl_utf8_len(s + i, n - i);
		if (!k) {
			if (hp_buf_addc(out, '?'))
				return;
			kept++;
			i++;
			continue;
		}
		if (kept + k > clip)
			break;
		if (hp_buf_add(out, s + i, k))
			return;
		kept += k;
		i += k;
	}
}

static size_t old_pb_clean(const char *src, size_t n, char *dst)
{
	size_t i = 0, o = 0;

	while (i < n) {
		unsigned char c = (unsigned char)src[i];

		if (c == 0x1b) {
			i++;
			if (i >= n)
				break;
			c = (unsigned char)src[i];
			if (c == '[') {
				/* CSI: parameters and intermediates, then one final byte. */
				i++;
				while (i < n && ((unsigned char)src[i] < 0x40 || (unsigned char)src[i] > 0x7e))
					i++;
				i++;
			} else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
				/* A string ended by BEL or ESC \ (or the end of the line). */
				i++;
				while (i < n && src[i] != '\a' && src[i] != 0x1b)
					i++;
				if (i < n && src[i] == 0x1b)
					i++;
				i++;
			} else {
				while (i < n && (unsigned char)src[i] >= 0x20 && (unsigned char)src[i] <= 0x2f)
					i++;
				i++;
			}
			continue;
		}
		i++;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			continue;
		dst[o++] = (char)c;
	}
	dst[o] = '\0';
	return o;
}

static void old_clean_text(char *s)
{
	unsigned char *p = (unsigned char *)s;

	for (; *p; p++) {
		if (*p == '\t' || *p == '\n' || *p == '\r')
			*p = ' ';
		else if (*p < 0x20 || *p == 0x7f)
			*p = '?';
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			/* A C1 control (U+0080..U+009F), CSI among them. */
			p[0] = '?';
			p[1] = '?';
			p++;
		}
	}
}

/* ---- the oracle ---- */

static void same(const char *what, const char *want, size_t wn, const char *got, size_t gn)
{
	if (wn != gn || memcmp(want, got, wn))
		fz_fail(what, got, gn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hp_buf a = HP_BUF_INIT((size_t)-1), b = HP_BUF_INIT((size_t)-1);
	size_t max, n, cstr;
	char *s, *x, *y;

	if (size < 2)
		return 0;
	max = (size_t)data[0] << 8 | data[1];
	data += 2;
	size -= 2;
	if (size > MAX_TEXT)
		size = MAX_TEXT;
	n = size;
	s = malloc(n + 1);
	x = malloc(n + 1);
	y = malloc(n + 1);
	memcpy(s, data, n);
	s[n] = '\0';
	cstr = strlen(s);

	/* The report rule appends after what the buffer holds. */
	hp_buf_puts(&a, "pre");
	hp_buf_puts(&b, "pre");
	old_sanitize(s, &a, max);
	hp_text_add(HP_TEXT_REPORT, s, &b, max);
	same("HP_TEXT_REPORT differs from hp_sanitize", a.buf, a.len, b.buf, b.len);
	fz_assert_clean("HP_TEXT_REPORT output", b.buf, b.len, 0);

	hp_buf_reset(&a);
	hp_buf_reset(&b);
	old_nccl_clean(s, n, max, &a);
	hp_text_addn(HP_TEXT_LOG, s, n, max, &b);
	same("HP_TEXT_LOG differs from hp_nccl_clean", a.buf, a.len, b.buf, b.len);

	same("HP_TEXT_PROBE differs from pb_clean", x, old_pb_clean(s, n, x), y,
	     hp_text_copy(HP_TEXT_PROBE, s, n, y));

	memcpy(x, s, cstr + 1);
	memcpy(y, s, cstr + 1);
	old_clean_text(x);
	hp_text_copy(HP_TEXT_MESSAGE, y, cstr, y);
	same("HP_TEXT_MESSAGE differs from hp_clean_text", x, strlen(x), y, strlen(y));

	{
		size_t lim = max % (n + 2);

		if (lim) {
			hp_redact_urls(s, x, lim);
			old_clean_text(x);
			hp_text_str(HP_TEXT_MESSAGE | HP_TEXT_REDACT_URLS, s, y, lim);
			same("hp_text_str differs from hp_safe_text", x, strlen(x), y, strlen(y));
		}
	}

	{
		size_t chars = max % 64;
		char *p = malloc(HP_CLIP_SIZE(chars)), *q = malloc(HP_CLIP_SIZE(chars));

		/*
		 * Clipping changed on purpose (a cut inside an escape sequence keeps
		 * its ellipsis): the old copy is not an oracle for it any more. The
		 * clip is a prefix of the input, then the ellipsis when cut.
		 */
		hp_text_clip(s, chars, q);
		(void)p;
		if (strncmp(q, s, strlen(q)) && !strstr(q, "\xE2\x80\xA6"))
			__builtin_trap();
		free(p);
		free(q);
	}

	hp_buf_release(&a);
	hp_buf_release(&b);
	free(s);
	free(x);
	free(y);
	return 0;
}
