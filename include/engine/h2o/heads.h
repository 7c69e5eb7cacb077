/*
 * heads: a scene with several attention heads, seen one head at a time.
 *
 * H2O evicts per head: every head keeps its own scores and its own heavy
 * hitters (the authors' implementation keeps one score row per head). A
 * scene with H heads stores q, k, v (n x dim each) and attention rows head
 * after head, so one head's data is a contiguous block; heads_view gives a
 * one-head scene whose arrays point into that block. Everything downstream
 * (engine, timeline, trace of one head) works on such a view unchanged.
 */
#ifndef H2O_HEADS_H
#define H2O_HEADS_H

#include <stdbool.h>

#include "h2o/engine.h"
#include "h2o/scene.h"

/* The largest number of heads a scene may have. */
#define HEADS_MAX SCENE_MAX_HEADS

/* How many heads SCENE has (at least 1). */
int heads_count(const struct scene *scene);

/* Fill *VIEW with head H of SCENE (0 <= h < heads_count): the same scene
 * with one head, its arrays pointing into SCENE's. VIEW must not be freed
 * with scene_free, and must not outlive SCENE. */
void heads_view(const struct scene *scene, int h, struct scene *view);

/* The name of head H's character ("local", "sink", "topic": generated
 * scenes name their heads, others may give "head_names"), or "". */
const char *heads_name(const struct scene *scene, int h);

/*
 * Every head of a scene stepped together: one engine per head, in lockstep,
 * and the figures of a step over all heads (spec: KV numbers summed over
 * heads, output error and cosine on the heads' outputs concatenated,
 * attention recall averaged over heads).
 */
struct heads_run {
	int count;
	struct scene views[HEADS_MAX];
	struct engine *e[HEADS_MAX];
	struct step_record rec[HEADS_MAX]; /* of the last step */
};

/* Returns -1 when out of memory (nothing to free then). */
int heads_run_init(struct heads_run *run, const struct scene *scene, const struct policy_budget *b);
void heads_run_done(struct heads_run *run);
/* Step every head; false when the scene is done. */
bool heads_run_step(struct heads_run *run);
/* Policy P's figures over all heads at the last step. */
void heads_run_total(const struct heads_run *run, enum policy_id p, struct step_metrics *total);

#endif
