/*
 * policy_snapkv: SnapKV (Li et al., "SnapKV: LLM Knows What You Are Looking
 * for Before Generation", arXiv 2404.14469), as kvpress' SnapKVPress runs
 * it (kvpress/presses/snapkv_press.py). At the prompt's end each older
 * position is scored by the attention the last W prompt queries give it
 * (the observation window: 64, capped by the prompt), averaged over those
 * queries, smoothed by an average pool of kernel 5 and averaged over the
 * query heads of its key/value group (policy_snap_select); the window stays
 * with the B - W best scored before it. During decoding it keeps every new
 * token, as the paper and kvpress do: the cache grows by one a step.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

extern const struct policy policy_snapkv;

/* The window as the regions count it: no larger than the budget. */
static int snap_window(const struct policy_budget *b)
{
	const int w = policy_snap_window(&policy_snapkv, b), budget = b->heavy + b->recent;
	return w < budget ? w : budget;
}

static void snapkv_rule(const struct policy_budget *b, const struct policy_cache *c,
                        unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	if (c->observed && c->len > b->heavy + b->recent)
		*cutoff = policy_snap_select(c, b->heavy + b->recent, gone);
}

/* The selected are the positions before the window that stay at the
 * prompt's end: B - W of them, or as many as the prompt has; the rest of B,
 * and every token after the prompt, is the window's: B + n - P in all when
 * the prompt is longer than B, else the whole scene. */
static int snapkv_region_budget(const struct policy_budget *b, enum policy_region r)
{
	const int w = snap_window(b), budget = b->heavy + b->recent;
	const int selected = budget < b->prompt ? budget - w : b->prompt - w;
	const int full = budget > b->prompt ? budget : b->prompt; /* held at P */
	const int grown = b->n > full ? b->n - full : 0;
	return r == POLICY_REGION_OLD ? selected : budget - selected + grown;
}

static enum policy_region snapkv_region(const struct policy_budget *b, int t, int pos)
{
	(void)t;
	return pos < b->prompt - snap_window(b) ? POLICY_REGION_OLD : POLICY_REGION_RECENT;
}

static const struct policy_rule rule = {.evict = snapkv_rule};

const struct policy policy_snapkv = {
        .name = "snapkv",
        .title = "SNAPKV",
        .about = "at the prompt's end keeps what its last 64 queries attend (pooled) and "
                 "that window; then every new token",
        .region_name = {"SELECTED", "WINDOW + NEW"},
        .region_budget = snapkv_region_budget,
        .rule = &rule,
        .region = snapkv_region,
        .observe_window = 64,
        .ranks_own = true,
        .grows = true,
        .word_loss = policy_snap_words,
        .matched_form = "snapkv-win",
};
