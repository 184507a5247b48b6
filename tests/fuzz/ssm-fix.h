/*
 * Digest repair for the SSM targets: agent messages carry a SHA-256 of
 * their payload that a mutation almost never keeps right, so before a
 * message is used the digest is recomputed, unless its first four bytes
 * are zero (then the wrong digest itself is what is tested).
 */
#ifndef HP_FUZZ_SSM_FIX_H
#define HP_FUZZ_SSM_FIX_H

#include <openssl/sha.h>
#include <stdint.h>
#include <string.h>

#define FZ_DIGEST_AT 80u

static inline void fz_fix_digest(uint8_t *m, size_t n)
{
	size_t plen;

	if (n < 120 || !(m[FZ_DIGEST_AT] | m[FZ_DIGEST_AT + 1] | m[FZ_DIGEST_AT + 2] |
			 m[FZ_DIGEST_AT + 3]))
		return;
	plen = ((size_t)m[116] << 24) | ((size_t)m[117] << 16) | ((size_t)m[118] << 8) | m[119];
	if (plen > n - 120)
		plen = n - 120;
	SHA256(m + 120, plen, m + FZ_DIGEST_AT);
}

/* Repair every whole unfragmented binary frame of a server byte stream in place. */
static inline void fz_fix_frames(uint8_t *b, size_t n)
{
	size_t off = 0;

	while (n - off >= 2) {
		size_t len = b[off + 1] & 0x7f, h = 2, i;

		if (b[off + 1] & 0x80)
			return; /* masked: left to the parser to refuse */
		if (len == 126) {
			if (n - off < 4)
				return;
			len = ((size_t)b[off + 2] << 8) | b[off + 3];
			h = 4;
		} else if (len == 127) {
			if (n - off < 10)
				return;
			len = 0;
			for (i = 0; i < 8; i++)
				len = (len << 8) | b[off + 2 + i];
			h = 10;
		}
		if (len > n - off - h)
			return;
		if ((b[off] & 0x8f) == 0x82)
			fz_fix_digest(b + off + h, len);
		off += h + len;
	}
}

#endif
