# hpnode Slurm controller probe (POSIX sh). It only asks: slurmctld through
# scontrol, sinfo and squeue, and systemd about munge and slurmctld. It
# writes no file and changes no state. Each answer is framed as
#   @@HP@@ BEGIN <block> ... @@HP@@ END <block> <exit status>
# and the last line is @@HP@@ DONE. hpnode embeds this file and parses the
# blocks (src/collect/slurm/slurm-probe.c); each tool runs once, with stderr kept in its
# block so a failure says why.

# HyperPod installs Slurm under /opt/slurm/bin.
PATH="$PATH:/opt/slurm/bin"
LC_ALL=C
export PATH LC_ALL

if command -v timeout >/dev/null 2>&1; then
	hp_limit="timeout 30"
else
	hp_limit=""
fi

# hp_block NAME COMMAND...: the command's output (at most 20000 lines) and status.
hp_block() {
	hp_name=$1
	shift
	echo "@@HP@@ BEGIN $hp_name"
	hp_out=$($hp_limit "$@" 2>&1)
	hp_rc=$?
	if [ -n "$hp_out" ]; then
		printf '%s\n' "$hp_out" | head -n 20000
	fi
	echo "@@HP@@ END $hp_name $hp_rc"
}

echo "@@HP@@ BEGIN meta"
echo "now_epoch=$(date +%s 2>/dev/null)"
echo "now_local=$(date +%Y-%m-%dT%H:%M:%S 2>/dev/null)"
echo "host=$(hostname 2>/dev/null || uname -n 2>/dev/null)"
echo "@@HP@@ END meta 0"

# Is slurmctld answering? ("Slurmctld(primary) at <host> is UP")
hp_block ping scontrol ping

# Every node once per partition: name | state (with flag suffixes) | reason.
hp_block sinfo sinfo --Node --noheader --format='%N|%T|%E'

# Only jobs that may be stuck: id | state | end time | start time | nodes | name.
hp_block squeue squeue --noheader --states=COMPLETING,CONFIGURING --format='%i|%T|%e|%S|%N|%j'

hp_block services systemctl show --property=Id --property=LoadState --property=ActiveState \
	--property=SubState munge.service slurmctld.service

# The NCCL, libfabric and rendezvous settings every job gets (hpnode nccl): the
# profile scripts, /etc/environment, nccl.conf and the prolog scripts (the
# prolog.d directories and the Prolog= of slurm.conf). Only the matching
# lines, "file:line"; `export NAME=...` and `NAME=...` both count. Files are
# read below ${HPNODE_PROBE_ROOT} (empty on a real node).
hp_r=${HPNODE_PROBE_ROOT:-}
echo "@@HP@@ BEGIN nccl_env"
hp_prolog=$(sed -n 's/^[[:space:]]*Prolog[[:space:]]*=[[:space:]]*//p' \
	"$hp_r/opt/slurm/etc/slurm.conf" "$hp_r/etc/slurm/slurm.conf" 2>/dev/null | head -n 4 | tr ',' ' ')
for hp_f in "$hp_r"/etc/profile.d/*.sh "$hp_r/etc/environment" "$hp_r/opt/ml/config/nccl.conf" \
	"$hp_r"/etc/slurm/prolog.d/*.sh "$hp_r"/opt/slurm/etc/prolog.d/*.sh $hp_prolog; do
	case $hp_f in "$hp_r"/*) ;; *) hp_f=$hp_r$hp_f ;; esac
	[ -f "$hp_f" ] || continue
	echo "file ${hp_f#"$hp_r"}"
	grep -E '^[[:space:]]*(export[[:space:]]+)?(NCCL_|FI_|MASTER_)[A-Z0-9_]*=' "$hp_f" 2>/dev/null |
		head -n 50 | sed "s|^|${hp_f#"$hp_r"}:|"
done 2>/dev/null | head -n 300
echo "@@HP@@ END nccl_env 0"

# hpnode nccl --job ID: the job as slurmctld knows it, one record a line
# (an array job: one per task), then the tail of each distinct StdOut and
# StdErr file it names, read here as they are on shared storage. HP_SLURM_JOB
# is set by hpnode on the line before this script (digits, an optional
# _task); nothing is read without it. Only regular files are read, never a
# link; a path still holding a %-pattern is reported, not guessed.
if [ -n "${HP_SLURM_JOB:-}" ]; then
	case $HP_SLURM_JOB in
	*[!0-9_]* | _* | *_ | *_*_*) echo "@@HP@@ BEGIN job"; echo "hpnode: bad job id"; echo "@@HP@@ END job 2" ;;
	*)
		hp_block job scontrol show job -o "$HP_SLURM_JOB"
		printf '%s\n' "$hp_out" | tr ' ' '\n' | sed -n -e 's/^StdOut=//p' -e 's/^StdErr=//p' |
			grep '^/' | awk '!seen[$0]++' | head -n 8 | while IFS= read -r hp_p; do
			echo "@@HP@@ BEGIN joblog"
			echo "path $hp_p"
			hp_f=$hp_r$hp_p
			case $hp_p in
			*%*) echo "status pattern" ;;
			*)
				if [ -L "$hp_f" ]; then
					echo "status link"
				elif [ ! -e "$hp_f" ]; then
					echo "status missing"
				elif [ ! -f "$hp_f" ] || [ ! -r "$hp_f" ]; then
					echo "status unreadable"
				else
					echo "status read"
					# A line of the log never passes for a marker of this output.
					$hp_limit tail -c 1048576 "$hp_f" 2>/dev/null | tail -n 500 | sed 's/@@HP@@/@@hp@@/g'
				fi ;;
			esac
			echo "@@HP@@ END joblog 0"
		done ;;
	esac
fi

echo "@@HP@@ DONE"
