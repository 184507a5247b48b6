/*
 * A tar.gz written as it goes: POSIX ustar members (regular files, mode
 * 0600) inside one gzip member (RFC 1952) whose deflate stream (RFC 1951)
 * is made of stored blocks, so no compression library is needed and GNU
 * tar, gzip and any inflater read it. Bytes go to a struct hp_file_out
 * (atomic, see hp/sys.h); nothing of a member is held past hp_tgz_add.
 */
#ifndef HP_TAR_H
#define HP_TAR_H

#include <stddef.h>
#include <stdint.h>

#include "hp/sys.h"

struct hp_tgz;

/* Longest member name hp_tgz_add takes (ustar's prefix, '/', name). */
#define HP_TAR_NAME_MAX 255

/* Start an archive on out (not owned: the caller commits or aborts it). */
struct hp_tgz *hp_tgz_open(struct hp_file_out *out, int64_t mtime_s);
/*
 * One regular file: name (relative, no "..", at most HP_TAR_NAME_MAX bytes,
 * split at a '/' where longer than 100) and its n bytes. 0, or -1 with
 * errno (EINVAL for a name ustar cannot hold; a write error is kept and
 * every later call fails).
 */
int hp_tgz_add(struct hp_tgz *t, const char *name, const void *data, size_t n);
/* The tar's end blocks and gzip's trailer; frees t. 0, or -1 with errno. */
int hp_tgz_close(struct hp_tgz *t);
/* Bytes written to out so far. */
uint64_t hp_tgz_written(const struct hp_tgz *t);
/* Whether name is one hp_tgz_add takes. */
int hp_tar_name_ok(const char *name);

/* CRC-32 (ISO 3309, as gzip uses it), continued from crc (0 to start). */
uint32_t hp_crc32(uint32_t crc, const void *p, size_t n);

#endif
