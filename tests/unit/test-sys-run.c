/*
 * The real subprocess runner (hp_sys_real()->run) with real children: a
 * timeout kills the child's whole process group (grandchildren such as an
 * exec plugin or a wrapper's kubectl included), and endless output is
 * stopped at the cap instead of growing until the timeout. Also the real
 * pseudo-terminal child (pty_spawn) and the output-path probe (can_write).
 */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../src/util/sys-int.h"
#include "hp/ssm.h"
#include "hp/sys.h"
#include "t.h"

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Whether pid is gone or a zombie (dead, not yet reaped by its new parent). */
static int dead(pid_t pid)
{
	char path[64], buf[512];
	FILE *f;
	char *p;

	if (kill(pid, 0) && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	return p && (p[2] == 'Z' || p[2] == 'X');
}

static void t_timeout_kills_grandchildren(void)
{
	struct hp_sys *sys = hp_sys_real();
	/* The child starts a grandchild that keeps stdout open, prints its pid, and waits. */
	const char *argv[] = { "sh", "-c", "sleep 30 & echo $!; wait", NULL };
	struct hp_run_req req;
	struct hp_run_res res;
	int64_t t0 = sys->monotonic_ms(sys);
	pid_t grandchild;
	int i;

	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.timeout_ms = 500;
	hp_run_res_init(&res);
	T_EQ(sys->run(sys, &req, &res), 0);
	T_EQ(res.timed_out, 1);
	T_ASSERT(sys->monotonic_ms(sys) - t0 < 10000);
	grandchild = (pid_t)atoi(res.out.buf);
	T_ASSERT(grandchild > 1);
	for (i = 0; i < 50 && grandchild > 1 && !dead(grandchild); i++)
		pause_ms(20);
	if (grandchild > 1 && !dead(grandchild)) {
		kill(grandchild, SIGKILL);
		T_FAILF("grandchild %d survived the timeout", (int)grandchild);
	}
	hp_run_res_release(&res);
}

static void t_endless_output_is_cut_at_the_cap(void)
{
	struct hp_sys *sys = hp_sys_real();
	const char *argv[] = { "sh", "-c", "while :; do echo garbage-garbage-garbage; done", NULL };
	struct hp_run_req req;
	struct hp_run_res res;
	int64_t t0 = sys->monotonic_ms(sys);

	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.timeout_ms = 20000;
	hp_run_res_init(&res);
	hp_buf_release(&res.out);
	hp_buf_init(&res.out, 1 << 16);
	T_EQ(sys->run(sys, &req, &res), 0);
	T_EQ(res.out_capped, 1);
	T_EQ(res.timed_out, 0);
	T_EQ(res.out.len, (size_t)1 << 16);
	/* Stopped at the cap, long before the 20 s limit. */
	T_ASSERT(sys->monotonic_ms(sys) - t0 < 10000);
	hp_run_res_release(&res);
}

static void t_normal_run_unchanged(void)
{
	struct hp_sys *sys = hp_sys_real();
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	struct hp_run_req req;
	struct hp_run_res res;

	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.timeout_ms = 10000;
	hp_run_res_init(&res);
	T_EQ(sys->run(sys, &req, &res), 0);
	T_EQ(res.exit_status, 3);
	T_EQ(res.timed_out, 0);
	T_EQ(res.out_capped, 0);
	T_STREQ(res.out.buf, "out\n");
	T_STREQ(res.err.buf, "err\n");
	hp_run_res_release(&res);
}

struct collected {
	struct hp_buf b;
	size_t calls;
};

static void collect_out(void *ud, const char *data, size_t n)
{
	struct collected *c = ud;

	c->calls++;
	T_EQ(hp_buf_add(&c->b, data, n), 0);
}

/* on_out: stdout handed over as it comes (several pieces), none kept in res.out; out_max stops it. */
static void t_streamed_output(void)
{
	struct hp_sys *sys = hp_sys_real();
	const char *argv[] = { "sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo line-$i; i=$((i+1)); done; "
			       "echo err >&2; exit 4", NULL };
	const char *endless[] = { "sh", "-c", "while :; do echo garbage-garbage-garbage; done", NULL };
	struct collected c = { HP_BUF_INIT(1 << 20), 0 };
	struct hp_run_req req;
	struct hp_run_res res;
	int64_t t0;

	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.timeout_ms = 20000;
	req.on_out = collect_out;
	req.on_out_ud = &c;
	hp_run_res_init(&res);
	T_EQ(sys->run(sys, &req, &res), 0);
	T_EQ(res.exit_status, 4);
	T_EQ(res.out_capped, 0);
	T_EQ(res.out.len, 0);
	T_STREQ(res.err.buf, "err\n");
	T_ASSERT(c.calls >= 1);
	T_ASSERT(hp_starts_with(c.b.buf, "line-0\nline-1\n"));
	T_ASSERT(strstr(c.b.buf, "\nline-2999\n") != NULL);
	T_EQ(c.b.len, (size_t)(10 * 7 + 90 * 8 + 900 * 9 + 2000 * 10));
	hp_run_res_release(&res);

	hp_buf_reset(&c.b);
	req.argv = endless;
	req.out_max = 100000;
	t0 = sys->monotonic_ms(sys);
	hp_run_res_init(&res);
	T_EQ(sys->run(sys, &req, &res), 0);
	T_EQ(res.out_capped, 1);
	T_EQ(res.timed_out, 0);
	T_EQ(c.b.len, (size_t)100000);
	T_ASSERT(sys->monotonic_ms(sys) - t0 < 10000);
	hp_run_res_release(&res);
	hp_buf_release(&c.b);
}

static void t_stdin_fed_and_start_failure(void)
{
	struct hp_sys *sys = hp_sys_real();
	const char *cat[] = { "cat", NULL }, *none[] = { "hpnode-no-such-program", NULL };
	struct hp_run_req req;
	struct hp_run_res res;

	memset(&req, 0, sizeof(req));
	req.argv = cat;
	req.stdin_data = "fed through stdin";
	req.stdin_len = strlen(req.stdin_data);
	req.timeout_ms = 10000;
	hp_run_res_init(&res);
	T_EQ(sys->run(sys, &req, &res), 0);
	T_EQ(res.exit_status, 0);
	T_STREQ(res.out.buf, "fed through stdin");
	hp_run_res_release(&res);

	req.argv = none;
	hp_run_res_init(&res);
	errno = 0;
	T_EQ(sys->run(sys, &req, &res), -1);
	T_EQ(errno, ENOENT);
	T_EQ(res.exit_status, -1);
	hp_run_res_release(&res);
}

/* All a pty child prints until its side closes (or 10 s pass). */
static void pty_drain(struct hp_pty *p, char *out, size_t n)
{
	size_t len = 0;
	int i;

	for (i = 0; i < 100 && len < n - 1; i++) {
		long got = p->read(p, out + len, n - 1 - len, 100);

		if (got < 0)
			break;
		len += (size_t)got;
	}
	out[len] = '\0';
}

static void t_pty_child(void)
{
	struct hp_sys *sys = hp_sys_real();
	const char *argv[] = { "sh", "-c", "[ -t 0 ] && printf 'tty %s' \"$HP_PTY_TEST\"; exit 3", NULL };
	const char *none[] = { "hpnode-no-such-program", NULL };
	struct hp_pty_req req;
	struct hp_pty *p;
	char out[256];

	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.setenv = "HP_PTY_TEST=set";
	req.cols = 250;
	req.rows = 50;
	p = sys->pty_spawn(sys, &req);
	T_ASSERT(p != NULL);
	pty_drain(p, out, sizeof(out));
	T_STREQ(out, "tty set");
	T_EQ(p->close(p, 0, 2000), 3);

	req.argv = none;
	errno = 0;
	T_ASSERT(sys->pty_spawn(sys, &req) == NULL);
	T_EQ(errno, ENOENT);
}

/* A child that ignores SIGTERM is killed grace_ms after it; one that waits is ended at once. */
static void t_pty_child_stopped(void)
{
	struct hp_sys *sys = hp_sys_real();
	const char *stubborn[] = { "sh", "-c", "trap '' TERM; printf ready; while :; do sleep 1; done",
				   NULL };
	const char *sleeper[] = { "sleep", "30", NULL };
	struct hp_pty_req req;
	struct hp_pty *p;

	memset(&req, 0, sizeof(req));
	req.argv = sleeper;
	p = sys->pty_spawn(sys, &req);
	T_ASSERT(p != NULL);
	T_EQ(p->read(p, (char[16]){ 0 }, 16, 10), 0);
	T_EQ(p->close(p, 1, 2000), 128 + SIGTERM);

	req.argv = stubborn;
	p = sys->pty_spawn(sys, &req);
	T_ASSERT(p != NULL);
	{
		/* SIGTERM only once the trap is set. */
		char got[64] = "";
		size_t len = 0;
		int i;

		for (i = 0; i < 100 && !strstr(got, "ready"); i++) {
			long n = p->read(p, got + len, sizeof(got) - 1 - len, 100);

			T_ASSERT(n >= 0);
			len += (size_t)n;
			got[len] = '\0';
		}
		T_CONTAINS(got, "ready");
	}
	T_EQ(p->close(p, 1, 200), 128 + SIGKILL);
}

static void t_can_write(void)
{
	struct hp_sys *sys = hp_sys_real();
	char dir[] = "/tmp/hpnode-can-write-XXXXXX", path[128], probe[160];
	struct stat st;

	T_ASSERT(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/report.txt", dir);
	T_EQ(sys->can_write(sys, path), 0);
	/* Nothing is left behind, and the path itself is not created. */
	T_ASSERT(stat(path, &st) != 0);
	snprintf(probe, sizeof(probe), "rmdir %s", dir);
	T_EQ(system(probe), 0);
	errno = 0;
	T_EQ(sys->can_write(sys, path), -1);
	T_EQ(errno, ENOENT);
	errno = 0;
	T_EQ(sys->can_write(sys, "/tmp"), -1);
	T_EQ(errno, EISDIR);
}

/* HP_SYS_MODE_DEFAULT is 0666 less the umask; a given mode is used as it is. */
static void t_write_file_modes(void)
{
	struct hp_sys *sys = hp_sys_real();
	char path[] = "/tmp/hpnode-mode-XXXXXX";
	mode_t old = umask(027);
	struct stat st;
	int fd = mkstemp(path);

	T_ASSERT(fd >= 0);
	close(fd);
	T_EQ(sys->write_file(sys, path, "x", 1, HP_SYS_MODE_DEFAULT), 0);
	T_EQ(stat(path, &st), 0);
	T_EQ(st.st_mode & 0777, 0640);
	T_EQ(sys->write_file(sys, path, "y", 1, 0600), 0);
	T_EQ(stat(path, &st), 0);
	T_EQ(st.st_mode & 0777, 0600);
	umask(old);
	unlink(path);
}

/* Process set-up: no core dumps, not dumpable, the soft open-file limit raised to the hard one. */
static void t_proc_setup(void)
{
	struct rlimit rl, core = { 4096, RLIM_INFINITY };

	T_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= 64)
		return;
	rl.rlim_cur = 64;
	T_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	setrlimit(RLIMIT_CORE, &core);
	T_EQ(hp_sys_proc_setup(), 0);
	T_EQ(getrlimit(RLIMIT_CORE, &core), 0);
	T_EQ(core.rlim_cur, 0);
	T_EQ(core.rlim_max, 0);
	T_EQ(prctl(PR_GET_DUMPABLE, 0L, 0L, 0L, 0L), 0);
	T_EQ(hp_sys_fd_limit_at_start(), 64);
	T_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
	T_ASSERT(rl.rlim_cur > 64);
	T_EQ(hp_sys_fd_limit(), (long)rl.rlim_cur);
}

/* The sessions at once that fit a limit: ~4 descriptors each past 48 kept for the rest. */
static void t_fit_concurrency(void)
{
	T_EQ(hp_ssm_fit_concurrency(16, 0), 16);
	T_EQ(hp_ssm_fit_concurrency(16, 1024), 16);
	T_EQ(hp_ssm_fit_concurrency(256, 1024), 244);
	T_EQ(hp_ssm_fit_concurrency(64, 64), 4);
	T_EQ(hp_ssm_fit_concurrency(16, 40), 1);
	T_EQ(hp_ssm_fit_concurrency(1, 10), 1);
}

/* EMFILE from a pipe, a socket or a file is noted, so the frame can report it as such. */
static void t_emfile_noted(void)
{
	struct hp_sys *sys = hp_sys_real();
	const char *argv[] = { "true", NULL };
	struct hp_run_req req = { 0 };
	struct hp_run_res res;
	struct hp_http_req hreq = { 0 };
	struct hp_http_resp hresp;
	struct hp_buf b = HP_BUF_INIT(1024);
	struct rlimit rl, saved;
	int fds[128], n = 0, fd;

	T_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
	rl = saved;
	rl.rlim_cur = 64;
	T_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	while (n < (int)HP_ARRAY_LEN(fds) && (fd = dup(0)) >= 0)
		fds[n++] = fd;
	hp_sys_fd_exhausted_reset();
	req.argv = argv;
	hp_run_res_init(&res);
	T_EQ(sys->run(sys, &req, &res), -1);
	hp_run_res_release(&res);
	T_EQ(hp_sys_fd_exhausted(), EMFILE);
	hp_sys_fd_exhausted_reset();
	hreq.method = "GET";
	hreq.url = "http://127.0.0.1:9/";
	hreq.timeout_ms = 2000;
	hp_http_resp_init(&hresp);
	T_EQ(sys->http(sys, &hreq, &hresp), -1);
	hp_http_resp_release(&hresp);
	T_EQ(hp_sys_fd_exhausted(), EMFILE);
	hp_sys_fd_exhausted_reset();
	T_EQ(sys->read_file(sys, "/etc/hostname", &b), -1);
	T_EQ(hp_sys_fd_exhausted(), EMFILE);
	hp_sys_fd_exhausted_reset();
	while (n > 0)
		close(fds[--n]);
	setrlimit(RLIMIT_NOFILE, &saved);
	hp_buf_release(&b);
	/* With descriptors again, nothing is noted. */
	hp_run_res_init(&res);
	T_EQ(sys->run(sys, &req, &res), 0);
	hp_run_res_release(&res);
	T_EQ(hp_sys_fd_exhausted(), 0);
}

/*
 * The socket callback of every libcurl handle refuses a link-local or
 * metadata address unless the request is a metadata one (a name that
 * resolves there included); only socket() is called, nothing is sent.
 */
static void t_socket_refuses_link_local(void)
{
	static const char *const refused[] = { "169.254.169.254", "169.254.170.2" };
	/* libcurl's own holds a whole sockaddr_storage there. */
	union {
		struct curl_sockaddr a;
		struct {
			int family, socktype, protocol;
			unsigned int addrlen;
			struct sockaddr_storage st;
		} room;
	} u;
	struct curl_sockaddr *ap = &u.a;
	struct sockaddr_in *in = (struct sockaddr_in *)(void *)&u.room.st;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)(void *)&u.room.st;
	struct hp_sys_sock k = { 0, 0 };
	curl_socket_t fd;
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(refused); i++) {
		memset(&u, 0, sizeof(u));
		ap->family = AF_INET;
		ap->socktype = SOCK_STREAM;
		ap->addrlen = sizeof(*in);
		in->sin_family = AF_INET;
		T_EQ(inet_pton(AF_INET, refused[i], &in->sin_addr), 1);
		k.refused = 0;
		T_EQ(hp_sys_open_socket(&k, CURLSOCKTYPE_IPCXN, ap), CURL_SOCKET_BAD);
		T_EQ(k.refused, 1);
	}
	memset(&u, 0, sizeof(u));
	ap->family = AF_INET6;
	ap->socktype = SOCK_STREAM;
	ap->addrlen = sizeof(*in6);
	in6->sin6_family = AF_INET6;
	T_EQ(inet_pton(AF_INET6, "fd00:ec2::254", &in6->sin6_addr), 1);
	k.refused = 0;
	T_EQ(hp_sys_open_socket(&k, CURLSOCKTYPE_IPCXN, ap), CURL_SOCKET_BAD);
	T_EQ(k.refused, 1);
	/* A metadata request may go there; loopback always may. */
	k.link_local_ok = 1;
	k.refused = 0;
	fd = hp_sys_open_socket(&k, CURLSOCKTYPE_IPCXN, ap);
	T_ASSERT(fd != CURL_SOCKET_BAD);
	close(fd);
	T_EQ(k.refused, 0);
	k.link_local_ok = 0;
	memset(&u, 0, sizeof(u));
	ap->family = AF_INET;
	ap->socktype = SOCK_STREAM;
	in->sin_family = AF_INET;
	T_EQ(inet_pton(AF_INET, "127.0.0.1", &in->sin_addr), 1);
	fd = hp_sys_open_socket(&k, CURLSOCKTYPE_IPCXN, ap);
	T_ASSERT(fd != CURL_SOCKET_BAD);
	close(fd);
	T_EQ(k.refused, 0);
}

T_MAIN(T(t_socket_refuses_link_local), T(t_proc_setup), T(t_fit_concurrency), T(t_emfile_noted), T(t_timeout_kills_grandchildren), T(t_endless_output_is_cut_at_the_cap),
       T(t_normal_run_unchanged), T(t_streamed_output), T(t_stdin_fed_and_start_failure), T(t_pty_child),
       T(t_pty_child_stopped), T(t_can_write), T(t_write_file_modes))
