/*
 * Unit tests of the engine: numbers worked by hand (the explainer's example
 * and a small vector scene) and invariants on random scenes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "h2o/engine.h"
#include "scene_fixture.h"

#define H POLICY_H2O
#define F POLICY_FULL

/* An engine with H2O's budgets (and the default sinks). */
static struct engine *engine_hr(const struct scene *sc, int heavy, int recent)
{
	const struct budget b = {heavy, recent,     policy_default_sinks(heavy + recent),
	                         0,     sc->prompt, {{{0}}}};
	return engine_new(sc, &b);
}

/* How many of H2O's kept positions are in its recent region. */
static inline int recent_len(const struct engine *e)
{
	const int len = engine_len(e, H), recent = engine_budget(e)->recent;
	return recent < len ? recent : len;
}

#define EPS 1e-12

/* The explainer's rows 1-5 (design §2), and two free rows. */
static const double cat_rows[] = {
        1.00,                                     /* The */
        0.45, 0.55,                               /* cat */
        0.15, 0.45, 0.40,                         /* sat */
        0.10, 0.30, 0.31, 0.29,                   /* because */
        0.08, 0.28, 0.20, 0.22, 0.22,             /* it */
        0.10, 0.25, 0.12, 0.18, 0.20, 0.15,       /* was */
        0.08, 0.22, 0.10, 0.15, 0.20, 0.12, 0.13, /* tired */
};

static struct scene *cat_sat(void)
{
	return fixture_attention(7, 2, 2, 2, cat_rows, NULL, NULL);
}

static void step_to(struct engine *e, int t, struct step_record *rec)
{
	while (engine_step_count(e) < t)
		assert_true(engine_step(e, rec));
}

static void test_cat_sat_step5(void **state)
{
	(void)state;
	struct scene *sc = cat_sat();
	struct engine *e = engine_hr(sc, 2, 2);
	struct step_record rec;
	step_to(e, 5, &rec);

	/* Explainer section 8: scores 1.78 1.58 0.91 0.51 0.22. */
	const double want[] = {1.78, 1.58, 0.91, 0.51, 0.22};
	assert_int_equal(rec.c[H].n_attended, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(rec.c[H].attended[i], i);
		assert_true(fabs(rec.c[H].scores[i] - want[i]) < EPS);
		/* Nothing was evicted before: H2O saw the given row. */
		assert_true(fabs(rec.c[H].attn[i] - cat_rows[10 + i]) < EPS);
	}
	/* sat evicted; it had to beat cat's 1.58. */
	assert_int_equal(rec.c[H].n_evicted, 1);
	assert_int_equal(rec.c[H].evicted[0], 2);
	assert_true(fabs(rec.c[H].evicted_scores[0] - 0.91) < EPS);
	assert_int_equal(rec.c[H].cutoff_pos, 1);
	assert_true(fabs(rec.c[H].cutoff_value - 1.58) < EPS);

	/* The cache is [The, cat, because, it]: heavy [0, 1], recent [3, 4]. */
	const int kept[] = {0, 1, 3, 4};
	assert_int_equal(engine_len(e, H), 4);
	assert_int_equal(recent_len(e), 2);
	for (int i = 0; i < 4; i++)
		assert_int_equal(engine_positions(e, H)[i], kept[i]);
	assert_int_equal(rec.c[H].m.tokens, 4);
	assert_int_equal(rec.c[H].m.kv, 16);
	assert_int_equal(rec.c[F].m.tokens, 5);
	assert_int_equal(rec.c[F].m.kv, 20);
	assert_true(fabs(rec.c[H].m.attn_recall - 1.0) < EPS);
	engine_free(e);
	scene_free(sc);
}

static void test_cat_sat_end(void **state)
{
	(void)state;
	struct scene *sc = cat_sat();
	struct engine *e = engine_hr(sc, 2, 2);
	struct step_record rec;
	step_to(e, 7, &rec);
	assert_false(engine_step(e, &rec));
	/* Explainer section 10: full 7 tokens / 28 KV, H2O 4 / 16. */
	assert_int_equal(rec.c[F].m.tokens, 7);
	assert_int_equal(rec.c[F].m.kv, 28);
	assert_int_equal(rec.c[H].m.tokens, 4);
	assert_int_equal(rec.c[H].m.kv, 16);
	/* Step 6 evicted because, step 7 it (worked in scenes/README.md). */
	const int kept[] = {0, 1, 5, 6};
	for (int i = 0; i < 4; i++)
		assert_int_equal(engine_positions(e, H)[i], kept[i]);
	/* At step 7 H2O attended The, cat, it, was, tired: the full cache's
	 * mass there is 0.08 + 0.22 + 0.20 + 0.12 + 0.13. */
	assert_true(fabs(rec.c[H].m.attn_recall - 0.75) < EPS);
	/* ...and renormalised the given row over them. */
	assert_true(fabs(rec.c[H].attn[1] - 0.22 / 0.75) < EPS);
	engine_free(e);
	scene_free(sc);
}

/*
 * A vector scene worked by hand. dim 2, scale ln 2, every query (1, 0), and
 * key i = (i, 0): the logit of position j is j ln 2, so weights are in the
 * ratio 1 : 2 : 4 : 8. heavy 1, recent 1.
 */
static void test_vector_by_hand(void **state)
{
	(void)state;
	const double q[] = {1, 0, 1, 0, 1, 0, 1, 0};
	const double k[] = {0, 0, 1, 0, 2, 0, 3, 0};
	const double v[] = {1, 0, 0, 1, 1, 1, 2, 0};
	struct scene *sc = fixture_vector(4, 2, 1, 1, log(2.0), q, k, v);
	struct engine *e = engine_hr(sc, 1, 1);
	struct step_record rec;

	step_to(e, 2, &rec); /* 1/3, 2/3: within budget 2 */
	assert_int_equal(rec.c[H].n_evicted, 0);
	assert_true(fabs(rec.c[H].attn[0] - 1.0 / 3) < EPS);
	assert_true(fabs(rec.c[H].attn[1] - 2.0 / 3) < EPS);

	step_to(e, 3, &rec); /* 1/7 2/7 4/7, then evict position 1 */
	assert_true(fabs(rec.c[H].scores[0] - 31.0 / 21) < EPS); /* 1 + 1/3 + 1/7 */
	assert_true(fabs(rec.c[H].scores[1] - 20.0 / 21) < EPS); /* 2/3 + 2/7 */
	assert_true(fabs(rec.c[H].scores[2] - 4.0 / 7) < EPS);
	assert_int_equal(rec.c[H].n_evicted, 1);
	assert_int_equal(rec.c[H].evicted[0], 1);
	assert_int_equal(rec.c[H].cutoff_pos, 0);
	/* o = 1/7 (1,0) + 2/7 (0,1) + 4/7 (1,1) = (5/7, 6/7); nothing evicted
	 * before this step, so H2O's output is exact. */
	assert_true(fabs(rec.c[H].out[0] - 5.0 / 7) < EPS);
	assert_true(fabs(rec.c[H].out[1] - 6.0 / 7) < EPS);
	assert_true(fabs(rec.c[H].m.out_err) < EPS);
	assert_true(fabs(rec.c[H].m.out_cos - 1.0) < EPS);

	step_to(e, 4, &rec); /* H2O attends 0, 2, 3: 1/13 4/13 8/13 */
	assert_true(fabs(rec.c[H].attn[0] - 1.0 / 13) < EPS);
	assert_true(fabs(rec.c[H].attn[1] - 4.0 / 13) < EPS);
	assert_true(fabs(rec.c[H].attn[2] - 8.0 / 13) < EPS);
	assert_true(fabs(rec.c[F].attn[1] - 2.0 / 15) < EPS);
	/* o_H = (21/13, 4/13), o_F = (21/15, 6/15). */
	const double dx = 21.0 / 13 - 21.0 / 15, dy = 4.0 / 13 - 6.0 / 15;
	assert_true(fabs(rec.c[H].m.out_err - sqrt(dx * dx + dy * dy)) < EPS);
	const double cosv = (21.0 / 13 * 21.0 / 15 + 4.0 / 13 * 6.0 / 15) /
	                    (hypot(21.0 / 13, 4.0 / 13) * hypot(21.0 / 15, 6.0 / 15));
	assert_true(fabs(rec.c[H].m.out_cos - cosv) < EPS);
	assert_true(fabs(rec.c[H].m.attn_recall - 13.0 / 15) < EPS);
	/* Position 2 (4/7 + 4/13) loses to position 0. */
	assert_int_equal(rec.c[H].evicted[0], 2);
	assert_int_equal(engine_positions(e, H)[0], 0);
	assert_int_equal(engine_positions(e, H)[1], 3);
	engine_free(e);
	scene_free(sc);
}

/* Keys far from the query get weight exactly 0 (exp underflows), so their
 * scores tie at 0: the lower position must be kept. */
static void test_tie_keeps_lower_position(void **state)
{
	(void)state;
	const double q[] = {1, 1, 1, 1};
	const double k[] = {0, -1000, -1000, 0};
	const double v[] = {0, 0, 0, 0};
	struct scene *sc = fixture_vector(4, 1, 2, 1, 1.0, q, k, v);
	struct engine *e = engine_hr(sc, 2, 1);
	struct step_record rec;
	step_to(e, 4, &rec);
	assert_true(rec.c[H].scores[1] == 0.0 && rec.c[H].scores[2] == 0.0);
	assert_int_equal(rec.c[H].n_evicted, 1);
	assert_int_equal(rec.c[H].evicted[0], 2);
	assert_int_equal(rec.c[H].cutoff_pos, 1);
	engine_free(e);
	scene_free(sc);
}

/* heavy 0 is a sliding window of the recent newest tokens. */
static void test_heavy_zero_is_window(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(40, 4, 0, 3, 7);
	struct engine *e = engine_hr(sc, 0, 3);
	struct step_record rec;
	while (engine_step(e, &rec)) {
		const int t = rec.step, len = engine_len(e, H);
		assert_int_equal(len, t < 3 ? t : 3);
		for (int i = 0; i < len; i++)
			assert_int_equal(engine_positions(e, H)[i], t - len + i);
		assert_int_equal(rec.c[H].cutoff_pos, -1);
	}
	engine_free(e);
	scene_free(sc);
}

/* recent 0 keeps the heavy largest scores among all, the new token too. */
static void test_recent_zero_is_pure_heavy(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(40, 4, 3, 0, 11);
	struct engine *e = engine_hr(sc, 3, 0);
	struct step_record rec;
	while (engine_step(e, &rec)) {
		assert_true(engine_len(e, H) <= 3);
		assert_int_equal(recent_len(e), 0);
		/* Every evicted score is at most every kept score. */
		for (int i = 0; i < rec.c[H].n_evicted; i++)
			for (int j = 0; j < engine_len(e, H); j++)
				assert_true(rec.c[H].evicted_scores[i] <= engine_scores(e, H)[j]);
	}
	engine_free(e);
	scene_free(sc);
}

/* Invariants on random scenes of several budgets. */
static void test_invariants(void **state)
{
	(void)state;
	const int budgets[][2] = {{1, 1}, {2, 2}, {4, 1}, {0, 5}, {5, 0}, {8, 8}, {100, 100}};
	for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
		const int heavy = budgets[b][0], recent = budgets[b][1];
		struct scene *sc = fixture_random(60, 8, heavy, recent, (unsigned)b + 1);
		struct engine *e = engine_hr(sc, heavy, recent);
		struct step_record rec;
		bool evicted_yet = false;
		while (engine_step(e, &rec)) {
			double sh = 0, sf = 0, scores = 0;
			for (int i = 0; i < rec.c[H].n_attended; i++) {
				sh += rec.c[H].attn[i];
				scores += rec.c[H].scores[i];
				assert_true(rec.c[H].attn[i] > 0.0);
				if (i > 0)
					assert_true(rec.c[H].attended[i] >
					            rec.c[H].attended[i - 1]);
			}
			for (int j = 0; j <= rec.pos; j++)
				sf += rec.c[F].attn[j];
			assert_true(fabs(sh - 1.0) < 1e-12);
			assert_true(fabs(sf - 1.0) < 1e-12);
			/* Scores sum to the step count until the first eviction,
			 * and H2O's attention is the full cache's until then. */
			if (!evicted_yet) {
				assert_true(fabs(scores - rec.step) < 1e-9);
				for (int i = 0; i < rec.c[H].n_attended; i++)
					assert_true(fabs(rec.c[H].attn[i] - rec.c[F].attn[i]) <
					            EPS);
				assert_true(fabs(rec.c[H].m.attn_recall - 1.0) < EPS);
			}
			evicted_yet = evicted_yet || rec.c[H].n_evicted > 0;
			/* Never over budget, and only when over budget. */
			assert_true(engine_len(e, H) <= heavy + recent);
			assert_int_equal(rec.c[H].n_evicted,
			                 rec.c[H].n_attended > heavy + recent ? 1 : 0);
			assert_true(rec.c[H].m.attn_recall <= 1.0 + 1e-12);
			assert_true(rec.c[H].m.out_cos <= 1.0 + 1e-12);
			/* The recent newest positions are always kept. */
			const int rl = recent_len(e), len = engine_len(e, H);
			for (int i = 0; i < rl; i++)
				assert_int_equal(engine_positions(e, H)[len - 1 - i], rec.pos - i);
		}
		engine_free(e);
		scene_free(sc);
	}
}

/* The positions policy P keeps after the engine's last step are WANT. */
static void expect_kept_set(const struct engine *e, enum policy_id p, const int *want, int n)
{
	assert_int_equal(engine_len(e, p), n);
	for (int i = 0; i < n; i++)
		assert_int_equal(engine_positions(e, p)[i], want[i]);
}

/*
 * Compressing at an interval, worked by hand on the explainer's rows: B = 2
 * (heavy 1, recent 1), interval 3, no prompt, so steps 3 and 6 compress
 * (design §2: step t when t % 3 == 0) and the others only append.
 *
 *   step 3 (sat): H2O holds The cat sat, the row .15 .45 .40 whole; scores
 *     The 1.60, cat 1.00, sat 0.40. sat is the recent one; of The and cat
 *     The (1.60) stays: cat goes. Window keeps cat sat; TOVA, by this
 *     step's weights, keeps cat (.45) and sat (.40): The goes.
 *   step 4 (because): H2O holds The sat because, row .10 .31 .29 / .70;
 *     nothing goes: 3 held, B + 1.
 *   step 5 (it): The sat because it, row .08 .20 .22 .22 / .72; 4 held,
 *     B + 2 = B + interval - 1, the most a cache holds after a step. Its
 *     heavy region (positions before the recent one) holds The sat
 *     because: 3 = heavy + interval - 1, as policy_region_budget says.
 *   step 6 (was): The sat because it was, row .10 .12 .18 .20 .15 / .75;
 *     The's score is 1.60 + .10/.70 + .08/.72 + .10/.75 = 1.98730...,
 *     sat's .40 + .31/.70 + .20/.72 + .12/.75, because's .29/.70 + .22/.72
 *     + .18/.75, it's .22/.72 + .20/.75. was is recent; The is the largest
 *     of the rest: sat, because and it go at once, The is the cut-off.
 *     Window keeps it was (cat sat because go). TOVA holds cat sat
 *     because it was, row .25 .12 .18 .20 .15 / .90: cat (.25) and it
 *     (.20) stay.
 *   step 7 (tired): each appends: H2O The was tired, window it was tired,
 *     TOVA cat it tired.
 */
static void test_interval_by_hand(void **state)
{
	(void)state;
	struct scene *sc = cat_sat();
	const struct budget b = {1, 1, 1, 3, 0, {{{0}}}};
	const struct policy_budget pb = policy_budget_of(sc, &b);
	struct engine *e = engine_new(sc, &b);
	struct step_record rec;
	const int h2o_len[] = {0, 1, 2, 2, 3, 4};
	for (int t = 1; t <= 5; t++) {
		step_to(e, t, &rec);
		assert_int_equal(engine_len(e, H), h2o_len[t]);
		assert_int_equal(engine_len(e, POLICY_WINDOW), h2o_len[t]);
		assert_int_equal(engine_len(e, POLICY_TOVA), h2o_len[t]);
		assert_true(policy_compresses(&pb, t) == (t % 3 == 0));
		if (t == 3) {
			expect_kept_set(e, H, (const int[]){0, 2}, 2);
			assert_int_equal(rec.c[H].n_evicted, 1);
			assert_int_equal(rec.c[H].evicted[0], 1);
			expect_kept_set(e, POLICY_WINDOW, (const int[]){1, 2}, 2);
			expect_kept_set(e, POLICY_TOVA, (const int[]){1, 2}, 2);
		}
		if (t == 4 || t == 5)
			assert_int_equal(rec.c[H].n_evicted, 0);
		if (t == 5) {
			expect_kept_set(e, H, (const int[]){0, 2, 3, 4}, 4);
			int heavy = 0;
			for (int i = 0; i < 4; i++)
				heavy += policies[H]->region(&pb, 5, engine_positions(e, H)[i]) ==
				         POLICY_REGION_OLD;
			assert_int_equal(heavy, 3);
		}
	}
	step_to(e, 6, &rec);
	assert_true(policy_compresses(&pb, 6));
	const double the = 1.00 + 0.45 + 0.15 + 0.10 / 0.70 + 0.08 / 0.72 + 0.10 / 0.75;
	const double sat = 0.40 + 0.31 / 0.70 + 0.20 / 0.72 + 0.12 / 0.75;
	const double because = 0.29 / 0.70 + 0.22 / 0.72 + 0.18 / 0.75;
	const double it = 0.22 / 0.72 + 0.20 / 0.75;
	assert_int_equal(rec.c[H].n_attended, 5);
	const double want[] = {the, sat, because, it, 0.15 / 0.75};
	for (int i = 0; i < 5; i++)
		assert_true(fabs(rec.c[H].scores[i] - want[i]) < 1e-9);
	assert_int_equal(rec.c[H].n_evicted, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(rec.c[H].evicted[i], 2 + i);
	assert_int_equal(rec.c[H].cutoff_pos, 0);
	assert_true(fabs(rec.c[H].cutoff_value - the) < 1e-9);
	expect_kept_set(e, H, (const int[]){0, 5}, 2);
	expect_kept_set(e, POLICY_WINDOW, (const int[]){4, 5}, 2);
	expect_kept_set(e, POLICY_TOVA, (const int[]){1, 4}, 2);
	step_to(e, 7, &rec);
	expect_kept_set(e, H, (const int[]){0, 5, 6}, 3);
	expect_kept_set(e, POLICY_WINDOW, (const int[]){4, 5, 6}, 3);
	expect_kept_set(e, POLICY_TOVA, (const int[]){1, 4, 6}, 3);
	/* The bounds the panels and the report use. */
	assert_int_equal(policy_capacity(H, &pb), 4);
	assert_int_equal(policy_region_budget(H, &pb, POLICY_REGION_OLD), 3);
	assert_int_equal(policy_region_budget(H, &pb, POLICY_REGION_RECENT), 1);
	assert_int_equal(policy_capacity(POLICY_WINDOW, &pb), 4);
	assert_int_equal(policy_capacity(POLICY_SNAPKV, &pb),
	                 policy_capacity(POLICY_SNAPKV,
	                                 &(struct policy_budget){1, 1, 1, 7, 0, 0, 1, 0, {{{0}}}}));
	engine_free(e);
	scene_free(sc);
}

/*
 * On random scenes, with and without a prompt and intervals 1 to 7: a
 * policy that evicts during decoding holds its capacity at most, each
 * region within policy_region_budget, B at most after a step that
 * compresses (once past the prompt), and one more after each step that
 * does not; and an interval of 1 is the default's every step.
 */
static void test_interval_bounds(void **state)
{
	(void)state;
	const int cases[][5] = {
	        /* heavy, recent, prompt, interval, seed */
	        {2, 2, 0, 3, 1},  {1, 3, 10, 4, 2}, {3, 0, 5, 2, 3},
	        {0, 4, 20, 7, 4}, {2, 1, 2, 5, 5},  {4, 4, 0, 1, 6},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const int *x = cases[i], budget = x[0] + x[1];
		struct scene *sc = fixture_random(50, 4, x[0], x[1], (unsigned)x[4]);
		sc->prompt = x[2];
		const struct budget b = {x[0], x[1], policy_default_sinks(budget),
		                         x[3], x[2], {{{0}}}};
		const struct policy_budget pb = policy_budget_of(sc, &b);
		struct engine *e = engine_new(sc, &b);
		struct step_record rec;
		int prev[POLICY_COUNT] = {0};
		while (engine_step(e, &rec)) {
			const int t = rec.step;
			for (int p = 0; p < POLICY_COUNT; p++) {
				if (p == F || policies[p]->grows)
					continue;
				const int len = engine_len(e, p);
				assert_true(len <= policy_capacity((enum policy_id)p, &pb) ||
				            t < x[2]);
				if (t >= x[2] && (t - x[2]) % x[3] == 0)
					assert_true(len <= budget);
				else
					assert_int_equal(len, prev[p] + 1);
				int count[2] = {0, 0};
				for (int j = 0; j < len; j++)
					count[policies[p]->region(&pb, t,
					                          engine_positions(e, p)[j])]++;
				for (int r = 0; r < 2 && t >= x[2]; r++) {
					const int most = policy_region_budget(
					        (enum policy_id)p, &pb, (enum policy_region)r);
					assert_true(most < 0 || count[r] <= most);
				}
				prev[p] = len;
			}
		}
		engine_free(e);
		scene_free(sc);
	}
}

/* A snapshot restored and replayed gives bit-identical records. */
static void test_snapshot_replay(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(50, 6, 3, 2, 5);
	struct engine *a = engine_hr(sc, 3, 2), *b = engine_hr(sc, 3, 2);
	struct step_record ra, rb;
	step_to(a, 20, &ra);
	unsigned char *snap = malloc(engine_snapshot_size(a));
	engine_snapshot(a, snap);
	step_to(a, 35, &ra);
	step_to(b, 45, &rb); /* somewhere else entirely */
	engine_restore(b, snap);
	assert_int_equal(engine_step_count(b), 20);
	step_to(b, 35, &rb);
	assert_int_equal(ra.c[H].n_attended, rb.c[H].n_attended);
	assert_memory_equal(ra.c[H].attn, rb.c[H].attn,
	                    (size_t)ra.c[H].n_attended * sizeof(double));
	assert_memory_equal(ra.c[H].scores, rb.c[H].scores,
	                    (size_t)ra.c[H].n_attended * sizeof(double));
	assert_memory_equal(ra.c[F].scores, rb.c[F].scores, 35 * sizeof(double));
	for (int p = 0; p < POLICY_COUNT; p++)
		assert_true(fixture_metrics_equal(&ra.c[p].m, &rb.c[p].m));
	free(snap);
	engine_free(a);
	engine_free(b);
	scene_free(sc);
}

/* A budget larger than the scene never evicts. */
static void test_budget_beyond_scene(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(10, 2, 1000000, 1000000, 3);
	struct engine *e = engine_hr(sc, 1000000, 1000000);
	assert_non_null(e);
	struct step_record rec;
	while (engine_step(e, &rec))
		assert_int_equal(rec.c[H].n_evicted, 0);
	assert_int_equal(engine_len(e, H), 10);
	engine_free(e);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_cat_sat_step5),
	        cmocka_unit_test(test_cat_sat_end),
	        cmocka_unit_test(test_vector_by_hand),
	        cmocka_unit_test(test_tie_keeps_lower_position),
	        cmocka_unit_test(test_heavy_zero_is_window),
	        cmocka_unit_test(test_recent_zero_is_pure_heavy),
	        cmocka_unit_test(test_invariants),
	        cmocka_unit_test(test_snapshot_replay),
	        cmocka_unit_test(test_budget_beyond_scene),
	        cmocka_unit_test(test_interval_by_hand),
	        cmocka_unit_test(test_interval_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
