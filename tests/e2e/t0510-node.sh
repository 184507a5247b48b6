#!/bin/sh
# hpnode node on the machine the tests run on: it must run to the end, and
# whatever this machine lacks (GPUs, EFA, Neuron, chrony, systemd) must be
# reported as absent, never as a failure. Also its command line, its
# report header and output files, its snapshot (replayable by triage) and
# the embedded probe script.
T=t0510-node
. "$(dirname "$0")/e2e-lib.sh"

run() { "$HPNODE" "$@" >"$e2e_tmp/out" 2>"$e2e_tmp/err"; echo $?; }
# Off a cloud instance the metadata service cannot answer; do not wait for it.
export AWS_EC2_METADATA_DISABLED=true

expect_status "node --help exits 0" 0 "$(run node --help)"
check "node --help documents exit statuses" contains "$e2e_tmp/out" "Exit status"
expect_status "hpnode --help exits 0" 0 "$(run --help)"
check "the command list names node" contains "$e2e_tmp/out" "node "
expect_status "unknown option exits 2" 2 "$(run node --bogus)"
check "unknown option is named" contains "$e2e_tmp/err" "unknown option '--bogus'"
expect_status "bad --timeout exits 2" 2 "$(run node --timeout soon)"
expect_status "bad --orchestrator exits 2" 2 "$(run node --orchestrator k8s)"
expect_status "missing snapshot exits 1" 1 "$(run node --snapshot "$e2e_tmp/none.json")"

expect_status "--print-probe exits 0" 0 "$(run node --print-probe)"
check "--print-probe prints the probe script" grep -q '^hp_probe </dev/null$' "$e2e_tmp/out"
check "--print-probe's script carries its framing (frame.sh)" grep -q '^block() {$' "$e2e_tmp/out"
check "--print-probe's script has no include line left" sh -c "! grep -q '^#@include' '$e2e_tmp/out'"
check "--print-probe's script parses as POSIX sh" sh -n "$e2e_tmp/out"
check "the probe script is valid sh" sh -n "$e2e_tmp/out"

# The real thing, on this machine.
expect_status "node runs on this machine (JSON)" 0 \
	"$(run node --output json --save-snapshot "$e2e_tmp/node.snap")"
cp "$e2e_tmp/out" "$e2e_tmp/node.json"
check "node: no message on stderr" test ! -s "$e2e_tmp/err"
check "node: the probe output arrived whole" findings "$e2e_tmp/node.json" \
	"1:check=node.probe,tag=INFO,node=local,message~On-node probe output received from this node" \
	"0:check=node.probe,tag=WARN"
check "node: disks were judged" findings "$e2e_tmp/node.json" ">=1:check=node.disk-root,node=local"
check "node: kernel messages read or said unreadable" findings "$e2e_tmp/node.json" ">=1:check=node.kernel,node=local"

# Absent on this machine means INFO, and never FAIL or WARN.
if ! command -v nvidia-smi >/dev/null 2>&1; then
	check "no GPU: reported absent, not failed" findings "$e2e_tmp/node.json" \
		"1:check=node.gpu-count,tag=INFO,message~No NVIDIA GPU on this node" \
		"0:check=node.gpu-count,tag=FAIL" "0:check=node.gpu-count,tag=WARN" \
		"0:check=node.gpu-xid" "0:check=node.gpu-ecc" "0:check=node.gpu-dcgm"
fi
if [ ! -e /dev/infiniband ]; then
	check "no EFA: reported absent, not failed" findings "$e2e_tmp/node.json" \
		"1:check=node.efa,tag=INFO,message~No EFA devices on this node" \
		"0:check=node.efa,tag=FAIL" "0:check=node.efa,tag=WARN"
fi
if ! command -v neuron-ls >/dev/null 2>&1; then
	check "no Neuron: reported absent, not failed" findings "$e2e_tmp/node.json" \
		"1:check=node.neuron,tag=INFO,message~No Neuron devices on this node" \
		"0:check=node.neuron,tag=FAIL"
fi
if ! command -v chronyc >/dev/null 2>&1; then
	check "no chrony: time sync is never a failure for want of a tool" findings "$e2e_tmp/node.json" \
		"0:check=node.time,tag=FAIL"
	if ! timedatectl status >/dev/null 2>&1; then
		check "no chrony, no timedatectl: unknown" findings "$e2e_tmp/node.json" \
			"1:check=node.time,tag=INFO,message~Time sync state unknown on this node"
	fi
fi
if ! systemctl show -p Id init.scope >/dev/null 2>&1; then
	check "no systemd: services not checked, not failed" findings "$e2e_tmp/node.json" \
		"1:check=node.ssm-agent,tag=INFO,message~Services not checked on this node" \
		"0:check=node.containerd" "0:check=node.slurm"
fi

expect_status "node runs on this machine (text)" 0 "$(run node --no-color)"
check "text report has its title" contains "$e2e_tmp/out" "HyperPod Node Check"
check "text report has the on-node section" contains "$e2e_tmp/out" "On-Node Resource Checks"
check "text report has the summary" contains "$e2e_tmp/out" "Triage Summary"

# The report header and the output files, as triage has them.
check "text report has the run header" grep -q "^Tool: hpnode " "$e2e_tmp/out"
check "text report names the command line" grep -q "^Command: hpnode node --no-color$" "$e2e_tmp/out"
expect_status "node --quiet with output files" 0 \
	"$(run node --quiet --json-file "$e2e_tmp/files.json" --junit-file "$e2e_tmp/files.xml" --text-file "$e2e_tmp/files.txt")"
check "--quiet: nothing on stdout" test ! -s "$e2e_tmp/out"
check "--json-file: the JSON report with its run header" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["run"]["command_line"].startswith("hpnode node --quiet"), d["run"]
assert any(f["check"] == "node.probe" for f in d["findings"])
' "$e2e_tmp/files.json"
check "--junit-file: a JUnit document of the same findings" \
	python3 "$ROOT/tests/e2e/junit_check.py" "$e2e_tmp/files.xml" "$e2e_tmp/files.json"
check "--text-file: the text report" grep -q "HyperPod Node Check" "$e2e_tmp/files.txt"
expect_status "an output path that cannot be written: exit 2 before probing" 2 \
	"$(run node --json-file "$e2e_tmp/no/such/dir/x.json")"
check "the unwritable path is named" contains "$e2e_tmp/err" "nothing was collected"

# The saved snapshot replays through triage to the same on-node findings.
expect_status "triage replays the node snapshot" 0 \
	"$(run triage --snapshot "$e2e_tmp/node.snap" --output json)"
n1=$(python3 -c 'import json,sys; print(sum(1 for f in json.load(open(sys.argv[1]))["findings"] if (f["check"] or "").startswith("node.")))' "$e2e_tmp/node.json")
n2=$(python3 -c 'import json,sys; print(sum(1 for f in json.load(open(sys.argv[1]))["findings"] if (f["check"] or "").startswith("node.")))' "$e2e_tmp/out")
if [ "$n1" = "$n2" ] && [ "$n1" -gt 5 ]; then
	ok "replay gives the same $n1 on-node findings"
else
	not_ok "replay gives the same on-node findings" "$n1 live, $n2 replayed"
fi
expect_status "node --snapshot replays it too" 0 "$(run node --snapshot "$e2e_tmp/node.snap")"
e2e_done
