/*
 * Between the two halves of the command frame (cmd-common.c, cmd-report.c).
 */
#ifndef HP_CMD_INT_H
#define HP_CMD_INT_H

#include "hp/cmd.h"

/*
 * A HP_CMD_REPORT command after its checks: the output paths checked,
 * then the --snapshot replayed, or AWS set up (HP_CMD_NEED_AWS), collect()
 * and --save-snapshot; then the checks and the report. The exit status.
 */
int hp_cmd_report_run(struct hp_cmd_ctx *c);

#endif
