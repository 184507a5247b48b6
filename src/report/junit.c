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
 * the testcase's <system-out>. Strings are sanitised, then XML-escaped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/report.h"

#define MAX_FIELD ((size_t)4096)

struct tcase {
	const char *check;      /* check id, or "finding" for a finding without one */
	const char *node;       /* NULL: the check as a whole */
	const struct hp_finding *worst;
	struct hp_buf out;      /* every finding's lines */
};

struct cases {
	struct tcase *v;
	size_t n, alloc;
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

static struct tcase *case_for(struct cases *c, const char *check, const char *node, size_t from)
{
	struct tcase *t;
	size_t i;

	for (i = from; i < c->n; i++)
		if (!strcmp(c->v[i].check, check) &&
		    ((!node && !c->v[i].node) || (node && c->v[i].node && !strcmp(node, c->v[i].node))))
			return &c->v[i];
	t = hp_array_push(c);
	t->check = check;
	t->node = node;
	hp_buf_init(&t->out, (size_t)64 << 20);
	return t;
}

/* "[FAIL P1] message → pointer" and the evidence lines, into the case's output. */
static void add_finding(struct tcase *t, const struct hp_finding *f)
{
	const cJSON *e, *list = cJSON_IsArray(f->evidence) ? f->evidence : NULL;

	if (!t->worst || rank(f->tag) < rank(t->worst->tag))
		t->worst = f;
	if (t->out.len)
		hp_buf_putc(&t->out, '\n');
	hp_buf_printf(&t->out, "[%s] ", hp_report_tag_name(f->tag));
	hp_buf_puts(&t->out, f->message ? f->message : "");
	if (f->tag == HP_TAG_FAIL || f->tag == HP_TAG_WARN)
		hp_report_pointer(&t->out, f);
	cJSON_ArrayForEach(e, list) {
		if (!cJSON_IsString(e))
			continue;
		hp_buf_puts(&t->out, "\n  ");
		hp_buf_puts(&t->out, e->valuestring);
	}
}

/* The testcases of one group, per check in order of first appearance. */
static void group_cases(const struct hp_findings *f, enum hp_group g, struct cases *c)
{
	size_t i, first;

	for (i = 0; i < f->n; i++) {
		const struct hp_finding *x = &f->v[i];
		const char *check = check_of(x);
		const cJSON *id;
		size_t k;

		if (group_of(x) != g)
			continue;
		/* Cases of one check sit together: search from its first one. */
		for (first = 0; first < c->n && strcmp(c->v[first].check, check); first++)
			;
		if (cJSON_IsArray(x->nodes) && cJSON_GetArraySize(x->nodes)) {
			cJSON_ArrayForEach(id, x->nodes)
				if (cJSON_IsString(id))
					add_finding(case_for(c, check, id->valuestring, first), x);
		} else {
			add_finding(case_for(c, check, x->node, first), x);
		}
		/* Keep the cases of a check contiguous: move a new one next to its kin. */
		for (k = c->n - 1; k > first && k > 0 && strcmp(c->v[k - 1].check, check); k--) {
			struct tcase tmp = c->v[k];
			c->v[k] = c->v[k - 1];
			c->v[k - 1] = tmp;
		}
	}
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

static void put_case(struct hp_buf *out, const struct tcase *t)
{
	const struct hp_finding *w = t->worst;
	struct hp_buf name = HP_BUF_INIT(MAX_FIELD), msg = HP_BUF_INIT(HP_MAX_LINE);
	const char *prio = hp_report_issue_prio(w);

	hp_buf_printf(&name, "%s", t->check);
	if (t->node)
		hp_buf_printf(&name, " %.64s", t->node);
	hp_buf_puts(out, "    <testcase");
	hp_buf_printf(&msg, "hpnode.%s", t->check);
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
		xml_text_lines(out, &t->out);
		hp_buf_puts(out, "</failure>\n");
	} else if (w->tag == HP_TAG_WARN || w->tag == HP_TAG_SKIP) {
		hp_buf_puts(out, "      <skipped");
		attr(out, "message", msg.buf);
		hp_buf_puts(out, "/>\n");
	}
	hp_buf_puts(out, "      <system-out>");
	xml_text_lines(out, &t->out);
	hp_buf_puts(out, "</system-out>\n    </testcase>\n");
	hp_buf_release(&name);
	hp_buf_release(&msg);
}

void hp_report_junit(const struct hp_findings *f, const struct hp_report_opts *o, struct hp_buf *out)
{
	static const struct hp_report_opts none;
	struct hp_buf body = HP_BUF_INIT((size_t)1 << 30);
	size_t total = 0, failures = 0, skipped = 0, i;
	char when[32] = "1970-01-01T00:00:00", secs[32] = "0";
	int g;

	if (!o)
		o = &none;
	if (o->run && o->run->started_ms) {
		hp_report_iso8601(o->run->started_ms, when, sizeof(when));
		when[strcspn(when, "Z")] = '\0';   /* the schema's timestamp has no zone: UTC */
	}
	if (o->run && o->run->duration_ms >= 0)
		snprintf(secs, sizeof(secs), "%.3f", (double)o->run->duration_ms / 1000.0);
	for (g = 0; g < HP_GROUP__COUNT; g++) {
		struct cases c = { 0 };
		size_t nf = 0, ns = 0;
		const char *num, *name = hp_report_group_title(o, (enum hp_group)g, &num);
		char title[160];

		group_cases(f, (enum hp_group)g, &c);
		if (!c.n)
			continue;
		for (i = 0; i < c.n; i++) {
			nf += c.v[i].worst->tag == HP_TAG_FAIL;
			ns += c.v[i].worst->tag == HP_TAG_WARN || c.v[i].worst->tag == HP_TAG_SKIP;
		}
		snprintf(title, sizeof(title), "%s. %s", num, name);
		hp_buf_puts(&body, "  <testsuite");
		attr(&body, "name", title);
		hp_buf_printf(&body, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" "
			      "time=\"%s\" timestamp=\"%s\" id=\"%d\"", c.n, nf, ns, secs, when, g);
		attr(&body, "hostname", o->cluster ? o->cluster : "unknown");
		attr(&body, "package", "hpnode");
		hp_buf_puts(&body, ">\n");
		put_properties(&body, o);
		for (i = 0; i < c.n; i++) {
			put_case(&body, &c.v[i]);
			hp_buf_release(&c.v[i].out);
		}
		hp_buf_puts(&body, "    <system-out/>\n    <system-err/>\n  </testsuite>\n");
		total += c.n;
		failures += nf;
		skipped += ns;
		hp_array_release(&c);
	}
	hp_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
	attr(out, "name", o->title ? o->title : "hpnode triage");
	hp_buf_printf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%s\">\n",
		      total, failures, skipped, secs);
	hp_buf_putn(out, body.buf, body.len);
	hp_buf_puts(out, "</testsuites>\n");
	hp_buf_release(&body);
}
