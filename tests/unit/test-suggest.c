/*
 * Suggested commands (src/report/suggest.c): which value each placeholder
 * gets from the finding and the snapshot, why one stays unfilled, shell
 * safety of values, which blocks a finding gets (sub-sections, the other
 * orchestrator's left out), and the text and JSON renderings.
 */
#include <stdlib.h>
#include <string.h>

#include "checks-t.h"
#include "hp/report.h"
#include "hp/suggest.h"
#include "t.h"

#define NODE1 "i-0abc0000000000001"
#define NODE2 "i-0abc0000000000002"

static const struct hp_check c_test = {
	.id = "test.check", .section = "F", .prio = HP_P1,
	.group = HP_GROUP_NODES,
};

/* An EKS cluster with two groups; gpu overrides its VPC settings. */
static const char eks_snap[] =
	"{'meta':{'region':'us-west-2','cluster_arg':'c1'},"
	"'identity':{'Arn':'arn:aws:iam::111122223333:user/u'},"
	"'cluster':{'ClusterName':'c1',"
	"'ClusterArn':'arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdef012345',"
	"'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:111122223333:cluster/c1-eks'}},"
	"'VpcConfig':{'SecurityGroupIds':['sg-1','sg-2'],'Subnets':['subnet-1','subnet-2']},"
	"'InstanceGroups':["
	"{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge','TargetCount':4,"
	"'LifeCycleConfig':{'SourceS3Uri':'s3://b/lc/','OnCreate':'on_create.sh'},"
	"'ExecutionRole':'arn:aws:iam::111122223333:role/exec',"
	"'OverrideVpcConfig':{'SecurityGroupIds':['sg-9'],'Subnets':['subnet-9']}},"
	"{'InstanceGroupName':'cpu','InstanceType':'ml.m5.2xlarge','TargetCount':2}]},"
	"'nodes':["
	"{'InstanceId':'" NODE1 "','InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge'},"
	"{'InstanceId':'" NODE2 "','InstanceGroupName':'cpu','InstanceType':'ml.m5.2xlarge'}],"
	"'node':{'InstanceId':'" NODE2 "','PrivatePrimaryIp':'10.1.2.3',"
	"'Placement':{'AvailabilityZone':'us-west-2b'}}}";

struct fx {
	struct ck c;
	struct hp_suggest s;
};

static void fx_open(struct fx *x, const char *json)
{
	struct hp_error e = HP_ERROR_INIT;

	ck_load(&x->c, json);
	if (hp_suggest_init(&x->s, &x->c.snap, NULL, NULL, &e))
		T_FAILF("hp_suggest_init: %s", e.msg);
}

static void fx_close(struct fx *x)
{
	hp_suggest_release(&x->s);
	ck_free(&x->c);
}

static struct hp_finding *add(struct fx *x, enum hp_tag tag, const char *section, const char *node)
{
	struct hp_emit em = { &c_test, &x->c.f };

	return hp_emitx(&em, tag, HP_P1, section, node, "finding %zu", x->c.f.n);
}

/* The value of a placeholder, or NULL with the reason checked against want_why. */
static void expect(struct fx *x, const struct hp_finding *f, const char *name, const char *want,
		   const char *want_why)
{
	char *why = NULL, *v = hp_suggest_value(&x->s, f, name, &why);

	if (want) {
		if (!v || strcmp(v, want))
			T_FAILF("<%s> is '%s' (%s), expected '%s'", name, v ? v : "(unfilled)",
				why ? why : "", want);
	} else {
		if (v)
			T_FAILF("<%s> filled with '%s', expected it left unfilled", name, v);
		if (!why || !strstr(why, want_why))
			T_FAILF("<%s> unfilled because '%s', expected a reason with '%s'", name,
				why ? why : "(none)", want_why);
	}
	free(v);
	free(why);
}

static void t_cluster_values(void)
{
	struct fx x;
	struct hp_finding *f;

	fx_open(&x, eks_snap);
	f = add(&x, HP_TAG_FAIL, "F", NULL);
	expect(&x, f, "CLUSTER", "c1", NULL);
	expect(&x, f, "CLUSTER_ID", "abcdef012345", NULL);
	expect(&x, f, "REGION", "us-west-2", NULL);
	expect(&x, f, "EKS_NAME", "c1-eks", NULL);
	expect(&x, f, "VPC_ID", NULL, "no VPC id");
	expect(&x, f, "EKS_CLUSTER_SG", NULL, "no EKS cluster security group");
	fx_close(&x);
}

static void t_node_values(void)
{
	struct fx x;
	struct hp_finding *f, *g;

	fx_open(&x, eks_snap);
	f = add(&x, HP_TAG_FAIL, "F", NODE1);
	expect(&x, f, "INSTANCE_ID", NODE1, NULL);
	expect(&x, f, "GROUP", "gpu", NULL);
	expect(&x, f, "INSTANCE_TYPE", "p5.48xlarge", NULL);
	expect(&x, f, "INSTANCE_COUNT", "4", NULL);
	expect(&x, f, "LIFECYCLE_S3_URI", "s3://b/lc/", NULL);
	expect(&x, f, "ON_CREATE_SCRIPT", "on_create.sh", NULL);
	expect(&x, f, "EXECUTION_ROLE_ARN", "arn:aws:iam::111122223333:role/exec", NULL);
	/* The group's override decides its security group and subnet. */
	expect(&x, f, "SG_ID", "sg-9", NULL);
	expect(&x, f, "SUBNET_ID", "subnet-9", NULL);
	expect(&x, f, "NODE_IP", NULL, "--node " NODE1);
	/* The --node detail knows the address and zone. */
	g = add(&x, HP_TAG_FAIL, "F", NODE2);
	expect(&x, g, "NODE_IP", "10.1.2.3", NULL);
	expect(&x, g, "AZ", "us-west-2b", NULL);
	expect(&x, g, "GROUP", "cpu", NULL);
	expect(&x, g, "LIFECYCLE_S3_URI", NULL, "no LifeCycleConfig.SourceS3Uri for instance group 'cpu'");
	/* cpu has no override: the cluster's two groups are both candidates. */
	expect(&x, g, "SG_ID", NULL, "uses 2 security groups (sg-1, sg-2)");
	fx_close(&x);
}

static void t_unknown_reasons(void)
{
	struct fx x;
	struct hp_finding *f;

	fx_open(&x, eks_snap);
	f = add(&x, HP_TAG_FAIL, "F", NULL);
	expect(&x, f, "INSTANCE_ID", NULL, "names no single node");
	expect(&x, f, "GROUP", NULL, "names no instance group");
	expect(&x, f, "INSTANCE_COUNT", NULL, "names no instance group");
	expect(&x, f, "NODE_IP", NULL, "names no single node");
	/* No group: every security group of the cluster and its overrides counts. */
	expect(&x, f, "SG_ID", NULL, "the cluster uses 3 security groups (sg-1, sg-2, sg-9)");
	expect(&x, f, "POD", NULL, "no value for it in this finding or the snapshot");
	expect(&x, f, "NODE_NAME", NULL, "no value for it");
	fx_close(&x);

	/* A node that is not in the node list. */
	fx_open(&x, eks_snap);
	f = add(&x, HP_TAG_FAIL, "F", "i-0fff0000000000009");
	expect(&x, f, "INSTANCE_ID", "i-0fff0000000000009", NULL);
	expect(&x, f, "GROUP", NULL, "not in the node list");
	fx_close(&x);

	/* Slurm: no EKS name; no snapshot at all: the report's cluster and region. */
	fx_open(&x, "{'meta':{'region':'eu-west-1'},'cluster':{'ClusterName':'s1',"
		    "'ClusterArn':'bad-arn'}}");
	f = add(&x, HP_TAG_FAIL, "F", NULL);
	expect(&x, f, "EKS_NAME", NULL, "orchestrated by Slurm");
	expect(&x, f, "CLUSTER_ID", NULL, "missing or malformed");
	expect(&x, f, "SG_ID", NULL, "no security group in the cluster's VpcConfig");
	fx_close(&x);
}

static void t_values_found_anywhere(void)
{
	struct fx x;
	struct hp_finding *f;

	/* One VPC id, wherever a collector stored it, is the VPC. */
	fx_open(&x, "{'cluster':{'ClusterName':'c'},'network':{'subnets':[{'SubnetId':'subnet-1',"
		    "'vpcId':'vpc-1'},{'SubnetId':'subnet-2','vpcId':'vpc-1'}],"
		    "'eks':{'resourcesVpcConfig':{'vpcId':'vpc-1','clusterSecurityGroupId':'sg-e'}}}}");
	f = add(&x, HP_TAG_FAIL, "B", NULL);
	expect(&x, f, "VPC_ID", "vpc-1", NULL);
	expect(&x, f, "EKS_CLUSTER_SG", "sg-e", NULL);
	fx_close(&x);
	/* Two different ones: no guess. */
	fx_open(&x, "{'cluster':{'ClusterName':'c'},'a':{'VpcId':'vpc-1'},'b':[{'vpcId':'vpc-2'}]}");
	f = add(&x, HP_TAG_FAIL, "B", NULL);
	expect(&x, f, "VPC_ID", NULL, "2 VPC ids (vpc-1, vpc-2); choose one");
	fx_close(&x);
}

static void t_finding_values_win(void)
{
	struct fx x;
	struct hp_finding *f;

	fx_open(&x, eks_snap);
	f = add(&x, HP_TAG_FAIL, "A.1", NULL);
	hp_finding_var(f, "SG_ID", "sg-7");
	hp_finding_var(f, "GROUP", "cpu");
	hp_finding_var(f, "NODE_NAME", "hyperpod-" NODE1);
	hp_finding_var(f, "REGION", "eu-central-1");
	hp_finding_var(f, "GROUP", "gpu"); /* a later value replaces the first */
	expect(&x, f, "SG_ID", "sg-7", NULL);
	expect(&x, f, "GROUP", "gpu", NULL);
	expect(&x, f, "INSTANCE_COUNT", "4", NULL);
	expect(&x, f, "NODE_NAME", "hyperpod-" NODE1, NULL);
	expect(&x, f, "REGION", "eu-central-1", NULL);
	T_EQ(cJSON_GetArraySize(f->vars), 4);
	fx_close(&x);
}

static void t_unsafe_values(void)
{
	static const char *const bad[] = {
		"a b", "$(reboot)", "x;y", "-rf", "`id`", "it's", "a\"b", "a|b", "a&b", "~root",
		"*", "a\nb", "a>b", "",
	};
	static const char *const good[] = {
		"gpu-p5", "s3://bucket/prefix/", "arn:aws:iam::1:role/a/b", "a_b.c", "x=1,y=2",
	};
	struct fx x;
	struct hp_finding *f;
	size_t i;

	fx_open(&x, eks_snap);
	for (i = 0; i < HP_ARRAY_LEN(bad); i++) {
		f = add(&x, HP_TAG_FAIL, "F", NULL);
		hp_finding_var(f, "GROUP", bad[i]);
		expect(&x, f, "GROUP", NULL, *bad[i] ? "not safe in a shell command"
						      : "names no instance group");
	}
	for (i = 0; i < HP_ARRAY_LEN(good); i++) {
		f = add(&x, HP_TAG_FAIL, "F", NULL);
		hp_finding_var(f, "GROUP", good[i]);
		expect(&x, f, "GROUP", good[i], NULL);
	}
	fx_close(&x);
	/* A hostile name in the snapshot itself is not filled in either. */
	fx_open(&x, "{'cluster':{'ClusterName':'c$(id)'},'meta':{'region':'us-west-2'}}");
	f = add(&x, HP_TAG_FAIL, "F", NULL);
	expect(&x, f, "CLUSTER", NULL, "not safe in a shell command");
	fx_close(&x);
}

/* Index of the suggestion whose command contains sub, or -1. */
static long find_cmd(const struct hp_suggestions *v, const char *sub)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (strstr(v->v[i].command, sub))
			return (long)i;
	return -1;
}

static const char *section_of(const struct fx *x, const struct hp_suggestions *v, long i)
{
	return x->s.doc.sec[v->v[i].section].id;
}

/* Whether one of the reasons a block was left out contains text. */
static int unfit_has(const struct hp_suggestions *v, const char *text)
{
	size_t i;

	for (i = 0; i < v->nunfit; i++)
		if (strstr(v->unfit[i], text))
			return 1;
	return 0;
}

static void t_blocks_for_a_finding(void)
{
	struct hp_suggestions v;
	struct fx x;
	struct hp_finding *f;
	long i;
	size_t k, j;

	fx_open(&x, eks_snap);
	f = add(&x, HP_TAG_FAIL, "F", NODE1);
	hp_suggest_finding(&x.s, f, &v);
	/* § F has no block of its own: its sub-sections' come, in document order. */
	i = find_cmd(&v, "batch-reboot-cluster-nodes");
	T_ASSERT(i == 0);
	T_STREQ(section_of(&x, &v, i), "F.2");
	T_STREQ(v.v[i].command, "aws sagemaker batch-reboot-cluster-nodes --cluster-name c1 "
		"--region us-west-2 --node-ids '[\"" NODE1 "\"]'");
	T_CONTAINS(v.v[i].blast, "reboots `" NODE1 "`");
	T_ASSERT(v.v[i].iac == NULL);
	T_EQ(v.v[i].nunfilled, 0);
	T_ASSERT(find_cmd(&v, "batch-replace-cluster-nodes") == 1);
	i = find_cmd(&v, "--node-recovery Automatic");
	T_ASSERT(i > 1);
	T_STREQ(section_of(&x, &v, i), "F.3");
	T_CONTAINS(v.v[i].iac, "drift");
	/* The Slurm controller's way is left out on EKS. */
	T_ASSERT(find_cmd(&v, "scontrol") < 0);
	T_EQ(v.skipped, 2);
	hp_suggestions_release(&v);

	/* A+B: both areas, each block once, A's first. */
	f = add(&x, HP_TAG_FAIL, "A+B+A.1", NODE1);
	hp_suggest_finding(&x.s, f, &v);
	T_STREQ(section_of(&x, &v, 0), "A.1");
	T_CONTAINS(v.v[0].command, "--group-id sg-9 ");
	/* The EKS authentication-mode change is for that finding only (network.eks). */
	T_ASSERT(find_cmd(&v, "update-cluster-config --name c1-eks") < 0);
	T_ASSERT(unfit_has(&v, "B.1: the command is for the EKS authentication mode, which this "
			   "finding is not about"));
	for (k = 0; k < v.n; k++)
		for (j = 0; j < k; j++)
			T_ASSERT(v.v[k].block != v.v[j].block);
	/* A command whose VPC is not known is left out, with the reason. */
	T_ASSERT(find_cmd(&v, "modify-vpc-attribute") < 0);
	T_ASSERT(unfit_has(&v, "B.2: `aws ec2 modify-vpc-attribute --vpc-id <VPC_ID> --region "
			   "us-west-2 --enable-dns-support '{\"Value\":true}'` left out, <VPC_ID> not known"));
	hp_suggestions_release(&v);

	/* A narrow section gets only its own blocks; unknown sections none. */
	f = add(&x, HP_TAG_FAIL, "F.3", NODE1);
	hp_suggest_finding(&x.s, f, &v);
	T_EQ(v.n, 1);
	hp_suggestions_release(&v);
	f = add(&x, HP_TAG_FAIL, "Z.9", NODE1);
	hp_suggest_finding(&x.s, f, &v);
	T_EQ(v.n, 0);
	T_EQ(v.skipped, 0);
	hp_suggestions_release(&v);
	fx_close(&x);
}

static void t_slurm_cluster(void)
{
	struct hp_suggestions v;
	struct fx x;
	struct hp_finding *f;
	long i;

	fx_open(&x, "{'meta':{'region':'us-east-1'},'cluster':{'ClusterName':'s1',"
		    "'ClusterArn':'arn:aws:sagemaker:us-east-1:1:cluster/abcdef012345'},"
		    "'nodes':[{'InstanceId':'" NODE1 "','InstanceGroupName':'workers'}]}");
	f = add(&x, HP_TAG_FAIL, "G.3+F", NODE1);
	hp_finding_var(f, "NODE_NAME", "ip-10-1-2-3");
	hp_suggest_finding(&x.s, f, &v);
	/* kubectl cordon/drain is for EKS; the Slurm drain and controller reason stay. */
	T_ASSERT(find_cmd(&v, "kubectl") < 0);
	T_EQ(v.skipped, 1);
	i = find_cmd(&v, "state=drain");
	T_ASSERT(i == 0);
	T_CONTAINS(v.v[i].command, "nodename=ip-10-1-2-3 ");
	T_ASSERT(find_cmd(&v, "reason=\"Action:Replace\"") > 0);
	hp_suggestions_release(&v);
	fx_close(&x);
}

/* Every placeholder left in any block of the guide is listed with a reason. */
static void t_leftovers_are_listed(void)
{
	struct fx x;
	size_t k;

	fx_open(&x, eks_snap);
	for (k = 0; k < x.s.doc.nsec; k++) {
		struct hp_finding *f = add(&x, HP_TAG_WARN, x.s.doc.sec[k].id, NODE1);
		struct hp_suggestions v;
		size_t i, j;

		hp_suggest_finding(&x.s, f, &v);
		for (i = 0; i < v.n; i++) {
			const struct hp_suggestion *sg = &v.v[i];
			const char *texts[] = { sg->command, sg->intro, sg->blast, sg->iac };
			size_t t;

			/* Values known in this snapshot never stay as placeholders. */
			T_NOT_CONTAINS(sg->command, "<CLUSTER>");
			T_NOT_CONTAINS(sg->command, "<REGION>");
			T_NOT_CONTAINS(sg->command, "<INSTANCE_ID>");
			T_NOT_CONTAINS(sg->command, "<GROUP>");
			T_NOT_CONTAINS(sg->command, "<EKS_NAME>");
			for (t = 0; t < HP_ARRAY_LEN(texts); t++) {
				const char *p = texts[t];

				while (p && (p = strchr(p, '<')) != NULL) {
					size_t n = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
					int listed = 0;

					if (n && p[1 + n] == '>' && p[1] >= 'A' && p[1] <= 'Z') {
						for (j = 0; j < sg->nunfilled; j++)
							listed |= strlen(sg->unfilled[j].name) == n &&
								  !strncmp(sg->unfilled[j].name, p + 1, n);
						if (!listed)
							T_FAILF("%s: %.*s left in but not listed",
								x.s.doc.sec[sg->section].id, (int)n + 2, p);
					}
					p++;
				}
			}
			for (j = 0; j < sg->nunfilled; j++)
				T_ASSERT(sg->unfilled[j].why && *sg->unfilled[j].why);
		}
		hp_suggestions_release(&v);
	}
	fx_close(&x);
}

static void t_text(void)
{
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);
	struct fx x;
	struct hp_finding *f;

	fx_open(&x, eks_snap);
	f = add(&x, HP_TAG_FAIL, "F", NODE1);
	hp_suggest_text(&x.s, f, 0, &out);
	T_ASSERT(hp_starts_with(out.buf, "    Suggested command (run this yourself), \xc2\xa7 F.2: "
				"step 1, reboot.\n      aws sagemaker batch-reboot-cluster-nodes "
				"--cluster-name c1 --region us-west-2 --node-ids '[\"" NODE1 "\"]'\n"
				"      Blast radius: reboots `" NODE1 "`;"));
	T_CONTAINS(out.buf, "\n      IaC note: if IaC (CloudFormation");
	T_CONTAINS(out.buf, "\n    (2 suggested commands for Slurm clusters left out)\n");
	T_NOT_CONTAINS(out.buf, "\033");
	hp_buf_reset(&out);

	/* Multi-line commands keep one output line per line. */
	f = add(&x, HP_TAG_WARN, "A.1", NULL);
	hp_finding_var(f, "SG_ID", "sg-2");
	hp_suggest_text(&x.s, f, 1, &out);
	T_CONTAINS(out.buf, "\033[1;33mSuggested command (run this yourself)\033[0m");
	T_CONTAINS(out.buf, "\n      aws ec2 authorize-security-group-egress --group-id sg-2 "
		   "--region us-west-2 \\\n        --ip-permissions");
	hp_buf_reset(&out);

	/* A value hpnode does not know: the command is left out, and why is said. */
	f = add(&x, HP_TAG_WARN, "A.1", NULL);
	hp_suggest_text(&x.s, f, 0, &out);
	T_NOT_CONTAINS(out.buf, "<SG_ID>\n");
	T_NOT_CONTAINS(out.buf, "Suggested command");
	T_CONTAINS(out.buf, "    (Not suggested, it does not fit this cluster: \xc2\xa7 A.1: `aws ec2 "
		   "authorize-security-group-egress --group-id <SG_ID> --region us-west-2` left out, "
		   "<SG_ID> not known (the cluster uses 3 security groups (sg-1, sg-2, sg-9); pick "
		   "the one this finding concerns)");
	hp_buf_reset(&out);

	/* A section without commands says where to read; other tags get nothing. */
	f = add(&x, HP_TAG_FAIL, "C+L", NULL);
	hp_suggest_text(&x.s, f, 0, &out);
	T_STREQ(out.buf, "    No command to suggest; read the section: hpnode explain C L\n");
	hp_buf_reset(&out);
	hp_suggest_text(&x.s, add(&x, HP_TAG_PASS, "F", NODE1), 0, &out);
	hp_suggest_text(&x.s, add(&x, HP_TAG_INFO, "F", NODE1), 0, &out);
	hp_suggest_text(&x.s, add(&x, HP_TAG_FAIL, "", NODE1), 0, &out);
	T_STREQ(out.buf, "");
	hp_buf_release(&out);
	fx_close(&x);
}

static void t_json(void)
{
	struct fx x;
	struct hp_finding *f;
	cJSON *obj = cJSON_CreateObject(), *list, *first, *item;
	int n = 0;

	fx_open(&x, eks_snap);
	f = add(&x, HP_TAG_FAIL, "A+F", NODE1);
	hp_suggest_json(&x.s, f, obj);
	list = cJSON_GetObjectItem(obj, "suggestions");
	T_ASSERT(cJSON_IsArray(list));
	T_EQ(cJSON_GetObjectItem(obj, "suggestions_skipped")->valuedouble, 2);
	first = cJSON_GetArrayItem(list, 0);
	T_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(first, "section")), "A.1");
	T_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(first, "title")),
		"Security Group Self-Referencing Rules");
	T_CONTAINS(cJSON_GetStringValue(cJSON_GetObjectItem(first, "command")),
		   "--group-id sg-9 --region us-west-2 \\\n  --ip-permissions");
	cJSON_ArrayForEach(item, list) {
		const char *cmd = cJSON_GetStringValue(cJSON_GetObjectItem(item, "command"));

		T_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(item, "run_this_yourself")));
		T_ASSERT(cJSON_IsString(cJSON_GetObjectItem(item, "blast_radius")));
		T_ASSERT(cJSON_IsArray(cJSON_GetObjectItem(item, "unfilled")));
		T_ASSERT(cJSON_IsString(cJSON_GetObjectItem(item, "intro")));
		if (strstr(cmd, "aws ec2 ") || strstr(cmd, "update-cluster "))
			T_CONTAINS(cJSON_GetStringValue(cJSON_GetObjectItem(item, "iac_note")),
				   "drift");
		if (strstr(cmd, "batch-reboot"))
			T_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(item, "iac_note")));
		n++;
	}
	T_EQ(n, 5);
	cJSON_Delete(obj);

	/* Not a FAIL/WARN: an empty list, still present. */
	obj = cJSON_CreateObject();
	hp_suggest_json(&x.s, add(&x, HP_TAG_PASS, "F", NODE1), obj);
	T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(obj, "suggestions")), 0);
	T_EQ(cJSON_GetObjectItem(obj, "suggestions_skipped")->valuedouble, 0);
	cJSON_Delete(obj);
	fx_close(&x);
}

/* The reporter shows suggestions only when asked, with the banner line. */
static void t_report(void)
{
	struct hp_buf out = HP_BUF_INIT(HP_MAX_PROC_OUT);
	struct hp_report_opts o = { 0 };
	struct ck c;
	struct hp_emit em = { &c_test, NULL };
	cJSON *doc, *fs, *f;

	ck_load(&c, eks_snap);
	em.out = &c.f;
	hp_emitx(&em, HP_TAG_FAIL, HP_P1, "F", NODE1, "node failed");
	hp_emitx(&em, HP_TAG_PASS, HP_PNONE, NULL, NULL, "all good");
	o.cluster = "c1";
	o.region = "us-west-2";
	hp_report_text(&c.f, &o, &out);
	T_NOT_CONTAINS(out.buf, "Suggested command");
	hp_buf_reset(&out);
	hp_report_json(&c.f, &o, &out);
	T_NOT_CONTAINS(out.buf, "suggestions");
	hp_buf_reset(&out);

	o.suggest = 1;
	o.snap = &c.snap;
	hp_report_text(&c.f, &o, &out);
	T_CONTAINS(out.buf, "Suggested commands are for you to run after review; hpnode never "
		   "runs them.\n");
	T_CONTAINS(out.buf, "  [FAIL] node failed \xe2\x86\x92 references/node-diagnostics-detail.md "
		   "\xc2\xa7 F (Hardware / Auto-Repair)\n    Suggested command (run this yourself), "
		   "\xc2\xa7 F.2: step 1, reboot.\n");
	hp_buf_reset(&out);
	hp_report_json(&c.f, &o, &out);
	doc = cJSON_Parse(out.buf);
	T_ASSERT(doc != NULL);
	fs = cJSON_GetObjectItem(doc, "findings");
	T_EQ(cJSON_GetArraySize(fs), 2);
	cJSON_ArrayForEach(f, fs) {
		int fail = !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "tag")), "FAIL");

		T_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(f, "suggestions")), fail ? 3 : 0);
	}
	cJSON_Delete(doc);
	hp_buf_release(&out);
	ck_free(&c);
}

/* The checks name the instance group where their finding has no node. */
static void t_checks_attach_values(void)
{
	const struct hp_finding *f;
	struct ck c;

	ck_load(&c, "{'cluster':{'InstanceGroups':["
		    "{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge','ThreadsPerCore':1,"
		    "'CurrentCount':1,'TargetCount':2}]},"
		    "'instance_types':{'p5.48xlarge':{'vCpuInfo':{'defaultVCpus':'192',"
		    "'defaultThreadsPerCore':'2'}}},"
		    "'identity':{'Arn':'arn:aws:sts::1:assumed-role/Ops/me'},"
		    "'calls':[{'service':'logs','action':'FilterLogEvents','class':'denied'}],"
		    "'events':[{'InstanceGroupName':'gpu','EventTime':1,"
		    "'Description':'Unable to launch: insufficient capacity'}]}");
	ck_run_all(&c);
	f = ck_one(&c, HP_TAG_WARN, "ThreadsPerCore=1");
	T_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(f->vars, "GROUP")), "gpu");
	T_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(f->vars, "INSTANCE_TYPE")), "p5.48xlarge");
	f = ck_one(&c, HP_TAG_FAIL, "has 1 of 2 nodes");
	T_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(f->vars, "GROUP")), "gpu");
	f = ck_one(&c, HP_TAG_FAIL, "Insufficient capacity on instance group 'gpu'");
	T_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(f->vars, "GROUP")), "gpu");
	f = ck_one(&c, HP_TAG_FAIL, "Missing IAM permission for logs:FilterLogEvents");
	T_STREQ(f->section, "K.1");
	T_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(f->vars, "ROLE_NAME")), "Ops");
	ck_free(&c);
}

/*
 * Suggestions follow the snapshot's state (the demo cluster's three cases):
 * no "turn NodeRecovery on" when it is Automatic, no reboot/replace for a
 * node HyperPod is still provisioning, no security-group rule that exists.
 */
static const char state_snap[] =
	"{'meta':{'region':'us-west-2','cluster_arg':'c1'},"
	"'cluster':{'ClusterName':'c1','NodeRecovery':'Automatic',"
	"'ClusterArn':'arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdef012345',"
	"'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:111122223333:cluster/c1-eks'}},"
	"'VpcConfig':{'SecurityGroupIds':['sg-1'],'Subnets':['subnet-1']},"
	"'InstanceGroups':[{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge','TargetCount':2}]},"
	"'nodes':["
	"{'InstanceId':'" NODE1 "','InstanceGroupName':'gpu','InstanceStatus':{'Status':'Pending'}},"
	"{'InstanceId':'" NODE2 "','InstanceGroupName':'gpu','InstanceStatus':{'Status':'Failure'}}],"
	"'network':{'security_groups':{'sg-1':{'groupId':'sg-1',"
	"'ipPermissions':[{'ipProtocol':'-1','groups':[{'groupId':'sg-1'}]}],"
	"'ipPermissionsEgress':[{'ipProtocol':'tcp','fromPort':443,'toPort':443,"
	"'ipRanges':[{'cidrIp':'0.0.0.0/0'}]}]}}}}";

static void t_state_aware(void)
{
	struct hp_suggestions v;
	struct hp_buf out = HP_BUF_INIT(1 << 20);
	struct fx x;
	struct hp_finding *f;
	long i;
	size_t k;
	int said;

	fx_open(&x, state_snap);
	/* NodeRecovery already Automatic: F.3's update-cluster is left out, and said so. */
	f = add(&x, HP_TAG_FAIL, "F", NODE2);
	hp_suggest_finding(&x.s, f, &v);
	T_ASSERT(find_cmd(&v, "--node-recovery Automatic") < 0);
	T_ASSERT(find_cmd(&v, "batch-reboot-cluster-nodes") >= 0);   /* a Failure node: fits */
	for (said = 0, k = 0; k < v.nunfit; k++)
		said |= strstr(v.unfit[k], "NodeRecovery is already Automatic") != NULL;
	T_ASSERT(said);
	hp_suggestions_release(&v);

	/* A node still Pending: no reboot, no replace. */
	f = add(&x, HP_TAG_WARN, "F", NODE1);
	hp_suggest_finding(&x.s, f, &v);
	T_ASSERT(find_cmd(&v, "batch-reboot-cluster-nodes") < 0);
	T_ASSERT(find_cmd(&v, "batch-replace-cluster-nodes") < 0);
	for (said = 0, k = 0; k < v.nunfit; k++)
		said |= strstr(v.unfit[k], NODE1 " is Pending") != NULL;
	T_ASSERT(said);
	hp_suggestions_release(&v);
	hp_suggest_text(&x.s, f, 0, &out);
	T_CONTAINS(out.buf, "Not suggested, it does not fit this cluster: \xc2\xa7 F.2: " NODE1
			    " is Pending");
	T_NOT_CONTAINS(out.buf, "batch-reboot-cluster-nodes");

	/*
	 * § A.1 on sg-1: the inbound self rule and HTTPS out exist, the outbound
	 * self rule does not: only the egress self-reference is suggested.
	 */
	f = add(&x, HP_TAG_FAIL, "A.1", NULL);
	hp_suggest_finding(&x.s, f, &v);
	i = find_cmd(&v, "authorize-security-group-egress --group-id sg-1");
	T_ASSERT(i >= 0);
	T_CONTAINS(v.v[i].command, "\"GroupId\":\"sg-1\"");
	T_ASSERT(find_cmd(&v, "authorize-security-group-ingress") < 0);
	T_ASSERT(find_cmd(&v, "\"CidrIp\":\"0.0.0.0/0\"") < 0);
	for (said = 0, k = 0; k < v.nunfit; k++)
		said += strstr(v.unfit[k], "already") != NULL;
	T_EQ(said, 2);
	hp_suggestions_release(&v);
	hp_buf_release(&out);
	fx_close(&x);
}

/*
 * Several security groups and two VPCs: a finding names its own resource,
 * and the commands take it; what it does not name is never guessed.
 */
static const char multi_snap[] =
	"{'meta':{'region':'us-west-2','cluster_arg':'c1'},"
	"'cluster':{'ClusterName':'c1','NodeRecovery':'Automatic',"
	"'ClusterArn':'arn:aws:sagemaker:us-west-2:111122223333:cluster/abcdef012345',"
	"'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:111122223333:cluster/c1-eks'}},"
	"'VpcConfig':{'SecurityGroupIds':['sg-a','sg-b','sg-x'],'Subnets':['subnet-1','subnet-2']},"
	"'InstanceGroups':[{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge'}]},"
	"'nodes':[{'InstanceId':'" NODE1 "','InstanceGroupName':'gpu'}],"
	"'network':{'subnet_ids':['subnet-1','subnet-2'],'sg_ids':['sg-a','sg-b','sg-x'],"
	"'subnets':{'subnet-1':{'subnetId':'subnet-1','vpcId':'vpc-1'},"
	"'subnet-2':{'subnetId':'subnet-2','vpcId':'vpc-1'}},"
	"'security_groups':{"
	"'sg-a':{'groupId':'sg-a','vpcId':'vpc-1',"
	"'ipPermissions':[{'ipProtocol':'-1','groups':[{'groupId':'sg-a'}]}],"
	"'ipPermissionsEgress':[]},"
	"'sg-b':{'groupId':'sg-b','vpcId':'vpc-1','ipPermissions':[],'ipPermissionsEgress':[]},"
	"'sg-x':{'groupId':'sg-x','vpcId':'vpc-2','ipPermissions':[],'ipPermissionsEgress':[]}},"
	"'vpcs':{'vpc-1':{'vpcId':'vpc-1'},'vpc-2':{'vpcId':'vpc-2'}},"
	"'route_tables':["
	"{'routeTableId':'rtb-priv','vpcId':'vpc-1','associationSet':[{'subnetId':'subnet-1'},"
	"{'subnetId':'subnet-2'}],'routeSet':[{'destinationCidrBlock':'0.0.0.0/0',"
	"'gatewayId':'igw-1','state':'active'}]},"
	"{'routeTableId':'rtb-pub','vpcId':'vpc-1','associationSet':[{'subnetId':'subnet-pub'}],"
	"'routeSet':[{'destinationCidrBlock':'0.0.0.0/0','gatewayId':'igw-1','state':'active'}]},"
	"{'routeTableId':'rtb-main','vpcId':'vpc-1','associationSet':[{'main':'true'}],"
	"'routeSet':[]}]}}";

/* Whether a reason a block was left out for contains text. */
static int unfit_says(const struct hp_suggestions *v, const char *text)
{
	size_t i;

	for (i = 0; i < v->nunfit; i++)
		if (strstr(v->unfit[i], text))
			return 1;
	return 0;
}

static void t_network_resources(void)
{
	static const struct hp_check c_route = { .id = "network.routing", .section = "B.3",
						 .prio = HP_P1, .group = HP_GROUP_VPC };
	struct hp_emit em;
	struct hp_suggestions v;
	struct hp_finding *f;
	struct fx x;
	long i;

	fx_open(&x, multi_snap);
	/* A group's own finding: its id, and no rule it already has. */
	f = add(&x, HP_TAG_FAIL, "A.1", NULL);
	hp_finding_var(f, "SG_ID", "sg-a");
	expect(&x, f, "SG_ID", "sg-a", NULL);
	expect(&x, f, "VPC_ID", "vpc-1", NULL);
	expect(&x, f, "SUBNET_ID", NULL, "this finding is about security group sg-a, not a subnet");
	hp_suggest_finding(&x.s, f, &v);
	i = find_cmd(&v, "authorize-security-group-egress --group-id sg-a");
	T_ASSERT(i >= 0);
	T_ASSERT(find_cmd(&v, "authorize-security-group-ingress") < 0);
	T_ASSERT(unfit_says(&v, "sg-a already has the all-traffic inbound rule from itself"));
	hp_suggestions_release(&v);

	/* No group named among three: nothing with <SG_ID> is suggested, and why. */
	f = add(&x, HP_TAG_FAIL, "A.1", NULL);
	hp_suggest_finding(&x.s, f, &v);
	T_EQ(v.n, 0);
	T_ASSERT(unfit_says(&v, "<SG_ID> not known (the cluster uses 3 security groups (sg-a, sg-b, "
			    "sg-x); pick the one this finding concerns)"));
	hp_suggestions_release(&v);

	/* A subnet routed to the internet gateway of a VPC without a NAT gateway. */
	em.check = &c_route;
	em.out = &x.c.f;
	f = hp_emitx(&em, HP_TAG_FAIL, HP_P1, "B.3", NULL, "subnet-1 sends 0.0.0.0/0 to igw-1");
	hp_finding_var(f, "SUBNET_ID", "subnet-1");
	hp_finding_var(f, "ROUTE_TABLE_ID", "rtb-priv");
	expect(&x, f, "VPC_ID", "vpc-1", NULL);
	expect(&x, f, "NAT_GATEWAY_ID", NULL, "no route table of vpc-1 routes to a NAT gateway, so "
	       "there is none to point at: create one first in a public subnet of vpc-1 (one whose "
	       "route table sends 0.0.0.0/0 to an internet gateway: subnet-pub), with an Elastic IP");
	hp_suggest_finding(&x.s, f, &v);
	T_ASSERT(find_cmd(&v, "replace-route") < 0);
	T_ASSERT(unfit_says(&v, "B.3: `aws ec2 replace-route --route-table-id rtb-priv "
			    "--destination-cidr-block 0.0.0.0/0 --nat-gateway-id <NAT_GATEWAY_ID> "
			    "--region us-west-2` left out, <NAT_GATEWAY_ID> not known (no route table"));
	hp_suggestions_release(&v);

	/* A VPC's finding: the route table of the cluster's subnets in it. */
	f = add(&x, HP_TAG_WARN, "B.4", NULL);
	hp_finding_var(f, "VPC_ID", "vpc-1");
	expect(&x, f, "ROUTE_TABLE_ID", "rtb-priv", NULL);
	expect(&x, f, "SUBNET_ID", NULL, "this finding is about VPC vpc-1, not a subnet");
	fx_close(&x);

	/* With a NAT gateway the VPC's tables route to, the route takes it. */
	{
		struct hp_buf b = HP_BUF_INIT(1 << 16);
		const char *at = strstr(multi_snap, "{'routeTableId':'rtb-main'");

		hp_buf_putn(&b, multi_snap, (size_t)(at - multi_snap));
		hp_buf_puts(&b, "{'routeTableId':'rtb-nat','vpcId':'vpc-1','associationSet':[],"
			    "'routeSet':[{'destinationCidrBlock':'0.0.0.0/0','natGatewayId':'nat-1',"
			    "'state':'active'}]},");
		hp_buf_puts(&b, at);
		fx_open(&x, b.buf);
		hp_buf_release(&b);
	}
	em.out = &x.c.f;
	f = hp_emitx(&em, HP_TAG_FAIL, HP_P1, "B.3", NULL, "subnet-1 sends 0.0.0.0/0 to igw-1");
	hp_finding_var(f, "SUBNET_ID", "subnet-1");
	hp_finding_var(f, "ROUTE_TABLE_ID", "rtb-priv");
	hp_suggest_finding(&x.s, f, &v);
	i = find_cmd(&v, "replace-route --route-table-id rtb-priv --destination-cidr-block 0.0.0.0/0 "
		     "--nat-gateway-id nat-1 --region us-west-2");
	T_ASSERT(i >= 0);
	hp_suggestions_release(&v);
	fx_close(&x);
}

/* Fixes meant for one kind of finding are not handed to another. */
static void t_block_rules(void)
{
	static const struct hp_check c_count = { .id = "node.gpu-count", .section = "G.1",
						 .prio = HP_P0, .group = HP_GROUP_ONNODE };
	static const struct hp_check c_remap = { .id = "node.gpu-remap", .section = "G.1.a",
						 .prio = HP_P1, .group = HP_GROUP_ONNODE };
	static const struct hp_check c_slurm = { .id = "slurm.nodes", .section = "H.1",
						 .prio = HP_P1, .group = HP_GROUP_SLURM };
	struct hp_emit em;
	struct hp_suggestions v;
	struct hp_finding *f;
	struct fx x;
	long i;

	fx_open(&x, eks_snap);
	/* A GPU the driver lost: no "apply a pending remap". */
	em.check = &c_count;
	em.out = &x.c.f;
	f = hp_emitx(&em, HP_TAG_FAIL, HP_P0, "G.1", NODE1, "nvidia-smi cannot reach GPU 3");
	hp_suggest_finding(&x.s, f, &v);
	T_ASSERT(find_cmd(&v, "batch-reboot-cluster-nodes") < 0);
	T_ASSERT(unfit_says(&v, "G.1.a: the command is for a pending or failed GPU row remap, which "
			    "this finding is not about"));
	T_EQ(v.nunfit, 1);   /* both G.1.a blocks, one reason */
	hp_suggestions_release(&v);
	/* A pending remap: its reboot. */
	em.check = &c_remap;
	f = hp_emitx(&em, HP_TAG_WARN, HP_P1, "G.1.a", NODE1, "row remap pending");
	hp_suggest_finding(&x.s, f, &v);
	T_ASSERT(find_cmd(&v, "batch-reboot-cluster-nodes") == 0);
	T_EQ(v.nunfit, 0);
	hp_suggestions_release(&v);
	fx_close(&x);

	/* Slurm: a reason that is almost Action:Replace gets the exact one. */
	fx_open(&x, "{'meta':{'region':'us-east-1'},'cluster':{'ClusterName':'s1','NodeRecovery':"
		    "'Automatic','ClusterArn':'arn:aws:sagemaker:us-east-1:1:cluster/abcdef012345'},"
		    "'nodes':[{'InstanceId':'" NODE1 "','InstanceGroupName':'workers'}]}");
	em.check = &c_slurm;
	em.out = &x.c.f;
	f = hp_emitx(&em, HP_TAG_FAIL, HP_P1, "F.3", NODE1, "Slurm node ip-10-1-2-3 is drained "
		     "with reason 'Action: replace'");
	hp_finding_var(f, "NODE_NAME", "ip-10-1-2-3");
	hp_finding_var(f, "ACTION", "Action:Replace");
	hp_suggest_finding(&x.s, f, &v);
	i = find_cmd(&v, "sudo scontrol update nodename=ip-10-1-2-3 state=fail "
		     "reason=\"Action:Replace\"");
	T_ASSERT(i >= 0);
	T_STREQ(x.s.doc.sec[v.v[i].section].id, "F.3");
	T_ASSERT(unfit_says(&v, "NodeRecovery is already Automatic"));
	hp_suggestions_release(&v);
	/* The same block is not for another F.3 finding. */
	em.check = &c_count;
	f = hp_emitx(&em, HP_TAG_FAIL, HP_P1, "F.3", NODE1, "something else");
	hp_suggest_finding(&x.s, f, &v);
	T_ASSERT(find_cmd(&v, "scontrol") < 0);
	T_ASSERT(unfit_says(&v, "F.3: the command is for a Slurm node reason that is almost "
			    "Action:"));
	hp_suggestions_release(&v);
	fx_close(&x);
}

/* A check of the NCCL guide: its blocks, its placeholders, from the finding and nccl.options. */
static void t_nccl_guide(void)
{
	static const struct hp_check c_policy = {
		.id = "test.nccl", .doc = HP_REFDOC_NCCL, .section = "NC22", .prio = HP_P1,
		.group = HP_GROUP_NCCL_NET,
	};
	struct hp_emit em;
	struct hp_suggestions v;
	struct hp_finding *f;
	struct fx x;
	long i;

	fx_open(&x, "{'cluster':{'ClusterName':'c1','Orchestrator':{'Eks':{'ClusterArn':"
		    "'arn:aws:eks:us-west-2:1:cluster/k'}}},'nccl':{'options':{'namespace':'ml',"
		    "'job':'llama'}},'kube':{'nodes':[{'name':'hyperpod-" NODE1 "','provider_id':"
		    "'aws:///us-west-2a/" NODE1 "'}]}}");
	em.check = &c_policy;
	em.out = &x.c.f;
	f = hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "NetworkPolicy ml/deny blocks all ingress");
	hp_finding_var(f, "POLICY", "deny");
	hp_finding_var(f, "NAMESPACE", "ml");
	hp_suggest_finding(&x.s, f, &v);
	T_ASSERT(v.doc == &x.s.nccl);
	i = find_cmd(&v, "kubectl delete networkpolicy -n ml deny");
	T_ASSERT(i >= 0);
	T_STREQ(v.doc->sec[v.v[i].section].id, "NC22");
	T_ASSERT(find_cmd(&v, "kubectl apply -n ml -f -") >= 0);
	hp_suggestions_release(&v);
	/* Values the finding lacks: the run's --job and --namespace, the node's Kubernetes name. */
	expect(&x, f, "JOB", "llama", NULL);
	f = hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NODE1, "a node finding");
	expect(&x, f, "NODE_NAME", "hyperpod-" NODE1, NULL);
	expect(&x, f, "PID", NULL, "names no single process");
	fx_close(&x);

	/* Without --job the job is not guessed. */
	fx_open(&x, "{'nccl':{'options':{}}}");
	em.out = &x.c.f;
	f = hp_emitx(&em, HP_TAG_FAIL, HP_P1, NULL, NULL, "x");
	expect(&x, f, "JOB", NULL, "hpnode nccl --job narrows the run to one");
	fx_close(&x);
}

T_MAIN(T(t_network_resources), T(t_block_rules), T(t_cluster_values), T(t_nccl_guide), T(t_state_aware), T(t_node_values), T(t_unknown_reasons), T(t_values_found_anywhere),
       T(t_finding_values_win), T(t_unsafe_values), T(t_blocks_for_a_finding), T(t_slurm_cluster),
       T(t_leftovers_are_listed), T(t_text), T(t_json), T(t_report), T(t_checks_attach_values))
