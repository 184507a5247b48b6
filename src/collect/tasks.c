/*
 * The task runner of tasks.h: a fixed set of worker threads (this one
 * included) that take, under one lock, the first task in order whose
 * predecessors have ended and whose service has a free slot, run it without
 * the lock, and mark it done. Results stay in each task's scratch snapshot
 * until hp_task_merge() moves them, so completion order never shows.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hp/tasks.h"

/*
 * Requests in flight per service. SageMaker: the node pager, DescribeClusterNode
 * and the event reads. EC2 answers Describe* from a generous token bucket;
 * CloudWatch Logs and Service Quotas have low per-account rates, so one at
 * a time, as one EKS cluster and one caller identity need no more.
 */
static const int limits[HP_SVC__COUNT] = {
	[HP_SVC_SAGEMAKER] = 3,
	[HP_SVC_EC2] = 4,
	[HP_SVC_EKS] = 1,
	[HP_SVC_LOGS] = 1,
	[HP_SVC_SSM] = 2,
	[HP_SVC_QUOTAS] = 1,
	[HP_SVC_STS] = 1,
};

int hp_task_limit(enum hp_svc svc)
{
	return (unsigned)svc < HP_SVC__COUNT && limits[svc] > 0 ? limits[svc] : 1;
}

void hp_tasks_init(struct hp_tasks *ts)
{
	memset(ts, 0, sizeof(*ts));
}

void hp_tasks_release(struct hp_tasks *ts)
{
	size_t i;

	for (i = 0; i < ts->n; i++)
		hp_snapshot_release(&ts->t[i].out);
	ts->n = 0;
}

int hp_tasks_add(struct hp_tasks *ts, const char *name, enum hp_svc svc, hp_task_fn fn, void *ctx,
		 uint32_t after)
{
	struct hp_task *t;

	if (ts->n >= HP_TASKS_MAX)
		hp_die("too many collector tasks (%d)", HP_TASKS_MAX);
	/* Only earlier tasks can come first: the order stays a valid sequential one. */
	if (after >> ts->n)
		hp_die("task %s waits for a task added after it", name);
	t = &ts->t[ts->n];
	memset(t, 0, sizeof(*t));
	t->name = name;
	t->svc = svc;
	t->fn = fn;
	t->ctx = ctx;
	t->after = after;
	/* An empty scratch document (no "version": it is not a snapshot of its own). */
	t->out.root = cJSON_CreateObject();
	return (int)ts->n++;
}

struct runner {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct hp_tasks *ts;
	struct hp_aws *a;
	uint32_t done;             /* bit per task that has ended */
	size_t waiting;            /* tasks not started */
	size_t running;
	int busy[HP_SVC__COUNT];
};

/* The first task in order that may start now, or NULL (lock held). */
static struct hp_task *next_ready(struct runner *r)
{
	size_t i;

	for (i = 0; i < r->ts->n; i++) {
		struct hp_task *t = &r->ts->t[i];

		if (!t->started && !(t->after & ~r->done) && r->busy[t->svc] < hp_task_limit(t->svc))
			return t;
	}
	return NULL;
}

/* Marks t started (lock held). */
static void take(struct runner *r, struct hp_task *t)
{
	t->started = 1;
	r->waiting--;
	r->busy[t->svc]++;
	if (++r->running > r->ts->peak)
		r->ts->peak = r->running;
}

/* Runs t without the lock, then marks it done (lock held on entry and return). */
static void run_one(struct runner *r, struct hp_task *t)
{
	pthread_mutex_unlock(&r->lock);
	if (r->a->debug)
		hp_debug("task %s started", t->name);
	t->fn(t);
	pthread_mutex_lock(&r->lock);
	t->done = 1;
	r->done |= HP_TASK_BIT(t - r->ts->t);
	r->busy[t->svc]--;
	r->running--;
	pthread_cond_broadcast(&r->changed);
}

static void *work(void *arg)
{
	struct runner *r = arg;

	pthread_mutex_lock(&r->lock);
	while (r->waiting) {
		struct hp_task *t = next_ready(r);

		if (!t) {
			/* Whatever blocks it is running; its end wakes us. */
			pthread_cond_wait(&r->changed, &r->lock);
			continue;
		}
		take(r, t);
		run_one(r, t);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

void hp_tasks_run(struct hp_tasks *ts, struct hp_aws *a)
{
	pthread_t tid[HP_AWS_CONCURRENCY_MAX];
	int workers = a->concurrency > 0 ? a->concurrency : HP_AWS_CONCURRENCY, started = 0, k;
	struct hp_task *first;
	struct runner r;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.ts = ts;
	r.a = a;
	for (i = 0; i < ts->n; i++) {
		ts->t[i].a = a;
		if (ts->t[i].done)
			r.done |= HP_TASK_BIT(i);
		else if (!ts->t[i].started)
			r.waiting++;
	}
	ts->peak = 0;
	if (!r.waiting)
		return;
	if (workers > HP_AWS_CONCURRENCY_MAX)
		workers = HP_AWS_CONCURRENCY_MAX;
	if ((size_t)workers > r.waiting)
		workers = (int)r.waiting;
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.changed, NULL);
	/* Set up on this thread what is lazily initialised on first use (the random source). */
	(void)a->sys->random(a->sys);
	/*
	 * This thread is worker 0, and takes the first ready task before any
	 * other thread exists: the first task (the node list) allocates the
	 * most, and this thread's malloc arena grows in large steps where a new
	 * thread's grows a page (one mprotect) at a time. A thread that cannot
	 * start leaves its share to the others.
	 */
	pthread_mutex_lock(&r.lock);
	first = next_ready(&r);
	if (first)
		take(&r, first);
	pthread_mutex_unlock(&r.lock);
	for (k = 1; k < workers; k++) {
		if (pthread_create(&tid[k], NULL, work, &r))
			break;
		started = k;
	}
	pthread_mutex_lock(&r.lock);
	if (first)
		run_one(&r, first);
	pthread_mutex_unlock(&r.lock);
	work(&r);
	for (k = 1; k <= started; k++)
		pthread_join(tid[k], NULL);
	pthread_cond_destroy(&r.changed);
	pthread_mutex_destroy(&r.lock);
}

static void set_key(cJSON *obj, const char *key, cJSON *item)
{
	if (cJSON_HasObjectItem(obj, key))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
	else
		cJSON_AddItemToObject(obj, key, item);
}

void hp_task_merge(struct hp_task *t, cJSON *obj, struct hp_snapshot *s)
{
	cJSON *it;

	if (!t->out.root)
		return;
	while ((it = t->out.root->child) != NULL) {
		char *key = xstrdup(it->string ? it->string : "");

		cJSON_DetachItemViaPointer(t->out.root, it);
		if (!strcmp(key, "calls") && cJSON_IsArray(it)) {
			cJSON *calls = cJSON_GetObjectItemCaseSensitive(s->root, "calls"), *c;

			if (!cJSON_IsArray(calls)) {
				calls = cJSON_CreateArray();
				hp_snapshot_set(s, "calls", calls);
			}
			while ((c = cJSON_DetachItemFromArray(it, 0)) != NULL)
				cJSON_AddItemToArray(calls, c);
			cJSON_Delete(it);
		} else {
			set_key(obj, key, it);
		}
		free(key);
	}
}
