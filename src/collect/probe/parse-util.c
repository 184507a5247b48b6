/*
 * Text and facts helpers shared by the probe parsers: trimming and
 * splitting lines into bounded fields, strict number parsing, ISO-8601
 * times, and small cJSON setters. Nothing here knows any probe block.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* n digits at s as a number; -1 when they are not all digits. */
static int digits(const char *s, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int pb_iso_time(const char *s, double *epoch, const char **end)
{
	struct tm tm;
	int y = digits(s, 4), mo, d, h, mi, se, sign, oh, om;
	double frac = 0, t;
	const char *p;

	if (strnlen(s, 19) < 19)
		return 0;
	if (y < 1970 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
	    s[13] != ':' || s[16] != ':')
		return 0;
	mo = digits(s + 5, 2);
	d = digits(s + 8, 2);
	h = digits(s + 11, 2);
	mi = digits(s + 14, 2);
	se = digits(s + 17, 2);
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
	    se < 0 || se > 60)
		return 0;
	p = s + 19;
	if (*p == ',' || *p == '.') {
		double scale = 0.1;

		for (p++; isdigit((unsigned char)*p); p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	t = (double)timegm(&tm) + frac;
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		oh = digits(p + 1, 2);
		if (oh < 0)
			return 0;
		p += 3;
		if (*p == ':')
			p++;
		om = digits(p, 2);
		if (om < 0)
			om = 0;
		else
			p += 2;
		t -= sign * (oh * 3600.0 + om * 60.0);
	} else {
		/* No zone: the probe's journal and dmesg forms always carry one. */
		return 0;
	}
	*epoch = t;
	if (end)
		*end = p;
	return 1;
}

static cJSON *need(cJSON *x)
{
	if (!x)
		hp_die("out of memory");
	return x;
}

cJSON *pb_obj(cJSON *parent, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, key);

	if (cJSON_IsObject(o))
		return o;
	cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
	return need(cJSON_AddObjectToObject(parent, key));
}

void pb_set_num(cJSON *obj, const char *key, double v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	need(cJSON_AddNumberToObject(obj, key, v));
}

void pb_set_str(cJSON *obj, const char *key, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	need(cJSON_AddStringToObject(obj, key, v));
}

void pb_set_bool(cJSON *obj, const char *key, int v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	need(cJSON_AddBoolToObject(obj, key, v));
}

void pb_set_rc(cJSON *obj, const struct pb_block *b)
{
	if (b->ended)
		pb_set_num(obj, "rc", b->rc);
	pb_set_bool(obj, "present", !(b->ended && b->rc == 127));
	if (b->ended && b->rc == 124)
		pb_set_bool(obj, "timed_out", 1);
}

const char *pb_first_line(const struct pb_block *b)
{
	size_t i;

	for (i = 0; b && i < b->nkept; i++) {
		const char *s = b->lines[i];

		while (blank(*s))
			s++;
		if (*s)
			return s;
	}
	return NULL;
}
