#!/bin/sh
# Comparing runs end to end: the demo cluster, then the same cluster after
# HyperPod replaced its failed node, one fault was fixed and one appeared
# (tests/fixtures/demo-changed.yaml). Finding keys stay put across runs and
# rewordings; `hpnode diff` over snapshots, JSON reports and a mix of both
# says what is new, resolved and persisting, shows the replaced node as
# replaced, and gates on --fail-on-new; `triage --baseline` marks the same
# inline.
T=t0360-diff
. "$(dirname "$0")/e2e-lib.sh"

fixture_start "$ROOT/tests/fixtures/demo.yaml" || { not_ok "demo fixture starts" "see messages above"; e2e_done; }
old_failed=$(fixture_get nodes.p5-nvlink)
lcs=$(fixture_get nodes.sys-lcs)
sysok=$(fixture_get nodes.sys-ok)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --region us-west-2 --output json \
	--save-snapshot "$e2e_tmp/old.snap" --junit-file "$e2e_tmp/old.xml" --debug \
	>"$e2e_tmp/old.json" 2>"$e2e_tmp/old.err"
expect_status "the demo cluster is triaged" 0 $?
fixture_stop
FIXTURE_PID= FIXTURE_DIR=
fixture_start "$ROOT/tests/fixtures/demo-changed.yaml" || { not_ok "changed fixture starts" "see messages above"; e2e_done; }
new_node=$(fixture_get nodes.p5-nvlink)
"$HPNODE" triage --cluster "$FIXTURE_CLUSTER" --region us-west-2 --output json \
	--save-snapshot "$e2e_tmp/new.snap" --baseline "$e2e_tmp/old.snap" \
	--text-file "$e2e_tmp/new-b.txt" --json-file "$e2e_tmp/new-b.json" \
	>"$e2e_tmp/new.json" 2>"$e2e_tmp/new.err"
expect_status "the changed cluster is triaged" 0 $?
fixture_stop
[ "$new_node" = i-0c4a9e1b2d3f40567 ] && [ "$old_failed" != "$new_node" ] &&
	ok "the failed node has a new instance id" ||
	not_ok "the failed node has a new instance id" "old $old_failed, new $new_node"

# 1. Keys: in JSON, as JUnit testcase names, under --debug; stable across runs.
check "every finding has a key and keys" python3 - "$e2e_tmp/old.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    assert f["key"].startswith(f["check"]), f
    assert f["keys"] and all(k.startswith(f["check"]) for k in f["keys"]), f
    if f["node"]:
        assert re.fullmatch(re.escape(f["check"] + "/" + f["node"]) + r"(#[^~]+)?(~[0-9]+)?", f["key"]), f
probs = [f["key"] for f in d["findings"] if f["tag"] in ("FAIL", "WARN")]
assert len(probs) == len(set(probs)), "problem keys repeat"
PY
check "version drift: the demo cluster's groups agree" findings "$e2e_tmp/old.json" \
	"1:check=node.version-drift,tag=PASS"
check "version drift: the changed cluster's system group does not (WARN P2, E.1)" findings "$e2e_tmp/new.json" \
	"1:check=node.version-drift,tag=WARN,priority=P2,section=E.1,message~Instance group 'system': kernel differs on 1 of 2 probed nodes"
check "the root volume finding's key names its node" contains "$e2e_tmp/old.json" "\"key\":\"node.disk-root/$lcs\""
check "JUnit names the testcase by the key" contains "$e2e_tmp/old.xml" "name=\"node.disk-root/$lcs\""
check "--debug prints each finding's key" contains "$e2e_tmp/old.err" "hpnode: debug: finding node.disk-root/$lcs FAIL"
check "a finding that stays keeps its key in the next run" python3 - "$e2e_tmp/old.json" "$e2e_tmp/new.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ka = {f["key"]: f for f in a["findings"] if f["tag"] == "FAIL"}
kb = {f["key"]: f for f in b["findings"] if f["tag"] == "FAIL"}
# The EFA, Xid and remap faults are the same in both runs.
same = [k for k in ka if k.startswith(("node.gpu-xid/", "node.gpu-remap/", "node.efa/"))]
assert len(same) >= 3 and all(k in kb for k in same), (same, sorted(kb))
PY

# 2. diff over the two snapshots.
"$HPNODE" diff --no-color "$e2e_tmp/old.snap" "$e2e_tmp/new.snap" >"$e2e_tmp/d.txt" 2>"$e2e_tmp/d.err"
expect_status "diff of two snapshots: exit 0" 0 $?
check "the replaced node is shown as replaced" grep -q "replaced $old_failed (group gpu-p5, Failure) → $new_node (group gpu-p5, Running)" "$e2e_tmp/d.txt"
check "... not as removed and added" sh -c "! grep -Eq '^    (added|removed) ' '$e2e_tmp/d.txt'"
"$HPNODE" diff --output json "$e2e_tmp/old.snap" "$e2e_tmp/new.snap" >"$e2e_tmp/d.json"
check "diff JSON: schema, new, resolved, persisting, replaced" python3 - "$e2e_tmp/d.json" "$lcs" "$sysok" "$old_failed" "$new_node" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
lcs, sysok, old, new = sys.argv[2:6]
assert d["schema"] == "hpnode.diff/1", d["schema"]
new_keys = {f["key"] for f in d["new_findings"]}
res_keys = {f["key"] for f in d["resolved"]}
per_keys = {f["key"] for f in d["persisting"]}
assert "node.disk-root/" + sysok in new_keys, new_keys
# Version drift between the runs: sys-ok came back on another kernel than its group's other node.
assert "node.version-drift/system#kernel" in new_keys, new_keys
assert "node.disk-root/" + lcs in res_keys, res_keys
assert any(k.startswith("nodes.status/" + old) for k in res_keys), res_keys
assert any(k.startswith("node.gpu-xid/") for k in per_keys), per_keys
assert not new_keys & res_keys
inv = d["inventory"]
assert inv["compared"] and not inv["added"] and not inv["removed"], inv
assert [(r["old"]["id"], r["new"]["id"]) for r in inv["replaced"]] == [(old, new)], inv["replaced"]
assert d["summary"]["new"] == len(d["new_findings"]) and d["summary"]["worst_new"] == "P0", d["summary"]
PY

# Reports and mixes compare the same as snapshots.
"$HPNODE" diff --output json "$e2e_tmp/old.json" "$e2e_tmp/new.json" >"$e2e_tmp/dr.json"
expect_status "diff of two JSON reports: exit 0" 0 $?
"$HPNODE" diff --output json "$e2e_tmp/old.snap" "$e2e_tmp/new.json" >"$e2e_tmp/dm.json"
expect_status "diff of a snapshot and a report: exit 0" 0 $?
check "reports, snapshots and a mix give the same comparison" python3 - "$e2e_tmp/d.json" "$e2e_tmp/dr.json" "$e2e_tmp/dm.json" <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[1:]]
def sets(d):
    return tuple(sorted(f["key"] for f in d[m]) for m in ("new_findings", "resolved", "persisting")) + \
        (d["inventory"]["replaced"],)
want = sets(docs[0])
for d in docs[1:]:
    assert sets(d) == want, (sets(d), want)
PY

# A reworded message keeps its key: every message rewritten, nothing new or resolved.
python3 - "$e2e_tmp/new.json" "$e2e_tmp/reworded.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for i, f in enumerate(d["findings"]):
    f["message"] = "reworded %d: %s" % (i, f["message"][::-1])
json.dump(d, open(sys.argv[2], "w"))
PY
"$HPNODE" diff --output json "$e2e_tmp/new.json" "$e2e_tmp/reworded.json" >"$e2e_tmp/dw.json"
check "a reworded message keeps its key" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["new_findings"] and not d["resolved"] and d["persisting"], d["summary"]
assert all(f["message"].startswith("reworded") for f in d["persisting"])
' "$e2e_tmp/dw.json"

# --fail-on-new: exit 3 on a new P0, 0 when nothing is new.
"$HPNODE" diff --fail-on-new P0 "$e2e_tmp/old.snap" "$e2e_tmp/new.snap" >/dev/null
expect_status "--fail-on-new P0 with a new P0 finding: exit 3" 3 $?
"$HPNODE" diff --fail-on-new P2 "$e2e_tmp/new.snap" "$e2e_tmp/new.json" >/dev/null
expect_status "--fail-on-new P2 with nothing new: exit 0" 0 $?
"$HPNODE" diff --output junit "$e2e_tmp/old.snap" "$e2e_tmp/new.snap" >"$e2e_tmp/d.xml"
check "diff JUnit parses and counts its cases" python3 "$ROOT/tests/e2e/junit_check.py" "$e2e_tmp/d.xml"
check "diff JUnit: the new finding fails under its key" grep -q "name=\"node.disk-root/$sysok\" time=\"0\">" "$e2e_tmp/d.xml"
# 3. triage --baseline: the same comparison inline, on the live run and on a replay.
check "--baseline: the new root volume finding is marked [NEW]" grep -q "^  \[FAIL\] \[NEW\] Root volume 96% full on node $sysok" "$e2e_tmp/new-b.txt"
check "--baseline: the Xid finding is [known]" grep -q "^  \[FAIL\] \[known\] GPU Xid 79" "$e2e_tmp/new-b.txt"
check "--baseline: the fixed root volume is listed as resolved" sh -c "sed -n '/Resolved since the baseline/,/Triage Summary/p' '$e2e_tmp/new-b.txt' | grep -q 'key node.disk-root/$lcs'"
check "--baseline JSON: marks and the resolved list" python3 - "$e2e_tmp/new-b.json" "$e2e_tmp/d.json" <<'PY'
import json, sys
d, diff = (json.load(open(p)) for p in sys.argv[1:3])
marks = {f["key"]: f["baseline"] for f in d["findings"] if f["tag"] in ("FAIL", "WARN")}
assert set(marks.values()) <= {"new", "known"}, marks
assert all(f["baseline"] is None for f in d["findings"] if f["tag"] not in ("FAIL", "WARN"))
new = {f["key"] for f in diff["new_findings"]}
assert {k for k, v in marks.items() if v == "new"} == new, (marks, new)
assert sorted(f["key"] for f in d["baseline"]["resolved"]) == sorted(f["key"] for f in diff["resolved"])
PY
"$HPNODE" triage --snapshot "$e2e_tmp/new.snap" --baseline "$e2e_tmp/old.json" --fail-on-new P0 >/dev/null
expect_status "--baseline --fail-on-new P0 with a new P0: exit 3" 3 $?
"$HPNODE" triage --snapshot "$e2e_tmp/new.snap" --baseline "$e2e_tmp/new.json" --fail-on-new P2 >/dev/null
expect_status "--baseline --fail-on-new P2 against itself: exit 0 (the old findings do not count)" 0 $?
"$HPNODE" triage --snapshot "$e2e_tmp/new.snap" --fail-on-new P2 >/dev/null 2>&1
expect_status "--fail-on-new without --baseline: exit 2" 2 $?
"$HPNODE" triage --snapshot "$e2e_tmp/new.snap" --baseline "$e2e_tmp/none.snap" >/dev/null 2>&1
expect_status "an unreadable baseline: exit 2 before anything runs" 2 $?

"$HPNODE" diff "$e2e_tmp/old.snap" >/dev/null 2>"$e2e_tmp/u.err"
expect_status "diff with one file: exit 2" 2 $?
"$HPNODE" diff "$e2e_tmp/old.snap" "$e2e_tmp/none.json" >/dev/null 2>"$e2e_tmp/u.err"
expect_status "diff with a missing file: exit 1" 1 $?
check "... saying which file" grep -q "none.json" "$e2e_tmp/u.err"
e2e_done
