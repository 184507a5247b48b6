/*
 * Private to the on-node checks (src/checks/node-*.c): the loop over the
 * probed nodes of a snapshot, per-node results and their summary across
 * nodes, and lookups in the node's instance type. A node's facts come
 * from the snapshot's facts cache (include/hp/facts.h): decoded once,
 * whichever check asks first.
 */
#ifndef HP_CHECKS_NODE_H
#define HP_CHECKS_NODE_H

#include <cjson/cJSON.h>

#include "hp/check.h"
#include "hp/facts.h"

struct node_results;

/* One probed node, as a check's judge function sees it. */
struct node_ctx {
	const char *id;             /* snapshot key: instance id, or "local" */
	char who[80];               /* "node i-0abc…" or "this node" */
	const char *type;           /* "ml.p5.48xlarge", NULL when unknown */
	const cJSON *type_info;     /* instance_types entry (EC2 XML names) or NULL */
	const char *orchestrator;   /* "EKS", "Slurm" or "Unknown" */
	const cJSON *entry;         /* the "probes" (or "nccl_probes") entry */
	const cJSON *facts;         /* hp_facts_node() (or hp_facts_nccl_node()): the node's facts */
	/*
	 * For a check of the NCCL probe (HP_SOURCE_NCCL_PROBE): the node probe's
	 * facts of the same node when it was probed too, else NULL. For the node
	 * probe's own checks: facts again.
	 */
	const cJSON *node_facts;
	struct node_results *out;
};

/* One node's result; the message names the node. */
struct node_say;

/*
 * For each node whose probe state is "probed": call judge with its facts,
 * then emit every result; identical results (same tag, priority, section
 * and stem) are folded by the rule of fold.h.
 */
void hp_node_each(const struct hp_snapshot *snap, struct hp_emit *em,
		  void (*judge)(struct node_ctx *c));
/* The same over the nodes of the NCCL probe ("nccl_probes"), with hp_facts_nccl_node(). */
void hp_node_each_nccl(const struct hp_snapshot *snap, struct hp_emit *em,
		       void (*judge)(struct node_ctx *c));

/*
 * The node pass: the n on-node checks of one probe source (each_node set,
 * their source equal to it), judged in one walk over its probed nodes,
 * each node's facts decoded once for all of them; check i's findings are
 * appended to outs[i], the same as hp_node_each would make them. With
 * secs (n entries), the seconds check i's own judging took (each call of
 * its each_node, hp_check_clock) are added to secs[i]; the decoding of the
 * facts all of them share is no check's.
 */
void hp_node_pass(const struct hp_snapshot *snap, enum hp_probe_source source,
		  const struct hp_check *const *checks, size_t n, struct hp_findings *outs,
		  double *secs);

/*
 * The most result rows (a message, evidence, values) the walks have held
 * at once in this process, for the tests: a result that its fold keeps
 * only the node of is a pointer in its class, not a row, so this stays
 * bounded by checks and classes however many nodes are judged.
 */
size_t hp_node_rows_peak(void);

/*
 * Record a result for c's node. stem names the result without the node
 * ("Root volume over 90% full"); the folded finding of many nodes reads
 * "<stem> on N nodes". section NULL means the check's own.
 */
struct node_say *hp_node_say(struct node_ctx *c, enum hp_tag tag, enum hp_prio prio,
			     const char *section, const char *stem, const char *fmt, ...)
	HP_PRINTF(6, 7);
/* Add an evidence line to a result. */
void hp_node_evidence(struct node_say *s, const char *fmt, ...) HP_PRINTF(2, 3);
/* A placeholder value of the result's finding (--suggest), kept while it is not folded. */
void hp_node_var(struct node_say *s, const char *name, const char *value);

/* Expected counts from the instance type; -1 when not known. */
int hp_node_type_gpus(const struct node_ctx *c);
int hp_node_type_efa(const struct node_ctx *c);
int hp_node_type_neuron_devices(const struct node_ctx *c);
/* 1 the type has NVMe instance store, 0 it has none, -1 unknown. */
int hp_node_type_instance_store(const struct node_ctx *c);

/* The service record of a unit (name without ".service"), or NULL. */
const cJSON *hp_node_unit(const struct node_ctx *c, const char *unit);
/* The unit is installed (LoadState loaded). */
int hp_node_unit_loaded(const struct node_ctx *c, const char *unit);
/* Its ActiveState, or "" when unknown. */
const char *hp_node_unit_state(const struct node_ctx *c, const char *unit);

/* Bytes (given in KiB) as "93.1 GiB"; returns out. */
const char *hp_node_size(double kib, char out[32]);
/* Epoch seconds as ISO-8601 UTC, or "time unknown"; returns out. */
const char *hp_node_time(double epoch, char out[32]);

#endif
