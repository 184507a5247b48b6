/*
 * Allocation wrappers that die on failure, and small string helpers.
 */
#include <ctype.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/buf.h"
#include "hp/util.h"

void hp_die(const char *fmt, ...)
{
	va_list ap;

	fputs("hpnode: fatal: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int heap_set_up;

void hp_heap_setup(void)
{
#ifdef __GLIBC__
	mallopt(M_ARENA_MAX, HP_HEAP_ARENAS);
#endif
	heap_set_up = 1;
}

int hp_heap_leave_at_exit(void)
{
	return heap_set_up && !HP_LEAK_CHECKED;
}

void hp_heap_trim(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		hp_die("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		hp_die("out of memory");
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		hp_die("out of memory");
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		hp_die("bad format string");
	p = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

size_t hp_strlcpy(char *dst, const char *src, size_t n)
{
	size_t len = strlen(src);

	if (n) {
		size_t c = len < n - 1 ? len : n - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return len;
}

const char *hp_strcasestr(const char *hay, const char *needle)
{
	size_t nl = strlen(needle);

	if (!nl)
		return hay;
	for (; *hay; hay++) {
		size_t i;
		for (i = 0; i < nl; i++) {
			if (!hay[i] || tolower((unsigned char)hay[i]) != tolower((unsigned char)needle[i]))
				break;
		}
		if (i == nl)
			return hay;
	}
	return NULL;
}

int hp_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int hp_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

void (*hp_wipe_observer)(const void *p, size_t n);

void hp_wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;

	if (hp_wipe_observer && p && n)
		hp_wipe_observer(p, n);
	while (n--)
		*v++ = 0;
}

void hp_free_secret(char *s)
{
	if (s) {
		hp_wipe(s, strlen(s));
		free(s);
	}
}

static int is_scheme_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '+' || c == '-' || c == '.';
}

/* End of the authority that starts at p: the first '/', '?', '#', blank or quote. */
static const char *authority_end(const char *p)
{
	while (*p && !strchr("/?#'\"<>`", *p) && (unsigned char)*p > 0x20)
		p++;
	return p;
}

void hp_redact_urls(const char *in, char *out, size_t n)
{
	size_t o = 0;
	const char *p = in;

	if (!n)
		return;
	while (*p && o + 1 < n) {
		const char *at = NULL, *end, *q;

		if (p[0] == ':' && p[1] == '/' && p[2] == '/' && p > in && is_scheme_char(p[-1])) {
			end = authority_end(p + 3);
			for (q = p + 3; q < end; q++)
				if (*q == '@')
					at = q;
		}
		if (at) {
			/* "user:secret" between "://" and '@' becomes three stars. */
			const char *rep = "://***";

			while (*rep && o + 1 < n)
				out[o++] = *rep++;
			p = at;
			continue;
		}
		out[o++] = *p++;
	}
	out[o] = '\0';
}

int hp_ip4_link_local(uint32_t v4)
{
	return (v4 >> 16) == 0xa9feu;
}

/* The IPv4 address inside an IPv6 one (mapped, compatible, NAT64), or 0 with none. */
static int ip6_inner4(const unsigned char *a, uint32_t *v4)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const unsigned char compat[12] = { 0 };
	static const unsigned char nat64[12] = { 0, 0x64, 0xff, 0x9b };

	if (memcmp(a, mapped, 12) && memcmp(a, compat, 12) && memcmp(a, nat64, 12))
		return 0;
	*v4 = (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
	return 1;
}

int hp_ip6_link_local(const unsigned char v6[16])
{
	uint32_t v4;

	if (v6[0] == 0xfe && (v6[1] & 0xc0) == 0x80)
		return 1;
	if (v6[0] == 0xfd && v6[1] == 0x00 && v6[2] == 0x0e && v6[3] == 0xc2)
		return 1;
	return ip6_inner4(v6, &v4) && hp_ip4_link_local(v4);
}

int hp_ip6_loopback(const unsigned char v6[16])
{
	static const unsigned char one[16] = { [15] = 1 };
	uint32_t v4;

	if (!memcmp(v6, one, 16))
		return 1;
	return ip6_inner4(v6, &v4) && (v4 >> 24) == 127;
}

int hp_shell_plain(const char *v)
{
	const unsigned char *p = (const unsigned char *)v;

	if (!v || !*v)
		return 0;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("-_./:=@,+%", *p)))
			return 0;
	return 1;
}

void hp_shell_word(const char *v, struct hp_buf *out)
{
	const unsigned char *p;

	if (hp_shell_plain(v)) {
		hp_buf_puts(out, v);
		return;
	}
	hp_buf_putc(out, '\'');
	for (p = (const unsigned char *)(v ? v : ""); *p; p++) {
		if (*p == '\'')
			hp_buf_puts(out, "'\\''");
		else if (*p < 0x20 || *p == 0x7f)
			hp_buf_putc(out, '?');
		else
			hp_buf_putc(out, (char)*p);
	}
	hp_buf_putc(out, '\'');
}

const char *hp_shell_word_s(const char *v, char *out, size_t n)
{
	struct hp_buf b = HP_BUF_INIT(4096);

	hp_shell_word(v, &b);
	if (b.len < n)
		hp_strlcpy(out, b.buf, n);
	else
		snprintf(out, n, "'(too long)'");
	hp_buf_release(&b);
	return out;
}
