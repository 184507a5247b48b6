#!/usr/bin/env python3
"""Writes a fixture cluster with one PODS-pod training job, for tests/bench/nccl-job.sh.

usage: nccl_job_fixture.py OUT.yaml PODS [LINES]

The cluster is tests/fixtures/nccl-healthy.yaml's (its network, device
plugins, services, policies and p5 node data, read through the fixture
loader) with the job replaced: a PyTorchJob `bench-job` in namespace ml of
one master and PODS-1 workers, eight pods per p5 node (each 1 GPU and 4 EFA
interfaces, a memory-backed /dev/shm), on ceil(PODS/8) nodes. Every pod logs
LINES lines (default 600, more than hpnode's --tail=500): its ranks' NCCL
INFO start-up in the forms of nccl-healthy.yaml and nccl-demo.yaml (the
aws-ofi-nccl plugin over EFA, channels, Init COMPLETE) with its own host
name, pid, addresses and ranks, then training steps. The pods of the last
node, which lacks the plugin, log NCCL's socket fallback instead, so the
scan has hits to keep as well as lines to drop (their logs end at the
error, as nccl-demo.yaml's worker-2's does). NCCL_DEBUG is INFO, as when
someone is looking into a job.
"""
import math
import os
import sys

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures"))
from hpfixture.spec import read_yaml  # noqa: E402


def ofi_start(host, pid, rank, nranks, ip):
    t = f"{host}:{pid}:{pid + 56} [0] NCCL INFO"
    out = [f"{host}:{pid}:{pid} [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to "
           "^lo,docker,efa,veth,virbr",
           f"{host}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using eth0:{ip}<0>",
           f"{host}:{pid}:{pid} [0] NCCL INFO cudaDriverVersion 12040",
           f"{t} NET/OFI Initializing aws-ofi-nccl 1.11.0-aws",
           f"{t} NET/OFI Using Libfabric version 1.22",
           f"{t} NET/OFI Setting provider_filter to efa",
           f"{t} NET/OFI Selected Provider is efa (found 4 nics)",
           f"{t} NET/OFI Creating one domain per process",
           f"{t} Using network Libfabric"]
    for ch in range(32):
        peer = (rank - 1) % nranks
        out.append(f"{t} Channel {ch:02d}/0 : {peer}[0] -> {rank}[0] [receive] via "
                   "NET/Libfabric/0/GDRDMA")
    out.append(f"{t} Connected all rings")
    out.append(f"{t} ncclCommInitRank comm 0x55d0{rank:04x}e0 rank {rank} nranks {nranks} "
               "cudaDev 0 nvmlDev 0 busId 53000 commId 0x9f2c41d8e07b11a5 - Init COMPLETE")
    return out


def socket_start(host, pid, rank, nranks, ip):
    t = f"{host}:{pid}:{pid + 58} [0] NCCL INFO"
    out = [f"{host}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using eth0:{ip}<0>",
           f"{host}:{pid}:{pid} [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)",
           f"{host}:{pid}:{pid} [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: "
           "cannot open shared object file: No such file or directory : when loading libnccl-net.so",
           f"{host}:{pid}:{pid} [0] NCCL INFO NET/Plugin: Using internal network plugin.",
           f"{t} NET/Socket : Using [0]eth0:{ip}<0>",
           f"{t} Using network Socket"]
    for ch in range(32):
        out.append(f"{t} Channel {ch:02d}/0 : {(rank - 1) % nranks}[0] -> {rank}[0] [receive] "
                   "via NET/Socket/0")
    return out


def pod_log(i, pods, lines, broken):
    host = "bench-job-master-0" if i == 0 else f"bench-job-worker-{i - 1}"
    pid, ip = 40 + i % 50, f"10.3.{4 + i // 250}.{10 + i % 250}"
    out = (socket_start if broken else ofi_start)(host, pid, i, pods, ip)
    if i == 0:
        out.insert(3, "NCCL version 2.21.5+cuda12.4")
    if broken:
        # The rank without the plugin fails to connect and stops (nccl-demo.yaml's worker-2).
        out += [f"{host}:{pid}:{pid + 79} [0] misc/socket.cc:484 NCCL WARN socketStartConnect: "
                f"Connect to 10.3.4.10<45763> failed : Software caused connection abort",
                f"[rank{i}]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/"
                "distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with "
                "NCCL_DEBUG=INFO for details), NCCL version 2.21.5"]
        return "\n".join(out) + "\n"
    step = 1000
    while len(out) < lines:
        out.append(f"[rank{i}]: step {step}/20000 | loss {2.4 - step / 40000:.4f} | lr 2.98e-04 "
                   f"| 1.84 s/step | {400 + i % 7}.{i % 10} TFLOP/s/GPU")
        step += 1
    return "\n".join(out[:lines]) + "\n"


def main():
    out_path, pods = sys.argv[1], int(sys.argv[2])
    lines = int(sys.argv[3]) if len(sys.argv) > 3 else 600
    if pods < 1 or lines < 1:
        sys.exit("nccl_job_fixture.py: PODS and LINES must be 1 or more")
    base = read_yaml(os.path.join(ROOT, "tests", "fixtures", "nccl-healthy.yaml"))
    n_nodes = max(1, math.ceil(pods / 8))
    p5 = base["nodes"][0]["probe"]
    d = dict(base)
    d["description"] = f"bench: a {pods}-pod PyTorchJob on {n_nodes} p5 nodes"
    d["cluster"] = dict(base["cluster"], name="hp-nccl-bench", id="ncclbench001")
    d["nodes"] = [{"group": "gpu-p5", "alias": f"p5-{k}", "probe": p5} for k in range(n_nodes)]
    if n_nodes > 1:
        files = {k: v for k, v in p5["files"].items() if "/ofi-nccl/" not in k}
        d["nodes"][-1]["probe"] = {"commands": p5["commands"], "files": files}
    d["nodes"].append({"group": "system", "alias": "sys-a"})
    d["logs"] = {"default": {}}
    kube = dict(base["kubernetes"])
    kube["services"] = [dict(s, name="bench-job-master-0",
                             selector={"training.kubeflow.org/job-name": "bench-job",
                                       "training.kubeflow.org/replica-type": "master"},
                             labels={"training.kubeflow.org/job-name": "bench-job"})
                        for s in base["kubernetes"]["services"][:1]]
    env = {"MASTER_ADDR": "bench-job-master-0", "MASTER_PORT": "23456", "WORLD_SIZE": str(pods),
           "FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1", "NCCL_DEBUG": "INFO",
           "NCCL_SOCKET_IFNAME": "^lo,docker,efa,veth,virbr"}
    res = {"requests": {"nvidia.com/gpu": "1", "vpc.amazonaws.com/efa": "4", "memory": "200Gi"},
           "limits": {"nvidia.com/gpu": "1", "vpc.amazonaws.com/efa": "4", "memory": "200Gi"}}
    vols = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}]
    mounts = [{"name": "dshm", "mountPath": "/dev/shm"}]
    kube["pods"] = []
    for i in range(pods):
        kind = "master" if i == 0 else "worker"
        labels = {"training.kubeflow.org/job-name": "bench-job",
                  "training.kubeflow.org/replica-type": kind,
                  "training.kubeflow.org/replica-index": str(0 if i == 0 else i - 1),
                  "training.kubeflow.org/operator-name": "pytorchjob-controller"}
        kube["pods"].append({
            "namespace": "ml", "name": "bench-job-master-0" if i == 0 else f"bench-job-worker-{i - 1}",
            "node": f"p5-{i // 8}", "containers": ["pytorch"], "labels": labels,
            "owner": {"kind": "PyTorchJob", "name": "bench-job"}, "env": env, "resources": res,
            "volumes": vols, "volume_mounts": mounts,
            "logs": pod_log(i, pods, lines, broken=n_nodes > 1 and i // 8 == n_nodes - 1)})
    d["kubernetes"] = kube
    with open(out_path, "w", encoding="utf-8") as fh:
        yaml.dump(d, fh, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)


if __name__ == "__main__":
    main()
