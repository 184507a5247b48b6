/*
 * The Slurm controller probe (include/hp/slurm.h): the embedded script and
 * the command line that runs it. It runs nothing itself (the SSM driver
 * does); its output is decoded in src/core/facts/slurm-decode.c.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/probe.h"
#include "hp/slurm.h"
#include "hp/util.h"

/* The generated header names its arrays for the reference documents it was written for. */
#define hp_refdoc_0 slurm_probe_bytes
#define hp_refdocs slurm_probe_files
#include "hp_slurm_probe.h"
#undef hp_refdoc_0
#undef hp_refdocs

/* The embedded probe script. */
const char *hp_slurm_probe_script(void)
{
	return (const char *)slurm_probe_files[0].text;
}

/* The sh command line that runs the probe remotely (the form of every probe). */
void hp_slurm_probe_command(struct hp_buf *out)
{
	hp_probe_command_of(hp_slurm_probe_script(), out);
}

int hp_slurm_job_id_ok(const char *job)
{
	size_t i, digits = 0, unders = 0;

	if (!job || !*job || strlen(job) > 24)
		return 0;
	for (i = 0; job[i]; i++) {
		if (job[i] >= '0' && job[i] <= '9') {
			digits++;
		} else if (job[i] == '_' && digits && !unders) {
			unders++;
			digits = 0;
		} else {
			return 0;
		}
	}
	return digits > 0;
}

int hp_slurm_probe_command_job(const char *job, struct hp_buf *out)
{
	struct hp_buf script = HP_BUF_INIT(HP_MAX_LINE);

	if (!job)
		return hp_slurm_probe_command(out), 0;
	if (!hp_slurm_job_id_ok(job))
		return -1;
	/* Digits and one '_' only: the assignment needs no quoting. */
	hp_buf_printf(&script, "HP_SLURM_JOB=%s\n%s", job, hp_slurm_probe_script());
	hp_probe_command_of(script.buf, out);
	hp_buf_release(&script);
	return 0;
}
