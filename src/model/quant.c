/*
 * quant: ggml's tensor types turned into float32, row by row, exactly as
 * ggml defines each (model_impl.h, dequant_row).
 *
 * F16 and BF16 are widened exactly. A quantised row is blocks: Q8_0 and
 * Q4_0 hold 32 values and one half-precision scale d (value = d * q, q a
 * signed byte, or a nibble less 8); Q4_K holds 256 values in 8 groups of
 * 32, each with a 6-bit scale and a 6-bit minimum, both times the block's
 * half-precision d and dmin (value = d * sc * q - dmin * m); Q6_K holds
 * 256 values of 6 bits (4 low bits in ql, 2 high in qh, less 32) in 16
 * groups of 16, each with a signed 8-bit scale times the block's d. The
 * products are in ggml's order, float by float, so the values are ggml's
 * to the bit.
 */
#include "h2o/gguf.h"
#include "model_impl.h"

#include <math.h>
#include <string.h>

float model_half(uint16_t h)
{
	const uint32_t sign = (uint32_t)(h >> 15) << 31;
	const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
	uint32_t u;

	if (exp == 0x1f) {
		u = sign | 0x7f800000u | man << 13; /* inf, nan */
	} else if (exp != 0) {
		u = sign | (exp + 112) << 23 | man << 13;
	} else if (man == 0) {
		u = sign;
	} else {
		/* Subnormal: exactly man * 2^-24. */
		const float f = (float)man * 0x1p-24f;
		memcpy(&u, &f, 4);
		u |= sign;
	}
	float f;
	memcpy(&f, &u, 4);
	return f;
}

uint16_t model_le16(const unsigned char *b)
{
	return (uint16_t)(b[0] | b[1] << 8);
}

static void q8_0(const unsigned char *b, float *y, size_t blocks)
{
	for (size_t i = 0; i < blocks; i++, b += 34, y += 32) {
		const float d = model_half(model_le16(b));
		for (int j = 0; j < 32; j++)
			y[j] = (float)(int8_t)b[2 + j] * d;
	}
}

static void q4_0(const unsigned char *b, float *y, size_t blocks)
{
	for (size_t i = 0; i < blocks; i++, b += 18, y += 32) {
		const float d = model_half(model_le16(b));
		for (int j = 0; j < 16; j++) {
			const int x0 = (b[2 + j] & 0x0f) - 8, x1 = (b[2 + j] >> 4) - 8;
			y[j] = (float)x0 * d;
			y[j + 16] = (float)x1 * d;
		}
	}
}

void model_q4k_scale_min(int j, const unsigned char *q, int *d, int *m)
{
	if (j < 4) {
		*d = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*d = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
		*m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
	}
}

static void q4_k(const unsigned char *b, float *y, size_t blocks)
{
	for (size_t i = 0; i < blocks; i++, b += 144) {
		const float d = model_half(model_le16(b)), min = model_half(model_le16(b + 2));
		const unsigned char *scales = b + 4, *q = b + 16;
		for (int j = 0, is = 0; j < 256; j += 64, is += 2, q += 32) {
			int sc, m;
			model_q4k_scale_min(is, scales, &sc, &m);
			const float d1 = d * (float)sc, m1 = min * (float)m;
			model_q4k_scale_min(is + 1, scales, &sc, &m);
			const float d2 = d * (float)sc, m2 = min * (float)m;
			for (int l = 0; l < 32; l++)
				*y++ = d1 * (float)(q[l] & 0x0f) - m1;
			for (int l = 0; l < 32; l++)
				*y++ = d2 * (float)(q[l] >> 4) - m2;
		}
	}
}

static void q6_k(const unsigned char *b, float *y, size_t blocks)
{
	for (size_t i = 0; i < blocks; i++, b += 210) {
		const unsigned char *ql = b, *qh = b + 128;
		const int8_t *sc = (const int8_t *)(b + 192);
		const float d = model_half(model_le16(b + 208));
		for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
			for (int l = 0; l < 32; l++) {
				const int is = l / 16;
				const int q1 = ((ql[l] & 0xf) | ((qh[l] >> 0) & 3) << 4) - 32;
				const int q2 = ((ql[l + 32] & 0xf) | ((qh[l] >> 2) & 3) << 4) - 32;
				const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
				const int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
				y[l] = d * (float)sc[is] * (float)q1;
				y[l + 32] = d * (float)sc[is + 2] * (float)q2;
				y[l + 64] = d * (float)sc[is + 4] * (float)q3;
				y[l + 96] = d * (float)sc[is + 6] * (float)q4;
			}
		}
	}
}

void dequant_row(int type, const unsigned char *src, float *dst, size_t n)
{
	switch ((enum ggml_type)type) {
	case GGML_F32:
		for (size_t j = 0; j < n; j++) {
			const uint32_t u = (uint32_t)src[4 * j] | (uint32_t)src[4 * j + 1] << 8 |
			                   (uint32_t)src[4 * j + 2] << 16 |
			                   (uint32_t)src[4 * j + 3] << 24;
			memcpy(dst + j, &u, 4);
		}
		return;
	case GGML_F16:
		for (size_t j = 0; j < n; j++)
			dst[j] = model_half(model_le16(src + 2 * j));
		return;
	case GGML_BF16:
		for (size_t j = 0; j < n; j++) {
			const uint32_t u = (uint32_t)model_le16(src + 2 * j) << 16;
			memcpy(dst + j, &u, 4);
		}
		return;
	case GGML_Q8_0:
		q8_0(src, dst, n / 32);
		return;
	case GGML_Q4_0:
		q4_0(src, dst, n / 32);
		return;
	case GGML_Q4_K:
		q4_k(src, dst, n / 256);
		return;
	case GGML_Q6_K:
		q6_k(src, dst, n / 256);
		return;
	default:
		memset(dst, 0, n * sizeof *dst); /* the reader refused it before */
		return;
	}
}

void model_row_part(const struct packed *m, int i, size_t c0, size_t cw, float *dst)
{
	if (m->i8 != NULL || m->h16 != NULL) {
		model_compact_row_part(m, i, c0, cw, dst);
		return;
	}
	if (m->q != NULL) {
		const size_t at = c0 / (size_t)ggml_block_elems((uint32_t)m->qtype) *
		                  (size_t)ggml_block_bytes((uint32_t)m->qtype);
		dequant_row(m->qtype, m->q + (size_t)i * m->row_bytes + at, dst, cw);
		return;
	}
	for (size_t j = 0; j < cw; j++)
		dst[j] = packed_at(m, i, (int)(c0 + j));
}

void model_row(const struct packed *m, int i, float *dst)
{
	model_row_part(m, i, 0, (size_t)m->cols, dst);
}
