/*
 * Unit tests of the timeline: any step, in any order, is what stepping
 * forward gave, for every policy; recomputed weights are the engine's bit
 * for bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "h2o/engine.h"
#include "h2o/timeline.h"
#include "scene_fixture.h"

static struct policy_budget budget(int heavy, int recent, int n)
{
	return (struct policy_budget){heavy, recent, policy_default_sinks(heavy + recent), n};
}

/* Compare the record and cache state of step T against a fresh engine. */
static void check_step(struct timeline *tl, const struct scene *sc, int t)
{
	struct engine *e = engine_new(sc, timeline_budget(tl));
	struct step_record want;
	for (int i = 0; i < t; i++)
		engine_step(e, &want);
	const struct step_record *got;
	const struct engine *at = timeline_seek(tl, t, &got);
	assert_int_equal(engine_step_count(at), t);
	for (int p = 0; p < POLICY_COUNT; p++) {
		const int len = engine_len(e, p);
		assert_int_equal(engine_len(at, p), len);
		assert_memory_equal(engine_positions(at, p), engine_positions(e, p),
		                    (size_t)len * sizeof(int));
		assert_memory_equal(engine_scores(at, p), engine_scores(e, p),
		                    (size_t)len * sizeof(double));
		if (t == 0)
			continue;
		const struct cache_record *g = &got->c[p], *w = &want.c[p];
		assert_int_equal(g->n_attended, w->n_attended);
		assert_memory_equal(g->attn, w->attn, (size_t)w->n_attended * sizeof(double));
		assert_true(fixture_metrics_equal(&g->m, &w->m));
	}
	if (t == 0)
		assert_null(got);
	else
		assert_int_equal(got->step, t);
	engine_free(e);
}

static void test_seek_any_order(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(120, 4, 5, 3, 9);
	const struct policy_budget b = budget(5, 3, 120);
	struct timeline *tl = timeline_new(sc, &b);
	assert_non_null(tl);
	const int order[] = {0, 1, 2, 120, 119, 60, 61, 59, 8, 7, 9, 17, 16, 0, 33, 100, 3};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		check_step(tl, sc, order[i]);
	for (int t = 120; t >= 0; t--)
		check_step(tl, sc, t);
	timeline_free(tl);
	scene_free(sc);
}

static void test_weights_recomputed_exactly(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(60, 4, 3, 2, 4);
	const struct policy_budget b = budget(3, 2, 60);
	struct timeline *tl = timeline_new(sc, &b);
	for (int s = 1; s <= 60; s++) {
		const struct step_record *rec;
		timeline_seek(tl, s, &rec);
		for (int p = 0; p < POLICY_COUNT; p++) {
			const struct cache_record *r = &rec->c[p];
			int k = 0;
			for (int j = 0; j < s; j++) {
				const double w = timeline_weight(tl, p, s, j);
				if (k < r->n_attended && r->attended[k] == j) {
					assert_true(w == r->attn[k]);
					k++;
				} else {
					assert_true(w == -1.0);
				}
			}
			assert_int_equal(k, r->n_attended);
			assert_true(timeline_weight(tl, p, s, s) == -1.0); /* not arrived */
		}
	}
	timeline_free(tl);
	scene_free(sc);
}

static void test_regions_and_evictions(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(80, 4, 4, 3, 2);
	const struct policy_budget b = budget(4, 3, 80);
	struct timeline *tl = timeline_new(sc, &b);
	for (int t = 0; t <= 80; t++) {
		const struct engine *e = timeline_seek(tl, t, NULL);
		for (int p = 0; p < POLICY_COUNT; p++) {
			const int len = engine_len(e, p);
			int kept = 0;
			for (int pos = 0; pos < 80; pos++) {
				const enum region r = timeline_region(tl, p, t, pos);
				if (pos >= t) {
					assert_int_equal(r, REGION_NONE);
					continue;
				}
				if (r == REGION_EVICTED)
					continue;
				/* Kept positions are the engine's, in order. */
				assert_true(kept < len);
				assert_int_equal(engine_positions(e, p)[kept], pos);
				kept++;
			}
			assert_int_equal(kept, len);
			if (t > 0)
				assert_int_equal(timeline_evictions_until(tl, p, t) + len, t);
		}
		/* H2O's recent region is its newest `recent` positions. */
		for (int pos = 0; pos < t; pos++)
			if (timeline_region(tl, POLICY_H2O, t, pos) == REGION_RECENT)
				assert_true(pos >= t - 3);
	}
	/* Every eviction names its step, and the kept one it lost to had at
	 * least its score (or, for TOVA, its weight). */
	for (int p = 0; p < POLICY_COUNT; p++) {
		for (int i = 0; i < timeline_eviction_count(tl, p); i++) {
			const struct eviction *ev = timeline_eviction(tl, p, i);
			assert_int_equal(timeline_evicted_at(tl, p, ev->pos), ev->step);
			assert_ptr_equal(timeline_eviction_of(tl, p, ev->pos, 80), ev);
			if (ev->cutoff_pos >= 0)
				assert_true((policies[p]->by_weight ? ev->weight : ev->score) <=
				            ev->cutoff_value);
		}
	}
	assert_int_equal(timeline_eviction_count(tl, POLICY_FULL), 0);
	timeline_free(tl);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_seek_any_order),
	        cmocka_unit_test(test_weights_recomputed_exactly),
	        cmocka_unit_test(test_regions_and_evictions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
