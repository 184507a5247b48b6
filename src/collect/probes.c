/*
 * The on-node probe collector: picks the nodes to probe from the snapshot
 * (every Running node, the --node target, or a sample spread over the
 * instance groups), runs the SSM sweep, and records each node's outcome
 * under "probes" and the sweep's settings and totals under "probes_meta".
 * What the output means is for the checks; nothing is judged here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/collect.h"
#include "hp/probe.h"
#include "hp/json.h"

#define DONE_MARKER "@@HP@@ DONE"

/* The command every node runs: set->command, else the on-node probe (probe.sh, base64 inside sh -c). */
static void probe_command(const struct hp_probe_set *set, struct hp_buf *out)
{
	if (set && set->command)
		hp_buf_puts(out, set->command);
	else
		hp_probe_command(out);
}

/* Whether iid is one of the set's ids (every node when the set names none). */
static int in_set(const struct hp_probe_set *set, const char *iid)
{
	size_t i;

	if (!set || !set->ids)
		return 1;
	for (i = 0; i < set->n; i++)
		if (set->ids[i] && !strcmp(set->ids[i], iid))
			return 1;
	return 0;
}

static const char *transport_name(enum hp_ssm_transport t)
{
	switch (t) {
	case HP_SSM_NATIVE: return "native";
	case HP_SSM_PLUGIN: return "plugin";
	case HP_SSM_AUTO: return "auto";
	}
	return "unknown";
}

void hp_probe_opts_defaults(struct hp_probe_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->concurrency = 16;
	o->rate_per_s = 3;
	o->timeout_ms = 180000;
	o->transport = HP_SSM_NATIVE;
}

/* String member at a dotted path, or def when absent. */
static const char *str_or(const cJSON *o, const char *path, const char *def)
{
	const char *v = hp_json_str(o, path);

	return v ? v : def;
}

struct pick {
	const cJSON *node;
	const char *reason;   /* NULL: probe it; else why it is skipped */
	char status[64];
};

/* Choose n of the Running nodes, taking turns between the instance groups. */
static void sample(struct pick *v, size_t nv, int want)
{
	const char **groups = NULL;
	size_t ng = 0, i, k;
	size_t *cursor;
	int taken = 0, progress = 1;

	for (i = 0; i < nv; i++) {
		const char *g = str_or(v[i].node, "InstanceGroupName", "");
		if (v[i].reason)
			continue;
		for (k = 0; k < ng && strcmp(groups[k], g); k++)
			;
		if (k == ng) {
			groups = xrealloc(groups, (ng + 1) * sizeof(*groups));
			groups[ng++] = g;
		}
		v[i].reason = "not in the sample";
	}
	cursor = xcalloc(ng ? ng : 1, sizeof(*cursor));
	while (taken < want && progress) {
		progress = 0;
		for (k = 0; k < ng && taken < want; k++) {
			for (i = cursor[k]; i < nv; i++) {
				if (v[i].reason && !strcmp(v[i].reason, "not in the sample") &&
				    !strcmp(str_or(v[i].node, "InstanceGroupName", ""), groups[k])) {
					v[i].reason = NULL;
					taken++;
					progress = 1;
					cursor[k] = i + 1;
					break;
				}
			}
			if (i == nv)
				cursor[k] = nv;
		}
	}
	free(cursor);
	free(groups);
}

static void add_str(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* Raw output as a JSON string: NUL bytes cannot travel in one, so they are dropped. */
static void add_text(cJSON *o, const char *k, const struct hp_buf *b)
{
	char *t = xmalloc(b->len + 1);
	size_t i, n = 0;

	for (i = 0; i < b->len; i++)
		if (b->buf[i])
			t[n++] = b->buf[i];
	t[n] = '\0';
	cJSON_AddStringToObject(o, k, t);
	free(t);
}

static cJSON *entry(const cJSON *node, enum hp_ssm_state st, const char *reason,
		    const struct hp_ssm_result *r)
{
	cJSON *e = cJSON_CreateObject();
	struct hp_buf empty = HP_BUF_INIT(1);

	cJSON_AddStringToObject(e, "state", hp_ssm_state_name(st));
	cJSON_AddStringToObject(e, "reason", reason ? reason : "");
	if (r && r->output.has_exit)
		cJSON_AddNumberToObject(e, "exit_code", r->output.exit_code);
	else
		cJSON_AddNullToObject(e, "exit_code");
	add_text(e, "stdout", r ? &r->output.out : &empty);
	add_text(e, "stderr", r ? &r->output.err : &empty);
	cJSON_AddBoolToObject(e, "truncated", !r || !r->output.out.len ||
			      !strstr(r->output.out.buf, DONE_MARKER));
	cJSON_AddNumberToObject(e, "duration_ms", r ? (double)r->duration_ms : 0);
	add_str(e, "group", hp_json_str(node, "InstanceGroupName"));
	add_str(e, "instance_type", hp_json_str(node, "InstanceType"));
	if (r) {
		cJSON_AddStringToObject(e, "transport", r->used == HP_SSM_PLUGIN ? "plugin" : "native");
		cJSON_AddNumberToObject(e, "start_attempts", r->start_attempts);
		cJSON_AddBoolToObject(e, "terminated", r->terminated);
		cJSON_AddBoolToObject(e, "stdout_capped", r->output.out_capped);
		cJSON_AddBoolToObject(e, "stderr_capped", r->output.err_capped);
	}
	return e;
}

/* One "calls" row per distinct failure, however many nodes met it. */
static void record_failure(struct hp_snapshot *s, const struct hp_ssm_result *r)
{
	const cJSON *calls = hp_snapshot_get(s, "calls"), *c;

	if (!r->failed_action)
		return;
	cJSON_ArrayForEach(c, calls) {
		if (!strcmp(str_or(c, "service", ""), "ssm") &&
		    !strcmp(str_or(c, "action", ""), r->failed_action) &&
		    !strcmp(str_or(c, "class", ""), hp_aws_class_name(r->failed_call.cls)) &&
		    !strcmp(str_or(c, "code", ""), r->failed_call.code))
			return;
	}
	hp_collect_record(s, HP_SVC_SSM, r->failed_action, &r->failed_call);
}

/* The sweep's settings, the first half of "probes_meta". */
static cJSON *sweep_meta(const struct hp_probe_opts *o, const struct hp_probe_set *set)
{
	cJSON *meta = cJSON_CreateObject();

	cJSON_AddStringToObject(meta, "transport", transport_name(o->transport));
	cJSON_AddNumberToObject(meta, "concurrency", o->concurrency);
	cJSON_AddNumberToObject(meta, "rate_per_s", o->rate_per_s);
	cJSON_AddNumberToObject(meta, "timeout_s", (double)(o->timeout_ms / 1000));
	cJSON_AddStringToObject(meta, "selection", set && set->selection ? set->selection :
				o->node ? "node" : o->sample ? "sample" : "all");
	if (o->sample)
		cJSON_AddNumberToObject(meta, "sample", o->sample);
	return meta;
}

/* With --node, DescribeClusterNode's answer stands in when the list lacks the node. */
static const cJSON *unlisted_node(const struct hp_probe_opts *o, const struct hp_snapshot *s,
				  const cJSON *nodes)
{
	const cJSON *node = hp_snapshot_get(s, "node"), *n;
	const char *iid;

	if (!o->node || !cJSON_IsObject(node))
		return NULL;
	cJSON_ArrayForEach(n, nodes)
		if (!strcmp(str_or(n, "InstanceId", ""), o->node))
			return NULL;
	iid = hp_json_str(node, "InstanceId");
	return iid && !strcmp(iid, o->node) ? node : NULL;
}

/*
 * Every listed node (and the unlisted --node), each marked to probe or
 * with the reason it is skipped; a sample leaves the others "not in the
 * sample". Returns the count; *out is freed by the caller.
 */
static size_t pick_nodes(const struct hp_probe_opts *o, const struct hp_probe_set *set,
			 const cJSON *nodes, const cJSON *extra, struct pick **out)
{
	struct pick *picks = NULL;
	const cJSON *n;
	size_t npicks = 0, i, total = (size_t)cJSON_GetArraySize(nodes) + (extra ? 1 : 0);

	picks = xcalloc(total ? total : 1, sizeof(*picks));
	for (i = 0, n = nodes ? nodes->child : NULL; i < total; i++, n = n ? n->next : NULL) {
		const cJSON *node = n ? n : extra;
		const char *iid = hp_json_str(node, "InstanceId");
		struct pick *p;

		if (!cJSON_IsObject(node) || !iid || (o->node && strcmp(o->node, iid)) ||
		    !in_set(set, iid))
			continue;
		p = &picks[npicks++];
		p->node = node;
		if (!hp_snap_node_running(node)) {
			snprintf(p->status, sizeof(p->status), "node not Running (%.40s)",
				 str_or(node, "InstanceStatus.Status", "no status"));
			p->reason = p->status;
		} else if (!hp_json_str(node, "InstanceGroupName")) {
			p->reason = "no instance group in the node list";
		}
	}
	if (o->sample > 0 && !o->node)
		sample(picks, npicks, o->sample);
	*out = picks;
	return npicks;
}

/* The SSM target of every pick to probe, in order; returns how many. */
static size_t build_targets(const struct pick *picks, size_t npicks, const char *cluster_id,
			    struct hp_ssm_target *targets)
{
	size_t i, nt = 0;

	for (i = 0; i < npicks; i++) {
		struct hp_ssm_target *t;

		if (picks[i].reason)
			continue;
		t = &targets[nt++];
		t->instance_id = hp_json_str(picks[i].node, "InstanceId");
		t->group = hp_json_str(picks[i].node, "InstanceGroupName");
		t->instance_type = hp_json_str(picks[i].node, "InstanceType");
		snprintf(t->target, sizeof(t->target), "sagemaker-cluster:%s_%.200s-%.40s", cluster_id,
			 t->group, t->instance_id);
	}
	return nt;
}

/* The sweep's configuration; the plugin is looked for (and named in meta) when it may be used. */
static void sweep_config(struct hp_aws *a, const struct hp_probe_opts *o, const char *command,
			 size_t nt, cJSON *meta, struct hp_ssm_config *cfg)
{
	hp_ssm_config_defaults(cfg);
	cfg->command = command;
	cfg->transport = o->transport;
	cfg->concurrency = o->concurrency;
	cfg->rate_per_s = o->rate_per_s;
	cfg->timeout_ms = o->timeout_ms;
	cfg->stop = o->stop;
	if (nt && o->transport != HP_SSM_NATIVE) {
		hp_ssm_plugin_probe(a->sys, &cfg->plugin);
		cfg->plugin.stop = o->stop;
		if (cfg->plugin.present)
			cJSON_AddStringToObject(meta, "plugin_version", cfg->plugin.version);
		else
			cJSON_AddStringToObject(meta, "plugin_error", cfg->plugin.error);
	}
}

/* One "probes" entry per pick (results[] in target order), counted by state. */
static void record_results(struct hp_snapshot *s, const struct pick *picks, size_t npicks,
			   const struct hp_ssm_result *results, cJSON *probes, size_t counts[3])
{
	size_t i, k = 0;

	for (i = 0; i < npicks; i++) {
		const char *iid = hp_json_str(picks[i].node, "InstanceId");
		cJSON *ent;

		if (picks[i].reason) {
			if (!strcmp(picks[i].reason, "not in the sample"))
				continue;
			ent = entry(picks[i].node, HP_SSM_SKIPPED, picks[i].reason, NULL);
			counts[HP_SSM_SKIPPED]++;
		} else {
			const struct hp_ssm_result *r = &results[k++];

			ent = entry(picks[i].node, r->state, r->reason, r);
			counts[r->state]++;
			record_failure(s, r);
		}
		/* A listing that repeats an id keeps its first entry. */
		if (cJSON_GetObjectItemCaseSensitive(probes, iid))
			cJSON_Delete(ent);
		else
			cJSON_AddItemToObject(probes, iid, ent);
	}
}

/* Probe the targets of picks and record every pick's outcome into probes. */
static void sweep(struct hp_aws *a, const struct hp_probe_opts *o, const struct hp_probe_set *set,
		  struct hp_snapshot *s, const char *cluster_id, const struct pick *picks,
		  size_t npicks, cJSON *probes, cJSON *meta, size_t counts[3], size_t *nt)
{
	struct hp_ssm_target *targets = xcalloc(npicks ? npicks : 1, sizeof(*targets));
	struct hp_buf cmd = HP_BUF_INIT(HP_MAX_LINE);
	struct hp_ssm_result *results;
	struct hp_ssm_config cfg;
	size_t i;

	*nt = build_targets(picks, npicks, cluster_id, targets);
	probe_command(set, &cmd);
	sweep_config(a, o, cmd.buf, *nt, meta, &cfg);
	results = xcalloc(*nt ? *nt : 1, sizeof(*results));
	hp_ssm_sweep(a, &cfg, targets, *nt, results, o->progress, o->progress_ud);
	record_results(s, picks, npicks, results, probes, counts);
	for (i = 0; i < *nt; i++)
		hp_ssm_result_release(&results[i]);
	free(results);
	free(targets);
	hp_buf_release(&cmd);
}

void hp_collect_probes(struct hp_aws *a, const struct hp_probe_opts *o, struct hp_snapshot *s)
{
	hp_collect_probes_set(a, o, NULL, s);
}

void hp_collect_probes_set(struct hp_aws *a, const struct hp_probe_opts *o,
			   const struct hp_probe_set *set, struct hp_snapshot *s)
{
	const cJSON *nodes = hp_json_arr(s->root, "nodes"), *extra = unlisted_node(o, s, nodes);
	cJSON *probes = cJSON_CreateObject(), *meta = sweep_meta(o, set);
	size_t counts[3] = { 0, 0, 0 }, nt = 0;
	int64_t t0 = a->sys->monotonic_ms(a->sys);
	char id[64];

	hp_snap_cluster_id(s, id);
	if (!id[0] || (!nodes && !extra)) {
		/* Without the cluster id or the node list there is no SSM target to build. */
		cJSON_AddStringToObject(meta, "note", !id[0] ? "cluster id unknown (DescribeCluster failed)"
							    : "node list unavailable (ListClusterNodes failed)");
	} else {
		struct pick *picks;
		size_t npicks = pick_nodes(o, set, nodes, extra, &picks);

		sweep(a, o, set, s, id, picks, npicks, probes, meta, counts, &nt);
		free(picks);
	}
	cJSON_AddNumberToObject(meta, "requested", (double)cJSON_GetArraySize(probes));
	cJSON_AddNumberToObject(meta, "probed", (double)counts[HP_SSM_PROBED]);
	cJSON_AddNumberToObject(meta, "unreachable", (double)counts[HP_SSM_UNREACHABLE]);
	cJSON_AddNumberToObject(meta, "skipped", (double)counts[HP_SSM_SKIPPED]);
	cJSON_AddNumberToObject(meta, "wall_ms", (double)(a->sys->monotonic_ms(a->sys) - t0));
	/* Interrupted (SIGINT 2, SIGTERM 15): the report says N of M nodes probed. */
	if (o->stop && *o->stop) {
		cJSON_AddNumberToObject(meta, "interrupted", (double)*o->stop);
		cJSON_AddNumberToObject(meta, "to_probe", (double)nt);
	}
	hp_snapshot_set(s, set && set->key ? set->key : "probes", probes);
	hp_snapshot_set(s, set && set->meta_key ? set->meta_key : "probes_meta", meta);
}

cJSON *hp_collect_probe_one(struct hp_aws *a, const struct hp_probe_opts *o,
			    struct hp_snapshot *s, const char *iid, const char *command)
{
	const cJSON *n, *node = NULL;
	struct hp_ssm_config cfg;
	struct hp_ssm_target t;
	struct hp_ssm_result r;
	cJSON *ent;
	char id[64];

	hp_snap_cluster_id(s, id);
	cJSON_ArrayForEach(n, hp_json_arr(s->root, "nodes")) {
		const char *x = hp_json_str(n, "InstanceId");
		if (x && !strcmp(x, iid))
			node = n;
	}
	if (!id[0] || !node || !hp_json_str(node, "InstanceGroupName"))
		return NULL;
	if (!hp_snap_node_running(node))
		return entry(node, HP_SSM_SKIPPED, "node not Running", NULL);
	memset(&t, 0, sizeof(t));
	t.instance_id = iid;
	t.group = hp_json_str(node, "InstanceGroupName");
	t.instance_type = hp_json_str(node, "InstanceType");
	snprintf(t.target, sizeof(t.target), "sagemaker-cluster:%s_%.200s-%.40s", id, t.group, iid);
	hp_ssm_config_defaults(&cfg);
	cfg.command = command;
	cfg.transport = o->transport;
	cfg.concurrency = 1;
	cfg.rate_per_s = o->rate_per_s;
	cfg.timeout_ms = o->timeout_ms;
	if (o->transport != HP_SSM_NATIVE)
		hp_ssm_plugin_probe(a->sys, &cfg.plugin);
	memset(&r, 0, sizeof(r));
	hp_ssm_sweep(a, &cfg, &t, 1, &r, NULL, NULL);
	ent = entry(node, r.state, r.reason, &r);
	record_failure(s, &r);
	hp_ssm_result_release(&r);
	return ent;
}
