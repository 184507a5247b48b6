/*
 * Private to src/core/facts/nccl-*.c: the NCCL probe decoders. The output
 * is framed by the node probe's framer (probe-int.h, pb_nccl_frame: lines
 * already cleaned to UTF-8 text without control characters, a TAB turned
 * into a space) and read with its text and facts helpers.
 */
#ifndef HP_NCCL_INT_H
#define HP_NCCL_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "hp/nccl-facts.h"
#include "probe-int.h"

/* Items kept per list in the facts. */
#define NF_LIST 64

/* "rc" (null when the block had no END) and "present" (false for 127) of a block. */
void nf_rc(cJSON *obj, const struct pb_block *b);
/* "lib <path>" and "link <path> -> <target>" lines of b (none when NULL) into o's arrays
   libs and links (created, at most NF_LIST each). */
void nf_paths(const struct pb_block *b, cJSON *o);
/* An "unlimited" or a count: stored as the string "unlimited" or a number; 0 when neither. */
int nf_limit(cJSON *obj, const char *key, const char *word, double scale);

/* The decoders, one per block (or pair), each adding its key to facts. */
void hp_nccl_decode_probe(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_topo(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_pci_numa(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_acs(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_iommu(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_peermem(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_efa_installer(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_ofi_plugin(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_libfabric(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_nccl_lib(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_netif(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_limits(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_procs(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_hugepages(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_logind(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_shm(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_numa(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_firewall(const struct pb_input *f, cJSON *facts);
void hp_nccl_decode_environment(const struct pb_input *f, cJSON *facts);

#endif
