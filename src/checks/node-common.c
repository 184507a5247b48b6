/*
 * The frame of every on-node check: walk the probed nodes of the snapshot,
 * hand each node's facts to the check, collect its per-node results, and
 * emit them, problems first; identical results (same tag, priority,
 * section and stem) go through one fold (fold.h), so those of many nodes
 * become one finding "<stem> on N nodes". Nodes that were not probed
 * belong to the SSM transport's own check.
 *
 * A result keeps what its fold can still use (hp_fold_keeps, counted per
 * class of alike results as they come): over a fleet, most results are
 * a node id in a class, not a message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/json.h"
#include "checks.h"
#include "fold.h"
#include "node.h"

/* Results alike: same tag, priority, section and stem. */
struct say_class {
	enum hp_tag tag;
	enum hp_prio prio;
	char *section;   /* NULL: the check's own */
	char *stem;
	size_t n;        /* results so far */
};

struct node_say {
	size_t cls;             /* index in classes */
	enum hp_fold_keep keep; /* what its fold can use of it */
	const char *node;       /* the process-wide id (hp_finding_id_ref) */
	char *msg;              /* NULL: not kept */
	cJSON *evidence;
	cJSON *vars;     /* placeholder values, or NULL */
};

struct node_results {
	struct node_say *v;
	size_t n, alloc;
	HP_ARRAY(struct say_class) classes;
};

static int tag_rank(enum hp_tag t)
{
	switch (t) {
	case HP_TAG_FAIL: return 0;
	case HP_TAG_WARN: return 1;
	case HP_TAG_PASS: return 2;
	case HP_TAG_INFO: return 3;
	default: return 4;
	}
}

/* The class of a result, made on first use. */
static size_t class_of(struct node_results *r, enum hp_tag tag, enum hp_prio prio,
		       const char *section, const char *stem)
{
	struct say_class *k;
	size_t i;

	for (i = 0; i < r->classes.n; i++) {
		k = &r->classes.v[i];
		if (k->tag == tag && k->prio == prio && !strcmp(k->stem, stem) &&
		    (k->section && section ? !strcmp(k->section, section) : k->section == section))
			return i;
	}
	k = hp_array_push(&r->classes);
	k->tag = tag;
	k->prio = prio;
	k->section = section ? xstrdup(section) : NULL;
	k->stem = xstrdup(stem);
	return r->classes.n - 1;
}

struct node_say *hp_node_say(struct node_ctx *c, enum hp_tag tag, enum hp_prio prio,
			     const char *section, const char *stem, const char *fmt, ...)
{
	struct node_results *r = c->out;
	struct node_say *s;
	struct hp_buf msg = HP_BUF_INIT(HP_MAX_LINE);
	size_t k;
	va_list ap;

	if (tag != HP_TAG_FAIL && tag != HP_TAG_WARN)
		prio = HP_PNONE;
	k = class_of(r, tag, prio, section, stem);
	s = hp_array_push(r);
	s->cls = k;
	s->keep = hp_fold_keeps(tag, r->classes.v[k].n++);
	s->node = hp_finding_id_ref(c->id);
	if (s->keep == HP_FOLD_KEEP_NODE)
		return s;
	va_start(ap, fmt);
	if (hp_buf_vaddf(&msg, fmt, ap))
		hp_buf_puts(&msg, "(message too long)");
	va_end(ap);
	s->msg = hp_buf_detach(&msg, NULL);
	return s;
}

void hp_node_evidence(struct node_say *s, const char *fmt, ...)
{
	struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);
	va_list ap;

	if (s->keep != HP_FOLD_KEEP_ALL)
		return;
	va_start(ap, fmt);
	if (hp_buf_vaddf(&line, fmt, ap))
		hp_buf_puts(&line, "(line too long)");
	va_end(ap);
	if (!s->evidence)
		s->evidence = cJSON_CreateArray();
	cJSON_AddItemToArray(s->evidence, cJSON_CreateString(line.buf));
	hp_buf_release(&line);
}

void hp_node_var(struct node_say *s, const char *name, const char *value)
{
	if (!name || !value || s->keep != HP_FOLD_KEEP_ALL)
		return;
	if (!s->vars)
		s->vars = cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(s->vars, name);
	cJSON_AddStringToObject(s->vars, name, value);
}

/*
 * The results of class k (all alike), in the order they came, through one
 * fold: one finding each below HP_FOLD_MIN, else "<stem> on N nodes".
 * Each result kept what that fold keeps of it (both counted the same way).
 */
static void emit_class(struct hp_emit *em, const struct node_results *r, size_t k)
{
	const struct say_class *c = &r->classes.v[k];
	struct hp_fold fold = HP_FOLD_INIT(c->tag, c->prio, c->section);
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct node_say *x = &r->v[i];
		struct hp_fold_item *it;
		const cJSON *e;

		if (x->cls != k)
			continue;
		if (!x->msg) {
			hp_fold_add_node(&fold, x->node);
			continue;
		}
		it = hp_fold_add(&fold, x->node, "%s", x->msg);
		cJSON_ArrayForEach(e, x->evidence)
			if (cJSON_IsString(e))
				hp_fold_evidence(it, e->valuestring);
		cJSON_ArrayForEach(e, x->vars)
			if (e->string && cJSON_IsString(e))
				hp_fold_var(it, e->string, e->valuestring);
	}
	hp_fold_emit(em, &fold, "%s on %zu nodes", c->stem, c->n);
}

static void flush(struct hp_emit *em, struct node_results *r)
{
	size_t k;
	int rank;

	/* Problems first, by priority; within a rank, first seen first. */
	for (rank = 0; rank <= 4; rank++) {
		int p;

		for (p = HP_P0; p <= HP_PNONE; p++)
			for (k = 0; k < r->classes.n; k++)
				if (tag_rank(r->classes.v[k].tag) == rank &&
				    (int)r->classes.v[k].prio == p)
					emit_class(em, r, k);
	}
}

static void results_release(struct node_results *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->v[i].msg);
		cJSON_Delete(r->v[i].evidence);
		cJSON_Delete(r->v[i].vars);
	}
	hp_array_release(r);
	for (i = 0; i < r->classes.n; i++) {
		free(r->classes.v[i].section);
		free(r->classes.v[i].stem);
	}
	hp_array_release(&r->classes);
}

/* The cluster's orchestrator; a lone node (hpnode node) can name it in meta. */
static const char *orchestrator_of(const struct hp_snapshot *snap)
{
	const char *o = hp_json_str(snap->root, "meta.orchestrator");

	if (cJSON_IsObject(hp_json_get(snap->root, "cluster")))
		return hp_snap_orchestrator(snap);
	if (o && (!strcmp(o, "EKS") || !strcmp(o, "Slurm")))
		return o;
	return "Unknown";
}

static const cJSON *type_info_of(const struct hp_snapshot *snap, const char *type)
{
	const cJSON *types = hp_json_get(snap->root, "instance_types");

	if (!type || !cJSON_IsObject(types))
		return NULL;
	if (hp_starts_with(type, "ml."))
		type += 3;
	return cJSON_GetObjectItemCaseSensitive(types, type);
}

/* The walk of one probe's entries (key "probes" or "nccl_probes"). */
static void each_in(const struct hp_snapshot *snap, struct hp_emit *em, int nccl,
		    void (*judge)(struct node_ctx *c))
{
	const char *key = nccl ? "nccl_probes" : "probes";
	const cJSON *probes = hp_json_get(snap->root, key), *p;
	struct node_results out = { 0 };
	const char *orch = orchestrator_of(snap);
	struct hp_probe_iter it;

	/* Entries of the document's member (an object) or of the snapshot's probe store. */
	if (probes ? !cJSON_IsObject(probes) : !hp_probes_stored(snap, key))
		return;
	for (p = hp_probes_first(snap, key, &it); p; p = hp_probes_next(&it)) {
		const char *state = hp_json_str(p, "state");
		struct node_ctx c;
		cJSON *facts, *node_facts = NULL;

		if (!p->string || !cJSON_IsObject(p) || !state || strcmp(state, "probed"))
			continue;
		memset(&c, 0, sizeof(c));
		c.id = p->string;
		if (!strcmp(c.id, "local"))
			hp_strlcpy(c.who, "this node", sizeof(c.who));
		else
			snprintf(c.who, sizeof(c.who), "node %.60s", c.id);
		c.type = hp_check_str(p, "instance_type", NULL);
		c.type_info = type_info_of(snap, c.type);
		c.entry = p;
		c.out = &out;
		if (nccl) {
			struct hp_probe_iter nit;
			const cJSON *np = hp_probes_find(snap, "probes", c.id, &nit);
			const char *nst = hp_json_str(np, "state");

			c.facts = facts = hp_probes_facts(&it);
			if (nst && !strcmp(nst, "probed"))
				node_facts = hp_probes_facts(&nit);
			hp_probes_end(&nit);
			c.node_facts = node_facts;
		} else {
			c.facts = c.node_facts = facts = hp_probes_facts(&it);
		}
		c.orchestrator = orch;
		/* Without a cluster, the node's own services tell what runs it. */
		if (!strcmp(orch, "Unknown")) {
			if (hp_node_unit_loaded(&c, "kubelet"))
				c.orchestrator = "EKS";
			else if (hp_node_unit_loaded(&c, "slurmd") || hp_node_unit_loaded(&c, "slurmctld"))
				c.orchestrator = "Slurm";
		}
		judge(&c);
		cJSON_Delete(facts);
		cJSON_Delete(node_facts);
	}
	flush(em, &out);
	results_release(&out);
}

void hp_node_each(const struct hp_snapshot *snap, struct hp_emit *em,
		  void (*judge)(struct node_ctx *c))
{
	each_in(snap, em, 0, judge);
}

void hp_node_each_nccl(const struct hp_snapshot *snap, struct hp_emit *em,
		       void (*judge)(struct node_ctx *c))
{
	each_in(snap, em, 1, judge);
}

int hp_node_type_gpus(const struct node_ctx *c)
{
	const cJSON *g;
	int n = 0;

	if (!c->type_info)
		return -1;
	cJSON_ArrayForEach(g, hp_json_arr(c->type_info, "gpuInfo.gpus"))
		n += (int)hp_json_num(g, "count", 0);
	return n;
}

int hp_node_type_efa(const struct node_ctx *c)
{
	if (!c->type_info)
		return -1;
	if (!hp_json_bool(c->type_info, "networkInfo.efaSupported", 0))
		return 0;
	return (int)hp_json_num(c->type_info, "networkInfo.efaInfo.maximumEfaInterfaces", 0);
}

int hp_node_type_neuron_devices(const struct node_ctx *c)
{
	const cJSON *d;
	int n = 0;

	if (!c->type_info)
		return -1;
	cJSON_ArrayForEach(d, hp_json_arr(c->type_info, "neuronInfo.neuronDevices"))
		n += (int)hp_json_num(d, "count", 0);
	/* Inferentia1 types list their chips as inferenceAcceleratorInfo; not judged. */
	return n;
}

int hp_node_type_instance_store(const struct node_ctx *c)
{
	if (!c->type_info)
		return -1;
	return hp_json_num(c->type_info, "instanceStorageInfo.totalSizeInGB", 0) > 0;
}

const cJSON *hp_node_unit(const struct node_ctx *c, const char *unit)
{
	/* Services are the node probe's facts (an NCCL probe check reads them there too). */
	const cJSON *units = hp_json_get(c->node_facts, "services.units");

	return cJSON_GetObjectItemCaseSensitive(units, unit);
}

int hp_node_unit_loaded(const struct node_ctx *c, const char *unit)
{
	const char *load = hp_json_str(hp_node_unit(c, unit), "load");

	return load && !strcmp(load, "loaded");
}

const char *hp_node_unit_state(const struct node_ctx *c, const char *unit)
{
	const char *active = hp_json_str(hp_node_unit(c, unit), "active");

	return active ? active : "";
}

const char *hp_node_size(double kib, char out[32])
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t u = 0;

	while (kib >= 1024 && u + 1 < HP_ARRAY_LEN(units)) {
		kib /= 1024;
		u++;
	}
	snprintf(out, 32, u ? "%.1f %s" : "%.0f %s", kib, units[u]);
	return out;
}

const char *hp_node_time(double epoch, char out[32])
{
	if (epoch < 0) {
		hp_strlcpy(out, "time unknown", 32);
		return out;
	}
	return hp_check_iso_time(epoch, out);
}
