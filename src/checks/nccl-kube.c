/*
 * The training job's pods, as `hpnode nccl` judges them (report group
 * "Training Job Pods"): which pods the job has, the EFA device plugin
 * against the pods that request vpc.amazonaws.com/efa, pods that failed or
 * wait, containers that crash, were OOM-killed or restart (current state
 * and lastState.terminated), init containers that fail, and /dev/shm in the
 * pod spec. They read snapshot key "nccl" (src/collect/nccl-read.c) and say
 * nothing without it; when kubectl was not trusted, nccl.job says once
 * that they were skipped (kube.access gives the WARN) and the others stay
 * silent.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/json.h"
#include "checks.h"
#include "fold.h"
#include "nccl-check.h"

/* ---- nccl.job ---- */

/* "master 1, worker 3" of a job's replica types. */
static void replica_counts(const struct hp_nccl_check_job *j, struct hp_buf *out)
{
	const char *types[16];
	size_t counts[16], nt = 0, i, k;

	for (i = 0; i < j->npods; i++) {
		const char *r = hp_nccl_check_replica(j->pods[i]);

		if (!r)
			r = "no replica type";
		for (k = 0; k < nt && strcmp(types[k], r); k++)
			;
		if (k == nt) {
			if (nt == HP_ARRAY_LEN(types))
				continue;
			types[nt] = r;
			counts[nt++] = 0;
		}
		counts[k]++;
	}
	for (k = 0; k < nt; k++)
		hp_buf_printf(out, "%s%.60s %zu", k ? ", " : "", types[k], counts[k]);
}

static void run_job(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nccl_check_data(snap), *k;
	const char *why, *job, *ns;
	struct hp_nccl_check_jobs jobs;
	struct hp_finding *f;
	size_t i;

	if (!nccl || strcmp(hp_snap_orchestrator(snap), "EKS"))
		return;
	if (!(k = hp_nccl_check_kube(snap, &why))) {
		hp_emit(em, HP_TAG_SKIP, "Kubernetes checks of the job skipped (EFA device plugin, pods, "
			"/dev/shm, services, NetworkPolicies, pod logs, environment): %s%s", why,
			hp_json_get(nccl, "cloudwatch") ? "; the cluster's CloudWatch logs are searched "
							  "instead" : "");
		return;
	}
	job = hp_json_str(nccl, "options.job");
	ns = hp_json_str(nccl, "options.namespace");
	if (hp_nccl_check_read_failed(nccl, em, "pods", "the pods", "the job's pods are not checked"))
		return;
	if (hp_json_str(nccl, "job.error")) {
		hp_emit(em, HP_TAG_WARN, "Job name '%s' is %s", job ? job : "?",
			hp_json_str(nccl, "job.error"));
		return;
	}
	hp_nccl_check_jobs(nccl, &jobs);
	if (job && !jobs.n) {
		f = hp_emitx(em, HP_TAG_FAIL, HP_P1, "NC20", NULL, "No pod of job %s found in %s "
			     "(labels training.kubeflow.org/job-name=%s and job-name=%s)", job,
			     ns ? ns : "any namespace", job, job);
		hp_finding_var(f, "JOB", job);
		if (ns)
			hp_finding_var(f, "NAMESPACE", ns);
	} else if (!jobs.n) {
		HP_CHECK_INFO(em, "No training pod found%s%s (no pod with a job label or a GPU or EFA "
			      "request)", ns ? " in " : "", ns ? ns : "");
	}
	for (i = 0; i < jobs.n; i++) {
		struct hp_buf reps = HP_BUF_INIT(HP_MAX_LINE);
		const struct hp_nccl_check_job *j = &jobs.v[i];
		char name[600];

		replica_counts(j, &reps);
		f = HP_CHECK_INFO(em, "Job %s (%s, label %s): %zu pod%s (%s) on %zu node%s",
				  hp_nccl_check_job_name(j, name, sizeof(name)), j->kind ? j->kind : "no owner",
				  j->label, j->npods + j->more, j->npods + j->more == 1 ? "" : "s",
				  reps.buf, hp_nccl_check_job_nodes(j), hp_nccl_check_job_nodes(j) == 1 ? "" : "s");
		hp_finding_var(f, "JOB", j->name);
		hp_finding_var(f, "NAMESPACE", j->ns);
		hp_buf_release(&reps);
	}
	if (!job && jobs.loose)
		HP_CHECK_INFO(em, "%zu training pod%s without a job label (a GPU or EFA request only)",
			      jobs.loose, jobs.loose == 1 ? "" : "s");
	if (hp_json_num(nccl, "pods_dropped", 0) > 0)
		hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL, "Only the first %d training pods were "
			 "read; %.0f more are not checked", cJSON_GetArraySize(hp_json_arr(nccl, "pods")),
			 hp_json_num(nccl, "pods_dropped", 0));
	hp_nccl_check_jobs_release(&jobs);
}

/* ---- nccl.efa-plugin ---- */

static int contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle), i, j;

	if (!hay)
		return 0;
	for (i = 0; hay[i]; i++) {
		for (j = 0; j < n && hay[i + j] &&
			    tolower((unsigned char)hay[i + j]) == tolower((unsigned char)needle[j]); j++)
			;
		if (j == n)
			return 1;
	}
	return 0;
}

/*
 * The EFA device plugin, told by its DaemonSet's name or image (never by
 * its namespace: "default" holds "efa" too).
 */
static int is_efa_plugin(const cJSON *ds)
{
	const cJSON *img;

	if (contains_ci(hp_json_str(ds, "name"), "efa-k8s-device-plugin") ||
	    contains_ci(hp_json_str(ds, "name"), "efa-device-plugin"))
		return 1;
	cJSON_ArrayForEach(img, hp_json_arr(ds, "images"))
		if (cJSON_IsString(img) && (contains_ci(img->valuestring, "efa-k8s-device-plugin") ||
					    contains_ci(img->valuestring, "efa-device-plugin")))
			return 1;
	return 0;
}

/* The pod's node's instance type from the node list, or NULL. */
static const char *pod_type(const struct hp_snapshot *snap, const cJSON *pod)
{
	const char *iid = hp_nccl_check_node_iid(snap, hp_json_str(pod, "node"));
	const cJSON *n;

	if (!iid)
		return NULL;
	cJSON_ArrayForEach(n, hp_json_arr(snap->root, "nodes")) {
		const char *x = hp_json_str(n, "InstanceId");

		if (x && !strcmp(x, iid))
			return hp_json_str(n, "InstanceType");
	}
	return NULL;
}

/* The pod asks for EFA interfaces (the collector's count, else its containers' requests). */
static int requests_efa(const cJSON *pod)
{
	const cJSON *c;

	if (hp_json_num(pod, "efa_requested", 0) > 0)
		return 1;
	cJSON_ArrayForEach(c, hp_json_arr(pod, "spec.containers"))
		if (hp_nccl_check_wants_efa(c))
			return 1;
	return 0;
}

static void run_efa_plugin(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nccl_check_kube(snap, NULL), *ds, *pod;
	struct hp_nccl_check_pods none = HP_NCCL_CHECK_PODS_INIT(HP_TAG_WARN, HP_P1, NULL);
	struct hp_nccl_check_pods fewer = HP_NCCL_CHECK_PODS_INIT(HP_TAG_WARN, HP_P2, NULL);
	struct hp_finding *f;
	int found = 0;
	double efa_pods;

	if (!nccl)
		return;
	efa_pods = hp_json_num(nccl, "pods_requesting_efa", 0);
	cJSON_ArrayForEach(pod, hp_json_arr(nccl, "pods"))
		if (requests_efa(pod) && efa_pods < 1)
			efa_pods = 1;
	if (!hp_nccl_check_read_failed(nccl, em, "daemonsets", "DaemonSets",
				"the EFA device plugin is not checked")) {
		cJSON_ArrayForEach(ds, hp_json_arr(nccl, "daemonsets")) {
			double desired = hp_json_num(ds, "desired", 0), ready = hp_json_num(ds, "ready", 0);

			if (!is_efa_plugin(ds))
				continue;
			found = 1;
			if (ready < desired)
				hp_emit(em, HP_TAG_WARN, "EFA device plugin %s/%s: %.0f of %.0f pods ready; "
					"pods on the other nodes get no EFA device",
					hp_check_str(ds, "namespace", "?"), hp_check_str(ds, "name", "?"),
					ready, desired);
			else
				hp_emit(em, HP_TAG_PASS, "EFA device plugin DaemonSet %s/%s runs: %.0f of "
					"%.0f pods ready", hp_check_str(ds, "namespace", "?"),
					hp_check_str(ds, "name", "?"), ready, desired);
		}
		if (!found && efa_pods > 0) {
			f = hp_emitx(em, HP_TAG_FAIL, HP_P0, NULL, NULL, "Pods request "
				     "vpc.amazonaws.com/efa but no EFA device plugin DaemonSet runs in "
				     "any namespace (%.0f pod%s)", efa_pods, efa_pods == 1 ? "" : "s");
			int shown = 0;

			cJSON_ArrayForEach(pod, hp_json_arr(nccl, "pods")) {
				char name[600];

				if (requests_efa(pod) && shown++ < HP_FOLD_SAMPLE)
					hp_finding_evidence(f, hp_nccl_check_pod_name(pod, name, sizeof(name)));
			}
		} else if (!found) {
			HP_CHECK_INFO(em, "No EFA device plugin DaemonSet, and no pod requests "
				      "vpc.amazonaws.com/efa");
		}
	}
	/* Pods on EFA instances that ask for fewer EFA interfaces than their node has. */
	cJSON_ArrayForEach(pod, hp_json_arr(nccl, "pods")) {
		const cJSON *c = hp_nccl_check_main_container(pod);
		const char *type = pod_type(snap, pod);
		int efa = hp_nccl_type_efa(snap, type), gpus = hp_nccl_check_pod_gpus(pod);
		double asked = hp_json_num(pod, "efa_requested", requests_efa(pod) ? efa : 0);
		char name[600];

		if (!c || efa <= 0 || !gpus)
			continue;
		hp_nccl_check_pod_name(pod, name, sizeof(name));
		if (asked <= 0)
			hp_nccl_check_pods_add(&none, snap, pod, hp_json_str(c, "name"), "Pod %s requests no "
					"vpc.amazonaws.com/efa on %s (%d EFA interfaces): NCCL inside it "
					"cannot use EFA and falls back to TCP", name, type, efa);
		else if (asked < efa)
			hp_nccl_check_pods_add(&fewer, snap, pod, hp_json_str(c, "name"), "Pod %s requests "
					"%.0f of the %d EFA interfaces of %s", name, asked, efa, type);
	}
	hp_nccl_check_pods_emit(em, &none, "%zu GPU pods request no vpc.amazonaws.com/efa on EFA "
			 "instances: NCCL inside them falls back to TCP", hp_nccl_check_pods_count(&none));
	hp_nccl_check_pods_emit(em, &fewer, "%zu GPU pods request fewer EFA interfaces than their instance "
			 "has", hp_nccl_check_pods_count(&fewer));
}

/* ---- nccl.pod-status ---- */

static void conditions_evidence(struct hp_nccl_check_pod_item *it, const cJSON *pod)
{
	const cJSON *c;
	char line[900];

	cJSON_ArrayForEach(c, hp_json_arr(pod, "conditions_false")) {
		snprintf(line, sizeof(line), "%s=%s %s: %s", hp_check_str(c, "type", "?"),
			 hp_check_str(c, "status", "?"), hp_check_str(c, "reason", ""),
			 hp_check_str(c, "message", ""));
		hp_nccl_check_pods_evidence(it, line);
	}
}

static void run_pod_status(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nccl_check_kube(snap, NULL), *pod;
	struct hp_nccl_check_pods failed = HP_NCCL_CHECK_PODS_INIT(HP_TAG_FAIL, HP_P1, NULL);
	struct hp_nccl_check_pods pending = HP_NCCL_CHECK_PODS_INIT(HP_TAG_WARN, HP_P1, NULL);
	size_t running = 0, done = 0, total = 0;

	if (!nccl || hp_json_get(nccl, "errors.pods"))
		return;
	cJSON_ArrayForEach(pod, hp_json_arr(nccl, "pods")) {
		const char *phase = hp_check_str(pod, "phase", "Unknown");
		char name[600], clip[HP_CHECK_CLIP_SIZE];
		struct hp_nccl_check_pod_item *it;

		total++;
		hp_nccl_check_pod_name(pod, name, sizeof(name));
		if (!strcmp(phase, "Running")) {
			running++;
		} else if (!strcmp(phase, "Succeeded")) {
			done++;
		} else if (!strcmp(phase, "Pending")) {
			it = hp_nccl_check_pods_add(&pending, snap, pod, NULL, "Pod %s is Pending%s%s", name,
					     hp_json_str(pod, "reason") ? ": " : "",
					     hp_check_clip(hp_json_str(pod, "reason"), clip));
			conditions_evidence(it, pod);
		} else {
			it = hp_nccl_check_pods_add(&failed, snap, pod, NULL, "Pod %s is %s%s%s", name, phase,
					     hp_json_str(pod, "message") ? ": " : "",
					     hp_check_clip(hp_json_str(pod, "message"), clip));
			conditions_evidence(it, pod);
		}
	}
	hp_nccl_check_pods_emit(em, &failed, "%zu pods Failed or Unknown", hp_nccl_check_pods_count(&failed));
	hp_nccl_check_pods_emit(em, &pending, "%zu pods are Pending", hp_nccl_check_pods_count(&pending));
	if (total && running + done == total)
		hp_emit(em, HP_TAG_PASS, "Every pod is Running or Succeeded (%zu Running, %zu "
			"Succeeded)", running, done);
}

/* ---- nccl.containers ---- */

static int is(const char *s, const char *v)
{
	return s && !strcmp(s, v);
}

static void run_containers(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nccl_check_kube(snap, NULL), *pod, *c;
	struct hp_nccl_check_pods crash = HP_NCCL_CHECK_PODS_INIT(HP_TAG_FAIL, HP_P1, "NC20");
	struct hp_nccl_check_pods oom = HP_NCCL_CHECK_PODS_INIT(HP_TAG_FAIL, HP_P1, "NC4");
	struct hp_nccl_check_pods image = HP_NCCL_CHECK_PODS_INIT(HP_TAG_FAIL, HP_P1, "NC20");
	struct hp_nccl_check_pods restarted = HP_NCCL_CHECK_PODS_INIT(HP_TAG_WARN, HP_P2, "NC20");
	size_t containers = 0;

	if (!nccl || hp_json_get(nccl, "errors.pods"))
		return;
	cJSON_ArrayForEach(pod, hp_json_arr(nccl, "pods")) {
		int succeeded = is(hp_json_str(pod, "phase"), "Succeeded");

		cJSON_ArrayForEach(c, hp_json_arr(pod, "containers")) {
			const char *cname = hp_check_str(c, "name", "?");
			const char *reason = hp_json_str(c, "reason"), *last = hp_json_str(c, "last_reason");
			double restarts = hp_json_num(c, "restarts", 0);
			double code = hp_json_num(c, "exit_code", 0), last_code = hp_json_num(c, "last_exit_code", 0);
			char name[600], what[400];

			if (cJSON_IsTrue(cJSON_GetObjectItem(c, "init")))
				continue;
			containers++;
			hp_nccl_check_pod_name(pod, name, sizeof(name));
			snprintf(what, sizeof(what), "restarts %.0f%s%s", restarts,
				 last ? ", last terminated " : "", last ? last : "");
			if (last && hp_json_get(c, "last_exit_code")) {
				size_t n = strlen(what);

				snprintf(what + n, sizeof(what) - n, " (exit %.0f)", last_code);
			}
			if (is(reason, "OOMKilled") || is(last, "OOMKilled")) {
				hp_nccl_check_pods_add(&oom, snap, pod, cname, "Container %s/%s was OOMKilled (%s): "
						"it reached its memory limit", name, cname,
						is(reason, "OOMKilled") ? "now" : what);
			} else if (is(reason, "CrashLoopBackOff")) {
				hp_nccl_check_pods_add(&crash, snap, pod, cname, "Container %s/%s is in "
						"CrashLoopBackOff (%s)", name, cname, what);
			} else if (is(reason, "ImagePullBackOff") || is(reason, "ErrImagePull") ||
				   is(reason, "CreateContainerConfigError") ||
				   is(reason, "CreateContainerError") || is(reason, "RunContainerError")) {
				hp_nccl_check_pods_add(&image, snap, pod, cname, "Container %s/%s cannot start: %s",
						name, cname, reason);
			} else if (is(hp_json_str(c, "state"), "terminated") && code != 0 && !succeeded) {
				hp_nccl_check_pods_add(&crash, snap, pod, cname, "Container %s/%s terminated with "
						"%s (exit %.0f)", name, cname, reason ? reason : "an error",
						code);
			} else if (restarts >= 3 && is(last, "Error")) {
				hp_nccl_check_pods_add(&crash, snap, pod, cname, "Container %s/%s keeps crashing "
						"(%s)", name, cname, what);
			} else if (restarts > 0) {
				hp_nccl_check_pods_add(&restarted, snap, pod, cname, "Container %s/%s restarted (%s)",
						name, cname, what);
			}
		}
	}
	if (!containers)
		return;
	if (!oom.n && !crash.n && !image.n && !restarted.n)
		hp_emit(em, HP_TAG_PASS, "No container of the job's pods is crash-looping, OOM-killed "
			"or restarting (%zu containers)", containers);
	hp_nccl_check_pods_emit(em, &oom, "%zu containers were OOMKilled", hp_nccl_check_pods_count(&oom));
	hp_nccl_check_pods_emit(em, &crash, "%zu containers crash or crash-loop", hp_nccl_check_pods_count(&crash));
	hp_nccl_check_pods_emit(em, &image, "%zu containers cannot start", hp_nccl_check_pods_count(&image));
	hp_nccl_check_pods_emit(em, &restarted, "%zu containers restarted", hp_nccl_check_pods_count(&restarted));
}

/* ---- nccl.init-containers ---- */

static void run_init(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nccl_check_kube(snap, NULL), *pod, *c;
	struct hp_nccl_check_pods bad = HP_NCCL_CHECK_PODS_INIT(HP_TAG_FAIL, HP_P1, NULL);
	struct hp_nccl_check_pods busy = HP_NCCL_CHECK_PODS_INIT(HP_TAG_WARN, HP_P2, NULL);
	size_t n = 0;

	if (!nccl || hp_json_get(nccl, "errors.pods"))
		return;
	cJSON_ArrayForEach(pod, hp_json_arr(nccl, "pods")) {
		cJSON_ArrayForEach(c, hp_json_arr(pod, "containers")) {
			const char *cname = hp_check_str(c, "name", "?");
			const char *reason = hp_json_str(c, "reason"), *state = hp_json_str(c, "state");
			char name[600], clip[HP_CHECK_CLIP_SIZE];
			struct hp_nccl_check_pod_item *it;

			if (!cJSON_IsTrue(cJSON_GetObjectItem(c, "init")))
				continue;
			n++;
			hp_nccl_check_pod_name(pod, name, sizeof(name));
			if (is(state, "terminated") && hp_json_num(c, "exit_code", 0) != 0) {
				it = hp_nccl_check_pods_add(&bad, snap, pod, cname, "Init container %s/%s failed "
						     "(exit %.0f%s%s)", name, cname,
						     hp_json_num(c, "exit_code", 0), reason ? ", " : "",
						     reason ? reason : "");
				if (hp_json_str(c, "message"))
					hp_nccl_check_pods_evidence(it, hp_check_clip(hp_json_str(c, "message"), clip));
			} else if (is(state, "waiting") && reason && strcmp(reason, "PodInitializing")) {
				it = hp_nccl_check_pods_add(&bad, snap, pod, cname, "Init container %s/%s is %s "
						     "(restarts %.0f)", name, cname, reason,
						     hp_json_num(c, "restarts", 0));
				if (hp_json_str(c, "message"))
					hp_nccl_check_pods_evidence(it, hp_check_clip(hp_json_str(c, "message"), clip));
			} else if (is(state, "running") || is(state, "waiting")) {
				hp_nccl_check_pods_add(&busy, snap, pod, cname, "Init container %s/%s is still %s: "
						"the pod has not started", name, cname, state);
			}
		}
	}
	if (!n)
		return;
	if (!bad.n && !busy.n)
		hp_emit(em, HP_TAG_PASS, "Every init container completed (%zu)", n);
	hp_nccl_check_pods_emit(em, &bad, "%zu init containers fail", hp_nccl_check_pods_count(&bad));
	hp_nccl_check_pods_emit(em, &busy, "%zu init containers are still running",
			 hp_nccl_check_pods_count(&busy));
}

/* ---- nccl.dshm ---- */

/* The volume named name of the pod's spec, or NULL. */
static const cJSON *volume(const cJSON *pod, const char *name)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, hp_json_arr(pod, "spec.volumes"))
		if (name && is(hp_json_str(v, "name"), name))
			return v;
	return NULL;
}

/* The size of /dev/shm the --exec script measured in the pod's container (KiB), or -1. */
static double exec_shm_kb(const cJSON *nccl, const cJSON *pod)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, hp_json_arr(nccl, "exec.pods"))
		if (!strcmp(hp_check_str(x, "namespace", ""), hp_check_str(pod, "namespace", "-")) &&
		    !strcmp(hp_check_str(x, "pod", ""), hp_check_str(pod, "name", "-")))
			return hp_json_num(x, "shm_kb", -1);
	return -1;
}

/* KiB as "64 MiB", "1.5 GiB". */
const char *hp_nccl_check_kib(double kib, char out[32])
{
	if (kib >= 1048576)
		snprintf(out, 32, "%.1f GiB", kib / 1048576);
	else if (kib >= 1024)
		snprintf(out, 32, "%.0f MiB", kib / 1024);
	else
		snprintf(out, 32, "%.0f KiB", kib);
	return out;
}

static void run_dshm(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *nccl = hp_nccl_check_kube(snap, NULL), *pod, *m;
	struct hp_nccl_check_pods none = HP_NCCL_CHECK_PODS_INIT(HP_TAG_FAIL, HP_P1, NULL);
	struct hp_nccl_check_pods small = HP_NCCL_CHECK_PODS_INIT(HP_TAG_FAIL, HP_P1, NULL);
	struct hp_nccl_check_pods disk = HP_NCCL_CHECK_PODS_INIT(HP_TAG_WARN, HP_P2, NULL);
	size_t judged = 0;

	if (!nccl)
		return;
	cJSON_ArrayForEach(pod, hp_json_arr(nccl, "pods")) {
		const cJSON *c = hp_nccl_check_main_container(pod), *vol = NULL;
		const char *cname = hp_json_str(c, "name");
		char name[600];
		double shm_kb;

		/* Only pods that run NCCL (a GPU or EFA request); a launcher or a CPU pod needs no shm. */
		if (!c || (!hp_nccl_check_wants_gpu(c) && !hp_nccl_check_wants_efa(c)))
			continue;
		judged++;
		hp_nccl_check_pod_name(pod, name, sizeof(name));
		cJSON_ArrayForEach(m, hp_json_arr(c, "mounts"))
			if (is(hp_json_str(m, "path"), "/dev/shm"))
				vol = volume(pod, hp_json_str(m, "name"));
		shm_kb = exec_shm_kb(nccl, pod);
		if (shm_kb >= 0 && shm_kb < 1048576) {
			char size[32];

			hp_nccl_check_pods_add(&small, snap, pod, cname, "Pod %s has %s of /dev/shm in its "
					"container (df): NCCL and data loaders need at least 1 GiB", name,
					hp_nccl_check_kib(shm_kb, size));
		} else if (!vol) {
			hp_nccl_check_pods_add(&none, snap, pod, cname, "Pod %s has no memory-backed /dev/shm: "
					"its containers get the 64 MB default", name);
		} else if (is(hp_json_str(vol, "kind"), "hostPath")) {
			continue;
		} else if (is(hp_json_str(vol, "kind"), "emptyDir") &&
			   is(hp_json_str(vol, "medium"), "Memory")) {
			const char *lim = hp_json_str(vol, "size_limit");
			double bytes = hp_nccl_quantity_bytes(lim);

			if (lim && bytes >= 0 && bytes < 1073741824.0)
				hp_nccl_check_pods_add(&small, snap, pod, cname, "Pod %s limits /dev/shm to %s "
						"(sizeLimit): NCCL and data loaders need at least 1 GiB",
						name, lim);
		} else if (is(hp_json_str(vol, "kind"), "emptyDir")) {
			hp_nccl_check_pods_add(&disk, snap, pod, cname, "Pod %s mounts a disk-backed emptyDir "
					"at /dev/shm (no medium: Memory)", name);
		}
	}
	if (judged && !none.n && !small.n && !disk.n)
		hp_emit(em, HP_TAG_PASS, "Every GPU or EFA pod mounts a memory-backed /dev/shm of at "
			"least 1 GiB (%zu pods)", judged);
	hp_nccl_check_pods_emit(em, &none, "%zu pods have no memory-backed /dev/shm: their containers get "
			 "the 64 MB default", hp_nccl_check_pods_count(&none));
	hp_nccl_check_pods_emit(em, &small, "%zu pods limit /dev/shm below 1 GiB", hp_nccl_check_pods_count(&small));
	hp_nccl_check_pods_emit(em, &disk, "%zu pods mount a disk-backed emptyDir at /dev/shm",
			 hp_nccl_check_pods_count(&disk));
}

HP_CHECK(nccl_job, HP_GROUP_NCCL_JOB, 10,
	 .id = "nccl.job", .doc = HP_REFDOC_NCCL, .section = "NC26", .prio = HP_P1, .run = run_job);
HP_CHECK(nccl_efa_plugin, HP_GROUP_NCCL_JOB, 20,
	 .id = "nccl.efa-plugin", .doc = HP_REFDOC_NCCL, .section = "NC6.1", .prio = HP_P1,
	 .run = run_efa_plugin);
HP_CHECK(nccl_pod_status, HP_GROUP_NCCL_JOB, 30,
	 .id = "nccl.pod-status", .doc = HP_REFDOC_NCCL, .section = "NC20", .prio = HP_P1,
	 .run = run_pod_status);
HP_CHECK(nccl_containers, HP_GROUP_NCCL_JOB, 40,
	 .id = "nccl.containers", .doc = HP_REFDOC_NCCL, .section = "NC20", .prio = HP_P1,
	 .run = run_containers);
HP_CHECK(nccl_init_containers, HP_GROUP_NCCL_JOB, 50,
	 .id = "nccl.init-containers", .doc = HP_REFDOC_NCCL, .section = "NC20", .prio = HP_P1,
	 .run = run_init);
HP_CHECK(nccl_dshm, HP_GROUP_NCCL_JOB, 60,
	 .id = "nccl.dshm", .doc = HP_REFDOC_NCCL, .section = "NC17.1", .prio = HP_P1,
	 .run = run_dshm);
