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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/json.h"
#include "checks.h"
#include "fold.h"
#include "node.h"

/* Result rows held by every walk under way, and the most ever held (hp_node_rows_peak). */
static atomic_size_t rows_now, rows_peak;

size_t hp_node_rows_peak(void)
{
	return atomic_load(&rows_peak);
}

static void rows_add(void)
{
	size_t now = atomic_fetch_add(&rows_now, 1) + 1, peak = atomic_load(&rows_peak);

	while (now > peak && !atomic_compare_exchange_weak(&rows_peak, &peak, now))
		;
}

/*
 * Results alike: same tag, priority, section and stem. What a class's fold
 * keeps of a result only shrinks as the class grows (hp_fold_keeps), so
 * its results that keep a line or more all come before those that keep
 * only their node: the first are node_say rows of the results, the others
 * just the node's id, here, in the order they came. A pass that holds
 * every on-node check's results until the last node is judged then costs
 * a pointer per node and check, not a row.
 */
struct say_class {
	enum hp_tag tag;
	enum hp_prio prio;
	char *section;   /* NULL: the check's own */
	char *stem;
	size_t n;        /* results so far */
	HP_ARRAY(const char *) only_nodes; /* the process-wide ids (hp_finding_id_ref) */
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
	struct node_say node_only; /* what hp_node_say hands back for a node-only result */
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
	if (hp_fold_keeps(tag, r->classes.v[k].n) == HP_FOLD_KEEP_NODE) {
		r->classes.v[k].n++;
		hp_array_append(&r->classes.v[k].only_nodes, hp_finding_id_ref(c->id));
		/* Evidence and values of a node-only result are not kept (hp_node_evidence). */
		memset(&r->node_only, 0, sizeof(r->node_only));
		r->node_only.cls = k;
		r->node_only.keep = HP_FOLD_KEEP_NODE;
		return &r->node_only;
	}
	s = hp_array_push(r);
	rows_add();
	s->cls = k;
	s->keep = hp_fold_keeps(tag, r->classes.v[k].n++);
	s->node = hp_finding_id_ref(c->id);
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
	for (i = 0; i < c->only_nodes.n; i++)
		hp_fold_add_node(&fold, c->only_nodes.v[i]);
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
	atomic_fetch_sub(&rows_now, r->n);
	hp_array_release(r);
	for (i = 0; i < r->classes.n; i++) {
		free(r->classes.v[i].section);
		free(r->classes.v[i].stem);
		hp_array_release(&r->classes.v[i].only_nodes);
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

/*
 * The walk of one probe's entries (key "probes" or "nccl_probes") for n
 * judges at once: each probed node's entry is found and its facts decoded
 * once, and every judge is handed a copy of the same node context; judge i
 * collects its results apart and they are emitted through ems[i] after
 * the last node, so each check's findings come out as if it had walked the
 * nodes alone.
 */
static void each_in(const struct hp_snapshot *snap, int nccl, size_t n,
		    void (*const *judges)(struct node_ctx *c), struct hp_emit *ems, double *secs)
{
	const char *key = nccl ? "nccl_probes" : "probes";
	const cJSON *probes = hp_json_get(snap->root, key), *p;
	struct node_results *out;
	const char *orch = orchestrator_of(snap);
	struct hp_probe_iter it;
	size_t i;

	/* Entries of the document's member (an object) or of the snapshot's probe store. */
	if (!n || (probes ? !cJSON_IsObject(probes) : !hp_probes_stored(snap, key)))
		return;
	out = xcalloc(n, sizeof(*out));
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
		for (i = 0; i < n; i++) {
			struct node_ctx mine = c;
			double t0 = secs ? hp_check_clock() : 0;

			mine.out = &out[i];
			judges[i](&mine);
			if (secs)
				secs[i] += hp_check_clock() - t0;
		}
		cJSON_Delete(facts);
		cJSON_Delete(node_facts);
	}
	for (i = 0; i < n; i++) {
		flush(&ems[i], &out[i]);
		results_release(&out[i]);
	}
	free(out);
}

void hp_node_each(const struct hp_snapshot *snap, struct hp_emit *em,
		  void (*judge)(struct node_ctx *c))
{
	each_in(snap, 0, 1, &judge, em, NULL);
}

void hp_node_each_nccl(const struct hp_snapshot *snap, struct hp_emit *em,
		       void (*judge)(struct node_ctx *c))
{
	each_in(snap, 1, 1, &judge, em, NULL);
}

void hp_node_pass(const struct hp_snapshot *snap, enum hp_probe_source source,
		  const struct hp_check *const *checks, size_t n, struct hp_findings *outs,
		  double *secs)
{
	void (**judges)(struct node_ctx *c) = xcalloc(n ? n : 1, sizeof(*judges));
	struct hp_emit *ems = xcalloc(n ? n : 1, sizeof(*ems));
	size_t i;

	for (i = 0; i < n; i++) {
		judges[i] = checks[i]->each_node;
		ems[i].check = checks[i];
		ems[i].out = &outs[i];
	}
	each_in(snap, source == HP_SOURCE_NCCL_PROBE, n, judges, ems, secs);
	free(judges);
	free(ems);
}

int hp_checks_node_first_fail(const cJSON *instance_types, const char *orchestrator,
			      const char *id, const cJSON *entry, const cJSON *facts, char *out,
			      size_t n)
{
	const char *type = hp_check_str(entry, "instance_type", NULL), *best_id = NULL;
	char *best_msg = NULL;
	int best_prio = HP_PNONE + 1;
	size_t i, k;

	if (!id || !cJSON_IsObject(entry) || !cJSON_IsObject(facts))
		return 0;
	for (i = 0; i < hp_checks_count; i++) {
		const struct hp_check *chk = hp_checks[i];
		struct node_results r;
		struct node_ctx c;

		if (!chk->each_node || chk->source != HP_SOURCE_NODE_PROBE)
			continue;
		memset(&r, 0, sizeof(r));
		memset(&c, 0, sizeof(c));
		c.id = id;
		snprintf(c.who, sizeof(c.who), "node %.60s", c.id);
		c.type = type;
		c.type_info = NULL;
		if (type && cJSON_IsObject(instance_types))
			c.type_info = cJSON_GetObjectItemCaseSensitive(instance_types,
								   type + (hp_starts_with(type, "ml.") ? 3 : 0));
		c.orchestrator = orchestrator ? orchestrator : "Unknown";
		c.entry = entry;
		c.facts = c.node_facts = facts;
		c.out = &r;
		chk->each_node(&c);
		/* One node: every result is its first of its class, so each keeps its message. */
		for (k = 0; k < r.n; k++) {
			const struct say_class *cl = &r.classes.v[r.v[k].cls];

			if (cl->tag != HP_TAG_FAIL || !r.v[k].msg || (int)cl->prio >= best_prio)
				continue;
			best_prio = (int)cl->prio;
			best_id = chk->id;
			free(best_msg);
			best_msg = xstrdup(r.v[k].msg);
		}
		results_release(&r);
	}
	if (!best_msg)
		return 0;
	snprintf(out, n, "%s: %s", best_id, best_msg);
	free(best_msg);
	return 1;
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
