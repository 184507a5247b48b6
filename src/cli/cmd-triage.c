/*
 * `hpnode triage`: everything hpnode collects about one cluster (AWS APIs,
 * Kubernetes, the nodes over SSM, the Slurm controller), then every check.
 * What is particular to it: its options and the order of the collectors.
 * The frame (include/hp/cmd.h) does the rest, --snapshot replay included.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-int.h"
#include "hp/cmd.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/kube.h"
#include "hp/ssm.h"

struct triage_args {
	const char *node;
	const char *kubeconfig, *kube_context;
	int no_kube, no_probe;
	struct hp_probe_opts probe;
	/* hpnode fleet: no progress lines; why Kubernetes and the probes are left out. */
	int quiet;
	const char *skip_why;
	/* hpnode watch: chooses the nodes of the sweep once they are listed (NULL: all). */
	void (*plan)(void *ud, const struct hp_snapshot *s, struct hp_probe_set *set);
	void *plan_ud;
};

enum { O_NODE = 256, O_KUBECONFIG, O_KUBE_CONTEXT, O_NO_KUBE, O_NO_PROBE, O_SAMPLE,
       O_CONCURRENCY, O_SSM_RATE, O_PROBE_TIMEOUT, O_SSM_TRANSPORT,
       O_BASELINE = 400, O_FAIL_ON_NEW };

static const struct hp_opt triage_options[] = {
	{ "node", required_argument, O_NODE,
	  "  --node i-...           the report of one node: its findings and the cluster's\n"
	  "                         that bear on it (an unknown id lists the nodes, exit 1)\n" },
	{ "kubeconfig", required_argument, O_KUBECONFIG,
	  "  --kubeconfig FILE      kubeconfig for the EKS checks (default: kubectl's own)\n" },
	{ "context", required_argument, O_KUBE_CONTEXT,
	  "  --context NAME         kubeconfig context for the EKS checks\n" },
	{ "no-kube", no_argument, O_NO_KUBE,
	  "  --no-kube              skip the Kubernetes checks (reported as skipped)\n" },
	{ "no-probe", no_argument, O_NO_PROBE,
	  "  --no-probe             do not open SSM sessions to the nodes\n" },
	{ "sample", required_argument, O_SAMPLE,
	  "  --sample N             probe N Running nodes spread over the groups (default all)\n" },
	{ "concurrency", required_argument, O_CONCURRENCY,
	  "  --concurrency N        SSM sessions at once (default 16, at most 256)\n" },
	{ "ssm-rate", required_argument, O_SSM_RATE,
	  "  --ssm-rate R           StartSession calls per second (default 3)\n" },
	{ "probe-timeout", required_argument, O_PROBE_TIMEOUT,
	  "  --probe-timeout S      seconds per node, session included (default 180)\n" },
	{ "ssm-transport", required_argument, O_SSM_TRANSPORT,
	  "  --ssm-transport T      native (default), plugin (session-manager-plugin),\n"
	  "                         or auto (native, the plugin for KMS-encrypted sessions)\n" },
	{ "baseline", required_argument, O_BASELINE,
	  "  --baseline FILE        compare with an earlier run (a snapshot or a JSON\n"
	  "                         report): mark each finding [NEW] or [known], list the\n"
	  "                         resolved ones\n" },
	{ "fail-on-new", required_argument, O_FAIL_ON_NEW,
	  "  --fail-on-new P0|P1|P2  with --baseline: exit 3 when a new finding is of that\n"
	  "                         priority or worse\n" },
	{ NULL, 0, 0, NULL },
};

/* A number within [lo, hi] with nothing after it (whole when whole is set). */
static int number(const char *s, double lo, double hi, int whole, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo && v <= hi) || (whole && v != (double)(long)v))
		return -1;
	*out = v;
	return 0;
}

static int probe_option(struct triage_args *t, int code, const char *arg)
{
	double v;

	switch (code) {
	case O_NO_PROBE:
		t->no_probe = 1;
		return 0;
	case O_SAMPLE:
		if (number(arg, 1, 1000000, 1, &v))
			return hp_cmd_usage_error("triage", "--sample must be a whole number from 1 to "
						  "1000000 (got '%s')", arg);
		t->probe.sample = (int)v;
		return 0;
	case O_CONCURRENCY:
		if (number(arg, 1, 256, 1, &v))
			return hp_cmd_usage_error("triage", "--concurrency must be a whole number from 1 "
						  "to 256 (got '%s')", arg);
		t->probe.concurrency = (int)v;
		return 0;
	case O_SSM_RATE:
		if (number(arg, 0.1, 1000, 0, &v))
			return hp_cmd_usage_error("triage", "--ssm-rate must be a number from 0.1 to "
						  "1000 (got '%s')", arg);
		t->probe.rate_per_s = v;
		return 0;
	case O_PROBE_TIMEOUT:
		if (number(arg, 1, 3600, 1, &v))
			return hp_cmd_usage_error("triage", "--probe-timeout must be whole seconds from "
						  "1 to 3600 (got '%s')", arg);
		t->probe.timeout_ms = (long)v * 1000;
		return 0;
	case O_SSM_TRANSPORT:
		if (!strcmp(arg, "native"))
			t->probe.transport = HP_SSM_NATIVE;
		else if (!strcmp(arg, "plugin"))
			t->probe.transport = HP_SSM_PLUGIN;
		else if (!strcmp(arg, "auto"))
			t->probe.transport = HP_SSM_AUTO;
		else
			return hp_cmd_usage_error("triage", "--ssm-transport must be native, plugin or "
						  "auto (got '%s')", arg);
		return 0;
	}
	return HP_EXIT_USAGE;
}

static int triage_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct triage_args *t = c->args;

	if (code == O_BASELINE) {
		c->o.baseline = arg;
		return 0;
	}
	if (code == O_FAIL_ON_NEW) {
		if (hp_cmd_parse_prio(arg, &c->o.fail_on_new))
			return hp_cmd_usage_error(c->cmd->name, "--fail-on-new must be P0, P1 or P2");
		return 0;
	}
	if (code >= O_NO_PROBE)
		return probe_option(t, code, arg);
	if (code == O_NODE)
		t->node = arg;
	else if (code == O_KUBECONFIG)
		t->kubeconfig = arg;
	else if (code == O_KUBE_CONTEXT)
		t->kube_context = arg;
	else if (code == O_NO_KUBE)
		t->no_kube = 1;
	else
		return HP_EXIT_USAGE;
	return 0;
}

#define PROGRESS_WIDTH 96
/* A phase gets its line once it has lasted this long; the line is redrawn this often. */
#define PROGRESS_AFTER_MS 1000
#define PROGRESS_TICK_MS 250

/* Nodes waiting for the first-FAIL look; past this many, a node is not looked at early. */
#define LOOK_QUEUE 64

/* A probed node copied for the first-FAIL look. */
struct look {
	char *id;
	cJSON *entry, *facts;
};

/*
 * The progress line on a terminal (standard error only, never when it is
 * not a terminal): one thread redraws, with a carriage return, the phase
 * under way, what of it is done and its elapsed time; the collectors'
 * callbacks only update what it shows. Plain text, no escape sequences.
 *
 * The same thread looks at each node the sweep has probed (on a terminal
 * and with --debug) until one has a FAIL: that FAIL is printed when it is
 * found ("First FAIL ..." above the progress line; a debug line), not only
 * in the report at the end. The sweep's workers only queue copies.
 */
struct ticker {
	pthread_t thread;
	pthread_mutex_t lock;
	struct hp_sys *sys;
	struct hp_aws *a;
	int running, quit, drawn, draw, debug;
	/* The first-FAIL look: queue (under lock), what the checks need, the finding. */
	int look, found;
	struct look queue[LOOK_QUEUE];
	size_t nqueue, unlooked;
	const cJSON *types;
	const char *orch;
	const char *phase;           /* NULL: no phase under way */
	int64_t t0;
	unsigned calls0;             /* AWS attempts sent when the phase began */
	char action[40];             /* the API phase's last list call and its pages */
	int page;
	size_t items;
	size_t nodes, nodes_expected; /* ListClusterNodes: listed so far, CurrentCount */
	int have_nodes;
	int kube_done, kube_total;   /* the kubectl phase's reads */
	char kube_now[32];           /* the read under way ("" once stopped) */
	int have_ssm;
	struct hp_ssm_progress ssm;
};

/*
 * "AWS API reads: 14 requests, 2.3 s, nodes 600/20050 listed
 * (ListClusterEvents: page 2, 200 so far)": the nodes against what the
 * groups' CurrentCount says once the list began, the last list call.
 */
static void api_line(const struct ticker *tk, double el, char *line, size_t size)
{
	char nodes[64] = "", last[80] = "";

	if (tk->have_nodes && tk->nodes_expected)
		snprintf(nodes, sizeof(nodes), ", nodes %zu/%zu listed", tk->nodes,
			 tk->nodes_expected);
	else if (tk->have_nodes)
		snprintf(nodes, sizeof(nodes), ", %zu nodes listed", tk->nodes);
	if (tk->page > 0 && !strcmp(tk->action, "ListClusterNodes"))
		snprintf(last, sizeof(last), " (ListClusterNodes: page %d)", tk->page);
	else if (tk->page > 0)
		snprintf(last, sizeof(last), " (%s: page %d, %zu so far)", tk->action, tk->page,
			 tk->items);
	snprintf(line, size, "%s: %u requests, %.1f s%s%s", tk->phase,
		 __atomic_load_n(&tk->a->stats.calls, __ATOMIC_RELAXED) - tk->calls0, el, nodes, last);
}

static void ticker_draw(struct ticker *tk)
{
	char line[PROGRESS_WIDTH + 1];
	int64_t ms = tk->sys->monotonic_ms(tk->sys) - tk->t0;
	double el = (double)ms / 1000.0;

	if (!tk->draw || !tk->phase || ms < PROGRESS_AFTER_MS)
		return;
	if (tk->have_ssm)
		snprintf(line, sizeof(line), "%s: %zu/%zu done, %zu unreachable, %zu not probed, %.1f s",
			 tk->phase, tk->ssm.done, tk->ssm.total, tk->ssm.unreachable, tk->ssm.skipped, el);
	else if (tk->a && !strcmp(tk->phase, "AWS API reads"))
		api_line(tk, el, line, sizeof(line));
	else if (tk->kube_total)
		snprintf(line, sizeof(line), "%s: %d/%d reads done%s%s%s, %.1f s", tk->phase,
			 tk->kube_done, tk->kube_total, tk->kube_now[0] ? " (now " : "", tk->kube_now,
			 tk->kube_now[0] ? ")" : "", el);
	else
		snprintf(line, sizeof(line), "%s: %.1f s", tk->phase, el);
	fprintf(stderr, "\r%-*s", PROGRESS_WIDTH, line);
	fflush(stderr);
	tk->drawn = 1;
}

/* The line of the phase that ended is wiped (lock held). */
static void ticker_clear(struct ticker *tk)
{
	if (tk->drawn)
		fprintf(stderr, "\r%-*s\r", PROGRESS_WIDTH, "");
	tk->drawn = 0;
}

static void look_release(struct look *l)
{
	free(l->id);
	cJSON_Delete(l->entry);
	cJSON_Delete(l->facts);
	memset(l, 0, sizeof(*l));
}

/*
 * The queued nodes, judged one by one outside the lock, until one has a
 * FAIL; the queue is emptied either way. Only this thread judges while
 * the sweep runs (the checks run after it, once this thread has stopped).
 */
static void look_at_queue(struct ticker *tk)
{
	for (;;) {
		struct look l;
		char msg[HP_MAX_LINE];
		int hit;

		pthread_mutex_lock(&tk->lock);
		if (!tk->nqueue || tk->found) {
			pthread_mutex_unlock(&tk->lock);
			return;
		}
		l = tk->queue[0];
		memmove(tk->queue, tk->queue + 1, --tk->nqueue * sizeof(tk->queue[0]));
		pthread_mutex_unlock(&tk->lock);
		hit = hp_checks_node_first_fail(tk->types, tk->orch, l.id, l.entry, l.facts, msg,
						sizeof(msg));
		look_release(&l);
		if (!hit)
			continue;
		pthread_mutex_lock(&tk->lock);
		tk->found = 1;
		if (tk->draw) {
			char safe[PROGRESS_WIDTH * 2];

			hp_text_str(HP_TEXT_SAFE, msg, safe, sizeof(safe));
			ticker_clear(tk);
			fprintf(stderr, "First FAIL, found during the sweep (the report has them all): "
				"%s\n", safe);
			ticker_draw(tk);
		}
		pthread_mutex_unlock(&tk->lock);
		if (tk->debug)
			hp_debug("first FAIL, found during the sweep: %s", msg);
	}
}

static void *ticker_main(void *ud)
{
	struct ticker *tk = ud;

	for (;;) {
		pthread_mutex_lock(&tk->lock);
		if (tk->quit || (tk->sys->stop && *tk->sys->stop)) {
			pthread_mutex_unlock(&tk->lock);
			return NULL;
		}
		ticker_draw(tk);
		pthread_mutex_unlock(&tk->lock);
		look_at_queue(tk);
		tk->sys->sleep_ms(tk->sys, PROGRESS_TICK_MS);
	}
}

static void ticker_phase(struct ticker *tk, const char *phase)
{
	if (!tk->running)
		return;
	pthread_mutex_lock(&tk->lock);
	ticker_clear(tk);
	tk->phase = phase;
	tk->t0 = tk->sys->monotonic_ms(tk->sys);
	tk->calls0 = tk->a ? __atomic_load_n(&tk->a->stats.calls, __ATOMIC_RELAXED) : 0;
	tk->action[0] = '\0';
	tk->page = 0;
	tk->have_nodes = 0;
	tk->nodes = tk->nodes_expected = 0;
	tk->kube_done = tk->kube_total = 0;
	tk->kube_now[0] = '\0';
	tk->have_ssm = 0;
	pthread_mutex_unlock(&tk->lock);
}

/* The line only on a terminal: nothing else ever sees a progress line; --debug looks too. */
static void ticker_start(struct ticker *tk, struct hp_sys *sys, struct hp_aws *a, int debug)
{
	memset(tk, 0, sizeof(*tk));
	tk->sys = sys;
	tk->a = a;
	tk->draw = isatty(2);
	tk->debug = debug;
	if (!tk->draw && !debug)
		return;
	pthread_mutex_init(&tk->lock, NULL);
	tk->running = !pthread_create(&tk->thread, NULL, ticker_main, tk);
	if (!tk->running)
		pthread_mutex_destroy(&tk->lock);
}

static void ticker_stop(struct ticker *tk)
{
	if (!tk->running)
		return;
	pthread_mutex_lock(&tk->lock);
	tk->quit = 1;
	ticker_clear(tk);
	tk->phase = NULL;
	pthread_mutex_unlock(&tk->lock);
	pthread_join(tk->thread, NULL);
	/* Nodes of the sweep's last tick: looked at here, the thread gone. */
	look_at_queue(tk);
	pthread_mutex_destroy(&tk->lock);
	tk->running = 0;
	if (tk->debug && tk->unlooked && !tk->found)
		hp_debug("first FAIL look: %zu nodes came faster than they could be looked at early "
			 "(the report judges every one)", tk->unlooked);
	while (tk->nqueue)
		look_release(&tk->queue[--tk->nqueue]);
}

/* The sweep's count, after each node (called under the sweep's lock). */
static void progress(void *ud, const struct hp_ssm_progress *p)
{
	struct ticker *tk = ud;

	pthread_mutex_lock(&tk->lock);
	tk->ssm = *p;
	tk->have_ssm = 1;
	pthread_mutex_unlock(&tk->lock);
}

/* A probed node, from the sweep's worker: copied into the queue of the first-FAIL look. */
static void on_node(void *ud, const char *id, const cJSON *entry, const cJSON *facts)
{
	struct ticker *tk = ud;

	pthread_mutex_lock(&tk->lock);
	if (!tk->found && id && entry && facts) {
		if (tk->nqueue < LOOK_QUEUE) {
			struct look *l = &tk->queue[tk->nqueue++];

			l->id = xstrdup(id);
			l->entry = cJSON_Duplicate(entry, 1);
			l->facts = cJSON_Duplicate(facts, 1);
		} else {
			tk->unlooked++;
		}
	}
	pthread_mutex_unlock(&tk->lock);
}

/* The API phase's list calls, page by page. */
static void api_progress(void *ud, const char *action, int page, size_t items, size_t expected)
{
	struct ticker *tk = ud;
	int nodes = !strcmp(action, "ListClusterNodes");

	pthread_mutex_lock(&tk->lock);
	if (nodes && expected)
		tk->nodes_expected = expected;
	if (nodes && page > 0) {
		tk->nodes = items;
		tk->have_nodes = 1;
	}
	if (page > 0) {
		snprintf(tk->action, sizeof(tk->action), "%.30s", action);
		tk->page = page;
		tk->items = items;
	}
	pthread_mutex_unlock(&tk->lock);
}

/* The kubectl phase's reads, from the collector's thread. */
static void kube_progress(void *ud, int done, int total, const char *now)
{
	struct ticker *tk = ud;

	pthread_mutex_lock(&tk->lock);
	tk->kube_done = done;
	tk->kube_total = total;
	snprintf(tk->kube_now, sizeof(tk->kube_now), "%.30s", now ? now : "");
	pthread_mutex_unlock(&tk->lock);
}

static void probe_nodes(struct hp_aws *a, struct triage_args *t, struct hp_snapshot *s,
			struct ticker *tk)
{
	if (t->no_probe) {
		cJSON *meta = cJSON_CreateObject();
		cJSON_AddStringToObject(meta, "note", t->skip_why ? t->skip_why : "--no-probe was given");
		cJSON_AddNumberToObject(meta, "requested", 0);
		hp_snapshot_set(s, "probes_meta", meta);
		return;
	}
	t->probe.node = t->node;
	/* No node waits past the run budget; past it StartSession is not sent at all. */
	if (hp_aws_budget_left_ms(a) < t->probe.timeout_ms)
		t->probe.timeout_ms = hp_aws_budget_left_ms(a) > 1000 ? (long)hp_aws_budget_left_ms(a) : 1000;
	/* Interrupted before: no session starts, every node is listed as not probed. */
	if (tk->running) {
		t->probe.progress = progress;
		t->probe.progress_ud = tk;
		/* Read before the sweep; nothing writes them while it runs. */
		tk->types = hp_snapshot_get(s, "instance_types");
		tk->orch = hp_snap_orchestrator(s);
		t->probe.on_node = on_node;
		t->probe.on_node_ud = tk;
	}
	ticker_phase(tk, "SSM probes");
	if (t->plan) {
		struct hp_probe_set set;

		memset(&set, 0, sizeof(set));
		t->plan(t->plan_ud, s, &set);
		hp_collect_probes_set(a, &t->probe, &set, s);
	} else {
		hp_collect_probes(a, &t->probe, s);
	}
	t->probe.progress = NULL;
	t->probe.on_node = NULL;
}

/*
 * The phases of a triage in order, as meta.interrupted names them; the
 * report says which of them did not finish (src/report/report.c).
 */
enum phase { PH_API, PH_KUBE, PH_SLURM, PH_PROBES, PH__COUNT };
static const char *const phase_ids[PH__COUNT] = { "api", "kube", "slurm", "probes" };

/* Whether phase p is part of this run (a phase that was never going to run cannot be unfinished). */
static int phase_applies(const struct triage_args *t, const struct hp_snapshot *s, enum phase p)
{
	const char *orch = hp_snap_orchestrator(s);

	switch (p) {
	case PH_KUBE:
		return !t->no_kube && !strcmp(orch, "EKS");
	case PH_PROBES:
		return !t->no_probe;
	case PH_SLURM:
		return !t->no_probe && !strcmp(orch, "Slurm");
	default:
		return 1;
	}
}

/*
 * After phase p: when the run was interrupted (during p or before) and it
 * is not yet noted, meta.interrupted = {signal, phase, unfinished: [p and
 * every later phase of this run]}, so the report and a replay of the
 * saved snapshot both say the report is partial. Returns 1 when interrupted.
 */
static int note_stop(const struct triage_args *t, struct hp_snapshot *s, enum phase p)
{
	int sig = *hp_cmd_stop_flag();
	cJSON *meta, *it, *list;
	int q;

	if (!sig)
		return 0;
	/* A phase this run skips (Slurm on EKS) leaves the noting to the next one. */
	if (!phase_applies(t, s, p) && p + 1 < PH__COUNT)
		return 1;
	meta = cJSON_GetObjectItemCaseSensitive(s->root, "meta");
	if (!cJSON_IsObject(meta)) {
		meta = cJSON_CreateObject();
		hp_snapshot_set(s, "meta", meta);
	}
	if (cJSON_GetObjectItemCaseSensitive(meta, "interrupted"))
		return 1;
	it = cJSON_AddObjectToObject(meta, "interrupted");
	cJSON_AddNumberToObject(it, "signal", sig);
	cJSON_AddStringToObject(it, "phase", phase_ids[p]);
	list = cJSON_AddArrayToObject(it, "unfinished");
	for (q = (int)p; q < PH__COUNT; q++)
		if (q == (int)p || phase_applies(t, s, (enum phase)q))
			cJSON_AddItemToArray(list, cJSON_CreateString(phase_ids[q]));
	return 1;
}

static int collect(struct hp_cmd_ctx *c, struct hp_snapshot *s, struct hp_error *e)
{
	struct triage_args *t = c->args;
	struct hp_aws *a = c->aws;
	struct hp_collect_opts co;
	struct hp_kube_opts ko;
	struct ticker tk;
	int rc;

	/*
	 * From here SIGINT/SIGTERM end the run early with the partial report:
	 * the collectors see the flag through sys->stop (requests end, kubectl
	 * is killed, no new SSM session starts) and each phase left unfinished
	 * is noted.
	 */
	hp_cmd_catch_signals();
	c->sys->stop = hp_cmd_stop_flag();
	t->probe.stop = hp_cmd_stop_flag();
	memset(&co, 0, sizeof(co));
	co.cluster = c->cluster;
	co.node = t->node;
	/* A fleet's clusters (quiet) are collected side by side: no progress line. */
	if (t->quiet)
		memset(&tk, 0, sizeof(tk));
	else
		ticker_start(&tk, c->sys, a, c->o.debug);
	ticker_phase(&tk, "AWS API reads");
	if (tk.running)
		hp_collect_set_progress(api_progress, &tk);
	rc = hp_collect_cluster(a, &co, s, e);
	hp_collect_set_progress(NULL, NULL);
	ticker_phase(&tk, NULL);
	/*
	 * What stopped the API phase was the interrupt: the partial report, not
	 * a fatal error. Without the cluster nothing more can be read; else the
	 * later phases still run and, seeing the flag, record what they did not
	 * read (kube.skipped, each node "not probed").
	 */
	if ((note_stop(t, s, PH_API) && rc) ||
	    /* --node names no node of the cluster: nothing more to collect about it (the report says so). */
	    (!rc && t->node && cJSON_IsString(hp_snapshot_get(s, "node_missing")) &&
	     !strcmp(hp_snapshot_get(s, "node_missing")->valuestring, t->node))) {
		ticker_stop(&tk);
		return 0;
	}
	if (rc) {
		ticker_stop(&tk);
		return -1;
	}
	memset(&ko, 0, sizeof(ko));
	ko.kubeconfig = t->kubeconfig;
	ko.context = t->kube_context;
	ko.aws_profile = c->o.profile;
	ko.disabled = t->no_kube;
	if (tk.running) {
		ko.progress = kube_progress;
		ko.progress_ud = &tk;
	}
	ticker_phase(&tk, "Kubernetes reads (kubectl)");
	hp_collect_kube(a, &ko, s);
	ticker_phase(&tk, NULL);
	note_stop(t, s, PH_KUBE);
	if (t->skip_why && t->no_kube) {
		/* The skip says why Kubernetes was left out: not an option the user gave. */
		cJSON *sk = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(s->root, "kube"), "skipped");

		if (cJSON_IsObject(sk))
			cJSON_ReplaceItemInObjectCaseSensitive(sk, "message",
							       cJSON_CreateString(t->skip_why));
	}
	/* The API phase's replies are parsed: their text and buffers go back before the sweep. */
	hp_heap_trim();
	/*
	 * The Slurm controller first: the nodes its sinfo calls down, drained
	 * or failed are among those the sweep probes first when not all can be.
	 */
	ticker_phase(&tk, "Slurm controller probe");
	hp_collect_slurm_controller(a, &t->probe, !t->no_probe, s);
	ticker_phase(&tk, NULL);
	note_stop(t, s, PH_SLURM);
	probe_nodes(a, t, s, &tk);
	ticker_phase(&tk, NULL);
	ticker_stop(&tk);
	note_stop(t, s, PH_PROBES);
	hp_heap_trim();
	return 0;
}

int hp_cmd_triage_collect_api(struct hp_cmd_ctx *c, int probe, const char *why,
			      struct hp_snapshot *s, struct hp_error *e)
{
	struct triage_args t;
	void *mine = c->args;
	int rc;

	memset(&t, 0, sizeof(t));
	hp_probe_opts_defaults(&t.probe);
	t.no_kube = 1;
	t.no_probe = !probe;
	t.quiet = 1;
	t.skip_why = why;
	c->args = &t;
	rc = collect(c, s, e);
	c->args = mine;
	return rc;
}

void hp_cmd_triage_plan(void *triage_args,
			void (*plan)(void *ud, const struct hp_snapshot *s, struct hp_probe_set *set),
			void *ud)
{
	struct triage_args *t = triage_args;

	t->plan = plan;
	t->plan_ud = ud;
}

int hp_cmd_triage_probe_budget(const void *triage_args, long budget_s)
{
	const struct triage_args *t = triage_args;
	long per = t->probe.timeout_ms > 0 ? t->probe.timeout_ms / 1000 : 180;
	long rounds = per > 0 ? budget_s / per : 1;

	if (t->no_probe)
		return 0;
	return t->probe.concurrency * (int)(rounds > 0 ? (rounds < 1000 ? rounds : 1000) : 1);
}

static void triage_init(struct hp_cmd_ctx *c)
{
	struct triage_args *t = c->args;

	hp_probe_opts_defaults(&t->probe);
}

static int triage_check(struct hp_cmd_ctx *c)
{
	const struct triage_args *t = c->args;
	const char *name = c->cmd->name;

	if (t->node && !hp_cmd_match("^i-[0-9a-f]{8,17}$", t->node))
		return hp_cmd_usage_error(name, "--node must be an EC2 instance id like "
					  "i-0123456789abcdef0 (got '%s')", t->node);
	if (t->node && t->probe.sample)
		return hp_cmd_usage_error(name, "%s", "--sample and --node cannot be combined");
	if (c->o.replay && t->node)
		return hp_cmd_usage_error(name, "%s", "--snapshot replays saved data: its scope is the "
					  "one it was collected with (save a --node run to replay one node)");
	if (c->o.replay && (t->probe.sample || t->no_probe))
		return hp_cmd_usage_error(name, "%s", "--snapshot replays saved data: probe options "
					  "do not apply");
	if (c->o.replay && (t->kubeconfig || t->kube_context))
		return hp_cmd_usage_error(name, "%s", "--snapshot replays saved data: it cannot be "
					  "combined with --kubeconfig or --context");
	/* From the credential look-up on, an interrupt is noticed (collect() says what it cut short). */
	if (!c->o.replay) {
		hp_cmd_catch_signals();
		c->sys->stop = hp_cmd_stop_flag();
	}
	if (c->o.fail_on_new != HP_PNONE && !c->o.baseline)
		return hp_cmd_usage_error(name, "%s", "--fail-on-new needs --baseline FILE");
	/* The baseline must be readable before minutes of collecting. */
	if (c->o.baseline) {
		struct hp_file_in *in = c->sys->open_read(c->sys, c->o.baseline,
							  HP_SNAPSHOT_MAX_BYTES);

		if (!in)
			return hp_cmd_usage_error(name, "cannot read the baseline '%s': %s",
						  c->o.baseline, strerror(errno));
		in->close(in);
	}
	return 0;
}

const struct hp_cmd_ops hp_cmd_triage = {
	.usage = "usage: hpnode triage --cluster NAME|ARN [--region R] [options]\n"
		 "\n",
	.exit_text = "\n"
		     "Exit status: 0 triage complete, 1 fatal (AWS error, cluster not found),\n"
		     "2 usage or configuration (also an output path that cannot be written),\n"
		     "3 findings at or above --fail-on, 4 credentials, 130/143 interrupted by\n"
		     "SIGINT/SIGTERM (the partial report is printed, the snapshot saved).\n",
	.options = triage_options,
	.args_size = sizeof(struct triage_args),
	.init = triage_init,
	.option = triage_option,
	.check = triage_check,
	.collect = collect,
};
