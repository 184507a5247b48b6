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

/* Whether job is a Slurm job id hpnode asks about: digits, or an array task "123_4". */
int hp_slurm_job_id_ok(const char *job);

/*
 * The probe's command line with its job blocks for job (hpnode nccl --job):
 * `scontrol show job -o JOB` and the tail of each StdOut/StdErr file it
 * names. job NULL: the plain probe. -1 (nothing written) when job is not
 * a job id as hp_slurm_job_id_ok() takes it.
 */
int hp_slurm_probe_command_job(const char *job, struct hp_buf *out);

#endif
