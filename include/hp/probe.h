/*
 * The on-node probe: a read-only POSIX sh script (src/collect/probe/probe.sh,
 * built into the binary) that prints raw data in framed blocks, and the
 * parsers that turn one node's output into facts (numbers, not text).
 *
 * Framing (stdout): "@@HP@@ BEGIN <block>", the block's lines,
 * "@@HP@@ END <block> <exit status>", and "@@HP@@ DONE" last. The parser
 * drops carriage returns and terminal escape sequences first (output may
 * come through a pseudo-terminal), finds markers anywhere in a line, and
 * keeps a block whose END never came with rc null.
 *
 * Facts (a cJSON object; every key optional, absent = not known):
 *
 *   truncated   true when the DONE marker was not seen
 *   blocks      {"<block>": {"rc": n|null, "lines": n}}  what arrived
 *   node        {probe, epoch, hostname, kernel, uptime_s, boot_id}
 *   fs          {"<mount point>": {device, size_kb, used_kb, avail_kb, use_pct}}     df -P -k
 *   inodes      {"<mount point>": {total, used, free, use_pct}}                      df -P -i
 *   mounts      {"<mount point>": {fstype, source, ro, size_kb}}  /proc/self/mountinfo,
 *               the visible (last) mount of each point; mount_count
 *   memory      {total_kb, available_kb, free_kb, shmem_kb, hugepages_total,
 *                hugepages_free, hugepage_kb}; nr_hugepages
 *   environment {"FI_...": "value"} from /etc/environment; environment_read (bool)
 *   kmsg        {source: "dmesg"|"journal", lines, error, events: [{kind, t, text,
 *                xid, pci, cgroup, action}]}; kinds: oom_kill, oom_invoked, panic,
 *                soft_lockup, hard_lockup, hung_task, kernel_bug, nmi, mce, xid,
 *                gpu_lost, gpu_init (NVIDIA driver texts without an Xid), pcie_aer
 *                (uncorrectable AER);
 *                t is epoch seconds when the line carried a usable time
 *   chrony      {present, rc, offset_s (+ = clock ahead), leap, stratum, reference,
 *                synchronized, error}
 *   timedatectl {present, rc, synchronized, ntp_service, error}
 *   services    {available, error, units: {"<unit>": {load, active, sub}}}
 *               (unit names without ".service")
 *   nvidia      {present, rc, timed_out, error, errors: [..], unreachable: [bus id],
 *                unreachable_reason,
 *                gpus: [{index, bus_id, name, uuid, driver, ecc_mode, ecc_corr_vol,
 *                        ecc_unc_vol, ecc_corr_agg, ecc_unc_agg, temp_c, sm_mhz,
 *                        sm_max_mhz, throttle, recovery_action,
 *                        remap: {corr, unc, pending, failure},
 *                        unreadable: {ecc|clocks|remap|recovery: "[Unknown Error]"},
 *                        nvlink: {links, inactive: [n], errors: {"<counter>": n}}}]}
 *   pci         {nvidia_gpus, efa, nvidia_devices, amazon_devices}
 *   dcgm        {present, rc, health: "Healthy"|"Warning"|"Failure"|..., error,
 *                incidents: [{entity, system, health, message}]}
 *   neuron      {present, rc, devices, cores, error}
 *   efa         {dev_read, uverbs, rdma_cm, ib_devices, ports: [{device, port, state}],
 *                fi_info: {present, rc, efa_providers, error}}
 *   modules     {efa, ib_uverbs, nvidia, neuron} (loaded kernel modules)
 *   nvidia      also nvlink_rc, nvlink_error (nvidia-smi nvlink -s gave no GPU)
 *   nvvs        {present, rc, found, file, lines, signal_count, signals: [line]}
 *               (the newest /var/log/nvidia-dcgm/nvvs*.log, its last 40 lines)
 *   netdev      {present, rc, interfaces: [{name, rx_packets, tx_packets, rx_errors,
 *                tx_errors, rx_dropped, tx_dropped}]} (sysfs counters since boot)
 *   provision   {present, rc, found, lines, error_count, errors: ["<n>:<line>"]}
 *               (/var/log/provision/provisioning.log)
 *   imds        {present, rc, token (bool), curl (exit status), instance_type}
 *   df, df_inodes  {present, rc, error}: how the df commands went
 */
#ifndef HP_PROBE_H
#define HP_PROBE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "hp/buf.h"

/* Parts of the facts; hp_probe_parse_some() reads only the blocks they need. */
enum hp_probe_part {
	HP_PROBE_NODE = 1u << 0,     /* node */
	HP_PROBE_DISK = 1u << 1,     /* fs, inodes, mounts */
	HP_PROBE_MEMORY = 1u << 2,   /* memory, nr_hugepages, environment */
	HP_PROBE_KMSG = 1u << 3,     /* kmsg */
	HP_PROBE_TIME = 1u << 4,     /* chrony, timedatectl */
	HP_PROBE_SERVICES = 1u << 5, /* services */
	HP_PROBE_GPU = 1u << 6,      /* nvidia, pci */
	HP_PROBE_DCGM = 1u << 7,     /* dcgm */
	HP_PROBE_NEURON = 1u << 8,   /* neuron */
	HP_PROBE_EFA = 1u << 9,      /* efa, pci */
	HP_PROBE_NET = 1u << 10,     /* netdev, imds */
	HP_PROBE_LOGS = 1u << 11,    /* provision */
	HP_PROBE_ALL = (1u << 12) - 1
};

/* Probe output is cut at this size by the transports. */
#define HP_PROBE_MAX_STDOUT ((size_t)1 << 20)

/* The embedded probe script (NUL-terminated). */
const char *hp_probe_script(void);

/*
 * The shell command that runs the probe remotely: sh -c '<decode base64> | sh'
 * with the script embedded base64-encoded (appended to out, which needs
 * room for about 4/3 of the script: under 16 KiB today).
 */
void hp_probe_command(struct hp_buf *out);

/*
 * Parse one node's probe output (stdout) into a cJSON object of facts;
 * never fails on garbage (absent facts stay absent). Caller frees.
 */
cJSON *hp_probe_parse(const char *stdout_text, size_t len);

/* Same, reading only the blocks behind the given enum hp_probe_part bits. */
cJSON *hp_probe_parse_some(const char *stdout_text, size_t len, unsigned parts);

#endif
