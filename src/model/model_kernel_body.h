/*
 * model_kernel_body: the panel kernel, included by model_kernel.c once per
 * instruction set with KATTR (its target attribute), KNAME(x) (the name
 * with the set's suffix) and KPAIR (up to how many inputs two panels go at
 * once: as many accumulators as the registers hold). Results go through a
 * 64-byte aligned buffer.
 *
 * Lane r of an accumulator sums row r of its panel: acc += w * x[j] for
 * j = 0, 1, ..., a multiply and an add (never fused, -ffp-contract=off),
 * which is what a plain dot product does with that row.
 */

KATTR static inline __attribute__((always_inline)) void
KNAME(tile)(const float *a, size_t cols, const float *const *x, const int np, const int two,
            float (*res)[MODEL_PANEL], int more)
{
	const float *b = a + cols * MODEL_PANEL;
	v16 s0[MODEL_GROUP], s1[MODEL_GROUP];

	/* Unrolled, so that the accumulators stay in registers. MORE: the
	 * sums so far are in RES (the columns before these), else 0. */
#pragma GCC unroll 8
	for (int p = 0; p < np; p++) {
		s0[p] = (v16){0};
		s1[p] = (v16){0};
		if (more) {
			s0[p] = *(const v16a *)(const void *)res[p];
			if (two)
				s1[p] = *(const v16a *)(const void *)res[MODEL_GROUP + p];
		}
	}
	for (size_t j = 0; j < cols; j++) {
		const v16 wa = *(const v16a *)(const void *)(a + j * MODEL_PANEL);
		v16 wb = wa;
		if (two)
			wb = *(const v16a *)(const void *)(b + j * MODEL_PANEL);
#pragma GCC unroll 8
		for (int p = 0; p < np; p++) {
			const float xj = x[p][j];
			s0[p] += wa * xj;
			if (two)
				s1[p] += wb * xj;
		}
	}
#pragma GCC unroll 8
	for (int p = 0; p < np; p++) {
		*(v16a *)(void *)res[p] = s0[p];
		if (two)
			*(v16a *)(void *)res[MODEL_GROUP + p] = s1[p];
	}
}

#define KTILE(NP, TWO)                                                                 \
	KATTR static void KNAME(tile_##NP##_##TWO)(const float *a, size_t cols,        \
	                                           const float *const *x,              \
	                                           float(*res)[MODEL_PANEL], int more) \
	{                                                                              \
		KNAME(tile)(a, cols, x, NP, TWO, res, more);                           \
	}
#define KTILES(NP) KTILE(NP, 0) KTILE(NP, 1)
KTILES(1)
KTILES(2)
KTILES(3)
KTILES(4)
KTILES(5)
KTILES(6)
KTILES(7)
KTILES(8)
#undef KTILES
#undef KTILE

typedef void (*KNAME(tile_fn))(const float *, size_t, const float *const *, float (*)[MODEL_PANEL],
                               int);
static const KNAME(tile_fn) KNAME(tiles)[2][MODEL_GROUP] = {
        {KNAME(tile_1_0), KNAME(tile_2_0), KNAME(tile_3_0), KNAME(tile_4_0), KNAME(tile_5_0),
         KNAME(tile_6_0), KNAME(tile_7_0), KNAME(tile_8_0)},
        {KNAME(tile_1_1), KNAME(tile_2_1), KNAME(tile_3_1), KNAME(tile_4_1), KNAME(tile_5_1),
         KNAME(tile_6_1), KNAME(tile_7_1), KNAME(tile_8_1)},
};

/* The NP outputs of panel P (and P + 1 with TWO) from RES into OUT. */
static inline void KNAME(store)(const struct packed *w, int p, int two, int np,
                                float (*res)[MODEL_PANEL], float *const *out)
{
	for (int t = 0; t <= two; t++) {
		const int r0 = (p + t) * MODEL_PANEL;
		const int nr = w->rows - r0 < MODEL_PANEL ? w->rows - r0 : MODEL_PANEL;
		for (int q = 0; q < np; q++)
			memcpy(out[q] + r0, res[t * MODEL_GROUP + q], (size_t)nr * sizeof(float));
	}
}

/* Panel P's columns [C0, C0 + CW) of quantised W into PAN, packed. */
KATTR static void KNAME(unpack)(const struct packed *w, int p, size_t c0, size_t cw, float *pan)
{
	_Alignas(64) float row[MODEL_CHUNK];

	for (int r = 0; r < MODEL_PANEL; r++) {
		const int i = p * MODEL_PANEL + r;
		if (i < w->rows)
			model_row_part(w, i, c0, cw, row);
		else
			memset(row, 0, cw * sizeof *row);
		for (size_t j = 0; j < cw; j++)
			pan[j * MODEL_PANEL + (size_t)r] = row[j];
	}
}

/* A quantised matrix: each panel MODEL_CHUNK columns at a time, dequantised
 * into the packed layout, the tile going on from the sums of the columns
 * before: the operations of the packed floats, in their order. */
KATTR static void KNAME(panels_q)(const struct packed *w, int pa, int pb, const float *const *x,
                                  float *const *out, int np)
{
	const size_t cols = (size_t)w->cols;
	_Alignas(64) float pan[2 * MODEL_CHUNK * MODEL_PANEL];
	_Alignas(64) float res[2 * MODEL_GROUP][MODEL_PANEL];
	const float *xs[MODEL_GROUP];

	for (int p = pa; p < pb;) {
		const int two = np <= KPAIR && p + 1 < pb;
		for (size_t c0 = 0; c0 < cols; c0 += MODEL_CHUNK) {
			const size_t cw = cols - c0 < MODEL_CHUNK ? cols - c0 : MODEL_CHUNK;
			for (int t = 0; t <= two; t++)
				KNAME(unpack)(w, p + t, c0, cw, pan + (size_t)t * cw * MODEL_PANEL);
			for (int q = 0; q < np; q++)
				xs[q] = x[q] + c0;
			KNAME(tiles)[two][np - 1](pan, cw, xs, res, c0 > 0);
		}
		KNAME(store)(w, p, two, np, res, out);
		p += 1 + two;
	}
}

#include "model_kernel_compact.h"

KATTR static void KNAME(panels)(const struct packed *w, int pa, int pb, const float *const *x,
                                float *const *out, int np)
{
	const size_t cols = (size_t)w->cols;
	_Alignas(64) float res[2 * MODEL_GROUP][MODEL_PANEL];

	if (w->q != NULL) {
		KNAME(panels_q)(w, pa, pb, x, out, np);
		return;
	}
	if (w->i8 != NULL || w->h16 != NULL) {
		KNAME(panels_c)(w, pa, pb, x, out, np);
		return;
	}
	for (int p = pa; p < pb;) {
		const int two = np <= KPAIR && p + 1 < pb;
		KNAME(tiles)[two][np - 1](w->w + (size_t)p * cols * MODEL_PANEL, cols, x, res, 0);
		KNAME(store)(w, p, two, np, res, out);
		p += 1 + two;
	}
}

/*
 * Attention scores of query Q against the N slots of key tiles KT (16 slots
 * a tile, each tile HS rows of 16 lanes): lane t sums q[i] * k_t[i] from
 * i = 0 up and divides by sqrtf(HS), run.c's arithmetic for each slot.
 */
KATTR static void KNAME(scores)(const float *kt, int n, const float *q, int hs, float *att)
{
	const float div = sqrtf((float)hs);
	_Alignas(64) float tmp[MODEL_PANEL];

	for (int t0 = 0; t0 < n; t0 += MODEL_PANEL) {
		const float *tile = kt + (size_t)(t0 / MODEL_PANEL) * (size_t)hs * MODEL_PANEL;
		v16 acc = (v16){0};
		for (int i = 0; i < hs; i++)
			acc += *(const v16a *)(const void *)(tile + (size_t)i * MODEL_PANEL) * q[i];
		acc = acc / div;
		*(v16a *)(void *)tmp = acc;
		const int k = n - t0 < MODEL_PANEL ? n - t0 : MODEL_PANEL;
		memcpy(att + t0, tmp, (size_t)k * sizeof(float));
	}
}

/* OUT[i] = sum over t < N of A[t] * V[t][i] (rows of HS floats), summed
 * from t = 0 up, for each i: lanes over i. */
KATTR static void KNAME(values)(const float *a, const float *v, int n, int hs, float *out)
{
	int i0 = 0;
	for (; i0 + MODEL_PANEL <= hs; i0 += MODEL_PANEL) {
		v16 acc = (v16){0};
		for (int t = 0; t < n; t++)
			acc += *(const v16a *)(const void *)(v + (size_t)t * (size_t)hs +
			                                     (size_t)i0) *
			       a[t];
		memcpy(out + i0, &acc, sizeof acc);
	}
	for (; i0 + MODEL_PANEL / 2 <= hs; i0 += MODEL_PANEL / 2) {
		v8 acc = (v8){0};
		for (int t = 0; t < n; t++)
			acc += *(const v8a *)(const void *)(v + (size_t)t * (size_t)hs +
			                                    (size_t)i0) *
			       a[t];
		memcpy(out + i0, &acc, sizeof acc);
	}
	for (; i0 < hs; i0++) {
		float acc = 0.0f;
		for (int t = 0; t < n; t++)
			acc += a[t] * v[(size_t)t * (size_t)hs + (size_t)i0];
		out[i0] = acc;
	}
}
