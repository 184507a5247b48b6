/*
 * hp_collect_probes over canned AWS replies (one worker, so the fake sys
 * is used from one thread): which nodes are probed, the SSM targets it
 * builds, the entries and totals it records, --node, --sample, and the
 * failed-call rows it leaves for the api checks.
 */
#include <string.h>

#include <cjson/cJSON.h>

#include "fake-sys.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/array.h"
#include "hp/json.h"
#include "hp/nccl-facts.h"
#include "t.h"

static const char not_connected[] = "{\"__type\":\"TargetNotConnected\",\"message\":\"not connected\"}";

static void snap_with_nodes(struct hp_snapshot *s)
{
	hp_snapshot_init(s);
	hp_snapshot_set(s, "cluster", cJSON_Parse(
		"{\"ClusterName\":\"c\",\"ClusterArn\":\"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456\"}"));
	hp_snapshot_set(s, "nodes", cJSON_Parse(
		"[{\"InstanceId\":\"i-a\",\"InstanceGroupName\":\"g1\",\"InstanceType\":\"ml.p5.48xlarge\",\"InstanceStatus\":{\"Status\":\"Running\"}},"
		"{\"InstanceId\":\"i-b\",\"InstanceGroupName\":\"g1\",\"InstanceStatus\":{\"Status\":\"Running\"}},"
		"{\"InstanceId\":\"i-c\",\"InstanceGroupName\":\"g2\",\"InstanceStatus\":{\"Status\":\"Failure\"}},"
		"{\"InstanceId\":\"i-d\",\"InstanceGroupName\":\"g2\",\"InstanceStatus\":{\"Status\":\"Running\"}},"
		"{\"InstanceId\":\"i-e\",\"InstanceGroupName\":\"g3\",\"InstanceStatus\":{\"Status\":\"Running\"}}]"));
}

static void opts(struct hp_probe_opts *o)
{
	hp_probe_opts_defaults(o);
	o->concurrency = 1;
	o->rate_per_s = 1000;
}

/*
 * The sweep's entries (in the snapshot's probe store) as one object, for
 * reading with hp_json_*; freed by the caller. None has its raw output.
 */
static cJSON *probes_of(const struct hp_snapshot *s)
{
	cJSON *all = cJSON_CreateObject();
	struct hp_probe_iter it;
	const cJSON *e;

	T_ASSERT(hp_snapshot_get(s, "probes") == NULL);
	for (e = hp_probes_first(s, "probes", &it); e; e = hp_probes_next(&it)) {
		T_ASSERT(!cJSON_GetObjectItem(e, "stdout"));
		cJSON_AddItemToObject(all, e->string, cJSON_Duplicate(e, 1));
	}
	return all;
}

static int asked_for(const struct fake_sys *f, const char *target)
{
	size_t i;

	for (i = 0; i < f->nreq; i++)
		if (strstr(f->req_body[i], target))
			return 1;
	return 0;
}

static void t_every_running_node(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s;
	struct hp_probe_opts o;
	const cJSON *m;
	cJSON *p;
	int i;

	fake_sys_init(&f);
	fake_aws(&f, &a, 3);
	for (i = 0; i < 4; i++)
		fake_reply(&f, 400, NULL, not_connected);
	snap_with_nodes(&s);
	opts(&o);
	hp_collect_probes(&a, &o, &s);
	T_EQ(f.nreq, 4);
	T_ASSERT(asked_for(&f, "\"Target\":\"sagemaker-cluster:abcdef123456_g1-i-a\""));
	T_ASSERT(asked_for(&f, "\"Target\":\"sagemaker-cluster:abcdef123456_g3-i-e\""));
	T_ASSERT(!asked_for(&f, "i-c"));
	/* The command is the on-node probe, shipped base64-encoded inside sh -c. */
	T_ASSERT(asked_for(&f, " | base64 -d | sh'"));
	p = probes_of(&s);
	T_EQ(cJSON_GetArraySize(p), 5);
	T_EQ(hp_probes_count(&s, "probes"), 5);
	/* In the order of the node list. */
	T_STREQ(p->child->string, "i-a");
	T_STREQ(p->child->next->next->string, "i-c");
	T_STREQ(hp_json_str(p, "i-a.state"), "unreachable");
	T_CONTAINS(hp_json_str(p, "i-a.reason"), "TargetNotConnected");
	T_STREQ(hp_json_str(p, "i-a.group"), "g1");
	T_STREQ(hp_json_str(p, "i-a.instance_type"), "ml.p5.48xlarge");
	T_ASSERT(cJSON_IsNull(hp_json_get(p, "i-a.exit_code")));
	T_ASSERT(hp_json_bool(p, "i-a.truncated", 0));
	T_STREQ(hp_json_str(p, "i-a.stderr"), "");
	T_STREQ(hp_json_str(p, "i-c.state"), "skipped");
	T_STREQ(hp_json_str(p, "i-c.reason"), "node not Running (Failure)");
	cJSON_Delete(p);
	m = hp_snapshot_get(&s, "probes_meta");
	T_EQ(hp_json_num(m, "requested", -1), 5);
	T_EQ(hp_json_num(m, "probed", -1), 0);
	T_EQ(hp_json_num(m, "unreachable", -1), 4);
	T_EQ(hp_json_num(m, "skipped", -1), 1);
	T_STREQ(hp_json_str(m, "transport"), "native");
	T_STREQ(hp_json_str(m, "selection"), "all");
	/* TargetNotConnected is the node's state, not a failed call. */
	T_ASSERT(hp_snapshot_get(&s, "calls") == NULL);
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

static void t_sample_takes_turns_between_groups(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s;
	struct hp_probe_opts o;
	cJSON *p;
	int i;

	fake_sys_init(&f);
	fake_aws(&f, &a, 3);
	for (i = 0; i < 3; i++)
		fake_reply(&f, 400, NULL, not_connected);
	snap_with_nodes(&s);
	opts(&o);
	o.sample = 3;
	hp_collect_probes(&a, &o, &s);
	T_EQ(f.nreq, 3);
	/* One of each group: g1's first, g2's only Running node, g3's. */
	T_ASSERT(asked_for(&f, "_g1-i-a\""));
	T_ASSERT(asked_for(&f, "_g2-i-d\""));
	T_ASSERT(asked_for(&f, "_g3-i-e\""));
	p = probes_of(&s);
	/* Nodes left out of the sample have no entry; the Failure node keeps its skip. */
	T_ASSERT(hp_json_get(p, "i-b") == NULL);
	T_STREQ(hp_json_str(p, "i-c.state"), "skipped");
	cJSON_Delete(p);
	T_STREQ(hp_json_str(hp_snapshot_get(&s, "probes_meta"), "selection"), "sample");
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

static void t_node_only(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s;
	struct hp_probe_opts o;

	fake_sys_init(&f);
	fake_aws(&f, &a, 3);
	fake_reply(&f, 400, NULL, not_connected);
	snap_with_nodes(&s);
	opts(&o);
	o.node = "i-d";
	hp_collect_probes(&a, &o, &s);
	T_EQ(f.nreq, 1);
	T_ASSERT(asked_for(&f, "_g2-i-d\""));
	T_EQ(hp_probes_count(&s, "probes"), 1);
	hp_snapshot_release(&s);

	/* A --node that is not Running is skipped without a call. */
	fake_aws(&f, &a, 3);
	snap_with_nodes(&s);
	o.node = "i-c";
	hp_collect_probes(&a, &o, &s);
	T_EQ(f.nreq, 0);
	{
		cJSON *p = probes_of(&s);

		T_STREQ(hp_json_str(p, "i-c.state"), "skipped");
		cJSON_Delete(p);
	}
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

static void t_node_from_describe_when_not_listed(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s;
	struct hp_probe_opts o;

	fake_sys_init(&f);
	fake_aws(&f, &a, 3);
	fake_reply(&f, 400, NULL, not_connected);
	hp_snapshot_init(&s);
	hp_snapshot_set(&s, "cluster", cJSON_Parse(
		"{\"ClusterArn\":\"arn:aws:sagemaker:us-west-2:123456789012:cluster/abcdef123456\"}"));
	hp_snapshot_set(&s, "node", cJSON_Parse(
		"{\"InstanceId\":\"i-z\",\"InstanceGroupName\":\"gz\",\"InstanceStatus\":{\"Status\":\"Running\"}}"));
	opts(&o);
	o.node = "i-z";
	hp_collect_probes(&a, &o, &s);
	T_EQ(f.nreq, 1);
	T_ASSERT(asked_for(&f, "_gz-i-z\""));
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

static void t_denied_recorded_once(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s;
	struct hp_probe_opts o;
	const cJSON *calls;

	fake_sys_init(&f);
	fake_aws(&f, &a, 3);
	fake_reply(&f, 400, NULL, "{\"__type\":\"AccessDeniedException\",\"message\":\"no\"}");
	snap_with_nodes(&s);
	opts(&o);
	hp_collect_probes(&a, &o, &s);
	/* The first denial stops the sweep: one call, one "calls" row, every node skipped. */
	T_EQ(f.nreq, 1);
	calls = hp_snapshot_get(&s, "calls");
	T_EQ(cJSON_GetArraySize(calls), 1);
	T_STREQ(hp_json_str(cJSON_GetArrayItem(calls, 0), "action"), "StartSession");
	T_STREQ(hp_json_str(cJSON_GetArrayItem(calls, 0), "class"), "denied");
	T_EQ(hp_json_num(hp_snapshot_get(&s, "probes_meta"), "skipped", -1), 5);
	{
		cJSON *p = probes_of(&s);

		T_CONTAINS(hp_json_str(p, "i-e.reason"), "not probed after ssm:StartSession");
		cJSON_Delete(p);
	}
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

static void t_nothing_to_target(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s;
	struct hp_probe_opts o;

	fake_sys_init(&f);
	fake_aws(&f, &a, 3);
	hp_snapshot_init(&s);
	hp_snapshot_set(&s, "nodes", cJSON_Parse("[]"));
	opts(&o);
	hp_collect_probes(&a, &o, &s);
	T_EQ(f.nreq, 0);
	T_CONTAINS(hp_json_str(hp_snapshot_get(&s, "probes_meta"), "note"), "cluster id unknown");
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

/*
 * A set (hpnode nccl): only its nodes, its command, its keys, its
 * selection; "nccl_probes" has a decoder, so the entries go to the probe
 * store, not the document, and read back through the iterator.
 */
static void t_set_of_nodes(void)
{
	static const char *const ids[] = { "i-d", "i-c", "i-zz" };
	struct hp_probe_set set = { 0 };
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s;
	struct hp_probe_opts o;
	struct hp_probe_iter it;
	const cJSON *e, *m;

	fake_sys_init(&f);
	fake_aws(&f, &a, 3);
	fake_reply(&f, 400, NULL, not_connected);
	snap_with_nodes(&s);
	opts(&o);
	set.ids = ids;
	set.n = HP_ARRAY_LEN(ids);
	set.command = "echo nccl";
	set.key = "nccl_probes";
	set.meta_key = "nccl_probes_meta";
	set.selection = "job";
	hp_collect_probes_set(&a, &o, &set, &s);
	/* i-d is Running (one StartSession with the set's command), i-c is not, i-zz is not listed. */
	T_EQ(f.nreq, 1);
	T_ASSERT(asked_for(&f, "_g2-i-d\""));
	T_ASSERT(asked_for(&f, "echo nccl"));
	T_ASSERT(hp_snapshot_get(&s, "nccl_probes") == NULL);
	T_ASSERT(hp_snapshot_get(&s, "probes") == NULL && !hp_probes_stored(&s, "probes"));
	T_ASSERT(hp_probes_stored(&s, "nccl_probes"));
	T_EQ(hp_probes_count(&s, "nccl_probes"), 2);
	e = hp_probes_first(&s, "nccl_probes", &it);
	T_STREQ(e->string, "i-c");
	T_STREQ(hp_json_str(e, "state"), "skipped");
	e = hp_probes_next(&it);
	T_STREQ(e->string, "i-d");
	T_STREQ(hp_json_str(e, "state"), "unreachable");
	T_ASSERT(!cJSON_GetObjectItem(e, "stdout"));
	T_ASSERT(hp_probes_next(&it) == NULL);
	m = hp_snapshot_get(&s, "nccl_probes_meta");
	T_STREQ(hp_json_str(m, "selection"), "job");
	T_EQ(hp_json_num(m, "requested", -1), 2);
	T_EQ(hp_json_num(m, "unreachable", -1), 1);
	T_ASSERT(hp_facts_decoder_of("nccl_probes") == hp_nccl_probe_parse);
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

/* The progress counts: 0 of all before any node, then one call per node, the last at all of them. */
struct prog_log {
	size_t n, first_done, first_total, last_done, last_total, last_unreachable;
};

static void log_progress(void *ud, const struct hp_ssm_progress *p)
{
	struct prog_log *l = ud;

	if (!l->n++) {
		l->first_done = p->done;
		l->first_total = p->total;
	}
	l->last_done = p->done;
	l->last_total = p->total;
	l->last_unreachable = p->unreachable;
}

static void t_progress_from_zero(void)
{
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s;
	struct hp_probe_opts o;
	struct prog_log l;
	int i;

	memset(&l, 0, sizeof(l));
	fake_sys_init(&f);
	fake_aws(&f, &a, 3);
	for (i = 0; i < 4; i++)
		fake_reply(&f, 400, NULL, not_connected);
	snap_with_nodes(&s);
	opts(&o);
	o.progress = log_progress;
	o.progress_ud = &l;
	hp_collect_probes(&a, &o, &s);
	T_EQ(f.nreq, 4);
	T_ASSERT(l.first_total > 0);
	T_EQ(l.first_done, 0);
	T_EQ(l.n, l.first_total + 1);
	T_EQ(l.last_done, l.last_total);
	T_EQ(l.last_unreachable, 4);
	hp_snapshot_release(&s);
	fake_sys_release(&f);
}

T_MAIN(T(t_every_running_node), T(t_sample_takes_turns_between_groups), T(t_node_only),
       T(t_node_from_describe_when_not_listed), T(t_denied_recorded_once), T(t_nothing_to_target),
       T(t_set_of_nodes), T(t_progress_from_zero))
