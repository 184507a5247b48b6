#!/bin/sh
# The fixture's fast mode (server.py --probe-cache): the probe runs in a
# sandbox once per node kind and the other nodes of that kind get its output
# with their own name and clock. It must change nothing hpnode can see: on
# the healthy GPU cluster and on the SSM fault cluster, every node's entry
# (state, reason, exit status, stdout, stderr) and every on-node and SSM
# finding are the same as with a sandbox per node, and the data channel
# still judges the client (no violation, every message acknowledged).
T=t0514-probe-cache
. "$(dirname "$0")/e2e-lib.sh"

# run NAME YAML TIMEOUT [server args]: triage the fixture, its snapshot and JSON report under
# NAME. The timeout is a budget, not a measure: ssm.yaml's silent node waits it out, and a
# sandboxed probe on a loaded machine (or under the sanitizers) must never meet it.
run() {
	name=$1
	yaml=$2
	timeout=$3
	shift 3
	fixture_start "$yaml" "$@" || { not_ok "$name: fixture starts" "see messages above"; return 1; }
	"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --probe-timeout "$timeout" --no-kube --output json \
		--save-snapshot "$e2e_tmp/$name.snap" >"$e2e_tmp/$name.json" 2>"$e2e_tmp/$name.err"
	rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 3 ] && ok "$name: triage completes" ||
		not_ok "$name: triage completes" "exit status $rc: $(head -c 300 "$e2e_tmp/$name.err")"
	cp "$FIXTURE_SSM_RECORD" "$e2e_tmp/$name.ssm.log"
	cp "$FIXTURE_READY" "$e2e_tmp/$name.ready.json"
	fixture_stop
}

# same A B: the two runs' entries and on-node/SSM findings agree (node ids by alias).
same() {
	python3 - "$e2e_tmp/$1" "$e2e_tmp/$2" <<'PY'
import json, re, sys
a, b = sys.argv[1], sys.argv[2]
def load(base):
    snap = json.load(open(base + ".snap"))
    ids = {v: k for k, v in json.load(open(base + ".ready.json"))["nodes"].items()
           if isinstance(v, str)}
    return snap, ids
def norm(text, ids):
    # What differs between any two runs: the clock, the sandbox's own temporary path, and
    # how a dropped connection was noticed (reading or sending: the timing's).
    text = re.sub(r"(?m)^(\w*epoch=)\d+$", r"\1T", text)
    text = re.sub(r"connection lost before the session ended \([^)]*\)",
                  "connection lost before the session ended (...)", text)
    text = re.sub(r"/[^\s:'\"]*/node-i-[0-9a-f]+-[a-z0-9_]+/root", "<root>", text)
    for real, alias in ids.items():
        text = text.replace(real, "<" + alias + ">")
    return text
sa, ia = load(a)
sb, ib = load(b)
def entries(snap, ids):
    out = {}
    for k, e in snap["probes"].items():
        out[ids.get(k, k)] = {f: norm(e[f], ids) if isinstance(e.get(f), str) else e.get(f)
                              for f in ("state", "reason", "exit_code", "stdout", "stderr",
                                        "truncated", "stdout_capped")}
    return out
ea, eb = entries(sa, ia), entries(sb, ib)
# A session dropped after its first message: how much of the output that was is the
# pipe's timing, in any mode; what arrived is a start of the whole output either way.
for k in ea:
    x, y = ea[k], eb.get(k)
    if y and x["state"] == y["state"] == "unreachable" and \
            (x["stdout"].startswith(y["stdout"]) or y["stdout"].startswith(x["stdout"])):
        x["stdout"] = y["stdout"] = "(a start of the output)"
if ea != eb:
    for k in sorted(set(ea) | set(eb)):
        if ea.get(k) != eb.get(k):
            print("entry %s differs:\n %s\n %s" % (k, str(ea.get(k))[:300], str(eb.get(k))[:300]))
            break
    sys.exit(1)
def findings(base, ids):
    doc = json.load(open(base + ".json"))
    out = []
    for f in doc["findings"]:
        if not f["check"].startswith(("node.", "ssm.")):
            continue
        f = {k: f[k] for k in ("check", "tag", "priority", "section", "message", "evidence")}
        text = json.dumps(f, sort_keys=True)
        # Durations and the sweep's wall time are the machine's, not the fixture's.
        text = re.sub(r"\d+ blocks, [0-9.]+ s", "N blocks, T s", text)
        text = re.sub(r"sweep took [0-9.]+ s", "sweep took T s", text)
        out.append(norm(text, ids))
    return out
fa, fb = findings(a, ia), findings(b, ib)
if fa != fb:
    for x, y in zip(fa, fb):
        if x != y:
            print("finding differs:\n %s\n %s" % (x[:400], y[:400]))
            break
    print("%d and %d findings" % (len(fa), len(fb)))
    sys.exit(1)
print("%d entries, %d findings alike" % (len(ea), len(fa)))
PY
}

clean_log() {
	! grep -q "^violation\|^error\|^unacked\|^end .* protocol-error" "$1"
}

for y in healthy:120 ssm:30; do
	t=${y#*:}
	y=${y%:*}
	run "$y-sandbox" "$ROOT/tests/fixtures/$y.yaml" "$t" || continue
	run "$y-cache" "$ROOT/tests/fixtures/$y.yaml" "$t" --probe-cache || continue
	check "$y: every entry and finding as with a sandbox per node" same "$y-sandbox" "$y-cache"
	check "$y: the data channel saw no client mistake in fast mode" clean_log "$e2e_tmp/$y-cache.ssm.log"
done
# The cache was used: healthy has three node kinds (p5, g5, m5) over eight nodes.
check "healthy: three sandboxes, the other five nodes served from the cache" \
	sh -c 'test "$(grep -c "^start" "$1")" = 8 && test "$(grep -c "^cached" "$1")" = 5' \
	_ "$e2e_tmp/healthy-cache.ssm.log"
check "healthy: no node served from a cache without --probe-cache" \
	sh -c '! grep -q "^cached" "$1"' _ "$e2e_tmp/healthy-sandbox.ssm.log"
# The name is replaced as a whole word, and only in the cached output's copy.
check "a cached output gets the node's own name, whole words only, and the clock now" \
	python3 - "$ROOT/tests/fixtures" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
from hpfixture.ssmchannel import CachedRun
run = CachedRun()
run.name, run.code = b"ip-10-1-0-1", 0
run.stdout = b"host=ip-10-1-0-1\npeers ip-10-1-0-12 xip-10-1-0-1 ip-10-1-0-1.ec2.internal\nepoch=5\n"
run.stderr = b"ip-10-1-0-1: warn\n"
out, err = run.for_node("ip-10-1-0-3")
head = b"host=ip-10-1-0-3\npeers ip-10-1-0-12 xip-10-1-0-1 ip-10-1-0-3.ec2.internal\nepoch="
assert out.startswith(head), out
assert abs(int(out[len(head):]) - time.time()) < 600, out
assert err == b"ip-10-1-0-3: warn\n", err
assert run.stdout.startswith(b"host=ip-10-1-0-1\n")
PY
e2e_done
