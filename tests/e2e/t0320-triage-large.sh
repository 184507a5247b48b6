#!/bin/sh
# A cluster of 20,050 nodes: hpnode reads 200 pages of 100 nodes, says the
# cap cut the list, and judges what it read (no SSM probes: 6,700 s at 3/s).
T=t0320-triage-large
. "$(dirname "$0")/e2e-lib.sh"

fixture_start "$ROOT/tests/fixtures/large.yaml" || { not_ok "large fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --output json >"$e2e_tmp/large.json" 2>"$e2e_tmp/large.err"
expect_status "20,050-node triage completes" 0 $?
check "the node-list cap is reported" findings "$e2e_tmp/large.json" \
	"1:check=nodes.status,tag=WARN,priority=P2,message~Node list stopped at 20"
check "totals cover the 20,000 nodes read" findings "$e2e_tmp/large.json" \
	"1:check=nodes.status,tag=INFO,message~Total: 20000"
pages=$(grep -c '^sagemaker:ListClusterNodes$' "$FIXTURE_RECORD")
[ "$pages" = 200 ] && ok "exactly 200 ListClusterNodes pages" || not_ok "exactly 200 ListClusterNodes pages" "$pages pages"
e2e_done
