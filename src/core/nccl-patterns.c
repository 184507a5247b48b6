/*
 * The NCCL log error-pattern table (references/nccl-diagnostics-detail.md
 * § NC23) and the matcher over log lines: per-pattern case rules, context
 * words for the patterns that healthy logs also print, success markers,
 * the CloudWatch filter patterns that find the same lines, and a scan that
 * keeps each (pattern, source) pair once with bounded evidence.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "hp/array.h"
#include "hp/nccl.h"
#include "hp/util.h"

#define A HP_NCCL_ANYCASE
#define C HP_NCCL_CONTEXT
#define N HP_NCCL_ADDED
#define F HP_NCCL_FALLBACK

#define G_RDZV "Rendezvous / connection"
#define G_RUN "Runtime / collectives"
#define G_EFA "EFA / libfabric"
#define G_MEM "Memory / resource limits"
#define G_VER "Version / configuration"
#define G_STALE "Stale state"
#define G_CRIT "Other critical"

/* In table order: the order of the report and of ties. */
const struct hp_nccl_pattern hp_nccl_patterns[] = {
	{ "Timeout waiting for", "TIMEOUT_RENDEZVOUS", 1, "NC1", G_RDZV,
	  "peers never joined the initialisation", A, NULL },
	{ "Connection refused", "CONN_REFUSED", 2, "NC12", G_RDZV,
	  "nothing listens on the rendezvous address yet (or any more)", C, NULL },
	{ "Address already in use", "PORT_CONFLICT", 1, "NC1", G_RDZV,
	  "the rendezvous port is taken on rank 0's node", 0, NULL },
	{ "NCCL WARN Connect to", "CONNECT_FAIL", 1, "NC2", G_RDZV,
	  "an NCCL peer connection was refused or dropped", 0, NULL },
	{ "socketStartConnect: Connect to", "CONNECT_FAIL", 1, "NC2", G_RDZV,
	  "an NCCL peer connection was refused or dropped (NCCL 2.12 and later)", N, NULL },
	{ "network is unreachable", "NET_UNREACHABLE", 1, "NC12", G_RDZV,
	  "no route to the peer or MASTER_ADDR", A, NULL },
	{ "Error in Store", "STORE_ERR", 1, "NC1", G_RDZV, "the c10d store (rendezvous) failed", 0, NULL },
	{ "DistStoreError", "STORE_ERR", 1, "NC1", G_RDZV,
	  "the c10d store (rendezvous) failed, in PyTorch 2's wording", 0, NULL },
	{ "RendezvousConnectionError", "RDZV_CONN_ERR", 1, "NC12", G_RDZV,
	  "torch elastic could not reach the rendezvous endpoint", 0, NULL },
	{ "RendezvousTimeout", "RDZV_TIMEOUT", 1, "NC1", G_RDZV,
	  "torch elastic's rendezvous timed out", 0, NULL },
	/* c10d's failed IPv6 lookups are noise wherever IPv4 works. */
	{ "Name or service not known", "DNS_FAIL", 0, "NC12", G_RDZV,
	  "MASTER_ADDR does not resolve", 0, "IPv6 network addresses" },
	{ "getaddrinfo failed", "DNS_FAIL", 0, "NC12", G_RDZV, "the resolver failed", 0, NULL },
	{ "Temporary failure in name resolution", "DNS_FAIL", 0, "NC12", G_RDZV,
	  "the resolver failed", N, NULL },
	{ "Watchdog timeout", "WATCHDOG_TIMEOUT", 1, "NC1", G_RUN,
	  "a collective ran past the watchdog limit", 0, NULL },
	{ "Watchdog caught collective operation timeout", "WATCHDOG_TIMEOUT", 1, "NC1", G_RUN,
	  "a collective ran past the watchdog limit, as PyTorch's NCCL process group prints it", N, NULL },
	{ "unhandled system error", "SYSTEM_ERROR", 0, "NC7", G_RUN,
	  "a system call or device failed under NCCL (often EFA or a GPU)", 0, NULL },
	{ "unhandled cuda error", "CUDA_ERROR", 0, "NC7", G_RUN,
	  "a CUDA call failed (driver fault or hardware)", 0, NULL },
	{ "NCCL WARN Cuda failure", "CUDA_ERROR", 0, "NC7", G_RUN, "a CUDA failure inside NCCL", 0, NULL },
	{ "peer access is not supported", "P2P_FAIL", 1, "NC14", G_RUN,
	  "GPU peer-to-peer blocked (ACS, IOMMU)", 0, NULL },
	{ "fi_getinfo failed", "EFA_INIT_FAIL", 0, "NC6", G_EFA,
	  "libfabric found no usable EFA provider", 0, NULL },
	{ "NET/OFI Could not find any optimal provider", "EFA_INIT_FAIL", 0, "NC6", G_EFA,
	  "the OFI plugin found no usable libfabric provider", N, NULL },
	{ "NCCL_OFI_RDMA", "OFI_ERROR", 1, "NC6", G_EFA,
	  "a failure reported by the aws-ofi-nccl plugin", 0, NULL },
	{ "Call to ibv_reg_mr failed", "RDMA_REG_FAIL", 0, "NC17", G_EFA,
	  "memory registration failed: memlock too low", 0, NULL },
	{ "Call to ibv_reg_mr_iova2 failed", "RDMA_REG_FAIL", 0, "NC17", G_EFA,
	  "memory registration failed (newer NCCL's wording)", N, NULL },
	{ "NET/OFI Unable to register memory", "RDMA_REG_FAIL", 0, "NC17", G_EFA,
	  "the OFI plugin could not register a buffer with EFA", N, NULL },
	{ "NET/OFI Using TCP", "EFA_TCP_FALLBACK", 1, "NC13", G_EFA,
	  "NCCL fell back from EFA to TCP", 0, NULL },
	{ "Using network Socket", "EFA_TCP_FALLBACK", 1, "NC13", G_EFA,
	  "NCCL uses its socket transport (a fallback on EFA instances)", N, NULL },
	{ "Failed to load NCCL", "NCCL_LOAD_FAIL", 0, "NC10", G_EFA,
	  "libnccl could not be loaded (LD_LIBRARY_PATH, image)", 0, NULL },
	{ "libnccl-net.so", "OFI_LOAD_FAIL", 1, "NC13", G_EFA,
	  "the OFI net plugin could not be loaded", C, NULL },
	{ "OOMKilled", "OOM_KILL", 0, "NC4", G_MEM, "the container hit its memory limit", 0, NULL },
	{ "CUDA out of memory", "CUDA_OOM", 1, "NC11", G_MEM, "GPU memory exhausted", 0, NULL },
	{ "cudaMalloc failed", "CUDA_OOM", 1, "NC11", G_MEM, "a GPU allocation failed", 0, NULL },
	{ "failed to extend /dev/shm", "SHM_FULL", 1, "NC17.1", G_MEM, "/dev/shm is too small", 0, NULL },
	{ "Bus error", "SHM_FULL", 1, "NC17.1", G_MEM, "a SIGBUS, usually /dev/shm too small", 0, NULL },
	{ "insufficient shared memory", "SHM_FULL", 1, "NC17.1", G_MEM,
	  "a data loader worker ran out of /dev/shm", N, NULL },
	{ "Error while creating shared memory segment", "SHM_FULL", 1, "NC17.1", G_MEM,
	  "NCCL could not create its /dev/shm segment", N, NULL },
	{ "NCCL function not found", "NCCL_VERSION_MISMATCH", 0, "NC10", G_VER,
	  "ranks run different NCCL builds", 0, NULL },
	{ "Incompatible NCCL version", "NCCL_VERSION_MISMATCH", 0, "NC10", G_VER,
	  "ranks run different NCCL builds", 0, NULL },
	{ "Could not find interface", "IFACE_NOT_FOUND", 1, "NC3", G_VER,
	  "NCCL_SOCKET_IFNAME names no existing interface", 0, NULL },
	{ "world_size mismatch", "WORLD_SIZE_MISMATCH", 1, "NC24", G_VER,
	  "WORLD_SIZE differs from the ranks that exist", A, NULL },
	{ "doesn't have NCCL built in", "NCCL_NOT_BUILT", 0, "NC10", G_VER,
	  "PyTorch was built without NCCL", 0, NULL },
	{ "CUDA_VISIBLE_DEVICES", "CUDA_VIS_DEV", 1, "NC24", G_VER,
	  "the process sees fewer GPUs than it expects", C, NULL },
	{ "unlink shared memory", "SHM_STALE", 1, "NC15", G_STALE,
	  "stale /dev/shm/nccl-* segments or RemoveIPC", 0, NULL },
	{ "Call to ncclCommAbort", "NCCL_COMM_ABORT", 1, "NC1", G_CRIT,
	  "a communicator was aborted: look for the failing rank", 0, NULL },
	{ "MNNVL topology", "MNNVL_TOPO_FAIL", 1, "NC17.2", G_CRIT,
	  "the topology search failed (memlock and stack both unlimited)", 0, NULL },
	{ "ENOMEM", "ENOMEM", 1, "NC17", G_CRIT, "a registration or allocation ran out of memory",
	  C, NULL },
	{ "invalid alignment", "CUDA_ALIGN_ERR", 1, "NC10", G_CRIT,
	  "a CUDA alignment fault (library and driver mismatch)", 0, NULL },
	/* Catch-alls, counted only when nothing more specific matched the line. */
	{ "NCCL WARN", "NCCL_WARN", 2, "NC23", G_CRIT, "another NCCL warning", N | F, NULL },
	{ "NCCL error", "NCCL_ERROR", 1, "NC23", G_CRIT, "another NCCL error reported by PyTorch",
	  A | N | F, NULL },
};
const size_t hp_nccl_npatterns = HP_ARRAY_LEN(hp_nccl_patterns);

const struct hp_nccl_marker hp_nccl_markers[] = {
	{ "BASELINE TEST PASSED", "BASELINE_PASSED", 0 },
	{ "AllReduce SUCCESS", "ALLREDUCE_SUCCESS", 0 },
	{ "Training complete", "TRAINING_COMPLETE", 0 },
	{ "Init COMPLETE", "NCCL_INIT_COMPLETE", N },
	{ "NET/OFI Selected Provider is efa", "OFI_EFA_SELECTED", N },
};
const size_t hp_nccl_nmarkers = HP_ARRAY_LEN(hp_nccl_markers);

/* Words that make a line say something failed (for HP_NCCL_CONTEXT), lower case. */
static const char *const context_words[] = { "error", "fail", "warn", "invalid", "cannot",
					     "not found", "unable" };

const struct hp_nccl_pattern *hp_nccl_pattern_by_code(const char *code)
{
	size_t i;

	for (i = 0; code && i < hp_nccl_npatterns; i++)
		if (!strcmp(hp_nccl_patterns[i].code, code))
			return &hp_nccl_patterns[i];
	return NULL;
}

/* The line (at most HP_NCCL_MATCH_BYTES) as is and lower-cased, NUL-terminated. */
struct line_copy {
	char raw[HP_NCCL_MATCH_BYTES + 1];
	char low[HP_NCCL_MATCH_BYTES + 1];
};

static void copy_line(struct line_copy *c, const char *line, size_t len)
{
	size_t i, o = 0;

	if (len > HP_NCCL_MATCH_BYTES)
		len = HP_NCCL_MATCH_BYTES;
	for (i = 0; i < len; i++) {
		/* A NUL inside the line must not hide what follows it. */
		char ch = line[i] ? line[i] : ' ';

		c->raw[o] = ch;
		c->low[o] = (char)tolower((unsigned char)ch);
		o++;
	}
	c->raw[o] = c->low[o] = '\0';
}

/* Lower-cased copy of a pattern's text (patterns are short). */
static void lower(const char *s, char *out, size_t n)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < n; i++)
		out[i] = (char)tolower((unsigned char)s[i]);
	out[i] = '\0';
}

static int has_context(const struct line_copy *c)
{
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(context_words); i++)
		if (strstr(c->low, context_words[i]))
			return 1;
	return 0;
}

static int pattern_matches(const struct hp_nccl_pattern *p, const struct line_copy *c)
{
	char low[128];

	if (p->unless && strstr(c->raw, p->unless))
		return 0;

	if (p->flags & HP_NCCL_ANYCASE) {
		lower(p->text, low, sizeof(low));
		if (!strstr(c->low, low))
			return 0;
	} else if (!strstr(c->raw, p->text)) {
		return 0;
	}
	return !(p->flags & HP_NCCL_CONTEXT) || has_context(c);
}

static size_t match_copy(const struct line_copy *c, size_t *idx, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < hp_nccl_npatterns; i++) {
		if (hp_nccl_patterns[i].flags & HP_NCCL_FALLBACK)
			continue;
		if (pattern_matches(&hp_nccl_patterns[i], c)) {
			if (n < max)
				idx[n] = i;
			n++;
		}
	}
	if (n)
		return n;
	for (i = 0; i < hp_nccl_npatterns; i++) {
		if (!(hp_nccl_patterns[i].flags & HP_NCCL_FALLBACK))
			continue;
		if (pattern_matches(&hp_nccl_patterns[i], c)) {
			if (n < max)
				idx[n] = i;
			n++;
		}
	}
	return n;
}

static int marker_copy(const struct line_copy *c)
{
	size_t i;

	for (i = 0; i < hp_nccl_nmarkers; i++)
		if (strstr(c->raw, hp_nccl_markers[i].text))
			return (int)i;
	return -1;
}

size_t hp_nccl_match(const char *line, size_t len, size_t *idx, size_t max)
{
	struct line_copy *c = xmalloc(sizeof(*c));
	size_t n;

	copy_line(c, line ? line : "", line ? len : 0);
	n = match_copy(c, idx, max);
	free(c);
	return n;
}

int hp_nccl_marker(const char *line, size_t len)
{
	struct line_copy *c = xmalloc(sizeof(*c));
	int m;

	copy_line(c, line ? line : "", line ? len : 0);
	m = marker_copy(c);
	free(c);
	return m;
}

/* ---- CloudWatch ---- */

/* Adds ?"term" to the current filter, starting a new one when it would not fit. */
static void add_term(char **out, size_t max, size_t max_len, size_t *n, struct hp_buf *cur,
		     const char *term)
{
	size_t need = strlen(term) + 4 + (cur->len ? 1 : 0);

	if (cur->len && cur->len + need > max_len) {
		if (*n < max)
			out[(*n)++] = hp_buf_detach(cur, NULL);
		else
			hp_buf_reset(cur);
	}
	if (strlen(term) + 4 > max_len)
		return;
	if (cur->len)
		hp_buf_putc(cur, ' ');
	hp_buf_printf(cur, "?\"%s\"", term);
}

/* Whether term (or a filter already holding it) was added: CloudWatch needs each once. */
static int seen_term(char (*seen)[128], size_t nseen, const char *t)
{
	size_t i;

	for (i = 0; i < nseen; i++)
		if (!strcmp(seen[i], t))
			return 1;
	return 0;
}

size_t hp_nccl_cloudwatch_filters(char **out, size_t max, size_t max_len)
{
	struct hp_buf cur = HP_BUF_INIT(HP_MAX_LINE);
	char (*seen)[128] = xcalloc(3 * hp_nccl_npatterns + hp_nccl_nmarkers, sizeof(*seen));
	size_t n = 0, nseen = 0, i, v;

	for (i = 0; i < hp_nccl_npatterns + hp_nccl_nmarkers; i++) {
		const char *text = i < hp_nccl_npatterns ? hp_nccl_patterns[i].text
							 : hp_nccl_markers[i - hp_nccl_npatterns].text;
		unsigned flags = i < hp_nccl_npatterns ? hp_nccl_patterns[i].flags : 0;
		char variant[3][128];
		size_t nv = 1;

		/* Filter terms cannot hold a double quote; no pattern has one. */
		if (strchr(text, '"') || strlen(text) >= sizeof(variant[0]))
			continue;
		hp_strlcpy(variant[0], text, sizeof(variant[0]));
		if (flags & HP_NCCL_ANYCASE) {
			/* The spellings logs use: as written, lower case, first letter capital. */
			lower(text, variant[1], sizeof(variant[1]));
			hp_strlcpy(variant[2], variant[1], sizeof(variant[2]));
			variant[2][0] = (char)toupper((unsigned char)variant[2][0]);
			nv = 3;
		}
		for (v = 0; v < nv; v++) {
			if (seen_term(seen, nseen, variant[v]))
				continue;
			hp_strlcpy(seen[nseen++], variant[v], sizeof(seen[0]));
			add_term(out, max, max_len, &n, &cur, variant[v]);
		}
	}
	if (cur.len && n < max)
		out[n++] = hp_buf_detach(&cur, NULL);
	hp_buf_release(&cur);
	free(seen);
	return n;
}

/* ---- cleaning ---- */

/* Length of the UTF-8 sequence at s (n bytes available), 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t k, i;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		k = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		k = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		k = 4;
	else
		return 0;
	if (k > n)
		return 0;
	for (i = 1; i < k; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	cp = k == 2 ? (s[0] & 0x1Fu) : k == 3 ? (s[0] & 0x0Fu) : (s[0] & 0x07u);
	for (i = 1; i < k; i++)
		cp = cp << 6 | (s[i] & 0x3Fu);
	/* Overlong forms, surrogates and values past U+10FFFF are not text. */
	if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	/* C1 controls (U+0080..U+009F). */
	if (cp >= 0x80 && cp <= 0x9F)
		return 0;
	return k;
}

void hp_nccl_clean(const char *src, size_t n, size_t clip, struct hp_buf *out)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t i = 0, kept = 0;

	while (i < n && kept < clip) {
		size_t k;

		if (s[i] == 0x1b) {
			/*
			 * An escape sequence: CSI parameters up to the final byte; OSC,
			 * DCS and the like up to BEL or ESC \; otherwise one more byte.
			 */
			i++;
			if (i < n && s[i] == '[') {
				i++;
				while (i < n && (s[i] < 0x40 || s[i] > 0x7e))
					i++;
			} else if (i < n && s[i] && strchr("]PX^_", s[i])) {
				i++;
				while (i < n && s[i] != 0x07 && s[i] != 0x1b)
					i++;
				if (i < n && s[i] == 0x1b)
					i++;
			}
			i++;
			continue;
		}
		if (s[i] == '\t') {
			if (hp_buf_addc(out, ' '))
				return;
			kept++;
			i++;
			continue;
		}
		if (s[i] < 0x20 || s[i] == 0x7f) {
			i++;
			continue;
		}
		k = utf8_len(s + i, n - i);
		if (!k) {
			if (hp_buf_addc(out, '?'))
				return;
			kept++;
			i++;
			continue;
		}
		if (kept + k > clip)
			break;
		if (hp_buf_add(out, s + i, k))
			return;
		kept += k;
		i += k;
	}
}

/* ---- the scan ---- */

struct hit {
	size_t count, last_line;
	char **ring;          /* the last `evidence` lines, oldest at head */
	size_t head, n;
};

struct source {
	char *name;
	size_t lines;
	struct hit **hits;    /* per pattern, NULL until it matched */
	struct hit **marks;   /* per marker */
};

struct hp_nccl_scan {
	struct hp_nccl_scan_opts o;
	struct source *src;
	size_t nsrc, alloc;
	size_t lines, dropped_sources;
	struct line_copy *copy;
	/* Lines of sources past max_sources are counted here. */
	size_t dropped_lines;
	char last_dropped[256];
};

struct hp_nccl_scan *hp_nccl_scan_new(const struct hp_nccl_scan_opts *o)
{
	struct hp_nccl_scan *s = xcalloc(1, sizeof(*s));

	if (o)
		s->o = *o;
	if (!s->o.evidence)
		s->o.evidence = 3;
	if (!s->o.clip)
		s->o.clip = 300;
	if (!s->o.max_sources)
		s->o.max_sources = 4096;
	s->copy = xmalloc(sizeof(*s->copy));
	return s;
}

static void hit_free(struct hit *h, size_t cap)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < cap; i++)
		free(h->ring[i]);
	free(h->ring);
	free(h);
}

void hp_nccl_scan_free(struct hp_nccl_scan *s)
{
	size_t i, j;

	if (!s)
		return;
	for (i = 0; i < s->nsrc; i++) {
		for (j = 0; j < hp_nccl_npatterns; j++)
			hit_free(s->src[i].hits[j], s->o.evidence);
		for (j = 0; j < hp_nccl_nmarkers; j++)
			hit_free(s->src[i].marks[j], 1);
		free(s->src[i].hits);
		free(s->src[i].marks);
		free(s->src[i].name);
	}
	free(s->src);
	free(s->copy);
	free(s);
}

static struct source *source_of(struct hp_nccl_scan *s, const char *raw)
{
	struct hp_buf clean = HP_BUF_INIT(HP_MAX_LINE);
	struct source *x;
	const char *name;
	size_t i;

	/* Stream names are remote text too: kept cleaned, compared cleaned. */
	hp_nccl_clean(raw ? raw : "", raw ? strlen(raw) : 0, 255, &clean);
	name = clean.buf;
	/* Logs arrive one source at a time: the newest source is the usual hit. */
	for (i = s->nsrc; i-- > 0;)
		if (!strcmp(s->src[i].name, name)) {
			hp_buf_release(&clean);
			return &s->src[i];
		}
	if (s->nsrc >= s->o.max_sources) {
		/* Counted once per run of lines (logs come one source at a time). */
		if (strcmp(s->last_dropped, name)) {
			s->dropped_sources++;
			hp_strlcpy(s->last_dropped, name, sizeof(s->last_dropped));
		}
		hp_buf_release(&clean);
		return NULL;
	}
	s->src = hp_array_grow(s->src, &s->alloc, s->nsrc, 1, sizeof(*s->src));
	x = &s->src[s->nsrc++];
	memset(x, 0, sizeof(*x));
	x->name = hp_buf_detach(&clean, NULL);
	x->hits = xcalloc(hp_nccl_npatterns, sizeof(*x->hits));
	x->marks = xcalloc(hp_nccl_nmarkers, sizeof(*x->marks));
	return x;
}

static void keep(struct hit **slot, size_t cap, size_t clip, const char *line, size_t len,
		 size_t lineno)
{
	struct hit *h = *slot;
	struct hp_buf b = HP_BUF_INIT(HP_MAX_LINE);
	size_t at;

	if (!h) {
		h = *slot = xcalloc(1, sizeof(*h));
		h->ring = xcalloc(cap, sizeof(*h->ring));
	}
	h->count++;
	h->last_line = lineno;
	hp_nccl_clean(line, len, clip, &b);
	if (h->n < cap) {
		at = (h->head + h->n) % cap;
		h->n++;
	} else {
		at = h->head;
		free(h->ring[at]);
		h->head = (h->head + 1) % cap;
	}
	h->ring[at] = hp_buf_detach(&b, NULL);
}

void hp_nccl_scan_line(struct hp_nccl_scan *s, const char *source, const char *line, size_t len)
{
	struct source *x;
	size_t idx[64], n, i;
	int m;

	if (!s)
		return;
	if (!line)
		len = 0;
	if (len && line[len - 1] == '\r')
		len--;
	s->lines++;
	x = source_of(s, source);
	if (!x) {
		s->dropped_lines++;
		return;
	}
	x->lines++;
	copy_line(s->copy, line ? line : "", len);
	n = match_copy(s->copy, idx, HP_ARRAY_LEN(idx));
	if (n > HP_ARRAY_LEN(idx))
		n = HP_ARRAY_LEN(idx);
	for (i = 0; i < n; i++)
		keep(&x->hits[idx[i]], s->o.evidence, s->o.clip, line, len, x->lines);
	m = marker_copy(s->copy);
	if (m >= 0)
		keep(&x->marks[m], 1, s->o.clip, line, len, x->lines);
}

void hp_nccl_scan_text(struct hp_nccl_scan *s, const char *source, const char *text, size_t len)
{
	const char *p = text, *end = text ? text + len : NULL;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		hp_nccl_scan_line(s, source, p, n);
		p += n + (nl != NULL);
	}
}

static cJSON *evidence(const struct hit *h, size_t cap)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; i < h->n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(h->ring[(h->head + i) % cap]));
	return a;
}

cJSON *hp_nccl_scan_json(const struct hp_nccl_scan *s)
{
	static const char *const prio[] = { "P0", "P1", "P2" };
	cJSON *o = cJSON_CreateObject(), *hits, *marks;
	size_t i, j;

	if (!o)
		hp_die("out of memory");
	if (!s)
		return o;
	cJSON_AddNumberToObject(o, "lines", (double)s->lines);
	cJSON_AddNumberToObject(o, "sources", (double)s->nsrc);
	cJSON_AddNumberToObject(o, "sources_dropped", (double)s->dropped_sources);
	hits = cJSON_AddArrayToObject(o, "hits");
	marks = cJSON_AddArrayToObject(o, "markers");
	for (i = 0; i < s->nsrc; i++) {
		const struct source *x = &s->src[i];

		for (j = 0; j < hp_nccl_npatterns; j++) {
			const struct hp_nccl_pattern *p = &hp_nccl_patterns[j];
			const struct hit *h = x->hits[j];
			cJSON *e;

			if (!h)
				continue;
			e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "code", p->code);
			cJSON_AddStringToObject(e, "pattern", p->text);
			cJSON_AddStringToObject(e, "priority", prio[p->prio]);
			cJSON_AddStringToObject(e, "section", p->section);
			cJSON_AddStringToObject(e, "group", p->group);
			cJSON_AddStringToObject(e, "source", x->name);
			cJSON_AddNumberToObject(e, "count", (double)h->count);
			cJSON_AddNumberToObject(e, "last_line", (double)h->last_line);
			cJSON_AddItemToObject(e, "evidence", evidence(h, s->o.evidence));
			cJSON_AddItemToArray(hits, e);
		}
		for (j = 0; j < hp_nccl_nmarkers; j++) {
			const struct hit *h = x->marks[j];
			cJSON *e;

			if (!h)
				continue;
			e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "marker", hp_nccl_markers[j].name);
			cJSON_AddStringToObject(e, "source", x->name);
			cJSON_AddNumberToObject(e, "count", (double)h->count);
			cJSON_AddItemToObject(e, "evidence", evidence(h, 1));
			cJSON_AddItemToArray(marks, e);
		}
	}
	return o;
}
