/*
 * The canned hp_sys of fake-sys.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake-sys.h"
#include "hp/aws.h"

static struct fake_sys *self(struct hp_sys *s)
{
	return (struct fake_sys *)s->impl;
}

static int f_http(struct hp_sys *s, const struct hp_http_req *req, struct hp_http_resp *resp)
{
	struct fake_sys *f = self(s);
	struct hp_buf h = HP_BUF_INIT(1 << 20);
	const struct fake_reply *r;
	size_t i;

	for (i = 0; i < req->nheaders; i++)
		hp_buf_printf(&h, "%s: %s\n", req->headers[i].name, req->headers[i].value);
	pthread_mutex_lock(&f->lock);
	if (f->nreq < FAKE_MAX) {
		f->req_method[f->nreq] = xstrdup(req->method);
		f->req_url[f->nreq] = xstrdup(req->url);
		f->req_body[f->nreq] = xstrndup(req->body ? req->body : "", req->body_len);
		f->req_headers[f->nreq] = hp_buf_detach(&h, NULL);
		f->nreq++;
	}
	hp_buf_release(&h);
	f->req_timeout_ms = req->timeout_ms;
	if (f->handler) {
		pthread_mutex_unlock(&f->lock);
		return f->handler(f, req, resp);
	}
	if (f->next_reply >= f->nreplies) {
		pthread_mutex_unlock(&f->lock);
		resp->net = HP_NET_CONNECT;
		hp_strlcpy(resp->errmsg, "fake: no reply queued", sizeof(resp->errmsg));
		return -1;
	}
	r = &f->replies[f->next_reply++];
	pthread_mutex_unlock(&f->lock);
	if (r->net != HP_NET_OK) {
		resp->net = r->net;
		hp_strlcpy(resp->errmsg, "fake transport error", sizeof(resp->errmsg));
		return -1;
	}
	resp->status = r->status;
	if (r->headers)
		hp_buf_puts(&resp->headers, r->headers);
	/* Like AWS, every canned reply names its type unless the test gives one ("" for none). */
	if (!r->headers || !hp_strcasestr(r->headers, "Content-Type:")) {
		const char *b = r->body ? r->body : "";

		b += strspn(b, " \r\n\t");
		hp_buf_puts(&resp->headers, *b == '<' ? "Content-Type: text/xml\r\n" :
			    "Content-Type: application/x-amz-json-1.1\r\n");
	}
	if (r->body)
		hp_buf_puts(&resp->body, r->body);
	return 0;
}

static int f_run(struct hp_sys *s, const struct hp_run_req *req, struct hp_run_res *res)
{
	struct fake_sys *f = self(s);

	free(f->run_argv0);
	f->run_argv0 = xstrdup(req->argv[0]);
	if (f->run_fail) {
		res->exit_status = -1;
		return -1;
	}
	res->exit_status = f->run_status;
	if (f->run_out)
		hp_buf_puts(&res->out, f->run_out);
	if (f->run_err)
		hp_buf_puts(&res->err, f->run_err);
	return 0;
}

int64_t fake_now(struct fake_sys *f)
{
	return __atomic_load_n(&f->now_ms, __ATOMIC_SEQ_CST);
}

void fake_advance(struct fake_sys *f, int64_t ms)
{
	__atomic_add_fetch(&f->now_ms, ms, __ATOMIC_SEQ_CST);
}

static int64_t f_now(struct hp_sys *s)
{
	return fake_now(self(s));
}

static const char *f_getenv(struct hp_sys *s, const char *name)
{
	struct fake_sys *f = self(s);
	size_t i;

	for (i = 0; i < f->nenv; i++)
		if (!strcmp(f->env[i][0], name))
			return f->env[i][1];
	return NULL;
}

static int f_write_file(struct hp_sys *s, const char *path, const char *data, size_t len,
			int mode)
{
	struct fake_sys *f = self(s);

	if (f->write_errno) {
		errno = f->write_errno;
		return -1;
	}
	if (f->nwrote >= FAKE_MAX) {
		errno = ENOSPC;
		return -1;
	}
	f->wrote[f->nwrote][0] = xstrdup(path);
	f->wrote[f->nwrote][1] = xstrndup(data, len);
	f->wrote_mode[f->nwrote] = mode;
	f->nwrote++;
	free(f->written_path);
	free(f->written);
	f->written_path = xstrdup(path);
	f->written = xstrndup(data, len);
	return 0;
}

static int f_read_file(struct hp_sys *s, const char *path, struct hp_buf *out)
{
	struct fake_sys *f = self(s);
	size_t i;

	for (i = f->nwrote; i-- > 0;) {
		if (!strcmp(f->wrote[i][0], path)) {
			if (hp_buf_adds(out, f->wrote[i][1])) {
				errno = EFBIG;
				return -1;
			}
			return 0;
		}
	}

	for (i = 0; i < f->nfiles; i++) {
		if (!strcmp(f->files[i][0], path)) {
			if (hp_buf_adds(out, f->files[i][1])) {
				errno = EFBIG;
				return -1;
			}
			return 0;
		}
	}
	errno = ENOENT;
	return -1;
}

/* A file of the fake's, read back in pieces of at most read_chunk bytes (all at once when 0). */
struct f_in {
	struct hp_file_in f;
	char *text;
	size_t len, at, chunk;
};

static long f_in_read(struct hp_file_in *in, void *p, size_t n)
{
	struct f_in *x = in->impl;

	if (x->chunk && n > x->chunk)
		n = x->chunk;
	if (n > x->len - x->at)
		n = x->len - x->at;
	memcpy(p, x->text + x->at, n);
	x->at += n;
	return (long)n;
}

static void f_in_close(struct hp_file_in *in)
{
	struct f_in *x = in->impl;

	free(x->text);
	free(x);
}

static struct hp_file_in *f_open_read(struct hp_sys *s, const char *path, uint64_t max)
{
	struct fake_sys *f = self(s);
	struct hp_buf b = HP_BUF_INIT((size_t)1 << 30);
	struct f_in *x;

	if (f_read_file(s, path, &b))
		return NULL;
	if (b.len > max) {
		hp_buf_release(&b);
		errno = EFBIG;
		return NULL;
	}
	x = xcalloc(1, sizeof(*x));
	x->text = hp_buf_detach(&b, &x->len);
	x->chunk = f->read_chunk;
	x->f.read = f_in_read;
	x->f.close = f_in_close;
	x->f.impl = x;
	f->opened_read++;
	return &x->f;
}

static struct hp_file_in *f_open_stdin(struct hp_sys *s, uint64_t max)
{
	struct fake_sys *f = self(s);
	struct f_in *x;

	if (!f->stdin_text) {
		errno = ENOTTY;
		return NULL;
	}
	if (strlen(f->stdin_text) > max) {
		errno = EFBIG;
		return NULL;
	}
	x = xcalloc(1, sizeof(*x));
	x->text = xstrdup(f->stdin_text);
	x->len = strlen(x->text);
	x->chunk = f->read_chunk;
	x->f.read = f_in_read;
	x->f.close = f_in_close;
	x->f.impl = x;
	return &x->f;
}

/* A file written in pieces: kept in memory, and a write_file at commit. */
struct f_out {
	struct hp_file_out f;
	struct fake_sys *fs;
	struct hp_buf b;
	char *path;
	int mode;
};

static int f_out_write(struct hp_file_out *o, const void *p, size_t n)
{
	struct f_out *x = o->impl;

	if (x->fs->write_errno) {
		errno = x->fs->write_errno;
		return -1;
	}
	x->fs->pieces_written++;
	if (hp_buf_add(&x->b, p, n)) {
		errno = ENOSPC;
		return -1;
	}
	return 0;
}

static void f_out_free(struct f_out *x)
{
	hp_buf_release(&x->b);
	free(x->path);
	free(x);
}

static int f_out_commit(struct hp_file_out *o)
{
	struct f_out *x = o->impl;
	int rc = f_write_file(&x->fs->sys, x->path, x->b.buf, x->b.len, x->mode);

	f_out_free(x);
	return rc;
}

static void f_out_abort(struct hp_file_out *o)
{
	struct f_out *x = o->impl;

	x->fs->aborted++;
	f_out_free(x);
}

static struct hp_file_out *f_open_write(struct hp_sys *s, const char *path, int mode)
{
	struct fake_sys *f = self(s);
	struct f_out *x;

	if (f->write_errno) {
		errno = f->write_errno;
		return NULL;
	}
	x = xcalloc(1, sizeof(*x));
	x->fs = f;
	hp_buf_init(&x->b, (size_t)1 << 30);
	x->path = xstrdup(path);
	x->mode = mode;
	x->f.write = f_out_write;
	x->f.commit = f_out_commit;
	x->f.abort = f_out_abort;
	x->f.impl = x;
	return &x->f;
}

static int f_can_write(struct hp_sys *s, const char *path)
{
	struct fake_sys *f = self(s);
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(f->unwritable); i++) {
		if (f->unwritable[i] && !strcmp(f->unwritable[i], path)) {
			errno = f->can_write_errno ? f->can_write_errno : EACCES;
			return -1;
		}
	}
	return 0;
}

/* The scripted child of pty_spawn(). */
struct fake_pty {
	struct hp_pty pty;
	struct fake_sys *f;
	size_t pos;
};

static long f_pty_read(struct hp_pty *p, void *buf, size_t n, long wait_ms)
{
	struct fake_pty *c = p->impl;
	struct fake_sys *f = c->f;
	size_t left = f->pty_out ? strlen(f->pty_out) - c->pos : 0;

	if (left) {
		if (f->pty_chunk && n > f->pty_chunk)
			n = f->pty_chunk;
		if (n > left)
			n = left;
		memcpy(buf, f->pty_out + c->pos, n);
		c->pos += n;
		return (long)n;
	}
	if (!f->pty_hang)
		return -1;
	f->now_ms += wait_ms > 0 ? wait_ms : 1;
	return 0;
}

static int f_pty_close(struct hp_pty *p, int stop, long grace_ms)
{
	struct fake_pty *c = p->impl;
	int status = c->f->pty_status;

	(void)grace_ms;
	c->f->pty_closed++;
	c->f->pty_stopped = stop;
	free(c);
	return status;
}

static struct hp_pty *f_pty_spawn(struct hp_sys *s, const struct hp_pty_req *req)
{
	struct fake_sys *f = self(s);
	struct fake_pty *c;
	int i;

	for (i = 0; i < f->pty_argc; i++)
		free(f->pty_argv[i]);
	f->pty_argc = 0;
	for (i = 0; req->argv[i] && i < (int)HP_ARRAY_LEN(f->pty_argv); i++)
		f->pty_argv[f->pty_argc++] = xstrdup(req->argv[i]);
	free(f->pty_setenv);
	f->pty_setenv = req->setenv ? xstrdup(req->setenv) : NULL;
	if (f->pty_errno) {
		errno = f->pty_errno;
		return NULL;
	}
	f->pty_spawned++;
	c = xcalloc(1, sizeof(*c));
	c->f = f;
	c->pty.read = f_pty_read;
	c->pty.close = f_pty_close;
	c->pty.impl = c;
	return &c->pty;
}

static struct hp_stream *f_tls_connect(struct hp_sys *s, const char *authority,
				       const char *ca_bundle, int64_t deadline, char *err,
				       size_t errn)
{
	struct fake_sys *f = self(s);
	struct hp_stream *st = f->stream;

	(void)deadline;
	f->tls_connects++;
	free(f->tls_authority);
	free(f->tls_ca);
	f->tls_authority = xstrdup(authority);
	f->tls_ca = ca_bundle ? xstrdup(ca_bundle) : NULL;
	f->stream = NULL;
	if (!st)
		hp_strlcpy(err, "fake: connection refused", errn);
	return st;
}

static void f_sleep(struct hp_sys *s, long ms)
{
	__atomic_add_fetch(&self(s)->slept_ms, ms, __ATOMIC_SEQ_CST);
	fake_advance(self(s), ms);
}

static uint32_t f_random(struct hp_sys *s)
{
	(void)s;
	return 0x80000000u;
}

void fake_sys_init(struct fake_sys *f)
{
	memset(f, 0, sizeof(*f));
	f->sys.http = f_http;
	f->sys.run = f_run;
	f->sys.now_ms = f_now;
	f->sys.monotonic_ms = f_now;
	f->sys.getenv = f_getenv;
	f->sys.read_file = f_read_file;
	f->sys.sleep_ms = f_sleep;
	f->sys.random = f_random;
	f->sys.write_file = f_write_file;
	f->sys.can_write = f_can_write;
	f->sys.pty_spawn = f_pty_spawn;
	f->sys.tls_connect = f_tls_connect;
	f->sys.open_read = f_open_read;
	f->sys.open_stdin = f_open_stdin;
	f->sys.open_write = f_open_write;
	f->sys.impl = f;
	f->now_ms = 1440938160000LL; /* 2015-08-30T12:36:00Z */
	pthread_mutex_init(&f->lock, NULL);
}

void fake_sys_release(struct fake_sys *f)
{
	size_t i;

	for (i = 0; i < f->nreq; i++) {
		free(f->req_method[i]);
		free(f->req_url[i]);
		free(f->req_body[i]);
		free(f->req_headers[i]);
	}
	free(f->run_argv0);
	for (i = 0; i < (size_t)f->pty_argc; i++)
		free(f->pty_argv[i]);
	f->pty_argc = 0;
	free(f->pty_setenv);
	f->pty_setenv = NULL;
	free(f->tls_authority);
	free(f->tls_ca);
	f->tls_authority = f->tls_ca = NULL;
	for (i = 0; i < f->nwrote; i++) {
		free(f->wrote[i][0]);
		free(f->wrote[i][1]);
	}
	f->nwrote = 0;
	free(f->written_path);
	free(f->written);
	f->written_path = f->written = NULL;
	f->nreq = 0;
	f->run_argv0 = NULL;
}

void fake_setenv(struct fake_sys *f, const char *name, const char *value)
{
	if (f->nenv < FAKE_MAX) {
		f->env[f->nenv][0] = name;
		f->env[f->nenv][1] = value;
		f->nenv++;
	}
}

void fake_file(struct fake_sys *f, const char *path, const char *content)
{
	if (f->nfiles < FAKE_MAX) {
		f->files[f->nfiles][0] = path;
		f->files[f->nfiles][1] = content;
		f->nfiles++;
	}
}

void fake_reply(struct fake_sys *f, long status, const char *headers, const char *body)
{
	if (f->nreplies < FAKE_MAX) {
		f->replies[f->nreplies].status = status;
		f->replies[f->nreplies].net = HP_NET_OK;
		f->replies[f->nreplies].headers = headers;
		f->replies[f->nreplies].body = body;
		f->nreplies++;
	}
}

void fake_net_error(struct fake_sys *f, enum hp_net net)
{
	if (f->nreplies < FAKE_MAX) {
		memset(&f->replies[f->nreplies], 0, sizeof(f->replies[0]));
		f->replies[f->nreplies].net = net;
		f->nreplies++;
	}
}

void fake_aws(struct fake_sys *f, struct hp_aws *a, int max_attempts)
{
	int s;

	fake_sys_release(f);
	fake_sys_init(f);
	memset(a, 0, sizeof(*a));
	a->sys = &f->sys;
	hp_strlcpy(a->region, "us-west-2", sizeof(a->region));
	for (s = 0; s < HP_SVC__COUNT; s++)
		hp_strlcpy(a->endpoint[s], "http://127.0.0.1:9", sizeof(a->endpoint[s]));
	a->creds.access_key = (char *)(uintptr_t)"AKIDEXAMPLE";
	a->creds.secret_key = (char *)(uintptr_t)"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
	a->max_attempts = max_attempts;
	a->retry_tokens = 500;
	a->timeout_ms = 1000;
	/* The canned replies answer in order: collector steps run one after another. */
	a->concurrency = 1;
}
