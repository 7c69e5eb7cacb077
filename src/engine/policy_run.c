/*
 * policy_run: the one driver of the rules (policy.h). Whether a step
 * compresses, the rule's call and the value of its cut-off are decided
 * here for every cache that evicts: the engine's (engine_cache.c), a
 * layer's plan (plan.c) and the model's real drop (timeline's drop.c).
 */
#include <string.h>

#include "h2o/policy.h"
#include "policy_rule.h"

int policy_run_window(enum policy_id id, const struct policy_budget *b, int step)
{
	const struct policy *pol = policies[id];
	if (pol->observe_window <= 0 || b->prompt < 1 || step != b->prompt)
		return 0;
	return policy_snap_window(pol, b);
}

int policy_run(enum policy_id id, const struct policy_budget *b, int step,
               const struct policy_cache *c, unsigned char *gone, double *value)
{
	const struct policy *pol = policies[id];
	const int rows = pol->per_kv_head && c->kv_heads > 1 ? c->kv_heads : 1;
	memset(gone, 0, (size_t)rows * (size_t)c->len);
	*value = 0.0;
	if (!policy_compresses(b, step))
		return -1;
	/* The run's pooling reaches the rule with its cache. */
	struct policy_cache with = *c;
	with.kernel = b->set.p[id].kernel;
	with.pool = b->set.p[id].pool;
	with.alloc = b->set.p[id].alloc;
	int cut = -1;
	pol->rule->evict(b, &with, gone, &cut);
	if (cut < 0)
		return -1;
	if (pol->by_key_norm && c->key_norm)
		*value = c->key_norm[cut];
	else if (pol->ranks_own && c->rank)
		*value = c->rank[cut];
	else if (pol->by_weight && c->w)
		*value = c->w[cut];
	else if (c->score)
		*value = c->score[cut];
	return cut;
}
