#!/usr/bin/env python3
"""Assert on the suggested commands of `hpnode triage --suggest --output json`.

usage:
  suggestions.py REPORT.json contract KNOWN
      Every finding has a "suggestions" list (empty unless FAIL/WARN); every
      suggestion is marked run_this_yourself, states a blast radius, carries
      the IaC drift note when it changes IaC-owned configuration, has no
      placeholder left in its command, lists each placeholder left in its
      prose with a reason, and leaves none of the
      comma-separated KNOWN placeholder names (plus INSTANCE_ID and GROUP on
      findings that name a node).
  suggestions.py REPORT.json has FILTER SECTION TEXT...
      A finding matching FILTER (key=value and message~TEXT, as in findings.py) has a suggestion from
      SECTION whose command contains every TEXT.
  suggestions.py REPORT.json unfilled FILTER SECTION NAME REASON
      ...has a suggestion from SECTION that leaves <NAME> unfilled, with a
      reason containing REASON, and shows <NAME> in its command.
  suggestions.py REPORT.json skipped FILTER N
      ...has N suggestions left out for the other orchestrator.
  suggestions.py REPORT.json unfit FILTER REASON LACKS
      ...lists a suggestion left out for this cluster's state with a reason
      containing REASON, and no suggested command of it contains LACKS.
Exits 0 when the assertion holds, else prints why and exits 1.
"""
import json
import re
import sys

PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]*)>")
IAC_OWNED = ("aws ec2 ", "aws eks ", "aws iam ", "aws sagemaker update-cluster ",
             "kubectl set ", "kubectl create ")


def matches(f, flt):
    """FILTER as findings.py reads it: key=value pairs, message~TEXT substrings."""
    for part in filter(None, flt.split(",")):
        if "~" in part and ("=" not in part or part.index("~") < part.index("=")):
            key, val = part.split("~", 1)
            if val not in (f.get(key) or ""):
                return False
        else:
            key, val = part.split("=", 1)
            if (f.get(key) is not None) if val == "null" else f.get(key) != val:
                return False
    return True


def fail(msg):
    print(msg)
    sys.exit(1)


def contract(doc, known):
    problems = []
    total = 0
    for f in doc["findings"]:
        sugg = f.get("suggestions")
        if not isinstance(sugg, list):
            problems.append("no suggestions list: %s" % f["message"])
            continue
        if f["tag"] not in ("FAIL", "WARN") and sugg:
            problems.append("%s finding has suggestions: %s" % (f["tag"], f["message"]))
        never = set(known)
        if f.get("node"):
            never |= {"INSTANCE_ID", "GROUP"}
        for s in sugg:
            total += 1
            where = "%s / %s" % (f["message"][:60], s.get("section"))
            if s.get("run_this_yourself") is not True:
                problems.append("not marked run_this_yourself: " + where)
            if not s.get("blast_radius"):
                problems.append("no blast radius: " + where)
            cmd = s["command"]
            if any(w in cmd for w in IAC_OWNED) and "drift" not in (s.get("iac_note") or ""):
                problems.append("configuration change without the IaC drift note: " + where)
            # Every placeholder of a command is filled, or the command is left out.
            for name in PLACEHOLDER.findall(cmd):
                problems.append("<%s> left in a suggested command: %s" % (name, where))
            listed = {u["placeholder"]: u["reason"] for u in s["unfilled"]}
            for text in (cmd, s["intro"], s.get("blast_radius") or "", s.get("iac_note") or ""):
                for name in PLACEHOLDER.findall(text):
                    if "<%s>" % name not in listed:
                        problems.append("<%s> left but not listed: %s" % (name, where))
                    if name in never:
                        problems.append("<%s> left although known: %s" % (name, where))
            for ph, why in listed.items():
                if not why:
                    problems.append("%s listed without a reason: %s" % (ph, where))
    if not total:
        problems.append("no suggestion at all")
    if problems:
        fail("\n".join(problems[:20]))


def pick(doc, flt, section):
    found = []
    for f in doc["findings"]:
        if matches(f, flt):
            found += [s for s in f.get("suggestions", []) if s["section"] == section]
    return found


def main():
    doc = json.load(open(sys.argv[1]))
    what = sys.argv[2]
    args = sys.argv[3:]
    if what == "contract":
        contract(doc, [k for k in args[0].split(",") if k])
    elif what == "has":
        flt, section, texts = args[0], args[1], args[2:]
        cands = pick(doc, flt, section)
        if not any(all(t in s["command"] for t in texts) for s in cands):
            fail("no %s suggestion with %r among: %r" % (section, texts,
                                                         [s["command"] for s in cands]))
    elif what == "unfilled":
        flt, section, name, reason = args
        for s in pick(doc, flt, section):
            for u in s["unfilled"]:
                if u["placeholder"] == "<%s>" % name and reason in u["reason"] \
                        and "<%s>" % name in s["command"] + s["intro"]:
                    return
        fail("no %s suggestion leaving <%s> unfilled because of %r: %r"
             % (section, name, reason, [s["unfilled"] for s in pick(doc, flt, section)]))
    elif what == "skipped":
        flt, n = args[0], int(args[1])
        got = [f["suggestions_skipped"] for f in doc["findings"] if matches(f, flt)]
        if n not in got:
            fail("suggestions_skipped is %r, expected %d" % (got, n))
    elif what == "unfit":
        flt, reason, lacks = args
        fs = [f for f in doc["findings"] if matches(f, flt)]
        if not fs:
            fail("no finding matches %r" % flt)
        for f in fs:
            bad = [s["command"] for s in f.get("suggestions", []) if lacks in s["command"]]
            if bad:
                fail("%r still suggested: %r" % (lacks, bad))
        if not any(reason in r for f in fs for r in f.get("suggestions_unfit", [])):
            fail("no unfit reason with %r: %r" % (reason, [f.get("suggestions_unfit") for f in fs]))
    else:
        fail("unknown assertion " + what)


if __name__ == "__main__":
    main()
