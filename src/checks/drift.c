/*
 * node.version-drift: the software versions the probes read (kernel and
 * NVIDIA driver from the node probe; EFA installer, libfabric and NCCL
 * from the NCCL probe where it ran), compared across the nodes of each
 * instance group. A node whose version is not the group's majority is
 * drift: WARN P2 with the versions and their node counts; FAIL P1 when the
 * NVIDIA driver or the EFA installer differs between nodes of one training
 * job (the nodes of the job's pods, `hpnode nccl`). A version that could
 * not be read is left out, never counted as agreeing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"

enum attr { A_KERNEL, A_DRIVER, A_EFA, A_LIBFABRIC, A_NCCL, A__COUNT };

static const struct {
	const char *name;      /* in messages */
	const char *cls;       /* the key's class */
	int job_critical;      /* FAIL P1 when it differs within one job */
} attrs[A__COUNT] = {
	[A_KERNEL] = { "kernel", "kernel", 0 },
	[A_DRIVER] = { "NVIDIA driver", "driver", 1 },
	[A_EFA] = { "EFA installer", "efa-installer", 1 },
	[A_LIBFABRIC] = { "libfabric", "libfabric", 0 },
	[A_NCCL] = { "NCCL library", "nccl", 0 },
};

/* One version read on one node. */
struct rec {
	const char *group;     /* the entry's (owned by the snapshot) */
	enum attr attr;
	char value[64];
	const char *node;      /* process-wide id (hp_finding_id_ref) */
};

static int by_group_attr_value(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	int c = strcmp(x->group, y->group);

	if (c)
		return c;
	if (x->attr != y->attr)
		return (int)x->attr - (int)y->attr;
	c = strcmp(x->value, y->value);
	return c ? c : strcmp(x->node, y->node);
}

static void add(struct rec **v, size_t *n, size_t *alloc, const char *group, enum attr a,
		const char *value, const char *node)
{
	struct rec *r;

	if (!value || !*value)
		return;
	*v = hp_array_grow(*v, alloc, *n, 1, sizeof(**v));
	r = &(*v)[(*n)++];
	r->group = group;
	r->attr = a;
	hp_strlcpy(r->value, value, sizeof(r->value));
	r->node = hp_finding_id_ref(node);
}

/* The instance ids of the training job's pods (`hpnode nccl`'s nccl.pods), into ids. */
static size_t job_nodes(const struct hp_snapshot *snap, const char **ids, size_t max)
{
	const cJSON *p;
	size_t n = 0;

	cJSON_ArrayForEach(p, hp_json_get(hp_snapshot_get(snap, "nccl"), "pods")) {
		char iid[32];
		const char *node = hp_json_str(p, "node");

		if (n < max && node && !hp_kube_instance_id(node, NULL, NULL, iid, sizeof(iid)))
			ids[n++] = hp_finding_id_ref(iid);
	}
	return n;
}

static int in(const char *const *ids, size_t n, const char *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

/* One (group, attribute) run of records [lo, hi): drift, or a count of agreeing nodes. */
static int judge(struct hp_emit *em, const struct rec *v, size_t lo, size_t hi,
		 const char *const *job, size_t njob)
{
	size_t i, at, best = lo, best_n = 0, kinds = 0, in_job_major = 0, in_job_minor = 0;
	const struct rec *r = &v[lo];
	struct hp_finding *f;
	char line[512];
	int fail;

	/* The majority: the most nodes; a tie goes to the lowest version string (stable). */
	for (i = lo; i < hi; i = at) {
		for (at = i; at < hi && !strcmp(v[at].value, v[i].value); at++)
			;
		kinds++;
		if (at - i > best_n) {
			best_n = at - i;
			best = i;
		}
	}
	if (kinds < 2)
		return 0;
	for (i = lo; i < hi; i++) {
		int major = !strcmp(v[i].value, v[best].value);

		if (in(job, njob, v[i].node)) {
			in_job_major += major;
			in_job_minor += !major;
		}
	}
	fail = attrs[r->attr].job_critical && in_job_major && in_job_minor;
	f = hp_emitx(em, fail ? HP_TAG_FAIL : HP_TAG_WARN, fail ? HP_P1 : HP_P2, NULL, NULL,
		     "Instance group '%s': %s differs on %zu of %zu probed nodes (%zu versions; "
		     "majority %s on %zu)%s", r->group, attrs[r->attr].name, (hi - lo) - best_n, hi - lo,
		     kinds, v[best].value, best_n, fail ? ", within one training job" : "");
	hp_finding_subject(f, r->group);
	hp_finding_class(f, attrs[r->attr].cls);
	hp_finding_var(f, "GROUP", r->group);
	for (i = lo; i < hi; i = at) {
		size_t k, len;

		for (at = i; at < hi && !strcmp(v[at].value, v[i].value); at++)
			;
		len = (size_t)snprintf(line, sizeof(line), "%-24s %zu node%s%s", v[i].value, at - i,
				       at - i == 1 ? "" : "s", i == best ? " (majority)" : ":");
		for (k = i; i != best && k < at && k < i + 8 && len < sizeof(line) - 24; k++)
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %s", v[k].node);
		if (i != best && at - i > 8 && len < sizeof(line) - 16)
			snprintf(line + len, sizeof(line) - len, " and %zu more", at - i - 8);
		hp_finding_evidence(f, line);
		for (k = i; i != best && k < at; k++)
			hp_finding_node(f, v[k].node);
	}
	return 1;
}

static void run_drift(const struct hp_snapshot *snap, struct hp_emit *em)
{
	struct rec *v = NULL;
	size_t n = 0, alloc = 0, i, at, agreeing = 0, drifts = 0, nodes = 0;
	const char *job[512];
	size_t njob = job_nodes(snap, job, HP_ARRAY_LEN(job));
	struct hp_probe_iter it;
	const cJSON *p;

	for (p = hp_probes_first(snap, "probes", &it); p; p = hp_probes_next(&it)) {
		const char *st = hp_json_str(p, "state"), *group = hp_json_str(p, "group");
		struct hp_probe_iter nit;
		const cJSON *np;
		cJSON *f;

		if (!p->string || !st || strcmp(st, "probed"))
			continue;
		if (!group)
			group = "(unknown group)";
		nodes++;
		f = hp_probes_facts(&it);
		add(&v, &n, &alloc, group, A_KERNEL, hp_json_str(f, "node.kernel"), p->string);
		add(&v, &n, &alloc, group, A_DRIVER,
		    hp_json_str(cJSON_GetArrayItem(hp_json_get(f, "nvidia.gpus"), 0), "driver"), p->string);
		cJSON_Delete(f);
		np = hp_probes_find(snap, "nccl_probes", p->string, &nit);
		if (np && hp_json_str(np, "state") && !strcmp(hp_json_str(np, "state"), "probed")) {
			cJSON *nf = hp_probes_facts(&nit);

			add(&v, &n, &alloc, group, A_EFA, hp_json_str(nf, "efa_installer.version"), p->string);
			add(&v, &n, &alloc, group, A_LIBFABRIC, hp_json_str(nf, "libfabric.version"), p->string);
			add(&v, &n, &alloc, group, A_NCCL, hp_json_str(nf, "nccl_lib.version"), p->string);
			cJSON_Delete(nf);
		}
		hp_probes_end(&nit);
	}
	if (n)
		qsort(v, n, sizeof(*v), by_group_attr_value);
	for (i = 0; i < n; i = at) {
		for (at = i; at < n && !strcmp(v[at].group, v[i].group) && v[at].attr == v[i].attr; at++)
			;
		if (at - i < 2)
			continue;
		if (judge(em, v, i, at, job, njob))
			drifts++;
		else
			agreeing++;
	}
	if (!drifts && agreeing)
		hp_emit(em, HP_TAG_PASS, "Software versions agree within every instance group (%zu "
			"probed nodes: kernel, NVIDIA driver and, where the NCCL probe ran, EFA installer, "
			"libfabric, NCCL)", nodes);
	free(v);
}

HP_CHECK(node_version_drift, HP_GROUP_NODES, 60,
	 .id = "node.version-drift", .section = "E.1", .prio = HP_P2,
	 .run = run_drift);
