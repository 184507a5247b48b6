/*
 * A node's output to `hpnode bundle` (src/collect/bundle.c) split into its
 * files, each file through the redaction (src/core/redact.c) as the
 * archive takes it, then into a tar.gz in memory. Input: the node's
 * stdout (marker part 0123456789abcdef0123456789abcdef). Oracles: every
 * file lies inside the input and within the file cap, every name is one
 * the archive can hold, every counted redaction left its marker, and the
 * archive takes every file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "hp/bundle.h"
#include "hp/redact.h"
#include "hp/tar.h"

struct ctx {
	const uint8_t *data;
	size_t size;
	struct hp_tgz *tgz;
};

static size_t markers(const char *p, size_t n)
{
	size_t k = 0;
	const char *at = p, *end = p + n;

	while (at < end && (at = memmem(at, (size_t)(end - at), "[REDACTED:", 10))) {
		k++;
		at += 10;
	}
	return k;
}

static void file(void *ud, const struct hp_bundle_file *f)
{
	struct ctx *c = ud;
	struct hp_buf out = HP_BUF_INIT(f->len * 5 + 4096);
	struct hp_redact r;
	char name[300];

	snprintf(name, sizeof(name), "nodes/i-0123456789abcdef0/%s", f->name);
	if (!hp_tar_name_ok(name))
		fz_fail("a name the archive cannot hold", name, strlen(name));
	if (f->state == HP_BF_ABSENT)
		return;
	if (f->len > 4096 || (f->len && ((const uint8_t *)f->data < c->data ||
					 (const uint8_t *)f->data + f->len > c->data + c->size)))
		fz_fail("a file outside the input or past the cap", f->data, f->len);
	hp_redact_init(&r);
	if (!hp_redact(&r, f->data, f->len, &out)) {
		if (markers(out.buf, out.len) < r.total)
			fz_fail("a counted redaction without its marker", out.buf, out.len);
		if (hp_tgz_add(c->tgz, name, out.buf, out.len))
			fz_fail("the archive refused a file", name, strlen(name));
	}
	hp_redact_release(&r);
	hp_buf_release(&out);
}

static int sink(struct hp_file_out *f, const void *p, size_t n)
{
	(void)f;
	(void)p;
	(void)n;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hp_bundle_opts o;
	struct hp_file_out out;
	struct ctx c;
	int complete;

	if (size > ((size_t)1 << 20))
		return 0;
	memset(&o, 0, sizeof(o));
	o.file_cap = 4096;
	memcpy(o.nonce, "0123456789abcdef0123456789abcdef", 33);
	memset(&out, 0, sizeof(out));
	out.write = sink;
	c.data = data;
	c.size = size;
	c.tgz = hp_tgz_open(&out, 0);
	hp_bundle_parse(&o, (const char *)data, size, file, &c, &complete);
	if (hp_tgz_close(c.tgz))
		fz_fail("the archive did not close", NULL, 0);
	return 0;
}
