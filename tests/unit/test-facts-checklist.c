/*
 * The probe-fact checklist of include/hp/facts.h ("Adding a probe fact")
 * held by a test: every key the facts list documents is made by the
 * decoder from some sample of tests/data/probe/ (framed as the probe
 * frames it), and every path an on-node judge reads from a node's facts
 * (a literal `c->facts, "a.b"` or `c->node_facts, "a.b"` in src/checks/)
 * is documented there, or among the NCCL probe's facts of
 * include/hp/nccl-facts.h. The lists are read as written: an entry is a line
 * " *   key {members}", its members the names in its braces at any depth
 * (a name before ':' or between ',' and '|'; what follows ':' is a value),
 * "; name" after the braces another key of the same line; parentheses,
 * quoted values and "<placeholder>" names are prose. Tests run from the
 * repository root.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/buf.h"
#include "hp/facts.h"
#include "hp/json.h"
#include "probe-t.h"
#include "t.h"

#define MAX_KEYS 128
/* Every problem found, one a line; the test fails once with all of them. */
static struct hp_buf problems = HP_BUF_INIT(HP_MAX_LINE);

#define PROBLEM(...) hp_buf_printf(&problems, __VA_ARGS__)

static void fail_on_problems(void)
{
	if (problems.len) {
		fputs(problems.buf, stdout);
		hp_buf_release(&problems);
		T_FAILF("the probe-fact checklist does not hold (the lines above)");
	}
}
#define MAX_MEMBERS 96

/* One documented top-level key and the member names under it. */
struct doc_key {
	char name[48];
	char members[MAX_MEMBERS][48];
	size_t n;
	int open;           /* a placeholder ("<mount point>", NAME) stands for any key */
};

struct doc {
	struct doc_key k[MAX_KEYS];
	size_t n;
};

static struct doc_key *doc_key(struct doc *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (!strcmp(d->k[i].name, name))
			return &d->k[i];
	if (d->n == MAX_KEYS)
		return NULL;
	hp_strlcpy(d->k[d->n].name, name, sizeof(d->k[0].name));
	return &d->k[d->n++];
}

static void add_member(struct doc_key *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (!strcmp(k->members[i], name))
			return;
	if (k->n < MAX_MEMBERS)
		hp_strlcpy(k->members[k->n++], name, sizeof(k->members[0]));
}

static int has_member(const struct doc_key *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (!strcmp(k->members[i], name))
			return 1;
	return 0;
}

static int ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* A name that stands for any key: all capitals ("NAME"). */
static int placeholder_word(const char *w)
{
	for (; *w; w++)
		if (islower((unsigned char)*w))
			return 0;
	return 1;
}

/*
 * The members of one entry's text (the key's line and its continuation
 * lines, the key itself cut off) into the keys keys[0..nk).
 */
static void parse_entry(struct doc *d, char keys[][48], size_t nk, const char *t)
{
	/* Per nesting level: 1 while reading a value (after ':' or inside [ ]). */
	int value[32] = { 0 }, array[32] = { 0 }, depth = 0, paren = 0, seen_brace = 0;
	int after_semi = 0;
	const char *p = t;
	size_t i;

	while (*p) {
		if (paren) {
			paren += *p == '(' ? 1 : *p == ')' ? -1 : 0;
			p++;
			continue;
		}
		if (*p == '(') {
			paren = 1;
			p++;
			continue;
		}
		if (*p == '"') {
			const char *q = strchr(p + 1, '"');
			size_t len;
			int literal = 1;

			if (!q)
				break;
			len = (size_t)(q - p - 1);
			for (i = 1; i <= len; i++)
				literal &= ident_char(p[i]);
			/* "rc": a literal key; "<block>", "FI_...": any key. */
			if (depth > 0 && !value[depth]) {
				for (i = 0; i < nk; i++) {
					struct doc_key *k = doc_key(d, keys[i]);

					if (!k)
						continue;
					if (literal && len && len < 48) {
						char w[48];

						memcpy(w, p + 1, len);
						w[len] = '\0';
						add_member(k, w);
					} else {
						k->open = 1;
					}
				}
			}
			p = q + 1;
			continue;
		}
		if (*p == '{' || *p == '[') {
			if (depth < 31)
				depth++;
			value[depth] = array[depth] = *p == '[';
			seen_brace = 1;
			p++;
			continue;
		}
		if (*p == '}' || *p == ']') {
			if (depth > 0)
				depth--;
			p++;
			continue;
		}
		if (*p == ':' && depth > 0) {
			value[depth] = 1;
			p++;
			continue;
		}
		if (*p == ',' && depth > 0) {
			/* The next member of an object; an array holds values only. */
			value[depth] = array[depth];
			p++;
			continue;
		}
		if (*p == ';' && depth == 0 && seen_brace) {
			after_semi = 1;
			p++;
			continue;
		}
		if (isalpha((unsigned char)*p) || *p == '_') {
			char w[48];
			size_t n = 0;

			while (ident_char(*p) && n + 1 < sizeof(w))
				w[n++] = *p++;
			w[n] = '\0';
			while (ident_char(*p))
				p++;
			if (depth > 0 && !value[depth]) {
				for (i = 0; i < nk; i++) {
					struct doc_key *k = doc_key(d, keys[i]);

					if (!k)
						continue;
					if (placeholder_word(w))
						k->open = 1;
					else
						add_member(k, w);
				}
			} else if (depth == 0 && after_semi) {
				doc_key(d, w);
				after_semi = 0;
			}
			continue;
		}
		if (*p != ' ' && depth == 0)
			after_semi = 0;
		p++;
	}
}

/*
 * The facts list of header path: the comment lines after the first that
 * contains start, up to the comment's end.
 */
static void parse_doc(struct doc *d, const char *path, const char *start)
{
	char *text = t_data("../..", path, NULL), *line, *save = NULL;
	char entry[4096] = "", keys[4][48];
	size_t nk = 0;
	int in = 0;

	T_ASSERT(text != NULL);
	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!in) {
			in = strstr(line, start) != NULL;
			continue;
		}
		if (strstr(line, "*/"))
			break;
		if (!strncmp(line, " *   ", 5) && (islower((unsigned char)line[5]) || line[5] == '_')) {
			const char *p = line + 5;

			if (nk)
				parse_entry(d, keys, nk, entry);
			nk = 0;
			entry[0] = '\0';
			/* "df, df_inodes  {...}": the keys, then two blanks or a brace. */
			while (nk < 4 && (isalpha((unsigned char)*p) || *p == '_')) {
				size_t n = 0;

				while (ident_char(*p) && n + 1 < sizeof(keys[0]))
					keys[nk][n++] = *p++;
				keys[nk][n] = '\0';
				doc_key(d, keys[nk]);
				nk++;
				if (p[0] == ',' && p[1] == ' ' && p[2] != ' ')
					p += 2;
				else
					break;
			}
			hp_strlcpy(entry, p, sizeof(entry));
		} else if (nk && !strncmp(line, " *", 2)) {
			size_t have = strlen(entry);

			snprintf(entry + have, sizeof(entry) - have, " %s", line + 2);
		}
	}
	if (nk)
		parse_entry(d, keys, nk, entry);
	free(text);
}

/* ---- what the samples make ---- */

/* Every member name anywhere under j (keys of objects, at any depth) into k. */
static void produced_names(const cJSON *j, struct doc_key *k)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, j) {
		if (c->string)
			add_member(k, c->string);
		if (cJSON_IsObject(c) || cJSON_IsArray(c))
			produced_names(c, k);
	}
}

/*
 * The probe outputs the samples make: each row a block, the sample it
 * holds (NULL: none) and the exit status it is framed with; rows of the
 * same output number are one probe output, so that the blocks that add to
 * each other's facts (nvidia-smi's queries, the EFA blocks) meet.
 */
static const struct {
	int output;
	const char *block, *file;
	int rc;
} samples[] = {
	{ 1, "df", "df-P-hyperpod.txt", 0 },
	{ 1, "df_inodes", "df-Pi-hyperpod.txt", 0 },
	{ 1, "mountinfo", "mountinfo-hyperpod.txt", 0 },
	{ 1, "meminfo", "meminfo.txt", 0 },
	{ 1, "environment", "environment-efa.txt", 0 },
	{ 2, "df", "df-P.txt", 1 },
	{ 2, "df_inodes", "df-Pi.txt", 1 },
	{ 2, "mountinfo", "mountinfo-hyperpod-readonly.txt", 0 },
	{ 3, "dmesg", "dmesg-kernel-faults.txt", 0 },
	{ 4, "dmesg", "dmesg-gpu-faults.txt", 0 },
	{ 5, "dmesg", "dmesg-aer-uncorrected.txt", 0 },
	{ 6, "journal", "journal-kernel.txt", 0 },
	{ 7, "dmesg", NULL, 127 },
	{ 7, "journal", NULL, 127 },
	{ 8, "chrony", "chronyc-tracking.txt", 0 },
	{ 8, "timedatectl", "timedatectl-status.txt", 0 },
	{ 8, "systemd", "systemctl-show-eks.txt", 0 },
	{ 9, "chrony", "chronyc-nodaemon.txt", 1 },
	{ 9, "timedatectl", "timedatectl-no-bus.txt", 1 },
	{ 9, "systemd", "systemctl-no-systemd.txt", 1 },
	{ 10, "nvidia_gpu", "nvidia-smi-gpus-p5.txt", 0 },
	{ 10, "nvidia_ecc", "nvidia-smi-ecc.txt", 0 },
	{ 10, "nvidia_clocks", "nvidia-smi-clocks.txt", 0 },
	{ 10, "nvidia_remap", "nvidia-smi-remap.txt", 0 },
	{ 10, "nvidia_recovery", "nvidia-smi-recovery.txt", 0 },
	{ 10, "nvlink_status", "nvidia-smi-nvlink-s-inactive.txt", 0 },
	{ 10, "nvlink_errors", "nvidia-smi-nvlink-e-errors.txt", 0 },
	{ 10, "pci", "pci-p5.txt", 0 },
	{ 10, "pci_link", "pci-link-p5.txt", 0 },
	{ 10, "dcgm", "dcgmi-health-failure.json", 0 },
	{ 10, "nvvs", "nvvs-log-failure.txt", 0 },
	{ 10, "fabricmanager", "fabricmanager-journal-failed.txt", 0 },
	{ 10, "ib_devices", "ib-devices-p5.txt", 0 },
	{ 10, "ib_ports", "ib-ports-p5.txt", 0 },
	{ 10, "fi_info", "fi_info-efa.txt", 0 },
	{ 10, "modules", "modules-p5.txt", 0 },
	{ 10, "netdev", "netdev-p5.txt", 0 },
	{ 10, "provision", "provisioning-log-errors.txt", 0 },
	{ 10, "imds", "imds-p5.txt", 0 },
	{ 11, "nvidia_gpu", "nvidia-smi-gpus-p5.txt", 0 },
	{ 11, "nvidia_ecc", "nvidia-smi-ecc-unreadable.txt", 0 },
	{ 11, "nvidia_clocks", "nvidia-smi-clocks-unreadable.txt", 0 },
	{ 11, "nvidia_remap", "nvidia-smi-remap-unreadable.txt", 0 },
	{ 11, "nvidia_recovery", "nvidia-smi-recovery-unreadable.txt", 0 },
	{ 12, "nvidia_gpu", "nvidia-smi-gpus-lost.txt", 0 },
	{ 13, "nvidia_gpu", "nvidia-smi-handle-unknown.txt", 15 },
	{ 14, "nvidia_gpu", "nvidia-smi-nodriver.txt", 9 },
	{ 15, "nvidia_gpu", NULL, 124 },
	{ 15, "nvlink_status", NULL, 124 },
	{ 15, "dcgm", "dcgmi-noengine.txt", 1 },
	{ 15, "fi_info", "fi_info-noefa.txt", 1 },
	{ 16, "neuron", "neuron-ls-trn1.txt", 0 },
};

/*
 * Documented keys no sample shows yet, with the reason; each is still
 * checked to be documented, and one that a sample comes to make should
 * leave this list.
 */
static const char *const unsampled[] = {
	"neuron.error",      /* no public output of a failing neuron-ls */
};

static int is_unsampled(const char *key, const char *member)
{
	char path[128];
	size_t i;

	snprintf(path, sizeof(path), "%s%s%s", key, member ? "." : "", member ? member : "");
	for (i = 0; i < HP_ARRAY_LEN(unsampled); i++)
		if (!strcmp(unsampled[i], path))
			return 1;
	return 0;
}

/* The facts of every sample output, and of the whole probe output captured on a machine. */
static void produced(struct doc *made)
{
	size_t i = 0;
	int whole = 0;

	while (i < HP_ARRAY_LEN(samples) || !whole) {
		struct hp_buf b = HP_BUF_INIT(HP_PROBE_MAX_STDOUT);
		const cJSON *c;
		cJSON *f;

		if (i < HP_ARRAY_LEN(samples)) {
			int output = samples[i].output;

			for (; i < HP_ARRAY_LEN(samples) && samples[i].output == output; i++) {
				if (samples[i].file)
					pt_block_file(&b, samples[i].block, samples[i].rc,
						      samples[i].file);
				else
					pt_block(&b, samples[i].block, samples[i].rc, NULL);
			}
			/* The first output is left without its DONE marker: "truncated". */
			if (output != samples[0].output)
				pt_done(&b);
		} else {
			char *all = pt_file("probe-debian-vm.txt");

			hp_buf_puts(&b, all);
			free(all);
			whole = 1;
		}
		f = hp_probe_parse(b.buf, b.len);
		cJSON_ArrayForEach(c, f) {
			struct doc_key *k = doc_key(made, c->string);

			if (k)
				produced_names(c, k);
		}
		cJSON_Delete(f);
		hp_buf_release(&b);
	}
}

static void t_documented_keys_are_made(void)
{
	static struct doc doc, made;
	size_t i, j;

	memset(&doc, 0, sizeof(doc));
	memset(&made, 0, sizeof(made));
	parse_doc(&doc, "include/hp/facts.h", "Facts (a cJSON object;");
	T_ASSERT(doc.n >= 20);
	produced(&made);
	for (i = 0; i < doc.n; i++) {
		const struct doc_key *m = NULL;

		for (j = 0; j < made.n; j++)
			if (!strcmp(made.k[j].name, doc.k[i].name))
				m = &made.k[j];
		if (!m) {
			PROBLEM("# include/hp/facts.h documents '%s', which no sample of "
				"tests/data/probe makes\n", doc.k[i].name);
			continue;
		}
		for (j = 0; j < doc.k[i].n; j++)
			if (!has_member(m, doc.k[i].members[j]) &&
			    !is_unsampled(doc.k[i].name, doc.k[i].members[j]))
				PROBLEM("# include/hp/facts.h documents %s.%s, which no sample of "
					"tests/data/probe makes\n", doc.k[i].name,
					doc.k[i].members[j]);
	}
	fail_on_problems();
}

/* ---- what the judges read ---- */

/* Whether path "a.b.c" is documented: a a key, every later part one of its members. */
static int documented(const struct doc *d, const char *path)
{
	char part[48];
	const struct doc_key *k = NULL;
	const char *p = path;
	size_t i;

	for (;;) {
		size_t n = strcspn(p, ".");

		if (n >= sizeof(part))
			return 0;
		memcpy(part, p, n);
		part[n] = '\0';
		if (!k) {
			for (i = 0; i < d->n && strcmp(d->k[i].name, part); i++)
				;
			if (i == d->n)
				return 0;
			k = &d->k[i];
		} else if (!has_member(k, part) && !k->open) {
			return 0;
		}
		if (!p[n])
			return 1;
		p += n + 1;
	}
}

/* Every literal read of a node's facts in src/checks/file, each held to the lists d. */
static void each_read(const char *file, const struct doc *d, size_t *count)
{
	static const char *const objs[] = { "c->facts, \"", "c->node_facts, \"" };
	char *text = t_data("../../src/checks", file, NULL);
	size_t i;

	if (!text)
		return;
	for (i = 0; i < HP_ARRAY_LEN(objs); i++) {
		const char *p = text;

		while ((p = strstr(p, objs[i]))) {
			char path[128];
			size_t n;

			p += strlen(objs[i]);
			n = strcspn(p, "\"");
			if (n && n < sizeof(path)) {
				memcpy(path, p, n);
				path[n] = '\0';
				(*count)++;
				if (!documented(d, path))
					PROBLEM("# src/checks/%s reads %s of a node's facts, which "
						"neither include/hp/facts.h nor include/hp/nccl-facts.h "
						"documents\n", file, path);
			}
		}
	}
	free(text);
}

static void t_read_keys_are_documented(void)
{
	static struct doc doc;
	size_t count = 0;
	DIR *dir;
	struct dirent *e;

	memset(&doc, 0, sizeof(doc));
	parse_doc(&doc, "include/hp/facts.h", "Facts (a cJSON object;");
	parse_doc(&doc, "include/hp/nccl-facts.h", "The probe's output as facts:");
	dir = opendir("src/checks");
	T_ASSERT(dir != NULL);
	if (!dir)
		return;
	while ((e = readdir(dir))) {
		size_t n = strlen(e->d_name);

		if (n > 2 && !strcmp(e->d_name + n - 2, ".c"))
			each_read(e->d_name, &doc, &count);
	}
	closedir(dir);
	/* The scan found the judges' reads at all. */
	T_ASSERT(count >= 40);
	fail_on_problems();
}

T_MAIN(T(t_documented_keys_are_made), T(t_read_keys_are_documented))
