/*
 * Kubernetes checks over snapshot key "kube": whether kubectl could be
 * trusted at all, HyperPod node labels (health status, fault types, deep
 * health checks), node readiness, the kube-system networking add-ons
 * (aws-node, kube-proxy, CoreDNS), pods stuck on sandbox creation, failing
 * workload pods, node conditions (pressure, node-problem-detector), Warning
 * events about nodes, evicted pods and the aws-hyperpod namespace. When kubectl could not be
 * used every check says SKIP, never PASS; a read that failed says so.
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

#define LABEL_HEALTH "sagemaker.amazonaws.com/node-health-status"
#define LABEL_DEEP "sagemaker.amazonaws.com/deep-health-check-status"
#define LABEL_FAULTS "sagemaker.amazonaws.com/fault-types"
#define LABEL_FAULT "sagemaker.amazonaws.com/fault-type"
#define DASH "\xE2\x80\x94"

/* aws-node log lines shown as evidence. */
#define LOG_EVIDENCE 5

/* ------------------------------------------------------------ lookups */

struct pair {
	const char *key;
	const char *val;
	const cJSON *obj;
};

struct index {
	struct pair *v;
	size_t n, alloc;
};

static int pair_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pair *)a)->key, ((const struct pair *)b)->key);
}

static void index_add(struct index *x, const char *key, const char *val, const cJSON *obj)
{
	struct pair *p;

	if (!key)
		return;
	p = hp_array_push(x);
	p->key = key;
	p->val = val;
	p->obj = obj;
}

static void index_sort(struct index *x)
{
	hp_array_sort(x, pair_cmp);
}

static const struct pair *index_find(const struct index *x, const char *key)
{
	struct pair k = { key, NULL, NULL };

	if (!key || !x->n)
		return NULL;
	return bsearch(&k, x->v, x->n, sizeof(*x->v), pair_cmp);
}

/* Everything a kube check needs; the node index is the snapshot's, built once. */
struct kctx {
	const struct hp_snapshot *snap;
	const cJSON *kube;
	const struct hp_kube_index *ix;  /* kube.nodes by name, instance ids, ListClusterNodes */
};

static const cJSON *label(const cJSON *node, const char *key)
{
	const cJSON *labels = cJSON_GetObjectItemCaseSensitive(node, "labels");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, key);

	return cJSON_IsString(v) ? v : NULL;
}

static const char *label_str(const cJSON *node, const char *key)
{
	const cJSON *v = label(node, key);

	return v ? v->valuestring : NULL;
}

static void kctx_init(struct kctx *c, const struct hp_snapshot *s)
{
	c->snap = s;
	c->kube = hp_snapshot_get(s, "kube");
	c->ix = hp_facts_kube(s);
}

/* The instance id of the i-th kube.nodes entry, "" when it cannot be told. */
static const char *iid_at(const struct kctx *c, size_t i)
{
	const struct hp_kube_node *k = hp_kube_index_at(c->ix, i);

	return k ? k->iid : "";
}

/* The instance id behind a Kubernetes node name, or NULL. */
static const char *iid_of(const struct kctx *c, const char *node_name)
{
	return hp_kube_index_iid(c->ix, node_name);
}

/* A HyperPod node: it carries the health label or is one of the cluster's instances. */
static int is_hyperpod(const struct kctx *c, const cJSON *node, const char *iid)
{
	return label(node, LABEL_HEALTH) || (iid && hp_kube_index_cluster_node(c->ix, iid));
}

/* "hyperpod-i-0abc (gpu-p5)" / "ip-10-1-2-3 (i-0abc, gpu-p5)": how a node is named in messages. */
static const char *node_label(const struct kctx *c, const char *name, const char *iid, char *out,
			      size_t n)
{
	const char *group = hp_json_str(hp_kube_index_cluster_node(c->ix, iid), "InstanceGroupName");
	char nm[HP_CHECK_CLIP_SIZE];

	hp_check_clip(name ? name : "?", nm);
	if (iid && name && strstr(name, iid))
		snprintf(out, n, group ? "%s (%s)" : "%s", nm, group);
	else if (iid)
		snprintf(out, n, group ? "%s (%s, %s)" : "%s (%s)", nm, iid, group);
	else
		snprintf(out, n, "%s", nm);
	return out;
}

/* ------------------------------------------------------------ state */

enum kstate { KS_NONE, KS_SKIPPED, KS_OK };

/* KS_NONE: not an EKS run or not collected; say nothing. */
static enum kstate kube_state(const struct hp_snapshot *s)
{
	const cJSON *k = hp_snapshot_get(s, "kube");

	if (!cJSON_IsObject(k))
		return KS_NONE;
	return cJSON_GetObjectItemCaseSensitive(k, "skipped") ? KS_SKIPPED : KS_OK;
}

/*
 * Which checks read which kube.<key>, in report order, and what each of
 * them judges: a read that failed is one WARN, from the first of them,
 * naming everything left unchecked; the others point to it.
 */
static const struct {
	const char *key, *check, *what;
} readers[] = {
	{ "nodes", "kube.node-health", "HyperPod node health labels" },
	{ "nodes", "kube.deep-health", "Deep health check labels" },
	{ "nodes", "kube.node-ready", "Node readiness" },
	{ "nodes", "kube.node-conditions", "Node conditions" },
	{ "pods", "kube.aws-node", "aws-node health" },
	{ "pods", "kube.kube-proxy", "kube-proxy health" },
	{ "pods", "kube.coredns", "CoreDNS health" },
	{ "pods", "kube.sandbox", "Pods stuck on FailedCreatePodSandBox" },
	{ "pods", "kube.workload-pods", "Workload pod states" },
	{ "pods", "kube.evictions", "Evicted pods" },
	{ "daemonsets", "kube.aws-node", "aws-node health" },
	{ "daemonsets", "kube.kube-proxy", "kube-proxy health" },
};

/* The first check that reads key, or NULL when the table has none. */
static const char *first_reader(const char *key)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(readers); i++)
		if (!strcmp(readers[i].key, key))
			return readers[i].check;
	return NULL;
}

/*
 * The array kube.<key> a check reads, or NULL after saying why it is not
 * there: SKIP when kubectl was not used, WARN when this read failed.
 */
static const cJSON *kube_data(const struct hp_snapshot *s, struct hp_emit *em, const char *key,
			      const char *what)
{
	const cJSON *k = hp_snapshot_get(s, "kube"), *err, *arr;
	char msg[HP_CHECK_CLIP_SIZE];

	switch (kube_state(s)) {
	case KS_NONE:
		return NULL;
	case KS_SKIPPED:
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL,
			 "%s not checked " DASH " kubectl could not be used for this cluster",
			 what);
		return NULL;
	case KS_OK:
		break;
	}
	arr = cJSON_GetObjectItemCaseSensitive(k, key);
	if (cJSON_IsArray(arr))
		return arr;
	err = hp_json_get(k, "errors");
	err = cJSON_GetObjectItemCaseSensitive(err, key);
	if (err) {
		const char *owner = first_reader(key);
		struct hp_buf list = HP_BUF_INIT(HP_MAX_LINE);
		size_t i;

		if (owner && strcmp(owner, em->check->id)) {
			hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL, "%s not checked " DASH " kubectl "
				 "could not read %s (%s says why)", what, key, owner);
			return NULL;
		}
		for (i = 0; i < HP_ARRAY_LEN(readers); i++)
			if (!strcmp(readers[i].key, key) && !strstr(list.buf, readers[i].what))
				hp_buf_printf(&list, "%s%s", list.len ? ", " : "", readers[i].what);
		hp_emitx(em, HP_TAG_WARN, HP_P2, "", NULL,
			 "Could not read %s with kubectl (%s: %s) " DASH " not checked: %s", key,
			 hp_check_str(err, "status", "error"),
			 hp_check_clip(hp_check_str(err, "message", ""), msg), list.len ? list.buf : what);
		hp_buf_release(&list);
	} else {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL,
			 "%s not checked " DASH " no %s collected", what, key);
	}
	return NULL;
}

/* ------------------------------------------------------------ batches */

/*
 * Findings of one class (same tag, priority, section, wording): a fold
 * (fold.h), so one per node while there are few, else one "<count> <many>"
 * finding listing them.
 */
struct batch {
	struct hp_fold f;
	const char *many;         /* folded message, after the count: "HyperPod nodes are NotReady" */
};

#define BATCH(tag, prio, section, many) { HP_FOLD_INIT(tag, prio, section), many }

static struct hp_fold_item *batch_add(struct batch *b, const char *node, const char *fmt, ...)
	HP_PRINTF(3, 4);

static struct hp_fold_item *batch_add(struct batch *b, const char *node, const char *fmt, ...)
{
	struct hp_fold_item *it;
	va_list ap;

	va_start(ap, fmt);
	it = hp_fold_vadd(&b->f, node, fmt, ap);
	va_end(ap);
	return it;
}

static void item_evidence(struct hp_fold_item *it, const char *line)
{
	hp_fold_evidence(it, line);
}

static void batch_emit(struct hp_emit *em, struct batch *b)
{
	hp_fold_emit(em, &b->f, "%zu %s", hp_fold_count(&b->f), b->many ? b->many : "");
}

/* ------------------------------------------------------------ kube.access */

/* "aws eks update-kubeconfig --name <eks> --region <r>" for this cluster. */
static void update_command(const struct hp_snapshot *s, char *out, size_t n)
{
	const char *arn = hp_json_str(hp_snapshot_get(s, "cluster"), "Orchestrator.Eks.ClusterArn");
	const char *name = arn ? strstr(arn, ":cluster/") : NULL;
	const char *region = hp_json_str(hp_snapshot_get(s, "meta"), "region");
	const char *p = arn, *end;
	char field_name[104];
	int field;

	/* arn:aws:eks:<region>:<account>:cluster/<name>: the region is the fourth field. */
	for (field = 0; p && field < 3; field++) {
		p = strchr(p, ':');
		p = p ? p + 1 : NULL;
	}
	char wname[256], wregion[128], field_region[48];

	end = p ? strchr(p, ':') : NULL;
	if (end && end > p && end - p < 40) {
		snprintf(field_region, sizeof(field_region), "%.*s", (int)(end - p), p);
		region = field_region;
	}
	if (name)
		snprintf(field_name, sizeof(field_name), "%.100s", name + 9);
	snprintf(out, n, "aws eks update-kubeconfig --name %s --region %s",
		 name ? hp_shell_word_s(field_name, wname, sizeof(wname)) : "<EKS_NAME>",
		 region ? hp_shell_word_s(region, wregion, sizeof(wregion)) : "<REGION>");
}

static void run_access(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *k = hp_snapshot_get(s, "kube"), *sk, *info;
	const char *kind, *server, *endpoint = hp_json_str(hp_snapshot_get(s, "eks"), "endpoint");
	char cmd[300], detail[HP_CHECK_CLIP_SIZE], srv[HP_CHECK_CLIP_SIZE];
	char why[2 * HP_CHECK_CLIP_SIZE + 300];
	struct hp_finding *f;

	if (kube_state(s) == KS_NONE)
		return;
	sk = cJSON_GetObjectItemCaseSensitive(k, "skipped");
	info = cJSON_GetObjectItemCaseSensitive(k, "kubectl");
	server = hp_json_str(info, "server");
	hp_check_clip(server ? server : "?", srv);
	if (!sk) {
		if (!strcmp(hp_check_str(info, "verified_by", ""), "cluster-arn"))
			hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
				 "kubectl's context %s is this cluster's EKS cluster (server %s; "
				 "the endpoint itself could not be read)",
				 hp_check_clip(hp_check_str(info, "context", "?"), detail), srv);
		else
			hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
				 "kubectl talks to this cluster's EKS API server (%s)", srv);
		return;
	}
	kind = hp_check_str(sk, "kind", "");
	if (!strcmp(kind, "disabled")) {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL,
			 "Kubernetes checks skipped (--no-kube)");
		return;
	}
	/* Not a fault of kubectl's set-up: the run was stopped before the reads ended. */
	if (!strcmp(kind, "interrupted")) {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL,
			 "Kubernetes checks not run " DASH " %s",
			 hp_check_clip(hp_check_str(sk, "message", "the run was interrupted"), detail));
		return;
	}
	update_command(s, cmd, sizeof(cmd));
	hp_check_clip(hp_check_str(sk, "detail", ""), detail);
	if (!strcmp(kind, "kubectl_missing"))
		snprintf(why, sizeof(why), "kubectl is not installed or not on PATH");
	else if (!strcmp(kind, "server_mismatch"))
		snprintf(why, sizeof(why), "kubectl points at another cluster (%s)", srv);
	else if (!strcmp(kind, "unverified"))
		snprintf(why, sizeof(why), "kubectl's cluster (%s) cannot be confirmed as this "
			 "cluster's EKS cluster", srv);
	else if (!strcmp(kind, "auth"))
		snprintf(why, sizeof(why), "kubectl could not authenticate to %s (%s)", srv,
			 *detail ? detail : "credentials rejected");
	else if (!strcmp(kind, "unreachable"))
		snprintf(why, sizeof(why), "kubectl could not reach %s (%s)", srv,
			 *detail ? detail : "no answer");
	else if (!strcmp(kind, "kubeconfig"))
		snprintf(why, sizeof(why), "kubectl has no usable context (%s)",
			 *detail ? detail : "no server");
	else
		snprintf(why, sizeof(why), "kubectl could not be used (%s)",
			 *detail ? detail : kind);
	f = hp_emitx(em, HP_TAG_WARN, HP_P1, "", NULL,
		     "%s " DASH " Kubernetes checks skipped; point kubectl at this cluster: %s",
		     why, cmd);
	if (server) {
		snprintf(why, sizeof(why), "kubectl server: %s (context %s)", srv,
			 hp_check_clip(hp_check_str(info, "context", "?"), detail));
		hp_finding_evidence(f, why);
	}
	if (endpoint) {
		snprintf(why, sizeof(why), "this cluster's EKS endpoint: %s",
			 hp_check_clip(endpoint, srv));
		hp_finding_evidence(f, why);
	}
	if (hp_json_str(sk, "detail")) {
		snprintf(why, sizeof(why), "kubectl said: %s",
			 hp_check_clip(hp_json_str(sk, "detail"), detail));
		hp_finding_evidence(f, why);
	}
}

/* ------------------------------------------------------------ node labels */

static int is_network_fault(const char *v)
{
	return v && hp_strcasestr(v, "network");
}

static void run_node_health(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *nodes = kube_data(s, em, "nodes", "HyperPod node health labels"), *n, *a;
	struct batch repl = BATCH(HP_TAG_FAIL, HP_P1, "F", "HyperPod nodes are "
						      "UnschedulablePendingReplacement");
	struct batch reboot = BATCH(HP_TAG_FAIL, HP_P1, "F", "HyperPod nodes are "
							"UnschedulablePendingReboot");
	struct batch net = BATCH(HP_TAG_FAIL, HP_P1, "A", "HyperPod nodes are unschedulable with "
						     "a network fault");
	struct batch other = BATCH(HP_TAG_FAIL, HP_P1, "F", "HyperPod nodes have an unexpected "
						       "health status");
	/*
	 * Unschedulable is AWS's documented state while deep health checks run
	 * (deep-health-check-status=InProgress): informational. With Failed it is
	 * a failure; with neither, a state to look at.
	 */
	struct batch dhc = BATCH(HP_TAG_WARN, HP_P2, "F", "HyperPod nodes are Unschedulable while "
						     "their deep health checks run (expected, usually within 2 hours)");
	struct batch dhc_failed = BATCH(HP_TAG_FAIL, HP_P1, "G+F", "HyperPod nodes are Unschedulable "
							    "after failing their deep health checks");
	struct batch dhc_other = BATCH(HP_TAG_FAIL, HP_P2, "F", "HyperPod nodes are Unschedulable "
							   "without deep health checks in progress");
	struct kctx c;
	size_t i = 0, labelled = 0, good = 0;

	if (!nodes)
		return;
	kctx_init(&c, s);
	cJSON_ArrayForEach(n, nodes) {
		const char *name = hp_json_str(n, "name"), *iid = iid_at(&c, i++);
		const char *st = label_str(n, LABEL_HEALTH);
		const char *faults = label_str(n, LABEL_FAULTS), *fault = label_str(n, LABEL_FAULT);
		const char *deep = label_str(n, LABEL_DEEP);
		char who[HP_CHECK_CLIP_SIZE * 2], clip[HP_CHECK_CLIP_SIZE],
			ev[HP_CHECK_CLIP_SIZE * 2];
		char fl[HP_CHECK_CLIP_SIZE * 2 + 32] = "";
		struct batch *b;
		struct hp_fold_item *it;

		if (!st)
			continue;
		labelled++;
		if (!strcmp(st, "Schedulable")) {
			good++;
			continue;
		}
		node_label(&c, name, *iid ? iid : NULL, who, sizeof(who));
		if (faults || fault)
			snprintf(fl, sizeof(fl), "; fault types: %s",
				 hp_check_clip(faults ? faults : fault, clip));
		if (is_network_fault(faults) || is_network_fault(fault))
			b = &net;
		else if (!strcmp(st, "UnschedulablePendingReplacement"))
			b = &repl;
		else if (!strcmp(st, "UnschedulablePendingReboot"))
			b = &reboot;
		else if (!strcmp(st, "Unschedulable"))
			b = deep && !strcmp(deep, "InProgress") ? &dhc
			    : deep && !strcmp(deep, "Failed") ? &dhc_failed : &dhc_other;
		else
			b = &other;
		if (!strcmp(st, "UnschedulablePendingReplacement"))
			it = batch_add(b, *iid ? iid : NULL,
				       "%s is UnschedulablePendingReplacement " DASH
				       " HyperPod replaces it%s", who, fl);
		else if (!strcmp(st, "UnschedulablePendingReboot"))
			it = batch_add(b, *iid ? iid : NULL,
				       "%s is UnschedulablePendingReboot " DASH
				       " HyperPod reboots it%s", who, fl);
		else if (b == &dhc)
			it = batch_add(b, *iid ? iid : NULL,
				       "%s is Unschedulable while its deep health checks run "
				       "(deep-health-check-status=InProgress) " DASH " expected; DCGM "
				       "diagnostics, EFA and NCCL tests usually finish within 2 hours, "
				       "look again if it stays longer%s", who, fl);
		else if (b == &dhc_failed)
			it = batch_add(b, *iid ? iid : NULL,
				       "%s is Unschedulable after failing its deep health checks "
				       "(deep-health-check-status=Failed)%s", who, fl);
		else if (!strcmp(st, "Unschedulable"))
			it = batch_add(b, *iid ? iid : NULL,
				       "%s is Unschedulable with no deep health check in progress "
				       "(deep-health-check-status=%s)%s", who,
				       deep ? hp_check_clip(deep, clip) : "not set", fl);
		else
			it = batch_add(b, *iid ? iid : NULL, "%s has health status %s%s", who,
				       hp_check_clip(st, clip), fl);
		if (faults) {
			snprintf(ev, sizeof(ev), LABEL_FAULTS "=%s", hp_check_clip(faults, clip));
			item_evidence(it, ev);
		}
		if (fault) {
			snprintf(ev, sizeof(ev), LABEL_FAULT "=%s", hp_check_clip(fault, clip));
			item_evidence(it, ev);
		}
		if (label_str(n, LABEL_DEEP)) {
			snprintf(ev, sizeof(ev), LABEL_DEEP "=%s",
				 hp_check_clip(label_str(n, LABEL_DEEP), clip));
			item_evidence(it, ev);
		}
		cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(n, "annotations")) {
			if (!cJSON_IsString(a) || !hp_strcasestr(a->string, "fault"))
				continue;
			snprintf(ev, sizeof(ev), "%.120s=%s", a->string,
				 hp_check_clip(a->valuestring, clip));
			item_evidence(it, ev);
		}
	}
	batch_emit(em, &net);
	batch_emit(em, &repl);
	batch_emit(em, &reboot);
	batch_emit(em, &other);
	batch_emit(em, &dhc_failed);
	batch_emit(em, &dhc_other);
	batch_emit(em, &dhc);
	if (!labelled)
		HP_CHECK_INFO(em, "No Kubernetes node carries %s (%d nodes read, none managed by "
			      "HyperPod)", LABEL_HEALTH, cJSON_GetArraySize(nodes));
	else if (good == labelled)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
			 "All %zu HyperPod nodes are Schedulable", labelled);
}

static void run_deep_health(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *nodes = kube_data(s, em, "nodes", "Deep health check labels"), *n;
	struct batch failed = BATCH(HP_TAG_FAIL, HP_P1, "G+F", "HyperPod nodes failed their deep "
							"health checks (deep-health-check-status=Failed)");
	struct kctx c;
	size_t i = 0, labelled = 0, running = 0;

	if (!nodes)
		return;
	kctx_init(&c, s);
	cJSON_ArrayForEach(n, nodes) {
		const char *st = label_str(n, LABEL_DEEP), *iid = iid_at(&c, i++);
		char who[HP_CHECK_CLIP_SIZE * 2];

		if (!st)
			continue;
		labelled++;
		if (!strcmp(st, "InProgress"))
			running++;
		if (strcmp(st, "Failed"))
			continue;
		node_label(&c, hp_json_str(n, "name"), *iid ? iid : NULL, who, sizeof(who));
		batch_add(&failed, *iid ? iid : NULL, "%s failed its deep health checks "
			  "(deep-health-check-status=Failed)", who);
	}
	if (running)
		HP_CHECK_INFO(em,
			      "%zu HyperPod node(s) are running deep health checks (InProgress)",
			      running);
	if (failed.f.n)
		batch_emit(em, &failed);
	else if (labelled)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
			 "No HyperPod node failed its deep health checks (%zu labelled)", labelled);
}

static void run_node_ready(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *nodes = kube_data(s, em, "nodes", "Node readiness"), *n;
	struct batch notready = BATCH(HP_TAG_FAIL, HP_P1, "F", "HyperPod nodes are NotReady");
	struct batch cni = BATCH(HP_TAG_FAIL, HP_P1, "O.1", "HyperPod nodes are NotReady because "
						     "pod networking is not ready");
	struct batch unknown = BATCH(HP_TAG_FAIL, HP_P1, "F", "HyperPod nodes have Ready status "
							 "Unknown (kubelet stopped reporting)");
	struct batch missing = BATCH(HP_TAG_WARN, HP_P1, "A+B", "Running HyperPod nodes are not "
							 "registered in Kubernetes");
	struct kctx c;
	size_t i = 0, hyperpod = 0, ready = 0, others = 0, mapped = 0;

	if (!nodes)
		return;
	kctx_init(&c, s);
	cJSON_ArrayForEach(n, nodes) {
		const char *iid = iid_at(&c, i++), *st = hp_json_str(n, "ready.status");
		const char *reason = hp_check_str(n, "ready.reason", "no reason");
		const char *msg = hp_check_str(n, "ready.message", "");
		char who[HP_CHECK_CLIP_SIZE * 2], clip[HP_CHECK_CLIP_SIZE], r[HP_CHECK_CLIP_SIZE];

		if (*iid)
			mapped++;
		if (!is_hyperpod(&c, n, *iid ? iid : NULL)) {
			others++;
			continue;
		}
		hyperpod++;
		node_label(&c, hp_json_str(n, "name"), *iid ? iid : NULL, who, sizeof(who));
		hp_check_clip(reason, r);
		if (st && !strcmp(st, "True")) {
			ready++;
		} else if (st && !strcmp(st, "False")) {
			int net = hp_strcasestr(msg, "cni") || hp_strcasestr(msg, "network");

			batch_add(net ? &cni : &notready, *iid ? iid : NULL,
				  "%s is NotReady: %s%s%s", who, r, *msg ? ": " : "",
				  hp_check_clip(msg, clip));
		} else {
			batch_add(&unknown, *iid ? iid : NULL, "%s has Ready status %s (%s%s%s)",
				  who, st ? "Unknown" : "missing", r, *msg ? ": " : "",
				  hp_check_clip(msg, clip));
		}
	}
	/* Instances HyperPod says are Running but Kubernetes does not know. */
	if (mapped) {
		const cJSON *hn;
		struct index seen = { NULL, 0, 0 };
		size_t count = (size_t)cJSON_GetArraySize(nodes);

		for (i = 0; i < count; i++)
			if (iid_at(&c, i)[0])
				index_add(&seen, iid_at(&c, i), NULL, NULL);
		index_sort(&seen);
		cJSON_ArrayForEach(hn, hp_snapshot_get(s, "nodes")) {
			const char *id = hp_json_str(hn, "InstanceId");

			if (!id || !hp_snap_node_running(hn) || index_find(&seen, id))
				continue;
			batch_add(&missing, id,
				  "%s (%s) is Running in HyperPod but has no Kubernetes "
				  "node " DASH " it did not join the EKS cluster",
				  id, hp_check_str(hn, "InstanceGroupName", "?"));
		}
		hp_array_release(&seen);
	}
	batch_emit(em, &cni);
	batch_emit(em, &notready);
	batch_emit(em, &unknown);
	batch_emit(em, &missing);
	if (hyperpod && ready == hyperpod)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL, "All %zu HyperPod nodes are Ready",
			 hyperpod);
	if (others)
		HP_CHECK_INFO(em, "%zu other Kubernetes node(s) are not HyperPod nodes and not "
			      "judged here", others);
}

static void run_namespace(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *ns = kube_data(s, em, "namespaces", "The aws-hyperpod namespace");

	if (!ns)
		return;
	if (hp_json_has_str(ns, "aws-hyperpod")) {
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
			 "Namespace aws-hyperpod exists (HyperPod Helm chart installed)");
		return;
	}
	hp_emit(em, HP_TAG_FAIL, "Namespace aws-hyperpod is missing " DASH " the HyperPod Helm "
		"chart is not installed");
}

/* ------------------------------------------------------------ pods */

/* Waiting reasons that mean a container cannot run. */
static int bad_waiting(const char *r)
{
	static const char *const bad[] = {
		"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName",
		"RunContainerError", "CreateContainerError", "CreateContainerConfigError", NULL
	};
	size_t i;

	for (i = 0; r && bad[i]; i++)
		if (!strcmp(r, bad[i]))
			return 1;
	return 0;
}

/*
 * What is wrong with a system pod, into out ("" when nothing): a container
 * that cannot run, exited with an error or is not ready, or a failed pod.
 */
static const char *system_pod_problem(const cJSON *pod, char *out, size_t n)
{
	const cJSON *c;
	const char *phase = hp_check_str(pod, "phase", "");

	out[0] = '\0';
	cJSON_ArrayForEach(c, hp_json_arr(pod, "containers")) {
		const char *state = hp_check_str(c, "state", ""),
			   *reason = hp_json_str(c, "reason");
		int init = cJSON_IsTrue(cJSON_GetObjectItem(c, "init"));

		if (!strcmp(state, "waiting") && bad_waiting(reason)) {
			snprintf(out, n, "%s%s", init ? "Init:" : "", reason);
			return out;
		}
		if (!strcmp(state, "terminated") && hp_json_num(c, "exit_code", 0) != 0) {
			snprintf(out, n, "%s%.64s", init ? "Init:" : "", reason ? reason : "Error");
			return out;
		}
	}
	if (!strcmp(phase, "Failed")) {
		snprintf(out, n, "Failed%s%.64s", hp_json_str(pod, "reason") ? ": " : "",
			 hp_check_str(pod, "reason", ""));
		return out;
	}
	cJSON_ArrayForEach(c, hp_json_arr(pod, "containers")) {
		if (!cJSON_IsTrue(cJSON_GetObjectItem(c, "init")) &&
		    !strcmp(hp_check_str(c, "state", ""), "running") &&
		    !cJSON_IsTrue(cJSON_GetObjectItem(c, "ready"))) {
			snprintf(out, n, "not ready");
			return out;
		}
	}
	return out;
}

static int pod_app_is(const cJSON *pod, const char *app)
{
	const char *ns = hp_json_str(pod, "namespace"), *a = hp_json_str(pod, "labels.k8s-app");

	return ns && a && !strcmp(ns, "kube-system") && !strcmp(a, app);
}

static const cJSON *daemonset(const cJSON *list, const char *name)
{
	const cJSON *d;

	cJSON_ArrayForEach(d, list) {
		const char *n = hp_json_str(d, "name");
		if (n && !strcmp(n, name))
			return d;
	}
	return NULL;
}

/* aws-node log lines that look like IPAMD, gRPC or ENI trouble, the last few. */
static void log_evidence(struct hp_fold_item *it, const cJSON *kube, const char *pod)
{
	static const char *const pattern[] = {
		"error", "failed", "refused", "timeout", "fatal", "grpc", "ipamd", "eni", NULL
	};
	const cJSON *e, *l;
	const char *hits[LOG_EVIDENCE];
	size_t n = 0, i, j;
	char line[HP_CHECK_CLIP_SIZE + 16];

	if (!pod)
		return; /* a pod without a name has no logs to match */
	cJSON_ArrayForEach(e, hp_json_arr(kube, "aws_node_logs")) {
		const char *p = hp_json_str(e, "pod");

		if (!p || strcmp(p, pod))
			continue;
		cJSON_ArrayForEach(l, hp_json_arr(e, "lines")) {
			if (!cJSON_IsString(l))
				continue;
			for (j = 0; pattern[j]; j++)
				if (hp_strcasestr(l->valuestring, pattern[j]))
					break;
			if (!pattern[j])
				continue;
			if (n == LOG_EVIDENCE) {
				memmove(hits, hits + 1, (LOG_EVIDENCE - 1) * sizeof(*hits));
				n--;
			}
			hits[n++] = l->valuestring;
		}
	}
	for (i = 0; i < n; i++) {
		char clip[HP_CHECK_CLIP_SIZE];
		cJSON *doc = hits[i][0] == '{' ? hp_json_parse(hits[i], strlen(hits[i]), NULL) : NULL;
		const char *msg = hp_json_str(doc, "msg");

		/* aws-node logs JSON lines; its level and msg are what matter. */
		if (msg) {
			char text[HP_MAX_LINE];

			snprintf(text, sizeof(text), "%s: %s", hp_check_str(doc, "level", "log"),
				 msg);
			snprintf(line, sizeof(line), "log: %s", hp_check_clip(text, clip));
		} else {
			snprintf(line, sizeof(line), "log: %s", hp_check_clip(hits[i], clip));
		}
		cJSON_Delete(doc);
		item_evidence(it, line);
	}
}

/* One kube-system networking add-on: its DaemonSet (if any) and its pods. */
struct addon {
	const char *app;          /* k8s-app label */
	const char *ds;           /* DaemonSet name or NULL */
	const char *title;        /* "aws-node", "kube-proxy", "CoreDNS" */
	const char *breaks;       /* what breaks: "pod networking broken on that node" */
	int logs;                 /* attach aws-node log lines */
};

static void run_addon(const struct hp_snapshot *s, struct hp_emit *em, const struct addon *a)
{
	char what[96];
	const cJSON *pods, *dss = NULL, *ds = NULL, *p;
	struct batch bad = BATCH(HP_TAG_FAIL, HP_P0, NULL, NULL);
	struct kctx c;
	char many[160];
	size_t seen_pods = 0;

	snprintf(what, sizeof(what), "%s health", a->title);
	pods = kube_data(s, em, "pods", what);
	if (!pods)
		return;
	if (a->ds) {
		dss = cJSON_GetObjectItemCaseSensitive(hp_snapshot_get(s, "kube"), "daemonsets");
		if (!cJSON_IsArray(dss)) {
			/* Say once why the DaemonSet view is missing; pods are still judged. */
			kube_data(s, em, "daemonsets", what);
			dss = NULL;
		}
		ds = daemonset(dss, a->ds);
	}
	snprintf(many, sizeof(many), "%s pods cannot run " DASH " %s", a->title, a->breaks);
	bad.many = many;
	kctx_init(&c, s);
	cJSON_ArrayForEach(p, pods) {
		char problem[96], who[HP_CHECK_CLIP_SIZE * 2], pn[HP_CHECK_CLIP_SIZE];
		const char *node = hp_json_str(p, "node"), *iid = iid_of(&c, node);
		struct hp_fold_item *it;

		if (!pod_app_is(p, a->app))
			continue;
		seen_pods++;
		if (!*system_pod_problem(p, problem, sizeof(problem)))
			continue;
		if (node)
			node_label(&c, node, iid, who, sizeof(who));
		else
			hp_strlcpy(who, "no node", sizeof(who));
		it = batch_add(&bad, iid, "%s pod %s on %s is %s " DASH " %s", a->title,
			       hp_check_clip(hp_json_str(p, "name"), pn), who, problem, a->breaks);
		{
			const cJSON *ct;
			char ev[HP_CHECK_CLIP_SIZE + 96];

			cJSON_ArrayForEach(ct, hp_json_arr(p, "containers")) {
				if (hp_json_num(ct, "restarts", 0) == 0 &&
				    !hp_json_str(ct, "last_reason"))
					continue;
				snprintf(ev, sizeof(ev), "container %.64s: %.0f restarts%s%.64s",
					 hp_check_str(ct, "name", "?"),
					 hp_json_num(ct, "restarts", 0),
					 hp_json_str(ct, "last_reason") ? ", last exit: " : "",
					 hp_check_str(ct, "last_reason", ""));
				item_evidence(it, ev);
			}
		}
		if (a->logs)
			log_evidence(it, hp_snapshot_get(s, "kube"), hp_json_str(p, "name"));
	}
	if (ds) {
		double desired = hp_json_num(ds, "desired", 0), ready = hp_json_num(ds, "ready", 0);
		double unavailable = hp_json_num(ds, "unavailable", 0);

		if (desired == 0) {
			hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL,
				 "%s DaemonSet schedules no pods (0 desired)", a->title);
		} else if (unavailable > (double)bad.f.n) {
			/* Not-ready pods the pod list does not explain: the DaemonSet says it. */
			hp_emitx(em, HP_TAG_FAIL, HP_P0, NULL, NULL,
				 "%.0f of %.0f %s pods not ready " DASH " %s", unavailable, desired,
				 a->title, a->breaks);
		} else if (!bad.f.n) {
			hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
				 "%s DaemonSet healthy (%.0f/%.0f ready)", a->title, ready,
				 desired);
		}
	} else if (a->ds && dss) {
		if (!seen_pods)
			HP_CHECK_INFO(em, "%s DaemonSet not found in kube-system (another CNI or "
				      "proxy in use?)", a->ds);
	} else if (!a->ds) {
		double n = hp_json_num(hp_snapshot_get(s, "kube"), "system_pods.kube-dns", -1);

		if (!seen_pods && n <= 0)
			HP_CHECK_INFO(em, "No %s pods (k8s-app=%s) found in kube-system", a->title,
				      a->app);
		else if (!bad.f.n)
			hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL, "%s healthy (%zu pods)",
				 a->title, seen_pods);
	}
	batch_emit(em, &bad);
}

static void run_aws_node(const struct hp_snapshot *s, struct hp_emit *em)
{
	static const struct addon a = {
		"aws-node", "aws-node", "aws-node", "pod networking broken on that node", 1
	};

	run_addon(s, em, &a);
}

static void run_kube_proxy(const struct hp_snapshot *s, struct hp_emit *em)
{
	static const struct addon a = { "kube-proxy", "kube-proxy", "kube-proxy",
					"service networking broken on that node", 0 };

	run_addon(s, em, &a);
}

static void run_coredns(const struct hp_snapshot *s, struct hp_emit *em)
{
	static const struct addon a = {
		"kube-dns", NULL, "CoreDNS", "DNS resolution in the cluster will fail", 0
	};

	run_addon(s, em, &a);
}

/* Pods still Pending whose sandbox (network namespace, IP) could not be made. */
static void run_sandbox(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *events = kube_data(s, em, "events", "Pods stuck on FailedCreatePodSandBox");
	const cJSON *pods, *e, *p;
	struct index pending = { NULL, 0, 0 }, nodes = { NULL, 0, 0 };
	struct kctx c;
	size_t i, stuck = 0;
	char (*keys)[600] = NULL;
	size_t nkeys = 0;

	if (!events)
		return;
	pods = kube_data(s, em, "pods", "Pods stuck on FailedCreatePodSandBox");
	if (!pods)
		return;
	kctx_init(&c, s);
	keys = xcalloc((size_t)cJSON_GetArraySize(pods) + 1, sizeof(*keys));
	cJSON_ArrayForEach(p, pods) {
		if (strcmp(hp_check_str(p, "phase", ""), "Pending"))
			continue;
		snprintf(keys[nkeys], sizeof(keys[nkeys]), "%.250s/%.250s",
			 hp_check_str(p, "namespace", ""), hp_check_str(p, "name", ""));
		index_add(&pending, keys[nkeys++], NULL, p);
	}
	index_sort(&pending);
	/* Group the stuck pods by node: the fault is almost always the node's CNI. */
	cJSON_ArrayForEach(e, events) {
		char key[600];
		const struct pair *hit;
		const char *node;

		if (strcmp(hp_check_str(e, "kind", "Pod"), "Pod"))
			continue;
		snprintf(key, sizeof(key), "%.250s/%.250s", hp_check_str(e, "namespace", ""),
			 hp_check_str(e, "name", ""));
		hit = index_find(&pending, key);
		if (!hit)
			continue;
		node = hp_json_str(hit->obj, "node");
		if (!node)
			node = hp_check_str(e, "host", "");
		index_add(&nodes, node && *node ? node : "(no node)", hit->key, e);
	}
	index_sort(&nodes);
	for (i = 0; i < nodes.n;) {
		size_t j, k;
		const char *node = nodes.v[i].key, *iid = iid_of(&c, node);
		const char *section = "O";
		char who[HP_CHECK_CLIP_SIZE * 2], ev[HP_CHECK_CLIP_SIZE + 600],
			clip[HP_CHECK_CLIP_SIZE];
		struct hp_finding *f;
		size_t count = 0;

		for (j = i; j < nodes.n && !strcmp(nodes.v[j].key, node); j++) {
			const char *m = hp_check_str(nodes.v[j].obj, "message", "");

			/* One pod may have several events; count pods. */
			for (k = i; k < j && strcmp(nodes.v[k].val, nodes.v[j].val); k++)
				;
			if (k == j)
				count++;
			/* Address exhaustion (O.2) explains more than the CNI failing (O.1). */
			if (hp_strcasestr(m, "assign an IP") || hp_strcasestr(m, "insufficient") ||
			    hp_strcasestr(m, "no available"))
				section = "O.2";
			else if (strcmp(section, "O.2") &&
				 (hp_strcasestr(m, "ipamd") || hp_strcasestr(m, "aws-cni") ||
				  hp_strcasestr(m, "50051")))
				section = "O.1";
		}
		node_label(&c, node, iid, who, sizeof(who));
		f = hp_emitx(em, HP_TAG_FAIL, HP_P1, section, iid,
			     "%zu pod(s) on %s stuck Pending with FailedCreatePodSandBox", count,
			     who);
		for (k = i; k < j; k++) {
			snprintf(ev, sizeof(ev), "%s: %s", nodes.v[k].val,
				 hp_check_clip(hp_check_str(nodes.v[k].obj, "message", ""), clip));
			hp_finding_evidence(f, ev);
		}
		stuck += count;
		i = j;
	}
	if (!stuck)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
			 "No pod is stuck Pending with FailedCreatePodSandBox");
	free(keys);
	hp_array_release(&pending);
	hp_array_release(&nodes);
}

/* The failure class of a workload pod: OOMKilled first (it explains the crash loop). */
static const char *workload_problem(const cJSON *pod, const cJSON **which)
{
	static const char *const order[] = {
		"OOMKilled", "CrashLoopBackOff", "ImagePullBackOff", "RunContainerError"
	};
	const cJSON *c;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(order); i++) {
		cJSON_ArrayForEach(c, hp_json_arr(pod, "containers")) {
			const char *r = hp_check_str(c, "reason", ""),
				   *l = hp_check_str(c, "last_reason", "");
			int hit = 0;

			switch (i) {
			case 0:
				hit = !strcmp(r, "OOMKilled") || !strcmp(l, "OOMKilled");
				break;
			case 1:
				hit = !strcmp(r, "CrashLoopBackOff");
				break;
			case 2:
				hit = !strcmp(r, "ImagePullBackOff") ||
				      !strcmp(r, "ErrImagePull") || !strcmp(r, "InvalidImageName");
				break;
			default:
				hit = !strcmp(r, "RunContainerError") ||
				      !strcmp(r, "CreateContainerError");
				break;
			}
			if (hit) {
				*which = c;
				return order[i];
			}
		}
	}
	return NULL;
}

struct wgroup {
	const char *reason, *ns, *node;
	cJSON *pods;              /* evidence lines */
};

static void run_workload(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *pods = kube_data(s, em, "pods", "Workload pod states"), *p;
	struct wgroup *g = NULL;
	struct kctx c;
	size_t ng = 0, galloc = 0, i, bad = 0;
	double dropped;

	if (!pods)
		return;
	kctx_init(&c, s);
	cJSON_ArrayForEach(p, pods) {
		const cJSON *ct = NULL;
		const char *ns = hp_check_str(p, "namespace", "?"),
			   *node = hp_check_str(p, "node", "(unscheduled)");
		const char *why;
		char line[HP_CHECK_CLIP_SIZE * 2 + 128], pn[HP_CHECK_CLIP_SIZE];

		if (!strcmp(ns, "kube-system") || !(why = workload_problem(p, &ct)))
			continue;
		bad++;
		for (i = 0; i < ng; i++)
			if (g[i].reason == why && !strcmp(g[i].ns, ns) && !strcmp(g[i].node, node))
				break;
		if (i == ng) {
			g = hp_array_grow(g, &galloc, ng, 1, sizeof(*g));
			g[ng].reason = why;
			g[ng].ns = ns;
			g[ng].node = node;
			g[ng].pods = cJSON_CreateArray();
			ng++;
		}
		hp_check_clip(hp_json_str(p, "name"), pn);
		if (hp_json_get(ct, "last_exit_code"))
			snprintf(line, sizeof(line),
				 "%s (container %.64s, %.0f restarts, last exit code %.0f)", pn,
				 hp_check_str(ct, "name", "?"), hp_json_num(ct, "restarts", 0),
				 hp_json_num(ct, "last_exit_code", 0));
		else
			snprintf(line, sizeof(line), "%s (container %.64s, %.0f restarts)", pn,
				 hp_check_str(ct, "name", "?"), hp_json_num(ct, "restarts", 0));
		cJSON_AddItemToArray(g[i].pods, cJSON_CreateString(line));
	}
	for (i = 0; i < ng; i++) {
		char who[HP_CHECK_CLIP_SIZE * 2], nsc[HP_CHECK_CLIP_SIZE];
		const char *iid = iid_of(&c, g[i].node);
		struct hp_finding *f;
		const cJSON *e;

		node_label(&c, g[i].node, iid, who, sizeof(who));
		f = hp_emitx(em, HP_TAG_FAIL, HP_P1, NULL, iid,
			     "%d pod(s) in namespace %s on %s are %s",
			     cJSON_GetArraySize(g[i].pods), hp_check_clip(g[i].ns, nsc), who,
			     g[i].reason);
		cJSON_ArrayForEach(e, g[i].pods)
			hp_finding_evidence(f, e->valuestring);
		cJSON_Delete(g[i].pods);
	}
	free(g);
	dropped = hp_json_num(hp_snapshot_get(s, "kube"), "pods_dropped", 0);
	if (dropped > 0)
		hp_emitx(em, HP_TAG_WARN, HP_P2, "", NULL,
			 "%.0f more pods in a problem state were not kept (cap reached) " DASH
			 " the list above is incomplete", dropped);
	else if (!bad)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
			 "No workload pod is CrashLoopBackOff, OOMKilled, ImagePullBackOff or "
			 "RunContainerError (%.0f pods read)",
			 hp_json_num(hp_snapshot_get(s, "kube"), "pods_total", 0));
}

/* ------------------------------------------------------------ node conditions */

/*
 * What a node condition or a node event means, by its type or reason: the
 * kubelet's pressure conditions, node-problem-detector's default monitors
 * (kernel-monitor, readonly-monitor, systemd-monitor, health-checker,
 * docker-monitor) and the kubelet's own node events. Matched exactly.
 */
struct nclass {
	const char *names;        /* "|A|B|": condition types or event reasons */
	enum hp_tag tag;
	enum hp_prio prio;
	const char *section;
	const char *many;         /* the folded wording, after the count */
	const char *why;          /* what it means, after the node's line */
};

static const struct nclass cond_classes[] = {
	{ "|ReadonlyFilesystem|XfsShutdown|", HP_TAG_FAIL, HP_P0, "I.8",
	  "HyperPod nodes report a read-only or shut-down filesystem",
	  "writes to that filesystem fail" },
	{ "|CperHardwareErrorFatal|", HP_TAG_FAIL, HP_P0, "N.1",
	  "HyperPod nodes report a fatal hardware error", "drain and replace the node" },
	{ "|DiskPressure|", HP_TAG_FAIL, HP_P1, "I.2",
	  "HyperPod nodes are under DiskPressure",
	  "the kubelet evicts pods and admits no new ones" },
	{ "|MemoryPressure|", HP_TAG_FAIL, HP_P1, "I.3",
	  "HyperPod nodes are under MemoryPressure", "the kubelet evicts pods" },
	{ "|PIDPressure|", HP_TAG_FAIL, HP_P1, "I",
	  "HyperPod nodes are under PIDPressure", "new processes and pods cannot start" },
	{ "|KernelDeadlock|", HP_TAG_FAIL, HP_P1, "N.1",
	  "HyperPod nodes report a kernel deadlock", "tasks are stuck in the kernel" },
	{ "|FrequentKubeletRestart|KubeletUnhealthy|", HP_TAG_FAIL, HP_P1, "M",
	  "HyperPod nodes report the kubelet restarting or unhealthy",
	  "pods on the node are not kept running" },
	{ "|FrequentContainerdRestart|FrequentDockerRestart|ContainerRuntimeUnhealthy|"
	  "CorruptDockerOverlay2|", HP_TAG_FAIL, HP_P1, "M.2",
	  "HyperPod nodes report the container runtime restarting or unhealthy",
	  "containers on the node fail to start or stop unexpectedly" },
	{ "|NetworkUnavailable|", HP_TAG_FAIL, HP_P1, "O.1",
	  "HyperPod nodes report NetworkUnavailable", "pod networking is not set up" },
};

/* Any other condition True: not known to be a fault, never passed over in silence. */
static const struct nclass cond_other = {
	"", HP_TAG_WARN, HP_P2, "F", "HyperPod nodes report another condition True",
	"a condition hpnode does not know; read `kubectl describe node`"
};

/* The condition types node-problem-detector's default configuration declares. */
#define NPD_TYPES "|KernelDeadlock|XfsShutdown|CperHardwareErrorFatal|ReadonlyFilesystem|" \
	"FrequentKubeletRestart|FrequentDockerRestart|FrequentContainerdRestart|" \
	"KubeletUnhealthy|ContainerRuntimeUnhealthy|CorruptDockerOverlay2|"

static const struct nclass event_classes[] = {
	{ "|CperHardwareErrorFatal|", HP_TAG_FAIL, HP_P0, "N.1",
	  "HyperPod nodes logged a fatal hardware error", "drain and replace the node" },
	{ "|FilesystemIsReadOnly|Ext4Error|IOError|XfsHasShutdown|", HP_TAG_FAIL, HP_P1, "I.8",
	  "HyperPod nodes logged filesystem or I/O errors", "storage on the node is failing" },
	{ "|KernelOops|", HP_TAG_FAIL, HP_P1, "N.1", "HyperPod nodes logged a kernel oops",
	  "the kernel hit a bug; reboot, replace if it recurs" },
	{ "|TaskHung|DockerHung|", HP_TAG_WARN, HP_P1, "N.1",
	  "HyperPod nodes logged hung tasks", "a process was stuck in the kernel" },
	{ "|CperHardwareErrorRecoverable|MemoryReadError|", HP_TAG_WARN, HP_P1, "N.1",
	  "HyperPod nodes logged recoverable hardware errors",
	  "watch for the same error again" },
	{ "|OOMKilling|", HP_TAG_WARN, HP_P1, "I.3",
	  "HyperPod nodes logged processes killed for lack of memory",
	  "the kernel's OOM killer ran" },
	{ "|FrequentKubeletRestart|KubeletUnhealthy|", HP_TAG_FAIL, HP_P1, "M",
	  "HyperPod nodes logged the kubelet restarting or unhealthy",
	  "pods on the node are not kept running" },
	{ "|FrequentContainerdRestart|FrequentDockerRestart|ContainerdUnhealthy|"
	  "DockerUnhealthy|CorruptDockerOverlay2|CorruptDockerImage|"
	  "DockerContainerStartupFailure|", HP_TAG_WARN, HP_P1, "M.2",
	  "HyperPod nodes logged container runtime failures",
	  "containers on the node fail to start" },
	{ "|FreeDiskSpaceFailed|ImageGCFailed|", HP_TAG_WARN, HP_P1, "I.2",
	  "HyperPod nodes could not free disk space for images",
	  "the kubelet's image garbage collection failed" },
	{ "|Ext4Warning|", HP_TAG_WARN, HP_P2, "I.8",
	  "HyperPod nodes logged ext4 warnings", "read the kernel log of that device" },
	{ "|UnregisterNetDevice|", HP_TAG_WARN, HP_P2, "N",
	  "HyperPod nodes logged a network device stuck unregistering",
	  "new pods on the node may hang at sandbox creation" },
};

/* Node events that say nothing is wrong (corrected by the hardware). */
#define BENIGN_EVENTS "|CperHardwareErrorCorrected|"

/* "|A|B|" holds name exactly. */
static int name_in(const char *names, const char *name)
{
	size_t n = strlen(name);
	const char *p = names;

	if (!n || strchr(name, '|'))
		return 0;
	while ((p = strstr(p, name)) != NULL) {
		if (p > names && p[-1] == '|' && p[n] == '|')
			return 1;
		p += n;
	}
	return 0;
}

static const struct nclass *class_of(const struct nclass *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (name_in(v[i].names, name))
			return &v[i];
	return NULL;
}

/* The section of an eviction or an EvictionThresholdMet event by the resource it names. */
static const char *resource_section(const char *text, const char **what)
{
	if (hp_strcasestr(text, "memory")) {
		*what = "memory";
		return "I.3";
	}
	if (hp_strcasestr(text, "ephemeral-storage") || hp_strcasestr(text, "DiskPressure") ||
	    hp_strcasestr(text, "nodefs") || hp_strcasestr(text, "imagefs")) {
		*what = hp_strcasestr(text, "DiskPressure") ? "disk (DiskPressure)"
							      : "ephemeral-storage";
		return "I.2";
	}
	if (hp_strcasestr(text, "pid")) {
		*what = "process ids";
		return "I";
	}
	*what = "a resource";
	return "I";
}

static void run_node_conditions(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *nodes = kube_data(s, em, "nodes", "Node conditions"), *n, *c;
	struct batch b[HP_ARRAY_LEN(cond_classes) + 1];
	struct kctx kc;
	size_t i, k = 0, hyperpod = 0, with_data = 0, bad_nodes = 0, npd = 0, falses = 0;

	if (!nodes)
		return;
	kctx_init(&kc, s);
	for (i = 0; i <= HP_ARRAY_LEN(cond_classes); i++) {
		const struct nclass *cl = i < HP_ARRAY_LEN(cond_classes) ? &cond_classes[i]
									 : &cond_other;
		struct batch init = BATCH(cl->tag, cl->prio, cl->section, cl->many);

		b[i] = init;
	}
	cJSON_ArrayForEach(n, nodes) {
		const char *iid = iid_at(&kc, k++);
		const cJSON *conds = cJSON_GetObjectItemCaseSensitive(n, "conditions");
		char who[HP_CHECK_CLIP_SIZE * 2];
		int bad = 0, has_npd = 0;

		if (!is_hyperpod(&kc, n, *iid ? iid : NULL))
			continue;
		hyperpod++;
		if (!cJSON_IsArray(conds))
			continue;
		with_data++;
		node_label(&kc, hp_json_str(n, "name"), *iid ? iid : NULL, who, sizeof(who));
		cJSON_ArrayForEach(c, conds) {
			const char *type = hp_check_str(c, "type", ""), *st = hp_check_str(c, "status", "");
			const struct nclass *cl;
			char t[HP_CHECK_CLIP_SIZE], r[HP_CHECK_CLIP_SIZE], m[HP_CHECK_CLIP_SIZE];
			const char *msg = hp_check_str(c, "message", "");
			struct hp_fold_item *it;
			size_t at;

			has_npd |= name_in(NPD_TYPES, type);
			if (strcmp(st, "True")) {
				falses += !strcmp(st, "False");
				continue;
			}
			cl = class_of(cond_classes, HP_ARRAY_LEN(cond_classes), type);
			at = cl ? (size_t)(cl - cond_classes) : HP_ARRAY_LEN(cond_classes);
			if (!cl)
				cl = &cond_other;
			it = batch_add(&b[at], *iid ? iid : NULL, "%s: %s is True (%s%s%s) " DASH " %s",
				       who, hp_check_clip(type, t),
				       hp_check_clip(hp_check_str(c, "reason", "no reason"), r),
				       *msg ? ": " : "", hp_check_clip(msg, m), cl->why);
			if (hp_json_str(c, "since")) {
				char ev[HP_CHECK_CLIP_SIZE + 32];

				snprintf(ev, sizeof(ev), "since %s",
					 hp_check_clip(hp_json_str(c, "since"), t));
				item_evidence(it, ev);
			}
			bad = 1;
		}
		bad_nodes += bad;
		npd += has_npd;
	}
	for (i = 0; i <= HP_ARRAY_LEN(cond_classes); i++)
		batch_emit(em, &b[i]);
	if (hyperpod && !with_data) {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL,
			 "Node conditions not checked " DASH " no node's conditions were collected "
			 "(a snapshot taken before they were)");
		return;
	}
	if (!with_data)
		return;
	if (!bad_nodes)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
			 "No HyperPod node reports a pressure or node-problem-detector condition "
			 "(%zu nodes, %zu conditions False)", with_data, falses);
	else if (with_data > bad_nodes)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
			 "The other %zu HyperPod node(s) report no pressure or node-problem-detector "
			 "condition", with_data - bad_nodes);
	if (!npd)
		HP_CHECK_INFO(em, "No HyperPod node carries a node-problem-detector condition "
			      "(KernelDeadlock, ReadonlyFilesystem, ...): it is not installed, so "
			      "only the on-node checks report those faults");
}

/* The kube.nodes entry named name, or NULL. */
static const cJSON *kube_node_named(const struct kctx *c, const char *name)
{
	size_t i, n = hp_kube_index_count(c->ix);

	for (i = 0; i < n; i++) {
		const struct hp_kube_node *k = hp_kube_index_at(c->ix, i);

		if (k && k->name && !strcmp(k->name, name))
			return k->node;
	}
	return NULL;
}

/* One (node, reason) of Warning node events, counts summed. */
struct nevent {
	const char *node, *reason;
	const cJSON *last;        /* the latest event of the pair */
	double count;
	size_t events;
};

static void run_node_events(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *events = kube_data(s, em, "node_events", "Node problem events"), *e;
	struct batch b[HP_ARRAY_LEN(event_classes) + 1];
	struct nevent *v = NULL;
	size_t nv = 0, alloc = 0, i, j, judged = 0, other = 0, benign = 0, read = 0;
	struct kctx kc;

	if (!events)
		return;
	kctx_init(&kc, s);
	cJSON_ArrayForEach(e, events) {
		const char *node = hp_json_str(e, "name"), *reason = hp_json_str(e, "reason");

		read++;
		if (!node || !reason || strcmp(hp_check_str(e, "kind", "Node"), "Node") ||
		    strcmp(hp_check_str(e, "type", "Warning"), "Warning"))
			continue;
		for (i = 0; i < nv; i++)
			if (!strcmp(v[i].node, node) && !strcmp(v[i].reason, reason))
				break;
		if (i == nv) {
			v = hp_array_grow(v, &alloc, nv, 1, sizeof(*v));
			memset(&v[nv], 0, sizeof(v[nv]));
			v[nv].node = node;
			v[nv].reason = reason;
			nv++;
		}
		v[i].count += hp_json_num(e, "count", 1);
		v[i].events++;
		if (!v[i].last || strcmp(hp_check_str(e, "last", ""),
					 hp_check_str(v[i].last, "last", "")) >= 0)
			v[i].last = e;
	}
	for (i = 0; i < HP_ARRAY_LEN(event_classes); i++) {
		struct batch init = BATCH(event_classes[i].tag, event_classes[i].prio,
					  event_classes[i].section, event_classes[i].many);

		b[i] = init;
	}
	{
		/* EvictionThresholdMet: the section follows the resource it reclaims. */
		struct batch init = BATCH(HP_TAG_WARN, HP_P1, "I", "HyperPod nodes met a kubelet "
							      "eviction threshold");
		b[i] = init;
	}
	for (i = 0; i < nv; i++) {
		const char *iid = iid_of(&kc, v[i].node);
		const cJSON *node = kube_node_named(&kc, v[i].node);
		const struct nclass *cl = class_of(event_classes, HP_ARRAY_LEN(event_classes),
						   v[i].reason);
		const char *msg = hp_check_str(v[i].last, "message", ""), *what = NULL;
		char who[HP_CHECK_CLIP_SIZE * 2], r[HP_CHECK_CLIP_SIZE], m[HP_CHECK_CLIP_SIZE],
			src[HP_CHECK_CLIP_SIZE], ev[HP_CHECK_CLIP_SIZE * 2 + 64];
		struct hp_fold_item *it;
		struct batch *bt;

		if (node && !is_hyperpod(&kc, node, iid))
			continue;
		if (!node && !iid)
			continue;
		if (name_in(BENIGN_EVENTS, v[i].reason)) {
			benign++;
			continue;
		}
		if (cl) {
			bt = &b[cl - event_classes];
		} else if (!strcmp(v[i].reason, "EvictionThresholdMet")) {
			bt = &b[HP_ARRAY_LEN(event_classes)];
			bt->f.section = resource_section(msg, &what);
		} else {
			other++;
			continue;
		}
		judged++;
		node_label(&kc, v[i].node, iid, who, sizeof(who));
		it = batch_add(bt, iid, "%s: %s %.0f time(s) (%s) " DASH " %s", who,
			       hp_check_clip(v[i].reason, r), v[i].count,
			       hp_check_clip(hp_check_str(v[i].last, "source", "?"), src),
			       cl ? cl->why : "the kubelet is reclaiming it by evicting pods");
		snprintf(ev, sizeof(ev), "last %s: %s", hp_check_str(v[i].last, "last", "?"),
			 hp_check_clip(msg, m));
		item_evidence(it, ev);
		if (bt == &b[HP_ARRAY_LEN(event_classes)])
			batch_emit(em, bt);
	}
	for (j = 0; j < HP_ARRAY_LEN(event_classes); j++)
		batch_emit(em, &b[j]);
	batch_emit(em, &b[HP_ARRAY_LEN(event_classes)]);
	if (cJSON_IsTrue(hp_json_get(hp_snapshot_get(s, "kube"), "node_events_truncated")))
		hp_emitx(em, HP_TAG_WARN, HP_P2, "", NULL,
			 "More than %zu Warning events about nodes: only the first were read "
			 DASH " the list above is incomplete", read);
	else if (!judged)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
			 "No HyperPod node has a node-problem-detector or kubelet problem event "
			 "(%zu Warning node events read)", read);
	if (benign)
		HP_CHECK_INFO(em, "%zu node event(s) of hardware errors the hardware corrected "
			      "(CperHardwareErrorCorrected): no action", benign);
	if (other)
		HP_CHECK_INFO(em, "%zu other kind(s) of Warning node events not judged here", other);
	free(v);
}

/* One (node, resource) of evicted pods. */
struct evgroup {
	const char *node, *section, *what;
	cJSON *lines;
};

/* Pods the kubelet evicted (phase Failed, reason Evicted), by node and the resource it lacked. */
static void run_evictions(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *pods = kube_data(s, em, "pods", "Evicted pods"), *p;
	struct evgroup *g = NULL;
	size_t ng = 0, alloc = 0, i, evicted = 0;
	struct kctx kc;

	if (!pods)
		return;
	kctx_init(&kc, s);
	cJSON_ArrayForEach(p, pods) {
		const char *msg = hp_check_str(p, "message", ""), *what = NULL, *section;
		const char *node = hp_check_str(p, "node", "(no node)");
		char line[HP_CHECK_CLIP_SIZE * 3 + 8], pn[HP_CHECK_CLIP_SIZE],
			ns[HP_CHECK_CLIP_SIZE], m[HP_CHECK_CLIP_SIZE];

		if (strcmp(hp_check_str(p, "reason", ""), "Evicted"))
			continue;
		evicted++;
		section = resource_section(msg, &what);
		for (i = 0; i < ng; i++)
			if (!strcmp(g[i].node, node) && g[i].section == section &&
			    !strcmp(g[i].what, what))
				break;
		if (i == ng) {
			g = hp_array_grow(g, &alloc, ng, 1, sizeof(*g));
			g[ng].node = node;
			g[ng].section = section;
			g[ng].what = what;
			g[ng].lines = cJSON_CreateArray();
			ng++;
		}
		snprintf(line, sizeof(line), "%s/%s: %s",
			 hp_check_clip(hp_check_str(p, "namespace", "?"), ns),
			 hp_check_clip(hp_check_str(p, "name", "?"), pn), hp_check_clip(msg, m));
		cJSON_AddItemToArray(g[i].lines, cJSON_CreateString(line));
	}
	for (i = 0; i < ng; i++) {
		const char *iid = iid_of(&kc, g[i].node);
		char who[HP_CHECK_CLIP_SIZE * 2];
		struct hp_finding *f;
		const cJSON *l;

		node_label(&kc, g[i].node, iid, who, sizeof(who));
		f = hp_emitx(em, HP_TAG_FAIL, HP_P1, g[i].section, iid,
			     "%d pod(s) on %s were evicted: the node was low on %s",
			     cJSON_GetArraySize(g[i].lines), who, g[i].what);
		cJSON_ArrayForEach(l, g[i].lines)
			hp_finding_evidence(f, l->valuestring);
		cJSON_Delete(g[i].lines);
	}
	free(g);
	if (!evicted && hp_json_num(hp_snapshot_get(s, "kube"), "pods_dropped", 0) <= 0)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
			 "No pod was evicted for lack of node resources (%.0f pods read)",
			 hp_json_num(hp_snapshot_get(s, "kube"), "pods_total", 0));
}

HP_CHECK(kube_access, HP_GROUP_EKS, 20,
	 .id = "kube.access", .section = "", .prio = HP_P1, .run = run_access);
HP_CHECK(kube_node_health, HP_GROUP_EKS, 30,
	 .id = "kube.node-health", .section = "F", .prio = HP_P1, .run = run_node_health);
HP_CHECK(kube_deep_health, HP_GROUP_EKS, 40,
	 .id = "kube.deep-health", .section = "G+F", .prio = HP_P1, .run = run_deep_health);
HP_CHECK(kube_node_ready, HP_GROUP_EKS, 50,
	 .id = "kube.node-ready", .section = "F", .prio = HP_P1, .run = run_node_ready);
HP_CHECK(kube_node_conditions, HP_GROUP_EKS, 52,
	 .id = "kube.node-conditions", .section = "I", .prio = HP_P1,
	 .run = run_node_conditions);
HP_CHECK(kube_node_events, HP_GROUP_EKS, 54,
	 .id = "kube.node-events", .section = "N", .prio = HP_P1, .run = run_node_events);
HP_CHECK(kube_namespace, HP_GROUP_EKS, 60,
	 .id = "kube.namespace", .section = "B.1", .prio = HP_P1, .run = run_namespace);
HP_CHECK(kube_aws_node, HP_GROUP_CNI, 10,
	 .id = "kube.aws-node", .section = "O.1", .prio = HP_P0, .run = run_aws_node);
HP_CHECK(kube_kube_proxy, HP_GROUP_CNI, 20,
	 .id = "kube.kube-proxy", .section = "O.3", .prio = HP_P0, .run = run_kube_proxy);
HP_CHECK(kube_coredns, HP_GROUP_CNI, 30,
	 .id = "kube.coredns", .section = "O.4", .prio = HP_P0, .run = run_coredns);
HP_CHECK(kube_sandbox, HP_GROUP_CNI, 40,
	 .id = "kube.sandbox", .section = "O", .prio = HP_P1, .run = run_sandbox);
HP_CHECK(kube_workload_pods, HP_GROUP_PODS, 10,
	 .id = "kube.workload-pods", .section = "M.1", .prio = HP_P1, .run = run_workload);
HP_CHECK(kube_evictions, HP_GROUP_PODS, 20,
	 .id = "kube.evictions", .section = "I.2", .prio = HP_P1, .run = run_evictions);
