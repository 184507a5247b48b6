/*
 * What the logs say (report groups "Job Pod Logs" and "CloudWatch Training
 * Logs"): the NCCL error patterns (include/hp/nccl-facts.h, guide § NC23) found
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
#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"
#include "fold.h"
#include "nccl-check.h"

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
	char note[800];           /* what it explains, or what explains it */
	int expected;             /* sockets on an instance type without EFA */
};

/* The last EVIDENCE_LINES lines of the merged hits' evidence, each as "> line". */
static void add_evidence(struct hp_nccl_check_pod_item *it, const struct pod_hit *h)
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
		hp_nccl_check_pods_evidence(it, line);
	}
}

/* The table row a hit came from (its pattern text), else its code's first row. */
static const struct hp_nccl_pattern *row_of(const cJSON *h)
{
	const char *text = hp_json_str(h, "pattern"), *code = hp_json_str(h, "code");
	size_t i;

	for (i = 0; text && code && i < hp_nccl_npatterns; i++)
		if (!strcmp(hp_nccl_patterns[i].text, text) && !strcmp(hp_nccl_patterns[i].code, code))
			return &hp_nccl_patterns[i];
	return hp_nccl_pattern_by_code(code);
}

/* A hit of a cause: neither a wrapper, a symptom nor a catch-all. */
static int is_cause(const cJSON *h)
{
	const struct hp_nccl_pattern *p = row_of(h);

	return p && !(p->flags & (HP_NCCL_WRAPPER | HP_NCCL_SYMPTOM | HP_NCCL_FALLBACK));
}

static int is_symptom(const cJSON *h)
{
	const struct hp_nccl_pattern *p = row_of(h);

	return p && (p->flags & HP_NCCL_SYMPTOM);
}

/* A wrapper's hit that took its cause from another line: it is reported with that cause. */
static int absorbed(const cJSON *h)
{
	return hp_json_str(h, "cause") != NULL;
}

static int same_pod(const cJSON *h, const char *ns, const char *pod)
{
	char a[256], b[256], c[256];
	int prev;

	return split_source(hp_check_str(h, "source", ""), a, b, c, &prev, sizeof(a)) &&
	       !strcmp(a, ns) && !strcmp(b, pod);
}

/* The first cause code in the pod's hits (in scan order), or NULL. */
static const char *pod_cause(const cJSON *hits, const char *ns, const char *pod)
{
	const cJSON *h;

	cJSON_ArrayForEach(h, hits)
		if (is_cause(h) && same_pod(h, ns, pod))
			return hp_json_str(h, "code");
	return NULL;
}

/*
 * What `code` explains in the pod: the wrappers that took their cause from
 * it and, when it is a cause and the pod's first, its symptoms, as
 * "; it explains A, B" in note; the best priority among them in *prio.
 */
static void cause_note(const cJSON *hits, const char *ns, const char *pod, const char *code,
		       int cause, char *note, size_t n, enum hp_prio *prio)
{
	const char *first = pod_cause(hits, ns, pod), *seen[16];
	size_t nseen = 0, len = 0, i;
	const cJSON *h;

	note[0] = '\0';
	cJSON_ArrayForEach(h, hits) {
		const char *c = hp_json_str(h, "code"), *why = hp_json_str(h, "cause");
		int wrap = why && !strcmp(why, code);

		if (!c || !same_pod(h, ns, pod) || !strcmp(c, code))
			continue;
		if (!wrap && !(cause && is_symptom(h) && first && !strcmp(first, code)))
			continue;
		for (i = 0; i < nseen && strcmp(seen[i], c); i++)
			;
		if (i < nseen || nseen == HP_ARRAY_LEN(seen))
			continue;
		seen[nseen++] = c;
		if (prio_of(hp_json_str(h, "priority")) < *prio && !wrap)
			*prio = prio_of(hp_json_str(h, "priority"));
		if (wrap)
			len += (size_t)snprintf(note + len, len < n ? n - len : 0, "%s%s ('%s')",
						len ? ", " : "; it explains ", c,
						hp_check_str(h, "pattern", "?"));
		else
			len += (size_t)snprintf(note + len, len < n ? n - len : 0, "%s%s",
						len ? ", " : "; it explains ", c);
	}
}

/* The instance type of the pod's node (the cluster's node list), or NULL. */
static const char *type_of_iid(const struct hp_snapshot *snap, const char *iid)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, hp_json_arr(snap->root, "nodes")) {
		const char *x = hp_json_str(n, "InstanceId");

		if (iid && x && !strcmp(x, iid))
			return hp_json_str(n, "InstanceType");
	}
	return NULL;
}

/* Whether the NCCL probe found the node without the aws-ofi-nccl plugin (1), with it (0), unknown (-1). */
static int ofi_missing(const struct hp_snapshot *snap, const char *iid)
{
	struct hp_probe_iter it;
	const cJSON *o;
	cJSON *facts;
	int r = -1;

	if (!iid)
		return -1;
	if (!hp_probes_find(snap, "nccl_probes", iid, &it)) {
		hp_probes_end(&it);
		return -1;
	}
	facts = hp_probes_facts(&it);
	o = hp_json_get(facts, "ofi_plugin");
	if (cJSON_IsBool(cJSON_GetObjectItem(o, "found")))
		r = !cJSON_IsTrue(cJSON_GetObjectItem(o, "found"));
	cJSON_Delete(facts);
	/* The store's entry the iterator unpacked is its own: given back here. */
	hp_probes_end(&it);
	return r;
}

/* The pod-log hits of one code, one result per pod. */
static void emit_code(const struct hp_snapshot *snap, struct hp_emit *em, const cJSON *nccl,
		      const char *code, const cJSON *hits)
{
	struct pod_hit *v = NULL;
	size_t n = 0, alloc = 0, i, first = em->out->n, nexp = 0;
	const cJSON *h;
	enum hp_prio prio = HP_P2;
	const char *section = NULL;
	struct hp_nccl_check_pods pods, expected;
	int cause = 0;

	cJSON_ArrayForEach(h, hits) {
		char ns[256], pod[256], container[256];
		int previous;

		if (strcmp(hp_check_str(h, "code", ""), code) || absorbed(h) ||
		    !split_source(hp_check_str(h, "source", ""), ns, pod, container, &previous,
				  sizeof(ns)))
			continue;
		cause |= is_cause(h);
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
		if (!section)
			section = hp_json_str(h, "section");
	}
	if (!n) {
		free(v);
		return;
	}
	/* The lines of the wrappers that took their cause from this code go with it. */
	cJSON_ArrayForEach(h, hits) {
		const char *why = hp_json_str(h, "cause");

		if (!why || strcmp(why, code))
			continue;
		for (i = 0; i < n; i++)
			if (same_pod(h, v[i].ns, v[i].pod) && v[i].nhits < HP_ARRAY_LEN(v[i].hits))
				v[i].hits[v[i].nhits++] = h;
	}
	for (i = 0; i < n; i++) {
		const cJSON *pod = find_pod(nccl, v[i].ns, v[i].pod);
		const char *iid = pod ? hp_nccl_check_node_iid(snap, hp_json_str(pod, "node")) : NULL;
		const char *by = pod_cause(hits, v[i].ns, v[i].pod);
		size_t len;

		cause_note(hits, v[i].ns, v[i].pod, code, cause, v[i].note, sizeof(v[i].note),
			   &v[i].prio);
		len = strlen(v[i].note);
		if (!cause && by && is_symptom(v[i].hits[0]))
			snprintf(v[i].note + len, sizeof(v[i].note) - len, " (explained by %s in the same "
				 "pod)", by);
		len = strlen(v[i].note);
		/* Sockets where the node has no plugin: the node check names the cause too. */
		if ((!strcmp(code, "EFA_TCP_FALLBACK") || !strcmp(code, "OFI_LOAD_FAIL")) &&
		    ofi_missing(snap, iid) == 1)
			snprintf(v[i].note + len, sizeof(v[i].note) - len, "; node %s has no aws-ofi-nccl "
				 "plugin (nccl.ofi-plugin)", iid);
		/* A GPU's memory failed: what the node's own GPU checks say goes with it. */
		if (!strcmp(code, "GPU_ECC"))
			hp_nccl_check_gpu_ecc_note(snap, iid, v[i].note + len, sizeof(v[i].note) - len);
		/* Sockets are NCCL's transport on instance types without EFA (§ NC13). */
		if (!strcmp(code, "EFA_TCP_FALLBACK") && iid &&
		    hp_nccl_type_efa(snap, type_of_iid(snap, iid)) == 0) {
			v[i].expected = 1;
			nexp++;
			continue;
		}
		if (v[i].prio < prio)
			prio = v[i].prio;
	}
	pods = (struct hp_nccl_check_pods)HP_NCCL_CHECK_PODS_INIT(prio == HP_P2 ? HP_TAG_WARN : HP_TAG_FAIL, prio,
						    section ? section : "NC23");
	expected = (struct hp_nccl_check_pods)HP_NCCL_CHECK_PODS_INIT(HP_TAG_INFO, HP_PNONE,
							section ? section : "NC23");
	for (i = 0; i < n; i++) {
		const cJSON *pod = find_pod(nccl, v[i].ns, v[i].pod);
		cJSON *stand_in = NULL;
		struct hp_nccl_check_pod_item *it;

		if (!pod) {
			stand_in = cJSON_CreateObject();
			cJSON_AddStringToObject(stand_in, "namespace", v[i].ns);
			cJSON_AddStringToObject(stand_in, "name", v[i].pod);
			pod = stand_in;
		}
		if (v[i].expected)
			it = hp_nccl_check_pods_add(&expected, snap, pod, v[i].container, "%s in %s/%s (%s): NCCL "
					     "uses its socket transport on %s, which has no EFA: expected "
					     "there (%.0f line%s)", code, v[i].ns, v[i].pod, v[i].container,
					     type_of_iid(snap, hp_nccl_check_node_iid(snap, hp_json_str(pod, "node"))),
					     v[i].count, v[i].count == 1 ? "" : "s");
		else
			it = hp_nccl_check_pods_add(&pods, snap, pod, v[i].container, "%s in %s/%s (%s%s): %s (%.0f "
					     "line%s)%s", code, v[i].ns, v[i].pod, v[i].container,
					     v[i].previous && !v[i].current ? ", previous log" :
					     v[i].previous ? ", current and previous log" : "",
					     meaning_of(code), v[i].count, v[i].count == 1 ? "" : "s",
					     v[i].note);
		add_evidence(it, &v[i]);
		cJSON_Delete(stand_in);
	}
	if (hp_nccl_check_pods_count(&pods))
		hp_nccl_check_pods_emit(em, &pods, "%s in %zu pods: %s", code, n - nexp, meaning_of(code));
	else
		hp_nccl_check_pods_emit(em, &pods, "%s", code);
	/* A cause that explains something is listed before what it explains. */
	for (i = first; cause && i < em->out->n; i++)
		if (strstr(em->out->v[i].message, "; it explains "))
			em->out->v[i].cause = 1;
	if (nexp)
		hp_nccl_check_pods_emit(em, &expected, "%s in %zu pods: NCCL uses its socket transport on "
				 "instance types without EFA: expected there", code, nexp);
	else
		hp_nccl_check_pods_emit(em, &expected, "%s", code);
	/* The pattern is the class of problem: two patterns on one node are two keys. */
	for (i = first; i < em->out->n; i++)
		hp_finding_class(&em->out->v[i], code);
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
	const cJSON *nccl = hp_nccl_check_kube(snap, NULL), *scan, *h, *r;
	const char *codes[64];
	size_t ncodes = 0, i, failed = 0, read = 0;
	struct hp_buf errs = HP_BUF_INIT(HP_MAX_LINE);
	const char *first_status = NULL;

	if (!nccl || !(scan = hp_json_get(nccl, "log_scan")))
		return;
	cJSON_ArrayForEach(r, hp_json_arr(nccl, "log_reads")) {
		const char *st = hp_check_str(r, "status", "?");

		/*
		 * A previous container that is gone, or never was (the API server's
		 * BadRequest "previous terminated container ... not found" for a pod
		 * that failed without a restart), is no failure to read.
		 */
		if (!strcmp(st, "ok") || (cJSON_IsTrue(cJSON_GetObjectItem(r, "previous")) &&
					  (!strcmp(st, "not_found") ||
					   strstr(hp_check_str(r, "error", ""),
						  "previous terminated container")))) {
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
	/* Causes first, then what they explain (stable within each). */
	{
		const char *sorted[64];
		size_t k = 0, pass;

		for (pass = 0; pass < 2; pass++)
			for (i = 0; i < ncodes; i++) {
				int c = 0;

				cJSON_ArrayForEach(h, hp_json_arr(scan, "hits"))
					if (!strcmp(hp_check_str(h, "code", ""), codes[i]) && is_cause(h))
						c = 1;
				if (c == !pass)
					sorted[k++] = codes[i];
			}
		for (i = 0; i < k; i++)
			emit_code(snap, em, nccl, sorted[i], hp_json_get(scan, "hits"));
	}
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
	const cJSON *nccl = hp_nccl_check_data(snap), *cw, *scan, *h;
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
		char node[32], note[600] = "";
		const char *iid = stream_node(stream, node, sizeof(node));
		struct hp_finding *f;

		nhits++;
		/* A wrapper that took its cause from another line is told with that line's hit. */
		if (absorbed(h))
			continue;
		hp_nccl_check_hit_note(snap, scan, code, stream, iid, note, sizeof(note));
		/* Sockets on an instance type without EFA are NCCL's transport there (§ NC13). */
		if (!strcmp(code, "EFA_TCP_FALLBACK") && iid &&
		    hp_nccl_type_efa(snap, type_of_iid(snap, iid)) == 0) {
			hp_emitx(em, HP_TAG_INFO, HP_PNONE, hp_check_str(h, "section", "NC23"), iid,
				 "%s in CloudWatch stream %s: NCCL uses its socket transport on %s, which has "
				 "no EFA: expected there", code, stream, type_of_iid(snap, iid));
			continue;
		}
		f = hp_emitx(em, prio == HP_P2 ? HP_TAG_WARN : HP_TAG_FAIL, prio,
			     hp_check_str(h, "section", "NC23"), iid,
			     "%s in CloudWatch stream %s: %s (%.0f event line%s in the last %s)%s", code,
			     stream, meaning_of(code), hp_json_num(h, "count", 0),
			     hp_json_num(h, "count", 0) == 1 ? "" : "s", win, note);
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
