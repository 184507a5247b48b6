#!/bin/sh
# Runs every test tier and adds up the "ok"/"not ok" lines:
#   1. unit programs in $UNIT_DIR (tests/unit/test-*.c, corpus replays)
#   2. end-to-end scripts tests/e2e/t*.sh (fixture cluster, real binary)
# Programs and scripts are independent (each fixture serves on its own free
# port, each script has its own scratch directory), so up to TEST_JOBS of
# them run at once; each one's output goes to its own log and the logs are
# read back in a fixed order, so the result does not depend on timing.
# Ends with "N passed, N failed"; exit status 1 when anything failed.
# Environment: HPNODE, SIGV4_SIGN, UNIT_DIR (set by `make test`);
# TESTS='pattern ...' limits the e2e scripts run (TESTS=none: unit tests only);
# TEST_JOBS=N how many run at once (default 8; 1 runs them one by one);
# TEST_TIMES=1 prints the 15 programs that took the most CPU, with their wall
# and CPU seconds (theirs and their children's, user + system), and the CPU
# seconds of all (a forked fixture server's CPU is the fork server's, not
# the script's: FIXTURE_FORKSERVER= counts it in).
set -u
here=$(cd "$(dirname "$0")" && pwd)

# One test: run it, keep its output, note a death without a verdict.
if [ "${1:-}" = "--one" ]; then
	name=$2 log=$3
	shift 3
	start=$(date +%s)
	"$@" >"$log" 2>&1 </dev/null
	rc=$?
	if [ $rc -ne 0 ] && ! grep -q "^not ok - $name" "$log"; then
		echo "not ok - $name: exited with status $rc" >>"$log"
	fi
	# The children's CPU time (user + system), the second line of times.
	times >"$log.cpu"
	cpu=$(sed -n '2s/m/ /g;2s/s//g;2p' "$log.cpu" |
		awk '{ printf "%.1f", $1 * 60 + $2 + $3 * 60 + $4 }')
	echo "$(($(date +%s) - start)) $cpu $name" >"$log.time"
	exit 0
fi

# Scratch files go to memory when TMPDIR is not set and /dev/shm is a tmpfs
# with a GiB free: the suite creates tens of thousands of files (node
# sandboxes, logs, snapshots), and on a virtual disk each creation can cost a
# millisecond of CPU (measured on a CI machine: 1 ms on ext4, 35 us on tmpfs;
# the whole run spent half the system time). It holds about 40 MiB there at
# its peak.
if [ -z "${TMPDIR:-}" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
	[ -w /dev/shm ]; then
	shm_free=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 && $4 ~ /^[0-9]+$/ { print $4 }')
	if [ "${shm_free:-0}" -gt 1048576 ]; then
		TMPDIR=/dev/shm
		export TMPDIR
	fi
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/hpnode-tests.XXXXXX")
forkserver=
trap 'if [ -n "$forkserver" ]; then kill "$forkserver" 2>/dev/null; wait "$forkserver"; fi
rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# The list, in report order: "NAME<TAB>COMMAND WORD..." (no word has a blank).
list=$work/list
: >"$list"
for t in "$UNIT_DIR"/test-*; do
	[ -x "$t" ] || continue
	printf '%s\t%s\n' "$(basename "$t")" "$t" >>"$list"
done
if [ "${TESTS:-*}" != none ]; then
	for t in "$here"/e2e/t*.sh; do
		[ -f "$t" ] || continue
		want=0
		set -f   # the patterns are for case, not for the file system
		for pat in ${TESTS:-*}; do
			case "$(basename "$t")" in $pat) want=1 ;; esac
		done
		set +f
		[ $want = 1 ] || continue
		printf '%s\tsh %s\n' "$(basename "$t")" "$t" >>"$list"
	done
fi

# The scripts' fixture servers are forked from one process that imported
# moto and its models once (tests/fixtures/forkserver.py): a start costs a
# quarter of the CPU of starting server.py, which fixture_start still does
# when the fork server cannot be used. FIXTURE_FORKSERVER= (empty) turns it off.
if grep -q '	sh ' "$list"; then
	if [ -z "${FIXTURE_FORKSERVER+set}" ] && command -v python3 >/dev/null 2>&1; then
		python3 "$here/fixtures/forkserver.py" --serve "$work/forkserver.sock" \
			>"$work/forkserver.log" 2>&1 </dev/null &
		forkserver=$!
		echo "$forkserver" >"$work/forkserver.sock.starting"
		FIXTURE_FORKSERVER=$work/forkserver.sock
		export FIXTURE_FORKSERVER
	fi
fi

# Scripts before programs, the largest scripts (roughly the slowest) first,
# so that a long one does not start last.
order=$work/order
while IFS='	' read -r name cmd; do
	case $cmd in
	"sh "*) size=$(wc -c <"${cmd#sh }") ;;
	*) size=0 ;;
	esac
	printf '%s\t%s\t%s\n' "$size" "$name" "$cmd"
done <"$list" | sort -t '	' -k1,1nr -s | cut -f 2- >"$order"

n=0
while IFS='	' read -r name cmd; do
	n=$((n + 1))
	printf '%s\n' "$name $work/$n.log $cmd"
done <"$order" | xargs -P "${TEST_JOBS:-8}" -L 1 sh "$0" --one

# Read the logs back in list order.
log=$work/all.log
: >"$log"
while IFS='	' read -r name cmd; do
	n=$(grep -n "^$name	" "$order" | head -n 1 | cut -d: -f1)
	cat "$work/$n.log" >>"$log" 2>/dev/null || echo "not ok - $name: no log" >>"$log"
done <"$list"

if [ "${TEST_TIMES:-}" = 1 ]; then
	cat "$work"/*.log.time 2>/dev/null | sort -k2,2rn | head -n 15 |
		sed 's/^/# seconds (wall, CPU): /' >&2
	cat "$work"/*.log.time 2>/dev/null |
		awk '{ c += $2 } END { printf "# CPU seconds of all: %.0f\n", c }' >&2
fi
pass=$(grep -c '^ok - ' "$log")
fail=$(grep -c '^not ok - ' "$log")
if [ "$fail" -ne 0 ]; then
	# The failures, then the last other lines the tests printed (diagnostics).
	grep '^not ok - ' "$log"
	grep -vE '^(ok|not ok) - ' "$log" | grep -E '.' | tail -n 40 | sed 's/^/# /' >&2 || true
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
