/*
 * The arena and the string table of include/hp/pool.h.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/pool.h"
#include "hp/util.h"

#define CHUNK ((size_t)64 << 10)
#define ALIGN ((size_t)16)

uint64_t hp_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

static void add_chunk(struct hp_arena *a, size_t size)
{
	if (a->nchunks == a->chunks_alloc) {
		a->chunks_alloc = a->chunks_alloc ? 2 * a->chunks_alloc : 16;
		a->chunks = xrealloc(a->chunks, a->chunks_alloc * sizeof(*a->chunks));
	}
	a->chunks[a->nchunks++] = xmalloc(size);
	a->bytes += size;
}

void *hp_arena_alloc(struct hp_arena *a, size_t n)
{
	size_t at;

	if (!n)
		n = 1;
	if (n > CHUNK / 4) {
		/* A chunk of its own, kept before the current one so its room is not lost. */
		char *big;

		add_chunk(a, n);
		big = a->chunks[a->nchunks - 1];
		if (a->nchunks > 1) {
			a->chunks[a->nchunks - 1] = a->chunks[a->nchunks - 2];
			a->chunks[a->nchunks - 2] = big;
		} else {
			a->used = a->cap = 0;
		}
		return big;
	}
	at = (a->used + ALIGN - 1) & ~(ALIGN - 1);
	if (!a->nchunks || at + n > a->cap) {
		add_chunk(a, CHUNK);
		a->cap = CHUNK;
		at = 0;
	}
	a->used = at + n;
	return a->chunks[a->nchunks - 1] + at;
}

void hp_arena_release(struct hp_arena *a)
{
	size_t i;

	for (i = 0; i < a->nchunks; i++)
		free(a->chunks[i]);
	free(a->chunks);
	memset(a, 0, sizeof(*a));
}

/* A slot: the string's hash in the high half, its number + 1 in the low (0: empty). */
#define SLOT_HASH(x) ((uint32_t)((x) >> 32))
#define SLOT_ID(x) ((uint32_t)(x) - 1)

static void rehash(struct hp_strtab *t)
{
	size_t n = t->nslots ? 2 * t->nslots : 256, i;
	uint64_t *old = t->slots;

	t->slots = xcalloc(n, sizeof(*t->slots));
	for (i = 0; i < t->nslots; i++) {
		size_t at;

		if (!old[i])
			continue;
		for (at = SLOT_HASH(old[i]) & (n - 1); t->slots[at]; at = (at + 1) & (n - 1))
			;
		t->slots[at] = old[i];
	}
	free(old);
	t->nslots = n;
}

/*
 * The slot of the len bytes at s (hash h): the slot holding them, or the
 * empty slot that ends their probe path; t->nslots > 0.
 */
static size_t slot_of(const struct hp_strtab *t, const char *s, size_t len, uint32_t h)
{
	size_t at;

	/* The hash is in the slot: a string is only looked at when its hash is the same. */
	for (at = h & (t->nslots - 1); t->slots[at]; at = (at + 1) & (t->nslots - 1)) {
		const char *x;

		if (SLOT_HASH(t->slots[at]) != h)
			continue;
		x = t->v[SLOT_ID(t->slots[at])];
		if (!strncmp(x, s, len) && !x[len])
			break;
	}
	return at;
}

long hp_strtab_find(const struct hp_strtab *t, const char *s, size_t len)
{
	size_t at;

	if (!t->nslots)
		return -1;
	at = slot_of(t, s, len, (uint32_t)hp_hash_bytes(s, len));
	return t->slots[at] ? (long)SLOT_ID(t->slots[at]) : -1;
}

uint32_t hp_strtab_add(struct hp_strtab *t, const char *s, size_t len)
{
	uint32_t h = (uint32_t)hp_hash_bytes(s, len);
	size_t at = 0;
	char *copy;

	if (t->nslots) {
		at = slot_of(t, s, len, h);
		if (t->slots[at])
			return SLOT_ID(t->slots[at]);
	}
	if (t->n >= UINT32_MAX - 1)
		hp_die("out of memory (string table full)");
	copy = hp_arena_alloc(&t->mem, len + 1);
	memcpy(copy, s, len);
	copy[len] = '\0';
	if (t->n == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 256;
		t->v = xrealloc(t->v, t->alloc * sizeof(*t->v));
	}
	t->v[t->n++] = copy;
	if (2 * t->n > t->nslots) {
		rehash(t);
		for (at = h & (t->nslots - 1); t->slots[at]; at = (at + 1) & (t->nslots - 1))
			;
	}
	/* at is an empty slot on the string's probe path. */
	t->slots[at] = (uint64_t)h << 32 | t->n;
	return (uint32_t)t->n - 1;
}

uint32_t hp_strtab_adds(struct hp_strtab *t, const char *s)
{
	return hp_strtab_add(t, s, strlen(s));
}

const char *hp_strtab_get(const struct hp_strtab *t, uint32_t id)
{
	return t->v[id];
}

size_t hp_strtab_bytes(const struct hp_strtab *t)
{
	return t->mem.bytes + t->alloc * sizeof(*t->v) + t->nslots * sizeof(*t->slots);
}

void hp_strtab_release(struct hp_strtab *t)
{
	hp_arena_release(&t->mem);
	free(t->v);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
