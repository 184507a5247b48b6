#!/bin/sh
# The fixture's per-node data sources (hpfixture/sandbox.py) and the probe
# run in them without SSM: a faulty fixture node's data, probed by
# `hpnode node` inside its sandbox, gives that node's findings.
T=t0511-probe-sandbox
. "$(dirname "$0")/e2e-lib.sh"

# The script the binary carries (probe.sh with frame.sh put in).
"$HPNODE" node --print-probe >"$e2e_tmp/probe.sh"
python3 "$ROOT/tests/e2e/sandbox_test.py" "$T" "$e2e_tmp/probe.sh" || e2e_failed=1

# sandbox NODE DIR: the environment of NODE's sandbox (demo.yaml), one NAME=value a line.
sandbox() {
	python3 "$ROOT/tests/e2e/probe_nodes.py" sandbox "$ROOT/tests/fixtures/demo.yaml" "$1" "$2"
}

# in_sandbox ENVFILE ARGS...: hpnode node with nothing but the sandbox's environment.
in_sandbox() {
	envfile=$1
	shift
	# shellcheck disable=SC2046
	env -i $(cat "$envfile") AWS_EC2_METADATA_DISABLED=true "$HPNODE" node "$@" \
		>"$e2e_tmp/out" 2>"$e2e_tmp/err"
	echo $?
}

if sandbox p5-xid "$e2e_tmp/xid" >"$e2e_tmp/xid.env"; then
	expect_status "p5-xid: hpnode node runs in the sandbox" 0 "$(in_sandbox "$e2e_tmp/xid.env" --output json)"
	check "p5-xid: nvidia-smi fails at the lost GPU, no GPU counted missing" findings "$e2e_tmp/out" \
		"1:check=node.gpu-count,tag=FAIL,priority=P0,section=G.1,node=local,message~nvidia-smi failed on this node: it cannot reach GPU 0000:A8:00.0 (Unknown Error)" \
		"0:check=node.gpu-count,message~missing"
	check "p5-xid: Xid 79 is a hardware failure" findings "$e2e_tmp/out" \
		"1:check=node.gpu-xid,tag=FAIL,priority=P0,section=G.1.c,message~GPU Xid 79 (GPU has fallen off the bus)"
	check "p5-xid: EFA counted from the PCI bus" findings "$e2e_tmp/out" \
		"1:check=node.efa,tag=PASS,message~32 of 32 EFA devices present on this node"
	check "p5-xid: kubelet makes it an EKS node" findings "$e2e_tmp/out" \
		"1:check=node.containerd,tag=PASS"
	check "p5-xid: nothing of this machine leaks in" findings "$e2e_tmp/out" \
		"1:check=node.time,tag=PASS,message~chrony: offset -0.000021 s" \
		"1:check=node.disk-root,tag=PASS,message~Root volume 44% used"
else
	not_ok "p5-xid sandbox is prepared" "$(cat "$e2e_tmp/xid.env")"
fi

if sandbox sys-lcs "$e2e_tmp/lcs" >"$e2e_tmp/lcs.env"; then
	expect_status "sys-lcs: --fail-on P0 exits 3" 3 "$(in_sandbox "$e2e_tmp/lcs.env" --fail-on P0 --output json)"
	check "sys-lcs: root volume 93% is FAIL P0 § I.2" findings "$e2e_tmp/out" \
		"1:check=node.disk-root,tag=FAIL,priority=P0,section=I.2,node=local,message~Root volume 93% full on this node"
	check "sys-lcs: a CPU node expects no GPU" findings "$e2e_tmp/out" "0:check=node.gpu-count,tag=FAIL"
else
	not_ok "sys-lcs sandbox is prepared" "$(cat "$e2e_tmp/lcs.env")"
fi

# A node whose kernel log never comes back: --timeout ends the probe, the
# checks use what arrived and say the output was cut short.
variant "$ROOT/tests/fixtures/demo.yaml" "$e2e_tmp/slow.yaml" '
d["probe_defaults"]["commands"]["dmesg"]["sleep"] = 30
'
python3 "$ROOT/tests/e2e/probe_nodes.py" sandbox "$e2e_tmp/slow.yaml" sys-ok "$e2e_tmp/slow" >"$e2e_tmp/slow.env"
start=$(date +%s)
expect_status "a hung probe command: node still reports (exit 0)" 0 \
	"$(in_sandbox "$e2e_tmp/slow.env" --timeout 2 --output json)"
took=$(( $(date +%s) - start ))
if [ "$took" -lt 10 ]; then ok "--timeout 2 ends the probe in time (${took} s)"; else not_ok "--timeout 2 ends the probe in time" "${took} s"; fi
check "the cut output is reported and still used" findings "$e2e_tmp/out" \
	"1:check=node.probe,tag=WARN,priority=P2,section=K.5,message~ended early" \
	"1:check=node.disk-root,tag=PASS"
e2e_done
