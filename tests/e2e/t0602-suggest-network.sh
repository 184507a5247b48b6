#!/bin/sh
# triage --suggest on a cluster with several security groups and two VPCs
# (network-multi.yaml): every placeholder of a suggested command is filled
# from the finding's own resource, or the command is left out and
# suggestions_unfit says why; a rule that exists is not suggested; a NAT
# route in a VPC without a NAT gateway says to create one first, in a
# public subnet it names; the B.1 fixes are not handed to a security group
# in another VPC. Then the same VPC with a NAT gateway (the route is
# filled), a lost GPU (no row-remap reboot, on the demo) and a Slurm node
# whose reason is almost Action:Replace (the exact command).
T=t0602-suggest-network
. "$(dirname "$0")/e2e-lib.sh"
SUGG=$ROOT/tests/e2e/suggestions.py

fixture_start "$ROOT/tests/fixtures/network-multi.yaml" || { not_ok "fixture starts" "see above"; e2e_done; }
efa=$(fixture_get security_groups.efa)
side=$(fixture_get security_groups.side-sg)
rtb=$(fixture_get route_tables.rt-private)
pub=$(fixture_get subnets.pub-a)
pa=$(fixture_get subnets.private-a)
vpc=$(fixture_get vpc_id)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube --suggest --output json \
	--save-snapshot "$e2e_tmp/multi.snap" >"$e2e_tmp/m.json" 2>"$e2e_tmp/m.err"
expect_status "triage --suggest on several groups and VPCs completes" 0 $?
J=$e2e_tmp/m.json
check "contract: no placeholder left in any suggested command" \
	python3 "$SUGG" "$J" contract CLUSTER,CLUSTER_ID,REGION,EKS_NAME,SG_ID,VPC_ID,ROUTE_TABLE_ID
check "the missing outbound self-reference names the finding's group, of three" \
	python3 "$SUGG" "$J" has "check=network.efa-sg,tag=FAIL,message~$efa" A.1 \
	"authorize-security-group-egress --group-id $efa " "\"GroupId\":\"$efa\""
check "its inbound self-reference exists, so it is not suggested (said why)" \
	python3 "$SUGG" "$J" unfit "check=network.efa-sg,tag=FAIL,message~$efa" \
	"$efa already has the all-traffic inbound rule from itself" "authorize-security-group-ingress"
check "a NAT route in a VPC without a NAT gateway: create one first, in the public subnet" \
	python3 "$SUGG" "$J" unfit "check=network.routing,tag=FAIL,message~$pa" \
	"replace-route --route-table-id $rtb --destination-cidr-block 0.0.0.0/0 --nat-gateway-id <NAT_GATEWAY_ID>" \
	"replace-route"
check "... naming the VPC and its public subnet, never a cluster subnet" \
	python3 "$SUGG" "$J" unfit "check=network.routing,tag=FAIL,message~$pa" \
	"create one first in a public subnet of $vpc (one whose route table sends 0.0.0.0/0 to an internet gateway: $pub)" \
	"replace-route"
check "the security group in another VPC gets no § B.1 fix (said why)" \
	python3 "$SUGG" "$J" unfit "check=network.vpc,message~$side" \
	"B.1: the command is for the EKS authentication mode, which this finding is not about" \
	"update-cluster-config"
if python3 - "$J" "$side" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
f = [f for f in doc["findings"] if f["check"] == "network.vpc" and sys.argv[2] in f["message"]]
sys.exit(not f or any(s["section"].startswith("B.1") for s in f[0]["suggestions"]))
PY
then ok "... and no § B.1 command at all"; else not_ok "... and no § B.1 command at all" "see $J"; fi
check "the VPC's endpoint fix takes the cluster subnets' route table" \
	python3 "$SUGG" "$J" has "check=network.endpoints" B.4 "--vpc-id $vpc " "--route-table-ids $rtb "
"$HPNODE" triage --snapshot "$e2e_tmp/multi.snap" --suggest >"$e2e_tmp/m.txt" 2>&1
check "text: the left-out command and why, on one line" contains "$e2e_tmp/m.txt" \
	"    (Not suggested, it does not fit this cluster: § B.3: \`aws ec2 replace-route --route-table-id $rtb"
fixture_stop

# The same VPC with a NAT gateway in the public subnet: the route is filled with it.
variant "$ROOT/tests/fixtures/network-multi.yaml" "$e2e_tmp/nat.yaml" '
d["network"]["nat_gateways"] = [{"alias": "nat-a", "subnet": "pub-a"}]
d["network"]["route_tables"].append({"alias": "rt-nat", "routes": [{"nat": "nat-a"}], "associations": []})
'
fixture_start "$e2e_tmp/nat.yaml" || { not_ok "NAT fixture starts" "see above"; e2e_done; }
nat=$(fixture_get nat_gateways.nat-a)
rtb=$(fixture_get route_tables.rt-private)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube --suggest --output json \
	>"$e2e_tmp/nat.json" 2>&1
expect_status "triage --suggest with a NAT gateway completes" 0 $?
check "with a NAT gateway in the VPC, the route points at it" \
	python3 "$SUGG" "$e2e_tmp/nat.json" has "check=network.routing,tag=FAIL" B.3 \
	"replace-route --route-table-id $rtb --destination-cidr-block 0.0.0.0/0 --nat-gateway-id $nat "
fixture_stop

# A GPU the driver lost is no pending row remap.
env -u AWS_ENDPOINT_URL "$HPNODE" triage --snapshot "$ROOT/tests/data/golden/demo.snap.json" \
	--suggest --output json >"$e2e_tmp/demo.json" 2>&1
check "a lost GPU: the row-remap reboot is left out, with why" \
	python3 "$SUGG" "$e2e_tmp/demo.json" unfit "check=node.gpu-count,message~cannot reach GPU" \
	"G.1.a: the command is for a pending or failed GPU row remap" "batch-reboot-cluster-nodes"
check "a pending remap still gets it" \
	python3 "$SUGG" "$e2e_tmp/demo.json" has "check=node.gpu-remap" G.1.a "batch-reboot-cluster-nodes"

# Slurm: a reason that is almost Action:Replace gets the exact command.
fixture_start "$ROOT/tests/fixtures/slurm.yaml" || { not_ok "slurm fixture starts" "see above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --output json --save-snapshot "$e2e_tmp/slurm.snap" \
	>/dev/null 2>&1
c2=$(fixture_get node_ids.2)
fixture_stop
variant "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/near.yaml" '
d["slurm"]["commands"]["sinfo"] = {"stdout": "{slurm_name:2}|drained|Action: replace\n{slurm_name:3}|idle|none\n"}
'
python3 "$ROOT/tests/fixtures/slurm_probe.py" "$e2e_tmp/near.yaml" "$e2e_tmp/slurm.snap" "$e2e_tmp/near.snap"
expect_status "the controller probe runs in the sandbox" 0 $?
env -u AWS_ENDPOINT_URL "$HPNODE" triage --snapshot "$e2e_tmp/near.snap" --suggest --output json \
	>"$e2e_tmp/near.json" 2>&1
name=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([f for f in d["findings"] if f["check"]=="slurm.nodes" and f["tag"]=="FAIL"][0]["message"].split()[2])' "$e2e_tmp/near.json")
check "the near miss is § F.3 on its node" findings "$e2e_tmp/near.json" \
	"1:check=slurm.nodes,tag=FAIL,section=F.3,node=$c2,message~'Action: replace'"
check "the near miss gets the exact scontrol command with the Slurm name" \
	python3 "$SUGG" "$e2e_tmp/near.json" has "check=slurm.nodes,node=$c2" F.3 \
	"sudo scontrol update nodename=$name state=fail reason=\"Action:Replace\""
check "Slurm near miss: the contract holds" \
	python3 "$SUGG" "$e2e_tmp/near.json" contract CLUSTER,CLUSTER_ID,REGION,NODE_NAME
e2e_done
