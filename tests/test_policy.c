/*
 * Unit tests of the eviction policies, each against cases worked by hand
 * on the explainer's example and on scenes built to tie.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "h2o/engine.h"
#include "h2o/policy.h"
#include "scene_fixture.h"

/* The explainer's rows, as in test_engine.c. */
static const double cat_rows[] = {
        1.00, 0.45, 0.55, 0.15, 0.45, 0.40, 0.10, 0.30, 0.31, 0.29, 0.08, 0.28, 0.20, 0.22,
        0.22, 0.10, 0.25, 0.12, 0.18, 0.20, 0.15, 0.08, 0.22, 0.10, 0.15, 0.20, 0.12, 0.13,
};

static struct engine *run_to(const struct scene *sc, struct budget b, int t,
                             struct step_record *rec)
{
	struct engine *e = engine_new(sc, &b);
	while (engine_step_count(e) < t)
		assert_true(engine_step(e, rec));
	return e;
}

static void expect_kept(const struct engine *e, enum policy_id p, const int *want, int n)
{
	assert_int_equal(engine_len(e, p), n);
	for (int i = 0; i < n; i++)
		assert_int_equal(engine_positions(e, p)[i], want[i]);
}

static void expect_evicted(const struct step_record *rec, enum policy_id p, int pos)
{
	assert_int_equal(rec->c[p].n_evicted, 1);
	assert_int_equal(rec->c[p].evicted[0], pos);
}

/* B = 4 (heavy 2 + recent 2), one sink. Until step 5 every cache holds
 * everything; at step 5 each rule picks its own victim from the same row
 * (The 0.08, cat 0.28, sat 0.20, because 0.22, it 0.22). */
static void test_cat_sat_step5_every_policy(void **state)
{
	(void)state;
	struct scene *sc = fixture_attention(7, 2, 2, 2, cat_rows, NULL, NULL);
	struct step_record rec;
	struct engine *e = run_to(sc, (struct budget){2, 2, 1, 0, 0, {{{0}}}}, 5, &rec);
	assert_int_equal(rec.c[POLICY_FULL].n_evicted, 0);
	expect_kept(e, POLICY_FULL, (const int[]){0, 1, 2, 3, 4}, 5);
	/* H2O: scores 1.78 1.58 0.91 | 0.51 0.22 protected: sat goes. */
	expect_evicted(&rec, POLICY_H2O, 2);
	/* Window: the 4 newest stay, The goes. */
	expect_evicted(&rec, POLICY_WINDOW, 0);
	/* StreamingLLM: sink The, and the 3 newest: cat goes. */
	expect_evicted(&rec, POLICY_STREAMING, 1);
	expect_kept(e, POLICY_STREAMING, (const int[]){0, 2, 3, 4}, 4);
	/* TOVA: the smallest weight this step is The's 0.08. */
	expect_evicted(&rec, POLICY_TOVA, 0);
	/* Key norm: an attention scene has no keys, so the B newest stay. */
	expect_evicted(&rec, POLICY_KNORM, 0);
	assert_int_equal(rec.c[POLICY_KNORM].cutoff_pos, -1);
	assert_int_equal(rec.c[POLICY_TOVA].cutoff_pos, 2); /* sat's 0.20 is the lowest kept */
	assert_true(fabs(rec.c[POLICY_TOVA].cutoff_value - 0.20) < 1e-12);
	/* Overlap with H2O's [0, 1, 3, 4]. */
	assert_int_equal(rec.c[POLICY_WINDOW].m.overlap_h2o, 3);
	assert_int_equal(rec.c[POLICY_FULL].m.overlap_h2o, 4);
	engine_free(e);

	/* Step 6 (row .10 .25 .12 .18 .20 .15), each over its own cache. */
	e = run_to(sc, (struct budget){2, 2, 1, 0, 0, {{{0}}}}, 6, &rec);
	/* TOVA holds cat sat because it + was: 0.12 / 0.90 is the least. */
	expect_evicted(&rec, POLICY_TOVA, 2);
	assert_true(fabs(rec.c[POLICY_TOVA].attn[1] - 0.12 / 0.90) < 1e-12);
	/* StreamingLLM holds The sat because it + was: sat leaves the window. */
	expect_evicted(&rec, POLICY_STREAMING, 2);
	expect_evicted(&rec, POLICY_WINDOW, 1);
	/* Recall: full mass on what the window attended (cat..was). */
	assert_true(fabs(rec.c[POLICY_WINDOW].m.attn_recall - 0.90) < 1e-12);
	engine_free(e);
	scene_free(sc);
}

/* Every key equal: uniform weights, so TOVA's cut is all ties. The lower
 * positions stay, so the new token itself is evicted. */
static void test_tova_tie_evicts_new_token(void **state)
{
	(void)state;
	const double q[] = {1, 1, 1, 1}, k[] = {0, 0, 0, 0}, v[] = {0, 0, 0, 0};
	struct scene *sc = fixture_vector(4, 1, 1, 1, 1.0, q, k, v);
	struct step_record rec;
	struct engine *e = run_to(sc, (struct budget){1, 1, 1, 0, 0, {{{0}}}}, 3, &rec);
	assert_true(rec.c[POLICY_TOVA].attn[0] == rec.c[POLICY_TOVA].attn[2]);
	expect_evicted(&rec, POLICY_TOVA, 2);
	expect_kept(e, POLICY_TOVA, (const int[]){0, 1}, 2);
	engine_free(e);
	scene_free(sc);
}

/*
 * Key norm, worked by hand. Keys (dim 2) and their L2 norms:
 *   pos 0 (3, 4) 5;  pos 1 (1, 0) 1;  pos 2 (0, 2) 2;
 *   pos 3 (1, 1) sqrt 2;  pos 4 (0, 0) 0;  pos 5 (-1, 1) sqrt 2.
 * B = 3 (heavy 2 + recent 1). Step 4 holds 0..3 (5, 1, 2, 1.41): the
 * largest norm, pos 0, goes; the largest kept is pos 2's 2 (the cut-off).
 * Step 5 holds 1 2 3 4 (1, 2, 1.41, 0): pos 2 goes, cut-off pos 3. Step 6
 * holds 1 3 4 5 (1, 1.41, 0, 1.41): pos 3 and the new pos 5 tie, and the
 * higher position goes, so the new token itself is evicted; 1 3 4 stay.
 * The queries play no part.
 */
static void test_knorm_by_hand(void **state)
{
	(void)state;
	const double q[] = {1, 0, 0, 1, 1, 1, -1, 0, 2, 1, 0, -3};
	const double k[] = {3, 4, 1, 0, 0, 2, 1, 1, 0, 0, -1, 1};
	const double v[12] = {0};
	struct scene *sc = fixture_vector(6, 2, 2, 1, 1.0, q, k, v);
	const struct budget b = {2, 1, 1, 0, 0, {{{0}}}};
	struct step_record rec;
	struct engine *e = run_to(sc, b, 4, &rec);
	expect_evicted(&rec, POLICY_KNORM, 0);
	assert_int_equal(rec.c[POLICY_KNORM].cutoff_pos, 2);
	assert_true(rec.c[POLICY_KNORM].cutoff_value == 2.0);
	engine_free(e);
	e = run_to(sc, b, 5, &rec);
	expect_evicted(&rec, POLICY_KNORM, 2);
	assert_int_equal(rec.c[POLICY_KNORM].cutoff_pos, 3);
	assert_true(rec.c[POLICY_KNORM].cutoff_value == sqrt(2.0));
	engine_free(e);
	e = run_to(sc, b, 6, &rec);
	expect_evicted(&rec, POLICY_KNORM, 5);
	assert_int_equal(rec.c[POLICY_KNORM].cutoff_pos, 3);
	expect_kept(e, POLICY_KNORM, (const int[]){1, 3, 4}, 3);
	engine_free(e);
	scene_free(sc);
}

/*
 * The random baseline, worked by hand. Its draws for layer 0, kv head 0
 * (splitmix64 seeded with 42 XOR the position, policy.h), to three places:
 *   pos 0 .742  1 .728  2 .213  3 .069  4 .730  5 .483
 * B = 3 (heavy 2 + recent 1). Step 4 holds 0..3: pos 3 (.069) goes, the
 * lowest kept is pos 2 (.213). Step 5 holds 0 1 2 4: pos 2 goes, cut-off
 * pos 1 (.728). Step 6 holds 0 1 4 5: the new pos 5 (.483) goes itself;
 * 0 1 4 stay. The scene plays no part, and the draws are the same on
 * every run and machine: the first two are checked to the last bit.
 */
static void test_random_by_hand(void **state)
{
	(void)state;
	assert_true(policy_random_draw(0, 0, 0) == 0x1.7bae644c5fd6dp-1);
	assert_true(policy_random_draw(0, 0, 1) == 0x1.74d3d921d69fdp-1);
	/* Another layer or key/value head draws differently. */
	assert_true(policy_random_draw(1, 0, 0) != policy_random_draw(0, 0, 0));
	assert_true(policy_random_draw(0, 1, 0) != policy_random_draw(0, 0, 0));
	struct scene *sc = fixture_random(6, 2, 2, 1, 7);
	const struct budget b = {2, 1, 1, 0, 0, {{{0}}}};
	struct step_record rec;
	struct engine *e = run_to(sc, b, 4, &rec);
	expect_evicted(&rec, POLICY_RANDOM, 3);
	assert_int_equal(rec.c[POLICY_RANDOM].cutoff_pos, 2);
	assert_true(rec.c[POLICY_RANDOM].cutoff_value == policy_random_draw(0, 0, 2));
	assert_true(fabs(rec.c[POLICY_RANDOM].cutoff_value - 0.213) < 5e-4);
	engine_free(e);
	e = run_to(sc, b, 5, &rec);
	expect_evicted(&rec, POLICY_RANDOM, 2);
	assert_int_equal(rec.c[POLICY_RANDOM].cutoff_pos, 1);
	engine_free(e);
	e = run_to(sc, b, 6, &rec);
	expect_evicted(&rec, POLICY_RANDOM, 5);
	expect_kept(e, POLICY_RANDOM, (const int[]){0, 1, 4}, 3);
	engine_free(e);
	scene_free(sc);
}

/*
 * KeyDiff, worked by hand. Keys (dim 2) and their directions:
 *   pos 0 (3, 0) (1, 0);  pos 1 (0, 2) (0, 1);  pos 2 (1, 0) (1, 0);
 *   pos 3 (0, -3) (0, -1).
 * B = 2 (heavy 1 + recent 1). Step 3 holds 0 1 2: the anchor (the mean
 * direction) is (2/3, 1/3), of norm sqrt 5 / 3; the cosines are 2/sqrt 5
 * (.894), 1/sqrt 5 (.447) and 2/sqrt 5, so the scores (minus them) are
 * -.894 -.447 -.894: pos 1 stays, pos 0 and the new pos 2 tie and the
 * higher goes; the cut-off is pos 0 at -2/sqrt 5. Step 4 holds 0 1 3: the
 * anchor is (1/3, 0), as 1 and 3 point opposite ways; pos 0's cosine is 1,
 * 1's and 3's 0: pos 0, the most like the mean, goes, and 1 3 stay. Key
 * norm would have kept 1 and 2 at step 3. The queries play no part.
 */
static void test_keydiff_by_hand(void **state)
{
	(void)state;
	const double q[] = {1, 0, 0, 1, 1, 1, -1, 0};
	const double k[] = {3, 0, 0, 2, 1, 0, 0, -3};
	const double v[8] = {0};
	struct scene *sc = fixture_vector(4, 2, 1, 1, 1.0, q, k, v);
	const struct budget b = {1, 1, 1, 0, 0, {{{0}}}};
	struct step_record rec;
	struct engine *e = run_to(sc, b, 3, &rec);
	expect_evicted(&rec, POLICY_KEYDIFF, 2);
	assert_int_equal(rec.c[POLICY_KEYDIFF].cutoff_pos, 0);
	assert_true(fabs(rec.c[POLICY_KEYDIFF].cutoff_value + 2.0 / sqrt(5.0)) < 1e-12);
	expect_evicted(&rec, POLICY_KNORM, 0);
	engine_free(e);
	e = run_to(sc, b, 4, &rec);
	expect_evicted(&rec, POLICY_KEYDIFF, 0);
	expect_kept(e, POLICY_KEYDIFF, (const int[]){1, 3}, 2);
	assert_true(rec.c[POLICY_KEYDIFF].cutoff_value == 0.0);
	engine_free(e);
	scene_free(sc);
}

/*
 * Expected Attention worked by hand: 7 tokens of dimension 2, logit scale 1
 * (so z = mu . k + k' S k / 2), B = 5, no prompt. Positions 0-3 are the
 * sinks: they stay, and their queries (5, 5) are left out of the
 * statistics. Values 0-3 are (1, 0); the rest:
 *   pos  query    key     value   |v|
 *   4    (1,  1)  (1, 0)  (3, 4)  5
 *   5    (1, -1)  (0, 2)  (1, 0)  1
 *   6    (1,  0)  (2, 0)  (0, 2)  2
 * Step 6 holds 0-5, one goes. The queries of 4 and 5: mu = (1, 0), the
 * deviations (0, 1) and (0, -1), S = diag(0, 1). z4 = 1 + 0 = 1;
 * z5 = 0 + (2 * 1 * 2) / 2 = 2: by the mean alone 4 would win, by the
 * covariance 5 does. The softmax: 1 / (1 + e) = .268941 and
 * e / (1 + e) = .731059; times |v|: 4 scores 5 / (1 + e) = 1.344707,
 * 5 scores .731059, so 5 goes: the value norm turns it round. The sinks
 * score 1.344707 + 1; the cut-off is 4 at 5 / (1 + e).
 * Step 7 holds 0-4 and 6. The queries of 4, 5 and 6: mu = (1, 0), the
 * deviations (0, 1), (0, -1), (0, 0), S = diag(0, 2/3). z4 = 1, z6 = 2
 * (k6's second component is 0, the covariance adds nothing): 4 scores
 * 5 / (1 + e) = 1.344707, 6 scores 2e / (1 + e) = 1.462117; 4 goes, the
 * cut-off is 6 at 2e / (1 + e).
 * With B = 2, at step 3 the three held are all sinks: they tie, and the
 * two oldest stay (2 goes), without a cut-off.
 */
static void test_expected_by_hand(void **state)
{
	(void)state;
	const double q[] = {5, 5, 5, 5, 5, 5, 5, 5, 1, 1, 1, -1, 1, 0};
	const double k[] = {-1, 0, -1, 0, -1, 0, -1, 0, 1, 0, 0, 2, 2, 0};
	const double v[] = {1, 0, 1, 0, 1, 0, 1, 0, 3, 4, 1, 0, 0, 2};
	struct scene *sc = fixture_vector(7, 2, 3, 2, 1.0, q, k, v);
	const struct budget b = {3, 2, 1, 0, 0, {{{0}}}};
	const double e1 = exp(1.0);
	struct step_record rec;
	struct engine *e = run_to(sc, b, 6, &rec);
	expect_evicted(&rec, POLICY_EXPECTED, 5);
	assert_int_equal(rec.c[POLICY_EXPECTED].cutoff_pos, 4);
	assert_true(fabs(rec.c[POLICY_EXPECTED].cutoff_value - 5.0 / (1.0 + e1)) < 1e-12);
	engine_free(e);
	e = run_to(sc, b, 7, &rec);
	expect_evicted(&rec, POLICY_EXPECTED, 4);
	expect_kept(e, POLICY_EXPECTED, (const int[]){0, 1, 2, 3, 6}, 5);
	assert_int_equal(rec.c[POLICY_EXPECTED].cutoff_pos, 6);
	assert_true(fabs(rec.c[POLICY_EXPECTED].cutoff_value - 2.0 * e1 / (1.0 + e1)) < 1e-12);
	engine_free(e);
	e = run_to(sc, (struct budget){1, 1, 1, 0, 0, {{{0}}}}, 3, &rec);
	expect_evicted(&rec, POLICY_EXPECTED, 2);
	assert_int_equal(rec.c[POLICY_EXPECTED].cutoff_pos, -1);
	engine_free(e);
	scene_free(sc);
}

/*
 * ExpectedAttentionPress' rotation of the statistics, by hand, head size
 * 4. Pair 0 turned by c = .6, s = .8, pair 1 by c = 0, s = 1 (a quarter
 * turn). Llama's pairs (0, 1), (2, 3): mu = (1, 2, 3, 4) becomes
 * (.6 - 1.6, .8 + 1.2, -4, 3) = (-1, 2, -4, 3); S = diag(1, 4, 9, 16)
 * becomes per pair [[c^2 a + s^2 b, cs (a - b)], [cs (a - b), s^2 a +
 * c^2 b]]: (2.92, -1.44; -1.44, 2.08) and (16, 0; 0, 9), zeros across
 * the pairs. NeoX's pairs (0, 2), (1, 3): mu becomes (.6 - 2.4, -4,
 * .8 + 1.8, 2) = (-1.8, -4, 2.6, 2); S's (0, 2) block (.36 + 5.76,
 * .48 (1 - 9), ., .64 + 3.24) = (6.12, -3.84; -3.84, 3.88), its (1, 3)
 * block (16, 0; 0, 4).
 * The mean over 512 positions from 10 of a pair with angle p (freq 1,
 * scale .5, divisor .5): sum cos p = (sin(521.5) - sin(9.5)) / (2 sin .5),
 * sum sin p = (cos(9.5) - cos(521.5)) / (2 sin .5); a pair of frequency 0
 * does not turn (c = 1, s = 0 exactly).
 */
static void test_expected_rope_by_hand(void **state)
{
	(void)state;
	const double cs[] = {.6, 0}, sn[] = {.8, 1};
	const float freq[] = {0.0f, 1.0f}, div[] = {1.0f, 0.5f};
	for (int neox = 0; neox < 2; neox++) {
		const struct policy_rope rope = {
		        .neox = neox, .scale = 0.5f, .freq = freq, .div = div};
		double mu[] = {1, 2, 3, 4};
		double cov[16] = {1, 0, 0, 0, 0, 4, 0, 0, 0, 0, 9, 0, 0, 0, 0, 16};
		policy_rope_turn(&rope, 4, cs, sn, mu, cov);
		const double want_mu[2][4] = {{-1, 2, -4, 3}, {-1.8, -4, 2.6, 2}};
		const double want_cov[2][16] = {
		        {2.92, -1.44, 0, 0, -1.44, 2.08, 0, 0, 0, 0, 16, 0, 0, 0, 0, 9},
		        {6.12, 0, -3.84, 0, 0, 16, 0, 0, -3.84, 0, 3.88, 0, 0, 0, 0, 4}};
		for (int i = 0; i < 4; i++)
			assert_true(fabs(mu[i] - want_mu[neox][i]) < 1e-12);
		for (int i = 0; i < 16; i++)
			assert_true(fabs(cov[i] - want_cov[neox][i]) < 1e-12);
		double c[2], s[2];
		policy_rope_mean(&rope, 4, 10, c, s);
		assert_true(c[0] == 1.0 && s[0] == 0.0);
		const double d = 2.0 * sin(0.5) * 512.0;
		assert_true(fabs(c[1] - (sin(521.5) - sin(9.5)) / d) < 1e-6);
		assert_true(fabs(s[1] - (cos(9.5) - cos(521.5)) / d) < 1e-6);
	}
}

/*
 * SnapKV's choice at the prompt's end, worked by hand on its rule
 * (policy_snap_select): 7 entries, a window of the last 2 (positions 5
 * and 6), two query heads whose observed weights before the window are
 *   head 0  .5 .1 0  .2 0        head 1  0 .1 .5 0 .2
 * The pool of five, zeros outside positions 0..4, each sum over 5:
 *   head 0  .6 .8 .8 .3 .2 /5 = .12 .16 .16 .06 .04
 *   head 1  .6 .6 .8 .8 .7 /5 = .12 .12 .16 .16 .14
 *   mean    .12 .14 .16 .11 .09
 * B = 4 keeps the window and the two best: positions 2 (.16) and 1 (.14);
 * 0, 3 and 4 go, cut-off position 1 at .14. Unpooled, the means (.25 .1
 * .25 .1 .1) would have kept 0 and 2: the pool moves the choice to the
 * neighbours of the attended. B = 2, no more than the window, keeps 5 6.
 */
static void test_snapkv_select_by_hand(void **state)
{
	(void)state;
	const int pos[] = {0, 1, 2, 3, 4, 5, 6};
	const double zero[7] = {0};
	const double obs[] = {.5, .1, 0, .2, 0, .3, .3, 0, .1, .5, 0, .2, .1, .1};
	double rank[7];
	const struct policy_cache c = {.len = 7,
	                               .pos = pos,
	                               .score = zero,
	                               .w = zero,
	                               .observed = obs,
	                               .heads = 2,
	                               .window = 2,
	                               .rank = rank};
	unsigned char gone[7] = {0};
	const int cut = policy_snap_select(&c, 4, gone);
	const unsigned char want[] = {1, 0, 0, 1, 1, 0, 0};
	assert_memory_equal(gone, want, sizeof want);
	assert_int_equal(cut, 1);
	const double mean[] = {.12, .14, .16, .11, .09};
	for (int j = 0; j < 5; j++)
		assert_true(fabs(rank[j] - mean[j]) < 1e-12);
	unsigned char gone2[7] = {0};
	assert_int_equal(policy_snap_select(&c, 2, gone2), -1);
	const unsigned char want2[] = {1, 1, 1, 1, 1, 0, 0};
	assert_memory_equal(gone2, want2, sizeof want2);
}

/*
 * SnapKV through the engine: 72 tokens, a prompt of 70, every attention
 * row uniform (row q gives each of its q + 1 positions 1 / (q + 1)). The
 * window is the last 64 prompt queries (positions 6..69), so every
 * position 0..5 before it is observed equally, o = the mean of 1 / (q + 1)
 * over q = 6..69; pooled with zeros beyond 0..5 they score 3o/5 4o/5 o o
 * 4o/5 3o/5. B = 66 keeps the window and the two best, 2 and 3 (a tie:
 * the cut-off is the higher, 3, at o); 0 1 4 5 go at step 70. At step 71
 * SnapKV keeps the new token (67 held); the bounded form keeps 2 and 3
 * for good and drops the oldest of the rest, position 6.
 */
static void test_snapkv_engine_by_hand(void **state)
{
	(void)state;
	enum { N = 72, P = 70 };
	double *rows = malloc(scene_attn_offset(N) * sizeof *rows);
	for (int q = 0; q < N; q++)
		for (int j = 0; j <= q; j++)
			rows[scene_attn_offset(q) + (size_t)j] = 1.0 / (q + 1);
	struct scene *sc = fixture_attention(N, 1, 33, 33, rows, NULL, NULL);
	sc->prompt = P;
	const struct budget b = {33, 33, 4, 0, P, {{{0}}}};
	const struct policy_budget pb = policy_budget_of(sc, &b);
	struct step_record rec;
	struct engine *e = run_to(sc, b, P, &rec);
	double o = 0.0;
	for (int q = 6; q < P; q++)
		o += 1.0 / (q + 1);
	o /= 64;
	for (int p = POLICY_SNAPKV; p <= POLICY_PYRAMIDKV_WINDOW; p++) {
		const struct cache_record *r = &rec.c[p];
		assert_int_equal(r->n_evicted, 4);
		const int want[] = {0, 1, 4, 5};
		for (int i = 0; i < 4; i++)
			assert_int_equal(r->evicted[i], want[i]);
		assert_int_equal(r->cutoff_pos, 3);
		assert_true(fabs(r->cutoff_value - o) < 1e-12);
		assert_int_equal(engine_len(e, (enum policy_id)p), 66);
	}
	engine_free(e);
	e = run_to(sc, b, P + 1, &rec);
	assert_int_equal(rec.c[POLICY_SNAPKV].n_evicted, 0);
	assert_int_equal(engine_len(e, POLICY_SNAPKV), 67);
	expect_evicted(&rec, POLICY_SNAPKV_WINDOW, 6);
	assert_int_equal(engine_positions(e, POLICY_SNAPKV_WINDOW)[0], 2);
	assert_int_equal(engine_positions(e, POLICY_SNAPKV_WINDOW)[1], 3);
	assert_int_equal(policies[POLICY_SNAPKV_WINDOW]->region(&pb, P + 1, 3), POLICY_REGION_OLD);
	assert_int_equal(policies[POLICY_SNAPKV_WINDOW]->region(&pb, P + 1, 7),
	                 POLICY_REGION_RECENT);
	/* One layer: PyramidKV's schedule is B, and its bounded form holds
	 * as the bounded SnapKV does. */
	assert_int_equal(rec.c[POLICY_PYRAMIDKV].n_evicted, 0);
	expect_evicted(&rec, POLICY_PYRAMIDKV_WINDOW, 6);
	assert_int_equal(engine_positions(e, POLICY_PYRAMIDKV_WINDOW)[0], 2);
	assert_int_equal(engine_positions(e, POLICY_PYRAMIDKV_WINDOW)[1], 3);
	assert_int_equal(engine_len(e, POLICY_PYRAMIDKV_WINDOW), 66);
	engine_free(e);
	scene_free(sc);
	free(rows);
}

/*
 * PyramidKV's schedule, worked by hand from KVCache-Factory's formula with
 * B = 320 (its default max_capacity_prompt, 256 + 64) and W = 64:
 * min = 256 / 20 = 12, max = 2 * 256 - 12 = 500.
 * - P = 1000, 4 layers: P - W = 936 > 500; steps = (500 - 12) / 3 = 162;
 *   the layers keep 500 338 176 14 before the window: 564 402 240 78.
 * - P = 600, 4 layers: P - W = 536 > 500 still; the same.
 * - P = 560, 4 layers: max 500 >= 496 = P - W, so max = 496 and
 *   min = 512 - 496 = 16; steps = 480 / 3 = 160: 496 336 176 16, plus 64.
 * - P = 500 < 2 * 256: every layer keeps B. One layer, or B <= W: B.
 */
static void test_pyramid_budget_by_hand(void **state)
{
	(void)state;
	struct policy_budget b = {160, 160, 4, 2000, 1000, 4, 0, 0, {{{0}}}};
	const int p1000[] = {564, 402, 240, 78}, p560[] = {560, 400, 240, 80};
	for (int l = 0; l < 4; l++)
		assert_int_equal(policy_pyramid_budget(&b, l), p1000[l]);
	b.prompt = 600;
	for (int l = 0; l < 4; l++)
		assert_int_equal(policy_pyramid_budget(&b, l), p1000[l]);
	b.prompt = 560;
	for (int l = 0; l < 4; l++)
		assert_int_equal(policy_pyramid_budget(&b, l), p560[l]);
	b.prompt = 500;
	assert_int_equal(policy_pyramid_budget(&b, 3), 320);
	b.prompt = 1000;
	b.layers = 1;
	assert_int_equal(policy_pyramid_budget(&b, 0), 320);
	b = (struct policy_budget){30, 30, 4, 2000, 1000, 4, 0, 0, {{{0}}}};
	assert_int_equal(policy_pyramid_budget(&b, 3), 60);
}

/*
 * pyramidkv-win's budgets: the schedule with its own window, less the
 * layers' excess over L x B, one a layer from the lowest, round and round.
 * - B = 32, W = 8, P = 64, five layers: min = 24 / 20 = 1, max = 47,
 *   steps = 46 / 4 = 11: 47 36 25 14 3 plus 8 = 55 44 33 22 11, 165 in
 *   all, 5 over 160: each layer one less, 54 43 32 21 10.
 * - B = 41, W = 8, P = 200, four layers: min = 1, max = 65, steps = 64 / 3
 *   = 21: 73 52 31 10, 166, 2 over 164: layers 0 and 1 one less.
 * - The same on six layers: steps = 12: 73 61 49 37 25 13, 258, 12 over
 *   246: two less each.
 * - No excess (P < 2 (B - W)): B for every layer. PyramidKV's own schedule
 *   is untouched.
 */
static void test_pyramid_held_by_hand(void **state)
{
	(void)state;
	struct policy_budget b = {16, 16, 4, 400, 64, 5, 0, 0, {{{0}}}};
	b.set.p[POLICY_PYRAMIDKV_WINDOW].window = 8;
	b.set.p[POLICY_PYRAMIDKV].window = 8;
	const int five[] = {54, 43, 32, 21, 10}, four[] = {72, 51, 31, 10};
	const int six[] = {71, 59, 47, 35, 23, 11};
	for (int l = 0; l < 5; l++)
		assert_int_equal(policy_pyramid_held(&b, l), five[l]);
	assert_int_equal(policy_pyramid_budget(&b, 0), 55);
	b.heavy = 21;
	b.recent = 20;
	b.prompt = 200;
	b.layers = 4;
	for (int l = 0; l < 4; l++)
		assert_int_equal(policy_pyramid_held(&b, l), four[l]);
	b.layers = 6;
	for (int l = 0; l < 6; l++)
		assert_int_equal(policy_pyramid_held(&b, l), six[l]);
	b.prompt = 60;
	for (int l = 0; l < 6; l++)
		assert_int_equal(policy_pyramid_held(&b, l), 41);
}

/* policy_hold on positions 0 1 2 | 10 11 12 13 with the selected before
 * 10: B = 5 keeps 0 1 2 and the two newest, 12 13; with everything before
 * BEFORE more than B (no selection), the 5 newest. */
static void test_hold_by_hand(void **state)
{
	(void)state;
	const int pos[] = {0, 1, 2, 10, 11, 12, 13};
	const struct policy_cache c = {.len = 7, .pos = pos};
	unsigned char gone[7] = {0};
	policy_hold(&c, 5, 10, gone);
	const unsigned char want[] = {0, 0, 0, 1, 1, 0, 0};
	assert_memory_equal(gone, want, sizeof want);
	unsigned char gone2[7] = {0};
	policy_hold(&c, 2, 10, gone2);
	const unsigned char want2[] = {1, 1, 1, 1, 1, 0, 0};
	assert_memory_equal(gone2, want2, sizeof want2);
	unsigned char gone3[7] = {0};
	policy_hold(&c, 7, 10, gone3);
	assert_null(memchr(gone3, 1, sizeof gone3));
}

/*
 * ObservedAttention on the explainer's rows with a prompt of 5 and B = 3
 * (heavy 2 + recent 1). At step 5 the column sums are The 1.78, cat 1.58,
 * sat 0.91, because 0.51, it 0.22, seen by 5 4 3 2 1 queries: means .356
 * .395 .303 .255 .22. The three largest, cat The sat, stay; because and it,
 * the two newest, go (H2O keeps it as its recent one, and The and cat for
 * their sums). The cut-off is sat at 0.91 / 3. At step 6 it keeps the new
 * token: 4 held.
 */
static void test_observed_by_hand(void **state)
{
	(void)state;
	struct scene *sc = fixture_attention(7, 2, 2, 1, cat_rows, NULL, NULL);
	sc->prompt = 5;
	const struct budget b = {2, 1, 1, 0, 5, {{{0}}}};
	struct step_record rec;
	struct engine *e = run_to(sc, b, 5, &rec);
	const struct cache_record *r = &rec.c[POLICY_OBSERVED];
	assert_int_equal(r->n_evicted, 2);
	assert_int_equal(r->evicted[0], 3);
	assert_int_equal(r->evicted[1], 4);
	expect_kept(e, POLICY_OBSERVED, (const int[]){0, 1, 2}, 3);
	assert_int_equal(r->cutoff_pos, 2);
	assert_true(fabs(r->cutoff_value - 0.91 / 3) < 1e-12);
	expect_kept(e, POLICY_H2O, (const int[]){0, 1, 4}, 3);
	engine_free(e);
	e = run_to(sc, b, 6, &rec);
	assert_int_equal(rec.c[POLICY_OBSERVED].n_evicted, 0);
	expect_kept(e, POLICY_OBSERVED, (const int[]){0, 1, 2, 5}, 4);
	engine_free(e);
	scene_free(sc);
}

/*
 * observed-win on the same: at step 5 observed's choice (3 and 4 go, sat
 * the cut-off). At step 6 it holds B = 3: its cache 0 1 2 5 weighs row 5's
 * .10 .25 .12 .15 over their sum .62, so the sums become The 1.78 + .10 /
 * .62, cat 1.58 + .25 / .62, sat 0.91 + .12 / .62 and the new token .15 /
 * .62, seen by 6 5 4 1 queries: means .324 .397 .276 .242. The new token
 * goes; sat is the cut-off at (0.91 + .12 / .62) / 4.
 */
static void test_observed_window_by_hand(void **state)
{
	(void)state;
	struct scene *sc = fixture_attention(7, 2, 2, 1, cat_rows, NULL, NULL);
	sc->prompt = 5;
	const struct budget b = {2, 1, 1, 0, 5, {{{0}}}};
	struct step_record rec;
	struct engine *e = run_to(sc, b, 5, &rec);
	const struct cache_record *r = &rec.c[POLICY_OBSERVED_WINDOW];
	assert_int_equal(r->n_evicted, 2);
	assert_int_equal(r->evicted[0], 3);
	assert_int_equal(r->evicted[1], 4);
	assert_int_equal(r->cutoff_pos, 2);
	assert_true(fabs(r->cutoff_value - 0.91 / 3) < 1e-12);
	engine_free(e);
	e = run_to(sc, b, 6, &rec);
	expect_evicted(&rec, POLICY_OBSERVED_WINDOW, 5);
	expect_kept(e, POLICY_OBSERVED_WINDOW, (const int[]){0, 1, 2}, 3);
	assert_int_equal(r->cutoff_pos, 2);
	assert_true(fabs(r->cutoff_value - (0.91 + 0.12 / 0.62) / 4) < 1e-12);
	engine_free(e);
	scene_free(sc);
}

/* Given sinks: S = 2 of B = 3 keep positions 0 and 1 for good. */
static void test_streaming_sinks(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(12, 2, 1, 2, 8);
	struct step_record rec;
	struct engine *e = run_to(sc, (struct budget){1, 2, 2, 0, 0, {{{0}}}}, 12, &rec);
	expect_kept(e, POLICY_STREAMING, (const int[]){0, 1, 11}, 3);
	engine_free(e);
	/* S = 0 is a plain window. */
	e = run_to(sc, (struct budget){1, 2, 0, 0, 0, {{{0}}}}, 12, &rec);
	expect_kept(e, POLICY_STREAMING, (const int[]){9, 10, 11}, 3);
	expect_kept(e, POLICY_WINDOW, (const int[]){9, 10, 11}, 3);
	engine_free(e);
	scene_free(sc);
}

static void test_default_sinks(void **state)
{
	(void)state;
	/* 4, as streaming-llm's start_size, never more than B - 1. */
	assert_int_equal(policy_default_sinks(1), 0);
	assert_int_equal(policy_default_sinks(2), 1);
	assert_int_equal(policy_default_sinks(4), 3);
	assert_int_equal(policy_default_sinks(5), 4);
	assert_int_equal(policy_default_sinks(8), 4);
	assert_int_equal(policy_default_sinks(16), 4);
	assert_int_equal(policy_default_sinks(1024), 4);
}

static void test_table(void **state)
{
	(void)state;
	const struct policy_budget b = {3, 2, 1, 50, 0, 0, 0, 0, {{{0}}}};
	for (int p = 0; p < POLICY_COUNT; p++) {
		const struct policy *pol = policies[p];
		assert_int_equal(policy_find(pol->name), p);
		assert_non_null(pol->title);
		assert_non_null(pol->about);
		assert_non_null(pol->rule);
		assert_non_null(pol->region);
		assert_non_null(pol->region_budget);
		assert_true(pol->region_name[0] || pol->region_name[1]);
		/* An unused region holds nothing; the policy as a whole keeps
		 * the budget every policy shares, or everything. */
		for (int r = POLICY_REGION_OLD; r <= POLICY_REGION_RECENT; r++)
			if (!pol->region_name[r])
				assert_int_equal(pol->region_budget(&b, (enum policy_region)r), 0);
		/* (One that grows after a prompt no longer than B holds the
		 * whole scene.) */
		const int cap = policy_capacity((enum policy_id)p, &b);
		assert_true(cap == -1 || cap == (pol->grows ? b.n : b.heavy + b.recent));
	}
	assert_int_equal(policy_find("lru"), -1);
	assert_int_equal(policy_capacity(POLICY_FULL, &b), -1);
	assert_int_equal(policies[POLICY_H2O]->region_budget(&b, POLICY_REGION_OLD), 3);
	assert_int_equal(policies[POLICY_STREAMING]->region_budget(&b, POLICY_REGION_OLD), 1);
	assert_int_equal(policies[POLICY_STREAMING]->region_budget(&b, POLICY_REGION_RECENT), 4);
}

static void expect_words(enum policy_id p, const struct policy_budget *b, struct policy_loss loss,
                         enum policy_voice voice, const char *before, const char *after,
                         const char *note)
{
	struct policy_words w;
	policy_word(p, b, &loss, voice, &w);
	assert_string_equal(w.before, before);
	assert_int_equal(w.cutoff_pos, loss.cutoff_pos);
	assert_string_equal(w.after, after);
	assert_string_equal(w.note, note);
}

/* The words of the panels, the story and the inspector (sat at step 5 of
 * the explainer's example, and the first eviction with heavy 0). */
static void test_words(void **state)
{
	(void)state;
	const struct policy_budget b = {2, 2, 1, 7, 0, 0, 0, 0, {{{0}}}},
	                           b0 = {0, 3, 1, 7, 0, 0, 0, 0, {{{0}}}};
	const struct policy_loss sat = {0.91, 0.20, 1, 1.58}, window = {1.6, 0.2, -1, 0.0};
	expect_words(POLICY_H2O, &b, sat, POLICY_VOICE_BRIEF, "< 1.58 ", "", "");
	expect_words(POLICY_H2O, &b, sat, POLICY_VOICE_SENTENCE, "score 0.91 < cut-off 1.58 (", ")",
	             "");
	expect_words(POLICY_H2O, &b0, window, POLICY_VOICE_BRIEF, "left the window", "", "");
	expect_words(POLICY_H2O, &b0, window, POLICY_VOICE_SENTENCE,
	             "heavy is 0, so only the 3 newest tokens stay", "", "");
	expect_words(POLICY_WINDOW, &b, window, POLICY_VOICE_SENTENCE,
	             "only the 4 newest tokens stay", "", "");
	/* TOVA compares this step's weights: The's 0.08 against sat's 0.20. */
	const struct policy_loss the = {1.78, 0.08, 2, 0.20};
	expect_words(POLICY_TOVA, &b, the, POLICY_VOICE_BRIEF, "attn 0.08 < 0.20 ", "", "");
	expect_words(POLICY_TOVA, &b, the, POLICY_VOICE_SENTENCE, "attn 0.08 < cut-off 0.20 (", ")",
	             "");
	/* Key norm's cut-off value is the largest kept norm. */
	const struct policy_loss big = {0.5, 0.1, 2, 2.0};
	expect_words(POLICY_KNORM, &b, big, POLICY_VOICE_BRIEF, "key norm > 2.00 ", "", "");
	expect_words(POLICY_KNORM, &b, big, POLICY_VOICE_SENTENCE,
	             "its key's norm is above the largest kept, 2.00 (", ")", "");
	expect_words(POLICY_KNORM, &b, window, POLICY_VOICE_SENTENCE,
	             "no keys in an attention scene: only the 4 newest tokens stay", "", "");
	/* The random draw and KeyDiff's cosine (minus its score). */
	const struct policy_loss draw = {0.5, 0.1, 2, 0.213}, cos = {0.5, 0.1, 2, -0.894};
	expect_words(POLICY_RANDOM, &b, draw, POLICY_VOICE_BRIEF, "draw < 0.21 ", "", "");
	expect_words(POLICY_RANDOM, &b, draw, POLICY_VOICE_SENTENCE,
	             "its random draw is below the lowest kept, 0.21 (", ")", "");
	expect_words(POLICY_KEYDIFF, &b, cos, POLICY_VOICE_BRIEF, "cos > 0.89 ", "", "");
	expect_words(POLICY_KEYDIFF, &b, cos, POLICY_VOICE_SENTENCE,
	             "its key is more like the mean key than the least like kept, cos 0.89 (", ")",
	             "");
	/* Enough decimals to tell the two apart, and a tie said so. */
	expect_words(POLICY_H2O, &b, (struct policy_loss){0.911, 0, 3, 0.914}, POLICY_VOICE_BRIEF,
	             "< 0.914 ", "", "");
	expect_words(POLICY_H2O, &b, (struct policy_loss){0.5, 0, 3, 0.5}, POLICY_VOICE_SENTENCE,
	             "score 0.50 = cut-off 0.50 (", ")", ", a tie: the lower position stays");
}

/* H2O's token 4 with recent 3 is recent at steps 5-7 and heavy from step
 * 8; with recent 0 it never was recent. No other policy promotes. */
static void test_promotion(void **state)
{
	(void)state;
	const struct policy_budget b = {2, 3, 1, 20, 0, 0, 0, 0, {{{0}}}},
	                           b0 = {2, 0, 1, 20, 0, 0, 0, 0, {{{0}}}};
	assert_int_equal(policy_promoted_at(POLICY_H2O, &b, 4), 8);
	assert_int_equal(policies[POLICY_H2O]->region(&b, 7, 4), POLICY_REGION_RECENT);
	assert_int_equal(policies[POLICY_H2O]->region(&b, 8, 4), POLICY_REGION_OLD);
	assert_int_equal(policy_promoted_at(POLICY_H2O, &b0, 4), 0);
	for (int p = 0; p < POLICY_COUNT; p++)
		if (p != POLICY_H2O)
			assert_int_equal(policy_promoted_at((enum policy_id)p, &b, 4), 0);
}

/* Invariants for every policy on random scenes. */
static void test_every_policy_within_budget(void **state)
{
	(void)state;
	const int budgets[][2] = {{1, 1}, {3, 2}, {0, 4}, {4, 0}, {6, 6}};
	for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
		const int B = budgets[i][0] + budgets[i][1];
		struct scene *sc = fixture_random(50, 4, budgets[i][0], budgets[i][1], (unsigned)i);
		const struct budget b = {
		        budgets[i][0], budgets[i][1], policy_default_sinks(B), 0, 0, {{{0}}}};
		const struct policy_budget pb = policy_budget_of(sc, &b);
		struct engine *e = engine_new(sc, &b);
		struct step_record rec;
		while (engine_step(e, &rec)) {
			for (int p = 0; p < POLICY_COUNT; p++) {
				const int len = engine_len(e, p);
				const int cap = policy_capacity((enum policy_id)p, &pb);
				assert_int_equal(len, cap < 0 || rec.step < cap ? rec.step : cap);
				/* Each region within its budget. */
				int count[2] = {0, 0};
				for (int j = 0; j < len; j++)
					count[policies[p]->region(&pb, rec.step,
					                          engine_positions(e, p)[j])]++;
				for (int r = 0; r < 2; r++) {
					const int most = policies[p]->region_budget(
					        &pb, (enum policy_region)r);
					assert_true(most < 0 || count[r] <= most);
				}
				double sum = 0;
				for (int j = 0; j < rec.c[p].n_attended; j++)
					sum += rec.c[p].attn[j];
				assert_true(fabs(sum - 1.0) < 1e-12);
				assert_true(rec.c[p].m.attn_recall <= 1.0 + 1e-12);
			}
			/* The window always holds the newest B positions. */
			const int wl = engine_len(e, POLICY_WINDOW);
			assert_int_equal(engine_positions(e, POLICY_WINDOW)[0], rec.step - wl);
		}
		engine_free(e);
		scene_free(sc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_cat_sat_step5_every_policy),
	        cmocka_unit_test(test_tova_tie_evicts_new_token),
	        cmocka_unit_test(test_knorm_by_hand),
	        cmocka_unit_test(test_random_by_hand),
	        cmocka_unit_test(test_keydiff_by_hand),
	        cmocka_unit_test(test_expected_by_hand),
	        cmocka_unit_test(test_expected_rope_by_hand),
	        cmocka_unit_test(test_snapkv_select_by_hand),
	        cmocka_unit_test(test_snapkv_engine_by_hand),
	        cmocka_unit_test(test_pyramid_budget_by_hand),
	        cmocka_unit_test(test_pyramid_held_by_hand),
	        cmocka_unit_test(test_hold_by_hand),
	        cmocka_unit_test(test_observed_by_hand),
	        cmocka_unit_test(test_observed_window_by_hand),
	        cmocka_unit_test(test_streaming_sinks),
	        cmocka_unit_test(test_default_sinks),
	        cmocka_unit_test(test_table),
	        cmocka_unit_test(test_words),
	        cmocka_unit_test(test_promotion),
	        cmocka_unit_test(test_every_policy_within_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
