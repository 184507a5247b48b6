/*
 * The api.* rows: each failed call lands in the group of the data it feeds,
 * is worded by its class, and is reported once per service:action.
 */
#include <stdio.h>
#include <string.h>

#include "checks-t.h"
#include "t.h"

/* Snapshot with one failed call. */
static void load_call(struct ck *c, const char *svc, const char *action, const char *cls,
		      const char *code, const char *msg)
{
	char json[2048];

	snprintf(json, sizeof(json),
		 "{'calls':[{'service':'%s','action':'%s','class':'%s','code':'%s','message':'%s',"
		 "'status':400}]}",
		 svc, action, cls, code, msg);
	ck_load(c, json);
}

/* Every check runs, so a call reported by two rows (or none) would show. */
static void run_api(struct ck *c)
{
	ck_run_all(c);
}

static void t_routing(void)
{
	static const struct {
		const char *svc, *action;
		const char *row;
	} cases[] = {
		{ "sts", "GetCallerIdentity", "api.identity" },
		{ "sagemaker", "DescribeCluster", "api.identity" },
		{ "sagemaker", "ListClusters", "api.identity" },
		{ "sagemaker", "ListClusterEvents", "api.events" },
		{ "sagemaker", "ListClusterNodes", "api.nodes" },
		{ "sagemaker", "DescribeClusterNode", "api.nodes" },
		{ "ec2", "DescribeInstanceTypes", "api.nodes" },
		{ "ec2", "DescribeSecurityGroups", "api.vpc" },
		{ "ec2", "DescribeSubnets", "api.vpc" },
		{ "service-quotas", "GetServiceQuota", "api.vpc" },
		{ "logs", "DescribeLogGroups", "api.logs" },
		{ "logs", "FilterLogEvents", "api.logs" },
		{ "eks", "DescribeCluster", "api.eks" },
		{ "ssm", "StartSession", "api.ssm" },
		{ "sagemaker", "SomethingNew", "api.identity" },
		{ "newservice", "Op", "api.identity" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char want[128];
		const struct hp_finding *f;
		struct ck c;

		load_call(&c, cases[i].svc, cases[i].action, "denied", "AccessDeniedException",
			  "not authorized");
		run_api(&c);
		T_EQ(c.f.n, 1);
		/* The IAM prefix, as a policy writes it: Service Quotas is "servicequotas". */
		snprintf(want, sizeof(want), "Missing IAM permission for %s:%s",
			 strcmp(cases[i].svc, "service-quotas") ? cases[i].svc : "servicequotas",
			 cases[i].action);
		f = ck_one(&c, HP_TAG_FAIL, want);
		if (strcmp(f->check->id, cases[i].row))
			T_FAILF("%s:%s reported by %s, expected %s", cases[i].svc, cases[i].action,
				f->check->id, cases[i].row);
		ck_free(&c);
	}
}

static void t_denied(void)
{
	const struct hp_finding *f;
	struct ck c;

	load_call(&c, "sagemaker", "ListClusterEvents", "denied", "AccessDeniedException",
		  "User: arn:aws:iam::1:user/x is not authorized to perform: "
		  "sagemaker:ListClusterEvents");
	run_api(&c);
	f = ck_one(&c, HP_TAG_FAIL, "Missing IAM permission for sagemaker:ListClusterEvents");
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "K.1");
	T_ASSERT(f->node == NULL);
	/* The caller is an IAM user: no role name to fill into the K.1 fix. */
	T_ASSERT(f->vars == NULL);
	T_EQ(ck_evidence_len(f), 1);
	T_STREQ(ck_line(f, 0),
		"AccessDeniedException: User: arn:aws:iam::1:user/x is not authorized to perform: "
		"sagemaker:ListClusterEvents");
	ck_free(&c);
}

/* With an assumed role the denied call names the role for the suggested fix. */
static void t_denied_role_name(void)
{
	static const struct {
		const char *arn, *role;
	} cases[] = {
		{ "arn:aws:sts::111122223333:assumed-role/TriageRole/alice", "TriageRole" },
		{ "arn:aws:iam::111122223333:role/ops/TriageRole", "TriageRole" },
		{ "arn:aws:iam::111122223333:user/alice", NULL },
	};
	const struct hp_finding *f;
	char json[1024];
	size_t i;
	struct ck c;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		snprintf(json, sizeof(json),
			 "{'identity':{'Arn':'%s'},'calls':[{'service':'sagemaker',"
			 "'action':'ListClusterNodes','class':'denied','code':'AccessDenied',"
			 "'message':'no','status':403}]}",
			 cases[i].arn);
		ck_load(&c, json);
		run_api(&c);
		f = ck_one(&c, HP_TAG_FAIL, "Missing IAM permission");
		if (cases[i].role)
			T_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(f->vars, "ROLE_NAME")),
				cases[i].role);
		else
			T_ASSERT(cJSON_GetObjectItem(f->vars, "ROLE_NAME") == NULL);
		ck_free(&c);
	}
}

static void t_throttled(void)
{
	const struct hp_finding *f;
	struct ck c;

	load_call(&c, "sagemaker", "ListClusterNodes", "throttled", "ThrottlingException",
		  "Rate exceeded");
	run_api(&c);
	f = ck_one(&c, HP_TAG_WARN, "sagemaker:ListClusterNodes was still throttled after retries "
				    "\xE2\x80\x94 node list is incomplete");
	/* An area read only in part is not informational. */
	T_EQ(f->prio, HP_P1);
	T_STREQ(f->section, "K.1");
	T_STREQ(f->check->id, "api.nodes");
	T_ASSERT(ck_evidence_has(f, "ThrottlingException: Rate exceeded"));
	T_EQ(c.f.n, 1);
	ck_free(&c);
}

static void t_other_classes(void)
{
	static const char *const classes[] = { "client", "server", "network", "parse", "auth" };
	size_t i;

	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		const struct hp_finding *f;
		struct ck c;

		load_call(&c, "ec2", "DescribeSubnets", classes[i], "InvalidSubnetID.Malformed",
			  "Invalid id: subnet-xyz");
		run_api(&c);
		T_EQ(c.f.n, 1);
		f = ck_one(&c, HP_TAG_WARN, "Could not run ec2:DescribeSubnets (InvalidSubnetID.Malformed: "
					    "Invalid id: subnet-xyz) \xE2\x80\x94 VPC data not checked");
		/* Not checked is never informational: P1, pointing to the credentials or the calls. */
		T_EQ(f->prio, HP_P1);
		T_STREQ(f->section, strcmp(classes[i], "auth") ? "K.1" : "K.2");
		T_STREQ(f->check->id, "api.vpc");
		ck_free(&c);
	}
}

static void t_network_without_code(void)
{
	const struct hp_finding *f;
	struct ck c;

	/* No AWS error code: the class stands in for it. */
	load_call(&c, "logs", "DescribeLogGroups", "network", "", "connection timed out");
	run_api(&c);
	f = ck_one(&c, HP_TAG_WARN, "Could not run logs:DescribeLogGroups (network: connection timed "
				    "out) \xE2\x80\x94 log group lookup not checked");
	T_STREQ(f->check->id, "api.logs");
	ck_free(&c);
}

static void t_not_found_is_left_to_the_area(void)
{
	struct ck c;

	load_call(&c, "sagemaker", "DescribeClusterNode", "not_found", "ResourceNotFound",
		  "Node not found");
	run_api(&c);
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_one_finding_per_action(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'calls':["
		    "{'service':'logs','action':'FilterLogEvents','class':'denied','code':'AccessDenied',"
		    "'message':'first'},"
		    "{'service':'ec2','action':'DescribeSubnets','class':'denied','code':'UnauthorizedOperation',"
		    "'message':'x'},"
		    "{'service':'logs','action':'FilterLogEvents','class':'denied','code':'AccessDenied',"
		    "'message':'second'},"
		    "{'service':'logs','action':'FilterLogEvents','class':'throttled','code':'ThrottlingException',"
		    "'message':'slow'},"
		    "{'service':'logs','action':'FilterLogEvents','class':'denied','code':'AccessDenied',"
		    "'message':'third'},"
		    "{'service':'logs','action':'FilterLogEvents','class':'server','code':'InternalFailure'},"
		    "{'service':'logs','action':'FilterLogEvents','class':'network'}]}");
	run_api(&c);
	f = ck_one(&c, HP_TAG_FAIL, "Missing IAM permission for logs:FilterLogEvents");
	T_ASSERT(ck_evidence_has(f, "AccessDenied: first"));
	T_ASSERT(!ck_evidence_has(f, "second"));
	T_ASSERT(ck_evidence_has(f, "3 calls failed this way"));
	ck_one(&c, HP_TAG_FAIL, "Missing IAM permission for ec2:DescribeSubnets");
	ck_one(&c, HP_TAG_WARN, "logs:FilterLogEvents was still throttled");
	/* server and network failures of one action fold into one "could not run". */
	f = ck_one(&c, HP_TAG_WARN, "Could not run logs:FilterLogEvents (InternalFailure)");
	T_ASSERT(ck_evidence_has(f, "2 calls failed this way"));
	T_EQ(c.f.n, 4);
	ck_free(&c);
}

static void t_long_message_clipped(void)
{
	char msg[900];
	const struct hp_finding *f;
	struct ck c;

	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	load_call(&c, "eks", "DescribeCluster", "client", "InvalidParameterException", msg);
	run_api(&c);
	f = ck_one(&c, HP_TAG_WARN, "Could not run eks:DescribeCluster");
	T_CONTAINS(f->message, "mmm\xE2\x80\xA6) \xE2\x80\x94 EKS cluster data not checked");
	T_ASSERT(strlen(f->message) < 400);
	T_STREQ(f->check->id, "api.eks");
	ck_free(&c);
}

T_MAIN(T(t_routing), T(t_denied), T(t_denied_role_name), T(t_throttled), T(t_other_classes),
       T(t_network_without_code), T(t_not_found_is_left_to_the_area),
       T(t_one_finding_per_action), T(t_long_message_clipped))
