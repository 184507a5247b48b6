#!/bin/sh
# API-phase benchmark: on an N-node fixture cluster, `hpnode triage --no-probe
# --no-kube` against tests/bench/boto3_calls.py (the same requests made with boto3),
# in interleaved rounds (hpnode, boto3, hpnode, boto3, ...), so a change in the
# machine's load touches both alike. Prints the median wall time, CPU time
# (user+sys) and peak RSS of each, and the ratios.
#
# Before timing, one run of each is recorded by the fixture with every
# request's parameters; when the two clients' requests differ (as a multiset:
# order may differ), the difference is printed and no ratio is given. The
# timed rounds then run against the same cluster served again without
# recording (after one untimed run that warms it). The node list is the one
# exception: hpnode reads it in partitions, boto3 as its paginator does (one
# chain), so those requests are counted for each, not compared.
#
#   sh tests/bench/api-phase.sh N [ROUNDS]          (default N=1000, ROUNDS=5)
#   sh tests/bench/api-phase.sh --latency MS [N[,N...]] [ROUNDS]
#                                             the timed rounds behind a fixture
#                                             that holds every request MS ms
#                                             (server.py --latency-ms); N
#                                             defaults to 1000,20000,100000
#                                             and ROUNDS to 1
#   sh tests/bench/api-phase.sh --growth [ROUNDS]   hpnode alone at 5,000, 10,000,
#                                             20,000 and 40,000 nodes, and its
#                                             cost per 1,000 nodes listed
# Needs: a built ./hpnode and python3 with moto and boto3.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HPNODE=${HPNODE:-$ROOT/hpnode}
[ -x "$HPNODE" ] || { echo "bench: build hpnode first (make)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpnode-bench.XXXXXX")
FIXTURE_LIB_DIR=$ROOT/tests/fixtures
. "$ROOT/tests/fixtures/lib.sh"
trap 'fixture_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

LATENCY=0
if [ "${1:-}" = "--latency" ]; then
	LATENCY=${2:?--latency needs milliseconds}
	shift 2
fi

# make_fixture N: an N-node cluster from the large fixture's shape, its p5
# nodes created in batches of 250 a minute apart (as a cluster grows).
make_fixture() {
	python3 - "$ROOT/tests/fixtures/large.yaml" "$tmp/bench.yaml" "$1" <<'PY'
import datetime as dt, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
n = int(sys.argv[3])
d["cluster"]["name"] = "hp-bench"
d["nodes"] = [{"group": "system", "count": min(50, n)}]
t0 = dt.datetime(2026, 10, 1, tzinfo=dt.timezone.utc)
left, i = n - 50, 0
while left > 0:
    d["nodes"].append({"group": "gpu-p5", "count": min(250, left),
                       "launch_time": (t0 + dt.timedelta(minutes=i)).isoformat()})
    left, i = left - 250, i + 1
d["logs"] = {"nodes": {0: {"lifecycle": ["[hyperpod] lifecycle script finished with exit code 0"]}}}
yaml.safe_dump(d, open(sys.argv[2], "w"), sort_keys=False)
PY
}

run_hpnode() {
	"$HPNODE" triage --cluster hp-bench --region us-west-2 --output json --no-probe --no-kube
}
# boto3 runs on the interpreter itself, not through a version manager's shim
# (whose own processes would count as boto3's CPU).
PY3=$(python3 -c 'import sys; print(sys.executable)')
run_boto3() {
	"$PY3" "$ROOT/tests/bench/boto3_calls.py" hp-bench
}

# timed NAME: one timed run of run_NAME, appended to $tmp/NAME.times as
# "wall user sys maxrss_kib": wall from a monotonic clock, CPU and peak
# memory from wait4's rusage in microseconds (/usr/bin/time prints 10 ms).
timed() {
	python3 - "$tmp/$1.times" "$tmp/$1.err" sh -c ". '$tmp/fns.sh'; run_$1" <<'PY' ||
import os, subprocess, sys, time
# wait4 gives this child's usage (with its own children's), nothing else the
# interpreter may have reaped before (a version-manager shim's processes).
t0 = time.monotonic()
with open(sys.argv[2], "w") as err:
    child = subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL, stderr=err)
    _, status, ru = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
wall = time.monotonic() - t0
rc = child.returncode
with open(sys.argv[1], "a") as out:
    out.write("%.4f %.4f %.4f %d\n" % (wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss))
sys.exit(rc)
PY
		{ echo "bench: $1 failed:" >&2; cat "$tmp/$1.err" >&2; }
}

# summary NAME...: medians per client and, for two, the ratios of the first to the second.
summary() {
	python3 - "$tmp" "$@" <<'PY'
import statistics, sys
tmp, names = sys.argv[1], sys.argv[2:]
med = {}
for n in names:
    rows = [list(map(float, l.split())) for l in open(f"{tmp}/{n}.times") if l.strip()]
    wall = statistics.median(r[0] for r in rows)
    cpu = statistics.median(r[1] + r[2] for r in rows)
    rss = statistics.median(r[3] for r in rows) / 1024
    med[n] = (wall, cpu)
    print("  %-7s wall %7.3f s (min %.3f, max %.3f)   cpu %7.4f s   peak rss %7.1f MiB   (median of %d)"
          % (n, wall, min(r[0] for r in rows), max(r[0] for r in rows), cpu, rss, len(rows)))
if len(names) == 2 and all(med[n][0] > 0 and med[n][1] > 0 for n in names):
    a, b = med[names[0]], med[names[1]]
    print("  %s / %s: wall %.2f x, cpu %.3f x (%.1f %%)" % (names[0], names[1], a[0] / b[0],
          a[1] / b[1], 100 * a[1] / b[1]))
PY
}

# The two commands, for the timed shell.
cat >"$tmp/fns.sh" <<EOF
run_hpnode() { '$HPNODE' triage --cluster hp-bench --region us-west-2 --output json --no-probe --no-kube; }
run_boto3() { '$PY3' '$ROOT/tests/bench/boto3_calls.py' hp-bench; }
EOF

if [ "${1:-}" = "--growth" ]; then
	ROUNDS=${2:-3}
	echo "hpnode API phase growth (median of $ROUNDS runs each after one untimed run;" \
		"no SSM sessions, no kubectl; load: $(cut -d' ' -f1-3 /proc/loadavg))"
	: >"$tmp/growth"
	for N in 5000 10000 20000 40000; do
		make_fixture "$N"
		fixture_start "$tmp/bench.yaml" || exit 1
		run_hpnode >/dev/null 2>&1    # the fixture renders each node's summary once
		: >"$tmp/hpnode.times"
		i=0
		while [ $i -lt "$ROUNDS" ]; do timed hpnode; i=$((i + 1)); done
		echo "$N nodes:"
		summary hpnode
		printf '%s ' "$N" >>"$tmp/growth"
		python3 -c 'import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
print(statistics.median(r[0] for r in rows), statistics.median(r[1] + r[2] for r in rows),
      statistics.median(r[3] for r in rows) / 1024)' "$tmp/hpnode.times" >>"$tmp/growth"
		fixture_stop
	done
	# Cost per 1,000 nodes listed: flat means linear.
	python3 - "$tmp/growth" <<'PY'
import sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
print("  nodes   listed   wall s   cpu s   peak MiB   per 1,000 listed: wall ms  cpu ms  MiB")
for n, wall, cpu, rss in rows:
    listed = n
    k = listed / 1000
    print("  %6d  %6d  %7.3f  %6.3f  %8.1f   %27.1f  %6.1f  %4.2f%s" % (
        n, listed, wall, cpu, rss, 1000 * wall / k, 1000 * cpu / k, rss / k,
        ""))
base = rows
if len(base) >= 2:
    (n0, w0, c0, _), (n1, w1, c1, _) = base[0], base[-1]
    print("  from %d to %d nodes: wall %.2fx, cpu %.2fx for %.0fx the nodes (linear: %.0fx)" % (
        n0, n1, w1 / w0, c1 / c0, n1 / n0, n1 / n0))
PY
	exit 0
fi

# bench_one N ROUNDS: the requests compared, then ROUNDS interleaved timed rounds.
bench_one() {
N=$1
ROUNDS=$2
make_fixture "$N"
fixture_start "$tmp/bench.yaml" --record-params "$tmp/params.log" --stats-file "$tmp/stats.json" ||
	exit 1
conns() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["connections"])' "$tmp/stats.json"; }

# The requests of each client, compared before anything is timed (the node
# list's pages counted apart: hpnode's partitions are not boto3's chain).
: >"$tmp/params.log"
run_hpnode >/dev/null 2>&1
grep -c '^sagemaker:ListClusterNodes ' "$tmp/params.log" >"$tmp/hpnode.pages"
grep -v '^sagemaker:ListClusterNodes ' "$tmp/params.log" | sort >"$tmp/hpnode.req"
c0=$(conns)
: >"$tmp/params.log"
run_boto3 >"$tmp/boto3.out" 2>&1
grep -c '^sagemaker:ListClusterNodes ' "$tmp/params.log" >"$tmp/boto3.pages"
grep -v '^sagemaker:ListClusterNodes ' "$tmp/params.log" | sort >"$tmp/boto3.req"
c1=$(conns)
same=1
if ! cmp -s "$tmp/hpnode.req" "$tmp/boto3.req"; then
	same=0
	echo "bench: hpnode and boto3_calls.py did not send the same requests (< hpnode, > boto3):"
	diff "$tmp/hpnode.req" "$tmp/boto3.req" | grep '^[<>]' | cut -c1-200 | head -n 20
fi
if ! grep -q "^nodes read: $N\$" "$tmp/boto3.out"; then
	same=0
	echo "bench: boto3 did not read $N nodes: $(grep '^nodes read' "$tmp/boto3.out")"
fi
# The timed rounds run against the same cluster served without any recording.
fixture_stop
if [ "$LATENCY" != 0 ]; then
	fixture_start "$tmp/bench.yaml" --latency-ms "$LATENCY" || exit 1
else
	fixture_start "$tmp/bench.yaml" || exit 1
fi
run_hpnode >/dev/null 2>&1    # the fixture renders each node's summary once
echo "API phase, $N nodes, $(($(wc -l <"$tmp/hpnode.req") + $(cat "$tmp/hpnode.pages"))) requests" \
	"per run for hpnode ($(cat "$tmp/hpnode.pages") node pages) and" \
	"$(($(wc -l <"$tmp/boto3.req") + $(cat "$tmp/boto3.pages"))) for boto3 ($(cat "$tmp/boto3.pages") node pages)," \
	"$ROUNDS interleaved rounds, $(nproc) CPUs, fixture at $AWS_ENDPOINT_URL, ${LATENCY} ms a request"
echo "  connections per run: hpnode $c0, boto3 $((c1 - c0)); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$tmp/hpnode.times"
: >"$tmp/boto3.times"
i=0
while [ $i -lt "$ROUNDS" ]; do
	timed hpnode
	timed boto3
	i=$((i + 1))
done
echo "  load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $same -eq 1 ]; then
	summary hpnode boto3
else
	summary hpnode
	summary boto3
	echo "  no ratio: the requests differ"
fi
fixture_stop
}

if [ "$LATENCY" != 0 ]; then
	SIZES=${1:-1000,20000,100000}
	ROUNDS=${2:-1}
else
	SIZES=${1:-1000}
	ROUNDS=${2:-5}
fi
for N in $(echo "$SIZES" | tr ',' ' '); do
	bench_one "$N" "$ROUNDS"
done
