/*
 * policy_streaming: StreamingLLM (Xiao et al., "Efficient Streaming
 * Language Models with Attention Sinks", arXiv 2309.17453). The first S
 * positions of the text (the attention sinks) stay for good, and the B - S
 * newest beside them.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdio.h>

static void streaming_rule(const struct policy_budget *b, const struct policy_cache *c,
                           unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int budget = b->heavy + b->recent;
	if (c->len <= budget)
		return;
	/* Sinks are the lowest positions, so they lead the cache; of the
	 * rest, the newest budget - sinks stay. */
	int sinks = 0;
	while (sinks < c->len && c->pos[sinks] < b->sinks)
		sinks++;
	const int keep_newest = budget - sinks;
	for (int i = sinks; i < c->len - keep_newest; i++)
		gone[i] = 1;
}

static int streaming_region_budget(const struct policy_budget *b, enum policy_region r)
{
	return r == POLICY_REGION_OLD ? b->sinks : b->heavy + b->recent - b->sinks;
}

static void streaming_word_loss(const struct policy_budget *b, const struct policy_loss *loss,
                                enum policy_voice voice, struct policy_words *words)
{
	if (loss->cutoff_pos >= 0)
		policy_word_cutoff(loss, false, voice, words);
	else if (voice == POLICY_VOICE_BRIEF)
		snprintf(words->before, sizeof words->before, "left the window");
	else
		snprintf(words->before, sizeof words->before,
		         "only the sinks (%d) and the %d newest tokens stay", b->sinks,
		         b->heavy + b->recent - b->sinks);
}

static enum policy_region streaming_region(const struct policy_budget *b, int t, int pos)
{
	(void)t;
	return pos < b->sinks ? POLICY_REGION_OLD : POLICY_REGION_RECENT;
}

static const struct policy_rule rule = {.evict = streaming_rule};

const struct policy policy_streaming = {
        .name = "streaming",
        .title = "STREAMINGLLM",
        .about = "keeps the first S tokens (attention sinks) and the B - S newest",
        .region_name = {"SINKS", "RECENT"},
        .region_budget = streaming_region_budget,
        .rule = &rule,
        .region = streaming_region,
        .word_loss = streaming_word_loss,
};
