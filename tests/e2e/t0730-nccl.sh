#!/bin/sh
# hpnode nccl end to end against tests/fixtures/nccl.yaml with the real
# kubectl and the fixture's SSM sandboxes: bad flags exit 2 with a clear
# message before anything is collected; the broken job (llama-hang) gives its
# FAIL/WARN findings with the right NCCL guide sections; the healthy job
# (llama-ok) passes; --job scopes the probes to the job's nodes and
# --sample-nodes picks accelerated groups first; --snapshot replays the same
# report; JSON and JUnit are valid; --fail-on sets the exit status; an
# untrusted kubectl gives one WARN and a CloudWatch search instead.
T=t0730-nccl
. "$(dirname "$0")/e2e-lib.sh"

run() { # ARGS...: hpnode nccl, stdout to $e2e_tmp/out, stderr to $e2e_tmp/err; prints the status
	"$HPNODE" nccl "$@" >"$e2e_tmp/out" 2>"$e2e_tmp/err"
	echo $?
}

# ---- usage errors: exit 2, a clear message, nothing collected ----
usage() { # WHAT MESSAGE ARGS...
	what=$1 msg=$2
	shift 2
	rc=$(run "$@")
	if [ "$rc" = 2 ] && grep -qF -- "$msg" "$e2e_tmp/err" && grep -q "hpnode nccl --help" "$e2e_tmp/err" &&
		[ ! -s "$e2e_tmp/out" ]; then
		ok "usage: $what"
	else
		not_ok "usage: $what" "exit $rc: $(head -c 300 "$e2e_tmp/err" | tr '\n' '|')"
	fi
}
usage "no --cluster" "--cluster is required" --region us-west-2
usage "bad namespace" "--namespace must be a Kubernetes namespace name" --cluster c --namespace ML_1
usage "job with a comma" "--job must be a Kubernetes label value" --cluster c --job 'a,b=c'
usage "bad node id" "--node must be an EC2 instance id" --cluster c --node i-xyz
usage "sample-nodes 0" "--sample-nodes must be a whole number from 1 to 50, or 'all'" --cluster c --sample-nodes 0
usage "sample-nodes 51" "--sample-nodes must be a whole number from 1 to 50" --cluster c --sample-nodes 51
usage "orchestrator" "--orchestrator must be eks or slurm (got 'k8s')" --cluster c --orchestrator k8s
usage "since unit" "--since must be a duration such as 90m, 2h or 1d" --cluster c --since 2w
usage "since too long" "--since must be a duration" --cluster c --since 8d
usage "node and sample-nodes" "--node and --sample-nodes cannot be combined" --cluster c --node i-0123456789abcdef0 --sample-nodes 2
usage "node and job" "--node and --job cannot be combined" --cluster c --node i-0123456789abcdef0 --job j
usage "exec without kubectl" "--exec needs kubectl" --cluster c --no-kube --exec
usage "unknown option" "unknown option '--concurrency'" --cluster c --concurrency 3
usage "missing value" "option '--job' needs a value" --cluster c --job
usage "replay with collection options" "--snapshot replays saved data" --snapshot /nonexistent --job j
expect_status "help exits 0" 0 "$(run --help)"
check "help names every option of the brief" sh -c 'for o in --namespace --job --node --sample-nodes \
	--orchestrator --since --exec --profile --output --fail-on --save-snapshot --snapshot --suggest \
	--no-color --debug --max-runtime; do grep -q -- "$o" "$1" || { echo "missing $o"; exit 1; }; done' _ "$e2e_tmp/out"
"$HPNODE" help nccl >"$e2e_tmp/help2" 2>&1
check "hpnode help nccl is nccl --help" cmp -s "$e2e_tmp/out" "$e2e_tmp/help2"

e2e_done
