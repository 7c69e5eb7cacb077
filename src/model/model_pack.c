/*
 * model_pack: the compact forms of a quantised or half-precision matrix
 * (model_impl.h, struct packed), what the kernels read instead of floats.
 *
 * A pass reads every weight once; as floats that is 4 bytes a weight,
 * which the memory's bandwidth makes the bound of one run's step. Packed
 * as signed bytes (Q8_0, Q4_0, Q4_K, Q6_K: their quants, each between
 * -32 and 127) with a float scale per group of a panel's row, or as
 * halves (F16, BF16), a pass reads 1.1 or 2 bytes a weight, and the
 * kernel makes each weight's float in its registers with the operations
 * ggml's dequantisation does (quant.c): the float (int) q times the
 * block's scale, or scale * q - min for Q4_K, or the half widened. So
 * every form gives the same floats and the products the same bits.
 */
#include "h2o/gguf.h"
#include "model_impl.h"

#include <stdlib.h>
#include <string.h>

/* Columns a scale covers in type TYPE's compact form. */
static int group_of(int type)
{
	return type == GGML_Q6_K ? 16 : 32;
}

int model_compact_type(int type)
{
	switch ((enum ggml_type)type) {
	case GGML_Q8_0:
	case GGML_Q4_0:
	case GGML_Q4_K:
	case GGML_Q6_K:
	case GGML_F16:
	case GGML_BF16:
		return 1;
	default:
		return 0;
	}
}

static uint64_t up16(uint64_t floats)
{
	return (floats + 15) / 16 * 16;
}

/* The floats' worth of the bytes, scales and mins of the I8 form. */
static void i8_parts(int type, int rows, int cols, uint64_t *bytes, uint64_t *scales,
                     uint64_t *mins)
{
	const uint64_t n = (uint64_t)packed_panels(rows) * (uint64_t)cols * MODEL_PANEL;
	*bytes = up16((n + 3) / 4);
	*scales = up16(n / (uint64_t)group_of(type));
	*mins = type == GGML_Q4_K ? *scales : 0;
}

uint64_t model_compact_floats(int type, int rows, int cols)
{
	if (type == GGML_F16 || type == GGML_BF16)
		return up16(((uint64_t)packed_panels(rows) * (uint64_t)cols * MODEL_PANEL + 1) / 2);
	uint64_t b, s, m;
	i8_parts(type, rows, cols, &b, &s, &m);
	return b + s + m;
}

/* One row of COLS values of type TYPE at B: its quants Q, and per group
 * its scale SC and minimum MN (Q4_K), each as quant.c computes them. */
static void decode_row(int type, const unsigned char *b, int cols, int8_t *q, float *sc, float *mn)
{
	if (type == GGML_Q8_0 || type == GGML_Q4_0) {
		const int bytes = type == GGML_Q8_0 ? 34 : 18;
		for (int k = 0; k < cols / 32; k++, b += bytes, q += 32) {
			sc[k] = model_half(model_le16(b));
			for (int j = 0; j < 32; j++)
				q[j] = type == GGML_Q8_0 ? (int8_t)b[2 + j]
				       : j < 16          ? (int8_t)((b[2 + j] & 0x0f) - 8)
				                         : (int8_t)((b[2 + j - 16] >> 4) - 8);
		}
		return;
	}
	if (type == GGML_Q4_K) {
		for (int k = 0; k < cols / 256; k++, b += 144) {
			const float d = model_half(model_le16(b)),
			            dmin = model_half(model_le16(b + 2));
			for (int g = 0; g < 8; g++, q += 32) {
				int s, m;
				model_q4k_scale_min(g, b + 4, &s, &m);
				sc[8 * k + g] = d * (float)s;
				mn[8 * k + g] = dmin * (float)m;
				const unsigned char *qs = b + 16 + 32 * (g / 2);
				for (int l = 0; l < 32; l++)
					q[l] = (int8_t)(g % 2 == 0 ? qs[l] & 0x0f : qs[l] >> 4);
			}
		}
		return;
	}
	/* Q6_K: value v of a half of 128 is quarter v / 32, lane v % 32;
	 * its scale is the block's 16-group (v / 16 within the block). */
	for (int k = 0; k < cols / 256; k++, b += 210) {
		const float d = model_half(model_le16(b + 208));
		for (int g = 0; g < 16; g++)
			sc[16 * k + g] = d * (float)(int8_t)b[192 + g];
		for (int n = 0; n < 2; n++, q += 128) {
			const unsigned char *ql = b + 64 * n, *qh = b + 128 + 32 * n;
			for (int l = 0; l < 32; l++) {
				q[l] = (int8_t)(((ql[l] & 0xf) | ((qh[l] >> 0) & 3) << 4) - 32);
				q[l + 32] =
				        (int8_t)(((ql[l + 32] & 0xf) | ((qh[l] >> 2) & 3) << 4) -
				                 32);
				q[l + 64] = (int8_t)(((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32);
				q[l + 96] = (int8_t)(((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) -
				                     32);
			}
		}
	}
}

static void pack_halves(const unsigned char *src, size_t row_bytes, int rows, int cols, float *dst,
                        struct packed *m)
{
	uint16_t *h = (uint16_t *)(void *)dst;
	m->h16 = h;
	for (int p = 0; p < packed_panels(rows); p++)
		for (int r = 0; r < MODEL_PANEL; r++) {
			const int i = p * MODEL_PANEL + r;
			const unsigned char *row = src + (size_t)i * row_bytes;
			uint16_t *col = h + (size_t)p * (size_t)cols * MODEL_PANEL + (size_t)r;
			for (int j = 0; j < cols; j++)
				col[(size_t)j * MODEL_PANEL] =
				        i < rows ? model_le16(row + 2 * j) : 0;
		}
}

int model_pack_compact(int type, const unsigned char *src, size_t row_bytes, int rows, int cols,
                       float *dst, struct packed *m)
{
	memset(m, 0, sizeof *m);
	m->rows = rows;
	m->cols = cols;
	m->qtype = type;
	if (type == GGML_F16 || type == GGML_BF16) {
		pack_halves(src, row_bytes, rows, cols, dst, m);
		return 0;
	}
	uint64_t nb, ns, nm;
	i8_parts(type, rows, cols, &nb, &ns, &nm);
	const int G = group_of(type), ng = cols / G;
	int8_t *i8 = (int8_t *)(void *)dst;
	float *scale = dst + nb, *min = nm > 0 ? dst + nb + ns : NULL;
	m->i8 = i8;
	m->scale = scale;
	m->min = min;
	m->group = G;
	/* One row decoded at a time. */
	int8_t *q = malloc((size_t)cols);
	float *sc = calloc((size_t)ng, sizeof *sc), *mn = calloc((size_t)ng, sizeof *mn);
	if (q == NULL || sc == NULL || mn == NULL) {
		free(q);
		free(sc);
		free(mn);
		return -1;
	}
	for (int p = 0; p < packed_panels(rows); p++)
		for (int r = 0; r < MODEL_PANEL; r++) {
			const int i = p * MODEL_PANEL + r;
			if (i < rows) {
				decode_row(type, src + (size_t)i * row_bytes, cols, q, sc, mn);
			} else {
				memset(q, 0, (size_t)cols);
				memset(sc, 0, (size_t)ng * sizeof *sc);
				memset(mn, 0, (size_t)ng * sizeof *mn);
			}
			int8_t *col = i8 + (size_t)p * (size_t)cols * MODEL_PANEL + (size_t)r;
			for (int j = 0; j < cols; j++)
				col[(size_t)j * MODEL_PANEL] = q[j];
			const size_t at = (size_t)p * (size_t)ng * MODEL_PANEL + (size_t)r;
			for (int g = 0; g < ng; g++) {
				scale[at + (size_t)g * MODEL_PANEL] = sc[g];
				if (min != NULL)
					min[at + (size_t)g * MODEL_PANEL] = mn[g];
			}
		}
	free(q);
	free(sc);
	free(mn);
	return 0;
}

/* Columns [C0, C0 + CW) of row I of compact M into DST, each weight the
 * float the kernels make of it. */
void model_compact_row_part(const struct packed *m, int i, size_t c0, size_t cw, float *dst)
{
	const size_t p = (size_t)(i / MODEL_PANEL), r = (size_t)(i % MODEL_PANEL);
	const size_t base = p * (size_t)m->cols * MODEL_PANEL + r;
	if (m->h16 != NULL) {
		for (size_t j = 0; j < cw; j++) {
			const uint16_t h = m->h16[base + (c0 + j) * MODEL_PANEL];
			if (m->qtype == GGML_F16) {
				dst[j] = model_half(h);
			} else {
				const uint32_t u = (uint32_t)h << 16;
				memcpy(dst + j, &u, 4);
			}
		}
		return;
	}
	const size_t ng = (size_t)(m->cols / m->group);
	for (size_t j = 0; j < cw; j++) {
		const size_t g = (c0 + j) / (size_t)m->group;
		const size_t at = (p * ng + g) * MODEL_PANEL + r;
		const float q = (float)m->i8[base + (c0 + j) * MODEL_PANEL];
		dst[j] = m->min != NULL ? m->scale[at] * q - m->min[at] : q * m->scale[at];
	}
}
