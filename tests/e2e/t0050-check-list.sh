#!/bin/sh
# tests/tools/check-list.sh, which turns the HP_CHECK rows of src/checks
# into the registry's list: report order from group and order, and a
# clear failure (file and line) for every kind of bad row.
T=t0050-check-list
. "$(dirname "$0")/e2e-lib.sh"

gen() { sh "$ROOT/tests/tools/check-list.sh" "$e2e_tmp/out.h" "$ROOT/include/hp/check.h" "$@"; }

# The real rows give the list the build uses, one line per check (the
# Makefile names the files from the repository root).
(cd "$ROOT" && gen $(ls src/checks/*.c | LC_ALL=C sort)) 2>"$e2e_tmp/err"
expect_status "the real rows make a list" 0 $?
rows=$(grep -c '^HP_CHECK_ROW(' "$e2e_tmp/out.h")
defs=$(cat "$ROOT"/src/checks/*.c | grep -c '^HP_CHECK(')
if [ "$rows" -gt 50 ] && [ "$rows" = "$defs" ]; then ok "one line per row ($rows)"
else not_ok "one line per row" "$rows lines for $defs rows"; fi
check "cluster.identity comes first" sh -c 'grep "^HP_CHECK_ROW" "$1" | head -n 1 | grep -q "(cluster_identity)"' _ "$e2e_tmp/out.h"
check "slurm.mapping (group 8b) comes last" sh -c 'grep "^HP_CHECK_ROW" "$1" | tail -n 1 | grep -q "(slurm_mapping)"' _ "$e2e_tmp/out.h"
for b in build/default build/san build/clang build/clang-san; do
	[ -f "$ROOT/$b/gen/hp_checks.h" ] || continue
	check "the build's list ($b) is this one" cmp "$e2e_tmp/out.h" "$ROOT/$b/gen/hp_checks.h"
	break
done

# Order comes from the group (enum order), then the number, not the file order.
cat >"$e2e_tmp/a.c" <<'EOF'
HP_CHECK(late, HP_GROUP_ONNODE, 5,
	 .id = "x.late");
HP_CHECK(second, HP_GROUP_IDENTITY, 20,
	 .id = "x.second");
HP_CHECK(first, HP_GROUP_IDENTITY, 9, .id = "x.first");
EOF
cat >"$e2e_tmp/b.c" <<'EOF'
#define HP_CHECK(name, grp, ord, ...) not a row
HP_CHECK(middle, HP_GROUP_VPC, 100,
	 .id = "x.middle");
EOF
gen "$e2e_tmp/a.c" "$e2e_tmp/b.c" 2>"$e2e_tmp/err"
expect_status "rows in two files" 0 $?
grep '^HP_CHECK_ROW' "$e2e_tmp/out.h" | sed 's/ .*//' >"$e2e_tmp/got"
printf '%s\n' 'HP_CHECK_ROW(first)' 'HP_CHECK_ROW(second)' 'HP_CHECK_ROW(middle)' \
	'HP_CHECK_ROW(late)' >"$e2e_tmp/want"
check "sorted by group, then order" cmp "$e2e_tmp/want" "$e2e_tmp/got"

# An unchanged list is not rewritten (objects that include it are not rebuilt).
touch -d '2000-01-01' "$e2e_tmp/out.h"
gen "$e2e_tmp/a.c" "$e2e_tmp/b.c"
check "an unchanged list keeps its time" sh -c '[ "$(date -r "$1" +%Y)" = 2000 ]' _ "$e2e_tmp/out.h"

# bad NAME 'FILE TEXT' 'EXPECTED MESSAGE': the generator fails and says so.
bad() {
	printf '%s\n' "$2" >"$e2e_tmp/bad.c"
	cp "$e2e_tmp/out.h" "$e2e_tmp/before.h"
	if gen "$e2e_tmp/bad.c" 2>"$e2e_tmp/err"; then
		not_ok "$1" "exit status 0"
	elif ! grep -qF -- "$3" "$e2e_tmp/err"; then
		not_ok "$1" "message: $(tr '\n' '|' <"$e2e_tmp/err")"
	elif ! cmp -s "$e2e_tmp/before.h" "$e2e_tmp/out.h"; then
		not_ok "$1" "the old list was replaced"
	else
		ok "$1"
	fi
}
bad "same group and order" 'HP_CHECK(a, HP_GROUP_VPC, 10, .id = "x.a");
HP_CHECK(b, HP_GROUP_VPC, 10, .id = "x.b");' "bad.c:2: b has the same group and order as a (${e2e_tmp}/bad.c:1)"
bad "same name twice" 'HP_CHECK(a, HP_GROUP_VPC, 10, .id = "x.a");
HP_CHECK(a, HP_GROUP_VPC, 20, .id = "x.b");' "bad.c:2: a second check named a"
bad "unknown group" 'HP_CHECK(a, HP_GROUP_NOPE, 10, .id = "x.a");' "bad.c:1: unknown report group HP_GROUP_NOPE"
bad "order not a number" 'HP_CHECK(a, HP_GROUP_VPC, TEN, .id = "x.a");' 'bad.c:1: expected "HP_CHECK(name, HP_GROUP_X, order," on one line'
bad "arguments split over lines" 'HP_CHECK(a,
	HP_GROUP_VPC, 10, .id = "x.a");' 'bad.c:1: expected "HP_CHECK(name, HP_GROUP_X, order," on one line'
bad "indented row" '	HP_CHECK(a, HP_GROUP_VPC, 10, .id = "x.a");' "bad.c:1: an HP_CHECK row starts at the beginning of a line"
bad "no rows at all" 'int x;' "no HP_CHECK rows"

e2e_done
