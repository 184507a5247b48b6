/*
 * The "slurm" snapshot key: which node is the Slurm controller and, once
 * the controller probe (src/collect/slurm/slurm-probe.sh) has run there
 * over SSM, that probe's entry. Nothing is judged here.
 */
#include <string.h>

#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/slurm.h"

/* The controller hp_slurm_controller() chooses (its one caller among the collectors). */
struct controller {
	int found;                 /* a controller group qualifies */
	const char *iid, *group, *how;
};

static void choose(const struct hp_snapshot *s, struct controller *c)
{
	memset(c, 0, sizeof(*c));
	c->found = hp_slurm_controller(s, &c->iid, &c->group, &c->how) == 0;
}

/* The "slurm" key for c, with probe (owned from here on) when it ran. */
static void record(struct hp_snapshot *s, const struct controller *c, cJSON *probe)
{
	cJSON *slurm = cJSON_CreateObject();

	if (c->found) {
		if (c->iid)
			cJSON_AddStringToObject(slurm, "controller", c->iid);
		else
			cJSON_AddNullToObject(slurm, "controller");
		cJSON_AddStringToObject(slurm, "group", c->group);
		cJSON_AddStringToObject(slurm, "how", c->how);
	} else {
		cJSON_AddNullToObject(slurm, "controller");
	}
	if (probe)
		cJSON_AddItemToObject(slurm, "probe", probe);
	hp_snapshot_set(s, "slurm", slurm);
}

void hp_collect_slurm(struct hp_snapshot *s, cJSON *probe)
{
	struct controller c;

	if (strcmp(hp_snap_orchestrator(s), "Slurm")) {
		cJSON_Delete(probe);
		return;
	}
	choose(s, &c);
	record(s, &c, probe);
}

void hp_collect_slurm_controller(struct hp_aws *a, const struct hp_probe_opts *o, int probe,
				 struct hp_snapshot *s)
{
	hp_collect_slurm_controller_job(a, o, probe, NULL, s);
}

void hp_collect_slurm_controller_job(struct hp_aws *a, const struct hp_probe_opts *o, int probe,
				     const char *job, struct hp_snapshot *s)
{
	struct controller c;
	cJSON *entry = NULL;

	if (strcmp(hp_snap_orchestrator(s), "Slurm"))
		return;
	choose(s, &c);
	if (probe && !(o->stop && *o->stop) && c.iid) {
		struct hp_buf cmd = HP_BUF_INIT(HP_MAX_LINE);

		/* A job id that is none runs the plain probe (the NCCL collector says why). */
		if (hp_slurm_probe_command_job(job, &cmd))
			hp_slurm_probe_command(&cmd);
		entry = hp_collect_probe_one(a, o, s, c.iid, cmd.buf);
		hp_buf_release(&cmd);
	}
	record(s, &c, entry);
}
