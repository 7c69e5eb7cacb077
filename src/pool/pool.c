/*
 * pool: one helper thread for jobs in two parts (include/pool/h2o/pool.h).
 */
#include "h2o/pool.h"

#include <time.h>

enum job_state { JOB_NONE, JOB_POSTED, JOB_RUNNING, JOB_DONE, JOB_QUIT };

static long elapsed_ns(const struct timespec *since)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec);
}

static void cpu_relax(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_ia32_pause();
#endif
}

/* Watch P's state for up to its spin time until it is WANT or, when
 * OR_QUIT, JOB_QUIT. False if it is not. */
static bool spin_until(struct h2o_pool *p, enum job_state want, bool or_quit)
{
	const long spin = p->spin_ns > 0 ? p->spin_ns : POOL_SPIN_NS;
	struct timespec since;
	clock_gettime(CLOCK_MONOTONIC, &since);
	for (int i = 1;; i++) {
		const int st = atomic_load(&p->state);
		if (st == (int)want || (or_quit && st == JOB_QUIT))
			return true;
		cpu_relax();
		if (i % 256 == 0 && elapsed_ns(&since) > spin)
			return false;
	}
}

/* Sleep on COND until P's state is WANT (or JOB_QUIT, when OR_QUIT),
 * having said so in FLAG. */
static void sleep_until(struct h2o_pool *p, pthread_cond_t *cond, atomic_bool *flag,
                        enum job_state want, bool or_quit)
{
	pthread_mutex_lock(&p->lock);
	atomic_store(flag, true);
	for (;;) {
		const int st = atomic_load(&p->state);
		if (st == (int)want || (or_quit && st == JOB_QUIT))
			break;
		pthread_cond_wait(cond, &p->lock);
	}
	atomic_store(flag, false);
	pthread_mutex_unlock(&p->lock);
}

/* Wake the thread that sleeps on COND, if FLAG says it does. */
static void wake_if(struct h2o_pool *p, pthread_cond_t *cond, atomic_bool *flag)
{
	if (!atomic_load(flag))
		return;
	pthread_mutex_lock(&p->lock);
	pthread_cond_signal(cond);
	pthread_mutex_unlock(&p->lock);
}

static void *helper_main(void *arg)
{
	struct h2o_pool *p = arg;
	for (;;) {
		if (!spin_until(p, JOB_POSTED, true))
			sleep_until(p, &p->wake, &p->asleep, JOB_POSTED, true);
		int st = JOB_POSTED;
		if (!atomic_compare_exchange_strong(&p->state, &st, JOB_RUNNING)) {
			if (st == JOB_QUIT)
				break;
			continue; /* the caller took it back */
		}
		p->part(p->arg, 1);
		atomic_store(&p->state, JOB_DONE);
		wake_if(p, &p->done, &p->waiting);
	}
	return NULL;
}

bool pool_start(struct h2o_pool *p)
{
	if (p->started)
		return true;
	if (p->off)
		return false;
	if (pthread_mutex_init(&p->lock, NULL) != 0)
		return false;
	if (pthread_cond_init(&p->wake, NULL) != 0) {
		pthread_mutex_destroy(&p->lock);
		return false;
	}
	if (pthread_cond_init(&p->done, NULL) != 0) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		return false;
	}
	atomic_init(&p->state, JOB_NONE);
	atomic_init(&p->asleep, false);
	atomic_init(&p->waiting, false);
	if (pthread_create(&p->thread, NULL, helper_main, p) != 0) {
		pthread_cond_destroy(&p->done);
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		return false;
	}
	p->started = true;
	return true;
}

void pool_stop(struct h2o_pool *p)
{
	if (!p->started)
		return;
	atomic_store(&p->state, JOB_QUIT);
	wake_if(p, &p->wake, &p->asleep);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->done);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	p->started = false;
}

void pool_run_two(struct h2o_pool *p, void (*part)(void *arg, int part), void *arg)
{
	if (!pool_start(p)) {
		part(arg, 0);
		part(arg, 1);
		return;
	}
	p->part = part;
	p->arg = arg;
	atomic_store(&p->state, JOB_POSTED);
	wake_if(p, &p->wake, &p->asleep);
	part(arg, 0);
	int st = JOB_POSTED;
	if (atomic_compare_exchange_strong(&p->state, &st, JOB_NONE)) {
		/* Not taken: ours. */
		part(arg, 1);
		return;
	}
	/* Taken: it ends about when ours did. */
	if (!spin_until(p, JOB_DONE, false))
		sleep_until(p, &p->done, &p->waiting, JOB_DONE, false);
	atomic_store(&p->state, JOB_NONE);
}
