#!/bin/sh
# Probe-sweep scale benchmark: hpnode's wall time, CPU time and peak memory
# for a live triage of N probed fixture nodes (saving its snapshot), then for
# the replay of that snapshot; the snapshot's size.
#   sh tests/bench/probe-scale.sh N [CONCURRENCY]      (default N=1000, 64 sessions at once)
# The cluster is healthy.yaml with N nodes (N-4 p5, 2 g5, 2 CPU nodes, every
# one with its full probe data), served in the fixture's fast mode
# (server.py --probe-cache: the probe runs in a sandbox once per node kind),
# with no StartSession rate limit; hpnode runs with --ssm-rate 1000.
# Memory and times come from /usr/bin/time -v (GNU time). With BENCH_KEEP=DIR
# the snapshot, the reports and the fixture's records are left in DIR.
# Needs: a built ./hpnode, python3 with moto+boto3+PyYAML, the openssl command,
# GNU time at /usr/bin/time.
set -u
N=${1:-1000}
CONC=${2:-64}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HPNODE=${HPNODE:-$ROOT/hpnode}
TIME=${TIME_CMD:-/usr/bin/time}
[ -x "$HPNODE" ] || { echo "bench: build hpnode first (make)" >&2; exit 1; }
"$TIME" -v true >/dev/null 2>&1 || { echo "bench: needs GNU time at $TIME (apt-get install time)" >&2; exit 1; }
case $N in
'' | *[!0-9]*) echo "bench: N must be a whole number of nodes (got '$N')" >&2; exit 2 ;;
esac
[ "$N" -ge 8 ] || { echo "bench: N must be at least 8" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpnode-bench.XXXXXX")
FIXTURE_LIB_DIR=$ROOT/tests/fixtures
. "$ROOT/tests/fixtures/lib.sh"
keep() {
	[ -n "${BENCH_KEEP:-}" ] || return 0
	mkdir -p "$BENCH_KEEP" && cp "$tmp"/*.snap "$tmp"/*.txt "$tmp"/*.json "$tmp"/*.xml \
		"$tmp"/*.time "$tmp"/*.err "$BENCH_KEEP"/ 2>/dev/null
	[ -n "${FIXTURE_SSM_RECORD:-}" ] && cp "$FIXTURE_SSM_RECORD" "$BENCH_KEEP"/ 2>/dev/null
	return 0
}
trap 'keep; fixture_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# healthy.yaml at N nodes: subnets wide enough, logs for two nodes only
# (listing 2N log streams is the API bench's business), no Kubernetes.
python3 - "$ROOT/tests/fixtures/healthy.yaml" "$tmp/scale.yaml" "$N" <<'PY' || exit 1
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
n = int(sys.argv[3])
counts = {"gpu-p5": n - 4, "worker-g5": 2, "system": 2}
for g in d["nodes"]:
    g["count"] = counts[g["group"]]
d["description"] = "healthy.yaml at %d nodes (tests/bench/probe-scale.sh)" % n
d["cluster"]["name"] = "hp-scale"
cidrs = {"private-a": "10.2.0.0/17", "private-b": "10.2.128.0/18", "public-a": "10.2.192.0/24"}
for s in d["network"]["subnets"]:
    s["cidr"] = cidrs[s["alias"]]
line = "[hyperpod] lifecycle script on_create.sh finished with exit code 0"
d["logs"] = {"nodes": {0: {"lifecycle": [line]}, n - 1: {"lifecycle": [line]}}}
d.pop("kubernetes", None)
yaml.safe_dump(d, open(sys.argv[2], "w"), sort_keys=False)
PY
FIXTURE_MAX_SECONDS=${FIXTURE_MAX_SECONDS:-7200}
export FIXTURE_MAX_SECONDS
fixture_start "$tmp/scale.yaml" --probe-cache || exit 1

# measure NAME COMMAND...: runs it under GNU time; NAME.time holds the figures.
measure() {
	name=$1
	shift
	"$TIME" -v -o "$tmp/$name.time" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	# 0: nothing at --fail-on's level; 3: findings (the time file says "exited with non-zero").
	if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
		echo "bench: $name failed (exit status $rc):" >&2
		tail -n 20 "$tmp/$name.err" >&2
		exit 1
	fi
}

measure live "$HPNODE" triage --cluster hp-scale --no-kube --concurrency "$CONC" --ssm-rate 1000 \
	--probe-timeout 600 --max-runtime 7200 --fail-on P1 --quiet \
	--text-file "$tmp/live.txt" --json-file "$tmp/live.json" --junit-file "$tmp/live.xml" \
	--save-snapshot "$tmp/scale.snap"
measure replay "$HPNODE" triage --snapshot "$tmp/scale.snap" --fail-on P1 --quiet \
	--text-file "$tmp/replay.txt" --json-file "$tmp/replay.json" --junit-file "$tmp/replay.xml"

python3 - "$tmp" "$N" "$CONC" "$FIXTURE_SSM_RECORD" <<'PY'
import json, os, sys
tmp, n, conc, ssm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def figures(name):
    t = {}
    for line in open(os.path.join(tmp, name + ".time")):
        k, _, v = line.strip().rpartition(": ")
        t[k] = v
    wall = 0.0
    for part in t["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"):
        wall = wall * 60 + float(part)
    cpu = float(t["User time (seconds)"]) + float(t["System time (seconds)"])
    return wall, cpu, int(t["Maximum resident set size (kbytes)"]) / 1024
snap = os.path.join(tmp, "scale.snap")
size = os.path.getsize(snap)
# The sweep's totals: the last member of the file (read from its end, not whole).
with open(snap, "rb") as fh:
    fh.seek(max(0, size - 65536))
    tail = fh.read().decode("utf-8", "replace")
at = tail.rfind('"probes_meta":')
meta = json.JSONDecoder().raw_decode(tail[at + len('"probes_meta":'):].lstrip())[0] if at >= 0 else {}
lines = open(ssm).read().splitlines()
starts = sum(1 for l in lines if l.startswith("start "))
cached = sum(1 for l in lines if l.startswith("cached "))
print("probe scale: %d nodes (healthy.yaml, fast mode), %d sessions at once" % (n, conc))
print("  probed %s, unreachable %s, not probed %s; %d sessions, %d served from the fixture's cache"
      % (meta.get("probed", "?"), meta.get("unreachable", "?"), meta.get("skipped", "?"),
         starts, cached))
for name in ("live", "replay"):
    wall, cpu, rss = figures(name)
    print("  %-6s  wall %7.1f s   CPU %6.1f s   max RSS %6.1f MiB" % (name, wall, cpu, rss))
print("  snapshot %.1f MiB; reports: text %.1f KiB, JSON %.1f KiB, JUnit %.1f KiB" % (
    size / 2**20, *(os.path.getsize(os.path.join(tmp, "live." + e)) / 1024
                    for e in ("txt", "json", "xml"))))
live, replay = (json.load(open(os.path.join(tmp, k + ".json")))["findings"]
                for k in ("live", "replay"))
print("  live and replay findings %s (%d findings)" % ("agree" if live == replay else "DIFFER",
                                                        len(live)))
if meta.get("probed") != n:
    print("bench: %s of %d nodes were probed; the figures are not those of N probed nodes"
          % (meta.get("probed", "?"), n), file=sys.stderr)
sys.exit(0 if live == replay and meta.get("probed") == n else 1)
PY
