/*
 * pool: one helper thread for work split in two parts, shared by the
 * engine (the full cache's blocks, the caches that evict when they are
 * large, a model's query heads) and the model (a batch's matrix products
 * and attention). The pool stage sits below both and sees nothing.
 *
 * A job is two parts: the calling thread does part 0 and then, if the
 * helper has not picked part 1 up yet (the other core is busy), takes it
 * back and does it too, so no one ever waits for a thread to be
 * scheduled. Which thread runs a part never changes what it computes: the
 * parts write disjoint results.
 *
 * Jobs come a microsecond or two apart when a step is split, so handing
 * one over must cost far less than that: the state is an atomic that both
 * threads watch, spinning with the processor's pause hint, and each claim
 * is a compare-and-swap. Only a thread that has watched in vain for the
 * pool's spin time sleeps on a condition variable; it says so first
 * (asleep, waiting), and the other thread, after changing the state,
 * signals only when it reads that flag. Both sides store, then load,
 * sequentially consistently, so at least one of them sees the other's
 * store: a sleeper is always woken. A job's fields are written before it
 * is posted and read after it is taken, so they need no lock of their own.
 */
#ifndef H2O_POOL_H
#define H2O_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* How long a thread watches for the other before it sleeps, unless the
 * pool says otherwise: the steps of a run come a few microseconds apart,
 * and waking a sleeping thread takes longer than the work of one. */
#define POOL_SPIN_NS 100000L

/* A zeroed struct h2o_pool is one not started, with the default spin. */
struct h2o_pool {
	bool off;     /* never start: pool_run_two runs both parts itself */
	long spin_ns; /* 0: POOL_SPIN_NS */
	bool started;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	atomic_int state;    /* the job's state (pool.c) */
	atomic_bool asleep;  /* the helper sleeps (or is about to) on WAKE */
	atomic_bool waiting; /* the caller sleeps on DONE */
	void (*part)(void *arg, int part);
	void *arg;
};

/* Start P's helper thread if it is not running: false when it cannot be
 * (or P is off); pool_run_two then runs both parts on the caller. */
bool pool_start(struct h2o_pool *p);

/* PART(ARG, 0) and PART(ARG, 1), the second on the helper when it gets to
 * it first; the helper starts on the first call, and when it cannot or is
 * off, both run here. Both have run when this returns. One thread at a
 * time calls it for a given pool. */
void pool_run_two(struct h2o_pool *p, void (*part)(void *arg, int part), void *arg);

/* Stop and join the helper, if it was started; a later pool_run_two
 * starts it again. */
void pool_stop(struct h2o_pool *p);

#endif
