/*
 * `hpnode diff OLD NEW`: what changed between two runs. Each side is a
 * saved snapshot (judged with this build's checks first) or a saved JSON
 * report, in any mix; findings are matched by key (include/hp/check.h),
 * nodes by instance id (src/report/diff.c). A local command: it reads two
 * files and calls nothing. hp_cmd_diff_load is also what
 * `triage --baseline FILE` reads its baseline with.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd-int.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "hp/report.h"
#include "hp/text.h"

struct diff_args {
	int json, junit, no_color;
	enum hp_prio fail_on_new;
};

enum { O_OUTPUT = 256, O_FAIL_ON_NEW, O_NO_COLOR };

static const struct hp_opt diff_options[] = {
	{ "output", required_argument, O_OUTPUT,
	  "  --output text|json|junit  the comparison as text (default), JSON\n"
	  "                         (schema hpnode.diff/1) or JUnit XML\n" },
	{ "fail-on-new", required_argument, O_FAIL_ON_NEW,
	  "  --fail-on-new P0|P1|P2  exit 3 when a new finding is of that priority or worse\n" },
	{ "no-color", no_argument, O_NO_COLOR,
	  "  --no-color             no ANSI colours (also NO_COLOR, TERM=dumb, not a tty)\n" },
	{ NULL, 0, 0, NULL },
};

int hp_cmd_parse_prio(const char *s, enum hp_prio *out)
{
	if (s && (s[0] == 'P' || s[0] == 'p') && s[1] >= '0' && s[1] <= '2' && !s[2]) {
		*out = (enum hp_prio)(s[1] - '0');
		return 0;
	}
	return -1;
}

static void diff_init(struct hp_cmd_ctx *c)
{
	struct diff_args *a = c->args;

	a->fail_on_new = HP_PNONE;
}

static int diff_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct diff_args *a = c->args;

	switch (code) {
	case O_OUTPUT:
		a->json = !strcmp(arg, "json");
		a->junit = !strcmp(arg, "junit");
		if (!a->json && !a->junit && strcmp(arg, "text"))
			return hp_cmd_usage_error(c->cmd->name, "--output must be text, json or junit");
		return 0;
	case O_FAIL_ON_NEW:
		if (hp_cmd_parse_prio(arg, &a->fail_on_new))
			return hp_cmd_usage_error(c->cmd->name, "--fail-on-new must be P0, P1 or P2");
		return 0;
	case O_NO_COLOR:
		a->no_color = 1;
		return 0;
	}
	return HP_EXIT_USAGE;
}

static int diff_check(struct hp_cmd_ctx *c)
{
	if (c->argc != 2)
		return hp_cmd_usage_error(c->cmd->name, "needs two files: OLD and NEW (got %d)",
					  c->argc);
	return 0;
}

/* Whether a parsed document is an hpnode report (its schema says so). */
static int is_report(const cJSON *doc)
{
	const char *schema = hp_json_str(doc, "schema");

	return schema && !strncmp(schema, "hpnode.", 7) && cJSON_IsArray(hp_json_get(doc, "findings"));
}

int hp_cmd_diff_load(struct hp_cmd_ctx *c, const char *path, struct hp_diff_side *side,
		     struct hp_error *e)
{
	struct hp_buf text = HP_BUF_INIT((size_t)HP_SNAPSHOT_MAX_BYTES);
	cJSON *doc = NULL;
	int rc;

	if (c->sys->read_file(c->sys, path, &text)) {
		rc = hp_error_set(e, HP_ERR_FILE, "cannot read '%s': %s", path, strerror(errno));
		hp_buf_release(&text);
		return rc;
	}
	doc = hp_json_parse(text.buf, text.len, NULL);
	hp_buf_release(&text);
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return hp_error_set(e, HP_ERR_FILE, "'%s' is neither an hpnode snapshot nor an hpnode "
				    "JSON report (not a JSON object)", path);
	}
	if (is_report(doc)) {
		hp_diff_side_init(side, path, "report");
		rc = hp_diff_side_report(side, doc, e);
		cJSON_Delete(doc);
		return rc;
	}
	cJSON_Delete(doc);
	{
		struct hp_snapshot snap;
		struct hp_findings f = { 0 };

		hp_snapshot_init(&snap);
		if (hp_snapshot_load(&snap, c->sys, path, e)) {
			hp_snapshot_release(&snap);
			return -1;
		}
		/* A snapshot is judged with this build's checks. */
		hp_facts_prepare(&snap);
		hp_checks_run(&snap, &f);
		hp_diff_side_init(side, path, "snapshot");
		hp_diff_side_findings(side, &f);
		hp_diff_side_snapshot(side, &snap);
		hp_findings_release(&f);
		hp_snapshot_release(&snap);
	}
	return 0;
}

static int diff_run(struct hp_cmd_ctx *c)
{
	struct diff_args *a = c->args;
	struct hp_diff_side old_side, new_side;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_buf out = HP_BUF_INIT((size_t)1 << 30);
	struct hp_diff d;
	int rc = HP_EXIT_OK, color;

	memset(&old_side, 0, sizeof(old_side));
	memset(&new_side, 0, sizeof(new_side));
	if (hp_cmd_diff_load(c, c->argv[0], &old_side, &e) ||
	    hp_cmd_diff_load(c, c->argv[1], &new_side, &e)) {
		struct hp_buf msg = HP_BUF_INIT(4096);

		hp_text_add(HP_TEXT_REPORT, e.msg, &msg, 2048);
		fprintf(stderr, "hpnode diff: %s\n", msg.buf);
		hp_buf_release(&msg);
		hp_diff_side_release(&old_side);
		hp_diff_side_release(&new_side);
		return HP_EXIT_FATAL;
	}
	hp_diff_compare(&d, &old_side, &new_side);
	color = !a->json && !a->junit &&
		hp_report_want_color(a->no_color, c->sys->getenv(c->sys, "NO_COLOR"),
				     c->sys->getenv(c->sys, "TERM"), isatty(1));
	if (a->json)
		hp_diff_json(&d, &out);
	else if (a->junit)
		hp_diff_junit(&d, &out);
	else
		hp_diff_text(&d, color, &out);
	fwrite(out.buf, 1, out.len, stdout);
	if (a->fail_on_new != HP_PNONE && d.worst_new <= a->fail_on_new)
		rc = HP_EXIT_FINDINGS;
	hp_buf_release(&out);
	hp_diff_release(&d);
	hp_diff_side_release(&old_side);
	hp_diff_side_release(&new_side);
	return rc;
}

const struct hp_cmd_ops hp_cmd_diff = {
	.usage = "usage: hpnode diff [options] OLD NEW\n"
		 "\n"
		 "Compares two runs: OLD and NEW are snapshots or JSON reports that hpnode saved,\n"
		 "in any mix (a snapshot is judged with the checks of this hpnode first).\n"
		 "Prints the findings that are new, resolved and persisting (with priority\n"
		 "changes), matched by their keys, and the inventory changes: nodes added,\n"
		 "removed, replaced (a new instance id in the same instance group), status\n"
		 "changes and instance-group counts. Reads the two files only; calls nothing.\n"
		 "\n"
		 "  OLD, NEW               a snapshot or an hpnode JSON report\n",
	.exit_text = "\n"
		     "Exit status: 0 compared, 1 a file cannot be read, 2 usage, 3 a new finding at\n"
		     "or above --fail-on-new.\n",
	.options = diff_options,
	.args_size = sizeof(struct diff_args),
	.init = diff_init,
	.option = diff_option,
	.check = diff_check,
	.run = diff_run,
};
