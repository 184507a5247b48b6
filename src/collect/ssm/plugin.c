/*
 * The fallback transport: an installed session-manager-plugin, started the
 * way the aws CLI starts it (six arguments, the StartSession reply in an
 * environment variable for plugins newer than 1.2.497.0) under a
 * pseudo-terminal, so it never sees end-of-file on stdin. Its printed
 * output is split back into the command's output and exit code. The
 * plugin's own exit status means nothing and is ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "hp/ssm.h"

#define PLUGIN "session-manager-plugin"
#define ENV_NAME "AWS_SSM_START_SESSION_RESPONSE"
#define MAX_PLUGIN_OUTPUT (HP_SSM_MAX_STDOUT + ((size_t)64 << 10))
#define KILL_GRACE_MS 2000

extern char **environ;

/* Serialises forkpty, so no other child inherits a half-set-up terminal. */
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;

void hp_ssm_plugin_probe(struct hp_sys *sys, struct hp_ssm_plugin_info *info)
{
	const char *const argv[] = { PLUGIN, "--version", NULL };
	struct hp_run_req req;
	struct hp_run_res res;
	size_t len;

	memset(info, 0, sizeof(*info));
	memset(&req, 0, sizeof(req));
	req.argv = argv;
	req.timeout_ms = 10000;
	hp_run_res_init(&res);
	if (sys->run(sys, &req, &res)) {
		snprintf(info->error, sizeof(info->error), PLUGIN " not found on PATH");
	} else if (res.timed_out || res.exit_status != 0) {
		snprintf(info->error, sizeof(info->error),
			 PLUGIN " --version failed (%s %d): installed but broken",
			 res.timed_out ? "timed out after" : "exit status",
			 res.timed_out ? 10 : res.exit_status);
	} else {
		len = strcspn(res.out.buf, "\r\n");
		while (len && (res.out.buf[len - 1] == ' ' || res.out.buf[len - 1] == '\t'))
			len--;
		if (!len || len >= sizeof(info->version)) {
			snprintf(info->error, sizeof(info->error),
				 PLUGIN " --version printed no version: installed but broken");
		} else {
			memcpy(info->version, res.out.buf, len);
			info->version[len] = '\0';
			info->present = 1;
		}
	}
	hp_run_res_release(&res);
}

/* Dotted version a compared with b, numerically per part. */
static int version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		long x = strtol(a, (char **)&a, 10), y = strtol(b, (char **)&b, 10);
		if (x != y)
			return x < y ? -1 : 1;
		if (*a == '.')
			a++;
		else if (*a)
			break;
		if (*b == '.')
			b++;
		else if (*b)
			break;
	}
	return 0;
}

/* The plugin's path from PATH (as execvp would find it); -1 when absent. */
static int find_plugin(struct hp_sys *sys, char *out, size_t n)
{
	const char *path = hp_sys_env(sys, "PATH");

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		int w = snprintf(out, n, "%.*s/" PLUGIN, (int)(len ? len : 1), len ? path : ".");
		if (w > 0 && (size_t)w < n && !access(out, X_OK))
			return 0;
		path += len + (path[len] == ':');
	}
	return -1;
}

static const char *find_last(const char *hay, size_t n, const char *needle)
{
	size_t nl = strlen(needle);
	const char *last = NULL, *p = hay;

	while ((size_t)(p - hay) < n) {
		const char *q = memmem(p, n - (size_t)(p - hay), needle, nl);
		if (!q)
			break;
		last = q;
		p = q + 1;
	}
	return last;
}

enum hp_ssm_end hp_ssm_plugin_parse(const char *text, size_t n, struct hp_ssm_output *out)
{
	static const char start[] = "Starting session with SessionId: ";
	static const char bye[] = "\n\nExiting session with sessionId: ";
	static const char ended[] = "\n\nSessionId: ";
	const char *body = text, *stop = text + n, *p, *e;
	int normal = 0, reason = 0;
	size_t len;

	p = memmem(text, n, start, sizeof(start) - 1);
	if (p) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));
		body = nl ? nl + 1 : stop;
	}
	if ((e = find_last(body, (size_t)(stop - body), bye))) {
		normal = 1;
		stop = e;
	} else if ((e = find_last(body, (size_t)(stop - body), ended))) {
		/* "\n\nSessionId: <sid> : <reason>\n\n" */
		const char *r = memmem(e + sizeof(ended) - 1, (size_t)(text + n - e) - (sizeof(ended) - 1),
				       " : ", 3);
		reason = 1;
		if (r) {
			r += 3;
			len = strcspn(r, "\n");
			if (len > (size_t)(text + n - r))
				len = (size_t)(text + n - r);
			snprintf(out->detail, sizeof(out->detail), "%.*s", (int)(len > 200 ? 200 : len), r);
		}
		stop = e;
	}
	/* The exit code is printed last, with no newline, just before the ending. */
	p = find_last(body, (size_t)(stop - body), "EXIT_CODE: ");
	if (p) {
		const char *d = p + 11, *q = d;
		if (q < stop && *q == '-')
			q++;
		while (q < stop && *q >= '0' && *q <= '9')
			q++;
		if (q > d && q == stop && q - d < 9) {
			out->has_exit = 1;
			out->exit_code = atoi(d);
			stop = p;
		}
	}
	len = (size_t)(stop - body);
	if (len > out->out.max - out->out.len) {
		len = out->out.max - out->out.len;
		out->out_capped = 1;
	}
	if (len && hp_buf_add(&out->out, body, len))
		out->out_capped = 1;
	if (normal || reason) {
		out->closed = 1;
		return normal || out->has_exit ? HP_SSM_DONE : HP_SSM_FAILED;
	}
	if ((p = memmem(text, n, "Cannot perform start session", 28))) {
		len = strcspn(p, "\r\n");
		if (len > (size_t)(text + n - p))
			len = (size_t)(text + n - p);
		snprintf(out->detail, sizeof(out->detail), "%.*s", (int)(len > 200 ? 200 : len), p);
		return HP_SSM_REFUSED;
	}
	return HP_SSM_LOST;
}

/* NULL-terminated copy of environ plus one variable. */
static char **env_with(const char *extra)
{
	size_t n = 0, i, k = 0, nl = strlen(ENV_NAME);
	char **env;

	while (environ && environ[n])
		n++;
	env = xcalloc(n + 2, sizeof(*env));
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], ENV_NAME "=", nl + 1))
			env[k++] = environ[i];
	env[k++] = (char *)(uintptr_t)extra;
	env[k] = NULL;
	return env;
}

static int reap(pid_t pid, int *status, int64_t until, struct hp_sys *sys)
{
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return 0;
		if (sys->monotonic_ms(sys) >= until)
			return -1;
		sys->sleep_ms(sys, 20);
	}
}

enum hp_ssm_end hp_ssm_plugin_run(struct hp_sys *sys, const struct hp_ssm_plugin_info *info,
				  const char *response, const char *region, const char *request,
				  const char *endpoint, int64_t deadline, struct hp_ssm_output *out)
{
	struct hp_buf text = HP_BUF_INIT(MAX_PLUGIN_OUTPUT);
	char path[4096], *envvar = NULL, **env = NULL;
	const char *argv[8];
	struct termios tio;
	struct winsize wsz;
	enum hp_ssm_end end;
	int master = -1, status = 0, timed_out = 0, stopped = 0;
	pid_t pid;

	if (find_plugin(sys, path, sizeof(path))) {
		snprintf(out->detail, sizeof(out->detail), PLUGIN " not found on PATH");
		return HP_SSM_REFUSED;
	}
	argv[0] = PLUGIN;
	if (version_cmp(info->version, "1.2.497.0") > 0) {
		/* Newer plugins read the reply from the environment: it stays out of ps. */
		envvar = xasprintf(ENV_NAME "=%s", response);
		env = env_with(envvar);
		argv[1] = ENV_NAME;
	} else {
		argv[1] = response;
	}
	argv[2] = region;
	argv[3] = "StartSession";
	argv[4] = "";
	argv[5] = request;
	argv[6] = endpoint;
	argv[7] = NULL;
	memset(&tio, 0, sizeof(tio));
	cfmakeraw(&tio);
	memset(&wsz, 0, sizeof(wsz));
	wsz.ws_col = 250;
	wsz.ws_row = 50;
	pthread_mutex_lock(&fork_lock);
	pid = forkpty(&master, NULL, &tio, &wsz);
	if (pid == 0) {
		closefrom(3);
		execve(path, (char *const *)(uintptr_t)argv, env ? env : environ);
		_exit(127);
	}
	if (pid > 0)
		fcntl(master, F_SETFD, FD_CLOEXEC);
	pthread_mutex_unlock(&fork_lock);
	if (pid < 0) {
		snprintf(out->detail, sizeof(out->detail), "cannot start " PLUGIN ": %s",
			 strerror(errno));
		end = HP_SSM_REFUSED;
		goto done;
	}
	for (;;) {
		int64_t left = deadline - sys->monotonic_ms(sys);
		struct pollfd pfd = { master, POLLIN, 0 };
		char chunk[16384];
		ssize_t got;

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		if (info->stop && *info->stop) {
			/* Interrupted: end the plugin like a timeout, the caller terminates the session. */
			timed_out = stopped = 1;
			break;
		}
		if (poll(&pfd, 1, left > 100 ? 100 : (int)left) <= 0)
			continue;
		got = read(master, chunk, sizeof(chunk));
		if (got > 0) {
			/* Past the cap the plugin keeps running; its output is dropped. */
			if (hp_buf_add(&text, chunk, (size_t)got))
				out->out_capped = 1;
			continue;
		}
		if (got < 0 && errno == EINTR)
			continue;
		break;  /* EIO: the terminal's other side is gone */
	}
	if (timed_out || reap(pid, &status, sys->monotonic_ms(sys) + KILL_GRACE_MS, sys)) {
		kill(pid, SIGTERM);
		if (reap(pid, &status, sys->monotonic_ms(sys) + KILL_GRACE_MS, sys)) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
		}
	}
	close(master);
	end = hp_ssm_plugin_parse(text.buf, text.len, out);
	if (stopped) {
		snprintf(out->detail, sizeof(out->detail), "interrupted");
		end = HP_SSM_STOPPED;
	} else if (timed_out) {
		end = HP_SSM_TIMEOUT;
	} else if (end == HP_SSM_LOST) {
		snprintf(out->detail, sizeof(out->detail),
			 PLUGIN " exited (status %d) before the session ended",
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	}
done:
	hp_buf_release(&text);
	if (envvar) {
		hp_wipe(envvar, strlen(envvar));
		free(envvar);
	}
	free(env);
	return end;
}
