/*
 * `hpnode bundle`: one archive a support case can take. A triage of the
 * cluster (its snapshot and its text, JSON and JUnit reports), the
 * cluster's own records (DescribeCluster, the node list, the events and
 * the CloudWatch streams of the window, the Kubernetes objects read and
 * the kube-system pods' logs), the
 * guides of this version, and per node the files the read-only node
 * script sends back over SSM (include/hp/bundle.h). Every byte is redacted
 * before it reaches the archive (include/hp/redact.h), every file is
 * counted in MANIFEST.json with its size, sha256, cut and redactions, and
 * every node that could not be collected is named with the reason. The
 * archive (include/hp/tar.h) is written as it goes to a temporary file
 * beside the path, mode 0600, and renamed over it at the end. With
 * --upload s3://bucket/prefix the finished archive also goes to the
 * caller's bucket (include/hp/s3.h): the one write hpnode makes, and only
 * there; the archive stays where it was written either way.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cmd-int.h"
#include "hp/bundle.h"
#include "hp/collect.h"
#include "hp/facts.h"
#include "hp/iso8601.h"
#include "hp/json.h"
#include "hp/kube.h"
#include "hp/nccl-facts.h"
#include "hp/redact.h"
#include "hp/refdoc.h"
#include "hp/report.h"
#include "hp/s3.h"
#include "hp/ssm.h"
#include "hp/tar.h"
#include "hp/text.h"

#define MAX_NODES 256
#define DEFAULT_FILE_CAP ((size_t)16 << 20)
#define DEFAULT_NODE_CAP ((size_t)64 << 20)
#define DEFAULT_TOTAL_CAP ((uint64_t)2 << 30)
#define DEFAULT_SINCE_S (6 * 3600)
#define SNAPSHOT_MAX ((size_t)512 << 20)
#define CW_PAGES 20
#define KUBE_LOG_PODS 200

struct bundle_args {
	const char *nodes[MAX_NODES];
	size_t n_nodes;
	int all, job_scripts, no_kube;
	const char *since, *from, *until, *output;
	const char *kubeconfig, *kube_context;
	const char *upload, *kms_key_id;
	struct hp_s3_uri s3;
	size_t file_cap, node_cap;
	uint64_t total_cap;
	struct hp_probe_opts probe;
	int64_t from_s, until_s;
};

enum { O_NODE = 256, O_SAMPLE, O_ALL, O_SINCE, O_FROM, O_UNTIL, O_OUTPUT_FILE, O_JOB_SCRIPTS,
       O_FILE_CAP, O_NODE_CAP, O_TOTAL_CAP, O_KUBECONFIG, O_KUBE_CONTEXT, O_NO_KUBE,
       O_CONCURRENCY, O_SSM_RATE, O_PROBE_TIMEOUT, O_UPLOAD, O_SSE_KMS };

static const struct hp_opt bundle_options[] = {
	{ "node", required_argument, O_NODE,
	  "  --node i-...           collect this node (repeatable, at most 256)\n" },
	{ "sample", required_argument, O_SAMPLE,
	  "  --sample N             collect N Running nodes spread over the groups\n" },
	{ "all", no_argument, O_ALL,
	  "  --all                  collect every Running node (the default)\n" },
	{ "since", required_argument, O_SINCE,
	  "  --since D              the window: the last D (90s, 30m, 6h, 2d; default 6h)\n" },
	{ "from", required_argument, O_FROM,
	  "  --from T, --until T    the window between two UTC times (2026-12-01T03:00:00Z)\n" },
	{ "until", required_argument, O_UNTIL, NULL },
	{ "output-file", required_argument, O_OUTPUT_FILE,
	  "  --output-file F        the archive (default hpnode-bundle-<cluster>-<UTC time>.tar.gz)\n" },
	{ "job-scripts", no_argument, O_JOB_SCRIPTS,
	  "  --job-scripts          also Slurm's saved batch scripts (left out by default)\n" },
	{ "file-cap", required_argument, O_FILE_CAP,
	  "  --file-cap N           bytes kept of one file, its tail (default 16M)\n" },
	{ "node-cap", required_argument, O_NODE_CAP,
	  "  --node-cap N           bytes of one node's files (default 64M)\n" },
	{ "total-cap", required_argument, O_TOTAL_CAP,
	  "  --total-cap N          bytes of the whole archive (default 2G); past it nothing is\n"
	  "                         added and MANIFEST.json says what was left out\n" },
	{ "kubeconfig", required_argument, O_KUBECONFIG,
	  "  --kubeconfig FILE      kubeconfig for the Kubernetes objects (default: kubectl's own)\n" },
	{ "context", required_argument, O_KUBE_CONTEXT,
	  "  --context NAME         kubeconfig context\n" },
	{ "no-kube", no_argument, O_NO_KUBE,
	  "  --no-kube              do not run kubectl\n" },
	{ "concurrency", required_argument, O_CONCURRENCY,
	  "  --concurrency N        SSM sessions at once (default 8, at most 64)\n" },
	{ "ssm-rate", required_argument, O_SSM_RATE,
	  "  --ssm-rate R           StartSession calls per second (default 3)\n" },
	{ "probe-timeout", required_argument, O_PROBE_TIMEOUT,
	  "  --probe-timeout S      seconds per node and session (default 300)\n" },
	{ "upload", required_argument, O_UPLOAD,
	  "  --upload s3://B/P      also put the archive into your bucket B under prefix P: the\n"
	  "                         only write hpnode ever makes (PutObject, or a multipart\n"
	  "                         upload); encrypted (SSE-S3), no ACL, checksum compared;\n"
	  "                         the local archive is kept\n" },
	{ "sse-kms-key-id", required_argument, O_SSE_KMS,
	  "  --sse-kms-key-id K     with --upload: SSE-KMS with this key instead of SSE-S3\n" },
	{ NULL, 0, 0, NULL },
};

/* ---- options ---- */

static int number(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

/* 16M, 2G, 512K or plain bytes, at least 4096. */
static int bytes(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t m = 1;

	if (end == s || *s == '-')
		return -1;
	if (*end == 'K' || *end == 'k')
		m = 1024;
	else if (*end == 'M' || *end == 'm')
		m = (uint64_t)1 << 20;
	else if (*end == 'G' || *end == 'g')
		m = (uint64_t)1 << 30;
	else if (*end)
		return -1;
	if (*end && end[1])
		return -1;
	if (v > ((uint64_t)64 << 30) / m || v * m < 4096)
		return -1;
	*out = v * m;
	return 0;
}

/* 90s, 30m, 6h, 2d: seconds. */
static int duration(const char *s, int64_t *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	int64_t m;

	if (end == s || v <= 0 || !end[0] || end[1])
		return -1;
	m = *end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 : *end == 'd' ? 86400 : 0;
	if (!m || v > 400LL * 86400 / m)
		return -1;
	*out = (int64_t)v * m;
	return 0;
}

static int bundle_option(struct hp_cmd_ctx *c, int code, const char *arg)
{
	struct bundle_args *b = c->args;
	uint64_t n;
	double v;

	switch (code) {
	case O_NODE:
		if (!hp_cmd_match("^i-[0-9a-f]{8,17}$", arg))
			return hp_cmd_usage_error("bundle", "--node must be an EC2 instance id like "
						  "i-0123456789abcdef0 (got '%s')", arg);
		if (b->n_nodes == MAX_NODES)
			return hp_cmd_usage_error("bundle", "at most %d --node options", MAX_NODES);
		b->nodes[b->n_nodes++] = arg;
		return 0;
	case O_SAMPLE:
		if (number(arg, 1, 1000000, &v) || v != (double)(long)v)
			return hp_cmd_usage_error("bundle", "--sample must be a whole number from 1 to "
						  "1000000 (got '%s')", arg);
		b->probe.sample = (int)v;
		return 0;
	case O_ALL:
		b->all = 1;
		return 0;
	case O_SINCE:
		b->since = arg;
		return 0;
	case O_FROM:
		b->from = arg;
		return 0;
	case O_UNTIL:
		b->until = arg;
		return 0;
	case O_OUTPUT_FILE:
		b->output = arg;
		return 0;
	case O_JOB_SCRIPTS:
		b->job_scripts = 1;
		return 0;
	case O_FILE_CAP:
	case O_NODE_CAP:
	case O_TOTAL_CAP:
		if (bytes(arg, &n))
			return hp_cmd_usage_error("bundle", "--%s must be a size like 16M, 2G or 65536 "
						  "(4096 bytes to 64G; got '%s')",
						  code == O_FILE_CAP ? "file-cap" :
						  code == O_NODE_CAP ? "node-cap" : "total-cap", arg);
		if (code == O_FILE_CAP)
			b->file_cap = n > ((uint64_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
		else if (code == O_NODE_CAP)
			b->node_cap = n > ((uint64_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
		else
			b->total_cap = n;
		return 0;
	case O_KUBECONFIG:
		b->kubeconfig = arg;
		return 0;
	case O_KUBE_CONTEXT:
		b->kube_context = arg;
		return 0;
	case O_NO_KUBE:
		b->no_kube = 1;
		return 0;
	case O_CONCURRENCY:
		if (number(arg, 1, 64, &v) || v != (double)(long)v)
			return hp_cmd_usage_error("bundle", "--concurrency must be a whole number from 1 "
						  "to 64 (got '%s')", arg);
		b->probe.concurrency = (int)v;
		return 0;
	case O_SSM_RATE:
		if (number(arg, 0.1, 1000, &v))
			return hp_cmd_usage_error("bundle", "--ssm-rate must be a number from 0.1 to "
						  "1000 (got '%s')", arg);
		b->probe.rate_per_s = v;
		return 0;
	case O_UPLOAD: {
		char why[256];

		if (hp_s3_uri_parse(arg, &b->s3, why, sizeof(why)))
			return hp_cmd_usage_error("bundle", "--upload: %s (got '%s')", why, arg);
		b->upload = arg;
		return 0;
	}
	case O_SSE_KMS:
		if (!hp_cmd_match("^[A-Za-z0-9:/_.+=,@-]{1,2048}$", arg))
			return hp_cmd_usage_error("bundle", "--sse-kms-key-id must be a KMS key id, "
						  "alias or ARN (got '%s')", arg);
		b->kms_key_id = arg;
		return 0;
	case O_PROBE_TIMEOUT:
		if (number(arg, 1, 3600, &v) || v != (double)(long)v)
			return hp_cmd_usage_error("bundle", "--probe-timeout must be whole seconds from "
						  "1 to 3600 (got '%s')", arg);
		b->probe.timeout_ms = (long)v * 1000;
		return 0;
	}
	return HP_EXIT_USAGE;
}

static void bundle_init(struct hp_cmd_ctx *c)
{
	struct bundle_args *b = c->args;

	hp_probe_opts_defaults(&b->probe);
	b->probe.concurrency = 8;
	b->probe.timeout_ms = 300000;
	/* Two sweeps (the triage probe, then the node script): an hour unless --max-runtime says. */
	c->o.max_runtime_s = 3600;
	b->file_cap = DEFAULT_FILE_CAP;
	b->node_cap = DEFAULT_NODE_CAP;
	b->total_cap = DEFAULT_TOTAL_CAP;
}

static int utc_time(const char *s, int64_t *out)
{
	struct hp_iso8601 t;

	if (hp_iso8601_parse(s, NULL, &t))
		return -1;
	*out = t.sec;
	return 0;
}

static int bundle_check(struct hp_cmd_ctx *c)
{
	struct bundle_args *b = c->args;
	int64_t now = c->sys->now_ms(c->sys) / 1000, d = DEFAULT_SINCE_S;
	int choices = (b->n_nodes > 0) + (b->probe.sample > 0) + b->all;

	if (choices > 1)
		return hp_cmd_usage_error("bundle", "%s", "--node, --sample and --all cannot be combined");
	if (b->since && (b->from || b->until))
		return hp_cmd_usage_error("bundle", "%s", "--since cannot be combined with --from/--until");
	if (b->since && duration(b->since, &d))
		return hp_cmd_usage_error("bundle", "--since must be a duration like 90s, 30m, 6h or "
					  "2d (got '%s')", b->since);
	b->until_s = now;
	b->from_s = now - d;
	if (b->from && utc_time(b->from, &b->from_s))
		return hp_cmd_usage_error("bundle", "--from must be a time like 2026-12-01T03:00:00Z "
					  "(got '%s')", b->from);
	if (b->until && utc_time(b->until, &b->until_s))
		return hp_cmd_usage_error("bundle", "--until must be a time like 2026-12-01T09:00:00Z "
					  "(got '%s')", b->until);
	if (b->until && !b->from)
		b->from_s = b->until_s - DEFAULT_SINCE_S;
	if (b->from_s >= b->until_s)
		return hp_cmd_usage_error("bundle", "%s", "the window is empty: --from must be before "
					  "--until");
	if (b->file_cap > b->node_cap)
		b->node_cap = b->file_cap;
	if (b->kms_key_id && !b->upload)
		return hp_cmd_usage_error("bundle", "%s", "--sse-kms-key-id needs --upload");
	if (b->upload) {
		char key[1100];
		const char *name = b->output ? b->output : "hpnode-bundle.tar.gz";

		if (hp_s3_key(&b->s3, name, key, sizeof(key)))
			return hp_cmd_usage_error("bundle", "--upload: the object key '%s' + the "
						  "archive's name is longer than S3 allows", b->s3.prefix);
	}
	return 0;
}

/* ---- the archive ---- */

struct arch {
	struct hp_sys *sys;
	struct hp_file_out *out;
	struct hp_tgz *tgz;
	pthread_mutex_t lock;
	uint64_t total, total_cap;
	size_t file_cap, node_cap;
	int total_hit, failed;
	cJSON *files;             /* MANIFEST.json "files" */
	cJSON *nodes;             /* MANIFEST.json "nodes": {iid: {...}} */
	size_t redactions[HP_RK__COUNT];
	size_t nfiles, nomitted;
};

static void sha256_hex(const void *p, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;
	int i;

	EVP_Digest(p, n, md, &len, EVP_sha256(), NULL);
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* A manifest row for name, with the facts every row has. */
static cJSON *row(struct arch *a, const char *path, const char *node, const char *source)
{
	cJSON *r = cJSON_CreateObject();
	char clean[512];

	cJSON_AddStringToObject(r, "path", path);
	if (node)
		cJSON_AddStringToObject(r, "node", node);
	else
		cJSON_AddNullToObject(r, "node");
	hp_text_str(HP_TEXT_SAFE, source ? source : "", clean, sizeof(clean));
	cJSON_AddStringToObject(r, "source", clean);
	cJSON_AddItemToArray(a->files, r);
	return r;
}

/* What one add may say about the file besides its bytes. */
struct meta {
	const char *node, *source;
	size_t sent;               /* bytes collected, before the cap (0: len) */
	int cut, exit_code;        /* exit_code -1: none */
	const char *note;
	size_t *node_used;         /* the node's bytes so far, or NULL */
	int no_file_cap;           /* the snapshot and reports: whole or not at all */
	int always;                /* README.txt: past the total cap too (it says so) */
};

/*
 * Redact data and add it as path, with its manifest row; caps checked.
 * Called under a->lock.
 */
static void add_locked(struct arch *a, const char *path, const char *data, size_t n,
		       const struct meta *m)
{
	struct hp_buf red = HP_BUF_INIT(n * 5 + 4096);
	struct hp_redact r;
	cJSON *row_ = row(a, path, m->node, m->source), *counts;
	char sha[65];
	int cut = m->cut, k;

	if (!hp_tar_name_ok(path)) {
		cJSON_AddStringToObject(row_, "omitted", "a name the archive cannot hold");
		a->nomitted++;
		return;
	}
	if (!m->no_file_cap && n > a->file_cap) {
		data += n - a->file_cap;
		n = a->file_cap;
		cut = 1;
	}
	hp_redact_init(&r);
	if (hp_redact(&r, data, n, &red)) {
		cJSON_AddStringToObject(row_, "omitted", "redaction made it larger than its bound");
		a->nomitted++;
		goto out;
	}
	if (!m->always && (a->total_hit || a->total + red.len + 1024 > a->total_cap)) {
		a->total_hit = 1;
		cJSON_AddStringToObject(row_, "omitted", "the archive's total cap was reached");
		a->nomitted++;
		goto out;
	}
	if (m->node_used && *m->node_used + red.len > a->node_cap) {
		cJSON_AddStringToObject(row_, "omitted", "the node's cap was reached");
		a->nomitted++;
		goto out;
	}
	sha256_hex(red.buf, red.len, sha);
	if (hp_tgz_add(a->tgz, path, red.buf, red.len)) {
		a->failed = errno ? errno : EIO;
		cJSON_AddStringToObject(row_, "omitted", "the archive could not be written");
		goto out;
	}
	a->total += red.len + 512 + (512 - red.len % 512) % 512;
	if (m->node_used)
		*m->node_used += red.len;
	a->nfiles++;
	cJSON_AddNumberToObject(row_, "size", (double)red.len);
	cJSON_AddNumberToObject(row_, "collected_bytes", (double)(m->sent ? m->sent : n));
	cJSON_AddStringToObject(row_, "sha256", sha);
	cJSON_AddBoolToObject(row_, "cut_at_cap", cut);
	if (m->exit_code >= 0)
		cJSON_AddNumberToObject(row_, "exit_code", m->exit_code);
	counts = cJSON_AddObjectToObject(row_, "redactions");
	for (k = 0; k < HP_RK__COUNT; k++) {
		if (!r.counts[k])
			continue;
		cJSON_AddNumberToObject(counts, hp_redact_kind_name((enum hp_redact_kind)k),
					(double)r.counts[k]);
		a->redactions[k] += r.counts[k];
	}
out:
	if (m->note)
		cJSON_AddStringToObject(row_, "note", m->note);
	hp_redact_release(&r);
	hp_buf_release(&red);
}

static void add(struct arch *a, const char *path, const char *data, size_t n, const struct meta *m)
{
	pthread_mutex_lock(&a->lock);
	add_locked(a, path, data, n, m);
	pthread_mutex_unlock(&a->lock);
}

/* A file that is not there: a row that says why, nothing in the archive. */
static void absent(struct arch *a, const char *path, const char *node, const char *source,
		   const char *why)
{
	cJSON *r;

	pthread_mutex_lock(&a->lock);
	r = row(a, path, node, source);
	cJSON_AddStringToObject(r, "absent", why);
	pthread_mutex_unlock(&a->lock);
}

static void add_json(struct arch *a, const char *path, const cJSON *j, const char *source)
{
	struct meta m = { NULL, source, 0, 0, -1, NULL, NULL, 1, 0 };
	char *text;

	if (!j) {
		absent(a, path, NULL, source, "not collected (see the snapshot's calls)");
		return;
	}
	text = cJSON_Print(j);
	add(a, path, text, strlen(text), &m);
	free(text);
}

/* ---- the snapshot, kept in memory while it is written ---- */

struct mem_file {
	struct hp_file_out f;
	struct hp_buf *b;
};

struct mem_sys {
	struct hp_sys sys;
	struct hp_buf snap;
};

static int mem_write(struct hp_file_out *f, const void *p, size_t n)
{
	struct mem_file *m = f->impl;

	if (hp_buf_add(m->b, p, n)) {
		errno = EFBIG;
		return -1;
	}
	return 0;
}

static int mem_commit(struct hp_file_out *f)
{
	free(f->impl);
	return 0;
}

static void mem_abort(struct hp_file_out *f)
{
	struct mem_file *m = f->impl;

	hp_buf_release(m->b);
	free(m);
}

static struct hp_file_out *mem_open(struct hp_sys *sys, const char *path, int mode)
{
	struct mem_sys *ms = (struct mem_sys *)sys;
	struct mem_file *m = xcalloc(1, sizeof(*m));

	(void)path;
	(void)mode;
	hp_buf_reset(&ms->snap);
	m->b = &ms->snap;
	m->f.write = mem_write;
	m->f.commit = mem_commit;
	m->f.abort = mem_abort;
	m->f.impl = m;
	return &m->f;
}

/* ---- nodes ---- */

struct sweep_ctx {
	struct arch *a;
	const struct hp_bundle_opts *bo;
	const char *iid;
	size_t used;
	size_t nfiles, absent;
};

static void node_file(void *ud, const struct hp_bundle_file *f)
{
	struct sweep_ctx *x = ud;
	char path[256];
	struct meta m;

	snprintf(path, sizeof(path), "nodes/%s/%s", x->iid, f->name);
	if (f->state == HP_BF_ABSENT) {
		absent(x->a, path, x->iid, f->source, "not on the node (no such file or command)");
		x->absent++;
		return;
	}
	memset(&m, 0, sizeof(m));
	m.node = x->iid;
	m.source = f->source;
	m.sent = f->size;
	m.cut = f->cut;
	m.exit_code = f->exit_code;
	m.node_used = &x->used;
	if (f->state == HP_BF_PARTIAL)
		m.note = "the node's output ended inside this file (per-node cap or session end)";
	add(x->a, path, f->data, f->len, &m);
	x->nfiles++;
	/* The NCCL probe's facts, decoded as `hpnode nccl` decodes them. */
	if (!strcmp(f->name, "nccl/nccl-probe.txt") && f->state == HP_BF_OK && f->len) {
		cJSON *facts = hp_nccl_probe_parse(f->data, f->len);
		char *text = facts ? cJSON_Print(facts) : NULL;

		if (text) {
			struct meta fm = m;
			fm.source = "the NCCL probe's facts (hp_nccl_probe_parse)";
			fm.sent = 0;
			fm.cut = 0;
			fm.exit_code = -1;
			fm.note = NULL;
			snprintf(path, sizeof(path), "nodes/%s/nccl/facts.json", x->iid);
			add(x->a, path, text, strlen(text), &fm);
		}
		free(text);
		cJSON_Delete(facts);
	}
}

struct node_hook {
	struct arch *a;
	const struct hp_bundle_opts *bo;
};

/* A node's session is over (in its worker): its files into the archive, its output dropped. */
static void on_output(void *ud, const char *iid, struct hp_ssm_result *r)
{
	struct node_hook *h = ud;
	struct sweep_ctx x;
	cJSON *n;
	int complete = 0;

	memset(&x, 0, sizeof(x));
	x.a = h->a;
	x.bo = h->bo;
	x.iid = iid;
	if (r->state == HP_SSM_PROBED || r->output.out.len)
		hp_bundle_parse(h->bo, r->output.out.buf, r->output.out.len, node_file, &x, &complete);
	pthread_mutex_lock(&h->a->lock);
	n = cJSON_CreateObject();
	cJSON_AddStringToObject(n, "state", hp_ssm_state_name(r->state));
	cJSON_AddStringToObject(n, "reason", r->reason);
	cJSON_AddBoolToObject(n, "complete", complete);
	cJSON_AddBoolToObject(n, "output_capped", r->output.out_capped);
	cJSON_AddNumberToObject(n, "files", (double)x.nfiles);
	cJSON_AddNumberToObject(n, "absent", (double)x.absent);
	cJSON_AddNumberToObject(n, "bytes", (double)x.used);
	if (r->state == HP_SSM_PROBED && !complete)
		cJSON_AddStringToObject(n, "note", r->output.out_capped ?
					"the node's output passed the per-node cap; later files are missing" :
					"the node script did not finish; later files are missing");
	cJSON_DeleteItemFromObject(h->a->nodes, iid);
	cJSON_AddItemToObject(h->a->nodes, iid, n);
	pthread_mutex_unlock(&h->a->lock);
	hp_buf_release(&r->output.out);
}

static cJSON *no_facts(const char *text, size_t len)
{
	(void)text;
	(void)len;
	return NULL;
}

static const char *str_or_empty(const char *v)
{
	return v ? v : "";
}

/* Every chosen node, collected or not (then with the reason), with its group and type. */
static void node_rows(struct arch *a, const struct hp_snapshot *s)
{
	const char **ids = NULL;
	size_t i, k = hp_probes_ids(s, "bundle_probes", &ids);

	for (i = 0; i < k; i++) {
		struct hp_probe_iter it;
		const cJSON *ent = hp_probes_find(s, "bundle_probes", ids[i], &it);
		cJSON *n = cJSON_GetObjectItemCaseSensitive(a->nodes, ids[i]);

		if (!n) {
			n = cJSON_CreateObject();
			cJSON_AddStringToObject(n, "state", str_or_empty(hp_json_str(ent, "state")));
			cJSON_AddStringToObject(n, "reason", str_or_empty(hp_json_str(ent, "reason")));
			cJSON_AddNumberToObject(n, "files", 0);
			cJSON_AddItemToObject(a->nodes, ids[i], n);
		}
		cJSON_AddStringToObject(n, "group", str_or_empty(hp_json_str(ent, "group")));
		cJSON_AddStringToObject(n, "instance_type", str_or_empty(hp_json_str(ent, "instance_type")));
		cJSON_AddBoolToObject(n, "collected", !strcmp(str_or_empty(hp_json_str(n, "state")), "probed"));
		hp_probes_end(&it);
	}
	free(ids);
}

/* ---- cluster-level files ---- */

/* The events of the window (those without a readable time are kept). */
static cJSON *events_in(const cJSON *events, int64_t from_s, int64_t until_s)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *e;

	cJSON_ArrayForEach(e, events) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "EventTime");
		int64_t when = -1;
		struct hp_iso8601 iso;

		if (cJSON_IsNumber(t))
			when = (int64_t)t->valuedouble;
		else if (cJSON_IsString(t) && !hp_iso8601_parse(t->valuestring, NULL, &iso))
			when = iso.sec;
		if (when < 0 || (when >= from_s && when <= until_s))
			cJSON_AddItemToArray(out, cJSON_Duplicate(e, 1));
	}
	return out;
}

struct cw_ctx {
	struct arch *a;
};

static void cw_file(void *ud, const char *name, const char *text, size_t len, const char *note)
{
	struct cw_ctx *x = ud;
	struct meta m = { NULL, "logs:FilterLogEvents of the window", 0, 0, -1, note, NULL, 0, 0 };

	if (!text) {
		absent(x->a, name, NULL, m.source, note);
		return;
	}
	add(x->a, name, text, len, &m);
}

static void iso(int64_t s, char out[32])
{
	hp_bundle_utc(s * 1000, out);
}

/* kubectl's output, of which the last `keep` bytes are held (2 x keep at most). */
struct tail_buf {
	struct hp_buf b;
	size_t keep;
	uint64_t total;
};

static void tail_out(void *ud, const char *data, size_t n)
{
	struct tail_buf *t = ud;

	t->total += n;
	if (n >= t->keep) {
		hp_buf_reset(&t->b);
		data += n - t->keep;
		n = t->keep;
	} else if (t->b.len + n > 2 * t->keep) {
		size_t drop = t->b.len + n - t->keep;

		memmove(t->b.buf, t->b.buf + drop, t->b.len - drop);
		t->b.len -= drop;
		t->b.buf[t->b.len] = '\0';
	}
	if (hp_buf_add(&t->b, data, n))
		hp_die("out of memory");
}

/* One `kubectl logs` into path: its last --file-cap bytes, or a row that says why not. */
static void kube_log(struct hp_kube *k, struct arch *a, const char *const *args, const char *path,
		     const char *source)
{
	struct tail_buf t = { HP_BUF_INIT(2 * a->file_cap + 1), a->file_cap, 0 };
	struct hp_kube_result r;

	if (hp_kube_stream(k, args, tail_out, &t, 0, 0, &r) && r.status != HP_KUBE_TOO_BIG) {
		char why[600];

		snprintf(why, sizeof(why), "kubectl logs failed (%s): %s", hp_kube_status_name(r.status),
			 r.message);
		absent(a, path, NULL, source, why);
	} else {
		struct meta m = { NULL, source, (size_t)t.total, t.total > t.b.len, -1,
				  r.status == HP_KUBE_TOO_BIG ? "kubectl's output passed its cap; the "
				  "last bytes read are kept" : NULL, NULL, 0, 0 };

		add(a, path, t.b.buf, t.b.len, &m);
	}
	hp_kube_result_release(&r);
	hp_buf_release(&t.b);
}

/*
 * The logs of every kube-system pod (EKS; at most 200 pods) since the
 * window's start, every container with its name and timestamps, and the
 * previous container's log of every container that restarted (a crash
 * loop's own log is often empty); each its last --file-cap bytes, redacted
 * like the rest: kubernetes/logs/kube-system/.
 */
static void kube_system_logs(struct hp_cmd_ctx *c, const struct hp_snapshot *s, struct arch *a)
{
	struct bundle_args *b = c->args;
	const cJSON *kube = hp_snapshot_get(s, "kube"), *pod;
	struct hp_kube_opts ko;
	struct hp_kube k;
	char since[64], from[32];
	int n = 0;

	if (!kube || b->no_kube || hp_json_get(kube, "skipped"))
		return;
	memset(&ko, 0, sizeof(ko));
	ko.kubeconfig = b->kubeconfig;
	ko.context = b->kube_context;
	ko.aws_profile = c->o.profile;
	hp_kube_init(&k, c->sys, &ko);
	k.deadline_ms = c->aws->deadline_ms;
	k.budget_s = c->aws->budget_s;
	iso(b->from_s, from);
	snprintf(since, sizeof(since), "--since-time=%s", from);
	cJSON_ArrayForEach(pod, hp_json_arr(kube, "pods")) {
		const char *ns = hp_json_str(pod, "namespace"), *name = hp_json_str(pod, "name");
		const char *args[] = { "logs", "--namespace", "kube-system", name, "--all-containers=true",
				       "--prefix=true", "--timestamps=true", since, NULL };
		const cJSON *ct;
		char path[320], source[400];

		if (!ns || !name || strcmp(ns, "kube-system"))
			continue;
		snprintf(path, sizeof(path), "kubernetes/logs/kube-system/%s.log", name);
		snprintf(source, sizeof(source), "kubectl logs -n kube-system %s --all-containers "
			 "--prefix --timestamps %s", name, since);
		if (n++ >= KUBE_LOG_PODS) {
			absent(a, path, NULL, source, "more than 200 kube-system pods: the rest are left out");
			continue;
		}
		kube_log(&k, a, args, path, source);
		cJSON_ArrayForEach(ct, hp_json_arr(pod, "containers")) {
			const char *cn = hp_json_str(ct, "name");
			const char *pargs[] = { "logs", "--namespace", "kube-system", name, "--container",
						cn, "--previous=true", "--timestamps=true", NULL };

			if (!cn || (hp_json_num(ct, "restarts", 0) <= 0 && !hp_json_get(ct, "last_reason")))
				continue;
			snprintf(path, sizeof(path), "kubernetes/logs/kube-system/%s.%s.previous.log", name, cn);
			snprintf(source, sizeof(source), "kubectl logs -n kube-system %s -c %s --previous "
				 "--timestamps", name, cn);
			kube_log(&k, a, pargs, path, source);
		}
	}
	hp_kube_release(&k);
}

static void add_guides(struct arch *a)
{
	const char *name;
	size_t i;

	for (i = 0; (name = hp_refdoc_embedded_name(i)); i++) {
		const char *text = hp_refdoc_embedded(name);
		struct meta m = { NULL, "built into hpnode " HP_VERSION, 0, 0, -1, NULL, NULL, 1, 0 };
		char path[256];

		snprintf(path, sizeof(path), "guides/%s", name);
		if (text)
			add(a, path, text, strlen(text), &m);
	}
}

/* The node table of a README: one row per node, in the words of its language. */
static void readme_nodes(const struct arch *a, struct hp_buf *out, const char *files,
			 const char *not_collected, const char *cut_short, const char *none)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, a->nodes) {
		char reason[400];

		hp_text_str(HP_TEXT_SAFE, str_or_empty(hp_json_str(n, "reason")), reason,
			    sizeof(reason));
		hp_buf_printf(out, "  %-20s %-12s %4d %s  %s%s%s\n", n->string,
			      str_or_empty(hp_json_str(n, "state")), (int)hp_json_num(n, "files", 0),
			      files, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(n, "collected")) ?
			      "" : not_collected, reason, hp_json_str(n, "note") ? cut_short : "");
	}
	if (!cJSON_GetArraySize(a->nodes))
		hp_buf_puts(out, none);
}

/* The README.txt at the archive's root: what is where, the window, every node. */
static void readme(struct arch *a, const struct bundle_args *b, const struct hp_snapshot *s,
		   struct hp_buf *out)
{
	char from[32], until[32], clean[512];

	iso(b->from_s, from);
	iso(b->until_s, until);
	hp_text_str(HP_TEXT_SAFE, hp_snap_cluster_name(s), clean, sizeof(clean));
	hp_buf_printf(out,
		      "hpnode support bundle\n"
		      "=====================\n\n"
		      "Cluster: %s\nWindow:  %s to %s (UTC)\nhpnode:  %s\n\n"
		      "Everything here was read, never changed: files and read-only tool output\n"
		      "from each node over SSM, and the cluster's records from the AWS APIs and\n"
		      "Kubernetes. Secrets were replaced by [REDACTED:<kind>] before any byte was\n"
		      "written; MANIFEST.json counts them per file (never the values).\n\n"
		      "Where to look\n"
		      "-------------\n"
		      "  reports/triage.txt          the triage of this run (also .json, junit.xml)\n"
		      "  cluster/                    DescribeCluster, the node list, the events of the window,\n"
		      "                              the triage snapshot (hpnode triage --snapshot FILE replays it)\n"
		      "  cloudwatch/                 lifecycle-script and health-agent streams of the window\n"
		      "  kubernetes/                 the Kubernetes objects the triage read, and logs/kube-system/:\n"
		      "                              each kube-system pod's log of the window (EKS clusters)\n"
		      "  nodes/<instance-id>/        per node: journal/ (the window), kernel/, provision/,\n"
		      "                              lifecycle/, gpu/, efa/, nvme/, system/, limits/, nccl/, slurm/\n"
		      "  guides/                     the reference guides the report's § pointers name\n"
		      "  MANIFEST.json               every file: node, source, size, sha256, cut, redactions;\n"
		      "                              every node that could not be collected, and why\n\n"
		      "What happened on node X between T1 and T2: nodes/X/journal/all.log holds the\n"
		      "node's journal of the window (kernel.log, kubelet.log, ... the same by unit),\n"
		      "reports/triage.txt the findings on X, cluster/events.json the cluster's events.\n"
		      "A file longer than the cap (%zu bytes) keeps its last bytes (cut_at_cap).\n\n"
		      "Nodes\n-----\n",
		      clean, from, until, HP_VERSION, b->file_cap);
	readme_nodes(a, out, "files", "NOT COLLECTED: ", " (cut short)", "  (no node was chosen)\n");
	if (a->total_hit)
		hp_buf_printf(out, "\nThe total cap (%llu bytes) was reached: MANIFEST.json lists the files "
			      "left out (\"omitted\").\n", (unsigned long long)a->total_cap);
}

/* README.ja.txt: the same guide to the archive in Japanese (file names and states as they are). */
static void readme_ja(struct arch *a, const struct bundle_args *b, const struct hp_snapshot *s,
		      struct hp_buf *out)
{
	char from[32], until[32], clean[512];

	iso(b->from_s, from);
	iso(b->until_s, until);
	hp_text_str(HP_TEXT_SAFE, hp_snap_cluster_name(s), clean, sizeof(clean));
	hp_buf_printf(out,
		      "hpnode サポートバンドル\n"
		      "=======================\n\n"
		      "クラスター: %s\n対象期間:   %s から %s まで (UTC)\nhpnode:     %s\n\n"
		      "ここにあるものはすべて読み取っただけで、何も変更していません。各ノードのファイルと\n"
		      "読み取り専用コマンドの出力は SSM 経由で、クラスターの記録は AWS API と Kubernetes\n"
		      "から取得しました。秘密情報はアーカイブに書き込む前に [REDACTED:<種類>] に置き換え\n"
		      "ています。MANIFEST.json にはファイルごとの置き換え件数だけを記録し、値そのものは\n"
		      "どこにも残しません。\n\n"
		      "見る場所\n"
		      "--------\n"
		      "  reports/triage.txt          この実行のトリアージ結果 (.json と junit.xml も同じ内容)\n"
		      "  cluster/                    DescribeCluster、ノード一覧、対象期間のイベント、\n"
		      "                              トリアージのスナップショット (hpnode triage --snapshot で再生可)\n"
		      "  cloudwatch/                 対象期間のライフサイクルスクリプトとヘルスエージェントのログ\n"
		      "  kubernetes/                 トリアージが読んだ Kubernetes のオブジェクトと、logs/kube-system/ に\n"
		      "                              kube-system の各 Pod の対象期間のログ (EKS)\n"
		      "  nodes/<インスタンスID>/     ノードごと: journal/ (対象期間)、kernel/、provision/、\n"
		      "                              lifecycle/、gpu/、efa/、nvme/、system/、limits/、nccl/、slurm/\n"
		      "  guides/                     レポートの § が指すリファレンスガイド\n"
		      "                              (guides/ja/ にその日本語版)\n"
		      "  MANIFEST.json               全ファイルのノード、取得元、サイズ、sha256、切り詰めの有無、\n"
		      "                              置き換え件数と、取得できなかったノードとその理由\n\n"
		      "ノード X で T1 から T2 の間に何が起きたか: nodes/X/journal/all.log に対象期間の\n"
		      "ジャーナル全体があります (kernel.log、kubelet.log などはユニット別)。X に関する\n"
		      "所見は reports/triage.txt、クラスターのイベントは cluster/events.json にあります。\n"
		      "上限 (%zu バイト) を超えたファイルは末尾だけを残しています (cut_at_cap)。\n\n"
		      "ノード\n------\n",
		      clean, from, until, HP_VERSION, b->file_cap);
	readme_nodes(a, out, "ファイル", "取得できず: ", " (途中で切断)",
		     "  (対象のノードはありません)\n");
	if (a->total_hit)
		hp_buf_printf(out, "\n全体の上限 (%llu バイト) に達しました。入らなかったファイルは "
			      "MANIFEST.json に \"omitted\" として記録しています。\n",
			      (unsigned long long)a->total_cap);
}

static cJSON *manifest(struct arch *a, struct hp_cmd_ctx *c, const struct bundle_args *b,
		       const struct hp_snapshot *s, int64_t wall0)
{
	cJSON *m = cJSON_CreateObject(), *w, *argv, *red, *caps;
	struct hp_buf line = HP_BUF_INIT(HP_MAX_LINE);
	char t[32], clean[1024];
	int i, k;

	cJSON_AddStringToObject(m, "schema", "hpnode.bundle/1");
	cJSON_AddStringToObject(m, "hpnode_version", HP_VERSION);
	if (hp_revision())
		cJSON_AddStringToObject(m, "revision", hp_revision());
	hp_bundle_utc(wall0, t);
	cJSON_AddStringToObject(m, "started_at", t);
	hp_bundle_utc(c->sys->now_ms(c->sys), t);
	cJSON_AddStringToObject(m, "finished_at", t);
	w = cJSON_AddObjectToObject(m, "window");
	iso(b->from_s, t);
	cJSON_AddStringToObject(w, "from", t);
	iso(b->until_s, t);
	cJSON_AddStringToObject(w, "until", t);
	argv = cJSON_AddArrayToObject(m, "arguments");
	hp_buf_puts(&line, "hpnode bundle");
	for (i = 1; i < c->full_argc; i++) {
		hp_text_str(HP_TEXT_SAFE, c->full_argv[i], clean, sizeof(clean));
		cJSON_AddItemToArray(argv, cJSON_CreateString(clean));
		hp_buf_printf(&line, " %s", clean);
	}
	cJSON_AddStringToObject(m, "command_line", line.buf);
	hp_buf_release(&line);
	cJSON_AddStringToObject(m, "cluster", hp_snap_cluster_name(s));
	if (hp_snap_cluster_arn(s))
		cJSON_AddStringToObject(m, "cluster_arn", hp_snap_cluster_arn(s));
	cJSON_AddStringToObject(m, "region", str_or_empty(hp_json_str(hp_snapshot_get(s, "meta"), "region")));
	cJSON_AddStringToObject(m, "caller", str_or_empty(hp_json_str(hp_snapshot_get(s, "identity"), "Arn")));
	cJSON_AddStringToObject(m, "account",
				str_or_empty(hp_json_str(hp_snapshot_get(s, "identity"), "Account")));
	caps = cJSON_AddObjectToObject(m, "caps");
	cJSON_AddNumberToObject(caps, "file", (double)a->file_cap);
	cJSON_AddNumberToObject(caps, "node", (double)a->node_cap);
	cJSON_AddNumberToObject(caps, "total", (double)a->total_cap);
	cJSON_AddBoolToObject(caps, "total_reached", a->total_hit);
	red = cJSON_AddObjectToObject(m, "redactions");
	for (k = 0; k < HP_RK__COUNT; k++)
		cJSON_AddNumberToObject(red, hp_redact_kind_name((enum hp_redact_kind)k),
					(double)a->redactions[k]);
	cJSON_AddNumberToObject(m, "files_added", (double)a->nfiles);
	cJSON_AddNumberToObject(m, "files_omitted", (double)a->nomitted);
	cJSON_AddItemToObject(m, "nodes", a->nodes);
	cJSON_AddItemToObject(m, "files", a->files);
	a->nodes = a->files = NULL;
	return m;
}

/* hpnode-bundle-<cluster>-<20261201T035820Z>.tar.gz in the current directory. */
static void default_name(struct hp_cmd_ctx *c, char *out, size_t n)
{
	char t[32], name[80];
	size_t i, k = 0;
	const char *cl = c->cluster ? c->cluster : "cluster";
	const char *slash = strrchr(cl, '/');

	if (slash)
		cl = slash + 1;
	for (i = 0; cl[i] && k + 1 < sizeof(name); i++)
		name[k++] = (char)(((cl[i] >= 'a' && cl[i] <= 'z') || (cl[i] >= 'A' && cl[i] <= 'Z') ||
				    (cl[i] >= '0' && cl[i] <= '9') || cl[i] == '-') ? cl[i] : '_');
	name[k] = '\0';
	hp_bundle_utc(c->sys->now_ms(c->sys), t);
	for (i = 0, k = 0; t[i]; i++)
		if (t[i] != '-' && t[i] != ':')
			t[k++] = t[i];
	t[k] = '\0';
	snprintf(out, n, "hpnode-bundle-%s-%s.tar.gz", name, t);
}

/* The AWS and Kubernetes half: a triage's collection into s. -1 with e set when fatal. */
static int collect(struct hp_cmd_ctx *c, struct hp_snapshot *s, struct hp_error *e)
{
	struct bundle_args *b = c->args;
	struct hp_collect_opts co;
	struct hp_kube_opts ko;
	struct hp_probe_set set;

	memset(&co, 0, sizeof(co));
	co.cluster = c->cluster;
	co.node = b->n_nodes == 1 ? b->nodes[0] : NULL;
	if (hp_collect_cluster(c->aws, &co, s, e))
		return -1;
	memset(&ko, 0, sizeof(ko));
	ko.kubeconfig = b->kubeconfig;
	ko.context = b->kube_context;
	ko.aws_profile = c->o.profile;
	ko.disabled = b->no_kube;
	hp_collect_kube(c->aws, &ko, s);
	memset(&set, 0, sizeof(set));
	set.ids = b->nodes;
	set.n = b->n_nodes;
	b->probe.node = co.node;
	hp_cmd_catch_signals();
	b->probe.stop = hp_cmd_stop_flag();
	hp_collect_probes_set(c->aws, &b->probe, b->n_nodes ? &set : NULL, s);
	hp_collect_slurm_controller(c->aws, &b->probe, 1, s);
	return 0;
}

/* Each node the triage chose, through the node script; files into the archive as they come. */
static void sweep_nodes(struct hp_cmd_ctx *c, struct hp_snapshot *s, struct arch *a,
			const struct hp_bundle_opts *bo)
{
	struct bundle_args *b = c->args;
	struct hp_buf cmd = HP_BUF_INIT((size_t)1 << 20);
	struct hp_probe_opts po = b->probe;
	struct hp_probe_set set;
	struct node_hook hook;
	const char **ids = NULL;
	size_t n = hp_probes_ids(s, "probes", &ids);

	if (!n) {
		free(ids);
		return;
	}
	hp_bundle_command(bo, &cmd);
	hook.a = a;
	hook.bo = bo;
	memset(&set, 0, sizeof(set));
	set.ids = ids;
	set.n = n;
	set.command = cmd.buf;
	set.key = "bundle_probes";
	set.meta_key = "bundle_meta";
	set.selection = "bundle";
	set.decode = no_facts;
	set.on_output = on_output;
	set.on_output_ud = &hook;
	set.max_stdout = a->node_cap + ((size_t)1 << 20);
	po.node = NULL;
	po.sample = 0;
	po.progress = NULL;
	/* No node waits past the run budget. */
	if (hp_aws_budget_left_ms(c->aws) < po.timeout_ms)
		po.timeout_ms = hp_aws_budget_left_ms(c->aws) > 1000 ? (long)hp_aws_budget_left_ms(c->aws)
								     : 1000;
	hp_collect_probes_set(c->aws, &po, &set, s);
	free(ids);
	hp_buf_release(&cmd);
}

static void random_nonce(struct hp_sys *sys, char out[33])
{
	int i;

	for (i = 0; i < 4; i++)
		snprintf(out + 8 * i, 9, "%08x", (unsigned)sys->random(sys));
}

/* Everything but the set-up: the archive at path from the collected snapshot. */
static int write_bundle(struct hp_cmd_ctx *c, struct hp_snapshot *s, struct mem_sys *ms, int saved,
			const char *path, int64_t wall0, int64_t mono0)
{
	struct bundle_args *b = c->args;
	struct hp_sys *sys = c->sys;
	struct hp_buf rep[3] = { HP_BUF_INIT((size_t)1 << 30), HP_BUF_INIT((size_t)1 << 30),
				 HP_BUF_INIT((size_t)1 << 30) };
	static const char *const rep_names[3] = { "reports/triage.txt", "reports/triage.json",
						  "reports/junit.xml" };
	struct hp_findings f = { 0 };
	struct hp_bundle_opts bo;
	struct arch a;
	struct cw_ctx cw;
	struct meta m = { NULL, NULL, 0, 0, -1, NULL, NULL, 1, 0 };
	struct hp_buf text = HP_BUF_INIT((size_t)64 << 20);
	cJSON *man, *ev;
	char *mtext;
	int i, err, ncol = 0, nnot = 0;
	const cJSON *n;

	memset(&a, 0, sizeof(a));
	a.sys = sys;
	a.file_cap = b->file_cap;
	a.node_cap = b->node_cap;
	a.total_cap = b->total_cap;
	a.files = cJSON_CreateArray();
	a.nodes = cJSON_CreateObject();
	pthread_mutex_init(&a.lock, NULL);
	a.out = sys->open_write(sys, path, 0600);
	if (!a.out) {
		fprintf(stderr, "hpnode bundle: cannot write '%s': %s\n", path, strerror(errno));
		cJSON_Delete(a.files);
		cJSON_Delete(a.nodes);
		pthread_mutex_destroy(&a.lock);
		return HP_EXIT_FATAL;
	}
	a.tgz = hp_tgz_open(a.out, sys->now_ms(sys) / 1000);
	/* The triage of this run. */
	m.source = "hpnode triage of this run (--save-snapshot format)";
	if (saved)
		add(&a, "cluster/triage-snapshot.json", ms->snap.buf, ms->snap.len, &m);
	else
		absent(&a, "cluster/triage-snapshot.json", NULL, m.source,
		       "the snapshot passed its 512 MiB bound in memory or could not be written");
	hp_buf_release(&ms->snap);
	hp_facts_prepare(s);
	hp_cmd_reports(c, s, wall0, mono0, rep, &f);
	for (i = 0; i < 3; i++) {
		m.source = "hpnode triage report of this run";
		add(&a, rep_names[i], rep[i].buf, rep[i].len, &m);
		hp_buf_release(&rep[i]);
	}
	hp_findings_release(&f);
	add_json(&a, "cluster/describe-cluster.json", hp_snapshot_get(s, "cluster"),
		 "sagemaker:DescribeCluster");
	add_json(&a, "cluster/nodes.json", hp_snapshot_get(s, "nodes"), "sagemaker:ListClusterNodes");
	ev = hp_snapshot_get(s, "events") ? events_in(hp_snapshot_get(s, "events"), b->from_s, b->until_s)
					  : NULL;
	add_json(&a, "cluster/events.json", ev, "sagemaker:ListClusterEvents (the window)");
	cJSON_Delete(ev);
	{
		/* No "calls" member: every call succeeded. */
		cJSON *none = hp_snapshot_get(s, "calls") ? NULL : cJSON_CreateArray();

		add_json(&a, "cluster/calls.json", none ? none : hp_snapshot_get(s, "calls"),
			 "AWS calls that did not succeed");
		cJSON_Delete(none);
	}
	if (hp_snapshot_get(s, "kube"))
		add_json(&a, "kubernetes/kube.json", hp_snapshot_get(s, "kube"),
			 "kubectl get nodes, pods, daemonsets, events (read-only)");
	kube_system_logs(c, s, &a);
	cw.a = &a;
	hp_bundle_cloudwatch(c->aws, s, b->from_s, b->until_s, CW_PAGES, b->file_cap + 1, cw_file, &cw);
	add_guides(&a);
	/* The nodes. */
	memset(&bo, 0, sizeof(bo));
	bo.from_s = b->from_s;
	bo.until_s = b->until_s;
	bo.file_cap = b->file_cap;
	bo.job_scripts = b->job_scripts;
	random_nonce(sys, bo.nonce);
	sweep_nodes(c, s, &a, &bo);
	node_rows(&a, s);
	/* A --node the cluster does not have is named too, never dropped. */
	for (i = 0; i < (int)b->n_nodes; i++) {
		if (!cJSON_GetObjectItemCaseSensitive(a.nodes, b->nodes[i])) {
			cJSON *nn = cJSON_CreateObject();

			cJSON_AddStringToObject(nn, "state", "not found");
			cJSON_AddStringToObject(nn, "reason", "not in the cluster's node list");
			cJSON_AddNumberToObject(nn, "files", 0);
			cJSON_AddBoolToObject(nn, "collected", 0);
			cJSON_AddItemToObject(a.nodes, b->nodes[i], nn);
		}
	}
	cJSON_ArrayForEach(n, a.nodes) {
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(n, "collected")))
			ncol++;
		else
			nnot++;
	}
	readme(&a, b, s, &text);
	m.source = "hpnode bundle";
	m.always = 1;
	add(&a, "README.txt", text.buf, text.len, &m);
	hp_buf_reset(&text);
	readme_ja(&a, b, s, &text);
	add(&a, "README.ja.txt", text.buf, text.len, &m);
	hp_buf_release(&text);
	{
		size_t files = a.nfiles + 1, red = 0;
		int k;

		for (k = 0; k < HP_RK__COUNT; k++)
			red += a.redactions[k];
		man = manifest(&a, c, b, s, wall0);
		mtext = cJSON_Print(man);
		cJSON_Delete(man);
		/*
		 * The manifest, never listed in itself: hpnode's own words (paths,
		 * commands, counts, SSM's reasons), cleaned of control characters.
		 */
		if (hp_tgz_add(a.tgz, "MANIFEST.json", mtext, strlen(mtext)))
			a.failed = errno ? errno : EIO;
		free(mtext);
		err = hp_tgz_close(a.tgz) ? (errno ? errno : EIO) : a.failed;
		if (err) {
			a.out->abort(a.out);
		} else if (a.out->commit(a.out)) {
			err = errno ? errno : EIO;
		}
		pthread_mutex_destroy(&a.lock);
		if (err) {
			fprintf(stderr, "hpnode bundle: cannot write '%s': %s\n", path, strerror(err));
			return HP_EXIT_FATAL;
		}
		printf("hpnode bundle: wrote %s (%zu files, %zu left out; %d nodes collected, %d not "
		       "collected; %zu secrets redacted)\n", path, files + 1, a.nomitted, ncol, nnot, red);
	}
	return HP_EXIT_OK;
}

/* HPNODE_S3_MULTIPART_THRESHOLD / HPNODE_S3_PART_SIZE (tests): bytes, else 0 (the default). */
static uint64_t size_env(struct hp_sys *sys, const char *name)
{
	const char *v = hp_sys_env(sys, name);
	uint64_t n;

	return v && !bytes(v, &n) ? n : 0;
}

/* The archive at path into the --upload bucket; HP_EXIT_UPLOAD (archive kept) on failure. */
static int upload(struct hp_cmd_ctx *c, const char *path)
{
	struct bundle_args *b = c->args;
	struct hp_s3_put_opts o;
	struct hp_s3_put_result r;
	char key[1100], arn[1300];
	const char *bucket = b->s3.bucket;

	fflush(stdout);   /* the "wrote" line before anything the upload prints */
	if (hp_s3_key(&b->s3, path, key, sizeof(key))) {
		fprintf(stderr, "hpnode bundle: --upload: the object key is longer than S3 allows\n"
			"hpnode bundle: the archive is kept at %s\n", path);
		return HP_EXIT_UPLOAD;
	}
	memset(&o, 0, sizeof(o));
	o.path = path;
	o.bucket = bucket;
	o.key = key;
	o.kms_key_id = b->kms_key_id;
	o.threshold = size_env(c->sys, "HPNODE_S3_MULTIPART_THRESHOLD");
	o.part_size = size_env(c->sys, "HPNODE_S3_PART_SIZE");
	if (!hp_s3_put_file(c->aws, &o, &r)) {
		char parts[48];

		if (r.parts)
			snprintf(parts, sizeof(parts), "a multipart upload of %u part%s", r.parts,
				 r.parts == 1 ? "" : "s");
		else
			snprintf(parts, sizeof(parts), "one PutObject");
		printf("hpnode bundle: uploaded %s to %s (%llu bytes in %s; sha256 %s; checksum "
		       "confirmed by S3; server-side encryption %s)\n", path, r.url,
		       (unsigned long long)r.size, parts, r.sha256,
		       r.sse[0] ? r.sse : (b->kms_key_id ? "aws:kms requested" : "AES256 requested"));
		return HP_EXIT_OK;
	}
	snprintf(arn, sizeof(arn), "arn:%s:s3:::%s/%s", hp_starts_with(r.region, "cn-") ? "aws-cn" :
		 hp_starts_with(r.region, "us-gov-") ? "aws-us-gov" : "aws", bucket, key);
	fprintf(stderr, "hpnode bundle: upload to %s failed at %s: ", r.url, r.op);
	switch (r.fail) {
	case HP_S3_NO_BUCKET:
		fprintf(stderr, "the bucket '%s' does not exist (NoSuchBucket)", bucket);
		break;
	case HP_S3_DENIED:
		fprintf(stderr, "access denied (%s: %s); --upload needs s3:PutObject on %s%s", r.code,
			r.message, arn, b->kms_key_id ? ", and kms:GenerateDataKey and kms:Decrypt on "
			"the --sse-kms-key-id key" : "");
		break;
	case HP_S3_WRONG_REGION:
		if (r.bucket_region[0])
			fprintf(stderr, "the bucket '%s' is in region %s, not in %s where this run sends its "
				"requests (%s); name a bucket in %s, or copy the archive with: aws s3 cp "
				"%s s3://%s/%s --region %s", bucket, r.bucket_region, r.region, r.code,
				r.region, path, bucket, key, r.bucket_region);
		else
			fprintf(stderr, "the bucket '%s' is in another region than %s (%s: %s)", bucket,
				r.region, r.code, r.message);
		break;
	case HP_S3_AUTH:
		fprintf(stderr, "the credentials were refused (%s: %s)", r.code, r.message);
		break;
	case HP_S3_CHECKSUM:
		fprintf(stderr, "S3 did not store the bytes sent (%s: %s)", r.code, r.message);
		break;
	case HP_S3_LOCAL:
		fprintf(stderr, "cannot read the archive: %s", r.message);
		break;
	case HP_S3_NETWORK:
		fprintf(stderr, "no reply from S3 after %d attempts (%s: %s)", r.attempts, r.code, r.message);
		break;
	default:
		fprintf(stderr, "%s (HTTP %ld)%s%s", r.code, r.status, r.message[0] ? ": " : "", r.message);
		break;
	}
	fprintf(stderr, "%s\nhpnode bundle: the archive is kept at %s\n",
		r.aborted ? "; the multipart upload was aborted" : "", path);
	return HP_EXIT_UPLOAD;
}

static int bundle_run(struct hp_cmd_ctx *c)
{
	struct bundle_args *b = c->args;
	struct hp_sys *sys = c->sys;
	int64_t wall0 = sys->now_ms(sys), mono0 = sys->monotonic_ms(sys);
	struct hp_error e = HP_ERROR_INIT;
	struct hp_snapshot snap;
	struct hp_profile prof;
	struct hp_aws aws;
	struct mem_sys ms;
	char path[1024];
	int rc, saved;

	if (b->output)
		snprintf(path, sizeof(path), "%s", b->output);
	else
		default_name(c, path, sizeof(path));
	/* open_write's refusals (a symlink, a device, a directory) before anything is collected. */
	{
		struct hp_file_out *probe = sys->can_write(sys, path) ? NULL :
					    sys->open_write(sys, path, 0600);

		if (!probe) {
			fprintf(stderr, "hpnode bundle: cannot write '%s': %s; nothing was collected\n",
				path, strerror(errno));
			return HP_EXIT_USAGE;
		}
		probe->abort(probe);
	}
	hp_snapshot_init(&snap);
	memset(&prof, 0, sizeof(prof));
	memset(&aws, 0, sizeof(aws));
	rc = hp_cmd_aws_begin(c, &prof, &aws, &snap);
	/* The S3 endpoint of --upload, checked before anything is collected. */
	if (!rc && b->upload &&
	    hp_endpoint_resolve(sys, &prof, HP_SVC_S3, aws.region, c->o.endpoint,
				aws.endpoint[HP_SVC_S3], sizeof(aws.endpoint[HP_SVC_S3]), &e)) {
		fprintf(stderr, "hpnode bundle: --upload: %s; nothing was collected\n", e.msg);
		rc = hp_err_exit_status(e.code);
	}
	if (!rc) {
		c->aws = &aws;
		ms.sys = *sys;
		ms.sys.open_write = mem_open;
		hp_buf_init(&ms.snap, SNAPSHOT_MAX);
		hp_snapshot_stream_open(&snap, &ms.sys, "triage-snapshot.json", &e);
		if (collect(c, &snap, &e)) {
			rc = hp_cmd_fatal(&e, &snap, aws.region);
		} else {
			saved = !hp_snapshot_save(&snap, &ms.sys, "triage-snapshot.json", &e);
			rc = write_bundle(c, &snap, &ms, saved, path, wall0, mono0);
			if (rc == HP_EXIT_OK && b->upload && !*hp_cmd_stop_flag())
				rc = upload(c, path);
		}
		hp_buf_release(&ms.snap);
		hp_snapshot_stream_abort(&snap);
	}
	c->aws = NULL;
	hp_aws_release(&aws);
	hp_profile_release(&prof);
	hp_snapshot_release(&snap);
	if (!rc && *hp_cmd_stop_flag())
		rc = 128 + *hp_cmd_stop_flag();
	return rc;
}

const struct hp_cmd_ops hp_cmd_bundle = {
	.usage = "usage: hpnode bundle --cluster NAME|ARN [--region R] [--node i-... | --sample N | --all]\n"
		 "                     [--since 6h | --from T --until T] [--output-file FILE.tar.gz]\n"
		 "                     [--upload s3://BUCKET/PREFIX [--sse-kms-key-id K]]\n"
		 "\n"
		 "One archive for a support case: a triage of the cluster (snapshot and reports),\n"
		 "the cluster's records and CloudWatch streams of the window, the Kubernetes objects,\n"
		 "the guides, and per node its journal of the window, provisioning and lifecycle logs,\n"
		 "GPU, EFA, NVMe, memory, disk, process, sysctl and Slurm configuration files, read\n"
		 "over SSM with read-only commands. Secrets are redacted before anything is written;\n"
		 "MANIFEST.json lists every file and every node that could not be collected.\n"
		 "\n",
	.exit_text = "\n"
		     "The run budget (--max-runtime) is 3600 s for both sweeps unless given.\n"
		     "Exit status: 0 archive written (nodes that could not be collected are in its\n"
		     "MANIFEST.json), 1 fatal (AWS error, cluster not found, archive not written),\n"
		     "2 usage (also an output path that cannot be written), 4 credentials,\n"
		     "5 archive written but --upload failed (the archive is kept; its path is printed).\n",
	.options = bundle_options,
	.args_size = sizeof(struct bundle_args),
	.init = bundle_init,
	.option = bundle_option,
	.check = bundle_check,
	.run = bundle_run,
};
