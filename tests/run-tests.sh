#!/bin/sh
# Runs every test tier and adds up the "ok"/"not ok" lines:
#   1. unit programs in $UNIT_DIR (tests/unit/test-*.c)
#   2. end-to-end scripts tests/e2e/t*.sh (fixture cluster, real binary)
# Ends with "N passed, N failed"; exit status 1 when anything failed.
# Environment: HPNODE, SIGV4_SIGN, UNIT_DIR (set by `make test`);
# TESTS=pattern limits the e2e scripts run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_one() {
	name=$1; shift
	"$@" >>"$log" 2>&1
	rc=$?
	# A program that died without printing a verdict still counts as a failure.
	if [ $rc -ne 0 ] && ! grep -q "^not ok - $name" "$log"; then
		echo "not ok - $name: exited with status $rc" >>"$log"
	fi
}

for t in "$UNIT_DIR"/test-*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done

for t in "$here"/e2e/t*.sh; do
	[ -f "$t" ] || continue
	case "$(basename "$t")" in ${TESTS:-*}) ;; *) continue ;; esac
	run_one "$(basename "$t")" sh "$t"
done

pass=$(grep -c '^ok - ' "$log")
fail=$(grep -c '^not ok - ' "$log")
if [ "$fail" -ne 0 ]; then
	# The failures, then the last other lines the tests printed (diagnostics).
	grep '^not ok - ' "$log"
	grep -vE '^(ok|not ok) - ' "$log" | grep -E '.' | tail -n 40 | sed 's/^/# /' >&2 || true
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
