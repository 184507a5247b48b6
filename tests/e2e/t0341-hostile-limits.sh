#!/bin/sh
# Hostile limits on the demo fixture: a low open-file limit is raised when
# the hard limit allows, the SSM sessions at once are lowered to fit the
# descriptors there are (said in the header and with --debug), and running
# out of descriptors is a local error (exit 1, naming the limit), never a
# node "unreachable" or kubectl "not installed".
T=t0341-hostile-limits
. "$(dirname "$0")/e2e-lib.sh"

fixture_start "$ROOT/tests/fixtures/demo.yaml" || { not_ok "demo fixture starts" "see messages above"; 
# A reader that went away: one behaviour in every run (SIGPIPE ignored: exit 1, the reason said).
got=$(python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run([sys.argv[1], "explain", "A"], stdout=w, stderr=subprocess.PIPE)
sys.stderr.buffer.write(p.stderr)
print(p.returncode)' "$HPNODE" 2>"$e2e_tmp/pipe.err")
expect_status "stdout closed before the first write: exit 1, not killed by SIGPIPE" 1 "$got"
check "closed stdout: the reason is said" contains "$e2e_tmp/pipe.err" "cannot write output: Broken pipe"
e2e_done; }
tri() { "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --region us-west-2 "$@"; }
# no_false_faults FILE: none of what a lack of descriptors used to be reported as.
no_false_faults() {
	lacks "$1" "Cannot reach node" && lacks "$1" "kubectl is not installed" &&
		lacks "$1" "cannot run 'kubectl'"
}

hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -ge 1024 ]; then
	got=$( (ulimit -Sn 24 && tri >"$e2e_tmp/soft.out" 2>"$e2e_tmp/soft.err"); echo $?)
	expect_status "soft limit 24 under a high hard limit: triage completes" 0 "$got"
	check "soft limit 24: the limit was raised, no false node or kubectl fault" \
		no_false_faults "$e2e_tmp/soft.out"
	check "soft limit 24: kubectl was used" contains "$e2e_tmp/soft.out" \
		"kubectl talks to this cluster's EKS API server"
else
	ok "soft limit 24: skipped (hard limit $hard)"
fi

got=$( (ulimit -n 64 && tri --concurrency 64 --debug --output json --save-snapshot \
	"$e2e_tmp/64.snap" >"$e2e_tmp/64.out" 2>"$e2e_tmp/64.err"); echo $?)
expect_status "hard limit 64 with --concurrency 64: triage completes" 0 "$got"
check "hard limit 64: --debug says the sessions were lowered" contains "$e2e_tmp/64.err" \
	"SSM sessions at once lowered from 64 to 4: the open-file limit is 64"
check "hard limit 64: every Running node was probed" sh -c \
	'python3 -c "import json,sys; m=json.load(open(sys.argv[1]))[\"probes_meta\"]; sys.exit(not (m[\"probed\"] == 6 and m[\"unreachable\"] == 0 and m[\"concurrency_used\"] == 4))" "$1"' _ "$e2e_tmp/64.snap"
check "hard limit 64: no false node or kubectl fault" no_false_faults "$e2e_tmp/64.out"
"$HPNODE" triage --snapshot "$e2e_tmp/64.snap" >"$e2e_tmp/64.text" 2>&1
check "hard limit 64: the header says the sessions were lowered" contains "$e2e_tmp/64.text" \
	"SSM sessions at once: 4, lowered from 64 to fit the open-file limit (64;"

got=$( (ulimit -n 24 && tri --save-snapshot "$e2e_tmp/24.snap" >"$e2e_tmp/24.out" 2>"$e2e_tmp/24.err"); echo $?)
expect_status "hard limit 24: out of descriptors exits 1" 1 "$got"
check "hard limit 24: the error names the limit" contains "$e2e_tmp/24.err" \
	"ran out of file descriptors (EMFILE: too many open files; the open-file limit is 24)"
check "hard limit 24: no report with false faults" no_false_faults "$e2e_tmp/24.out"
check "hard limit 24: no snapshot saved" test ! -e "$e2e_tmp/24.snap"

# A reader that went away: one behaviour in every run (SIGPIPE ignored: exit 1, the reason said).
got=$(python3 -c '
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run([sys.argv[1], "explain", "A"], stdout=w, stderr=subprocess.PIPE)
sys.stderr.buffer.write(p.stderr)
print(p.returncode)' "$HPNODE" 2>"$e2e_tmp/pipe.err")
expect_status "stdout closed before the first write: exit 1, not killed by SIGPIPE" 1 "$got"
check "closed stdout: the reason is said" contains "$e2e_tmp/pipe.err" "cannot write output: Broken pipe"
e2e_done
