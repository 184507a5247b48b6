#!/bin/sh
# Node conditions, node events and evicted pods end to end: the real kubectl
# against npd.yaml, whose nodes carry node-problem-detector's and the
# kubelet's conditions and events as the API server returns them. Each fault
# gives its finding on its node and section; the node whose every condition
# is present and False, a recovery event, a corrected hardware error and a
# pod that failed by itself give none.
T=t0701-kube-conditions
. "$(dirname "$0")/e2e-lib.sh"

if ! command -v kubectl >/dev/null 2>&1; then
	not_ok "kubectl is installed" "these tests run the real kubectl"
	e2e_done
fi

fixture_start "$ROOT/tests/fixtures/npd.yaml" || { not_ok "npd fixture starts" "see above"; e2e_done; }
ro=$(fixture_get nodes.p5-ro)
disk=$(fixture_get nodes.p5-disk)
mem=$(fixture_get nodes.p5-mem)
kub=$(fixture_get nodes.sys-kubelet)
good=$(fixture_get nodes.sys-ok)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --output json \
	--save-snapshot "$e2e_tmp/npd.snap" >"$e2e_tmp/npd.json" 2>"$e2e_tmp/npd.err"
expect_status "triage of npd.yaml completes" 0 $?
J=$e2e_tmp/npd.json

# --- conditions --------------------------------------------------------------
check "ReadonlyFilesystem True is FAIL P0 § I.8 on its node" findings "$J" \
	"1:check=kube.node-conditions,tag=FAIL,priority=P0,section=I.8,node=$ro,message~ReadonlyFilesystem is True (FilesystemIsReadOnly: EXT4-fs (sda1): Remounting filesystem read-only)"
check "DiskPressure True is FAIL P1 § I.2" findings "$J" \
	"1:check=kube.node-conditions,tag=FAIL,priority=P1,section=I.2,node=$disk,message~DiskPressure is True (KubeletHasDiskPressure"
check "MemoryPressure True is FAIL P1 § I.3" findings "$J" \
	"1:check=kube.node-conditions,tag=FAIL,priority=P1,section=I.3,node=$mem,message~MemoryPressure is True"
check "PIDPressure True is FAIL P1 § I" findings "$J" \
	"1:check=kube.node-conditions,tag=FAIL,priority=P1,section=I,node=$kub,message~PIDPressure is True"
check "KernelDeadlock (DockerHung) is FAIL P1 § N.1" findings "$J" \
	"1:check=kube.node-conditions,tag=FAIL,section=N.1,node=$kub,message~KernelDeadlock is True (DockerHung: INFO: task docker:20744 blocked"
check "FrequentKubeletRestart is FAIL P1 § M" findings "$J" \
	"1:check=kube.node-conditions,tag=FAIL,section=M,node=$kub,message~FrequentKubeletRestart is True"
check "FrequentContainerdRestart is FAIL P1 § M.2" findings "$J" \
	"1:check=kube.node-conditions,tag=FAIL,section=M.2,node=$kub,message~FrequentContainerdRestart is True"
check "every condition present and False: no finding on that node" findings "$J" \
	"0:check=kube.node-conditions,node=$good" "0:check=kube.node-events,node=$good" \
	"0:check=kube.evictions,node=$good"
check "the healthy node passes by itself, not as an all-clear" findings "$J" \
	"1:check=kube.node-conditions,tag=PASS,message~The other 1 HyperPod node(s) report no pressure" \
	"0:check=kube.node-conditions,tag=PASS,message~No HyperPod node"
check "node-problem-detector is seen installed (no INFO saying it is absent)" findings "$J" \
	"0:check=kube.node-conditions,tag=INFO"

# --- node events -------------------------------------------------------------
check "Ext4Error events are FAIL P1 § I.8 with their count" findings "$J" \
	"1:check=kube.node-events,tag=FAIL,priority=P1,section=I.8,node=$ro,message~Ext4Error 3 time(s) (kernel-monitor)"
check "the ReadonlyFilesystem condition change event is FAIL § I.8" findings "$J" \
	"1:check=kube.node-events,tag=FAIL,section=I.8,node=$ro,message~FilesystemIsReadOnly 1 time(s) (readonly-monitor)"
check "OOMKilling is WARN P1 § I.3" findings "$J" \
	"1:check=kube.node-events,tag=WARN,priority=P1,section=I.3,node=$mem,message~OOMKilling"
check "TaskHung is WARN P1 § N.1" findings "$J" \
	"1:check=kube.node-events,tag=WARN,section=N.1,node=$kub,message~TaskHung"
check "EvictionThresholdMet for ephemeral-storage is WARN § I.2" findings "$J" \
	"1:check=kube.node-events,tag=WARN,section=I.2,node=$disk,message~EvictionThresholdMet 4 time(s) (kubelet)"
check "a corrected hardware error is INFO, never a fault" findings "$J" \
	"1:check=kube.node-events,tag=INFO,message~CperHardwareErrorCorrected" \
	"0:check=kube.node-events,tag=FAIL,message~Cper" "0:check=kube.node-events,tag=WARN,message~Cper"
check "the evidence quotes the kernel line" sh -c "grep -q 'Detected aborted journal' '$J'"

# --- evictions ---------------------------------------------------------------
check "pods evicted for ephemeral-storage are FAIL P1 § I.2 on their node" findings "$J" \
	"1:check=kube.evictions,tag=FAIL,priority=P1,section=I.2,node=$disk,message~1 pod(s) on hyperpod-$disk (gpu-p5) were evicted: the node was low on ephemeral-storage" \
	"1:check=kube.evictions,tag=FAIL,section=I.2,node=$disk,message~low on disk (DiskPressure)"
check "a pod evicted for memory is FAIL P1 § I.3" findings "$J" \
	"1:check=kube.evictions,tag=FAIL,section=I.3,node=$mem,message~low on memory"
check "a pod that failed by itself is no eviction" findings "$J" "3:check=kube.evictions,tag=FAIL"

# --- what kubectl was asked ---------------------------------------------------
check "node events are read with a field selector, Warning only" \
	grep -q 'GET /api/v1/events?fieldSelector=involvedObject.kind%3DNode%2Ctype%3DWarning' "$FIXTURE_KUBE_RECORD"

# The same findings from the saved snapshot, without kubectl.
env -u AWS_ENDPOINT_URL PATH=/nonexistent "$HPNODE" triage --snapshot "$e2e_tmp/npd.snap" \
	--output json >"$e2e_tmp/replay.json" 2>&1
expect_status "replay completes" 0 $?
if python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a["findings"]!=b["findings"])' "$J" "$e2e_tmp/replay.json"; then
	ok "replay gives the same findings"
else
	not_ok "replay gives the same findings" "they differ"
fi

# --- events forbidden: a WARN, never a PASS -----------------------------------
fixture_stop
variant "$ROOT/tests/fixtures/npd.yaml" "$e2e_tmp/forbid.yaml" 'd["kubernetes"]["forbid"] = ["events"]'
fixture_start "$e2e_tmp/forbid.yaml" || { not_ok "forbid fixture starts" "see above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --output json >"$e2e_tmp/forbid.json" 2>&1
expect_status "triage with events forbidden completes" 0 $?
check "events forbidden: node events WARN, no PASS" findings "$e2e_tmp/forbid.json" \
	"1:check=kube.node-events,tag=WARN,message~Could not read node_events with kubectl" \
	"0:check=kube.node-events,tag=PASS"
fixture_stop
e2e_done
