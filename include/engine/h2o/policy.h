/*
 * policy: the eviction policies a cache can follow, side by side.
 *
 * Every policy runs its own cache through spec §2 steps 1-5 (append,
 * logits, softmax over what it holds, output, its own accumulated scores)
 * and then evicts by its own rule with the same total budget B = heavy +
 * recent. A policy is a const struct of a rule and a labelling of what it
 * keeps; it holds no state and does no I/O. Adding one is a file
 * (src/policy_NAME.c) and an entry in POLICIES below.
 */
#ifndef H2O_POLICY_H
#define H2O_POLICY_H

#include <stdbool.h>
#include <stddef.h>

/* X(ID, name): the trace key, the --compare name and the file's suffix. */
#define POLICIES(X)             \
	X(FULL, full)           \
	X(H2O, h2o)             \
	X(WINDOW, window)       \
	X(STREAMING, streaming) \
	X(TOVA, tova)

enum policy_id {
#define X(id, name) POLICY_##id,
	POLICIES(X)
#undef X
	        POLICY_COUNT
};

/* The budgets every policy shares. */
struct policy_budget {
	int heavy, recent; /* H2O's split; B = heavy + recent */
	int sinks;         /* StreamingLLM's attention sinks, < B (or 0) */
	int n;             /* tokens in the scene */
};

/* A cache as a policy sees it at eviction time: ascending positions, the
 * scores after this step's update and this step's weights. */
struct policy_cache {
	int len;
	const int *pos;
	const double *score;
	const double *w;
};

/* Where a kept position sits: a policy has up to two regions, drawn as
 * sections in this order. */
enum policy_region { POLICY_REGION_OLD, POLICY_REGION_RECENT };

struct policy {
	const char *name;  /* "h2o" */
	const char *title; /* "H2O" */
	const char *about; /* one line: what it keeps */
	/* Section names of its two regions; NULL for an unused region. */
	const char *region_name[2];
	/* Mark (gone[i] = 1) the entries of C to evict at this step. Sets
	 * *CUTOFF to the kept entry an evicted one had to beat, or -1. */
	void (*evict)(const struct policy_budget *b, const struct policy_cache *c,
	              unsigned char *gone, int *cutoff);
	/* The region of position POS, kept after step T. */
	enum policy_region (*region)(const struct policy_budget *b, int t, int pos);
	/* What the cut-off is compared on: the score (false) or this step's
	 * weight (true). */
	bool by_weight;
};

extern const struct policy *const policies[POLICY_COUNT];

/* The policy called NAME, or -1. */
int policy_find(const char *name);

/* StreamingLLM's default number of sinks for budget B: max(1, min(4, B/4)),
 * never more than B - 1. */
int policy_default_sinks(int budget);

/* The sink count for budget B: SINKS_GIVEN capped below B, or the default
 * when SINKS_GIVEN < 0 (not given). */
int policy_sinks_for(int sinks_given, int budget);

/* Shared rule pieces for policy files. */

/* Evict from the first CANDIDATES entries the lowest-keyed ones (key =
 * score, or weight when BY_WEIGHT) until KEEP of them remain, a tie keeping
 * the lower position; returns the index of the lowest-keyed kept one (the
 * cut-off), or -1 when none is kept. */
int policy_keep_largest(const struct policy_cache *c, int candidates, int keep, bool by_weight,
                        unsigned char *gone);

#endif
