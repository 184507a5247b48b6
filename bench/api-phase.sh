#!/bin/sh
# API-phase benchmark: on an N-node fixture cluster, `hpnode triage --no-probe
# --no-kube` against bench/boto3_calls.py (the same requests made with boto3),
# in interleaved rounds (hpnode, boto3, hpnode, boto3, ...), so a change in the
# machine's load touches both alike. Prints the median wall time, CPU time
# (user+sys) and peak RSS of each, and the ratios.
#
# Before timing, one run of each is recorded by the fixture with every
# request's parameters; when the two clients' requests differ (as a multiset:
# order may differ), the difference is printed and no ratio is given.
#
#   sh bench/api-phase.sh N [ROUNDS]          (default N=1000, ROUNDS=5)
#   sh bench/api-phase.sh --growth [ROUNDS]   hpnode alone at 5,000, 10,000,
#                                             20,000 and 40,000 nodes
# Needs: a built ./hpnode, GNU time (/usr/bin/time), python3 with moto+boto3.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HPNODE=${HPNODE:-$ROOT/hpnode}
[ -x "$HPNODE" ] || { echo "bench: build hpnode first (make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: needs GNU time (apt-get install time)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpnode-bench.XXXXXX")
FIXTURE_LIB_DIR=$ROOT/tests/fixtures
. "$ROOT/tests/fixtures/lib.sh"
trap 'fixture_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# make_fixture N: an N-node cluster from the large fixture's shape.
make_fixture() {
	python3 - "$ROOT/tests/fixtures/large.yaml" "$tmp/bench.yaml" "$1" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
n = int(sys.argv[3])
d["cluster"]["name"] = "hp-bench"
d["nodes"] = [{"group": "system", "count": min(50, n)}]
if n > 50:
    d["nodes"].append({"group": "gpu-p5", "count": n - 50})
d["logs"] = {"nodes": {0: {"lifecycle": ["[hyperpod] lifecycle script finished with exit code 0"]}}}
yaml.safe_dump(d, open(sys.argv[2], "w"), sort_keys=False)
PY
}

run_hpnode() {
	"$HPNODE" triage --cluster hp-bench --region us-west-2 --output json --no-probe --no-kube
}
run_boto3() {
	python3 "$ROOT/bench/boto3_calls.py" hp-bench
}

# timed NAME: one timed run of run_NAME, appended to $tmp/NAME.times.
timed() {
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/one" sh -c ". '$tmp/fns.sh'; run_$1" \
		>/dev/null 2>"$tmp/$1.err" || { echo "bench: $1 failed:" >&2; cat "$tmp/$1.err" >&2; }
	tail -n 1 "$tmp/one" >>"$tmp/$1.times"
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
    print("  %-7s wall %7.3f s (min %.3f, max %.3f)   cpu %7.3f s   peak rss %7.1f MiB   (median of %d)"
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
run_boto3() { python3 '$ROOT/bench/boto3_calls.py' hp-bench; }
EOF

if [ "${1:-}" = "--growth" ]; then
	ROUNDS=${2:-3}
	echo "hpnode API phase growth (median of $ROUNDS runs each; no SSM sessions, no kubectl)"
	for N in 5000 10000 20000 40000; do
		make_fixture "$N"
		fixture_start "$tmp/bench.yaml" || exit 1
		: >"$tmp/hpnode.times"
		i=0
		while [ $i -lt "$ROUNDS" ]; do timed hpnode; i=$((i + 1)); done
		echo "$N nodes:"
		summary hpnode
		fixture_stop
	done
	exit 0
fi

N=${1:-1000}
ROUNDS=${2:-5}
make_fixture "$N"
fixture_start "$tmp/bench.yaml" --record-params "$tmp/params.log" || exit 1

# The requests of each client, compared before anything is timed.
: >"$tmp/params.log"
run_hpnode >/dev/null 2>&1
sort "$tmp/params.log" >"$tmp/hpnode.req"
: >"$tmp/params.log"
run_boto3 >/dev/null 2>&1
sort "$tmp/params.log" >"$tmp/boto3.req"
same=1
if ! cmp -s "$tmp/hpnode.req" "$tmp/boto3.req"; then
	same=0
	echo "bench: hpnode and boto3_calls.py did not send the same requests (< hpnode, > boto3):"
	diff "$tmp/hpnode.req" "$tmp/boto3.req" | grep '^[<>]' | cut -c1-200 | head -n 20
fi
echo "API phase, $N nodes, $(wc -l <"$tmp/hpnode.req") requests per run, $ROUNDS interleaved rounds," \
	"$(nproc) CPUs, fixture at $AWS_ENDPOINT_URL"
: >"$tmp/hpnode.times"
: >"$tmp/boto3.times"
i=0
while [ $i -lt "$ROUNDS" ]; do
	timed hpnode
	timed boto3
	i=$((i + 1))
done
if [ $same -eq 1 ]; then
	summary hpnode boto3
else
	summary hpnode
	summary boto3
	echo "  no ratio: the requests differ"
fi
