/*
 * The Kubernetes decoders (include/hp/facts.h): the EC2 instance id of a
 * Kubernetes node, and the index of the snapshot's kube.nodes by node
 * name and of its ListClusterNodes entries by instance id, which every
 * Kubernetes check reads and the facts cache builds once.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "facts-int.h"
#include "hp/array.h"
#include "hp/json.h"
#include "hp/util.h"

/* The last "i-" + 8 or 17 hex digits in s that stands alone (not inside a word). */
static int find_iid(const char *s, char *out, size_t n)
{
	const char *p, *hit = NULL;
	size_t hit_len = 0;

	if (!s)
		return -1;
	for (p = s; (p = strstr(p, "i-")) != NULL; p++) {
		size_t len = 0;

		if (p != s && isalnum((unsigned char)p[-1]))
			continue;
		while (isxdigit((unsigned char)p[2 + len]) && !isupper((unsigned char)p[2 + len]))
			len++;
		if ((len == 8 || len == 17) && !isalnum((unsigned char)p[2 + len])) {
			hit = p;
			hit_len = len + 2;
		}
	}
	if (!hit || hit_len >= n)
		return -1;
	memcpy(out, hit, hit_len);
	out[hit_len] = '\0';
	return 0;
}

/* The instance id of a Kubernetes node, from providerID, name or labels. */
int hp_kube_instance_id(const char *name, const char *provider_id, const cJSON *labels,
			char *out, size_t n)
{
	const cJSON *l;

	if (!find_iid(provider_id, out, n) || !find_iid(name, out, n))
		return 0;
	cJSON_ArrayForEach(l, labels) {
		if (l->string && hp_starts_with(l->string, "sagemaker.amazonaws.com/") &&
		    cJSON_IsString(l) && !find_iid(l->valuestring, out, n) &&
		    !strcmp(out, l->valuestring))
			return 0;
	}
	if (n)
		out[0] = '\0';
	return -1;
}

/* ------------------------------------------------------------ the index */

struct pair {
	const char *key;
	const char *val;
	const cJSON *obj;
};

typedef HP_ARRAY(struct pair) pair_list;

struct hp_kube_index {
	HP_ARRAY(struct hp_kube_node) nodes;  /* kube.nodes, in order */
	pair_list by_name;        /* node name -> instance id (val), node (obj); sorted */
	pair_list by_iid;         /* instance id -> ListClusterNodes entry (obj); sorted */
};

static int pair_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pair *)a)->key, ((const struct pair *)b)->key);
}

static void pair_add(pair_list *x, const char *key, const char *val, const cJSON *obj)
{
	struct pair *p;

	if (!key)
		return;
	p = hp_array_push(x);
	p->key = key;
	p->val = val;
	p->obj = obj;
}

static const struct pair *pair_find(const pair_list *x, const char *key)
{
	struct pair k = { key, NULL, NULL };

	if (!key || !x->n)
		return NULL;
	return bsearch(&k, x->v, x->n, sizeof(*x->v), pair_cmp);
}

struct hp_kube_index *hp_kube_index_build(const struct hp_snapshot *s)
{
	struct hp_kube_index *x = xcalloc(1, sizeof(*x));
	const cJSON *nodes = hp_json_arr(hp_snapshot_get(s, "kube"), "nodes"), *n;
	size_t i;

	hp_facts_count_run(FACTS_KUBE);
	hp_array_reserve(&x->nodes, (size_t)cJSON_GetArraySize(nodes));
	cJSON_ArrayForEach(n, nodes) {
		struct hp_kube_node *k = hp_array_push(&x->nodes);

		k->node = n;
		k->name = hp_json_str(n, "name");
		if (hp_kube_instance_id(k->name, hp_json_str(n, "provider_id"),
					cJSON_GetObjectItemCaseSensitive(n, "labels"), k->iid,
					sizeof(k->iid)))
			k->iid[0] = '\0';
	}
	/* The element addresses are final now: the pairs may point into them. */
	for (i = 0; i < x->nodes.n; i++) {
		const struct hp_kube_node *k = &x->nodes.v[i];

		pair_add(&x->by_name, k->name, k->iid[0] ? k->iid : NULL, k->node);
	}
	hp_array_sort(&x->by_name, pair_cmp);
	cJSON_ArrayForEach(n, hp_snapshot_get(s, "nodes"))
		pair_add(&x->by_iid, hp_json_str(n, "InstanceId"), NULL, n);
	hp_array_sort(&x->by_iid, pair_cmp);
	return x;
}

void hp_kube_index_free(struct hp_kube_index *x)
{
	if (!x)
		return;
	hp_array_release(&x->nodes);
	hp_array_release(&x->by_name);
	hp_array_release(&x->by_iid);
	free(x);
}

/* A NULL index (a snapshot not prepared) is an empty one. */
size_t hp_kube_index_count(const struct hp_kube_index *x)
{
	return x ? x->nodes.n : 0;
}

const struct hp_kube_node *hp_kube_index_at(const struct hp_kube_index *x, size_t i)
{
	return x && i < x->nodes.n ? &x->nodes.v[i] : NULL;
}

const char *hp_kube_index_iid(const struct hp_kube_index *x, const char *name)
{
	const struct pair *p = x ? pair_find(&x->by_name, name) : NULL;

	return p ? p->val : NULL;
}

const cJSON *hp_kube_index_cluster_node(const struct hp_kube_index *x, const char *iid)
{
	const struct pair *p = x ? pair_find(&x->by_iid, iid) : NULL;

	return p ? p->obj : NULL;
}
