/*
 * `hpnode fleet [--regions R1,R2|all]`: every HyperPod cluster of the
 * account in those regions, each triaged from the AWS APIs alone (the probe
 * sweep too with --probe), in one table: cluster, region, orchestrator,
 * status, nodes by state, P0/P1/P2 and the top finding. A region whose
 * clusters cannot be listed, or a cluster that cannot be read, is a row
 * saying why, never left out.
 *
 * Each cluster goes through triage's own pipeline: its collectors
 * (hp_cmd_triage_collect_api, src/cli/cmd-triage.c) fill a snapshot, the
 * snapshot is prepared and judged by every check, and triage's JSON report
 * of it gives the findings. Collection runs on up to --parallel threads,
 * each cluster with its own copy of the client (retry quota, breaker) under
 * the one run budget; the judging stays on the main thread (findings share
 * the process-wide id table), cluster by cluster in table order, so a
 * snapshot is let go as soon as it is judged.
 *
 * JSON output, schema "hpnode.fleet/1":
 *
 *   {
 *     "schema": "hpnode.fleet/1", "tool": "hpnode", "version": "<v>",
 *     "account": "<12 digits>" | null,
 *     "regions_error": "<why --regions all could not list them>" | null,
 *     "regions": [{"region": "<r>", "clusters": n, "error": "<why>" | null}],
 *     "clusters": [
 *       {"cluster": "<name>", "arn": "<arn>" | null, "region": "<r>",
 *        "orchestrator": "EKS" | "Slurm" | "Unknown" | null,
 *        "status": "<ClusterStatus>" | null,
 *        "nodes": {"<InstanceStatus.Status>": n, ...} | null,
 *        "summary": {"P0": n, "P1": n, "P2": n} | null,
 *        "top": {"check", "key", "tag", "priority", "message", "node"} | null,
 *        "error": "<why it could not be read>" | null}
 *     ],
 *     "findings": [{"cluster": "<name>", "region": "<r>", <every member of a
 *                   finding of hpnode.triage/2>}],
 *     "summary": {"regions": n, "clusters": n, "unreadable_regions": n,
 *                 "unreadable_clusters": n, "P0": n, "P1": n, "P2": n}
 *   }
 *
 * - regions lists every region asked for, in the order asked (`all`: the
 *   order ec2:DescribeRegions gave, sorted by name); a region whose
 *   clusters could not be listed has its error and no clusters;
 * - clusters come region by region, by name; a cluster that could not be
 *   read has its error, and null for what was not learnt;
 * - findings holds every finding of every cluster read (PASS and INFO too,
 *   as in the triage report), each with its cluster and region first;
 * - strings are sanitised as in the triage report.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-int.h"
#include "hp/text.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/profile.h"
#include "hp/report.h"

#define FLEET_PARALLEL 4
#define FLEET_PARALLEL_MAX 16
#define FLEET_REGIONS_MAX 64
#define WHY_MAX 400
#define TOP_TEXT_MAX 90

struct fleet_args {
	const char *regions_arg;   /* --regions as given; NULL: the configured region */
	int all;                   /* --regions all */
	int probe;                 /* --probe */
	int parallel;              /* --parallel */
	char *regions[FLEET_REGIONS_MAX];
	size_t nregions;
};

enum { O_REGIONS = 256, O_PROBE, O_PARALLEL };

static const struct hp_opt fleet_options[] = {
	{ "regions", required_argument, O_REGIONS,
	  "  --regions R1,R2|all    the regions to read (default: the configured region;\n"
	  "                         all: every region enabled for the account, from\n"
	  "                         ec2:DescribeRegions)\n" },
	{ "probe", no_argument, O_PROBE,
	  "  --probe                also run the on-node probe sweep of each cluster (SSM)\n" },
	{ "parallel", required_argument, O_PARALLEL,
	  "  --parallel N           clusters read at once (default 4, at most 16)\n" },
	{ NULL, 0, 0, NULL },
};

/* One region asked for. */
struct region {
	char name[40];
	char *error;       /* why its clusters could not be listed; NULL when they were */
	size_t clusters;
	struct hp_aws aws; /* the client for it (a copy: the credentials stay the run's) */
};

/* One cluster: collected on a worker, judged on the main thread. */
struct item {
	struct region *region;
	char *name, *arn, *listed_status;
	struct hp_aws aws;
	struct hp_snapshot snap;
	struct hp_error err;
	int failed;
	int state;          /* 0 waiting, 1 being collected, 2 collected */
	/* What the table and the JSON keep once the snapshot is gone. */
	char *why;          /* could not be read: why */
	char *orchestrator, *status;
	cJSON *nodes;       /* {"Running": n, ...} */
	long prio[3];
	cJSON *top;         /* the top finding, or NULL */
	cJSON *findings;    /* the triage report's findings, each with cluster and region */
};

struct fleet {
	struct hp_cmd_ctx *c;
	struct region *regions;
	size_t nregions;
	HP_ARRAY(struct item) items;
	size_t next;                  /* the next item a worker takes */
	pthread_mutex_t lock;
	pthread_cond_t done;
	char *account;
	char *list_error;             /* --regions all: why the regions could not be listed */
};

static void fleet_init(struct hp_cmd_ctx *c)
{
	struct fleet_args *f = c->args;

	f->parallel = FLEET_PARALLEL;
}

static int valid_region(const char *r)
{
	return hp_cmd_match("^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-[0-9]{1,2}$", r);
}

static int fleet_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct fleet_args *f = c->args;
	char *end;
	long n;

	switch (code) {
	case O_REGIONS:
		f->regions_arg = arg;
		return 0;
	case O_PROBE:
		f->probe = 1;
		return 0;
	case O_PARALLEL:
		n = strtol(arg, &end, 10);
		if (end == arg || *end || n < 1 || n > FLEET_PARALLEL_MAX)
			return hp_cmd_usage_error(c->cmd->name, "--parallel must be a whole number from "
						  "1 to %d (got '%s')", FLEET_PARALLEL_MAX, arg);
		f->parallel = (int)n;
		return 0;
	}
	return HP_EXIT_USAGE;
}

static void free_regions(struct fleet_args *f)
{
	size_t i;

	for (i = 0; i < f->nregions; i++)
		free(f->regions[i]);
	f->nregions = 0;
}

/* Adds a region once; -1 past the limit. */
static int add_region(struct fleet_args *f, const char *r)
{
	size_t i;

	for (i = 0; i < f->nregions; i++)
		if (!strcmp(f->regions[i], r))
			return 0;
	if (f->nregions == FLEET_REGIONS_MAX)
		return -1;
	f->regions[f->nregions++] = xstrdup(r);
	return 0;
}

static int fleet_check(struct hp_cmd_ctx *c)
{
	struct fleet_args *f = c->args;
	const char *name = c->cmd->name;
	const char *p;

	if (c->o.junit || c->o.junit_file)
		return hp_cmd_usage_error(name, "%s", "the fleet report is text or JSON (no JUnit)");
	if (c->o.summary || c->o.only || c->o.suggest)
		return hp_cmd_usage_error(name, "%s", "--summary, --only and --suggest are triage's: "
					  "the fleet report is one table (use --output json for "
					  "every finding)");
	if (!f->regions_arg)
		return 0;
	if (!*f->regions_arg)
		return hp_cmd_usage_error(name, "%s", "--regions must name regions (R1,R2) or be all");
	if (!strcmp(f->regions_arg, "all")) {
		f->all = 1;
		return 0;
	}
	for (p = f->regions_arg; *p;) {
		size_t n = strcspn(p, ",");
		char r[64];

		if (!n || n >= sizeof(r)) {
			free_regions(f);
			return hp_cmd_usage_error(name, "--regions must be region names separated by "
						  "commas, or all (got '%s')", f->regions_arg);
		}
		memcpy(r, p, n);
		r[n] = '\0';
		if (!valid_region(r)) {
			free_regions(f);
			return hp_cmd_usage_error(name, "--regions: '%s' is not a region name like "
						  "us-west-2", r);
		}
		if (add_region(f, r)) {
			free_regions(f);
			return hp_cmd_usage_error(name, "--regions names more than %d regions",
						  FLEET_REGIONS_MAX);
		}
		p += n;
		if (*p == ',' && !*++p) {
			free_regions(f);
			return hp_cmd_usage_error(name, "--regions must not end with a comma (got '%s')",
						  f->regions_arg);
		}
	}
	return 0;
}

/* s sanitised and cut to max bytes, as a new string. */
static char *clean(const char *s, size_t max)
{
	struct hp_buf b = HP_BUF_INIT(max + 8);

	hp_text_add(HP_TEXT_REPORT, s ? s : "", &b, max);
	return hp_buf_detach(&b, NULL);
}

/* "sagemaker:ListClusters: AccessDeniedException: <message>" of the last recorded call. */
static char *call_error(const struct hp_snapshot *s, const char *what)
{
	const cJSON *calls = hp_snapshot_get(s, "calls");
	const cJSON *last = cJSON_IsArray(calls) ? cJSON_GetArrayItem(calls,
								     cJSON_GetArraySize(calls) - 1) : NULL;
	struct hp_buf b = HP_BUF_INIT(2 * WHY_MAX);
	const char *code = hp_json_str(last, "code"), *msg = hp_json_str(last, "message");
	char *out;

	hp_buf_printf(&b, "%s: %s:%s", what, hp_json_str(last, "service") ? hp_json_str(last, "service") : "?",
		      hp_json_str(last, "action") ? hp_json_str(last, "action") : "?");
	if (code && *code)
		hp_buf_printf(&b, ": %s", code);
	else if (hp_json_str(last, "class"))
		hp_buf_printf(&b, ": %s", hp_json_str(last, "class"));
	if (msg && *msg)
		hp_buf_printf(&b, ": %s", msg);
	out = clean(b.buf, WHY_MAX);
	hp_buf_release(&b);
	return out;
}

/* A client for region: the run's, with that region's endpoints and its own counts. */
static int region_client(const struct hp_aws *base, const struct hp_profile *prof,
			 const char *endpoint, const char *region, struct hp_aws *out,
			 struct hp_error *e)
{
	int s;

	*out = *base;
	out->owns_cp = 0;
	memset(&out->stats, 0, sizeof(out->stats));
	memset(out->timeouts, 0, sizeof(out->timeouts));
	memset(&out->creds, 0, sizeof(out->creds));
	hp_strlcpy(out->region, region, sizeof(out->region));
	for (s = 0; s < HP_SVC__COUNT; s++)
		if (hp_endpoint_resolve(base->sys, prof, (enum hp_svc)s, region, endpoint,
					out->endpoint[s], sizeof(out->endpoint[s]), e))
			return -1;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * --regions all: ec2:DescribeRegions in the configured region, the regions
 * enabled for the account (opt-in-status opt-in-not-required or opted-in;
 * the filter is sent and also applied here), sorted by name. -1 with the
 * reason in fl->list_error.
 */
static int all_regions(struct fleet *fl, struct hp_aws *a, struct fleet_args *f)
{
	struct hp_aws_params p = { NULL, 0, 0 };
	struct hp_aws_result r;
	const cJSON *list, *it;
	struct hp_snapshot tmp;

	hp_aws_params_add(&p, "Filter.1.Name", "opt-in-status");
	hp_aws_params_add(&p, "Filter.1.Value.1", "opt-in-not-required");
	hp_aws_params_add(&p, "Filter.1.Value.2", "opted-in");
	if (hp_aws_query(a, HP_SVC_EC2, "DescribeRegions", &p, &r)) {
		hp_snapshot_init(&tmp);
		hp_collect_record(&tmp, HP_SVC_EC2, "DescribeRegions", &r);
		fl->list_error = call_error(&tmp, "cannot list the account's regions");
		hp_snapshot_release(&tmp);
		hp_aws_params_release(&p);
		hp_aws_result_release(&r);
		return -1;
	}
	hp_aws_params_release(&p);
	list = hp_json_get(r.json, "regionInfo");
	cJSON_ArrayForEach(it, (cJSON_IsArray(list) ? list : NULL)) {
		const char *name = hp_json_str(it, "regionName");
		const char *opt = hp_json_str(it, "optInStatus");

		if (!name || !valid_region(name))
			continue;
		if (opt && strcmp(opt, "opt-in-not-required") && strcmp(opt, "opted-in"))
			continue;
		if (add_region(f, name))
			break;
	}
	hp_aws_result_release(&r);
	qsort(f->regions, f->nregions, sizeof(f->regions[0]), by_name);
	return 0;
}

/* The clusters of one region, as items (by name); the region's error when they cannot be listed. */
static void list_region(struct fleet *fl, struct region *rg)
{
	struct hp_snapshot s;
	const cJSON *list, *it;
	size_t first = fl->items.n, i, j;

	hp_snapshot_init(&s);
	if (hp_collect_list_clusters(&rg->aws, &s)) {
		rg->error = call_error(&s, "cannot list its clusters");
		hp_snapshot_release(&s);
		return;
	}
	list = hp_snapshot_get(&s, "clusters");
	cJSON_ArrayForEach(it, list) {
		const char *name = hp_json_str(it, "ClusterName");
		const char *arn = hp_json_str(it, "ClusterArn");
		struct item *x;

		if (!name || !hp_cmd_valid_cluster(name))
			continue;
		x = hp_array_push(&fl->items);
		x->region = rg;
		x->name = xstrdup(name);
		x->arn = arn && hp_cmd_valid_cluster(arn) ? xstrdup(arn) : NULL;
		x->listed_status = hp_json_str(it, "ClusterStatus") ?
				   clean(hp_json_str(it, "ClusterStatus"), 32) : NULL;
		rg->clusters++;
	}
	/* By name within the region (insertion sort: a region holds few). */
	for (i = first + 1; i < fl->items.n; i++)
		for (j = i; j > first && strcmp(fl->items.v[j - 1].name, fl->items.v[j].name) > 0; j--) {
			struct item t = fl->items.v[j];

			fl->items.v[j] = fl->items.v[j - 1];
			fl->items.v[j - 1] = t;
		}
	hp_snapshot_release(&s);
}

/* A worker: collects clusters until none is left (or the run is asked to stop). */
static void *worker(void *ud)
{
	struct fleet *fl = ud;

	for (;;) {
		struct hp_cmd_ctx cc;
		struct item *x;

		pthread_mutex_lock(&fl->lock);
		if (fl->next >= fl->items.n) {
			pthread_mutex_unlock(&fl->lock);
			return NULL;
		}
		x = &fl->items.v[fl->next++];
		x->state = 1;
		pthread_mutex_unlock(&fl->lock);
		if (*hp_cmd_stop_flag()) {
			x->failed = 1;
			hp_error_set(&x->err, HP_ERR_INTERNAL, "not read: the run was interrupted");
		} else {
			struct fleet_args *f = fl->c->args;

			cc = *fl->c;
			cc.aws = &x->aws;
			cc.cluster = x->arn ? x->arn : x->name;
			x->failed = hp_cmd_triage_collect_api(&cc, f->probe, "hpnode fleet reads the AWS "
							      "APIs only (--probe for the probe sweep)",
							      &x->snap, &x->err) != 0;
		}
		pthread_mutex_lock(&fl->lock);
		x->state = 2;
		pthread_cond_broadcast(&fl->done);
		pthread_mutex_unlock(&fl->lock);
	}
}

/* {"Running": 3, "Failure": 1} from the node list, in first-seen order. */
static cJSON *nodes_by_state(const struct hp_snapshot *s)
{
	const cJSON *nodes = hp_snapshot_get(s, "nodes"), *n;
	cJSON *out = cJSON_CreateObject();

	cJSON_ArrayForEach(n, (cJSON_IsArray(nodes) ? nodes : NULL)) {
		const char *st = hp_json_str(n, "InstanceStatus.Status");
		char *name = clean(st ? st : "unknown", 40);
		cJSON *v = cJSON_GetObjectItemCaseSensitive(out, name);

		if (v)
			cJSON_SetNumberValue(v, v->valuedouble + 1);
		else
			cJSON_AddNumberToObject(out, name, 1);
		free(name);
	}
	return out;
}

/* The finding the row names: the worst priority, a cause before others, then report order. */
static const struct hp_finding *top_finding(const struct hp_findings *f)
{
	const struct hp_finding *best = NULL;
	size_t i;

	for (i = 0; i < f->n; i++) {
		const struct hp_finding *x = &f->v[i];

		if (!hp_report_issue_prio(x))
			continue;
		if (!best || x->prio < best->prio || (x->prio == best->prio && x->cause && !best->cause))
			best = x;
	}
	return best;
}

/* The triage JSON report's findings, each with "cluster" and "region" first. */
static cJSON *report_findings(const struct hp_findings *f, const struct item *x,
			      const struct hp_snapshot *s)
{
	struct hp_report_opts ro;
	struct hp_buf out = HP_BUF_INIT((size_t)1 << 30);
	cJSON *doc, *list, *fnd, *all = cJSON_CreateArray();

	memset(&ro, 0, sizeof(ro));
	ro.cluster = x->name;
	ro.region = x->region->name;
	ro.orchestrator = hp_snap_orchestrator(s);
	hp_report_json(f, &ro, &out);
	doc = cJSON_ParseWithLength(out.buf, out.len);
	hp_buf_release(&out);
	list = cJSON_GetObjectItemCaseSensitive(doc, "findings");
	while (cJSON_IsArray(list) && (fnd = cJSON_DetachItemFromArray(list, 0)) != NULL) {
		cJSON *o = cJSON_CreateObject(), *m;

		cJSON_AddStringToObject(o, "cluster", x->name);
		cJSON_AddStringToObject(o, "region", x->region->name);
		while ((m = fnd->child) != NULL) {
			char *key = m->string ? xstrdup(m->string) : NULL;

			m = cJSON_DetachItemViaPointer(fnd, m);
			if (key)
				cJSON_AddItemToObject(o, key, m);
			else
				cJSON_Delete(m);
			free(key);
		}
		cJSON_Delete(fnd);
		cJSON_AddItemToArray(all, o);
	}
	cJSON_Delete(doc);
	return all;
}

/* Judge one collected cluster with every check (main thread) and keep what the report needs. */
static void judge(struct item *x)
{
	struct hp_findings f = { 0 };
	const struct hp_finding *top;
	const char *st;
	size_t i;

	if (x->failed) {
		struct hp_buf b = HP_BUF_INIT(2 * WHY_MAX);

		hp_buf_printf(&b, "cannot read it: %s", x->err.msg);
		x->why = clean(b.buf, WHY_MAX);
		hp_buf_release(&b);
		hp_snapshot_release(&x->snap);
		return;
	}
	hp_facts_prepare(&x->snap);
	hp_checks_run(&x->snap, &f);
	x->orchestrator = xstrdup(hp_snap_orchestrator(&x->snap));
	st = hp_json_str(hp_snapshot_get(&x->snap, "cluster"), "ClusterStatus");
	x->status = st ? clean(st, 32) : NULL;
	x->nodes = nodes_by_state(&x->snap);
	for (i = 0; i < f.n; i++)
		if (hp_report_issue_prio(&f.v[i]) && f.v[i].prio <= HP_P2)
			x->prio[f.v[i].prio]++;
	if ((top = top_finding(&f)) != NULL) {
		struct hp_buf key = HP_BUF_INIT(HP_MAX_LINE);
		char *msg = clean(top->message, 1024);

		hp_finding_key(top, &key);
		x->top = cJSON_CreateObject();
		cJSON_AddStringToObject(x->top, "check", top->check ? top->check->id : "");
		cJSON_AddStringToObject(x->top, "key", key.buf);
		cJSON_AddStringToObject(x->top, "tag", hp_report_tag_name(top->tag));
		cJSON_AddStringToObject(x->top, "priority", hp_report_issue_prio(top));
		cJSON_AddStringToObject(x->top, "message", msg);
		if (top->node)
			cJSON_AddStringToObject(x->top, "node", top->node);
		else
			cJSON_AddNullToObject(x->top, "node");
		free(msg);
		hp_buf_release(&key);
	}
	x->findings = report_findings(&f, x, &x->snap);
	hp_findings_release(&f);
	hp_snapshot_release(&x->snap);
}

/* Collect on the workers, judge here in table order. */
static void triage_all(struct fleet *fl, int parallel)
{
	pthread_t th[FLEET_PARALLEL_MAX];
	size_t n = 0, i;

	if (!fl->items.n)
		return;
	if ((size_t)parallel > fl->items.n)
		parallel = (int)fl->items.n;
	for (i = 0; i < (size_t)parallel; i++)
		if (!pthread_create(&th[n], NULL, worker, fl))
			n++;
	if (!n)
		worker(fl);   /* no thread could start: collect here */
	for (i = 0; i < fl->items.n; i++) {
		pthread_mutex_lock(&fl->lock);
		while (fl->items.v[i].state != 2)
			pthread_cond_wait(&fl->done, &fl->lock);
		pthread_mutex_unlock(&fl->lock);
		judge(&fl->items.v[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* ---- the report ---- */

enum col { C_CLUSTER, C_REGION, C_ORCH, C_STATUS, C_NODES, C_P0, C_P1, C_P2, C_TOP, C__COUNT };

static const char *const headings[C__COUNT] = {
	"CLUSTER", "REGION", "ORCHESTRATOR", "STATUS", "NODES", "P0", "P1", "P2", "TOP FINDING"
};

struct row {
	char *cell[C__COUNT];
};

/* Width in terminal columns of UTF-8 text (one per code point). */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			w++;
	return w;
}

static char *nodes_text(const cJSON *nodes)
{
	struct hp_buf b = HP_BUF_INIT(1024);
	const cJSON *v;

	cJSON_ArrayForEach(v, nodes) {
		hp_buf_printf(&b, "%s%d %s", b.len ? ", " : "", (int)v->valuedouble, v->string);
	}
	if (!b.len)
		hp_buf_puts(&b, nodes ? "none" : "-");
	return hp_buf_detach(&b, NULL);
}

static char *num(long n)
{
	char b[24];

	snprintf(b, sizeof(b), "%ld", n);
	return xstrdup(b);
}

static void row_of_item(const struct item *x, struct row *r)
{
	int k;

	r->cell[C_CLUSTER] = xstrdup(x->name);
	r->cell[C_REGION] = xstrdup(x->region->name);
	if (x->why) {
		r->cell[C_ORCH] = xstrdup("-");
		r->cell[C_STATUS] = xstrdup(x->listed_status ? x->listed_status : "-");
		r->cell[C_NODES] = xstrdup("-");
		for (k = C_P0; k <= C_P2; k++)
			r->cell[k] = xstrdup("-");
		r->cell[C_TOP] = xstrdup(x->why);
		return;
	}
	r->cell[C_ORCH] = xstrdup(x->orchestrator ? x->orchestrator : "-");
	r->cell[C_STATUS] = xstrdup(x->status ? x->status : "-");
	r->cell[C_NODES] = nodes_text(x->nodes);
	for (k = C_P0; k <= C_P2; k++)
		r->cell[k] = num(x->prio[k - C_P0]);
	if (x->top) {
		struct hp_buf b = HP_BUF_INIT(4096);
		char clip[HP_CLIP_SIZE(TOP_TEXT_MAX)];

		hp_text_clip(hp_json_str(x->top, "message"), TOP_TEXT_MAX, clip);
		hp_buf_printf(&b, "[%s] %s %s", hp_json_str(x->top, "tag"),
			      hp_json_str(x->top, "priority"), clip);
		r->cell[C_TOP] = hp_buf_detach(&b, NULL);
	} else {
		r->cell[C_TOP] = xstrdup("no issue found");
	}
}

static void row_of_region(const struct region *rg, struct row *r)
{
	int k;

	r->cell[C_CLUSTER] = xstrdup("-");
	r->cell[C_REGION] = xstrdup(rg->name);
	for (k = C_ORCH; k <= C_P2; k++)
		r->cell[k] = xstrdup("-");
	r->cell[C_TOP] = xstrdup(rg->error ? rg->error : "no HyperPod clusters");
}

static void text_report(const struct fleet *fl, struct hp_buf *out)
{
	HP_ARRAY(struct row) rows = HP_ARRAY_INIT;
	size_t w[C__COUNT], i, k, unread_r = 0, unread_c = 0, clusters = 0;
	long total[3] = { 0, 0, 0 };

	if (fl->list_error)
		unread_r++;
	for (i = 0; i < fl->nregions; i++) {
		const struct region *rg = &fl->regions[i];
		size_t j;

		if (rg->error || !rg->clusters) {
			row_of_region(rg, hp_array_push(&rows));
			unread_r += rg->error != NULL;
			continue;
		}
		for (j = 0; j < fl->items.n; j++) {
			const struct item *x = &fl->items.v[j];

			if (x->region != rg)
				continue;
			row_of_item(x, hp_array_push(&rows));
			clusters++;
			if (x->why)
				unread_c++;
			for (k = 0; k < 3; k++)
				total[k] += x->prio[k];
		}
	}
	for (k = 0; k < C__COUNT; k++)
		w[k] = width(headings[k]);
	for (i = 0; i < rows.n; i++)
		for (k = 0; k < C__COUNT; k++)
			if (width(rows.v[i].cell[k]) > w[k])
				w[k] = width(rows.v[i].cell[k]);
	hp_buf_puts(out, "HyperPod Fleet \xe2\x80\x94 READ-ONLY\n");
	if (fl->account)
		hp_buf_printf(out, "Account %s, ", fl->account);
	hp_buf_printf(out, "%zu region%s:", fl->nregions, fl->nregions == 1 ? "" : "s");
	for (i = 0; i < fl->nregions; i++)
		hp_buf_printf(out, " %s", fl->regions[i].name);
	hp_buf_puts(out, "\n");
	if (fl->list_error)
		hp_buf_printf(out, "Regions: %s (the configured region only)\n", fl->list_error);
	hp_buf_puts(out, "\n");
	for (i = 0; i <= rows.n; i++) {
		for (k = 0; k < C__COUNT; k++) {
			const char *s = i ? rows.v[i - 1].cell[k] : headings[k];
			int right = k >= C_P0 && k <= C_P2;
			size_t pad = w[k] - width(s);

			if (right)
				hp_buf_printf(out, "%*s", (int)pad, "");
			hp_buf_puts(out, s);
			if (k + 1 < C__COUNT && !right)
				hp_buf_printf(out, "%*s", (int)pad, "");
			if (k + 1 < C__COUNT)
				hp_buf_puts(out, "  ");
		}
		hp_buf_puts(out, "\n");
	}
	hp_buf_printf(out, "\nFleet: %zu cluster%s in %zu region%s; P0 %ld, P1 %ld, P2 %ld",
		      clusters, clusters == 1 ? "" : "s", fl->nregions, fl->nregions == 1 ? "" : "s",
		      total[0], total[1], total[2]);
	if (unread_r || unread_c)
		hp_buf_printf(out, "; not read: %zu region%s, %zu cluster%s", unread_r,
			      unread_r == 1 ? "" : "s", unread_c, unread_c == 1 ? "" : "s");
	hp_buf_puts(out, "\n");
	if (unread_r || unread_c)
		hp_buf_puts(out, "Not read: each such row says why (nothing else is known about it); "
			    "fix the access and rerun.\n");
	hp_buf_puts(out, "Each cluster in full: hpnode triage --cluster NAME --region REGION\n");
	for (i = 0; i < rows.n; i++)
		for (k = 0; k < C__COUNT; k++)
			free(rows.v[i].cell[k]);
	hp_array_release(&rows);
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static void json_report(struct fleet *fl, struct hp_buf *out)
{
	cJSON *doc = cJSON_CreateObject(), *regions = cJSON_CreateArray();
	cJSON *clusters = cJSON_CreateArray(), *findings = cJSON_CreateArray(), *sum;
	size_t i, unread_r = fl->list_error ? 1 : 0, unread_c = 0;
	long total[3] = { 0, 0, 0 };
	char *text;

	cJSON_AddStringToObject(doc, "schema", "hpnode.fleet/1");
	cJSON_AddStringToObject(doc, "tool", "hpnode");
	cJSON_AddStringToObject(doc, "version", HP_VERSION);
	add_str_or_null(doc, "account", fl->account);
	add_str_or_null(doc, "regions_error", fl->list_error);
	for (i = 0; i < fl->nregions; i++) {
		cJSON *r = cJSON_CreateObject();

		cJSON_AddStringToObject(r, "region", fl->regions[i].name);
		cJSON_AddNumberToObject(r, "clusters", (double)fl->regions[i].clusters);
		add_str_or_null(r, "error", fl->regions[i].error);
		unread_r += fl->regions[i].error != NULL;
		cJSON_AddItemToArray(regions, r);
	}
	for (i = 0; i < fl->items.n; i++) {
		struct item *x = &fl->items.v[i];
		cJSON *o = cJSON_CreateObject(), *f;
		int k;

		cJSON_AddStringToObject(o, "cluster", x->name);
		add_str_or_null(o, "arn", x->arn);
		cJSON_AddStringToObject(o, "region", x->region->name);
		add_str_or_null(o, "orchestrator", x->orchestrator);
		add_str_or_null(o, "status", x->status ? x->status : x->listed_status);
		if (x->nodes) {
			cJSON_AddItemToObject(o, "nodes", x->nodes);
			x->nodes = NULL;
		} else {
			cJSON_AddNullToObject(o, "nodes");
		}
		if (x->why) {
			cJSON_AddNullToObject(o, "summary");
			unread_c++;
		} else {
			cJSON *s = cJSON_AddObjectToObject(o, "summary");

			for (k = 0; k < 3; k++) {
				char p[3] = { 'P', (char)('0' + k), '\0' };

				cJSON_AddNumberToObject(s, p, (double)x->prio[k]);
				total[k] += x->prio[k];
			}
		}
		if (x->top) {
			cJSON_AddItemToObject(o, "top", x->top);
			x->top = NULL;
		} else {
			cJSON_AddNullToObject(o, "top");
		}
		add_str_or_null(o, "error", x->why);
		cJSON_AddItemToArray(clusters, o);
		while (x->findings && (f = cJSON_DetachItemFromArray(x->findings, 0)) != NULL)
			cJSON_AddItemToArray(findings, f);
	}
	cJSON_AddItemToObject(doc, "regions", regions);
	cJSON_AddItemToObject(doc, "clusters", clusters);
	cJSON_AddItemToObject(doc, "findings", findings);
	sum = cJSON_AddObjectToObject(doc, "summary");
	cJSON_AddNumberToObject(sum, "regions", (double)fl->nregions);
	cJSON_AddNumberToObject(sum, "clusters", (double)fl->items.n);
	cJSON_AddNumberToObject(sum, "unreadable_regions", (double)unread_r);
	cJSON_AddNumberToObject(sum, "unreadable_clusters", (double)unread_c);
	cJSON_AddNumberToObject(sum, "P0", (double)total[0]);
	cJSON_AddNumberToObject(sum, "P1", (double)total[1]);
	cJSON_AddNumberToObject(sum, "P2", (double)total[2]);
	text = cJSON_PrintUnformatted(doc);
	if (!text)
		hp_die("out of memory");
	hp_buf_puts(out, text);
	hp_buf_putc(out, '\n');
	free(text);
	cJSON_Delete(doc);
}

/* One output file, written atomically; -1 (message printed) when it could not be. */
static int write_file(struct hp_cmd_ctx *c, const char *path, const struct hp_buf *b)
{
	struct hp_file_out *fo;
	int err = 0;

	if (!path)
		return 0;
	fo = c->sys->open_write(c->sys, path, HP_SYS_MODE_DEFAULT);
	if (!fo)
		err = errno ? errno : EIO;
	else if (fo->write(fo, b->buf, b->len)) {
		err = errno ? errno : EIO;
		fo->abort(fo);
	} else if (fo->commit(fo)) {
		err = errno ? errno : EIO;
	}
	if (err) {
		fprintf(stderr, "hpnode %s: cannot write '%s': %s\n", c->cmd->name, path, strerror(err));
		return -1;
	}
	return 0;
}

/* Every output path must be writable before anything is read. */
static int check_outputs(struct hp_cmd_ctx *c)
{
	const char *paths[] = { c->o.output_file, c->o.text_file, c->o.json_file };
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(paths); i++) {
		if (!paths[i])
			continue;
		if (!*paths[i] || c->sys->can_write(c->sys, paths[i])) {
			fprintf(stderr, "hpnode %s: cannot write '%s': %s; nothing was read\n",
				c->cmd->name, paths[i], *paths[i] ? strerror(errno) : "an empty path");
			return HP_EXIT_USAGE;
		}
	}
	return 0;
}

static void fleet_release(struct fleet *fl)
{
	size_t i;

	for (i = 0; i < fl->items.n; i++) {
		struct item *x = &fl->items.v[i];

		free(x->name);
		free(x->arn);
		free(x->listed_status);
		free(x->why);
		free(x->orchestrator);
		free(x->status);
		cJSON_Delete(x->nodes);
		cJSON_Delete(x->top);
		cJSON_Delete(x->findings);
		hp_aws_release(&x->aws);
	}
	hp_array_release(&fl->items);
	for (i = 0; i < fl->nregions; i++) {
		free(fl->regions[i].error);
		hp_aws_release(&fl->regions[i].aws);
	}
	free(fl->regions);
	free(fl->account);
	free(fl->list_error);
	pthread_mutex_destroy(&fl->lock);
	pthread_cond_destroy(&fl->done);
}

/* The worst priority of every cluster's findings (HP_PNONE: none); whether anything went unread. */
static enum hp_prio fleet_worst(const struct fleet *fl, int *unread)
{
	enum hp_prio worst = HP_PNONE;
	size_t i;
	int k;

	*unread = fl->list_error != NULL;
	for (i = 0; i < fl->nregions; i++)
		*unread |= fl->regions[i].error != NULL;
	for (i = 0; i < fl->items.n; i++) {
		*unread |= fl->items.v[i].why != NULL;
		for (k = 0; k < 3; k++)
			if (fl->items.v[i].prio[k] && (enum hp_prio)k < worst)
				worst = (enum hp_prio)k;
	}
	return worst;
}

static int fleet_report(struct hp_cmd_ctx *c, struct fleet *fl)
{
	struct hp_buf text = HP_BUF_INIT((size_t)1 << 30), json = HP_BUF_INIT((size_t)1 << 30);
	int failed = 0, unread;
	enum hp_prio worst = fleet_worst(fl, &unread);
	int rc = unread ? HP_EXIT_FATAL : HP_EXIT_OK;

	text_report(fl, &text);
	json_report(fl, &json);
	failed |= write_file(c, c->o.output_file, c->o.json ? &json : &text);
	failed |= write_file(c, c->o.text_file, &text);
	failed |= write_file(c, c->o.json_file, &json);
	if (!c->o.quiet) {
		const struct hp_buf *shown = c->o.json && !c->o.output_file ? &json : &text;

		fwrite(shown->buf, 1, shown->len, stdout);
	}
	if (c->o.fail_on != HP_PNONE && worst <= c->o.fail_on)
		rc = HP_EXIT_FINDINGS;
	if (failed)
		rc = HP_EXIT_FATAL;
	hp_buf_release(&text);
	hp_buf_release(&json);
	return rc;
}

static int fleet_run(struct hp_cmd_ctx *c)
{
	struct fleet_args *f = c->args;
	struct hp_snapshot idsnap;
	struct hp_profile prof;
	struct hp_aws aws;
	struct hp_error e = HP_ERROR_INIT;
	struct fleet fl;
	size_t i;
	int rc;

	if ((rc = check_outputs(c))) {
		free_regions(f);
		return rc;
	}
	memset(&fl, 0, sizeof(fl));
	fl.c = c;
	pthread_mutex_init(&fl.lock, NULL);
	pthread_cond_init(&fl.done, NULL);
	hp_snapshot_init(&idsnap);
	memset(&prof, 0, sizeof(prof));
	memset(&aws, 0, sizeof(aws));
	rc = hp_cmd_aws_begin(c, &prof, &aws, &idsnap);
	if (!rc && hp_collect_identity(&aws, &idsnap, &e))
		rc = hp_cmd_fatal(&e, &idsnap, aws.region);
	if (rc)
		goto out;
	hp_cmd_catch_signals();
	if (hp_json_str(hp_snapshot_get(&idsnap, "identity"), "Account"))
		fl.account = clean(hp_json_str(hp_snapshot_get(&idsnap, "identity"), "Account"), 32);
	if (f->all && all_regions(&fl, &aws, f))
		add_region(f, aws.region);
	if (!f->nregions)
		add_region(f, aws.region);
	fl.regions = xcalloc(f->nregions, sizeof(*fl.regions));
	fl.nregions = f->nregions;
	for (i = 0; i < f->nregions; i++) {
		struct region *rg = &fl.regions[i];

		hp_strlcpy(rg->name, f->regions[i], sizeof(rg->name));
		if (region_client(&aws, &prof, c->o.endpoint, rg->name, &rg->aws, &e)) {
			rg->error = clean(e.msg, WHY_MAX);
			continue;
		}
		list_region(&fl, rg);
	}
	for (i = 0; i < fl.items.n; i++) {
		struct item *x = &fl.items.v[i];

		x->aws = x->region->aws;
		memset(&x->aws.stats, 0, sizeof(x->aws.stats));
		hp_snapshot_init(&x->snap);
	}
	triage_all(&fl, f->parallel);
	rc = fleet_report(c, &fl);
	if (*hp_cmd_stop_flag())
		rc = 128 + *hp_cmd_stop_flag();
out:
	fleet_release(&fl);
	free_regions(f);
	hp_aws_release(&aws);
	hp_profile_release(&prof);
	hp_snapshot_release(&idsnap);
	return rc;
}

const struct hp_cmd_ops hp_cmd_fleet = {
	.usage = "usage: hpnode fleet [--regions R1,R2|all] [--probe] [--parallel N] [options]\n"
		 "\n"
		 "Every HyperPod cluster of the account in those regions, each triaged from the\n"
		 "AWS APIs alone (triage without Kubernetes or the probe sweep; the sweep too\n"
		 "with --probe), in one table: cluster, region, orchestrator, status, nodes by state,\n"
		 "P0/P1/P2 and the top finding. A region or cluster that cannot be read is a row\n"
		 "saying why. --output json lists every finding with its cluster and region\n"
		 "(schema hpnode.fleet/1).\n"
		 "\n",
	.exit_text = "\n"
		     "Exit status: 0 every region and cluster read, 1 a region or cluster could not\n"
		     "be read (its row says why) or a fatal error, 2 usage, 3 a finding at or above\n"
		     "--fail-on in any cluster, 4 credentials, 130/143 interrupted.\n",
	.options = fleet_options,
	.args_size = sizeof(struct fleet_args),
	.init = fleet_init,
	.option = fleet_option,
	.check = fleet_check,
	.run = fleet_run,
};
