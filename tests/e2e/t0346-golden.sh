#!/bin/sh
# Every fixture's report, kept: each snapshot under tests/data/golden/ (one
# per fixture cluster, captured by tests/tools/golden.sh) is replayed in
# text, JSON and JUnit, and the reports must be byte-identical to the golden
# files beside it (the run's start time, duration and build masked). A change
# of output is made on purpose: `make golden` rewrites them, and the diff
# goes into the commit that explains it.
T=t0346-golden
. "$(dirname "$0")/e2e-lib.sh"

if ! sh "$ROOT/tests/tools/golden.sh" render "$HPNODE" "$e2e_tmp/out" 2>"$e2e_tmp/err"; then
	not_ok "every golden snapshot replays" "$(head -c 600 "$e2e_tmp/err")"
	e2e_done
fi
n=0
for want in "$ROOT"/tests/data/golden/*.txt "$ROOT"/tests/data/golden/*.json "$ROOT"/tests/data/golden/*.xml; do
	case $want in *.snap.json) continue ;; esac
	name=$(basename "$want")
	n=$((n + 1))
	if cmp -s "$want" "$e2e_tmp/out/$name"; then
		ok "$name is as kept"
	else
		not_ok "$name is as kept" "$(diff -u "$want" "$e2e_tmp/out/$name" | head -n 30 | tr '\n' '|') (make golden, if the change is meant)"
	fi
done
# Every case rendered has its golden file, and no golden file is left without a case.
for got in "$e2e_tmp"/out/*; do
	[ -f "$ROOT/tests/data/golden/$(basename "$got")" ] ||
		not_ok "$(basename "$got") has a golden file" "missing under tests/data/golden (make golden)"
done
[ "$n" -ge 21 ] && ok "seven fixtures, three formats each ($n files)" ||
	not_ok "seven fixtures, three formats each" "only $n golden reports"

# The comparison is a judge: a report that differs by one finding fails it.
cp "$ROOT/tests/data/golden/demo.txt" "$e2e_tmp/demo.txt"
sed -i '0,/\[PASS\]/s/\[PASS\]/[FAIL]/' "$e2e_tmp/demo.txt"
if cmp -s "$e2e_tmp/demo.txt" "$e2e_tmp/out/demo.txt"; then
	not_ok "a changed verdict is caught" "the edited copy still compares equal"
else
	ok "a changed verdict is caught"
fi
e2e_done
