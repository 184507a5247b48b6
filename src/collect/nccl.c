/*
 * The NCCL collector: what the NCCL checks read from Kubernetes (a job's
 * pods with their spec and states, services, NetworkPolicies, DaemonSets of
 * every namespace, pod logs scanned for the NCCL error patterns) and from
 * CloudWatch Logs (the cluster's log group over a window, bounded pages),
 * into snapshot key "nccl" (layout in hp/snapshot.h). It reads only, through
 * the kubectl wrapper and the AWS client, and never judges; every read that
 * failed is recorded, so no failure can look like "nothing found".
 *
 * kubectl is used only when hp_collect_kube verified it for this cluster
 * (snapshot key "kube"). Pod logs are read by a few workers at once; their
 * lines go straight into one pattern scan, so only matches are kept.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/collect.h"
#include "hp/json.h"
#include "hp/kube.h"
#include "hp/nccl.h"
#include "nccl-exec.h"

#define DEFAULT_LOG_PODS 64
#define DEFAULT_TAIL 500
#define DEFAULT_SINCE_S 7200
#define DEFAULT_CW_PAGES 5
#define DEFAULT_CW_EVENTS 2000
#define LOG_WORKERS 8
#define MAX_OBJECTS 2000
#define TEXT_CLIP 500
#define CW_FILTERS 16
#define CW_FILTER_LEN 1000

#define L_KUBEFLOW "training.kubeflow.org/job-name"
#define L_REPLICA "training.kubeflow.org/replica-type"
#define L_JOB "job-name"

/* ---- small helpers ---- */

static void add_str(cJSON *o, const char *key, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, key, v);
}

/* A copy of s, cleaned and cut to max bytes. */
static void add_clean(cJSON *o, const char *key, const char *s, size_t max)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

	if (!s)
		return;
	hp_nccl_clean(s, strlen(s), max, &b);
	cJSON_AddStringToObject(o, key, b.buf);
	hp_buf_release(&b);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* s cleaned and cut to max bytes, as a new cJSON string. */
static cJSON *clean_string(const char *s, size_t max)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
	cJSON *x;

	hp_nccl_clean(or_empty(s), strlen(or_empty(s)), max, &b);
	x = cJSON_CreateString(b.buf);
	hp_buf_release(&b);
	return x;
}

/* A label (keys hold dots and slashes: no dotted-path lookup). */
static const char *label(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(hp_json_get(obj, "metadata.labels"), key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void record_error(cJSON *nccl, const char *what, const struct hp_kube_result *r)
{
	cJSON *errors = cJSON_GetObjectItemCaseSensitive(nccl, "errors"), *e;

	if (!errors)
		errors = cJSON_AddObjectToObject(nccl, "errors");
	cJSON_DeleteItemFromObjectCaseSensitive(errors, what);
	e = cJSON_AddObjectToObject(errors, what);
	cJSON_AddStringToObject(e, "status", hp_kube_status_name(r->status));
	add_clean(e, "message", r->message, TEXT_CLIP);
}

/* kubectl get ... -o json; items in r->json. Failures recorded under errors.<what>. */
static int get_items(struct hp_kube *k, cJSON *nccl, const char *what, const char *const *args,
		     struct hp_kube_result *r)
{
	if (!hp_kube_run(k, args, HP_KUBE_JSON, r) && cJSON_IsArray(hp_json_get(r->json, "items")))
		return 0;
	if (r->status == HP_KUBE_OK) {
		r->status = HP_KUBE_PARSE;
		hp_strlcpy(r->message, "kubectl -o json gave no 'items' list", sizeof(r->message));
	}
	record_error(nccl, what, r);
	return -1;
}

/* Kubernetes names and label values: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, 63 at most. */
static int label_value_ok(const char *v)
{
	size_t n = v ? strlen(v) : 0, i;

	if (!n || n > 63)
		return 0;
	for (i = 0; i < n; i++) {
		char c = v[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && ((i == 0 || i == n - 1) || (c != '-' && c != '_' && c != '.')))
			return 0;
	}
	return 1;
}

/* The environment variables NCCL reads (never one that looks like a secret). */
static int env_wanted(const char *name)
{
	static const char *const prefixes[] = { "NCCL_", "FI_", "TORCH_NCCL_" };
	static const char *const names[] = { "TORCH_DISTRIBUTED_DEBUG", "MASTER_ADDR",
					     "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK",
					     "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH",
					     "PYTORCH_CUDA_ALLOC_CONF", "OMPI_MCA_btl_tcp_if_include",
					     "OMPI_MCA_btl_tcp_if_exclude" };
	static const char *const secret[] = { "KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL" };
	size_t i;
	int want = 0;

	if (!name)
		return 0;
	for (i = 0; i < HP_ARRAY_LEN(prefixes); i++)
		want |= hp_starts_with(name, prefixes[i]);
	for (i = 0; i < HP_ARRAY_LEN(names); i++)
		want |= !strcmp(name, names[i]);
	for (i = 0; want && i < HP_ARRAY_LEN(secret); i++)
		if (strstr(name, secret[i]))
			return 0;
	return want;
}

/* ---- pods ---- */

static void copy_quantities(cJSON *dst, const cJSON *src)
{
	const cJSON *q;

	cJSON_ArrayForEach(q, src)
		if (q->string && cJSON_IsString(q))
			add_clean(dst, q->string, q->valuestring, 64);
}

/* A container of the pod's spec: image, the NCCL environment, resources, mounts. */
static cJSON *reduce_container_spec(const cJSON *c)
{
	cJSON *o = cJSON_CreateObject(), *env = NULL, *mounts;
	const cJSON *e, *m;

	add_clean(o, "name", hp_json_str(c, "name"), 253);
	add_clean(o, "image", hp_json_str(c, "image"), TEXT_CLIP);
	cJSON_ArrayForEach(e, hp_json_arr(c, "env")) {
		const char *n = hp_json_str(e, "name");

		if (!env_wanted(n))
			continue;
		if (!env)
			env = cJSON_AddObjectToObject(o, "env");
		if (hp_json_get(e, "valueFrom"))
			cJSON_AddStringToObject(env, n, "(valueFrom)");
		else
			add_clean(env, n, hp_json_str(e, "value") ? hp_json_str(e, "value") : "",
				  TEXT_CLIP);
	}
	copy_quantities(cJSON_AddObjectToObject(o, "requests"), hp_json_get(c, "resources.requests"));
	copy_quantities(cJSON_AddObjectToObject(o, "limits"), hp_json_get(c, "resources.limits"));
	mounts = cJSON_AddArrayToObject(o, "mounts");
	cJSON_ArrayForEach(m, hp_json_arr(c, "volumeMounts")) {
		cJSON *x = cJSON_CreateObject();

		add_clean(x, "name", hp_json_str(m, "name"), 253);
		add_clean(x, "path", hp_json_str(m, "mountPath"), TEXT_CLIP);
		cJSON_AddItemToArray(mounts, x);
	}
	cJSON_AddBoolToObject(o, "ipc_lock", 0);
	cJSON_ArrayForEach(e, hp_json_arr(c, "securityContext.capabilities.add"))
		if (cJSON_IsString(e) && (!strcmp(e->valuestring, "IPC_LOCK") ||
					  !strcmp(e->valuestring, "CAP_IPC_LOCK")))
			cJSON_ReplaceItemInObject(o, "ipc_lock", cJSON_CreateTrue());
	return o;
}

static cJSON *reduce_volume(const cJSON *v)
{
	static const char *const kinds[] = { "emptyDir", "hostPath", "persistentVolumeClaim",
					     "configMap", "secret", "csi", "projected" };
	cJSON *o = cJSON_CreateObject();
	size_t i;

	add_clean(o, "name", hp_json_str(v, "name"), 253);
	for (i = 0; i < HP_ARRAY_LEN(kinds); i++) {
		const cJSON *k = cJSON_GetObjectItemCaseSensitive(v, kinds[i]);

		if (!k)
			continue;
		cJSON_AddStringToObject(o, "kind", kinds[i]);
		add_clean(o, "medium", hp_json_str(k, "medium"), 32);
		add_clean(o, "size_limit", hp_json_str(k, "sizeLimit"), 32);
		add_clean(o, "path", hp_json_str(k, "path"), TEXT_CLIP);
		break;
	}
	return o;
}

/* A container status; *restarted when it ran before (restarts or a last state). */
static cJSON *reduce_status(const cJSON *cs, int init, int *restarted)
{
	static const char *const states[] = { "waiting", "running", "terminated" };
	cJSON *c = cJSON_CreateObject();
	const cJSON *last = hp_json_get(cs, "lastState.terminated");
	size_t i;

	add_clean(c, "name", hp_json_str(cs, "name"), 253);
	if (init)
		cJSON_AddTrueToObject(c, "init");
	cJSON_AddBoolToObject(c, "ready", hp_json_bool(cs, "ready", 0));
	cJSON_AddNumberToObject(c, "restarts", hp_json_num(cs, "restartCount", 0));
	for (i = 0; i < HP_ARRAY_LEN(states); i++) {
		const cJSON *st = hp_json_get(hp_json_get(cs, "state"), states[i]);

		if (!cJSON_IsObject(st))
			continue;
		cJSON_AddStringToObject(c, "state", states[i]);
		add_clean(c, "reason", hp_json_str(st, "reason"), 128);
		add_clean(c, "message", hp_json_str(st, "message"), TEXT_CLIP);
		if (i == 2)
			cJSON_AddNumberToObject(c, "exit_code", hp_json_num(st, "exitCode", 0));
		break;
	}
	if (cJSON_IsObject(last)) {
		add_clean(c, "last_reason", hp_json_str(last, "reason"), 128);
		cJSON_AddNumberToObject(c, "last_exit_code", hp_json_num(last, "exitCode", 0));
	}
	*restarted = hp_json_num(cs, "restartCount", 0) > 0 || cJSON_IsObject(last);
	return c;
}

static double efa_requested(const cJSON *pod)
{
	const cJSON *c;
	double n = 0;

	cJSON_ArrayForEach(c, hp_json_arr(pod, "spec.containers")) {
		const cJSON *lim = cJSON_GetObjectItemCaseSensitive(hp_json_get(c, "resources.limits"),
								    "vpc.amazonaws.com/efa");
		const cJSON *req = cJSON_GetObjectItemCaseSensitive(hp_json_get(c, "resources.requests"),
								    "vpc.amazonaws.com/efa");
		const cJSON *q = lim ? lim : req;

		if (cJSON_IsString(q))
			n += atof(q->valuestring);
		else if (cJSON_IsNumber(q))
			n += q->valuedouble;
	}
	return n;
}

static cJSON *reduce_pod(const cJSON *item, int *problem)
{
	static const char *const labels[] = { L_KUBEFLOW, L_REPLICA,
					      "training.kubeflow.org/replica-index", L_JOB, "app",
					      "app.kubernetes.io/name" };
	cJSON *p = cJSON_CreateObject(), *lab, *cs, *spec, *arr, *conds;
	const cJSON *c, *owner;
	const char *phase = hp_json_str(item, "status.phase");
	size_t i;
	int restarted = 0;

	*problem = !phase || strcmp(phase, "Running");
	add_clean(p, "namespace", hp_json_str(item, "metadata.namespace"), 253);
	add_clean(p, "name", hp_json_str(item, "metadata.name"), 253);
	add_clean(p, "node", hp_json_str(item, "spec.nodeName"), 253);
	add_clean(p, "phase", phase, 32);
	add_clean(p, "reason", hp_json_str(item, "status.reason"), 128);
	add_clean(p, "message", hp_json_str(item, "status.message"), TEXT_CLIP);
	owner = cJSON_GetArrayItem(hp_json_arr(item, "metadata.ownerReferences"), 0);
	if (owner) {
		cJSON *o = cJSON_AddObjectToObject(p, "owner");

		add_clean(o, "kind", hp_json_str(owner, "kind"), 64);
		add_clean(o, "name", hp_json_str(owner, "name"), 253);
		add_clean(o, "api_version", hp_json_str(owner, "apiVersion"), 128);
	}
	lab = cJSON_AddObjectToObject(p, "labels");
	for (i = 0; i < HP_ARRAY_LEN(labels); i++)
		add_clean(lab, labels[i], label(item, labels[i]), 253);
	conds = cJSON_AddArrayToObject(p, "conditions_false");
	cJSON_ArrayForEach(c, hp_json_arr(item, "status.conditions")) {
		const char *st = hp_json_str(c, "status");
		cJSON *x;

		if (!st || !strcmp(st, "True"))
			continue;
		x = cJSON_CreateObject();
		add_clean(x, "type", hp_json_str(c, "type"), 64);
		add_clean(x, "status", st, 16);
		add_clean(x, "reason", hp_json_str(c, "reason"), 128);
		add_clean(x, "message", hp_json_str(c, "message"), TEXT_CLIP);
		cJSON_AddItemToArray(conds, x);
	}
	cs = cJSON_AddArrayToObject(p, "containers");
	cJSON_ArrayForEach(c, hp_json_arr(item, "status.initContainerStatuses")) {
		int r = 0;
		cJSON *x = reduce_status(c, 1, &r);
		const char *reason = hp_json_str(x, "reason");

		/* An init container that has not finished cleanly keeps the pod from starting. */
		if (!reason || strcmp(reason, "Completed"))
			*problem = 1;
		cJSON_AddItemToArray(cs, x);
	}
	cJSON_ArrayForEach(c, hp_json_arr(item, "status.containerStatuses")) {
		int r = 0;

		cJSON_AddItemToArray(cs, reduce_status(c, 0, &r));
		restarted |= r;
		if (!hp_json_bool(c, "ready", 0))
			*problem = 1;
	}
	*problem |= restarted;
	cJSON_AddBoolToObject(p, "restarted", restarted);
	spec = cJSON_AddObjectToObject(p, "spec");
	arr = cJSON_AddArrayToObject(spec, "containers");
	cJSON_ArrayForEach(c, hp_json_arr(item, "spec.containers"))
		cJSON_AddItemToArray(arr, reduce_container_spec(c));
	arr = cJSON_AddArrayToObject(spec, "init_containers");
	cJSON_ArrayForEach(c, hp_json_arr(item, "spec.initContainers"))
		if (hp_json_str(c, "name"))
			cJSON_AddItemToArray(arr, clean_string(hp_json_str(c, "name"), 253));
	arr = cJSON_AddArrayToObject(spec, "volumes");
	cJSON_ArrayForEach(c, hp_json_arr(item, "spec.volumes"))
		cJSON_AddItemToArray(arr, reduce_volume(c));
	cJSON_AddNumberToObject(p, "efa_requested", efa_requested(item));
	return p;
}

/* Whether a pod is part of some training job (for a run without --job). */
static int training_pod(const cJSON *item)
{
	const cJSON *c;

	if (label(item, L_KUBEFLOW) || label(item, L_JOB))
		return 1;
	if (efa_requested(item) > 0)
		return 1;
	cJSON_ArrayForEach(c, hp_json_arr(item, "spec.containers"))
		if (cJSON_GetObjectItemCaseSensitive(hp_json_get(c, "resources.limits"),
						     "nvidia.com/gpu"))
			return 1;
	return 0;
}

/* kubectl get pods, in the namespace or all of them, with a label selector or none. */
static int list_pods(struct hp_kube *k, cJSON *nccl, const struct hp_nccl_collect_opts *o,
		     const char *selector, struct hp_kube_result *r)
{
	char sel[320];
	const char *args[8];
	size_t n = 0;

	args[n++] = "get";
	args[n++] = "pods";
	if (o->namespace_) {
		args[n++] = "--namespace";
		args[n++] = o->namespace_;
	} else {
		args[n++] = "--all-namespaces";
	}
	if (selector) {
		snprintf(sel, sizeof(sel), "--selector=%s", selector);
		args[n++] = sel;
	}
	args[n] = NULL;
	return get_items(k, nccl, "pods", args, r);
}

/*
 * The job's pods: training.kubeflow.org/job-name=<job> (PyTorchJob, MPIJob
 * and the other Kubeflow training operators), else job-name=<job> (a batch
 * Job); without a job, every training pod (a job label, an EFA or GPU
 * request). At most HP_NCCL_MAX_PODS are kept; pods_dropped counts the rest.
 */
static void collect_pods(struct hp_kube *k, cJSON *nccl, const struct hp_nccl_collect_opts *o)
{
	static const struct {
		enum hp_nccl_label which;
		const char *key;
		const char *name;
	} kinds[] = {
		{ HP_NCCL_LABEL_KUBEFLOW, L_KUBEFLOW, "kubeflow" },
		{ HP_NCCL_LABEL_JOB_NAME, L_JOB, "job-name" },
	};
	struct hp_kube_result r;
	cJSON *job = cJSON_AddObjectToObject(nccl, "job"), *out;
	const cJSON *it;
	size_t i;
	int total = 0, kept = 0, efa = 0, got = 0, dropped = 0;

	if (o->job) {
		add_str(job, "name", o->job);
		if (!label_value_ok(o->job)) {
			/* kubectl would read a comma as a second requirement: never pass it on. */
			cJSON_AddStringToObject(job, "error",
						"not a valid Kubernetes label value (at most 63 "
						"letters, digits, '-', '_' or '.')");
			return;
		}
		for (i = 0; i < HP_ARRAY_LEN(kinds); i++) {
			char sel[300];

			if (o->label != HP_NCCL_LABEL_ANY && o->label != kinds[i].which)
				continue;
			snprintf(sel, sizeof(sel), "%s=%s", kinds[i].key, o->job);
			if (list_pods(k, nccl, o, sel, &r)) {
				hp_kube_result_release(&r);
				return;
			}
			if (hp_json_len(r.json, "items") > 0 || o->label != HP_NCCL_LABEL_ANY ||
			    i + 1 == HP_ARRAY_LEN(kinds)) {
				add_str(job, "label", kinds[i].name);
				add_str(job, "selector", sel);
				got = 1;
				break;
			}
			hp_kube_result_release(&r);
		}
		if (!got)
			return;
	} else if (list_pods(k, nccl, o, NULL, &r)) {
		hp_kube_result_release(&r);
		return;
	}
	out = cJSON_AddArrayToObject(nccl, "pods");
	cJSON_ArrayForEach(it, hp_json_arr(r.json, "items")) {
		int problem = 0;
		cJSON *p;

		total++;
		if (!o->job && !training_pod(it))
			continue;
		if (efa_requested(it) > 0)
			efa++;
		if (kept >= HP_NCCL_MAX_PODS) {
			dropped++;
			continue;
		}
		p = reduce_pod(it, &problem);
		cJSON_AddBoolToObject(p, "problem", problem);
		cJSON_AddItemToArray(out, p);
		kept++;
	}
	cJSON_AddNumberToObject(nccl, "pods_listed", total);
	cJSON_AddNumberToObject(nccl, "pods_dropped", dropped);
	cJSON_AddNumberToObject(nccl, "pods_requesting_efa", efa);
	hp_kube_result_release(&r);
}

/* ---- services, NetworkPolicies, DaemonSets ---- */

static void scope_args(const struct hp_nccl_collect_opts *o, const char *what, const char **args)
{
	args[0] = "get";
	args[1] = what;
	if (o && o->namespace_) {
		args[2] = "--namespace";
		args[3] = o->namespace_;
		args[4] = NULL;
	} else {
		args[2] = "--all-namespaces";
		args[3] = NULL;
	}
}

static void copy_string_map(cJSON *dst, const cJSON *src)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, src)
		if (x->string && cJSON_IsString(x))
			add_clean(dst, x->string, x->valuestring, 253);
}

static void collect_services(struct hp_kube *k, cJSON *nccl, const struct hp_nccl_collect_opts *o)
{
	const char *args[6];
	struct hp_kube_result r;
	const cJSON *it, *port;
	cJSON *out;
	int n = 0;

	scope_args(o, "services", args);
	if (!get_items(k, nccl, "services", args, &r)) {
		out = cJSON_AddArrayToObject(nccl, "services");
		cJSON_ArrayForEach(it, hp_json_arr(r.json, "items")) {
			cJSON *s, *ports;
			const char *ip = hp_json_str(it, "spec.clusterIP");

			if (n++ >= MAX_OBJECTS)
				break;
			s = cJSON_CreateObject();
			add_clean(s, "namespace", hp_json_str(it, "metadata.namespace"), 253);
			add_clean(s, "name", hp_json_str(it, "metadata.name"), 253);
			add_clean(s, "cluster_ip", ip, 64);
			cJSON_AddBoolToObject(s, "headless", ip && !strcmp(ip, "None"));
			copy_string_map(cJSON_AddObjectToObject(s, "selector"),
					hp_json_get(it, "spec.selector"));
			ports = cJSON_AddArrayToObject(s, "ports");
			cJSON_ArrayForEach(port, hp_json_arr(it, "spec.ports"))
				cJSON_AddItemToArray(ports,
						     cJSON_CreateNumber(hp_json_num(port, "port", 0)));
			cJSON_AddItemToArray(out, s);
		}
		cJSON_AddBoolToObject(nccl, "services_truncated", n > MAX_OBJECTS);
	}
	hp_kube_result_release(&r);
}

/* A NetworkPolicy's peer or port lists are kept as the API returns them, bounded. */
static cJSON *bounded_copy(const cJSON *v)
{
	char *text = v ? cJSON_PrintUnformatted(v) : NULL;
	cJSON *copy = NULL;

	if (text && strlen(text) <= 16384)
		copy = cJSON_Duplicate(v, 1);
	free(text);
	return copy;
}

static void collect_policies(struct hp_kube *k, cJSON *nccl, const struct hp_nccl_collect_opts *o)
{
	const char *args[6];
	struct hp_kube_result r;
	const cJSON *it, *t;
	cJSON *out;
	int n = 0;

	scope_args(o, "networkpolicies", args);
	if (!get_items(k, nccl, "networkpolicies", args, &r)) {
		out = cJSON_AddArrayToObject(nccl, "network_policies");
		cJSON_ArrayForEach(it, hp_json_arr(r.json, "items")) {
			cJSON *p, *types, *x;
			const cJSON *spec = hp_json_get(it, "spec");

			if (n++ >= MAX_OBJECTS)
				break;
			p = cJSON_CreateObject();
			add_clean(p, "namespace", hp_json_str(it, "metadata.namespace"), 253);
			add_clean(p, "name", hp_json_str(it, "metadata.name"), 253);
			x = bounded_copy(hp_json_get(spec, "podSelector"));
			cJSON_AddItemToObject(p, "pod_selector", x ? x : cJSON_CreateNull());
			types = cJSON_AddArrayToObject(p, "policy_types");
			cJSON_ArrayForEach(t, hp_json_arr(spec, "policyTypes"))
				if (cJSON_IsString(t))
					cJSON_AddItemToArray(types, clean_string(t->valuestring, 32));
			/* Absent and [] both mean no rule: that direction allows nothing. */
			cJSON_AddNumberToObject(p, "ingress_rules", hp_json_len(spec, "ingress"));
			cJSON_AddNumberToObject(p, "egress_rules", hp_json_len(spec, "egress"));
			if ((x = bounded_copy(hp_json_get(spec, "ingress"))))
				cJSON_AddItemToObject(p, "ingress", x);
			if ((x = bounded_copy(hp_json_get(spec, "egress"))))
				cJSON_AddItemToObject(p, "egress", x);
			cJSON_AddItemToArray(out, p);
		}
		cJSON_AddBoolToObject(nccl, "network_policies_truncated", n > MAX_OBJECTS);
	}
	hp_kube_result_release(&r);
}

static void collect_daemonsets(struct hp_kube *k, cJSON *nccl)
{
	const char *args[6];
	struct hp_kube_result r;
	const cJSON *it, *c;
	cJSON *out;
	int n = 0;

	/* Every namespace: the EFA device plugin lives wherever its chart put it. */
	scope_args(NULL, "daemonsets", args);
	if (!get_items(k, nccl, "daemonsets", args, &r)) {
		out = cJSON_AddArrayToObject(nccl, "daemonsets");
		cJSON_ArrayForEach(it, hp_json_arr(r.json, "items")) {
			cJSON *d, *images;
			const cJSON *st = hp_json_get(it, "status");

			if (n++ >= MAX_OBJECTS)
				break;
			d = cJSON_CreateObject();
			add_clean(d, "namespace", hp_json_str(it, "metadata.namespace"), 253);
			add_clean(d, "name", hp_json_str(it, "metadata.name"), 253);
			images = cJSON_AddArrayToObject(d, "images");
			cJSON_ArrayForEach(c, hp_json_arr(it, "spec.template.spec.containers"))
				if (hp_json_str(c, "image"))
					cJSON_AddItemToArray(images,
							     clean_string(hp_json_str(c, "image"), TEXT_CLIP));
			copy_string_map(cJSON_AddObjectToObject(d, "node_selector"),
					hp_json_get(it, "spec.template.spec.nodeSelector"));
			cJSON_AddNumberToObject(d, "desired", hp_json_num(st, "desiredNumberScheduled", 0));
			cJSON_AddNumberToObject(d, "ready", hp_json_num(st, "numberReady", 0));
			cJSON_AddNumberToObject(d, "available", hp_json_num(st, "numberAvailable", 0));
			cJSON_AddItemToArray(out, d);
		}
		cJSON_AddBoolToObject(nccl, "daemonsets_truncated", n > MAX_OBJECTS);
	}
	hp_kube_result_release(&r);
}

/* ---- pod logs ---- */

struct log_task {
	char ns[256], pod[256], container[256];
	int previous;
	/* filled by the worker */
	enum hp_kube_status status;
	char message[512];
	size_t lines;
	int ran, capped;
};

struct log_pool {
	struct hp_kube *k;
	struct log_task *t;
	size_t n, next;
	int tail;
	struct hp_nccl_scan *scan;
	pthread_mutex_t lock;
};

static size_t count_lines(const char *s, size_t n)
{
	size_t c = 0, i;

	for (i = 0; i < n; i++)
		c += s[i] == '\n';
	return c + (n && s[n - 1] != '\n');
}

static void run_task(struct log_pool *p, struct log_task *t)
{
	char tail[32], source[800];
	const char *args[] = { "logs", "--namespace", t->ns, t->pod, "--container", t->container,
			       tail, t->previous ? "--previous" : NULL, NULL };
	struct hp_kube_result r;

	snprintf(tail, sizeof(tail), "--tail=%d", p->tail);
	snprintf(source, sizeof(source), "%s/%s/%s%s", t->ns, t->pod, t->container,
		 t->previous ? " (previous)" : "");
	hp_kube_run(p->k, args, 0, &r);
	pthread_mutex_lock(&p->lock);
	t->ran = 1;
	t->status = r.status;
	hp_strlcpy(t->message, r.message, sizeof(t->message));
	if (r.status == HP_KUBE_OK || r.status == HP_KUBE_TOO_BIG) {
		/* What arrived is scanned, even when kubectl was stopped at the cap. */
		t->capped = r.status == HP_KUBE_TOO_BIG;
		t->lines = count_lines(r.out.buf, r.out.len);
		hp_nccl_scan_text(p->scan, source, r.out.buf, r.out.len);
	}
	pthread_mutex_unlock(&p->lock);
	hp_kube_result_release(&r);
}

static void *log_worker(void *arg)
{
	struct log_pool *p = arg;

	for (;;) {
		struct log_task *t;

		pthread_mutex_lock(&p->lock);
		t = p->next < p->n ? &p->t[p->next++] : NULL;
		pthread_mutex_unlock(&p->lock);
		if (!t)
			return NULL;
		run_task(p, t);
	}
}

/* The log reads: problem pods first, then the others, up to log_pods pods. */
static size_t plan_logs(const cJSON *pods, int max_pods, struct log_task **out)
{
	struct log_task *t = NULL;
	size_t n = 0, alloc = 0;
	int pass, taken = 0;

	for (pass = 0; pass < 2; pass++) {
		const cJSON *pod;

		cJSON_ArrayForEach(pod, pods) {
			const cJSON *c;
			const char *phase = hp_json_str(pod, "phase");
			int problem = cJSON_IsTrue(cJSON_GetObjectItem(pod, "problem"));
			int failed = phase && !strcmp(phase, "Failed");

			if (problem != (pass == 0) || taken >= max_pods)
				continue;
			/* A pod that never started has no log to read. */
			if (phase && !strcmp(phase, "Pending") && !cJSON_IsTrue(cJSON_GetObjectItem(pod, "restarted")))
				continue;
			taken++;
			cJSON_ArrayForEach(c, hp_json_arr(pod, "containers")) {
				int k;

				if (cJSON_IsTrue(cJSON_GetObjectItem(c, "init")))
					continue;
				for (k = 0; k < 2; k++) {
					int restarted = hp_json_num(c, "restarts", 0) > 0 ||
							hp_json_get(c, "last_reason");

					/* --previous only where there is a previous container. */
					if (k == 1 && !restarted && !failed)
						continue;
					if (n == alloc) {
						alloc = alloc ? alloc * 2 : 16;
						t = xrealloc(t, alloc * sizeof(*t));
					}
					memset(&t[n], 0, sizeof(t[n]));
					hp_strlcpy(t[n].ns, or_empty(hp_json_str(pod, "namespace")),
						   sizeof(t[n].ns));
					hp_strlcpy(t[n].pod, or_empty(hp_json_str(pod, "name")),
						   sizeof(t[n].pod));
					hp_strlcpy(t[n].container, or_empty(hp_json_str(c, "name")),
						   sizeof(t[n].container));
					t[n].previous = k == 1;
					if (*t[n].ns && *t[n].pod && *t[n].container)
						n++;
				}
			}
		}
	}
	*out = t;
	return n;
}

static void collect_logs(struct hp_kube *k, cJSON *nccl, const struct hp_nccl_collect_opts *o)
{
	struct log_pool p;
	pthread_t th[LOG_WORKERS];
	size_t workers, i, started = 0;
	cJSON *reads, *scan;
	struct hp_nccl_scan_opts so = { 3, 300, 0 };

	memset(&p, 0, sizeof(p));
	p.k = k;
	p.tail = o->log_tail > 0 ? o->log_tail : DEFAULT_TAIL;
	p.n = plan_logs(cJSON_GetObjectItemCaseSensitive(nccl, "pods"),
			o->log_pods > 0 ? o->log_pods : DEFAULT_LOG_PODS, &p.t);
	p.scan = hp_nccl_scan_new(&so);
	pthread_mutex_init(&p.lock, NULL);
	workers = p.n < LOG_WORKERS ? p.n : LOG_WORKERS;
	for (i = 0; i < workers; i++)
		if (!pthread_create(&th[started], NULL, log_worker, &p))
			started++;
	/* Without a thread, the reads run here. */
	if (!started)
		log_worker(&p);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&p.lock);
	reads = cJSON_AddArrayToObject(nccl, "log_reads");
	for (i = 0; i < p.n; i++) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "namespace", p.t[i].ns);
		cJSON_AddStringToObject(x, "pod", p.t[i].pod);
		cJSON_AddStringToObject(x, "container", p.t[i].container);
		cJSON_AddBoolToObject(x, "previous", p.t[i].previous);
		cJSON_AddStringToObject(x, "status", hp_kube_status_name(p.t[i].status));
		if (p.t[i].status == HP_KUBE_OK || p.t[i].capped)
			cJSON_AddNumberToObject(x, "lines", (double)p.t[i].lines);
		if (p.t[i].capped)
			cJSON_AddTrueToObject(x, "capped");
		if (p.t[i].status != HP_KUBE_OK)
			add_clean(x, "error", p.t[i].message, TEXT_CLIP);
		cJSON_AddItemToArray(reads, x);
	}
	scan = hp_nccl_scan_json(p.scan);
	cJSON_AddNumberToObject(scan, "tail", p.tail);
	cJSON_AddItemToObject(nccl, "log_scan", scan);
	hp_nccl_scan_free(p.scan);
	free(p.t);
}

/* Whether hp_collect_kube verified kubectl for this cluster. */
static int kube_trusted(const struct hp_snapshot *s, cJSON *nccl)
{
	const cJSON *kube = hp_snapshot_get(s, "kube"), *sk;

	if (!kube) {
		cJSON *x = cJSON_AddObjectToObject(nccl, "kube_skipped");

		cJSON_AddStringToObject(x, "kind", "not_collected");
		cJSON_AddStringToObject(x, "message", "the Kubernetes view was not collected "
						      "(not an EKS cluster, or it did not run)");
		return 0;
	}
	sk = cJSON_GetObjectItemCaseSensitive(kube, "skipped");
	if (sk) {
		cJSON_AddItemToObject(nccl, "kube_skipped", cJSON_Duplicate(sk, 1));
		return 0;
	}
	return hp_json_str(kube, "kubectl.verified_by") != NULL;
}

void hp_nccl_collect_kube(struct hp_aws *a, const struct hp_kube_opts *ko,
			  const struct hp_nccl_collect_opts *o, struct hp_snapshot *s, cJSON *nccl)
{
	struct hp_nccl_collect_opts dflt;
	struct hp_kube k;

	if (!o) {
		memset(&dflt, 0, sizeof(dflt));
		o = &dflt;
	}
	if (!kube_trusted(s, nccl))
		return;
	if (o->namespace_ && !label_value_ok(o->namespace_)) {
		cJSON *x = cJSON_AddObjectToObject(nccl, "kube_skipped");

		cJSON_AddStringToObject(x, "kind", "bad_namespace");
		cJSON_AddStringToObject(x, "message", "the namespace is not a valid Kubernetes name");
		return;
	}
	hp_kube_init(&k, a->sys, ko);
	k.deadline_ms = a->deadline_ms;
	k.budget_s = a->budget_s;
	collect_pods(&k, nccl, o);
	collect_services(&k, nccl, o);
	collect_policies(&k, nccl, o);
	collect_daemonsets(&k, nccl);
	/* Logs are read with a smaller cap: --tail bounds the lines, not their length. */
	k.max_out = HP_NCCL_LOG_MAX_OUT;
	if (cJSON_GetObjectItemCaseSensitive(nccl, "pods"))
		collect_logs(&k, nccl, o);
	/* --exec: the fixed read-only script in running containers, with the usual cap. */
	k.max_out = HP_NCCL_LOG_MAX_OUT;
	if (o->exec && cJSON_GetObjectItemCaseSensitive(nccl, "pods"))
		hp_nccl_exec_pods(&k, nccl);
	hp_kube_release(&k);
}

/* ---- CloudWatch ---- */

/* Event ids already scanned (an event can match the terms of two filters). */
struct idset {
	char **v;
	size_t n, cap;
};

static unsigned long hash_str(const char *s)
{
	unsigned long h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* 1 when id was new (and is now in the set). */
static int idset_add(struct idset *set, const char *id)
{
	size_t i;

	if ((set->n + 1) * 2 > set->cap) {
		struct idset bigger = { NULL, 0, set->cap ? set->cap * 2 : 1024 };

		bigger.v = xcalloc(bigger.cap, sizeof(*bigger.v));
		for (i = 0; i < set->cap; i++)
			if (set->v[i]) {
				size_t j = hash_str(set->v[i]) % bigger.cap;

				while (bigger.v[j])
					j = (j + 1) % bigger.cap;
				bigger.v[j] = set->v[i];
				bigger.n++;
			}
		free(set->v);
		*set = bigger;
	}
	for (i = hash_str(id) % set->cap; set->v[i]; i = (i + 1) % set->cap)
		if (!strcmp(set->v[i], id))
			return 0;
	set->v[i] = xstrdup(id);
	set->n++;
	return 1;
}

static void idset_free(struct idset *set)
{
	size_t i;

	for (i = 0; i < set->cap; i++)
		free(set->v[i]);
	free(set->v);
}

void hp_nccl_collect_cloudwatch(struct hp_aws *a, const struct hp_nccl_collect_opts *o,
				struct hp_snapshot *s, cJSON *nccl)
{
	const char *name = hp_snap_cluster_name(s);
	const cJSON *logs = hp_snapshot_get(s, "logs");
	char id[64], group[512], *filters[CW_FILTERS];
	long since = o && o->since_s > 0 ? o->since_s : DEFAULT_SINCE_S;
	int max_pages = o && o->cw_pages > 0 ? o->cw_pages : DEFAULT_CW_PAGES;
	int max_events = o && o->cw_events > 0 ? o->cw_events : DEFAULT_CW_EVENTS;
	struct hp_nccl_scan_opts so = { 3, 300, 0 };
	struct hp_nccl_scan *scan;
	struct idset seen = { NULL, 0, 0 };
	size_t nf, f;
	int64_t end, start;
	int pages = 0, events = 0, truncated = 0, failed = 0;
	cJSON *cw = cJSON_AddObjectToObject(nccl, "cloudwatch"), *x;

	hp_snap_cluster_id(s, id);
	if (!name || !id[0]) {
		cJSON_AddStringToObject(cw, "skipped", "the cluster's name or id is not known");
		return;
	}
	/* The name, never the ARN the user may have given, as the log group holds it. */
	snprintf(group, sizeof(group), "/aws/sagemaker/Clusters/%s/%s", name, id);
	cJSON_AddStringToObject(cw, "group", group);
	if (logs && hp_json_get(logs, "group_found") && !hp_json_bool(logs, "group_found", 0)) {
		cJSON_AddStringToObject(cw, "skipped", "the cluster has no log group");
		return;
	}
	end = a->sys->now_ms(a->sys);
	start = end - (int64_t)since * 1000;
	cJSON_AddNumberToObject(cw, "window_s", (double)since);
	cJSON_AddNumberToObject(cw, "start_ms", (double)start);
	cJSON_AddNumberToObject(cw, "end_ms", (double)end);
	nf = hp_nccl_cloudwatch_filters(filters, CW_FILTERS, CW_FILTER_LEN);
	cJSON_AddNumberToObject(cw, "filters", (double)nf);
	scan = hp_nccl_scan_new(&so);
	for (f = 0; f < nf; f++) {
		cJSON *in = cJSON_CreateObject();
		int page, kept = 0;

		cJSON_AddStringToObject(in, "logGroupName", group);
		cJSON_AddStringToObject(in, "filterPattern", filters[f]);
		cJSON_AddNumberToObject(in, "startTime", (double)start);
		cJSON_AddNumberToObject(in, "endTime", (double)end);
		cJSON_AddNumberToObject(in, "limit", 1000);
		for (page = 0; page < max_pages && !failed; page++) {
			struct hp_aws_result r;
			const cJSON *ev;
			const char *tok;

			if (hp_aws_json(a, HP_SVC_LOGS, "FilterLogEvents", in, &r)) {
				hp_collect_record(s, HP_SVC_LOGS, "FilterLogEvents", &r);
				x = cJSON_AddObjectToObject(cw, "error");
				cJSON_AddStringToObject(x, "class", hp_aws_class_name(r.cls));
				add_clean(x, "code", r.code, 96);
				add_clean(x, "message", r.message, TEXT_CLIP);
				hp_aws_result_release(&r);
				failed = 1;
				break;
			}
			pages++;
			cJSON_ArrayForEach(ev, hp_json_arr(r.json, "events")) {
				const char *msg = hp_json_str(ev, "message");
				const char *eid = hp_json_str(ev, "eventId");
				const char *stream = hp_json_str(ev, "logStreamName");

				if (kept >= max_events) {
					truncated = 1;
					break;
				}
				kept++;
				if (!msg || (eid && !idset_add(&seen, eid)))
					continue;
				events++;
				hp_nccl_scan_text(scan, stream ? stream : "", msg, strlen(msg));
			}
			tok = hp_json_str(r.json, "nextToken");
			if (!tok || !*tok || kept >= max_events) {
				if (tok && *tok)
					truncated = 1;
				hp_aws_result_release(&r);
				break;
			}
			if (page + 1 == max_pages)
				truncated = 1;
			cJSON_DeleteItemFromObjectCaseSensitive(in, "nextToken");
			cJSON_AddStringToObject(in, "nextToken", tok);
			hp_aws_result_release(&r);
		}
		cJSON_Delete(in);
		if (failed)
			break;
	}
	for (f = 0; f < nf; f++)
		free(filters[f]);
	cJSON_AddNumberToObject(cw, "pages", pages);
	cJSON_AddNumberToObject(cw, "events", events);
	cJSON_AddBoolToObject(cw, "truncated", truncated);
	/* A failed search found nothing: no scan, so nothing reads as "no NCCL errors". */
	if (!failed)
		cJSON_AddItemToObject(cw, "scan", hp_nccl_scan_json(scan));
	hp_nccl_scan_free(scan);
	idset_free(&seen);
}

void hp_nccl_collect(struct hp_aws *a, const struct hp_kube_opts *ko,
		     const struct hp_nccl_collect_opts *o, struct hp_snapshot *s)
{
	struct hp_nccl_collect_opts dflt;
	cJSON *nccl = cJSON_CreateObject(), *opt;

	if (!o) {
		memset(&dflt, 0, sizeof(dflt));
		o = &dflt;
	}
	opt = cJSON_AddObjectToObject(nccl, "options");
	if (o->namespace_)
		add_clean(opt, "namespace", o->namespace_, 253);
	if (o->job)
		add_clean(opt, "job", o->job, 253);
	cJSON_AddNumberToObject(opt, "log_tail", o->log_tail > 0 ? o->log_tail : DEFAULT_TAIL);
	cJSON_AddNumberToObject(opt, "log_pods", o->log_pods > 0 ? o->log_pods : DEFAULT_LOG_PODS);
	cJSON_AddNumberToObject(opt, "since_s", (double)(o->since_s > 0 ? o->since_s : DEFAULT_SINCE_S));
	hp_nccl_collect_kube(a, ko, o, s, nccl);
	if (o->cloudwatch)
		hp_nccl_collect_cloudwatch(a, o, s, nccl);
	hp_snapshot_set(s, "nccl", nccl);
}
