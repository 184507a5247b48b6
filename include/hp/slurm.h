/*
 * The Slurm controller probe's I/O side: a read-only sh script embedded in
 * the binary, run on the controller over SSM, and its command line. Its
 * output, the choice of the controller node and the Slurm name of an
 * instance are decoded in the core (include/hp/facts.h).
 *
 * The probe's output is framed per block (meta, ping, sinfo, squeue,
 * services) as `@@HP@@ BEGIN <block>` ... `@@HP@@ END <block> <status>`
 * and ends with `@@HP@@ DONE`, like the on-node probe.
 */
#ifndef HP_SLURM_H
#define HP_SLURM_H

#include "hp/buf.h"

/* The probe script as embedded (NUL-terminated). */
const char *hp_slurm_probe_script(void);

/* The remote command that runs the probe, in the form of hp_probe_command_of() (probe.h). */
void hp_slurm_probe_command(struct hp_buf *out);

#endif
