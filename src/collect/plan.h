/*
 * Collector steps as tasks (hp/tasks.h), for the collectors themselves:
 * hp_collect_cluster runs the network steps on the same threads as the node
 * pager. Not part of the collectors' interface (hp/collect.h).
 */
#ifndef HP_COLLECT_PLAN_H
#define HP_COLLECT_PLAN_H

#include "hp/collect.h"
#include "hp/tasks.h"

struct hp_net_plan;

/*
 * Adds the network steps for o to ts (reading "cluster" from s, which must
 * not change until hp_net_plan_finish); NULL, and nothing added, when the
 * cluster names no security group or subnet.
 */
struct hp_net_plan *hp_net_plan_new(const struct hp_network_opts *o, const struct hp_snapshot *s,
				    struct hp_tasks *ts);
/*
 * After ts ran: the steps' failed calls into s's "calls" and their facts
 * into s's "network", in the sequential order; frees p (NULL is a no-op).
 */
void hp_net_plan_finish(struct hp_net_plan *p, struct hp_snapshot *s);

/* The API phase's progress callback (hp_collect_set_progress), serialised. */
void hp_collect_progress(const char *action, int page, size_t items, size_t expected);

/*
 * The node list in partitions read at once (nodelist.c): "nodes",
 * "nodes_truncated" (the max_pages cap cut it, with "nodes_page_cap"),
 * "nodes_partial" (the groups whose reads failed or were cut) and
 * "nodes_pages" into s, failed calls into s's "calls". Returns -1, with s
 * untouched, when the cluster fits one page or a group has no name or
 * CurrentCount (read it as one chain then).
 */
int hp_collect_node_partitions(struct hp_aws *a, struct hp_snapshot *s, const cJSON *cluster,
			       const char *arn, int max_pages);

/* Drops the nodes whose InstanceId an earlier node of the array has; how many. */
size_t nodes_dedup_by_id(cJSON *nodes);

#endif
