/*
 * What the logs say (report groups "Job Pod Logs" and "CloudWatch Training
 * Logs"): the NCCL error patterns (include/hp/nccl.h, guide § NC23) found
 * in the job's pod logs and in the cluster's CloudWatch log group. A hit is
 * reported once per pattern code and pod (or log stream), with its count and
 * last lines, at the pattern's own priority and section; patterns that share
 * a code are one cause. The lines that show a job getting through a stage
 * (the success markers) are reported too, as PASS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/json.h"
#include "checks.h"
#include "fold.h"
#include "nccl.h"

#define EVIDENCE_LINES 4

static enum hp_prio prio_of(const char *p)
{
	return p && !strcmp(p, "P0") ? HP_P0 : p && !strcmp(p, "P2") ? HP_P2 : HP_P1;
}

static const char *meaning_of(const char *code)
{
	const struct hp_nccl_pattern *p = hp_nccl_pattern_by_code(code);

	return p ? p->meaning : "an NCCL error pattern";
}

static const char *marker_text(const char *name)
{
	size_t i;

	for (i = 0; name && i < hp_nccl_nmarkers; i++)
		if (!strcmp(hp_nccl_markers[i].name, name))
			return hp_nccl_markers[i].text;
	return name ? name : "?";
}

/* "ns/pod/container (previous)" into its parts; 0 when it is not that shape. */
static int split_source(const char *src, char *ns, char *pod, char *container, int *previous,
			size_t n)
{
	const char *a = strchr(src, '/'), *b = a ? strchr(a + 1, '/') : NULL;
	const char *prev = strstr(src, " (previous)");
	size_t clen;

	if (!a || !b)
		return 0;
	snprintf(ns, n, "%.*s", (int)(a - src), src);
	snprintf(pod, n, "%.*s", (int)(b - a - 1), a + 1);
	clen = prev && prev > b ? (size_t)(prev - b - 1) : strlen(b + 1);
	snprintf(container, n, "%.*s", (int)clen, b + 1);
	*previous = prev != NULL;
	return 1;
}

static const cJSON *find_pod(const cJSON *nccl, const char *ns, const char *name)
{
	const cJSON *p;

	cJSON_ArrayForEach(p, hp_json_arr(nccl, "pods"))
		if (!strcmp(hp_check_str(p, "namespace", ""), ns) &&
		    !strcmp(hp_check_str(p, "name", ""), name))
			return p;
	return NULL;
}

/* One (code, pod) with the hits merged: current and previous log, every container. */
struct pod_hit {
	char ns[256], pod[256], container[256];
	int previous, current;
	double count;
	enum hp_prio prio;
	const cJSON *hits[8];
	size_t nhits;
};

/* The last EVIDENCE_LINES lines of the merged hits' evidence, each as "> line". */
static void add_evidence(struct hp_nck_pod_item *it, const struct pod_hit *h)
{
	const char *lines[8 * 8];
	size_t n = 0, i;

	for (i = 0; i < h->nhits; i++) {
		const cJSON *e;

		cJSON_ArrayForEach(e, hp_json_get(h->hits[i], "evidence"))
			if (cJSON_IsString(e) && n < HP_ARRAY_LEN(lines))
				lines[n++] = e->valuestring;
	}
	for (i = n > EVIDENCE_LINES ? n - EVIDENCE_LINES : 0; i < n; i++) {
		char line[400];

		snprintf(line, sizeof(line), "> %s", lines[i]);
		hp_nck_pods_evidence(it, line);
	}
}

/* The pod-log hits of one code, one result per pod. */
static void emit_code(const struct hp_snapshot *snap, struct hp_emit *em, const cJSON *nccl,
		      const char *code, const cJSON *hits)
{
	struct pod_hit *v = NULL;
	size_t n = 0, alloc = 0, i;
	const cJSON *h;
	enum hp_prio prio = HP_P2;
	const char *section = NULL;
	struct hp_nck_pods pods;

	cJSON_ArrayForEach(h, hits) {
		char ns[256], pod[256], container[256];
		int previous;

		if (strcmp(hp_check_str(h, "code", ""), code) ||
		    !split_source(hp_check_str(h, "source", ""), ns, pod, container, &previous,
				  sizeof(ns)))
			continue;
		for (i = 0; i < n; i++)
			if (!strcmp(v[i].ns, ns) && !strcmp(v[i].pod, pod))
				break;
		if (i == n) {
			v = hp_array_grow(v, &alloc, n, 1, sizeof(*v));
			memset(&v[n], 0, sizeof(v[n]));
			hp_strlcpy(v[n].ns, ns, sizeof(v[n].ns));
			hp_strlcpy(v[n].pod, pod, sizeof(v[n].pod));
			hp_strlcpy(v[n].container, container, sizeof(v[n].container));
			v[n].prio = HP_P2;
			n++;
		}
		v[i].count += hp_json_num(h, "count", 0);
		v[i].previous |= previous;
		v[i].current |= !previous;
		if (prio_of(hp_json_str(h, "priority")) < v[i].prio)
			v[i].prio = prio_of(hp_json_str(h, "priority"));
		if (v[i].nhits < HP_ARRAY_LEN(v[i].hits))
			v[i].hits[v[i].nhits++] = h;
		if (prio_of(hp_json_str(h, "priority")) < prio)
			prio = prio_of(hp_json_str(h, "priority"));
		if (!section)
			section = hp_json_str(h, "section");
	}
	if (!n) {
		free(v);
		return;
	}
	pods = (struct hp_nck_pods)HP_NCK_PODS_INIT(prio == HP_P2 ? HP_TAG_WARN : HP_TAG_FAIL, prio,
						    section ? section : "NC23");
	for (i = 0; i < n; i++) {
		const cJSON *pod = find_pod(nccl, v[i].ns, v[i].pod);
		cJSON *stand_in = NULL;
		struct hp_nck_pod_item *it;

		if (!pod) {
			stand_in = cJSON_CreateObject();
			cJSON_AddStringToObject(stand_in, "namespace", v[i].ns);
			cJSON_AddStringToObject(stand_in, "name", v[i].pod);
			pod = stand_in;
		}
		it = hp_nck_pods_add(&pods, snap, pod, v[i].container, "%s in %s/%s (%s%s): %s (%.0f "
				     "line%s)", code, v[i].ns, v[i].pod, v[i].container,
				     v[i].previous && !v[i].current ? ", previous log" :
				     v[i].previous ? ", current and previous log" : "", meaning_of(code),
				     v[i].count, v[i].count == 1 ? "" : "s");
		add_evidence(it, &v[i]);
		cJSON_Delete(stand_in);
	}
	hp_nck_pods_emit(em, &pods, "%s in %zu pods: %s", code, n, meaning_of(code));
	free(v);
}

/* One PASS per source naming every marker it holds, in the order they came. */
static void emit_markers(struct hp_emit *em, const cJSON *markers, const char *prefix)
{
	const cJSON *m, *k;
	int i = 0;

	cJSON_ArrayForEach(m, markers) {
		const char *src = hp_check_str(m, "source", "?");
		struct hp_buf names = HP_BUF_INIT(HP_MAX_LINE);
		struct hp_finding *f;
		int j = 0, dup = 0;

		/* Only the first entry of a source speaks, for all of its markers. */
		cJSON_ArrayForEach(k, markers) {
			if (j++ >= i)
				break;
			dup |= !strcmp(hp_check_str(k, "source", "?"), src);
		}
		i++;
		if (dup)
			continue;
		cJSON_ArrayForEach(k, markers)
			if (!strcmp(hp_check_str(k, "source", "?"), src))
				hp_buf_printf(&names, "%s%s", names.len ? ", " : "",
					      marker_text(hp_json_str(k, "marker")));
		f = hp_emit(em, HP_TAG_PASS, "%s%s shows the job getting through: %s", prefix, src,
			    names.buf);
		cJSON_ArrayForEach(k, markers) {
			const cJSON *ev = cJSON_GetArrayItem(hp_json_get(k, "evidence"), 0);

			if (!strcmp(hp_check_str(k, "source", "?"), src) && cJSON_IsString(ev))
				hp_finding_evidence(f, ev->valuestring);
		}
		hp_buf_release(&names);
	}
}

static void run_logs(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nck_kube(snap, NULL), *scan, *h, *r;
	const char *codes[64];
	size_t ncodes = 0, i, failed = 0, read = 0;
	struct hp_buf errs = HP_BUF_INIT(HP_MAX_LINE);
	const char *first_status = NULL;

	if (!nccl || !(scan = hp_json_get(nccl, "log_scan")))
		return;
	cJSON_ArrayForEach(r, hp_json_arr(nccl, "log_reads")) {
		const char *st = hp_check_str(r, "status", "?");

		/* A previous container that is gone is no failure to read. */
		if (!strcmp(st, "ok") || (cJSON_IsTrue(cJSON_GetObjectItem(r, "previous")) &&
					  !strcmp(st, "not_found"))) {
			read += !strcmp(st, "ok");
			continue;
		}
		if (!failed++)
			first_status = st;
		if (errs.len < 600)
			hp_buf_printf(&errs, "%s%s/%s/%s%s: %s", errs.len ? "\n" : "",
				      hp_check_str(r, "namespace", "?"), hp_check_str(r, "pod", "?"),
				      hp_check_str(r, "container", "?"),
				      cJSON_IsTrue(cJSON_GetObjectItem(r, "previous")) ? " (previous)" : "",
				      hp_check_str(r, "error", st));
	}
	if (failed) {
		struct hp_finding *f = hp_emitx(em, HP_TAG_WARN, HP_P1, "NC26", NULL, "Cannot read the "
						"logs of %zu container%s (%s); they are not scanned",
						failed, failed == 1 ? "" : "s", first_status);
		char *line = errs.buf;

		while (line && *line) {
			char *nl = strchr(line, '\n');

			if (nl)
				*nl = '\0';
			hp_finding_evidence(f, line);
			line = nl ? nl + 1 : NULL;
		}
	}
	hp_buf_release(&errs);
	/* The codes in the order they were first found. */
	cJSON_ArrayForEach(h, hp_json_arr(scan, "hits")) {
		const char *code = hp_json_str(h, "code");

		if (!code)
			continue;
		for (i = 0; i < ncodes && strcmp(codes[i], code); i++)
			;
		if (i == ncodes && ncodes < HP_ARRAY_LEN(codes))
			codes[ncodes++] = code;
	}
	for (i = 0; i < ncodes; i++)
		emit_code(snap, em, nccl, codes[i], hp_json_get(scan, "hits"));
	emit_markers(em, hp_json_get(scan, "markers"), "");
	if (!ncodes && read)
		hp_emit(em, HP_TAG_PASS, "No NCCL error pattern in the last %.0f lines of %zu container "
			"log%s (%.0f lines)", hp_json_num(scan, "tail", 500), read, read == 1 ? "" : "s",
			hp_json_num(scan, "lines", 0));
}

/* ---- nccl.cloudwatch ---- */

/* "i-0abc…" at the start of a stream name ("i-0abc…/nccl"), into out; NULL when none. */
static const char *stream_node(const char *stream, char *out, size_t n)
{
	size_t k = strcspn(stream, "/");

	if (strncmp(stream, "i-", 2) || k < 10 || k >= n)
		return NULL;
	memcpy(out, stream, k);
	out[k] = '\0';
	return out;
}

static void window_text(double s, char *out, size_t n)
{
	if (s >= 86400 && (long)s % 86400 == 0)
		snprintf(out, n, "%.0f d", s / 86400);
	else if (s >= 3600 && (long)s % 3600 == 0)
		snprintf(out, n, "%.0f h", s / 3600);
	else if (s >= 60 && (long)s % 60 == 0)
		snprintf(out, n, "%.0f min", s / 60);
	else
		snprintf(out, n, "%.0f s", s);
}

static void run_cloudwatch(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nck_data(snap), *cw, *scan, *h;
	const char *group;
	char win[32];
	size_t nhits = 0;

	if (!nccl || !(cw = hp_json_get(nccl, "cloudwatch")))
		return;
	group = hp_check_str(cw, "group", "the cluster's log group");
	window_text(hp_json_num(cw, "window_s", 7200), win, sizeof(win));
	if (hp_json_str(cw, "skipped")) {
		hp_emit(em, HP_TAG_SKIP, "CloudWatch not searched for NCCL errors: %s",
			hp_json_str(cw, "skipped"));
		return;
	}
	if (hp_json_get(cw, "error")) {
		hp_emit(em, HP_TAG_SKIP, "CloudWatch search of %s failed (%s %s): no NCCL pattern is "
			"judged from it", group, hp_check_str(cw, "error.class", "error"),
			hp_check_str(cw, "error.code", ""));
		return;
	}
	scan = hp_json_get(cw, "scan");
	cJSON_ArrayForEach(h, hp_json_arr(scan, "hits")) {
		const char *code = hp_check_str(h, "code", "?"), *stream = hp_check_str(h, "source", "?");
		enum hp_prio prio = prio_of(hp_json_str(h, "priority"));
		const cJSON *e;
		char node[32];
		struct hp_finding *f;

		nhits++;
		f = hp_emitx(em, prio == HP_P2 ? HP_TAG_WARN : HP_TAG_FAIL, prio,
			     hp_check_str(h, "section", "NC23"), stream_node(stream, node, sizeof(node)),
			     "%s in CloudWatch stream %s: %s (%.0f event line%s in the last %s)", code,
			     stream, meaning_of(code), hp_json_num(h, "count", 0),
			     hp_json_num(h, "count", 0) == 1 ? "" : "s", win);
		cJSON_ArrayForEach(e, hp_json_arr(h, "evidence"))
			if (cJSON_IsString(e)) {
				char line[400];

				snprintf(line, sizeof(line), "> %s", e->valuestring);
				hp_finding_evidence(f, line);
			}
	}
	emit_markers(em, hp_json_get(scan, "markers"), "CloudWatch stream ");
	if (!nhits)
		hp_emit(em, HP_TAG_PASS, "No NCCL error pattern in the %.0f matching events of %s over "
			"the last %s", hp_json_num(cw, "events", 0), group, win);
	if (cJSON_IsTrue(cJSON_GetObjectItem(cw, "truncated")))
		hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL, "Only the first %.0f matching events of %s "
			 "were read (%.0f pages); later ones are not judged", hp_json_num(cw, "events", 0),
			 group, hp_json_num(cw, "pages", 0));
}

HP_CHECK(nccl_logs, HP_GROUP_NCCL_LOGS, 10,
	 .id = "nccl.logs", .doc = HP_REFDOC_NCCL, .section = "NC23", .prio = HP_P1, .run = run_logs);
HP_CHECK(nccl_cloudwatch, HP_GROUP_LOGS, 50,
	 .id = "nccl.cloudwatch", .doc = HP_REFDOC_NCCL, .section = "NC27", .prio = HP_P1,
	 .run = run_cloudwatch);
