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

	if (strncmp(v, "NV", 2) || !nf_count(v + 2, &n) || n < 1 || n > 1000)
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

	return nf_prefix(name, "GPU") && nf_count(name + 3, &n);
}

/*
 * The header is the first line whose first word is GPU0; its columns run to
 * "CPU" (of "CPU Affinity"). A row starts with a column name; its cells
 * follow in column order, then the affinity cells.
 */
void hp_nccl_decode_topo(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "topo");
	char (*w)[NF_FIELD], cols[TOPO_MAX][16];
	char (*cell)[TOPO_MAX][8];
	int row_seen[TOPO_MAX] = { 0 }, numa[TOPO_MAX];
	size_t ncols = 0, i, j, header = (size_t)-1;
	int gpus = 0, nics = 0, pairs = 0, nvpairs = 0, pciepairs = 0, nvmin = 0;
	cJSON *o, *links, *pcie, *gnuma, *nic;

	if (!b)
		return;
	o = nf_obj(facts, "topo");
	nf_rc(o, b);
	if (b->rc != 0) {
		if (b->rc != 127 && nf_first(b))
			nf_str(o, "error", nf_first(b));
		return;
	}
	w = xcalloc(TOPO_MAX + 8, sizeof(*w));
	cell = xcalloc(TOPO_MAX, sizeof(*cell));
	for (i = 0; i < TOPO_MAX; i++)
		numa[i] = -1;
	for (i = 0; i < b->nkept; i++) {
		size_t n = nf_words(b->lines[i], w, TOPO_MAX + 8), r;

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
		if (nf_prefix(w[0], "Legend"))
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

			if (nf_count(w[ncols + 2], &v) && v < 1024)
				numa[r] = (int)v;
		}
	}
	if (header == (size_t)-1) {
		nf_str(o, "error", nf_first(b) ? nf_first(b) : "no topology matrix in the output");
		free(w);
		free(cell);
		return;
	}
	links = nf_obj(o, "links");
	pcie = nf_arr(o, "pcie");
	gnuma = nf_obj(o, "gpu_numa");
	nic = nf_obj(o, "nic_path");
	for (i = 0; i < ncols; i++) {
		if (!is_gpu(cols[i])) {
			nics++;
			continue;
		}
		if (!row_seen[i])
			continue;
		gpus++;
		if (numa[i] >= 0)
			nf_num(gnuma, cols[i], numa[i]);
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
					nf_str(nic, cols[i], pcie_paths[rank]);
				continue;
			}
			if (j <= i || !row_seen[j] || !*v)
				continue;
			pairs++;
			nf_num(links, v, count_of(links, v) + 1);
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
	nf_num(o, "gpus", gpus);
	nf_num(o, "nics", nics);
	nf_num(o, "gpu_pairs", pairs);
	nf_num(o, "nvlink_pairs", nvpairs);
	nf_num(o, "pcie_pairs", pciepairs);
	if (nvmin)
		nf_num(o, "nvlink_min", nvmin);
	free(w);
	free(cell);
}

void hp_nccl_decode_pci_numa(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "pci_numa");
	char w[4][NF_FIELD];
	cJSON *o, *devs;
	size_t i;
	int unknown = 0;

	if (!b || b->rc != 0)
		return;
	o = nf_obj(facts, "pci_numa");
	devs = nf_arr(o, "devices");
	for (i = 0; i < b->nkept; i++) {
		cJSON *d;
		double v;

		if (nf_words(b->lines[i], w, 4) != 4)
			continue;
		if (cJSON_GetArraySize(devs) >= 256)
			break;
		d = cJSON_CreateObject();
		nf_str(d, "address", w[0]);
		nf_str(d, "vendor", w[1]);
		nf_str(d, "class", w[2]);
		/* -1 is the kernel's "no NUMA information"; "?" could not be read. */
		if (nf_count(w[3], &v))
			nf_num(d, "numa", v);
		else
			unknown++;
		cJSON_AddItemToArray(devs, d);
	}
	nf_num(o, "numa_unknown", unknown);
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

void hp_nccl_decode_acs(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "acs");
	char addr[64] = "";
	int bridge = 0, bridges = 0, enabled = 0, acs_lines = 0, denied = 0;
	cJSON *o, *list;
	size_t i;

	if (!b)
		return;
	o = nf_obj(facts, "acs");
	nf_rc(o, b);
	if (b->rc != 0)
		return;
	list = nf_arr(o, "enabled_bridges");
	for (i = 0; i < b->nkept; i++) {
		const char *l = b->lines[i];

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
		if (nf_prefix(l, "lspci"))
			continue;
		device_address(l, addr, sizeof(addr));
		bridge = addr[0] && strstr(l, " bridge:") != NULL && !strstr(l, "Host bridge:");
		bridges += bridge;
	}
	nf_num(o, "bridges", bridges);
	/* Without root the capabilities are not readable: ACS is unknown, not off. */
	if (denied && !acs_lines) {
		nf_bool(o, "readable", 0);
		cJSON_DeleteItemFromObjectCaseSensitive(o, "enabled_bridges");
		return;
	}
	nf_bool(o, "readable", 1);
	nf_num(o, "enabled", enabled);
}

void hp_nccl_decode_iommu(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "iommu");
	cJSON *o, *words;
	int units = 0, pt = 0;
	size_t i;

	if (!b || b->rc != 0)
		return;
	o = nf_obj(facts, "iommu");
	words = nf_arr(o, "cmdline");
	for (i = 0; i < b->nkept; i++) {
		const char *l = b->lines[i];

		if (nf_prefix(l, "unit "))
			units++;
		else if (nf_prefix(l, "cmdline ") && cJSON_GetArraySize(words) < NF_LIST) {
			const char *word = l + 8;

			cJSON_AddItemToArray(words, cJSON_CreateString(word));
			if (!strcmp(word, "iommu=pt") || !strcmp(word, "iommu.passthrough=1"))
				pt = 1;
		}
	}
	nf_num(o, "units", units);
	nf_bool(o, "passthrough", pt);
}

void hp_nccl_decode_peermem(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "peermem");
	char w[2][NF_FIELD];
	cJSON *o;
	size_t i;

	if (!b)
		return;
	o = nf_obj(facts, "peermem");
	/* grep: 0 a module line, 1 none; anything else: /proc/modules unreadable. */
	if (b->rc != 0 && b->rc != 1) {
		nf_bool(o, "read", 0);
		return;
	}
	nf_bool(o, "read", 1);
	nf_bool(o, "loaded", 0);
	for (i = 0; b->rc == 0 && i < b->nkept; i++) {
		if (nf_words(b->lines[i], w, 2) < 1)
			continue;
		if (!strcmp(w[0], "nvidia_peermem") || !strcmp(w[0], "nv_peer_mem")) {
			nf_bool(o, "loaded", 1);
			nf_str(o, "module", w[0]);
			break;
		}
	}
}

/* "lib <path>" and "link <path> -> <target>" lines into libs and links. */
static void paths(const struct hp_nccl_block *b, cJSON *o)
{
	cJSON *libs = nf_arr(o, "libs"), *links = nf_arr(o, "links");
	size_t i;

	for (i = 0; i < b->nkept; i++) {
		const char *l = b->lines[i], *arrow;

		if (nf_prefix(l, "lib ") && cJSON_GetArraySize(libs) < NF_LIST) {
			cJSON_AddItemToArray(libs, cJSON_CreateString(l + 4));
		} else if (nf_prefix(l, "link ") && (arrow = strstr(l, " -> ")) &&
			   cJSON_GetArraySize(links) < NF_LIST) {
			cJSON *x = cJSON_CreateObject();
			char *p = xstrndup(l + 5, (size_t)(arrow - (l + 5)));

			nf_str(x, "path", p);
			nf_str(x, "target", arrow + 4);
			free(p);
			cJSON_AddItemToArray(links, x);
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

void hp_nccl_decode_nccl_lib(const struct hp_nccl_frame *f, cJSON *facts)
{
	const struct hp_nccl_block *b = hp_nccl_frame_find(f, "nccl_lib");
	const struct hp_nccl_block *h = hp_nccl_frame_find(f, "nccl_header");
	char v[64];
	size_t i;

	if (b && (b->rc == 0 || b->rc == 3)) {
		cJSON *o = nf_obj(facts, "nccl_lib");

		nf_bool(o, "found", b->rc == 0);
		if (b->rc == 0) {
			paths(b, o);
			for (i = 0; i < b->nkept; i++) {
				const char *l = b->lines[i], *p = strstr(l, "NCCL version ");

				if (!nf_prefix(l, "version ") || !p)
					continue;
				if (version_at(p + 13, v, sizeof(v)))
					nf_str(o, "version", v);
				p = strstr(p, "+cuda");
				if (p && version_at(p + 5, v, sizeof(v)))
					nf_str(o, "cuda", v);
			}
			/* Else the version in a file name: libnccl.so.2.21.5. */
			if (!cJSON_GetObjectItemCaseSensitive(o, "version")) {
				const cJSON *lib;

				cJSON_ArrayForEach(lib, cJSON_GetObjectItemCaseSensitive(o, "libs")) {
					const char *s = strstr(lib->valuestring, "libnccl.so.");

					if (s && version_at(s + 11, v, sizeof(v)) &&
					    strchr(strchr(v, '.') + 1, '.')) {
						nf_str(o, "version", v);
						break;
					}
				}
			}
		}
	}
	if (h && (h->rc == 0 || h->rc == 3)) {
		cJSON *o = nf_obj(facts, "nccl_header");
		double major = -1, minor = -1, patch = -1;
		char suffix[64] = "";

		nf_bool(o, "found", h->rc == 0);
		for (i = 0; h->rc == 0 && i < h->nkept; i++) {
			char w[3][NF_FIELD];
			const char *l = h->lines[i];
			double x;

			if (nf_prefix(l, "file ")) {
				nf_str(o, "file", l + 5);
				continue;
			}
			if (nf_words(l, w, 3) != 3 || strcmp(w[0], "#define"))
				continue;
			if (!strcmp(w[1], "NCCL_SUFFIX")) {
				size_t n = strlen(w[2]);

				if (n > 2 && w[2][0] == '"' && w[2][n - 1] == '"' && n - 2 < sizeof(suffix)) {
					memcpy(suffix, w[2] + 1, n - 2);
					suffix[n - 2] = '\0';
				}
				continue;
			}
			if (!nf_count(w[2], &x) || x > 10000)
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
			nf_str(o, "version", v);
		}
	}
}
