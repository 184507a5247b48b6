/*
 * The cluster-level collector: caller identity, DescribeCluster, the node
 * list, cluster events, instance-type facts and the CloudWatch log streams
 * that matter (lifecycle scripts, health monitoring agent), then the
 * network facts (network.c). Every list is paginated under a cap, and a
 * cap that cuts a list is recorded.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "hp/tasks.h"
#include "hp/text.h"
#include "plan.h"

void hp_collect_record(struct hp_snapshot *s, enum hp_svc svc, const char *action,
		       const struct hp_aws_result *r)
{
	hp_snapshot_add_call(s, hp_svc_info(svc)->name, action, hp_aws_class_name(r->cls), r->code,
			     r->message, r->status);
}

/* Move every element of src (array) to the end of dst (array); returns how many. */
static size_t move_items(cJSON *dst, cJSON *src)
{
	cJSON *it;
	size_t n = 0;

	/* The reply's strings are shared already (hp_json_parse_shared). */
	while (src && (it = cJSON_DetachItemFromArray(src, 0)) != NULL) {
		cJSON_AddItemToArray(dst, it);
		n++;
	}
	return n;
}

struct pager {
	enum hp_svc svc;
	const char *op;
	const char *result_key;
	const char *token_in;
	const char *token_out;
	int max_pages;
	size_t max_items;   /* 0: no cap besides pages */
};

/*
 * The API phase's progress callback. Lists are read on several threads at
 * once (tasks.h), so calls to it are serialised; it is set before and
 * cleared after the phase, never during.
 */
static hp_collect_progress_fn *progress_fn;
static void *progress_ud;
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;

void hp_collect_set_progress(hp_collect_progress_fn *fn, void *ud)
{
	progress_fn = fn;
	progress_ud = ud;
}

static void progress(const char *action, int page, size_t items, size_t expected)
{
	if (!progress_fn)
		return;
	pthread_mutex_lock(&progress_lock);
	progress_fn(progress_ud, action, page, items, expected);
	pthread_mutex_unlock(&progress_lock);
}

void hp_collect_progress(const char *action, int page, size_t items, size_t expected)
{
	progress(action, page, items, expected);
}

/* The nodes DescribeCluster says the groups hold (the sum of CurrentCount); 0: not known. */
static size_t expected_nodes(const cJSON *cluster)
{
	const cJSON *g;
	double n = 0;

	cJSON_ArrayForEach(g, hp_json_arr(cluster, "InstanceGroups")) {
		double c = hp_json_num(g, "CurrentCount", -1);

		if (c < 0 || c > 1e7)
			return 0;
		n += c;
	}
	return (size_t)n;
}

/*
 * Page through a JSON 1.1 list call. input is the first page's request
 * (not consumed). Items land in *items (created here). Returns 0 on success
 * (truncated set when a cap cut the list), -1 when a call failed (recorded;
 * *items is freed and NULL, so a partial list can never pass for a whole one).
 */

static int paginate(struct hp_aws *a, struct hp_snapshot *s, const struct pager *pg,
		    const cJSON *input, cJSON **items, int *truncated)
{
	cJSON *req = cJSON_Duplicate(input, 1);
	size_t count = 0;
	int page;

	*items = cJSON_CreateArray();
	*truncated = 0;
	for (page = 0;; page++) {
		struct hp_aws_result r;
		const char *tok;

		if (hp_aws_json(a, pg->svc, pg->op, req, &r)) {
			hp_collect_record(s, pg->svc, pg->op, &r);
			hp_aws_result_release(&r);
			cJSON_Delete(*items);
			*items = NULL;
			cJSON_Delete(req);
			return -1;
		}
		count += move_items(*items, cJSON_GetObjectItemCaseSensitive(r.json, pg->result_key));
		progress(pg->op, page + 1, count, 0);
		tok = hp_json_str(r.json, pg->token_out);
		if (!tok || !*tok) {
			hp_aws_result_release(&r);
			break;
		}
		if (page + 1 >= pg->max_pages || (pg->max_items && count >= pg->max_items)) {
			*truncated = 1;
			hp_aws_result_release(&r);
			break;
		}
		cJSON_DeleteItemFromObjectCaseSensitive(req, pg->token_in);
		cJSON_AddStringToObject(req, pg->token_in, tok);
		hp_aws_result_release(&r);
	}
	cJSON_Delete(req);
	return 0;
}

int hp_collect_identity(struct hp_aws *a, struct hp_snapshot *s, struct hp_error *e)
{
	struct hp_aws_result r;
	long timeout_ms = a->timeout_ms;
	int attempts = a->max_attempts, rc;

	/*
	 * The preflight answers soon (a silent endpoint fails in about 15 s,
	 * not three full attempts): a short limit per attempt and one retry.
	 * It runs before anything else, so the limits are the run's again after.
	 */
	if (a->timeout_ms > HP_STS_PREFLIGHT_TIMEOUT_MS)
		a->timeout_ms = HP_STS_PREFLIGHT_TIMEOUT_MS;
	if (a->max_attempts > HP_STS_PREFLIGHT_ATTEMPTS)
		a->max_attempts = HP_STS_PREFLIGHT_ATTEMPTS;
	rc = hp_aws_query(a, HP_SVC_STS, "GetCallerIdentity", NULL, &r);
	a->timeout_ms = timeout_ms;
	a->max_attempts = attempts;
	if (!rc) {
		hp_snapshot_set(s, "identity", r.json);
		r.json = NULL;
		hp_aws_result_release(&r);
		return 0;
	}
	hp_collect_record(s, HP_SVC_STS, "GetCallerIdentity", &r);
	/* Only a credential error is a credential problem; the rest say what happened. */
	switch (r.cls) {
	case HP_AWS_NETWORK:
		hp_error_set(e, HP_ERR_HTTP, "cannot reach AWS STS at '%s' (%d attempt%s, %ld s "
			     "each at most): %s%s%s", a->endpoint[HP_SVC_STS], r.attempts,
			     r.attempts == 1 ? "" : "s",
			     (timeout_ms < HP_STS_PREFLIGHT_TIMEOUT_MS ? timeout_ms :
			      HP_STS_PREFLIGHT_TIMEOUT_MS) / 1000, r.code,
			     r.message[0] ? ": " : "", r.message);
		break;
	case HP_AWS_THROTTLED:
		hp_error_set(e, HP_ERR_API,
			     "AWS STS throttled the credentials check (sts:GetCallerIdentity) "
			     "after %d attempts: %s: %s; wait and rerun", r.attempts, r.code, r.message);
		break;
	case HP_AWS_SERVER:
		hp_error_set(e, HP_ERR_API,
			     "AWS STS service error on the credentials check (sts:GetCallerIdentity, "
			     "HTTP %ld) after %d attempts: %s: %s", r.status, r.attempts, r.code,
			     r.message);
		break;
	case HP_AWS_PARSE:
		hp_error_set(e, HP_ERR_PARSE,
			     "the credentials check (sts:GetCallerIdentity) at '%s' got a %s",
			     a->endpoint[HP_SVC_STS], r.message);
		break;
	case HP_AWS_CLIENT:
		/* 401/403 without a known code is a rejected credential too. */
		if (r.status == 401 || r.status == 403)
			hp_error_set(e, HP_ERR_CREDS, "AWS credentials not configured or expired: %s: %s",
				     r.code, r.message);
		else
			hp_error_set(e, HP_ERR_API,
				     "AWS STS refused the credentials check (sts:GetCallerIdentity, "
				     "HTTP %ld): %s: %s", r.status, r.code, r.message);
		break;
	default:
		hp_error_set(e, HP_ERR_CREDS, "AWS credentials not configured or expired: %s: %s", r.code,
			     r.message);
		break;
	}
	hp_aws_result_release(&r);
	return -1;
}

static void list_clusters(struct hp_aws *a, struct hp_snapshot *s)
{
	static const struct pager pg = {
		HP_SVC_SAGEMAKER, "ListClusters", "ClusterSummaries", "NextToken", "NextToken", 10, 0
	};
	cJSON *in = cJSON_CreateObject(), *items;
	int trunc;

	cJSON_AddNumberToObject(in, "MaxResults", 100);
	if (!paginate(a, s, &pg, in, &items, &trunc))
		hp_snapshot_set(s, "clusters", items);
	cJSON_Delete(in);
}

int hp_collect_list_clusters(struct hp_aws *a, struct hp_snapshot *s)
{
	list_clusters(a, s);
	return cJSON_IsArray(hp_snapshot_get(s, "clusters")) ? 0 : -1;
}

/*
 * Whether a DescribeCluster reply is about the cluster asked for: its
 * ClusterName (or ClusterArn, when an ARN was asked for) is that one, where
 * the reply says. A reply about another cluster is refused: its name would
 * go into the report and the commands it prints.
 */
static int same_cluster(const cJSON *reply, const char *asked)
{
	int arn = hp_starts_with(asked, "arn:");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(reply, arn ? "ClusterArn" : "ClusterName");

	if (!v)
		return 1;
	return cJSON_IsString(v) && !strcmp(v->valuestring, asked);
}

static int collect_cluster(struct hp_aws *a, struct hp_snapshot *s, const char *name,
			   struct hp_error *e)
{
	struct hp_aws_result r;
	cJSON *in = cJSON_CreateObject();
	int rc;

	cJSON_AddStringToObject(in, "ClusterName", name);
	rc = hp_aws_json(a, HP_SVC_SAGEMAKER, "DescribeCluster", in, &r);
	cJSON_Delete(in);
	if (!rc && !same_cluster(r.json, name)) {
		char got[160], asked[160];

		hp_text_str(HP_TEXT_SAFE,
			    hp_json_str(r.json, hp_starts_with(name, "arn:") ? "ClusterArn" : "ClusterName"),
			    got, sizeof(got));
		hp_text_str(HP_TEXT_SAFE, name, asked, sizeof(asked));
		hp_error_set(e, HP_ERR_API, "DescribeCluster answered for cluster '%s' when '%s' was "
			     "asked for; the reply is not trusted", got, asked);
		hp_aws_result_release(&r);
		return -1;
	}
	if (!rc) {
		hp_snapshot_set(s, "cluster", r.json);
		r.json = NULL;
		hp_aws_result_release(&r);
		return 0;
	}
	hp_collect_record(s, HP_SVC_SAGEMAKER, "DescribeCluster", &r);
	if (r.cls == HP_AWS_NOT_FOUND || (r.cls == HP_AWS_CLIENT && !strcmp(r.code, "ValidationException"))) {
		list_clusters(a, s);
		hp_error_set(e, HP_ERR_NOT_FOUND, "cannot find cluster '%s' in region '%s'", name, a->region);
	} else if (r.cls == HP_AWS_DENIED) {
		hp_error_set(e, HP_ERR_API,
			     "missing IAM permission for sagemaker:DescribeCluster (%s); triage cannot continue",
			     r.message);
	} else {
		hp_error_set(e, HP_ERR_API, "cannot describe cluster '%s': %s: %s", name, r.code, r.message);
	}
	hp_aws_result_release(&r);
	return -1;
}

/*
 * A sagemaker list of this cluster (100 per page, at most pages pages) into
 * snapshot key `key`, with `key`_truncated saying whether the cap cut it.
 */
static void collect_cluster_list(struct hp_aws *a, struct hp_snapshot *s, const char *arn,
				 const char *op, const char *result_key, int pages, const char *key)
{
	struct pager pg = { HP_SVC_SAGEMAKER, op, result_key, "NextToken", "NextToken", pages, 0 };
	cJSON *in = cJSON_CreateObject(), *items;
	char tkey[64];
	int trunc;

	cJSON_AddStringToObject(in, "ClusterName", arn);
	cJSON_AddNumberToObject(in, "MaxResults", 100);
	if (!paginate(a, s, &pg, in, &items, &trunc)) {
		snprintf(tkey, sizeof(tkey), "%s_truncated", key);
		hp_snapshot_set(s, key, items);
		hp_snapshot_set(s, tkey, cJSON_CreateBool(trunc));
		if (!strcmp(key, "nodes"))
			hp_snap_nodes_finish(s, (size_t)pages * 100);
	}
	cJSON_Delete(in);
}

/* Error and Warn events, newest first (ties by position), for the detail reads. */
struct ev_ref {
	cJSON *ev;
	double t;
	int pos;
};

static int ev_ref_cmp(const void *pa, const void *pb)
{
	const struct ev_ref *a = pa, *b = pb;

	if (a->t != b->t)
		return a->t > b->t ? -1 : 1;
	return a->pos - b->pos;
}

/*
 * DescribeClusterEvent for the newest HP_EVENT_DETAILS_MAX Error/Warn events:
 * the result's EventDetails (EventMetadata with its FailureMessage) lands in
 * the event as "EventDetails". The rest are counted: events_details_capped
 * (beyond the cap), events_details_failed (the call failed; a denied call
 * stops the reads, the rest would be denied too).
 */
static void collect_event_details(struct hp_aws *a, struct hp_snapshot *s, const char *arn)
{
	cJSON *events = (cJSON *)hp_snapshot_get(s, "events"), *ev;
	struct ev_ref *v = NULL;
	size_t n = 0, alloc = 0, i, read = 0, capped = 0, failed = 0;
	int stop = 0;

	cJSON_ArrayForEach(ev, events) {
		const char *lvl = hp_json_str(ev, "EventLevel");

		if (!lvl || (strcmp(lvl, "Error") && strcmp(lvl, "Warn")) ||
		    !hp_json_str(ev, "EventId"))
			continue;
		v = hp_array_grow(v, &alloc, n, 1, sizeof(*v));
		v[n].ev = ev;
		v[n].t = hp_json_num(ev, "EventTime", 0);
		v[n].pos = (int)n;
		n++;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), ev_ref_cmp);
	for (i = 0; i < n; i++) {
		struct hp_aws_result r;
		cJSON *in, *d;
		int rc;

		if (stop) {
			failed++;
			continue;
		}
		if (read >= HP_EVENT_DETAILS_MAX) {
			capped++;
			continue;
		}
		in = cJSON_CreateObject();
		cJSON_AddStringToObject(in, "ClusterName", arn);
		cJSON_AddStringToObject(in, "EventId", hp_json_str(v[i].ev, "EventId"));
		rc = hp_aws_json(a, HP_SVC_SAGEMAKER, "DescribeClusterEvent", in, &r);
		cJSON_Delete(in);
		read++;
		if (rc) {
			hp_collect_record(s, HP_SVC_SAGEMAKER, "DescribeClusterEvent", &r);
			if (r.cls == HP_AWS_DENIED)
				stop = 1;
			hp_aws_result_release(&r);
			failed++;
			continue;
		}
		d = cJSON_GetObjectItemCaseSensitive(r.json, "EventDetails");
		d = d ? cJSON_DetachItemFromObjectCaseSensitive(d, "EventDetails") : NULL;
		cJSON_AddItemToObject(v[i].ev, "EventDetails", d ? d : cJSON_CreateObject());
		hp_aws_result_release(&r);
	}
	free(v);
	if (n) {
		hp_snapshot_set(s, "events_details_capped", cJSON_CreateNumber((double)capped));
		hp_snapshot_set(s, "events_details_failed", cJSON_CreateNumber((double)failed));
		hp_snapshot_set(s, "events_details_cap", cJSON_CreateNumber(HP_EVENT_DETAILS_MAX));
	}
}

static void collect_node(struct hp_aws *a, struct hp_snapshot *s, const char *arn, const char *node)
{
	struct hp_aws_result r;
	cJSON *in = cJSON_CreateObject();
	int rc;

	cJSON_AddStringToObject(in, "ClusterName", arn);
	cJSON_AddStringToObject(in, "NodeId", node);
	rc = hp_aws_json(a, HP_SVC_SAGEMAKER, "DescribeClusterNode", in, &r);
	cJSON_Delete(in);
	if (!rc) {
		cJSON *d = cJSON_DetachItemFromObjectCaseSensitive(r.json, "NodeDetails");
		hp_snapshot_set(s, "node", d ? d : cJSON_CreateObject());
	} else if (r.cls == HP_AWS_NOT_FOUND ||
		   (r.cls == HP_AWS_CLIENT && hp_strcasestr(r.message, "not found"))) {
		hp_snapshot_set(s, "node_missing", cJSON_CreateString(node));
	} else {
		hp_collect_record(s, HP_SVC_SAGEMAKER, "DescribeClusterNode", &r);
	}
	hp_aws_result_release(&r);
}

/* ec2 DescribeInstanceTypes for the distinct instance types of the groups. */
static void collect_instance_types(struct hp_aws *a, const cJSON *cluster, struct hp_snapshot *s)
{
	const cJSON *groups = hp_json_arr(cluster, "InstanceGroups");
	const cJSON *g;
	struct hp_aws_params p = { 0 };
	struct hp_aws_result r;
	cJSON *seen = cJSON_CreateObject(), *types, *it;
	int n = 0;

	cJSON_ArrayForEach(g, groups) {
		const char *t = hp_json_str(g, "InstanceType");
		if (!t || cJSON_GetObjectItemCaseSensitive(seen, t) || n >= 100)
			continue;
		cJSON_AddTrueToObject(seen, t);
		n++;
		{
			char pname[32];
			snprintf(pname, sizeof(pname), "InstanceType.%d", n);
			hp_aws_params_add(&p, pname, hp_starts_with(t, "ml.") ? t + 3 : t);
		}
	}
	cJSON_Delete(seen);
	if (!n) {
		hp_aws_params_release(&p);
		return;
	}
	if (hp_aws_query(a, HP_SVC_EC2, "DescribeInstanceTypes", &p, &r)) {
		hp_collect_record(s, HP_SVC_EC2, "DescribeInstanceTypes", &r);
		hp_aws_result_release(&r);
		hp_aws_params_release(&p);
		return;
	}
	types = cJSON_CreateObject();
	cJSON_ArrayForEach(it, hp_json_arr(r.json, "instanceTypeSet")) {
		const char *name = hp_json_str(it, "instanceType");
		if (name && !cJSON_GetObjectItemCaseSensitive(types, name))
			cJSON_AddItemToObject(types, name, cJSON_Duplicate(it, 1));
	}
	hp_snapshot_set(s, "instance_types", types);
	hp_aws_result_release(&r);
	hp_aws_params_release(&p);
}

/* Server-side pre-filters; the checks decide what is a real failure. */
#define LIFECYCLE_PATTERN "?error ?Error ?ERROR ?fail ?Fail ?FAIL ?Traceback ?timed ?Timeout ?exit"
#define HMA_PATTERN "?error ?Error ?ERROR ?fault ?Fault ?FAULT ?unhealthy ?Unhealthy ?UNHEALTHY " \
	"?fail ?Fail ?FAIL ?Xid ?XID ?NVLink ?ECC ?reboot ?Reboot ?replace ?Replace"

static void collect_stream_lines(struct hp_aws *a, struct hp_snapshot *s, cJSON *logs,
				 const char *group, const char *prefix, const char *pattern,
				 const char *key)
{
	static const struct pager base = {
		HP_SVC_LOGS, "FilterLogEvents", "events", "nextToken", "nextToken", HP_LOG_PAGES,
		HP_LOG_EVENTS_MAX
	};
	cJSON *in = cJSON_CreateObject(), *items, *out, *ev;
	char tkey[64];
	int trunc;

	cJSON_AddStringToObject(in, "logGroupName", group);
	cJSON_AddStringToObject(in, "logStreamNamePrefix", prefix);
	cJSON_AddStringToObject(in, "filterPattern", pattern);
	cJSON_AddNumberToObject(in, "limit", 1000);
	if (paginate(a, s, &base, in, &items, &trunc)) {
		cJSON_Delete(in);
		return;
	}
	cJSON_Delete(in);
	/* Keep only what the checks read. */
	out = cJSON_CreateArray();
	cJSON_ArrayForEach(ev, items) {
		cJSON *o = cJSON_CreateObject();
		const char *st = hp_json_str(ev, "logStreamName"), *msg = hp_json_str(ev, "message");
		cJSON_AddStringToObject(o, "logStreamName", st ? st : "");
		cJSON_AddNumberToObject(o, "timestamp", hp_json_num(ev, "timestamp", 0));
		cJSON_AddStringToObject(o, "message", msg ? msg : "");
		cJSON_AddItemToArray(out, o);
	}
	cJSON_Delete(items);
	cJSON_AddItemToObject(logs, key, out);
	snprintf(tkey, sizeof(tkey), "%s_truncated", key);
	cJSON_AddBoolToObject(logs, tkey, trunc);
}

/*
 * The group a --node run narrows log streams to: DescribeClusterNode's
 * answer (in node_s), else the node's entry in the list (in nodes_s).
 */
static const char *node_group(const struct hp_snapshot *nodes_s, const struct hp_snapshot *node_s,
			      const char *node)
{
	const cJSON *n;

	if (node && hp_json_str(hp_snapshot_get(node_s, "node"), "InstanceGroupName"))
		return hp_json_str(hp_snapshot_get(node_s, "node"), "InstanceGroupName");
	cJSON_ArrayForEach(n, hp_snapshot_get(nodes_s, "nodes")) {
		const char *id = hp_json_str(n, "InstanceId");
		if (id && node && !strcmp(id, node))
			return hp_json_str(n, "InstanceGroupName");
	}
	return NULL;
}

/* cs: the snapshot with "cluster"; s: where the logs and failed calls go; ng: node's group. */
static void collect_logs(struct hp_aws *a, const struct hp_snapshot *cs, struct hp_snapshot *s,
			 const char *node, const char *ng)
{
	const char *name = hp_snap_cluster_name(cs);
	char id[64], group[512], lc[512], hma[512];
	struct hp_aws_result r;
	cJSON *in, *logs, *g;
	int found = 0, rc;

	hp_snap_cluster_id(cs, id);
	if (!name || !id[0])
		return;
	snprintf(group, sizeof(group), "/aws/sagemaker/Clusters/%s/%s", name, id);
	in = cJSON_CreateObject();
	cJSON_AddStringToObject(in, "logGroupNamePrefix", group);
	cJSON_AddNumberToObject(in, "limit", 50);
	rc = hp_aws_json(a, HP_SVC_LOGS, "DescribeLogGroups", in, &r);
	cJSON_Delete(in);
	if (rc) {
		hp_collect_record(s, HP_SVC_LOGS, "DescribeLogGroups", &r);
		hp_aws_result_release(&r);
		return;
	}
	cJSON_ArrayForEach(g, hp_json_arr(r.json, "logGroups")) {
		const char *gn = hp_json_str(g, "logGroupName");
		if (gn && !strcmp(gn, group))
			found = 1;
	}
	hp_aws_result_release(&r);
	logs = cJSON_CreateObject();
	cJSON_AddStringToObject(logs, "group", group);
	cJSON_AddBoolToObject(logs, "group_found", found);
	if (found) {
		if (node && ng) {
			snprintf(lc, sizeof(lc), "LifecycleConfig/%s/%s", ng, node);
			snprintf(hma, sizeof(hma), "SagemakerHealthMonitoringAgent/%s/%s", ng, node);
		} else {
			hp_strlcpy(lc, "LifecycleConfig/", sizeof(lc));
			hp_strlcpy(hma, "SagemakerHealthMonitoringAgent/", sizeof(hma));
		}
		collect_stream_lines(a, s, logs, group, lc, LIFECYCLE_PATTERN, "lifecycle");
		collect_stream_lines(a, s, logs, group, hma, HMA_PATTERN, "hma");
	}
	hp_snapshot_set(s, "logs", logs);
}

cJSON *hp_collect_meta(struct hp_aws *a, struct hp_snapshot *s, const char *cluster_arg,
		     const char *node)
{
	cJSON *meta = cJSON_CreateObject();

	if (cluster_arg)
		cJSON_AddStringToObject(meta, "cluster_arg", cluster_arg);
	cJSON_AddStringToObject(meta, "region", a->region);
	if (node)
		cJSON_AddStringToObject(meta, "node_filter", node);
	else
		cJSON_AddNullToObject(meta, "node_filter");
	cJSON_AddNumberToObject(meta, "collected_at_ms", (double)a->sys->now_ms(a->sys));
	cJSON_AddStringToObject(meta, "tool", "hpnode " HP_VERSION);
	/* The credential source kind, never a secret: "assume-role via profile ops". */
	cJSON_AddStringToObject(meta, "credential_source", hp_creds_source_desc(a));
	hp_snapshot_set(s, "meta", meta);
	return meta;
}

/*
 * After DescribeCluster, the cluster's reads as tasks (tasks.h), in the
 * order a sequential run makes them: the node list, DescribeClusterNode
 * (--node), events, instance types, logs (after the node reads with --node:
 * they name the node's group), then the network steps (network.c). They
 * all start at once, so the 200 node pages of a large cluster no longer
 * hold up everything else.
 */
enum cluster_step { CSTEP_NODES, CSTEP_NODE, CSTEP_EVENTS, CSTEP_TYPES, CSTEP_LOGS, CSTEP__COUNT };

struct cluster_plan {
	const struct hp_collect_opts *o;
	const struct hp_snapshot *s;   /* the real snapshot, read only while tasks run */
	const char *arn;
	struct hp_tasks *ts;
	int task[CSTEP__COUNT];
};

static void step_nodes(struct hp_task *t)
{
	struct cluster_plan *p = t->ctx;
	int pages = p->o->node_pages ? p->o->node_pages : HP_NODE_PAGES;
	size_t expected = expected_nodes(hp_snapshot_get(p->s, "cluster"));

	/* The progress line counts the nodes listed against this. */
	if (expected)
		progress("ListClusterNodes", 0, 0, expected);
	/* More than a page: in partitions at once (nodelist.c); else one chain. */
	if (!hp_collect_node_partitions(t->a, &t->out, hp_snapshot_get(p->s, "cluster"), p->arn,
					pages))
		return;
	collect_cluster_list(t->a, &t->out, p->arn, "ListClusterNodes", "ClusterNodeSummaries",
			     pages, "nodes");
	if (hp_json_bool(t->out.root, "nodes_truncated", 0))
		hp_snapshot_set(&t->out, "nodes_page_cap", cJSON_CreateNumber(pages));
}

static void step_node(struct hp_task *t)
{
	struct cluster_plan *p = t->ctx;

	collect_node(t->a, &t->out, p->arn, p->o->node);
}

static void step_events(struct hp_task *t)
{
	struct cluster_plan *p = t->ctx;
	const char *mode = hp_json_str(hp_snapshot_get(p->s, "cluster"), "NodeProvisioningMode");

	if (mode && !strcmp(mode, "Continuous")) {
		collect_cluster_list(t->a, &t->out, p->arn, "ListClusterEvents", "Events",
				     p->o->event_pages ? p->o->event_pages : HP_EVENT_PAGES, "events");
		collect_event_details(t->a, &t->out, p->arn);
	} else {
		hp_snapshot_set(&t->out, "events_skipped",
				cJSON_CreateString(mode ? "this cluster's NodeProvisioningMode is not Continuous"
						   : "this cluster has no NodeProvisioningMode (legacy provisioning)"));
	}
}

static void step_types(struct hp_task *t)
{
	struct cluster_plan *p = t->ctx;

	collect_instance_types(t->a, hp_snapshot_get(p->s, "cluster"), &t->out);
}

static void step_logs(struct hp_task *t)
{
	struct cluster_plan *p = t->ctx;
	const char *ng = NULL;

	if (p->o->node)
		ng = node_group(&p->ts->t[p->task[CSTEP_NODES]].out,
				&p->ts->t[p->task[CSTEP_NODE]].out, p->o->node);
	collect_logs(t->a, p->s, &t->out, p->o->node, ng);
}

/* One debug line for the phase: what it sent and how many connections it opened. */
static void debug_summary(const struct hp_aws *a, const struct hp_tasks *ts, int64_t ms)
{
	if (a->debug)
		hp_debug("API phase: %u requests (%u retries), %u connections opened, "
			"%llu bytes in, %zu steps, up to %zu at once, %lld ms",
			__atomic_load_n(&a->stats.calls, __ATOMIC_RELAXED),
			__atomic_load_n(&a->stats.retries, __ATOMIC_RELAXED),
			__atomic_load_n(&a->stats.connections, __ATOMIC_RELAXED),
			(unsigned long long)__atomic_load_n(&a->stats.bytes_in, __ATOMIC_RELAXED),
			ts->n, ts->peak, (long long)ms);
}

/*
 * The credentials check and DescribeCluster at once (one round trip, not
 * two), with the outcome of the two in order: when the check fails, its
 * error and its failed call are all there is, as if DescribeCluster had
 * never been sent. The check changes its client's per-call limits, so it
 * runs on a copy whose counts are added back.
 */
struct first_reads {
	const char *name;
	struct hp_error e_id, e_cl;
	int rc_id, rc_cl;
	int id_failed;              /* atomic: read by the other task */
};

static void step_identity(struct hp_task *t)
{
	struct first_reads *f = t->ctx;
	struct hp_aws copy = *t->a;

	copy.owns_cp = 0;
	memset(&copy.stats, 0, sizeof(copy.stats));
	f->rc_id = hp_collect_identity(&copy, &t->out, &f->e_id);
	__atomic_add_fetch(&t->a->stats.calls, copy.stats.calls, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->a->stats.retries, copy.stats.retries, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->a->stats.connections, copy.stats.connections, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->a->stats.bytes_in, copy.stats.bytes_in, __ATOMIC_RELAXED);
	if (f->rc_id)
		__atomic_store_n(&f->id_failed, 1, __ATOMIC_RELAXED);
}

static void step_describe(struct hp_task *t)
{
	struct first_reads *f = t->ctx;

	/* One after another (concurrency 1): nothing is sent after a failed check. */
	if (__atomic_load_n(&f->id_failed, __ATOMIC_RELAXED)) {
		f->rc_cl = -1;
		return;
	}
	f->rc_cl = collect_cluster(t->a, &t->out, f->name, &f->e_cl);
}

static int identity_and_cluster(struct hp_aws *a, struct hp_snapshot *s, const char *name,
				struct hp_error *e)
{
	struct first_reads f;
	struct hp_tasks ts;
	int id, cl, rc = 0;

	memset(&f, 0, sizeof(f));
	f.name = name;
	hp_tasks_init(&ts);
	id = hp_tasks_add(&ts, "sts:GetCallerIdentity", HP_SVC_STS, step_identity, &f, 0);
	cl = hp_tasks_add(&ts, "sagemaker:DescribeCluster", HP_SVC_SAGEMAKER, step_describe, &f, 0);
	hp_tasks_run(&ts, a);
	hp_task_merge(&ts.t[id], s->root, s);
	if (f.rc_id) {
		*e = f.e_id;
		rc = -1;
	} else {
		hp_task_merge(&ts.t[cl], s->root, s);
		if (f.rc_cl) {
			*e = f.e_cl;
			rc = -1;
		}
	}
	hp_tasks_release(&ts);
	return rc;
}

int hp_collect_cluster(struct hp_aws *a, const struct hp_collect_opts *o, struct hp_snapshot *s,
		       struct hp_error *e)
{
	static const struct hp_network_opts all_network = { HP_NET_ALL, NULL, 0, NULL };
	cJSON *meta = hp_collect_meta(a, s, o->cluster, o->node);
	int64_t t0 = a->sys->monotonic_ms(a->sys);
	struct cluster_plan p;
	struct hp_net_plan *net;
	struct hp_tasks ts;
	int i;

	if (identity_and_cluster(a, s, o->cluster, e))
		return -1;
	cJSON_AddStringToObject(meta, "orchestrator", hp_snap_orchestrator(s));
	memset(&p, 0, sizeof(p));
	p.o = o;
	p.s = s;
	p.arn = hp_snap_cluster_arn(s);
	if (!p.arn)
		p.arn = o->cluster;
	p.ts = &ts;
	for (i = 0; i < CSTEP__COUNT; i++)
		p.task[i] = -1;
	hp_tasks_init(&ts);
	p.task[CSTEP_NODES] = hp_tasks_add(&ts, "sagemaker:ListClusterNodes", HP_SVC_SAGEMAKER,
					   step_nodes, &p, 0);
	if (o->node)
		p.task[CSTEP_NODE] = hp_tasks_add(&ts, "sagemaker:DescribeClusterNode",
						  HP_SVC_SAGEMAKER, step_node, &p, 0);
	p.task[CSTEP_EVENTS] = hp_tasks_add(&ts, "sagemaker:ListClusterEvents", HP_SVC_SAGEMAKER,
					    step_events, &p, 0);
	p.task[CSTEP_TYPES] = hp_tasks_add(&ts, "ec2:DescribeInstanceTypes", HP_SVC_EC2, step_types,
					   &p, 0);
	p.task[CSTEP_LOGS] = hp_tasks_add(&ts, "logs:FilterLogEvents", HP_SVC_LOGS, step_logs, &p,
					  o->node ? HP_TASK_BIT(p.task[CSTEP_NODES]) |
					  HP_TASK_BIT(p.task[CSTEP_NODE]) : 0);
	net = hp_net_plan_new(&all_network, s, &ts);
	hp_tasks_run(&ts, a);
	for (i = 0; i < CSTEP__COUNT; i++)
		if (p.task[i] >= 0)
			hp_task_merge(&ts.t[p.task[i]], s->root, s);
	hp_net_plan_finish(net, s);
	debug_summary(a, &ts, a->sys->monotonic_ms(a->sys) - t0);
	hp_tasks_release(&ts);
	return 0;
}

int hp_collect_cluster_network(struct hp_aws *a, const char *cluster,
			       const struct hp_network_opts *net, struct hp_snapshot *s,
			       struct hp_error *e)
{
	cJSON *meta = hp_collect_meta(a, s, cluster, NULL);

	if (identity_and_cluster(a, s, cluster, e))
		return -1;
	cJSON_AddStringToObject(meta, "orchestrator", hp_snap_orchestrator(s));
	hp_collect_network(a, net, s);
	return 0;
}
