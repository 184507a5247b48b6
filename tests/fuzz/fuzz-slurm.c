/*
 * The Slurm controller probe output (src/core/facts/slurm-decode.c): parsed on
 * its own, then as the controller probe of a Slurm cluster whose checks
 * run and whose reports render. Input: stdout, NUL, stderr. Oracles: the
 * facts print; the reports are clean.
 */
#include <stdlib.h>
#include <string.h>

#include "base-snap.h"
#include "fuzz.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_parts ps;
	struct hp_snapshot s;
	cJSON *facts;

	if (size > HP_SSM_MAX_STDOUT)
		return 0;
	fz_split(data, size, 2, &ps);
	facts = hp_slurm_parse(ps.p[0], ps.len[0]);
	if (!facts)
		fz_fail("hp_slurm_parse returned NULL", NULL, 0);
	{
		char *text = cJSON_PrintUnformatted(facts);

		if (!text)
			fz_fail("facts do not print", NULL, 0);
		free(text);
	}
	cJSON_Delete(facts);

	hp_snapshot_init(&s);
	cJSON_Delete(s.root);
	s.root = cJSON_Parse(fz_base_slurm);
	hp_collect_slurm(&s, fz_probe_entry(ps.p[0], ps.len[0], ps.n > 1 ? ps.p[1] : "",
					    ps.n > 1 ? ps.len[1] : 0, (int)(size & 1), "controller"));
	fz_check_report(&s, NULL);
	hp_snapshot_release(&s);
	fz_parts_release(&ps);
	return 0;
}
