#!/bin/sh
# On-node probes over SSM against the fixture's data channel (TLS WebSocket
# on 127.0.0.1, test CA through AWS_CA_BUNDLE): many nodes probed at once,
# each fault mode giving its node state and finding, timeouts ending with
# TerminateSession, throttling retried, --node/--sample/--no-probe, and the
# session-manager-plugin transport with a fake plugin.
T=t0500-ssm
. "$(dirname "$0")/e2e-lib.sh"

# probes SNAPSHOT PYTHON: runs PYTHON with `p` (probes), `m` (probes_meta),
# `ids` (node id by alias) and `fail(msg)`; ok when it does not fail.
probes() {
	python3 - "$1" "$FIXTURE_READY" "$2" <<'PY'
import json, sys
snap = json.load(open(sys.argv[1]))
ids = json.load(open(sys.argv[2]))["nodes"]
p, m = snap.get("probes", {}), snap.get("probes_meta", {})
def fail(msg):
    print(msg)
    sys.exit(1)
def block(text, name):
    """The lines of one probe block (the big meminfo file is the same on every node)."""
    a = text.find("@@HP@@ BEGIN %s\n" % name)
    b = text.find("@@HP@@ END %s " % name)
    return text[a:b] if a >= 0 and b > a else None
exec(sys.argv[3])
PY
}

fixture_start "$ROOT/tests/fixtures/ssm.yaml" || { not_ok "ssm fixture starts" "see messages above"; e2e_done; }
snap=$e2e_tmp/ssm.snap
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --probe-timeout 5 --output json \
	--save-snapshot "$snap" >"$e2e_tmp/ssm.json" 2>"$e2e_tmp/ssm.err"
expect_status "triage with SSM faults completes" 0 $?
check "stderr is quiet (not a terminal: no progress line)" sh -c '! grep -q "SSM probes" "$1"' _ "$e2e_tmp/ssm.err"

check "healthy nodes: probed, exit 0, whole output with its DONE marker" probes "$snap" '
ok = [i for i, e in p.items() if e["state"] == "probed"]
if len(ok) != 10: fail("%d probed: %s" % (len(ok), sorted((i, e["state"], e["reason"]) for i, e in p.items())))
ref = block(p[ids["head"]]["stdout"], "meminfo")
if not ref or "MemTotal:       2097152000 kB" not in ref or "Field0159:" not in ref \
        or not p[ids["head"]]["stdout"].rstrip().endswith("@@HP@@ DONE"):
    fail("reference output incomplete: " + p[ids["head"]]["stdout"][:200])
for i in ok:
    e = p[i]
    if e["exit_code"] != 0 or e["truncated"] or block(e["stdout"], "meminfo") != ref \
            or not e["stdout"].rstrip().endswith("@@HP@@ DONE") or e["transport"] != "native":
        fail(f"{i}: {e['state']} {e['exit_code']} {e['truncated']} {e['stdout'][:300]}")
'
check "duplicated, reordered and corrupted messages still give the exact output" probes "$snap" '
for alias in ("echoer", "shuffler", "corrupter"):
    e = p[ids[alias]]
    if e["state"] != "probed" or e["exit_code"] != 0 \
            or block(e["stdout"], "meminfo") != block(p[ids["head"]]["stdout"], "meminfo") \
            or not e["stdout"].rstrip().endswith("@@HP@@ DONE"):
        fail("%s: %s %s %d bytes" % (alias, e["state"], e["reason"], len(e["stdout"])))
'
check "probes_meta totals" probes "$snap" '
if m["requested"] != 15 or m["probed"] != 10 or m["unreachable"] != 3 or m["skipped"] != 2: fail(str(m))
'
check "TargetNotConnected: unreachable, FAIL P1 § K.5 on that node" findings "$e2e_tmp/ssm.json" \
	"1:check=ssm.reachability,tag=FAIL,priority=P1,section=K.5,node=$(fixture_get nodes.offline),message~TargetNotConnected"
check "a node that never answers times out and its session is terminated" probes "$snap" '
e = p[ids["silent"]]
if e["state"] != "unreachable" or e["reason"] != "timeout after 5 s" or not e["terminated"]: fail(str(e))
if not 4900 <= e["duration_ms"] < 9000: fail("duration %d" % e["duration_ms"])
'
silent=$(fixture_get nodes.silent)
check "TerminateSession reached the fixture for the silent node" grep -q "^terminate .* $silent\$" "$FIXTURE_SSM_RECORD"
check "timeout finding" findings "$e2e_tmp/ssm.json" \
	"1:check=ssm.reachability,tag=FAIL,node=$silent,message~timeout after 5 s"
check "a connection dropped mid-stream: unreachable, partial output kept, terminated" probes "$snap" '
e = p[ids["dropper"]]
if e["state"] != "unreachable" or "connection lost" not in e["reason"] or not e["truncated"] or not e["terminated"]:
    fail(str(e))
if e["exit_code"] is not None: fail("exit code from a dropped session")
'
check "dropped node finding" findings "$e2e_tmp/ssm.json" \
	"1:check=ssm.reachability,tag=FAIL,section=K.5,node=$(fixture_get nodes.dropper),message~connection lost"
check "throttled StartSession is retried to success" probes "$snap" '
e = p[ids["busy"]]
if e["state"] != "probed" or e["start_attempts"] != 3: fail(str(e))
'
check "KMS-encrypted session refused with a clear message" probes "$snap" '
e = p[ids["kms"]]
if e["state"] != "skipped" or "KMS-encrypted" not in e["reason"]: fail(str(e))
'
check "KMS finding and the agent saw the refusal" findings "$e2e_tmp/ssm.json" \
	"1:check=ssm.reachability,tag=WARN,message~KMS-encrypted"
check "the fixture agent logged the KMS refusal" grep -q "kms-refused hpnode does not support KMS" "$FIXTURE_SSM_RECORD"
check "a node that is not Running is skipped, with the reason" probes "$snap" '
e = p[ids["broken"]]
if e["state"] != "skipped" or e["reason"] != "node not Running (Failure)" or "start_attempts" in e: fail(str(e))
'
check "no protocol violation seen by the fixture" sh -c '! grep -q "^violation\|^error" "$1"' _ "$FIXTURE_SSM_RECORD"
check "every agent message acknowledged (no unacked line)" sh -c '! grep -q "^unacked" "$1"' _ "$FIXTURE_SSM_RECORD"
check "no session failed on a protocol error" sh -c '! grep -q "^end .* protocol-error" "$1"' _ "$FIXTURE_SSM_RECORD"
starts=$(grep -c '^ssm:StartSession$' "$FIXTURE_RECORD")
[ "$starts" = 17 ] && ok "17 StartSession calls: 14 nodes + 2 throttled + the Slurm controller probe" ||
	not_ok "17 StartSession calls" "$starts calls"
terms=$(grep -c '^ssm:TerminateSession$' "$FIXTURE_RECORD")
[ "$terms" = 3 ] && ok "TerminateSession only for the 3 unfinished sessions" || not_ok "TerminateSession only for unfinished sessions" "$terms calls"
check "summary line" findings "$e2e_tmp/ssm.json" \
	"1:check=ssm.reachability,tag=INFO,message~SSM probes: 10 nodes probed"

# --node, --sample, --no-probe.
: >"$FIXTURE_RECORD"
head=$(fixture_get nodes.head)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --node "$head" --output json --save-snapshot "$e2e_tmp/node.snap" >/dev/null 2>&1
expect_status "--node triage completes" 0 $?
check "--node probes that node only" probes "$e2e_tmp/node.snap" '
if list(p) != [ids["head"]] or p[ids["head"]]["state"] != "probed" or m["selection"] != "node": fail(str(list(p)))
'
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --sample 2 --output json --save-snapshot "$e2e_tmp/sample.snap" >/dev/null 2>&1
check "--sample 2 probes one node of each group" probes "$e2e_tmp/sample.snap" '
probed = [e for e in p.values() if e["state"] == "probed"]
if len(probed) != 2 or sorted(e["group"] for e in probed) != ["controller", "gpu"]: fail(str(p))
'
: >"$FIXTURE_RECORD"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --output json >"$e2e_tmp/noprobe.json" 2>&1
check "--no-probe opens no session" sh -c '! grep -q "^ssm:StartSession" "$1"' _ "$FIXTURE_RECORD"
check "--no-probe is said in the report" findings "$e2e_tmp/noprobe.json" \
	"1:check=ssm.reachability,tag=INFO,message~On-node probes not run"

# The stream URL's certificate is checked: without the fixture's CA the data channel fails.
AWS_CA_BUNDLE=$e2e_tmp/other-ca.pem
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$e2e_tmp/other.key" \
	-out "$AWS_CA_BUNDLE" -days 1 -subj "/CN=some other CA" >/dev/null 2>&1
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --node "$head" --output json --save-snapshot "$e2e_tmp/ca.snap" >/dev/null 2>&1
AWS_CA_BUNDLE=$(fixture_get ssm_ca_bundle)
check "an untrusted stream certificate: unreachable, data channel refused" probes "$e2e_tmp/ca.snap" '
e = p[ids["head"]]
if e["state"] != "unreachable" or "data channel refused" not in e["reason"] or not e["terminated"]: fail(str(e))
'

# The plugin transport, with a fake plugin on PATH.
mkdir -p "$e2e_tmp/bin"
fake_tool "$ROOT/tests/e2e/fake-session-manager-plugin.py" "$e2e_tmp/bin/session-manager-plugin"
FAKE_PLUGIN_LOG=$e2e_tmp/plugin.log PATH="$e2e_tmp/bin:$PATH" "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" \
	--node "$head" --ssm-transport plugin --output json --save-snapshot "$e2e_tmp/plugin.snap" >/dev/null 2>&1
expect_status "--ssm-transport plugin triage completes" 0 $?
check "plugin transport: probed through the plugin, output and exit code parsed" probes "$e2e_tmp/plugin.snap" '
e = p[ids["head"]]
if e["state"] != "probed" or e["transport"] != "plugin" or e["exit_code"] != 0: fail(str(e))
if "from the fake plugin" not in e["stdout"] or "Starting session" in e["stdout"] or "EXIT_CODE" in e["stdout"] or e["truncated"]:
    fail(repr(e["stdout"]))
if m.get("plugin_version") != "1.2.650.0": fail(str(m))
'
check "plugin ran on a terminal, as the aws CLI runs it" grep -q '"tty": true' "$e2e_tmp/plugin.log"
FAKE_PLUGIN_LOG=$e2e_tmp/plugin.log PATH="$e2e_tmp/bin:$PATH" "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" \
	--node "$(fixture_get nodes.kms)" --ssm-transport auto --output json --save-snapshot "$e2e_tmp/auto.snap" >/dev/null 2>&1
check "auto transport: a KMS session falls back to the plugin" probes "$e2e_tmp/auto.snap" '
e = p[ids["kms"]]
if e["state"] != "probed" or e["transport"] != "plugin": fail(str(e))
'
PATH=/usr/bin:/bin "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --node "$head" --ssm-transport plugin \
	--output json >"$e2e_tmp/noplugin.json" 2>&1
check "plugin missing: node skipped, WARN P2 § K.4" findings "$e2e_tmp/noplugin.json" \
	"1:check=ssm.reachability,tag=WARN,priority=P2,section=K.4,message~SSM plugin missing"
fixture_stop

# Many nodes at once, and throttling beyond the rate: each node takes 2 s to
# answer, the fixture allows 2 StartSession/s and hpnode asks for 20.
fixture_start "$ROOT/tests/fixtures/ssm.yaml" --ssm-rate 2 --probe-latency 2 ||
	{ not_ok "slow, rate-limited fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --sample 6 --ssm-rate 20 --probe-timeout 30 --output json \
	--save-snapshot "$e2e_tmp/rate.snap" >/dev/null 2>&1
expect_status "throttled sweep completes" 0 $?
check "every sampled node is probed despite throttling" probes "$e2e_tmp/rate.snap" '
probed = [e for e in p.values() if e["state"] == "probed"]
if len(probed) != 6: fail(str(p))
if max(e["start_attempts"] for e in probed) < 2: fail("no StartSession was retried")
'
check "the 2 s sessions overlapped (wall time well under their sum)" probes "$e2e_tmp/rate.snap" '
total = sum(e["duration_ms"] for e in p.values())
if total < 12000 or not m["wall_ms"] < total * 0.6: fail("wall %d ms, sessions %d ms" % (m["wall_ms"], total))
'
starts=$(grep -c '^ssm:StartSession$' "$FIXTURE_RECORD")
[ "$starts" -gt 6 ] && ok "throttled calls were retried ($starts StartSession calls for 6 nodes)" ||
	not_ok "throttled calls were retried" "$starts calls"
fixture_stop

# Usage errors.
"$HPNODE" triage --cluster c --concurrency 0 >/dev/null 2>&1
expect_status "--concurrency 0 is a usage error" 2 $?
"$HPNODE" triage --cluster c --ssm-transport ssh >/dev/null 2>&1
expect_status "--ssm-transport ssh is a usage error" 2 $?
"$HPNODE" triage --cluster c --node i-0123456789abcdef0 --sample 3 >/dev/null 2>&1
expect_status "--sample with --node is a usage error" 2 $?
"$HPNODE" triage --cluster c --probe-timeout 1.5 >/dev/null 2>&1
expect_status "--probe-timeout 1.5 is a usage error" 2 $?
e2e_done
