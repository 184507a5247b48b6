#!/bin/sh
# What an operator acts on, with the real binary against the demo fixture
# cluster: the report's next steps end with the `hpnode explain` command of
# the sections it cited (and it runs), every JSON finding carries its own;
# --node narrows the report to the node and never gates on other nodes;
# a snapshot replays only for its own cluster, a cluster ARN brings its region;
# shared options before the command, -o, --fail-on p1, --color, did you mean;
# --summary and --only;
# `hpnode node` with AWS_EC2_METADATA_DISABLED sends nothing to IMDS;
# an area whose calls failed (EC2 on an expired token, through the fault
# proxy) is a WARN P1 pointing to § K.2, listed under "Not checked", and
# --fail-on P1 counts it.
T=t0347-operator
. "$(dirname "$0")/e2e-lib.sh"

fixture_start "$ROOT/tests/fixtures/demo.yaml" || { not_ok "demo fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube --no-color \
	--json-file "$e2e_tmp/demo.json" --save-snapshot "$e2e_tmp/demo.snap" >"$e2e_tmp/demo.txt" 2>"$e2e_tmp/demo.err"
expect_status "triage of the demo cluster" 0 $?

# 1. The pointers lead somewhere: the explain line names the issues' sections, and runs.
line=$(sed -n 's/^    5\. The cited sections, offline: //p' "$e2e_tmp/demo.txt")
check "the next steps end with 'hpnode explain' and the cited ids" \
	sh -c 'case "$1" in "hpnode explain "*) exit 0 ;; esac; echo "got: $1"; exit 1' _ "$line"
check "every section an issue points to is in the explain line" python3 - "$e2e_tmp/demo.json" "$line" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ids = sys.argv[2].split()[2:]
want = []
for f in d["findings"]:
    if f["priority"] and f["section"]:
        for s in f["section"].split("+"):
            if s not in want:
                want.append(s)
if ids != want:
    print("explain ids", ids, "issue sections", want)
    sys.exit(1)
PY
# shellcheck disable=SC2086
set -- $line
shift 2
"$HPNODE" explain "$@" >"$e2e_tmp/explain.txt" 2>&1
expect_status "the printed explain command runs" 0 $?
check "it prints every cited section" sh -c 'for id; do grep -q "^#* $id[:.]* " "$0" || { echo "no $id"; exit 1; }; done' "$e2e_tmp/explain.txt" "$@"
check "JSON: every finding with a section has its explain command, and it runs" python3 - "$e2e_tmp/demo.json" "$HPNODE" <<'PY'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
seen = set()
for f in d["findings"]:
    if not f["section"]:
        if f["explain"] is not None:
            print("explain without a section:", f)
            sys.exit(1)
        continue
    want = "hpnode explain " + " ".join(f["section"].split("+"))
    if f["explain"] != want:
        print("explain", f["explain"], "want", want)
        sys.exit(1)
    if want in seen:
        continue
    seen.add(want)
    r = subprocess.run([sys.argv[2]] + want.split()[1:], stdout=subprocess.DEVNULL)
    if r.returncode:
        print(want, "exits", r.returncode)
        sys.exit(1)
PY

# 10. Scope: a snapshot is replayed for its own cluster only; a cluster ARN brings its region.
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --cluster other-cluster >/dev/null 2>"$e2e_tmp/other.err"
expect_status "--snapshot with another --cluster: refused (exit 2)" 2 $?
check "it names the snapshot's cluster" grep -q "snapshot holds cluster 'hp-demo', not 'other-cluster'" "$e2e_tmp/other.err"
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --cluster hp-demo --quiet
expect_status "--snapshot with its own cluster's name: replayed" 0 $?
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --cluster "$FIXTURE_CLUSTER_ARN" --quiet
expect_status "--snapshot with its own cluster's ARN: replayed" 0 $?
AWS_REGION=eu-central-1 AWS_DEFAULT_REGION=eu-central-1 "$HPNODE" triage --cluster "$FIXTURE_CLUSTER_ARN" \
	--no-probe --no-kube --no-color >"$e2e_tmp/arn.txt" 2>"$e2e_tmp/arn.err"
expect_status "a cluster ARN without --region: its region is used over AWS_REGION (exit 0)" 0 $?
check "the report's region is the ARN's" grep -q "^Cluster: hp-demo  |  ARN: .*  |  Region: us-west-2  |" "$e2e_tmp/arn.txt"

# 2. --node narrows: that node's findings and the cluster's about it; never gates on others.
node=i-fddbeae4366b25bbc   # gpu-p5, Running; its own worst finding is P1 (p5-remap has a P0 storage fault)
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --fail-on P0 --quiet
expect_status "the whole demo cluster fails --fail-on P0 (other nodes' P0 findings)" 3 $?
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --node "$node" --no-kube --no-color --fail-on P0 \
	--json-file "$e2e_tmp/node.json" >"$e2e_tmp/node.txt" 2>"$e2e_tmp/node.err"
expect_status "--node $node --fail-on P0: other nodes' P0 findings do not gate it (exit 0)" 0 $?
check "the header names the node and its group" grep -q "^Node: $node (group gpu-p5) — its findings and the cluster's that bear on it; [1-9][0-9]* about other nodes or groups left out$" "$e2e_tmp/node.txt"
check "JSON: no finding of another node, none about another group; run.node names it" python3 - "$e2e_tmp/node.json" "$node" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
node = sys.argv[2]
if d["run"]["node"] != {"id": node, "group": "gpu-p5", "left_out": d["run"]["node"]["left_out"]} or d["run"]["node"]["left_out"] < 1:
    print("run.node", d["run"]["node"]); sys.exit(1)
checks = set()
for f in d["findings"]:
    checks.add(f["check"])
    if f["nodes"] and node not in f["nodes"]:
        print("another node's finding:", f["message"]); sys.exit(1)
    for g in re.findall(r"group '([^']+)'", f["message"]):
        if g != "gpu-p5":
            print("another group's finding:", f["message"]); sys.exit(1)
# What bears on it stays: its own findings, the cluster status, the security groups and subnets.
for want in ("nodes.target", "cluster.status", "network.efa-sg", "network.subnet-ips"):
    if want not in checks:
        print("missing", want, sorted(checks)); sys.exit(1)
if not any(f["check"] == "node.gpu-remap" or (f["nodes"] == [node] and f["priority"]) for f in d["findings"]):
    print("the node's own issue is gone"); sys.exit(1)
PY
check "the full report of the same cluster names those other nodes" grep -q "i-4a589f7dd29bc94c5" "$e2e_tmp/demo.txt"
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --node "$node" >/dev/null 2>&1
expect_status "--node on a replay is refused (the snapshot decides the scope)" 2 $?

# 3. Not checked is never informational: on the healthy cluster (no P1 of its
# own), EC2 answers ExpiredToken to every call.
fixture_stop
fixture_start "$ROOT/tests/fixtures/healthy.yaml" || { not_ok "healthy fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube --fail-on P1 --quiet
expect_status "the healthy cluster passes --fail-on P1" 0 $?
UPSTREAM=$AWS_ENDPOINT_URL
python3 "$ROOT/tests/e2e/faultproxy.py" --upstream "$UPSTREAM" --ready-file "$e2e_tmp/px.url" \
	--record "$e2e_tmp/px.log" --max-seconds 120 --fault "expired@ec2:*" 2>"$e2e_tmp/px.err" &
PX_PID=$!
trap 'kill "$PX_PID" 2>/dev/null; fixture_stop; rm -rf "$e2e_tmp"' EXIT
n=0
while [ ! -s "$e2e_tmp/px.url" ] && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
AWS_ENDPOINT_URL=$(cat "$e2e_tmp/px.url") "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube \
	--no-color --json-file "$e2e_tmp/exp.json" --save-snapshot "$e2e_tmp/exp.snap" >"$e2e_tmp/exp.txt" 2>"$e2e_tmp/exp.err"
expect_status "EC2 on an expired token: the triage completes (exit 0 without --fail-on)" 0 $?
check "EC2 on an expired token: WARN P1 'Could not run ec2:…' pointing to § K.2" findings "$e2e_tmp/exp.json" \
	">=1:check=api.vpc,tag=WARN,priority=P1,section=K.2,message~Could not run ec2:" "0:check=api.vpc,priority=P2"
check "the summary lists it under Not checked, with its pointer" sh -c \
	'sed -n "/^  Not checked (/,/^$/p" "$1" | grep -q "^    - Could not run ec2:.*§ K.2 (AWS Credentials)"' _ "$e2e_tmp/exp.txt"
check "JSON summary counts what was not checked" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
sys.exit(0 if s["not_checked"] >= 1 and s["P1"] >= 1 else 1)' "$e2e_tmp/exp.json"
kill "$PX_PID" 2>/dev/null
wait "$PX_PID" 2>/dev/null
"$HPNODE" triage --snapshot "$e2e_tmp/exp.snap" --fail-on P1 --quiet
expect_status "--fail-on P1 fails the run whose EC2 checks never ran (exit 3)" 3 $?
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --fail-on P0 --quiet
expect_status "--fail-on P0 on the demo cluster (P0 findings): exit 3" 3 $?
fixture_stop

# 8. Habits: shared options before the command, -o, --fail-on p1, --color.
"$HPNODE" --snapshot "$e2e_tmp/demo.snap" -o json triage >"$e2e_tmp/first.json" 2>"$e2e_tmp/first.err"
expect_status "hpnode --snapshot F -o json triage: options before the command" 0 $?
check "... and -o json gave JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$e2e_tmp/first.json"
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --fail-on p1 --quiet
expect_status "--fail-on p1 as P1 (exit 3 on the demo cluster)" 3 $?
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --color=always >"$e2e_tmp/always.txt"
check "--color=always colours a copy that is not a terminal" grep -q "$(printf '\033')\[" "$e2e_tmp/always.txt"
NO_COLOR=1 "$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --color always >"$e2e_tmp/always2.txt"
check "--color=always wins over NO_COLOR" grep -q "$(printf '\033')\[" "$e2e_tmp/always2.txt"
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --color=never >"$e2e_tmp/never.txt"
check "--color=never: no escape" sh -c '! grep -q "$(printf "\033")" "$1"' _ "$e2e_tmp/never.txt"
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --color=sometimes >/dev/null 2>&1
expect_status "--color=sometimes: usage (exit 2)" 2 $?
"$HPNODE" triag --cluster c >/dev/null 2>"$e2e_tmp/typo.err"
check "a mistyped command: did you mean" grep -q "did you mean 'triage'" "$e2e_tmp/typo.err"

# 6. A compact view: --summary (header and summary), --only FAIL,WARN; --fail-on sees everything.
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --no-color --summary --json-file "$e2e_tmp/sum.json" >"$e2e_tmp/sum.txt"
check "--summary: no group block, the summary is there" sh -c '! grep -q "^  1\. Cluster Identity" "$1" && grep -q "^  9\. Triage Summary" "$1" && grep -q "^  Issues found (" "$1"' _ "$e2e_tmp/sum.txt"
check "--summary: shorter than the full report by far" sh -c '[ $(wc -l <"$1") -lt $(($(wc -l <"$2") / 3)) ]' _ "$e2e_tmp/sum.txt" "$e2e_tmp/demo.txt"
check "--summary: the files keep the whole report" python3 -c '
import json, sys
sys.exit(0 if any(f["tag"] == "PASS" for f in json.load(open(sys.argv[1]))["findings"]) else 1)' "$e2e_tmp/sum.json"
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --no-color --only fail,WARN >"$e2e_tmp/only.txt"
check "--only fail,WARN: no PASS or INFO line, FAIL and WARN lines kept" sh -c '! grep -q "^  \[PASS\]\|^  \[INFO\]" "$1" && grep -q "^  \[FAIL\]" "$1" && grep -q "^  \[WARN\]" "$1"' _ "$e2e_tmp/only.txt"
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --only PASS --fail-on P0 --quiet
expect_status "--only PASS --fail-on P0: the hidden P0 findings still gate (exit 3)" 3 $?
"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --only FAIL,NOPE >/dev/null 2>&1
expect_status "--only with an unknown tag: usage (exit 2)" 2 $?

# 10. `hpnode node` with AWS_EC2_METADATA_DISABLED=true sends nothing to IMDS: neither its
# own lookup nor the probe's curl (a stand-in on PATH records every call; the binary's own
# lookup is sent to a closed loopback port, so nothing leaves this machine either way).
mkdir -p "$e2e_tmp/bin"
cat >"$e2e_tmp/bin/curl" <<EOF2
#!/bin/sh
echo "\$*" >>"$e2e_tmp/curl.log"
exit 7
EOF2
chmod +x "$e2e_tmp/bin/curl"
PATH=$e2e_tmp/bin:$PATH AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:9/ env -u AWS_EC2_METADATA_DISABLED \
	"$HPNODE" node --timeout 60 --output json >"$e2e_tmp/node-on.json" 2>&1
check "without AWS_EC2_METADATA_DISABLED the probe asks IMDS (the stand-in saw it)" grep -q "169.254.169.254" "$e2e_tmp/curl.log"
rm -f "$e2e_tmp/curl.log"
PATH=$e2e_tmp/bin:$PATH AWS_EC2_METADATA_DISABLED=true AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:9/ \
	"$HPNODE" node --timeout 60 --output json >"$e2e_tmp/node-off.json" 2>&1
check "AWS_EC2_METADATA_DISABLED=true: not one IMDS request from this machine" test ! -e "$e2e_tmp/curl.log"
e2e_done
