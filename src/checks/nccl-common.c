/*
 * What the checks of `hpnode nccl` share (src/checks/nccl-check.h): the "nccl"
 * key, whether its Kubernetes part can be judged, the job's pods grouped
 * into jobs, and small helpers over the pods the collector kept.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"
#include "fold.h"
#include "nccl-check.h"

#define L_KUBEFLOW "training.kubeflow.org/job-name"
#define L_JOB "job-name"

const cJSON *hp_nccl_check_data(const struct hp_snapshot *snap)
{
	const cJSON *n = hp_snapshot_get(snap, "nccl");

	return cJSON_IsObject(n) ? n : NULL;
}

const cJSON *hp_nccl_check_kube(const struct hp_snapshot *snap, const char **why)
{
	const cJSON *n = hp_nccl_check_data(snap), *sk;

	if (why)
		*why = NULL;
	if (!n)
		return NULL;
	sk = hp_json_get(n, "kube_skipped");
	if (sk) {
		if (why)
			*why = hp_check_str(sk, "message", "kubectl was not used");
		return NULL;
	}
	return n;
}

int hp_nccl_check_read_failed(const cJSON *nccl, struct hp_emit *em, const char *what, const char *title,
		       const char *unchecked)
{
	const cJSON *err = hp_json_get(hp_json_get(nccl, "errors"), what);

	if (!err)
		return 0;
	hp_emit(em, HP_TAG_WARN, "Cannot list %s (%s): %s; %s", title,
		hp_check_str(err, "status", "error"), hp_check_str(err, "message", "no message"),
		unchecked);
	return 1;
}

const char *hp_nccl_check_label(const cJSON *pod, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(hp_json_get(pod, "labels"), key);

	return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

const char *hp_nccl_check_replica(const cJSON *pod)
{
	return hp_nccl_check_label(pod, "training.kubeflow.org/replica-type");
}

const char *hp_nccl_check_pod_name(const cJSON *pod, char *out, size_t n)
{
	snprintf(out, n, "%s/%s", hp_check_str(pod, "namespace", "?"), hp_check_str(pod, "name", "?"));
	return out;
}

const char *hp_nccl_check_job_name(const struct hp_nccl_check_job *j, char *out, size_t n)
{
	snprintf(out, n, "%s/%s", j->ns, j->name);
	return out;
}

static double quantity(const cJSON *map, const char *key)
{
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(map, key);

	if (cJSON_IsString(q))
		return atof(q->valuestring);
	return cJSON_IsNumber(q) ? q->valuedouble : 0;
}

static double resource(const cJSON *c, const char *key)
{
	double lim = quantity(hp_json_get(c, "limits"), key);

	return lim > 0 ? lim : quantity(hp_json_get(c, "requests"), key);
}

int hp_nccl_check_wants_gpu(const cJSON *c)
{
	return resource(c, "nvidia.com/gpu") > 0;
}

int hp_nccl_check_wants_efa(const cJSON *c)
{
	return resource(c, "vpc.amazonaws.com/efa") > 0;
}

const cJSON *hp_nccl_check_main_container(const cJSON *pod)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, hp_json_arr(pod, "spec.containers"))
		if (hp_nccl_check_wants_gpu(c) || hp_nccl_check_wants_efa(c))
			return c;
	return cJSON_GetArrayItem(hp_json_arr(pod, "spec.containers"), 0);
}

int hp_nccl_check_pod_gpus(const cJSON *pod)
{
	const cJSON *c;
	double n = 0;

	cJSON_ArrayForEach(c, hp_json_arr(pod, "spec.containers"))
		n += resource(c, "nvidia.com/gpu");
	return n > 0 && n < 1e6 ? (int)n : 0;
}

void hp_nccl_check_pod_vars(struct hp_finding *f, const cJSON *pod, const char *container,
		     const char *job)
{
	const char *ns = hp_json_str(pod, "namespace"), *name = hp_json_str(pod, "name");

	if (!f)
		return;
	if (ns)
		hp_finding_var(f, "NAMESPACE", ns);
	if (name)
		hp_finding_var(f, "POD", name);
	if (container)
		hp_finding_var(f, "CONTAINER", container);
	if (!job)
		job = hp_nccl_check_label(pod, L_KUBEFLOW) ? hp_nccl_check_label(pod, L_KUBEFLOW)
						    : hp_nccl_check_label(pod, L_JOB);
	if (job)
		hp_finding_var(f, "JOB", job);
	if (hp_json_str(pod, "node"))
		hp_finding_var(f, "NODE_NAME", hp_json_str(pod, "node"));
}

const char *hp_nccl_check_node_iid(const struct hp_snapshot *snap, const char *node_name)
{
	if (!node_name)
		return NULL;
	return hp_kube_index_iid(hp_facts_kube(snap), node_name);
}

void hp_nccl_check_jobs(const cJSON *nccl, struct hp_nccl_check_jobs *out)
{
	const cJSON *pod;
	size_t i;

	memset(out, 0, sizeof(*out));
	cJSON_ArrayForEach(pod, hp_json_arr(nccl, "pods")) {
		const char *label = L_KUBEFLOW, *name = hp_nccl_check_label(pod, L_KUBEFLOW);
		const char *ns = hp_check_str(pod, "namespace", "");
		struct hp_nccl_check_job *j = NULL;

		if (!name) {
			label = L_JOB;
			name = hp_nccl_check_label(pod, L_JOB);
		}
		if (!name) {
			out->loose++;
			continue;
		}
		for (i = 0; i < out->n; i++)
			if (!strcmp(out->v[i].ns, ns) && !strcmp(out->v[i].name, name)) {
				j = &out->v[i];
				break;
			}
		if (!j) {
			j = hp_array_push(out);
			hp_strlcpy(j->ns, ns, sizeof(j->ns));
			hp_strlcpy(j->name, name, sizeof(j->name));
			j->label = label;
			j->kind = hp_json_str(pod, "owner.kind");
		}
		if (j->npods < HP_ARRAY_LEN(j->pods))
			j->pods[j->npods++] = pod;
		else
			j->more++;
	}
}

void hp_nccl_check_jobs_release(struct hp_nccl_check_jobs *j)
{
	hp_array_release(j);
}

/* ---- many pods, one finding ---- */

struct hp_nccl_check_pod_item {
	char *msg;
	char *ns, *pod, *container, *job, *node_name;
	char *iid;           /* the pod's node's instance id, or NULL */
	cJSON *evidence;
};

struct hp_nccl_check_pod_item *hp_nccl_check_pods_add(struct hp_nccl_check_pods *p, const struct hp_snapshot *snap,
					const cJSON *pod, const char *container, const char *fmt, ...)
{
	struct hp_nccl_check_pod_item *it = hp_array_push(p);
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
	const char *job = hp_nccl_check_label(pod, L_KUBEFLOW) ? hp_nccl_check_label(pod, L_KUBEFLOW)
							: hp_nccl_check_label(pod, L_JOB);
	const char *iid = hp_nccl_check_node_iid(snap, hp_json_str(pod, "node"));
	va_list ap;

	va_start(ap, fmt);
	if (hp_buf_vaddf(&b, fmt, ap))
		hp_buf_puts(&b, "(message too long)");
	va_end(ap);
	it->msg = hp_buf_detach(&b, NULL);
	it->ns = hp_json_str(pod, "namespace") ? xstrdup(hp_json_str(pod, "namespace")) : NULL;
	it->pod = hp_json_str(pod, "name") ? xstrdup(hp_json_str(pod, "name")) : NULL;
	it->container = container ? xstrdup(container) : NULL;
	it->job = job ? xstrdup(job) : NULL;
	it->node_name = hp_json_str(pod, "node") ? xstrdup(hp_json_str(pod, "node")) : NULL;
	it->iid = iid ? xstrdup(iid) : NULL;
	return it;
}

void hp_nccl_check_pods_evidence(struct hp_nccl_check_pod_item *it, const char *line)
{
	if (!it->evidence)
		it->evidence = cJSON_CreateArray();
	cJSON_AddItemToArray(it->evidence, cJSON_CreateString(line));
}

size_t hp_nccl_check_pods_count(const struct hp_nccl_check_pods *p)
{
	return p->n;
}

static void item_vars(struct hp_finding *f, const struct hp_nccl_check_pod_item *it)
{
	if (it->ns)
		hp_finding_var(f, "NAMESPACE", it->ns);
	if (it->pod)
		hp_finding_var(f, "POD", it->pod);
	if (it->container)
		hp_finding_var(f, "CONTAINER", it->container);
	if (it->job)
		hp_finding_var(f, "JOB", it->job);
	if (it->node_name)
		hp_finding_var(f, "NODE_NAME", it->node_name);
}

static int same_str(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

struct hp_finding *hp_nccl_check_pods_emit(struct hp_emit *em, struct hp_nccl_check_pods *p, const char *fmt,
				    ...)
{
	struct hp_finding *x = NULL;
	size_t i;

	if (p->n && p->n < HP_FOLD_MIN) {
		for (i = 0; i < p->n; i++) {
			struct hp_nccl_check_pod_item *it = &p->v[i];
			struct hp_finding *f = hp_emitx(em, p->tag, p->prio, p->section, it->iid, "%s",
							it->msg);
			const cJSON *e;

			cJSON_ArrayForEach(e, it->evidence)
				if (cJSON_IsString(e))
					hp_finding_evidence(f, e->valuestring);
			item_vars(f, it);
		}
	} else if (p->n) {
		struct hp_buf msg = HP_BUF_INIT(HP_MAX_LINE);
		va_list ap;
		int one_ns = 1, one_job = 1;

		va_start(ap, fmt);
		if (hp_buf_vaddf(&msg, fmt, ap))
			hp_buf_puts(&msg, "(message too long)");
		va_end(ap);
		x = hp_emitx(em, p->tag, p->prio, p->section, NULL, "%s", msg.buf);
		hp_buf_release(&msg);
		for (i = 0; i < p->n; i++) {
			if (p->v[i].iid)
				hp_finding_node(x, p->v[i].iid);
			if (i < HP_FOLD_SAMPLE)
				hp_finding_evidence(x, p->v[i].msg);
			one_ns &= same_str(p->v[i].ns, p->v[0].ns);
			one_job &= same_str(p->v[i].job, p->v[0].job);
		}
		if (p->n > HP_FOLD_SAMPLE) {
			char more[64];

			snprintf(more, sizeof(more), "and %zu more pods", p->n - HP_FOLD_SAMPLE);
			hp_finding_evidence(x, more);
		}
		if (one_ns)
			hp_finding_var(x, "NAMESPACE", p->v[0].ns);
		if (one_job && p->v[0].job)
			hp_finding_var(x, "JOB", p->v[0].job);
	}
	for (i = 0; i < p->n; i++) {
		free(p->v[i].msg);
		free(p->v[i].ns);
		free(p->v[i].pod);
		free(p->v[i].container);
		free(p->v[i].job);
		free(p->v[i].node_name);
		free(p->v[i].iid);
		cJSON_Delete(p->v[i].evidence);
	}
	hp_array_release(p);
	return x;
}

size_t hp_nccl_check_job_nodes(const struct hp_nccl_check_job *j)
{
	size_t i, k, n = 0;

	for (i = 0; i < j->npods; i++) {
		const char *node = hp_json_str(j->pods[i], "node");

		if (!node)
			continue;
		for (k = 0; k < i; k++)
			if (hp_json_str(j->pods[k], "node") &&
			    !strcmp(hp_json_str(j->pods[k], "node"), node))
				break;
		n += k == i;
	}
	return n;
}

void hp_nccl_check_gpu_ecc_note(const struct hp_snapshot *snap, const char *iid, char *out, size_t n)
{
	struct hp_probe_iter it;
	const cJSON *g;
	cJSON *facts;
	struct hp_buf bad = HP_BUF_INIT(HP_MAX_LINE);
	int known = 0;

	out[0] = '\0';
	if (!iid) {
		snprintf(out, n, "; its node is not known: run hpnode triage on the job's nodes for their "
			 "GPU checks (node.gpu-ecc, node.gpu-xid, node.gpu-remap)");
		return;
	}
	if (!hp_probes_find(snap, "probes", iid, &it)) {
		hp_probes_end(&it);
		snprintf(out, n, "; node %s was not probed, so its GPU checks (node.gpu-ecc, "
			 "node.gpu-xid, node.gpu-remap) did not run", iid);
		return;
	}
	facts = hp_probes_facts(&it);
	cJSON_ArrayForEach(g, hp_json_arr(facts, "nvidia.gpus")) {
		double unc = hp_json_num(g, "ecc_unc_vol", -1);

		if (unc < 0)
			continue;
		known++;
		if (unc > 0 && bad.len < 200)
			hp_buf_printf(&bad, "%sGPU %.0f: %.0f", bad.len ? ", " : "",
				      hp_json_num(g, "index", -1), unc);
	}
	if (bad.len)
		snprintf(out, n, "; node.gpu-ecc on %s counts uncorrectable ECC errors since the driver "
			 "loaded (%s): drain and replace the node (\xc2\xa7 G.1)", iid, bad.buf);
	else if (known)
		snprintf(out, n, "; node.gpu-ecc on %s counts no uncorrectable ECC error on its %d "
			 "GPU%s now (the driver may have reloaded since); see node.gpu-xid and "
			 "node.gpu-remap there", iid, known, known == 1 ? "" : "s");
	else
		snprintf(out, n, "; node %s's ECC counters could not be read (see node.gpu-ecc)", iid);
	cJSON_Delete(facts);
	hp_probes_end(&it);
	hp_buf_release(&bad);
}

void hp_nccl_check_hit_note(const struct hp_snapshot *snap, const cJSON *scan, const char *code,
		     const char *source, const char *iid, char *out, size_t n)
{
	const cJSON *w;
	size_t len = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(w, hp_json_arr(scan, "hits"))
		if (hp_json_str(w, "cause") && !strcmp(hp_json_str(w, "cause"), code) &&
		    !strcmp(hp_check_str(w, "source", ""), source))
			len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s%s ('%s')",
						len ? ", " : "; it explains ",
						hp_check_str(w, "code", "?"),
						hp_check_str(w, "pattern", "?"));
	if (!strcmp(code, "GPU_ECC") && len < n)
		hp_nccl_check_gpu_ecc_note(snap, iid, out + len, n - len);
}
