/*
 * `hpnode explain`: prints sections of the reference guide built into the
 * binary (exactly as the file has them, sub-sections included), lists the
 * section ids, and names the closest ids when one is unknown. Works
 * offline: it reads nothing outside the binary and never calls AWS.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/cmd.h"
#include "hp/refdoc.h"
#include "hp/report.h"

#define SECT "\xc2\xa7" /* U+00A7 */
#define CLOSEST 5

static const char usage_text[] =
	"usage: hpnode explain ID [ID...]\n"
	"       hpnode explain --list\n"
	"\n"
	"Prints a section of " HP_REF_DOC " as the file has it,\n"
	"sub-sections included. The guide is built into hpnode, so this works offline.\n"
	"\n"
	"  ID          a section id as findings print it: A, B.4, G.1.a (any case);\n"
	"              A+B prints both\n"
	"  --list      every section id with its title\n"
	"  -h, --help  this help\n"
	"\n"
	"Exit status: 0 printed, 1 the built-in guide cannot be read, 2 usage or unknown section.\n";

static int bad_usage(const char *msg, const char *arg)
{
	char clean[512];

	hp_safe_text(arg ? arg : "", clean, sizeof(clean));
	fprintf(stderr, "hpnode explain: %s%s%s%s\nRun 'hpnode explain --help' for usage.\n", msg,
		arg ? " '" : "", clean, arg ? "'" : "");
	return HP_EXIT_USAGE;
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

/* `hpnode explain`: options, then the sections or the list; see usage_text. */
int cmd_explain(int argc, char **argv, struct hp_sys *sys)
{
	static const struct option longopts[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hp_refdoc d;
	struct hp_error e = HP_ERROR_INIT;
	const char *text;
	size_t *secs = NULL;
	long n, i;
	int c, list = 0, rc = HP_EXIT_OK;

	(void)sys;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			list = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return HP_EXIT_OK;
		default:
			return bad_usage("unknown option", argv[optind - 1]);
		}
	}
	if (list && optind < argc)
		return bad_usage("--list takes no section id, got", argv[optind]);
	if (!list && optind == argc)
		return bad_usage("name a section id (or --list)", NULL);

	text = hp_refdoc_embedded(HP_REFDOC_DETAIL);
	if (!text || hp_refdoc_parse(&d, text, &e)) {
		fprintf(stderr, "hpnode explain: cannot read the built-in " HP_REF_DOC ": %s\n",
			text ? e.msg : "not embedded");
		return HP_EXIT_FATAL;
	}
	if (list) {
		list_sections(&d);
		hp_refdoc_release(&d);
		return HP_EXIT_OK;
	}
	n = resolve(&d, argc - optind, argv + optind, &secs);
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
