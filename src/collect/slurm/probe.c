/*
 * The Slurm controller probe (include/hp/slurm.h): the embedded script and
 * the command line that runs it. It runs nothing itself (the SSM driver
 * does); its output is decoded in src/core/facts/slurm.c.
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
