/*
 * A canned hp_sys for unit tests: a fixed clock, an environment and a file
 * map (read whole or in pieces, written whole or in pieces), an HTTP queue that answers requests in order and records them, one
 * canned subprocess result, a scripted pseudo-terminal child and a TLS
 * stream the test hands out (none: the connection is refused).
 */
#ifndef HP_FAKE_SYS_H
#define HP_FAKE_SYS_H

#include <pthread.h>

#include "hp/sys.h"

#define FAKE_MAX 64

struct fake_reply {
	long status;
	enum hp_net net;
	const char *headers;   /* "Name: v\r\n..." or NULL */
	const char *body;
};

struct fake_sys;
/*
 * Answers one request instead of the queue (a test's own routing, e.g. by
 * X-Amz-Target, for requests sent from several threads); 0 or -1 like
 * hp_sys.http. Called without the fake's lock, after the request was recorded.
 */
typedef int (*fake_http_fn)(struct fake_sys *f, const struct hp_http_req *req,
			    struct hp_http_resp *resp);

struct fake_sys {
	struct hp_sys sys;
	int64_t now_ms;            /* read and moved atomically (several threads may) */
	pthread_mutex_t lock;      /* the request record and the reply queue */
	fake_http_fn handler;      /* NULL: the reply queue answers */
	void *ud;                  /* the handler's */
	const char *env[FAKE_MAX][2];
	size_t nenv;
	const char *files[FAKE_MAX][2];
	size_t nfiles;
	struct fake_reply replies[FAKE_MAX];
	size_t nreplies, next_reply;
	/* Recorded requests. */
	char *req_method[FAKE_MAX], *req_url[FAKE_MAX], *req_body[FAKE_MAX], *req_headers[FAKE_MAX];
	size_t nreq;
	long slept_ms;
	long req_timeout_ms;   /* timeout_ms of the last HTTP request */
	/* Canned subprocess result for run(). */
	int run_status;
	const char *run_out, *run_err;
	int run_fail;          /* 1: run() cannot start the child */
	char *run_argv0;
	/* Files written by write_file(); read_file() sees the newest first. */
	char *wrote[FAKE_MAX][2];
	int wrote_mode[FAKE_MAX];
	size_t nwrote;
	/* The last write_file(): its path and content (also in wrote[]). */
	char *written_path, *written;
	int write_errno;       /* non-zero: write_file() and open_write() fail with it */
	/* open_read() hands files out in pieces of read_chunk bytes (0: whole); counted. */
	size_t read_chunk;
	int opened_read;
	/* open_stdin(): what was piped in (NULL: a terminal, ENOTTY). */
	const char *stdin_text;
	/* open_write(): pieces written, files abandoned (abort). */
	int pieces_written, aborted;
	/* can_write(): paths named here fail with can_write_errno (EACCES when 0). */
	const char *unwritable[4];
	int can_write_errno;
	/*
	 * pty_spawn(): fails with pty_errno when set; else the child "prints"
	 * pty_out (pty_chunk bytes per read, all at once when 0), then its
	 * terminal closes (with pty_hang it stays open and silent, each read
	 * waiting out its wait_ms on the fake clock) and close() returns
	 * pty_status. Recorded: the argv (pty_argv[0..pty_argc)), setenv, and
	 * whether close() was asked to stop it.
	 */
	int pty_errno;
	const char *pty_out;
	size_t pty_chunk;
	int pty_hang, pty_status;
	char *pty_argv[8], *pty_setenv;
	int pty_argc, pty_spawned, pty_closed, pty_stopped;
	/*
	 * tls_connect(): hands out stream (once; NULL = refused with
	 * "fake: connection refused") and records the authority and CA bundle.
	 */
	struct hp_stream *stream;
	char *tls_authority, *tls_ca;
	int tls_connects;
};

void fake_sys_init(struct fake_sys *f);
void fake_sys_release(struct fake_sys *f);
void fake_setenv(struct fake_sys *f, const char *name, const char *value);
void fake_file(struct fake_sys *f, const char *path, const char *content);
void fake_reply(struct fake_sys *f, long status, const char *headers, const char *body);
void fake_net_error(struct fake_sys *f, enum hp_net net);
/* The fake clock: read, set and moved atomically. */
int64_t fake_now(struct fake_sys *f);
void fake_advance(struct fake_sys *f, int64_t ms);

struct hp_aws;
/*
 * Reset f and point a at it: region us-west-2, every endpoint
 * http://127.0.0.1:9, fixed test keys, max_attempts attempts.
 */
void fake_aws(struct fake_sys *f, struct hp_aws *a, int max_attempts);

#endif
