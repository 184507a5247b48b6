/*
 * Read-only helpers over cJSON trees: dotted paths, typed getters with
 * defaults, membership of a string in an array. A missing member is never
 * an error here; callers decide.
 *
 * Out of memory: cJSON reports a failed allocation by returning NULL (and
 * cJSON_Add*ToObject then drops the member silently). hpnode never lets
 * that happen: hp_json_init() points cJSON's allocator at xmalloc
 * (include/hp/util.h), so a failed allocation ends the process with
 * "hpnode: fatal: out of memory" like every other allocation. It runs
 * once at the start of main() and of the unit and fuzz test programs
 * (tests/unit/t.c, tests/fuzz/common.c); from then on no caller tests a
 * cJSON constructor or cJSON_Add* result for NULL on account of memory.
 * (cJSON still returns NULL for misuse, e.g. a NULL object or key.)
 */
#ifndef HP_JSON_H
#define HP_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Install the allocation hooks (idempotent; call before any other thread
 * starts): xmalloc, which exits on out of memory, and free.
 */
void hp_json_init(void);
/* Allocations made through the hooks so far (tests prove the hooks are in place). */
size_t hp_json_allocations(void);

/* Member by dotted path ("Orchestrator.Eks.ClusterArn"); NULL when absent. */
const cJSON *hp_json_get(const cJSON *obj, const char *path);
/* String at path or NULL (numbers are not converted). */
const char *hp_json_str(const cJSON *obj, const char *path);
/* Number at path (or numeric string, as EC2 XML gives) or def. */
double hp_json_num(const cJSON *obj, const char *path, double def);
/* true/false or "true"/"false" strings; def when absent. */
int hp_json_bool(const cJSON *obj, const char *path, int def);
/* Array at path; NULL when absent or not an array. */
const cJSON *hp_json_arr(const cJSON *obj, const char *path);
/* Number of array elements at path (0 when absent). */
int hp_json_len(const cJSON *obj, const char *path);
/* Whether the array arr (NULL or not an array: no) holds the string s. */
int hp_json_has_str(const cJSON *arr, const char *s);

/*
 * Parse the len bytes at text (one RFC 8259 value; what follows it is left
 * for the caller, at *end) into a cJSON tree whose member names and string
 * values of at most HP_JSON_SHARE_LEN bytes point into one process-wide
 * table of strings kept once each (cJSON_StringIsConst, cJSON_IsReference):
 * a list of 20,000 nodes names the same few keys, groups, types and states
 * over and over (a third of its memory). cJSON_Delete, cJSON_Duplicate,
 * the printers and the getters treat the tree as any other; its strings
 * must not be written to in place. The table lives as long as the process
 * and stops taking strings at HP_JSON_SHARE_MAX bytes (what is not taken
 * stays the tree's own). NULL on malformed JSON, with *end at the fault.
 * Stricter than libcjson (no BOM, the RFC's whitespace and numbers, at
 * most HP_JSON_DEPTH levels, no raw NUL in a string); what it accepts,
 * libcjson reads into the same tree. Items and own strings come from
 * cJSON's allocator (the hooks of hp_json_init). Safe to call from several
 * threads. end may be NULL.
 */
#define HP_JSON_SHARE_LEN 64
#define HP_JSON_SHARE_MAX ((size_t)16 << 20)
#define HP_JSON_DEPTH 512
cJSON *hp_json_parse_shared(const char *text, size_t len, const char **end);

/*
 * cJSON_ParseWithLengthOpts (require_null_terminated 0) for code that may
 * run on several threads at once: libcjson writes its last-error position
 * to one process-wide variable on every parse, so parses are serialised
 * through one lock. end may be NULL.
 */
cJSON *hp_json_parse(const char *text, size_t len, const char **end);

#endif
