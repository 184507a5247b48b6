/*
 * Node state from ListClusterNodes (every node listed) and, with --node,
 * DescribeClusterNode (the target). Non-Running states are told apart:
 * Failure fails, transitional states warn; the nodes of one state fold by
 * the rule of fold.h. On-node probes are elsewhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/json.h"
#include "checks.h"
#include "fold.h"

/* Known states, in the order the totals line lists them. */
static const struct {
	const char *status;
	enum hp_tag tag;
	enum hp_prio prio;
	const char *section;   /* F.1 explains the states; a failed node also gets F.2 */
} states[] = {
	{ "Running", HP_TAG_PASS, HP_PNONE, "F.1" },
	{ "Failure", HP_TAG_FAIL, HP_P1, "F.1+F.2" },
	{ "NotFound", HP_TAG_WARN, HP_P1, "F.1" },
	{ "Pending", HP_TAG_WARN, HP_P2, "F.1" },
	{ "ShuttingDown", HP_TAG_WARN, HP_P2, "F.1" },
	{ "SystemUpdating", HP_TAG_WARN, HP_P2, "F.1" },
	{ "DeepHealthCheckInProgress", HP_TAG_WARN, HP_P2, "F.1" },
};

/* Nodes sharing one state; status NULL = no InstanceStatus.Status given. */
struct st_bucket {
	const char *status;
	int rank;              /* index in states[], or HP_ARRAY_LEN(states) if unknown */
	size_t seen;           /* first-seen order, for a stable sort */
	const cJSON **nodes;
	size_t n, alloc;
};

static int rank_of(const char *status)
{
	size_t i;

	for (i = 0; status && i < HP_ARRAY_LEN(states); i++)
		if (!strcmp(states[i].status, status))
			return (int)i;
	return (int)HP_ARRAY_LEN(states);
}

/* Unknown or missing states warn at P1: hpnode cannot tell they are harmless. */
static enum hp_tag tag_of(int rank)
{
	return rank < (int)HP_ARRAY_LEN(states) ? states[rank].tag : HP_TAG_WARN;
}

static enum hp_prio prio_of(int rank)
{
	return rank < (int)HP_ARRAY_LEN(states) ? states[rank].prio : HP_P1;
}

static const char *section_of(int rank)
{
	return rank < (int)HP_ARRAY_LEN(states) ? states[rank].section : "F.1";
}

typedef HP_ARRAY(struct st_bucket) bucket_list;

static struct st_bucket *bucket_for(bucket_list *v, const char *status)
{
	struct st_bucket *b;
	size_t i;

	for (i = 0; i < v->n; i++) {
		b = &v->v[i];
		if ((!b->status && !status) || (b->status && status && !strcmp(b->status, status)))
			return b;
	}
	b = hp_array_push(v);
	b->status = status;
	b->rank = rank_of(status);
	b->seen = v->n;
	return b;
}

/* "i-0abc (workers / ml.p5.48xlarge)" */
static void node_name(const cJSON *node, char *out, size_t n)
{
	snprintf(out, n, "%.40s (%.64s / %.64s)", hp_check_str(node, "InstanceId", "?"),
		 hp_check_str(node, "InstanceGroupName", "?"),
		 hp_check_str(node, "InstanceType", "?"));
}

static void node_line(const cJSON *node, const char *status, int with_is, char *out, size_t n)
{
	char who[192], msg[HP_CHECK_CLIP_SIZE];
	const char *m = hp_json_str(node, "InstanceStatus.Message");

	node_name(node, who, sizeof(who));
	hp_check_clip(m, msg);
	if (with_is)
		snprintf(out, n, "%s %s%.64s%s%s", who, status ? "is " : "has no status",
			 status ? status : "", *msg ? ": " : "", msg);
	else
		snprintf(out, n, "%s%s%s", who, *msg ? ": " : "", msg);
}

/* The nodes of one state through one fold: "i-… is Pending: …" each, or "N nodes are Pending". */
static void report_bucket(struct hp_emit *em, const struct st_bucket *b)
{
	struct hp_fold fold = HP_FOLD_INIT(tag_of(b->rank), prio_of(b->rank), section_of(b->rank));
	char line[HP_CHECK_CLIP_SIZE + 320];
	size_t i;

	for (i = 0; i < b->n; i++) {
		struct hp_fold_item *it;

		node_line(b->nodes[i], b->status, 1, line, sizeof(line));
		it = hp_fold_add(&fold, hp_check_str(b->nodes[i], "InstanceId", NULL), "%s", line);
		/* Folded, the message says the state: each line keeps the node and its message. */
		node_line(b->nodes[i], b->status, 0, line, sizeof(line));
		hp_fold_line(it, "%s", line);
	}
	if (b->status)
		hp_fold_emit(em, &fold, "%zu nodes are %.64s", b->n, b->status);
	else
		hp_fold_emit(em, &fold, "%zu nodes have no status", b->n);
}

static int by_rank(const void *a, const void *b)
{
	const struct st_bucket *x = a, *y = b;

	/* Failures first, then P1 warnings, then P2; equal ranks keep first-seen order. */
	if (prio_of(x->rank) != prio_of(y->rank))
		return prio_of(x->rank) < prio_of(y->rank) ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seen < y->seen ? -1 : x->seen > y->seen;
}

/* Instance ids the node list held more than once (a hostile reply or snapshot): each counted once. */
static void warn_duplicates(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *dups = hp_json_arr(snap->root, "nodes_duplicates"), *id;
	struct hp_buf ids = HP_BUF_INIT(HP_MAX_LINE);
	int n = 0;

	cJSON_ArrayForEach(id, dups) {
		if (!cJSON_IsString(id))
			continue;
		if (n < 10)
			hp_buf_printf(&ids, "%s%.64s", n ? ", " : "", id->valuestring);
		n++;
	}
	if (n)
		hp_emitx(em, HP_TAG_WARN, HP_P2, "", NULL,
			 "The node list named %d instance id%s more than once (%s%s); each node is "
			 "counted and reported once", n, n == 1 ? "" : "s", ids.buf,
			 n > 10 ? ", \xE2\x80\xA6" : "");
	hp_buf_release(&ids);
}

/*
 * Every instance group's nodes in the list against its CurrentCount: a
 * group whose reads failed or were cut (nodes_partial) says so; another
 * difference may be a group scaling, or nodes the list did not give.
 * Under the page cap only the groups it cut are named (the cap's own line
 * says the rest).
 */
static void group_counts(const struct hp_snapshot *snap, struct hp_emit *em, int truncated)
{
	const cJSON *partial = hp_json_arr(snap->root, "nodes_partial");
	const cJSON *g, *n;

	cJSON_ArrayForEach(g, hp_json_arr(hp_snapshot_get(snap, "cluster"), "InstanceGroups")) {
		const char *name = hp_json_str(g, "InstanceGroupName");
		const cJSON *cc = cJSON_GetObjectItemCaseSensitive(g, "CurrentCount");
		int cut = name && hp_json_has_str(partial, name);
		long found = 0, want;
		char clip[HP_CHECK_CLIP_SIZE];

		if (!name || !cJSON_IsNumber(cc) || (truncated && !cut))
			continue;
		want = (long)cc->valuedouble;
		cJSON_ArrayForEach(n, hp_json_arr(snap->root, "nodes")) {
			const char *ng = hp_json_str(n, "InstanceGroupName");
			if (ng && !strcmp(ng, name))
				found++;
		}
		hp_check_clip(name, clip);
		if (cut)
			hp_emitx(em, HP_TAG_WARN, HP_P1, "F.1", NULL,
				 "Node list of instance group %s is incomplete: %ld of %ld nodes read "
				 "(its ListClusterNodes reads failed or were cut); its other nodes are "
				 "not checked", clip, found, want);
		else if (found != want)
			hp_emitx(em, HP_TAG_WARN, HP_P2, "F.1", NULL,
				 "Instance group %s: %ld nodes listed, CurrentCount %ld (the group may "
				 "be scaling; nodes missing from the list are not checked)",
				 clip, found, want);
	}
}

static void run_status(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nodes = hp_json_arr(snap->root, "nodes");
	const cJSON *node;
	bucket_list v = HP_ARRAY_INIT;
	struct hp_buf counts = HP_BUF_INIT(HP_MAX_LINE);
	size_t i;
	int total = 0, running = 0, truncated;

	if (!nodes)
		return;
	truncated = hp_json_bool(snap->root, "nodes_truncated", 0);
	cJSON_ArrayForEach(node, nodes) {
		struct st_bucket *b;

		if (!cJSON_IsObject(node))
			continue;
		total++;
		b = bucket_for(&v, hp_check_str(node, "InstanceStatus.Status", NULL));
		b->nodes = hp_array_grow(b->nodes, &b->alloc, b->n, 1, sizeof(*b->nodes));
		b->nodes[b->n++] = node;
		if (b->rank == 0)
			running++;
	}
	/* qsort is not stable, so ties fall back to first-seen order. */
	hp_array_sort(&v, by_rank);
	for (i = 0; i < v.n; i++)
		if (v.v[i].rank != 0)
			hp_buf_printf(&counts, "%s%.64s: %zu", counts.len ? ", " : "",
				      v.v[i].status ? v.v[i].status : "no status", v.v[i].n);
	HP_CHECK_INFO(em, "Total: %d  Running: %d  Problems: %d%s%s%s", total, running,
		total - running, counts.len ? "  (" : "", counts.buf, counts.len ? ")" : "");
	hp_buf_release(&counts);
	warn_duplicates(snap, em);
	if (truncated && hp_json_get(snap->root, "nodes_page_cap"))
		hp_emitx(em, HP_TAG_WARN, HP_P2, "", NULL,
			 "Node list stopped at %d pages (%d nodes read); findings cover those only "
			 "\xE2\x80\x94 use --node to target specific nodes",
			 (int)hp_json_num(snap->root, "nodes_page_cap", 0), total);
	else if (truncated)
		hp_emitx(em, HP_TAG_WARN, HP_P2, "", NULL,
			 "Node list stopped at its page cap (%d nodes read); findings cover those only "
			 "\xE2\x80\x94 use --node to target specific nodes", total);
	group_counts(snap, em, truncated);
	for (i = 0; i < v.n; i++)
		if (v.v[i].rank != 0)
			report_bucket(em, &v.v[i]);
	if (!total)
		hp_emitx(em, HP_TAG_WARN, HP_P1, "C+F", NULL, "Cluster has no nodes");
	else if (running == total)
		hp_emit(em, HP_TAG_PASS, "All %d %snodes are Running", total,
			truncated ? "listed " : "");
	for (i = 0; i < v.n; i++)
		free(v.v[i].nodes);
	hp_array_release(&v);
}

static void run_target(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const char *want = hp_check_str(snap->root, "meta.node_filter", NULL);
	const char *missing = hp_json_str(snap->root, "node_missing");
	const cJSON *node = hp_json_get(snap->root, "node");
	const char *st, *v;
	char clip[HP_CHECK_CLIP_SIZE], when[32], line[HP_CHECK_CLIP_SIZE + 320];

	if (!want)
		return;
	if (missing && !strcmp(missing, want)) {
		/* No fallback to another node: the user asked about this one. */
		/* F.1 shows how to list the cluster's node ids. */
		hp_emitx(em, HP_TAG_FAIL, HP_P0, "F.1", want,
			 "Node %s not found in cluster %s \xE2\x80\x94 verify --cluster and --node "
			 "against the cluster's node list",
			 want, hp_snap_cluster_name(snap));
		return;
	}
	if (!cJSON_IsObject(node))
		return;
	v = hp_json_str(node, "InstanceId");
	if (v && strcmp(v, want)) {
		hp_emitx(em, HP_TAG_INFO, HP_PNONE, NULL, want,
			 "DescribeClusterNode answered for %.40s, not %s; its details are not used",
			 v, want);
		return;
	}
	st = hp_json_str(node, "InstanceStatus.Status");
	hp_emitx(em, HP_TAG_INFO, HP_PNONE, NULL, want, "Target node %s: status %s", want,
		 st ? hp_check_clip(st, clip) : "(missing)");
	if (hp_json_get(node, "LaunchTime"))
		hp_emitx(em, HP_TAG_INFO, HP_PNONE, NULL, want, "Launched: %s",
			 hp_check_iso_time(hp_json_num(node, "LaunchTime", -1), when));
	if ((v = hp_check_str(node, "InstanceStatus.Message", NULL)))
		hp_emitx(em, HP_TAG_INFO, HP_PNONE, NULL, want, "Message: %s",
			 hp_check_clip(v, clip));
	if ((v = hp_check_str(node, "InstanceType", NULL)))
		hp_emitx(em, HP_TAG_INFO, HP_PNONE, NULL, want, "Type: %s", hp_check_clip(v, clip));
	if ((v = hp_check_str(node, "InstanceGroupName", NULL)))
		hp_emitx(em, HP_TAG_INFO, HP_PNONE, NULL, want, "Group: %s", hp_check_clip(v, clip));
	if ((v = hp_check_str(node, "PrivatePrimaryIp", NULL)))
		hp_emitx(em, HP_TAG_INFO, HP_PNONE, NULL, want, "Private IP: %s",
			 hp_check_clip(v, clip));
	if ((v = hp_check_str(node, "Placement.AvailabilityZone", NULL)))
		hp_emitx(em, HP_TAG_INFO, HP_PNONE, NULL, want, "Availability zone: %s%s%.32s%s",
			 hp_check_clip(v, clip),
			 hp_json_str(node, "Placement.AvailabilityZoneId") ? " (" : "",
			 hp_check_str(node, "Placement.AvailabilityZoneId", ""),
			 hp_json_str(node, "Placement.AvailabilityZoneId") ? ")" : "");
	if (!st)
		return;
	if (!strcmp(st, "Running")) {
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, want, "Target node %s is Running", want);
		return;
	}
	node_line(node, st, 1, line, sizeof(line));
	hp_emitx(em, HP_TAG_FAIL, HP_P1, "F.1+F.2", want, "%s", line);
}

HP_CHECK(nodes_target, HP_GROUP_NODES, 20,
	 .id = "nodes.target", .section = "", .prio = HP_P0, .run = run_target);
HP_CHECK(nodes_status, HP_GROUP_NODES, 30,
	 .id = "nodes.status", .section = "F.1", .prio = HP_P1, .run = run_status);
