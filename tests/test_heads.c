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

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "h2o/heads.h"
#include "h2o/policy_settings.h"
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
	const struct budget b = {1, 1, 1, 0, 0, {{{0}}}};
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

/* Two query heads over the attention rows ROWS (one block per head, N
 * tokens), sharing KV key/value heads, with a prompt of PROMPT tokens. */
static struct scene *grouped(int n, int kv, int prompt, const double *r)
{
	struct scene *sc = fixture_attention(n, 1, 1, 1, r, NULL, NULL);
	free(sc->attn);
	sc->attn = fixture_copy(r, 2 * scene_attn_offset(n));
	sc->heads = 2;
	sc->kv_heads = kv;
	sc->layers = 1;
	sc->prompt = prompt;
	return sc;
}

static bool kept_is(const struct engine *e, enum policy_id p, int a, int b)
{
	const int *k = engine_positions(e, p);
	return engine_len(e, p) == 2 && k[0] == a && k[1] == b;
}

/*
 * Two query heads sharing one key/value head, heavy 1 + recent 1:
 *
 *   head 0: 1 | .1 .9 | .1 .5 .4
 *   head 1: 1 | .9 .1 | .5 .1 .4
 *
 * The cache's score adds the mean of the two heads' weights: after step 2
 * 1.5 and .5, after step 3 1.8, .8 and .4. Position 2 is recent; of 0 and
 * 1 the heavy hitter is 0 (1.8 > .8), so 1 goes, from both heads' view of
 * the one cache. Head 0 alone would have kept 1 (1.4 > 1.2).
 */
static void test_grouped_scores(void **state)
{
	(void)state;
	static const double r[] = {1, .1, .9, .1, .5, .4, /* head 0 */
	                           1, .9, .1, .5, .1, .4 /* head 1 */};
	struct scene *sc = grouped(3, 1, 0, r);
	assert_int_equal(heads_group(sc), 2);
	assert_int_equal(heads_kv_count(sc), 1);
	const struct budget b = {1, 1, 1, 0, 0, {{{0}}}};
	struct heads_run run;
	assert_int_equal(heads_run_init(&run, sc, &b), 0);
	while (heads_run_step(&run))
		;
	for (int h = 0; h < 2; h++) {
		const struct cache_record *r3 = &run.rec[h].c[POLICY_H2O];
		assert_true(kept_is(run.e[h], POLICY_H2O, 0, 2));
		assert_int_equal(r3->n_evicted, 1);
		assert_int_equal(r3->evicted[0], 1);
		assert_true(fabs(r3->scores[0] - 1.8) < 1e-12);
		assert_true(fabs(r3->scores[1] - 0.8) < 1e-12);
		assert_true(fabs(r3->scores[2] - 0.4) < 1e-12);
		assert_true(fabs(r3->group_attn[1] - 0.3) < 1e-12);
	}
	/* Each head still has its own weights. */
	assert_true(fabs(run.rec[0].c[POLICY_H2O].attn[1] - 0.5) < 1e-12);
	assert_true(fabs(run.rec[1].c[POLICY_H2O].attn[1] - 0.1) < 1e-12);
	/* The one kv head's cache is counted once: 2 tokens, not 4. */
	struct step_metrics m;
	heads_run_total(&run, POLICY_H2O, &m);
	assert_int_equal(m.tokens, 2);
	heads_run_done(&run);
	scene_free(sc);
}

/*
 * A prompt of 4 under heavy 1 + recent 1: steps 1-3 evict nothing (step 3
 * holds 3 > B); at the end of step 4 every cache applies its rule once to
 * the four it holds. Both heads see the same rows:
 *
 *   1 | .5 .5 | .2 .7 .1 | .1 .7 .1 .1 | .1 .1 .1 .1 .6
 *
 * H2O: the column sums 1.8 1.9 .2 .1 | 3 recent: keeps 1 and 3, evicts 0
 * and 2 at step 4. TOVA: the last prompt row's two largest, .7 (1) and .1
 * (0: a tie keeps the lower position). StreamingLLM (1 sink): 0 and 3.
 * Step 5 evicts one, as every step after the prompt.
 */
static void test_prompt(void **state)
{
	(void)state;
	static const double row[] = {1, .5, .5, .2, .7, .1, .1, .7, .1, .1, .1, .1, .1, .1, .6};
	double r[30];
	for (int i = 0; i < 30; i++)
		r[i] = row[i % 15];
	struct scene *sc = grouped(5, 2, 4, r);
	const struct budget b = {1, 1, 1, 0, sc->prompt, {{{0}}}};
	struct heads_run run;
	assert_int_equal(heads_run_init(&run, sc, &b), 0);
	for (int t = 1; t <= 3; t++) {
		assert_true(heads_run_step(&run));
		for (int p = 1; p < POLICY_COUNT; p++)
			assert_int_equal(run.rec[0].c[p].n_evicted, 0);
		assert_int_equal(engine_len(run.e[0], POLICY_H2O), t);
	}
	assert_true(heads_run_step(&run));
	const struct cache_record *h = &run.rec[0].c[POLICY_H2O];
	assert_int_equal(h->n_evicted, 2);
	assert_int_equal(h->evicted[0], 0);
	assert_int_equal(h->evicted[1], 2);
	assert_true(kept_is(run.e[0], POLICY_H2O, 1, 3));
	assert_true(kept_is(run.e[0], POLICY_TOVA, 0, 1));
	assert_true(kept_is(run.e[1], POLICY_TOVA, 0, 1));
	assert_true(kept_is(run.e[0], POLICY_STREAMING, 0, 3));
	assert_true(kept_is(run.e[0], POLICY_WINDOW, 2, 3));
	assert_true(heads_run_step(&run));
	for (int p = 1; p < POLICY_COUNT; p++) /* SnapKV keeps each new token */
		assert_int_equal(run.rec[0].c[p].n_evicted, policies[p]->grows ? 0 : 1);
	heads_run_done(&run);
	scene_free(sc);
}

/*
 * TOVA as its authors run it: the layer's two query heads (each its own
 * key/value head) average their weights, and every cache of the layer keeps
 * the same B = 2 positions. At step 3:
 *
 *   head 0: 1 | .5 .5 | .5 .1 .4
 *   head 1: 1 | .5 .5 | .3 .6 .1
 *
 * the mean .4 .35 .25 keeps 0 and 1: the new token goes, in head 0's cache
 * too, though head 0 alone would have kept it (.4 > .1).
 */
static void test_tova_layer(void **state)
{
	(void)state;
	static const double r[] = {1, .5, .5, .5, .1, .4, /* head 0 */
	                           1, .5, .5, .3, .6, .1 /* head 1 */};
	struct scene *sc = grouped(3, 2, 0, r);
	const struct budget b = {1, 1, 1, 0, 0, {{{0}}}};
	struct heads_run run;
	assert_int_equal(heads_run_init(&run, sc, &b), 0);
	while (heads_run_step(&run))
		;
	for (int h = 0; h < 2; h++) {
		const struct cache_record *t = &run.rec[h].c[POLICY_TOVA];
		assert_true(kept_is(run.e[h], POLICY_TOVA, 0, 1));
		assert_int_equal(t->n_evicted, 1);
		assert_int_equal(t->evicted[0], 2);
		/* Its words compare the layer's means: .25 lost to .35. */
		assert_true(fabs(t->evicted_weights[0] - 0.25) < 1e-12);
		assert_int_equal(t->cutoff_pos, 1);
		assert_true(fabs(t->cutoff_value - 0.35) < 1e-12);
	}
	/* A lone engine of a head view makes the layer's plan itself. */
	struct scene view;
	heads_view(sc, 0, &view);
	struct engine *e = engine_new(&view, &b);
	struct step_record rec;
	while (engine_step(e, &rec))
		;
	assert_true(kept_is(e, POLICY_TOVA, 0, 1));
	engine_free(e);
	heads_run_done(&run);
	scene_free(sc);
}

/*
 * PyramidKV's two granularities (KVCache-Factory, pyramidkv_utils.py at
 * c97f9d7): two query heads over one key/value head, a prompt of 4,
 * B = 1 + 1 = 2, window 1 and kernel 1 (pyramidkv.window=1,
 * pyramidkv.kernel=1), one layer (the schedule keeps B). Rows 0-2 are
 * the same for both heads; the last prompt row, query 3's, differs:
 *
 *   head 0: 1 | .5 .5 | .3 .3 .4 | .5  .3  .1  .1
 *   head 1: 1 | .5 .5 | .3 .3 .4 | .1  .45 .35 .1
 *
 * At the prompt's end the window (the last W = 1 query, position 3) is
 * kept, and B - W = 1 of positions 0-2 is chosen by the window's weights,
 * pooled with kernel 1 (unchanged):
 *
 *   kv_head (_update_kv_kv_head, the group's mean): (.5 + .1) / 2 = .3,
 *   (.3 + .45) / 2 = .375, (.1 + .35) / 2 = .225: position 1 wins, one
 *   cache {1, 3} for both heads; 2 tokens held.
 *
 *   query_head (update_kv after repeat_kv, each query head its own):
 *   head 0's .5 .3 .1 keeps 0, {0, 3}; head 1's .1 .45 .35 keeps 1,
 *   {1, 3}; a cache each, 2 + 2 = 4 tokens held (8 KV numbers, dim 1).
 */
static const double pyr_rows[] = {
        1, .5, .5, .3, .3, .4, .5, .3,  .1,  .1, /* head 0 */
        1, .5, .5, .3, .3, .4, .1, .45, .35, .1, /* head 1 */
};

/* The run of POLICY_PYRAMIDKV over SC at the test's budget, GRANULARITY
 * given as --policy-opt would. */
static void pyr_run(const struct scene *sc, const char *granularity, struct heads_run *run)
{
	struct budget b = {.heavy = 1, .recent = 1, .sinks = -1, .prompt = 4};
	char err[128];
	assert_true(policy_settings_set(&b.settings, "pyramidkv.window=1", err, sizeof err));
	assert_true(policy_settings_set(&b.settings, "pyramidkv.kernel=1", err, sizeof err));
	if (granularity)
		assert_true(policy_settings_set(&b.settings, granularity, err, sizeof err));
	assert_int_equal(heads_run_init(run, sc, &b), 0);
	while (heads_run_step(run))
		;
}

static void test_pyramid_granularity(void **state)
{
	(void)state;
	struct scene *sc = grouped(4, 1, 4, pyr_rows);
	struct heads_run run;
	struct step_metrics m;
	pyr_run(sc, NULL, &run);
	assert_true(kept_is(run.e[0], POLICY_PYRAMIDKV, 1, 3));
	assert_true(kept_is(run.e[1], POLICY_PYRAMIDKV, 1, 3));
	heads_run_total(&run, POLICY_PYRAMIDKV, &m);
	assert_int_equal(m.tokens, 2);
	assert_int_equal(m.kv, 4);
	heads_run_done(&run);

	pyr_run(sc, "pyramidkv.granularity=query_head", &run);
	assert_int_equal(heads_cache_group(sc, &run.b.settings, POLICY_PYRAMIDKV), 1);
	assert_int_equal(heads_cache_group(sc, &run.b.settings, POLICY_SNAPKV), 2);
	assert_true(kept_is(run.e[0], POLICY_PYRAMIDKV, 0, 3));
	assert_true(kept_is(run.e[1], POLICY_PYRAMIDKV, 1, 3));
	assert_int_equal(run.rec[0].c[POLICY_PYRAMIDKV].evicted[0], 1);
	assert_int_equal(run.rec[1].c[POLICY_PYRAMIDKV].evicted[0], 0);
	heads_run_total(&run, POLICY_PYRAMIDKV, &m);
	assert_int_equal(m.tokens, 4);
	assert_int_equal(m.kv, 8);
	/* SnapKV (window 64, capped by the prompt: 4 > B) keeps its last B,
	 * one cache for the group still: 2 tokens. */
	heads_run_total(&run, POLICY_SNAPKV, &m);
	assert_int_equal(m.tokens, 2);
	heads_run_done(&run);
	scene_free(sc);
}

/* With one query head per key/value head the two forms are one: every
 * head's kept set and figures the same, bit for bit. */
static void test_pyramid_granularity_ungrouped(void **state)
{
	(void)state;
	struct scene *sc = grouped(4, 2, 4, pyr_rows);
	struct heads_run kv, q;
	pyr_run(sc, NULL, &kv);
	pyr_run(sc, "pyramidkv.granularity=query_head", &q);
	assert_true(kept_is(kv.e[0], POLICY_PYRAMIDKV, 0, 3));
	assert_true(kept_is(kv.e[1], POLICY_PYRAMIDKV, 1, 3));
	for (int h = 0; h < 2; h++) {
		const struct cache_record *a = &kv.rec[h].c[POLICY_PYRAMIDKV],
		                          *b = &q.rec[h].c[POLICY_PYRAMIDKV];
		assert_int_equal(a->n_attended, b->n_attended);
		assert_memory_equal(a->attended, b->attended, (size_t)a->n_attended * sizeof(int));
		assert_memory_equal(a->attn, b->attn, (size_t)a->n_attended * sizeof(double));
		assert_memory_equal(a->scores, b->scores, (size_t)a->n_attended * sizeof(double));
		assert_int_equal(a->n_evicted, b->n_evicted);
		assert_memory_equal(a->evicted, b->evicted, (size_t)a->n_evicted * sizeof(int));
		assert_true(a->cutoff_value == b->cutoff_value);
		assert_memory_equal(&a->m, &b->m, sizeof a->m);
	}
	heads_run_done(&kv);
	heads_run_done(&q);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_heads_keep_different_tokens),
	        cmocka_unit_test(test_view),
	        cmocka_unit_test(test_grouped_scores),
	        cmocka_unit_test(test_prompt),
	        cmocka_unit_test(test_tova_layer),
	        cmocka_unit_test(test_pyramid_granularity),
	        cmocka_unit_test(test_pyramid_granularity_ungrouped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
