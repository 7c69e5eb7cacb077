/*
 * The rules' kernels (engine_kernel.h) against the plain loops their
 * comments define, bit for bit, in every variant this processor runs:
 * Expected Attention's quadratic forms and its queries' Gram matrix (a
 * model scene's), its projections' means and variances (a vector
 * scene's), and KeyDiff's sum of quotients. Dimensions from 1 to 70 reach
 * every path of every width (eight vectors at once, single vectors, single
 * numbers), and a matrix that is not symmetric shows which of its halves
 * a form reads.
 * A white-box test: it calls the engine's private kernels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_kernel.h"
#include "h2o/engine.h"

#define MAX_DIM  70
#define MAX_ROWS 67

/* Numbers of many magnitudes and both signs, from a seeded LCG, so that
 * a sum in another order would round differently. */
static void fill(double *x, size_t count, uint64_t seed)
{
	uint64_t s = seed;
	for (size_t i = 0; i < count; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		const double u = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
		x[i] = ldexp(u, (int)(s % 9) - 4);
	}
}

static void same_bits(const double *a, const double *b, size_t n)
{
	assert_memory_equal(a, b, n * sizeof *a);
}

/* The plain loop of kernel_quad_forms. */
static double plain_quad(const double *cov, const double *k, int dim)
{
	double quad = 0.0;
	for (int a = 0; a < dim; a++) {
		double t = 0.0;
		for (int b = 0; b < dim; b++)
			t += cov[b * dim + a] * k[b];
		quad += k[a] * t;
	}
	return quad;
}

/* kernel_ring_stats over NSLOTS slots (1 to 70: every width's paths) of
 * a ring of 64 rows, read in a rotated order of M rows, against its plain
 * loops. */
static void check_ring_stats(int nslots)
{
	enum { ROWS = 64 };
	static double ring[ROWS * MAX_DIM], mean[MAX_DIM], var[MAX_DIM];
	const size_t stride = MAX_DIM;
	fill(ring, ROWS * stride, (uint64_t)nslots + 2000);
	const int m = nslots % ROWS + 1;
	int order[ROWS];
	for (int r = 0; r < m; r++)
		order[r] = (nslots + r) % ROWS;
	kernel_ring_stats(ring, stride, nslots, order, m, mean, var);
	for (int s = 0; s < nslots; s++) {
		double a = 0.0, b = 0.0;
		for (int r = 0; r < m; r++)
			a += ring[(size_t)order[r] * stride + (size_t)s];
		a /= m;
		for (int r = 0; r < m; r++) {
			const double d = ring[(size_t)order[r] * stride + (size_t)s] - a;
			b += d * d;
		}
		b /= m;
		same_bits(&mean[s], &a, 1);
		same_bits(&var[s], &b, 1);
	}
}

static void check_variant(void)
{
	static double cov[MAX_DIM * MAX_DIM], keys[MAX_ROWS * MAX_DIM], got[MAX_DIM * MAX_DIM],
	        want[MAX_DIM * MAX_DIM];
	for (int dim = 1; dim <= MAX_DIM; dim++) {
		const int rows = dim % 3 == 0 ? MAX_ROWS : dim % 7 + 1;
		fill(cov, (size_t)dim * dim, (uint64_t)dim);
		fill(keys, (size_t)rows * dim, (uint64_t)dim + 1000);
		/* Quadratic forms read COV's columns. */
		kernel_quad_forms(cov, keys, rows, dim, got);
		for (int j = 0; j < rows; j++)
			want[j] = plain_quad(cov, keys + (size_t)j * dim, dim);
		same_bits(got, want, (size_t)rows);
		/* The Gram matrix's upper half, of ROWS rows of KEYS. */
		for (size_t i = 0; i < (size_t)dim * dim; i++)
			got[i] = want[i] = NAN;
		kernel_gram_upper(keys, rows, dim, got);
		for (int a = 0; a < dim; a++)
			for (int b = 0; b < dim; b++) {
				double s = 0.0;
				for (int p = 0; p < rows; p++)
					s += keys[p * dim + a] * keys[p * dim + b];
				want[a * dim + b] = s;
			}
		for (int a = 0; a < dim; a++) {
			same_bits(got + a * dim + a, want + a * dim + a, (size_t)(dim - a));
			/* Below the diagonal: untouched, or the mirror's sum. */
			for (int b = 0; b < a; b++)
				if (!isnan(got[a * dim + b]))
					same_bits(got + a * dim + b, want + b * dim + a, 1);
		}
		/* a[j] += x[j] / d. */
		fill(got, (size_t)dim, 7);
		memcpy(want, got, (size_t)dim * sizeof *want);
		const double d = 0.1 + dim / 3.0;
		kernel_add_quot(got, keys, d, dim);
		for (int j = 0; j < dim; j++)
			want[j] += keys[j] / d;
		same_bits(got, want, (size_t)dim);
		check_ring_stats(dim);
	}
}

/* The projections of one slot, by hand: rows 3, 0, 1 of the ring (in
 * that order) hold 1, 2 and 6: mean 3, variance (4 + 1 + 9) / 3 = 14 / 3;
 * row 2's 100 is not read. */
static void test_ring_by_hand(void **state)
{
	(void)state;
	const double ring[4] = {2, 6, 100, 1};
	const int order[3] = {3, 0, 1};
	double mean, var;
	kernel_ring_stats(ring, 1, 1, order, 3, &mean, &var);
	assert_true(mean == 3.0);
	assert_true(fabs(var - 14.0 / 3.0) < 1e-15);
}

static void test_variants(void **state)
{
	(void)state;
	const char *const variants[] = {"avx512", "avx2", "portable"};
	int ran = 0;
	for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
		if (engine_kernel_select(variants[v]) != 0)
			continue; /* not on this processor */
		check_variant();
		ran++;
	}
	assert_true(ran >= 1);
	assert_int_equal(engine_kernel_select("auto"), 0);
}

/* The forms of a symmetric matrix are its rows' too (the rule's
 * statistics before a rotation), and the kernel's mirror of the Gram
 * matrix makes one. */
static void test_symmetric_rows(void **state)
{
	(void)state;
	enum { DIM = 64, ROWS = 64 };
	static double x[ROWS * DIM], cov[DIM * DIM], k[DIM];
	fill(x, ROWS * DIM, 5);
	fill(k, DIM, 6);
	kernel_gram_upper(x, ROWS, DIM, cov);
	for (int a = 0; a < DIM; a++)
		for (int b = a + 1; b < DIM; b++)
			cov[b * DIM + a] = cov[a * DIM + b];
	double got, rows = 0.0;
	kernel_quad_forms(cov, k, 1, DIM, &got);
	for (int a = 0; a < DIM; a++) {
		double t = 0.0;
		for (int b = 0; b < DIM; b++)
			t += cov[a * DIM + b] * k[b];
		rows += k[a] * t;
	}
	same_bits(&got, &rows, 1);
	/* And a hand-worked one: S = [[2, 1], [1, 3]], k = (1, 2):
	 * k' S k = 2 + 2 * 1 * 2 + 3 * 4 = 18. */
	const double s2[4] = {2, 1, 1, 3}, k2[2] = {1, 2};
	kernel_quad_forms(s2, k2, 1, 2, &got);
	assert_true(got == 18.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_variants),
	        cmocka_unit_test(test_symmetric_rows),
	        cmocka_unit_test(test_ring_by_hand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
