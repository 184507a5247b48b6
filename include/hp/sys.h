/*
 * hp_sys: the one table through which hpnode touches the outside world —
 * HTTP, subprocesses, the clock, the environment, files, sleeping and
 * randomness. hp_sys_real() returns the real implementations; tests build
 * their own table with canned answers (see tests/unit/fake-sys.h).
 */
#ifndef HP_SYS_H
#define HP_SYS_H

#include <stddef.h>
#include <stdint.h>

#include "hp/buf.h"

struct hp_header {
	const char *name;
	const char *value;
};

struct hp_http_req {
	const char *method;      /* "GET", "POST", ... */
	const char *url;         /* absolute URL */
	const struct hp_header *headers;
	size_t nheaders;
	const char *body;        /* may be NULL when body_len is 0 */
	size_t body_len;
	long timeout_ms;         /* whole-request limit; 0 means the default */
	const char *ca_bundle;   /* PEM file or NULL for the system store */
	int no_proxy;            /* 1: never use a proxy (metadata endpoints) */
};

/* Transport outcome, separate from the HTTP status. */
enum hp_net {
	HP_NET_OK = 0,
	HP_NET_CONNECT,   /* could not resolve or connect */
	HP_NET_TIMEOUT,   /* connect or read timed out */
	HP_NET_TLS,       /* certificate or handshake failure */
	HP_NET_IO,        /* connection reset, partial reply */
	HP_NET_TOO_BIG    /* reply over the body or header cap */
};

struct hp_http_resp {
	long status;              /* HTTP status, 0 when no reply */
	enum hp_net net;
	struct hp_buf headers;    /* raw header block, "Name: value\r\n" lines */
	struct hp_buf body;
	char errmsg[256];         /* transport error text, "" when net == OK */
	int connects;             /* connections opened for it (0: an open one was reused) */
};

void hp_http_resp_init(struct hp_http_resp *r);
void hp_http_resp_release(struct hp_http_resp *r);
/* Look up a response header (case-insensitive); copies value into out. */
int hp_http_resp_header(const struct hp_http_resp *r, const char *name, char *out, size_t n);

struct hp_run_req {
	const char *const *argv;  /* argv[0] is searched on PATH; no shell */
	const char *const *env;   /* full environment, NULL-terminated; NULL = inherit */
	const char *stdin_data;
	size_t stdin_len;
	long timeout_ms;          /* child and its process group killed (SIGKILL) past this */
};

struct hp_run_res {
	int exit_status;          /* exit code, 128+signal, or -1 if not started */
	int timed_out;
	int out_capped;           /* stdout passed out's cap: the child was killed there */
	struct hp_buf out;        /* capped at HP_MAX_PROC_OUT */
	struct hp_buf err;
};

void hp_run_res_init(struct hp_run_res *r);
void hp_run_res_release(struct hp_run_res *r);

struct hp_sys {
	/*
	 * Returns 0 when a reply (any status) arrived, -1 on transport failure.
	 * May be called from several threads at once (the real one keeps
	 * connections open between calls and reuses them).
	 */
	int (*http)(struct hp_sys *sys, const struct hp_http_req *req, struct hp_http_resp *resp);
	/* Returns 0 when the child ran (any exit status), -1 if it could not start. */
	int (*run)(struct hp_sys *sys, const struct hp_run_req *req, struct hp_run_res *res);
	int64_t (*now_ms)(struct hp_sys *sys);          /* wall clock, ms since the epoch */
	int64_t (*monotonic_ms)(struct hp_sys *sys);
	const char *(*getenv)(struct hp_sys *sys, const char *name);
	/*
	 * Reads a whole regular file (or /dev/null); -1 (errno set) when it
	 * cannot. Never waits: anything else is refused with EINVAL (EISDIR for
	 * a directory) and a file larger than out's cap with EFBIG, both before
	 * any byte is read.
	 */
	int (*read_file)(struct hp_sys *sys, const char *path, struct hp_buf *out);
	void (*sleep_ms)(struct hp_sys *sys, long ms);
	uint32_t (*random)(struct hp_sys *sys);
	/*
	 * Writes a whole file atomically (a temporary file in the same
	 * directory, written with this mode, then renamed over the path).
	 * Refuses a path that is a symbolic link (ELOOP) or another non-regular
	 * file (EINVAL, EISDIR). 0, or -1 with errno set; nothing is left behind
	 * on failure.
	 */
	int (*write_file)(struct hp_sys *sys, const char *path, const char *data, size_t len,
			  int mode);
	void *impl;
};

struct hp_sys *hp_sys_real(void);

/* Convenience: getenv that maps "" to NULL. */
const char *hp_sys_env(struct hp_sys *sys, const char *name);

#endif
