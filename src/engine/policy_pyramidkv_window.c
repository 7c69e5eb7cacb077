/*
 * policy_pyramidkv_window: PyramidKV's matched form. At the prompt's end
 * PyramidKV's choice (policy_pyramidkv.c: SnapKV's scores, each layer to
 * its own budget on KVCache-Factory's falling schedule), the layers' excess
 * over L x B trimmed (policy_pyramid_held); while decoding each layer holds
 * that budget (policy_hold): the positions selected before the window stay
 * for good, and of the rest the newest. KVCache-Factory compresses the
 * prompt only; this is the bounded form, kvpress' DecodingPress around the
 * press keeping the budget, for comparing at the same memory.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdio.h>

extern const struct policy policy_pyramidkv_window;

/* The largest of the layers' budgets: the most one cache holds. */
static int top_budget(const struct policy_budget *b)
{
	const int layers = b->layers > 1 ? b->layers : 1;
	int top = 0;
	for (int l = 0; l < layers; l++) {
		const int k = policy_pyramid_held(b, l);
		top = k > top ? k : top;
	}
	return top;
}

/* The window as the regions count it: no larger than BUDGET. */
static int pyrw_window(const struct policy_budget *b, int budget)
{
	const int w = policy_snap_window(&policy_pyramidkv_window, b);
	return w < budget ? w : budget;
}

static void pyramidkv_window_rule(const struct policy_budget *b, const struct policy_cache *c,
                                  unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int keep = policy_pyramid_held(b, c->layer);
	if (c->len <= keep)
		return;
	if (c->observed) {
		*cutoff = policy_snap_select(c, keep, gone);
		return;
	}
	/* The selected lead the cache; of the rest the newest stay. */
	policy_hold(c, keep, b->prompt - pyrw_window(b, keep), gone);
}

/* The layer that keeps the most: its selected (before the window) are the
 * old region's bound, its window the recent one's. */
static int pyramidkv_window_region_budget(const struct policy_budget *b, enum policy_region r)
{
	const int top = top_budget(b), w = pyrw_window(b, b->heavy + b->recent);
	const int selected = top < b->prompt ? top - w : b->prompt - w;
	return r == POLICY_REGION_OLD ? selected : top - selected;
}

static enum policy_region pyramidkv_window_region(const struct policy_budget *b, int t, int pos)
{
	(void)t;
	return pos < b->prompt - pyrw_window(b, b->heavy + b->recent) ? POLICY_REGION_OLD
	                                                              : POLICY_REGION_RECENT;
}

static void pyramidkv_window_word_loss(const struct policy_budget *b,
                                       const struct policy_loss *loss, enum policy_voice voice,
                                       struct policy_words *words)
{
	if (loss->cutoff_pos >= 0 || voice == POLICY_VOICE_BRIEF)
		policy_snap_words(b, loss, voice, words);
	else
		snprintf(words->before, sizeof words->before,
		         "only the selected and the newest stay, the layer's budget in all");
}

static const struct policy_rule rule = {.evict = pyramidkv_window_rule};

const struct policy policy_pyramidkv_window = {
        .name = "pyramidkv-win",
        .title = "PYRAMIDKV + WINDOW",
        .about = "PyramidKV's choice at the prompt's end, then each layer holds its own "
                 "budget: the selected and the newest",
        .region_name = {"SELECTED", "WINDOW"},
        .region_budget = pyramidkv_window_region_budget,
        .rule = &rule,
        .region = pyramidkv_window_region,
        .observe_window = 64,
        .ranks_own = true,
        .word_loss = pyramidkv_window_word_loss,
};
