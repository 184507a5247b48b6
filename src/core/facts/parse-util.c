/*
 * Text and facts helpers shared by the probe parsers: trimming and
 * splitting lines into bounded fields, strict number parsing, ISO-8601
 * times, and small cJSON setters. Nothing here knows any probe block.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hp/iso8601.h"
#include "hp/json.h"
#include "hp/util.h"
#include "probe-int.h"

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

void pb_copy_trim(const char *s, size_t n, char out[PB_FIELD])
{
	while (n && blank(*s)) {
		s++;
		n--;
	}
	while (n && blank(s[n - 1]))
		n--;
	if (n >= PB_FIELD)
		n = PB_FIELD - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

size_t pb_split(const char *s, char sep, char (*out)[PB_FIELD], size_t max)
{
	size_t k = 0;

	while (k < max) {
		const char *e = strchr(s, sep);
		size_t n = e ? (size_t)(e - s) : strlen(s);

		pb_copy_trim(s, n, out[k++]);
		if (!e)
			break;
		s = e + 1;
	}
	return k;
}

size_t pb_words(const char *s, char (*out)[PB_FIELD], size_t max)
{
	size_t k = 0;

	while (k < max) {
		size_t n;

		while (blank(*s))
			s++;
		if (!*s)
			break;
		n = 0;
		while (s[n] && !blank(s[n]))
			n++;
		pb_copy_trim(s, n, out[k++]);
		s += n;
	}
	return k;
}

int pb_num(const char *s, double *out)
{
	char *end;
	double v;

	while (blank(*s))
		s++;
	if (!*s || !(isdigit((unsigned char)*s) || *s == '-' || *s == '+' || *s == '.'))
		return 0;
	v = strtod(s, &end);
	if (end == s)
		return 0;
	while (blank(*end))
		end++;
	if (*end || !isfinite(v))
		return 0;
	*out = v;
	return 1;
}

int pb_count(const char *s, double *out)
{
	double v;
	const char *p = s;

	while (blank(*p))
		p++;
	if (!isdigit((unsigned char)*p))
		return 0;
	for (; *p && !blank(*p); p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	if (!pb_num(s, &v) || v > 9007199254740992.0)
		return 0;
	*out = v;
	return 1;
}

int pb_prefix_ci(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (tolower((unsigned char)*s) != tolower((unsigned char)*prefix))
			return 0;
	return 1;
}

int pb_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

const char *pb_skip(const char *s)
{
	while (blank(*s))
		s++;
	return s;
}

int pb_iso_time(const char *s, double *epoch, const char **end)
{
	struct hp_iso8601 t;

	/* The probe's journal and dmesg forms always carry a zone. */
	if (hp_iso8601_parse(s, end, &t) || !t.zoned || t.sec < 0)
		return 0;
	*epoch = (double)t.sec + (double)t.nsec / 1e9;
	return 1;
}

cJSON *pb_obj(cJSON *parent, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);

	if (cJSON_IsObject(o))
		return o;
	cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
	return cJSON_AddObjectToObject(parent, key);
}

cJSON *pb_arr(cJSON *parent, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);

	if (cJSON_IsArray(o))
		return o;
	cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
	return cJSON_AddArrayToObject(parent, key);
}

void pb_set_num(cJSON *obj, const char *key, double v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	/* Infinity or NaN is not a fact (and JSON has no spelling for it). */
	if (!isfinite(v))
		return;
	cJSON_AddNumberToObject(obj, key, v);
}

void pb_set_str(cJSON *obj, const char *key, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	cJSON_AddStringToObject(obj, key, v);
}

void pb_set_bool(cJSON *obj, const char *key, int v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	cJSON_AddBoolToObject(obj, key, v);
}

void pb_set_rc(cJSON *obj, const struct pb_block *b)
{
	if (b->ended)
		pb_set_num(obj, "rc", b->rc);
	pb_set_bool(obj, "present", !(b->ended && b->rc == 127));
	if (b->ended && b->rc == 124)
		pb_set_bool(obj, "timed_out", 1);
}

cJSON *pb_rc_obj(cJSON *parent, const char *key, const struct pb_block *b)
{
	cJSON *o = pb_obj(parent, key);

	pb_set_rc(o, b);
	return o;
}

const struct pb_block *pb_start(const struct pb_input *in, const char *name, cJSON *facts,
			       const char *key, cJSON **obj)
{
	const struct pb_block *b = pb_find(in, name);

	if (b)
		*obj = pb_rc_obj(facts, key, b);
	return b;
}

int pb_not_installed(const struct pb_block *b)
{
	return b->ended && b->rc == 127;
}

void pb_set_error(cJSON *obj, const char *key, const struct pb_block *b)
{
	const char *line = pb_first_line(b);
	char e[PB_FIELD];

	if (b->ended && b->rc == 124)
		hp_strlcpy(e, "timed out", sizeof(e));
	else if (line)
		pb_copy_trim(line, strlen(line), e);
	else
		hp_strlcpy(e, "no output", sizeof(e));
	pb_set_str(obj, key, e);
}

const char *pb_first_line(const struct pb_block *b)
{
	size_t i;

	for (i = 0; b && i < b->lines.n; i++) {
		const char *s = b->lines.v[i];

		while (blank(*s))
			s++;
		if (*s)
			return s;
	}
	return NULL;
}
