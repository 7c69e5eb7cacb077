/*
 * engine_kernel: the engine's inner loops (see engine_kernel.h).
 *
 * With GCC or Clang the loops use vector extensions: with vectors of VW
 * doubles, `a += x * v` is VW independent IEEE multiplies and adds, one per
 * lane, never fused (the build passes -ffp-contract=off). The kernels are
 * written once (engine_kernel_body.h) and compiled for each instruction set
 * with its own vector width: AVX-512 (8 doubles), AVX2 (4) and the x86-64
 * baseline SSE2 (2); other machines get 2, other compilers plain doubles.
 * The first use picks the widest the processor runs, once per process, as
 * the C library picks its own string functions: the binary stays portable,
 * and since every width performs the same operations in the same order on
 * each number, the choice never shows in a result. engine_kernel_select
 * (h2o/engine.h) picks another, with the exp of engine_exp.c that goes
 * with it, so that the tests can hold every variant to that promise.
 */
#include "engine_kernel.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "engine_exp.h"
#include "h2o/engine.h"

struct kernel_set {
	void (*slot_logits)(const double *tiles, int ntiles, int dim, const double *q, double scale,
	                    double *out);
	void (*rows_logits8)(const double *rows, int nrows, int dim, const double *qt, double scale,
	                     double *out, size_t ostride);
	void (*key_logits8)(const double *qt, int dim, const double *k, double scale, double *out);
	void (*gather_out)(const double *w, const int *pos, int len, const double *v, int dim,
	                   double *out);
	void (*batch_out)(const double *wt, size_t wstride, const int *pos, int nu, const double *v,
	                  int dim, double *out);
	void (*group_logits)(const double *qt, int first, int rows, const double *k, int dim,
	                     double scale, double *lt, int j0, int j1, double *m8);
	void (*group_softmax)(double *lt, int first, int rows, const double *m8, double *w,
	                      size_t stride, double *max, double *sum, double *wsum);
	void (*block_out)(const double *w, size_t stride, int nrows, int len0, const double *v,
	                  int dim, int k0, int k1, double *out, double *panel);
	double (*max)(const double *x, int len);
	int (*weakest)(const double *x, int from, int to, double *value);
	void (*add)(double *a, const double *b, int len);
	void (*sum)(double *out, const double *a, const double *b, int len);
	void (*div_add)(double *x, int len, double d, const double *prev, double *score);
	void (*add_quot)(double *a, const double *x, double d, int len);
	void (*quad_forms)(const double *cov, const double *keys, int nkeys, int dim, double *out);
	void (*gram_upper)(const double *x, int m, int dim, double *out);
	void (*ring_stats)(const double *ring, size_t stride, int nslots, const int *order, int m,
	                   double *mean, double *var);
};

int kernel_tile_keys(int dim)
{
	/* About 256 KiB of rows: they stay in the core's second-level cache
	 * while every row of a block uses them. */
	const int keys = 32768 / dim;
	return keys < 16 ? 16 : keys;
}

void kernel_put_key(double *tiles, int s, const double *k, int dim)
{
	double *t =
	        tiles + (size_t)(s / KERNEL_LANES) * KERNEL_LANES * (size_t)dim + s % KERNEL_LANES;
	for (int i = 0; i < dim; i++)
		t[(size_t)i * KERNEL_LANES] = k[i];
}

#if defined(__GNUC__)
/* Vectors of N doubles, and their twins at any double's address that may
 * alias the arrays they are loaded from. */
#define VECTOR_TYPES(name, n)                                                                \
	typedef double name __attribute__((vector_size(8 * (n))));                           \
	typedef double name##u __attribute__((vector_size(8 * (n)), aligned(8), may_alias)); \
	typedef long long name##i __attribute__((vector_size(8 * (n))));
VECTOR_TYPES(vec2, 2)
VECTOR_TYPES(vec4, 4)
VECTOR_TYPES(vec8, 8)
#define VLOAD_OF(type, p)     (*(const type##u *)(const void *)(p))
#define VSTORE_OF(type, p, x) (*(type##u *)(void *)(p) = (x))
/* x > m ? x : m, lane by lane, from the comparison's all-ones lanes. */
#define VMAX_OF(type, x, m)                                         \
	__extension__({                                             \
		const type x_ = (x), m_ = (m);                      \
		const type##i gt_ = x_ > m_;                        \
		(type)(((type##i)x_ & gt_) | ((type##i)m_ & ~gt_)); \
	})
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#define KSUF         _avx512
#define KTARGET      __attribute__((target("avx512f")))
#define VW           8
#define V            vec8
#define VLOAD(p)     VLOAD_OF(vec8, p)
#define VSTORE(p, x) VSTORE_OF(vec8, p, x)
#define VMAX(x, m)   VMAX_OF(vec8, x, m)
#define VI           vec8i
#include "engine_kernel_body.h"
#undef KSUF
#undef KTARGET
#undef VW
#undef V
#undef VLOAD
#undef VSTORE
#undef VMAX
#undef VI

#define KSUF         _avx2
#define KTARGET      __attribute__((target("avx2")))
#define VW           4
#define V            vec4
#define VLOAD(p)     VLOAD_OF(vec4, p)
#define VSTORE(p, x) VSTORE_OF(vec4, p, x)
#define VMAX(x, m)   VMAX_OF(vec4, x, m)
#define VI           vec4i
#include "engine_kernel_body.h"
#undef KSUF
#undef KTARGET
#undef VW
#undef V
#undef VLOAD
#undef VSTORE
#undef VMAX
#undef VI
#endif

#if defined(__GNUC__)
/* The baseline of x86-64 (SSE2), and any other machine's 128 bits. */
#define KSUF         _vec2
#define KTARGET      /* the build's own */
#define VW           2
#define V            vec2
#define VLOAD(p)     VLOAD_OF(vec2, p)
#define VSTORE(p, x) VSTORE_OF(vec2, p, x)
#define VMAX(x, m)   VMAX_OF(vec2, x, m)
#define VI           vec2i
#else
/* Plain C: the loops as they read. */
#define KSUF         _plain
#define KTARGET      /* none */
#define VW           1
#define V            double
#define VLOAD(p)     (*(p))
#define VSTORE(p, x) (*(p) = (x))
#define VMAX(x, m)   ((x) > (m) ? (x) : (m))
#define VI           long long
#endif
#include "engine_kernel_body.h"
#undef KSUF
#undef KTARGET
#undef VW
#undef V
#undef VLOAD
#undef VSTORE
#undef VMAX
#undef VI

/* The variants, widest first (enum kernel_variant), and the kernels of
 * each this processor runs (else NULL), found once per process. */
static const char *const variant_names[KERNEL_VARIANTS] = {"avx512", "avx2", "portable"};
static const struct kernel_set *runnable[KERNEL_VARIANTS];
static pthread_once_t runnable_once = PTHREAD_ONCE_INIT;
/* The kernels in use: the widest runnable until engine_kernel_select. */
static const struct kernel_set *_Atomic chosen;

static void find_runnable(void)
{
#if defined(__GNUC__)
	runnable[KERNEL_PORTABLE] = &kernels_vec2;
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		runnable[KERNEL_AVX512] = &kernels_avx512;
	if (__builtin_cpu_supports("avx2"))
		runnable[KERNEL_AVX2] = &kernels_avx2;
#endif
#else
	runnable[KERNEL_PORTABLE] = &kernels_plain;
#endif
	for (int v = 0; v < KERNEL_VARIANTS; v++)
		if (runnable[v]) {
			atomic_store(&chosen, runnable[v]);
			break;
		}
}

static const struct kernel_set *kernels(void)
{
	const struct kernel_set *k = atomic_load_explicit(&chosen, memory_order_acquire);
	if (k)
		return k;
	pthread_once(&runnable_once, find_runnable);
	return atomic_load_explicit(&chosen, memory_order_acquire);
}

int engine_kernel_select(const char *name)
{
	pthread_once(&runnable_once, find_runnable);
	const bool automatic = !name || strcmp(name, "auto") == 0;
	int v = 0;
	if (automatic)
		while (!runnable[v])
			v++;
	else
		while (v < KERNEL_VARIANTS && strcmp(name, variant_names[v]) != 0)
			v++;
	if (v == KERNEL_VARIANTS)
		return -2;
	if (!runnable[v])
		return -1;
	engine_exp_select(automatic ? -1 : v);
	atomic_store(&chosen, runnable[v]);
	return 0;
}

const char *engine_kernel_name(void)
{
	const struct kernel_set *k = kernels();
	int v = 0;
	while (runnable[v] != k)
		v++;
	return variant_names[v];
}

const char *kernel_isa(void)
{
	const struct kernel_set *k = kernels();
#if defined(__GNUC__) && defined(__x86_64__)
	if (k == &kernels_avx512)
		return "avx512";
	if (k == &kernels_avx2)
		return "avx2";
#endif
#if defined(__GNUC__)
	(void)k;
	return "vec2";
#else
	(void)k;
	return "plain";
#endif
}

void kernel_slot_logits(const double *tiles, int ntiles, int dim, const double *q, double scale,
                        double *out)
{
	kernels()->slot_logits(tiles, ntiles, dim, q, scale, out);
}

void kernel_rows_logits8(const double *rows, int nrows, int dim, const double *qt, double scale,
                         double *out, size_t ostride)
{
	kernels()->rows_logits8(rows, nrows, dim, qt, scale, out, ostride);
}

void kernel_key_logits8(const double *qt, int dim, const double *k, double scale, double *out)
{
	kernels()->key_logits8(qt, dim, k, scale, out);
}

void kernel_gather_out(const double *w, const int *pos, int len, const double *v, int dim,
                       double *out)
{
	kernels()->gather_out(w, pos, len, v, dim, out);
}

void kernel_batch_out(const double *wt, size_t wstride, const int *pos, int nu, const double *v,
                      int dim, double *out)
{
	kernels()->batch_out(wt, wstride, pos, nu, v, dim, out);
}

void kernel_group_logits(const double *qt, int first, int rows, const double *k, int dim,
                         double scale, double *lt, int j0, int j1, double *m8)
{
	kernels()->group_logits(qt, first, rows, k, dim, scale, lt, j0, j1, m8);
}

void kernel_group_softmax(double *lt, int first, int rows, const double *m8, double *w,
                          size_t stride, double *max, double *sum, double *wsum)
{
	kernels()->group_softmax(lt, first, rows, m8, w, stride, max, sum, wsum);
}

void kernel_block_out(const double *w, size_t stride, int nrows, int len0, const double *v, int dim,
                      int k0, int k1, double *out, double *panel)
{
	kernels()->block_out(w, stride, nrows, len0, v, dim, k0, k1, out, panel);
}

int kernel_weakest(const double *x, int from, int to, double *value)
{
	return kernels()->weakest(x, from, to, value);
}

void kernel_add(double *a, const double *b, int len)
{
	kernels()->add(a, b, len);
}

void kernel_sum(double *out, const double *a, const double *b, int len)
{
	kernels()->sum(out, a, b, len);
}

void kernel_softmax_scores(double *x, int len, double *max, double *sum, const double *prev,
                           double *score)
{
	const struct kernel_set *k = kernels();
	const double m = k->max(x, len);
	/* The sum is a chain in index order, as design §2 writes it. */
	const double s = engine_exp_row_sum(x, len, m);
	k->div_add(x, len, s, prev, score);
	*max = m;
	*sum = s;
}

void kernel_add_quot(double *a, const double *x, double d, int len)
{
	kernels()->add_quot(a, x, d, len);
}

void kernel_quad_forms(const double *cov, const double *keys, int nkeys, int dim, double *out)
{
	kernels()->quad_forms(cov, keys, nkeys, dim, out);
}

void kernel_gram_upper(const double *x, int m, int dim, double *out)
{
	kernels()->gram_upper(x, m, dim, out);
}

void kernel_ring_stats(const double *ring, size_t stride, int nslots, const int *order, int m,
                       double *mean, double *var)
{
	kernels()->ring_stats(ring, stride, nslots, order, m, mean, var);
}
