/*
 * Accelerators: nvidia-smi CSV queries (GPU list, ECC counters, clocks and
 * throttle reasons, remapped rows, recovery action) merged per GPU, the
 * NVIDIA and Amazon PCI functions, dcgmi health (JSON, with the table form
 * as fallback) and the neuron-ls device table. Counts stay numbers; a
 * value nvidia-smi could not read ("[N/A]", "[Not Supported]", "[Unknown
 * Error]", "[GPU requires reset]") leaves the value absent and is recorded
 * per GPU under "unreadable" with the text it printed instead. A GPU whose
 * handle nvidia-smi could not get is named in "unreachable" by bus id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hp/buf.h"
#include "hp/json.h"
#include "hp/util.h"
#include "probe-int.h"

/* Non-row lines of nvidia-smi kept as evidence. */
#define MAX_ERRORS 8

/*
 * The GPU with this index (or bus id). Only the GPU list creates entries
 * (create set): a GPU missing from it is missing, whatever other queries say.
 */
static cJSON *gpu_by(cJSON *gpus, double index, const char *bus, int create)
{
	cJSON *g;

	cJSON_ArrayForEach(g, gpus) {
		const cJSON *i = cJSON_GetObjectItemCaseSensitive(g, "index");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(g, "bus_id");

		if (bus && cJSON_IsString(b) && !strcasecmp(b->valuestring, bus))
			return g;
		if (!bus && cJSON_IsNumber(i) && i->valuedouble == index)
			return g;
	}
	if (!create || cJSON_GetArraySize(gpus) >= PB_MAX_GPUS)
		return NULL;
	g = cJSON_CreateObject();
	if (bus)
		pb_set_str(g, "bus_id", bus);
	else
		pb_set_num(g, "index", index);
	cJSON_AddItemToArray(gpus, g);
	return g;
}

static void set_count(cJSON *g, const char *key, const char *v)
{
	double n;

	if (pb_count(v, &n))
		pb_set_num(g, key, n);
}

/* Yes/No and 1/0 as nvidia-smi prints them; -1 for anything else. */
static int flag(const char *v)
{
	if (!strcasecmp(v, "yes") || !strcmp(v, "1") || !strcasecmp(v, "true"))
		return 1;
	if (!strcasecmp(v, "no") || !strcmp(v, "0") || !strcasecmp(v, "false"))
		return 0;
	return -1;
}

/*
 * "Unable to determine the device handle for GPU0000:A8:00.0: Unknown Error"
 * (some versions put a space before the bus id): the bus id goes to
 * nv.unreachable. nvidia-smi stops at that GPU, so the ones after it are
 * not listed either.
 */
static void unreachable(cJSON *nv, const char *line)
{
	static const char lead[] = "device handle for GPU";
	const char *p = strstr(line, lead), *end;
	cJSON *list;
	char bus[PB_FIELD];

	if (!p)
		return;
	p += sizeof(lead) - 1;
	while (*p == ' ')
		p++;
	end = strstr(p, ": ");
	if (!end)
		end = p + strlen(p);
	pb_copy_trim(p, (size_t)(end - p), bus);
	if (!*bus)
		return;
	list = cJSON_GetObjectItemCaseSensitive(nv, "unreachable");
	if (!list)
		list = cJSON_AddArrayToObject(nv, "unreachable");
	if (cJSON_GetArraySize(list) < PB_MAX_GPUS)
		cJSON_AddItemToArray(list, cJSON_CreateString(bus));
	if (*end)
		pb_set_str(nv, "unreachable_reason", end + 2);
}

/* A value nvidia-smi printed in place of a reading: "[N/A]", "[Unknown Error]". */
static int unread(const char *v)
{
	return v[0] == '[';
}

/* Record the first unreadable value of one query (key) for this GPU. */
static void mark(cJSON *g, const char *key, const char *v)
{
	cJSON *u = pb_obj(g, "unreadable");

	if (!cJSON_GetObjectItemCaseSensitive(u, key))
		pb_set_str(u, key, v);
}

static void note_error(cJSON *nv, const char *line)
{
	cJSON *errs = cJSON_GetObjectItemCaseSensitive(nv, "errors");
	char e[PB_FIELD];

	if (!*line)
		return;
	if (!errs)
		errs = cJSON_AddArrayToObject(nv, "errors");
	if (cJSON_GetArraySize(errs) >= MAX_ERRORS)
		return;
	pb_copy_trim(line, strlen(line), e);
	cJSON_AddItemToArray(errs, cJSON_CreateString(e));
	if (!cJSON_GetObjectItemCaseSensitive(nv, "error"))
		pb_set_str(nv, "error", e);
	unreachable(nv, e);
}

/* Rows that start with a GPU index; every other line is an error text. */
static void each_row(const struct pb_block *b, cJSON *nv, cJSON *gpus, size_t want,
		     const char *key, void (*fn)(cJSON *g, char (*f)[PB_FIELD]))
{
	char f[8][PB_FIELD];
	const char *err = NULL;
	size_t i, rows = 0;

	for (i = 0; b && i < b->lines.n; i++) {
		double index;
		cJSON *g;

		if (pb_split(b->lines.v[i], ',', f, 8) < want || !pb_count(f[0], &index)) {
			/* The same failure repeats in every query; the first one says it. */
			if (!strcmp(b->name, "nvidia_gpu"))
				note_error(nv, b->lines.v[i]);
			else if (!err && *b->lines.v[i])
				err = b->lines.v[i];
			continue;
		}
		rows++;
		if ((g = gpu_by(gpus, index, NULL, !strcmp(b->name, "nvidia_gpu"))))
			fn(g, f);
	}
	/* A query that failed outright (not an unknown field of an older driver, exit 2)
	   leaves every GPU's values unread. */
	if (b && !rows && err && key && !(b->ended && b->rc == 2)) {
		char e[PB_FIELD];
		cJSON *g;

		pb_copy_trim(err, strlen(err), e);
		cJSON_ArrayForEach(g, gpus)
			mark(g, key, e);
	}
}

static void row_gpu(cJSON *g, char (*f)[PB_FIELD])
{
	pb_set_str(g, "bus_id", f[1]);
	pb_set_str(g, "name", f[2]);
	pb_set_str(g, "uuid", f[3]);
	pb_set_str(g, "driver", f[4]);
}

static void row_ecc(cJSON *g, char (*f)[PB_FIELD])
{
	size_t i;

	if (*f[1] && !unread(f[1]))
		pb_set_str(g, "ecc_mode", f[1]);
	/* With ECC off the counters are N/A by design; anything else unread is unknown. */
	for (i = 1; i <= 5; i++)
		if (unread(f[i]) && !(i > 1 && !strcmp(f[1], "Disabled")))
			mark(g, "ecc", f[i]);
	set_count(g, "ecc_corr_vol", f[2]);
	set_count(g, "ecc_unc_vol", f[3]);
	set_count(g, "ecc_corr_agg", f[4]);
	set_count(g, "ecc_unc_agg", f[5]);
}

static void row_clocks(cJSON *g, char (*f)[PB_FIELD])
{
	char *end;
	unsigned long long bits;

	size_t i;

	for (i = 1; i <= 4; i++)
		if (unread(f[i]))
			mark(g, "clocks", f[i]);
	set_count(g, "temp_c", f[1]);
	set_count(g, "sm_mhz", f[2]);
	set_count(g, "sm_max_mhz", f[3]);
	if (!strncmp(f[4], "0x", 2)) {
		bits = strtoull(f[4] + 2, &end, 16);
		if (end != f[4] + 2 && !*end)
			pb_set_num(g, "throttle", (double)bits);
	}
}

static void row_recovery(cJSON *g, char (*f)[PB_FIELD])
{
	if (unread(f[1]))
		mark(g, "recovery", f[1]);
	else if (*f[1])
		pb_set_str(g, "recovery_action", f[1]);
}

void pb_parse_nvidia(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b;
	cJSON *nv, *gpus;
	char f[8][PB_FIELD];
	const char *err;
	size_t i, k, rows;

	b = pb_start(in, "nvidia_gpu", facts, "nvidia", &nv);
	if (!b || pb_not_installed(b))
		return;
	gpus = cJSON_AddArrayToObject(nv, "gpus");
	each_row(b, nv, gpus, 5, NULL, row_gpu);
	each_row(pb_find(in, "nvidia_ecc"), nv, gpus, 6, "ecc", row_ecc);
	each_row(pb_find(in, "nvidia_clocks"), nv, gpus, 5, "clocks", row_clocks);
	each_row(pb_find(in, "nvidia_recovery"), nv, gpus, 2, "recovery", row_recovery);
	/* Remapped rows are keyed by bus id, not by index. */
	b = pb_find(in, "nvidia_remap");
	for (i = 0, rows = 0, err = NULL; b && i < b->lines.n; i++) {
		cJSON *g, *r;
		int pend, fail;

		if (pb_split(b->lines.v[i], ',', f, 8) < 5 || strncasecmp(f[0], "0000", 4)) {
			if (!err && *b->lines.v[i])
				err = b->lines.v[i];
			continue;
		}
		rows++;
		if (!(g = gpu_by(gpus, 0, f[0], 0)))
			continue;
		for (k = 1; k <= 4; k++)
			if (unread(f[k]))
				mark(g, "remap", f[k]);
		r = pb_obj(g, "remap");
		set_count(r, "corr", f[1]);
		set_count(r, "unc", f[2]);
		if ((pend = flag(f[3])) >= 0)
			pb_set_bool(r, "pending", pend);
		if ((fail = flag(f[4])) >= 0)
			pb_set_bool(r, "failure", fail);
		if (!cJSON_GetArraySize(r))
			cJSON_DeleteItemFromObjectCaseSensitive(g, "remap");
	}
	if (b && !rows && err && !(b->ended && b->rc == 2)) {
		char e[PB_FIELD];
		cJSON *g;

		pb_copy_trim(err, strlen(err), e);
		cJSON_ArrayForEach(g, gpus)
			mark(g, "remap", e);
	}
}

void pb_parse_pci(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b = pb_find(in, "pci");
	double gpus = 0, efa = 0, nvidia = 0, amazon = 0, nvswitch = 0;
	cJSON *pci;
	size_t i;

	if (!b || !b->ended || b->rc != 0)
		return;
	for (i = 0; i < b->lines.n; i++) {
		char w[4][PB_FIELD];

		if (pb_words(b->lines.v[i], w, 4) < 4)
			continue;
		if (!strcasecmp(w[1], "0x10de")) {
			nvidia++;
			/* Class 0x0300xx VGA, 0x0302xx 3D controller. */
			if (!strncasecmp(w[3], "0x0302", 6) || !strncasecmp(w[3], "0x0300", 6))
				gpus++;
			/* NVSwitches show as NVIDIA bridges (class 0x0680xx) on HGX boards. */
			else if (!strncasecmp(w[3], "0x0680", 6))
				nvswitch++;
		} else if (!strcasecmp(w[1], "0x1d0f")) {
			amazon++;
			if (!strncasecmp(w[2], "0xefa", 5))
				efa++;
		}
	}
	pci = pb_obj(facts, "pci");
	pb_set_num(pci, "nvidia_gpus", gpus);
	pb_set_num(pci, "nvidia_devices", nvidia);
	pb_set_num(pci, "nvswitches", nvswitch);
	pb_set_num(pci, "efa", efa);
	pb_set_num(pci, "amazon_devices", amazon);
}

/* "16.0 GT/s PCIe" -> 16.0, a width "16" -> 16; -1 when the kernel could not tell. */
static double link_value(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	return end != s && v > 0 ? v : -1;
}

/*
 * PCIe links of GPUs and EFA devices (block pci_link, fields split on '|'):
 * current and maximum speed (GT/s) and width, -1 where unknown.
 */
void pb_parse_pci_link(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b = pb_find(in, "pci_link");
	cJSON *links;
	size_t i;

	if (!b || !b->ended || b->rc != 0)
		return;
	links = cJSON_AddArrayToObject(facts, "pci_links");
	for (i = 0; i < b->lines.n && i < 256; i++) {
		char f[8][PB_FIELD];
		cJSON *l;

		if (pb_split(b->lines.v[i], '|', f, 8) != 8)
			continue;
		l = cJSON_CreateObject();
		pb_set_str(l, "pci", f[0]);
		pb_set_str(l, "kind", !strcasecmp(f[1], "0x1d0f") ? "EFA device" : "GPU");
		pb_set_num(l, "cur_speed", link_value(f[4]));
		pb_set_num(l, "max_speed", link_value(f[5]));
		pb_set_num(l, "cur_width", link_value(f[6]));
		pb_set_num(l, "max_width", link_value(f[7]));
		cJSON_AddItemToArray(links, l);
	}
}

static void dcgm_incident(cJSON *list, const char *entity, const char *system, const cJSON *s)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, "value");
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(s, "overflow"), *x;
	struct hp_buf msg = HP_BUF_INIT(2048);
	cJSON *inc;

	cJSON_ArrayForEach(x, o) {
		if (!cJSON_IsString(x))
			continue;
		if (msg.len && hp_buf_addc(&msg, ' '))
			break;
		if (hp_buf_adds(&msg, x->valuestring))
			break;
	}
	inc = cJSON_CreateObject();
	pb_set_str(inc, "entity", entity);
	pb_set_str(inc, "system", system);
	if (cJSON_IsString(v))
		pb_set_str(inc, "health", v->valuestring);
	if (msg.len)
		pb_set_str(inc, "message", msg.buf);
	hp_buf_release(&msg);
	cJSON_AddItemToArray(list, inc);
}

/*
 * dcgmi's JSON: body["Overall Health"].value, and per entity group
 * body[<group>].children[<id>].children.Errors.children[<system>] with
 * value and overflow (the message lines).
 */
static int dcgm_json(const char *text, cJSON *d)
{
	cJSON *doc = hp_json_parse(text, strlen(text), NULL), *grp, *ent, *sys, *list;
	const cJSON *body, *v;
	int ok = 0;

	if (!doc)
		return 0;
	body = cJSON_GetObjectItemCaseSensitive(doc, "body");
	v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "Overall Health"),
					     "value");
	if (cJSON_IsString(v)) {
		pb_set_str(d, "health", v->valuestring);
		ok = 1;
	}
	list = cJSON_AddArrayToObject(d, "incidents");
	cJSON_ArrayForEach(grp, body) {
		if (!grp->string || !strcmp(grp->string, "Overall Health"))
			continue;
		cJSON_ArrayForEach(ent, cJSON_GetObjectItemCaseSensitive(grp, "children")) {
			char entity[PB_FIELD];
			const cJSON *errs = cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(
					cJSON_GetObjectItemCaseSensitive(ent, "children"), "Errors"),
				"children");

			snprintf(entity, sizeof(entity), "%.60s %.60s", grp->string,
				 ent->string ? ent->string : "?");
			cJSON_ArrayForEach(sys, errs) {
				if (cJSON_GetArraySize(list) < 64)
					dcgm_incident(list, entity, sys->string ? sys->string : "?", sys);
			}
		}
	}
	cJSON_Delete(doc);
	return ok;
}

/* Older text forms: "| Overall Health | Warning |", HEALTH_RESULT_*, "overall_health". */
static int dcgm_text(const struct pb_block *b, cJSON *d)
{
	size_t i;

	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i];

		if (strstr(l, "HEALTH_RESULT_FAIL") ||
		    (strstr(l, "overall_health") && strstr(l, "Fail"))) {
			pb_set_str(d, "health", "Failure");
			return 1;
		}
		if (strstr(l, "HEALTH_RESULT_WARN") ||
		    (strstr(l, "overall_health") && strstr(l, "Warn"))) {
			pb_set_str(d, "health", "Warning");
			return 1;
		}
		if (strstr(l, "Overall Health")) {
			char f[4][PB_FIELD];

			if (pb_split(l, '|', f, 4) >= 3 && *f[2]) {
				pb_set_str(d, "health", f[2]);
				return 1;
			}
		}
	}
	return 0;
}

void pb_parse_dcgm(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b;
	struct hp_buf text = HP_BUF_INIT(HP_PROBE_MAX_STDOUT);
	cJSON *d;
	size_t i;
	int ok;

	b = pb_start(in, "dcgm", facts, "dcgm", &d);
	if (!b || pb_not_installed(b))
		return;
	for (i = 0; i < b->lines.n; i++)
		if (hp_buf_adds(&text, b->lines.v[i]) || hp_buf_addc(&text, '\n'))
			break;
	ok = (strchr(text.buf, '{') && dcgm_json(strchr(text.buf, '{'), d)) || dcgm_text(b, d);
	hp_buf_release(&text);
	if (!ok)
		pb_set_error(d, "error", b);
}

void pb_parse_neuron(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b;
	double devices = 0, cores = 0;
	cJSON *n;
	size_t i;

	b = pb_start(in, "neuron", facts, "neuron", &n);
	if (!b || pb_not_installed(b))
		return;
	for (i = 0; i < b->lines.n; i++) {
		char f[4][PB_FIELD];
		double dev, c;

		/* "| 0      | 8      | ..." : a device row starts with its number. */
		if (b->lines.v[i][0] != '|' || pb_split(b->lines.v[i] + 1, '|', f, 4) < 2)
			continue;
		if (!pb_count(f[0], &dev))
			continue;
		devices++;
		if (pb_count(f[1], &c))
			cores += c;
	}
	if ((b->ended && b->rc == 0) || devices) {
		pb_set_num(n, "devices", devices);
		pb_set_num(n, "cores", cores);
	}
	if (!devices) {
		const char *line = pb_first_line(b);
		char e[PB_FIELD];

		if (line) {
			pb_copy_trim(line, strlen(line), e);
			pb_set_str(n, "error", e);
		}
	}
}
