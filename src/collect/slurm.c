/*
 * The "slurm" snapshot key: which node is the Slurm controller and, once
 * the SSM driver has run the controller probe there, that probe's entry.
 * Nothing is judged and nothing is run here.
 */
#include <string.h>

#include "hp/collect.h"
#include "hp/facts.h"

/* Record the Slurm controller and, when it ran, its probe. */
void hp_collect_slurm(struct hp_snapshot *s, cJSON *probe)
{
	const char *iid, *group, *how;
	cJSON *slurm;

	if (strcmp(hp_snap_orchestrator(s), "Slurm")) {
		cJSON_Delete(probe);
		return;
	}
	slurm = cJSON_CreateObject();
	if (hp_slurm_controller(s, &iid, &group, &how) == 0) {
		if (iid)
			cJSON_AddStringToObject(slurm, "controller", iid);
		else
			cJSON_AddNullToObject(slurm, "controller");
		cJSON_AddStringToObject(slurm, "group", group);
		cJSON_AddStringToObject(slurm, "how", how);
	} else {
		cJSON_AddNullToObject(slurm, "controller");
	}
	if (probe)
		cJSON_AddItemToObject(slurm, "probe", probe);
	hp_snapshot_set(s, "slurm", slurm);
}
