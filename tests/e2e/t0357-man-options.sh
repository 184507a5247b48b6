#!/bin/sh
# The man page is the option reference: every command `hpnode --help` lists
# has its own paragraph, and every option a command's --help lists (its own
# rows and the shared ones) is in the man page, so neither can drift.
T=t0357-man-options
. "$(dirname "$0")/e2e-lib.sh"

man1=$ROOT/src/man/hpnode.1
# The options as the page spells them: groff's \- back to -.
sed -e 's/\\-/-/g' "$man1" >"$e2e_tmp/man.txt"

"$HPNODE" --help >"$e2e_tmp/help.txt" 2>&1
cmds=$(sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' "$e2e_tmp/help.txt")
check "hpnode --help lists commands" test -n "$cmds"
for c in $cmds; do
	check "the man page has a paragraph for '$c'" grep -qE "^\.(SS|TP|B|BR|IP) .*(^|[^a-z-])$c([^a-z-]|\$)" "$e2e_tmp/man.txt"
	"$HPNODE" "$c" --help >"$e2e_tmp/$c.txt" 2>&1
	# An option row starts with two spaces and a dash; a row may name several
	# options ("--text-file FILE, --json-file FILE").
	opts=$(grep -E '^  +-' "$e2e_tmp/$c.txt" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
	check "'$c --help' lists options" test -n "$opts"
	for o in $opts; do
		[ "$o" = --help ] && continue
		check "the man page documents $c's $o" grep -qE -- "$o([^a-z0-9-]|\$)" "$e2e_tmp/man.txt"
	done
done
e2e_done
