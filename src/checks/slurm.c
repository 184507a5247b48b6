/*
 * Slurm checks (Slurm clusters only) over snapshot key "slurm": which node
 * is the controller and whether its probe ran, slurmctld and munge there,
 * nodes down/drained/failed/not responding (Action:Reboot / Action:Replace
 * reasons called out), jobs stuck COMPLETING or CONFIGURING, and the full
 * Slurm node name to instance id table. A probe that did not run makes
 * every probe-based check SKIP, never PASS.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/facts.h"
#include "hp/iso8601.h"
#include "hp/json.h"
#include "checks.h"
#include "fold.h"

#define DASH "\xE2\x80\x94"
#define ARROW "\xE2\x86\x92"
/* A job COMPLETING or CONFIGURING this long is stuck. */
#define STUCK_SECONDS 600

static int is_slurm(const struct hp_snapshot *s)
{
	return !strcmp(hp_snap_orchestrator(s), "Slurm");
}

/* The controller's instance id and group, as recorded or chosen afresh. */
static void controller(const struct hp_snapshot *s, const char **iid, const char **group,
		       const char **how)
{
	hp_facts_slurm_controller(s, iid, group, how);
}

/*
 * The decoded controller probe, or NULL after a SKIP saying why there is
 * none. The controller check reports the reason itself.
 */
static const cJSON *probe_facts(const struct hp_snapshot *s, struct hp_emit *em, const char *what)
{
	const cJSON *probe = hp_json_get(hp_snapshot_get(s, "slurm"), "probe"), *facts;
	const char *state = hp_json_str(probe, "state");
	char st[HP_CHECK_CLIP_SIZE];

	if (!is_slurm(s) || !hp_snapshot_get(s, "cluster"))
		return NULL;
	if (!state) {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL, "%s not checked " DASH " the Slurm "
			 "controller was not probed", what);
		return NULL;
	}
	if (strcmp(state, "probed") || !(facts = hp_facts_slurm(s))) {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL, "%s not checked " DASH " the Slurm "
			 "controller probe did not run (%s)", what, hp_check_clip(state, st));
		return NULL;
	}
	return facts;
}

/*
 * The probe's answer from command cmd (its facts member of the same
 * name), or NULL after saying why there is none: a SKIP when no complete
 * answer came, a WARN when the command failed. what names the check ("Slurm
 * node states"), unchecked what was not checked ("node states").
 */
static const cJSON *answer(const cJSON *facts, struct hp_emit *em, const char *ctl,
			   const char *cmd, const char *what, const char *unchecked)
{
	const cJSON *a = cJSON_GetObjectItem(facts, cmd);
	char clip[HP_CHECK_CLIP_SIZE];

	if (!a || cJSON_IsNull(cJSON_GetObjectItem(a, "exit"))) {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", ctl, "%s not checked " DASH
			 " no complete %s answer in the probe", what, cmd);
		return NULL;
	}
	if (hp_json_num(a, "exit", 0) != 0) {
		hp_emitx(em, HP_TAG_WARN, HP_P2, "H", ctl,
			 "%s failed on the Slurm controller (exit %.0f: %s) " DASH
			 " %s not checked", cmd, hp_json_num(a, "exit", 0),
			 hp_check_clip(hp_check_str(a, "text", ""), clip), unchecked);
		return NULL;
	}
	return a;
}

/* ------------------------------------------------------------ controller */

/*
 * The controller's host name: what the probe's hostname said, else the
 * Slurm name derived from the node's PrivateDnsHostname, else "?".
 */
static const char *controller_host(const struct hp_snapshot *s, const cJSON *facts,
				   const char *iid, char *name, size_t size)
{
	const char *host = hp_check_str(facts, "meta.host", NULL);
	const cJSON *n;

	if (host)
		return host;
	cJSON_ArrayForEach(n, hp_snapshot_get(s, "nodes")) {
		const char *id = hp_json_str(n, "InstanceId");

		if (id && iid && !strcmp(id, iid) && hp_slurm_node_name(n, name, size))
			return name;
	}
	return "?";
}

/*
 * Why the node list is missing: "ListClusterNodes denied", "… throttled",
 * "… failed (<code>)", or "not collected" when no failed call is recorded.
 */
static const char *nodes_unread(const struct hp_snapshot *s, char *out, size_t n)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, hp_json_arr(s->root, "calls")) {
		const char *cls = hp_check_str(c, "class", "");

		if (strcmp(hp_check_str(c, "action", ""), "ListClusterNodes"))
			continue;
		if (!strcmp(cls, "denied") || !strcmp(cls, "throttled"))
			snprintf(out, n, "ListClusterNodes %s", cls);
		else
			snprintf(out, n, "ListClusterNodes failed (%.60s)",
				 hp_check_str(c, "code", cls));
		return out;
	}
	snprintf(out, n, "the node list was not collected");
	return out;
}

static void run_controller(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *probe = hp_json_get(hp_snapshot_get(s, "slurm"), "probe");
	const char *iid, *group, *how, *state;
	char clip[HP_CHECK_CLIP_SIZE], from[64], host[256];
	const cJSON *facts;

	if (!is_slurm(s) || !hp_snapshot_get(s, "cluster"))
		return;
	controller(s, &iid, &group, &how);
	if (!group) {
		hp_emitx(em, HP_TAG_WARN, HP_P2, "H", NULL,
			 "Cannot tell which node is the Slurm controller: no instance group has "
			 "SlurmConfig NodeType Controller or a controller/head/master name " DASH
			 " controller checks skipped");
		return;
	}
	snprintf(from, sizeof(from), "%s", how && !strcmp(how, "SlurmConfig") ?
		 "SlurmConfig NodeType Controller" : "its group name");
	if (!iid && !cJSON_IsArray(hp_snapshot_get(s, "nodes"))) {
		char why[96];

		/* No node list is no proof of no Running node. */
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", NULL,
			 "Slurm controller group %s: nodes not checked " DASH " %s, so whether it "
			 "has a Running node is unknown", hp_check_clip(group, clip),
			 nodes_unread(s, why, sizeof(why)));
		return;
	}
	if (!iid) {
		hp_emitx(em, HP_TAG_FAIL, HP_P0, "H.5", NULL,
			 "The Slurm controller group %s has no Running node " DASH
			 " slurmctld cannot be running", hp_check_clip(group, clip));
		return;
	}
	state = hp_json_str(probe, "state");
	if (!state) {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", iid,
			 "Slurm controller %s (%s, from %s) was not probed " DASH
			 " Slurm state not checked", iid, hp_check_clip(group, clip), from);
		return;
	}
	if (!strcmp(state, "unreachable")) {
		hp_emitx(em, HP_TAG_WARN, HP_P1, "K+H", iid,
			 "Slurm controller SSM probe failed on %s (%s): %s", iid,
			 hp_check_clip(group, clip),
			 hp_check_str(probe, "reason", "no reason given"));
		return;
	}
	if (strcmp(state, "probed")) {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", iid,
			 "Slurm controller %s was not probed: %s", iid,
			 hp_check_clip(hp_check_str(probe, "reason", state), clip));
		return;
	}
	/* No output at all reads like output without its end marker. */
	facts = hp_facts_slurm(s);
	if (!cJSON_IsTrue(cJSON_GetObjectItem(facts, "done")) ||
	    cJSON_IsTrue(cJSON_GetObjectItem(probe, "truncated")))
		hp_emitx(em, HP_TAG_WARN, HP_P1, "K+H", iid,
			 "Slurm controller probe output from %s is incomplete (no end marker) " DASH
			 " some Slurm checks lack data", iid);
	else
		HP_CHECK_INFO(em, "Slurm controller: %s on %s (%s, from %s)",
			      hp_check_clip(controller_host(s, facts, iid, host, sizeof(host)), clip),
			      iid, group, from);
}

/* 127 or "not found": the tool is missing, which is not the same as failing. */
static int missing_tool(const cJSON *block)
{
	return hp_json_num(block, "exit", -1) == 127 ||
	       hp_strcasestr(hp_check_str(block, "text", ""), "not found");
}

static void run_slurmctld(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *facts = probe_facts(s, em, "slurmctld");
	const cJSON *ping, *unit;
	const char *iid, *group, *how;
	char clip[HP_CHECK_CLIP_SIZE], line[HP_CHECK_CLIP_SIZE + 64];
	struct hp_finding *f;

	if (!facts)
		return;
	controller(s, &iid, &group, &how);
	ping = cJSON_GetObjectItem(facts, "ping");
	unit = hp_json_get(facts, "services.units.slurmctld");
	if (!ping || cJSON_IsNull(cJSON_GetObjectItem(ping, "exit"))) {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", iid,
			 "slurmctld not checked " DASH
			 " no complete scontrol ping answer in the probe");
	} else if (cJSON_IsTrue(cJSON_GetObjectItem(ping, "up"))) {
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, iid, "slurmctld responding (%s)",
			 hp_check_clip(hp_check_str(ping, "text", ""), clip));
	} else if (missing_tool(ping) && !cJSON_GetObjectItem(ping, "up")) {
		hp_emitx(em, HP_TAG_WARN, HP_P2, "H", iid,
			 "scontrol not found on the Slurm controller %s " DASH
			 " slurmctld state unknown", iid ? iid : "?");
	} else {
		f = hp_emitx(em, HP_TAG_FAIL, HP_P0, "H.5", iid,
			     "slurmctld not responding on the controller " DASH
			     " all Slurm operations blocked");
		snprintf(line, sizeof(line), "scontrol ping (exit %.0f): %s",
			 hp_json_num(ping, "exit", -1),
			 hp_check_clip(hp_check_str(ping, "text", ""), clip));
		hp_finding_evidence(f, line);
		if (unit) {
			snprintf(line, sizeof(line), "systemd slurmctld: %s/%s",
				 hp_check_str(unit, "ActiveState", "?"),
				 hp_check_str(unit, "SubState", "?"));
			hp_finding_evidence(f, line);
		}
	}
}

static void run_munge(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *facts = probe_facts(s, em, "munge");
	const cJSON *svc, *unit;
	const char *iid, *group, *how, *active, *load;

	if (!facts)
		return;
	controller(s, &iid, &group, &how);
	svc = cJSON_GetObjectItem(facts, "services");
	unit = hp_json_get(svc, "units.munge");
	active = hp_json_str(unit, "ActiveState");
	load = hp_json_str(unit, "LoadState");
	if (!svc || (!unit && cJSON_IsNull(cJSON_GetObjectItem(svc, "exit")))) {
		hp_emitx(em, HP_TAG_SKIP, HP_PNONE, "", iid,
			 "munge not checked " DASH " no complete systemctl answer in the probe");
	} else if (!unit || !active) {
		hp_emitx(em, HP_TAG_WARN, HP_P2, "H.6", iid,
			 "munge state unknown on the Slurm controller (systemctl %s)",
			 missing_tool(svc) ? "not found" : "gave no answer");
	} else if (load && !strcmp(load, "not-found")) {
		hp_emitx(em, HP_TAG_WARN, HP_P1, "H.6", iid,
			 "munge is not installed as a service on the Slurm controller");
	} else if (!strcmp(active, "active")) {
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, iid,
			 "munge active on the Slurm controller");
	} else {
		hp_emitx(em, HP_TAG_FAIL, HP_P0, "H.6", iid,
			 "munge service inactive on the controller (%s/%s) " DASH " Slurm cannot "
			 "authenticate", active, hp_check_str(unit, "SubState", "?"));
	}
}

/* ------------------------------------------------------------ nodes */

struct name_iid {
	char name[64];
	const char *iid;
};

static int name_cmp(const void *a, const void *b)
{
	return strcmp(((const struct name_iid *)a)->name, ((const struct name_iid *)b)->name);
}

/* Slurm name -> instance id for every listed node, sorted by name. */
static struct name_iid *name_index(const struct hp_snapshot *s, size_t *n)
{
	const cJSON *nodes = hp_snapshot_get(s, "nodes"), *x;
	struct name_iid *v = xcalloc((size_t)cJSON_GetArraySize(nodes) + 1, sizeof(*v));

	*n = 0;
	cJSON_ArrayForEach(x, nodes) {
		if (!hp_slurm_node_name(x, v[*n].name, sizeof(v[*n].name)))
			continue;
		v[*n].iid = hp_json_str(x, "InstanceId");
		(*n)++;
	}
	qsort(v, *n, sizeof(*v), name_cmp);
	return v;
}

static const char *iid_for(const struct name_iid *v, size_t n, const char *name)
{
	struct name_iid key, *hit;

	if (hp_strlcpy(key.name, name, sizeof(key.name)) >= sizeof(key.name))
		return NULL;
	hit = bsearch(&key, v, n, sizeof(*v), name_cmp);
	return hit ? hit->iid : NULL;
}

/* "Action: replace" and the like: meant for auto-repair, but not the exact text it needs. */
static int near_action(const char *r)
{
	return hp_strcasestr(r, "action") &&
	       (hp_strcasestr(r, "reboot") || hp_strcasestr(r, "replace"));
}

/* Slurm nodes in one state: a fold (fold.h) worded "<count> <many>" when folded. */
struct nbatch {
	struct hp_fold f;
	const char *many;
};

#define NBATCH(tag, prio, section, many) { HP_FOLD_INIT(tag, prio, section), many }

static void nbatch_add(struct nbatch *b, const char *iid, const char *line)
{
	hp_fold_add(&b->f, iid, "%s", line);
}

static void nbatch_emit(struct hp_emit *em, struct nbatch *b)
{
	hp_fold_emit(em, &b->f, "%zu %s", hp_fold_count(&b->f), b->many);
}

static void run_nodes(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *facts = probe_facts(s, em, "Slurm node states");
	struct nbatch repair = NBATCH(HP_TAG_FAIL, HP_P1, "F.2", "Slurm nodes are marked for "
				      "HyperPod auto-repair (Action:Reboot / Action:Replace)");
	struct nbatch near = NBATCH(HP_TAG_FAIL, HP_P1, "F.3",
				    "Slurm nodes have a reason that is not exactly Action:Reboot or "
				    "Action:Replace " DASH " auto-repair will not act");
	struct nbatch rebooted = NBATCH(HP_TAG_FAIL, HP_P1, "H.2", "Slurm nodes are down after an "
					"unexpected reboot");
	struct nbatch down = NBATCH(HP_TAG_FAIL, HP_P1, "H.1",
				    "Slurm nodes are down, drained, failed or not responding");
	const cJSON *sinfo, *n;
	struct name_iid *idx;
	size_t nidx, total = 0, bad = 0;
	const char *ctl, *group, *how;

	if (!facts)
		return;
	controller(s, &ctl, &group, &how);
	sinfo = answer(facts, em, ctl, "sinfo", "Slurm node states", "node states");
	if (!sinfo)
		return;
	idx = name_index(s, &nidx);
	cJSON_ArrayForEach(n, hp_json_arr(sinfo, "nodes")) {
		const char *name = hp_check_str(n, "name", "?"),
			   *reason = hp_check_str(n, "reason", "");
		const char *iid = iid_for(idx, nidx, name), *state = hp_check_str(n, "state", "?");
		char line[3 * HP_CHECK_CLIP_SIZE + 200], who[HP_CHECK_CLIP_SIZE + 32];
		char rc[HP_CHECK_CLIP_SIZE], nc[HP_CHECK_CLIP_SIZE], sc[HP_CHECK_CLIP_SIZE];
		int no_reason = !*reason || !strcmp(reason, "none");
		int not_responding = strchr(hp_check_str(n, "flags", ""), '*') != NULL;

		total++;
		if (!hp_slurm_node_bad(n))
			continue;
		bad++;
		hp_check_clip(name, nc);
		if (iid)
			snprintf(who, sizeof(who), "%s (%s)", nc, iid);
		else
			snprintf(who, sizeof(who), "%s", nc);
		hp_check_clip(state, sc);
		hp_check_clip(reason, rc);
		if (!strcmp(reason, "Action:Reboot") || !strcmp(reason, "Action:Replace")) {
			snprintf(line, sizeof(line),
				 "Slurm node %s is %s with reason %s " DASH
				 " HyperPod auto-repair will %s it", who, sc, rc,
				 !strcmp(reason, "Action:Reboot") ? "reboot" : "replace");
			nbatch_add(&repair, iid, line);
		} else if (near_action(reason)) {
			struct hp_fold_item *it;

			snprintf(line, sizeof(line),
				 "Slurm node %s is %s with reason '%s', not exactly Action:Reboot "
				 "or Action:Replace " DASH " HyperPod auto-repair will not act",
				 who, sc, rc);
			it = hp_fold_add(&near.f, iid, "%s", line);
			/* What the reason meant, spelt as auto-repair reads it (--suggest). */
			hp_fold_var(it, "NODE_NAME", name);
			hp_fold_var(it, "ACTION", hp_strcasestr(reason, "replace") ? "Action:Replace"
										 : "Action:Reboot");
		} else if (hp_strcasestr(reason, "unexpectedly rebooted")) {
			snprintf(line, sizeof(line), "Slurm node %s is %s: %s", who, sc, rc);
			nbatch_add(&rebooted, iid, line);
		} else {
			snprintf(line, sizeof(line), "Slurm node %s is %s%s%s%s", who, sc,
				 not_responding ? " (not responding)" : "",
				 no_reason ? "" : ": ", no_reason ? "" : rc);
			nbatch_add(&down, iid, line);
		}
	}
	nbatch_emit(em, &repair);
	nbatch_emit(em, &near);
	nbatch_emit(em, &rebooted);
	nbatch_emit(em, &down);
	if (!bad && total)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL, "All %zu Slurm nodes are up (idle, "
			 "allocated or mixed)", total);
	else if (!total)
		hp_emitx(em, HP_TAG_WARN, HP_P2, "H", ctl,
			 "sinfo on the controller listed no nodes");
	free(idx);
}

/* ------------------------------------------------------------ jobs */

/* "2025-01-31T12:00:00" as seconds (the zone does not matter: only differences are used). */
static int local_seconds(const char *t, double *out)
{
	struct hp_iso8601 x;

	/* Slurm prints local times without a zone; one with a zone would not compare. */
	if (hp_iso8601_parse(t, NULL, &x) || x.zoned)
		return -1;
	*out = (double)x.sec;
	return 0;
}

static void run_jobs(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *facts = probe_facts(s, em, "Stuck Slurm jobs");
	const cJSON *squeue, *j;
	const char *ctl, *group, *how;
	double now;
	int have_now, recent = 0;
	struct hp_finding *f = NULL;
	cJSON *lines = NULL;

	if (!facts)
		return;
	controller(s, &ctl, &group, &how);
	squeue = answer(facts, em, ctl, "squeue", "Stuck Slurm jobs", "stuck jobs");
	if (!squeue)
		return;
	have_now = !local_seconds(hp_json_str(facts, "meta.now_local"), &now);
	lines = cJSON_CreateArray();
	cJSON_ArrayForEach(j, hp_json_arr(squeue, "jobs")) {
		const char *state = hp_check_str(j, "state", "?");
		const char *since = !strcmp(state, "CONFIGURING") ? hp_json_str(j, "start") :
								       hp_json_str(j, "end");
		double t;
		char line[HP_CHECK_CLIP_SIZE * 3 + 128], nm[HP_CHECK_CLIP_SIZE],
			nd[HP_CHECK_CLIP_SIZE];

		if (strcmp(state, "COMPLETING") && strcmp(state, "CONFIGURING"))
			continue;
		hp_check_clip(hp_check_str(j, "name", ""), nm);
		hp_check_clip(hp_check_str(j, "nodes", ""), nd);
		if (have_now && !local_seconds(since, &t)) {
			if (now - t < STUCK_SECONDS) {
				recent++;
				continue;
			}
			snprintf(line, sizeof(line), "job %.32s (%s) %s for %.0f min on %s",
				 hp_check_str(j, "id", "?"), nm, state, (now - t) / 60, nd);
		} else {
			snprintf(line, sizeof(line), "job %.32s (%s) %s since %s on %s",
				 hp_check_str(j, "id", "?"), nm, state,
				 since ? since : "an unknown time", nd);
		}
		cJSON_AddItemToArray(lines, cJSON_CreateString(line));
	}
	if (cJSON_GetArraySize(lines)) {
		const cJSON *l;

		f = hp_emitx(em, HP_TAG_WARN, HP_P1, "H.3", NULL,
			     "%d Slurm job(s) stuck in COMPLETING or CONFIGURING for %d minutes "
			     "or more",
			     cJSON_GetArraySize(lines), STUCK_SECONDS / 60);
		cJSON_ArrayForEach(l, lines)
			hp_finding_evidence(f, l->valuestring);
	}
	if (recent)
		HP_CHECK_INFO(em,
			      "%d Slurm job(s) COMPLETING or CONFIGURING for less than %d minutes",
			      recent, STUCK_SECONDS / 60);
	if (!f && !recent)
		hp_emitx(em, HP_TAG_PASS, HP_PNONE, NULL, NULL,
			 "No Slurm job is stuck in COMPLETING or CONFIGURING");
	cJSON_Delete(lines);
}

/* ------------------------------------------------------------ mapping */

struct row {
	char name[64];
	const cJSON *node;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	/* Nodes without a name go last. */
	if (!x->name[0] != !y->name[0])
		return x->name[0] ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The Slurm state of a node from the probe's sinfo, or "-". */
static const char *slurm_state(const cJSON *facts, const char *name)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, hp_json_arr(facts, "sinfo.nodes")) {
		const char *nm = hp_json_str(n, "name");
		if (nm && !strcmp(nm, name))
			return hp_check_str(n, "state", "-");
	}
	return "-";
}

static void run_mapping(const struct hp_snapshot *s, struct hp_emit *em)
{
	const cJSON *nodes = hp_snapshot_get(s, "nodes"), *n, *probe;
	struct row *rows;
	size_t i, count = 0, named = 0;
	const cJSON *facts = NULL;

	if (!is_slurm(s) || !cJSON_IsArray(nodes) || !cJSON_GetArraySize(nodes))
		return;
	rows = xcalloc((size_t)cJSON_GetArraySize(nodes), sizeof(*rows));
	cJSON_ArrayForEach(n, nodes) {
		if (hp_slurm_node_name(n, rows[count].name, sizeof(rows[count].name)))
			named++;
		rows[count++].node = n;
	}
	if (!named) {
		hp_emitx(em, HP_TAG_INFO, HP_PNONE, "H.4", NULL,
			 "ListClusterNodes gave no PrivateDnsHostname for the %zu nodes: Slurm "
			 "node names cannot be mapped here", count);
		free(rows);
		return;
	}
	qsort(rows, count, sizeof(*rows), row_cmp);
	probe = hp_json_get(hp_snapshot_get(s, "slurm"), "probe");
	if (!strcmp(hp_check_str(probe, "state", ""), "probed"))
		facts = hp_facts_slurm(s);
	HP_CHECK_INFO(em, "Slurm node name " ARROW " instance id, all %zu nodes (name from "
		      "PrivateDnsHostname%s):", count, facts ? ", Slurm state from sinfo" : "");
	HP_CHECK_INFO(em, "%-20s %-19s %-20s %-20s %-10s %s", "SLURM NAME", "INSTANCE ID", "GROUP",
		      "TYPE", "STATUS", "SLURM STATE");
	for (i = 0; i < count; i++) {
		const cJSON *x = rows[i].node;
		const char *iid = hp_json_str(x, "InstanceId");
		char g[HP_CHECK_CLIP_SIZE], t[HP_CHECK_CLIP_SIZE], st[HP_CHECK_CLIP_SIZE];

		hp_check_clip(hp_check_str(x, "InstanceGroupName", "?"), g);
		hp_check_clip(hp_check_str(x, "InstanceType", "?"), t);
		hp_check_clip(hp_check_str(x, "InstanceStatus.Status", "?"), st);
		hp_emitx(em, HP_TAG_INFO, HP_PNONE, "", iid, "%-20s %-19s %-20s %-20s %-10s %s",
			 rows[i].name[0] ? rows[i].name : "(no DNS name)", iid ? iid : "?", g, t,
			 st, rows[i].name[0] && facts ? slurm_state(facts, rows[i].name) : "-");
	}
	free(rows);
}

HP_CHECK(slurm_controller, HP_GROUP_SLURM, 10,
	 .id = "slurm.controller", .section = "K+H", .prio = HP_P1, .run = run_controller);
HP_CHECK(slurm_slurmctld, HP_GROUP_SLURM, 20,
	 .id = "slurm.slurmctld", .section = "H.5", .prio = HP_P0, .run = run_slurmctld);
HP_CHECK(slurm_munge, HP_GROUP_SLURM, 30,
	 .id = "slurm.munge", .section = "H.6", .prio = HP_P0, .run = run_munge);
HP_CHECK(slurm_nodes, HP_GROUP_SLURM, 40,
	 .id = "slurm.nodes", .section = "H.1", .prio = HP_P1, .run = run_nodes);
HP_CHECK(slurm_jobs, HP_GROUP_SLURM, 50,
	 .id = "slurm.jobs", .section = "H.3", .prio = HP_P1, .run = run_jobs);
HP_CHECK(slurm_mapping, HP_GROUP_SLURM_MAP, 10,
	 .id = "slurm.mapping", .section = "H.4", .prio = HP_PNONE, .run = run_mapping);
