/*
 * Suggested commands for findings (`--suggest`): picks the blocks of the
 * finding's sections in the reference document of its check (the node
 * guide or the NCCL guide), fills placeholders from the finding's own values
 * and from the snapshot, and renders them for the text and JSON reports.
 * Values are checked for shell safety and never guessed; nothing is run.
 *
 * In the JSON report each finding gets "suggestions_skipped" (blocks left
 * out because they are for the other orchestrator), "suggestions_unfit"
 * (why each command left out for this cluster was: a placeholder it could
 * not fill, a rule that exists, a fix for another kind of finding, a state
 * the cluster is not in; "§ B.3: `aws ec2 replace-route …` left out,
 * <NAT_GATEWAY_ID> not known (…)") and "suggestions", a list of:
 *
 *   {"section": "F.2", "title": "Reboot and Replace Nodes",
 *    "intro": "step 1, reboot.", "command": "aws sagemaker ...",
 *    "blast_radius": "..." | null, "iac_note": "..." | null,
 *    "unfilled": [{"placeholder": "<NODE_NAME>", "reason": "..."}],
 *    "run_this_yourself": true}
 *
 * The command keeps its newlines (continuation lines); every string is
 * sanitised like the rest of the report.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/report.h"
#include "hp/suggest.h"

#define C_YELLOW "\033[1;33m"
#define C_RESET "\033[0m"
#define SECT "\xc2\xa7" /* U+00A7 */

/* Longest value put into a command, and ids named in a reason. */
#define MAX_VALUE 512
#define IDS_NAMED 5
/* Cap on one rendered suggestion line. */
#define MAX_LINE ((size_t)8192)

enum { K_CLUSTER, K_CLUSTER_ID, K_REGION, K_EKS_NAME, K_VPC_ID, K_EKS_CLUSTER_SG };

static const char *const known_names[] = {
	[K_CLUSTER] = "CLUSTER",
	[K_CLUSTER_ID] = "CLUSTER_ID",
	[K_REGION] = "REGION",
	[K_EKS_NAME] = "EKS_NAME",
	[K_VPC_ID] = "VPC_ID",
	[K_EKS_CLUSTER_SG] = "EKS_CLUSTER_SG",
};

_Static_assert(sizeof(known_names) / sizeof(known_names[0]) == HP_SUGGEST_KNOWN,
	       "one name per cluster-wide value");

/* A small set of distinct strings. */
struct strset {
	const char **v;
	size_t n, alloc;
};

static void set_add(struct strset *s, const char *v)
{
	size_t i;

	if (!v || !*v)
		return;
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], v))
			return;
	hp_array_append(s, v);
}

static void set_add_array(struct strset *s, const cJSON *arr)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, arr)
		if (cJSON_IsString(x))
			set_add(s, x->valuestring);
}

/* "a, b, c" of the first few members, with "…" when there are more. */
static char *set_join(const struct strset *s)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
	size_t i;

	for (i = 0; i < s->n && i < IDS_NAMED; i++)
		hp_buf_printf(&b, "%s%.64s", i ? ", " : "", s->v[i]);
	if (s->n > IDS_NAMED)
		hp_buf_puts(&b, ", \xe2\x80\xa6");
	return hp_buf_detach(&b, NULL);
}

/* Every string value of a member named key1 or key2, anywhere under node. */
static void collect_key(const cJSON *node, const char *key1, const char *key2, struct strset *s)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, node) {
		if (x->string && cJSON_IsString(x) &&
		    (!strcmp(x->string, key1) || (key2 && !strcmp(x->string, key2))))
			set_add(s, x->valuestring);
		if (cJSON_IsObject(x) || cJSON_IsArray(x))
			collect_key(x, key1, key2, s);
	}
}

/*
 * A value may go into a command a person pastes into a shell only if it
 * is one plain word: no quotes, spaces, globs, expansions or redirections.
 */
static int shell_safe(const char *v)
{
	size_t n = strlen(v);

	return n && n <= MAX_VALUE && v[0] != '-' && hp_shell_plain(v);
}

static void known_set(struct hp_suggest *s, int k, const char *value, char *why)
{
	s->known[k].name = known_names[k];
	if (value && *value) {
		s->known[k].value = xstrdup(value);
		free(why);
	} else {
		s->known[k].why = why;
	}
}

/* The one value of a key in the whole snapshot, or why there is none. */
static void known_unique(struct hp_suggest *s, int k, const char *key1, const char *key2,
			 const char *what)
{
	struct strset set = { 0 };
	char *list;

	if (s->snap)
		collect_key(s->snap->root, key1, key2, &set);
	if (set.n == 1) {
		known_set(s, k, set.v[0], NULL);
	} else if (!set.n) {
		known_set(s, k, NULL, xasprintf("no %s in the data hpnode collected", what));
	} else {
		list = set_join(&set);
		known_set(s, k, NULL, xasprintf("the collected data holds %zu %ss (%s); choose one",
						 set.n, what, list));
		free(list);
	}
	hp_array_release(&set);
}

/* Parses the embedded guide and works out the values that hold for the whole cluster. */
int hp_suggest_init(struct hp_suggest *s, const struct hp_snapshot *snap, const char *cluster,
		    const char *region, struct hp_error *e)
{
	const char *text = hp_refdoc_embedded(HP_REFDOC_DETAIL);
	const char *nccl = hp_refdoc_embedded(HP_REFDOC_NCCL);
	const cJSON *root = snap ? snap->root : NULL;
	const char *v, *orch;
	char id[64] = "";

	memset(s, 0, sizeof(*s));
	if (!text || !nccl)
		return hp_error_set(e, HP_ERR_INTERNAL, "reference document '%s' is not embedded",
				    !text ? HP_REFDOC_DETAIL : HP_REFDOC_NCCL);
	if (hp_refdoc_parse(&s->doc, text, e))
		return -1;
	if (hp_refdoc_parse(&s->nccl, nccl, e)) {
		hp_refdoc_release(&s->doc);
		return -1;
	}
	s->snap = snap;
	orch = snap ? hp_snap_orchestrator(snap) : "Unknown";
	s->orch = !strcmp(orch, "EKS") ? HP_ORCH_EKS : !strcmp(orch, "Slurm") ? HP_ORCH_SLURM
										: HP_ORCH_ANY;

	v = snap ? hp_snap_cluster_name(snap) : NULL;
	known_set(s, K_CLUSTER, v && *v ? v : cluster, xstrdup("the cluster name is not known"));
	if (snap)
		hp_snap_cluster_id(snap, id);
	known_set(s, K_CLUSTER_ID, id,
		  xstrdup("the cluster ARN (DescribeCluster) is missing or malformed"));
	v = hp_json_str(root, "meta.region");
	known_set(s, K_REGION, v && *v ? v : region, xstrdup("the region is not known"));

	v = hp_json_str(root, "cluster.Orchestrator.Eks.ClusterArn");
	if (v && strchr(v, '/'))
		known_set(s, K_EKS_NAME, strrchr(v, '/') + 1, xstrdup("the EKS cluster ARN has no name"));
	else if (s->orch == HP_ORCH_SLURM)
		known_set(s, K_EKS_NAME, NULL, xstrdup("the cluster is orchestrated by Slurm, not EKS"));
	else
		known_set(s, K_EKS_NAME, NULL,
			  xstrdup("no EKS cluster ARN in the cluster's Orchestrator (DescribeCluster)"));
	known_unique(s, K_VPC_ID, "VpcId", "vpcId", "VPC id");
	known_unique(s, K_EKS_CLUSTER_SG, "clusterSecurityGroupId", NULL,
		     "EKS cluster security group");
	return 0;
}

/* Frees the document and the cluster-wide values. */
void hp_suggest_release(struct hp_suggest *s)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(s->known); i++) {
		free(s->known[i].value);
		free(s->known[i].why);
	}
	hp_refdoc_release(&s->doc);
	hp_refdoc_release(&s->nccl);
	memset(s, 0, sizeof(*s));
}

/* ---- values that depend on the finding ---- */

static const cJSON *find_group(const struct hp_snapshot *snap, const char *name)
{
	const cJSON *g;
	const char *v;

	if (!snap || !name)
		return NULL;
	cJSON_ArrayForEach(g, hp_json_arr(snap->root, "cluster.InstanceGroups")) {
		v = hp_json_str(g, "InstanceGroupName");
		if (v && !strcmp(v, name))
			return g;
	}
	return NULL;
}

/* What the finding says about where it happened. */
struct where {
	const char *iid;
	const cJSON *detail;   /* DescribeClusterNode (--node) of that node, or NULL */
	const cJSON *listed;   /* its ListClusterNodes entry, or NULL */
	const char *group;
	const cJSON *gobj;
};

/* A node field, from the detail when it has it, else from the list entry. */
static const char *node_str(const struct where *w, const char *path)
{
	const char *v = hp_json_str(w->detail, path);

	if (!v || !*v)
		v = hp_json_str(w->listed, path);
	return v && *v ? v : NULL;
}

static void where_of(const struct hp_suggest *s, const struct hp_finding *f, struct where *w)
{
	const cJSON *n;
	const char *v;

	memset(w, 0, sizeof(*w));
	w->iid = f->node && *f->node ? f->node : NULL;
	if (s->snap && w->iid) {
		n = hp_json_get(s->snap->root, "node");
		v = hp_json_str(n, "InstanceId");
		if (v && !strcmp(v, w->iid))
			w->detail = n;
		cJSON_ArrayForEach(n, hp_json_arr(s->snap->root, "nodes")) {
			v = hp_json_str(n, "InstanceId");
			if (v && !strcmp(v, w->iid)) {
				w->listed = n;
				break;
			}
		}
	}
	w->group = hp_json_str(f->vars, "GROUP");
	if (!w->group || !*w->group)
		w->group = node_str(w, "InstanceGroupName");
	w->gobj = find_group(s->snap, w->group);
}

/* SG_ID or SUBNET_ID: the one id the finding's instance group (or the cluster) uses. */
static char *network_id(const struct hp_suggest *s, const struct where *w, const char *field,
			const char *what, char **why)
{
	const cJSON *cluster = hp_json_get(s->snap ? s->snap->root : NULL, "cluster"), *vpc;
	struct strset set = { 0 };
	struct hp_vpc_walk walk;
	char *v = NULL, *list;

	if (w->gobj) {
		set_add_array(&set, hp_vpc_ids(cluster, w->gobj, field));
	} else {
		/* Without a group, any group's override may be the one meant. */
		for (vpc = hp_vpc_first(&walk, cluster); vpc; vpc = hp_vpc_next(&walk))
			set_add_array(&set, hp_json_arr(vpc, field));
	}
	if (set.n == 1) {
		v = xstrdup(set.v[0]);
	} else if (!set.n) {
		*why = xasprintf("no %s in the cluster's VpcConfig (DescribeCluster)", what);
	} else {
		list = set_join(&set);
		*why = xasprintf("the %s uses %zu %ss (%s); pick the one this finding concerns",
				 w->gobj ? "instance group" : "cluster", set.n, what, list);
		free(list);
	}
	hp_array_release(&set);
	return v;
}

static char *group_field(const struct where *w, const char *path, const char *what, char **why)
{
	const cJSON *x = hp_json_get(w->gobj, path);

	if (!w->group) {
		*why = xstrdup("this finding names no instance group");
		return NULL;
	}
	if (cJSON_IsString(x) && *x->valuestring)
		return xstrdup(x->valuestring);
	if (cJSON_IsNumber(x))
		return xasprintf("%.0f", x->valuedouble);
	*why = xasprintf("DescribeCluster gives no %s for instance group '%.64s'", what, w->group);
	return NULL;
}

static char *node_field(const struct where *w, const char *path, char **why)
{
	const char *v = node_str(w, path);

	if (v)
		return xstrdup(v);
	if (!w->iid)
		*why = xstrdup("this finding names no single node");
	else
		*why = xasprintf("not collected for %.40s (run triage with --node %.40s)", w->iid,
				 w->iid);
	return NULL;
}

/* The NCCL guide's placeholders a finding did not carry itself. */
static char *resolve_job(const struct hp_suggest *s, const struct where *w, const char *name,
			 char **why)
{
	const cJSON *opts = hp_json_get(s->snap ? s->snap->root : NULL, "nccl.options");
	const char *v;

	if (!strcmp(name, "JOB") || !strcmp(name, "NAMESPACE")) {
		v = hp_json_str(opts, !strcmp(name, "JOB") ? "job" : "namespace");
		if (v && *v)
			return xstrdup(v);
		*why = xasprintf("this finding names no %s (hpnode nccl --%s narrows the run to one)",
				 !strcmp(name, "JOB") ? "job" : "namespace",
				 !strcmp(name, "JOB") ? "job" : "namespace");
		return NULL;
	}
	if (!strcmp(name, "NODE_NAME") && w->iid && s->snap) {
		const struct hp_kube_index *x = hp_facts_kube(s->snap);
		size_t i;

		for (i = 0; i < hp_kube_index_count(x); i++) {
			const struct hp_kube_node *k = hp_kube_index_at(x, i);

			if (k->name && !strcmp(k->iid, w->iid))
				return xstrdup(k->name);
		}
		*why = xasprintf("no Kubernetes node of %.40s in the data hpnode collected", w->iid);
		return NULL;
	}
	if (!strcmp(name, "POD") || !strcmp(name, "CONTAINER") || !strcmp(name, "POLICY") ||
	    !strcmp(name, "PID") || !strcmp(name, "DEVICE")) {
		*why = xasprintf("this finding names no single %s", !strcmp(name, "POD") ? "pod" :
				 !strcmp(name, "CONTAINER") ? "container" : !strcmp(name, "POLICY")
				 ? "NetworkPolicy" : !strcmp(name, "PID") ? "process" : "PCI device");
		return NULL;
	}
	*why = xstrdup("hpnode has no value for it in this finding or the snapshot");
	return NULL;
}

/* ---- network resources: the finding's own, never one guessed from the cluster ---- */

static const char *const net_names[] = { "SG_ID", "SUBNET_ID", "VPC_ID", "ROUTE_TABLE_ID" };

/* "security group sg-1" / "subnet subnet-1" ...: the resource a finding is about, or NULL. */
static const char *finding_resource(const struct hp_finding *f, char *out, size_t n)
{
	static const char *const what[] = { "security group", "subnet", "VPC", "route table" };
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(net_names); i++) {
		const char *v = hp_json_str(f->vars, net_names[i]);

		if (v && *v) {
			snprintf(out, n, "%s %.64s", what[i], v);
			return out;
		}
	}
	return NULL;
}

/* network.<map>.<id> of the snapshot (security_groups, subnets), or NULL. */
static const cJSON *net_member(const struct hp_suggest *s, const char *map, const char *id)
{
	const cJSON *m;

	if (!s->snap || !id)
		return NULL;
	m = cJSON_GetObjectItemCaseSensitive(hp_json_get(s->snap->root, "network"), map);
	return cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, id) : NULL;
}

/* The VPC of the finding's own subnet or security group, or NULL. */
static const char *finding_vpc(const struct hp_suggest *s, const struct hp_finding *f)
{
	const char *v = hp_json_str(f->vars, "VPC_ID");

	if (v && *v)
		return v;
	v = hp_json_str(net_member(s, "subnets", hp_json_str(f->vars, "SUBNET_ID")), "vpcId");
	if (v && *v)
		return v;
	v = hp_json_str(net_member(s, "security_groups", hp_json_str(f->vars, "SG_ID")), "vpcId");
	return v && *v ? v : NULL;
}

/* The route table a subnet uses: its own association, else its VPC's main table. */
static const char *table_of(const struct hp_suggest *s, const char *subnet)
{
	const char *vpc = hp_json_str(net_member(s, "subnets", subnet), "vpcId"), *main = NULL;
	const cJSON *t, *a;

	cJSON_ArrayForEach(t, hp_json_arr(hp_json_get(s->snap->root, "network"), "route_tables")) {
		const char *id = hp_json_str(t, "routeTableId"), *tv = hp_json_str(t, "vpcId");

		cJSON_ArrayForEach(a, hp_json_arr(t, "associationSet")) {
			const char *sub = hp_json_str(a, "subnetId"), *m = hp_json_str(a, "main");

			if (sub && !strcmp(sub, subnet))
				return id;
			if (m && !strcmp(m, "true") && vpc && tv && !strcmp(tv, vpc))
				main = id;
		}
	}
	return main;
}

/* NAT gateways the route tables of vpc send traffic to (active routes). */
static void nats_in(const struct hp_suggest *s, const char *vpc, struct strset *out)
{
	const cJSON *t, *r;

	cJSON_ArrayForEach(t, hp_json_arr(hp_json_get(s->snap->root, "network"), "route_tables")) {
		const char *tv = hp_json_str(t, "vpcId");

		if (!tv || strcmp(tv, vpc))
			continue;
		cJSON_ArrayForEach(r, hp_json_arr(t, "routeSet")) {
			const char *st = hp_json_str(r, "state");

			if (!st || strcmp(st, "blackhole"))
				set_add(out, hp_json_str(r, "natGatewayId"));
		}
	}
}

/* Subnets of vpc, other than the cluster's own, whose route table sends 0.0.0.0/0 to an internet gateway. */
static void public_subnets(const struct hp_suggest *s, const char *vpc, struct strset *out)
{
	const cJSON *own = hp_json_arr(hp_json_get(s->snap->root, "network"), "subnet_ids");
	const cJSON *t, *r, *a;

	cJSON_ArrayForEach(t, hp_json_arr(hp_json_get(s->snap->root, "network"), "route_tables")) {
		const char *tv = hp_json_str(t, "vpcId");
		int igw = 0;

		if (!tv || strcmp(tv, vpc))
			continue;
		cJSON_ArrayForEach(r, hp_json_arr(t, "routeSet")) {
			const char *d = hp_json_str(r, "destinationCidrBlock"),
				   *g = hp_json_str(r, "gatewayId");

			igw |= d && !strcmp(d, "0.0.0.0/0") && g && hp_starts_with(g, "igw-");
		}
		if (!igw)
			continue;
		cJSON_ArrayForEach(a, hp_json_arr(t, "associationSet")) {
			const char *sub = hp_json_str(a, "subnetId");

			if (sub && !hp_json_has_str(own, sub))
				set_add(out, sub);
		}
	}
}

/*
 * VPC_ID, ROUTE_TABLE_ID, NAT_GATEWAY_ID, SG_ID and SUBNET_ID for a finding
 * about one network resource: from that resource, or NULL with *why. *done
 * is 0 when the finding names no resource (the cluster-wide ways apply).
 */
static char *resolve_network(const struct hp_suggest *s, const struct hp_finding *f,
			     const char *name, char **why, int *done)
{
	char res[128], *list;
	const char *vpc, *v;
	struct strset set = { 0 };

	*done = 0;
	if (!finding_resource(f, res, sizeof(res)) || !s->snap)
		return NULL;
	*done = 1;
	vpc = finding_vpc(s, f);
	if (!strcmp(name, "VPC_ID")) {
		if (vpc)
			return xstrdup(vpc);
		*why = xasprintf("the VPC of %s is not in the data hpnode collected", res);
		return NULL;
	}
	if (!strcmp(name, "ROUTE_TABLE_ID")) {
		v = hp_json_str(f->vars, "SUBNET_ID");
		if ((!v || !*v) && vpc && hp_json_str(f->vars, "VPC_ID")) {
			/* A VPC's finding: the route tables of the cluster's subnets in it. */
			const cJSON *id;
			const char *sv;

			cJSON_ArrayForEach(id, hp_json_arr(hp_json_get(s->snap->root, "network"),
							   "subnet_ids")) {
				sv = cJSON_IsString(id) ? hp_json_str(net_member(s, "subnets",
										 id->valuestring),
								      "vpcId") : NULL;
				if (sv && !strcmp(sv, vpc))
					set_add(&set, table_of(s, id->valuestring));
			}
			if (set.n == 1) {
				char *one = xstrdup(set.v[0]);

				hp_array_release(&set);
				return one;
			}
			list = set.n ? set_join(&set) : NULL;
			*why = list ? xasprintf("the cluster's subnets in %s use %zu route tables (%s); "
						"name each", vpc, set.n, list)
				    : xasprintf("no route table of the cluster's subnets in %s was read",
						vpc);
			free(list);
			hp_array_release(&set);
			return NULL;
		}
		if (!v || !*v) {
			*why = xasprintf("this finding is about %s, not a route table", res);
			return NULL;
		}
		v = table_of(s, v);
		if (v && *v)
			return xstrdup(v);
		*why = xasprintf("no route table of %s was read", res);
		return NULL;
	}
	if (!strcmp(name, "NAT_GATEWAY_ID")) {
		char *out = NULL;

		if (!vpc) {
			*why = xasprintf("the VPC of %s is not known", res);
			return NULL;
		}
		nats_in(s, vpc, &set);
		if (set.n == 1) {
			out = xstrdup(set.v[0]);
		} else if (set.n > 1) {
			list = set_join(&set);
			*why = xasprintf("%s routes to %zu NAT gateways (%s); pick the one in this "
					 "subnet's zone", vpc, set.n, list);
			free(list);
		} else {
			hp_array_release(&set);
			public_subnets(s, vpc, &set);
			list = set.n ? set_join(&set) : NULL;
			*why = xasprintf("no route table of %s routes to a NAT gateway, so there is "
					 "none to point at: create one first in a public subnet of %s "
					 "(%s%s), with an Elastic IP, then point the route at it", vpc,
					 vpc, list ? "one whose route table sends 0.0.0.0/0 to an "
					 "internet gateway: " : "none was found among the route tables "
					 "read; create one with a route to an internet gateway",
					 list ? list : "");
			free(list);
		}
		hp_array_release(&set);
		return out;
	}
	if (!strcmp(name, "SG_ID") || !strcmp(name, "SUBNET_ID")) {
		v = hp_json_str(f->vars, name);
		if (v && *v)
			return xstrdup(v);
		*why = xasprintf("this finding is about %s, not a %s", res,
				 !strcmp(name, "SG_ID") ? "security group" : "subnet");
		return NULL;
	}
	*done = 0;
	return NULL;
}

static char *resolve(const struct hp_suggest *s, const struct hp_finding *f, const char *name,
		     char **why)
{
	struct where w;
	const char *v;
	size_t i;
	int nccl, done;
	char *nv;

	v = hp_json_str(f->vars, name);
	if (v && *v)
		return xstrdup(v);
	nv = resolve_network(s, f, name, why, &done);
	if (done)
		return nv;
	for (i = 0; i < HP_ARRAY_LEN(s->known); i++) {
		if (!s->known[i].name || strcmp(s->known[i].name, name))
			continue;
		if (s->known[i].value)
			return xstrdup(s->known[i].value);
		*why = xstrdup(s->known[i].why);
		return NULL;
	}
	where_of(s, f, &w);
	nccl = !strcmp(hp_check_doc(f->check), HP_REFDOC_NCCL);
	if (!strcmp(name, "INSTANCE_ID")) {
		if (w.iid)
			return xstrdup(w.iid);
		*why = xstrdup("this finding names no single node");
		return NULL;
	}
	if (!strcmp(name, "GROUP")) {
		if (w.group)
			return xstrdup(w.group);
		*why = xstrdup(w.iid ? "the node's instance group is not in the node list"
				     : "this finding names no instance group");
		return NULL;
	}
	if (!strcmp(name, "INSTANCE_TYPE")) {
		v = node_str(&w, "InstanceType");
		if (!v)
			v = hp_json_str(w.gobj, "InstanceType");
		if (v && *v)
			return xstrdup(hp_starts_with(v, "ml.") ? v + 3 : v);
		*why = xstrdup("the instance type of this finding is not known");
		return NULL;
	}
	if (!strcmp(name, "INSTANCE_COUNT"))
		return group_field(&w, "TargetCount", "TargetCount", why);
	if (!strcmp(name, "LIFECYCLE_S3_URI"))
		return group_field(&w, "LifeCycleConfig.SourceS3Uri", "LifeCycleConfig.SourceS3Uri",
				   why);
	if (!strcmp(name, "ON_CREATE_SCRIPT"))
		return group_field(&w, "LifeCycleConfig.OnCreate", "LifeCycleConfig.OnCreate", why);
	if (!strcmp(name, "EXECUTION_ROLE_ARN"))
		return group_field(&w, "ExecutionRole", "ExecutionRole", why);
	if (!strcmp(name, "NODE_IP"))
		return node_field(&w, "PrivatePrimaryIp", why);
	if (!strcmp(name, "AZ"))
		return node_field(&w, "Placement.AvailabilityZone", why);
	if (!strcmp(name, "SG_ID"))
		return network_id(s, &w, "SecurityGroupIds", "security group", why);
	if (!strcmp(name, "SUBNET_ID"))
		return network_id(s, &w, "Subnets", "subnet", why);
	if (nccl)
		return resolve_job(s, &w, name, why);
	*why = xstrdup("hpnode has no value for it in this finding or the snapshot");
	return NULL;
}

/* One placeholder's value for a finding, refused when unsafe for a shell. */
char *hp_suggest_value(const struct hp_suggest *s, const struct hp_finding *f, const char *name,
		       char **why)
{
	char *v;

	*why = NULL;
	v = resolve(s, f, name, why);
	if (v && !shell_safe(v)) {
		free(v);
		v = NULL;
		*why = xstrdup("the value read from the cluster holds characters that are not safe "
			       "in a shell command");
	}
	return v;
}

/* ---- filling ---- */

/* Length of a placeholder name at p (just after '<'), 0 when it is not one. */
static size_t placeholder_at(const char *p)
{
	size_t n = 0;

	if (*p < 'A' || *p > 'Z')
		return 0;
	while ((p[n] >= 'A' && p[n] <= 'Z') || isdigit((unsigned char)p[n]) || p[n] == '_')
		n++;
	return p[n] == '>' ? n : 0;
}

static void note_unfilled(struct hp_suggestion *sg, const char *name, char *why)
{
	size_t i;

	for (i = 0; i < sg->nunfilled; i++) {
		if (!strcmp(sg->unfilled[i].name, name)) {
			free(why);
			return;
		}
	}
	sg->unfilled = hp_array_grow(sg->unfilled, &sg->unfilled_alloc, sg->nunfilled, 1,
				     sizeof(*sg->unfilled));
	sg->unfilled[sg->nunfilled].name = xstrdup(name);
	sg->unfilled[sg->nunfilled].why = why;
	sg->nunfilled++;
}

static char *fill(const struct hp_suggest *s, const struct hp_finding *f, const char *text,
		  struct hp_suggestion *sg)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_FILE);
	const char *p = text;

	while (*p) {
		const char *lt = strchr(p, '<');
		size_t n;
		char name[64], *v, *why;

		if (!lt) {
			hp_buf_puts(&b, p);
			break;
		}
		hp_buf_putn(&b, p, (size_t)(lt - p));
		n = placeholder_at(lt + 1);
		if (!n || n >= sizeof(name)) {
			hp_buf_putc(&b, '<');
			p = lt + 1;
			continue;
		}
		memcpy(name, lt + 1, n);
		name[n] = '\0';
		v = hp_suggest_value(s, f, name, &why);
		if (v) {
			hp_buf_puts(&b, v);
			free(v);
		} else {
			hp_buf_putn(&b, lt, n + 2);
			note_unfilled(sg, name, why);
		}
		p = lt + n + 2;
	}
	return hp_buf_detach(&b, NULL);
}

/* ---- state: commands that do not fit what the snapshot shows ---- */

/* States in which HyperPod is still provisioning or handling a node itself. */
static const char *const busy_states[] = { "Pending", "DeepHealthCheckInProgress",
					   "SystemUpdating", "ShuttingDown" };

/* The snapshot's security group sg, or NULL. */
static const cJSON *sg_of(const struct hp_suggest *s, const char *sg)
{
	if (!s->snap || !sg)
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(hp_json_get(s->snap->root,
							    "network.security_groups"), sg);
}

/* sg has an all-traffic rule in perms_key naming group other. */
static int has_group_rule(const cJSON *sg, const char *perms_key, const char *other)
{
	const cJSON *perm;

	cJSON_ArrayForEach(perm, hp_json_arr(sg, perms_key))
		if (hp_sg_rule_all_traffic(perm) && hp_sg_rule_names_group(perm, other))
			return 1;
	return 0;
}

/* sg lets HTTPS out to 0.0.0.0/0 (all traffic, or TCP covering 443). */
static int has_https_egress(const cJSON *sg)
{
	const cJSON *perm;

	cJSON_ArrayForEach(perm, hp_json_arr(sg, "ipPermissionsEgress")) {
		const char *p = hp_json_str(perm, "ipProtocol") ? hp_json_str(perm, "ipProtocol") : "";
		int fits = hp_sg_rule_all_traffic(perm) ||
			   ((!strcmp(p, "tcp") || !strcmp(p, "6")) &&
			    hp_json_num(perm, "fromPort", 99999) <= 443 &&
			    hp_json_num(perm, "toPort", -1) >= 443);

		if (fits && hp_sg_rule_any_ipv4(perm))
			return 1;
	}
	return 0;
}

/*
 * Whether one shell command (a line and its continuations) of a block adds
 * a security group rule that the snapshot shows already exists; what it
 * is goes into *what.
 */
static int rule_exists(const struct hp_suggest *s, const struct hp_finding *f, const char *cmd,
		       char **what)
{
	int egress = strstr(cmd, "authorize-security-group-egress") != NULL;
	int ingress = strstr(cmd, "authorize-security-group-ingress") != NULL;
	char *sg = NULL, *target = NULL, *why = NULL;
	const char *tname;
	int found = 0;

	if (!egress && !ingress)
		return 0;
	/* The group the rule is added to, and the group it names. */
	tname = strstr(cmd, "--group-id <EKS_CLUSTER_SG>") ? "EKS_CLUSTER_SG" : "SG_ID";
	target = hp_suggest_value(s, f, tname, &why);
	free(why);
	why = NULL;
	if (!target)
		return 0;
	if (strstr(cmd, "\"GroupId\":\"<SG_ID>\"")) {
		sg = hp_suggest_value(s, f, "SG_ID", &why);
		free(why);
		if (sg && has_group_rule(sg_of(s, target), egress ? "ipPermissionsEgress" :
					 "ipPermissions", sg)) {
			found = 1;
			*what = xasprintf("%s already has the all-traffic %s rule %s %s", target,
					  egress ? "outbound" : "inbound", egress ? "to" : "from",
					  !strcmp(sg, target) ? "itself" : sg);
		}
	} else if (egress && strstr(cmd, "\"CidrIp\":\"0.0.0.0/0\"") && strstr(cmd, "443")) {
		if (has_https_egress(sg_of(s, target))) {
			found = 1;
			*what = xasprintf("%s already lets HTTPS out to 0.0.0.0/0", target);
		}
	}
	free(sg);
	free(target);
	return found;
}

/*
 * Blocks meant for one kind of finding only: a section's command that
 * fixes one particular fault, which a finding of another check pointing
 * into the same section (or its parent) must not be handed.
 */
static const struct {
	const char *section;   /* the block's section */
	const char *command;   /* a text of its command, or NULL: every block of the section */
	const char *checks;    /* "|id|id|": the checks it is for */
	const char *what;      /* what the command is for */
} block_rules[] = {
	{ "B.1", "authenticationMode", "|network.eks|", "the EKS authentication mode" },
	{ "B.1", "create namespace aws-hyperpod", "|kube.namespace|",
	  "the missing aws-hyperpod namespace" },
	{ "G.1.a", NULL, "|node.gpu-remap|", "a pending or failed GPU row remap" },
	{ "F.3", "scontrol update", "|slurm.nodes|", "a Slurm node reason that is almost Action:" },
};

/* "|a|b|" holds name exactly. */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (n && (p = strstr(p, name)) != NULL) {
		if (p > list && p[-1] == '|' && p[n] == '|')
			return 1;
		p += n;
	}
	return 0;
}

/* Why the block does not belong to f's check, or NULL when it does. */
static char *block_misfit(const struct hp_finding *f, const char *section, const char *command)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(block_rules); i++) {
		if (strcmp(block_rules[i].section, section) ||
		    (block_rules[i].command && !strstr(command, block_rules[i].command)))
			continue;
		if (f->check && f->check->id && listed(block_rules[i].checks, f->check->id))
			return NULL;
		return xasprintf("the command is for %s, which this finding is not about",
				 block_rules[i].what);
	}
	return NULL;
}

/*
 * Why one shell command cannot be suggested as it is: a placeholder of it
 * that has no value. NULL when every one is filled.
 */
static char *first_unfilled(const struct hp_suggest *s, const struct hp_finding *f,
			    const char *cmd)
{
	const char *p = cmd;

	while ((p = strchr(p, '<')) != NULL) {
		size_t n = placeholder_at(p + 1);
		char name[64], *v, *why = NULL, *out;
		size_t shown;

		if (!n || n >= sizeof(name)) {
			p++;
			continue;
		}
		memcpy(name, p + 1, n);
		name[n] = '\0';
		v = hp_suggest_value(s, f, name, &why);
		if (v) {
			free(v);
			p += n + 2;
			continue;
		}
		/* The command's first line as far as it can be filled, without its continuation mark. */
		{
			struct hp_suggestion tmp;
			char *line = xstrndup(cmd, strcspn(cmd, "\n")), *shown_text;
			size_t j;

			memset(&tmp, 0, sizeof(tmp));
			shown_text = fill(s, f, line, &tmp);
			for (j = 0; j < tmp.nunfilled; j++) {
				free(tmp.unfilled[j].name);
				free(tmp.unfilled[j].why);
			}
			free(tmp.unfilled);
			shown = strlen(shown_text);
			while (shown && (shown_text[shown - 1] == '\\' || shown_text[shown - 1] == ' '))
				shown--;
			out = xasprintf("`%.*s%s` left out, <%s> not known (%s)",
					(int)(shown > 160 ? 160 : shown), shown_text,
					shown > 160 ? "\xe2\x80\xa6" : "", name,
					why ? why : "no value");
			free(shown_text);
			free(line);
		}
		free(why);
		return out;
	}
	return NULL;
}

/*
 * The block's command with the commands that do not fit the snapshot taken
 * out (caller frees), or NULL when none is left; every reason lands in *why
 * (caller frees), NULL when everything fits. A command with a placeholder
 * hpnode cannot fill is one that does not fit.
 */
static char *fit_command(const struct hp_suggest *s, const struct hp_finding *f,
			 const char *section, const char *command, char **why)
{
	struct hp_buf keep = HP_BUF_INIT(HP_MAX_FILE), reasons = HP_BUF_INIT(HP_MAX_LINE);
	const char *p = command;
	const char *rec = s->snap ? hp_json_str(s->snap->root, "cluster.NodeRecovery") : NULL;
	size_t kept = 0, i;

	*why = block_misfit(f, section, command);
	if (*why) {
		hp_buf_release(&keep);
		hp_buf_release(&reasons);
		return NULL;
	}
	if (strstr(command, "--node-recovery Automatic") && rec && !strcmp(rec, "Automatic")) {
		*why = xstrdup("NodeRecovery is already Automatic");
		hp_buf_release(&keep);
		hp_buf_release(&reasons);
		return NULL;
	}
	if ((strstr(command, "batch-reboot-cluster-nodes") ||
	     strstr(command, "batch-replace-cluster-nodes") ||
	     strstr(command, "scontrol update nodename")) && f->node && s->snap) {
		const cJSON *n;

		cJSON_ArrayForEach(n, hp_json_arr(s->snap->root, "nodes")) {
			const char *id = hp_json_str(n, "InstanceId");
			const char *st = hp_json_str(n, "InstanceStatus.Status");

			if (!id || strcmp(id, f->node) || !st)
				continue;
			for (i = 0; i < HP_ARRAY_LEN(busy_states); i++) {
				if (strcmp(st, busy_states[i]))
					continue;
				*why = xasprintf("%.40s is %s: HyperPod is still provisioning or "
						 "handling it; look again once it is Running or "
						 "Failure", f->node, st);
				hp_buf_release(&keep);
				hp_buf_release(&reasons);
				return NULL;
			}
		}
	}
	/* One shell command at a time: a line and the indented lines continuing it. */
	while (*p) {
		const char *end = p;
		char *one, *what = NULL;

		do {
			end = strchr(end, '\n');
			end = end ? end + 1 : p + strlen(p);
		} while (*end == ' ' || *end == '\t');
		one = xstrndup(p, (size_t)(end - p));
		if (rule_exists(s, f, one, &what) || (what = first_unfilled(s, f, one)) != NULL) {
			hp_buf_printf(&reasons, "%s%s", reasons.len ? "; " : "", what);
			free(what);
		} else {
			hp_buf_puts(&keep, one);
			kept++;
		}
		free(one);
		p = end;
	}
	if (reasons.len)
		*why = hp_buf_detach(&reasons, NULL);
	hp_buf_release(&reasons);
	if (!kept) {
		hp_buf_release(&keep);
		return NULL;
	}
	/* No trailing newline: the block's command never ends with one. */
	while (keep.len && keep.buf[keep.len - 1] == '\n')
		keep.buf[--keep.len] = '\0';
	return hp_buf_detach(&keep, NULL);
}

static void note_unfit(struct hp_suggestions *out, const char *section, char *why)
{
	char *line = xasprintf(SECT " %s: %s", section, why);
	size_t i;

	free(why);
	/* Two blocks of a section left out for one reason are said once. */
	for (i = 0; i < out->nunfit; i++) {
		if (!strcmp(out->unfit[i], line)) {
			free(line);
			return;
		}
	}
	out->unfit = hp_array_grow(out->unfit, &out->unfit_alloc, out->nunfit, 1,
				   sizeof(*out->unfit));
	out->unfit[out->nunfit++] = line;
}

/* Next id of a '+'-joined section list, copied into id; 0 at the end. */
static int next_part(const char **sp, char *id, size_t size)
{
	const char *s = *sp;
	size_t n;

	while (*s == '+')
		s++;
	if (!*s)
		return 0;
	n = strcspn(s, "+");
	hp_strlcpy(id, s, n + 1 < size ? n + 1 : size);
	*sp = s + n;
	return 1;
}

/* Every block under each of the finding's sections, once, filled in. */
void hp_suggest_finding(const struct hp_suggest *s, const struct hp_finding *f,
			struct hp_suggestions *out)
{
	const char *name = hp_check_doc(f->check);
	const struct hp_refdoc *d = !strcmp(name, HP_REFDOC_DETAIL) ? &s->doc
				    : !strcmp(name, HP_REFDOC_NCCL) ? &s->nccl : NULL;
	const char *p = f->section ? f->section : "";
	unsigned char *taken;
	char id[32], *cmd, *why;
	size_t k;

	memset(out, 0, sizeof(*out));
	out->doc = d;
	/* A check pointing into a document without suggested commands (the catalog) gets none. */
	if (!d || !d->nblk)
		return;
	taken = xcalloc(d->nblk, 1);
	while (next_part(&p, id, sizeof(id))) {
		size_t root = hp_refdoc_find(d, id);

		if (root == HP_REFDOC_NONE)
			continue;
		for (k = 0; k < d->nblk; k++) {
			const struct hp_refdoc_block *b = &d->blk[k];
			struct hp_suggestion *sg;

			if (taken[k] || !hp_refdoc_within(d, b->section, root))
				continue;
			taken[k] = 1;
			if (b->orch != HP_ORCH_ANY && s->orch != HP_ORCH_ANY && b->orch != s->orch) {
				out->skipped++;
				continue;
			}
			cmd = fit_command(s, f, d->sec[b->section].id, b->command, &why);
			if (why)
				note_unfit(out, d->sec[b->section].id, why);
			if (!cmd)
				continue;
			sg = hp_array_push(out);
			sg->block = k;
			sg->section = b->section;
			sg->command = fill(s, f, cmd, sg);
			free(cmd);
			sg->intro = fill(s, f, b->intro, sg);
			sg->blast = b->blast ? fill(s, f, b->blast, sg) : NULL;
			sg->iac = b->iac ? fill(s, f, b->iac, sg) : NULL;
		}
	}
	free(taken);
}

/* Frees a list made by hp_suggest_finding(). */
void hp_suggestions_release(struct hp_suggestions *v)
{
	size_t i, j;

	for (i = 0; i < v->n; i++) {
		struct hp_suggestion *sg = &v->v[i];

		free(sg->intro);
		free(sg->command);
		free(sg->blast);
		free(sg->iac);
		for (j = 0; j < sg->nunfilled; j++) {
			free(sg->unfilled[j].name);
			free(sg->unfilled[j].why);
		}
		free(sg->unfilled);
	}
	hp_array_release(v);
	for (i = 0; i < v->nunfit; i++)
		free(v->unfit[i]);
	free(v->unfit);
	memset(v, 0, sizeof(*v));
}

/* ---- rendering ---- */

static int wants_suggestions(const struct hp_finding *f)
{
	return (f->tag == HP_TAG_FAIL || f->tag == HP_TAG_WARN) && f->section && *f->section;
}

static void put_line(struct hp_buf *out, const char *indent, const char *text)
{
	hp_buf_puts(out, indent);
	hp_text_add(HP_TEXT_REPORT, text, out, MAX_LINE);
	hp_buf_putc(out, '\n');
}

static const char *orch_other(const struct hp_suggest *s)
{
	return s->orch == HP_ORCH_EKS ? "Slurm" : "EKS";
}

/* The lines under a FAIL/WARN finding in the text report. */
void hp_suggest_text(const struct hp_suggest *s, const struct hp_finding *f, int color,
		     struct hp_buf *out)
{
	struct hp_suggestions v;
	size_t i, j;

	if (!wants_suggestions(f))
		return;
	hp_suggest_finding(s, f, &v);
	for (i = 0; i < v.n; i++) {
		const struct hp_suggestion *sg = &v.v[i];
		const char *line = sg->command;

		hp_buf_puts(out, "    ");
		if (color)
			hp_buf_puts(out, C_YELLOW);
		hp_buf_puts(out, "Suggested command (run this yourself)");
		if (color)
			hp_buf_puts(out, C_RESET);
		hp_buf_printf(out, ", " SECT " %s", v.doc->sec[sg->section].id);
		if (*sg->intro) {
			hp_buf_puts(out, ": ");
			hp_text_add(HP_TEXT_REPORT, sg->intro, out, MAX_LINE);
		}
		hp_buf_putc(out, '\n');
		/* One output line per command line, so continuations still paste. */
		while (line) {
			const char *nl = strchr(line, '\n');
			char *one = nl ? xstrndup(line, (size_t)(nl - line)) : xstrdup(line);

			put_line(out, "      ", one);
			free(one);
			line = nl ? nl + 1 : NULL;
		}
		hp_buf_puts(out, "      Blast radius: ");
		if (sg->blast)
			hp_text_add(HP_TEXT_REPORT, sg->blast, out, MAX_LINE);
		else
			hp_buf_printf(out, "not stated; read " SECT " %s before running it",
				      v.doc->sec[sg->section].id);
		hp_buf_putc(out, '\n');
		if (sg->iac) {
			hp_buf_puts(out, "      IaC note: ");
			hp_text_add(HP_TEXT_REPORT, sg->iac, out, MAX_LINE);
			hp_buf_putc(out, '\n');
		}
		for (j = 0; j < sg->nunfilled; j++) {
			hp_buf_printf(out, "      Not filled in: <%s> (", sg->unfilled[j].name);
			hp_text_add(HP_TEXT_REPORT, sg->unfilled[j].why, out, MAX_LINE);
			hp_buf_puts(out, ")\n");
		}
	}
	if (v.skipped)
		hp_buf_printf(out, "    (%zu suggested command%s for %s clusters left out)\n", v.skipped,
			      v.skipped == 1 ? "" : "s", orch_other(s));
	for (i = 0; i < v.nunfit; i++) {
		hp_buf_puts(out, "    (Not suggested, it does not fit this cluster: ");
		hp_text_add(HP_TEXT_REPORT, v.unfit[i], out, MAX_LINE);
		hp_buf_puts(out, ")\n");
	}
	if (!v.n && !v.skipped && !v.nunfit) {
		struct hp_buf ids = HP_BUF_INIT(MAX_LINE);
		const char *p = f->section;
		char id[32];

		while (next_part(&p, id, sizeof(id)))
			hp_buf_printf(&ids, "%s%s", ids.len ? " " : "", id);
		hp_buf_puts(out, "    No command to suggest; read the section: hpnode explain ");
		hp_text_add(HP_TEXT_REPORT, ids.buf, out, MAX_LINE);
		hp_buf_putc(out, '\n');
		hp_buf_release(&ids);
	}
	hp_suggestions_release(&v);
}

static void add_clean(cJSON *obj, const char *key, const char *s)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_FILE);

	if (!s) {
		cJSON_AddNullToObject(obj, key);
		return;
	}
	/* Sanitise line by line: the command keeps its newlines. */
	while (s) {
		const char *nl = strchr(s, '\n');
		char *one = nl ? xstrndup(s, (size_t)(nl - s)) : xstrdup(s);

		hp_text_add(HP_TEXT_REPORT, one, &b, MAX_LINE);
		free(one);
		if (nl)
			hp_buf_putc(&b, '\n');
		s = nl ? nl + 1 : NULL;
	}
	cJSON_AddStringToObject(obj, key, b.buf);
	hp_buf_release(&b);
}

/* The finding's "suggestions" and "suggestions_skipped" members. */
void hp_suggest_json(const struct hp_suggest *s, const struct hp_finding *f, cJSON *obj)
{
	cJSON *list = cJSON_CreateArray();
	struct hp_suggestions v = { 0 };
	size_t i, j;

	if (wants_suggestions(f))
		hp_suggest_finding(s, f, &v);
	for (i = 0; i < v.n; i++) {
		const struct hp_suggestion *sg = &v.v[i];
		cJSON *o = cJSON_CreateObject(), *un = cJSON_CreateArray();

		add_clean(o, "section", v.doc->sec[sg->section].id);
		add_clean(o, "title", v.doc->sec[sg->section].title);
		add_clean(o, "intro", sg->intro);
		add_clean(o, "command", sg->command);
		add_clean(o, "blast_radius", sg->blast);
		add_clean(o, "iac_note", sg->iac);
		for (j = 0; j < sg->nunfilled; j++) {
			cJSON *u = cJSON_CreateObject();
			char *ph = xasprintf("<%s>", sg->unfilled[j].name);

			add_clean(u, "placeholder", ph);
			add_clean(u, "reason", sg->unfilled[j].why);
			free(ph);
			cJSON_AddItemToArray(un, u);
		}
		cJSON_AddItemToObject(o, "unfilled", un);
		cJSON_AddTrueToObject(o, "run_this_yourself");
		cJSON_AddItemToArray(list, o);
	}
	cJSON_AddItemToObject(obj, "suggestions", list);
	cJSON_AddNumberToObject(obj, "suggestions_skipped", (double)v.skipped);
	{
		cJSON *unfit = cJSON_CreateArray();

		for (i = 0; i < v.nunfit; i++) {
			struct hp_buf clean = HP_BUF_INIT(MAX_LINE);

			hp_text_add(HP_TEXT_REPORT, v.unfit[i], &clean, MAX_LINE);
			cJSON_AddItemToArray(unfit, cJSON_CreateString(clean.buf));
			hp_buf_release(&clean);
		}
		cJSON_AddItemToObject(obj, "suggestions_unfit", unfit);
	}
	hp_suggestions_release(&v);
}
