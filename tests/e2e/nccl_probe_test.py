#!/usr/bin/env python3
"""The on-node NCCL probe (src/collect/probe/nccl-probe.sh) run in fixture
node sandboxes (hpfixture/sandbox.py): nothing but the node's own commands
and files, a real shell. Prints "ok - NAME: what" / "not ok - NAME: what: why"
per test and exits 1 when any failed.

usage: nccl_probe_test.py NAME FIXTURE.yaml PROBE.sh NCCL_FACTS
NCCL_FACTS is tests/bin/nccl-facts (the decoders, as a filter to JSON).
"""
import copy
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))

from hpfixture import sandbox  # noqa: E402
from hpfixture.spec import load, resolve_node  # noqa: E402

NAME, FIXTURE, PROBE, FACTS = sys.argv[1:5]
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


FX = load(FIXTURE)


def node_spec(fx, node):
    """The node's name, under probe_defaults, under its own probe (as probe_nodes.py does)."""
    base = sandbox.merge(sandbox.identity(sandbox.node_name(node)), fx.probe_defaults)
    return sandbox.merge(base, node.probe)


def spec_of(alias, change=None):
    spec = copy.deepcopy(node_spec(FX, resolve_node(FX, alias, alias)))
    if change:
        change(spec)
    return spec


def tree_digest(root):
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        h.update(dirpath.encode())
        for f in sorted(filenames):
            p = os.path.join(dirpath, f)
            st = os.lstat(p)
            h.update(f"{p} {st.st_mode} {st.st_size}".encode())
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as fh:
                    h.update(fh.read())
    return h.hexdigest()


def run(spec, timeout=60):
    """(raw output, facts, seconds, root unchanged) of the probe in spec's sandbox."""
    with tempfile.TemporaryDirectory(prefix="hpnode-nccl-") as tmp:
        env = sandbox.prepare(spec, tmp)
        before = tree_digest(tmp)
        with open(PROBE, encoding="utf-8") as fh:
            script = fh.read()
        start = time.monotonic()
        r = subprocess.run([os.path.join(env["PATH"], "sh"), "-c", script], env=env,
                           capture_output=True, timeout=timeout)
        took = time.monotonic() - start
        unchanged = tree_digest(tmp) == before
    facts = subprocess.run([FACTS], input=r.stdout, capture_output=True, timeout=30)
    assert facts.returncode == 0, facts.stderr
    return r.stdout.decode("utf-8", "replace"), json.loads(facts.stdout), took, unchanged


def get(d, path):
    for part in path.split("."):
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return d


def expect(facts, **want):
    for path, value in want.items():
        path = path.replace("__", ".")
        got = get(facts, path)
        assert got == value, f"{path} is {got!r}, expected {value!r}"


@test
def healthy_p5_node():
    out, f, _, unchanged = run(spec_of("p5-a"))
    assert unchanged, "the probe changed the node's files"
    assert out.rstrip("\n").endswith("@@HP@@ DONE"), out[-200:]
    expect(f, probe__truncated=False, probe__root=True, topo__gpus=8, topo__nvlink_pairs=28,
           topo__pcie_pairs=0, acs__readable=True, acs__enabled=0, peermem__loaded=True,
           efa_installer__version="1.34.0", efa_installer__libfabric="1.22.0",
           ofi_plugin__found=True, libfabric__version="1.22.0", fi_tcp__providers=1,
           nccl_lib__version="2.21.5", nccl_lib__cuda="12.4", nccl_header__version="2.21.5",
           limits__memlock_soft="unlimited", procs__count=1, procs__training=1,
           logind__remove_ipc=False, shm__nccl_segments=0, numa__nodes=2,
           firewall__blocking=0, firewall__cni_blocking=1)
    proc = f["procs"]["list"][0]
    assert proc["memlock_soft"] == 8589934592, proc
    assert proc["env"]["FI_PROVIDER"] == "efa", proc
    assert proc["cmd"] == "/opt/conda/bin/python3 /opt/conda/bin/torchrun --nnodes 4 train.py", proc
    mtus = {i["name"]: i.get("mtu") for i in f["netif"]["interfaces"]}
    assert mtus == {"enp71s0": 9001, "docker0": 1500}, mtus


@test
def secrets_in_process_environments_never_leave_the_node():
    out, f, _, _ = run(spec_of("p5-a"))
    assert "do-not-print" not in out and "AWS_SECRET" not in out, "a secret was printed"
    assert "HOME=" not in out, "an unrelated variable was printed"


@test
def broken_p5_node():
    out, f, _, unchanged = run(spec_of("p5-d"))
    assert unchanged
    expect(f, ofi_plugin__found=False, procs__count=0, procs__training=0,
           shm__nccl_segments=3, logind__remove_ipc=True, logind__source="default")
    assert sorted(f["shm"]["names"]) == ["nccl-Qm81rT", "nccl-Xk3Pq1", "nccl-f2Lz9A"], f["shm"]


@test
def a_cpu_node_reports_unknowns_not_health():
    out, f, _, _ = run(spec_of("sys-a"))
    # No nvidia-smi, lspci, fi_info, iptables: absent tools, nothing judged.
    expect(f, topo__present=False, acs__present=False, libfabric__present=False,
           fi_tcp__present=False, firewall__present=False, peermem__read=False,
           limits__read=False, efa_installer__found=False, ofi_plugin__found=False)
    for key in ("topo.gpus", "acs.enabled", "peermem.loaded", "firewall.blocking",
                "limits.memlock_soft", "logind.remove_ipc", "numa.nodes"):
        assert get(f, key) is None, f"{key} is {get(f, key)!r} without any data"


@test
def without_root_the_privileged_reads_are_unknown():
    def change(spec):
        spec["commands"]["id"] = {"stdout": "1000\n"}
        spec["commands"]["iptables-save"] = {
            "stdout": "iptables-save v1.8.7 (nf_tables): Could not fetch rule set generation id: "
                      "Permission denied (you must be root)\n", "exit": 1}
        spec["commands"]["lspci"] = {
            "stdout": "0000:40:01.1 PCI bridge: Amazon.com, Inc. Device 0200\n"
                      "\tCapabilities: <access denied>\n"}
    _, f, _, _ = run(spec_of("p5-a", change))
    expect(f, probe__root=False, probe__uid=1000, firewall__readable=False, acs__readable=False)
    assert get(f, "firewall.blocking") is None and get(f, "acs.enabled") is None, f


@test
def a_hung_tool_is_cut_and_the_probe_finishes():
    def change(spec):
        spec["commands"]["nvidia-smi"] = {"sleep": 15, "stdout": "late\n"}
    out, f, took, _ = run(spec_of("p5-a", change), timeout=90)
    expect(f, topo__rc=124, probe__truncated=False)
    assert get(f, "topo.gpus") is None
    assert took < 45, f"the probe took {took:.0f} s"


@test
def every_block_is_framed():
    out, _, _, _ = run(spec_of("p5-d"))
    lines = out.splitlines()
    begins = [l.split()[2] for l in lines if l.startswith("@@HP@@ BEGIN ")]
    ends = [l.split()[2] for l in lines if l.startswith("@@HP@@ END ")]
    assert begins == ends, (begins, ends)
    assert len(begins) >= 22, begins
    assert lines[-1] == "@@HP@@ DONE", lines[-1]


def main():
    failed = 0
    for fn in TESTS:
        what = fn.__name__.replace("_", " ")
        try:
            fn()
            print(f"ok - {NAME}: {what}")
        except Exception as exc:  # noqa: BLE001 - report every failure
            failed = 1
            detail = str(exc) or traceback.format_exc().strip().splitlines()[-1]
            print(f"not ok - {NAME}: {what}: {detail[:800]}")
    sys.exit(failed)


if __name__ == "__main__":
    main()
