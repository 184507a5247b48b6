/*
 * NCCL probe decoders for the network side of a node: the EFA installer's
 * package list, the OFI NCCL plugin libraries, libfabric's version and its
 * TCP provider, interface MTUs, and the host firewall (iptables-save or
 * nft) with the chains of kube-proxy, the CNIs and docker told apart.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/util.h"
#include "nccl-int.h"

/* A version at s ("1.22.0amzn4.0", "1.30.0"): digits and dots, into out. */
static int dotted(const char *s, char *out, size_t n)
{
	size_t k = 0;

	while (s[k] && (isdigit((unsigned char)s[k]) || s[k] == '.') && k + 1 < n)
		k++;
	while (k && s[k - 1] == '.')
		k--;
	if (!k || !isdigit((unsigned char)s[0]))
		return 0;
	memcpy(out, s, k);
	out[k] = '\0';
	return 1;
}

void hp_nccl_decode_efa_installer(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "efa_installer");
	const char *first;
	char v[64], w[64][PB_FIELD];
	int packages = 0;
	cJSON *o;
	size_t i, j;

	if (!b)
		return;
	o = pb_obj(facts, "efa_installer");
	first = pb_first_line(b);
	if (b->rc != 0) {
		/* head: a missing file is a known absence; anything else is unknown. */
		if (first && strstr(first, "No such file"))
			pb_set_bool(o, "found", 0);
		else if (first)
			pb_set_str(o, "error", first);
		return;
	}
	pb_set_bool(o, "found", 1);
	for (i = 0; i < b->lines.n; i++) {
		const char *l = pb_skip(b->lines.v[i]);
		size_t n;

		if (pb_prefix(l, "# EFA installer version:")) {
			if (dotted(pb_skip(l + 24), v, sizeof(v)))
				pb_set_str(o, "version", v);
			continue;
		}
		if (pb_prefix(l, "# Debug packages installed:")) {
			pb_set_bool(o, "debug", !strncmp(pb_skip(l + 27), "yes", 3));
			continue;
		}
		if (*l == '#' || !*l)
			continue;
		/* The installer writes its packages on one line, separated by spaces. */
		n = pb_words(l, w, HP_ARRAY_LEN(w));
		for (j = 0; j < n; j++) {
			const char *p = w[j];

			packages++;
			if ((pb_prefix(p, "libfabric-aws-") || pb_prefix(p, "libfabric-aws_")) &&
			    !cJSON_GetObjectItemCaseSensitive(o, "libfabric") &&
			    dotted(p + 14, v, sizeof(v)))
				pb_set_str(o, "libfabric", v);
		}
	}
	pb_set_num(o, "packages", packages);
}

void hp_nccl_decode_ofi_plugin(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "ofi_plugin");
	cJSON *o;

	if (!b || (b->rc != 0 && b->rc != 3))
		return;
	o = pb_obj(facts, "ofi_plugin");
	pb_set_bool(o, "found", b->rc == 0);
	nf_paths(b->rc == 0 ? b : NULL, o);
}

void hp_nccl_decode_libfabric(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "libfabric");
	const struct pb_block *t = pb_find(f, "fi_tcp");
	char v[64];
	size_t i;

	if (b) {
		cJSON *o = pb_obj(facts, "libfabric");

		nf_rc(o, b);
		for (i = 0; b->rc == 0 && i < b->lines.n; i++) {
			const char *l = pb_skip(b->lines.v[i]);

			if (pb_prefix(l, "libfabric api:")) {
				if (dotted(pb_skip(l + 14), v, sizeof(v)))
					pb_set_str(o, "api", v);
			} else if (pb_prefix(l, "libfabric:")) {
				const char *ver = pb_skip(l + 10);

				if (dotted(ver, v, sizeof(v))) {
					pb_set_str(o, "version", v);
					pb_set_bool(o, "amazon", strstr(ver, "amzn") != NULL);
				}
			}
		}
		if (b->rc != 0 && b->rc != 127 && pb_first_line(b))
			pb_set_str(o, "error", pb_first_line(b));
	}
	if (t) {
		cJSON *o = pb_obj(facts, "fi_tcp");
		int providers = 0, nodata = 0;

		nf_rc(o, t);
		for (i = 0; i < t->lines.n; i++) {
			const char *l = pb_skip(t->lines.v[i]);

			if (pb_prefix(l, "provider:") && strstr(l, "tcp"))
				providers++;
			if (strstr(l, "No data available"))
				nodata = 1;
		}
		/* fi_info says -61 (No data available) when no provider matches. */
		if (t->rc == 0 || nodata)
			pb_set_num(o, "providers", providers);
	}
}

void hp_nccl_decode_netif(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "netif");
	char w[4][PB_FIELD];
	cJSON *list;
	size_t i;

	if (!b || b->rc != 0)
		return;
	list = pb_arr(pb_obj(facts, "netif"), "interfaces");
	for (i = 0; i < b->lines.n && cJSON_GetArraySize(list) < 256; i++) {
		cJSON *x;
		double mtu;

		if (pb_words(b->lines.v[i], w, 4) != 4)
			continue;
		x = cJSON_CreateObject();
		pb_set_str(x, "name", w[0]);
		/* "?": the MTU could not be read; absent, never a number. */
		if (pb_count(w[1], &mtu))
			pb_set_num(x, "mtu", mtu);
		if (strcmp(w[2], "?"))
			pb_set_str(x, "state", w[2]);
		pb_set_bool(x, "virtual", !strcmp(w[3], "virtual"));
		cJSON_AddItemToArray(list, x);
	}
}

/* Chains that kube-proxy, the CNIs and docker own; their DROP and REJECT rules are expected. */
static int owned_chain(const char *chain)
{
	static const char *const prefixes[] = { "KUBE-", "AWS-", "CNI-", "cali-", "CILIUM",
						"cilium", "DOCKER", "FLANNEL", "kube-" };
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(prefixes); i++)
		if (pb_prefix(chain, prefixes[i]))
			return 1;
	return 0;
}

static void add_blocking(cJSON *list, const char *table, const char *rule)
{
	char line[PB_FIELD + 64];

	if (cJSON_GetArraySize(list) >= 20)
		return;
	snprintf(line, sizeof(line), "%s: %s", table, rule);
	cJSON_AddItemToArray(list, cJSON_CreateString(line));
}

/* iptables-save: "*table", ":CHAIN POLICY [p:b]", "-A CHAIN ... -j TARGET", "COMMIT". */
static void iptables(const struct pb_block *b, cJSON *o)
{
	char table[64] = "filter", w[64][PB_FIELD];
	cJSON *pol = pb_obj(o, "policies"), *list = pb_arr(o, "blocking_rules");
	int rules = 0, blocking = 0, cni = 0, policies_blocking = 0, tables = 0;
	size_t i, j, n;

	for (i = 0; i < b->lines.n; i++) {
		const char *l = pb_skip(b->lines.v[i]);

		if (*l == '*') {
			hp_strlcpy(table, l + 1, sizeof(table));
			tables++;
			continue;
		}
		if (*l == ':') {
			n = pb_words(l + 1, w, 2);
			if (n == 2 && strcmp(w[1], "-")) {
				char key[PB_FIELD + 64];

				snprintf(key, sizeof(key), "%s/%s", table, w[0]);
				pb_set_str(pol, key, w[1]);
				if ((!strcmp(w[1], "DROP") || !strcmp(w[1], "REJECT")) &&
				    !strcmp(table, "filter") &&
				    (!strcmp(w[0], "INPUT") || !strcmp(w[0], "OUTPUT")))
					policies_blocking++;
			}
			continue;
		}
		if (!pb_prefix(l, "-A "))
			continue;
		rules++;
		n = pb_words(l, w, HP_ARRAY_LEN(w));
		for (j = 2; j + 1 < n; j++) {
			if (strcmp(w[j], "-j") && strcmp(w[j], "--jump"))
				continue;
			if (strcmp(w[j + 1], "DROP") && strcmp(w[j + 1], "REJECT"))
				break;
			if (owned_chain(w[1])) {
				cni++;
			} else {
				blocking++;
				add_blocking(list, table, l);
			}
			break;
		}
	}
	/* No table at all: an empty rule set, which the caller records. */
	if (!tables)
		return;
	pb_set_bool(o, "readable", 1);
	pb_set_num(o, "rules", rules);
	pb_set_num(o, "blocking", blocking);
	pb_set_num(o, "cni_blocking", cni);
	pb_set_num(o, "blocking_policies", policies_blocking);
}

/* nft list ruleset: "table <family> <name> {", "chain <name> {", "... policy drop;", "... drop". */
static void nft(const struct pb_block *b, cJSON *o)
{
	char table[128] = "", chain[PB_FIELD] = "", w[64][PB_FIELD];
	cJSON *pol = pb_obj(o, "policies"), *list = pb_arr(o, "blocking_rules");
	int rules = 0, blocking = 0, cni = 0, policies_blocking = 0, tables = 0;
	size_t i, n, k;

	for (i = 0; i < b->lines.n; i++) {
		const char *l = pb_skip(b->lines.v[i]);

		n = pb_words(l, w, HP_ARRAY_LEN(w));
		if (!n)
			continue;
		if (!strcmp(w[0], "table") && n >= 3) {
			snprintf(table, sizeof(table), "%.60s %.60s", w[1], w[2]);
			tables++;
			continue;
		}
		if (!strcmp(w[0], "chain") && n >= 2) {
			hp_strlcpy(chain, w[1], sizeof(chain));
			continue;
		}
		if (!strcmp(w[0], "type") && strstr(l, "policy ")) {
			const char *p = strstr(l, "policy ") + 7;
			char key[PB_FIELD + 160], v[32];
			size_t m = 0;

			while (p[m] && p[m] != ';' && m + 1 < sizeof(v)) {
				v[m] = p[m];
				m++;
			}
			v[m] = '\0';
			snprintf(key, sizeof(key), "%s/%s", table, chain);
			pb_set_str(pol, key, v);
			if (!strcmp(v, "drop") && (!strcmp(chain, "input") || !strcmp(chain, "output") ||
						   !strcmp(chain, "INPUT") || !strcmp(chain, "OUTPUT")))
				policies_blocking++;
			continue;
		}
		if (!strcmp(w[0], "}") || !strcmp(w[0], "type"))
			continue;
		rules++;
		/* The verdict: "drop", or "reject" with or without "with <type>". */
		for (k = 0; k < n; k++)
			if (!strcmp(w[k], "drop") || !strcmp(w[k], "reject"))
				break;
		if (k == n)
			continue;
		if (owned_chain(chain)) {
			cni++;
		} else {
			blocking++;
			add_blocking(list, table, l);
		}
	}
	if (!tables && !rules)
		return;
	pb_set_bool(o, "readable", 1);
	pb_set_num(o, "rules", rules);
	pb_set_num(o, "blocking", blocking);
	pb_set_num(o, "cni_blocking", cni);
	pb_set_num(o, "blocking_policies", policies_blocking);
}

void hp_nccl_decode_firewall(const struct pb_input *f, cJSON *facts)
{
	const struct pb_block *b = pb_find(f, "firewall");
	int is_nft = 0;
	cJSON *o;

	if (!b) {
		b = pb_find(f, "firewall_nft");
		is_nft = 1;
	}
	if (!b)
		return;
	o = pb_obj(facts, "firewall");
	nf_rc(o, b);
	if (b->rc == 127)
		return;
	pb_set_str(o, "tool", is_nft ? "nft" : "iptables");
	if (b->rc != 0) {
		/* Not root, or no kernel support: the rules are unknown. */
		pb_set_bool(o, "readable", 0);
		if (pb_first_line(b))
			pb_set_str(o, "error", pb_first_line(b));
		return;
	}
	if (is_nft)
		nft(b, o);
	else
		iptables(b, o);
	if (!cJSON_GetObjectItemCaseSensitive(o, "readable")) {
		/* An empty rule set prints nothing: no table, no rule, nothing blocked. */
		pb_set_bool(o, "readable", 1);
		pb_set_num(o, "rules", 0);
		pb_set_num(o, "blocking", 0);
		pb_set_num(o, "cni_blocking", 0);
		pb_set_num(o, "blocking_policies", 0);
	}
}
