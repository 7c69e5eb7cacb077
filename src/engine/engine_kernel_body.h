/*
 * engine_kernel_body: the kernels of engine_kernel.c for one vector width.
 *
 * engine_kernel.c includes this file once per instruction set, after
 * defining:
 *   KSUF          the suffix of the functions' names (_avx512, _sse2, ...)
 *   KTARGET       their attributes (a target) or nothing
 *   VW            doubles per vector: 8, 4, 2, or 1 (plain doubles)
 *   V             the vector type (double when VW is 1)
 *   VLOAD(p)      the VW doubles at p, any alignment
 *   VSTORE(p, x)  store them
 *   VMAX(x, m)    lane by lane: x > m ? x : m
 * A vector width must match the instruction set: GCC splits a vector wider
 * than the machine's registers through memory, which is slow.
 *
 * Every kernel keeps eight independent accumulators (eight vectors of VW
 * lanes) in its inner loop, so that eight chains of adds are in flight:
 * with eight lanes per vector that is 64 numbers, with two it is 16. What
 * each lane computes, and in which order, does not depend on VW (see
 * engine_kernel.h); only how many lanes one instruction advances does.
 */

#define KCAT2(a, b) a##b
#define KCAT(a, b)  KCAT2(a, b)
#define FN(name)    KCAT(name, KSUF)
/* Vectors per tile of eight lanes. */
#define NV (KERNEL_LANES / VW)

/* The eight accumulators: X(0) .. X(7). */
#define ACC8(X)     X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define ACC_DECL(c) V a##c = {0};

KTARGET static void FN(slot_logits)(const double *tiles, int ntiles, int dim, const double *q,
                                    double scale, double *out)
{
	const size_t tsz = (size_t)KERNEL_LANES * (size_t)dim;
	/* Eight vectors: 8 / NV tiles. Accumulator c is vector c % NV of
	 * tile t + c / NV. */
	int t = 0;
	for (; t + 8 / NV <= ntiles; t += 8 / NV) {
#define PTR(c) const double *k##c = tiles + (size_t)(t + (c) / NV) * tsz + (size_t)((c) % NV * VW);
		ACC8(PTR)
#undef PTR
		ACC8(ACC_DECL)
		for (int i = 0; i < dim; i++) {
			const double qi = q[i];
			const size_t o = (size_t)i * KERNEL_LANES;
#define STEP(c) a##c += qi * VLOAD(k##c + o);
			ACC8(STEP)
#undef STEP
		}
#define PUT(c) VSTORE(out + (size_t)(t + (c) / NV) * KERNEL_LANES + (c) % NV * VW, scale * a##c);
		ACC8(PUT)
#undef PUT
	}
	for (; t < ntiles; t++) {
		for (int h = 0; h < NV; h++) {
			const double *k = tiles + (size_t)t * tsz + (size_t)(h * VW);
			V a = {0};
			for (int i = 0; i < dim; i++)
				a += q[i] * VLOAD(k + (size_t)i * KERNEL_LANES);
			VSTORE(out + (size_t)t * KERNEL_LANES + (size_t)(h * VW), scale * a);
		}
	}
}

/* One key K against the eight queries of QT: out[r] = scale * dot(q_r, k),
 * a lane per query. */
KTARGET static void FN(key_logits8)(const double *qt, int dim, const double *k, double scale,
                                    double *out)
{
	V a[NV];
	for (int h = 0; h < NV; h++)
		a[h] = (V){0};
	for (int i = 0; i < dim; i++) {
		const double ki = k[i];
		for (int h = 0; h < NV; h++)
			a[h] += VLOAD(qt + (size_t)i * KERNEL_LANES + (size_t)(h * VW)) * ki;
	}
	for (int h = 0; h < NV; h++)
		VSTORE(out + h * VW, scale * a[h]);
}

#define KEY_LOGITS8 FN(key_logits8)

/* The eight queries of QT against key rows 0 .. nrows - 1 of ROWS: out[r *
 * ostride + j] = scale * dot(q_r, row j), a lane per query. Accumulator c
 * is vector c % NV of row j + c / NV, so each vector of queries loaded
 * serves 8 / NV rows; the lanes are stored query by query, where a step
 * reads them. */
KTARGET static void FN(rows_logits8)(const double *rows, int nrows, int dim, const double *qt,
                                     double scale, double *out, size_t ostride)
{
	const size_t d = (size_t)dim;
	int j = 0;
	for (; j + 8 / NV <= nrows; j += 8 / NV) {
#define PTR(c) const double *k##c = rows + (size_t)(j + (c) / NV) * d;
		ACC8(PTR)
#undef PTR
		ACC8(ACC_DECL)
		for (int i = 0; i < dim; i++) {
			const double *qi = qt + (size_t)i * KERNEL_LANES;
#define STEP(c) a##c += VLOAD(qi + (c) % NV * VW) * k##c[i];
			ACC8(STEP)
#undef STEP
		}
#define PUT(c)                                                                                \
	{                                                                                     \
		double t[VW];                                                                 \
		VSTORE(t, scale *a##c);                                                       \
		for (int l = 0; l < VW; l++)                                                  \
			out[(size_t)((c) % NV * VW + l) * ostride + (size_t)(j + (c) / NV)] = \
			        t[l];                                                         \
	}
		ACC8(PUT)
#undef PUT
	}
	for (; j < nrows; j++) {
		double t[KERNEL_LANES];
		KEY_LOGITS8(qt, dim, rows + (size_t)j * d, scale, t);
		for (int r = 0; r < KERNEL_LANES; r++)
			out[(size_t)r * ostride + (size_t)j] = t[r];
	}
}

KTARGET static void FN(gather_out)(const double *w, const int *pos, int len, const double *v,
                                   int dim, double *out)
{
	const size_t d = (size_t)dim;
	int k = 0;
	/* 8 * VW numbers of the output stay in registers while the rows go
	 * by; each number still sums its rows in order. */
	for (; k + 8 * VW <= dim; k += 8 * VW) {
		ACC8(ACC_DECL)
		for (int i = 0; i < len; i++) {
			const double *r = v + (size_t)pos[i] * d + (size_t)k;
			const double wi = w[i];
#define STEP(c) a##c += wi * VLOAD(r + (c)*VW);
			ACC8(STEP)
#undef STEP
		}
#define PUT(c) VSTORE(out + k + (c)*VW, a##c);
		ACC8(PUT)
#undef PUT
	}
	for (; k + VW <= dim; k += VW) {
		V a = {0};
		for (int i = 0; i < len; i++)
			a += w[i] * VLOAD(v + (size_t)pos[i] * d + (size_t)k);
		VSTORE(out + k, a);
	}
	for (; k < dim; k++) {
		double a = 0.0;
		for (int i = 0; i < len; i++)
			a += w[i] * v[(size_t)pos[i] * d + (size_t)k];
		out[k] = a;
	}
}

/* The outputs of eight steps from one pass over the value rows: out[c *
 * dim + k] = sum over u ascending of wt[c * wstride + u] * v[pos[u] * dim +
 * k]. Accumulator c holds one vector of numbers of step c, so each piece
 * of a value row is loaded once for all eight. */
KTARGET static void FN(batch_out)(const double *wt, size_t wstride, const int *pos, int nu,
                                  const double *v, int dim, double *out)
{
	const size_t d = (size_t)dim;
	int k = 0;
	for (; k + VW <= dim; k += VW) {
		ACC8(ACC_DECL)
		for (int u = 0; u < nu; u++) {
			const V x = VLOAD(v + (size_t)pos[u] * d + (size_t)k);
			const double *wu = wt + u;
#define STEP(c) a##c += wu[(c)*wstride] * x;
			ACC8(STEP)
#undef STEP
		}
#define PUT(c) VSTORE(out + (c)*d + (size_t)k, a##c);
		ACC8(PUT)
#undef PUT
	}
	for (; k < dim; k++) {
		double a[KERNEL_LANES] = {0};
		for (int u = 0; u < nu; u++)
			for (int c = 0; c < KERNEL_LANES; c++)
				a[c] += wt[(size_t)c * wstride + (size_t)u] *
				        v[(size_t)pos[u] * d + (size_t)k];
		for (int c = 0; c < KERNEL_LANES; c++)
			out[(size_t)c * d + (size_t)k] = a[c];
	}
}

KTARGET static void FN(group_logits)(const double *qt, int first, int rows, const double *k,
                                     int dim, double scale, double *lt, int j0, int j1, double *m8)
{
	const size_t d = (size_t)dim;
	const int len = first + rows < j1 ? first + rows : j1;
	const int all = first + 1 < len ? first + 1 : len; /* keys every row sees */
	int j = j0;
	/* Eight vectors: 8 / NV keys, each against the eight queries of the
	 * lanes. Accumulator c is vector c % NV of key j + c / NV. */
	for (; j + 8 / NV <= all; j += 8 / NV) {
#define PTR(c) const double *k##c = k + (size_t)(j + (c) / NV) * d;
		ACC8(PTR)
#undef PTR
		ACC8(ACC_DECL)
		for (int i = 0; i < dim; i++) {
			const double *qi = qt + (size_t)i * KERNEL_LANES;
#define STEP(c) a##c += k##c[i] * VLOAD(qi + (c) % NV * VW);
			ACC8(STEP)
#undef STEP
		}
#define PUT(c) VSTORE(lt + (size_t)(j + (c) / NV) * KERNEL_LANES + (c) % NV * VW, scale * a##c);
		ACC8(PUT)
#undef PUT
	}
	for (; j < len; j++) {
		const double *k0 = k + (size_t)j * d;
		for (int h = 0; h < NV; h++) {
			V a = {0};
			for (int i = 0; i < dim; i++)
				a += k0[i] *
				     VLOAD(qt + (size_t)i * KERNEL_LANES + (size_t)(h * VW));
			VSTORE(lt + (size_t)j * KERNEL_LANES + (size_t)(h * VW), scale * a);
		}
	}
	/* The diagonal: row l sees keys up to first + l only. */
	for (j = j0 > first + 1 ? j0 : first + 1; j < len; j++)
		for (int l = 0; l < rows && l < j - first; l++)
			lt[(size_t)j * KERNEL_LANES + (size_t)l] = -INFINITY;
	/* Each lane's max over these keys, in key order: if (x > m) m = x
	 * (the max of kernel_softmax_scores), while they are in the cache. */
	V m[NV];
	for (int h = 0; h < NV; h++)
		m[h] = VLOAD(m8 + h * VW);
	for (j = j0; j < len; j++)
		for (int h = 0; h < NV; h++)
			m[h] = VMAX(VLOAD(lt + (size_t)j * KERNEL_LANES + (size_t)(h * VW)), m[h]);
	for (int h = 0; h < NV; h++)
		VSTORE(m8 + h * VW, m[h]);
}

KTARGET static void FN(group_softmax)(double *lt, int first, int rows, const double *m8, double *w,
                                      size_t stride, double *max, double *sum, double *wsum)
{
	const int len = first + rows;
	/* Lanes past the group's rows: a harmless row of zeros. */
	double mx[KERNEL_LANES];
	for (int l = 0; l < KERNEL_LANES; l++)
		mx[l] = l < rows ? m8[l] : 0.0;
	for (int j = 0; j < len && rows < KERNEL_LANES; j++)
		for (int l = rows; l < KERNEL_LANES; l++)
			lt[(size_t)j * KERNEL_LANES + (size_t)l] = 0.0;
	/* Eight sums, each a chain in key order; a row's keys past its
	 * diagonal add exp(-inf) = 0, which leaves a positive sum as it was. */
	double s8[KERNEL_LANES] = {0};
	engine_exp_lanes(lt, (size_t)len, mx, s8);
	/* The weights, and their own sums in key order (the full cache's
	 * attention recall), past-the-diagonal zeros adding nothing. */
	V s[NV], ws[NV];
	for (int h = 0; h < NV; h++) {
		s[h] = VLOAD(s8 + h * VW);
		ws[h] = (V){0};
	}
	for (int j = 0; j < len; j++) {
		double x[KERNEL_LANES];
		for (int h = 0; h < NV; h++) {
			const V q = VLOAD(lt + (size_t)j * KERNEL_LANES + (size_t)(h * VW)) / s[h];
			ws[h] += q;
			VSTORE(x + h * VW, q);
		}
		for (int l = j > first ? j - first : 0; l < rows; l++)
			w[(size_t)l * stride + (size_t)j] = x[l];
	}
	double ws8[KERNEL_LANES];
	for (int h = 0; h < NV; h++)
		VSTORE(ws8 + h * VW, ws[h]);
	for (int l = 0; l < rows; l++) {
		max[l] = mx[l];
		sum[l] = s8[l];
		wsum[l] = ws8[l];
	}
}

/* One row's outputs, numbers k0 .. k1 - 1, over keys j0 .. j1 - 1, added
 * to OUT. */
KTARGET static inline void FN(out_row_span)(const double *wr, int j0, int j1, const double *v,
                                            int dim, int k0, int k1, double *out)
{
	const size_t d = (size_t)dim;
	int k = k0;
	for (; k + 8 * VW <= k1; k += 8 * VW) {
#define LOAD_OUT(c) V a##c = VLOAD(out + k + (c)*VW);
		ACC8(LOAD_OUT)
#undef LOAD_OUT
		for (int j = j0; j < j1; j++) {
			const double *r = v + (size_t)j * d + (size_t)k;
			const double wj = wr[j];
#define STEP(c) a##c += wj * VLOAD(r + (c)*VW);
			ACC8(STEP)
#undef STEP
		}
#define PUT(c) VSTORE(out + k + (c)*VW, a##c);
		ACC8(PUT)
#undef PUT
	}
	for (; k + VW <= k1; k += VW) {
		V a = VLOAD(out + k);
		for (int j = j0; j < j1; j++)
			a += wr[j] * VLOAD(v + (size_t)j * d + (size_t)k);
		VSTORE(out + k, a);
	}
	for (; k < k1; k++) {
		double a = out[k];
		for (int j = j0; j < j1; j++)
			a += wr[j] * v[(size_t)j * d + (size_t)k];
		out[k] = a;
	}
}

#define OUT_ROW_SPAN FN(out_row_span)

KTARGET static void FN(block_out)(const double *w, size_t stride, int nrows, int len0,
                                  const double *v, int dim, int k0, int k1, double *out,
                                  double *panel)
{
	const size_t d = (size_t)dim;
	for (int r = 0; r < nrows; r++)
		memset(out + (size_t)r * d + (size_t)k0, 0, (size_t)(k1 - k0) * sizeof *out);
	const int lenmax = len0 + nrows - 1, tile = kernel_tile_keys(dim);
	/* Numbers k0 .. kc - 1 in whole chunks of eight (k0 is a multiple of
	 * eight), the rest one by one. */
	const int chunks = (k1 - k0) / KERNEL_LANES, kc = k0 + chunks * KERNEL_LANES;
	for (int j0 = 0; j0 < lenmax; j0 += tile) {
		const int j1 = j0 + tile < lenmax ? j0 + tile : lenmax, nj = j1 - j0;
		/* The tile's value rows, eight numbers of each at a time, one
		 * after another (chunk c of row j at panel + (c * nj + j - j0)
		 * * 8): the row groups below then read them as one stream. */
		for (int j = j0; j < j1; j++)
			for (int c = 0; c < chunks; c++)
				for (int h = 0; h < NV; h++)
					VSTORE(panel +
					               ((size_t)c * (size_t)nj + (size_t)(j - j0)) *
					                       KERNEL_LANES +
					               (size_t)(h * VW),
					       VLOAD(v + (size_t)j * d +
					             (size_t)(k0 + c * KERNEL_LANES + h * VW)));
		int r = 0;
		/* 8 / NV rows at a time share each value chunk they load; over
		 * the keys all of them see, each number sums in key order.
		 * Accumulator c is vector c % NV of row r + c / NV. */
		for (; r + 8 / NV <= nrows; r += 8 / NV) {
			const int common = j1 < len0 + r ? j1 : len0 + r;
#define PTR(c)                                                    \
	const double *w##c = w + (size_t)(r + (c) / NV) * stride; \
	double *o##c = out + (size_t)(r + (c) / NV) * d + (c) % NV * VW;
			ACC8(PTR)
#undef PTR
			for (int ch = 0; ch < chunks; ch++) {
				const size_t k = (size_t)(k0 + ch * KERNEL_LANES);
				const double *pc = panel + (size_t)ch * (size_t)nj * KERNEL_LANES -
				                   (size_t)j0 * KERNEL_LANES;
#define LOAD_OUT(c) V a##c = VLOAD(o##c + k);
				ACC8(LOAD_OUT)
#undef LOAD_OUT
				for (int j = j0; j < common; j++) {
					const double *vj = pc + (size_t)j * KERNEL_LANES;
#define STEP(c) a##c += w##c[j] * VLOAD(vj + (c) % NV * VW);
					ACC8(STEP)
#undef STEP
				}
#define PUT(c) VSTORE(o##c + k, a##c);
				ACC8(PUT)
#undef PUT
			}
			for (int k = kc; k < k1; k++) {
				for (int g = 0; g < 8 / NV; g++) {
					const double *wr = w + (size_t)(r + g) * stride;
					double a = out[(size_t)(r + g) * d + (size_t)k];
					for (int j = j0; j < common; j++)
						a += wr[j] * v[(size_t)j * d + (size_t)k];
					out[(size_t)(r + g) * d + (size_t)k] = a;
				}
			}
			/* The keys of this tile only the longer rows see. */
			const int from = common > j0 ? common : j0;
			for (int g = 1; g < 8 / NV; g++) {
				const int end = j1 < len0 + r + g ? j1 : len0 + r + g;
				OUT_ROW_SPAN(w + (size_t)(r + g) * stride, from, end, v, dim, k0,
				             k1, out + (size_t)(r + g) * d);
			}
		}
		for (; r < nrows; r++) {
			const int end = j1 < len0 + r ? j1 : len0 + r;
			OUT_ROW_SPAN(w + (size_t)r * stride, j0, end, v, dim, k0, k1,
			             out + (size_t)r * d);
		}
	}
}

KTARGET static double FN(max)(const double *x, int len)
{
	/* The max does not depend on the order of comparisons: the values
	 * are never NaN, and never -0 (a logit is ln of a weight in (0, 1]
	 * or a positive scale times a dot product summed from +0). */
	double m = -INFINITY;
	int j = 0;
	if (len >= 2 * VW) {
		V a = VLOAD(x), b = VLOAD(x + VW);
		for (j = 2 * VW; j + 2 * VW <= len; j += 2 * VW) {
			a = VMAX(VLOAD(x + j), a);
			b = VMAX(VLOAD(x + j + VW), b);
		}
		double l[2 * VW];
		VSTORE(l, a);
		VSTORE(l + VW, b);
		for (int i = 0; i < 2 * VW; i++)
			m = l[i] > m ? l[i] : m;
	}
	for (; j < len; j++)
		m = x[j] > m ? x[j] : m;
	return m;
}

KTARGET static int FN(weakest)(const double *x, int from, int to, double *value)
{
	int best = -1;
	double bv = INFINITY;
	int i = from;
#if VW > 1
	if (to - i >= VW) {
		/* Lane by lane: the smallest so far and its index, the later
		 * index on equal values; then across the lanes. */
		VI idx, at;
		for (int l = 0; l < VW; l++)
			idx[l] = i + l;
		V m = VLOAD(x + i);
		at = idx;
		for (i += VW; i + VW <= to; i += VW) {
			idx += VW;
			const V v = VLOAD(x + i);
			const VI le = v <= m;
			m = (V)(((VI)v & le) | ((VI)m & ~le));
			at = (idx & le) | (at & ~le);
		}
		for (int l = 0; l < VW; l++)
			if (best < 0 || m[l] < bv || (m[l] == bv && at[l] > best)) {
				bv = m[l];
				best = (int)at[l];
			}
	}
#endif
	/* The rest come after every lane's indices. */
	for (; i < to; i++)
		if (best < 0 || x[i] <= bv) {
			bv = x[i];
			best = i;
		}
	*value = bv;
	return best;
}

KTARGET static void FN(add)(double *a, const double *b, int len)
{
	int j = 0;
	for (; j + VW <= len; j += VW)
		VSTORE(a + j, VLOAD(a + j) + VLOAD(b + j));
	for (; j < len; j++)
		a[j] += b[j];
}

KTARGET static void FN(sum)(double *out, const double *a, const double *b, int len)
{
	int j = 0;
	for (; j + VW <= len; j += VW)
		VSTORE(out + j, VLOAD(a + j) + VLOAD(b + j));
	for (; j < len; j++)
		out[j] = a[j] + b[j];
}

KTARGET static void FN(div_add)(double *x, int len, double d, const double *prev, double *score)
{
	int j = 0;
	for (; j + VW <= len - 1; j += VW) {
		const V w = VLOAD(x + j) / d;
		VSTORE(x + j, w);
		VSTORE(score + j, VLOAD(prev + j) + w);
	}
	for (; j < len - 1; j++) {
		x[j] /= d;
		score[j] = prev[j] + x[j];
	}
	x[j] /= d;
	score[j] = 0.0 + x[j];
}

KTARGET static void FN(add_quot)(double *a, const double *x, double d, int len)
{
	int j = 0;
	for (; j + VW <= len; j += VW)
		VSTORE(a + j, VLOAD(a + j) + VLOAD(x + j) / d);
	for (; j < len; j++)
		a[j] += x[j] / d;
}

/* Eight vectors of a's at once, each a chain over b in order; then the
 * quadratic form's chain over a in order (engine_kernel.h). */
KTARGET static void FN(quad_forms)(const double *cov, const double *keys, int nkeys, int dim,
                                   double *out)
{
	for (int j = 0; j < nkeys; j++) {
		const double *k = keys + (size_t)j * (size_t)dim;
		double quad = 0.0, t[8 * VW];
		int lo = 0;
		for (; lo + 8 * VW <= dim; lo += 8 * VW) {
			ACC8(ACC_DECL)
			for (int b = 0; b < dim; b++) {
				const double kb = k[b];
				const double *col = cov + (size_t)b * (size_t)dim + lo;
#define STEP(c) a##c += VLOAD(col + (c)*VW) * kb;
				ACC8(STEP)
#undef STEP
			}
#define PUT(c) VSTORE(t + (c)*VW, a##c);
			ACC8(PUT)
#undef PUT
			for (int i = 0; i < 8 * VW; i++)
				quad += k[lo + i] * t[i];
		}
		for (; lo + VW <= dim; lo += VW) {
			V a = {0};
			for (int b = 0; b < dim; b++)
				a += VLOAD(cov + (size_t)b * (size_t)dim + lo) * k[b];
			VSTORE(t, a);
			for (int i = 0; i < VW; i++)
				quad += k[lo + i] * t[i];
		}
		for (; lo < dim; lo++) {
			double s = 0.0;
			for (int b = 0; b < dim; b++)
				s += cov[(size_t)b * (size_t)dim + lo] * k[b];
			quad += k[lo] * s;
		}
		out[j] = quad;
	}
}

/* Eight rows a at once against one vector of b's, each a chain over p in
 * order (engine_kernel.h). A row's b's start at the vector holding its
 * diagonal's neighbourhood, so a few entries below the diagonal are
 * written too, with the very sums of their mirror images. */
KTARGET static void FN(gram_upper)(const double *x, int m, int dim, double *out)
{
	const size_t d = (size_t)dim;
	int r0 = 0;
	for (; r0 + 8 <= dim; r0 += 8) {
		int b0 = r0 / VW * VW;
		for (; b0 + VW <= dim; b0 += VW) {
			ACC8(ACC_DECL)
			for (int p = 0; p < m; p++) {
				const double *row = x + (size_t)p * d;
				const V xb = VLOAD(row + b0);
#define STEP(c) a##c += row[r0 + (c)] * xb;
				ACC8(STEP)
#undef STEP
			}
#define PUT(c) VSTORE(out + (size_t)(r0 + (c)) * d + b0, a##c);
			ACC8(PUT)
#undef PUT
		}
		for (int a = r0; a < r0 + 8; a++)
			for (int b = b0 > a ? b0 : a; b < dim; b++) {
				double s = 0.0;
				for (int p = 0; p < m; p++)
					s += x[(size_t)p * d + (size_t)a] *
					     x[(size_t)p * d + (size_t)b];
				out[(size_t)a * d + (size_t)b] = s;
			}
	}
	for (int a = r0; a < dim; a++)
		for (int b = a; b < dim; b++) {
			double s = 0.0;
			for (int p = 0; p < m; p++)
				s += x[(size_t)p * d + (size_t)a] * x[(size_t)p * d + (size_t)b];
			out[(size_t)a * d + (size_t)b] = s;
		}
}

/* Eight vectors of slots at once, each lane's two chains over r in order
 * (engine_kernel.h); then single vectors, then single slots. */
KTARGET static void FN(ring_stats)(const double *ring, size_t stride, int nslots, const int *order,
                                   int m, double *mean, double *var)
{
	int s = 0;
	for (; s + 8 * VW <= nslots; s += 8 * VW) {
		ACC8(ACC_DECL)
		for (int r = 0; r < m; r++) {
			const double *row = ring + (size_t)order[r] * stride + s;
#define STEP(c) a##c += VLOAD(row + (c)*VW);
			ACC8(STEP)
#undef STEP
		}
#define MEAN(c) const V u##c = a##c / (double)m;
		ACC8(MEAN)
#undef MEAN
#define PUT(c) VSTORE(mean + s + (c)*VW, u##c);
		ACC8(PUT)
#undef PUT
		{
			ACC8(ACC_DECL)
			for (int r = 0; r < m; r++) {
				const double *row = ring + (size_t)order[r] * stride + s;
#define STEP(c)                                            \
	{                                                  \
		const V d##c = VLOAD(row + (c)*VW) - u##c; \
		a##c += d##c * d##c;                       \
	}
				ACC8(STEP)
#undef STEP
			}
#define PUT(c) VSTORE(var + s + (c)*VW, a##c / (double)m);
			ACC8(PUT)
#undef PUT
		}
	}
	for (; s + VW <= nslots; s += VW) {
		V a = {0}, b = {0};
		for (int r = 0; r < m; r++)
			a += VLOAD(ring + (size_t)order[r] * stride + s);
		const V u = a / (double)m;
		for (int r = 0; r < m; r++) {
			const V d = VLOAD(ring + (size_t)order[r] * stride + s) - u;
			b += d * d;
		}
		VSTORE(mean + s, u);
		VSTORE(var + s, b / (double)m);
	}
	for (; s < nslots; s++) {
		double a = 0.0, b = 0.0;
		for (int r = 0; r < m; r++)
			a += ring[(size_t)order[r] * stride + (size_t)s];
		const double u = a / (double)m;
		for (int r = 0; r < m; r++) {
			const double d = ring[(size_t)order[r] * stride + (size_t)s] - u;
			b += d * d;
		}
		mean[s] = u;
		var[s] = b / (double)m;
	}
}

static const struct kernel_set FN(kernels) = {
        .slot_logits = FN(slot_logits),
        .rows_logits8 = FN(rows_logits8),
        .key_logits8 = FN(key_logits8),
        .gather_out = FN(gather_out),
        .batch_out = FN(batch_out),
        .group_logits = FN(group_logits),
        .group_softmax = FN(group_softmax),
        .block_out = FN(block_out),
        .max = FN(max),
        .weakest = FN(weakest),
        .add = FN(add),
        .sum = FN(sum),
        .div_add = FN(div_add),
        .add_quot = FN(add_quot),
        .quad_forms = FN(quad_forms),
        .gram_upper = FN(gram_upper),
        .ring_stats = FN(ring_stats),
};

#undef OUT_ROW_SPAN
#undef KEY_LOGITS8
#undef STEP
#undef ACC_DECL
#undef ACC8
#undef NV
#undef FN
#undef KCAT
#undef KCAT2
