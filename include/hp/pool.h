/*
 * Compact storage for many small things that live as long as their owner:
 * an arena of bytes and a table of strings kept once each.
 *
 * hp_arena hands out pieces of larger chunks and frees them all at once;
 * a piece never moves, so pointers into it stay good until the arena is
 * released. A piece larger than a quarter chunk gets a chunk of its own.
 *
 * hp_strtab keeps each distinct string once (in its arena) and numbers
 * them from 0 in the order they were first added. Adding a string that is
 * already there returns its number; a string's copy never moves. Strings
 * must not contain NUL bytes (the copies are NUL-terminated).
 *
 * Neither locks: a caller that shares one between threads serialises the
 * calls that add.
 */
#ifndef HP_POOL_H
#define HP_POOL_H

#include <stddef.h>
#include <stdint.h>

struct hp_arena {
	char **chunks;          /* every chunk, the current one last */
	size_t nchunks, chunks_alloc;
	size_t used, cap;       /* bytes used / size of the current chunk */
	size_t bytes;           /* bytes held in all chunks */
};

#define HP_ARENA_INIT { NULL, 0, 0, 0, 0, 0 }

/* n bytes (n > 0), aligned for any object; never NULL (dies without memory). */
void *hp_arena_alloc(struct hp_arena *a, size_t n);
/* Free every chunk; the arena is empty and reusable. */
void hp_arena_release(struct hp_arena *a);

struct hp_strtab {
	struct hp_arena mem;    /* the copies */
	const char **v;         /* number -> copy */
	size_t n, alloc;
	uint64_t *slots;        /* hash slots: hash << 32 | number + 1, 0 when empty */
	size_t nslots;          /* 0 or a power of two */
};

#define HP_STRTAB_INIT { HP_ARENA_INIT, NULL, 0, 0, NULL, 0 }

/* The number of the len bytes at s (no NUL among them), added when new. */
uint32_t hp_strtab_add(struct hp_strtab *t, const char *s, size_t len);
/* The same for a NUL-terminated string. */
uint32_t hp_strtab_adds(struct hp_strtab *t, const char *s);
/* The number of the len bytes at s when the table holds them, else -1 (nothing added). */
long hp_strtab_find(const struct hp_strtab *t, const char *s, size_t len);
/* The copy of string number id (id < t->n). */
const char *hp_strtab_get(const struct hp_strtab *t, uint32_t id);
/* Bytes held by the table (copies, index and hash slots). */
size_t hp_strtab_bytes(const struct hp_strtab *t);
void hp_strtab_release(struct hp_strtab *t);

/* FNV-1a over n bytes: the hash both use, for callers that index their own tables. */
uint64_t hp_hash_bytes(const void *p, size_t n);

#endif
