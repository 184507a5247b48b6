/*
 * hp_buf: a capped, always NUL-terminated growable buffer (contract in
 * include/hp/buf.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/buf.h"
#include "hp/util.h"

char hp_buf_slop[1];

void hp_buf_init(struct hp_buf *b, size_t max)
{
	b->buf = hp_buf_slop;
	b->len = 0;
	b->alloc = 0;
	b->max = max;
	b->secret = 0;
}

void hp_buf_set_secret(struct hp_buf *b)
{
	b->secret = 1;
}

void hp_buf_release(struct hp_buf *b)
{
	int secret = b->secret;

	if (b->alloc) {
		if (secret)
			hp_wipe(b->buf, b->alloc);
		free(b->buf);
	}
	hp_buf_init(b, b->max);
	b->secret = secret;
}

void hp_buf_release_secure(struct hp_buf *b)
{
	if (b->alloc)
		hp_wipe(b->buf, b->alloc);
	hp_buf_release(b);
}

void hp_buf_reset(struct hp_buf *b)
{
	b->len = 0;
	b->buf[0] = '\0';
	if (!b->alloc)
		hp_buf_slop[0] = '\0';
}

char *hp_buf_detach(struct hp_buf *b, size_t *len)
{
	char *p;

	if (len)
		*len = b->len;
	if (!b->alloc)
		p = xstrdup("");
	else
		p = b->buf;
	hp_buf_init(b, b->max);
	return p;
}

static int grow(struct hp_buf *b, size_t extra)
{
	size_t want;

	if (extra > b->max || b->len > b->max - extra)
		return -1;
	want = b->len + extra + 1;
	if (want <= b->alloc)
		return 0;
	if (want < 64)
		want = 64;
	if (b->alloc && want < b->alloc + b->alloc / 2)
		want = b->alloc + b->alloc / 2;
	if (!b->alloc) {
		b->buf = xmalloc(want);
		b->buf[0] = '\0';
	} else if (b->secret) {
		/* No realloc: the old block would go back to the heap as it is. */
		char *p = xmalloc(want);

		memcpy(p, b->buf, b->len + 1);
		hp_wipe(b->buf, b->alloc);
		free(b->buf);
		b->buf = p;
	} else {
		b->buf = xrealloc(b->buf, want);
	}
	b->alloc = want;
	return 0;
}

int hp_buf_reserve(struct hp_buf *b, size_t n)
{
	return grow(b, n);
}

int hp_buf_add(struct hp_buf *b, const void *p, size_t n)
{
	if (!n)
		return 0;
	if (grow(b, n))
		return -1;
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return 0;
}

int hp_buf_adds(struct hp_buf *b, const char *s)
{
	return hp_buf_add(b, s, strlen(s));
}

int hp_buf_addc(struct hp_buf *b, char c)
{
	return hp_buf_add(b, &c, 1);
}

int hp_buf_vaddf(struct hp_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return -1;
	if (grow(b, (size_t)n))
		return -1;
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int hp_buf_addf(struct hp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = hp_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return r;
}

void hp_buf_puts(struct hp_buf *b, const char *s)
{
	if (hp_buf_adds(b, s))
		hp_die("internal buffer cap exceeded");
}

void hp_buf_putn(struct hp_buf *b, const void *p, size_t n)
{
	if (hp_buf_add(b, p, n))
		hp_die("internal buffer cap exceeded");
}

void hp_buf_putc(struct hp_buf *b, char c)
{
	if (hp_buf_addc(b, c))
		hp_die("internal buffer cap exceeded");
}

void hp_buf_printf(struct hp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = hp_buf_vaddf(b, fmt, ap);
	va_end(ap);
	if (r)
		hp_die("internal buffer cap exceeded");
}
