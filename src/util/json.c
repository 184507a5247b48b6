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

/*
 * The member of obj named by the n bytes at name (cJSON_GetObjectItemCaseSensitive's
 * match: the first of that name; a member without a name ends the search),
 * or NULL when obj is not an object. The checks look members up by name on
 * every node: the first byte is compared before the rest.
 */
static const cJSON *member(const cJSON *obj, const char *name, size_t n)
{
	const cJSON *c;

	if (!cJSON_IsObject(obj))
		return NULL;
	for (c = obj->child; c && c->string; c = c->next)
		if ((!n || c->string[0] == name[0]) && !strncmp(c->string, name, n) && !c->string[n])
			return c;
	return NULL;
}

const cJSON *hp_json_get(const cJSON *obj, const char *path)
{
	while (obj && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);

		if (n >= 128)   /* no member name hpnode asks for is that long */
			return NULL;
		obj = member(obj, path, n);
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
