/*
 * Snapshot load (src/core/snapshot.c) through --snapshot's path: any bytes as
 * the file; a document that loads is checked and rendered like
 * `hpnode triage --snapshot`, read in pieces of a size the input decides
 * (the probe entries go one by one into the probe store). Oracles: a
 * refused file leaves a clean error message; the reports of a loaded one
 * are clean.
 */
#include <string.h>

#include "fake-sys.h"
#include "fuzz.h"
#include "hp/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fake_sys f;
	struct hp_snapshot s;
	struct hp_error e = HP_ERROR_INIT;
	struct fz_parts ps;

	if (size > (4u << 20))
		return 0;
	fz_split(data, size, 1, &ps);
	fake_sys_init(&f);
	fake_file(&f, "/snap.json", ps.p[0]);
	/* The reader's window over the file: pieces of 1 to 64 bytes, or whole. */
	f.read_chunk = size % 3 ? 1 + size % 64 : 0;
	hp_snapshot_init(&s);
	if (hp_snapshot_load(&s, &f.sys, "/snap.json", &e)) {
		fz_assert_clean("load error", e.msg, strlen(e.msg), 0);
	} else {
		fz_check_report(&s, NULL);
	}
	hp_snapshot_release(&s);
	fake_sys_release(&f);
	fz_parts_release(&ps);
	return 0;
}
