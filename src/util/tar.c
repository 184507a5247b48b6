/*
 * tar.gz without a compression library (include/hp/tar.h): ustar headers
 * and 512-byte padding, carried in deflate stored blocks of at most 65,535
 * bytes each, with gzip's header, CRC-32 and length around them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/tar.h"
#include "hp/util.h"

#define BLOCK 65535u

struct hp_tgz {
	struct hp_file_out *out;
	unsigned char *buf;   /* uncompressed bytes waiting for their stored block */
	size_t len;
	uint32_t crc;
	uint64_t total;       /* uncompressed bytes */
	uint64_t written;     /* bytes handed to out */
	int64_t mtime;
	int err;
};

static uint32_t crc_table[256];
static int crc_ready;

static void crc_init(void)
{
	uint32_t c;
	int n, k;

	for (n = 0; n < 256; n++) {
		c = (uint32_t)n;
		for (k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[n] = c;
	}
	crc_ready = 1;
}

uint32_t hp_crc32(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint32_t c = crc ^ 0xffffffffu;
	size_t i;

	if (!crc_ready)
		crc_init();
	for (i = 0; i < n; i++)
		c = crc_table[(c ^ b[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static int out_write(struct hp_tgz *t, const void *p, size_t n)
{
	if (t->err)
		return -1;
	if (t->out->write(t->out, p, n)) {
		t->err = errno ? errno : EIO;
		return -1;
	}
	t->written += n;
	return 0;
}

/* The waiting bytes as one stored block (final: the last one of the stream). */
static int flush_block(struct hp_tgz *t, int final)
{
	unsigned char h[5];

	h[0] = final ? 1 : 0;
	h[1] = (unsigned char)(t->len & 0xff);
	h[2] = (unsigned char)(t->len >> 8);
	h[3] = (unsigned char)(~t->len & 0xff);
	h[4] = (unsigned char)((~t->len >> 8) & 0xff);
	if (out_write(t, h, 5) || (t->len && out_write(t, t->buf, t->len)))
		return -1;
	t->len = 0;
	return 0;
}

static int put(struct hp_tgz *t, const void *p, size_t n)
{
	const unsigned char *b = p;

	t->crc = hp_crc32(t->crc, p, n);
	t->total += n;
	while (n) {
		size_t k = BLOCK - t->len < n ? BLOCK - t->len : n;

		memcpy(t->buf + t->len, b, k);
		t->len += k;
		b += k;
		n -= k;
		if (t->len == BLOCK && flush_block(t, 0))
			return -1;
	}
	return t->err ? -1 : 0;
}

struct hp_tgz *hp_tgz_open(struct hp_file_out *out, int64_t mtime_s)
{
	struct hp_tgz *t = xcalloc(1, sizeof(*t));
	unsigned char h[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
	uint32_t m = mtime_s > 0 ? (uint32_t)mtime_s : 0;

	t->out = out;
	t->buf = xmalloc(BLOCK);
	t->mtime = mtime_s > 0 ? mtime_s : 0;
	h[4] = (unsigned char)m;
	h[5] = (unsigned char)(m >> 8);
	h[6] = (unsigned char)(m >> 16);
	h[7] = (unsigned char)(m >> 24);
	out_write(t, h, sizeof(h));
	return t;
}

/* Where ustar splits name into prefix and name: the '/' that leaves at most 100 bytes after it and 155 before; NULL when none does. */
static const char *split_at(const char *name)
{
	size_t len = strlen(name);
	const char *cut = NULL, *p;

	for (p = name; *p; p++)
		if (*p == '/' && (size_t)(p - name) <= 155 && len - (size_t)(p - name) - 1 <= 100)
			cut = p;
	return cut;
}

int hp_tar_name_ok(const char *name)
{
	const char *p = name;
	size_t n = strlen(name);

	if (!n || n > HP_TAR_NAME_MAX || name[0] == '/' || name[n - 1] == '/')
		return 0;
	while (*p) {
		const char *seg = p;
		size_t k = strcspn(p, "/");

		if (!k || (k == 1 && seg[0] == '.') || (k == 2 && seg[0] == '.' && seg[1] == '.'))
			return 0;
		p += k;
		if (*p)
			p++;
	}
	for (p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	return n <= 100 || split_at(name);
}

/* Octal, zero-padded to width-1 digits and a NUL. */
static void octal(char *field, size_t width, uint64_t v)
{
	snprintf(field, width, "%0*llo", (int)(width - 1), (unsigned long long)v);
}

int hp_tgz_add(struct hp_tgz *t, const char *name, const void *data, size_t n)
{
	char h[512];
	const char *base = name;
	size_t len = strlen(name), pre = 0, i;
	unsigned sum = 0;
	static const char zeros[512];

	if (t->err) {
		errno = t->err;
		return -1;
	}
	if (!hp_tar_name_ok(name) || (uint64_t)n > 077777777777ull) {
		errno = EINVAL;
		return -1;
	}
	if (len > 100) {
		const char *cut = split_at(name);

		if (!cut) {
			errno = EINVAL;
			return -1;
		}
		pre = (size_t)(cut - name);
		base = cut + 1;
	}
	memset(h, 0, sizeof(h));
	memcpy(h, base, strlen(base));
	memcpy(h + 100, "0000600", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	octal(h + 124, 12, n);
	octal(h + 136, 12, (uint64_t)t->mtime);
	memset(h + 148, ' ', 8);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memcpy(h + 265, "root", 4);
	memcpy(h + 297, "root", 4);
	memcpy(h + 329, "0000000", 8);
	memcpy(h + 337, "0000000", 8);
	if (pre)
		memcpy(h + 345, name, pre);
	for (i = 0; i < sizeof(h); i++)
		sum += (unsigned char)h[i];
	snprintf(h + 148, 8, "%06o", sum);
	h[155] = ' ';
	if (put(t, h, sizeof(h)) || (n && put(t, data, n)) ||
	    (n % 512 && put(t, zeros, 512 - n % 512))) {
		errno = t->err ? t->err : EIO;
		return -1;
	}
	return 0;
}

int hp_tgz_close(struct hp_tgz *t)
{
	static const char zeros[1024];
	unsigned char tr[8];
	int rc, err;

	put(t, zeros, sizeof(zeros));
	flush_block(t, 1);
	tr[0] = (unsigned char)t->crc;
	tr[1] = (unsigned char)(t->crc >> 8);
	tr[2] = (unsigned char)(t->crc >> 16);
	tr[3] = (unsigned char)(t->crc >> 24);
	tr[4] = (unsigned char)t->total;
	tr[5] = (unsigned char)(t->total >> 8);
	tr[6] = (unsigned char)(t->total >> 16);
	tr[7] = (unsigned char)(t->total >> 24);
	out_write(t, tr, sizeof(tr));
	err = t->err;
	rc = err ? -1 : 0;
	free(t->buf);
	free(t);
	if (rc)
		errno = err;
	return rc;
}

uint64_t hp_tgz_written(const struct hp_tgz *t)
{
	return t->written;
}
