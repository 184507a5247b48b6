/*
 * The real hp_sys: libcurl for HTTP (pooled handles that keep their
 * connections), the system clocks, getenv, plain file reads and atomic
 * writes, and the table itself (children and the pseudo-terminal are in
 * sys-proc.c, the TLS stream in sys-tls.c, files in pieces in sys-file.c).
 * Tests replace this table.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "hp/sys.h"
#include "hp/util.h"
#include "sys-int.h"

#define DEFAULT_HTTP_TIMEOUT_MS 30000L
#define CONNECT_TIMEOUT_MS 10000L

void hp_http_resp_init(struct hp_http_resp *r)
{
	r->status = 0;
	r->net = HP_NET_OK;
	r->connects = 0;
	hp_buf_init(&r->headers, HP_MAX_HTTP_HEADERS);
	hp_buf_init(&r->body, HP_MAX_HTTP_BODY);
	r->errmsg[0] = '\0';
}

void hp_http_resp_release(struct hp_http_resp *r)
{
	hp_buf_release(&r->headers);
	hp_buf_release(&r->body);
}

int hp_http_resp_header(const struct hp_http_resp *r, const char *name, char *out, size_t n)
{
	const char *p = r->headers.buf;
	size_t nl = strlen(name);

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		if (len > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
			const char *v = p + nl + 1;
			size_t vl = len - nl - 1;
			const char *cr;

			while (vl && (*v == ' ' || *v == '\t'))
				v++, vl--;
			/* A value ends at the line's first CR: a bare CR inside it is not HTTP. */
			if ((cr = memchr(v, '\r', vl)) != NULL)
				vl = (size_t)(cr - v);
			while (vl && v[vl - 1] == ' ')
				vl--;
			if (n) {
				size_t c = vl < n - 1 ? vl : n - 1;
				memcpy(out, v, c);
				out[c] = '\0';
			}
			return 0;
		}
		if (!eol)
			break;
		p = eol + 1;
	}
	if (n)
		out[0] = '\0';
	return -1;
}

void hp_run_res_init(struct hp_run_res *r)
{
	r->exit_status = -1;
	r->timed_out = 0;
	r->out_capped = 0;
	r->interrupted = 0;
	hp_buf_init(&r->out, HP_MAX_PROC_OUT);
	hp_buf_init(&r->err, HP_MAX_PROC_OUT);
}

void hp_run_res_release(struct hp_run_res *r)
{
	hp_buf_release(&r->out);
	hp_buf_release(&r->err);
}

const char *hp_sys_env(struct hp_sys *sys, const char *name)
{
	const char *v = sys->getenv(sys, name);

	return v && *v ? v : NULL;
}

struct sink {
	struct hp_buf *buf;
	struct hp_buf *body;   /* header sink only: sized from Content-Length */
	int overflow;
};

/* "Content-Length: N" reserves N bytes of the body at once instead of growing it. */
static void presize_body(struct sink *s, const char *line, size_t n)
{
	static const char name[] = "content-length:";
	char digits[24];
	size_t k = sizeof(name) - 1, d = 0;
	unsigned long long len;

	if (n <= k || strncasecmp(line, name, k))
		return;
	while (k < n && (line[k] == ' ' || line[k] == '\t'))
		k++;
	while (k < n && d + 1 < sizeof(digits) && line[k] >= '0' && line[k] <= '9')
		digits[d++] = line[k++];
	digits[d] = '\0';
	if (!d)
		return;
	len = strtoull(digits, NULL, 10);
	/*
	 * A length over the cap is left to the cap check as the bytes arrive
	 * (a reserve that fails leaves the buffer as it was).
	 */
	if (len && len <= s->body->max && hp_buf_reserve(s->body, (size_t)len))
		return;
}

static size_t write_cb(char *p, size_t size, size_t nmemb, void *ud)
{
	struct sink *s = ud;
	size_t n = size * nmemb;

	if (hp_buf_add(s->buf, p, n)) {
		s->overflow = 1;
		return 0; /* aborts the transfer */
	}
	if (s->body)
		presize_body(s, p, n);
	return n;
}

/*
 * libcurl handles are kept between requests (a small pool, taken and given
 * back under a lock, any thread), so each keeps its connections open where
 * the server allows (HTTP/1.1 keep-alive, HTTP/2) and a request to the same
 * endpoint reuses one. Every handle shares one DNS cache and one TLS session
 * cache through a share object with a lock per kind of data. Connections
 * themselves are never shared between handles: a handle is used by one
 * thread at a time. Sockets are opened close-on-exec, so an idle kept
 * connection never leaks into a child process.
 */
#define HANDLE_POOL_MAX 16

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static CURL *pool[HANDLE_POOL_MAX];
static size_t pool_n;
static CURLSH *share;
static pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *ud)
{
	(void)h;
	(void)access;
	(void)ud;
	pthread_mutex_lock(&share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
	(void)h;
	(void)ud;
	pthread_mutex_unlock(&share_locks[data]);
}

static void curl_setup(void)
{
	size_t i;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (i = 0; i < HP_ARRAY_LEN(share_locks); i++)
		pthread_mutex_init(&share_locks[i], NULL);
	share = curl_share_init();
	if (share && (curl_share_setopt(share, CURLSHOPT_LOCKFUNC, share_lock) ||
		      curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, share_unlock) ||
		      curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) ||
		      curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION))) {
		curl_share_cleanup(share);
		share = NULL;
	}
}

/* Whether a socket address is link-local or a metadata address (include/hp/util.h). */
static int addr_link_local(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return hp_ip4_link_local(ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6)
		return hp_ip6_link_local(((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr);
	return 0;
}

curl_socket_t hp_sys_open_socket(void *ud, curlsocktype purpose, struct curl_sockaddr *addr)
{
	struct hp_sys_sock *k = ud;
	curl_socket_t fd;

	(void)purpose;
	/* A name may resolve to the metadata address: only a metadata request may go there. */
	if (k && !k->link_local_ok && addr_link_local(&addr->addr)) {
		k->refused = 1;
		return CURL_SOCKET_BAD;
	}
	fd = socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
	if (fd == CURL_SOCKET_BAD)
		hp_sys_note_errno(errno);
	return fd;
}

/* The most recently used handle first: its connection is the one most likely still open. */
static CURL *handle_take(void)
{
	CURL *c = NULL;

	pthread_once(&curl_once, curl_setup);
	pthread_mutex_lock(&pool_lock);
	if (pool_n)
		c = pool[--pool_n];
	pthread_mutex_unlock(&pool_lock);
	return c ? c : curl_easy_init();
}

/* Options are reset (nothing points at the finished request), connections and caches kept. */
static void handle_give(CURL *c)
{
	curl_easy_reset(c);
	pthread_mutex_lock(&pool_lock);
	if (pool_n < HP_ARRAY_LEN(pool)) {
		pool[pool_n++] = c;
		c = NULL;
	}
	pthread_mutex_unlock(&pool_lock);
	if (c)
		curl_easy_cleanup(c);
}

static void set_request(CURL *c, const struct hp_http_req *req, struct curl_slist *hl,
			struct sink *body, struct sink *head, char *errbuf, struct hp_sys_sock *sock)
{
	if (share)
		curl_easy_setopt(c, CURLOPT_SHARE, share);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, hp_sys_open_socket);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, sock);
	curl_easy_setopt(c, CURLOPT_URL, req->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "hpnode/" HP_VERSION);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, req->timeout_ms > 0 ? req->timeout_ms : DEFAULT_HTTP_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	/* A node page (about 25 KB) in one read instead of two, with one poll less. */
	curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 65536L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, head);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (req->ca_bundle)
		curl_easy_setopt(c, CURLOPT_CAINFO, req->ca_bundle);
	if (req->no_proxy)
		curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (!strcmp(req->method, "POST")) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body ? req->body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
	} else if (strcmp(req->method, "GET")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
		if (req->body_len) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
		}
	}
}

static enum hp_net net_class(CURLcode rc, const struct sink *body, const struct sink *head)
{
	if (body->overflow || head->overflow)
		return HP_NET_TOO_BIG;
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return HP_NET_TIMEOUT;
	if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST ||
	    rc == CURLE_COULDNT_RESOLVE_PROXY)
		return HP_NET_CONNECT;
	if (rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_PEER_FAILED_VERIFICATION ||
	    rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM)
		return HP_NET_TLS;
	return HP_NET_IO;
}

/* libcurl's progress callback: non-zero (the transfer ends) once the run is interrupted. */
static int stop_cb(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		   curl_off_t ulnow)
{
	const volatile sig_atomic_t *stop = ud;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return stop && *stop ? 1 : 0;
}

static int real_http(struct hp_sys *sys, const struct hp_http_req *req, struct hp_http_resp *resp)
{
	CURL *c;
	CURLcode rc;
	struct curl_slist *hl = NULL;
	struct sink body = { &resp->body, NULL, 0 }, head = { &resp->headers, &resp->body, 0 };
	char errbuf[CURL_ERROR_SIZE] = "";
	long connects = 0;
	size_t i;
	struct hp_sys_sock sock = { 0, 0 };
	const volatile sig_atomic_t *stop = req->cleanup ? NULL : sys->stop;

	if (stop && *stop) {
		resp->net = HP_NET_STOPPED;
		hp_strlcpy(resp->errmsg, "not sent: the run was interrupted", sizeof(resp->errmsg));
		return -1;
	}
	sock.link_local_ok = req->no_proxy;
	c = handle_take();
	if (!c) {
		resp->net = HP_NET_CONNECT;
		hp_strlcpy(resp->errmsg, "cannot initialise libcurl", sizeof(resp->errmsg));
		return -1;
	}
	for (i = 0; i < req->nheaders; i++) {
		char *line = xasprintf("%s: %s", req->headers[i].name, req->headers[i].value);
		hl = curl_slist_append(hl, line);
		free(line);
	}
	/* libcurl adds these unless told not to; they are not signed. */
	hl = curl_slist_append(hl, "Expect:");
	hl = curl_slist_append(hl, "Accept:");
	set_request(c, req, hl, &body, &head, errbuf, &sock);
	/* A waiting transfer ends soon after the run is interrupted (the callback runs while idle too). */
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, stop_cb);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)(uintptr_t)stop);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, stop ? 0L : 1L);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &connects);
	resp->connects = (int)connects;
	if (rc != CURLE_OK)
		hp_sys_note_curl(c, rc);
	handle_give(c);
	curl_slist_free_all(hl);
	if (rc == CURLE_OK)
		return 0;
	resp->net = rc == CURLE_ABORTED_BY_CALLBACK ? HP_NET_STOPPED : net_class(rc, &body, &head);
	if (resp->net == HP_NET_STOPPED)
		hp_strlcpy(resp->errmsg, "not finished: the run was interrupted", sizeof(resp->errmsg));
	else if (sock.refused)
		snprintf(resp->errmsg, sizeof(resp->errmsg), "refused: the host resolves to a "
			 "link-local or metadata address, which only the instance and container "
			 "credential providers may reach");
	else
		snprintf(resp->errmsg, sizeof(resp->errmsg), "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
	resp->status = 0;
	return -1;
}

static int64_t real_now_ms(struct hp_sys *sys)
{
	struct timespec ts;

	(void)sys;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t real_monotonic_ms(struct hp_sys *sys)
{
	struct timespec ts;

	(void)sys;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *real_getenv(struct hp_sys *sys, const char *name)
{
	(void)sys;
	return getenv(name);
}

/* /dev/null reads as an empty file (AWS_CONFIG_FILE=/dev/null is common). */
static int is_dev_null(const struct stat *st)
{
	struct stat null;

	return S_ISCHR(st->st_mode) && stat("/dev/null", &null) == 0 &&
	       S_ISCHR(null.st_mode) && st->st_rdev == null.st_rdev;
}

/*
 * Regular files only: a FIFO, socket, directory or device (bar /dev/null)
 * is refused with EINVAL before any read, and a file over out's cap with
 * EFBIG. O_NONBLOCK keeps the open itself from waiting on a FIFO.
 */
static int real_read_file(struct hp_sys *sys, const char *path, struct hp_buf *out)
{
	char chunk[65536];
	struct stat st;
	ssize_t n;
	int fd;

	(void)sys;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		hp_sys_note_errno(errno);
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		int null = is_dev_null(&st);

		close(fd);
		if (null)
			return 0;
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	if (st.st_size < 0 || (uint64_t)st.st_size > (uint64_t)out->max - out->len) {
		close(fd);
		errno = EFBIG;
		return -1;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		if (hp_buf_add(out, chunk, (size_t)n)) {
			close(fd);
			errno = EFBIG;
			return -1;
		}
	}
	close(fd);
	return 0;
}

/* The whole file in one piece through open_write (sys-file.c): its refusals, its atomic rename. */
static int real_write_file(struct hp_sys *sys, const char *path, const char *data, size_t len,
			   int mode)
{
	struct hp_file_out *f = hp_sys_real_open_write(sys, path, mode);

	if (!f)
		return -1;
	if (len && f->write(f, data, len)) {
		int err = errno;

		f->abort(f);
		errno = err;
		return -1;
	}
	return f->commit(f);
}

/* A probe file beside path, created and removed at once: what write_file will need. */
static int real_can_write(struct hp_sys *sys, const char *path)
{
	const char *base = strrchr(path, '/');
	char dir[4096], tmp[4096 + 128];
	struct stat st;
	int fd;

	(void)sys;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	hp_sys_dir_of(path, dir, sizeof(dir));
	if (snprintf(tmp, sizeof(tmp), "%s/.%.100s.hpnode-XXXXXX", dir, base ? base + 1 : path) >=
	    (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		hp_sys_note_errno(errno);
		return -1;
	}
	close(fd);
	unlink(tmp);
	return 0;
}

static void real_sleep_ms(struct hp_sys *sys, long ms)
{
	struct timespec ts;

	/* In slices of at most 100 ms while an interrupt could end it early. */
	while (ms > 0 && !(sys->stop && *sys->stop)) {
		long step = sys->stop && ms > 100 ? 100 : ms;

		ts.tv_sec = step / 1000;
		ts.tv_nsec = (step % 1000) * 1000000L;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		ms -= step;
	}
}

static uint32_t real_random(struct hp_sys *sys)
{
	static int fd = -2;
	uint32_t v = 0;

	(void)sys;
	if (fd == -2)
		fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		v = (uint32_t)real_monotonic_ms(NULL) * 2654435761u;
	return v;
}

/* ---- process set-up and descriptor exhaustion ---- */

/* Descriptors asked for when the hard limit is unlimited or very high. */
#define FD_LIMIT_WANT 65536L

static long fd_limit;          /* soft RLIMIT_NOFILE after set-up; 0 unknown */
static long fd_limit_before;   /* what it was at start */
static int fd_errno;           /* EMFILE or ENFILE once seen, else 0 */

int hp_sys_proc_setup(void)
{
	struct rlimit rl;
	int rc = 0;

	/* No core image: a triage holds the secret key and session token in memory. */
	rl.rlim_cur = rl.rlim_max = 0;
	if (setrlimit(RLIMIT_CORE, &rl))
		rc = -1;
	if (prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L))
		rc = -1;
	/*
	 * A reader that went away is a write error, reported and exit 1 the
	 * same way in every run (a socket's peer hanging up is one too).
	 */
	signal(SIGPIPE, SIG_IGN);
	/* The soft open-file limit raised toward the hard one (each SSM session takes ~4). */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)FD_LIMIT_WANT ?
				      (rlim_t)FD_LIMIT_WANT : rl.rlim_max;

		fd_limit_before = rl.rlim_cur == RLIM_INFINITY ? FD_LIMIT_WANT : (long)rl.rlim_cur;
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
			rl.rlim_cur = want;
			if (setrlimit(RLIMIT_NOFILE, &rl))
				rc = -1;
		}
		if (!getrlimit(RLIMIT_NOFILE, &rl))
			fd_limit = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)LONG_MAX ?
					   FD_LIMIT_WANT : (long)rl.rlim_cur;
	}
	return rc;
}

long hp_sys_fd_limit(void)
{
	return __atomic_load_n(&fd_limit, __ATOMIC_RELAXED);
}

long hp_sys_fd_limit_at_start(void)
{
	return fd_limit_before;
}

void hp_sys_set_fd_limit(long n)
{
	__atomic_store_n(&fd_limit, n, __ATOMIC_RELAXED);
}

void hp_sys_note_errno(int e)
{
	if (e == EMFILE || e == ENFILE)
		__atomic_store_n(&fd_errno, e, __ATOMIC_RELAXED);
}

int hp_sys_fd_exhausted(void)
{
	return __atomic_load_n(&fd_errno, __ATOMIC_RELAXED);
}

void hp_sys_fd_exhausted_reset(void)
{
	__atomic_store_n(&fd_errno, 0, __ATOMIC_RELAXED);
}

void hp_sys_note_curl(void *curl, int rc)
{
	long os_errno = 0;

	if (rc == CURLE_OK)
		return;
	if (curl_easy_getinfo((CURL *)curl, CURLINFO_OS_ERRNO, &os_errno) == CURLE_OK)
		hp_sys_note_errno((int)os_errno);
}

/* The monotonic clock at the first hp_debug() or hp_sys_real() call (ms). */
static int64_t debug_t0 = -1;

void hp_debug(const char *fmt, ...)
{
	struct timespec wall, mono;
	char msg[2048];
	struct tm tm;
	time_t sec;
	int64_t since;
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &wall);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	if (debug_t0 < 0)
		debug_t0 = (int64_t)mono.tv_sec * 1000 + mono.tv_nsec / 1000000;
	since = (int64_t)mono.tv_sec * 1000 + mono.tv_nsec / 1000000 - debug_t0;
	sec = wall.tv_sec;
	gmtime_r(&sec, &tm);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One call, so lines of threads never interleave. */
	fprintf(stderr, "%02d:%02d:%02d.%03ld +%lld.%03llds hpnode: debug: %s\n", tm.tm_hour,
		tm.tm_min, tm.tm_sec, (long)(wall.tv_nsec / 1000000), (long long)(since / 1000),
		(long long)(since % 1000), msg);
}

struct hp_sys *hp_sys_real(void)
{
	static struct hp_sys sys = {
		real_http, hp_sys_real_run, real_now_ms, real_monotonic_ms, real_getenv,
		real_read_file, real_sleep_ms, real_random, real_write_file, real_can_write,
		hp_sys_real_pty_spawn, hp_sys_real_tls_connect, hp_sys_real_open_read,
		hp_sys_real_open_stdin, hp_sys_real_open_write, NULL, NULL
	};
	static int ready;

	/* libcurl's global set-up is not thread-safe: done here, on the first call from main(). */
	if (!ready) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (debug_t0 < 0)
			debug_t0 = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
		curl_global_init(CURL_GLOBAL_DEFAULT);
		ready = 1;
	}
	return &sys;
}
