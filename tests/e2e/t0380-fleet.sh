#!/bin/sh
# hpnode fleet end to end on tests/fixtures/fleet.yaml: four clusters in two
# regions, a region every call to which is denied and an empty one. Every
# cluster that can be read is a row with its orchestrator, status, nodes by
# state and P0/P1/P2 (the same counts triage gives it); the denied region and
# the cluster that cannot be described are rows saying why; --regions all
# reads the regions ec2:DescribeRegions lists as enabled (not the one that is
# not opted in); JSON lists every finding with its cluster and region;
# --fail-on judges the whole fleet.
T=t0380-fleet
. "$(dirname "$0")/e2e-lib.sh"

fixture_start "$ROOT/tests/fixtures/fleet.yaml" --record-params "$e2e_tmp/params.log" || { not_ok "fleet fixture starts" "see messages above"; e2e_done; }
failed=$(fixture_get node_ids.3)

"$HPNODE" fleet --regions us-west-2,eu-west-1,ap-southeast-2 --no-color >"$e2e_tmp/f.txt" 2>"$e2e_tmp/f.err"
expect_status "a region and a cluster not read: exit 1" 1 $?
row() { grep -E "^$1 +$2 " "$e2e_tmp/f.txt"; }
check "the Slurm cluster with a failed node: its row" sh -c "
	grep -Eq '^hp-fleet-west +us-west-2 +Slurm +InService +3 Running, 1 Failure +0 +1 +1 +\[FAIL\] P1 $failed ' '$e2e_tmp/f.txt'"
check "the EKS cluster beside it" grep -Eq '^hp-fleet-west-eks +us-west-2 +EKS +InService +2 Running +0 +0 +1 ' "$e2e_tmp/f.txt"
check "the healthy cluster of the other region" grep -Eq '^hp-fleet-eu +eu-west-1 +Slurm +InService +3 Running +0 +0 +1 ' "$e2e_tmp/f.txt"
check "the cluster that cannot be described is a row saying why" grep -Eq \
	'^hp-fleet-eu-locked +eu-west-1 +- +InService +- +- +- +- +cannot read it: missing IAM permission for sagemaker:DescribeCluster' "$e2e_tmp/f.txt"
check "the denied region is a row saying why" grep -Eq \
	'^- +ap-southeast-2 +- .*cannot list its clusters: sagemaker:ListClusters: AccessDeniedException: .*explicit deny in a service control policy' "$e2e_tmp/f.txt"
check "the summary line counts the fleet" grep -q '^Fleet: 4 clusters in 3 regions; P0 0, P1 1, P2 3; not read: 1 region, 1 cluster$' "$e2e_tmp/f.txt"
check "the table header" grep -Eq '^CLUSTER +REGION +ORCHESTRATOR +STATUS +NODES +P0 +P1 +P2 +TOP FINDING$' "$e2e_tmp/f.txt"
check "clusters are read from the APIs only: no SSM session" sh -c "! grep -q '^ssm:StartSession' '$FIXTURE_RECORD'"
check "ListClusters in each region asked for" sh -c "[ \$(grep -c '^sagemaker:ListClusters$' '$FIXTURE_RECORD') -eq 3 ]"

# The same counts as triage gives the cluster on its own.
"$HPNODE" triage --cluster hp-fleet-west --region us-west-2 --no-probe --no-kube -o json \
	>"$e2e_tmp/t.json" 2>/dev/null
"$HPNODE" fleet --regions us-west-2,eu-west-1,ap-southeast-2 -o json >"$e2e_tmp/f.json" 2>"$e2e_tmp/fj.err"
expect_status "--output json: exit 1 as well" 1 $?
check "JSON: hpnode.fleet/1 with every cluster, every region and why" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
assert d["schema"] == "hpnode.fleet/1", d["schema"]
assert [r["region"] for r in d["regions"]] == ["us-west-2", "eu-west-1", "ap-southeast-2"], d["regions"]
denied = d["regions"][2]
assert denied["clusters"] == 0 and "ListClusters" in denied["error"], denied
by = {(c["cluster"], c["region"]): c for c in d["clusters"]}
assert set(by) == {("hp-fleet-west", "us-west-2"), ("hp-fleet-west-eks", "us-west-2"),
                   ("hp-fleet-eu", "eu-west-1"), ("hp-fleet-eu-locked", "eu-west-1")}, sorted(by)
w = by[("hp-fleet-west", "us-west-2")]
assert w["orchestrator"] == "Slurm" and w["status"] == "InService", w
assert w["nodes"] == {"Running": 3, "Failure": 1}, w["nodes"]
assert w["summary"] == {k: t["summary"][k] for k in ("P0", "P1", "P2")}, (w["summary"], t["summary"])
assert w["top"]["priority"] == "P1" and w["top"]["node"] == sys.argv[3], w["top"]
assert w["error"] is None
lk = by[("hp-fleet-eu-locked", "eu-west-1")]
assert "sagemaker:DescribeCluster" in lk["error"] and lk["summary"] is None and lk["nodes"] is None, lk
mine = [f for f in d["findings"] if f["cluster"] == "hp-fleet-west"]
assert all(f["region"] == "us-west-2" for f in mine)
assert sorted(f["key"] for f in mine) == sorted(f["key"] for f in t["findings"]), "not the findings triage gives"
assert {f["cluster"] for f in d["findings"]} == {"hp-fleet-west", "hp-fleet-west-eks", "hp-fleet-eu"}
s = d["summary"]
assert (s["clusters"], s["unreadable_regions"], s["unreadable_clusters"], s["P1"]) == (4, 1, 1, 1), s
' "$e2e_tmp/f.json" "$e2e_tmp/t.json" "$failed"

# --regions all: the enabled regions from ec2:DescribeRegions, sorted.
"$HPNODE" fleet --regions all -o json --text-file "$e2e_tmp/all.txt" >"$e2e_tmp/all.json" 2>"$e2e_tmp/all.err"
check "--regions all: the enabled regions, not the one not opted in" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["region"] for r in d["regions"]] == ["ap-east-1", "ap-southeast-2", "eu-west-1", "us-west-2"], d["regions"]
assert d["regions"][0]["clusters"] == 0 and d["regions"][0]["error"] is None
' "$e2e_tmp/all.json"
check "--regions all: DescribeRegions asked for the enabled ones" grep -q \
	'^ec2:DescribeRegions {"Filter.1.Name":"opt-in-status","Filter.1.Value.1":"opt-in-not-required","Filter.1.Value.2":"opted-in"}$' \
	"$e2e_tmp/params.log"
check "--text-file: the empty region is a row too" grep -Eq '^- +ap-east-1 +.* no HyperPod clusters$' "$e2e_tmp/all.txt"

"$HPNODE" fleet --regions us-west-2 --probe -o json >"$e2e_tmp/probe.json" 2>/dev/null
check "--probe: the sweep runs on the Running nodes of each cluster" sh -c "
	[ \$(grep -c '^ssm:StartSession' '$FIXTURE_RECORD') -ge 5 ] &&
	grep -q '\"check\":\"node\.' '$e2e_tmp/probe.json'"
"$HPNODE" fleet --region eu-west-1 -o json >"$e2e_tmp/def.json" 2>/dev/null
check "without --regions: the configured region only" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["region"] for r in d["regions"]] == ["eu-west-1"], d["regions"]
assert sorted(c["cluster"] for c in d["clusters"]) == ["hp-fleet-eu", "hp-fleet-eu-locked"]
' "$e2e_tmp/def.json"

# Only readable regions: exit 0; --fail-on over the whole fleet.
"$HPNODE" fleet --regions us-west-2 >/dev/null 2>&1
expect_status "every region and cluster read: exit 0" 0 $?
"$HPNODE" fleet --regions eu-west-1,us-west-2 --fail-on P1 >/dev/null 2>&1
expect_status "--fail-on P1: a P1 in one cluster of the fleet, exit 3" 3 $?
"$HPNODE" fleet --regions eu-west-1 --fail-on P1 --quiet >"$e2e_tmp/q.txt" 2>&1
expect_status "--fail-on P1 without one, a cluster not read: exit 1" 1 $?
check "--quiet prints nothing" sh -c "[ ! -s '$e2e_tmp/q.txt' ]"
fixture_stop

"$HPNODE" fleet --regions us-west-2,nowhere >/dev/null 2>"$e2e_tmp/u.err"
expect_status "a bad region name: exit 2" 2 $?
check "... naming it" grep -q "'nowhere' is not a region name" "$e2e_tmp/u.err"
"$HPNODE" fleet --regions us-west-2 -o junit >/dev/null 2>&1
expect_status "JUnit is refused: exit 2" 2 $?
"$HPNODE" fleet --parallel 0 >/dev/null 2>&1
expect_status "--parallel 0: exit 2" 2 $?
e2e_done
