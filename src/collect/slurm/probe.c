/*
 * The Slurm controller probe (include/hp/slurm.h): the embedded script and
 * the command line that runs it. It runs nothing itself (the SSM driver
 * does); its output is decoded in src/core/facts/slurm.c.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

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

/* The sh command line that runs the probe remotely. */
void hp_slurm_probe_command(struct hp_buf *out)
{
	const char *script = hp_slurm_probe_script();
	size_t len = strlen(script);
	unsigned char *b64 = xmalloc(4 * ((len + 2) / 3) + 1);

	EVP_EncodeBlock(b64, (const unsigned char *)script, (int)len);
	hp_buf_printf(out, "sh -c 'echo %s | base64 -d | sh'", (const char *)b64);
	free(b64);
}
