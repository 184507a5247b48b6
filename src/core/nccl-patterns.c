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
#include "hp/nccl-facts.h"
#include "hp/text.h"
#include "hp/util.h"

#define A HP_NCCL_ANYCASE
#define C HP_NCCL_CONTEXT
#define N HP_NCCL_ADDED
#define F HP_NCCL_FALLBACK
#define W HP_NCCL_WRAPPER
#define S HP_NCCL_SYMPTOM

#define G_RDZV "Rendezvous / connection"
#define G_RUN "Runtime / collectives"
#define G_EFA "EFA / libfabric"
#define G_MEM "Memory / resource limits"
#define G_VER "Version / configuration"
#define G_STALE "Stale state"
#define G_CRIT "Other critical"

/*
 * In table order: the order of the report and of ties. Each row is data:
 * the text, its code (the failure class a finding names), priority,
 * section, group, meaning, flags (W: a generic wrapper that takes the
 * cause of the specific line before it in the same log; S: a symptom that
 * a cause found beside it explains; F: a catch-all) and a benign form.
 */
const struct hp_nccl_pattern hp_nccl_patterns[] = {
	{ "Timeout waiting for", "TIMEOUT_RENDEZVOUS", 1, "NC1", G_RDZV,
	  "peers never joined the initialisation", A | S, NULL},
	{ "Connection refused", "CONN_REFUSED", 2, "NC12", G_RDZV,
	  "nothing listens on the rendezvous address yet (or any more)", C | S, NULL},
	{ "Address already in use", "PORT_CONFLICT", 1, "NC1", G_RDZV,
	  "the rendezvous port is taken on rank 0's node", 0, NULL },
	{ "NCCL WARN Connect to", "CONNECT_FAIL", 1, "NC2", G_RDZV,
	  "an NCCL peer connection was refused or dropped", S, "No route to host" },
	{ "socketStartConnect: Connect to", "CONNECT_FAIL", 1, "NC2", G_RDZV,
	  "an NCCL peer connection was refused or dropped (NCCL 2.12 and later)", N | S,
	  "No route to host" },
	/* Said by the kernel through NCCL or c10d: the route, not the peer, is missing. */
	{ "No route to host", "NO_ROUTE", 1, "NC3", G_RDZV,
	  "no route to the peer: the interface NCCL picked cannot reach it, or a security group "
	  "drops the traffic", N, NULL },
	{ "network is unreachable", "NET_UNREACHABLE", 1, "NC12", G_RDZV,
	  "no route to the peer or MASTER_ADDR", A | S, NULL},
	{ "Error in Store", "STORE_ERR", 1, "NC1", G_RDZV, "the c10d store (rendezvous) failed", S, NULL},
	{ "DistStoreError", "STORE_ERR", 1, "NC1", G_RDZV,
	  "the c10d store (rendezvous) failed, in PyTorch 2's wording", S, NULL},
	{ "RendezvousConnectionError", "RDZV_CONN_ERR", 1, "NC12", G_RDZV,
	  "torch elastic could not reach the rendezvous endpoint", S, NULL},
	{ "RendezvousTimeout", "RDZV_TIMEOUT", 1, "NC1", G_RDZV,
	  "torch elastic's rendezvous timed out", S, NULL},
	/* c10d's store client, with or without torch elastic's wrapper around it. */
	{ "The client socket has timed out after", "STORE_TIMEOUT", 1, "NC1", G_RDZV,
	  "the c10d store on MASTER_ADDR:MASTER_PORT never answered", N | S, NULL},
	{ "Socket Timeout", "STORE_TIMEOUT", 1, "NC1", G_RDZV,
	  "the c10d store on MASTER_ADDR:MASTER_PORT never answered", N | S, "DistStoreError"},
	/*
	 * c10d looks a name up once per address family and warns for each one
	 * that fails ("The IPv6 network addresses of (host, port) cannot be
	 * retrieved (gai error: ...)"): noise wherever the other family works.
	 * A failure that stops the job says so in a line of its own.
	 */
	{ "Name or service not known", "DNS_FAIL", 0, "NC12", G_RDZV,
	  "MASTER_ADDR does not resolve", 0, "network addresses of (" },
	{ "getaddrinfo failed", "DNS_FAIL", 0, "NC12", G_RDZV, "the resolver failed", 0,
	  "network addresses of (" },
	{ "Temporary failure in name resolution", "DNS_FAIL", 0, "NC12", G_RDZV,
	  "the resolver failed", N, "network addresses of (" },
	{ "Watchdog timeout", "WATCHDOG_TIMEOUT", 1, "NC1", G_RUN,
	  "a collective ran past the watchdog limit", S, NULL },
	{ "Watchdog caught collective operation timeout", "WATCHDOG_TIMEOUT", 1, "NC1", G_RUN,
	  "a collective ran past the watchdog limit, as PyTorch's NCCL process group prints it",
	  N | S, NULL },
	/* NCCL's generic results: the line before them names the cause. */
	{ "unhandled system error", "SYSTEM_ERROR", 1, "NC23", G_RUN,
	  "a system or library call failed under NCCL, and no line before it says which", W, NULL },
	{ "internal error - please report", "INTERNAL_ERROR", 1, "NC23", G_RUN,
	  "NCCL stopped on an internal error, and no line before it says why", N | W, NULL },
	{ ", internal error,", "INTERNAL_ERROR", 1, "NC23", G_RUN,
	  "NCCL stopped on an internal error, and no line before it says why", N | W, NULL },
	{ "remote process exited or there was a network error", "REMOTE_ERROR", 1, "NC23", G_RUN,
	  "a peer rank went away or the network dropped, and no line before it says which", N | W,
	  NULL },
	{ "unhandled cuda error", "CUDA_ERROR", 1, "NC7", G_RUN,
	  "a CUDA call failed (driver fault or hardware)", W, NULL },
	{ "NCCL WARN Cuda failure", "CUDA_ERROR", 1, "NC7", G_RUN, "a CUDA failure inside NCCL", 0,
	  "'out of memory'" },
	{ "uncorrectable ECC error encountered", "GPU_ECC", 0, "NC7", G_RUN,
	  "a GPU reported an uncorrectable memory error: hardware, drain the node", N, NULL },
	{ "peer access is not supported", "P2P_FAIL", 1, "NC14", G_RUN,
	  "GPU peer-to-peer blocked (ACS, IOMMU)", 0, NULL },
	{ "fi_getinfo failed", "EFA_INIT_FAIL", 0, "NC6", G_EFA,
	  "libfabric found no usable EFA provider", 0, NULL },
	{ "fi_getinfo() call failed", "EFA_INIT_FAIL", 0, "NC6", G_EFA,
	  "libfabric found no usable EFA provider (the OFI plugin's wording)", N, NULL },
	{ "fi_getinfo: provider efa output empty list", "EFA_INIT_FAIL", 0, "NC6", G_EFA,
	  "libfabric's EFA provider found no device (libfabric's own warning)", N, NULL },
	{ "NET/OFI Could not find any optimal provider", "EFA_INIT_FAIL", 0, "NC6", G_EFA,
	  "the OFI plugin found no usable libfabric provider", N, NULL },
	/* The plugin's resource and start-up failures: NCCL goes on over sockets or stops. */
	{ "NET/OFI Couldn't open", "OFI_INIT_FAIL", 1, "NC6", G_EFA,
	  "the OFI plugin could not open an EFA endpoint, address vector or completion queue", N,
	  NULL },
	{ "NET/OFI Creating new endpoint", "OFI_INIT_FAIL", 1, "NC6", G_EFA,
	  "the OFI plugin could not open an EFA endpoint, address vector or completion queue",
	  N | C, NULL },
	{ "aws-ofi-nccl initialization failed", "OFI_INIT_FAIL", 1, "NC6", G_EFA,
	  "the OFI plugin failed to start, so NCCL cannot use EFA", N, NULL },
	{ "NET/OFI Initializing plugin failed", "OFI_INIT_FAIL", 1, "NC6", G_EFA,
	  "the OFI plugin failed to start, so NCCL cannot use EFA", N, NULL },
	{ "NCCL_OFI_RDMA", "OFI_ERROR", 1, "NC6", G_EFA,
	  "a failure reported by the aws-ofi-nccl plugin", 0, NULL },
	{ "Call to ibv_reg_mr failed", "RDMA_REG_FAIL", 0, "NC17", G_EFA,
	  "memory registration failed: memlock too low", 0, NULL },
	{ "Call to ibv_reg_mr_iova2 failed", "RDMA_REG_FAIL", 0, "NC17", G_EFA,
	  "memory registration failed (newer NCCL's wording)", N, NULL },
	{ "NET/OFI Unable to register memory", "RDMA_REG_FAIL", 0, "NC17", G_EFA,
	  "the OFI plugin could not register a buffer with EFA", N, NULL },
	/* libfabric's EFA provider out of locked memory (its own warnings and abort text). */
	{ "Failure to post internal receive buffers", "RDMA_REG_FAIL", 0, "NC17", G_EFA,
	  "libfabric's EFA provider could not post its receive buffers: memlock too low", N, NULL },
	{ "Unable to create extended CQ: Cannot allocate memory", "RDMA_REG_FAIL", 0, "NC17", G_EFA,
	  "libfabric's EFA provider could not create a completion queue: memlock too low", N, NULL },
	{ "Unable to register MR: Cannot allocate memory", "RDMA_REG_FAIL", 0, "NC17", G_EFA,
	  "libfabric's EFA provider could not register memory: memlock too low", N, NULL },
	{ "NET/OFI Using TCP", "EFA_TCP_FALLBACK", 1, "NC13", G_EFA,
	  "NCCL fell back from EFA to TCP", S, NULL },
	{ "Using network Socket", "EFA_TCP_FALLBACK", 1, "NC13", G_EFA,
	  "NCCL uses its socket transport (a fallback on EFA instances)", N | S, NULL },
	{ "NET/Socket : Using [", "EFA_TCP_FALLBACK", 1, "NC13", G_EFA,
	  "NCCL uses its socket transport (a fallback on EFA instances)", N | S, NULL },
	{ "Failed to load NCCL", "NCCL_LOAD_FAIL", 0, "NC10", G_EFA,
	  "libnccl could not be loaded (LD_LIBRARY_PATH, image)", 0, NULL },
	{ "libnccl-net.so", "OFI_LOAD_FAIL", 1, "NC13", G_EFA,
	  "the OFI net plugin could not be loaded", C, NULL },
	{ "OOMKilled", "OOM_KILL", 0, "NC4", G_MEM, "the container hit its memory limit", 0, NULL },
	{ "CUDA out of memory", "CUDA_OOM", 1, "NC11", G_MEM, "GPU memory exhausted", 0, NULL },
	{ "cudaMalloc failed", "CUDA_OOM", 1, "NC11", G_MEM, "a GPU allocation failed", 0, NULL },
	{ "Cuda failure 'out of memory'", "CUDA_OOM", 1, "NC11", G_MEM,
	  "NCCL could not allocate GPU memory", N, NULL },
	{ "Failed to CUDA calloc", "CUDA_OOM", 1, "NC11", G_MEM,
	  "NCCL could not allocate GPU memory", N, NULL },
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
	  "a communicator was aborted: look for the failing rank", S, NULL },
	{ "MNNVL topology", "MNNVL_TOPO_FAIL", 1, "NC17.2", G_CRIT,
	  "the topology search failed (memlock and stack both unlimited)", 0, NULL },
	{ "ENOMEM", "ENOMEM", 1, "NC17", G_CRIT, "a registration or allocation ran out of memory",
	  C, NULL },
	{ "invalid alignment", "CUDA_ALIGN_ERR", 1, "NC10", G_CRIT,
	  "a CUDA alignment fault (library and driver mismatch)", 0, NULL },
	/*
	 * Catch-alls, counted only when nothing more specific matched the line,
	 * and only the first of them that matches.
	 */
	{ "NCCL WARN NET/OFI", "OFI_ERROR", 1, "NC6", G_EFA,
	  "a failure reported by the aws-ofi-nccl plugin", N | F, NULL },
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

/* Whether a pattern of the same code as pattern i matched the line before it. */
static int code_seen(const size_t *idx, size_t n, size_t max, size_t i)
{
	size_t k;

	for (k = 0; k < n && k < max; k++)
		if (!strcmp(hp_nccl_patterns[idx[k]].code, hp_nccl_patterns[i].code))
			return 1;
	return 0;
}

static size_t match_copy(const struct line_copy *c, size_t *idx, size_t max)
{
	size_t i, n = 0;

	for (i = 0; i < hp_nccl_npatterns; i++) {
		if (hp_nccl_patterns[i].flags & HP_NCCL_FALLBACK)
			continue;
		/* Patterns that share a code are one cause: a line counts once for it. */
		if (pattern_matches(&hp_nccl_patterns[i], c) && !code_seen(idx, n, max, i)) {
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
			return 1;
		}
	}
	return 0;
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

/* ---- the scan ---- */

struct hit {
	size_t count, last_line;
	long cause;           /* a wrapper's: the pattern whose line gave its cause, or -1 */
	char **ring;          /* the last `evidence` lines, oldest at head */
	size_t head, n;
};

struct source {
	char *name;
	size_t lines;
	struct hit **hits;    /* per pattern, NULL until it matched */
	struct hit **marks;   /* per marker */
	/* The last specific (not wrapper, not catch-all) match: its pattern and line. */
	long spec;
	size_t spec_line;
	char version[24];     /* the first "NCCL version X.Y.Z" it printed, or "" */
	/* Wrappers that found no cause before them: waiting for one just after. */
	size_t pend[8], npend, pend_line;
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
	hp_text_addn(HP_TEXT_LOG, raw ? raw : "", raw ? strlen(raw) : 0, 255, &clean);
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
	x->spec = -1;
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
		h->cause = -1;
	}
	h->count++;
	h->last_line = lineno;
	hp_text_addn(HP_TEXT_LOG, line, len, clip, &b);
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

/*
 * The wrapper rule (HP_NCCL_WRAPPER in include/hp/nccl-facts.h) for the patterns
 * idx[0..n) one line of x matched (their hits already kept).
 */
static void wrap_rule(struct source *x, const size_t *idx, size_t n)
{
	long spec = -1;
	size_t i;

	for (i = 0; i < n && spec < 0; i++)
		if (!(hp_nccl_patterns[idx[i]].flags & (HP_NCCL_WRAPPER | HP_NCCL_FALLBACK)))
			spec = (long)idx[i];
	/* Wrappers waiting for the cause PyTorch prints after them. */
	if (spec >= 0 && x->npend) {
		if (x->lines - x->pend_line <= HP_NCCL_WRAP_AFTER)
			for (i = 0; i < x->npend; i++)
				x->hits[x->pend[i]]->cause = spec;
		x->npend = 0;
	}
	for (i = 0; i < n; i++) {
		size_t w = idx[i];

		if (!(hp_nccl_patterns[w].flags & HP_NCCL_WRAPPER))
			continue;
		if (spec >= 0) {
			x->hits[w]->cause = spec;
		} else if (x->spec >= 0 && x->lines - x->spec_line <= HP_NCCL_WRAP_BEFORE) {
			x->hits[w]->cause = x->spec;
		} else {
			if (x->npend && x->lines != x->pend_line)
				x->npend = 0;
			if (x->npend < HP_ARRAY_LEN(x->pend))
				x->pend[x->npend++] = w;
			x->pend_line = x->lines;
		}
	}
	if (spec >= 0) {
		x->spec = spec;
		x->spec_line = x->lines;
	}
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
	wrap_rule(x, idx, n);
	if (!x->version[0]) {
		const char *v = strstr(s->copy->raw, "NCCL version ");
		size_t k = 0;

		/* "NCCL version 2.21.5+cuda12.4", NCCL's INFO form and PyTorch's ", NCCL version 2.21.5". */
		for (v = v ? v + 13 : NULL; v && k + 1 < sizeof(x->version) &&
					    ((*v >= '0' && *v <= '9') || *v == '.'); v++)
			x->version[k++] = *v;
		x->version[k] = '\0';
		if (k < 3 || !strchr(x->version, '.'))
			x->version[0] = '\0';
	}
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
	cJSON *o = cJSON_CreateObject(), *hits, *marks, *versions;
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
	versions = cJSON_AddArrayToObject(o, "versions");
	for (i = 0; i < s->nsrc; i++) {
		const struct source *x = &s->src[i];

		if (x->version[0]) {
			cJSON *e = cJSON_CreateObject();

			cJSON_AddStringToObject(e, "source", x->name);
			cJSON_AddStringToObject(e, "version", x->version);
			cJSON_AddItemToArray(versions, e);
		}
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
			if (p->flags & HP_NCCL_WRAPPER)
				cJSON_AddBoolToObject(e, "wrapper", 1);
			if (h->cause >= 0)
				cJSON_AddStringToObject(e, "cause", hp_nccl_patterns[h->cause].code);
			if (p->flags & HP_NCCL_SYMPTOM)
				cJSON_AddBoolToObject(e, "symptom", 1);
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
