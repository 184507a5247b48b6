/*
 * Reads the embedded reference documents: sections (id, title, extent),
 * suggested-command blocks with their blast radius and IaC note, lookup by
 * id and "did you mean" candidates. It neither prints nor substitutes
 * placeholders; `hpnode explain` and the reporter do that.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hp/array.h"
#include "hp/buf.h"
#include "hp/refdoc.h"
#include "hp/util.h"
#include "hp_refdoc.h"

#define BLAST_LABEL "Blast radius: "
#define IAC_LABEL "IaC note: "

/* One line of the text, with whether it belongs to a fenced block. */
struct line {
	size_t off, len;
	int code;  /* a fence line or inside a fenced block */
	int fence; /* the line opens or closes a fenced block */
};

struct lines {
	struct line *v;
	size_t n, alloc;
};

/* The embedded copy of one reference document, by file name. */
const char *hp_refdoc_embedded(const char *name)
{
	size_t i;

	for (i = 0; hp_refdocs[i].name; i++)
		if (!strcmp(hp_refdocs[i].name, name))
			return (const char *)hp_refdocs[i].text;
	return NULL;
}

/* The file name of the i-th embedded document, NULL past the last. */
const char *hp_refdoc_embedded_name(size_t i)
{
	return i < HP_ARRAY_LEN(hp_refdocs) ? hp_refdocs[i].name : NULL;
}

/*
 * Parsed embedded documents, by their index in hp_refdocs: parsed on first
 * use and kept for the life of the process (0 not yet, 1 parsed, -1 failed).
 */
static struct hp_refdoc parsed[HP_ARRAY_LEN(hp_refdocs)];
static signed char parsed_state[HP_ARRAY_LEN(hp_refdocs)];

const struct hp_refdoc *hp_refdoc_get(const char *name)
{
	struct hp_error e = HP_ERROR_INIT;
	size_t i;

	for (i = 0; name && hp_refdocs[i].name; i++)
		if (!strcmp(hp_refdocs[i].name, name))
			break;
	if (!name || !hp_refdocs[i].name)
		return NULL;
	if (!parsed_state[i])
		parsed_state[i] = hp_refdoc_parse(&parsed[i], (const char *)hp_refdocs[i].text, &e)
					  ? -1 : 1;
	return parsed_state[i] > 0 ? &parsed[i] : NULL;
}

const char *hp_refdoc_title(const char *name, const char *id)
{
	const struct hp_refdoc *d = hp_refdoc_get(name);
	size_t k;

	for (k = 0; d && id && k < d->nsec; k++)
		if (!strcmp(d->sec[k].id, id))
			return d->sec[k].title;
	return NULL;
}

static int split_lines(const char *text, size_t len, struct lines *ls, struct hp_error *e)
{
	size_t off = 0, open_line = 0;
	int in = 0;

	memset(ls, 0, sizeof(*ls));
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - (text + off)) : len - off;
		struct line *x = hp_array_push(ls);

		x->off = off;
		x->len = l;
		x->fence = l >= 3 && !strncmp(text + off, "```", 3);
		if (x->fence) {
			in = !in;
			if (in)
				open_line = ls->n;
		}
		x->code = x->fence || in;
		off += l + (nl ? 1 : 0);
	}
	if (in) {
		hp_array_release(ls);
		return hp_error_set(e, HP_ERR_PARSE, "line %zu: fenced block never closed", open_line);
	}
	return 0;
}

static int is_blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Heading level (number of '#' followed by a space) of a line, 0 if none. */
static int heading_level(const char *text, const struct line *l)
{
	size_t i = 0;

	if (l->code)
		return 0;
	while (i < l->len && text[l->off + i] == '#')
		i++;
	if (!i || i >= l->len || text[l->off + i] != ' ')
		return 0;
	return (int)i;
}

/* Length of an NCCL guide id ("NC13", "NC17.1") at s (n bytes), 0 if none. */
static size_t nccl_id_length(const char *s, size_t n)
{
	size_t i = 2;

	if (n < 3 || s[0] != 'N' || s[1] != 'C' || !isdigit((unsigned char)s[2]))
		return 0;
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	if (i + 1 < n && s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
		i++;
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
	}
	if (i < n && isalnum((unsigned char)s[i]))
		return 0;
	return i;
}

/*
 * Length of a section id at s (n bytes), 0 if none: an NCCL guide id
 * ("NC13", "NC17.1") or a node guide id: one capital letter, then
 * optionally a dotted number and a last dotted lower-case letter ("A",
 * "B.1", "G.1.a"). Nothing alphanumeric follows. The two forms cannot be
 * taken for each other ("NC" alone is neither).
 */
static size_t id_length(const char *s, size_t n)
{
	size_t i;

	if (nccl_id_length(s, n))
		return nccl_id_length(s, n);
	if (!n || s[0] < 'A' || s[0] > 'Z')
		return 0;
	i = 1;
	if (i + 1 < n && s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
		i++;
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
		if (i + 1 < n && s[i] == '.' && s[i + 1] >= 'a' && s[i + 1] <= 'z' &&
		    (i + 2 >= n || !isalnum((unsigned char)s[i + 2])))
			i += 2;
	}
	if (i < n && isalnum((unsigned char)s[i]))
		return 0;
	return i;
}

static int marker_line(const char *text, const struct line *l)
{
	size_t m = strlen(HP_REFDOC_MARKER);

	return !l->code && l->len >= m && !strncmp(text + l->off, HP_REFDOC_MARKER, m);
}

/* Lines [from, to) joined with single spaces, after skipping `skip` bytes of the first. */
static char *join_paragraph(const char *text, const struct lines *ls, size_t from, size_t to,
			    size_t skip)
{
	struct hp_buf b = HP_BUF_INIT(HP_MAX_FILE);
	size_t i;

	for (i = from; i < to; i++) {
		const char *s = text + ls->v[i].off;
		size_t n = ls->v[i].len;

		if (i == from) {
			s += skip;
			n -= skip;
		}
		while (n && isspace((unsigned char)*s)) {
			s++;
			n--;
		}
		while (n && isspace((unsigned char)s[n - 1]))
			n--;
		if (!n)
			continue;
		if (b.len)
			hp_buf_putc(&b, ' ');
		hp_buf_putn(&b, s, n);
	}
	return hp_buf_detach(&b, NULL);
}

/* First line after from that is blank or ends the paragraph otherwise. */
static size_t paragraph_end(const char *text, const struct lines *ls, size_t from)
{
	size_t i;

	for (i = from + 1; i < ls->n; i++) {
		const struct line *l = &ls->v[i];

		if (l->code || is_blank(text + l->off, l->len) || heading_level(text, l) ||
		    marker_line(text, l))
			break;
	}
	return i;
}

static int starts(const char *text, const struct line *l, const char *prefix)
{
	size_t n = strlen(prefix);

	return !l->code && l->len >= n && !strncmp(text + l->off, prefix, n);
}

/* The innermost section holding offset off, or HP_REFDOC_NONE. */
static size_t section_at(const struct hp_refdoc *d, size_t off)
{
	size_t i, found = HP_REFDOC_NONE;

	for (i = 0; i < d->nsec && d->sec[i].start <= off; i++)
		if (off < d->sec[i].end)
			found = i;
	return found;
}

static int parse_sections(struct hp_refdoc *d, const struct lines *ls, struct hp_error *e)
{
	size_t i, j, alloc = 0;

	for (i = 0; i < ls->n; i++) {
		const struct line *l = &ls->v[i];
		const char *s = d->text + l->off;
		int level = heading_level(d->text, l);
		size_t idlen, k;
		struct hp_refdoc_section *sec;

		if (!level)
			continue;
		s += level + 1;
		idlen = id_length(s, l->len - (size_t)level - 1);
		if (!idlen || (size_t)level + 1 + idlen + 2 > l->len || s[idlen] != ':' ||
		    s[idlen + 1] != ' ' || idlen >= sizeof(sec->id))
			continue;
		for (k = 0; k < d->nsec; k++)
			if (strlen(d->sec[k].id) == idlen && !strncmp(d->sec[k].id, s, idlen))
				return hp_error_set(e, HP_ERR_PARSE,
						    "line %zu: section '%.*s' already at line %zu", i + 1,
						    (int)idlen, s, d->sec[k].line);
		d->sec = hp_array_grow(d->sec, &alloc, d->nsec, 1, sizeof(*d->sec));
		sec = &d->sec[d->nsec++];
		memset(sec, 0, sizeof(*sec));
		memcpy(sec->id, s, idlen);
		k = l->len - (size_t)level - 1 - idlen - 2;
		while (k && isspace((unsigned char)s[idlen + 2 + k - 1]))
			k--;
		sec->title = xstrndup(s + idlen + 2, k);
		sec->level = level;
		sec->line = i + 1;
		sec->start = l->off;
		sec->body_end = d->len;
		sec->end = d->len;
		sec->parent = HP_REFDOC_NONE;
		/* The section ends at the first later heading of any kind at its level or above. */
		for (j = i + 1; j < ls->n; j++) {
			int lj = heading_level(d->text, &ls->v[j]);

			if (!lj)
				continue;
			if (sec->body_end == d->len)
				sec->body_end = ls->v[j].off;
			if (lj <= level) {
				sec->end = ls->v[j].off;
				break;
			}
		}
	}
	/* The parent is the nearest earlier section whose extent holds this one. */
	for (i = 0; i < d->nsec; i++)
		for (j = i; j-- > 0;)
			if (d->sec[j].level < d->sec[i].level && d->sec[i].start < d->sec[j].end) {
				d->sec[i].parent = j;
				break;
			}
	return 0;
}

static int parse_blocks(struct hp_refdoc *d, const struct lines *ls, struct hp_error *e)
{
	size_t i, alloc = 0;

	for (i = 0; i < ls->n; i++) {
		const struct line *l = &ls->v[i];
		struct hp_refdoc_block *b;
		struct hp_buf cmd = HP_BUF_INIT(HP_MAX_FILE);
		size_t pend, open, close, k, skip;

		if (!marker_line(d->text, l))
			continue;
		pend = paragraph_end(d->text, ls, i);
		for (open = pend; open < ls->n && !ls->v[open].code &&
				  is_blank(d->text + ls->v[open].off, ls->v[open].len); open++)
			;
		if (open == ls->n || !ls->v[open].fence)
			return hp_error_set(e, HP_ERR_PARSE,
					    "line %zu: suggested command without a fenced block", i + 1);
		for (close = open + 1; !ls->v[close].fence; close++)
			;
		d->blk = hp_array_grow(d->blk, &alloc, d->nblk, 1, sizeof(*d->blk));
		b = &d->blk[d->nblk++];
		memset(b, 0, sizeof(*b));
		b->line = i + 1;
		b->section = section_at(d, l->off);
		skip = strlen(HP_REFDOC_MARKER);
		if (skip < l->len && d->text[l->off + skip] == ':')
			skip++;
		b->intro = join_paragraph(d->text, ls, i, pend, skip);
		for (k = open + 1; k < close; k++) {
			if (k > open + 1)
				hp_buf_putc(&cmd, '\n');
			hp_buf_putn(&cmd, d->text + ls->v[k].off, ls->v[k].len);
		}
		b->command = hp_buf_detach(&cmd, NULL);
		b->orch = hp_refdoc_orchestrator(b->command);
		/* The notes follow the block, before anything else with commands. */
		for (k = close + 1; k < ls->n; k++) {
			const struct line *x = &ls->v[k];

			if (x->fence || heading_level(d->text, x) || marker_line(d->text, x))
				break;
			if (!b->blast && starts(d->text, x, BLAST_LABEL))
				b->blast = join_paragraph(d->text, ls, k, paragraph_end(d->text, ls, k),
							  strlen(BLAST_LABEL));
			else if (!b->iac && starts(d->text, x, IAC_LABEL))
				b->iac = join_paragraph(d->text, ls, k, paragraph_end(d->text, ls, k),
							strlen(IAC_LABEL));
		}
		i = close;
	}
	return 0;
}

/* Lines, then sections, then the suggested-command blocks in them. */
int hp_refdoc_parse(struct hp_refdoc *d, const char *text, struct hp_error *e)
{
	struct lines ls;
	int rc;

	memset(d, 0, sizeof(*d));
	d->text = text;
	d->len = strlen(text);
	if (split_lines(text, d->len, &ls, e))
		return -1;
	rc = parse_sections(d, &ls, e);
	if (!rc)
		rc = parse_blocks(d, &ls, e);
	hp_array_release(&ls);
	if (rc)
		hp_refdoc_release(d);
	return rc;
}

/* Frees what parsing allocated; d is left empty. */
void hp_refdoc_release(struct hp_refdoc *d)
{
	size_t i;

	for (i = 0; i < d->nsec; i++)
		free(d->sec[i].title);
	for (i = 0; i < d->nblk; i++) {
		free(d->blk[i].intro);
		free(d->blk[i].command);
		free(d->blk[i].blast);
		free(d->blk[i].iac);
	}
	free(d->sec);
	free(d->blk);
	memset(d, 0, sizeof(*d));
}

/* By form alone, ignoring ASCII case: "NC<n>[.<m>]" or "<A-Z>[.<n>[.<a>]]". */
const char *hp_refdoc_of_id(const char *id)
{
	char up[16];
	size_t n = strlen(id), i;

	if (!n || n >= sizeof(up))
		return NULL;
	for (i = 0; i < n; i++)
		up[i] = (char)toupper((unsigned char)id[i]);
	up[n] = '\0';
	if (nccl_id_length(up, n) == n)
		return HP_REFDOC_NCCL;
	/* The node form keeps its sub-case letter lower-case ("G.1.a"). */
	if (strchr(up, '.') && strchr(strchr(up, '.') + 1, '.')) {
		char *last = strrchr(up, '.') + 1;

		*last = (char)tolower((unsigned char)*last);
	}
	if (id_length(up, n) == n)
		return HP_REFDOC_DETAIL;
	return NULL;
}

/* Exact id first, so a case-insensitive match never shadows it. */
size_t hp_refdoc_find(const struct hp_refdoc *d, const char *id)
{
	size_t i;

	for (i = 0; i < d->nsec; i++)
		if (!strcmp(d->sec[i].id, id))
			return i;
	for (i = 0; i < d->nsec; i++)
		if (!strcasecmp(d->sec[i].id, id))
			return i;
	return HP_REFDOC_NONE;
}

/* The section's bytes with trailing blank lines cut, ending in its last newline. */
struct hp_str hp_refdoc_section_text(const struct hp_refdoc *d, size_t sec)
{
	struct hp_str v = { "", 0 };
	size_t end;

	if (sec >= d->nsec)
		return v;
	v.p = d->text + d->sec[sec].start;
	end = d->sec[sec].end;
	while (end > d->sec[sec].start && isspace((unsigned char)d->text[end - 1]))
		end--;
	/* Keep the newline that ends the last line with text. */
	if (end < d->len && d->text[end] == '\n')
		end++;
	v.len = end - d->sec[sec].start;
	return v;
}

/* Containment by offsets: sec starts inside root's extent. */
int hp_refdoc_within(const struct hp_refdoc *d, size_t sec, size_t root)
{
	if (sec >= d->nsec || root >= d->nsec)
		return 0;
	return d->sec[sec].start >= d->sec[root].start && d->sec[sec].start < d->sec[root].end;
}

/* Levenshtein distance with one row of the table, ignoring ASCII case. */
size_t hp_refdoc_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t *row = xcalloc(lb + 1, sizeof(*row)), r;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag;

			if (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]))
				best++;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	r = row[lb];
	free(row);
	return r;
}

/* a is a prefix of b ending at a part boundary ("G.1" of "G.1.a"), ignoring case. */
static int part_prefix(const char *a, const char *b)
{
	size_t n = strlen(a);

	return n && n < strlen(b) && !strncasecmp(a, b, n) && b[n] == '.';
}

/* s without its dots, for comparing "g1a" with "G.1.a". */
static char *undotted(const char *s)
{
	char *r = xmalloc(strlen(s) + 1), *o = r;

	for (; *s; s++)
		if (*s != '.')
			*o++ = *s;
	*o = '\0';
	return r;
}

/* Scores each section (0 best), then takes the best in document order. */
size_t hp_refdoc_closest(const struct hp_refdoc *d, const char *query, size_t *out, size_t max)
{
	enum { TITLE = 3, NONE = 4 };
	size_t *score, i, n = 0, s;
	char *q;

	if (!max || !d->nsec)
		return 0;
	q = undotted(query);
	score = xmalloc(d->nsec * sizeof(*score));
	for (i = 0; i < d->nsec; i++) {
		const char *id = d->sec[i].id;
		char *u = undotted(id);
		size_t dist = hp_refdoc_distance(query, id), flat = hp_refdoc_distance(q, u);

		free(u);
		if (flat < dist)
			dist = flat;
		score[i] = NONE;
		if (toupper((unsigned char)query[0]) == id[0] &&
		    (dist <= 2 || part_prefix(query, id) || part_prefix(id, query)))
			score[i] = dist < TITLE ? dist : TITLE - 1;
		else if (strlen(query) >= 3 && hp_strcasestr(d->sec[i].title, query))
			score[i] = TITLE;
	}
	/* Best score first; equal scores keep document order. */
	for (s = 0; s < NONE && n < max; s++)
		for (i = 0; i < d->nsec && n < max; i++)
			if (score[i] == s)
				out[n++] = i;
	free(score);
	free(q);
	return n;
}

/* Words that mark a command as Slurm's or as Kubernetes/EKS's. */
static int word_is(const char *w, size_t n, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == n && !strncmp(w, *list, n))
			return 1;
	return 0;
}

/* Looks at every word of the block, so any line can mark it. */
enum hp_orch hp_refdoc_orchestrator(const char *command)
{
	static const char *const slurm[] = { "scontrol", "sinfo", "squeue", "sbatch", "srun",
					     "scancel", "sacct", "sacctmgr", "slurmd", "slurmctld",
					     "slurmdbd", "munge", NULL };
	static const char *const eks[] = { "kubectl", "helm", "eksctl", NULL };
	const char *p = command, *prev = NULL;
	size_t prevlen = 0;
	int is_slurm = 0, is_eks = 0;

	while (*p) {
		size_t n;

		while (*p && (isspace((unsigned char)*p) || strchr("|;&()'\"", *p)))
			p++;
		n = 0;
		while (p[n] && !isspace((unsigned char)p[n]) && !strchr("|;&()'\"", p[n]))
			n++;
		if (!n)
			break;
		if (word_is(p, n, slurm))
			is_slurm = 1;
		if (word_is(p, n, eks) || (prev && prevlen == 3 && !strncmp(prev, "aws", 3) &&
					   n == 3 && !strncmp(p, "eks", 3)))
			is_eks = 1;
		prev = p;
		prevlen = n;
		p += n;
	}
	if (is_slurm && !is_eks)
		return HP_ORCH_SLURM;
	if (is_eks && !is_slurm)
		return HP_ORCH_EKS;
	return HP_ORCH_ANY;
}

enum hp_lang hp_lang_of_locale(const char *lc_all, const char *lc_messages, const char *lang)
{
	const char *v[3] = { lc_all, lc_messages, lang };
	size_t i;

	for (i = 0; i < 3; i++) {
		if (!v[i] || !*v[i])
			continue;
		if (v[i][0] == 'j' && v[i][1] == 'a' &&
		    (!v[i][2] || v[i][2] == '_' || v[i][2] == '.' || v[i][2] == '@'))
			return HP_LANG_JA;
		return HP_LANG_EN;
	}
	return HP_LANG_EN;
}

int hp_lang_parse(const char *s, enum hp_lang *out)
{
	if (s && !strcmp(s, "en"))
		*out = HP_LANG_EN;
	else if (s && !strcmp(s, "ja"))
		*out = HP_LANG_JA;
	else
		return -1;
	return 0;
}
