/*
 * policy_rule: a policy's rule, which only the driver calls
 * (policy_run.c). A policy file defines its rule here and points its
 * struct policy at it; nothing outside the engine sees this header, so
 * every cache that evicts, the engine's, a layer's plan and the model's
 * real drop, goes through policy_run (policy.h).
 */
#ifndef H2O_POLICY_RULE_H
#define H2O_POLICY_RULE_H

#include "h2o/policy.h"

struct policy_rule {
	/* Mark (gone[i] = 1) the entries of C to evict at this step, GONE
	 * cleared by the driver. Sets *CUTOFF to the kept entry an evicted
	 * one had to beat, or -1. Called only at the steps the driver says
	 * compress. */
	void (*evict)(const struct policy_budget *b, const struct policy_cache *c,
	              unsigned char *gone, int *cutoff);
};

/* The words of an eviction below (or above) a kept entry's value VALUE:
 * the brief "BRIEF 0.12 " ("pooled <"), or the sentence "FULL 0.12 (" with
 * ")" after the cut-off's token ("... below the cut-off,"); POS is the
 * cut-off's position. Every rule that ranks by one value speaks so. */
void policy_cutoff_words(int pos, double value, enum policy_voice voice, const char *brief,
                         const char *full, struct policy_words *words);

#endif
