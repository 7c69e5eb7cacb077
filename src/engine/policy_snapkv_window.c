/*
 * policy_snapkv_window: SnapKV's choice at the prompt's end (policy_snapkv.c)
 * holding B after it: the positions it selected before the observation
 * window stay for good, and of the rest (the window and every token since)
 * the newest stay, the oldest going one a step. Neither the paper nor
 * kvpress bounds the cache during decoding; this is the bounded form, for
 * comparing at the same B as the other policies.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdio.h>

extern const struct policy policy_snapkv_window;

/* The window as the regions count it: no larger than the budget. */
static int snap_window(const struct policy_budget *b)
{
	const int w = policy_snap_window(&policy_snapkv_window, b), budget = b->heavy + b->recent;
	return w < budget ? w : budget;
}

static void snapkv_window_rule(const struct policy_budget *b, const struct policy_cache *c,
                               unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int budget = b->heavy + b->recent;
	if (c->len <= budget)
		return;
	if (c->observed) {
		*cutoff = policy_snap_select(c, budget, gone);
		return;
	}
	/* The selected lead the cache; of the rest the newest stay. */
	policy_hold(c, budget, b->prompt - snap_window(b), gone);
}

/* The selected: B - W, or as many positions as the prompt has before the
 * window; the rest of B is the window's. */
static int snapkv_window_region_budget(const struct policy_budget *b, enum policy_region r)
{
	const int w = snap_window(b), budget = b->heavy + b->recent;
	const int selected = budget < b->prompt ? budget - w : b->prompt - w;
	return r == POLICY_REGION_OLD ? selected : budget - selected;
}

static enum policy_region snapkv_window_region(const struct policy_budget *b, int t, int pos)
{
	(void)t;
	return pos < b->prompt - snap_window(b) ? POLICY_REGION_OLD : POLICY_REGION_RECENT;
}

static void snapkv_window_word_loss(const struct policy_budget *b, const struct policy_loss *loss,
                                    enum policy_voice voice, struct policy_words *words)
{
	if (loss->cutoff_pos >= 0 || voice == POLICY_VOICE_BRIEF)
		policy_snap_words(b, loss, voice, words);
	else
		snprintf(words->before, sizeof words->before,
		         "only the selected and the newest stay, %d tokens in all",
		         b->heavy + b->recent);
}

static const struct policy_rule rule = {.evict = snapkv_window_rule};

const struct policy policy_snapkv_window = {
        .name = "snapkv-win",
        .title = "SNAPKV + WINDOW",
        .about = "SnapKV's choice at the prompt's end, then the selected and the newest, B "
                 "in all",
        .region_name = {"SELECTED", "WINDOW"},
        .region_budget = snapkv_window_region_budget,
        .rule = &rule,
        .region = snapkv_window_region,
        .observe_window = 64,
        .ranks_own = true,
        .word_loss = snapkv_window_word_loss,
};
