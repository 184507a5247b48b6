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
 * The shell command that runs the probe remotely: sh -c '<decode base64> | sh'
 * with the script embedded base64-encoded (appended to out, which needs
 * room for about 4/3 of the script: under 16 KiB today).
 */
void hp_probe_command(struct hp_buf *out);

/*
 * The NCCL probe (src/collect/probe/nccl-probe.sh, same framing; decoded by
 * hp_nccl_probe_parse, include/hp/nccl.h) and its remote command:
 * sh -c '<base64 of the script> | base64 -d | sh', appended to out.
 */
const char *hp_nccl_probe_script(void);
void hp_nccl_probe_command(struct hp_buf *out);

#endif
