/*
 * Collectors: read the cluster through the AWS client and fill the
 * snapshot. They never judge; checks do. A failed call is recorded in the
 * snapshot ("calls") and its fact left absent, so no failure can read as
 * healthy.
 */
#ifndef HP_COLLECT_H
#define HP_COLLECT_H

#include "hp/aws.h"
#include "hp/snapshot.h"
#include "hp/ssm.h"

/* Caps of the original tool: events 5 x 100, nodes 200 x 100. */
#define HP_EVENT_PAGES 5
#define HP_NODE_PAGES 200
#define HP_LOG_PAGES 5
#define HP_LOG_EVENTS_MAX 2000

struct hp_collect_opts {
	const char *cluster;   /* name or ARN */
	const char *node;      /* --node instance id or NULL */
	int event_pages;       /* 0 = default */
	int node_pages;
};

/*
 * Cluster-level collection: identity, DescribeCluster, nodes, events,
 * instance types, CloudWatch logs. Returns -1 with e set only for what
 * makes a triage impossible: credentials rejected (HP_ERR_CREDS), no
 * reply at all (HP_ERR_HTTP), the cluster not found (HP_ERR_NOT_FOUND,
 * with "clusters" filled when they could be listed) or not readable.
 */
int hp_collect_cluster(struct hp_aws *a, const struct hp_collect_opts *o, struct hp_snapshot *s,
		       struct hp_error *e);

/* What the on-node probe sweep does (triage's --node, --sample, --concurrency, ...). */
struct hp_probe_opts {
	const char *node;        /* only this instance id, or NULL */
	int sample;              /* probe this many Running nodes (0 = every one) */
	int concurrency;         /* sessions at once */
	double rate_per_s;       /* StartSession calls per second */
	long timeout_ms;         /* per node */
	enum hp_ssm_transport transport;
	/* Called after each node (under a lock), e.g. for a progress line; may be NULL. */
	void (*progress)(void *ud, const struct hp_ssm_progress *p);
	void *progress_ud;
};

/* Defaults: every Running node, 16 at once, 3 StartSession/s, 180 s each, native. */
void hp_probe_opts_defaults(struct hp_probe_opts *o);

/*
 * Probe the chosen nodes over SSM and record each one's outcome under
 * "probes" and the sweep under "probes_meta" (after hp_collect_cluster).
 * Failed StartSession/TerminateSession calls go to "calls", one row per
 * distinct failure. Never fails the triage: returns 0.
 */
int hp_collect_probes(struct hp_aws *a, const struct hp_probe_opts *o, struct hp_snapshot *s,
		      struct hp_error *e);

/* Record a failed call in the snapshot (service in IAM spelling). */
void hp_collect_record(struct hp_snapshot *s, enum hp_svc svc, const char *action,
		       const struct hp_aws_result *r);

#endif
