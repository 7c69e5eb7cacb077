/*
 * engine_helper: the engine's second thread (see engine_helper.h).
 */
#include "engine_helper.h"

#include <time.h>

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

/* Watch H's state for up to HELPER_SPIN_NS until it is WANT or, when
 * OR_QUIT, JOB_QUIT. False if it is not. */
static bool spin_until(struct helper *h, enum job_state want, bool or_quit)
{
	struct timespec since;
	clock_gettime(CLOCK_MONOTONIC, &since);
	for (int i = 1;; i++) {
		const int st = atomic_load(&h->state);
		if (st == (int)want || (or_quit && st == JOB_QUIT))
			return true;
		cpu_relax();
		if (i % 256 == 0 && elapsed_ns(&since) > HELPER_SPIN_NS)
			return false;
	}
}

/* Sleep on COND until H's state is WANT (or JOB_QUIT, when OR_QUIT),
 * having said so in FLAG. */
static void sleep_until(struct helper *h, pthread_cond_t *cond, atomic_bool *flag,
                        enum job_state want, bool or_quit)
{
	pthread_mutex_lock(&h->lock);
	atomic_store(flag, true);
	for (;;) {
		const int st = atomic_load(&h->state);
		if (st == (int)want || (or_quit && st == JOB_QUIT))
			break;
		pthread_cond_wait(cond, &h->lock);
	}
	atomic_store(flag, false);
	pthread_mutex_unlock(&h->lock);
}

/* Wake the thread that sleeps on COND, if FLAG says it does. */
static void wake_if(struct helper *h, pthread_cond_t *cond, atomic_bool *flag)
{
	if (!atomic_load(flag))
		return;
	pthread_mutex_lock(&h->lock);
	pthread_cond_signal(cond);
	pthread_mutex_unlock(&h->lock);
}

static void *helper_main(void *arg)
{
	struct helper *h = arg;
	for (;;) {
		if (!spin_until(h, JOB_POSTED, true))
			sleep_until(h, &h->wake, &h->asleep, JOB_POSTED, true);
		int st = JOB_POSTED;
		if (!atomic_compare_exchange_strong(&h->state, &st, JOB_RUNNING)) {
			if (st == JOB_QUIT)
				break;
			continue; /* the engine's thread took it back */
		}
		h->part(h->arg, 1);
		atomic_store(&h->state, JOB_DONE);
		wake_if(h, &h->done, &h->waiting);
	}
	return NULL;
}

static bool helper_start(struct helper *h)
{
	if (h->started)
		return true;
	if (pthread_mutex_init(&h->lock, NULL) != 0)
		return false;
	if (pthread_cond_init(&h->wake, NULL) != 0) {
		pthread_mutex_destroy(&h->lock);
		return false;
	}
	if (pthread_cond_init(&h->done, NULL) != 0) {
		pthread_cond_destroy(&h->wake);
		pthread_mutex_destroy(&h->lock);
		return false;
	}
	atomic_init(&h->state, JOB_NONE);
	atomic_init(&h->asleep, false);
	atomic_init(&h->waiting, false);
	if (pthread_create(&h->thread, NULL, helper_main, h) != 0) {
		pthread_cond_destroy(&h->done);
		pthread_cond_destroy(&h->wake);
		pthread_mutex_destroy(&h->lock);
		return false;
	}
	h->started = true;
	return true;
}

void helper_stop(struct helper *h)
{
	if (!h->started)
		return;
	atomic_store(&h->state, JOB_QUIT);
	wake_if(h, &h->wake, &h->asleep);
	pthread_join(h->thread, NULL);
	pthread_cond_destroy(&h->done);
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
	h->started = false;
}

/* PART(ARG, 0) here and PART(ARG, 1) on the helper when it gets to it
 * first (engine_helper.h). */
void helper_run_two(struct helper *h, void (*part)(void *arg, int part), void *arg)
{
	if (h->off || !helper_start(h)) {
		part(arg, 0);
		part(arg, 1);
		return;
	}
	h->part = part;
	h->arg = arg;
	atomic_store(&h->state, JOB_POSTED);
	wake_if(h, &h->wake, &h->asleep);
	part(arg, 0);
	int st = JOB_POSTED;
	if (atomic_compare_exchange_strong(&h->state, &st, JOB_NONE)) {
		/* Not started: ours. */
		part(arg, 1);
		return;
	}
	/* Started: it ends about when ours did. */
	if (!spin_until(h, JOB_DONE, false))
		sleep_until(h, &h->done, &h->waiting, JOB_DONE, false);
	atomic_store(&h->state, JOB_NONE);
}
