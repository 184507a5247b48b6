#!/bin/sh
# Progress on a terminal: with standard error a terminal (a pseudo-terminal
# from script(1)), each phase that lasts over a second has a line redrawn in
# place naming the phase, what of it is done and its elapsed time (AWS API
# reads with the nodes listed of the groups' CurrentCount, Kubernetes reads
# done of all, the SSM sweep); with standard error not a
# terminal, not one byte of it. --debug lines start with the time of day and
# the seconds since the start, and list each kubectl run with its duration.
# The first FAIL of the sweep is printed when it is found (its own line on
# the terminal, a debug line), and the report holds the same FAIL.
# The fixture holds each request 400 ms so the phases last long enough.
T=t0349-progress
. "$(dirname "$0")/e2e-lib.sh"

fixture_start "$ROOT/tests/fixtures/demo.yaml" --latency-ms 400 ||
	{ not_ok "slow demo fixture starts" "see messages above"; e2e_done; }

if command -v script >/dev/null 2>&1; then
	script -qec "'$HPNODE' triage --cluster '$FIXTURE_CLUSTER' --no-color --ssm-rate 50 \
		--output-file '$e2e_tmp/tty.txt'" "$e2e_tmp/tty.log" >/dev/null
	expect_status "triage on a terminal" 0 $?
	tr '\r' '\n' <"$e2e_tmp/tty.log" >"$e2e_tmp/tty.lines"
	check "API phase: a progress line with the requests and the elapsed time" \
		grep -qE "^AWS API reads: [0-9]+ requests, [0-9]+\.[0-9] s" "$e2e_tmp/tty.lines"
	# The demo's groups hold 8 nodes (CurrentCount); a request takes 400 ms
	# after the list, so the line is drawn at least once with its count.
	check "API phase: the nodes listed against the groups' CurrentCount" \
		grep -qE "^AWS API reads: [0-9]+ requests, [0-9]+\.[0-9] s, nodes [0-8]/8 listed" \
		"$e2e_tmp/tty.lines"
	check "API phase: never more nodes than listed pages hold, never a count over the total" \
		sh -c '! grep -E "nodes [0-9]+/[0-9]+ listed" "$1" | grep -vqE "nodes [0-8]/8 listed"' \
		_ "$e2e_tmp/tty.lines"
	check "kubectl phase: the reads done of all, the one under way and the elapsed time" \
		grep -qE "^Kubernetes reads \(kubectl\): [0-7]/8 reads done \(now [A-Za-z -]+\), [0-9]+\.[0-9] s" \
		"$e2e_tmp/tty.lines"
	check "sweep: done/total and the elapsed time" \
		grep -qE "^SSM probes: [0-9]+/6 done, [0-9]+ unreachable, [0-9]+ not probed, [0-9]+\.[0-9] s" \
		"$e2e_tmp/tty.lines"
	check "sweep: the first FAIL printed on its own line, as the report has it" sh -c \
		'l=$(grep -m1 "^First FAIL, found during the sweep (the report has them all): " "$1") &&
		 m=${l#*: } && m=${m#*: } && grep -qF "$m" "$2"' _ "$e2e_tmp/tty.lines" "$e2e_tmp/tty.txt"
	check "the progress lines are plain text (no escape sequence)" \
		sh -c '! grep -q "$(printf "\033")" "$1"' _ "$e2e_tmp/tty.log"
	check "the report file has no progress line" sh -c '! grep -qE "(SSM probes: [0-9]+/[0-9]+ done|AWS API reads: [0-9]+ requests|nodes [0-9]+/[0-9]+ listed|Kubernetes reads \(kubectl\): [0-9])" "$1"' _ "$e2e_tmp/tty.txt"
else
	ok "script(1) not installed: the terminal checks are skipped"
fi

"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-color --ssm-rate 50 >"$e2e_tmp/plain.txt" 2>"$e2e_tmp/plain.err"
expect_status "triage with standard error not a terminal" 0 $?
check "not a terminal: no progress line at all" test ! -s "$e2e_tmp/plain.err"

"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-color --ssm-rate 50 --debug \
	--save-snapshot "$e2e_tmp/debug.snap" >/dev/null 2>"$e2e_tmp/debug.err"
check "--debug: every line starts with the time of day and the seconds since the start" sh -c \
	'! grep -vE "^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} \+[0-9]+\.[0-9]{3}s hpnode: debug: " "$1"' _ "$e2e_tmp/debug.err"
check "--debug: each kubectl run with its outcome and duration" \
	grep -qE "hpnode: debug: kubectl get nodes -> ok \(exit 0, [0-9]+ ms\)$" "$e2e_tmp/debug.err"
"$HPNODE" triage --snapshot "$e2e_tmp/debug.snap" --output json >"$e2e_tmp/debug.json" 2>/dev/null
check "--debug: the first FAIL of the sweep, a FAIL of the report" python3 - "$e2e_tmp/debug.err" "$e2e_tmp/debug.json" <<'PY'
import json, re, sys
m = [re.search(r"debug: first FAIL, found during the sweep: ([a-z0-9.-]+): (.*)$", l) for l in open(sys.argv[1])]
m = [x for x in m if x]
if len(m) != 1:
    sys.exit("%d first-FAIL lines" % len(m))
check, msg = m[0].groups()
fs = [f for f in json.load(open(sys.argv[2]))["findings"] if f["check"] == check and f["tag"] == "FAIL"]
if not any(msg in f["message"] or msg in " ".join(f.get("evidence", [])) for f in fs):
    sys.exit("not in the report: %s: %s (%s)" % (check, msg, [f["message"] for f in fs]))
PY
check "--debug: the AWS calls still there" grep -q "hpnode: debug: sagemaker:DescribeCluster -> ok" "$e2e_tmp/debug.err"
e2e_done
