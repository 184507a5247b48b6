/*
 * The JUnit XML report (`--junit-file`), for CI systems that render test
 * results. Shape (the common JUnit schema):
 *
 *   <testsuites name="hpnode triage" tests failures errors skipped time>
 *     <testsuite name="2. Cluster Events (Root Cause Signals)" tests failures
 *                errors skipped time timestamp hostname>
 *       <properties><property name="hpnode.version" value="…"/> …</properties>
 *       <testcase classname="hpnode.events.signals" name="events.signals" time="0">
 *         <failure message="[P0] … → references/….md § A (…)" type="FAIL P0">…</failure>
 *       </testcase>
 *       <testcase classname="hpnode.node.disk-root" name="node.disk-root i-0abc…" time="0"/>
 *       <system-out/><system-err/>
 *     </testsuite>
 *   </testsuites>
 *
 * One testsuite per report group that has findings; one testcase per check,
 * and for findings about nodes one per (check, node) with the instance id
 * in the name. A testcase's outcome is its worst finding: FAIL → <failure>,
 * WARN → <skipped> whose message starts "WARN" (advisory: it shows in the
 * CI view without failing the build; --fail-on decides the exit status),
 * SKIP → <skipped>, PASS and INFO → no child. Every finding's lines go to
 * the testcase's <system-out>, except, in a node's testcase of a finding
 * about many nodes, the lines that list the finding's ids ("nodes 1-100 of
 * 250: …"): the testcases themselves are that list, and repeating it in
 * each of them made the report grow with the square of the nodes. Strings
 * are sanitised, then XML-escaped.
 *
 * The document is written as it is made: the cases of one check of one
 * group at a time (counted in a first pass for the totals the headers
 * carry), handed to the report's sink as they are done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/pool.h"
#include "hp/report.h"

#define MAX_FIELD ((size_t)4096)

/* One testcase: a check as a whole (node NULL), or a check on one node. */
struct tcase {
	const char *node;
	size_t worst;           /* index of its worst finding in the list */
	size_t first, last;     /* its findings: a chain through struct link, by index + 1 */
	size_t next;            /* the next case in its hash bucket (index + 1) */
};

/* One finding of a case (a finding about many nodes is in each of theirs). */
struct link {
	size_t finding;
	size_t next;            /* index + 1 of the case's next link */
};

/* The cases of one check within a group, in the order they first came. */
struct block {
	const char *check;
	HP_ARRAY(size_t) findings;    /* indexes into the list, in order */
};

struct cases {
	HP_ARRAY(struct tcase) v;
	HP_ARRAY(struct link) links;
	size_t *buckets;        /* index + 1 of each bucket's first case */
	size_t nbuckets;
};

static enum hp_group group_of(const struct hp_finding *f)
{
	if (f->check && (unsigned)f->check->group < HP_GROUP__COUNT)
		return f->check->group;
	return HP_GROUP_IDENTITY;
}

static const char *check_of(const struct hp_finding *f)
{
	return f->check && f->check->id ? f->check->id : "finding";
}

/* FAIL first, then WARN, SKIP, INFO, PASS. */
static int rank(enum hp_tag t)
{
	switch (t) {
	case HP_TAG_FAIL: return 0;
	case HP_TAG_WARN: return 1;
	case HP_TAG_SKIP: return 2;
	case HP_TAG_INFO: return 3;
	default: return 4;
	}
}

/* Text with the five XML specials escaped; s is sanitised first (valid UTF-8, no controls). */
static void xml_text(struct hp_buf *out, const char *s)
{
	struct hp_buf clean = HP_BUF_INIT(MAX_FIELD + 8);
	const char *p;

	hp_sanitize(s ? s : "", &clean, MAX_FIELD);
	for (p = clean.buf; *p; p++) {
		switch (*p) {
		case '&': hp_buf_puts(out, "&amp;"); break;
		case '<': hp_buf_puts(out, "&lt;"); break;
		case '>': hp_buf_puts(out, "&gt;"); break;
		case '"': hp_buf_puts(out, "&quot;"); break;
		case '\'': hp_buf_puts(out, "&apos;"); break;
		default: hp_buf_putc(out, *p);
		}
	}
	hp_buf_release(&clean);
}

/* Multi-line text: each line escaped on its own, line breaks kept. */
static void xml_text_lines(struct hp_buf *out, const struct hp_buf *text)
{
	const char *p = text->buf;

	while (*p) {
		size_t n = strcspn(p, "\n");
		char *line = xstrndup(p, n);

		xml_text(out, line);
		free(line);
		p += n;
		if (*p == '\n') {
			hp_buf_putc(out, '\n');
			p++;
		}
	}
}

static void attr(struct hp_buf *out, const char *name, const char *value)
{
	hp_buf_printf(out, " %s=\"", name);
	xml_text(out, value);
	hp_buf_putc(out, '"');
}

/* FNV-1a of a node id; 0 stands for the check as a whole. */
static size_t node_hash(const char *node)
{
	return node ? (size_t)hp_hash_bytes(node, strlen(node)) : 0;
}

static void cases_reset(struct cases *c, size_t expect)
{
	size_t n = 64;

	while (n < 2 * expect)
		n *= 2;
	c->v.n = 0;
	c->links.n = 0;
	if (n > c->nbuckets) {
		free(c->buckets);
		c->buckets = xmalloc(n * sizeof(*c->buckets));
		c->nbuckets = n;
	}
	memset(c->buckets, 0, c->nbuckets * sizeof(*c->buckets));
}

static void cases_release(struct cases *c)
{
	hp_array_release(&c->v);
	hp_array_release(&c->links);
	free(c->buckets);
	memset(c, 0, sizeof(*c));
}

/* Add finding fi (of f) to the case of node (NULL: the check as a whole). */
static void case_add(struct cases *c, const struct hp_findings *f, size_t fi, const char *node)
{
	size_t b = node_hash(node) & (c->nbuckets - 1), at;
	struct tcase *t = NULL;
	struct link *l;

	for (at = c->buckets[b]; at; at = c->v.v[at - 1].next) {
		struct tcase *x = &c->v.v[at - 1];

		if ((!node && !x->node) || (node && x->node && !strcmp(node, x->node))) {
			t = x;
			break;
		}
	}
	if (!t) {
		t = hp_array_push(&c->v);
		t->node = node;
		t->worst = fi;
		t->next = c->buckets[b];
		c->buckets[b] = c->v.n;
	}
	l = hp_array_push(&c->links);
	l->finding = fi;
	if (t->last)
		c->links.v[t->last - 1].next = c->links.n;
	else
		t->first = c->links.n;
	t->last = c->links.n;
	if (rank(f->v[fi].tag) < rank(f->v[t->worst].tag))
		t->worst = fi;
}

/* The cases of one check of a group. */
static void block_cases(const struct hp_findings *f, const struct block *bl, struct cases *c)
{
	size_t i, k, expect = 0;

	for (i = 0; i < bl->findings.n; i++)
		expect += f->v[bl->findings.v[i]].nnodes + 1;
	cases_reset(c, expect);
	for (i = 0; i < bl->findings.n; i++) {
		size_t fi = bl->findings.v[i];
		const struct hp_finding *x = &f->v[fi];

		if (x->nnodes) {
			for (k = 0; k < x->nnodes; k++)
				case_add(c, f, fi, x->nodes[k]);
		} else {
			case_add(c, f, fi, x->node);
		}
	}
}

/* The checks of group g in the order they first came, with their findings. */
static size_t group_blocks(const struct hp_findings *f, enum hp_group g, struct block **out)
{
	struct block *v = NULL;
	size_t n = 0, alloc = 0, i, k;

	for (i = 0; i < f->n; i++) {
		const char *check;

		if (group_of(&f->v[i]) != g)
			continue;
		check = check_of(&f->v[i]);
		for (k = 0; k < n && strcmp(v[k].check, check); k++)
			;
		if (k == n) {
			v = hp_array_grow(v, &alloc, n, 1, sizeof(*v));
			memset(&v[n], 0, sizeof(v[n]));
			v[n++].check = check;
		}
		hp_array_append(&v[k].findings, i);
	}
	*out = v;
	return n;
}

static void blocks_release(struct block *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		hp_array_release(&v[i].findings);
	free(v);
}

/* Cases, failures and skips of one group. */
struct counts {
	size_t cases, failures, skipped;
};

static void count_group(const struct hp_findings *f, enum hp_group g, struct cases *c,
			struct counts *n)
{
	struct block *bl;
	size_t nb = group_blocks(f, g, &bl), i, k;

	memset(n, 0, sizeof(*n));
	for (i = 0; i < nb; i++) {
		block_cases(f, &bl[i], c);
		for (k = 0; k < c->v.n; k++) {
			enum hp_tag t = f->v[c->v.v[k].worst].tag;

			n->failures += t == HP_TAG_FAIL;
			n->skipped += t == HP_TAG_WARN || t == HP_TAG_SKIP;
		}
		n->cases += c->v.n;
	}
	blocks_release(bl, nb);
}

static void prop(struct hp_buf *out, const char *name, const char *value)
{
	if (!value)
		return;
	hp_buf_puts(out, "      <property");
	attr(out, "name", name);
	attr(out, "value", value);
	hp_buf_puts(out, "/>\n");
}

static void put_properties(struct hp_buf *out, const struct hp_report_opts *o)
{
	const struct hp_report_run *r = o->run;
	struct hp_buf cmd = HP_BUF_INIT(HP_MAX_LINE);
	char when[32];

	hp_buf_puts(out, "    <properties>\n");
#define PROP(n, v) prop(out, n, v)
	PROP("hpnode.version", r && r->version ? r->version : HP_VERSION);
	PROP("cluster", o->cluster);
	PROP("region", o->region);
	PROP("orchestrator", o->orchestrator);
	if (r) {
		PROP("revision", r->revision);
		if (r->started_ms) {
			hp_report_iso8601(r->started_ms, when, sizeof(when));
			PROP("started_at", when);
		}
		hp_report_command_line(r->argv, &cmd);
		PROP("command_line", cmd.len ? cmd.buf : NULL);
		PROP("account", r->account);
		PROP("caller_arn", r->caller_arn);
		PROP("credential_source", r->credential_source);
		PROP("cluster_arn", r->cluster_arn);
		PROP("replayed_from", r->replay_file);
		if (r->interrupted) {
			char line[96];
			snprintf(line, sizeof(line), "%zu of %zu nodes probed", r->probed, r->to_probe);
			PROP("interrupted", line);
		}
	}
#undef PROP
	hp_buf_puts(out, "    </properties>\n");
	hp_buf_release(&cmd);
}

/*
 * "[FAIL P1] message → pointer" and the evidence lines of each of the
 * case's findings, a line break between findings. A node's case of a
 * finding about many nodes leaves out the id lines.
 */
static void case_text(const struct hp_findings *f, const struct cases *c, const struct tcase *t,
		      struct hp_buf *text)
{
	struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);
	size_t at;

	for (at = t->first; at; at = c->links.v[at - 1].next) {
		const struct hp_finding *x = &f->v[c->links.v[at - 1].finding];
		const cJSON *e, *list = cJSON_IsArray(x->evidence) ? x->evidence : NULL;
		size_t k, ids = t->node && x->nnodes ? 0 : hp_finding_id_lines(x);

		if (text->len)
			hp_buf_putc(text, '\n');
		hp_buf_printf(text, "[%s] ", hp_report_tag_name(x->tag));
		hp_buf_puts(text, x->message ? x->message : "");
		if (x->tag == HP_TAG_FAIL || x->tag == HP_TAG_WARN)
			hp_report_pointer(text, x);
		cJSON_ArrayForEach(e, list) {
			if (!cJSON_IsString(e))
				continue;
			hp_buf_puts(text, "\n  ");
			hp_buf_puts(text, e->valuestring);
		}
		for (k = 0; k < ids; k++) {
			hp_finding_id_line(x, k, &line);
			hp_buf_puts(text, "\n  ");
			hp_buf_puts(text, line.buf);
		}
	}
	hp_buf_release(&line);
}

static void put_case(struct hp_buf *out, const struct hp_findings *f, const struct cases *c,
		     const struct tcase *t, const char *check)
{
	const struct hp_finding *w = &f->v[t->worst];
	struct hp_buf name = HP_BUF_INIT(MAX_FIELD), msg = HP_BUF_INIT(HP_MAX_LINE);
	struct hp_buf text = HP_BUF_INIT((size_t)1 << 30);
	const char *prio = hp_report_issue_prio(w);

	case_text(f, c, t, &text);
	hp_buf_printf(&name, "%s", check);
	if (t->node)
		hp_buf_printf(&name, " %.64s", t->node);
	hp_buf_puts(out, "    <testcase");
	hp_buf_printf(&msg, "hpnode.%s", check);
	attr(out, "classname", msg.buf);
	attr(out, "name", name.buf);
	hp_buf_puts(out, " time=\"0\">\n");
	hp_buf_reset(&msg);
	if (w->tag == HP_TAG_FAIL || w->tag == HP_TAG_WARN) {
		if (prio)
			hp_buf_printf(&msg, "[%s] ", prio);
		if (w->tag == HP_TAG_WARN)
			hp_buf_puts(&msg, "WARN: ");
		hp_buf_puts(&msg, w->message ? w->message : "");
		hp_report_pointer(&msg, w);
	} else {
		hp_buf_puts(&msg, w->message ? w->message : "");
	}
	if (w->tag == HP_TAG_FAIL) {
		hp_buf_puts(out, "      <failure");
		attr(out, "message", msg.buf);
		hp_buf_printf(out, " type=\"FAIL%s%s\">", prio ? " " : "", prio ? prio : "");
		xml_text_lines(out, &text);
		hp_buf_puts(out, "</failure>\n");
	} else if (w->tag == HP_TAG_WARN || w->tag == HP_TAG_SKIP) {
		hp_buf_puts(out, "      <skipped");
		attr(out, "message", msg.buf);
		hp_buf_puts(out, "/>\n");
	}
	hp_buf_puts(out, "      <system-out>");
	xml_text_lines(out, &text);
	hp_buf_puts(out, "</system-out>\n    </testcase>\n");
	hp_buf_release(&name);
	hp_buf_release(&msg);
	hp_buf_release(&text);
}

void hp_report_junit(const struct hp_findings *f, const struct hp_report_opts *o, struct hp_buf *out)
{
	static const struct hp_report_opts none;
	struct counts n[HP_GROUP__COUNT], total = { 0, 0, 0 };
	struct cases c;
	char when[32] = "1970-01-01T00:00:00", secs[32] = "0";
	int g;

	if (!o)
		o = &none;
	memset(&c, 0, sizeof(c));
	if (o->run && o->run->started_ms) {
		hp_report_iso8601(o->run->started_ms, when, sizeof(when));
		when[strcspn(when, "Z")] = '\0';   /* the schema's timestamp has no zone: UTC */
	}
	if (o->run && o->run->duration_ms >= 0)
		snprintf(secs, sizeof(secs), "%.3f", (double)o->run->duration_ms / 1000.0);
	/* The totals the headers carry, before any case is written. */
	for (g = 0; g < HP_GROUP__COUNT; g++) {
		count_group(f, (enum hp_group)g, &c, &n[g]);
		total.cases += n[g].cases;
		total.failures += n[g].failures;
		total.skipped += n[g].skipped;
	}
	hp_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
	attr(out, "name", o->title ? o->title : "hpnode triage");
	hp_buf_printf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%s\">\n",
		      total.cases, total.failures, total.skipped, secs);
	for (g = 0; g < HP_GROUP__COUNT; g++) {
		const char *num, *name = hp_report_group_title(o, (enum hp_group)g, &num);
		struct block *bl;
		size_t nb, i, k;
		char title[160];

		if (!n[g].cases)
			continue;
		snprintf(title, sizeof(title), "%s. %s", num, name);
		hp_buf_puts(out, "  <testsuite");
		attr(out, "name", title);
		hp_buf_printf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" "
			      "time=\"%s\" timestamp=\"%s\" id=\"%d\"", n[g].cases, n[g].failures,
			      n[g].skipped, secs, when, g);
		attr(out, "hostname", o->cluster ? o->cluster : "unknown");
		attr(out, "package", "hpnode");
		hp_buf_puts(out, ">\n");
		put_properties(out, o);
		nb = group_blocks(f, (enum hp_group)g, &bl);
		for (i = 0; i < nb; i++) {
			block_cases(f, &bl[i], &c);
			for (k = 0; k < c.v.n; k++) {
				put_case(out, f, &c, &c.v.v[k], bl[i].check);
				hp_report_drain(o, out, 0);
			}
		}
		blocks_release(bl, nb);
		hp_buf_puts(out, "    <system-out/>\n    <system-err/>\n  </testsuite>\n");
	}
	hp_buf_puts(out, "</testsuites>\n");
	hp_report_drain(o, out, 1);
	cases_release(&c);
}
