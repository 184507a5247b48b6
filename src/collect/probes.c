/*
 * The on-node probe collector: picks the nodes to probe from the snapshot
 * (every Running node, the --node target, or a sample spread over the
 * instance groups), runs the SSM sweep, and records each node's outcome
 * under "probes" and the sweep's settings and totals under "probes_meta".
 * Each node's output is decoded in its worker as soon as its session ends
 * (the sweep's decoder); the entry and its facts go to the snapshot's
 * probe store and the raw text to the snapshot file being saved, if any,
 * so nothing of a node stays in memory but its entry and facts. What the
 * output means is for the checks; nothing is judged here.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/pool.h"
#include "hp/probe.h"
#include "hp/json.h"
#include "hp/text.h"

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

struct idset;
static int idset_has(const struct idset *set, const char *id);

struct pick {
	const cJSON *node;
	const char *reason;   /* NULL: probe it; else why it is skipped */
	char status[64];
};

/*
 * Choose n of the Running nodes: those other signals name first, then
 * taking turns between the instance groups.
 */
static void sample(struct pick *v, size_t nv, int want, const struct idset *sig)
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
	for (i = 0; i < nv && taken < want; i++)
		if (v[i].reason && !strcmp(v[i].reason, "not in the sample") &&
		    idset_has(sig, hp_json_str(v[i].node, "InstanceId"))) {
			v[i].reason = NULL;
			taken++;
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

/* Drop the NUL bytes of b in place (as add_text does): what a saved entry holds. */
static void drop_nuls(struct hp_buf *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->len; i++)
		if (b->buf[i])
			b->buf[n++] = b->buf[i];
	b->len = n;
	b->buf[n] = '\0';
}

/*
 * A "probes" entry. With the raw output (out, err given), the entry holds
 * it; without, "stdout" is an empty stand-in and "stderr" the part of it a
 * finding can quote (HP_FACTS_STDERR_CHARS characters), for a sweep that
 * writes the raw text to the snapshot file itself.
 */
static cJSON *entry_of(const cJSON *node, enum hp_ssm_state st, const char *reason,
		       const struct hp_ssm_result *r, int with_output)
{
	cJSON *e = cJSON_CreateObject();
	struct hp_buf empty = HP_BUF_INIT(1);

	cJSON_AddStringToObject(e, "state", hp_ssm_state_name(st));
	cJSON_AddStringToObject(e, "reason", reason ? reason : "");
	if (r && r->output.has_exit)
		cJSON_AddNumberToObject(e, "exit_code", r->output.exit_code);
	else
		cJSON_AddNullToObject(e, "exit_code");
	if (with_output || !r) {
		add_text(e, "stdout", r ? &r->output.out : &empty);
		add_text(e, "stderr", r ? &r->output.err : &empty);
	} else {
		char cut[HP_FACTS_STDERR_SIZE];

		cJSON_AddStringToObject(e, "stdout", "");
		cJSON_AddStringToObject(e, "stderr", hp_text_clip(r->output.err.buf,
								  HP_FACTS_STDERR_CHARS, cut));
	}
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

static cJSON *entry(const cJSON *node, enum hp_ssm_state st, const char *reason,
		    const struct hp_ssm_result *r)
{
	return entry_of(node, st, reason, r, 1);
}

/* One "calls" row per distinct failure, however many nodes met it. */
static void record_failure(struct hp_snapshot *s, const char *action,
			   const struct hp_aws_result *call)
{
	const cJSON *calls = hp_snapshot_get(s, "calls"), *c;

	if (!action)
		return;
	cJSON_ArrayForEach(c, calls) {
		if (!strcmp(str_or(c, "service", ""), "ssm") &&
		    !strcmp(str_or(c, "action", ""), action) &&
		    !strcmp(str_or(c, "class", ""), hp_aws_class_name(call->cls)) &&
		    !strcmp(str_or(c, "code", ""), call->code))
			return;
	}
	hp_collect_record(s, HP_SVC_SSM, action, call);
}

/*
 * The nodes other signals name, for the probe order: instance ids of
 * Error/Warn cluster events, of health-agent and lifecycle log streams with
 * matching lines, of Kubernetes nodes not Ready, not Schedulable or failing
 * deep health checks, of the nodes of problem pods, and of Slurm nodes
 * down, drained, failed or not responding. A sorted set of
 * copies (idset_has by binary search).
 */
struct idset {
	char **v;
	size_t n, alloc;
};

static void idset_add(struct idset *set, const char *id, size_t len)
{
	if (!id || !len || len > 40 || strncmp(id, "i-", 2))
		return;
	set->v = hp_array_grow(set->v, &set->alloc, set->n, 1, sizeof(*set->v));
	set->v[set->n] = xmalloc(len + 1);
	memcpy(set->v[set->n], id, len);
	set->v[set->n++][len] = 0;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int idset_has(const struct idset *set, const char *id)
{
	return id && set->n && bsearch(&id, set->v, set->n, sizeof(*set->v), cmp_strp) != NULL;
}

static void idset_release(struct idset *set)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		free(set->v[i]);
	free(set->v);
	memset(set, 0, sizeof(*set));
}

/*
 * The instance id that ends a log line's stream name ".../<group>/<instance>",
 * when the line tells of a failure or fault as the log checks judge it
 * (a lifecycle script's "finished with exit code 0" names no node).
 */
static void add_stream(struct idset *set, const cJSON *line, enum hp_log_kind kind)
{
	const char *stream = hp_json_str(line, "logStreamName");
	const char *slash = stream ? strrchr(stream, '/') : NULL;

	if (slash && hp_log_line_counts(kind, hp_json_str(line, "message")))
		idset_add(set, slash + 1, strlen(slash + 1));
}

static int kube_node_signalled(const cJSON *kn)
{
	const char *ready = hp_json_str(kn, "ready.status");
	const cJSON *labels = cJSON_GetObjectItemCaseSensitive(kn, "labels");
	const cJSON *l;

	if (ready && strcmp(ready, "True"))
		return 1;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(kn, "unschedulable")))
		return 1;
	cJSON_ArrayForEach(l, labels) {
		if (!l->string || !cJSON_IsString(l))
			continue;
		if (!strcmp(l->string, "sagemaker.amazonaws.com/node-health-status") &&
		    strcmp(l->valuestring, "Schedulable"))
			return 1;
		if (!strcmp(l->string, "sagemaker.amazonaws.com/deep-health-check-status") &&
		    !strcmp(l->valuestring, "Failed"))
			return 1;
	}
	return 0;
}

static void kube_node_iid(const cJSON *kn, char *out, size_t n)
{
	out[0] = 0;
	if (hp_kube_instance_id(hp_json_str(kn, "name"), hp_json_str(kn, "provider_id"),
				cJSON_GetObjectItemCaseSensitive(kn, "labels"), out, n))
		out[0] = 0;
}

/*
 * Slurm nodes down, drained, failed or not responding, as the controller
 * probe's sinfo names them (it runs before the sweep): their instance ids
 * through the node list's PrivateDnsHostname.
 */
static void slurm_signalled(const struct hp_snapshot *s, struct idset *set)
{
	const cJSON *probe = hp_json_get(hp_snapshot_get(s, "slurm"), "probe"), *n;
	const char *out = hp_json_str(probe, "stdout");
	struct idset bad = { NULL, 0, 0 };
	cJSON *facts;
	char name[256];

	if (!out)
		return;
	facts = hp_slurm_parse(out, strlen(out));
	cJSON_ArrayForEach(n, hp_json_arr(facts, "sinfo.nodes")) {
		const char *nm = hp_json_str(n, "name");
		size_t len = nm ? strlen(nm) : 0;

		if (!len || len >= sizeof(name) || !hp_slurm_node_bad(n))
			continue;
		bad.v = hp_array_grow(bad.v, &bad.alloc, bad.n, 1, sizeof(*bad.v));
		bad.v[bad.n++] = xstrdup(nm);
	}
	cJSON_Delete(facts);
	if (!bad.n)
		return;
	qsort(bad.v, bad.n, sizeof(*bad.v), cmp_strp);
	cJSON_ArrayForEach(n, hp_snapshot_get(s, "nodes")) {
		const char *iid = hp_json_str(n, "InstanceId");

		if (iid && hp_slurm_node_name(n, name, sizeof(name)) && idset_has(&bad, name))
			idset_add(set, iid, strlen(iid));
	}
	idset_release(&bad);
}

static void signalled_nodes(const struct hp_snapshot *s, struct idset *set)
{
	const cJSON *kube = hp_snapshot_get(s, "kube"), *x, *kn;
	char iid[64];
	size_t i, j;

	cJSON_ArrayForEach(x, hp_snapshot_get(s, "events")) {
		const char *lvl = hp_json_str(x, "EventLevel"), *id = hp_json_str(x, "InstanceId");

		if (lvl && id && (!strcmp(lvl, "Error") || !strcmp(lvl, "Warn")))
			idset_add(set, id, strlen(id));
	}
	cJSON_ArrayForEach(x, hp_json_arr(hp_snapshot_get(s, "logs"), "hma"))
		add_stream(set, x, HP_LOG_HEALTH_AGENT);
	cJSON_ArrayForEach(x, hp_json_arr(hp_snapshot_get(s, "logs"), "lifecycle"))
		add_stream(set, x, HP_LOG_LIFECYCLE);
	cJSON_ArrayForEach(kn, hp_json_arr(kube, "nodes")) {
		if (!kube_node_signalled(kn))
			continue;
		kube_node_iid(kn, iid, sizeof(iid));
		idset_add(set, iid, strlen(iid));
	}
	cJSON_ArrayForEach(x, hp_json_arr(kube, "pods")) {
		const char *on = hp_json_str(x, "node"), *phase = hp_json_str(x, "phase");

		/* The pods kept are those in a problem state, and every CoreDNS pod. */
		if (!on || (phase && !strcmp(phase, "Running") && hp_json_bool(x, "ready", 0)))
			continue;
		cJSON_ArrayForEach(kn, hp_json_arr(kube, "nodes")) {
			const char *name = hp_json_str(kn, "name");
			if (name && !strcmp(name, on)) {
				kube_node_iid(kn, iid, sizeof(iid));
				idset_add(set, iid, strlen(iid));
				break;
			}
		}
	}
	slurm_signalled(s, set);
	if (set->n > 1)
		qsort(set->v, set->n, sizeof(*set->v), cmp_strp);
	/* Drop repeats. */
	for (i = j = 0; i < set->n; i++) {
		if (j && !strcmp(set->v[j - 1], set->v[i]))
			free(set->v[i]);
		else
			set->v[j++] = set->v[i];
	}
	set->n = j;
}

/*
 * The sweep's order when not every node can be probed: the targets other
 * signals name first (in list order), then the instance groups in turn,
 * each from its first node on. pick_of (target -> pick) is rewritten.
 */
static size_t order_targets(const struct pick *picks, size_t *pick_of, size_t nt,
			    const struct idset *sig)
{
	size_t *out = xcalloc(nt ? nt : 1, sizeof(*out)), m = 0, i, k, ng = 0, named;
	const char **groups = NULL;
	size_t *cursor;
	unsigned char *used = xcalloc(nt ? nt : 1, 1);
	int progress = 1;

	for (i = 0; i < nt; i++)
		if (idset_has(sig, hp_json_str(picks[pick_of[i]].node, "InstanceId"))) {
			out[m++] = pick_of[i];
			used[i] = 1;
		}
	named = m;
	for (i = 0; i < nt; i++) {
		const char *g = str_or(picks[pick_of[i]].node, "InstanceGroupName", "");

		for (k = 0; k < ng && strcmp(groups[k], g); k++)
			;
		if (k == ng) {
			groups = xrealloc(groups, (ng + 1) * sizeof(*groups));
			groups[ng++] = g;
		}
	}
	cursor = xcalloc(ng ? ng : 1, sizeof(*cursor));
	while (m < nt && progress) {
		progress = 0;
		for (k = 0; k < ng; k++) {
			for (i = cursor[k]; i < nt; i++)
				if (!used[i] && !strcmp(str_or(picks[pick_of[i]].node, "InstanceGroupName",
								  ""), groups[k]))
					break;
			cursor[k] = i < nt ? i + 1 : nt;
			if (i < nt) {
				used[i] = 1;
				out[m++] = pick_of[i];
				progress = 1;
			}
		}
	}
	memcpy(pick_of, out, nt * sizeof(*out));
	free(out);
	free(used);
	free(cursor);
	free(groups);
	return named;
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
			 const cJSON *nodes, const cJSON *extra, const struct idset *sig,
			 struct pick **out)
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
		sample(picks, npicks, o->sample, sig);
	*out = picks;
	return npicks;
}

/* The SSM target of one node. */
static void target_for(const cJSON *node, const char *cluster_id, struct hp_ssm_target *t)
{
	t->instance_id = hp_json_str(node, "InstanceId");
	t->group = hp_json_str(node, "InstanceGroupName");
	t->instance_type = hp_json_str(node, "InstanceType");
	snprintf(t->target, sizeof(t->target), "sagemaker-cluster:%s_%.200s-%.40s", cluster_id,
		 t->group, t->instance_id);
}

/* The sweep's configuration; the plugin is looked for (and named in meta) when it may be used. */
static void sweep_config(struct hp_aws *a, const struct hp_probe_opts *o, const char *command,
			 size_t nt, cJSON *meta, struct hp_ssm_config *cfg)
{
	hp_ssm_config_defaults(cfg);
	cfg->command = command;
	cfg->transport = o->transport;
	cfg->concurrency = hp_ssm_fit_concurrency(o->concurrency, hp_sys_fd_limit());
	if (cfg->concurrency < o->concurrency) {
		/* Said in the header (probes_meta) and with --debug. */
		cJSON_AddNumberToObject(meta, "concurrency_used", cfg->concurrency);
		cJSON_AddNumberToObject(meta, "open_file_limit", (double)hp_sys_fd_limit());
		if (a->debug)
			hp_debug("SSM sessions at once lowered from %d to %d: "
				"the open-file limit is %ld (about %d descriptors a session)",
				o->concurrency, cfg->concurrency, hp_sys_fd_limit(),
				HP_SSM_FDS_PER_SESSION);
	}
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

/* What a node left after its session, for the steps taken in the sweep's order. */
struct done {
	const char *failed_action;        /* a call to record under "calls", or NULL */
	struct hp_aws_result *failed_call;
	cJSON *entry;                     /* document mode: the whole entry, until it is placed */
	int state;                        /* enum hp_ssm_state */
};

/* One sweep under way: what the workers' hook shares. */
struct run {
	struct hp_snapshot *s;
	const char *key;
	hp_facts_decoder decode;          /* NULL: document mode */
	const struct hp_probe_set *set;   /* its on_output hook, or NULL */
	const struct hp_probe_opts *o;    /* its on_node hook */
	const char *cluster_id;
	const struct pick *picks;
	size_t *pick_of;                  /* target -> pick */
	size_t *k_of;                     /* pick -> target */
	const struct idset *sig;          /* reorder: the nodes other signals name; else NULL */
	const char *order_reason;         /* why the order was set: "sample", "budget" */
	unsigned char *recorded;          /* per pick: the first of its id, so it gets an entry */
	struct done *done;                /* per target */
	size_t counts[3];
	pthread_mutex_t lock;
};

static void run_target(void *ud, size_t k, struct hp_ssm_target *t)
{
	const struct run *run = ud;

	target_for(run->picks[run->pick_of[k]].node, run->cluster_id, t);
}

/*
 * A node's session is over (in its worker): decode its output, hand the
 * entry and the facts to the store and the raw text to the snapshot file
 * when one is being saved; the raw text is released with the result.
 */
static void run_done(void *ud, size_t k, struct hp_ssm_result *r)
{
	struct run *run = ud;
	size_t p = run->pick_of[k];
	const cJSON *node = run->picks[p].node;
	const char *iid = hp_json_str(node, "InstanceId");
	struct done *d = &run->done[k];
	cJSON *e = NULL, *facts = NULL;

	if (run->recorded[p] && run->set && run->set->on_output)
		run->set->on_output(run->set->on_output_ud, iid, r);
	if (run->recorded[p] && !run->decode) {
		e = entry(node, r->state, r->reason, r);
	} else if (run->recorded[p]) {
		/* The text a saved entry holds: no NUL bytes ("truncated" reads stdout as it came). */
		drop_nuls(&r->output.err);
		e = entry_of(node, r->state, r->reason, r, 0);
		drop_nuls(&r->output.out);
		facts = run->decode(r->output.out.buf, r->output.out.len);
		if (run->o && run->o->on_node && r->state == HP_SSM_PROBED)
			run->o->on_node(run->o->on_node_ud, iid, e, facts);
	}
	pthread_mutex_lock(&run->lock);
	run->counts[r->state]++;
	d->state = r->state;
	if (r->failed_action) {
		d->failed_action = r->failed_action;
		d->failed_call = xmalloc(sizeof(*d->failed_call));
		*d->failed_call = r->failed_call;
		memset(&r->failed_call, 0, sizeof(r->failed_call));
	}
	if (e && !run->decode) {
		d->entry = e;
		e = NULL;
	} else if (e) {
		hp_snapshot_stream_entry(run->s, run->key, iid, e, r->output.out.buf, r->output.out.len,
					 r->output.err.buf, r->output.err.len);
		hp_probes_add(run->s, run->key, iid, e, facts);
	}
	pthread_mutex_unlock(&run->lock);
	cJSON_Delete(e);
}

/* Which picks get an entry: each id's first one (a listing that repeats an id keeps its first). */
static void mark_recorded(const struct pick *picks, size_t npicks, unsigned char *recorded)
{
	struct hp_strtab seen = HP_STRTAB_INIT;
	size_t i;

	for (i = 0; i < npicks; i++) {
		const char *iid = hp_json_str(picks[i].node, "InstanceId");

		if (picks[i].reason && !strcmp(picks[i].reason, "not in the sample"))
			continue;
		recorded[i] = hp_strtab_adds(&seen, iid) == seen.n - 1;
	}
	hp_strtab_release(&seen);
}

/*
 * How the probed set was chosen, for the report: per instance group, the
 * nodes whose session was tried, and every Running node left unprobed (not
 * in the sample, or not reached within the run budget).
 */
static void order_meta(const struct pick *picks, size_t npicks, const struct run *run,
		       cJSON *meta)
{
	cJSON *by = cJSON_CreateObject(), *unprobed = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < npicks; i++) {
		const char *g = str_or(picks[i].node, "InstanceGroupName", "");
		const char *iid = hp_json_str(picks[i].node, "InstanceId");
		cJSON *c = cJSON_GetObjectItemCaseSensitive(by, g);
		int tried;

		if (picks[i].reason && strcmp(picks[i].reason, "not in the sample"))
			continue;   /* not Running, or no group: named with its reason */
		if (!c)
			c = cJSON_AddNumberToObject(by, g, 0);
		tried = !picks[i].reason && run->done[run->k_of[i]].state != HP_SSM_SKIPPED;
		if (tried)
			cJSON_SetNumberValue(c, c->valuedouble + 1);
		else if (iid)
			cJSON_AddItemToArray(unprobed, cJSON_CreateString(iid));
	}
	cJSON_AddItemToObject(meta, "probed_by_group", by);
	cJSON_AddItemToObject(meta, "unprobed", unprobed);
}

/*
 * Probe the targets of picks; each pick's outcome becomes an entry of key
 * (in the store, or in the document object probes when run.decode is
 * NULL), in the order of the picks, and its failed calls go to "calls" in
 * that order. Returns the number of targets.
 */
static size_t sweep(struct hp_aws *a, const struct hp_probe_opts *o, struct hp_snapshot *s,
		    struct run *run, const char *command, const struct pick *picks, size_t npicks,
		    cJSON *probes, cJSON *meta)
{
	struct hp_ssm_config cfg;
	const char **order = xcalloc(npicks ? npicks : 1, sizeof(*order));
	size_t i, k, nt = 0, norder = 0;

	run->pick_of = xcalloc(npicks ? npicks : 1, sizeof(*run->pick_of));
	run->recorded = xcalloc(npicks ? npicks : 1, 1);
	run->k_of = xcalloc(npicks ? npicks : 1, sizeof(*run->k_of));
	for (i = 0; i < npicks; i++)
		if (!picks[i].reason)
			run->pick_of[nt++] = i;
	if (run->sig) {
		size_t named = order_targets(picks, run->pick_of, nt, run->sig);

		cJSON_AddStringToObject(meta, "order", "nodes named by other signals first, then "
					"each instance group in turn");
		cJSON_AddStringToObject(meta, "order_reason", run->order_reason);
		cJSON_AddNumberToObject(meta, "signalled", (double)named);
	}
	for (k = 0; k < nt; k++)
		run->k_of[run->pick_of[k]] = k;
	run->done = xcalloc(nt ? nt : 1, sizeof(*run->done));
	for (k = 0; k < nt; k++)
		run->done[k].state = HP_SSM_SKIPPED;
	run->picks = picks;
	mark_recorded(picks, npicks, run->recorded);
	sweep_config(a, o, command, nt, meta, &cfg);
	cfg.on_done = run_done;
	cfg.max_stdout = run->set ? run->set->max_stdout : 0;
	cfg.target_of = run_target;
	cfg.hook_ud = run;
	pthread_mutex_init(&run->lock, NULL);
	hp_ssm_sweep(a, &cfg, NULL, nt, NULL, o->progress, o->progress_ud);
	pthread_mutex_destroy(&run->lock);
	if (run->sig)
		order_meta(picks, npicks, run, meta);
	/* In the order of the picks: skipped nodes' entries, failed calls, the document's entries. */
	for (i = 0; i < npicks; i++) {
		const char *iid = hp_json_str(picks[i].node, "InstanceId");
		cJSON *ent = NULL;

		if (picks[i].reason) {
			if (!strcmp(picks[i].reason, "not in the sample"))
				continue;
			run->counts[HP_SSM_SKIPPED]++;
			if (run->recorded[i])
				ent = entry(picks[i].node, HP_SSM_SKIPPED, picks[i].reason, NULL);
		} else {
			struct done *d = &run->done[run->k_of[i]];

			record_failure(s, d->failed_action, d->failed_call);
			if (d->failed_call) {
				hp_aws_result_release(d->failed_call);
				free(d->failed_call);
			}
			ent = d->entry;
		}
		if (!run->recorded[i]) {
			cJSON_Delete(ent);
			continue;
		}
		order[norder++] = iid;
		if (ent && !run->decode) {
			cJSON_AddItemToObject(probes, iid, ent);
		} else if (ent) {
			hp_snapshot_stream_entry(s, run->key, iid, ent, NULL, 0, NULL, 0);
			hp_probes_add(s, run->key, iid, ent, NULL);
			cJSON_Delete(ent);
		}
	}
	if (run->decode && run->set && run->set->carry)
		run->set->carry(run->set->carry_ud, s, run->key);
	if (run->decode) {
		hp_probes_order(s, run->key, order, norder);
		hp_snapshot_stream_end(s, run->key);
	}
	free(order);
	free(run->done);
	free(run->recorded);
	free(run->pick_of);
	free(run->k_of);
	return nt;
}

void hp_collect_probes(struct hp_aws *a, const struct hp_probe_opts *o, struct hp_snapshot *s)
{
	hp_collect_probes_set(a, o, NULL, s);
}

void hp_collect_probes_set(struct hp_aws *a, const struct hp_probe_opts *o,
			   const struct hp_probe_set *set, struct hp_snapshot *s)
{
	const cJSON *nodes = hp_json_arr(s->root, "nodes"), *extra = unlisted_node(o, s, nodes);
	const char *key = set && set->key ? set->key : "probes";
	const char *meta_key = set && set->meta_key ? set->meta_key : "probes_meta";
	cJSON *probes = NULL, *meta = sweep_meta(o, set);
	struct run run;
	size_t nt = 0;
	int64_t t0 = a->sys->monotonic_ms(a->sys);
	char id[64];

	memset(&run, 0, sizeof(run));
	run.s = s;
	run.key = key;
	run.decode = set && set->decode ? set->decode : hp_facts_decoder_of(key);
	run.set = set;
	run.o = o;
	run.cluster_id = id;
	if (run.decode)
		hp_probes_reset(s, key);
	else
		probes = cJSON_CreateObject();
	hp_snap_cluster_id(s, id);
	if (!id[0] || (!nodes && !extra)) {
		/* Without the cluster id or the node list there is no SSM target to build. */
		cJSON_AddStringToObject(meta, "note", !id[0] ? "cluster id unknown (DescribeCluster failed)"
							    : "node list unavailable (ListClusterNodes failed)");
	} else {
		struct hp_buf cmd = HP_BUF_INIT(HP_MAX_LINE);
		struct pick *picks;
		struct idset sig = { NULL, 0, 0 };
		size_t npicks, want = 0, i;

		/* The whole cluster's sweep: signals decide the order when not all can be probed. */
		if ((!set || !set->ids) && !o->node)
			signalled_nodes(s, &sig);
		npicks = pick_nodes(o, set, nodes, extra, &sig, &picks);
		for (i = 0; i < npicks; i++)
			want += !picks[i].reason;
		if ((!set || !set->ids) && !o->node && o->sample > 0) {
			run.sig = &sig;
			run.order_reason = "sample";
		} else if ((!set || !set->ids) && !o->node && o->rate_per_s > 0 &&
			   (double)want / o->rate_per_s * 1000.0 > (double)hp_aws_budget_left_ms(a)) {
			run.sig = &sig;
			run.order_reason = "budget";
		}

		probe_command(set, &cmd);
		nt = sweep(a, o, s, &run, cmd.buf, picks, npicks, probes, meta);
		idset_release(&sig);
		free(picks);
		hp_buf_release(&cmd);
	}
	cJSON_AddNumberToObject(meta, "requested",
				(double)(probes ? (size_t)cJSON_GetArraySize(probes)
						: hp_probes_count(s, key)));
	cJSON_AddNumberToObject(meta, "probed", (double)run.counts[HP_SSM_PROBED]);
	cJSON_AddNumberToObject(meta, "unreachable", (double)run.counts[HP_SSM_UNREACHABLE]);
	cJSON_AddNumberToObject(meta, "skipped", (double)run.counts[HP_SSM_SKIPPED]);
	cJSON_AddNumberToObject(meta, "wall_ms", (double)(a->sys->monotonic_ms(a->sys) - t0));
	/* Interrupted (SIGINT 2, SIGTERM 15): the report says N of M nodes probed. */
	if (o->stop && *o->stop) {
		cJSON_AddNumberToObject(meta, "interrupted", (double)*o->stop);
		cJSON_AddNumberToObject(meta, "to_probe", (double)nt);
	}
	if (probes)
		hp_snapshot_set(s, key, probes);
	hp_snapshot_set(s, meta_key, meta);
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
	record_failure(s, r.failed_action, &r.failed_call);
	hp_ssm_result_release(&r);
	return ent;
}
