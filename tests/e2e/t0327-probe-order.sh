#!/bin/sh
# When not every node can be probed (--sample, or more nodes than the run
# budget reaches at the StartSession rate), the nodes other signals name are
# probed first: here 50 of 1,000 (30 named by Error/Warn events, 20 by
# health-agent log lines), placed late in the list. Then each instance group
# in turn. The report says how the set was chosen and what each group got;
# the JSON lists the Running nodes left unprobed. (The issue's 20,000-node
# case, scaled to 1,000 nodes for `make test`.)
T=t0327-probe-order
. "$(dirname "$0")/e2e-lib.sh"

python3 - "$ROOT/tests/fixtures/healthy.yaml" "$e2e_tmp/order.yaml" <<'PY' ||
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
counts = {"gpu-p5": 996, "worker-g5": 2, "system": 2}
for g in d["nodes"]:
    g["count"] = counts[g["group"]]
d["cluster"]["name"] = "hp-order"
cidrs = {"private-a": "10.2.0.0/17", "private-b": "10.2.128.0/18", "public-a": "10.2.192.0/24"}
for s in d["network"]["subnets"]:
    s["cidr"] = cidrs[s["alias"]]
d.pop("kubernetes", None)
# Nodes 600..629: an Error event each; nodes 900..919: a health-agent fault line each.
d["events"] = d.get("events", []) + [
    {"level": "Error", "node": i, "minutes_ago": 30,
     "description": "Instance failed health checks"} for i in range(600, 630)]
d["logs"] = {"nodes": {i: {"health_agent": ["GPU Xid 79 fault detected: GPU has fallen off the bus"]}
                       for i in range(900, 920)}}
yaml.safe_dump(d, open(sys.argv[2], "w"), sort_keys=False)
PY
	{ not_ok "fixture written" "python failed"; e2e_done; }
fixture_start "$e2e_tmp/order.yaml" --probe-cache --record-params "$e2e_tmp/params.log" ||
	{ not_ok "1,000-node fixture starts" "see messages above"; e2e_done; }

# probed SNAPSHOT WHY: the 50 signalled nodes were probed, the order named, the unprobed listed.
signalled_probed() {
	python3 - "$FIXTURE_READY" "$1" "$2" <<'PY'
import json, sys
r, s, why = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
ids = r["node_ids"]
want = set(ids[600:630]) | set(ids[900:920])
probes, meta = s.get("probes", {}), s["probes_meta"]
def sent(e):
    return not e.get("reason", "").startswith("not probed: not sent")
missing = [i for i in sorted(want) if probes.get(i, {}).get("state") != "probed"]
if why == "budget":
    # How many nodes a 40 s budget reaches depends on how busy the machine
    # is; the order does not: no other node is sent while a signalled node
    # waits, and the budget reaches at least some of them.
    others = [i for i, e in probes.items() if i not in want and sent(e)]
    waiting = [i for i in sorted(want) if not sent(probes.get(i, {}))]
    if others and waiting:
        sys.exit("%d other nodes sent while %d signalled nodes were not, e.g. %s" % (len(others), len(waiting), waiting[0]))
    if len(missing) == 50:
        sys.exit("none of the 50 signalled nodes was probed")
elif missing:
    sys.exit("%d of the 50 signalled nodes not probed, e.g. %s (%s)" % (len(missing), missing[0], probes.get(missing[0])))
if meta.get("order_reason") != why or meta.get("signalled") != 50:
    sys.exit("meta: %s" % {k: meta.get(k) for k in ("order", "order_reason", "signalled")})
tried = {i for i, e in probes.items() if e.get("state") in ("probed", "unreachable")}
unprobed = set(meta.get("unprobed", []))
if tried & unprobed or len(tried | unprobed) != 1000:
    sys.exit("%d tried, %d listed unprobed" % (len(tried), len(unprobed)))
by = meta.get("probed_by_group", {})
reached = why != "budget" or all(sent(probes.get(i, {})) for i in want)
if sum(by.values()) != len(tried) or (reached and min(by.get(g, 0) for g in ("gpu-p5", "worker-g5", "system")) < 1):
    sys.exit("per group: %s" % by)
PY
}

"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-kube --sample 60 --ssm-rate 1000 \
	--output json --save-snapshot "$e2e_tmp/sample.snap" >"$e2e_tmp/sample.json" 2>"$e2e_tmp/sample.err"
check "--sample 60: the 50 signalled nodes and each group's first are probed" \
	signalled_probed "$e2e_tmp/sample.snap" sample
check "--sample 60: the report says how the set was chosen" findings "$e2e_tmp/sample.json" \
	"1:check=ssm.reachability,tag=INFO,message~Probe order (--sample): 50 nodes named by other signals" \
	"1:check=ssm.reachability,tag=INFO,message~940 Running nodes not probed"

# 1,000 nodes at 3 StartSession calls a second need 333 s; the run has 40.
start_line=$(wc -l <"$e2e_tmp/params.log")
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-kube --max-runtime 40 \
	--output json --save-snapshot "$e2e_tmp/budget.snap" >"$e2e_tmp/budget.json" 2>"$e2e_tmp/budget.err"
check "--max-runtime 40: the signalled nodes are sent before any other" \
	signalled_probed "$e2e_tmp/budget.snap" budget
# The rate limiter hands its tokens out in the sweep's order, whichever worker
# wakes first: at 3 a second, StartSession reaches the service for the 50
# signalled nodes before any other node (the nodes sent before the budget ran
# out, when it ran out before the 50).
check "--max-runtime 40: StartSession reached the service for the signalled nodes first" \
	python3 - "$FIXTURE_READY" "$e2e_tmp/params.log" "$start_line" <<'PY'
import json, sys
ids = json.load(open(sys.argv[1]))["node_ids"]
want = set(ids[600:630]) | set(ids[900:920])
lines = open(sys.argv[2]).read().splitlines()[int(sys.argv[3]):]
sent = [json.loads(l.split(" ", 1)[1])["Target"].rsplit("-i-", 1)[1] for l in lines
        if l.startswith("ssm:StartSession ")]
sent = ["i-" + t for t in sent]
if not sent:
    sys.exit("no StartSession")
head = sent[:len(want)]
late = [i for i in head if i not in want]
if late:
    sys.exit("%d other nodes among the first %d sent, e.g. %s at %d" % (
        len(late), len(head), late[0], head.index(late[0])))
PY
check "--max-runtime 40: the report says why" findings "$e2e_tmp/budget.json" \
	"1:check=ssm.reachability,tag=INFO,message~Probe order (more nodes than the run budget reaches)"
e2e_done
