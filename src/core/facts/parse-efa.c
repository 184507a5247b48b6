/*
 * EFA: the /dev/infiniband entries (one uverbs device per EFA interface),
 * the RDMA devices and port states under /sys/class/infiniband, whether
 * libfabric offers the efa provider (fi_info -p efa); and which kernel
 * modules of interest are loaded (efa, ib_uverbs, nvidia, neuron).
 */
#include <string.h>

#include "hp/util.h"
#include "probe-int.h"

void pb_parse_efa(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b;
	cJSON *efa = NULL;
	size_t i;

	if ((b = pb_find(in, "ib_devices")) && b->ended) {
		double uverbs = 0;
		int rdma_cm = 0;

		efa = pb_obj(facts, "efa");
		pb_set_bool(efa, "dev_read", b->rc == 0);
		for (i = 0; i < b->lines.n; i++) {
			if (!strncmp(b->lines.v[i], "uverbs", 6))
				uverbs++;
			else if (!strcmp(b->lines.v[i], "rdma_cm"))
				rdma_cm = 1;
		}
		pb_set_num(efa, "uverbs", uverbs);
		pb_set_bool(efa, "rdma_cm", rdma_cm);
	}
	if ((b = pb_find(in, "ib_ports")) && b->ended && b->rc == 0) {
		cJSON *ports;
		char last[PB_FIELD] = "";
		double devices = 0;

		if (!efa)
			efa = pb_obj(facts, "efa");
		ports = cJSON_AddArrayToObject(efa, "ports");
		if (!ports)
			hp_die("out of memory");
		for (i = 0; i < b->lines.n; i++) {
			char w[4][PB_FIELD];
			size_t n = pb_words(b->lines.v[i], w, 4);
			cJSON *p;

			if (!n)
				continue;
			if (strcmp(w[0], last)) {
				devices++;
				hp_strlcpy(last, w[0], sizeof(last));
			}
			if (n < 3 || cJSON_GetArraySize(ports) >= 128)
				continue;
			p = cJSON_CreateObject();
			if (!p)
				hp_die("out of memory");
			pb_set_str(p, "device", w[0]);
			pb_set_str(p, "port", w[1]);
			/* "4: ACTIVE" -> "ACTIVE" */
			pb_set_str(p, "state", n >= 4 ? w[3] : w[2]);
			cJSON_AddItemToArray(ports, p);
		}
		pb_set_num(efa, "ib_devices", devices);
	}
	if ((b = pb_find(in, "fi_info"))) {
		cJSON *fi;
		double providers = 0;

		if (!efa)
			efa = pb_obj(facts, "efa");
		fi = pb_rc_obj(efa, "fi_info", b);
		if (!pb_not_installed(b)) {
			for (i = 0; i < b->lines.n; i++) {
				char w[3][PB_FIELD];

				if (pb_words(b->lines.v[i], w, 3) == 2 && !strcmp(w[0], "provider:") &&
				    !strcmp(w[1], "efa"))
					providers++;
			}
			pb_set_num(fi, "efa_providers", providers);
			if (!providers) {
				const char *line = pb_first_line(b);
				char e[PB_FIELD];

				if (line) {
					pb_copy_trim(line, strlen(line), e);
					pb_set_str(fi, "error", e);
				}
			}
		}
	}
}

void pb_parse_modules(const struct pb_input *in, cJSON *facts)
{
	static const char *const names[] = { "efa", "ib_uverbs", "nvidia", "neuron" };
	const struct pb_block *b = pb_find(in, "modules");
	cJSON *mods;
	size_t i, k;

	/* grep: 0 some found, 1 none, 2 /proc/modules unreadable. */
	if (!b || !b->ended || (b->rc != 0 && b->rc != 1))
		return;
	mods = pb_obj(facts, "modules");
	for (k = 0; k < HP_ARRAY_LEN(names); k++) {
		size_t n = strlen(names[k]);
		int loaded = 0;

		for (i = 0; i < b->lines.n; i++)
			if (!strncmp(b->lines.v[i], names[k], n) && b->lines.v[i][n] == ' ')
				loaded = 1;
		pb_set_bool(mods, names[k], loaded);
	}
}
