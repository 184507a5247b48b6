#!/usr/bin/env python3
"""Check a JUnit XML file: it parses (xml.etree) and has the shape of
Jenkins' junit-10.xsd (tests/data/junit/junit-10.xsd, which t0348 validates
against with xmllint): elements, required and allowed attributes, numeric
counts that add up; and hpnode's mapping of findings.

usage: junit_check.py FILE.xml [FINDINGS.json [P0|P1|P2]]
With the JSON report of the same run, the testcases are checked against the
findings: one testcase per finding key (JSON "keys": a finding about many
nodes has one per node), names unique; a <failure> exactly for each key of
a FAIL or WARN at the gate's priority or worse (the third argument, the
run's --fail-on; P1 without it), a <skipped> for a SKIP, and the others
pass with their message in <system-out>.
Prints the problems and exits 1, or exits 0.
"""
import collections
import json
import re
import sys
import xml.etree.ElementTree as ET

# Allowed attributes (junit-10.xsd): (required, optional).
SUITES_ATTRS = (set(), {"name", "tests", "failures", "errors", "time"})
SUITE_ATTRS = ({"name", "tests", "failures", "errors"},
               {"skipped", "time", "timestamp", "hostname", "id", "package", "file", "log", "url",
                "group"})
SUITE_CHILDREN = {"properties", "testcase", "system-out", "system-err", "testsuite"}
CASE_ATTRS = ({"name"}, {"classname", "time", "group"})
CASE_CHILDREN = {"skipped", "error", "failure", "system-out", "system-err", "rerunFailure",
                 "rerunError", "flakyFailure", "flakyError"}
COUNT = re.compile(r"^[0-9]+$")
TIME = re.compile(r"^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$")
STAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")
PRIOS = ("P0", "P1", "P2")

problems = []


def bad(msg):
    problems.append(msg)


def attrs(el, spec, where):
    req, opt = spec
    for a in req - set(el.attrib):
        bad(f"{where}: missing attribute {a}")
    for a in set(el.attrib) - req - opt:
        bad(f"{where}: unknown attribute {a}")
    for a in ("tests", "failures", "errors", "skipped"):
        if a in el.attrib and not COUNT.match(el.attrib[a]):
            bad(f"{where}: {a}={el.attrib[a]!r} is not a count")
    if "time" in el.attrib and not TIME.match(el.attrib["time"]):
        bad(f"{where}: time={el.attrib['time']!r}")
    if "timestamp" in el.attrib and el.attrib["timestamp"] != "TIME" \
            and not STAMP.match(el.attrib["timestamp"]):
        bad(f"{where}: timestamp={el.attrib['timestamp']!r}")


def main():
    root = ET.parse(sys.argv[1]).getroot()
    if root.tag != "testsuites":
        bad(f"root is <{root.tag}>, not <testsuites>")
    attrs(root, SUITES_ATTRS, "testsuites")
    total = {"tests": 0, "failures": 0}
    cases = []
    for suite in root:
        where = f"testsuite {suite.get('name')!r}"
        if suite.tag != "testsuite":
            bad(f"<{suite.tag}> under testsuites")
            continue
        attrs(suite, SUITE_ATTRS, where)
        n = {"tests": 0, "failures": 0, "skipped": 0}
        for child in suite:
            if child.tag not in SUITE_CHILDREN:
                bad(f"{where}: <{child.tag}>")
            if child.tag == "properties":
                for p in child:
                    if p.tag != "property" or set(p.attrib) != {"name", "value"}:
                        bad(f"{where}: bad property {p.tag} {p.attrib}")
            if child.tag != "testcase":
                continue
            attrs(child, CASE_ATTRS, f"{where} testcase {child.get('name')!r}")
            kinds = [c.tag for c in child]
            for k in kinds:
                if k not in CASE_CHILDREN:
                    bad(f"{where}: <{k}> in a testcase")
            if len([k for k in kinds if k in ("skipped", "failure", "error")]) > 1:
                bad(f"{where}: testcase {child.get('name')!r} has {kinds}")
            for f in child.findall("failure"):
                if "message" not in f.attrib or "type" not in f.attrib:
                    bad(f"{where}: failure without message/type")
            n["tests"] += 1
            n["failures"] += "failure" in kinds
            n["skipped"] += "skipped" in kinds
            cases.append((suite.get("name"), child))
        for k, v in n.items():
            if suite.get(k) is not None and int(suite.get(k)) != v:
                bad(f"{where}: {k}={suite.get(k)} but {v} counted")
            if k in total:
                total[k] += v
    for k, v in total.items():
        if root.get(k) is not None and int(root.get(k)) != v:
            bad(f"testsuites: {k}={root.get(k)} but {v} counted")
    names = collections.Counter((c.get("classname"), c.get("name")) for _, c in cases)
    for name, n in names.items():
        if n > 1:
            bad(f"testcase {name} appears {n} times")
    if len(sys.argv) > 2:
        gate = sys.argv[3] if len(sys.argv) > 3 else "P1"
        against_json(json.load(open(sys.argv[2])), cases, gate)
    for p in problems[:20]:
        print(p)
    return 1 if problems else 0


def counted(f, gate):
    return f["tag"] in ("FAIL", "WARN") and f.get("priority") in PRIOS \
        and PRIOS.index(f["priority"]) <= PRIOS.index(gate)


def against_json(doc, cases, gate):
    by_name = {c.get("name"): (suite, c) for suite, c in cases}
    keys = collections.Counter(k for f in doc["findings"] for k in f["keys"])
    if len(cases) != sum(keys.values()):
        bad(f"{len(cases)} testcases for {sum(keys.values())} finding keys")
    want_failures = sum(len(f["keys"]) for f in doc["findings"] if counted(f, gate))
    got_failures = sum(1 for _, c in cases if c.find("failure") is not None)
    if want_failures != got_failures:
        bad(f"{got_failures} <failure> for {want_failures} keys at {gate} or worse")
    for f in doc["findings"]:
        for key in f["keys"]:
            found = by_name.get(key)
            if not found:
                bad(f"no testcase {key!r} for finding {f['message'][:80]!r}")
                continue
            if keys[key] > 1:
                continue    # shared with another finding: the names say which is which
            suite, case = found
            if not suite.endswith(f["group"]):
                bad(f"{key!r} in suite {suite!r}, finding in group {f['group']!r}")
            fail = case.find("failure")
            if counted(f, gate):
                if fail is None:
                    bad(f"{key!r}: {f['tag']} {f['priority']} without <failure>")
                    continue
                if not (fail.get("message") or "").startswith(f"[{f['priority']}] ") \
                        or fail.get("type") != f"{f['tag']} {f['priority']}":
                    bad(f"{key!r}: failure message/type {fail.attrib}")
                if f["section"] and "§" not in (fail.text or ""):
                    bad(f"{key!r}: failure text without its § pointer")
                text = fail.text or ""
            else:
                if fail is not None:
                    bad(f"{key!r}: {f['tag']} {f.get('priority')} is a <failure> at gate {gate}")
                if (case.find("skipped") is not None) != (f["tag"] == "SKIP"):
                    bad(f"{key!r}: {f['tag']} and <skipped> disagree")
                text = case.findtext("system-out") or ""
            if f["message"][:60].replace("\u2026", "") and f["message"][:60] not in text:
                bad(f"{key!r}: message not in the testcase's text")


if __name__ == "__main__":
    sys.exit(main())
