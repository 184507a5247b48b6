/*
 * hpnode nccl --job on Slurm: the job's output files, as the controller
 * probe read them (src/collect/slurm/slurm-probe.sh, blocks "joblog"), go
 * through the NCCL pattern scan here and their lines are dropped from the
 * probe's output, so the snapshot keeps only the matches (as for pod logs).
 * A line that starts with one of the job's node names ("ip-10-1-2-3:123:456
 * [0] NCCL WARN ...", NCCL's own prefix) is told apart by that node, so a
 * finding can name the node it came from. Nothing is judged here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/nccl-facts.h"
#include "hp/slurm.h"

#define MARK "@@HP@@ "

/*
 * The job node a line names: its first word "host:pid:tid" (NCCL's prefix),
 * after a "[timestamp] " (NCCL_DEBUG_TIMESTAMP_FORMAT) or an "N: " task
 * label (srun --label); else, for a job on one node, that node; else NULL.
 */
static const char *line_node(const cJSON *nodes, const char *l, size_t n)
{
	size_t k = 0, start = 0;
	const cJSON *x;

	if (n && l[0] == '[') {
		const char *close = memchr(l, ']', n < 64 ? n : 64);

		if (close && (size_t)(close - l) + 2 < n && close[1] == ' ')
			start = (size_t)(close - l) + 2;
	}
	for (k = start; k < n && k - start < 8 && l[k] >= '0' && l[k] <= '9'; k++)
		;
	if (k > start && k + 2 < n && l[k] == ':' && l[k + 1] == ' ')
		start = k + 2;
	for (k = start; k < n && k - start < 256 && l[k] != ':' && l[k] != ' '; k++)
		;
	if (k > start && k < n && l[k] == ':')
		cJSON_ArrayForEach(x, nodes)
			if (cJSON_IsString(x) && strlen(x->valuestring) == k - start &&
			    !memcmp(x->valuestring, l + start, k - start))
				return x->valuestring;
	x = cJSON_GetArrayItem(nodes, 0);
	return cJSON_GetArraySize(nodes) == 1 && cJSON_IsString(x) ? x->valuestring : NULL;
}

void hp_nccl_collect_slurm_job(struct hp_snapshot *s, const char *job)
{
	cJSON *nccl = cJSON_GetObjectItemCaseSensitive(s->root, "nccl"), *sj, *probe, *out, *facts;
	struct hp_nccl_scan_opts so = { 3, 300, 0 };
	struct hp_nccl_scan *scan;
	struct hp_buf kept = HP_BUF_INIT((size_t)64 << 20);
	const cJSON *nodes;
	const char *text, *p;
	char path[600] = "";
	size_t lines = 0;
	int in_log = 0, header = 0;

	if (!nccl || !job)
		return;
	sj = cJSON_AddObjectToObject(nccl, "slurm_job");
	cJSON_AddStringToObject(sj, "id", job);
	if (!hp_slurm_job_id_ok(job)) {
		cJSON_AddStringToObject(sj, "error", "not a Slurm job id (digits, or an array task "
					"such as 1234_5)");
		return;
	}
	probe = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s->root, "slurm"),
						 "probe");
	out = cJSON_GetObjectItemCaseSensitive(probe, "stdout");
	if (!cJSON_IsString(out) || strcmp(hp_json_str(probe, "state") ? hp_json_str(probe, "state")
								      : "", "probed")) {
		cJSON_AddStringToObject(sj, "skipped", probe ? "the Slurm controller was not probed"
						      : "the Slurm controller probe did not run");
		return;
	}
	text = out->valuestring;
	facts = hp_slurm_parse(text, strlen(text));
	nodes = hp_json_get(facts, "job.nodes");
	scan = hp_nccl_scan_new(&so);
	for (p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *m = memmem(p, n, MARK, strlen(MARK));
		int keep = 1;

		if (m && !strncmp(m + strlen(MARK), "BEGIN joblog", 12)) {
			in_log = 1;
			header = 0;
			lines = 0;
			path[0] = '\0';
		} else if (m && in_log) {
			/* The lines read, in place of the lines themselves. */
			hp_buf_printf(&kept, "lines %zu\n", lines);
			in_log = 0;
		} else if (in_log && header < 2) {
			if (n > 5 && !strncmp(p, "path ", 5))
				snprintf(path, sizeof(path), "%.*s", (int)(n - 5), p + 5);
			header++;
		} else if (in_log) {
			const char *node = line_node(nodes, p, n);
			char source[800];

			if (node)
				snprintf(source, sizeof(source), "%s (%s)", path, node);
			else
				snprintf(source, sizeof(source), "%s", path);
			hp_nccl_scan_line(scan, source, p, n);
			lines++;
			keep = 0;
		}
		if (keep) {
			hp_buf_putn(&kept, p, n);
			if (nl)
				hp_buf_putn(&kept, "\n", 1);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	cJSON_AddItemToObject(sj, "log_scan", hp_nccl_scan_json(scan));
	cJSON_ReplaceItemInObjectCaseSensitive(probe, "stdout", cJSON_CreateString(kept.buf));
	hp_nccl_scan_free(scan);
	hp_buf_release(&kept);
	cJSON_Delete(facts);
}
