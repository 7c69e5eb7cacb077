/*
 * cost: what a run of a scene will take, told before any of it is spent,
 * and how far a long run has come while it goes.
 *
 * The work is the multiply-adds of the engine over every head: the full
 * cache's causal attention, n (n + 1) / 2 * dim for the logits and as many
 * again for the outputs when the scene has values, and each cache that
 * evicts the same over at most B + 1 positions a step. The memory is what
 * the mode allocates on top of the scene, which is loaded already: the
 * engines of every head (--report, --trace, --budget-sweep), or every
 * head's timeline and the engines that build them (the screens); and a
 * model scene's model, which the scene holds throughout, with its runs
 * per policy (the loader refused a model past the bound from its header
 * before loading it: scene_options.max_memory). The
 * trace's size is its numbers, about 15 bytes each. A caller compares the
 * memory with what the machine has before it starts, so a scene too large
 * for it is refused at once instead of after minutes.
 */
#ifndef H2O_COST_H
#define H2O_COST_H

#include <stdbool.h>

#include "h2o/budget.h"
#include "h2o/policy.h"

struct scene;

/* What is run: the screens (TUI and headless frames), --report or
 * --trace (an engine per head, once over the scene) or --budget-sweep (an
 * engine per head for each budget, one budget at a time). */
enum cost_mode { COST_SCREENS, COST_REPORT, COST_TRACE, COST_SWEEP };

struct cost {
	double madds;       /* multiply-adds over the whole run */
	double bytes;       /* memory allocated at the most, beyond the scene */
	double trace_bytes; /* the trace's size (COST_TRACE), else 0 */
};

/* The cost of MODE on SCENE with budget B; for COST_SWEEP, with each of
 * the COUNT total budgets of BUDGETS (split as the sweep splits them).
 * SHOWN: the policies the report, the sweep or the trace shows (a bit
 * each, ENGINE_POLICY), of which only what they need is counted
 * (report_policies_run, drop_policies_run). THREADS: the builds that run
 * at once (the screens' pool). */
struct cost cost_of(const struct scene *scene, const struct budget *b, enum cost_mode mode,
                    unsigned shown, const int *budgets, int count, int threads);

/* SECONDS as "12 s", "3 min 05 s" or "2 h 10 min", into BUF: the time a
 * run has left, on the screen and on stderr alike. */
void cost_format_duration(double seconds, char *buf, int size);

/* Bytes the machine can give now (MemAvailable), or 0 when unknown. */
double cost_available_memory(void);

/* "12.3 GB", "640 MB", "12 kB": BYTES in at most four significant
 * characters, into BUF. */
void cost_format_bytes(double bytes, char *buf, int size);

/*
 * Someone to tell how far a run has come: REPORT(CTX, DONE, TOTAL) with
 * DONE of TOTAL units of work, from the thread that does it, now and
 * then (at every step; the receiver decides how often to show it). A NULL
 * progress tells no one.
 */
struct progress {
	void (*report)(void *ctx, double done, double total);
	void *ctx;
	/* Whether the run is to stop now (a user who quit), asked as it is
	 * told; NULL: never. A run that honours it says which do. */
	bool (*stop)(void *ctx);
};

static inline void progress_tell(const struct progress *p, double done, double total)
{
	if (p && p->report)
		p->report(p->ctx, done, total);
}

static inline bool progress_stopped(const struct progress *p)
{
	return p && p->stop && p->stop(p->ctx);
}

#endif
