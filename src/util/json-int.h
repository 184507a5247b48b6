/*
 * What json.c (cJSON's hooks) and json-share.c (the arena the shared
 * parser allocates from) tell each other; for them and the unit tests only.
 */
#ifndef HP_JSON_INT_H
#define HP_JSON_INT_H

#include <stddef.h>

#include "hp/util.h"

/* Whether the shared parser cuts its trees from slabs: not where a leak checker looks. */
#define HP_JSON_SLABS (!HP_LEAK_CHECKED)

/* Set once hp_json_init has pointed cJSON's free at json-share's arena first. */
extern int hp_json_hooks_in;

/* For tests: whether p lies in the arena, and how many slabs hold live allocations. */
int hp_json_slab_holds(const void *p);
size_t hp_json_slabs_in_use(void);

/* Give p back to the arena if the arena holds it (1); 0 when it is malloc's. */
int hp_json_slab_free(void *p);

#endif
