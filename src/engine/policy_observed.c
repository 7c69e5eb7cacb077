/*
 * policy_observed: kvpress' ObservedAttentionPress
 * (kvpress/presses/observed_attention_press.py), related to H2O (Zhang et
 * al., arXiv 2306.14048). At the prompt's end a position's score is the
 * attention the prompt's queries gave it, summed over them (the column sum
 * of the prompt's causal attention, averaged over the key/value group),
 * divided by the number of queries that saw it (P - pos); the B highest
 * stay, with no recent window, a tie keeping the lower position. During
 * decoding it keeps every new token, as kvpress does.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdio.h>

static void observed_rule(const struct policy_budget *b, const struct policy_cache *c,
                          unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int budget = b->heavy + b->recent, p = b->prompt;
	/* Only at the prompt's end: the step that appended position P - 1. */
	if (p < 1 || c->len <= budget || c->pos[c->len - 1] != p - 1)
		return;
	*cutoff = policy_observed_select(c, budget, p, gone);
}

/* The prompt's kept (at most B of it), and every token after it. */
static int observed_region_budget(const struct policy_budget *b, enum policy_region r)
{
	const int budget = b->heavy + b->recent;
	const int kept = budget < b->prompt ? budget : b->prompt;
	return r == POLICY_REGION_OLD ? kept : (b->n > b->prompt ? b->n - b->prompt : 0);
}

static enum policy_region observed_region(const struct policy_budget *b, int t, int pos)
{
	(void)t;
	return pos < b->prompt ? POLICY_REGION_OLD : POLICY_REGION_RECENT;
}

static void observed_word_loss(const struct policy_budget *b, const struct policy_loss *loss,
                               enum policy_voice voice, struct policy_words *words)
{
	(void)b;
	policy_cutoff_words(loss->cutoff_pos, loss->cutoff_value, voice, "mean <",
	                    "its mean attention over the prompt is below the cut-off,", words);
}

static const struct policy_rule rule = {.evict = observed_rule};

const struct policy policy_observed = {
        .name = "observed",
        .title = "OBSERVED ATTENTION",
        .about = "at the prompt's end keeps the B largest mean attentions (column sums over "
                 "the queries that saw them); then every new token",
        .region_name = {"PROMPT KEPT", "NEW"},
        .region_budget = observed_region_budget,
        .rule = &rule,
        .region = observed_region,
        .ranks_own = true,
        .grows = true,
        .word_loss = observed_word_loss,
        .matched_form = "observed-win",
};
