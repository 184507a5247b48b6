#!/bin/sh
# The NCCL collector (src/collect/nccl-read.c, driven by tests/bin/nccl-collect on
# a triage snapshot) against tests/fixtures/nccl-demo.yaml with the real kubectl:
# the broken job's pods by the Kubeflow label, the batch Job's by job-name,
# every kubectl call a GET with only the parameters the API server knows
# (the fixture runs with strict_params), logs and --previous where a previous
# container exists, the NCCL patterns found with their sections, CloudWatch
# training streams searched over the window, and nothing read through a
# kubectl that points at another cluster.
T=t0721-nccl-collect
. "$(dirname "$0")/e2e-lib.sh"

TOOL=$(dirname "${SIGV4_SIGN:-$ROOT/tests/bin/sigv4-sign}")/nccl-collect
[ -x "$TOOL" ] || TOOL=$ROOT/tests/bin/nccl-collect
if ! command -v kubectl >/dev/null 2>&1 || [ ! -x "$TOOL" ]; then
	not_ok "kubectl and tests/bin/nccl-collect are there" "kubectl: $(command -v kubectl), tool: $TOOL"
	e2e_done
fi
fixture_start "$ROOT/tests/fixtures/nccl-demo.yaml" || { not_ok "nccl fixture starts" "see above"; e2e_done; }
export KUBECONFIG="$FIXTURE_KUBECONFIG"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --save-snapshot "$e2e_tmp/t.snap" \
	--output json >/dev/null 2>"$e2e_tmp/t.err"
expect_status "triage saves the snapshot the collector starts from" 0 $?

"$TOOL" "$e2e_tmp/t.snap" "$e2e_tmp/hang.json" --namespace ml --job llama-pretrain --cloudwatch \
	--since 21600 2>"$e2e_tmp/c.err"
expect_status "the collector runs" 0 $?
check "the broken job: pods, objects, log reads, hits" python3 - "$e2e_tmp/hang.json" \
	"$(fixture_get nodes.p5-d)" "$(fixture_get nodes.p5-a)" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
broken, master_node = sys.argv[2], sys.argv[3]
assert "kube_skipped" not in d and "errors" not in d, d.get("errors")
assert d["job"] == {"name": "llama-pretrain", "label": "kubeflow",
                    "selector": "training.kubeflow.org/job-name=llama-pretrain"}, d["job"]
pods = {p["name"]: p for p in d["pods"]}
assert set(pods) == {"llama-pretrain-master-0", "llama-pretrain-worker-0", "llama-pretrain-worker-1",
                     "llama-pretrain-worker-2"}, set(pods)
w, m = pods["llama-pretrain-worker-2"], pods["llama-pretrain-master-0"]
assert w["problem"] and w["restarted"] and not m["problem"], (w, m)
assert w["spec"]["containers"][0]["env"]["NCCL_DEBUG"] == "INFO"
assert w["spec"]["volumes"][0]["size_limit"] == "64Gi", w["spec"]["volumes"]
assert [v["kind"] for v in m["spec"]["volumes"]] == ["hostPath"], m["spec"]["volumes"]
assert d["pods_requesting_efa"] == 4
assert any(s["headless"] and s["name"] == "llama-pretrain-master-0" for s in d["services"])
assert [p["name"] for p in d["network_policies"]] == ["allow-intra-namespace"], d["network_policies"]
assert any("aws-efa-k8s-device-plugin" in i for ds in d["daemonsets"] for i in ds["images"])
reads = {(r["pod"], r["previous"]): r for r in d["log_reads"]}
assert set(reads) == {("llama-pretrain-master-0", False), ("llama-pretrain-worker-0", False),
                      ("llama-pretrain-worker-1", False), ("llama-pretrain-worker-2", False),
                      ("llama-pretrain-worker-2", True)}, set(reads)
# The problem pod is planned first; the three workers are one batched read by replica index,
# the master (the only pod of its replica type) and worker-2's previous log reads of their own.
assert d["log_reads"][0]["pod"] == "llama-pretrain-worker-2", d["log_reads"][0]
assert all(r["status"] == "ok" for r in d["log_reads"]), d["log_reads"]
assert d["log_batches"] == [{"namespace": "ml", "selector": "training.kubeflow.org/job-name=llama-pretrain,"
                             "training.kubeflow.org/replica-type=worker,training.kubeflow.org/replica-index in (0,1,2)",
                             "container": "pytorch", "pods": 3, "status": "ok", "other_lines": 0}], d["log_batches"]
batched = {r["pod"] for r in d["log_reads"] if r.get("batched")}
assert batched == {f"llama-pretrain-worker-{i}" for i in range(3)}, batched
assert reads[("llama-pretrain-worker-0", False)]["lines"] == 4, reads
hits = {(h["code"], h["source"]) for h in d["log_scan"]["hits"]}
prev = "ml/llama-pretrain-worker-2/pytorch (previous)"
for want in [("WATCHDOG_TIMEOUT", "ml/llama-pretrain-master-0/pytorch"), ("EFA_TCP_FALLBACK", prev),
             ("OFI_LOAD_FAIL", prev), ("CONNECT_FAIL", prev), ("SYSTEM_ERROR", prev)]:
    assert want in hits, (want, hits)
assert not any(src.startswith("ml/llama-pretrain-worker-0") for _, src in hits), hits
cw = d["cloudwatch"]
assert cw["group"].startswith("/aws/sagemaker/Clusters/hp-nccl-demo/"), cw["group"]
cwhits = {(h["code"], h["source"]) for h in cw["scan"]["hits"]}
assert ("EFA_TCP_FALLBACK", f"{broken}/nccl") in cwhits, cwhits
assert ("WATCHDOG_TIMEOUT", f"{master_node}/nccl") in cwhits, cwhits
assert not cw["truncated"]
PY
if grep -v '^GET ' "$FIXTURE_KUBE_RECORD" | grep -q .; then
	not_ok "kubectl only read" "$(grep -v '^GET ' "$FIXTURE_KUBE_RECORD" | head -3)"
else
	ok "kubectl only read"
fi
check "the batch: one pod list by the selector, then each worker's log" python3 - "$FIXTURE_KUBE_RECORD" <<'PY'
import sys, urllib.parse
lines = [urllib.parse.unquote_plus(l.strip()) for l in open(sys.argv[1])]
sel = [l for l in lines if "replica-index in (0,1,2)" in l]
assert len(sel) == 1 and sel[0].startswith("GET /api/v1/namespaces/ml/pods?labelSelector="), sel
logs = sorted(l.split("/pods/")[1].split("/log")[0] for l in lines if "/log?" in l and "previous" not in l)
assert logs == ["llama-pretrain-master-0"] + [f"llama-pretrain-worker-{i}" for i in range(3)], logs
PY
check "no --previous for a container that never restarted" sh -c \
	"! grep 'llama-pretrain-master-0/log' '$FIXTURE_KUBE_RECORD' | grep -q 'previous=true'"

"$TOOL" "$e2e_tmp/t.snap" "$e2e_tmp/batch.json" --job nccl-allreduce 2>"$e2e_tmp/c.err"
check "a batch Job by job-name, in any namespace, and its success marker" python3 - \
	"$e2e_tmp/batch.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["job"]["label"] == "job-name", d["job"]
assert [p["name"] for p in d["pods"]] == ["nccl-allreduce-x7k2p"], d["pods"]
assert d["log_scan"]["hits"] == [], d["log_scan"]["hits"]
assert [m["marker"] for m in d["log_scan"]["markers"]] == ["ALLREDUCE_SUCCESS"], d["log_scan"]
assert "cloudwatch" not in d
PY

# kubectl pointed at another cluster: triage marks it, the collector reads nothing.
: >"$FIXTURE_KUBE_RECORD"
fixture_kubeconfig "$e2e_tmp/other.kubeconfig" other
KUBECONFIG="$e2e_tmp/other.kubeconfig" "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe \
	--save-snapshot "$e2e_tmp/o.snap" --output json >/dev/null 2>&1
: >"$FIXTURE_KUBE_RECORD"
KUBECONFIG="$e2e_tmp/other.kubeconfig" "$TOOL" "$e2e_tmp/o.snap" "$e2e_tmp/other.json" --job llama-pretrain
check "another cluster's kubectl: skipped, with the reason" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["kube_skipped"]["kind"] == "server_mismatch", d
assert "pods" not in d' "$e2e_tmp/other.json"
check "... and not one request reached any API server" test ! -s "$FIXTURE_KUBE_RECORD"
fixture_stop
e2e_done
