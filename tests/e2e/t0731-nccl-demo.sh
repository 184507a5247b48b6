#!/bin/sh
# hpnode nccl on the two NCCL fixture clusters through the real kubectl and
# the fixture's SSM sandboxes. nccl-demo.yaml: the hanging job's causes, each
# on the right pod or node with its section of the NCCL guide (NCCL on sockets
# in worker-2's log and the aws-ofi-nccl plugin missing on p5-d, its node, and
# on no other; the master pod on the 64 MB default /dev/shm, measured by
# --exec too), what is right passing, the exit status by --fail-on, and `make
# nccl-demo`'s script. nccl-healthy.yaml: no FAIL and no WARN, with the job
# and without, exit 0 at --fail-on P2, and --exec running one fixed read-only
# script per running container.
T=t0731-nccl-demo
. "$(dirname "$0")/e2e-lib.sh"

if ! command -v kubectl >/dev/null 2>&1; then
	not_ok "kubectl is installed" "the NCCL e2e tests run the real kubectl"
	e2e_done
fi
NCCL_GUIDE=references/nccl-diagnostics-detail.md

# ---- the demo: the job hangs ----
fixture_start "$ROOT/tests/fixtures/nccl-demo.yaml" || { not_ok "nccl demo fixture starts" "see above"; e2e_done; }
export KUBECONFIG="$FIXTURE_KUBECONFIG"
p5a=$(fixture_get nodes.p5-a)
p5b=$(fixture_get nodes.p5-b)
p5c=$(fixture_get nodes.p5-c)
p5d=$(fixture_get nodes.p5-d)

"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --namespace ml --job llama-pretrain --exec --output json \
	--text-file "$e2e_tmp/demo.txt" --save-snapshot "$e2e_tmp/demo.snap" >"$e2e_tmp/demo.json" 2>"$e2e_tmp/demo.err"
expect_status "demo: the diagnostic completes (exit 0 without --fail-on)" 0 $?
check "demo: NCCL on sockets in worker-2's log, the plugin missing on its node p5-d and nowhere else" \
	findings "$e2e_tmp/demo.json" \
	"1:check=nccl.logs,message~EFA_TCP_FALLBACK in" \
	"1:check=nccl.logs,tag=FAIL,priority=P1,section=NC13,node=$p5d,message~EFA_TCP_FALLBACK in ml/llama-pretrain-worker-2 (pytorch" \
	"1:check=nccl.logs,tag=FAIL,priority=P1,section=NC13,node=$p5d,message~OFI_LOAD_FAIL in ml/llama-pretrain-worker-2" \
	"1:check=nccl.ofi-plugin,tag=FAIL" \
	"1:check=nccl.ofi-plugin,tag=FAIL,priority=P1,section=NC13,node=$p5d,message~aws-ofi-nccl plugin (libnccl-net.so) not found on node $p5d"
check "demo: the plugin passes on the three other nodes" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ok = [f for f in d["findings"] if f["check"] == "nccl.ofi-plugin" and f["tag"] == "PASS"]
nodes = set()
for f in ok:
    nodes |= set(f.get("nodes") or [f["node"]])
assert nodes == set(sys.argv[2:5]), (nodes, ok)
' "$e2e_tmp/demo.json" "$p5a" "$p5b" "$p5c"
check "demo: --exec read the master's container (its status, else why not)" python3 -c '
import json, sys
x = json.load(open(sys.argv[1]))["nccl"].get("exec") or {}
pods = x.get("pods") or []
m = [p for p in pods if p.get("pod") == "llama-pretrain-master-0"]
assert m and m[0].get("status") == "ok" and m[0].get("shm_kb"), (x.get("skipped"), [
    (p.get("pod"), p.get("status"), p.get("error")) for p in pods], m)
' "$e2e_tmp/demo.snap"
check "demo: the master pod on the 64 MB default /dev/shm, from its spec and measured inside (--exec)" \
	findings "$e2e_tmp/demo.json" \
	"1:check=nccl.dshm,tag=FAIL" \
	"1:check=nccl.dshm,tag=FAIL,priority=P1,section=NC17.1,node=$p5a,message~Pod ml/llama-pretrain-master-0 has 64 MiB of /dev/shm in its container (df)"
check "demo: why the job hangs and what else is wrong, each with its section" findings "$e2e_tmp/demo.json" \
	"1:check=nccl.containers,tag=FAIL,priority=P1,section=NC20,node=$p5d,message~llama-pretrain-worker-2/pytorch is in CrashLoopBackOff (restarts 4" \
	"0:check=nccl.logs,message~SYSTEM_ERROR in" "0:priority=P0" \
	"1:check=nccl.logs,tag=FAIL,priority=P1,section=NC13,node=$p5d,message~it explains CONNECT_FAIL" \
	"1:check=nccl.logs,tag=FAIL,priority=P1,section=NC2,message~CONNECT_FAIL in ml/llama-pretrain-worker-2" \
	"1:check=nccl.logs,section=NC2,message~it explains SYSTEM_ERROR (" \
	"1:check=nccl.logs,section=NC2,message~(explained by OFI_LOAD_FAIL in the same pod)" \
	"1:check=nccl.logs,tag=FAIL,priority=P1,section=NC1,node=$p5a,message~WATCHDOG_TIMEOUT in ml/llama-pretrain-master-0" \
	"1:check=nccl.env,tag=WARN,priority=P2,section=NC24,message~NCCL_DEBUG=INFO in job ml/llama-pretrain" \
	"1:check=nccl.shm-stale,tag=WARN,section=NC15.1,node=$p5d,message~3 stale /dev/shm/nccl-*" \
	"1:check=nccl.shm-stale,tag=WARN,priority=P2,section=NC15.2,node=$p5d" \
	"0:check~nccl.,tag=FAIL,node=$p5b" "0:check~nccl.,tag=WARN,node=$p5b"
check "demo: what is right passes (EFA devices and libfabric on p5-d too: only the plugin is missing)" \
	findings "$e2e_tmp/demo.json" \
	"1:check=nccl.applicable,tag=PASS" "1:check=nccl.efa-plugin,tag=PASS" \
	"1:check=nccl.headless-service,tag=PASS,message~MASTER_ADDR llama-pretrain-master-0" \
	"1:check=nccl.network-policy,tag=PASS" "1:check=network.efa-sg,tag=PASS,message~inbound" \
	"1:check=nccl.versions,tag=PASS,message~libnccl 2.21.5" \
	"2:check=node.efa,tag=PASS,message~on 4 nodes" "0:check~node.,tag=FAIL" "0:check~node.,tag=WARN"
check "demo: the text report points each finding into the NCCL guide" sh -c '
	grep -q "^  \[FAIL\] EFA_TCP_FALLBACK in ml/llama-pretrain-worker-2 (pytorch, previous log): NCCL fell back from EFA to TCP (2 lines) (explained by OFI_LOAD_FAIL in the same pod); node $3 has no aws-ofi-nccl plugin (nccl.ofi-plugin) → $2 § NC13 (EFA TCP Fallback)$" "$1" &&
	grep -q "^  \[FAIL\] aws-ofi-nccl plugin (libnccl-net.so) not found on node $3, an EFA node: NCCL falls back to TCP → $2 § NC13 (EFA TCP Fallback)$" "$1" &&
	grep -q "^  \[FAIL\] Pod ml/llama-pretrain-master-0 has 64 MiB of /dev/shm in its container (df).* → $2 § NC17.1 (/dev/shm Size)$" "$1"' \
	_ "$e2e_tmp/demo.txt" "$NCCL_GUIDE" "$p5d"
check "demo: hpnode explain prints the sections the findings name" sh -c '
	"$1" explain NC13 | grep -q "EFA TCP Fallback" && "$1" explain NC17.1 | grep -q "/dev/shm"' _ "$HPNODE"
"$HPNODE" nccl --snapshot "$e2e_tmp/demo.snap" --fail-on P1 --quiet
expect_status "demo: --fail-on P1 exits 3" 3 $?
# "unhandled system error" takes its cause (the connect failure before it): no P0 is left.
"$HPNODE" nccl --snapshot "$e2e_tmp/demo.snap" --fail-on P0 --quiet
expect_status "demo: --fail-on P0 exits 0 (the wrapper error is no P0 of its own)" 0 $?

# Without --exec the /dev/shm finding comes from the pod spec alone.
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --namespace ml --job llama-pretrain --no-probe --output json \
	>"$e2e_tmp/spec.json" 2>"$e2e_tmp/spec.err"
expect_status "demo without --exec: completes" 0 $?
check "demo without --exec: the /dev/shm finding from the master's spec" findings "$e2e_tmp/spec.json" \
	"1:check=nccl.dshm,tag=FAIL" \
	"1:check=nccl.dshm,tag=FAIL,priority=P1,section=NC17.1,message~Pod ml/llama-pretrain-master-0 has no memory-backed /dev/shm: its containers get the 64 MB default"
fixture_stop

# make nccl-demo's script: its own fixture, the report, exit 0.
sh "$ROOT/tests/fixtures/nccl-demo.sh" "$HPNODE" >"$e2e_tmp/make.out" 2>&1
expect_status "make nccl-demo's script exits 0" 0 $?
check "make nccl-demo: the NCCL report of the hanging job" sh -c '
	grep -q "^nccl-demo: running: .* nccl --cluster hp-nccl-demo --region us-west-2 --namespace ml --job llama-pretrain$" "$1" &&
	grep -q "^  14. NCCL Diagnostic Summary" "$1" &&
	grep -q "aws-ofi-nccl plugin (libnccl-net.so) not found on node" "$1" &&
	grep -q "^nccl-demo: diagnostic complete (status 0)" "$1"' _ "$e2e_tmp/make.out"
sh "$ROOT/tests/fixtures/nccl-demo.sh" "$e2e_tmp/no-such-hpnode" >/dev/null 2>"$e2e_tmp/make.err"
expect_status "make nccl-demo's script: no binary exits 1" 1 $?
check "... saying what to build" contains "$e2e_tmp/make.err" "is not an executable hpnode binary"

# ---- the healthy cluster ----
fixture_start "$ROOT/tests/fixtures/nccl-healthy.yaml" || { not_ok "nccl healthy fixture starts" "see above"; e2e_done; }
export KUBECONFIG="$FIXTURE_KUBECONFIG"
: >"$FIXTURE_KUBE_RECORD"
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --namespace ml --job llama-pretrain --exec --fail-on P2 \
	--output json >"$e2e_tmp/ok.json" 2>"$e2e_tmp/ok.err"
expect_status "healthy job: no issue at all (--fail-on P2 exits 0)" 0 $?
check "healthy job: no FAIL, no WARN, its checks pass" findings "$e2e_tmp/ok.json" \
	"0:tag=FAIL" "0:tag=WARN" "0:tag=SKIP" "1:check=nccl.dshm,tag=PASS" "1:check=nccl.network-policy,tag=PASS" \
	"1:check=nccl.env,tag=PASS,message~kubectl exec env" "1:check=nccl.containers,tag=PASS" \
	"1:check=nccl.versions,tag=PASS,message~libnccl 2.21.5" \
	"1:check=nccl.logs,tag=PASS,message~No NCCL error pattern" "1:check=nccl.ofi-plugin,tag=PASS,message~on 4 nodes" \
	"1:check=nccl.node-versions,tag=PASS" "1:check=nccl.probe-nodes,tag=PASS"
check "healthy job: every INFO is one that says what was not judged or what was read" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
allowed = ("cluster.identity", "events.signals", "nodes.status", "cluster.vpc-config", "nccl.job",
           "ssm.targets", "ssm.reachability", "nccl.probe-nodes", "node.probe")
bad = [f for f in d["findings"] if f["tag"] == "INFO" and f["check"] not in allowed]
assert not bad, [(f["check"], f["message"]) for f in bad]
' "$e2e_tmp/ok.json"
check "--exec: one fixed read-only script per running container, over the WebSocket GET" python3 -c '
import sys, urllib.parse
lines = [l.strip() for l in open(sys.argv[1])]
assert all(l.startswith("GET ") for l in lines), [l for l in lines if not l.startswith("GET ")][:3]
ex = [l for l in lines if "/exec?" in l]
pods = sorted(l.split("/pods/")[1].split("/exec")[0] for l in ex)
assert pods == ["llama-pretrain-master-0"] + [f"llama-pretrain-worker-{i}" for i in range(3)], pods
cmds = {tuple(urllib.parse.parse_qs(l.split("?", 1)[1])["command"][:2]) for l in ex}
assert cmds == {("sh", "-c")}, cmds
' "$FIXTURE_KUBE_RECORD"
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --sample-nodes all --fail-on P2 --output json \
	>"$e2e_tmp/all.json" 2>"$e2e_tmp/all.err"
expect_status "healthy cluster, every job and node: --fail-on P2 exits 0" 0 $?
check "healthy cluster, every job and node: no FAIL, no WARN" findings "$e2e_tmp/all.json" \
	"0:tag=FAIL" "0:tag=WARN" "2:check=nccl.job,tag=INFO" "1:check=nccl.logs,tag=PASS,message~No NCCL error pattern" \
	"1:check=nccl.logs,tag=PASS,message~nccl-allreduce" \
	"1:check=nccl.probe-nodes,tag=PASS,message~all 5 chosen nodes"
fixture_stop
e2e_done
