/*
 * policy: the table of policies and the rule they share.
 */
#include "h2o/policy.h"

#include <math.h>
#include <string.h>

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
	if (candidates - keep == 1) {
		/* The usual step of a full cache: one goes. A single scan finds
		 * the weakest and the next weakest (the cut-off), with the same
		 * tie rule as weakest(): on equal keys the later index is
		 * weaker. */
		const double *key = by_weight ? c->w : c->score;
		int first = -1, second = -1;
		double k1 = INFINITY, k2 = INFINITY;
		for (int i = 0; i < candidates; i++) {
			if (gone[i])
				continue;
			const double k = key[i];
			if (first < 0 || k <= k1) {
				second = first;
				k2 = k1;
				first = i;
				k1 = k;
			} else if (second < 0 || k <= k2) {
				second = i;
				k2 = k;
			}
		}
		gone[first] = 1;
		return keep > 0 ? second : -1;
	}
	for (int r = candidates - keep; r > 0; r--)
		gone[weakest(c, candidates, by_weight, gone)] = 1;
	return keep > 0 ? weakest(c, candidates, by_weight, gone) : -1;
}
