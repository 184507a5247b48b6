/*
 * Read-only helpers over cJSON trees: dotted paths, typed getters with
 * defaults. A missing member is never an error here; callers decide.
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

/*
 * cJSON_ParseWithLengthOpts (require_null_terminated 0) for code that may
 * run on several threads at once: libcjson writes its last-error position
 * to one process-wide variable on every parse, so parses are serialised
 * through one lock. end may be NULL.
 */
cJSON *hp_json_parse(const char *text, size_t len, const char **end);

#endif
