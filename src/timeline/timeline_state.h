/*
 * timeline_state: what a timeline holds, for the files of the timeline
 * stage that share it (timeline.c builds it and answers for whole runs;
 * timeline_seek.c seeks its engines and adds up the full cache's scores).
 * Private to src/timeline/: no other stage, test or benchmark includes it.
 */
#ifndef H2O_TIMELINE_STATE_H
#define H2O_TIMELINE_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "h2o/budget.h"
#include "h2o/timeline.h"

struct policy_log {
	struct eviction *ev;    /* in order */
	int n_ev;               /* the builder's */
	int *ev_until;          /* [0..n]: evictions at steps 1..t */
	atomic_int *evicted_at; /* [pos], set as the build evicts it */
};

enum build_state { BUILD_RUNNING, BUILD_DONE, BUILD_FAILED };

struct timeline {
	const struct scene *sc;
	struct budget want;     /* the user's choice */
	struct policy_budget b; /* as the rules read it (policy_budget_of) */
	/* The plans its engines follow (plan.h), the caller's; NULL: each
	 * engine makes its own. */
	struct engine_plans *plans;
	int n;
	struct step_summary *sum; /* [1..n] */
	struct policy_log log[POLICY_COUNT];
	int promote_next; /* the builder's: the first position H2O may yet promote */

	unsigned mask;      /* the policies its engines run (timeline_new_only) */
	unsigned lite_mask; /* those but the full cache */
	int every;          /* snapshot interval of the caches that evict */
	void **snap;        /* snap[i]: them after step i * every */
	int full_every;     /* a multiple of every */
	double **full_snap; /* full_snap[i]: the full cache's scores after step i * full_every */
	size_t bytes;       /* all of the above */

	/* The build: steps 1 .. built are final (summaries, evictions,
	 * snapshots), and nothing of them changes afterwards; a reader may
	 * use them while the builder thread (timeline_start) goes on. */
	atomic_int built;
	atomic_int state; /* enum build_state */
	atomic_bool stop;
	struct engine *run; /* the builder's engine, while it builds */
	pthread_t thread;
	bool threaded; /* a builder thread to join */

	struct engine *e; /* every cache: timeline_seek */
	struct step_record rec;
	bool rec_valid;
	struct engine *lite; /* the caches that evict: timeline_seek_lite */
	struct step_record lrec;
	bool lrec_valid;
};

#endif
