/*
 * Shared steps (engine_share_off, engine_replay.h): caches that attend the
 * same positions at a step copy one another's weights, outputs and figures
 * instead of computing them. Here an engine that shares and one that does
 * not (engine_share_off) step the same scenes side by side, and every
 * number of every record, figures included, must be equal bit for bit at
 * every step: scenes without a prompt (where every policy that keeps the
 * prompt's tokens is the full cache), with a prompt, a budget beyond the
 * scene (every policy is the full cache), an interval, attention scenes
 * with and without values, grouped heads of a model, and engines without
 * the full cache. Steps that are the full cache's in all but name (a cache
 * that grows after the prompt and holds every token) are not computed at
 * all, and their records must be equal too. A white-box test: it counts, from the engine's private
 * step states, the steps that were shared, so that it also proves the
 * sharing happened where it must.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "engine_impl.h"
#include "h2o/engine.h"
#include "h2o/engine_replay.h"
#include "h2o/heads.h"
#include "scene_fixture.h"

/* Bit for bit, so that NaN equals NaN and -0 differs from +0. */
static void same_doubles(const double *a, const double *b, int n)
{
	if (n > 0)
		assert_memory_equal(a, b, (size_t)n * sizeof *a);
}

static void same_ints(const int *a, const int *b, int n)
{
	if (n > 0)
		assert_memory_equal(a, b, (size_t)n * sizeof *a);
}

static void same_metrics(const struct step_metrics *a, const struct step_metrics *b)
{
	assert_int_equal(a->tokens, b->tokens);
	assert_int_equal(a->kv, b->kv);
	assert_int_equal(a->has_out, b->has_out);
	assert_int_equal(a->overlap_h2o, b->overlap_h2o);
	same_doubles(&a->out_err, &b->out_err, 1);
	same_doubles(&a->out_cos, &b->out_cos, 1);
	same_doubles(&a->attn_recall, &b->attn_recall, 1);
}

static void same_record(const struct scene *sc, const struct cache_record *a,
                        const struct cache_record *b, bool figures)
{
	assert_int_equal(a->n_attended, b->n_attended);
	same_ints(a->attended, b->attended, a->n_attended);
	same_doubles(a->attn, b->attn, a->n_attended);
	same_doubles(a->group_attn, b->group_attn, a->n_attended);
	assert_int_equal(a->scores == NULL, b->scores == NULL);
	if (a->scores)
		same_doubles(a->scores, b->scores, a->n_attended);
	same_doubles(&a->max, &b->max, 1);
	same_doubles(&a->sum, &b->sum, 1);
	assert_int_equal(a->n_evicted, b->n_evicted);
	same_ints(a->evicted, b->evicted, a->n_evicted);
	same_doubles(a->evicted_scores, b->evicted_scores, a->n_evicted);
	same_doubles(a->evicted_weights, b->evicted_weights, a->n_evicted);
	assert_int_equal(a->cutoff_pos, b->cutoff_pos);
	same_doubles(&a->cutoff_value, &b->cutoff_value, 1);
	assert_int_equal(a->out == NULL, b->out == NULL);
	if (a->out)
		same_doubles(a->out, b->out, sc->dim);
	if (figures)
		same_metrics(&a->m, &b->m);
}

/* The steps of all compares so far that were the full cache's
 * (engine_cache.c, "Steps of the full cache"): never computed at all. */
static long aliased;

/* The steps of A's caches that copied another's, so far at step S. */
static long shared_at(const struct engine *a, int s)
{
	long n = 0;
	for (int p = 0; p < POLICY_COUNT; p++)
		if (p != POLICY_FULL && runs(a, p)) {
			n += state_of(&a->c[p], s)->lead >= 0;
			aliased += state_of(&a->c[p], s)->alias_pos != NULL;
		}
	return n;
}

/* SC under B with the policies of MASK, shared and not, side by side: most
 * steps with figures, some without (engine_advance, a replay's), and every
 * record compared. The steps that were shared. */
static long compare(const struct scene *sc, const struct budget *b, unsigned mask)
{
	struct engine *a = engine_new_only(sc, b, mask), *u = engine_new_only(sc, b, mask);
	assert_non_null(a);
	assert_non_null(u);
	engine_share_off(u);
	struct step_record *ra = malloc(sizeof *ra), *ru = malloc(sizeof *ru);
	long shared = 0;
	for (int s = 1; s <= sc->n; s++) {
		const bool figures = s % 11 != 5;
		if (figures) {
			assert_true(engine_step(a, ra));
			assert_true(engine_step(u, ru));
		} else {
			assert_true(engine_advance(a));
			assert_true(engine_advance(u));
		}
		shared += shared_at(a, s);
		assert_int_equal(shared_at(u, s), 0);
		for (int p = 0; p < POLICY_COUNT; p++) {
			if (!(mask & ENGINE_POLICY(p)))
				continue;
			assert_int_equal(engine_len(a, p), engine_len(u, p));
			same_ints(engine_positions(a, p), engine_positions(u, p), engine_len(a, p));
			same_doubles(engine_scores(a, p), engine_scores(u, p), engine_len(a, p));
			if (figures)
				same_record(sc, &ra->c[p], &ru->c[p], true);
		}
	}
	free(ra);
	free(ru);
	engine_free(a);
	engine_free(u);
	return shared;
}

static struct budget budget(int heavy, int recent, int interval, int prompt)
{
	return (struct budget){heavy,    recent, policy_default_sinks(heavy + recent),
	                       interval, prompt, {{{0}}}};
}

static const unsigned all = ENGINE_ALL_POLICIES;
static const unsigned no_full = ENGINE_ALL_POLICIES & ~ENGINE_POLICY(POLICY_FULL);

static void test_vector_scenes(void **state)
{
	(void)state;
	/* n, dim, heavy, recent, interval, prompt */
	const int shapes[][6] = {
	        {90, 8, 4, 4, 1, 0},
	        {130, 5, 6, 10, 1, 0},
	        {140, 16, 8, 8, 1, 30},
	        {60, 3, 80, 80, 1, 0},
	        {120, 9, 5, 7, 4, 0},
	        {150, 12, 0, 12, 1, 0},
	        {100, 8, 12, 0, 3, 20},
	        /* Large enough for the caches to step on two threads
	         * (engine.c, STEP_SPLIT_WORK). */
	        {400, 64, 32, 32, 1, 0},
	        {400, 64, 32, 32, 1, 100},
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const int *x = shapes[i];
		struct scene *sc = fixture_random(x[0], x[1], 0, 0, (unsigned)i + 5);
		sc->prompt = x[5];
		const struct budget b = budget(x[2], x[3], x[4], x[5]);
		const long before = aliased;
		const long with_full = compare(sc, &b, all);
		/* SnapKV, PyramidKV, AdaKV and ObservedAttention grow after the
		 * prompt: holding every token then, their steps are the full
		 * cache's, but for those at the edges of its blocks. */
		if (x[5] == 0 && x[2] + x[3] < x[0])
			assert_true(aliased - before >= 3L * (x[0] - 1));
		const long without = compare(sc, &b, no_full);
		/* Without a prompt, the policies that keep every token after
		 * it keep every token, as the full cache does: they copy it,
		 * or one another without it. */
		if (x[5] == 0) {
			assert_true(with_full >= 4L * (x[0] - 1));
			assert_true(without >= 3L * (x[0] - 1));
		}
		/* A window and StreamingLLM agree while nothing is evicted. */
		assert_true(compare(sc, &b,
		                    ENGINE_POLICY(POLICY_WINDOW) | ENGINE_POLICY(POLICY_STREAMING) |
		                            ENGINE_POLICY(POLICY_H2O)) > 0);
		scene_free(sc);
	}
}

static void test_attention_scenes(void **state)
{
	(void)state;
	for (int values = 0; values < 2; values++) {
		struct scene *sc =
		        fixture_random_attention(80, 6, values, false, 3u + (unsigned)values);
		const struct budget b = budget(5, 6, 1, 0);
		assert_true(compare(sc, &b, all) >= 4L * 79);
		assert_true(compare(sc, &b, no_full) > 0);
		scene_free(sc);
	}
}

static void test_model_heads(void **state)
{
	(void)state;
	/* layers, heads, kv heads, n, dim, prompt: groups of 1 and 2 */
	const int shapes[][6] = {{2, 2, 2, 60, 8, 0}, {2, 4, 2, 70, 8, 0}, {2, 4, 2, 70, 8, 25}};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const int *x = shapes[i];
		struct scene *sc = fixture_random_layers(x[0], x[1], x[2], x[3], x[4], x[5],
		                                         40u + (unsigned)i);
		const struct budget b = budget(4, 6, 1, x[5]);
		long shared = 0;
		for (int h = 0; h < heads_count(sc); h++) {
			struct scene view;
			heads_view(sc, h, &view);
			shared += compare(&view, &b, all);
		}
		/* Grouped or not, the policies that keep every token share. */
		if (x[5] == 0)
			assert_true(shared > 0);
		scene_free(sc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_vector_scenes),
	        cmocka_unit_test(test_attention_scenes),
	        cmocka_unit_test(test_model_heads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
