/*
 * Private to src/core/facts: what the facts cache (cache.c) calls in the
 * decoders that build a structure rather than a cJSON tree.
 */
#ifndef HP_FACTS_INT_H
#define HP_FACTS_INT_H

#include "hp/facts.h"

/* The Kubernetes node index of a snapshot (kube.c); freed with hp_kube_index_free. */
struct hp_kube_index *hp_kube_index_build(const struct hp_snapshot *s);
void hp_kube_index_free(struct hp_kube_index *x);

/* Count one run of a decoder in the process-wide totals (hp_facts_counts_all). */
enum facts_decoder { FACTS_PROBE, FACTS_SLURM, FACTS_KUBE };
void hp_facts_count_run(enum facts_decoder d);

#endif
