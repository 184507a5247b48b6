#!/bin/sh
# node.fabric-manager end to end: the real probe over the fixture's SSM data
# channel on healthy.yaml's p5 nodes (an NVSwitch type). One p5 node has
# systemd's record and Fabric Manager's journal as a failed start leaves
# them (the journal of NVIDIA/gpu-operator issue #610,
# tests/data/probe/fabricmanager-journal-failed.txt); the other three, the
# trap, as a clean start leaves them (NVIDIA/nvtrust issue #128,
# fabricmanager-journal-started.txt).
T=t0515-fabric-manager
. "$(dirname "$0")/e2e-lib.sh"

variant "$ROOT/tests/fixtures/healthy.yaml" "$e2e_tmp/fm.yaml" "
import copy
def plant(entry, state, sub, journal):
    cmds = entry['probe']['commands']
    unit = 'Id=nvidia-fabricmanager.service\nLoadState=loaded\nActiveState=%s\nSubState=%s\n' % (state, sub)
    cmds['systemctl'] = dict(d['probe_defaults']['commands']['systemctl'])
    cmds['systemctl']['stdout'] = cmds['systemctl']['stdout'].rstrip('\n') + '\n\n' + unit
    cmds['journalctl'] = {'cases': [{'args': '-u nvidia-fabricmanager.service',
                                     'stdout': open('$ROOT/tests/data/probe/' + journal).read()}]}
bad, good = copy.deepcopy(d['nodes'][0]), copy.deepcopy(d['nodes'][0])
good['count'] = 3
del bad['count']
bad['alias'] = 'p5-fm'
plant(bad, 'failed', 'failed', 'fabricmanager-journal-failed.txt')
plant(good, 'active', 'running', 'fabricmanager-journal-started.txt')
d['nodes'][0:1] = [bad, good]
"
fixture_start "$e2e_tmp/fm.yaml" || { not_ok "fixture starts" "see above"; e2e_done; }
fm=$(fixture_get nodes.p5-fm)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-kube --output json >"$e2e_tmp/fm.json" 2>"$e2e_tmp/fm.err"
expect_status "triage completes" 0 $?
fixture_stop
J=$e2e_tmp/fm.json
check "a failed Fabric Manager is FAIL P0 § G.5 on its node" findings "$J" \
	"1:check=node.fabric-manager,tag=FAIL,priority=P0,section=G.5,node=$fm,message~nvidia-fabricmanager is failed on"
check "... saying CUDA cannot initialise while nvidia-smi lists every GPU" findings "$J" \
	"1:check=node.fabric-manager,tag=FAIL,node=$fm,message~system not yet initialized"
check "... with the journal's last words as evidence" python3 -c '
import json, sys
f = [f for f in json.load(open(sys.argv[1]))["findings"]
     if f["check"] == "node.fabric-manager" and f["tag"] == "FAIL"][0]
sys.exit(not any("NV_WARN_NOTHING_TO_DO" in e and e.startswith("journal: ") for e in f["evidence"])
         or not any("status=1/FAILURE" in e for e in f["evidence"]))' "$J"
check "the three p5 nodes whose Fabric Manager runs pass, nothing else is judged" findings "$J" \
	"3:check=node.fabric-manager,tag=PASS,message~nvidia-fabricmanager active" "0:check=node.fabric-manager,tag=WARN" \
	"1:check=node.fabric-manager,tag=FAIL"
check "the G5 and CPU nodes (no NVSwitch) are not judged" python3 -c '
import json, sys
fs = [f for f in json.load(open(sys.argv[1]))["findings"] if f["check"] == "node.fabric-manager"]
sys.exit(sum(len(f["nodes"]) or 1 for f in fs) != 4)' "$J"
e2e_done
