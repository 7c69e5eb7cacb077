/*
 * policy_h2o: Heavy-Hitter Oracle (Zhang et al., arXiv 2306.14048), spec
 * §2 step 6. The recent newest positions are protected; among the others
 * the heavy largest accumulated scores stay (a tie keeps the lower
 * position); everything else goes.
 */
#include "h2o/policy.h"

static void h2o_evict(const struct policy_budget *b, const struct policy_cache *c,
                      unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	if (c->len <= b->heavy + b->recent)
		return;
	*cutoff = policy_keep_largest(c, c->len - b->recent, b->heavy, false, gone);
}

static enum policy_region h2o_region(const struct policy_budget *b, int t, int pos)
{
	return pos >= t - b->recent ? POLICY_REGION_RECENT : POLICY_REGION_OLD;
}

const struct policy policy_h2o = {
        .name = "h2o",
        .title = "H2O CACHE",
        .about = "keeps the recent newest tokens and the heavy largest accumulated scores",
        .region_name = {"HEAVY", "RECENT"},
        .evict = h2o_evict,
        .region = h2o_region,
};
