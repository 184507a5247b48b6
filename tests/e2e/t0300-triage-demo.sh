#!/bin/sh
# hpnode triage end to end on the bundled fixture clusters: the demo
# cluster's faults each give exactly their finding, a healthy cluster gives
# no FAIL, every API action called is read-only, and the text, JSON,
# snapshot and exit-status contracts hold.
T=t0300-triage-demo
. "$(dirname "$0")/e2e-lib.sh"

fixture_start "$ROOT/tests/fixtures/demo.yaml" || { not_ok "demo fixture starts" "see messages above"; e2e_done; }

"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --region us-west-2 --output json \
	--save-snapshot "$e2e_tmp/demo.snap" >"$e2e_tmp/demo.json" 2>"$e2e_tmp/demo.err"
expect_status "demo triage completes" 0 $?
check "demo: the EFA event is one P0 § A finding on its node" findings "$e2e_tmp/demo.json" \
	"1:check=events.signals,tag=FAIL,priority=P0,section=A,node=$(fixture_get nodes.p5-efa)"
check "demo: the failed node is FAIL P1 § F with its message" findings "$e2e_tmp/demo.json" \
	"1:check=nodes.status,tag=FAIL,priority=P1,section=F.1+F.2,node=$(fixture_get nodes.p5-nvlink),message~GPU 3 NVLink errors"
check "demo: the pending node is a WARN" findings "$e2e_tmp/demo.json" \
	"1:check=nodes.status,tag=WARN,node=$(fixture_get nodes.g5-pending)"
check "demo: the group under target is FAIL § C" findings "$e2e_tmp/demo.json" \
	"1:check=cluster.instance-groups,tag=FAIL,section=C,message~worker-g5"
check "demo: ThreadsPerCore 1 on p5 is WARN § J (96 instead of 192)" findings "$e2e_tmp/demo.json" \
	"1:check=cluster.threads-per-core,tag=WARN,section=J.2,message~96 vCPUs instead of 192"
check "demo: the lifecycle traceback is FAIL § D on its node" findings "$e2e_tmp/demo.json" \
	"1:check=logs.lifecycle,tag=FAIL,priority=P1,section=D,node=$(fixture_get nodes.sys-lcs)"
check "demo: the health agent's NVLink fault is FAIL § F" findings "$e2e_tmp/demo.json" \
	"1:check=logs.health-agent,tag=FAIL,section=F,node=$(fixture_get nodes.p5-nvlink)"
check "demo: capacity reason read from the event details is FAIL § C" findings "$e2e_tmp/demo.json" \
	"1:check=events.signals,tag=FAIL,section=C,message~Insufficient capacity on instance group 'worker-g5'"
check "demo: an Error event no rule claims is a WARN with its text and reason" findings "$e2e_tmp/demo.json" \
	"1:check=events.signals,tag=WARN,message~Software update of InstanceGroup system failed — The image ami-0abc1234def567890"
check "demo: no permission findings when nothing is denied" findings "$e2e_tmp/demo.json" \
	"0:message~Missing IAM permission"
# On-node faults, read over SSM sessions from every Running node.
check "demo over SSM: root volume 93% is FAIL P0 § I.2 on its node" findings "$e2e_tmp/demo.json" \
	"1:check=node.disk-root,tag=FAIL,priority=P0,section=I.2,node=$(fixture_get nodes.sys-lcs)"
check "demo over SSM: Xid 79 is FAIL P0 § G.1.c on its node" findings "$e2e_tmp/demo.json" \
	"1:check=node.gpu-xid,tag=FAIL,priority=P0,section=G.1.c,node=$(fixture_get nodes.p5-xid)"
check "demo over SSM: 7 of 8 GPUs is FAIL § G.1 on the same node" findings "$e2e_tmp/demo.json" \
	"1:check=node.gpu-count,tag=FAIL,node=$(fixture_get nodes.p5-xid)"
check "demo over SSM: a pending row remap is FAIL P1 § G.1.a" findings "$e2e_tmp/demo.json" \
	"1:check=node.gpu-remap,tag=FAIL,priority=P1,section=G.1.a,node=$(fixture_get nodes.p5-remap)"
check "demo over SSM: ext4 gave up on the NVMe instance store: FAIL P0 § I.8 naming the devices" findings "$e2e_tmp/demo.json" \
	"1:check=node.storage-errors,tag=FAIL,priority=P0,section=I.8,node=$(fixture_get nodes.p5-remap),message~nvme3n1 (I/O errors); md0 (ext4 journal aborted"
check "demo over SSM: /opt/dlami/nvme read-only by its superblock flag is FAIL P1 § I.8" findings "$e2e_tmp/demo.json" \
	"1:check=node.readonly,tag=FAIL,priority=P1,section=I.8,node=$(fixture_get nodes.p5-remap),message~/opt/dlami/nvme is read-only"
check "demo over SSM: a corrected PCIe error in the 6.x wording is no AER failure" findings "$e2e_tmp/demo.json" \
	"0:check=node.kernel,tag=FAIL"
check "demo over SSM: missing EFA devices are FAIL § A.3" findings "$e2e_tmp/demo.json" \
	"1:check=node.efa,tag=FAIL,section=A.3,node=$(fixture_get nodes.p5-efa)"
check "demo over SSM: every Running node was probed" sh -c \
	'python3 -c "import json,sys; m=json.load(open(sys.argv[1]))[\"probes_meta\"]; sys.exit(not (m[\"probed\"] == 6 and m[\"unreachable\"] == 0))" "$1"' _ "$e2e_tmp/demo.snap"

# Every action hpnode called is in the read-only policy (or STS identity).
allowed="sagemaker:DescribeCluster sagemaker:DescribeClusterEvent sagemaker:DescribeClusterNode sagemaker:ListClusterNodes
sagemaker:ListClusterEvents sagemaker:ListClusters eks:DescribeCluster ec2:DescribeSecurityGroups
ec2:DescribeSubnets ec2:DescribeVpcs ec2:DescribeVpcAttribute ec2:DescribeVpcEndpoints
ec2:DescribeRouteTables ec2:DescribeNetworkInterfaces ec2:DescribeInstances
ec2:DescribeInstanceTypeOfferings ec2:DescribeInstanceTypes logs:DescribeLogGroups
logs:DescribeLogStreams logs:FilterLogEvents ssm:StartSession ssm:TerminateSession
service-quotas:GetServiceQuota sts:GetCallerIdentity"
bad=""
for a in $(sort -u "$FIXTURE_RECORD"); do
	case " $(echo $allowed) " in *" $a "*) ;; *) bad="$bad $a" ;; esac
done
if [ -z "$bad" ] && [ -s "$FIXTURE_RECORD" ]; then
	ok "every recorded API action is read-only ($(sort -u "$FIXTURE_RECORD" | wc -l) distinct)"
else
	not_ok "every recorded API action is read-only" "outside the policy:${bad:- (nothing recorded)}"
fi

# Text report contract.
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --region us-west-2 >"$e2e_tmp/demo.txt" 2>&1
expect_status "demo text triage completes" 0 $?
check "text: banner" contains "$e2e_tmp/demo.txt" "HyperPod Node Triage — READ-ONLY"
check "text: P0 group header" contains "$e2e_tmp/demo.txt" "  [P0 — Fix Immediately]"
check "text: P1 group header" contains "$e2e_tmp/demo.txt" "  [P1 — Fix Soon]"
check "text: pointer format" contains "$e2e_tmp/demo.txt" "→ references/node-diagnostics-detail.md § A (EFA / Security Group)"
check "text: footer" contains "$e2e_tmp/demo.txt" "Cluster: hp-demo  |  Region: us-west-2  |  Orchestrator: EKS"
if grep -q "$(printf '\033')" "$e2e_tmp/demo.txt"; then
	not_ok "text: no colour when stdout is not a terminal" "ESC byte found"
else
	ok "text: no colour when stdout is not a terminal"
fi
# Colour on a terminal, and NO_COLOR / --no-color turning it off (rendering
# only: no SSM probes, which the first runs above already made).
if command -v script >/dev/null 2>&1; then
	script -qec "$HPNODE triage --cluster $FIXTURE_CLUSTER --region us-west-2 --no-probe" /dev/null >"$e2e_tmp/tty.txt" 2>&1
	if grep -q "$(printf '\033')\[0;31m\[FAIL\]" "$e2e_tmp/tty.txt"; then ok "text: colour on a terminal"; else not_ok "text: colour on a terminal" "no red FAIL"; fi
	NO_COLOR=1 script -qec "$HPNODE triage --cluster $FIXTURE_CLUSTER --region us-west-2 --no-probe" /dev/null >"$e2e_tmp/tty2.txt" 2>&1
	if grep -q "$(printf '\033')\[" "$e2e_tmp/tty2.txt"; then not_ok "text: NO_COLOR turns colour off" "ESC found"; else ok "text: NO_COLOR turns colour off"; fi
	script -qec "$HPNODE triage --no-color --cluster $FIXTURE_CLUSTER --region us-west-2 --no-probe" /dev/null >"$e2e_tmp/tty3.txt" 2>&1
	if grep -q "$(printf '\033')\[" "$e2e_tmp/tty3.txt"; then not_ok "text: --no-color turns colour off" "ESC found"; else ok "text: --no-color turns colour off"; fi
fi

# --fail-on gates.
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --region us-west-2 --no-probe --fail-on P0 >/dev/null 2>&1
expect_status "--fail-on P0 with a P0 finding exits 3" 3 $?

# A saved snapshot replays to the same report without any AWS call.
lines_before=$(wc -l <"$FIXTURE_RECORD")
env -u AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID= AWS_SECRET_ACCESS_KEY= \
	"$HPNODE" triage --snapshot "$e2e_tmp/demo.snap" --output json >"$e2e_tmp/replay.json" 2>&1
expect_status "snapshot replay completes" 0 $?
if python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(a["findings"]!=b["findings"])' "$e2e_tmp/demo.json" "$e2e_tmp/replay.json"; then
	ok "snapshot replay gives the same findings"
else
	not_ok "snapshot replay gives the same findings" "they differ"
fi
[ "$(wc -l <"$FIXTURE_RECORD")" = "$lines_before" ] && ok "snapshot replay makes no API call" || not_ok "snapshot replay makes no API call" "calls were recorded"

# --node: a real node narrows, a missing one is P0 and never switches.
node=$(fixture_get nodes.sys-lcs)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER_ARN" --region us-west-2 --node "$node" --output json >"$e2e_tmp/node.json" 2>&1
expect_status "--node with the cluster ARN completes" 0 $?
check "--node: node details are reported" findings "$e2e_tmp/node.json" "1:check=nodes.target,tag=INFO,message~$node"
check "--node: only that node's lifecycle stream is read" findings "$e2e_tmp/node.json" \
	"0:check=logs.health-agent,tag=FAIL" "1:check=logs.lifecycle,tag=FAIL,node=$node"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --region us-west-2 --node i-0123456789abcdef0 --output json \
	--save-snapshot "$e2e_tmp/missing.snap" >"$e2e_tmp/missing.json" 2>"$e2e_tmp/missing.err"
expect_status "--node of a missing node: exit 1, as a missing cluster" 1 $?
check "--node missing: says so and lists the cluster's node ids by group and type" sh -c '
grep -q "^ERROR: Node i-0123456789abcdef0 not found in cluster hp-demo" "$1" &&
grep -q "^  gpu-p5 (ml.p5.48xlarge): i-" "$1" && grep -q "^  system (ml.m5.2xlarge): i-" "$1"' _ "$e2e_tmp/missing.err"
check "--node missing: its snapshot replayed says so again (exit 1)" sh -c '
"$1" triage --snapshot "$2" --output json 2>/dev/null; [ $? = 1 ]' _ "$HPNODE" "$e2e_tmp/missing.snap"
check "--node missing: no other node is examined in its place (no probe, no kubectl)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(1 if d.get("probes") or d.get("kube") else 0)' "$e2e_tmp/missing.snap"
fixture_stop

fixture_start "$ROOT/tests/fixtures/healthy.yaml" || { not_ok "healthy fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json --fail-on P2 >"$e2e_tmp/healthy.json" 2>"$e2e_tmp/healthy.err"
expect_status "healthy cluster: exit 0 even with --fail-on P2 (region from AWS_REGION)" 0 $?
check "healthy cluster: no FAIL and no WARN" findings "$e2e_tmp/healthy.json" "0:tag=FAIL" "0:tag=WARN"
check "healthy cluster: nodes all Running" findings "$e2e_tmp/healthy.json" "1:check=nodes.status,tag=PASS"
check "healthy cluster: events read" findings "$e2e_tmp/healthy.json" ">=1:check=events.signals,tag=INFO"
e2e_done
