/*
 * `hpnode nccl`: why a multi-node training job hangs, times out in a
 * collective, falls back to TCP or runs slowly. It collects what triage
 * collects about the cluster, then the job's Kubernetes objects and pod
 * logs (or, on Slurm and without a trusted kubectl, the cluster's CloudWatch
 * log group), and runs the node probe and the NCCL probe over SSM on the
 * job's nodes or a sample; its checks are the cluster-level checks of
 * triage it shares plus the nccl.* checks (src/checks/nccl-*.c). What is
 * particular to it: its options, the order of its collectors, its check
 * list and its report layout ("NCCL Diagnostic Summary"). The frame
 * (include/hp/cmd.h) does the rest, --snapshot replay included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hp/cmd.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "hp/kube.h"
#include "hp/probe.h"
#include "hp/report.h"
#include "hp/ssm.h"

#define DEFAULT_SAMPLE 3
#define MAX_SAMPLE 50
#define DEFAULT_SINCE_S 7200L
#define MAX_SINCE_S (7L * 86400)

struct nccl_args {
	const char *ns, *job, *node, *orchestrator;
	const char *kubeconfig, *kube_context;
	int sample;                  /* 0: every node (--sample-nodes all) */
	int sample_given, no_kube, no_probe, exec;
	int log_pods;                /* 0: the collector's default (256) */
	long since_s;
	struct hp_probe_opts probe;
	/* the report layout, filled from the snapshot after the checks */
	struct hp_report_layout layout;
	char nodes_text[1024], confirm[1024], orch_text[32], mode[128];
};

enum { O_NAMESPACE = 256, O_JOB, O_NODE, O_SAMPLE_NODES, O_ORCHESTRATOR, O_SINCE, O_EXEC,
       O_LOG_PODS, O_KUBECONFIG, O_KUBE_CONTEXT, O_NO_KUBE, O_NO_PROBE, O_PROBE_TIMEOUT };

static const struct hp_opt nccl_options[] = {
	{ "namespace", required_argument, O_NAMESPACE,
	  "  --namespace NS         the job's Kubernetes namespace (default: every namespace)\n" },
	{ "job", required_argument, O_JOB,
	  "  --job NAME             the training job: its pods (training.kubeflow.org/job-name,\n"
	  "                         else job-name), and the nodes they run on for the probes;\n"
	  "                         on Slurm the job id (1234, or 1234_5 for an array task):\n"
	  "                         its nodes, state and output files (scontrol show job)\n" },
	{ "node", required_argument, O_NODE,
	  "  --node i-...           probe this node only\n" },
	{ "sample-nodes", required_argument, O_SAMPLE_NODES,
	  "  --sample-nodes N|all   without --job: probe N nodes, accelerated groups first\n"
	  "                         (default 3, at most 50), or every node but the controller\n" },
	{ "orchestrator", required_argument, O_ORCHESTRATOR,
	  "  --orchestrator eks|slurm  the orchestrator you expect; the cluster's own\n"
	  "                         (DescribeCluster) is used and a mismatch is reported\n" },
	{ "since", required_argument, O_SINCE,
	  "  --since DURATION       CloudWatch window: 90m, 2h (default), 1d; at most 7d\n" },
	{ "exec", no_argument, O_EXEC,
	  "  --exec                 also run a fixed list of read-only commands (env, NCCL\n"
	  "                         versions, /dev/shm size) in one running container per\n"
	  "                         replica type; needs pods/exec create\n" },
	{ "log-pods", required_argument, O_LOG_PODS,
	  "  --log-pods N           read the logs of at most N pods, problem pods first\n"
	  "                         (default 256, 1 to 2000)\n" },
	{ "kubeconfig", required_argument, O_KUBECONFIG,
	  "  --kubeconfig FILE      kubeconfig for the Kubernetes checks (default: kubectl's own)\n" },
	{ "context", required_argument, O_KUBE_CONTEXT,
	  "  --context NAME         kubeconfig context for the Kubernetes checks\n" },
	{ "no-kube", no_argument, O_NO_KUBE,
	  "  --no-kube              do not run kubectl (CloudWatch is searched instead)\n" },
	{ "no-probe", no_argument, O_NO_PROBE,
	  "  --no-probe             open no SSM session (no on-node checks)\n" },
	{ "probe-timeout", required_argument, O_PROBE_TIMEOUT,
	  "  --probe-timeout S      seconds per node and probe, session included (default 180)\n" },
	{ NULL, 0, 0, NULL },
};

/* The triage checks this command shares, then its own. */
static const char *const nccl_checks[] = {
	"api.identity", "cluster.identity", "cluster.status", "cluster.node-recovery",
	"api.events", "events.signals",
	"api.nodes", "nodes.target", "nodes.status",
	"api.eks", "kube.access", "kube.node-health", "kube.deep-health", "kube.node-ready",
	"slurm.controller", "slurm.slurmctld", "slurm.munge", "slurm.nodes", "slurm.jobs",
	"api.vpc", "cluster.vpc-config", "network.efa-sg",
	"api.logs",
	"api.ssm", "ssm.targets", "ssm.reachability",
	"node.probe", "node.shm", "node.kernel", "node.gpu-count", "node.gpu-xid", "node.gpu-ecc",
	"node.gpu-remap", "node.gpu-recovery", "node.gpu-dcgm", "node.gpu-nvvs", "node.gpu-nvlink",
	"node.efa", "node.version-drift",
	"nccl.*",
	NULL
};

/* "90m", "2h", "1d", "3600s" or seconds: into *out; -1 when it is none of those. */
static int duration(const char *s, long *out)
{
	char *end;
	long v = strtol(s, &end, 10), mul = 1;

	if (end == s || v < 1 || v > MAX_SINCE_S)
		return -1;
	if (*end && end[1])
		return -1;
	switch (*end) {
	case '\0': case 's': mul = 1; break;
	case 'm': mul = 60; break;
	case 'h': mul = 3600; break;
	case 'd': mul = 86400; break;
	default: return -1;
	}
	if (v > MAX_SINCE_S / mul)
		return -1;
	*out = v * mul;
	return 0;
}

static int nccl_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct nccl_args *t = c->args;
	const char *name = c->cmd->name;
	char *end;
	long v;

	switch (code) {
	case O_NAMESPACE:
		if (strlen(arg) > 63 || !hp_cmd_match("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", arg))
			return hp_cmd_usage_error(name, "--namespace must be a Kubernetes namespace name "
						  "(lower-case letters, digits and '-', at most 63; got "
						  "'%s')", arg);
		t->ns = arg;
		return 0;
	case O_JOB:
		if (strlen(arg) > 63 ||
		    !hp_cmd_match("^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$", arg))
			return hp_cmd_usage_error(name, "--job must be a Kubernetes label value (letters, "
						  "digits, '-', '_' and '.', at most 63; got '%s')", arg);
		t->job = arg;
		return 0;
	case O_NODE:
		if (!hp_cmd_match("^i-[0-9a-f]{8,17}$", arg))
			return hp_cmd_usage_error(name, "--node must be an EC2 instance id like "
						  "i-0123456789abcdef0 (got '%s')", arg);
		t->node = arg;
		return 0;
	case O_SAMPLE_NODES:
		t->sample_given = 1;
		if (!strcmp(arg, "all")) {
			t->sample = 0;
			return 0;
		}
		v = strtol(arg, &end, 10);
		if (end == arg || *end || v < 1 || v > MAX_SAMPLE)
			return hp_cmd_usage_error(name, "--sample-nodes must be a whole number from 1 to "
						  "%d, or 'all' (got '%s')", MAX_SAMPLE, arg);
		t->sample = (int)v;
		return 0;
	case O_ORCHESTRATOR:
		if (!strcmp(arg, "eks"))
			t->orchestrator = "EKS";
		else if (!strcmp(arg, "slurm"))
			t->orchestrator = "Slurm";
		else
			return hp_cmd_usage_error(name, "--orchestrator must be eks or slurm (got '%s')",
						  arg);
		return 0;
	case O_SINCE:
		if (duration(arg, &t->since_s))
			return hp_cmd_usage_error(name, "--since must be a duration such as 90m, 2h or 1d, "
						  "from 1 second to 7 days (got '%s')", arg);
		return 0;
	case O_EXEC:
		t->exec = 1;
		return 0;
	case O_LOG_PODS:
		v = strtol(arg, &end, 10);
		if (end == arg || *end || v < 1 || v > HP_NCCL_MAX_PODS)
			return hp_cmd_usage_error(name, "--log-pods must be a whole number from 1 to %d "
						  "(got '%s')", HP_NCCL_MAX_PODS, arg);
		t->log_pods = (int)v;
		return 0;
	case O_KUBECONFIG:
		t->kubeconfig = arg;
		return 0;
	case O_KUBE_CONTEXT:
		t->kube_context = arg;
		return 0;
	case O_NO_KUBE:
		t->no_kube = 1;
		return 0;
	case O_NO_PROBE:
		t->no_probe = 1;
		return 0;
	case O_PROBE_TIMEOUT:
		v = strtol(arg, &end, 10);
		if (end == arg || *end || v < 1 || v > 3600)
			return hp_cmd_usage_error(name, "--probe-timeout must be whole seconds from 1 to "
						  "3600 (got '%s')", arg);
		t->probe.timeout_ms = v * 1000;
		return 0;
	}
	return HP_EXIT_USAGE;
}

static void nccl_init(struct hp_cmd_ctx *c)
{
	struct nccl_args *t = c->args;

	hp_probe_opts_defaults(&t->probe);
	t->sample = DEFAULT_SAMPLE;
	t->since_s = DEFAULT_SINCE_S;
}

static int nccl_check(struct hp_cmd_ctx *c)
{
	const struct nccl_args *t = c->args;
	const char *name = c->cmd->name;

	if (t->node && t->sample_given)
		return hp_cmd_usage_error(name, "%s", "--node and --sample-nodes cannot be combined");
	if (t->node && t->job)
		return hp_cmd_usage_error(name, "%s", "--node and --job cannot be combined (--job "
					  "probes the nodes of the job's pods)");
	if (t->no_kube && (t->kubeconfig || t->kube_context))
		return hp_cmd_usage_error(name, "%s", "--no-kube cannot be combined with --kubeconfig "
					  "or --context");
	if (t->no_kube && t->exec)
		return hp_cmd_usage_error(name, "%s", "--exec needs kubectl: it cannot be combined "
					  "with --no-kube");
	if (c->o.replay && (t->ns || t->job || t->node || t->sample_given || t->orchestrator ||
			    t->exec || t->log_pods || t->kubeconfig || t->kube_context || t->no_kube ||
			    t->no_probe || t->since_s != DEFAULT_SINCE_S))
		return hp_cmd_usage_error(name, "%s", "--snapshot replays saved data: the collection "
					  "options (--namespace, --job, --node, --sample-nodes, "
					  "--orchestrator, --since, --exec, --log-pods, kubectl and probe "
					  "options) do not apply");
	if (t->no_kube && t->log_pods)
		return hp_cmd_usage_error(name, "%s", "--log-pods needs kubectl: it cannot be combined "
					  "with --no-kube");
	return 0;
}

#define PROGRESS_WIDTH 72

static void progress(void *ud, const struct hp_ssm_progress *p)
{
	const char *what = ud;

	fprintf(stderr, "\r%-*.*s", PROGRESS_WIDTH, PROGRESS_WIDTH, "");
	fprintf(stderr, "\r%s: %zu/%zu done, %zu unreachable, %zu not probed", what, p->done,
		p->total, p->unreachable, p->skipped);
	fflush(stderr);
}

/* One sweep of a probe over the chosen nodes, into key and meta_key. */
static void sweep(struct hp_aws *a, struct nccl_args *t, char **ids, size_t n,
		  const char *selection, const char *command, const char *key, const char *meta_key,
		  const char *what, struct hp_snapshot *s)
{
	struct hp_probe_set set;

	memset(&set, 0, sizeof(set));
	set.ids = (const char *const *)ids;
	set.n = n;
	set.command = command;
	set.key = key;
	set.meta_key = meta_key;
	set.selection = selection;
	if (isatty(2)) {
		t->probe.progress = progress;
		t->probe.progress_ud = (void *)what;
	}
	hp_collect_probes_set(a, &t->probe, &set, s);
	if (isatty(2))
		fprintf(stderr, "\r%-*s\r", PROGRESS_WIDTH, "");
}

static void no_sweep(struct hp_snapshot *s, const char *meta_key, const char *why)
{
	cJSON *meta = cJSON_CreateObject();

	cJSON_AddStringToObject(meta, "note", why);
	cJSON_AddNumberToObject(meta, "requested", 0);
	hp_snapshot_set(s, meta_key, meta);
}

/* The node probe and the NCCL probe on the chosen nodes; the choice into run. */
static void probe_nodes(struct hp_aws *a, struct nccl_args *t, struct hp_snapshot *s, cJSON *run)
{
	struct hp_nccl_node_opts no;
	cJSON *rec = cJSON_AddObjectToObject(run, "probe_nodes");
	struct hp_buf cmd = HP_BUF_INIT(HP_MAX_LINE);
	const char *selection;
	char **ids = NULL;
	size_t n;

	memset(&no, 0, sizeof(no));
	no.node = t->node;
	no.job = t->job != NULL;
	no.sample = t->sample;
	n = hp_nccl_choose_nodes(s, &no, rec, &ids);
	selection = hp_json_str(rec, "selection");
	if (t->no_probe || !n) {
		const char *why = t->no_probe ? "--no-probe was given" : "no node to probe";

		no_sweep(s, "probes_meta", why);
		no_sweep(s, "nccl_probes_meta", why);
		hp_nccl_nodes_free(ids, n);
		return;
	}
	t->probe.node = t->node;
	if (hp_aws_budget_left_ms(a) < t->probe.timeout_ms)
		t->probe.timeout_ms = hp_aws_budget_left_ms(a) > 1000 ? (long)hp_aws_budget_left_ms(a) : 1000;
	hp_cmd_catch_signals();
	t->probe.stop = hp_cmd_stop_flag();
	sweep(a, t, ids, n, selection, NULL, "probes", "probes_meta", "Node probes", s);
	if (!*hp_cmd_stop_flag()) {
		hp_nccl_probe_command(&cmd);
		sweep(a, t, ids, n, selection, cmd.buf, "nccl_probes", "nccl_probes_meta",
		      "NCCL probes", s);
	} else {
		no_sweep(s, "nccl_probes_meta", "interrupted before the NCCL probe");
	}
	hp_buf_release(&cmd);
	hp_nccl_nodes_free(ids, n);
}

/* Whether hp_collect_kube verified kubectl for this cluster. */
static int kube_trusted(const struct hp_snapshot *s)
{
	const cJSON *kube = hp_snapshot_get(s, "kube");

	return kube && !hp_json_get(kube, "skipped") && hp_json_str(kube, "kubectl.verified_by");
}

static int collect(struct hp_cmd_ctx *c, struct hp_snapshot *s, struct hp_error *e)
{
	struct nccl_args *t = c->args;
	struct hp_aws *a = c->aws;
	struct hp_collect_opts co;
	struct hp_kube_opts ko;
	struct hp_nccl_collect_opts no;
	cJSON *run = cJSON_CreateObject();
	int eks;

	memset(&co, 0, sizeof(co));
	co.cluster = c->cluster;
	co.node = t->node;
	if (hp_collect_cluster(a, &co, s, e)) {
		cJSON_Delete(run);
		return -1;
	}
	eks = !strcmp(hp_snap_orchestrator(s), "EKS");
	memset(&ko, 0, sizeof(ko));
	ko.kubeconfig = t->kubeconfig;
	ko.context = t->kube_context;
	ko.aws_profile = c->o.profile;
	ko.disabled = t->no_kube;
	if (eks)
		hp_collect_kube(a, &ko, s);
	memset(&no, 0, sizeof(no));
	no.namespace_ = t->ns;
	no.job = t->job;
	no.since_s = t->since_s;
	no.exec = t->exec;
	no.log_pods = t->log_pods;
	/* Slurm always, EKS when kubectl cannot be trusted: the training logs in CloudWatch. */
	no.cloudwatch = !eks || !kube_trusted(s);
	hp_nccl_collect(a, &ko, &no, s);
	if (t->orchestrator)
		cJSON_AddStringToObject(run, "orchestrator_arg", t->orchestrator);
	cJSON_AddBoolToObject(run, "exec", t->exec);
	/* The controller first on Slurm: --job's nodes and output files come from it. */
	hp_collect_slurm_controller_job(a, &t->probe, !t->no_probe && !*hp_cmd_stop_flag(),
					eks ? NULL : t->job, s);
	if (!eks && t->job)
		hp_nccl_collect_slurm_job(s, t->job);
	probe_nodes(a, t, s, run);
	hp_snapshot_set(s, "nccl_run", run);
	return 0;
}

/* ---- the report ---- */

static const struct hp_report_group_title nccl_groups[] = {
	{ HP_GROUP_IDENTITY, "1", "Cluster" },
	{ HP_GROUP_EVENTS, "2", "Cluster Events" },
	{ HP_GROUP_NODES, "3", "Node Health Status" },
	{ HP_GROUP_EKS, "4", "Kubernetes Nodes (EKS)" },
	{ HP_GROUP_SLURM, "4b", "Slurm Controller and Nodes" },
	{ HP_GROUP_VPC, "5", "EFA Security Groups" },
	{ HP_GROUP_NCCL_JOB, "6", "Training Job Pods" },
	{ HP_GROUP_NCCL_NET, "7", "Job Network: Headless Service and NetworkPolicies" },
	{ HP_GROUP_NCCL_LOGS, "8", "Job Pod Logs (NCCL Error Patterns)" },
	{ HP_GROUP_NCCL_ENV, "9", "NCCL Environment and Versions" },
	{ HP_GROUP_LOGS, "10", "CloudWatch Training Logs" },
	{ HP_GROUP_SSM, "11", "SSM Connectivity" },
	{ HP_GROUP_ONNODE, "12", "Node Hardware (GPU, EFA, Xid via SSM)" },
	{ HP_GROUP_NCCL_NODE, "13", "NCCL On-Node Checks (via SSM)" },
};

static void add_field(struct hp_report_layout *l, const char *key, const char *label,
		      const char *value)
{
	if (l->nfields < HP_REPORT_MAX_FIELDS) {
		l->fields[l->nfields].key = key;
		l->fields[l->nfields].label = label;
		l->fields[l->nfields].value = value;
		l->nfields++;
	}
}

/* "i-… i-… (2 of 3 chosen)" of the NCCL sweep, or why nothing was probed. */
static void nodes_probed(const struct hp_snapshot *s, char *out, size_t n)
{
	const char *note = hp_json_str(hp_snapshot_get(s, "nccl_probes_meta"), "note");
	size_t len = 0, probed = 0, total = 0;
	struct hp_probe_iter it;
	const cJSON *p;

	out[0] = '\0';
	for (p = hp_probes_first(s, "nccl_probes", &it); p; p = hp_probes_next(&it)) {
		const char *st = hp_json_str(p, "state");

		total++;
		if (!st || strcmp(st, "probed") || !p->string)
			continue;
		if (probed++ < 8 && len + strlen(p->string) + 2 < n)
			len += (size_t)snprintf(out + len, n - len, "%s%s", len ? " " : "", p->string);
	}
	if (probed > 8 && len + 32 < n)
		len += (size_t)snprintf(out + len, n - len, " \xe2\x80\xa6");
	if (total && len + 48 < n)
		snprintf(out + len, n - len, "%s(%zu of %zu reached)", len ? " " : "", probed, total);
	else if (!total)
		snprintf(out, n, "none (%s)", note ? note : "no probe ran");
}

static void nccl_layout(struct hp_cmd_ctx *c, const struct hp_snapshot *s,
			struct hp_report_opts *ro)
{
	struct nccl_args *t = c->args;
	struct hp_report_layout *l = &t->layout;
	const cJSON *opts = hp_json_get(hp_snapshot_get(s, "nccl"), "options");
	const char *ns = hp_json_str(opts, "namespace"), *job = hp_json_str(opts, "job");
	const char *orch = hp_snap_orchestrator(s);
	const char *cluster = hp_snap_cluster_name(s);
	const char *region = hp_json_str(hp_snapshot_get(s, "meta"), "region");
	int exec = hp_json_bool(hp_snapshot_get(s, "nccl_run"), "exec", 0);

	memset(l, 0, sizeof(*l));
	l->groups = nccl_groups;
	l->ngroups = HP_ARRAY_LEN(nccl_groups);
	l->docs = "references/nccl-diagnostics-detail.md (NC ids) or "
		  "references/node-diagnostics-detail.md";
	l->summary_num = "14";
	l->summary_title = "NCCL Diagnostic Summary";
	l->json_schema = "hpnode.nccl/1";
	l->no_issue = "No actionable NCCL issue detected from the available signals.";
	hp_strlcpy(t->orch_text, !strcmp(orch, "Slurm") ? "SLURM" : !strcmp(orch, "EKS") ? "EKS"
											    : "UNKNOWN",
		   sizeof(t->orch_text));
	nodes_probed(s, t->nodes_text, sizeof(t->nodes_text));
	add_field(l, "cluster", "Cluster", cluster && *cluster ? cluster : NULL);
	add_field(l, "region", "Region", region);
	add_field(l, "orchestrator", "Orchestrator", t->orch_text);
	add_field(l, "namespace", "Namespace", ns);
	add_field(l, "job", "Job", job ? job : "none (every training pod)");
	add_field(l, "nodes_probed", "Nodes probed", t->nodes_text);
	hp_strlcpy(t->mode, exec ? "READ-ONLY (no changes applied; --exec ran read-only commands in "
				   "containers)" : "READ-ONLY (no changes applied)", sizeof(t->mode));
	l->mode = t->mode;
	{
		char wc[256], wr[128], wn[512], wj[512];

		snprintf(t->confirm, sizeof(t->confirm), "hpnode nccl --cluster %s --region %s%s%s%s%s",
			 cluster && *cluster ? hp_shell_word_s(cluster, wc, sizeof(wc)) : "<cluster>",
			 region ? hp_shell_word_s(region, wr, sizeof(wr)) : "<region>",
			 ns ? " --namespace " : "", ns ? hp_shell_word_s(ns, wn, sizeof(wn)) : "",
			 job ? " --job " : "", job ? hp_shell_word_s(job, wj, sizeof(wj)) : "");
	}
	l->confirm = t->confirm;
	ro->layout = l;
}

const struct hp_cmd_ops hp_cmd_nccl = {
	.usage = "usage: hpnode nccl --cluster NAME|ARN [--region R] [--namespace NS] [--job NAME]\n"
		 "                   [--node i-... | --sample-nodes N|all] [options]\n"
		 "\n"
		 "Diagnoses NCCL on a HyperPod cluster: a multi-node training job that hangs,\n"
		 "times out in a collective, falls back from EFA to TCP or runs slowly. Reads\n"
		 "the cluster, the job's pods, services, NetworkPolicies and pod logs (Slurm,\n"
		 "or no kubectl: the cluster's CloudWatch logs), and probes the job's nodes\n"
		 "(or a sample) over SSM. Read-only; --exec runs only read-only commands.\n"
		 "\n",
	.exit_text = "\n"
		     "Exit status: 0 diagnostic complete (issues may be listed), 1 fatal (AWS error,\n"
		     "cluster not found), 2 usage or configuration (also an output path that\n"
		     "cannot be written), 3 issues at or above --fail-on, 4 credentials,\n"
		     "130/143 interrupted (the partial report is printed).\n",
	.options = nccl_options,
	.args_size = sizeof(struct nccl_args),
	.init = nccl_init,
	.option = nccl_option,
	.check = nccl_check,
	.collect = collect,
	.title = "HyperPod NCCL Diagnostic \xe2\x80\x94 READ-ONLY",
	.checks = nccl_checks,
	.layout = nccl_layout,
};
