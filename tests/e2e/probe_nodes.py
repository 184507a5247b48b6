#!/usr/bin/env python3
"""Run the on-node probe against fixture nodes, without SSM.

  probe_nodes.py snapshot FIXTURE.yaml SCRIPT IN.json OUT.json
      For every node of the fixture: a Running node gets the probe script run
      in a real shell inside its sandbox (hpfixture/sandbox.py, from the
      node's probe spec over probe_defaults) and becomes a "probed" entry of
      the snapshot's "probes" key; other nodes are "skipped". The entries
      have the shape the SSM collector writes.

  probe_nodes.py sandbox FIXTURE.yaml NODE DIR
      Prepare NODE's sandbox (alias, index or id) in DIR and print its
      environment as NAME=value lines.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))

from hpfixture import sandbox  # noqa: E402
from hpfixture.spec import load, resolve_node  # noqa: E402

STDOUT_CAP = 1 << 20
STDERR_CAP = 64 << 10


def node_spec(fx, node):
    base = sandbox.merge(sandbox.identity(sandbox.node_name(node)), fx.probe_defaults)
    return sandbox.merge(base, node.probe)


def probe_one(fx, node, script):
    with tempfile.TemporaryDirectory(prefix="hpnode-probe-") as tmp:
        env = sandbox.prepare(node_spec(fx, node), tmp)
        start = time.monotonic()
        r = subprocess.run([os.path.join(env["PATH"], "sh"), "-c", script], env=env,
                           capture_output=True, timeout=120)
        ms = int((time.monotonic() - start) * 1000)
    out = r.stdout[:STDOUT_CAP].decode("utf-8", "replace")
    return {
        "state": "probed",
        "exit_code": r.returncode,
        "stdout": out,
        "stderr": r.stderr[:STDERR_CAP].decode("utf-8", "replace"),
        "truncated": "@@HP@@ DONE" not in out,
        "duration_ms": ms,
        "group": node.group,
        "instance_type": fx.group(node.group).type,
    }


def snapshot(fixture, script_path, src, dst):
    fx = load(fixture)
    with open(script_path, encoding="utf-8") as fh:
        script = fh.read()
    with open(src, encoding="utf-8") as fh:
        snap = json.load(fh)
    probes, counts = {}, {"probed": 0, "skipped": 0}
    for node in fx.nodes:
        if node.status == "Running":
            probes[node.id] = probe_one(fx, node, script)
            counts["probed"] += 1
        else:
            probes[node.id] = {"state": "skipped", "reason": "node not Running",
                               "exit_code": None, "group": node.group,
                               "instance_type": fx.group(node.group).type}
            counts["skipped"] += 1
    snap["probes"] = probes
    snap["probes_meta"] = {"transport": "sandbox", "concurrency": 1, "rate_per_s": 0,
                           "requested": len(fx.nodes), "probed": counts["probed"],
                           "unreachable": 0, "skipped": counts["skipped"]}
    with open(dst, "w", encoding="utf-8") as fh:
        json.dump(snap, fh)


def main(argv):
    if len(argv) == 6 and argv[1] == "snapshot":
        snapshot(argv[2], argv[3], argv[4], argv[5])
        return 0
    if len(argv) == 5 and argv[1] == "sandbox":
        fx = load(argv[2])
        ref = int(argv[3]) if argv[3].isdigit() else argv[3]
        node = resolve_node(fx, ref, "node")
        env = sandbox.prepare(node_spec(fx, node), argv[4])
        for key, value in env.items():
            print(f"{key}={value}")
        return 0
    sys.stderr.write(__doc__)
    return 2


sys.exit(main(sys.argv))
