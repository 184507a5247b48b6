/*
 * The real hp_sys children (include/hp/sys.h): run() with pipes, poll()
 * and a deadline, and pty_spawn() for a child on a pseudo-terminal. A
 * child that cannot be executed is told apart from one that ran and
 * failed through a close-on-exec pipe that carries exec's errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "sys-int.h"

#define DEFAULT_RUN_TIMEOUT_MS 60000L
/* How soon a waiting run() sees the interrupt flag. */
#define STOP_POLL_MS 100

extern char **environ;

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child: exec argv (env NULL = inherit); on failure send errno down fail_fd and exit 127. */
HP_NORETURN static void exec_child(const char *const *argv, char *const *env, int fail_fd)
{
	char ebyte;

	if (env)
		execvpe(argv[0], (char *const *)(uintptr_t)argv, env);
	else
		execvp(argv[0], (char *const *)(uintptr_t)argv);
	ebyte = (char)errno;
	if (write(fail_fd, &ebyte, 1) < 0)
		_exit(127);
	_exit(127);
}

/* In the parent: 0 when the child executed (the pipe closed empty), else -1 with exec's errno. */
static int exec_outcome(int *fail_rd)
{
	char ebyte;
	ssize_t n;

	while ((n = read(*fail_rd, &ebyte, 1)) < 0 && errno == EINTR)
		;
	close_fd(fail_rd);
	if (n == 1) {
		errno = ebyte;
		return -1;
	}
	return 0;
}

/* Wait for pid; its exit code, or 128+signal. */
static int reap(pid_t pid)
{
	int status = 0;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

/* The child and its process group. */
static void kill_group(pid_t pid)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

/* ---- run(): pipes and poll ---- */

/* One child of run(): our ends of its pipes (-1 once closed). */
struct child {
	pid_t pid;
	int in, out, err;
	size_t written;      /* bytes of stdin_data written */
	size_t streamed;     /* bytes of stdout handed to req->on_out */
};

/* Pipes, fork, exec in its own process group. 0, or -1 with errno (nothing left open). */
static int start_child(const struct hp_run_req *req, struct child *c)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 }, fail[2] = { -1, -1 };
	int saved;

	/*
	 * Close-on-exec everywhere: a child that another thread forks at the
	 * same moment must not inherit these ends (it would hold this child's
	 * output open past its exit). dup2 onto 0, 1 and 2 clears the flag there.
	 */
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) ||
	    pipe2(fail, O_CLOEXEC))
		goto fail;
	c->pid = fork();
	if (c->pid < 0)
		goto fail;
	if (c->pid == 0) {
		/* Its own process group, so a timeout ends its children too. */
		setpgid(0, 0);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]); close(err[0]); close(err[1]);
		close(fail[0]);
		exec_child(req->argv, (char *const *)(uintptr_t)req->env, fail[1]);
	}
	setpgid(c->pid, c->pid);  /* also here: whichever runs first */
	close(in[0]); close(out[1]); close(err[1]); close(fail[1]);
	c->in = in[1];
	c->out = out[0];
	c->err = err[0];
	c->written = 0;
	c->streamed = 0;
	if (exec_outcome(&fail[0])) {
		saved = errno;
		close_fd(&c->in); close_fd(&c->out); close_fd(&c->err);
		reap(c->pid);
		errno = saved;
		return -1;
	}
	fcntl(c->in, F_SETFL, O_NONBLOCK);
	if (!req->stdin_len)
		close_fd(&c->in);
	return 0;
fail:
	saved = errno;
	hp_sys_note_errno(saved);
	close_fd(&in[0]); close_fd(&in[1]); close_fd(&out[0]); close_fd(&out[1]);
	close_fd(&err[0]); close_fd(&err[1]); close_fd(&fail[0]); close_fd(&fail[1]);
	errno = saved;
	return -1;
}

/* Read one pipe into buf; returns 0 at EOF, 1 when more may come, 2 past the cap. */
static int drain(int fd, struct hp_buf *buf)
{
	char chunk[16384];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n > 0) {
		/* Output past the cap is dropped; the caller decides about the child. */
		if (hp_buf_add(buf, chunk, (size_t)n)) {
			size_t room = buf->max - buf->len;

			if (room && hp_buf_add(buf, chunk, room))
				return 2;
			return 2;
		}
		return 1;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	return 0;
}

/* Write what stdin can take now; closes it once everything (or an error) is through. */
static void feed_stdin(struct child *c, const struct hp_run_req *req)
{
	ssize_t w = write(c->in, req->stdin_data + c->written, req->stdin_len - c->written);

	if (w > 0)
		c->written += (size_t)w;
	if (w < 0 && errno != EAGAIN && errno != EINTR)
		c->written = req->stdin_len;
	if (c->written >= req->stdin_len)
		close_fd(&c->in);
}

/* Stdout for req->on_out: as it arrives; 0 at EOF, 1 when more may come, 2 past out_max. */
static int stream(int fd, const struct hp_run_req *req, size_t *total)
{
	char chunk[16384];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n > 0) {
		size_t give = (size_t)n;

		if (req->out_max && *total + give > req->out_max)
			give = req->out_max - *total;
		*total += give;
		if (give)
			req->on_out(req->on_out_ud, chunk, give);
		return give < (size_t)n ? 2 : 1;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	return 0;
}

/* Stdout became readable: keep it, and stop a child whose output passes the cap. */
static void take_stdout(struct child *c, const struct hp_run_req *req, struct hp_run_res *res)
{
	int d = req->on_out ? stream(c->out, req, &c->streamed) : drain(c->out, &res->out);

	if (d == 2) {
		/* Endless output: stop the child (and its group) now. */
		res->out_capped = 1;
		kill_group(c->pid);
	}
	if (d != 1)
		close_fd(&c->out);
}

/* Feed stdin and collect stdout and stderr until both close or the deadline passes. */
static void pump(struct child *c, const struct hp_run_req *req, struct hp_run_res *res,
		 const volatile sig_atomic_t *stop)
{
	int64_t deadline = mono_ms() + (req->timeout_ms > 0 ? req->timeout_ms : DEFAULT_RUN_TIMEOUT_MS);

	while (c->out >= 0 || c->err >= 0) {
		struct pollfd p[3];
		int np = 0, left = (int)(deadline - mono_ms());

		if (left <= 0) {
			res->timed_out = 1;
			kill_group(c->pid);
			return;
		}
		/* Interrupted: the child and its group end now (the handler may run in another thread). */
		if (stop && *stop) {
			res->interrupted = 1;
			kill_group(c->pid);
			return;
		}
		if (stop && left > STOP_POLL_MS)
			left = STOP_POLL_MS;
		if (c->out >= 0)
			p[np].fd = c->out, p[np].events = POLLIN, np++;
		if (c->err >= 0)
			p[np].fd = c->err, p[np].events = POLLIN, np++;
		if (c->in >= 0)
			p[np].fd = c->in, p[np].events = POLLOUT, np++;
		if (poll(p, (nfds_t)np, left) < 0 && errno != EINTR)
			return;
		while (np--) {
			if (!p[np].revents)
				continue;
			if (p[np].fd == c->in)
				feed_stdin(c, req);
			else if (p[np].fd == c->out)
				take_stdout(c, req, res);
			else if (p[np].fd == c->err && !drain(c->err, &res->err))
				close_fd(&c->err);
		}
	}
}

int hp_sys_real_run(struct hp_sys *sys, const struct hp_run_req *req, struct hp_run_res *res)
{
	struct child c;

	if (start_child(req, &c)) {
		res->exit_status = -1;
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);
	pump(&c, req, res, sys ? sys->stop : NULL);
	close_fd(&c.in);
	close_fd(&c.out);
	close_fd(&c.err);
	if (res->timed_out || res->interrupted)
		kill_group(c.pid);
	res->exit_status = reap(c.pid);
	return 0;
}

/* ---- pty_spawn(): a child on a pseudo-terminal ---- */

struct pty_child {
	struct hp_pty pty;
	pid_t pid;
	int master;
};

/* Serialises forkpty, so no other child inherits a half-set-up terminal. */
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;

static long pty_read(struct hp_pty *p, void *buf, size_t n, long wait_ms)
{
	struct pty_child *c = p->impl;
	struct pollfd pfd = { c->master, POLLIN, 0 };
	ssize_t got;

	if (poll(&pfd, 1, wait_ms > 0 ? (int)wait_ms : 0) <= 0)
		return 0;
	got = read(c->master, buf, n);
	if (got > 0)
		return (long)got;
	if (got < 0 && errno == EINTR)
		return 0;
	return -1;  /* EIO: the terminal's other side is gone */
}

/* Wait up to ms for the child to exit: 1 with *status set, or 0. */
static int reaped_within(pid_t pid, long ms, int *status)
{
	int64_t until = mono_ms() + ms;
	struct timespec tick = { 0, 20 * 1000000L };

	for (;;) {
		int st = 0;
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid) {
			*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			return 1;
		}
		if (w < 0 && errno != EINTR) {
			*status = -1;
			return 1;
		}
		if (mono_ms() >= until)
			return 0;
		nanosleep(&tick, NULL);
	}
}

static int pty_close(struct hp_pty *p, int stop, long grace_ms)
{
	struct pty_child *c = p->impl;
	int status = -1;

	if (stop || !reaped_within(c->pid, grace_ms, &status)) {
		kill(c->pid, SIGTERM);
		if (!reaped_within(c->pid, grace_ms, &status)) {
			kill(c->pid, SIGKILL);
			status = reap(c->pid);
		}
	}
	close(c->master);
	free(c);
	return status;
}

/* NULL-terminated copy of environ with setenv ("NAME=value") in place of any NAME. */
static char **env_with(const char *setenv)
{
	size_t n = 0, i, k = 0, nl = strcspn(setenv, "=") + 1;
	char **env;

	while (environ && environ[n])
		n++;
	env = xcalloc(n + 2, sizeof(*env));
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], setenv, nl))
			env[k++] = environ[i];
	env[k++] = (char *)(uintptr_t)setenv;
	env[k] = NULL;
	return env;
}

/* In the child: keep fail_fd as descriptor 3 (close-on-exec), close everything above. */
static void keep_only_fail_fd(int fail_fd)
{
	if (fail_fd != 3) {
		dup2(fail_fd, 3);
		fcntl(3, F_SETFD, FD_CLOEXEC);
	}
	closefrom(4);
}

struct hp_pty *hp_sys_real_pty_spawn(struct hp_sys *sys, const struct hp_pty_req *req)
{
	char **env = req->setenv ? env_with(req->setenv) : NULL;
	int fail[2] = { -1, -1 }, master = -1, saved;
	struct pty_child *c;
	struct termios tio;
	struct winsize wsz;
	pid_t pid;

	(void)sys;
	if (pipe2(fail, O_CLOEXEC)) {
		hp_sys_note_errno(errno);
		free(env);
		return NULL;
	}
	memset(&tio, 0, sizeof(tio));
	cfmakeraw(&tio);
	memset(&wsz, 0, sizeof(wsz));
	wsz.ws_col = (unsigned short)req->cols;
	wsz.ws_row = (unsigned short)req->rows;
	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_lock(&fork_lock);
	pid = forkpty(&master, NULL, &tio, &wsz);
	if (pid == 0) {
		close(fail[0]);
		keep_only_fail_fd(fail[1]);
		exec_child(req->argv, env, 3);
	}
	saved = errno;
	if (pid > 0)
		fcntl(master, F_SETFD, FD_CLOEXEC);
	pthread_mutex_unlock(&fork_lock);
	close(fail[1]);
	free(env);
	if (pid < 0) {
		hp_sys_note_errno(saved);
		close(fail[0]);
		errno = saved;
		return NULL;
	}
	if (exec_outcome(&fail[0])) {
		saved = errno;
		close(master);
		reap(pid);
		errno = saved;
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->pid = pid;
	c->master = master;
	c->pty.read = pty_read;
	c->pty.close = pty_close;
	c->pty.impl = c;
	return &c->pty;
}
