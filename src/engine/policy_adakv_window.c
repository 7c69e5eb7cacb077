/*
 * policy_adakv_window: AdaKV's matched form. At the prompt's end AdaKV's
 * choice (policy_adakv.c: kvpress' AdaKVPress over SnapKVPress, one budget
 * of G x B for the layer's G key/value heads, each head's share its own);
 * while decoding each key/value head holds the share it had at the
 * prompt's end (policy_hold): the positions it selected before the window
 * stay for good, and of the rest the newest, so the layer holds G x B
 * together at every step. kvpress' DecodingPress(AdaKVPress(...)) splits
 * the layer's budget again at every compression instead; docs/policies.md
 * ("adakv-win") says how the two differ. With one key/value head per layer
 * it is snapkv-win.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdio.h>

extern const struct policy policy_adakv;
extern const struct policy policy_adakv_window;

/* The window as the regions count it: no larger than the budget. */
static int adaw_window(const struct policy_budget *b)
{
	const int w = policy_snap_window(&policy_adakv_window, b), budget = b->heavy + b->recent;
	return w < budget ? w : budget;
}

/* What C's key/value head holds while decoding: B when the prompt's end
 * cut nothing (a prompt of at most B) or kept each head's B newest (B
 * within the window); else its share, the positions it selected before
 * the window (which stay for good) and the window's W. */
static int adaw_share(const struct policy_budget *b, const struct policy_cache *c)
{
	const int budget = b->heavy + b->recent, w = adaw_window(b), before = b->prompt - w;
	if (b->prompt <= budget || budget <= w)
		return budget;
	int selected = 0;
	while (selected < c->len && c->pos[selected] < before)
		selected++;
	return selected + w;
}

static void adakv_window_rule(const struct policy_budget *b, const struct policy_cache *c,
                              unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int budget = b->heavy + b->recent;
	if (c->observed) {
		/* The prompt's end: AdaKV's split (kvpress', the only one
		 * this form takes). */
		if (c->order && c->len > budget)
			*cutoff = policy_ada_select(c, budget, gone);
		return;
	}
	/* One key/value head: its selected lead the cache; of the rest the
	 * newest stay, its share in all. */
	policy_hold(c, adaw_share(b, c), b->prompt - adaw_window(b), gone);
}

/* The head that keeps the most: AdaKV's bound before the window (with
 * this form's window), and its window, or the newest that fill B when the
 * prompt's end cut nothing. */
static int adakv_window_region_budget(const struct policy_budget *b, enum policy_region r)
{
	struct policy_budget as_ada = *b;
	as_ada.set.p[POLICY_ADAKV] = b->set.p[POLICY_ADAKV_WINDOW];
	const int selected = policy_adakv.region_budget(&as_ada, POLICY_REGION_OLD);
	const int budget = b->heavy + b->recent, w = adaw_window(b);
	if (r == POLICY_REGION_OLD)
		return selected;
	return b->prompt <= budget ? budget - selected : w;
}

static enum policy_region adakv_window_region(const struct policy_budget *b, int t, int pos)
{
	(void)t;
	return pos < b->prompt - adaw_window(b) ? POLICY_REGION_OLD : POLICY_REGION_RECENT;
}

static void adakv_window_words(const struct policy_budget *b, const struct policy_loss *loss,
                               enum policy_voice voice, struct policy_words *words)
{
	if (loss->cutoff_pos >= 0 || voice == POLICY_VOICE_BRIEF)
		policy_adakv.word_loss(b, loss, voice, words);
	else
		snprintf(words->before, sizeof words->before,
		         "only the selected and the newest stay, the head's share of the layer's "
		         "budget in all");
}

static const struct policy_rule rule = {.evict = adakv_window_rule};

const struct policy policy_adakv_window = {
        .name = "adakv-win",
        .title = "ADAKV + WINDOW",
        .about = "AdaKV's choice, then each kv head holds the share it won",
        .region_name = {"WON IN THE LAYER", "WINDOW"},
        .region_budget = adakv_window_region_budget,
        .rule = &rule,
        .region = adakv_window_region,
        .observe_window = 64,
        .ranks_own = true,
        .per_kv_head = true,
        .word_loss = adakv_window_words,
};
