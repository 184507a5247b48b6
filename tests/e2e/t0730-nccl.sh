#!/bin/sh
# hpnode nccl end to end against tests/fixtures/nccl.yaml with the real
# kubectl and the fixture's SSM sandboxes: bad flags exit 2 with a clear
# message before anything is collected; the broken job (llama-hang) gives its
# FAIL/WARN findings with the right NCCL guide sections; the healthy job
# (llama-ok) passes; --job scopes the probes to the job's nodes and
# --sample-nodes picks accelerated groups first; --snapshot replays the same
# report; JSON and JUnit are valid; --fail-on sets the exit status; an
# untrusted kubectl gives one WARN and a CloudWatch search instead.
T=t0730-nccl
. "$(dirname "$0")/e2e-lib.sh"

run() { # ARGS...: hpnode nccl, stdout to $e2e_tmp/out, stderr to $e2e_tmp/err; prints the status
	"$HPNODE" nccl "$@" >"$e2e_tmp/out" 2>"$e2e_tmp/err"
	echo $?
}

# ---- usage errors: exit 2, a clear message, nothing collected ----
usage() { # WHAT MESSAGE ARGS...
	what=$1 msg=$2
	shift 2
	rc=$(run "$@")
	if [ "$rc" = 2 ] && grep -qF -- "$msg" "$e2e_tmp/err" && grep -q "hpnode nccl --help" "$e2e_tmp/err" &&
		[ ! -s "$e2e_tmp/out" ]; then
		ok "usage: $what"
	else
		not_ok "usage: $what" "exit $rc: $(head -c 300 "$e2e_tmp/err" | tr '\n' '|')"
	fi
}
usage "no --cluster" "--cluster is required" --region us-west-2
usage "bad namespace" "--namespace must be a Kubernetes namespace name" --cluster c --namespace ML_1
usage "job with a comma" "--job must be a Kubernetes label value" --cluster c --job 'a,b=c'
usage "bad node id" "--node must be an EC2 instance id" --cluster c --node i-xyz
usage "sample-nodes 0" "--sample-nodes must be a whole number from 1 to 50, or 'all'" --cluster c --sample-nodes 0
usage "sample-nodes 51" "--sample-nodes must be a whole number from 1 to 50" --cluster c --sample-nodes 51
usage "orchestrator" "--orchestrator must be eks or slurm (got 'k8s')" --cluster c --orchestrator k8s
usage "since unit" "--since must be a duration such as 90m, 2h or 1d" --cluster c --since 2w
usage "since too long" "--since must be a duration" --cluster c --since 8d
usage "node and sample-nodes" "--node and --sample-nodes cannot be combined" --cluster c --node i-0123456789abcdef0 --sample-nodes 2
usage "node and job" "--node and --job cannot be combined" --cluster c --node i-0123456789abcdef0 --job j
usage "exec without kubectl" "--exec needs kubectl" --cluster c --no-kube --exec
usage "unknown option" "unknown option '--concurrency'" --cluster c --concurrency 3
usage "missing value" "option '--job' needs a value" --cluster c --job
usage "replay with collection options" "--snapshot replays saved data" --snapshot /nonexistent --job j
expect_status "help exits 0" 0 "$(run --help)"
check "help names every option of the brief" sh -c 'for o in --namespace --job --node --sample-nodes \
	--orchestrator --since --exec --profile --output --fail-on --save-snapshot --snapshot --suggest \
	--no-color --debug --max-runtime; do grep -q -- "$o" "$1" || { echo "missing $o"; exit 1; }; done' _ "$e2e_tmp/out"
"$HPNODE" help nccl >"$e2e_tmp/help2" 2>&1
check "hpnode help nccl is nccl --help" cmp -s "$e2e_tmp/out" "$e2e_tmp/help2"

# ---- the fixture: one broken job, one healthy job ----
if ! command -v kubectl >/dev/null 2>&1; then
	not_ok "kubectl is installed" "the NCCL e2e tests run the real kubectl"
	e2e_done
fi
fixture_start "$ROOT/tests/fixtures/nccl.yaml" || { not_ok "nccl fixture starts" "see above"; e2e_done; }
export KUBECONFIG="$FIXTURE_KUBECONFIG"
p5c=$(fixture_get nodes.p5-c)
p5d=$(fixture_get nodes.p5-d)
sys_a=$(fixture_get nodes.sys-a)

# The broken job, scoped by --job: what is wrong, with the sections of the NCCL guide.
: >"$FIXTURE_KUBE_RECORD"
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --namespace ml --job llama-hang --output json \
	--save-snapshot "$e2e_tmp/hang.snap" --text-file "$e2e_tmp/hang.txt" \
	--junit-file "$e2e_tmp/hang.xml" >"$e2e_tmp/hang.json" 2>"$e2e_tmp/hang.err"
expect_status "broken job: the diagnostic completes" 0 $?
check "broken job: the JSON is one valid document of schema hpnode.nccl/1" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "hpnode.nccl/1", d["schema"]
s = d["scope"]
assert (s["namespace"], s["job"], s["orchestrator"], s["cluster"]) == ("ml", "llama-hang", "EKS", "hp-nccl"), s
assert s["mode"].startswith("READ-ONLY"), s
' "$e2e_tmp/hang.json"
check "broken job: pods, /dev/shm, logs, environment and nodes, each with its section" \
	findings "$e2e_tmp/hang.json" \
	"1:check=nccl.containers,tag=FAIL,priority=P1,section=NC20,message~llama-hang-worker-0/pytorch is in CrashLoopBackOff" \
	"1:check=nccl.dshm,tag=FAIL,priority=P1,section=NC17.1,message~Pod ml/llama-hang-worker-0 has no memory-backed /dev/shm" \
	"1:check=nccl.logs,tag=FAIL,section=NC13,message~EFA_TCP_FALLBACK in ml/llama-hang-worker-0 (pytorch" \
	"1:check=nccl.logs,tag=FAIL,section=NC13,message~OFI_LOAD_FAIL in ml/llama-hang-worker-0" \
	"1:check=nccl.logs,tag=FAIL,section=NC17.1,message~SHM_FULL in ml/llama-hang-worker-0" \
	"1:check=nccl.logs,tag=FAIL,priority=P1,section=NC1,message~WATCHDOG_TIMEOUT in ml/llama-hang-master-0" \
	"1:check=nccl.logs,tag=FAIL,priority=P0,section=NC7,message~SYSTEM_ERROR in ml/llama-hang-worker-0" \
	"1:check=nccl.env,tag=WARN,priority=P2,section=NC24,message~NCCL_DEBUG=INFO in job ml/llama-hang" \
	"1:check=nccl.ofi-plugin,tag=FAIL,priority=P1,section=NC13,node=$p5d" \
	"1:check=nccl.shm-stale,tag=WARN,section=NC15.1,node=$p5d,message~3 stale /dev/shm/nccl-*" \
	"1:check=nccl.shm-stale,tag=WARN,section=NC15.2,node=$p5d" \
	"0:check=nccl.ofi-plugin,tag=FAIL,node=$p5c"
check "broken job: what is right passes" findings "$e2e_tmp/hang.json" \
	"1:check=nccl.applicable,tag=PASS" "1:check=nccl.efa-plugin,tag=PASS" \
	"1:check=nccl.headless-service,tag=PASS,message~MASTER_ADDR llama-hang-master-0" \
	"1:check=nccl.network-policy,tag=PASS" "1:check=network.efa-sg,tag=PASS,message~inbound" \
	"1:check=nccl.ofi-plugin,tag=PASS,node=$p5c" "2:check=node.gpu-count,tag=PASS" \
	"0:check~kube.workload,tag=FAIL"
check "--job scopes the probes to the nodes of the job's pods" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want = {sys.argv[2], sys.argv[3]}
assert set(d["nccl_probes"]) == want, sorted(d["nccl_probes"])
assert set(d["probes"]) == want, sorted(d["probes"])
r = d["nccl_run"]["probe_nodes"]
assert r["selection"] == "job", r
assert {c["why"] for c in r["chosen"]} == {"runs pod ml/llama-hang-master-0", "runs pod ml/llama-hang-worker-0"}, r
' "$e2e_tmp/hang.snap" "$p5c" "$p5d"
check "text report: the NCCL Diagnostic Summary with its fields" sh -c '
	grep -q "^  14. NCCL Diagnostic Summary" "$1" && grep -q "^  Namespace: ml$" "$1" &&
	grep -q "^  Job: llama-hang$" "$1" && grep -q "^  Orchestrator: EKS$" "$1" &&
	grep -q "^  Nodes probed: .* (2 of 2 reached)$" "$1" &&
	grep -q "^  Mode: READ-ONLY (no changes applied)$" "$1" &&
	grep -q "^  \[P0 — Fix Immediately\]" "$1" && grep -q "^  \[P1 — Fix Soon\]" "$1"' _ "$e2e_tmp/hang.txt"
check "text report: tags and pointers of the triage contract" sh -c '
	grep -q "  \[FAIL\] aws-ofi-nccl plugin (libnccl-net.so) not found on node .* → references/nccl-diagnostics-detail.md § NC13 (EFA TCP Fallback)$" "$1" &&
	grep -q "^  6. Training Job Pods$" "$1" && grep -q "^  13. NCCL On-Node Checks (via SSM)$" "$1"' _ "$e2e_tmp/hang.txt"
check "JUnit: valid, one testcase per finding" python3 "$ROOT/tests/e2e/junit_check.py" "$e2e_tmp/hang.xml" "$e2e_tmp/hang.json"
check "kubectl only read: GET requests, no exec without --exec" sh -c '
	! grep -v "^GET " "$1" && ! grep -q "/exec" "$1"' _ "$FIXTURE_KUBE_RECORD"
check "AWS: read-only actions only" python3 -c '
import re, sys
bad = [l for l in open(sys.argv[1]) if re.search(r"\b(Create|Delete|Update|Put|Batch|Authorize|Revoke|Modify|Reboot|Replace|Terminate(?!Session)|SendCommand)\w*", l)]
assert not bad, bad[:5]
' "$FIXTURE_RECORD"

# The replay gives the same report.
env -u AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID= AWS_SECRET_ACCESS_KEY= "$HPNODE" nccl \
	--snapshot "$e2e_tmp/hang.snap" --output json >"$e2e_tmp/replay.json" 2>"$e2e_tmp/replay.err"
expect_status "--snapshot replays without AWS" 0 $?
check "--snapshot replay: the same findings and scope" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["findings"] == b["findings"], "findings differ"
assert a["scope"] == b["scope"], (a["scope"], b["scope"])
assert b["run"]["replay"]["file"], b["run"]
' "$e2e_tmp/hang.json" "$e2e_tmp/replay.json"

# --fail-on: the broken job has a P0 (unhandled system error) and P1s.
"$HPNODE" nccl --snapshot "$e2e_tmp/hang.snap" --fail-on P0 --quiet
expect_status "--fail-on P0 on the broken job exits 3" 3 $?
"$HPNODE" nccl --snapshot "$e2e_tmp/hang.snap" --fail-on P1 --output junit >"$e2e_tmp/fo.xml"
expect_status "--fail-on P1 exits 3" 3 $?

# The healthy job passes, read inside its containers too.
: >"$FIXTURE_KUBE_RECORD"
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --namespace ml --job llama-ok --exec --fail-on P2 \
	--output json >"$e2e_tmp/ok.json" 2>"$e2e_tmp/ok.err"
expect_status "healthy job: no issue at all (--fail-on P2 exits 0)" 0 $?
check "healthy job: its checks pass" findings "$e2e_tmp/ok.json" \
	"0:tag=FAIL" "0:tag=WARN" "1:check=nccl.dshm,tag=PASS" "1:check=nccl.network-policy,tag=PASS" \
	"1:check=nccl.env,tag=PASS,message~kubectl exec env" "1:check=nccl.containers,tag=PASS" \
	"1:check=nccl.versions,tag=PASS,message~libnccl 2.21.5" \
	"1:check=nccl.logs,tag=PASS,message~No NCCL error pattern" "2:check=nccl.ofi-plugin,tag=PASS" \
	"1:check=nccl.node-versions,tag=PASS"
check "--exec: one fixed read-only script per running container, over the WebSocket GET" python3 -c '
import sys, urllib.parse
lines = [l.strip() for l in open(sys.argv[1])]
assert all(l.startswith("GET ") for l in lines), [l for l in lines if not l.startswith("GET ")][:3]
ex = [l for l in lines if "/exec?" in l]
pods = sorted(l.split("/pods/")[1].split("/exec")[0] for l in ex)
assert pods == ["llama-ok-launcher", "llama-ok-worker-0", "llama-ok-worker-1"], pods
cmds = {tuple(urllib.parse.parse_qs(l.split("?", 1)[1])["command"][:2]) for l in ex}
assert cmds == {("sh", "-c")}, cmds
' "$FIXTURE_KUBE_RECORD"

# Without --job: every training pod; --sample-nodes takes accelerated groups first.
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --sample-nodes 1 --no-probe --save-snapshot "$e2e_tmp/s1.snap" \
	--output json >"$e2e_tmp/s1.json" 2>&1
expect_status "--sample-nodes 1 completes" 0 $?
check "--sample-nodes 1: one node of the accelerated group" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["nccl_run"]["probe_nodes"]
assert r["selection"] == "sample" and r["requested"] == 1 and len(r["chosen"]) == 1, r
assert r["chosen"][0]["group"] == "gpu-p5", r
' "$e2e_tmp/s1.snap"
check "without --job: the jobs of the namespace-less run" findings "$e2e_tmp/s1.json" \
	"1:check=nccl.job,tag=INFO,message~Job ml/llama-hang (PyTorchJob" \
	"1:check=nccl.job,tag=INFO,message~Job ml/llama-ok (MPIJob" \
	"1:check=nccl.job,tag=INFO,message~Job default/nccl-allreduce (Job"
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --sample-nodes all --save-snapshot "$e2e_tmp/all.snap" \
	--output json >"$e2e_tmp/all.json" 2>&1
expect_status "--sample-nodes all completes" 0 $?
check "--sample-nodes all: every node, the accelerated ones first, the CPU node last" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["nccl_run"]["probe_nodes"]
ids = [c["id"] for c in r["chosen"]]
assert len(ids) == 5 and ids[-1] == sys.argv[2], ids
assert [c["group"] for c in r["chosen"]][:4] == ["gpu-p5"] * 4, r
assert len(d["nccl_probes"]) == 5, sorted(d["nccl_probes"])
' "$e2e_tmp/all.snap" "$sys_a"
check "--sample-nodes all: the broken node is found among them" findings "$e2e_tmp/all.json" \
	"1:check=nccl.ofi-plugin,tag=FAIL,node=$p5d" "3:check=nccl.ofi-plugin,tag=PASS"

# kubectl that points at another cluster: one WARN, the Kubernetes checks skipped, CloudWatch instead.
fixture_kubeconfig "$e2e_tmp/other.kubeconfig" other
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --kubeconfig "$e2e_tmp/other.kubeconfig" --job llama-hang \
	--since 6h --no-probe --output json >"$e2e_tmp/other.json" 2>&1
expect_status "untrusted kubectl: the diagnostic completes" 0 $?
check "untrusted kubectl: one WARN, one SKIP, no Kubernetes PASS, the CloudWatch search" \
	findings "$e2e_tmp/other.json" \
	"1:check=kube.access,tag=WARN,priority=P1,message~aws eks update-kubeconfig" \
	"1:check=nccl.job,tag=SKIP,message~the cluster's CloudWatch logs are searched instead" \
	"0:check=nccl.dshm" "0:check=nccl.logs" "0:check=nccl.env" "0:check=nccl.efa-plugin" \
	"1:check=nccl.cloudwatch,tag=FAIL,section=NC13,node=$p5d,message~EFA_TCP_FALLBACK in CloudWatch stream $p5d/nccl" \
	"1:check=nccl.cloudwatch,tag=FAIL,section=NC1,message~WATCHDOG_TIMEOUT" \
	"1:check=nccl.cloudwatch,tag=PASS,message~shows the job getting through" \
	"1:check=nccl.probe-nodes,tag=WARN,message~the job's pods could not be read"
check "untrusted kubectl: nothing read from the other cluster" lacks "$FIXTURE_KUBE_RECORD" "/other-cluster/api/v1/"
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --kubeconfig "$e2e_tmp/other.kubeconfig" --since 10m \
	--no-probe --output json >"$e2e_tmp/short.json" 2>&1
check "--since 10m: older training lines are outside the window" findings "$e2e_tmp/short.json" \
	"0:check=nccl.cloudwatch,tag=FAIL" "1:check=nccl.cloudwatch,tag=PASS,message~over the last 10 min"
fixture_stop

# RBAC that refuses pods/exec: said, never a silent pass.
variant "$ROOT/tests/fixtures/nccl.yaml" "$e2e_tmp/noexec.yaml" 'd["kubernetes"]["forbid"] = ["pods/exec"]'
fixture_start "$e2e_tmp/noexec.yaml" || { not_ok "no-exec fixture starts" "see above"; e2e_done; }
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --kubeconfig "$FIXTURE_KUBECONFIG" --namespace ml --job llama-ok \
	--exec --no-probe --output json >"$e2e_tmp/noexec.json" 2>&1
expect_status "pods/exec forbidden: completes" 0 $?
check "pods/exec forbidden: each refusal named, no version PASS" findings "$e2e_tmp/noexec.json" \
	">=1:check=nccl.versions,tag=WARN,section=NC26,message~(forbidden)" "0:check=nccl.versions,tag=PASS"
fixture_stop

# Slurm: the controller's NCCL settings and CloudWatch, no Kubernetes check.
fixture_start "$ROOT/tests/fixtures/slurm.yaml" || { not_ok "slurm fixture starts" "see above"; e2e_done; }
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --orchestrator eks --output json >"$e2e_tmp/slurm.json" 2>&1
expect_status "Slurm: completes" 0 $?
check "Slurm: profile and prolog settings read, CloudWatch searched, the orchestrator mismatch said" \
	findings "$e2e_tmp/slurm.json" \
	"1:check=nccl.slurm-env,tag=PASS,message~NCCL_PROTO=simple" \
	"1:check=nccl.cloudwatch,tag=PASS" "0:check=nccl.job" "0:check~kube." \
	"1:check=nccl.applicable,tag=WARN,priority=P2,message~the cluster is orchestrated by Slurm" \
	"1:check=nccl.probe-nodes,tag=PASS,message~ran on all 2 chosen nodes"
check "Slurm: the probes never go to the controller or the login node" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["scope"]["orchestrator"] == "SLURM", d["scope"]
assert all(f["node"] not in (sys.argv[2], sys.argv[3]) for f in d["findings"]
           if f["check"].startswith("nccl.") and f["node"]), "controller or login probed"
' "$e2e_tmp/slurm.json" "$(fixture_get nodes.controller)" "$(fixture_get nodes.login)"
fixture_stop

e2e_done
