/*
 * hp_json_parse_shared (src/util/json-share.c) against libcjson on the same
 * bytes. Oracles: a document (one value, then only whitespace) that
 * hp_json_parse_shared accepts, libcjson accepts as the same document; the
 * two trees print the same and are the same (types, names, strings,
 * numbers to the bit); each child list is linked as libcjson links it
 * (prev of the first is the last); a duplicate owns its strings and
 * deleting everything frees what the trees own, a refused document's
 * pieces too (ASan's leak check). Inputs are cut at 256 KiB.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hp/json.h"

#define MAX_JSON (256u << 10)

static void links(const cJSON *t)
{
	const cJSON *c, *last = NULL;

	for (c = t->child; c; c = c->next) {
		if (c != t->child && c->prev != last)
			fz_fail("a child's prev is not the one before it", NULL, 0);
		if ((c->type & cJSON_IsReference) && !cJSON_IsString(c))
			fz_fail("a shared value that is not a string", NULL, 0);
		last = c;
		links(c);
	}
	if (t->child && t->child->prev != last)
		fz_fail("the first child's prev is not the last", NULL, 0);
}

/*
 * The same tree: types, names, strings, numbers to the bit and valueint
 * (cJSON_Compare looks at valuedouble within an epsilon, and an infinity
 * compares unequal to itself there).
 */
static void same(const cJSON *x, const cJSON *y)
{
	if ((x->type & 0xFF) != (y->type & 0xFF))
		fz_fail("a value of another type than libcjson's", NULL, 0);
	if ((x->string == NULL) != (y->string == NULL) || (x->string && strcmp(x->string, y->string)))
		fz_fail("a member name differs from libcjson's", NULL, 0);
	if (cJSON_IsString(x) && strcmp(x->valuestring, y->valuestring))
		fz_fail("a string differs from libcjson's", NULL, 0);
	if (cJSON_IsNumber(x) && (memcmp(&x->valuedouble, &y->valuedouble, sizeof(double)) ||
				  x->valueint != y->valueint))
		fz_fail("a number differs from libcjson's", NULL, 0);
	for (x = x->child, y = y->child; x && y; x = x->next, y = y->next)
		same(x, y);
	if (x || y)
		fz_fail("child lists of different lengths", NULL, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *end = NULL, *cend = NULL;
	cJSON *mine, *theirs, *dup;
	char *a, *b;

	if (size > MAX_JSON)
		size = MAX_JSON;
	mine = hp_json_parse_shared(text, size, &end);
	if (!end || end < text || end > text + size)
		fz_fail("end outside the input", text, size);
	if (!mine)
		return 0;
	links(mine);
	/*
	 * Judged as a document, as the callers take one: a value and then only
	 * whitespace. ("01" is the value 0 and a stray 1 here, the number 1 to
	 * libcjson.)
	 */
	while (end < text + size && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
		end++;
	if (end != text + size) {
		cJSON_Delete(mine);
		return 0;
	}
	theirs = hp_json_parse(text, size, &cend);
	if (!theirs)
		fz_fail("accepted what libcjson refuses", text, size);
	while (cend && cend < text + size &&
	       (*cend == ' ' || *cend == '\t' || *cend == '\n' || *cend == '\r'))
		cend++;
	if (cend != end)
		fz_fail("libcjson reads another document", text, size);
	same(mine, theirs);
	a = cJSON_PrintUnformatted(mine);
	b = cJSON_PrintUnformatted(theirs);
	if (!a || !b || strcmp(a, b))
		fz_fail("prints otherwise than libcjson's tree", text, size);
	dup = cJSON_Duplicate(mine, 1);
	same(dup, theirs);
	free(a);
	free(b);
	cJSON_Delete(dup);
	cJSON_Delete(mine);
	cJSON_Delete(theirs);
	return 0;
}
