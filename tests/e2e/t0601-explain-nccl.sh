#!/bin/sh
# hpnode explain on the NCCL guide (references/nccl-diagnostics-detail.md):
# every NC id prints exactly the file's section, sub-sections included; ids
# of both guides mix in one call; an unknown NC id names the closest NC ids
# and the NCCL guide, never a node-guide section; no id of one guide is a
# section of the other; the shell completions offer the NC ids.
T=t0601-explain-nccl
. "$(dirname "$0")/e2e-lib.sh"

DOC=$ROOT/references/nccl-diagnostics-detail.md
NODE_DOC=$ROOT/references/node-diagnostics-detail.md

# section_of FILE ID: the file's text of section ID, found independently of
# hpnode (heading up to the next heading of its level or above, outside
# fenced blocks, trailing blank lines dropped).
section_of() {
	awk -v id="$2" '
		/^```/ { fence = !fence }
		!fence && /^#+ / {
			match($0, /^#+/)
			lvl = RLENGTH
			if (on && lvl <= level)
				exit
			if (!on && substr($0, lvl + 2, length(id) + 2) == id ": ") {
				on = 1
				level = lvl
			}
		}
		on { buf[++k] = $0 }
		END {
			while (k > 0 && buf[k] ~ /^[ \t]*$/)
				k--
			for (i = 1; i <= k; i++)
				print buf[i]
		}' "$1"
}

heading_ids() { # FILE: every "## <ID>: " heading's id outside fences, in order
	awk '/^```/ { f = !f } !f && /^#+ [A-Z][A-Za-z0-9.]*: / { sub(/^#+ /, ""); sub(/:.*/, ""); print }' "$1"
}

heading_ids "$DOC" >"$e2e_tmp/nc-ids"
heading_ids "$NODE_DOC" >"$e2e_tmp/node-ids"
if [ "$(wc -l <"$e2e_tmp/nc-ids")" -ge 25 ]; then ok "the NCCL guide has its sections ($(wc -l <"$e2e_tmp/nc-ids"))"
else not_ok "the NCCL guide has its sections" "only $(wc -l <"$e2e_tmp/nc-ids") headings"; fi

bad=$(grep -v -E '^NC[0-9]+(\.[0-9]+)?$' "$e2e_tmp/nc-ids" | tr '\n' ' ')
if [ -z "$bad" ]; then ok "every NCCL guide heading id has the NC form"
else not_ok "every NCCL guide heading id has the NC form" "others: $bad"; fi
bad=$(grep -v -E '^[A-Z](\.[0-9]+(\.[a-z])?)?$' "$e2e_tmp/node-ids" | tr '\n' ' ')
if [ -z "$bad" ]; then ok "every node guide heading id has the letter form"
else not_ok "every node guide heading id has the letter form" "others: $bad"; fi
both=$(sort "$e2e_tmp/nc-ids" "$e2e_tmp/node-ids" | uniq -d | tr '\n' ' ')
if [ -z "$both" ]; then ok "no section id is in both guides"
else not_ok "no section id is in both guides" "$both"; fi

bad=""
for id in $(cat "$e2e_tmp/nc-ids"); do
	section_of "$DOC" "$id" >"$e2e_tmp/want"
	"$HPNODE" explain "$id" >"$e2e_tmp/got" 2>&1 || bad="$bad $id(exit)"
	cmp -s "$e2e_tmp/want" "$e2e_tmp/got" || bad="$bad $id"
done
if [ -z "$bad" ]; then ok "explain NC<n> prints the file's section, sub-sections included, for every id"
else not_ok "explain NC<n> prints the file's section for every id" "differs:$bad"; fi

section_of "$DOC" NC17 >"$e2e_tmp/want"
"$HPNODE" explain nc17 >"$e2e_tmp/got"
check "explain ignores the case of an NC id" cmp "$e2e_tmp/want" "$e2e_tmp/got"
check "NC17 holds its sub-sections" grep -q '^### NC17.1: /dev/shm Size$' "$e2e_tmp/got"
"$HPNODE" explain '§ NC17.1' >"$e2e_tmp/got"
section_of "$DOC" NC17.1 >"$e2e_tmp/want"
check "explain accepts the pointer's '§ NC17.1' form" cmp "$e2e_tmp/want" "$e2e_tmp/got"

{ section_of "$DOC" NC13; echo; section_of "$NODE_DOC" A.1; } >"$e2e_tmp/want"
"$HPNODE" explain 'NC13+A.1' >"$e2e_tmp/got"
check "explain NC13+A.1 prints a section of each guide" cmp "$e2e_tmp/want" "$e2e_tmp/got"
{ section_of "$NODE_DOC" G.1.a; echo; section_of "$DOC" NC21; } >"$e2e_tmp/want"
"$HPNODE" explain G.1.a NC21 >"$e2e_tmp/got"
check "explain G.1.a NC21 prints both, in order" cmp "$e2e_tmp/want" "$e2e_tmp/got"

"$HPNODE" explain NC99 >"$e2e_tmp/u.out" 2>"$e2e_tmp/u.err"
expect_status "explain of an unknown NC id exits 2" 2 $?
check "unknown NC id: nothing on stdout" test ! -s "$e2e_tmp/u.out"
check "unknown NC id: names the NCCL guide" contains "$e2e_tmp/u.err" \
	"no section 'NC99' in references/nccl-diagnostics-detail.md"
check "unknown NC id: the closest NC ids are named" contains "$e2e_tmp/u.err" "NC9 (NCCL RAS"
if grep 'closest:' "$e2e_tmp/u.err" | grep -qE '(^|[ ,])[A-Z](\.[0-9]+)? \('; then
	not_ok "unknown NC id: no node guide section is offered" "$(cat "$e2e_tmp/u.err")"
else
	ok "unknown NC id: no node guide section is offered"
fi
"$HPNODE" explain N.9 >"$e2e_tmp/u.out" 2>"$e2e_tmp/u.err"
expect_status "explain of an unknown node id exits 2" 2 $?
check "unknown node id: names the node guide only" contains "$e2e_tmp/u.err" \
	"no section 'N.9' in references/node-diagnostics-detail.md"
check "unknown node id: no NC id is offered" lacks "$e2e_tmp/u.err" " NC"
"$HPNODE" explain RemoveIPC >/dev/null 2>"$e2e_tmp/w.err"
expect_status "explain of a word exits 2" 2 $?
check "a word finds the NCCL section with it in its title" contains "$e2e_tmp/w.err" \
	"NC15 (Stale Shared Memory and RemoveIPC)"
check "a word names both guides" contains "$e2e_tmp/w.err" \
	"in references/node-diagnostics-detail.md or references/nccl-diagnostics-detail.md"

"$HPNODE" explain --list >"$e2e_tmp/list.txt"
check "explain --list shows NCCL titles" grep -q '^NC13    EFA TCP Fallback$' "$e2e_tmp/list.txt"
check "explain --list indents NCCL sub-sections" grep -q '^NC17.1    /dev/shm Size$' "$e2e_tmp/list.txt"
"$HPNODE" explain --help >"$e2e_tmp/help.txt"
check "explain --help names both guides" sh -c \
	"grep -q 'node-diagnostics-detail.md' '$e2e_tmp/help.txt' && grep -q 'nccl-diagnostics-detail.md' '$e2e_tmp/help.txt'"

# The bash completion reads the ids from the binary: NC ids are offered.
if command -v bash >/dev/null 2>&1; then
	out=$(bash -c '. "$1/src/completion/hpnode.bash"
		COMP_WORDS=("$2" explain NC1); COMP_CWORD=2
		_hpnode; printf "%s\n" "${COMPREPLY[@]}"' _ "$ROOT" "$HPNODE" 2>&1)
	case " $(echo $out) " in
	*" NC13 "*" NC17.1 "*) ok "bash completion offers NC ids after 'explain NC1'" ;;
	*) not_ok "bash completion offers NC ids after 'explain NC1'" "$out" ;;
	esac
fi

# Every NC id the NCCL sources name exists in the guide.
grep -ho '"NC[0-9][0-9.]*"' "$ROOT"/src/core/nccl-patterns.c "$ROOT"/src/collect/nccl-read.c 2>/dev/null |
	tr -d '"' | sort -u >"$e2e_tmp/named"
bad=""
for s in $(cat "$e2e_tmp/named"); do
	"$HPNODE" explain "$s" >/dev/null 2>&1 || bad="$bad $s"
done
if [ -z "$bad" ] && grep -qx NC13 "$e2e_tmp/named"; then
	ok "every NC id in the pattern table exists in the guide ($(tr '\n' ' ' <"$e2e_tmp/named"))"
else
	not_ok "every NC id in the pattern table exists in the guide" "missing:${bad:- none}"
fi

# ---- explain TEXT: an error string through the log scan's pattern table ----
for t in "fi_getinfo failed:EFA_INIT_FAIL:NC6" "NET/OFI Using TCP:EFA_TCP_FALLBACK:NC13" \
	"CUDA out of memory:CUDA_OOM:NC11"; do
	text=${t%%:*} rest=${t#*:} code=${rest%%:*} sec=${rest#*:}
	"$HPNODE" explain "$text" >"$e2e_tmp/t.out" 2>"$e2e_tmp/t.err"
	expect_status "explain '$text' exits 0" 0 $?
	check "explain '$text' names the pattern, its code and section, then prints § $sec" sh -c '
		head -1 "$1" | grep -qF "'"'"'$2'"'"' matches the NCCL log pattern '"'"'$2'"'"' ($3, " &&
		grep -q "^## $4: " "$1"' _ "$e2e_tmp/t.out" "$text" "$code" "$sec"
done
# A whole published log line (P27) finds its pattern inside it.
"$HPNODE" explain "[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available" >"$e2e_tmp/t.out" 2>&1
expect_status "explain of a whole log line exits 0" 0 $?
check "explain of a whole log line names the pattern it holds and prints § NC6" sh -c '
	grep -qF "matches the NCCL log pattern '"'"'fi_getinfo() call failed'"'"' (EFA_INIT_FAIL" "$1" &&
	grep -q "^## NC6: EFA Configuration" "$1"' _ "$e2e_tmp/t.out"
# A generic wrapper says the line before it names the cause.
"$HPNODE" explain "unhandled system error" >"$e2e_tmp/t.out" 2>&1
check "explain of a wrapper error says to look at the line before it" grep -qF \
	"a generic error: the line before it in the log names the cause" "$e2e_tmp/t.out"
e2e_done
