#!/bin/sh
# hpnode watch end to end: the first round saves the state, an unchanged
# cluster gives a heartbeat, the changed demo cluster (the same cluster
# later: tests/fixtures/demo-changed.yaml) gives only the changes, with the
# replaced node as replaced; the loop keeps going round until SIGTERM, which
# ends it cleanly with the state on disk. After the first round the sweep
# probes the nodes whose state changed and a rotating share of the others,
# which keep their last probe; the state directory is made when missing,
# never through a symbolic link.
T=t0370-watch
. "$(dirname "$0")/e2e-lib.sh"

state=$e2e_tmp/state
mkdir -p "$state"
fixture_start "$ROOT/tests/fixtures/demo.yaml" || { not_ok "demo fixture starts" "see messages above"; e2e_done; }
old_failed=$(fixture_get nodes.p5-nvlink)
"$HPNODE" watch --cluster "$FIXTURE_CLUSTER" --region us-west-2 --state-dir "$state" --once \
	>"$e2e_tmp/w1.txt" 2>"$e2e_tmp/w1.err"
expect_status "watch --once, first round: exit 0" 0 $?
check "the first round says so and saves the state" grep -q "^hpnode watch: .* cluster hp-demo: first round, [0-9]* issues; state saved to $state/hp-demo.snap.json" "$e2e_tmp/w1.txt"
check "the state file is a snapshot" python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["meta"] and d["nodes"]' "$state/hp-demo.snap.json"
"$HPNODE" watch --cluster "$FIXTURE_CLUSTER" --region us-west-2 --state-dir "$state" --once \
	>"$e2e_tmp/w2.txt" 2>"$e2e_tmp/w2.err"
expect_status "watch --once, nothing changed: exit 0" 0 $?
check "nothing changed: one heartbeat line" sh -c "[ \$(wc -l <'$e2e_tmp/w2.txt') -eq 1 ] && grep -q '^hpnode watch: .* cluster hp-demo: no change ([0-9]* issues)$' '$e2e_tmp/w2.txt'"

# The loop: rounds until SIGTERM, then a clean exit.
"$HPNODE" watch --cluster "$FIXTURE_CLUSTER" --region us-west-2 --state-dir "$state" --interval 1s \
	>"$e2e_tmp/loop.txt" 2>"$e2e_tmp/loop.err" &
pid=$!
i=0
rounds() {  # 0 until the background shell has made the file
	n=$(grep -c '^hpnode watch:' "$e2e_tmp/loop.txt" 2>/dev/null)
	echo "${n:-0}"
}
while [ "$(rounds)" -lt 2 ] && [ $i -lt 600 ] && kill -0 $pid 2>/dev/null; do
	sleep 0.5
	i=$((i + 1))
done
kill -TERM $pid 2>/dev/null
wait $pid
expect_status "watch stops on SIGTERM with exit 0" 0 $?
check "the loop went round at least twice, each a heartbeat" sh -c "[ \$(grep -c '^hpnode watch: .* no change' '$e2e_tmp/loop.txt') -ge 2 ]"
check "... and said where the state is when it stopped" grep -q "stopped; the last round's state is in $state/hp-demo.snap.json" "$e2e_tmp/loop.err"
fixture_stop
FIXTURE_PID= FIXTURE_DIR=

# The same cluster later: only the changes.
fixture_start "$ROOT/tests/fixtures/demo-changed.yaml" || { not_ok "changed fixture starts" "see messages above"; e2e_done; }
new_node=$(fixture_get nodes.p5-nvlink)
sysok=$(fixture_get nodes.sys-ok)
"$HPNODE" watch --cluster "$FIXTURE_CLUSTER" --region us-west-2 --state-dir "$state" --once --no-color \
	>"$e2e_tmp/w3.txt" 2>"$e2e_tmp/w3.err"
expect_status "watch --once after the change: exit 0" 0 $?
check "the round says the cluster changed" grep -q "^hpnode watch: .* cluster hp-demo: changed since the last round" "$e2e_tmp/w3.txt"
check "the replaced node is shown as replaced" grep -q "replaced $old_failed (group gpu-p5, Failure) → $new_node (group gpu-p5, Running)" "$e2e_tmp/w3.txt"
check "the new root volume finding is listed under its key" grep -q "key node.disk-root/$sysok" "$e2e_tmp/w3.txt"
check "no full report: no group headers" sh -c "! grep -q 'Triage Summary' '$e2e_tmp/w3.txt'"
"$HPNODE" watch --cluster "$FIXTURE_CLUSTER" --region us-west-2 --state-dir "$state" --once --output json \
	>"$e2e_tmp/w4.json" 2>"$e2e_tmp/w4.err"
check "--output json: one hpnode.diff/1 document per round, nothing new now" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "hpnode.diff/1" and not d["new_findings"] and not d["resolved"], d["summary"]
' "$e2e_tmp/w4.json"
fixture_stop


# The sweep after the first round: the nodes whose state changed and a
# rotating share of the others (--probe-share 1 here), the others keeping
# their last probe; the rotation goes on across restarts (each --once is
# one). The state directory is made when missing, 0700 at each level.
rot=$e2e_tmp/made/for/watch
targets() {  # the instance ids of the StartSession calls recorded since the last call
	sed -n 's/^ssm:StartSession .*"Target":"sagemaker-cluster:[a-z0-9]*_.*-\(i-[0-9a-f]*\)".*/\1/p' \
		"$e2e_tmp/params.log"
	: >"$e2e_tmp/params.log"
}
fixture_start "$ROOT/tests/fixtures/demo.yaml" --record-params "$e2e_tmp/params.log" ||
	{ not_ok "demo fixture starts again" "see messages above"; e2e_done; }
"$HPNODE" watch --cluster "$FIXTURE_CLUSTER" --region us-west-2 --state-dir "$rot" --once --probe-share 1 \
	>"$e2e_tmp/r1.txt" 2>"$e2e_tmp/r1.err"
expect_status "a state directory that does not exist is made: exit 0" 0 $?
check "... with mode 0700 at each level made" sh -c "[ \"\$(stat -c %a '$e2e_tmp/made' '$e2e_tmp/made/for' '$rot' | sort -u)\" = 700 ]"
check "... and holds the state" test -s "$rot/hp-demo.snap.json"
targets | sort >"$e2e_tmp/r1.ids"
running=$(wc -l <"$e2e_tmp/r1.ids")
check "the first round probes every Running node" sh -c "[ $running -ge 3 ]"
"$HPNODE" watch --cluster "$FIXTURE_CLUSTER" --region us-west-2 --state-dir "$rot" --once --probe-share 1 \
	>"$e2e_tmp/r2.txt" 2>"$e2e_tmp/r2.err"
expect_status "second round: exit 0" 0 $?
targets >"$e2e_tmp/r2.ids"
check "nothing changed: one node probed, the first of the rotation" sh -c "
	[ \$(wc -l <'$e2e_tmp/r2.ids') -eq 1 ] && [ \"\$(cat '$e2e_tmp/r2.ids')\" = \"\$(sed -n 1p '$e2e_tmp/r1.ids')\" ]"
check "the others keep their last probe: no change reported" grep -q '^hpnode watch: .* cluster hp-demo: no change ([0-9]* issues)$' "$e2e_tmp/r2.txt"
check "the rotation's place is kept in the state directory" sh -c "[ \"\$(cat '$rot/hp-demo.rotation')\" = \"\$(cat '$e2e_tmp/r2.ids')\" ]"
check "the saved state holds every node's probe, the others carried with their output" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["probes"]
ids = open(sys.argv[2]).read().split()
assert set(ids) <= set(p), (ids, sorted(p))
carried = [k for k in ids if p[k].get("carried")]
assert len(carried) == len(ids) - 1, carried
assert all(p[k].get("stdout") for k in carried), "a carried probe without its output"
' "$rot/hp-demo.snap.json" "$e2e_tmp/r1.ids"
"$HPNODE" watch --cluster "$FIXTURE_CLUSTER" --region us-west-2 --state-dir "$rot" --once --probe-share 1 \
	>"$e2e_tmp/r3.txt" 2>"$e2e_tmp/r3.err"
targets >"$e2e_tmp/r3.ids"
check "a restart goes on with the next node of the rotation" sh -c "
	[ \$(wc -l <'$e2e_tmp/r3.ids') -eq 1 ] && [ \"\$(cat '$e2e_tmp/r3.ids')\" = \"\$(sed -n 2p '$e2e_tmp/r1.ids')\" ]"
check "... still no change" grep -q 'cluster hp-demo: no change' "$e2e_tmp/r3.txt"
fixture_stop
FIXTURE_PID= FIXTURE_DIR=
fixture_start "$ROOT/tests/fixtures/demo-changed.yaml" --record-params "$e2e_tmp/params.log" ||
	{ not_ok "changed fixture starts again" "see messages above"; e2e_done; }
new_node=$(fixture_get nodes.p5-nvlink)
"$HPNODE" watch --cluster "$FIXTURE_CLUSTER" --region us-west-2 --state-dir "$rot" --once --probe-share 1 \
	>"$e2e_tmp/r4.txt" 2>"$e2e_tmp/r4.err"
targets >"$e2e_tmp/r4.ids"
check "a node whose state changed (the replacement) is probed, beside one node of the rotation" sh -c "
	grep -qx '$new_node' '$e2e_tmp/r4.ids' && [ \$(grep -vcx '$new_node' '$e2e_tmp/r4.ids') -eq 1 ] &&
	! grep -qx -f '$e2e_tmp/r2.ids' -f '$e2e_tmp/r3.ids' '$e2e_tmp/r4.ids'"
fixture_stop

mkdir -p "$e2e_tmp/elsewhere"
ln -s "$e2e_tmp/elsewhere" "$e2e_tmp/link"
"$HPNODE" watch --cluster hp-demo --region us-west-2 --state-dir "$e2e_tmp/link/state" --once >/dev/null 2>"$e2e_tmp/u.err"
expect_status "a state directory through a symbolic link: exit 2" 2 $?
check "... saying so, and nothing made through it" sh -c "grep -q 'symbolic link' '$e2e_tmp/u.err' && [ ! -e '$e2e_tmp/elsewhere/state' ]"
"$HPNODE" watch --cluster hp-demo --region us-west-2 --state-dir "$e2e_tmp/link" --once >/dev/null 2>"$e2e_tmp/u2.err"
expect_status "a state directory that is a symbolic link: exit 2" 2 $?
: >"$e2e_tmp/plain"
"$HPNODE" watch --cluster hp-demo --region us-west-2 --state-dir "$e2e_tmp/plain/state" --once >/dev/null 2>"$e2e_tmp/u3.err"
expect_status "a state directory under a file: exit 2" 2 $?
check "... saying so" grep -q "cannot create the state directory" "$e2e_tmp/u3.err"
"$HPNODE" watch --cluster hp-demo --interval 5x --once >/dev/null 2>&1
expect_status "a bad --interval: exit 2" 2 $?
e2e_done
