/*
 * AWS JSON (and EC2/STS XML) replies through the collectors: the
 * identity, cluster, node, event, instance-type and log collectors, then
 * the network collector (EC2, EKS, Service Quotas), answered in order by
 * the input's parts; then every check and both reports. Input: an options
 * part ("node" adds --node, "net" runs the network collector), then one
 * reply body per part ("@NNN body" for a status other than 200). Bodies
 * are cut at 64 KiB. Oracles: the reports and any fatal error are clean
 * and never show the secret key or session token; the snapshot as saved
 * holds neither.
 */
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "fuzz.h"
#include "hp/collect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const all_secrets[] = { FZ_SECRET, FZ_TOKEN, NULL };
	const char *const *secrets = all_secrets;
	struct fz_parts ps;
	struct fake_sys f;
	struct hp_aws a;
	struct hp_snapshot s;
	struct hp_error e = HP_ERROR_INIT;
	struct hp_collect_opts o;
	const char *opts;
	char *saved;

	if (size > (2u << 20))
		return 0;
	fz_split(data, size, 32, &ps);
	/*
	 * A reply may carry the secret only if the fuzzer put it there (it can
	 * learn it from the oracle's own comparisons): then it is not a leak.
	 */
	if (memmem(data, size, FZ_SECRET, strlen(FZ_SECRET)) ||
	    memmem(data, size, FZ_TOKEN, strlen(FZ_TOKEN)))
		secrets = NULL;
	opts = ps.p[0];
	memset(&f, 0, sizeof(f));
	fz_aws(&f, &a, &ps, 1, 64u << 10);
	memset(&o, 0, sizeof(o));
	o.cluster = "ml-cluster";
	o.node = strstr(opts, "node") ? "i-0123456789abcdef0" : NULL;
	hp_snapshot_init(&s);
	hp_collect_meta(&a, &s, o.cluster, o.node);
	if (hp_collect_cluster(&a, &o, &s, &e)) {
		fz_check_error(e.msg, secrets);
	} else {
		if (strstr(opts, "net")) {
			struct hp_network_opts no;

			memset(&no, 0, sizeof(no));
			hp_collect_network(&a, &no, &s);
		}
		fz_check_report(&s, secrets);
	}
	saved = cJSON_PrintUnformatted(s.root);
	if (saved && secrets) {
		fz_assert_absent("snapshot", saved, strlen(saved), FZ_SECRET);
		fz_assert_absent("snapshot", saved, strlen(saved), FZ_TOKEN);
	}
	free(saved);
	hp_snapshot_release(&s);
	fake_sys_release(&f);
	fz_parts_release(&ps);
	return 0;
}
