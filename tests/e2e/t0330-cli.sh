#!/bin/sh
# The command line alone (no fixture needed): usage errors exit 2 with a
# clear message, a missing region exits 2, help exits 0.
T=t0330-cli
. "$(dirname "$0")/e2e-lib.sh"

run() { "$HPNODE" "$@" >"$e2e_tmp/out" 2>"$e2e_tmp/err"; echo $?; }

expect_status "no command: usage, exit 2" 2 "$(run)"
expect_status "help exits 0" 0 "$(run --help)"
check "help lists triage" contains "$e2e_tmp/out" "triage"
# The command table, as git's t0012 checks its builtins: listed sorted and
# once each, and every command answers --help (tests/unit/test-cli.c also
# checks that the help names every option the command takes).
cmds=$(awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}' "$e2e_tmp/out")
check "help lists the commands sorted, each once" sh -c '[ -n "$1" ] && [ "$1" = "$(printf "%s\n" $1 | LC_ALL=C sort -u | tr "\n" " " | sed "s/ $//")" ]' _ "$(echo $cmds)"
for c in $cmds; do
	expect_status "$c --help exits 0" 0 "$(run "$c" --help)"
	check "$c --help starts with its usage" grep -q "^usage: hpnode $c" "$e2e_tmp/out"
done
expect_status "--version exits 0" 0 "$(run --version)"
expect_status "unknown command exits 2" 2 "$(run frobnicate)"
check "unknown command is named" contains "$e2e_tmp/err" "unknown command 'frobnicate'"
expect_status "triage --help exits 0" 0 "$(run triage --help)"
check "triage --help documents exit statuses" contains "$e2e_tmp/out" "Exit status"
expect_status "missing --cluster exits 2" 2 "$(run triage --region us-west-2)"
check "missing --cluster is explained" contains "$e2e_tmp/err" "--cluster is required"
expect_status "bad cluster name exits 2" 2 "$(run triage --cluster 'bad name!' --region us-west-2)"
check "bad cluster name is quoted back" contains "$e2e_tmp/err" "(got 'bad name!')"
expect_status "malformed cluster ARN exits 2" 2 "$(run triage --cluster arn:aws:sagemaker:us-west-2:123:cluster/x --region us-west-2)"
expect_status "bad --node exits 2" 2 "$(run triage --cluster c --node node-1 --region us-west-2)"
check "bad --node is explained" contains "$e2e_tmp/err" "--node must be an EC2 instance id"
expect_status "option without value exits 2" 2 "$(run triage --cluster)"
check "option without value is explained" contains "$e2e_tmp/err" "needs a value"
expect_status "unknown option exits 2" 2 "$(run triage --cluster c --bogus)"
expect_status "bad --output exits 2" 2 "$(run triage --cluster c --output yaml)"
expect_status "bad --fail-on exits 2" 2 "$(run triage --cluster c --fail-on P5)"
expect_status "bad region exits 2" 2 "$(run triage --cluster c --region Mars-1)"
HOME=$e2e_tmp AWS_CONFIG_FILE=$e2e_tmp/none AWS_SHARED_CREDENTIALS_FILE=$e2e_tmp/none \
	AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=x \
	"$HPNODE" triage --cluster c >"$e2e_tmp/out" 2>"$e2e_tmp/err"
expect_status "no region anywhere exits 2" 2 $?
check "no region: says how to set one" contains "$e2e_tmp/err" "--region"
expect_status "missing snapshot file exits 1" 1 "$(run triage --snapshot "$e2e_tmp/nope.json")"
echo '{"version": 99}' >"$e2e_tmp/v99.json"
expect_status "snapshot of another version exits 1" 1 "$(run triage --snapshot "$e2e_tmp/v99.json")"
echo 'not json' >"$e2e_tmp/bad.json"
expect_status "corrupt snapshot exits 1" 1 "$(run triage --snapshot "$e2e_tmp/bad.json")"
check "corrupt snapshot is explained" grep -q . "$e2e_tmp/err"
# Unreachable endpoint: retried, then a clear fatal error (exit 1), never a report.
HOME=$e2e_tmp AWS_CONFIG_FILE=$e2e_tmp/none AWS_SHARED_CREDENTIALS_FILE=$e2e_tmp/none \
	AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=x AWS_MAX_ATTEMPTS=1 \
	"$HPNODE" triage --cluster c --region us-west-2 --endpoint-url http://127.0.0.1:9 >"$e2e_tmp/out" 2>"$e2e_tmp/err"
expect_status "unreachable endpoint exits 1" 1 $?
check "unreachable endpoint is named" contains "$e2e_tmp/err" "127.0.0.1:9"
e2e_done
