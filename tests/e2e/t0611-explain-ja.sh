#!/bin/sh
# hpnode explain in Japanese: every Japanese guide (references/ja/) has its
# English guide's section ids, headings and fenced blocks (byte for byte:
# commands are not translated); --lang ja prints the Japanese section as
# the file has it; a ja_* locale chooses it with gettext's precedence
# (LC_ALL, then LC_MESSAGES, then LANG) and --lang en overrides it; --lang
# takes only en or ja; a Japanese guide that is not built in is printed in
# English after a one-line note. Findings stay English either way.
T=t0611-explain-ja
. "$(dirname "$0")/e2e-lib.sh"

JA=$ROOT/references/ja/node-diagnostics-detail.md
NCCL_JA=$ROOT/references/ja/nccl-diagnostics-detail.md
PY=$ROOT/tests/e2e/guide_ja.py

check "every Japanese guide has its English guide's ids and fenced blocks" python3 "$PY" "$ROOT"
check "the Japanese node guide is in the repository" test -s "$JA"

# --lang ja: the Japanese file's section, sub-sections included.
"$HPNODE" explain --lang ja A.1 >"$e2e_tmp/ja-a1.txt" 2>"$e2e_tmp/ja-a1.err"
expect_status "explain --lang ja A.1 exits 0" 0 $?
python3 "$PY" --section "$JA" A.1 >"$e2e_tmp/want-a1.txt"
check "explain --lang ja A.1 prints the Japanese file's § A.1" cmp "$e2e_tmp/want-a1.txt" "$e2e_tmp/ja-a1.txt"
check "... which is Japanese text" python3 "$PY" --japanese "$e2e_tmp/ja-a1.txt"
check "... and keeps the heading's id" grep -q "^### A.1: " "$e2e_tmp/ja-a1.txt"
check "... with nothing on stderr" test ! -s "$e2e_tmp/ja-a1.err"
"$HPNODE" explain --lang en A.1 >"$e2e_tmp/en-a1.txt" 2>&1
python3 "$PY" --section "$ROOT/references/node-diagnostics-detail.md" A.1 >"$e2e_tmp/want-en-a1.txt"
check "explain --lang en A.1 prints the English § A.1" cmp "$e2e_tmp/want-en-a1.txt" "$e2e_tmp/en-a1.txt"
check "... which is not Japanese" sh -c '! python3 "$1" --japanese "$2"' _ "$PY" "$e2e_tmp/en-a1.txt"
"$HPNODE" explain A.1 >"$e2e_tmp/plain-a1.txt" 2>&1
check "explain A.1 under LANG=C is English" cmp "$e2e_tmp/en-a1.txt" "$e2e_tmp/plain-a1.txt"
"$HPNODE" explain --lang ja g.1.A >"$e2e_tmp/ja-g1a.txt" 2>&1
python3 "$PY" --section "$JA" G.1.a >"$e2e_tmp/want-g1a.txt"
check "an id in any case finds the Japanese section too" cmp "$e2e_tmp/want-g1a.txt" "$e2e_tmp/ja-g1a.txt"

# The locale: gettext's order.
lang_is() { # WANT(en|ja) ENV...: explain A.1 under ENV prints the WANT section
	want=$1
	shift
	env "$@" "$HPNODE" explain A.1 >"$e2e_tmp/loc.txt" 2>&1 && cmp -s "$e2e_tmp/$want-a1.txt" "$e2e_tmp/loc.txt"
}
check "LANG=ja_JP.UTF-8 chooses Japanese" lang_is ja LANG=ja_JP.UTF-8
check "LANG=ja chooses Japanese" lang_is ja LANG=ja
check "LC_MESSAGES=ja_JP.UTF-8 beats LANG=C" lang_is ja LANG=C LC_MESSAGES=ja_JP.UTF-8
check "LC_ALL=ja_JP.eucJP beats LANG=en_US.UTF-8" lang_is ja LANG=en_US.UTF-8 LC_ALL=ja_JP.eucJP
check "LC_ALL=C beats LANG=ja_JP.UTF-8" lang_is en LANG=ja_JP.UTF-8 LC_ALL=C
check "LC_ALL=POSIX beats LC_MESSAGES=ja_JP.UTF-8" lang_is en LC_MESSAGES=ja_JP.UTF-8 LC_ALL=POSIX
check "LC_MESSAGES=en_GB.UTF-8 beats LANG=ja_JP.UTF-8" lang_is en LANG=ja_JP.UTF-8 LC_MESSAGES=en_GB.UTF-8
check "an empty LC_ALL is unset: LANG=ja_JP.UTF-8 decides" lang_is ja LC_ALL= LANG=ja_JP.UTF-8
check "LANG=jam_JM is not Japanese" lang_is en LANG=jam_JM.UTF-8
LC_ALL=ja_JP.UTF-8 "$HPNODE" explain --lang en A.1 >"$e2e_tmp/force-en.txt" 2>&1
check "--lang en beats LC_ALL=ja_JP.UTF-8" cmp "$e2e_tmp/en-a1.txt" "$e2e_tmp/force-en.txt"
LANG=C "$HPNODE" explain --lang ja A.1 >"$e2e_tmp/force-ja.txt" 2>&1
check "--lang ja beats LANG=C" cmp "$e2e_tmp/ja-a1.txt" "$e2e_tmp/force-ja.txt"

# --lang takes en or ja only.
for bad in fr JA ja_JP "" en,ja; do
	"$HPNODE" explain --lang "$bad" A.1 >"$e2e_tmp/bad.txt" 2>&1
	expect_status "--lang '$bad' is a usage error" 2 $?
	check "... that says what --lang takes" contains "$e2e_tmp/bad.txt" "--lang takes en or ja"
done
"$HPNODE" explain --lang >"$e2e_tmp/bad.txt" 2>&1
expect_status "--lang without a value is a usage error" 2 $?

# --list: the Japanese titles under the same ids.
"$HPNODE" explain --lang ja --list >"$e2e_tmp/list-ja.txt" 2>/dev/null
expect_status "explain --lang ja --list exits 0" 0 $?
"$HPNODE" explain --list >"$e2e_tmp/list-en.txt" 2>&1
check "--lang ja --list has the same ids in the same order" sh -c \
	'awk "{print \$1}" "$1" >"$1.ids"; awk "{print \$1}" "$2" >"$2.ids"; cmp "$1.ids" "$2.ids"' \
	_ "$e2e_tmp/list-ja.txt" "$e2e_tmp/list-en.txt"
check "--lang ja --list gives § A its Japanese title" sh -c \
	'grep "^A " "$1" >"$1.a"; python3 "$2" --japanese "$1.a"' _ "$e2e_tmp/list-ja.txt" "$PY"

# The NCCL guide: Japanese when references/ja/ has it, else English with one note.
"$HPNODE" explain --lang ja NC13 NC1 >"$e2e_tmp/nc.txt" 2>"$e2e_tmp/nc.err"
expect_status "explain --lang ja NC13 NC1 exits 0" 0 $?
if [ -f "$NCCL_JA" ]; then
	{ python3 "$PY" --section "$NCCL_JA" NC13; echo; python3 "$PY" --section "$NCCL_JA" NC1; } >"$e2e_tmp/want-nc.txt"
	check "the Japanese NCCL guide's sections are printed" cmp "$e2e_tmp/want-nc.txt" "$e2e_tmp/nc.txt"
	check "... with nothing on stderr" test ! -s "$e2e_tmp/nc.err"
else
	"$HPNODE" explain NC13 NC1 >"$e2e_tmp/want-nc.txt" 2>&1
	check "without a Japanese NCCL guide the English sections are printed" cmp "$e2e_tmp/want-nc.txt" "$e2e_tmp/nc.txt"
	check "... after one line on stderr" test "$(wc -l <"$e2e_tmp/nc.err")" -eq 1
	check "... that names the missing guide" contains "$e2e_tmp/nc.err" "references/ja/nccl-diagnostics-detail.md is not built in"
fi

# Errors and the log-pattern lines stay English.
"$HPNODE" explain --lang ja Q.9 >"$e2e_tmp/unknown.txt" 2>&1
expect_status "an unknown id is still a usage error in Japanese" 2 $?
check "... named in English" contains "$e2e_tmp/unknown.txt" "no section 'Q.9'"
"$HPNODE" explain --lang ja "fi_getinfo failed" >"$e2e_tmp/text.txt" 2>/dev/null
check "a log-pattern lookup keeps its English line" grep -q "matches the NCCL log pattern" "$e2e_tmp/text.txt"
e2e_done
