/*
 * engine: the H2O cache and the full cache, stepped one token at a time.
 *
 * This is spec §2 to the letter. Step t appends token p = t - 1 to both
 * caches, computes each cache's attention with a softmax over the positions
 * it holds, the outputs and the accumulated scores, and then evicts from the
 * H2O cache down to heavy + recent tokens. The engine is pure: no I/O, no
 * globals, no allocation after engine_new. A step fills a record of what
 * happened, whose arrays point into the engine and stay valid until the next
 * step or restore.
 *
 * The caches hold positions, not copies of K and V: the rows a cache holds
 * are the scene's rows at its positions. Evicting a position removes its key
 * row, value row and score from the cache exactly as the paper's
 * keep_indices does.
 */
#ifndef H2O_ENGINE_H
#define H2O_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

struct scene;

/* Figures at one step (spec §2 "Figures"). */
struct step_metrics {
	int tokens_h, tokens_f; /* held after this step's eviction */
	long kv_h, kv_f;        /* tokens * 2 * dim */
	bool has_out;           /* false when the scene has no values */
	double out_err;         /* ||o_H - o_F||_2 */
	double out_cos;         /* cos(o_H, o_F); 1 when both are zero */
	double attn_recall;     /* full attention mass on what H attended */
};

/* What step t did. Arrays point into the engine. */
struct step_record {
	int step; /* t, 1..n */
	int pos;  /* p = t - 1, the token appended */

	/* H2O cache, before eviction, ascending positions. */
	int n_attended;
	const int *attended;
	const double *attn;   /* this step's weights */
	const double *scores; /* scores after this step's update */
	double h_max, h_sum;  /* w_j = exp(l_j - h_max) / h_sum */

	/* Eviction: the positions removed at this step, ascending. */
	int n_evicted;
	const int *evicted;
	const double *evicted_scores; /* their scores when removed */
	/* The lowest-scored heavy hitter that was kept: what an evicted
	 * token had to beat. -1 when nothing was evicted or heavy is 0. */
	int cutoff_pos;
	double cutoff_score;

	/* Full cache: positions 0..pos. */
	const double *full_attn;
	const double *full_scores;
	double f_max, f_sum;

	const double *out_h, *out_f; /* dim numbers, NULL without values */
	struct step_metrics m;
};

struct engine;

/* A new engine at step 0 for SCENE with the given budgets (heavy, recent
 * >= 0, heavy + recent >= 1). The scene must outlive the engine. Returns
 * NULL when out of memory. */
struct engine *engine_new(const struct scene *scene, int heavy, int recent);
void engine_free(struct engine *e);

/* Run step t = engine_step_count() + 1 and describe it in *REC. Returns
 * false (and does nothing) when every token has been processed. */
bool engine_step(struct engine *e, struct step_record *rec);

int engine_step_count(const struct engine *e);
int engine_heavy(const struct engine *e);
int engine_recent(const struct engine *e);

/* The H2O cache now (after the last step's eviction), ascending
 * positions. The first engine_h2o_len() - min(recent, len) positions form
 * the heavy region, the rest the recent region. */
int engine_h2o_len(const struct engine *e);
const int *engine_h2o_positions(const struct engine *e);
const double *engine_h2o_scores(const struct engine *e);
int engine_h2o_recent_len(const struct engine *e);

/* The full cache's scores now, positions 0..engine_step_count() - 1. */
const double *engine_full_scores(const struct engine *e);

/* The logit of query position Q against key position J under the scene's
 * mode (scale * q.k, or ln of the given attention). The timeline uses it
 * to recompute a past step's weights exactly as the engine did. */
double engine_logit(const struct scene *scene, int q, int j);

/*
 * Snapshots: an engine's whole state as a byte blob, so that a timeline can
 * return to a step without replaying from step 0. engine_restore puts an
 * engine of the same scene and budgets back to the snapshot's step; the
 * steps that follow are bit-identical to the ones that followed it the
 * first time.
 */
size_t engine_snapshot_size(const struct engine *e);
void engine_snapshot(const struct engine *e, void *buf);
void engine_restore(struct engine *e, const void *buf);

#endif
