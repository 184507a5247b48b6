#!/usr/bin/env python3
"""The API calls of one `hpnode triage --no-probe --no-kube`, made with boto3
in one process, as a yardstick for hpnode's own API phase.

  python3 tests/bench/boto3_calls.py CLUSTER [--endpoint URL] [--region R]

It sends the requests hpnode sends, with the same parameters, except the node
list, which it reads as boto3's paginator does (one NextToken chain of 100
nodes a page, where hpnode reads partitions at once): the cluster ARN
after DescribeCluster, the same page sizes and caps, the same CloudWatch Logs
filter patterns, the same network reads (EKS, security groups, subnets, VPC
and its attributes, route tables, endpoints, network interfaces, the ENI
quota, instance-type offerings). tests/bench/api-phase.sh checks that claim on
every run by comparing the fixture's record of both clients' requests.

Credentials come from the environment (AWS_ACCESS_KEY_ID / _SECRET_ACCESS_KEY),
the endpoint from --endpoint or AWS_ENDPOINT_URL. Prints the number of nodes
read, the call count and the time taken, per phase and in total.
"""

import argparse
import os
import sys
import time

try:
    import boto3
    import botocore.config
    from botocore.exceptions import ClientError
except ImportError:
    sys.exit("boto3_calls: python module boto3 is missing (pip install boto3)")

# hpnode's caps (src/collect): event pages, EC2 list pages.
EVENT_PAGES = 5
LOG_PAGES = 5
LIST_PAGES = 20
ENI_PAGES = 25
MAX_VPCS = 4

# hpnode's CloudWatch Logs filters (src/collect/cluster.c).
LIFECYCLE_FILTER = "?error ?Error ?ERROR ?fail ?Fail ?FAIL ?Traceback ?timed ?Timeout ?exit"
HMA_FILTER = ("?error ?Error ?ERROR ?fault ?Fault ?FAULT ?unhealthy ?Unhealthy ?UNHEALTHY "
              "?fail ?Fail ?FAIL ?Xid ?XID ?NVLink ?ECC ?reboot ?Reboot ?replace ?Replace")


def unique(seq):
    out = []
    for x in seq:
        if x and x not in out:
            out.append(x)
    return out


class Run:
    def __init__(self, session, endpoint):
        config = botocore.config.Config(retries={"mode": "standard", "max_attempts": 3})
        self.clients = {}
        self.session, self.endpoint, self.config = session, endpoint, config
        self.calls = 0

    def client(self, name):
        if name not in self.clients:
            self.clients[name] = self.session.client(name, endpoint_url=self.endpoint,
                                                     config=self.config)
        return self.clients[name]

    def call(self, service, op, **kw):
        self.calls += 1
        return getattr(self.client(service), op)(**kw)

    def ec2_pages(self, op, key, max_results, max_pages, **kw):
        items, token = [], None
        for _ in range(max_pages):
            args = dict(kw, MaxResults=max_results)
            if token:
                args["NextToken"] = token
            out = self.call("ec2", op, **args)
            items.extend(out.get(key, []))
            token = out.get("NextToken")
            if not token:
                break
        return items


def network(run, cluster):
    sg_ids = list(cluster.get("VpcConfig", {}).get("SecurityGroupIds", []))
    subnet_ids = list(cluster.get("VpcConfig", {}).get("Subnets", []))
    for g in cluster.get("InstanceGroups", []):
        over = g.get("OverrideVpcConfig", {})
        sg_ids += over.get("SecurityGroupIds", [])
        subnet_ids += over.get("Subnets", [])
    sg_ids, subnet_ids = unique(sg_ids), unique(subnet_ids)
    if not sg_ids and not subnet_ids:
        return
    eks_sgs = []
    arn = cluster.get("Orchestrator", {}).get("Eks", {}).get("ClusterArn")
    if arn:
        name = arn.rsplit("/", 1)[-1]
        try:
            eks = run.call("eks", "describe_cluster", name=name)["cluster"]
            vpc = eks.get("resourcesVpcConfig", {})
            eks_sgs = unique(vpc.get("securityGroupIds", []) +
                             [vpc.get("clusterSecurityGroupId")])
        except ClientError:
            pass
    groups = {}
    all_sgs = unique(sg_ids + eks_sgs)
    if all_sgs:
        for sg in run.call("ec2", "describe_security_groups",
                           GroupIds=all_sgs)["SecurityGroups"]:
            groups[sg["GroupId"]] = sg
    subnets = []
    if subnet_ids:
        subnets = run.call("ec2", "describe_subnets", SubnetIds=subnet_ids)["Subnets"]
    vpcs = unique([s.get("VpcId") for s in subnets] +
                  [groups[g].get("VpcId") for g in sg_ids if g in groups])[:MAX_VPCS]
    if vpcs:
        run.call("ec2", "describe_vpcs", VpcIds=vpcs)
        for v in vpcs:
            for attr in ("enableDnsSupport", "enableDnsHostnames"):
                run.call("ec2", "describe_vpc_attribute", VpcId=v, Attribute=attr)
        flt = [{"Name": "vpc-id", "Values": vpcs}]
        run.ec2_pages("describe_route_tables", "RouteTables", 100, LIST_PAGES, Filters=flt)
        run.ec2_pages("describe_vpc_endpoints", "VpcEndpoints", 1000, LIST_PAGES, Filters=flt)
    run.ec2_pages("describe_network_interfaces", "NetworkInterfaces", 1000, ENI_PAGES)
    for code in ("vpc", "ec2"):
        try:
            run.call("service-quotas", "get_service_quota", ServiceCode=code,
                     QuotaCode="L-DF5E4CA3")
            break
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "NoSuchResourceException":
                break
    types = unique(g["InstanceType"].removeprefix("ml.")
                   for g in cluster.get("InstanceGroups", []))
    if subnets and types:
        run.ec2_pages("describe_instance_type_offerings", "InstanceTypeOfferings", 1000,
                      LIST_PAGES, LocationType="availability-zone",
                      Filters=[{"Name": "instance-type", "Values": types}])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cluster", help="cluster name or ARN")
    ap.add_argument("--endpoint", default=os.environ.get("AWS_ENDPOINT_URL"))
    ap.add_argument("--region", default=os.environ.get("AWS_REGION")
                    or os.environ.get("AWS_DEFAULT_REGION") or "us-west-2")
    args = ap.parse_args()

    started = time.monotonic()
    run = Run(boto3.session.Session(region_name=args.region), args.endpoint)
    phases = []

    def phase(name, t0):
        phases.append((name, time.monotonic() - t0))

    t0 = time.monotonic()
    run.call("sts", "get_caller_identity")
    cluster = run.call("sagemaker", "describe_cluster", ClusterName=args.cluster)
    arn = cluster["ClusterArn"]
    phase("describe", t0)

    t0 = time.monotonic()
    # The node list the way boto3's paginator reads it: one NextToken chain,
    # 100 nodes a page (the service's page size), to its end.
    nodes, truncated = 0, False
    paginator = run.client("sagemaker").get_paginator("list_cluster_nodes")
    for out in paginator.paginate(ClusterName=arn, PaginationConfig={"PageSize": 100}):
        run.calls += 1
        nodes += len(out["ClusterNodeSummaries"])
    phase("nodes", t0)

    t0 = time.monotonic()
    events, token = 0, None
    for _ in range(EVENT_PAGES):
        kw = {"ClusterName": arn, "MaxResults": 100}
        if token:
            kw["NextToken"] = token
        try:
            out = run.call("sagemaker", "list_cluster_events", **kw)
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ValidationException":
                raise
            break   # not a Continuous-provisioning cluster: no events API
        events += len(out["Events"])
        token = out.get("NextToken")
        if not token:
            break
    phase("events", t0)

    t0 = time.monotonic()
    types = unique(g["InstanceType"].removeprefix("ml.") for g in cluster["InstanceGroups"])
    run.call("ec2", "describe_instance_types", InstanceTypes=types)
    phase("instance-types", t0)

    t0 = time.monotonic()
    arn_id = arn.rsplit("/", 1)[-1]
    group = f"/aws/sagemaker/Clusters/{cluster['ClusterName']}/{arn_id}"
    groups = run.call("logs", "describe_log_groups", logGroupNamePrefix=group,
                      limit=50)["logGroups"]
    log_events = 0
    if any(g["logGroupName"] == group for g in groups):
        for prefix, pattern in (("LifecycleConfig/", LIFECYCLE_FILTER),
                                ("SagemakerHealthMonitoringAgent/", HMA_FILTER)):
            token = None
            for _ in range(LOG_PAGES):
                kw = {"logGroupName": group, "logStreamNamePrefix": prefix,
                      "filterPattern": pattern, "limit": 1000}
                if token:
                    kw["nextToken"] = token
                out = run.call("logs", "filter_log_events", **kw)
                log_events += len(out["events"])
                token = out.get("nextToken")
                if not token:
                    break
    phase("logs", t0)

    t0 = time.monotonic()
    network(run, cluster)
    phase("network", t0)

    total = time.monotonic() - started
    print(f"nodes read: {nodes}{' (stopped at the page cap)' if truncated else ''}")
    print(f"events read: {events}; log events read: {log_events}; API calls: {run.calls}")
    for name, secs in phases:
        print(f"  {name:15s} {secs:7.3f} s")
    print(f"total: {total:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
