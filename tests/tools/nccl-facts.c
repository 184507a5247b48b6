/*
 * Test tool: reads the on-node NCCL probe's output on stdin (at most
 * HP_PROBE_MAX_STDOUT bytes, as the SSM sweep keeps) and prints its facts
 * (hp_nccl_probe_parse) as one JSON document; with --script, prints the
 * embedded NCCL probe script instead. Used by the sandbox e2e test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/nccl-facts.h"
#include "hp/facts.h"
#include "hp/probe.h"
#include "hp/util.h"

int main(int argc, char **argv)
{
	size_t cap = HP_PROBE_MAX_STDOUT, len = 0, n;
	char *buf, *json;
	cJSON *facts;

	if (argc == 2 && !strcmp(argv[1], "--script")) {
		fputs(hp_nccl_probe_script(), stdout);
		return 0;
	}
	if (argc != 1) {
		fputs("usage: nccl-facts [--script] <probe-output\n", stderr);
		return 2;
	}
	buf = xmalloc(cap + 1);
	while (len < cap && (n = fread(buf + len, 1, cap - len, stdin)) > 0)
		len += n;
	buf[len] = '\0';
	facts = hp_nccl_probe_parse(buf, len);
	json = cJSON_PrintUnformatted(facts);
	if (!json)
		return 1;
	puts(json);
	free(json);
	cJSON_Delete(facts);
	free(buf);
	return 0;
}
