/*
 * Private to src/core/facts/nccl-*.c: small text and facts helpers shared
 * by the NCCL probe decoders. Lines come from hp_nccl_frame_split, already
 * cleaned (valid UTF-8, no control characters, TAB turned into a space).
 */
#ifndef HP_NCCL_INT_H
#define HP_NCCL_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "hp/nccl.h"

/* A field copied out of a line is cut at this size. */
#define NF_FIELD 256
/* Items kept per list in the facts. */
#define NF_LIST 64

/* Whitespace-separated words of s, at most max; returns the number found. */
size_t nf_words(const char *s, char (*out)[NF_FIELD], size_t max);
/* A whole non-negative decimal integer (at most 2^53); 0 when s is not one. */
int nf_count(const char *s, double *out);
/* s starts with prefix. */
int nf_prefix(const char *s, const char *prefix);
/* s without leading blanks. */
const char *nf_skip(const char *s);

/* The object under key, created when missing. */
cJSON *nf_obj(cJSON *parent, const char *key);
cJSON *nf_arr(cJSON *parent, const char *key);
void nf_num(cJSON *obj, const char *key, double v);
void nf_str(cJSON *obj, const char *key, const char *v);
void nf_bool(cJSON *obj, const char *key, int v);
/* "rc" (null when the block had no END) and "present" (false for 127) of a block. */
void nf_rc(cJSON *obj, const struct hp_nccl_block *b);
/* The first non-blank line of a block, or NULL. */
const char *nf_first(const struct hp_nccl_block *b);
/* An "unlimited" or a count: stored as the string "unlimited" or a number; 0 when neither. */
int nf_limit(cJSON *obj, const char *key, const char *word, double scale);

#endif
