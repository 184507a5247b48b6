#!/bin/sh
# On-node findings of the bundled fixture clusters without SSM: triage
# collects the cluster from the fixture server, every Running node is then
# probed in its sandbox (the real probe script, in a real shell, with the
# node's own data sources), and triage replays the snapshot. Each on-node
# fault of demo.yaml gives its finding with the right node and section;
# healthy.yaml's GPU nodes give no FAIL or WARN.
T=t0512-probe-fixture
. "$(dirname "$0")/e2e-lib.sh"

"$HPNODE" node --print-probe >"$e2e_tmp/probe.sh"

# probed FIXTURE NAME: collect, probe every node, replay; JSON report in $e2e_tmp/NAME.json.
probed() {
	fixture_start "$1" || return 1
	"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --region us-west-2 \
		--save-snapshot "$e2e_tmp/$2.snap" >/dev/null 2>"$e2e_tmp/$2.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		not_ok "$2: triage collects the cluster" "exit status $rc"
		return 1
	fi
	python3 "$ROOT/tests/e2e/probe_nodes.py" snapshot "$1" "$e2e_tmp/probe.sh" \
		"$e2e_tmp/$2.snap" "$e2e_tmp/$2-probed.snap" || return 1
	"$HPNODE" triage --snapshot "$e2e_tmp/$2-probed.snap" --output json >"$e2e_tmp/$2.json"
	expect_status "$2: triage replays the probed snapshot" 0 $?
}

if probed "$ROOT/tests/fixtures/demo.yaml" demo; then
	j=$e2e_tmp/demo.json
	check "demo: root volume 93% on sys-lcs is FAIL P0 § I.2" findings "$j" \
		"1:check=node.disk-root,tag=FAIL,priority=P0,section=I.2,node=$(fixture_get nodes.sys-lcs),message~Root volume 93% full"
	check "demo: Xid 79 on p5-xid is FAIL P0 § G.1.c" findings "$j" \
		"1:check=node.gpu-xid,tag=FAIL,priority=P0,section=G.1.c,node=$(fixture_get nodes.p5-xid),message~GPU Xid 79"
	check "demo: nvidia-smi fails on p5-xid's lost GPU (FAIL P0 § G.1)" findings "$j" \
		"1:check=node.gpu-count,tag=FAIL,priority=P0,section=G.1,node=$(fixture_get nodes.p5-xid),message~cannot reach GPU 0000:A8:00.0"
	check "demo: the pending row remap on p5-remap is FAIL P1 § G.1.a" findings "$j" \
		"1:check=node.gpu-remap,tag=FAIL,priority=P1,section=G.1.a,node=$(fixture_get nodes.p5-remap),message~GPU 4 (00000000:97:00.0)"
	check "demo: p5-efa has no EFA devices (FAIL P1 § A.3) and no provider (§ A.2)" findings "$j" \
		"1:check=node.efa,tag=FAIL,priority=P1,section=A.3,node=$(fixture_get nodes.p5-efa)" \
		"1:check=node.efa,tag=FAIL,priority=P1,section=A.2,node=$(fixture_get nodes.p5-efa)"
	check "demo: sys-lcs's provisioning.log shows the crash (WARN P1 § D)" findings "$j" \
		"1:check=node.provisioning,tag=WARN,priority=P1,section=D,node=$(fixture_get nodes.sys-lcs),message~3 error lines of 9"
	check "demo: NVLink, kubelet, /var/lib/containerd and interfaces pass" findings "$j" \
		"2:check=node.gpu-nvlink,tag=PASS,message~All 144 NVLink links active on 8 GPUs" \
		"1:check=node.kubelet,tag=PASS,message~kubelet active on 6 nodes" \
		"1:check=node.disk-containerd,tag=PASS,message~below 80% used on 6 nodes" \
		"1:check=node.net-errors,tag=PASS,message~on 6 nodes"
	check "demo: p5-xid's lost GPU and p5-remap's storage errors are no clean kernel log" findings "$j" \
		"0:check=node.kernel,tag=PASS,node=$(fixture_get nodes.p5-xid)" \
		"0:check=node.kernel,tag=PASS,node=$(fixture_get nodes.p5-remap)" \
		"1:check=node.kernel,tag=PASS,message~on 4 nodes"
	check "demo: the probe keeps p5-remap's storage lines: FAIL P0 § I.8, and its read-only instance store" findings "$j" \
		"1:check=node.storage-errors,tag=FAIL,priority=P0,section=I.8,node=$(fixture_get nodes.p5-remap),message~md0 (ext4 journal aborted" \
		"1:check=node.readonly,tag=FAIL,priority=P1,section=I.8,node=$(fixture_get nodes.p5-remap)" \
		"1:check=node.storage-errors,tag=PASS,message~on 5 nodes"
	check "demo: p5-xid's GPU 1 link trained at x8 of x16 is WARN P1 § G.4; the other p5 links pass" findings "$j" \
		"1:check=node.pcie-link,tag=WARN,priority=P1,section=G.4,node=$(fixture_get nodes.p5-xid),message~GPU 0000:17:00.0 (x8 of x16 at 32.0 of 32.0 GT/s)" \
		"2:check=node.pcie-link,tag=PASS"
	check "demo: no other on-node FAIL or WARN" findings "$j" \
		"8:check~node.,tag=FAIL" "2:check~node.,tag=WARN"
	check "demo: nodes not Running are not judged on-node" findings "$j" \
		"0:check~node.,node=$(fixture_get nodes.p5-nvlink)" \
		"0:check~node.,node=$(fixture_get nodes.g5-pending)"
	check "demo: identical results are summarised" findings "$j" \
		"1:check=node.time,tag=PASS,node=null,message~Time in sync on 6 nodes"
	fixture_stop
else
	not_ok "demo fixture is probed" "see messages above"
fi

if probed "$ROOT/tests/fixtures/healthy.yaml" healthy; then
	j=$e2e_tmp/healthy.json
	check "healthy: no on-node FAIL or WARN" findings "$j" "0:check~node.,tag=FAIL" "0:check~node.,tag=WARN"
	check "healthy: every GPU visible on the 6 GPU nodes" findings "$j" \
		"1:check=node.gpu-count,tag=PASS,message~All GPUs visible on 6 nodes"
	check "healthy: every NVLink link active, every lifecycle log clean" findings "$j" \
		"1:check=node.gpu-nvlink,tag=PASS,message~All NVLink links active on 4 nodes" \
		"1:check=node.provisioning,tag=PASS,message~on 8 nodes"
	check "healthy: every EFA device present" findings "$j" \
		"1:check=node.efa,tag=PASS,message~All EFA devices present on 6 nodes"
	check "healthy: DCGM healthy" findings "$j" "1:check=node.gpu-dcgm,tag=PASS,message~on 6 nodes"
	fixture_stop
else
	not_ok "healthy fixture is probed" "see messages above"
fi
e2e_done
