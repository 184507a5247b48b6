/*
 * Packed JSON values (facts-int.h): the compact form the facts cache and
 * the probe entries of a snapshot keep their trees in.
 *
 * Every value is kept once. Strings (keys and values) go to one string
 * table and are named by number. An object or array is encoded as a few
 * bytes per member: its tag, its member count, and per member the key's
 * number and the value, inline when it is a scalar (small integers in one
 * byte), else the number of the packed member value. Before a value is
 * stored its encoding is looked up: an equal value stored earlier (the
 * services of two nodes, one node's GPU remap counters and another's) has
 * the same encoding, and its number is returned instead. So what many nodes
 * share costs nothing more per node, and what differs costs a few bytes a
 * field rather than a cJSON tree (about 100 bytes an item) or its JSON text.
 *
 * Unpacking builds an ordinary cJSON tree whose keys and string values
 * point into the string table (cJSON_StringIsConst, cJSON_IsReference):
 * cJSON_Delete frees the tree and leaves the strings, which live as long as
 * the pack.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "facts-int.h"
#include "hp/pool.h"
#include "hp/util.h"

enum {
	T_NULL, T_FALSE, T_TRUE,
	T_INT,      /* zigzag varint */
	T_DBL,      /* the double's 8 bytes, little-endian */
	T_STR,      /* varint string number */
	T_RAW,      /* varint string number (cJSON_Raw) */
	T_REF,      /* varint value number */
	T_OBJ,      /* varint count, then (varint key number + 1, or 0: none; value) each */
	T_ARR,      /* varint count, then a value each */
	T_SMALL     /* T_SMALL + n: the integer n, 0 <= n < 256 - T_SMALL */
};

#define SMALL_MAX (255 - T_SMALL)

struct hp_pack {
	struct hp_strtab strs;
	struct hp_arena mem;       /* value records: varint length, then the encoding */
	const unsigned char **v;   /* value number -> record */
	size_t n, alloc;
	uint32_t *slots;           /* hash slots: number + 1, 0 when empty */
	size_t nslots;
};

struct enc {
	unsigned char *p;
	size_t len, alloc;
};

static void put_byte(struct enc *e, unsigned char c)
{
	if (e->len == e->alloc) {
		e->alloc = e->alloc ? 2 * e->alloc : 128;
		e->p = xrealloc(e->p, e->alloc);
	}
	e->p[e->len++] = c;
}

static void put_varint(struct enc *e, uint64_t v)
{
	while (v >= 0x80) {
		put_byte(e, (unsigned char)(v | 0x80));
		v >>= 7;
	}
	put_byte(e, (unsigned char)v);
}

static uint64_t get_varint(const unsigned char **pp)
{
	const unsigned char *p = *pp;
	uint64_t v = 0;
	int shift = 0;

	do {
		v |= (uint64_t)(*p & 0x7F) << shift;
		shift += 7;
	} while (*p++ & 0x80);
	*pp = p;
	return v;
}

struct hp_pack *hp_pack_new(void)
{
	return xcalloc(1, sizeof(struct hp_pack));
}

void hp_pack_free(struct hp_pack *p)
{
	if (!p)
		return;
	hp_strtab_release(&p->strs);
	hp_arena_release(&p->mem);
	free(p->v);
	free(p->slots);
	free(p);
}

size_t hp_pack_bytes(const struct hp_pack *p)
{
	if (!p)
		return 0;
	return hp_strtab_bytes(&p->strs) + p->mem.bytes + p->alloc * sizeof(*p->v) +
	       p->nslots * sizeof(*p->slots);
}

size_t hp_pack_count(const struct hp_pack *p)
{
	return p ? p->n : 0;
}

/* A record's encoding and its length. */
static const unsigned char *record(const struct hp_pack *p, uint32_t id, size_t *len)
{
	const unsigned char *r = p->v[id];

	*len = (size_t)get_varint(&r);
	return r;
}

static void rehash(struct hp_pack *p)
{
	size_t n = p->nslots ? 2 * p->nslots : 256, i;

	free(p->slots);
	p->slots = xcalloc(n, sizeof(*p->slots));
	p->nslots = n;
	for (i = 0; i < p->n; i++) {
		size_t len;
		const unsigned char *r = record(p, (uint32_t)i, &len);
		size_t at = (size_t)hp_hash_bytes(r, len) & (n - 1);

		while (p->slots[at])
			at = (at + 1) & (n - 1);
		p->slots[at] = (uint32_t)i + 1;
	}
}

/* The number of an equal value stored before the one encoded in e, or HP_PACK_NONE. */
static uint32_t lookup(const struct hp_pack *p, const struct enc *e, uint64_t h)
{
	size_t at;

	if (!p->nslots)
		return HP_PACK_NONE;
	for (at = (size_t)h & (p->nslots - 1); p->slots[at]; at = (at + 1) & (p->nslots - 1)) {
		size_t len;
		const unsigned char *r = record(p, p->slots[at] - 1, &len);

		if (len == e->len && !memcmp(r, e->p, len))
			return p->slots[at] - 1;
	}
	return HP_PACK_NONE;
}

/* The number of the value encoded in e: an equal one's, or a new one's. */
static uint32_t intern(struct hp_pack *p, const struct enc *e)
{
	uint64_t h = hp_hash_bytes(e->p, e->len);
	unsigned char *rec;
	struct enc head = { NULL, 0, 0 };
	size_t at;
	uint32_t had = lookup(p, e, h);

	if (had != HP_PACK_NONE)
		return had;
	if (p->n >= UINT32_MAX - 1)
		hp_die("out of memory (packed values full)");
	put_varint(&head, e->len);
	rec = hp_arena_alloc(&p->mem, head.len + e->len);
	memcpy(rec, head.p, head.len);
	memcpy(rec + head.len, e->p, e->len);
	free(head.p);
	if (p->n == p->alloc) {
		p->alloc = p->alloc ? 2 * p->alloc : 256;
		p->v = xrealloc(p->v, p->alloc * sizeof(*p->v));
	}
	p->v[p->n++] = rec;
	if (2 * p->n > p->nslots) {
		rehash(p);
	} else {
		at = (size_t)h & (p->nslots - 1);
		while (p->slots[at])
			at = (at + 1) & (p->nslots - 1);
		p->slots[at] = (uint32_t)p->n;
	}
	return (uint32_t)p->n - 1;
}

/* A double that is a whole number a varint holds exactly (and not -0). */
static int whole(double d)
{
	return d >= -9007199254740992.0 && d <= 9007199254740992.0 && d == floor(d) &&
	       !(d == 0 && signbit(d));
}

static uint32_t put_value(struct hp_pack *p, const cJSON *v);

/* One member value, inline when it is a scalar. */
static void put_item(struct hp_pack *p, struct enc *e, const cJSON *v)
{
	switch (v->type & 0xFF) {
	case cJSON_False:
		put_byte(e, T_FALSE);
		return;
	case cJSON_True:
		put_byte(e, T_TRUE);
		return;
	case cJSON_Number: {
		double d = v->valuedouble;

		if (whole(d) && d >= 0 && d <= SMALL_MAX) {
			put_byte(e, (unsigned char)(T_SMALL + (int)d));
		} else if (whole(d)) {
			int64_t i = (int64_t)d;

			put_byte(e, T_INT);
			put_varint(e, ((uint64_t)i << 1) ^ (uint64_t)(i >> 63));
		} else {
			uint64_t bits;
			int k;

			memcpy(&bits, &d, sizeof(bits));
			put_byte(e, T_DBL);
			for (k = 0; k < 8; k++)
				put_byte(e, (unsigned char)(bits >> (8 * k)));
		}
		return;
	}
	case cJSON_String:
	case cJSON_Raw:
		put_byte(e, (v->type & 0xFF) == cJSON_String ? T_STR : T_RAW);
		put_varint(e, hp_strtab_adds(&p->strs, v->valuestring ? v->valuestring : ""));
		return;
	case cJSON_Array:
	case cJSON_Object:
		put_byte(e, T_REF);
		put_varint(e, put_value(p, v));
		return;
	default:
		put_byte(e, T_NULL);
		return;
	}
}

static uint32_t put_value(struct hp_pack *p, const cJSON *v)
{
	struct enc e = { NULL, 0, 0 };
	uint32_t id;

	if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
		const cJSON *c;
		int obj = cJSON_IsObject(v);
		size_t n = 0;

		for (c = v->child; c; c = c->next)
			n++;
		put_byte(&e, obj ? T_OBJ : T_ARR);
		put_varint(&e, n);
		for (c = v->child; c; c = c->next) {
			if (obj)
				put_varint(&e, c->string ? (uint64_t)hp_strtab_adds(&p->strs, c->string) + 1
							 : 0);
			put_item(p, &e, c);
		}
	} else {
		put_item(p, &e, v);
	}
	id = intern(p, &e);
	free(e.p);
	return id;
}

uint32_t hp_pack_put(struct hp_pack *p, const cJSON *v)
{
	if (!v)
		return HP_PACK_NONE;
	return put_value(p, v);
}

uint32_t hp_pack_find_str(const struct hp_pack *p, const char *s)
{
	long k = hp_strtab_find(&p->strs, s, strlen(s));
	struct enc e = { NULL, 0, 0 };
	uint32_t id;

	if (k < 0)
		return HP_PACK_NONE;
	put_byte(&e, T_STR);
	put_varint(&e, (uint64_t)k);
	id = lookup(p, &e, hp_hash_bytes(e.p, e.len));
	free(e.p);
	return id;
}

static cJSON *must(cJSON *x)
{
	if (!x)
		hp_die("out of memory");
	return x;
}

static cJSON *get_value(const struct hp_pack *p, uint32_t id);

/* The member value at *pp (moved past it). */
static cJSON *get_item(const struct hp_pack *p, const unsigned char **pp)
{
	unsigned tag = *(*pp)++;

	if (tag >= T_SMALL)
		return must(cJSON_CreateNumber((double)(tag - T_SMALL)));
	switch (tag) {
	case T_FALSE:
		return must(cJSON_CreateFalse());
	case T_TRUE:
		return must(cJSON_CreateTrue());
	case T_INT: {
		uint64_t z = get_varint(pp);
		int64_t i = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);

		return must(cJSON_CreateNumber((double)i));
	}
	case T_DBL: {
		uint64_t bits = 0;
		double d;
		int k;

		for (k = 0; k < 8; k++)
			bits |= (uint64_t)(*pp)[k] << (8 * k);
		*pp += 8;
		memcpy(&d, &bits, sizeof(d));
		return must(cJSON_CreateNumber(d));
	}
	case T_STR:
		return must(cJSON_CreateStringReference(hp_strtab_get(&p->strs,
								       (uint32_t)get_varint(pp))));
	case T_RAW:
		return must(cJSON_CreateRaw(hp_strtab_get(&p->strs, (uint32_t)get_varint(pp))));
	case T_REF:
		return get_value(p, (uint32_t)get_varint(pp));
	default:
		return must(cJSON_CreateNull());
	}
}

static cJSON *get_value(const struct hp_pack *p, uint32_t id)
{
	size_t len;
	const unsigned char *r = record(p, id, &len);
	unsigned tag = *r;
	uint64_t n, i;
	cJSON *out;

	if (tag != T_OBJ && tag != T_ARR)
		return get_item(p, &r);
	r++;
	out = must(tag == T_OBJ ? cJSON_CreateObject() : cJSON_CreateArray());
	n = get_varint(&r);
	for (i = 0; i < n; i++) {
		uint64_t key = tag == T_OBJ ? get_varint(&r) : 0;
		cJSON *item = get_item(p, &r);

		if (tag == T_ARR)
			cJSON_AddItemToArray(out, item);
		else if (key)
			cJSON_AddItemToObjectCS(out, hp_strtab_get(&p->strs, (uint32_t)(key - 1)), item);
		else
			cJSON_AddItemToArray(out, item);
	}
	return out;
}

cJSON *hp_pack_get(const struct hp_pack *p, uint32_t ref)
{
	if (!p || ref == HP_PACK_NONE || ref >= p->n)
		return NULL;
	return get_value(p, ref);
}
