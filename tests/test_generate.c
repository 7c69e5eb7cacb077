/*
 * test_generate: the seeded attention model (src/generate.c).
 *
 * The generator must give the same numbers for the same parameters (bit
 * for bit, checked against a checksum pinned here, so a change to the
 * model cannot slip by unnoticed), logits that are exactly the sum the
 * format documents, and attention with the structure each knob promises
 * (softmax computed here, independently of the engine).
 *
 * Usage: test_generate [SOURCE_ROOT] (the root is not needed).
 * If the model changes on purpose, update GOLDEN_CHECKSUM from the
 * failure message and say why in the commit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/generate.h"

#define GOLDEN_CHECKSUM 0x15ca7a83cba3d79full

struct gen {
	struct generate_params p;
	double *q, *k, *v;
	char **text;
};

static void gen_run(struct gen *g)
{
	const size_t n = (size_t)g->p.count * (size_t)g->p.dim;
	g->q = malloc(n * sizeof *g->q);
	g->k = malloc(n * sizeof *g->k);
	g->v = malloc(n * sizeof *g->v);
	g->text = calloc((size_t)g->p.count, sizeof *g->text);
	assert_non_null(g->q);
	assert_non_null(g->k);
	assert_non_null(g->v);
	assert_non_null(g->text);
	assert_true(generate_min_dim(&g->p) <= g->p.dim);
	assert_int_equal(generate_fill(&g->p, g->q, g->k, g->v, g->text), 0);
}

static void gen_free(struct gen *g)
{
	for (int i = 0; i < g->p.count; i++)
		free(g->text[i]);
	free(g->text);
	free(g->q);
	free(g->k);
	free(g->v);
}

/* The logit of query I on key J at the default scale 1/sqrt(dim). */
static double logit(const struct gen *g, int i, int j)
{
	const int d = g->p.dim;
	double s = 0.0;
	for (int c = 0; c < d; c++)
		s += g->q[i * d + c] * g->k[j * d + c];
	return s / sqrt((double)d);
}

/* Softmax of query I over keys 0..I into W. */
static void attention(const struct gen *g, int i, double *w)
{
	double max = -INFINITY, sum = 0.0;
	for (int j = 0; j <= i; j++) {
		w[j] = logit(g, i, j);
		max = w[j] > max ? w[j] : max;
	}
	for (int j = 0; j <= i; j++)
		sum += (w[j] = exp(w[j] - max));
	for (int j = 0; j <= i; j++)
		w[j] /= sum;
}

/* FNV-1a over the bit patterns of the doubles, independent of the host's
 * byte order. */
static uint64_t checksum(const double *x, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t u;
		memcpy(&u, &x[i], sizeof u);
		for (int b = 0; b < 8; b++) {
			h ^= (u >> (8 * b)) & 0xFF;
			h *= 0x100000001B3ull;
		}
	}
	return h;
}

static const struct generate_needle small_needles[] = {{3, 9, 7.5, "key"}};
static const int small_topics[] = {5};

/* A small scene with every knob turned. */
static struct generate_params small(void)
{
	return (struct generate_params){
	        .count = 12,
	        .dim = 16,
	        .seed = 42,
	        .text = "the cat  sat\ton the mat",
	        .noise = 0.75,
	        .sink_count = 1,
	        .sink_strength = 4.0,
	        .loc_pairs = 4,
	        .loc_strength = 2.0,
	        .loc_width = 3.0,
	        .topic_positions = small_topics,
	        .n_topic_positions = 1,
	        .topic_rate = 0.2,
	        .topic_strength = 3.0,
	        .topic_text = "TOPIC",
	        .needles = small_needles,
	        .n_needles = 1,
	};
}

static void test_deterministic(void **state)
{
	(void)state;
	struct gen a = {.p = small()}, b = {.p = small()};
	gen_run(&a);
	gen_run(&b);
	const size_t n = (size_t)a.p.count * (size_t)a.p.dim * sizeof(double);
	assert_memory_equal(a.q, b.q, n);
	assert_memory_equal(a.k, b.k, n);
	assert_memory_equal(a.v, b.v, n);
	for (int i = 0; i < a.p.count; i++)
		assert_string_equal(a.text[i], b.text[i]);

	/* The pinned checksum: the same bits on every IEEE-754 machine. */
	const size_t count = (size_t)a.p.count * (size_t)a.p.dim;
	uint64_t h = 0xCBF29CE484222325ull;
	h = checksum(a.q, count, h);
	h = checksum(a.k, count, h);
	h = checksum(a.v, count, h);
	if (h != GOLDEN_CHECKSUM)
		print_error("checksum 0x%016llx, pinned 0x%016llx\n", (unsigned long long)h,
		            (unsigned long long)GOLDEN_CHECKSUM);
	assert_true(h == GOLDEN_CHECKSUM);

	/* Another seed, other numbers. */
	struct gen c = {.p = small()};
	c.p.seed = 43;
	gen_run(&c);
	assert_true(memcmp(a.k, c.k, n) != 0);
	gen_free(&a);
	gen_free(&b);
	gen_free(&c);
}

/* A position's numbers do not depend on how many tokens follow it. */
static void test_prefix_stable(void **state)
{
	(void)state;
	struct gen a = {.p = small()}, b = {.p = small()};
	b.p.count = 40;
	gen_run(&a);
	gen_run(&b);
	const size_t n = (size_t)a.p.count * (size_t)a.p.dim * sizeof(double);
	assert_memory_equal(a.q, b.q, n);
	assert_memory_equal(a.k, b.k, n);
	assert_memory_equal(a.v, b.v, n);
	gen_free(&a);
	gen_free(&b);
}

static void test_normal(void **state)
{
	(void)state;
	/* Pinned draws: exact values, so any machine can check itself. */
	assert_true(generate_normal(1, 2, 3) == 0x1.3c6a6p-1);
	assert_true(generate_normal(0, 0, 0) == -0x1.be24ep-2);
	assert_true(generate_normal(12345, 4, 999) == 0x1.0d24ccp+1);
	const double z = generate_normal(1, 2, 4);
	assert_true(z * 0x1p21 == floor(z * 0x1p21)); /* a multiple of 2^-21 */
	double sum = 0, sum2 = 0, sum4 = 0, lo = 0, hi = 0;
	const int n = 200000;
	for (int i = 0; i < n; i++) {
		double x = generate_normal(7, 1, (uint64_t)i);
		sum += x;
		sum2 += x * x;
		sum4 += x * x * x * x;
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	const double mean = sum / n, var = sum2 / n - mean * mean;
	assert_true(fabs(mean) < 0.01);
	assert_true(fabs(var - 1.0) < 0.01);
	assert_true(fabs(sum4 / n - 2.9) < 0.05); /* Irwin-Hall's kurtosis: 3 - 1/10 */
	assert_true(lo >= -6.0 && hi <= 6.0 && lo < -3.5 && hi > 3.5);
}

/* Without noise, every logit is exactly the documented sum. */
static void test_logits_are_the_model(void **state)
{
	(void)state;
	struct gen g = {.p = small()};
	g.p.noise = 0.0;
	gen_run(&g);
	const double pi = 3.14159265358979323846;
	double theta[4];
	for (int m = 0; m < 4; m++)
		theta[m] = tan(pi * (m + 0.5) / 8.0) / (2 * pi * g.p.loc_width);
	for (int i = 0; i < g.p.count; i++) {
		for (int j = 0; j <= i; j++) {
			double want = 0.0, loc = 0.0;
			if (j < g.p.sink_count)
				want += g.p.sink_strength;
			if (generate_is_topic(&g.p, j))
				want += g.p.topic_strength;
			if (i == 9 && j == 3)
				want += 7.5;
			for (int m = 0; m < 4; m++)
				loc += cos(2 * pi * theta[m] * (i - j));
			want += g.p.loc_strength * loc / 4;
			const double got = logit(&g, i, j);
			if (fabs(got - want) > 1e-9)
				print_error("logit(%d, %d) = %.12f, want %.12f\n", i, j, got, want);
			assert_true(fabs(got - want) <= 1e-9);
		}
	}
	/* The local kernel is 1 at distance 0 and decays. */
	gen_free(&g);
}

static void test_text(void **state)
{
	(void)state;
	struct gen g = {.p = small()};
	gen_run(&g);
	/* Words in turn, repeated; topics and the needle take their own text. */
	static const char *const words[] = {"the", "cat", "sat", "on", "the", "mat"};
	for (int i = 0; i < g.p.count; i++) {
		const char *want = words[i % 6];
		if (i == 3)
			want = "key";
		else if (generate_is_topic(&g.p, i))
			want = "TOPIC";
		assert_string_equal(g.text[i], want);
	}
	assert_true(generate_is_topic(&g.p, 5));
	gen_free(&g);

	struct gen d = {.p = small()};
	d.p.text = NULL;
	d.p.topic_text = NULL;
	d.p.n_needles = 0;
	d.p.loc_pairs = 0;
	gen_run(&d);
	assert_string_equal(d.text[0], "t0");
	assert_string_equal(d.text[11], "t11");
	gen_free(&d);

	size_t longest;
	assert_int_equal(generate_count_words("  a bb\t\nccc  ", &longest), 3);
	assert_int_equal(longest, 3);
	assert_int_equal(generate_count_words(" \t ", &longest), 0);
	assert_int_equal(generate_count_words("", &longest), 0);
}

/* A long scene with one strong sink: late queries put far more than 1/n of
 * their attention on position 0. */
static void test_sink_shows(void **state)
{
	(void)state;
	struct gen g = {.p = {.count = 600,
	                      .dim = 32,
	                      .seed = 5,
	                      .noise = 1.0,
	                      .sink_count = 1,
	                      .sink_strength = 6.0,
	                      .loc_pairs = 8,
	                      .loc_strength = 2.0,
	                      .loc_width = 4.0}};
	gen_run(&g);
	double *w = malloc((size_t)g.p.count * sizeof *w), on0 = 0.0, on1 = 0.0;
	int queries = 0;
	for (int i = 500; i < g.p.count; i++, queries++) {
		attention(&g, i, w);
		on0 += w[0];
		on1 += w[1];
	}
	on0 /= queries;
	on1 /= queries;
	assert_true(on0 > 50.0 / g.p.count); /* far above uniform */
	assert_true(on0 > 20.0 * on1);       /* and above its neighbour */
	free(w);
	gen_free(&g);
}

/* Topic tokens draw attention from every later query; locality puts more
 * on the newest tokens than on old ordinary ones. */
static void test_topics_and_locality_show(void **state)
{
	(void)state;
	struct gen g = {.p = {.count = 400,
	                      .dim = 48,
	                      .seed = 9,
	                      .noise = 1.0,
	                      .loc_pairs = 8,
	                      .loc_strength = 3.0,
	                      .loc_width = 4.0,
	                      .topic_rate = 0.05,
	                      .topic_strength = 4.0}};
	gen_run(&g);
	double *w = malloc((size_t)g.p.count * sizeof *w);
	double topic = 0.0, plain = 0.0, near = 0.0;
	int n_topic = 0, n_plain = 0, n_near = 0;
	for (int i = 300; i < g.p.count; i += 5) {
		attention(&g, i, w);
		for (int j = 0; j < 250; j++) {
			if (generate_is_topic(&g.p, j))
				topic += w[j], n_topic++;
			else
				plain += w[j], n_plain++;
		}
		near += w[i] + w[i - 1];
		n_near += 2;
	}
	assert_true(n_topic > 5 && n_plain > 100);
	topic /= n_topic;
	plain /= n_plain;
	near /= n_near;
	assert_true(topic > 20.0 * plain);
	assert_true(near > 5.0 * plain);
	free(w);
	gen_free(&g);
}

/* A needle is found by its query and by no other. */
static void test_needle_shows(void **state)
{
	(void)state;
	static const struct generate_needle needle[] = {{20, 350, 12.0, NULL}};
	struct gen g = {.p = {.count = 400,
	                      .dim = 32,
	                      .seed = 11,
	                      .noise = 1.0,
	                      .loc_pairs = 4,
	                      .loc_strength = 2.0,
	                      .loc_width = 4.0,
	                      .needles = needle,
	                      .n_needles = 1}};
	gen_run(&g);
	double *w = malloc((size_t)g.p.count * sizeof *w);
	attention(&g, 350, w);
	assert_true(w[20] > 0.5);
	/* Every other query gives it about a uniform share, 1 / (i + 1). */
	double other = 0.0;
	int queries = 0;
	for (int i = 100; i < g.p.count; i++) {
		if (i == 350)
			continue;
		attention(&g, i, w);
		other += w[20] * (i + 1);
		queries++;
	}
	assert_true(other / queries < 2.0);
	free(w);
	gen_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_deterministic),
	        cmocka_unit_test(test_prefix_stable),
	        cmocka_unit_test(test_normal),
	        cmocka_unit_test(test_logits_are_the_model),
	        cmocka_unit_test(test_text),
	        cmocka_unit_test(test_sink_shows),
	        cmocka_unit_test(test_topics_and_locality_show),
	        cmocka_unit_test(test_needle_shows),
	};
	return cmocka_run_group_tests_name("generate", tests, NULL, NULL);
}
