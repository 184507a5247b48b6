#!/bin/sh
# The fixture's SSM agent is a strict judge: a client making any one of the
# mistakes the real agent would not survive (MessageId halves not swapped,
# MessageType padded with NULs, CreatedDate in seconds, an acknowledgement
# naming the wrong MessageId or with a non-zero header sequence, never
# acknowledging, not acknowledging the exit code) has its session failed
# loudly, driven here by a deliberately wrong client (ssm_wrong_client.py);
# the same client without a mistake, and hpnode itself, pass. An old client
# version gets the update-the-plugin message. A handshake action hpnode
# refuses is reported as its own reason, never as an unreachable node.
T=t0520-ssm-strict
. "$(dirname "$0")/e2e-lib.sh"

variant "$ROOT/tests/fixtures/ssm.yaml" "$e2e_tmp/strict.yaml" \
	'd["nodes"].append({"group": "gpu", "alias": "asker", "ssm": {"connect": "unknown_action"}})
# A node whose base64 fails loudly: 70,000 bytes of stderr and no probe data.
d["nodes"].append({"group": "gpu", "alias": "noisy", "probe": {"commands": {"base64": {"stdout": "", "stderr": "e" * 69999 + "\n", "exit": 1}}}})'
fixture_start "$e2e_tmp/strict.yaml" || { not_ok "ssm fixture starts" "see messages above"; e2e_done; }
head=$(fixture_get nodes.head)
target="sagemaker-cluster:${FIXTURE_CLUSTER_ARN##*/}_controller-$head"

# One client run for every case (one python start); results in $e2e_tmp/MISTAKE.json.
mistakes="none unswapped_id nul_type seconds ack_wrong_id ack_seq never_ack no_exit_ack old_version"
check "the wrong client ran every case" timeout 300 python3 "$ROOT/tests/e2e/ssm_wrong_client.py" \
	"$target" "$e2e_tmp" $mistakes
# sid MISTAKE: that case's session id.
sid() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["session_id"])' "$e2e_tmp/$1.json"; }
# lines MISTAKE: the SSM record lines of that case's session.
lines() { grep -F " $(sid "$1") " "$FIXTURE_SSM_RECORD" >"$e2e_tmp/$1.lines"; }
# result MISTAKE PYTHON: PYTHON over `r` (the client's result) and fail(msg).
result() {
	python3 - "$e2e_tmp/$1.json" "$2" <<'PY'
import json, sys
try:
    r = json.loads(open(sys.argv[1]).read())
except ValueError:
    print("no result: " + open(sys.argv[1]).read()[:300])
    sys.exit(1)
def fail(msg):
    print(msg + " | " + json.dumps(r)[:600])
    sys.exit(1)
exec(sys.argv[2])
PY
}

check "correct client: output, stderr and exit code" result none '
if r["closed_output"] != "" or r["exit_code"] != 3 or r["stdout"] != "hello from the node\n" \
        or r["stderr"] != "careful\n" or r["customer_message"] != "": fail("not a clean session")
'
lines none
check "the correct client left no violation" sh -c '! grep -q "^violation\|^unacked\|^error" "$1"' _ "$e2e_tmp/none.lines"
check "the correct client's session ended done" grep -q "^end .* done exit=3" "$e2e_tmp/none.lines"

# strict MISTAKE WORDS: the session failed loudly, the client was told, the record says why.
strict() {
	lines "$1"
	check "$1: failed loudly to the client" result "$1" "
if not (r['closed_output'] or '').startswith('fixture agent: protocol error:'): fail('no error')
if '$2' not in r['closed_output']: fail('wrong reason')
"
	check "$1: recorded as a violation" sh -c 'grep "^violation .* $1 " "$2" | grep -qF "$3"' _ \
		"$head" "$e2e_tmp/$1.lines" "$2"
	check "$1: the session ended as a protocol error" grep -q "^end .* $head protocol-error" "$e2e_tmp/$1.lines"
}
strict unswapped_id "MessageId halves are not swapped"
strict nul_type "MessageType is padded with NUL bytes"
strict seconds "is in seconds, not milliseconds"
strict ack_wrong_id "names MessageId"
strict ack_seq "acknowledge header has SequenceNumber 1"
strict never_ack "HandshakeRequest (seq 0) was never acknowledged"
strict no_exit_ack "output messages never acknowledged"
check "no_exit_ack: an unacked line for the session" grep -q "^unacked .* $head \[" "$e2e_tmp/no_exit_ack.lines"
check "no_exit_ack: the exit code itself arrived" result no_exit_ack 'r["exit_code"] == 3 or fail("no exit code")'

lines old_version
check "old client: the agent's update-the-plugin message" result old_version '
if not (r["customer_message"] or "").startswith("Please update session manager plugin version (minimum required version 1.2.312.0)"):
    fail("no update message")
if r["closed_output"] != "" or r["exit_code"] != 3: fail("the session should still succeed")
'
check "old client: recorded" grep -q "^old-client .* $head 1.2.200.0" "$e2e_tmp/old_version.lines"

# hpnode itself passes the strict judge, and a refused action is its own reason.
: >"$FIXTURE_SSM_RECORD"
asker=$(fixture_get nodes.asker)
noisy=$(fixture_get nodes.noisy)
for node in "$head" "$asker" "$noisy"; do
	"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --node "$node" --probe-timeout 20 --output json \
		--save-snapshot "$e2e_tmp/$node.snap" >"$e2e_tmp/$node.out" 2>"$e2e_tmp/$node.err"
	expect_status "hpnode triage --node $node completes" 0 $?
done
check "hpnode: no violation, nothing unacknowledged" sh -c '! grep -q "^violation\|^unacked\|^error" "$1"' _ "$FIXTURE_SSM_RECORD"
check "hpnode: the head node was probed by the strict agent" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["probes"][sys.argv[2]]
sys.exit(0 if e["state"] == "probed" and e["exit_code"] == 0 and e["stderr_capped"] is False else str(e)[:400])
' "$e2e_tmp/$head.snap" "$head"
check "refused handshake action: skipped with its own reason" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["probes"][sys.argv[2]]
ok = e["state"] == "skipped" and "FutureClientAction" in e["reason"] and "does not support" in e["reason"] \
    and e["exit_code"] is None
sys.exit(0 if ok else str(e)[:400])
' "$e2e_tmp/$asker.snap" "$asker"
check "refused handshake action: a WARN, not a Cannot reach FAIL" findings "$e2e_tmp/$asker.out" \
	"1:check=ssm.reachability,tag=WARN,message~session feature hpnode does not support" \
	"0:check=ssm.reachability,tag=FAIL"
check "stderr over 64 KiB: kept up to the cap and flagged stderr_capped" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["probes"][sys.argv[2]]
ok = e["state"] == "probed" and e["stderr_capped"] is True and len(e["stderr"]) == 65536 and e["stdout_capped"] is False
sys.exit(0 if ok else str({k: v for k, v in e.items() if k not in ("stderr", "stdout")})[:400])
' "$e2e_tmp/$noisy.snap" "$noisy"
check "the fixture agent ended the session on the refusal" grep -q "^end .* $asker action-refused FutureClientAction" "$FIXTURE_SSM_RECORD"
fixture_stop
e2e_done
