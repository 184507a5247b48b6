/*
 * Collector steps run at once. A task is one function that sends its
 * requests to one AWS service, one after another, and writes what it
 * learned into its own scratch snapshot: keys, and failed calls under
 * "calls", exactly as it would write into the real one. hp_tasks_run() runs
 * the tasks on up to a->concurrency threads (HP_AWS_CONCURRENCY when 0),
 * never more than hp_task_limit(svc) of one service at once, each only after
 * the tasks it names in `after` have ended; then hp_task_merge() moves each
 * task's results into the real snapshot, task by task in the order they
 * were added. The snapshot is therefore the one a sequential run of the
 * tasks in that order writes, whatever order their calls complete in; with
 * a->concurrency 1 they are that sequential run, on the calling thread.
 *
 * A task may read the real snapshot (nothing writes it while tasks run)
 * and, from its fn, the scratch snapshots and context of the tasks it runs
 * after. Retries, the run budget and the circuit breaker are the client's
 * (struct hp_aws is shared by every thread; see aws.h).
 */
#ifndef HP_TASKS_H
#define HP_TASKS_H

#include <stdint.h>

#include "hp/aws.h"
#include "hp/snapshot.h"

#define HP_TASKS_MAX 32

struct hp_task;
typedef void (*hp_task_fn)(struct hp_task *t);

struct hp_task {
	const char *name;        /* for --debug */
	enum hp_svc svc;         /* the service it calls */
	hp_task_fn fn;
	void *ctx;               /* the caller's, for fn */
	uint32_t after;          /* bit i: task i ends before this one starts (i < this index) */
	struct hp_aws *a;        /* set by hp_tasks_run */
	struct hp_snapshot out;  /* what it collected: keys and "calls" */
	int started, done;       /* the runner's, under its lock */
};

struct hp_tasks {
	struct hp_task t[HP_TASKS_MAX];
	size_t n;
	size_t peak;             /* most tasks running at once in the last run */
};

void hp_tasks_init(struct hp_tasks *ts);
/* Frees every task's scratch snapshot. */
void hp_tasks_release(struct hp_tasks *ts);
/* Adds a task; returns its index (for `after` bits of later tasks). Dies past HP_TASKS_MAX. */
int hp_tasks_add(struct hp_tasks *ts, const char *name, enum hp_svc svc, hp_task_fn fn, void *ctx,
		 uint32_t after);
#define HP_TASK_BIT(i) ((uint32_t)1 << (i))
/* Runs every task added and not yet run; returns when all have ended. */
void hp_tasks_run(struct hp_tasks *ts, struct hp_aws *a);
/* At most this many tasks of svc run at once. */
int hp_task_limit(enum hp_svc svc);

/*
 * Moves t's results, in the order t wrote them: each key into obj
 * (replacing one of the same name, as hp_snapshot_set does), each failed
 * call to the end of s's "calls" (which is created where t created its own).
 */
void hp_task_merge(struct hp_task *t, cJSON *obj, struct hp_snapshot *s);

#endif
