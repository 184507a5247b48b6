#!/usr/bin/env python3
"""Assert on the findings of an `hpnode triage --output json` report.

usage: findings.py REPORT.json EXPECT...

Each EXPECT is COUNT:FILTER, where FILTER is comma-separated key=value
pairs over a finding's fields (check, tag, priority, section, node, group)
and message~TEXT for a substring of the message; COUNT is a number or
">=N". Example: "1:check=events.signals,tag=FAIL,priority=P0,section=A".
Exits 0 when every expectation holds, else prints what was found and
exits 1.
"""
import json
import sys


def matches(f, flt):
    for part in flt.split(","):
        if not part:
            continue
        if "~" in part and ("=" not in part or part.index("~") < part.index("=")):
            key, val = part.split("~", 1)
            if val not in (f.get(key) or ""):
                return False
            continue
        key, val = part.split("=", 1)
        have = f.get(key)
        if val == "null":
            if have is not None:
                return False
        elif have != val:
            return False
    return True


def main():
    doc = json.load(open(sys.argv[1]))
    findings = doc["findings"]
    bad = []
    for exp in sys.argv[2:]:
        count, flt = exp.split(":", 1)
        n = sum(1 for f in findings if matches(f, flt))
        ok = n >= int(count[2:]) if count.startswith(">=") else n == int(count)
        if not ok:
            bad.append("expected %s finding(s) matching %s, found %d" % (count, flt, n))
    if bad:
        for b in bad:
            print(b)
        for f in findings:
            if f["tag"] in ("FAIL", "WARN"):
                print("  have: %s %s %s %s %s" % (f["check"], f["tag"], f["priority"],
                                                  f["section"], f["message"][:120]))
        sys.exit(1)


main()
