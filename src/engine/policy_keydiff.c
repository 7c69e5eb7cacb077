/*
 * policy_keydiff: KeyDiff (Park et al., "KeyDiff: Key Similarity-Based KV
 * Cache Eviction for Long-Context LLM Inference in Resource-Constrained
 * Environments", arXiv 2504.15364), as kvpress' KeyDiffPress
 * (kvpress/presses/keydiff_press.py) scores it: the anchor is the mean of
 * the cache's keys each divided by its L2 norm, and a position's score is
 * minus the cosine similarity of its key to the anchor, so the B keys least
 * like the others stay; no attention is read. h2o-tui applies it as it does
 * key norm: at the prompt's end and at every step after it, over the keys
 * held then (the new token's included, which may go), a tie keeping the
 * lower position. An attention scene has no keys: the loader refuses it
 * there (scene.h); a caller without keys gets the B newest.
 *
 * The numbers, in this order: each key's norm n_j, its squares summed in
 * index order from 0.0 and the square root; the anchor's component d, the
 * entries' k_jd / max(n_j, 1e-12) summed in cache order from 0.0, divided
 * by the entries' count (F.normalize, then mean); its norm n_a the same way
 * as a key's; the score -(k_j . anchor) / max(n_j n_a, 1e-8), the dot
 * product summed in index order from 0.0 (F.cosine_similarity).
 */
#include "h2o/policy.h"
#include "engine_kernel.h"
#include "policy_rule.h"

#include <math.h>
#include <stdio.h>

static double norm_of(const double *x, int dim)
{
	double s = 0.0;
	for (int i = 0; i < dim; i++)
		s += x[i] * x[i];
	return sqrt(s);
}

/* Into C->rank, each entry's score; C->anchor gets the anchor. With a
 * memo, each key divided by its norm is kept in ROWS (the same quotients,
 * so the same sums) and the keys in TILES, whose dots with the anchor the
 * logit kernel takes a slot per lane (each the same chain over the index:
 * a product is the same either way round). */
static void keydiff_scores(const struct policy_cache *c)
{
	const int dim = c->dim;
	struct policy_memo *mo = c->key_slot ? c->memo : NULL;
	double *a = c->anchor;
	for (int d = 0; d < dim; d++)
		a[d] = 0.0;
	int tiles = 0;
	for (int j = 0; j < c->len; j++) {
		const double *k = policy_key(c, j);
		const double n = c->key_norm ? c->key_norm[j] : norm_of(k, dim);
		c->rank[j] = n; /* kept for the cosine below */
		const double div = n > 1e-12 ? n : 1e-12;
		if (!mo) {
			kernel_add_quot(a, k, div, dim);
			continue;
		}
		const int sl = c->key_slot[j];
		double *u = mo->rows + (size_t)sl * (size_t)dim;
		if (mo->fresh[sl]) {
			for (int d = 0; d < dim; d++)
				u[d] = k[d] / div;
			kernel_put_key(mo->tiles, sl, k, dim);
			mo->fresh[sl] = 0;
		}
		kernel_add(a, u, dim);
		tiles = sl / KERNEL_LANES + 1 > tiles ? sl / KERNEL_LANES + 1 : tiles;
	}
	for (int d = 0; d < dim; d++)
		a[d] /= c->len;
	const double na = norm_of(a, dim);
	if (mo)
		kernel_slot_logits(mo->tiles, tiles, dim, a, 1.0, mo->mean);
	for (int j = 0; j < c->len; j++) {
		double dot = 0.0;
		if (mo) {
			dot = mo->mean[c->key_slot[j]];
		} else {
			const double *k = policy_key(c, j);
			for (int d = 0; d < dim; d++)
				dot += k[d] * a[d];
		}
		const double den = c->rank[j] * na;
		c->rank[j] = -dot / (den > 1e-8 ? den : 1e-8);
	}
}

static void keydiff_rule(const struct policy_budget *b, const struct policy_cache *c,
                         unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int budget = b->heavy + b->recent;
	if (c->len <= budget)
		return;
	if (!c->keys || !c->rank || !c->anchor || c->dim < 1) {
		for (int i = 0; i < c->len - budget; i++)
			gone[i] = 1;
		return;
	}
	keydiff_scores(c);
	const struct policy_cache view = {.len = c->len, .pos = c->pos, .score = c->rank};
	*cutoff = policy_keep_largest(&view, c->len, budget, false, gone);
}

static int keydiff_region_budget(const struct policy_budget *b, enum policy_region r)
{
	return r == POLICY_REGION_OLD ? b->heavy + b->recent : 0;
}

static enum policy_region keydiff_region(const struct policy_budget *b, int t, int pos)
{
	(void)b, (void)t, (void)pos;
	return POLICY_REGION_OLD;
}

/* The cut-off value is the lowest kept score, minus a cosine: the evicted
 * key's cosine to the anchor was larger (or equal, from a higher
 * position). */
static void keydiff_word_loss(const struct policy_budget *b, const struct policy_loss *loss,
                              enum policy_voice voice, struct policy_words *words)
{
	if (loss->cutoff_pos >= 0) {
		policy_cutoff_words(
		        loss->cutoff_pos, -loss->cutoff_value, voice, "cos >",
		        "its key is more like the mean key than the least like kept, cos", words);
	} else if (voice == POLICY_VOICE_BRIEF) {
		snprintf(words->before, sizeof words->before, "left the window");
	} else {
		snprintf(words->before, sizeof words->before,
		         "no keys to compare: only the %d newest tokens stay",
		         b->heavy + b->recent);
	}
}

static const struct policy_rule rule = {.evict = keydiff_rule};

const struct policy policy_keydiff = {
        .name = "keydiff",
        .title = "KEYDIFF",
        .about = "keeps the B tokens whose keys are least like the mean direction of the "
                 "cache's keys (lowest cosine)",
        .region_name = {"DISTINCT KEYS", NULL},
        .region_budget = keydiff_region_budget,
        .rule = &rule,
        .region = keydiff_region,
        .by_keys = true,
        .ranks_own = true,
        .word_loss = keydiff_word_loss,
};
