/*
 * Facts: what the pure decoders make of the raw outputs a snapshot holds,
 * for the checks to judge. Everything here is a function of its input
 * (text or snapshot) and does no I/O; collectors and checks both include
 * it, neither includes the other.
 *
 *   probe      one node's on-node probe output -> that node's facts
 *   slurm      the Slurm controller probe output -> sinfo/squeue tables,
 *              ping and service states; which node is the controller;
 *              the Slurm name of a node
 *   kube       the EC2 instance id of a Kubernetes node, and the index of
 *              kube.nodes by name and by instance id
 *   vpc        the cluster's VpcConfig and every OverrideVpcConfig
 *
 * Each decoder runs once per snapshot, and its result is kept in the
 * facts cache beside the document (struct hp_facts, owned by the
 * snapshot). The command frame calls hp_facts_prepare once, between
 * collecting (or replaying) and the checks: it decodes what the probe
 * store does not hold yet and builds the Kubernetes and Slurm indexes, so
 * the checks and the reporter get a snapshot that is const in fact (a
 * reader never writes to the cache; the checks refuse to run on a
 * snapshot that was not prepared). Checks ask the cache (hp_facts_node,
 * hp_probes_facts, hp_facts_slurm, hp_facts_kube) and never read raw text. Per-node facts
 * come from one of three places and checks cannot tell which:
 *
 *   - the probe sweep decodes each node's output when its session ends and
 *     keeps the entry and its facts in the snapshot's probe store (below),
 *     without the raw text (that goes to the snapshot file as it arrives,
 *     when one is being saved, and is dropped otherwise);
 *   - a replayed snapshot file is read node by node into the same store;
 *   - an entry in the document itself (hand-built snapshots, `hpnode
 *     node`) is decoded from its stdout on first use, or from the facts a
 *     collector handed over for its id (hp_facts_set_node).
 *
 * Everything the cache keeps is packed: each distinct value once, a few
 * bytes a field (src/core/facts/pack.c), so what nodes share costs nothing
 * per node.
 *
 * Adding a probe fact
 * -------------------
 *
 * A new fact about a node takes these steps, in this order:
 *
 * . Probe: print the raw data in a block of its own in
 *   src/collect/probe/probe.sh ("@@HP@@ BEGIN name" ... "@@HP@@ END name
 *   $?"), read-only, bounded in time and in lines like its neighbours.
 *
 * . Decoder: a function
 *
 *	void pb_parse_name(const struct pb_input *in, cJSON *facts);
 *
 *   in the src/core/facts/parse-*.c file of its kind (or a new one). It
 *   finds its block with pb_find(), adds numbers and short fields under
 *   one key, leaves a fact absent when the text does not say it, and
 *   copies no raw text beyond the few bounded lines a finding quotes.
 *
 * . Declare it in src/core/facts/probe-int.h and add it to the parsers[]
 *   list in src/core/facts/probe-frame.c, after any parser whose facts it reads.
 *
 * . Document its key in the list below (tests/unit/test-facts-checklist.c
 *   reads the list: a key, its members in braces, "; key" for another;
 *   parentheses are prose).
 *
 * . Tests: a sample output in tests/data/probe/ (its README says whether
 *   it was captured or written from the tool's documented format), framed
 *   in the sample table of tests/unit/test-facts-checklist.c (which fails
 *   while a documented key is made by no sample, or a judge reads a key
 *   the list does not name), and a case in tests/unit/test-probe.c; new
 *   markers or keywords go in tests/fuzz/probe.dict.
 *
 * A check then reads the key from c->facts (src/checks/node.h); nothing
 * else changes.
 *
 * Probe output and facts
 * ----------------------
 *
 * Framing (stdout): "@@HP@@ BEGIN <block>", the block's lines,
 * "@@HP@@ END <block> <exit status>", and "@@HP@@ DONE" last. The decoder
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
 *   kmsg        {source: "dmesg"|"journal", lines, error, counts: {"<kind>": n},
 *                events: [{kind, t, text, xid, pci, cgroup, action}]}
 *               (kinds: oom_kill, oom_invoked, panic, soft_lockup, hard_lockup,
 *               hung_task, kernel_bug, nmi, mce, xid, gpu_lost, gpu_init (NVIDIA
 *               driver texts without an Xid), pcie_aer (uncorrectable AER), ...;
 *               t is epoch seconds when the line carried a usable time)
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
 *   pci         {nvidia_gpus, efa, nvidia_devices, amazon_devices, nvswitches}
 *   pci_links   [{pci, kind ("GPU"|"EFA device"), cur_speed, max_speed, cur_width,
 *                max_width}] (PCIe link speed and width of the GPUs and EFA devices)
 *   dcgm        {present, rc, health: "Healthy"|"Warning"|"Failure"|..., error,
 *                incidents: [{entity, system, health, message}]}
 *   neuron      {present, rc, devices, cores, error}
 *   efa         {dev_read, uverbs, rdma_cm, ib_devices, ports: [{device, port, state}],
 *                fi_info: {present, rc, efa_providers, error}}
 *   modules     {efa, ib_uverbs, nvidia, neuron} (loaded kernel modules)
 *   nvidia      also {nvlink_rc, nvlink_error} (nvidia-smi nvlink -s gave no GPU)
 *   nvvs        {present, rc, found, file, lines, signal_count, signals: [line]}
 *               (the newest /var/log/nvidia-dcgm/nvvs*.log, its last 40 lines)
 *   netdev      {present, rc, interfaces: [{name, rx_packets, tx_packets, rx_errors,
 *                tx_errors, rx_dropped, tx_dropped}]} (sysfs counters since boot)
 *   provision   {present, rc, found, lines, error_count, errors: ["<n>:<line>"]}
 *               (/var/log/provision/provisioning.log)
 *   imds        {present, rc, token (bool), curl (exit status), instance_type}
 *   fabricmanager {present, rc, lines: [..]} (the last lines of its journal)
 *   df, df_inodes  {present, rc, error}: how the df commands went
 */
#ifndef HP_FACTS_H
#define HP_FACTS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "hp/snapshot.h"
#include "hp/text.h"

/* ------------------------------------------------------------ decoders */

/* Probe output is cut at this size by the transports (and read no further). */
#define HP_PROBE_MAX_STDOUT ((size_t)1 << 20)

/*
 * One node's probe output (stdout) -> a cJSON object of facts (layout
 * above); never fails on garbage (absent facts stay absent, and a number
 * that is not finite is no fact). Caller frees.
 */
cJSON *hp_probe_parse(const char *stdout_text, size_t len);

/*
 * The Slurm controller probe's stdout -> facts. Never fails: carriage
 * returns and terminal escape sequences are removed first, markers are
 * found anywhere on a line, and what is missing stays absent. The result
 * (owned by the caller) has, when present:
 *   done      bool: the DONE marker was seen
 *   meta      {exit, now_epoch, now_local, host}
 *   ping      {exit, text, up (bool; absent when the reply says neither)}
 *   sinfo     {exit, text, nodes: [{name, state, states: [..], flags, reason}]}
 *             one entry per node (sinfo lists a node once per partition)
 *   squeue    {exit, text, jobs: [{id, state, end, start, nodes, name}]}
 *   services  {exit, text, units: {munge: {LoadState, ActiveState, SubState},
 *             slurmctld: {...}}}
 *   nccl_env  {exit, text, files: [paths read], vars: {NAME: value}, from: {NAME: path}}
 *             the NCCL_*, FI_*, MASTER_* settings of the profile scripts,
 *             /etc/environment, nccl.conf and the prolog scripts (`export` lines too)
 *   job       (hpnode nccl --job) {exit, text, found, error: "unknown" (slurmctld no
 *             longer knows the id) | "no_scontrol", records: [{JobId, ArrayJobId,
 *             ArrayTaskId, JobName, JobState, Reason, ExitCode, NodeList, BatchHost,
 *             NumNodes, StdOut, StdErr, ...}] (one per array task), nodes: [every
 *             NodeList name expanded, once], nodelist_unreadable}
 *   joblogs   [{path, status: read|missing|unreadable|link|pattern, lines, ended}]:
 *             the job's StdOut/StdErr files (their lines are scanned and dropped
 *             by the collector, src/collect/nccl-slurm.c)
 * exit is the block's exit status, null when its END marker is missing;
 * text is the block's first lines (for messages when it failed).
 */
cJSON *hp_slurm_parse(const char *text, size_t len);

/*
 * A Slurm hostlist ("ip-10-1-0-[12-13,20]", "a[01-03]b[1-2],c7") expanded
 * into at most max names (0: 4096), zero padding kept, into *names (owned:
 * hp_slurm_hostlist_free). *bad is set when the list is malformed or
 * longer than max (the names before it are kept). "(null)" and "None
 * assigned" are no names.
 */
size_t hp_slurm_hostlist(const char *list, char ***names, size_t max, int *bad);
void hp_slurm_hostlist_free(char **names, size_t n);

/*
 * The Slurm controller: the first Running node of the instance group whose
 * SlurmConfig.NodeType is Controller, else of a group whose name contains
 * "controller", "head" or "master" (never some other node). Sets *group
 * and *how ("SlurmConfig" or "group name") when a group was found, *iid to
 * the node or NULL when the group has no Running node. Returns -1 when no
 * group qualifies. (Checks use hp_facts_slurm_controller, which prefers
 * what the collector recorded.)
 */
int hp_slurm_controller(const struct hp_snapshot *s, const char **iid, const char **group,
			const char **how);

/*
 * The Slurm node name of a ListClusterNodes entry: the first label of its
 * PrivateDnsHostname ("ip-10-1-2-3"), into out. NULL when it has none.
 */
const char *hp_slurm_node_name(const cJSON *node, char *out, size_t n);

/* The CloudWatch streams whose lines hp_log_line_counts judges. */
enum hp_log_kind {
	HP_LOG_LIFECYCLE,      /* LifecycleConfig/<group>/<instance> */
	HP_LOG_HEALTH_AGENT    /* SagemakerHealthMonitoringAgent/<group>/<instance> */
};

/*
 * Whether a log line of that kind tells of a failure (lifecycle) or a
 * fault (health agent): one of its words where nothing cancels it, so "0
 * errors", "exit code 0" and "default" do not count.
 */
int hp_log_line_counts(enum hp_log_kind kind, const char *line);

/*
 * Whether an sinfo node entry of hp_slurm_parse is down, drained or
 * draining, failed or failing, invalid, unknown or not responding (a `*`
 * in its flags): what the Slurm node check reports, and what the probe
 * order counts as a signal.
 */
int hp_slurm_node_bad(const cJSON *node);

/*
 * The EC2 instance id of a Kubernetes node, into out (at least 20 bytes):
 * from spec.providerID ("aws:///us-west-2a/i-0abc…"), else from the node
 * name ("hyperpod-i-0abc…"), else from a sagemaker.amazonaws.com/ label
 * whose value is an instance id. Returns 0 when found, -1 otherwise.
 */
int hp_kube_instance_id(const char *name, const char *provider_id, const cJSON *labels,
			char *out, size_t n);

/*
 * The VpcConfig walk: the cluster's own VpcConfig, then each instance
 * group's OverrideVpcConfig, in the order DescribeCluster lists them and
 * only those that are objects; together they name every security group
 * and subnet the cluster's nodes use.
 *
 *	struct hp_vpc_walk w;
 *	const cJSON *vpc;
 *
 *	for (vpc = hp_vpc_first(&w, cluster); vpc; vpc = hp_vpc_next(&w))
 *		... w.group is NULL for the cluster's own, else the group
 */
struct hp_vpc_walk {
	const cJSON *group;       /* the instance group of the current config; NULL: the cluster's */
	const cJSON *next_group;  /* private: where the walk goes on */
};
const cJSON *hp_vpc_first(struct hp_vpc_walk *w, const cJSON *cluster);
const cJSON *hp_vpc_next(struct hp_vpc_walk *w);

/*
 * The ids (an array) of field "Subnets" or "SecurityGroupIds" that apply
 * to an instance group: its OverrideVpcConfig's when that lists any, else
 * the cluster's VpcConfig's (group NULL: the cluster's). NULL when none.
 */
const cJSON *hp_vpc_ids(const cJSON *cluster, const cJSON *group, const char *field);

/*
 * Tests of one security group rule, an entry of ipPermissions or
 * ipPermissionsEgress under network.security_groups.<id>, shared by the
 * EFA security group check and the suggestions: the rule is for all
 * traffic (ipProtocol -1 or "all"); it names group id in its user/group
 * pairs (IPv6 ranges and prefix lists do not count); it has the IPv4
 * range 0.0.0.0/0.
 */
int hp_sg_rule_all_traffic(const cJSON *perm);
int hp_sg_rule_names_group(const cJSON *perm, const char *id);
int hp_sg_rule_any_ipv4(const cJSON *perm);

/* ------------------------------------------------------ probe entries */

/*
 * The entries of a probe sweep under a snapshot key ("probes"): one per
 * node chosen, {state, reason, exit_code, stdout, stderr, ...}
 * (include/hp/snapshot.h), keyed by node id. They are either a member of
 * the document (hand-built snapshots, `hpnode node`, one entry each) or,
 * for a sweep over the cluster and for a replayed file, the snapshot's
 * probe store: each entry packed without its raw output (no stdout;
 * stderr cut to the HP_FACTS_STDERR_CHARS characters a finding quotes of
 * it), with the facts decoded from that output. A document member wins
 * over a store of the same key. Readers see both alike:
 *
 *	struct hp_probe_iter it;
 *	const cJSON *e;
 *
 *	for (e = hp_probes_first(s, "probes", &it); e; e = hp_probes_next(&it)) {
 *		cJSON *facts = hp_probes_facts(&it);
 *		... e->string is the node id; e is good until the next call
 *		cJSON_Delete(facts);
 *	}
 *
 * (breaking out early: hp_probes_end(&it)). Entries come in the order of
 * the member or, for a store, the order hp_probes_order() gave it (the
 * order the sweep chose its nodes), else the order they were added.
 */

/*
 * What an entry keeps of a node's stderr: all a finding quotes of it, its
 * first HP_FACTS_STDERR_CHARS UTF-8 characters and "…" when it was longer
 * (hp_text_clip; the checks' clip is as long, src/checks/node-system.c),
 * at most HP_FACTS_STDERR_SIZE bytes whatever the node printed.
 */
#define HP_FACTS_STDERR_CHARS 200
#define HP_FACTS_STDERR_SIZE HP_CLIP_SIZE(HP_FACTS_STDERR_CHARS)

/* A decoder of one node's raw output (hp_probe_parse). */
typedef cJSON *(*hp_facts_decoder)(const char *text, size_t len);

/*
 * The decoder of the outputs kept under a snapshot key: hp_probe_parse for
 * "probes", hp_nccl_probe_parse for "nccl_probes" (`hpnode nccl`); NULL
 * for a key that holds no probe sweep. A replayed file
 * reads the members named here node by node (src/core/snapshot.c); a new
 * kind of sweep adds its row (src/core/facts/cache.c).
 */
hp_facts_decoder hp_facts_decoder_of(const char *key);

struct hp_probe_iter {
	const struct hp_snapshot *s;
	const char *key;
	const cJSON *member;         /* the document's member, when it is the source */
	const cJSON *at;             /* its current child */
	size_t next;                 /* the store: the next record */
	size_t rec;                  /* the store: the current record */
	cJSON *cur;                  /* the store: the current entry, unpacked (owned) */
};

/* The first entry of key (NULL: none), and the next ones. */
const cJSON *hp_probes_first(const struct hp_snapshot *s, const char *key, struct hp_probe_iter *it);
const cJSON *hp_probes_next(struct hp_probe_iter *it);
/* Stop early: frees what the iterator holds (hp_probes_next does it at the end). */
void hp_probes_end(struct hp_probe_iter *it);
/*
 * The first entry of node id (NULL: none), positioned like an iterator
 * (hp_probes_facts works; end it with hp_probes_end).
 */
const cJSON *hp_probes_find(const struct hp_snapshot *s, const char *key, const char *id,
			    struct hp_probe_iter *it);
/*
 * The facts of the iterator's current entry, a tree of the caller's (it
 * frees it): those a collector set for its id, else the store's, else the
 * member's stdout decoded by the key's decoder (once). NULL without a
 * current entry or a decoder.
 */
cJSON *hp_probes_facts(const struct hp_probe_iter *it);
/* How many entries key has (document member or store); 0 when none. */
size_t hp_probes_count(const struct hp_snapshot *s, const char *key);

/*
 * Building a store (the probe collector, the snapshot reader):
 * hp_probes_reset empties key's store and drops a document member of that
 * key; hp_probes_add appends one entry (id = its node id) with the facts
 * decoded from its output (taken over; NULL: none), keeping the entry
 * without stdout and with stderr cut; hp_probes_order puts the first entry
 * of each id in ids first, in that order, and the others after in theirs.
 * Not locked: a caller in threads serialises its calls.
 */
void hp_probes_reset(struct hp_snapshot *s, const char *key);
void hp_probes_add(struct hp_snapshot *s, const char *key, const char *id, const cJSON *entry,
		   cJSON *facts);
void hp_probes_order(struct hp_snapshot *s, const char *key, const char *const *ids, size_t n);
/*
 * An entry as a file holds it (with its raw output): its facts decoded
 * with key's decoder (counted as the cache's run; an entry that is not an
 * object has none), then hp_probes_add. The snapshot reader's way in.
 */
void hp_probes_add_raw(struct hp_snapshot *s, const char *key, const cJSON *entry);
/* The ids of key's stored entries in order, into *ids (caller frees the array); the count. */
size_t hp_probes_ids(const struct hp_snapshot *s, const char *key, const char ***ids);
/* Whether key's entries are in the store (not the document). */
int hp_probes_stored(const struct hp_snapshot *s, const char *key);
/* The key of the snapshot's i-th store (in the order they were made), NULL past the last. */
const char *hp_probes_store_key(const struct hp_snapshot *s, size_t i);

/* ------------------------------------------------------------ the cache */

/*
 * The facts of one probed node: those a collector set for its id, else
 * the decoded stdout of the "probes" entry (decoded on the first call,
 * then kept; no stdout decodes as empty output). entry is the node's
 * value under "probes" (its key is the node's id), or an entry a "probes"
 * iterator handed out (then the facts of the first entry of its id; an
 * iterator's hp_probes_facts is exact also when a replayed file repeats
 * an id). The cache keeps each
 * node's facts packed and hands out a tree of its own to each caller, who
 * frees it: a reader holds one node's tree at a time, whatever the number
 * of nodes. The tree's strings belong to the cache (good until the
 * snapshot is released). NULL only for a NULL entry.
 */
cJSON *hp_facts_node(const struct hp_snapshot *s, const cJSON *entry);

/*
 * The NCCL probe's facts of one node (hp_nccl_probe_parse of the stdout of
 * its "nccl_probes" entry, include/hp/nccl-facts.h), decoded once per snapshot
 * like hp_facts_node, or the store's for an entry an iterator of
 * "nccl_probes" handed out; the caller frees its tree. NULL only for a
 * NULL entry.
 */
cJSON *hp_facts_nccl_node(const struct hp_snapshot *s, const cJSON *entry);

/*
 * Hand over the facts of node id (hp_probe_parse of its output, or built
 * the same way), which then win over any stdout in the snapshot. Takes
 * ownership of facts (packed at once); a later call for the same id
 * replaces them.
 */
void hp_facts_set_node(struct hp_snapshot *s, const char *id, cJSON *facts);

/*
 * The decoded Slurm controller probe (slurm.probe.stdout), or NULL when
 * the snapshot holds no such output. Owned by the snapshot.
 */
const cJSON *hp_facts_slurm(const struct hp_snapshot *s);

/*
 * The Slurm controller as the collector recorded it (snapshot key
 * "slurm"), else as hp_slurm_controller() chooses it; all NULL when no
 * group qualifies.
 */
void hp_facts_slurm_controller(const struct hp_snapshot *s, const char **iid,
			       const char **group, const char **how);

/* One Kubernetes node of kube.nodes, with the instance id behind it. */
struct hp_kube_node {
	const char *name;          /* kube.nodes[i].name, NULL when missing */
	const cJSON *node;         /* the kube.nodes entry */
	char iid[24];              /* hp_kube_instance_id(); "" when it cannot be told */
};

struct hp_kube_index;

/* The Kubernetes node index of the snapshot, built on first use. Never NULL. */
const struct hp_kube_index *hp_facts_kube(const struct hp_snapshot *s);
/*
 * An index of its own for a collector that reads the Kubernetes nodes
 * before the snapshot is prepared (the NCCL collector choosing the job's
 * nodes); the caller frees it with hp_kube_index_free.
 */
struct hp_kube_index *hp_kube_index_build(const struct hp_snapshot *s);
void hp_kube_index_free(struct hp_kube_index *x);
/* How many kube.nodes entries there are, and the i-th (in kube.nodes order). */
size_t hp_kube_index_count(const struct hp_kube_index *x);
const struct hp_kube_node *hp_kube_index_at(const struct hp_kube_index *x, size_t i);
/* The instance id behind a Kubernetes node name, or NULL. */
const char *hp_kube_index_iid(const struct hp_kube_index *x, const char *name);
/* The ListClusterNodes entry (snapshot "nodes") of an instance id, or NULL. */
const cJSON *hp_kube_index_cluster_node(const struct hp_kube_index *x, const char *iid);

/*
 * How often each decoder ran: for this snapshot's cache (hp_facts_counts),
 * and in the whole process whoever called it (hp_facts_counts_all). Tests
 * prove "once per snapshot" with them. Facts a collector decoded itself
 * (hp_facts_set_node, hp_probes_add by the sweep) are not the cache's runs.
 */
struct hp_facts_counts {
	size_t probe;              /* hp_probe_parse calls, one per node */
	size_t slurm;              /* hp_slurm_parse calls */
	size_t kube;               /* Kubernetes node index builds */
	size_t bytes;              /* memory the cache holds (packed facts and entries) */
	size_t nccl;               /* hp_nccl_probe_parse calls, one per node */
	size_t unpacks;            /* node facts built as a tree for a reader (hp_probes_facts);
				      counted in the process only (hp_facts_counts_all) */
};
void hp_facts_counts(const struct hp_snapshot *s, struct hp_facts_counts *out);
void hp_facts_counts_all(struct hp_facts_counts *out);

/*
 * Drop every fact decoded from the document (not those a collector set,
 * nor the probe store), for code that edits s->root directly;
 * hp_snapshot_set and _load do it themselves. The snapshot is then no
 * longer prepared.
 */
void hp_facts_forget(struct hp_snapshot *s);

/*
 * Decode everything the checks read, once: the facts of every probed node
 * of the document's "probes" and "nccl_probes" members (those of the probe
 * store were decoded as they came), the Slurm controller probe's facts,
 * which node is the controller, and the Kubernetes node index. Anything
 * decoded before is dropped first, so it may be called again after the
 * document changed. Before it, hp_facts_slurm and hp_facts_kube answer
 * NULL, and a document entry's facts are decoded for each caller anew.
 */
void hp_facts_prepare(struct hp_snapshot *s);
/* Whether hp_facts_prepare ran since the document last changed. */
int hp_facts_prepared(const struct hp_snapshot *s);

/* Free a cache (hp_snapshot_release calls it). */
void hp_facts_free(struct hp_facts *f);

#endif
