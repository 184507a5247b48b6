/*
 * The fallback transport: an installed session-manager-plugin, started the
 * way the aws CLI starts it (six arguments, the StartSession reply in an
 * environment variable for plugins newer than 1.2.497.0) under a
 * pseudo-terminal (sys->pty_spawn), so it never sees end-of-file on
 * stdin. Its printed output is split back into the command's output and
 * exit code. The plugin's own exit status means nothing and is ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ssm-int.h"

#define PLUGIN "session-manager-plugin"
#define ENV_NAME "AWS_SSM_START_SESSION_RESPONSE"
#define MAX_PLUGIN_OUTPUT (HP_SSM_MAX_STDOUT + ((size_t)64 << 10))
#define KILL_GRACE_MS 2000

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

/* What the plugin printed, until it ends, the deadline passes or the run is interrupted. */
static void read_output(struct hp_sys *sys, struct hp_pty *p, const struct hp_ssm_plugin_info *info,
			int64_t deadline, struct hp_buf *text, struct hp_ssm_output *out, int *timed_out,
			int *stopped)
{
	for (;;) {
		int64_t left = deadline - sys->monotonic_ms(sys);
		char chunk[16384];
		long got;

		if (left <= 0) {
			*timed_out = 1;
			return;
		}
		if (info->stop && *info->stop) {
			/* Interrupted: end the plugin like a timeout, the caller terminates the session. */
			*timed_out = *stopped = 1;
			return;
		}
		got = p->read(p, chunk, sizeof(chunk), left > 100 ? 100 : (long)left);
		if (got < 0)
			return;  /* the terminal's other side is gone */
		/* Past the cap the plugin keeps running; its output is dropped. */
		if (got > 0 && hp_buf_add(text, chunk, (size_t)got))
			out->out_capped = 1;
	}
}

enum hp_ssm_end hp_ssm_plugin_run(struct hp_sys *sys, const struct hp_ssm_plugin_info *info,
				  const char *response, const char *region, const char *request,
				  const char *endpoint, int64_t deadline, struct hp_ssm_output *out)
{
	struct hp_buf text = HP_BUF_INIT(MAX_PLUGIN_OUTPUT);
	char *envvar = NULL;
	const char *argv[8];
	struct hp_pty_req req;
	struct hp_pty *p;
	enum hp_ssm_end end;
	int status, timed_out = 0, stopped = 0;

	argv[0] = PLUGIN;
	memset(&req, 0, sizeof(req));
	if (version_cmp(info->version, "1.2.497.0") > 0) {
		/* Newer plugins read the reply from the environment: it stays out of ps. */
		envvar = xasprintf(ENV_NAME "=%s", response);
		req.setenv = envvar;
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
	req.argv = argv;
	req.cols = 250;
	req.rows = 50;
	p = sys->pty_spawn(sys, &req);
	if (!p) {
		if (errno == ENOENT || errno == EACCES)
			snprintf(out->detail, sizeof(out->detail), PLUGIN " not found on PATH");
		else
			snprintf(out->detail, sizeof(out->detail), "cannot start " PLUGIN ": %s",
				 strerror(errno));
		end = HP_SSM_REFUSED;
		goto done;
	}
	read_output(sys, p, info, deadline, &text, out, &timed_out, &stopped);
	status = p->close(p, timed_out, KILL_GRACE_MS);
	end = hp_ssm_plugin_parse(text.buf, text.len, out);
	if (stopped) {
		snprintf(out->detail, sizeof(out->detail), "interrupted");
		end = HP_SSM_STOPPED;
	} else if (timed_out) {
		end = HP_SSM_TIMEOUT;
	} else if (end == HP_SSM_LOST) {
		snprintf(out->detail, sizeof(out->detail),
			 PLUGIN " exited (status %d) before the session ended", status);
	}
done:
	hp_buf_release(&text);
	if (envvar) {
		hp_wipe(envvar, strlen(envvar));
		free(envvar);
	}
	return end;
}
