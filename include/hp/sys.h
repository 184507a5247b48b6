/*
 * hp_sys: the one table through which hpnode touches the outside world —
 * HTTP, subprocesses (plain and on a pseudo-terminal), the TLS byte stream
 * under the SSM data channel, the clock, the environment, files, sleeping
 * and randomness. hp_sys_real() returns the real implementations
 * (src/util/sys.c; children and the pseudo-terminal in sys-proc.c, the TLS
 * stream in sys-tls.c); tests build their own table with canned answers
 * (tests/unit/fake-sys.h), so each entry can be faked.
 *
 * Nothing else in src/ opens a file, starts a process, connects a socket,
 * reads the clock or the environment. What is kept outside, on purpose:
 *   - the command frame (src/cli): sigaction() for SIGINT/SIGTERM and
 *     write(2) in that handler (process set-up; a handler may call nothing
 *     else), and isatty(1)/isatty(2) for colour and progress lines (a
 *     property of the terminal the report goes to, not data read); main.c
 *     asks the libraries for their version strings (--version).
 *   - src/collect/ssm/pool.c: worker threads (pthread), not I/O.
 *   - src/checks/registry.c: clock_gettime(CLOCK_MONOTONIC) around each
 *     check (hp_check_clock, the JUnit testsuites' time): no data a check reads.
 *   - pure conversions: gmtime_r/timegm/strftime of times already read.
 */
#ifndef HP_SYS_H
#define HP_SYS_H

#include <signal.h>
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
	int no_proxy;            /* 1: a metadata endpoint: never through a proxy, and the
				    only request that may reach a link-local address */
	int cleanup;             /* 1: sent and finished even after hp_sys.stop is set
				    (ending a session the run opened) */
};

/* Transport outcome, separate from the HTTP status. */
enum hp_net {
	HP_NET_OK = 0,
	HP_NET_CONNECT,   /* could not resolve or connect */
	HP_NET_TIMEOUT,   /* connect or read timed out */
	HP_NET_TLS,       /* certificate or handshake failure */
	HP_NET_IO,        /* connection reset, partial reply */
	HP_NET_TOO_BIG,   /* reply over the body or header cap */
	HP_NET_STOPPED    /* the run was interrupted (hp_sys.stop) */
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
	/*
	 * When on_out is set, stdout is handed to it as it arrives instead of
	 * being kept in res->out (which stays empty), so a long output need not
	 * be held whole; past out_max bytes in all (0: no limit) the child is
	 * stopped as at res->out's cap (out_capped).
	 */
	void (*on_out)(void *ud, const char *data, size_t n);
	void *on_out_ud;
	size_t out_max;
};

struct hp_run_res {
	int exit_status;          /* exit code, 128+signal, or -1 if not started */
	int timed_out;
	int out_capped;           /* stdout passed out's cap: the child was killed there */
	int interrupted;          /* the run was interrupted (hp_sys.stop): the child was killed */
	struct hp_buf out;        /* capped at HP_MAX_PROC_OUT */
	struct hp_buf err;
};

void hp_run_res_init(struct hp_run_res *r);
void hp_run_res_release(struct hp_run_res *r);

/* A child started on a pseudo-terminal (the session-manager-plugin transport). */
struct hp_pty_req {
	const char *const *argv;  /* argv[0] is searched on PATH; no shell */
	const char *setenv;       /* "NAME=value" added to the inherited environment
				     (replacing NAME), or NULL */
	int cols, rows;           /* the terminal's size */
};

/* The running child: its output through the terminal, then its end. */
struct hp_pty {
	/*
	 * Up to n bytes the child wrote, waiting at most wait_ms: >0 bytes,
	 * 0 when none came in time, -1 once its side of the terminal closed.
	 */
	long (*read)(struct hp_pty *p, void *buf, size_t n, long wait_ms);
	/*
	 * End and reap it, freeing p: with stop, SIGTERM at once, else first
	 * wait up to grace_ms for it to exit by itself; SIGKILL grace_ms after
	 * a SIGTERM. Returns its exit status (code, or 128+signal).
	 */
	int (*close)(struct hp_pty *p, int stop, long grace_ms);
	void *impl;
};

/*
 * A byte stream: the TLS connection under the SSM data channel's
 * WebSocket. Deadlines are sys->monotonic_ms() values.
 */
struct hp_stream {
	/* Write all n bytes before the deadline: 0, or -1 (err filled). */
	int (*send)(struct hp_stream *s, const void *p, size_t n, int64_t deadline);
	/* Read up to n bytes: >0 bytes read, 0 when the deadline passed first, -1 closed or failed. */
	long (*recv)(struct hp_stream *s, void *p, size_t n, int64_t deadline);
	void (*close)(struct hp_stream *s);
	char err[256];
	void *impl;
};

/* write_file's mode for ordinary output: 0666 less the process umask, as a new file gets. */
#define HP_SYS_MODE_DEFAULT (-1)

/* A file read in pieces (a snapshot replayed node by node). */
struct hp_file_in {
	/* Up to n bytes: >0 bytes read, 0 at the end, -1 (errno set) on an error. */
	long (*read)(struct hp_file_in *f, void *p, size_t n);
	/* Close the file and free f. */
	void (*close)(struct hp_file_in *f);
	void *impl;
};

/*
 * A file written in pieces and made whole at the end (a snapshot saved as
 * it is collected, a report written as it is rendered): the pieces go to a
 * temporary file beside the path, which commit renames over it.
 */
struct hp_file_out {
	/* Append n bytes: 0, or -1 with errno set (the file is then abandoned at commit). */
	int (*write)(struct hp_file_out *f, const void *p, size_t n);
	/* fsync, rename over the path and free f: 0, or -1 with errno (nothing left behind). */
	int (*commit)(struct hp_file_out *f);
	/* Remove the temporary file and free f. */
	void (*abort)(struct hp_file_out *f);
	void *impl;
};

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
	 * directory, written with this mode, or HP_SYS_MODE_DEFAULT, then
	 * renamed over the path). Refuses a path that is a symbolic link
	 * (ELOOP) or another non-regular file (EINVAL, EISDIR). 0, or -1 with
	 * errno set; nothing is left behind on failure.
	 */
	int (*write_file)(struct hp_sys *sys, const char *path, const char *data, size_t len,
			  int mode);
	/*
	 * Whether write_file could create path now: 0, or -1 with errno
	 * (EISDIR for a directory). A probe file is created beside it and
	 * removed; path itself is not touched.
	 */
	int (*can_write)(struct hp_sys *sys, const char *path);
	/*
	 * Starts a child on a fresh pseudo-terminal (raw mode; descriptors
	 * above 2 closed in the child). NULL with errno when it cannot start
	 * (ENOENT or EACCES: argv[0] is not an executable on PATH).
	 */
	struct hp_pty *(*pty_spawn)(struct hp_sys *sys, const struct hp_pty_req *req);
	/*
	 * Opens a TLS connection to authority ("host" or "host:port", 443 by
	 * default) before the deadline: the system store or ca_bundle (a PEM
	 * file) verifies the peer, and the proxy variables apply. NULL with
	 * err filled when it cannot.
	 */
	struct hp_stream *(*tls_connect)(struct hp_sys *sys, const char *authority,
					 const char *ca_bundle, int64_t deadline, char *err,
					 size_t errn);
	/*
	 * Opens a file to read in pieces, with read_file's checks: a regular
	 * file (or /dev/null, read as empty) of at most max bytes, else NULL
	 * with errno (EINVAL, EISDIR, EFBIG) before any byte is read.
	 */
	struct hp_file_in *(*open_read)(struct hp_sys *sys, const char *path, uint64_t max);
	/*
	 * Standard input read in pieces (`--snapshot -`), at most max bytes: a
	 * read past max fails with EFBIG. NULL with errno when it cannot be:
	 * ENOTTY when it is a terminal (nothing was piped in), EBADF when it
	 * is closed. Once per run: the reader owns it until close.
	 */
	struct hp_file_in *(*open_stdin)(struct hp_sys *sys, uint64_t max);
	/*
	 * Starts writing path in pieces (struct hp_file_out) with write_file's
	 * mode and refusals, checked here: NULL with errno when it cannot.
	 */
	struct hp_file_out *(*open_write)(struct hp_sys *sys, const char *path, int mode);
	void *impl;
	/*
	 * The run's interrupt flag (set by the SIGINT/SIGTERM handler), or
	 * NULL. Once it reads non-zero the real entries stop waiting: http
	 * ends its transfer (HP_NET_STOPPED; not a cleanup request), run kills the child's process
	 * group and reaps it (res->interrupted), sleep_ms returns early.
	 */
	const volatile sig_atomic_t *stop;
};

struct hp_sys *hp_sys_real(void);

/*
 * Process set-up, called first in main(): core dumps off (RLIMIT_CORE 0 and
 * PR_SET_DUMPABLE 0, so no core image or ptrace attach by another user
 * holds the keys), SIGPIPE ignored (a closed stdout or socket is a write
 * error: exit 1 with the reason), and the soft open-file limit raised
 * toward the hard one (at most 65,536). -1 when a step failed (the run
 * goes on).
 */
int hp_sys_proc_setup(void);
/* The soft open-file limit after hp_sys_proc_setup (0: unknown); the one at start. */
long hp_sys_fd_limit(void);
long hp_sys_fd_limit_at_start(void);
/* Tests: pretend the limit is n. */
void hp_sys_set_fd_limit(long n);
/*
 * Descriptor exhaustion: the real entries note every EMFILE/ENFILE they
 * meet (a socket, a pipe, a file, a terminal); hp_sys_fd_exhausted returns
 * that errno (0: none), so the frame reports a local resource error instead
 * of what the failed calls would seem to say about the cluster.
 */
void hp_sys_note_errno(int e);
int hp_sys_fd_exhausted(void);
void hp_sys_fd_exhausted_reset(void);

/* Convenience: getenv that maps "" to NULL. */
const char *hp_sys_env(struct hp_sys *sys, const char *name);

#endif
