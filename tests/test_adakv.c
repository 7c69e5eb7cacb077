/*
 * Unit tests of AdaKV (policy_adakv.c, policy_ada_select, the per-kv-head
 * plans of plan.c): its rule on a layer worked by hand, its safeguard in
 * the engine, and SnapKV where a layer has one key/value head; and its
 * matched form adakv-win (policy_adakv_window.c), by hand and in the
 * engine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/heads.h"
#include "h2o/policy.h"
#include "scene_fixture.h"

/*
 * A layer of two kv heads, one query head each, 20 positions, a window of
 * 1 (position 19), B = 10: n_safe = int(10 x 0.2) = 2, so each head keeps,
 * beside its window, its 2 - 1 = 1 best before it; the layer keeps 2 x 10
 * = 20 of the 40, so 20 go.
 *
 * Observed rows (the window's mean weights): head 0 has 0.5 at positions
 * 0, 5, 10 and 15; head 1 has 0.05 at position 3; zeros elsewhere. The
 * pool of five (zero padding, over positions 0 .. 18) spreads each spike
 * over its neighbours, divided by 5:
 *
 *   head 0: 0.1 at 0 .. 17 (spikes 0: 0-2, 5: 3-7, 10: 8-12, 15: 13-17,
 *           no overlap), 0 at 18;
 *   head 1: 0.01 at 1 .. 5, 0 at 0 and 6 .. 18.
 *
 * Safeguard: head 0's best is a tie of 0.1, the lower position stays: 0;
 * head 1's a tie of 0.01: position 1. The other 2 x 18 compete, weakest
 * first (a tie prunes the later head, then the later position): the 15
 * zeros (head 1's 18 .. 6 and 0, then head 0's 18), head 1's 0.01 at 5,
 * 4, 3, 2, and then the 20th, the weakest 0.1: head 0's 17. So head 1
 * keeps 1 and 19 (2 positions: without the safeguard it would lose 1 to
 * head 0's 17), head 0 keeps 0 .. 16 and 19 (18, above B: it took the
 * budget head 1 gave up). The cut-off is the lowest kept that competed:
 * head 0's 16 at 0.1 (flat index 16).
 */
static void test_rule_by_hand(void **state)
{
	(void)state;
	enum { LEN = 20 };
	int pos[LEN], order[2 * LEN];
	double obs[2 * LEN] = {0}, rank[2 * LEN];
	for (int j = 0; j < LEN; j++)
		pos[j] = j;
	obs[0] = obs[5] = obs[10] = obs[15] = 0.5;
	obs[LEN + 3] = 0.05;
	const struct policy_cache c = {.len = LEN,
	                               .pos = pos,
	                               .observed = obs,
	                               .heads = 2,
	                               .window = 1,
	                               .rank = rank,
	                               .kv_heads = 2,
	                               .order = order};
	const struct policy_budget b = {.heavy = 5, .recent = 5, .n = LEN, .prompt = LEN};
	unsigned char gone[2 * LEN] = {0};
	int cut = -2;
	double value;
	cut = policy_run(POLICY_ADAKV, &b, b.prompt, &c, gone, &value);
	for (int j = 0; j < LEN; j++) {
		assert_int_equal(gone[j], j == 17 || j == 18);              /* head 0 */
		assert_int_equal(gone[LEN + j], !(j == 1 || j == LEN - 1)); /* head 1 */
	}
	assert_int_equal(cut, 16);
	assert_true(rank[cut] == 0.5 / 5.0);
	assert_true(rank[LEN + 1] == 0.05 / 5.0 && rank[LEN + 6] == 0.0);
	/* The layer keeps 2 B; head 0 alone more than B. */
	int kept0 = 0, kept1 = 0;
	for (int j = 0; j < LEN; j++) {
		kept0 += !gone[j];
		kept1 += !gone[LEN + j];
	}
	assert_int_equal(kept0, 18);
	assert_int_equal(kept1, 2);

	/* With B = 9, n_safe = int(1.8) = 1 is the window alone: head 1 then
	 * keeps nothing before it (its 0.01s lose to head 0's 0.1s). */
	const struct policy_budget b9 = {.heavy = 4, .recent = 5, .n = LEN, .prompt = LEN};
	memset(gone, 0, sizeof gone);
	cut = policy_run(POLICY_ADAKV, &b9, b9.prompt, &c, gone, &value);
	int kept = 0;
	for (int j = 0; j < LEN - 1; j++)
		kept += !gone[LEN + j];
	assert_int_equal(kept, 0);
	assert_false(gone[2 * LEN - 1]);
	assert_int_equal(policy_ada_safe(9), 1);
	assert_int_equal(policy_ada_safe(10), 2);
	assert_int_equal(policy_ada_safe(340), 68);
}

/* A budget within the window keeps each head's B newest; the cache as
 * long as B evicts nothing. */
static void test_budget_within_window(void **state)
{
	(void)state;
	int pos[6] = {0, 1, 2, 3, 4, 5}, order[12];
	double obs[12] = {0.9, 0.8, 0, 0, 0, 0, 0.1, 0, 0, 0, 0, 0}, rank[12];
	const struct policy_cache c = {.len = 6,
	                               .pos = pos,
	                               .observed = obs,
	                               .heads = 2,
	                               .window = 4,
	                               .rank = rank,
	                               .kv_heads = 2,
	                               .order = order};
	const struct policy_budget b = {.heavy = 1, .recent = 2, .n = 6, .prompt = 6};
	unsigned char gone[12] = {0};
	int cut;
	double value;
	cut = policy_run(POLICY_ADAKV, &b, b.prompt, &c, gone, &value);
	assert_int_equal(cut, -1);
	for (int g = 0; g < 2; g++)
		for (int j = 0; j < 6; j++)
			assert_int_equal(gone[g * 6 + j], j < 3);
	const struct policy_budget b6 = {.heavy = 3, .recent = 3, .n = 6, .prompt = 6};
	memset(gone, 0, sizeof gone);
	cut = policy_run(POLICY_ADAKV, &b6, b6.prompt, &c, gone, &value);
	assert_int_equal(cut, -1);
	assert_null(memchr(gone, 1, sizeof gone));
	/* No observation window (a caller without one): nothing goes. */
	struct policy_cache none = c;
	none.observed = NULL;
	cut = policy_run(POLICY_ADAKV, &b, b.prompt, &none, gone, &value);
	assert_null(memchr(gone, 1, sizeof gone));
}

/*
 * test_safeguard_in_engine's scene: 640 tokens, a prompt of 630, one layer
 * of two heads on two kv heads, heavy 170 + recent 170. Head 0 attends at
 * random, head 1 to its four newest positions only (1e-6 elsewhere).
 */
static struct scene *two_head_scene(void)
{
	const int n = 640;
	struct scene *sc = fixture_base(n, 1, 170, 170, SCENE_ATTENTION, NULL);
	sc->heads = 2;
	sc->kv_heads = 2;
	sc->prompt = 630;
	const size_t rows = scene_attn_offset(n);
	sc->attn = malloc(2 * rows * sizeof *sc->attn);
	unsigned long long s = 12345;
	for (int h = 0; h < 2; h++)
		for (int i = 0; i < n; i++) {
			double *row = sc->attn + (size_t)h * rows + scene_attn_offset(i), sum = 0.0;
			for (int j = 0; j <= i; j++) {
				s = s * 6364136223846793005ULL + 1442695040888963407ULL;
				const double u = 0.05 + (double)(s >> 11) / 9007199254740992.0;
				sum += row[j] = h == 0 ? u : (j >= i - 3 ? 1.0 : 1e-6);
			}
			for (int j = 0; j <= i; j++)
				row[j] /= sum;
		}
	return sc;
}

/*
 * The safeguard in the engine: one layer, two kv heads of one query head,
 * 640 tokens, a prompt of 630, B = 340 (W = 64, n_safe = 68: each head
 * keeps 68 - 64 = 4 before its window whatever). Head 1 attends to its
 * four newest positions only (weight 1 there, 1e-6 elsewhere), so every
 * score it has before the window is below head 0's; 2 (630 - 340) = 580
 * go, more than head 1's 566 - 4: head 1 keeps 4 + 64 = 68, head 0 the
 * 680 - 68 = 612 left, all that one head of two can take. Then both grow
 * by one a step, and every cache stays within the policy's capacity.
 */
static void test_safeguard_in_engine(void **state)
{
	(void)state;
	const int n = 640, prompt = 630;
	struct scene *sc = two_head_scene();
	const struct budget want = budget_scene(sc, 170, 170, policy_default_sinks(340));
	const struct policy_budget b = policy_budget_make(&want, n, 1, 2);
	struct heads_run run;
	assert_int_equal(heads_run_init(&run, sc, &want), 0);
	/* The bound: 2 x 340 - max(64, 68) = 612 at the prompt's end (head 0
	 * reaches it), then every new token; without G, the whole scene. */
	const int cap = policy_capacity(POLICY_ADAKV, &b);
	assert_int_equal(cap, 612 + n - prompt);
	struct policy_budget loose = b;
	loose.kv_heads = 0;
	assert_int_equal(policy_capacity(POLICY_ADAKV, &loose), n);
	for (int t = 1; heads_run_step(&run); t++) {
		const int len0 = engine_len(run.e[0], POLICY_ADAKV);
		const int len1 = engine_len(run.e[1], POLICY_ADAKV);
		/* The prompt is held whole until its end. */
		assert_true(t < prompt || (len0 <= cap && len1 <= cap));
		if (t < prompt) {
			assert_int_equal(len0, t);
			assert_int_equal(len1, t);
			continue;
		}
		assert_int_equal(len0, 612 + t - prompt);
		if (t == n)
			assert_int_equal(len0, cap);
		assert_int_equal(len1, 68 + t - prompt);
		if (t > prompt)
			continue;
		const struct cache_record *r0 = &run.rec[0].c[POLICY_ADAKV];
		const struct cache_record *r1 = &run.rec[1].c[POLICY_ADAKV];
		assert_int_equal(r0->n_evicted, 18);
		assert_int_equal(r1->n_evicted, 562);
		/* One cut-off for the layer, a score of head 0's. */
		assert_true(r0->cutoff_pos >= 0 && r0->cutoff_pos < prompt - 64);
		assert_int_equal(r1->cutoff_pos, r0->cutoff_pos);
		assert_true(r1->cutoff_value == r0->cutoff_value && r0->cutoff_value > 0.0);
		/* Head 1 kept its four best before the window and the window. */
		const int *kept = engine_positions(run.e[1], POLICY_ADAKV);
		for (int i = 4; i < 68; i++)
			assert_int_equal(kept[i], prompt - 68 + i);
		assert_true(kept[3] < prompt - 64);
	}
	heads_run_done(&run);
	scene_free(sc);
}

/*
 * adakv-win, AdaKV's matched form, on test_rule_by_hand's layer (window
 * 1, B = 10, P = 20): at the prompt's end AdaKV's choice, head 0 keeping
 * 18 (0 .. 16 and 19), head 1 keeping 2 (1 and 19); the layer 20 = 2 B.
 * Then each head holds its own share: the positions it selected before
 * the window (P - W = 19) stay, of the rest the newest.
 *
 *   step 21, head 1 {1, 19, 20}: share 1 + 1 = 2, so 19 goes;
 *   step 21, head 0 {0 .. 16, 19, 20}: share 17 + 1 = 18, so 19 goes;
 *   step 22, head 1 {1, 20, 21}: 20 goes.
 *
 * At an interval of 2 step 21 keeps all and step 22 cuts back to the
 * share: head 1 {1, 19, 20, 21} loses 19 and 20. A prompt of at most B
 * (P = 8) cut nothing: each head holds B, the prompt before the window
 * (0 .. 6) and the newest: at step 12, {0 .. 11} loses 7 and 8.
 */
static void test_window_form_by_hand(void **state)
{
	(void)state;
	enum { LEN = 20 };
	int pos[LEN + 2], order[2 * LEN];
	double obs[2 * LEN] = {0}, rank[2 * LEN];
	for (int j = 0; j < LEN; j++)
		pos[j] = j;
	obs[0] = obs[5] = obs[10] = obs[15] = 0.5;
	obs[LEN + 3] = 0.05;
	const struct policy_cache c = {.len = LEN,
	                               .pos = pos,
	                               .observed = obs,
	                               .heads = 2,
	                               .window = 1,
	                               .rank = rank,
	                               .kv_heads = 2,
	                               .order = order};
	struct policy_budget b = {
	        .heavy = 5, .recent = 5, .n = LEN + 10, .prompt = LEN, .kv_heads = 2};
	b.set.p[POLICY_ADAKV_WINDOW].window = 1;
	unsigned char gone[2 * LEN] = {0};
	double value;
	int cut = policy_run(POLICY_ADAKV_WINDOW, &b, b.prompt, &c, gone, &value);
	assert_int_equal(cut, 16);
	for (int j = 0; j < LEN; j++) {
		assert_int_equal(gone[j], j == 17 || j == 18);
		assert_int_equal(gone[LEN + j], !(j == 1 || j == LEN - 1));
	}
	/* Decoding: one head at a time, no observation. */
	int h1[] = {1, 19, 20};
	struct policy_cache head = {.len = 3, .pos = h1, .kv_heads = 1};
	policy_run(POLICY_ADAKV_WINDOW, &b, 21, &head, gone, &value);
	assert_memory_equal(gone, ((unsigned char[]){0, 1, 0}), 3);
	int h0[19];
	for (int j = 0; j < 17; j++)
		h0[j] = j;
	h0[17] = 19;
	h0[18] = 20;
	head = (struct policy_cache){.len = 19, .pos = h0, .kv_heads = 1};
	policy_run(POLICY_ADAKV_WINDOW, &b, 21, &head, gone, &value);
	for (int j = 0; j < 19; j++)
		assert_int_equal(gone[j], j == 17);
	int h1b[] = {1, 20, 21};
	head = (struct policy_cache){.len = 3, .pos = h1b, .kv_heads = 1};
	policy_run(POLICY_ADAKV_WINDOW, &b, 22, &head, gone, &value);
	assert_memory_equal(gone, ((unsigned char[]){0, 1, 0}), 3);
	/* An interval of 2. */
	b.interval = 2;
	int h1c[] = {1, 19, 20};
	head = (struct policy_cache){.len = 3, .pos = h1c, .kv_heads = 1};
	policy_run(POLICY_ADAKV_WINDOW, &b, 21, &head, gone, &value);
	assert_memory_equal(gone, ((unsigned char[]){0, 0, 0}), 3);
	int h1d[] = {1, 19, 20, 21};
	head = (struct policy_cache){.len = 4, .pos = h1d, .kv_heads = 1};
	policy_run(POLICY_ADAKV_WINDOW, &b, 22, &head, gone, &value);
	assert_memory_equal(gone, ((unsigned char[]){0, 1, 1, 0}), 4);
	b.interval = 0;
	/* The head that holds most: 2 B - max(int(0.2 B), W) - W = 17 before
	 * the window, and the window's 1. */
	assert_int_equal(policies[POLICY_ADAKV_WINDOW]->region_budget(&b, POLICY_REGION_OLD), 17);
	assert_int_equal(policies[POLICY_ADAKV_WINDOW]->region_budget(&b, POLICY_REGION_RECENT), 1);
	/* A prompt of at most B. */
	b.prompt = 8;
	int all[12];
	for (int j = 0; j < 12; j++)
		all[j] = j;
	head = (struct policy_cache){.len = 12, .pos = all, .kv_heads = 1};
	policy_run(POLICY_ADAKV_WINDOW, &b, 12, &head, gone, &value);
	for (int j = 0; j < 12; j++)
		assert_int_equal(gone[j], j == 7 || j == 8);
	assert_int_equal(policy_matched_form(POLICY_ADAKV), POLICY_ADAKV_WINDOW);
	assert_int_equal(policy_matched_form(POLICY_ADAKV_WINDOW), -1);
}

/*
 * adakv-win in the engine on test_safeguard_in_engine's scene: at the
 * prompt's end head 0 keeps 612 and head 1 68, as AdaKV; then each holds
 * its share, so the layer holds 2 x 340 = 680 at every step, one token
 * going from each head a step (the oldest after its selected).
 */
static void test_window_form_in_engine(void **state)
{
	(void)state;
	const int n = 640, prompt = 630;
	struct scene *sc = two_head_scene();
	const struct budget want = budget_scene(sc, 170, 170, policy_default_sinks(340));
	const struct policy_budget b = policy_budget_make(&want, n, 1, 2);
	assert_int_equal(policy_capacity(POLICY_ADAKV_WINDOW, &b), 612);
	struct heads_run run;
	assert_int_equal(heads_run_init(&run, sc, &want), 0);
	for (int t = 1; heads_run_step(&run); t++) {
		const int len0 = engine_len(run.e[0], POLICY_ADAKV_WINDOW);
		const int len1 = engine_len(run.e[1], POLICY_ADAKV_WINDOW);
		if (t < prompt) {
			assert_int_equal(len0, t);
			continue;
		}
		assert_int_equal(len0, 612);
		assert_int_equal(len1, 68);
		/* The same choice as AdaKV's at the prompt's end. */
		if (t == prompt) {
			assert_memory_equal(engine_positions(run.e[1], POLICY_ADAKV_WINDOW),
			                    engine_positions(run.e[1], POLICY_ADAKV),
			                    68 * sizeof(int));
			continue;
		}
		const struct cache_record *r1 = &run.rec[1].c[POLICY_ADAKV_WINDOW];
		assert_int_equal(r1->n_evicted, 1);
		assert_int_equal(r1->evicted[0], prompt - 64 + (t - prompt - 1));
		assert_int_equal(run.rec[0].c[POLICY_ADAKV_WINDOW].n_evicted, 1);
		/* Head 1's four selected stay; then the newest 64. */
		const int *kept = engine_positions(run.e[1], POLICY_ADAKV_WINDOW);
		assert_true(kept[3] < prompt - 64);
		assert_int_equal(kept[4], t - 64);
		assert_int_equal(kept[67], t - 1);
	}
	heads_run_done(&run);
	scene_free(sc);
}

/* With one kv head per layer the layer's budget is the head's: AdaKV is
 * SnapKV, bit for bit, at every step of every head. */
static void test_one_kv_head_is_snapkv(void **state)
{
	(void)state;
	struct scene *sc = fixture_random_layers(2, 4, 1, 100, 3, 90, 5);
	const struct budget b = budget_scene(sc, 40, 30, policy_default_sinks(70));
	struct heads_run run;
	assert_int_equal(heads_run_init(&run, sc, &b), 0);
	int evicted = 0;
	while (heads_run_step(&run)) {
		for (int h = 0; h < run.count; h++) {
			const struct cache_record *a = &run.rec[h].c[POLICY_ADAKV];
			const struct cache_record *s = &run.rec[h].c[POLICY_SNAPKV];
			assert_int_equal(a->n_evicted, s->n_evicted);
			assert_memory_equal(a->evicted, s->evicted,
			                    (size_t)a->n_evicted * sizeof *a->evicted);
			assert_int_equal(a->cutoff_pos, s->cutoff_pos);
			assert_true(a->cutoff_value == s->cutoff_value);
			assert_memory_equal(a->attn, s->attn,
			                    (size_t)a->n_attended * sizeof *a->attn);
			const int len = engine_len(run.e[h], POLICY_ADAKV);
			assert_int_equal(len, engine_len(run.e[h], POLICY_SNAPKV));
			assert_memory_equal(engine_positions(run.e[h], POLICY_ADAKV),
			                    engine_positions(run.e[h], POLICY_SNAPKV),
			                    (size_t)len * sizeof(int));
			evicted += a->n_evicted;
		}
	}
	assert_int_equal(evicted, 8 * (90 - 70)); /* 8 heads, 20 each at step P */
	heads_run_done(&run);
	scene_free(sc);
}

/* The words: below the layer's cut-off, its pooled score. */
static void test_words(void **state)
{
	(void)state;
	const struct policy_budget b = {.heavy = 40, .recent = 30, .n = 100, .prompt = 90};
	const struct policy_loss loss = {0.5, 0.01, 7, 0.0123};
	struct policy_words w;
	policy_word(POLICY_ADAKV, &b, &loss, POLICY_VOICE_BRIEF, &w);
	assert_string_equal(w.before, "< layer 0.012 ");
	assert_int_equal(w.cutoff_pos, 7);
	policy_word(POLICY_ADAKV, &b, &loss, POLICY_VOICE_SENTENCE, &w);
	assert_string_equal(w.before,
	                    "pooled below the layer's cut-off 0.012, the lowest any of its heads "
	                    "kept (");
	assert_string_equal(w.after, ")");
	/* A budget within the window: a window's words. */
	const struct policy_loss window = {0.5, 0.01, -1, 0.0};
	policy_word(POLICY_ADAKV, &b, &window, POLICY_VOICE_BRIEF, &w);
	assert_string_equal(w.before, "left the window");
	/* Regions: before the window (P - W = 26 here) and after. */
	assert_int_equal(policies[POLICY_ADAKV]->region(&b, 91, 25), POLICY_REGION_OLD);
	assert_int_equal(policies[POLICY_ADAKV]->region(&b, 91, 26), POLICY_REGION_RECENT);
	assert_int_equal(policies[POLICY_ADAKV]->region_budget(&b, POLICY_REGION_OLD), 26);
	assert_int_equal(policies[POLICY_ADAKV]->region_budget(&b, POLICY_REGION_RECENT), 64 + 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_rule_by_hand),
	        cmocka_unit_test(test_budget_within_window),
	        cmocka_unit_test(test_safeguard_in_engine),
	        cmocka_unit_test(test_one_kv_head_is_snapkv),
	        cmocka_unit_test(test_words),
	        cmocka_unit_test(test_window_form_by_hand),
	        cmocka_unit_test(test_window_form_in_engine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
