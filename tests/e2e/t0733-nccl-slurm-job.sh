#!/bin/sh
# hpnode nccl --job on Slurm, end to end over SSM: the controller probe asks
# slurmctld about the job (`scontrol show job -o ID`, the fixture's stand-in
# answering with published records, tests/data/nccl/README.md), the job's
# NodeList picks the nodes probed, its StdOut/StdErr files are read on the
# controller and scanned (their lines never stored), a wrapper takes its
# cause, a GPU_ECC line names its node's GPU view; an array task, a whole
# array job, a job slurmctld forgot and a name that is no Slurm id.
T=t0733-nccl-slurm-job
. "$(dirname "$0")/e2e-lib.sh"

variant "$ROOT/tests/fixtures/slurm.yaml" "$e2e_tmp/job.yaml" '
sc = d["slurm"]["commands"]["scontrol"]
# Published records (README: scontrol-job-*.txt) with marked edits: the job
# ids, states, node names and output paths are the fixture'"'"'s.
one = ("JobId=4242 JobName=train UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901759 "
       "Nice=0 Account=root QOS=normal JobState=FAILED Reason=NonZeroExitCode Dependency=(null) "
       "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=1:0 RunTime=00:00:03 TimeLimit=UNLIMITED "
       "TimeMin=N/A SubmitTime=2023-01-08T16:01:33 EligibleTime=2023-01-08T16:01:33 "
       "Partition=all AllocNode:Sid=631cc24917ee:218 ReqNodeList=(null) ExcNodeList=(null) "
       "NodeList={slurm_name:2},{slurm_name:3} BatchHost={slurm_name:2} NumNodes=2 NumCPUs=1 "
       "NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* Command=/fsx/train.sbatch WorkDir=/fsx "
       "StdErr=/fsx/logs/train-4242.err StdIn=/dev/null StdOut=/fsx/logs/train-4242.out Power=\n")
task = ("JobId=1673301 ArrayJobId=1673301 ArrayTaskId=3 JobName=subtest.sh\n"
        "   UserId=creisle(1365) GroupId=users(100) MCS_label=N/A\n"
        "   JobState=RUNNING Reason=None Dependency=(null)\n"
        "   Partition=all AllocNode:Sid=n104:47409\n"
        "   NodeList={slurm_name:2}\n   BatchHost={slurm_name:2}\n"
        "   StdErr=/fsx/logs/slurm-1673301_3.out\n   StdIn=/dev/null\n"
        "   StdOut=/fsx/logs/slurm-1673301_3.out\n   Power=\n")
other = ("\nJobId=1673303 ArrayJobId=1673301 ArrayTaskId=2 JobName=subtest.sh\n"
         "   JobState=RUNNING Reason=None Dependency=(null)\n"
         "   NodeList={slurm_name:3}\n   BatchHost={slurm_name:3}\n"
         "   StdErr=/fsx/logs/slurm-1673301_2.out\n   StdIn=/dev/null\n"
         "   StdOut=/fsx/logs/slurm-1673301_2.out\n   Power=\n")
sc["cases"] = [
    {"args": "show job -o 4242", "stdout": one},
    {"args": "show job -o 1673301_3", "stdout": task},
    {"args": "show job -o 1673301", "stdout": task + other},
    {"args": "show job -o 31178", "stderr": "slurm_load_jobs error: Invalid job id specified\n",
     "exit": 1},
]
# Published log lines (tests/data/nccl/README.md P27, P7, P32); the host of P27 is the
# fixture node (marked edit).
d["slurm"]["files"] = {
    "/fsx/logs/train-4242.out":
        "training step 10 loss 2.31 private-marker-7f3a\n"
        "[2025-10-16 22:16:08] {slurm_name:3}:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN "
        "NET/OFI OFI fi_getinfo() call failed: No data available\n"
        "{slurm_name:3}:1929:1937 [0] RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/"
        "ProcessGroupNCCL.cpp:410, unhandled system error, NCCL version 2.4.8\n",
    "/fsx/logs/slurm-1673301_3.out":
        "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
        "[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated with exception: "
        "CUDA error: uncorrectable ECC error encountered\n",
}
'
fixture_start "$e2e_tmp/job.yaml" || { not_ok "slurm job fixture starts" "see above"; e2e_done; }
c2=$(fixture_get node_ids.2)
c3=$(fixture_get node_ids.3)
run() { # NAME ARGS...: hpnode nccl into NAME.json and NAME.snap
	n=$1
	shift
	"$HPNODE" nccl --cluster "$FIXTURE_CLUSTER" --output json --save-snapshot "$e2e_tmp/$n.snap" \
		"$@" >"$e2e_tmp/$n.json" 2>"$e2e_tmp/$n.err"
}
chosen() { # SNAP: selection and the chosen ids
	python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["nccl_run"]["probe_nodes"]
print(p["selection"], " ".join(c["id"] for c in p["chosen"]))' "$1"
}

run failed --job 4242
expect_status "--job 4242 on Slurm completes" 0 $?
check "the job's state and reason from scontrol, on its batch host" findings "$e2e_tmp/failed.json" \
	"1:check=nccl.slurm-job,tag=FAIL,priority=P1,node=$c2,message~Slurm job 4242 (train) ended FAILED" "1:check=nccl.slurm-job,message~reason NonZeroExitCode"
got=$(chosen "$e2e_tmp/failed.snap")
if [ "$got" = "job $c2 $c3" ]; then ok "the NodeList's two nodes are probed, nothing else"
else not_ok "the NodeList's two nodes are probed, nothing else" "$got"; fi
check "the output file's EFA failure on the node its line names; the wrapper takes it" \
	findings "$e2e_tmp/failed.json" \
	"1:check=nccl.slurm-logs,tag=FAIL,priority=P0,section=NC6,node=$c3,message~EFA_INIT_FAIL in /fsx/logs/train-4242.out" \
	"1:check=nccl.slurm-logs,message~it explains SYSTEM_ERROR" "0:check=nccl.slurm-logs,message~SYSTEM_ERROR in"
check "a StdErr file that is not there is said, not silently passed" findings "$e2e_tmp/failed.json" \
	"1:check=nccl.slurm-logs,tag=WARN,priority=P2,section=NC8.1,message~/fsx/logs/train-4242.err"
check "the job's log lines are not kept in the snapshot" lacks "$e2e_tmp/failed.snap" "private-marker-7f3a"
check "only the matches are" contains "$e2e_tmp/failed.snap" "OFI fi_getinfo() call failed"

run task --job 1673301_3
expect_status "--job of one array task completes" 0 $?
check "the array task is named, on its node" findings "$e2e_tmp/task.json" \
	"1:check=nccl.slurm-job,tag=INFO,message~task 3) (subtest.sh) is RUNNING"
check "a GPU_ECC line of a one-node job is that node's P0, with the node's GPU view" \
	findings "$e2e_tmp/task.json" \
	"1:check=nccl.slurm-logs,tag=FAIL,priority=P0,section=NC7,node=$c2,message~GPU_ECC in /fsx/logs/slurm-1673301_3.out" \
	"1:check=nccl.slurm-logs,node=$c2,message~node.gpu-ecc"
got=$(chosen "$e2e_tmp/task.snap")
if [ "$got" = "job $c2" ]; then ok "the task's one node is probed"; else not_ok "the task's one node is probed" "$got"; fi

run array --job 1673301
check "a whole array job: one record per task, both nodes probed" findings "$e2e_tmp/array.json" \
	"2:check=nccl.slurm-job,tag=INFO,message~array job 1673301"
got=$(chosen "$e2e_tmp/array.snap")
if [ "$got" = "job $c2 $c3" ]; then ok "an array job's tasks' nodes are probed"; else not_ok "an array job's tasks' nodes are probed" "$got"; fi

run gone --job 31178
expect_status "a job slurmctld forgot completes" 0 $?
check "a forgotten job is said (Invalid job id specified), and a sample is probed" \
	findings "$e2e_tmp/gone.json" \
	"1:check=nccl.slurm-job,tag=WARN,priority=P1,message~Slurm job 31178 is not known to slurmctld" \
	"0:check=nccl.slurm-logs,tag=FAIL"
got=$(chosen "$e2e_tmp/gone.snap")
case $got in sample*) ok "forgotten job: sampled" ;; *) not_ok "forgotten job: sampled" "$got" ;; esac

run name --job llama-pretrain
check "a Kubernetes job name on Slurm is said, never passed to scontrol" findings "$e2e_tmp/name.json" \
	"1:check=nccl.slurm-job,tag=WARN,message~not a Slurm job id"
fixture_stop
e2e_done
