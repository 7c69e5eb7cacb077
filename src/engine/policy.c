/*
 * policy: the table of policies and the rule they share.
 */
#include "h2o/policy.h"

#include <math.h>
#include <string.h>

#include "engine_kernel.h"

#define X(id, name) extern const struct policy policy_##name;
POLICIES(X)
#undef X

const struct policy *const policies[POLICY_COUNT] = {
#define X(id, name) [POLICY_##id] = &policy_##name,
        POLICIES(X)
#undef X
};

int policy_find(const char *name)
{
	for (int i = 0; i < POLICY_COUNT; i++)
		if (strcmp(policies[i]->name, name) == 0)
			return i;
	return -1;
}

int policy_default_sinks(int budget)
{
	int s = budget / 4;
	s = s < 4 ? s : 4;
	s = s > 1 ? s : 1;
	return s < budget ? s : budget - 1;
}

int policy_sinks_for(int sinks_given, int budget)
{
	if (sinks_given < 0)
		return policy_default_sinks(budget);
	return sinks_given < budget ? sinks_given : budget - 1;
}

/* The next entry to evict among the first CANDIDATES not yet gone: the
 * lowest key, and on a tie the higher position (ascending positions: a
 * later index). */
static int weakest(const struct policy_cache *c, int candidates, bool by_weight,
                   const unsigned char *gone)
{
	const double *key = by_weight ? c->w : c->score;
	int best = -1;
	for (int i = 0; i < candidates; i++)
		if (!gone[i] && (best < 0 || key[i] <= key[best]))
			best = i;
	return best;
}

int policy_keep_largest(const struct policy_cache *c, int candidates, int keep, bool by_weight,
                        unsigned char *gone)
{
	const double *key = by_weight ? c->w : c->score;
	if (candidates - keep == 1 && !memchr(gone, 1, (size_t)candidates)) {
		/* The usual step of a full cache: one goes, and nothing is
		 * marked yet. The weakest, then the weakest of the others (the
		 * cut-off), each the later index on equal keys as weakest()
		 * picks them, eight keys at a time. */
		double v, va, vb;
		const int first = kernel_weakest(key, 0, candidates, &v);
		const int a = kernel_weakest(key, 0, first, &va);
		const int b = kernel_weakest(key, first + 1, candidates, &vb);
		gone[first] = 1;
		return keep > 0 ? (b >= 0 && (a < 0 || vb <= va) ? b : a) : -1;
	}
	for (int r = candidates - keep; r > 0; r--)
		gone[weakest(c, candidates, by_weight, gone)] = 1;
	return keep > 0 ? weakest(c, candidates, by_weight, gone) : -1;
}
