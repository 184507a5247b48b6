/*
 * The Slurm side of hpnode: the controller probe (a read-only sh script
 * embedded in the binary, run on the controller over SSM), its parser, the
 * choice of the controller node, and the Slurm node name of an instance.
 *
 * The probe's output is framed per block (meta, ping, sinfo, squeue,
 * services) as `@@HP@@ BEGIN <block>` ... `@@HP@@ END <block> <status>`
 * and ends with `@@HP@@ DONE`, like the on-node probe.
 */
#ifndef HP_SLURM_H
#define HP_SLURM_H

#include <cjson/cJSON.h>

#include "hp/buf.h"
#include "hp/snapshot.h"

/* The probe script as embedded (NUL-terminated). */
const char *hp_slurm_probe_script(void);

/*
 * The remote command that runs the probe: `sh -c 'echo <base64> | base64 -d | sh'`
 * (one argument, no quoting problems: base64 has no quote characters).
 */
void hp_slurm_probe_command(struct hp_buf *out);

/*
 * Parse the probe's stdout into facts. Never fails: carriage returns and
 * terminal escape sequences are removed first, markers are found anywhere
 * on a line, and what is missing stays absent. The result (owned by the
 * caller) has, when present:
 *   done      bool: the DONE marker was seen
 *   meta      {exit, now_epoch, now_local, host}
 *   ping      {exit, text, up (bool; absent when the reply says neither)}
 *   sinfo     {exit, text, nodes: [{name, state, states: [..], flags, reason}]}
 *             one entry per node (sinfo lists a node once per partition)
 *   squeue    {exit, text, jobs: [{id, state, end, start, nodes, name}]}
 *   services  {exit, text, units: {munge: {LoadState, ActiveState, SubState},
 *             slurmctld: {...}}}
 * exit is the block's exit status, null when its END marker is missing;
 * text is the block's first lines (for messages when it failed).
 */
cJSON *hp_slurm_parse(const char *text, size_t len);

/*
 * The Slurm controller: the first Running node of the instance group whose
 * SlurmConfig.NodeType is Controller, else of a group whose name contains
 * "controller", "head" or "master" (never some other node). Sets *group
 * and *how ("SlurmConfig" or "group name") when a group was found, *iid to
 * the node or NULL when the group has no Running node. Returns -1 when no
 * group qualifies.
 */
int hp_slurm_controller(const struct hp_snapshot *s, const char **iid, const char **group,
			const char **how);

/*
 * The Slurm node name of a ListClusterNodes entry: the first label of its
 * PrivateDnsHostname ("ip-10-1-2-3"), into out. NULL when it has none.
 */
const char *hp_slurm_node_name(const cJSON *node, char *out, size_t n);

#endif
