#!/bin/sh
# hpnode nccl on one large training job: a fixture cluster with a PODS-pod
# PyTorchJob (tests/bench/nccl_job_fixture.py: eight pods per p5 node, LINES lines
# of NCCL start-up and training output per pod), then
#   hpnode nccl --cluster hp-nccl-bench --namespace ml --job bench-job --no-probe
# ROUNDS times. Each round prints the wall time; the CPU time of hpnode itself
# and of the kubectl processes it ran (wait4's rusage, hpnode's own from its
# /proc/PID/stat sampled every 10 ms until it exits); hpnode's peak resident
# memory (VmHWM) and the largest kubectl's; the pods and log lines scanned and
# the hits kept; the log requests the fixture's Kubernetes API served; and
# the fixture server's CPU over the run: so a slow run says whether hpnode,
# kubectl or the fixture took the time.
#   sh tests/bench/nccl-job.sh [PODS] [LINES] [ROUNDS]   (default 256 pods, 600 lines, 3 rounds)
#   PROBE=1 sh tests/bench/nccl-job.sh ...               also run both probes on the job's nodes
#   HPNODE_ARGS='--log-pods 64' sh tests/bench/nccl-job.sh   more hpnode options
# Needs: a built ./hpnode, kubectl, python3 with moto+boto3+PyYAML.
set -u
PODS=${1:-256}
LINES=${2:-600}
ROUNDS=${3:-3}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HPNODE=${HPNODE:-$ROOT/hpnode}
[ -x "$HPNODE" ] || { echo "bench: build hpnode first (make)" >&2; exit 1; }
command -v kubectl >/dev/null 2>&1 || { echo "bench: kubectl is not on PATH" >&2; exit 1; }
case $PODS$LINES$ROUNDS in *[!0-9]*) echo "bench: PODS, LINES and ROUNDS are whole numbers" >&2; exit 2 ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hpnode-bench.XXXXXX")
FIXTURE_LIB_DIR=$ROOT/tests/fixtures
. "$ROOT/tests/fixtures/lib.sh"
trap 'fixture_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

python3 "$ROOT/tests/bench/nccl_job_fixture.py" "$tmp/job.yaml" "$PODS" "$LINES" || exit 1
t0=$(date +%s.%N)
fixture_start "$tmp/job.yaml" || exit 1
t1=$(date +%s.%N)
export KUBECONFIG="$FIXTURE_KUBECONFIG"
probe=--no-probe
[ "${PROBE:-0}" = 1 ] && probe=
# The fixture server's CPU seconds (utime + stime of its process).
server_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$FIXTURE_PID/stat"
}

echo "bench: $PODS pods ($LINES log lines each) on $(fixture_get node_count) nodes; fixture ready in" \
	"$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; load $(cut -d' ' -f1-3 /proc/loadavg)"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	: >"$FIXTURE_KUBE_RECORD"
	s0=$(server_cpu)
	# shellcheck disable=SC2086
	python3 - "$tmp/time.$r" "$tmp/err.$r" "$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --namespace ml \
		--job bench-job $probe ${HPNODE_ARGS:-} --output json --save-snapshot "$tmp/snap.$r" <<'PY'
import json, os, subprocess, sys, time
hz = os.sysconf("SC_CLK_TCK")
t0 = time.monotonic()
with open(sys.argv[2], "w") as err:
    child = subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL, stderr=err)
    own_cpu = hwm = 0.0
    while True:
        try:
            with open(f"/proc/{child.pid}/stat") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
            if f[0] != "Z":
                own_cpu = (int(f[11]) + int(f[12])) / hz
            with open(f"/proc/{child.pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmHWM:"):
                        hwm = int(line.split()[1]) / 1024
        except (OSError, IndexError, ValueError):
            pass
        pid, status, ru = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.01)
wall = time.monotonic() - t0
json.dump({"rc": os.waitstatus_to_exitcode(status), "wall": wall, "own_cpu": own_cpu,
           "cpu": ru.ru_utime + ru.ru_stime, "hwm": hwm, "maxrss": ru.ru_maxrss / 1024},
          open(sys.argv[1], "w"))
PY
	s1=$(server_cpu)
	rc=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["rc"])' "$tmp/time.$r")
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
		echo "bench: hpnode nccl exited $rc:" >&2
		cat "$tmp/err.$r" >&2
		exit 1
	fi
	python3 - "$tmp/time.$r" "$tmp/snap.$r" "$FIXTURE_KUBE_RECORD" "$s0" "$s1" "$r" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
n = json.load(open(sys.argv[2]))["nccl"]
reads = n.get("log_reads", [])
pods = {(x["namespace"], x["pod"]) for x in reads}
ok = sum(1 for x in reads if x["status"] == "ok")
lines = sum(x.get("lines", 0) for x in reads)
hits = len(n.get("log_scan", {}).get("hits", []))
logs = sum(1 for l in open(sys.argv[3]) if "/log?" in l)
print("  round %s: wall %.2f s | CPU hpnode %.2f s, kubectl %.2f s | peak RSS hpnode %.1f MiB, largest "
      "child %.1f MiB | fixture CPU %.2f s" % (sys.argv[6], t["wall"], t["own_cpu"], t["cpu"] - t["own_cpu"],
                                            t["hwm"], t["maxrss"], float(sys.argv[5]) - float(sys.argv[4])))
print("           pods scanned %d of %d | log reads %d (%d ok, %d lines) | log requests served %d | "
      "hits kept %d" % (len(pods), len(n.get("pods", [])), len(reads), ok, lines, logs, hits))
PY
	r=$((r + 1))
done
