#!/bin/sh
# Credentials, profile, region and endpoint resolution compared with the AWS
# CLI v2 on 320 configurations from a fixed seed (tests/e2e/creds_diff.py):
# botocore with the CLI's precedence on top is the reference, and a loopback
# server records the key id, credential scope and path each side signs its
# sts:GetCallerIdentity and ec2:DescribeSecurityGroups with. Every
# disagreement fails, except the deliberate differences README's "AWS
# configuration" lists, in which hpnode must refuse without signing.
T=t0352-creds-diff
. "$(dirname "$0")/e2e-lib.sh"

if ! python3 -c 'import botocore' >/dev/null 2>&1; then
	ok "differential test # skip: python3 with botocore is not installed"
	e2e_done
fi
python3 "$ROOT/tests/e2e/creds_diff.py" "$HPNODE" "$e2e_tmp" --seed 22 --count 320 \
	>"$e2e_tmp/diff.out" 2>&1
rc=$?
sed -n '/^# [0-9]* cases/,$p' "$e2e_tmp/diff.out"
if [ $rc -eq 0 ]; then
	ok "320 generated configurations: hpnode signs with the key, region and endpoint the CLI would"
else
	cat "$e2e_tmp/diff.out"
	not_ok "320 generated configurations" "hpnode and the CLI disagree (status $rc), see above"
fi
e2e_done
