# The framing both on-node probes print (probe.sh, nccl-probe.sh): the
# build puts this file where either script says "#@include frame.sh", so
# each travels to the node as one self-contained POSIX sh script.
#
#   @@HP@@ BEGIN <block>
#   <the command's output, through a filter that bounds it>
#   @@HP@@ END <block> <exit status>      (127: not installed, 124: timed out)
#
# Not a script of its own: it only defines functions.

# have CMD: CMD is installed.
have() {
	command -v "$1" >/dev/null 2>&1
}

# lim CMD ARGS...: CMD with stderr joined to stdout, stopped after 10 s
# when timeout(1) exists.
lim() {
	if [ -n "$HP_TMO" ]; then
		timeout -k 2 10 "$@" 2>&1
	else
		"$@" 2>&1
	fi
}

# block NAME FILTER CMD ARGS...: one framed block holding CMD's output
# through FILTER; HP_RC is left holding CMD's exit status.
block() {
	hp_n=$1
	hp_f=$2
	shift 2
	echo "@@HP@@ BEGIN $hp_n"
	HP_RC=$( { { "$@" 3>&- 4>&-; echo "$?" >&3; } | "$hp_f" >&4; } 3>&1 )
	HP_RC=${HP_RC:-255}
	echo "@@HP@@ END $hp_n $HP_RC"
}

# absent NAME: the block of a command that is not installed.
absent() {
	echo "@@HP@@ BEGIN $1"
	echo "@@HP@@ END $1 127"
	HP_RC=127
}

# cmd NAME FILTER CMD ARGS...: block for an installed command, else absent.
cmd() {
	if have "$3"; then
		hp_c1=$1
		hp_c2=$2
		shift 2
		block "$hp_c1" "$hp_c2" lim "$@"
	else
		absent "$1"
	fi
}

keep() {
	head -n 400
}

keep_long() {
	head -n 3000
}
