#!/usr/bin/env python3
"""Every finding text the guide quotes is one hpnode can print.

usage: guide_quotes.py ROOT

Reads the finding texts that references/node-issue-catalog.md lists in its
"hpnode findings" table (first column) and that
references/node-diagnostics-detail.md and references/nccl-diagnostics-detail.md
quote right after the word "hpnode" (hpnode `...`, a quote may wrap within its
paragraph), and looks each one up in the string literals of src/ (C
escapes decoded, adjacent literals and the DASH macro joined, printf
conversions standing for any value). A quote matches when every fixed part
of it (the text between <placeholders>, "…" and printf-like variable parts)
is found in one literal, in order. Prints each quote that matches nothing
and exits 1 when there is one.
"""
import glob
import os
import re
import sys

LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
CONV = re.compile(r"%[-+ #0-9.*]*(?:zu|zd|lu|ld|lld|llu|[sdifuxXcgeE])")
# Parts of a quote that stand for a value: <NAME>, …, and "(or …)" notes.
VARIABLE = re.compile(r"<[^<>]*>|…|\.\.\.")


def decode(lit):
    """A C literal's bytes, as text."""
    out = bytearray()
    i = 0
    while i < len(lit):
        c = lit[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        n = lit[i + 1]
        if n == "x":
            m = re.match(r"[0-9a-fA-F]{1,2}", lit[i + 2:])
            out.append(int(m.group(0), 16))
            i += 2 + len(m.group(0))
        elif n in "01234567":
            m = re.match(r"[0-7]{1,3}", lit[i + 1:])
            out.append(int(m.group(0), 8))
            i += 1 + len(m.group(0))
        else:
            out += {"n": b"\n", "t": b"\t", "\\": b"\\", '"': b'"', "'": b"'"}.get(n, n.encode())
            i += 2
    return out.decode("utf-8", "replace")


def source_strings(root):
    """Every string of src/*.c with adjacent literals (and DASH) joined."""
    texts = []
    for path in glob.glob(os.path.join(root, "src", "**", "*.c"), recursive=True):
        code = open(path, encoding="utf-8", errors="replace").read()
        code = re.sub(r"/\*.*?\*/", " ", code, flags=re.S)
        # Macros that stand for a literal inside a concatenation.
        for name, lit in re.findall(r'#define\s+(\w+)\s+"((?:[^"\\]|\\.)*)"', code):
            code = re.sub(r'"(\s*)\b%s\b(\s*)"' % name, lambda m, lit=lit: lit, code)
        cur = None
        last_end = -1
        for m in LITERAL.finditer(code):
            between = code[last_end:m.start()] if last_end >= 0 else None
            if cur is not None and between is not None and between.strip() == "":
                cur += m.group(1)
            else:
                if cur is not None:
                    texts.append(decode(cur))
                cur = m.group(1)
            last_end = m.end()
        if cur is not None:
            texts.append(decode(cur))
    return [CONV.sub("\x01", t.replace("%%", "\x02")).replace("\x02", "%") for t in texts]


def quotes(root):
    """(file, line, quote) of every finding text the guide attributes to hpnode."""
    out = []
    cat = os.path.join(root, "references", "node-issue-catalog.md")
    on = False
    for no, line in enumerate(open(cat, encoding="utf-8"), 1):
        if line.startswith("## "):
            on = line.strip() == "## 1. hpnode findings"
            continue
        if on and line.startswith("| `"):
            first = line.split("|")[1]
            for q in re.findall(r"`([^`]+)`", first):
                out.append(("node-issue-catalog.md", no, q))
    for name in ("node-diagnostics-detail.md", "nccl-diagnostics-detail.md"):
        det = os.path.join(root, "references", name)
        fence = False
        # Paragraphs, so a quote may wrap onto the next line.
        para, start = [], 0
        lines = list(enumerate(open(det, encoding="utf-8"), 1)) + [(0, "\n")]
        for no, line in lines:
            if line.startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            # The NCCL guide's quotes may wrap within a paragraph; the node guide's are
            # read line by line (as they always were).
            wraps = name.startswith("nccl")
            if wraps and line.strip() and not line.startswith("#") and not line.startswith("|"):
                if not para:
                    start = no
                para.append(line.strip())
                continue
            text = " ".join(para) if wraps else line
            para = []
            if not wraps:
                start = no
            # hpnode `A` (and `B`, `C` in one enumeration after it)
            for m in re.finditer(r"hpnode ((?:`[^`]+`(?:,? (?:or |and )?)?)+)", text):
                for q in re.findall(r"`([^`]+)`", m.group(1)):
                    out.append((name, start, q))
    return out


def fixed_parts(q):
    q = re.sub(r"^\[(FAIL|WARN|INFO|PASS|SKIP)\]\s*", "", q)
    return [p.strip() for p in VARIABLE.split(q) if len(p.strip()) >= 3]


def instance_of(q, texts):
    """The quote reads as a printed instance of a format: its fixed start, then values."""
    q = re.sub(r"^\[(FAIL|WARN|INFO|PASS|SKIP)\]\s*", "", q)
    q = VARIABLE.sub("X", q).strip(" ;:,")
    for t in texts:
        pieces = t.split("\x01")
        # A format with at least 12 fixed characters (a bare "%s %s" proves nothing).
        if len(pieces) < 2 or len("".join(pieces).strip()) < 12:
            continue
        pat = re.escape(pieces[0])
        fixed = len(pieces[0].strip())
        for piece in pieces[1:]:
            # The quote must cover at least 8 fixed characters of the format.
            if fixed >= 8 and re.fullmatch(pat + ".+?", q, re.I | re.S):
                return True
            pat += ".+?" + re.escape(piece)
            fixed += len(piece.strip())
        if fixed >= 8 and re.fullmatch(pat, q, re.I | re.S):
            return True
    return False


def found(parts, texts):
    for t in texts:
        at = 0
        for p in parts:
            i = t.find(p, at)
            if i < 0:
                break
            at = i + len(p)
        else:
            return True
    return False


def main():
    root = sys.argv[1]
    texts = source_strings(root)
    qs = quotes(root)
    bad = [(f, n, q) for f, n, q in qs
           if fixed_parts(q) and not found(fixed_parts(q), texts) and not instance_of(q, texts)]
    for f, n, q in bad:
        print("%s:%d: hpnode never prints `%s`" % (f, n, q))
    print("%d quoted finding texts, %d not printed by hpnode" % (len(qs), len(bad)))
    sys.exit(1 if bad or len(qs) < 20 else 0)


if __name__ == "__main__":
    main()
