#!/bin/sh
# The parts of hpnode include each other in one direction only. The
# #include "..." lines of src/ and include/ are read and checked against
# the table below; the script then proves it can fail by running the same
# check on copies of the tree with one bad include each.
#
#   util     may include  util
#   core     may include  util, core
#   collect  may include  util, core, collect
#   checks   may include  util, core            (checks read facts, never collectors)
#   report   may include  util, core, report
#   cli      may include  util, core, collect, report, cli
#
# A part's source file is its folder (src/<part>/...); a public header's part
# is its row in HEADERS (a header missing from the table fails, and so does
# a row for a header that no longer exists). An include without the hp/
# prefix names a private header, which must sit in the including file's own
# folder, or one of the generated headers in GENERATED, each included only
# by the files listed for it.
T=t0050-layers
. "$(dirname "$0")/e2e-lib.sh"

HEADERS='
util     array.h buf.h err.h iso8601.h json.h pool.h sys.h tar.h text.h util.h
core     check.h facts.h nccl-facts.h redact.h refdoc.h snapshot.h
collect  aws.h bundle.h collect.h creds.h kube.h probe.h profile.h s3.h sigv4.h slurm.h ssm.h tasks.h
report   report.h suggest.h
cli      cmd.h
'

ALLOWED='
util     util
core     util core
collect  util core collect
checks   util core
report   util core report
cli      util core collect report cli
'

# Generated at build time (build/*/gen): header, then the files that may include it.
GENERATED='
hp_refdoc.h        src/core/refdoc.c
hp_probe.h         src/collect/probe/node-probe.c
hp_slurm_probe.h   src/collect/slurm/slurm-probe.c
hp_nccl_probe.h    src/collect/probe/nccl-probe.c
hp_revision.h      src/cli/version.c
hp_completion.h    src/cli/cmd-completion.c
hp_checks.h        src/checks/registry.c
'

# layers_check DIR: prints one line per broken rule; status 1 when any.
layers_check() {
	(
		cd "$1" || exit 2
		find src include -name '*.[ch]' | LC_ALL=C sort >"$e2e_tmp/files.$$"
		# FILE<TAB>INCLUDED for every #include "..." line (leading blanks allowed).
		while IFS= read -r f; do
			sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
				while IFS= read -r inc; do printf '%s\t%s\n' "$f" "$inc"; done
		done <"$e2e_tmp/files.$$" >"$e2e_tmp/incs.$$"
		awk -F '\t' -v headers="$HEADERS" -v allowed="$ALLOWED" -v generated="$GENERATED" '
		function words(text, kind,    lines, i, n, w, k, j) {
			n = split(text, lines, "\n")
			for (i = 1; i <= n; i++) {
				k = split(lines[i], w, /[ \t]+/)
				for (j = 2; j <= k; j++) {
					if (w[j] == "")
						continue
					if (kind == "h")
						layer[w[j]] = w[1]
					else if (kind == "a")
						may[w[1] " " w[j]] = 1
					else
						gen[w[1] " " w[j]] = 1
				}
				if (kind == "a" && w[1] != "")
					may_list[w[1]] = substr(lines[i], index(lines[i], w[2]))
				if (kind == "g" && w[1] != "")
					is_gen[w[1]] = 1
			}
		}
		function dir(p) { sub(/\/[^\/]*$/, "", p); return p }
		function part(f,    p) {
			if (f ~ /^include\/hp\/[^\/]*\.h$/) {
				p = substr(f, 12)
				return (p in layer) ? layer[p] : ""
			}
			if (match(f, /^src\/(util|core|collect|checks|report|cli)\//))
				return substr(f, 5, RLENGTH - 5)
			return ""
		}
		function bad(msg) { print msg; failed = 1 }
		BEGIN {
			words(headers, "h"); words(allowed, "a"); words(generated, "g")
		}
		# First file: the list of files in the tree.
		FNR == NR {
			exists[$1] = 1
			if ($1 ~ /^include\/hp\// && !(substr($1, 12) in layer))
				bad($1 ": not in the layer table of tests/e2e/t0050-layers.sh")
			else if ($1 ~ /^src\// && part($1) == "")
				bad($1 ": not in a known part (src/util, core, collect, checks, report, cli)")
			next
		}
		{
			f = $1; inc = $2; p = part(f)
			if (p == "")
				next
			if (inc ~ /^hp\//) {
				h = substr(inc, 4)
				if (!(h in layer))
					bad(f ": includes " inc ", which is not in the layer table")
				else if (!((p " " layer[h]) in may))
					bad(f " (" p ") includes " inc " (" layer[h] "): " p " may include " \
					    may_list[p])
			} else if (inc in is_gen) {
				if (!((inc " " f) in gen))
					bad(f ": includes the generated " inc ", which only its listed files may")
			} else if (f ~ /^include\//) {
				bad(f ": a public header includes \"" inc "\" (only hp/ headers)")
			} else if (!((dir(f) "/" inc) in exists)) {
				bad(f ": includes \"" inc "\", which is not a header of its own folder " \
				    "(another part'"'"'s private header?)")
			}
		}
		END {
			for (h in layer)
				if (!(("include/hp/" h) in exists))
					bad("the layer table names hp/" h ", which does not exist")
			exit failed
		}' "$e2e_tmp/files.$$" "$e2e_tmp/incs.$$"
	)
}

check "the source tree keeps its layers" layers_check "$ROOT"

# const_check DIR: no code casts a const snapshot to a writable one, so what
# the checks and the reporter are handed (const) is never written through:
# the facts they read were prepared before them (hp_facts_prepare).
const_check() {
	if grep -rnE '\(struct hp_snapshot[[:space:]]*\*[[:space:]]*\)' "$1/src" "$1/include"; then
		echo "a const snapshot is cast to a writable one"
		return 1
	fi
	return 0
}
check "the core never writes through a const snapshot" const_check "$ROOT"
rm -rf "$e2e_tmp/ctree"
mkdir -p "$e2e_tmp/ctree"
cp -R "$ROOT/src" "$ROOT/include" "$e2e_tmp/ctree/"
printf '%s\n' 'static void f(const struct hp_snapshot *s) { ((struct hp_snapshot *)s)->facts = 0; }' \
	>>"$e2e_tmp/ctree/src/core/facts/cache.c"
if const_check "$e2e_tmp/ctree" >/dev/null 2>&1; then
	not_ok "fails when a const snapshot is cast to writable" "the check passed"
else
	ok "fails when a const snapshot is cast to writable"
fi

# The check fails on each kind of bad include (a copy of src/ and include/ each time).
# bad_tree WHAT FILE LINE EXPECT: FILE gets LINE appended; the check must fail saying EXPECT.
bad_tree() {
	what=$1 file=$2 line=$3 expect=$4
	rm -rf "$e2e_tmp/tree"
	mkdir -p "$e2e_tmp/tree"
	cp -R "$ROOT/src" "$ROOT/include" "$e2e_tmp/tree/"
	mkdir -p "$(dirname "$e2e_tmp/tree/$file")"
	printf '%s\n' "$line" >>"$e2e_tmp/tree/$file"
	if out=$(layers_check "$e2e_tmp/tree" 2>&1); then
		not_ok "fails when $what" "the check passed"
	elif printf '%s' "$out" | grep -qF -- "$expect"; then
		ok "fails when $what"
	else
		not_ok "fails when $what" "expected '$expect' in: $(printf '%s' "$out" | head -c 600)"
	fi
}

bad_tree "a check includes a collector header" src/checks/kube.c '#include "hp/kube.h"' \
	"src/checks/kube.c (checks) includes hp/kube.h (collect)"
bad_tree "a check includes a report header" src/checks/api.c '#include "hp/report.h"' \
	"src/checks/api.c (checks) includes hp/report.h (report)"
bad_tree "a collector includes a report header" src/collect/kube/read.c '#include "hp/suggest.h"' \
	"src/collect/kube/read.c (collect) includes hp/suggest.h (report)"
bad_tree "the report includes a collector header" src/report/report.c '  #  include "hp/ssm.h"' \
	"src/report/report.c (report) includes hp/ssm.h (collect)"
bad_tree "the core includes a cli header" src/core/facts/cache.c '#include "hp/cmd.h"' \
	"src/core/facts/cache.c (core) includes hp/cmd.h (cli)"
bad_tree "the core includes a collector header" include/hp/facts.h '#include "hp/probe.h"' \
	"include/hp/facts.h (core) includes hp/probe.h (collect)"
bad_tree "util includes the core" src/util/json.c '#include "hp/snapshot.h"' \
	"src/util/json.c (util) includes hp/snapshot.h (core)"
bad_tree "a check includes another part's private header" src/checks/node-gpu.c \
	'#include "probe-int.h"' "src/checks/node-gpu.c: includes \"probe-int.h\""
bad_tree "a header is missing from the table" include/hp/new.h '/* new */' \
	"include/hp/new.h: not in the layer table"
bad_tree "a generated header is included elsewhere" src/checks/api.c '#include "hp_probe.h"' \
	"src/checks/api.c: includes the generated hp_probe.h"

e2e_done
