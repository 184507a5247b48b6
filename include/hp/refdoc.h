/*
 * The reference documents (the Markdown files in references/, embedded in
 * the binary at build time) split into sections and suggested-command
 * blocks. Pure functions over the text, plus hp_refdoc_get()'s copy of each
 * embedded document parsed once: nothing here reads files or prints.
 *
 * A section is a heading "## <ID>: <Title>" outside fenced blocks, where
 * ID is upper-case letters, digits right after them, dotted numbers and a
 * last dotted lower-case letter ("A", "G.1.a", "NC6.2"; the NCCL guide's form is HP_REFDOC_NCCL's); it runs
 * to the next heading of its own level or above, so it holds its
 * sub-sections. A suggested-command block is a paragraph starting with
 * HP_REFDOC_MARKER, the fenced block after it, and the "Blast radius:" and
 * "IaC note:" paragraphs that follow before the next block, marker or
 * heading.
 */
#ifndef HP_REFDOC_H
#define HP_REFDOC_H

#include <stddef.h>

#include "hp/err.h"

#define HP_REFDOC_DETAIL "node-diagnostics-detail.md"
#define HP_REFDOC_CATALOG "node-issue-catalog.md"
/*
 * The NCCL guide. Its ids are "NC<n>" and "NC<n>.<m>" (NC13, NC17.1); the
 * node guide's are one capital letter with optional ".<n>" and ".<n>.<a>"
 * (A, B.4, G.1.a). No id has both forms, so an id names its document.
 */
#define HP_REFDOC_NCCL "nccl-diagnostics-detail.md"
#define HP_REFDOC_MARKER "**Suggested command (run this yourself)**"
/*
 * The Japanese guides are embedded as "ja/<name>" (references/ja/<name>):
 * the same section ids, headings and fenced blocks as the English guide,
 * the prose in Japanese. Findings and reports name only the English guides.
 */
#define HP_REFDOC_JA "ja/"

/* The language `hpnode explain` prints the guides in. */
enum hp_lang { HP_LANG_EN, HP_LANG_JA };

/*
 * The language a locale chooses, as gettext picks the messages' locale: the
 * first of lc_all, lc_messages and lang (the values of LC_ALL, LC_MESSAGES,
 * LANG; NULL or "" unset) that is set decides. "ja", "ja_JP", "ja_JP.UTF-8",
 * "ja_JP@x" choose HP_LANG_JA; anything else ("C", "POSIX", "en_US.UTF-8",
 * none set) HP_LANG_EN.
 */
enum hp_lang hp_lang_of_locale(const char *lc_all, const char *lc_messages, const char *lang);

/* "en" or "ja" (exactly) into *out: 0, or -1 for any other text. */
int hp_lang_parse(const char *s, enum hp_lang *out);

/* Which orchestrator a command is for. */
enum hp_orch { HP_ORCH_ANY, HP_ORCH_EKS, HP_ORCH_SLURM };

#define HP_REFDOC_NONE ((size_t)-1)

struct hp_refdoc_section {
	char id[16];         /* "G.1.a" */
	char *title;         /* "Row-Remap State" */
	int level;           /* number of '#' in the heading */
	size_t line;         /* 1-based line of the heading */
	size_t start;        /* offset of the heading line */
	size_t body_end;     /* offset of the next heading of any level, or the text's end */
	size_t end;          /* offset of the next heading of this level or above, or the end */
	size_t parent;       /* index of the enclosing section, or HP_REFDOC_NONE */
};

struct hp_refdoc_block {
	size_t section;      /* index of the innermost section holding it */
	size_t line;         /* 1-based line of the marker */
	char *intro;         /* the marker's paragraph after the marker ("" when none) */
	char *command;       /* the fenced lines, joined by '\n', no final newline */
	char *blast;         /* the "Blast radius:" paragraph without its label, or NULL */
	char *iac;           /* the "IaC note:" paragraph without its label, or NULL */
	enum hp_orch orch;
};

struct hp_refdoc {
	const char *text;    /* not owned */
	size_t len;
	struct hp_refdoc_section *sec;
	size_t nsec;
	struct hp_refdoc_block *blk;
	size_t nblk;
};

/* The embedded copy of references/<name>, NUL-terminated; NULL when not embedded. */
const char *hp_refdoc_embedded(const char *name);

/* The file name of the i-th embedded document ("node-diagnostics-detail.md"), NULL past the last. */
const char *hp_refdoc_embedded_name(size_t i);

/*
 * The embedded document name, parsed on first use and kept until the
 * process ends (not for use from several threads at once); NULL when no
 * such document is embedded or it does not parse (a unit test parses every
 * one). Callers must not release it.
 */
const struct hp_refdoc *hp_refdoc_get(const char *name);

/*
 * The title of section id (exact) of the embedded document name:
 * hp_refdoc_title(HP_REFDOC_DETAIL, "F") is "Hardware / Auto-Repair".
 * NULL when the document or the section is unknown. This is the one
 * source of section titles: findings and the report take them from here.
 */
const char *hp_refdoc_title(const char *name, const char *id);

/*
 * Split text (which must outlive d) into sections and blocks. Fails on an
 * unclosed fence, a marker without a fenced block, or an id used twice.
 */
int hp_refdoc_parse(struct hp_refdoc *d, const char *text, struct hp_error *e);
void hp_refdoc_release(struct hp_refdoc *d);

/*
 * The document (HP_REFDOC_DETAIL or HP_REFDOC_NCCL) whose id form id has,
 * ignoring ASCII case; NULL when it has neither form (a word, "G.x").
 */
const char *hp_refdoc_of_id(const char *id);

/* Section index by id (exact, else ignoring ASCII case); HP_REFDOC_NONE when absent. */
size_t hp_refdoc_find(const struct hp_refdoc *d, const char *id);

/*
 * The section's text as the file has it: the heading line through the
 * line before the next heading of its level or above, trailing blank
 * lines left out; the view ends after a newline when the file has one.
 */
struct hp_str hp_refdoc_section_text(const struct hp_refdoc *d, size_t sec);

/* Whether section sec is root itself or one of its sub-sections. */
int hp_refdoc_within(const struct hp_refdoc *d, size_t sec, size_t root);

/*
 * Up to max section indices close to query (an unknown id): ids it is a
 * prefix of or that are a prefix of it, ids within edit distance 2 with
 * the same letter, titles containing it; best first. Returns the count.
 */
size_t hp_refdoc_closest(const struct hp_refdoc *d, const char *query, size_t *out, size_t max);

/* Case-insensitive Levenshtein distance of two ASCII strings. */
size_t hp_refdoc_distance(const char *a, const char *b);

/* Whether a block's commands are Slurm-only, EKS-only, or for either. */
enum hp_orch hp_refdoc_orchestrator(const char *command);

#endif
