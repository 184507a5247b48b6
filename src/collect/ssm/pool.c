/*
 * Concurrency for the SSM sweep: a token bucket that paces StartSession,
 * full-jitter backoff, and a fixed pool of worker threads that take items
 * in order. The bucket and backoff are pure (time comes in), so they are
 * tested with a fake clock; the pool knows nothing about SSM.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ssm-int.h"

#define MIN_RATE_PER_MS (0.1 / 1000.0)

void hp_ssm_bucket_init(struct hp_ssm_bucket *b, double rate_per_s, double burst, int64_t now)
{
	b->rate_per_ms = rate_per_s / 1000.0;
	b->max_rate_per_ms = b->rate_per_ms;
	b->burst = burst < 1 ? 1 : burst;
	/* Start with one token: the first call goes at once, the rest are paced. */
	b->tokens = 1;
	b->last_ms = now;
}

/* Bring the saved tokens up to now at the current rate. */
static void refill(struct hp_ssm_bucket *b, int64_t now)
{
	if (now > b->last_ms) {
		b->tokens += (double)(now - b->last_ms) * b->rate_per_ms;
		if (b->tokens > b->burst)
			b->tokens = b->burst;
		b->last_ms = now;
	}
}

long hp_ssm_bucket_due(struct hp_ssm_bucket *b, int64_t now)
{
	refill(b, now);
	if (b->tokens >= 1.0)
		return 0;
	return (long)((1.0 - b->tokens) / b->rate_per_ms) + 1;
}

long hp_ssm_bucket_take(struct hp_ssm_bucket *b, int64_t now)
{
	double need;

	refill(b, now);
	if (b->tokens >= 1.0) {
		b->tokens -= 1.0;
		return 0;
	}
	need = (1.0 - b->tokens) / b->rate_per_ms;
	/* Round up, so a caller that sleeps this long finds a whole token. */
	return (long)need + 1;
}

void hp_ssm_bucket_throttled(struct hp_ssm_bucket *b, int64_t now)
{
	refill(b, now);
	b->rate_per_ms /= 2;
	if (b->rate_per_ms < MIN_RATE_PER_MS)
		b->rate_per_ms = MIN_RATE_PER_MS;
	if (b->rate_per_ms > b->max_rate_per_ms)
		b->rate_per_ms = b->max_rate_per_ms;
}

void hp_ssm_bucket_ok(struct hp_ssm_bucket *b)
{
	b->rate_per_ms += b->max_rate_per_ms / 20;
	if (b->rate_per_ms > b->max_rate_per_ms)
		b->rate_per_ms = b->max_rate_per_ms;
}

long hp_ssm_backoff_ms(struct hp_sys *sys, int attempt, long base_ms, long cap_ms)
{
	long cap = base_ms;
	double r;
	int i;

	for (i = 1; i < attempt && cap < cap_ms; i++)
		cap *= 2;
	if (cap > cap_ms)
		cap = cap_ms;
	r = (double)sys->random(sys) / 4294967296.0;
	return (long)(r * (double)cap);
}

struct pool {
	pthread_mutex_t lock;
	size_t next, n;
	void (*fn)(void *ud, size_t i, int worker);
	void *ud;
};

struct worker {
	struct pool *p;
	int index;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&p->lock);
		i = p->next < p->n ? p->next++ : p->n;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n)
			break;
		p->fn(p->ud, i, w->index);
	}
	return NULL;
}

void hp_ssm_pool_run(size_t n, int workers, void (*fn)(void *ud, size_t i, int worker), void *ud)
{
	struct pool p;
	struct worker *w;
	pthread_t *tid;
	int k, started = 0;

	if (!n)
		return;
	if (workers < 1)
		workers = 1;
	if ((size_t)workers > n)
		workers = (int)n;
	memset(&p, 0, sizeof(p));
	p.n = n;
	p.fn = fn;
	p.ud = ud;
	pthread_mutex_init(&p.lock, NULL);
	w = xcalloc((size_t)workers, sizeof(*w));
	tid = xcalloc((size_t)workers, sizeof(*tid));
	for (k = 0; k < workers; k++) {
		w[k].p = &p;
		w[k].index = k;
	}
	/* Worker 0 is this thread; a thread that cannot start leaves its share to the others. */
	for (k = 1; k < workers; k++) {
		if (pthread_create(&tid[k], NULL, work, &w[k]))
			break;
		started = k;
	}
	work(&w[0]);
	for (k = 1; k <= started; k++)
		pthread_join(tid[k], NULL);
	pthread_mutex_destroy(&p.lock);
	free(w);
	free(tid);
}
