/*
 * Unit tests of the timeline: any step, in any order, is what stepping
 * forward gave, for every policy; recomputed weights are the engine's bit
 * for bit.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "h2o/engine.h"
#include "h2o/engine_replay.h"
#include "h2o/timeline.h"
#include "scene_fixture.h"
/* Snapshot intervals, to make every path between snapshots run on a
 * small scene. */
#include "../src/timeline/timeline_impl.h"

static struct budget budget(int heavy, int recent)
{
	return (struct budget){heavy, recent, policy_default_sinks(heavy + recent), 0, 0, {{{0}}}};
}

/* Policy P's cache holds the same positions and scores in GOT as in WANT. */
static void assert_same_cache(const struct engine *got, const struct engine *want, int p)
{
	const int len = engine_len(want, p);
	assert_int_equal(engine_len(got, p), len);
	assert_memory_equal(engine_positions(got, p), engine_positions(want, p),
	                    (size_t)len * sizeof(int));
	assert_memory_equal(engine_scores(got, p), engine_scores(want, p),
	                    (size_t)len * sizeof(double));
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
		assert_same_cache(at, e, p);
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
	const struct budget b = budget(5, 3);
	struct timeline *tl = timeline_new(sc, &b, NULL);
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
	const struct budget b = budget(3, 2);
	struct timeline *tl = timeline_new(sc, &b, NULL);
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
	const struct budget b = budget(4, 3);
	struct timeline *tl = timeline_new(sc, &b, NULL);
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
	 * least its score (or, for TOVA, its weight; key norm's cut-off is a
	 * norm, and a rule that ranks by its own value compares that, neither of
	 * which the eviction carries). */
	for (int p = 0; p < POLICY_COUNT; p++) {
		for (int i = 0; i < timeline_eviction_count(tl, p); i++) {
			const struct eviction *ev = timeline_eviction(tl, p, i);
			assert_int_equal(timeline_evicted_at(tl, p, ev->pos), ev->step);
			assert_ptr_equal(timeline_eviction_of(tl, p, ev->pos, 80), ev);
			if (ev->cutoff_pos >= 0 && !policies[p]->by_key_norm &&
			    !policies[p]->ranks_own)
				assert_true((policies[p]->by_weight ? ev->weight : ev->score) <=
				            ev->cutoff_value);
		}
	}
	assert_int_equal(timeline_eviction_count(tl, POLICY_FULL), 0);
	timeline_free(tl);
	scene_free(sc);
}

/* Long intervals: seeking replays up to eleven steps of the caches that
 * evict and up to 23 of the full cache. */
static void test_seek_between_snapshots(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(100, 5, 4, 3, 21);
	const struct budget b = budget(4, 3);
	struct timeline *tl = timeline_new_every(sc, &b, 12, 24);
	int every, full_every;
	timeline_intervals(tl, &every, &full_every);
	assert_int_equal(every, 12);
	assert_int_equal(full_every, 24);
	const int order[] = {100, 0, 1, 11, 12, 13, 23, 24, 25, 99, 98, 50, 51, 49, 36, 35, 72, 2};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		check_step(tl, sc, order[i]);
	timeline_free(tl);
	scene_free(sc);
}

/* The lite seek: every cache that evicts as timeline_seek has it, the
 * figures of the summary, and an empty full cache. */
static void test_seek_lite(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(90, 6, 5, 3, 17);
	const struct budget b = budget(5, 3);
	struct timeline *tl = timeline_new_every(sc, &b, 7, 14);
	const int order[] = {0, 90, 89, 88, 45, 46, 47, 7, 8, 6, 14, 13, 1, 60, 30, 0, 2};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const int t = order[i];
		const struct step_record *lrec, *frec;
		const struct engine *lite = timeline_seek_lite(tl, t, &lrec);
		const struct engine *full = timeline_seek(tl, t, &frec);
		assert_int_equal(engine_step_count(lite), t);
		assert_int_equal(engine_len(lite, POLICY_FULL), 0);
		if (t == 0) {
			assert_null(lrec);
			continue;
		}
		assert_int_equal(lrec->step, t);
		const struct step_summary *s = timeline_summary(tl, t);
		for (int p = 0; p < POLICY_COUNT; p++) {
			const struct cache_record *l = &lrec->c[p], *f = &frec->c[p];
			assert_true(fixture_metrics_equal(&l->m, &s->c[p].m));
			assert_true(fixture_metrics_equal(&l->m, &f->m));
			assert_true(l->max == f->max && l->sum == f->sum);
			if (p == POLICY_FULL) {
				assert_int_equal(l->n_attended, 0);
				continue;
			}
			assert_same_cache(lite, full, p);
			assert_int_equal(l->n_attended, f->n_attended);
			assert_memory_equal(l->attended, f->attended,
			                    (size_t)l->n_attended * sizeof(int));
			assert_memory_equal(l->attn, f->attn,
			                    (size_t)l->n_attended * sizeof(double));
			assert_memory_equal(l->scores, f->scores,
			                    (size_t)l->n_attended * sizeof(double));
			assert_int_equal(l->n_evicted, f->n_evicted);
			assert_memory_equal(l->out, f->out, (size_t)sc->dim * sizeof(double));
		}
	}
	timeline_free(tl);
	scene_free(sc);
}

/* Long replays: the caches that evict are replayed on two threads. */
static void test_seek_lite_long(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(1500, 24, 48, 48, 23);
	const struct budget b = budget(48, 48);
	struct timeline *tl = timeline_new_every(sc, &b, 200, 400);
	const int order[] = {1500, 1399, 1398, 1201, 600, 799, 199, 1};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const int t = order[i];
		const struct engine *lite = timeline_seek_lite(tl, t, NULL);
		struct engine *fresh = engine_new_only(
		        sc, &b, ENGINE_POLICY(POLICY_H2O) | ENGINE_POLICY(POLICY_TOVA));
		struct step_record rec;
		while (engine_step_count(fresh) < t)
			engine_step(fresh, &rec);
		for (int p = POLICY_H2O; p <= POLICY_TOVA; p += POLICY_TOVA - POLICY_H2O) {
			assert_same_cache(lite, fresh, p);
		}
		engine_free(fresh);
	}
	timeline_free(tl);
	scene_free(sc);
}

/* The full cache's scores at any step, from the kept ones and the
 * normalisers, are the engine's bit for bit. */
static void check_full_scores(const struct scene *sc, int every, int full_every)
{
	const struct budget b = budget(3, 2);
	struct timeline *tl = timeline_new_every(sc, &b, every, full_every);
	struct engine *e = engine_new(sc, &b);
	struct step_record rec;
	int *pos = malloc(((size_t)sc->n + 2) * sizeof *pos);
	double *got = malloc(((size_t)sc->n + 2) * sizeof *got);
	for (int t = 0; t <= sc->n; t++) {
		if (t > 0)
			engine_step(e, &rec);
		/* Every position, backwards, and two not yet arrived. */
		const int count = t + 2;
		for (int i = 0; i < t; i++)
			pos[i] = t - 1 - i;
		pos[t] = t;
		pos[t + 1] = sc->n + 5;
		assert_int_equal(timeline_full_scores(tl, t, pos, count, got), 0);
		for (int i = 0; i < t; i++) {
			const double want = engine_scores(e, POLICY_FULL)[pos[i]];
			assert_true(got[i] == want);
			assert_true(timeline_full_score(tl, t, pos[i]) == want);
		}
		assert_true(got[t] == 0.0 && got[t + 1] == 0.0);
		assert_true(timeline_full_score(tl, t, t) == 0.0);
	}
	free(pos);
	free(got);
	engine_free(e);
	timeline_free(tl);
}

static void test_full_scores(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(75, 11, 3, 2, 5);
	check_full_scores(sc, 4, 16);
	check_full_scores(sc, 1, 1);
	check_full_scores(sc, 0, 0);
	scene_free(sc);
	/* An attention scene: logits are logarithms of the given rows. */
	double rows[30 * 31 / 2];
	for (int i = 0; i < 30; i++)
		for (int j = 0; j <= i; j++)
			rows[scene_attn_offset(i) + (size_t)j] = 1.0 / (i + 1);
	for (int i = 2; i < 30; i++) {
		rows[scene_attn_offset(i)] += 0.5 / (i + 1);
		rows[scene_attn_offset(i) + 1] -= 0.5 / (i + 1);
	}
	sc = fixture_attention(30, 2, 3, 2, rows, NULL, NULL);
	check_full_scores(sc, 3, 9);
	scene_free(sc);
}

/* The timeline stays within about twice the scene's own numbers. */
static void test_memory(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(3000, 64, 32, 32, 8);
	const struct budget b = budget(32, 32);
	struct timeline *tl = timeline_new(sc, &b, NULL);
	const double scene = 3.0 * 3000 * 64 * sizeof(double);
	/* Small scenes may use a fixed minimum: 32 MiB of snapshots. */
	assert_true((double)timeline_memory(tl) <= 2.0 * scene + 40.0 * 1024 * 1024);
	timeline_free(tl);
	scene_free(sc);
}

/*
 * A timeline built by its own thread, read while it builds: every step up
 * to timeline_built is what the finished timeline (and timeline_new's)
 * says, the whole-timeline answers are as of that step, and freeing it
 * mid-build stops the thread.
 */
static void test_background_build(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(3000, 32, 0, 0, 41);
	const struct budget b = budget(24, 16);
	struct timeline *want = timeline_new(sc, &b, NULL);
	struct timeline *tl = timeline_start(sc, &b);
	assert_non_null(want);
	assert_non_null(tl);
	int seen = 0, reads = 0;
	while (timeline_building(tl) || seen < sc->n) {
		const int built = timeline_built(tl);
		assert_true(built >= seen && built <= sc->n);
		seen = built;
		/* The newest step, and one before it. */
		const int ts[2] = {built, built / 2};
		for (int i = 0; i < 2; i++) {
			const int t = ts[i];
			const struct step_record *rec;
			const struct engine *lite = timeline_seek_lite(tl, t, &rec);
			assert_int_equal(engine_step_count(lite), t);
			if (t > 0)
				assert_true(fixture_metrics_equal(
				        &timeline_summary(tl, t)->c[POLICY_H2O].m,
				        &timeline_summary(want, t)->c[POLICY_H2O].m));
			const int evicted = timeline_evictions_until(want, POLICY_H2O, t);
			assert_int_equal(timeline_evictions_until(tl, POLICY_H2O, t), evicted);
			assert_true(timeline_eviction_count(tl, POLICY_H2O) >= evicted);
			for (int pos = 0; pos < t; pos += 97) {
				const int at = timeline_evicted_at(tl, POLICY_H2O, pos);
				assert_true(at <= timeline_built(tl));
				assert_true(at == 0 ||
				            at == timeline_evicted_at(want, POLICY_H2O, pos));
				assert_true(timeline_full_score(tl, t, pos) ==
				            timeline_full_score(want, t, pos));
			}
			reads++;
		}
	}
	assert_false(timeline_failed(tl));
	assert_int_equal(timeline_built(tl), sc->n);
	assert_true(reads > 2);
	for (int p = 0; p < POLICY_COUNT; p++)
		assert_int_equal(timeline_eviction_count(tl, p), timeline_eviction_count(want, p));
	for (int t = 1; t <= sc->n; t++)
		assert_memory_equal(timeline_summary(tl, t), timeline_summary(want, t),
		                    sizeof *timeline_summary(tl, t));
	timeline_free(tl);
	/* Freed while it builds: the thread stops and nothing leaks. */
	timeline_free(timeline_start(sc, &b));
	timeline_free(want);
	scene_free(sc);
}

/*
 * Several timelines built by a pool of threads, one per core: each ends as
 * timeline_new's, the preferred one is taken up first, and a pool freed
 * while it builds calls every build off at once, including those no thread
 * has taken up yet.
 */
static void test_pool_build(void **state)
{
	(void)state;
	enum { COUNT = 5 };
	struct scene *sc[COUNT];
	struct scene views[COUNT];
	for (int i = 0; i < COUNT; i++) {
		sc[i] = fixture_random(1500 + 100 * i, 16, 0, 0, 50 + (unsigned)i);
		views[i] = *sc[i];
	}
	const struct budget b = budget(12, 8);
	struct timeline_pool *pool = timeline_pool_start(views, COUNT, &b, NULL, 3);
	assert_non_null(pool);
	timeline_pool_prefer(pool, 1);
	for (int i = 0; i < COUNT; i++) {
		struct timeline *tl = timeline_pool_get(pool, i);
		while (timeline_building(tl))
			sched_yield(); /* the pool's threads build it */
		assert_false(timeline_failed(tl));
		assert_int_equal(timeline_built(tl), sc[i]->n);
		struct timeline *want = timeline_new(&views[i], &b, NULL);
		assert_non_null(want);
		for (int t = 1; t <= sc[i]->n; t++)
			assert_memory_equal(timeline_summary(tl, t), timeline_summary(want, t),
			                    sizeof *timeline_summary(tl, t));
		for (int p = 0; p < POLICY_COUNT; p++)
			assert_int_equal(timeline_eviction_count(tl, p),
			                 timeline_eviction_count(want, p));
		timeline_free(want);
	}
	timeline_pool_free(pool);
	/* Freed while it builds. */
	timeline_pool_free(timeline_pool_start(views, COUNT, &b, NULL, 0));
	for (int i = 0; i < COUNT; i++)
		scene_free(sc[i]);
}

/*
 * The memory a timeline is told to need before it is made covers what it
 * holds once built, its builder's engine included, and is not far above
 * it: the estimate that lets a scene too large for the machine be refused
 * at once. The engine's estimate is exactly what an engine holds.
 */
static void test_memory_predicted(void **state)
{
	(void)state;
	const int sizes[][4] = {
	        {60, 4, 3, 2}, {700, 16, 8, 8}, {3000, 32, 64, 64}, {1200, 8, 600, 600}};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		struct scene *sc = fixture_random(sizes[i][0], sizes[i][1], 0, 0, 70 + (unsigned)i);
		const struct budget b = budget(sizes[i][2], sizes[i][3]);
		struct engine *e = engine_new(sc, &b);
		assert_non_null(e);
		const double engine_bytes = engine_predict_memory(sc, &b, ENGINE_ALL_POLICIES, 0);
		assert_true(engine_bytes == (double)engine_memory(e));
		engine_free(e);
		struct timeline *tl = timeline_new(sc, &b, NULL);
		assert_non_null(tl);
		const double held = (double)timeline_memory(tl) + engine_bytes;
		const double told = timeline_predict_memory(sc, &b);
		print_message("n %d: held %.0f told %.0f\n", sc->n, held, told);
		assert_true(told >= held);
		assert_true(told <= 1.25 * held);
		timeline_free(tl);
		scene_free(sc);
	}
}

/* A timeline of some policies (timeline_new_only, the screen's with
 * --policies) runs those, H2O and the full cache, each exactly as the
 * timeline of every policy has it, and nothing of the others; it holds
 * less, and says so beforehand. */
static void test_policies_only(void **state)
{
	(void)state;
	/* No prompt: SnapKV keeps every token, as the full cache does. */
	struct scene *sc = fixture_random(120, 8, 0, 0, 23);
	const struct budget b = budget(6, 4);
	const unsigned shown = ENGINE_POLICY(POLICY_WINDOW) | ENGINE_POLICY(POLICY_SNAPKV);
	const unsigned runs = shown | ENGINE_POLICY(POLICY_H2O) | ENGINE_POLICY(POLICY_FULL);
	struct timeline *all = timeline_new(sc, &b, NULL);
	struct timeline *some = timeline_new_only(sc, &b, NULL, shown);
	assert_non_null(all);
	assert_non_null(some);
	const int order[] = {120, 1, 60, 59, 7, 119, 30};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		const int t = order[i];
		const struct step_record *ra, *rs;
		const struct engine *ea = timeline_seek(all, t, &ra);
		const struct engine *es = timeline_seek(some, t, &rs);
		const struct step_summary *sa = timeline_summary(all, t),
		                          *ss = timeline_summary(some, t);
		for (int p = 0; p < POLICY_COUNT; p++) {
			const struct cache_record *a = &ra->c[p], *r = &rs->c[p];
			if (!(runs & ENGINE_POLICY(p))) {
				assert_int_equal(engine_len(es, p), 0);
				assert_int_equal(r->n_attended, 0);
				assert_int_equal(ss->c[p].m.tokens, 0);
				assert_true(engine_len(ea, p) > 0);
				continue;
			}
			assert_same_cache(es, ea, p);
			assert_int_equal(r->n_attended, a->n_attended);
			assert_memory_equal(r->attn, a->attn,
			                    (size_t)a->n_attended * sizeof(double));
			assert_memory_equal(r->out, a->out, (size_t)sc->dim * sizeof(double));
			assert_true(fixture_metrics_equal(&r->m, &a->m));
			assert_true(fixture_metrics_equal(&ss->c[p].m, &sa->c[p].m));
		}
	}
	const double told = timeline_predict_memory_only(sc, &b, shown);
	assert_true(told >= (double)timeline_memory(some));
	assert_true(told < timeline_predict_memory(sc, &b));
	assert_true(timeline_memory(some) < timeline_memory(all));
	timeline_free(all);
	timeline_free(some);
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_seek_any_order),
	        cmocka_unit_test(test_weights_recomputed_exactly),
	        cmocka_unit_test(test_regions_and_evictions),
	        cmocka_unit_test(test_seek_between_snapshots),
	        cmocka_unit_test(test_seek_lite),
	        cmocka_unit_test(test_seek_lite_long),
	        cmocka_unit_test(test_full_scores),
	        cmocka_unit_test(test_memory),
	        cmocka_unit_test(test_background_build),
	        cmocka_unit_test(test_pool_build),
	        cmocka_unit_test(test_memory_predicted),
	        cmocka_unit_test(test_policies_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
