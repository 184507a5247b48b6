#!/bin/sh
# A cluster of 100,050 nodes (the large fixture's shape, its 100,000 p5 nodes
# created in batches of 250 a minute apart): every node is listed once, no
# cap cuts the list, and the pages stay near the 1,001 the nodes need.
T=t0326-triage-100k
. "$(dirname "$0")/e2e-lib.sh"

python3 - "$ROOT/tests/fixtures/large.yaml" "$e2e_tmp/100k.yaml" <<'PY' ||
import datetime as dt, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
d["cluster"]["name"] = "hp-100k"
t0 = dt.datetime(2026, 10, 1, tzinfo=dt.timezone.utc)
d["nodes"] = [{"group": "system", "count": 50}] + [
    {"group": "gpu-p5", "count": 250, "launch_time": (t0 + dt.timedelta(minutes=i)).isoformat()}
    for i in range(400)]
d["logs"] = {"nodes": {0: {"lifecycle": ["[hyperpod] lifecycle script on_create.sh finished with exit code 0"]}}}
yaml.safe_dump(d, open(sys.argv[2], "w"), sort_keys=False)
PY
	{ not_ok "100k fixture written" "python failed"; e2e_done; }
fixture_start "$e2e_tmp/100k.yaml" ||
	{ not_ok "100k fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube --output json \
	--save-snapshot "$e2e_tmp/snap.json" >"$e2e_tmp/out.json" 2>"$e2e_tmp/err"
expect_status "100,050-node triage completes" 0 $?
check "totals cover all 100,050 nodes, nothing reported cut" findings "$e2e_tmp/out.json" \
	"1:check=nodes.status,tag=INFO,message~Total: 100050" "0:check=nodes.status,tag=WARN"
check "every node is listed once" python3 - "$FIXTURE_READY" "$e2e_tmp/snap.json" <<'PY'
import json, sys
r, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ids = [n["InstanceId"] for n in s["nodes"]]
if len(ids) != len(set(ids)) or set(ids) != set(r["node_ids"]):
    sys.exit("%d listed, %d distinct, %d in the fixture" % (len(ids), len(set(ids)), len(r["node_ids"])))
PY
pages=$(grep -c '^sagemaker:ListClusterNodes$' "$FIXTURE_RECORD")
[ "$pages" -ge 1001 ] && [ "$pages" -le 1300 ] && ok "1,001 to 1,300 ListClusterNodes pages ($pages)" ||
	not_ok "1,001 to 1,300 ListClusterNodes pages" "$pages pages"
e2e_done
