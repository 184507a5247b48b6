/*
 * Two runs compared (`hpnode diff`, `hpnode triage --baseline`): each side
 * is its FAIL and WARN findings by key (include/hp/check.h; a finding
 * about many nodes is one item per node's key) and its inventory (nodes
 * with their group and status, instance groups with their counts). The
 * comparison says which findings are new, resolved or persisting (and
 * whose priority changed), and which nodes were added, removed or
 * replaced (a node gone and a node come in the same instance group: the
 * replacement HyperPod makes) or changed status. Pure: the sides are
 * filled from findings, a saved JSON report or a snapshot by the caller;
 * rendering sanitises every string.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/text.h"
#include "hp/json.h"
#include "hp/report.h"

#define C_RED "\033[31m"
#define C_GREEN "\033[32m"
#define C_YELLOW "\033[33m"
#define C_STRIKE "\033[9m"
#define C_BOLD "\033[1m"
#define C_RESET "\033[0m"
#define MAX_FIELD ((size_t)2048)

static const char *const prio_names[] = { "P0", "P1", "P2" };

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void hp_diff_side_init(struct hp_diff_side *s, const char *file, const char *kind)
{
	memset(s, 0, sizeof(*s));
	s->file = dup_or_null(file);
	s->kind = kind;
}

void hp_diff_side_release(struct hp_diff_side *s)
{
	size_t i;

	for (i = 0; i < s->items.n; i++) {
		free(s->items.v[i].key);
		free(s->items.v[i].check);
		free(s->items.v[i].message);
		free(s->items.v[i].pointer);
		free(s->items.v[i].node);
	}
	for (i = 0; i < s->nodes.n; i++) {
		free(s->nodes.v[i].id);
		free(s->nodes.v[i].group);
		free(s->nodes.v[i].status);
	}
	for (i = 0; i < s->groups.n; i++)
		free(s->groups.v[i].name);
	hp_array_release(&s->items);
	hp_array_release(&s->nodes);
	hp_array_release(&s->groups);
	free(s->file);
	free(s->cluster);
	free(s->collected_at);
	memset(s, 0, sizeof(*s));
}

static void add_item(struct hp_diff_side *s, const char *key, const char *check, enum hp_tag tag,
		     enum hp_prio prio, const char *message, const char *pointer, const char *node)
{
	struct hp_diff_item *it = hp_array_push(&s->items);

	it->key = xstrdup(key);
	it->check = xstrdup(check ? check : "finding");
	it->tag = tag;
	it->prio = prio;
	it->message = xstrdup(message ? message : "");
	it->pointer = dup_or_null(pointer);
	it->node = dup_or_null(node);
}

void hp_diff_side_findings(struct hp_diff_side *s, const struct hp_findings *f)
{
	struct hp_buf key = HP_BUF_INIT(HP_MAX_LINE), ptr = HP_BUF_INIT(HP_MAX_LINE);
	size_t i, k;

	for (i = 0; i < f->n; i++) {
		const struct hp_finding *x = &f->v[i];
		const char *check = x->check ? x->check->id : NULL;
		enum hp_prio p = hp_report_issue_prio(x) ? x->prio : HP_PNONE;

		if (!hp_finding_is_problem(x))
			continue;
		hp_buf_reset(&ptr);
		hp_report_pointer(&ptr, x);
		if (hp_finding_per_node(x)) {
			for (k = 0; k < x->nnodes; k++) {
				hp_finding_node_key(x, k, &key);
				add_item(s, key.buf, check, x->tag, p, x->message, ptr.buf, x->nodes[k]);
			}
		} else {
			hp_finding_key(x, &key);
			add_item(s, key.buf, check, x->tag, p, x->message, ptr.buf, x->node);
		}
	}
	hp_buf_release(&key);
	hp_buf_release(&ptr);
}

static enum hp_tag tag_of(const char *s)
{
	if (!s)
		return HP_TAG_INFO;
	if (!strcmp(s, "FAIL"))
		return HP_TAG_FAIL;
	if (!strcmp(s, "WARN"))
		return HP_TAG_WARN;
	if (!strcmp(s, "PASS"))
		return HP_TAG_PASS;
	if (!strcmp(s, "SKIP"))
		return HP_TAG_SKIP;
	return HP_TAG_INFO;
}

static enum hp_prio prio_of(const char *s)
{
	if (s && s[0] == 'P' && s[1] >= '0' && s[1] <= '2' && !s[2])
		return (enum hp_prio)(s[1] - '0');
	return HP_PNONE;
}

/* The pointer of a saved finding, made again from its check and section. */
static void saved_pointer(const cJSON *x, struct hp_buf *out)
{
	struct hp_finding tmp;
	const char *section = hp_json_str(x, "section");
	const char *id = hp_json_str(x, "check");

	memset(&tmp, 0, sizeof(tmp));
	tmp.check = id ? hp_check_find(id) : NULL;
	tmp.section = (char *)(section ? section : "");
	hp_buf_reset(out);
	if (tmp.check && *tmp.section)
		hp_report_pointer(out, &tmp);
}

static int inventory_json(struct hp_diff_side *s, const cJSON *inv)
{
	const cJSON *x;

	if (!cJSON_IsObject(inv))
		return 0;
	cJSON_ArrayForEach(x, hp_json_get(inv, "nodes")) {
		struct hp_diff_node *n;
		const char *id = hp_json_str(x, "id");

		if (!id)
			continue;
		n = hp_array_push(&s->nodes);
		n->id = xstrdup(id);
		n->group = xstrdup(hp_json_str(x, "group") ? hp_json_str(x, "group") : "?");
		n->status = xstrdup(hp_json_str(x, "status") ? hp_json_str(x, "status") : "?");
	}
	cJSON_ArrayForEach(x, hp_json_get(inv, "groups")) {
		struct hp_diff_group *g;
		const char *name = hp_json_str(x, "name");

		if (!name)
			continue;
		g = hp_array_push(&s->groups);
		g->name = xstrdup(name);
		g->current = (long)hp_json_num(x, "current", -1);
		g->target = (long)hp_json_num(x, "target", -1);
	}
	s->has_inventory = 1;
	return 1;
}

int hp_diff_side_report(struct hp_diff_side *s, const cJSON *doc, struct hp_error *e)
{
	const cJSON *x, *findings = hp_json_get(doc, "findings");
	struct hp_buf ptr = HP_BUF_INIT(HP_MAX_LINE);
	const char *when = hp_json_str(doc, "run.started_at");

	if (!cJSON_IsArray(findings))
		return hp_error_set(e, HP_ERR_PARSE, "%s: not an hpnode JSON report (no findings)",
				    s->file ? s->file : "?");
	free(s->cluster);
	s->cluster = dup_or_null(hp_json_str(doc, "cluster"));
	free(s->collected_at);
	s->collected_at = dup_or_null(hp_json_str(doc, "run.replay.collected_at") ?
					      hp_json_str(doc, "run.replay.collected_at") : when);
	cJSON_ArrayForEach(x, findings) {
		enum hp_tag tag = tag_of(hp_json_str(x, "tag"));
		const cJSON *keys = hp_json_get(x, "keys"), *nodes = hp_json_get(x, "nodes"), *k;
		int per_node = cJSON_GetArraySize(keys) > 1 &&
			       cJSON_GetArraySize(keys) == cJSON_GetArraySize(nodes);
		int i = 0;

		if (tag != HP_TAG_FAIL && tag != HP_TAG_WARN)
			continue;
		if (!cJSON_IsArray(keys) || !cJSON_GetArraySize(keys)) {
			hp_buf_release(&ptr);
			return hp_error_set(e, HP_ERR_PARSE, "%s: its findings have no keys (a report of "
					    "an hpnode without finding keys); compare snapshots instead",
					    s->file ? s->file : "?");
		}
		saved_pointer(x, &ptr);
		cJSON_ArrayForEach(k, keys) {
			const cJSON *node = per_node ? cJSON_GetArrayItem(nodes, i) : NULL;

			if (cJSON_IsString(k))
				add_item(s, k->valuestring, hp_json_str(x, "check"), tag,
					 prio_of(hp_json_str(x, "priority")), hp_json_str(x, "message"),
					 ptr.len ? ptr.buf : NULL,
					 cJSON_IsString(node) ? node->valuestring : hp_json_str(x, "node"));
			i++;
		}
	}
	hp_buf_release(&ptr);
	inventory_json(s, hp_json_get(doc, "inventory"));
	return 0;
}

/* A value of the snapshot as the report may print it: cleaned, at most 256 bytes. */
static void add_clean(cJSON *o, const char *key, const char *v)
{
	struct hp_buf b = HP_BUF_INIT(1024);

	hp_text_add(HP_TEXT_REPORT, v ? v : "?", &b, 256);
	cJSON_AddStringToObject(o, key, b.buf);
	hp_buf_release(&b);
}

cJSON *hp_diff_inventory(const struct hp_snapshot *snap)
{
	const cJSON *list = hp_snapshot_get(snap, "nodes"), *x;
	const cJSON *groups = hp_json_get(hp_snapshot_get(snap, "cluster"), "InstanceGroups");
	cJSON *inv, *nodes, *gs;

	if (!cJSON_IsArray(list) && !cJSON_IsArray(groups))
		return NULL;
	inv = cJSON_CreateObject();
	nodes = cJSON_AddArrayToObject(inv, "nodes");
	gs = cJSON_AddArrayToObject(inv, "groups");
	cJSON_ArrayForEach(x, list) {
		cJSON *n;
		const char *id = hp_json_str(x, "InstanceId");

		if (!id)
			continue;
		/* Ids and names come from the cluster (or a snapshot file): cleaned as any text. */
		n = cJSON_CreateObject();
		add_clean(n, "id", id);
		add_clean(n, "group", hp_json_str(x, "InstanceGroupName"));
		add_clean(n, "status", hp_json_str(x, "InstanceStatus.Status"));
		cJSON_AddItemToArray(nodes, n);
	}
	cJSON_ArrayForEach(x, groups) {
		cJSON *g;
		const char *name = hp_json_str(x, "InstanceGroupName");

		if (!name)
			continue;
		g = cJSON_CreateObject();
		add_clean(g, "name", name);
		cJSON_AddNumberToObject(g, "current", hp_json_num(x, "CurrentCount", -1));
		cJSON_AddNumberToObject(g, "target", hp_json_num(x, "TargetCount", -1));
		cJSON_AddItemToArray(gs, g);
	}
	return inv;
}

void hp_diff_side_snapshot(struct hp_diff_side *s, const struct hp_snapshot *snap)
{
	cJSON *inv = hp_diff_inventory(snap);
	char when[32];
	double ms = hp_json_num(hp_snapshot_get(snap, "meta"), "collected_at_ms", 0);

	free(s->cluster);
	s->cluster = *hp_snap_cluster_name(snap) ? xstrdup(hp_snap_cluster_name(snap)) : NULL;
	if (ms > 0) {
		hp_report_iso8601((int64_t)ms, when, sizeof(when));
		free(s->collected_at);
		s->collected_at = xstrdup(when);
	}
	if (inv)
		inventory_json(s, inv);
	cJSON_Delete(inv);
}

/* ---------------------------------------------------------------- the comparison */

static int by_key(const void *a, const void *b)
{
	const struct hp_diff_item *x = a, *y = b;

	return strcmp(x->key, y->key);
}

static int by_id(const void *a, const void *b)
{
	const struct hp_diff_node *const *x = a, *const *y = b;

	return strcmp((*x)->id, (*y)->id);
}

/* The side's items sorted by key, a repeated key once. */
static void sort_items(struct hp_diff_side *s)
{
	size_t i, n = 0;

	if (s->items.n)
		qsort(s->items.v, s->items.n, sizeof(*s->items.v), by_key);
	for (i = 0; i < s->items.n; i++) {
		if (n && !strcmp(s->items.v[n - 1].key, s->items.v[i].key)) {
			free(s->items.v[i].key);
			free(s->items.v[i].check);
			free(s->items.v[i].message);
			free(s->items.v[i].pointer);
			free(s->items.v[i].node);
			continue;
		}
		s->items.v[n++] = s->items.v[i];
	}
	s->items.n = n;
}

static struct hp_diff_node **sorted_nodes(const struct hp_diff_side *s)
{
	struct hp_diff_node **v = xcalloc(s->nodes.n + 1, sizeof(*v));
	size_t i;

	for (i = 0; i < s->nodes.n; i++)
		v[i] = &s->nodes.v[i];
	if (s->nodes.n)
		qsort(v, s->nodes.n, sizeof(*v), by_id);
	return v;
}

static const struct hp_diff_group *group_in(const struct hp_diff_side *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->groups.n; i++)
		if (!strcmp(s->groups.v[i].name, name))
			return &s->groups.v[i];
	return NULL;
}

static void compare_inventory(struct hp_diff *d)
{
	struct hp_diff_side *o = d->old_side, *n = d->new_side;
	struct hp_diff_node **a, **b;
	size_t i = 0, k = 0, r, j;

	if (!o->has_inventory || !n->has_inventory)
		return;
	a = sorted_nodes(o);
	b = sorted_nodes(n);
	while (i < o->nodes.n || k < n->nodes.n) {
		int c = i == o->nodes.n ? 1 : k == n->nodes.n ? -1 : strcmp(a[i]->id, b[k]->id);

		if (c < 0) {
			hp_array_append(&d->removed, a[i++]);
		} else if (c > 0) {
			hp_array_append(&d->added, b[k++]);
		} else {
			if (strcmp(a[i]->status, b[k]->status)) {
				struct hp_diff_change *ch = hp_array_push(&d->status);

				ch->old_node = a[i];
				ch->new_node = b[k];
			}
			i++;
			k++;
		}
	}
	/* A node gone and a node come in one instance group: a replacement. */
	for (r = 0; r < d->removed.n; r++) {
		for (j = 0; j < d->added.n; j++) {
			if (d->added.v[j] && d->removed.v[r] &&
			    !strcmp(d->added.v[j]->group, d->removed.v[r]->group)) {
				struct hp_diff_change *ch = hp_array_push(&d->replaced);

				ch->old_node = d->removed.v[r];
				ch->new_node = d->added.v[j];
				d->removed.v[r] = NULL;
				d->added.v[j] = NULL;
				break;
			}
		}
	}
	for (i = k = 0; i < d->removed.n; i++)
		if (d->removed.v[i])
			d->removed.v[k++] = d->removed.v[i];
	d->removed.n = k;
	for (i = k = 0; i < d->added.n; i++)
		if (d->added.v[i])
			d->added.v[k++] = d->added.v[i];
	d->added.n = k;
	/* Instance groups whose count or target changed, or that came or went. */
	for (i = 0; i < o->groups.n; i++) {
		const struct hp_diff_group *g = &o->groups.v[i], *h = group_in(n, g->name);

		if (!h || h->current != g->current || h->target != g->target) {
			struct hp_diff_gchange *gc = hp_array_push(&d->groups);

			gc->old_group = g;
			gc->new_group = h;
		}
	}
	for (i = 0; i < n->groups.n; i++) {
		if (!group_in(o, n->groups.v[i].name)) {
			struct hp_diff_gchange *gc = hp_array_push(&d->groups);

			gc->old_group = NULL;
			gc->new_group = &n->groups.v[i];
		}
	}
	free(a);
	free(b);
}

void hp_diff_compare(struct hp_diff *d, struct hp_diff_side *old_side, struct hp_diff_side *new_side)
{
	size_t i = 0, k = 0;

	memset(d, 0, sizeof(*d));
	d->old_side = old_side;
	d->new_side = new_side;
	sort_items(old_side);
	sort_items(new_side);
	while (i < old_side->items.n || k < new_side->items.n) {
		const struct hp_diff_item *a = i < old_side->items.n ? &old_side->items.v[i] : NULL;
		const struct hp_diff_item *b = k < new_side->items.n ? &new_side->items.v[k] : NULL;
		int c = !a ? 1 : !b ? -1 : strcmp(a->key, b->key);

		if (c < 0) {
			hp_array_append(&d->resolved, a);
			i++;
		} else if (c > 0) {
			hp_array_append(&d->fresh, b);
			k++;
		} else {
			struct hp_diff_pair *p = hp_array_push(&d->persisting);

			p->old_item = a;
			p->new_item = b;
			d->prio_changes += a->prio != b->prio || a->tag != b->tag;
			i++;
			k++;
		}
	}
	d->worst_new = HP_PNONE;
	for (i = 0; i < d->fresh.n; i++)
		if (d->fresh.v[i]->prio < d->worst_new)
			d->worst_new = d->fresh.v[i]->prio;
	compare_inventory(d);
}

void hp_diff_release(struct hp_diff *d)
{
	hp_array_release(&d->fresh);
	hp_array_release(&d->resolved);
	hp_array_release(&d->persisting);
	hp_array_release(&d->added);
	hp_array_release(&d->removed);
	hp_array_release(&d->replaced);
	hp_array_release(&d->status);
	hp_array_release(&d->groups);
	memset(d, 0, sizeof(*d));
}

const struct hp_diff_item *hp_diff_find(const struct hp_diff_side *s, const char *key)
{
	size_t lo = 0, hi = s->items.n;

	/* Sorted by hp_diff_compare. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(key, s->items.v[mid].key);

		if (!c)
			return &s->items.v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* ---------------------------------------------------------------- rendering */

static void clean(struct hp_buf *out, const char *s, const char *fallback)
{
	hp_text_add(HP_TEXT_REPORT, s ? s : fallback, out, MAX_FIELD);
}

static void put_tag(struct hp_buf *out, const struct hp_diff_item *it)
{
	hp_buf_printf(out, "[%s%s%s]", hp_report_tag_name(it->tag),
		      it->prio < HP_PNONE ? " " : "", it->prio < HP_PNONE ? prio_names[it->prio] : "");
}

static void put_item(struct hp_buf *out, const struct hp_diff_item *it, int color,
		     const char *code, const struct hp_diff_item *was)
{
	hp_buf_puts(out, "    ");
	if (color && code)
		hp_buf_puts(out, code);
	put_tag(out, it);
	hp_buf_putc(out, ' ');
	clean(out, it->message, "");
	if (it->pointer)
		clean(out, it->pointer, "");
	if (color && code)
		hp_buf_puts(out, C_RESET);
	if (was && (was->prio != it->prio || was->tag != it->tag)) {
		hp_buf_puts(out, "  (was ");
		put_tag(out, was);
		hp_buf_putc(out, ')');
	}
	hp_buf_puts(out, "\n      key ");
	clean(out, it->key, "");
	hp_buf_putc(out, '\n');
}

static void put_title(struct hp_buf *out, int color, const char *title, size_t n)
{
	hp_buf_puts(out, "\n  ");
	if (color)
		hp_buf_puts(out, C_BOLD);
	hp_buf_printf(out, "%s (%zu)", title, n);
	if (color)
		hp_buf_puts(out, C_RESET);
	hp_buf_puts(out, n ? ":\n" : "\n");
}

static void put_side(struct hp_buf *out, const char *label, const struct hp_diff_side *s)
{
	hp_buf_printf(out, "  %s: ", label);
	clean(out, s->file, "?");
	hp_buf_printf(out, " (%s", s->kind ? s->kind : "?");
	if (s->cluster) {
		hp_buf_puts(out, ", cluster ");
		clean(out, s->cluster, "");
	}
	if (s->collected_at) {
		hp_buf_puts(out, ", ");
		clean(out, s->collected_at, "");
	}
	hp_buf_puts(out, ")\n");
}

static void put_node(struct hp_buf *out, const struct hp_diff_node *n)
{
	clean(out, n->id, "?");
	hp_buf_puts(out, " (group ");
	clean(out, n->group, "?");
	hp_buf_puts(out, ", ");
	clean(out, n->status, "?");
	hp_buf_putc(out, ')');
}

static void put_count(struct hp_buf *out, const struct hp_diff_group *g)
{
	if (!g) {
		hp_buf_puts(out, "absent");
		return;
	}
	if (g->current >= 0)
		hp_buf_printf(out, "%ld", g->current);
	else
		hp_buf_puts(out, "?");
	if (g->target >= 0)
		hp_buf_printf(out, " of %ld", g->target);
}

void hp_diff_text_inventory(const struct hp_diff *d, int color, struct hp_buf *out)
{
	size_t i, n = d->added.n + d->removed.n + d->replaced.n + d->status.n + d->groups.n;

	if (!d->old_side->has_inventory || !d->new_side->has_inventory) {
		hp_buf_puts(out, "\n  Inventory: not compared (");
		clean(out, !d->old_side->has_inventory ? d->old_side->file : d->new_side->file, "?");
		hp_buf_puts(out, " lists no nodes)\n");
		return;
	}
	put_title(out, color, "Inventory changes", n);
	for (i = 0; i < d->replaced.n; i++) {
		hp_buf_puts(out, "    replaced ");
		put_node(out, d->replaced.v[i].old_node);
		hp_buf_puts(out, " \xe2\x86\x92 ");
		put_node(out, d->replaced.v[i].new_node);
		hp_buf_putc(out, '\n');
	}
	for (i = 0; i < d->added.n; i++) {
		hp_buf_puts(out, "    added    ");
		put_node(out, d->added.v[i]);
		hp_buf_putc(out, '\n');
	}
	for (i = 0; i < d->removed.n; i++) {
		hp_buf_puts(out, "    removed  ");
		put_node(out, d->removed.v[i]);
		hp_buf_putc(out, '\n');
	}
	for (i = 0; i < d->status.n; i++) {
		hp_buf_puts(out, "    status   ");
		clean(out, d->status.v[i].old_node->id, "?");
		hp_buf_puts(out, " (group ");
		clean(out, d->status.v[i].old_node->group, "?");
		hp_buf_puts(out, "): ");
		clean(out, d->status.v[i].old_node->status, "?");
		hp_buf_puts(out, " \xe2\x86\x92 ");
		clean(out, d->status.v[i].new_node->status, "?");
		hp_buf_putc(out, '\n');
	}
	for (i = 0; i < d->groups.n; i++) {
		const struct hp_diff_gchange *g = &d->groups.v[i];

		hp_buf_puts(out, "    group    ");
		clean(out, g->old_group ? g->old_group->name : g->new_group->name, "?");
		hp_buf_puts(out, ": ");
		put_count(out, g->old_group);
		hp_buf_puts(out, " \xe2\x86\x92 ");
		put_count(out, g->new_group);
		hp_buf_puts(out, " nodes\n");
	}
}

void hp_diff_text(const struct hp_diff *d, int color, struct hp_buf *out)
{
	size_t i;

	hp_buf_puts(out, "hpnode diff \xe2\x80\x94 what changed between two runs\n");
	put_side(out, "OLD", d->old_side);
	put_side(out, "NEW", d->new_side);
	put_title(out, color, "New findings", d->fresh.n);
	for (i = 0; i < d->fresh.n; i++)
		put_item(out, d->fresh.v[i], color, d->fresh.v[i]->tag == HP_TAG_FAIL ? C_RED : C_YELLOW,
			 NULL);
	/* Struck through in colour only: without colour the text is all there. */
	put_title(out, color, "Resolved findings", d->resolved.n);
	for (i = 0; i < d->resolved.n; i++)
		put_item(out, d->resolved.v[i], color, C_GREEN C_STRIKE, NULL);
	put_title(out, color, "Persisting findings", d->persisting.n);
	for (i = 0; i < d->persisting.n; i++)
		put_item(out, d->persisting.v[i].new_item, color, NULL, d->persisting.v[i].old_item);
	hp_diff_text_inventory(d, color, out);
	hp_buf_printf(out, "\n  Summary: %zu new, %zu resolved, %zu persisting (%zu with a changed "
		      "priority)", d->fresh.n, d->resolved.n, d->persisting.n, d->prio_changes);
	if (d->old_side->has_inventory && d->new_side->has_inventory)
		hp_buf_printf(out, "; nodes: %zu replaced, %zu added, %zu removed, %zu changed status",
			      d->replaced.n, d->added.n, d->removed.n, d->status.n);
	hp_buf_puts(out, "\n");
}

static void json_str(cJSON *o, const char *name, const char *s)
{
	struct hp_buf b = HP_BUF_INIT(MAX_FIELD + 8);

	if (!s) {
		cJSON_AddNullToObject(o, name);
		return;
	}
	hp_text_add(HP_TEXT_REPORT, s, &b, MAX_FIELD);
	cJSON_AddStringToObject(o, name, b.buf);
	hp_buf_release(&b);
}

static cJSON *json_item(const struct hp_diff_item *it, const struct hp_diff_item *was)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "key", it->key);
	json_str(o, "check", it->check);
	json_str(o, "tag", hp_report_tag_name(it->tag));
	json_str(o, "priority", it->prio < HP_PNONE ? prio_names[it->prio] : NULL);
	json_str(o, "message", it->message);
	json_str(o, "node", it->node);
	if (was) {
		json_str(o, "old_tag", hp_report_tag_name(was->tag));
		json_str(o, "old_priority", was->prio < HP_PNONE ? prio_names[was->prio] : NULL);
	}
	return o;
}

static cJSON *json_node(const struct hp_diff_node *n)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "id", n->id);
	json_str(o, "group", n->group);
	json_str(o, "status", n->status);
	return o;
}

static cJSON *json_side(const struct hp_diff_side *s)
{
	cJSON *o = cJSON_CreateObject();

	json_str(o, "file", s->file);
	json_str(o, "kind", s->kind);
	json_str(o, "cluster", s->cluster);
	json_str(o, "collected_at", s->collected_at);
	return o;
}

static void json_count(cJSON *o, const char *name, const struct hp_diff_group *g, int target)
{
	long v = !g ? -1 : target ? g->target : g->current;

	if (v >= 0)
		cJSON_AddNumberToObject(o, name, (double)v);
	else
		cJSON_AddNullToObject(o, name);
}

static cJSON *json_inventory(const struct hp_diff *d)
{
	cJSON *inv = cJSON_CreateObject(), *a;
	size_t i;

	cJSON_AddBoolToObject(inv, "compared", d->old_side->has_inventory && d->new_side->has_inventory);
	a = cJSON_AddArrayToObject(inv, "replaced");
	for (i = 0; i < d->replaced.n; i++) {
		cJSON *r = cJSON_CreateObject();

		cJSON_AddItemToObject(r, "old", json_node(d->replaced.v[i].old_node));
		cJSON_AddItemToObject(r, "new", json_node(d->replaced.v[i].new_node));
		cJSON_AddItemToArray(a, r);
	}
	a = cJSON_AddArrayToObject(inv, "added");
	for (i = 0; i < d->added.n; i++)
		cJSON_AddItemToArray(a, json_node(d->added.v[i]));
	a = cJSON_AddArrayToObject(inv, "removed");
	for (i = 0; i < d->removed.n; i++)
		cJSON_AddItemToArray(a, json_node(d->removed.v[i]));
	a = cJSON_AddArrayToObject(inv, "status_changes");
	for (i = 0; i < d->status.n; i++) {
		cJSON *r = cJSON_CreateObject();

		json_str(r, "id", d->status.v[i].old_node->id);
		json_str(r, "group", d->status.v[i].old_node->group);
		json_str(r, "old_status", d->status.v[i].old_node->status);
		json_str(r, "new_status", d->status.v[i].new_node->status);
		cJSON_AddItemToArray(a, r);
	}
	a = cJSON_AddArrayToObject(inv, "groups");
	for (i = 0; i < d->groups.n; i++) {
		const struct hp_diff_gchange *g = &d->groups.v[i];
		cJSON *r = cJSON_CreateObject();

		json_str(r, "name", g->old_group ? g->old_group->name : g->new_group->name);
		json_count(r, "old_count", g->old_group, 0);
		json_count(r, "new_count", g->new_group, 0);
		json_count(r, "old_target", g->old_group, 1);
		json_count(r, "new_target", g->new_group, 1);
		cJSON_AddItemToArray(a, r);
	}
	return inv;
}

void hp_diff_json(const struct hp_diff *d, struct hp_buf *out)
{
	cJSON *doc = cJSON_CreateObject(), *a, *sum;
	char *text;
	size_t i;

	cJSON_AddStringToObject(doc, "schema", "hpnode.diff/1");
	cJSON_AddStringToObject(doc, "tool", "hpnode");
	cJSON_AddItemToObject(doc, "old", json_side(d->old_side));
	cJSON_AddItemToObject(doc, "new", json_side(d->new_side));
	a = cJSON_AddArrayToObject(doc, "new_findings");
	for (i = 0; i < d->fresh.n; i++)
		cJSON_AddItemToArray(a, json_item(d->fresh.v[i], NULL));
	a = cJSON_AddArrayToObject(doc, "resolved");
	for (i = 0; i < d->resolved.n; i++)
		cJSON_AddItemToArray(a, json_item(d->resolved.v[i], NULL));
	a = cJSON_AddArrayToObject(doc, "persisting");
	for (i = 0; i < d->persisting.n; i++)
		cJSON_AddItemToArray(a, json_item(d->persisting.v[i].new_item,
						  d->persisting.v[i].old_item));
	cJSON_AddItemToObject(doc, "inventory", json_inventory(d));
	sum = cJSON_AddObjectToObject(doc, "summary");
	cJSON_AddNumberToObject(sum, "new", (double)d->fresh.n);
	cJSON_AddNumberToObject(sum, "resolved", (double)d->resolved.n);
	cJSON_AddNumberToObject(sum, "persisting", (double)d->persisting.n);
	cJSON_AddNumberToObject(sum, "priority_changes", (double)d->prio_changes);
	if (d->worst_new < HP_PNONE)
		cJSON_AddStringToObject(sum, "worst_new", prio_names[d->worst_new]);
	else
		cJSON_AddNullToObject(sum, "worst_new");
	text = cJSON_PrintUnformatted(doc);
	if (!text)
		hp_die("out of memory");
	hp_buf_puts(out, text);
	hp_buf_putc(out, '\n');
	free(text);
	cJSON_Delete(doc);
}

/* Every value through the one XML escaping (XML 1.0 Char text only, hp_xml_escape). */
static void xml_attr(struct hp_buf *out, const char *name, const char *value)
{
	hp_buf_printf(out, " %s=\"", name);
	hp_xml_escape(out, value);
	hp_buf_putc(out, '"');
}

static void xml_case(struct hp_buf *out, const struct hp_diff_item *it, const char *outcome)
{
	struct hp_buf msg = HP_BUF_INIT(HP_MAX_LINE);

	hp_buf_puts(out, "    <testcase");
	hp_buf_printf(&msg, "hpnode.diff.%s", it->check);
	xml_attr(out, "classname", msg.buf);
	xml_attr(out, "name", it->key);
	hp_buf_puts(out, " time=\"0\"");
	hp_buf_reset(&msg);
	put_tag(&msg, it);
	hp_buf_putc(&msg, ' ');
	hp_buf_puts(&msg, it->message);
	if (it->pointer)
		hp_buf_puts(&msg, it->pointer);
	if (!outcome) {
		hp_buf_puts(out, "/>\n");
	} else {
		hp_buf_printf(out, ">\n      <%s", outcome);
		xml_attr(out, "message", msg.buf);
		if (!strcmp(outcome, "failure"))
			hp_buf_printf(out, " type=\"NEW %s\"", hp_report_tag_name(it->tag));
		hp_buf_puts(out, "/>\n    </testcase>\n");
	}
	hp_buf_release(&msg);
}

void hp_diff_junit(const struct hp_diff *d, struct hp_buf *out)
{
	size_t i, n = d->fresh.n + d->resolved.n + d->persisting.n;

	/* junit-10.xsd: the root has no skipped count (the suites have). */
	hp_buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"hpnode diff\" "
		      "tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"0\">\n", n, d->fresh.n);
	hp_buf_printf(out, "  <testsuite name=\"New findings\" tests=\"%zu\" failures=\"%zu\" "
		      "errors=\"0\" skipped=\"0\" time=\"0\">\n", d->fresh.n, d->fresh.n);
	for (i = 0; i < d->fresh.n; i++)
		xml_case(out, d->fresh.v[i], "failure");
	hp_buf_printf(out, "  </testsuite>\n  <testsuite name=\"Resolved findings\" tests=\"%zu\" "
		      "failures=\"0\" errors=\"0\" skipped=\"0\" time=\"0\">\n", d->resolved.n);
	for (i = 0; i < d->resolved.n; i++)
		xml_case(out, d->resolved.v[i], NULL);
	hp_buf_printf(out, "  </testsuite>\n  <testsuite name=\"Persisting findings\" tests=\"%zu\" "
		      "failures=\"0\" errors=\"0\" skipped=\"%zu\" time=\"0\">\n", d->persisting.n,
		      d->persisting.n);
	for (i = 0; i < d->persisting.n; i++)
		xml_case(out, d->persisting.v[i].new_item, "skipped");
	hp_buf_puts(out, "  </testsuite>\n</testsuites>\n");
}

/* ---------------------------------------------------------------- triage --baseline */

int hp_diff_known(const struct hp_diff *d, const struct hp_finding *f)
{
	struct hp_buf key = HP_BUF_INIT(HP_MAX_LINE);
	size_t k;
	int known = 1;

	if (!d || !hp_finding_is_problem(f))
		return -1;
	if (hp_finding_per_node(f)) {
		/* Known only when every node's key was in the baseline. */
		for (k = 0; k < f->nnodes && known; k++) {
			hp_finding_node_key(f, k, &key);
			known = hp_diff_find(d->old_side, key.buf) != NULL;
		}
	} else {
		hp_finding_key(f, &key);
		known = hp_diff_find(d->old_side, key.buf) != NULL;
	}
	hp_buf_release(&key);
	return known;
}

void hp_diff_text_resolved(const struct hp_diff *d, int color, struct hp_buf *out)
{
	size_t i;

	hp_buf_puts(out, "\n  ");
	if (color)
		hp_buf_puts(out, C_BOLD);
	hp_buf_printf(out, "Resolved since the baseline (%zu)", d->resolved.n);
	if (color)
		hp_buf_puts(out, C_RESET);
	hp_buf_puts(out, ", baseline ");
	clean(out, d->old_side->file, "?");
	hp_buf_printf(out, ": %zu new, %zu known\n", d->fresh.n, d->persisting.n);
	for (i = 0; i < d->resolved.n; i++)
		put_item(out, d->resolved.v[i], color, C_GREEN C_STRIKE, NULL);
}

cJSON *hp_diff_baseline_json(const struct hp_diff *d)
{
	cJSON *o = cJSON_CreateObject(), *a;
	size_t i;

	json_str(o, "file", d->old_side->file);
	json_str(o, "kind", d->old_side->kind);
	cJSON_AddNumberToObject(o, "new", (double)d->fresh.n);
	cJSON_AddNumberToObject(o, "known", (double)d->persisting.n);
	a = cJSON_AddArrayToObject(o, "resolved");
	for (i = 0; i < d->resolved.n; i++)
		cJSON_AddItemToArray(a, json_item(d->resolved.v[i], NULL));
	return o;
}
