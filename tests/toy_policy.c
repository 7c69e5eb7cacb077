/*
 * toy_policy: a policy of the test build only (H2O_TEST_TOY_POLICY,
 * tests/meson.build), written as a new policy is written (docs/policies.md,
 * "Adding a policy"), to prove that this file and its line in POLICIES are
 * all it takes. It keeps both ends of the text: its first `heavy` tokens
 * and its `recent` newest.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdio.h>

static void toy_rule(const struct policy_budget *b, const struct policy_cache *c,
                     unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	if (c->len <= b->heavy + b->recent)
		return;
	/* The first positions lead the cache, the newest close it. */
	int first = 0;
	while (first < c->len && c->pos[first] < b->heavy)
		first++;
	for (int i = first; i < c->len - b->recent; i++)
		gone[i] = 1;
}

static enum policy_region toy_region(const struct policy_budget *b, int t, int pos)
{
	(void)t;
	return pos < b->heavy ? POLICY_REGION_OLD : POLICY_REGION_RECENT;
}

static int toy_region_budget(const struct policy_budget *b, enum policy_region r)
{
	return r == POLICY_REGION_OLD ? b->heavy : b->recent;
}

static void toy_word_loss(const struct policy_budget *b, const struct policy_loss *loss,
                          enum policy_voice voice, struct policy_words *words)
{
	(void)loss;
	if (voice == POLICY_VOICE_BRIEF)
		snprintf(words->before, sizeof words->before, "in the middle");
	else
		snprintf(words->before, sizeof words->before,
		         "only the first %d and the newest %d tokens stay", b->heavy, b->recent);
}

static const struct policy_rule rule = {.evict = toy_rule};

const struct policy policy_toy = {
        .name = "toy",
        .title = "TOY ENDS",
        .about = "keeps the heavy first tokens and the recent newest (a test build's toy)",
        .region_name = {"FIRST", "NEWEST"},
        .region_budget = toy_region_budget,
        .rule = &rule,
        .region = toy_region,
        .word_loss = toy_word_loss,
};
