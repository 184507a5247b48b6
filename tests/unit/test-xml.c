/*
 * src/collect/aws/xml.c at scale: an element with very many children converts in
 * time linear in their number, and keeps document order and grouping.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hp/aws.h"
#include "hp/buf.h"
#include "hp/json.h"
#include "t.h"

/* <r> with n distinct children <eI>I</eI>, each name once. */
static char *wide_doc(size_t n, size_t *len)
{
	struct hp_buf b = HP_BUF_INIT((size_t)64 << 20);
	size_t i;

	hp_buf_puts(&b, "<r>");
	for (i = 0; i < n; i++)
		hp_buf_printf(&b, "<e%zu>%zu</e%zu>", i, i, i);
	hp_buf_puts(&b, "</r>");
	*len = b.len;
	return hp_buf_detach(&b, NULL);
}

static void t_distinct_siblings_scale(void)
{
	size_t len;
	char *doc = wide_doc(100000, &len);
	clock_t t0 = clock();
	cJSON *j = hp_xml_to_json(doc, len, NULL, 0);
	double cpu_s = (double)(clock() - t0) / CLOCKS_PER_SEC;

	T_ASSERT(j != NULL);
	T_EQ(cJSON_GetArraySize(j), 100000);
	T_STREQ(cJSON_GetArrayItem(j, 0)->string, "e0");
	T_STREQ(hp_json_str(j, "e0"), "0");
	T_STREQ(hp_json_str(j, "e99999"), "99999");
	/* Quadratic work took minutes here; linear work takes well under one second. */
	if (cpu_s > 10.0)
		T_FAILF("100,000 sibling elements took %.1f s of CPU", cpu_s);
	cJSON_Delete(j);
	free(doc);
}

static void t_repeated_names_group_in_order(void)
{
	const char *doc = "<r><a>1</a><b>x</b><a>2</a><c/><a>3</a><d><e>y</e></d></r>";
	const cJSON *a;
	cJSON *j = hp_xml_to_json(doc, strlen(doc), NULL, 0);

	T_ASSERT(j != NULL);
	T_EQ(cJSON_GetArraySize(j), 4);
	T_STREQ(cJSON_GetArrayItem(j, 0)->string, "a");
	T_STREQ(cJSON_GetArrayItem(j, 1)->string, "b");
	T_STREQ(cJSON_GetArrayItem(j, 2)->string, "c");
	T_STREQ(cJSON_GetArrayItem(j, 3)->string, "d");
	a = cJSON_GetObjectItemCaseSensitive(j, "a");
	T_ASSERT(cJSON_IsArray(a));
	T_EQ(cJSON_GetArraySize(a), 3);
	T_STREQ(cJSON_GetArrayItem(a, 0)->valuestring, "1");
	T_STREQ(cJSON_GetArrayItem(a, 2)->valuestring, "3");
	T_STREQ(hp_json_str(j, "b"), "x");
	T_STREQ(hp_json_str(j, "d.e"), "y");
	cJSON_Delete(j);
}

static void t_many_repeats_of_many_names(void)
{
	/* 20,000 names, each three times, interleaved: 60,000 children. */
	struct hp_buf b = HP_BUF_INIT((size_t)64 << 20);
	const cJSON *arr;
	size_t i, k;
	cJSON *j;

	hp_buf_puts(&b, "<r>");
	for (k = 0; k < 3; k++)
		for (i = 0; i < 20000; i++)
			hp_buf_printf(&b, "<n%zu>%zu</n%zu>", i, k, i);
	hp_buf_puts(&b, "</r>");
	j = hp_xml_to_json(b.buf, b.len, NULL, 0);
	T_ASSERT(j != NULL);
	T_EQ(cJSON_GetArraySize(j), 20000);
	arr = cJSON_GetObjectItemCaseSensitive(j, "n19999");
	T_ASSERT(cJSON_IsArray(arr));
	T_EQ(cJSON_GetArraySize(arr), 3);
	T_STREQ(cJSON_GetArrayItem(arr, 2)->valuestring, "2");
	cJSON_Delete(j);
	hp_buf_release(&b);
}

T_MAIN(T(t_distinct_siblings_scale), T(t_repeated_names_group_in_order),
       T(t_many_repeats_of_many_names))
