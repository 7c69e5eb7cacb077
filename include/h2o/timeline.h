/*
 * timeline: every step of a scene, reachable in any order.
 *
 * The timeline runs the engine over the whole scene once and keeps what the
 * screen needs at every step: the figures, the evictions, and the softmax
 * normalisers that let any past step's attention weight be recomputed
 * exactly. It also keeps engine snapshots every few steps, so that seeking
 * to step t restores the nearest snapshot at or before t and replays the
 * rest. Because the engine is deterministic, the state reached by seeking
 * back is bit-identical to the state reached by stepping forward: stepping
 * back shows exactly what stepping forward showed.
 */
#ifndef H2O_TIMELINE_H
#define H2O_TIMELINE_H

#include <stdbool.h>

#include "h2o/engine.h"

struct scene;
struct timeline;

/* What the timeline keeps of step t (1..n). */
struct step_summary {
	struct step_metrics m;
	double h_max, h_sum; /* H2O softmax of this step */
	double f_max, f_sum; /* full-cache softmax of this step */
	int cutoff_pos;      /* as in struct step_record */
	double cutoff_score;
	int n_evicted;    /* positions evicted at this step ... */
	int first_evict;  /* ... at timeline_eviction(first_evict + i) */
	int promoted_pos; /* position that left the recent region for the
			     heavy region at this step, or -1 */
};

/* An eviction: which position, at which step, with what score. */
struct eviction {
	int pos;
	int step;
	double score;
	int cutoff_pos; /* the heavy hitter it lost to, -1 if none */
	double cutoff_score;
};

/* Build the timeline of SCENE with the given budgets. NULL when out of
 * memory. The scene must outlive the timeline. */
struct timeline *timeline_new(const struct scene *scene, int heavy, int recent);
void timeline_free(struct timeline *tl);

const struct scene *timeline_scene(const struct timeline *tl);
int timeline_steps(const struct timeline *tl); /* n */
int timeline_heavy(const struct timeline *tl);
int timeline_recent(const struct timeline *tl);

/* Summary of step t, 1 <= t <= n. */
const struct step_summary *timeline_summary(const struct timeline *tl, int t);

/* Evictions in the order they happened. */
int timeline_eviction_count(const struct timeline *tl);
const struct eviction *timeline_eviction(const struct timeline *tl, int i);
/* How many evictions happened at steps 1..t. */
int timeline_evictions_until(const struct timeline *tl, int t);
/* The step that evicted POS, or 0 when it is never evicted. */
int timeline_evicted_at(const struct timeline *tl, int pos);

/*
 * Put the timeline's engine at step t (0..n) and return it. *REC (when not
 * NULL) is set to the record of step t, or NULL at step 0. The engine and
 * the record stay valid until the next seek.
 */
const struct engine *timeline_seek(struct timeline *tl, int t, const struct step_record **rec);

/*
 * The attention weight that step s (1..n) gave position j, recomputed from
 * the stored normalisers exactly as the engine computed it. *WH is the H2O
 * weight, or -1 when H2O did not attend j at step s (not yet arrived, or
 * evicted); *WF is the full-cache weight, or -1 when j > s - 1.
 */
void timeline_weight(const struct timeline *tl, int s, int j, double *wh, double *wf);

/* Where position POS sat in the H2O cache after step t. */
enum region {
	REGION_NONE,    /* not arrived yet at step t */
	REGION_HEAVY,   /* kept, in the heavy region */
	REGION_RECENT,  /* kept, among the recent newest positions */
	REGION_EVICTED, /* evicted at or before step t */
};
enum region timeline_region(const struct timeline *tl, int t, int pos);

#endif
