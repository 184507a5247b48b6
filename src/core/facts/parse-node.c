/*
 * The probe's newer blocks: NVLink link states and error counters
 * (nvidia-smi nvlink -s / -e, merged into the GPUs by index), the tail of
 * the newest DCGM nvvs log, network interface counters from sysfs, the
 * error lines of the lifecycle-script log and IMDS reachability. Each
 * parser keeps what the text says; the checks judge it.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hp/json.h"
#include "hp/util.h"
#include "probe-int.h"

/* Evidence lines kept per block. */
#define MAX_LINES_KEPT 10

/* "GPU 3: NVIDIA H100 80GB HBM3 (UUID: GPU-...)" -> 3; -1 for any other line. */
static double gpu_header(const char *line)
{
	char w[2][PB_FIELD];
	double idx;
	size_t n;

	if (strncmp(line, "GPU ", 4) || pb_words(line, w, 2) < 2)
		return -1;
	n = strlen(w[1]);
	if (!n || w[1][n - 1] != ':')
		return -1;
	w[1][n - 1] = '\0';
	return pb_count(w[1], &idx) ? idx : -1;
}

/* The GPU entry with this index, or NULL (only the GPU list makes entries). */
static cJSON *gpu_at(cJSON *facts, double idx)
{
	cJSON *g;

	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(facts, "nvidia"), "gpus"))
		if (hp_json_num(g, "index", -2) == idx)
			return g;
	return NULL;
}

/* "Link 3: <inactive>" / "Link 0: 26.562 GB/s" -> link number and the text after it. */
static int link_line(const char *line, double *link, const char **rest)
{
	const char *p = line, *colon;
	char num[PB_FIELD];

	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "Link ", 5) || !(colon = strchr(p, ':')))
		return 0;
	pb_copy_trim(p + 5, (size_t)(colon - p - 5), num);
	if (!pb_count(num, link))
		return 0;
	for (colon++; *colon == ' '; colon++)
		;
	*rest = colon;
	return 1;
}

static void parse_nvlink_status(const struct pb_block *b, cJSON *facts, cJSON *nv)
{
	cJSON *g = NULL;
	size_t i, gpus = 0;

	for (i = 0; i < b->lines.n; i++) {
		const char *rest;
		double idx = gpu_header(b->lines.v[i]), link;
		cJSON *l, *inactive;

		if (idx >= 0) {
			g = gpu_at(facts, idx);
			gpus++;
			continue;
		}
		if (!g || !link_line(b->lines.v[i], &link, &rest))
			continue;
		l = pb_obj(g, "nvlink");
		pb_set_num(l, "links", hp_json_num(l, "links", 0) + 1);
		if (strstr(rest, "inactive")) {
			inactive = cJSON_GetObjectItemCaseSensitive(l, "inactive");
			if (!inactive)
				inactive = cJSON_AddArrayToObject(l, "inactive");
			if (cJSON_GetArraySize(inactive) < 64)
				cJSON_AddItemToArray(inactive, cJSON_CreateNumber(link));
		}
	}
	if (!gpus)
		pb_set_error(nv, "nvlink_error", b);
}

/* "Link 0: Replay Errors: 0", "Link 0: CRC Flit Errors: 5": counters summed per GPU. */
static void parse_nvlink_errors(const struct pb_block *b, cJSON *facts)
{
	cJSON *g = NULL;
	size_t i;

	for (i = 0; i < b->lines.n; i++) {
		const char *rest, *colon;
		double idx = gpu_header(b->lines.v[i]), link, v;
		char name[PB_FIELD], num[PB_FIELD];
		cJSON *errs;

		if (idx >= 0) {
			g = gpu_at(facts, idx);
			continue;
		}
		if (!g || !link_line(b->lines.v[i], &link, &rest) || !(colon = strrchr(rest, ':')))
			continue;
		pb_copy_trim(rest, (size_t)(colon - rest), name);
		pb_copy_trim(colon + 1, strlen(colon + 1), num);
		/* "Replay Errors" -> "Replay"; counters that cannot be read are skipped. */
		if (strlen(name) > 7 && !strcmp(name + strlen(name) - 7, " Errors"))
			name[strlen(name) - 7] = '\0';
		if (!*name || !pb_count(num, &v))
			continue;
		errs = pb_obj(pb_obj(g, "nvlink"), "errors");
		pb_set_num(errs, name, hp_json_num(errs, name, 0) + v);
	}
}

void pb_parse_nvlink(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *s = pb_find(in, "nvlink_status"), *e = pb_find(in, "nvlink_errors");
	cJSON *nv = cJSON_GetObjectItemCaseSensitive(facts, "nvidia");

	if (!nv || (!s && !e))
		return;
	if (s) {
		pb_set_num(nv, "nvlink_rc", s->ended ? s->rc : -1);
		parse_nvlink_status(s, facts, nv);
	}
	if (e)
		parse_nvlink_errors(e, facts);
}

/*
 * nvvs log lines that signal a failed diagnostic: an ERROR-level line
 * ("2026-01-16 09:50:02.437 ERROR [pid:tid] ..."), FAIL as a word, "Error:",
 * or a row-remap message about pending or failed remaps.
 */
static int nvvs_signal(const char *line)
{
	char w[4][PB_FIELD];
	const char *p;

	if (pb_words(line, w, 3) == 3 && !strcmp(w[2], "ERROR"))
		return 1;
	for (p = strstr(line, "FAIL"); p; p = strstr(p + 1, "FAIL")) {
		char after = p[4];

		if ((p == line || p[-1] == ' ' || p[-1] == ':' || p[-1] == '[') &&
		    (after == '\0' || after == ' ' || after == ':' || after == ']' || after == 'E' ||
		     after == '.'))
			return 1;
	}
	if (strstr(line, "Error:"))
		return 1;
	for (p = line; *p; p++) {
		if (!strncasecmp(p, "row remap", 9) || !strncasecmp(p, "rowremap", 8)) {
			const char *q;

			for (q = p; *q; q++)
				if (!strncasecmp(q, "pending", 7) || !strncasecmp(q, "fail", 4))
					return 1;
			break;
		}
	}
	return 0;
}

void pb_parse_nvvs(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b;
	cJSON *d, *sig = NULL;
	size_t i, n = 0, lines = 0;

	b = pb_start(in, "nvvs", facts, "nvvs", &d);
	if (!b)
		return;
	if (!b->ended || b->rc != 0) {
		pb_set_bool(d, "found", 0);
		return;
	}
	for (i = 0; i < b->lines.n; i++) {
		char text[PB_FIELD];

		if (!strncmp(b->lines.v[i], "file=", 5) && i == 0) {
			pb_copy_trim(b->lines.v[i] + 5, strlen(b->lines.v[i] + 5), text);
			pb_set_str(d, "file", text);
			continue;
		}
		lines++;
		if (!nvvs_signal(b->lines.v[i]))
			continue;
		n++;
		if (!sig)
			sig = cJSON_AddArrayToObject(d, "signals");
		if (cJSON_GetArraySize(sig) < MAX_LINES_KEPT) {
			pb_copy_trim(b->lines.v[i], strlen(b->lines.v[i]), text);
			cJSON_AddItemToArray(sig, cJSON_CreateString(text));
		}
	}
	pb_set_bool(d, "found", 1);
	pb_set_num(d, "lines", (double)lines);
	pb_set_num(d, "signal_count", (double)n);
}

void pb_parse_netdev(const struct pb_input *in, cJSON *facts)
{
	static const char *const keys[] = { "rx_packets", "tx_packets", "rx_errors",
					     "tx_errors", "rx_dropped", "tx_dropped" };
	const struct pb_block *b;
	cJSON *d, *list;
	size_t i, k;

	b = pb_start(in, "netdev", facts, "netdev", &d);
	if (!b || !b->ended || b->rc != 0)
		return;
	list = cJSON_AddArrayToObject(d, "interfaces");
	for (i = 0; i < b->lines.n && cJSON_GetArraySize(list) < 256; i++) {
		char w[7][PB_FIELD];
		cJSON *itf;

		if (pb_words(b->lines.v[i], w, 7) != 7)
			continue;
		itf = cJSON_CreateObject();
		pb_set_str(itf, "name", w[0]);
		for (k = 0; k < HP_ARRAY_LEN(keys); k++) {
			double v;

			if (pb_count(w[k + 1], &v))
				pb_set_num(itf, keys[k], v);
		}
		cJSON_AddItemToArray(list, itf);
	}
}

/* A lifecycle log line that reports a failure, not one that merely names the word. */
static int provision_error(const char *s)
{
	static const char *const hits[] = {
		"Traceback (most recent call last)", "command not found", "ERROR", "Error:",
		"error:", "FAILED", "Failed", "failed", "timed out", "AccessDenied",
		"Access Denied", "Permission denied", "No such file or directory",
	};
	static const char *const benign[] = {
		"failed=0", "failed: 0", "errors=0", "errors: 0", "0 errors", "0 failed",
		"no errors", "No errors", "ignore",
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(benign); i++)
		if (strstr(s, benign[i]))
			return 0;
	for (i = 0; i < HP_ARRAY_LEN(hits); i++)
		if (strstr(s, hits[i]))
			return 1;
	return 0;
}

void pb_parse_provision(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b;
	cJSON *d, *errs = NULL;
	size_t i, n = 0;

	b = pb_start(in, "provision", facts, "provision", &d);
	if (!b)
		return;
	if (!b->ended || b->rc != 0) {
		pb_set_bool(d, "found", 0);
		return;
	}
	pb_set_bool(d, "found", 1);
	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i], *colon;
		char text[PB_FIELD];
		double v;

		if (!strncmp(l, "lines=", 6)) {
			pb_copy_trim(l + 6, strlen(l + 6), text);
			if (pb_count(text, &v))
				pb_set_num(d, "lines", v);
			continue;
		}
		/* grep -n: "<line number>:<text>". */
		colon = strchr(l, ':');
		if (!colon || !provision_error(colon + 1))
			continue;
		n++;
		if (!errs)
			errs = cJSON_AddArrayToObject(d, "errors");
		if (cJSON_GetArraySize(errs) < MAX_LINES_KEPT) {
			pb_copy_trim(l, strlen(l), text);
			cJSON_AddItemToArray(errs, cJSON_CreateString(text));
		}
	}
	pb_set_num(d, "error_count", (double)n);
}

void pb_parse_imds(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b;
	cJSON *d;
	size_t i;

	b = pb_start(in, "imds", facts, "imds", &d);
	if (!b || pb_not_installed(b))
		return;
	for (i = 0; i < b->lines.n; i++) {
		const char *l = b->lines.v[i];
		char v[PB_FIELD];
		double n;

		if (!strncmp(l, "token=", 6)) {
			pb_set_bool(d, "token", !strcmp(l + 6, "ok"));
		} else if (!strncmp(l, "curl=", 5)) {
			pb_copy_trim(l + 5, strlen(l + 5), v);
			if (pb_count(v, &n))
				pb_set_num(d, "curl", n);
		} else if (!strncmp(l, "instance_type=", 14)) {
			pb_copy_trim(l + 14, strlen(l + 14), v);
			/* An instance type is short and plain; anything else is not one. */
			if (*v && strlen(v) < 40 && strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789.-") == strlen(v))
				pb_set_str(d, "instance_type", v);
		}
	}
}

/*
 * The journal of nvidia-fabricmanager this boot (journalctl -o cat): its
 * last lines, kept as the service's own words for the finding.
 */
void pb_parse_fabricmanager(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b;
	cJSON *d, *lines;
	size_t i;

	b = pb_start(in, "fabricmanager", facts, "fabricmanager", &d);
	if (!b || !b->ended || b->rc != 0)
		return;
	lines = cJSON_AddArrayToObject(d, "lines");
	for (i = b->lines.n > MAX_LINES_KEPT ? b->lines.n - MAX_LINES_KEPT : 0; i < b->lines.n; i++) {
		char text[PB_FIELD];

		pb_copy_trim(b->lines.v[i], strlen(b->lines.v[i]), text);
		if (*text)
			cJSON_AddItemToArray(lines, cJSON_CreateString(text));
	}
}
