/*
 * timeline: every step of a scene, reachable in any order.
 *
 * The timeline runs the engine over the whole scene once and keeps what the
 * screen needs at every step, for every policy: the figures, the
 * evictions, and the softmax normalisers that let any past step's attention
 * weight be recomputed exactly. It also keeps snapshots of the caches that
 * evict every few steps, so that seeking to step t restores the nearest
 * snapshot before t and replays the rest, and the full cache's scores every
 * few hundred steps, from which a score at any step is recomputed with the
 * normalisers. Because the engine is deterministic, the state reached by
 * seeking back is bit-identical to the state reached by stepping forward:
 * stepping back shows exactly what stepping forward showed. The intervals
 * are chosen from the scene so that the timeline stays within about twice
 * the memory of the scene's own q, k and v.
 */
#ifndef H2O_TIMELINE_H
#define H2O_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "h2o/engine.h"

struct engine_plans;
struct scene;
struct timeline;

/* What the timeline keeps of one cache at step t (1..n). */
struct cache_summary {
	struct step_metrics m;
	double max, sum; /* the softmax of this step */
	int n_evicted;   /* positions evicted at this step ... */
	int first_evict; /* ... at timeline_eviction(p, first_evict + i) */
};

struct step_summary {
	struct cache_summary c[POLICY_COUNT];
	/* The position that left H2O's recent region for its heavy region
	 * at this step, or -1. */
	int promoted_pos;
};

/* An eviction: which position, at which step, and why. */
struct eviction {
	int pos;
	int step;
	double score;   /* its accumulated score when removed */
	double weight;  /* its weight at that step */
	int cutoff_pos; /* the kept position it lost to, -1 if none */
	double cutoff_value;
};

/* Build the timeline of SCENE with budget B, its engines' layer-wide rules
 * following PLANS (plan.h: the loaded scene's under B, shared by every
 * head's timeline) or, when NULL, plans of their own. NULL when out of
 * memory. The scene and the plans must outlive the timeline. */
struct timeline *timeline_new(const struct scene *scene, const struct budget *b,
                              struct engine_plans *plans);

/* timeline_new whose engines run only the policies of the mask SHOWN
 * (ENGINE_POLICY bits; --policies) and those the screen always shows, H2O
 * and the full cache (report_policies_run): a policy left out holds
 * nothing at any step, as in engine_new_only. */
struct timeline *timeline_new_only(const struct scene *scene, const struct budget *b,
                                   struct engine_plans *plans, unsigned shown);

/* The bytes a timeline of SCENE with budget B comes to hold at most, its
 * builder's engine included, told before any of it is allocated; _only:
 * timeline_new_only's. */
double timeline_predict_memory(const struct scene *scene, const struct budget *b);
double timeline_predict_memory_only(const struct scene *scene, const struct budget *b,
                                    unsigned shown);
void timeline_free(struct timeline *tl);

/*
 * The same timeline, built by a thread of its own while this one goes on:
 * on a long scene the full cache makes the build O(n^2 * dim) (tens of
 * seconds at 100,000 tokens), while the first steps are there at once.
 * Steps 1 .. timeline_built() are final and may be read as usual, with
 * every step argument at most timeline_built(); whole-timeline answers
 * (timeline_eviction_count, timeline_evicted_at) are as of that step.
 * timeline_building is true until the build ends, timeline_failed when it
 * ended out of memory (the steps built stay good); timeline_free stops a
 * build first. NULL when out of memory at the start. A timeline from
 * timeline_new is built already. Its engines make their own plans.
 */
struct timeline *timeline_start(const struct scene *scene, const struct budget *b);
/*
 * Many timelines (one per head of a scene) built in the background by a
 * bounded pool of threads, one per core, instead of a thread (and the
 * engine's helper) per timeline: timeline FIRST is built first, then
 * the others in order, each by one thread (or, for a pool of one
 * timeline, by one thread and its engine's helper). Until a thread takes a
 * timeline up it is building with nothing built. timeline_pool_prefer
 * makes timeline I the next one taken up, if it has not been. Stopping the
 * pool calls every build off (each stops within a tile of keys) and joins
 * the threads; timeline_pool_free stops it and frees every timeline.
 * Their engines follow PLANS, as timeline_new's. NULL when out of memory.
 */
struct timeline_pool;
struct timeline_pool *timeline_pool_start(const struct scene *scenes, int count,
                                          const struct budget *b, struct engine_plans *plans,
                                          int first);
/* timeline_pool_start of timelines of timeline_new_only (SHOWN). */
struct timeline_pool *timeline_pool_start_only(const struct scene *scenes, int count,
                                               const struct budget *b, struct engine_plans *plans,
                                               int first, unsigned shown);
struct timeline *timeline_pool_get(const struct timeline_pool *pool, int i);
void timeline_pool_prefer(struct timeline_pool *pool, int i);
void timeline_pool_free(struct timeline_pool *pool);

int timeline_built(const struct timeline *tl);
bool timeline_building(const struct timeline *tl);
bool timeline_failed(const struct timeline *tl);

const struct scene *timeline_scene(const struct timeline *tl);
/* The budget TL was built with, as the user chose it. */
const struct budget *timeline_budget(const struct timeline *tl);
int timeline_steps(const struct timeline *tl); /* n */

/* Summary of step t, 1 <= t <= n. */
const struct step_summary *timeline_summary(const struct timeline *tl, int t);

/* Evictions of policy P in the order they happened (those built). */
int timeline_eviction_count(const struct timeline *tl, enum policy_id p);
const struct eviction *timeline_eviction(const struct timeline *tl, enum policy_id p, int i);
/* How many evictions policy P made at steps 1..t. */
int timeline_evictions_until(const struct timeline *tl, enum policy_id p, int t);
/* The step at which policy P evicted POS, or 0 when it never does. */
int timeline_evicted_at(const struct timeline *tl, enum policy_id p, int pos);
/* The eviction of POS by policy P if it happened by step t, else NULL. */
const struct eviction *timeline_eviction_of(const struct timeline *tl, enum policy_id p, int pos,
                                            int t);

/*
 * Put the timeline's engine at step t (0..n) and return it. *REC (when not
 * NULL) is set to the record of step t, or NULL at step 0. The engine and
 * the record stay valid until the next seek.
 *
 * The engine holds every cache, the full one included: its t scores at
 * step t cost a replay of the full cache from its last kept scores, which
 * on a long scene is O(interval * t * dim) (about a second at 100,000
 * tokens). Screens should use timeline_seek_lite and timeline_full_scores.
 */
const struct engine *timeline_seek(struct timeline *tl, int t, const struct step_record **rec);

/*
 * timeline_seek for everything but the full cache, in O(interval * B * dim)
 * whatever n is (0.05 ms at B = 128, about 1 ms at B = 1024). The engine it
 * returns (its own, not timeline_seek's) holds every cache that evicts,
 * bit-identical to timeline_seek's; its full cache is empty
 * (engine_len(e, POLICY_FULL) == 0). In the record, every cache's figures
 * (m) are the timeline's, and the full cache's entry has only them and its
 * max and sum: n_attended 0, no weights, no scores, no output. Read the
 * full cache's weights with timeline_weight and its scores with
 * timeline_full_scores. Valid until the next timeline_seek_lite.
 */
const struct engine *timeline_seek_lite(struct timeline *tl, int t, const struct step_record **rec);

/*
 * The full cache's scores after step t (0..n) at the COUNT positions POS
 * (each >= 0), into OUT: exactly engine_scores(e, POLICY_FULL)[pos[i]] of
 * an engine at step t, or 0 for a position that has not arrived (>= t).
 * Recomputed from the last kept scores before t and the stored softmax
 * normalisers, O(interval * dim) per position. Returns -1 when out of
 * memory (OUT untouched), else 0.
 */
int timeline_full_scores(const struct timeline *tl, int t, const int *pos, int count, double *out);
/* One position's, the same number, without allocating. */
double timeline_full_score(const struct timeline *tl, int t, int pos);

/* Bytes the timeline holds (summaries, evictions, snapshots, kept scores
 * and its engines), to compare with the scene's own. */
size_t timeline_memory(const struct timeline *tl);

/*
 * The attention weight that step s (1..n) of policy P gave position j,
 * recomputed from the stored normalisers exactly as the engine computed
 * it; -1 when P's cache did not hold j at step s (not yet arrived, or
 * evicted).
 */
double timeline_weight(const struct timeline *tl, enum policy_id p, int s, int j);

/* Where position POS sat in policy P's cache after step t. */
enum region {
	REGION_NONE,    /* not arrived yet at step t */
	REGION_OLD,     /* kept, in the policy's first region (heavy, sinks...) */
	REGION_RECENT,  /* kept, in its second region (recent, window) */
	REGION_EVICTED, /* evicted at or before step t */
};
enum region timeline_region(const struct timeline *tl, enum policy_id p, int t, int pos);

#endif
