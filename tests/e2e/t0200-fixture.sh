#!/bin/sh
# Tests of the fixture cluster server itself (tests/fixtures/server.py), made
# with boto3 and curl: cluster shape, pagination, events, logs, signature
# checking, fault injection, recording, and the 20,050-node scale fixture.
set -u
name=t0200-fixture
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$(cd "$here/../fixtures" && pwd)
FIXTURE_LIB_DIR=$fixtures
. "$fixtures/lib.sh"

failed=0
ok() { echo "ok - $name: $1"; }
not_ok() { echo "not ok - $name: $1: $2"; failed=1; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/t0200.XXXXXX")
trap 'fixture_stop; rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM

# Without moto the helper must say what to install and fail, never pass.
printf '#!/bin/sh\nexec python3 -S "$@"\n' >"$scratch/python-without-site"
chmod +x "$scratch/python-without-site"
if PYTHON=$scratch/python-without-site fixture_start "$fixtures/healthy.yaml" 2>"$scratch/nomoto.err"; then
	not_ok "missing moto is reported" "fixture_start succeeded"
	fixture_stop
elif grep -q "pip install 'moto\[server\]" "$scratch/nomoto.err"; then
	ok "missing moto is reported with what to install"
else
	not_ok "missing moto is reported" "$(cat "$scratch/nomoto.err")"
fi

if ! python3 -c 'import moto, boto3, yaml' 2>/dev/null; then
	not_ok "fixture server" "python3 lacks moto/boto3/PyYAML: pip install 'moto[server]==5.2.1' boto3 pyyaml"
	exit 1
fi

# A typo in the YAML stops the server with the key named.
printf 'cluster:\n  name: typo\n  node_recovry: Automatic\ninstance_groups:\n  - {name: g, type: ml.m5.large}\n' >"$scratch/typo.yaml"
python3 "$fixtures/server.py" --fixture "$scratch/typo.yaml" --ready-file "$scratch/typo.json" \
	>"$scratch/typo.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "unknown key 'node_recovry'" "$scratch/typo.out" && [ ! -f "$scratch/typo.json" ]; then
	ok "unknown YAML key exits 1 naming the key"
else
	not_ok "unknown YAML key exits 1 naming the key" "rc=$rc: $(cat "$scratch/typo.out")"
fi

for f in "$fixtures"/*.yaml; do
	if out=$(python3 "$fixtures/server.py" --fixture "$f" --ready-file /dev/null --check 2>&1); then
		ok "bundled fixture $(basename "$f") validates"
	else
		not_ok "bundled fixture $(basename "$f") validates" "$out"
	fi
done

# Validation and pattern matching, without a server.
cat >"$scratch/spec_checks.py" <<'PYEOF'
import copy, sys
sys.path.insert(0, sys.argv[1])
from hpfixture import spec
from hpfixture.patches import compile_filter
from moto.logs.exceptions import InvalidParameterException

NAME = "t0200-fixture"
failed = False
BASE = {"cluster": {"name": "c", "vpc": {"security_group_ids": ["sg1"], "subnets": ["a"]}},
        "instance_groups": [{"name": "g", "type": "ml.p5.48xlarge"}],
        "nodes": [{"group": "g", "count": 3}, {"group": "g", "alias": "n1"}],
        "network": {"subnets": [{"alias": "a", "cidr": "10.1.0.0/24"}],
                    "security_groups": [{"alias": "sg1"}]}}

def report(ok, what, why=""):
    global failed
    failed = failed or not ok
    print(f"ok - {NAME}: {what}" if ok else f"not ok - {NAME}: {what}: {why}")

def variant(path, value):
    doc = copy.deepcopy(BASE)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc

cases = [
    ("unknown top-level key", variant(["clustr"], {}), "unknown key 'clustr'"),
    ("unknown node key", variant(["nodes", 0, "stauts"], "Failure"), "nodes[0]: unknown key 'stauts'"),
    ("node in a missing group", variant(["nodes", 0, "group"], "gg"), "no instance group named 'gg'"),
    ("bad node status", variant(["nodes", 0, "status"], "Broken"), "'Broken' is not one of"),
    ("alias with count", variant(["nodes", 0, "alias"], "x"), "need count 1"),
    ("event on a missing node", variant(["events"], [{"node": "nope"}]), "no node 'nope'"),
    ("misspelt denied action", variant(["faults"], {"deny": ["sagemaker:ListClusterNode"]}),
     "'sagemaker' has no action 'ListClusterNode'"),
    ("denying GetCallerIdentity", variant(["faults"], {"deny": ["sts:GetCallerIdentity"]}),
     "never denies"),
    ("subnet outside the VPC", variant(["network", "subnets", 0, "cidr"], "192.168.0.0/24"),
     "outside the VPC"),
    ("unknown security group alias", variant(["cluster", "vpc", "security_group_ids"], ["efa"]),
     "'efa' is neither a security group alias"),
    ("bad threads_per_core", variant(["instance_groups", 0, "threads_per_core"], 3), "above 2"),
    ("string where a list belongs", variant(["network", "subnets"], "a"), "expected a list"),
    ("subnet in an unknown VPC", variant(["network", "subnets", 0, "vpc"], "nope"),
     "no VPC alias 'nope'"),
    ("negative free_ips", variant(["network", "subnets", 0, "free_ips"], -1), "below 0"),
    ("ml. name in instance_type_offerings",
     variant(["network", "instance_type_offerings"], {"ml.p5.48xlarge": ["us-west-2a"]}),
     "leave out 'ml.'"),
    ("offering zone of another region",
     variant(["network", "instance_type_offerings"], {"p5.48xlarge": ["eu-west-1a"]}),
     "list of zones of us-west-2"),
]
elsewhere = variant(["network", "other_vpcs"], [{"alias": "o", "cidr": "10.9.0.0/16"}])
elsewhere["network"]["subnets"][0]["vpc"] = "o"
cases.append(("subnet outside its other VPC", elsewhere, "outside the VPC 10.9.0.0/16"))
for what, doc, want in cases:
    try:
        spec.build(doc)
        report(False, f"rejects {what}", "accepted")
    except spec.FixtureError as exc:
        report(want in str(exc), f"rejects {what}", f"message {exc}")

# !include: a part as a value and as a merge key, nested parts relative to
# their own folder, one node for an anchored include; mistakes named by line.
import os, tempfile
tmp = tempfile.mkdtemp(prefix="t0200-include-")
os.makedirs(os.path.join(tmp, "parts", "deeper"))
def write(rel, text):
    with open(os.path.join(tmp, rel), "w") as fh:
        fh.write(text)
    return os.path.join(tmp, rel)
write("parts/files.yaml", "/a: one\n/b: two\nnested: !include deeper/x.yaml\n")
write("parts/deeper/x.yaml", "[1, 2]\n")
main = write("main.yaml", "p: &p !include parts/files.yaml\nq: *p\n"
                          "r: {<<: !include parts/files.yaml, /b: null, /c: three}\n")
got = spec.read_yaml(main)
want_p = {"/a": "one", "/b": "two", "nested": [1, 2]}
report(got["p"] == want_p and got["q"] is got["p"]
       and got["r"] == {"/a": "one", "/b": None, "/c": "three", "nested": [1, 2]},
       "!include as a value, an anchor and a merge key, nested parts beside their file", repr(got))
bad = [
    ("an absolute path", "x: !include /etc/passwd\n", "line 1: !include '/etc/passwd': give a path relative"),
    ("'..'", "x: !include ../x.yaml\n", "without '..'"),
    ("a missing part", "\nx: !include parts/none.yaml\n", "line 2: !include parts/none.yaml: cannot read: No such file"),
    ("a file including itself", "x: !include self.yaml\n", "!include 'self.yaml' includes itself"),
    ("a part that is not YAML", "x: !include parts/broken.yaml\n", "!include parts/broken.yaml: not valid YAML"),
    ("an empty part", "x: !include parts/empty.yaml\n", "!include 'parts/empty.yaml' is empty"),
]
write("parts/broken.yaml", "a: [1\n")
write("parts/empty.yaml", "")
for what, text, want in bad:
    path = write("self.yaml", text)
    try:
        spec.read_yaml(path)
        report(False, f"!include refuses {what}", "accepted")
    except spec.FixtureError as exc:
        report(want in str(exc), f"!include refuses {what}", f"message {exc}")
import shutil
shutil.rmtree(tmp)

fx = spec.build(BASE)
ids = [n.id for n in fx.nodes]
again = [n.id for n in spec.build(BASE).nodes]
report(len(set(ids)) == 4 and ids == again
       and all(len(i) == 19 and i.startswith("i-") for i in ids)
       and fx.node_by_ref["n1"].id == ids[3] and fx.group("g").current_count == 4,
       "generated node ids are distinct, stable and i- plus 17 hex", f"{ids} / {again}")

patterns = [
    ("?ERROR ?Traceback", ["an ERROR here", "Traceback (most"], ["error", "all fine"]),
    ("GPU Xid", ["GPU 3 Xid 74"], ["GPU 3", "Xid only"]),
    ('"exit code 1"', ["failed with exit code 1"], ["exit code 0"]),
    ("ERROR -retrying", ["ERROR giving up"], ["ERROR retrying", "fine"]),
    ("", ["anything"], []),
]
for pattern, yes, no in patterns:
    match = compile_filter(pattern)
    report(all(match(m) for m in yes) and not any(match(m) for m in no),
           f"filter pattern {pattern!r}")
try:
    compile_filter('{ $.level = "ERROR" }')
    report(False, "JSON filter patterns are refused", "accepted")
except InvalidParameterException:
    report(True, "JSON filter patterns are refused")
sys.exit(1 if failed else 0)
PYEOF
python3 "$scratch/spec_checks.py" "$fixtures" || failed=1

# --max-seconds is a hard stop (started now, checked at the end).
python3 "$fixtures/server.py" --fixture "$fixtures/faults.yaml" --ready-file "$scratch/short.json" \
	--max-seconds 1 >"$scratch/short.out" 2>&1 &
short=$!

# The boto3 side of the checks: one program, one scenario per run.
cat >"$scratch/checks.py" <<'EOF'
import json, os, subprocess, sys, time
import boto3, botocore.config
from botocore.exceptions import ClientError

NAME = "t0200-fixture"
failed = False
ready = json.load(open(os.environ["FIXTURE_READY"]))
cfg = botocore.config.Config(retries={"total_max_attempts": 1})

def report(ok, what, why=""):
    global failed
    if ok:
        print(f"ok - {NAME}: {what}")
    else:
        failed = True
        print(f"not ok - {NAME}: {what}: {why}")

def check(what, fn):
    try:
        res = fn()
    except Exception as exc:  # any failure is a test failure with its reason
        report(False, what, f"{type(exc).__name__}: {exc}")
        return
    if res is True or res is None:
        report(True, what)
    else:
        report(False, what, res)

def client(service, secret=None):
    s = boto3.session.Session(aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                              aws_secret_access_key=secret or os.environ["AWS_SECRET_ACCESS_KEY"],
                              region_name=os.environ["AWS_REGION"])
    return s.client(service, endpoint_url=os.environ["AWS_ENDPOINT_URL"], config=cfg)

def error_of(fn):
    try:
        fn()
    except ClientError as exc:
        r = exc.response
        return (r["ResponseMetadata"]["HTTPStatusCode"], r["Error"].get("Code"),
                r["Error"].get("Message", ""), r["ResponseMetadata"]["HTTPHeaders"])
    return None

def expect_error(fn, status, code, contains=""):
    err = error_of(fn)
    if err is None:
        return "the call succeeded"
    if err[0] != status or err[1] != code or contains not in err[2]:
        return f"got {err[0]} {err[1]} {err[2]!r}"
    return True

def recorded():
    with open(os.environ["FIXTURE_RECORD"]) as fh:
        return [line.strip() for line in fh if line.strip()]

cluster = os.environ["FIXTURE_CLUSTER"]
arn = os.environ["FIXTURE_CLUSTER_ARN"]
sm = client("sagemaker")
scenario = sys.argv[1]

if scenario == "healthy":
    def by_name_and_arn():
        a = sm.describe_cluster(ClusterName=cluster)
        b = sm.describe_cluster(ClusterName=arn)
        if a["ClusterArn"] != arn or b["ClusterName"] != cluster:
            return f"name/ARN mismatch: {a['ClusterArn']} {b['ClusterName']}"
        if not arn.endswith("/" + ready["cluster_id"]):
            return f"ARN {arn} does not end in the cluster id"
    check("DescribeCluster by name and by ARN", by_name_and_arn)

    def recovery_orchestrator():
        d = sm.describe_cluster(ClusterName=cluster)
        if d.get("NodeRecovery") != "Automatic":
            return f"NodeRecovery={d.get('NodeRecovery')}"
        if not d.get("Orchestrator", {}).get("Eks", {}).get("ClusterArn", "").endswith(":cluster/hp-healthy-eks"):
            return f"Orchestrator={d.get('Orchestrator')}"
        if d.get("NodeProvisioningMode") != "Continuous":
            return f"NodeProvisioningMode={d.get('NodeProvisioningMode')}"
        groups = {g["InstanceGroupName"]: g for g in d["InstanceGroups"]}
        if groups["gpu-p5"]["CurrentCount"] != 4 or groups["gpu-p5"]["Status"] != "InService":
            return f"gpu-p5 group: {groups['gpu-p5']}"
    check("NodeRecovery, Orchestrator and group counts present", recovery_orchestrator)

    def paginates():
        p1 = sm.list_cluster_nodes(ClusterName=cluster, MaxResults=3)
        if "NextToken" not in p1 or len(p1["ClusterNodeSummaries"]) != 3:
            return f"page 1: {len(p1['ClusterNodeSummaries'])} nodes, token={p1.get('NextToken')}"
        p2 = sm.list_cluster_nodes(ClusterName=cluster, MaxResults=3, NextToken=p1["NextToken"])
        ids1 = {n["InstanceId"] for n in p1["ClusterNodeSummaries"]}
        ids2 = {n["InstanceId"] for n in p2["ClusterNodeSummaries"]}
        if not ids2 or ids1 & ids2:
            return f"page 2 {sorted(ids2)} overlaps page 1 {sorted(ids1)}"
        p3 = sm.list_cluster_nodes(ClusterName=cluster, MaxResults=3, NextToken=p2["NextToken"])
        if "NextToken" in p3 or len(ids1 | ids2) + len(p3["ClusterNodeSummaries"]) != 8:
            return "the three pages do not hold the 8 nodes exactly once"
        for n in p1["ClusterNodeSummaries"]:
            if not n["InstanceId"].startswith("i-") or len(n["InstanceId"]) != 19:
                return f"node id {n['InstanceId']}"
            if n["InstanceStatus"]["Status"] != "Running":
                return f"status {n['InstanceStatus']}"
    check("ListClusterNodes MaxResults=3 paginates with NextToken", paginates)

    check("ListClusterNodes MaxResults=101 is a ValidationException",
          lambda: expect_error(lambda: sm.list_cluster_nodes(ClusterName=cluster, MaxResults=101),
                               400, "ValidationException"))

    def events():
        e = sm.list_cluster_events(ClusterName=cluster)["Events"]
        if len(e) != 5 or any(x["EventLevel"] != "Info" for x in e):
            return f"{len(e)} events: {e}"
        times = [x["EventTime"] for x in e]
        if times != sorted(times, reverse=True):
            return "not newest first by default"
        asc = sm.list_cluster_events(ClusterName=cluster, SortOrder="Ascending", MaxResults=2)
        if len(asc["Events"]) != 2 or "NextToken" not in asc or asc["Events"][0]["EventTime"] != times[-1]:
            return f"ascending page: {asc}"
        g = sm.list_cluster_events(ClusterName=cluster, InstanceGroupName="gpu-p5")["Events"]
        if sorted(x["ResourceType"] for x in g) != ["Instance", "InstanceGroup"]:
            return f"group filter: {g}"
        n = sm.list_cluster_events(ClusterName=cluster, NodeId=ready["node_ids"][0])["Events"]
        if len(n) != 1 or n[0]["Description"] != "Deep health checks completed successfully":
            return f"node filter: {n}"
    check("ListClusterEvents lists, sorts, filters and pages", events)

    check("unknown node is a 400 ResourceNotFound",
          lambda: expect_error(lambda: sm.describe_cluster_node(ClusterName=cluster, NodeId="i-0123456789abcdef0"),
                               400, "ResourceNotFound"))
    check("unknown cluster is a 400 ResourceNotFound",
          lambda: expect_error(lambda: sm.describe_cluster(ClusterName="no-such-cluster"),
                               400, "ResourceNotFound"))

    bad = "x" + os.environ["AWS_SECRET_ACCESS_KEY"][1:]
    check("wrong secret key gets 403 from sagemaker",
          lambda: expect_error(lambda: client("sagemaker", bad).describe_cluster(ClusterName=cluster),
                               403, "InvalidSignatureException"))
    check("wrong secret key gets 403 from ListClusterEvents (middleware)",
          lambda: expect_error(lambda: client("sagemaker", bad).list_cluster_events(ClusterName=cluster),
                               403, "InvalidSignatureException"))
    check("wrong secret key gets 401 AuthFailure from ec2",
          lambda: expect_error(lambda: client("ec2", bad).describe_vpcs(), 401, "AuthFailure"))
    check("wrong secret key gets 403 from eks (GET)",
          lambda: expect_error(lambda: client("eks", bad).describe_cluster(name="hp-healthy-eks"),
                               403, "InvalidSignatureException"))

    def signed_get():
        c = client("eks").describe_cluster(name="hp-healthy-eks")["cluster"]
        vpc = c["resourcesVpcConfig"]
        if c["status"] != "ACTIVE" or vpc.get("vpcId") != ready["vpc_id"]:
            return f"status {c['status']} vpc {vpc}"
        if c["accessConfig"]["authenticationMode"] != "API_AND_CONFIG_MAP":
            return f"accessConfig {c.get('accessConfig')}"
        if vpc["securityGroupIds"] != [ready["security_groups"]["efa"]] or not vpc.get("clusterSecurityGroupId"):
            return f"security groups {vpc}"
    check("correctly signed EKS GET succeeds with full VPC config", signed_get)

    def caller():
        ident = client("sts").get_caller_identity()
        if ident["Arn"] != ready["user_arn"]:
            return f"Arn {ident['Arn']}"
    check("sts GetCallerIdentity names the fixture user", caller)

    def network():
        ec2 = client("ec2")
        sg = ec2.describe_security_groups(GroupIds=[ready["security_groups"]["efa"]])["SecurityGroups"][0]
        pairs = [p["GroupId"] for perm in sg["IpPermissions"] for p in perm["UserIdGroupPairs"]]
        if sg["GroupId"] not in pairs:
            return f"efa group lacks its self-referencing ingress rule: {sg['IpPermissions']}"
        attr = ec2.describe_vpc_attribute(VpcId=ready["vpc_id"], Attribute="enableDnsHostnames")
        if attr["EnableDnsHostnames"]["Value"] is not True:
            return f"DNS hostnames {attr}"
        rts = ec2.describe_route_tables(RouteTableIds=[ready["route_tables"]["private"]])["RouteTables"]
        routes = rts[0]["Routes"]
        if not any(r.get("NatGatewayId") == ready["nat_gateways"]["nat-a"] for r in routes):
            return f"no NAT route: {routes}"
        if not any(r.get("GatewayId", "").startswith("vpce-") for r in routes):
            return f"no S3 endpoint route: {routes}"
        eps = ec2.describe_vpc_endpoints(Filters=[{"Name": "vpc-id", "Values": [ready["vpc_id"]]}])["VpcEndpoints"]
        names = sorted(e["ServiceName"].split(".us-west-2.", 1)[1] for e in eps)
        if names != sorted(["s3", "ssm", "ssmmessages", "ec2messages", "sts", "ecr.api", "ecr.dkr",
                            "ec2", "sagemaker.api", "sagemaker.runtime", "logs", "eks"]):
            return f"endpoints {names}"
    check("network is seeded by alias (SG self rule, DNS, NAT, endpoints)", network)

    def quota():
        q = client("service-quotas").get_service_quota(ServiceCode="vpc", QuotaCode="L-DF5E4CA3")["Quota"]
        if q["Value"] != 5000.0:
            return f"quota {q}"
    check("GetServiceQuota answers a seeded code", quota)

    def ssm():
        c = client("ssm")
        node = ready["groups"]["gpu-p5"][0]
        out = c.start_session(Target=f"sagemaker-cluster:{ready['cluster_id']}_gpu-p5-{node}")
        want = f"wss://127.0.0.1:{ready['ssm_port']}/v1/data-channel/{out['SessionId']}?"
        if not out["StreamUrl"].startswith(want) or not out["TokenValue"]:
            return f"StartSession {out}"
        if c.terminate_session(SessionId=out["SessionId"])["SessionId"] != out["SessionId"]:
            return "TerminateSession"
        return expect_error(lambda: c.start_session(Target=node), 400, "TargetNotConnected")
    check("ssm StartSession (stream URL on the local data channel) and TerminateSession", ssm)

    def record():
        lines = set(recorded())
        want = {"sagemaker:DescribeCluster", "sagemaker:ListClusterNodes",
                "sagemaker:ListClusterEvents", "sagemaker:DescribeClusterNode",
                "ec2:DescribeVpcs", "ec2:DescribeSecurityGroups", "ec2:DescribeVpcAttribute",
                "ec2:DescribeRouteTables", "ec2:DescribeVpcEndpoints", "eks:DescribeCluster",
                "sts:GetCallerIdentity", "service-quotas:GetServiceQuota",
                "ssm:StartSession", "ssm:TerminateSession"}
        if want - lines:
            return f"missing {sorted(want - lines)}"
        seeding = {"ec2:CreateVpc", "eks:CreateCluster", "ec2:CreateSecurityGroup"}
        if lines & seeding:
            return f"seeding calls recorded: {sorted(lines & seeding)}"
    check("record file lists the actions called (and no seeding calls)", record)

elif scenario == "demo":
    nodes = ready["nodes"]

    def statuses():
        d = sm.describe_cluster_node(ClusterName=cluster, NodeId=nodes["p5-nvlink"])["NodeDetails"]
        st = d["InstanceStatus"]
        if st != {"Status": "Failure", "Message": "UnschedulablePendingReplacement: GPU 3 NVLink errors"}:
            return f"status {st}"
        if d["ThreadsPerCore"] != 1 or not d.get("PrivatePrimaryIp") or "AvailabilityZoneId" not in d.get("Placement", {}):
            return f"details {d}"
        pend = sm.describe_cluster_node(ClusterName=arn, NodeId=nodes["g5-pending"])["NodeDetails"]
        if pend["InstanceStatus"]["Status"] != "Pending":
            return f"pending node {pend['InstanceStatus']}"
        groups = {g["InstanceGroupName"]: g for g in sm.describe_cluster(ClusterName=cluster)["InstanceGroups"]}
        if (groups["worker-g5"]["CurrentCount"], groups["worker-g5"]["TargetCount"]) != (2, 3):
            return f"worker-g5 {groups['worker-g5']}"
    check("demo node statuses, messages and group counts", statuses)

    def node_events():
        e = sm.list_cluster_events(ClusterName=cluster, NodeId=nodes["p5-efa"])["Events"]
        if len(e) != 1 or e[0]["Description"] != "EFA health checks did not run successfully" \
                or e[0]["EventLevel"] != "Error" or e[0]["ResourceType"] != "Instance":
            return f"events {e}"
        g = sm.list_cluster_events(ClusterName=cluster, ResourceType="InstanceGroup")["Events"]
        if sorted(x["InstanceGroupName"] for x in g) != ["system", "worker-g5"]:
            return f"group events {g}"
        # The capacity reason is only in the event's details (DescribeClusterEvent).
        cap = [x for x in g if x["InstanceGroupName"] == "worker-g5"][0]
        d = sm.describe_cluster_event(ClusterName=cluster, EventId=cap["EventId"])["EventDetails"]
        fm = d["EventDetails"]["EventMetadata"]["InstanceGroup"]["FailureMessage"]
        if "do not have sufficient g5.8xlarge capacity" not in fm:
            return f"event details {d}"
        now = time.time()
        recent = sm.list_cluster_events(ClusterName=cluster, EventTimeAfter=now - 35 * 60)["Events"]
        if sorted(x["EventLevel"] for x in recent) != ["Error", "Error", "Info"]:
            return f"events of the last 35 min: {recent}"
    check("ListClusterEvents filters by NodeId, ResourceType and time", node_events)

    def logs():
        lg = client("logs")
        group = ready["log_group"]
        if group != f"/aws/sagemaker/Clusters/{cluster}/{ready['cluster_id']}":
            return f"log group {group}"
        hits = lg.filter_log_events(logGroupName=group, logStreamNamePrefix="LifecycleConfig/",
                                    filterPattern='?Traceback ?"exit code 1"')["events"]
        streams = {h["logStreamName"] for h in hits}
        if streams != {f"LifecycleConfig/system/{nodes['sys-lcs']}"} or len(hits) != 2:
            return f"lifecycle hits {hits}"
        hma = lg.filter_log_events(logGroupName=group,
                                   logStreamNamePrefix=f"SagemakerHealthMonitoringAgent/gpu-p5/{nodes['p5-nvlink']}",
                                   filterPattern="Xid")["events"]
        if len(hma) != 2:
            return f"HMA hits {hma}"
        every = lg.filter_log_events(logGroupName=group, logStreamNamePrefix="SagemakerHealthMonitoringAgent/",
                                     filterPattern="started")["events"]
        if len(every) != 7:   # every node but the pending one
            return f"{len(every)} HMA start lines"
        case = lg.filter_log_events(logGroupName=group, filterPattern="traceback")["events"]
        if case:
            return "filter terms must be case sensitive"
    check("FilterLogEvents honours stream prefix and ?a ?b patterns", logs)

elif scenario == "faults":
    def denied_json():
        err = error_of(lambda: sm.list_cluster_nodes(ClusterName=cluster))
        if err is None:
            return "the call succeeded"
        status, code, msg, headers = err
        if status != 400 or code != "AccessDeniedException" or headers.get("x-amzn-errortype") != "AccessDeniedException":
            return f"got {status} {code} {headers}"
        if f"User: {ready['user_arn']} is not authorized to perform: sagemaker:ListClusterNodes" not in msg:
            return f"message {msg!r}"
    check("denied sagemaker action answers 400 AccessDeniedException", denied_json)
    check("denied ec2 action answers 403 UnauthorizedOperation",
          lambda: expect_error(lambda: client("ec2").describe_subnets(), 403, "UnauthorizedOperation",
                               "ec2:DescribeSubnets"))
    check("denied eks action answers 403 AccessDeniedException",
          lambda: expect_error(lambda: client("eks").describe_cluster(name="hp-faults-eks"), 403,
                               "AccessDeniedException", "eks:DescribeCluster"))
    check("denied logs action answers 400 AccessDeniedException",
          lambda: expect_error(lambda: client("logs").filter_log_events(logGroupName="x"), 400,
                               "AccessDeniedException"))

    def throttled():
        for i in range(2):
            r = expect_error(lambda: sm.describe_cluster(ClusterName=cluster), 400, "ThrottlingException")
            if r is not True:
                return f"call {i + 1}: {r}"
        sm.describe_cluster(ClusterName=cluster)
        r = expect_error(lambda: client("ec2").describe_vpcs(), 503, "RequestLimitExceeded")
        if r is not True:
            return f"ec2: {r}"
        client("ec2").describe_vpcs()
    check("throttle answers the first N calls, then lets calls through", throttled)

    def failing():
        q = client("service-quotas")
        for _ in range(2):
            r = expect_error(lambda: q.get_service_quota(ServiceCode="sagemaker", QuotaCode="L-FIXTURE1"),
                             503, "ServiceUnavailable")
            if r is not True:
                return r
        lg = client("logs")
        r = expect_error(lambda: lg.describe_log_groups(), 500, "InternalFailure")
        if r is not True:
            return r
        lg.describe_log_groups()
    check("fail answers 5xx (always, or for the first count calls)", failing)

    check("ListClusterEvents on a non-Continuous cluster is a ValidationException",
          lambda: expect_error(lambda: sm.list_cluster_events(ClusterName=cluster), 400,
                               "ValidationException", "Continuous"))
    check("denied ssm StartSession answers 400 AccessDeniedException",
          lambda: expect_error(lambda: client("ssm").start_session(Target="i-0123456789abcdef0"), 400,
                               "AccessDeniedException"))
    check("sts GetCallerIdentity is never denied",
          lambda: True if client("sts").get_caller_identity()["Account"] == ready["account"] else "account")

    def recorded_faults():
        lines = recorded()
        if lines.count("sagemaker:DescribeCluster") != 3 or "ec2:DescribeSubnets" not in lines:
            return f"record {lines}"
    check("faulted calls are recorded too", recorded_faults)

elif scenario == "nosigv4":
    def any_secret():
        names = [c["ClusterName"] for c in
                 client("sagemaker", "not-the-secret").list_clusters()["ClusterSummaries"]]
        if names != [cluster]:
            return f"clusters {names}"
    check("--no-sigv4 accepts any secret", any_secret)

    def same_ids():
        first = json.load(open(os.environ["FIRST_READY"]))
        for key in ("vpc_id", "subnets", "security_groups", "node_ids", "cluster_arn"):
            if first[key] != ready[key]:
                return f"{key}: {first[key]} != {ready[key]}"
    check("two runs of one fixture give the same ids", same_ids)

elif scenario == "large":
    # How long it took is a benchmark's figure (tests/bench/), not a test's verdict: shown, not judged.
    def ready_all():
        if ready["node_count"] != 20050:
            return f"{ready['node_count']} nodes ready"
        print(f"# large fixture ready in {ready['timings']['ready_s']} s")
    check("large fixture (20,050 nodes) ready", ready_all)

    def list_all():
        seen, token, pages = set(), None, 0
        started = time.monotonic()
        while pages < 200:
            kw = {"ClusterName": cluster, "MaxResults": 100}
            if token:
                kw["NextToken"] = token
            out = sm.list_cluster_nodes(**kw)
            pages += 1
            seen.update(n["InstanceId"] for n in out["ClusterNodeSummaries"])
            token = out.get("NextToken")
            if not token:
                break
        if pages != 200 or len(seen) != 20000 or not token:
            return f"after {pages} pages: {len(seen)} nodes, token={bool(token)}"
        out = sm.list_cluster_nodes(ClusterName=cluster, MaxResults=100, NextToken=token)
        seen.update(n["InstanceId"] for n in out["ClusterNodeSummaries"])
        if len(seen) != 20050 or out.get("NextToken"):
            return f"page 201: {len(seen)} nodes, token={out.get('NextToken')}"
        print(f"# listed 20,050 nodes in {time.monotonic() - started:.1f} s")
    check("ListClusterNodes: 200 pages hold 20,000 nodes plus a NextToken; page 201 ends at 20,050",
          list_all)

sys.exit(1 if failed else 0)
EOF

run_checks() {
	python3 "$scratch/checks.py" "$1" || failed=1
}

# healthy.yaml: shape, pagination, events, signatures, network, record file.
if fixture_start "$fixtures/healthy.yaml"; then
	ok "healthy fixture starts (ready in $(fixture_get timings.ready_s) s, $(fixture_get rss_mib) MiB)"
	run_checks healthy
	pid=$FIXTURE_PID
	fixture_stop
	if kill -0 "$pid" 2>/dev/null; then
		not_ok "fixture_stop stops the server" "pid $pid still running"
	else
		ok "fixture_stop stops the server"
	fi
else
	not_ok "healthy fixture starts" "see messages above"
fi

if fixture_start "$fixtures/demo.yaml"; then
	ok "demo fixture starts (ready in $(fixture_get timings.ready_s) s, $(fixture_get rss_mib) MiB)"
	run_checks demo
	# The raw wire shape, as hpnode's C client will see it (curl, unsigned).
	code=$(curl -s -o "$scratch/unsigned.json" -w '%{http_code}' -X POST \
		-H 'X-Amz-Target: SageMaker.DescribeCluster' \
		-H 'Content-Type: application/x-amz-json-1.1' \
		--data "{\"ClusterName\":\"$FIXTURE_CLUSTER\"}" "$AWS_ENDPOINT_URL/")
	if [ "$code" = 403 ] && grep -q MissingAuthenticationTokenException "$scratch/unsigned.json"; then
		ok "unsigned request gets 403 MissingAuthenticationTokenException"
	else
		not_ok "unsigned request gets 403" "HTTP $code $(cat "$scratch/unsigned.json")"
	fi
	fixture_stop
else
	not_ok "demo fixture starts" "see messages above"
fi

if fixture_start "$fixtures/faults.yaml"; then
	run_checks faults
	cp "$FIXTURE_READY" "$scratch/faults-first.json"
	fixture_stop
else
	not_ok "faults fixture starts" "see messages above"
fi

# The same file again without signature checking: the ids must not change.
if fixture_start "$fixtures/faults.yaml" --no-sigv4; then
	FIRST_READY=$scratch/faults-first.json run_checks nosigv4
	fixture_stop
else
	not_ok "faults fixture starts with --no-sigv4" "see messages above"
fi

if fixture_start "$fixtures/large.yaml"; then
	run_checks large
	fixture_stop
else
	not_ok "large fixture starts" "see messages above"
fi

# The fork server (tests/fixtures/forkserver.py): a forked server is the same
# cluster with the same ids, is not the shell's child, and stops by pid; no
# fork server, and fixture_start starts server.py itself.
parent_of() { awk '{ print $4 }' "/proc/$1/stat" 2>/dev/null; }
fs_sock=$scratch/fs.sock
python3 "$fixtures/forkserver.py" --serve "$fs_sock" >"$scratch/fs.log" 2>&1 </dev/null &
fs_pid=$!
echo "$fs_pid" >"$fs_sock.starting"
if FIXTURE_FORKSERVER=$fs_sock fixture_start "$fixtures/faults.yaml"; then
	if [ "$(parent_of "$FIXTURE_PID")" = "$fs_pid" ]; then
		ok "fork server: the server is forked from it"
	else
		not_ok "fork server: the server is forked from it" \
			"parent $(parent_of "$FIXTURE_PID"), fork server $fs_pid; log: $(cat "$scratch/fs.log")"
	fi
	run_checks faults
	FIRST_READY=$scratch/faults-first.json python3 - "$FIXTURE_READY" <<'PYEOF' || failed=1
import json, os, sys
first, now = (json.load(open(p)) for p in (os.environ["FIRST_READY"], sys.argv[1]))
keys = ("vpc_id", "subnets", "security_groups", "node_ids", "nodes", "groups", "cluster_arn",
        "account", "region", "log_group")
bad = [k for k in keys if first[k] != now[k]]
print(("not ok - t0200-fixture: fork server: the same ids as a server of its own: %s" % bad)
      if bad else "ok - t0200-fixture: fork server: the same ids as a server of its own")
sys.exit(1 if bad else 0)
PYEOF
	pid=$FIXTURE_PID
	fixture_stop
	if kill -0 "$pid" 2>/dev/null; then
		not_ok "fork server: fixture_stop stops a forked server" "pid $pid still running"
	else
		ok "fork server: fixture_stop stops a forked server"
	fi
else
	not_ok "fork server: faults.yaml starts through it" "$(cat "$scratch/fs.log")"
fi
kill "$fs_pid" 2>/dev/null
wait "$fs_pid"
fs_rc=$?
if [ "$fs_rc" = 0 ] && [ ! -e "$fs_sock" ] && [ ! -e "$fs_sock.starting" ]; then
	ok "fork server: SIGTERM ends it (exit 0) and removes its socket"
else
	not_ok "fork server: SIGTERM ends it (exit 0) and removes its socket" \
		"exit $fs_rc; $(ls "$scratch" | tr '\n' ' ')"
fi
if FIXTURE_FORKSERVER=$fs_sock fixture_start "$fixtures/healthy.yaml"; then
	if [ "$(parent_of "$FIXTURE_PID")" = "$$" ]; then
		ok "fork server gone: fixture_start starts server.py itself"
	else
		not_ok "fork server gone: fixture_start starts server.py itself" \
			"parent $(parent_of "$FIXTURE_PID"), shell $$"
	fi
	fixture_stop
else
	not_ok "fork server gone: fixture_start starts server.py itself" "see messages above"
fi

i=0
while kill -0 "$short" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
if kill -0 "$short" 2>/dev/null; then
	kill "$short"
	not_ok "--max-seconds stops the server" "still running after 10 s"
else
	ok "--max-seconds stops the server"
fi
wait "$short" 2>/dev/null

exit $failed
