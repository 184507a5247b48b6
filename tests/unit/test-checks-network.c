/*
 * The network checks over hand-built snapshots: EFA security group rules
 * (with equivalent rule sets and unreadable groups), one VPC, DNS, routes,
 * endpoints, EKS alignment, free IPs, ENI headroom and zone offerings; and
 * running a subset of checks by id.
 */
#include <stdlib.h>
#include <string.h>

#include "checks-t.h"
#include "hp/json.h"
#include "t.h"

/* A healthy EKS cluster: one EFA group, two subnets in two zones behind NAT. */
static const char base[] =
	"{'meta':{'region':'us-west-2'},"
	"'cluster':{'ClusterName':'c1','ClusterArn':'arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456',"
	" 'Orchestrator':{'Eks':{'ClusterArn':'arn:aws:eks:us-west-2:123456789012:cluster/e1'}},"
	" 'VpcConfig':{'SecurityGroupIds':['sg-1'],'Subnets':['subnet-a','subnet-b']},"
	" 'InstanceGroups':[{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge'}]},"
	"'network':{'sg_ids':['sg-1'],'subnet_ids':['subnet-a','subnet-b'],'eks_sg_ids':['sg-1','sg-eks'],"
	" 'security_groups':{"
	"  'sg-1':{'groupId':'sg-1','groupName':'efa','vpcId':'vpc-1',"
	"   'ipPermissions':[{'ipProtocol':'-1','groups':[{'userId':'1','groupId':'sg-1'}],'ipRanges':[]}],"
	"   'ipPermissionsEgress':[{'ipProtocol':'-1','groups':[{'groupId':'sg-1'}],'ipRanges':[]},"
	"    {'ipProtocol':'tcp','fromPort':'443','toPort':'443','groups':[],'ipRanges':[{'cidrIp':'0.0.0.0/0'}]}]},"
	"  'sg-eks':{'groupId':'sg-eks','vpcId':'vpc-1',"
	"   'ipPermissions':[{'ipProtocol':'-1','groups':[{'groupId':'sg-eks'}]}],'ipPermissionsEgress':[]}},"
	" 'security_group_errors':{},"
	" 'subnets':{"
	"  'subnet-a':{'subnetId':'subnet-a','vpcId':'vpc-1','availabilityZone':'us-west-2a','availableIpAddressCount':'1000'},"
	"  'subnet-b':{'subnetId':'subnet-b','vpcId':'vpc-1','availabilityZone':'us-west-2b','availableIpAddressCount':'2000'}},"
	" 'subnet_errors':{},"
	" 'vpc_attributes':{'vpc-1':{'enableDnsSupport':true,'enableDnsHostnames':true}},"
	" 'route_tables':["
	"  {'routeTableId':'rtb-main','vpcId':'vpc-1','associationSet':[{'main':'true'}],"
	"   'routeSet':[{'destinationCidrBlock':'10.0.0.0/16','gatewayId':'local','state':'active'}]},"
	"  {'routeTableId':'rtb-p','vpcId':'vpc-1','associationSet':[{'main':'false','subnetId':'subnet-a'},"
	"   {'main':'false','subnetId':'subnet-b'}],"
	"   'routeSet':[{'destinationCidrBlock':'10.0.0.0/16','gatewayId':'local','state':'active'},"
	"    {'destinationCidrBlock':'0.0.0.0/0','natGatewayId':'nat-1','state':'active'}]}],"
	" 'vpc_endpoints':[],"
	" 'enis':{'count':100,'in_vpcs':10,'truncated':false},"
	" 'eni_quota':{'value':5000,'service_code':'vpc'},"
	" 'eks_name':'e1',"
	" 'eks':{'name':'e1','status':'ACTIVE','accessConfig':{'authenticationMode':'API'},"
	"  'resourcesVpcConfig':{'vpcId':'vpc-1','securityGroupIds':['sg-1'],'clusterSecurityGroupId':'sg-eks',"
	"   'endpointPublicAccess':true,'endpointPrivateAccess':true}},"
	" 'offerings':{'p5.48xlarge':['us-west-2a','us-west-2c']}}}";

static const char *const all_endpoints[] = {
	"s3", "ecr.api", "ecr.dkr", "sts", "ssm", "ssmmessages", "ec2messages", "ec2",
	"sagemaker.api", "sagemaker.runtime", "logs", "eks", NULL
};

/* The item at a '/'-separated path (keys may hold dots); NULL when absent. */
static cJSON *at(struct ck *c, const char *path)
{
	char *copy = strdup(path), *save = NULL, *key;
	cJSON *node = c->snap.root;

	for (key = strtok_r(copy, "/", &save); key && node; key = strtok_r(NULL, "/", &save))
		node = cJSON_GetObjectItemCaseSensitive(node, key);
	free(copy);
	return node;
}

/* Replace (or add) the member at a '/'-path with JSON text (' for "); NULL text deletes it. */
static void set(struct ck *c, const char *path, const char *json)
{
	char *copy = strdup(path), *slash = strrchr(copy, '/'), *p;
	cJSON *parent, *item = NULL;

	T_ASSERT(slash);
	*slash = '\0';
	parent = at(c, copy);
	if (!parent)
		T_FAILF("no parent for %s", path);
	if (json) {
		char *text = strdup(json);

		for (p = text; *p; p++)
			if (*p == '\'')
				*p = '"';
		item = cJSON_Parse(text);
		free(text);
		if (!item)
			T_FAILF("bad JSON for %s: %s", path, json);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(parent, slash + 1);
	if (item)
		cJSON_AddItemToObject(parent, slash + 1, item);
	free(copy);
}

/* Endpoints for the NULL-terminated services, in vpc-1, the S3 gateway in rtb-p. */
static void endpoints(struct ck *c, const char *const *svcs, const char *state)
{
	cJSON *list = at(c, "network/vpc_endpoints");
	size_t i;

	for (i = 0; svcs[i]; i++) {
		cJSON *ep = cJSON_CreateObject(), *rt = cJSON_CreateArray();
		char name[128], id[64];

		snprintf(name, sizeof(name), "com.amazonaws.us-west-2.%s", svcs[i]);
		snprintf(id, sizeof(id), "vpce-%s", svcs[i]);
		cJSON_AddStringToObject(ep, "vpcEndpointId", id);
		cJSON_AddStringToObject(ep, "vpcId", "vpc-1");
		cJSON_AddStringToObject(ep, "serviceName", name);
		cJSON_AddStringToObject(ep, "state", state);
		cJSON_AddStringToObject(ep, "vpcEndpointType", strcmp(svcs[i], "s3") ? "Interface" : "Gateway");
		if (!strcmp(svcs[i], "s3"))
			cJSON_AddItemToArray(rt, cJSON_CreateString("rtb-p"));
		cJSON_AddItemToObject(ep, "routeTableIdSet", rt);
		cJSON_AddItemToArray(list, ep);
	}
}

static void load(struct ck *c)
{
	ck_load(c, base);
	endpoints(c, all_endpoints, "available");
}

static const struct hp_finding *only_finding(struct ck *c, enum hp_tag tag, const char *sub,
					     enum hp_prio prio, const char *section)
{
	const struct hp_finding *f = ck_one(c, tag, sub);

	T_EQ(f->prio, prio);
	T_STREQ(f->section, section);
	return f;
}

/* ---------------------------------------------------------------- § A.1 */

static void t_efa_healthy(void)
{
	struct ck c;

	load(&c);
	ck_run(&c, "network.efa-sg");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "sg-1 (efa): inbound all traffic from itself");
	ck_one(&c, HP_TAG_PASS, "sg-1 (efa): outbound all traffic to itself");
	ck_one(&c, HP_TAG_PASS, "sg-1 (efa): no all-traffic outbound rule to 0.0.0.0/0");
	T_EQ(c.f.n, 3);
	/* EKS-only groups are not EFA groups. */
	T_EQ(ck_count_msg(&c, HP_TAG_PASS, "sg-eks"), 0);
	ck_free(&c);
}

static void t_efa_missing_egress_is_p0(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c);
	set(&c, "network/security_groups/sg-1/ipPermissionsEgress", "[]");
	ck_run(&c, "network.efa-sg");
	f = only_finding(&c, HP_TAG_FAIL, "sg-1 (efa) has no outbound self-referencing rule", HP_P0, "A.1");
	T_CONTAINS(f->message, "primary cause of EFA health-check failures");
	T_ASSERT(ck_evidence_has(f, "used by: cluster VpcConfig"));
	ck_one(&c, HP_TAG_PASS, "inbound all traffic from itself");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 1);
	ck_free(&c);
}

static void t_efa_missing_ingress_is_p1(void)
{
	struct ck c;

	load(&c);
	set(&c, "network/security_groups/sg-1/ipPermissions",
	    "[{'ipProtocol':'-1','groups':[],'ipRanges':[{'cidrIp':'10.0.0.0/8'}]}]");
	ck_run(&c, "network.efa-sg");
	only_finding(&c, HP_TAG_FAIL, "sg-1 (efa) has no inbound self-referencing rule", HP_P1, "A.1");
	ck_one(&c, HP_TAG_PASS, "outbound all traffic to itself");
	ck_free(&c);
}

/* Rule sets that do or do not amount to "all traffic from itself". */
static void t_efa_rule_equivalence(void)
{
	static const struct {
		const char *rules;
		int pass;
		const char *evidence;
	} cases[] = {
		{ "[{'ipProtocol':'tcp','fromPort':'0','toPort':'65535','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'udp','fromPort':'0','toPort':'65535','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'icmp','fromPort':'-1','toPort':'-1','groups':[{'groupId':'sg-1'}]}]", 1, NULL },
		/* Protocol numbers, and TCP split over two rules. */
		{ "[{'ipProtocol':'6','fromPort':'0','toPort':'1023','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'6','fromPort':'1024','toPort':'65535','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'17','fromPort':'0','toPort':'65535','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'1','fromPort':'-1','toPort':'-1','groups':[{'groupId':'sg-1'}]}]", 1, NULL },
		/* A gap at port 1024. */
		{ "[{'ipProtocol':'tcp','fromPort':'0','toPort':'1023','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'tcp','fromPort':'1025','toPort':'65535','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'udp','fromPort':'0','toPort':'65535','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'icmp','fromPort':'-1','toPort':'-1','groups':[{'groupId':'sg-1'}]}]", 0,
		  "cover only: tcp 0-1023, tcp 1025-65535, udp 0-65535, icmp all" },
		/* No ICMP. */
		{ "[{'ipProtocol':'tcp','fromPort':'0','toPort':'65535','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'udp','fromPort':'0','toPort':'65535','groups':[{'groupId':'sg-1'}]}]", 0,
		  "cover only: tcp 0-65535, udp 0-65535" },
		/* No UDP. */
		{ "[{'ipProtocol':'tcp','fromPort':'0','toPort':'65535','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'icmp','fromPort':'-1','toPort':'-1','groups':[{'groupId':'sg-1'}]}]", 0,
		  "cover only: tcp 0-65535, icmp all" },
		/* One ICMP type is not all ICMP. */
		{ "[{'ipProtocol':'tcp','fromPort':'0','toPort':'65535','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'udp','fromPort':'0','toPort':'65535','groups':[{'groupId':'sg-1'}]},"
		  "{'ipProtocol':'icmp','fromPort':'8','toPort':'-1','groups':[{'groupId':'sg-1'}]}]", 0, "icmp type 8" },
		/* IPv6 ranges and prefix lists are not the group itself. */
		{ "[{'ipProtocol':'-1','groups':[],'ipv6Ranges':[{'cidrIpv6':'::/0'}],"
		  "'prefixListIds':[{'prefixListId':'pl-1'}]}]", 0, NULL },
		/* Another group is not the group itself. */
		{ "[{'ipProtocol':'-1','groups':[{'groupId':'sg-2'}]}]", 0, NULL },
		{ "[]", 0, NULL },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct ck c;

		load(&c);
		set(&c, "network/security_groups/sg-1/ipPermissions", cases[i].rules);
		ck_run(&c, "network.efa-sg");
		if (cases[i].pass) {
			if (ck_count(&c, HP_TAG_FAIL))
				T_FAILF("case %zu: %s", i, ck_dump(&c));
			ck_one(&c, HP_TAG_PASS, "inbound TCP and UDP on all ports and all ICMP from itself");
		} else {
			const struct hp_finding *f = ck_one(&c, HP_TAG_FAIL, "no inbound self-referencing rule");

			if (cases[i].evidence && !ck_evidence_has(f, cases[i].evidence))
				T_FAILF("case %zu: evidence lacks '%s'", i, cases[i].evidence);
			if (!cases[i].evidence && ck_evidence_has(f, "cover only"))
				T_FAILF("case %zu: a missing rule reported as partial", i);
		}
		ck_free(&c);
	}
}

static void t_efa_egress_everywhere_warns(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c);
	set(&c, "network/security_groups/sg-1/ipPermissionsEgress",
	    "[{'ipProtocol':'-1','groups':[{'groupId':'sg-1'}],'ipRanges':[{'cidrIp':'0.0.0.0/0'}]}]");
	ck_run(&c, "network.efa-sg");
	f = only_finding(&c, HP_TAG_WARN, "allows all outbound traffic to 0.0.0.0/0", HP_P2, "A.1");
	T_CONTAINS(f->message, "sg-1 (efa)");
	ck_one(&c, HP_TAG_PASS, "outbound all traffic to itself");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 0);
	ck_free(&c);
}

static void t_efa_unreadable_is_never_a_missing_rule(void)
{
	static const struct {
		const char *error;
		const char *msg;
		enum hp_prio prio;
	} cases[] = {
		{ "{'class':'denied','code':'UnauthorizedOperation','message':'not authorized'}",
		  "Cannot read security group sg-1: access denied", HP_P2 },
		{ "{'class':'throttled','code':'RequestLimitExceeded','message':'slow down'}",
		  "Cannot read security group sg-1: still throttled", HP_P2 },
		{ "{'class':'not_found','code':'InvalidGroup.NotFound','message':'gone'}",
		  "Cannot read security group sg-1: it does not exist (InvalidGroup.NotFound)", HP_P1 },
		{ "{'class':'server','code':'InternalError','message':'oops'}",
		  "Cannot read security group sg-1 (InternalError)", HP_P2 },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct ck c;
		const struct hp_finding *f;

		load(&c);
		set(&c, "network/security_groups/sg-1", NULL);
		set(&c, "network/security_group_errors/sg-1", cases[i].error);
		ck_run(&c, "network.efa-sg");
		T_EQ(c.f.n, 1);
		f = only_finding(&c, HP_TAG_WARN, cases[i].msg, cases[i].prio, "A.1");
		T_CONTAINS(f->message, "EFA rules were not checked");
		T_ASSERT(ck_evidence_has(f, "used by: cluster VpcConfig"));
		ck_free(&c);
	}
}

static void t_efa_override_groups_and_users(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c);
	set(&c, "cluster/InstanceGroups",
	    "[{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge',"
	    "'OverrideVpcConfig':{'SecurityGroupIds':['sg-1','sg-2'],'Subnets':['subnet-a']}},"
	    "{'InstanceGroupName':'cpu','InstanceType':'ml.m5.xlarge',"
	    "'OverrideVpcConfig':{'SecurityGroupIds':['sg-2'],'Subnets':['subnet-a']}}]");
	set(&c, "network/sg_ids", "['sg-1','sg-2']");
	set(&c, "network/security_groups/sg-2",
	    "{'groupId':'sg-2','groupName':'cpu','vpcId':'vpc-1','ipPermissions':[],"
	    "'ipPermissionsEgress':[{'ipProtocol':'-1','groups':[{'groupId':'sg-2'}]}]}");
	ck_run(&c, "network.efa-sg");
	f = only_finding(&c, HP_TAG_FAIL, "sg-2 (cpu) has no inbound", HP_P1, "A.1");
	T_ASSERT(ck_evidence_has(f, "used by: instance group 'gpu', instance group 'cpu'"));
	T_EQ(ck_count(&c, HP_TAG_FAIL), 1);
	ck_free(&c);
}

static void t_efa_silent_without_network(void)
{
	struct ck c;

	ck_load(&c, "{'cluster':{'ClusterName':'c1','VpcConfig':{'SecurityGroupIds':['sg-1']}}}");
	ck_run(&c, "network.efa-sg");
	T_EQ(c.f.n, 0);
	ck_free(&c);
	/* Listed but neither read nor failed (not collected): silent too. */
	load(&c);
	set(&c, "network/security_groups/sg-1", NULL);
	ck_run(&c, "network.efa-sg");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

/* ---------------------------------------------------------------- § B.1, B.2 */

static void t_vpc_one_vpc(void)
{
	struct ck c;

	load(&c);
	ck_run(&c, "network.vpc");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "All 2 subnets and 1 security group are in vpc-1");
	ck_free(&c);
}

static void t_vpc_subnets_in_two_vpcs(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c);
	set(&c, "network/subnets/subnet-b/vpcId", "'vpc-2'");
	ck_run(&c, "network.vpc");
	f = only_finding(&c, HP_TAG_FAIL, "Cluster subnets span 2 VPCs", HP_P1, "B.1");
	T_ASSERT(ck_evidence_has(f, "vpc-1: subnet-a (us-west-2a)"));
	T_ASSERT(ck_evidence_has(f, "vpc-2: subnet-b (us-west-2b)"));
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
}

static void t_vpc_group_elsewhere_and_missing_subnet(void)
{
	struct ck c;

	load(&c);
	set(&c, "network/security_groups/sg-1/vpcId", "'vpc-9'");
	set(&c, "network/subnets/subnet-b", NULL);
	set(&c, "network/subnet_errors/subnet-b",
	    "{'class':'not_found','code':'InvalidSubnetID.NotFound','message':'no'}");
	ck_run(&c, "network.vpc");
	only_finding(&c, HP_TAG_FAIL, "Security group sg-1 is in vpc-9 but the cluster subnets are in vpc-1",
		     HP_P1, "B.1");
	only_finding(&c, HP_TAG_FAIL, "Subnet subnet-b named in the cluster configuration does not exist "
		     "(InvalidSubnetID.NotFound)", HP_P1, "B.1");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);
	/*
	 * A subnet that could not be read (DescribeSubnets denied): the check
	 * never passes, and says which input it lacked; the api rows report the
	 * permission.
	 */
	load(&c);
	set(&c, "network/subnets/subnet-b", NULL);
	set(&c, "network/subnet_errors/subnet-b", "{'class':'denied','code':'UnauthorizedOperation'}");
	ck_run(&c, "network.vpc");
	CK_NO_PROBLEMS(&c);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_one(&c, HP_TAG_SKIP, "One-VPC check incomplete: 1 subnet could not be read "
				"(ec2:DescribeSubnets): subnet-b (UnauthorizedOperation)");
	ck_free(&c);
	/* Every subnet denied: never "All 0 subnets ... are in vpc-1". */
	load(&c);
	set(&c, "network/subnets/subnet-a", NULL);
	set(&c, "network/subnets/subnet-b", NULL);
	set(&c, "network/subnet_errors/subnet-a", "{'class':'denied','code':'UnauthorizedOperation'}");
	set(&c, "network/subnet_errors/subnet-b", "{'class':'denied','code':'UnauthorizedOperation'}");
	ck_run(&c, "network.vpc");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	T_NOT_CONTAINS(ck_dump(&c), "All 0 subnets");
	ck_one(&c, HP_TAG_SKIP, "2 subnets could not be read");
	ck_free(&c);
	/* The mirror case: the security group could not be read. */
	load(&c);
	set(&c, "network/security_groups/sg-1", NULL);
	set(&c, "network/security_group_errors/sg-1", "{'class':'denied','code':'UnauthorizedOperation'}");
	ck_run(&c, "network.vpc");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_one(&c, HP_TAG_SKIP, "1 security group could not be read (ec2:DescribeSecurityGroups): "
				"sg-1 (UnauthorizedOperation)");
	ck_free(&c);
	/* Free IPs: the unread subnet is named, not silently left out. */
	load(&c);
	set(&c, "network/subnets/subnet-b", NULL);
	set(&c, "network/subnet_errors/subnet-b", "{'class':'denied','code':'UnauthorizedOperation'}");
	ck_run(&c, "network.subnet-ips");
	ck_one(&c, HP_TAG_SKIP, "Free IP addresses not checked for 1 subnet that could not be read");
	ck_free(&c);
	/* A malformed DescribeSubnets reply: nothing read, nothing passed, nothing "missing". */
	load(&c);
	set(&c, "network/subnets/subnet-a", NULL);
	set(&c, "network/subnets/subnet-b", NULL);
	set(&c, "network/subnet_errors/subnet-a", "{'class':'parse','code':'MalformedReply'}");
	set(&c, "network/subnet_errors/subnet-b", "{'class':'parse','code':'MalformedReply'}");
	ck_run(&c, "network.vpc");
	CK_NO_PROBLEMS(&c);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_one(&c, HP_TAG_SKIP, "2 subnets could not be read");
	ck_free(&c);
}

static void t_dns(void)
{
	struct ck c;

	load(&c);
	ck_run(&c, "network.dns");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "VPC vpc-1: enableDnsSupport and enableDnsHostnames are on");
	ck_free(&c);

	load(&c);
	set(&c, "network/vpc_attributes/vpc-1", "{'enableDnsSupport':false,'enableDnsHostnames':false}");
	ck_run(&c, "network.dns");
	only_finding(&c, HP_TAG_FAIL, "VPC vpc-1 has enableDnsSupport off", HP_P1, "B.2");
	only_finding(&c, HP_TAG_FAIL, "VPC vpc-1 has enableDnsHostnames off", HP_P1, "B.2");
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	/* An attribute that could not be read gives no verdict. */
	load(&c);
	set(&c, "network/vpc_attributes/vpc-1", "{'enableDnsSupport':true}");
	ck_run(&c, "network.dns");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

/* ---------------------------------------------------------------- § B.3 */

static void t_routing_nat_two_zones(void)
{
	struct ck c;

	load(&c);
	ck_run(&c, "network.routing");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "Subnet subnet-a (us-west-2a): default route to NAT gateway nat-1 (rtb-p)");
	ck_one(&c, HP_TAG_PASS, "Subnet subnet-b (us-west-2b): default route to NAT gateway nat-1 (rtb-p)");
	ck_free(&c);
}

static void t_routing_targets(void)
{
	static const struct {
		const char *route;
		enum hp_tag tag;
		const char *msg;
	} cases[] = {
		{ "{'destinationCidrBlock':'0.0.0.0/0','gatewayId':'igw-1','state':'active'}", HP_TAG_FAIL,
		  "sends 0.0.0.0/0 to internet gateway igw-1 (rtb-p): HyperPod supports private subnets only" },
		{ "{'destinationCidrBlock':'0.0.0.0/0','gatewayId':'vpce-fw','state':'active'}", HP_TAG_INFO,
		  "default route to VPC endpoint vpce-fw" },
		{ "{'destinationCidrBlock':'0.0.0.0/0','transitGatewayId':'tgw-1','state':'active'}", HP_TAG_INFO,
		  "default route to transit gateway tgw-1" },
		{ "{'destinationCidrBlock':'0.0.0.0/0','natGatewayId':'nat-gone','state':'blackhole'}", HP_TAG_WARN,
		  "the default route to NAT gateway nat-gone (rtb-p) is a blackhole" },
		{ "{'destinationCidrBlock':'0.0.0.0/0','networkInterfaceId':'eni-1','state':'active'}", HP_TAG_INFO,
		  "default route to network interface" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct ck c;
		cJSON *routes;
		char *text = strdup(cases[i].route), *p;

		for (p = text; *p; p++)
			if (*p == '\'')
				*p = '"';
		load(&c);
		routes = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(at(&c, "network/route_tables"), 1),
							  "routeSet");
		cJSON_DeleteItemFromArray(routes, 1);
		cJSON_AddItemToArray(routes, cJSON_Parse(text));
		free(text);
		ck_run(&c, "network.routing");
		T_EQ(ck_count_msg(&c, cases[i].tag, cases[i].msg), 2);
		T_EQ(c.f.n, 2);
		if (cases[i].tag == HP_TAG_FAIL)
			T_STREQ(c.f.v[0].section, "B.3");
		ck_free(&c);
	}
}

static void t_routing_main_table_and_private(void)
{
	struct ck c;
	const struct hp_finding *f;

	/* No association: the main table, which has no default route; every endpoint exists. */
	load(&c);
	set(&c, "network/route_tables", "[{'routeTableId':'rtb-main','vpcId':'vpc-1',"
	    "'associationSet':[{'main':'true'}],'routeSet':[{'destinationCidrBlock':'10.0.0.0/16','gatewayId':'local'}]}]");
	cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetArrayItem(at(&c, "network/vpc_endpoints"), 0),
					       "routeTableIdSet", cJSON_CreateStringArray((const char *[]){ "rtb-main" }, 1));
	ck_run(&c, "network.routing");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "Subnet subnet-a (us-west-2a) has no default route (rtb-main, main route "
	       "table): fully private, and the required VPC endpoints exist");
	ck_free(&c);

	/* The same with endpoints missing, and the S3 gateway not in the main table. */
	load(&c);
	set(&c, "network/route_tables", "[{'routeTableId':'rtb-main','vpcId':'vpc-1',"
	    "'associationSet':[{'main':'true'}],'routeSet':[]}]");
	cJSON_DeleteItemFromArray(at(&c, "network/vpc_endpoints"), 10); /* logs */
	ck_run(&c, "network.routing");
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "has no default route (rtb-main, main route table) and no VPC "
			  "endpoints for s3, logs"), 2);
	f = &c.f.v[0];
	T_EQ(f->prio, HP_P2);
	T_STREQ(f->section, "B.3");
	T_ASSERT(ck_evidence_has(f, "s3: gateway endpoint vpce-s3 is not associated with rtb-main"));
	ck_free(&c);
}

static void t_routing_silent_without_tables(void)
{
	struct ck c;

	load(&c);
	set(&c, "network/route_tables", NULL);
	ck_run(&c, "network.routing");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

/* ---------------------------------------------------------------- § B.4 */

static void t_endpoints_all_present(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c);
	ck_run(&c, "network.endpoints");
	CK_NO_PROBLEMS(&c);
	f = ck_one(&c, HP_TAG_PASS, "VPC endpoints in vpc-1: s3 (Gateway), ecr.api, ecr.dkr, sts, ssm, "
		   "ssmmessages, ec2messages, ec2, sagemaker.api, sagemaker.runtime, logs, eks");
	T_ASSERT(f);
	ck_one(&c, HP_TAG_INFO, "No fsx endpoint in vpc-1");
	ck_free(&c);
}

static void t_endpoints_missing_with_and_without_nat(void)
{
	static const char *const some[] = { "s3", "sts", "ssm", NULL };
	struct ck c;
	const struct hp_finding *f;

	ck_load(&c, base);
	endpoints(&c, some, "available");
	ck_run(&c, "network.endpoints");
	f = only_finding(&c, HP_TAG_WARN, "VPC vpc-1 has no endpoints for ecr.api, ecr.dkr, ssmmessages, "
			 "ec2messages, ec2, sagemaker.api, sagemaker.runtime, logs, eks — not needed while "
			 "the subnets reach AWS through NAT", HP_P2, "B.4");
	T_ASSERT(f);
	ck_one(&c, HP_TAG_PASS, "VPC endpoints in vpc-1: s3 (Gateway), sts, ssm");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 0);
	ck_free(&c);

	/* subnet-b loses its NAT route: the same gap is now a failure naming it. */
	ck_load(&c, base);
	endpoints(&c, some, "available");
	set(&c, "network/route_tables", "[{'routeTableId':'rtb-main','vpcId':'vpc-1','associationSet':[{'main':'true'}],"
	    "'routeSet':[]},{'routeTableId':'rtb-p','vpcId':'vpc-1','associationSet':[{'subnetId':'subnet-a'}],"
	    "'routeSet':[{'destinationCidrBlock':'0.0.0.0/0','natGatewayId':'nat-1'}]}]");
	ck_run(&c, "network.endpoints");
	f = only_finding(&c, HP_TAG_FAIL, "VPC vpc-1 lacks endpoints for s3, ecr.api", HP_P1, "B.4");
	T_CONTAINS(f->message, "subnets subnet-b (us-west-2b) have no NAT route");
	T_ASSERT(ck_evidence_has(f, "s3: gateway endpoint vpce-s3 is not associated with rtb-main"));
	T_EQ(ck_count_msg(&c, HP_TAG_PASS, "s3"), 0);
	ck_free(&c);
}

static void t_endpoints_state_and_slurm(void)
{
	static const char *const pending[] = { "logs", NULL };
	static const char *const rest[] = { "s3", "ecr.api", "ecr.dkr", "sts", "ssm", "ssmmessages",
					    "ec2messages", "ec2", "sagemaker.api", "sagemaker.runtime", NULL };
	struct ck c;
	const struct hp_finding *f;

	/* Slurm: no eks endpoint needed; a pending logs endpoint does not count. */
	ck_load(&c, base);
	set(&c, "cluster/Orchestrator", "{'Slurm':{}}");
	set(&c, "network/eks_name", NULL);
	endpoints(&c, rest, "available");
	endpoints(&c, pending, "pending");
	ck_run(&c, "network.endpoints");
	f = only_finding(&c, HP_TAG_WARN, "VPC vpc-1 has no endpoints for logs —", HP_P2, "B.4");
	T_ASSERT(ck_evidence_has(f, "logs: vpce-logs is pending"));
	T_EQ(ck_count_msg(&c, HP_TAG_PASS, "eks"), 0);
	T_EQ(ck_count_msg(&c, HP_TAG_WARN, "eks"), 0);
	ck_free(&c);
}

/* ---------------------------------------------------------------- § B.6 */

static void t_subnet_ips_thresholds(void)
{
	static const struct {
		const char *count;
		enum hp_tag tag;
		const char *msg;
	} cases[] = {
		{ "'0'", HP_TAG_FAIL, "has only 0 free IP addresses" },
		{ "'1'", HP_TAG_FAIL, "has only 1 free IP address —" },
		{ "'4'", HP_TAG_FAIL, "has only 4 free IP addresses" },
		{ "'5'", HP_TAG_WARN, "has 5 free IP addresses (fewer than 50)" },
		{ "'49'", HP_TAG_WARN, "has 49 free IP addresses" },
		{ "'50'", HP_TAG_PASS, "2 subnets with at least 50 free IP addresses" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct ck c;
		const struct hp_finding *f;

		load(&c);
		set(&c, "network/subnets/subnet-a/availableIpAddressCount", cases[i].count);
		ck_run(&c, "network.subnet-ips");
		f = ck_one(&c, cases[i].tag, cases[i].msg);
		if (cases[i].tag == HP_TAG_PASS) {
			T_ASSERT(ck_evidence_has(f, "subnet-a (us-west-2a): 50 free"));
			T_EQ(c.f.n, 1);
		} else {
			T_CONTAINS(f->message, "subnet-a (us-west-2a)");
			T_STREQ(f->section, "B.6");
			T_EQ(f->prio, cases[i].tag == HP_TAG_FAIL ? HP_P1 : HP_P2);
			ck_one(&c, HP_TAG_PASS, "1 subnet with at least 50 free IP addresses");
		}
		ck_free(&c);
	}
}

static void t_eni_headroom(void)
{
	static const struct {
		const char *enis, *quota;
		enum hp_tag tag;
		const char *msg;
	} cases[] = {
		{ "{'count':4000,'in_vpcs':3,'truncated':false}", "{'value':5000,'service_code':'vpc'}",
		  HP_TAG_PASS, "4000 of 5000 network interfaces in us-west-2 are in use (80.0%)" },
		{ "{'count':4001,'in_vpcs':3,'truncated':false}", "{'value':5000,'service_code':'vpc'}",
		  HP_TAG_WARN, "4001 of 5000 network interfaces in us-west-2 are in use (80.0%, above 80%" },
		{ "{'count':25000,'in_vpcs':3,'truncated':true}", "{'value':50000,'service_code':'ec2'}",
		  HP_TAG_PASS, "at least 25000 of 50000" },
		{ "{'count':12,'in_vpcs':3,'truncated':false}", NULL,
		  HP_TAG_WARN, "Could not determine ENI headroom: 12 network interfaces in us-west-2" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct ck c;
		const struct hp_finding *f;

		load(&c);
		set(&c, "network/enis", cases[i].enis);
		set(&c, "network/eni_quota", cases[i].quota);
		ck_run(&c, "network.eni");
		T_EQ(c.f.n, 1);
		f = ck_one(&c, cases[i].tag, cases[i].msg);
		if (cases[i].tag == HP_TAG_WARN) {
			T_STREQ(f->section, "B.6");
			T_EQ(f->prio, HP_P2);
		}
		if (cases[i].quota)
			T_ASSERT(ck_evidence_has(f, "3 of them in the cluster VPC"));
		ck_free(&c);
	}
	/* The count itself unknown (the call failed): silent. */
	{
		struct ck c;

		load(&c);
		set(&c, "network/enis", NULL);
		ck_run(&c, "network.eni");
		T_EQ(c.f.n, 0);
		ck_free(&c);
	}
}

/* ---------------------------------------------------------------- § B.5 */

static void t_eks_healthy(void)
{
	struct ck c;

	load(&c);
	ck_run(&c, "network.eks");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "EKS cluster 'e1' and the HyperPod cluster share vpc-1");
	ck_one(&c, HP_TAG_PASS, "HyperPod security group sg-1 is attached to EKS cluster 'e1'");
	ck_one(&c, HP_TAG_PASS, "authentication mode API");
	ck_one(&c, HP_TAG_PASS, "API endpoint: public and private");
	ck_free(&c);
}

static void t_eks_security_group_paths(void)
{
	struct ck c;
	const struct hp_finding *f;

	/* Not attached, but the cluster security group admits the HyperPod group. */
	load(&c);
	set(&c, "network/eks_sg_ids", "['sg-eks']");
	set(&c, "network/security_groups/sg-eks/ipPermissions",
	    "[{'ipProtocol':'-1','groups':[{'groupId':'sg-eks'},{'groupId':'sg-1'}]}]");
	ck_run(&c, "network.eks");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_PASS, "EKS security group sg-eks admits traffic from HyperPod security group sg-1");
	ck_free(&c);

	/* Neither: a failure pointing at § A and § B.5. */
	load(&c);
	set(&c, "network/eks_sg_ids", "['sg-eks']");
	ck_run(&c, "network.eks");
	f = only_finding(&c, HP_TAG_FAIL, "No HyperPod security group (sg-1) is attached to EKS cluster 'e1'",
			 HP_P1, "A+B.5");
	T_CONTAINS(f->message, "security groups (sg-eks) admit no traffic");
	ck_free(&c);

	/* The EKS group could not be read: unknown, not a failure. */
	load(&c);
	set(&c, "network/eks_sg_ids", "['sg-eks']");
	set(&c, "network/security_groups/sg-eks", NULL);
	ck_run(&c, "network.eks");
	only_finding(&c, HP_TAG_WARN, "Cannot read EKS security group sg-eks", HP_P2, "B.5");
	T_EQ(ck_count(&c, HP_TAG_FAIL), 0);
	ck_free(&c);
}

static void t_eks_settings(void)
{
	struct ck c;

	load(&c);
	set(&c, "network/eks/accessConfig/authenticationMode", "'CONFIG_MAP'");
	set(&c, "network/eks/resourcesVpcConfig/endpointPublicAccess", "false");
	set(&c, "network/eks/resourcesVpcConfig/vpcId", "'vpc-9'");
	set(&c, "network/eks/status", "'UPDATING'");
	ck_run(&c, "network.eks");
	only_finding(&c, HP_TAG_WARN, "EKS cluster 'e1' uses authentication mode CONFIG_MAP", HP_P1, "B.1");
	only_finding(&c, HP_TAG_WARN, "EKS cluster 'e1' has a private-only API endpoint", HP_P2, "B.5");
	only_finding(&c, HP_TAG_FAIL, "EKS cluster 'e1' is in vpc-9 but the HyperPod cluster is in vpc-1",
		     HP_P1, "B.5");
	only_finding(&c, HP_TAG_WARN, "EKS cluster 'e1' is UPDATING, not ACTIVE", HP_P1, "B.5");
	ck_free(&c);

	load(&c);
	set(&c, "network/eks", NULL);
	set(&c, "network/eks_missing", "true");
	ck_run(&c, "network.eks");
	T_EQ(c.f.n, 1);
	only_finding(&c, HP_TAG_FAIL, "EKS cluster 'e1' (the cluster's orchestrator) was not found in us-west-2",
		     HP_P1, "B.5");
	ck_free(&c);

	/* Slurm, no EKS name: nothing to say. */
	load(&c);
	set(&c, "network/eks_name", NULL);
	ck_run(&c, "network.eks");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

/* ---------------------------------------------------------------- § C.1 */

static void t_capacity(void)
{
	struct ck c;
	const struct hp_finding *f;

	load(&c);
	ck_run(&c, "network.capacity");
	CK_NO_PROBLEMS(&c);
	ck_one(&c, HP_TAG_INFO, "Instance group 'gpu' (ml.p5.48xlarge): not offered in us-west-2b; nodes can "
	       "launch only in us-west-2a");
	f = ck_one(&c, HP_TAG_PASS, "Every instance type is offered in a zone of its subnets");
	T_ASSERT(ck_evidence_has(f, "gpu (ml.p5.48xlarge): us-west-2a"));
	ck_free(&c);

	/* An override subnet in us-west-2b only: no zone offers the type. */
	load(&c);
	set(&c, "cluster/InstanceGroups", "[{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge',"
	    "'OverrideVpcConfig':{'SecurityGroupIds':['sg-1'],'Subnets':['subnet-b']}}]");
	ck_run(&c, "network.capacity");
	f = only_finding(&c, HP_TAG_FAIL, "Instance group 'gpu' (ml.p5.48xlarge) has subnets only in us-west-2b "
			 "where p5.48xlarge is not offered; it is offered in us-west-2a, us-west-2c", HP_P1, "C.1");
	T_ASSERT(f);
	T_EQ(ck_count(&c, HP_TAG_PASS), 0);
	ck_free(&c);

	/* One group fails, another passes: no all-clear, the group that passed by name. */
	load(&c);
	set(&c, "cluster/InstanceGroups", "[{'InstanceGroupName':'gpu','InstanceType':'ml.p5.48xlarge',"
	    "'OverrideVpcConfig':{'SecurityGroupIds':['sg-1'],'Subnets':['subnet-b']}},"
	    "{'InstanceGroupName':'gpu2','InstanceType':'ml.p5.48xlarge'}]");
	ck_run(&c, "network.capacity");
	ck_one(&c, HP_TAG_FAIL, "Instance group 'gpu' (ml.p5.48xlarge) has subnets only in us-west-2b");
	f = ck_one(&c, HP_TAG_PASS, "Offered in a zone of its subnets: 1 of 2 instance groups ('gpu2')");
	T_ASSERT(ck_evidence_has(f, "gpu2 (ml.p5.48xlarge): us-west-2a"));
	T_EQ(ck_count_msg(&c, HP_TAG_PASS, "Every instance type"), 0);
	ck_free(&c);

	/* Offered nowhere in the region. */
	load(&c);
	set(&c, "network/offerings/p5.48xlarge", "[]");
	ck_run(&c, "network.capacity");
	ck_one(&c, HP_TAG_FAIL, "it is offered in no zone of this region");
	ck_free(&c);

	/* Offerings not read: silent. */
	load(&c);
	set(&c, "network/offerings", NULL);
	ck_run(&c, "network.capacity");
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

static void t_routing_cut_list_proves_nothing(void)
{
	struct ck c;

	load(&c);
	set(&c, "network/route_tables", "[{'routeTableId':'rtb-main','vpcId':'vpc-1',"
	    "'associationSet':[{'main':'true'}],'routeSet':[]}]");
	set(&c, "network/route_tables_truncated", "true");
	ck_run(&c, "network.routing");
	T_EQ(ck_count_msg(&c, HP_TAG_INFO, "is not among the route tables read"), 2);
	T_EQ(c.f.n, 2);
	ck_free(&c);
}

/* A replayed snapshot may hold anything: wrong types and absurd numbers must not crash or pass. */
static void t_hostile_snapshot_values(void)
{
	static const char *const ids[] = { "network.*", NULL };
	struct ck c;

	load(&c);
	set(&c, "network/sg_ids", "[1,null,{'a':1},'sg-1']");
	set(&c, "network/subnet_ids", "[null,'subnet-a',[],7]");
	set(&c, "network/eks_sg_ids", "[false,'sg-eks']");
	set(&c, "network/security_groups/sg-1/ipPermissions",
	    "[{'ipProtocol':'tcp','fromPort':'1e30','toPort':'-1e30','groups':[{'groupId':'sg-1'}]},"
	    "{'ipProtocol':'udp','fromPort':'-5','toPort':'1e300','groups':[{'groupId':'sg-1'}]},"
	    "{'ipProtocol':7,'groups':'x'}]");
	set(&c, "network/offerings/p5.48xlarge", "[1,'us-west-2a']");
	hp_facts_prepare(&c.snap);
	hp_checks_run_only(&c.snap, ids, &c.f);
	ck_one(&c, HP_TAG_FAIL, "sg-1 (efa) has no inbound self-referencing rule");
	T_EQ(ck_count_msg(&c, HP_TAG_PASS, "subnet-a (us-west-2a): default route to NAT"), 1);
	ck_free(&c);
}

/* The whole healthy snapshot through every check: nothing to fix. */
static void t_all_network_checks_healthy(void)
{
	static const char *const ids[] = { "network.*", NULL };
	struct ck c;
	size_t i;

	load(&c);
	hp_facts_prepare(&c.snap);
	hp_checks_run_only(&c.snap, ids, &c.f);
	CK_NO_PROBLEMS(&c);
	for (i = 0; i < c.f.n; i++) {
		T_ASSERT(!strncmp(c.f.v[i].check->id, "network.", 8));
		T_EQ(c.f.v[i].check->group, HP_GROUP_VPC);
	}
	T_ASSERT(c.f.n >= 15);
	ck_free(&c);
}

static void t_run_only_by_id(void)
{
	static const char *const ids[] = { "network.dns", "network.eni", NULL };
	static const char *const none[] = { "network", "network.", NULL };
	struct ck c;

	load(&c);
	hp_facts_prepare(&c.snap);
	hp_checks_run_only(&c.snap, ids, &c.f);
	T_EQ(c.f.n, 2);
	T_STREQ(c.f.v[0].check->id, "network.dns");
	T_STREQ(c.f.v[1].check->id, "network.eni");
	hp_findings_release(&c.f);
	hp_facts_prepare(&c.snap);
	hp_checks_run_only(&c.snap, none, &c.f);
	T_EQ(c.f.n, 0);
	ck_free(&c);
}

T_MAIN(T(t_efa_healthy), T(t_efa_missing_egress_is_p0), T(t_efa_missing_ingress_is_p1),
       T(t_efa_rule_equivalence), T(t_efa_egress_everywhere_warns),
       T(t_efa_unreadable_is_never_a_missing_rule), T(t_efa_override_groups_and_users),
       T(t_efa_silent_without_network), T(t_vpc_one_vpc), T(t_vpc_subnets_in_two_vpcs),
       T(t_vpc_group_elsewhere_and_missing_subnet), T(t_dns), T(t_routing_nat_two_zones),
       T(t_routing_targets), T(t_routing_main_table_and_private), T(t_routing_silent_without_tables),
       T(t_endpoints_all_present), T(t_endpoints_missing_with_and_without_nat),
       T(t_endpoints_state_and_slurm), T(t_subnet_ips_thresholds), T(t_eni_headroom),
       T(t_eks_healthy), T(t_eks_security_group_paths), T(t_eks_settings), T(t_capacity),
       T(t_routing_cut_list_proves_nothing), T(t_hostile_snapshot_values),
       T(t_all_network_checks_healthy), T(t_run_only_by_id))
