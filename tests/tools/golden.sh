#!/bin/sh
# The report of every fixture cluster, kept as golden files: a snapshot
# captured from each fixture (tests/data/golden/<case>.snap.json) and its
# replayed reports in text, JSON and JUnit (tests/data/golden/<case>.txt,
# .json, .xml). tests/e2e/t0346-golden.sh replays each snapshot and compares;
# the golden files change only when someone runs this on purpose.
#
#   sh tests/tools/golden.sh render HPNODE DIR    replay every snapshot into DIR
#   sh tests/tools/golden.sh update HPNODE        render into tests/data/golden
#   sh tests/tools/golden.sh capture HPNODE       capture every snapshot again
#                                                 from its fixture (or those of
#                                                 GOLDEN_CASES), then update
#
# The run's own facts (start time, duration, revision, version) are masked,
# so a golden file says what hpnode found, not when or which build.
set -eu
# Reports in one language and zone, whoever regenerates them.
LANG=C LC_ALL=C TZ=UTC
export LANG LC_ALL TZ

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gold=$root/tests/data/golden

# The cases: name, fixture, command, options (the cluster comes from the fixture).
cases() {
	cat <<'EOF'
demo demo.yaml triage --region us-west-2
healthy healthy.yaml triage
faults faults.yaml triage --probe-timeout 20
slurm slurm.yaml triage
ssm ssm.yaml triage --probe-timeout 20
nccl-demo nccl-demo.yaml nccl --namespace ml --job llama-pretrain --exec
nccl-healthy nccl-healthy.yaml nccl --namespace ml --job llama-pretrain --exec
EOF
}

# The cases to capture: all, or those named in GOLDEN_CASES (a space-separated list).
chosen() {
	cases | while read -r name rest; do
		case " ${GOLDEN_CASES:-$name} " in *" $name "*) echo "$name $rest" ;; esac
	done
}

usage() {
	echo "usage: sh tests/tools/golden.sh render HPNODE DIR | update HPNODE | capture HPNODE" >&2
	exit 2
}

# mask FORMAT: the report on stdin without the run's own facts.
mask() {
	case $1 in
	txt)
		sed -e 's/^\(Tool: hpnode\) [^ ]* ([^)]*)  |  Started: [^ ]*  |  Duration: .*/\1 VERSION (REVISION)  |  Started: TIME  |  Duration: D/'
		;;
	json)
		python3 -c '
import json, sys
d = json.load(sys.stdin)
run = d.get("run") or {}
for k in ("started_at", "duration_s", "revision", "version"):
    if k in run:
        run[k] = "MASKED"
json.dump(d, sys.stdout, indent=1, sort_keys=False, ensure_ascii=False)
print()
'
		;;
	xml)
		# Times become 0, still a time by the schema (every golden JUnit is validated).
		sed -e 's/ time="[0-9.]*"/ time="0"/g' -e 's/ timestamp="[^"]*"/ timestamp="TIME"/g' \
			-e 's/\(name="\(started_at\|revision\|hpnode.version\)" value="\)[^"]*"/\1MASKED"/'
		;;
	esac
}

render() {
	hpnode=$1
	mkdir -p "$2"
	out=$(cd "$2" && pwd)
	# Replayed from the folder itself: the reports name the snapshot, not where the checkout is.
	cd "$gold"
	cases | while read -r name yaml cmd opts; do
		snap=$name.snap.json
		[ -f "$snap" ] || { echo "golden: $gold/$snap is missing (golden.sh capture)" >&2; exit 1; }
		for fmt in txt json xml; do
			case $fmt in txt) o=text ;; json) o=json ;; xml) o=junit ;; esac
			# Exit status 3 (findings at or above --fail-on) is a report too.
			rc=0
			"$hpnode" "$cmd" --snapshot "$snap" --output "$o" --no-color >"$out/$name.$fmt.raw" 2>"$out/$name.$fmt.err" || rc=$?
			if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
				echo "golden: $name ($o) exited $rc: $(head -c 300 "$out/$name.$fmt.err")" >&2
				exit 1
			fi
			mask "$fmt" <"$out/$name.$fmt.raw" >"$out/$name.$fmt"
			rm -f "$out/$name.$fmt.raw" "$out/$name.$fmt.err"
		done
	done
}

capture() {
	hpnode=$1
	FIXTURE_LIB_DIR=$root/tests/fixtures
	. "$root/tests/fixtures/lib.sh"
	trap 'fixture_stop' EXIT
	mkdir -p "$gold"
	chosen | while read -r name yaml cmd opts; do
		fixture_start "$root/tests/fixtures/$yaml" || exit 1
		# shellcheck disable=SC2086 # opts is a list of words
		"$hpnode" "$cmd" --cluster "$FIXTURE_CLUSTER" $opts --save-snapshot "$gold/$name.snap.json" \
			>/dev/null 2>"$gold/$name.err" || [ $? = 3 ] ||
			{ echo "golden: capturing $name failed: $(head -c 300 "$gold/$name.err")" >&2; exit 1; }
		rm -f "$gold/$name.err"
		fixture_stop
		echo "golden: captured $name"
	done
}

[ $# -ge 2 ] || usage
hpnode=$2
case $hpnode in /*) ;; *) hpnode=$(pwd)/$hpnode ;; esac
[ -x "$hpnode" ] || { echo "golden: '$hpnode' is not an executable" >&2; exit 1; }
case $1 in
render) [ $# = 3 ] || usage; render "$hpnode" "$3" ;;
update) [ $# = 2 ] || usage; render "$hpnode" "$gold" ;;
capture) [ $# = 2 ] || usage; capture "$hpnode"; render "$hpnode" "$gold" ;;
*) usage ;;
esac
