/*
 * The pure parts of `hpnode nccl`: the log error-pattern table and its
 * matcher, and the on-node NCCL probe's framing and one decoder per block
 * into facts. No I/O, no printing, no clock. The probe script and its remote
 * command are in include/hp/probe.h, the collector of the Kubernetes and
 * CloudWatch data the NCCL checks read in include/hp/collect.h.
 */
#ifndef HP_NCCL_FACTS_H
#define HP_NCCL_FACTS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "hp/buf.h"

/*
 * The guide's sections (references/nccl-diagnostics-detail.md, ids
 * "NC<n>[.<m>]") are read from the embedded document itself:
 * hp_refdoc_title(HP_REFDOC_NCCL, id) in include/hp/refdoc.h.
 */

/* ---- instance types ---- */

struct hp_snapshot;

/*
 * An instance type's DescribeInstanceTypes facts (snapshot key
 * "instance_types", EC2 names; "ml." dropped from type), or NULL.
 */
const cJSON *hp_nccl_type_info(const struct hp_snapshot *s, const char *type);
/*
 * Whether an instance type ("ml.p5.48xlarge") is accelerated: GPUs
 * (gpuInfo) or EFA (networkInfo.efaSupported) in those facts, never a name
 * pattern. 1, 0, or -1 when the type's facts were not collected.
 */
int hp_nccl_type_accelerated(const struct hp_snapshot *s, const char *type);
/* GPUs and EFA interfaces of the type by those facts; -1 when unknown. */
int hp_nccl_type_gpus(const struct hp_snapshot *s, const char *type);
int hp_nccl_type_efa(const struct hp_snapshot *s, const char *type);

/* A Kubernetes quantity ("64Mi", "10Gi", "1G", "500000000") in bytes; -1 when unreadable. */
double hp_nccl_quantity_bytes(const char *q);

/* ---- the log error-pattern table (§ NC23) ---- */

/* Pattern flags. */
#define HP_NCCL_ANYCASE 1u   /* match ignoring ASCII case */
#define HP_NCCL_CONTEXT 2u   /* count only on a line that also says something failed */
#define HP_NCCL_ADDED 4u     /* not in the original tool's table (published texts it missed) */
#define HP_NCCL_FALLBACK 8u  /* count only when no other pattern matched the line (the first such) */
/*
 * A generic result ("unhandled system error", "internal error", "remote
 * process exited"): it takes the cause of the specific line before it in
 * the same source (within HP_NCCL_WRAP_BEFORE lines), else of the first
 * specific line within HP_NCCL_WRAP_AFTER lines after it (PyTorch prints
 * NCCL's "Last error:" after its message); without one it stands alone.
 */
#define HP_NCCL_WRAPPER 16u
/* A symptom: a cause found in the same pod or on its node explains it. */
#define HP_NCCL_SYMPTOM 32u
#define HP_NCCL_WRAP_BEFORE 50
#define HP_NCCL_WRAP_AFTER 4

struct hp_nccl_pattern {
	const char *text;     /* the substring looked for */
	const char *code;     /* "EFA_TCP_FALLBACK"; patterns may share a code */
	int prio;             /* 0 = P0 (blocks training), 1 = P1, 2 = P2 */
	const char *section;  /* NCCL guide id, "NC13" */
	const char *group;    /* "EFA / libfabric" */
	const char *meaning;  /* one line, own words */
	unsigned flags;
	const char *unless;   /* a line holding this text never counts (benign forms), or NULL */
};

/* Lines that show a job getting through a stage. */
struct hp_nccl_marker {
	const char *text;
	const char *name;     /* "BASELINE_PASSED" */
	unsigned flags;       /* HP_NCCL_ADDED for the markers the original tool lacked */
};

extern const struct hp_nccl_pattern hp_nccl_patterns[];
extern const size_t hp_nccl_npatterns;
extern const struct hp_nccl_marker hp_nccl_markers[];
extern const size_t hp_nccl_nmarkers;

/* The table entry of a code (its first pattern), or NULL. */
const struct hp_nccl_pattern *hp_nccl_pattern_by_code(const char *code);

/*
 * The patterns that match one line (len bytes, no NUL needed), as indices
 * into hp_nccl_patterns in table order; at most max are stored, the count
 * of all matches is returned. Only the first HP_NCCL_MATCH_BYTES of a line
 * are looked at.
 */
#define HP_NCCL_MATCH_BYTES ((size_t)8192)
size_t hp_nccl_match(const char *line, size_t len, size_t *idx, size_t max);
/* The marker a line holds (index into hp_nccl_markers), or -1. */
int hp_nccl_marker(const char *line, size_t len);

/*
 * CloudWatch filter patterns that together find every line a pattern or a
 * marker could match (case variants of the any-case texts included):
 * `?"text" ?"text" ...`, each at most max_len bytes (AWS allows 1024).
 * Appends up to max strings (owned by the caller) to out; returns how many
 * it wrote. The events found must still go through hp_nccl_match.
 */
size_t hp_nccl_cloudwatch_filters(char **out, size_t max, size_t max_len);

/*
 * A scan over many log lines from many sources ("ns/pod/container",
 * a log stream): every (pattern, source) pair that matched is kept once,
 * with its count and the last `evidence` matching lines, each cleaned (no
 * control characters or escape sequences, invalid UTF-8 replaced) and cut
 * to `clip` bytes. Memory is bounded by the number of sources (at most
 * max_sources; lines of further sources are counted, not kept).
 */
struct hp_nccl_scan_opts {
	size_t evidence;      /* lines kept per hit; 0: 3 */
	size_t clip;          /* bytes kept per line; 0: 300 */
	size_t max_sources;   /* 0: 4096 */
};
struct hp_nccl_scan;
struct hp_nccl_scan *hp_nccl_scan_new(const struct hp_nccl_scan_opts *o);
void hp_nccl_scan_free(struct hp_nccl_scan *s);
/* One line of source (len bytes; a trailing CR is ignored). */
void hp_nccl_scan_line(struct hp_nccl_scan *s, const char *source, const char *line, size_t len);
/* Every line of text (split at '\n'). */
void hp_nccl_scan_text(struct hp_nccl_scan *s, const char *source, const char *text, size_t len);
/*
 * The result, in the order sources were first seen, then table order:
 *   {lines, sources, sources_dropped,
 *    hits: [{code, pattern, priority: "P0".."P2", section, group, source, count,
 *            last_line (1-based line number within the source), evidence: [..],
 *            wrapper: true on a wrapper's hit, cause: the code whose line it took
 *            its cause from (absent: it stands alone), symptom: true on a
 *            symptom's hit}],
 *    markers: [{marker, source, count, evidence: [last line]}],
 *    versions: [{source, version: "2.21.5"}] (the first "NCCL version X.Y.Z" each printed)}
 */
cJSON *hp_nccl_scan_json(const struct hp_nccl_scan *s);

/* ---- the on-node NCCL probe's output (the script: include/hp/probe.h) ---- */

/*
 * The probe's output as facts: a cJSON object, every key optional, absent
 * = unknown (not collected, the tool missing, the value unreadable; an
 * unreadable value is never reported as a healthy one). Never NULL.
 *
 *   probe       {truncated (no DONE), epoch, uid, root (bool),
 *                blocks: {"<block>": {rc (null when no END), lines}}}
 *   topo        {present, rc, error, gpus, nics, gpu_pairs, nvlink_pairs, pcie_pairs,
 *                links: {"NV18": n, "SYS": n, ...} (GPU pairs per entry),
 *                nvlink_min (fewest links of an NVLink pair),
 *                pcie: ["GPU0-GPU3 SYS", ...] (first 16 GPU pairs on a PCIe path),
 *                gpu_numa: {"GPU0": n}, nic_path: {"GPU0": "PIX"} (nearest NIC)}
 *   pci_numa    {devices: [{address, vendor, class, numa}], numa_unknown: n}
 *               (numa absent when the kernel says -1 or it cannot be read)
 *   acs         {present, rc, readable (false: capabilities not readable, not root),
 *                bridges, enabled (bridges with SrcValid+), enabled_bridges: [address]}
 *   iommu       {units, cmdline: [words], passthrough (iommu=pt)}
 *   peermem     {read, loaded, module}
 *   efa_installer {found, version, debug, packages, libfabric (libfabric-aws-<v>)}
 *   ofi_plugin  {found, libs: [path], links: [{path, target}]}
 *   libfabric   {present, rc, version, api, amazon (an "amzn" build)}
 *   fi_tcp      {present, rc, providers}
 *   nccl_lib    {found, libs: [path], links: [{path, target}], version, cuda}
 *   nccl_header {found, file, version}
 *   netif       {interfaces: [{name, mtu, state, virtual}]}
 *   limits      {read, memlock_soft, memlock_hard, stack_soft, stack_hard, nofile_soft}
 *               (of the probe's own shell; bytes, or the string "unlimited")
 *   limits_conf {entries: [{file, domain, type, item, value}]} (value a number of
 *               KiB or "unlimited"; PAM limits.conf and limits.d)
 *   procs       {read, count, more (over 20), training (count),
 *                list: [{pid, cmd, training, memlock_soft, memlock_hard, stack_soft,
 *                        stack_hard, env: {NAME: value}}]}
 *               training: launched by torchrun/mpirun/deepspeed/accelerate/nccl-tests,
 *               or with RANK, LOCAL_RANK, WORLD_SIZE or MASTER_ADDR in its environment
 *   hugepages   {sizes: {"<kB>": {total, free}}}
 *   logind      {files, remove_ipc (bool, the effective value), source (the file that
 *                set it, or "default"), lines: ["<file>: <line>"]}
 *   shm         {read, nccl_segments, names: [..]}
 *   numa        {nodes, cpus: {"node0": "0-47,96-143"}}
 *   firewall    {present, tool ("iptables"|"nft"), rc, readable, rules, policies:
 *                {"filter/INPUT": "DROP"}, blocking: n, blocking_rules: [..first 20],
 *                cni_blocking: n} (blocking = DROP/REJECT outside the KUBE-, AWS-,
 *                CNI-, cali-, cilium and DOCKER chains of kube-proxy, the CNIs, docker)
 *   environment {"NCCL_...": value} (/etc/environment)
 */
cJSON *hp_nccl_probe_parse(const char *text, size_t len);

/*
 * The output of the read-only script `hpnode nccl --exec` runs in a
 * container (src/collect/nccl-exec.c; same framing) as facts:
 *   {done, env: {NAME: value} (NCCL/FI/rendezvous names only, never a name
 *    holding KEY, SECRET, TOKEN, PASSWORD or CREDENTIAL), torch, torch_nccl
 *    ("2.21.5"), torch_error, libnccl: [paths], libnccl_version, shm_kb (the
 *    size of /dev/shm in KiB, exact), shm_error}
 */
cJSON *hp_nccl_exec_parse(const char *text, size_t len);

/*
 * Whether an environment variable is one NCCL or the rendezvous reads
 * (NCCL_*, FI_*, TORCH_NCCL_*, OMPI_MCA_btl_tcp_if_*, MASTER_ADDR, RANK, ...)
 * and not one whose name holds KEY, SECRET, TOKEN, PASSWORD or CREDENTIAL:
 * the names the pod-spec reader and the --exec decoder keep. 0 for NULL.
 */
int hp_nccl_env_name(const char *name);

#endif
