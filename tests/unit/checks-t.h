/*
 * Helpers for the check tests: build a snapshot from JSON text (single
 * quotes stand for double quotes, to keep literals readable) or from a file
 * under tests/data/snapshots, run checks, and look findings up.
 */
#ifndef HP_CHECKS_T_H
#define HP_CHECKS_T_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/check.h"
#include "hp/facts.h"
#include "hp/snapshot.h"
#include "t.h"

struct ck {
	struct hp_snapshot snap;
	struct hp_findings f;
};

/* A read_file that really reads, for loading the data files. */
static inline int ck_read_file(struct hp_sys *sys, const char *path, struct hp_buf *out)
{
	char chunk[65536];
	FILE *fp = fopen(path, "rb");
	size_t n;
	int rc = 0;

	(void)sys;
	if (!fp)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0) {
		if (hp_buf_add(out, chunk, n)) {
			errno = EFBIG;
			rc = -1;
			break;
		}
	}
	if (ferror(fp)) {
		errno = EIO;
		rc = -1;
	}
	fclose(fp);
	return rc;
}

/* open_read that really reads (stdio), for loading the data files. */
static inline long ck_in_read(struct hp_file_in *f, void *p, size_t n)
{
	size_t got = fread(p, 1, n, (FILE *)f->impl);

	return got ? (long)got : ferror((FILE *)f->impl) ? -1 : 0;
}

static inline void ck_in_close(struct hp_file_in *f)
{
	fclose((FILE *)f->impl);
	free(f);
}

static inline struct hp_file_in *ck_open_read(struct hp_sys *sys, const char *path, uint64_t max)
{
	FILE *fp = fopen(path, "rb");
	struct hp_file_in *f;

	(void)sys;
	(void)max;
	if (!fp)
		return NULL;
	f = xcalloc(1, sizeof(*f));
	f->read = ck_in_read;
	f->close = ck_in_close;
	f->impl = fp;
	return f;
}

static inline struct hp_sys ck_disk_sys(void)
{
	struct hp_sys sys;

	memset(&sys, 0, sizeof(sys));
	sys.read_file = ck_read_file;
	sys.open_read = ck_open_read;
	return sys;
}

/* Snapshot from JSON text where ' means ". */
static inline void ck_load(struct ck *c, const char *json)
{
	char *text = strdup(json), *p;

	T_ASSERT(text);
	for (p = text; *p; p++)
		if (*p == '\'')
			*p = '"';
	memset(c, 0, sizeof(*c));
	c->snap.root = cJSON_Parse(text);
	if (!c->snap.root)
		T_FAILF("test snapshot is not JSON near: %.80s", cJSON_GetErrorPtr());
	free(text);
	/* As the command frame does between collecting and the checks. */
	hp_facts_prepare(&c->snap);
}

/* Snapshot from tests/data/snapshots/<name> (tests run from the repository root). */
static inline void ck_load_file(struct ck *c, const char *name)
{
	struct hp_error e = HP_ERROR_INIT;
	struct hp_sys sys = ck_disk_sys();
	char path[512];

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "tests/data/snapshots/%s", name);
	if (hp_snapshot_load(&c->snap, &sys, path, &e))
		T_FAILF("cannot load %s: %s", path, e.msg);
	hp_facts_prepare(&c->snap);
}

static inline void ck_free(struct ck *c)
{
	hp_findings_release(&c->f);
	hp_snapshot_release(&c->snap);
}

/*
 * Run one check by id (fresh findings). Tests edit c->snap.root by hand
 * between runs, so what the facts cache decoded earlier is dropped first.
 */
static inline void ck_run(struct ck *c, const char *id)
{
	const struct hp_check *chk = hp_check_find(id);

	if (!chk)
		T_FAILF("no check '%s'", id);
	hp_facts_prepare(&c->snap);
	hp_findings_release(&c->f);
	hp_check_run(chk, &c->snap, &c->f);
}

static inline void ck_run_all(struct ck *c)
{
	hp_facts_prepare(&c->snap);
	hp_findings_release(&c->f);
	hp_checks_run(&c->snap, &c->f);
}

static inline const char *ck_tag_name(enum hp_tag t)
{
	static const char *const names[] = { "PASS", "FAIL", "WARN", "INFO", "SKIP" };

	return (size_t)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

/* Findings joined by " | " for failure messages; problems_only keeps FAIL and WARN. */
static inline const char *ck_dump_some(const struct ck *c, int problems_only)
{
	static char out[900];
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < c->f.n && len < sizeof(out) - 1; i++) {
		int w;

		if (problems_only && c->f.v[i].tag != HP_TAG_FAIL && c->f.v[i].tag != HP_TAG_WARN)
			continue;
		w = snprintf(out + len, sizeof(out) - len, "[%s %s] %s | ",
			     ck_tag_name(c->f.v[i].tag), c->f.v[i].check ? c->f.v[i].check->id : "",
			     c->f.v[i].message);
		if (w < 0)
			break;
		len += (size_t)w;
	}
	return out;
}

static inline const char *ck_dump(const struct ck *c)
{
	return ck_dump_some(c, 0);
}

static inline size_t ck_count_msg(const struct ck *c, enum hp_tag tag, const char *sub)
{
	size_t i, n = 0;

	for (i = 0; i < c->f.n; i++)
		if (c->f.v[i].tag == tag && (!sub || strstr(c->f.v[i].message, sub)))
			n++;
	return n;
}

static inline size_t ck_count(const struct ck *c, enum hp_tag tag)
{
	return ck_count_msg(c, tag, NULL);
}

/* The one finding with this tag whose message holds sub; fails unless exactly one. */
static inline const struct hp_finding *ck_one(const struct ck *c, enum hp_tag tag, const char *sub)
{
	const struct hp_finding *hit = NULL;
	size_t i, n = 0;

	for (i = 0; i < c->f.n; i++) {
		if (c->f.v[i].tag == tag && strstr(c->f.v[i].message, sub)) {
			hit = &c->f.v[i];
			n++;
		}
	}
	if (n != 1)
		T_FAILF("%zu [%s] findings contain \"%s\", expected 1: %s", n, ck_tag_name(tag), sub,
			ck_dump(c));
	return hit;
}

/* Evidence line i of a finding (its own lines, then the id lines), in a static buffer; "" past the end. */
static inline const char *ck_line(const struct hp_finding *f, size_t i)
{
	static char line[HP_MAX_LINE];
	size_t own = (size_t)cJSON_GetArraySize(f->evidence);

	line[0] = '\0';
	if (i < own) {
		const cJSON *e = cJSON_GetArrayItem(f->evidence, (int)i);

		hp_strlcpy(line, cJSON_IsString(e) ? e->valuestring : "", sizeof(line));
	} else if (i - own < hp_finding_id_lines(f)) {
		struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);

		hp_finding_id_line(f, i - own, &b);
		hp_strlcpy(line, b.buf, sizeof(line));
		hp_buf_release(&b);
	}
	return line;
}

static inline int ck_evidence_len(const struct hp_finding *f)
{
	return (int)hp_finding_lines(f);
}

static inline int ck_evidence_has(const struct hp_finding *f, const char *sub)
{
	size_t i, n = hp_finding_lines(f);

	for (i = 0; i < n; i++)
		if (strstr(ck_line(f, i), sub))
			return 1;
	return 0;
}

#define CK_NO_PROBLEMS(c)                                                          \
	do {                                                                       \
		if (ck_count((c), HP_TAG_FAIL) || ck_count((c), HP_TAG_WARN))      \
			T_FAILF("%s:%d: unexpected FAIL/WARN: %s", __FILE__, __LINE__, \
				ck_dump_some((c), 1));                             \
	} while (0)

#endif
