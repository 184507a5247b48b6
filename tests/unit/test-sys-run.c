/*
 * The real subprocess runner (hp_sys_real()->run) with real children: a
 * timeout kills the child's whole process group (grandchildren such as an
 * exec plugin or a wrapper's kubectl included), and endless output is
 * stopped at the cap instead of growing until the timeout.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

T_MAIN(T(t_timeout_kills_grandchildren), T(t_endless_output_is_cut_at_the_cap),
       T(t_normal_run_unchanged))
