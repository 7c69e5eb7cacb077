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

/* How many query heads SCENE has in all: layers x heads (at least 1).
 * heads_view, heads_name and a heads_run number them layer after layer. */
int heads_count(const struct scene *scene);
/* Query heads per layer, key/value heads per layer, and query heads per
 * key/value head (the group), each at least 1. */
int heads_per_layer(const struct scene *scene);
int heads_kv_count(const struct scene *scene);
int heads_group(const struct scene *scene);
/* The query heads of SCENE that share one cache of policy P run with the
 * settings SET: heads_group's, or 1 when P keeps a cache per query head
 * (pyramidkv.granularity=query_head, each cache then a copy of its key/
 * value head's keys and values, as KVCache-Factory's repeat_kv makes). */
int heads_cache_group(const struct scene *scene, const struct policy_settings *set,
                      enum policy_id p);

/* Fill *VIEW with query head I of SCENE (0 <= i < heads_count; layer i /
 * heads_per_layer): a one-head, one-layer scene whose q (and attn) are
 * that head's, whose k and v are its key/value head's, and whose parent,
 * view_layer and view_head say where it sits, so that the engine finds the
 * other heads its policies consult. VIEW must not be freed with scene_free,
 * and must not outlive SCENE. */
void heads_view(const struct scene *scene, int i, struct scene *view);

/* The loaded scene of VIEW: its parent, or itself. */
const struct scene *heads_root(const struct scene *view);

/* The name of query head I's character ("local", "sink", "topic":
 * generated scenes name their heads, others may give "head_names"), or "". */
const char *heads_name(const struct scene *scene, int i);

/*
 * Every query head of a scene stepped together: one engine per head, in
 * lockstep, and the figures of a step over all of them (design §2: tokens
 * and KV numbers summed over every layer and key/value head, output error
 * and cosine on the concatenated outputs of every query head, attention
 * recall averaged over query heads).
 */
struct h2o_pool;

struct heads_run {
	int count;
	struct scene *views;     /* [count] */
	struct engine **e;       /* [count] */
	struct step_record *rec; /* [count], of the last step */
	/* The thread that steps half the heads (the engine stage's helper). */
	struct h2o_pool *h;
	/* The layer-wide plans the engines share. */
	struct engine_plans *plans;
	struct budget b;
};

/* Returns -1 when out of memory (nothing to free then). */
int heads_run_init(struct heads_run *run, const struct scene *scene, const struct budget *b);
/* heads_run_init with engines that run only the policies of the mask
 * POLICIES (engine_new_only); a policy left out has no figures. */
int heads_run_init_only(struct heads_run *run, const struct scene *scene, const struct budget *b,
                        unsigned policies);
/* heads_run_init_only over the query heads FIRST .. FIRST + COUNT - 1 of
 * SCENE only (in the run, head i is the scene's FIRST + i): a report that
 * needs only sums over heads steps them a part at a time (heads_run_add),
 * and holds only that part's engines. */
int heads_run_init_range(struct heads_run *run, const struct scene *scene, const struct budget *b,
                         unsigned policies, int first, int count);
void heads_run_done(struct heads_run *run);
/* Step every head; false when the scene is done. */
bool heads_run_step(struct heads_run *run);
/* Policy P's figures over all heads at the last step. */
void heads_run_total(const struct heads_run *run, enum policy_id p, struct step_metrics *total);
/* The same over the query heads FIRST .. FIRST + COUNT - 1 only (a layer:
 * FIRST = layer * heads_per_layer). */
void heads_run_total_of(const struct heads_run *run, int first, int count, enum policy_id p,
                        struct step_metrics *total);

/* Policy P's figures summed over query heads at one step, head by head in
 * the order they are added: heads added in several runs, in the scene's
 * order, give the very bits heads_run_total gives over all of them. Start
 * from {0}. */
struct heads_sum {
	int heads, tokens, overlap_h2o;
	long kv;
	bool has_out;
	double recall, diff, aa, ff, af;
};
/* Add the query heads FIRST .. FIRST + COUNT - 1 of RUN at its last step. */
void heads_run_add(const struct heads_run *run, int first, int count, enum policy_id p,
                   struct heads_sum *sum);
/* The figures of SUM (heads_run_total's). */
void heads_sum_metrics(const struct heads_sum *sum, struct step_metrics *total);

#endif
