/*
 * The NCCL probe's output as facts: framed by the node probe's framer
 * (markers found anywhere in a line, a block without END keeps rc -1,
 * output without DONE is cut short; pb_nccl_frame keeps every line as
 * clean UTF-8 text), then every decoder run over the blocks.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/util.h"
#include "facts-int.h"
#include "nccl-int.h"

void nf_rc(cJSON *obj, const struct pb_block *b)
{
	if (b->rc < 0) {
		cJSON_DeleteItemFromObjectCaseSensitive(obj, "rc");
		cJSON_AddNullToObject(obj, "rc");
	} else {
		pb_set_num(obj, "rc", b->rc);
	}
	pb_set_bool(obj, "present", b->rc != 127);
}

int nf_limit(cJSON *obj, const char *key, const char *word, double scale)
{
	double v;

	if (!strcmp(word, "unlimited") || !strcmp(word, "infinity")) {
		pb_set_str(obj, key, "unlimited");
		return 1;
	}
	if (!pb_count(word, &v))
		return 0;
	pb_set_num(obj, key, v * scale);
	return 1;
}

void nf_paths(const struct pb_block *b, cJSON *o)
{
	cJSON *libs = pb_arr(o, "libs"), *links = pb_arr(o, "links");
	size_t i;

	for (i = 0; b && i < b->lines.n; i++) {
		const char *l = b->lines.v[i], *arrow;

		if (pb_prefix(l, "lib ") && cJSON_GetArraySize(libs) < NF_LIST) {
			cJSON_AddItemToArray(libs, cJSON_CreateString(l + 4));
		} else if (pb_prefix(l, "link ") && (arrow = strstr(l, " -> ")) &&
			   cJSON_GetArraySize(links) < NF_LIST) {
			cJSON *x = cJSON_CreateObject();
			char *p = xstrndup(l + 5, (size_t)(arrow - (l + 5)));

			pb_set_str(x, "path", p);
			pb_set_str(x, "target", arrow + 4);
			free(p);
			cJSON_AddItemToArray(links, x);
		}
	}
}

void hp_nccl_decode_probe(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "nccl");
	cJSON *o = pb_obj(facts, "probe"), *blocks = pb_obj(o, "blocks");
	size_t i;

	pb_set_bool(o, "truncated", !f->done);
	for (i = 0; i < f->blocks.n; i++) {
		const struct pb_block *x = &f->blocks.v[i];
		cJSON *o2;

		if (cJSON_GetObjectItemCaseSensitive(blocks, x->name))
			continue;
		o2 = pb_obj(blocks, x->name);
		if (x->rc < 0)
			cJSON_AddNullToObject(o2, "rc");
		else
			pb_set_num(o2, "rc", x->rc);
		pb_set_num(o2, "lines", (double)x->nlines);
	}
	for (i = 0; b && i < b->lines.n; i++) {
		const char *l = b->lines.v[i];
		double v;

		if (pb_prefix(l, "epoch=") && pb_count(l + 6, &v))
			pb_set_num(o, "epoch", v);
		else if (pb_prefix(l, "uid=") && pb_count(l + 4, &v)) {
			pb_set_num(o, "uid", v);
			pb_set_bool(o, "root", v == 0);
		}
	}
}

/* A value as a shell assignment writes it, without one level of quotes. */
static void unquote(char *v)
{
	size_t n = strlen(v);

	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
		memmove(v, v + 1, n - 2);
		v[n - 2] = '\0';
	}
}

void hp_nccl_decode_environment(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "environment");
	cJSON *o;
	size_t i;

	/* grep: 0 lines found, 1 none (known: nothing set), anything else unknown. */
	if (!b || (b->rc != 0 && b->rc != 1))
		return;
	o = pb_obj(facts, "environment");
	for (i = 0; i < b->lines.n; i++) {
		const char *l = pb_skip(b->lines.v[i]), *eq;
		char name[PB_FIELD], value[PB_FIELD];
		size_t n;

		if (pb_prefix(l, "export "))
			l = pb_skip(l + 7);
		eq = strchr(l, '=');
		if (!eq || eq == l || (size_t)(eq - l) >= sizeof(name))
			continue;
		n = (size_t)(eq - l);
		memcpy(name, l, n);
		name[n] = '\0';
		hp_strlcpy(value, eq + 1, sizeof(value));
		n = strlen(value);
		while (n && value[n - 1] == ' ')
			value[--n] = '\0';
		unquote(value);
		pb_set_str(o, name, value);
	}
}

cJSON *hp_nccl_probe_parse(const char *text, size_t len)
{
	static void (*const decoders[])(const struct pb_input *, cJSON *) = {
		hp_nccl_decode_probe, hp_nccl_decode_topo, hp_nccl_decode_pci_numa,
		hp_nccl_decode_acs, hp_nccl_decode_iommu, hp_nccl_decode_peermem,
		hp_nccl_decode_efa_installer, hp_nccl_decode_ofi_plugin,
		hp_nccl_decode_libfabric, hp_nccl_decode_nccl_lib, hp_nccl_decode_netif,
		hp_nccl_decode_limits, hp_nccl_decode_procs, hp_nccl_decode_hugepages,
		hp_nccl_decode_logind, hp_nccl_decode_shm, hp_nccl_decode_numa,
		hp_nccl_decode_firewall, hp_nccl_decode_environment,
	};
	struct pb_input f;
	cJSON *facts = cJSON_CreateObject();
	size_t i;

	if (!facts)
		hp_die("out of memory");
	pb_frame(&f, text, text ? len : 0, &pb_nccl_frame);
	for (i = 0; i < HP_ARRAY_LEN(decoders); i++)
		decoders[i](&f, facts);
	pb_release(&f);
	hp_facts_count_run(FACTS_NCCL);
	return facts;
}
