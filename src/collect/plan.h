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

#endif
