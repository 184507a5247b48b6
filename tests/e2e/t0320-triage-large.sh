#!/bin/sh
# A cluster of 20,050 nodes, all created at one time (so no creation-time
# window can split them): hpnode lists every node once, with no cap, and
# judges them (no SSM probes: 6,700 s at 3/s).
T=t0320-triage-large
. "$(dirname "$0")/e2e-lib.sh"

fixture_start "$ROOT/tests/fixtures/large.yaml" --stats-file "$e2e_tmp/stats.json" ||
	{ not_ok "large fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --output json --debug >"$e2e_tmp/large.json" 2>"$e2e_tmp/large.err"
expect_status "20,050-node triage completes" 0 $?
check "no cap cuts the list, no group is short" findings "$e2e_tmp/large.json" \
	"0:check=nodes.status,tag=WARN"
check "totals cover all 20,050 nodes" findings "$e2e_tmp/large.json" \
	"1:check=nodes.status,tag=INFO,message~Total: 20050"
pages=$(grep -c '^sagemaker:ListClusterNodes$' "$FIXTURE_RECORD")
[ "$pages" -ge 201 ] && [ "$pages" -le 210 ] && ok "201 to 210 ListClusterNodes pages ($pages)" ||
	not_ok "201 to 210 ListClusterNodes pages" "$pages pages"
# Connections are kept: one per libcurl handle in use (a pool of at most 16),
# not one per request; hpnode's count and the server's agree.
summary=$(grep 'hpnode: debug: API phase: ' "$e2e_tmp/large.err")
requests=$(printf '%s\n' "$summary" | sed -n 's/.*API phase: \([0-9]*\) requests.*/\1/p')
opened=$(printf '%s\n' "$summary" | sed -n 's/.* \([0-9]*\) connections opened.*/\1/p')
if [ -n "$requests" ] && [ -n "$opened" ] && [ "$requests" -ge 200 ] && [ "$opened" -ge 1 ] &&
	[ "$opened" -le 16 ]; then
	ok "connections kept between requests ($requests requests, $opened connections)"
else
	not_ok "connections kept between requests" "debug summary: ${summary:-none}"
fi
check "the server saw as few connections" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
if not 1 <= s["connections"] <= 16 or s["requests"] < int(sys.argv[2]):
    sys.exit("server: %s; hpnode: %s requests" % (s, sys.argv[2]))
' "$e2e_tmp/stats.json" "${requests:-0}"
e2e_done
