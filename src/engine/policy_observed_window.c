/*
 * policy_observed_window: ObservedAttention's matched form. At the prompt's
 * end ObservedAttention's choice (policy_observed.c: the B largest mean
 * attentions, each position's column sum over the queries that saw it);
 * while decoding the same rule at every compressing step over the queries
 * so far (t + 1 - pos of them after step t), so the cache holds B. kvpress
 * compresses the prompt only; this is the bounded form, the press' score
 * carried on by kvpress' DecodingPress, for comparing at the same memory.
 * ObservedAttention has no window to slide, so it cannot hold its prompt
 * choice for good as snapkv-win does (policy_hold): every new token would
 * go at once.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdio.h>

static void observed_window_rule(const struct policy_budget *b, const struct policy_cache *c,
                                 unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int budget = b->heavy + b->recent;
	if (c->len <= budget)
		return;
	*cutoff = policy_observed_select(c, budget, c->pos[c->len - 1] + 1, gone);
}

static int observed_window_region_budget(const struct policy_budget *b, enum policy_region r)
{
	return r == POLICY_REGION_OLD ? b->heavy + b->recent : 0;
}

static enum policy_region observed_window_region(const struct policy_budget *b, int t, int pos)
{
	(void)b;
	(void)t;
	(void)pos;
	return POLICY_REGION_OLD;
}

static void observed_window_word_loss(const struct policy_budget *b, const struct policy_loss *loss,
                                      enum policy_voice voice, struct policy_words *words)
{
	(void)b;
	policy_cutoff_words(loss->cutoff_pos, loss->cutoff_value, voice, "mean <",
	                    "its mean attention over the queries that saw it is below the cut-off,",
	                    words);
}

static const struct policy_rule rule = {.evict = observed_window_rule};

const struct policy policy_observed_window = {
        .name = "observed-win",
        .title = "OBSERVED + HELD",
        .about = "keeps the B largest mean attentions (column sums over the queries that saw "
                 "them) at the prompt's end and at every step after it",
        .region_name = {"KEPT BY MEAN", NULL},
        .region_budget = observed_window_region_budget,
        .rule = &rule,
        .region = observed_window_region,
        .ranks_own = true,
        .word_loss = observed_window_word_loss,
};
