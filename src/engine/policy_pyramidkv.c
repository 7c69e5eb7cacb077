/*
 * policy_pyramidkv: PyramidKV (Cai et al., "PyramidKV: Dynamic KV Cache
 * Compression based on Pyramidal Information Funneling", arXiv 2406.02069),
 * as KVCache-Factory's PyramidKVCluster runs it
 * (pyramidkv/pyramidkv_utils.py): SnapKV's choice at the prompt's end
 * (policy_snap_select: the last 64 prompt queries' attention, pooled with
 * kernel 5, averaged over the key/value group), each layer down to its own
 * budget, which falls linearly from the lowest layer to the highest with
 * the same total (policy_pyramid_budget); then every new token stays.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

/* The window as the regions count it: no larger than the budget. */
static int pyr_window(const struct policy_budget *b)
{
	const int w = policy_snap_window(policies[POLICY_PYRAMIDKV], b);
	const int budget = b->heavy + b->recent;
	return w < budget ? w : budget;
}

static void pyramidkv_rule(const struct policy_budget *b, const struct policy_cache *c,
                           unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int keep = policy_pyramid_budget(b, c->layer);
	if (c->observed && c->len > keep)
		*cutoff = policy_snap_select(c, keep, gone);
}

/* The lowest layer keeps the most: its selected (before the window) are
 * the old region's bound; the window and every token after the prompt
 * the recent one's. */
static int pyramidkv_region_budget(const struct policy_budget *b, enum policy_region r)
{
	const int w = pyr_window(b), budget = b->heavy + b->recent;
	const int held = budget < b->prompt ? policy_pyramid_budget(b, 0) : b->prompt;
	const int grown = b->n > b->prompt ? b->n - b->prompt : 0;
	return r == POLICY_REGION_OLD ? held - w : w + grown;
}

static enum policy_region pyramidkv_region(const struct policy_budget *b, int t, int pos)
{
	(void)t;
	return pos < b->prompt - pyr_window(b) ? POLICY_REGION_OLD : POLICY_REGION_RECENT;
}

static const struct policy_rule rule = {.evict = pyramidkv_rule};

const struct policy policy_pyramidkv = {
        .name = "pyramidkv",
        .title = "PYRAMIDKV",
        .about = "SnapKV's choice, each layer to its own budget, falling from the lowest "
                 "layer to the highest; then every new token",
        .region_name = {"SELECTED", "WINDOW + NEW"},
        .region_budget = pyramidkv_region_budget,
        .rule = &rule,
        .region = pyramidkv_region,
        .observe_window = 64,
        .ranks_own = true,
        .grows = true,
        .word_loss = policy_snap_words,
        .matched_form = "pyramidkv-win",
};
