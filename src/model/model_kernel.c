/*
 * model_kernel: matrix times up to MODEL_GROUP vectors over packed panels
 * (model_impl.h), the one loop the forward pass spends its time in.
 *
 * With GCC or Clang a panel's column is a vector of MODEL_PANEL floats,
 * split by the compiler into what the instruction set has: one AVX-512
 * register, two AVX2 or four SSE2 ones. Each lane performs the operations
 * of a plain dot product of its row, in its order, so every instruction
 * set gives the same bits and the choice, made once per model when it is
 * loaded, never shows in a result. The variants are "avx512", "avx2" (the
 * vectors compiled for those instruction sets) and "portable" (the
 * vectors compiled for the baseline, SSE2 on x86-64); llama_kernel_select
 * (h2o/llama.h) picks one for the models loaded after it, so the tests can
 * hold every variant to that promise. Other compilers get the plain loop,
 * their one "portable" variant.
 */
#include "model_impl.h"

#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#include <immintrin.h>
#endif

#if defined(__GNUC__)
typedef float v16 __attribute__((vector_size(4 * MODEL_PANEL)));
typedef float v16a __attribute__((vector_size(4 * MODEL_PANEL), aligned(4), may_alias));
typedef float v8 __attribute__((vector_size(2 * MODEL_PANEL)));
typedef float v8a __attribute__((vector_size(2 * MODEL_PANEL), aligned(4), may_alias));

/* The compact forms' quants and halves (model_kernel_compact.h). */
typedef unsigned short v16s __attribute__((vector_size(2 * MODEL_PANEL), aligned(2), may_alias));
typedef unsigned int v16u __attribute__((vector_size(4 * MODEL_PANEL)));
/* Their kinds: bytes times a scale, bytes scaled less a minimum, F16, BF16. */
enum { CK_I8, CK_I8_MIN, CK_F16, CK_BF16 };

#if defined(__x86_64__) || defined(__i386__)
/* Sixteen F16 halves at P widened (exactly) into *R. */
__attribute__((target("avx512f"), always_inline)) static inline void
half16_avx512(const uint16_t *p, v16 *r)
{
	const __m512 f = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)p));
	memcpy(r, &f, sizeof f);
}

/* Sixteen signed bytes at P made floats (exactly) into *R. */
__attribute__((target("avx512f"), always_inline)) static inline void byte16_avx512(const int8_t *p,
                                                                                   v16 *r)
{
	const __m512 f = _mm512_cvtepi32_ps(
	        _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)p)));
	memcpy(r, &f, sizeof f);
}

__attribute__((target("avx2,f16c"), always_inline)) static inline void byte16_avx2(const int8_t *p,
                                                                                   v16 *r)
{
	const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
	const __m256 lo = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
	const __m256 hi = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)));
	memcpy(r, &lo, sizeof lo);
	memcpy((char *)r + sizeof lo, &hi, sizeof hi);
}

__attribute__((target("avx2,f16c"), always_inline)) static inline void
half16_avx2(const uint16_t *p, v16 *r)
{
	const __m256 a = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
	const __m256 b = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + 8)));
	memcpy(r, &a, sizeof a);
	memcpy((char *)r + sizeof a, &b, sizeof b);
}

#define KATTR    __attribute__((target("avx512f")))
#define KNAME(x) x##_avx512
#define KPAIR    8
#define KQUAD    2
#include "model_kernel_body.h"
#undef KATTR
#undef KNAME
#undef KPAIR
#undef KQUAD
#define KATTR    __attribute__((target("avx2,f16c")))
#define KNAME(x) x##_avx2
#define KPAIR    3
#define KQUAD    1
#include "model_kernel_body.h"
#undef KATTR
#undef KNAME
#undef KPAIR
#undef KQUAD
#endif

/* Sixteen bytes made floats: with the baseline's instructions. */
static inline void byte16_base(const int8_t *p, v16 *r)
{
	_Alignas(64) float f[MODEL_PANEL];
	for (int i = 0; i < MODEL_PANEL; i++)
		f[i] = (float)p[i];
	memcpy(r, f, sizeof f);
}

/* Sixteen halves widened exactly, without an instruction for it. */
static inline void half16_base(const uint16_t *p, v16 *r)
{
	_Alignas(64) float f[MODEL_PANEL];
	for (int i = 0; i < MODEL_PANEL; i++)
		f[i] = model_half(p[i]);
	memcpy(r, f, sizeof f);
}

#define KATTR
#define KNAME(x) x##_base
#define KPAIR    1
#define KQUAD    0
#include "model_kernel_body.h"
#undef KATTR
#undef KNAME
#undef KPAIR
#undef KQUAD

/* The variants, widest first, as llama_kernel_select names them. */
static const struct kernels variants[] = {
#if defined(__x86_64__) || defined(__i386__)
        {"avx512", panels_avx512, scores_avx512, values_avx512},
        {"avx2", panels_avx2, scores_avx2, values_avx2},
#endif
        {"portable", panels_base, scores_base, values_base},
};

#if defined(__x86_64__) || defined(__i386__)
/* Whether the processor converts halves (F16C): CPUID leaf 1, as clang's
 * __builtin_cpu_supports does not name it. */
static bool has_f16c(void)
{
	unsigned a, b, c, d;
	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
#endif

static bool runnable(const struct kernels *k)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (strcmp(k->name, "avx512") == 0)
		return __builtin_cpu_supports("avx512f");
	if (strcmp(k->name, "avx2") == 0)
		return __builtin_cpu_supports("avx2") && has_f16c();
#endif
	(void)k;
	return true;
}
#else

static void panels_plain(const struct packed *w, int pa, int pb, const float *const *x,
                         float *const *out, int np)
{
	const int end = pb * MODEL_PANEL < w->rows ? pb * MODEL_PANEL : w->rows;
	float row[MODEL_CHUNK], val[MODEL_GROUP];
	for (int i = pa * MODEL_PANEL; i < end; i++) {
		for (int q = 0; q < np; q++)
			val[q] = 0.0f;
		for (size_t c0 = 0; c0 < (size_t)w->cols; c0 += MODEL_CHUNK) {
			const size_t cw = (size_t)w->cols - c0 < MODEL_CHUNK ? (size_t)w->cols - c0
			                                                     : MODEL_CHUNK;
			model_row_part(w, i, c0, cw, row);
			for (int q = 0; q < np; q++)
				for (size_t j = 0; j < cw; j++)
					val[q] += row[j] * x[q][c0 + j];
		}
		for (int q = 0; q < np; q++)
			out[q][i] = val[q];
	}
}

static void scores_plain(const float *kt, int n, const float *q, int hs, float *att)
{
	for (int t = 0; t < n; t++) {
		const float *tile = kt + (size_t)(t / MODEL_PANEL) * (size_t)hs * MODEL_PANEL;
		float score = 0.0f;
		for (int i = 0; i < hs; i++)
			score += q[i] * tile[(size_t)i * MODEL_PANEL + (size_t)(t % MODEL_PANEL)];
		att[t] = score / sqrtf((float)hs);
	}
}

static void values_plain(const float *a, const float *v, int n, int hs, float *out)
{
	for (int i = 0; i < hs; i++) {
		float acc = 0.0f;
		for (int t = 0; t < n; t++)
			acc += a[t] * v[(size_t)t * (size_t)hs + (size_t)i];
		out[i] = acc;
	}
}

static const struct kernels variants[] = {
        {"portable", panels_plain, scores_plain, values_plain},
};

static bool runnable(const struct kernels *k)
{
	(void)k;
	return true;
}
#endif

#define N_VARIANTS ((int)(sizeof variants / sizeof variants[0]))

/* The variant models load with from now on: -1 for the widest runnable. */
static _Atomic int chosen = -1;

int llama_kernel_select(const char *name)
{
	if (name == NULL || strcmp(name, "auto") == 0) {
		atomic_store(&chosen, -1);
		return 0;
	}
	for (int i = 0; i < N_VARIANTS; i++)
		if (strcmp(variants[i].name, name) == 0) {
			if (!runnable(&variants[i]))
				return -1;
			atomic_store(&chosen, i);
			return 0;
		}
	return strcmp(name, "avx512") == 0 || strcmp(name, "avx2") == 0 ? -1 : -2;
}

void model_pick_kernels(struct kernels *k)
{
	const int i = atomic_load(&chosen);
	if (i >= 0) {
		*k = variants[i];
		return;
	}
	for (int j = 0; j < N_VARIANTS; j++)
		if (runnable(&variants[j])) {
			*k = variants[j];
			return;
		}
	*k = variants[N_VARIANTS - 1];
}

const char *llama_kernel_name(void)
{
	struct kernels k;
	model_pick_kernels(&k);
	return k.name;
}
