/*
 * The facts cache of a snapshot (include/hp/facts.h): each decoder's
 * result, made on first use and kept until the snapshot changes. Per-node
 * facts sit in a hash table by node id, packed (the tree printed as
 * compact JSON: smaller than the probe output it came from, where the
 * tree itself is several times larger) and unpacked for each reader. A
 * node may hold facts a collector set (they win) and facts decoded from a
 * "probes" entry (one per entry, so a document that repeats a key still
 * gets each entry's own facts).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "facts-int.h"
#include "hp/array.h"
#include "hp/json.h"
#include "hp/nccl.h"
#include "hp/util.h"

struct node_rec {
	char *id;              /* owned copy of the node's key */
	const cJSON *entry;    /* the "probes" entry decoded; NULL: set by a collector */
	char *packed;          /* the facts as compact JSON (owned) */
	size_t next;           /* index + 1 of the next record in its bucket; 0: none */
};

struct hp_facts {
	HP_ARRAY(struct node_rec) nodes;
	size_t *buckets;       /* index + 1 of each bucket's first record; 0: empty */
	size_t nbuckets;       /* 0 or a power of two */
	cJSON *slurm;          /* decoded controller probe, or NULL */
	int slurm_done;
	int controller_done;
	const char *ctl_iid, *ctl_group, *ctl_how;
	struct hp_kube_index *kube;
	struct hp_facts_counts counts;
};

/* Every decoder run in the process, by any caller (the decoders may run in threads). */
static atomic_size_t runs_probe, runs_slurm, runs_kube, runs_nccl;

void hp_facts_count_run(enum facts_decoder d)
{
	atomic_fetch_add(d == FACTS_PROBE ? &runs_probe : d == FACTS_SLURM ? &runs_slurm : &runs_kube,
			 1);
}

void hp_facts_counts_all(struct hp_facts_counts *out)
{
	out->probe = atomic_load(&runs_probe);
	out->slurm = atomic_load(&runs_slurm);
	out->kube = atomic_load(&runs_kube);
	out->nccl = atomic_load(&runs_nccl);
}

/* The cache of s, created on first use: the one part of a const snapshot that changes. */
static struct hp_facts *cache_of(const struct hp_snapshot *s)
{
	struct hp_snapshot *m = (struct hp_snapshot *)s;

	if (!m->facts)
		m->facts = xcalloc(1, sizeof(*m->facts));
	return m->facts;
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
static struct node_rec *find(struct hp_facts *f, const char *id, const cJSON *entry)
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

/*
 * The facts tree as compact JSON, freed with cJSON_free. The decoders
 * store finite numbers only (include/hp/facts.h), so it reads back equal.
 */
static char *pack(const cJSON *facts)
{
	char *text = cJSON_PrintUnformatted(facts);

	if (!text)
		hp_die("out of memory");
	return text;
}

static cJSON *unpack(const char *packed)
{
	cJSON *facts = hp_json_parse(packed, strlen(packed), NULL);

	/* What pack() printed always parses; only memory can run out. */
	if (!facts)
		hp_die("out of memory");
	return facts;
}

static void insert(struct hp_facts *f, const char *id, const cJSON *entry, char *packed)
{
	struct node_rec *r = hp_array_push(&f->nodes);
	size_t b;

	r->id = xstrdup(id);
	r->entry = entry;
	r->packed = packed;
	if (f->nodes.n * 4 > f->nbuckets * 3) {
		rehash(f);
		return;
	}
	b = hash(id) & (f->nbuckets - 1);
	r->next = f->buckets[b];
	f->buckets[b] = f->nodes.n;
}

cJSON *hp_facts_node(const struct hp_snapshot *s, const cJSON *entry)
{
	struct hp_facts *f = cache_of(s);
	const char *id = entry && entry->string ? entry->string : "";
	const cJSON *out;
	struct node_rec *r;
	cJSON *facts;

	if (!entry)
		return NULL;
	if ((r = find(f, id, NULL)) || (r = find(f, id, entry)))
		return unpack(r->packed);
	out = cJSON_GetObjectItemCaseSensitive(entry, "stdout");
	facts = cJSON_IsString(out) ? hp_probe_parse(out->valuestring, strlen(out->valuestring))
				    : hp_probe_parse("", 0);
	f->counts.probe++;
	insert(f, id, entry, pack(facts));
	return facts;
}

/*
 * The NCCL probe's facts of a "nccl_probes" entry, in the same table under
 * "nccl:<id>" (a collector never sets those, so the entry always decides).
 */
cJSON *hp_facts_nccl_node(const struct hp_snapshot *s, const cJSON *entry)
{
	struct hp_facts *f = cache_of(s);
	const cJSON *out;
	struct node_rec *r;
	cJSON *facts;
	char *id;

	if (!entry)
		return NULL;
	id = xasprintf("nccl:%s", entry->string ? entry->string : "");
	if ((r = find(f, id, entry))) {
		free(id);
		return unpack(r->packed);
	}
	out = cJSON_GetObjectItemCaseSensitive(entry, "stdout");
	facts = cJSON_IsString(out) ? hp_nccl_probe_parse(out->valuestring, strlen(out->valuestring))
				    : hp_nccl_probe_parse("", 0);
	f->counts.nccl++;
	atomic_fetch_add(&runs_nccl, 1);
	insert(f, id, entry, pack(facts));
	free(id);
	return facts;
}

void hp_facts_set_node(struct hp_snapshot *s, const char *id, cJSON *facts)
{
	struct hp_facts *f = cache_of(s);
	struct node_rec *r = find(f, id, NULL);

	if (!facts)
		return;
	if (r) {
		cJSON_free(r->packed);
		r->packed = pack(facts);
	} else {
		insert(f, id, NULL, pack(facts));
	}
	cJSON_Delete(facts);
}

const cJSON *hp_facts_slurm(const struct hp_snapshot *s)
{
	struct hp_facts *f = cache_of(s);

	if (!f->slurm_done) {
		const char *out = hp_json_str(hp_snapshot_get(s, "slurm"), "probe.stdout");

		f->slurm_done = 1;
		if (out) {
			f->slurm = hp_slurm_parse(out, strlen(out));
			f->counts.slurm++;
		}
	}
	return f->slurm;
}

void hp_facts_slurm_controller(const struct hp_snapshot *s, const char **iid,
			       const char **group, const char **how)
{
	struct hp_facts *f = cache_of(s);

	if (!f->controller_done) {
		const cJSON *sl = hp_snapshot_get(s, "slurm");

		f->controller_done = 1;
		if (cJSON_IsObject(sl)) {
			f->ctl_iid = hp_json_str(sl, "controller");
			f->ctl_group = hp_json_str(sl, "group");
			f->ctl_how = hp_json_str(sl, "how");
		} else if (hp_slurm_controller(s, &f->ctl_iid, &f->ctl_group, &f->ctl_how)) {
			f->ctl_iid = f->ctl_group = f->ctl_how = NULL;
		}
	}
	*iid = f->ctl_iid;
	*group = f->ctl_group;
	*how = f->ctl_how;
}

const struct hp_kube_index *hp_facts_kube(const struct hp_snapshot *s)
{
	struct hp_facts *f = cache_of(s);

	if (!f->kube) {
		f->kube = hp_kube_index_build(s);
		f->counts.kube++;
	}
	return f->kube;
}

void hp_facts_counts(const struct hp_snapshot *s, struct hp_facts_counts *out)
{
	static const struct hp_facts_counts none;

	*out = s->facts ? s->facts->counts : none;
}

void hp_facts_forget(struct hp_snapshot *s)
{
	struct hp_facts *f = s->facts;
	size_t i, kept = 0;

	if (!f)
		return;
	for (i = 0; i < f->nodes.n; i++) {
		struct node_rec *r = &f->nodes.v[i];

		if (r->entry) {
			free(r->id);
			cJSON_free(r->packed);
		} else {
			f->nodes.v[kept++] = *r;
		}
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
}

void hp_facts_free(struct hp_facts *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nodes.n; i++) {
		free(f->nodes.v[i].id);
		cJSON_free(f->nodes.v[i].packed);
	}
	hp_array_release(&f->nodes);
	free(f->buckets);
	cJSON_Delete(f->slurm);
	hp_kube_index_free(f->kube);
	free(f);
}
