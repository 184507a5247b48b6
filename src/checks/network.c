/*
 * The VPC around the cluster, from the "network" facts: one VPC for every
 * subnet and security group (§ B.1), DNS attributes (§ B.2), each subnet's
 * default route (§ B.3), the VPC endpoints a private VPC needs (§ B.4), EKS
 * alignment (§ B.5), free addresses and interface headroom (§ B.6), and
 * whether each instance type is offered where its subnets are (§ C.1).
 * Network ACLs, flow logs and live capacity are not judged.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"

/* Endpoints every private cluster VPC needs (com.amazonaws.<region>.<name>). */
static const char *const required_endpoints[] = {
	"s3", "ecr.api", "ecr.dkr", "sts", "ssm", "ssmmessages", "ec2messages", "ec2",
	"sagemaker.api", "sagemaker.runtime", "logs",
};

/* Where a subnet's default route (0.0.0.0/0) goes. */
enum egress {
	EG_UNKNOWN,    /* route tables not read, or none found */
	EG_NONE,       /* no default route */
	EG_BLACKHOLE,  /* a default route whose target is gone */
	EG_IGW,        /* internet gateway: a public subnet */
	EG_NAT,        /* NAT gateway */
	EG_VPCE,       /* a (Gateway Load Balancer) endpoint */
	EG_TGW,        /* transit gateway */
	EG_OTHER       /* NAT instance, peering, virtual private gateway, ... */
};

struct route {
	const char *rtb;      /* route table id, NULL when none was found */
	int main;             /* the VPC's main table (no explicit association) */
	enum egress kind;
	const char *target;   /* the default route's target id */
	const char *what;     /* "NAT gateway", "transit gateway", ... */
};

/* The entry for id in the map net[map]; NULL when either is absent. */
static const cJSON *member(const cJSON *net, const char *map, const char *id)
{
	return id ? cJSON_GetObjectItemCaseSensitive(hp_json_get(net, map), id) : NULL;
}

/* An id from a list of ids; NULL for anything but a string (a replayed snapshot may hold any). */
static const char *id_of(const cJSON *v)
{
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * The ids of ids_key that could not be read: neither in found_key nor
 * reported missing (not_found) in err_key. Appends "id (code)" to out and
 * returns how many. An input that was never read cannot pass a check.
 */
static int unread_ids(const cJSON *net, const char *ids_key, const char *found_key,
		      const char *err_key, struct hp_buf *out)
{
	const cJSON *id;
	int n = 0;

	cJSON_ArrayForEach(id, hp_json_arr(net, ids_key)) {
		const cJSON *err = member(net, err_key, id_of(id));

		if (!id_of(id) || member(net, found_key, id_of(id)) ||
		    (err && !strcmp(hp_check_str(err, "class", ""), "not_found")))
			continue;
		if (n < 10)
			hp_buf_printf(out, "%s%.40s (%.64s)", n ? ", " : "", id->valuestring,
				      err ? hp_check_str(err, "code", hp_check_str(err, "class", "error"))
					  : "not read");
		n++;
	}
	if (n > 10)
		hp_buf_printf(out, " and %d more", n - 10);
	return n;
}

/* Append s to a ", "-separated list. */
static void list_add(struct hp_buf *b, const char *s)
{
	if (b->len)
		hp_buf_puts(b, ", ");
	hp_buf_puts(b, s);
}

/* "subnet-x (us-west-2a)" or just the id when the subnet was not read. */
static const char *subnet_label(const cJSON *net, const char *id, char *out, size_t n)
{
	const char *az = hp_json_str(member(net, "subnets", id), "availabilityZone");

	if (az)
		snprintf(out, n, "%s (%s)", id, az);
	else
		snprintf(out, n, "%s", id);
	return out;
}

/*
 * The distinct VPCs of the cluster subnets that were read (or, when none
 * was, of its security groups) into vpcs (an array the caller frees).
 */
static cJSON *cluster_vpcs(const cJSON *net)
{
	cJSON *vpcs = cJSON_CreateArray();
	const cJSON *id;

	cJSON_ArrayForEach(id, hp_json_arr(net, "subnet_ids")) {
		const char *v = hp_json_str(member(net, "subnets", id_of(id)), "vpcId");

		if (v && !hp_json_has_str(vpcs, v))
			cJSON_AddItemToArray(vpcs, cJSON_CreateString(v));
	}
	if (cJSON_GetArraySize(vpcs))
		return vpcs;
	cJSON_ArrayForEach(id, hp_json_arr(net, "sg_ids")) {
		const char *v = hp_json_str(member(net, "security_groups", id_of(id)), "vpcId");

		if (v && !hp_json_has_str(vpcs, v))
			cJSON_AddItemToArray(vpcs, cJSON_CreateString(v));
	}
	return vpcs;
}

static const cJSON *default_route(const cJSON *rt)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, hp_json_arr(rt, "routeSet")) {
		const char *dst = hp_json_str(r, "destinationCidrBlock");

		if (dst && !strcmp(dst, "0.0.0.0/0"))
			return r;
	}
	return NULL;
}

static void classify(const cJSON *r, struct route *out)
{
	static const struct {
		const char *key, *prefix, *what;
		enum egress kind;
	} targets[] = {
		{ "natGatewayId", "", "NAT gateway", EG_NAT },
		{ "gatewayId", "igw-", "internet gateway", EG_IGW },
		{ "gatewayId", "vpce-", "VPC endpoint", EG_VPCE },
		{ "gatewayId", "vgw-", "virtual private gateway", EG_OTHER },
		{ "transitGatewayId", "", "transit gateway", EG_TGW },
		{ "networkInterfaceId", "", "network interface (NAT instance or appliance)", EG_OTHER },
		{ "instanceId", "", "instance (NAT instance)", EG_OTHER },
		{ "vpcPeeringConnectionId", "", "VPC peering connection", EG_OTHER },
		{ "carrierGatewayId", "", "carrier gateway", EG_OTHER },
		{ "localGatewayId", "", "local gateway", EG_OTHER },
		{ "coreNetworkArn", "", "core network", EG_OTHER },
		{ "gatewayId", "", "gateway", EG_OTHER },
	};
	const char *state = hp_json_str(r, "state");
	size_t i;

	out->kind = EG_OTHER;
	out->what = "target";
	out->target = "?";
	for (i = 0; i < HP_ARRAY_LEN(targets); i++) {
		const char *v = hp_json_str(r, targets[i].key);

		if (v && *v && hp_starts_with(v, targets[i].prefix)) {
			out->kind = targets[i].kind;
			out->what = targets[i].what;
			out->target = v;
			break;
		}
	}
	if (state && !strcmp(state, "blackhole"))
		out->kind = EG_BLACKHOLE;
}

/* The route table a subnet uses (explicit association, else its VPC's main table). */
static void route_of(const cJSON *net, const char *subnet, struct route *out)
{
	const cJSON *tables = hp_json_arr(net, "route_tables"), *rt, *a, *found = NULL, *dr;
	const char *vpc = hp_json_str(member(net, "subnets", subnet), "vpcId");

	memset(out, 0, sizeof(*out));
	out->kind = EG_UNKNOWN;
	if (!tables)
		return;
	cJSON_ArrayForEach(rt, tables) {
		cJSON_ArrayForEach(a, hp_json_arr(rt, "associationSet")) {
			const char *s = hp_json_str(a, "subnetId");

			if (s && !strcmp(s, subnet))
				found = rt;
		}
	}
	/* A cut list may hide the subnet's own association: then the main table proves nothing. */
	if (!found && vpc && !hp_json_bool(net, "route_tables_truncated", 0)) {
		cJSON_ArrayForEach(rt, tables) {
			const char *v = hp_json_str(rt, "vpcId");

			cJSON_ArrayForEach(a, hp_json_arr(rt, "associationSet"))
				if (hp_json_bool(a, "main", 0) && v && !strcmp(v, vpc))
					found = rt;
		}
		out->main = found != NULL;
	}
	if (!found)
		return;
	out->rtb = hp_check_str(found, "routeTableId", "?");
	dr = default_route(found);
	if (!dr)
		out->kind = EG_NONE;
	else
		classify(dr, out);
}

/* A route that lets nodes out (not none, not a blackhole, not an internet gateway). */
static int has_egress(enum egress k)
{
	return k == EG_NAT || k == EG_VPCE || k == EG_TGW || k == EG_OTHER;
}

/* "com.amazonaws.us-west-2.ecr.api" -> "ecr.api"; NULL for other names. */
static const char *short_service(const char *name)
{
	const char *p;

	if (!name || !hp_starts_with(name, "com.amazonaws."))
		return NULL;
	p = strchr(name + strlen("com.amazonaws."), '.');
	return p ? p + 1 : NULL;
}

static int available(const cJSON *ep)
{
	const char *st = hp_json_str(ep, "state");

	return st && !strcasecmp(st, "available");
}

/* The endpoint for svc in vpc, an available one first; NULL when none. */
static const cJSON *endpoint_for(const cJSON *net, const char *vpc, const char *svc)
{
	const cJSON *ep, *any = NULL;

	cJSON_ArrayForEach(ep, hp_json_arr(net, "vpc_endpoints")) {
		const char *v = hp_json_str(ep, "vpcId"), *s = short_service(hp_json_str(ep, "serviceName"));

		if (!v || !s || strcmp(v, vpc) || strcmp(s, svc))
			continue;
		if (available(ep))
			return ep;
		any = ep;
	}
	return any;
}

static int eks_cluster(const struct hp_snapshot *snap, const cJSON *net)
{
	return !strcmp(hp_snap_orchestrator(snap), "EKS") || hp_json_str(net, "eks_name");
}

/* The i-th endpoint service a cluster needs, NULL past the end ("eks" on EKS clusters). */
static const char *needed_service(const struct hp_snapshot *snap, const cJSON *net, size_t i)
{
	if (i < HP_ARRAY_LEN(required_endpoints))
		return required_endpoints[i];
	if (i == HP_ARRAY_LEN(required_endpoints) && eks_cluster(snap, net))
		return "eks";
	return NULL;
}

/*
 * Whether nodes in a subnet of vpc using route table rtb (NULL: unknown)
 * can use the svc endpoint: it exists, is available, and (a gateway
 * endpoint) is associated with rtb. When not, a reason may go into note.
 */
static int usable(const cJSON *net, const char *vpc, const char *svc, const char *rtb,
		  struct hp_buf *note)
{
	const cJSON *ep = endpoint_for(net, vpc, svc);

	if (!ep)
		return 0;
	if (!available(ep)) {
		hp_buf_printf(note, "%s: %s is %s", svc, hp_check_str(ep, "vpcEndpointId", "?"),
			      hp_check_str(ep, "state", "?"));
		return 0;
	}
	if (!strcasecmp(hp_check_str(ep, "vpcEndpointType", ""), "Gateway") && rtb &&
	    !hp_json_has_str(hp_json_arr(ep, "routeTableIdSet"), rtb)) {
		hp_buf_printf(note, "%s: gateway endpoint %s is not associated with %s", svc,
			      hp_check_str(ep, "vpcEndpointId", "?"), rtb);
		return 0;
	}
	return 1;
}

/* The needed endpoints a subnet cannot use, into missing (", "-list) and notes ("; "-list). */
static void missing_for_subnet(const struct hp_snapshot *snap, const cJSON *net, const char *subnet,
			       struct hp_buf *missing, struct hp_buf *notes)
{
	const char *vpc = hp_json_str(member(net, "subnets", subnet), "vpcId"), *svc;
	struct route r;
	size_t i;

	if (!vpc)
		return;
	route_of(net, subnet, &r);
	for (i = 0; (svc = needed_service(snap, net, i)) != NULL; i++) {
		struct hp_buf note = HP_BUF_INIT(HP_MAX_LINE);

		if (!usable(net, vpc, svc, r.rtb, &note)) {
			list_add(missing, svc);
			if (note.len)
				hp_buf_printf(notes, "%s%s", notes->len ? "; " : "", note.buf);
		}
		hp_buf_release(&note);
	}
}

/* ---------------------------------------------------------------- § B.1 */

static void run_vpc(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *net = hp_snapshot_get(snap, "network"), *id;
	cJSON *vpcs;
	int subnets = 0, groups = 0, bad = 0, unread = 0;
	char label[160];

	if (!net)
		return;
	cJSON_ArrayForEach(id, hp_json_arr(net, "subnet_ids")) {
		const cJSON *err = member(net, "subnet_errors", id_of(id));

		if (member(net, "subnets", id_of(id)))
			subnets++;
		else if (!err || strcmp(hp_check_str(err, "class", ""), "not_found"))
			unread++;  /* never read: neither in the VPC nor missing */
		else if (err && !strcmp(hp_check_str(err, "class", ""), "not_found"))
			hp_finding_var(hp_emit(em, HP_TAG_FAIL, "Subnet %s named in the cluster "
					       "configuration does not exist (%s)", id->valuestring,
					       hp_check_str(err, "code", "not found")),
				       "SUBNET_ID", id->valuestring);
	}
	vpcs = cluster_vpcs(net);
	if (subnets && cJSON_GetArraySize(vpcs) > 1) {
		struct hp_finding *f = hp_emit(em, HP_TAG_FAIL, "Cluster subnets span %d VPCs — use "
					       "subnets of one VPC", cJSON_GetArraySize(vpcs));
		const cJSON *v;

		cJSON_ArrayForEach(v, vpcs) {
			struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);

			hp_buf_printf(&line, "%s:", v->valuestring);
			cJSON_ArrayForEach(id, hp_json_arr(net, "subnet_ids")) {
				const char *sv = hp_json_str(member(net, "subnets", id_of(id)), "vpcId");

				if (sv && !strcmp(sv, v->valuestring))
					hp_buf_printf(&line, " %s", subnet_label(net, id->valuestring, label,
										 sizeof(label)));
			}
			hp_finding_evidence(f, line.buf);
			hp_buf_release(&line);
		}
		bad = 1;
	}
	cJSON_ArrayForEach(id, hp_json_arr(net, "sg_ids")) {
		const char *sv = hp_json_str(member(net, "security_groups", id_of(id)), "vpcId");

		if (!sv) {
			unread++;
			continue;
		}
		groups++;
		if (cJSON_GetArraySize(vpcs) == 1 && strcmp(sv, cJSON_GetArrayItem(vpcs, 0)->valuestring)) {
			hp_finding_var(hp_emit(em, HP_TAG_FAIL, "Security group %s is in %s but the "
					       "cluster %s in %s — use a group of the subnets' VPC",
					       id->valuestring, sv,
					       subnets ? "subnets are" : "other groups are",
					       cJSON_GetArrayItem(vpcs, 0)->valuestring),
				       "SG_ID", id->valuestring);
			bad = 1;
		}
	}
	{
		struct hp_buf us = HP_BUF_INIT(HP_MAX_LINE), ug = HP_BUF_INIT(HP_MAX_LINE);
		int nus = unread_ids(net, "subnet_ids", "subnets", "subnet_errors", &us);
		int nug = unread_ids(net, "sg_ids", "security_groups", "security_group_errors", &ug);

		/* Whatever could not be read is named; the check cannot pass without it. */
		if (nus)
			hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL,
				 "One-VPC check incomplete: %d subnet%s could not be read "
				 "(ec2:DescribeSubnets): %s", nus, nus == 1 ? "" : "s", us.buf);
		if (nug)
			hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL,
				 "One-VPC check incomplete: %d security group%s could not be read "
				 "(ec2:DescribeSecurityGroups): %s", nug, nug == 1 ? "" : "s", ug.buf);
		if (!bad && !unread && !nus && !nug && cJSON_GetArraySize(vpcs) == 1 &&
		    (subnets || groups))
			hp_emit(em, HP_TAG_PASS, "All %d subnet%s and %d security group%s are in %s",
				subnets, subnets == 1 ? "" : "s", groups, groups == 1 ? "" : "s",
				cJSON_GetArrayItem(vpcs, 0)->valuestring);
		hp_buf_release(&us);
		hp_buf_release(&ug);
	}
	cJSON_Delete(vpcs);
}

/* ---------------------------------------------------------------- § B.2 */

static void run_dns(const struct hp_snapshot *snap, struct hp_emit *em)
{
	static const char *const attrs[] = { "enableDnsSupport", "enableDnsHostnames" };
	const cJSON *net = hp_snapshot_get(snap, "network"), *v;
	cJSON *vpcs;

	if (!net)
		return;
	vpcs = cluster_vpcs(net);
	cJSON_ArrayForEach(v, vpcs) {
		const cJSON *a = member(net, "vpc_attributes", v->valuestring);
		int on = 0, known = 0;
		size_t i;

		for (i = 0; i < HP_ARRAY_LEN(attrs); i++) {
			const cJSON *val = cJSON_GetObjectItemCaseSensitive(a, attrs[i]);

			if (!cJSON_IsBool(val))
				continue;
			known++;
			if (cJSON_IsTrue(val))
				on++;
			else
				hp_finding_var(hp_emit(em, HP_TAG_FAIL, "VPC %s has %s off — node "
						       "hostnames, in-cluster service names and Slurm "
						       "node names will not resolve", v->valuestring,
						       attrs[i]),
					       "VPC_ID", v->valuestring);
		}
		if (known == 2 && on == 2)
			hp_emit(em, HP_TAG_PASS, "VPC %s: enableDnsSupport and enableDnsHostnames are on",
				v->valuestring);
	}
	cJSON_Delete(vpcs);
}

/* ---------------------------------------------------------------- § B.3 */

/* The subnet, its route table and its VPC: what a routing finding is about. */
static void route_vars(struct hp_finding *f, const cJSON *net, const char *subnet,
		       const struct route *r)
{
	const char *vpc = hp_json_str(member(net, "subnets", subnet), "vpcId");

	if (!f)
		return;
	hp_finding_var(f, "SUBNET_ID", subnet);
	if (r->rtb)
		hp_finding_var(f, "ROUTE_TABLE_ID", r->rtb);
	if (vpc)
		hp_finding_var(f, "VPC_ID", vpc);
}

static void run_routing(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *net = hp_snapshot_get(snap, "network"), *id;

	if (!hp_json_arr(net, "route_tables"))
		return;
	cJSON_ArrayForEach(id, hp_json_arr(net, "subnet_ids")) {
		char label[160], via[128];
		struct route r;
		struct hp_buf missing = HP_BUF_INIT(HP_MAX_LINE), notes = HP_BUF_INIT(HP_MAX_LINE);
		struct hp_finding *f;

		if (!id_of(id))
			continue;

		subnet_label(net, id->valuestring, label, sizeof(label));
		route_of(net, id->valuestring, &r);
		snprintf(via, sizeof(via), "%s%s", r.rtb ? r.rtb : "", r.main ? ", main route table" : "");
		switch (r.kind) {
		case EG_UNKNOWN:
			if (hp_json_bool(net, "route_tables_truncated", 0))
				HP_CHECK_INFO(em, "Subnet %s: its route table is not among the route "
					      "tables read (the list was cut) — routing not checked", label);
			else if (member(net, "subnets", id->valuestring))
				hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL, "Subnet %s: no route table "
					 "found (neither an association nor a main table)", label);
			break;
		case EG_NAT:
			hp_emit(em, HP_TAG_PASS, "Subnet %s: default route to NAT gateway %s (%s)", label,
				r.target, via);
			break;
		case EG_IGW:
			route_vars(hp_emit(em, HP_TAG_FAIL, "Subnet %s sends 0.0.0.0/0 to internet "
					   "gateway %s (%s): HyperPod supports private subnets only — "
					   "route it through a NAT gateway", label, r.target, via),
				   net, id->valuestring, &r);
			break;
		case EG_VPCE:
			HP_CHECK_INFO(em, "Subnet %s: default route to VPC endpoint %s (%s) — "
				      "endpoint-only or firewall routing", label, r.target, via);
			break;
		case EG_TGW:
		case EG_OTHER:
			HP_CHECK_INFO(em, "Subnet %s: default route to %s %s (%s) — internet access "
				      "depends on what lies behind it", label, r.what, r.target, via);
			break;
		case EG_BLACKHOLE:
			route_vars(hp_emit(em, HP_TAG_WARN, "Subnet %s: the default route to %s %s "
					   "(%s) is a blackhole — its target no longer exists, so nodes "
					   "have no way out", label, r.what, r.target, via),
				   net, id->valuestring, &r);
			break;
		case EG_NONE:
			if (!hp_json_arr(net, "vpc_endpoints"))
				break;
			missing_for_subnet(snap, net, id->valuestring, &missing, &notes);
			if (!missing.len) {
				hp_emit(em, HP_TAG_PASS, "Subnet %s has no default route (%s): fully private, "
					"and the required VPC endpoints exist", label, via);
			} else {
				f = hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL,
					     "Subnet %s has no default route (%s) and no VPC endpoints for "
					     "%s — nodes there cannot reach those AWS services", label, via,
					     missing.buf);
				if (notes.len)
					hp_finding_evidence(f, notes.buf);
				route_vars(f, net, id->valuestring, &r);
			}
			break;
		}
		hp_buf_release(&missing);
		hp_buf_release(&notes);
	}
}

/* ---------------------------------------------------------------- § B.4 */

static void endpoints_in(const struct hp_snapshot *snap, struct hp_emit *em, const cJSON *net,
			 const char *vpc)
{
	struct hp_buf present = HP_BUF_INIT(HP_MAX_LINE), missing = HP_BUF_INIT(HP_MAX_LINE),
		      notes = HP_BUF_INIT(HP_MAX_LINE), cut_off = HP_BUF_INIT(HP_MAX_LINE);
	const cJSON *id;
	const char *svc;
	int known_routes = 0;
	size_t i;
	char label[160];

	cJSON_ArrayForEach(id, hp_json_arr(net, "subnet_ids")) {
		const char *v = hp_json_str(member(net, "subnets", id_of(id)), "vpcId");
		struct route r;

		if (!v || strcmp(v, vpc))
			continue;
		route_of(net, id->valuestring, &r);
		if (r.kind == EG_UNKNOWN)
			continue;
		known_routes++;
		if (!has_egress(r.kind))
			list_add(&cut_off, subnet_label(net, id->valuestring, label, sizeof(label)));
	}
	/* A service is missing when any subnet of this VPC cannot use it. */
	for (i = 0; (svc = needed_service(snap, net, i)) != NULL; i++) {
		struct hp_buf note = HP_BUF_INIT(HP_MAX_LINE);
		int ok = 1, subnets = 0;

		cJSON_ArrayForEach(id, hp_json_arr(net, "subnet_ids")) {
			const char *v = hp_json_str(member(net, "subnets", id_of(id)), "vpcId");
			struct route r;

			if (!v || strcmp(v, vpc))
				continue;
			subnets++;
			route_of(net, id->valuestring, &r);
			if (ok && !usable(net, vpc, svc, r.rtb, &note))
				ok = 0;
		}
		if (!subnets && !usable(net, vpc, svc, NULL, &note))
			ok = 0;
		if (!ok) {
			list_add(&missing, svc);
			if (note.len)
				hp_buf_printf(&notes, "%s%s", notes.len ? "; " : "", note.buf);
		} else if (!strcmp(svc, "s3")) {
			hp_buf_printf(&present, "%ss3 (%s)", present.len ? ", " : "",
				      hp_check_str(endpoint_for(net, vpc, svc), "vpcEndpointType", "?"));
		} else {
			list_add(&present, svc);
		}
		hp_buf_release(&note);
	}
	if (missing.len) {
		struct hp_finding *f;

		if (cut_off.len)
			f = hp_emitx(em, HP_TAG_FAIL, HP_P1, NULL, NULL,
				     "VPC %s lacks endpoints for %s, and subnets %s have no NAT route — "
				     "nodes there cannot reach these AWS services", vpc, missing.buf,
				     cut_off.buf);
		else
			f = hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL,
				     "VPC %s has no endpoints for %s — not needed while the subnets reach "
				     "AWS through NAT%s, but a private VPC without internet needs them all",
				     vpc, missing.buf, known_routes ? "" : " (routes unknown)");
		if (notes.len)
			hp_finding_evidence(f, notes.buf);
		hp_finding_var(f, "VPC_ID", vpc);
	}
	if (present.len)
		hp_emit(em, HP_TAG_PASS, "VPC endpoints in %s: %s", vpc, present.buf);
	if (!endpoint_for(net, vpc, "fsx"))
		HP_CHECK_INFO(em, "No fsx endpoint in %s (needed only when nodes use FSx without a NAT "
			      "route)", vpc);
	hp_buf_release(&present);
	hp_buf_release(&missing);
	hp_buf_release(&notes);
	hp_buf_release(&cut_off);
}

static void run_endpoints(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *net = hp_snapshot_get(snap, "network"), *v;
	cJSON *vpcs;

	if (!hp_json_arr(net, "vpc_endpoints"))
		return;
	vpcs = cluster_vpcs(net);
	cJSON_ArrayForEach(v, vpcs)
		endpoints_in(snap, em, net, v->valuestring);
	cJSON_Delete(vpcs);
}

/* ---------------------------------------------------------------- § B.6 */

#define IPS_FAIL 5
#define IPS_WARN 50

static void run_subnet_ips(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *net = hp_snapshot_get(snap, "network"), *id, *line;
	cJSON *fine = cJSON_CreateArray();

	cJSON_ArrayForEach(id, hp_json_arr(net, "subnet_ids")) {
		const cJSON *sn = cJSON_IsString(id) ? member(net, "subnets", id->valuestring) : NULL;
		double free_ips = hp_json_num(sn, "availableIpAddressCount", -1);
		char label[160], text[256];

		if (!sn || free_ips < 0)
			continue;
		subnet_label(net, id->valuestring, label, sizeof(label));
		if (free_ips < IPS_FAIL) {
			hp_finding_var(hp_emitx(em, HP_TAG_FAIL, HP_P1, NULL, NULL, "Subnet %s has "
						"only %.0f free IP address%s — new and replacement "
						"nodes cannot get addresses", label, free_ips,
						free_ips == 1 ? "" : "es"),
				       "SUBNET_ID", id->valuestring);
		} else if (free_ips < IPS_WARN) {
			hp_finding_var(hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL, "Subnet %s has "
						"%.0f free IP addresses (fewer than %d) — consider a "
						"larger subnet", label, free_ips, IPS_WARN),
				       "SUBNET_ID", id->valuestring);
		} else {
			snprintf(text, sizeof(text), "%s: %.0f free", label, free_ips);
			cJSON_AddItemToArray(fine, cJSON_CreateString(text));
		}
	}
	{
		struct hp_buf us = HP_BUF_INIT(HP_MAX_LINE);
		int nus = unread_ids(net, "subnet_ids", "subnets", "subnet_errors", &us);

		if (nus)
			hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL,
				 "Free IP addresses not checked for %d subnet%s that could not be read "
				 "(ec2:DescribeSubnets): %s", nus, nus == 1 ? "" : "s", us.buf);
		hp_buf_release(&us);
	}
	if (cJSON_GetArraySize(fine)) {
		int n = cJSON_GetArraySize(fine);
		struct hp_finding *ok = hp_emit(em, HP_TAG_PASS, "%d subnet%s with at least %d free IP "
						"addresses", n, n == 1 ? "" : "s", IPS_WARN);

		cJSON_ArrayForEach(line, fine)
			hp_finding_evidence(ok, line->valuestring);
	}
	cJSON_Delete(fine);
}

static void run_eni(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *net = hp_snapshot_get(snap, "network");
	const cJSON *enis = hp_json_get(net, "enis"), *q = hp_json_get(net, "eni_quota");
	const char *region = hp_check_str(hp_snapshot_get(snap, "meta"), "region", "the region");
	double count = hp_json_num(enis, "count", -1), quota = hp_json_num(q, "value", -1);
	const char *least = hp_json_bool(enis, "truncated", 0) ? "at least " : "";
	struct hp_finding *f;
	char line[160];

	if (count < 0)
		return;
	if (quota <= 0) {
		hp_emit(em, HP_TAG_WARN, "Could not determine ENI headroom: %s%.0f network interfaces in "
			"%s, quota L-DF5E4CA3 (Network interfaces per Region) unknown — verify manually",
			least, count, region);
		return;
	}
	if (count * 100 > quota * 80)
		f = hp_emit(em, HP_TAG_WARN, "%s%.0f of %.0f network interfaces in %s are in use (%.1f%%, "
			    "above 80%% of quota L-DF5E4CA3) — new nodes may fail to get interfaces",
			    least, count, quota, region, count * 100 / quota);
	else
		f = hp_emit(em, HP_TAG_PASS, "%s%.0f of %.0f network interfaces in %s are in use (%.1f%%)",
			    least, count, quota, region, count * 100 / quota);
	snprintf(line, sizeof(line), "%.0f of them in the cluster VPC; quota from service code '%s'",
		 hp_json_num(enis, "in_vpcs", 0), hp_check_str(q, "service_code", "?"));
	hp_finding_evidence(f, line);
}

/* ---------------------------------------------------------------- § B.5 */

/* A rule of an EKS security group admitting one of the HyperPod groups; its id or NULL. */
static const char *admits(const cJSON *eks_sg, const cJSON *hp_sgs)
{
	const cJSON *perm, *g;

	cJSON_ArrayForEach(perm, hp_json_arr(eks_sg, "ipPermissions"))
		cJSON_ArrayForEach(g, hp_json_arr(perm, "groups")) {
			const char *gid = hp_json_str(g, "groupId");

			if (gid && hp_json_has_str(hp_sgs, gid))
				return gid;
		}
	return NULL;
}

static void eks_security_groups(struct hp_emit *em, const cJSON *net, const char *name)
{
	const cJSON *hp_sgs = hp_json_arr(net, "sg_ids"), *eks_sgs = hp_json_arr(net, "eks_sg_ids");
	const cJSON *id;
	struct hp_buf unread = HP_BUF_INIT(HP_MAX_LINE), list = HP_BUF_INIT(HP_MAX_LINE);

	cJSON_ArrayForEach(id, hp_sgs) {
		if (id_of(id) && hp_json_has_str(eks_sgs, id->valuestring)) {
			hp_emit(em, HP_TAG_PASS, "HyperPod security group %s is attached to EKS cluster '%s'",
				id->valuestring, name);
			goto out;
		}
	}
	cJSON_ArrayForEach(id, eks_sgs) {
		const cJSON *sg = member(net, "security_groups", id_of(id));
		const char *from;

		if (!id_of(id))
			continue;

		list_add(&list, id->valuestring);
		if (!sg) {
			list_add(&unread, id->valuestring);
			continue;
		}
		from = admits(sg, hp_sgs);
		if (from) {
			hp_emit(em, HP_TAG_PASS, "EKS security group %s admits traffic from HyperPod "
				"security group %s", id->valuestring, from);
			goto out;
		}
	}
	if (unread.len) {
		hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL, "Cannot read EKS security group%s %s — "
			 "whether the HyperPod nodes can reach EKS cluster '%s' was not checked",
			 strchr(unread.buf, ',') ? "s" : "", unread.buf, name);
	} else if (cJSON_GetArraySize(hp_sgs)) {
		struct hp_buf mine = HP_BUF_INIT(HP_MAX_LINE);

		cJSON_ArrayForEach(id, hp_sgs)
			if (cJSON_IsString(id))
				list_add(&mine, id->valuestring);
		hp_emitx(em, HP_TAG_FAIL, HP_P1, "A+B.5", NULL,
			 "No HyperPod security group (%s) is attached to EKS cluster '%s', and its "
			 "security groups (%s) admit no traffic from them — nodes cannot reach the "
			 "control plane", mine.buf, name, list.len ? list.buf : "none");
		hp_buf_release(&mine);
	}
out:
	hp_buf_release(&unread);
	hp_buf_release(&list);
}

static void run_eks(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *net = hp_snapshot_get(snap, "network");
	const cJSON *eks = hp_json_get(net, "eks");
	const char *name = hp_json_str(net, "eks_name"), *mode, *status, *ev;
	char clip[HP_CHECK_CLIP_SIZE];
	cJSON *vpcs;

	if (!name)
		return;
	hp_check_clip(name, clip);
	if (hp_json_bool(net, "eks_missing", 0)) {
		hp_emit(em, HP_TAG_FAIL, "EKS cluster '%s' (the cluster's orchestrator) was not found in "
			"%s — it was deleted or lives in another region or account", clip,
			hp_check_str(hp_snapshot_get(snap, "meta"), "region", "this region"));
		return;
	}
	if (!cJSON_IsObject(eks))
		return;
	status = hp_check_str(eks, "status", "");
	if (*status && strcmp(status, "ACTIVE"))
		hp_emit(em, HP_TAG_WARN, "EKS cluster '%s' is %s, not ACTIVE", clip, status);

	vpcs = cluster_vpcs(net);
	ev = hp_json_str(eks, "resourcesVpcConfig.vpcId");
	if (ev && cJSON_GetArraySize(vpcs) == 1) {
		const char *hv = cJSON_GetArrayItem(vpcs, 0)->valuestring;

		if (strcmp(ev, hv))
			hp_emit(em, HP_TAG_FAIL, "EKS cluster '%s' is in %s but the HyperPod cluster is in "
				"%s — both must use one VPC", clip, ev, hv);
		else
			hp_emit(em, HP_TAG_PASS, "EKS cluster '%s' and the HyperPod cluster share %s",
				clip, hv);
	}
	cJSON_Delete(vpcs);
	eks_security_groups(em, net, clip);

	mode = hp_json_str(eks, "accessConfig.authenticationMode");
	if (mode && !strcmp(mode, "CONFIG_MAP"))
		hp_emitx(em, HP_TAG_WARN, HP_P1, "B.1", NULL, "EKS cluster '%s' uses authentication mode "
			 "CONFIG_MAP — HyperPod needs access entries (API or API_AND_CONFIG_MAP)", clip);
	else if (mode && (!strcmp(mode, "API") || !strcmp(mode, "API_AND_CONFIG_MAP")))
		hp_emit(em, HP_TAG_PASS, "EKS cluster '%s' authentication mode %s", clip, mode);
	else
		HP_CHECK_INFO(em, "EKS cluster '%s': authentication mode %s", clip,
			      mode ? mode : "not reported");

	if (!hp_json_bool(eks, "resourcesVpcConfig.endpointPublicAccess", 1) &&
	    hp_json_bool(eks, "resourcesVpcConfig.endpointPrivateAccess", 0))
		hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL, "EKS cluster '%s' has a private-only API "
			 "endpoint — nodes reach it only from inside the VPC, which needs DNS support "
			 "(§ B.2) and security group paths", clip);
	else if (hp_json_bool(eks, "resourcesVpcConfig.endpointPublicAccess", 0))
		hp_emit(em, HP_TAG_PASS, "EKS cluster '%s' API endpoint: public%s", clip,
			hp_json_bool(eks, "resourcesVpcConfig.endpointPrivateAccess", 0) ?
			" and private" : "");
}

/* ---------------------------------------------------------------- § C.1 */

static void run_capacity(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *net = hp_snapshot_get(snap, "network"), *offerings = hp_json_get(net, "offerings");
	const cJSON *cluster = hp_snapshot_get(snap, "cluster"), *g;
	struct hp_buf passed = HP_BUF_INIT(HP_MAX_LINE), names = HP_BUF_INIT(HP_MAX_LINE);
	int groups = 0, good_groups = 0;

	if (!cJSON_IsObject(offerings))
		return;
	cJSON_ArrayForEach(g, hp_json_arr(cluster, "InstanceGroups")) {
		const char *type = hp_json_str(g, "InstanceType");
		const cJSON *subnets = hp_vpc_ids(cluster, g, "Subnets"), *offered, *id;
		struct hp_buf zones = HP_BUF_INIT(HP_MAX_LINE), good = HP_BUF_INIT(HP_MAX_LINE),
			      where = HP_BUF_INIT(HP_MAX_LINE), bad = HP_BUF_INIT(HP_MAX_LINE);
		char name[HP_CHECK_CLIP_SIZE];
		const char *ec2;
		cJSON *seen = cJSON_CreateArray();

		groups++;
		if (!type)
			goto next;
		ec2 = hp_starts_with(type, "ml.") ? type + 3 : type;
		/* Not hp_json_arr: type names hold dots. */
		offered = cJSON_GetObjectItemCaseSensitive(offerings, ec2);
		if (!cJSON_IsArray(offered))
			goto next;
		cJSON_ArrayForEach(id, subnets) {
			const char *az = cJSON_IsString(id) ?
				hp_json_str(member(net, "subnets", id->valuestring), "availabilityZone") : NULL;

			if (!az || hp_json_has_str(seen, az))
				continue;
			cJSON_AddItemToArray(seen, cJSON_CreateString(az));
			list_add(&zones, az);
			if (hp_json_has_str(offered, az))
				list_add(&good, az);
			else
				list_add(&bad, az);
		}
		if (!zones.len)
			goto next;
		cJSON_ArrayForEach(id, offered)
			if (cJSON_IsString(id))
				list_add(&where, id->valuestring);
		hp_check_clip(hp_check_str(g, "InstanceGroupName", "?"), name);
		if (!good.len) {
			hp_emit(em, HP_TAG_FAIL, "Instance group '%s' (%s) has subnets only in %s where %s "
				"is not offered; it is offered in %s — add a subnet in one of those zones",
				name, type, zones.buf, ec2, where.len ? where.buf : "no zone of this region");
		} else {
			char line[HP_CHECK_CLIP_SIZE + 256];

			if (bad.len)
				HP_CHECK_INFO(em, "Instance group '%s' (%s): not offered in %s; nodes can "
					      "launch only in %s", name, type, bad.buf, good.buf);
			snprintf(line, sizeof(line), "%s (%s): %s", name, type, good.buf);
			hp_buf_printf(&passed, "%s%s", passed.len ? "\n" : "", line);
			hp_buf_printf(&names, "%s'%s'", names.len ? ", " : "", name);
			good_groups++;
		}
next:
		cJSON_Delete(seen);
		hp_buf_release(&zones);
		hp_buf_release(&good);
		hp_buf_release(&where);
		hp_buf_release(&bad);
	}
	/*
	 * An all-clear only when every group was judged and passed; otherwise
	 * the groups that passed, by name (a FAIL above, or a group without
	 * offering data, is no "every").
	 */
	if (good_groups) {
		struct hp_finding *ok;
		char *line, *save = NULL;

		if (good_groups == groups)
			ok = hp_emit(em, HP_TAG_PASS, "Every instance type is offered in a zone of its "
				     "subnets");
		else
			ok = hp_emit(em, HP_TAG_PASS, "Offered in a zone of its subnets: %d of %d instance "
				     "group%s (%s)", good_groups, groups, groups == 1 ? "" : "s",
				     names.buf);
		for (line = strtok_r(passed.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			hp_finding_evidence(ok, line);
	}
	hp_buf_release(&passed);
	hp_buf_release(&names);
}

HP_CHECK(network_vpc, HP_GROUP_VPC, 40,
	 .id = "network.vpc", .section = "B.1", .prio = HP_P1, .run = run_vpc);
HP_CHECK(network_dns, HP_GROUP_VPC, 50,
	 .id = "network.dns", .section = "B.2", .prio = HP_P1, .run = run_dns);
HP_CHECK(network_routing, HP_GROUP_VPC, 60,
	 .id = "network.routing", .section = "B.3", .prio = HP_P1, .run = run_routing);
HP_CHECK(network_endpoints, HP_GROUP_VPC, 70,
	 .id = "network.endpoints", .section = "B.4", .prio = HP_P1, .run = run_endpoints);
HP_CHECK(network_eks, HP_GROUP_VPC, 80,
	 .id = "network.eks", .section = "B.5", .prio = HP_P1, .run = run_eks);
HP_CHECK(network_subnet_ips, HP_GROUP_VPC, 90,
	 .id = "network.subnet-ips", .section = "B.6", .prio = HP_P1, .run = run_subnet_ips);
HP_CHECK(network_eni, HP_GROUP_VPC, 100,
	 .id = "network.eni", .section = "B.6", .prio = HP_P2, .run = run_eni);
HP_CHECK(network_capacity, HP_GROUP_VPC, 110,
	 .id = "network.capacity", .section = "C.1", .prio = HP_P1, .run = run_capacity);
