/*
 * Unit tests of the timeline: any step, in any order, is what stepping
 * forward gave; recomputed weights are the engine's bit for bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "h2o/engine.h"
#include "h2o/timeline.h"
#include "scene_fixture.h"

/* Compare the record and cache state of step T against a fresh engine. */
static void check_step(struct timeline *tl, const struct scene *sc, int t)
{
	struct engine *e = engine_new(sc, timeline_heavy(tl), timeline_recent(tl));
	struct step_record want;
	for (int i = 0; i < t; i++)
		engine_step(e, &want);
	const struct step_record *got;
	const struct engine *at = timeline_seek(tl, t, &got);
	assert_int_equal(engine_step_count(at), t);
	assert_int_equal(engine_h2o_len(at), engine_h2o_len(e));
	assert_memory_equal(engine_h2o_positions(at), engine_h2o_positions(e),
	                    (size_t)engine_h2o_len(e) * sizeof(int));
	assert_memory_equal(engine_h2o_scores(at), engine_h2o_scores(e),
	                    (size_t)engine_h2o_len(e) * sizeof(double));
	assert_memory_equal(engine_full_scores(at), engine_full_scores(e),
	                    (size_t)t * sizeof(double));
	if (t == 0) {
		assert_null(got);
	} else {
		assert_int_equal(got->step, t);
		assert_memory_equal(got->attn, want.attn, (size_t)want.n_attended * sizeof(double));
		assert_memory_equal(&got->m, &want.m, sizeof want.m);
	}
	engine_free(e);
}

static void test_seek_any_order(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(120, 4, 5, 3, 9);
	struct timeline *tl = timeline_new(sc, 5, 3);
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
	struct timeline *tl = timeline_new(sc, 3, 2);
	for (int s = 1; s <= 60; s++) {
		const struct step_record *rec;
		timeline_seek(tl, s, &rec);
		int k = 0;
		for (int j = 0; j < s; j++) {
			double wh, wf;
			timeline_weight(tl, s, j, &wh, &wf);
			assert_true(wf == rec->full_attn[j]);
			if (k < rec->n_attended && rec->attended[k] == j) {
				assert_true(wh == rec->attn[k]);
				k++;
			} else {
				assert_true(wh == -1.0);
			}
		}
		assert_int_equal(k, rec->n_attended);
		double wh, wf;
		timeline_weight(tl, s, s, &wh, &wf); /* not arrived yet */
		assert_true(wh == -1.0 && wf == -1.0);
	}
	timeline_free(tl);
	scene_free(sc);
}

static void test_regions_and_evictions(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(80, 4, 4, 3, 2);
	struct timeline *tl = timeline_new(sc, 4, 3);
	for (int t = 0; t <= 80; t++) {
		const struct engine *e = timeline_seek(tl, t, NULL);
		const int len = engine_h2o_len(e), rlen = engine_h2o_recent_len(e);
		int kept = 0;
		for (int p = 0; p < 80; p++) {
			const enum region r = timeline_region(tl, t, p);
			if (p >= t) {
				assert_int_equal(r, REGION_NONE);
				continue;
			}
			if (r == REGION_EVICTED)
				continue;
			/* Kept positions are the engine's, in order, recent last. */
			assert_true(kept < len);
			assert_int_equal(engine_h2o_positions(e)[kept], p);
			assert_int_equal(r, kept >= len - rlen ? REGION_RECENT : REGION_HEAVY);
			kept++;
		}
		assert_int_equal(kept, len);
		if (t > 0) {
			const int until = timeline_evictions_until(tl, t);
			assert_int_equal(until + len, t);
		}
	}
	/* Every eviction names its step and a position evicted there. */
	for (int i = 0; i < timeline_eviction_count(tl); i++) {
		const struct eviction *ev = timeline_eviction(tl, i);
		assert_int_equal(timeline_evicted_at(tl, ev->pos), ev->step);
		assert_true(ev->cutoff_pos >= 0 && ev->score <= ev->cutoff_score);
	}
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
