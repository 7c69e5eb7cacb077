/*
 * plan: what a layer-wide policy decides for every head of a layer.
 *
 * Official TOVA (design §2) keeps, in every key/value head's cache of a
 * layer, the same positions: those with the highest weight at this step
 * averaged over all the layer's query heads. One head's engine cannot see
 * the others', so the decisions of a layer are computed once, for the
 * whole layer, into a plan: at every step the positions it evicts, with
 * their mean weights and the cut-off. Each head's engine then follows the
 * plan for that policy (computing its own weights, scores and outputs as
 * for any cache) instead of applying the rule to its own head. A plan
 * depends on the scene and the budget only; an engine_plans holds the
 * plans of one scene and budget for every layer, each computed the first
 * time an engine asks for it (by whichever thread asks first; the others
 * wait), and is shared by every head's engine, passed to each as it is
 * made (engine_new_rows).
 *
 * AdaKV (policy.per_kv_head) decides once, at the prompt's end, for all
 * the layer's key/value heads at once, each keeping positions of its own:
 * its plan holds a part per kv head, and each head's engine follows its
 * own kv head's part.
 */
#ifndef H2O_PLAN_H
#define H2O_PLAN_H

#include <stdbool.h>

#include "h2o/budget.h"
#include "h2o/policy.h"

struct scene;
struct engine_plans;
struct layer_plan;

/* Plans for the loaded scene SCENE (not a head view) under budget B, none
 * computed yet. NULL when out of memory. SCENE must outlive them, and the
 * plans every engine that uses them. */
struct engine_plans *engine_plans_new(const struct scene *scene, const struct budget *b);
void engine_plans_free(struct engine_plans *plans);

/* Whether policy P of SCENE's engines follows a plan: P decides for a whole
 * layer (policy.layer_wide) and the layers have more than one query head,
 * or for all of a layer's kv heads at once (policy.per_kv_head) and the
 * layers have more than one kv head. */
bool engine_plan_needed(const struct scene *scene, enum policy_id p);

/* Layer LAYER's plan for policy P, computed now if no engine asked before.
 * NULL when out of memory. */
const struct layer_plan *engine_plan_get(struct engine_plans *plans, int layer, enum policy_id p);

#endif
