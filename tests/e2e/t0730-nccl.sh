#!/bin/sh
# hpnode nccl end to end against tests/fixtures/nccl-demo.yaml with the real
# kubectl and the fixture's SSM sandboxes: bad flags exit 2 with a clear
# message before anything is collected; the report's contract (JSON scope,
# summary fields, tags and pointers, JUnit; the findings themselves are
# t0731-nccl-demo's); --job scopes the probes to the job's nodes and
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
usage "log-pods 0" "--log-pods must be a whole number from 1 to 2000 (got '0')" --cluster c --log-pods 0
usage "log-pods 2001" "--log-pods must be a whole number from 1 to 2000" --cluster c --log-pods 2001
usage "log-pods not a number" "--log-pods must be a whole number from 1 to 2000 (got '8x')" --cluster c --log-pods 8x
usage "log-pods without kubectl" "--log-pods needs kubectl" --cluster c --no-kube --log-pods 8
usage "replay with --log-pods" "--snapshot replays saved data" --snapshot /nonexistent --log-pods 8
usage "unknown option" "unknown option '--concurrency'" --cluster c --concurrency 3
usage "missing value" "option '--job' needs a value" --cluster c --job
usage "replay with collection options" "--snapshot replays saved data" --snapshot /nonexistent --job j
expect_status "help exits 0" 0 "$(run --help)"
check "help names every option of the brief" sh -c 'for o in --namespace --job --node --sample-nodes \
	--orchestrator --since --exec --log-pods --profile --output --fail-on --save-snapshot --snapshot --suggest \
	--no-color --debug --max-runtime; do grep -q -- "$o" "$1" || { echo "missing $o"; exit 1; }; done' _ "$e2e_tmp/out"
"$HPNODE" help nccl >"$e2e_tmp/help2" 2>&1
check "hpnode help nccl is nccl --help" cmp -s "$e2e_tmp/out" "$e2e_tmp/help2"

# ---- the demo fixture: the command's contract (its findings: t0731-nccl-demo) ----
if ! command -v kubectl >/dev/null 2>&1; then
	not_ok "kubectl is installed" "the NCCL e2e tests run the real kubectl"
	e2e_done
fi
fixture_start "$ROOT/tests/fixtures/nccl-demo.yaml" || { not_ok "nccl demo fixture starts" "see above"; e2e_done; }
export KUBECONFIG="$FIXTURE_KUBECONFIG"
p5a=$(fixture_get nodes.p5-a)
p5b=$(fixture_get nodes.p5-b)
p5c=$(fixture_get nodes.p5-c)
p5d=$(fixture_get nodes.p5-d)
sys_a=$(fixture_get nodes.sys-a)

# The broken job, scoped by --job: every output at once.
: >"$FIXTURE_KUBE_RECORD"
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --namespace ml --job llama-pretrain --output json \
	--save-snapshot "$e2e_tmp/hang.snap" --text-file "$e2e_tmp/hang.txt" \
	--junit-file "$e2e_tmp/hang.xml" >"$e2e_tmp/hang.json" 2>"$e2e_tmp/hang.err"
expect_status "broken job: the diagnostic completes" 0 $?
check "broken job: the JSON is one valid document of schema hpnode.nccl/1" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "hpnode.nccl/1", d["schema"]
s = d["scope"]
assert (s["namespace"], s["job"], s["orchestrator"], s["cluster"]) == ("ml", "llama-pretrain", "EKS", "hp-nccl-demo"), s
assert s["mode"].startswith("READ-ONLY"), s
' "$e2e_tmp/hang.json"
check "--job scopes the probes to the nodes of the job's pods" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want = set(sys.argv[2:6])
assert set(d["nccl_probes"]) == want, sorted(d["nccl_probes"])
assert set(d["probes"]) == want, sorted(d["probes"])
r = d["nccl_run"]["probe_nodes"]
assert r["selection"] == "job", r
assert {c["why"] for c in r["chosen"]} == {"runs pod ml/llama-pretrain-master-0"} | {
    f"runs pod ml/llama-pretrain-worker-{i}" for i in range(3)}, r
' "$e2e_tmp/hang.snap" "$p5a" "$p5b" "$p5c" "$p5d"
check "text report: the NCCL Diagnostic Summary with its fields" sh -c '
	grep -q "^  14. NCCL Diagnostic Summary" "$1" && grep -q "^  Namespace: ml$" "$1" &&
	grep -q "^  Job: llama-pretrain$" "$1" && grep -q "^  Orchestrator: EKS$" "$1" &&
	grep -q "^  Nodes probed: .* (4 of 4 reached)$" "$1" &&
	grep -q "^  Mode: READ-ONLY (no changes applied)$" "$1" &&
	! grep -q "^  \[P0 — Fix Immediately\]" "$1" && grep -q "^  \[P1 — Fix Soon\]" "$1"' _ "$e2e_tmp/hang.txt"
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

# --fail-on: the broken job has P1s and no P0 ("unhandled system error" takes
# the cause of the connect failure before it, a P1).
"$HPNODE" nccl --snapshot "$e2e_tmp/hang.snap" --fail-on P0 --quiet
expect_status "--fail-on P0 on the broken job exits 0" 0 $?
"$HPNODE" nccl --snapshot "$e2e_tmp/hang.snap" --fail-on P1 --output junit >"$e2e_tmp/fo.xml"
expect_status "--fail-on P1 exits 3" 3 $?

# Without --job: every training pod; --sample-nodes takes the nodes of pods that
# failed, restarted or logged errors first, then accelerated groups first.
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --sample-nodes 1 --no-probe --save-snapshot "$e2e_tmp/s1.snap" \
	--output json >"$e2e_tmp/s1.json" 2>&1
expect_status "--sample-nodes 1 completes" 0 $?
check "--sample-nodes 1: one node of the accelerated group" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["nccl_run"]["probe_nodes"]
assert r["selection"] == "sample" and r["requested"] == 1 and len(r["chosen"]) == 1, r
assert r["chosen"][0]["group"] == "gpu-p5", r
# The crash-looping pod'"'"'s node first: the root cause is often there.
assert r["chosen"][0]["id"] == sys.argv[2], r
assert r["chosen"][0]["why"] == "runs pod ml/llama-pretrain-worker-2, which failed or restarted", r
' "$e2e_tmp/s1.snap" "$p5d"
check "without --job: the jobs of the namespace-less run" findings "$e2e_tmp/s1.json" \
	"1:check=nccl.job,tag=INFO,message~Job ml/llama-pretrain (PyTorchJob" \
	"1:check=nccl.job,tag=INFO,message~Job default/nccl-allreduce (Job" \
	"9:check=nccl.job,tag=INFO,message~Job ml/class-" "11:check=nccl.job"
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
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --kubeconfig "$e2e_tmp/other.kubeconfig" --job llama-pretrain \
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
variant "$ROOT/tests/fixtures/nccl-healthy.yaml" "$e2e_tmp/noexec.yaml" 'd["kubernetes"]["forbid"] = ["pods/exec"]'
fixture_start "$e2e_tmp/noexec.yaml" || { not_ok "no-exec fixture starts" "see above"; e2e_done; }
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --kubeconfig "$FIXTURE_KUBECONFIG" --namespace ml --job llama-pretrain \
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
