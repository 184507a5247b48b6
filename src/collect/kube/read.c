/*
 * The Kubernetes collector: checks that kubectl's current server is this
 * cluster's EKS endpoint before believing anything it says, then reads
 * nodes (with their conditions), kube-system DaemonSets, pods (all of
 * kube-system, and elsewhere only those in a problem state),
 * FailedCreatePodSandBox events, Warning events about nodes,
 * namespaces and the tail of unhealthy aws-node pods' logs into snapshot
 * key "kube", each reduced to the fields the checks read. It never judges;
 * why kubectl could not be used is recorded as kube.skipped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/collect.h"
#include "hp/json.h"
#include "hp/kube.h"

/* Bounds on what one snapshot keeps. */
#define MAX_PODS 5000
#define MAX_EVENTS 1000
#define MAX_CONDITIONS 32
#define MAX_LOG_PODS 5
#define LOG_TAIL "--tail=200"
#define LOG_KEEP_LINES 200
#define TEXT_CLIP 500
#define NOT_INSTALLED "kubectl is not installed or not on PATH"

static void add_str(cJSON *o, const char *key, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, key, v);
}

/* A copy of s cut to at most max bytes (at a UTF-8 boundary). */
static void add_clipped(cJSON *o, const char *key, const char *s, size_t max)
{
	char *copy;
	size_t n;

	if (!s)
		return;
	n = strlen(s);
	if (n <= max) {
		cJSON_AddStringToObject(o, key, s);
		return;
	}
	while (n > max || (n && ((unsigned char)s[n] & 0xC0) == 0x80))
		n--;
	copy = xstrndup(s, n);
	cJSON_AddStringToObject(o, key, copy);
	free(copy);
}

static void skip(cJSON *kube, const char *kind, const struct hp_kube_result *r, const char *fmt,
		 ...) HP_PRINTF(4, 5);

/* kube.skipped = {kind, message, status, detail}: why no Kubernetes check can run. */
static void skip(cJSON *kube, const char *kind, const struct hp_kube_result *r, const char *fmt,
		 ...)
{
	cJSON *sk = cJSON_CreateObject();
	struct hp_buf msg = HP_BUF_INIT(HP_MAX_LINE);
	va_list ap;

	va_start(ap, fmt);
	if (hp_buf_vaddf(&msg, fmt, ap))
		hp_buf_puts(&msg, "(message too long)");
	va_end(ap);
	cJSON_AddStringToObject(sk, "kind", kind);
	cJSON_AddStringToObject(sk, "message", msg.buf);
	if (r) {
		cJSON_AddStringToObject(sk, "status", hp_kube_status_name(r->status));
		add_clipped(sk, "detail", r->message, TEXT_CLIP);
	}
	cJSON_AddItemToObject(kube, "skipped", sk);
	hp_buf_release(&msg);
}

/* kube.errors.<what> = {status, message}: one read that failed after access was verified. */
static void read_error(cJSON *kube, const char *what, const struct hp_kube_result *r)
{
	cJSON *errors = cJSON_GetObjectItemCaseSensitive(kube, "errors"), *e;

	if (!errors)
		errors = cJSON_AddObjectToObject(kube, "errors");
	e = cJSON_AddObjectToObject(errors, what);
	cJSON_AddStringToObject(e, "status", hp_kube_status_name(r->status));
	add_clipped(e, "message", r->message, TEXT_CLIP);
}

/* The API server kubectl would talk to, from `kubectl config view --minify`. */
static int current_server(struct hp_kube *k, cJSON *kube, struct hp_kube_result *r)
{
	static const char *const args[] = { "config", "view", "--minify", NULL };
	const cJSON *cl, *ctx;
	cJSON *info;

	if (hp_kube_run(k, args, HP_KUBE_JSON, r))
		return -1;
	cl = cJSON_GetArrayItem(hp_json_arr(r->json, "clusters"), 0);
	ctx = cJSON_GetArrayItem(hp_json_arr(r->json, "contexts"), 0);
	info = cJSON_AddObjectToObject(kube, "kubectl");
	add_str(info, "context", hp_json_str(r->json, "current-context"));
	add_str(info, "cluster", hp_json_str(ctx, "context.cluster"));
	add_str(info, "server", hp_json_str(cl, "cluster.server"));
	return 0;
}

/*
 * Whether kubectl's server is this cluster's: the EKS endpoint from
 * DescribeCluster when it was read, else (weaker) a kubeconfig cluster or
 * context named after the EKS cluster ARN, as update-kubeconfig names them.
 */
static int verify(struct hp_kube *k, const struct hp_snapshot *s, cJSON *kube)
{
	struct hp_kube_result r;
	const char *arn = hp_json_str(hp_snapshot_get(s, "cluster"), "Orchestrator.Eks.ClusterArn");
	const char *endpoint = hp_json_str(hp_snapshot_get(s, "eks"), "endpoint");
	cJSON *info;
	const char *server, *cluster, *context;
	int rc = -1;

	if (current_server(k, kube, &r)) {
		if (r.status == HP_KUBE_MISSING)
			skip(kube, "kubectl_missing", &r, "%s", NOT_INSTALLED);
		else if (r.status == HP_KUBE_TIMEOUT)
			skip(kube, "timeout", &r, "kubectl did not answer in time");
		else if (r.status == HP_KUBE_INTERRUPTED)
			skip(kube, "interrupted", &r, "the run was interrupted while kubectl ran");
		else if (r.status == HP_KUBE_PARSE || r.status == HP_KUBE_TOO_BIG)
			skip(kube, "output", &r, "kubectl printed something it should not");
		else
			skip(kube, "kubeconfig", &r, "kubectl has no usable current context");
		hp_kube_result_release(&r);
		return -1;
	}
	hp_kube_result_release(&r);
	info = cJSON_GetObjectItemCaseSensitive(kube, "kubectl");
	server = hp_json_str(info, "server");
	cluster = hp_json_str(info, "cluster");
	context = hp_json_str(info, "context");
	if (!server || !*server) {
		skip(kube, "kubeconfig", NULL, "kubectl's current context names no API server");
	} else if (endpoint && *endpoint) {
		if (hp_kube_same_server(server, endpoint)) {
			cJSON_AddStringToObject(info, "verified_by", "endpoint");
			rc = 0;
		} else {
			skip(kube, "server_mismatch", NULL,
			     "kubectl's current server %s is not this cluster's EKS endpoint %s",
			     server, endpoint);
		}
	} else if (arn && ((cluster && !strcmp(cluster, arn)) ||
			   (context && !strcmp(context, arn)))) {
		cJSON_AddStringToObject(info, "verified_by", "cluster-arn");
		rc = 0;
	} else {
		skip(kube, "unverified", NULL,
		     "the EKS endpoint is unknown (eks:DescribeCluster did not answer) and "
		     "kubectl's context '%s' is not named after %s", context ? context : "?",
		     arn ? arn : "?");
	}
	return rc;
}

static void node_labels(cJSON *dst, const cJSON *labels, int everything_sagemaker)
{
	static const char *const keep[] = {
		"node.kubernetes.io/instance-type", "topology.kubernetes.io/zone",
		"eks.amazonaws.com/nodegroup",
	};
	const cJSON *l;
	size_t i;

	cJSON_ArrayForEach(l, labels) {
		int want = everything_sagemaker &&
			   hp_starts_with(l->string, "sagemaker.amazonaws.com/");

		for (i = 0; !want && i < HP_ARRAY_LEN(keep); i++)
			want = !strcmp(l->string, keep[i]);
		if (want && cJSON_IsString(l))
			add_clipped(dst, l->string, l->valuestring, TEXT_CLIP);
	}
}

static const cJSON *condition(const cJSON *obj, const char *type)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, hp_json_arr(obj, "status.conditions")) {
		const char *t = hp_json_str(c, "type");
		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

/*
 * Every condition but Ready, as the API server gives them: the kubelet's
 * pressure conditions and whatever node-problem-detector or another agent
 * sets (KernelDeadlock, ReadonlyFilesystem, ...). Bounded per node.
 */
static void node_conditions(cJSON *n, const cJSON *item)
{
	cJSON *out = cJSON_AddArrayToObject(n, "conditions");
	const cJSON *c;
	int kept = 0;

	cJSON_ArrayForEach(c, hp_json_arr(item, "status.conditions")) {
		const char *t = hp_json_str(c, "type");
		cJSON *r;

		if (!t || !strcmp(t, "Ready"))
			continue;
		if (kept++ >= MAX_CONDITIONS) {
			cJSON_AddTrueToObject(n, "conditions_truncated");
			break;
		}
		r = cJSON_CreateObject();
		add_clipped(r, "type", t, TEXT_CLIP);
		add_str(r, "status", hp_json_str(c, "status"));
		add_clipped(r, "reason", hp_json_str(c, "reason"), TEXT_CLIP);
		add_clipped(r, "message", hp_json_str(c, "message"), TEXT_CLIP);
		add_str(r, "since", hp_json_str(c, "lastTransitionTime"));
		cJSON_AddItemToArray(out, r);
	}
}

static cJSON *reduce_node(const cJSON *item)
{
	cJSON *n = cJSON_CreateObject();
	const cJSON *ready = condition(item, "Ready");

	add_str(n, "name", hp_json_str(item, "metadata.name"));
	add_str(n, "provider_id", hp_json_str(item, "spec.providerID"));
	node_labels(cJSON_AddObjectToObject(n, "labels"), hp_json_get(item, "metadata.labels"), 1);
	node_labels(cJSON_AddObjectToObject(n, "annotations"),
		    hp_json_get(item, "metadata.annotations"), 1);
	if (ready) {
		cJSON *r = cJSON_AddObjectToObject(n, "ready");
		add_str(r, "status", hp_json_str(ready, "status"));
		add_str(r, "reason", hp_json_str(ready, "reason"));
		add_clipped(r, "message", hp_json_str(ready, "message"), TEXT_CLIP);
		add_str(r, "since", hp_json_str(ready, "lastTransitionTime"));
	}
	cJSON_AddBoolToObject(n, "unschedulable", hp_json_bool(item, "spec.unschedulable", 0));
	node_conditions(n, item);
	return n;
}

/* One container status; *problem is set when it is anything but running and clean. */
static cJSON *reduce_container(const cJSON *cs, int init, int *problem)
{
	static const char *const states[] = { "waiting", "running", "terminated" };
	cJSON *c = cJSON_CreateObject();
	const cJSON *last = hp_json_get(cs, "lastState.terminated");
	size_t i;

	add_str(c, "name", hp_json_str(cs, "name"));
	if (init)
		cJSON_AddTrueToObject(c, "init");
	cJSON_AddBoolToObject(c, "ready", hp_json_bool(cs, "ready", 0));
	cJSON_AddNumberToObject(c, "restarts", hp_json_num(cs, "restartCount", 0));
	for (i = 0; i < HP_ARRAY_LEN(states); i++) {
		const cJSON *st = hp_json_get(hp_json_get(cs, "state"), states[i]);

		if (!cJSON_IsObject(st))
			continue;
		cJSON_AddStringToObject(c, "state", states[i]);
		add_str(c, "reason", hp_json_str(st, "reason"));
		add_clipped(c, "message", hp_json_str(st, "message"), TEXT_CLIP);
		if (i == 2) {
			cJSON_AddNumberToObject(c, "exit_code", hp_json_num(st, "exitCode", 0));
			/* An init container that finished cleanly is the normal case. */
			if (!init || hp_json_num(st, "exitCode", 0) != 0)
				*problem = 1;
		} else if (i == 0) {
			*problem = 1;
		} else if (!init && !hp_json_bool(cs, "ready", 0)) {
			/* Running but failing its readiness probe. */
			*problem = 1;
		}
		break;
	}
	if (cJSON_IsObject(last)) {
		add_str(c, "last_reason", hp_json_str(last, "reason"));
		cJSON_AddNumberToObject(c, "last_exit_code", hp_json_num(last, "exitCode", 0));
		*problem = 1;
	}
	return c;
}

static cJSON *reduce_pod(const cJSON *item, int *problem)
{
	static const char *const keep[] = { "k8s-app", "app", "app.kubernetes.io/name" };
	cJSON *p = cJSON_CreateObject(), *labels, *cs;
	const cJSON *ready = condition(item, "Ready"), *c, *owner;
	const char *phase = hp_json_str(item, "status.phase");
	size_t i;

	*problem = !phase || strcmp(phase, "Running");
	add_str(p, "namespace", hp_json_str(item, "metadata.namespace"));
	add_str(p, "name", hp_json_str(item, "metadata.name"));
	add_str(p, "node", hp_json_str(item, "spec.nodeName"));
	add_str(p, "phase", phase);
	add_str(p, "reason", hp_json_str(item, "status.reason"));
	add_clipped(p, "message", hp_json_str(item, "status.message"), TEXT_CLIP);
	if (ready)
		add_str(p, "ready", hp_json_str(ready, "status"));
	owner = cJSON_GetArrayItem(hp_json_arr(item, "metadata.ownerReferences"), 0);
	if (owner) {
		char o[300];
		const char *kind = hp_json_str(owner, "kind"), *name = hp_json_str(owner, "name");

		snprintf(o, sizeof(o), "%s/%s", kind ? kind : "?", name ? name : "?");
		cJSON_AddStringToObject(p, "owner", o);
	}
	labels = cJSON_AddObjectToObject(p, "labels");
	for (i = 0; i < HP_ARRAY_LEN(keep); i++) {
		/* Label keys hold dots, so no dotted-path lookup here. */
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(
			hp_json_get(item, "metadata.labels"), keep[i]);
		if (cJSON_IsString(v))
			add_str(labels, keep[i], v->valuestring);
	}
	cs = cJSON_AddArrayToObject(p, "containers");
	cJSON_ArrayForEach(c, hp_json_arr(item, "status.initContainerStatuses"))
		cJSON_AddItemToArray(cs, reduce_container(c, 1, problem));
	cJSON_ArrayForEach(c, hp_json_arr(item, "status.containerStatuses"))
		cJSON_AddItemToArray(cs, reduce_container(c, 0, problem));
	return p;
}

static cJSON *reduce_daemonset(const cJSON *item)
{
	static const char *const fields[][2] = {
		{ "desired", "desiredNumberScheduled" }, { "current", "currentNumberScheduled" },
		{ "ready", "numberReady" }, { "available", "numberAvailable" },
		{ "unavailable", "numberUnavailable" }, { "updated", "updatedNumberScheduled" },
		{ "misscheduled", "numberMisscheduled" },
	};
	cJSON *d = cJSON_CreateObject();
	const cJSON *status = hp_json_get(item, "status");
	size_t i;

	add_str(d, "name", hp_json_str(item, "metadata.name"));
	add_str(d, "k8s_app", hp_json_str(item, "spec.selector.matchLabels.k8s-app"));
	for (i = 0; i < HP_ARRAY_LEN(fields); i++)
		cJSON_AddNumberToObject(d, fields[i][0], hp_json_num(status, fields[i][1], 0));
	return d;
}

static cJSON *reduce_event(const cJSON *item)
{
	cJSON *e = cJSON_CreateObject();
	const char *last = hp_json_str(item, "lastTimestamp");

	if (!last)
		last = hp_json_str(item, "eventTime");
	if (!last)
		last = hp_json_str(item, "metadata.creationTimestamp");
	add_str(e, "namespace", hp_json_str(item, "involvedObject.namespace"));
	add_str(e, "kind", hp_json_str(item, "involvedObject.kind"));
	add_str(e, "name", hp_json_str(item, "involvedObject.name"));
	add_str(e, "reason", hp_json_str(item, "reason"));
	add_str(e, "type", hp_json_str(item, "type"));
	add_clipped(e, "message", hp_json_str(item, "message"), TEXT_CLIP);
	cJSON_AddNumberToObject(e, "count", hp_json_num(item, "count", 1));
	add_str(e, "last", last);
	add_str(e, "host", hp_json_str(item, "source.host"));
	add_str(e, "source", hp_json_str(item, "source.component"));
	return e;
}

/* kubectl get ... -o json; items into *items. Failures recorded under errors.<what>. */
static int get_items(struct hp_kube *k, cJSON *kube, const char *what, const char *const *args,
		     struct hp_kube_result *r)
{
	if (!hp_kube_get_items(k, args, r))
		return 0;
	read_error(kube, what, r);
	return -1;
}

static void collect_nodes(struct hp_kube *k, cJSON *kube)
{
	static const char *const args[] = { "get", "nodes", NULL };
	struct hp_kube_result r;
	const cJSON *it;
	cJSON *out;

	if (!get_items(k, kube, "nodes", args, &r)) {
		out = cJSON_AddArrayToObject(kube, "nodes");
		cJSON_ArrayForEach(it, hp_json_arr(r.json, "items"))
			cJSON_AddItemToArray(out, reduce_node(it));
	}
	hp_kube_result_release(&r);
}

static void collect_daemonsets(struct hp_kube *k, cJSON *kube)
{
	static const char *const args[] = {
		"get", "daemonsets", "--namespace", "kube-system", NULL
	};
	struct hp_kube_result r;
	const cJSON *it;
	cJSON *out;

	if (!get_items(k, kube, "daemonsets", args, &r)) {
		out = cJSON_AddArrayToObject(kube, "daemonsets");
		cJSON_ArrayForEach(it, hp_json_arr(r.json, "items"))
			cJSON_AddItemToArray(out, reduce_daemonset(it));
	}
	hp_kube_result_release(&r);
}

/*
 * Completed pods are left out server-side: they are many and never a
 * problem. Healthy aws-node and kube-proxy pods (two per node) are counted,
 * not kept; their DaemonSets summarise them.
 */
static void collect_pods(struct hp_kube *k, cJSON *kube)
{
	static const char *const args[] = {
		"get", "pods", "--all-namespaces", "--field-selector=status.phase!=Succeeded", NULL
	};
	static const char *const apps[] = { "aws-node", "kube-proxy", "kube-dns" };
	struct hp_kube_result r;
	const cJSON *it;
	cJSON *out, *counts;
	int total = 0, kept = 0, dropped = 0, count[HP_ARRAY_LEN(apps)] = { 0 };
	size_t i;

	if (!get_items(k, kube, "pods", args, &r)) {
		out = cJSON_AddArrayToObject(kube, "pods");
		cJSON_ArrayForEach(it, hp_json_arr(r.json, "items")) {
			const char *ns = hp_json_str(it, "metadata.namespace");
			const cJSON *app = cJSON_GetObjectItemCaseSensitive(
				hp_json_get(it, "metadata.labels"), "k8s-app");
			int problem = 0, dns = 0;
			cJSON *p = reduce_pod(it, &problem);

			total++;
			if (ns && !strcmp(ns, "kube-system") && cJSON_IsString(app)) {
				for (i = 0; i < HP_ARRAY_LEN(apps); i++)
					if (!strcmp(app->valuestring, apps[i]))
						count[i]++;
				dns = !strcmp(app->valuestring, "kube-dns");
			}
			if ((problem || dns) && kept < MAX_PODS) {
				cJSON_AddItemToArray(out, p);
				kept++;
			} else {
				dropped += problem;
				cJSON_Delete(p);
			}
		}
		cJSON_AddNumberToObject(kube, "pods_total", total);
		/* Problem pods beyond the cap: the checks say their list is incomplete. */
		cJSON_AddNumberToObject(kube, "pods_dropped", dropped);
		counts = cJSON_AddObjectToObject(kube, "system_pods");
		for (i = 0; i < HP_ARRAY_LEN(apps); i++)
			cJSON_AddNumberToObject(counts, apps[i], count[i]);
	}
	hp_kube_result_release(&r);
}

/* The events a field selector picks, at most MAX_EVENTS, as kube.<key> and kube.<key>_truncated. */
static void collect_events_of(struct hp_kube *k, cJSON *kube, const char *key, const char *selector)
{
	const char *args[] = { "get", "events", "--all-namespaces", selector, NULL };
	struct hp_kube_result r;
	const cJSON *it;
	char flag[64];
	cJSON *out;
	int kept = 0;

	if (!get_items(k, kube, key, args, &r)) {
		out = cJSON_AddArrayToObject(kube, key);
		cJSON_ArrayForEach(it, hp_json_arr(r.json, "items"))
			if (kept++ < MAX_EVENTS)
				cJSON_AddItemToArray(out, reduce_event(it));
		snprintf(flag, sizeof(flag), "%s_truncated", key);
		cJSON_AddBoolToObject(kube, flag, hp_json_len(r.json, "items") > MAX_EVENTS);
	}
	hp_kube_result_release(&r);
}

static void collect_events(struct hp_kube *k, cJSON *kube)
{
	collect_events_of(k, kube, "events", "--field-selector=reason=FailedCreatePodSandBox");
}

/*
 * Warning events about nodes: what node-problem-detector reports (TaskHung,
 * OOMKilling, Ext4Error, ... and condition changes) and the kubelet's own
 * (EvictionThresholdMet). Normal events (recoveries) are left out server-side.
 */
static void collect_node_events(struct hp_kube *k, cJSON *kube)
{
	collect_events_of(k, kube, "node_events",
			  "--field-selector=involvedObject.kind=Node,type=Warning");
}

/* The aws-node container of a reduced pod, or NULL. */
static const cJSON *aws_node_container(const cJSON *pod)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, hp_json_arr(pod, "containers")) {
		const char *n = hp_json_str(c, "name");
		if (n && !strcmp(n, "aws-node") && !cJSON_IsTrue(cJSON_GetObjectItem(c, "init")))
			return c;
	}
	return NULL;
}

static void keep_tail(cJSON *entry, const char *text)
{
	cJSON *lines = cJSON_AddArrayToObject(entry, "lines");
	const char *p = text, *starts[LOG_KEEP_LINES];
	size_t lens[LOG_KEEP_LINES], n = 0, i, first;

	while (*p) {
		size_t len = strcspn(p, "\n");

		starts[n % LOG_KEEP_LINES] = p;
		lens[n % LOG_KEEP_LINES] = len > TEXT_CLIP ? TEXT_CLIP : len;
		n++;
		p += len + (p[len] == '\n');
	}
	first = n > LOG_KEEP_LINES ? n - LOG_KEEP_LINES : 0;
	for (i = first; i < n; i++) {
		char *line = xstrndup(starts[i % LOG_KEEP_LINES], lens[i % LOG_KEEP_LINES]);
		cJSON_AddItemToArray(lines, cJSON_CreateString(line));
		free(line);
	}
}

/*
 * The log tail of aws-node pods that are not ready or have restarted; the
 * previous container's log first, since a crash-looping container's own log
 * is usually empty.
 */
static void collect_aws_node_logs(struct hp_kube *k, cJSON *kube)
{
	const cJSON *pod;
	cJSON *out = NULL;
	int taken = 0;

	cJSON_ArrayForEach(pod, cJSON_GetObjectItemCaseSensitive(kube, "pods")) {
		const cJSON *c = aws_node_container(pod);
		const char *ns = hp_json_str(pod, "namespace"), *name = hp_json_str(pod, "name");
		const char *app = hp_json_str(pod, "labels.k8s-app");
		int pass;

		if (!c || !name || !ns || strcmp(ns, "kube-system") || !app ||
		    strcmp(app, "aws-node"))
			continue;
		if (cJSON_IsTrue(cJSON_GetObjectItem(c, "ready")) &&
		    hp_json_num(c, "restarts", 0) == 0)
			continue;
		if (taken++ >= MAX_LOG_PODS)
			break;
		if (!out)
			out = cJSON_AddArrayToObject(kube, "aws_node_logs");
		for (pass = hp_json_get(c, "last_reason") ? 0 : 1; pass < 2; pass++) {
			const char *args[] = { "logs", "--namespace", "kube-system", name,
					       "--container", "aws-node", LOG_TAIL,
					       pass == 0 ? "--previous" : NULL, NULL };
			struct hp_kube_result r;
			cJSON *entry = cJSON_CreateObject();

			cJSON_AddStringToObject(entry, "pod", name);
			add_str(entry, "node", hp_json_str(pod, "node"));
			cJSON_AddBoolToObject(entry, "previous", pass == 0);
			if (!hp_kube_run(k, args, 0, &r)) {
				keep_tail(entry, r.out.buf);
			} else {
				cJSON_AddStringToObject(entry, "status",
							hp_kube_status_name(r.status));
				add_clipped(entry, "error", r.message, TEXT_CLIP);
			}
			hp_kube_result_release(&r);
			cJSON_AddItemToArray(out, entry);
		}
	}
}

static void collect_namespaces(cJSON *kube, const struct hp_kube_result *r)
{
	cJSON *out = cJSON_AddArrayToObject(kube, "namespaces");
	const cJSON *it;

	cJSON_ArrayForEach(it, hp_json_arr(r->json, "items")) {
		const char *n = hp_json_str(it, "metadata.name");
		if (n)
			cJSON_AddItemToArray(out, cJSON_CreateString(n));
	}
}

/* The first read doubles as the authentication test. Returns -1 when nothing more can be read. */
static int first_read(struct hp_kube *k, cJSON *kube)
{
	static const char *const args[] = { "get", "namespaces", NULL };
	struct hp_kube_result r;
	int rc = 0;

	if (!get_items(k, kube, "namespaces", args, &r)) {
		collect_namespaces(kube, &r);
	} else {
		switch (r.status) {
		case HP_KUBE_AUTH:
			skip(kube, "auth", &r, "kubectl could not authenticate to the cluster");
			rc = -1;
			break;
		case HP_KUBE_UNREACHABLE:
		case HP_KUBE_TIMEOUT:
			skip(kube, "unreachable", &r, "kubectl could not reach the API server");
			rc = -1;
			break;
		case HP_KUBE_MISSING:
			skip(kube, "kubectl_missing", &r, "%s", NOT_INSTALLED);
			rc = -1;
			break;
		case HP_KUBE_CONFIG:
			skip(kube, "kubeconfig", &r, "kubectl has no usable current context");
			rc = -1;
			break;
		case HP_KUBE_INTERRUPTED:
			skip(kube, "interrupted", &r, "the run was interrupted while kubectl ran");
			rc = -1;
			break;
		default:
			/* Authenticated (e.g. forbidden to list namespaces): the rest may work. */
			break;
		}
		if (rc)
			cJSON_DeleteItemFromObjectCaseSensitive(kube, "errors");
	}
	hp_kube_result_release(&r);
	return rc;
}

/* The collector's reads, in order, for the progress line. */
static const char *const kube_steps[] = {
	"server check", "namespaces", "nodes", "DaemonSets", "pods", "pod events",
	"node events", "aws-node logs",
};
#define KUBE_STEPS ((int)HP_ARRAY_LEN(kube_steps))

static void step(const struct hp_kube_opts *o, int done)
{
	if (o && o->progress)
		o->progress(o->progress_ud, done, KUBE_STEPS, done < KUBE_STEPS ? kube_steps[done] : NULL);
}

/* Fill "kube": verify kubectl, then read what the Kubernetes checks need. */
void hp_collect_kube(struct hp_aws *a, const struct hp_kube_opts *o, struct hp_snapshot *s)
{
	struct hp_kube k;
	cJSON *kube;
	int done = 0;

	if (strcmp(hp_snap_orchestrator(s), "EKS"))
		return;
	kube = cJSON_CreateObject();
	/* Interrupted before this phase: the Kubernetes checks say they were not run. */
	if (a->sys->stop && *a->sys->stop) {
		skip(kube, "interrupted", NULL, "the run was interrupted before kubectl was run");
		hp_snapshot_set(s, "kube", kube);
		return;
	}
	hp_collect_eks(a, s);
	if (o && o->disabled) {
		skip(kube, "disabled", NULL, "Kubernetes checks turned off (--no-kube)");
		hp_snapshot_set(s, "kube", kube);
		return;
	}
	hp_kube_init(&k, a->sys, o);
	/* kubectl runs within what is left of the run budget. */
	k.deadline_ms = a->deadline_ms;
	k.budget_s = a->budget_s;
	k.debug = a->debug;
	step(o, done);
	if (!verify(&k, s, kube)) {
		step(o, ++done);
		if (!first_read(&k, kube)) {
			step(o, ++done);
			collect_nodes(&k, kube);
			step(o, ++done);
			collect_daemonsets(&k, kube);
			step(o, ++done);
			collect_pods(&k, kube);
			step(o, ++done);
			collect_events(&k, kube);
			step(o, ++done);
			collect_node_events(&k, kube);
			step(o, ++done);
			collect_aws_node_logs(&k, kube);
			done = KUBE_STEPS;
		}
	}
	if (o && o->progress)
		o->progress(o->progress_ud, done, KUBE_STEPS, NULL);
	hp_kube_release(&k);
	hp_snapshot_set(s, "kube", kube);
}
