/*
 * policy_expected: Expected Attention (Devoto et al., "Expected Attention:
 * KV Cache Compression by Estimating Attention from Future Queries
 * Distribution", arXiv 2510.00636), as kvpress' ExpectedAttentionPress
 * (kvpress/presses/expected_attention_press.py) scores it with its
 * defaults (n_sink 4, use_covariance, use_vnorm, epsilon 0). The queries
 * still to come are taken to be Gaussian, with the mean and covariance of
 * the last 64 queries asked after the first four; a key k is then expected
 * to get exp(mu . k s + k' S k s^2 / 2) of attention (s the logit scale),
 * normalised over the keys after the first four (a softmax), averaged over
 * the query heads of the key/value group, times the L2 norm of the key's
 * value row. The first four entries (the sinks) score one more than the
 * largest, so they stay; the B best scored stay, a tie keeping the lower
 * position. kvpress takes the queries before RoPE and rotates their mean
 * and covariance by RoPE averaged over the next n_future_positions (512)
 * positions: on a model scene so does this (policy_cache.rope); a vector
 * scene's positions carry no rotation, so that average is the identity
 * and is left out.
 *
 * h2o-tui applies it as it does key norm and KeyDiff: at the prompt's end,
 * with the prompt's last queries, and at every step after it, over the
 * keys held then, with the last queries asked by then. kvpress' prefill
 * takes every query of the prompt after the sinks: the same for a prompt
 * of up to 68 tokens; the window keeps each step's cost bounded where the
 * whole run's would grow with the square of its length. An attention
 * scene has no keys: it is refused there (engine.h); a caller without
 * keys or queries gets the B newest.
 *
 * The numbers, per query head h of the group in order, over the queries of
 * positions max(4, seen - 64) .. seen - 1 (m of them). Without a rotary
 * embedding (a vector scene), mu . k and k' S k are the mean and the
 * variance of k's projections on those queries, and are computed so: for
 * each entry j after the sinks, each projection q . k_j summed in index
 * order from 0.0; their mean summed in position order from 0.0, divided
 * by m; (x - mean)(x - mean) summed the same way, divided by m; z_j =
 * mean s + variance (s s) / 2 (projected_z, which keeps the projections
 * from step to step in the caller's memo). With one (a model scene): the
 * mean mu_d, the queries' component d summed in position order from 0.0
 * and divided by m; the covariance S_ab, (q_a - mu_a)(q_b - mu_b) summed
 * the same way, divided by m. Then for each pair k its
 * mean cosine c_k and sine s_k over positions seen .. seen + 511 (the
 * model's float32 angle, cosf and sinf made double, summed in position
 * order from 0.0, divided by 512), R the matrix that turns pair k's rows
 * (a, b) by them (R_aa = R_bb = c_k, R_ab = -s_k, R_ba = s_k, kvpress'
 * cos * I + sin * P in the model's pairing); mu becomes R mu and S
 * becomes R (S R'), each product's sum over the pair's two terms in
 * index order (the zeros of R add nothing); and for each entry j after
 * the sinks,
 * z_j = (mu . k_j) s + (sum_a k_ja (sum_b S_ba k_jb)) (s s) / 2, every sum
 * in index order from 0.0 (S_ba: column a of S, which is row a but for
 * the rotation's roundings). Then the softmax of the z_j (their largest taken
 * away, exp, summed in cache order from 0.0, each divided by the sum),
 * added to the entry's score. Then each score divided by the heads'
 * count and multiplied by its value's norm (its squares summed in index
 * order from 0.0, the square root).
 */
#include "h2o/policy.h"
#include "engine_exp.h"
#include "engine_kernel.h"
#include "policy_rule.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* kvpress' n_sink. */
#define EXPECTED_SINKS 4
/* The queries the statistics are of: the last 64 asked after the sinks. */
#define EXPECTED_QUERIES POLICY_QUERIES_READ

static double dot_of(const double *x, const double *y, int dim)
{
	double s = 0.0;
	for (int i = 0; i < dim; i++)
		s += x[i] * y[i];
	return s;
}

/* Query head H's statistics into MU (dim) and COV (dim x dim): the
 * queries of positions FIRST .. C->seen - 1, as the header says; X holds
 * them centred (each component less its mean), a row per position. COV's
 * lower half is its upper half's (a product is the same either way
 * round). */
static void query_stats(const struct policy_cache *c, int h, int first, double *mu, double *cov,
                        double *x)
{
	const size_t dim = (size_t)c->dim;
	const int m = c->seen - first;
	const double *q = c->queries[h] + (size_t)first * dim;
	for (size_t d = 0; d < dim; d++)
		mu[d] = 0.0;
	for (int p = 0; p < m; p++)
		for (size_t d = 0; d < dim; d++)
			mu[d] += q[(size_t)p * dim + d];
	for (size_t d = 0; d < dim; d++)
		mu[d] /= m;
	for (int p = 0; p < m; p++)
		for (size_t d = 0; d < dim; d++)
			x[(size_t)p * dim + d] = q[(size_t)p * dim + d] - mu[d];
	kernel_gram_upper(x, m, c->dim, cov);
	for (size_t a = 0; a < dim; a++)
		for (size_t b = a; b < dim; b++) {
			cov[a * dim + b] /= m;
			cov[b * dim + a] = cov[a * dim + b];
		}
}

/* kvpress' n_future_positions. */
#define EXPECTED_FUTURE 512

/* Pair K's rows of a head of DIM under ROPE into *A and *B. */
static void pair_rows(const struct policy_rope *rope, int dim, int k, int *a, int *b)
{
	*a = rope->neox ? k : 2 * k;
	*b = rope->neox ? k + dim / 2 : 2 * k + 1;
}

/* The averages each thread computed last, for the rotation they were of:
 * every cache of a model scene (each head's, each budget's) asks for the
 * same FROMs in turn, a few steps apart, and 512 cosines and sines a pair
 * are most of the rule's time on a model of small heads. The rotation is
 * kept by its values, not its address, so one freed and another made in
 * its place is never taken for it; an average is kept in slot FROM mod
 * ROPE_MEMO_SLOTS, with its FROM. The same operations give the same bits,
 * so a kept average is the one computed again. */
#define ROPE_MEMO_PAIRS 64
#define ROPE_MEMO_SLOTS 64
static _Thread_local struct {
	int neox, pairs;
	float scale, freq[ROPE_MEMO_PAIRS], div[ROPE_MEMO_PAIRS];
	int from[ROPE_MEMO_SLOTS]; /* -1: none */
	double cs[ROPE_MEMO_SLOTS][ROPE_MEMO_PAIRS], sn[ROPE_MEMO_SLOTS][ROPE_MEMO_PAIRS];
} rope_memo = {.pairs = -1};

/* Whether the memo holds ROPE's averages; if not, it is made ROPE's,
 * empty. */
static void rope_memo_of(const struct policy_rope *rope, int pairs)
{
	const size_t f = (size_t)pairs * sizeof *rope->freq;
	if (rope_memo.pairs == pairs && rope_memo.neox == rope->neox &&
	    memcmp(&rope_memo.scale, &rope->scale, sizeof rope->scale) == 0 &&
	    memcmp(rope_memo.freq, rope->freq, f) == 0 && memcmp(rope_memo.div, rope->div, f) == 0)
		return;
	rope_memo.pairs = pairs;
	rope_memo.neox = rope->neox;
	rope_memo.scale = rope->scale;
	memcpy(rope_memo.freq, rope->freq, f);
	memcpy(rope_memo.div, rope->div, f);
	for (int i = 0; i < ROPE_MEMO_SLOTS; i++)
		rope_memo.from[i] = -1;
}

void policy_rope_mean(const struct policy_rope *rope, int dim, int from, double *cs, double *sn)
{
	const int pairs = dim / 2, slot = from % ROPE_MEMO_SLOTS;
	const bool memo = pairs <= ROPE_MEMO_PAIRS && from >= 0;
	if (memo) {
		rope_memo_of(rope, pairs);
		if (rope_memo.from[slot] == from) {
			memcpy(cs, rope_memo.cs[slot], (size_t)pairs * sizeof *cs);
			memcpy(sn, rope_memo.sn[slot], (size_t)pairs * sizeof *sn);
			return;
		}
	}
	for (int k = 0; k < pairs; k++) {
		double c = 0.0, s = 0.0;
		for (int p = from; p < from + EXPECTED_FUTURE; p++) {
			float val = (float)p * rope->freq[k];
			val *= rope->scale;
			val /= rope->div[k];
			c += (double)cosf(val);
			s += (double)sinf(val);
		}
		cs[k] = c / EXPECTED_FUTURE;
		sn[k] = s / EXPECTED_FUTURE;
	}
	if (memo) {
		rope_memo.from[slot] = from;
		memcpy(rope_memo.cs[slot], cs, (size_t)pairs * sizeof *cs);
		memcpy(rope_memo.sn[slot], sn, (size_t)pairs * sizeof *sn);
	}
}

void policy_rope_turn(const struct policy_rope *rope, int dim, const double *cs, const double *sn,
                      double *mu, double *cov)
{
	const size_t d = (size_t)dim;
	for (int k = 0; k < dim / 2; k++) {
		int a, b;
		pair_rows(rope, dim, k, &a, &b);
		const double c = cs[k], s = sn[k];
		const double ma = mu[a], mb = mu[b];
		mu[a] = c * ma + -s * mb;
		mu[b] = s * ma + c * mb;
		/* S R': row i's pair (a, b) turned. */
		for (int i = 0; i < dim; i++) {
			double *row = cov + (size_t)i * d;
			const double xa = row[a], xb = row[b];
			row[a] = xa * c + xb * -s;
			row[b] = xa * s + xb * c;
		}
	}
	/* R (S R'): column j's pair (a, b) turned. */
	for (int k = 0; k < dim / 2; k++) {
		int a, b;
		pair_rows(rope, dim, k, &a, &b);
		const double c = cs[k], s = sn[k];
		double *ra = cov + (size_t)a * d, *rb = cov + (size_t)b * d;
		for (int j = 0; j < dim; j++) {
			const double xa = ra[j], xb = rb[j];
			ra[j] = c * xa + -s * xb;
			rb[j] = s * xa + c * xb;
		}
	}
}

/* A vector scene's z_j into Z for each entry j after the sinks, of query
 * head H's queries of positions FIRST .. C->seen - 1 (the header's
 * projections); X is room for EXPECTED_QUERIES numbers. Without a memo MO,
 * each entry's projections are computed here; with one, each is computed
 * once while the key and the query are both in view, into the memo's ring
 * (slot s's projection of position p at ring + (p mod 64) * slots + s), a
 * new query's onto every slot at once by the logit kernel. Either way
 * every number is the same dot, summed the same way. */
static void projected_z(const struct policy_cache *c, struct policy_memo *mo, int h, int first,
                        double *z, double *x)
{
	const size_t dim = (size_t)c->dim;
	const int m = c->seen - first, ns = EXPECTED_SINKS;
	const double s = c->scale, *q = c->queries[h];
	if (!mo) {
		for (int j = ns; j < c->len; j++) {
			const double *k = policy_key(c, j);
			for (int r = 0; r < m; r++)
				x[r] = dot_of(q + (size_t)(first + r) * dim, k, c->dim);
			double mean = 0.0, var = 0.0;
			for (int r = 0; r < m; r++)
				mean += x[r];
			mean /= (double)m;
			for (int r = 0; r < m; r++) {
				const double d = x[r] - mean;
				var += d * d;
			}
			var /= (double)m;
			z[j] = mean * s + var * (s * s) / 2.0;
		}
		return;
	}
	const size_t stride = (size_t)mo->slots;
	double *ring = mo->ring + (size_t)h * EXPECTED_QUERIES * stride;
	/* Positions FIRST .. LIM - 1 are in the ring for every slot that is
	 * not fresh; a memo ahead of this step (a cache put back) has none. */
	const int next = mo->next[h] > c->seen ? 0 : mo->next[h];
	const int lim = next < first ? first : next;
	/* The queries in the ring, in tiles: a fresh key's projections on
	 * them, a query per lane. */
	double *qtiles = mo->qtiles + (size_t)h * EXPECTED_QUERIES * dim, *proj = x;
	int tiles = 0;
	for (int j = ns; j < c->len; j++) {
		const int sl = c->key_slot[j];
		tiles = sl / KERNEL_LANES + 1 > tiles ? sl / KERNEL_LANES + 1 : tiles;
		if (!mo->fresh[sl] || lim == first)
			continue;
		kernel_slot_logits(qtiles, EXPECTED_QUERIES / KERNEL_LANES, c->dim,
		                   policy_key(c, j), 1.0, proj);
		for (int p = first; p < lim; p++)
			ring[(size_t)(p % EXPECTED_QUERIES) * stride + (size_t)sl] =
			        proj[p % EXPECTED_QUERIES];
	}
	for (int p = lim; p < c->seen; p++) {
		kernel_slot_logits(mo->tiles, tiles, c->dim, q + (size_t)p * dim, 1.0,
		                   ring + (size_t)(p % EXPECTED_QUERIES) * stride);
		kernel_put_key(qtiles, p % EXPECTED_QUERIES, q + (size_t)p * dim, c->dim);
	}
	mo->next[h] = c->seen;
	int order[EXPECTED_QUERIES];
	for (int r = 0; r < m; r++)
		order[r] = (first + r) % EXPECTED_QUERIES;
	kernel_ring_stats(ring, stride, tiles * KERNEL_LANES, order, m, mo->mean, mo->var);
	for (int j = ns; j < c->len; j++) {
		const int sl = c->key_slot[j];
		z[j] = mo->mean[sl] * s + mo->var[sl] * (s * s) / 2.0;
	}
}

/* The L2 norm of V's DIM numbers, as the header sums it. */
static double norm_of(const double *v, int dim)
{
	return sqrt(dot_of(v, v, dim));
}

/* Into C->rank, each entry's score (C->len > EXPECTED_SINKS). */
static void expected_scores(const struct policy_cache *c)
{
	const int dim = c->dim, heads = c->heads > 0 ? c->heads : 1, ns = EXPECTED_SINKS;
	double *mu = c->work, *cov = mu + dim, *z = cov + (size_t)dim * (size_t)dim;
	double *cs = z + c->len, *sn = cs + dim / 2, *x = cs + dim;
	double *score = c->rank;
	struct policy_memo *mo = c->rope || !c->key_slot ? NULL : c->memo;
	if (c->rope)
		policy_rope_mean(c->rope, dim, c->seen, cs, sn);
	/* A memo's fresh slots: their keys into its tiles, their values'
	 * norms. */
	for (int j = ns; mo && j < c->len; j++) {
		const int sl = c->key_slot[j];
		if (!mo->fresh[sl])
			continue;
		kernel_put_key(mo->tiles, sl, policy_key(c, j), dim);
		if (c->values)
			mo->vnorm[sl] = norm_of(c->values + (size_t)c->pos[j] * (size_t)dim, dim);
	}
	const int first = c->seen - EXPECTED_QUERIES > ns ? c->seen - EXPECTED_QUERIES : ns;
	for (int j = ns; j < c->len; j++)
		score[j] = 0.0;
	for (int h = 0; h < heads; h++) {
		double top = -INFINITY;
		if (c->rope) {
			query_stats(c, h, first, mu, cov, x);
			policy_rope_turn(c->rope, dim, cs, sn, mu, cov);
			/* Z holds each entry's quadratic form, then its z_j. */
			for (int j = ns; j < c->len; j++)
				kernel_quad_forms(cov, policy_key(c, j), 1, dim, z + j);
			for (int j = ns; j < c->len; j++) {
				const double *k = policy_key(c, j);
				z[j] = dot_of(mu, k, dim) * c->scale +
				       z[j] * (c->scale * c->scale) / 2.0;
			}
		} else {
			projected_z(c, mo, h, first, z, x);
		}
		for (int j = ns; j < c->len; j++)
			top = z[j] > top ? z[j] : top;
		/* exp(z - top) with the C library's bits, eight at a time,
		 * and their sum in cache order from 0.0. */
		const double sum = engine_exp_row_sum(z + ns, c->len - ns, top);
		for (int j = ns; j < c->len; j++)
			score[j] += z[j] / sum;
	}
	for (int j = ns; mo && j < c->len; j++)
		mo->fresh[c->key_slot[j]] = 0;
	double top = -INFINITY;
	for (int j = ns; j < c->len; j++) {
		score[j] /= heads;
		if (c->values) {
			const double norm =
			        mo ? mo->vnorm[c->key_slot[j]]
			           : norm_of(c->values + (size_t)c->pos[j] * (size_t)dim, dim);
			score[j] = (score[j] + 0.0) * norm;
		}
		top = score[j] > top ? score[j] : top;
	}
	for (int j = 0; j < ns; j++)
		score[j] = top + 1.0;
}

static void expected_rule(const struct policy_budget *b, const struct policy_cache *c,
                          unsigned char *gone, int *cutoff)
{
	*cutoff = -1;
	const int budget = b->heavy + b->recent;
	if (c->len <= budget)
		return;
	if (!c->keys || !c->queries || !c->rank || !c->work || c->dim < 1 ||
	    c->len <= EXPECTED_SINKS || c->seen <= EXPECTED_SINKS) {
		/* No keys or queries to read, or nothing but sinks (which
		 * tie): the B oldest of the sinks, else the B newest. */
		if (c->len <= EXPECTED_SINKS && c->keys && c->queries)
			for (int i = budget; i < c->len; i++)
				gone[i] = 1;
		else
			for (int i = 0; i < c->len - budget; i++)
				gone[i] = 1;
		return;
	}
	expected_scores(c);
	const struct policy_cache view = {.len = c->len, .pos = c->pos, .score = c->rank};
	*cutoff = policy_keep_largest(&view, c->len, budget, false, gone);
}

static int expected_region_budget(const struct policy_budget *b, enum policy_region r)
{
	return r == POLICY_REGION_OLD ? b->heavy + b->recent : 0;
}

static enum policy_region expected_region(const struct policy_budget *b, int t, int pos)
{
	(void)b, (void)t, (void)pos;
	return POLICY_REGION_OLD;
}

/* The cut-off value is the lowest kept score: the evicted entry's
 * expected attention (times its value's norm) was lower (or equal, from a
 * higher position). */
static void expected_word_loss(const struct policy_budget *b, const struct policy_loss *loss,
                               enum policy_voice voice, struct policy_words *words)
{
	if (loss->cutoff_pos >= 0) {
		policy_cutoff_words(loss->cutoff_pos, loss->cutoff_value, voice, "exp <",
		                    "expected attention times |v| below the least kept,", words);
	} else if (voice == POLICY_VOICE_BRIEF) {
		snprintf(words->before, sizeof words->before, "left the window");
	} else {
		snprintf(words->before, sizeof words->before,
		         "no keys or queries to read: only the %d newest tokens stay",
		         b->heavy + b->recent);
	}
}

static const struct policy_rule rule = {.evict = expected_rule};

const struct policy policy_expected = {
        .name = "expected",
        .title = "EXPECTED ATTN",
        .about = "keeps 4 sinks and the tokens a Gaussian of the last 64 queries expects "
                 "attended most, times |v|",
        .region_name = {"EXPECTED", NULL},
        .region_budget = expected_region_budget,
        .rule = &rule,
        .region = expected_region,
        .by_keys = true,
        .by_queries = true,
        .ranks_own = true,
        .word_loss = expected_word_loss,
};
