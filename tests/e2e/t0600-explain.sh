#!/bin/sh
# hpnode explain and triage --suggest end to end: explain prints exactly the
# file's section (sub-sections included) for every id, lists the ids, and
# names the closest ids for an unknown one; every section id the checks can
# emit exists; --suggest on the demo fixture fills in the fixture's real
# ids, lists what it cannot fill, marks every command "run this yourself",
# and runs nothing.
T=t0600-explain
. "$(dirname "$0")/e2e-lib.sh"

DOC=$ROOT/references/node-diagnostics-detail.md
SUGG=$ROOT/tests/e2e/suggestions.py

# section_of ID: the file's text of section ID, found independently of hpnode:
# its heading line up to the next heading of its level or above outside
# fenced blocks, trailing blank lines dropped.
section_of() {
	awk -v id="$1" '
		/^```/ { fence = !fence }
		!fence && /^#+ / {
			match($0, /^#+/)
			lvl = RLENGTH
			if (on && lvl <= level)
				exit
			if (!on && substr($0, lvl + 2, length(id) + 2) == id ": ") {
				on = 1
				level = lvl
			}
		}
		on { buf[++k] = $0 }
		END {
			while (k > 0 && buf[k] ~ /^[ \t]*$/)
				k--
			for (i = 1; i <= k; i++)
				print buf[i]
		}' "$DOC"
}

# ---- explain ----

"$HPNODE" explain --help >"$e2e_tmp/help.txt" 2>&1
expect_status "explain --help exits 0" 0 $?
check "explain --help shows usage" contains "$e2e_tmp/help.txt" "usage: hpnode explain ID"
"$HPNODE" explain >/dev/null 2>&1
expect_status "explain without an id is a usage error" 2 $?
"$HPNODE" explain --bogus >/dev/null 2>&1
expect_status "explain with an unknown option is a usage error" 2 $?
"$HPNODE" explain --list A >/dev/null 2>&1
expect_status "explain --list with an id is a usage error" 2 $?

"$HPNODE" explain G.1.x >"$e2e_tmp/unknown.out" 2>"$e2e_tmp/unknown.err"
expect_status "explain of an unknown id exits 2" 2 $?
check "unknown id: nothing on stdout" test ! -s "$e2e_tmp/unknown.out"
check "unknown id: the closest ids are named" contains "$e2e_tmp/unknown.err" \
	"G.1.a (Row-Remap State)"
check "unknown id: says which id is unknown" contains "$e2e_tmp/unknown.err" \
	"no section 'G.1.x' in references/node-diagnostics-detail.md"
"$HPNODE" explain munge 2>"$e2e_tmp/munge.err"
expect_status "explain of a word exits 2" 2 $?
check "a word finds the section with it in its title" contains "$e2e_tmp/munge.err" \
	"H.6 (munge Inactive)"

awk '/^```/ { f = !f } !f && /^#+ [A-Z](\.[0-9]+(\.[a-z])?)?: / { sub(/^#+ /, ""); sub(/:.*/, ""); print }' \
	"$DOC" >"$e2e_tmp/ids"
# --list holds the node guide's ids, then the NCCL guide's (t0601 checks those).
awk '/^```/ { f = !f } !f && /^#+ NC[0-9]+(\.[0-9]+)?: / { sub(/^#+ /, ""); sub(/:.*/, ""); print }' \
	"$ROOT/references/nccl-diagnostics-detail.md" | cat "$e2e_tmp/ids" - >"$e2e_tmp/all-ids"
"$HPNODE" explain --list >"$e2e_tmp/list.txt"
expect_status "explain --list exits 0" 0 $?
awk '{ print $1 }' "$e2e_tmp/list.txt" >"$e2e_tmp/list-ids"
check "explain --list lists every section heading of both guides, in order" \
	cmp "$e2e_tmp/all-ids" "$e2e_tmp/list-ids"
check "explain --list shows titles" grep -q '^G.1.a       Row-Remap State$' "$e2e_tmp/list.txt"
if [ "$(wc -l <"$e2e_tmp/ids")" -ge 60 ]; then ok "the file has its sections ($(wc -l <"$e2e_tmp/ids"))"
else not_ok "the file has its sections" "only $(wc -l <"$e2e_tmp/ids") headings found"; fi

bad=""
for id in $(cat "$e2e_tmp/ids"); do
	section_of "$id" >"$e2e_tmp/want"
	"$HPNODE" explain "$id" >"$e2e_tmp/got" 2>&1 || bad="$bad $id(exit)"
	cmp -s "$e2e_tmp/want" "$e2e_tmp/got" || bad="$bad $id"
done
if [ -z "$bad" ]; then ok "explain ID prints the file's section, sub-sections included, for every id"
else not_ok "explain ID prints the file's section for every id" "differs:$bad"; fi

{ section_of A; echo; section_of B.4; } >"$e2e_tmp/want"
"$HPNODE" explain 'A+B.4' >"$e2e_tmp/got"
check "explain A+B.4 prints both, separated by a blank line" cmp "$e2e_tmp/want" "$e2e_tmp/got"
section_of G.1.a >"$e2e_tmp/want"
"$HPNODE" explain 'g.1.A' >"$e2e_tmp/got"
check "explain ignores case" cmp "$e2e_tmp/want" "$e2e_tmp/got"
"$HPNODE" explain '§ G.1.a' >"$e2e_tmp/got"
check "explain accepts the pointer's '§ ID' form" cmp "$e2e_tmp/want" "$e2e_tmp/got"
check "G.1.a holds its table" grep -q '^| failure `Yes` (or `1`) ' "$e2e_tmp/got"

# Every section id written in the checks' source (check rows, rule tables and
# hp_emitx calls); the titles come from the guide itself (test-refdoc).
ls "$ROOT"/src/checks/*.c | xargs grep -ho '"[A-Z][A-Za-z0-9.+]*"' | tr -d '"' |
	grep -E '^[A-Z](\.[0-9]+(\.[a-z])?)?(\+[A-Z](\.[0-9]+(\.[a-z])?)?)*$' | sort -u >"$e2e_tmp/emitted"
bad=""
for s in $(cat "$e2e_tmp/emitted"); do
	"$HPNODE" explain "$s" >/dev/null 2>&1 || bad="$bad $s"
done
if [ -z "$bad" ] && grep -qx 'K.1' "$e2e_tmp/emitted" && grep -qx 'A+B' "$e2e_tmp/emitted" &&
	grep -qx 'J.1' "$e2e_tmp/emitted"; then
	ok "every section id in src/checks exists in the guide ($(tr '\n' ' ' <"$e2e_tmp/emitted"))"
else
	not_ok "every section id in src/checks exists in the guide" \
		"missing:${bad:- none}; found: $(tr '\n' ' ' <"$e2e_tmp/emitted")"
fi

# ---- triage --suggest on the demo fixture ----

fixture_start "$ROOT/tests/fixtures/demo.yaml" || { not_ok "demo fixture starts" "see messages above"; e2e_done; }
sg=$(fixture_get security_groups.efa)
nvlink=$(fixture_get nodes.p5-nvlink)
efa=$(fixture_get nodes.p5-efa)
lcs=$(fixture_get nodes.sys-lcs)
eks=$(fixture_get eks_cluster.name)
region=$(fixture_get region)

"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --suggest --output json \
	--save-snapshot "$e2e_tmp/demo.snap" >"$e2e_tmp/s.json" 2>"$e2e_tmp/s.err"
expect_status "triage --suggest --output json completes" 0 $?
check "json: every suggestion marked, with blast radius, IaC note and unfilled list" \
	python3 "$SUGG" "$e2e_tmp/s.json" contract CLUSTER,CLUSTER_ID,REGION,EKS_NAME,SG_ID
check "json: the failed node's reboot names it, the cluster and the region" \
	python3 "$SUGG" "$e2e_tmp/s.json" has "check=nodes.status,node=$nvlink" F.2 \
	"batch-reboot-cluster-nodes --cluster-name $FIXTURE_CLUSTER --region $region --node-ids '[\"$nvlink\"]'"
check "json: the replacement comes after the reboot, same node" \
	python3 "$SUGG" "$e2e_tmp/s.json" has "check=nodes.status,node=$nvlink" F.2 \
	"batch-replace-cluster-nodes" "$nvlink"
check "json: the demo group already has its self-references, so none is suggested (said why)" \
	python3 "$SUGG" "$e2e_tmp/s.json" unfit "check=events.signals,node=$efa" \
	"$sg already has the all-traffic outbound rule to itself" "authorize-security-group"
check "json: HTTPS out exists too, so that rule is not suggested either" \
	python3 "$SUGG" "$e2e_tmp/s.json" unfit "check=events.signals,node=$efa" \
	"$sg already lets HTTPS out to 0.0.0.0/0" "authorize-security-group"
check "json: NodeRecovery is Automatic on the demo, so turning it on is not suggested" \
	python3 "$SUGG" "$e2e_tmp/s.json" unfit "check=logs.health-agent,node=$nvlink" \
	"NodeRecovery is already Automatic" "--node-recovery Automatic"
check "json: the ThreadsPerCore fix carries the group, type and count" \
	python3 "$SUGG" "$e2e_tmp/s.json" has "check=cluster.threads-per-core" J.2 \
	'"InstanceGroupName":"gpu-p5","InstanceType":"ml.p5.48xlarge","InstanceCount":4,' \
	'"SourceS3Uri":"s3://' '"OnCreate":"on_create.sh"' ':role/'
check "json: the lifecycle fix needs the fixed script hpnode cannot know, so it is left out, with the reason" \
	python3 "$SUGG" "$e2e_tmp/s.json" unfit "check=logs.lifecycle,node=$lcs" \
	"\`aws s3 cp <SCRIPT> s3://sagemaker-hp-demo-lifecycle/scripts/\` left out" "aws s3 cp"
check "json: the reason names the placeholder and why it has no value" \
	python3 "$SUGG" "$e2e_tmp/s.json" unfit "check=logs.lifecycle,node=$lcs" \
	"left out, <SCRIPT> not known (hpnode has no value for it" "aws s3 cp"
check "json: the Slurm controller's way is left out on EKS" \
	python3 "$SUGG" "$e2e_tmp/s.json" skipped "check=nodes.status,node=$nvlink" 1
if grep -q '"suggestions"' "$e2e_tmp/s.json" && ! grep -q '"suggestions_error"' "$e2e_tmp/s.json"; then
	ok "json: suggestions present, no error"
else
	not_ok "json: suggestions present, no error" "$(head -c 300 "$e2e_tmp/s.json")"
fi

"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --output json >"$e2e_tmp/plain.json" 2>&1
check "json without --suggest has no suggestions" lacks "$e2e_tmp/plain.json" '"suggestions'

"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --suggest >"$e2e_tmp/s.txt" 2>&1
expect_status "triage --suggest (text) completes" 0 $?
check "text: the banner says hpnode never runs them" contains "$e2e_tmp/s.txt" \
	"Suggested commands are for you to run after review; hpnode never runs them."
check "text: each command is marked run this yourself" contains "$e2e_tmp/s.txt" \
	"    Suggested command (run this yourself), § F.2: step 1, reboot."
check "text: the command with real ids, ready to paste" contains "$e2e_tmp/s.txt" \
	"      aws sagemaker batch-reboot-cluster-nodes --cluster-name $FIXTURE_CLUSTER --region $region --node-ids '[\"$nvlink\"]'"
check "text: blast radius with the real id" contains "$e2e_tmp/s.txt" "      Blast radius: reboots \`$nvlink\`;"
check "text: IaC drift note under the security-group change" contains "$e2e_tmp/s.txt" \
	"      IaC note: if IaC (CloudFormation, CDK, Terraform, Pulumi) manages this, change the IaC source instead; a manual change drifts"
check "text: a command left out for a value hpnode does not know is named, with why" \
	contains "$e2e_tmp/s.txt" "    (Not suggested, it does not fit this cluster: § D: \`dos2unix <SCRIPT>\` left out, <SCRIPT> not known"
check "text: sections without commands point at explain" contains "$e2e_tmp/s.txt" \
	"    No command to suggest; read the section: hpnode explain C"

if grep -Ei ':(Batch|Update|Authorize|Revoke|Create|Delete|Modify|Put|Attach|Replace)' "$FIXTURE_RECORD" >/dev/null; then
	not_ok "no suggested command was run" "$(sort -u "$FIXTURE_RECORD" | tr '\n' ' ')"
else
	ok "no suggested command was run (only read actions recorded)"
fi
fixture_stop

# ---- the same snapshot, edited: a bootstrap event (A+B), then Slurm ----

python3 - "$e2e_tmp/demo.snap" "$e2e_tmp/boot.snap" "$e2e_tmp/slurm.snap" "$efa" "$sg" <<'PY'
import json, sys
snap = json.load(open(sys.argv[1]))
# The bootstrap failure's cause: the group lost its outbound self-reference.
grp = snap["network"]["security_groups"][sys.argv[5]]
grp["ipPermissionsEgress"] = [p for p in grp.get("ipPermissionsEgress", [])
                              if not any(g.get("groupId") == sys.argv[5] for g in p.get("groups", []))]
ev = dict(snap["events"][0])
ev.update({"EventId": "boot-1", "InstanceId": sys.argv[4], "InstanceGroupName": "gpu-p5",
           "Description": "Instance bootstrap failed due to network misconfiguration"})
snap["events"].append(ev)
json.dump(snap, open(sys.argv[2], "w"))
del snap["cluster"]["Orchestrator"]
snap["meta"]["orchestrator"] = "Slurm"
json.dump(snap, open(sys.argv[3], "w"))
PY
"$HPNODE" triage --snapshot "$e2e_tmp/boot.snap" --suggest --output json >"$e2e_tmp/boot.json" 2>&1
expect_status "replayed snapshot with --suggest completes" 0 $?
check "A+B: the EKS access fix is for the authentication-mode finding, not a bootstrap event" \
	python3 "$SUGG" "$e2e_tmp/boot.json" unfit "check=events.signals,section=A+B" \
	"B.1: the command is for the EKS authentication mode, which this finding is not about" \
	"aws eks update-cluster-config"
check "A+B: the missing outbound self-reference is suggested, the existing inbound one is not" \
	python3 "$SUGG" "$e2e_tmp/boot.json" has "check=events.signals,section=A+B" A.1 \
	"authorize-security-group-egress --group-id $sg " "\"GroupId\":\"$sg\""
check "A+B: the existing inbound self-reference is left out, with the reason" \
	python3 "$SUGG" "$e2e_tmp/boot.json" unfit "check=events.signals,section=A+B" \
	"$sg already has the all-traffic inbound rule from itself" "authorize-security-group-ingress --group-id $sg "
check "A+B: the VPC id the network collector read is filled in" \
	python3 "$SUGG" "$e2e_tmp/boot.json" has "check=events.signals,section=A+B" B.2 "--vpc-id vpc-"
check "A+B: the contract holds" \
	python3 "$SUGG" "$e2e_tmp/boot.json" contract CLUSTER,CLUSTER_ID,REGION,EKS_NAME,SG_ID,VPC_ID

"$HPNODE" triage --snapshot "$e2e_tmp/slurm.snap" --suggest --output json >"$e2e_tmp/slurm.json" 2>&1
expect_status "Slurm snapshot with --suggest completes" 0 $?
check "Slurm: the controller's replace command needs the Slurm node name; left out, with why" \
	python3 "$SUGG" "$e2e_tmp/slurm.json" unfit "check=nodes.status,node=$nvlink" \
	"F.2: \`sudo scontrol update nodename=<NODE_NAME> state=fail reason=\"Action:Replace\"\` left out, <NODE_NAME> not known" \
	"scontrol update"
check "Slurm: the EKS and kubectl fixes of § B.1 are left out" \
	python3 "$SUGG" "$e2e_tmp/slurm.json" skipped "check=events.signals,section=A+B" 2
check "Slurm: the contract holds" \
	python3 "$SUGG" "$e2e_tmp/slurm.json" contract CLUSTER,CLUSTER_ID,REGION,SG_ID
e2e_done
