/*
 * The on-node NCCL probe: the embedded script (src/collect/probe/nccl-probe.sh)
 * and the remote command line that carries it, in the same form as the
 * node probe's (hp_probe_command). Its output is framed like the node
 * probe's; src/core/facts/nccl-*.c turn it into facts.
 */
#include <string.h>

#include "hp/probe.h"
#include "hp_nccl_probe.h"

const char *hp_nccl_probe_script(void)
{
	/* embed.sh names its table hp_refdocs whatever it embeds; here it holds nccl-probe.sh. */
	return (const char *)hp_refdocs[0].text;
}

static void base64_encode(const unsigned char *p, size_t n, struct hp_buf *out)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];

		hp_buf_putc(out, abc[v >> 18 & 63]);
		hp_buf_putc(out, abc[v >> 12 & 63]);
		hp_buf_putc(out, abc[v >> 6 & 63]);
		hp_buf_putc(out, abc[v & 63]);
	}
	if (n - i == 1) {
		unsigned v = (unsigned)p[i] << 16;

		hp_buf_putc(out, abc[v >> 18 & 63]);
		hp_buf_putc(out, abc[v >> 12 & 63]);
		hp_buf_puts(out, "==");
	} else if (n - i == 2) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;

		hp_buf_putc(out, abc[v >> 18 & 63]);
		hp_buf_putc(out, abc[v >> 12 & 63]);
		hp_buf_putc(out, abc[v >> 6 & 63]);
		hp_buf_putc(out, '=');
	}
}

void hp_nccl_probe_command(struct hp_buf *out)
{
	const char *s = hp_nccl_probe_script();

	/* The alphabet of base64 needs no quoting inside single quotes. */
	hp_buf_puts(out, "sh -c 'printf %s ");
	base64_encode((const unsigned char *)s, strlen(s), out);
	hp_buf_puts(out, " | base64 -d | sh'");
}
