/*
 * model_pool: one helper thread, for jobs in two parts (model_impl.h).
 *
 * A batch posts a job, runs part 0 itself and then part 1 too if the
 * helper has not picked it up yet, so a sleeping or descheduled helper
 * costs a step no more than doing the work alone. Both sides spin a little
 * before sleeping on a condition variable: steps come one after another,
 * and a wake-up from sleep costs more than a job of a small model. The
 * state is one atomic; the job's fields are written before it is posted
 * and read after it is taken, so they need no lock of their own.
 */
#include "model_impl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define SPIN_NS 200000 /* 0.2 ms */

enum { JOB_IDLE, JOB_POSTED, JOB_RUNNING, JOB_DONE, JOB_QUIT };

struct model_pool {
	pthread_mutex_t use; /* held by the batch using the helper */
	bool started;        /* under use */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	atomic_int state;
	atomic_bool asleep, waiting; /* the helper, the batch sleep on a cond */
	void (*fn)(void *arg, int part);
	void *arg;
};

static void cpu_relax(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_ia32_pause();
#endif
}

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Spin until P's state is WANT (or QUIT, when OR_QUIT): false when it took
 * too long. */
static bool spin_until(struct model_pool *p, int want, bool or_quit)
{
	const long long start = now_ns();
	for (long i = 0;; i++) {
		const int st = atomic_load(&p->state);
		if (st == want || (or_quit && st == JOB_QUIT))
			return true;
		cpu_relax();
		if (i % 256 == 255 && now_ns() - start > SPIN_NS)
			return false;
	}
}

static void sleep_until(struct model_pool *p, pthread_cond_t *cond, atomic_bool *flag, int want,
                        bool or_quit)
{
	pthread_mutex_lock(&p->lock);
	atomic_store(flag, true);
	for (;;) {
		const int st = atomic_load(&p->state);
		if (st == want || (or_quit && st == JOB_QUIT))
			break;
		pthread_cond_wait(cond, &p->lock);
	}
	atomic_store(flag, false);
	pthread_mutex_unlock(&p->lock);
}

static void wake_if(struct model_pool *p, pthread_cond_t *cond, atomic_bool *flag)
{
	if (!atomic_load(flag))
		return;
	pthread_mutex_lock(&p->lock);
	pthread_cond_signal(cond);
	pthread_mutex_unlock(&p->lock);
}

static void *helper_main(void *arg)
{
	struct model_pool *p = arg;
	for (;;) {
		if (!spin_until(p, JOB_POSTED, true))
			sleep_until(p, &p->wake, &p->asleep, JOB_POSTED, true);
		int st = JOB_POSTED;
		if (!atomic_compare_exchange_strong(&p->state, &st, JOB_RUNNING)) {
			if (st == JOB_QUIT)
				return NULL;
			continue; /* the batch took it back */
		}
		p->fn(p->arg, 1);
		atomic_store(&p->state, JOB_DONE);
		wake_if(p, &p->done, &p->waiting);
	}
}

struct model_pool *model_pool_new(void)
{
	struct model_pool *p = calloc(1, sizeof *p);
	if (p == NULL)
		return NULL;
	if (pthread_mutex_init(&p->use, NULL) != 0)
		goto fail_use;
	if (pthread_mutex_init(&p->lock, NULL) != 0)
		goto fail_lock;
	if (pthread_cond_init(&p->wake, NULL) != 0)
		goto fail_wake;
	if (pthread_cond_init(&p->done, NULL) != 0)
		goto fail_done;
	atomic_init(&p->state, JOB_IDLE);
	atomic_init(&p->asleep, false);
	atomic_init(&p->waiting, false);
	return p;
fail_done:
	pthread_cond_destroy(&p->wake);
fail_wake:
	pthread_mutex_destroy(&p->lock);
fail_lock:
	pthread_mutex_destroy(&p->use);
fail_use:
	free(p);
	return NULL;
}

void model_pool_free(struct model_pool *p)
{
	if (p == NULL)
		return;
	if (p->started) {
		atomic_store(&p->state, JOB_QUIT);
		wake_if(p, &p->wake, &p->asleep);
		pthread_join(p->thread, NULL);
	}
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->use);
	free(p);
}

int model_pool_acquire(struct model_pool *p)
{
	if (p == NULL || pthread_mutex_trylock(&p->use) != 0)
		return 0;
	if (!p->started) {
		atomic_store(&p->state, JOB_IDLE);
		p->started = pthread_create(&p->thread, NULL, helper_main, p) == 0;
	}
	if (!p->started) {
		pthread_mutex_unlock(&p->use);
		return 0;
	}
	return 1;
}

void model_pool_release(struct model_pool *p)
{
	pthread_mutex_unlock(&p->use);
}

void model_pool_run(struct model_pool *p, void (*fn)(void *arg, int part), void *arg)
{
	p->fn = fn;
	p->arg = arg;
	atomic_store(&p->state, JOB_POSTED);
	wake_if(p, &p->wake, &p->asleep);
	fn(arg, 0);
	int st = JOB_POSTED;
	if (atomic_compare_exchange_strong(&p->state, &st, JOB_IDLE)) {
		fn(arg, 1); /* the helper had not taken it: do it here */
		return;
	}
	if (!spin_until(p, JOB_DONE, false))
		sleep_until(p, &p->done, &p->waiting, JOB_DONE, false);
	atomic_store(&p->state, JOB_IDLE);
}
