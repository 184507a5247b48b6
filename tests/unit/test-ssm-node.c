/*
 * The sweep's machinery without a network: the StartSession token bucket
 * and backoff on a fake clock, the worker pool's scheduling, what the
 * plugin prints turned back into output and exit code, the plugin run on a
 * scripted pseudo-terminal child, and one node's
 * StartSession/TerminateSession decisions against canned AWS replies.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fake-sys.h"
#include "hp/json.h"
#include "../../src/collect/ssm/ssm-int.h"
#include "t.h"

static void t_bucket_paces(void)
{
	struct hp_ssm_bucket b;
	int64_t now = 10000;
	int taken = 0;

	hp_ssm_bucket_init(&b, 3, 1, now);
	T_EQ(hp_ssm_bucket_take(&b, now), 0);
	/* The next token is a third of a second away. */
	T_ASSERT(hp_ssm_bucket_take(&b, now) >= 333);
	T_ASSERT(hp_ssm_bucket_take(&b, now) <= 334);
	T_EQ(hp_ssm_bucket_take(&b, now + 334), 0);
	/* Over 10 s of simulated time, callers that sleep as told get 30 tokens (+1). */
	now = 20000;
	hp_ssm_bucket_init(&b, 3, 1, now);
	while (now < 30000) {
		long w = hp_ssm_bucket_take(&b, now);
		if (!w)
			taken++;
		else
			now += w;
	}
	T_ASSERT(taken >= 30 && taken <= 31);
}

static void t_bucket_burst_and_idle(void)
{
	struct hp_ssm_bucket b;
	int i;

	hp_ssm_bucket_init(&b, 2, 4, 0);
	T_EQ(hp_ssm_bucket_take(&b, 0), 0);
	T_ASSERT(hp_ssm_bucket_take(&b, 0) > 0);
	/* A long idle stretch saves up at most `burst` tokens. */
	for (i = 0; i < 4; i++)
		T_EQ(hp_ssm_bucket_take(&b, 100000), 0);
	T_ASSERT(hp_ssm_bucket_take(&b, 100000) > 0);
	/* A clock that goes backwards does not mint tokens. */
	T_ASSERT(hp_ssm_bucket_take(&b, 50000) > 0);
}

static void t_bucket_adapts(void)
{
	struct hp_ssm_bucket b;
	int i;

	hp_ssm_bucket_init(&b, 4, 1, 0);
	hp_ssm_bucket_throttled(&b, 0);
	T_ASSERT(b.rate_per_ms * 1000 > 1.99 && b.rate_per_ms * 1000 < 2.01);
	hp_ssm_bucket_throttled(&b, 0);
	T_ASSERT(b.rate_per_ms * 1000 > 0.99 && b.rate_per_ms * 1000 < 1.01);
	for (i = 0; i < 30; i++)
		hp_ssm_bucket_throttled(&b, 0);
	T_ASSERT(b.rate_per_ms * 1000 > 0.099 && b.rate_per_ms * 1000 < 0.101);
	/* Successes bring it back, a twentieth of 4/s each, never above 4/s. */
	hp_ssm_bucket_ok(&b);
	T_ASSERT(b.rate_per_ms * 1000 > 0.299 && b.rate_per_ms * 1000 < 0.301);
	for (i = 0; i < 100; i++)
		hp_ssm_bucket_ok(&b);
	T_ASSERT(b.rate_per_ms * 1000 > 3.999 && b.rate_per_ms * 1000 < 4.001);
	/* At the lower rate the wait for a token is longer. */
	hp_ssm_bucket_init(&b, 2, 1, 0);
	T_EQ(hp_ssm_bucket_take(&b, 0), 0);
	T_ASSERT(hp_ssm_bucket_take(&b, 0) <= 501);
	hp_ssm_bucket_throttled(&b, 0);
	T_ASSERT(hp_ssm_bucket_take(&b, 0) >= 999);
}

static uint32_t rand_value;
static uint32_t fixed_random(struct hp_sys *s)
{
	(void)s;
	return rand_value;
}

static void t_backoff_full_jitter(void)
{
	struct hp_sys sys;

	memset(&sys, 0, sizeof(sys));
	sys.random = fixed_random;
	rand_value = 0xFFFFFFFFu;
	T_ASSERT(hp_ssm_backoff_ms(&sys, 1, 500, 8000) <= 500);
	T_ASSERT(hp_ssm_backoff_ms(&sys, 1, 500, 8000) >= 499);
	T_ASSERT(hp_ssm_backoff_ms(&sys, 3, 500, 8000) >= 1999);
	T_ASSERT(hp_ssm_backoff_ms(&sys, 30, 500, 8000) <= 8000);
	T_ASSERT(hp_ssm_backoff_ms(&sys, 30, 500, 8000) >= 7999);
	rand_value = 0;
	T_EQ(hp_ssm_backoff_ms(&sys, 5, 500, 8000), 0);
}

struct pool_probe {
	pthread_mutex_t lock;
	pthread_cond_t more;       /* signalled when a second item is running */
	int *seen;
	int active, max_active, bad_worker;
	int workers, waited;
	size_t n;
};

static void pool_item(void *ud, size_t i, int worker)
{
	struct pool_probe *p = ud;
	struct timespec ts = { 0, 200000 };

	pthread_mutex_lock(&p->lock);
	p->seen[i]++;
	p->active++;
	if (p->active > p->max_active)
		p->max_active = p->active;
	if (worker < 0 || worker >= p->workers)
		p->bad_worker = 1;
	if (p->active > 1)
		pthread_cond_broadcast(&p->more);
	/*
	 * The first item waits (at most 5 s) for a second one to start, so a pool
	 * that runs items at once shows it however loaded the machine is; a pool
	 * that runs them one by one makes it wait the whole time and fails below.
	 */
	if (!p->waited && p->workers > 1 && p->n > 1) {
		struct timespec until;

		p->waited = 1;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 5;
		while (p->max_active < 2 &&
		       pthread_cond_timedwait(&p->more, &p->lock, &until) == 0)
			;
	}
	pthread_mutex_unlock(&p->lock);
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&p->lock);
	p->active--;
	pthread_mutex_unlock(&p->lock);
}

static void t_pool_runs_each_item_once(void)
{
	static const struct {
		size_t n;
		int workers;
	} cases[] = { { 0, 4 }, { 1, 16 }, { 5, 1 }, { 100, 4 }, { 37, 16 }, { 3, 0 } };
	size_t c, i;

	for (c = 0; c < HP_ARRAY_LEN(cases); c++) {
		struct pool_probe p;
		int want = cases[c].workers < 1 ? 1 : cases[c].workers;

		memset(&p, 0, sizeof(p));
		pthread_mutex_init(&p.lock, NULL);
		pthread_cond_init(&p.more, NULL);
		p.seen = calloc(cases[c].n + 1, sizeof(int));
		p.workers = want;
		p.n = cases[c].n;
		hp_ssm_pool_run(cases[c].n, cases[c].workers, pool_item, &p);
		for (i = 0; i < cases[c].n; i++)
			if (p.seen[i] != 1)
				T_FAILF("case %zu: item %zu ran %d times", c, i, p.seen[i]);
		T_ASSERT(p.max_active <= want);
		if (cases[c].n > 1 && want > 1)
			T_ASSERT(p.max_active > 1);
		T_EQ(p.bad_worker, 0);
		free(p.seen);
		pthread_cond_destroy(&p.more);
		pthread_mutex_destroy(&p.lock);
	}
}

static void t_plugin_output_parse(void)
{
	static const struct {
		const char *text;
		enum hp_ssm_end end;
		const char *out;
		int has_exit, code;
		const char *detail;
	} cases[] = {
		{ "\nStarting session with SessionId: u-0123\nhello\nworld\nEXIT_CODE: 3"
		  "\n\nExiting session with sessionId: u-0123.\n\n",
		  HP_SSM_DONE, "hello\nworld\n", 1, 3, "" },
		{ "\nStarting session with SessionId: u-1\nEXIT_CODE: 0\n\nExiting session with sessionId: u-1.\n\n",
		  HP_SSM_DONE, "", 1, 0, "" },
		/* An EXIT_CODE inside the output is not the exit code. */
		{ "\nStarting session with SessionId: u-2\nEXIT_CODE: 9 is text\nEXIT_CODE: -1"
		  "\n\nExiting session with sessionId: u-2.\n\n",
		  HP_SSM_DONE, "EXIT_CODE: 9 is text\n", 1, -1, "" },
		/* Without separate streams: no exit code, still a normal end. */
		{ "\nStarting session with SessionId: u-3\nout\n\n\nExiting session with sessionId: u-3.\n\n",
		  HP_SSM_DONE, "out\n", 0, -1, "" },
		{ "\nStarting session with SessionId: u-4\npartial\n\n\nSessionId: u-4 : Command failed to run\n\n",
		  HP_SSM_FAILED, "partial\n", 0, -1, "Command failed to run" },
		{ "\nCannot perform start session: EOF\n", HP_SSM_REFUSED, "\nCannot perform start session: EOF\n",
		  0, -1, "Cannot perform start session: EOF" },
		{ "\nStarting session with SessionId: u-5\nhalf a", HP_SSM_LOST, "half a", 0, -1, "" },
		{ "", HP_SSM_LOST, "", 0, -1, "" },
	};
	size_t i;

	for (i = 0; i < HP_ARRAY_LEN(cases); i++) {
		struct hp_ssm_output o;
		enum hp_ssm_end e;

		hp_ssm_output_init(&o);
		e = hp_ssm_plugin_parse(cases[i].text, strlen(cases[i].text), &o);
		if (e != cases[i].end)
			T_FAILF("case %zu: end %s, expected %s", i, hp_ssm_end_name(e),
				hp_ssm_end_name(cases[i].end));
		T_STREQ(o.out.buf, cases[i].out);
		T_EQ(o.has_exit, cases[i].has_exit);
		T_EQ(o.exit_code, cases[i].code);
		T_STREQ(o.detail, cases[i].detail);
		hp_ssm_output_release(&o);
	}
}

static void t_plugin_probe(void)
{
	struct fake_sys f;
	struct hp_ssm_plugin_info info;

	fake_sys_init(&f);
	f.run_out = "1.2.650.0\n";
	hp_ssm_plugin_probe(&f.sys, &info);
	T_EQ(info.present, 1);
	T_STREQ(info.version, "1.2.650.0");
	T_STREQ(f.run_argv0, "session-manager-plugin");
	fake_sys_release(&f);

	fake_sys_init(&f);
	f.run_fail = 1;
	hp_ssm_plugin_probe(&f.sys, &info);
	T_EQ(info.present, 0);
	T_CONTAINS(info.error, "not found");
	fake_sys_release(&f);

	fake_sys_init(&f);
	f.run_status = 2;
	f.run_out = "panic\n";
	hp_ssm_plugin_probe(&f.sys, &info);
	T_EQ(info.present, 0);
	T_CONTAINS(info.error, "broken");
	fake_sys_release(&f);
}

/* The plugin transport over a scripted pseudo-terminal child (fake-sys.h). */
static enum hp_ssm_end plugin_run(struct fake_sys *f, const char *version, long budget_ms,
				  struct hp_ssm_output *o)
{
	struct hp_ssm_plugin_info info;

	memset(&info, 0, sizeof(info));
	info.present = 1;
	hp_strlcpy(info.version, version, sizeof(info.version));
	hp_ssm_output_init(o);
	return hp_ssm_plugin_run(&f->sys, &info, "{\"SessionId\":\"u-1\"}", "us-west-2",
				 "{\"Target\":\"t\"}", "https://ssm.us-west-2.amazonaws.com",
				 f->now_ms + budget_ms, o);
}

static void t_plugin_run_over_a_pty(void)
{
	struct fake_sys f;
	struct hp_ssm_output o;

	fake_sys_init(&f);
	f.pty_out = "\r\nStarting session with SessionId: u-1\nhello\nEXIT_CODE: 4\n\n"
		    "Exiting session with sessionId: u-1.\n\n";
	f.pty_chunk = 5;
	T_EQ(plugin_run(&f, "1.2.650.0", 60000, &o), HP_SSM_DONE);
	T_STREQ(o.out.buf, "hello\n");
	T_EQ(o.exit_code, 4);
	/* Started as the aws CLI starts it; a newer plugin reads the reply from the environment. */
	T_EQ(f.pty_argc, 7);
	T_STREQ(f.pty_argv[0], "session-manager-plugin");
	T_STREQ(f.pty_argv[1], "AWS_SSM_START_SESSION_RESPONSE");
	T_STREQ(f.pty_argv[2], "us-west-2");
	T_STREQ(f.pty_argv[3], "StartSession");
	T_STREQ(f.pty_argv[4], "");
	T_STREQ(f.pty_argv[5], "{\"Target\":\"t\"}");
	T_STREQ(f.pty_argv[6], "https://ssm.us-west-2.amazonaws.com");
	T_STREQ(f.pty_setenv, "AWS_SSM_START_SESSION_RESPONSE={\"SessionId\":\"u-1\"}");
	T_EQ(f.pty_closed, 1);
	T_EQ(f.pty_stopped, 0);
	hp_ssm_output_release(&o);

	/* An old plugin gets the reply as its first argument and nothing in the environment. */
	T_EQ(plugin_run(&f, "1.2.30.0", 60000, &o), HP_SSM_DONE);
	T_STREQ(f.pty_argv[1], "{\"SessionId\":\"u-1\"}");
	T_ASSERT(f.pty_setenv == NULL);
	hp_ssm_output_release(&o);
	fake_sys_release(&f);
}

static void t_plugin_run_ends_badly(void)
{
	struct fake_sys f;
	struct hp_ssm_output o;
	volatile sig_atomic_t stop = 0;

	/* Not installed. */
	fake_sys_init(&f);
	f.pty_errno = ENOENT;
	T_EQ(plugin_run(&f, "1.2.650.0", 60000, &o), HP_SSM_REFUSED);
	T_STREQ(o.detail, "session-manager-plugin not found on PATH");
	hp_ssm_output_release(&o);
	f.pty_errno = ENOMEM;
	T_EQ(plugin_run(&f, "1.2.650.0", 60000, &o), HP_SSM_REFUSED);
	T_CONTAINS(o.detail, "cannot start session-manager-plugin: ");
	hp_ssm_output_release(&o);
	fake_sys_release(&f);

	/* Exits before the session ended: its status is named. */
	fake_sys_init(&f);
	f.pty_out = "\nStarting session with SessionId: u-1\nhalf";
	f.pty_status = 255;
	T_EQ(plugin_run(&f, "1.2.650.0", 60000, &o), HP_SSM_LOST);
	T_STREQ(o.detail, "session-manager-plugin exited (status 255) before the session ended");
	T_STREQ(o.out.buf, "half");
	T_EQ(f.pty_stopped, 0);
	hp_ssm_output_release(&o);
	fake_sys_release(&f);

	/* Silent past the deadline: stopped, timed out. */
	fake_sys_init(&f);
	f.pty_out = "\nStarting session with SessionId: u-1\n";
	f.pty_hang = 1;
	T_EQ(plugin_run(&f, "1.2.650.0", 3000, &o), HP_SSM_TIMEOUT);
	T_EQ(f.pty_closed, 1);
	T_EQ(f.pty_stopped, 1);
	hp_ssm_output_release(&o);
	fake_sys_release(&f);

	/* Interrupted: stopped at once. */
	fake_sys_init(&f);
	f.pty_hang = 1;
	stop = 2;
	{
		struct hp_ssm_plugin_info info;

		memset(&info, 0, sizeof(info));
		hp_strlcpy(info.version, "1.2.650.0", sizeof(info.version));
		info.stop = &stop;
		hp_ssm_output_init(&o);
		T_EQ(hp_ssm_plugin_run(&f.sys, &info, "{}", "us-west-2", "{}", "https://x",
				       f.now_ms + 60000, &o), HP_SSM_STOPPED);
	}
	T_STREQ(o.detail, "interrupted");
	T_EQ(f.pty_stopped, 1);
	hp_ssm_output_release(&o);
	fake_sys_release(&f);
}

/* ---------------------------------------------------- one node */

static const char throttled[] = "{\"__type\":\"ThrottlingException\",\"message\":\"Rate exceeded\"}";
static const char started[] =
	"{\"SessionId\":\"hpnode-ci-0a1b2c\",\"TokenValue\":\"tok\","
	"\"StreamUrl\":\"wss://127.0.0.1:9/v1/data-channel/hpnode-ci-0a1b2c?role=publish_subscribe\"}";

struct node_env {
	struct fake_sys f;
	struct hp_aws a;
	struct hp_ssm_config c;
	struct hp_ssm_bucket b;
	struct hp_ssm_shared sh;
	struct hp_ssm_target t;
	struct hp_ssm_result r;
};

static void node_env(struct node_env *e)
{
	memset(e, 0, sizeof(*e));
	fake_aws(&e->f, &e->a, 3);
	hp_ssm_config_defaults(&e->c);
	e->c.command = "echo hello; exit 3";
	e->c.timeout_ms = 60000;
	strcpy(e->c.client_id, "7d1f2a44-0000-4000-8000-000000000000");
	hp_ssm_bucket_init(&e->b, 3, 1, e->f.now_ms);
	e->sh.bucket = &e->b;
	e->t.instance_id = "i-0123456789abcdef0";
	e->t.group = "workers";
	strcpy(e->t.target, "sagemaker-cluster:abcdefghijkl_workers-i-0123456789abcdef0");
}

static void node_env_release(struct node_env *e)
{
	hp_ssm_result_release(&e->r);
	fake_sys_release(&e->f);
}

static void t_node_target_not_connected(void)
{
	struct node_env e;

	node_env(&e);
	fake_reply(&e.f, 400, NULL,
		   "{\"__type\":\"TargetNotConnected\",\"message\":\"sagemaker-cluster:x is not connected.\"}");
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	T_EQ(e.r.state, HP_SSM_UNREACHABLE);
	T_CONTAINS(e.r.reason, "TargetNotConnected");
	T_EQ(e.f.nreq, 1);
	T_EQ(e.r.terminated, 0);
	T_ASSERT(e.r.failed_action == NULL);
	node_env_release(&e);
}

static void t_node_request_shape(void)
{
	struct node_env e;
	cJSON *j;

	node_env(&e);
	fake_reply(&e.f, 400, NULL, "{\"__type\":\"TargetNotConnected\",\"message\":\"no\"}");
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	T_CONTAINS(e.f.req_headers[0], "X-Amz-Target: AmazonSSM.StartSession");
	j = cJSON_Parse(e.f.req_body[0]);
	T_ASSERT(j != NULL);
	T_STREQ(hp_json_str(j, "Target"), "sagemaker-cluster:abcdefghijkl_workers-i-0123456789abcdef0");
	T_STREQ(hp_json_str(j, "DocumentName"), "AWS-StartNonInteractiveCommand");
	T_STREQ(cJSON_GetArrayItem(hp_json_get(j, "Parameters.command"), 0)->valuestring,
		"echo hello; exit 3");
	T_EQ(hp_json_len(j, "Parameters.command"), 1);
	T_STREQ(cJSON_GetArrayItem(hp_json_get(j, "Parameters.separateOutputStream"), 0)->valuestring,
		"true");
	cJSON_Delete(j);
	node_env_release(&e);
}

static void t_node_throttling_retried_then_terminated(void)
{
	struct node_env e;
	int64_t t0;

	node_env(&e);
	t0 = e.f.now_ms;
	fake_reply(&e.f, 400, NULL, throttled);
	fake_reply(&e.f, 503, NULL, "{\"__type\":\"InternalServerError\",\"message\":\"oops\"}");
	fake_reply(&e.f, 200, NULL, started);
	fake_reply(&e.f, 200, NULL, "{\"SessionId\":\"hpnode-ci-0a1b2c\"}");
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	/* Nothing listens on 127.0.0.1:9: the data channel fails, the session is ended. */
	T_EQ(e.r.state, HP_SSM_UNREACHABLE);
	T_CONTAINS(e.r.reason, "data channel");
	T_EQ(e.r.start_attempts, 3);
	T_EQ(e.f.nreq, 4);
	T_CONTAINS(e.f.req_headers[3], "AmazonSSM.TerminateSession");
	T_CONTAINS(e.f.req_body[3], "hpnode-ci-0a1b2c");
	T_EQ(e.r.terminated, 1);
	/* Backoff slept (random is half the range), and each attempt waited for a token. */
	T_ASSERT(e.f.slept_ms >= 250 + 500);
	T_ASSERT(e.f.now_ms - t0 < 5000);
	node_env_release(&e);
}

static void t_node_timeout_not_retried(void)
{
	struct node_env e;

	node_env(&e);
	fake_net_error(&e.f, HP_NET_TIMEOUT);
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	T_EQ(e.r.state, HP_SSM_SKIPPED);
	T_CONTAINS(e.r.reason, "not retried");
	T_EQ(e.f.nreq, 1);
	T_STREQ(e.r.failed_action, "StartSession");
	node_env_release(&e);
}

static void t_node_denied_stops_the_sweep(void)
{
	struct node_env e;
	struct hp_ssm_result second;

	node_env(&e);
	fake_reply(&e.f, 400, NULL,
		   "{\"__type\":\"AccessDeniedException\",\"message\":\"User: x is not authorized to perform: ssm:StartSession\"}");
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	T_EQ(e.r.state, HP_SSM_SKIPPED);
	T_CONTAINS(e.r.reason, "AccessDeniedException");
	T_STREQ(e.r.failed_action, "StartSession");
	T_EQ(e.r.failed_call.cls, HP_AWS_DENIED);
	T_EQ(e.sh.abort, 1);
	/* The next node makes no call at all. */
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &second);
	T_EQ(second.state, HP_SSM_SKIPPED);
	T_CONTAINS(second.reason, "not probed after ssm:StartSession failed with AccessDeniedException");
	T_EQ(e.f.nreq, 1);
	hp_ssm_result_release(&second);
	node_env_release(&e);
}

static void t_node_throttled_too_long(void)
{
	struct node_env e;
	int i;

	node_env(&e);
	for (i = 0; i < 10; i++)
		fake_reply(&e.f, 400, NULL, throttled);
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	T_EQ(e.r.state, HP_SSM_SKIPPED);
	T_CONTAINS(e.r.reason, "throttled after 8 attempts");
	T_EQ(e.f.nreq, 8);
	/* The shared rate came down with every throttled answer (to the 0.1/s floor). */
	T_ASSERT(e.b.rate_per_ms * 1000 < 0.11);
	T_EQ(e.r.failed_call.cls, HP_AWS_THROTTLED);
	node_env_release(&e);
}

static void t_node_deadline_during_backoff(void)
{
	struct node_env e;
	int i;

	node_env(&e);
	e.c.timeout_ms = 2000;
	for (i = 0; i < 10; i++)
		fake_reply(&e.f, 400, NULL, throttled);
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	T_EQ(e.r.state, HP_SSM_UNREACHABLE);
	T_CONTAINS(e.r.reason, "timeout after 2 s");
	T_ASSERT(e.f.nreq < 6);
	/*
	 * Waits for a rate token do not count against the deadline (they grow as
	 * each throttle halves the rate: 0.67 + 1.33 + 2.67 s here), backoff does.
	 */
	T_ASSERT(e.r.duration_ms > 2000);
	T_ASSERT(e.r.duration_ms < 2000 + 670 + 1340 + 2670 + 100);
	node_env_release(&e);
}

static void t_node_plugin_missing(void)
{
	struct node_env e;

	node_env(&e);
	e.c.transport = HP_SSM_PLUGIN;
	strcpy(e.c.plugin.error, "session-manager-plugin not found on PATH");
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	T_EQ(e.r.state, HP_SSM_SKIPPED);
	T_CONTAINS(e.r.reason, "not found on PATH");
	T_EQ(e.f.nreq, 0);
	node_env_release(&e);
}

static void t_node_reply_without_url(void)
{
	struct node_env e;

	node_env(&e);
	fake_reply(&e.f, 200, NULL, "{\"SessionId\":\"s\"}");
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	T_EQ(e.r.state, HP_SSM_SKIPPED);
	T_CONTAINS(e.r.reason, "StreamUrl");
	node_env_release(&e);
}

/* A malformed StartSession reply or a spent run budget says nothing about the node: skipped, never unreachable. */
static void t_node_unreadable_reply_or_budget(void)
{
	struct node_env e;

	node_env(&e);
	fake_reply(&e.f, 200, "Content-Type: text/html\r\n", "<html>proxy login</html>");
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	T_EQ(e.r.state, HP_SSM_SKIPPED);
	T_CONTAINS(e.r.reason, "reply unreadable (MalformedReply");
	T_STREQ(e.r.failed_action, "StartSession");
	node_env_release(&e);

	node_env(&e);
	e.a.budget_s = 60;
	e.a.deadline_ms = e.f.sys.monotonic_ms(&e.f.sys);
	fake_reply(&e.f, 200, NULL, started);
	hp_ssm_probe_node(&e.a, &e.c, &e.sh, &e.t, &e.r);
	T_EQ(e.r.state, HP_SSM_SKIPPED);
	T_CONTAINS(e.r.reason, "not probed: not sent: the run budget (--max-runtime 60 s) was spent");
	T_EQ(e.f.nreq, 0);
	node_env_release(&e);
}

T_MAIN(T(t_bucket_paces), T(t_bucket_burst_and_idle), T(t_bucket_adapts), T(t_backoff_full_jitter),
       T(t_pool_runs_each_item_once), T(t_plugin_output_parse), T(t_plugin_probe),
       T(t_plugin_run_over_a_pty), T(t_plugin_run_ends_badly),
       T(t_node_target_not_connected), T(t_node_request_shape),
       T(t_node_throttling_retried_then_terminated), T(t_node_timeout_not_retried),
       T(t_node_denied_stops_the_sweep), T(t_node_throttled_too_long),
       T(t_node_deadline_during_backoff), T(t_node_plugin_missing), T(t_node_reply_without_url),
       T(t_node_unreadable_reply_or_budget))
