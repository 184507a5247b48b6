#!/bin/sh
# `hpnode bundle` on the demo cluster with secrets of every kind planted in
# the nodes' files: the archive reads with GNU tar, holds the triage, the
# cluster's records and every node's files, names the node that cannot be
# reached and the nodes that are not Running, holds none of the planted
# values (in the files nor anywhere in the uncompressed tar), never a
# munge.key, keeps a file's tail at the file cap, stops at the total cap
# and says so, holds every kube-system pod's log (and a crash loop's previous
# log) cut and redacted, refuses a symlink as its output, and calls nothing
# but read-only actions.
T=t0740-bundle
. "$(dirname "$0")/e2e-lib.sh"

yaml=$e2e_tmp/bundle.yaml
variant "$ROOT/tests/fixtures/demo.yaml" "$yaml" '
f = d["probe_defaults"]["files"]
f["/var/log/provision/lifecycle-env.log"] = "\n".join([
    "[hyperpod] exporting credentials",
    "export AWS_ACCESS_KEY_ID=AKIAPLANTEDKEY000001",
    "aws_secret_access_key = PlantedSecretKey/0123456789abcdefGHIJKLMN",
    "aws_session_token=IQoJplantedSessionToken0123456789",
    "curl -H \"Authorization: Bearer plantedBearerToken0123456789\" https://api.example.com",
    "login eyJhbGciOiJIUzI1NiJ9.eyJwbGFudGVkIjoiand0In0.plantedJwtSignature01 done",
    "git clone https://builder:plantedUrlPassw0rd@git.example.com/repo.git",
    "DB_PASSWORD=plantedDbPassword01",
    "wandb api_key: plantedApiKey0123456789",
    "{\"SessionId\": \"s-01\", \"TokenValue\": \"plantedSsmTokenValue01\"}",
    "-----BEGIN RSA PRIVATE KEY-----",
    "plantedPrivateKeyBody0123456789abcdef",
    "-----END RSA PRIVATE KEY-----",
    "[hyperpod] done", ""])
f["/var/log/cloud-init-output.log"] = "users:\n- name: admin\n  user:\n    client-key-data: plantedClientKeyData0123456789\n    token: plantedKubeToken0123456789\n"
f["/etc/slurm/slurm.conf"] = "ClusterName=demo\nAccountingStoragePass=plantedSlurmPass01\n"
f["/etc/slurm/munge.key"] = "plantedMungeKeyBytes0123456789\n"
f["/var/log/provision/big.log"] = "FIRST-LINE-OF-BIG-LOG\n" + "x" * 20000 + "\nLAST-LINE-OF-BIG-LOG\n"
for n in d["nodes"]:
    if n.get("alias") == "sys-ok":
        n["ssm_connected"] = False
crash = d["kubernetes"]["system_pods"]["aws-node"]["sys-lcs"]
crash["previous_logs"] = crash["previous_logs"] + ["x" * 100] * 100 + [
    "aws_secret_access_key=PlantedKubeSystemSecret0123456789abcdefGHIJ", "LAST-LINE-OF-AWS-NODE-LOG"]
'
fixture_start "$yaml" || { not_ok "fixture starts" "see messages above"; e2e_done; }
off=$(fixture_get nodes.sys-ok)
arc=$e2e_tmp/b.tar.gz
"$HPNODE" bundle --cluster "$FIXTURE_CLUSTER" --since 3d --no-kube --probe-timeout 30 \
	--output-file "$arc" >"$e2e_tmp/out.txt" 2>"$e2e_tmp/err.txt"
expect_status "bundle on the demo cluster completes" 0 $?
check "it says where the archive is and how many nodes were not collected" \
	grep -q "wrote $arc (.* 5 nodes collected, 3 not collected; .* secrets redacted)" "$e2e_tmp/out.txt"
check "the archive is mode 0600" sh -c '[ "$(stat -c %a "$1")" = 600 ]' _ "$arc"
check "GNU tar lists it" sh -c 'tar -tzf "$1" >"$2"' _ "$arc" "$e2e_tmp/list"
check "gzip finds it whole (CRC and length)" gzip -t "$arc"
mkdir "$e2e_tmp/x"
check "GNU tar extracts it" tar -xzf "$arc" -C "$e2e_tmp/x"
for f in MANIFEST.json README.txt README.ja.txt reports/triage.txt reports/triage.json reports/junit.xml \
	cluster/triage-snapshot.json cluster/describe-cluster.json cluster/nodes.json \
	cluster/events.json cloudwatch/lifecycle.log cloudwatch/health-agent.log \
	guides/node-diagnostics-detail.md guides/nccl-diagnostics-detail.md \
	guides/ja/node-diagnostics-detail.md; do
	check "the archive holds $f" grep -qx "$f" "$e2e_tmp/list"
done
p5=$(fixture_get nodes.p5-xid)
for f in gpu/nvidia-smi-q.txt efa/fi_info.txt system/meminfo system/mountinfo system/df.txt \
	system/sysctl.txt provision/provisioning.log nccl/nccl-probe.txt nccl/facts.json \
	kernel/dmesg.txt; do
	check "node $p5 has $f" grep -qx "nodes/$p5/$f" "$e2e_tmp/list"
done
check "the replayed snapshot gives the same triage" sh -c \
	'"$1" triage --snapshot "$2/cluster/triage-snapshot.json" --output json >"$3" && grep -q "node.gpu-xid" "$3"' \
	_ "$HPNODE" "$e2e_tmp/x" "$e2e_tmp/replay.json"
check "the lifecycle stream of the window is there" grep -q "on_create.sh" "$e2e_tmp/x/cloudwatch/lifecycle.log"

# The manifest: every file with its facts, every node not collected with its reason.
check "MANIFEST.json: files, nodes, reasons, redactions" python3 - "$e2e_tmp/x" "$off" <<'PY'
import json, sys, os, hashlib
root, off = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(root, "MANIFEST.json")))
for k in ("hpnode_version", "started_at", "finished_at", "window", "command_line", "caller", "files", "nodes"):
    assert k in m, k
n = m["nodes"][off]
assert n["state"] == "unreachable" and "TargetNotConnected" in n["reason"] and not n["collected"], n
skipped = [i for i, v in m["nodes"].items() if v["state"] == "skipped"]
assert len(skipped) == 2 and all("not Running" in m["nodes"][i]["reason"] for i in skipped), m["nodes"]
for f in m["files"]:
    if "size" in f:
        data = open(os.path.join(root, f["path"]), "rb").read()
        assert len(data) == f["size"] and hashlib.sha256(data).hexdigest() == f["sha256"], f["path"]
        assert "cut_at_cap" in f and "source" in f
absent = [f for f in m["files"] if "absent" in f]
assert any(f["path"].endswith("journal/all.log") for f in absent), "journalctl is not on the sandbox nodes"
for kind in ("aws_access_key", "aws_secret_key", "aws_session_token", "bearer_token", "jwt",
             "kubeconfig_credential", "private_key", "url_password", "password", "secret",
             "ssm_session_token"):
    assert m["redactions"][kind] >= 1, (kind, m["redactions"])
env = [f for f in m["files"] if f["path"].endswith("provision/lifecycle-env.log")]
assert env and all(sum(f["redactions"].values()) >= 10 for f in env), env
PY
check "README.txt names the unreachable node as not collected" grep -q "$off .*NOT COLLECTED: .*TargetNotConnected" "$e2e_tmp/x/README.txt"
check "README.ja.txt, the same in Japanese, names it too" grep -q "$off .*取得できず: .*TargetNotConnected" "$e2e_tmp/x/README.ja.txt"

# No planted value anywhere: not in a file, not in the uncompressed tar stream.
gzip -dc "$arc" >"$e2e_tmp/raw.tar"
for s in AKIAPLANTEDKEY000001 PlantedSecretKey IQoJplantedSessionToken plantedBearerToken \
	plantedJwtSignature plantedUrlPassw0rd plantedDbPassword plantedApiKey plantedSsmTokenValue \
	plantedPrivateKeyBody plantedClientKeyData plantedKubeToken plantedSlurmPass plantedMungeKeyBytes; do
	if grep -aq "$s" "$e2e_tmp/raw.tar"; then
		not_ok "no planted secret in the archive: $s" "found"
	else
		ok "no planted secret in the archive: $s"
	fi
done
check "the planted secrets were really collected (their redacted lines are there)" \
	grep -rq "AWS_ACCESS_KEY_ID=\[REDACTED:aws_access_key\]" "$e2e_tmp/x/nodes/$p5/provision/lifecycle-env.log"
check "never a munge.key" sh -c '! grep -q munge "$1"' _ "$e2e_tmp/list"
check "the Slurm configuration is there, its password redacted" \
	grep -q "AccountingStoragePass=\[REDACTED:password\]" "$e2e_tmp/x/nodes/$p5/slurm/etc-slurm/slurm.conf"

# Caps: a file over the file cap keeps its tail; the total cap stops adding and says so.
arc2=$e2e_tmp/small.tar.gz
"$HPNODE" bundle --cluster "$FIXTURE_CLUSTER" --node "$p5" --node i-0000000000000000f --no-kube --file-cap 4096 \
	--output-file "$arc2" >/dev/null 2>"$e2e_tmp/err2.txt"
expect_status "bundle with a small file cap completes" 0 $?
mkdir "$e2e_tmp/y"
tar -xzf "$arc2" -C "$e2e_tmp/y"
check "--file-cap: the tail is kept; a --node the cluster lacks is named and the cut is in the manifest" python3 - "$e2e_tmp/y" "$p5" <<'PY'
import json, sys, os
root, p5 = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(root, "MANIFEST.json")))
f = [f for f in m["files"] if f["path"] == "nodes/%s/provision/big.log" % p5]
assert f and f[0].get("cut_at_cap") is True and f[0]["size"] == 4096, f
data = open(os.path.join(root, f[0]["path"])).read()
assert "LAST-LINE-OF-BIG-LOG" in data and "FIRST-LINE-OF-BIG-LOG" not in data
assert sorted(m["nodes"]) == sorted([p5, "i-0000000000000000f"]), m["nodes"]
assert m["nodes"][p5]["collected"] and m["nodes"]["i-0000000000000000f"]["state"] == "not found", m["nodes"]
assert m["caps"]["total_reached"] is False, m["caps"]
PY
arc3=$e2e_tmp/total.tar.gz
"$HPNODE" bundle --cluster "$FIXTURE_CLUSTER" --node "$p5" --no-kube --total-cap 300K \
	--output-file "$arc3" >/dev/null 2>"$e2e_tmp/err4.txt"
expect_status "bundle with a small total cap completes" 0 $?
mkdir "$e2e_tmp/z"
tar -xzf "$arc3" -C "$e2e_tmp/z"
check "--total-cap: nothing added past it, and the manifest says what was left out" python3 - "$e2e_tmp/z" <<'PY'
import json, sys, os
m = json.load(open(os.path.join(sys.argv[1], "MANIFEST.json")))
assert m["caps"]["total_reached"] is True, m["caps"]
om = [f["path"] for f in m["files"] if "total cap" in f.get("omitted", "")]
assert om and m["files_omitted"] >= len(om), om
size = sum(f.get("size", 0) for f in m["files"])
assert size <= 300 * 1024, size
PY
check "README.txt says the total cap was reached" grep -q "total cap .* was reached" "$e2e_tmp/z/README.txt"

# EKS: every kube-system pod's log of the window, and the previous log of a container that
# restarted, each cut to its tail at the file cap and redacted; kubectl only reads.
arc5=$e2e_tmp/kube.tar.gz
"$HPNODE" bundle --cluster "$FIXTURE_CLUSTER" --node "$p5" --file-cap 4096 \
	--output-file "$arc5" >/dev/null 2>"$e2e_tmp/err5.txt"
expect_status "bundle with the Kubernetes objects completes" 0 $?
mkdir "$e2e_tmp/k"
tar -xzf "$arc5" -C "$e2e_tmp/k"
check "kube-system pod logs: one per pod, the crash loop's previous log cut to its tail and redacted" \
	python3 - "$e2e_tmp/k" <<'PY'
import json, os, sys
root = sys.argv[1]
m = json.load(open(os.path.join(root, "MANIFEST.json")))
kube = json.load(open(os.path.join(root, "kubernetes/kube.json")))
pods = [p["name"] for p in kube["pods"] if p["namespace"] == "kube-system"]
rows = {f["path"]: f for f in m["files"]}
assert pods, kube["pods"]
for p in pods:
    r = rows["kubernetes/logs/kube-system/%s.log" % p]
    assert "size" in r and "--since-time=" in r["source"] and "--all-containers" in r["source"], r
prev = [f for f in m["files"] if f["path"].endswith(".aws-node.previous.log")]
assert len(prev) == 1 and prev[0]["cut_at_cap"] is True and prev[0]["size"] <= 4096 < prev[0]["collected_bytes"], prev
assert prev[0]["redactions"].get("aws_secret_key", 0) >= 1, prev[0]
text = open(os.path.join(root, prev[0]["path"])).read()
assert "LAST-LINE-OF-AWS-NODE-LOG" in text and "Validating env variables" not in text
PY
check "kube-system logs: the planted value is nowhere in the archive" sh -c \
	'! gzip -dc "$1" | grep -aq PlantedKubeSystemSecret' _ "$arc5"
check "kubectl sent GET requests only" sh -c '[ -s "$1" ] && ! grep -v "^GET " "$1"' _ "$FIXTURE_KUBE_RECORD"

# The output is never written through a symlink.
ln -s "$e2e_tmp/target" "$e2e_tmp/link.tar.gz"
"$HPNODE" bundle --cluster "$FIXTURE_CLUSTER" --node "$p5" --no-kube \
	--output-file "$e2e_tmp/link.tar.gz" >/dev/null 2>"$e2e_tmp/err3.txt"
rc=$?
check "a symlink as --output-file is refused before anything is collected" sh -c \
	'[ "$1" = 2 ] && [ ! -e "$2" ] && grep -q "nothing was collected" "$3"' _ "$rc" "$e2e_tmp/target" "$e2e_tmp/err3.txt"

# Only read-only calls: every recorded action is a Describe/List/Get/Filter or an SSM session.
bad=$(sort -u "$FIXTURE_RECORD" | grep -Ev '^(sagemaker:(Describe|List)|ec2:Describe|eks:Describe|logs:(Describe|FilterLogEvents)|ssm:(StartSession|TerminateSession)$|service-quotas:Get|sts:GetCallerIdentity$)' || true)
if [ -z "$bad" ] && [ -s "$FIXTURE_RECORD" ]; then
	ok "bundle made read-only calls only ($(sort -u "$FIXTURE_RECORD" | wc -l) distinct actions)"
else
	not_ok "bundle made read-only calls only" "$(echo $bad)"
fi
e2e_done
