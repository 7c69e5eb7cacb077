/*
 * model_kernel: matrix times up to MODEL_GROUP vectors over packed panels
 * (model_impl.h), the one loop the forward pass spends its time in.
 *
 * With GCC or Clang a panel's column is a vector of MODEL_PANEL floats,
 * split by the compiler into what the instruction set has: one AVX-512
 * register, two AVX2 or four SSE2 ones. Each lane performs the operations
 * of a plain dot product of its row, in its order, so every instruction
 * set gives the same bits and the choice, made once per model when it is
 * loaded, never shows in a result. Other compilers get the plain loop.
 */
#include "model_impl.h"

#include <string.h>

#if defined(__GNUC__)
typedef float v16 __attribute__((vector_size(4 * MODEL_PANEL)));
typedef float v16a __attribute__((vector_size(4 * MODEL_PANEL), may_alias));

#if defined(__x86_64__) || defined(__i386__)
#define KATTR    __attribute__((target("avx512f")))
#define KNAME(x) x##_avx512
#define KPAIR    8
#include "model_kernel_body.h"
#undef KATTR
#undef KNAME
#undef KPAIR
#define KATTR    __attribute__((target("avx2")))
#define KNAME(x) x##_avx2
#define KPAIR    3
#include "model_kernel_body.h"
#undef KATTR
#undef KNAME
#undef KPAIR
#endif

#define KATTR
#define KNAME(x) x##_base
#define KPAIR    1
#include "model_kernel_body.h"
#undef KATTR
#undef KNAME
#undef KPAIR

panels_fn model_pick_kernel(const char **name)
{
	const char *n = "generic vectors";
	panels_fn f = panels_base;
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		n = "AVX-512";
		f = panels_avx512;
	} else if (__builtin_cpu_supports("avx2")) {
		n = "AVX2";
		f = panels_avx2;
	} else {
		n = "SSE2";
	}
#endif
	if (name != NULL)
		*name = n;
	return f;
}

#else

static void panels_plain(const struct packed *w, int pa, int pb, const float *const *x,
                         float *const *out, int np)
{
	const int end = pb * MODEL_PANEL < w->rows ? pb * MODEL_PANEL : w->rows;
	for (int q = 0; q < np; q++)
		for (int i = pa * MODEL_PANEL; i < end; i++) {
			float val = 0.0f;
			for (int j = 0; j < w->cols; j++)
				val += packed_at(w, i, j) * x[q][j];
			out[q][i] = val;
		}
}

panels_fn model_pick_kernel(const char **name)
{
	if (name != NULL)
		*name = "plain loops";
	return panels_plain;
}
#endif
