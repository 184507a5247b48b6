/*
 * Checks and findings.
 *
 * A check is one static row (struct hp_check) in its area file under
 * src/checks/, written with HP_CHECK (src/checks/checks.h, which also says
 * how to add one); the build collects the rows into hp_checks[] in report
 * order. Its judge (run(), or each_node() for on-node checks) reads only
 * the snapshot and emits findings through hp_emit*(); it never prints and
 * never does I/O.
 */
#ifndef HP_CHECK_H
#define HP_CHECK_H

#include <cjson/cJSON.h>

#include "hp/buf.h"
#include "hp/snapshot.h"
#include "hp/util.h"

enum hp_tag { HP_TAG_PASS, HP_TAG_FAIL, HP_TAG_WARN, HP_TAG_INFO, HP_TAG_SKIP };
enum hp_prio { HP_P0 = 0, HP_P1 = 1, HP_P2 = 2, HP_PNONE = 3 };

/*
 * Report groups, printed in this order (titles in src/report/report.c; a
 * command may number and name them its own way, include/hp/report.h). The
 * HP_GROUP_NCCL_* groups hold the checks of `hpnode nccl` only.
 */
enum hp_group {
	HP_GROUP_IDENTITY,    /* 1. Cluster Identity */
	HP_GROUP_EVENTS,      /* 2. Cluster Events (Root Cause Signals) */
	HP_GROUP_NODES,       /* 3. Node Health Status */
	HP_GROUP_EKS,         /* 4. EKS Node Health Labels */
	HP_GROUP_CNI,         /* 4a. EKS CNI & System Pod Health */
	HP_GROUP_SLURM,       /* 4b. Slurm Node States */
	HP_GROUP_PODS,        /* 4c. EKS Workload Pods */
	HP_GROUP_VPC,         /* 5. Cluster VPC Resources */
	HP_GROUP_NCCL_JOB,    /* hpnode nccl: the training job's pods */
	HP_GROUP_NCCL_NET,    /* hpnode nccl: services and NetworkPolicies of the job */
	HP_GROUP_NCCL_LOGS,   /* hpnode nccl: the job's pod logs */
	HP_GROUP_NCCL_ENV,    /* hpnode nccl: the NCCL environment and versions */
	HP_GROUP_LOGS,        /* 6. CloudWatch Logs */
	HP_GROUP_SSM,         /* 7. SSM Connectivity */
	HP_GROUP_ONNODE,      /* 8. On-Node Resource Checks (via SSM) */
	HP_GROUP_NCCL_NODE,   /* hpnode nccl: the NCCL probe's on-node checks */
	HP_GROUP_SLURM_MAP,   /* 8b. Slurm Node Mapping */
	HP_GROUP__COUNT
};

/* The probe output an on-node check (each_node) judges. */
enum hp_probe_source {
	HP_SOURCE_NODE_PROBE = 0,  /* "probes": the node probe (src/collect/probe/probe.sh) */
	HP_SOURCE_NCCL_PROBE,      /* "nccl_probes": the NCCL probe (nccl-probe.sh) */
};

struct hp_emit;
struct node_ctx;   /* one probed node, as an on-node judge sees it (src/checks/node.h) */

/*
 * One check. Every check runs on every snapshot (there is no filter
 * before it) and tells from the snapshot itself whether it has anything to
 * judge. Exactly one of run and each_node is set.
 */
struct hp_check {
	const char *id;        /* stable, dotted: "cluster.status" */
	const char *doc;       /* reference document of its sections (a file of references/);
				  NULL: HP_REFDOC_DETAIL */
	const char *section;   /* default pointer: "F", "A+B", "G.1.a"; "" for none */
	enum hp_prio prio;     /* default priority of FAIL/WARN findings */
	enum hp_group group;   /* report group */
	unsigned order;        /* place within the group (report order); unique per group */
	void (*run)(const struct hp_snapshot *snap, struct hp_emit *em);
	/* On-node checks: called once per probed node, with that node's facts. */
	void (*each_node)(struct node_ctx *c);
	/* Which probe's nodes and facts each_node is called with. */
	enum hp_probe_source source;
};

/* Node ids per "nodes a-b of n:" evidence line of a folded finding. */
#define HP_FINDING_IDS_PER_LINE 100

struct hp_finding {
	const struct hp_check *check;
	enum hp_tag tag;
	enum hp_prio prio;     /* HP_PNONE for PASS/INFO/SKIP */
	char *section;         /* "" = no pointer */
	char *message;         /* raw; the reporter sanitises */
	char *node;            /* instance id or NULL */
	cJSON *evidence;       /* array of strings, or NULL (the id lines below come after it) */
	cJSON *vars;           /* object: placeholder name ("SG_ID") -> string, or NULL */
	/*
	 * The instance ids a multi-node finding covers, in order (JSON "nodes",
	 * one JUnit testcase each): nnodes of them. Each id is kept once for
	 * the whole process, whatever the number of findings naming it (a
	 * fleet's ids, not a copy per finding); the strings are not the
	 * finding's to free.
	 */
	const char **nodes;
	size_t nnodes, nodes_alloc;
	/*
	 * The evidence goes on with lines that list the first id_lines ids of
	 * nodes, HP_FINDING_IDS_PER_LINE to a line ("nodes 1-100 of 250: i-…
	 * i-…"); they are made when read (hp_finding_id_line), never kept.
	 */
	size_t id_lines;
	/*
	 * What its key is made of beside the check id (hp_finding_key): the
	 * subject and the class of problem a check names itself
	 * (hp_finding_subject, hp_finding_class), or NULL for the defaults;
	 * key_seq numbers findings whose keys would otherwise be equal
	 * (hp_findings_number_keys; 0 or 1 for the first).
	 */
	char *subject, *kclass;
	unsigned key_seq;
	/*
	 * A cause that explains other findings (it names them): the summary
	 * lists it before the other issues of its priority.
	 */
	int cause;
};

struct hp_findings {
	struct hp_finding *v;
	size_t n, alloc;
};

void hp_findings_release(struct hp_findings *f);

/* Where run() writes to. */
struct hp_emit {
	const struct hp_check *check;
	struct hp_findings *out;
};

/*
 * Emit a finding with the check's default section; FAIL and WARN get the
 * check's default priority, PASS/INFO/SKIP get none. Returns the finding so
 * callers can attach evidence or a node.
 */
struct hp_finding *hp_emit(struct hp_emit *em, enum hp_tag tag, const char *fmt, ...)
	HP_PRINTF(3, 4);
/* Same with an explicit priority, section ("" = none, NULL = default) and node. */
struct hp_finding *hp_emitx(struct hp_emit *em, enum hp_tag tag, enum hp_prio prio,
			    const char *section, const char *node, const char *fmt, ...)
	HP_PRINTF(6, 7);
/* Append one evidence line to a finding (copied). */
void hp_finding_evidence(struct hp_finding *f, const char *line);
/*
 * Attach a value for a placeholder of the reference document's commands
 * ("GROUP", "SG_ID", "NODE_NAME" ...), used by `triage --suggest`; a later
 * value for the same name replaces the earlier one. Optional.
 */
void hp_finding_var(struct hp_finding *f, const char *name, const char *value);
/*
 * Record one more instance id a finding covers (JSON "nodes", JUnit, text
 * sample). Not for threads: findings are made by one thread.
 */
void hp_finding_node(struct hp_finding *f, const char *id);
/*
 * The process-wide copy of id that findings name (NULL for NULL): kept for
 * the life of the process, never to be freed, so a check may hold ids of
 * many nodes as pointers. Not for threads, like hp_finding_node.
 */
const char *hp_finding_id_ref(const char *id);
/*
 * End the finding's evidence with the id lines of the ids it covers so far
 * (a folded finding, src/checks/fold.h). Evidence added later comes after
 * them, as if they had been added as lines.
 */
void hp_finding_list_ids(struct hp_finding *f);
/* How many id lines the finding's evidence ends with. */
size_t hp_finding_id_lines(const struct hp_finding *f);
/* Id line k (0-based) into out (emptied first): "nodes 101-200 of 250: i-… …". */
void hp_finding_id_line(const struct hp_finding *f, size_t k, struct hp_buf *out);
/* All its evidence lines: the cJSON ones and the id lines. */
size_t hp_finding_lines(const struct hp_finding *f);

/*
 * Stable finding keys. A key names the same problem on the same subject
 * from run to run, so two runs can be compared (hpnode diff, triage
 * --baseline): "<check id>[/<subject>][#<class>][~<n>]".
 *
 *  - subject: what the check set (hp_finding_subject), else the finding's
 *    node, else the first of its placeholder values that names a thing
 *    (namespace/pod, namespace/job, namespace/policy, instance group,
 *    security group, role, instance type, Kubernetes node); a finding
 *    about many nodes without one stands for one key per node (the
 *    "<check>/<node>[#class]" a finding of that node alone would have,
 *    hp_finding_node_key) and its own key has the subject "nodes";
 *  - class: what the check set (hp_finding_class), else, for a FAIL or
 *    WARN, its section when it is not the check's default one;
 *  - ~n: the n-th finding of one run with that key (n >= 2) among the
 *    FAIL and WARN findings, or among the others.
 *
 * Never a count, a time or the message's wording: a reworded message keeps
 * its key. PASS and FAIL of one check on one subject share a key, so a
 * PASS stands where the FAIL was.
 */
void hp_finding_subject(struct hp_finding *f, const char *subject);
void hp_finding_class(struct hp_finding *f, const char *cls);
/* The finding's key into out (emptied first). */
void hp_finding_key(const struct hp_finding *f, struct hp_buf *out);
/* Whether the finding stands for one key per node (hp_finding_node_key). */
int hp_finding_per_node(const struct hp_finding *f);
/* The key of node k (0-based) of a finding about many nodes, into out. */
void hp_finding_node_key(const struct hp_finding *f, size_t k, struct hp_buf *out);
/* Number equal keys of a list in order (key_seq), after its checks ran. */
void hp_findings_number_keys(struct hp_findings *f);
/* Whether a finding is a problem (FAIL or WARN). */
int hp_finding_is_problem(const struct hp_finding *f);

/* The registry: every check, sorted by group and order (report order). */
extern const struct hp_check *const hp_checks[];
extern const size_t hp_checks_count;
const struct hp_check *hp_check_find(const char *id);

/* The reference document a check's sections are in: its doc, else HP_REFDOC_DETAIL. */
const char *hp_check_doc(const struct hp_check *c);
/*
 * Title of one section id of a finding's pointer, from the reference
 * document of its check (hp_refdoc_title); NULL when unknown.
 */
const char *hp_finding_section_title(const struct hp_finding *f, const char *id);

/*
 * A look at one node while the sweep goes on (the first FAIL on a terminal
 * and in --debug, before the report): every on-node check of the node
 * probe judges the node's probe entry and facts, as the report's node pass
 * will (id: its instance id), with the instance types of the snapshot ("instance_types") and the
 * cluster's orchestrator. The most severe FAIL (P0 first, then registry
 * order) goes to out as "<check id>: <message>"; 1 when there is one, 0
 * when none. Not thread-safe: one call at a time, and never while checks
 * run (the node ids are interned process-wide).
 */
int hp_checks_node_first_fail(const cJSON *instance_types, const char *orchestrator,
			      const char *id, const cJSON *entry, const cJSON *facts, char *out,
			      size_t n);

/* Run one check over the snapshot, appending its findings to out. */
void hp_check_run(const struct hp_check *c, const struct hp_snapshot *snap,
		  struct hp_findings *out);
/* Run every check over the snapshot; findings in registry order. */
void hp_checks_run(const struct hp_snapshot *snap, struct hp_findings *out);
/*
 * The same for the checks named in ids (NULL-terminated; an id ending in
 * ".*" names every check with that prefix), still in registry order.
 */
void hp_checks_run_only(const struct hp_snapshot *snap, const char *const *ids,
			struct hp_findings *out);
/*
 * hp_checks_run (ids NULL) or hp_checks_run_only, timed: with secs
 * (hp_checks_count entries, by registry index), the seconds each check's
 * own judging took are added to its entry (the JUnit testsuites' time).
 * The facts the on-node checks share are decoded once for all of them,
 * and that time is no check's.
 */
void hp_checks_run_timed(const struct hp_snapshot *snap, const char *const *ids,
			 struct hp_findings *out, double *secs);
/* The runner's monotonic clock in seconds (0 when there is none); never read by a check. */
double hp_check_clock(void);

#endif
