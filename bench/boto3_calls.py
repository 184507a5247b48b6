#!/usr/bin/env python3
"""The API calls of one hpnode triage, made with boto3 in one process, as a
yardstick for hpnode's own API phase.

  python3 bench/boto3_calls.py CLUSTER [--endpoint URL] [--region R]

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

NODE_PAGES = 200
EVENT_PAGES = 5


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cluster", help="cluster name or ARN")
    ap.add_argument("--endpoint", default=os.environ.get("AWS_ENDPOINT_URL"))
    ap.add_argument("--region", default=os.environ.get("AWS_REGION")
                    or os.environ.get("AWS_DEFAULT_REGION") or "us-west-2")
    args = ap.parse_args()

    started = time.monotonic()
    session = boto3.session.Session(region_name=args.region)
    config = botocore.config.Config(retries={"mode": "standard", "max_attempts": 3})

    def client(name):
        return session.client(name, endpoint_url=args.endpoint, config=config)

    calls = 0
    phases = []

    def phase(name, t0):
        phases.append((name, time.monotonic() - t0))

    t0 = time.monotonic()
    sts, sm, ec2, logs = client("sts"), client("sagemaker"), client("ec2"), client("logs")
    phase("clients", t0)

    t0 = time.monotonic()
    sts.get_caller_identity()
    cluster = sm.describe_cluster(ClusterName=args.cluster)
    calls += 2
    phase("describe", t0)

    t0 = time.monotonic()
    nodes = 0
    token = None
    truncated = False
    for page in range(NODE_PAGES):
        kw = {"ClusterName": args.cluster, "MaxResults": 100}
        if token:
            kw["NextToken"] = token
        out = sm.list_cluster_nodes(**kw)
        calls += 1
        nodes += len(out["ClusterNodeSummaries"])
        token = out.get("NextToken")
        if not token:
            break
        truncated = page == NODE_PAGES - 1
    phase("nodes", t0)

    t0 = time.monotonic()
    events = 0
    token = None
    for _ in range(EVENT_PAGES):
        kw = {"ClusterName": args.cluster, "MaxResults": 100}
        if token:
            kw["NextToken"] = token
        try:
            out = sm.list_cluster_events(**kw)
        except ClientError as exc:
            calls += 1
            if exc.response["Error"]["Code"] != "ValidationException":
                raise
            break   # not a Continuous-provisioning cluster: no events API
        calls += 1
        events += len(out["Events"])
        token = out.get("NextToken")
        if not token:
            break
    phase("events", t0)

    t0 = time.monotonic()
    types = sorted({g["InstanceType"].removeprefix("ml.") for g in cluster["InstanceGroups"]})
    ec2.describe_instance_types(InstanceTypes=types)
    calls += 1
    phase("instance-types", t0)

    t0 = time.monotonic()
    arn_id = cluster["ClusterArn"].rsplit("/", 1)[-1]
    group = f"/aws/sagemaker/Clusters/{cluster['ClusterName']}/{arn_id}"
    groups = logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"]
    calls += 1
    log_events = 0
    if any(g["logGroupName"] == group for g in groups):
        for prefix in ("LifecycleConfig/", "SagemakerHealthMonitoringAgent/"):
            out = logs.filter_log_events(logGroupName=group, logStreamNamePrefix=prefix)
            calls += 1
            log_events += len(out["events"])
    phase("logs", t0)

    total = time.monotonic() - started
    print(f"nodes read: {nodes}{' (stopped at the page cap)' if truncated else ''}")
    print(f"events read: {events}; log events read: {log_events}; API calls: {calls}")
    for name, secs in phases:
        print(f"  {name:15s} {secs:7.3f} s")
    print(f"total: {total:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
