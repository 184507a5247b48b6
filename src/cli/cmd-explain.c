/*
 * `hpnode explain`: prints sections of the reference guides built into the
 * binary (exactly as the files have them, sub-sections included), lists the
 * section ids, and names the closest ids when one is unknown. An id's form
 * says which guide it is in: "NC13" the NCCL guide, "G.1.a" the node guide
 * (include/hp/refdoc.h). Works offline: it reads nothing outside the
 * binary and never calls AWS (a HP_CMD_LOCAL_ONLY command without a
 * report: the frame parses its options and hands it the section ids).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/cmd.h"
#include "hp/refdoc.h"
#include "hp/report.h"

#define SECT "\xc2\xa7" /* U+00A7 */
#define CLOSEST 5
#define NCCL_DOC "references/" HP_REFDOC_NCCL

/* The guides, node guide first: the order of --list. */
struct docs {
	const struct hp_refdoc *d[2];
	const char *path[2];
};

struct explain_args {
	int list;
};

enum { O_LIST = 256 };

static const struct hp_opt explain_options[] = {
	{ "list", no_argument, O_LIST,
	  "  --list                 every section id with its title, node guide first\n" },
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

static void list_sections(const struct docs *ds)
{
	size_t i, k;

	for (k = 0; k < HP_ARRAY_LEN(ds->d); k++) {
		const struct hp_refdoc *d = ds->d[k];

		for (i = 0; i < d->nsec; i++) {
			int indent = d->sec[i].level > 2 ? (d->sec[i].level - 2) * 2 : 0;

			printf("%-7s %*s%s\n", d->sec[i].id, indent, "", d->sec[i].title);
		}
	}
}

/* Index of the guide an id's form belongs to, or -1 (a word: both guides). */
static int doc_of(const char *id)
{
	const char *name = hp_refdoc_of_id(id);

	if (!name)
		return -1;
	return !strcmp(name, HP_REFDOC_NCCL);
}

static void unknown_section(const struct docs *ds, const char *id)
{
	struct hp_buf clean = HP_BUF_INIT(256);
	int which = doc_of(id), k, printed = 0;

	hp_sanitize(id, &clean, 64);
	if (which < 0)
		fprintf(stderr, "hpnode explain: no section '%s' in %s or %s\n", clean.buf,
			ds->path[0], ds->path[1]);
	else
		fprintf(stderr, "hpnode explain: no section '%s' in %s\n", clean.buf,
			ds->path[which]);
	for (k = 0; k < 2 && printed < CLOSEST; k++) {
		const struct hp_refdoc *d = ds->d[k];
		size_t near[CLOSEST], n, i;

		if (which >= 0 && which != k)
			continue;
		n = hp_refdoc_closest(d, id, near, (size_t)(CLOSEST - printed));
		for (i = 0; i < n; i++, printed++)
			fprintf(stderr, "%s %s (%s)", printed ? "," : "  closest:", d->sec[near[i]].id,
				d->sec[near[i]].title);
	}
	if (printed)
		fputc('\n', stderr);
	hp_buf_release(&clean);
}

/* A section by id: the guide its form names, else either (by exact id only). */
static int find_section(const struct docs *ds, const char *id, size_t *sec)
{
	int which = doc_of(id), k;

	for (k = 0; k < 2; k++) {
		if (which >= 0 && which != k)
			continue;
		*sec = hp_refdoc_find(ds->d[k], id);
		if (*sec != HP_REFDOC_NONE)
			return k;
	}
	return -1;
}

/*
 * The sections named by the arguments, each possibly "A+B", in order, as
 * guide index * 65536 + section index. Returns the count, or -1 after
 * reporting every unknown id.
 */
static long resolve(const struct docs *ds, int argc, char **argv, size_t **out)
{
	HP_ARRAY(size_t) secs = HP_ARRAY_INIT;
	int i, bad = 0;

	for (i = 0; i < argc; i++) {
		char *copy = xstrdup(strip_sign(argv[i])), *save = NULL, *tok;
		int any = 0;

		for (tok = strtok_r(copy, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
			const char *id = strip_sign(tok);
			size_t k = HP_REFDOC_NONE;
			int which = find_section(ds, id, &k);

			any = 1;
			if (which < 0) {
				unknown_section(ds, id);
				bad = 1;
				continue;
			}
			hp_array_append(&secs, (size_t)which << 16 | k);
		}
		if (!any) {
			fprintf(stderr, "hpnode explain: empty section id\n");
			bad = 1;
		}
		free(copy);
	}
	if (bad) {
		fputs("Run 'hpnode explain --list' for every section.\n", stderr);
		hp_array_release(&secs);
		return -1;
	}
	*out = secs.v;
	return (long)secs.n;
}

/* The sections named by the operands, or the list. */
static int explain_run(struct hp_cmd_ctx *c)
{
	static const char *const names[2] = { HP_REFDOC_DETAIL, HP_REFDOC_NCCL };
	const struct explain_args *x = c->args;
	struct docs ds = { .path = { HP_REF_DOC, NCCL_DOC } };
	size_t *secs = NULL;
	long n, i;
	int k, rc = HP_EXIT_OK;

	for (k = 0; k < 2; k++) {
		ds.d[k] = hp_refdoc_get(names[k]);
		if (!ds.d[k]) {
			fprintf(stderr, "hpnode explain: cannot read the built-in %s\n", ds.path[k]);
			return HP_EXIT_FATAL;
		}
	}
	if (x->list) {
		list_sections(&ds);
		return rc;
	}
	n = resolve(&ds, c->argc, c->argv, &secs);
	if (n < 0)
		rc = HP_EXIT_USAGE;
	for (i = 0; i < n; i++) {
		struct hp_str t = hp_refdoc_section_text(ds.d[secs[i] >> 16], secs[i] & 0xffff);

		if (i)
			putchar('\n');
		fwrite(t.p, 1, t.len, stdout);
	}
	free(secs);
	return rc;
}

const struct hp_cmd_ops hp_cmd_explain = {
	.usage = "usage: hpnode explain ID [ID...]\n"
		 "       hpnode explain --list\n"
		 "\n"
		 "Prints a section of " HP_REF_DOC " (ids A, B.4, G.1.a)\n"
		 "or of " NCCL_DOC " (ids NC13, NC17.1) as the file\n"
		 "has it, sub-sections included. The guides are built into hpnode, so this works\n"
		 "offline.\n"
		 "\n"
		 "  ID                     a section id as findings print it: A, B.4, G.1.a, NC13\n"
		 "                         (any case); A+B prints both\n",
	.exit_text = "\n"
		     "Exit status: 0 printed, 1 the built-in guide cannot be read, 2 usage or "
		     "unknown section.\n",
	.options = explain_options,
	.args_size = sizeof(struct explain_args),
	.option = explain_option,
	.check = explain_check,
	.run = explain_run,
};
