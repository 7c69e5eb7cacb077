/*
 * policy_window: a sliding window (as in Longformer's local attention, and
 * the baseline of the H2O and StreamingLLM papers): the B newest tokens
 * stay, nothing else.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

static void window_rule(const struct policy_budget *b, const struct policy_cache *c,
                        unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	for (int i = 0; i < c->len - (b->heavy + b->recent); i++)
		gone[i] = 1;
}

static int window_region_budget(const struct policy_budget *b, enum policy_region r)
{
	return r == POLICY_REGION_RECENT ? b->heavy + b->recent : 0;
}

static enum policy_region window_region(const struct policy_budget *b, int t, int pos)
{
	(void)b, (void)t, (void)pos;
	return POLICY_REGION_RECENT;
}

static const struct policy_rule rule = {.evict = window_rule};

const struct policy policy_window = {
        .name = "window",
        .title = "SLIDING WINDOW",
        .about = "keeps the B newest tokens",
        .region_name = {NULL, "WINDOW"},
        .region_budget = window_region_budget,
        .rule = &rule,
        .region = window_region,
};
