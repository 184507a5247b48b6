#!/bin/sh
# API-phase benchmark: triage an N-node fixture cluster with hpnode, then
# make the same API calls with boto3 in one python process, and print wall
# time, CPU time (user+sys) and peak memory of each (median of RUNS runs).
#   sh bench/api-phase.sh N [RUNS]        (default N=1000, RUNS=3)
# Needs: a built ./hpnode, GNU time (/usr/bin/time), python3 with moto+boto3.
set -u
N=${1:-1000}
RUNS=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HPNODE=${HPNODE:-$ROOT/hpnode}
[ -x "$HPNODE" ] || { echo "bench: build hpnode first (make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: needs GNU time (apt-get install time)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpnode-bench.XXXXXX")
FIXTURE_LIB_DIR=$ROOT/tests/fixtures
. "$ROOT/tests/fixtures/lib.sh"
trap 'fixture_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# An N-node cluster from the large fixture's shape.
python3 - "$ROOT/tests/fixtures/large.yaml" "$tmp/bench.yaml" "$N" <<'PY'
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
fixture_start "$tmp/bench.yaml" || exit 1

# measure NAME COMMAND...: RUNS runs, prints the median wall/cpu/rss.
measure() {
	name=$1
	shift
	: >"$tmp/$name.times"
	i=0
	while [ $i -lt "$RUNS" ]; do
		/usr/bin/time -f "%e %U %S %M" -o "$tmp/one" "$@" >/dev/null 2>"$tmp/$name.err" ||
			{ echo "bench: $name failed:" >&2; cat "$tmp/$name.err" >&2; }
		tail -n 1 "$tmp/one" >>"$tmp/$name.times"
		i=$((i + 1))
	done
	python3 - "$name" "$tmp/$name.times" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[2]) if l.strip()]
wall = statistics.median(r[0] for r in rows)
cpu = statistics.median(r[1] + r[2] for r in rows)
rss = statistics.median(r[3] for r in rows) / 1024
print("%-8s wall %7.2f s   cpu %7.2f s   peak rss %7.1f MiB   (median of %d)" % (sys.argv[1], wall, cpu, rss, len(rows)))
PY
}

echo "API phase, $N nodes, fixture at $AWS_ENDPOINT_URL"
# The API phase only: no SSM sessions, no kubectl.
measure hpnode "$HPNODE" triage --cluster hp-bench --region us-west-2 --output json --no-probe --no-kube
measure boto3 python3 "$ROOT/bench/boto3_calls.py" hp-bench
