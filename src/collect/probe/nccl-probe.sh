#!/bin/sh
# hpnode on-node NCCL probe. It only reads, like the node probe (probe.sh),
# and leaves out what that probe already collects (GPUs, ECC, Xid, NVLink
# status and counters, DCGM and nvvs, EFA devices and fi_info -p efa,
# modules efa/nvidia, df, meminfo, FI_* of /etc/environment, the kernel log).
#
# Output framing, one block per source:
#   @@HP@@ BEGIN <block>
#   <raw lines>
#   @@HP@@ END <block> <exit status>
# and "@@HP@@ DONE" as the very last line. Exit status 127 means the
# command is not installed; 124 that it ran out of time. Blocks that list
# files print one "<key> <value>" line per item; hpnode's decoders
# (src/core/facts/nccl-*.c) do all interpretation.
#
# Every file is read below ${HPNODE_PROBE_ROOT} (empty on a real node), so a
# test can point the probe at a prepared directory tree. Process
# environments are never printed whole: only NCCL_*, FI_*, TORCH_NCCL_*,
# TORCH_DISTRIBUTED_DEBUG, MASTER_ADDR/PORT, WORLD_SIZE, RANK, LOCAL_RANK,
# CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH and PYTORCH_CUDA_ALLOC_CONF, and
# never a name with KEY, SECRET, TOKEN or PASSWORD in it.

hp_nccl_probe() {
	R=${HPNODE_PROBE_ROOT:-}
	LC_ALL=C
	export LC_ALL
	PATH=$PATH:$R/usr/sbin:$R/sbin:$R/usr/bin:$R/bin:$R/usr/local/bin:$R/opt/amazon/efa/bin:$R/usr/local/cuda/bin
	export PATH
	if command -v timeout >/dev/null 2>&1; then HP_TMO=1; else HP_TMO=; fi
	exec 4>&1

	block nccl keep probe_facts
	if have nvidia-smi; then
		block topo keep lim nvidia-smi topo -m
	else
		absent topo
	fi
	block pci_numa keep pci_numa
	if have lspci; then
		block acs keep_long acs_lines
	else
		absent acs
	fi
	block iommu keep iommu_facts
	block peermem keep lim grep -E '^(nvidia_peermem|nv_peer_mem) ' "$R/proc/modules"
	block efa_installer keep lim head -n 40 "$R/opt/amazon/efa_installed_packages"
	block ofi_plugin keep ofi_plugin
	cmd libfabric keep fi_info --version
	cmd fi_tcp keep fi_info -p tcp
	block nccl_lib keep nccl_libs
	block nccl_header keep nccl_header
	block netif keep netif
	block limits keep lim grep -E '^Max (locked memory|stack size|open files)' "$R/proc/self/limits"
	block limits_conf keep limits_conf
	block procs keep_long procs
	block hugepages keep hugepages
	block logind keep logind
	block shm keep shm_list
	block numa keep numa_nodes
	if have iptables-save; then
		block firewall keep_long lim iptables-save
	elif have nft; then
		block firewall_nft keep_long lim nft list ruleset
	else
		absent firewall
	fi
	block environment keep lim grep -E '^[[:space:]]*(export[[:space:]]+)?(NCCL_|TORCH_NCCL_)[A-Z0-9_]+=' "$R/etc/environment"
	echo "@@HP@@ DONE"
}

#@include frame.sh

# rd1 FILE: the first line of FILE (nothing when unreadable).
rd1() {
	hp_v=
	if [ -r "$1" ]; then
		IFS= read -r hp_v <"$1" || true
	fi
	printf '%s' "$hp_v"
}

probe_facts() {
	echo "probe=nccl"
	echo "epoch=$(date +%s)"
	echo "uid=$(id -u)"
	return 0
}

# "<address> <vendor> <class> <numa node>" of NVIDIA and Amazon PCI devices.
pci_numa() {
	[ -d "$R/sys/bus/pci/devices" ] || return 2
	for hp_d in "$R"/sys/bus/pci/devices/*; do
		[ -r "$hp_d/vendor" ] || continue
		hp_v=$(rd1 "$hp_d/vendor")
		case $hp_v in
		0x10de | 0x1d0f) ;;
		*) continue ;;
		esac
		hp_c=$(rd1 "$hp_d/class")
		hp_u=$(rd1 "$hp_d/numa_node")
		echo "${hp_d##*/} $hp_v ${hp_c:-?} ${hp_u:-?}"
	done
	return 0
}

# The PCI bridge lines of lspci -vvv and their ACS control lines; lspci
# prints "Capabilities: <access denied>" when not run as root.
acs_lines() {
	lim lspci -vvv | grep -E '^[0-9a-f]|ACSCtl|access denied|^lspci'
	return 0
}

# The IOMMU units the kernel registered, and the IOMMU words of the command line.
iommu_facts() {
	if [ -d "$R/sys/class/iommu" ]; then
		for hp_i in "$R"/sys/class/iommu/*; do
			[ -e "$hp_i" ] && echo "unit ${hp_i##*/}"
		done
	else
		echo "units none"
	fi
	set -f
	for hp_w in $(rd1 "$R/proc/cmdline"); do
		case $hp_w in
		*iommu*) echo "cmdline $hp_w" ;;
		esac
	done
	set +f
	return 0
}

# "lib <path>" or "link <path> -> <target>" of every OFI NCCL plugin found;
# status 3 when none is.
ofi_plugin() {
	hp_any=
	for hp_p in "$R"/opt/amazon/ofi-nccl/lib/libnccl-net* "$R"/opt/amazon/ofi-nccl/lib64/libnccl-net* \
		"$R"/opt/aws-ofi-nccl/lib/libnccl-net* "$R"/usr/local/lib/libnccl-net* \
		"$R"/usr/lib/libnccl-net* "$R"/usr/lib64/libnccl-net* "$R"/usr/lib/x86_64-linux-gnu/libnccl-net*; do
		[ -e "$hp_p" ] || continue
		hp_any=1
		if [ -L "$hp_p" ]; then
			echo "link ${hp_p#"$R"} -> $(ls -ld "$hp_p" | sed 's/^.* -> //')"
		else
			echo "lib ${hp_p#"$R"}"
		fi
	done
	[ -n "$hp_any" ] || return 3
	return 0
}

# Every libnccl.so* found ("lib <path>" / "link ..."), then the version
# string of the first real file ("version NCCL version 2.21.5+cuda12.4").
nccl_libs() {
	hp_any=
	hp_first=
	for hp_p in "$R"/usr/local/cuda*/lib64/libnccl.so* "$R"/usr/local/cuda*/lib/libnccl.so* \
		"$R"/usr/lib/x86_64-linux-gnu/libnccl.so* "$R"/usr/lib64/libnccl.so* "$R"/usr/lib/libnccl.so* \
		"$R"/opt/nccl/lib/libnccl.so* "$R"/opt/nccl/build/lib/libnccl.so*; do
		[ -e "$hp_p" ] || continue
		hp_any=1
		if [ -L "$hp_p" ]; then
			echo "link ${hp_p#"$R"} -> $(ls -ld "$hp_p" | sed 's/^.* -> //')"
		else
			echo "lib ${hp_p#"$R"}"
			[ -n "$hp_first" ] || hp_first=$hp_p
		fi
	done
	[ -n "$hp_any" ] || return 3
	if [ -n "$hp_first" ]; then
		hp_s=$(lim grep -a -o -m 1 'NCCL version [0-9][0-9.]*[+a-z0-9.]*' "$hp_first" | head -n 1)
		[ -n "$hp_s" ] && echo "version $hp_s"
	fi
	return 0
}

# The version defines of the first nccl.h found; status 3 when none is.
nccl_header() {
	for hp_h in "$R"/usr/local/cuda*/include/nccl.h "$R"/usr/include/nccl.h "$R"/opt/nccl/include/nccl.h \
		"$R"/opt/nccl/build/include/nccl.h; do
		[ -r "$hp_h" ] || continue
		echo "file ${hp_h#"$R"}"
		grep -E '^#define NCCL_(MAJOR|MINOR|PATCH|SUFFIX)[[:space:]]' "$hp_h" | head -n 8
		return 0
	done
	return 3
}

# "<interface> <mtu> <operstate> <virtual|device>" for every interface but lo.
netif() {
	[ -d "$R/sys/class/net" ] || return 2
	for hp_n in "$R"/sys/class/net/*; do
		[ -e "$hp_n" ] || continue
		hp_i=${hp_n##*/}
		[ "$hp_i" = lo ] && continue
		hp_m=$(rd1 "$hp_n/mtu")
		hp_s=$(rd1 "$hp_n/operstate")
		if [ -e "$R/sys/devices/virtual/net/$hp_i" ]; then hp_k=virtual; else hp_k=device; fi
		echo "$hp_i ${hp_m:-?} ${hp_s:-?} $hp_k"
	done
	return 0
}

# Uncommented memlock and stack lines of the PAM limits files ("<file>: <line>").
limits_conf() {
	for hp_f in "$R"/etc/security/limits.conf "$R"/etc/security/limits.d/*.conf; do
		[ -r "$hp_f" ] || continue
		grep -E '^[[:space:]]*[^#[:space:]]+[[:space:]]+(soft|hard|-)[[:space:]]+(memlock|stack)[[:space:]]' "$hp_f" |
			head -n 20 | sed "s|^|${hp_f#"$R"}: |"
	done
	return 0
}

# Training processes (python, torchrun, mpirun, nccl-tests, deepspeed), at
# most 20: "pid <n> <command line, 200 bytes>", their limits, and the
# environment variables NCCL reads. "procs none" when there are none.
procs() {
	hp_np=0
	for hp_d in "$R"/proc/[0-9]*; do
		[ -r "$hp_d/cmdline" ] || continue
		hp_c=$(tr '\000' ' ' <"$hp_d/cmdline" 2>/dev/null | head -c 200)
		case $hp_c in
		*python* | *torchrun* | *mpirun* | *_perf\ * | *_perf | *deepspeed*) ;;
		*) continue ;;
		esac
		hp_np=$((hp_np + 1))
		if [ "$hp_np" -gt 20 ]; then
			echo "more"
			break
		fi
		echo "pid ${hp_d##*/} $hp_c"
		if [ -r "$hp_d/limits" ]; then
			grep -E '^Max (locked memory|stack size)' "$hp_d/limits" | sed 's/^/limit /'
		fi
		if [ -r "$hp_d/environ" ]; then
			tr '\000' '\n' <"$hp_d/environ" 2>/dev/null |
				grep -E '^(NCCL_[A-Z0-9_]*|FI_[A-Z0-9_]*|TORCH_NCCL_[A-Z0-9_]*|TORCH_DISTRIBUTED_DEBUG|MASTER_ADDR|MASTER_PORT|WORLD_SIZE|RANK|LOCAL_RANK|CUDA_VISIBLE_DEVICES|LD_LIBRARY_PATH|PYTORCH_CUDA_ALLOC_CONF)=' |
				grep -v -E '^[^=]*(KEY|SECRET|TOKEN|PASSWORD)' | head -n 60 | cut -c 1-300 | sed 's/^/env /'
		fi
	done
	[ "$hp_np" -gt 0 ] || echo "procs none"
	return 0
}

# "<page size kB> <total> <free>" per huge page size.
hugepages() {
	[ -d "$R/sys/kernel/mm/hugepages" ] || return 2
	for hp_d in "$R"/sys/kernel/mm/hugepages/hugepages-*; do
		[ -e "$hp_d" ] || continue
		hp_z=${hp_d##*/hugepages-}
		echo "${hp_z%kB} $(rd1 "$hp_d/nr_hugepages") $(rd1 "$hp_d/free_hugepages")"
	done
	return 0
}

# RemoveIPC settings of logind.conf (the vendor copy in /usr/lib first, newer
# systemd ships one there) and its drop-ins ("<file>: <line>"); "files <n>"
# says how many files were read.
logind() {
	hp_nf=0
	for hp_f in "$R"/usr/lib/systemd/logind.conf "$R"/etc/systemd/logind.conf \
		"$R"/usr/lib/systemd/logind.conf.d/*.conf \
		"$R"/etc/systemd/logind.conf.d/*.conf "$R"/run/systemd/logind.conf.d/*.conf; do
		[ -r "$hp_f" ] || continue
		hp_nf=$((hp_nf + 1))
		grep -i -E '^[[:space:]]*RemoveIPC[[:space:]]*=' "$hp_f" | head -n 5 | sed "s|^|${hp_f#"$R"}: |"
	done
	echo "files $hp_nf"
	return 0
}

# The NCCL segments in /dev/shm: "count <n>", then at most 20 names.
shm_list() {
	[ -d "$R/dev/shm" ] || return 2
	hp_n=0
	for hp_f in "$R"/dev/shm/nccl-*; do
		[ -e "$hp_f" ] || continue
		hp_n=$((hp_n + 1))
		[ "$hp_n" -le 20 ] && echo "file ${hp_f##*/}"
	done
	echo "count $hp_n"
	return 0
}

# "<node> <cpu list>" per NUMA node.
numa_nodes() {
	[ -d "$R/sys/devices/system/node" ] || return 2
	for hp_d in "$R"/sys/devices/system/node/node[0-9]*; do
		[ -e "$hp_d" ] || continue
		echo "${hp_d##*/} $(rd1 "$hp_d/cpulist")"
	done
	return 0
}

hp_nccl_probe </dev/null
exit 0
