/*
 * The real drop (src/timeline/drop.c): stories260K run once per policy,
 * every layer's cache evicted by that policy.
 *
 * A budget that never evicts gives every policy the full cache's logits
 * bit for bit; a small one makes H2O's text less likely and, before long,
 * changes what the model would say next; a prompt is read whole before
 * anything goes; generating, each run follows its own choices.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h2o/drop.h"
#include "h2o/scene.h"
#include "h2o/llama.h"
#include "h2o/tokenizer.h"
#include "drop_plain.h"
#include "kernel_env.h"

static const char *root = ".";

static const char story[] =
        "Once upon a time, there was a little girl named Lily. She loved to play outside in "
        "the park. One day, she saw a big red ball. She ran to the ball and kicked it. The ball "
        "went up high in the sky. Lily was happy. She said, \"Mom, look at my ball!\" Her mom "
        "smiled and said, \"Good job, Lily!\" Then they went home and had a nice lunch.";

static int setup(void **state)
{
	return drop_fixture_setup(state, root, story);
}

static int teardown(void **state)
{
	return drop_fixture_teardown(state);
}

static const unsigned all = (1u << POLICY_COUNT) - 1u;

static struct budget budget(int heavy, int recent)
{
	return (struct budget){heavy, recent, policy_default_sinks(heavy + recent), 0, 0, {{{0}}}};
}

/* drop_measure of B with a prompt of PROMPT tokens. */
static int measure(const struct llama_model *m, const int *tokens, int n, int given, int prompt,
                   const struct budget *b, unsigned mask, struct drop_result *out,
                   char err[DROP_ERR_MAX])
{
	struct budget at = *b;
	at.prompt = prompt;
	return drop_measure(m, tokens, n, given, &at, mask, out, err);
}

static void test_no_eviction_is_the_full_cache(void **state)
{
	const struct drop_fixture *f = *state;
	const struct budget b = budget(f->n, f->n);
	struct drop_result r;
	char err[DROP_ERR_MAX];
	assert_int_equal(measure(f->m, f->tokens, f->n, f->n, 0, &b, all, &r, err), 0);
	for (int p = 0; p < POLICY_COUNT; p++) {
		/* Every policy runs on the model. */
		assert_true(r.p[p].ran);
		assert_memory_equal(r.p[p].logprob, r.p[POLICY_FULL].logprob,
		                    (size_t)(f->n - 1) * sizeof(double));
		assert_int_equal(drop_first_change(&r, (enum policy_id)p), -1);
		/* The same logits: no divergence at all. */
		for (int t = 0; t < f->n; t++)
			assert_true(r.p[p].kl[t] == 0.0);
	}
	/* The model knows the story: far better than chance (512 tokens). */
	const double ppl = drop_perplexity(&r, POLICY_FULL, 0, f->n - 1);
	assert_true(ppl > 1.0 && ppl < 20.0);
	drop_result_free(&r);
}

static void test_small_budget_hurts(void **state)
{
	const struct drop_fixture *f = *state;
	const struct budget b = budget(4, 4);
	struct drop_result r;
	char err[DROP_ERR_MAX];
	assert_int_equal(measure(f->m, f->tokens, f->n, f->n, 0, &b, all, &r, err), 0);
	/* Until the cache first overflows (step 9), H2O is the full cache. */
	assert_memory_equal(r.p[POLICY_H2O].logprob, r.p[POLICY_FULL].logprob, 8 * sizeof(double));
	const double full = drop_perplexity(&r, POLICY_FULL, 0, f->n - 1);
	for (int p = 1; p < POLICY_COUNT; p++) {
		/* Without a prompt a policy that grows keeps every token, and
		 * ObservedAttention compresses nothing but a prompt. */
		if (policies[p]->grows || p == POLICY_OBSERVED)
			continue;
		const double ppl = drop_perplexity(&r, (enum policy_id)p, 0, f->n - 1);
		assert_true(ppl > full);
		assert_true(drop_first_change(&r, (enum policy_id)p) >= 8);
		/* Until the first eviction the runs agree; then they diverge,
		 * and every divergence is a KL: never below 0 (to rounding). */
		for (int t = 0; t < 8; t++)
			assert_true(r.p[p].kl[t] == 0.0);
		struct drop_kl kl;
		assert_int_equal(drop_kl_stats(&r, (enum policy_id)p, 0, f->n - 1, &kl), 0);
		assert_true(kl.mean > 0.0 && kl.median <= kl.p99 && kl.p99 <= kl.max);
		for (int t = 0; t < f->n; t++)
			assert_true(r.p[p].kl[t] > -1e-12);
	}
	drop_result_free(&r);
}

/* A prompt longer than the budget is read whole first: until its end the
 * runs are the full cache's. */
static void test_prompt_read_whole(void **state)
{
	const struct drop_fixture *f = *state;
	const struct budget b = budget(4, 4);
	const int prompt = 40;
	struct drop_result r;
	char err[DROP_ERR_MAX];
	assert_int_equal(measure(f->m, f->tokens, f->n, f->n, prompt, &b, all, &r, err), 0);
	for (int p = 0; p < POLICY_COUNT; p++)
		assert_memory_equal(r.p[p].logprob, r.p[POLICY_FULL].logprob,
		                    (size_t)(prompt - 1) * sizeof(double));
	assert_true(drop_perplexity(&r, POLICY_H2O, prompt, f->n - 1) >
	            drop_perplexity(&r, POLICY_FULL, prompt, f->n - 1));
	drop_result_free(&r);
}

/* The figures of policy P in A and B are the same bits (KL only when both
 * ran the full cache). */
static void assert_same_run(const struct drop_result *a, const struct drop_result *b,
                            enum policy_id p, bool kl)
{
	const size_t n = (size_t)a->n;
	assert_true(a->p[p].ran && b->p[p].ran);
	assert_memory_equal(a->p[p].logprob, b->p[p].logprob, (n - 1) * sizeof(double));
	assert_memory_equal(a->p[p].top, b->p[p].top, n * sizeof(int));
	assert_memory_equal(a->p[p].top_logprob, b->p[p].top_logprob, n * sizeof(double));
	assert_memory_equal(&a->p[p].held_peak, &b->p[p].held_peak, sizeof(double));
	assert_memory_equal(&a->p[p].held_mean, &b->p[p].held_mean, sizeof(double));
	if (a->p[p].fed != NULL || b->p[p].fed != NULL)
		assert_memory_equal(a->p[p].fed, b->p[p].fed, n * sizeof(int));
	if (kl)
		assert_memory_equal(a->p[p].kl, b->p[p].kl, n * sizeof(double));
	if (a->p[p].full_logprob != NULL && b->p[p].full_logprob != NULL)
		assert_memory_equal(a->p[p].full_logprob, b->p[p].full_logprob,
		                    (n - 1) * sizeof(double));
}

/*
 * Every policy run together shares the prompt's steps, given a span at a
 * time, and the steps of runs whose caches hold the same slots (window and
 * snapkv-win, the SnapKV family that keeps every token after the prompt):
 * each policy's figures are still those of its run alone, one position a
 * step (H2O_DROP_SPAN=1: nothing shared), and its divergence that of its
 * run beside the full cache's alone, bit for bit, teacher-forced and
 * generating.
 */
static void test_shared_runs_equal_alone(void **state)
{
	const struct drop_fixture *f = *state;
	const struct budget b = budget(4, 4);
	char err[DROP_ERR_MAX];
	for (int gen = 0; gen < 2; gen++) {
		const int given = gen ? 30 : f->n, n = gen ? 60 : f->n;
		struct drop_result r;
		assert_int_equal(measure(f->m, f->tokens, n, given, 16, &b, all, &r, err), 0);
		for (int p = 0; p < POLICY_COUNT; p++) {
			struct drop_result alone, pair;
			setenv("H2O_DROP_SPAN", "1", 1);
			assert_int_equal(
			        measure(f->m, f->tokens, n, given, 16, &b, 1u << p, &alone, err),
			        0);
			unsetenv("H2O_DROP_SPAN");
			assert_same_run(&r, &alone, (enum policy_id)p, false);
			drop_result_free(&alone);
			assert_int_equal(measure(f->m, f->tokens, n, given, 16, &b,
			                         1u << p | 1u << POLICY_FULL, &pair, err),
			                 0);
			assert_same_run(&r, &pair, (enum policy_id)p, true);
			drop_result_free(&pair);
		}
		drop_result_free(&r);
	}
}

/* Expected Attention reads each run's queries before RoPE: it is not the
 * B newest it falls back to without them (the window's cache). */
static void test_expected_reads_queries(void **state)
{
	const struct drop_fixture *f = *state;
	const struct budget b = budget(4, 4);
	char err[DROP_ERR_MAX];
	struct drop_result r;
	const unsigned mask = 1u << POLICY_EXPECTED | 1u << POLICY_WINDOW;
	assert_int_equal(measure(f->m, f->tokens, f->n, f->n, 16, &b, mask, &r, err), 0);
	assert_true(memcmp(r.p[POLICY_EXPECTED].logprob, r.p[POLICY_WINDOW].logprob,
	                   (size_t)(f->n - 1) * sizeof(double)) != 0);
	drop_result_free(&r);
}

/* Generating: after the prompt each run is fed its own greedy choice. */
static void test_generate(void **state)
{
	const struct drop_fixture *f = *state;
	const int prompt = 12, n = 80;
	struct drop_result r, wide;
	char err[DROP_ERR_MAX];
	const struct budget small = budget(3, 3), big = budget(n, n);
	assert_int_equal(measure(f->m, f->tokens, n, prompt, prompt, &big, all, &wide, err), 0);
	assert_int_equal(measure(f->m, f->tokens, n, prompt, prompt, &small, all, &r, err), 0);
	for (int p = 0; p < POLICY_COUNT; p++) {
		assert_memory_equal(wide.p[p].fed, wide.p[POLICY_FULL].fed,
		                    (size_t)n * sizeof(int));
		assert_memory_equal(r.p[p].fed, f->tokens, (size_t)prompt * sizeof(int));
		for (int t = prompt; t < n; t++)
			assert_int_equal(r.p[p].fed[t], r.p[p].top[t - 1]);
	}
	assert_memory_equal(r.p[POLICY_FULL].fed, wide.p[POLICY_FULL].fed, (size_t)n * sizeof(int));
	drop_result_free(&r);
	drop_result_free(&wide);
}

/* The scene owns the model it loaded: a checkpoint replaced on disk after
 * the scene loaded (here cut to a few bytes of garbage) changes nothing of
 * the real drop, which runs the scene's own model, and the model panel's
 * app the same. */
static void test_scene_owns_its_model(void **state)
{
	const struct drop_fixture *f = *state;
	char dir[] = "/tmp/h2o-drop-XXXXXX", path[1200], err[SCENE_ERROR_MAX];
	assert_non_null(mkdtemp(dir));
	const char *names[] = {"stories260K.bin", "tok512.bin"};
	for (int i = 0; i < 2; i++) {
		char from[1024];
		snprintf(from, sizeof from, "%s/models/stories260K/%s", root, names[i]);
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		FILE *in = fopen(from, "rb"), *out = fopen(path, "wb");
		assert_true(in && out);
		char buf[65536];
		size_t got;
		while ((got = fread(buf, 1, sizeof buf, in)) > 0)
			assert_int_equal(fwrite(buf, 1, got, out), got);
		fclose(in);
		assert_int_equal(fclose(out), 0);
	}
	snprintf(path, sizeof path, "%s/scene.json", dir);
	FILE *js = fopen(path, "w");
	assert_non_null(js);
	fputs("{\"heavy\": 4, \"recent\": 4, \"prompt\": 12, \"model\": \"stories260K.bin\", "
	      "\"tokenizer\": \"tok512.bin\", \"text\": \"Once upon a time, there was a little "
	      "girl named Lily. She loved to play outside in the park.\"}",
	      js);
	assert_int_equal(fclose(js), 0);
	struct scene *sc;
	assert_int_equal(scene_load_file(path, &sc, err), 0);
	assert_non_null(sc->model);
	assert_non_null(sc->tokenizer);
	const struct budget b = budget(4, 4);
	struct drop_result before, after;
	char derr[DROP_ERR_MAX];
	assert_int_equal(measure(sc->model, sc->tokens, sc->n, sc->given, sc->prompt, &b, all,
	                         &before, derr),
	                 0);
	/* The file replaced by garbage. */
	snprintf(path, sizeof path, "%s/stories260K.bin", dir);
	FILE *bad = fopen(path, "wb");
	assert_non_null(bad);
	fputs("garbage", bad);
	assert_int_equal(fclose(bad), 0);
	assert_int_equal(
	        measure(sc->model, sc->tokens, sc->n, sc->given, sc->prompt, &b, all, &after, derr),
	        0);
	for (int p = 0; p < POLICY_COUNT; p++)
		assert_memory_equal(before.p[p].logprob, after.p[p].logprob,
		                    (size_t)(sc->n - 1) * sizeof(double));
	/* And it is the model the fixture loaded from the shipped file. */
	struct drop_result direct;
	assert_int_equal(
	        measure(f->m, sc->tokens, sc->n, sc->given, sc->prompt, &b, all, &direct, derr), 0);
	assert_memory_equal(direct.p[POLICY_H2O].logprob, after.p[POLICY_H2O].logprob,
	                    (size_t)(sc->n - 1) * sizeof(double));
	drop_result_free(&before);
	drop_result_free(&after);
	drop_result_free(&direct);
	scene_free(sc);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, i < 2 ? names[i] : "scene.json");
		unlink(path);
	}
	rmdir(dir);
}

/* The KL figures worked by hand: of 0.1 0.4 0.2 0.3 (and 0.9 outside the
 * range) the mean and the median are 0.25, the 99th percentile by nearest
 * rank and the maximum 0.4; of three, the median is the middle one. */
static void test_kl_stats(void **state)
{
	(void)state;
	double kl[5] = {0.1, 0.4, 0.2, 0.3, 0.9};
	struct drop_result r = {.n = 5};
	r.p[POLICY_H2O].ran = true;
	r.p[POLICY_H2O].kl = kl;
	struct drop_kl s;
	assert_int_equal(drop_kl_stats(&r, POLICY_H2O, 0, 4, &s), 0);
	assert_true(fabs(s.mean - 0.25) < 1e-15 && fabs(s.median - 0.25) < 1e-15);
	assert_true(s.p99 == 0.4 && s.max == 0.4);
	assert_int_equal(drop_kl_stats(&r, POLICY_H2O, 1, 4, &s), 0);
	assert_true(s.median == 0.3 && s.p99 == 0.4);
	/* Nothing to measure: -1. */
	assert_int_equal(drop_kl_stats(&r, POLICY_H2O, 2, 2, &s), -1);
	assert_int_equal(drop_kl_stats(&r, POLICY_TOVA, 0, 4, &s), -1);
}

/* The drop's H2O is the plain loop's, bit for bit, with and without a
 * prompt. */
static void test_h2o_plain(void **state)
{
	const struct drop_fixture *f = *state;
	const int cases[][3] = {{0, 4, 4}, {40, 6, 2}, {20, 0, 5}, {10, 7, 0}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const int prompt = cases[c][0], heavy = cases[c][1], recent = cases[c][2];
		const struct budget b = budget(heavy, recent);
		struct drop_result r;
		char err[DROP_ERR_MAX];
		assert_int_equal(
		        measure(f->m, f->tokens, f->n, f->n, prompt, &b, 1u << POLICY_H2O, &r, err),
		        0);
		double lp[512];
		plain_h2o(f->m, f->tokens, f->n, prompt, heavy, recent, 1, lp, NULL);
		assert_memory_equal(r.p[POLICY_H2O].logprob, lp,
		                    (size_t)(f->n - 1) * sizeof(double));
		drop_result_free(&r);
	}
}

/* Compressing at an interval: the drop's H2O is the plain loop's, bit for
 * bit, every N steps with and without a prompt; an interval of 1 is the
 * default's run for every policy, and a larger one is another run. */
static void test_interval(void **state)
{
	const struct drop_fixture *f = *state;
	const int cases[][4] = {{0, 4, 4, 3}, {40, 6, 2, 8}, {20, 0, 5, 5}, {10, 7, 0, 2}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const int prompt = cases[c][0], heavy = cases[c][1], recent = cases[c][2];
		struct budget b = budget(heavy, recent);
		b.interval = cases[c][3];
		struct drop_result r;
		char err[DROP_ERR_MAX];
		assert_int_equal(
		        measure(f->m, f->tokens, f->n, f->n, prompt, &b, 1u << POLICY_H2O, &r, err),
		        0);
		double lp[512], every[512];
		plain_h2o(f->m, f->tokens, f->n, prompt, heavy, recent, cases[c][3], lp, NULL);
		assert_memory_equal(r.p[POLICY_H2O].logprob, lp,
		                    (size_t)(f->n - 1) * sizeof(double));
		plain_h2o(f->m, f->tokens, f->n, prompt, heavy, recent, 1, every, NULL);
		assert_memory_not_equal(lp, every, (size_t)(f->n - 1) * sizeof(double));
		drop_result_free(&r);
	}
	struct budget one = budget(4, 4), zero = budget(4, 4);
	one.interval = 1;
	struct drop_result a, b;
	char err[DROP_ERR_MAX];
	assert_int_equal(measure(f->m, f->tokens, f->n, f->n, 12, &one, all, &a, err), 0);
	assert_int_equal(measure(f->m, f->tokens, f->n, f->n, 12, &zero, all, &b, err), 0);
	for (int p = 0; p < POLICY_COUNT; p++)
		assert_memory_equal(a.p[p].logprob, b.p[p].logprob,
		                    (size_t)(f->n - 1) * sizeof(double));
	drop_result_free(&a);
	drop_result_free(&b);
}

/* ---- The SnapKV family's real drop the plain way ------------------------ */

static const double *rank_key;
/* A higher key first; a tie keeps the lower index. */
static int key_desc(const void *a, const void *b)
{
	const int i = *(const int *)a, j = *(const int *)b;
	if (rank_key[i] != rank_key[j])
		return rank_key[i] > rank_key[j] ? -1 : 1;
	return i - j;
}
/* A lower key first; a tie puts the higher index (a later head, a later
 * position) first: AdaKV's weakest first. */
static int key_asc(const void *a, const void *b)
{
	const int i = *(const int *)a, j = *(const int *)b;
	if (rank_key[i] != rank_key[j])
		return rank_key[i] < rank_key[j] ? -1 : 1;
	return j - i;
}

/* SnapKV's score of each of the OLDER positions before the window, from
 * COUNT query heads' observation rows (each LEN long) at O: each row
 * pooled over five neighbours (zero outside 0 .. OLDER - 1), divided by
 * 5, summed over the heads and divided by their number. */
static void snap_scores(const double *o, int count, int len, int older, double *score)
{
	for (int j = 0; j < older; j++) {
		double sum = 0.0;
		for (int h = 0; h < count; h++) {
			double pool = 0.0;
			for (int d = j - 2; d <= j + 2; d++)
				if (d >= 0 && d < older)
					pool += o[(size_t)h * (size_t)len + (size_t)d];
			sum += pool / 5.0;
		}
		score[j] = sum / count;
	}
}

/*
 * One run of policy ID (SnapKV, PyramidKV, AdaKV or their window forms)
 * written out with a budget of BUDGET: during the prompt's last W = min(64,
 * P) steps every query head's weights add up; at its end, divided by W,
 * they score the positions before the window, and each kv head keeps the
 * window and the best the rest of its budget allows (PyramidKV's budget
 * by layer; AdaKV's heads competing for the layer's, each keeping its
 * safeguard). After it the window form keeps the selected and the newest.
 */
static void plain_snap(const struct drop_fixture *f, enum policy_id id, int prompt, int budget,
                       double *lp)
{
	const struct llama_config *cfg = llama_model_config(f->m);
	const int heads = cfg->n_heads, kv = cfg->n_kv_heads, group = heads / kv;
	const int layers = cfg->n_layers, w = prompt < 64 ? prompt : 64, older = prompt - w;
	const struct policy_budget b = {.heavy = budget / 2,
	                                .recent = budget - budget / 2,
	                                .prompt = prompt,
	                                .layers = layers,
	                                .kv_heads = kv};
	double *obs = calloc((size_t)layers * (size_t)heads * (size_t)prompt, sizeof *obs);
	double *score = malloc((size_t)kv * (size_t)prompt * sizeof *score);
	int *idx = malloc((size_t)kv * (size_t)prompt * sizeof *idx);
	unsigned char *keep = malloc((size_t)kv * (size_t)prompt);
	int *share = calloc((size_t)layers * (size_t)kv, sizeof *share);
	assert_true(obs && score && idx && keep && share);
	struct llama_run *run = llama_run_new(f->m);
	for (int t = 0; t < f->n; t++) {
		assert_int_equal(llama_step(f->m, run, f->tokens[t], t), 0);
		if (t + 1 < f->n)
			lp[t] = plain_logprob(cfg, llama_logits(run), f->tokens[t + 1]);
		if (t >= prompt - w && t < prompt)
			for (int l = 0; l < layers; l++)
				for (int h = 0; h < heads; h++) {
					const float *wt = llama_run_weights(run, l, h);
					for (int j = 0; j <= t; j++)
						obs[((size_t)l * (size_t)heads + (size_t)h) *
						            (size_t)prompt +
						    (size_t)j] += (double)wt[j];
				}
		if (t == prompt - 1) {
			for (size_t i = 0; i < (size_t)layers * (size_t)heads * (size_t)prompt; i++)
				obs[i] /= w;
			for (int l = 0; l < layers; l++) {
				const double *lo = obs + (size_t)l * (size_t)heads * (size_t)prompt;
				const int cap =
				        id == POLICY_PYRAMIDKV ? policy_pyramid_budget(&b, l)
				        : id == POLICY_PYRAMIDKV_WINDOW ? policy_pyramid_held(&b, l)
				                                        : budget;
				if (prompt <= cap)
					continue;
				for (int g = 0; g < kv; g++) {
					unsigned char *k = keep + (size_t)g * (size_t)prompt;
					/* Within the window: the newest. */
					for (int j = 0; j < prompt; j++)
						k[j] = j >= prompt - cap;
					if (cap <= w)
						continue;
					snap_scores(lo + (size_t)g * (size_t)group * (size_t)prompt,
					            group, prompt, older,
					            score + (size_t)g * prompt);
				}
				const bool ada = id == POLICY_ADAKV || id == POLICY_ADAKV_WINDOW;
				if (cap > w && !ada)
					for (int g = 0; g < kv; g++) {
						unsigned char *k =
						        keep + (size_t)g * (size_t)prompt;
						for (int j = 0; j < older; j++)
							idx[j] = j;
						rank_key = score + (size_t)g * (size_t)prompt;
						qsort(idx, (size_t)older, sizeof *idx, key_desc);
						for (int j = 0; j < older; j++)
							k[j] = 0;
						for (int j = 0; j < cap - w && j < older; j++)
							k[idx[j]] = 1;
					}
				if (cap > w && ada) {
					/* Every head's safeguard, then the layer's
					 * competition for kv x B. */
					int safe = (int)(budget * 0.20) - w;
					safe = safe < 0 ? 0 : safe > older ? older : safe;
					int count = 0;
					for (int g = 0; g < kv; g++) {
						int own[512];
						for (int j = 0; j < older; j++)
							own[j] = g * prompt + j;
						rank_key = score;
						qsort(own, (size_t)older, sizeof *own, key_desc);
						for (int j = safe; j < older; j++)
							idx[count++] = own[j];
					}
					rank_key = score;
					qsort(idx, (size_t)count, sizeof *idx, key_asc);
					memset(keep, 1, (size_t)kv * (size_t)prompt);
					for (int i = 0; i < kv * (prompt - budget); i++)
						keep[idx[i]] = 0;
				}
				for (int g = 0; g < kv; g++) {
					llama_run_keep(run, l, g,
					               keep + (size_t)g * (size_t)prompt);
					share[l * kv + g] = llama_run_len(run, l, g);
				}
			}
		}
		if (t >= prompt && (id == POLICY_SNAPKV_WINDOW || id == POLICY_PYRAMIDKV_WINDOW ||
		                    id == POLICY_ADAKV_WINDOW)) {
			/* The selected lead the cache, of the rest the newest
			 * stay: B, or the layer's own for the bounded
			 * PyramidKV, or the head's share of the layer's for
			 * the bounded AdaKV (what it held after the prompt's
			 * end, B when that cut nothing). */
			for (int l = 0; l < layers; l++)
				for (int g = 0; g < kv; g++) {
					const int hold =
					        id == POLICY_PYRAMIDKV_WINDOW
					                ? policy_pyramid_held(&b, l)
					        : id == POLICY_ADAKV_WINDOW && share[l * kv + g] > 0
					                ? share[l * kv + g]
					                : budget;
					const int ww =
					        w < (id == POLICY_ADAKV_WINDOW ? budget : hold)
					                ? w
					                : (id == POLICY_ADAKV_WINDOW ? budget
					                                             : hold);
					const int len = llama_run_len(run, l, g);
					const int *pos = llama_run_positions(run, l, g);
					if (len <= hold)
						continue;
					int selected = 0;
					while (selected < len && pos[selected] < prompt - ww)
						selected++;
					unsigned char k[512];
					for (int j = 0; j < len; j++)
						k[j] = j < selected || j >= len - (hold - selected);
					llama_run_keep(run, l, g, k);
				}
		}
	}
	llama_run_free(run);
	free(obs);
	free(score);
	free(idx);
	free(keep);
	free(share);
}

/* SnapKV, its window form, PyramidKV and AdaKV run on the model: the drop
 * is the plain loop's, bit for bit, where they score the prompt (a budget
 * above the window), where they keep its newest (within it) and where
 * the budget holds the prompt whole. */
static void test_snap_family_plain(void **state)
{
	const struct drop_fixture *f = *state;
	const int prompt = f->n - 12;
	assert_true(prompt > 64 + 16);
	const int budgets[] = {prompt - 12, 40, prompt + 4};
	const enum policy_id ids[] = {POLICY_SNAPKV,    POLICY_SNAPKV_WINDOW,
	                              POLICY_PYRAMIDKV, POLICY_PYRAMIDKV_WINDOW,
	                              POLICY_ADAKV,     POLICY_ADAKV_WINDOW};
	for (size_t c = 0; c < sizeof budgets / sizeof budgets[0]; c++) {
		const struct budget b = budget(budgets[c] / 2, budgets[c] - budgets[c] / 2);
		unsigned mask = 1u << POLICY_FULL;
		for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
			mask |= 1u << ids[i];
		struct drop_result r;
		char err[DROP_ERR_MAX];
		assert_int_equal(measure(f->m, f->tokens, f->n, f->n, prompt, &b, mask, &r, err),
		                 0);
		for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
			double lp[512];
			plain_snap(f, ids[i], prompt, budgets[c], lp);
			assert_memory_equal(r.p[ids[i]].logprob, lp,
			                    (size_t)(f->n - 1) * sizeof(double));
			/* Until the prompt's end every run is the full cache. */
			assert_memory_equal(r.p[ids[i]].logprob, r.p[POLICY_FULL].logprob,
			                    (size_t)(prompt - 1) * sizeof(double));
			/* A budget that holds the prompt changes nothing
			 * after it but the window form's. */
			if (budgets[c] > prompt && ids[i] != POLICY_SNAPKV_WINDOW &&
			    ids[i] != POLICY_PYRAMIDKV_WINDOW && ids[i] != POLICY_ADAKV_WINDOW)
				assert_memory_equal(r.p[ids[i]].logprob, r.p[POLICY_FULL].logprob,
				                    (size_t)(f->n - 1) * sizeof(double));
			if (budgets[c] < prompt)
				assert_memory_not_equal(r.p[ids[i]].logprob,
				                        r.p[POLICY_FULL].logprob,
				                        (size_t)(f->n - 1) * sizeof(double));
		}
		drop_result_free(&r);
	}
}

int main(int argc, char **argv)
{
	const int kernel_rc = model_kernel_from_env();
	if (kernel_rc >= 0)
		return kernel_rc;
	if (argc > 1)
		root = argv[1];
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_no_eviction_is_the_full_cache),
	        cmocka_unit_test(test_small_budget_hurts),
	        cmocka_unit_test(test_prompt_read_whole),
	        cmocka_unit_test(test_generate),
	        cmocka_unit_test(test_shared_runs_equal_alone),
	        cmocka_unit_test(test_expected_reads_queries),
	        cmocka_unit_test(test_h2o_plain),
	        cmocka_unit_test(test_interval),
	        cmocka_unit_test(test_snap_family_plain),
	        cmocka_unit_test(test_kl_stats),
	        cmocka_unit_test(test_scene_owns_its_model),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
