#!/bin/sh
# The report as a support artefact: the run header (text, JSON, JUnit), the
# replay marker, output files written atomically, JUnit XML that parses and
# has the common schema's shape, node lists in JSON, unwritable paths
# refused before any AWS call, SIGINT/SIGTERM during the SSM sweep (partial
# report, TerminateSession for every open session, exit 130/143), and the
# short node sample of a PASS over many nodes.
T=t0345-report
. "$(dirname "$0")/e2e-lib.sh"

# py FILE PYTHON: runs PYTHON with `d` (the JSON document) and fail(msg).
py() {
	python3 - "$1" "$2" <<'PY'
import json, re, sys, datetime
d = json.load(open(sys.argv[1]))
def fail(msg):
    print(msg)
    sys.exit(1)
exec(sys.argv[2])
PY
}

fixture_start "$ROOT/tests/fixtures/demo.yaml" || { not_ok "demo fixture starts" "see messages above"; e2e_done; }
od=$e2e_tmp/out
mkdir -p "$od"
before=$(date -u +%s)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-kube --output json --output-file "$od/triage.json" \
	--text-file "$od/triage.txt" --junit-file "$od/triage.xml" --save-snapshot "$od/demo.snap" \
	>"$e2e_tmp/stdout.txt" 2>"$e2e_tmp/stderr.txt"
expect_status "triage with three output files completes" 0 $?
after=$(date -u +%s)

# 1. Header.
txt=$od/triage.txt
check "text header: tool and version" grep -q "^Tool: hpnode [0-9][0-9.]* .*|  Started: 20[0-9-]*T[0-9:]*Z  |  Duration: [0-9.]* s$" "$txt"
check "text header: the command line, as typed" grep -qxF "Command: hpnode triage --cluster $FIXTURE_CLUSTER --no-kube --output json --output-file $od/triage.json --text-file $od/triage.txt --junit-file $od/triage.xml --save-snapshot $od/demo.snap" "$txt"
check "text header: account and caller from sts:GetCallerIdentity" grep -q "^Account: 123456789012  |  Caller: arn:aws:iam::123456789012:user/[a-z-]*  |  Credentials: " "$txt"
check "text header: cluster name and ARN, region, orchestrator" grep -qxF "Cluster: hp-demo  |  ARN: arn:aws:sagemaker:us-west-2:123456789012:cluster/d3m0c1u5t3r1  |  Region: us-west-2  |  Orchestrator: EKS" "$txt"
check "text header: GetCallerIdentity was called (read-only)" grep -q "^sts:GetCallerIdentity$" "$FIXTURE_RECORD"
check "JSON run header: every field, start time within the run" py "$od/triage.json" "
r = d['run']
if d['schema'] != 'hpnode.triage/2': fail(d['schema'])
for k in ('version', 'revision', 'started_at', 'duration_s', 'command_line', 'arguments', 'account',
          'caller_arn', 'credential_source', 'cluster_arn', 'replay', 'interrupted'):
    if k not in r: fail('missing ' + k)
t = datetime.datetime.strptime(r['started_at'], '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=datetime.timezone.utc).timestamp()
if not $before - 1 <= t <= $after: fail('started_at %s outside the run' % r['started_at'])
if not 0 < r['duration_s'] <= $after - $before + 1: fail('duration %s' % r['duration_s'])
if r['account'] != '123456789012' or not r['caller_arn'].startswith('arn:aws:iam::123456789012:'): fail(str(r))
if r['cluster_arn'] != 'arn:aws:sagemaker:us-west-2:123456789012:cluster/d3m0c1u5t3r1': fail(r['cluster_arn'])
if r['arguments'][:3] != ['triage', '--cluster', 'hp-demo'] or not r['command_line'].startswith('hpnode triage --cluster hp-demo --no-kube'): fail(str(r))
if r['replay'] is not None or r['interrupted'] is not None: fail(str(r))
if d['region'] != 'us-west-2' or d['orchestrator'] != 'EKS' or d['cluster'] != 'hp-demo': fail(str(d)[:200])
"
secret=$AWS_SECRET_ACCESS_KEY
if [ -n "$secret" ] && ! grep -rqF -- "$secret" "$od" "$e2e_tmp/stdout.txt" "$e2e_tmp/stderr.txt"; then
	ok "no secret in any output (the secret key is in the environment, never on the command line)"
else
	not_ok "no secret in any output" "secret found or unset"
fi

# Progress lines (a terminal only) are t0349-progress's: there the fixture's
# latency makes each phase long enough to show one.
check "no progress on stderr when it is not a terminal" test ! -s "$e2e_tmp/stderr.txt"

# 2. Output files: the --output format to --output-file, text still on the terminal.
check "terminal shows the text report with --output-file" contains "$e2e_tmp/stdout.txt" "HyperPod Node Triage — READ-ONLY"
sed "s/Duration: .*//" "$e2e_tmp/stdout.txt" >"$e2e_tmp/a.txt"
sed "s/Duration: .*//" "$txt" >"$e2e_tmp/b.txt"
check "terminal report equals the --text-file copy" cmp "$e2e_tmp/a.txt" "$e2e_tmp/b.txt"
check "--output-file holds the --output format (JSON)" py "$od/triage.json" "
if not d['findings']: fail('no findings')"
check "no temporary file left beside the outputs" sh -c '[ "$(ls -A "$1" | sort | tr "\n" " ")" = "demo.snap triage.json triage.txt triage.xml " ]' _ "$od"
# Atomic: a second link to the old file keeps the old content (the new file was renamed in).
echo "old report" >"$od/old.txt"
ln "$od/old.txt" "$od/link.txt"
"$HPNODE" triage --snapshot "$od/demo.snap" --quiet --text-file "$od/old.txt" >"$e2e_tmp/quiet.txt" 2>&1
expect_status "replay with --quiet and a file" 0 $?
check "--quiet: nothing on stdout" test ! -s "$e2e_tmp/quiet.txt"
check "the file is replaced whole (temp file + rename), the old inode keeps the old text" sh -c \
	'grep -qx "old report" "$2" && grep -q "READ-ONLY" "$1" && [ "$(stat -c %i "$1")" != "$(stat -c %i "$2")" ]' _ "$od/old.txt" "$od/link.txt"
want_mode=$(printf '%o' $((0666 & ~$(umask))))
check "written files follow the umask ($want_mode), not mkstemp's 0600" test "$(stat -c %a "$od/old.txt")" = "$want_mode"

# 3. Replay marker.
"$HPNODE" triage --snapshot "$od/demo.snap" --no-color >"$e2e_tmp/replay.txt" 2>&1
collected=$(python3 -c 'import json,sys,datetime; m=json.load(open(sys.argv[1]))["meta"]; print(datetime.datetime.fromtimestamp(m["collected_at_ms"]/1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), m["tool"])' "$od/demo.snap")
check "replay: 'replayed from FILE, collected at T by hpnode V'" grep -qxF "Replayed from $od/demo.snap, collected at ${collected%% *} by ${collected#* }" "$e2e_tmp/replay.txt"
check "replay: identity and cluster from the snapshot" grep -q "^Account: 123456789012  |  Caller: arn:aws:iam::" "$e2e_tmp/replay.txt"
"$HPNODE" triage --snapshot "$od/demo.snap" --output json >"$e2e_tmp/replay.json" 2>&1
check "replay in JSON: run.replay" py "$e2e_tmp/replay.json" "
rp = d['run']['replay']
if rp['file'] != '$od/demo.snap' or rp['collected_at'] != '${collected%% *}' or rp['collected_by'] != '${collected#* }': fail(str(rp))"
"$HPNODE" triage --snapshot "$od/demo.snap" --output junit >"$e2e_tmp/replay.xml" 2>&1
# --snapshot -: the same report from a pipe, named <stdin>; a terminal, an empty pipe refused.
cat "$od/demo.snap" | "$HPNODE" triage --snapshot - --no-color >"$e2e_tmp/stdin.txt" 2>&1
expect_status "--snapshot - from a pipe: the snapshot's exit status" 0 $?
check "--snapshot -: the report of the file, replayed from <stdin>" sh -c \
	'sed "s|^Replayed from .*, collected|Replayed from <stdin>, collected|" "$1" | grep -v "^Tool: \|^Command: " >"$1.want"; grep -v "^Tool: \|^Command: " "$2" | diff "$1.want" -' \
	sh "$e2e_tmp/replay.txt" "$e2e_tmp/stdin.txt"
"$HPNODE" triage --snapshot - </dev/null >"$e2e_tmp/stdin-empty.txt" 2>&1
expect_status "--snapshot - with nothing piped in: exit 1" 1 $?
check "--snapshot - with nothing piped in: named <stdin>" grep -q "snapshot '<stdin>' is not valid JSON" "$e2e_tmp/stdin-empty.txt"
check "--output junit on stdout: the same JUnit document" python3 "$ROOT/tests/e2e/junit_check.py" "$e2e_tmp/replay.xml" "$e2e_tmp/replay.json"

# 4. JUnit: parses, has the schema's shape, one testcase per check and per node.
check "JUnit parses and has the common JUnit schema's shape, findings mapped" \
	python3 "$ROOT/tests/e2e/junit_check.py" "$od/triage.xml" "$od/triage.json"
check "JUnit: a FAIL is a <failure> with priority and § pointer" python3 - "$od/triage.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
f = [c.find("failure") for c in r.iter("testcase") if c.find("failure") is not None]
ok = [x for x in f if x.get("message").startswith("[P0] EFA health check failure on i-") and "§ A (EFA / Security Group)" in x.get("message") and x.get("type") == "FAIL P0"]
sys.exit(0 if ok else 1)
PY
check "JUnit: a WARN P1 is a <failure> (type WARN P1), a WARN P2 passes with its text" python3 - "$od/triage.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
f = [c.find("failure") for c in r.iter("testcase") if c.find("failure") is not None]
p2 = [c for c in r.iter("testcase") if (c.findtext("system-out") or "").startswith("[WARN] ")]
ok = any(x.get("type") == "WARN P1" and x.get("message").startswith("[P1] ") and "§" in x.get("message") for x in f)
sys.exit(0 if ok and p2 and not any(c.find("skipped") is not None for c in p2) else 1)
PY
check "JUnit: per-node checks have one testcase per instance id" python3 - "$od/triage.xml" <<'PY'
import re, sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
names = [c.get("name") for c in r.iter("testcase")]
per_node = [n for n in names if re.match(r"^node\.disk-root/i-[0-9a-f]{17}$", n)]
sys.exit(0 if len(per_node) >= 5 else 1)
PY

# 5. JSON node lists.
check "JSON: a finding on N nodes carries the N ids in 'nodes'" py "$od/triage.json" "
multi = [f for f in d['findings'] if re.search(r' on (\d+) nodes', f['message'])]
if not multi: fail('no multi-node finding')
for f in multi:
    n = int(re.search(r' on (\d+) nodes', f['message']).group(1))
    if len(f['nodes']) != n or len(set(f['nodes'])) != n or not all(re.match(r'^i-[0-9a-f]+$', i) for i in f['nodes']): fail(str(f)[:300])
for f in d['findings']:
    if f['node'] and f['nodes'] != [f['node']]: fail('single node: ' + str(f)[:200])
    if not f['node'] and not isinstance(f['nodes'], list): fail(str(f)[:200])"

# 6. Unwritable paths: refused before any AWS call, exit 2.
: >"$FIXTURE_RECORD"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --save-snapshot "$e2e_tmp/no/such/dir/s.json" >"$e2e_tmp/unw.txt" 2>&1
expect_status "unwritable --save-snapshot: exit 2" 2 $?
check "unwritable path: a clear message" grep -q "cannot write '$e2e_tmp/no/such/dir/s.json': No such file or directory; nothing was collected" "$e2e_tmp/unw.txt"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --junit-file "$e2e_tmp" >"$e2e_tmp/unw2.txt" 2>&1
expect_status "a directory as --junit-file: exit 2" 2 $?
check "unwritable path: no AWS call was made" test ! -s "$FIXTURE_RECORD"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --json-file "$od/a" --output-file "$od/a" >/dev/null 2>&1
expect_status "one path for two outputs: exit 2" 2 $?
fixture_stop

# 7. SIGINT in the middle of the sweep: sessions take 6 s, 4 at a time.
fixture_start "$ROOT/tests/fixtures/ssm.yaml" --probe-latency 6 ||
	{ not_ok "slow ssm fixture starts" "see messages above"; e2e_done; }
interrupt() { # SIGNAL NAME [OPTION]: runs a sweep, signals it after the first sessions opened
	"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --concurrency 4 --ssm-rate 50 --probe-timeout 60 ${3:-} \
		--save-snapshot "$e2e_tmp/$2.snap" --json-file "$e2e_tmp/$2.json" --no-color \
		>"$e2e_tmp/$2.txt" 2>"$e2e_tmp/$2.err" &
	pid=$!
	i=0
	while [ "$(grep -c '^start ' "$FIXTURE_SSM_RECORD" 2>/dev/null)" -lt 4 ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.5
	t0=$(date +%s)
	kill -"$1" $pid
	wait $pid
	rc=$?
	took=$(($(date +%s) - t0))
}
: >"$FIXTURE_SSM_RECORD"
interrupt INT int
expect_status "SIGINT mid-sweep: exit 130" 130 $rc
[ "$took" -le 5 ] && ok "SIGINT: the run ended within a few seconds ($took s)" || not_ok "SIGINT: prompt end" "$took s"
check "SIGINT: partial report marked 'interrupted: N of M nodes probed'" grep -q "^PARTIAL REPORT — interrupted: 0 of 14 nodes probed (SIGINT)" "$e2e_tmp/int.txt"
check "SIGINT: the report is whole (summary and footer)" grep -q "^Cluster: hp-ssm  |  Region: us-west-2  |  Orchestrator: Slurm$" "$e2e_tmp/int.txt"
check "SIGINT: a TerminateSession for every open session, in the fixture's record" python3 - "$FIXTURE_SSM_RECORD" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1])]
opened = {l[1] for l in lines if l[0] == "open"}
done = {l[1] for l in lines if l[0] == "end" and "done" in " ".join(l[3:])}
terminated = {l[1] for l in lines if l[0] == "terminate"}
still_open = opened - done
if len(opened) < 4 or still_open - terminated:
    print("opened %s, finished %s, terminated %s" % (sorted(opened), sorted(done), sorted(terminated)))
    sys.exit(1)
PY
starts=$(grep -c '^start ' "$FIXTURE_SSM_RECORD")
[ "$starts" -le 5 ] && ok "SIGINT: no new session after the signal ($starts started)" || not_ok "SIGINT: no new sessions" "$starts StartSession"
check "SIGINT: the snapshot was saved, marked interrupted" py "$e2e_tmp/int.snap" "
m = d['probes_meta']
if m.get('interrupted') != 2 or m.get('to_probe') != 14: fail(str(m))
if any(e['state'] == 'unreachable' for e in d['probes'].values()): fail('an interrupted node reads unreachable')"
check "SIGINT: JSON run.interrupted" py "$e2e_tmp/int.json" "
if d['run']['interrupted'] != {'signal': 'SIGINT', 'probed': 0, 'to_probe': 14, 'phase': 'probes', 'unfinished': ['probes']}: fail(str(d['run']['interrupted']))"
: >"$FIXTURE_SSM_RECORD"
interrupt TERM term
expect_status "SIGTERM mid-sweep: exit 143" 143 $rc
check "SIGTERM: partial report" grep -q "interrupted: 0 of 14 nodes probed (SIGTERM)" "$e2e_tmp/term.txt"
# The same through session-manager-plugin (a fake one that speaks to the fixture).
mkdir -p "$e2e_tmp/bin"
fake_tool "$ROOT/tests/e2e/fake-session-manager-plugin.py" "$e2e_tmp/bin/session-manager-plugin"
: >"$FIXTURE_SSM_RECORD"
PATH="$e2e_tmp/bin:$PATH" FAKE_PLUGIN_LOG=$e2e_tmp/plugin.log interrupt INT plugin "--ssm-transport plugin"
expect_status "SIGINT mid-sweep with the plugin transport: exit 130" 130 $rc
[ "$took" -le 8 ] && ok "plugin transport: the run ended within a few seconds ($took s)" || not_ok "plugin transport: prompt end" "$took s"
check "plugin transport: a TerminateSession for every session the signal cut short" python3 - "$FIXTURE_SSM_RECORD" "$e2e_tmp/plugin.snap" <<'PY'
import json, sys
lines = [l.split() for l in open(sys.argv[1])]
terminated = {l[2] for l in lines if l[0] == "terminate"}
probes = json.load(open(sys.argv[2]))["probes"]
cut = {i for i, e in probes.items() if "interrupted during its session" in e["reason"]}
if not cut or cut - terminated or any(probes[i]["transport"] != "plugin" for i in cut):
    print("cut short %s, terminated %s" % (sorted(cut), sorted(terminated)))
    sys.exit(1)
PY
# A second Ctrl-C exits at once, without a report.
: >"$FIXTURE_SSM_RECORD"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --concurrency 4 --ssm-rate 50 --probe-timeout 60 >"$e2e_tmp/twice.txt" 2>&1 &
pid=$!
i=0
while [ "$(grep -c '^open ' "$FIXTURE_SSM_RECORD" 2>/dev/null)" -lt 4 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -INT $pid
kill -INT $pid
wait $pid
expect_status "a second SIGINT: exit 130 at once" 130 $?
fixture_stop

# 8. Many nodes passing alike: the text shows a count and a sample, JSON every id.
variant "$ROOT/tests/fixtures/healthy.yaml" "$e2e_tmp/many.yaml" '
for n in d["nodes"]:
    if n["group"] == "system": n["count"] = 14'
fixture_start "$e2e_tmp/many.yaml" || { not_ok "many-node fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-kube --ssm-rate 50 --no-color \
	--json-file "$e2e_tmp/many.json" >"$e2e_tmp/many.txt" 2>&1
expect_status "triage of the bigger healthy cluster" 0 $?
check "PASS over many nodes: count and a sample of 5 ids in text" \
	grep -qE "^    [0-9]+ nodes, e\.g\.( i-[0-9a-f]+){5} … \(every id: --json-file or --junit-file\)$" "$e2e_tmp/many.txt"
check "PASS over many nodes: no full id list in text" sh -c '! grep -qE "^    nodes 1-[0-9]+ of (1[1-9]|[2-9][0-9]):" "$1"' _ "$e2e_tmp/many.txt"
check "PASS over many nodes: every id in JSON" py "$e2e_tmp/many.json" "
big = [f for f in d['findings'] if f['tag'] == 'PASS' and len(f['nodes']) > 10]
if not big or any(len(f['nodes']) < 18 for f in big): fail(str([len(f['nodes']) for f in big]))"
e2e_done
