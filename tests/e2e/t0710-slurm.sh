#!/bin/sh
# The Slurm checks end to end: triage picks the controller from SlurmConfig
# and lists every node's Slurm name; the controller probe script runs in a
# sandbox made from the fixture's `slurm:` outputs (as it will over SSM) and
# the saved snapshot with its result replays to the expected findings.
T=t0710-slurm
. "$(dirname "$0")/e2e-lib.sh"

probe() { # FIXTURE SNAP_IN SNAP_OUT [args]: run the controller probe into the snapshot
	python3 "$ROOT/tests/fixtures/slurm_probe.py" "$@"
}
replay() { # SNAP OUT.json
	env -u AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID= AWS_SECRET_ACCESS_KEY= \
		"$HPNODE" triage --snapshot "$1" --output json >"$2" 2>"$2.err"
}

variant "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/tool.yaml" 'd["slurm"]["commands"]["srun"] = {"stdout": "x"}'
out=$(python3 "$ROOT/tests/fixtures/server.py" --fixture "$e2e_tmp/tool.yaml" --ready-file /dev/null --check 2>&1)
case $out in *"slurm.commands.srun: unknown tool"*) ok "fixture: an unknown Slurm tool is refused" ;;
*) not_ok "fixture: an unknown Slurm tool is refused" "$out" ;; esac
variant "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/ref.yaml" 'd["slurm"]["commands"]["sinfo"] = {"stdout": "{slurm_name:nope}|idle|none"}'
out=$(python3 "$ROOT/tests/fixtures/server.py" --fixture "$e2e_tmp/ref.yaml" --ready-file /dev/null --check 2>&1)
case $out in *"no node 'nope'"*) ok "fixture: a Slurm name of an unknown node is refused" ;;
*) not_ok "fixture: a Slurm name of an unknown node is refused" "$out" ;; esac

fixture_start "$ROOT/tests/fixtures/slurm.yaml" || { not_ok "slurm fixture starts" "see above"; e2e_done; }
ctl=$(fixture_get nodes.controller)
c2=$(fixture_get node_ids.2)
c3=$(fixture_get node_ids.3)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json --save-snapshot "$e2e_tmp/probed.snap" \
	>"$e2e_tmp/probed.json" 2>"$e2e_tmp/probed.err"
expect_status "slurm triage with the controller probed over SSM completes" 0 $?
check "over SSM: the controller's slurmctld, munge, nodes and jobs pass" findings "$e2e_tmp/probed.json" \
	"1:check=slurm.slurmctld,tag=PASS,node=$ctl" "1:check=slurm.munge,tag=PASS" \
	"1:check=slurm.nodes,tag=PASS" "1:check=slurm.jobs,tag=PASS" "0:check~slurm.,tag=SKIP"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --output json --save-snapshot "$e2e_tmp/slurm.snap" \
	>"$e2e_tmp/slurm.json" 2>"$e2e_tmp/slurm.err"
expect_status "slurm triage without probes completes" 0 $?
check "the controller comes from SlurmConfig NodeType Controller" findings "$e2e_tmp/slurm.json" \
	"1:check=slurm.controller,tag=SKIP,node=$ctl,message~from SlurmConfig NodeType Controller) was not probed"
check "without a probe every Slurm state check is skipped, none passes" findings "$e2e_tmp/slurm.json" \
	"5:check~slurm.,tag=SKIP" "0:check~slurm.,tag=PASS" "0:check~slurm.,tag=FAIL"
check "the name table has every node, joined by instance id" findings "$e2e_tmp/slurm.json" \
	"6:check=slurm.mapping,tag=INFO" "1:check=slurm.mapping,node=$c2,message~ip-10-3-" \
	"1:check=slurm.mapping,node=$ctl,message~controller-machine"
check "no kubectl is run for a Slurm cluster" findings "$e2e_tmp/slurm.json" "0:check~kube."
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe >"$e2e_tmp/slurm.txt" 2>&1
check "text report: the name table under 8b" grep -q "8b. Slurm Node Mapping" "$e2e_tmp/slurm.txt"
check "text report: table header" grep -q "\[INFO\] SLURM NAME  *INSTANCE ID  *GROUP" "$e2e_tmp/slurm.txt"
fixture_stop

# The healthy controller.
probe "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/slurm.snap" "$e2e_tmp/healthy.snap"
expect_status "probe runs in the sandbox" 0 $?
replay "$e2e_tmp/healthy.snap" "$e2e_tmp/healthy.json"
expect_status "healthy replay completes" 0 $?
check "healthy controller: slurmctld, munge, nodes, jobs pass" findings "$e2e_tmp/healthy.json" \
	"1:check=slurm.slurmctld,tag=PASS,node=$ctl" "1:check=slurm.munge,tag=PASS" \
	"1:check=slurm.nodes,tag=PASS,message~All 2 Slurm nodes are up" "1:check=slurm.jobs,tag=PASS" \
	"0:check~slurm.,tag=FAIL" "0:check~slurm.,tag=WARN"
check "healthy controller: sinfo states in the name table" findings "$e2e_tmp/healthy.json" \
	"1:check=slurm.mapping,node=$c3,message~allocated"

# A controller in trouble: the tools say so.
variant "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/bad.yaml" '
c = d["slurm"]["commands"]
c["scontrol"] = {"stdout": "Slurmctld(primary) at {slurm_name:controller} is DOWN\n", "exit": 1}
c["sinfo"] = {"stdout": "{slurm_name:2}|drained|Action:Replace\n{slurm_name:3}|down*|Not responding\n"}
c["squeue"] = {"stdout": "77|COMPLETING|2020-01-01T00:00:00|2020-01-01T00:00:00|{slurm_name:3}|train\n"}
c["systemctl"]["stdout"] = c["systemctl"]["stdout"].replace("ActiveState=active\nSubState=running\n\nId=slurmctld", "ActiveState=failed\nSubState=failed\n\nId=slurmctld", 1)
'
probe "$e2e_tmp/bad.yaml" "$e2e_tmp/slurm.snap" "$e2e_tmp/bad.snap"
replay "$e2e_tmp/bad.snap" "$e2e_tmp/bad.json"
expect_status "troubled replay completes" 0 $?
check "slurmctld down is P0 § H.5 on the controller" findings "$e2e_tmp/bad.json" \
	"1:check=slurm.slurmctld,tag=FAIL,priority=P0,section=H.5,node=$ctl"
check "munge failed is P0 § H.6" findings "$e2e_tmp/bad.json" \
	"1:check=slurm.munge,tag=FAIL,priority=P0,section=H.6,message~failed/failed"
check "Action:Replace is called out (§ F.2) on its instance" findings "$e2e_tmp/bad.json" \
	"1:check=slurm.nodes,tag=FAIL,section=F.2,node=$c2,message~Action:Replace"
check "a node not responding is § H.1 on its instance" findings "$e2e_tmp/bad.json" \
	"1:check=slurm.nodes,tag=FAIL,section=H.1,node=$c3,message~not responding"
check "a job COMPLETING for long is stuck (§ H.3)" findings "$e2e_tmp/bad.json" \
	"1:check=slurm.jobs,tag=WARN,priority=P1,section=H.3"
check "--fail-on P0 would stop a pipeline" sh -c \
	"env -u AWS_ENDPOINT_URL '$HPNODE' triage --snapshot '$e2e_tmp/bad.snap' --fail-on P0 >/dev/null 2>&1; test \$? -eq 3"

# Tools missing on the controller: unknown, never down, never up.
variant "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/bare.yaml" 'd["slurm"]["commands"] = {}'
probe "$e2e_tmp/bare.yaml" "$e2e_tmp/slurm.snap" "$e2e_tmp/bare.snap"
replay "$e2e_tmp/bare.snap" "$e2e_tmp/bare.json"
check "no Slurm tools: unknown, not failed, not passed" findings "$e2e_tmp/bare.json" \
	"1:check=slurm.slurmctld,tag=WARN,priority=P2,message~scontrol not found" \
	"0:check~slurm.,tag=FAIL" "0:check~slurm.,tag=PASS"

# The probe could not reach the controller, or was cut off.
probe "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/slurm.snap" "$e2e_tmp/unreach.snap" --state unreachable
replay "$e2e_tmp/unreach.snap" "$e2e_tmp/unreach.json"
check "unreachable controller: one WARN § K+H, the rest skipped" findings "$e2e_tmp/unreach.json" \
	"1:check=slurm.controller,tag=WARN,priority=P1,section=K+H,node=$ctl,message~TargetNotConnected" \
	"4:check~slurm.,tag=SKIP" "0:check~slurm.,tag=PASS"
probe "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/slurm.snap" "$e2e_tmp/cut.snap" --cut 200
replay "$e2e_tmp/cut.snap" "$e2e_tmp/cut.json"
check "cut-off output: reported incomplete, missing blocks skipped" findings "$e2e_tmp/cut.json" \
	"1:check=slurm.controller,tag=WARN,message~incomplete" "1:check=slurm.nodes,tag=SKIP" \
	"1:check=slurm.munge,tag=SKIP"

# ListClusterNodes denied: the controller group's nodes are unknown, never "no Running node".
variant "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/denied.yaml" 'd["faults"] = {"deny": ["sagemaker:ListClusterNodes"]}'
fixture_start "$e2e_tmp/denied.yaml" || { not_ok "denied fixture starts" "see above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/denied.json" 2>&1
check "ListClusterNodes denied: the controller is not checked, and why; no P0" findings "$e2e_tmp/denied.json" \
	"1:check=slurm.controller,tag=SKIP,message~nodes not checked" \
	"1:check=slurm.controller,message~ListClusterNodes denied" \
	"0:check~slurm.,tag=FAIL" "1:check=api.nodes,tag=FAIL,message~Missing IAM permission for sagemaker:ListClusterNodes"
fixture_stop

# Many nodes: all of them in the table, in text and JSON.
variant "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/wide.yaml" '
d["nodes"] = [{"alias": "controller", "group": "controller-machine"},
              {"group": "compute-p5", "count": 60}]
del d["slurm"]
'
fixture_start "$e2e_tmp/wide.yaml" || { not_ok "wide fixture starts" "see above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/wide.json" 2>&1
check "61 nodes: 61 rows in JSON" findings "$e2e_tmp/wide.json" \
	"63:check=slurm.mapping,tag=INFO" "1:check=slurm.mapping,node=$(fixture_get node_ids.60)"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" >"$e2e_tmp/wide.txt" 2>&1
rows=$(grep -c '\[INFO\] ip-10-3-[0-9]*-[0-9]*  *i-[0-9a-f]' "$e2e_tmp/wide.txt")
if [ "$rows" = 61 ]; then ok "61 nodes: 61 rows in the text report"; else not_ok "61 nodes: 61 rows in the text report" "$rows rows"; fi
e2e_done
