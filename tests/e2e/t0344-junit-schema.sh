#!/bin/sh
# The JUnit report against Jenkins' junit-10.xsd (tests/data/junit/): every
# golden fixture's JUnit validates (xmllint), and its <failure>s are exactly
# what --fail-on counts: the number the text report's "Exit gate" line gives,
# at P0, P1 and P2, and at P1 when no --fail-on is given. --fail-on with
# --quiet says on one stderr line why it exits 3. The diff's JUnit validates
# too. The schema itself is shown to judge (documents it must refuse).
T=t0344-junit-schema
. "$(dirname "$0")/e2e-lib.sh"

xsd=$ROOT/tests/data/junit/junit-10.xsd
gold=$ROOT/tests/data/golden
if ! command -v xmllint >/dev/null 2>&1; then
	not_ok "xmllint is installed" "install libxml2-utils (make deps)"
	e2e_done
fi
valid() { xmllint --noout --schema "$xsd" "$1" >"$e2e_tmp/lint" 2>&1; }
failures() { grep -o "<failure " "$1" | wc -l | tr -d ' '; }
# The keys --fail-on counted, from the text report's gate line.
gate_keys() {
	sed -n 's/^  Exit gate: --fail-on P[012] counts //p' "$1" | python3 -c '
import re, sys
line = sys.stdin.read()
if not line:
    sys.exit("no Exit gate line")
if line.startswith("no finding"):
    print(0)
else:
    m = re.search(r"; ([0-9]+) keys, ", line)
    print(m.group(1) if m else re.match(r"([0-9]+) finding", line).group(1))'
}

# The schema judges: a document it takes, and three it must refuse.
cat >"$e2e_tmp/good.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="x" tests="1" failures="1" errors="0" time="1.5">
  <testsuite name="s" tests="1" failures="1" errors="0" skipped="0" time="0.000123">
    <testcase classname="c" name="n"><failure message="m" type="FAIL P1">text</failure></testcase>
  </testsuite>
</testsuites>
XML
valid "$e2e_tmp/good.xml" && ok "the schema takes a well-formed report" ||
	not_ok "the schema takes a well-formed report" "$(head -c 400 "$e2e_tmp/lint")"
sed 's/<testsuites name="x"/<testsuites name="x" skipped="0"/' "$e2e_tmp/good.xml" >"$e2e_tmp/bad1.xml"
sed 's/ errors="0" skipped="0"/ skipped="0"/' "$e2e_tmp/good.xml" >"$e2e_tmp/bad2.xml"
sed 's/time="0.000123"/time="T"/' "$e2e_tmp/good.xml" >"$e2e_tmp/bad3.xml"
for b in 1 2 3; do
	if valid "$e2e_tmp/bad$b.xml"; then
		not_ok "the schema refuses bad$b (root skipped, no errors count, a time that is no number)" "it validated"
	else
		ok "the schema refuses bad$b (root skipped, no errors count, a time that is no number)"
	fi
done

cd "$gold" || exit 1
n=0
for snap in *.snap.json; do
	c=${snap%.snap.json}
	case $c in nccl-*) cmd=nccl ;; *) cmd=triage ;; esac
	n=$((n + 1))
	# The kept golden JUnit (rendered without --fail-on).
	if valid "$c.xml"; then ok "$c.xml validates against junit-10.xsd"; else
		not_ok "$c.xml validates against junit-10.xsd" "$(head -c 600 "$e2e_tmp/lint" | tr '\n' '|')"
	fi
	check "$c.xml: one testcase per finding key, failures at P1 (junit_check.py)" \
		python3 "$ROOT/tests/e2e/junit_check.py" "$c.xml" "$c.json"
	for p in P0 P1 P2; do
		rc=0
		"$HPNODE" "$cmd" --snapshot "$snap" --fail-on "$p" --no-color --junit-file "$e2e_tmp/$c.$p.xml" \
			>"$e2e_tmp/$c.$p.txt" 2>"$e2e_tmp/$c.$p.err" || rc=$?
		want=$(gate_keys "$e2e_tmp/$c.$p.txt" 2>&1)
		got=$(failures "$e2e_tmp/$c.$p.xml")
		if [ "$want" = "$got" ]; then ok "$c --fail-on $p: $got <failure>, as the gate line counts"; else
			not_ok "$c --fail-on $p: <failure> as the gate line counts" "gate line: $want, failures: $got"
		fi
		case $want in 0) w=0 ;; *) w=3 ;; esac
		expect_status "$c --fail-on $p exits $w" "$w" "$rc"
		valid "$e2e_tmp/$c.$p.xml" || not_ok "$c --fail-on $p: JUnit validates" "$(head -c 400 "$e2e_tmp/lint")"
		python3 "$ROOT/tests/e2e/junit_check.py" "$e2e_tmp/$c.$p.xml" "$c.json" "$p" >"$e2e_tmp/jc" 2>&1 ||
			not_ok "$c --fail-on $p: a <failure> for each key at $p or worse, no other" "$(head -c 600 "$e2e_tmp/jc" | tr '\n' '|')"
		[ "$p" = P1 ] || continue
		# No --fail-on: the JUnit fails what --fail-on P1 counts.
		got=$(failures "$c.xml")
		[ "$want" = "$got" ] && ok "$c.xml (no --fail-on) fails what --fail-on P1 counts ($got)" ||
			not_ok "$c.xml (no --fail-on) fails what --fail-on P1 counts" "gate line: $want, failures: $got"
	done
	# Every suite has its own time (a number by the schema; its value is not judged).
	check "$c: every testsuite has a time" python3 -c '
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
assert "time" in r.attrib and "skipped" not in r.attrib, r.attrib
assert all("time" in s.attrib for s in r.iter("testsuite")), "a suite without time"' "$e2e_tmp/$c.P1.xml"
done
[ "$n" -ge 7 ] && ok "every golden fixture ($n)" || not_ok "every golden fixture" "only $n snapshots"

# --fail-on … --quiet: nothing on stdout, one stderr line that says why the exit status is 3.
"$HPNODE" triage --snapshot ssm.snap.json --fail-on P1 --quiet >"$e2e_tmp/q.out" 2>"$e2e_tmp/q.err"
expect_status "--fail-on P1 --quiet exits 3" 3 $?
check "--quiet: no report on stdout" test ! -s "$e2e_tmp/q.out"
check "--quiet: one stderr line naming the gate and the count" sh -c '
	[ "$(wc -l <"$1")" = 1 ] &&
	grep -qxE "hpnode triage: exit status 3: --fail-on P1 counts 9 findings at P1 or worse \(1 P0, 8 P1; 42 keys, one per node of a finding about many nodes\)" "$1"' _ "$e2e_tmp/q.err"
"$HPNODE" triage --snapshot healthy.snap.json --fail-on P2 --quiet >"$e2e_tmp/h.out" 2>"$e2e_tmp/h.err"
expect_status "a healthy cluster passes --fail-on P2 --quiet" 0 $?
check "... and says nothing" sh -c '! [ -s "$1" ] && ! [ -s "$2" ]' _ "$e2e_tmp/h.out" "$e2e_tmp/h.err"
"$HPNODE" triage --snapshot demo.snap.json --fail-on P0 --output junit >"$e2e_tmp/j.xml" 2>"$e2e_tmp/j.err"
expect_status "--fail-on P0 --output junit exits 3" 3 $?
check "JUnit on stdout stays alone with 2>&1: nothing on stderr" test ! -s "$e2e_tmp/j.err"
"$HPNODE" triage --snapshot demo.snap.json --fail-on P0 --quiet --junit-file "$e2e_tmp/q0.xml" 2>"$e2e_tmp/q0.err"
expect_status "--fail-on P0 --quiet --junit-file exits 3" 3 $?
check "... the reason on stderr, the file's failures its count" sh -c '
	grep -qxE "hpnode triage: exit status 3: --fail-on P0 counts 6 findings at P0 or worse \(6 P0\)" "$1" &&
	[ "$(grep -o "<failure " "$2" | wc -l)" = 6 ]' _ "$e2e_tmp/q0.err" "$e2e_tmp/q0.xml"
"$HPNODE" triage --snapshot demo.snap.json --fail-on P0 >"$e2e_tmp/t.txt" 2>"$e2e_tmp/t.err"
check "with the text report on stdout, the gate is its line, not stderr's" sh -c '
	grep -q "^  Exit gate: --fail-on P0 counts 6 findings at P0 or worse (6 P0): exit status 3$" "$1" && ! [ -s "$2" ]' _ "$e2e_tmp/t.txt" "$e2e_tmp/t.err"

# The diff's JUnit: the same schema.
"$HPNODE" diff --output junit healthy.snap.json demo.snap.json >"$e2e_tmp/diff.xml" 2>"$e2e_tmp/diff.err"
if valid "$e2e_tmp/diff.xml"; then ok "diff JUnit validates against junit-10.xsd"; else
	not_ok "diff JUnit validates against junit-10.xsd" "$(head -c 400 "$e2e_tmp/lint")"
fi
e2e_done
