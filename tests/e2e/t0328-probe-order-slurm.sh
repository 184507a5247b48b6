#!/bin/sh
# On a Slurm cluster the controller is probed before the sweep, and the
# nodes its sinfo calls drained, down or not responding are among those
# other signals name: with --sample 5 of 14 nodes, the drained and the
# not-responding compute node are probed although they come last in the
# list, and an idle one is not.
T=t0328-probe-order-slurm
. "$(dirname "$0")/e2e-lib.sh"

variant "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/s.yaml" '
for n in d["nodes"]:
    if n.get("group") == "compute-p5":
        n["count"] = 12
d["slurm"]["commands"]["sinfo"] = {"stdout": "".join(
    "{slurm_name:%d}|%s|%s\n" % (i, st, why) for i, st, why in
    [(2, "idle", "none"), (3, "idle", "none"), (12, "drained", "Action:Replace"),
     (13, "idle*", "Not responding")])}
'
fixture_start "$e2e_tmp/s.yaml" || { not_ok "slurm fixture with 12 compute nodes starts" "see above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --sample 5 --ssm-rate 1000 --output json \
	--save-snapshot "$e2e_tmp/s.snap" >"$e2e_tmp/s.json" 2>"$e2e_tmp/s.err"
expect_status "slurm triage with --sample 5 completes" 0 $?
probed() {
	python3 - "$FIXTURE_READY" "$e2e_tmp/s.snap" "$@" <<'PY'
import json, sys
r, s = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ids, probes = r["node_ids"], s.get("probes", {})
for arg in sys.argv[3:]:
    want, i = arg[0] == "+", int(arg[1:])
    got = probes.get(ids[i], {}).get("state") == "probed"
    if got != want:
        sys.exit("node %d (%s): probed=%s, expected %s" % (i, ids[i], got, want))
if s["probes_meta"].get("signalled") != 2:
    sys.exit("signalled: %s, expected the 2 Slurm nodes" % s["probes_meta"].get("signalled"))
PY
}
check "the drained and the not-responding node are probed, idle ones after the group's first are not" probed +12 +13 +0 +1 +2 -3 -4
check "the Slurm node check still reports both" findings "$e2e_tmp/s.json" \
	"2:check=slurm.nodes,tag=FAIL,priority=P1"
e2e_done
