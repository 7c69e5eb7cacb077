/*
 * engine_exp: the exp of the engine's softmax, many at a time.
 *
 * Every function here returns, for every number, exactly the bits the C
 * library's exp returns (engine_exp.c checks that before it uses vectors,
 * and calls exp itself otherwise), so weights stay design §2's exp(l - max)
 * / sum whichever is used. The engine and the timeline must take every exp
 * of a weight from here, so that a weight recomputed later is the one
 * computed first.
 */
#ifndef H2O_ENGINE_EXP_H
#define H2O_ENGINE_EXP_H

#include <stddef.h>

/* x[j] = exp(x[j] - m) for j < len; returns the sum of the results from
 * 0.0 in index order (a chain of adds that runs beside the exps). */
double engine_exp_row_sum(double *x, int len, double m);

/* x[8c + l] = exp(x[8c + l] - m8[l]) for c < chunks: eight rows side by
 * side, each with its own max. Unless S8 is NULL, s8[l] += each result,
 * chunk by chunk (each row's sum in its order). */
void engine_exp_lanes(double *x, size_t chunks, const double m8[8], double s8[8]);

/* exp(x), as the functions above compute each number. */
double engine_exp(double x);

/* What computes them in this process: "avx512", "avx2" or "libm". */
const char *engine_exp_impl(void);

/* From now on, compute them with the vectors of VARIANT (an enum
 * kernel_variant of engine_kernel.h) when this processor runs them and
 * they agree with exp, else with exp itself (KERNEL_PORTABLE: always);
 * -1: the first use's choice, the widest that runs and agrees.
 * engine_kernel_select calls it. */
void engine_exp_select(int variant);

#endif
