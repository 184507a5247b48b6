/*
 * EFA security group rules (§ A.1): every security group of the cluster and
 * of each instance group's OverrideVpcConfig must let its members reach each
 * other on all traffic, in and out, and should not open all egress to
 * 0.0.0.0/0. A group that could not be read is reported as unreadable,
 * never as missing a rule. Network ACLs and on-node EFA state are not judged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"

#define PORTS 65536

/* How far a group's rules in one direction reference the group itself. */
enum coverage {
	COV_NONE,      /* no rule names the group */
	COV_PARTIAL,   /* some do, but not all traffic */
	COV_EQUIV,     /* TCP and UDP on every port plus all ICMP */
	COV_ALL        /* an all-protocols (-1) rule */
};

static const char *proto_of(const cJSON *perm)
{
	const char *p = hp_check_str(perm, "ipProtocol", "?");

	if (!strcmp(p, "-1") || !strcmp(p, "all"))
		return "all";
	if (!strcmp(p, "6"))
		return "tcp";
	if (!strcmp(p, "17"))
		return "udp";
	if (!strcmp(p, "1"))
		return "icmp";
	if (!strcmp(p, "58"))
		return "icmpv6";
	return p;
}

static void mark_ports(unsigned char *bits, double from, double to)
{
	long lo, hi, p;

	/* Clamp as doubles first: a hostile snapshot may hold any number. */
	if (!(from <= to) || to < 0 || from > PORTS - 1)
		return;
	lo = from < 0 ? 0 : (long)from;
	hi = to > PORTS - 1 ? PORTS - 1 : (long)to;
	for (p = lo; p <= hi; p++)
		bits[p / 8] |= (unsigned char)(1u << (p % 8));
}

static int all_ports(const unsigned char *bits)
{
	size_t i;

	for (i = 0; i < PORTS / 8; i++)
		if (bits[i] != 0xFF)
			return 0;
	return 1;
}

/*
 * Coverage of the self-referencing rules in perms. The self rules are
 * listed into detail ("tcp 443-443, udp 0-65535") for a partial set.
 */
static enum coverage self_coverage(const cJSON *perms, const char *id, struct hp_buf *detail)
{
	unsigned char *tcp = xcalloc(PORTS / 8, 1), *udp = xcalloc(PORTS / 8, 1);
	const cJSON *perm;
	int any = 0, all = 0, icmp = 0;
	enum coverage cov;

	cJSON_ArrayForEach(perm, perms) {
		const char *proto = proto_of(perm);
		double from = hp_json_num(perm, "fromPort", -1), to = hp_json_num(perm, "toPort", -1);

		if (!hp_sg_rule_names_group(perm, id))
			continue;
		any = 1;
		if (detail->len)
			hp_buf_puts(detail, ", ");
		if (!strcmp(proto, "all")) {
			all = 1;
			hp_buf_puts(detail, "all traffic");
		} else if (!strcmp(proto, "tcp") || !strcmp(proto, "udp")) {
			mark_ports(!strcmp(proto, "tcp") ? tcp : udp, from, to);
			hp_buf_printf(detail, "%s %.0f-%.0f", proto, from, to);
		} else if (!strcmp(proto, "icmp") && from < 0) {
			icmp = 1;
			hp_buf_puts(detail, "icmp all");
		} else if (!strcmp(proto, "icmp") || !strcmp(proto, "icmpv6")) {
			hp_buf_printf(detail, "%s type %.0f", proto, from);
		} else {
			hp_buf_printf(detail, "%s %.0f-%.0f", proto, from, to);
		}
	}
	if (all)
		cov = COV_ALL;
	else if (icmp && all_ports(tcp) && all_ports(udp))
		cov = COV_EQUIV;
	else
		cov = any ? COV_PARTIAL : COV_NONE;
	free(tcp);
	free(udp);
	return cov;
}

/* An all-traffic egress rule to 0.0.0.0/0. */
static int egress_all_ipv4(const cJSON *perms)
{
	const cJSON *perm;

	cJSON_ArrayForEach(perm, perms)
		if (hp_sg_rule_all_traffic(perm) && hp_sg_rule_any_ipv4(perm))
			return 1;
	return 0;
}

/* "used by: cluster VpcConfig, instance group 'gpu'" from the cluster description. */
static void users_of(const struct hp_snapshot *snap, const char *id, struct hp_buf *out)
{
	const cJSON *cluster = hp_snapshot_get(snap, "cluster"), *vpc;
	struct hp_vpc_walk w;
	char clip[HP_CHECK_CLIP_SIZE];

	hp_buf_puts(out, "used by: ");
	for (vpc = hp_vpc_first(&w, cluster); vpc; vpc = hp_vpc_next(&w)) {
		if (!hp_json_has_str(hp_json_arr(vpc, "SecurityGroupIds"), id))
			continue;
		if (out->len > strlen("used by: "))
			hp_buf_puts(out, ", ");
		if (!w.group)
			hp_buf_puts(out, "cluster VpcConfig");
		else
			hp_buf_printf(out, "instance group '%s'",
				      hp_check_clip(hp_check_str(w.group, "InstanceGroupName", "?"),
						    clip));
	}
	if (out->len == strlen("used by: "))
		hp_buf_puts(out, "named on the command line");
}

static void unreadable(struct hp_emit *em, const char *id, const cJSON *err, const char *users)
{
	const char *cls = hp_check_str(err, "class", "unknown");
	const char *code = hp_check_str(err, "code", cls);
	char msg[HP_CHECK_CLIP_SIZE];
	struct hp_finding *f;

	if (!strcmp(cls, "not_found"))
		f = hp_emitx(em, HP_TAG_WARN, HP_P1, NULL, NULL,
			     "Cannot read security group %s: it does not exist (%s) — its EFA rules were "
			     "not checked; the cluster configuration names a deleted group", id, code);
	else if (!strcmp(cls, "denied"))
		f = hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL,
			     "Cannot read security group %s: access denied (ec2:DescribeSecurityGroups) — "
			     "its EFA rules were not checked", id);
	else if (!strcmp(cls, "throttled"))
		f = hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL,
			     "Cannot read security group %s: still throttled after retries — its EFA rules "
			     "were not checked", id);
	else
		f = hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL,
			     "Cannot read security group %s (%s) — its EFA rules were not checked", id, code);
	hp_check_clip(hp_check_str(err, "message", ""), msg);
	if (*msg)
		hp_finding_evidence(f, msg);
	hp_finding_evidence(f, users);
	hp_finding_var(f, "SG_ID", id);
}

/* Evidence naming the self-referencing rules that exist but fall short. */
static void partial(struct hp_finding *f, const char *dir, const struct hp_buf *rules)
{
	struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);

	hp_buf_printf(&line, "self-referencing %s rules cover only: %.300s", dir, rules->buf);
	hp_finding_evidence(f, line.buf);
	hp_buf_release(&line);
}

static void check_group(const struct hp_snapshot *snap, struct hp_emit *em, const cJSON *net,
			const char *id)
{
	const cJSON *sg = cJSON_GetObjectItemCaseSensitive(hp_json_get(net, "security_groups"), id);
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(hp_json_get(net, "security_group_errors"), id);
	struct hp_buf users = HP_BUF_INIT(HP_MAX_LINE), in = HP_BUF_INIT(HP_MAX_LINE),
		      out = HP_BUF_INIT(HP_MAX_LINE);
	char name[HP_CHECK_CLIP_SIZE], label[HP_CHECK_CLIP_SIZE + 128];
	enum coverage cin, cout;
	struct hp_finding *f;

	users_of(snap, id, &users);
	if (!cJSON_IsObject(sg)) {
		if (err)
			unreadable(em, id, err, users.buf);
		goto done;
	}
	hp_check_clip(hp_check_str(sg, "groupName", ""), name);
	snprintf(label, sizeof(label), "Security group %s%s%s%s", id, *name ? " (" : "", name,
		 *name ? ")" : "");
	cin = self_coverage(hp_json_arr(sg, "ipPermissions"), id, &in);
	cout = self_coverage(hp_json_arr(sg, "ipPermissionsEgress"), id, &out);

	if (cin == COV_ALL) {
		hp_emit(em, HP_TAG_PASS, "%s: inbound all traffic from itself", label);
	} else if (cin == COV_EQUIV) {
		hp_emit(em, HP_TAG_PASS, "%s: inbound TCP and UDP on all ports and all ICMP from itself "
			"(treated as all traffic)", label);
	} else {
		f = hp_emitx(em, HP_TAG_FAIL, HP_P1, NULL, NULL,
			     "%s has no inbound self-referencing rule (all traffic from %s) — nodes cannot "
			     "reach each other", label, id);
		if (cin == COV_PARTIAL)
			partial(f, "inbound", &in);
		hp_finding_evidence(f, users.buf);
		hp_finding_var(f, "SG_ID", id);
	}
	if (cout == COV_ALL) {
		hp_emit(em, HP_TAG_PASS, "%s: outbound all traffic to itself (required for EFA)", label);
	} else if (cout == COV_EQUIV) {
		hp_emit(em, HP_TAG_PASS, "%s: outbound TCP and UDP on all ports and all ICMP to itself "
			"(treated as all traffic)", label);
	} else {
		f = hp_emitx(em, HP_TAG_FAIL, HP_P0, NULL, NULL,
			     "%s has no outbound self-referencing rule (all traffic to %s) — the primary "
			     "cause of EFA health-check failures", label, id);
		if (cout == COV_PARTIAL)
			partial(f, "outbound", &out);
		hp_finding_evidence(f, users.buf);
		hp_finding_var(f, "SG_ID", id);
	}
	if (egress_all_ipv4(hp_json_arr(sg, "ipPermissionsEgress"))) {
		f = hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL,
			     "%s allows all outbound traffic to 0.0.0.0/0; HyperPod's prerequisites advise "
			     "against it on the EFA group — reach AWS through the NAT gateway or VPC "
			     "endpoints with narrower rules", label);
		hp_finding_evidence(f, users.buf);
		hp_finding_var(f, "SG_ID", id);
	} else {
		hp_emit(em, HP_TAG_PASS, "%s: no all-traffic outbound rule to 0.0.0.0/0", label);
	}
done:
	hp_buf_release(&users);
	hp_buf_release(&in);
	hp_buf_release(&out);
}

static void run_efa_sg(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *net = hp_snapshot_get(snap, "network"), *id;

	cJSON_ArrayForEach(id, hp_json_arr(net, "sg_ids"))
		if (cJSON_IsString(id))
			check_group(snap, em, net, id->valuestring);
}

HP_CHECK(network_efa_sg, HP_GROUP_VPC, 30,
	 .id = "network.efa-sg", .section = "A.1", .prio = HP_P0, .run = run_efa_sg);
