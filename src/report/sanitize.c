/*
 * hp_sanitize: makes a string that came from the cluster safe to print on
 * a terminal or to put in JSON. It strips control characters and terminal
 * escape sequences and repairs invalid UTF-8; it does not touch printable
 * Unicode (bidirectional marks and the like are kept as they are).
 */
#include <string.h>

#include "hp/report.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */
#define ELLIPSIS_LEN (sizeof(ELLIPSIS) - 1)

/* Drop bytes from the end of b so that it holds len bytes. */
static void buf_cut(struct hp_buf *b, size_t len)
{
	if (len >= b->len)
		return;
	b->len = len;
	b->buf[len] = '\0';
}

static int in(unsigned char c, unsigned char lo, unsigned char hi)
{
	return c >= lo && c <= hi;
}

/*
 * p points at ESC; returns the first byte after the sequence it starts.
 * CSI (ESC [) runs to its final byte; OSC, DCS, SOS, PM and APC run to
 * BEL or ST (ESC \ or U+009C) or, unterminated, to the end of the string;
 * any other ESC takes its intermediates and final byte along.
 */
static const unsigned char *skip_escape(const unsigned char *p)
{
	const unsigned char *q = p + 1;

	switch (*q) {
	case '[':
		q++;
		while (in(*q, 0x20, 0x3f))
			q++;
		if (in(*q, 0x40, 0x7e))
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
	if (in(*q, 0x20, 0x2f)) {
		while (in(*q, 0x20, 0x2f))
			q++;
		if (in(*q, 0x30, 0x7e))
			q++;
		return q;
	}
	if (in(*q, 0x30, 0x7e))
		return q + 1;
	return q;
}

/*
 * Length of the well-formed UTF-8 sequence at p (2 to 4), or, when it is
 * ill-formed, minus the length of its maximal ill-formed prefix (at least
 * 1), which is replaced by one '?'. Ranges follow Unicode table 3-7, so
 * overlong forms, surrogates and values above U+10FFFF are rejected.
 */
static int utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (in(p[0], 0xc2, 0xdf))
		n = 2;
	else if (in(p[0], 0xe0, 0xef))
		n = 3;
	else if (in(p[0], 0xf0, 0xf4))
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
		if (!in(p[i], i == 1 ? lo : 0x80, i == 1 ? hi : 0xbf))
			return -i;
	}
	return n;
}

/*
 * Appends s to out, cleaned, using at most max bytes; text that does not fit
 * is cut after a whole character and ends in an ellipsis (U+2026).
 */
void hp_sanitize(const char *s, struct hp_buf *out, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t start = out->len, keep = out->len;

	if (!s)
		return;
	while (*p) {
		const void *chr = p;
		size_t n = 1;

		if (*p == 0x1b) {
			p = skip_escape(p);
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
			int len = utf8_len(p);

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
			buf_cut(out, keep);
			if (keep - start + ELLIPSIS_LEN <= max)
				hp_buf_puts(out, ELLIPSIS);
			return;
		}
		hp_buf_putn(out, chr, n);
		if (out->len - start + ELLIPSIS_LEN <= max)
			keep = out->len;
	}
}
