/*
 * The probe's public side: the embedded script, the remote command line
 * that carries it, and the framing parser that cuts one node's output into
 * blocks before the per-source parsers read them. Interpreting a block is
 * left to the parse-*.c files; judging the facts is left to the checks.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/util.h"
#include "hp_probe.h"
#include "probe-int.h"

#define MARK "@@HP@@"
#define MARK_LEN 6

/* Which blocks each part reads. */
static const struct {
	const char *block;
	unsigned parts;
} block_parts[] = {
	{ "node", HP_PROBE_NODE | HP_PROBE_KMSG | HP_PROBE_GPU },
	{ "df", HP_PROBE_DISK },
	{ "df_inodes", HP_PROBE_DISK },
	{ "mountinfo", HP_PROBE_DISK },
	{ "meminfo", HP_PROBE_MEMORY },
	{ "hugepages", HP_PROBE_MEMORY },
	{ "environment", HP_PROBE_MEMORY },
	{ "systemd", HP_PROBE_SERVICES },
	{ "chrony", HP_PROBE_TIME },
	{ "timedatectl", HP_PROBE_TIME },
	{ "dmesg", HP_PROBE_KMSG },
	{ "journal", HP_PROBE_KMSG },
	{ "pci", HP_PROBE_GPU | HP_PROBE_EFA },
	{ "nvidia_gpu", HP_PROBE_GPU },
	{ "nvidia_ecc", HP_PROBE_GPU },
	{ "nvidia_clocks", HP_PROBE_GPU },
	{ "nvidia_remap", HP_PROBE_GPU },
	{ "nvidia_recovery", HP_PROBE_GPU },
	{ "dcgm", HP_PROBE_DCGM },
	{ "neuron", HP_PROBE_NEURON },
	{ "ib_devices", HP_PROBE_EFA },
	{ "ib_ports", HP_PROBE_EFA },
	{ "fi_info", HP_PROBE_EFA },
	{ "modules", HP_PROBE_EFA | HP_PROBE_GPU | HP_PROBE_NEURON },
	{ "nvlink_status", HP_PROBE_GPU },
	{ "nvlink_errors", HP_PROBE_GPU },
	{ "nvvs", HP_PROBE_DCGM },
	{ "netdev", HP_PROBE_NET },
	{ "imds", HP_PROBE_NET },
	{ "provision", HP_PROBE_LOGS },
};

const char *hp_probe_script(void)
{
	/* embed.sh names its table hp_refdocs whatever it embeds; here it holds probe.sh. */
	return (const char *)hp_refdocs[0].text;
}

static void base64_encode(const unsigned char *p, size_t n, struct hp_buf *out)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];

		hp_buf_putc(out, abc[v >> 18 & 63]);
		hp_buf_putc(out, abc[v >> 12 & 63]);
		hp_buf_putc(out, abc[v >> 6 & 63]);
		hp_buf_putc(out, abc[v & 63]);
	}
	if (n - i == 1) {
		unsigned v = (unsigned)p[i] << 16;

		hp_buf_putc(out, abc[v >> 18 & 63]);
		hp_buf_putc(out, abc[v >> 12 & 63]);
		hp_buf_puts(out, "==");
	} else if (n - i == 2) {
		unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8;

		hp_buf_putc(out, abc[v >> 18 & 63]);
		hp_buf_putc(out, abc[v >> 12 & 63]);
		hp_buf_putc(out, abc[v >> 6 & 63]);
		hp_buf_putc(out, '=');
	}
}

void hp_probe_command(struct hp_buf *out)
{
	const char *s = hp_probe_script();

	/* The alphabet of base64 needs no quoting inside single quotes. */
	hp_buf_puts(out, "sh -c 'printf %s ");
	base64_encode((const unsigned char *)s, strlen(s), out);
	hp_buf_puts(out, " | base64 -d | sh'");
}

size_t pb_clean(const char *src, size_t n, char *dst)
{
	size_t i = 0, o = 0;

	while (i < n) {
		unsigned char c = (unsigned char)src[i];

		if (c == 0x1b) {
			i++;
			if (i >= n)
				break;
			c = (unsigned char)src[i];
			if (c == '[') {
				/* CSI: parameters and intermediates, then one final byte. */
				i++;
				while (i < n && ((unsigned char)src[i] < 0x40 || (unsigned char)src[i] > 0x7e))
					i++;
				i++;
			} else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
				/* A string ended by BEL or ESC \ (or the end of the line). */
				i++;
				while (i < n && src[i] != '\a' && src[i] != 0x1b)
					i++;
				if (i < n && src[i] == 0x1b)
					i++;
				i++;
			} else {
				while (i < n && (unsigned char)src[i] >= 0x20 && (unsigned char)src[i] <= 0x2f)
					i++;
				i++;
			}
			continue;
		}
		i++;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			continue;
		dst[o++] = (char)c;
	}
	dst[o] = '\0';
	return o;
}

static unsigned parts_of(const char *name)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(block_parts); i++)
		if (!strcmp(block_parts[i].block, name))
			return block_parts[i].parts;
	return 0;
}

static struct pb_block *open_block(struct pb_input *in, const char *name, unsigned parts)
{
	struct pb_block *b;

	if (in->n == in->alloc) {
		in->alloc = in->alloc ? in->alloc * 2 : 32;
		in->v = xrealloc(in->v, in->alloc * sizeof(*in->v));
	}
	b = &in->v[in->n++];
	memset(b, 0, sizeof(*b));
	hp_strlcpy(b->name, name, sizeof(b->name));
	b->rc = -1;
	b->wanted = (parts_of(name) & parts) != 0;
	return b;
}

static void keep_line(struct pb_block *b, const char *line)
{
	if (b->nkept >= PB_MAX_LINES)
		return;
	if (b->nkept == b->alloc) {
		b->alloc = b->alloc ? b->alloc * 2 : 16;
		b->lines = xrealloc(b->lines, b->alloc * sizeof(*b->lines));
	}
	b->lines[b->nkept++] = line;
}

static int name_ok(const char *s)
{
	if (!*s || strlen(s) >= 32)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* One marker, already cleaned: "BEGIN x", "END x 0", "DONE". */
static struct pb_block *marker(struct pb_input *in, struct pb_block *cur, const char *text,
			       unsigned parts)
{
	char w[4][PB_FIELD];
	size_t n = pb_words(text, w, 4);
	double rc;

	if (n == 2 && !strcmp(w[0], "BEGIN") && name_ok(w[1]))
		return open_block(in, w[1], parts);
	if (n == 3 && !strcmp(w[0], "END") && cur && !strcmp(w[1], cur->name)) {
		if (pb_count(w[2], &rc) && rc <= 255)
			cur->rc = (int)rc;
		cur->ended = 1;
		return NULL;
	}
	if (n == 1 && !strcmp(w[0], "DONE")) {
		in->done = 1;
		return NULL;
	}
	/* Anything else that looks like a marker is noise; the block goes on. */
	return cur;
}

static const char *find_mark(const char *p, size_t n)
{
	const char *end = p + n;

	while (p + MARK_LEN <= end) {
		const char *at = memchr(p, '@', (size_t)(end - p));

		if (!at || at + MARK_LEN > end)
			return NULL;
		if (!memcmp(at, MARK, MARK_LEN))
			return at;
		p = at + 1;
	}
	return NULL;
}

void pb_frame(struct pb_input *in, const char *text, size_t len, unsigned parts)
{
	struct pb_block *cur = NULL;
	const char *p = text, *end = text + len;
	char *w;

	memset(in, 0, sizeof(*in));
	/* Cleaned lines are never longer than the raw ones: one store fits all. */
	in->store = w = xmalloc(len + 2);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *m = find_mark(p, n);
		size_t data = m ? (size_t)(m - p) : n;

		/* Text before a marker (a last line without newline) still belongs to the block. */
		if (cur && (data || !m)) {
			cur->nlines++;
			if (cur->wanted) {
				size_t k = pb_clean(p, data, w);

				/* Blank lines stay: some outputs separate records with them. */
				keep_line(cur, w);
				w += k + 1;
			}
		}
		if (m) {
			char tmp[256];
			size_t rest = n - data - MARK_LEN;

			pb_clean(m + MARK_LEN, rest < sizeof(tmp) - 1 ? rest : sizeof(tmp) - 1, tmp);
			/* A BEGIN leaves an open block without its END: rc stays unknown. */
			cur = marker(in, cur, tmp, parts);
			if (in->done)
				break;
		}
		p += n + (nl != NULL);
	}
}

void pb_release(struct pb_input *in)
{
	size_t i;

	for (i = 0; i < in->n; i++)
		free(in->v[i].lines);
	free(in->v);
	free(in->store);
	memset(in, 0, sizeof(*in));
}

const struct pb_block *pb_find(const struct pb_input *in, const char *name)
{
	size_t i;

	for (i = 0; i < in->n; i++)
		if (!strcmp(in->v[i].name, name))
			return &in->v[i];
	return NULL;
}

cJSON *hp_probe_parse_some(const char *stdout_text, size_t len, unsigned parts)
{
	static const struct {
		unsigned part;
		void (*fn)(const struct pb_input *in, cJSON *facts);
	} parsers[] = {
		{ HP_PROBE_NODE | HP_PROBE_KMSG | HP_PROBE_GPU, pb_parse_node },
		{ HP_PROBE_DISK, pb_parse_df },
		{ HP_PROBE_DISK, pb_parse_mountinfo },
		{ HP_PROBE_MEMORY, pb_parse_memory },
		{ HP_PROBE_KMSG, pb_parse_kmsg },
		{ HP_PROBE_TIME, pb_parse_time },
		{ HP_PROBE_SERVICES, pb_parse_services },
		{ HP_PROBE_GPU, pb_parse_nvidia },
		{ HP_PROBE_GPU | HP_PROBE_EFA, pb_parse_pci },
		{ HP_PROBE_DCGM, pb_parse_dcgm },
		{ HP_PROBE_NEURON, pb_parse_neuron },
		{ HP_PROBE_EFA, pb_parse_efa },
		{ HP_PROBE_EFA | HP_PROBE_GPU | HP_PROBE_NEURON, pb_parse_modules },
		/* After pb_parse_nvidia: NVLink facts join its GPUs. */
		{ HP_PROBE_GPU, pb_parse_nvlink },
		{ HP_PROBE_DCGM, pb_parse_nvvs },
		{ HP_PROBE_NET, pb_parse_netdev },
		{ HP_PROBE_NET, pb_parse_imds },
		{ HP_PROBE_LOGS, pb_parse_provision },
	};
	struct pb_input in;
	cJSON *facts = cJSON_CreateObject(), *blocks;
	size_t i;

	if (!facts)
		hp_die("out of memory");
	if (!stdout_text)
		len = 0;
	pb_frame(&in, stdout_text ? stdout_text : "", len, parts);
	pb_set_bool(facts, "truncated", !in.done);
	blocks = pb_obj(facts, "blocks");
	for (i = 0; i < in.n; i++) {
		cJSON *b;

		if (cJSON_GetObjectItemCaseSensitive(blocks, in.v[i].name))
			continue;
		b = pb_obj(blocks, in.v[i].name);
		if (in.v[i].ended)
			pb_set_num(b, "rc", in.v[i].rc);
		else
			cJSON_AddNullToObject(b, "rc");
		pb_set_num(b, "lines", (double)in.v[i].nlines);
	}
	for (i = 0; i < HP_ARRAY_LEN(parsers); i++)
		if (parsers[i].part & parts)
			parsers[i].fn(&in, facts);
	pb_release(&in);
	return facts;
}

cJSON *hp_probe_parse(const char *stdout_text, size_t len)
{
	return hp_probe_parse_some(stdout_text, len, HP_PROBE_ALL);
}
