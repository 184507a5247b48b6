/*
 * The on-node probe output (src/core/facts/parse-*.c): decoded on its own,
 * then as the output of a node in a snapshot that every check reads (through
 * the facts cache) and both reports render. Input: stdout, NUL, stderr. Oracles: the
 * facts print as JSON; the reports are clean UTF-8 without control
 * characters.
 */
#include <stdlib.h>
#include <string.h>

#include "base-snap.h"
#include "fuzz.h"
#include "hp/facts.h"
#include "hp/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_parts ps;
	struct hp_snapshot s;
	cJSON *facts, *probes, *meta;

	if (size > HP_PROBE_MAX_STDOUT)
		return 0;
	fz_split(data, size, 2, &ps);
	facts = hp_probe_parse(ps.p[0], ps.len[0]);
	if (!facts)
		fz_fail("hp_probe_parse returned NULL", NULL, 0);
	{
		char *text = cJSON_PrintUnformatted(facts);

		if (!text)
			fz_fail("facts do not print", NULL, 0);
		free(text);
	}
	cJSON_Delete(facts);

	hp_snapshot_init(&s);
	cJSON_Delete(s.root);
	s.root = cJSON_Parse(size & 1 ? fz_base_slurm : fz_base_eks);
	probes = cJSON_CreateObject();
	cJSON_AddItemToObject(probes, FZ_NODE,
			      fz_probe_entry(ps.p[0], ps.len[0], ps.n > 1 ? ps.p[1] : "",
					     ps.n > 1 ? ps.len[1] : 0, 0, "worker"));
	hp_snapshot_set(&s, "probes", probes);
	meta = cJSON_CreateObject();
	cJSON_AddStringToObject(meta, "transport", "native");
	cJSON_AddStringToObject(meta, "selection", "all");
	cJSON_AddNumberToObject(meta, "requested", 1);
	cJSON_AddNumberToObject(meta, "probed", 1);
	cJSON_AddNumberToObject(meta, "unreachable", 0);
	cJSON_AddNumberToObject(meta, "skipped", 0);
	hp_snapshot_set(&s, "probes_meta", meta);
	fz_check_report(&s, NULL);
	hp_snapshot_release(&s);
	fz_parts_release(&ps);
	return 0;
}
