/*
 * Helpers over cJSON trees: dotted paths, typed getters with defaults,
 * membership of a string in an array (a missing member is never an error
 * here; callers decide), and the out-of-memory rule for building trees.
 */
#ifndef HP_JSON_H
#define HP_JSON_H

#include <cjson/cJSON.h>
#include <stdint.h>

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
 * x itself, for wrapping a cJSON constructor or Add call; NULL (cJSON
 * could not allocate) ends the process with "out of memory".
 */
cJSON *hp_json_need(cJSON *x);

#endif
