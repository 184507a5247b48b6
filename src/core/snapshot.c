/*
 * The cluster snapshot (include/hp/snapshot.h): one cJSON document holding
 * every collected fact, beside the probe store of the facts cache, saved to
 * and loaded from a file, plus the getters checks share. It never talks to
 * AWS; collectors fill it.
 *
 * The file is written member by member in cJSON_Print's layout, through
 * sys->open_write, and the probe entries of a sweep may be written while
 * it runs (hp_snapshot_stream_*). It is read back member by member through
 * sys->open_read: a member that holds a probe sweep entry by entry into
 * the store, so memory follows the largest entry, not the file.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/facts.h"
#include "hp/json.h"
#include "hp/snapshot.h"

/* Bytes gathered before a write to the file. */
#define WRITE_CHUNK ((size_t)64 << 10)
/* Bytes asked of the file per read. */
#define READ_CHUNK ((size_t)64 << 10)

static cJSON *new_root(void)
{
	cJSON *root = cJSON_CreateObject();

	cJSON_AddItemToObject(root, "version", cJSON_CreateNumber(HP_SNAPSHOT_VERSION));
	return root;
}

void hp_snapshot_init(struct hp_snapshot *s)
{
	s->root = new_root();
	s->facts = NULL;
	s->stream = NULL;
}

void hp_snapshot_release(struct hp_snapshot *s)
{
	hp_snapshot_stream_abort(s);
	cJSON_Delete(s->root);
	s->root = NULL;
	hp_facts_free(s->facts);
	s->facts = NULL;
}

void hp_snapshot_set(struct hp_snapshot *s, const char *key, cJSON *item)
{
	if (!item)
		return;
	if (!s->root)
		s->root = new_root();
	/* What was decoded may have come from the key being replaced. */
	hp_facts_forget(s);
	if (cJSON_HasObjectItem(s->root, key))
		cJSON_ReplaceItemInObjectCaseSensitive(s->root, key, item);
	else
		cJSON_AddItemToObject(s->root, key, item);
}

const cJSON *hp_snapshot_get(const struct hp_snapshot *s, const char *key)
{
	if (!s->root)
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(s->root, key);
}

static void add_str(cJSON *obj, const char *key, const char *v)
{
	cJSON_AddItemToObject(obj, key, cJSON_CreateString(v ? v : ""));
}

void hp_snapshot_add_call(struct hp_snapshot *s, const char *service, const char *action,
			  const char *cls, const char *code, const char *message, long status)
{
	cJSON *calls, *call;

	if (!s->root)
		s->root = new_root();
	calls = cJSON_GetObjectItemCaseSensitive(s->root, "calls");
	if (!cJSON_IsArray(calls)) {
		calls = cJSON_CreateArray();
		hp_snapshot_set(s, "calls", calls);
	}
	call = cJSON_CreateObject();
	add_str(call, "service", service);
	add_str(call, "action", action);
	add_str(call, "class", cls);
	add_str(call, "code", code);
	{
		/* Replies can quote the endpoint URL: never its userinfo. */
		size_t n = message ? 2 * strlen(message) + 8 : 1;
		char *safe = xmalloc(n);

		hp_redact_urls(message ? message : "", safe, n);
		add_str(call, "message", safe);
		free(safe);
	}
	cJSON_AddItemToObject(call, "status", cJSON_CreateNumber((double)status));
	cJSON_AddItemToArray(calls, call);
}

/* ---------------------------------------------------------------- writing */

/* The file being written, and what was gathered for it. */
struct wfile {
	struct hp_file_out *out;
	struct hp_buf pend;
	int err;                /* the first write error (errno) */
	size_t members;         /* root members written so far */
};

struct hp_snap_stream {
	struct wfile w;
	char *path;             /* for messages */
	char *key;              /* the member whose entries are being written, or NULL */
	size_t entries;         /* written into it */
	char **done;            /* members written whole by the stream (and each "<key>_order") */
	size_t ndone, done_alloc;
};

static void w_flush(struct wfile *w)
{
	if (w->pend.len && !w->err && w->out->write(w->out, w->pend.buf, w->pend.len))
		w->err = errno ? errno : EIO;
	hp_buf_reset(&w->pend);
}

static void w_put(struct wfile *w, const void *p, size_t n)
{
	if (n >= WRITE_CHUNK) {
		w_flush(w);
		if (!w->err && w->out->write(w->out, p, n))
			w->err = errno ? errno : EIO;
		return;
	}
	if (w->pend.len + n > WRITE_CHUNK)
		w_flush(w);
	hp_buf_putn(&w->pend, p, n);
}

static void w_puts(struct wfile *w, const char *s)
{
	w_put(w, s, strlen(s));
}

/* n raw bytes as a JSON string, escaped as cJSON escapes them. */
static void w_str(struct wfile *w, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, from = 0;

	w_put(w, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];
		size_t k = 0;

		if (c >= 32 && c != '"' && c != '\\')
			continue;
		w_put(w, s + from, i - from);
		from = i + 1;
		esc[k++] = '\\';
		switch (c) {
		case '"': esc[k++] = '"'; break;
		case '\\': esc[k++] = '\\'; break;
		case '\b': esc[k++] = 'b'; break;
		case '\f': esc[k++] = 'f'; break;
		case '\n': esc[k++] = 'n'; break;
		case '\r': esc[k++] = 'r'; break;
		case '\t': esc[k++] = 't'; break;
		default:
			esc[k++] = 'u';
			esc[k++] = '0';
			esc[k++] = '0';
			esc[k++] = hex[c >> 4];
			esc[k++] = hex[c & 15];
		}
		w_put(w, esc, k);
	}
	w_put(w, s + from, n - from);
	w_put(w, "\"", 1);
}

/* A value as cJSON prints it: compact, or formatted one level in (root members). */
static void w_value(struct wfile *w, const cJSON *v, int formatted)
{
	char *text = formatted ? cJSON_Print(v) : cJSON_PrintUnformatted(v);
	const char *p, *nl;

	if (!text)
		hp_die("out of memory");
	if (!formatted) {
		w_puts(w, text);
	} else {
		/* Each line of the member one tab further in, as inside the root object. */
		for (p = text; (nl = strchr(p, '\n')); p = nl + 1) {
			w_put(w, p, (size_t)(nl - p) + 1);
			w_put(w, "\t", 1);
		}
		w_puts(w, p);
	}
	cJSON_free(text);
}

/* The next root member's start: "\t"key":\t", after a separator when one came before. */
static void w_member(struct wfile *w, const char *key)
{
	w_puts(w, w->members++ ? ",\n\t" : "\n\t");
	w_str(w, key, strlen(key));
	w_puts(w, ":\t");
}

static int w_open(struct wfile *w, struct hp_sys *sys, const char *path, struct hp_error *e)
{
	memset(w, 0, sizeof(*w));
	hp_buf_init(&w->pend, WRITE_CHUNK + 16);
	w->out = sys->open_write(sys, path, 0600);
	if (w->out) {
		w_puts(w, "{");
		return 0;
	}
	if (errno == ELOOP)
		return hp_error_set(e, HP_ERR_FILE, "cannot write snapshot '%s': it is a symbolic "
				    "link (write to the file itself)", path);
	if (errno == EINVAL)
		return hp_error_set(e, HP_ERR_FILE, "cannot write snapshot '%s': it exists and is "
				    "not a regular file", path);
	return hp_error_set(e, HP_ERR_FILE, "cannot write snapshot '%s': %s", path,
			    strerror(errno ? errno : EIO));
}

/* End the document and put the file in place; -1 with e set when anything failed. */
static int w_close(struct wfile *w, const char *path, struct hp_error *e)
{
	int err;

	w_puts(w, w->members ? "\n}\n" : "}\n");
	w_flush(w);
	hp_buf_release(&w->pend);
	err = w->err;
	if (err)
		w->out->abort(w->out);
	else if (w->out->commit(w->out))
		err = errno ? errno : EIO;
	w->out = NULL;
	if (err)
		return hp_error_set(e, HP_ERR_FILE, "cannot write snapshot '%s': %s", path,
				    strerror(err));
	return 0;
}

/* One probe entry: its members compact, the raw output in place of stdout/stderr when given. */
static void w_entry(struct wfile *w, const cJSON *entry, const char *out, size_t out_len,
		    const char *err, size_t err_len)
{
	const cJSON *c;
	int first = 1;

	if (!cJSON_IsObject(entry)) {
		w_value(w, entry, 0);
		return;
	}
	w_put(w, "{", 1);
	for (c = entry->child; c; c = c->next) {
		if (!first)
			w_put(w, ",", 1);
		first = 0;
		w_str(w, c->string ? c->string : "", c->string ? strlen(c->string) : 0);
		w_put(w, ":", 1);
		if (out && c->string && !strcmp(c->string, "stdout"))
			w_str(w, out, out_len);
		else if (err && c->string && !strcmp(c->string, "stderr"))
			w_str(w, err, err_len);
		else
			w_value(w, c, 0);
	}
	w_put(w, "}", 1);
}

static int stream_done(const struct hp_snap_stream *st, const char *key)
{
	size_t i;

	for (i = 0; st && i < st->ndone; i++)
		if (!strcmp(st->done[i], key))
			return 1;
	return 0;
}

static void mark_done(struct hp_snap_stream *st, const char *key)
{
	if (st->ndone == st->done_alloc) {
		st->done_alloc = st->done_alloc ? 2 * st->done_alloc : 8;
		st->done = xrealloc(st->done, st->done_alloc * sizeof(*st->done));
	}
	st->done[st->ndone++] = xstrdup(key);
}

int hp_snapshot_stream_open(struct hp_snapshot *s, struct hp_sys *sys, const char *path,
			    struct hp_error *e)
{
	struct hp_snap_stream *st = xcalloc(1, sizeof(*st));

	hp_snapshot_stream_abort(s);
	if (w_open(&st->w, sys, path, e)) {
		free(st);
		return -1;
	}
	st->path = xstrdup(path);
	w_member(&st->w, "version");
	w_puts(&st->w, "1");
	s->stream = st;
	return 0;
}

int hp_snapshot_streaming(const struct hp_snapshot *s)
{
	return s->stream != NULL;
}

void hp_snapshot_stream_end(struct hp_snapshot *s, const char *key)
{
	struct hp_snap_stream *st = s->stream;
	const char **ids;
	char *order;
	size_t n, i;

	if (!st || !st->key || strcmp(st->key, key))
		return;
	w_puts(&st->w, "\n\t}");
	mark_done(st, key);
	order = xasprintf("%s_order", key);
	mark_done(st, order);
	n = hp_probes_ids(s, key, &ids);
	if (n) {
		w_member(&st->w, order);
		w_put(&st->w, "[", 1);
		for (i = 0; i < n; i++) {
			if (i)
				w_put(&st->w, ", ", 2);
			w_str(&st->w, ids[i], strlen(ids[i]));
		}
		w_put(&st->w, "]", 1);
	}
	free(ids);
	free(order);
	free(st->key);
	st->key = NULL;
	st->entries = 0;
}

void hp_snapshot_stream_entry(struct hp_snapshot *s, const char *key, const char *id,
			      const cJSON *entry, const char *out, size_t out_len, const char *err,
			      size_t err_len)
{
	struct hp_snap_stream *st = s->stream;

	if (!st)
		return;
	if (st->key && strcmp(st->key, key))
		hp_snapshot_stream_end(s, st->key);
	if (!st->key) {
		st->key = xstrdup(key);
		w_member(&st->w, key);
		w_put(&st->w, "{", 1);
	}
	w_puts(&st->w, st->entries++ ? ",\n\t\t" : "\n\t\t");
	w_str(&st->w, id ? id : "", id ? strlen(id) : 0);
	w_put(&st->w, ":\t", 2);
	w_entry(&st->w, entry, out, out_len, err, err_len);
}

static void stream_free(struct hp_snap_stream *st)
{
	size_t i;

	for (i = 0; i < st->ndone; i++)
		free(st->done[i]);
	free(st->done);
	free(st->key);
	free(st->path);
	hp_buf_release(&st->w.pend);
	free(st);
}

void hp_snapshot_stream_abort(struct hp_snapshot *s)
{
	struct hp_snap_stream *st = s->stream;

	if (!st)
		return;
	if (st->w.out)
		st->w.out->abort(st->w.out);
	stream_free(st);
	s->stream = NULL;
}

/* A store never streamed (no file open during its sweep): its entries as they are kept. */
static void w_store(struct wfile *w, const struct hp_snapshot *s, const char *key)
{
	struct hp_probe_iter it;
	const cJSON *e;
	size_t n = 0;

	w_member(w, key);
	w_put(w, "{", 1);
	for (e = hp_probes_first(s, key, &it); e; e = hp_probes_next(&it)) {
		w_puts(w, n++ ? ",\n\t\t" : "\n\t\t");
		w_str(w, e->string ? e->string : "", e->string ? strlen(e->string) : 0);
		w_put(w, ":\t", 2);
		w_entry(w, e, NULL, 0, NULL, 0);
	}
	w_puts(w, "\n\t}");
}

int hp_snapshot_save(struct hp_snapshot *s, struct hp_sys *sys, const char *path,
		     struct hp_error *e)
{
	struct hp_snap_stream *st = s->stream;
	struct wfile own, *w = &own;
	const char *key;
	const cJSON *c;
	size_t i;
	int rc;

	if (!s->root)
		return hp_error_set(e, HP_ERR_INTERNAL, "snapshot is empty");
	if (st) {
		if (st->key)
			hp_snapshot_stream_end(s, st->key);
		w = &st->w;
	} else if (w_open(w, sys, path, e)) {
		return -1;
	}
	for (c = s->root->child; c; c = c->next) {
		key = c->string ? c->string : "";

		/* The stream began with the version and wrote its sweeps whole. */
		if (st && (!strcmp(key, "version") || stream_done(st, key)))
			continue;
		/* A member of the document wins over a store of the same key (hp_probes_first). */
		w_member(w, key);
		w_value(w, c, 1);
	}
	for (i = 0; (key = hp_probes_store_key(s, i)); i++)
		if (!hp_snapshot_get(s, key) && !stream_done(st, key) && hp_probes_count(s, key))
			w_store(w, s, key);
	rc = w_close(w, st ? st->path : path, e);
	if (st) {
		stream_free(st);
		s->stream = NULL;
	}
	return rc;
}

/* ---------------------------------------------------------------- reading */

/* The read window's high-water mark of the last load (hp_snapshot_load_window). */
static size_t last_window;

size_t hp_snapshot_load_window(void)
{
	return last_window;
}

struct rfile {
	struct hp_file_in *in;
	char *buf;              /* bytes [pos, len) not yet taken */
	size_t pos, len, alloc;
	uint64_t base;          /* file offset of buf[0] */
	int eof, err;
};

/* At least want bytes after pos, unless the file ends first; -1 on a read error. */
static int r_fill(struct rfile *r, size_t want)
{
	while (r->len - r->pos < want && !r->eof) {
		long got;

		if (r->pos && r->pos >= r->len / 2) {
			memmove(r->buf, r->buf + r->pos, r->len - r->pos);
			r->len -= r->pos;
			r->base += r->pos;
			r->pos = 0;
		}
		if (r->alloc - r->len < READ_CHUNK) {
			r->alloc = r->alloc ? 2 * r->alloc : 2 * READ_CHUNK;
			while (r->alloc - r->len < READ_CHUNK)
				r->alloc *= 2;
			r->buf = xrealloc(r->buf, r->alloc + 1);
		}
		got = r->in->read(r->in, r->buf + r->len, READ_CHUNK);
		if (got < 0) {
			r->err = errno ? errno : EIO;
			return -1;
		}
		if (!got)
			r->eof = 1;
		r->len += (size_t)got;
		if (r->len - r->pos > last_window)
			last_window = r->len - r->pos;
	}
	return 0;
}

/* The next byte that is not JSON whitespace (not taken), or -1 at the end. */
static int r_peek(struct rfile *r)
{
	for (;;) {
		if (r->pos == r->len && (r_fill(r, 1) || r->pos == r->len))
			return -1;
		if (!strchr(" \t\r\n", r->buf[r->pos]) || !r->buf[r->pos])
			return (unsigned char)r->buf[r->pos];
		r->pos++;
	}
}

/*
 * The extent of the JSON value at pos (after whitespace): *n bytes from
 * pos, so that cJSON can parse exactly that. Strings, objects and arrays
 * are followed to their end (brackets inside strings skipped), a scalar to
 * the next delimiter. 0, or -1 on a syntax error *n bytes in (the file
 * ended, or no value starts there), or 1 when the value would pass max
 * bytes.
 */
static int r_extent(struct rfile *r, size_t max, size_t *n)
{
	size_t i = 0, depth = 0;
	int in_str = 0;

	if (r_peek(r) < 0)
		return -1;
	for (;; i++) {
		char c;

		if (i >= max)
			return 1;
		if (r->pos + i >= r->len && (r_fill(r, i + 1) || r->pos + i >= r->len)) {
			/* The file ended inside the value; a lone scalar may end with it. */
			*n = i;
			return !depth && !in_str && i ? 0 : -1;
		}
		c = r->buf[r->pos + i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			if (!in_str && !depth) {
				*n = i + 1;
				return 0;
			}
			continue;
		}
		if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (!depth) {
				/* A scalar ends at its container's close. */
				*n = i;
				return i ? 0 : -1;
			}
			if (!--depth) {
				*n = i + 1;
				return 0;
			}
		} else if (!depth && (c == ',' || c == ':' || strchr(" \t\r\n", c) || !c)) {
			*n = i;
			return i ? 0 : -1;
		}
	}
}

struct load {
	struct rfile r;
	const char *path;
	struct hp_error *e;
	struct hp_snapshot tmp;     /* what the file holds, until all of it was read */
	int bad;                    /* an error is set */
	uint64_t near;              /* where the syntax went wrong */
	char **seen;                /* members that hold a sweep, read into the store already */
	size_t nseen, seen_alloc;
};

static int syntax(struct load *l, uint64_t at)
{
	l->near = at;
	l->bad = 1;
	return hp_error_set(l->e, HP_ERR_PARSE, "snapshot '%s' is not valid JSON (near byte %llu)",
			    l->path, (unsigned long long)at);
}

static int read_error(struct load *l)
{
	l->bad = 1;
	/* Standard input has no size to refuse first: its reader fails past the limit. */
	if (l->r.err == EFBIG)
		return hp_error_set(l->e, HP_ERR_FILE, "snapshot '%s' is larger than %llu MB",
				    l->path, (unsigned long long)(HP_SNAPSHOT_MAX_BYTES >> 20));
	return hp_error_set(l->e, HP_ERR_FILE, "cannot read snapshot '%s': %s", l->path,
			    strerror(l->r.err));
}

/*
 * The value at pos, parsed (NULL with the error set); taken from the file.
 * shared: its strings in the shared table (hp_json_parse_shared).
 */
static cJSON *r_value(struct load *l, size_t max, const char *what, int shared)
{
	struct rfile *r = &l->r;
	const char *end = NULL;
	size_t n = 0;
	int rc = r_extent(r, max, &n);
	cJSON *v;

	if (r->err) {
		read_error(l);
		return NULL;
	}
	if (rc < 0) {
		syntax(l, r->base + r->pos + n);
		return NULL;
	}
	if (rc > 0) {
		l->bad = 1;
		hp_error_set(l->e, HP_ERR_PARSE, "snapshot '%s': %s is larger than %zu MB", l->path,
			     what, max >> 20);
		return NULL;
	}
	v = shared ? hp_json_parse_shared(r->buf + r->pos, n, &end)
		   : hp_json_parse(r->buf + r->pos, n, &end);
	if (!v || (size_t)(end - (r->buf + r->pos)) != n) {
		uint64_t at = r->base + (end && end >= r->buf ? (size_t)(end - r->buf) : r->pos);

		cJSON_Delete(v);
		syntax(l, at);
		return NULL;
	}
	r->pos += n;
	return v;
}

/*
 * After an object's member: 1 when a comma says another follows, 0 at the
 * closing brace (taken; what follows the object is not read), -1 on
 * anything else.
 */
static int r_after_member(struct load *l)
{
	int c = r_peek(&l->r);

	if (c == ',' || c == '}') {
		l->r.pos++;
		return c == ',';
	}
	if (l->r.err)
		return read_error(l);
	return syntax(l, l->r.base + l->r.pos);
}

/* Take the byte c (after whitespace), else a syntax error. */
static int r_expect(struct load *l, int c)
{
	if (r_peek(&l->r) != c) {
		if (l->r.err)
			return read_error(l);
		return syntax(l, l->r.base + l->r.pos);
	}
	l->r.pos++;
	return 0;
}

/* A member's key (a JSON string), into a fresh heap string; NULL with the error set. */
static char *r_key(struct load *l)
{
	cJSON *k;
	char *key;

	if (r_peek(&l->r) != '"') {
		if (l->r.err)
			read_error(l);
		else
			syntax(l, l->r.base + l->r.pos);
		return NULL;
	}
	k = r_value(l, HP_SNAPSHOT_MAX_ENTRY, "a member name", 0);
	if (!k)
		return NULL;
	key = xstrdup(cJSON_IsString(k) ? k->valuestring : "");
	cJSON_Delete(k);
	return key;
}

static int seen(const struct load *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->nseen; i++)
		if (!strcmp(l->seen[i], key))
			return 1;
	return 0;
}

/*
 * A member holding a probe sweep, entry by entry into the store: each one
 * parsed (at most HP_SNAPSHOT_MAX_ENTRY bytes of text), decoded and
 * dropped before the next is read. keep 0: a repeated member, read for its
 * syntax only (the first one counts, as in the document).
 */
static int read_sweep(struct load *l, const char *key, int keep)
{
	int c;

	if (r_expect(l, '{'))
		return -1;
	if (keep)
		hp_probes_reset(&l->tmp, key);
	if ((c = r_peek(&l->r)) == '}') {
		l->r.pos++;
		return 0;
	}
	for (;;) {
		char *id = r_key(l), what[160];
		cJSON *entry;

		if (!id)
			return -1;
		if (r_expect(l, ':')) {
			free(id);
			return -1;
		}
		snprintf(what, sizeof(what), "its %.40s entry '%.60s'", key, id);
		entry = r_value(l, HP_SNAPSHOT_MAX_ENTRY, what, 0);
		if (!entry) {
			free(id);
			return -1;
		}
		if (keep) {
			entry->string = id;
			hp_probes_add_raw(&l->tmp, key, entry);
			entry->string = NULL;
		}
		free(id);
		cJSON_Delete(entry);
		if ((c = r_after_member(l)) <= 0)
			return c;
	}
}

/* The root object, member by member. */
static int read_root(struct load *l)
{
	int c = r_peek(&l->r);

	if (c != '{') {
		/* Not an object: valid JSON of another kind, or no JSON at all. */
		cJSON *v;

		if (l->r.err)
			return read_error(l);
		if (c < 0)
			return syntax(l, l->r.base + l->r.pos);
		v = r_value(l, (size_t)HP_SNAPSHOT_MAX_BYTES, "the document", 0);
		if (!v)
			return -1;
		cJSON_Delete(v);
		l->bad = 1;
		return hp_error_set(l->e, HP_ERR_PARSE, "snapshot '%s' is not a JSON object", l->path);
	}
	l->r.pos++;
	if (r_peek(&l->r) == '}') {
		l->r.pos++;
		return 0;
	}
	for (;;) {
		char *key = r_key(l);
		int rc = 0;

		if (!key || r_expect(l, ':')) {
			free(key);
			return -1;
		}
		if (hp_facts_decoder_of(key) && r_peek(&l->r) == '{' &&
		    !cJSON_GetObjectItemCaseSensitive(l->tmp.root, key)) {
			int keep = !seen(l, key);

			rc = read_sweep(l, key, keep);
			if (keep) {
				if (l->nseen == l->seen_alloc) {
					l->seen_alloc = l->seen_alloc ? 2 * l->seen_alloc : 4;
					l->seen = xrealloc(l->seen, l->seen_alloc * sizeof(*l->seen));
				}
				l->seen[l->nseen++] = xstrdup(key);
			}
		} else {
			/* The node list's keys, groups and states once each, as the collector keeps them. */
			cJSON *v = r_value(l, (size_t)HP_SNAPSHOT_MAX_BYTES, "a member", 1);

			if (!v) {
				rc = -1;
			} else if (seen(l, key)) {
				/* A sweep read into the store already: the first one counts. */
				cJSON_Delete(v);
			} else {
				cJSON_AddItemToObject(l->tmp.root, key, v);
			}
		}
		free(key);
		if (rc)
			return -1;
		if ((c = r_after_member(l)) <= 0)
			return c;
	}
}

/* A sweep's order ("<key>_order"): restored in the store, then dropped from the document. */
static void apply_order(struct hp_snapshot *s, const char *key)
{
	char *name = xasprintf("%s_order", key);
	cJSON *order = cJSON_DetachItemFromObjectCaseSensitive(s->root, name);
	const char **ids;
	const cJSON *id;
	size_t n = 0;

	free(name);
	if (!order)
		return;
	ids = xcalloc((size_t)cJSON_GetArraySize(order) + 1, sizeof(*ids));
	cJSON_ArrayForEach(id, order)
		if (cJSON_IsString(id))
			ids[n++] = id->valuestring;
	if (cJSON_IsArray(order) && hp_probes_stored(s, key))
		hp_probes_order(s, key, ids, n);
	free(ids);
	cJSON_Delete(order);
}

int hp_snapshot_load(struct hp_snapshot *s, struct hp_sys *sys, const char *path,
		     struct hp_error *e)
{
	struct load l;
	const cJSON *ver;
	size_t i;
	int rc;

	memset(&l, 0, sizeof(l));
	/* "-": standard input, named as git names it in messages. */
	l.path = strcmp(path, "-") ? path : "<stdin>";
	l.e = e;
	last_window = 0;
	if (!strcmp(path, "-"))
		l.r.in = sys->open_stdin(sys, HP_SNAPSHOT_MAX_BYTES);
	else
		l.r.in = sys->open_read(sys, path, HP_SNAPSHOT_MAX_BYTES);
	path = l.path;
	if (!l.r.in) {
		int err = errno;

		if (err == ENOTTY)
			return hp_error_set(e, HP_ERR_FILE, "--snapshot -: standard input is a "
					    "terminal; pipe a snapshot in (hpnode report --snapshot - "
					    "< FILE)");
		if (err == EFBIG)
			return hp_error_set(e, HP_ERR_FILE, "snapshot '%s' is larger than %llu MB",
					    path, (unsigned long long)(HP_SNAPSHOT_MAX_BYTES >> 20));
		if (err == EINVAL)
			return hp_error_set(e, HP_ERR_FILE, "cannot read snapshot '%s': not a regular "
					    "file", path);
		return hp_error_set(e, HP_ERR_FILE, "cannot read snapshot '%s': %s", path,
				    strerror(err));
	}
	l.tmp.root = cJSON_CreateObject();
	rc = read_root(&l);
	/* One document: only whitespace may follow the root object. */
	if (!rc && r_peek(&l.r) >= 0)
		rc = syntax(&l, l.r.base + l.r.pos);
	else if (!rc && l.r.err)
		rc = read_error(&l);
	l.r.in->close(l.r.in);
	free(l.r.buf);
	for (i = 0; i < l.nseen; i++) {
		if (!rc)
			apply_order(&l.tmp, l.seen[i]);
		free(l.seen[i]);
	}
	free(l.seen);
	if (!rc) {
		ver = cJSON_GetObjectItemCaseSensitive(l.tmp.root, "version");
		if (!cJSON_IsNumber(ver) || ver->valuedouble != HP_SNAPSHOT_VERSION) {
			char seen_v[32] = "none";

			if (cJSON_IsNumber(ver))
				snprintf(seen_v, sizeof(seen_v), "%g", ver->valuedouble);
			else if (ver)
				hp_strlcpy(seen_v, "not a number", sizeof(seen_v));
			rc = hp_error_set(e, HP_ERR_PARSE,
					  "snapshot '%s' has version %s; this hpnode reads version %d",
					  path, seen_v, HP_SNAPSHOT_VERSION);
		}
	}
	if (rc) {
		hp_snapshot_release(&l.tmp);
		return -1;
	}
	/* Only a good document replaces what s held. */
	hp_snapshot_stream_abort(s);
	cJSON_Delete(s->root);
	hp_facts_free(s->facts);
	s->root = l.tmp.root;
	s->facts = l.tmp.facts;
	/* A snapshot is held to what the collector keeps: each node once, at most the cap. */
	hp_snap_nodes_finish(s, HP_MAX_NODES);
	hp_facts_forget(s);
	return 0;
}

/* An FNV-1a hash set of strings, for the de-duplication below. */
struct id_set {
	const char **v;
	size_t n, cap;
};

static uint64_t id_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The slot of s in set: where it is, or the free one where it would go. */
static size_t id_slot(const struct id_set *set, const char *s)
{
	size_t i;

	for (i = (size_t)(id_hash(s) & (set->cap - 1)); set->v[i]; i = (i + 1) & (set->cap - 1))
		if (!strcmp(set->v[i], s))
			break;
	return i;
}

/* 1 when s was in the set already, else adds a copy of it. */
static int id_seen(struct id_set *set, const char *s)
{
	size_t i;

	if (2 * (set->n + 1) > set->cap) {
		struct id_set bigger = { NULL, 0, set->cap ? 2 * set->cap : 64 };

		bigger.v = xcalloc(bigger.cap, sizeof(*bigger.v));
		for (i = 0; i < set->cap; i++)
			if (set->v[i])
				bigger.v[id_slot(&bigger, set->v[i])] = set->v[i];
		bigger.n = set->n;
		free(set->v);
		*set = bigger;
	}
	i = id_slot(set, s);
	if (set->v[i])
		return 1;
	set->v[i] = xstrdup(s);
	set->n++;
	return 0;
}

static void id_set_release(struct id_set *set)
{
	size_t i;

	for (i = 0; i < set->cap; i++)
		free((char *)(uintptr_t)set->v[i]);
	free(set->v);
}

cJSON *hp_snap_nodes_dedup(cJSON *nodes, size_t max, int *capped)
{
	struct id_set seen_ids = { NULL, 0, 0 }, dup_ids = { NULL, 0, 0 };
	cJSON *node, *next, *dups = NULL;
	size_t kept = 0;

	*capped = 0;
	if (!cJSON_IsArray(nodes))
		return NULL;
	for (node = nodes->child; node; node = next) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(node, "InstanceId");

		next = node->next;
		if (cJSON_IsString(id) && id_seen(&seen_ids, id->valuestring)) {
			if (!id_seen(&dup_ids, id->valuestring)) {
				if (!dups)
					dups = cJSON_CreateArray();
				cJSON_AddItemToArray(dups, cJSON_CreateString(id->valuestring));
			}
			cJSON_Delete(cJSON_DetachItemViaPointer(nodes, node));
			continue;
		}
		if (max && kept >= max) {
			*capped = 1;
			cJSON_Delete(cJSON_DetachItemViaPointer(nodes, node));
			continue;
		}
		kept++;
	}
	id_set_release(&seen_ids);
	id_set_release(&dup_ids);
	return dups;
}

void hp_snap_nodes_finish(struct hp_snapshot *s, size_t max)
{
	cJSON *nodes = cJSON_GetObjectItemCaseSensitive(s->root, "nodes"), *dups;
	int capped;

	if (!cJSON_IsArray(nodes))
		return;
	dups = hp_snap_nodes_dedup(nodes, max, &capped);
	cJSON_DeleteItemFromObjectCaseSensitive(s->root, "nodes_duplicates");
	if (dups)
		cJSON_AddItemToObject(s->root, "nodes_duplicates", dups);
	if (capped) {
		cJSON_DeleteItemFromObjectCaseSensitive(s->root, "nodes_truncated");
		cJSON_AddBoolToObject(s->root, "nodes_truncated", 1);
	}
}

const char *hp_snap_cluster_name(const struct hp_snapshot *s)
{
	const char *v = hp_json_str(s->root, "cluster.ClusterName");

	if (!v || !*v)
		v = hp_json_str(s->root, "meta.cluster_arg");
	return v ? v : "";
}

const char *hp_snap_cluster_arn(const struct hp_snapshot *s)
{
	const char *v = hp_json_str(s->root, "cluster.ClusterArn");

	return v ? v : "";
}

void hp_snap_cluster_id(const struct hp_snapshot *s, char out[64])
{
	const char *arn = hp_snap_cluster_arn(s);
	const char *id = strrchr(arn, '/');
	size_t i;

	out[0] = '\0';
	if (!id)
		return;
	id++;
	for (i = 0; id[i]; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9')))
			return;
	if (i != 12)
		return;
	memcpy(out, id, 13);
}

const char *hp_snap_orchestrator(const struct hp_snapshot *s)
{
	const cJSON *cluster = hp_json_get(s->root, "cluster");

	if (!cJSON_IsObject(cluster))
		return "Unknown";
	if (hp_json_get(cluster, "Orchestrator.Eks"))
		return "EKS";
	return "Slurm";
}

int hp_snap_node_running(const cJSON *node)
{
	const char *st = hp_json_str(node, "InstanceStatus.Status");

	return st && !strcmp(st, "Running");
}
