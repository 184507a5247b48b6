/*
 * The node list of a cluster of more than one page, read in partitions at
 * once instead of one NextToken chain.
 *
 * A partition is one InstanceGroupNameContains filter: the name of a group
 * that contains no other group's name. The service matches "contains", so
 * the filter also returns every group whose name contains it; those groups
 * are the partition's own (never listed again by a filter of their own),
 * and a node of any other group in its replies is dropped (it is listed by
 * its own partition). A partition expected (from DescribeCluster's
 * CurrentCount) to hold more than NL_SMALL_PAGES pages is read in
 * creation-time windows: its oldest page (SortOrder Ascending) and newest
 * page (Descending) first, which bound the times between them, then that
 * span cut into windows, each read Ascending with CreationTimeAfter and
 * CreationTimeBefore. The service documents both bounds as "after" and
 * "before" (exclusive), so each window reaches NL_EDGE_S seconds into its
 * neighbours: a node created exactly at an edge, or a bound rounded to the
 * second, is still in a window, and the nodes read twice are dropped by
 * instance id (nodes_dedup_by_id). A window still going after
 * NL_SPLIT_PAGES pages while workers wait is cut in two at the middle of
 * what is left of it.
 *
 * Up to NL_WORKERS requests are in flight; each is an ordinary client call
 * (retries, throttling backoff, the run budget and the breaker are the
 * client's). A denied or rejected call stops the reads (the rest would be
 * refused alike). A partition whose read failed or was cut by the page cap
 * keeps what it read and is named in "nodes_partial"; the checks compare
 * every group's nodes with its CurrentCount. The list is sorted by
 * LaunchTime, then instance id, so it never depends on reply order.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/collect.h"
#include "hp/json.h"
#include "plan.h"

#define NL_EDGE_S 2.0
#define NL_SMALL_PAGES 3
#define NL_SPLIT_PAGES 3
#define NL_WORKERS 16

struct nl_part {
	const char *filter;       /* InstanceGroupNameContains */
	const char **groups;      /* the groups whose names contain filter */
	size_t ngroups;
	double expected;          /* their CurrentCount */
	int probes_left;          /* of the two first pages (windowed partitions) */
	double t_asc, t_desc;     /* last LaunchTime of the oldest / newest page */
	int more_asc, more_desc;  /* whether those pages had a NextToken */
	int failed, cut;
};

struct nl_item {
	size_t part;
	int desc;                 /* SortOrder Descending */
	int single;               /* one page only (a first page of a windowed partition) */
	int ranged;               /* CreationTimeAfter/Before set */
	double after, before;
	struct nl_item *next;
};

struct nl_run {
	struct hp_aws *a;
	const char *arn;
	struct hp_snapshot *s;    /* failed calls, under lock */
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct nl_item *head, *tail;
	size_t queued, busy, workers;
	struct nl_part *parts;
	size_t nparts;
	cJSON *nodes;
	size_t count;
	int pages, max_pages;
	int stop;                 /* denied or rejected: no more requests */
	int cut;                  /* the page cap was reached */
	unsigned recorded;        /* bit per hp_aws_class recorded in "calls" */
};

/* Queue an item (lock held). */
static void push(struct nl_run *r, size_t part, int desc, int single, int ranged, double after,
		 double before)
{
	struct nl_item *it = xcalloc(1, sizeof(*it));

	it->part = part;
	it->desc = desc;
	it->single = single;
	it->ranged = ranged;
	it->after = after;
	it->before = before;
	if (r->tail)
		r->tail->next = it;
	else
		r->head = it;
	r->tail = it;
	r->queued++;
	pthread_cond_broadcast(&r->changed);
}

static int part_has_group(const struct nl_part *p, const char *g)
{
	size_t i;

	for (i = 0; g && i < p->ngroups; i++)
		if (!strcmp(p->groups[i], g))
			return 1;
	return 0;
}

/*
 * Both first pages of a windowed partition are in (lock held): the span
 * between them cut into windows, or nothing when one page held it all.
 */
static void plan_windows(struct nl_run *r, size_t part)
{
	struct nl_part *p = &r->parts[part];
	double lo = p->t_asc, hi = p->t_desc, rem, w;
	size_t k, n;

	if (p->failed || !p->more_asc || !p->more_desc)
		return;
	if (!isfinite(lo) || !isfinite(hi)) {
		/* No times to cut by: one chain from the oldest node. */
		push(r, part, 0, 0, 0, 0, 0);
		return;
	}
	if (hi < lo) {
		w = lo;
		lo = hi;
		hi = w;
	}
	rem = ceil((p->expected - 200) / 100.0);
	n = rem <= 2 ? 1 : (size_t)ceil(rem / 2.0);
	if (n > 2 * r->workers)
		n = 2 * r->workers;
	if ((hi - lo) / (double)n < 2 * NL_EDGE_S)
		n = (size_t)((hi - lo) / (2 * NL_EDGE_S));
	if (n < 1)
		n = 1;
	w = (hi - lo) / (double)n;
	for (k = 0; k < n; k++)
		push(r, part, 0, 0, 1, lo + (double)k * w - NL_EDGE_S,
		     (k + 1 == n ? hi : lo + (double)(k + 1) * w) + NL_EDGE_S);
}

/* A failed call: recorded once per kind; a refusal stops the reads (lock held). */
static void failed_call(struct nl_run *r, struct nl_part *p, const struct hp_aws_result *res)
{
	p->failed = 1;
	if (res->cls == HP_AWS_DENIED || res->cls == HP_AWS_AUTH)
		r->stop = 1;
	if (!(r->recorded & (1u << res->cls))) {
		r->recorded |= 1u << res->cls;
		hp_collect_record(r->s, HP_SVC_SAGEMAKER, "ListClusterNodes", res);
	}
}

static cJSON *request(const struct nl_run *r, const struct nl_part *p, const struct nl_item *it)
{
	cJSON *in = cJSON_CreateObject();

	cJSON_AddStringToObject(in, "ClusterName", r->arn);
	cJSON_AddNumberToObject(in, "MaxResults", 100);
	cJSON_AddStringToObject(in, "InstanceGroupNameContains", p->filter);
	cJSON_AddStringToObject(in, "SortBy", "CREATION_TIME");
	cJSON_AddStringToObject(in, "SortOrder", it->desc ? "Descending" : "Ascending");
	if (it->ranged) {
		cJSON_AddNumberToObject(in, "CreationTimeAfter", it->after);
		cJSON_AddNumberToObject(in, "CreationTimeBefore", it->before);
	}
	return in;
}

/* Reads one item: a page (single) or a window's chain, splitting it when workers wait. */
static void run_item(struct nl_run *r, struct nl_item *it)
{
	struct nl_part *p = &r->parts[it->part];
	cJSON *req = request(r, p, it);
	int here = 0;

	for (;;) {
		struct hp_aws_result res;
		cJSON *items, *n, *keep;
		const char *tok;
		double last = NAN;
		size_t kept = 0;
		int want_split, rc;

		pthread_mutex_lock(&r->lock);
		if (r->stop || r->pages >= r->max_pages) {
			if (!r->stop) {
				r->cut = 1;
				p->cut = 1;
			}
			if (it->single && --p->probes_left == 0)
				plan_windows(r, it->part);
			pthread_mutex_unlock(&r->lock);
			break;
		}
		r->pages++;
		pthread_mutex_unlock(&r->lock);

		rc = hp_aws_json(r->a, HP_SVC_SAGEMAKER, "ListClusterNodes", req, &res);
		if (rc) {
			pthread_mutex_lock(&r->lock);
			failed_call(r, p, &res);
			if (it->single)
				--p->probes_left;
			pthread_mutex_unlock(&r->lock);
			hp_aws_result_release(&res);
			break;
		}
		items = cJSON_GetObjectItemCaseSensitive(res.json, "ClusterNodeSummaries");
		keep = cJSON_CreateArray();
		while (cJSON_IsArray(items) && (n = cJSON_DetachItemFromArray(items, 0)) != NULL) {
			const cJSON *lt = cJSON_GetObjectItemCaseSensitive(n, "LaunchTime");

			last = cJSON_IsNumber(lt) ? lt->valuedouble : NAN;
			if (cJSON_IsObject(n) && part_has_group(p, hp_json_str(n, "InstanceGroupName"))) {
				cJSON_AddItemToArray(keep, n);
				kept++;
			} else {
				cJSON_Delete(n);
			}
		}
		tok = hp_json_str(res.json, "NextToken");
		here++;
		pthread_mutex_lock(&r->lock);
		while ((n = cJSON_DetachItemFromArray(keep, 0)) != NULL)
			cJSON_AddItemToArray(r->nodes, n);
		r->count += kept;
		hp_collect_progress("ListClusterNodes", r->pages, r->count, 0);
		if (it->single) {
			if (it->desc) {
				p->t_desc = last;
				p->more_desc = tok && *tok;
			} else {
				p->t_asc = last;
				p->more_asc = tok && *tok;
			}
			if (--p->probes_left == 0)
				plan_windows(r, it->part);
		}
		want_split = r->queued < r->workers;
		pthread_mutex_unlock(&r->lock);
		cJSON_Delete(keep);
		if (it->single || !tok || !*tok) {
			hp_aws_result_release(&res);
			break;
		}
		if (it->ranged && want_split && here >= NL_SPLIT_PAGES && isfinite(last) &&
		    it->before - last > 4 * NL_EDGE_S && last - NL_EDGE_S > it->after) {
			/* The rest of the window, [last, before), in two; this thread keeps the first. */
			double mid = (last + it->before) / 2;

			pthread_mutex_lock(&r->lock);
			push(r, it->part, 0, 0, 1, mid - NL_EDGE_S, it->before);
			pthread_mutex_unlock(&r->lock);
			it->after = last - NL_EDGE_S;
			it->before = mid + NL_EDGE_S;
			cJSON_Delete(req);
			req = request(r, p, it);
			here = 0;
		} else {
			cJSON_DeleteItemFromObjectCaseSensitive(req, "NextToken");
			cJSON_AddStringToObject(req, "NextToken", tok);
		}
		hp_aws_result_release(&res);
	}
	cJSON_Delete(req);
}

static void *work(void *arg)
{
	struct nl_run *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct nl_item *it;

		while (!r->head && r->busy)
			pthread_cond_wait(&r->changed, &r->lock);
		if (!r->head)
			break;
		it = r->head;
		r->head = it->next;
		if (!r->head)
			r->tail = NULL;
		r->queued--;
		r->busy++;
		pthread_mutex_unlock(&r->lock);
		run_item(r, it);
		free(it);
		pthread_mutex_lock(&r->lock);
		r->busy--;
		pthread_cond_broadcast(&r->changed);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/*
 * Drops every node of the array whose InstanceId an earlier node has
 * (the first is kept); returns how many were dropped. Nodes without an
 * id are kept. Partitions overlap by design (windows reach past their
 * edges), so the ids read twice are not reported here.
 */
size_t nodes_dedup_by_id(cJSON *nodes)
{
	size_t before = (size_t)cJSON_GetArraySize(nodes);
	int capped;

	cJSON_Delete(hp_snap_nodes_dedup(nodes, 0, &capped));
	return before - (size_t)cJSON_GetArraySize(nodes);
}

static int by_launch(const void *pa, const void *pb)
{
	const cJSON *a = *(const cJSON *const *)pa, *b = *(const cJSON *const *)pb;
	double x = hp_json_num(a, "LaunchTime", 0), y = hp_json_num(b, "LaunchTime", 0);
	const char *ia = hp_json_str(a, "InstanceId"), *ib = hp_json_str(b, "InstanceId");

	if (x != y)
		return x < y ? -1 : 1;
	return strcmp(ia ? ia : "", ib ? ib : "");
}

/* Sorts the array in place by LaunchTime, then InstanceId. */
static void sort_nodes(cJSON *nodes)
{
	size_t n = (size_t)cJSON_GetArraySize(nodes), i = 0;
	cJSON **v, *it;

	if (n < 2)
		return;
	v = xmalloc(n * sizeof(*v));
	for (it = nodes->child; it; it = it->next)
		v[i++] = it;
	qsort(v, n, sizeof(*v), by_launch);
	for (i = 0; i < n; i++) {
		v[i]->prev = i ? v[i - 1] : v[n - 1];
		v[i]->next = i + 1 < n ? v[i + 1] : NULL;
	}
	nodes->child = v[0];
	free(v);
}

/*
 * The partitions of the cluster's groups; 0 when the list cannot be
 * partitioned (a group without a name or CurrentCount).
 */
static size_t make_parts(const cJSON *cluster, struct nl_part **out, double *total)
{
	const cJSON *groups = hp_json_arr(cluster, "InstanceGroups"), *g, *h;
	struct nl_part *v;
	size_t n = 0, alloc = (size_t)cJSON_GetArraySize(groups);

	*total = 0;
	cJSON_ArrayForEach(g, groups) {
		const char *name = hp_json_str(g, "InstanceGroupName");

		if (!name || !*name || !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(g, "CurrentCount")))
			return 0;
		*total += hp_json_num(g, "CurrentCount", 0);
	}
	if (!alloc)
		return 0;
	v = xcalloc(alloc, sizeof(*v));
	cJSON_ArrayForEach(g, groups) {
		const char *name = hp_json_str(g, "InstanceGroupName");
		int root = 1, before = 1;

		/*
		 * A group is its own filter unless another group's name is in its
		 * name (that filter returns it), or an earlier group has its name.
		 */
		cJSON_ArrayForEach(h, groups) {
			const char *other = hp_json_str(h, "InstanceGroupName");

			if (h == g)
				before = 0;
			else if (strcmp(other, name) ? strstr(name, other) != NULL : before)
				root = 0;
		}
		if (!root)
			continue;
		v[n].filter = name;
		v[n].groups = xcalloc(alloc, sizeof(*v[n].groups));
		cJSON_ArrayForEach(h, groups) {
			const char *other = hp_json_str(h, "InstanceGroupName");
			if (strstr(other, name) && !part_has_group(&v[n], other)) {
				v[n].groups[v[n].ngroups++] = other;
				v[n].expected += hp_json_num(h, "CurrentCount", 0);
			}
		}
		v[n].t_asc = v[n].t_desc = NAN;
		n++;
	}
	*out = v;
	return n;
}

int hp_collect_node_partitions(struct hp_aws *a, struct hp_snapshot *s, const cJSON *cluster,
			       const char *arn, int max_pages)
{
	struct nl_run r;
	pthread_t tid[NL_WORKERS];
	double total;
	size_t i, started = 0;
	cJSON *partial;

	memset(&r, 0, sizeof(r));
	r.nparts = make_parts(cluster, &r.parts, &total);
	if (!r.nparts)
		return -1;
	if (total <= 100) {
		/* One page holds it: the single chain is one request. */
		for (i = 0; i < r.nparts; i++)
			free(r.parts[i].groups);
		free(r.parts);
		return -1;
	}
	r.a = a;
	r.arn = arn;
	r.s = s;
	r.max_pages = max_pages;
	r.nodes = cJSON_CreateArray();
	r.workers = a->concurrency == 1 ? 1 : NL_WORKERS;
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.changed, NULL);
	for (i = 0; i < r.nparts; i++) {
		if (r.parts[i].expected <= 100.0 * NL_SMALL_PAGES) {
			push(&r, i, 0, 0, 0, 0, 0);
		} else {
			r.parts[i].probes_left = 2;
			push(&r, i, 0, 1, 0, 0, 0);
			push(&r, i, 1, 1, 0, 0, 0);
		}
	}
	for (i = 1; i < r.workers; i++) {
		if (pthread_create(&tid[i], NULL, work, &r))
			break;
		started = i;
	}
	work(&r);
	for (i = 1; i <= started; i++)
		pthread_join(tid[i], NULL);
	pthread_cond_destroy(&r.changed);
	pthread_mutex_destroy(&r.lock);

	partial = cJSON_CreateArray();
	for (i = 0; i < r.nparts; i++) {
		size_t j;

		if (r.parts[i].failed || r.parts[i].cut)
			for (j = 0; j < r.parts[i].ngroups; j++)
				if (!hp_json_has_str(partial, r.parts[i].groups[j]))
					cJSON_AddItemToArray(partial,
							     cJSON_CreateString(r.parts[i].groups[j]));
		free(r.parts[i].groups);
	}
	free(r.parts);
	if (r.stop || (cJSON_GetArraySize(partial) && !cJSON_GetArraySize(r.nodes) &&
		       !r.cut)) {
		/* Refused, or nothing read at all: no list, as for a failed chain. */
		cJSON_Delete(r.nodes);
		cJSON_Delete(partial);
		return 0;
	}
	nodes_dedup_by_id(r.nodes);
	sort_nodes(r.nodes);
	hp_snapshot_set(s, "nodes", r.nodes);
	hp_snapshot_set(s, "nodes_truncated", cJSON_CreateBool(r.cut));
	if (r.cut)
		hp_snapshot_set(s, "nodes_page_cap", cJSON_CreateNumber(max_pages));
	if (cJSON_GetArraySize(partial))
		hp_snapshot_set(s, "nodes_partial", partial);
	else
		cJSON_Delete(partial);
	hp_snapshot_set(s, "nodes_pages", cJSON_CreateNumber((double)r.pages));
	return 0;
}
