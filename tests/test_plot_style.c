/*
 * test_plot_style: the plot stage's curve styles, curves that lie on one
 * another and the smoothing of --smooth (src/plot/plot_style.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "plot_style.h"

/* Equal curves point at the first of them; a curve that differs at one
 * point, or is not in the mask, is no one's. */
static void test_same_curves(void **state)
{
	(void)state;
	const double ys[5][3] = {
	        {1, 2, 3}, {1, 2, 3}, {1, 2, 3.0000001}, {1, 2, 3.0000001}, {1, 2, 3},
	};
	int same[5];
	plot_style_same(&ys[0][0], 3, 3, 0x1f, 5, same);
	assert_int_equal(same[0], -1);
	assert_int_equal(same[1], 0);
	assert_int_equal(same[2], -1);
	assert_int_equal(same[3], 2);
	assert_int_equal(same[4], 0);
	/* Without policy 0, 1 is the first of its curve. */
	plot_style_same(&ys[0][0], 3, 3, 0x1e, 5, same);
	assert_int_equal(same[0], -1);
	assert_int_equal(same[1], -1);
	assert_int_equal(same[4], 1);
}

/* The centred mean of N: worked by hand, the ends over fewer values. */
static void test_smooth(void **state)
{
	(void)state;
	double ys[5] = {0, 3, 6, 0, 3}, tmp[5];
	plot_smooth(ys, 5, 3, tmp);
	const double three[5] = {1.5, 3, 3, 3, 1.5};
	for (int i = 0; i < 5; i++)
		assert_true(fabs(ys[i] - three[i]) < 1e-12);
	/* An even N: one before, itself, two after. */
	double zs[5] = {0, 4, 8, 4, 0};
	plot_smooth(zs, 5, 4, tmp);
	const double four[5] = {4, 4, 4, 4, 2};
	for (int i = 0; i < 5; i++)
		assert_true(fabs(zs[i] - four[i]) < 1e-12);
	/* N of 1 changes nothing. */
	double one[3] = {1, 5, 2};
	plot_smooth(one, 3, 1, tmp);
	assert_true(one[0] == 1 && one[1] == 5 && one[2] == 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_same_curves),
	        cmocka_unit_test(test_smooth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
