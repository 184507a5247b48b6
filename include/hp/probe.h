/*
 * The on-node probe's I/O side: a read-only POSIX sh script
 * (src/collect/probe/probe.sh, built into the binary) that prints raw data
 * in framed blocks, and the remote command line that runs it. What its
 * output means is decoded in the core (hp_probe_parse, include/hp/facts.h,
 * which also names the size the transports cut it at: HP_PROBE_MAX_STDOUT).
 */
#ifndef HP_PROBE_H
#define HP_PROBE_H

#include "hp/buf.h"

/* The embedded probe script (NUL-terminated). */
const char *hp_probe_script(void);

/*
 * The shell command that runs a probe script remotely, appended to out:
 * sh -c 'printf %s <base64 of script> | base64 -d | sh' (one argument, no
 * quoting problems: base64 has no quote characters; about 4/3 of the
 * script). Every probe (node, NCCL, Slurm controller) is sent this way.
 */
void hp_probe_command_of(const char *script, struct hp_buf *out);
/* The same for the node probe. */
void hp_probe_command(struct hp_buf *out);

/*
 * The NCCL probe (src/collect/probe/nccl-probe.sh, same framing; decoded by
 * hp_nccl_probe_parse, include/hp/nccl-facts.h) and its remote command.
 */
const char *hp_nccl_probe_script(void);
void hp_nccl_probe_command(struct hp_buf *out);

#endif
