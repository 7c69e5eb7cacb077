/*
 * The engine's second thread (src/pool/pool.c, as the engine uses it), on its own and
 * inside the engine. A white-box test: it includes the engine's private
 * headers, to drive the helper directly and to see that an engine did
 * start it.
 *
 * On its own: many jobs handed over back to back, jobs after the helper
 * has gone to sleep, a part slow enough that the engine's thread sleeps
 * too, and stops in every state (never started, spinning, asleep, just
 * done), each followed by a restart. Inside the engine: the full cache's
 * blocks, the caches that evict, a lazy full cache's scores and jumps
 * ahead, all on two threads, give exactly the records and states of
 * engines that never use the helper; and an engine freed mid-scene, with
 * steps and a block computed ahead, frees cleanly. The model's batches run
 * on the same pool code: a model stepped on two threads between an
 * engine's steps gives the logits and weights of one on one thread, and
 * both helpers ran. .ci/run runs it under
 * ThreadSanitizer (suite unit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "h2o/pool.h"
#include "engine_impl.h"
#include "h2o/engine.h"
#include "h2o/engine_replay.h"
#include "h2o/llama.h"
#include "model_impl.h"
#include "scene_fixture.h"

/* ---- the helper on its own ---------------------------------------------- */

/* A job: each part computes its own number from SEED, says it ran and on
 * which thread; part 1 sleeps SLEEP_NS first. */
struct job {
	uint64_t seed;
	int work;
	long sleep_ns;
	uint64_t out[2];
	int ran[2];
	pthread_t thread[2];
};

static uint64_t churn(uint64_t x, int work)
{
	for (int i = 0; i < work; i++) {
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdu;
		x ^= x >> 29;
	}
	return x;
}

static void nap(long ns)
{
	const struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
	nanosleep(&ts, NULL);
}

static void job_part(void *arg, int part)
{
	struct job *j = arg;
	if (part == 1 && j->sleep_ns > 0)
		nap(j->sleep_ns);
	j->out[part] = churn(j->seed + (uint64_t)part, j->work);
	j->ran[part]++;
	j->thread[part] = pthread_self();
}

/* Hand JOB to H and check that both parts ran once, with the numbers a
 * single thread computes. Returns whether part 1 ran on the helper. */
static bool hand_off(struct h2o_pool *h, struct job *j)
{
	j->ran[0] = j->ran[1] = 0;
	pool_run_two(h, job_part, j);
	assert_int_equal(j->ran[0], 1);
	assert_int_equal(j->ran[1], 1);
	assert_true(pthread_equal(j->thread[0], pthread_self()));
	for (int p = 0; p < 2; p++)
		assert_true(j->out[p] == churn(j->seed + (uint64_t)p, j->work));
	return !pthread_equal(j->thread[1], pthread_self());
}

static void test_many_hand_offs(void **state)
{
	(void)state;
	struct h2o_pool h = {0};
	int on_helper = 0, i = 0;
	/* Jobs back to back, as a run's steps come: the helper spins between
	 * them. Then on until the helper has taken some (on a busy machine it
	 * may not get to the first ones before they are taken back). */
	for (; i < 5000 || (on_helper == 0 && i < 200000); i++) {
		struct job j = {.seed = (uint64_t)i, .work = 200 + i % 7 * 100};
		on_helper += hand_off(&h, &j);
	}
	assert_true(h.started);
	assert_true(on_helper > 0);
	print_message("%d of %d second parts ran on the helper\n", on_helper, i);
	pool_stop(&h);
	assert_false(h.started);
}

/* The helper asleep when a job comes, and the engine's thread asleep while
 * part 1 takes longer than the helper watches for. */
static void test_sleep_and_wake(void **state)
{
	(void)state;
	struct h2o_pool h = {0};
	for (int i = 0; i < 40; i++) {
		struct job j = {.seed = (uint64_t)i, .work = 100};
		hand_off(&h, &j);
		nap(3 * POOL_SPIN_NS); /* the helper goes to sleep */
		struct job slow = {
		        .seed = (uint64_t)i, .work = 100, .sleep_ns = i % 2 ? 3 * POOL_SPIN_NS : 0};
		hand_off(&h, &slow);
	}
	pool_stop(&h);
}

/* Stop in every state, and start again after each stop. */
static void test_stop_and_restart(void **state)
{
	(void)state;
	struct h2o_pool h = {0};
	pool_stop(&h); /* never started */
	assert_false(h.started);
	for (int i = 0; i < 300; i++) {
		struct job j = {.seed = (uint64_t)i, .work = 50};
		hand_off(&h, &j);
		assert_true(h.started);
		if (i % 3 == 1)
			nap(3 * POOL_SPIN_NS); /* asleep */
		else if (i % 3 == 2)
			hand_off(&h, &j); /* just done again */
		/* else: still spinning, or still signalling that it is done */
		pool_stop(&h);
		assert_false(h.started);
	}
	pool_stop(&h); /* twice */
}

/* ---- the helper inside the engine --------------------------------------- */

#define N      1500
#define DIM    48
#define HEAVY  48
#define RECENT 16

static struct budget budget(void)
{
	return (struct budget){HEAVY, RECENT, policy_default_sinks(HEAVY + RECENT), 0, 0, {{{0}}}};
}

#define SAME(a, b, n) assert_memory_equal((a), (b), (size_t)(n) * sizeof *(a))

/* Two records of one cache: the same, but for the figures. */
static void same_record(const struct cache_record *a, const struct cache_record *b, int dim)
{
	assert_int_equal(a->n_attended, b->n_attended);
	SAME(a->attended, b->attended, a->n_attended);
	SAME(a->attn, b->attn, a->n_attended);
	SAME(a->scores, b->scores, a->n_attended);
	assert_true(a->max == b->max && a->sum == b->sum);
	assert_int_equal(a->n_evicted, b->n_evicted);
	SAME(a->evicted, b->evicted, a->n_evicted);
	SAME(a->evicted_scores, b->evicted_scores, a->n_evicted);
	SAME(a->evicted_weights, b->evicted_weights, a->n_evicted);
	assert_int_equal(a->cutoff_pos, b->cutoff_pos);
	assert_true(a->cutoff_value == b->cutoff_value);
	SAME(a->out, b->out, dim);
}

static void same_state(const struct engine *a, const struct engine *b, int p)
{
	assert_int_equal(engine_len(a, p), engine_len(b, p));
	SAME(engine_positions(a, p), engine_positions(b, p), engine_len(a, p));
	SAME(engine_scores(a, p), engine_scores(b, p), engine_len(a, p));
}

/* Engines that never use the helper, one per policy: a cache that evicts
 * alone is never split, and a full cache in blocks of one row is too
 * little work for two threads. */
static void single_engines(const struct scene *sc, struct engine *one[POLICY_COUNT])
{
	const struct budget b = budget();
	for (int p = 0; p < POLICY_COUNT; p++) {
		one[p] = p == POLICY_FULL ? engine_new_rows(sc, &b, NULL, ENGINE_POLICY(p), 1)
		                          : engine_new_only(sc, &b, ENGINE_POLICY(p));
		assert_non_null(one[p]);
	}
}

static void free_engines(struct engine *one[POLICY_COUNT])
{
	for (int p = 0; p < POLICY_COUNT; p++) {
		/* Not one of them started the helper. */
		assert_false(one[p]->h.started);
		engine_free(one[p]);
	}
}

/* Every policy at once: the full cache's blocks and the caches that evict
 * on two threads, each step's records those of the single engines. */
static void test_engine_two_threads(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(N, DIM, HEAVY, RECENT, 11);
	const struct budget b = budget();
	struct engine *e = engine_new(sc, &b), *one[POLICY_COUNT];
	assert_non_null(e);
	single_engines(sc, one);
	struct step_record rec, orec;
	while (engine_step(e, &rec))
		for (int p = 0; p < POLICY_COUNT; p++) {
			assert_true(engine_step(one[p], &orec));
			same_record(&rec.c[p], &orec.c[p], DIM);
			same_state(e, one[p], p);
		}
	assert_true(e->h.started);
	engine_free(e);
	free_engines(one);
	scene_free(sc);
}

/* A lazy full cache adds its blocks' weights to the scores on two threads;
 * the caches that evict jump ahead on two threads. */
static void test_engine_lazy_and_jumps(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(N, DIM, HEAVY, RECENT, 12);
	const struct budget b = budget();
	struct engine *lazy = engine_new_only(sc, &b, ENGINE_POLICY(POLICY_FULL));
	struct engine *jumps =
	        engine_new_only(sc, &b, ENGINE_ALL_POLICIES & ~ENGINE_POLICY(POLICY_FULL));
	struct engine *one[POLICY_COUNT];
	assert_non_null(lazy);
	assert_non_null(jumps);
	single_engines(sc, one);
	engine_lazy_full(lazy);
	/* Each a jump long enough for two threads, but the first. */
	const int stops[] = {7, N - 40, N};
	for (size_t i = 0; i < sizeof stops / sizeof stops[0]; i++) {
		while (engine_step_count(lazy) < stops[i])
			assert_true(engine_advance(lazy));
		engine_sync_full(lazy);
		engine_advance_to(jumps, stops[i]);
		/* (engine_advance_to would split a long jump even of one
		 * cache.) */
		for (int p = 0; p < POLICY_COUNT; p++)
			while (engine_step_count(one[p]) < stops[i])
				assert_true(engine_advance(one[p]));
		same_state(lazy, one[POLICY_FULL], POLICY_FULL);
		for (int p = 0; p < POLICY_COUNT; p++)
			if (p != POLICY_FULL)
				same_state(jumps, one[p], p);
	}
	assert_true(lazy->h.started);
	assert_true(jumps->h.started);
	engine_free(lazy);
	engine_free(jumps);
	free_engines(one);
	scene_free(sc);
}

/* Engines freed with work computed ahead and not handed out (a block of
 * the full cache, steps of the caches that evict), the helper spinning,
 * or asleep. */
/* The pool's two users at once: an engine's steps on two threads between
 * a model's batches on two threads, each result that of one thread. */
static void test_engine_and_model(void **state)
{
	(void)state;
	char err[LLAMA_ERR_MAX] = "";
	struct llama_model *two = NULL, *one = NULL;
	assert_int_equal(llama_load("models/stories260K/stories260K.bin", &two, err), 0);
	assert_int_equal(llama_load("models/stories260K/stories260K.bin", &one, err), 0);
	llama_set_threads(two, LLAMA_THREADS_TWO);
	llama_set_threads(one, LLAMA_THREADS_ONE);
	enum { RUNS = 3 };
	struct llama_run *b[RUNS], *s[RUNS];
	for (int i = 0; i < RUNS; i++) {
		b[i] = llama_run_new(two);
		s[i] = llama_run_new(one);
		assert_true(b[i] && s[i]);
	}
	const int vocab = llama_model_config(two)->vocab_size;

	struct scene *sc = fixture_random(N, DIM, HEAVY, RECENT, 13);
	const struct budget bud = budget();
	struct engine *e = engine_new(sc, &bud), *single[POLICY_COUNT];
	assert_non_null(e);
	single_engines(sc, single);
	struct step_record rec, orec;
	for (int pos = 0; engine_step(e, &rec); pos++) {
		for (int p = 0; p < POLICY_COUNT; p++) {
			assert_true(engine_step(single[p], &orec));
			same_record(&rec.c[p], &orec.c[p], DIM);
		}
		if (pos >= 32)
			continue;
		int tokens[RUNS];
		for (int i = 0; i < RUNS; i++)
			tokens[i] = 1 + (pos * 7 + i * 31) % (vocab - 1);
		assert_int_equal(llama_step_batch(two, b, RUNS, tokens, pos), 0);
		for (int i = 0; i < RUNS; i++) {
			assert_int_equal(llama_step(one, s[i], tokens[i], pos), 0);
			SAME(llama_logits(b[i]), llama_logits(s[i]), vocab);
		}
	}
	assert_true(e->h.started);
	assert_true(model_pool_started(two->pool));
	assert_false(model_pool_started(one->pool));
	engine_free(e);
	free_engines(single);
	scene_free(sc);
	for (int i = 0; i < RUNS; i++) {
		llama_run_free(b[i]);
		llama_run_free(s[i]);
	}
	llama_free(two);
	llama_free(one);
}

static void test_engine_free_mid_scene(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(N, DIM, HEAVY, RECENT, 13);
	const struct budget b = budget();
	/* Inside a block and a batch of steps computed ahead. */
	const int stops[] = {601, 1001, 1301};
	for (int i = 0; i < 3; i++) {
		struct engine *e = engine_new(sc, &b);
		assert_non_null(e);
		struct step_record rec;
		while (engine_step_count(e) < stops[i])
			assert_true(engine_step(e, &rec));
		assert_true(e->h.started);
		assert_true(e->live > e->t);
		assert_true(e->f.first + e->f.count > e->t);
		if (i == 2)
			nap(3 * POOL_SPIN_NS); /* asleep */
		engine_free(e);
	}
	scene_free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_many_hand_offs),
	        cmocka_unit_test(test_sleep_and_wake),
	        cmocka_unit_test(test_stop_and_restart),
	        cmocka_unit_test(test_engine_two_threads),
	        cmocka_unit_test(test_engine_lazy_and_jumps),
	        cmocka_unit_test(test_engine_free_mid_scene),
	        cmocka_unit_test(test_engine_and_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
