#!/bin/sh
# Packaging: `make install` into a temporary DESTDIR, the installed binary
# run against a fixture cluster, its man page read by man and groff, the
# bash and zsh completions loaded and asked for commands, options, --output
# values and section ids, `hpnode help CMD`, `--version`, `make uninstall`.
T=t0355-install
. "$(dirname "$0")/e2e-lib.sh"

dest=$e2e_tmp/dest
make -s -C "$ROOT" install PREFIX=/usr/local DESTDIR="$dest" INSTALL_BIN="$HPNODE" >"$e2e_tmp/install.txt" 2>&1
expect_status "make install into a DESTDIR" 0 $?
bin=$dest/usr/local/bin/hpnode
man1=$dest/usr/local/share/man/man1/hpnode.1
bashc=$dest/usr/local/share/bash-completion/completions/hpnode
zshc=$dest/usr/local/share/zsh/site-functions/_hpnode
docs=$dest/usr/local/share/doc/hpnode
for f in "$bin" "$man1" "$bashc" "$zshc"; do
	check "installed: ${f#"$dest"}" test -s "$f"
done
# The guides a report's pointers name, and the check and usage references, as the repository has them.
for g in node-diagnostics-detail.md nccl-diagnostics-detail.md checks.md usage.md; do
	check "installed: /usr/local/share/doc/hpnode/$g, the repository's copy" cmp "$ROOT/references/$g" "$docs/$g"
done
for g in "$ROOT"/references/ja/*.md; do
	check "installed: /usr/local/share/doc/hpnode/ja/${g##*/}, the repository's copy" cmp "$g" "$docs/ja/${g##*/}"
done
check "the binary is executable" test -x "$bin"
check "hpnode completion bash prints the installed bash completion" sh -c '"$1" completion bash | cmp -s - "$2"' _ "$bin" "$bashc"
check "hpnode completion zsh prints the installed zsh completion" sh -c '"$1" completion zsh | cmp -s - "$2"' _ "$bin" "$zshc"
"$bin" completion fish >/dev/null 2>&1
expect_status "hpnode completion fish: usage error" 2 $?

# The installed binary works on its own (the guide is built in).
fixture_start "$ROOT/tests/fixtures/demo.yaml" || { not_ok "demo fixture starts" "see messages above"; e2e_done; }
(cd / && "$bin" triage --cluster "$FIXTURE_CLUSTER" --no-probe --no-kube --no-color) >"$e2e_tmp/triage.txt" 2>&1
expect_status "the installed binary triages the fixture cluster" 0 $?
check "its report has the header" grep -q "^Tool: hpnode " "$e2e_tmp/triage.txt"
fixture_stop
check "explain works from the installed binary" sh -c '"$1" explain A.1 | grep -q "Self-Referencing"' _ "$bin"
check "... in Japanese too (the Japanese guide is built in)" sh -c \
	'"$1" explain --lang ja A.1 2>&1 | grep -q "^### A.1: セキュリティグループ"' _ "$bin"

# --version and help.
"$bin" --version >"$e2e_tmp/version.txt"
check "--version: version and revision" grep -qE "^hpnode [0-9]+\.[0-9]+\.[0-9]+( revision [0-9a-f]+(\+dirty)?)?$" "$e2e_tmp/version.txt"
for lib in "^libcurl [0-9]" "^OpenSSL [0-9]" "^cJSON [0-9]" "^libyaml [0-9]" "^expat_[0-9]"; do
	check "--version names $lib" grep -qE "$lib" "$e2e_tmp/version.txt"
done
for c in triage efa-sg vpc node explain; do
	"$bin" help $c >"$e2e_tmp/help1.txt" 2>&1
	"$bin" $c --help >"$e2e_tmp/help2.txt" 2>&1
	check "hpnode help $c = hpnode $c --help" cmp "$e2e_tmp/help1.txt" "$e2e_tmp/help2.txt"
done
"$bin" help nosuch >/dev/null 2>&1
expect_status "hpnode help of an unknown command: exit 2" 2 $?

# The man page: the usual sections, read by man and groff without warnings.
check "the man page says where the guides are installed" grep -q 'share/doc/hpnode' "$man1"
for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES; do
	check "man page section $s" grep -q "^\.SH \"*$s\"*\$" "$man1"
done
if command -v groff >/dev/null 2>&1; then
	check "groff -ww -man: no warning" sh -c 'w=$(groff -ww -man -Tutf8 "$1" 2>&1 >/dev/null); [ -z "$w" ] || { echo "$w"; exit 1; }' _ "$man1"
else
	not_ok "groff -ww" "groff not installed (make deps)"
fi
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man -l "$man1" >"$e2e_tmp/man.txt" 2>"$e2e_tmp/man.err"
	expect_status "man -l renders the page" 0 $?
	check "man -l: EXIT STATUS lists 130" grep -q "130" "$e2e_tmp/man.txt"
	check "man -l: the fleet command and its options" sh -c "grep -q 'hpnode fleet \[--regions' '$e2e_tmp/man.txt' && grep -q -- '--parallel N' '$e2e_tmp/man.txt' && grep -q -- '--probe-share N' '$e2e_tmp/man.txt'"
	check "man -l: no warning" test ! -s "$e2e_tmp/man.err"
else
	not_ok "man -l" "man not installed (make deps)"
fi

# Completions load and complete.
PATH=$dest/usr/local/bin:$PATH
export PATH
check "bash completion loads and completes commands, options, --output, section ids, diff" bash -c '
. "$1" || exit 1
complete -p hpnode >/dev/null || exit 1
COMP_WORDS=(hpnode ""); COMP_CWORD=1; _hpnode
[[ " ${COMPREPLY[*]} " == *" triage "* && " ${COMPREPLY[*]} " == *" explain "* ]] || { echo "commands: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode triage --junit); COMP_CWORD=2; _hpnode
[ "${COMPREPLY[*]}" = "--junit-file" ] || { echo "options: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode triage --output ""); COMP_CWORD=3; _hpnode
[ "${COMPREPLY[*]}" = "text json junit" ] || { echo "output: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode explain G.1.); COMP_CWORD=2; _hpnode
[ "${COMPREPLY[*]}" = "G.1.a G.1.b G.1.c G.1.d" ] || { echo "ids: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode explain --lang ""); COMP_CWORD=3; _hpnode
[ "${COMPREPLY[*]}" = "en ja" ] || { echo "lang: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode di); COMP_CWORD=1; _hpnode
[ "${COMPREPLY[*]}" = "diff" ] || { echo "diff: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode diff --output ""); COMP_CWORD=3; _hpnode
[ "${COMPREPLY[*]}" = "text json junit" ] || { echo "diff output: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode diff --fail-on-new P); COMP_CWORD=3; _hpnode
[ "${COMPREPLY[*]}" = "P0 P1 P2" ] || { echo "fail-on-new: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode triage --base); COMP_CWORD=2; _hpnode
[ "${COMPREPLY[*]}" = "--baseline" ] || { echo "baseline: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode fl); COMP_CWORD=1; _hpnode
[ "${COMPREPLY[*]}" = "fleet" ] || { echo "fleet: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode fleet --regi); COMP_CWORD=2; _hpnode
[ "${COMPREPLY[*]}" = "--region --regions" ] || { echo "fleet options: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode fleet --regions ""); COMP_CWORD=3; _hpnode
[ "${COMPREPLY[*]}" = "all" ] || { echo "regions: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode fleet --output ""); COMP_CWORD=3; _hpnode
[ "${COMPREPLY[*]}" = "text json" ] || { echo "fleet output: ${COMPREPLY[*]}"; exit 1; }
COMP_WORDS=(hpnode watch --probe-s); COMP_CWORD=2; _hpnode
[ "${COMPREPLY[*]}" = "--probe-share" ] || { echo "probe-share: ${COMPREPLY[*]}"; exit 1; }
' _ "$bashc"
if command -v zsh >/dev/null 2>&1; then
	check "zsh completion loads (compinit, fpath) without error" zsh -fc '
fpath=("$1" $fpath)
autoload -Uz compinit && compinit -u -d "$2/zcompdump" || exit 1
autoload -Uz _hpnode || exit 1
[[ ${_comps[hpnode]} == _hpnode ]] || { print "not registered: ${_comps[hpnode]}"; exit 1; }
zsh -n "$1/_hpnode"
' _ "${zshc%/*}" "$e2e_tmp"
	check "zsh completion offers commands, --output values and section ids" zsh -fc '
typeset -a got
compadd() { [[ $1 == -- ]] && shift; got+=("$@"); }
_files() { got+=(FILES); }
PREFIX=""
words=(hpnode ""); CURRENT=2; got=(); source "$1"
[[ " ${got[*]} " == *" triage "* ]] || { print "commands: $got"; exit 1; }
words=(hpnode triage --output ""); CURRENT=4; got=(); source "$1"
[[ "${got[*]}" == "text json junit" ]] || { print "output: $got"; exit 1; }
words=(hpnode explain ""); CURRENT=3; got=(); source "$1"
[[ " ${got[*]} " == *" G.1.a "* ]] || { print "ids: $got"; exit 1; }
words=(hpnode explain --lang ""); CURRENT=4; got=(); source "$1"
[[ "${got[*]}" == "en ja" ]] || { print "lang: $got"; exit 1; }
words=(hpnode diff --output ""); CURRENT=4; got=(); source "$1"
[[ "${got[*]}" == "text json junit" ]] || { print "diff output: $got"; exit 1; }
words=(hpnode diff ""); CURRENT=3; got=(); source "$1"
[[ "${got[*]}" == "FILES" ]] || { print "diff files: $got"; exit 1; }
words=(hpnode fleet --output ""); CURRENT=4; got=(); source "$1"
[[ "${got[*]}" == "text json" ]] || { print "fleet output: $got"; exit 1; }
words=(hpnode fleet --regions ""); CURRENT=4; got=(); source "$1"
[[ "${got[*]}" == "all" ]] || { print "regions: $got"; exit 1; }
words=(hpnode ""); CURRENT=2; got=(); source "$1"
[[ " ${got[*]} " == *" fleet "* ]] || { print "commands without fleet: $got"; exit 1; }
' _ "$zshc"
else
	not_ok "zsh completion" "zsh not installed (make deps)"
fi

make -s -C "$ROOT" uninstall PREFIX=/usr/local DESTDIR="$dest" >/dev/null 2>&1
expect_status "make uninstall" 0 $?
check "make uninstall removes every installed file" sh -c '[ -z "$(find "$1" -type f)" ]' _ "$dest"
e2e_done
