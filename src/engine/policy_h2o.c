/*
 * policy_h2o: Heavy-Hitter Oracle (Zhang et al., arXiv 2306.14048), spec
 * §2 step 6. The recent newest positions are protected; among the others
 * the heavy largest accumulated scores stay (a tie keeps the lower
 * position); everything else goes.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdio.h>

static void h2o_rule(const struct policy_budget *b, const struct policy_cache *c,
                     unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	if (c->len <= b->heavy + b->recent)
		return;
	*cutoff = policy_keep_largest(c, c->len - b->recent, b->heavy, false, gone);
}

static int h2o_region_budget(const struct policy_budget *b, enum policy_region r)
{
	return r == POLICY_REGION_OLD ? b->heavy : b->recent;
}

static enum policy_region h2o_region(const struct policy_budget *b, int t, int pos)
{
	return pos >= t - b->recent ? POLICY_REGION_RECENT : POLICY_REGION_OLD;
}

/* Without a cut-off H2O keeps no heavy hitter: heavy is 0. */
static void h2o_word_loss(const struct policy_budget *b, const struct policy_loss *loss,
                          enum policy_voice voice, struct policy_words *words)
{
	if (loss->cutoff_pos >= 0)
		policy_word_cutoff(loss, false, voice, words);
	else if (voice == POLICY_VOICE_BRIEF)
		snprintf(words->before, sizeof words->before, "left the window");
	else
		snprintf(words->before, sizeof words->before,
		         "heavy is 0, so only the %d newest tokens stay", b->recent);
}

/* A token is recent for the recent steps after the one it came in; if it
 * is still kept at the next, it is a heavy hitter from then on. A token
 * that was never recent (recent = 0) is not promoted. */
static int h2o_promoted_at(const struct policy_budget *b, int pos)
{
	return b->recent > 0 ? pos + b->recent + 1 : 0;
}

static const struct policy_rule rule = {.evict = h2o_rule};

const struct policy policy_h2o = {
        .name = "h2o",
        .title = "H2O CACHE",
        .about = "keeps the recent newest tokens and the heavy largest accumulated scores",
        .region_name = {"HEAVY", "RECENT"},
        .region_budget = h2o_region_budget,
        .rule = &rule,
        .region = h2o_region,
        .word_loss = h2o_word_loss,
        .promoted_at = h2o_promoted_at,
};
