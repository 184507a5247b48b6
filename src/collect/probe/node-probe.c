/*
 * The probe's I/O side (include/hp/probe.h): the embedded script and the
 * remote command line that carries it. Reading what it prints is the
 * core's job (src/core/facts/probe-frame.c); judging the facts is the checks'.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "hp/probe.h"
#include "hp/util.h"
#include "hp_probe.h"

const char *hp_probe_script(void)
{
	/* embed.sh names its table hp_refdocs whatever it embeds; here it holds probe.sh. */
	return (const char *)hp_refdocs[0].text;
}

void hp_probe_command_of(const char *script, struct hp_buf *out)
{
	size_t len = strlen(script);
	unsigned char *b64 = xmalloc(4 * ((len + 2) / 3) + 1);

	/* The alphabet of base64 needs no quoting inside single quotes. */
	EVP_EncodeBlock(b64, (const unsigned char *)script, (int)len);
	hp_buf_printf(out, "sh -c 'printf %%s %s | base64 -d | sh'", (const char *)b64);
	free(b64);
}

void hp_probe_command(struct hp_buf *out)
{
	hp_probe_command_of(hp_probe_script(), out);
}
