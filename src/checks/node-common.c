/*
 * The frame of every on-node check: walk the probed nodes of the snapshot,
 * hand each node's facts to the check, collect its per-node results, and
 * emit them, problems first; identical results (same tag, priority,
 * section and stem) go through one fold (fold.h), so those of many nodes
 * become one finding "<stem> on N nodes". Nodes that were not probed
 * belong to the SSM transport's own check.
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

struct node_say {
	enum hp_tag tag;
	enum hp_prio prio;
	char *section;   /* NULL: the check's own */
	char *stem;
	char *msg;
	char *node;
	cJSON *evidence;
	cJSON *vars;     /* placeholder values, or NULL */
};

struct node_results {
	struct node_say *v;
	size_t n, alloc;
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

struct node_say *hp_node_say(struct node_ctx *c, enum hp_tag tag, enum hp_prio prio,
			     const char *section, const char *stem, const char *fmt, ...)
{
	struct node_results *r = c->out;
	struct node_say *s;
	struct hp_buf msg = HP_BUF_INIT(HP_MAX_LINE);
	va_list ap;

	s = hp_array_push(r);
	s->tag = tag;
	s->prio = (tag == HP_TAG_FAIL || tag == HP_TAG_WARN) ? prio : HP_PNONE;
	s->section = section ? xstrdup(section) : NULL;
	s->stem = xstrdup(stem);
	s->node = xstrdup(c->id);
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
	if (!name || !value)
		return;
	if (!s->vars)
		s->vars = cJSON_CreateObject();
	cJSON_DeleteItemFromObjectCaseSensitive(s->vars, name);
	cJSON_AddStringToObject(s->vars, name, value);
}

static int same(const struct node_say *a, const struct node_say *b)
{
	if (a->tag != b->tag || a->prio != b->prio || strcmp(a->stem, b->stem))
		return 0;
	if (!a->section || !b->section)
		return a->section == b->section;
	return !strcmp(a->section, b->section);
}

/*
 * The n results in idx (all alike) through one fold: one finding each
 * below HP_FOLD_MIN, else "<stem> on N nodes".
 */
static void emit_class(struct hp_emit *em, const struct node_results *r, const size_t *idx,
		       size_t n)
{
	const struct node_say *s = &r->v[idx[0]];
	struct hp_fold fold = HP_FOLD_INIT(s->tag, s->prio, s->section);
	size_t i;

	for (i = 0; i < n; i++) {
		const struct node_say *x = &r->v[idx[i]];
		struct hp_fold_item *it = hp_fold_add(&fold, x->node, "%s", x->msg);
		const cJSON *e;

		cJSON_ArrayForEach(e, x->evidence)
			if (cJSON_IsString(e))
				hp_fold_evidence(it, e->valuestring);
		cJSON_ArrayForEach(e, x->vars)
			if (e->string && cJSON_IsString(e))
				hp_fold_var(it, e->string, e->valuestring);
	}
	hp_fold_emit(em, &fold, "%s on %zu nodes", s->stem, n);
}

static void flush(struct hp_emit *em, struct node_results *r)
{
	size_t *group = xcalloc(r->n ? r->n : 1, sizeof(*group));
	size_t *idx = xcalloc(r->n ? r->n : 1, sizeof(*idx));
	size_t *reps = xcalloc(r->n ? r->n : 1, sizeof(*reps));
	size_t i, j, k, nreps = 0;
	int rank;

	/* group[i]: index of the first result alike to result i (few distinct ones). */
	for (i = 0; i < r->n; i++) {
		group[i] = i;
		for (j = 0; j < nreps; j++)
			if (same(&r->v[reps[j]], &r->v[i])) {
				group[i] = reps[j];
				break;
			}
		if (group[i] == i)
			reps[nreps++] = i;
	}
	/* Problems first, by priority; within a rank, first seen first. */
	for (rank = 0; rank <= 4; rank++) {
		int p;

		for (p = HP_P0; p <= HP_PNONE; p++) {
			for (j = 0; j < nreps; j++) {
				size_t n = 0;

				i = reps[j];
				if (tag_rank(r->v[i].tag) != rank || (int)r->v[i].prio != p)
					continue;
				for (k = i; k < r->n; k++)
					if (group[k] == i)
						idx[n++] = k;
				emit_class(em, r, idx, n);
			}
		}
	}
	free(reps);
	free(group);
	free(idx);
}

static void results_release(struct node_results *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		free(r->v[i].section);
		free(r->v[i].stem);
		free(r->v[i].msg);
		free(r->v[i].node);
		cJSON_Delete(r->v[i].evidence);
		cJSON_Delete(r->v[i].vars);
	}
	hp_array_release(r);
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
	const cJSON *probes = hp_json_get(snap->root, nccl ? "nccl_probes" : "probes"), *p;
	const cJSON *node_probes = hp_json_get(snap->root, "probes");
	struct node_results out = { 0 };
	const char *orch = orchestrator_of(snap);

	if (!cJSON_IsObject(probes))
		return;
	cJSON_ArrayForEach(p, probes) {
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
			const cJSON *np = cJSON_GetObjectItemCaseSensitive(node_probes, c.id);
			const char *nst = hp_json_str(np, "state");

			c.facts = facts = hp_facts_nccl_node(snap, p);
			if (nst && !strcmp(nst, "probed"))
				node_facts = hp_facts_node(snap, np);
			c.node_facts = node_facts;
		} else {
			c.facts = c.node_facts = facts = hp_facts_node(snap, p);
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
