/*
 * Collectors: read the cluster through the AWS client and fill the
 * snapshot. They never judge; checks do. A failed call is recorded in the
 * snapshot ("calls") and its fact left absent, so no failure can read as
 * healthy.
 */
#ifndef HP_COLLECT_H
#define HP_COLLECT_H

#include "hp/aws.h"
#include "hp/facts.h"
#include "hp/snapshot.h"
#include "hp/ssm.h"

/* Caps: events 5 x 100 (the original tool's); node pages, all partitions together. */
#define HP_EVENT_PAGES 5
#define HP_NODE_PAGES 5000
/* The STS preflight (sts:GetCallerIdentity): 6 s an attempt, one retry; later calls keep theirs. */
#define HP_STS_PREFLIGHT_TIMEOUT_MS 6000L
#define HP_STS_PREFLIGHT_ATTEMPTS 2
#define HP_LOG_PAGES 5
/* DescribeClusterEvent calls per triage: the newest Error/Warn events first. */
#define HP_EVENT_DETAILS_MAX 50
#define HP_LOG_EVENTS_MAX 2000

/* Network facts to read (bits of hp_network_opts.parts). */
#define HP_NET_SG 1u          /* the cluster's security groups */
#define HP_NET_VPC 2u         /* subnets, VPCs, DNS, routes, endpoints, ENIs, quota */
#define HP_NET_EKS 4u         /* the EKS cluster and its security groups */
#define HP_NET_OFFERINGS 8u   /* instance type offerings by zone */
#define HP_NET_ALL 15u
/* ENIs are counted across the region in pages of 1,000, at most this many. */
#define HP_ENI_PAGES 25

struct hp_network_opts {
	unsigned parts;              /* HP_NET_* bits; 0 = HP_NET_ALL */
	const char *const *sg_ids;   /* security groups to read besides the cluster's */
	size_t n_sg_ids;
	const char *eks_name;        /* EKS cluster name; NULL = from Orchestrator.Eks.ClusterArn */
};

struct hp_collect_opts {
	const char *cluster;   /* name or ARN */
	const char *node;      /* --node instance id or NULL */
	int event_pages;       /* 0 = default */
	int node_pages;
};

/*
 * A function hp_collect_cluster calls after each page of a list call
 * (nodes, events, log streams), e.g. for a progress line; NULL for none.
 * page counts from 1 and items is what the list holds so far; a call with
 * page 0 only says, in expected, how many items the list should reach
 * (ListClusterNodes: the groups' CurrentCount), once, before its first
 * page; expected is 0 on every other call. It may be called from any of
 * the API phase's threads, one call at a time.
 */
typedef void hp_collect_progress_fn(void *ud, const char *action, int page, size_t items,
				    size_t expected);
void hp_collect_set_progress(hp_collect_progress_fn *fn, void *ud);

/*
 * Cluster-level collection: identity, DescribeCluster, then at once (up to
 * a->concurrency reads; see tasks.h) nodes, events, instance types,
 * CloudWatch logs and the network facts, merged in that order so the
 * snapshot never depends on which reply came first. Returns -1 with e
 * set only for what makes a triage impossible: credentials rejected
 * (HP_ERR_CREDS), no reply at all (HP_ERR_HTTP), the cluster not found
 * (HP_ERR_NOT_FOUND, with "clusters" filled when they could be listed) or
 * not readable.
 */
int hp_collect_cluster(struct hp_aws *a, const struct hp_collect_opts *o, struct hp_snapshot *s,
		       struct hp_error *e);

/*
 * sagemaker ListClusters in a->region, every page (at most 10 of 100),
 * into "clusters" (the ClusterSummaries); -1 when a call failed (recorded
 * under "calls", and no "clusters": a partial list never reads as whole).
 */
int hp_collect_list_clusters(struct hp_aws *a, struct hp_snapshot *s);

/*
 * Identity, DescribeCluster, then only the network facts of net (efa-sg,
 * vpc). Fails like hp_collect_cluster.
 */
int hp_collect_cluster_network(struct hp_aws *a, const char *cluster,
			       const struct hp_network_opts *net, struct hp_snapshot *s,
			       struct hp_error *e);

/*
 * The "meta" key: what was asked, where, when (cluster_arg may be NULL).
 * Returns it (owned by the snapshot) for later additions.
 */
cJSON *hp_collect_meta(struct hp_aws *a, struct hp_snapshot *s, const char *cluster_arg,
		     const char *node);

/* sts GetCallerIdentity into "identity"; -1 with e set when credentials fail. */
int hp_collect_identity(struct hp_aws *a, struct hp_snapshot *s, struct hp_error *e);

/*
 * Network facts into "network" (layout in snapshot.h): the security groups
 * and subnets of the cluster's VpcConfig and every OverrideVpcConfig (plus
 * o->sg_ids), their VPCs, routes, endpoints, ENIs against the regional
 * quota, the EKS cluster, and instance type offerings by zone. Reads the
 * "cluster" key when present. Never fatal: failures are recorded.
 */
void hp_collect_network(struct hp_aws *a, const struct hp_network_opts *o, struct hp_snapshot *s);

/*
 * eks DescribeCluster of Orchestrator.Eks.ClusterArn into snapshot key
 * "eks" (the reply's `cluster` object), unless "eks" is already there; when
 * the network collector asked already, its network.eks is copied (and its
 * failure not repeated). Returns 0 when "eks" is present afterwards; a
 * failed call is recorded.
 */
int hp_collect_eks(struct hp_aws *a, struct hp_snapshot *s);
/* The EKS cluster name from Orchestrator.Eks.ClusterArn into out; NULL when none or malformed. */
const char *hp_collect_eks_name(const struct hp_snapshot *s, char *out, size_t n);

struct hp_kube_opts;
/*
 * Kubernetes collection for EKS clusters (nothing for others): "eks" via
 * hp_collect_eks, then kubectl, trusted only when its server is this
 * cluster's EKS endpoint, into snapshot key "kube" (see snapshot.h). Every
 * reason kubectl could not be used is recorded as kube.skipped, never as
 * empty data.
 */
void hp_collect_kube(struct hp_aws *a, const struct hp_kube_opts *o, struct hp_snapshot *s);

/*
 * Slurm clusters only: the controller chosen by hp_slurm_controller() into
 * snapshot key "slurm" {controller (null when none is Running), group, how},
 * with probe (one "probes"-shaped entry of the controller probe, owned from
 * here on) when it ran; NULL when it did not run.
 */
void hp_collect_slurm(struct hp_snapshot *s, cJSON *probe);
struct hp_probe_opts;
/*
 * The Slurm step of a triage (nothing for other clusters): the controller
 * probe run over SSM on the chosen controller with o's transport, rate and
 * deadline (unless probe is 0, the run was interrupted or no controller is
 * Running), then the "slurm" key as hp_collect_slurm() records it.
 */
void hp_collect_slurm_controller(struct hp_aws *a, const struct hp_probe_opts *o, int probe,
				 struct hp_snapshot *s);
/*
 * The same, with the probe's job blocks for Slurm job `job` (hpnode nccl
 * --job; NULL: none): scontrol show job -o and the tail of its output files.
 */
void hp_collect_slurm_controller_job(struct hp_aws *a, const struct hp_probe_opts *o, int probe,
				     const char *job, struct hp_snapshot *s);
/* What the on-node probe sweep does (triage's --node, --sample, --concurrency, ...). */
struct hp_probe_opts {
	const char *node;        /* only this instance id, or NULL */
	int sample;              /* probe this many Running nodes (0 = every one) */
	int concurrency;         /* sessions at once */
	double rate_per_s;       /* StartSession calls per second */
	long timeout_ms;         /* per node */
	enum hp_ssm_transport transport;
	/* Called after each node (under a lock), e.g. for a progress line; may be NULL. */
	void (*progress)(void *ud, const struct hp_ssm_progress *p);
	void *progress_ud;
	/*
	 * Called in the node's worker once its output is decoded, before the
	 * store takes the entry and facts (valid only during the call; copy
	 * what is kept): a look at each node while the sweep goes on. Must
	 * not block; may be NULL. Not called for entries kept as documents.
	 */
	void (*on_node)(void *ud, const char *id, const cJSON *entry, const cJSON *facts);
	void *on_node_ud;
	/* The run's interrupt flag (set by SIGINT/SIGTERM), or NULL. */
	const volatile sig_atomic_t *stop;
};

/* Defaults: every Running node, 16 at once, 3 StartSession/s, 180 s each, native. */
void hp_probe_opts_defaults(struct hp_probe_opts *o);

/*
 * Probe the chosen nodes over SSM and record each one's outcome under
 * "probes" and the sweep under "probes_meta" (after hp_collect_cluster).
 * Failed StartSession/TerminateSession calls go to "calls", one row per
 * distinct failure. It cannot fail the triage: what went wrong is in the
 * snapshot (a node's reason, probes_meta.note when nothing could be tried).
 *
 * Each node's output is decoded when its session ends (the sweep's
 * decoder, hp_facts_decoder_of("probes")): the entry and its facts go to
 * the snapshot's probe store without the raw text, which is written to
 * the snapshot file at once when one is being saved
 * (hp_snapshot_stream_open) and dropped otherwise.
 */
void hp_collect_probes(struct hp_aws *a, const struct hp_probe_opts *o, struct hp_snapshot *s);

/*
 * What hp_collect_probes_set sweeps: listed nodes only (every Running node
 * when ids is NULL), any command, recorded under other keys of the same
 * shapes ("probes", "probes_meta"). NULL members keep hp_collect_probes'.
 * Each node's output is decoded by the set's decoder in the sweep's worker
 * as soon as its session ends, and the entry (without its raw output) and
 * its facts go to the snapshot's probe store under key, the raw text to
 * the snapshot file being saved (include/hp/facts.h). With no decoder
 * (none given, none for key), the entries are kept whole in the
 * document, raw output included, as for a single node.
 */
struct hp_probe_set {
	const char *const *ids;      /* instance ids to probe (listed nodes), or NULL */
	size_t n;
	const char *command;         /* NULL: the on-node probe */
	const char *key, *meta_key;  /* NULL: "probes", "probes_meta" */
	const char *selection;       /* probes_meta.selection; NULL: node|sample|all */
	hp_facts_decoder decode;     /* NULL: hp_facts_decoder_of(key) */
	/*
	 * Optional (`hpnode bundle`): called in the worker with each node's
	 * result as its session ends, before its entry is made; it may take
	 * the output (r->output.out emptied). max_stdout: the sweep's stdout
	 * cap per node (0: HP_SSM_MAX_STDOUT).
	 */
	void (*on_output)(void *ud, const char *iid, struct hp_ssm_result *r);
	void *on_output_ud;
	size_t max_stdout;
	/*
	 * Optional (`hpnode watch`): called on the sweep's thread once every
	 * node of the sweep has its entry, before the sweep's entries are
	 * closed, to add entries of nodes not probed this time (each with
	 * hp_snapshot_stream_entry and hp_probes_add_raw, so they are judged
	 * and saved as the others are).
	 */
	void (*carry)(void *ud, struct hp_snapshot *s, const char *key);
	void *carry_ud;
};

/* hp_collect_probes over set (hpnode nccl: the NCCL probe on the chosen nodes). */
void hp_collect_probes_set(struct hp_aws *a, const struct hp_probe_opts *o,
			   const struct hp_probe_set *set, struct hp_snapshot *s);

/*
 * Run command on one listed node over SSM (the Slurm controller probe) with
 * o's transport, rate and deadline. Returns one "probes"-shaped entry (the
 * caller owns it), or NULL when the node or the cluster id is unknown.
 * Failed SSM calls are recorded in "calls".
 */
cJSON *hp_collect_probe_one(struct hp_aws *a, const struct hp_probe_opts *o,
			    struct hp_snapshot *s, const char *iid, const char *command);

/* What `hpnode node` asks of the local collector. */
struct hp_local_opts {
	const char *orchestrator;   /* "EKS", "Slurm", or NULL (the checks guess from the units) */
	long timeout_ms;            /* the probe is stopped past this */
};

/*
 * The on-node probe run on this machine through sys->run, named by the
 * instance metadata service (IMDSv2, 1 s per request at most) when it
 * answers: "meta" {collected_at_ms, mode "node", orchestrator}, "probes"
 * with one entry (key: the instance id, else "local") and "probes_meta"
 * (transport "local"). -1 with e set (HP_ERR_PROC) when the probe could
 * not be started; it calls no AWS API.
 */
int hp_collect_local(struct hp_sys *sys, const struct hp_local_opts *o, struct hp_snapshot *s,
		     struct hp_error *e);

/* Record a failed call in the snapshot (service in IAM spelling). */
void hp_collect_record(struct hp_snapshot *s, enum hp_svc svc, const char *action,
		       const struct hp_aws_result *r);

/* ---- collection (src/collect/nccl-read.c): Kubernetes and CloudWatch ---- */

/* Which pods a job is. */
enum hp_nccl_label {
	HP_NCCL_LABEL_ANY = 0,    /* the first of the labels below that selects any pod */
	HP_NCCL_LABEL_KUBEFLOW,   /* training.kubeflow.org/job-name=<job> (PyTorchJob, MPIJob) */
	HP_NCCL_LABEL_JOB_NAME,   /* job-name=<job> (batch/v1 Job) */
};

struct hp_nccl_collect_opts {
	const char *namespace_;   /* NULL: every namespace */
	const char *job;          /* NULL: no job; pods in a problem state are kept */
	enum hp_nccl_label label;
	int log_pods;             /* pods whose logs are read; 0: 256 */
	int log_tail;             /* lines per log; 0: 500 */
	long since_s;             /* CloudWatch window; 0: 7200 */
	int cw_pages;             /* FilterLogEvents pages per filter; 0: 5 */
	int cw_events;            /* events kept per filter; 0: 2000 */
	int cloudwatch;           /* 1: also scan the cluster's log group */
	int exec;                 /* 1 (--exec): run the read-only script in running containers */
};

/* Bounds. */
#define HP_NCCL_MAX_PODS 2000
#define HP_NCCL_LOG_MAX_OUT ((size_t)16 << 20)

/*
 * Fill snapshot key "nccl" (layout in hp/snapshot.h). The Kubernetes part
 * runs only when snapshot key "kube" says kubectl was verified for this
 * cluster (hp_collect_kube ran first); otherwise nccl.kube_skipped holds
 * kube.skipped. The CloudWatch part runs when o->cloudwatch is set. Never
 * fails: failed reads are recorded (nccl.errors, "calls").
 */
void hp_nccl_collect(struct hp_aws *a, const struct hp_kube_opts *ko,
		     const struct hp_nccl_collect_opts *o, struct hp_snapshot *s);

/* What decides the nodes hpnode nccl probes. */
struct hp_nccl_node_opts {
	const char *node;         /* --node: that node alone */
	int job;                  /* --job was given: the nodes of the job's pods (nccl.pods) */
	int sample;               /* that many nodes; 0: every Running node but the controller */
};

/*
 * The nodes to probe, in order, as owned copies into *ids (free with
 * hp_nccl_nodes_free); the choice goes into rec: {selection "node"|"job"|
 * "sample", requested (n or "all"), chosen [{id, group, type, why}],
 * pods_unmapped, note}. Samples take Running nodes of accelerated groups
 * first (hp_nccl_type_accelerated, include/hp/nccl-facts.h), one per group per round, then the
 * others; never the Slurm controller's group or a Login group.
 */
size_t hp_nccl_choose_nodes(const struct hp_snapshot *s, const struct hp_nccl_node_opts *o,
			    cJSON *rec, char ***ids);
void hp_nccl_nodes_free(char **ids, size_t n);

/* The Kubernetes part alone (pods, services, policies, DaemonSets, logs) into nccl. */
void hp_nccl_collect_kube(struct hp_aws *a, const struct hp_kube_opts *ko,
			  const struct hp_nccl_collect_opts *o, struct hp_snapshot *s, cJSON *nccl);
/* The CloudWatch part alone into nccl.cloudwatch. */
void hp_nccl_collect_cloudwatch(struct hp_aws *a, const struct hp_nccl_collect_opts *o,
				struct hp_snapshot *s, cJSON *nccl);

/*
 * hpnode nccl --job on Slurm, after hp_collect_slurm_controller_job: the job's
 * output files that the controller probe read are scanned for the NCCL
 * patterns (one source per file and per node the lines name), and their
 * lines are dropped from the probe's output, so only the matches stay in
 * the snapshot: nccl.slurm_job {id, error, skipped, log_scan}. The job's
 * records and files are decoded from the probe (hp_slurm_parse: job, joblogs).
 */
void hp_nccl_collect_slurm_job(struct hp_snapshot *s, const char *job);

#endif
