/*
 * The one text cleaner (include/hp/text.h): a single pass over the bytes
 * in which the caller's flags decide, kind by kind, what each byte
 * becomes. The output goes to a growable buffer or to a fixed array,
 * which may be the input itself.
 */
#include <string.h>

#include "hp/text.h"
#include "hp/util.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026 */
#define ELLIPSIS_LEN (sizeof(ELLIPSIS) - 1)

#define STRIP_ANY_ESC (HP_TEXT_STRIP_ESC | HP_TEXT_STRIP_ESC_LOOSE)
#define REPLACE_ANY (HP_TEXT_REPLACE_INVALID | HP_TEXT_REPLACE_BYTES)

/* Where cleaned bytes go: a buffer (buf) or a fixed array (dst). */
struct sink {
	struct hp_buf *buf;
	char *dst;
	size_t len;        /* bytes written by this call */
	size_t start;      /* buf->len before the call */
	size_t max;        /* most bytes this call may write */
	size_t keep;       /* length to cut back to, so that an ellipsis fits */
	int full;          /* the buffer refused an append */
};

static int in(unsigned char c, unsigned char lo, unsigned char hi)
{
	return c >= lo && c <= hi;
}

/* Appends n bytes; 0, or -1 when they do not fit (nothing written). */
static int put(struct sink *o, const void *p, size_t n)
{
	if (o->len + n > o->max)
		return -1;
	if (o->buf) {
		if (hp_buf_add(o->buf, p, n)) {
			o->full = 1;
			return -1;
		}
	} else {
		memmove(o->dst + o->len, p, n);
	}
	o->len += n;
	return 0;
}

/*
 * Appends the run of n plain bytes at p (each one character), as many as
 * fit, as put() would one by one; returns how many were written.
 */
static size_t put_run(struct sink *o, const unsigned char *p, size_t n)
{
	size_t k = o->max - o->len < n ? o->max - o->len : n, done = 0;

	if (!k)
		return 0;
	if (!o->buf || !hp_buf_add(o->buf, p, k)) {
		if (!o->buf)
			memmove(o->dst + o->len, p, k);
		done = k;
	} else {
		/* The buffer's cap is near: byte by byte, up to it. */
		while (done < k && !hp_buf_addc(o->buf, (char)p[done]))
			done++;
		if (done < k)
			o->full = 1;
	}
	/* The last length, among those just reached, after which an ellipsis still fits. */
	if (o->max >= ELLIPSIS_LEN) {
		size_t cand = o->len + done < o->max - ELLIPSIS_LEN ? o->len + done :
			o->max - ELLIPSIS_LEN;

		if (cand > o->len)
			o->keep = cand;
	}
	o->len += done;
	return done;
}

/* Text did not fit: cut back to where an ellipsis fits and add it. */
static void cut(struct sink *o)
{
	o->len = o->keep;
	if (o->buf) {
		o->buf->len = o->start + o->keep;
		o->buf->buf[o->buf->len] = '\0';
	}
	if (o->keep + ELLIPSIS_LEN <= o->max)
		(void)put(o, ELLIPSIS, ELLIPSIS_LEN);
}

/* s[i] is ESC; returns the index after the sequence, as a terminal reads it. */
static size_t esc_terminal(const unsigned char *s, size_t i, size_t n)
{
	size_t q = i + 1;

	if (q >= n)
		return q;
	switch (s[q]) {
	case '[':
		q++;
		while (q < n && in(s[q], 0x20, 0x3f))
			q++;
		if (q < n && in(s[q], 0x40, 0x7e))
			q++;
		return q;
	case ']':
	case 'P':
	case 'X':
	case '^':
	case '_':
		for (q++; q < n && s[q]; q++) {
			if (s[q] == 0x07)
				return q + 1;
			if (s[q] == 0x1b && q + 1 < n && s[q + 1] == '\\')
				return q + 2;
			if (s[q] == 0xc2 && q + 1 < n && s[q + 1] == 0x9c)
				return q + 2;
		}
		return q;
	default:
		break;
	}
	if (in(s[q], 0x20, 0x2f)) {
		while (q < n && in(s[q], 0x20, 0x2f))
			q++;
		if (q < n && in(s[q], 0x30, 0x7e))
			q++;
		return q;
	}
	if (in(s[q], 0x30, 0x7e))
		return q + 1;
	return q;
}

/* s[i] is ESC; returns the index after the sequence, read the loose way. */
static size_t esc_loose(const unsigned char *s, size_t i, size_t n, unsigned rule)
{
	i++;
	if (i >= n)
		return n;
	if (s[i] == '[') {
		i++;
		while (i < n && !in(s[i], 0x40, 0x7e))
			i++;
	} else if (s[i] && strchr("]PX^_", s[i])) {
		i++;
		while (i < n && s[i] != 0x07 && s[i] != 0x1b)
			i++;
		if (i < n && s[i] == 0x1b)
			i++;
	} else if (rule & HP_TEXT_ESC_INTERMEDIATES) {
		while (i < n && in(s[i], 0x20, 0x2f))
			i++;
	}
	i++;
	return i < n ? i : n;
}

/*
 * Length of the well-formed UTF-8 sequence at s (2 to 4 of the n bytes
 * left), or, when it is ill-formed, minus the length of its maximal
 * ill-formed prefix (at least 1). Ranges follow Unicode table 3-7.
 */
static int utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int k, i;

	if (in(s[0], 0xc2, 0xdf))
		k = 2;
	else if (in(s[0], 0xe0, 0xef))
		k = 3;
	else if (in(s[0], 0xf0, 0xf4))
		k = 4;
	else
		return -1;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	for (i = 1; i < k; i++) {
		if ((size_t)i >= n || !in(s[i], i == 1 ? lo : 0x80, i == 1 ? hi : 0xbf))
			return -i;
	}
	return k;
}

static void clean(unsigned rule, const unsigned char *s, size_t n, struct sink *o)
{
	/* Bytes from 0x80 are plain too when no flag reads UTF-8. */
	int raw_high = !(rule & (REPLACE_ANY | HP_TEXT_C1_QMARK));
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		const void *chr = s + i;
		size_t len = 1, step = 1, run;

		/* Nothing more can be written and no ellipsis is owed: stop reading. */
		if (o->full || (o->len == o->max && !(rule & HP_TEXT_ELLIPSIS)))
			return;
		/* A run of plain bytes, each kept as it is: copied at once. */
		for (run = i; run < n && ((s[run] >= 0x20 && s[run] < 0x7f) ||
					  (raw_high && s[run] >= 0x80)); run++)
			;
		if (run > i) {
			size_t k = put_run(o, s + i, run - i);

			i += k;
			if (i < run)
				break;
			continue;
		}
		if (c == 0x1b && (rule & STRIP_ANY_ESC)) {
			i = rule & HP_TEXT_STRIP_ESC ? esc_terminal(s, i, n) : esc_loose(s, i, n, rule);
			continue;
		}
		if (c == '\t' && (rule & HP_TEXT_KEEP_TAB)) {
			/* kept */
		} else if (c == '\t' && (rule & HP_TEXT_TAB_SPACE)) {
			chr = " ";
		} else if ((c == '\r' || c == '\n') && (rule & HP_TEXT_NL_SPACE)) {
			chr = " ";
		} else if (c < 0x20 || c == 0x7f) {
			if (!(rule & HP_TEXT_CTRL_QMARK)) {
				i++;
				continue;
			}
			chr = "?";
		} else if (c >= 0x80 && (rule & HP_TEXT_C1_QMARK) && c == 0xc2 && i + 1 < n &&
			   in(s[i + 1], 0x80, 0x9f)) {
			/* A C1 control: one '?' for each of its two bytes. */
			if (put(o, "?", 1))
				break;
			chr = "?";
			step = 2;
		} else if (c >= 0x80 && (rule & REPLACE_ANY)) {
			int k = utf8_len(s + i, n - i);

			if (k < 0) {
				chr = "?";
				step = rule & HP_TEXT_REPLACE_BYTES ? 1 : (size_t)-k;
			} else if (k == 2 && c == 0xc2 && s[i + 1] < 0xa0 &&
				   (rule & HP_TEXT_DROP_C1)) {
				i += 2;
				continue;
			} else {
				len = step = (size_t)k;
			}
		}
		if (put(o, chr, len))
			break;
		if (o->len + ELLIPSIS_LEN <= o->max)
			o->keep = o->len;
		i += step;
	}
	/* Stopped before the end with something left to show: cut. */
	if (i < n && !o->full && (rule & HP_TEXT_ELLIPSIS))
		cut(o);
}

void hp_text_addn(unsigned rule, const char *s, size_t n, size_t max, struct hp_buf *out)
{
	struct sink o;

	if (!s)
		return;
	memset(&o, 0, sizeof(o));
	o.buf = out;
	o.start = out->len;
	o.max = max;
	clean(rule, (const unsigned char *)s, n, &o);
}

void hp_text_add(unsigned rule, const char *s, struct hp_buf *out, size_t max)
{
	if (s)
		hp_text_addn(rule, s, strlen(s), max, out);
}

size_t hp_text_copy(unsigned rule, const char *s, size_t n, char *dst)
{
	struct sink o;

	memset(&o, 0, sizeof(o));
	o.dst = dst;
	o.max = (size_t)-1;
	clean(rule & ~HP_TEXT_ELLIPSIS, (const unsigned char *)s, n, &o);
	dst[o.len] = '\0';
	return o.len;
}

const char *hp_text_str(unsigned rule, const char *in, char *out, size_t n)
{
	if (!n)
		return out;
	if (rule & HP_TEXT_REDACT_URLS)
		hp_redact_urls(in, out, n);
	else
		hp_strlcpy(out, in, n);
	hp_text_copy(rule, out, strlen(out), out);
	return out;
}

/*
 * The end of the terminal escape sequence at s[i] (an ESC), as the report's
 * sanitizer reads it: CSI to its final byte, OSC/DCS/SOS/PM/APC to BEL or
 * ST, another ESC with its intermediates and final byte.
 */
static size_t escape_end(const char *s, size_t i)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t q = i + 1;

	if (u[q] == '[') {
		for (q++; u[q] >= 0x20 && u[q] <= 0x3f; q++)
			;
		return u[q] >= 0x40 && u[q] <= 0x7e ? q + 1 : q;
	}
	if (u[q] == ']' || u[q] == 'P' || u[q] == 'X' || u[q] == '^' || u[q] == '_') {
		for (q++; u[q]; q++) {
			if (u[q] == 0x07)
				return q + 1;
			if ((u[q] == 0x1b && u[q + 1] == '\\') || (u[q] == 0xc2 && u[q + 1] == 0x9c))
				return q + 2;
		}
		return q;
	}
	while (u[q] >= 0x20 && u[q] <= 0x2f)
		q++;
	return u[q] >= 0x30 && u[q] <= 0x7e ? q + 1 : q;
}

const char *hp_text_clip(const char *s, size_t chars, char *out)
{
	size_t i = 0, n = 0, k;

	if (!s)
		s = "";
	while (s[i] && n < chars) {
		size_t cont = 0;

		i++;
		while (cont < 3 && (s[i] & 0xC0) == 0x80) {
			i++;
			cont++;
		}
		n++;
	}
	/*
	 * A cut inside an escape sequence drops the sequence's start: left
	 * there, the sanitizer would take the ellipsis for part of it.
	 */
	for (k = 0; s[i] && k < i; k++)
		if (s[k] == 0x1b) {
			size_t end = escape_end(s, k);

			if (end > i) {
				i = k;
				break;
			}
			k = end - 1;
		}
	memcpy(out, s, i);
	if (s[i])
		memcpy(out + i, "\xE2\x80\xA6", 4);
	else
		out[i] = '\0';
	return out;
}
