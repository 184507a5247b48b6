#!/bin/sh
# hpnode on-node probe. It only reads: every block is the raw output of one
# read-only command or file, and hpnode's parsers do all interpretation.
#
# Output framing, one block per source:
#   @@HP@@ BEGIN <block>
#   <raw lines>
#   @@HP@@ END <block> <exit status>
# and "@@HP@@ DONE" as the very last line. Exit status 127 means the
# command is not installed; 124 that it ran out of time.
#
# Every file is read below ${HPNODE_PROBE_ROOT} (empty on a real node), so a
# test can point the probe at a prepared directory tree.
#
# The whole script is one function, called with stdin from /dev/null: when
# it arrives as "... | sh", no command can swallow the rest of the script.

hp_probe() {
	R=${HPNODE_PROBE_ROOT:-}
	LC_ALL=C
	export LC_ALL
	# Tools that a non-login root shell may not have on its PATH.
	PATH=$PATH:$R/usr/sbin:$R/sbin:$R/usr/bin:$R/bin:$R/usr/local/bin:$R/opt/amazon/efa/bin:$R/opt/aws/neuron/bin
	export PATH
	if command -v timeout >/dev/null 2>&1; then HP_TMO=1; else HP_TMO=; fi
	# Kernel lines worth keeping; the parsers decide what each one means.
	HP_KPAT='Xid|NVRM|oom-kill|invoked oom-killer|[Oo]ut of memory|Killed process|Kernel panic|lockup|LOCKUP|blocked for more than|BUG: |NMI|Hardware Error|watchdog|(^|[^a-z])efa[^a-z]|EFA|[Nn]euron|NRT_|PCIe Bus Error|SXid|nvswitch| error, dev |nvme nvme[0-9]+: .*(timeout|reset|Removing|not ready)|Aborting journal|aborted journal|Remounting filesystem read-only|XFS .*(Shutting down|shut down)'
	exec 4>&1

	block node keep node_facts
	cmd df keep df -P -k / /opt/sagemaker /opt/dlami/nvme /dev/shm /tmp /var/lib/containerd
	cmd df_inodes keep df -P -i / /opt/sagemaker /opt/dlami/nvme /dev/shm
	block mountinfo keep_long lim cat "$R/proc/self/mountinfo"
	block meminfo keep lim cat "$R/proc/meminfo"
	block hugepages keep lim cat "$R/proc/sys/vm/nr_hugepages"
	block environment keep lim grep -E '^[[:space:]]*(export[[:space:]]+)?FI_[A-Z_]+=' "$R/etc/environment"
	cmd systemd keep systemctl show --no-pager -p Id,LoadState,ActiveState,SubState \
		amazon-ssm-agent.service snap.amazon-ssm-agent.amazon-ssm-agent.service \
		containerd.service kubelet.service slurmd.service slurmctld.service munge.service \
		chronyd.service chrony.service nvidia-fabricmanager.service
	cmd chrony keep chronyc -n tracking
	cmd timedatectl keep timedatectl status
	cmd dmesg kernel_lines dmesg --time-format iso
	if [ "$HP_RC" != 0 ]; then
		cmd journal kernel_lines journalctl -k -b -n 20000 -o short-iso --no-pager -q
	fi
	block pci keep_long pci_devices
	block pci_link keep_long pci_links
	if have nvidia-smi; then
		block nvidia_gpu keep lim nvidia-smi \
			--query-gpu=index,pci.bus_id,name,uuid,driver_version --format=csv,noheader,nounits
		# A GPU that hangs nvidia-smi would hang every further query too.
		if [ "$HP_RC" != 124 ]; then
			block nvidia_ecc keep lim nvidia-smi \
				--query-gpu=index,ecc.mode.current,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total \
				--format=csv,noheader,nounits
			block nvidia_clocks keep gpu_clocks
			block nvidia_remap keep lim nvidia-smi \
				--query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure \
				--format=csv,noheader,nounits
			block nvidia_recovery keep lim nvidia-smi \
				--query-gpu=index,gpu_recovery_action --format=csv,noheader,nounits
			cmd dcgm keep dcgmi health --check -j
			block nvlink_status keep_long lim nvidia-smi nvlink -s
			block nvlink_errors keep_long lim nvidia-smi nvlink -e
		fi
		block nvvs keep nvvs_tail
		# Fabric Manager's last words this boot (NVSwitch systems; nothing elsewhere).
		cmd fabricmanager keep journalctl -u nvidia-fabricmanager.service -b -n 8 --no-pager -q -o cat
	else
		absent nvidia_gpu
	fi
	cmd neuron keep neuron-ls
	block ib_devices keep list_dir "$R/dev/infiniband"
	block ib_ports keep ib_ports
	cmd fi_info keep fi_info -p efa
	block modules keep lim grep -E '^(efa|ib_uverbs|nvidia|neuron) ' "$R/proc/modules"
	block netdev keep net_stats
	block provision keep provision_log
	# AWS_EC2_METADATA_DISABLED=true (as the AWS SDKs read it): no request at all.
	case ${AWS_EC2_METADATA_DISABLED:-} in
	[Tt][Rr][Uu][Ee]) absent imds ;;
	*)
		if have curl; then
			block imds keep imds_check
		else
			absent imds
		fi
		;;
	esac
	echo "@@HP@@ DONE"
}

#@include frame.sh

kernel_lines() {
	grep -E "$HP_KPAT" | tail -n 1500
}

# rd KEY FILE: "KEY=<first line of FILE>" when FILE is readable.
rd() {
	if [ -r "$2" ]; then
		hp_v=
		IFS= read -r hp_v <"$2" || true
		echo "$1=$hp_v"
	fi
}

node_facts() {
	echo "probe=1"
	echo "epoch=$(date +%s)"
	rd hostname "$R/proc/sys/kernel/hostname"
	rd kernel "$R/proc/sys/kernel/osrelease"
	rd uptime "$R/proc/uptime"
	rd boot_id "$R/proc/sys/kernel/random/boot_id"
	return 0
}

# NVIDIA GPUs, Amazon devices (EFA, NVMe, ENA): "<address> <vendor> <device> <class>".
pci_devices() {
	[ -d "$R/sys/bus/pci/devices" ] || return 2
	for hp_d in "$R"/sys/bus/pci/devices/*; do
		[ -r "$hp_d/vendor" ] || continue
		hp_v=
		IFS= read -r hp_v <"$hp_d/vendor" || true
		case $hp_v in
		0x10de | 0x1d0f) ;;
		*) continue ;;
		esac
		hp_i='?'
		hp_c='?'
		IFS= read -r hp_i <"$hp_d/device" || true
		IFS= read -r hp_c <"$hp_d/class" || true
		echo "${hp_d##*/} $hp_v $hp_i $hp_c"
	done
	return 0
}

# PCIe links of NVIDIA GPUs and EFA devices, from sysfs:
# "<address>|<vendor>|<device>|<class>|<current speed>|<max speed>|<current width>|<max width>",
# "?" for a value that cannot be read.
pci_links() {
	[ -d "$R/sys/bus/pci/devices" ] || return 2
	for hp_d in "$R"/sys/bus/pci/devices/*; do
		[ -r "$hp_d/vendor" ] || continue
		hp_v=
		IFS= read -r hp_v <"$hp_d/vendor" || true
		hp_i='?'
		hp_c='?'
		IFS= read -r hp_i <"$hp_d/device" || true
		IFS= read -r hp_c <"$hp_d/class" || true
		case $hp_v:$hp_c:$hp_i in
		0x10de:0x0302*:* | 0x10de:0x0300*:* | 0x1d0f:*:0xefa*) ;;
		*) continue ;;
		esac
		hp_l="${hp_d##*/}|$hp_v|$hp_i|$hp_c"
		for hp_k in current_link_speed max_link_speed current_link_width max_link_width; do
			hp_x='?'
			if [ -r "$hp_d/$hp_k" ]; then
				IFS= read -r hp_x <"$hp_d/$hp_k" || hp_x='?'
			fi
			hp_l="$hp_l|${hp_x:-?}"
		done
		echo "$hp_l"
	done
	return 0
}

# Newer drivers call the throttle field clocks_event_reasons.
gpu_clocks() {
	lim nvidia-smi --query-gpu=index,temperature.gpu,clocks.sm,clocks.max.sm,clocks_event_reasons.active \
		--format=csv,noheader,nounits ||
		lim nvidia-smi --query-gpu=index,temperature.gpu,clocks.sm,clocks.max.sm,clocks_throttle_reasons.active \
			--format=csv,noheader,nounits
}

# list_dir DIR: the names in DIR, one a line; status 2 when DIR is missing.
list_dir() {
	[ -d "$1" ] || return 2
	for hp_e in "$1"/*; do
		if [ -e "$hp_e" ]; then
			echo "${hp_e##*/}"
		fi
	done
	return 0
}

# "<device> <port> <state>" for each RDMA port; a device without ports alone.
ib_ports() {
	[ -d "$R/sys/class/infiniband" ] || return 2
	for hp_d in "$R"/sys/class/infiniband/*; do
		[ -e "$hp_d" ] || continue
		hp_any=
		for hp_p in "$hp_d"/ports/*; do
			[ -r "$hp_p/state" ] || continue
			hp_s=
			IFS= read -r hp_s <"$hp_p/state" || true
			echo "${hp_d##*/} ${hp_p##*/} $hp_s"
			hp_any=1
		done
		if [ -z "$hp_any" ]; then
			echo "${hp_d##*/}"
		fi
	done
	return 0
}

# The newest DCGM diagnostic (nvvs) log: "file=<name>", then its last lines.
# Status 2: no /var/log/nvidia-dcgm; 3: no nvvs log in it.
nvvs_tail() {
	[ -d "$R/var/log/nvidia-dcgm" ] || return 2
	hp_nv=$(ls -1t "$R"/var/log/nvidia-dcgm/nvvs*.log 2>/dev/null | head -n 1)
	[ -n "$hp_nv" ] && [ -r "$hp_nv" ] || return 3
	echo "file=${hp_nv##*/}"
	tail -n 40 "$hp_nv"
	return 0
}

# "<interface> rx_packets tx_packets rx_errors tx_errors rx_dropped tx_dropped"
# since boot, for every interface but lo; "?" for a counter that cannot be read.
net_stats() {
	[ -d "$R/sys/class/net" ] || return 2
	for hp_nd in "$R"/sys/class/net/*; do
		[ -d "$hp_nd/statistics" ] || continue
		hp_ni=${hp_nd##*/}
		[ "$hp_ni" = lo ] && continue
		hp_nl=$hp_ni
		for hp_nk in rx_packets tx_packets rx_errors tx_errors rx_dropped tx_dropped; do
			hp_nv='?'
			if [ -r "$hp_nd/statistics/$hp_nk" ]; then
				IFS= read -r hp_nv <"$hp_nd/statistics/$hp_nk" || hp_nv='?'
			fi
			hp_nl="$hp_nl ${hp_nv:-?}"
		done
		echo "$hp_nl"
	done
	return 0
}

# The lifecycle script log: "lines=<n>", then its lines that look like
# errors (numbered, the last 40); the parser decides which count.
provision_log() {
	hp_pl=$R/var/log/provision/provisioning.log
	[ -r "$hp_pl" ] || return 2
	echo "lines=$(wc -l <"$hp_pl")"
	grep -n -i -E 'error|fail|traceback|timed out|command not found|denied|exception' "$hp_pl" | tail -n 40
	return 0
}

# Instance metadata from the node (IMDSv2): a session token (PUT, which
# changes nothing), then the instance type; one second each. The token is
# never printed.
imds_check() {
	hp_it=$(curl -s -f -m 1 -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' \
		http://169.254.169.254/latest/api/token 2>/dev/null)
	hp_ir=$?
	if [ -z "$hp_it" ]; then
		echo "token=none"
		echo "curl=$hp_ir"
		return 1
	fi
	echo "token=ok"
	hp_iv=$(curl -s -f -m 1 -H "X-aws-ec2-metadata-token: $hp_it" \
		http://169.254.169.254/latest/meta-data/instance-type 2>/dev/null)
	hp_ir=$?
	hp_it=
	echo "curl=$hp_ir"
	echo "instance_type=$hp_iv"
	return $hp_ir
}

hp_probe </dev/null
exit 0
