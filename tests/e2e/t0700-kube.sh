#!/bin/sh
# The Kubernetes checks end to end: the real kubectl against the fixture's
# Kubernetes API server. Each fault gives its finding on the right node;
# a kubeconfig for another cluster, a rejected token, a missing kubectl or
# context give one WARN with the update-kubeconfig command and no PASS;
# kubectl only ever reads.
T=t0700-kube
. "$(dirname "$0")/e2e-lib.sh"

if ! command -v kubectl >/dev/null 2>&1; then
	not_ok "kubectl is installed" "these tests run the real kubectl"
	e2e_done
fi

kube_json() {
	python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
for f in doc["findings"]:
    if f["check"] == sys.argv[2] and sys.argv[3] in f["message"]:
        print("\n".join(f["evidence"]))
' "$@"
}

# --- the fixture refuses a kubernetes section it cannot serve --------------
fixture_check() { # FILE: the server's verdict on a fixture file
	python3 "$ROOT/tests/fixtures/server.py" --fixture "$1" --ready-file /dev/null --check 2>&1
}
variant "$ROOT/tests/fixtures/healthy.yaml" "$e2e_tmp/typo.yaml" 'd["kubernetes"] = {"nodes": {0: {"helth": "x"}}}'
check "fixture: a misspelt node key is named" sh -c 	"python3 '$ROOT/tests/fixtures/server.py' --fixture '$e2e_tmp/typo.yaml' --ready-file /dev/null --check 2>&1 | grep -q \"kubernetes.nodes.0: unknown key 'helth'\""
variant "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/slurmkube.yaml" 'd["kubernetes"] = {}'
out=$(fixture_check "$e2e_tmp/slurmkube.yaml")
case $out in *"kubernetes: needs cluster.orchestrator.eks"*) ok "fixture: no Kubernetes API for a Slurm cluster" ;;
*) not_ok "fixture: no Kubernetes API for a Slurm cluster" "$out" ;; esac
out=$(fixture_check "$ROOT/tests/fixtures/demo.yaml")
case $out in *ok*) ok "fixture: demo.yaml with its kubernetes section is valid" ;;
*) not_ok "fixture: demo.yaml with its kubernetes section is valid" "$out" ;; esac

# --- demo: the faults it carries -------------------------------------------
fixture_start "$ROOT/tests/fixtures/demo.yaml" || { not_ok "demo fixture starts" "see above"; e2e_done; }
nvlink=$(fixture_get nodes.p5-nvlink)
syslcs=$(fixture_get nodes.sys-lcs)
p5efa=$(fixture_get nodes.p5-efa)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json --save-snapshot "$e2e_tmp/demo.snap" \
	>"$e2e_tmp/demo.json" 2>"$e2e_tmp/demo.err"
expect_status "demo triage completes" 0 $?
check "demo: kubectl is trusted (its server is the EKS endpoint)" findings "$e2e_tmp/demo.json" \
	"1:check=kube.access,tag=PASS"
check "demo: the node labelled for replacement is FAIL P1 § F on its instance" \
	findings "$e2e_tmp/demo.json" \
	"1:check=kube.node-health,tag=FAIL,priority=P1,section=F,node=$nvlink,message~UnschedulablePendingReplacement"
check "demo: aws-node crash loop is P0 § O.1 on its instance" findings "$e2e_tmp/demo.json" \
	"1:check=kube.aws-node,tag=FAIL,priority=P0,section=O.1,node=$syslcs,message~CrashLoopBackOff"
kube_json "$e2e_tmp/demo.json" kube.aws-node CrashLoopBackOff >"$e2e_tmp/ev.txt"
check "demo: the aws-node finding quotes the IPAMD log lines" contains "$e2e_tmp/ev.txt" \
	"127.0.0.1:50051: connect: connection refused"
check "demo: the aws-node finding leaves out log noise" lacks "$e2e_tmp/ev.txt" "Install CNI binaries"
check "demo: the OOM-killed training pod is § M.1 on its node" findings "$e2e_tmp/demo.json" \
	"1:check=kube.workload-pods,tag=FAIL,priority=P1,section=M.1,node=$p5efa,message~namespace training"
check "demo: the EKS endpoint was read with eks:DescribeCluster" grep -qx "eks:DescribeCluster" "$FIXTURE_RECORD"
if [ -s "$FIXTURE_KUBE_RECORD" ] && ! grep -qv '^GET ' "$FIXTURE_KUBE_RECORD"; then
	ok "kubectl only ever sent GET requests ($(wc -l <"$FIXTURE_KUBE_RECORD") requests)"
else
	not_ok "kubectl only ever sent GET requests" "$(grep -v '^GET ' "$FIXTURE_KUBE_RECORD" | head -3 | tr '\n' '|')"
fi

# The same findings from the saved snapshot, without kubectl or AWS.
env -u AWS_ENDPOINT_URL PATH=/nonexistent AWS_ACCESS_KEY_ID= AWS_SECRET_ACCESS_KEY= \
	"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --output json >"$e2e_tmp/replay.json" 2>&1
expect_status "replay without kubectl completes" 0 $?
if python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a["findings"]!=b["findings"])' "$e2e_tmp/demo.json" "$e2e_tmp/replay.json"; then
	ok "replay gives the same Kubernetes findings"
else
	not_ok "replay gives the same Kubernetes findings" "they differ"
fi

# --- kubectl that must not be trusted ----------------------------------------
no_pass() { # FILE WHAT: one WARN from kube.access, every other kube check SKIP, no PASS
	check "$2: one WARN with the update-kubeconfig command" findings "$1" \
		"1:check=kube.access,tag=WARN,priority=P1,message~aws eks update-kubeconfig --name hp-demo-eks --region us-west-2"
	check "$2: no Kubernetes check passes" findings "$1" "0:check~kube.,tag=PASS" \
		"0:check~kube.,tag=FAIL" "12:check~kube.,tag=SKIP"
}

fixture_kubeconfig "$e2e_tmp/other.kubeconfig" other
: >"$FIXTURE_KUBE_RECORD"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --kubeconfig "$e2e_tmp/other.kubeconfig" --output json \
	>"$e2e_tmp/other.json" 2>&1
expect_status "another cluster's kubeconfig: triage completes" 0 $?
no_pass "$e2e_tmp/other.json" "another cluster"
check "another cluster: the WARN names the other server" findings "$e2e_tmp/other.json" \
	"1:check=kube.access,tag=WARN,message~points at another cluster (https://127.0.0.1"
check "another cluster: nothing was read from it" lacks "$FIXTURE_KUBE_RECORD" "/other-cluster/api/v1/"

fixture_kubeconfig "$e2e_tmp/bad.kubeconfig" badtoken
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --kubeconfig "$e2e_tmp/bad.kubeconfig" --output json \
	>"$e2e_tmp/bad.json" 2>&1
expect_status "bad token: triage completes" 0 $?
no_pass "$e2e_tmp/bad.json" "bad token"
check "bad token: the WARN says authentication failed" findings "$e2e_tmp/bad.json" \
	"1:check=kube.access,tag=WARN,message~could not authenticate"

PATH=/nonexistent "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/nokubectl.json" 2>&1
expect_status "no kubectl on PATH: triage completes" 0 $?
no_pass "$e2e_tmp/nokubectl.json" "no kubectl"
check "no kubectl: the WARN says so" findings "$e2e_tmp/nokubectl.json" \
	"1:check=kube.access,tag=WARN,message~kubectl is not installed or not on PATH"

"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --context no-such-context --output json >"$e2e_tmp/ctx.json" 2>&1
expect_status "unknown --context: triage completes" 0 $?
no_pass "$e2e_tmp/ctx.json" "unknown context"

"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-kube --output json >"$e2e_tmp/nokube.json" 2>&1
expect_status "--no-kube: triage completes" 0 $?
check "--no-kube: skipped, not warned, never passed" findings "$e2e_tmp/nokube.json" \
	"1:check=kube.access,tag=SKIP,message~--no-kube" "0:check~kube.,tag=WARN" "0:check~kube.,tag=PASS" \
	"13:check~kube.,tag=SKIP"
fixture_stop

# --- every fault of the issue, on the healthy cluster ------------------------
variant "$ROOT/tests/fixtures/healthy.yaml" "$e2e_tmp/faults.yaml" '
k = d["kubernetes"] = {}
k["nodes"] = {
    0: {"health": "UnschedulablePendingReboot", "fault_types": "NetworkFaultType"},
    1: {"deep_health": "Failed"},
    2: {"ready": "False"},
    3: {"ready": "Unknown"},
}
k["namespaces"] = ["default", "kube-system", "kube-public"]
k["system_pods"] = {"kube-proxy": {4: {"status": "CrashLoopBackOff"}},
                    "coredns": {0: {"status": "ImagePullBackOff"}}}
k["pods"] = [
    {"namespace": "ml", "name": "stuck-0", "node": 5, "status": "Pending"},
    {"namespace": "ml", "name": "crash-0", "node": 6, "status": "CrashLoopBackOff"},
    {"namespace": "ml", "name": "crash-1", "node": 6, "status": "CrashLoopBackOff"},
    {"namespace": "ml", "name": "pull-0", "node": 6, "status": "ImagePullBackOff"},
    {"namespace": "serve", "name": "run-0", "node": 7, "status": "RunContainerError"},
]
k["events"] = [{"namespace": "ml", "pod": "stuck-0", "reason": "FailedCreatePodSandBox",
                "message": "Failed to create pod sandbox: plugin type=\"aws-cni\" failed (add): add cmd: failed to assign an IP address to container"}]
'
fixture_start "$e2e_tmp/faults.yaml" || { not_ok "faults fixture starts" "see above"; e2e_done; }
n() { fixture_get "node_ids.$1"; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/faults.json" 2>&1
expect_status "faults triage completes" 0 $?
check "network fault type routes to § A" findings "$e2e_tmp/faults.json" \
	"1:check=kube.node-health,tag=FAIL,section=A,node=$(n 0),message~UnschedulablePendingReboot"
check "deep health check Failed is § G+F" findings "$e2e_tmp/faults.json" \
	"1:check=kube.deep-health,tag=FAIL,section=G+F,node=$(n 1)"
check "NotReady node is FAIL on its instance" findings "$e2e_tmp/faults.json" \
	"1:check=kube.node-ready,tag=FAIL,node=$(n 2),message~NotReady"
check "Ready Unknown is FAIL on its instance" findings "$e2e_tmp/faults.json" \
	"1:check=kube.node-ready,tag=FAIL,node=$(n 3),message~Ready status Unknown"
check "kube-proxy crash is P0 § O.3" findings "$e2e_tmp/faults.json" \
	"1:check=kube.kube-proxy,tag=FAIL,priority=P0,section=O.3,node=$(n 4)"
check "CoreDNS ImagePullBackOff is P0 § O.4" findings "$e2e_tmp/faults.json" \
	"1:check=kube.coredns,tag=FAIL,priority=P0,section=O.4,message~ImagePullBackOff"
check "Pending pod with FailedCreatePodSandBox is § O.2" findings "$e2e_tmp/faults.json" \
	"1:check=kube.sandbox,tag=FAIL,section=O.2,node=$(n 5),message~1 pod(s)"
check "workload pods grouped by reason, namespace and node" findings "$e2e_tmp/faults.json" \
	"1:check=kube.workload-pods,tag=FAIL,section=M.1,node=$(n 6),message~2 pod(s) in namespace ml" \
	"1:check=kube.workload-pods,tag=FAIL,node=$(n 6),message~are ImagePullBackOff" \
	"1:check=kube.workload-pods,tag=FAIL,node=$(n 7),message~are RunContainerError" \
	"3:check=kube.workload-pods,tag=FAIL"
check "missing aws-hyperpod namespace is FAIL § B.1" findings "$e2e_tmp/faults.json" \
	"1:check=kube.namespace,tag=FAIL,section=B.1"
check "healthy parts still pass" findings "$e2e_tmp/faults.json" \
	"1:check=kube.aws-node,tag=PASS" "1:check=kube.access,tag=PASS"
# The fixture's API server itself, through the real kubectl.
got=$(kubectl get nodes -l 'sagemaker.amazonaws.com/node-health-status notin (Schedulable)' -o name 2>&1)
if [ "$got" = "node/hyperpod-$(n 0)" ]; then ok "fixture API: notin label selector"; else not_ok "fixture API: notin label selector" "$got"; fi
got=$(kubectl get pods -A --field-selector=status.phase=Pending -o name 2>&1 | tr '\n' ' ')
case $got in *"pod/stuck-0"*"pod/pull-0"*|*"pod/pull-0"*"pod/stuck-0"*) ok "fixture API: field selector" ;;
*) not_ok "fixture API: field selector" "$got" ;; esac
got=$(kubectl get pods -n kube-system -l 'k8s-app in (kube-dns)' -o name --chunk-size=1 2>&1 | wc -l)
if [ "$got" = 2 ]; then ok "fixture API: set-based selector and paging"; else not_ok "fixture API: set-based selector and paging" "$got pods"; fi
fixture_kubeconfig "$e2e_tmp/bad2.kubeconfig" badtoken
if kubectl --kubeconfig "$e2e_tmp/bad2.kubeconfig" get nodes >"$e2e_tmp/k.out" 2>&1; then
	not_ok "fixture API: a bad token is refused" "kubectl succeeded"
else
	check "fixture API: a bad token is refused" grep -q "Unauthorized" "$e2e_tmp/k.out"
fi
fixture_stop

# --- reads that fail after access was verified --------------------------------
variant "$ROOT/tests/fixtures/healthy.yaml" "$e2e_tmp/forbid.yaml" '
d["kubernetes"] = {"forbid": ["events", "namespaces"]}
d["faults"] = {"deny": ["eks:DescribeCluster"]}
'
fixture_start "$e2e_tmp/forbid.yaml" || { not_ok "forbid fixture starts" "see above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/forbid.json" 2>&1
expect_status "forbidden reads: triage completes" 0 $?
check "denied eks:DescribeCluster is a missing permission" findings "$e2e_tmp/forbid.json" \
	"1:check=api.eks,tag=FAIL,message~Missing IAM permission for eks:DescribeCluster"
check "without the endpoint, the context named after the EKS ARN is trusted" \
	findings "$e2e_tmp/forbid.json" "1:check=kube.access,tag=PASS,message~could not be read"
check "forbidden events: a WARN, not a PASS" findings "$e2e_tmp/forbid.json" \
	"1:check=kube.sandbox,tag=WARN,message~Could not read events" "0:check=kube.sandbox,tag=PASS"
check "forbidden namespaces: a WARN, not a missing namespace" findings "$e2e_tmp/forbid.json" \
	"1:check=kube.namespace,tag=WARN,message~Could not read namespaces" "0:check=kube.namespace,tag=FAIL"
check "the rest is still read" findings "$e2e_tmp/forbid.json" "1:check=kube.node-health,tag=PASS"
fixture_kubeconfig "$e2e_tmp/other2.kubeconfig" other
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --kubeconfig "$e2e_tmp/other2.kubeconfig" --output json \
	>"$e2e_tmp/unverified.json" 2>&1
check "without the endpoint, another cluster is not trusted either" findings "$e2e_tmp/unverified.json" \
	"1:check=kube.access,tag=WARN,message~cannot be confirmed" "0:check~kube.,tag=PASS"
e2e_done
