/*
 * `hpnode explain`: prints sections of the reference guides built into the
 * binary (exactly as the files have them, sub-sections included), lists the
 * section ids, and names the closest ids when one is unknown. An id's form
 * says which guide it is in: "NC13" the NCCL guide, "G.1.a" the node guide
 * (include/hp/refdoc.h). Works offline: it reads nothing outside the
 * binary and never calls AWS (a HP_CMD_LOCAL_ONLY command without a
 * report: the frame parses its options and hands it the section ids).
 * An argument that names no section is looked up as an error string in
 * the NCCL log-pattern table the log scan uses (include/hp/nccl-facts.h): the
 * patterns it holds, or that hold it, with their sections.
 *
 * In Japanese (--lang ja, or a ja_* locale: hp_lang_of_locale) the ids are
 * resolved in the English guides as always and each section is printed
 * from the Japanese guide (references/ja/, same ids); a Japanese guide or
 * section that is not built in is printed in English after a one-line
 * note on stderr. Everything else (errors, the log-pattern lines) stays
 * English.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/cmd.h"
#include "hp/nccl-facts.h"
#include "hp/refdoc.h"
#include "hp/report.h"
#include "hp/sys.h"
#include "hp/text.h"

#define SECT "\xc2\xa7" /* U+00A7 */
#define CLOSEST 5
#define NCCL_DOC "references/" HP_REFDOC_NCCL

#define JA_DOC(name) "references/" HP_REFDOC_JA name

/*
 * The guides, node guide first: the order of --list. ja[k] is the
 * Japanese guide of d[k] when printing in Japanese and it is built in.
 */
struct docs {
	const struct hp_refdoc *d[2];
	const char *path[2];
	int japanese;
	const struct hp_refdoc *ja[2];
	const char *ja_path[2];
	int noted[2]; /* the missing Japanese guide k was noted on stderr */
};

struct explain_args {
	int list;
	int lang_set;
	enum hp_lang lang;
};

enum { O_LIST = 256, O_LANG };

static const struct hp_opt explain_options[] = {
	{ "list", no_argument, O_LIST,
	  "  --list                 every section id with its title, node guide first\n" },
	{ "lang", required_argument, O_LANG,
	  ("  --lang en|ja           the guides' language (default: ja when LC_ALL, else\n"
	   "                         LC_MESSAGES, else LANG is ja_*; en otherwise)\n") },
	{ NULL, 0, 0, NULL },
};

static int explain_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct explain_args *x = c->args;

	if (code == O_LANG) {
		if (hp_lang_parse(arg, &x->lang))
			return hp_cmd_usage_error(c->cmd->name, "--lang takes en or ja, got '%s'",
						  arg);
		x->lang_set = 1;
		return 0;
	}
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

/*
 * The Japanese copy of section sec of guide k, or HP_REFDOC_NONE (the
 * English one is printed: a one-line note says why, once per guide when
 * the whole guide is missing).
 */
static size_t ja_section(struct docs *ds, int k, size_t sec)
{
	const char *id = ds->d[k]->sec[sec].id;
	size_t j;

	if (!ds->japanese)
		return HP_REFDOC_NONE;
	if (!ds->ja[k]) {
		if (!ds->noted[k])
			fprintf(stderr, "hpnode explain: %s is not built in; printing %s in "
					"English\n", ds->ja_path[k], ds->path[k]);
		ds->noted[k] = 1;
		return HP_REFDOC_NONE;
	}
	j = hp_refdoc_find(ds->ja[k], id);
	if (j != HP_REFDOC_NONE && !strcmp(ds->ja[k]->sec[j].id, id))
		return j;
	fprintf(stderr, "hpnode explain: %s has no section %s; printing it in English\n",
		ds->ja_path[k], id);
	return HP_REFDOC_NONE;
}

static void list_sections(struct docs *ds)
{
	size_t i;
	int k;

	for (k = 0; k < (int)HP_ARRAY_LEN(ds->d); k++) {
		const struct hp_refdoc *d = ds->d[k];

		for (i = 0; i < d->nsec; i++) {
			int indent = d->sec[i].level > 2 ? (d->sec[i].level - 2) * 2 : 0;
			size_t j = ja_section(ds, k, i);
			const char *title = j == HP_REFDOC_NONE ? d->sec[i].title
								: ds->ja[k]->sec[j].title;

			printf("%-7s %*s%s\n", d->sec[i].id, indent, "", title);
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

	hp_text_add(HP_TEXT_REPORT, id, &clean, 64);
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

/* Whether every "+"-part of arg names a section (nothing is reported). */
static int all_ids(const struct docs *ds, const char *arg)
{
	char *copy = xstrdup(strip_sign(arg)), *save = NULL, *tok;
	int ok = 1, any = 0;

	for (tok = strtok_r(copy, "+", &save); tok && ok; tok = strtok_r(NULL, "+", &save)) {
		size_t k;

		any = 1;
		ok = find_section(ds, strip_sign(tok), &k) >= 0;
	}
	free(copy);
	return ok && any;
}

/* ASCII lower case of s into out (n bytes). */
static void lower_copy(const char *s, char *out, size_t n)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < n; i++)
		out[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
	out[i] = '\0';
}

/* The shortest text looked up inside the patterns (shorter words match too much). */
#define TEXT_MIN 6

/*
 * arg as an error string: the patterns of the NCCL log table that match it
 * as a log line, or whose text holds it (any case, TEXT_MIN bytes or
 * more). Each match is printed ("'TEXT' matches the NCCL log pattern ...")
 * and its section appended to secs once. Returns the number of matches.
 */
/* Section references (guide index * 65536 + section index). */
struct sec_list {
	size_t *v;
	size_t n, alloc;
};

static size_t text_lookup(const struct docs *ds, const char *arg, struct sec_list *secs)
{
	size_t idx[64], n, i, k, found = 0;
	unsigned char *hit = calloc(hp_nccl_npatterns, 1);
	char want[256], have[256];
	struct hp_buf clean = HP_BUF_INIT(256);

	if (!hit)
		return 0;
	n = hp_nccl_match(arg, strlen(arg), idx, HP_ARRAY_LEN(idx));
	for (i = 0; i < n && i < HP_ARRAY_LEN(idx); i++)
		hit[idx[i]] = 1;
	lower_copy(arg, want, sizeof(want));
	for (i = 0; strlen(want) >= TEXT_MIN && i < hp_nccl_npatterns; i++) {
		lower_copy(hp_nccl_patterns[i].text, have, sizeof(have));
		if (strstr(have, want))
			hit[i] = 1;
	}
	hp_text_add(HP_TEXT_REPORT, arg, &clean, 200);
	for (i = 0; i < hp_nccl_npatterns; i++) {
		const struct hp_nccl_pattern *p = &hp_nccl_patterns[i];
		size_t sec = HP_REFDOC_NONE, j;
		int which;

		if (!hit[i])
			continue;
		found++;
		printf("'%s' matches the NCCL log pattern '%s' (%s, P%d, %s %s): %s%s\n", clean.buf,
		       p->text, p->code, p->prio, SECT, p->section, p->meaning,
		       p->flags & HP_NCCL_WRAPPER ? "; a generic error: the line before it in the "
						   "log names the cause" : "");
		which = find_section(ds, p->section, &sec);
		if (which < 0)
			continue;
		k = (size_t)which << 16 | sec;
		for (j = 0; j < secs->n && secs->v[j] != k; j++)
			;
		if (j == secs->n)
			hp_array_append(secs, k);
	}
	if (found)
		putchar('\n');
	hp_buf_release(&clean);
	free(hit);
	return found;
}

/*
 * The sections named by the arguments, each possibly "A+B", in order, as
 * guide index * 65536 + section index. Returns the count, or -1 after
 * reporting every unknown id.
 */
static long resolve(const struct docs *ds, int argc, char **argv, size_t **out)
{
	struct sec_list secs = HP_ARRAY_INIT;
	int i, bad = 0;

	for (i = 0; i < argc; i++) {
		char *copy, *save = NULL, *tok;
		int any = 0;

		/* Not a section id: an error string, looked up in the log-pattern table. */
		if (!all_ids(ds, argv[i]) && text_lookup(ds, argv[i], &secs))
			continue;
		copy = xstrdup(strip_sign(argv[i]));

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
	static const char *const ja_names[2] = { HP_REFDOC_JA HP_REFDOC_DETAIL,
						 HP_REFDOC_JA HP_REFDOC_NCCL };
	const struct explain_args *x = c->args;
	struct docs ds = { .path = { HP_REF_DOC, NCCL_DOC },
			   .ja_path = { JA_DOC(HP_REFDOC_DETAIL), JA_DOC(HP_REFDOC_NCCL) } };
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
	ds.japanese = (x->lang_set ? x->lang
				   : hp_lang_of_locale(hp_sys_env(c->sys, "LC_ALL"),
						       hp_sys_env(c->sys, "LC_MESSAGES"),
						       hp_sys_env(c->sys, "LANG"))) == HP_LANG_JA;
	for (k = 0; ds.japanese && k < 2; k++)
		ds.ja[k] = hp_refdoc_get(ja_names[k]);
	if (x->list) {
		list_sections(&ds);
		return rc;
	}
	n = resolve(&ds, c->argc, c->argv, &secs);
	if (n < 0)
		rc = HP_EXIT_USAGE;
	for (i = 0; i < n; i++) {
		int g = (int)(secs[i] >> 16);
		size_t j = ja_section(&ds, g, secs[i] & 0xffff);
		struct hp_str t = j == HP_REFDOC_NONE
					  ? hp_refdoc_section_text(ds.d[g], secs[i] & 0xffff)
					  : hp_refdoc_section_text(ds.ja[g], j);

		if (i)
			putchar('\n');
		fwrite(t.p, 1, t.len, stdout);
	}
	free(secs);
	return rc;
}

const struct hp_cmd_ops hp_cmd_explain = {
	.usage = "usage: hpnode explain ID|TEXT [ID|TEXT...]\n"
		 "       hpnode explain --list\n"
		 "\n"
		 "Prints a section of " HP_REF_DOC " (ids A, B.4, G.1.a)\n"
		 "or of " NCCL_DOC " (ids NC13, NC17.1) as the file\n"
		 "has it, sub-sections included. The guides are built into hpnode, so this works\n"
		 "offline. In Japanese (--lang ja, or a ja_* locale) it prints the sections of\n"
		 "references/ja/, the same ids; English where a Japanese one is missing.\n"
		 "\n"
		 "  ID                     a section id as findings print it: A, B.4, G.1.a, NC13\n"
		 "                         (any case); A+B prints both\n"
		 "  TEXT                   an error string from a log (\"fi_getinfo failed\",\n"
		 "                         \"CUDA out of memory\"): the NCCL log patterns it\n"
		 "                         matches, with their sections\n",
	.exit_text = "\n"
		     "Exit status: 0 printed, 1 the built-in guide cannot be read, 2 usage or "
		     "unknown section.\n",
	.options = explain_options,
	.args_size = sizeof(struct explain_args),
	.option = explain_option,
	.check = explain_check,
	.run = explain_run,
};
