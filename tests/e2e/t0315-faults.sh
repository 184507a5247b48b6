#!/bin/sh
# The fault matrix: a fault-injecting proxy (faultproxy.py) between hpnode
# and the fixture spoils chosen calls (throttling, 5xx, cut bodies, invalid
# JSON, empty/XML/HTML 200 replies, a 50 MB body, expired and invalid
# tokens, an endpoint that never answers); DNS failure and a refused
# connection; a hanging kubectl and one printing garbage. Each case checks
# the exit status, the message, that the rest of the report is complete,
# that nothing unread is reported (no PASS, no "does not exist"), and that
# the run ended (a loose bound that only catches hangs).
T=t0315-faults
. "$(dirname "$0")/e2e-lib.sh"

fixture_start "$ROOT/tests/fixtures/demo.yaml" || { not_ok "fixture starts" "see messages above"; e2e_done; }
UPSTREAM=$AWS_ENDPOINT_URL
PX_PID=

px_stop() {
	if [ -n "$PX_PID" ]; then
		kill "$PX_PID" 2>/dev/null
		wait "$PX_PID" 2>/dev/null
		PX_PID=
	fi
}
trap 'px_stop; fixture_stop; rm -rf "$e2e_tmp"' EXIT

# px_start FAULT...: a fresh proxy with these rules; AWS_ENDPOINT_URL points at it.
px_start() {
	px_stop
	rm -f "$e2e_tmp/px.url"
	: >"$e2e_tmp/px.log"
	set -- $(for f in "$@"; do printf -- '--fault %s ' "$f"; done)
	python3 "$ROOT/tests/e2e/faultproxy.py" --upstream "$UPSTREAM" --ready-file "$e2e_tmp/px.url" \
		--record "$e2e_tmp/px.log" --max-seconds 240 "$@" 2>"$e2e_tmp/px.err" &
	PX_PID=$!
	n=0
	while [ ! -s "$e2e_tmp/px.url" ] && [ $n -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	AWS_ENDPOINT_URL=$(cat "$e2e_tmp/px.url")
	export AWS_ENDPOINT_URL
}

# run NAME ARGS...: hpnode triage with ARGS; $NAME.json/.err, $rc, $secs.
run() {
	name=$1
	shift
	t0=$(date +%s)
	"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json "$@" \
		>"$e2e_tmp/$name.json" 2>"$e2e_tmp/$name.err"
	rc=$?
	secs=$(($(date +%s) - t0))
}

# within NAME LIMIT: the run ended within LIMIT seconds (hang detector only).
within() {
	if [ "$secs" -le "$2" ]; then ok "$1: ended ($secs s)"; else not_ok "$1: ended" "$secs s, over $2 s"; fi
}

# clean NAME CHECK-PREFIX...: the report is valid JSON, the untouched areas
# are all there, nothing in the named areas PASSes, and no finding says that
# something does not exist or is missing (the demo has no such finding).
clean() {
	python3 - "$e2e_tmp/$1.json" "$@" <<'PY' && ok "$1: complete report, nothing unread reported" || not_ok "$1: complete report, nothing unread reported" "see above"
import json, sys
doc = json.load(open(sys.argv[1]))
prefixes = tuple(sys.argv[3:])
bad = []
for f in doc["findings"]:
    if f["tag"] == "PASS" and prefixes and f["check"].startswith(prefixes):
        bad.append("PASS from unread data: %s %s" % (f["check"], f["message"]))
    m = f["message"].lower()
    if "does not exist" in m or ("missing" in m and "missing iam permission" not in m) or "not found" in m:
        bad.append("false absence: %s %s" % (f["check"], f["message"]))
checks = {f["check"] for f in doc["findings"]}
for want in ("cluster.identity", "cluster.status"):
    if want not in checks:
        bad.append("missing area: " + want)
if bad:
    print("\n".join(bad)); sys.exit(1)
PY
}

NETCHECKS="network.vpc network.efa-sg network.dns network.routing network.endpoints network.subnet-ips network.eni network.capacity"

# 1. Throttling on every call: the preflight says so, not "credentials".
px_start "throttle"
run throttle-all --no-probe --no-kube
expect_status "throttled everywhere: exit 1" 1 "$rc"
check "throttled everywhere: says STS throttled" contains "$e2e_tmp/throttle-all.err" "AWS STS throttled the credentials check"
check "throttled everywhere: not a credentials diagnosis" lacks "$e2e_tmp/throttle-all.err" "credentials not configured"
within throttle-all 60

# 2. Throttling on every EC2 call: the rest of the report is there, the network checks are silent.
px_start "throttle@ec2:*"
run throttle-ec2 --no-probe --no-kube
expect_status "throttled EC2: triage completes" 0 "$rc"
check "throttled EC2: WARN naming the throttled call" findings "$e2e_tmp/throttle-ec2.json" \
	">=1:tag=WARN,message~ec2:DescribeSubnets was still throttled after retries" \
	"1:check=nodes.status,tag=FAIL" "1:check=cluster.status,tag=PASS" "1:check=logs.group,tag=PASS"
clean throttle-ec2 $NETCHECKS cluster.threads-per-core
within throttle-ec2 90

# 3. 5xx: on STS (a service error, not credentials), and on ListClusterNodes.
px_start "5xx@sts:GetCallerIdentity"
run sts-5xx --no-probe --no-kube
expect_status "STS 500: exit 1" 1 "$rc"
check "STS 500: says service error" contains "$e2e_tmp/sts-5xx.err" "AWS STS service error on the credentials check"
check "STS 500: not a credentials diagnosis" lacks "$e2e_tmp/sts-5xx.err" "credentials not configured"
px_start "5xx@sagemaker:ListClusterNodes"
run nodes-5xx --no-probe --no-kube
expect_status "ListClusterNodes 500: triage completes" 0 "$rc"
check "ListClusterNodes 500: WARN naming it, no node findings" findings "$e2e_tmp/nodes-5xx.json" \
	"1:tag=WARN,message~Could not run sagemaker:ListClusterNodes (InternalFailure" "0:check=nodes.status" \
	">=1:check=network.vpc,tag=PASS"
clean nodes-5xx nodes. ssm.
within nodes-5xx 60

# 4. Truncated bodies (Content-Length promised, half sent).
px_start "truncate@ec2:DescribeSubnets"
run truncated --no-probe --no-kube
expect_status "truncated DescribeSubnets: triage completes" 0 "$rc"
check "truncated DescribeSubnets: WARN naming it" findings "$e2e_tmp/truncated.json" \
	">=1:tag=WARN,message~ec2:DescribeSubnets" "0:check=network.vpc,tag=PASS" "1:check=events.signals,tag=INFO"
# (network.routing may pass: the route tables were read and name the subnet themselves.)
clean truncated network.vpc network.subnet-ips network.capacity
within truncated 60

# 5. Invalid JSON, empty, XML and HTML 200 replies: malformed, never data.
px_start "badjson@sagemaker:ListClusterEvents"
run badjson --no-probe --no-kube
expect_status "invalid JSON: triage completes" 0 "$rc"
check "invalid JSON: WARN naming ListClusterEvents as malformed, no event findings" findings "$e2e_tmp/badjson.json" \
	"1:tag=WARN,message~Could not run sagemaker:ListClusterEvents (MalformedReply" "0:check=events.signals,tag=FAIL" \
	"0:check=events.signals,tag=INFO"
check "invalid JSON: asked twice (one retry)" sh -c '[ "$(grep -c "^sagemaker:ListClusterEvents badjson" "$1")" = 2 ]' _ "$e2e_tmp/px.log"
clean badjson events.

px_start "empty@ec2:DescribeSubnets"
run empty --no-probe --no-kube
expect_status "empty 200: triage completes" 0 "$rc"
check "empty 200: WARN naming DescribeSubnets as malformed" findings "$e2e_tmp/empty.json" \
	">=1:tag=WARN,message~Could not run ec2:DescribeSubnets (MalformedReply" "0:check=network.vpc,tag=PASS"
clean empty network.vpc network.subnet-ips network.capacity

px_start "xml@sagemaker:ListClusterNodes"
run xml --no-probe --no-kube
expect_status "XML 200 for a JSON call: triage completes" 0 "$rc"
check "XML 200 for a JSON call: malformed, no node findings" findings "$e2e_tmp/xml.json" \
	"1:tag=WARN,message~Could not run sagemaker:ListClusterNodes (MalformedReply" "0:check=nodes.status"
clean xml nodes.

px_start "xml@ec2:DescribeSecurityGroups"
run xml-ec2 --no-probe --no-kube
expect_status "foreign XML 200 for DescribeSecurityGroups: triage completes" 0 "$rc"
check "foreign XML 200: no EFA rule finding from it" findings "$e2e_tmp/xml-ec2.json" \
	">=1:tag=WARN,message~ec2:DescribeSecurityGroups (MalformedReply" "0:check=network.efa-sg,tag=FAIL"
clean xml-ec2 network.efa-sg network.vpc

px_start "html@sagemaker:DescribeCluster"
run html --no-probe --no-kube
expect_status "HTML page for DescribeCluster: exit 1, no phantom cluster" 1 "$rc"
check "HTML page for DescribeCluster: says malformed" contains "$e2e_tmp/html.err" "cannot describe cluster '$FIXTURE_CLUSTER': MalformedReply: malformed reply (HTTP 200): reply is text/html"
check "HTML page for DescribeCluster: no report" sh -c '! [ -s "$1" ]' _ "$e2e_tmp/html.json"

px_start "html@sts:GetCallerIdentity"
run sts-html --no-probe --no-kube
expect_status "HTML page for STS: exit 1" 1 "$rc"
check "HTML page for STS: malformed, not credentials" sh -c 'grep -q "malformed reply" "$1" && ! grep -q "credentials not configured" "$1"' _ "$e2e_tmp/sts-html.err"

# 6. A 50 MB body.
px_start "big@logs:FilterLogEvents"
run big --no-probe --no-kube
expect_status "50 MB body: triage completes" 0 "$rc"
check "50 MB body: WARN naming FilterLogEvents, no log verdicts" findings "$e2e_tmp/big.json" \
	">=1:tag=WARN,message~logs:FilterLogEvents" "0:check=logs.lifecycle" "0:check=logs.health-agent"
clean big logs.lifecycle logs.health-agent
within big 120

# 7. Expired and invalid tokens: credentials, exit 4.
px_start "expired"
run expired --no-probe --no-kube
expect_status "expired token: exit 4" 4 "$rc"
check "expired token: the credentials fix" contains "$e2e_tmp/expired.err" "Fix AWS credentials and rerun."
px_start "badtoken"
run badtoken --no-probe --no-kube
expect_status "invalid token: exit 4" 4 "$rc"
check "invalid token: the credentials fix" contains "$e2e_tmp/badtoken.err" "Fix AWS credentials and rerun."
px_stop

# 8. DNS failure and a refused connection.
AWS_ENDPOINT_URL=https://hpnode-no-such-host.invalid
export AWS_ENDPOINT_URL
run dns --no-probe --no-kube --max-runtime 30
expect_status "DNS failure: exit 1" 1 "$rc"
check "DNS failure: cannot reach, not credentials" sh -c 'grep -q "cannot reach AWS STS" "$1" && ! grep -q "credentials not configured" "$1"' _ "$e2e_tmp/dns.err"
within dns 60
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
AWS_ENDPOINT_URL=http://127.0.0.1:$port
run refused --no-probe --no-kube
expect_status "connection refused: exit 1" 1 "$rc"
check "connection refused: cannot reach" contains "$e2e_tmp/refused.err" "cannot reach AWS STS at 'http://127.0.0.1:$port'"
within refused 60

# 9. An endpoint that accepts and never answers, under a short run budget:
#    the run ends at the budget and the report names what was not collected.
#    The other services' reads run beside the EC2 calls, so they are not
#    held up: the logs are read in full while EC2 hangs.
px_start "hang@ec2:*"
run hang --no-probe --no-kube --max-runtime 8
expect_status "silent EC2 endpoint: triage completes" 0 "$rc"
check "silent EC2 endpoint: the timed-out call and the calls never sent are named" findings "$e2e_tmp/hang.json" \
	">=1:tag=WARN,message~(Timeout" ">=1:tag=WARN,message~RunBudgetExceeded: not sent: the run budget (--max-runtime 8 s) was spent" \
	"1:check=nodes.status,tag=FAIL" "1:check=cluster.status,tag=PASS"
check "silent EC2 endpoint: the logs, read beside it, are judged" findings "$e2e_tmp/hang.json" \
	"1:check=logs.group,tag=PASS"
clean hang $NETCHECKS cluster.threads-per-core
within hang 40
px_stop
AWS_ENDPOINT_URL=$UPSTREAM
export AWS_ENDPOINT_URL

# 10. kubectl that hangs (with a grandchild) and kubectl that prints garbage.
mkdir -p "$e2e_tmp/bin-hang" "$e2e_tmp/bin-garbage"
cat >"$e2e_tmp/bin-hang/kubectl" <<EOF
#!/bin/sh
sleep 300 &
echo \$! >>"$e2e_tmp/kubectl-children"
wait
EOF
cat >"$e2e_tmp/bin-garbage/kubectl" <<'EOF'
#!/bin/sh
printf 'garbage \001\033[2J{{{ not json\n'
head -c 4096 /dev/urandom 2>/dev/null | od -An | head -20
EOF
chmod +x "$e2e_tmp/bin-hang/kubectl" "$e2e_tmp/bin-garbage/kubectl"
: >"$e2e_tmp/kubectl-children"
PATH="$e2e_tmp/bin-hang:$PATH" run kube-hang --no-probe --max-runtime 6
expect_status "hanging kubectl: triage completes" 0 "$rc"
check "hanging kubectl: one WARN, every Kubernetes check skipped, none passed" findings "$e2e_tmp/kube-hang.json" \
	"1:check=kube.access,tag=WARN,message~kubectl could not be used" "0:check=kube.node-health,tag=PASS" \
	"1:check=nodes.status,tag=FAIL"
clean kube-hang kube.
within kube-hang 40
sleep 0.5
alive=""
for p in $(cat "$e2e_tmp/kubectl-children"); do
	if kill -0 "$p" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != Z ]; then
		alive="$alive $p"
		kill "$p" 2>/dev/null
	fi
done
if [ -z "$alive" ] && [ -s "$e2e_tmp/kubectl-children" ]; then
	ok "hanging kubectl: no process of it survives"
else
	not_ok "hanging kubectl: no process of it survives" "left running:$alive"
fi

PATH="$e2e_tmp/bin-garbage:$PATH" run kube-garbage --no-probe
expect_status "garbage kubectl: triage completes" 0 "$rc"
check "garbage kubectl: one WARN, nothing passed" findings "$e2e_tmp/kube-garbage.json" \
	"1:check=kube.access,tag=WARN,message~kubectl could not be used" "0:check=kube.node-health,tag=PASS"
clean kube-garbage kube.
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$e2e_tmp/kube-garbage.json"; then
	not_ok "garbage kubectl: no control character reaches the report" "found one"
else
	ok "garbage kubectl: no control character reaches the report"
fi
within kube-garbage 60
# FAULTS_KEEP=DIR keeps every case's report and stderr for a look afterwards.
if [ -n "${FAULTS_KEEP:-}" ]; then
	cp "$e2e_tmp"/*.json "$e2e_tmp"/*.err "$FAULTS_KEEP"/ 2>/dev/null
fi
e2e_done
