/*
 * The probe's framing (include/hp/facts.h): one node's output cut into
 * blocks, then every per-source parser (parse-*.c) run over them to make
 * the node's facts. Pure: text in, facts out, nothing else read.
 */
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/buf.h"
#include "hp/nccl-facts.h"
#include "hp/text.h"
#include "facts-int.h"
#include "hp/util.h"
#include "probe-int.h"

#define MARK "@@HP@@"
#define MARK_LEN 6

static struct pb_block *open_block(struct pb_input *in, const char *name)
{
	struct pb_block *b = hp_array_push(&in->blocks);

	hp_strlcpy(b->name, name, sizeof(b->name));
	b->rc = -1;
	return b;
}

const struct pb_frame_opts pb_node_frame = { PB_MAX_LINES, 0, 0 };
/* NCCL probe lines are short; a command line is 200 bytes. */
const struct pb_frame_opts pb_nccl_frame = { 3000, 1024, 1 };

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
static struct pb_block *marker(struct pb_input *in, struct pb_block *cur, const char *text)
{
	char w[4][PB_FIELD];
	size_t n = pb_words(text, w, 4);
	double rc;

	if (n == 2 && !strcmp(w[0], "BEGIN") && name_ok(w[1]))
		return open_block(in, w[1]);
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

/* Clean one line into w (room for n + 1 bytes); returns its length. */
static size_t clean_line(const struct pb_frame_opts *o, struct hp_buf *tmp, const char *p,
			 size_t n, char *w)
{
	size_t k;

	if (!o->text) {
		k = hp_text_copy(HP_TEXT_PROBE, p, n, w);
		if (o->clip && k > o->clip)
			w[k = o->clip] = '\0';
		return k;
	}
	/* Never longer than the raw line: a dropped or replaced byte is at most one byte. */
	hp_buf_reset(tmp);
	hp_text_addn(HP_TEXT_LOG, p, n, o->clip ? o->clip : n, tmp);
	k = tmp->len;
	memcpy(w, tmp->len ? tmp->buf : "", k);
	w[k] = '\0';
	return k;
}

void pb_frame(struct pb_input *in, const char *text, size_t len, const struct pb_frame_opts *o)
{
	struct pb_block *cur = NULL;
	struct hp_buf tmp = HP_BUF_INIT((size_t)-1);
	const char *p, *end;
	char *w;

	memset(in, 0, sizeof(*in));
	if (!text) {
		text = "";
		len = 0;
	}
	p = text;
	end = text + len;
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
			/* Blank lines stay: some outputs separate records with them. */
			if (cur->lines.n < o->max_lines) {
				size_t k = clean_line(o, &tmp, p, data, w);

				hp_array_append(&cur->lines, w);
				w += k + 1;
			}
		}
		if (m) {
			char mark[256];
			size_t rest = n - data - MARK_LEN;

			hp_text_copy(HP_TEXT_PROBE, m + MARK_LEN,
				     rest < sizeof(mark) - 1 ? rest : sizeof(mark) - 1, mark);
			/* A BEGIN leaves an open block without its END: rc stays unknown. */
			cur = marker(in, cur, mark);
			if (in->done)
				break;
		}
		p += n + (nl != NULL);
	}
	hp_buf_release(&tmp);
}

void pb_release(struct pb_input *in)
{
	size_t i;

	for (i = 0; i < in->blocks.n; i++)
		hp_array_release(&in->blocks.v[i].lines);
	hp_array_release(&in->blocks);
	free(in->store);
	memset(in, 0, sizeof(*in));
}

const struct pb_block *pb_find(const struct pb_input *in, const char *name)
{
	size_t i;

	for (i = 0; i < in->blocks.n; i++)
		if (!strcmp(in->blocks.v[i].name, name))
			return &in->blocks.v[i];
	return NULL;
}

cJSON *hp_probe_parse(const char *stdout_text, size_t len)
{
	/* In this order: later parsers read what earlier ones found. */
	static void (*const parsers[])(const struct pb_input *in, cJSON *facts) = {
		pb_parse_node,
		pb_parse_df,
		pb_parse_mountinfo,
		pb_parse_memory,
		pb_parse_kmsg,
		pb_parse_time,
		pb_parse_services,
		pb_parse_nvidia,
		pb_parse_pci,
		pb_parse_pci_link,
		pb_parse_dcgm,
		pb_parse_neuron,
		pb_parse_efa,
		pb_parse_modules,
		/* After pb_parse_nvidia: NVLink facts join its GPUs. */
		pb_parse_nvlink,
		pb_parse_nvvs,
		pb_parse_netdev,
		pb_parse_imds,
		pb_parse_provision,
		pb_parse_fabricmanager,
	};
	struct pb_input in;
	cJSON *facts = cJSON_CreateObject(), *blocks;
	size_t i;

	if (!facts)
		hp_die("out of memory");
	hp_facts_count_run(FACTS_PROBE);
	if (!stdout_text)
		len = 0;
	pb_frame(&in, stdout_text ? stdout_text : "", len, &pb_node_frame);
	pb_set_bool(facts, "truncated", !in.done);
	blocks = pb_obj(facts, "blocks");
	for (i = 0; i < in.blocks.n; i++) {
		const struct pb_block *pb = &in.blocks.v[i];
		cJSON *b;

		if (cJSON_GetObjectItemCaseSensitive(blocks, pb->name))
			continue;
		b = pb_obj(blocks, pb->name);
		if (pb->ended)
			pb_set_num(b, "rc", pb->rc);
		else
			cJSON_AddNullToObject(b, "rc");
		pb_set_num(b, "lines", (double)pb->nlines);
	}
	for (i = 0; i < HP_ARRAY_LEN(parsers); i++)
		parsers[i](&in, facts);
	pb_release(&in);
	return facts;
}
