#!/bin/sh
# Network checks end to end: a healthy network gives no FAIL; each injected
# fault (security group rules, DNS, routes, endpoints, free IPs, ENI quota,
# EKS alignment, zone offerings, other VPCs) gives its finding with its
# section; an unreadable security group is "cannot read", never a missing
# rule; and the standalone `efa-sg` and `vpc` commands keep triage's report
# and exit statuses.
T=t0400-network
. "$(dirname "$0")/e2e-lib.sh"

healthy=$ROOT/tests/fixtures/healthy.yaml

# --- usage (no fixture needed) -------------------------------------------
run() { "$HPNODE" "$@" >"$e2e_tmp/out" 2>"$e2e_tmp/err"; echo $?; }
expect_status "efa-sg --help exits 0" 0 "$(run efa-sg --help)"
check "efa-sg --help documents both modes" contains "$e2e_tmp/out" "--sg-id"
expect_status "vpc --help exits 0" 0 "$(run vpc --help)"
check "vpc --help documents --eks-name" contains "$e2e_tmp/out" "--eks-name"
expect_status "efa-sg with --cluster and --sg-id exits 2" 2 \
	"$(run efa-sg --cluster c --sg-id sg-0123456789abcdef0 --region us-west-2)"
check "efa-sg: the two modes are mutually exclusive" contains "$e2e_tmp/err" "mutually exclusive"
expect_status "efa-sg with neither exits 2" 2 "$(run efa-sg --region us-west-2)"
expect_status "efa-sg with a malformed --sg-id exits 2" 2 "$(run efa-sg --sg-id sg-xyz --region us-west-2)"
check "efa-sg: a malformed --sg-id is quoted back" contains "$e2e_tmp/err" "(got 'sg-xyz')"
expect_status "efa-sg --sg-id without a value exits 2" 2 "$(run efa-sg --sg-id)"
expect_status "vpc without --cluster exits 2" 2 "$(run vpc --region us-west-2)"
expect_status "vpc with a malformed --eks-name exits 2" 2 "$(run vpc --cluster c --eks-name 'a b' --region us-west-2)"
expect_status "vpc with a bad --fail-on exits 2" 2 "$(run vpc --cluster c --fail-on P9)"

# --- healthy cluster ------------------------------------------------------
fixture_start "$healthy" || { not_ok "healthy fixture starts" "see messages above"; e2e_done; }
efa=$(fixture_get security_groups.efa)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json --save-snapshot "$e2e_tmp/h.snap" \
	>"$e2e_tmp/h.json" 2>"$e2e_tmp/h.err"
expect_status "healthy: triage completes" 0 $?
check "healthy: no FAIL or WARN from any network check" findings "$e2e_tmp/h.json" \
	"0:check~network.,tag=FAIL" "0:check~network.,tag=WARN" "0:group=Cluster VPC Resources,tag=FAIL"
check "healthy: EFA self rules pass in and out" findings "$e2e_tmp/h.json" \
	"1:check=network.efa-sg,tag=PASS,message~inbound all traffic from itself" \
	"1:check=network.efa-sg,tag=PASS,message~outbound all traffic to itself"
check "healthy: two subnets in two zones each get a routing PASS" findings "$e2e_tmp/h.json" \
	"1:check=network.routing,tag=PASS,message~(us-west-2a)" \
	"1:check=network.routing,tag=PASS,message~(us-west-2b)"
check "healthy: one VPC, DNS on, endpoints, EKS, IPs, ENIs, offerings pass" findings "$e2e_tmp/h.json" \
	"1:check=network.vpc,tag=PASS,message~All 2 subnets" "1:check=network.dns,tag=PASS" \
	"1:check=network.endpoints,tag=PASS" ">=3:check=network.eks,tag=PASS" \
	"1:check=network.subnet-ips,tag=PASS" "1:check=network.eni,tag=PASS" \
	"1:check=network.capacity,tag=PASS"

"$HPNODE" efa-sg --cluster "$FIXTURE_CLUSTER" --output json --fail-on P2 >"$e2e_tmp/e.json" 2>&1
expect_status "healthy: efa-sg --cluster exits 0 even with --fail-on P2" 0 $?
check "healthy: efa-sg reports only security group findings" findings "$e2e_tmp/e.json" \
	">=3:check=network.efa-sg,tag=PASS" "0:check=network.routing" "0:check=nodes.status" \
	"0:check=events.signals"
: >"$FIXTURE_RECORD"
"$HPNODE" efa-sg --sg-id "$efa" --output json >"$e2e_tmp/s.json" 2>&1
expect_status "healthy: efa-sg --sg-id exits 0" 0 $?
check "healthy: --sg-id checks that group" findings "$e2e_tmp/s.json" \
	"1:check=network.efa-sg,tag=PASS,message~$efa (hp-healthy-efa): outbound all traffic"
if [ "$(sort -u "$FIXTURE_RECORD" | tr '\n' ' ')" = "ec2:DescribeSecurityGroups sts:GetCallerIdentity " ]; then
	ok "efa-sg --sg-id calls only sts and DescribeSecurityGroups"
else
	not_ok "efa-sg --sg-id calls only sts and DescribeSecurityGroups" "$(sort -u "$FIXTURE_RECORD" | tr '\n' ' ')"
fi
"$HPNODE" efa-sg --sg-id sg-0123456789abcdef0 --output json --fail-on P1 >"$e2e_tmp/s2.json" 2>&1
expect_status "efa-sg --sg-id of a deleted group: --fail-on P1 exits 3" 3 $?
check "efa-sg --sg-id of a deleted group: cannot read, no missing rule" findings "$e2e_tmp/s2.json" \
	"1:check=network.efa-sg,tag=WARN,priority=P1,section=A.1,message~Cannot read security group sg-0123456789abcdef0: it does not exist" \
	"0:check=network.efa-sg,tag=FAIL"
"$HPNODE" efa-sg --sg-id "$efa" --no-color >"$e2e_tmp/s.txt" 2>&1
check "efa-sg text report: its own banner and the triage format" contains "$e2e_tmp/s.txt" \
	"HyperPod EFA Security Group Check — READ-ONLY"
check "efa-sg text report: tagged lines" contains "$e2e_tmp/s.txt" "  [PASS] Security group $efa"

"$HPNODE" vpc --cluster "$FIXTURE_CLUSTER" --output json --fail-on P2 >"$e2e_tmp/v.json" 2>&1
expect_status "healthy: vpc exits 0 even with --fail-on P2" 0 $?
check "healthy: vpc runs the VPC checks, not the security group rules" findings "$e2e_tmp/v.json" \
	"1:check=network.dns,tag=PASS" "0:check=network.efa-sg" "0:check=logs.lifecycle"
"$HPNODE" vpc --cluster "$FIXTURE_CLUSTER" --eks-name no-such-eks --output json --fail-on P1 \
	>"$e2e_tmp/v2.json" 2>&1
expect_status "vpc --eks-name of a missing EKS cluster: --fail-on P1 exits 3" 3 $?
check "vpc --eks-name: the named EKS cluster is looked up, not found (§ B.5)" findings "$e2e_tmp/v2.json" \
	"1:check=network.eks,tag=FAIL,section=B.5,message~'no-such-eks'"
"$HPNODE" efa-sg --cluster no-such-cluster >"$e2e_tmp/nf.out" 2>"$e2e_tmp/nf.err"
expect_status "efa-sg on an unknown cluster exits 1, as triage does" 1 $?
check "efa-sg on an unknown cluster lists the region's clusters" contains "$e2e_tmp/nf.err" "$FIXTURE_CLUSTER"
env -u AWS_ENDPOINT_URL AWS_ACCESS_KEY_ID= AWS_SECRET_ACCESS_KEY= \
	"$HPNODE" vpc --snapshot "$e2e_tmp/h.snap" --output json >"$e2e_tmp/vr.json" 2>&1
expect_status "vpc replays a triage snapshot" 0 $?
check "vpc replay: same VPC findings, no others" findings "$e2e_tmp/vr.json" \
	"1:check=network.dns,tag=PASS" "0:check=nodes.status"
fixture_stop

# --- many faults at once -------------------------------------------------
variant "$healthy" "$e2e_tmp/broken.yaml" '
net = d["network"]
sgs = {g["alias"]: g for g in net["security_groups"]}
sgs["efa"]["self_egress"] = False
sgs["efa"]["egress_all_ipv4"] = True
net["security_groups"].append({"alias": "gpu", "name": "hp-gpu", "self_egress": True,
                               "egress_all_ipv4": False})
d["instance_groups"][0]["override_vpc"] = {"security_group_ids": ["gpu", "sg-0123456789abcdef0"],
                                           "subnets": ["private-a", "private-b"]}
net["vpc"]["dns_hostnames"] = False
net["route_tables"][0]["associations"] = ["private-a"]
net["route_tables"].append({"alias": "leaky", "routes": [{"igw": True}], "associations": ["private-b"]})
net["subnets"][0]["free_ips"] = 3
net["subnets"][1]["free_ips"] = 40
d["quotas"]["vpc/L-DF5E4CA3"] = {"value": 10, "name": "Network interfaces per Region"}
net["eks"]["authentication_mode"] = "CONFIG_MAP"
net["eks"]["endpoint_public"] = False
net["eks"]["security_groups"] = []
net["instance_type_offerings"] = {"p5.48xlarge": ["us-west-2c", "us-west-2d"]}
'
fixture_start "$e2e_tmp/broken.yaml" || { not_ok "broken fixture starts" "see messages above"; e2e_done; }
efa=$(fixture_get security_groups.efa)
gpu=$(fixture_get security_groups.gpu)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/b.json" 2>"$e2e_tmp/b.err"
expect_status "broken: triage completes" 0 $?
check "missing outbound self-reference: FAIL P0 § A.1" findings "$e2e_tmp/b.json" \
	"1:check=network.efa-sg,tag=FAIL,priority=P0,section=A.1,message~$efa (hp-healthy-efa) has no outbound self-referencing rule"
check "0.0.0.0/0 all-traffic egress on the EFA group: WARN § A.1" findings "$e2e_tmp/b.json" \
	"1:check=network.efa-sg,tag=WARN,section=A.1,message~$efa (hp-healthy-efa) allows all outbound traffic to 0.0.0.0/0"
check "OverrideVpcConfig group without inbound self-reference: FAIL P1 § A.1" findings "$e2e_tmp/b.json" \
	"1:check=network.efa-sg,tag=FAIL,priority=P1,section=A.1,message~$gpu (hp-gpu) has no inbound self-referencing rule"
check "a deleted group in an override: cannot read, never a missing rule" findings "$e2e_tmp/b.json" \
	"1:check=network.efa-sg,tag=WARN,message~Cannot read security group sg-0123456789abcdef0: it does not exist" \
	"0:message~sg-0123456789abcdef0 has no"
check "the other groups are still read around the deleted one" findings "$e2e_tmp/b.json" \
	"1:check=network.efa-sg,tag=PASS,message~$gpu (hp-gpu): outbound all traffic to itself"
check "DNS hostnames off: FAIL § B.2" findings "$e2e_tmp/b.json" \
	"1:check=network.dns,tag=FAIL,section=B.2,message~enableDnsHostnames off" \
	"0:check=network.dns,message~enableDnsSupport off"
check "default route to an internet gateway: FAIL § B.3, the NAT subnet still passes" findings "$e2e_tmp/b.json" \
	"1:check=network.routing,tag=FAIL,section=B.3,message~(us-west-2b) sends 0.0.0.0/0 to internet gateway" \
	"1:check=network.routing,tag=PASS,message~(us-west-2a): default route to NAT gateway"
check "S3 not routed for the subnet without NAT: FAIL § B.4" findings "$e2e_tmp/b.json" \
	"1:check=network.endpoints,tag=FAIL,section=B.4,message~lacks endpoints for s3"
check "3 free IPs: FAIL § B.6; 40 free IPs: WARN § B.6" findings "$e2e_tmp/b.json" \
	"1:check=network.subnet-ips,tag=FAIL,section=B.6,message~has only 3 free IP addresses" \
	"1:check=network.subnet-ips,tag=WARN,section=B.6,message~has 40 free IP addresses"
check "ENIs above 80 % of the regional quota: WARN § B.6" findings "$e2e_tmp/b.json" \
	"1:check=network.eni,tag=WARN,section=B.6,message~of 10 network interfaces in us-west-2"
check "EKS CONFIG_MAP: WARN § B.1" findings "$e2e_tmp/b.json" \
	"1:check=network.eks,tag=WARN,section=B.1,message~CONFIG_MAP"
check "EKS private-only endpoint: WARN § B.5" findings "$e2e_tmp/b.json" \
	"1:check=network.eks,tag=WARN,section=B.5,message~private-only"
check "no security group path to EKS: FAIL § A + B.5" findings "$e2e_tmp/b.json" \
	"1:check=network.eks,tag=FAIL,priority=P1,section=A+B.5,message~is attached to EKS cluster 'hp-healthy-eks'"
check "p5 not offered in the subnets' zones: FAIL § C.1 naming where it is" findings "$e2e_tmp/b.json" \
	"1:check=network.capacity,tag=FAIL,section=C.1,message~gpu-p5' (ml.p5.48xlarge) has subnets only in us-west-2a" \
	"1:check=network.capacity,tag=FAIL,message~us-west-2b where p5.48xlarge is not offered"
check "the offering zones are named" findings "$e2e_tmp/b.json" \
	"1:check=network.capacity,message~is offered in us-west-2c" \
	"1:check=network.capacity,message~us-west-2d — add a subnet"
"$HPNODE" efa-sg --cluster "$FIXTURE_CLUSTER" --fail-on P0 >"$e2e_tmp/be.txt" 2>&1
expect_status "broken: efa-sg --fail-on P0 exits 3" 3 $?
check "broken: efa-sg text names the P0" contains "$e2e_tmp/be.txt" "[P0 — Fix Immediately]"
"$HPNODE" efa-sg --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/be.json" 2>&1
expect_status "broken: efa-sg without --fail-on exits 0" 0 $?
"$HPNODE" vpc --cluster "$FIXTURE_CLUSTER" --output json --fail-on P1 >"$e2e_tmp/bv.json" 2>&1
expect_status "broken: vpc --fail-on P1 exits 3" 3 $?
check "broken: vpc sees the route and DNS faults, not the rule faults" findings "$e2e_tmp/bv.json" \
	"1:check=network.routing,tag=FAIL" "1:check=network.dns,tag=FAIL" "0:check=network.efa-sg"
fixture_stop

# --- a private VPC without NAT, through the main route table -----------------
variant "$healthy" "$e2e_tmp/private.yaml" '
net = d["network"]
net["route_tables"][0] = {"alias": "private", "main": True, "routes": [{"vpce": "s3"}]}
net["vpc_endpoints"] = [e for e in net["vpc_endpoints"] if e["service"] not in ("logs", "ecr.dkr")]
'
fixture_start "$e2e_tmp/private.yaml" || { not_ok "private fixture starts" "see messages above"; e2e_done; }
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/p.json" 2>"$e2e_tmp/p.err"
expect_status "private: triage completes" 0 $?
check "no default route via the main table, endpoints missing: WARN § B.3 per subnet" findings "$e2e_tmp/p.json" \
	"2:check=network.routing,tag=WARN,section=B.3,message~main route table) and no VPC endpoints for ecr.dkr"
check "endpoints missing without NAT: FAIL P1 § B.4" findings "$e2e_tmp/p.json" \
	"1:check=network.endpoints,tag=FAIL,priority=P1,section=B.4,message~lacks endpoints for ecr.dkr"
fixture_stop

# --- security groups that cannot be read ----------------------------------
variant "$healthy" "$e2e_tmp/denied.yaml" '
d["faults"] = {"deny": ["ec2:DescribeSecurityGroups"]}
'
fixture_start "$e2e_tmp/denied.yaml" || { not_ok "denied fixture starts" "see messages above"; e2e_done; }
efa=$(fixture_get security_groups.efa)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/d.json" 2>"$e2e_tmp/d.err"
expect_status "denied: triage completes" 0 $?
check "denied DescribeSecurityGroups: cannot read, no rule verdict" findings "$e2e_tmp/d.json" \
	"1:check=network.efa-sg,tag=WARN,message~Cannot read security group $efa: access denied" \
	"0:check=network.efa-sg,tag=FAIL" "0:check=network.efa-sg,tag=PASS"
check "denied DescribeSecurityGroups: Missing IAM permission (P1 § K.1)" findings "$e2e_tmp/d.json" \
	"1:check=api.vpc,tag=FAIL,priority=P1,section=K.1,message~ec2:DescribeSecurityGroups"
"$HPNODE" efa-sg --cluster "$FIXTURE_CLUSTER" --fail-on P0 >/dev/null 2>&1
expect_status "denied: efa-sg --fail-on P0 exits 0 (nothing proven missing)" 0 $?
fixture_stop

# --- other VPCs, equivalent rule sets, IPv6 and prefix lists ---------------
variant "$healthy" "$e2e_tmp/mix.yaml" '
net = d["network"]
net["other_vpcs"] = [{"alias": "other", "cidr": "10.9.0.0/16"}]
net["subnets"].append({"alias": "stray", "vpc": "other", "az": "us-west-2c", "cidr": "10.9.0.0/20"})
every = lambda p, g: [{"protocol": "tcp", "from_port": 0, "to_port": 65535, "group": g},
                      {"protocol": "udp", "from_port": 0, "to_port": 65535, "group": g},
                      {"protocol": "icmp", "from_port": -1, "to_port": -1, "group": g}]
net["security_groups"] += [
    {"alias": "perproto", "egress_all_ipv4": False,
     "ingress": every("tcp", "perproto"), "egress": every("tcp", "perproto")},
    {"alias": "v6only", "egress_all_ipv4": False,
     "ingress": [{"protocol": "all", "cidr_ipv6": "::/0"}, {"protocol": "all", "prefix_list": "pl-0123abcd"}],
     "egress": [{"protocol": "all", "cidr_ipv6": "::/0"}, {"protocol": "tcp", "from_port": 443, "to_port": 443, "group": "v6only"}]},
    {"alias": "elsewhere", "vpc": "other", "self_ingress": True, "self_egress": True, "egress_all_ipv4": False}]
d["cluster"]["vpc"]["security_group_ids"] = ["efa", "perproto", "v6only", "elsewhere"]
net["eks"]["subnets"] = ["stray"]
net["eks"]["security_groups"] = []
net["eks"]["cluster_sg_ingress"] = [{"protocol": "all", "group": "perproto"}]
'
fixture_start "$e2e_tmp/mix.yaml" || { not_ok "mixed-VPC fixture starts" "see messages above"; e2e_done; }
perproto=$(fixture_get security_groups.perproto)
v6=$(fixture_get security_groups.v6only)
other=$(fixture_get other_vpcs.other)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/m.json" 2>"$e2e_tmp/m.err"
expect_status "mixed: triage completes" 0 $?
check "TCP+UDP+ICMP on all ports from itself counts as the self rule" findings "$e2e_tmp/m.json" \
	"1:check=network.efa-sg,tag=PASS,message~$perproto (perproto): inbound TCP and UDP" \
	"1:check=network.efa-sg,tag=PASS,message~$perproto (perproto): outbound TCP and UDP" \
	"0:check=network.efa-sg,tag=FAIL,message~$perproto"
check "IPv6 ranges and prefix lists are not self-references" findings "$e2e_tmp/m.json" \
	"1:check=network.efa-sg,tag=FAIL,priority=P1,message~$v6 (v6only) has no inbound" \
	"1:check=network.efa-sg,tag=FAIL,priority=P0,message~$v6 (v6only) has no outbound"
check "a group in another VPC: FAIL § B.1" findings "$e2e_tmp/m.json" \
	"1:check=network.vpc,tag=FAIL,section=B.1,message~is in $other but the cluster subnets are in"
check "EKS in another VPC: FAIL § B.5" findings "$e2e_tmp/m.json" \
	"1:check=network.eks,tag=FAIL,section=B.5,message~is in $other but the HyperPod cluster is in"
check "the EKS cluster security group admitting a HyperPod group is a path" findings "$e2e_tmp/m.json" \
	"1:check=network.eks,tag=PASS,message~admits traffic from HyperPod security group $perproto" \
	"0:check=network.eks,section=A+B.5"
fixture_stop
e2e_done
