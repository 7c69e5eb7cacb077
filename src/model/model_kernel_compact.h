/*
 * model_kernel_compact: the panel kernel of the compact forms (model_pack.c),
 * included by model_kernel.c once per instruction set after
 * model_kernel_body.h, with its KATTR, KNAME and KPAIR, and KQUAD (up to
 * how many inputs four panels go at once), KNAME(byte16) and KNAME(half16)
 * (sixteen bytes or F16 halves made floats).
 *
 * Lane r of an accumulator sums row r of its panel, acc += w * x[j] for
 * j = 0, 1, ..., as the float kernel does; w is made in the registers
 * from the compact weight with the operations of ggml's dequantisation
 * (quant.c): (float)q * scale, or scale * (float)q - min (Q4_K), or the
 * half widened (exact). So the sums are those of the float panels, bit for
 * bit, while a pass reads a quarter or half of the bytes. One run's step
 * (one input) goes four panels at a time: four independent chains of
 * additions, so that their latency does not bound it.
 */

/* The 16 weights at AT (of kind KIND, scales SC and minima MN) into *WT. */
KATTR static inline __attribute__((always_inline)) void KNAME(cweight)(const struct packed *w,
                                                                       size_t at, const int kind,
                                                                       const v16 *sc, const v16 *mn,
                                                                       v16 *wt)
{
	if (kind == CK_I8 || kind == CK_I8_MIN) {
		v16 q;
		KNAME(byte16)(w->i8 + at, &q);
		*wt = kind == CK_I8 ? q * *sc : *sc * q - *mn;
	} else if (kind == CK_F16) {
		KNAME(half16)(w->h16 + at, wt);
	} else {
		const v16u u =
		        __builtin_convertvector(*(const v16s *)(const void *)(w->h16 + at), v16u);
		*wt = (v16)(u << 16);
	}
}

KATTR static inline __attribute__((always_inline)) void
KNAME(ctile)(const struct packed *w, int p, const float *const *x, const int np, const int npan,
             const int kind, float (*res)[MODEL_PANEL])
{
	const size_t cols = (size_t)w->cols;
	const int quant = kind == CK_I8 || kind == CK_I8_MIN;
	const size_t G = quant ? (size_t)w->group : cols, ng = cols / G;
	v16 s[4][MODEL_GROUP];

#pragma GCC unroll 4
	for (int t = 0; t < npan; t++)
#pragma GCC unroll 8
		for (int q = 0; q < np; q++)
			s[t][q] = (v16){0};
	for (size_t g = 0; g < ng; g++) {
		v16 sc[4], mn[4];
#pragma GCC unroll 4
		for (int t = 0; t < npan; t++) {
			const size_t at = (((size_t)p + (size_t)t) * ng + g) * MODEL_PANEL;
			sc[t] = mn[t] = (v16){0};
			if (quant)
				sc[t] = *(const v16a *)(const void *)(w->scale + at);
			if (kind == CK_I8_MIN)
				mn[t] = *(const v16a *)(const void *)(w->min + at);
		}
		for (size_t j = g * G; j < (g + 1) * G; j++) {
#pragma GCC unroll 4
			for (int t = 0; t < npan; t++) {
				const size_t at =
				        (((size_t)p + (size_t)t) * cols + j) * MODEL_PANEL;
				v16 wt;
				KNAME(cweight)(w, at, kind, &sc[t], &mn[t], &wt);
#pragma GCC unroll 8
				for (int q = 0; q < np; q++)
					s[t][q] += wt * x[q][j];
			}
		}
	}
#pragma GCC unroll 4
	for (int t = 0; t < npan; t++)
#pragma GCC unroll 8
		for (int q = 0; q < np; q++)
			*(v16a *)(void *)res[t * MODEL_GROUP + q] = s[t][q];
}

/* Panels at once for NP inputs: four, two or one. */
#define KBIG(NP) ((NP) <= KQUAD ? 4 : (NP) <= KPAIR ? 2 : 1)

#define KCT(K, NP)                                                                              \
	KATTR static void KNAME(ct_##K##_##NP##_1)(                                             \
	        const struct packed *w, int p, const float *const *x, float(*res)[MODEL_PANEL]) \
	{                                                                                       \
		KNAME(ctile)(w, p, x, NP, 1, K, res);                                           \
	}                                                                                       \
	KATTR static void KNAME(ct_##K##_##NP##_b)(                                             \
	        const struct packed *w, int p, const float *const *x, float(*res)[MODEL_PANEL]) \
	{                                                                                       \
		KNAME(ctile)(w, p, x, NP, KBIG(NP), K, res);                                    \
	}
#define KCTS(K) KCT(K, 1) KCT(K, 2) KCT(K, 3) KCT(K, 4) KCT(K, 5) KCT(K, 6) KCT(K, 7) KCT(K, 8)
KCTS(0)
KCTS(1)
KCTS(2)
KCTS(3)
#undef KCTS
#undef KCT

typedef void (*KNAME(ctile_fn))(const struct packed *, int, const float *const *,
                                float (*)[MODEL_PANEL]);
#define KROW(K, B)                                                                           \
	{                                                                                    \
		KNAME(ct_##K##_1_##B), KNAME(ct_##K##_2_##B), KNAME(ct_##K##_3_##B),         \
		        KNAME(ct_##K##_4_##B), KNAME(ct_##K##_5_##B), KNAME(ct_##K##_6_##B), \
		        KNAME(ct_##K##_7_##B), KNAME(ct_##K##_8_##B)                         \
	}
static const KNAME(ctile_fn) KNAME(ctiles)[4][2][MODEL_GROUP] = {
        {KROW(0, 1), KROW(0, b)},
        {KROW(1, 1), KROW(1, b)},
        {KROW(2, 1), KROW(2, b)},
        {KROW(3, 1), KROW(3, b)},
};
#undef KROW

/* The rows of panels [PA, PB) of compact W times the NP inputs X. */
KATTR static void KNAME(panels_c)(const struct packed *w, int pa, int pb, const float *const *x,
                                  float *const *out, int np)
{
	_Alignas(64) float res[4 * MODEL_GROUP][MODEL_PANEL];
	const int kind = w->i8 != NULL          ? (w->min != NULL ? CK_I8_MIN : CK_I8)
	                 : w->qtype == GGML_F16 ? CK_F16
	                                        : CK_BF16;
	const int big = KBIG(np);

	for (int p = pa; p < pb;) {
		const int k = p + big <= pb ? big : 1;
		KNAME(ctiles)[kind][k > 1][np - 1](w, p, x, res);
		for (int t = 0; t < k; t++) {
			const int r0 = (p + t) * MODEL_PANEL;
			const int nr = w->rows - r0 < MODEL_PANEL ? w->rows - r0 : MODEL_PANEL;
			for (int q = 0; q < np; q++)
				memcpy(out[q] + r0, res[t * MODEL_GROUP + q],
				       (size_t)nr * sizeof(float));
		}
		p += k;
	}
}
#undef KBIG
