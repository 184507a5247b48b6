/*
 * NCCL probe decoders for the GPU side of a node: `nvidia-smi topo -m`
 * (NVLink versus PCIe paths between GPUs, the nearest NIC of each GPU),
 * the NUMA node of NVIDIA and Amazon PCI devices, PCIe ACS on bridges,
 * the IOMMU, GPUDirect RDMA (nvidia_peermem), and the NCCL library and
 * header versions found on the host.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/util.h"
#include "nccl-int.h"

/* Columns of a topology matrix the decoder follows. */
#define TOPO_MAX 64
#define TOPO_PCIE_LIST 16

/* PCIe path kinds, nearest first ("SOC" is the old name of "SYS"). */
static const char *const pcie_paths[] = { "PIX", "PXB", "PHB", "NODE", "SYS", "SOC" };

static int pcie_rank(const char *v)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(pcie_paths); i++)
		if (!strcmp(v, pcie_paths[i]))
			return (int)i;
	return -1;
}

/* "NV12" -> 12; 0 when v is not an NVLink entry. */
static int nvlinks(const char *v)
{
	double n;

	if (strncmp(v, "NV", 2) || !pb_count(v + 2, &n) || n < 1 || n > 1000)
		return 0;
	return (int)n;
}

static double count_of(const cJSON *o, const char *key)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static int is_gpu(const char *name)
{
	double n;

	return pb_prefix(name, "GPU") && pb_count(name + 3, &n);
}

/*
 * The header is the first line whose first word is GPU0; its columns run to
 * "CPU" (of "CPU Affinity"). A row starts with a column name; its cells
 * follow in column order, then the affinity cells.
 */
void hp_nccl_decode_topo(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "topo");
	char (*w)[PB_FIELD], cols[TOPO_MAX][16];
	char (*cell)[TOPO_MAX][8];
	int row_seen[TOPO_MAX] = { 0 }, numa[TOPO_MAX];
	size_t ncols = 0, i, j, header = (size_t)-1;
	int gpus = 0, nics = 0, pairs = 0, nvpairs = 0, pciepairs = 0, nvmin = 0;
	cJSON *o, *links, *pcie, *gnuma, *nic;

	if (!b)
		return;
	o = pb_obj(facts, "topo");
	nf_rc(o, b);
	if (b->rc != 0) {
		if (b->rc != 127 && pb_first_line(b))
			pb_set_str(o, "error", pb_first_line(b));
		return;
	}
	w = xcalloc(TOPO_MAX + 8, sizeof(*w));
	cell = xcalloc(TOPO_MAX, sizeof(*cell));
	for (i = 0; i < TOPO_MAX; i++)
		numa[i] = -1;
	for (i = 0; i < b->lines.n; i++) {
		size_t n = pb_words(b->lines.v[i], w, TOPO_MAX + 8), r;

		if (!n)
			continue;
		if (header == (size_t)-1) {
			if (strcmp(w[0], "GPU0"))
				continue;
			header = i;
			for (j = 0; j < n && ncols < TOPO_MAX && strcmp(w[j], "CPU"); j++)
				hp_strlcpy(cols[ncols++], w[j], sizeof(cols[0]));
			continue;
		}
		if (pb_prefix(w[0], "Legend"))
			break;
		for (r = 0; r < ncols && strcmp(cols[r], w[0]); r++)
			;
		if (r == ncols || row_seen[r] || n < ncols + 1)
			continue;
		row_seen[r] = 1;
		for (j = 0; j < ncols; j++)
			hp_strlcpy(cell[r][j], w[j + 1], sizeof(cell[0][0]));
		/* After the cells: CPU affinity, NUMA affinity, GPU NUMA id. */
		if (is_gpu(w[0]) && n >= ncols + 3) {
			double v;

			if (pb_count(w[ncols + 2], &v) && v < 1024)
				numa[r] = (int)v;
		}
	}
	if (header == (size_t)-1) {
		pb_set_str(o, "error", pb_first_line(b) ? pb_first_line(b) : "no topology matrix in the output");
		free(w);
		free(cell);
		return;
	}
	links = pb_obj(o, "links");
	pcie = pb_arr(o, "pcie");
	gnuma = pb_obj(o, "gpu_numa");
	nic = pb_obj(o, "nic_path");
	for (i = 0; i < ncols; i++) {
		if (!is_gpu(cols[i])) {
			nics++;
			continue;
		}
		if (!row_seen[i])
			continue;
		gpus++;
		if (numa[i] >= 0)
			pb_set_num(gnuma, cols[i], numa[i]);
		for (j = 0; j < ncols; j++) {
			const char *v = cell[i][j];
			int k = nvlinks(v), rank = pcie_rank(v);

			if (!is_gpu(cols[j])) {
				int best;
				const cJSON *have = cJSON_GetObjectItemCaseSensitive(nic, cols[i]);

				if (rank < 0)
					continue;
				best = cJSON_IsString(have) ? pcie_rank(have->valuestring) : 99;
				if (rank < best)
					pb_set_str(nic, cols[i], pcie_paths[rank]);
				continue;
			}
			if (j <= i || !row_seen[j] || !*v)
				continue;
			pairs++;
			pb_set_num(links, v, count_of(links, v) + 1);
			if (k) {
				nvpairs++;
				if (!nvmin || k < nvmin)
					nvmin = k;
			} else if (rank >= 0) {
				pciepairs++;
				if (cJSON_GetArraySize(pcie) < TOPO_PCIE_LIST) {
					char pair[64];

					snprintf(pair, sizeof(pair), "%.15s-%.15s %.7s", cols[i], cols[j], v);
					cJSON_AddItemToArray(pcie, cJSON_CreateString(pair));
				}
			}
		}
	}
	pb_set_num(o, "gpus", gpus);
	pb_set_num(o, "nics", nics);
	pb_set_num(o, "gpu_pairs", pairs);
	pb_set_num(o, "nvlink_pairs", nvpairs);
	pb_set_num(o, "pcie_pairs", pciepairs);
	if (nvmin)
		pb_set_num(o, "nvlink_min", nvmin);
	free(w);
	free(cell);
}

void hp_nccl_decode_pci_numa(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "pci_numa");
	char w[4][PB_FIELD];
	cJSON *o, *devs;
	size_t i;
	int unknown = 0;

	if (!b || b->rc != 0)
		return;
	o = pb_obj(facts, "pci_numa");
	devs = pb_arr(o, "devices");
	for (i = 0; i < b->lines.n; i++) {
		cJSON *d;
		double v;

		if (pb_words(b->lines.v[i], w, 4) != 4)
			continue;
		if (cJSON_GetArraySize(devs) >= 256)
			break;
		d = cJSON_CreateObject();
		pb_set_str(d, "address", w[0]);
		pb_set_str(d, "vendor", w[1]);
		pb_set_str(d, "class", w[2]);
		/* -1 is the kernel's "no NUMA information"; "?" could not be read. */
		if (pb_count(w[3], &v))
			pb_set_num(d, "numa", v);
		else
			unknown++;
		cJSON_AddItemToArray(devs, d);
	}
	pb_set_num(o, "numa_unknown", unknown);
}

/* "0000:00:01.0 PCI bridge: ..." or "00:01.0 ...": the address, else "". */
static void device_address(const char *l, char *out, size_t n)
{
	size_t k = 0;

	while (l[k] && (isxdigit((unsigned char)l[k]) || l[k] == ':' || l[k] == '.'))
		k++;
	if (k < 7 || l[k] != ' ') {
		*out = '\0';
		return;
	}
	if (k >= n)
		k = n - 1;
	memcpy(out, l, k);
	out[k] = '\0';
}

void hp_nccl_decode_acs(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "acs");
	char addr[64] = "";
	int bridge = 0, bridges = 0, enabled = 0, acs_lines = 0, denied = 0;
	cJSON *o, *list;
	size_t i;

	if (!b)
		return;
	o = pb_obj(facts, "acs");
	nf_rc(o, b);
	if (b->rc != 0)
		return;
	list = pb_arr(o, "enabled_bridges");
	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i];

		if (strstr(l, "access denied")) {
			denied++;
			continue;
		}
		if (strstr(l, "ACSCtl:")) {
			acs_lines++;
			if (bridge && strstr(l, "SrcValid+")) {
				enabled++;
				if (cJSON_GetArraySize(list) < NF_LIST)
					cJSON_AddItemToArray(list, cJSON_CreateString(addr));
			}
			continue;
		}
		if (pb_prefix(l, "lspci"))
			continue;
		device_address(l, addr, sizeof(addr));
		bridge = addr[0] && strstr(l, " bridge:") != NULL && !strstr(l, "Host bridge:");
		bridges += bridge;
	}
	pb_set_num(o, "bridges", bridges);
	/* Without root the capabilities are not readable: ACS is unknown, not off. */
	if (denied && !acs_lines) {
		pb_set_bool(o, "readable", 0);
		cJSON_DeleteItemFromObjectCaseSensitive(o, "enabled_bridges");
		return;
	}
	pb_set_bool(o, "readable", 1);
	pb_set_num(o, "enabled", enabled);
}

void hp_nccl_decode_iommu(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "iommu");
	cJSON *o, *words;
	int units = 0, pt = 0;
	size_t i;

	if (!b || b->rc != 0)
		return;
	o = pb_obj(facts, "iommu");
	words = pb_arr(o, "cmdline");
	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i];

		if (pb_prefix(l, "unit "))
			units++;
		else if (pb_prefix(l, "cmdline ") && cJSON_GetArraySize(words) < NF_LIST) {
			const char *word = l + 8;

			cJSON_AddItemToArray(words, cJSON_CreateString(word));
			if (!strcmp(word, "iommu=pt") || !strcmp(word, "iommu.passthrough=1"))
				pt = 1;
		}
	}
	pb_set_num(o, "units", units);
	pb_set_bool(o, "passthrough", pt);
}

void hp_nccl_decode_peermem(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "peermem");
	char w[2][PB_FIELD];
	cJSON *o;
	size_t i;

	if (!b)
		return;
	o = pb_obj(facts, "peermem");
	/* grep: 0 a module line, 1 none; anything else: /proc/modules unreadable. */
	if (b->rc != 0 && b->rc != 1) {
		pb_set_bool(o, "read", 0);
		return;
	}
	pb_set_bool(o, "read", 1);
	pb_set_bool(o, "loaded", 0);
	for (i = 0; b->rc == 0 && i < b->lines.n; i++) {
		if (pb_words(b->lines.v[i], w, 2) < 1)
			continue;
		if (!strcmp(w[0], "nvidia_peermem") || !strcmp(w[0], "nv_peer_mem")) {
			pb_set_bool(o, "loaded", 1);
			pb_set_str(o, "module", w[0]);
			break;
		}
	}
}

/* Up to n bytes of a dotted version ("2.21.5") at s, into out. */
static int version_at(const char *s, char *out, size_t n)
{
	size_t k = 0;

	while (s[k] && (isdigit((unsigned char)s[k]) || s[k] == '.') && k + 1 < n)
		k++;
	while (k && s[k - 1] == '.')
		k--;
	if (!k || !isdigit((unsigned char)s[0]) || !strchr(s, '.'))
		return 0;
	memcpy(out, s, k);
	out[k] = '\0';
	return strchr(out, '.') != NULL;
}

void hp_nccl_decode_nccl_lib(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "nccl_lib");
	const struct pb_block *h = pb_find(f, "nccl_header");
	char v[64];
	size_t i;

	if (b && (b->rc == 0 || b->rc == 3)) {
		cJSON *o = pb_obj(facts, "nccl_lib");

		pb_set_bool(o, "found", b->rc == 0);
		if (b->rc == 0) {
			nf_paths(b, o);
			for (i = 0; i < b->lines.n; i++) {
				const char *l = b->lines.v[i], *p = strstr(l, "NCCL version ");

				if (!pb_prefix(l, "version ") || !p)
					continue;
				if (version_at(p + 13, v, sizeof(v)))
					pb_set_str(o, "version", v);
				p = strstr(p, "+cuda");
				if (p && version_at(p + 5, v, sizeof(v)))
					pb_set_str(o, "cuda", v);
			}
			/* Else the version in a file name: libnccl.so.2.21.5. */
			if (!cJSON_GetObjectItemCaseSensitive(o, "version")) {
				const cJSON *lib;

				cJSON_ArrayForEach(lib, cJSON_GetObjectItemCaseSensitive(o, "libs")) {
					const char *s = strstr(lib->valuestring, "libnccl.so.");

					if (s && version_at(s + 11, v, sizeof(v)) &&
					    strchr(strchr(v, '.') + 1, '.')) {
						pb_set_str(o, "version", v);
						break;
					}
				}
			}
		}
	}
	if (h && (h->rc == 0 || h->rc == 3)) {
		cJSON *o = pb_obj(facts, "nccl_header");
		double major = -1, minor = -1, patch = -1;
		char suffix[64] = "";

		pb_set_bool(o, "found", h->rc == 0);
		for (i = 0; h->rc == 0 && i < h->lines.n; i++) {
			char w[3][PB_FIELD];
			const char *l = h->lines.v[i];
			double x;

			if (pb_prefix(l, "file ")) {
				pb_set_str(o, "file", l + 5);
				continue;
			}
			if (pb_words(l, w, 3) != 3 || strcmp(w[0], "#define"))
				continue;
			if (!strcmp(w[1], "NCCL_SUFFIX")) {
				size_t n = strlen(w[2]);

				if (n > 2 && w[2][0] == '"' && w[2][n - 1] == '"' && n - 2 < sizeof(suffix)) {
					memcpy(suffix, w[2] + 1, n - 2);
					suffix[n - 2] = '\0';
				}
				continue;
			}
			if (!pb_count(w[2], &x) || x > 10000)
				continue;
			if (!strcmp(w[1], "NCCL_MAJOR"))
				major = x;
			else if (!strcmp(w[1], "NCCL_MINOR"))
				minor = x;
			else if (!strcmp(w[1], "NCCL_PATCH"))
				patch = x;
		}
		if (major >= 0 && minor >= 0 && patch >= 0) {
			snprintf(v, sizeof(v), "%.0f.%.0f.%.0f%s", major, minor, patch, suffix);
			pb_set_str(o, "version", v);
		}
	}
}
