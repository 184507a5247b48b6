#!/bin/sh
# How hpnode triage behaves when AWS says no: missing IAM permissions,
# throttling, server errors, unknown clusters, rejected credentials, and
# hostile text in replies. No API error may ever read as a PASS.
T=t0310-triage-errors
. "$(dirname "$0")/e2e-lib.sh"

variant "$ROOT/tests/fixtures/demo.yaml" "$e2e_tmp/denied.yaml" '
d["faults"] = {"deny": ["sagemaker:ListClusterNodes", "sagemaker:ListClusterEvents", "logs:FilterLogEvents",
                        "ec2:DescribeSubnets"],
               "throttle": {"sagemaker:DescribeCluster": 2},
               "fail": {"ec2:DescribeInstanceTypes": {"status": 500, "count": 10}}}
d["events"][0]["description"] = "EFA health checks did not run successfully \x1b[31mRED\x1b[0m\x07 \x1b]0;pwned\x07end"
'
fixture_start "$e2e_tmp/denied.yaml" || { not_ok "denied fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/denied.json" 2>"$e2e_tmp/denied.err"
expect_status "triage goes on past denied calls" 0 $?
check "denied ListClusterNodes: Missing IAM permission finding (P1 § K.1)" findings "$e2e_tmp/denied.json" \
	"1:tag=FAIL,priority=P1,section=K.1,message~Missing IAM permission for sagemaker:ListClusterNodes"
check "denied ListClusterNodes: no node PASS and no node totals" findings "$e2e_tmp/denied.json" \
	"0:check=nodes.status"
check "denied ListClusterEvents: Missing IAM permission, no event findings" findings "$e2e_tmp/denied.json" \
	"1:message~Missing IAM permission for sagemaker:ListClusterEvents" "0:check=events.signals"
check "denied FilterLogEvents: Missing IAM permission, no lifecycle PASS" findings "$e2e_tmp/denied.json" \
	"1:message~Missing IAM permission for logs:FilterLogEvents" "0:check=logs.lifecycle,tag=PASS" \
	"0:check=logs.health-agent,tag=PASS"
check "denied DescribeSubnets: the one-VPC check never passes and names the unread subnets" \
	findings "$e2e_tmp/denied.json" "0:check=network.vpc,tag=PASS" \
	"1:check=network.vpc,tag=SKIP,message~subnets could not be read (ec2:DescribeSubnets)" \
	"1:message~Missing IAM permission for ec2:DescribeSubnets"
check "throttled DescribeCluster was retried to success" findings "$e2e_tmp/denied.json" \
	"1:check=cluster.status,tag=PASS"
check "500s on DescribeInstanceTypes: WARN naming the call, ThreadsPerCore not passed" findings "$e2e_tmp/denied.json" \
	">=1:tag=WARN,message~ec2:DescribeInstanceTypes" "0:check=cluster.threads-per-core,tag=PASS" \
	"0:check=cluster.threads-per-core,tag=WARN"
python3 - "$e2e_tmp/denied.json" <<'PY' && ok "no PASS anywhere rests on a failed call" || not_ok "no PASS anywhere rests on a failed call" "see above"
import json, sys
doc = json.load(open(sys.argv[1]))
passes = [f["check"] for f in doc["findings"] if f["tag"] == "PASS"]
bad = [c for c in passes if c.startswith(("nodes.", "events.", "logs.lifecycle", "logs.health"))]
if bad:
    print(bad); sys.exit(1)
PY
fixture_stop

# Hostile text: the same EFA event with escape sequences, in the text report.
variant "$ROOT/tests/fixtures/demo.yaml" "$e2e_tmp/hostile.yaml" '
d["events"][0]["description"] = "EFA health checks did not run successfully \x1b[31mRED\x1b[0m\x07 \x1b]0;pwned\x07end\r\nInjected line"
d["nodes"][0]["message"] = "bad\x1b[2Jnode\x1b[0m message"
d["faults"] = {"deny": ["sagemaker:DescribeClusterEvent"]}
'
fixture_start "$e2e_tmp/hostile.yaml" || { not_ok "hostile fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe >"$e2e_tmp/hostile.txt" 2>&1
expect_status "hostile strings: triage completes" 0 $?
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$e2e_tmp/hostile.txt"; then
	not_ok "hostile strings: no control characters reach the report" "$(LC_ALL=C grep -n "$(printf '[\001-\010\013-\037\177]')" "$e2e_tmp/hostile.txt" | cat -v | head -3)"
else
	ok "hostile strings: no control characters reach the report"
fi
check "hostile strings: the text around them survives" contains "$e2e_tmp/hostile.txt" "badnode message"
check "hostile strings: CR/LF become spaces, no line injected" grep -q "successfully RED end  *Injected line" "$e2e_tmp/hostile.txt"
check "hostile strings: no line starts with the injected text" sh -c '! grep -q "^Injected line" "$1"' _ "$e2e_tmp/hostile.txt"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --output json >"$e2e_tmp/hostile.json" 2>&1
python3 -c 'import json,sys; s=open(sys.argv[1]).read(); d=json.loads(s); sys.exit(any(ord(c)<32 for f in d["findings"] for c in f["message"]+"".join(f["evidence"])))' "$e2e_tmp/hostile.json" \
	&& ok "hostile strings: JSON strings are clean too" || not_ok "hostile strings: JSON strings are clean too" "control character in JSON"
check "denied DescribeClusterEvent: said, and the events are judged on their descriptions" \
	findings "$e2e_tmp/hostile.json" "1:message~Missing IAM permission for sagemaker:DescribeClusterEvent" \
	"1:check=events.signals,tag=WARN,message~Error/Warn cluster events could not be read" \
	"1:check=events.signals,tag=WARN,message~Instance creation in Cluster"

# Unknown cluster: exit 1 and the region's clusters listed.
"$HPNODE" triage --cluster no-such-cluster >"$e2e_tmp/nf.out" 2>"$e2e_tmp/nf.err"
expect_status "unknown cluster exits 1" 1 $?
check "unknown cluster: says so" contains "$e2e_tmp/nf.err" "cannot find cluster 'no-such-cluster' in region 'us-west-2'"
check "unknown cluster: lists the region's clusters" contains "$e2e_tmp/nf.err" "$FIXTURE_CLUSTER"

# Wrong secret: the signature is checked, so this is a credentials failure.
AWS_SECRET_ACCESS_KEY=wrong"$AWS_SECRET_ACCESS_KEY" "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" >"$e2e_tmp/cr.out" 2>"$e2e_tmp/cr.err"
expect_status "rejected credentials exit 4" 4 $?
check "rejected credentials: the fix and the § K.2 pointer" contains "$e2e_tmp/cr.err" "Fix AWS credentials and rerun. → references/node-diagnostics-detail.md § K.2 (AWS Credentials)"
check "rejected credentials: no report printed" lacks "$e2e_tmp/cr.out" "[PASS]"
if grep -qF -- "$AWS_SECRET_ACCESS_KEY" "$e2e_tmp/cr.err" "$e2e_tmp/cr.out"; then
	not_ok "rejected credentials: the secret is never printed" "found in output"
else
	ok "rejected credentials: the secret is never printed"
fi

# No credentials at all.
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" >/dev/null 2>"$e2e_tmp/nc.err"
expect_status "no credentials exit 4" 4 $?
check "no credentials: says which sources were tried" contains "$e2e_tmp/nc.err" "Fix AWS credentials and rerun."

# Credentials from a profile in the shared files, selected with --profile.
printf '[ops]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" >"$AWS_SHARED_CREDENTIALS_FILE"
printf '[profile ops]\nregion = us-west-2\n' >"$AWS_CONFIG_FILE"
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_REGION -u AWS_DEFAULT_REGION \
	"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --profile ops --debug >/dev/null 2>"$e2e_tmp/prof.err"
expect_status "--profile: credentials and region from the shared files" 0 $?
check "--debug names the provider that answered" contains "$e2e_tmp/prof.err" "shared-credentials-file"
check "--debug never prints the secret" lacks "$e2e_tmp/prof.err" "$AWS_SECRET_ACCESS_KEY"

# credential_process.
cat >"$e2e_tmp/proc.sh" <<EOS
#!/bin/sh
printf '{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s"}' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY"
EOS
chmod +x "$e2e_tmp/proc.sh"
printf '[profile proc]\nregion = us-west-2\ncredential_process = %s\n' "$e2e_tmp/proc.sh" >"$AWS_CONFIG_FILE"
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_REGION -u AWS_DEFAULT_REGION \
	"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --profile proc --debug >/dev/null 2>"$e2e_tmp/proc.err"
expect_status "credential_process answers" 0 $?
check "credential_process named in --debug" contains "$e2e_tmp/proc.err" "credential-process"
e2e_done
