#!/bin/sh
# The NCCL demo fixture cluster (tests/fixtures/nccl-demo.yaml) through the real
# kubectl and the AWS API: training-job pods by their PyTorchJob and batch
# Job labels, with spec (environment, EFA resources, /dev/shm volumes),
# init containers and last states; logs, --previous of a restarted container,
# and the API server's 400 for one that never restarted; headless services,
# NetworkPolicies as the API server defaults them, the EFA device-plugin
# DaemonSet; selectors and parameter values the API server refuses; unknown
# query parameters refused under strict_params (ignored otherwise, as the
# API server ignores them); CloudWatch training streams found with the NCCL
# filter patterns; and fixture files with mistakes refused by name.
T=t0720-nccl-fixture
. "$(dirname "$0")/e2e-lib.sh"

if ! command -v kubectl >/dev/null 2>&1; then
	not_ok "kubectl is installed" "these tests run the real kubectl"
	e2e_done
fi

fixture_check() { # FILE: the server's verdict on a fixture file
	python3 "$ROOT/tests/fixtures/server.py" --fixture "$1" --ready-file /dev/null --check 2>&1
}
for f in nccl-demo nccl-healthy; do
	out=$(fixture_check "$ROOT/tests/fixtures/$f.yaml")
	case $out in *ok*) ok "fixture: $f.yaml is valid" ;; *) not_ok "fixture: $f.yaml is valid" "$out" ;; esac
done
variant "$ROOT/tests/fixtures/nccl-demo.yaml" "$e2e_tmp/bad1.yaml" \
	'd["kubernetes"]["pods"][0]["volume_mount"] = []'
out=$(fixture_check "$e2e_tmp/bad1.yaml")
case $out in *"kubernetes.pods[0]: unknown key 'volume_mount'"*) ok "fixture: a misspelt pod key is named" ;;
*) not_ok "fixture: a misspelt pod key is named" "$out" ;; esac
variant "$ROOT/tests/fixtures/nccl-demo.yaml" "$e2e_tmp/bad2.yaml" \
	'd["kubernetes"]["network_policies"][0]["policy_types"] = ["Sideways"]'
out=$(fixture_check "$e2e_tmp/bad2.yaml")
case $out in *"network_policies[0].policy_types"*) ok "fixture: a bad policy type is named" ;;
*) not_ok "fixture: a bad policy type is named" "$out" ;; esac
variant "$ROOT/tests/fixtures/nccl-demo.yaml" "$e2e_tmp/bad3.yaml" \
	'd["logs"]["streams"][0].pop("node")'
out=$(fixture_check "$e2e_tmp/bad3.yaml")
case $out in *"logs.streams[0].name"*"give the stream a node"*) ok "fixture: a per-node stream without its node is refused" ;;
*) not_ok "fixture: a per-node stream without its node is refused" "$out" ;; esac

fixture_start "$ROOT/tests/fixtures/nccl-demo.yaml" || { not_ok "nccl fixture starts" "see above"; e2e_done; }
export KUBECONFIG="$FIXTURE_KUBECONFIG"
k() { kubectl --request-timeout=20s "$@"; }
pods_of() { # SELECTOR: the names of the pods it selects, sorted, one line
	k get pods -A -l "$1" -o json | python3 -c '
import json, sys
print(" ".join(sorted(p["metadata"]["name"] for p in json.load(sys.stdin)["items"])))'
}

got=$(pods_of training.kubeflow.org/job-name=llama-pretrain)
[ "$got" = "llama-pretrain-master-0 llama-pretrain-worker-0 llama-pretrain-worker-1 llama-pretrain-worker-2" ] &&
	ok "the PyTorchJob's pods by training.kubeflow.org/job-name" ||
	not_ok "the PyTorchJob's pods by training.kubeflow.org/job-name" "$got"
got=$(pods_of 'training.kubeflow.org/job-name=llama-pretrain,training.kubeflow.org/replica-type=worker,training.kubeflow.org/replica-index in (0,2)')
[ "$got" = "llama-pretrain-worker-0 llama-pretrain-worker-2" ] && ok "the PyTorchJob's workers by job name, replica type and index" ||
	not_ok "the PyTorchJob's workers by job name, replica type and index" "$got"
got=$(pods_of job-name=nccl-allreduce)
[ "$got" = "nccl-allreduce-x7k2p" ] && ok "a batch Job's pod by job-name" || not_ok "a batch Job's pod by job-name" "$got"

k get pods -n ml -o json >"$e2e_tmp/pods.json"
check "pod specs: environment, EFA requests, /dev/shm and hostPath volumes, owners, states" python3 - "$e2e_tmp/pods.json" <<'PY'
import json, sys
pods = {p["metadata"]["name"]: p for p in json.load(open(sys.argv[1]))["items"]}
m, w0, w2 = pods["llama-pretrain-master-0"], pods["llama-pretrain-worker-0"], pods["llama-pretrain-worker-2"]
env = {e["name"]: e["value"] for e in m["spec"]["containers"][0]["env"]}
assert env["FI_PROVIDER"] == "efa" and env["NCCL_DEBUG"] == "INFO" and env["WORLD_SIZE"] == "32", env
assert m["spec"]["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"] == "32"
# The master's replica spec lost its /dev/shm volume; the workers have it.
assert m["spec"]["volumes"] == [{"name": "ofi-nccl", "hostPath": {"path": "/opt/amazon/ofi-nccl",
                                                                  "type": "Directory"}}], m["spec"]["volumes"]
vol = w0["spec"]["volumes"][0]
assert vol == {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}, vol
assert {"name": "dshm", "mountPath": "/dev/shm"} in w0["spec"]["containers"][0]["volumeMounts"]
assert m["metadata"]["ownerReferences"][0]["kind"] == "PyTorchJob"
assert m["metadata"]["ownerReferences"][0]["apiVersion"] == "kubeflow.org/v1"
cs = w2["status"]["containerStatuses"][0]
assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff", cs
assert cs["lastState"]["terminated"]["reason"] == "Error" and cs["restartCount"] == 4, cs
init = w2["status"]["initContainerStatuses"][0]
assert init["name"] == "init-pytorch" and init["state"]["terminated"]["reason"] == "Completed"
assert w2["spec"]["initContainers"][0]["name"] == "init-pytorch"
assert "initContainers" not in m["spec"], "the master has no init container"
assert w0["status"]["phase"] == "Running"
PY

k logs -n ml llama-pretrain-worker-2 -c pytorch --previous --tail=2 >"$e2e_tmp/prev.txt" 2>&1
check "logs --previous of the restarted worker" contains "$e2e_tmp/prev.txt" "socketStartConnect: Connect to"
check "logs --tail keeps the last lines" lacks "$e2e_tmp/prev.txt" "Bootstrap"
k logs -n ml llama-pretrain-worker-2 -c pytorch >"$e2e_tmp/w2.txt" 2>&1
check "logs of the current attempt" contains "$e2e_tmp/w2.txt" "Bootstrap : Using eth0"
check "... not the previous one" lacks "$e2e_tmp/w2.txt" "Using network Socket"
k logs -n ml llama-pretrain-master-0 -c pytorch --previous >"$e2e_tmp/noprev.txt" 2>&1
expect_status "logs --previous of a container that never restarted fails" 1 $?
check "... with the API server's 400 message" contains "$e2e_tmp/noprev.txt" \
	'previous terminated container "pytorch" in pod "llama-pretrain-master-0" not found'
k logs -n ml llama-pretrain-master-0 -c pytorch --tail=500 >"$e2e_tmp/cur.txt" 2>&1
check "logs of the running master" contains "$e2e_tmp/cur.txt" "Watchdog caught collective operation timeout"

k get services -A -o json >"$e2e_tmp/svc.json"
check "headless services select the jobs' pods" python3 - "$e2e_tmp/svc.json" <<'PY'
import json, sys
svc = {(s["metadata"]["namespace"], s["metadata"]["name"]): s for s in json.load(open(sys.argv[1]))["items"]}
h = svc[("ml", "llama-pretrain-master-0")]["spec"]
assert h["clusterIP"] == "None" and h["selector"]["training.kubeflow.org/replica-type"] == "master", h
assert svc[("default", "dashboard")]["spec"]["clusterIP"] != "None"
PY
k get networkpolicies -A -o json >"$e2e_tmp/np.json"
check "NetworkPolicies as the API server stores them (policyTypes defaulted)" python3 - "$e2e_tmp/np.json" <<'PY'
import json, sys
np = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["spec"] for p in json.load(open(sys.argv[1]))["items"]}
deny = np[("ml-locked", "default-deny")]
assert deny == {"podSelector": {}, "policyTypes": ["Ingress"]}, deny
allow = np[("ml", "allow-intra-namespace")]
assert allow["policyTypes"] == ["Ingress", "Egress"] and allow["ingress"], allow
PY
k get daemonsets -A -o json >"$e2e_tmp/ds.json"
check "the EFA device plugin DaemonSet, scheduled on the p5 nodes" python3 - "$e2e_tmp/ds.json" <<'PY'
import json, sys
ds = {d["metadata"]["name"]: d for d in json.load(open(sys.argv[1]))["items"]}
efa = ds["aws-efa-k8s-device-plugin-daemonset"]
assert efa["metadata"]["namespace"] == "kube-system"
assert "aws-efa-k8s-device-plugin" in efa["spec"]["template"]["spec"]["containers"][0]["image"]
assert efa["status"]["desiredNumberScheduled"] == 4 and efa["status"]["numberReady"] == 4, efa["status"]
PY

# What the API server refuses.
k get pods -A -l 'a=b=c' >"$e2e_tmp/sel.txt" 2>&1
expect_status "a malformed label value is refused" 1 $?
check "... with BadRequest" contains "$e2e_tmp/sel.txt" "(BadRequest)"
k get pods -A -l 'bad key=x' >/dev/null 2>&1
expect_status "a malformed label selector is refused" 1 $?
k get --raw '/api/v1/pods?limit=abc' >"$e2e_tmp/lim.txt" 2>&1
expect_status "a limit that is not a number is refused" 1 $?
check "... as the API server words it" contains "$e2e_tmp/lim.txt" 'strconv.ParseInt: parsing'
k get --raw '/api/v1/namespaces/ml/pods/llama-pretrain-master-0/log?container=pytorch&tailLines=-1' \
	>"$e2e_tmp/tail.txt" 2>&1
expect_status "a negative tailLines is refused" 1 $?
check "... as invalid" contains "$e2e_tmp/tail.txt" "must be greater than or equal to 0"
k get --raw '/api/v1/pods?bogus=1' >"$e2e_tmp/bogus.txt" 2>&1
expect_status "strict_params: an unknown query parameter is a fixture error" 1 $?
check "... that names it" contains "$e2e_tmp/bogus.txt" "unknown query parameter 'bogus'"

# CloudWatch: the training streams, found by the NCCL filter terms.
check "FilterLogEvents finds the broken node's NCCL lines in <instance>/nccl" python3 - \
	"$(fixture_get log_group)" "$(fixture_get nodes.p5-d)" "$(fixture_get nodes.p5-b)" <<'PY'
import sys, boto3
group, broken, fine = sys.argv[1:4]
logs = boto3.client("logs")
r = logs.filter_log_events(logGroupName=group, filterPattern='?"Using network Socket" ?"NCCL WARN"')
streams = {e["logStreamName"] for e in r["events"]}
assert streams == {f"{broken}/nccl"}, streams
assert len(r["events"]) == 2, r["events"]
r = logs.filter_log_events(logGroupName=group, logStreamNamePrefix=f"{fine}/",
                           filterPattern='"Init COMPLETE"')
assert len(r["events"]) == 1, r["events"]
PY
if grep -v '^GET ' "$FIXTURE_KUBE_RECORD" | grep -q .; then
	not_ok "kubectl only read" "$(grep -v '^GET ' "$FIXTURE_KUBE_RECORD" | head -3)"
else
	ok "kubectl only read"
fi
fixture_stop

# kubectl logs --selector --prefix --ignore-errors, as hpnode reads a job's pods in
# batches: every line behind its pod's prefix, a container that has not started
# (a fourth worker still ContainerCreating) as kubectl's own "error: ..." line,
# without a prefix, and the other pods read all the same.
variant "$ROOT/tests/fixtures/nccl-demo.yaml" "$e2e_tmp/pending.yaml" '
w = dict(d["kubernetes"]["pods"][1])
w.update(name="llama-pretrain-worker-3", status="ContainerCreating", node="p5-c",
         labels=dict(w["labels"], **{"training.kubeflow.org/replica-index": "3"}))
w.pop("logs", None)
d["kubernetes"]["pods"].append(w)'
fixture_start "$e2e_tmp/pending.yaml" || { not_ok "pending variant starts" "see above"; e2e_done; }
export KUBECONFIG="$FIXTURE_KUBECONFIG"
k logs -n ml --selector='training.kubeflow.org/job-name=llama-pretrain,training.kubeflow.org/replica-type=worker' \
	--container=pytorch --tail=500 --prefix --ignore-errors >"$e2e_tmp/batch.txt" 2>"$e2e_tmp/batch.err"
expect_status "a batched read with a pod not started exits 0 (--ignore-errors)" 0 $?
check "... each line behind its pod's prefix, the failed read as kubectl's error line" python3 - \
	"$e2e_tmp/batch.txt" <<'PY'
import collections, re, sys
pods, errors, other = collections.Counter(), [], []
for line in open(sys.argv[1]):
    m = re.match(r"\[pod/([^/\]]+)/([^\]]+)\] ", line)
    if m:
        pods[(m.group(1), m.group(2))] += 1
    elif line.startswith("error: "):
        errors.append(line.strip())
    else:
        other.append(line)
assert set(pods) == {(f"llama-pretrain-worker-{i}", "pytorch") for i in range(3)}, pods
assert pods[("llama-pretrain-worker-0", "pytorch")] == 4, pods
assert errors == ['error: container "pytorch" in pod "llama-pretrain-worker-3" is waiting to start: '
                  'ContainerCreating'], errors
assert not other, other[:3]
PY
k logs -n ml llama-pretrain-worker-3 -c pytorch >"$e2e_tmp/w3.txt" 2>&1
expect_status "the not-started container's own log read fails" 1 $?
check "... with the API server's 400" contains "$e2e_tmp/w3.txt" "is waiting to start: ContainerCreating"
fixture_stop

# Without strict_params an unknown parameter is ignored, as the API server does.
fixture_start "$ROOT/tests/fixtures/healthy.yaml" || { not_ok "healthy fixture starts" "see above"; e2e_done; }
export KUBECONFIG="$FIXTURE_KUBECONFIG"
kubectl --request-timeout=20s get --raw '/api/v1/namespaces?bogus=1' >"$e2e_tmp/ign.txt" 2>&1
expect_status "an unknown query parameter is ignored without strict_params" 0 $?
check "... and the list is served" contains "$e2e_tmp/ign.txt" '"NamespaceList"'
fixture_stop
e2e_done
