/*
 * Subcommands. Each lives in src/cli/cmd-<name>.c and is listed once in the
 * command table of src/cli/main.c. A command returns the process exit status.
 */
#ifndef HP_CMD_H
#define HP_CMD_H

#include "hp/sys.h"

int cmd_efa_sg(int argc, char **argv, struct hp_sys *sys);
int cmd_explain(int argc, char **argv, struct hp_sys *sys);
int cmd_node(int argc, char **argv, struct hp_sys *sys);
int cmd_triage(int argc, char **argv, struct hp_sys *sys);
int cmd_vpc(int argc, char **argv, struct hp_sys *sys);

#endif
