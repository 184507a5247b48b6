/*
 * `hpnode watch --cluster X`: triage again and again, printing only what
 * changed since the round before (new and resolved findings, priority
 * changes, nodes replaced, added, removed or changed), and a one-line
 * heartbeat when nothing did. Each round's snapshot is kept in the state
 * directory (one file per cluster), so a restart, or `--once` from cron,
 * compares with the last round saved. SIGINT or SIGTERM ends the watch
 * cleanly (exit 0) between rounds, or winds the current round's sweep down
 * first. The rounds are triage's collectors (src/cli/cmd-triage.c) through
 * the report frame; the comparison is src/report/diff.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd-int.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/report.h"

#define MAX_INTERVAL_S (7L * 24 * 3600)

/*
 * Triage's own state for its collectors (its defaults), kept here so that
 * nothing is left to free when the run ends before any round (--help, a
 * usage error). One command runs per process.
 */
static union {
	max_align_t align;
	unsigned char bytes[4096];
} triage_store;

struct watch_args {
	void *triage;           /* triage's own state (its defaults) */
	long interval_s;
	const char *state_dir;
	int once;
	char *state_file;
	struct hp_diff_side prev;
	int have_prev;
	/*
	 * The sweep of a round after the first: the nodes whose state changed
	 * and a rotating share of the others (share a round; 0: as many as the
	 * run budget reaches at the worst). The rotation's place (the last
	 * node id taken) is kept in rotation_file, each probed node's output
	 * under output_dir, so a node left out this round keeps its last
	 * probe (carried into this round's snapshot) and a restart goes on
	 * where the rotation stopped.
	 */
	long share;
	char *rotation_file, *output_dir;
	struct hp_snapshot prev_snap;  /* the last round's snapshot, during a round */
	int have_prev_snap;
	char **chosen;                 /* this round's sweep (ids), NULL: every node */
	size_t nchosen;
	size_t changed, rotated, carried;
	struct hp_cmd_ctx *ctx;        /* during a round (the hooks run while c->args is triage's) */
	size_t trusted;                /* make_dirs: the environment's base, links allowed there */
};

enum { O_INTERVAL = 256, O_STATE_DIR, O_ONCE, O_PROBE_SHARE };

static const struct hp_opt watch_options[] = {
	{ "interval", required_argument, O_INTERVAL,
	  "  --interval T           time between rounds: 30s, 10m, 1h (default 10m)\n" },
	{ "state-dir", required_argument, O_STATE_DIR,
	  "  --state-dir DIR        where the last round's snapshot is kept (default\n"
	  "                         $XDG_STATE_HOME/hpnode, else ~/.local/state/hpnode)\n" },
	{ "once", no_argument, O_ONCE,
	  "  --once                 one round: compare with the saved state, print the\n"
	  "                         changes, save the new state (for cron)\n" },
	{ "probe-share", required_argument, O_PROBE_SHARE,
	  "  --probe-share N        after the first round the sweep probes the nodes whose\n"
	  "                         state changed and N of the others in turn (default: as\n"
	  "                         many as the run budget reaches); the others keep their\n"
	  "                         last probe\n" },
	{ NULL, 0, 0, NULL },
};

static void watch_init(struct hp_cmd_ctx *c)
{
	struct watch_args *w = c->args;

	w->interval_s = 600;
	if (hp_cmd_triage.args_size > sizeof(triage_store))
		hp_die("watch: triage's state does not fit");
	memset(&triage_store, 0, sizeof(triage_store));
	w->triage = &triage_store;
	c->args = w->triage;
	if (hp_cmd_triage.init)
		hp_cmd_triage.init(c);
	c->args = w;
}

/* "30s", "10m", "1h", "1d" or seconds. */
static int interval(const char *s, long *out)
{
	char *end;
	long v = strtol(s, &end, 10), mul = 1;

	if (end == s || v < 1)
		return -1;
	if (*end == 's')
		mul = 1;
	else if (*end == 'm')
		mul = 60;
	else if (*end == 'h')
		mul = 3600;
	else if (*end == 'd')
		mul = 86400;
	else if (*end)
		return -1;
	if (*end && end[1])
		return -1;
	if (v > MAX_INTERVAL_S / mul)
		return -1;
	*out = v * mul;
	return 0;
}

static int watch_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct watch_args *w = c->args;

	switch (code) {
	case O_INTERVAL:
		if (interval(arg, &w->interval_s))
			return hp_cmd_usage_error(c->cmd->name, "--interval must be like 30s, 10m or 1h "
						  "(at most 7d), got '%s'", arg);
		return 0;
	case O_STATE_DIR:
		w->state_dir = arg;
		return 0;
	case O_ONCE:
		w->once = 1;
		return 0;
	case O_PROBE_SHARE: {
		char *end;
		long n = strtol(arg, &end, 10);

		if (end == arg || *end || n < 1 || n > 1000000)
			return hp_cmd_usage_error(c->cmd->name, "--probe-share must be a whole number "
						  "from 1 to 1000000 (got '%s')", arg);
		w->share = n;
		return 0;
	}
	}
	return HP_EXIT_USAGE;
}

/* The cluster's name or ARN as one file name: every byte outside [A-Za-z0-9._-] becomes '_'. */
static void file_name(const char *cluster, struct hp_buf *out)
{
	const char *p;

	for (p = cluster; *p && out->len < 200; p++) {
		char ch = *p;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			 ch == '.' || ch == '-';

		hp_buf_putc(out, ok ? ch : '_');
	}
}

/*
 * dir and its missing parents, each made with mode 0700, never through a
 * symbolic link: a link anywhere in the path is refused (ELOOP), but in
 * its first `trusted` bytes (the environment's own base, $XDG_STATE_HOME
 * or $HOME, which may well sit under a system link). 0, or -1 with errno.
 */
static int make_dirs(const char *dir, size_t trusted)
{
	char *p = xstrdup(dir), *q;
	size_t n = strlen(p);
	int rc = 0;

	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	for (q = p + 1;; q++) {
		char ch = *q;
		struct stat st;

		if (ch != '/' && ch != '\0')
			continue;
		*q = '\0';
		if (lstat(p, &st) == 0) {
			if (S_ISLNK(st.st_mode) && (ch == '\0' || (size_t)(q - p) > trusted)) {
				errno = ELOOP;
				rc = -1;
			} else if (!S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode)) {
				errno = ENOTDIR;
				rc = -1;
			}
		} else if (errno != ENOENT || mkdir(p, 0700)) {
			rc = -1;
		} else if (lstat(p, &st) || !S_ISDIR(st.st_mode)) {
			/* Replaced between mkdir and lstat: refused as a link would be. */
			errno = ELOOP;
			rc = -1;
		}
		*q = ch;
		if (rc || !ch)
			break;
	}
	free(p);
	return rc;
}

static int watch_check(struct hp_cmd_ctx *c)
{
	struct watch_args *w = c->args;
	struct hp_buf path = HP_BUF_INIT(4096);
	const char *xdg = c->sys->getenv(c->sys, "XDG_STATE_HOME");
	const char *home = c->sys->getenv(c->sys, "HOME");
	size_t trusted = 0;

	if (c->o.replay)
		return hp_cmd_usage_error(c->cmd->name, "%s", "--snapshot cannot be watched: it does "
					  "not change");
	if (c->o.save)
		return hp_cmd_usage_error(c->cmd->name, "%s", "--save-snapshot: the state directory "
					  "keeps each round's snapshot");
	if (!c->cluster)
		return hp_cmd_usage_error(c->cmd->name, "%s", "--cluster is required");
	if (w->state_dir) {
		hp_buf_puts(&path, w->state_dir);
	} else if (xdg && *xdg) {
		hp_buf_printf(&path, "%s/hpnode", xdg);
		trusted = strlen(xdg);
	} else if (home && *home) {
		hp_buf_printf(&path, "%s/.local/state/hpnode", home);
		trusted = strlen(home);
	} else {
		return hp_cmd_usage_error(c->cmd->name, "%s", "no state directory: give --state-dir "
					  "(neither XDG_STATE_HOME nor HOME is set)");
	}
	w->trusted = trusted;
	if (make_dirs(path.buf, trusted)) {
		int err = errno, rc;

		rc = hp_cmd_usage_error(c->cmd->name, "cannot create the state directory '%s': %s%s",
					path.buf, strerror(err), err == ELOOP ?
					" (a symbolic link in the path: give a --state-dir without one)" : "");
		hp_buf_release(&path);
		return rc;
	}
	hp_buf_puts(&path, "/");
	file_name(c->cluster, &path);
	{
		size_t base = path.len;

		hp_buf_puts(&path, ".rotation");
		w->rotation_file = xstrdup(path.buf);
		path.len = base;
		path.buf[base] = '\0';
		hp_buf_puts(&path, ".nodes");
		w->output_dir = xstrdup(path.buf);
		path.len = base;
		path.buf[base] = '\0';
	}
	hp_buf_puts(&path, ".snap.json");
	w->state_file = hp_buf_detach(&path, NULL);
	if (c->sys->can_write(c->sys, w->state_file)) {
		int err = errno, rc;

		rc = hp_cmd_usage_error(c->cmd->name, "cannot write the state file '%s': %s (create "
					"the directory, or give --state-dir)", w->state_file,
					strerror(err));
		free(w->state_file);
		free(w->rotation_file);
		free(w->output_dir);
		w->state_file = w->rotation_file = w->output_dir = NULL;
		return rc;
	}
	return 0;
}

/* ---- the sweep of a round: changed nodes and a rotating share ---- */

static int by_id(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "<output_dir>/<id>.<ext>" (the id as a file name). */
static char *output_path(const struct watch_args *w, const char *id, const char *ext)
{
	struct hp_buf b = HP_BUF_INIT(4096);

	hp_buf_printf(&b, "%s/", w->output_dir);
	file_name(id, &b);
	hp_buf_printf(&b, ".%s", ext);
	return hp_buf_detach(&b, NULL);
}

/* Each probed node's output as it ends, kept for the rounds that leave it out (worker threads). */
static void keep_output(void *ud, const char *iid, struct hp_ssm_result *r)
{
	struct watch_args *w = ud;
	struct hp_cmd_ctx *c = w->ctx;
	char *out = output_path(w, iid, "out"), *err = output_path(w, iid, "err");

	/* Best effort: a node whose output is not kept is probed again when it is carried. */
	c->sys->write_file(c->sys, out, r->output.out.buf, r->output.out.len, 0600);
	c->sys->write_file(c->sys, err, r->output.err.buf, r->output.err.len, 0600);
	free(out);
	free(err);
}

/* A kept file's text, or NULL when there is none. */
static char *read_kept(struct hp_sys *sys, const char *path)
{
	struct hp_buf b = HP_BUF_INIT(HP_SSM_MAX_STDOUT + 1);

	if (sys->read_file(sys, path, &b)) {
		hp_buf_release(&b);
		return NULL;
	}
	return hp_buf_detach(&b, NULL);
}

static int chosen(const struct watch_args *w, const char *id)
{
	return bsearch(&id, w->chosen, w->nchosen, sizeof(*w->chosen), by_id) != NULL;
}

/*
 * The nodes of this round's snapshot left out of the sweep keep their last
 * probe: the previous round's entry with its kept output, marked carried.
 */
static void carry(void *ud, struct hp_snapshot *s, const char *key)
{
	struct watch_args *w = ud;
	struct hp_cmd_ctx *c = w->ctx;
	const cJSON *nodes = hp_json_arr(s->root, "nodes"), *n;
	struct hp_probe_iter it;
	const cJSON *e;

	if (!w->have_prev_snap || strcmp(key, "probes"))
		return;
	for (e = hp_probes_first(&w->prev_snap, "probes", &it); e; e = hp_probes_next(&it)) {
		const char *id = e->string;
		cJSON *copy;
		char *path, *text;
		int listed = 0;

		if (!id || chosen(w, id))
			continue;
		cJSON_ArrayForEach(n, nodes)
			if (!strcmp(hp_json_str(n, "InstanceId") ? hp_json_str(n, "InstanceId") : "", id))
				listed = 1;
		if (!listed || !cJSON_IsObject(e))
			continue;
		copy = cJSON_Duplicate(e, 1);
		path = output_path(w, id, "out");
		if ((text = read_kept(c->sys, path)) != NULL) {
			cJSON_DeleteItemFromObjectCaseSensitive(copy, "stdout");
			cJSON_AddStringToObject(copy, "stdout", text);
			free(text);
		}
		free(path);
		path = output_path(w, id, "err");
		if ((text = read_kept(c->sys, path)) != NULL) {
			cJSON_DeleteItemFromObjectCaseSensitive(copy, "stderr");
			cJSON_AddStringToObject(copy, "stderr", text);
			free(text);
		}
		free(path);
		cJSON_DeleteItemFromObjectCaseSensitive(copy, "carried");
		cJSON_AddTrueToObject(copy, "carried");
		hp_snapshot_stream_entry(s, key, id, copy, NULL, 0, NULL, 0);
		if (!copy->string)
			copy->string = xstrdup(id);
		hp_probes_add_raw(s, key, copy);
		cJSON_Delete(copy);
		w->carried++;
	}
}

/* The rotation's place: the last node id taken ("" when none is kept). */
static void read_cursor(struct hp_cmd_ctx *c, const struct watch_args *w, char *out, size_t n)
{
	char *text = read_kept(c->sys, w->rotation_file);

	out[0] = '\0';
	if (text) {
		text[strcspn(text, "\r\n")] = '\0';
		hp_strlcpy(out, text, n);
		free(text);
	}
}

static void add_chosen(struct watch_args *w, const char *id)
{
	w->chosen = xrealloc(w->chosen, (w->nchosen + 1) * sizeof(*w->chosen));
	w->chosen[w->nchosen++] = xstrdup(id);
}

/*
 * The sweep after the first round: every Running node that is new, whose
 * state changed, or that has no probe from the last round, and then share
 * of the others in id order from where the rotation stopped (round the
 * end to the start); the rotation's new place saved.
 */
static void plan(void *ud, const struct hp_snapshot *s, struct hp_probe_set *set)
{
	struct watch_args *w = ud;
	struct hp_cmd_ctx *c = w->ctx;
	const cJSON *nodes = hp_snapshot_get(s, "nodes"), *n, *pn;
	const cJSON *prev_nodes = hp_snapshot_get(&w->prev_snap, "nodes");
	const char **rest = NULL;
	size_t nrest = 0, i, start, take;
	long share = w->share;
	char cursor[128];
	static const char *const none[1] = { NULL };

	w->changed = w->rotated = w->carried = 0;
	set->on_output = keep_output;
	set->on_output_ud = w;
	if (!w->have_prev_snap)
		return;   /* the first round: every node */
	set->selection = "watch: changed nodes and a rotating share";
	set->carry = carry;
	set->carry_ud = w;
	if (share <= 0)
		share = hp_cmd_triage_probe_budget(w->triage, c->aws && c->aws->budget_s > 0 ?
						   c->aws->budget_s : HP_CMD_MAX_RUNTIME_S);
	rest = xcalloc((size_t)cJSON_GetArraySize(nodes) + 1, sizeof(*rest));
	cJSON_ArrayForEach(n, (cJSON_IsArray(nodes) ? nodes : NULL)) {
		const char *id = hp_json_str(n, "InstanceId");
		const char *st = hp_json_str(n, "InstanceStatus.Status");
		const char *was = NULL;
		struct hp_probe_iter it;
		int probed_before;

		if (!id)
			continue;
		if (!hp_snap_node_running(n)) {
			/* Its entry this round says why it is not probed; nothing to carry. */
			add_chosen(w, id);
			continue;
		}
		cJSON_ArrayForEach(pn, (cJSON_IsArray(prev_nodes) ? prev_nodes : NULL))
			if (hp_json_str(pn, "InstanceId") && !strcmp(hp_json_str(pn, "InstanceId"), id))
				was = hp_json_str(pn, "InstanceStatus.Status");
		probed_before = hp_probes_find(&w->prev_snap, "probes", id, &it) != NULL;
		if (probed_before)
			hp_probes_end(&it);
		if (!was || !st || strcmp(was, st) || !probed_before) {
			add_chosen(w, id);
			w->changed++;
		} else {
			rest[nrest++] = id;
		}
	}
	qsort(rest, nrest, sizeof(*rest), by_id);
	read_cursor(c, w, cursor, sizeof(cursor));
	for (start = 0; start < nrest && cursor[0] && strcmp(rest[start], cursor) <= 0; start++)
		;
	if (start == nrest)
		start = 0;
	take = (size_t)share < nrest ? (size_t)share : nrest;
	for (i = 0; i < take; i++)
		add_chosen(w, rest[(start + i) % nrest]);
	w->rotated = take;
	if (take) {
		const char *last = rest[(start + take - 1) % nrest];

		c->sys->write_file(c->sys, w->rotation_file, last, strlen(last), 0600);
	}
	free(rest);
	qsort(w->chosen, w->nchosen, sizeof(*w->chosen), by_id);
	set->ids = w->nchosen ? (const char *const *)w->chosen : none;
	set->n = w->nchosen;
}

static void round_release(struct watch_args *w)
{
	size_t i;

	for (i = 0; i < w->nchosen; i++)
		free(w->chosen[i]);
	free(w->chosen);
	w->chosen = NULL;
	w->nchosen = 0;
	if (w->have_prev_snap)
		hp_snapshot_release(&w->prev_snap);
	w->have_prev_snap = 0;
}

static int watch_collect(struct hp_cmd_ctx *c, struct hp_snapshot *s, struct hp_error *e)
{
	void *mine = c->args;
	struct watch_args *w = mine;
	struct hp_error le = HP_ERROR_INIT;
	struct hp_file_in *in;
	int rc;

	/* The last round's snapshot: which nodes changed, and the probes the others keep. */
	hp_snapshot_init(&w->prev_snap);
	in = c->sys->open_read(c->sys, w->state_file, HP_SNAPSHOT_MAX_BYTES);
	if (in) {
		in->close(in);
		if (!hp_snapshot_load(&w->prev_snap, c->sys, w->state_file, &le))
			w->have_prev_snap = 1;
	}
	if (!w->have_prev_snap)
		hp_snapshot_release(&w->prev_snap);
	if (make_dirs(w->output_dir, w->trusted))
		fprintf(stderr, "hpnode watch: cannot create '%s' (%s): nodes left out of a round are "
			"probed again\n", w->output_dir, strerror(errno));
	w->ctx = c;
	hp_cmd_triage_plan(w->triage, plan, w);
	c->args = w->triage;
	rc = hp_cmd_triage.collect(c, s, e);
	c->args = mine;
	hp_cmd_triage_plan(w->triage, NULL, NULL);
	round_release(w);
	return rc;
}

/* The previous round's side from the state file, when there is one. */
static void load_prev(struct hp_cmd_ctx *c, struct watch_args *w)
{
	struct hp_error e = HP_ERROR_INIT;
	struct hp_file_in *in;

	if (w->have_prev) {
		hp_diff_side_release(&w->prev);
		w->have_prev = 0;
	}
	in = c->sys->open_read(c->sys, w->state_file, HP_SNAPSHOT_MAX_BYTES);
	if (!in)
		return;   /* the first round */
	in->close(in);
	if (hp_cmd_diff_load(c, w->state_file, &w->prev, &e)) {
		fprintf(stderr, "hpnode watch: the saved state cannot be read (%s); starting afresh\n",
			e.msg);
		return;
	}
	w->have_prev = 1;
}

static int watch_run(struct hp_cmd_ctx *c)
{
	struct watch_args *w = c->args;
	int rc = HP_EXIT_OK;

	hp_cmd_catch_signals();
	for (;;) {
		long waited;

		load_prev(c, w);
		c->o.save = w->state_file;
		c->o.watch_prev = w->have_prev ? &w->prev : NULL;
		c->o.watch = 1;
		rc = hp_cmd_report_run(c);
		fflush(stdout);
		if (*hp_cmd_stop_flag()) {
			rc = HP_EXIT_OK;   /* asked to stop: a clean end */
			break;
		}
		if (w->once)
			break;
		for (waited = 0; waited < w->interval_s * 1000 && !*hp_cmd_stop_flag(); waited += 200)
			c->sys->sleep_ms(c->sys, 200);
		if (*hp_cmd_stop_flag()) {
			rc = HP_EXIT_OK;
			break;
		}
	}
	if (*hp_cmd_stop_flag())
		fprintf(stderr, "hpnode watch: stopped; the last round's state is in %s\n", w->state_file);
	if (w->have_prev)
		hp_diff_side_release(&w->prev);
	free(w->state_file);
	free(w->rotation_file);
	free(w->output_dir);
	return rc;
}

const struct hp_cmd_ops hp_cmd_watch = {
	.usage = "usage: hpnode watch --cluster NAME|ARN [--interval T] [--state-dir DIR] [--once]\n"
		 "                    [options]\n"
		 "\n"
		 "Triages the cluster every interval (AWS APIs, Kubernetes, the probe sweep) and\n"
		 "prints only what changed since the round before: new and resolved findings,\n"
		 "priority changes, nodes replaced, added, removed or changed; a one-line\n"
		 "heartbeat when nothing did. Each round's snapshot is kept in the state\n"
		 "directory, so a restart (or --once from cron) compares with the last one.\n"
		 "SIGINT or SIGTERM ends the watch cleanly.\n",
	.exit_text = "\n"
		     "Exit status: 0 watched (also when stopped by SIGINT/SIGTERM), 1 fatal,\n"
		     "2 usage (also a state directory that cannot be written), 4 credentials.\n",
	.options = watch_options,
	.args_size = sizeof(struct watch_args),
	.init = watch_init,
	.option = watch_option,
	.check = watch_check,
	.collect = watch_collect,
	.run = watch_run,
};
