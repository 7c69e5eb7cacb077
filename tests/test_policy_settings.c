/*
 * Unit tests of the settings researchers vary (policy_settings.c, the
 * SnapKV pooling of policy.c, AdaKV's authors' split): each worked by hand
 * on the example of test_policy.c's SnapKV test, and each shown to reach
 * the rule through the driver, policy_run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "h2o/policy.h"
#include "h2o/policy_settings.h"

/* test_policy.c's example: 7 entries, a window of the last 2, two query
 * heads whose observed weights before the window are
 *   head 0  .5 .1 0  .2 0        head 1  0 .1 .5 0 .2
 * With the defaults (mean pool of 5) B = 4 keeps positions 1 and 2 and B
 * = 3 keeps 2 (pooled means .12 .14 .16 .11 .09). */
static const int pos[] = {0, 1, 2, 3, 4, 5, 6};
static const double zero[7] = {0};
static const double obs[] = {.5, .1, 0, .2, 0, .3, .3, 0, .1, .5, 0, .2, .1, .1};

static struct policy_cache example(double *rank, int kernel, enum policy_pool pool)
{
	return (struct policy_cache){.len = 7,
	                             .pos = pos,
	                             .score = zero,
	                             .w = zero,
	                             .observed = obs,
	                             .heads = 2,
	                             .window = 2,
	                             .rank = rank,
	                             .kernel = kernel,
	                             .pool = pool};
}

/* Kernel 1, no smoothing: the means .25 .1 .25 .1 .1; B = 4 keeps 0 and 2
 * (the default kept 1 and 2). */
static void test_kernel_1(void **state)
{
	(void)state;
	double rank[7];
	const struct policy_cache c = example(rank, 1, POLICY_POOL_MEAN);
	unsigned char gone[7] = {0};
	policy_snap_select(&c, 4, gone);
	const unsigned char want[] = {0, 1, 0, 1, 1, 0, 0};
	assert_memory_equal(gone, want, sizeof want);
	const double mean[] = {.25, .1, .25, .1, .1};
	for (int j = 0; j < 5; j++)
		assert_true(fabs(rank[j] - mean[j]) < 1e-12);
}

/* Kernel 3, sums of three over 3 (zero padding):
 *   head 0  .6 .6 .3 .2 .2 /3     head 1  .1 .6 .6 .7 .2 /3
 *   mean    .7/6 .2 .15 .15 .4/6
 * B = 3 keeps the best, position 1 (the default kept 2). */
static void test_kernel_3(void **state)
{
	(void)state;
	double rank[7];
	const struct policy_cache c = example(rank, 3, POLICY_POOL_MEAN);
	unsigned char gone[7] = {0};
	assert_int_equal(policy_snap_select(&c, 3, gone), 1);
	const unsigned char want[] = {1, 0, 1, 1, 1, 0, 0};
	assert_memory_equal(gone, want, sizeof want);
	assert_true(fabs(rank[1] - .2) < 1e-12);
	assert_true(fabs(rank[0] - .7 / 6) < 1e-12);
}

/* Max pool of 5 (KVCache-Factory's maxpool: the padding never wins), the
 * largest within two positions:
 *   head 0  .5 .5 .5 .2 .2        head 1  .5 .5 .5 .5 .5
 *   mean    .5 .5 .5 .35 .35
 * B = 4 keeps two of the three tied at .5, the lower: 0 and 1 (the
 * default kept 1 and 2). */
static void test_max_pool(void **state)
{
	(void)state;
	double rank[7];
	const struct policy_cache c = example(rank, 0, POLICY_POOL_MAX);
	unsigned char gone[7] = {0};
	policy_snap_select(&c, 4, gone);
	const unsigned char want[] = {0, 0, 1, 1, 1, 0, 0};
	assert_memory_equal(gone, want, sizeof want);
	const double mean[] = {.5, .5, .5, .35, .35};
	for (int j = 0; j < 5; j++)
		assert_true(fabs(rank[j] - mean[j]) < 1e-12);
}

/* The settings reach the rule through the driver: snapkv at the prompt's
 * end (step 7 of 7) under B = 4 with snapkv.kernel=1 keeps what kernel 1
 * keeps, and another policy's setting changes nothing. */
static void test_through_the_driver(void **state)
{
	(void)state;
	double rank[7], value;
	const struct policy_cache c = example(rank, 0, POLICY_POOL_MEAN);
	struct policy_budget b = {.heavy = 2, .recent = 2, .n = 7, .prompt = 7};
	unsigned char gone[7];
	policy_run(POLICY_SNAPKV, &b, 7, &c, gone, &value);
	const unsigned char plain[] = {1, 0, 0, 1, 1, 0, 0};
	assert_memory_equal(gone, plain, sizeof plain);
	b.set.p[POLICY_PYRAMIDKV].kernel = 1;
	policy_run(POLICY_SNAPKV, &b, 7, &c, gone, &value);
	assert_memory_equal(gone, plain, sizeof plain);
	b.set.p[POLICY_SNAPKV].kernel = 1;
	policy_run(POLICY_SNAPKV, &b, 7, &c, gone, &value);
	const unsigned char k1[] = {0, 1, 0, 1, 1, 0, 0};
	assert_memory_equal(gone, k1, sizeof k1);
	/* The window: 64 capped by the prompt, or the setting's. */
	assert_int_equal(policy_run_window(POLICY_SNAPKV, &b, 7), 7);
	b.set.p[POLICY_SNAPKV].window = 3;
	assert_int_equal(policy_run_window(POLICY_SNAPKV, &b, 7), 3);
	assert_int_equal(policy_run_window(POLICY_ADAKV, &b, 7), 7);
}

/*
 * FFY0/AdaKV's split, by hand: two kv heads of one query head each, 12
 * positions, a window of 2 (10 and 11), B = 7, kernel 1 (no pooling), so
 * the scores are the observed weights before the window:
 *   head 0  .9 .8 .7 .6 .5 .4 .3 .2 .1 .05
 *   head 1  .95 .01 .01 .01 .01 .01 .01 .01 .01 .01
 * base = B - W = 5, floor = int(5 x 0.2) = 1. The layer's 2 x 5 = 10
 * best are head 1's .95 and head 0's nine down to .1: head 0 won 9, head
 * 1 won 1. Head 0 keeps round(9 x 0.8 + 1) = round(8.2) = 8 (positions 0
 * to 7), head 1 round(1 x 0.8 + 1) = round(1.8) = 2: .95 and the lower of
 * its tied .01, position 1. The cut-off is the lowest kept: head 1's
 * position 1, row index 12 + 1.
 *
 * kvpress' split on the same scores (safeguard int(7 x 0.2) = 1, no more
 * than the window) prunes the 2 x (12 - 7) = 10 lowest of all: head 1's
 * nine .01 and head 0's .05, so head 0 keeps 9 and head 1 keeps 1.
 */
static void test_ada_authors_by_hand(void **state)
{
	(void)state;
	enum { LEN = 12 };
	double observed[2 * LEN] = {.9, .8, .7, .6, .5, .4, .3, .2, .1, .05, .5, .5, .95};
	for (int j = 1; j < 10; j++)
		observed[LEN + j] = .01;
	int p[LEN], order[2 * LEN];
	for (int j = 0; j < LEN; j++)
		p[j] = j;
	double rank[2 * LEN];
	struct policy_cache c = {.len = LEN,
	                         .pos = p,
	                         .observed = observed,
	                         .heads = 2,
	                         .window = 2,
	                         .rank = rank,
	                         .kv_heads = 2,
	                         .order = order,
	                         .kernel = 1,
	                         .alloc = POLICY_ALLOC_AUTHORS};
	assert_int_equal(policy_ada_floor(7, 2), 1);
	assert_int_equal(policy_ada_share(9, 7, 2), 8);
	assert_int_equal(policy_ada_share(1, 7, 2), 2);
	unsigned char gone[2 * LEN] = {0};
	assert_int_equal(policy_ada_select(&c, 7, gone), LEN + 1);
	unsigned char want[2 * LEN] = {0};
	want[8] = want[9] = 1;
	for (int j = 2; j < 10; j++)
		want[LEN + j] = 1;
	assert_memory_equal(gone, want, sizeof want);
	c.alloc = POLICY_ALLOC_KVPRESS;
	memset(gone, 0, sizeof gone);
	policy_ada_select(&c, 7, gone);
	memset(want, 0, sizeof want);
	want[9] = 1;
	for (int j = 1; j < 10; j++)
		want[LEN + j] = 1;
	assert_memory_equal(gone, want, sizeof want);
}

/* Reading: each key of each SnapKV-scored policy, the last of a key given
 * twice, and the list of those that differ from the defaults. */
static void test_read_and_list(void **state)
{
	(void)state;
	struct policy_settings s = {0};
	char err[256], line[256];
	assert_true(policy_settings_set(&s, "snapkv.window=8", err, sizeof err));
	assert_true(policy_settings_set(&s, "pyramidkv.kernel=7", err, sizeof err));
	assert_true(policy_settings_set(&s, "pyramidkv.pool=max", err, sizeof err));
	assert_true(policy_settings_set(&s, "adakv.alloc=authors", err, sizeof err));
	assert_true(policy_settings_set(&s, "pyramidkv.granularity=query_head", err, sizeof err));
	assert_true(policy_settings_set(&s, "snapkv-win.window=16", err, sizeof err));
	assert_true(policy_settings_set(&s, "snapkv-win.window=64", err, sizeof err));
	assert_int_equal(s.p[POLICY_SNAPKV].window, 8);
	assert_int_equal(s.p[POLICY_PYRAMIDKV].kernel, 7);
	assert_int_equal(s.p[POLICY_PYRAMIDKV].pool, POLICY_POOL_MAX);
	assert_int_equal(s.p[POLICY_ADAKV].alloc, POLICY_ALLOC_AUTHORS);
	assert_int_equal(s.p[POLICY_PYRAMIDKV].granularity, POLICY_GRANULARITY_QUERY_HEAD);
	/* snapkv-win's 64 is its default: not listed. */
	assert_string_equal(policy_settings_line(&s, line, sizeof line),
	                    "snapkv.window=8 pyramidkv.kernel=7 pyramidkv.pool=max "
	                    "pyramidkv.granularity=query_head adakv.alloc=authors");
	struct policy_setting_item items[POLICY_SETTINGS_MAX];
	assert_int_equal(policy_settings_list(&s, items, POLICY_SETTINGS_MAX), 5);
	assert_false(items[3].number);
	assert_string_equal(items[3].value, "query_head");
	/* kv_head, the default, is not listed. */
	assert_true(policy_settings_set(&s, "pyramidkv.granularity=kv_head", err, sizeof err));
	assert_int_equal(s.p[POLICY_PYRAMIDKV].granularity, POLICY_GRANULARITY_KV_HEAD);
	assert_int_equal(policy_settings_list(&s, items, POLICY_SETTINGS_MAX), 4);
	assert_true(items[0].number);
	assert_false(items[2].number);
	const struct policy_settings none = {0};
	assert_string_equal(policy_settings_line(&none, line, sizeof line), "");
}

/* Refusals: each with its reason, and nothing changed. */
static void test_refused(void **state)
{
	(void)state;
	static const char *const bad[][2] = {
	        {"snapkv", "expected POLICY.KEY=VALUE"},
	        {"snapkv.window", "expected POLICY.KEY=VALUE"},
	        {"lru.window=8", "no policy 'lru'"},
	        {"h2o.window=8", "h2o has no settings"},
	        {"snapkv.window=0", "the window is an integer from 1"},
	        {"snapkv.window=8x", "the window is an integer from 1"},
	        {"snapkv.kernel=4", "the kernel is an odd integer"},
	        {"snapkv.kernel=257", "the kernel is an odd integer"},
	        {"snapkv.pool=avg", "the pool is mean or max"},
	        {"snapkv.alloc=authors", "no key 'alloc'"},
	        {"adakv.alloc=even", "the alloc is kvpress or authors"},
	        {"pyramidkv.granularity=kv", "the granularity is kv_head or query_head"},
	        {"pyramidkv-win.granularity=query_head", "no key 'granularity'"},
	        {"snapkv.granularity=query_head", "no key 'granularity'"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct policy_settings s = {0};
		const struct policy_settings none = {0};
		char err[256];
		assert_false(policy_settings_set(&s, bad[i][0], err, sizeof err));
		if (!strstr(err, bad[i][1]))
			fail_msg("%s: '%s' lacks '%s'", bad[i][0], err, bad[i][1]);
		assert_memory_equal(&s, &none, sizeof s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_kernel_1),
	        cmocka_unit_test(test_kernel_3),
	        cmocka_unit_test(test_max_pool),
	        cmocka_unit_test(test_through_the_driver),
	        cmocka_unit_test(test_ada_authors_by_hand),
	        cmocka_unit_test(test_read_and_list),
	        cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
