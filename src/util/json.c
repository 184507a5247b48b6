/*
 * Dotted-path getters over cJSON, its out-of-memory policy and the one
 * serialised parse (include/hp/json.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "hp/pool.h"
#include "hp/util.h"

static atomic_size_t allocations;

/* cJSON's allocator: xmalloc, which never returns NULL (it exits instead). */
static void *json_alloc(size_t n)
{
	atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
	return xmalloc(n);
}

void hp_json_init(void)
{
	cJSON_Hooks hooks = { json_alloc, free };

	cJSON_InitHooks(&hooks);
}

size_t hp_json_allocations(void)
{
	return atomic_load_explicit(&allocations, memory_order_relaxed);
}

static pthread_mutex_t parse_lock = PTHREAD_MUTEX_INITIALIZER;

cJSON *hp_json_parse(const char *text, size_t len, const char **end)
{
	const char *stop = NULL;
	cJSON *j;

	pthread_mutex_lock(&parse_lock);
	j = cJSON_ParseWithLengthOpts(text, len, &stop, 0);
	pthread_mutex_unlock(&parse_lock);
	if (end)
		*end = stop;
	return j;
}

const cJSON *hp_json_get(const cJSON *obj, const char *path)
{
	char key[128];

	while (obj && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		if (!cJSON_IsObject(obj))
			return NULL;
		obj = cJSON_GetObjectItemCaseSensitive(obj, key);
		path += n + (dot ? 1 : 0);
	}
	return obj;
}

const char *hp_json_str(const cJSON *obj, const char *path)
{
	const cJSON *v = hp_json_get(obj, path);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

double hp_json_num(const cJSON *obj, const char *path, double def)
{
	const cJSON *v = hp_json_get(obj, path);

	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (cJSON_IsString(v) && v->valuestring[0]) {
		char *end;
		double d = strtod(v->valuestring, &end);
		if (*end == '\0')
			return d;
	}
	return def;
}

int hp_json_bool(const cJSON *obj, const char *path, int def)
{
	const cJSON *v = hp_json_get(obj, path);

	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	if (cJSON_IsString(v)) {
		if (!strcmp(v->valuestring, "true"))
			return 1;
		if (!strcmp(v->valuestring, "false"))
			return 0;
	}
	return def;
}

const cJSON *hp_json_arr(const cJSON *obj, const char *path)
{
	const cJSON *v = hp_json_get(obj, path);

	return cJSON_IsArray(v) ? v : NULL;
}

int hp_json_len(const cJSON *obj, const char *path)
{
	const cJSON *v = hp_json_arr(obj, path);

	return v ? cJSON_GetArraySize(v) : 0;
}

int hp_json_has_str(const cJSON *arr, const char *s)
{
	const cJSON *v;

	if (!cJSON_IsArray(arr) || !s)
		return 0;
	cJSON_ArrayForEach(v, arr)
		if (cJSON_IsString(v) && !strcmp(v->valuestring, s))
			return 1;
	return 0;
}

/* The strings hp_json_share hands out, for the life of the process. */
static struct hp_strtab shared = HP_STRTAB_INIT;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

/* The table's copy of s, or NULL when s is long or the table is full (the lock held). */
static const char *share_one(const char *s)
{
	size_t n = strlen(s);

	if (n > HP_JSON_SHARE_LEN || hp_strtab_bytes(&shared) >= HP_JSON_SHARE_MAX)
		return NULL;
	return hp_strtab_get(&shared, hp_strtab_add(&shared, s, n));
}

static void share_tree(cJSON *t)
{
	cJSON *c;

	for (c = t->child; c; c = c->next) {
		const char *copy;

		if (c->string && !(c->type & cJSON_StringIsConst) && (copy = share_one(c->string))) {
			free(c->string);
			c->string = (char *)copy;
			c->type |= cJSON_StringIsConst;
		}
		if (c->type & cJSON_IsReference)
			continue;
		if (cJSON_IsString(c) && c->valuestring && (copy = share_one(c->valuestring))) {
			free(c->valuestring);
			c->valuestring = (char *)copy;
			c->type |= cJSON_IsReference;
		} else if (c->child) {
			share_tree(c);
		}
	}
}

void hp_json_share(cJSON *tree)
{
	if (!tree || (tree->type & cJSON_IsReference))
		return;
	pthread_mutex_lock(&shared_lock);
	share_tree(tree);
	pthread_mutex_unlock(&shared_lock);
}
