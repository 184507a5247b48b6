/*
 * The task runner (hp/tasks.h): the merged result is the sequential one
 * whatever order tasks end in, a task starts only after the ones it names,
 * per-service limits hold, and tasks really run at once. Worker threads
 * never assert (an assertion longjmps): they note what they saw, and the
 * test checks it afterwards.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-sys.h"
#include "hp/aws.h"
#include "hp/json.h"
#include "hp/tasks.h"
#include "t.h"

#define WAIT_MS 5000   /* a wait this long means the tasks did not run at once */

struct board {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int turn;              /* how many tasks have ended, in the forced order */
	const int *rank;       /* task i ends when turn == rank[i]; NULL: no forcing */
	int timeouts;          /* waits that gave up */
	int seq;               /* event counter */
	int start[HP_TASKS_MAX], end[HP_TASKS_MAX];
	int inflight[HP_SVC__COUNT], max_inflight[HP_SVC__COUNT];
	int want_together;     /* limit test: tasks of EC2 wait until this many run at once */
	int started_ec2, total_ec2;
};

struct job {
	struct board *b;
	int index;
};

static void board_init(struct board *b)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cv, NULL);
}

static void board_release(struct board *b)
{
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->lock);
}

/* Waits on b->cv until pred(b, arg) holds or WAIT_MS pass (a timeout is counted); lock held. */
static void wait_for(struct board *b, int (*pred)(struct board *, int), int arg)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MS / 1000;
	while (!pred(b, arg))
		if (pthread_cond_timedwait(&b->cv, &b->lock, &until) == ETIMEDOUT) {
			b->timeouts++;
			return;
		}
}

static int my_turn(struct board *b, int rank)
{
	return b->turn == rank;
}

/* Writes a key, a failed call, and (odd tasks) another key, as a collector would. */
static void write_results(struct hp_task *t, int i)
{
	char key[16], action[16];

	snprintf(key, sizeof(key), "k%d", i);
	hp_snapshot_set(&t->out, key, cJSON_CreateNumber(i));
	snprintf(action, sizeof(action), "Op%d", i);
	hp_snapshot_add_call(&t->out, "ec2", action, "denied", "AccessDenied", "no", 403);
	if (i % 2) {
		snprintf(key, sizeof(key), "after%d", i);
		hp_snapshot_set(&t->out, key, cJSON_CreateTrue());
	}
}

static void ordered_task(struct hp_task *t)
{
	struct job *j = t->ctx;
	struct board *b = j->b;

	pthread_mutex_lock(&b->lock);
	if (b->rank)
		wait_for(b, my_turn, b->rank[j->index]);
	if (b->timeouts)
		b->rank = NULL;   /* one wait that gave up is enough to fail: no more waits */
	pthread_mutex_unlock(&b->lock);
	write_results(t, j->index);
	pthread_mutex_lock(&b->lock);
	b->turn++;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->lock);
}

/* Six tasks of two services (within their limits), merged after a run at the given concurrency. */
static char *run_ordered(int concurrency, const int *rank, int *timeouts)
{
	static const enum hp_svc svcs[6] = { HP_SVC_SAGEMAKER, HP_SVC_EC2, HP_SVC_SAGEMAKER,
					     HP_SVC_EC2, HP_SVC_SAGEMAKER, HP_SVC_EC2 };
	struct fake_sys fs;
	struct hp_aws a;
	struct hp_tasks ts;
	struct hp_snapshot s;
	struct board b;
	struct job jobs[6];
	char *out;
	int i;

	memset(&fs, 0, sizeof(fs));
	fake_aws(&fs, &a, 1);
	a.concurrency = concurrency;
	board_init(&b);
	b.rank = rank;
	hp_tasks_init(&ts);
	for (i = 0; i < 6; i++) {
		jobs[i].b = &b;
		jobs[i].index = i;
		hp_tasks_add(&ts, "ordered", svcs[i], ordered_task, &jobs[i], 0);
	}
	hp_snapshot_init(&s);
	hp_snapshot_set(&s, "meta", cJSON_CreateObject());
	hp_tasks_run(&ts, &a);
	for (i = 0; i < 6; i++)
		hp_task_merge(&ts.t[i], s.root, &s);
	out = cJSON_PrintUnformatted(s.root);
	*timeouts = b.timeouts;
	hp_snapshot_release(&s);
	hp_tasks_release(&ts);
	board_release(&b);
	fake_sys_release(&fs);
	return out;
}

static void t_merge_is_sequential_whatever_the_end_order(void)
{
	static const int orders[][6] = {
		{ 0, 1, 2, 3, 4, 5 }, { 5, 4, 3, 2, 1, 0 }, { 2, 0, 5, 1, 3, 4 },
		{ 1, 3, 5, 0, 2, 4 }, { 4, 5, 0, 3, 1, 2 }, { 3, 2, 4, 5, 0, 1 },
	};
	int timeouts = 0, k;
	char *want = run_ordered(1, NULL, &timeouts);

	/* Keys in task order; "calls" where the first task created it, calls in task order. */
	T_CONTAINS(want, "{\"version\":1,\"meta\":{},\"k0\":0,\"calls\":[{\"service\":\"ec2\",\"action\":\"Op0\"");
	T_CONTAINS(want, "\"k1\":1,\"after1\":true,\"k2\":2");
	T_ASSERT(strstr(want, "\"Op4\"") < strstr(want, "\"Op5\""));
	for (k = 0; k < (int)(sizeof(orders) / sizeof(orders[0])); k++) {
		char *got = run_ordered(8, orders[k], &timeouts);
		int same = !strcmp(got, want);

		free(got);
		if (timeouts)
			T_FAILF("order %d: tasks did not all run at once (%d waits gave up)", k, timeouts);
		if (!same)
			T_FAILF("order %d: merged snapshot differs from the sequential one", k);
	}
	free(want);
}

static void logged_task(struct hp_task *t)
{
	struct job *j = t->ctx;
	struct board *b = j->b;

	pthread_mutex_lock(&b->lock);
	b->start[j->index] = ++b->seq;
	pthread_mutex_unlock(&b->lock);
	/* Long enough for a wrongly started successor to show. */
	nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	pthread_mutex_lock(&b->lock);
	b->end[j->index] = ++b->seq;
	pthread_mutex_unlock(&b->lock);
}

static void t_after_is_respected(void)
{
	struct fake_sys fs;
	struct hp_aws a;
	struct hp_tasks ts;
	struct board b;
	struct job jobs[5];
	int i, t0, t1, t2, t3, t4;

	memset(&fs, 0, sizeof(fs));
	fake_aws(&fs, &a, 1);
	a.concurrency = 8;
	board_init(&b);
	hp_tasks_init(&ts);
	for (i = 0; i < 5; i++) {
		jobs[i].b = &b;
		jobs[i].index = i;
	}
	t0 = hp_tasks_add(&ts, "a", HP_SVC_SAGEMAKER, logged_task, &jobs[0], 0);
	t1 = hp_tasks_add(&ts, "b", HP_SVC_EC2, logged_task, &jobs[1], 0);
	t2 = hp_tasks_add(&ts, "c", HP_SVC_EC2, logged_task, &jobs[2], HP_TASK_BIT(t1));
	t3 = hp_tasks_add(&ts, "d", HP_SVC_EKS, logged_task, &jobs[3], HP_TASK_BIT(t1) | HP_TASK_BIT(t2));
	t4 = hp_tasks_add(&ts, "e", HP_SVC_LOGS, logged_task, &jobs[4], HP_TASK_BIT(t0));
	hp_tasks_run(&ts, &a);
	for (i = 0; i < 5; i++)
		T_ASSERT(ts.t[i].done && b.start[i] && b.end[i] > b.start[i]);
	T_ASSERT(b.start[t2] > b.end[t1]);
	T_ASSERT(b.start[t3] > b.end[t2] && b.start[t3] > b.end[t1]);
	T_ASSERT(b.start[t4] > b.end[t0]);
	hp_tasks_release(&ts);
	board_release(&b);
	fake_sys_release(&fs);
}

static int ec2_together(struct board *b, int want)
{
	return b->inflight[HP_SVC_EC2] >= want || b->started_ec2 >= b->total_ec2;
}

static void limited_task(struct hp_task *t)
{
	struct job *j = t->ctx;
	struct board *b = j->b;

	pthread_mutex_lock(&b->lock);
	if (++b->inflight[t->svc] > b->max_inflight[t->svc])
		b->max_inflight[t->svc] = b->inflight[t->svc];
	if (t->svc == HP_SVC_EC2) {
		b->started_ec2++;
		pthread_cond_broadcast(&b->cv);
		/* Each wave of EC2 tasks waits until a full wave runs: proof they run at once. */
		wait_for(b, ec2_together, b->want_together);
		if (b->timeouts)
			b->want_together = 0;   /* failed already: the rest need not wait */
	}
	pthread_mutex_unlock(&b->lock);
	if (t->svc != HP_SVC_EC2)
		nanosleep(&(struct timespec){ 0, 3000000 }, NULL);
	pthread_mutex_lock(&b->lock);
	b->inflight[t->svc]--;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->lock);
}

static void t_service_limits_hold_and_tasks_overlap(void)
{
	struct fake_sys fs;
	struct hp_aws a;
	struct hp_tasks ts;
	struct board b;
	struct job jobs[12];
	int i;

	memset(&fs, 0, sizeof(fs));
	fake_aws(&fs, &a, 1);
	a.concurrency = 12;
	board_init(&b);
	b.want_together = hp_task_limit(HP_SVC_EC2);
	b.total_ec2 = 8;
	hp_tasks_init(&ts);
	for (i = 0; i < 12; i++) {
		jobs[i].b = &b;
		jobs[i].index = i;
		hp_tasks_add(&ts, "limited", i < 8 ? HP_SVC_EC2 : HP_SVC_LOGS, limited_task, &jobs[i], 0);
	}
	hp_tasks_run(&ts, &a);
	T_EQ(b.timeouts, 0);
	T_EQ(b.max_inflight[HP_SVC_EC2], hp_task_limit(HP_SVC_EC2));
	T_EQ(b.max_inflight[HP_SVC_LOGS], 1);
	T_ASSERT(ts.peak >= (size_t)hp_task_limit(HP_SVC_EC2));
	for (i = 0; i < 12; i++)
		T_ASSERT(ts.t[i].done);
	hp_tasks_release(&ts);
	board_release(&b);
	fake_sys_release(&fs);
}

static void t_one_at_a_time_runs_in_order_on_this_thread(void)
{
	struct fake_sys fs;
	struct hp_aws a;
	struct hp_tasks ts;
	struct board b;
	struct job jobs[4];
	int i;

	memset(&fs, 0, sizeof(fs));
	fake_aws(&fs, &a, 1);
	a.concurrency = 1;
	board_init(&b);
	hp_tasks_init(&ts);
	for (i = 0; i < 4; i++) {
		jobs[i].b = &b;
		jobs[i].index = i;
		hp_tasks_add(&ts, "seq", (enum hp_svc)(i % 2), logged_task, &jobs[i], 0);
	}
	hp_tasks_run(&ts, &a);
	for (i = 0; i < 4; i++)
		T_EQ(b.start[i], 2 * i + 1);
	T_EQ(ts.peak, 1);
	hp_tasks_release(&ts);
	board_release(&b);
	fake_sys_release(&fs);
}

static void t_merge_replaces_and_places_calls(void)
{
	struct hp_tasks ts;
	struct hp_snapshot s;
	char *out;
	int i;

	hp_tasks_init(&ts);
	i = hp_tasks_add(&ts, "m", HP_SVC_EC2, NULL, NULL, 0);
	hp_snapshot_set(&ts.t[i].out, "a", cJSON_CreateString("new"));
	hp_snapshot_add_call(&ts.t[i].out, "ec2", "X", "client", "Bad", "m", 400);
	hp_snapshot_set(&ts.t[i].out, "b", cJSON_CreateNumber(2));
	hp_snapshot_init(&s);
	hp_snapshot_set(&s, "a", cJSON_CreateString("old"));
	hp_snapshot_add_call(&s, "sts", "Y", "client", "Bad", "m", 400);
	hp_task_merge(&ts.t[i], s.root, &s);
	out = cJSON_PrintUnformatted(s.root);
	/* "a" replaced in place, the call appended to the existing list, "b" added. */
	T_CONTAINS(out, "{\"version\":1,\"a\":\"new\",\"calls\":[{\"service\":\"sts\",\"action\":\"Y\"");
	T_CONTAINS(out, "},{\"service\":\"ec2\",\"action\":\"X\"");
	T_CONTAINS(out, "],\"b\":2}");
	T_ASSERT(ts.t[i].out.root->child == NULL);
	free(out);
	hp_snapshot_release(&s);
	hp_tasks_release(&ts);
}

T_MAIN(T(t_merge_is_sequential_whatever_the_end_order), T(t_after_is_respected),
       T(t_service_limits_hold_and_tasks_overlap), T(t_one_at_a_time_runs_in_order_on_this_thread),
       T(t_merge_replaces_and_places_calls))
