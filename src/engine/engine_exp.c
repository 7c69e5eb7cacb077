/*
 * engine_exp: exp for the softmax, eight at a time, bit-identical to the
 * C library's exp.
 *
 * Spec §2's weights are exp(l - max) / sum; on long scenes the engine calls
 * exp about n^2 / 2 times, and a call through the C library costs more
 * than the dot product of 64 numbers that precedes it. glibc (since 2.28,
 * on x86-64 with FMA) computes exp with the algorithm of Arm's
 * optimized-routines (MIT licence): x = k ln2/128 + r, a table of 2^(k/128)
 * split as a double and its rounding error, and a degree-5 polynomial in r,
 * evaluated with fused multiply-adds in a fixed order. This file evaluates
 * the same operations in the same order in the lanes of AVX-512 or AVX2
 * vectors, so each lane returns exactly what exp returns; lanes outside the
 * main path (|x| < 2^-54, which includes the softmax's exp(0) = 1, and
 * |x| >= 512) call the library's exp itself.
 *
 * "Exactly" is checked, not assumed: the first use compares the vectors
 * with the library's exp on thousands of arguments covering every table
 * entry and the whole range, and uses them only if every bit agrees; else
 * (another C library, another algorithm, no FMA) everything calls exp. The
 * choice is made once per process, like the C library's own choice of its
 * exp, unless engine_kernel_select asks for the exp of another variant of
 * the kernels (the portable one's is the library's). The scalar engine_exp
 * answers like the lanes, so the timeline recomputes past weights with the
 * very same function.
 */
#include "engine_exp.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "engine_kernel.h"

/* The table: entry 2k is the rounding error T_k of H_k, the double nearest
 * 2^(k/128), as a double (H_k (1 + T_k) ~ 2^(k/128)), and entry 2k + 1 is
 * the bits of H_k minus k << 45. Computed with Python's decimal module:
 *   e = (Decimal(2).ln() * k / 128).exp(); H = float(e)
 *   T = float((e - Decimal(H)) / Decimal(H))
 * (precision 60), which gives glibc's table bit for bit. */
static const uint64_t exp_tab[256] = {
        0x0000000000000000u, 0x3ff0000000000000u, 0x3c9b3b4f1a88bf6eu, 0x3feff63da9fb3335u,
        0xbc7160139cd8dc5du, 0x3fefec9a3e778061u, 0xbc905e7a108766d1u, 0x3fefe315e86e7f85u,
        0x3c8cd2523567f613u, 0x3fefd9b0d3158574u, 0xbc8bce8023f98efau, 0x3fefd06b29ddf6deu,
        0x3c60f74e61e6c861u, 0x3fefc74518759bc8u, 0x3c90a3e45b33d399u, 0x3fefbe3ecac6f383u,
        0x3c979aa65d837b6du, 0x3fefb5586cf9890fu, 0x3c8eb51a92fdeffcu, 0x3fefac922b7247f7u,
        0x3c3ebe3d702f9cd1u, 0x3fefa3ec32d3d1a2u, 0xbc6a033489906e0bu, 0x3fef9b66affed31bu,
        0xbc9556522a2fbd0eu, 0x3fef9301d0125b51u, 0xbc5080ef8c4eea55u, 0x3fef8abdc06c31ccu,
        0xbc91c923b9d5f416u, 0x3fef829aaea92de0u, 0x3c80d3e3e95c55afu, 0x3fef7a98c8a58e51u,
        0xbc801b15eaa59348u, 0x3fef72b83c7d517bu, 0xbc8f1ff055de323du, 0x3fef6af9388c8deau,
        0x3c8b898c3f1353bfu, 0x3fef635beb6fcb75u, 0xbc96d99c7611eb26u, 0x3fef5be084045cd4u,
        0x3c9aecf73e3a2f60u, 0x3fef54873168b9aau, 0xbc8fe782cb86389du, 0x3fef4d5022fcd91du,
        0x3c8a6f4144a6c38du, 0x3fef463b88628cd6u, 0x3c807a05b0e4047du, 0x3fef3f49917ddc96u,
        0x3c968efde3a8a894u, 0x3fef387a6e756238u, 0x3c875e18f274487du, 0x3fef31ce4fb2a63fu,
        0x3c80472b981fe7f2u, 0x3fef2b4565e27cddu, 0xbc96b87b3f71085eu, 0x3fef24dfe1f56381u,
        0x3c82f7e16d09ab31u, 0x3fef1e9df51fdee1u, 0xbc3d219b1a6fbffau, 0x3fef187fd0dad990u,
        0x3c8b3782720c0ab4u, 0x3fef1285a6e4030bu, 0x3c6e149289cecb8fu, 0x3fef0cafa93e2f56u,
        0x3c834d754db0abb6u, 0x3fef06fe0a31b715u, 0x3c864201e2ac744cu, 0x3fef0170fc4cd831u,
        0x3c8fdd395dd3f84au, 0x3feefc08b26416ffu, 0xbc86a3803b8e5b04u, 0x3feef6c55f929ff1u,
        0xbc924aedcc4b5068u, 0x3feef1a7373aa9cbu, 0xbc9907f81b512d8eu, 0x3feeecae6d05d866u,
        0xbc71d1e83e9436d2u, 0x3feee7db34e59ff7u, 0xbc991919b3ce1b15u, 0x3feee32dc313a8e5u,
        0x3c859f48a72a4c6du, 0x3feedea64c123422u, 0xbc9312607a28698au, 0x3feeda4504ac801cu,
        0xbc58a78f4817895bu, 0x3feed60a21f72e2au, 0xbc7c2c9b67499a1bu, 0x3feed1f5d950a897u,
        0x3c4363ed60c2ac11u, 0x3feece086061892du, 0x3c9666093b0664efu, 0x3feeca41ed1d0057u,
        0x3c6ecce1daa10379u, 0x3feec6a2b5c13cd0u, 0x3c93ff8e3f0f1230u, 0x3feec32af0d7d3deu,
        0x3c7690cebb7aafb0u, 0x3feebfdad5362a27u, 0x3c931dbdeb54e077u, 0x3feebcb299fddd0du,
        0xbc8f94340071a38eu, 0x3feeb9b2769d2ca7u, 0xbc87deccdc93a349u, 0x3feeb6daa2cf6642u,
        0xbc78dec6bd0f385fu, 0x3feeb42b569d4f82u, 0xbc861246ec7b5cf6u, 0x3feeb1a4ca5d920fu,
        0x3c93350518fdd78eu, 0x3feeaf4736b527dau, 0x3c7b98b72f8a9b05u, 0x3feead12d497c7fdu,
        0x3c9063e1e21c5409u, 0x3feeab07dd485429u, 0x3c34c7855019c6eau, 0x3feea9268a5946b7u,
        0x3c9432e62b64c035u, 0x3feea76f15ad2148u, 0xbc8ce44a6199769fu, 0x3feea5e1b976dc09u,
        0xbc8c33c53bef4da8u, 0x3feea47eb03a5585u, 0xbc845378892be9aeu, 0x3feea34634ccc320u,
        0xbc93cedd78565858u, 0x3feea23882552225u, 0x3c5710aa807e1964u, 0x3feea155d44ca973u,
        0xbc93b3efbf5e2228u, 0x3feea09e667f3bcdu, 0xbc6a12ad8734b982u, 0x3feea012750bdabfu,
        0xbc6367efb86da9eeu, 0x3fee9fb23c651a2fu, 0xbc80dc3d54e08851u, 0x3fee9f7df9519484u,
        0xbc781f647e5a3ecfu, 0x3fee9f75e8ec5f74u, 0xbc86ee4ac08b7db0u, 0x3fee9f9a48a58174u,
        0xbc8619321e55e68au, 0x3fee9feb564267c9u, 0x3c909ccb5e09d4d3u, 0x3feea0694fde5d3fu,
        0xbc7b32dcb94da51du, 0x3feea11473eb0187u, 0x3c94ecfd5467c06bu, 0x3feea1ed0130c132u,
        0x3c65ebe1abd66c55u, 0x3feea2f336cf4e62u, 0xbc88a1c52fb3cf42u, 0x3feea427543e1a12u,
        0xbc9369b6f13b3734u, 0x3feea589994cce13u, 0xbc805e843a19ff1eu, 0x3feea71a4623c7adu,
        0xbc94d450d872576eu, 0x3feea8d99b4492edu, 0x3c90ad675b0e8a00u, 0x3feeaac7d98a6699u,
        0x3c8db72fc1f0eab4u, 0x3feeace5422aa0dbu, 0xbc65b6609cc5e7ffu, 0x3feeaf3216b5448cu,
        0x3c7bf68359f35f44u, 0x3feeb1ae99157736u, 0xbc93091fa71e3d83u, 0x3feeb45b0b91ffc6u,
        0xbc5da9b88b6c1e29u, 0x3feeb737b0cdc5e5u, 0xbc6c23f97c90b959u, 0x3feeba44cbc8520fu,
        0xbc92434322f4f9aau, 0x3feebd829fde4e50u, 0xbc85ca6cd7668e4bu, 0x3feec0f170ca07bau,
        0x3c71affc2b91ce27u, 0x3feec49182a3f090u, 0x3c6dd235e10a73bbu, 0x3feec86319e32323u,
        0xbc87c50422622263u, 0x3feecc667b5de565u, 0x3c8b1c86e3e231d5u, 0x3feed09bec4a2d33u,
        0xbc91bbd1d3bcbb15u, 0x3feed503b23e255du, 0x3c90cc319cee31d2u, 0x3feed99e1330b358u,
        0x3c8469846e735ab3u, 0x3feede6b5579fdbfu, 0xbc82dfcd978e9db4u, 0x3feee36bbfd3f37au,
        0x3c8c1a7792cb3387u, 0x3feee89f995ad3adu, 0xbc907b8f4ad1d9fau, 0x3feeee07298db666u,
        0xbc55c3d956dcaebau, 0x3feef3a2b84f15fbu, 0xbc90a40e3da6f640u, 0x3feef9728de5593au,
        0xbc68d6f438ad9334u, 0x3feeff76f2fb5e47u, 0xbc91eee26b588a35u, 0x3fef05b030a1064au,
        0x3c74ffd70a5fddcdu, 0x3fef0c1e904bc1d2u, 0xbc91bdfbfa9298acu, 0x3fef12c25bd71e09u,
        0x3c736eae30af0cb3u, 0x3fef199bdd85529cu, 0x3c8ee3325c9ffd94u, 0x3fef20ab5fffd07au,
        0x3c84e08fd10959acu, 0x3fef27f12e57d14bu, 0x3c63cdaf384e1a67u, 0x3fef2f6d9406e7b5u,
        0x3c676b2c6c921968u, 0x3fef3720dcef9069u, 0xbc808a1883ccb5d2u, 0x3fef3f0b555dc3fau,
        0xbc8fad5d3ffffa6fu, 0x3fef472d4a07897cu, 0xbc900dae3875a949u, 0x3fef4f87080d89f2u,
        0x3c74a385a63d07a7u, 0x3fef5818dcfba487u, 0xbc82919e2040220fu, 0x3fef60e316c98398u,
        0x3c8e5a50d5c192acu, 0x3fef69e603db3285u, 0x3c843a59ac016b4bu, 0x3fef7321f301b460u,
        0xbc82d52107b43e1fu, 0x3fef7c97337b9b5fu, 0xbc892ab93b470dc9u, 0x3fef864614f5a129u,
        0x3c74b604603a88d3u, 0x3fef902ee78b3ff6u, 0x3c83c5ec519d7271u, 0x3fef9a51fbc74c83u,
        0xbc8ff7128fd391f0u, 0x3fefa4afa2a490dau, 0xbc8dae98e223747du, 0x3fefaf482d8e67f1u,
        0x3c8ec3bc41aa2008u, 0x3fefba1bee615a27u, 0x3c842b94c3a9eb32u, 0x3fefc52b376bba97u,
        0x3c8a64a931d185eeu, 0x3fefd0765b6e4540u, 0xbc8e37bae43be3edu, 0x3fefdbfdad9cbe14u,
        0x3c77893b4d91cd9du, 0x3fefe7c1819e90d8u, 0x3c5305c14160cc89u, 0x3feff3c22b8f71f1u,
};

/* The constants of the algorithm (glibc's __exp_data). */
#define INVLN2N   0x1.71547652b82fep7 /* 128 / ln 2 */
#define SHIFT     0x1.8p52            /* rounds to an integer when added */
#define NEGLN2HIN -0x1.62e42fefa0000p-8
#define NEGLN2LON -0x1.cf79abc9e3b3ap-47
#define C2        0x1.ffffffffffdbdp-2
#define C3        0x1.555555555543cp-3
#define C4        0x1.55555cf172b91p-5
#define C5        0x1.1111167a4d017p-7
/* The main path: 2^-54 <= |x| < 512. */
#define MAIN_LO 0x1p-54
#define MAIN_HI 512.0

static double as_double(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

static uint64_t as_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}

/* One lane, with C99's fma (one rounding, whatever computes it). */
static double exp_replica(double x)
{
	const double a = fabs(x);
	if (!(a >= MAIN_LO && a < MAIN_HI))
		return exp(x);
	double kd = fma(x, INVLN2N, SHIFT);
	const uint64_t ki = as_bits(kd);
	kd -= SHIFT;
	double r = fma(kd, NEGLN2HIN, x);
	r = fma(kd, NEGLN2LON, r);
	const uint64_t idx = 2 * (ki % 128), top = ki << 45;
	const double tail = as_double(exp_tab[idx]);
	const double scale = as_double(exp_tab[idx + 1] + top);
	const double p23 = fma(r, C3, C2), tr = r + tail, r2 = r * r, p45 = fma(r, C5, C4);
	const double t1 = fma(p23, r2, tr), r4 = r2 * r2;
	const double tmp = fma(r4, p45, t1);
	return fma(scale, tmp, scale);
}

/* x[8c + l] = exp(x[8c + l] - m8[l]) for the chunks of eight, with the C
 * library's exp throughout; s8[l] += each result, chunk by chunk, and
 * *chain += every result in index order. The vector versions below do the
 * same, the chain while the next chunk's exps are computed. */
static void lanes_libm(double *x, size_t chunks, const double *m8, double *s8, double *chain)
{
	for (size_t i = 0; i < chunks * 8; i++) {
		x[i] = exp(x[i] - m8[i % 8]);
		if (s8)
			s8[i % 8] += x[i];
		if (chain)
			*chain += x[i];
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#define EXP_VECTORS 1
#include <immintrin.h>

/* Lanes off the main path get the library's exp of their argument. */
static void fix_lanes(double *x, const double *arg, unsigned ok, int lanes)
{
	for (int l = 0; l < lanes; l++)
		if (!(ok >> l & 1u))
			x[l] = exp(arg[l]);
}

__attribute__((target("avx512f"))) static void
lanes_avx512(double *x, size_t chunks, const double *m8, double *s8, double *chain)
{
	__m512d sum = s8 ? _mm512_loadu_pd(s8) : _mm512_setzero_pd();
	double cs = chain ? *chain : 0.0;
	const __m512d m = _mm512_loadu_pd(m8), lo = _mm512_set1_pd(MAIN_LO),
	              hi = _mm512_set1_pd(MAIN_HI), invln2n = _mm512_set1_pd(INVLN2N),
	              shift = _mm512_set1_pd(SHIFT), neghi = _mm512_set1_pd(NEGLN2HIN),
	              neglo = _mm512_set1_pd(NEGLN2LON), c2 = _mm512_set1_pd(C2),
	              c3 = _mm512_set1_pd(C3), c4 = _mm512_set1_pd(C4), c5 = _mm512_set1_pd(C5);
	const __m512i k127 = _mm512_set1_epi64(127), one = _mm512_set1_epi64(1);
	for (size_t c = 0; c < chunks; c++, x += 8) {
		const __m512d v = _mm512_sub_pd(_mm512_loadu_pd(x), m);
		const __m512d a = _mm512_abs_pd(v);
		const unsigned ok = _mm512_cmp_pd_mask(a, lo, _CMP_GE_OQ) &
		                    _mm512_cmp_pd_mask(a, hi, _CMP_LT_OQ);
		__m512d kd = _mm512_fmadd_pd(v, invln2n, shift);
		const __m512i ki = _mm512_castpd_si512(kd);
		kd = _mm512_sub_pd(kd, shift);
		__m512d r = _mm512_fmadd_pd(kd, neghi, v);
		r = _mm512_fmadd_pd(kd, neglo, r);
		const __m512i idx = _mm512_slli_epi64(_mm512_and_si512(ki, k127), 1);
		const __m512i top = _mm512_slli_epi64(ki, 45);
		const __m512d tail = _mm512_i64gather_pd(idx, (const void *)exp_tab, 8);
		const __m512i hbits = _mm512_i64gather_epi64(_mm512_add_epi64(idx, one),
		                                             (const void *)exp_tab, 8);
		const __m512d scale = _mm512_castsi512_pd(_mm512_add_epi64(hbits, top));
		const __m512d p23 = _mm512_fmadd_pd(r, c3, c2), tr = _mm512_add_pd(r, tail);
		const __m512d r2 = _mm512_mul_pd(r, r), p45 = _mm512_fmadd_pd(r, c5, c4);
		const __m512d t1 = _mm512_fmadd_pd(p23, r2, tr), r4 = _mm512_mul_pd(r2, r2);
		const __m512d tmp = _mm512_fmadd_pd(r4, p45, t1);
		_mm512_storeu_pd(x, _mm512_fmadd_pd(scale, tmp, scale));
		if (ok != 0xffu) {
			double arg[8];
			_mm512_storeu_pd(arg, v);
			fix_lanes(x, arg, ok, 8);
		}
		sum = _mm512_add_pd(sum, _mm512_loadu_pd(x));
		if (chain)
			for (int l = 0; l < 8; l++)
				cs += x[l];
	}
	if (s8)
		_mm512_storeu_pd(s8, sum);
	if (chain)
		*chain = cs;
}

__attribute__((target("avx2,fma"))) static void
lanes_avx2(double *x, size_t chunks, const double *m8, double *s8, double *chain)
{
	__m256d sum[2] = {s8 ? _mm256_loadu_pd(s8) : _mm256_setzero_pd(),
	                  s8 ? _mm256_loadu_pd(s8 + 4) : _mm256_setzero_pd()};
	const __m256d lo = _mm256_set1_pd(MAIN_LO), hi = _mm256_set1_pd(MAIN_HI),
	              invln2n = _mm256_set1_pd(INVLN2N), shift = _mm256_set1_pd(SHIFT),
	              neghi = _mm256_set1_pd(NEGLN2HIN), neglo = _mm256_set1_pd(NEGLN2LON),
	              c2 = _mm256_set1_pd(C2), c3 = _mm256_set1_pd(C3), c4 = _mm256_set1_pd(C4),
	              c5 = _mm256_set1_pd(C5),
	              absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
	const __m256i k127 = _mm256_set1_epi64x(127), one = _mm256_set1_epi64x(1);
	const long long *tab = (const long long *)(const void *)exp_tab;
	double cs = chain ? *chain : 0.0;
	for (size_t i = 0; i < chunks * 2; i++, x += 4) {
		const __m256d v =
		        _mm256_sub_pd(_mm256_loadu_pd(x), _mm256_loadu_pd(m8 + 4 * (i % 2)));
		const __m256d a = _mm256_and_pd(v, absmask);
		const unsigned ok = (unsigned)_mm256_movemask_pd(_mm256_and_pd(
		        _mm256_cmp_pd(a, lo, _CMP_GE_OQ), _mm256_cmp_pd(a, hi, _CMP_LT_OQ)));
		__m256d kd = _mm256_fmadd_pd(v, invln2n, shift);
		const __m256i ki = _mm256_castpd_si256(kd);
		kd = _mm256_sub_pd(kd, shift);
		__m256d r = _mm256_fmadd_pd(kd, neghi, v);
		r = _mm256_fmadd_pd(kd, neglo, r);
		const __m256i idx = _mm256_slli_epi64(_mm256_and_si256(ki, k127), 1);
		const __m256i top = _mm256_slli_epi64(ki, 45);
		const __m256d tail =
		        _mm256_i64gather_pd((const double *)(const void *)exp_tab, idx, 8);
		const __m256i hbits = _mm256_i64gather_epi64(tab, _mm256_add_epi64(idx, one), 8);
		const __m256d scale = _mm256_castsi256_pd(_mm256_add_epi64(hbits, top));
		const __m256d p23 = _mm256_fmadd_pd(r, c3, c2), tr = _mm256_add_pd(r, tail);
		const __m256d r2 = _mm256_mul_pd(r, r), p45 = _mm256_fmadd_pd(r, c5, c4);
		const __m256d t1 = _mm256_fmadd_pd(p23, r2, tr), r4 = _mm256_mul_pd(r2, r2);
		const __m256d tmp = _mm256_fmadd_pd(r4, p45, t1);
		_mm256_storeu_pd(x, _mm256_fmadd_pd(scale, tmp, scale));
		if (ok != 0xfu) {
			double arg[4];
			_mm256_storeu_pd(arg, v);
			fix_lanes(x, arg, ok, 4);
		}
		sum[i % 2] = _mm256_add_pd(sum[i % 2], _mm256_loadu_pd(x));
		if (chain)
			for (int l = 0; l < 4; l++)
				cs += x[l];
	}
	if (chain)
		*chain = cs;
	if (s8) {
		_mm256_storeu_pd(s8, sum[0]);
		_mm256_storeu_pd(s8 + 4, sum[1]);
	}
}
#else
#define EXP_VECTORS 0
#endif

/* ---- choosing, once per process ----------------------------------------- */

typedef void lanes_fn(double *x, size_t chunks, const double *m8, double *s8, double *chain);

struct exp_impl {
	lanes_fn *lanes;
	bool replica; /* engine_exp is exp_replica (else the library's exp) */
	const char *name;
};

static const struct exp_impl impl_libm = {lanes_libm, false, "libm"};
#if EXP_VECTORS
static const struct exp_impl impl_avx512 = {lanes_avx512, true, "avx512"};
static const struct exp_impl impl_avx2 = {lanes_avx2, true, "avx2"};
#endif
/* What each variant of the kernels (enum kernel_variant) uses, and the
 * first use's choice, found once per process; then the one in use. */
static const struct exp_impl *usable[KERNEL_VARIANTS], *automatic;
static const struct exp_impl *_Atomic chosen;
static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15u;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

/* The arguments of the check: a sweep of [-520, 0] that lands on every
 * table entry many times, random arguments of every magnitude a softmax
 * meets, and the edges of the main path. */
#define CHECK_SWEEP  8448
#define CHECK_RANDOM 8192
#define CHECK_EDGES  16
#define CHECK_COUNT  (CHECK_SWEEP + CHECK_RANDOM + CHECK_EDGES)

static void check_arguments(double *x)
{
	int n = 0;
	for (int i = 0; i < CHECK_SWEEP; i++)
		x[n++] = -0.0615 * i;
	for (int i = 0; i < CHECK_RANDOM; i++) {
		const uint64_t u = mix((uint64_t)i);
		/* A random mantissa at a random scale from 2^-60 to 2^9. */
		const double f = as_double(0x3ff0000000000000u | (u >> 12)) - 1.0;
		x[n++] = -ldexp(1.0 + f, (int)(u % 70) - 60);
	}
	const double edges[CHECK_EDGES] = {
	        0.0,
	        -0.0,
	        -0x1p-54,
	        -0x1.fffffffffffffp-55,
	        -0x1.0000000000001p-54,
	        -511.999,
	        -512.0,
	        -600.0,
	        -708.5,
	        -745.2,
	        -1e300,
	        -INFINITY,
	        -1e-300,
	        -0x1p-1022,
	        -1.0,
	        -0.5,
	};
	for (int i = 0; i < CHECK_EDGES; i++)
		x[n++] = edges[i];
}

/* Whether LANES answers exactly as exp on every argument of the check. */
static bool agrees(lanes_fn *lanes)
{
	static const double zero8[8];
	static double x[CHECK_COUNT], y[CHECK_COUNT];
	check_arguments(x);
	memcpy(y, x, sizeof y);
	lanes(y, CHECK_COUNT / 8, zero8, NULL, NULL);
	for (int i = 0; i < CHECK_COUNT; i++) {
		const double want = exp(x[i]);
		if (as_bits(y[i]) != as_bits(want) || as_bits(exp_replica(x[i])) != as_bits(want))
			return false;
	}
	return true;
}

static void choose(void)
{
	for (int v = 0; v < KERNEL_VARIANTS; v++)
		usable[v] = &impl_libm;
#if EXP_VECTORS
	__builtin_cpu_init();
	if (__builtin_cpu_supports("fma")) {
		if (__builtin_cpu_supports("avx512f") && agrees(lanes_avx512))
			usable[KERNEL_AVX512] = &impl_avx512;
		if (__builtin_cpu_supports("avx2") && agrees(lanes_avx2))
			usable[KERNEL_AVX2] = &impl_avx2;
	}
#endif
	/* The widest that runs and agrees. */
	automatic =
	        usable[KERNEL_AVX512] != &impl_libm ? usable[KERNEL_AVX512] : usable[KERNEL_AVX2];
	atomic_store(&chosen, automatic);
}

static const struct exp_impl *ready(void)
{
	const struct exp_impl *c = atomic_load_explicit(&chosen, memory_order_acquire);
	if (c)
		return c;
	pthread_once(&chosen_once, choose);
	return atomic_load_explicit(&chosen, memory_order_acquire);
}

void engine_exp_select(int variant)
{
	pthread_once(&chosen_once, choose);
	atomic_store(&chosen,
	             variant >= 0 && variant < KERNEL_VARIANTS ? usable[variant] : automatic);
}

void engine_exp_lanes(double *x, size_t chunks, const double m8[8], double s8[8])
{
	ready()->lanes(x, chunks, m8, s8, NULL);
}

double engine_exp_row_sum(double *x, int len, double m)
{
	const struct exp_impl *c = ready();
	const double m8[8] = {m, m, m, m, m, m, m, m};
	const size_t chunks = (size_t)len / 8;
	double sum = 0.0;
	c->lanes(x, chunks, m8, NULL, &sum);
	for (int j = (int)chunks * 8; j < len; j++) {
		x[j] = c->replica ? exp_replica(x[j] - m) : exp(x[j] - m);
		sum += x[j];
	}
	return sum;
}

double engine_exp(double x)
{
	return ready()->replica ? exp_replica(x) : exp(x);
}

const char *engine_exp_impl(void)
{
	return ready()->name;
}
