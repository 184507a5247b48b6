/*
 * The facts cache of a snapshot (include/hp/facts.h): each decoder's
 * result, made on first use and kept until the snapshot changes, and the
 * probe store: the entries of a sweep or a replayed file, each without its
 * raw output, with the facts decoded from it.
 *
 * Everything is packed (pack.c) in one pack per snapshot. Facts by node id
 * (set by a collector, or decoded from a document entry) sit in a hash
 * table of records; a node may hold facts a collector set (they win) and
 * facts decoded from a "probes" entry (one per entry, so a document that
 * repeats a key still gets each entry's own facts). A store is a list of
 * records (id, entry, facts) per key, with an index by id.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "facts-int.h"
#include "hp/array.h"
#include "hp/json.h"
#include "hp/nccl-facts.h"
#include "hp/text.h"
#include "hp/util.h"

struct node_rec {
	char *id;              /* owned copy of the node's key */
	const cJSON *entry;    /* the "probes" entry decoded; NULL: set by a collector */
	uint32_t facts;        /* packed */
	size_t next;           /* index + 1 of the next record in its bucket; 0: none */
};

struct store_rec {
	uint32_t id;           /* the node id, packed (a string value) */
	uint32_t entry;        /* the entry without its raw output */
	uint32_t facts;        /* HP_PACK_NONE: none */
	uint32_t next;         /* index + 1 of the next record with the same hash; 0: none */
};

struct store {
	char *key;
	HP_ARRAY(struct store_rec) recs;
	uint32_t *buckets;     /* index + 1 of each bucket's first record; 0: empty */
	size_t nbuckets;       /* 0 or a power of two */
};

struct hp_facts {
	struct hp_pack *pack;
	HP_ARRAY(struct node_rec) nodes;
	size_t *buckets;       /* index + 1 of each bucket's first record; 0: empty */
	size_t nbuckets;       /* 0 or a power of two */
	HP_ARRAY(struct store) stores;
	cJSON *slurm;          /* decoded controller probe, or NULL */
	int slurm_done;
	int controller_done;
	int prepared;          /* hp_facts_prepare ran since the document last changed */
	const char *ctl_iid, *ctl_group, *ctl_how;
	struct hp_kube_index *kube;
	struct hp_facts_counts counts;
};

/* Every decoder run in the process, by any caller (the decoders may run in threads). */
static atomic_size_t runs_probe, runs_slurm, runs_kube, runs_nccl;
/* Node facts built as a tree for a reader (hp_probes_facts), in the process. */
static atomic_size_t unpacks;

void hp_facts_count_run(enum facts_decoder d)
{
	atomic_fetch_add(d == FACTS_PROBE ? &runs_probe : d == FACTS_SLURM ? &runs_slurm :
			 d == FACTS_NCCL ? &runs_nccl : &runs_kube, 1);
}

void hp_facts_counts_all(struct hp_facts_counts *out)
{
	out->probe = atomic_load(&runs_probe);
	out->slurm = atomic_load(&runs_slurm);
	out->kube = atomic_load(&runs_kube);
	out->nccl = atomic_load(&runs_nccl);
	out->unpacks = atomic_load(&unpacks);
	out->bytes = 0;
}

/* The outputs a probe sweep keeps, by snapshot key, and what decodes them. */
static const struct {
	const char *key;
	hp_facts_decoder decode;
	enum facts_decoder kind;      /* which count a decode adds to */
} decoders[] = {
	{ "probes", hp_probe_parse, FACTS_PROBE },
	{ "nccl_probes", hp_nccl_probe_parse, FACTS_NCCL },
};

static long decoder_at(const char *key)
{
	size_t i;

	for (i = 0; key && i < HP_ARRAY_LEN(decoders); i++)
		if (!strcmp(decoders[i].key, key))
			return (long)i;
	return -1;
}

hp_facts_decoder hp_facts_decoder_of(const char *key)
{
	long i = decoder_at(key);

	return i < 0 ? NULL : decoders[i].decode;
}

/* One decode of key's outputs more in the snapshot's counts. */
static void count_decode(struct hp_facts *f, const char *key)
{
	long i = decoder_at(key);

	if (i >= 0 && decoders[i].kind == FACTS_NCCL)
		f->counts.nccl++;
	else
		f->counts.probe++;
}

/* The cache of s, created by the first writer (a const snapshot is never written). */
static struct hp_facts *cache_of(struct hp_snapshot *s)
{
	if (!s->facts) {
		s->facts = xcalloc(1, sizeof(*s->facts));
		s->facts->pack = hp_pack_new();
	}
	return s->facts;
}

/* FNV-1a. */
static size_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static void rehash(struct hp_facts *f)
{
	size_t i, n = f->nbuckets ? f->nbuckets : 64;

	while (n < 2 * f->nodes.n)
		n *= 2;
	free(f->buckets);
	f->buckets = xcalloc(n, sizeof(*f->buckets));
	f->nbuckets = n;
	for (i = 0; i < f->nodes.n; i++) {
		size_t b = hash(f->nodes.v[i].id) & (n - 1);

		f->nodes.v[i].next = f->buckets[b];
		f->buckets[b] = i + 1;
	}
}

/* The record of id set by a collector (entry NULL) or decoded from entry, or NULL. */
static struct node_rec *find(const struct hp_facts *f, const char *id, const cJSON *entry)
{
	size_t at;

	if (!f->nbuckets)
		return NULL;
	for (at = f->buckets[hash(id) & (f->nbuckets - 1)]; at; at = f->nodes.v[at - 1].next) {
		struct node_rec *r = &f->nodes.v[at - 1];

		if (r->entry == entry && !strcmp(r->id, id))
			return r;
	}
	return NULL;
}

static void insert(struct hp_facts *f, const char *id, const cJSON *entry, uint32_t facts)
{
	struct node_rec *r = hp_array_push(&f->nodes);
	size_t b;

	r->id = xstrdup(id);
	r->entry = entry;
	r->facts = facts;
	if (f->nodes.n * 4 > f->nbuckets * 3) {
		rehash(f);
		return;
	}
	b = hash(id) & (f->nbuckets - 1);
	r->next = f->buckets[b];
	f->buckets[b] = f->nodes.n;
}

/* ------------------------------------------------------------ the store */

static struct store *store_of(const struct hp_facts *f, const char *key)
{
	size_t i;

	if (!f)
		return NULL;
	for (i = 0; i < f->stores.n; i++)
		if (!strcmp(f->stores.v[i].key, key))
			return &f->stores.v[i];
	return NULL;
}

static void store_index(struct store *st)
{
	size_t i, n = st->nbuckets ? st->nbuckets : 64;

	while (n < 2 * st->recs.n)
		n *= 2;
	if (n != st->nbuckets) {
		free(st->buckets);
		st->buckets = xmalloc(n * sizeof(*st->buckets));
		st->nbuckets = n;
	}
	memset(st->buckets, 0, n * sizeof(*st->buckets));
	/* Backwards, so each bucket lists its records in store order. */
	for (i = st->recs.n; i-- > 0;) {
		size_t b = (size_t)st->recs.v[i].id & (n - 1);

		st->recs.v[i].next = st->buckets[b];
		st->buckets[b] = (uint32_t)i + 1;
	}
}

/* The string number of id in the pack (each distinct string is one packed value). */
static uint32_t id_ref(struct hp_facts *f, const char *id)
{
	cJSON tmp;

	memset(&tmp, 0, sizeof(tmp));
	tmp.type = cJSON_String;
	tmp.valuestring = (char *)id;
	return hp_pack_put(f->pack, &tmp);
}

/* The same for a reader: HP_PACK_NONE when the pack has no such string (nothing added). */
static uint32_t id_find(const struct hp_facts *f, const char *id)
{
	return f ? hp_pack_find_str(f->pack, id) : HP_PACK_NONE;
}

int hp_probes_stored(const struct hp_snapshot *s, const char *key)
{
	return store_of(s->facts, key) != NULL;
}

const char *hp_probes_store_key(const struct hp_snapshot *s, size_t i)
{
	return s->facts && i < s->facts->stores.n ? s->facts->stores.v[i].key : NULL;
}

void hp_probes_reset(struct hp_snapshot *s, const char *key)
{
	struct hp_facts *f = cache_of(s);
	struct store *st = store_of(f, key);

	while (s->root && cJSON_GetObjectItemCaseSensitive(s->root, key))
		cJSON_DeleteItemFromObjectCaseSensitive(s->root, key);
	if (!st) {
		st = hp_array_push(&f->stores);
		st->key = xstrdup(key);
	}
	st->recs.n = 0;
	if (st->nbuckets)
		memset(st->buckets, 0, st->nbuckets * sizeof(*st->buckets));
}

/* The entry as the store keeps it: no stdout, stderr cut. */
static cJSON *slim(const cJSON *entry)
{
	const cJSON *c;
	cJSON *out;

	if (!cJSON_IsObject(entry))
		return cJSON_Duplicate(entry, 1);
	out = cJSON_CreateObject();
	for (c = entry->child; c; c = c->next) {
		cJSON *copy;

		if (c->string && !strcmp(c->string, "stdout"))
			continue;
		if (c->string && !strcmp(c->string, "stderr") && cJSON_IsString(c)) {
			char cut[HP_FACTS_STDERR_SIZE];

			copy = cJSON_CreateString(hp_text_clip(c->valuestring, HP_FACTS_STDERR_CHARS,
							       cut));
		} else {
			copy = cJSON_Duplicate(c, 1);
		}
		if (!copy)
			hp_die("out of memory");
		if (c->string)
			cJSON_AddItemToObject(out, c->string, copy);
		else
			cJSON_AddItemToArray(out, copy);
	}
	return out;
}

void hp_probes_add(struct hp_snapshot *s, const char *key, const char *id, const cJSON *entry,
		   cJSON *facts)
{
	struct hp_facts *f = cache_of(s);
	struct store *st = store_of(f, key);
	struct store_rec *r;
	cJSON *kept;

	if (!st) {
		hp_probes_reset(s, key);
		st = store_of(f, key);
	}
	if (st->recs.n >= UINT32_MAX - 1)
		hp_die("out of memory (too many probe entries)");
	kept = slim(entry);
	r = hp_array_push(&st->recs);
	r->id = id_ref(f, id ? id : "");
	r->entry = hp_pack_put(f->pack, kept);
	r->facts = facts ? hp_pack_put(f->pack, facts) : HP_PACK_NONE;
	cJSON_Delete(kept);
	cJSON_Delete(facts);
	if (st->recs.n * 4 > st->nbuckets * 3) {
		store_index(st);
	} else {
		size_t b = (size_t)r->id & (st->nbuckets - 1);

		/* Appended last: it goes at the end of its bucket's list. */
		if (!st->buckets[b]) {
			st->buckets[b] = (uint32_t)st->recs.n;
		} else {
			uint32_t at = st->buckets[b];

			while (st->recs.v[at - 1].next)
				at = st->recs.v[at - 1].next;
			st->recs.v[at - 1].next = (uint32_t)st->recs.n;
		}
	}
}

void hp_probes_add_raw(struct hp_snapshot *s, const char *key, const cJSON *entry)
{
	hp_facts_decoder decode = hp_facts_decoder_of(key);
	cJSON *facts = NULL;

	if (decode && cJSON_IsObject(entry)) {
		const cJSON *out = cJSON_GetObjectItemCaseSensitive(entry, "stdout");

		facts = cJSON_IsString(out) ? decode(out->valuestring, strlen(out->valuestring))
					    : decode("", 0);
		count_decode(cache_of(s), key);
	}
	hp_probes_add(s, key, entry ? entry->string : NULL, entry, facts);
}

size_t hp_probes_ids(const struct hp_snapshot *s, const char *key, const char ***ids)
{
	const struct store *st = store_of(s->facts, key);
	size_t i;

	*ids = NULL;
	if (!st || !st->recs.n)
		return 0;
	*ids = xmalloc(st->recs.n * sizeof(**ids));
	for (i = 0; i < st->recs.n; i++) {
		cJSON *id = hp_pack_get(s->facts->pack, st->recs.v[i].id);

		(*ids)[i] = id->valuestring;
		cJSON_Delete(id);
	}
	return st->recs.n;
}

/* The first record of id (the string number idn) at or after the bucket head, or -1. */
static long store_find(const struct store *st, uint32_t idn)
{
	uint32_t at;

	if (!st->nbuckets)
		return -1;
	for (at = st->buckets[(size_t)idn & (st->nbuckets - 1)]; at; at = st->recs.v[at - 1].next)
		if (st->recs.v[at - 1].id == idn)
			return (long)at - 1;
	return -1;
}

void hp_probes_order(struct hp_snapshot *s, const char *key, const char *const *ids, size_t n)
{
	struct hp_facts *f = cache_of(s);
	struct store *st = store_of(f, key);
	struct store_rec *out;
	unsigned char *taken;
	size_t i, k = 0;

	if (!st || !st->recs.n)
		return;
	out = xmalloc(st->recs.n * sizeof(*out));
	taken = xcalloc(st->recs.n, 1);
	for (i = 0; i < n; i++) {
		long at;

		if (!ids[i])
			continue;
		at = store_find(st, id_ref(f, ids[i]));
		if (at < 0 || taken[at])
			continue;
		taken[at] = 1;
		out[k++] = st->recs.v[at];
	}
	for (i = 0; i < st->recs.n; i++)
		if (!taken[i])
			out[k++] = st->recs.v[i];
	memcpy(st->recs.v, out, st->recs.n * sizeof(*out));
	free(out);
	free(taken);
	store_index(st);
}

/* ------------------------------------------------------------ iterators */

void hp_probes_end(struct hp_probe_iter *it)
{
	cJSON_Delete(it->cur);
	it->cur = NULL;
	it->at = NULL;
}

/* The store's record rec as the iterator's current entry. */
static const cJSON *yield(struct hp_probe_iter *it, const struct store *st, size_t rec)
{
	struct hp_facts *f = it->s->facts;
	const struct store_rec *r = &st->recs.v[rec];
	cJSON *id;

	cJSON_Delete(it->cur);
	it->rec = rec;
	it->next = rec + 1;
	it->cur = hp_pack_get(f->pack, r->entry);
	if (!it->cur)
		it->cur = cJSON_CreateNull();
	/* The key of a member is its node id (a string of the pack). */
	id = hp_pack_get(f->pack, r->id);
	it->cur->string = id->valuestring;
	it->cur->type |= cJSON_StringIsConst;
	cJSON_Delete(id);
	return it->cur;
}

static void iter_init(const struct hp_snapshot *s, const char *key, struct hp_probe_iter *it)
{
	memset(it, 0, sizeof(*it));
	it->s = s;
	it->key = key;
	it->member = s->root ? cJSON_GetObjectItemCaseSensitive(s->root, key) : NULL;
}

const cJSON *hp_probes_first(const struct hp_snapshot *s, const char *key, struct hp_probe_iter *it)
{
	const struct store *st;

	iter_init(s, key, it);
	if (it->member) {
		it->at = it->member->child;
		return it->at;
	}
	st = store_of(s->facts, key);
	if (!st || !st->recs.n)
		return NULL;
	return yield(it, st, 0);
}

const cJSON *hp_probes_next(struct hp_probe_iter *it)
{
	const struct store *st;

	if (it->member) {
		it->at = it->at ? it->at->next : NULL;
		return it->at;
	}
	st = store_of(it->s->facts, it->key);
	if (!st || !it->cur || it->next >= st->recs.n) {
		hp_probes_end(it);
		return NULL;
	}
	return yield(it, st, it->next);
}

const cJSON *hp_probes_find(const struct hp_snapshot *s, const char *key, const char *id,
			    struct hp_probe_iter *it)
{
	const struct store *st;
	long at;

	iter_init(s, key, it);
	if (it->member) {
		it->at = cJSON_GetObjectItemCaseSensitive(it->member, id);
		return it->at;
	}
	st = store_of(s->facts, key);
	if (!st || (at = store_find(st, id_find(s->facts, id))) < 0)
		return NULL;
	return yield(it, st, (size_t)at);
}

size_t hp_probes_count(const struct hp_snapshot *s, const char *key)
{
	const cJSON *m = s->root ? cJSON_GetObjectItemCaseSensitive(s->root, key) : NULL;
	const struct store *st;

	if (m)
		return (size_t)cJSON_GetArraySize(m);
	st = store_of(s->facts, key);
	return st ? st->recs.n : 0;
}

/* The record key of a document entry of key: its node id, "<key>:<id>" for other keys. */
static char *member_id(const char *key, const cJSON *entry)
{
	const char *node = entry && entry->string ? entry->string : "";

	return strcmp(key, "probes") ? xasprintf("%s:%s", key, node) : xstrdup(node);
}

/* What key's decoder makes of the entry's stdout. */
static cJSON *decode_entry(const char *key, const cJSON *entry)
{
	hp_facts_decoder decode = hp_facts_decoder_of(key);
	const cJSON *out = cJSON_GetObjectItemCaseSensitive(entry, "stdout");

	return cJSON_IsString(out) ? decode(out->valuestring, strlen(out->valuestring))
				   : decode("", 0);
}

/*
 * A document entry of key: its facts set by a collector (for "probes"),
 * else those hp_facts_prepare decoded. Other keys' facts are kept under
 * "<key>:<id>", which no collector sets, so the entry always decides. An
 * entry the cache does not hold (a snapshot not prepared, or an entry that
 * was not probed) is decoded for this caller alone: a reader never writes.
 */
static cJSON *member_facts(const struct hp_snapshot *s, const char *key, const cJSON *entry)
{
	const struct hp_facts *f = s->facts;
	char *id = member_id(key, entry);
	const struct node_rec *r = NULL;

	if (f && ((!strcmp(key, "probes") && (r = find(f, id, NULL))) || (r = find(f, id, entry)))) {
		free(id);
		return hp_pack_get(f->pack, r->facts);
	}
	free(id);
	return decode_entry(key, entry);
}

/* Decode a document entry of key into the cache (hp_facts_prepare). */
static void member_put(struct hp_facts *f, const char *key, const cJSON *entry)
{
	char *id = member_id(key, entry);
	cJSON *facts;

	/* Facts a collector set for the node win: its entry is not decoded. */
	if ((!strcmp(key, "probes") && find(f, id, NULL)) || find(f, id, entry)) {
		free(id);
		return;
	}
	facts = decode_entry(key, entry);
	count_decode(f, key);
	insert(f, id, entry, hp_pack_put(f->pack, facts));
	cJSON_Delete(facts);
	free(id);
}

/* The facts of store record rec (node id): set by a collector for the id, else its own. */
static cJSON *record_facts(const struct hp_facts *f, const struct store *st, size_t rec,
			   const char *id)
{
	const struct node_rec *set;

	if (!st || rec >= st->recs.n)
		return NULL;
	if (id && (set = find(f, id, NULL)))
		return hp_pack_get(f->pack, set->facts);
	return hp_pack_get(f->pack, st->recs.v[rec].facts);
}

cJSON *hp_probes_facts(const struct hp_probe_iter *it)
{
	hp_facts_decoder decode = hp_facts_decoder_of(it->key);
	cJSON *f;

	if (it->member) {
		if (!it->at || !decode)
			return NULL;
		f = member_facts(it->s, it->key, it->at);
	} else if (!it->cur) {
		return NULL;
	} else {
		f = record_facts(it->s->facts, store_of(it->s->facts, it->key), it->rec,
				 strcmp(it->key, "probes") ? NULL : it->cur->string);
	}
	if (f)
		atomic_fetch_add(&unpacks, 1);
	return f;
}

/*
 * The facts of an entry of key: with key in the store (no document member),
 * the entry is one an iterator handed out, and the first record of its id
 * has them; else the document entry's.
 */
static cJSON *entry_facts(const struct hp_snapshot *s, const char *key, const cJSON *entry)
{
	const struct hp_facts *f = s->facts;
	const struct store *st;
	long at;

	if (!entry)
		return NULL;
	if (!hp_snapshot_get(s, key) && entry->string && (st = store_of(f, key)) &&
	    (at = store_find(st, id_find(f, entry->string))) >= 0)
		return record_facts(f, st, (size_t)at, strcmp(key, "probes") ? NULL : entry->string);
	return member_facts(s, key, entry);
}

cJSON *hp_facts_node(const struct hp_snapshot *s, const cJSON *entry)
{
	return entry_facts(s, "probes", entry);
}

cJSON *hp_facts_nccl_node(const struct hp_snapshot *s, const cJSON *entry)
{
	return entry_facts(s, "nccl_probes", entry);
}

void hp_facts_set_node(struct hp_snapshot *s, const char *id, cJSON *facts)
{
	struct hp_facts *f = cache_of(s);
	struct node_rec *r = find(f, id, NULL);

	if (!facts)
		return;
	if (r)
		r->facts = hp_pack_put(f->pack, facts);
	else
		insert(f, id, NULL, hp_pack_put(f->pack, facts));
	cJSON_Delete(facts);
}

const cJSON *hp_facts_slurm(const struct hp_snapshot *s)
{
	return s->facts && s->facts->prepared ? s->facts->slurm : NULL;
}

/* Which node is the Slurm controller, from the snapshot itself (no cache). */
static void find_controller(const struct hp_snapshot *s, const char **iid, const char **group,
			    const char **how)
{
	const cJSON *sl = hp_snapshot_get(s, "slurm");

	if (cJSON_IsObject(sl)) {
		*iid = hp_json_str(sl, "controller");
		*group = hp_json_str(sl, "group");
		*how = hp_json_str(sl, "how");
	} else if (hp_slurm_controller(s, iid, group, how)) {
		*iid = *group = *how = NULL;
	}
}

void hp_facts_slurm_controller(const struct hp_snapshot *s, const char **iid,
			       const char **group, const char **how)
{
	const struct hp_facts *f = s->facts;

	if (!f || !f->controller_done) {
		*iid = *group = *how = NULL;
		find_controller(s, iid, group, how);
		return;
	}
	*iid = f->ctl_iid;
	*group = f->ctl_group;
	*how = f->ctl_how;
}

const struct hp_kube_index *hp_facts_kube(const struct hp_snapshot *s)
{
	return s->facts && s->facts->prepared ? s->facts->kube : NULL;
}

int hp_facts_prepared(const struct hp_snapshot *s)
{
	return s->facts && s->facts->prepared;
}

void hp_facts_prepare(struct hp_snapshot *s)
{
	struct hp_facts *f;
	const char *out;
	size_t i;

	hp_facts_forget(s);
	f = cache_of(s);
	/* The probed nodes' entries of the document (the store holds its own facts). */
	for (i = 0; i < HP_ARRAY_LEN(decoders); i++) {
		const cJSON *m = hp_snapshot_get(s, decoders[i].key), *e;

		if (!cJSON_IsObject(m))
			continue;
		cJSON_ArrayForEach(e, m) {
			const char *state = hp_json_str(e, "state");

			if (cJSON_IsObject(e) && state && !strcmp(state, "probed"))
				member_put(f, decoders[i].key, e);
		}
	}
	out = hp_json_str(hp_snapshot_get(s, "slurm"), "probe.stdout");
	if (out) {
		f->slurm = hp_slurm_parse(out, strlen(out));
		f->counts.slurm++;
	}
	f->slurm_done = 1;
	f->ctl_iid = f->ctl_group = f->ctl_how = NULL;
	find_controller(s, &f->ctl_iid, &f->ctl_group, &f->ctl_how);
	f->controller_done = 1;
	f->kube = hp_kube_index_build(s);
	f->counts.kube++;
	f->prepared = 1;
}

void hp_facts_counts(const struct hp_snapshot *s, struct hp_facts_counts *out)
{
	static const struct hp_facts_counts none;
	size_t i;

	*out = s->facts ? s->facts->counts : none;
	if (!s->facts)
		return;
	out->bytes = hp_pack_bytes(s->facts->pack) + s->facts->nodes.alloc * sizeof(struct node_rec) +
		     s->facts->nbuckets * sizeof(size_t);
	for (i = 0; i < s->facts->stores.n; i++)
		out->bytes += s->facts->stores.v[i].recs.alloc * sizeof(struct store_rec) +
			      s->facts->stores.v[i].nbuckets * sizeof(uint32_t);
}

void hp_facts_forget(struct hp_snapshot *s)
{
	struct hp_facts *f = s->facts;
	size_t i, kept = 0;

	if (!f)
		return;
	for (i = 0; i < f->nodes.n; i++) {
		struct node_rec *r = &f->nodes.v[i];

		if (r->entry)
			free(r->id);
		else
			f->nodes.v[kept++] = *r;
	}
	f->nodes.n = kept;
	if (f->nbuckets)
		rehash(f);
	cJSON_Delete(f->slurm);
	f->slurm = NULL;
	f->slurm_done = 0;
	f->controller_done = 0;
	hp_kube_index_free(f->kube);
	f->kube = NULL;
	f->prepared = 0;
}

void hp_facts_free(struct hp_facts *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nodes.n; i++)
		free(f->nodes.v[i].id);
	hp_array_release(&f->nodes);
	free(f->buckets);
	for (i = 0; i < f->stores.n; i++) {
		free(f->stores.v[i].key);
		hp_array_release(&f->stores.v[i].recs);
		free(f->stores.v[i].buckets);
	}
	hp_array_release(&f->stores);
	cJSON_Delete(f->slurm);
	hp_kube_index_free(f->kube);
	hp_pack_free(f->pack);
	free(f);
}
