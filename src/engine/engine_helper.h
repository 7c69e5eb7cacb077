/*
 * engine_helper: the engine's second thread, which takes the second half
 * of work split in two (the full cache's blocks, the caches that evict
 * when they are large). Private to the engine; tests/test_engine_helper.c
 * drives it directly.
 *
 * It is started the first time work pays for it, and joined by
 * engine_free. A job is the second of two parts; the engine's thread does
 * the first and then, if the helper has not picked the second up yet (the
 * other core is busy), takes it back and does it too, so no one ever
 * waits for a thread to be scheduled.
 *
 * Jobs come a microsecond or two apart when a step is split, so handing
 * one over must cost far less than that: the state is an atomic that both
 * threads watch, spinning with the processor's pause hint, and each claim
 * is a compare-and-swap. Only a thread that has watched in vain for
 * HELPER_SPIN_NS sleeps on a condition variable; it says so first (asleep,
 * waiting), and the other thread, after changing the state, signals only
 * when it reads that flag. Both sides store, then load, sequentially
 * consistently, so at least one of them sees the other's store: a sleeper
 * is always woken.
 */
#ifndef H2O_ENGINE_HELPER_H
#define H2O_ENGINE_HELPER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* How long a thread watches for the other before it sleeps: the steps of a
 * run come a few microseconds apart, and waking a sleeping thread takes
 * longer than the work of one. */
#define HELPER_SPIN_NS 100000L

enum job_state { JOB_NONE, JOB_POSTED, JOB_RUNNING, JOB_DONE, JOB_QUIT };

struct helper {
	bool off; /* never start: helper_run_two runs both parts itself */
	bool started;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	atomic_int state;    /* enum job_state */
	atomic_bool asleep;  /* the helper sleeps (or is about to) on WAKE */
	atomic_bool waiting; /* the engine's thread sleeps on DONE */
	void (*part)(void *arg, int part);
	void *arg;
};

/* PART(ARG, 0) and PART(ARG, 1), the second on the helper when it gets to
 * it first; the helper starts on the first call (a zeroed struct helper is
 * one not started), and when it cannot or is off, both run here. Both have run when
 * this returns. One thread at a time calls it for a given helper. */
void helper_run_two(struct helper *h, void (*part)(void *arg, int part), void *arg);

/* Stop and join the helper, if it was started; a later helper_run_two
 * starts it again. */
void helper_stop(struct helper *h);

#endif
