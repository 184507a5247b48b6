#!/bin/sh
# The credential chain end to end against the fixture: assume-role (source
# profile chains, credential_source, loops), web identity, SSO (cached token,
# refresh, cache rewrite), container and instance-metadata credentials, the
# precedence between them, refresh during a 16-worker probe sweep with keys
# that live 6 seconds, a refresh that fails mid-run, and no secret in any
# output or snapshot.
T=t0350-creds
. "$(dirname "$0")/e2e-lib.sh"

KEYS=$e2e_tmp/keys.log
fixture_start "$ROOT/tests/fixtures/healthy.yaml" --key-record "$KEYS" ||
	{ not_ok "fixture starts" "see messages above"; e2e_done; }
ROLE=$(fixture_get role_arn)
CREDS_EP=$(fixture_get creds.endpoint)
SG=$(fixture_get security_groups | python3 -c 'import json,sys; print(sorted(json.load(sys.stdin).values())[0])')
ACCOUNT=$(fixture_get account)
BASE_AK=$AWS_ACCESS_KEY_ID
BASE_SK=$AWS_SECRET_ACCESS_KEY
outs=""

# run NAME "ENV ARGS" [hpnode args]: `hpnode efa-sg` under `env ENV ARGS` (words without
# blanks); output in $e2e_tmp/NAME.{out,err,snap}, exit status in $rc.
run() {
	name=$1
	envs=$2
	shift 2
	outs="$outs $e2e_tmp/$name.out $e2e_tmp/$name.err $e2e_tmp/$name.snap"
	# shellcheck disable=SC2086
	env $envs "$HPNODE" efa-sg --sg-id "$SG" --debug --save-snapshot "$e2e_tmp/$name.snap" "$@" \
		>"$e2e_tmp/$name.out" 2>"$e2e_tmp/$name.err"
	rc=$?
}
source_is() { # NAME TEXT: the snapshot's meta.credential_source
	python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["meta"]["credential_source"]; sys.exit(s != sys.argv[2] and (print(repr(s)) or 1))' "$e2e_tmp/$1.snap" "$2"
}
signed_by_session_keys() { # the last such call was signed with a minted (ASIA) key
	python3 - "$KEYS" "$1" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
seen = [l.split() for l in lines if " signed " in l]
want = sys.argv[2]
calls = [l for l in seen if l[3] == want]
if not calls:
    sys.exit("no %s call recorded" % want)
if not calls[-1][2].startswith("ASIA"):
    sys.exit("%s signed with %s" % (want, calls[-1][2]))
PY
}

cat >"$AWS_CONFIG_FILE" <<EOF
[profile base]
aws_access_key_id = $BASE_AK
aws_secret_access_key = $BASE_SK
[profile ops]
role_arn = $ROLE
source_profile = base
external_id = ext-42
role_session_name = triage-me
[profile ops2]
role_arn = $ROLE
source_profile = ops
[profile envrole]
role_arn = $ROLE
credential_source = Environment
[profile loop-a]
role_arn = $ROLE
source_profile = loop-b
[profile loop-b]
role_arn = $ROLE
source_profile = loop-a
[profile mfa]
role_arn = $ROLE
source_profile = base
mfa_serial = arn:aws:iam::$ACCOUNT:mfa/me
[profile webid]
role_arn = $ROLE
web_identity_token_file = $e2e_tmp/token
[profile sso]
sso_session = corp
sso_account_id = $ACCOUNT
sso_role_name = $(fixture_get creds.sso_role)
[sso-session corp]
sso_start_url = https://corp.awsapps.example/start
sso_region = us-east-1
[profile imdsrole]
role_arn = $ROLE
credential_source = Ec2InstanceMetadata
EOF
fixture_get web_identity_token >"$e2e_tmp/token"

# ---- assume-role ----
: >"$KEYS"
run ops "" --profile ops
expect_status "assume-role via source_profile: exit 0 (--profile beats the env keys)" 0 $rc
check "assume-role: STS got the session name and external id" contains "$KEYS" \
	"assume-role $ROLE session=triage-me external_id=ext-42"
check "assume-role: AssumeRole signed with the source profile's key" contains "$KEYS" "signed $BASE_AK sts:AssumeRole"
check "assume-role: the later calls signed with the session key" signed_by_session_keys ec2:DescribeSecurityGroups
check "assume-role: credential source in the snapshot" source_is ops "assume-role via profile ops (source profile base)"
check "assume-role: --debug says why environment was skipped" contains "$e2e_tmp/ops.err" \
	"hpnode: debug: environment: skipped because --profile was given"

: >"$KEYS"
run ops2 "" --profile ops2
expect_status "assume-role chain ops2 -> ops -> base: exit 0" 0 $rc
check "chain: two AssumeRole calls" sh -c '[ "$(grep -c " assume-role " "$1")" = 2 ]' _ "$KEYS"
check "chain: named in the snapshot" source_is ops2 "assume-role via profile ops2 (source profile ops)"

run loop "" --profile loop-a
expect_status "source_profile loop: exit 4" 4 $rc
check "loop: the message shows the loop, naming provider and profiles" contains "$e2e_tmp/loop.err" \
	"assume-role: source_profile loop: loop-a -> loop-b -> loop-a"

run mfa "" --profile mfa
expect_status "mfa_serial: exit 4, no prompt" 4 $rc
check "mfa_serial: says hpnode does not prompt" contains "$e2e_tmp/mfa.err" "hpnode does not prompt for MFA codes"

: >"$KEYS"
run envrole "" --profile envrole
expect_status "credential_source Environment: exit 0" 0 $rc
check "credential_source Environment: AssumeRole signed with the env key" contains "$KEYS" "signed $BASE_AK sts:AssumeRole"
check "credential_source Environment: named" source_is envrole "assume-role via profile envrole (credential_source Environment)"

# ---- precedence ----
: >"$KEYS"
run envwins "AWS_PROFILE=ops"
expect_status "env keys beat AWS_PROFILE's role: exit 0" 0 $rc
check "env keys beat AWS_PROFILE: no AssumeRole" lacks "$KEYS" "assume-role"
check "env keys beat AWS_PROFILE: source is the environment" source_is envwins "environment variables"
run awsprofile "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_PROFILE=ops"
expect_status "AWS_PROFILE names the role profile without env keys: exit 0" 0 $rc
check "AWS_PROFILE: assume-role answered" source_is awsprofile "assume-role via profile ops (source profile base)"

# ---- web identity (IRSA) ----
: >"$KEYS"
run webenv "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_ROLE_ARN=$ROLE \
	AWS_WEB_IDENTITY_TOKEN_FILE=$e2e_tmp/token AWS_ROLE_SESSION_NAME=pod-7"
expect_status "web identity from the environment: exit 0" 0 $rc
check "web identity: STS saw the session name" contains "$KEYS" "web-identity $ROLE session=pod-7"
check "web identity: the call was unsigned" contains "$FIXTURE_RECORD" "sts:AssumeRoleWithWebIdentity"
check "web identity: named" source_is webenv "web identity via AWS_WEB_IDENTITY_TOKEN_FILE"
check "web identity: later calls signed with the session key" signed_by_session_keys ec2:DescribeSecurityGroups
run webprof "" --profile webid
expect_status "web identity from a profile: exit 0" 0 $rc
check "web identity profile: named" source_is webprof "web identity via profile webid"
run webmissing "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_ROLE_ARN=$ROLE \
	AWS_WEB_IDENTITY_TOKEN_FILE=$e2e_tmp/no-such-token"
expect_status "wrong token file path: exit 4" 4 $rc
check "wrong token file path: names the file and the provider" contains "$e2e_tmp/webmissing.err" \
	"web-identity: cannot read the web identity token file '$e2e_tmp/no-such-token' (AWS_WEB_IDENTITY_TOKEN_FILE): No such file or directory"
echo "eyJnot.the.token" >"$e2e_tmp/badtoken"
run webbad "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_ROLE_ARN=$ROLE \
	AWS_WEB_IDENTITY_TOKEN_FILE=$e2e_tmp/badtoken"
expect_status "a token STS refuses: exit 4" 4 $rc
check "a token STS refuses: the STS error is named" contains "$e2e_tmp/webbad.err" "InvalidIdentityToken"

# ---- container credentials (EKS Pod Identity / ECS) ----
CTR_TOKEN=$(fixture_get creds.container_token)
: >"$KEYS"
run ctr "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
	AWS_CONTAINER_CREDENTIALS_FULL_URI=$(fixture_get creds.container_uri) \
	AWS_CONTAINER_AUTHORIZATION_TOKEN=$CTR_TOKEN"
expect_status "container credentials: exit 0" 0 $rc
check "container: named" source_is ctr "container credentials from 127.0.0.1"
check "container: the endpoint served them" contains "$KEYS" "endpoint container-credentials"
printf '%s\n' "$CTR_TOKEN" >"$e2e_tmp/ctr-token"
run ctrfile "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
	AWS_CONTAINER_CREDENTIALS_FULL_URI=$(fixture_get creds.container_uri) \
	AWS_CONTAINER_AUTHORIZATION_TOKEN=wrong AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=$e2e_tmp/ctr-token"
expect_status "container token file beats the token variable: exit 0" 0 $rc
run ctrbad "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
	AWS_CONTAINER_CREDENTIALS_FULL_URI=$(fixture_get creds.container_uri) \
	AWS_CONTAINER_AUTHORIZATION_TOKEN=wrong"
expect_status "container endpoint refusing the token: exit 4" 4 $rc
check "container refusal: names the provider and the HTTP status" contains "$e2e_tmp/ctrbad.err" \
	"container: the container credentials endpoint at 127.0.0.1 failed: HTTP 401"
run ctrhost "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
	AWS_CONTAINER_CREDENTIALS_FULL_URI=http://192.0.2.10/creds"
expect_status "container URI on a host outside the allow-list: exit 4" 4 $rc
check "container allow-list: says why" contains "$e2e_tmp/ctrhost.err" "only loopback, 169.254.170.2, 169.254.170.23 and fd00:ec2::23"

# ---- instance metadata (IMDSv2) ----
imds_code=$(curl -s -o /dev/null -w '%{http_code}' "$CREDS_EP/latest/meta-data/iam/security-credentials/")
[ "$imds_code" = 401 ] && ok "fixture IMDS refuses a token-less (IMDSv1) GET" ||
	not_ok "fixture IMDS refuses a token-less (IMDSv1) GET" "HTTP $imds_code"
: >"$KEYS"
run imds "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_EC2_METADATA_DISABLED \
	-u AWS_REGION -u AWS_DEFAULT_REGION AWS_EC2_METADATA_SERVICE_ENDPOINT=$CREDS_EP"
expect_status "instance metadata credentials: exit 0" 0 $rc
check "imds: named" source_is imds "instance metadata (role $(fixture_get creds.instance_role))"
check "imds: the region came from instance metadata" contains "$e2e_tmp/imds.err" \
	"hpnode: debug: region: us-west-2 (from instance metadata)"
check "imds: a session token was asked for" contains "$KEYS" "endpoint imds-token"
check "imds: never an IMDSv1 request" lacks "$KEYS" "imds-v1-refused"
run imdsrole "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_EC2_METADATA_DISABLED \
	AWS_EC2_METADATA_SERVICE_ENDPOINT=$CREDS_EP" --profile imdsrole
expect_status "credential_source Ec2InstanceMetadata: exit 0" 0 $rc
check "credential_source Ec2InstanceMetadata: named" source_is imdsrole \
	"assume-role via profile imdsrole (credential_source Ec2InstanceMetadata)"

# No metadata service at all (a closed port, then an address that never answers): given up
# after hpnode's own short timeouts, not libcurl's default of minutes (a wide bound: a
# loaded machine must not fail it).
for ep in http://127.0.0.1:1 http://10.255.255.1; do
	t0=$(date +%s%N)
	run imdsabsent "-u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_EC2_METADATA_DISABLED \
		AWS_EC2_METADATA_SERVICE_ENDPOINT=$ep"
	ms=$((($(date +%s%N) - t0) / 1000000))
	expect_status "no metadata service at $ep: exit 4" 4 $rc
	[ "$ms" -lt 20000 ] && ok "no metadata service at $ep: given up after $ms ms" ||
		not_ok "no metadata service at $ep: given up within its own timeouts" "$ms ms"
	check "no metadata service at $ep: the trace names it" contains "$e2e_tmp/imdsabsent.err" "hpnode: debug: imds: "
done

# ---- SSO ----
SSO_DIR=$HOME/.aws/sso/cache
SSO_FILE=$SSO_DIR/$(printf corp | sha1sum | cut -c1-40).json
mkdir -p "$SSO_DIR"
python3 - "$SSO_FILE" "$FIXTURE_READY" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))["creds"]
json.dump({"startUrl": "https://corp.awsapps.example/start", "region": "us-east-1",
           "accessToken": r["sso_access_token"], "expiresAt": "2099-01-01T00:00:00Z"},
          open(sys.argv[1], "w"))
PY
: >"$KEYS"
run sso "AWS_ENDPOINT_URL_SSO=$CREDS_EP AWS_ENDPOINT_URL_SSO_OIDC=$CREDS_EP" --profile sso
expect_status "SSO with a cached token: exit 0" 0 $rc
check "sso: named" source_is sso "sso via profile sso"
check "sso: GetRoleCredentials served them" contains "$KEYS" "endpoint sso-credentials"

python3 - "$SSO_FILE" "$FIXTURE_READY" <<'PY'
import json, sys
r = json.load(open(sys.argv[2]))["creds"]
json.dump({"startUrl": "https://corp.awsapps.example/start", "region": "us-east-1",
           "accessToken": "sso-expired-token", "expiresAt": "2020-01-01T00:00:00Z",
           "clientId": r["sso_client_id"], "clientSecret": r["sso_client_secret"],
           "registrationExpiresAt": "2099-01-01T00:00:00Z", "refreshToken": r["sso_refresh_token"]},
          open(sys.argv[1], "w"))
PY
chmod 0644 "$SSO_FILE"
: >"$KEYS"
run ssorefresh "AWS_ENDPOINT_URL_SSO=$CREDS_EP AWS_ENDPOINT_URL_SSO_OIDC=$CREDS_EP" --profile sso
expect_status "SSO with an expired token and a refresh token: exit 0" 0 $rc
check "sso refresh: CreateToken was called" contains "$KEYS" "endpoint sso-oidc-token"
check "sso refresh: the cache file was rewritten with the new token" python3 - "$SSO_FILE" "$FIXTURE_READY" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))["creds"]
assert d["accessToken"].startswith("sso-") and d["accessToken"] != "sso-expired-token", d
assert d["expiresAt"] > "2026", d
assert d["refreshToken"] != r["sso_refresh_token"], "refresh token not replaced"
assert d["clientId"] == r["sso_client_id"], "other keys lost"
PY
check "sso refresh: the cache file is mode 0600" sh -c '[ "$(stat -c %a "$1")" = 600 ]' _ "$SSO_FILE"
check "sso refresh: no temporary file left behind" sh -c '[ "$(ls "$1" | wc -l)" = 1 ]' _ "$SSO_DIR"
check "sso refresh: --debug says the token was refreshed" contains "$e2e_tmp/ssorefresh.err" "sso: token refreshed"
rm -f "$SSO_FILE"
run ssonone "AWS_ENDPOINT_URL_SSO=$CREDS_EP" --profile sso
expect_status "SSO without a cached token: exit 4" 4 $rc
check "sso without a token: tells the user to log in" contains "$e2e_tmp/ssonone.err" 'run `aws sso login --profile sso`'

# No secret anywhere in what hpnode printed or saved.
secrets_in() {
	python3 - "$KEYS.secrets" "$BASE_SK" "$(fixture_get web_identity_token)" "$CTR_TOKEN" \
		"$(fixture_get creds.sso_access_token)" "$(fixture_get creds.sso_client_secret)" -- "$@" <<'PY'
import sys
args = sys.argv[1:]
sep = args.index("--")
secret_file, fixed, files = args[0], args[1:sep], args[sep + 1:]
secrets = [s for s in open(secret_file).read().split("\n") if len(s) > 8] + fixed
bad = []
for f in files:
    try:
        text = open(f, errors="replace").read()
    except OSError:
        continue
    bad += ["%s in %s" % (s[:6] + "...", f) for s in secrets if s in text]
if bad:
    sys.exit("; ".join(bad[:5]))
PY
}
# shellcheck disable=SC2086
check "no secret, session token or SSO token in any output or snapshot" secrets_in $outs
fixture_stop

# ---- refresh during a 16-worker probe sweep: keys that live 6 seconds ----
variant "$ROOT/tests/fixtures/ssm.yaml" "$e2e_tmp/sweep.yaml" '
d["nodes"] = [{"group": "controller", "alias": "head"}, {"group": "gpu", "count": 31}]
'
KEYS=$e2e_tmp/sweep-keys.log
fixture_start "$e2e_tmp/sweep.yaml" --key-record "$KEYS" --creds-lifetime 6 --probe-latency 2 ||
	{ not_ok "sweep fixture starts" "see messages above"; e2e_done; }
CREDS_EP=$(fixture_get creds.endpoint)
t0=$(date +%s)
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_EC2_METADATA_DISABLED \
	AWS_EC2_METADATA_SERVICE_ENDPOINT="$CREDS_EP" "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" \
	--concurrency 16 --probe-timeout 30 --output json --debug --save-snapshot "$e2e_tmp/sweep.snap" \
	>"$e2e_tmp/sweep.json" 2>"$e2e_tmp/sweep.err"
expect_status "sweep with short-lived keys completes" 0 $?
echo "# sweep took $(($(date +%s) - t0)) s"
check "sweep: every node probed" python3 - "$e2e_tmp/sweep.snap" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["probes"]
nodes = p.get("nodes", p)
states = [e.get("state") for e in nodes.values() if isinstance(e, dict) and "state" in e]
assert len(states) >= 32 and all(s == "probed" for s in states), states
PY
check "sweep: the keys were refreshed several times" sh -c '[ "$(grep -c " issued " "$1")" -ge 3 ]' _ "$KEYS"
check "sweep: StartSession signed with more than one key" sh -c \
	'[ "$(grep " signed .* ssm:StartSession" "$1" | cut -d" " -f3 | sort -u | wc -l)" -ge 2 ]' _ "$KEYS"
check "sweep: zero calls signed with an expired key" lacks "$KEYS" " expired "
echo "# sweep: $(grep -c " late " "$KEYS") call(s) signed in time but arrived after the expiry"
check "sweep: --debug shows the refreshes" contains "$e2e_tmp/sweep.err" "hpnode: debug: credentials: refreshed from instance metadata"

# The judge itself: a key used to sign after its expiry is refused and written
# `expired`; a request signed in time that arrives after the expiry is refused
# as the service would, but written `late`. Judged by X-Amz-Date.
check "fixture: signed in time, arrived late, signed late: late and expired" python3 - \
	"$CREDS_EP" "$AWS_ENDPOINT_URL" "$KEYS" "$AWS_REGION" <<'PY'
import json, sys, time, urllib.request, urllib.error
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
imds, endpoint, record, region = sys.argv[1:5]
def get(path, method="GET", headers=None):
    req = urllib.request.Request(imds + path, method=method, headers=headers or {})
    return urllib.request.urlopen(req, timeout=10).read().decode()
tok = get("/latest/api/token", "PUT", {"X-aws-ec2-metadata-token-ttl-seconds": "60"})
base = "/latest/meta-data/iam/security-credentials/"
role = get(base, headers={"X-aws-ec2-metadata-token": tok}).split()[0]
c = json.loads(get(base + role, headers={"X-aws-ec2-metadata-token": tok}))
creds = Credentials(c["AccessKeyId"], c["SecretAccessKey"], c["Token"])
def signed():
    r = AWSRequest("POST", endpoint + "/", data="Action=GetCallerIdentity&Version=2011-06-15",
                   headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"})
    SigV4Auth(creds, "sts", region).add_auth(r)
    return r
def send(r):
    req = urllib.request.Request(r.url, data=r.body.encode() if isinstance(r.body, str) else r.body,
                                 headers=dict(r.headers.items()), method="POST")
    try:
        return urllib.request.urlopen(req, timeout=10).status
    except urllib.error.HTTPError as e:
        return e.code
import calendar
expires = calendar.timegm(time.strptime(c["Expiration"], "%Y-%m-%dT%H:%M:%SZ"))
assert send(signed()) == 200, "a fresh key is refused"
held = signed()
time.sleep(max(0.0, expires - time.time()) + 1.2)
assert send(held) == 403, "a late arrival is accepted"
assert send(signed()) == 403, "a key signed after its expiry is accepted"
lines = [l.split() for l in open(record) if c["AccessKeyId"] in l]
kinds = [l[1] for l in lines if l[1] in ("signed", "late", "expired")]
assert kinds[-3:] == ["signed", "late", "expired"], kinds
PY

# credential_process output that expires in 6 s is asked for again during the run.
cat >"$e2e_tmp/proc.sh" <<EOS
#!/bin/sh
echo run >>"$e2e_tmp/proc.log"
printf '{"Version": 1, "AccessKeyId": "%s", "SecretAccessKey": "%s", "Expiration": "%s"}' \
	"$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" "\$(date -u -d '+6 sec' +%Y-%m-%dT%H:%M:%SZ)"
EOS
chmod +x "$e2e_tmp/proc.sh"
printf '[profile proc]\ncredential_process = %s\n' "$e2e_tmp/proc.sh" >"$AWS_CONFIG_FILE"
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" \
	--profile proc --sample 8 --concurrency 16 --probe-timeout 30 --output json --debug \
	>"$e2e_tmp/proc.json" 2>"$e2e_tmp/proc.err"
expect_status "credential_process with short expiry: the run completes" 0 $?
check "credential_process: run again before its output expired" sh -c '[ "$(wc -l <"$1")" -ge 2 ]' _ "$e2e_tmp/proc.log"
check "credential_process: --debug shows the refresh" contains "$e2e_tmp/proc.err" \
	"hpnode: debug: credentials: refreshed from credential_process of profile proc"
check "sweeps: no secret or session token in any output or snapshot" secrets_in \
	"$e2e_tmp/sweep.json" "$e2e_tmp/sweep.err" "$e2e_tmp/sweep.snap" "$e2e_tmp/proc.json" \
	"$e2e_tmp/proc.err"
fixture_stop

# ---- a refresh that fails mid-run ----
KEYS=$e2e_tmp/fail-keys.log
fixture_start "$e2e_tmp/sweep.yaml" --key-record "$KEYS" --creds-lifetime 4 --creds-fail-after 1 \
	--probe-latency 2 || { not_ok "failing fixture starts" "see messages above"; e2e_done; }
CREDS_EP=$(fixture_get creds.endpoint)
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_EC2_METADATA_DISABLED \
	AWS_EC2_METADATA_SERVICE_ENDPOINT="$CREDS_EP" "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" \
	--concurrency 4 --probe-timeout 30 --output json --save-snapshot "$e2e_tmp/fail.snap" \
	>"$e2e_tmp/fail.json" 2>"$e2e_tmp/fail.err"
frc=$?
[ "$frc" = 0 ] || [ "$frc" = 4 ] && ok "refresh failure mid-run: the run ends (exit $frc)" ||
	not_ok "refresh failure mid-run: the run ends with 0 or 4" "exit $frc"
check "refresh failure: what was collected is still reported" python3 - "$e2e_tmp/fail.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert any(f["check"].startswith("cluster.") and f["tag"] == "PASS" for f in d["findings"]), "no cluster PASS"
PY
check "refresh failure: later calls are credential errors naming the provider" \
	grep -q "imds: the credentials (instance metadata" "$e2e_tmp/fail.json" "$e2e_tmp/fail.snap"
check "refresh failure: zero calls signed with an expired key" lacks "$KEYS" " expired "
echo "# refresh failure: $(grep -c " late " "$KEYS") call(s) signed in time but arrived after the expiry"
fixture_stop

e2e_done
