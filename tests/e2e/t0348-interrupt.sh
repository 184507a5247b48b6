#!/bin/sh
# SIGINT/SIGTERM before the SSM sweep: during the AWS API reads and during
# kubectl. Each prints the partial report (header and summary marked
# PARTIAL, the unfinished phases named and listed as not checked, no
# "no critical issues" line), saves the snapshot that was asked for (it
# replays as the same partial report), ends kubectl with its process group
# and exits 130 (SIGINT) or 143 (SIGTERM). The fixture holds each request
# 500 ms so each phase lasts long enough to be interrupted; the signal is
# sent once the fixture has recorded the phase's first request.
T=t0348-interrupt
. "$(dirname "$0")/e2e-lib.sh"

py() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def fail(msg):
    print(msg)
    sys.exit(1)
exec(sys.argv[2])
PY
}

# interrupt SIGNAL NAME RECORD: a triage signalled once RECORD has a line.
interrupt() {
	: >"$3"
	"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-color --ssm-rate 50 \
		--save-snapshot "$e2e_tmp/$2.snap" --json-file "$e2e_tmp/$2.json" \
		>"$e2e_tmp/$2.txt" 2>"$e2e_tmp/$2.err" &
	pid=$!
	i=0
	while [ ! -s "$3" ] && [ $i -lt 600 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -"$1" $pid
	wait $pid
	rc=$?
}

# partial NAME PHASE-TEXT SIGNAL: what every partial report says.
partial() {
	check "$1: header marked PARTIAL, naming the phase" \
		grep -qF "PARTIAL REPORT — interrupted during $2 ($3)" "$e2e_tmp/$1.txt"
	check "$1: header names what did not finish" \
		grep -q "^Not finished: .* — what they did not read is not checked$" "$e2e_tmp/$1.txt"
	check "$1: the summary says PARTIAL" \
		grep -qF "  PARTIAL REPORT: the run was interrupted ($3); not finished: $2" "$e2e_tmp/$1.txt"
	check "$1: the unfinished phase is listed as not checked" \
		grep -qF "    - $2: not finished (interrupted by $3)" "$e2e_tmp/$1.txt"
	check "$1: nothing reads as healthy" \
		sh -c '! grep -q "No critical issues detected" "$1"' _ "$e2e_tmp/$1.txt"
	check "$1: the report is whole (footer)" grep -q "^Cluster: hp-demo  |  Region: " "$e2e_tmp/$1.txt"
	check "$1: the snapshot was saved" test -s "$e2e_tmp/$1.snap"
	"$HPNODE" triage --snapshot "$e2e_tmp/$1.snap" --no-color >"$e2e_tmp/$1.replay" 2>&1
	expect_status "$1: the snapshot replays" 0 $?
	# Only the run's own lines differ: its duration, command line and the replay marker.
	for f in txt replay; do
		grep -v -e '^Tool: ' -e '^Command: ' -e '^Replayed from ' "$e2e_tmp/$1.$f" >"$e2e_tmp/$1.$f.body"
	done
	check "$1: the replay is the same partial report" cmp "$e2e_tmp/$1.txt.body" "$e2e_tmp/$1.replay.body"
}

fixture_start "$ROOT/tests/fixtures/demo.yaml" --latency-ms 500 ||
	{ not_ok "slow demo fixture starts" "see messages above"; e2e_done; }

# 1. SIGINT during the API phase (the first request has been answered).
interrupt INT api "$FIXTURE_RECORD"
expect_status "SIGINT in the API phase: exit 130" 130 $rc
partial api "the AWS API reads" SIGINT
check "api: the handler says what it does" grep -qF "hpnode: interrupted; stopping what is under way" "$e2e_tmp/api.err"
check "api: JSON run.interrupted names the phase and the unfinished ones" py "$e2e_tmp/api.json" "
it = d['run']['interrupted']
if it['signal'] != 'SIGINT' or it['phase'] != 'api' or it['unfinished'][0] != 'api' or 'probes' not in it['unfinished']: fail(str(it))
if d['summary']['not_checked'] < len(it['unfinished']): fail(str(d['summary']))"
check "api: the snapshot records the interruption" py "$e2e_tmp/api.snap" "
if d['meta']['interrupted']['phase'] != 'api': fail(str(d['meta']))"
check "api: no call cut short reads as a missing permission" sh -c '! grep -q "Interrupted.*K\.1" "$1"' _ "$e2e_tmp/api.txt"

# 2. SIGTERM while kubectl runs (the Kubernetes API has been asked).
interrupt TERM kube "$FIXTURE_KUBE_RECORD"
expect_status "SIGTERM during kubectl: exit 143" 143 $rc
partial kube "the Kubernetes reads (kubectl)" SIGTERM
check "kube: the Kubernetes checks say they were not run" \
	grep -qF "[SKIP] Kubernetes checks not run — the run was interrupted" "$e2e_tmp/kube.txt"
check "kube: the snapshot's kube.skipped is the interruption" py "$e2e_tmp/kube.snap" "
if d['kube']['skipped']['kind'] != 'interrupted': fail(str(d['kube']['skipped']))"
check "kube: no SSM session was started after the signal" sh -c '! grep -q "^start " "$1"' _ "$FIXTURE_SSM_RECORD"
# kubectl ran in its own process group, killed and reaped: the fixture hears no more from it.
n1=$(wc -l <"$FIXTURE_KUBE_RECORD")
sleep 2
n2=$(wc -l <"$FIXTURE_KUBE_RECORD")
[ "$n1" = "$n2" ] && ok "kube: kubectl was stopped with the run ($n1 requests)" ||
	not_ok "kube: kubectl stopped" "$n1 requests at exit, $n2 two seconds later"

# --output-file - puts the --output report alone on standard output (here a replay's JSON).
"$HPNODE" triage --snapshot "$e2e_tmp/api.snap" -o json --output-file - >"$e2e_tmp/dash.json" 2>"$e2e_tmp/dash.err"
expect_status "--output-file -: the replay's report" 0 $?
check "--output-file -: standard output is the JSON report alone" py "$e2e_tmp/dash.json" "
if d['run']['interrupted']['phase'] != 'api': fail(str(d['run']))"
check "--output-file -: no file named '-'" test ! -e ./-

# 3. A kubectl that hangs (and has a child of its own): SIGINT kills its process group.
# (hpnode gives kubectl only an allowlist of the environment: the path is written into the script.)
mkdir -p "$e2e_tmp/bin"
HANG_PIDS=$e2e_tmp/hang.pids
cat >"$e2e_tmp/bin/kubectl" <<SH
#!/bin/sh
sleep 300 &
echo "\$\$ \$!" >"$HANG_PIDS.tmp"
mv "$HANG_PIDS.tmp" "$HANG_PIDS"
wait
SH
chmod +x "$e2e_tmp/bin/kubectl"
PATH="$e2e_tmp/bin:$PATH" interrupt INT hang "$HANG_PIDS"
expect_status "SIGINT while kubectl hangs: exit 130" 130 $rc
partial hang "the Kubernetes reads (kubectl)" SIGINT
# Killed at the signal, not at kubectl's own deadline later (that would read "timeout").
check "hang: kubectl was stopped by the interrupt" py "$e2e_tmp/hang.snap" "
sk = d['kube']['skipped']
if sk['kind'] != 'interrupted' or sk.get('status') != 'interrupted': fail(str(sk))"
check "hang: the hanging kubectl had started" test -s "$HANG_PIDS"
# SIGKILL is delivered, and the orphaned child reaped, a moment after hpnode's exit.
i=0
while :; do
	alive=""
	for p in $(cat "$HANG_PIDS"); do
		[ -d "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null && alive="$alive $p"
	done
	[ -z "$alive" ] || [ $i -ge 50 ] && break
	sleep 0.1
	i=$((i + 1))
done
[ -z "$alive" ] && ok "hang: kubectl and its child were killed with their process group" ||
	not_ok "hang: kubectl's process group killed" "still running:$alive"
for p in $alive; do kill -9 "$p" 2>/dev/null; done
e2e_done
