/*
 * The network collector: for the security groups and subnets the cluster
 * and its instance groups name, the EC2 facts the network checks judge
 * (groups, subnets, VPCs and their DNS attributes, route tables, endpoints,
 * network interfaces against the regional quota), the EKS cluster, and the
 * zones offering each instance type. It judges nothing: a failed call is
 * recorded and its fact left absent. Node instances themselves are not
 * read (they are not EC2 instances of the account).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/tasks.h"
#include "plan.h"

#define MAX_IDS 100      /* security groups or subnets read, at most */
#define MAX_VPCS 4       /* VPCs whose routes and endpoints are read */
#define LIST_PAGES 20    /* route tables, endpoints, offerings */

/* What one step works with: its client, where its failed calls and its keys go. */
struct net {
	struct hp_aws *a;
	struct hp_snapshot *s;   /* failed calls ("calls") */
	cJSON *root;             /* keys of the "network" object */
	const cJSON *cluster;    /* DescribeCluster's reply */
};

static void add_unique(cJSON *arr, const char *v)
{
	if (v && *v && !hp_json_has_str(arr, v) && cJSON_GetArraySize(arr) < MAX_IDS)
		cJSON_AddItemToArray(arr, cJSON_CreateString(v));
}

static void add_all(cJSON *arr, const cJSON *from)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, from)
		if (cJSON_IsString(it))
			add_unique(arr, it->valuestring);
}

/* What a failed call said, for the per-id error maps. */
static cJSON *error_entry(const struct hp_aws_result *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "class", hp_aws_class_name(r->cls));
	cJSON_AddStringToObject(o, "code", r->code);
	cJSON_AddStringToObject(o, "message", r->message);
	return o;
}

static int known(const cJSON *found, const cJSON *errors, const char *id)
{
	return cJSON_GetObjectItemCaseSensitive(found, id) ||
	       cJSON_GetObjectItemCaseSensitive(errors, id);
}

/* Move the items of reply[set_key] into found, keyed by their id_key. */
static void take_items(cJSON *reply, const char *set_key, const char *id_key, cJSON *found)
{
	cJSON *set = cJSON_GetObjectItemCaseSensitive(reply, set_key), *it;

	if (!cJSON_IsArray(set))
		return;
	while ((it = cJSON_DetachItemFromArray(set, 0)) != NULL) {
		const char *id = hp_json_str(it, id_key);

		if (id && !cJSON_GetObjectItemCaseSensitive(found, id))
			cJSON_AddItemToObject(found, id, it);
		else
			cJSON_Delete(it);
	}
}

static void describe_one(struct net *n, const char *op, const char *param, const char *set_key,
			 const char *id_key, const char *id, cJSON *found, cJSON *errors)
{
	struct hp_aws_params p = { 0 };
	struct hp_aws_result r;
	char name[64];

	snprintf(name, sizeof(name), "%s.1", param);
	hp_aws_params_add(&p, name, id);
	if (!hp_aws_query(n->a, HP_SVC_EC2, op, &p, &r)) {
		take_items(r.json, set_key, id_key, found);
	} else {
		hp_collect_record(n->s, HP_SVC_EC2, op, &r);
		cJSON_AddItemToObject(errors, id, error_entry(&r));
	}
	hp_aws_result_release(&r);
	hp_aws_params_release(&p);
}

/*
 * Describe the ids (security groups or subnets) in one call. One id that
 * does not exist fails the whole call, so on a not-found or client error
 * each id is asked for alone: the others are still read, and the bad one
 * is known by name. Every id ends up in found or in errors.
 */
static void describe_ids(struct net *n, const char *op, const char *param, const char *set_key,
			 const char *id_key, const cJSON *ids, cJSON *found, cJSON *errors)
{
	struct hp_aws_params p = { 0 };
	struct hp_aws_result r;
	const cJSON *id;
	int k = 0, rc;

	cJSON_ArrayForEach(id, ids) {
		char name[64];

		if (!cJSON_IsString(id) || known(found, errors, id->valuestring))
			continue;
		snprintf(name, sizeof(name), "%s.%d", param, ++k);
		hp_aws_params_add(&p, name, id->valuestring);
	}
	if (!k) {
		hp_aws_params_release(&p);
		return;
	}
	rc = hp_aws_query(n->a, HP_SVC_EC2, op, &p, &r);
	hp_aws_params_release(&p);
	if (!rc) {
		int missing = 0;

		take_items(r.json, set_key, id_key, found);
		hp_aws_result_release(&r);
		/*
		 * EC2 answers an id that does not exist with an error, never with a
		 * reply that leaves it out: a "successful" reply without it is
		 * malformed, and says nothing about whether the id exists.
		 */
		cJSON_ArrayForEach(id, ids) {
			cJSON *e;

			if (!cJSON_IsString(id) || known(found, errors, id->valuestring))
				continue;
			e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "class", "parse");
			cJSON_AddStringToObject(e, "code", "MalformedReply");
			cJSON_AddStringToObject(e, "message", "the reply does not list it");
			cJSON_AddItemToObject(errors, id->valuestring, e);
			missing++;
		}
		if (missing)
			hp_snapshot_add_call(n->s, "ec2", op, "parse", "MalformedReply",
					     "malformed reply (HTTP 200): a requested id is not in it", 200);
		return;
	}
	if (k > 1 && (r.cls == HP_AWS_NOT_FOUND || r.cls == HP_AWS_CLIENT)) {
		hp_aws_result_release(&r);
		cJSON_ArrayForEach(id, ids)
			if (cJSON_IsString(id) && !known(found, errors, id->valuestring))
				describe_one(n, op, param, set_key, id_key, id->valuestring, found, errors);
		return;
	}
	hp_collect_record(n->s, HP_SVC_EC2, op, &r);
	cJSON_ArrayForEach(id, ids)
		if (cJSON_IsString(id) && !known(found, errors, id->valuestring))
			cJSON_AddItemToObject(errors, id->valuestring, error_entry(&r));
	hp_aws_result_release(&r);
}

/* Called with each listed item; takes ownership. */
typedef void (*item_fn)(void *ctx, cJSON *item);

static void append_item(void *ctx, cJSON *item)
{
	cJSON_AddItemToArray(ctx, item);
}

/*
 * Page through an EC2 list call (base parameters, plus MaxResults and
 * NextToken), handing each item of set_key to fn. Returns 0 (truncated set
 * when max_pages cut the list) or -1 when a call failed (recorded).
 */
static int ec2_pages(struct net *n, const char *op, const struct hp_aws_params *base,
		     const char *set_key, int max_results, int max_pages, item_fn fn, void *ctx,
		     int *truncated)
{
	char *token = NULL;
	int page;

	*truncated = 0;
	for (page = 0;; page++) {
		struct hp_aws_params p = { 0 };
		struct hp_aws_result r;
		cJSON *set, *it;
		const char *next;
		size_t i;
		int rc;

		for (i = 0; i + 1 < base->n; i += 2)
			hp_aws_params_add(&p, base->kv[i], base->kv[i + 1]);
		hp_aws_params_addf(&p, "MaxResults", "%d", max_results);
		if (token)
			hp_aws_params_add(&p, "NextToken", token);
		rc = hp_aws_query(n->a, HP_SVC_EC2, op, &p, &r);
		hp_aws_params_release(&p);
		free(token);
		token = NULL;
		if (rc) {
			hp_collect_record(n->s, HP_SVC_EC2, op, &r);
			hp_aws_result_release(&r);
			return -1;
		}
		set = cJSON_GetObjectItemCaseSensitive(r.json, set_key);
		while (cJSON_IsArray(set) && (it = cJSON_DetachItemFromArray(set, 0)) != NULL)
			fn(ctx, it);
		next = hp_json_str(r.json, "nextToken");
		if (next && *next) {
			if (page + 1 >= max_pages)
				*truncated = 1;
			else
				token = xstrdup(next);
		}
		hp_aws_result_release(&r);
		if (!token)
			return 0;
	}
}

/* "Filter.1.Name=<name>" and one value per string of values. */
static void filter_params(struct hp_aws_params *p, const char *name, const cJSON *values)
{
	const cJSON *v;
	int k = 0;

	hp_aws_params_add(p, "Filter.1.Name", name);
	cJSON_ArrayForEach(v, values) {
		char key[48];

		if (!cJSON_IsString(v))
			continue;
		snprintf(key, sizeof(key), "Filter.1.Value.%d", ++k);
		hp_aws_params_add(p, key, v->valuestring);
	}
}

/* An EC2 list filtered by vpc-id into network[key]; absent when a page failed. */
static void list_by_vpc(struct net *n, const char *op, const char *set_key, int max_results,
			const cJSON *vpcs, const char *key)
{
	struct hp_aws_params p = { 0 };
	cJSON *items = cJSON_CreateArray();
	int trunc;

	filter_params(&p, "vpc-id", vpcs);
	if (ec2_pages(n, op, &p, set_key, max_results, LIST_PAGES, append_item, items, &trunc)) {
		cJSON_Delete(items);
	} else {
		char tkey[64];

		cJSON_AddItemToObject(n->root, key, items);
		snprintf(tkey, sizeof(tkey), "%s_truncated", key);
		cJSON_AddBoolToObject(n->root, tkey, trunc);
	}
	hp_aws_params_release(&p);
}

/* The security groups and subnets of the cluster and of every instance group's override. */
static void gather_targets(struct net *n, const struct hp_network_opts *o, cJSON *sgs, cJSON *subnets)
{
	const cJSON *vpc;
	struct hp_vpc_walk w;
	size_t i;

	for (vpc = hp_vpc_first(&w, n->cluster); vpc; vpc = hp_vpc_next(&w)) {
		add_all(sgs, hp_json_arr(vpc, "SecurityGroupIds"));
		add_all(subnets, hp_json_arr(vpc, "Subnets"));
	}
	for (i = 0; i < o->n_sg_ids; i++)
		add_unique(sgs, o->sg_ids[i]);
}

static int valid_eks_name(const char *s)
{
	size_t i;

	if (!s || !*s || strlen(s) > 100)
		return 0;
	for (i = 0; s[i]; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '-' && c != '_')))
			return 0;
	}
	return 1;
}

/* eks DescribeCluster; the EKS security groups go into eks_sgs. */
static void collect_eks(struct net *n, const struct hp_network_opts *o, cJSON *eks_sgs)
{
	const char *arn = hp_json_str(n->cluster, "Orchestrator.Eks.ClusterArn");
	const char *name = o->eks_name;
	struct hp_aws_result r;
	char path[160];
	cJSON *c;

	if (!name && arn) {
		const char *slash = strrchr(arn, '/');
		name = slash ? slash + 1 : NULL;
	}
	if (!valid_eks_name(name))
		return;
	cJSON_AddStringToObject(n->root, "eks_name", name);
	snprintf(path, sizeof(path), "/clusters/%s", name);
	if (hp_aws_rest_get(n->a, HP_SVC_EKS, "DescribeCluster", path, &r)) {
		hp_collect_record(n->s, HP_SVC_EKS, "DescribeCluster", &r);
		if (r.cls == HP_AWS_NOT_FOUND)
			cJSON_AddTrueToObject(n->root, "eks_missing");
		hp_aws_result_release(&r);
		return;
	}
	c = cJSON_DetachItemFromObjectCaseSensitive(r.json, "cluster");
	hp_aws_result_release(&r);
	if (!cJSON_IsObject(c)) {
		cJSON_Delete(c);
		return;
	}
	add_all(eks_sgs, hp_json_arr(c, "resourcesVpcConfig.securityGroupIds"));
	add_unique(eks_sgs, hp_json_str(c, "resourcesVpcConfig.clusterSecurityGroupId"));
	cJSON_AddItemToObject(n->root, "eks", c);
}

/* VPCs of the subnets read, then of the cluster's security groups. */
static cJSON *vpcs_of(const cJSON *subnets, const cJSON *sg_ids, const cJSON *sgs)
{
	cJSON *vpcs = cJSON_CreateArray();
	const cJSON *it;

	cJSON_ArrayForEach(it, subnets)
		if (cJSON_GetArraySize(vpcs) < MAX_VPCS)
			add_unique(vpcs, hp_json_str(it, "vpcId"));
	cJSON_ArrayForEach(it, sg_ids) {
		const cJSON *sg = cJSON_IsString(it) ?
			cJSON_GetObjectItemCaseSensitive(sgs, it->valuestring) : NULL;

		if (sg && cJSON_GetArraySize(vpcs) < MAX_VPCS)
			add_unique(vpcs, hp_json_str(sg, "vpcId"));
	}
	return vpcs;
}

static void collect_vpcs(struct net *n, const cJSON *vpcs)
{
	struct hp_aws_params p = { 0 };
	struct hp_aws_result r;
	cJSON *found;
	const cJSON *v;
	int k = 0;

	cJSON_ArrayForEach(v, vpcs) {
		char key[32];

		snprintf(key, sizeof(key), "VpcId.%d", ++k);
		hp_aws_params_add(&p, key, v->valuestring);
	}
	if (!hp_aws_query(n->a, HP_SVC_EC2, "DescribeVpcs", &p, &r)) {
		found = cJSON_CreateObject();
		take_items(r.json, "vpcSet", "vpcId", found);
		cJSON_AddItemToObject(n->root, "vpcs", found);
	} else {
		hp_collect_record(n->s, HP_SVC_EC2, "DescribeVpcs", &r);
	}
	hp_aws_result_release(&r);
	hp_aws_params_release(&p);
}

/* enableDnsSupport and enableDnsHostnames of each VPC; a member is absent when its read failed. */
static void collect_vpc_attributes(struct net *n, const cJSON *vpcs)
{
	struct hp_aws_result r;
	cJSON *attrs = cJSON_CreateObject();
	const cJSON *v;

	cJSON_ArrayForEach(v, vpcs) {
		static const char *const names[] = { "enableDnsSupport", "enableDnsHostnames" };
		cJSON *one = cJSON_CreateObject();
		size_t i;

		for (i = 0; i < HP_ARRAY_LEN(names); i++) {
			struct hp_aws_params q = { 0 };
			char path[64];

			hp_aws_params_add(&q, "VpcId", v->valuestring);
			hp_aws_params_add(&q, "Attribute", names[i]);
			if (!hp_aws_query(n->a, HP_SVC_EC2, "DescribeVpcAttribute", &q, &r)) {
				snprintf(path, sizeof(path), "%s.value", names[i]);
				if (hp_json_get(r.json, path))
					cJSON_AddBoolToObject(one, names[i], hp_json_bool(r.json, path, 0));
				else
					hp_snapshot_add_call(n->s, "ec2", "DescribeVpcAttribute", "parse",
							     "MalformedReply",
							     "malformed reply (HTTP 200): no attribute value in it",
							     200);
			} else {
				hp_collect_record(n->s, HP_SVC_EC2, "DescribeVpcAttribute", &r);
			}
			hp_aws_result_release(&r);
			hp_aws_params_release(&q);
		}
		cJSON_AddItemToObject(attrs, v->valuestring, one);
	}
	cJSON_AddItemToObject(n->root, "vpc_attributes", attrs);
}

struct eni_count {
	const cJSON *vpcs;
	double count, in_vpcs;
};

static void count_eni(void *ctx, cJSON *item)
{
	struct eni_count *c = ctx;
	const char *vpc = hp_json_str(item, "vpcId");

	c->count++;
	if (vpc && hp_json_has_str(c->vpcs, vpc))
		c->in_vpcs++;
	cJSON_Delete(item);
}

/*
 * The quota "Network interfaces per Region" is per region, so every
 * interface of the region is counted, not only the cluster VPC's. There is
 * no count API: the pages are read (1,000 interfaces each) and only the
 * numbers kept, up to HP_ENI_PAGES pages.
 */
static void collect_enis(struct net *n, const cJSON *vpcs)
{
	struct hp_aws_params none = { 0 };
	struct eni_count c = { vpcs, 0, 0 };
	int trunc;

	if (!ec2_pages(n, "DescribeNetworkInterfaces", &none, "networkInterfaceSet", 1000,
		       HP_ENI_PAGES, count_eni, &c, &trunc)) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddNumberToObject(e, "count", c.count);
		cJSON_AddNumberToObject(e, "in_vpcs", c.in_vpcs);
		cJSON_AddBoolToObject(e, "truncated", trunc);
		cJSON_AddItemToObject(n->root, "enis", e);
	}
	hp_aws_params_release(&none);
}

/*
 * Quota L-DF5E4CA3 is listed under service code "vpc"; older tooling asks
 * "ec2", so that is tried when "vpc" does not know the code.
 */
static void collect_eni_quota(struct net *n)
{
	static const char *const codes[] = { "vpc", "ec2" };
	struct hp_aws_result r;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(codes); i++) {
		cJSON *in = cJSON_CreateObject();
		int rc;

		cJSON_AddStringToObject(in, "ServiceCode", codes[i]);
		cJSON_AddStringToObject(in, "QuotaCode", "L-DF5E4CA3");
		rc = hp_aws_json(n->a, HP_SVC_QUOTAS, "GetServiceQuota", in, &r);
		cJSON_Delete(in);
		if (!rc && hp_json_get(r.json, "Quota.Value")) {
			cJSON *q = cJSON_CreateObject();
			const char *qn = hp_json_str(r.json, "Quota.QuotaName");

			cJSON_AddNumberToObject(q, "value", hp_json_num(r.json, "Quota.Value", 0));
			cJSON_AddStringToObject(q, "service_code", codes[i]);
			cJSON_AddStringToObject(q, "quota_code", "L-DF5E4CA3");
			if (qn)
				cJSON_AddStringToObject(q, "name", qn);
			cJSON_AddItemToObject(n->root, "eni_quota", q);
			hp_aws_result_release(&r);
			return;
		}
		if (!rc) {
			/* A quota without its value is no answer. */
			hp_snapshot_add_call(n->s, "service-quotas", "GetServiceQuota", "parse",
					     "MalformedReply",
					     "malformed reply (HTTP 200): no 'Quota.Value' in it", 200);
			hp_aws_result_release(&r);
			return;
		}
		if (r.cls != HP_AWS_NOT_FOUND || i + 1 == HP_ARRAY_LEN(codes)) {
			hp_collect_record(n->s, HP_SVC_QUOTAS, "GetServiceQuota", &r);
			hp_aws_result_release(&r);
			return;
		}
		hp_aws_result_release(&r);
	}
}

static void add_offering(void *ctx, cJSON *item)
{
	cJSON *offerings = ctx;
	const char *type = hp_json_str(item, "instanceType"), *loc = hp_json_str(item, "location");
	cJSON *list = type ? cJSON_GetObjectItemCaseSensitive(offerings, type) : NULL;

	if (cJSON_IsArray(list) && loc)
		add_unique(list, loc);
	cJSON_Delete(item);
}

/* One DescribeInstanceTypeOfferings for every group's type (EC2 names, "ml." dropped). */
static void collect_offerings(struct net *n)
{
	const cJSON *g;
	struct hp_aws_params p = { 0 };
	cJSON *types = cJSON_CreateArray(), *offerings = cJSON_CreateObject(), *t;
	int trunc;

	cJSON_ArrayForEach(g, hp_json_arr(n->cluster, "InstanceGroups")) {
		const char *type = hp_json_str(g, "InstanceType");

		if (type)
			add_unique(types, hp_starts_with(type, "ml.") ? type + 3 : type);
	}
	if (!cJSON_GetArraySize(types)) {
		cJSON_Delete(types);
		cJSON_Delete(offerings);
		return;
	}
	cJSON_ArrayForEach(t, types)
		cJSON_AddItemToObject(offerings, t->valuestring, cJSON_CreateArray());
	hp_aws_params_add(&p, "LocationType", "availability-zone");
	filter_params(&p, "instance-type", types);
	if (ec2_pages(n, "DescribeInstanceTypeOfferings", &p, "instanceTypeOfferingSet", 1000,
		      LIST_PAGES, add_offering, offerings, &trunc))
		cJSON_Delete(offerings);
	else
		cJSON_AddItemToObject(n->root, "offerings", offerings);
	hp_aws_params_release(&p);
	cJSON_Delete(types);
}

/*
 * The network collection as tasks (tasks.h), in the order a sequential run
 * makes its calls: EKS, then the security groups (the cluster's and EKS's),
 * the subnets; from those the VPCs (at most MAX_VPCS), each read by its own
 * step (DescribeVpcs, the DNS attributes, routes, endpoints, ENIs); the ENI
 * quota, which needs nothing; the offerings, after the subnets. A step
 * reads what the steps before it found from their scratch snapshots.
 */
enum net_step {
	STEP_EKS, STEP_SGS, STEP_SUBNETS, STEP_VPCS, STEP_VPC_ATTRS, STEP_ROUTES, STEP_ENDPOINTS,
	STEP_ENIS, STEP_QUOTA, STEP_OFFERINGS, STEP__COUNT
};

struct hp_net_plan {
	const struct hp_network_opts *o;
	unsigned parts;
	const cJSON *cluster;
	struct hp_tasks *ts;
	cJSON *root;                 /* the "network" object: sg_ids, subnet_ids, then merged keys */
	const cJSON *sg_ids, *subnet_ids;
	int task[STEP__COUNT];       /* index in ts, -1 when not added */
};

static struct hp_net_plan *plan_of(struct hp_task *t, struct net *n)
{
	struct hp_net_plan *p = t->ctx;

	n->a = t->a;
	n->s = &t->out;
	n->root = t->out.root;
	n->cluster = p->cluster;
	return p;
}

/* A key an earlier step found (NULL when that step did not run or found nothing). */
static const cJSON *found_by(const struct hp_net_plan *p, enum net_step step, const char *key)
{
	return p->task[step] < 0 ? NULL : hp_snapshot_get(&p->ts->t[p->task[step]].out, key);
}

static void step_eks(struct hp_task *t)
{
	struct net n;
	struct hp_net_plan *p = plan_of(t, &n);
	cJSON *eks_sgs = cJSON_CreateArray();

	if (p->parts & HP_NET_EKS)
		collect_eks(&n, p->o, eks_sgs);
	cJSON_AddItemToObject(n.root, "eks_sg_ids", eks_sgs);
}

static void step_sgs(struct hp_task *t)
{
	struct net n;
	struct hp_net_plan *p = plan_of(t, &n);
	cJSON *sgs = cJSON_CreateObject(), *errors = cJSON_CreateObject();
	cJSON *all = cJSON_Duplicate(p->sg_ids, 1);

	add_all(all, found_by(p, STEP_EKS, "eks_sg_ids"));
	describe_ids(&n, "DescribeSecurityGroups", "GroupId", "securityGroupInfo", "groupId", all, sgs,
		     errors);
	cJSON_Delete(all);
	cJSON_AddItemToObject(n.root, "security_groups", sgs);
	cJSON_AddItemToObject(n.root, "security_group_errors", errors);
}

static void step_subnets(struct hp_task *t)
{
	struct net n;
	struct hp_net_plan *p = plan_of(t, &n);
	cJSON *subnets = cJSON_CreateObject(), *errors = cJSON_CreateObject();

	describe_ids(&n, "DescribeSubnets", "SubnetId", "subnetSet", "subnetId", p->subnet_ids, subnets,
		     errors);
	cJSON_AddItemToObject(n.root, "subnets", subnets);
	cJSON_AddItemToObject(n.root, "subnet_errors", errors);
}

/* The VPCs of the subnets and security groups read (each step works it out alike). */
static cJSON *plan_vpcs(const struct hp_net_plan *p)
{
	return vpcs_of(found_by(p, STEP_SUBNETS, "subnets"), p->sg_ids,
		       found_by(p, STEP_SGS, "security_groups"));
}

static void step_vpc(struct hp_task *t, enum net_step step)
{
	struct net n;
	struct hp_net_plan *p = plan_of(t, &n);
	cJSON *vpcs = plan_vpcs(p);

	if (step == STEP_ENIS)
		collect_enis(&n, vpcs);
	else if (!cJSON_GetArraySize(vpcs))
		;  /* no VPC known: nothing of it to read */
	else if (step == STEP_VPCS)
		collect_vpcs(&n, vpcs);
	else if (step == STEP_VPC_ATTRS)
		collect_vpc_attributes(&n, vpcs);
	else if (step == STEP_ROUTES)
		list_by_vpc(&n, "DescribeRouteTables", "routeTableSet", 100, vpcs, "route_tables");
	else
		list_by_vpc(&n, "DescribeVpcEndpoints", "vpcEndpointSet", 1000, vpcs, "vpc_endpoints");
	cJSON_Delete(vpcs);
}

static void step_vpcs(struct hp_task *t) { step_vpc(t, STEP_VPCS); }
static void step_vpc_attrs(struct hp_task *t) { step_vpc(t, STEP_VPC_ATTRS); }
static void step_routes(struct hp_task *t) { step_vpc(t, STEP_ROUTES); }
static void step_endpoints(struct hp_task *t) { step_vpc(t, STEP_ENDPOINTS); }
static void step_enis(struct hp_task *t) { step_vpc(t, STEP_ENIS); }

static void step_quota(struct hp_task *t)
{
	struct net n;

	(void)plan_of(t, &n);
	collect_eni_quota(&n);
}

static void step_offerings(struct hp_task *t)
{
	struct net n;
	struct hp_net_plan *p = plan_of(t, &n);

	if (cJSON_GetArraySize(found_by(p, STEP_SUBNETS, "subnets")))
		collect_offerings(&n);
}

static void add_step(struct hp_net_plan *p, enum net_step step, const char *name, enum hp_svc svc,
		     hp_task_fn fn, uint32_t after)
{
	p->task[step] = hp_tasks_add(p->ts, name, svc, fn, p, after);
}

/* The `after` bit of an earlier step (none when it was not added). */
static uint32_t bit(const struct hp_net_plan *p, enum net_step step)
{
	return p->task[step] < 0 ? 0 : HP_TASK_BIT(p->task[step]);
}

struct hp_net_plan *hp_net_plan_new(const struct hp_network_opts *o, const struct hp_snapshot *s,
				    struct hp_tasks *ts)
{
	struct hp_net_plan *p;
	struct net n = { NULL, NULL, NULL, hp_snapshot_get(s, "cluster") };
	cJSON *sg_ids = cJSON_CreateArray(), *subnet_ids = cJSON_CreateArray();
	uint32_t ids;
	int i;

	gather_targets(&n, o, sg_ids, subnet_ids);
	if (!cJSON_GetArraySize(sg_ids) && !cJSON_GetArraySize(subnet_ids)) {
		/* No VpcConfig anywhere: nothing to read (cluster.vpc-config says so). */
		cJSON_Delete(sg_ids);
		cJSON_Delete(subnet_ids);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->o = o;
	p->parts = o->parts ? o->parts : HP_NET_ALL;
	p->cluster = n.cluster;
	p->ts = ts;
	p->root = cJSON_CreateObject();
	p->sg_ids = sg_ids;
	p->subnet_ids = subnet_ids;
	cJSON_AddItemToObject(p->root, "sg_ids", sg_ids);
	cJSON_AddItemToObject(p->root, "subnet_ids", subnet_ids);
	for (i = 0; i < STEP__COUNT; i++)
		p->task[i] = -1;
	add_step(p, STEP_EKS, "eks:DescribeCluster", HP_SVC_EKS, step_eks, 0);
	if (p->parts & (HP_NET_SG | HP_NET_EKS | HP_NET_VPC))
		add_step(p, STEP_SGS, "ec2:DescribeSecurityGroups", HP_SVC_EC2, step_sgs,
			 bit(p, STEP_EKS));
	if (!(p->parts & (HP_NET_VPC | HP_NET_OFFERINGS)))
		return p;
	add_step(p, STEP_SUBNETS, "ec2:DescribeSubnets", HP_SVC_EC2, step_subnets, 0);
	ids = bit(p, STEP_SGS) | bit(p, STEP_SUBNETS);
	if (p->parts & HP_NET_VPC) {
		add_step(p, STEP_VPCS, "ec2:DescribeVpcs", HP_SVC_EC2, step_vpcs, ids);
		add_step(p, STEP_VPC_ATTRS, "ec2:DescribeVpcAttribute", HP_SVC_EC2, step_vpc_attrs, ids);
		add_step(p, STEP_ROUTES, "ec2:DescribeRouteTables", HP_SVC_EC2, step_routes, ids);
		add_step(p, STEP_ENDPOINTS, "ec2:DescribeVpcEndpoints", HP_SVC_EC2, step_endpoints, ids);
		add_step(p, STEP_ENIS, "ec2:DescribeNetworkInterfaces", HP_SVC_EC2, step_enis, ids);
		add_step(p, STEP_QUOTA, "service-quotas:GetServiceQuota", HP_SVC_QUOTAS, step_quota, 0);
	}
	if (p->parts & HP_NET_OFFERINGS)
		add_step(p, STEP_OFFERINGS, "ec2:DescribeInstanceTypeOfferings", HP_SVC_EC2,
			 step_offerings, bit(p, STEP_SUBNETS));
	return p;
}

void hp_net_plan_finish(struct hp_net_plan *p, struct hp_snapshot *s)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < STEP__COUNT; i++)
		if (p->task[i] >= 0)
			hp_task_merge(&p->ts->t[p->task[i]], p->root, s);
	hp_snapshot_set(s, "network", p->root);
	free(p);
}

void hp_collect_network(struct hp_aws *a, const struct hp_network_opts *o, struct hp_snapshot *s)
{
	struct hp_tasks ts;
	struct hp_net_plan *p;

	hp_tasks_init(&ts);
	p = hp_net_plan_new(o, s, &ts);
	hp_tasks_run(&ts, a);
	hp_net_plan_finish(p, s);
	hp_tasks_release(&ts);
}
