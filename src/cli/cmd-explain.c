/*
 * `hpnode explain`: prints sections of the reference guide built into the
 * binary (exactly as the file has them, sub-sections included), lists the
 * section ids, and names the closest ids when one is unknown. Works
 * offline: it reads nothing outside the binary and never calls AWS (a
 * HP_CMD_LOCAL_ONLY command without a report: the frame parses its
 * options and hands it the section ids).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/cmd.h"
#include "hp/refdoc.h"
#include "hp/report.h"

#define SECT "\xc2\xa7" /* U+00A7 */
#define CLOSEST 5

struct explain_args {
	int list;
};

enum { O_LIST = 256 };

static const struct hp_opt explain_options[] = {
	{ "list", no_argument, O_LIST,
	  "  --list                 every section id with its title\n" },
	{ NULL, 0, 0, NULL },
};

static int explain_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct explain_args *x = c->args;

	(void)arg;
	if (code != O_LIST)
		return HP_EXIT_USAGE;
	x->list = 1;
	return 0;
}

static int explain_check(struct hp_cmd_ctx *c)
{
	const struct explain_args *x = c->args;

	if (x->list && c->argc)
		return hp_cmd_usage_error(c->cmd->name, "--list takes no section id, got '%s'",
					  c->argv[0]);
	if (!x->list && !c->argc)
		return hp_cmd_usage_error(c->cmd->name, "%s", "name a section id (or --list)");
	return 0;
}

/* "§ G.1.a" and "§G.1.a" name the same section as "G.1.a". */
static const char *strip_sign(const char *s)
{
	while (*s == ' ')
		s++;
	if (hp_starts_with(s, SECT))
		s += strlen(SECT);
	while (*s == ' ')
		s++;
	return s;
}

static void list_sections(const struct hp_refdoc *d)
{
	size_t i;

	for (i = 0; i < d->nsec; i++) {
		int indent = d->sec[i].level > 2 ? (d->sec[i].level - 2) * 2 : 0;

		printf("%-7s %*s%s\n", d->sec[i].id, indent, "", d->sec[i].title);
	}
}

static void unknown_section(const struct hp_refdoc *d, const char *id)
{
	struct hp_buf clean = HP_BUF_INIT(256);
	size_t near[CLOSEST], n, i;

	hp_sanitize(id, &clean, 64);
	fprintf(stderr, "hpnode explain: no section '%s' in " HP_REF_DOC "\n", clean.buf);
	n = hp_refdoc_closest(d, id, near, CLOSEST);
	for (i = 0; i < n; i++)
		fprintf(stderr, "%s %s (%s)%s", i ? "," : "  closest:", d->sec[near[i]].id,
			d->sec[near[i]].title, i + 1 == n ? "\n" : "");
	hp_buf_release(&clean);
}

/*
 * The sections named by the arguments, each possibly "A+B", in order.
 * Returns the count, or -1 after reporting every unknown id.
 */
static long resolve(const struct hp_refdoc *d, int argc, char **argv, size_t **out)
{
	size_t *v = NULL, n = 0;
	int i, bad = 0;

	for (i = 0; i < argc; i++) {
		char *copy = xstrdup(strip_sign(argv[i])), *save = NULL, *tok;
		int any = 0;

		for (tok = strtok_r(copy, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
			const char *id = strip_sign(tok);
			size_t k = hp_refdoc_find(d, id);

			any = 1;
			if (k == HP_REFDOC_NONE) {
				unknown_section(d, id);
				bad = 1;
				continue;
			}
			v = xrealloc(v, (n + 1) * sizeof(*v));
			v[n++] = k;
		}
		if (!any) {
			fprintf(stderr, "hpnode explain: empty section id\n");
			bad = 1;
		}
		free(copy);
	}
	if (bad) {
		fputs("Run 'hpnode explain --list' for every section.\n", stderr);
		free(v);
		return -1;
	}
	*out = v;
	return (long)n;
}

/* The sections named by the operands, or the list. */
static int explain_run(struct hp_cmd_ctx *c)
{
	const struct explain_args *x = c->args;
	struct hp_refdoc d;
	struct hp_error e = HP_ERROR_INIT;
	const char *text;
	size_t *secs = NULL;
	long n, i;
	int rc = HP_EXIT_OK;

	text = hp_refdoc_embedded(HP_REFDOC_DETAIL);
	if (!text || hp_refdoc_parse(&d, text, &e)) {
		fprintf(stderr, "hpnode explain: cannot read the built-in " HP_REF_DOC ": %s\n",
			text ? e.msg : "not embedded");
		return HP_EXIT_FATAL;
	}
	if (x->list) {
		list_sections(&d);
		hp_refdoc_release(&d);
		return HP_EXIT_OK;
	}
	n = resolve(&d, c->argc, c->argv, &secs);
	if (n < 0)
		rc = HP_EXIT_USAGE;
	for (i = 0; i < n; i++) {
		struct hp_str t = hp_refdoc_section_text(&d, secs[i]);

		if (i)
			putchar('\n');
		fwrite(t.p, 1, t.len, stdout);
	}
	free(secs);
	hp_refdoc_release(&d);
	return rc;
}

const struct hp_cmd_ops hp_cmd_explain = {
	.usage = "usage: hpnode explain ID [ID...]\n"
		 "       hpnode explain --list\n"
		 "\n"
		 "Prints a section of " HP_REF_DOC " as the file has it,\n"
		 "sub-sections included. The guide is built into hpnode, so this works offline.\n"
		 "\n"
		 "  ID                     a section id as findings print it: A, B.4, G.1.a (any\n"
		 "                         case); A+B prints both\n",
	.exit_text = "\n"
		     "Exit status: 0 printed, 1 the built-in guide cannot be read, 2 usage or "
		     "unknown section.\n",
	.options = explain_options,
	.args_size = sizeof(struct explain_args),
	.option = explain_option,
	.check = explain_check,
	.run = explain_run,
};
