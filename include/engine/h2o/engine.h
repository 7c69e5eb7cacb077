/*
 * engine: every policy's cache, stepped one token at a time.
 *
 * This is design §2 to the letter, for the full cache, the H2O cache and the
 * other policies of policy.h side by side. Step t appends token p = t - 1
 * to every cache, computes each cache's attention with a softmax over the
 * positions it holds, the outputs and the accumulated scores, and then lets
 * each policy evict down to its budget. The engine is pure: no I/O, no
 * globals, no allocation after engine_new (but for a helper thread,
 * started the first time the work pays for a second core, and joined by
 * engine_free). A step fills a record of what happened, whose arrays point
 * into the engine and stay valid until the next step or restore.
 *
 * A cache that evicts holds its positions, their scores and, for vector
 * scenes, its own copies of their key rows (like a real KV cache), so a
 * step costs O(B * dim) whatever the length of the scene; value rows are
 * read from the scene at the positions held. Evicting a position removes
 * its key row, value row and score from that cache exactly as the paper's
 * keep_indices does. With outputs, such a cache computes eight steps at
 * once and hands them out one by one (what it reports, snapshots and
 * records are those of the steps handed out), so that each value row is
 * read once for eight outputs. The full cache attends over every earlier
 * position and costs O(n * dim) per step; it computes many future steps at
 * once (blocked causal attention, on two threads where that pays). Neither
 * changes a result: every weight, sum and output is summed in the same
 * order as engine_logit and design §2 write it, by one thread.
 */
#ifndef H2O_ENGINE_H
#define H2O_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "h2o/budget.h"
#include "h2o/policy.h"

struct scene;

/* Figures of one cache at one step (design §2 "Figures"). */
struct step_metrics {
	int tokens;         /* held after this step's eviction */
	long kv;            /* tokens * 2 * dim */
	bool has_out;       /* false when the scene has no values */
	double out_err;     /* ||o - o_full||_2 */
	double out_cos;     /* cos(o, o_full); 1 when both are zero */
	double attn_recall; /* full attention mass on what this cache attended */
	int overlap_h2o;    /* positions kept both here and by H2O */
};

/* What one cache did at one step. */
struct cache_record {
	/* Before eviction, ascending positions. */
	int n_attended;
	const int *attended;
	const double *attn; /* this step's weights (the view's query head) */
	/* The weights the scores add: the mean over the query heads of the
	 * key/value head's group (design §2 "Grouped scores"); attn itself
	 * with one head per group. */
	const double *group_attn;
	const double *scores; /* scores after this step's update */
	double max, sum;      /* w_j = exp(l_j - max) / sum */

	/* The positions evicted at this step, ascending, with their scores
	 * and this step's weights when removed. */
	int n_evicted;
	const int *evicted;
	const double *evicted_scores;
	const double *evicted_weights;
	/* The kept position an evicted one had to beat (on score, or on
	 * weight for a by_weight policy): -1 when nothing was evicted or the
	 * rule has no cut-off. */
	int cutoff_pos;
	double cutoff_value;

	const double *out; /* dim numbers, NULL without values */
	struct step_metrics m;
};

/* What step t did, for every policy. */
struct step_record {
	int step; /* t, 1..n */
	int pos;  /* p = t - 1, the token appended */
	struct cache_record c[POLICY_COUNT];
};

struct engine;

/* A new engine at step 0 for SCENE with budget B (heavy, recent >= 0,
 * heavy + recent >= 1, 0 <= sinks < heavy + recent unless both are 0).
 * The scene must outlive the engine. NULL when out of memory. */
struct engine *engine_new(const struct scene *scene, const struct budget *b);
void engine_free(struct engine *e);

/* A bit per policy, for engine_new_only. The masks (here, a scene's
 * "policies", the report's and the model's runs) are unsigned ints: the
 * table may grow to 31 policies before they must widen. */
#define ENGINE_POLICY(p)    (1u << (p))
#define ENGINE_ALL_POLICIES ((1u << POLICY_COUNT) - 1u)
_Static_assert(POLICY_COUNT < 32, "policy masks are unsigned ints: at most 31 policies");

/*
 * engine_new running only the policies in the mask POLICIES (not 0), e.g.
 * ENGINE_POLICY(POLICY_H2O) to time H2O alone. A policy left out holds
 * nothing: its engine_len is 0 and its record is all zeros (cutoff_pos
 * -1). Without the full cache, the figures measured against it (out_err,
 * out_cos, attn_recall) are NaN; without H2O, overlap_h2o is 0. What the
 * policies that run do is exactly what engine_new's engine does.
 */
struct engine *engine_new_only(const struct scene *scene, const struct budget *b,
                               unsigned policies);
/* Why SCENE cannot run policy P as it is meant, the end of a sentence
 * "SCENE is ..." ("an attention scene, which has no keys for it to
 * read"), or NULL when it can: an attention scene has no keys
 * (policy_reads_keys), a model scene keeps its queries after RoPE only
 * (policy_reads_queries). */
const char *engine_policy_refused(const struct scene *scene, enum policy_id p);

/* MASK (0: every policy) less the policies SCENE cannot run
 * (engine_policy_refused). */
unsigned engine_policies_for(const struct scene *scene, unsigned mask);

/* The policies E runs (ENGINE_ALL_POLICIES for engine_new). */
unsigned engine_policies(const struct engine *e);

/* Run step t = engine_step_count() + 1 and describe it in *REC. Returns
 * false (and does nothing) when every token has been processed. */
bool engine_step(struct engine *e, struct step_record *rec);

int engine_step_count(const struct engine *e);
/* E's budget as its rules read it (policy_budget_of). */
const struct policy_budget *engine_budget(const struct engine *e);

/* A cache now (after the last step's eviction): ascending positions and
 * their scores. */
int engine_len(const struct engine *e, enum policy_id p);
const int *engine_positions(const struct engine *e, enum policy_id p);
const double *engine_scores(const struct engine *e, enum policy_id p);

/* The most positions a cache that evicts holds in SCENE under B: one more
 * than the budget, or the whole prompt, and never more than the scene. */
int engine_cache_cap(const struct scene *scene, const struct budget *b);

/* The most entries policy P's cache holds in SCENE under B:
 * engine_cache_cap, or the whole scene for a policy that keeps every token
 * after the prompt's end (policy.grows). */
int engine_policy_cap(const struct scene *scene, const struct budget *b, enum policy_id p);

/* What the caches of the policies of MASK but the full cache hold at most,
 * added, taken over the scene's steps: engine_cache_cap for those that
 * evict, and for one that grows its mean, halfway from engine_cache_cap to
 * the whole scene (the size of their snapshots, on average). */
double engine_caches_cap(const struct scene *scene, const struct budget *b, unsigned mask);

/* The logit of query position Q against key position J under the scene's
 * mode (scale * q.k, or ln of the given attention). The timeline uses it
 * to recompute a past step's weights exactly as the engine did. */
double engine_logit(const struct scene *scene, int q, int j);

/*
 * Snapshots: an engine's whole state as a byte blob, so that a timeline can
 * return to a step without replaying from step 0. engine_restore puts an
 * engine of the same scene, budget and policies back to the snapshot's
 * step; the steps that follow are bit-identical to the ones that followed
 * it the first time.
 */
size_t engine_snapshot_size(const struct engine *e);
void engine_snapshot(const struct engine *e, void *buf);
void engine_restore(struct engine *e, const void *buf);

/*
 * The engine's inner loops and its exp come in variants for instruction
 * sets: "avx512", "avx2" and "portable" (SSE2, or plain C, with the C
 * library's exp). Every variant gives every result bit for bit (the
 * reference test runs under each); the engine uses the widest this
 * processor runs unless engine_kernel_select names another, for the whole
 * process from then on (NULL or "auto": the widest). Returns 0, -1 when
 * this processor cannot run that variant, -2 for a name that is none of
 * them; the variant in use stays when it fails. The engine reads no
 * environment: the program and the tests pass H2O_KERNEL here.
 */
int engine_kernel_select(const char *name);
/* The variant in use: "avx512", "avx2" or "portable". */
const char *engine_kernel_name(void);

#endif
