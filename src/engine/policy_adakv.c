/*
 * policy_adakv: AdaKV (Feng et al., "Ada-KV: Optimizing KV Cache Eviction
 * by Adaptive Budget Allocation for Efficient LLM Inference", arXiv
 * 2407.11550), as kvpress' AdaKVPress runs it over SnapKVPress
 * (kvpress/presses/adakv_press.py, snapkv_press.py): Ada-SnapKV, the form
 * the paper evaluates. At the prompt's end every key/value head of a layer
 * scores its positions as SnapKV does (the last 64 prompt queries, pooled,
 * averaged over its group); each head keeps its window and the best
 * int(0.2 B) of its scores (the safeguard); then the lowest scores of all
 * the layer's heads go together until the layer holds B per head: a head
 * whose scores stand out keeps more than B, the others fewer
 * (policy_ada_select). During decoding every new token stays, as in
 * SnapKV. With one key/value head per layer it is SnapKV.
 *
 * With the setting adakv.alloc=authors the budget is split as the
 * authors' code does (FFY0/AdaKV, adaptive_snapkv/monkeypatch/
 * snapkv_utils.py, AdaptiveSnapKVCluster.update_kv_gqa, floor_alpha 0.2):
 * each head keeps its window, a floor of int(0.2 (B - W)) and 0.8 of its
 * count among the layer's G (B - W) best scores (policy_ada_select).
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdio.h>

extern const struct policy policy_adakv;

/* The window as the regions count it: no larger than the budget. */
static int ada_window(const struct policy_budget *b)
{
	const int w = policy_snap_window(&policy_adakv, b), budget = b->heavy + b->recent;
	return w < budget ? w : budget;
}

static void adakv_rule(const struct policy_budget *b, const struct policy_cache *c,
                       unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	/* The authors' split compresses a prompt of exactly B too: its shares
	 * round 0.8 of each head's count down with the floor. */
	const int budget = b->heavy + b->recent;
	const bool authors = b->set.p[POLICY_ADAKV].alloc == POLICY_ALLOC_AUTHORS;
	if (c->observed && c->order && (c->len > budget || (authors && c->len == budget)))
		*cutoff = policy_ada_select(c, budget, gone);
}

/* What one head can hold. Before the window, at the prompt's end: the
 * layer keeps G (B - W) there, and every other head at least its window
 * and safeguard, max(W, int(0.2 B)) in all, so one head takes at most
 * G B - (G - 1) max(W, int(0.2 B)) - W of the P - W the prompt has there
 * (all of them when the budget does not say G). After it: the window and
 * every token after the prompt. */
static int adakv_region_budget(const struct policy_budget *b, enum policy_region r)
{
	const int w = ada_window(b), budget = b->heavy + b->recent;
	const int before = b->prompt - w; /* before the window */
	/* A budget within the window keeps each head's B newest. */
	int selected = budget < b->prompt && budget <= w ? 0 : before;
	const bool authors = b->set.p[POLICY_ADAKV].alloc == POLICY_ALLOC_AUTHORS;
	if (b->kv_heads >= 1 && budget < b->prompt && budget > w && authors) {
		/* FFY0/AdaKV: a head wins at most all the layer's best. */
		const int won =
		        b->kv_heads * (budget - w) < before ? b->kv_heads * (budget - w) : before;
		const int most = policy_ada_share(won, budget, w);
		selected = most < before ? most : before;
	} else if (b->kv_heads >= 1 && budget < b->prompt && budget > w) {
		const int safe = policy_ada_safe(budget), least = safe > w ? safe : w;
		const int most = b->kv_heads * budget - (b->kv_heads - 1) * least - w;
		selected = most < before ? most : before;
	}
	const int grown = b->n > b->prompt ? b->n - b->prompt : 0;
	return r == POLICY_REGION_OLD ? selected : w + grown;
}

static enum policy_region adakv_region(const struct policy_budget *b, int t, int pos)
{
	(void)t;
	return pos < b->prompt - ada_window(b) ? POLICY_REGION_OLD : POLICY_REGION_RECENT;
}

/* Below the layer's cut-off: the lowest score kept by any key/value head
 * of the layer among those that competed (not a window, not a head's
 * safeguard). */
static void adakv_words(const struct policy_budget *b, const struct policy_loss *loss,
                        enum policy_voice voice, struct policy_words *words)
{
	if (loss->cutoff_pos < 0) {
		policy_snap_words(b, loss, voice, words);
		return;
	}
	words->cutoff_pos = loss->cutoff_pos;
	if (voice == POLICY_VOICE_BRIEF) {
		snprintf(words->before, sizeof words->before, "< layer %.2g ", loss->cutoff_value);
		return;
	}
	snprintf(words->before, sizeof words->before,
	         "pooled below the layer's cut-off %.2g, the lowest any of its heads kept (",
	         loss->cutoff_value);
	snprintf(words->after, sizeof words->after, ")");
}

static const struct policy_rule rule = {.evict = adakv_rule};

const struct policy policy_adakv = {
        .name = "adakv",
        .title = "ADAKV",
        .about = "SnapKV's scores at the prompt's end, one budget shared by a layer's heads "
                 "(each keeps at least a fifth of B); then every new token",
        .region_name = {"WON IN THE LAYER", "WINDOW + NEW"},
        .region_budget = adakv_region_budget,
        .rule = &rule,
        .region = adakv_region,
        .observe_window = 64,
        .ranks_own = true,
        .grows = true,
        .per_kv_head = true,
        .word_loss = adakv_words,
        .matched_form = "adakv-win",
};
