/*
 * The reference-document parser (src/core/refdoc.c) on small made-up documents
 * (extents, fences, blocks and their notes, errors, lookup, "did you
 * mean") and on the embedded guide: every section a check can point at
 * exists, and a section's text is the file's own text.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/check.h"
#include "hp/refdoc.h"
#include "t.h"

static const char small_doc[] =
	"# Title\n"
	"\n"
	"## Policy\n"
	"Prose.\n"
	"\n"
	"## A: First Area\n"
	"Intro of A.\n"
	"\n"
	"```sh\n"
	"# a shell comment, not a heading\n"
	"aws sagemaker describe-cluster --cluster-name <CLUSTER>\n"
	"```\n"
	"\n"
	"### A.1: Narrow Case\n"
	"**Suggested command (run this yourself)**: fix it\n"
	"now.\n"
	"\n"
	"```sh\n"
	"aws ec2 authorize-security-group-egress --group-id <SG_ID>\n"
	"```\n"
	"\n"
	"Blast radius: opens all ports\n"
	"between members.\n"
	"\n"
	"IaC note: change the IaC source instead.\n"
	"\n"
	"Later prose that is no note.\n"
	"\n"
	"#### A.1.a: Deeper\n"
	"Deep text.\n"
	"\n"
	"### A.2: Second Case\n"
	"**Suggested command (run this yourself)**\n"
	"```sh\n"
	"sudo scontrol update nodename=<NODE_NAME> state=resume\n"
	"```\n"
	"Blast radius: the node takes jobs again.\n"
	"\n"
	"## B: Second Area\n"
	"B text.\n"
	"\n"
	"\n";

static void parse_ok(struct hp_refdoc *d, const char *text)
{
	struct hp_error e = HP_ERROR_INIT;

	if (hp_refdoc_parse(d, text, &e))
		T_FAILF("parse failed: %s", e.msg);
}

static size_t must_find(const struct hp_refdoc *d, const char *id)
{
	size_t k = hp_refdoc_find(d, id);

	if (k == HP_REFDOC_NONE)
		T_FAILF("section '%s' not found", id);
	return k;
}

static void t_sections(void)
{
	struct hp_refdoc d;
	size_t a, a1, a1a, a2, b;

	parse_ok(&d, small_doc);
	T_EQ(d.nsec, 5);
	a = must_find(&d, "A");
	a1 = must_find(&d, "A.1");
	a1a = must_find(&d, "A.1.a");
	a2 = must_find(&d, "A.2");
	b = must_find(&d, "B");
	T_STREQ(d.sec[a].title, "First Area");
	T_STREQ(d.sec[a1a].title, "Deeper");
	T_EQ(d.sec[a].level, 2);
	T_EQ(d.sec[a1].level, 3);
	T_EQ(d.sec[a1a].level, 4);
	T_EQ(d.sec[a].line, 6);
	/* The '#' line inside the fence is not a heading. */
	T_EQ(d.sec[a].body_end, d.sec[a1].start);
	T_EQ(d.sec[a].end, d.sec[b].start);
	T_EQ(d.sec[a1].end, d.sec[a2].start);
	T_EQ(d.sec[b].end, strlen(small_doc));
	T_EQ(d.sec[a].parent, HP_REFDOC_NONE);
	T_EQ(d.sec[a1].parent, a);
	T_EQ(d.sec[a1a].parent, a1);
	T_EQ(d.sec[a2].parent, a);
	T_ASSERT(hp_refdoc_within(&d, a1a, a));
	T_ASSERT(hp_refdoc_within(&d, a1, a1));
	T_ASSERT(!hp_refdoc_within(&d, a2, a1));
	T_ASSERT(!hp_refdoc_within(&d, b, a));
	T_ASSERT(!hp_refdoc_within(&d, a, a1));
	/* Lookup: exact, then ignoring case; non-id headings are not sections. */
	T_EQ(hp_refdoc_find(&d, "a.1.A"), a1a);
	T_EQ(hp_refdoc_find(&d, "Policy"), HP_REFDOC_NONE);
	T_EQ(hp_refdoc_find(&d, "A.3"), HP_REFDOC_NONE);
	hp_refdoc_release(&d);
}

static void t_section_text(void)
{
	struct hp_refdoc d;
	struct hp_str s;
	const char *a1 = strstr(small_doc, "### A.1:");
	const char *a2 = strstr(small_doc, "### A.2:");

	parse_ok(&d, small_doc);
	s = hp_refdoc_section_text(&d, must_find(&d, "A.1"));
	/* Sub-sections included; the blank line before the next heading left out. */
	T_ASSERT(s.p == a1);
	T_EQ(s.len, (size_t)(a2 - a1) - 1);
	T_ASSERT(s.p[s.len - 1] == '\n' && s.p[s.len - 2] == '.');
	s = hp_refdoc_section_text(&d, must_find(&d, "B"));
	T_EQ(s.len, strlen("## B: Second Area\nB text.\n"));
	T_ASSERT(!strncmp(s.p, "## B: Second Area\nB text.\n", s.len));
	s = hp_refdoc_section_text(&d, 99);
	T_EQ(s.len, 0);
	hp_refdoc_release(&d);
}

static void t_blocks(void)
{
	struct hp_refdoc d;
	const struct hp_refdoc_block *b;

	parse_ok(&d, small_doc);
	/* The read-only block under A is not a suggestion. */
	T_EQ(d.nblk, 2);
	b = &d.blk[0];
	T_EQ(b->section, must_find(&d, "A.1"));
	T_EQ(b->line, 15);
	T_STREQ(b->intro, "fix it now.");
	T_STREQ(b->command, "aws ec2 authorize-security-group-egress --group-id <SG_ID>");
	T_STREQ(b->blast, "opens all ports between members.");
	T_STREQ(b->iac, "change the IaC source instead.");
	T_EQ(b->orch, HP_ORCH_ANY);
	b = &d.blk[1];
	T_EQ(b->section, must_find(&d, "A.2"));
	T_STREQ(b->intro, "");
	T_STREQ(b->blast, "the node takes jobs again.");
	T_ASSERT(b->iac == NULL);
	T_EQ(b->orch, HP_ORCH_SLURM);
	hp_refdoc_release(&d);
}

static void t_errors(void)
{
	static const struct {
		const char *text, *why;
	} cases[] = {
		{ "## A: X\n```sh\nls\n", "never closed" },
		{ "## A: X\n**Suggested command (run this yourself)**: x\n\nprose\n", "without a fenced" },
		{ "## A: X\n## B: Y\n### A: Again\n", "already at line 1" },
	};
	struct hp_refdoc d;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct hp_error e = HP_ERROR_INIT;

		if (!hp_refdoc_parse(&d, cases[i].text, &e))
			T_FAILF("case %zu parsed", i);
		T_CONTAINS(e.msg, cases[i].why);
		T_EQ(d.nsec, 0);
	}
	/* Empty text: no sections, no error. */
	parse_ok(&d, "");
	T_EQ(d.nsec, 0);
	hp_refdoc_release(&d);
}

static void t_distance(void)
{
	T_EQ(hp_refdoc_distance("", ""), 0);
	T_EQ(hp_refdoc_distance("G.1.a", "g.1.A"), 0);
	T_EQ(hp_refdoc_distance("G.1.x", "G.1.a"), 1);
	T_EQ(hp_refdoc_distance("B.12", "B.1"), 1);
	T_EQ(hp_refdoc_distance("kitten", "sitting"), 3);
	T_EQ(hp_refdoc_distance("", "abc"), 3);
}

static void t_closest(void)
{
	static const struct {
		const char *query;
		const char *first;  /* expected best candidate, NULL for none */
		const char *also;   /* another expected candidate, or NULL */
	} cases[] = {
		{ "G.1.x", "G.1", "G.1.a" },
		{ "g1a", "G.1.a", NULL },
		{ "G.1.a.2", "G.1.a", NULL },
		{ "H.9", "H", "H.1" },
		{ "munge", "H.6", NULL },
		{ "containerd", "M.2", NULL },
		{ "Z", NULL, NULL },
		{ "Z.1", NULL, NULL },
	};
	struct hp_refdoc d;
	size_t out[5], n, i, j;

	parse_ok(&d, hp_refdoc_embedded(HP_REFDOC_DETAIL));
	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		int seen = 0;

		n = hp_refdoc_closest(&d, cases[i].query, out, HP_ARRAY_LEN(out));
		if (!cases[i].first) {
			if (n)
				T_FAILF("'%s' has candidates, first %s", cases[i].query,
					d.sec[out[0]].id);
			continue;
		}
		if (!n || strcmp(d.sec[out[0]].id, cases[i].first))
			T_FAILF("'%s': best candidate %s, expected %s", cases[i].query,
				n ? d.sec[out[0]].id : "(none)", cases[i].first);
		for (j = 0; j < n; j++)
			seen |= cases[i].also && !strcmp(d.sec[out[j]].id, cases[i].also);
		if (cases[i].also && !seen)
			T_FAILF("'%s': %s not among the candidates", cases[i].query, cases[i].also);
	}
	T_EQ(hp_refdoc_closest(&d, "G", out, 0), 0);
	hp_refdoc_release(&d);
}

static void t_orchestrator(void)
{
	static const struct {
		const char *cmd;
		enum hp_orch want;
	} cases[] = {
		{ "sudo scontrol update nodename=n state=resume", HP_ORCH_SLURM },
		{ "sudo systemctl restart slurmctld", HP_ORCH_SLURM },
		{ "sudo systemctl restart munge", HP_ORCH_SLURM },
		{ "kubectl cordon n\nkubectl drain n", HP_ORCH_EKS },
		{ "aws eks update-addon --cluster-name x", HP_ORCH_EKS },
		{ "aws sagemaker batch-reboot-cluster-nodes --cluster-name c", HP_ORCH_ANY },
		{ "sudo systemctl restart containerd", HP_ORCH_ANY },
		{ "echo 'munge' | tee x\nkubectl get pods", HP_ORCH_ANY },
		{ "aws ec2 describe-vpcs --filters Name=tag:eks,Values=1", HP_ORCH_ANY },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++)
		if (hp_refdoc_orchestrator(cases[i].cmd) != cases[i].want)
			T_FAILF("'%s' classified %d, expected %d", cases[i].cmd,
				hp_refdoc_orchestrator(cases[i].cmd), cases[i].want);
}

/* Every section a check names is in its reference document, by exact id. */
static void t_checks_point_at_sections(void)
{
	size_t i;

	for (i = 0; i < hp_checks_count; i++) {
		const struct hp_refdoc *d = hp_refdoc_get(hp_check_doc(hp_checks[i]));
		char *copy = xstrdup(hp_checks[i]->section), *save = NULL, *id;

		if (!d)
			T_FAILF("check %s: document %s is not embedded", hp_checks[i]->id,
				hp_check_doc(hp_checks[i]));
		for (id = strtok_r(copy, "+", &save); id; id = strtok_r(NULL, "+", &save)) {
			size_t k = hp_refdoc_find(d, id);

			if (k == HP_REFDOC_NONE)
				T_FAILF("check %s points at '%s', which the guide lacks",
					hp_checks[i]->id, id);
			/* Exact id, not a case-insensitive neighbour. */
			T_STREQ(d->sec[k].id, id);
		}
		free(copy);
	}
}

/*
 * Titles come from the embedded documents themselves: for every document,
 * every section's title is what hp_refdoc_title gives for its id, and the
 * kept copy is the text parsed afresh.
 */
static void t_titles_from_every_document(void)
{
	const char *name;
	size_t i, k, docs = 0;

	for (i = 0; (name = hp_refdoc_embedded_name(i)); i++) {
		const struct hp_refdoc *kept = hp_refdoc_get(name);
		struct hp_refdoc d;

		docs++;
		if (!kept)
			T_FAILF("embedded %s does not parse", name);
		T_ASSERT(hp_refdoc_get(name) == kept);
		parse_ok(&d, hp_refdoc_embedded(name));
		T_EQ(kept->nsec, d.nsec);
		for (k = 0; k < d.nsec; k++) {
			T_STREQ(kept->sec[k].id, d.sec[k].id);
			T_STREQ(hp_refdoc_title(name, d.sec[k].id), d.sec[k].title);
		}
		hp_refdoc_release(&d);
	}
	T_ASSERT(docs >= 2);
	T_STREQ(hp_refdoc_title(HP_REFDOC_DETAIL, "F"), "Hardware / Auto-Repair");
	T_STREQ(hp_refdoc_title(HP_REFDOC_DETAIL, "G.1.a"), "Row-Remap State");
	/* Exact ids only: the reporter's pointers name sections exactly. */
	T_ASSERT(hp_refdoc_title(HP_REFDOC_DETAIL, "g.1.a") == NULL);
	T_ASSERT(hp_refdoc_title(HP_REFDOC_DETAIL, "F.9") == NULL);
	T_ASSERT(hp_refdoc_title(HP_REFDOC_DETAIL, NULL) == NULL);
	T_ASSERT(hp_refdoc_title("no-such.md", "F") == NULL);
	T_ASSERT(hp_refdoc_get("no-such.md") == NULL);
	T_ASSERT(hp_refdoc_get(NULL) == NULL);
}

/* Ids of another scheme ("NC1", "NC6.2") are sections too; words are not. */
static void t_other_id_schemes(void)
{
	static const char text[] =
		"# Other\n\n"
		"## Section ids\n\n"
		"## NC1: Timeouts\n\nbody\n\n"
		"### NC1.1: Where It Hangs\n\nbody\n\n"
		"## NC12: Twelve\n\n"
		"### NC12.3.b: no sub-case letters in the NCCL form\n\n"
		"## EFA: one capital letter only in the node form\n\n"
		"## Nc2: mixed case is not an id\n\n"
		"## NC2x: trailing letters are not an id\n";
	struct hp_refdoc d;
	size_t nc1;

	parse_ok(&d, text);
	nc1 = must_find(&d, "NC1");
	T_STREQ(d.sec[nc1].title, "Timeouts");
	T_EQ(d.sec[must_find(&d, "NC1.1")].parent, nc1);
	T_STREQ(d.sec[must_find(&d, "NC12")].title, "Twelve");
	T_EQ(hp_refdoc_find(&d, "NC12.3.b"), HP_REFDOC_NONE);
	T_EQ(hp_refdoc_find(&d, "EFA"), HP_REFDOC_NONE);
	T_EQ(hp_refdoc_find(&d, "NC2x"), HP_REFDOC_NONE);
	T_EQ(hp_refdoc_find(&d, "Nc2"), HP_REFDOC_NONE);
	T_EQ(d.nsec, 3);
	hp_refdoc_release(&d);
}

/*
 * A section's text, found a second way: from its heading line to the next
 * line outside fences that starts with at most `level` '#' and a space.
 */
static void t_section_text_is_the_files(void)
{
	const char *text = hp_refdoc_embedded(HP_REFDOC_DETAIL);
	struct hp_refdoc d;
	size_t k;

	parse_ok(&d, text);
	for (k = 0; k < d.nsec; k++) {
		struct hp_str got = hp_refdoc_section_text(&d, k);
		char head[64];
		const char *start, *p, *end;
		int in = 0;

		snprintf(head, sizeof(head), "\n%.*s %s: ", d.sec[k].level, "####", d.sec[k].id);
		start = strstr(text, head);
		T_ASSERT(start != NULL);
		start++;
		for (p = strchr(start, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
			int h = 0;

			if (!strncmp(p, "```", 3))
				in = !in;
			while (!in && p[h] == '#')
				h++;
			if (h && h <= d.sec[k].level && p[h] == ' ')
				break;
			if (!strchr(p, '\n')) {
				p += strlen(p);
				break;
			}
		}
		for (end = p; end > start && (end[-1] == '\n' || end[-1] == ' '); end--)
			;
		if (got.p != start || got.len != (size_t)(end - start) + 1)
			T_FAILF("section %s: text differs from the file's (%zu bytes, expected %zu)",
				d.sec[k].id, got.len, (size_t)(end - start) + 1);
	}
	hp_refdoc_release(&d);
}

/* Every suggested block of the guide states its blast radius; config changes carry the IaC note. */
static void t_guide_blocks(void)
{
	static const char *const iac_owned[] = { "aws ec2 ", "aws eks ", "aws iam ",
						 "aws sagemaker update-cluster ", "kubectl set ",
						 "kubectl create ", NULL };
	struct hp_refdoc d;
	size_t k, with_iac = 0;
	const char *const *w;

	parse_ok(&d, hp_refdoc_embedded(HP_REFDOC_DETAIL));
	T_ASSERT(d.nblk >= 40);
	for (k = 0; k < d.nblk; k++) {
		const struct hp_refdoc_block *b = &d.blk[k];

		if (b->section == HP_REFDOC_NONE)
			T_FAILF("block at line %zu is outside every section", b->line);
		if (!b->blast || strlen(b->blast) < 20)
			T_FAILF("block at line %zu has no blast radius", b->line);
		if (!*b->intro)
			T_FAILF("block at line %zu does not say what it is for", b->line);
		for (w = iac_owned; *w; w++)
			if (strstr(b->command, *w) && (!b->iac || !strstr(b->iac, "drift")))
				T_FAILF("block at line %zu changes configuration ('%s') without the "
					"IaC drift note", b->line, *w);
		with_iac += b->iac != NULL;
	}
	T_ASSERT(with_iac >= 10);
	hp_refdoc_release(&d);
}

static void t_embedded(void)
{
	T_ASSERT(hp_refdoc_embedded(HP_REFDOC_DETAIL) != NULL);
	T_ASSERT(hp_refdoc_embedded(HP_REFDOC_CATALOG) != NULL);
	T_ASSERT(hp_refdoc_embedded("no-such.md") == NULL);
}


/* NCCL guide ids: NC<n> and NC<n>.<m> headings are sections; near misses are not. */
static void t_nccl_ids(void)
{
	static const char doc[] =
		"# Title\n"
		"## NC1: Hang\n"
		"text\n"
		"### NC1.1: Where\n"
		"### NC1.a: not an id\n"
		"## NC12: DNS\n"
		"## NCX: not an id\n"
		"## NC2x: not an id\n"
		"## N.1: a node form id\n"
		"## NC3.4.5: not an id\n";
	struct hp_refdoc d;
	size_t nc1, nc11, nc12, near[5], n;

	parse_ok(&d, doc);
	T_EQ(d.nsec, 4);
	nc1 = must_find(&d, "NC1");
	nc11 = must_find(&d, "nc1.1");
	nc12 = must_find(&d, "NC12");
	must_find(&d, "N.1");
	T_STREQ(d.sec[nc11].title, "Where");
	T_EQ(d.sec[nc11].parent, nc1);
	T_EQ(d.sec[nc12].parent, HP_REFDOC_NONE);
	T_ASSERT(hp_refdoc_within(&d, nc11, nc1));
	T_EQ(hp_refdoc_find(&d, "NC1.a"), HP_REFDOC_NONE);
	T_EQ(hp_refdoc_find(&d, "NC2"), HP_REFDOC_NONE);
	/* An unknown NCCL id is close to the NCCL ids, not to the node id N.1. */
	n = hp_refdoc_closest(&d, "NC13", near, 5);
	T_ASSERT(n >= 2);
	T_STREQ(d.sec[near[0]].id, "NC1");
	T_STREQ(d.sec[near[1]].id, "NC1.1");
	hp_refdoc_release(&d);
	T_STREQ(hp_refdoc_of_id("NC13"), HP_REFDOC_NCCL);
	T_STREQ(hp_refdoc_of_id("nc17.1"), HP_REFDOC_NCCL);
	T_STREQ(hp_refdoc_of_id("g.1.A"), HP_REFDOC_DETAIL);
	T_STREQ(hp_refdoc_of_id("G.10.b"), HP_REFDOC_DETAIL);
	T_ASSERT(hp_refdoc_of_id("NC17.1.a") == NULL);
	T_ASSERT(hp_refdoc_of_id("NCC1") == NULL);
}

T_MAIN(T(t_nccl_ids), T(t_sections), T(t_section_text), T(t_blocks), T(t_errors), T(t_distance),
       T(t_closest), T(t_orchestrator), T(t_checks_point_at_sections),
       T(t_titles_from_every_document), T(t_other_id_schemes), T(t_section_text_is_the_files), T(t_guide_blocks), T(t_embedded))
