/*
 * engine_impl: what the parts of the engine share (private to
 * src/engine/). The engine is one struct engine, stepped by engine.c; each
 * part owns a piece of it:
 *
 *   engine.c           new, free, what a cache holds, stepping, memory
 *   engine_cache.c     the caches that evict: ring of steps, key slots,
 *                      lookahead, batches of steps with outputs
 *   engine_full.c      the full cache: blocks of steps (blocked causal
 *                      attention), its scores, lazy or not
 *   engine_figures.c   a step's figures (design §2 "Figures")
 *   engine_snapshot.c  snapshots and restores
 *   engine_logit.c     one logit, one weight, a set of keys (for the
 *                      timeline's recomputations)
 *   (the second thread is the pool stage's, h2o/pool.h)
 *   engine_kernel.c    the inner loops, vectorised (engine_kernel.h)
 *   engine_exp.c       the softmax's exp (engine_exp.h)
 */
#ifndef H2O_ENGINE_IMPL_H
#define H2O_ENGINE_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "h2o/engine.h"
#include "h2o/pool.h"
#include "engine_kernel.h"

/* Multiply-adds below which work stays on one thread: handing a part to
 * the helper costs a few microseconds of waking it up. */
#define THREAD_MIN_WORK (1L << 21)

/* Steps a cache that evicts computes at once when they have outputs: one
 * pass over the value rows (kernel_batch_out) then gives all of them. Up
 * to caches of AHEAD_MAX_CAP entries; larger ones, whose ring of step states
 * would take too much memory, compute a step at a time. */
#define AHEAD         KERNEL_LANES
#define AHEAD_MAX_CAP 32768

/* What a cache that evicts did at one step, and what it held afterwards:
 * the arrays its record points to. (The engine's own: not the cell grid
 * of h2o/frame.h.) */
struct step_state {
	int len; /* positions attended, ascending */
	int *pos;
	double *score; /* after this step's update, before eviction */
	/* This step's weights: W_OWN, or the weights of the step's lead
	 * (a shared step), which stay as they are while its record lives. */
	const double *w;
	double *w_own;
	double max, sum;
	int n_ev;
	int *ev_pos;
	double *ev_score, *ev_w;
	int cutoff_pos;
	double cutoff_value;
	/* After eviction: the cache. A step that evicted nothing swaps its
	 * arrays of positions and scores with these instead of copying them,
	 * so then they hold what it attended (state_attended). */
	int klen;
	int *kpos;
	double *kscore;
	/* A grouped cache (group > 1): the mean of the group's weights at
	 * this step, the weights its score adds; else NULL (they are w). */
	double *gw;
	/* The policy whose weights, output and figures this step copied
	 * (engine_cache.c, "Shared steps"): it attended the same positions;
	 * -1 when the cache computed its own. */
	int lead;
	/* A step that is the full cache's in all but name (engine_cache.c,
	 * "Steps of the full cache"): its positions are the full cache's
	 * (ALIAS_POS, 0 .. len - 1) and its scores the full cache's of this
	 * step (ALIAS_SCORE, the same numbers), and its own arrays of them are
	 * not written; else both NULL. */
	const int *alias_pos;
	const double *alias_score;
};

/* Logits of the queries of steps first + 1 .. first + count against every
 * key slot of a cache, row r (the query of position first + r) at
 * logit + r * stride; the queries are the n x dim rows at Q. A step that
 * finds its row here reads it; a key that arrives later fills in its slot
 * in the rows still to come. So the key rows, which do not fit in the
 * core's first-level cache, are read once per KERNEL_LANES steps instead
 * of once per step. */
struct lookahead {
	const double *q;
	int first, count;
	size_t stride;
	double *qt; /* those queries, transposed (kernel_rows_logits8) */
	double *logit;
};

/* A policy that evicts: at most cap = engine_cache_cap entries. */
struct cache {
	int cap;
	/* Step s's state is ring[s % ring_len]; ring[0] starts as step 0,
	 * the empty cache. A step reads the cache from the previous step's
	 * state and writes only its own, so a step's record stays as it was
	 * while the steps after it are computed, until the ring comes round. */
	int ring_len;
	struct step_state *ring;
	unsigned char *gone;
	/* Outputs of steps out_first .. out_first + AHEAD - 1, dim each,
	 * and a batch's positions and weights (kernel_batch_out). */
	int out_first;
	double *out;
	/* While a batch of steps with outputs is computed (brow >= 0, the
	 * batch's step being computed): the positions of the batch, u_pos
	 * (the cache before it, then each position appended; the one appended
	 * at step brow is u_pos[ub + brow], nu in all), the index in u_pos of
	 * each entry of the cache (uk, kept beside it like slot), and each
	 * step's weights by u_pos index, 0 where it attends none (wt). */
	int brow, ub, nu;
	int *u_pos, *uk;
	double *wt; /* row r (the batch's step r) at wt + r * wstride */
	size_t wstride;
	/* Vector scenes: entry i's key row is row slot[i] of KEYS (dim
	 * numbers each). Slots freed by eviction are reused. */
	int *slot;
	int *free_slot, n_free;
	int hi; /* slots 0 .. hi - 1 have been used */
	double *keys;
	/* The L2 norm of each slot's key row (slot_norm), and entry i's
	 * (key_norm, for a policy that reads them: policy.by_key_norm). */
	double *slot_norm, *key_norm;
	/* A policy with observe_window: the observation window's weights of
	 * each head of the group (group x cap, policy_cache.observed), a
	 * query's row and its softmax's scores (2 x cap), the zeros that
	 * softmax adds to; with ranks_own, the
	 * values its rule ranks by (cap). */
	double *obs, *orow, *ozero, *rank;
	/* A policy with per_kv_head: room to order its entries (policy_cache.
	 * order). */
	int *order;
	/* A policy with by_keys: room for its anchor (dim); its rule reads
	 * the keys from their slots (policy_cache.key_slot). */
	double *anchor;
	/* A policy with by_queries: the query rows of each head of the group
	 * (group pointers, policy_cache.queries) and the rule's room
	 * (POLICY_WORK_DOUBLES(dim, cap), policy_cache.work). */
	const double **qrows;
	double *work;
	/* And in a vector scene, what its rule keeps by slot (policy_memo:
	 * MEMO points into MEMO_BLOCK, its numbers, and MEMO_INTS). */
	struct policy_memo *memo;
	double *memo_block;
	int *memo_ints;
	/* And a model scene's rotary embedding (policy_cache.rope). */
	struct policy_rope rope;
	/* Grouped scores (design §2): the GROUP query heads that share this
	 * cache's key/value head, the view's own at index OWN, each with its
	 * lookahead (vector scenes) or its attention rows (ATTN, attention
	 * scenes); GW holds the other heads' weights of a step (group x cap). */
	int group, own;
	struct lookahead *la;
	const double **attn;
	double *gw;
	/* A layer-wide rule followed from the layer's plan (plan.h), or NULL:
	 * the policy's own rule. */
	const struct layer_plan *plan;
};

/* The full cache: positions 0 .. len - 1, and a block of computed steps. */
struct full {
	int len;
	double *score; /* n */
	/* Lazy scores (engine_lazy_full): the rows of steps added + 1 ..
	 * len are not yet in SCORE. */
	bool lazy;
	int added;
	int *iota; /* 0 .. n - 1: its positions, and its record's */
	int rows;  /* block capacity */
	int first; /* the block holds positions first .. first + count - 1 */
	int count;
	double *w;   /* rows x n: row r's weights over 0 .. first + r */
	double *out; /* rows x dim */
	double *max, *sum;
	double *wsum; /* each row's sum of its weights: its attention recall */
	double *qt;   /* the block's queries, transposed eight at a time */
	/* The logits of each group of eight rows, key by key (n x 8 each),
	 * and each thread's running max of each of their lanes. */
	double *lt, *gmax[2];
	double *panel[2]; /* each thread's tile of value rows */
};

struct engine {
	const struct scene *sc;
	struct budget want;     /* the user's choice */
	struct policy_budget b; /* as the rules read it: policy_budget_of */
	unsigned mask;
	int t;     /* steps done */
	int live;  /* steps the caches that evict have computed, >= t */
	int ahead; /* steps they compute at once with outputs */
	/* The step engine_step handed out last, if no other call came
	 * since; else -1. */
	int streak;
	struct cache c[POLICY_COUNT]; /* every policy but POLICY_FULL */
	struct full f;
	struct step_record rec; /* engine_advance's */
	struct h2o_pool h;
	/* The plans the layer-wide policies follow (the caller's, shared by
	 * every head, or own_plans, the engine's when it got none), and the
	 * policies whose plan is still to be got (plans_ready). */
	struct engine_plans *plans, *own_plans;
	unsigned plan_wanted;
	/* When set and true, long work stops early (engine_cancel_on). */
	const atomic_bool *cancel;
	/* Every cache computes its own steps (engine_share_off). */
	bool no_share;
};

/* A layer's plan for one layer-wide policy (plan.h): the evictions of step
 * s are ev_pos[ev_start[s] .. ev_start[s + 1]) (ascending positions) with
 * their mean weights ev_w, and the kept position they lost to is cut_pos[s]
 * (-1: none) with its mean weight cut_w[s]; steps 1..n. A plan of a
 * per_kv_head policy has a part per key/value head of the layer (parts;
 * else 1, every head alike): part g's evictions of step s start at
 * ev_start[g * (n + 2) + s]; its ev_w is NULL (each head's engine words
 * its evictions with its own group's weights) and cut_w is the cut-off's
 * score. */
struct layer_plan {
	int n, parts;
	int *ev_start; /* parts x (n + 2) */
	int *ev_pos;
	double *ev_w, *ev_score;
	int *cut_pos;
	double *cut_w;
};

/* Whether E's work has been called off: its results no longer matter. */
static inline bool cancelled(const struct engine *e)
{
	return e->cancel && atomic_load_explicit(e->cancel, memory_order_relaxed);
}

static inline bool runs(const struct engine *e, int p)
{
	return e->mask & ENGINE_POLICY(p);
}

static inline int min_int(int a, int b)
{
	return a < b ? a : b;
}

/* engine_cache.c */

/* Step STEP's state in C's ring. */
static inline struct step_state *state_of(const struct cache *c, int step)
{
	return &c->ring[step % c->ring_len];
}

/* The positions step state F attended, and their scores. */
static inline const int *state_attended(const struct step_state *f)
{
	return f->alias_pos ? f->alias_pos : f->n_ev == 0 ? f->kpos : f->pos;
}

static inline const double *state_scores(const struct step_state *f)
{
	return f->alias_score ? f->alias_score : f->n_ev == 0 ? f->kscore : f->score;
}

/* The positions step state F kept (klen of them), and their scores. */
static inline const int *state_kept(const struct step_state *f)
{
	return f->alias_pos ? f->alias_pos : f->kpos;
}

static inline const double *state_kept_scores(const struct step_state *f)
{
	return f->alias_score ? f->alias_score : f->kscore;
}

/* The slots of a cache of CAP entries' policy_memo: CAP rounded up to
 * whole tiles of keys. */
static inline size_t memo_slots(size_t cap)
{
	return (cap + KERNEL_LANES - 1) / KERNEL_LANES * KERNEL_LANES;
}

/* Steps a cache of CAP entries computes at once in a scene like SC. */
int cache_ahead_of(const struct scene *sc, int cap);

/* The buffers policy ID's rule needs beyond cache_init's (observed,
 * rank). False when out of memory. */
bool cache_init_rule(struct cache *c, enum policy_id id, const struct scene *sc);

/* A cache of CAP entries that computes up to AHEAD steps at once, for
 * the head view SC, shared by SHARING query heads of its parent
 * (heads_cache_group; 1: the view's query head alone). */
bool cache_init(struct cache *c, int cap, int ahead_steps, const struct scene *sc, int sharing);
void cache_done(struct cache *c);
/* Every slot free, from slot 0 up (cache_restore starts over from it). */
void cache_reset_slots(struct cache *c);
/*
 * One query head's observation window at the prompt's end, over the LEN
 * positions POS (0 .. P - 1 then): each of the last W queries' softmax over
 * the positions up to its own, added in query order from 0.0 and divided
 * by W, into O. The logit is the dot product of query row q of Q and key
 * row POS[j] of K (index order, times SCALE), or, with Q NULL, the log of
 * ATTN's row q at POS[j] (ATTN the head's rows, scene_attn_offset); the
 * softmax is kernel_softmax_scores' (PREV: LEN zeros, SCORE: LEN numbers
 * it writes and nobody reads; X: LEN numbers of scratch). The engine's
 * caches and the layer plans both compute it here, so they agree bit for
 * bit.
 */
void cache_window_row(const double *q, const double *k, const double *attn, size_t dim,
                      double scale, const int *pos, int len, int w, double *o, double *x,
                      const double *prev, double *score);
/* Spec §2 for cache ID at step S, into S's state from S - 1's. LEAD: -1,
 * or the policy (a cache already stepped to S, or the full cache, its
 * block holding step S) that attended the very positions C attends at S:
 * its weights are copied instead of computed. ALIAS: the step is the full
 * cache's (LEAD is the full cache, and the rule will never evict again:
 * engine.c's may_alias), so it is not computed at all. */
void cache_step(const struct engine *e, enum policy_id id, struct cache *c, int s, int lead,
                bool alias);
/* Write C's step T's positions and scores into its own arrays when it
 * took the full cache's (alias_pos), the full cache's scores being those
 * of step T. */
void cache_unalias(const struct engine *e, struct cache *c, int t);
/* The outputs of steps S0 .. S0 + COUNT - 1 of C, in one pass:
 * cache_outputs_begin before the steps, cache_outputs_end after them
 * (copied from the leads when every step had one). */
void cache_outputs_begin(struct cache *c, int s0, int count);
void cache_outputs_end(const struct engine *e, struct cache *c, int count);
/* Step S of C, computed, as a record (with its output when OUTPUT). */
void cache_record_of(const struct scene *sc, const struct cache *c, int s, bool output,
                     struct cache_record *r);
/* Make C hold LEN entries at step T (from a blob: any alignment). */
void cache_restore(const struct engine *e, struct cache *c, int t, int len, const void *pos,
                   const void *score);

/* engine_full.c */

/* BLOCK_ROWS: the rows of a block, or 0 for as many as fit the memory
 * allowed for them. */
bool full_init(struct full *f, const struct scene *sc, int block_rows);
/* The rows of the blocks full_init gives a scene like SC. */
int full_rows_of(const struct scene *sc, int block_rows);
void full_done(struct full *f);
/* Spec §2 steps 1-5 for the full cache at position P, into *R. */
void full_step(struct engine *e, int p, struct cache_record *r);
/* Make the full cache's block hold position P's row, as full_step would. */
void full_reach(struct engine *e, int p);
/* Whether the block holds position P's row. */
static inline bool full_holds(const struct full *f, int p)
{
	return p >= f->first && p < f->first + f->count;
}

/* engine_figures.c */

/* The figures of policy P's record R; FULL is the full cache's record, or
 * NULL when it does not run. SAME: NULL, or the measured record of a
 * policy that attended the same positions with the same weights and
 * output at this step, whose figures of them R takes; SAME_KEPT: it also
 * keeps the same positions after the step. */
void figures_measure(const struct engine *e, enum policy_id p, struct cache_record *r,
                     const struct cache_record *full, const struct cache_record *same,
                     bool same_kept);

#endif
