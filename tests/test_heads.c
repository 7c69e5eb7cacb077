/*
 * Unit tests of heads: every head runs its own caches, and the figures over
 * all heads follow the spec (KV summed, output error on the concatenated
 * outputs). The scene is worked by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "h2o/heads.h"
#include "scene_fixture.h"

/*
 * Two heads, four tokens, dim 1, heavy 1 + recent 1. Head 0 keeps going
 * back to the first token (a sink); head 1 to the second.
 *
 *   head 0: 1 | .8 .2 | .7 .2 .1 | .6 .2 .1 .1
 *   head 1: 1 | .2 .8 | .05 .75 .2 | .05 .6 .15 .2
 *
 * Head 0 at step 3: scores 2.5 .4 | .1 protected: keeps 0, evicts 1; at
 * step 4 it attends 0 2 3 (.6 .1 .1 renormalised: .75 .125 .125), scores
 * 3.25 .225 | .125: keeps 0, evicts 2. Head 1 at step 3: scores 1.25 1.55 |
 * .2: keeps 1, evicts 0; at step 4 attends 1 2 3 (.6 .15 .2 / .95), scores
 * 2.18 .36 | .21: keeps 1, evicts 2.
 */
static const double rows[] = {
        1, .8, .2, .7,  .2,  .1, .6,  .2, .1,  .1, /* head 0 */
        1, .2, .8, .05, .75, .2, .05, .6, .15, .2, /* head 1 */
};
static const double values[] = {1, 0, 0, 0, /* head 0 */ 0, 1, 0, 0 /* head 1 */};

static struct scene *two_heads(void)
{
	struct scene *sc = fixture_attention(4, 1, 1, 1, rows, NULL, NULL);
	free(sc->attn);
	sc->attn = fixture_copy(rows, 2 * scene_attn_offset(4));
	sc->v = fixture_copy(values, 8);
	sc->heads = 2;
	return sc;
}

static void test_heads_keep_different_tokens(void **state)
{
	(void)state;
	struct scene *sc = two_heads();
	assert_int_equal(heads_count(sc), 2);
	const struct policy_budget b = {1, 1, 1, 4, NULL};
	struct heads_run run;
	assert_int_equal(heads_run_init(&run, sc, &b), 0);
	for (int t = 0; t < 4; t++)
		assert_true(heads_run_step(&run));
	assert_false(heads_run_step(&run));

	const int *k0 = engine_positions(run.e[0], POLICY_H2O);
	const int *k1 = engine_positions(run.e[1], POLICY_H2O);
	assert_int_equal(engine_len(run.e[0], POLICY_H2O), 2);
	assert_int_equal(k0[0], 0);
	assert_int_equal(k0[1], 3);
	assert_int_equal(k1[0], 1);
	assert_int_equal(k1[1], 3);
	assert_true(fabs(run.rec[0].c[POLICY_H2O].attn[0] - 0.75) < 1e-12);
	assert_true(fabs(run.rec[1].c[POLICY_H2O].attn[0] - 0.6 / 0.95) < 1e-12);

	/* Over both heads: 4 tokens, 8 KV numbers; the error of the
	 * concatenated outputs (.75, .6/.95) against (.6, .6). */
	struct step_metrics m;
	heads_run_total(&run, POLICY_H2O, &m);
	assert_int_equal(m.tokens, 4);
	assert_int_equal(m.kv, 8);
	const double a0 = 0.75, a1 = 0.6 / 0.95, f0 = 0.6, f1 = 0.6;
	assert_true(fabs(m.out_err - hypot(a0 - f0, a1 - f1)) < 1e-12);
	assert_true(fabs(m.out_cos - (a0 * f0 + a1 * f1) / (hypot(a0, a1) * hypot(f0, f1))) <
	            1e-12);
	/* Recall: head 0 attended 0 2 3 (.8 of the row), head 1 1 2 3 (.95). */
	assert_true(fabs(m.attn_recall - (0.8 + 0.95) / 2) < 1e-12);
	heads_run_done(&run);
	scene_free(sc);
}

/* A head's view is the scene with that head's block of every array. */
static void test_view(void **state)
{
	(void)state;
	struct scene *sc = two_heads();
	struct scene view;
	heads_view(sc, 1, &view);
	assert_int_equal(view.heads, 1);
	assert_ptr_equal(view.attn, sc->attn + scene_attn_offset(4));
	assert_ptr_equal(view.v, sc->v + 4);
	assert_ptr_equal(view.text, sc->text);
	assert_string_equal(heads_name(sc, 1), "");
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_heads_keep_different_tokens),
	        cmocka_unit_test(test_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
