/*
 * `--suggest`: the suggested commands of a finding's reference sections, in
 * the reference document of its check (the node guide or the NCCL guide),
 * with placeholders filled from the finding and the snapshot.
 *
 * A value is never guessed. A command with a placeholder without a known
 * value, or whose value holds characters unsafe in a shell command, is left
 * out and listed with the reason (unfit); placeholders left in the prose
 * around it (intro, blast radius) stay as they are ("<SG_ID>") and are
 * listed with the reason. hpnode never runs any of it.
 */
#ifndef HP_SUGGEST_H
#define HP_SUGGEST_H

#include <cjson/cJSON.h>

#include "hp/buf.h"
#include "hp/check.h"
#include "hp/refdoc.h"
#include "hp/snapshot.h"

/* A placeholder left in a suggestion, and why. */
struct hp_unfilled {
	char *name;          /* "SG_ID" */
	char *why;
};

struct hp_suggestion {
	size_t block;        /* index into the document's blocks */
	size_t section;      /* index of the section the block is in */
	char *intro;         /* what the command is for, filled */
	char *command;       /* filled; lines joined by '\n' */
	char *blast;         /* filled, or NULL when the document gives none */
	char *iac;           /* filled, or NULL when the command changes no IaC-owned setting */
	struct hp_unfilled *unfilled;
	size_t nunfilled, unfilled_alloc;
};

struct hp_suggestions {
	const struct hp_refdoc *doc;  /* the document the blocks are from (owned by hp_suggest) */
	struct hp_suggestion *v;  /* an hp_array (include/hp/array.h) */
	size_t n, alloc;
	size_t skipped;      /* blocks left out: they are for the other orchestrator */
	char **unfit;        /* why each block left out for this cluster's state was left out */
	size_t nunfit, unfit_alloc;
};

/* A value known for the whole cluster, or why not. */
struct hp_suggest_known {
	const char *name;
	char *value;         /* NULL when unknown */
	char *why;
};

/* How many placeholders have cluster-wide values (CLUSTER, REGION ...). */
#define HP_SUGGEST_KNOWN 6

/* What a report needs to make suggestions: the parsed documents and cluster-wide values. */
struct hp_suggest {
	struct hp_refdoc doc;           /* the node guide (HP_REFDOC_DETAIL) */
	struct hp_refdoc nccl;          /* the NCCL guide (HP_REFDOC_NCCL) */
	const struct hp_snapshot *snap; /* may be NULL */
	enum hp_orch orch;              /* HP_ORCH_ANY when not known */
	struct hp_suggest_known known[HP_SUGGEST_KNOWN];
};

/*
 * Parse the embedded reference documents and gather the cluster-wide
 * values from snap (NULL allowed); cluster and region stand in when snap
 * lacks them. Fails only when an embedded document cannot be parsed.
 */
int hp_suggest_init(struct hp_suggest *s, const struct hp_snapshot *snap, const char *cluster,
		    const char *region, struct hp_error *e);
void hp_suggest_release(struct hp_suggest *s);

/*
 * The value for placeholder name (without brackets) in finding f, or NULL
 * with *why set to the reason (both heap strings, the caller frees).
 * Checked for shell safety.
 */
char *hp_suggest_value(const struct hp_suggest *s, const struct hp_finding *f, const char *name,
		       char **why);

/*
 * The suggested commands of f's sections and their sub-sections, in
 * document order, from the document of f's check (out->doc; NULL and no
 * block when it is neither guide).
 */
void hp_suggest_finding(const struct hp_suggest *s, const struct hp_finding *f,
			struct hp_suggestions *out);
void hp_suggestions_release(struct hp_suggestions *v);

/* The text report's lines under a FAIL/WARN finding (nothing for other tags). */
void hp_suggest_text(const struct hp_suggest *s, const struct hp_finding *f, int color,
		     struct hp_buf *out);
/* Adds "suggestions", "suggestions_skipped" and "suggestions_unfit" to a finding's JSON object. */
void hp_suggest_json(const struct hp_suggest *s, const struct hp_finding *f, cJSON *obj);

#endif
