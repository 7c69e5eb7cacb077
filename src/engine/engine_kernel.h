/*
 * engine_kernel: the engine's inner loops, vectorised without changing a
 * single bit of what they compute.
 *
 * Every result here is defined by the plain loop in its comment: a dot
 * product summed in index order from 0.0 (engine_logit's order), an output
 * summed in position order, a softmax sum in position order. The kernels
 * only run many such loops side by side (eight dot products in the lanes
 * of one vector, several outputs at once), so each lane performs exactly
 * the IEEE operations of the plain loop, in the same order; the build
 * forbids fused multiply-adds (-ffp-contract=off). Results are therefore
 * identical on every instruction set the functions are cloned for, and
 * identical to the scalar fallback of compilers without vector extensions.
 * This module must never reorder a sum: the timeline recomputes past
 * weights with engine_logit and relies on it.
 */
#ifndef H2O_ENGINE_KERNEL_H
#define H2O_ENGINE_KERNEL_H

#include <stddef.h>

/* Keys are stored in tiles of KERNEL_LANES slots: the key of slot s sits in
 * lane s % KERNEL_LANES of tile s / KERNEL_LANES, one row of lanes per
 * dimension, so tile t is the KERNEL_LANES * dim doubles at
 * tiles + t * KERNEL_LANES * dim. */
#define KERNEL_LANES 8

/* Write key row K (dim numbers) into slot S of TILES. */
void kernel_put_key(double *tiles, int s, const double *k, int dim);

/* out[s] = scale * dot(q, key of slot s) for every slot of the first
 * NTILES tiles, each dot summed as engine_logit sums it. */
void kernel_slot_logits(const double *tiles, int ntiles, int dim, const double *q, double scale,
                        double *out);

/* The logits of KERNEL_LANES queries at once against key rows 0 .. nrows -
 * 1 of ROWS (dim numbers each), each row read once for all of them: QT
 * holds the queries transposed (query r written into slot r of one tile by
 * kernel_put_key), and out[r * ostride + j] = scale * dot(q_r, row j),
 * summed as engine_logit sums it. */
void kernel_rows_logits8(const double *rows, int nrows, int dim, const double *qt, double scale,
                         double *out, size_t ostride);

/* kernel_rows_logits8 of the one row K, into out[0 .. KERNEL_LANES - 1]. */
void kernel_key_logits8(const double *qt, int dim, const double *k, double scale, double *out);

/* out[k] = sum over i ascending of w[i] * v[pos[i] * dim + k], from 0.0. */
void kernel_gather_out(const double *w, const int *pos, int len, const double *v, int dim,
                       double *out);

/* kernel_gather_out of KERNEL_LANES weight rows at once, over the NU
 * positions POS (ascending), each value row read once for all of them:
 * out[c * dim + k] = sum over u ascending of wt[c * wstride + u] *
 * v[pos[u] * dim + k], from 0.0. A row whose weight is 0 at a position
 * adds +0 or -0 to a sum that is +0 or not zero, which changes nothing, so
 * row c equals kernel_gather_out over the positions it weighs. */
void kernel_batch_out(const double *wt, size_t wstride, const int *pos, int nu, const double *v,
                      int dim, double *out);

/*
 * The logits of a group of up to KERNEL_LANES consecutive queries (ROWS of
 * them, at positions first .. first + rows - 1) against the keys each may
 * see, key by key: lt[j * KERNEL_LANES + l] = scale * dot(q_l, k_j) for
 * j <= first + l, and -inf for the keys past row l's diagonal, for the
 * keys j0 <= j < j1 (and j < first + rows). QT holds the queries
 * transposed (kernel_put_key of query l into slot l of one tile). M8
 * carries each lane's max over the keys so far: m8[l] is replaced by each
 * of its logits greater than it, in key order (start it at -inf).
 */
void kernel_group_logits(const double *qt, int first, int rows, const double *k, int dim,
                         double scale, double *lt, int j0, int j1, double *m8);

/* Keys per tile: about 256 KiB of key or value rows of DIM numbers. */
int kernel_tile_keys(int dim);

/*
 * The softmax of kernel_softmax_scores for each row of such a group at
 * once (row l has first + l + 1 keys), given each row's max M8: the
 * weights of row l go to w + l * stride, its max and sum to max[l] and
 * sum[l], and the sum of its weights in key order from 0.0 to wsum[l]. LT
 * is overwritten.
 */
void kernel_group_softmax(double *lt, int first, int rows, const double *m8, double *w,
                          size_t stride, double *max, double *sum, double *wsum);

/* The softmax of one row in place, and the scores after it: m = max x,
 * x[j] = exp(x[j] - m), sum in index order, x[j] /= sum; then score[j] =
 * prev[j] + x[j] for j < len - 1 and score[len - 1] = 0.0 + x[len - 1] (a
 * new entry's score starts at 0), in the same pass as the division.
 * Returns m and the sum through *MAX, *SUM. LEN >= 1. */
void kernel_softmax_scores(double *x, int len, double *max, double *sum, const double *prev,
                           double *score);

/* Outputs of NROWS rows of weights W (stride STRIDE; row r has len0 + r
 * weights): out[r * dim + k] = sum over j ascending of w[r][j] * v[j][k],
 * from 0.0, for the numbers k0 <= k < k1 (k0 a multiple of KERNEL_LANES).
 * PANEL holds kernel_tile_keys(dim) * dim doubles of scratch. */
void kernel_block_out(const double *w, size_t stride, int nrows, int len0, const double *v, int dim,
                      int k0, int k1, double *out, double *panel);

/* a[j] += x[j] / d for j < len. */
void kernel_add_quot(double *a, const double *x, double d, int len);

/* The quadratic forms of NKEYS keys (row j: the DIM numbers at
 * keys + j * dim) under COV (dim x dim, row-major): out[j] = sum over a
 * ascending of k_ja * t_ja, from 0.0, where t_ja = sum over b ascending of
 * cov[b * dim + a] * k_jb, from 0.0 (column a of COV: row a's sums when COV
 * is symmetric bit for bit). */
void kernel_quad_forms(const double *cov, const double *keys, int nkeys, int dim, double *out);

/* The Gram matrix of the M rows of X (DIM numbers each), upper half:
 * out[a * dim + b] = sum over p ascending of x[p * dim + a] *
 * x[p * dim + b], from 0.0, for a <= b < dim. Some entries below the
 * diagonal may be written too, each with its mirror image's value. */
void kernel_gram_upper(const double *x, int m, int dim, double *out);

/* For each slot s < NSLOTS, of the M numbers ring[order[r] * stride + s]
 * (r = 0 .. m - 1): their mean, summed over r ascending from 0.0 and
 * divided by M, into mean[s], and the mean of their squared deviations
 * from it, (x - mean)(x - mean) summed the same way and divided by M, into
 * var[s]. */
void kernel_ring_stats(const double *ring, size_t stride, int nslots, const int *order, int m,
                       double *mean, double *var);

/* The variants of engine_kernel_select (h2o/engine.h), widest first:
 * portable is SSE2 or another machine's 128-bit vectors ("vec2"), or
 * plain C with compilers without vector extensions ("plain"). */
enum kernel_variant { KERNEL_AVX512, KERNEL_AVX2, KERNEL_PORTABLE, KERNEL_VARIANTS };

/* The instruction set the kernels use in this process: "avx512", "avx2",
 * "vec2" or "plain". */
const char *kernel_isa(void);

/* The index of the smallest of x[from .. to - 1], the later index on equal
 * values (-1 when the range is empty), and that value in *VALUE. The
 * values must not be NaN. */
int kernel_weakest(const double *x, int from, int to, double *value);

/* a[j] += b[j] for j < len. */
void kernel_add(double *a, const double *b, int len);
/* out[j] = a[j] + b[j], j < len (OUT may be neither A nor B). */
void kernel_sum(double *out, const double *a, const double *b, int len);

#endif
