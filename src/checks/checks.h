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

/* ssm.c */
extern const struct hp_check hp_check_ssm_reachability;

/* logs.c */
extern const struct hp_check hp_check_logs_group;
extern const struct hp_check hp_check_logs_lifecycle;
extern const struct hp_check hp_check_logs_health_agent;

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
