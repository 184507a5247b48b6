#!/usr/bin/env python3
"""Check a JUnit XML file: it parses (xml.etree) and has the shape of the
common JUnit schema (the Jenkins/Ant junit-10.xsd that CI systems read):
elements, required attributes, numeric counts that add up, and hpnode's
mapping of findings.

usage: junit_check.py FILE.xml [FINDINGS.json]
With the JSON report of the same run, the testcases are checked against the
findings: every FAIL gives a <failure>, a WARN or SKIP a <skipped>, and every
node of a finding about nodes has its own testcase named after it.
Prints the problems and exits 1, or exits 0.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

# Allowed children and attributes (junit-10.xsd); (required, optional).
SUITES_ATTRS = (set(), {"name", "tests", "failures", "errors", "skipped", "disabled", "time"})
SUITE_ATTRS = ({"name", "tests"}, {"failures", "errors", "skipped", "disabled", "time", "timestamp",
                                   "hostname", "id", "package", "file", "log", "url", "version",
                                   "group"})
SUITE_CHILDREN = {"properties", "testcase", "system-out", "system-err", "testsuite"}
CASE_ATTRS = ({"name"}, {"classname", "time", "assertions", "status", "file", "line", "group",
                         "url"})
CASE_CHILDREN = {"skipped", "error", "failure", "system-out", "system-err", "rerunFailure",
                 "rerunError", "flakyFailure", "flakyError"}
COUNT = re.compile(r"^[0-9]+$")
TIME = re.compile(r"^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?$")
STAMP = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")

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
    if "timestamp" in el.attrib and not STAMP.match(el.attrib["timestamp"]):
        bad(f"{where}: timestamp={el.attrib['timestamp']!r}")


def main():
    root = ET.parse(sys.argv[1]).getroot()
    if root.tag != "testsuites":
        bad(f"root is <{root.tag}>, not <testsuites>")
    attrs(root, SUITES_ATTRS, "testsuites")
    total = {"tests": 0, "failures": 0, "skipped": 0}
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
            if kinds.count("skipped") > 1 or ("skipped" in kinds and "failure" in kinds):
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
            total[k] += v
    for k, v in total.items():
        if root.get(k) is not None and int(root.get(k)) != v:
            bad(f"testsuites: {k}={root.get(k)} but {v} counted")
    if len(sys.argv) > 2:
        against_json(json.load(open(sys.argv[2])), cases)
    for p in problems[:20]:
        print(p)
    return 1 if problems else 0


def against_json(doc, cases):
    by_name = {}
    for suite, c in cases:
        by_name.setdefault(c.get("name"), []).append((suite, c))
    for f in doc["findings"]:
        nodes = f["nodes"] or [None]
        for node in nodes:
            name = f["check"] + (" " + node if node else "")
            found = by_name.get(name)
            if not found:
                bad(f"no testcase {name!r} for finding {f['message'][:80]!r}")
                continue
            suite, case = found[0]
            if not suite.endswith(f["group"]):
                bad(f"{name!r} in suite {suite!r}, finding in group {f['group']!r}")
            kinds = [c.tag for c in case]
            if f["tag"] == "FAIL":
                fail = case.find("failure")
                if fail is None:
                    bad(f"{name!r}: FAIL without <failure>")
                    continue
                if not re.match(r"^(\[P[012]\] )?\S", fail.get("message") or "") \
                        or not fail.get("type", "").startswith("FAIL"):
                    bad(f"{name!r}: failure message/type {fail.attrib}")
                if f["section"] and "§" not in (fail.text or ""):
                    bad(f"{name!r}: failure text without its § pointer")
            elif f["tag"] in ("WARN", "SKIP") and "failure" not in kinds and "skipped" not in kinds:
                bad(f"{name!r}: {f['tag']} without <skipped>")
            if f["message"][:60].replace("\u2026", "") and f["message"][:60] not in (case.findtext("system-out") or ""):
                bad(f"{name!r}: message not in system-out")


if __name__ == "__main__":
    sys.exit(main())
