/*
 * hp_buf: the one growable byte buffer of hpnode.
 *
 * Invariants, once initialised with hp_buf_init():
 *  - buf is never NULL and always NUL-terminated (len excludes the NUL);
 *  - the buffer never grows beyond max bytes of content: an append that
 *    would cross the cap appends nothing and returns -1, so remote data can
 *    never make hpnode allocate without bound;
 *  - the buffer owns its memory; ownership leaves only through
 *    hp_buf_detach(). hp_buf_release() frees and leaves it re-usable.
 */
#ifndef HP_BUF_H
#define HP_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "hp/util.h"

/* Named caps for the buffers that hold outside data. */
#define HP_MAX_HTTP_BODY ((size_t)64 << 20)
#define HP_MAX_HTTP_HEADERS ((size_t)256 << 10)
#define HP_MAX_PROC_OUT ((size_t)32 << 20)
#define HP_MAX_FILE ((size_t)16 << 20)
#define HP_MAX_LINE ((size_t)64 << 10)

struct hp_buf {
	char *buf;
	size_t len;
	size_t alloc;
	size_t max;
	int secret;   /* hp_buf_set_secret: every block it gives up is wiped first */
};

extern char hp_buf_slop[1];
#define HP_BUF_INIT(cap) { hp_buf_slop, 0, 0, (cap), 0 }

void hp_buf_init(struct hp_buf *b, size_t max);
/* Free the memory; b stays valid as an empty buffer with the same cap. */
void hp_buf_release(struct hp_buf *b);
/* Like release, but zeroes the content first (secrets). */
void hp_buf_release_secure(struct hp_buf *b);
/*
 * Mark b as holding a secret (a credential reply): from now on a block it
 * outgrows is wiped before it is freed, never left behind by realloc, and
 * release wipes too. The mark stays across release and reset.
 */
void hp_buf_set_secret(struct hp_buf *b);
/* Truncate to zero length without freeing. */
void hp_buf_reset(struct hp_buf *b);
/* Hand the heap string to the caller (never NULL) and reset b. */
char *hp_buf_detach(struct hp_buf *b, size_t *len);

/*
 * Room for n more bytes of content at once (growth is otherwise by half
 * again each time); -1 when that would pass the cap.
 */
HP_WARN_UNUSED int hp_buf_reserve(struct hp_buf *b, size_t n);
HP_WARN_UNUSED int hp_buf_add(struct hp_buf *b, const void *p, size_t n);
HP_WARN_UNUSED int hp_buf_adds(struct hp_buf *b, const char *s);
HP_WARN_UNUSED int hp_buf_addc(struct hp_buf *b, char c);
HP_WARN_UNUSED int hp_buf_addf(struct hp_buf *b, const char *fmt, ...) HP_PRINTF(2, 3);
HP_WARN_UNUSED int hp_buf_vaddf(struct hp_buf *b, const char *fmt, va_list ap) HP_PRINTF(2, 0);

/*
 * Unbounded-by-design appends for text hpnode itself composes (reports,
 * canonical requests): they die if the cap is hit, which is a bug.
 */
void hp_buf_puts(struct hp_buf *b, const char *s);
void hp_buf_putn(struct hp_buf *b, const void *p, size_t n);
void hp_buf_putc(struct hp_buf *b, char c);
void hp_buf_printf(struct hp_buf *b, const char *fmt, ...) HP_PRINTF(2, 3);

#endif
