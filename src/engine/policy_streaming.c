/*
 * policy_streaming: StreamingLLM (Xiao et al., "Efficient Streaming
 * Language Models with Attention Sinks", arXiv 2309.17453). The first S
 * positions of the text (the attention sinks) stay for good, and the B - S
 * newest beside them.
 */
#include "h2o/policy.h"

static void streaming_evict(const struct policy_budget *b, const struct policy_cache *c,
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

static enum policy_region streaming_region(const struct policy_budget *b, int t, int pos)
{
	(void)t;
	return pos < b->sinks ? POLICY_REGION_OLD : POLICY_REGION_RECENT;
}

const struct policy policy_streaming = {
        .name = "streaming",
        .title = "STREAMINGLLM",
        .about = "keeps the first S tokens (attention sinks) and the B - S newest",
        .region_name = {"SINKS", "RECENT"},
        .evict = streaming_evict,
        .region = streaming_region,
};
