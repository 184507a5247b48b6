#!/bin/sh
# SSM probe-sweep benchmark: N fixture nodes, each taking LATENCY seconds to
# answer its session, behind a fixture that allows RATE StartSession calls
# per second; hpnode probes them all at its defaults (16 at once, RATE/s)
# and the wall time is printed next to the floor N/RATE + LATENCY.
#   sh tests/bench/probe-sweep.sh N [RATE] [LATENCY]     (default N=100, 3/s, 2 s)
# Needs: a built ./hpnode, python3 with moto+boto3+PyYAML, the openssl command.
set -u
N=${1:-100}
RATE=${2:-3}
LATENCY=${3:-2}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HPNODE=${HPNODE:-$ROOT/hpnode}
[ -x "$HPNODE" ] || { echo "bench: build hpnode first (make)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpnode-bench.XXXXXX")
FIXTURE_LIB_DIR=$ROOT/tests/fixtures
. "$ROOT/tests/fixtures/lib.sh"
trap 'fixture_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# N Running nodes in two groups, each with a meminfo for the probe to read.
python3 - "$tmp/sweep.yaml" "$N" <<'PY'
import sys, yaml
n = int(sys.argv[2])
mem = "MemTotal:       2097152000 kB\n" + "".join(
    "Field%04d:      %10d kB\n" % (i, i * 1024) for i in range(60))
d = {
    "cluster": {"name": "hp-sweep", "orchestrator": {"slurm": {}}},
    "instance_groups": [{"name": "controller", "type": "ml.m5.2xlarge"},
                        {"name": "gpu", "type": "ml.p5.48xlarge"}],
    "probe_defaults": {"files": {"/proc/meminfo": mem}},
    "nodes": [{"group": "controller", "count": 1}, {"group": "gpu", "count": n - 1}],
}
yaml.safe_dump(d, open(sys.argv[1], "w"), sort_keys=False)
PY
fixture_start "$tmp/sweep.yaml" --ssm-rate "$RATE" --probe-latency "$LATENCY" || exit 1

start=$(date +%s.%N)
"$HPNODE" triage --cluster hp-sweep --ssm-rate "$RATE" --output json \
	--save-snapshot "$tmp/sweep.snap" >"$tmp/out.json" 2>"$tmp/err" ||
	[ $? -eq 3 ] || { echo "bench: hpnode failed:" >&2; cat "$tmp/err" >&2; exit 1; }
end=$(date +%s.%N)
python3 - "$tmp/sweep.snap" "$N" "$RATE" "$LATENCY" "$start" "$end" "$FIXTURE_RECORD" <<'PY'
import json, sys
snap = json.load(open(sys.argv[1]))
n, rate, lat = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
total = float(sys.argv[6]) - float(sys.argv[5])
m = snap["probes_meta"]
calls = [l.strip() for l in open(sys.argv[7])]
starts = calls.count("ssm:StartSession")
floor = n / rate + lat
print("SSM probe sweep: %d nodes, fixture limit %g StartSession/s, %g s per session" % (n, rate, lat))
print("  probed %d, unreachable %d, not probed %d; %d StartSession calls (%d throttled)"
      % (m["probed"], m["unreachable"], m["skipped"], starts, starts - n))
print("  sweep wall time %6.1f s   floor N/%g + %g = %6.1f s   (%.2f x the floor)"
      % (m["wall_ms"] / 1000, rate, lat, floor, m["wall_ms"] / 1000 / floor))
print("  whole triage    %6.1f s" % total)
PY
