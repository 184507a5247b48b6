/*
 * The cluster snapshot: everything the collectors learned, in one JSON
 * document, so it can be saved (--save-snapshot) and replayed
 * (--snapshot) and so checks are pure functions of it.
 *
 * Layout (every key optional; absent = not collected or the call failed):
 *
 *   meta        {cluster_arg, region, node_filter, collected_at_ms, orchestrator}
 *   identity    sts GetCallerIdentity result {Account, Arn, UserId}
 *   cluster     sagemaker DescribeCluster reply, as AWS returns it
 *   clusters    [ListClusters ClusterSummaries] (only when the cluster was not found)
 *   nodes       [ListClusterNodes ClusterNodeSummaries], nodes_truncated (bool),
 *               nodes_duplicates [instance ids listed more than once; each kept once]
 *   node        DescribeClusterNode NodeDetails (with --node)
 *   node_missing  the --node instance id when DescribeClusterNode said not found
 *   events      [ListClusterEvents Events], events_truncated (bool)
 *   events_skipped  why events were not asked for (NodeProvisioningMode not Continuous)
 *   instance_types  {"p5.48xlarge": <ec2 DescribeInstanceTypes item, XML names>}
 *   logs        {group, group_found (bool),
 *                lifecycle: [{logStreamName, timestamp, message}], lifecycle_truncated,
 *                hma: [...], hma_truncated}
 *   calls       [{service, action, class, code, message, status}] — every API
 *               call that did not succeed, with its classification
 *   network     (src/collect/network.c; absent without any VpcConfig)
 *     sg_ids, subnet_ids   [ids] of the cluster VpcConfig and every OverrideVpcConfig
 *                          (plus efa-sg --sg-id), in first-seen order
 *     eks_sg_ids           [ids] the EKS cluster's securityGroupIds + clusterSecurityGroupId
 *     security_groups      {id: DescribeSecurityGroups item, XML names} (cluster and EKS groups)
 *     security_group_errors {id: {class, code, message}} — a group that could not be read
 *     subnets, subnet_errors  the same for DescribeSubnets
 *     vpcs                 {id: DescribeVpcs item}
 *     vpc_attributes       {vpc: {enableDnsSupport: bool, enableDnsHostnames: bool}};
 *                          a member is absent when its DescribeVpcAttribute failed
 *     route_tables, vpc_endpoints  [items] of every table/endpoint of those VPCs
 *                          (filter vpc-id, so main tables are included), *_truncated
 *     enis                 {count, in_vpcs, truncated}: interfaces in the whole region
 *                          (the quota is regional), at most HP_ENI_PAGES pages of 1,000
 *     eni_quota            {value, service_code, quota_code, name}: L-DF5E4CA3
 *     eks_name, eks        the EKS cluster name and its DescribeCluster "cluster";
 *                          eks_missing: true when EKS answered not found
 *     offerings            {"p5.48xlarge": [zones]} for every instance group type
 *   probes      {"<instance-id>": {state: probed|unreachable|skipped, reason,
 *                exit_code (number or null), stdout (raw, at most 1 MiB),
 *                stderr (raw, at most 64 KiB), truncated (the "@@HP@@ DONE"
 *                marker was not seen), duration_ms, group, instance_type,
 *                transport, start_attempts, terminated, stdout_capped}} —
 *               one entry per node chosen for the SSM sweep (and per node
 *               skipped because it is not Running). In memory the sweep's
 *               entries are in the probe store (include/hp/facts.h), without
 *               the raw output; in a saved file they come in the order the
 *               sessions ended, and
 *   probes_order  [instance ids] gives the order the sweep chose them in,
 *               which a replay restores (absent: the file's order)
 *   probes_meta {transport, concurrency, rate_per_s, timeout_s, selection
 *                (all|node|sample), sample, requested, probed, unreachable,
 *                skipped, wall_ms, plugin_version | plugin_error, note (why
 *                nothing was probed, e.g. --no-probe)}
 *               `hpnode node` writes one entry (key "local" when the instance id is
 *               unknown), meta.mode "node" and, with --orchestrator,
 *               meta.orchestrator ("EKS" or "Slurm").
 *   eks         eks DescribeCluster `cluster` object of the orchestrator (EKS only;
 *               src/collect/eks.c): a copy of network.eks when the network
 *               collector read it, else read once for the kubectl server check
 *   kube        the Kubernetes view (EKS only; src/collect/kube/read.c):
 *               kubectl {server, context, cluster, verified_by "endpoint"|"cluster-arn"}
 *               skipped {kind, message, status, detail} — present when kubectl was not
 *                 used: kind "disabled" (--no-kube), "kubectl_missing", "kubeconfig",
 *                 "server_mismatch", "unverified", "auth", "unreachable"; then no data
 *               nodes [{name, provider_id, labels{sagemaker.amazonaws.com/..., zone,
 *                 instance-type}, annotations{sagemaker.amazonaws.com/...},
 *                 ready{status, reason, message, since}, unschedulable,
 *                 conditions[{type, status, reason, message, since}] (every condition but
 *                 Ready: pressure and node-problem-detector ones; at most 32,
 *                 conditions_truncated past that)}]
 *               pods [{namespace, name, node, phase, reason, message, ready, owner,
 *                 labels{k8s-app, app, app.kubernetes.io/name}, containers[{name, init,
 *                 ready, restarts, state, reason, message, exit_code, last_reason,
 *                 last_exit_code}]}] — pods in a problem state (any container
 *                 waiting, failed, restarted or not ready; phase not Running) plus
 *                 every CoreDNS pod; pods_total, pods_dropped (problem pods over the
 *                 cap), system_pods {aws-node, kube-proxy, kube-dns: pods counted}
 *               daemonsets [{name, k8s_app, desired, current, ready, available,
 *                 unavailable, updated, misscheduled}] (kube-system)
 *               events [{namespace, kind, name, reason, type, message, count, last,
 *                 host, source}] (FailedCreatePodSandBox only), events_truncated
 *               node_events [as events] — Warning events about nodes
 *                 (node-problem-detector, kubelet), node_events_truncated
 *               namespaces [names]
 *               aws_node_logs [{pod, node, previous, lines[] | status, error}]
 *               errors {nodes|pods|daemonsets|events|node_events|namespaces: {status,
 *                 message}} —
 *                 reads that failed after access was verified; that data is absent
 *   slurm       {controller: instance id, group, how: "SlurmConfig"|"name",
 *                probe: {one "probes" entry (state, reason, exit_code, stdout,
 *                stderr, truncated, duration_ms, ...) of the Slurm controller probe}}
 *   nccl        what the NCCL checks read (src/collect/nccl-read.c, hp_nccl_collect):
 *               options {namespace, job, log_tail, log_pods, since_s}
 *               kube_skipped {kind, message, ...} — kubectl not trusted (a copy of
 *                 kube.skipped, or kind "not_collected"/"bad_namespace"); then no
 *                 Kubernetes data
 *               job {name, label "kubeflow"|"job-name", selector, error}
 *               pods [{namespace, name, node, phase, reason, message, problem,
 *                 restarted, owner{kind, name, api_version}, labels{training.kubeflow.org/
 *                 job-name, .../replica-type, .../replica-index, job-name, app,
 *                 app.kubernetes.io/name}, conditions_false[{type, status, reason,
 *                 message}], containers[{name, init, ready, restarts, state, reason,
 *                 message, exit_code, last_reason, last_exit_code}], spec{containers[
 *                 {name, image, env{NCCL_*, FI_*, MASTER_*, ...: value|"(valueFrom)"},
 *                 requests{}, limits{}, mounts[{name, path}], ipc_lock}],
 *                 init_containers[names], volumes[{name, kind, medium, size_limit,
 *                 path}]}, efa_requested}] — the job's pods (training.kubeflow.org/
 *                 job-name, else job-name), or without a job every pod with a job
 *                 label or an EFA or GPU request; pods_listed, pods_dropped (over
 *                 HP_NCCL_MAX_PODS), pods_requesting_efa
 *               services [{namespace, name, cluster_ip, headless, selector{}, ports[]}]
 *               network_policies [{namespace, name, pod_selector, policy_types[],
 *                 ingress_rules, egress_rules, ingress, egress}]
 *               daemonsets [{namespace, name, images[], node_selector{}, desired, ready,
 *                 available}] (every namespace); *_truncated past 2000 objects
 *               log_reads [{namespace, pod, container, previous, status, lines, capped,
 *                 batched, error}] — `kubectl logs --tail=N` of each container, and
 *                 --previous where it restarted or the pod failed; batched when a
 *                 log_batches call read it
 *               log_batches [{namespace, selector, container, pods, status, other_lines,
 *                 error}] — `kubectl logs --selector=S --container=C --prefix
 *                 --ignore-errors` reading several pods of a job in one call
 *                 (other_lines: lines that belonged to none of its pods)
 *               log_scan {lines, sources, sources_dropped, tail, hits[{code, pattern,
 *                 priority, section, group, source "ns/pod/container[ (previous)]",
 *                 count, last_line, evidence[]}], markers[{marker, source, count,
 *                 evidence[]}]} (hp_nccl_scan_json)
 *               errors {pods|services|networkpolicies|daemonsets: {status, message}}
 *               cloudwatch {group, window_s, start_ms, end_ms, filters, pages, events,
 *                 truncated, scan (as log_scan; sources are log streams), skipped,
 *                 error {class, code, message}} — absent unless asked for
 *
 * Later collectors add keys (kube, probes); a new kind of fact is one more key.
 *
 * The file. hp_snapshot_save writes the document as cJSON_Print would, one
 * member after another, so no copy of the whole text is ever made. When a
 * file is being saved while collecting (hp_snapshot_stream_open, before the
 * sweep), each probe entry goes to it with its raw output as soon as its
 * node is done (hp_snapshot_stream_entry), first in the file, and the raw
 * text is not kept in memory; hp_snapshot_save then adds the rest and
 * renames the file into place. hp_snapshot_load reads a file member by
 * member and the members that hold probe sweeps (hp_facts_decoder_of) entry
 * by entry, each decoded into the probe store at once; no entry may be
 * larger than HP_SNAPSHOT_MAX_ENTRY bytes, nor the file than
 * HP_SNAPSHOT_MAX_BYTES.
 *
 * Beside the document, the snapshot owns the cache of what the decoders
 * made of it (include/hp/facts.h). The cache is the one part a const
 * snapshot may change (filled on first read); hp_snapshot_set, _load and
 * _release drop what it decoded. Code that edits root directly after
 * facts were read calls hp_facts_forget().
 */
#ifndef HP_SNAPSHOT_H
#define HP_SNAPSHOT_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "hp/err.h"
#include "hp/sys.h"

#define HP_SNAPSHOT_VERSION 1

/* The largest snapshot file read, and the largest probe entry in it (text). */
#define HP_SNAPSHOT_MAX_BYTES ((uint64_t)4 << 30)
#define HP_SNAPSHOT_MAX_ENTRY ((size_t)16 << 20)

struct hp_facts;
struct hp_snap_stream;

struct hp_snapshot {
	cJSON *root;
	struct hp_facts *facts;   /* decoded facts, created on first use; NULL until then */
	struct hp_snap_stream *stream;  /* the file being saved as it is collected, or NULL */
};

void hp_snapshot_init(struct hp_snapshot *s);
void hp_snapshot_release(struct hp_snapshot *s);
/* Replace (or add) top-level key; takes ownership of item. */
void hp_snapshot_set(struct hp_snapshot *s, const char *key, cJSON *item);
const cJSON *hp_snapshot_get(const struct hp_snapshot *s, const char *key);
/* Record a failed API call under "calls". */
void hp_snapshot_add_call(struct hp_snapshot *s, const char *service, const char *action,
			  const char *cls, const char *code, const char *message, long status);

/*
 * Serialise to / load from a JSON file. Save writes path (or finishes the
 * file hp_snapshot_stream_open began, whatever path says); load validates
 * the version and replaces what s held only when the whole file was good.
 */
int hp_snapshot_save(struct hp_snapshot *s, struct hp_sys *sys, const char *path,
		     struct hp_error *e);
int hp_snapshot_load(struct hp_snapshot *s, struct hp_sys *sys, const char *path,
		     struct hp_error *e);

/*
 * Saving while collecting. stream_open starts path's file (with save's
 * refusals, at once; -1 with e set). stream_entry appends one entry of
 * key's sweep, id, with its raw output out/err (NUL-free; NULL: the
 * entry's own "stdout"/"stderr" members) standing for the entry's
 * "stdout"/"stderr" members; one key is streamed at a time, and
 * stream_end(key) closes it with key + "_order" (the store's order of
 * key). A write error is kept and reported by hp_snapshot_save.
 * stream_abort gives up: the file never appears. hp_snapshot_release
 * aborts a stream still open.
 */
int hp_snapshot_stream_open(struct hp_snapshot *s, struct hp_sys *sys, const char *path,
			    struct hp_error *e);
int hp_snapshot_streaming(const struct hp_snapshot *s);
void hp_snapshot_stream_entry(struct hp_snapshot *s, const char *key, const char *id,
			      const cJSON *entry, const char *out, size_t out_len, const char *err,
			      size_t err_len);
void hp_snapshot_stream_end(struct hp_snapshot *s, const char *key);
void hp_snapshot_stream_abort(struct hp_snapshot *s);
/*
 * The most bytes of its file the last hp_snapshot_load held at once (its
 * read window): about the largest member or entry, whatever the file's
 * size (tests and benches show it).
 */
size_t hp_snapshot_load_window(void);

/* Convenience for checks: cluster name, ARN, id (last ARN segment), orchestrator. */
const char *hp_snap_cluster_name(const struct hp_snapshot *s);
const char *hp_snap_cluster_arn(const struct hp_snapshot *s);
/* Writes the 12-char cluster id or "" when the ARN is missing/malformed. */
void hp_snap_cluster_id(const struct hp_snapshot *s, char out[64]);
/*
 * The one pass over a final node list (collected or replayed): an entry
 * whose InstanceId came before is dropped (the first is kept), and past
 * max entries (0: no cap) the rest are dropped, per node whatever the page
 * sizes were. Returns the ids that were listed more than once (a new
 * array, each id once, in first-seen order; NULL when none) and sets
 * *capped when the cap cut the list.
 */
cJSON *hp_snap_nodes_dedup(cJSON *nodes, size_t max, int *capped);
/* The node cap: the listing's 5,000 pages of 100, counted per node (a page may hold any number). */
#define HP_MAX_NODES 500000
/*
 * hp_snap_nodes_dedup on s's "nodes" (cut at max), the duplicate ids into
 * "nodes_duplicates" and a cut into "nodes_truncated".
 */
void hp_snap_nodes_finish(struct hp_snapshot *s, size_t max);
/* Whether a ListClusterNodes/DescribeClusterNode entry's InstanceStatus.Status is Running. */
int hp_snap_node_running(const cJSON *node);
/* "EKS", "Slurm" or "Unknown" (no cluster). */
const char *hp_snap_orchestrator(const struct hp_snapshot *s);

#endif
