/*
 * drop_state: one policy's run in the real drop and its rules' step
 * (drop_evict.c), what drop.c drives. Private to the timeline.
 */
#ifndef H2O_DROP_STATE_H
#define H2O_DROP_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "h2o/llama.h"
#include "h2o/policy.h"

struct drop_queries;

/* A position of a span before its last: its weights (per layer and query
 * head a row of STRIDE floats) and the LEN slots every cache held after
 * its step. */
struct span_view {
	const float *w;
	size_t stride;
	int len, heads;
};

/* One policy's run, the scores of its caches and, for a rule that reads
 * the prompt's last queries, their attention. */
struct run_state {
	enum policy_id id;
	/* The model run this policy's caches are: its own, or one it shares
	 * with the runs whose caches have held the same as its every step
	 * (run_split); OWN is the run it brought, freed with it. */
	struct llama_run *run, *own;
	/* This step's cuts, applied after every rule has decided (cuts_apply):
	 * per cache whether its rule cut it, and then which slots stay. */
	unsigned char *cut, *keep;
	/* Within a span, the position's view of the run, else NULL. */
	const struct span_view *view;
	double **score; /* [layer * kv + g]: aligned with the cache's slots */
	/* The observation window (policy_run_window at the prompt's end), 0
	 * for none, and per layer and query head the sum of the window's
	 * weights on each prompt position: [layer][head][prompt]. */
	int window;
	double *observed;
};

/* The room one step of the rules works in, for caches of up to CAP. */
struct drop_scratch {
	double *mean, *lmean, *norm, *rank;
	double *keys, *anchor; /* a by_keys rule's key rows (cap x dim), its anchor */
	int *order;
	unsigned char *gone, *keep;
	struct drop_queries *qv; /* a by_queries rule's (drop_query.h), or NULL */
};

/* The weights of query head H of layer L at ST's step, and the slots of
 * its kv head G's cache. */
static inline const float *weights_of(const struct run_state *st, int l, int h)
{
	if (st->view != NULL)
		return st->view->w +
		       ((size_t)l * (size_t)st->view->heads + (size_t)h) * st->view->stride;
	return llama_run_weights(st->run, l, h);
}

static inline int len_of(const struct run_state *st, int l, int g)
{
	return st->view != NULL ? st->view->len : llama_run_len(st->run, l, g);
}

/*
 * After step S of policy ST's run: every cache's scores add its group's
 * mean weights, then the driver runs the rule (policy_run: at the prompt's
 * end and at every step the interval compresses after it); the cuts it
 * decides are marked in ST's cut and keep, applied by the caller once every
 * rule of the step has decided. X is the room it works in, for caches of
 * up to CAP slots.
 */
void drop_evict_step(const struct llama_config *cfg, struct run_state *st, int s,
                     const struct policy_budget *b, struct drop_scratch *x, size_t cap);
/* Policy P's run under B over N positions of model M: its model run, its
 * caches' scores and, for a rule that reads the prompt's last queries,
 * the room for their attention. False when out of memory (what was made
 * is ST's to free, drop_states_free). */
bool drop_state_new(struct run_state *st, enum policy_id p, const struct llama_model *m,
                    const struct policy_budget *b, int n);
void drop_states_free(struct run_state *st, int count, const struct llama_config *cfg);
/* Room for caches of up to CAP positions in KV kv heads of DIM numbers;
 * false when out of memory (what was made is X's to free). */
bool drop_scratch_new(struct drop_scratch *x, size_t cap, size_t kv, size_t dim);
void drop_scratch_free(struct drop_scratch *x);

#endif
