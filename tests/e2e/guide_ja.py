#!/usr/bin/env python3
"""
The Japanese guides (references/ja/) against their English originals.

usage: guide_ja.py ROOT            every pair: same section ids in the same
                                   order with the same heading levels, and the
                                   same fenced blocks, byte for byte (commands
                                   are never translated); names every Japanese
                                   guide without an English one
       guide_ja.py --section FILE ID   the section's text as the file has it
                                   (heading through the line before the next
                                   heading of its level or above, trailing
                                   blank lines left out)
       guide_ja.py --japanese FILE     exit 0 when FILE holds kana or kanji

Headings and fences are found as the binary's parser finds them: a line
starting with ``` opens or closes a fenced block; "#... ID: Title" outside
one is a section heading.
"""
import glob
import os
import re
import sys

HEADING = re.compile(r"^(#+) ([A-Z]+[0-9]*(?:\.[0-9]+)*(?:\.[a-z])?): ")


def lines_of(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8").split("\n")


def structure(path):
    """(headings [(level, id)], fenced blocks [text]) of one guide."""
    heads, blocks, cur, fence = [], [], None, False
    for line in lines_of(path):
        if line.startswith("```"):
            if fence:
                cur.append(line)
                blocks.append("\n".join(cur))
                cur = None
            else:
                cur = [line]
            fence = not fence
            continue
        if fence:
            cur.append(line)
            continue
        m = HEADING.match(line)
        if m:
            heads.append((len(m.group(1)), m.group(2)))
    if fence:
        raise SystemExit("%s: unclosed fenced block" % path)
    return heads, blocks


def compare(en, ja):
    errs = []
    he, be = structure(en)
    hj, bj = structure(ja)
    ids_e = [i for _, i in he]
    ids_j = [i for _, i in hj]
    for i in ids_e:
        if i not in ids_j:
            errs.append("%s: section %s of %s is missing" % (ja, i, en))
    for i in ids_j:
        if i not in ids_e:
            errs.append("%s: section %s is not in %s" % (ja, i, en))
    if not errs and he != hj:
        for a, b in zip(he, hj):
            if a != b:
                errs.append("%s: heading %s (level %d) where %s has %s (level %d)"
                            % (ja, b[1], b[0], en, a[1], a[0]))
                break
    if len(be) != len(bj):
        errs.append("%s: %d fenced blocks, %s has %d" % (ja, len(bj), en, len(be)))
    for n, (a, b) in enumerate(zip(be, bj)):
        if a != b:
            errs.append("%s: fenced block %d differs from %s's:\n%s\n--- vs ---\n%s"
                        % (ja, n + 1, en, b[:400], a[:400]))
            break
    return errs


def section(path, want):
    out, on, level, fence = [], False, 0, False
    for line in lines_of(path):
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            m = re.match(r"^(#+) ", line)
            if m:
                lvl = len(m.group(1))
                if on and lvl <= level:
                    break
                if not on and line[lvl + 1:].startswith(want + ": "):
                    on, level = True, lvl
        if on:
            out.append(line)
    while out and not out[-1].strip():
        out.pop()
    sys.stdout.write("".join(l + "\n" for l in out))
    return 0 if out else 1


def main(argv):
    if len(argv) == 4 and argv[1] == "--section":
        return section(argv[2], argv[3])
    if len(argv) == 3 and argv[1] == "--japanese":
        with open(argv[2], "rb") as f:
            text = f.read().decode("utf-8")
        return 0 if re.search("[\u3040-\u30ff\u4e00-\u9fff]", text) else 1
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    root = argv[1]
    errs, pairs = [], 0
    for ja in sorted(glob.glob(os.path.join(root, "references", "ja", "*.md"))):
        en = os.path.join(root, "references", os.path.basename(ja))
        if not os.path.exists(en):
            errs.append("%s: no English guide %s" % (ja, en))
            continue
        pairs += 1
        errs += compare(en, ja)
    for e in errs:
        print(e)
    print("%d guide pair(s) compared" % pairs)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
