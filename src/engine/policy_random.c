/*
 * policy_random: the random baseline of kvpress' leaderboard, as kvpress'
 * RandomPress (kvpress/presses/random_press.py) scores it: every position a
 * uniform draw in [0, 1), the B highest kept, the way the other scoring
 * policies keep theirs (knorm, keydiff): at the prompt's end and at every
 * step after it (the new token may go), a tie keeping the lower position.
 *
 * The draw is seeded and the same on every machine: position POS of layer L
 * and key/value head G draws splitmix64 (Steele et al., the generator of
 * Java's SplittableRandom) seeded with 42 XOR (L << 48 | G << 32 | POS),
 * its first output's top 53 bits over 2^53. A position keeps its draw for
 * as long as it is held (RandomPress draws afresh at every compression, by
 * index in the cache; docs/policies.md), so what stays after any step is a
 * uniform choice of B of the positions seen, the same for every query head
 * of a group.
 */
#include "h2o/policy.h"
#include "policy_rule.h"

#include <stdint.h>
#include <stdio.h>

#define RANDOM_SEED 42u

double policy_random_draw(int layer, int kv_head, int pos)
{
	const uint64_t at = (uint64_t)(uint32_t)layer << 48 | (uint64_t)(uint32_t)kv_head << 32 |
	                    (uint64_t)(uint32_t)pos;
	uint64_t z = (RANDOM_SEED ^ at) + UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-53;
}

/* The next entry to evict among C's not yet gone: the lowest draw, and on a
 * tie the higher position (a later index). */
static int lowest_draw(const struct policy_cache *c, const unsigned char *gone)
{
	int worst = -1;
	double wv = 0.0;
	for (int i = 0; i < c->len; i++) {
		if (gone[i])
			continue;
		const double v = policy_random_draw(c->layer, c->kv_head, c->pos[i]);
		if (worst < 0 || v <= wv) {
			worst = i;
			wv = v;
		}
	}
	return worst;
}

static void random_rule(const struct policy_budget *b, const struct policy_cache *c,
                        unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int budget = b->heavy + b->recent;
	if (c->len <= budget)
		return;
	if (!c->rank) { /* a caller without the buffer: the draws one by one */
		for (int r = c->len - budget; r > 0; r--)
			gone[lowest_draw(c, gone)] = 1;
		*cutoff = budget > 0 ? lowest_draw(c, gone) : -1;
		return;
	}
	for (int j = 0; j < c->len; j++)
		c->rank[j] = policy_random_draw(c->layer, c->kv_head, c->pos[j]);
	const struct policy_cache view = {.len = c->len, .pos = c->pos, .score = c->rank};
	*cutoff = policy_keep_largest(&view, c->len, budget, false, gone);
}

static int random_region_budget(const struct policy_budget *b, enum policy_region r)
{
	return r == POLICY_REGION_OLD ? b->heavy + b->recent : 0;
}

static enum policy_region random_region(const struct policy_budget *b, int t, int pos)
{
	(void)b, (void)t, (void)pos;
	return POLICY_REGION_OLD;
}

static void random_word_loss(const struct policy_budget *b, const struct policy_loss *loss,
                             enum policy_voice voice, struct policy_words *words)
{
	(void)b;
	if (loss->cutoff_pos < 0) {
		snprintf(words->before, sizeof words->before,
		         voice == POLICY_VOICE_BRIEF ? "random draw" : "its random draw was low");
		return;
	}
	policy_cutoff_words(loss->cutoff_pos, loss->cutoff_value, voice, "draw <",
	                    "its random draw is below the lowest kept,", words);
}

static const struct policy_rule rule = {.evict = random_rule};

const struct policy policy_random = {
        .name = "random",
        .title = "RANDOM",
        .about = "keeps B tokens drawn at random (seed 42, the same on every machine): the "
                 "baseline of kvpress' RandomPress",
        .region_name = {"KEPT AT RANDOM", NULL},
        .region_budget = random_region_budget,
        .rule = &rule,
        .region = random_region,
        .ranks_own = true,
        .word_loss = random_word_loss,
};
