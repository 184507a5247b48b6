/*
 * The JUnit XML report (`--junit-file`), for CI systems that render test
 * results. Shape (Jenkins' junit-10.xsd, tests/data/junit/junit-10.xsd):
 *
 *   <testsuites name="hpnode triage" tests failures errors time>
 *     <testsuite name="2. Cluster Events (Root Cause Signals)" tests failures
 *                errors skipped time timestamp id hostname package>
 *       <properties><property name="hpnode.version" value="…"/> …</properties>
 *       <testcase classname="hpnode.events.signals" name="events.signals">
 *         <system-out>[INFO] Read 6 cluster events …</system-out>
 *       </testcase>
 *       <testcase classname="hpnode.events.signals" name="events.signals/i-0abc…#A">
 *         <failure message="[P0] … → references/….md § A (…)" type="FAIL P0">…</failure>
 *       </testcase>
 *       <system-out/><system-err/>
 *     </testsuite>
 *   </testsuites>
 *
 * One testsuite per report group that has findings; one testcase per
 * finding key (hp_finding_key, the JSON report's "keys"), named by it: a
 * finding about many nodes has one per node, and no two findings share a
 * testcase. Where two findings of one run have the same key (a PASS or
 * INFO beside a FAIL or WARN of one check and subject, two findings of one
 * check about the same node), the first FAIL or WARN keeps the key and the
 * other testcase is named "<key>~2" (~3, …: the first number free).
 *
 * A testcase fails (<failure>, type "FAIL P1" or "WARN P1") exactly when
 * the exit gate counts its finding (struct hp_gate: --fail-on, else P1), so
 * the failures are what makes --fail-on exit 3; a SKIP (a check that could
 * not run) is <skipped>; every other finding passes. A failure's text is
 * its finding's lines; a passing or skipped case has them in its
 * <system-out>. A node's testcase of a finding about many nodes leaves out
 * the lines that list the finding's ids ("nodes 1-100 of 250: …"): the
 * testcases themselves are that list.
 *
 * Times: the root's is the whole run's; a testsuite's is what its checks
 * took to judge the collected data (hp_checks_run_timed), and it has none
 * when that was not measured; testcases have none (a check judges all its
 * subjects at once). Every string goes through hp_xml_escape.
 *
 * The document is written as it is made: the cases of one check of one
 * group at a time (counted in a first pass for the totals the headers
 * carry), handed to the report's sink as they are done.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/pool.h"
#include "hp/report.h"

#define MAX_FIELD ((size_t)4096)

/* One testcase: finding fi as a whole (k == SIZE_MAX) or its node k. */
struct tcase {
	size_t finding, k;
	char *name;             /* its key, made unique within the check */
	size_t next;            /* the next case in its name's hash bucket (index + 1) */
};

/* The cases of one check within a group, in the order they first came. */
struct block {
	const char *check;
	HP_ARRAY(size_t) findings;    /* indexes into the list, in order */
};

struct cases {
	HP_ARRAY(struct tcase) v;
	size_t *buckets;        /* index + 1 of each bucket's first named case */
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

/* Whether code point c may stand in XML 1.0 text: the Char production, less noncharacters. */
static int xml_char_ok(unsigned long c)
{
	if (c < 0x20)
		return c == 0x09 || c == 0x0a || c == 0x0d;
	if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	/* U+FFFE, U+FFFF (outside Char), U+FDD0..U+FDEF and every plane's last two. */
	if ((c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe)
		return 0;
	return c != 0x7f && !(c >= 0x80 && c <= 0x9f);
}

void hp_xml_escape(struct hp_buf *out, const char *s)
{
	struct hp_buf clean = HP_BUF_INIT(MAX_FIELD + 8);
	const unsigned char *p;

	hp_text_add(HP_TEXT_REPORT, s ? s : "", &clean, MAX_FIELD);
	for (p = (const unsigned char *)clean.buf; *p;) {
		unsigned long c = *p;
		int n = 1, i;

		if (*p >= 0xf0)
			n = 4, c = *p & 0x07;
		else if (*p >= 0xe0)
			n = 3, c = *p & 0x0f;
		else if (*p >= 0xc0)
			n = 2, c = *p & 0x1f;
		for (i = 1; i < n; i++) {
			/* HP_TEXT_REPORT leaves valid UTF-8; a cut sequence is replaced all the same. */
			if ((p[i] & 0xc0) != 0x80) {
				n = i;
				c = 0xfffe;
				break;
			}
			c = (c << 6) | (p[i] & 0x3f);
		}
		if (n == 1 && *p >= 0x80)
			c = 0xfffe;
		if (!xml_char_ok(c)) {
			hp_buf_puts(out, "\xef\xbf\xbd"); /* U+FFFD, never dropped */
			p += n;
			continue;
		}
		switch (c) {
		case '&': hp_buf_puts(out, "&amp;"); break;
		case '<': hp_buf_puts(out, "&lt;"); break;
		case '>': hp_buf_puts(out, "&gt;"); break;
		case '"': hp_buf_puts(out, "&quot;"); break;
		case '\'': hp_buf_puts(out, "&apos;"); break;
		default: hp_buf_putn(out, p, (size_t)n);
		}
		p += n;
	}
	hp_buf_release(&clean);
}

/* Every XML text and attribute value goes through hp_xml_escape. */
static void xml_text(struct hp_buf *out, const char *s)
{
	hp_xml_escape(out, s);
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

/* FNV-1a of a case's name. */
static size_t name_hash(const char *name)
{
	return (size_t)hp_hash_bytes(name, strlen(name));
}

static void cases_reset(struct cases *c, size_t expect)
{
	size_t n;

	for (n = 0; n < c->v.n; n++)
		free(c->v.v[n].name);
	n = 64;
	while (n < 2 * expect)
		n *= 2;
	c->v.n = 0;
	if (n > c->nbuckets) {
		free(c->buckets);
		c->buckets = xmalloc(n * sizeof(*c->buckets));
		c->nbuckets = n;
	}
	memset(c->buckets, 0, c->nbuckets * sizeof(*c->buckets));
}

static void cases_release(struct cases *c)
{
	size_t i;

	for (i = 0; i < c->v.n; i++)
		free(c->v.v[i].name);
	hp_array_release(&c->v);
	free(c->buckets);
	memset(c, 0, sizeof(*c));
}

/* The key of case t (its finding's, or its node's) into out. */
static void case_key(const struct hp_findings *f, const struct tcase *t, struct hp_buf *out)
{
	const struct hp_finding *x = &f->v[t->finding];

	if (t->k != SIZE_MAX)
		hp_finding_node_key(x, t->k, out);
	else
		hp_finding_key(x, out);
}

/* Whether a case of this check is named name already. */
static int name_taken(const struct cases *c, const char *name)
{
	size_t at;

	for (at = c->buckets[name_hash(name) & (c->nbuckets - 1)]; at; at = c->v.v[at - 1].next)
		if (!strcmp(c->v.v[at - 1].name, name))
			return 1;
	return 0;
}

static void name_case(struct cases *c, size_t i, const char *name)
{
	size_t b = name_hash(name) & (c->nbuckets - 1);

	c->v.v[i].name = xstrdup(name);
	c->v.v[i].next = c->buckets[b];
	c->buckets[b] = i + 1;
}

/*
 * The cases of one check of a group, in report order, each named by its
 * key; the FAIL and WARN findings' cases take their keys first, and a key
 * taken already gets the first "~n" free after the key without its own ~n.
 */
static void block_cases(const struct hp_findings *f, const struct block *bl, struct cases *c,
			int named)
{
	struct hp_buf key = HP_BUF_INIT(HP_MAX_LINE), alt = HP_BUF_INIT(HP_MAX_LINE);
	size_t i, k, expect = 0;
	int pass;

	for (i = 0; i < bl->findings.n; i++)
		expect += f->v[bl->findings.v[i]].nnodes + 1;
	cases_reset(c, expect);
	for (i = 0; i < bl->findings.n; i++) {
		size_t fi = bl->findings.v[i];
		const struct hp_finding *x = &f->v[fi];
		size_t n = hp_finding_per_node(x) ? x->nnodes : 1;

		for (k = 0; k < n; k++) {
			struct tcase *t = hp_array_push(&c->v);

			memset(t, 0, sizeof(*t));
			t->finding = fi;
			t->k = hp_finding_per_node(x) ? k : SIZE_MAX;
		}
	}
	/* Passes: the problems' own keys, the others' own keys, then the keys taken twice. */
	for (pass = 0; named && pass < 3; pass++) {
		for (i = 0; i < c->v.n; i++) {
			struct tcase *t = &c->v.v[i];
			unsigned n;

			if (t->name || (pass < 2 && hp_finding_is_problem(&f->v[t->finding]) != !pass))
				continue;
			case_key(f, t, &key);
			if (pass < 2) {
				if (!name_taken(c, key.buf))
					name_case(c, i, key.buf);
				continue;
			}
			key.buf[strcspn(key.buf, "~")] = '\0';
			for (n = 2;; n++) {
				hp_buf_reset(&alt);
				hp_buf_printf(&alt, "%s~%u", key.buf, n);
				if (!name_taken(c, alt.buf))
					break;
			}
			name_case(c, i, alt.buf);
		}
	}
	hp_buf_release(&key);
	hp_buf_release(&alt);
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

static void count_group(const struct hp_findings *f, enum hp_group g,
			const struct hp_report_opts *o, struct cases *c, struct counts *n)
{
	struct block *bl;
	size_t nb = group_blocks(f, g, &bl), i, k;

	memset(n, 0, sizeof(*n));
	for (i = 0; i < nb; i++) {
		block_cases(f, &bl[i], c, 0);
		for (k = 0; k < c->v.n; k++) {
			const struct hp_finding *x = &f->v[c->v.v[k].finding];
			int fails = hp_report_gate_counts(o->gate, x);

			n->failures += fails;
			n->skipped += !fails && x->tag == HP_TAG_SKIP;
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
		if (r->interrupted && r->interrupted_phase && strcmp(r->interrupted_phase, "probes")) {
			struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);
			size_t i;

			hp_buf_puts(&line, "during ");
			hp_buf_puts(&line, hp_report_phase_name(r->interrupted_phase));
			hp_buf_puts(&line, "; not finished:");
			for (i = 0; i < r->nunfinished; i++) {
				hp_buf_puts(&line, i ? ", " : " ");
				hp_buf_puts(&line, hp_report_phase_name(r->unfinished[i]));
			}
			PROP("interrupted", line.buf);
			hp_buf_release(&line);
		} else if (r->interrupted) {
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
 * "[FAIL] message → pointer" and the evidence lines of the case's finding;
 * a node's case of a finding about many nodes leaves out the id lines.
 */
static void case_text(const struct hp_findings *f, const struct tcase *t, struct hp_buf *text)
{
	const struct hp_finding *x = &f->v[t->finding];
	const cJSON *e, *list = cJSON_IsArray(x->evidence) ? x->evidence : NULL;
	struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);
	size_t k, ids = t->k != SIZE_MAX ? 0 : hp_finding_id_lines(x);

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
	hp_buf_release(&line);
}

static void put_case(struct hp_buf *out, const struct hp_findings *f, const struct tcase *t,
		     const char *check, const struct hp_report_opts *o)
{
	const struct hp_finding *x = &f->v[t->finding];
	struct hp_buf msg = HP_BUF_INIT(HP_MAX_LINE);
	struct hp_buf text = HP_BUF_INIT((size_t)1 << 30);
	const char *prio = hp_report_issue_prio(x);

	case_text(f, t, &text);
	hp_buf_puts(out, "    <testcase");
	hp_buf_printf(&msg, "hpnode.%s", check);
	attr(out, "classname", msg.buf);
	attr(out, "name", t->name);
	hp_buf_puts(out, ">\n");
	hp_buf_reset(&msg);
	if (hp_report_gate_counts(o->gate, x)) {
		hp_buf_printf(&msg, "[%s] ", prio);
		hp_buf_puts(&msg, x->message ? x->message : "");
		hp_report_pointer(&msg, x);
		hp_buf_puts(out, "      <failure");
		attr(out, "message", msg.buf);
		hp_buf_printf(out, " type=\"%s %s\">", hp_report_tag_name(x->tag), prio);
		xml_text_lines(out, &text);
		hp_buf_puts(out, "</failure>\n");
	} else {
		if (x->tag == HP_TAG_SKIP) {
			hp_buf_puts(out, "      <skipped");
			attr(out, "message", x->message ? x->message : "");
			hp_buf_puts(out, "/>\n");
		}
		hp_buf_puts(out, "      <system-out>");
		xml_text_lines(out, &text);
		hp_buf_puts(out, "</system-out>\n");
	}
	hp_buf_puts(out, "    </testcase>\n");
	hp_buf_release(&msg);
	hp_buf_release(&text);
}

void hp_report_junit(const struct hp_findings *f, const struct hp_report_opts *o, struct hp_buf *out)
{
	static const struct hp_report_opts none;
	struct counts n[HP_GROUP__COUNT], total = { 0, 0, 0 };
	struct cases c;
	char when[32] = "";
	int g;

	if (!o)
		o = &none;
	memset(&c, 0, sizeof(c));
	if (o->run && o->run->started_ms) {
		hp_report_iso8601(o->run->started_ms, when, sizeof(when));
		when[strcspn(when, "Z")] = '\0';   /* the schema's timestamp has no zone: UTC */
	}
	/* The totals the headers carry, before any case is written. */
	for (g = 0; g < HP_GROUP__COUNT; g++) {
		count_group(f, (enum hp_group)g, o, &c, &n[g]);
		total.cases += n[g].cases;
		total.failures += n[g].failures;
		total.skipped += n[g].skipped;
	}
	hp_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites");
	attr(out, "name", o->title ? o->title : "hpnode triage");
	/* junit-10.xsd: the root has no skipped count (its suites have). */
	hp_buf_printf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\"", total.cases,
		      total.failures);
	if (o->run && o->run->duration_ms >= 0)
		hp_buf_printf(out, " time=\"%.3f\"", (double)o->run->duration_ms / 1000.0);
	hp_buf_puts(out, ">\n");
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
		hp_buf_printf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\"",
			      n[g].cases, n[g].failures, n[g].skipped);
		if (o->group_s)
			hp_buf_printf(out, " time=\"%.6f\"", o->group_s[g] > 0 ? o->group_s[g] : 0.0);
		if (*when)
			hp_buf_printf(out, " timestamp=\"%s\"", when);
		hp_buf_printf(out, " id=\"%d\"", g);
		attr(out, "hostname", o->cluster ? o->cluster : "unknown");
		attr(out, "package", "hpnode");
		hp_buf_puts(out, ">\n");
		put_properties(out, o);
		nb = group_blocks(f, (enum hp_group)g, &bl);
		for (i = 0; i < nb; i++) {
			block_cases(f, &bl[i], &c, 1);
			for (k = 0; k < c.v.n; k++) {
				put_case(out, f, &c.v.v[k], bl[i].check, o);
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
