/*
 * Private to src/core/facts: what the facts cache (cache.c) calls in the
 * decoders that build a structure rather than a cJSON tree.
 */
#ifndef HP_FACTS_INT_H
#define HP_FACTS_INT_H

#include <stdint.h>

#include "hp/facts.h"

/* Count one run of a decoder in the process-wide totals (hp_facts_counts_all). */
enum facts_decoder { FACTS_PROBE, FACTS_SLURM, FACTS_KUBE, FACTS_NCCL };
void hp_facts_count_run(enum facts_decoder d);

/*
 * Packed JSON values (pack.c): each value kept once, compactly; numbers
 * name them. hp_pack_put stores a value (an equal one stored before gives
 * the same number); hp_pack_get builds a fresh tree of it whose strings
 * point into the pack (valid until hp_pack_free; cJSON_Delete frees the
 * tree alone). Not locked: puts are serialised by the caller, and no get
 * runs during a put.
 */
#define HP_PACK_NONE UINT32_MAX
struct hp_pack;
struct hp_pack *hp_pack_new(void);
void hp_pack_free(struct hp_pack *p);
uint32_t hp_pack_put(struct hp_pack *p, const cJSON *v);     /* HP_PACK_NONE for NULL */
cJSON *hp_pack_get(const struct hp_pack *p, uint32_t ref);   /* NULL for HP_PACK_NONE */
/* The number of the string value s when one was stored, else HP_PACK_NONE (nothing stored). */
uint32_t hp_pack_find_str(const struct hp_pack *p, const char *s);
size_t hp_pack_bytes(const struct hp_pack *p);               /* memory held */
size_t hp_pack_count(const struct hp_pack *p);               /* distinct values */

#endif
