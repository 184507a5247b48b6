#!/bin/sh
# The node list of a cluster of more than one page, read in partitions: one
# InstanceGroupNameContains filter per group whose name holds no other's
# ("gpu" also returns gpu-spare and x-gpu), its oldest and newest pages, then
# creation-time windows whose edges fall on times that a hundred nodes share.
# Every node is found once; a partition whose read fails is named; a group
# whose CurrentCount differs from what was listed is named. The fixture's
# filters themselves are checked with boto3 against the API's documented
# meaning (strictly after, strictly before, "contains", SortOrder).
T=t0325-node-partitions
. "$(dirname "$0")/e2e-lib.sh"

fixture_start "$ROOT/tests/fixtures/partitions.yaml" --record-params "$e2e_tmp/params.log" ||
	{ not_ok "partitions fixture starts" "see messages above"; e2e_done; }

"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube --output json \
	--save-snapshot "$e2e_tmp/snap.json" >"$e2e_tmp/out.json" 2>"$e2e_tmp/err"
expect_status "triage of 1,230 nodes in four groups completes" 0 $?
check "every node is listed once, each with its own group" python3 - "$FIXTURE_READY" "$e2e_tmp/snap.json" <<'PY'
import json, sys
r, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ids = [n["InstanceId"] for n in s["nodes"]]
if len(ids) != len(set(ids)):
    sys.exit("%d nodes listed twice" % (len(ids) - len(set(ids))))
if set(ids) != set(r["node_ids"]):
    sys.exit("missing %d, extra %d" % (len(set(r["node_ids"]) - set(ids)), len(set(ids) - set(r["node_ids"]))))
for g, members in r["groups"].items():
    got = {n["InstanceId"] for n in s["nodes"] if n["InstanceGroupName"] == g}
    if got != set(members):
        sys.exit("group %s: %d listed, %d in the fixture" % (g, len(got), len(members)))
if s.get("nodes_partial") or s.get("nodes_truncated"):
    sys.exit("reported cut: %s" % s.get("nodes_partial"))
PY
check "the pages were partitions and windows, never one chain" python3 - "$e2e_tmp/params.log" <<'PY'
import json, sys
reqs = [json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("sagemaker:ListClusterNodes ")]
filters = {q.get("InstanceGroupNameContains") for q in reqs}
windows = [q for q in reqs if "CreationTimeAfter" in q and "CreationTimeBefore" in q]
if filters != {"gpu", "login"}:
    sys.exit("filters %s" % sorted(map(str, filters)))
if len(windows) < 2 or not any(q.get("SortOrder") == "Descending" for q in reqs):
    sys.exit("%d windows in %d requests" % (len(windows), len(reqs)))
if len(reqs) > 30:
    sys.exit("%d requests for 13 pages of nodes" % len(reqs))
PY
check "nothing is reported cut" findings "$e2e_tmp/out.json" \
	"0:check=nodes.status,tag=WARN" "1:check=nodes.status,tag=INFO,message~Total: 1230"
check "the fixture's ListClusterNodes filters and sort orders are the documented ones" python3 - "$FIXTURE_READY" <<'PY'
import datetime as dt, json, sys
import boto3
r = json.load(open(sys.argv[1]))
sm = boto3.client("sagemaker", endpoint_url=r["endpoint"], region_name=r["region"],
                  aws_access_key_id=r["access_key"], aws_secret_access_key=r["secret_key"])
def nodes(**kw):
    out = []
    for page in sm.get_paginator("list_cluster_nodes").paginate(ClusterName=r["cluster_name"], **kw):
        out += page["ClusterNodeSummaries"]
    return out
def t(minute, second=0):
    return dt.datetime(2026, 11, 20, 10, minute, second, tzinfo=dt.timezone.utc)
errors = []
every = nodes()
if len(every) != 1230 or len({n["InstanceId"] for n in every}) != 1230:
    errors.append("unfiltered: %d nodes" % len(every))
times = [n["LaunchTime"] for n in every]
if times != sorted(times):
    errors.append("default order is not CREATION_TIME Ascending")
desc = [n["LaunchTime"] for n in nodes(SortOrder="Descending")]
if desc != sorted(desc, reverse=True) or len(desc) != 1230:
    errors.append("SortOrder Descending is not newest first")
gpu = nodes(InstanceGroupNameContains="gpu")
groups = {n["InstanceGroupName"] for n in gpu}
if groups != {"gpu", "gpu-spare", "x-gpu"} or len(gpu) != 1200:
    errors.append("contains 'gpu' gave %s, %d nodes" % (sorted(groups), len(gpu)))
if {n["InstanceGroupName"] for n in nodes(InstanceGroupNameContains="spare")} != {"gpu-spare"}:
    errors.append("contains 'spare' matched other groups")
# 160 nodes were created at exactly 10:04 (100 gpu, 60 gpu-spare): both bounds exclude them.
after = nodes(CreationTimeAfter=t(4), CreationTimeBefore=t(5))
before = nodes(CreationTimeAfter=t(3), CreationTimeBefore=t(4))
around = nodes(CreationTimeAfter=t(3, 59), CreationTimeBefore=t(4, 1))
if after or before:
    errors.append("a bound equal to the nodes' creation time included %d / %d of them"
                  % (len(after), len(before)))
if len(around) != 160 or {n["LaunchTime"] for n in around} != {t(4)}:
    errors.append("10:03:59 < t < 10:04:01 gave %d nodes" % len(around))
window = nodes(InstanceGroupNameContains="gpu", CreationTimeAfter=t(5, 59), CreationTimeBefore=t(8, 1),
               SortOrder="Descending")
if len(window) != 340 or [n["LaunchTime"] for n in window] != sorted(
        [n["LaunchTime"] for n in window], reverse=True):
    errors.append("a window of 10:06-10:08 in Descending order gave %d nodes" % len(window))
if errors:
    sys.exit("; ".join(errors))
PY

fixture_stop

# A group's read that fails (one request at a time, so it is the first one: login's).
variant "$ROOT/tests/fixtures/partitions.yaml" "$e2e_tmp/cut.yaml" \
	'd["faults"] = {"fail": {"sagemaker:ListClusterNodes": {"status": 500, "count": 3}}}'
fixture_start "$e2e_tmp/cut.yaml" || { not_ok "cut fixture starts" "see messages above"; e2e_done; }
HPNODE_API_CONCURRENCY=1 "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube \
	--output json >"$e2e_tmp/cut.json" 2>"$e2e_tmp/cut.err"
expect_status "triage with a failed partition completes" 0 $?
check "the failed partition is named, the others are kept" findings "$e2e_tmp/cut.json" \
	"1:check=nodes.status,tag=WARN,priority=P1,message~Node list of instance group login is incomplete: 0 of 30" \
	"1:check=nodes.status,tag=INFO,message~Total: 1200" "1:check=api.nodes,tag=WARN"
fixture_stop

# A group whose CurrentCount is not what the list gave, behind 50 ms a request
# (server.py --latency-ms): the partitions' pages are in flight together.
variant "$ROOT/tests/fixtures/partitions.yaml" "$e2e_tmp/count.yaml" \
	'd["instance_groups"][2]["current_count"] = 61'
fixture_start "$e2e_tmp/count.yaml" --latency-ms 50 --stats-file "$e2e_tmp/stats.json" ||
	{ not_ok "count fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube --output json >"$e2e_tmp/count.json" 2>&1
expect_status "triage with a count difference, behind latency, completes" 0 $?
check "the group whose count differs is named, the nodes are all listed" findings "$e2e_tmp/count.json" \
	"1:check=nodes.status,tag=WARN,priority=P2,message~Instance group gpu-spare: 60 nodes listed" \
	"1:check=nodes.status,tag=WARN" "1:check=nodes.status,tag=INFO,message~Total: 1230"
check "eight or more requests were in flight at once" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if s["max_in_flight"] >= 8 else "server stats: %s" % s)' "$e2e_tmp/stats.json"
e2e_done
