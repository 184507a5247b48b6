/*
 * The NCCL probe decoders (src/core/facts/nccl-*.c) and the NCCL log
 * pattern matcher (src/core/nccl-patterns.c). Input: probe stdout, NUL,
 * log text, NUL, source name. Oracles besides "no crash": the facts are
 * an object that prints as JSON and every key and string in them is clean
 * (UTF-8, no control character); each decoder alone on the same frame
 * adds at most its own keys; the matcher returns indices inside the table
 * and counts every match; the scan result is clean, its evidence lines
 * are within the clip, and no more evidence lines are kept than asked.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hp/nccl-facts.h"
#include "hp/text.h"
#include "hp/util.h"
/* The decoders one by one: private to the core, read here to fuzz each alone. */
#include "../../src/core/facts/nccl-int.h"

#define CLIP 64
#define EVIDENCE 2

static void assert_clean_tree(const cJSON *j)
{
	const cJSON *c;

	if (j->string)
		fz_assert_clean("facts key", j->string, strlen(j->string), 0);
	if (cJSON_IsString(j) && j->valuestring)
		fz_assert_clean("facts string", j->valuestring, strlen(j->valuestring), 0);
	for (c = j->child; c; c = c->next)
		assert_clean_tree(c);
}

static void print_ok(const cJSON *j, const char *what)
{
	char *text = cJSON_PrintUnformatted(j);

	if (!text)
		fz_fail(what, "does not print", 13);
	free(text);
}

typedef void (*decoder)(const struct pb_input *, cJSON *);

static const decoder decoders[] = {
	hp_nccl_decode_probe,     hp_nccl_decode_topo,          hp_nccl_decode_pci_numa,
	hp_nccl_decode_acs,       hp_nccl_decode_iommu,         hp_nccl_decode_peermem,
	hp_nccl_decode_efa_installer, hp_nccl_decode_ofi_plugin, hp_nccl_decode_libfabric,
	hp_nccl_decode_nccl_lib,  hp_nccl_decode_netif,         hp_nccl_decode_limits,
	hp_nccl_decode_procs,     hp_nccl_decode_hugepages,     hp_nccl_decode_logind,
	hp_nccl_decode_shm,       hp_nccl_decode_numa,          hp_nccl_decode_firewall,
	hp_nccl_decode_environment,
};

static void fuzz_probe(const char *text, size_t len)
{
	struct pb_input f;
	cJSON *all = hp_nccl_probe_parse(text, len);
	size_t i;

	if (!all || !cJSON_IsObject(all))
		fz_fail("hp_nccl_probe_parse: not an object", NULL, 0);
	print_ok(all, "facts");
	assert_clean_tree(all);

	pb_frame(&f, text, len, &pb_nccl_frame);
	for (i = 0; i < f.blocks.n; i++) {
		const struct pb_block *b = &f.blocks.v[i];

		if (b->lines.n > b->nlines || b->lines.n > pb_nccl_frame.max_lines)
			fz_fail("block keeps more lines than it saw", b->name, strlen(b->name));
		fz_assert_clean("block name", b->name, strnlen(b->name, sizeof b->name), 0);
	}
	for (i = 0; i < sizeof decoders / sizeof decoders[0]; i++) {
		cJSON *one = cJSON_CreateObject(), *k;

		decoders[i](&f, one);
		/* What one decoder adds, the full parse holds under the same keys. */
		for (k = one->child; k; k = k->next)
			if (!cJSON_GetObjectItemCaseSensitive(all, k->string))
				fz_fail("decoder key missing from the full parse", k->string,
					strlen(k->string));
		assert_clean_tree(one);
		cJSON_Delete(one);
	}
	pb_release(&f);
	cJSON_Delete(all);

	/* The same text as the --exec script's output: clean facts, never a secret-looking name. */
	all = hp_nccl_exec_parse(text, len);
	if (!all || !cJSON_IsObject(all))
		fz_fail("hp_nccl_exec_parse: not an object", NULL, 0);
	assert_clean_tree(all);
	{
		const cJSON *k;

		cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(all, "env"))
			if (!k->string || strstr(k->string, "SECRET") || strstr(k->string, "TOKEN") ||
			    strstr(k->string, "KEY") || strstr(k->string, "PASSWORD"))
				fz_fail("exec env keeps a secret-looking name", k->string,
					k->string ? strlen(k->string) : 0);
	}
	cJSON_Delete(all);
}

static void fuzz_lines(const char *text, size_t len, const char *source)
{
	struct hp_nccl_scan_opts o = {.evidence = EVIDENCE, .clip = CLIP, .max_sources = 2};
	struct hp_nccl_scan *s = hp_nccl_scan_new(&o);
	const char *p = text, *end = text + len;
	const cJSON *hit, *ev, *line;
	cJSON *res;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p), idx[4], got, i;
		int m;

		got = hp_nccl_match(p, n, idx, 4);
		for (i = 0; i < got && i < 4; i++) {
			if (idx[i] >= hp_nccl_npatterns || (i && idx[i] <= idx[i - 1]))
				fz_fail("match index out of table order", p, n);
		}
		m = hp_nccl_marker(p, n);
		if (m < -1 || m >= (int)hp_nccl_nmarkers)
			fz_fail("marker index out of range", p, n);

		{
			struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

			hp_text_addn(HP_TEXT_LOG, p, n, CLIP, &b);
			if (b.len > CLIP)
				fz_fail("clean past its clip", b.buf, b.len);
			fz_assert_clean("cleaned line", b.buf, b.len, 0);
			hp_buf_release(&b);
		}

		/* Three sources: the third is over max_sources and only counted. */
		hp_nccl_scan_line(s, (n & 3) == 3 ? "third" : (n & 1) ? source : "other", p, n);
		p += n + (nl ? 1 : 0);
	}
	hp_nccl_scan_text(s, source, text, len);

	res = hp_nccl_scan_json(s);
	if (!res)
		fz_fail("hp_nccl_scan_json returned NULL", NULL, 0);
	print_ok(res, "scan");
	assert_clean_tree(res);
	cJSON_ArrayForEach(hit, cJSON_GetObjectItemCaseSensitive(res, "hits"))
	{
		ev = cJSON_GetObjectItemCaseSensitive(hit, "evidence");
		if (cJSON_GetArraySize(ev) > EVIDENCE)
			fz_fail("more evidence lines than asked", NULL, 0);
		cJSON_ArrayForEach(line, ev)
		{
			if (!cJSON_IsString(line) || strlen(line->valuestring) > CLIP)
				fz_fail("evidence line past the clip", NULL, 0);
		}
	}
	cJSON_Delete(res);
	hp_nccl_scan_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_parts ps;

	if (size > 1 << 20)
		return 0;
	fz_split(data, size, 3, &ps);
	fuzz_probe(ps.p[0], ps.len[0]);
	if (ps.n > 1)
		fuzz_lines(ps.p[1], ps.len[1], ps.n > 2 && ps.len[2] ? ps.p[2] : "ns/pod/c");
	else
		fuzz_lines(ps.p[0], ps.len[0], "ns/pod/c");
	fz_parts_release(&ps);
	return 0;
}
