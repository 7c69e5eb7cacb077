/*
 * policy_full: the full cache. It never evicts, so its attention is exact
 * and every other policy is measured against it.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

static void full_rule(const struct policy_budget *b, const struct policy_cache *c,
                      unsigned char *gone, int *cutoff)
{
	(void)b, (void)c, (void)gone;
	*cutoff = -1;
}

static int full_region_budget(const struct policy_budget *b, enum policy_region r)
{
	(void)b;
	return r == POLICY_REGION_OLD ? -1 : 0;
}

static enum policy_region full_region(const struct policy_budget *b, int t, int pos)
{
	(void)b, (void)t, (void)pos;
	return POLICY_REGION_OLD;
}

static const struct policy_rule rule = {.evict = full_rule};

const struct policy policy_full = {
        .name = "full",
        .title = "FULL CACHE",
        .about = "keeps every token: exact attention, memory grows with the text",
        .region_name = {"CACHE", NULL},
        .region_budget = full_region_budget,
        .rule = &rule,
        .region = full_region,
};
