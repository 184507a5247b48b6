#!/bin/sh
# hpnode nccl on the failure classes real jobs print, through the real kubectl:
# the class-* batch Jobs of nccl-demo.yaml plant published aws-ofi-nccl,
# libfabric, CUDA and c10d log lines (tests/data/nccl/README.md names each
# source). Each class is routed to its cause and section; a generic wrapper
# ("unhandled system error", "internal error", "unhandled cuda error") takes
# the cause of the line beside it and is never a finding of its own there;
# NCCL's sockets on an instance type without EFA are expected (INFO); a
# healthy job's c10d noise gives no FAIL and no WARN; the summary lists a
# cause before what it explains; pods of one job printing different NCCL
# versions are a mismatch.
T=t0732-nccl-classes
. "$(dirname "$0")/e2e-lib.sh"

if ! command -v kubectl >/dev/null 2>&1; then
	not_ok "kubectl is installed" "the NCCL e2e tests run the real kubectl"
	e2e_done
fi

fixture_start "$ROOT/tests/fixtures/nccl-demo.yaml" || { not_ok "nccl demo fixture starts" "see above"; e2e_done; }
export KUBECONFIG="$FIXTURE_KUBECONFIG"
sysa=$(fixture_get nodes.sys-a)

"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --namespace ml --no-probe --output json \
	--text-file "$e2e_tmp/all.txt" >"$e2e_tmp/all.json" 2>"$e2e_tmp/all.err"
expect_status "classes: the diagnostic of every job of the namespace completes" 0 $?

check "classes: each failure class on its pod with its cause's section and priority" \
	findings "$e2e_tmp/all.json" \
	"1:check=nccl.logs,tag=FAIL,priority=P0,section=NC17,message~RDMA_REG_FAIL in ml/class-efa-memlock-4x7kq" \
	"1:check=nccl.logs,tag=FAIL,priority=P1,section=NC6,message~OFI_INIT_FAIL in ml/class-efa-memlock-4x7kq" \
	"1:check=nccl.logs,tag=FAIL,priority=P0,section=NC6,message~EFA_INIT_FAIL in ml/class-ofi-getinfo-9zp2d" \
	"1:check=nccl.logs,tag=FAIL,priority=P1,section=NC11,message~CUDA_OOM in ml/class-gpu-oom-m2v8c" \
	"1:check=nccl.logs,tag=FAIL,priority=P0,section=NC7,message~GPU_ECC in ml/class-gpu-ecc-q8w3n" \
	"1:check=nccl.logs,tag=FAIL,priority=P1,section=NC3,message~NO_ROUTE in ml/class-no-route-t5k1s" \
	"1:check=nccl.logs,tag=FAIL,priority=P1,section=NC1,message~STORE_TIMEOUT in ml/class-store-timeout-b6r4j"

check "classes: a wrapper takes the cause of the line beside it and stands nowhere on its own" \
	findings "$e2e_tmp/all.json" \
	"1:check=nccl.logs,section=NC17,message~it explains INTERNAL_ERROR" \
	"1:check=nccl.logs,section=NC11,message~it explains CUDA_ERROR ('unhandled cuda error')" \
	"1:check=nccl.logs,section=NC3,message~it explains SYSTEM_ERROR ('unhandled system error')" \
	"0:check=nccl.logs,message~SYSTEM_ERROR in" \
	"0:check=nccl.logs,message~INTERNAL_ERROR in" \
	"0:check=nccl.logs,message~CUDA_ERROR in" \
	"0:check=nccl.logs,section=NC7,message~class-gpu-oom" \
	"0:check=nccl.logs,section=NC7,message~class-no-route"

check "classes: sockets on an instance type without EFA are expected there (INFO)" \
	findings "$e2e_tmp/all.json" \
	"1:check=nccl.logs,tag=INFO,node=$sysa,message~EFA_TCP_FALLBACK in ml/class-sockets-no-efa-h3c9x (train): NCCL uses its socket transport on ml.m5.2xlarge" \
	"0:check=nccl.logs,tag=FAIL,message~class-sockets-no-efa" \
	"0:check=nccl.logs,tag=WARN,message~class-sockets-no-efa"

check "classes: a healthy job's c10d and NCCL noise gives no FAIL and no WARN" \
	findings "$e2e_tmp/all.json" \
	"0:tag=FAIL,message~class-c10d-benign" \
	"0:tag=WARN,message~class-c10d-benign" \
	"0:check=nccl.logs,message~DNS_FAIL" \
	"1:check=nccl.logs,tag=PASS,message~ml/class-c10d-benign-p7d2f/train shows the job getting through"

check "classes: in the summary a cause comes before the symptoms it explains" python3 -c '
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("14. NCCL Diagnostic Summary")[1].splitlines()
def at(text):
    for i, l in enumerate(lines):
        if text in l:
            return i
    sys.exit("not in the summary: " + text)
cause = at("OFI_LOAD_FAIL in ml/llama-pretrain-worker-2")
for s in ("CONNECT_FAIL in ml/llama-pretrain-worker-2", "EFA_TCP_FALLBACK in ml/llama-pretrain-worker-2"):
    if at(s) < cause:
        sys.exit("symptom before its cause: " + s)
if "explained by OFI_LOAD_FAIL" not in lines[at("CONNECT_FAIL in ml/llama-pretrain-worker-2")]:
    sys.exit("the symptom does not name its cause")
' "$e2e_tmp/all.txt"

check "classes: pods of one job printing different NCCL versions in their logs (no --exec)" \
	findings "$e2e_tmp/all.json" \
	"1:check=nccl.versions,tag=FAIL,priority=P1,section=NC10,message~NCCL version mismatch in job ml/class-nccl-versions: its pods' logs print 2 NCCL versions" \
	"0:check=nccl.versions,tag=FAIL,message~job ml/llama-pretrain"

"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --namespace ml --job class-gpu-ecc --no-probe --fail-on P0 --quiet
expect_status "classes: --fail-on P0 on the job with an uncorrectable ECC error exits 3" 3 $?
"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --namespace ml --job class-c10d-benign --no-probe --fail-on P2 --quiet
expect_status "classes: --fail-on P2 on the healthy job's benign warnings exits 0" 0 $?

fixture_stop
e2e_done
