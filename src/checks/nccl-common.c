/*
 * What the checks of `hpnode nccl` share (src/checks/nccl.h): the "nccl"
 * key, whether its Kubernetes part can be judged, the job's pods grouped
 * into jobs, and small helpers over the pods the collector kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"
#include "nccl.h"

#define L_KUBEFLOW "training.kubeflow.org/job-name"
#define L_JOB "job-name"

const cJSON *hp_nck_data(const struct hp_snapshot *snap)
{
	const cJSON *n = hp_snapshot_get(snap, "nccl");

	return cJSON_IsObject(n) ? n : NULL;
}

const cJSON *hp_nck_kube(const struct hp_snapshot *snap, const char **why)
{
	const cJSON *n = hp_nck_data(snap), *sk;

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

const char *hp_nck_label(const cJSON *pod, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(hp_json_get(pod, "labels"), key);

	return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

const char *hp_nck_replica(const cJSON *pod)
{
	return hp_nck_label(pod, "training.kubeflow.org/replica-type");
}

const char *hp_nck_pod_name(const cJSON *pod, char *out, size_t n)
{
	snprintf(out, n, "%s/%s", hp_check_str(pod, "namespace", "?"), hp_check_str(pod, "name", "?"));
	return out;
}

const char *hp_nck_job_name(const struct hp_nck_job *j, char *out, size_t n)
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

int hp_nck_wants_gpu(const cJSON *c)
{
	return resource(c, "nvidia.com/gpu") > 0;
}

int hp_nck_wants_efa(const cJSON *c)
{
	return resource(c, "vpc.amazonaws.com/efa") > 0;
}

const cJSON *hp_nck_main_container(const cJSON *pod)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, hp_json_arr(pod, "spec.containers"))
		if (hp_nck_wants_gpu(c) || hp_nck_wants_efa(c))
			return c;
	return cJSON_GetArrayItem(hp_json_arr(pod, "spec.containers"), 0);
}

int hp_nck_pod_gpus(const cJSON *pod)
{
	const cJSON *c;
	double n = 0;

	cJSON_ArrayForEach(c, hp_json_arr(pod, "spec.containers"))
		n += resource(c, "nvidia.com/gpu");
	return n > 0 && n < 1e6 ? (int)n : 0;
}

void hp_nck_pod_vars(struct hp_finding *f, const cJSON *pod, const char *container,
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
		job = hp_nck_label(pod, L_KUBEFLOW) ? hp_nck_label(pod, L_KUBEFLOW)
						    : hp_nck_label(pod, L_JOB);
	if (job)
		hp_finding_var(f, "JOB", job);
	if (hp_json_str(pod, "node"))
		hp_finding_var(f, "NODE_NAME", hp_json_str(pod, "node"));
}

const char *hp_nck_node_iid(const struct hp_snapshot *snap, const char *node_name)
{
	if (!node_name)
		return NULL;
	return hp_kube_index_iid(hp_facts_kube(snap), node_name);
}

void hp_nck_jobs(const cJSON *nccl, struct hp_nck_jobs *out)
{
	const cJSON *pod;
	size_t i;

	memset(out, 0, sizeof(*out));
	cJSON_ArrayForEach(pod, hp_json_arr(nccl, "pods")) {
		const char *label = L_KUBEFLOW, *name = hp_nck_label(pod, L_KUBEFLOW);
		const char *ns = hp_check_str(pod, "namespace", "");
		struct hp_nck_job *j = NULL;

		if (!name) {
			label = L_JOB;
			name = hp_nck_label(pod, L_JOB);
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

void hp_nck_jobs_release(struct hp_nck_jobs *j)
{
	hp_array_release(j);
}
