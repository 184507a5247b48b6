/*
 * The process-wide table of shared JSON strings and the parser that builds
 * trees whose strings point into it (include/hp/json.h).
 *
 * hp_json_parse_shared reads RFC 8259 JSON into the same cJSON trees
 * cJSON_ParseWithLengthOpts makes (one item per value, members in order,
 * duplicates kept, child->prev the last child, valueint clamped as cJSON
 * clamps it), but a member name or string value of at most
 * HP_JSON_SHARE_LEN bytes is looked up in the table instead of copied:
 * a page of 100 node summaries costs one allocation per value, where
 * libcjson's tree and sharing it afterwards cost three allocations, two
 * frees and two look-ups per string. It is stricter
 * than libcjson where libcjson is lenient (no BOM, whitespace is only
 * space, TAB, LF and CR, numbers follow the RFC's grammar), so what it
 * accepts libcjson reads the same (fuzz-json checks that on every input).
 */
#include <float.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hp/buf.h"
#include "hp/json.h"
#include "hp/pool.h"
#include "hp/util.h"

/* The shared strings, for the life of the process. */
static struct hp_strtab shared = HP_STRTAB_INIT;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

/* A cJSON item of the given type, all else zero. */
static cJSON *new_item(int type)
{
	cJSON *it = cJSON_CreateNull();

	if (!it)
		hp_die("out of memory");
	memset(it, 0, sizeof(*it));
	it->type = type;
	return it;
}

/* ------------------------------------------------------------------ the parser */

/*
 * Two small tables per parse keep the shared table's work for what it is
 * good at. memo: the strings this parse took from the table, so a name or
 * state seen on the last node is found in a line already in cache. fresh:
 * per member name, how many of its values in a row were new to the table;
 * from FRESH_RUN on (instance ids, host names: one per node) its values are
 * the tree's own, so they neither grow the table for good nor cost a look-up.
 */
#define MEMO_SLOTS 256
#define FRESH_SLOTS 64
#define FRESH_RUN 8

struct memo {
	const char *s;          /* the shared copy, or NULL */
	size_t len;
};

struct fresh {
	const char *name;       /* a shared member name, or NULL */
	unsigned run;           /* its values new to the table, in a row */
};

struct jp {
	const char *p, *end;
	const char *err;        /* where it failed, or NULL */
	unsigned depth;
	struct hp_buf tmp;      /* a string with escapes, decoded */
	struct memo memo[MEMO_SLOTS];
	struct fresh fresh[FRESH_SLOTS];
};

static cJSON *fail(struct jp *j, const char *at)
{
	if (!j->err)
		j->err = at;
	return NULL;
}

static void skip_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		int c = (unsigned char)s[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v << 4 | (unsigned)d;
	}
	*out = v;
	return 0;
}

/* UTF-8 of code point cp (at most 0x10FFFF) into out; its length. */
static size_t utf8(unsigned cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/*
 * Decode the string whose opening quote is at j->p (escapes, \u with
 * surrogate pairs) and point *s and *n at its bytes: the text itself when
 * it has no escape, else j->tmp. A decoded \u0000 ends the string there, as
 * it ends libcjson's; a raw NUL byte is refused. -1 on a malformed string.
 */
static int string_at(struct jp *j, const char **s, size_t *n)
{
	const char *start = j->p + 1, *q, *bs, *nul;

	/* The closing quote, a backslash before it, a NUL before either (memchr: whole words). */
	q = memchr(start, '"', (size_t)(j->end - start));
	if (!q)
		return fail(j, j->end), -1;
	bs = memchr(start, '\\', (size_t)(q - start));
	if (bs)
		q = bs;
	if ((nul = memchr(start, '\0', (size_t)(q - start))) != NULL)
		return fail(j, nul), -1;
	if (!bs) {
		*s = start;
		*n = (size_t)(q - start);
		j->p = q + 1;
		return 0;
	}
	hp_buf_reset(&j->tmp);
	hp_buf_putn(&j->tmp, start, (size_t)(q - start));
	while (q < j->end && *q != '"') {
		const char *run = q;
		char u[4];
		unsigned cp, lo;

		while (q < j->end && *q != '"' && *q != '\\' && *q)
			q++;
		hp_buf_putn(&j->tmp, run, (size_t)(q - run));
		if (q >= j->end || *q == '"' || !*q)
			break;
		if (q + 1 >= j->end)
			return fail(j, q), -1;
		switch (q[1]) {
		case '"': case '\\': case '/':
			hp_buf_putc(&j->tmp, q[1]);
			break;
		case 'b': hp_buf_putc(&j->tmp, '\b'); break;
		case 'f': hp_buf_putc(&j->tmp, '\f'); break;
		case 'n': hp_buf_putc(&j->tmp, '\n'); break;
		case 'r': hp_buf_putc(&j->tmp, '\r'); break;
		case 't': hp_buf_putc(&j->tmp, '\t'); break;
		case 'u':
			if (j->end - q < 6 || hex4(q + 2, &cp))
				return fail(j, q), -1;
			if (cp >= 0xDC00 && cp <= 0xDFFF)
				return fail(j, q), -1;
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (j->end - q < 12 || q[6] != '\\' || q[7] != 'u' || hex4(q + 8, &lo) ||
				    lo < 0xDC00 || lo > 0xDFFF)
					return fail(j, q), -1;
				cp = 0x10000 + ((cp & 0x3FF) << 10 | (lo & 0x3FF));
				q += 6;
			}
			hp_buf_putn(&j->tmp, u, utf8(cp, u));
			q += 4;
			break;
		default:
			return fail(j, q), -1;
		}
		q += 2;
	}
	if (q >= j->end || *q != '"')
		return fail(j, q), -1;
	*s = j->tmp.buf;
	*n = strnlen(j->tmp.buf, j->tmp.len);
	j->p = q + 1;
	return 0;
}

static char *own_copy(const char *s, size_t n)
{
	char *own = cJSON_malloc(n + 1);

	if (!own)
		hp_die("out of memory");
	memcpy(own, s, n);
	own[n] = '\0';
	return own;
}

/* The fresh-run entry of a shared member name. */
static struct fresh *fresh_of(struct jp *j, const char *name)
{
	struct fresh *f = &j->fresh[((uintptr_t)name >> 4) % FRESH_SLOTS];

	if (f->name != name) {
		f->name = name;
		f->run = 0;
	}
	return f;
}

/*
 * A shared or heap copy of the n bytes at s (*is_shared says which), the
 * value of member name (shared, or NULL for a name or an array element).
 */
static char *keep(struct jp *j, const char *s, size_t n, const char *name, int *is_shared)
{
	struct fresh *f = NULL;
	struct memo *m;
	size_t before;
	const char *c;

	*is_shared = 0;
	if (n > HP_JSON_SHARE_LEN)
		return own_copy(s, n);
	if (name && (f = fresh_of(j, name))->run >= FRESH_RUN)
		return own_copy(s, n);
	/* The memo's slot from the length and the end bytes: a hit costs no hash. */
	m = &j->memo[n ? (n * 131 + (unsigned char)s[0] * 31 + (unsigned char)s[n - 1]) % MEMO_SLOTS
		       : 0];
	if (m->s && m->len == n && !memcmp(m->s, s, n)) {
		if (f)
			f->run = 0;
		*is_shared = 1;
		return (char *)m->s;
	}
	if (hp_strtab_bytes(&shared) >= HP_JSON_SHARE_MAX)
		return own_copy(s, n);
	before = shared.n;
	c = hp_strtab_get(&shared, hp_strtab_add(&shared, s, n));
	if (f)
		f->run = shared.n > before ? f->run + 1 : 0;
	m->s = c;
	m->len = n;
	*is_shared = 1;
	return (char *)c;
}

static int digits(struct jp *j)
{
	const char *p = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > p;
}

/*
 * The number token at s (n bytes, the RFC's grammar) as a double without
 * strtod when that is exact: its digits make an integer m below 2^53 and
 * its power of ten p is within 10^22 either way, so m and 10^|p| are both
 * doubles and one IEEE multiplication or division rounds m * 10^p
 * correctly (Clinger's fast path), the value strtod returns. 0 when the
 * token is not of that kind (the caller then calls strtod).
 */
static int exact_number(const char *s, size_t n, double *out)
{
	static const double pow10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
		1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	const char *end = s + n;
	uint64_t m = 0;
	int neg = 0, digits_seen = 0, frac = 0, exp = 0, eneg = 0, p;
	double d;

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
	return 0;   /* wider intermediates could round twice */
#endif
	if (s < end && *s == '-') {
		neg = 1;
		s++;
	}
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (++digits_seen > 15)
			return 0;
		m = m * 10 + (uint64_t)(*s - '0');
	}
	if (s < end && *s == '.')
		for (s++; s < end && *s >= '0' && *s <= '9'; s++, frac++) {
			if (++digits_seen > 15)
				return 0;
			m = m * 10 + (uint64_t)(*s - '0');
		}
	if (s < end && (*s == 'e' || *s == 'E')) {
		s++;
		if (s < end && (*s == '+' || *s == '-'))
			eneg = *s++ == '-';
		for (; s < end && *s >= '0' && *s <= '9'; s++) {
			exp = exp * 10 + (*s - '0');
			if (exp > 1000)
				return 0;
		}
	}
	if (s != end)
		return 0;
	p = (eneg ? -exp : exp) - frac;
	if (p < -22 || p > 22)
		return 0;
	d = (double)m;
	d = p >= 0 ? d * pow10[p] : d / pow10[-p];
	*out = neg ? -d : d;
	return 1;
}

/* A number by the RFC's grammar, read as libcjson reads one (strtod, valueint clamped). */
static cJSON *number(struct jp *j)
{
	const char *start = j->p;
	char text[64];
	double d;
	size_t n;
	cJSON *it;

	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!digits(j))
		return fail(j, start);
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!digits(j))
			return fail(j, start);
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!digits(j))
			return fail(j, start);
	}
	n = (size_t)(j->p - start);
	if (n >= sizeof(text))   /* libcjson reads no more than 63 characters of a number */
		return fail(j, start);
	if (!exact_number(start, n, &d)) {
		memcpy(text, start, n);
		text[n] = '\0';
		d = strtod(text, NULL);
	}
	it = new_item(cJSON_Number);
	it->valuedouble = d;
	it->valueint = d >= INT_MAX ? INT_MAX : d <= (double)INT_MIN ? INT_MIN : (int)d;
	return it;
}

/* A value; name: its member name when shared, else NULL. */
static cJSON *value(struct jp *j, const char *name);

/* Append it to the list whose first item is *head and last *tail (cJSON's links). */
static void link_item(cJSON **head, cJSON **tail, cJSON *it)
{
	if (!*head) {
		*head = it;
	} else {
		(*tail)->next = it;
		it->prev = *tail;
	}
	*tail = it;
	(*head)->prev = it;
}

/* An array or object whose opening bracket is at j->p. */
static cJSON *container(struct jp *j, int object)
{
	const char close = object ? '}' : ']';
	cJSON *c = new_item(object ? cJSON_Object : cJSON_Array), *tail = NULL;

	if (++j->depth > HP_JSON_DEPTH) {
		cJSON_Delete(c);
		return fail(j, j->p);
	}
	j->p++;
	skip_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return c;
	}
	for (;;) {
		const char *name = NULL;
		size_t name_n = 0;
		cJSON *it;

		if (object) {
			int sh;
			char *k;

			skip_ws(j);
			if (j->p >= j->end || *j->p != '"' || string_at(j, &name, &name_n))
				break;
			k = keep(j, name, name_n, NULL, &sh);
			skip_ws(j);
			if (j->p >= j->end || *j->p != ':' || (j->p++, !(it = value(j, sh ? k : NULL)))) {
				if (!sh)
					cJSON_free(k);
				break;
			}
			it->string = k;
			if (sh)
				it->type |= cJSON_StringIsConst;
		} else if (!(it = value(j, NULL))) {
			break;
		}
		link_item(&c->child, &tail, it);
		skip_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			j->depth--;
			return c;
		}
		break;
	}
	cJSON_Delete(c);
	return fail(j, j->p);
}

static cJSON *literal(struct jp *j, const char *word, int type)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n))
		return fail(j, j->p);
	j->p += n;
	return new_item(type);
}

static cJSON *value(struct jp *j, const char *name)
{
	skip_ws(j);
	if (j->p >= j->end)
		return fail(j, j->p);
	switch (*j->p) {
	case '{':
		return container(j, 1);
	case '[':
		return container(j, 0);
	case '"': {
		const char *s;
		size_t n;
		int sh;
		cJSON *it;

		if (string_at(j, &s, &n))
			return NULL;
		it = new_item(cJSON_String);
		it->valuestring = keep(j, s, n, name, &sh);
		if (sh)
			it->type |= cJSON_IsReference;
		return it;
	}
	case 't':
		return literal(j, "true", cJSON_True);
	case 'f':
		return literal(j, "false", cJSON_False);
	case 'n':
		return literal(j, "null", cJSON_NULL);
	default:
		return number(j);
	}
}

cJSON *hp_json_parse_shared(const char *text, size_t len, const char **end)
{
	struct jp j;
	cJSON *v;

	/* The memo only holds copies that live as long as the process. */
	memset(&j, 0, sizeof(j));
	j.p = text;
	j.end = text + len;
	hp_buf_init(&j.tmp, len + 1);
	pthread_mutex_lock(&shared_lock);
	v = value(&j, NULL);
	pthread_mutex_unlock(&shared_lock);
	hp_buf_release(&j.tmp);
	if (end)
		*end = v ? j.p : j.err ? j.err : j.p;
	return v;
}
