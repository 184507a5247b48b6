/*
 * The on-node NCCL probe: the embedded script (src/collect/probe/nccl-probe.sh)
 * and the remote command line that carries it, in the same form as the
 * node probe's (hp_probe_command_of). Its output is framed like the node
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

void hp_nccl_probe_command(struct hp_buf *out)
{
	hp_probe_command_of(hp_nccl_probe_script(), out);
}
