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
#include "hp/nccl-facts.h"
#include "hp/text.h"
#include "nccl-exec.h"

#define DEFAULT_LOG_PODS 256
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
#define L_INDEX "training.kubeflow.org/replica-index"

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
	hp_text_addn(HP_TEXT_LOG, s, strlen(s), max, &b);
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

	hp_text_addn(HP_TEXT_LOG, or_empty(s), strlen(or_empty(s)), max, &b);
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
	if (!hp_kube_get_items(k, args, r))
		return 0;
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

		if (!hp_nccl_env_name(n))
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
	static const char *const labels[] = { L_KUBEFLOW, L_REPLICA, L_INDEX, L_JOB, "app",
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

/*
 * Each container's log is one `kubectl logs --tail=N` call, and kubectl's
 * start-up costs about as much CPU as a whole log read, so the pods of one
 * job are read by one call, `kubectl logs --selector=<job label> --container
 * C --prefix --ignore-errors`, whose output is streamed through the scan
 * (nothing but matches kept) and told apart by kubectl's "[pod/NAME/C] "
 * prefix. Such a batch is made only where the selector picks exactly the
 * planned pods (and pods without a log yet), so it reads no more than the
 * plan; a batch that fails leaves its unread pods to calls of their own. The
 * other reads (--previous, other containers, pods without a job label, small
 * jobs) run one call each, LOG_WORKERS at once.
 */
#define LOG_BATCH_MIN 3           /* fewer logs are read one call each */
#define LOG_BATCH_SIZE 16         /* see plan_batches */
#define LOG_LINE_MAX 65536        /* a streamed line longer than this is cut (and scanned) */
#define LOG_BATCH_MAX_OUT ((size_t)1 << 30)

struct log_task {
	char ns[256], pod[256], container[256];
	int previous;
	const cJSON *pod_json;
	/* a batch: one call for the tasks whose member_of is this task's index */
	int batch;
	char selector[400];
	size_t members;
	long member_of;           /* -1: read by a call of its own */
	int retry;                /* the batch did not read it: a call of its own follows */
	/* filled by the worker */
	enum hp_kube_status status;
	char message[512];
	size_t lines;
	int ran, capped, seen;
};

struct log_pool {
	struct hp_kube *k;
	struct log_task *t;
	size_t n, next, *order, norder;
	int tail;
	struct hp_nccl_scan *scan;
	pthread_mutex_t lock;
};

/* What one batch's stream is being split into. */
struct log_stream {
	struct log_pool *p;
	struct log_task *single;  /* a read of one log: every line is its */
	char source[800];         /* the scan's source name of single */
	size_t batch;             /* else the batch's index in p->t */
	struct hp_buf line;       /* the line being read; LOG_LINE_MAX at most */
	int cut;                  /* the rest of an overlong line is being dropped */
	size_t last;              /* the member of the last line (a pod's lines come together) */
	size_t stray;             /* lines of no member: kubectl's notes, pods not planned */
};

/* The member of batch b that is pod/container (n bytes of name), or NULL. */
static struct log_task *member(struct log_stream *st, const char *pod, size_t pn,
			       const char *container, size_t cn)
{
	struct log_pool *p = st->p;
	size_t i, k;

	for (k = 0; k < p->n; k++) {
		struct log_task *t;

		/* The last member first: kubectl prints one pod's lines together. */
		i = (st->last + k) % p->n;
		t = &p->t[i];
		if (t->member_of != (long)st->batch || strlen(t->pod) != pn || memcmp(t->pod, pod, pn))
			continue;
		if (container && (strlen(t->container) != cn || memcmp(t->container, container, cn)))
			continue;
		st->last = i;
		return t;
	}
	return NULL;
}

/* One whole line of a read's output (the pool's lock held). */
static void stream_line(struct log_stream *st, const char *l, size_t n)
{
	struct log_task *t;

	if (st->single) {
		st->single->lines++;
		hp_nccl_scan_line(st->p->scan, st->source, l, n);
		return;
	}
	if (n > 5 && !memcmp(l, "[pod/", 5)) {
		/* "[pod/NAME/CONTAINER] text": names hold neither '/' nor ']'. */
		const char *name = l + 5, *end = l + n, *slash, *close;
		char source[800];

		slash = memchr(name, '/', (size_t)(end - name));
		close = slash ? memchr(slash, ']', (size_t)(end - slash)) : NULL;
		if (!close || close + 1 >= end || close[1] != ' ' ||
		    !(t = member(st, name, (size_t)(slash - name), slash + 1,
				 (size_t)(close - slash - 1)))) {
			st->stray++;
			return;
		}
		t->seen = 1;
		t->lines++;
		snprintf(source, sizeof(source), "%s/%s/%s", t->ns, t->pod, t->container);
		hp_nccl_scan_line(st->p->scan, source, close + 2, (size_t)(end - close - 2));
		return;
	}
	/* --ignore-errors: a read that failed is kubectl's "error: ..." line, without prefix. */
	if (n > 7 && !memcmp(l, "error: ", 7)) {
		const char *q = NULL, *name, *e;
		size_t i;

		/* "... in pod \"NAME\" ...", or a refusal's "pods \"NAME\" is forbidden". */
		for (i = 7; i + 5 <= n && !q; i++)
			if (!memcmp(l + i, "pod \"", 5))
				q = l + i + 5;
			else if (i + 6 <= n && !memcmp(l + i, "pods \"", 6))
				q = l + i + 6;
		name = q;
		e = name ? memchr(name, '"', (size_t)(l + n - name)) : NULL;
		if (e && (t = member(st, name, (size_t)(e - name), NULL, 0))) {
			struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

			t->seen = 1;
			t->status = HP_KUBE_ERROR;
			hp_text_addn(HP_TEXT_LOG, l + 7, n - 7, sizeof(t->message) - 1, &b);
			hp_strlcpy(t->message, b.buf, sizeof(t->message));
			hp_buf_release(&b);
			return;
		}
	}
	st->stray++;
}

/* A piece of a batch's output: whole lines are scanned, the rest waits for its end. */
static void stream_out(void *ud, const char *data, size_t n)
{
	struct log_stream *st = ud;
	const char *end = data + n;

	pthread_mutex_lock(&st->p->lock);
	while (data < end) {
		const char *nl = memchr(data, '\n', (size_t)(end - data));
		size_t len = nl ? (size_t)(nl - data) : (size_t)(end - data);

		if (!st->cut) {
			size_t room = LOG_LINE_MAX - st->line.len;

			if (len > room) {
				/* Too long to keep whole: its start is scanned, the rest dropped. */
				hp_buf_putn(&st->line, data, room);
				st->cut = 1;
			} else {
				hp_buf_putn(&st->line, data, len);
			}
		}
		if (nl) {
			stream_line(st, st->line.buf, st->line.len);
			hp_buf_reset(&st->line);
			st->cut = 0;
		}
		data += len + (nl != NULL);
	}
	pthread_mutex_unlock(&st->p->lock);
}

/* One log read by a call of its own, streamed through the scan like a batch. */
static void run_task(struct log_pool *p, struct log_task *t)
{
	char tail[32];
	const char *args[] = { "logs", "--namespace", t->ns, t->pod, "--container", t->container,
			       tail, t->previous ? "--previous" : NULL, NULL };
	struct log_stream st;
	struct hp_kube_result r;

	snprintf(tail, sizeof(tail), "--tail=%d", p->tail);
	memset(&st, 0, sizeof(st));
	st.p = p;
	st.single = t;
	snprintf(st.source, sizeof(st.source), "%s/%s/%s%s", t->ns, t->pod, t->container,
		 t->previous ? " (previous)" : "");
	hp_buf_init(&st.line, LOG_LINE_MAX + 1);
	pthread_mutex_lock(&p->lock);
	t->lines = 0;
	pthread_mutex_unlock(&p->lock);
	/* What arrives is scanned, also from a read stopped at the cap. */
	hp_kube_stream(p->k, args, stream_out, &st, HP_NCCL_LOG_MAX_OUT, 0, &r);
	pthread_mutex_lock(&p->lock);
	if (st.line.len)
		stream_line(&st, st.line.buf, st.line.len);
	t->ran = 1;
	t->status = r.status;
	hp_strlcpy(t->message, r.message, sizeof(t->message));
	t->capped = r.status == HP_KUBE_TOO_BIG;
	pthread_mutex_unlock(&p->lock);
	hp_buf_release(&st.line);
	hp_kube_result_release(&r);
}

static void run_batch(struct log_pool *p, size_t b)
{
	struct log_task *bt = &p->t[b];
	char tail[32], sel[420], ctr[280];
	const char *args[] = { "logs", "--namespace", bt->ns, sel, ctr, tail, "--prefix",
			       "--ignore-errors", NULL };
	struct log_stream st;
	struct hp_kube_result r;
	size_t i, max;

	snprintf(tail, sizeof(tail), "--tail=%d", p->tail);
	snprintf(sel, sizeof(sel), "--selector=%s", bt->selector);
	snprintf(ctr, sizeof(ctr), "--container=%s", bt->container);
	memset(&st, 0, sizeof(st));
	st.p = p;
	st.batch = b;
	hp_buf_init(&st.line, LOG_LINE_MAX + 1);
	max = bt->members < LOG_BATCH_MAX_OUT / HP_NCCL_LOG_MAX_OUT ?
	      bt->members * HP_NCCL_LOG_MAX_OUT : LOG_BATCH_MAX_OUT;
	/* kubectl reads the pods one after another: time for each of them. */
	hp_kube_stream(p->k, args, stream_out, &st, max,
		       p->k->timeout_ms + 500L * (long)bt->members, &r);
	pthread_mutex_lock(&p->lock);
	if (st.line.len)
		stream_line(&st, st.line.buf, st.line.len);
	bt->ran = 1;
	bt->status = r.status;
	bt->lines = st.stray;
	hp_strlcpy(bt->message, r.message, sizeof(bt->message));
	for (i = 0; i < p->n; i++) {
		struct log_task *t = &p->t[i];

		if (t->member_of != (long)b)
			continue;
		if (t->seen || r.status == HP_KUBE_OK) {
			/* Read (or empty: a pod the selector found without a line). */
			t->ran = 1;
			if (t->status != HP_KUBE_ERROR)
				t->status = HP_KUBE_OK;
			continue;
		}
		/* Stopped before it (an old kubectl stops at the first error): on its own. */
		t->retry = 1;
	}
	if (r.status == HP_KUBE_TOO_BIG && st.last < p->n && p->t[st.last].member_of == (long)b)
		p->t[st.last].capped = 1;
	pthread_mutex_unlock(&p->lock);
	hp_buf_release(&st.line);
	hp_kube_result_release(&r);
}

static void *log_worker(void *arg)
{
	struct log_pool *p = arg;

	for (;;) {
		struct log_task *t;
		size_t i = 0;

		pthread_mutex_lock(&p->lock);
		t = p->next < p->norder ? &p->t[i = p->order[p->next++]] : NULL;
		pthread_mutex_unlock(&p->lock);
		if (!t)
			return NULL;
		if (t->batch)
			run_batch(p, i);
		else
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
					t[n].pod_json = pod;
					t[n].member_of = -1;
					if (*t[n].ns && *t[n].pod && *t[n].container)
						n++;
				}
			}
		}
	}
	*out = t;
	return n;
}

/* The value of label key on the collector's copy of a pod, or NULL. */
static const char *pod_label(const cJSON *pod, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(hp_json_get(pod, "labels"), key);

	return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

/* Whether a pod of the collector's list has no log yet (plan_logs leaves it out). */
static int pod_unstarted(const cJSON *pod)
{
	const char *phase = hp_json_str(pod, "phase");

	return phase && !strcmp(phase, "Pending") && !cJSON_IsTrue(cJSON_GetObjectItem(pod, "restarted"));
}

static int pod_has_container(const cJSON *pod, const char *name)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, hp_json_arr(pod, "spec.containers"))
		if (!strcmp(or_empty(hp_json_str(c, "name")), name))
			return 1;
	return 0;
}

/* A pod's replica index (0..999999), or -1 when it has none that is a number. */
static long pod_index(const cJSON *pod)
{
	const char *v = pod_label(pod, L_INDEX);
	size_t n = v ? strlen(v) : 0, i;

	if (!n || n > 6)
		return -1;
	for (i = 0; i < n; i++)
		if (v[i] < '0' || v[i] > '9')
			return -1;
	return atol(v);
}

struct member_ref {
	long index;
	size_t task;
};

static int by_index(const void *a, const void *b)
{
	const struct member_ref *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->task < y->task ? -1 : x->task > y->task;
}

/*
 * The planned current-log tasks that the selector key=value (and
 * L_REPLICA=rvalue when given) picks in task i's namespace with its
 * container, into m: their count, or 0 when the selector would also read a
 * pod the plan does not (one past --log-pods, one without that container)
 * or, with need_index, a pod without a replica index.
 */
static size_t select_members(const struct log_task *t, size_t n, size_t i, const cJSON *pods,
			     const char *key, const char *value, const char *rvalue,
			     int need_index, struct member_ref *m)
{
	const cJSON *pod;
	size_t j, count = 0;

	cJSON_ArrayForEach(pod, pods) {
		const char *ns = hp_json_str(pod, "namespace"), *name = hp_json_str(pod, "name");
		const char *v = pod_label(pod, key), *r = pod_label(pod, L_REPLICA);
		int found = 0;

		if (!ns || !name || strcmp(ns, t[i].ns) || !v || strcmp(v, value))
			continue;
		if (rvalue && (!r || strcmp(r, rvalue)))
			continue;
		if (!pod_has_container(pod, t[i].container) || (need_index && pod_index(pod) < 0))
			return 0;
		if (pod_unstarted(pod))
			continue;
		for (j = 0; j < n && !found; j++)
			if (!t[j].batch && !t[j].previous && t[j].member_of == -1 &&
			    !strcmp(t[j].pod, name) && !strcmp(t[j].ns, ns) &&
			    !strcmp(t[j].container, t[i].container)) {
				m[count].index = pod_index(pod);
				m[count++].task = j;
				found = 1;
			}
		if (!found)
			return 0;
	}
	return count;
}

/* A batch task for members m[0..count) with the selector given, appended to t. */
static void add_batch(struct log_task **tp, size_t *total, size_t *alloc, size_t like,
		      const char *selector, const struct member_ref *m, size_t count)
{
	struct log_task *t = *tp, *b;
	size_t j;

	if (*total == *alloc) {
		*alloc *= 2;
		t = *tp = xrealloc(t, *alloc * sizeof(*t));
	}
	b = &t[*total];
	memset(b, 0, sizeof(*b));
	b->batch = 1;
	b->member_of = -1;
	b->members = count;
	hp_strlcpy(b->ns, t[like].ns, sizeof(b->ns));
	hp_strlcpy(b->container, t[like].container, sizeof(b->container));
	hp_strlcpy(b->selector, selector, sizeof(b->selector));
	for (j = 0; j < count; j++)
		t[m[j].task].member_of = (long)*total;
	(*total)++;
}

/*
 * Batches for the planned reads (appended to *tp as tasks of their own), and
 * the order the workers take them in: batches first (each reads several
 * logs one after another), then the other reads in plan order. kubectl
 * reads a batch's logs one after another and its client allows itself
 * bursts of 10 requests, then 5 a second, so a batch of LOG_BATCH_SIZE
 * logs (and the pod list) waits about 1.4 s; in exchange it saves a kubectl
 * start-up, about 0.1 s of CPU, per log. A Kubeflow job's pods (which carry
 * training.kubeflow.org/replica-index) are split by index into even
 * batches of at most that size, read side by side; a job without indexes is
 * one batch when it is that small, else read pod by pod.
 */
static size_t plan_batches(struct log_task **tp, size_t n, const cJSON *pods, size_t **order,
			   size_t *norder)
{
	struct member_ref *m = xcalloc(n ? n : 1, sizeof(*m));
	size_t i, j, total = n, alloc = n ? n : 1, o = 0;

	for (i = 0; pods && i < n; i++) {
		struct log_task *t = *tp;
		const char *key = L_KUBEFLOW, *value, *rvalue;
		char sel[sizeof(t->selector)];
		size_t count = 0, chunks, size, k;
		int indexed, kubeflow = 1;

		if (t[i].previous || t[i].member_of != -1 || !t[i].pod_json)
			continue;
		if (!(value = pod_label(t[i].pod_json, L_KUBEFLOW))) {
			key = L_JOB;
			kubeflow = 0;
			value = pod_label(t[i].pod_json, L_JOB);
		}
		rvalue = pod_label(t[i].pod_json, L_REPLICA);
		/* Remote text goes into kubectl's selector only when it is a label value. */
		if (!value || !label_value_ok(value) || !label_value_ok(t[i].container) ||
		    (rvalue && !label_value_ok(rvalue)))
			continue;
		indexed = kubeflow && rvalue && pod_index(t[i].pod_json) >= 0;
		if (indexed)
			count = select_members(t, n, i, pods, key, value, rvalue, 1, m);
		if (!count) {
			indexed = 0;
			/* The job's pods, else those of the replica type (an MPIJob's
			   launcher runs another container than its workers). */
			count = select_members(t, n, i, pods, key, value, NULL, 0, m);
			if (!count && rvalue)
				count = select_members(t, n, i, pods, key, value, rvalue, 0, m);
			else
				rvalue = NULL;
		}
		if (count < LOG_BATCH_MIN || (!indexed && count > LOG_BATCH_SIZE))
			continue;
		if (!indexed) {
			snprintf(sel, sizeof(sel), "%s=%s%s%s", key, value, rvalue ? "," L_REPLICA "=" : "",
				 rvalue ? rvalue : "");
			add_batch(tp, &total, &alloc, i, sel, m, count);
			continue;
		}
		/* Even batches of at most LOG_BATCH_SIZE, by replica index (pods
		   sharing an index stay together: the selector picks them both). */
		qsort(m, count, sizeof(*m), by_index);
		chunks = (count + LOG_BATCH_SIZE - 1) / LOG_BATCH_SIZE;
		size = (count + chunks - 1) / chunks;
		for (j = 0; j < count; j = k) {
			struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

			hp_buf_printf(&b, "%s=%s,%s=%s,%s in (", key, value, L_REPLICA, rvalue, L_INDEX);
			for (k = j; k < count && (k - j < size || m[k].index == m[k - 1].index); k++)
				if (k == j || m[k].index != m[k - 1].index)
					hp_buf_printf(&b, "%s%ld", k == j ? "" : ",", m[k].index);
			hp_buf_puts(&b, ")");
			if (k - j >= LOG_BATCH_MIN && b.len < sizeof(sel))
				add_batch(tp, &total, &alloc, i, b.buf, m + j, k - j);
			hp_buf_release(&b);
		}
	}
	free(m);
	*order = xcalloc(total ? total : 1, sizeof(**order));
	for (i = n; i < total; i++)
		(*order)[o++] = i;
	for (i = 0; i < n; i++)
		if ((*tp)[i].member_of == -1)
			(*order)[o++] = i;
	*norder = o;
	return total;
}

/* The pool's workers over p->order until it is done. */
static void run_pool(struct log_pool *p)
{
	pthread_t th[LOG_WORKERS];
	size_t workers, i, started = 0;

	p->next = 0;
	workers = p->norder < LOG_WORKERS ? p->norder : LOG_WORKERS;
	for (i = 0; i < workers; i++)
		if (!pthread_create(&th[started], NULL, log_worker, p))
			started++;
	/* Without a thread, the reads run here. */
	if (!started)
		log_worker(p);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

static void collect_logs(struct hp_kube *k, cJSON *nccl, const struct hp_nccl_collect_opts *o)
{
	const cJSON *pods = cJSON_GetObjectItemCaseSensitive(nccl, "pods");
	struct log_pool p;
	size_t i, planned;
	cJSON *reads, *batches, *scan;
	struct hp_nccl_scan_opts so = { 3, 300, 0 };

	memset(&p, 0, sizeof(p));
	p.k = k;
	p.tail = o->log_tail > 0 ? o->log_tail : DEFAULT_TAIL;
	planned = plan_logs(pods, o->log_pods > 0 ? o->log_pods : DEFAULT_LOG_PODS, &p.t);
	/* Pods past HP_NCCL_MAX_PODS are not in the list: a selector might read them. */
	p.n = plan_batches(&p.t, planned, hp_json_num(nccl, "pods_dropped", 0) > 0 ? NULL : pods,
			   &p.order, &p.norder);
	p.scan = hp_nccl_scan_new(&so);
	pthread_mutex_init(&p.lock, NULL);
	run_pool(&p);
	/* What a batch did not read is read on its own. */
	p.norder = 0;
	for (i = 0; i < planned; i++)
		if (p.t[i].retry)
			p.order[p.norder++] = i;
	if (p.norder)
		run_pool(&p);
	pthread_mutex_destroy(&p.lock);
	reads = cJSON_AddArrayToObject(nccl, "log_reads");
	for (i = 0; i < planned; i++) {
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
		if (p.t[i].member_of >= 0 && !p.t[i].retry)
			cJSON_AddTrueToObject(x, "batched");
		if (p.t[i].status != HP_KUBE_OK)
			add_clean(x, "error", p.t[i].message, TEXT_CLIP);
		cJSON_AddItemToArray(reads, x);
	}
	batches = cJSON_AddArrayToObject(nccl, "log_batches");
	for (i = planned; i < p.n; i++) {
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "namespace", p.t[i].ns);
		cJSON_AddStringToObject(x, "selector", p.t[i].selector);
		cJSON_AddStringToObject(x, "container", p.t[i].container);
		cJSON_AddNumberToObject(x, "pods", (double)p.t[i].members);
		cJSON_AddStringToObject(x, "status", hp_kube_status_name(p.t[i].status));
		cJSON_AddNumberToObject(x, "other_lines", (double)p.t[i].lines);
		if (p.t[i].status != HP_KUBE_OK)
			add_clean(x, "error", p.t[i].message, TEXT_CLIP);
		cJSON_AddItemToArray(batches, x);
	}
	scan = hp_nccl_scan_json(p.scan);
	cJSON_AddNumberToObject(scan, "tail", p.tail);
	cJSON_AddItemToObject(nccl, "log_scan", scan);
	hp_nccl_scan_free(p.scan);
	free(p.order);
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
