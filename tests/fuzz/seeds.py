#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/NAME/seed-*)
from the project's test data: the probe samples in tests/data/probe, the
snapshots in tests/data/snapshots, and the canned replies and inputs of the
unit tests (C string literals in tests/unit/*.c). Run from the repository
root; files are rewritten, inputs added by fuzzing (other names) are kept.

Multi-part inputs separate their parts with a NUL byte (see each target)."""
import hashlib
import json
import os
import re
import struct
import sys

ROOT = os.getcwd()
OUT = os.path.join(ROOT, "tests/fuzz/corpus")


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def read(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return f.read()


# ---------------------------------------------------------------- C literals

ESC = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0", "a": "\a",
       "e": "\x1b"}


def c_unescape(s):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = s[i + 1]
        if n == "x":
            m = re.match(r"[0-9a-fA-F]+", s[i + 2:])
            out.append(chr(int(m.group(0), 16) & 0xff))
            i += 2 + len(m.group(0))
        elif n in "01234567":
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            out.append(chr(int(m.group(0), 8)))
            i += 1 + len(m.group(0))
        else:
            out.append(ESC.get(n, n))
            i += 2
    return "".join(out)


LIT = r'"(?:[^"\\\n]|\\.)*"'
# Adjacent literals (with comments, macro names and whitespace between) form one string.
RUN = re.compile(r"(?:%s)(?:(?:\s|/\*.*?\*/|//[^\n]*)*(?:%s|[A-Z][A-Z0-9_]*(?=\s*\")))*" % (LIT, LIT),
                 re.S)


def macros(src):
    m = {}
    for name, val in re.findall(r'#define\s+([A-Z][A-Z0-9_]*)\s+((?:%s\s*)+)\n' % LIT, src):
        m[name] = "".join(c_unescape(x[1:-1]) for x in re.findall(LIT, val))
    return m


def literals(path):
    """Every run of adjacent string literals in a C file, decoded."""
    src = read(path).decode("utf-8", "surrogateescape")
    mac = macros(src)
    out = []
    for m in RUN.finditer(src):
        parts = re.findall(r"%s|/\*.*?\*/|//[^\n]*|[A-Z][A-Z0-9_]*" % LIT, m.group(0), flags=re.S)
        s = ""
        for p in parts:
            if p.startswith("/"):
                continue
            if p.startswith('"'):
                s += c_unescape(p[1:-1])
            else:
                s += mac.get(p, "")
        out.append(s)
    return out


def named_literals(path):
    """static const char NAME[] = "..." definitions."""
    src = read(path).decode("utf-8", "surrogateescape")
    res = {}
    for m in re.finditer(r"static const char (\w+)\[\]\s*=\s*", src):
        run = RUN.match(src, m.end())
        if run:
            parts = [t for t in re.findall(r"%s|/\*.*?\*/" % LIT, run.group(0), flags=re.S) if t.startswith('"')]
            res[m.group(1)] = "".join(c_unescape(p[1:-1]) for p in parts)
    return res


def h(data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    return hashlib.sha1(data).hexdigest()[:10]


# ---------------------------------------------------------------- targets

def probe():
    tp = read("tests/unit/test-probe.c").decode()
    blocks = set()
    all_blocks = []
    for block, rc, name in re.findall(r'(?:pt_block_file\(&out, |one_block\(|kmsg_of\()"(\w+)", (-?\d+), "([\w.-]+)"\)', tp):
        blocks.add((block, int(rc), name))
    for block, rc, name in sorted(blocks):
        text = read("tests/data/probe/" + name).decode("utf-8", "surrogateescape")
        body = "@@HP@@ BEGIN %s\n%s%s" % (block, text, "" if text.endswith("\n") else "\n")
        if rc >= 0:
            body += "@@HP@@ END %s %d\n" % (block, rc)
        all_blocks.append(body)
        write("probe", "%s-%s" % (block, name.replace(".txt", "").replace(".json", "")),
              "@@HP@@ BEGIN node\nprobe=1\nepoch=1795989600\nuptime=36000.00 1000.0\n"
              "@@HP@@ END node 0\n" + body + "@@HP@@ DONE\n")
    write("probe", "debian-vm", read("tests/data/probe/probe-debian-vm.txt"))
    write("probe", "all-blocks", "".join(all_blocks) + "@@HP@@ DONE\n\0some stderr\n")
    for s in literals("tests/unit/test-probe.c"):
        if "@@HP@@" in s:
            write("probe", "unit-" + h(s), s)


def slurm():
    for s in literals("tests/unit/test-slurm.c"):
        if "@@HP@@" in s:
            write("slurm", "unit-" + h(s), s)
    for s in literals("tests/unit/test-checks-slurm.c") if os.path.exists("tests/unit/test-checks-slurm.c") else []:
        if "@@HP@@" in s:
            write("slurm", "checks-" + h(s), s)


def snapshot():
    for name in sorted(os.listdir("tests/data/snapshots")):
        write("snapshot", name, read("tests/data/snapshots/" + name))
    for s in literals("tests/unit/test-snapshot.c"):
        if s.lstrip().startswith("{") and len(s) > 20:
            write("snapshot", "unit-" + h(s), s)


def replies(path):
    """Per test function, the bodies it queues with fake_reply, in order."""
    src = read(path).decode("utf-8", "surrogateescape")
    names = named_literals(path)
    seqs = []
    helpers = {}
    for fn in re.split(r"\n(?=static void )", src):
        seq = []
        head = re.match(r"static void (\w+)", fn)
        for m in re.finditer(r"fake_reply\(&?\w+(?:\.f)?, (\d+), [^,]+, |\b(\w+)\(\);", fn):
            if m.group(2):
                seq.extend(helpers.get(m.group(2), []))
                continue
            rest = fn[m.end():]
            run = RUN.match(rest)
            if run:
                parts = [t for t in re.findall(r"%s|/\*.*?\*/" % LIT, run.group(0), flags=re.S) if t.startswith('"')]
                body = "".join(c_unescape(p[1:-1]) for p in parts)
            else:
                ident = re.match(r"(\w+)", rest)
                body = names.get(ident.group(1), "") if ident else ""
            st = int(m.group(1))
            seq.append(body if st == 200 else "@%d %s" % (st, body))
        if head and not head.group(1).startswith("t_"):
            helpers[head.group(1)] = seq
        elif seq:
            seqs.append(seq)
    return seqs


def collect():
    full = replies("tests/unit/test-collect.c")[0]
    for path in ("tests/unit/test-collect.c", "tests/unit/test-aws-client.c"):
        for seq in replies(path):
            for opts in ("cluster", "node net"):
                data = opts + "\0" + "\0".join(seq)
                write("collect", h(data), data)
    # The network collector runs after a complete cluster collection.
    for seq in replies("tests/unit/test-collect-network.c"):
        data = "net\0" + "\0".join(full + seq)
        write("collect", h(data), data)


def reply_bodies(first):
    """Each distinct reply body of the client and collector unit tests whose
    first character (after blanks) is one of first."""
    seen = set()
    for path in ("tests/unit/test-collect.c", "tests/unit/test-collect-network.c",
                 "tests/unit/test-aws-client.c"):
        for seq in replies(path):
            for body in seq:
                body = re.sub(r"^@\d+ ", "", body)
                lead = body.lstrip()[:1]
                if lead and lead in first and body not in seen:
                    seen.add(body)
                    yield body


def xml():
    for body in reply_bodies("<"):
        write("xml", h(body), body)


def creds():
    srcs = literals("tests/unit/test-creds.c") + literals("tests/unit/test-profile.c")
    configs = [s for s in srcs if s.startswith("[")]
    procs = [s for s in srcs if s.lstrip().startswith("{")]
    for i, c in enumerate(configs):
        proc = procs[i % len(procs)] if procs else ""
        # config, NUL, credentials, NUL, credential_process stdout, NUL, flags
        for flags in ("", "p"):
            data = c + "\0" + configs[(i + 1) % len(configs)] + "\0" + proc + "\0" + flags
            write("creds", h(data), data)


def kube():
    path = "tests/unit/test-collect-kube.c"
    lits = named_literals(path)
    src_lits = literals(path)
    cfg = [s for s in src_lits if "current-context" in s]
    ns = [s for s in src_lits if '"name":"default"' in s]
    ds = [s for s in src_lits if "desiredNumberScheduled" in s]
    # config view, namespaces, nodes, daemonsets, pods, events, logs (NUL-separated)
    base = [cfg[0] if cfg else "{}", ns[0] if ns else '{"items":[]}', lits.get("nodes_json", "{}"),
            ds[0] if ds else '{"items":[]}', lits.get("pods_json", "{}"),
            '{"items":[{"metadata":{"namespace":"kube-system","name":"e1"},"involvedObject":'
            '{"kind":"Pod","name":"p1"},"reason":"FailedCreatePodSandBox","type":"Warning",'
            '"message":"failed to assign an IP address to container","count":3,'
            '"lastTimestamp":"2026-11-30T10:00:00Z","source":{"host":"n1"}}]}',
            "line 1\nipamd: failed\n"]
    write("kube", "full", "\0".join(base))
    write("kube", "forbidden", "\0".join(base[:1] + ["!1 Error from server (Forbidden): x"] + base[2:]))
    for s in src_lits:
        if s.startswith("{\"items\"") or "current-context" in s:
            data = "\0".join(base[:1] + [s] * 6)
            write("kube", "unit-" + h(data), data)


# ---------------------------------------------------------------- SSM

def ssm_msg(mtype, seq, ptype, payload, flags=0, created=1795989600000, mid=None):
    if isinstance(payload, str):
        payload = payload.encode()
    mid = mid or bytes(range(16))
    hdr = struct.pack(">I", 116) + mtype.encode().ljust(32, b" ") + struct.pack(">I", 1)
    hdr += struct.pack(">Q", created) + struct.pack(">q", seq) + struct.pack(">Q", flags)
    hdr += mid[8:] + mid[:8]
    hdr += hashlib.sha256(payload).digest() + struct.pack(">I", ptype)
    return hdr + struct.pack(">I", len(payload)) + payload


def ws_frame(op, payload, fin=True):
    b = bytes([(0x80 if fin else 0) | op])
    n = len(payload)
    if n < 126:
        b += bytes([n])
    elif n < 65536:
        b += bytes([126]) + struct.pack(">H", n)
    else:
        b += bytes([127]) + struct.pack(">Q", n)
    return b + payload


def ssm():
    hs = json.dumps({"AgentVersion": "3.3.1142.0", "RequestedClientActions": [
        {"ActionType": "SessionType", "ActionParameters": {"SessionType": "InteractiveCommands",
                                                           "Properties": {}}}]})
    msgs = [ssm_msg("output_stream_data", 0, 5, hs),
            ssm_msg("output_stream_data", 1, 7, json.dumps({"HandshakeTimeToComplete": 1000000,
                                                           "CustomerMessage": ""})),
            ssm_msg("output_stream_data", 2, 1, "@@HP@@ BEGIN node\nprobe=1\n@@HP@@ END node 0\n"),
            ssm_msg("output_stream_data", 4, 11, "warning: something\n"),
            ssm_msg("output_stream_data", 3, 1, "@@HP@@ DONE\n"),
            ssm_msg("output_stream_data", 3, 1, "@@HP@@ DONE\n"),
            ssm_msg("acknowledge", 0, 0, json.dumps({"AcknowledgedMessageType": "input_stream_data",
                                                    "AcknowledgedMessageId": "x",
                                                    "AcknowledgedMessageSequenceNumber": 0,
                                                    "IsSequentialMessage": True})),
            ssm_msg("output_stream_data", 5, 12, "EXIT_CODE: 0"),
            ssm_msg("channel_closed", 6, 0, json.dumps({"MessageId": "m", "CreatedDate": "x",
                                                        "DestinationId": "d", "SessionId": "s",
                                                        "MessageType": "channel_closed",
                                                        "SchemaVersion": 1, "Output": "done"}))]
    frames = [ws_frame(2, m) for m in msgs]
    # ws: a stream of server frames (fragments, ping, close included)
    write("ws", "session", b"".join(frames))
    write("ws", "fragments", ws_frame(2, msgs[2][:50], fin=False) + ws_frame(9, b"hi") +
          ws_frame(0, msgs[2][50:]) + ws_frame(8, b"\x03\xe8bye"))
    for i, m in enumerate(msgs):
        write("ws", "msg-%d" % i, ws_frame(2, m))
    # session: the frames the agent sends after the upgrade (the harness answers the upgrade)
    write("session", "probe", b"".join(frames))
    write("session", "kms", ws_frame(2, ssm_msg("output_stream_data", 0, 5, json.dumps(
        {"AgentVersion": "3.3.1142.0", "RequestedClientActions": [
            {"ActionType": "KMSEncryption", "ActionParameters": {"KMSKeyId": "k"}}]}))))
    write("session", "reordered", b"".join(frames[i] for i in (0, 1, 3, 2, 4, 7, 8)))


def dicts():
    """libFuzzer dictionaries: the JSON member names the collectors and checks
    read (snapshot, collect), the probe framing and block names (probe, slurm)."""
    import glob
    keys = set()
    for f in sorted(glob.glob("src/checks/*.c") + glob.glob("src/collect/*.c") +
                    glob.glob("src/report/*.c") + ["src/core/snapshot.c"]):
        src = read(f).decode()
        for m in re.finditer(r'hp_json_\w+\([^,]+,\s*"([^"]+)"', src):
            keys.update(m.group(1).split("."))
        for m in re.finditer(r'GetObjectItem\w*\([^,]+,\s*"([^"]+)"', src):
            keys.add(m.group(1))
    words = ['"\\"%s\\":"' % k for k in sorted(keys) if re.match(r"^[\w./-]+$", k)]
    words += ['"Running"', '"InService"', '"probed"', '"unreachable"', '"true"', '"null"',
              '"\\"version\\":1"']
    for t in ("snapshot", "collect"):
        with open(os.path.join(ROOT, "tests/fuzz/%s.dict" % t), "w") as f:
            f.write("# JSON member names read by the collectors and checks (tests/fuzz/seeds.py)\n")
            f.write("\n".join(words) + "\n")
    probe_src = read("src/collect/probe/probe.sh").decode() + read("src/collect/slurm/slurm-probe.sh").decode()
    blocks = sorted(set(re.findall(r"(?:hp_block|block|BEGIN)\s+([a-z_]+)", probe_src)))
    words = ['"@@HP@@ BEGIN "', '"@@HP@@ END "', '"@@HP@@ DONE"', '"\\x1b["', '"\\x0d\\x0a"']
    words += ['"%s"' % b for b in blocks]
    for t in ("probe", "slurm"):
        with open(os.path.join(ROOT, "tests/fuzz/%s.dict" % t), "w") as f:
            f.write("# probe framing and block names (tests/fuzz/seeds.py)\n")
            f.write("\n".join(words) + "\n")


def json_seeds():
    """JSON as AWS and hpnode write it: the unit tests' JSON replies, the
    golden JSON reports and snapshots (when small), and the grammar's edges."""
    import glob
    for body in reply_bodies("{["):
        write("json", h(body), body)
    for f in sorted(glob.glob("tests/data/golden/*.json")):
        data = read(f)
        if len(data) <= 64 << 10:
            write("json", os.path.basename(f).replace(".", "-"), data)
    edges = ['{"a":"\\u00e9\\u20ac\\ud83d\\ude00","b":"x\\u0000y","\\n":"\\"\\\\\\/\\b\\f\\r\\t"}',
             '[0,-0,1.5e3,-2E-2,2147483647,2147483648,-2147483649,1e400,123456789012345678901234567890]',
             '[true,false,null,{},[],"",{"":""},{"k":1,"k":2}]', ' \t\r\n[ 1 , 2 ] \n', '"tail" x',
             '[' * 40 + ']' * 40, '{"a":[{"b":[{"c":"d"}]}]}', '"\\ud800"', '"\\udc00"', '01',
             '[1,]', '{"a" 1}', '"\\x"', '\ufeff{}']
    for i, e in enumerate(edges):
        write("json", "edge-%d" % i, e)


TARGETS = {"dicts": dicts, "probe": probe, "slurm": slurm, "snapshot": snapshot, "collect": collect, "xml": xml,
           "creds": creds, "kube": kube, "ssm": ssm, "json": json_seeds}

if __name__ == "__main__":
    for name in sys.argv[1:] or TARGETS:
        TARGETS[name]()
