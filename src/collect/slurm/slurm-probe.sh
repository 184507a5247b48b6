# hpnode Slurm controller probe (POSIX sh). It only asks: slurmctld through
# scontrol, sinfo and squeue, and systemd about munge and slurmctld. It
# writes no file and changes no state. Each answer is framed as
#   @@HP@@ BEGIN <block> ... @@HP@@ END <block> <exit status>
# and the last line is @@HP@@ DONE. hpnode embeds this file and parses the
# blocks (src/collect/slurm/probe.c); each tool runs once, with stderr kept in its
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

echo "@@HP@@ DONE"
