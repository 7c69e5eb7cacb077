/*
 * Generating, the real drop's KL divergence and top-1 agreement per
 * policy (src/timeline/drop_kl.c): at each prediction that wrote a
 * policy's own text, KL(full || policy) over the vocabulary, both
 * conditioned on that text. Recomputed here from the logits of two plain
 * runs over the policy's text (drop_plain.c): H2O written out, and the
 * model with a full cache, one llama_step at a time.
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

#include "drop_plain.h"
#include "h2o/drop.h"
#include "h2o/llama.h"
#include "h2o/tokenizer.h"

static const char *root = ".";

static const char story[] =
        "Once upon a time, there was a little girl named Lily. She loved to play outside in "
        "the park. One day, she saw a big red ball.";

static int setup(void **state)
{
	return drop_fixture_setup(state, root, story);
}

static int teardown(void **state)
{
	return drop_fixture_teardown(state);
}

static int argmax(const float *x, int count)
{
	int best = 0;
	for (int i = 1; i < count; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

/* The log of the softmax's normaliser: the largest plus the log of the
 * exp sum in id order. */
static double log_norm(const float *x, int count)
{
	double m = -INFINITY, sum = 0.0;
	for (int i = 0; i < count; i++)
		m = (double)x[i] > m ? x[i] : m;
	for (int i = 0; i < count; i++)
		sum += exp((double)x[i] - m);
	return m + log(sum);
}

static int compare(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void test_generated_kl(void **state)
{
	const struct drop_fixture *f = *state;
	const struct llama_config *cfg = llama_model_config(f->m);
	const int given = 12, n = 80, heavy = 4, recent = 4, vocab = cfg->vocab_size;
	struct budget b = {heavy, recent, 0, 0, 0, {{{0}}}};
	b.prompt = given;
	struct drop_result r;
	char err[DROP_ERR_MAX];
	assert_true(f->n >= given);
	assert_int_equal(drop_measure(f->m, f->tokens, n, given, &b,
	                              1u << POLICY_FULL | 1u << POLICY_H2O, &r, err),
	                 0);
	const struct drop_policy *h = &r.p[POLICY_H2O], *full = &r.p[POLICY_FULL];
	/* The texts part: the full model reads a text it did not write. */
	assert_true(drop_divergence(&r, POLICY_H2O) >= given);
	float *own = malloc((size_t)n * (size_t)vocab * sizeof *own);
	float *ref = malloc((size_t)n * (size_t)vocab * sizeof *ref);
	assert_non_null(own);
	assert_non_null(ref);
	double lp[256];
	plain_h2o(f->m, h->fed, n, given, heavy, recent, 1, lp, own);
	struct llama_run *run = llama_run_new(f->m);
	for (int t = 0; t < n; t++) {
		assert_int_equal(llama_step(f->m, run, h->fed[t], t), 0);
		memcpy(ref + (size_t)t * (size_t)vocab, llama_logits(run),
		       (size_t)vocab * sizeof *ref);
	}
	llama_run_free(run);
	double kl[256], sorted[256], sum = 0.0;
	int same = 0;
	for (int t = given - 1; t < n; t++) {
		const float *o = own + (size_t)t * (size_t)vocab,
		            *q = ref + (size_t)t * (size_t)vocab;
		assert_int_equal(h->top[t], argmax(o, vocab));
		assert_int_equal(h->full_top[t], argmax(q, vocab));
		assert_int_equal(drop_full_top(&r, POLICY_H2O, t), argmax(q, vocab));
		const double lo = log_norm(o, vocab), lq = log_norm(q, vocab);
		double d = 0.0;
		for (int v = 0; v < vocab; v++) {
			const double pq = (double)q[v] - lq;
			d += exp(pq) * (pq - ((double)o[v] - lo));
		}
		/* The same sums in the same order: the same bits. */
		assert_true(d == h->kl[t]);
		assert_true(d > -1e-12);
		if (t + 1 < n) {
			assert_true(h->full_logprob[t] == plain_logprob(cfg, q, h->fed[t + 1]));
			kl[t - given + 1] = d;
			sum += d;
			same += argmax(o, vocab) == argmax(q, vocab);
		}
		/* The full cache reads its own text: nothing to diverge. */
		assert_true(full->kl[t] == 0.0);
		assert_int_equal(full->full_top[t], full->top[t]);
	}
	const int count = n - given;
	memcpy(sorted, kl, (size_t)count * sizeof *kl);
	qsort(sorted, (size_t)count, sizeof *sorted, compare);
	struct drop_kl s;
	assert_int_equal(drop_text_kl(&r, POLICY_H2O, &s), 0);
	assert_true(s.mean == sum / count);
	assert_true(s.median == (count % 2 ? sorted[count / 2]
	                                   : (sorted[count / 2 - 1] + sorted[count / 2]) / 2.0));
	assert_true(s.p99 == sorted[(int)ceil(0.99 * count) - 1]);
	assert_true(s.max == sorted[count - 1]);
	assert_true(s.mean > 0.0);
	assert_true(drop_text_agreement(&r, POLICY_H2O) == (double)same / count);
	assert_true(drop_text_agreement(&r, POLICY_FULL) == 1.0);
	assert_int_equal(drop_text_kl(&r, POLICY_FULL, &s), 0);
	assert_true(s.mean == 0.0 && s.max == 0.0);
	free(own);
	free(ref);
	drop_result_free(&r);
}

/* Teacher-forced, no policy has a reading of its own: drop_text_kl has
 * nothing, and the full cache's top is every policy's reference. */
static void test_teacher_forced(void **state)
{
	const struct drop_fixture *f = *state;
	struct budget b = {4, 4, 0, 0, 0, {{{0}}}};
	struct drop_result r;
	char err[DROP_ERR_MAX];
	assert_int_equal(drop_measure(f->m, f->tokens, f->n, f->n, &b,
	                              1u << POLICY_FULL | 1u << POLICY_H2O, &r, err),
	                 0);
	struct drop_kl s;
	assert_null(r.p[POLICY_H2O].full_top);
	assert_int_equal(drop_text_kl(&r, POLICY_H2O, &s), -1);
	for (int t = 0; t < f->n; t++)
		assert_int_equal(drop_full_top(&r, POLICY_H2O, t), r.p[POLICY_FULL].top[t]);
	drop_result_free(&r);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		root = argv[1];
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_generated_kl),
	        cmocka_unit_test(test_teacher_forced),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
