/*
 * Failed API calls ("calls" in the snapshot) turned into findings: a denied
 * call is a missing IAM permission (§ K.1), anything else says which area
 * could not be checked, as a WARN P1 (an area left unchecked is never
 * informational: --fail-on P1 counts it), § K.2 when the credentials were
 * rejected or expired, else § K.1. Calls that found nothing ("not_found")
 * are left to the checks of that area; a call the run's interrupt cut
 * short (code "Interrupted") is a SKIP: the area is unread, not faulty.
 *
 * A check has one report group, yet a failed call belongs with the data it
 * feeds. So there is one row per group (api.identity, api.nodes, ...), all
 * sharing one run function that keeps only the calls whose route (the table
 * below) lands in its own row's group.
 */
#include <stdio.h>
#include <string.h>

#include "hp/json.h"
#include "checks.h"

/* Where a call's failure is reported, and what it leaves unknown. */
static const struct {
	const char *service;
	const char *action;   /* NULL: any action of the service */
	enum hp_group group;
	const char *what;
} routes[] = {
	{ "sts", NULL, HP_GROUP_IDENTITY, "caller identity" },
	{ "sagemaker", "DescribeCluster", HP_GROUP_IDENTITY, "cluster description" },
	{ "sagemaker", "ListClusters", HP_GROUP_IDENTITY, "cluster list" },
	{ "sagemaker", "ListClusterEvents", HP_GROUP_EVENTS, "cluster event list" },
	{ "sagemaker", "DescribeClusterEvent", HP_GROUP_EVENTS, "cluster event detail" },
	{ "sagemaker", "ListClusterNodes", HP_GROUP_NODES, "node list" },
	{ "sagemaker", "DescribeClusterNode", HP_GROUP_NODES, "target node detail" },
	{ "ec2", "DescribeInstanceTypes", HP_GROUP_NODES, "instance type data" },
	{ "ec2", NULL, HP_GROUP_VPC, "VPC data" },
	{ "service-quotas", NULL, HP_GROUP_VPC, "quota data" },
	{ "logs", "DescribeLogGroups", HP_GROUP_LOGS, "log group lookup" },
	{ "logs", "DescribeLogStreams", HP_GROUP_LOGS, "log stream list" },
	{ "logs", "FilterLogEvents", HP_GROUP_LOGS, "log search" },
	{ "logs", NULL, HP_GROUP_LOGS, "CloudWatch Logs data" },
	{ "eks", NULL, HP_GROUP_EKS, "EKS cluster data" },
	{ "ssm", NULL, HP_GROUP_SSM, "SSM data" },
	{ "sagemaker", NULL, HP_GROUP_IDENTITY, "cluster data" },
};

struct route {
	enum hp_group group;
	const char *what;
};

/* Unknown services land in the identity group, so no failed call is lost. */
static struct route route_of(const char *service, const char *action)
{
	struct route r = { HP_GROUP_IDENTITY, "its data" };
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(routes); i++) {
		if (strcmp(routes[i].service, service))
			continue;
		if (routes[i].action && strcmp(routes[i].action, action))
			continue;
		r.group = routes[i].group;
		r.what = routes[i].what;
		break;
	}
	return r;
}

/* "denied" and "throttled" are reported as such; the rest alike. */
static const char *kind_of(const char *cls)
{
	if (!strcmp(cls, "denied") || !strcmp(cls, "throttled") || !strcmp(cls, "not_found"))
		return cls;
	return "other";
}

static int same_call(const cJSON *a, const cJSON *b)
{
	return !strcmp(hp_check_str(a, "service", "?"), hp_check_str(b, "service", "?")) &&
	       !strcmp(hp_check_str(a, "action", "?"), hp_check_str(b, "action", "?")) &&
	       !strcmp(kind_of(hp_check_str(a, "class", "")), kind_of(hp_check_str(b, "class", "")));
}

/*
 * The role name in the caller's ARN (sts assumed-role or iam role), for
 * the K.1 fix; "" when the caller is not a role or is unknown.
 */
static void caller_role(const struct hp_snapshot *snap, char *out, size_t size)
{
	const char *arn = hp_check_str(snap->root, "identity.Arn", "");
	const char *p = strstr(arn, ":assumed-role/");
	size_t n;

	out[0] = '\0';
	if (p) {
		p += strlen(":assumed-role/");
		n = strcspn(p, "/");
	} else if ((p = strstr(arn, ":role/")) != NULL) {
		/* A role ARN may carry a path: the name is the last part. */
		p = strrchr(p, '/') + 1;
		n = strlen(p);
	} else {
		return;
	}
	if (n && n < size) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
}

/* The IAM prefix of a service, as a policy names it (Service Quotas: "servicequotas"). */
static const char *iam_prefix(const char *svc)
{
	return !strcmp(svc, "service-quotas") ? "servicequotas" : svc;
}

static void report_call(struct hp_emit *em, const cJSON *call, const char *what, int times,
			const char *role)
{
	const char *svc = hp_check_str(call, "service", "?");
	const char *act = hp_check_str(call, "action", "?");
	const char *cls = hp_check_str(call, "class", "unknown");
	const char *code = hp_check_str(call, "code", cls);
	char msg[HP_CHECK_CLIP_SIZE], line[HP_CHECK_CLIP_SIZE + 128];
	struct hp_finding *f;

	hp_check_clip(hp_check_str(call, "message", ""), msg);
	/* Cut short by SIGINT/SIGTERM: nothing is wrong with the account, the area is just unread. */
	if (!strcmp(code, "Interrupted")) {
		f = hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL,
			     "%s:%s not finished (the run was interrupted) \xE2\x80\x94 %s not checked",
			     svc, act, what);
	} else if (!strcmp(cls, "denied")) {
		f = hp_emitx(em, HP_TAG_FAIL, HP_P1, "K.1", NULL, "Missing IAM permission for %s:%s",
			     iam_prefix(svc), act);
		snprintf(line, sizeof(line), "%s%s%s", code, *msg ? ": " : "", msg);
		hp_finding_evidence(f, line);
		if (*role)
			hp_finding_var(f, "ROLE_NAME", role);
	} else if (!strcmp(cls, "throttled")) {
		f = hp_emitx(em, HP_TAG_WARN, HP_P1, "K.1", NULL,
			     "%s:%s was still throttled after retries \xE2\x80\x94 %s is incomplete",
			     svc, act, what);
		snprintf(line, sizeof(line), "%s%s%s", code, *msg ? ": " : "", msg);
		hp_finding_evidence(f, line);
	} else {
		/* Rejected or expired credentials (ExpiredToken, AuthFailure, …) are § K.2's. */
		f = hp_emitx(em, HP_TAG_WARN, HP_P1, !strcmp(cls, "auth") ? "K.2" : "K.1", NULL,
			     "Could not run %s:%s (%s%s%s) \xE2\x80\x94 %s not checked", svc, act, code,
			     *msg ? ": " : "", msg, what);
		snprintf(line, sizeof(line), "class %s, HTTP status %.0f", cls,
			 hp_json_num(call, "status", 0));
		hp_finding_evidence(f, line);
	}
	if (times > 1) {
		snprintf(line, sizeof(line), "%d calls failed this way", times);
		hp_finding_evidence(f, line);
	}
}

static void run_api(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *calls = hp_json_arr(snap->root, "calls");
	const cJSON *c, *d;
	char role[128];

	caller_role(snap, role, sizeof(role));
	cJSON_ArrayForEach(c, calls) {
		struct route r;
		int times = 0;

		if (!cJSON_IsObject(c) || !strcmp(hp_check_str(c, "class", ""), "not_found"))
			continue;
		r = route_of(hp_check_str(c, "service", "?"), hp_check_str(c, "action", "?"));
		if (r.group != em->check->group)
			continue;
		/* One finding per distinct service:action and kind, at its first call. */
		for (d = calls->child; d != c; d = d->next)
			if (cJSON_IsObject(d) && same_call(c, d))
				break;
		if (d != c)
			continue;
		for (d = c; d; d = d->next)
			if (cJSON_IsObject(d) && same_call(c, d))
				times++;
		report_call(em, c, r.what, times, role);
	}
}

/*
 * One row per report group, all sharing run_api: each reports the failed
 * calls whose data that group's checks read, first in its group.
 */
HP_CHECK(api_identity, HP_GROUP_IDENTITY, 20,
	 .id = "api.identity", .section = "K", .prio = HP_P1, .run = run_api);
HP_CHECK(api_events, HP_GROUP_EVENTS, 10,
	 .id = "api.events", .section = "K", .prio = HP_P1, .run = run_api);
HP_CHECK(api_nodes, HP_GROUP_NODES, 10,
	 .id = "api.nodes", .section = "K", .prio = HP_P1, .run = run_api);
HP_CHECK(api_eks, HP_GROUP_EKS, 10,
	 .id = "api.eks", .section = "K", .prio = HP_P1, .run = run_api);
HP_CHECK(api_vpc, HP_GROUP_VPC, 10,
	 .id = "api.vpc", .section = "K", .prio = HP_P1, .run = run_api);
HP_CHECK(api_logs, HP_GROUP_LOGS, 10,
	 .id = "api.logs", .section = "K", .prio = HP_P1, .run = run_api);
HP_CHECK(api_ssm, HP_GROUP_SSM, 10,
	 .id = "api.ssm", .section = "K", .prio = HP_P1, .run = run_api);
