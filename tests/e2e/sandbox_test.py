#!/usr/bin/env python3
"""Tests of tests/fixtures/hpfixture/sandbox.py, printed in the e2e format.

usage: sandbox_test.py NAME PROBE_SCRIPT
Prints "ok - NAME: what" or "not ok - NAME: what: why" per test and exits 1
when any failed. PROBE_SCRIPT is the probe as hpnode carries it (`hpnode node --print-probe`).
"""
import os
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))

from hpfixture import sandbox  # noqa: E402
from hpfixture.spec import FixtureError, build  # noqa: E402

NAME = sys.argv[1] if len(sys.argv) > 1 else "sandbox"
if len(sys.argv) != 3:
    sys.exit("usage: sandbox_test.py NAME PROBE_SCRIPT")
PROBE = sys.argv[2]
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def run_in(env, command):
    return subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True,
                          timeout=60, executable=os.path.join(env["PATH"], "sh"))


def rejects(spec, fragment):
    try:
        sandbox.validate(spec)
    except ValueError as exc:
        assert fragment in str(exc), f"message {str(exc)!r} lacks {fragment!r}"
        return
    raise AssertionError(f"accepted {spec!r}")


@test
def validate_accepts_the_documented_shape():
    sandbox.validate({
        "commands": {"nvidia-smi": {"stdout": "x", "stderr": "", "exit": 0, "sleep": 0.5,
                                    "cases": [{"args": "--query-gpu", "stdout": "0, a"}]},
                     "dmesg": None},
        "files": {"/proc/meminfo": "MemTotal: 1 kB\n", "/dev/infiniband/uverbs{0..3}": "",
                  "/sys/class/infiniband/": "", "/etc/gone": None}})
    sandbox.validate(None)
    sandbox.validate({})


@test
def validate_names_what_is_wrong():
    rejects({"command": {}}, "probe: unknown key 'command'")
    rejects({"commands": {"x": {"exit": 300}}}, "probe.commands.x.exit")
    rejects({"commands": {"x": {"exit": True}}}, "probe.commands.x.exit")
    rejects({"commands": {"x": {"stdout": 3}}}, "probe.commands.x.stdout: expected a string")
    rejects({"commands": {"x": {"sleep": 99}}}, "probe.commands.x.sleep")
    rejects({"commands": {"x": {"cases": [{"stdout": "a"}]}}}, "probe.commands.x.cases[0].args")
    rejects({"commands": {"x": {"cases": [{"args": "a", "bogus": 1}]}}}, "unknown key 'bogus'")
    rejects({"commands": {"a/b": {}}}, "'a/b' is not a command name")
    rejects({"commands": ["x"]}, "probe.commands: expected a mapping")
    rejects({"files": {"proc/meminfo": "x"}}, "not an absolute path")
    rejects({"files": {"/proc/../etc/passwd": "x"}}, "plain absolute path")
    rejects({"files": {"/a": 1}}, "expected a string")
    rejects({"files": {"/d/": "text"}}, "a directory (trailing /) takes an empty string")
    rejects({"files": {"/dev/uverbs{5..2}": ""}}, "must go up")


@test
def spec_files_refuse_bad_probe_data():
    base = {"cluster": {"name": "c"}, "instance_groups": [{"name": "g", "type": "ml.m5.large"}]}
    build(dict(base, nodes=[{"group": "g", "probe": {"files": {"/x": ""}}}],
               probe_defaults={"commands": {"dmesg": {"stdout": ""}}}))
    for bad, fragment in (({"nodes": [{"group": "g", "probe": {"comands": {}}}]}, "nodes[0].probe"),
                          ({"probe_defaults": {"files": {"x": ""}}}, "probe_defaults.files.x")):
        try:
            build(dict(base, **bad))
        except FixtureError as exc:
            assert fragment in str(exc), str(exc)
            continue
        raise AssertionError(f"accepted {bad!r}")


@test
def merge_lets_the_node_win_and_remove():
    defaults = {"commands": {"dmesg": {"stdout": "a"}, "chronyc": {"stdout": "c"}},
                "files": {"/proc/meminfo": "m", "/etc/environment": "e"}}
    node = {"commands": {"dmesg": {"stdout": "b"}, "chronyc": None},
            "files": {"/etc/environment": None, "/proc/uptime": "1 1"}}
    merged = sandbox.merge(defaults, node)
    assert merged["commands"] == {"dmesg": {"stdout": "b"}}, merged
    assert merged["files"] == {"/proc/meminfo": "m", "/proc/uptime": "1 1"}, merged
    assert defaults["commands"]["chronyc"] == {"stdout": "c"}, "defaults were changed"
    assert sandbox.merge(None, None) == {"commands": {}, "files": {}}


@test
def stand_ins_answer_as_told():
    spec = {"commands": {
        "fake-tool": {"stdout": "default out\n", "stderr": "default err\n", "exit": 3,
                      "cases": [{"args": "--mode b", "stdout": "it's b\n", "exit": 0},
                                {"args": "--mode", "stdout": "some mode\n", "exit": 7}]}}}
    with tempfile.TemporaryDirectory() as tmp:
        env = sandbox.prepare(spec, tmp)
        r = run_in(env, "fake-tool")
        assert (r.stdout, r.stderr, r.returncode) == ("default out\n", "default err\n", 3), r
        r = run_in(env, "fake-tool --mode b --x")
        assert (r.stdout, r.returncode) == ("it's b\n", 0), r
        r = run_in(env, "fake-tool --mode c")
        assert (r.stdout, r.returncode) == ("some mode\n", 7), r


@test
def stand_ins_print_exactly_what_they_hold():
    """Quotes, backslashes, printf directives, no final newline, and a NUL (which
    sh's printf cannot hold: that answer is a file) come out byte for byte."""
    tricky = "it's 100% \\n not a newline %s\n'\"$HOME`x`\nlast line without newline"
    spec = {"commands": {"plain": {"stdout": tricky, "stderr": "warn: 50%\n"},
                         "nul": {"stdout": "a\0b\n", "stderr": "e\0\n", "exit": 2},
                         "quiet": {"exit": 4}}}
    with tempfile.TemporaryDirectory() as tmp:
        env = sandbox.prepare(spec, tmp)
        for name, out, err, code in (("plain", tricky, "warn: 50%\n", 0),
                                     ("nul", "a\0b\n", "e\0\n", 2), ("quiet", "", "", 4)):
            r = subprocess.run([os.path.join(env["PATH"], "sh"), "-c", name], env=env,
                               capture_output=True, timeout=30)
            got = (r.stdout.decode(), r.stderr.decode(), r.returncode)
            assert got == (out, err, code), (name, got)
        with open(os.path.join(env["PATH"], "plain"), encoding="utf-8") as fh:
            assert "cat" not in fh.read().split("\n", 2)[2], "plain text is printed by sh itself"


@test
def absent_commands_are_absent():
    with tempfile.TemporaryDirectory() as tmp:
        env = sandbox.prepare({"commands": {"dmesg": {"stdout": "x"}}}, tmp)
        assert env["PATH"] == os.path.join(tmp, "bin"), env
        assert set(env) == {"PATH", "HPNODE_PROBE_ROOT", "HOME", "LANG"}, env
        for tool in ("nvidia-smi", "systemctl", "chronyc", "journalctl", "python3", "df"):
            r = run_in(env, f"command -v {tool}")
            assert r.returncode != 0, f"{tool} is visible: {r.stdout}"
        for tool in ("cat", "head", "grep", "timeout", "date", "dmesg"):
            r = run_in(env, f"command -v {tool}")
            assert r.returncode == 0, f"{tool} is missing"


@test
def files_land_under_the_probe_root():
    spec = {"files": {"/proc/meminfo": "MemTotal: 8 kB\n", "/dev/infiniband/uverbs{0..2}": "",
                      "/sys/class/infiniband/rdmap{0..1}s0/ports/1/state": "4: ACTIVE\n",
                      "/sys/bus/pci/devices/": ""}}
    with tempfile.TemporaryDirectory() as tmp:
        env = sandbox.prepare(spec, tmp)
        root = env["HPNODE_PROBE_ROOT"]
        with open(os.path.join(root, "proc/meminfo")) as fh:
            assert fh.read() == "MemTotal: 8 kB\n"
        assert sorted(os.listdir(os.path.join(root, "dev/infiniband"))) == \
            ["uverbs0", "uverbs1", "uverbs2"]
        assert os.path.isdir(os.path.join(root, "sys/bus/pci/devices"))
        assert os.path.isfile(os.path.join(root, "sys/class/infiniband/rdmap1s0/ports/1/state"))


@test
def the_probe_reads_only_the_sandbox():
    spec = {"commands": {
        "df": {"cases": [{"args": "-i", "stdout": "Filesystem Inodes IUsed IFree IUse% Mounted on\n"
                                                  "/dev/x 100 93 7 93% /\n"}],
               "stdout": "Filesystem 1024-blocks Used Available Capacity Mounted on\n"
                         "/dev/x 100 93 7 93% /\n"},
        "dmesg": {"stdout": "2026-11-29T20:12:47,883012+00:00 NVRM: Xid (PCI:0000:a8:00): 79, "
                            "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"},
        "nvidia-smi": {"stdout": "", "stderr": "no GPU here\n", "exit": 6}},
        "files": {"/proc/meminfo": "MemTotal: 8 kB\n", "/proc/sys/kernel/hostname": "node-a\n",
                  "/dev/infiniband/uverbs{0..3}": ""}}
    with open(PROBE, encoding="utf-8") as fh:
        script = fh.read()
    with tempfile.TemporaryDirectory() as tmp:
        env = sandbox.prepare(spec, tmp)
        r = subprocess.run([os.path.join(env["PATH"], "sh"), "-c", script], env=env,
                           capture_output=True, text=True, timeout=60)
    out = r.stdout
    assert r.returncode == 0, r
    assert out.rstrip().endswith("@@HP@@ DONE"), out[-300:]
    assert "hostname=node-a" in out, "hostname not from the sandbox"
    assert "/dev/x 100 93 7 93% /" in out
    assert "Mounted on\n/dev/x 100 93 7 93% /\n@@HP@@ END df_inodes 0" in out.replace(
        "Filesystem Inodes IUsed IFree IUse% ", ""), out
    assert "GPU has fallen off the bus" in out
    assert "@@HP@@ END nvidia_gpu 6" in out and "no GPU here" in out
    # Not listed, so not installed: no leak from the machine running the test.
    for block in ("systemd", "chrony", "timedatectl", "neuron", "fi_info", "dcgm", "imds"):
        assert f"@@HP@@ END {block} 127" in out, f"{block} was not absent"
    assert "uverbs3" in out
    assert "MemTotal: 8 kB" in out


@test
def a_node_answers_to_its_own_name():
    class Node:
        dns_name = "ip-10-1-7-21.us-west-2.compute.internal"
        private_ip = "10.1.7.21"
    name = sandbox.node_name(Node())
    assert name == "ip-10-1-7-21", name
    spec = sandbox.merge(sandbox.identity(name), {"files": {"/proc/meminfo": "MemTotal: 8 kB\n"}})
    with tempfile.TemporaryDirectory() as tmp:
        env = sandbox.prepare(spec, tmp)
        r = run_in(env, "hostname; uname -n; uname -r; uname -a; uname; "
                        "cat \"$HPNODE_PROBE_ROOT/proc/sys/kernel/hostname\"")
    lines = r.stdout.splitlines()
    assert r.returncode == 0, r
    assert lines[0] == lines[1] == lines[5] == "ip-10-1-7-21", lines
    assert lines[2] == sandbox.KERNEL, lines
    assert lines[3].startswith("Linux ip-10-1-7-21 " + sandbox.KERNEL), lines
    assert lines[4] == "Linux", lines
    # A node's own probe may name itself differently.
    spec = sandbox.merge(sandbox.identity(name), {"commands": {"hostname": {"stdout": "other\n"}}})
    with tempfile.TemporaryDirectory() as tmp:
        env = sandbox.prepare(spec, tmp)
        assert run_in(env, "hostname").stdout == "other\n"
    assert sandbox.identity(None) == {"commands": {}, "files": {}}


@test
def fixture_nodes_carry_their_names():
    fx = build({"cluster": {"name": "c"}, "instance_groups": [{"name": "g", "type": "ml.m5.xlarge"}],
                "nodes": [{"group": "g"}, {"group": "g"}]})
    names = set()
    for node in fx.nodes:
        spec = fx.probe_spec(node)
        names.add(spec["files"]["/proc/sys/kernel/hostname"])
        assert spec["commands"]["hostname"]["stdout"] == spec["files"]["/proc/sys/kernel/hostname"]
    assert len(names) == 2, names


def main():
    failed = 0
    for fn in TESTS:
        what = fn.__name__.replace("_", " ")
        try:
            fn()
            print(f"ok - {NAME}: {what}")
        except Exception as exc:  # report every kind of failure as a test result
            failed = 1
            why = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            print(f"not ok - {NAME}: {what}: {why}".replace("\n", " | "))
    sys.exit(failed)


main()
