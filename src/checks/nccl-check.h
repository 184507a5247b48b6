/*
 * Private to the checks of `hpnode nccl` (src/checks/nccl-*.c): how they
 * read the snapshot's "nccl" key (include/hp/snapshot.h), the job's pods
 * grouped into jobs, and small text helpers. They emit nothing on a
 * snapshot without that key (a triage), so every command can run them.
 */
#ifndef HP_CHECKS_NCCL_CHECK_H
#define HP_CHECKS_NCCL_CHECK_H

#include <cjson/cJSON.h>

#include "hp/check.h"
#include "hp/nccl-facts.h"
#include "hp/refdoc.h"

/* The "nccl" key when the NCCL collector ran, else NULL. */
const cJSON *hp_nccl_check_data(const struct hp_snapshot *snap);

/*
 * Whether the Kubernetes part can be judged: the collector ran and
 * kubectl was trusted. Otherwise NULL, with *why (when why is not NULL)
 * saying why not; the checks then emit nothing (nccl.job says it once).
 */
const cJSON *hp_nccl_check_kube(const struct hp_snapshot *snap, const char **why);
/*
 * The guard of a check that reads one kubectl list of nccl (what:
 * "pods", "daemonsets", ...): when that read failed (errors.<what>), a
 * WARN "Cannot list <title> (<status>): <message>; <unchecked>" and 1;
 * else 0.
 */
int hp_nccl_check_read_failed(const cJSON *nccl, struct hp_emit *em, const char *what, const char *title,
		       const char *unchecked);

/* One training job: the pods that share a job label in one namespace. */
struct hp_nccl_check_job {
	char ns[256], name[256];
	const char *label;          /* "training.kubeflow.org/job-name" or "job-name" */
	const char *kind;           /* the owner's kind (PyTorchJob, MPIJob, Job), or NULL */
	const cJSON *pods[256];     /* its pods (the first 256), in listing order */
	size_t npods;
	size_t more;                /* pods past the first 256 */
};

struct hp_nccl_check_jobs {
	struct hp_nccl_check_job *v;
	size_t n, alloc;
	size_t loose;               /* training pods without a job label */
};

/* The snapshot's pods grouped by (namespace, job label); without a label, counted as loose. */
void hp_nccl_check_jobs(const cJSON *nccl, struct hp_nccl_check_jobs *out);
void hp_nccl_check_jobs_release(struct hp_nccl_check_jobs *j);

/* "ml/llama-pretrain" */
const char *hp_nccl_check_job_name(const struct hp_nccl_check_job *j, char *out, size_t n);
/* How many distinct nodes the job's pods run on. */
size_t hp_nccl_check_job_nodes(const struct hp_nccl_check_job *j);
/* A pod's replica type (training.kubeflow.org/replica-type), or NULL. */
const char *hp_nccl_check_replica(const cJSON *pod);
/* "ml/pod" into out. */
const char *hp_nccl_check_pod_name(const cJSON *pod, char *out, size_t n);
/* A label of the pod (as the collector kept it), or NULL. */
const char *hp_nccl_check_label(const cJSON *pod, const char *key);
/* Whether a container spec requests GPUs (nvidia.com/gpu) or EFA (vpc.amazonaws.com/efa). */
int hp_nccl_check_wants_gpu(const cJSON *container_spec);
int hp_nccl_check_wants_efa(const cJSON *container_spec);
/* The pod's first main container spec requesting GPUs or EFA, else its first; NULL when none. */
const cJSON *hp_nccl_check_main_container(const cJSON *pod);
/* Sum of nvidia.com/gpu limits (else requests) of the pod's containers. */
int hp_nccl_check_pod_gpus(const cJSON *pod);

/* KiB as "64 MiB", "1.5 GiB"; returns out. */
const char *hp_nccl_check_kib(double kib, char out[32]);

/* Attach the pod's names to a finding's placeholders (NAMESPACE, POD, CONTAINER, JOB). */
void hp_nccl_check_pod_vars(struct hp_finding *f, const cJSON *pod, const char *container,
		     const char *job);

/* The instance id behind a Kubernetes node name, or NULL. */
const char *hp_nccl_check_node_iid(const struct hp_snapshot *snap, const char *node_name);

/*
 * For a GPU_ECC log line on node iid: what that node's GPU checks found
 * (node.gpu-ecc's uncorrectable counters from the node probe), as
 * "; node.gpu-ecc on i-…: …" into out, so the finding names the node's
 * hardware view beside the log line. iid NULL: the line's node is unknown.
 */
void hp_nccl_check_gpu_ecc_note(const struct hp_snapshot *snap, const char *iid, char *out, size_t n);

/*
 * The note after a log hit of pattern code from source: the wrapper hits
 * of scan whose cause it is ("; it explains CODE ('pattern'), …"), then for
 * GPU_ECC the node's own counters (hp_nccl_check_gpu_ecc_note), into out.
 */
void hp_nccl_check_hit_note(const struct hp_snapshot *snap, const cJSON *scan, const char *code,
		     const char *source, const char *iid, char *out, size_t n);

#endif

/*
 * Many pods, one finding, by the rule of fold.h: results that are alike
 * (one check, tag, priority, section, wording but the pod) are one finding
 * per pod below HP_FOLD_MIN pods, with the pod's placeholders (NAMESPACE,
 * POD, CONTAINER, JOB) and its node; from HP_FOLD_MIN on one finding with
 * the count, the first HP_FOLD_SAMPLE pods' lines and every node.
 */
struct hp_nccl_check_pod_item;
struct hp_nccl_check_pods {
	enum hp_tag tag;
	enum hp_prio prio;
	const char *section;        /* NULL: the check's own */
	struct hp_nccl_check_pod_item *v;
	size_t n, alloc;
};
#define HP_NCCL_CHECK_PODS_INIT(tag, prio, section) { (tag), (prio), (section), NULL, 0, 0 }

struct hp_nccl_check_pod_item *hp_nccl_check_pods_add(struct hp_nccl_check_pods *p, const struct hp_snapshot *snap,
					const cJSON *pod, const char *container, const char *fmt,
					...) HP_PRINTF(5, 6);
void hp_nccl_check_pods_evidence(struct hp_nccl_check_pod_item *it, const char *line);
size_t hp_nccl_check_pods_count(const struct hp_nccl_check_pods *p);
/* Emit by the rule above (fmt words the folded finding) and release; the folded one, or NULL. */
struct hp_finding *hp_nccl_check_pods_emit(struct hp_emit *em, struct hp_nccl_check_pods *p, const char *fmt,
				    ...) HP_PRINTF(3, 4);
