#!/bin/sh
# `hpnode bundle --upload s3://…` against the fixture's S3: the archive goes
# to the bucket in one PutObject (and as a multipart upload of two parts when
# it is past the threshold), read back with boto3 it has the local archive's
# sha256, every write carries SSE (AES256, or aws:kms with --sse-kms-key-id),
# a Content-MD5 and an x-amz-checksum-sha256 and never an ACL or grant
# header; a missing bucket and a bucket in another region fail with their
# reason and exit status 5, the local archive kept and its path printed; and
# no write call other than these uploads, to the named bucket, is ever made.
T=t0741-bundle-upload
. "$(dirname "$0")/e2e-lib.sh"

# One node (p5-xid) holds 7 MiB of base64 noise, so its archive passes S3's
# 5 MiB part floor; the fixture serves two buckets, one in another region.
yaml=$e2e_tmp/upload.yaml
python3 - "$ROOT/tests/fixtures" "$ROOT/tests/fixtures/demo.yaml" "$yaml" <<'PY'
import base64, random, sys, yaml
sys.path.insert(0, sys.argv[1])
from hpfixture.spec import read_yaml
d = read_yaml(sys.argv[2])
rng = random.Random(741)
noise = base64.encodebytes(bytes(rng.getrandbits(8) for _ in range(5 << 20))).decode()
for n in d["nodes"]:
    if n.get("alias") == "p5-xid":
        n["probe"].setdefault("files", {})["/var/log/provision/noise.log"] = noise
d["s3"] = {"buckets": [{"name": "hp-support"}, {"name": "hp-eu-bundles", "region": "eu-west-1"}]}
yaml.dump(d, open(sys.argv[3], "w"), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
          sort_keys=False)
PY
params=$e2e_tmp/params.log
fixture_start "$yaml" --record-params "$params" || { not_ok "fixture starts" "see messages above"; e2e_done; }
node=$(fixture_get nodes.p5-xid)

# bundle NAME [VAR=value...]: $node's bundle into $e2e_tmp/NAME.tar.gz with $upload_args.
bundle() {
	name=$1
	shift
	env "$@" "$HPNODE" bundle --cluster "$FIXTURE_CLUSTER" --node "$node" --no-kube --probe-timeout 60 \
		--output-file "$e2e_tmp/$name.tar.gz" $upload_args >"$e2e_tmp/$name.out" 2>"$e2e_tmp/$name.err"
}

# readback NAME KEY [KMS|-] [noacl]: the object at s3://hp-support/KEY has NAME's bytes
# and SSE, and (unless noacl) an ACL that grants its owner alone.
readback() {
	python3 - "$FIXTURE_READY" "$e2e_tmp/$1.tar.gz" "$2" "${3:--}" "${4:-}" <<'PY'
import boto3, hashlib, json, sys
r = json.load(open(sys.argv[1]))
s3 = boto3.client("s3", endpoint_url=r["endpoint"], region_name=r["region"],
                  aws_access_key_id=r["access_key"], aws_secret_access_key=r["secret_key"])
local = open(sys.argv[2], "rb").read()
obj = s3.get_object(Bucket="hp-support", Key=sys.argv[3])
body = obj["Body"].read()
assert hashlib.sha256(body).hexdigest() == hashlib.sha256(local).hexdigest(), \
    (len(body), len(local))
kms = sys.argv[4] if sys.argv[4] != "-" else ""
if kms:
    assert obj.get("ServerSideEncryption") == "aws:kms", obj.get("ServerSideEncryption")
    assert kms in obj.get("SSEKMSKeyId", ""), obj.get("SSEKMSKeyId")
else:
    assert obj.get("ServerSideEncryption") == "AES256", obj.get("ServerSideEncryption")
if sys.argv[5] != "noacl":
    grants = s3.get_object_acl(Bucket="hp-support", Key=sys.argv[3])["Grants"]
    assert [g["Permission"] for g in grants] == ["FULL_CONTROL"] and \
        all(g["Grantee"].get("Type") == "CanonicalUser" for g in grants), grants
print(len(body))
PY
}

# One PutObject: the archive in the bucket, byte for byte, encrypted, owner-only.
upload_args="--upload s3://hp-support/cases/7741"
bundle put
expect_status "bundle --upload completes" 0 $?
sha=$(sha256sum "$e2e_tmp/put.tar.gz" | cut -d' ' -f1)
check "it prints where the archive went, its size and sha256, and the encryption" \
	grep -q "uploaded $e2e_tmp/put.tar.gz to s3://hp-support/cases/7741/put.tar.gz (.* bytes in one PutObject; sha256 $sha; checksum confirmed by S3; server-side encryption AES256)" "$e2e_tmp/put.out"
check "the archive stays local too" test -s "$e2e_tmp/put.tar.gz"
check "the archive passes 5 MiB (so the multipart case below has two parts)" \
	sh -c '[ "$(stat -c %s "$1")" -gt 5242880 ]' _ "$e2e_tmp/put.tar.gz"
check "boto3 reads back the same bytes (sha256), SSE AES256, no ACL grant" \
	readback put cases/7741/put.tar.gz
check "PutObject was sent with SSE, Content-MD5 and x-amz-checksum-sha256, signed payload hash, no ACL" \
	python3 - "$params" "$sha" <<'PY'
import json, sys, base64
sha = sys.argv[2]
rows = [json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]) if l.startswith("s3:PutObject ")]
assert len(rows) == 1, rows
h = rows[0]["headers"]
assert rows[0]["path"] == "/hp-support/cases/7741/put.tar.gz", rows[0]
assert h["x-amz-server-side-encryption"] == "AES256", h
assert h["x-amz-content-sha256"] == sha, h
assert base64.b64decode(h["x-amz-checksum-sha256"]).hex() == sha, h
assert h.get("content-md5"), h
assert not any(k.startswith(("x-amz-acl", "x-amz-grant-")) for k in h), h
PY

# Multipart: past a lowered threshold, parts of S3's 5 MiB floor: two parts.
bundle multi HPNODE_S3_MULTIPART_THRESHOLD=1M HPNODE_S3_PART_SIZE=5M
expect_status "bundle --upload as a multipart upload completes" 0 $?
check "it says it was a multipart upload of 2 parts" \
	grep -q "to s3://hp-support/cases/7741/multi.tar.gz (.* bytes in a multipart upload of 2 parts;" "$e2e_tmp/multi.out"
# (moto 5.2.1 answers GetObjectAcl on a multipart object with a 500: its requests are checked instead.)
check "boto3 reads back the multipart object: same sha256, SSE AES256" \
	readback multi cases/7741/multi.tar.gz - noacl
check "CreateMultipartUpload with SSE and SHA256 checksums, two UploadParts with their checksums, one Complete" \
	python3 - "$params" <<'PY'
import json, sys
uploads = ("s3:CreateMultipartUpload", "s3:UploadPart", "s3:CompleteMultipartUpload",
           "s3:AbortMultipartUpload", "s3:PutObject")
rows = [(l.split(" ", 1)[0], json.loads(l.split(" ", 1)[1])) for l in open(sys.argv[1])
        if l.split(" ", 1)[0] in uploads and "/multi.tar.gz" in l]
ops = [op for op, _ in rows]
assert ops == ["s3:CreateMultipartUpload", "s3:UploadPart", "s3:UploadPart",
               "s3:CompleteMultipartUpload"], ops
create = rows[0][1]["headers"]
assert create["x-amz-server-side-encryption"] == "AES256" and \
    create["x-amz-checksum-algorithm"] == "SHA256", create
for _, p in rows[1:3]:
    assert p["headers"].get("x-amz-checksum-sha256") and p["headers"].get("content-md5"), p
for _, p in rows:
    assert not any(k.startswith(("x-amz-acl", "x-amz-grant-")) for k in p["headers"]), p
PY

# The other cases on a node without the noise.
node=$(fixture_get nodes.g5-ok)

# SSE-KMS with a key id.
upload_args="--upload s3://hp-support/kms/ --sse-kms-key-id alias/hp-support-bundles"
bundle kms
expect_status "bundle --upload --sse-kms-key-id completes" 0 $?
check "it says the object is encrypted with aws:kms" grep -q "server-side encryption aws:kms)" "$e2e_tmp/kms.out"
check "boto3 reads back the KMS-encrypted object with the key id" \
	readback kms kms/kms.tar.gz alias/hp-support-bundles

# Failures: the reason, exit status 5, the archive kept and its path printed.
upload_args="--upload s3://hp-no-such-bucket/x"
bundle missing
expect_status "a missing bucket: exit status 5" 5 $?
check "a missing bucket: the reason is named" \
	grep -q "upload to s3://hp-no-such-bucket/x/missing.tar.gz failed at PutObject: the bucket 'hp-no-such-bucket' does not exist (NoSuchBucket)" "$e2e_tmp/missing.err"
check "a missing bucket: the archive is kept and its path printed" sh -c \
	'grep -q "the archive is kept at $1" "$2" && tar -tzf "$1" | grep -qx MANIFEST.json' \
	_ "$e2e_tmp/missing.tar.gz" "$e2e_tmp/missing.err"
upload_args="--upload s3://hp-eu-bundles/cases"
bundle region
expect_status "a bucket in another region: exit status 5" 5 $?
check "a bucket in another region: its region is named, and how to copy the archive there" \
	grep -q "the bucket 'hp-eu-bundles' is in region eu-west-1, not in us-west-2 .*aws s3 cp $e2e_tmp/region.tar.gz s3://hp-eu-bundles/cases/region.tar.gz --region eu-west-1" "$e2e_tmp/region.err"
check "a bucket in another region: the archive is kept" test -s "$e2e_tmp/region.tar.gz"
upload_args="--upload s3://Not_A_Bucket/x"
bundle badname
expect_status "a bucket name S3 refuses is a usage error before anything is collected" 2 $?
check "the usage error names --upload" grep -q "\-\-upload: a bucket name has only lower-case letters" "$e2e_tmp/badname.err"
upload_args="--sse-kms-key-id k"
bundle kmsonly
expect_status "--sse-kms-key-id without --upload is a usage error" 2 $?
upload_args="--upload s3://hp-support/x"
bundle badendpoint AWS_ENDPOINT_URL_S3=http://10.0.0.1:4566
expect_status "an S3 endpoint that cannot be used is a usage error before anything is collected" 2 $?
check "the message names AWS_ENDPOINT_URL_S3" grep -q "\-\-upload: endpoint URL 'http://10.0.0.1:4566' from AWS_ENDPOINT_URL_S3 .*nothing was collected" "$e2e_tmp/badendpoint.err"
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube --output json >/dev/null 2>"$e2e_tmp/triage-s3.err" &&
	AWS_ENDPOINT_URL_S3=http://10.0.0.1:4566 "$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube \
		--output json >/dev/null 2>>"$e2e_tmp/triage-s3.err"
rc=$?
check "a read-only command never reads the S3 endpoint (triage runs with one it could not use)" \
	sh -c '[ "$1" != 2 ] && ! grep -q AWS_ENDPOINT_URL_S3 "$2"' _ "$rc" "$e2e_tmp/triage-s3.err"

# The fixture's record: reads, SSM sessions, and the uploads to the named buckets, nothing else.
check "no write call but the uploads, and those only to the --upload buckets and prefixes" \
	python3 - "$FIXTURE_RECORD" "$params" <<'PY'
import json, re, sys
read_only = re.compile(r"^(sagemaker:(Describe|List)|ec2:Describe|eks:Describe|logs:(Describe|FilterLogEvents)"
                       r"|ssm:(StartSession|TerminateSession)$|service-quotas:Get|sts:GetCallerIdentity$)")
uploads = {"s3:PutObject", "s3:CreateMultipartUpload", "s3:UploadPart", "s3:CompleteMultipartUpload",
           "s3:AbortMultipartUpload"}
seen = [l.strip() for l in open(sys.argv[1]) if l.strip()]
# The test's own boto3 reads come after each run: GetObject, GetObjectAcl.
other = sorted({a for a in seen if not read_only.match(a) and a not in uploads
                and a not in ("s3:GetObject", "s3:GetObjectAcl")})
assert not other, other
paths = [json.loads(l.split(" ", 1)[1])["path"] for l in open(sys.argv[2])
         if l.split(" ", 1)[0] in uploads]
allowed = ("/hp-support/cases/7741/", "/hp-support/kms/", "/hp-no-such-bucket/x/", "/hp-eu-bundles/cases/")
assert paths and all(p.startswith(allowed) for p in paths), paths
assert sum(1 for a in seen if a in uploads) == len(paths)
PY
e2e_done
