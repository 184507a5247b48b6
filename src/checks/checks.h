/*
 * Private to src/checks: the check objects the area files define (collected
 * by pointer in registry.c) and the small text helpers they share. Nothing
 * outside src/checks includes this; the public side is include/hp/check.h.
 */
#ifndef HP_CHECKS_PRIVATE_H
#define HP_CHECKS_PRIVATE_H

#include <cjson/cJSON.h>

#include "hp/check.h"

/* api.c: one row per report group, all sharing one run function. */
extern const struct hp_check hp_check_api_identity;
extern const struct hp_check hp_check_api_events;
extern const struct hp_check hp_check_api_nodes;
extern const struct hp_check hp_check_api_vpc;
extern const struct hp_check hp_check_api_logs;
extern const struct hp_check hp_check_api_eks;
extern const struct hp_check hp_check_api_ssm;

/* cluster.c */
extern const struct hp_check hp_check_cluster_identity;
extern const struct hp_check hp_check_cluster_status;
extern const struct hp_check hp_check_cluster_node_recovery;
extern const struct hp_check hp_check_cluster_instance_groups;
extern const struct hp_check hp_check_cluster_threads_per_core;

/* events.c */
extern const struct hp_check hp_check_events_signals;

/* nodes.c */
extern const struct hp_check hp_check_nodes_status;
extern const struct hp_check hp_check_nodes_target;

/* access.c */
extern const struct hp_check hp_check_cluster_vpc_config;
extern const struct hp_check hp_check_ssm_targets;

/* efa-sg.c */
extern const struct hp_check hp_check_network_efa_sg;

/* network.c */
extern const struct hp_check hp_check_network_vpc;
extern const struct hp_check hp_check_network_dns;
extern const struct hp_check hp_check_network_routing;
extern const struct hp_check hp_check_network_endpoints;
extern const struct hp_check hp_check_network_eks;
extern const struct hp_check hp_check_network_subnet_ips;
extern const struct hp_check hp_check_network_eni;
extern const struct hp_check hp_check_network_capacity;
/* ssm.c */
extern const struct hp_check hp_check_ssm_reachability;

/* logs.c */
extern const struct hp_check hp_check_logs_group;
extern const struct hp_check hp_check_logs_lifecycle;
extern const struct hp_check hp_check_logs_health_agent;

/* node-*.c: on-node checks over the "probes" key. */
extern const struct hp_check hp_check_node_probe;
extern const struct hp_check hp_check_node_disk_root;
extern const struct hp_check hp_check_node_disk_sagemaker;
extern const struct hp_check hp_check_node_inodes;
extern const struct hp_check hp_check_node_shm;
extern const struct hp_check hp_check_node_nvme;
extern const struct hp_check hp_check_node_memory;
extern const struct hp_check hp_check_node_oom;
extern const struct hp_check hp_check_node_time;
extern const struct hp_check hp_check_node_ssm_agent;
extern const struct hp_check hp_check_node_containerd;
extern const struct hp_check hp_check_node_slurm;
extern const struct hp_check hp_check_node_kernel;
extern const struct hp_check hp_check_node_gpu_count;
extern const struct hp_check hp_check_node_gpu_xid;
extern const struct hp_check hp_check_node_gpu_ecc;
extern const struct hp_check hp_check_node_gpu_remap;
extern const struct hp_check hp_check_node_gpu_recovery;
extern const struct hp_check hp_check_node_gpu_clocks;
extern const struct hp_check hp_check_node_gpu_dcgm;
extern const struct hp_check hp_check_node_neuron;
extern const struct hp_check hp_check_node_efa;
extern const struct hp_check hp_check_node_gpu_nvlink;
extern const struct hp_check hp_check_node_gpu_nvvs;
extern const struct hp_check hp_check_node_disk_containerd;
extern const struct hp_check hp_check_node_kubelet;
extern const struct hp_check hp_check_node_provisioning;
extern const struct hp_check hp_check_node_net_errors;
extern const struct hp_check hp_check_node_imds;

/* kube.c */
extern const struct hp_check hp_check_kube_access;
extern const struct hp_check hp_check_kube_node_health;
extern const struct hp_check hp_check_kube_deep_health;
extern const struct hp_check hp_check_kube_node_ready;
extern const struct hp_check hp_check_kube_namespace;
extern const struct hp_check hp_check_kube_aws_node;
extern const struct hp_check hp_check_kube_kube_proxy;
extern const struct hp_check hp_check_kube_coredns;
extern const struct hp_check hp_check_kube_sandbox;
extern const struct hp_check hp_check_kube_workload_pods;

/* slurm.c */
extern const struct hp_check hp_check_slurm_controller;
extern const struct hp_check hp_check_slurm_slurmctld;
extern const struct hp_check hp_check_slurm_munge;
extern const struct hp_check hp_check_slurm_nodes;
extern const struct hp_check hp_check_slurm_jobs;
extern const struct hp_check hp_check_slurm_mapping;

/* An INFO line: no priority, no section pointer, no node. */
#define HP_CHECK_INFO(em, ...) hp_emitx((em), HP_TAG_INFO, HP_PNONE, "", NULL, __VA_ARGS__)

/* Free text from the cluster is cut at this many characters, plus "…". */
#define HP_CHECK_CLIP_CHARS 200
#define HP_CHECK_CLIP_SIZE (HP_CHECK_CLIP_CHARS * 4 + 8)

/*
 * Copy s (NULL reads as "") into out, cut after HP_CHECK_CLIP_CHARS UTF-8
 * characters with "…" appended when anything was cut; returns out.
 */
const char *hp_check_clip(const char *s, char out[HP_CHECK_CLIP_SIZE]);

/* Epoch seconds as "2025-01-31T12:00:00Z"; "unknown time" when s < 0. */
const char *hp_check_iso_time(double s, char out[32]);

/* String member at a dotted path, or def when absent or empty. */
const char *hp_check_str(const cJSON *obj, const char *path, const char *def);

#endif
