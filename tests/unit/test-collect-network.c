/*
 * The network collector against canned replies: which groups and subnets it
 * reads, how one missing group is told apart from a denied call, ENI counting
 * across pages, the quota's service-code fallback, one offerings call for
 * every type, the EKS lookup, and nothing at all without a VpcConfig.
 */
#include <string.h>

#include "fake-sys.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "t.h"

static struct fake_sys fs;
static struct hp_aws aws;
static struct hp_snapshot snap;

static void setup(const char *cluster)
{
	fake_aws(&fs, &aws, 1);
	hp_snapshot_release(&snap);
	hp_snapshot_init(&snap);
	if (cluster)
		hp_snapshot_set(&snap, "cluster", cJSON_Parse(cluster));
}

static const cJSON *net_get(const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(hp_snapshot_get(&snap, "network"), key);
}

static int calls_named(const char *action)
{
	const cJSON *c;
	int n = 0;

	cJSON_ArrayForEach(c, hp_snapshot_get(&snap, "calls")) {
		const char *a = hp_json_str(c, "action");
		if (a && !strcmp(a, action))
			n++;
	}
	return n;
}

static const char cluster_two_groups[] =
	"{\"ClusterName\":\"c1\",\"VpcConfig\":{\"SecurityGroupIds\":[\"sg-1\"],\"Subnets\":[\"subnet-a\"]},"
	"\"InstanceGroups\":[{\"InstanceGroupName\":\"gpu\",\"InstanceType\":\"ml.p5.48xlarge\","
	"\"OverrideVpcConfig\":{\"SecurityGroupIds\":[\"sg-1\",\"sg-2\"],\"Subnets\":[\"subnet-b\"]}},"
	"{\"InstanceGroupName\":\"cpu\",\"InstanceType\":\"ml.m5.xlarge\"}]}";

static const char not_found_xml[] =
	"<Response><Errors><Error><Code>InvalidGroup.NotFound</Code><Message>The security group 'sg-2' "
	"does not exist</Message></Error></Errors><RequestID>r</RequestID></Response>";
static const char denied_xml[] =
	"<Response><Errors><Error><Code>UnauthorizedOperation</Code><Message>You are not authorized"
	"</Message></Error></Errors><RequestID>r</RequestID></Response>";

static void t_groups_from_cluster_and_overrides(void)
{
	struct hp_network_opts o = { HP_NET_SG, NULL, 0, NULL };
	const cJSON *errs;

	setup(cluster_two_groups);
	/* The batch fails on the missing group; each is then asked for alone. */
	fake_reply(&fs, 400, NULL, not_found_xml);
	fake_reply(&fs, 200, NULL, "<DescribeSecurityGroupsResponse><securityGroupInfo><item>"
		   "<groupId>sg-1</groupId><vpcId>vpc-1</vpcId></item></securityGroupInfo>"
		   "</DescribeSecurityGroupsResponse>");
	fake_reply(&fs, 400, NULL, not_found_xml);
	hp_collect_network(&aws, &o, &snap);
	T_EQ(fs.nreq, 3);
	T_CONTAINS(fs.req_body[0], "Action=DescribeSecurityGroups");
	T_CONTAINS(fs.req_body[0], "GroupId.1=sg-1&GroupId.2=sg-2");
	T_CONTAINS(fs.req_body[1], "GroupId.1=sg-1");
	T_NOT_CONTAINS(fs.req_body[1], "GroupId.2");
	T_CONTAINS(fs.req_body[2], "GroupId.1=sg-2");
	T_EQ(cJSON_GetArraySize(net_get("sg_ids")), 2);
	T_EQ(cJSON_GetArraySize(net_get("subnet_ids")), 2);
	T_STREQ(hp_json_str(cJSON_GetObjectItemCaseSensitive(net_get("security_groups"), "sg-1"), "vpcId"),
		"vpc-1");
	errs = cJSON_GetObjectItemCaseSensitive(net_get("security_group_errors"), "sg-2");
	T_STREQ(hp_json_str(errs, "class"), "not_found");
	T_STREQ(hp_json_str(errs, "code"), "InvalidGroup.NotFound");
	T_ASSERT(!cJSON_GetObjectItemCaseSensitive(net_get("security_group_errors"), "sg-1"));
	/* Only the failure of the lone call is recorded, not the batch's. */
	T_EQ(calls_named("DescribeSecurityGroups"), 1);
	/* SG-only collection reads nothing else. */
	T_ASSERT(!net_get("subnets") && !net_get("route_tables") && !net_get("offerings"));
}

static void t_denied_groups_are_errors_not_absent(void)
{
	struct hp_network_opts o = { HP_NET_SG, NULL, 0, NULL };
	const cJSON *e1, *e2;

	setup(cluster_two_groups);
	fake_reply(&fs, 403, NULL, denied_xml);
	hp_collect_network(&aws, &o, &snap);
	T_EQ(fs.nreq, 1);
	e1 = cJSON_GetObjectItemCaseSensitive(net_get("security_group_errors"), "sg-1");
	e2 = cJSON_GetObjectItemCaseSensitive(net_get("security_group_errors"), "sg-2");
	T_STREQ(hp_json_str(e1, "class"), "denied");
	T_STREQ(hp_json_str(e2, "code"), "UnauthorizedOperation");
	T_EQ(cJSON_GetArraySize(net_get("security_groups")), 0);
	T_EQ(calls_named("DescribeSecurityGroups"), 1);
}

static void t_sg_ids_without_cluster(void)
{
	static const char *const ids[] = { "sg-0123456789abcdef0" };
	struct hp_network_opts o = { HP_NET_SG, ids, 1, NULL };

	setup(NULL);
	fake_reply(&fs, 200, NULL, "<DescribeSecurityGroupsResponse><securityGroupInfo/>"
		   "</DescribeSecurityGroupsResponse>");
	hp_collect_network(&aws, &o, &snap);
	T_EQ(fs.nreq, 1);
	T_CONTAINS(fs.req_body[0], "GroupId.1=sg-0123456789abcdef0");
	/*
	 * Asked for, not returned: EC2 answers a missing id with an error, so this
	 * reply is malformed; it never reads as "does not exist".
	 */
	T_STREQ(hp_json_str(cJSON_GetObjectItemCaseSensitive(net_get("security_group_errors"),
							     "sg-0123456789abcdef0"), "class"), "parse");
	T_EQ(calls_named("DescribeSecurityGroups"), 1);
}

static void t_nothing_without_vpc_config(void)
{
	struct hp_network_opts o = { 0, NULL, 0, NULL };

	setup("{\"ClusterName\":\"c1\",\"Orchestrator\":{\"Eks\":{\"ClusterArn\":\"arn:aws:eks:us-west-2:1:cluster/e\"}},"
	      "\"InstanceGroups\":[{\"InstanceGroupName\":\"w\",\"InstanceType\":\"ml.p5.48xlarge\"}]}");
	hp_collect_network(&aws, &o, &snap);
	T_EQ(fs.nreq, 0);
	T_ASSERT(hp_snapshot_get(&snap, "network") == NULL);
}

/* The full sequence for one subnet: EKS, groups, subnet, VPC, DNS, routes, endpoints, ENIs, quota, offerings. */
static void t_full_collection(void)
{
	struct hp_network_opts o = { 0, NULL, 0, NULL };
	const cJSON *enis, *q, *off, *attrs;

	setup("{\"ClusterName\":\"c1\",\"Orchestrator\":{\"Eks\":{\"ClusterArn\":\"arn:aws:eks:us-west-2:1:cluster/eks-1\"}},"
	      "\"VpcConfig\":{\"SecurityGroupIds\":[\"sg-1\"],\"Subnets\":[\"subnet-a\"]},"
	      "\"InstanceGroups\":[{\"InstanceGroupName\":\"w\",\"InstanceType\":\"ml.p5.48xlarge\"},"
	      "{\"InstanceGroupName\":\"x\",\"InstanceType\":\"ml.trn2.48xlarge\"}]}");
	/* 0 */ fake_reply(&fs, 200, NULL, "{\"cluster\":{\"name\":\"eks-1\",\"resourcesVpcConfig\":{\"vpcId\":\"vpc-1\","
		   "\"securityGroupIds\":[\"sg-1\"],\"clusterSecurityGroupId\":\"sg-eks\"}}}");
	/* 1 */ fake_reply(&fs, 200, NULL, "<DescribeSecurityGroupsResponse><securityGroupInfo>"
		   "<item><groupId>sg-1</groupId><vpcId>vpc-1</vpcId></item>"
		   "<item><groupId>sg-eks</groupId><vpcId>vpc-1</vpcId></item></securityGroupInfo>"
		   "</DescribeSecurityGroupsResponse>");
	/* 2 */ fake_reply(&fs, 200, NULL, "<DescribeSubnetsResponse><subnetSet><item><subnetId>subnet-a</subnetId>"
		   "<vpcId>vpc-1</vpcId><availabilityZone>us-west-2a</availabilityZone>"
		   "<availableIpAddressCount>250</availableIpAddressCount></item></subnetSet></DescribeSubnetsResponse>");
	/* 3 */ fake_reply(&fs, 200, NULL, "<DescribeVpcsResponse><vpcSet><item><vpcId>vpc-1</vpcId>"
		   "<cidrBlock>10.0.0.0/16</cidrBlock></item></vpcSet></DescribeVpcsResponse>");
	/* 4 */ fake_reply(&fs, 200, NULL, "<DescribeVpcAttributeResponse><vpcId>vpc-1</vpcId>"
		   "<enableDnsSupport><value>true</value></enableDnsSupport></DescribeVpcAttributeResponse>");
	/* 5 */ fake_reply(&fs, 403, NULL, denied_xml);
	/* 6 */ fake_reply(&fs, 200, NULL, "<DescribeRouteTablesResponse><routeTableSet><item><routeTableId>rtb-1"
		   "</routeTableId><vpcId>vpc-1</vpcId></item></routeTableSet><nextToken>rt2</nextToken>"
		   "</DescribeRouteTablesResponse>");
	/* 7 */ fake_reply(&fs, 200, NULL, "<DescribeRouteTablesResponse><routeTableSet><item><routeTableId>rtb-2"
		   "</routeTableId><vpcId>vpc-1</vpcId></item></routeTableSet></DescribeRouteTablesResponse>");
	/* 8 */ fake_reply(&fs, 200, NULL, "<DescribeVpcEndpointsResponse><vpcEndpointSet><item><vpcEndpointId>vpce-1"
		   "</vpcEndpointId><serviceName>com.amazonaws.us-west-2.s3</serviceName></item></vpcEndpointSet>"
		   "</DescribeVpcEndpointsResponse>");
	/* 9 */ fake_reply(&fs, 200, NULL, "<DescribeNetworkInterfacesResponse><networkInterfaceSet>"
		   "<item><vpcId>vpc-1</vpcId></item><item><vpcId>vpc-9</vpcId></item></networkInterfaceSet>"
		   "<nextToken>n2</nextToken></DescribeNetworkInterfacesResponse>");
	/* 10 */ fake_reply(&fs, 200, NULL, "<DescribeNetworkInterfacesResponse><networkInterfaceSet>"
		   "<item><vpcId>vpc-1</vpcId></item></networkInterfaceSet></DescribeNetworkInterfacesResponse>");
	/* 11 */ fake_reply(&fs, 400, NULL, "{\"__type\":\"NoSuchResourceException\",\"message\":\"no such quota\"}");
	/* 12 */ fake_reply(&fs, 200, NULL, "{\"Quota\":{\"QuotaName\":\"Network interfaces per Region\",\"Value\":5000.0}}");
	/* 13 */ fake_reply(&fs, 200, NULL, "<DescribeInstanceTypeOfferingsResponse><instanceTypeOfferingSet>"
		   "<item><instanceType>p5.48xlarge</instanceType><location>us-west-2a</location></item>"
		   "<item><instanceType>p5.48xlarge</instanceType><location>us-west-2b</location></item>"
		   "</instanceTypeOfferingSet></DescribeInstanceTypeOfferingsResponse>");
	hp_collect_network(&aws, &o, &snap);
	T_EQ(fs.nreq, 14);

	T_STREQ(fs.req_method[0], "GET");
	T_CONTAINS(fs.req_url[0], "/clusters/eks-1");
	T_STREQ(hp_json_str(hp_snapshot_get(&snap, "network"), "eks_name"), "eks-1");
	T_STREQ(hp_json_str(net_get("eks"), "resourcesVpcConfig.vpcId"), "vpc-1");
	/* The EKS cluster group is read with the HyperPod groups, in one call. */
	T_CONTAINS(fs.req_body[1], "GroupId.1=sg-1&GroupId.2=sg-eks");
	T_EQ(cJSON_GetArraySize(net_get("eks_sg_ids")), 2);
	T_EQ(cJSON_GetArraySize(net_get("sg_ids")), 1);
	T_CONTAINS(fs.req_body[2], "SubnetId.1=subnet-a");
	T_CONTAINS(fs.req_body[3], "VpcId.1=vpc-1");
	T_CONTAINS(fs.req_body[4], "Attribute=enableDnsSupport");
	T_CONTAINS(fs.req_body[5], "Attribute=enableDnsHostnames");
	attrs = cJSON_GetObjectItemCaseSensitive(net_get("vpc_attributes"), "vpc-1");
	T_ASSERT(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(attrs, "enableDnsSupport")));
	/* A denied attribute is absent, never false. */
	T_ASSERT(!cJSON_GetObjectItemCaseSensitive(attrs, "enableDnsHostnames"));
	T_EQ(calls_named("DescribeVpcAttribute"), 1);
	T_CONTAINS(fs.req_body[6], "Filter.1.Name=vpc-id&Filter.1.Value.1=vpc-1");
	T_CONTAINS(fs.req_body[6], "MaxResults=100");
	T_CONTAINS(fs.req_body[7], "NextToken=rt2");
	T_EQ(cJSON_GetArraySize(net_get("route_tables")), 2);
	T_EQ(cJSON_GetArraySize(net_get("vpc_endpoints")), 1);
	/* ENIs: the whole region (no filter), counted over both pages. */
	T_NOT_CONTAINS(fs.req_body[9], "Filter");
	T_CONTAINS(fs.req_body[9], "MaxResults=1000");
	T_CONTAINS(fs.req_body[10], "NextToken=n2");
	enis = net_get("enis");
	T_EQ(hp_json_num(enis, "count", 0), 3);
	T_EQ(hp_json_num(enis, "in_vpcs", 0), 2);
	T_ASSERT(!hp_json_bool(enis, "truncated", 1));
	/* Quota: "vpc" first, then "ec2"; the first not-found is not an error to report. */
	T_CONTAINS(fs.req_body[11], "\"ServiceCode\":\"vpc\"");
	T_CONTAINS(fs.req_body[11], "\"QuotaCode\":\"L-DF5E4CA3\"");
	T_CONTAINS(fs.req_body[12], "\"ServiceCode\":\"ec2\"");
	q = net_get("eni_quota");
	T_EQ(hp_json_num(q, "value", 0), 5000);
	T_STREQ(hp_json_str(q, "service_code"), "ec2");
	T_EQ(calls_named("GetServiceQuota"), 0);
	/* Offerings: one call for both types, EC2 names, by zone; a type offered nowhere stays listed. */
	T_CONTAINS(fs.req_body[13], "LocationType=availability-zone");
	T_CONTAINS(fs.req_body[13], "Filter.1.Name=instance-type&Filter.1.Value.1=p5.48xlarge"
		   "&Filter.1.Value.2=trn2.48xlarge");
	off = net_get("offerings");
	T_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(off, "p5.48xlarge")), 2);
	T_ASSERT(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(off, "trn2.48xlarge")));
	T_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(off, "trn2.48xlarge")), 0);
}

static void t_eks_missing_and_partial_lists(void)
{
	struct hp_network_opts o = { HP_NET_EKS | HP_NET_VPC, NULL, 0, "other-eks" };

	setup("{\"ClusterName\":\"c1\",\"Orchestrator\":{\"Eks\":{\"ClusterArn\":\"arn:aws:eks:us-west-2:1:cluster/eks-1\"}},"
	      "\"VpcConfig\":{\"SecurityGroupIds\":[\"sg-1\"],\"Subnets\":[\"subnet-a\"]}}");
	fake_reply(&fs, 404, "x-amzn-ErrorType: ResourceNotFoundException\r\n",
		   "{\"message\":\"No cluster found for name: other-eks.\"}");
	fake_reply(&fs, 200, NULL, "<DescribeSecurityGroupsResponse><securityGroupInfo><item><groupId>sg-1</groupId>"
		   "<vpcId>vpc-1</vpcId></item></securityGroupInfo></DescribeSecurityGroupsResponse>");
	fake_reply(&fs, 200, NULL, "<DescribeSubnetsResponse><subnetSet><item><subnetId>subnet-a</subnetId>"
		   "<vpcId>vpc-1</vpcId></item></subnetSet></DescribeSubnetsResponse>");
	fake_reply(&fs, 200, NULL, "<DescribeVpcsResponse><vpcSet/></DescribeVpcsResponse>");
	fake_reply(&fs, 200, NULL, "<DescribeVpcAttributeResponse><vpcId>vpc-1</vpcId><enableDnsSupport><value>false</value>"
		   "</enableDnsSupport></DescribeVpcAttributeResponse>");
	fake_reply(&fs, 200, NULL, "<DescribeVpcAttributeResponse><vpcId>vpc-1</vpcId><enableDnsHostnames><value>true</value>"
		   "</enableDnsHostnames></DescribeVpcAttributeResponse>");
	/* Route tables: page 1, then page 2 fails: no partial list. */
	fake_reply(&fs, 200, NULL, "<DescribeRouteTablesResponse><routeTableSet><item><routeTableId>rtb-1"
		   "</routeTableId></item></routeTableSet><nextToken>t</nextToken></DescribeRouteTablesResponse>");
	fake_reply(&fs, 403, NULL, denied_xml);
	hp_collect_network(&aws, &o, &snap);
	/* --eks-name wins over the orchestrator's ARN. */
	T_CONTAINS(fs.req_url[0], "/clusters/other-eks");
	T_ASSERT(hp_json_bool(hp_snapshot_get(&snap, "network"), "eks_missing", 0));
	T_ASSERT(!net_get("eks"));
	T_ASSERT(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(net_get("vpc_attributes"), "vpc-1"), "enableDnsSupport")));
	T_ASSERT(!net_get("route_tables"));
	T_EQ(calls_named("DescribeRouteTables"), 1);
	/* The queue ran dry after that: the rest failed and was recorded, nothing invented. */
	T_ASSERT(!net_get("vpc_endpoints"));
	T_ASSERT(!net_get("enis"));
	T_ASSERT(!net_get("eni_quota"));
	T_ASSERT(!net_get("offerings"));
}

T_MAIN(T(t_groups_from_cluster_and_overrides), T(t_denied_groups_are_errors_not_absent),
       T(t_sg_ids_without_cluster), T(t_nothing_without_vpc_config), T(t_full_collection),
       T(t_eks_missing_and_partial_lists))
