/*
 * Parsers for the node identity block and the storage and memory blocks:
 * df -P -k and df -P -i rows by mount point, /proc/self/mountinfo (which
 * paths really are mount points, and how), /proc/meminfo, the huge page
 * count and the FI_* lines of /etc/environment. Thresholds live in checks.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/util.h"
#include "probe-int.h"

/* Distinct mount points kept from mountinfo. */
#define MAX_MOUNTS 4096

void pb_parse_node(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b = pb_find(in, "node");
	cJSON *node;
	size_t i;

	if (!b || !b->lines.n)
		return;
	node = pb_obj(facts, "node");
	for (i = 0; i < b->lines.n; i++) {
		const char *line = b->lines.v[i], *eq = strchr(line, '=');
		char key[PB_FIELD], val[PB_FIELD], w[2][PB_FIELD];
		double v;

		if (!eq)
			continue;
		pb_copy_trim(line, (size_t)(eq - line), key);
		pb_copy_trim(eq + 1, strlen(eq + 1), val);
		if (!strcmp(key, "epoch") || !strcmp(key, "probe")) {
			if (pb_num(val, &v))
				pb_set_num(node, key, v);
		} else if (!strcmp(key, "uptime")) {
			if (pb_words(val, w, 2) >= 1 && pb_num(w[0], &v) && v >= 0)
				pb_set_num(node, "uptime_s", v);
		} else if (!strcmp(key, "hostname") || !strcmp(key, "kernel") ||
			   !strcmp(key, "boot_id")) {
			if (*val)
				pb_set_str(node, key, val);
		}
	}
}

/*
 * One df -P row: device, four numbers or "-", then the mount point (which
 * may hold spaces). Returns 0 for headers and error lines.
 */
static int df_row(const char *line, char dev[PB_FIELD], double num[3], double *pct,
		  char mp[PB_FIELD])
{
	char w[5][PB_FIELD];
	const char *p = line;
	size_t k;

	for (k = 0; k < 5; k++) {
		size_t n = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		while (p[n] && p[n] != ' ' && p[n] != '\t')
			n++;
		if (!n)
			return 0;
		pb_copy_trim(p, n, w[k]);
		p += n;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '/')
		return 0;
	pb_copy_trim(p, strlen(p), mp);
	hp_strlcpy(dev, w[0], PB_FIELD);
	for (k = 0; k < 3; k++)
		if (!pb_count(w[k + 1], &num[k]))
			num[k] = -1;
	*pct = -1;
	if (w[4][0] && w[4][strlen(w[4]) - 1] == '%') {
		w[4][strlen(w[4]) - 1] = '\0';
		if (!pb_count(w[4], pct))
			*pct = -1;
	}
	return num[0] >= 0 || *pct >= 0;
}

static void parse_df_block(const struct pb_block *b, cJSON *facts, const char *key,
			   const char *const names[3], const char *status_key, int with_device)
{
	cJSON *out, *st;
	const char *err = NULL;
	size_t i;

	st = pb_rc_obj(facts, status_key, b);
	if (pb_not_installed(b))
		return;
	out = pb_obj(facts, key);
	for (i = 0; i < b->lines.n; i++) {
		char dev[PB_FIELD], mp[PB_FIELD];
		double num[3], pct;
		cJSON *row;
		int k;

		if (!df_row(b->lines.v[i], dev, num, &pct, mp)) {
			if (!err && *b->lines.v[i] && strncmp(b->lines.v[i], "Filesystem", 10))
				err = b->lines.v[i];
			continue;
		}
		cJSON_DeleteItemFromObjectCaseSensitive(out, mp);
		row = pb_obj(out, mp);
		if (with_device)
			pb_set_str(row, "device", dev);
		for (k = 0; k < 3; k++)
			if (num[k] >= 0)
				pb_set_num(row, names[k], num[k]);
		if (pct >= 0)
			pb_set_num(row, "use_pct", pct);
	}
	if (err) {
		char e[PB_FIELD];

		pb_copy_trim(err, strlen(err), e);
		pb_set_str(st, "error", e);
	}
}

void pb_parse_df(const struct pb_input *in, cJSON *facts)
{
	static const char *const space[3] = { "size_kb", "used_kb", "avail_kb" };
	static const char *const inodes[3] = { "total", "used", "free" };
	const struct pb_block *b;

	if ((b = pb_find(in, "df")))
		parse_df_block(b, facts, "fs", space, "df", 1);
	if ((b = pb_find(in, "df_inodes")))
		parse_df_block(b, facts, "inodes", inodes, "df_inodes", 0);
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape(const char *s, char out[PB_FIELD])
{
	size_t o = 0;

	while (*s && o < PB_FIELD - 1) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			out[o++] = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			out[o++] = *s++;
		}
	}
	out[o] = '\0';
}

/* "size=24683656k" among tmpfs options, in KiB; -1 when absent. */
static double option_size_kb(const char *opts)
{
	const char *p = strstr(opts, "size=");
	char *end;
	double v;

	while (p && p != opts && p[-1] != ',')
		p = strstr(p + 1, "size=");
	if (!p)
		return -1;
	v = strtod(p + 5, &end);
	if (end == p + 5 || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': return v;
	case 'm': case 'M': return v * 1024;
	case 'g': case 'G': return v * 1024 * 1024;
	case ',': case '\0': return v / 1024;
	default: return -1;
	}
}

static int has_option(const char *opts, const char *name)
{
	size_t n = strlen(name);
	const char *p = opts;

	while (p && *p) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return 1;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return 0;
}

void pb_parse_mountinfo(const struct pb_input *in, cJSON *facts)
{
	const struct pb_block *b = pb_find(in, "mountinfo");
	cJSON *mounts;
	size_t i, count = 0;

	if (!b || !b->lines.n)
		return;
	mounts = pb_obj(facts, "mounts");
	for (i = 0; i < b->lines.n; i++) {
		char w[16][PB_FIELD], mp[PB_FIELD], src[PB_FIELD];
		size_t n = pb_words(b->lines.v[i], w, 16), dash;
		cJSON *m;
		double kb;

		/* id parent maj:min root mountpoint options [optional...] - fstype source superoptions */
		for (dash = 6; dash < n && strcmp(w[dash], "-"); dash++)
			;
		if (n < 7 || dash + 2 >= n || w[4][0] != '/')
			continue;
		unescape(w[4], mp);
		unescape(w[dash + 2], src);
		/* A later line for the same point is a mount on top: it is the visible one. */
		if (cJSON_GetObjectItemCaseSensitive(mounts, mp))
			cJSON_DeleteItemFromObjectCaseSensitive(mounts, mp);
		else if (count >= MAX_MOUNTS)
			continue;
		else
			count++;
		m = pb_obj(mounts, mp);
		pb_set_str(m, "fstype", w[dash + 1]);
		pb_set_str(m, "source", src);
		pb_set_bool(m, "ro", has_option(w[5], "ro"));
		/* The filesystem's own flag: ext4 sets it when it remounts itself read-only
		   after an error, while the mount's options may still read rw. */
		pb_set_bool(m, "sb_ro", dash + 3 < n && has_option(w[dash + 3], "ro"));
		if (dash + 3 < n && (kb = option_size_kb(w[dash + 3])) >= 0)
			pb_set_num(m, "size_kb", kb);
	}
	pb_set_num(facts, "mount_count", (double)count);
}

void pb_parse_memory(const struct pb_input *in, cJSON *facts)
{
	static const struct {
		const char *key, *name;
	} keys[] = {
		{ "MemTotal", "total_kb" },        { "MemAvailable", "available_kb" },
		{ "MemFree", "free_kb" },          { "Shmem", "shmem_kb" },
		{ "HugePages_Total", "hugepages_total" }, { "HugePages_Free", "hugepages_free" },
		{ "Hugepagesize", "hugepage_kb" },
	};
	const struct pb_block *b;
	size_t i, k;

	if ((b = pb_find(in, "meminfo")) && b->lines.n) {
		cJSON *mem = pb_obj(facts, "memory");

		for (i = 0; i < b->lines.n; i++) {
			const char *colon = strchr(b->lines.v[i], ':');
			char key[PB_FIELD], w[2][PB_FIELD];
			double v;

			if (!colon)
				continue;
			pb_copy_trim(b->lines.v[i], (size_t)(colon - b->lines.v[i]), key);
			if (pb_words(colon + 1, w, 2) < 1 || !pb_count(w[0], &v))
				continue;
			for (k = 0; k < HP_ARRAY_LEN(keys); k++)
				if (!strcmp(key, keys[k].key))
					pb_set_num(mem, keys[k].name, v);
		}
	}
	if ((b = pb_find(in, "hugepages")) && b->lines.n) {
		double v;

		if (pb_count(b->lines.v[0], &v))
			pb_set_num(facts, "nr_hugepages", v);
	}
	if ((b = pb_find(in, "environment")) && b->ended) {
		/* grep: 0 lines found, 1 none, 2 no file. */
		pb_set_bool(facts, "environment_read", b->rc == 0 || b->rc == 1);
		for (i = 0; i < b->lines.n; i++) {
			const char *s = b->lines.v[i], *eq;
			char key[PB_FIELD], val[PB_FIELD];
			size_t n;

			while (*s == ' ' || *s == '\t')
				s++;
			if (!strncmp(s, "export", 6) && (s[6] == ' ' || s[6] == '\t'))
				for (s += 6; *s == ' ' || *s == '\t'; s++)
					;
			eq = strchr(s, '=');
			if (!eq || strncmp(s, "FI_", 3))
				continue;
			pb_copy_trim(s, (size_t)(eq - s), key);
			pb_copy_trim(eq + 1, strlen(eq + 1), val);
			n = strlen(val);
			if (n >= 2 && (val[0] == '"' || val[0] == '\'') && val[n - 1] == val[0]) {
				memmove(val, val + 1, n - 2);
				val[n - 2] = '\0';
			}
			pb_set_str(pb_obj(facts, "environment"), key, val);
		}
	}
}
