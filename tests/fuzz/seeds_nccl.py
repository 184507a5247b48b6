#!/usr/bin/env python3
"""Writes the seed corpus of the NCCL fuzz target (tests/fuzz/corpus/nccl/seed-*)
and its dictionary (tests/fuzz/nccl.dict) from the NCCL test data: the tool
outputs and logs in tests/data/nccl and the block and line literals of
tests/unit/test-nccl-facts.c and tests/unit/test-nccl-patterns.c. Run from
the repository root; seed files are rewritten, other inputs are kept.

Input layout of fuzz-nccl: probe stdout, NUL, log text, NUL, source name."""
import glob
import os
import re

from seeds import LIT, OUT, ROOT, RUN, c_unescape, h, literals, read, write

# Data files that are the content of one probe block (tests/unit/test-nccl-facts.c).
BLOCK_FILES = {
    "topo-h100-nics.txt": ("topo", 0), "topo-h100.txt": ("topo", 0),
    "topo-h100-lost-nvlink.txt": ("topo", 0), "topo-pcie-4090.txt": ("topo", 0),
    "efa-installed-packages.txt": ("efa_installer", 0), "fi-info-version.txt": ("libfabric", 0),
    "fi-info-tcp.txt": ("fi_tcp", 0), "lspci-acs.txt": ("acs", 0), "lspci-notroot.txt": ("acs", 0),
    "iptables-save-eks.txt": ("firewall", 0), "iptables-save-notroot.txt": ("firewall", 1),
    "nft-ruleset.txt": ("firewall_nft", 0),
}


def frame(name, rc, text):
    if text and not text.endswith("\n"):
        text += "\n"
    return "@@HP@@ BEGIN %s\n%s@@HP@@ END %s %d\n" % (name, text, name, rc)


def data(name):
    return read("tests/data/nccl/" + name).decode("utf-8", "surrogateescape")


def unit_blocks():
    """(block, rc, text) of every one()/block() call with literal text in test-nccl-facts.c."""
    src = read("tests/unit/test-nccl-facts.c").decode("utf-8", "surrogateescape")
    call = re.compile(r'\b(?:one|block)\(\s*(?:&b,\s*)?"([a-z_]+)",\s*(-?\d+),\s*(%s)' % RUN.pattern,
                      re.S)
    for m in call.finditer(src):
        text = "".join(c_unescape(x[1:-1]) for x in re.findall(LIT, m.group(3)))
        yield m.group(1), int(m.group(2)), text


def corpus():
    header = frame("nccl", 0, "probe=nccl\nepoch=1795989600\nuid=0\n")
    everything = [header]
    for name, (block, rc) in sorted(BLOCK_FILES.items()):
        b = frame(block, rc, data(name))
        everything.append(b)
        write("nccl", "%s-%s" % (block, name[:-4]), header + b + "@@HP@@ DONE\n")
    for block, rc, text in unit_blocks():
        b = frame(block, rc, text)
        everything.append(b)
        write("nccl", "unit-%s-%s" % (block, h(b)), header + b + "@@HP@@ DONE\n")
    write("nccl", "all-blocks", "".join(everything) + "@@HP@@ DONE\n")
    write("nccl", "all-blocks-truncated", "".join(everything)[:6000])
    write("nccl", "dev-machine", data("probe-dev-machine.txt"))

    logs = [n for n in sorted(os.listdir(os.path.join(ROOT, "tests/data/nccl"))) if n.startswith("log-")]
    for n in logs:
        write("nccl", n[:-4], header + "@@HP@@ DONE\n\0" + data(n) + "\0training/llama-worker-0/pytorch")
    for s in literals("tests/unit/test-nccl-patterns.c"):
        if len(s) > 12 and ("NCCL" in s or "NET/" in s or "\n" in s):
            write("nccl", "line-" + h(s), "\0" + s + "\0ns/p/c")
    # Long, invalid UTF-8 and escape-laden lines against the clip and the cleaner.
    write("nccl", "dirty-line", "\0" + "\x1b[31mNCCL WARN \xff\xfe" + "x" * 200 +
          "\tunhandled system error\r\n" + "\0\x1b]0;src\x07")


def dictionary():
    words = ['"@@HP@@ BEGIN "', '"@@HP@@ END "', '"@@HP@@ DONE"', '"\\x1b["', '"\\x0d\\x0a"']
    script = read("src/collect/probe/nccl-probe.sh").decode()
    words += ['"%s"' % b for b in sorted(set(re.findall(r"^\s*(?:block|cmd|absent)\s+([a-z_]+)", script, re.M)))]
    for f in sorted(glob.glob(os.path.join(ROOT, "src/core/facts/nccl-*.c"))):
        src = read(os.path.relpath(f, ROOT)).decode()
        for m in re.finditer(r'(?:starts|has|word|prefix|strstr|strncmp|strcmp)\w*\([^"()]*"((?:[^"\\\n]|\\.){2,40})"', src):
            words.append('"%s"' % m.group(1))
    src = read("src/core/nccl-patterns.c").decode()
    table = src[src.find("hp_nccl_patterns[]"):]
    for m in re.finditer(r'\{\s*"((?:[^"\\\n]|\\.){4,80})"', table):
        words.append('"%s"' % m.group(1))
    seen, out = set(), []
    for w in words:
        if w not in seen:
            seen.add(w)
            out.append(w)
    with open(os.path.join(ROOT, "tests/fuzz/nccl.dict"), "w") as f:
        f.write("# NCCL probe framing, block names, decoder tokens and log patterns "
                "(tests/fuzz/seeds_nccl.py)\n")
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    os.makedirs(os.path.join(OUT, "nccl"), exist_ok=True)
    corpus()
    dictionary()
