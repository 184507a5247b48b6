#!/bin/sh
# SigV4 conformance of tests/bin/sigv4-sign (src/collect/aws/sigv4.c):
#  - usage errors exit 2;
#  - every case of the public AWS SigV4 test suite, when a copy sits at
#    <repo>/../shared/testdata/sigv4-aws4-testsuite (or $SIGV4_TESTSUITE),
#    matches its .creq/.sts/.authz byte for byte;
#  - requests generated from a fixed seed sign the same as botocore, when
#    python3 with botocore is installed.
set -u
name=t0100-sigv4
repo=$(cd "$(dirname "$0")/../.." && pwd)
sign=${SIGV4_SIGN:-$repo/tests/bin/sigv4-sign}
suite=${SIGV4_TESTSUITE:-$repo/../shared/testdata/sigv4-aws4-testsuite}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
LC_ALL=C
export LC_ALL

ok() { printf 'ok - %s: %s\n' "$name" "$1"; }
not_ok() { printf 'not ok - %s: %s: %s\n' "$name" "$1" "$2"; failed=1; }

if [ ! -x "$sign" ]; then
	not_ok "signer present" "'$sign' is not executable (make tests/bin/sigv4-sign)"
	exit 1
fi

# The suite's fixed credentials, scope and time.
suite_sign() {
	"$sign" --access-key AKIDEXAMPLE --secret-key wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY \
		--region us-east-1 --service service --time 20150830T123600Z "$@"
}

# --- usage errors -----------------------------------------------------------
expect_usage() {
	what=$1; shift
	printf 'GET / HTTP/1.1\nHost:example.amazonaws.com\n' | "$sign" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 2 ] && [ -s "$tmp/err" ] && [ ! -s "$tmp/out" ]; then
		ok "usage error: $what"
	else
		not_ok "usage error: $what" "exit $rc, stderr '$(head -c 200 "$tmp/err")'"
	fi
}
expect_usage "missing --secret-key" --access-key AK --region us-east-1 --service s \
	--time 20150830T123600Z
expect_usage "bad --time" --access-key AK --secret-key SK --region us-east-1 --service s \
	--time 2015-08-30T12:36:00Z
expect_usage "unknown option" --access-key AK --secret-key SK --region us-east-1 --service s \
	--time 20150830T123600Z --bogus
printf 'GET / HTTP/1.1\nX-Amz-Security-Token:other\n' | "$sign" --access-key AK --secret-key SK \
	--region us-east-1 --service s --time 20150830T123600Z --token T >/dev/null 2>&1
rc=$?
if [ $rc -eq 2 ]; then
	ok "usage error: --token differs from the request's token header"
else
	not_ok "usage error: --token differs from the request's token header" "exit $rc"
fi

# --- the AWS test suite -----------------------------------------------------
# Writes the lines first..last of file $1 to $2 without a final newline.
slice() {
	sed -n "$3,$4p" "$1" | awk 'NR > 1 { printf "\n" } { printf "%s", $0 }' >"$2"
}

# Splits the signer's output $1 into $1.creq, $1.sts and $1.authz; the
# string to sign is four lines and the Authorization value one.
split_output() {
	n=$(wc -l <"$1")
	[ "$n" -ge 13 ] || return 1
	slice "$1" "$1.creq" 1 $((n - 7))
	slice "$1" "$1.sts" $((n - 5)) $((n - 2))
	slice "$1" "$1.authz" "$n" "$n"
	[ -z "$(sed -n "$((n - 6))p;$((n - 1))p" "$1")" ]
}

# check_case LABEL DIR BASE REQFILE [signer options]
check_case() {
	label=$1; dir=$2; base=$3; reqfile=$4; shift 4
	if ! suite_sign "$@" <"$reqfile" >"$tmp/out" 2>"$tmp/err"; then
		not_ok "aws suite $label" "signer failed: $(head -c 200 "$tmp/err")"
		return
	fi
	if ! split_output "$tmp/out"; then
		not_ok "aws suite $label" "output is not creq, sts and authz separated by blank lines"
		return
	fi
	for part in creq sts authz; do
		if ! cmp -s "$tmp/out.$part" "$dir/$base.$part"; then
			got=$(head -c 300 "$tmp/out.$part" | awk 'NR > 1 { printf "\\n" } { printf "%s", $0 }')
			not_ok "aws suite $label" ".$part differs: got '$got'"
			return
		fi
	done
	ok "aws suite $label"
}

if [ -d "$suite" ]; then
	find "$suite" -name '*.req' | sort >"$tmp/cases"
	while read -r req; do
		dir=$(dirname "$req")
		base=$(basename "$req" .req)
		label=${dir#"$suite"/}
		case $base in
		get-vanilla-with-session-token)
			# The suite signs this case with the short session token below.
			check_case "$label" "$dir" "$base" "$req" \
				--token 6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267
			;;
		post-sts-header-before)
			# The token header is already in the request; sign it as given,
			# then again with the header removed and passed as --token.
			check_case "$label" "$dir" "$base" "$req"
			token=$(sed -n 's/^X-Amz-Security-Token://p' "$req" | tr -d '\r')
			grep -v '^X-Amz-Security-Token:' "$req" >"$tmp/no-token.req"
			check_case "$label (token through --token)" "$dir" "$base" "$tmp/no-token.req" \
				--token "$token"
			;;
		*)
			# post-sts-header-after is the variant where the token header is
			# added after signing: its .req has no token and the expected
			# signature is that of the request without it, which is what
			# signing the request as given produces. hpnode itself always
			# signs the token.
			check_case "$label" "$dir" "$base" "$req"
			;;
		esac
	done <"$tmp/cases"
else
	# A fresh clone has no copy: the repository's own cases and the botocore
	# cross-check below still run; say that the suite's did not.
	echo "# $name: no AWS SigV4 test suite at $suite: its cases were not run"
fi

# --- generated requests against botocore ------------------------------------
if command -v python3 >/dev/null 2>&1 && python3 -c 'import botocore' >/dev/null 2>&1; then
	python3 "$repo/tests/tools/sigv4_crosscheck.py" --signer "$sign" --count 300 --seed 20150830
	rc=$?
	if [ $rc -ne 0 ]; then
		failed=1
		[ $rc -eq 1 ] || not_ok "botocore cross-check" "the script exited with status $rc"
	fi
else
	ok "botocore cross-check # skip: python3 with botocore is not installed"
fi

exit $failed
