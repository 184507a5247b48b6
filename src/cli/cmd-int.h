/*
 * Between the two halves of the command frame (cmd-common.c, cmd-report.c).
 */
#ifndef HP_CMD_INT_H
#define HP_CMD_INT_H

#include "hp/cmd.h"
#include "hp/profile.h"

/*
 * A HP_CMD_REPORT command after its checks: the output paths checked,
 * then the --snapshot replayed, or AWS set up (HP_CMD_NEED_AWS), collect()
 * and --save-snapshot; then the checks and the report. The exit status.
 */
int hp_cmd_report_run(struct hp_cmd_ctx *c);

/*
 * For a HP_CMD_NEED_AWS command with its own run() (`hpnode bundle`):
 * profile, region, credentials and the run budget into aws, as a report
 * command gets them (0, or the exit status, its message printed); the
 * message and exit status of a fatal collection error; and the checks of
 * s with the text, JSON and JUnit reports a report command would write
 * (out[0], out[1], out[2]; no colour), the findings left in f.
 */
int hp_cmd_aws_begin(struct hp_cmd_ctx *c, struct hp_profile *prof, struct hp_aws *aws,
		     struct hp_snapshot *snap);
int hp_cmd_fatal(const struct hp_error *e, const struct hp_snapshot *s, const char *region);
struct hp_findings;
void hp_cmd_reports(struct hp_cmd_ctx *c, const struct hp_snapshot *s, int64_t wall_ms,
		    int64_t mono_ms, struct hp_buf out[3], struct hp_findings *f);
/* "P0".."P2" (or p0..p2) into *out: 0, or -1 when it is none of them. */
int hp_cmd_parse_prio(const char *s, enum hp_prio *out);
struct hp_diff_side;
/*
 * One side of a comparison from a file: a JSON report as saved, or a
 * snapshot judged with every check (src/cli/cmd-diff.c); -1 with e set.
 */
int hp_cmd_diff_load(struct hp_cmd_ctx *c, const char *path, struct hp_diff_side *side,
		     struct hp_error *e);

/*
 * One cluster collected as `hpnode triage` collects it, for `hpnode fleet`:
 * triage's collectors on c->aws and c->cluster, the AWS APIs and, when
 * probe is set, the probe sweep; never Kubernetes; no progress lines. why
 * is the reason recorded for what is left out. Safe on several threads at
 * once, each with its own c and c->aws. 0, or -1 with e set.
 */
int hp_cmd_triage_collect_api(struct hp_cmd_ctx *c, int probe, const char *why,
			      struct hp_snapshot *s, struct hp_error *e);

struct hp_probe_set;
/*
 * hpnode watch: plan(ud, s, set) is called once the nodes are listed,
 * before triage's probe sweep, to choose its nodes (set->ids; NULL: every
 * Running node) and hooks; triage_args is triage's state (args_size bytes).
 */
void hp_cmd_triage_plan(void *triage_args,
			void (*plan)(void *ud, const struct hp_snapshot *s, struct hp_probe_set *set),
			void *ud);
/*
 * How many nodes triage's sweep reaches within budget_s seconds at the
 * worst (every node taking the whole --probe-timeout, --concurrency at
 * once); 0 with --no-probe.
 */
int hp_cmd_triage_probe_budget(const void *triage_args, long budget_s);

#endif
