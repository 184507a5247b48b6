/*
 * hpnode nccl --job on Slurm: the job as slurmctld describes it (report
 * group "Training Job Pods") and its output files' NCCL error patterns
 * (group "Job Pod Logs"). The job's records and files come from the
 * controller probe (hp_facts_slurm: job, joblogs); the patterns from the
 * collector's scan of those files (nccl.slurm_job.log_scan, src/collect/
 * nccl-slurm.c). A wrapper error takes the cause of the line before it in
 * the same file and node, as in pod logs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/facts.h"
#include "hp/json.h"
#include "checks.h"
#include "nccl-check.h"

#define MAX_RECORDS 8

static enum hp_prio prio_of(const char *p)
{
	return p && !strcmp(p, "P0") ? HP_P0 : p && !strcmp(p, "P2") ? HP_P2 : HP_P1;
}

/* The instance whose Slurm name is name, or NULL. */
static const char *iid_of(const struct hp_snapshot *snap, const char *name)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, hp_json_arr(snap->root, "nodes")) {
		char sn[256];

		if (name && hp_slurm_node_name(n, sn, sizeof(sn)) && !strcmp(sn, name))
			return hp_json_str(n, "InstanceId");
	}
	return NULL;
}

static const cJSON *slurm_job(const struct hp_snapshot *snap)
{
	const cJSON *nccl = hp_nccl_check_data(snap);

	if (!nccl || strcmp(hp_snap_orchestrator(snap), "Slurm"))
		return NULL;
	return hp_json_get(nccl, "slurm_job");
}

/* States after which the job did not finish its work. */
static int failed_state(const char *st)
{
	static const char *const bad[] = { "FAILED", "NODE_FAIL", "TIMEOUT", "OUT_OF_MEMORY",
					   "BOOT_FAIL", "DEADLINE", "PREEMPTED" };
	size_t i;

	for (i = 0; st && i < HP_ARRAY_LEN(bad); i++)
		if (!strcmp(st, bad[i]))
			return 1;
	return 0;
}

/* A pending job's reasons that are only its turn coming. */
static int waiting_its_turn(const char *reason)
{
	return !reason || !strcmp(reason, "None") || !strcmp(reason, "Priority") ||
	       !strcmp(reason, "Resources") || !strcmp(reason, "JobArrayTaskLimit") ||
	       !strcmp(reason, "BeginTime");
}

static void run_job(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *sj = slurm_job(snap), *facts, *job, *r, *name;
	const char *id, *err;
	size_t nrec = 0, unmapped = 0, nodes = 0;
	struct hp_buf names = HP_BUF_INIT(HP_MAX_LINE);

	if (!sj)
		return;
	id = hp_check_str(sj, "id", "?");
	if ((err = hp_json_str(sj, "error"))) {
		hp_emitx(em, HP_TAG_WARN, HP_P1, NULL, NULL, "--job %s on a Slurm cluster: %s; the job "
			 "was not looked up and a sample of nodes was probed", id, err);
		return;
	}
	if (hp_json_str(sj, "skipped")) {
		hp_emit(em, HP_TAG_SKIP, "Slurm job %s not looked up: %s", id, hp_json_str(sj, "skipped"));
		return;
	}
	facts = hp_facts_slurm(snap);
	job = hp_json_get(facts, "job");
	if (!job) {
		hp_emit(em, HP_TAG_SKIP, "Slurm job %s not looked up: the controller probe's output has "
			"no job block (cut off?)", id);
		return;
	}
	err = hp_json_str(job, "error");
	if (err && !strcmp(err, "unknown")) {
		hp_emitx(em, HP_TAG_WARN, HP_P1, NULL, NULL, "Slurm job %s is not known to slurmctld "
			 "(scontrol: Invalid job id specified): a job is forgotten MinJobAge (300 s by "
			 "default) after it ends, so its nodes and output files were not read and a sample "
			 "of nodes was probed; `sacct -j %s` shows its record when accounting is on", id, id);
		return;
	}
	if (!hp_json_bool(job, "found", 0)) {
		hp_emitx(em, HP_TAG_WARN, HP_P1, NULL, NULL, "scontrol show job %s gave no record (%s "
			 "status %.0f): %s", id, err && !strcmp(err, "no_scontrol") ? "scontrol not found," :
			 "exit", hp_json_num(job, "exit", -1), hp_check_str(job, "text", "no output"));
		return;
	}
	cJSON_ArrayForEach(name, hp_json_get(job, "nodes")) {
		nodes++;
		if (!iid_of(snap, name->valuestring))
			unmapped++;
		if (names.len < 300)
			hp_buf_printf(&names, "%s%s", names.len ? " " : "", name->valuestring);
	}
	cJSON_ArrayForEach(r, hp_json_get(job, "records")) {
		const char *st = hp_check_str(r, "JobState", "?"), *reason = hp_check_str(r, "Reason", "None");
		const char *task = hp_json_str(r, "ArrayTaskId");
		char what[160];
		struct hp_finding *f;

		if (nrec++ >= MAX_RECORDS)
			continue;
		if (task)
			snprintf(what, sizeof(what), "Slurm job %s (array job %s, task %s)",
				 hp_check_str(r, "JobId", "?"), hp_check_str(r, "ArrayJobId", "?"), task);
		else
			snprintf(what, sizeof(what), "Slurm job %s", hp_check_str(r, "JobId", "?"));
		if (failed_state(st))
			f = hp_emitx(em, HP_TAG_FAIL, !strcmp(st, "NODE_FAIL") ? HP_P0 : HP_P1, NULL,
				     iid_of(snap, hp_json_str(r, "BatchHost")), "%s (%s) ended %s, exit code %s, "
				     "reason %s; nodes %s", what, hp_check_str(r, "JobName", "?"), st,
				     hp_check_str(r, "ExitCode", "?"), reason, hp_check_str(r, "NodeList", "?"));
		else if (!strcmp(st, "PENDING") && !waiting_its_turn(reason))
			f = hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL, "%s (%s) is PENDING: %s", what,
				     hp_check_str(r, "JobName", "?"), reason);
		else
			f = HP_CHECK_INFO(em, "%s (%s) is %s%s%s on %s", what, hp_check_str(r, "JobName", "?"),
					  st, strcmp(reason, "None") ? ", reason " : "",
					  strcmp(reason, "None") ? reason : "", hp_check_str(r, "NodeList", "?"));
		if (hp_json_str(r, "StdOut"))
			hp_finding_evidence(f, hp_json_str(r, "StdOut"));
	}
	if (nrec > MAX_RECORDS)
		HP_CHECK_INFO(em, "Slurm job %s has %zu records (array tasks); the first %d are shown",
			      id, nrec, MAX_RECORDS);
	if (unmapped)
		hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL, "Slurm job %s runs on %zu node%s the cluster's "
			 "node list lacks (of %zu: %s); they were not probed", id, unmapped,
			 unmapped == 1 ? "" : "s", nodes, names.buf);
	if (hp_json_bool(job, "nodelist_unreadable", 0))
		hp_emitx(em, HP_TAG_WARN, HP_P2, NULL, NULL, "The NodeList of Slurm job %s could not be "
			 "read whole; only its first nodes were probed", id);
	hp_buf_release(&names);
}

/* "<path> (<node>)": the node part into node, or "" when the line named none. */
static void source_node(const char *src, char *node, size_t n)
{
	size_t len = strlen(src);
	const char *open = len && src[len - 1] == ')' ? strrchr(src, '(') : NULL;

	node[0] = '\0';
	if (open && open > src && open[-1] == ' ')
		snprintf(node, n, "%.*s", (int)(len - (size_t)(open - src) - 2), open + 1);
}

static void run_logs(const struct hp_snapshot *snap, struct hp_emit *em)
{
	const cJSON *sj = slurm_job(snap), *facts, *l, *h, *e, *scan;
	size_t read = 0, hits = 0;
	const char *id;

	if (!sj || hp_json_str(sj, "error") || hp_json_str(sj, "skipped"))
		return;
	id = hp_check_str(sj, "id", "?");
	facts = hp_facts_slurm(snap);
	cJSON_ArrayForEach(l, hp_json_get(facts, "joblogs")) {
		const char *st = hp_check_str(l, "status", "?"), *path = hp_check_str(l, "path", "?");

		if (!strcmp(st, "read")) {
			read++;
			continue;
		}
		hp_emitx(em, HP_TAG_WARN, HP_P2, "NC8.1", NULL, "Output file %s of Slurm job %s not read "
			 "on the controller: %s", path, id,
			 !strcmp(st, "missing") ? "no such file there (written on a node's own disk? use a "
						  "shared path such as /fsx)" :
			 !strcmp(st, "link") ? "it is a symbolic link, which is never followed" :
			 !strcmp(st, "pattern") ? "the path still holds a %-pattern scontrol did not expand" :
			 "not a readable regular file");
	}
	scan = hp_json_get(sj, "log_scan");
	cJSON_ArrayForEach(h, hp_json_arr(scan, "hits")) {
		const char *code = hp_check_str(h, "code", "?"), *src = hp_check_str(h, "source", "?");
		const struct hp_nccl_pattern *p = hp_nccl_pattern_by_code(code);
		enum hp_prio prio = prio_of(hp_json_str(h, "priority"));
		char node[256], note[800] = "";
		const char *iid;
		struct hp_finding *f;

		hits++;
		if (hp_json_str(h, "cause"))
			continue;
		source_node(src, node, sizeof(node));
		iid = node[0] ? iid_of(snap, node) : NULL;
		hp_nccl_check_hit_note(snap, scan, code, src, iid, note, sizeof(note));
		f = hp_emitx(em, prio == HP_P2 ? HP_TAG_WARN : HP_TAG_FAIL, prio,
			     hp_check_str(h, "section", "NC23"), iid, "%s in %s of Slurm job %s: %s (%.0f "
			     "line%s)%s", code, src, id, p ? p->meaning : "an NCCL error pattern",
			     hp_json_num(h, "count", 0), hp_json_num(h, "count", 0) == 1 ? "" : "s", note);
		hp_finding_class(f, code);
		cJSON_ArrayForEach(e, hp_json_arr(h, "evidence"))
			if (cJSON_IsString(e)) {
				char line[400];

				snprintf(line, sizeof(line), "> %s", e->valuestring);
				hp_finding_evidence(f, line);
			}
	}
	if (read && !hits)
		hp_emit(em, HP_TAG_PASS, "No NCCL error pattern in the last 500 lines of %zu output file%s "
			"of Slurm job %s (%.0f lines)", read, read == 1 ? "" : "s", id,
			hp_json_num(scan, "lines", 0));
}

HP_CHECK(nccl_slurm_job, HP_GROUP_NCCL_JOB, 90,
	 .id = "nccl.slurm-job", .doc = HP_REFDOC_NCCL, .section = "NC8.1", .prio = HP_P1,
	 .run = run_job);
HP_CHECK(nccl_slurm_logs, HP_GROUP_NCCL_LOGS, 40,
	 .id = "nccl.slurm-logs", .doc = HP_REFDOC_NCCL, .section = "NC23", .prio = HP_P1,
	 .run = run_logs);
