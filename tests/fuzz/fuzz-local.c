/*
 * The local node collector of `hpnode node` (src/collect/local.c): the
 * instance metadata service's replies (IMDSv2 token, instance id,
 * instance type) and the probe's own output as this machine's run gives
 * it, into a snapshot every check reads and both reports render. Input:
 * a flags byte (bit 0: metadata disabled, bit 1: the probe cannot start,
 * the rest the probe's exit status), NUL, the three metadata replies
 * ("@NNN body" for a status other than 200), NUL-separated, then the
 * probe's stdout and stderr. Oracles: a failure to start is an error,
 * never a snapshot; the entry's key is an instance id or "local" and its
 * instance type a type name, whatever the service said; the stored output
 * is valid JSON text; the reports are clean and never show the token.
 */
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "fuzz.h"
#include "hp/collect.h"
#include "hp/json.h"
#include "hp/util.h"

static void reply(struct fake_sys *f, const char *part)
{
	long status = 200;

	if (part[0] == '@' && strlen(part) >= 5 && part[4] == ' ') {
		status = strtol(part + 1, NULL, 10);
		part += 5;
	}
	fake_reply(f, status, NULL, part);
}

static int id_ok(const char *k)
{
	size_t n = strlen(k), i;

	if (!strcmp(k, "local"))
		return 1;
	if ((n != 10 && n != 19) || strncmp(k, "i-", 2))
		return 0;
	for (i = 2; i < n; i++)
		if (!strchr("0123456789abcdef", k[i]))
			return 0;
	return 1;
}

/* Only base64 characters, with at least one upper-case letter and one digit. */
static int token_shaped(const char *t)
{
	int upper = 0, digit = 0;

	for (; *t; t++) {
		if (*t >= 'A' && *t <= 'Z')
			upper = 1;
		else if (*t >= '0' && *t <= '9')
			digit = 1;
		else if (!(*t >= 'a' && *t <= 'z') && *t != '+' && *t != '/' && *t != '=')
			return 0;
	}
	return upper && digit;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_parts ps;
	struct fake_sys f;
	struct hp_snapshot s;
	struct hp_local_opts o = { NULL, 1000 };
	struct hp_error e = HP_ERROR_INIT;
	const cJSON *probes, *entry;
	const char *secrets[2] = { NULL, NULL };
	unsigned flags;
	size_t i;
	int rc;

	if (size > (256u << 10))
		return 0;
	fz_split(data, size, 6, &ps);
	flags = ps.n && ps.len[0] ? (unsigned char)ps.p[0][0] : 0;
	memset(&f, 0, sizeof(f));
	fake_sys_init(&f);
	if (flags & 1)
		fake_setenv(&f, "AWS_EC2_METADATA_DISABLED", "true");
	fake_setenv(&f, "AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1/");
	for (i = 1; i < 4 && i < ps.n; i++)
		reply(&f, ps.p[i]);
	/*
	 * A token worth looking for: long, shaped like a real IMDS token (base64: letters,
	 * digits, + / =, with an upper-case letter and a digit, so never a word or path the
	 * report prints of its own, such as node-diagnostics-detail.md), and nowhere else
	 * in the input.
	 */
	if (ps.n > 1 && ps.len[1] >= 16 && token_shaped(ps.p[1])) {
		secrets[0] = ps.p[1];
		for (i = 2; i < ps.n && secrets[0]; i++)
			if (strstr(ps.p[i], secrets[0]))
				secrets[0] = NULL;
	}
	f.run_fail = (flags & 2) != 0;
	f.run_status = (int)(flags >> 2);
	f.run_out = ps.n > 4 ? ps.p[4] : "";
	f.run_err = ps.n > 5 ? ps.p[5] : "";
	hp_snapshot_init(&s);
	rc = hp_collect_local(&f.sys, &o, &s, &e);
	if (f.run_fail) {
		if (!rc || !e.msg[0])
			fz_fail("a probe that cannot start is no error", NULL, 0);
	} else {
		if (rc)
			fz_fail("the local collector failed", e.msg, strlen(e.msg));
		probes = hp_snapshot_get(&s, "probes");
		entry = probes ? probes->child : NULL;
		if (!entry || !entry->string || !id_ok(entry->string))
			fz_fail("the probe entry is not named by an instance id or 'local'",
				entry && entry->string ? entry->string : NULL,
				entry && entry->string ? strlen(entry->string) : 0);
		if (hp_json_str(entry, "instance_type") &&
		    strspn(hp_json_str(entry, "instance_type"), "abcdefghijklmnopqrstuvwxyz0123456789.-") !=
		    strlen(hp_json_str(entry, "instance_type")))
			fz_fail("an instance type that is no type name", hp_json_str(entry, "instance_type"),
				strlen(hp_json_str(entry, "instance_type")));
		if (!hp_json_str(entry, "stdout") || !hp_json_str(entry, "stderr"))
			fz_fail("the probe's output is not kept as text", NULL, 0);
		fz_check_report(&s, secrets[0] ? secrets : NULL);
	}
	hp_snapshot_release(&s);
	fake_sys_release(&f);
	fz_parts_release(&ps);
	return 0;
}
