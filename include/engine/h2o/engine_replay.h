/*
 * engine_replay: what the timeline needs of the engine beyond engine.h.
 *
 * The timeline keeps the policies that evict and the full cache apart: the
 * first are small (B positions each) and replayed from snapshots, the full
 * cache's scores are kept sparsely and read position by position. These
 * functions let it snapshot and restore the parts separately and replay
 * steps whose records nobody reads. Nothing outside the core uses them.
 */
#ifndef H2O_ENGINE_REPLAY_H
#define H2O_ENGINE_REPLAY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "h2o/engine.h"

struct engine_plans;

/* A snapshot of the policies in MASK only (a subset of the engine's). */
size_t engine_snapshot_size_of(const struct engine *e, unsigned mask);
void engine_snapshot_of(const struct engine *e, unsigned mask, void *buf);

/* After engine_restore of a snapshot without the full cache, give the full
 * cache its state at the snapshot's step t: positions 0..t-1 with SCORES. */
void engine_restore_full(struct engine *e, const double *scores);

/* One step for the state only: no outputs, no figures, and the record is
 * the engine's own. Returns false at the end of the scene. */
bool engine_advance(struct engine *e);

/* Advance E to step T (e->t <= T) for the state only, like engine_advance
 * T - e->t times; without the full cache, the caches are replayed on two
 * threads when that pays. */
void engine_advance_to(struct engine *e, int t);

/* engine_new_only with blocks of BLOCK_ROWS steps of the full cache (0: as
 * many as the engine's memory for them allows), its layer-wide rules
 * following PLANS (plan.h: made for the loaded scene and B, shared by
 * every head's engine, and outliving them) or, when NULL, plans of its
 * own. Small blocks suit an engine that replays a few steps; large ones
 * one that runs the scene. */
struct engine *engine_new_rows(const struct scene *scene, const struct budget *b,
                               struct engine_plans *plans, unsigned policies, int block_rows);

/*
 * An engine that runs the scene once and reads the full cache's scores
 * only now and then (the timeline's): its full cache adds a block's
 * weights to the scores when the block is done, a tile of keys at a time
 * and on two threads, instead of one step at a time. The sums are the
 * same, in the same order. Its full records have no scores (NULL), and
 * engine_scores(e, POLICY_FULL) is up to date only after engine_sync_full.
 * Call before the first step.
 */
void engine_lazy_full(struct engine *e);
void engine_sync_full(struct engine *e);

/* The weight exp(LOGIT - MAX) / SUM with the engine's exp: a past step's
 * weight recomputed from its logit and that step's softmax max and sum,
 * bit for bit as the engine computed it. */
double engine_weight(double logit, double max, double sum);

/*
 * Keys at chosen positions of a vector scene, laid out for the engine's
 * kernels, so that one query's logits against all of them take one pass:
 * engine_keys_logits gives out[i] = engine_logit(scene, q, pos[i]) exactly.
 * The scene must outlive the set. NULL when out of memory.
 */
struct engine_keys;
struct engine_keys *engine_keys_new(const struct scene *scene, const int *pos, int count);
void engine_keys_logits(const struct engine_keys *ks, int q, double *out);
void engine_keys_free(struct engine_keys *ks);

/* E never starts its second thread: for an engine that runs beside others
 * on every core (a pool of timeline builds). Call before the first step. */
void engine_solo(struct engine *e);

/*
 * Shared steps: at each step, caches that attend the very same positions
 * (a policy that keeps every token after the prompt beside the full cache,
 * a window beside SnapKV's window form when they agree) compute their
 * weights, outputs and figures once, and the others copy them, which
 * changes no bit of any record. engine_share_off makes E compute every
 * cache's own, for the test that holds the two to the same bits. Call
 * before the first step.
 */
void engine_share_off(struct engine *e);

/*
 * Once *STOP is true, E's long computations (the full cache's blocks) stop
 * early, between tiles of keys, so that a build that is called off ends at
 * once; the steps E gives after that are meaningless, and E is good only
 * for engine_free. STOP must outlive E.
 */
void engine_cancel_on(struct engine *e, const atomic_bool *stop);

/* Bytes the engine holds. */
size_t engine_memory(const struct engine *e);
/* The bytes engine_new_rows (SCENE, B, POLICIES, BLOCK_ROWS) would hold,
 * without making it: the cost of an engine told before it is paid. */
double engine_predict_memory(const struct scene *scene, const struct budget *b, unsigned policies,
                             int block_rows);

#endif
