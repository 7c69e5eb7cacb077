/*
 * policy_tova: TOVA, Token Omission Via Attention (Oren et al.,
 * "Transformers are Multi-State RNNs", arXiv 2401.06104), as its official
 * tova_cache.py runs it: when a layer's cache holds more than B positions,
 * the B with the largest weight at this step averaged over all the layer's
 * query heads stay (this step's weights, not accumulated scores), the same
 * positions in every key/value head; the new token may go too; a tie keeps
 * the lower position.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

static void tova_rule(const struct policy_budget *b, const struct policy_cache *c,
                      unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int budget = b->heavy + b->recent;
	if (c->len <= budget)
		return;
	*cutoff = policy_keep_largest(c, c->len, budget, true, gone);
}

static int tova_region_budget(const struct policy_budget *b, enum policy_region r)
{
	return r == POLICY_REGION_OLD ? b->heavy + b->recent : 0;
}

static enum policy_region tova_region(const struct policy_budget *b, int t, int pos)
{
	(void)b, (void)t, (void)pos;
	return POLICY_REGION_OLD;
}

static const struct policy_rule rule = {.evict = tova_rule};

const struct policy policy_tova = {
        .name = "tova",
        .title = "TOVA",
        .about = "keeps the B tokens with the largest attention at this step",
        .region_name = {"KEPT BY ATTENTION", NULL},
        .region_budget = tova_region_budget,
        .rule = &rule,
        .region = tova_region,
        .by_weight = true,
        .layer_wide = true,
};
