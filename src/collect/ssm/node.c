/*
 * One node end to end, and the sweep over many: a rate token, then
 * ssm:StartSession (retried with jittered backoff on throttling, 5xx and
 * refused connections only; never after a timeout, which may have started
 * a session), then the data channel natively or through the plugin, then
 * ssm:TerminateSession for any session that did not end by itself. Every
 * node ends probed, unreachable or skipped, with the reason.
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hp/json.h"
#include "ssm-int.h"

#define DOCUMENT "AWS-StartNonInteractiveCommand"
#define CALL_TIMEOUT_MS 30000L
#define TERMINATE_TIMEOUT_MS 5000L

const char *hp_ssm_state_name(enum hp_ssm_state s)
{
	switch (s) {
	case HP_SSM_PROBED: return "probed";
	case HP_SSM_UNREACHABLE: return "unreachable";
	case HP_SSM_SKIPPED: return "skipped";
	}
	return "unknown";
}

void hp_ssm_config_defaults(struct hp_ssm_config *c)
{
	memset(c, 0, sizeof(*c));
	c->transport = HP_SSM_NATIVE;
	c->concurrency = 16;
	c->rate_per_s = 3;
	c->timeout_ms = 180000;
	c->max_start_attempts = 8;
	c->backoff_base_ms = 500;
	c->backoff_cap_ms = 10000;
}

int hp_ssm_fit_concurrency(int want, long fd_limit)
{
	long fit;

	if (fd_limit <= 0 || want <= 1)
		return want;
	fit = (fd_limit - HP_SSM_FDS_RESERVED) / HP_SSM_FDS_PER_SESSION;
	if (fit < 1)
		fit = 1;
	return fit < want ? (int)fit : want;
}

void hp_ssm_result_release(struct hp_ssm_result *r)
{
	hp_ssm_output_release(&r->output);
	hp_aws_result_release(&r->failed_call);
}

static void lock(struct hp_ssm_shared *sh)
{
	if (sh->lock)
		pthread_mutex_lock(sh->lock);
}

static void unlock(struct hp_ssm_shared *sh)
{
	if (sh->lock)
		pthread_mutex_unlock(sh->lock);
}

static void set_reason(struct hp_ssm_result *r, enum hp_ssm_state st, const char *fmt, ...)
	HP_PRINTF(3, 4);

static void set_reason(struct hp_ssm_result *r, enum hp_ssm_state st, const char *fmt, ...)
{
	va_list ap;

	r->state = st;
	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
}

/* Keep a failed call for the snapshot's "calls" (the first one wins). */
static void keep_call(struct hp_ssm_result *r, const char *action, struct hp_aws_result *res)
{
	if (r->failed_action) {
		hp_aws_result_release(res);
		return;
	}
	r->failed_action = action;
	r->failed_call = *res;
	memset(res, 0, sizeof(*res));
}

/* Sleep up to ms, never past the deadline. 0 when the deadline is still ahead afterwards. */
static int nap(struct hp_sys *sys, long ms, int64_t deadline)
{
	int64_t left = deadline - sys->monotonic_ms(sys);

	if (left <= 0)
		return -1;
	if (ms > left)
		ms = (long)left;
	if (ms > 0)
		sys->sleep_ms(sys, ms);
	return sys->monotonic_ms(sys) < deadline ? 0 : -1;
}

/* The line for rate tokens (sh->waiting, lock held): joining, leaving, whether place is first. */
static void join_line(struct hp_ssm_shared *sh, size_t place)
{
	if (sh->waiting)
		sh->waiting[sh->nwaiting++] = place;
}

static void leave_line(struct hp_ssm_shared *sh, size_t place)
{
	size_t i;

	for (i = 0; sh->waiting && i < sh->nwaiting; i++)
		if (sh->waiting[i] == place) {
			sh->waiting[i] = sh->waiting[--sh->nwaiting];
			return;
		}
}

static int first_in_line(const struct hp_ssm_shared *sh, size_t place)
{
	size_t i;

	for (i = 0; sh->waiting && i < sh->nwaiting; i++)
		if (sh->waiting[i] < place)
			return 0;
	return 1;
}

/*
 * Wait for a StartSession token, the node at place behind every waiting
 * node placed before it. 0, or -1 when the deadline passed or the sweep was
 * stopped first. *waited gets the milliseconds spent waiting.
 */
static int take_token(struct hp_sys *sys, struct hp_ssm_shared *sh, size_t place,
		      int64_t deadline, int64_t *waited)
{
	int64_t t0 = sys->monotonic_ms(sys);

	lock(sh);
	join_line(sh, place);
	unlock(sh);
	for (;;) {
		long wait;
		int stop, rc;

		lock(sh);
		if (sh->stop && *sh->stop && !sh->abort) {
			snprintf(sh->abort_reason, sizeof(sh->abort_reason), "the run was interrupted");
			sh->abort = 1;
		}
		stop = sh->abort;
		if (stop)
			wait = 0;
		else if (first_in_line(sh, place))
			wait = hp_ssm_bucket_take(sh->bucket, sys->monotonic_ms(sys));
		else
			/* Someone placed before waits: look again once it can have its token. */
			wait = hp_ssm_bucket_due(sh->bucket, sys->monotonic_ms(sys)) + 1;
		if (stop || !wait)
			leave_line(sh, place);
		unlock(sh);
		*waited = sys->monotonic_ms(sys) - t0;
		if (stop)
			return -1;
		if (!wait)
			return 0;
		if ((rc = nap(sys, wait, deadline))) {
			lock(sh);
			leave_line(sh, place);
			unlock(sh);
			return rc;
		}
	}
}

/* A connection that never reached the service: nothing was started, so a retry is safe. */
static int never_sent(const struct hp_aws_result *res)
{
	return res->cls == HP_AWS_NETWORK && !strcmp(res->code, "ConnectionError") &&
	       (hp_strcasestr(res->message, "failed to connect") ||
		hp_strcasestr(res->message, "could not resolve") ||
		hp_strcasestr(res->message, "connection refused"));
}

static cJSON *start_request(const struct hp_ssm_config *c, const struct hp_ssm_target *t)
{
	cJSON *in = cJSON_CreateObject(), *params = cJSON_CreateObject(), *cmd = cJSON_CreateArray();
	cJSON *sep = cJSON_CreateArray();

	cJSON_AddStringToObject(in, "Target", t->target);
	cJSON_AddStringToObject(in, "DocumentName", DOCUMENT);
	cJSON_AddItemToArray(cmd, cJSON_CreateString(c->command));
	cJSON_AddItemToObject(params, "command", cmd);
	cJSON_AddItemToArray(sep, cJSON_CreateString("true"));
	cJSON_AddItemToObject(params, "separateOutputStream", sep);
	cJSON_AddItemToObject(in, "Parameters", params);
	cJSON_AddStringToObject(in, "Reason", "hpnode read-only node probe");
	return in;
}

/*
 * StartSession under the rate limit. The node's deadline starts when its
 * first call goes out (*deadline 0 until then) and is pushed back by every
 * later wait for a rate token: queueing is hpnode's own pacing, shared by
 * all nodes, not this node's slowness. Backoff after a throttled or failed
 * call does count. Returns the reply (SessionId, StreamUrl, TokenValue all
 * present) or NULL with r's state set.
 */
static cJSON *start_session(struct hp_aws *a, const struct hp_ssm_config *c,
			    struct hp_ssm_shared *sh, size_t place, const cJSON *in,
			    int64_t *deadline, struct hp_ssm_result *r)
{
	struct hp_sys *sys = a->sys;
	int attempt;

	for (attempt = 1;; attempt++) {
		struct hp_aws_result res;
		int64_t left, waited = 0;
		/*
		 * No deadline on the queue itself; only another node's fatal error ends the
		 * wait. Past the run budget no token is waited for: the call is refused unsent.
		 */
		int rc = a->deadline_ms && hp_aws_budget_left_ms(a) <= 0 ? 0 :
			take_token(sys, sh, place, INT64_MAX, &waited);

		if (*deadline)
			*deadline += waited;
		if (rc) {
			lock(sh);
			set_reason(r, HP_SSM_SKIPPED, "not probed after %s", sh->abort_reason);
			unlock(sh);
			return NULL;
		}
		if (!*deadline) {
			r->started_ms = sys->monotonic_ms(sys);
			*deadline = r->started_ms + c->timeout_ms;
		}
		left = *deadline - sys->monotonic_ms(sys);
		a->max_attempts = 1;
		a->timeout_ms = left < CALL_TIMEOUT_MS ? (long)left : CALL_TIMEOUT_MS;
		r->start_attempts = attempt;
		if (!hp_aws_json(a, HP_SVC_SSM, "StartSession", in, &res)) {
			const cJSON *j = res.json;
			lock(sh);
			hp_ssm_bucket_ok(sh->bucket);
			unlock(sh);
			if (hp_json_str(j, "SessionId") && hp_json_str(j, "StreamUrl") &&
			    hp_json_str(j, "TokenValue")) {
				cJSON *reply = res.json;
				res.json = NULL;
				hp_aws_result_release(&res);
				return reply;
			}
			set_reason(r, HP_SSM_SKIPPED, "StartSession reply lacks SessionId, StreamUrl or TokenValue");
			hp_aws_result_release(&res);
			return NULL;
		}
		switch (res.cls) {
		case HP_AWS_THROTTLED:
			/* Everyone slows down: the account's limit is lower than asked. */
			lock(sh);
			hp_ssm_bucket_throttled(sh->bucket, sys->monotonic_ms(sys));
			unlock(sh);
			break;
		case HP_AWS_SERVER:
			break;
		case HP_AWS_PARSE:
			/* The API's answer was unreadable: nothing is known about the node. */
			set_reason(r, HP_SSM_SKIPPED, "ssm:StartSession reply unreadable (%.80s: %.200s)",
				   res.code, res.message);
			keep_call(r, "StartSession", &res);
			return NULL;
		case HP_AWS_NETWORK:
			if (!strcmp(res.code, "RunBudgetExceeded")) {
				set_reason(r, HP_SSM_SKIPPED, "not probed: %.200s", res.message);
				keep_call(r, "StartSession", &res);
				return NULL;
			}
			if (never_sent(&res))
				break;
			set_reason(r, HP_SSM_SKIPPED,
				   "StartSession got no answer (%.80s: %.120s); not retried, as a session may have started",
				   res.code, res.message);
			keep_call(r, "StartSession", &res);
			return NULL;
		case HP_AWS_DENIED:
		case HP_AWS_AUTH:
			/* Every other node would fail the same way: stop the sweep. */
			lock(sh);
			if (!sh->abort) {
				snprintf(sh->abort_reason, sizeof(sh->abort_reason),
					 "ssm:StartSession failed with %.80s", res.code);
				sh->abort = 1;
			}
			unlock(sh);
			set_reason(r, HP_SSM_SKIPPED, "ssm:StartSession failed with %.80s: %.200s", res.code,
				   res.message);
			keep_call(r, "StartSession", &res);
			return NULL;
		default:
			/* TargetNotConnected, InvalidTarget, InvalidDocument, ...: this node's answer. */
			set_reason(r, HP_SSM_UNREACHABLE, "%.80s: %.200s", res.code, res.message);
			hp_aws_result_release(&res);
			return NULL;
		}
		if (attempt >= c->max_start_attempts) {
			set_reason(r, HP_SSM_SKIPPED, "StartSession still %s after %d attempts (%.80s)",
				   res.cls == HP_AWS_THROTTLED ? "throttled" : "failing", attempt, res.code);
			keep_call(r, "StartSession", &res);
			return NULL;
		}
		hp_aws_result_release(&res);
		if (nap(sys, hp_ssm_backoff_ms(sys, attempt, c->backoff_base_ms, c->backoff_cap_ms),
			*deadline)) {
			set_reason(r, HP_SSM_UNREACHABLE,
				   "timeout after %ld s (StartSession throttled or failing)",
				   c->timeout_ms / 1000);
			return NULL;
		}
	}
}

static void terminate(struct hp_aws *a, const char *session_id, struct hp_ssm_result *r)
{
	struct hp_aws_result res;
	cJSON *in = cJSON_CreateObject();

	cJSON_AddStringToObject(in, "SessionId", session_id);
	/* Interrupted: one quick try each, so the whole stop stays within a few seconds. */
	a->max_attempts = r->output.detail[0] && !strcmp(r->output.detail, "interrupted") ? 1 : 2;
	a->timeout_ms = TERMINATE_TIMEOUT_MS;
	r->terminated = 1;
	if (hp_aws_json(a, HP_SVC_SSM, "TerminateSession", in, &res))
		keep_call(r, "TerminateSession", &res);
	else
		hp_aws_result_release(&res);
	cJSON_Delete(in);
}

static enum hp_ssm_end native(struct hp_aws *a, const struct hp_ssm_config *c, const cJSON *reply,
			      int64_t deadline, struct hp_ssm_output *out)
{
	const char *url = hp_json_str(reply, "StreamUrl");
	char host[512], path[8192];
	struct hp_ssm_channel ch;
	struct hp_stream *io;
	enum hp_ssm_end end;
	int port;

	if (hp_ssm_parse_url(url, host, sizeof(host), &port, path, sizeof(path))) {
		snprintf(out->detail, sizeof(out->detail), "StreamUrl is not a wss:// URL");
		return HP_SSM_REFUSED;
	}
	io = hp_ssm_tls_open(a->sys, url, a->ca_bundle, deadline, out->detail, sizeof(out->detail));
	if (!io)
		return a->sys->monotonic_ms(a->sys) >= deadline ? HP_SSM_TIMEOUT : HP_SSM_REFUSED;
	ch.host = host;
	ch.path = path;
	ch.token = hp_json_str(reply, "TokenValue");
	ch.client_id = c->client_id;
	ch.stop = c->stop;
	end = hp_ssm_session_run(io, a->sys, &ch, deadline, out);
	io->close(io);
	return end;
}

static enum hp_ssm_end plugin(struct hp_aws *a, const struct hp_ssm_config *c, const cJSON *reply,
			      const cJSON *in, int64_t deadline, struct hp_ssm_output *out)
{
	cJSON *resp = cJSON_CreateObject();
	char *resp_text, *req_text;
	enum hp_ssm_end end;

	cJSON_AddStringToObject(resp, "SessionId", hp_json_str(reply, "SessionId"));
	cJSON_AddStringToObject(resp, "TokenValue", hp_json_str(reply, "TokenValue"));
	cJSON_AddStringToObject(resp, "StreamUrl", hp_json_str(reply, "StreamUrl"));
	resp_text = cJSON_PrintUnformatted(resp);
	req_text = cJSON_PrintUnformatted(in);
	if (!resp_text || !req_text)
		hp_die("out of memory");
	end = hp_ssm_plugin_run(a->sys, &c->plugin, resp_text, a->region, req_text,
				a->endpoint[HP_SVC_SSM], deadline, out);
	hp_wipe(resp_text, strlen(resp_text));
	free(resp_text);
	free(req_text);
	cJSON_Delete(resp);
	return end;
}

/* Turn how the session ended into the node's state. */
static void judge(const struct hp_ssm_config *c, enum hp_ssm_end end, struct hp_ssm_result *r)
{
	const char *d = r->output.detail;

	switch (end) {
	case HP_SSM_DONE:
		set_reason(r, HP_SSM_PROBED, "%s", "");
		break;
	case HP_SSM_TIMEOUT:
		set_reason(r, HP_SSM_UNREACHABLE, "timeout after %ld s", c->timeout_ms / 1000);
		break;
	case HP_SSM_LOST:
		set_reason(r, HP_SSM_UNREACHABLE, "%.300s", d[0] ? d : "connection lost");
		break;
	case HP_SSM_REFUSED:
		set_reason(r, HP_SSM_UNREACHABLE, "data channel refused: %.280s", d);
		break;
	case HP_SSM_FAILED:
		set_reason(r, HP_SSM_UNREACHABLE, "session ended with an error: %.270s", d);
		break;
	case HP_SSM_UNSUPPORTED:
		set_reason(r, HP_SSM_SKIPPED,
			   "the SSM agent asked for handshake action '%.48s', which hpnode does not "
			   "support; the node answered but ended the session: %.160s",
			   r->output.refused_action, d);
		break;
	case HP_SSM_STOPPED:
		set_reason(r, HP_SSM_SKIPPED, "the run was interrupted during its session");
		break;
	case HP_SSM_KMS:
		set_reason(r, HP_SSM_SKIPPED,
			   "the session is KMS-encrypted; the native client refuses KMS (use "
			   "--ssm-transport plugin with session-manager-plugin installed)");
		break;
	}
}

void hp_ssm_probe_node(struct hp_aws *a, const struct hp_ssm_config *c, struct hp_ssm_shared *sh,
		       const struct hp_ssm_target *t, struct hp_ssm_result *r)
{
	struct hp_sys *sys = a->sys;
	int64_t deadline = 0;
	enum hp_ssm_transport use = c->transport;
	cJSON *in, *reply;
	enum hp_ssm_end end = HP_SSM_DONE;
	int round, kms_seen;

	memset(r, 0, sizeof(*r));
	hp_ssm_output_init(&r->output);
	if (c->max_stdout)
		r->output.out.max = c->max_stdout;
	lock(sh);
	kms_seen = sh->kms_seen;
	unlock(sh);
	if (use == HP_SSM_AUTO && kms_seen && c->plugin.present)
		use = HP_SSM_PLUGIN;
	if (use == HP_SSM_PLUGIN && !c->plugin.present) {
		set_reason(r, HP_SSM_SKIPPED, "--ssm-transport plugin: %s", c->plugin.error);
		return;
	}
	in = start_request(c, t);
	/* Round 2 happens only in auto mode, when the native client met KMS. */
	for (round = 0; round < 2; round++) {
		reply = start_session(a, c, sh, t->place, in, &deadline, r);
		if (!reply)
			break;
		r->used = use == HP_SSM_PLUGIN ? HP_SSM_PLUGIN : HP_SSM_NATIVE;
		if (c->stop && *c->stop) {
			/* Interrupted while StartSession was on its way: end the new session now. */
			snprintf(r->output.detail, sizeof(r->output.detail), "interrupted");
			end = HP_SSM_STOPPED;
		} else if (r->used == HP_SSM_PLUGIN)
			end = plugin(a, c, reply, in, deadline, &r->output);
		else
			end = native(a, c, reply, deadline, &r->output);
		judge(c, end, r);
		if (end != HP_SSM_DONE)
			terminate(a, hp_json_str(reply, "SessionId"), r);
		cJSON_Delete(reply);
		if (end != HP_SSM_KMS || use != HP_SSM_AUTO || !c->plugin.present)
			break;
		lock(sh);
		sh->kms_seen = 1;
		unlock(sh);
		use = HP_SSM_PLUGIN;
		hp_ssm_output_release(&r->output);
		hp_ssm_output_init(&r->output);
		if (c->max_stdout)
			r->output.out.max = c->max_stdout;
	}
	if (end == HP_SSM_KMS && use == HP_SSM_AUTO && !c->plugin.present)
		set_reason(r, HP_SSM_SKIPPED,
			   "the session is KMS-encrypted and session-manager-plugin is not usable (%.200s)",
			   c->plugin.error);
	cJSON_Delete(in);
	r->duration_ms = r->started_ms ? sys->monotonic_ms(sys) - r->started_ms : 0;
}

struct sweep {
	const struct hp_ssm_config *c;
	struct hp_ssm_shared sh;
	const struct hp_ssm_target *targets;
	struct hp_ssm_result *results;
	struct hp_aws *workers;
	pthread_mutex_t progress_lock;
	struct hp_ssm_progress prog;
	void (*progress)(void *ud, const struct hp_ssm_progress *p);
	void *ud;
};

static void sweep_one(void *ud, size_t i, int w)
{
	struct sweep *s = ud;
	struct hp_ssm_result own, *r = s->results ? &s->results[i] : &own;
	struct hp_ssm_target t;

	if (s->targets) {
		t = s->targets[i];
	} else {
		memset(&t, 0, sizeof(t));
		s->c->target_of(s->c->hook_ud, i, &t);
	}
	t.place = i;
	hp_ssm_probe_node(&s->workers[w], s->c, &s->sh, &t, r);
	if (s->c->on_done)
		s->c->on_done(s->c->hook_ud, i, r);
	pthread_mutex_lock(&s->progress_lock);
	s->prog.done++;
	if (r->state == HP_SSM_UNREACHABLE)
		s->prog.unreachable++;
	else if (r->state == HP_SSM_SKIPPED)
		s->prog.skipped++;
	if (s->progress)
		s->progress(s->ud, &s->prog);
	pthread_mutex_unlock(&s->progress_lock);
	if (!s->results)
		hp_ssm_result_release(&own);
}

void hp_ssm_sweep(struct hp_aws *a, const struct hp_ssm_config *c,
		  const struct hp_ssm_target *targets, size_t n, struct hp_ssm_result *results,
		  void (*progress)(void *ud, const struct hp_ssm_progress *p), void *ud)
{
	struct hp_ssm_config cfg = *c;
	struct hp_ssm_bucket bucket;
	pthread_mutex_t shared_lock;
	struct sweep s;
	int workers = c->concurrency < 1 ? 1 : c->concurrency, k;

	if (!n || (!targets && !c->target_of) || (!results && !c->on_done))
		return;
	/*
	 * Set-up before any worker thread exists: the first random draw opens
	 * its source (libcurl's global state is set up by hp_sys_real()).
	 */
	(void)a->sys->random(a->sys);
	if (!cfg.client_id[0]) {
		uint8_t id[16];
		hp_ssm_uuid_new(a->sys, id);
		hp_ssm_uuid_format(id, cfg.client_id);
	}
	if ((size_t)workers > n)
		workers = (int)n;
	memset(&s, 0, sizeof(s));
	s.c = &cfg;
	s.targets = targets;
	s.results = results;
	s.progress = progress;
	s.ud = ud;
	s.prog.total = n;
	hp_ssm_bucket_init(&bucket, cfg.rate_per_s, 1, a->sys->monotonic_ms(a->sys));
	pthread_mutex_init(&shared_lock, NULL);
	pthread_mutex_init(&s.progress_lock, NULL);
	s.sh.bucket = &bucket;
	s.sh.lock = &shared_lock;
	s.sh.stop = cfg.stop;
	s.sh.waiting = xcalloc((size_t)workers, sizeof(*s.sh.waiting));
	/* Each worker has its own client: settings and counters are per call. */
	s.workers = xcalloc((size_t)workers, sizeof(*s.workers));
	for (k = 0; k < workers; k++) {
		s.workers[k] = *a;
		memset(&s.workers[k].stats, 0, sizeof(s.workers[k].stats));
	}
	/* 0 of n at once: the count is on the progress line before the first node ends. */
	if (progress)
		progress(ud, &s.prog);
	hp_ssm_pool_run(n, workers, sweep_one, &s);
	for (k = 0; k < workers; k++) {
		a->stats.calls += s.workers[k].stats.calls;
		a->stats.retries += s.workers[k].stats.retries;
		a->stats.bytes_in += s.workers[k].stats.bytes_in;
	}
	free(s.workers);
	free(s.sh.waiting);
	pthread_mutex_destroy(&shared_lock);
	pthread_mutex_destroy(&s.progress_lock);
}
