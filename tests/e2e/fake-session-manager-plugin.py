#!/usr/bin/env python3
"""A stand-in for session-manager-plugin, for the --ssm-transport plugin tests.

It checks that it was started the way the aws CLI starts the real plugin
(the StartSession reply in AWS_SSM_START_SESSION_RESPONSE, region,
"StartSession", profile, the request JSON with its Target, the endpoint
URL) and that its stdin is a terminal (the real plugin gives up with
"Cannot perform start session: EOF" on a closed stdin). Then it prints what
the real plugin prints for a non-interactive session: a start banner, the
command's output, EXIT_CODE and the closing line. The command runs locally
with HPNODE_PROBE_ROOT pointing at a scratch directory whose
proc/meminfo says it came from here.

FAKE_PLUGIN_LOG, when set, gets one line per run with the arguments seen.
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    if sys.argv[1:] == ["--version"]:
        print("1.2.650.0")
        return 0
    args = sys.argv[1:]
    log = os.environ.get("FAKE_PLUGIN_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"argv": args, "tty": os.isatty(0)}) + "\n")
    if len(args) != 6 or args[0] != "AWS_SSM_START_SESSION_RESPONSE" or args[2] != "StartSession":
        print(f"fake plugin: unexpected arguments {args!r}")
        return 2
    try:
        resp = json.loads(os.environ["AWS_SSM_START_SESSION_RESPONSE"])
        req = json.loads(args[4])
    except (KeyError, ValueError) as exc:
        print(f"fake plugin: bad JSON ({exc})")
        return 2
    if not all(resp.get(k) for k in ("SessionId", "TokenValue", "StreamUrl")) \
            or not req.get("Target", "").startswith("sagemaker-cluster:") \
            or not args[5].startswith("http") or not args[1]:
        print("fake plugin: incomplete session")
        return 2
    if not os.isatty(0):
        sys.stdout.write("\nCannot perform start session: EOF\n")
        return 0
    sid = resp["SessionId"]
    sys.stdout.write(f"\nStarting session with SessionId: {sid}\n")
    sys.stdout.flush()
    command = req["Parameters"]["command"][0]
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "proc"))
        with open(os.path.join(root, "proc", "meminfo"), "w", encoding="ascii") as fh:
            fh.write("MemTotal:       1 kB (from the fake plugin)\n")
        env = {"PATH": "/usr/bin:/bin", "HPNODE_PROBE_ROOT": root, "LANG": "C"}
        proc = subprocess.run(["/bin/sh", "-c", command], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    sys.stdout.write(proc.stdout.decode("utf-8", "replace"))
    sys.stdout.write(f"EXIT_CODE: {proc.returncode}")
    sys.stdout.write(f"\n\nExiting session with sessionId: {sid}.\n\n")
    sys.stdout.flush()
    return 0


sys.exit(main())
