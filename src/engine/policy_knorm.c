/*
 * policy_knorm: Key norm (Devoto et al., "A Simple and Effective L2
 * Norm-Based Strategy for KV Cache Compression", arXiv 2406.11430), as
 * kvpress' KnormPress scores it (kvpress/presses/knorm_press.py): a
 * position's score is minus the L2 norm of its key row, so the B keys with
 * the smallest norms stay; no attention is read. h2o-tui applies it at the
 * prompt's end and at every step after (the new token may go); a tie keeps
 * the lower position. An attention scene has no keys: there it keeps the B
 * newest, as a window, and its words say so.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdio.h>

/* The next entry to evict among C's not yet gone: the largest norm, and on
 * a tie the higher position (a later index). */
static int largest_norm(const struct policy_cache *c, const unsigned char *gone)
{
	int best = -1;
	for (int i = 0; i < c->len; i++)
		if (!gone[i] && (best < 0 || c->key_norm[i] >= c->key_norm[best]))
			best = i;
	return best;
}

static void knorm_rule(const struct policy_budget *b, const struct policy_cache *c,
                       unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int budget = b->heavy + b->recent;
	if (c->len <= budget)
		return;
	if (!c->key_norm) {
		for (int i = 0; i < c->len - budget; i++)
			gone[i] = 1;
		return;
	}
	for (int r = c->len - budget; r > 0; r--)
		gone[largest_norm(c, gone)] = 1;
	*cutoff = budget > 0 ? largest_norm(c, gone) : -1;
}

static int knorm_region_budget(const struct policy_budget *b, enum policy_region r)
{
	return r == POLICY_REGION_OLD ? b->heavy + b->recent : 0;
}

static enum policy_region knorm_region(const struct policy_budget *b, int t, int pos)
{
	(void)b, (void)t, (void)pos;
	return POLICY_REGION_OLD;
}

/* The cut-off value is the largest kept key norm; the evicted entry's own
 * norm was larger (or equal, from a higher position). */
static void knorm_word_loss(const struct policy_budget *b, const struct policy_loss *loss,
                            enum policy_voice voice, struct policy_words *words)
{
	if (loss->cutoff_pos >= 0) {
		policy_cutoff_words(loss->cutoff_pos, loss->cutoff_value, voice, "key norm >",
		                    "its key's norm is above the largest kept,", words);
	} else if (voice == POLICY_VOICE_BRIEF) {
		snprintf(words->before, sizeof words->before, "left the window");
	} else {
		snprintf(words->before, sizeof words->before,
		         "no keys in an attention scene: only the %d newest tokens stay",
		         b->heavy + b->recent);
	}
}

static const struct policy_rule rule = {.evict = knorm_rule};

const struct policy policy_knorm = {
        .name = "knorm",
        .title = "KEY NORM",
        .about = "keeps the B tokens whose keys have the smallest L2 norm; reads keys, so "
                 "not run on attention scenes",
        .region_name = {"SMALL KEY NORM", NULL},
        .region_budget = knorm_region_budget,
        .rule = &rule,
        .region = knorm_region,
        .by_key_norm = true,
        .word_loss = knorm_word_loss,
};
