/*
 * engine_full: the full cache (see engine.c's header).
 *
 * Its rows do not depend on any other cache, so it computes a block of
 * future steps at once and hands them out one by one; a lazy one (the
 * timeline's) adds a block's weights to its scores only when asked.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_impl.h"
#include "h2o/engine_replay.h"
#include "h2o/scene.h"

/* The weights of a block of full-cache steps stay within this many bytes
 * (rows * n doubles; the logits take as many again), and a block has at
 * most BLOCK_MAX_ROWS rows. Each block reads every key and value row once,
 * so on a long scene the block is what makes the full cache wait for
 * memory or not: at 100,000 tokens, dim 64, 40 rows (32 MiB) ran 2,500
 * steps/s, 80 rows 3,400 and 128 rows 3,900. */
#define BLOCK_BYTES    (128.0 * 1024 * 1024)
#define BLOCK_MAX_ROWS 128

void full_done(struct full *f)
{
	free(f->score);
	free(f->iota);
	free(f->w);
	free(f->out);
	free(f->max);
	free(f->sum);
	free(f->wsum);
	free(f->qt);
	free(f->lt);
	for (int i = 0; i < 2; i++) {
		free(f->gmax[i]);
		free(f->panel[i]);
	}
}

int full_rows_of(const struct scene *sc, int block_rows)
{
	double rows = BLOCK_BYTES / ((double)sc->n * sizeof(double));
	rows = block_rows > 0 ? block_rows : rows;
	rows = rows < 1 ? 1 : rows > BLOCK_MAX_ROWS ? BLOCK_MAX_ROWS : rows;
	return min_int((int)rows, sc->n);
}

bool full_init(struct full *f, const struct scene *sc, int block_rows)
{
	const size_t n = (size_t)sc->n, dim = (size_t)sc->dim;
	f->rows = full_rows_of(sc, block_rows);
	/* Whole groups of eight rows: a group's logits, n keys of eight
	 * lanes, are kept in its rows before its softmax. */
	const size_t wrows = ((size_t)f->rows + KERNEL_LANES - 1) / KERNEL_LANES * KERNEL_LANES;
	f->score = malloc(n * sizeof *f->score);
	f->iota = malloc(n * sizeof *f->iota);
	f->w = malloc(wrows * n * sizeof *f->w);
	f->out = malloc((size_t)f->rows * dim * sizeof *f->out);
	f->max = malloc((size_t)f->rows * sizeof *f->max);
	f->sum = malloc((size_t)f->rows * sizeof *f->sum);
	f->wsum = malloc((size_t)f->rows * sizeof *f->wsum);
	f->qt = calloc(wrows * dim, sizeof *f->qt);
	f->lt = malloc(wrows * n * sizeof *f->lt);
	bool ok = f->score && f->iota && f->w && f->out && f->max && f->sum && f->wsum && f->qt &&
	          f->lt;
	for (int i = 0; i < 2 && ok; i++) {
		f->gmax[i] = malloc(wrows * sizeof *f->gmax[i]);
		f->panel[i] = malloc((size_t)kernel_tile_keys(sc->dim) * dim * sizeof *f->panel[i]);
		ok = f->gmax[i] && f->panel[i];
	}
	if (!ok)
		return false;
	for (int i = 0; i < sc->n; i++)
		f->iota[i] = i;
	return true;
}

/*
 * A block of steps goes in three phases, each split between two threads
 * when the block is large enough: the logits (split by keys: each thread
 * reads half of K, every logit is one dot product), the softmax of each
 * row (split by rows: a row's max and sum are chains in key order), and
 * the outputs (split by the output's numbers: each reads half of every
 * value row, and each number sums its keys in order). Every number is
 * computed by one thread in one order, however the work is split.
 */
enum phase { PHASE_LOGITS, PHASE_SOFTMAX, PHASE_OUTPUT };

/* Part PART of PARTS (1 or 2) of phase PH of the block at f->first. */
static void full_phase(const struct engine *e, enum phase ph, int part, int parts)
{
	const struct scene *sc = e->sc;
	const struct full *f = &e->f;
	const int first = f->first, count = f->count,
	          groups = (count + KERNEL_LANES - 1) / KERNEL_LANES;
	const size_t n = (size_t)sc->n, dim = (size_t)sc->dim, lanes = KERNEL_LANES;
	/* Groups of eight rows: the first half of them, or the rest. */
	const int gh = parts == 1 ? groups : (groups + 1) / 2;
	const int g0 = part == 0 ? 0 : gh, g1 = part == 0 ? gh : groups;
	switch (ph) {
	case PHASE_LOGITS: {
		double *gmax = f->gmax[part];
		for (int i = 0; i < groups * KERNEL_LANES; i++)
			gmax[i] = -INFINITY;
		/* Every group's logits of one tile of keys are computed while
		 * the tile is in the cache: the keys are read once per block. */
		if (sc->mode == SCENE_VECTOR) {
			const int keys = first + count, tile = 2 * kernel_tile_keys(sc->dim);
			const int split = parts == 1 ? keys : (keys / 2 + tile - 1) / tile * tile;
			const int k0 = part == 0 ? 0 : split, k1 = part == 0 ? split : keys;
			for (int j0 = k0; j0 < k1 && !cancelled(e); j0 += tile)
				for (int g = 0; g < groups; g++)
					kernel_group_logits(
					        f->qt + (size_t)g * lanes * dim,
					        first + g * KERNEL_LANES,
					        min_int(KERNEL_LANES, count - g * KERNEL_LANES),
					        sc->k, sc->dim, sc->scale,
					        f->lt + (size_t)g * lanes * n, j0,
					        min_int(j0 + tile, k1), gmax + g * KERNEL_LANES);
			break;
		}
		for (int g = g0; g < g1; g++) {
			const int rows = min_int(KERNEL_LANES, count - g * KERNEL_LANES);
			const int pos = first + g * KERNEL_LANES;
			double *lt = f->lt + (size_t)g * lanes * n, *m = gmax + g * KERNEL_LANES;
			for (int j = 0; j < pos + rows; j++) {
				for (int l = 0; l < rows; l++) {
					const double x =
					        j <= pos + l
					                ? log(sc->attn[scene_attn_offset(pos + l) +
					                               (size_t)j])
					                : -INFINITY;
					lt[(size_t)j * lanes + (size_t)l] = x;
					if (x > m[l])
						m[l] = x;
				}
			}
		}
		break;
	}
	case PHASE_SOFTMAX:
		for (int g = g0; g < g1; g++) {
			const int r = g * KERNEL_LANES, rows = min_int(KERNEL_LANES, count - r);
			/* Each lane's max: the first part's keys come first, the
			 * second's replace it only when greater, as one scan over
			 * all of them would. */
			double m8[KERNEL_LANES];
			for (int l = 0; l < KERNEL_LANES; l++) {
				const double a = f->gmax[0][r + l], b = f->gmax[1][r + l];
				m8[l] = b > a ? b : a;
			}
			kernel_group_softmax(f->lt + (size_t)r * n, first + r, rows, m8,
			                     f->w + (size_t)r * n, n, f->max + r, f->sum + r,
			                     f->wsum + r);
		}
		break;
	case PHASE_OUTPUT: {
		const int kh = parts == 1 ? sc->dim : sc->dim / 2 / KERNEL_LANES * KERNEL_LANES;
		kernel_block_out(f->w, n, count, first + 1, sc->v, sc->dim, part == 0 ? 0 : kh,
		                 part == 0 ? kh : sc->dim, f->out, f->panel[part]);
		break;
	}
	}
}

struct phase_job {
	const struct engine *e;
	enum phase ph;
};

static void phase_part(void *arg, int part)
{
	const struct phase_job *job = arg;
	full_phase(job->e, job->ph, part, 2);
}

/* Phase PH in two parts, on two threads when the helper is free (TWO), or
 * in one. */
static void run_phase(struct engine *e, enum phase ph, bool two)
{
	if (!two) {
		full_phase(e, ph, 0, 1);
		return;
	}
	struct phase_job job = {e, ph};
	pool_run_two(&e->h, phase_part, &job);
}

/* Compute the block of steps that starts at position FIRST. */
static void full_block(struct engine *e, int first)
{
	const struct scene *sc = e->sc;
	struct full *f = &e->f;
	const int count = min_int(f->rows, sc->n - first);
	f->first = first;
	f->count = count;
	if (sc->mode == SCENE_VECTOR) {
		const size_t dim = (size_t)sc->dim;
		const size_t groups = ((size_t)count + KERNEL_LANES - 1) / KERNEL_LANES;
		memset(f->qt, 0, groups * KERNEL_LANES * dim * sizeof *f->qt);
		for (int r = 0; r < count; r++)
			kernel_put_key(f->qt, r, sc->q + (size_t)(first + r) * dim, sc->dim);
	}
	const bool two = (long)count * (first + count) * sc->dim >= THREAD_MIN_WORK;
	/* A part that does not run leaves its maxima at -inf. */
	for (int i = 0; i < (count + KERNEL_LANES - 1) / KERNEL_LANES * KERNEL_LANES; i++)
		f->gmax[1][i] = -INFINITY;
	run_phase(e, PHASE_LOGITS, two);
	if (cancelled(e))
		return; /* the block is never read */
	run_phase(e, PHASE_SOFTMAX, two && count > KERNEL_LANES);
	if (sc->v && !cancelled(e))
		run_phase(e, PHASE_OUTPUT, two && sc->dim >= 2 * KERNEL_LANES);
}

/* Spec §2 steps 1-5 for the full cache, from the block's row of P. */
struct add_job {
	const struct engine *e;
	int from, to; /* steps */
};

/* Part PART of 2 of adding the rows of steps from + 1 .. to (in the block)
 * to the scores: keys split in two, each key's weights added in step order
 * a tile of keys at a time, so the tile stays in the cache. */
static void add_part(void *arg, int part)
{
	const struct add_job *job = arg;
	const struct full *f = &job->e->f;
	const size_t n = (size_t)job->e->sc->n;
	const int keys = job->to, half = keys / 2 / 1024 * 1024;
	const int k0 = part == 0 ? 0 : half, k1 = part == 0 ? half : keys;
	for (int j0 = k0; j0 < k1; j0 += 2048) {
		const int j1 = min_int(j0 + 2048, k1);
		for (int s = job->from + 1; s <= job->to; s++) {
			/* Step s adds its weights over positions 0 .. s - 1. */
			const int end = min_int(j1, s);
			if (end > j0)
				kernel_add(f->score + j0,
				           f->w + (size_t)(s - 1 - f->first) * n + j0, end - j0);
		}
	}
}

/* Bring a lazy full cache's scores up to its last step. */
static void full_catch_up(struct engine *e)
{
	struct full *f = &e->f;
	if (!f->lazy || f->added >= f->len)
		return;
	/* Positions that arrived since score 0 before their first weight. */
	for (int p = f->added; p < f->len; p++)
		f->score[p] = 0.0;
	struct add_job job = {e, f->added, f->len};
	if ((long)(f->len - f->added) * f->len >= THREAD_MIN_WORK)
		pool_run_two(&e->h, add_part, &job);
	else
		for (int part = 0; part < 2; part++)
			add_part(&job, part);
	f->added = f->len;
}

void engine_lazy_full(struct engine *e)
{
	/* Before the first step: a step computed ahead may have taken the
	 * full cache's scores as they are step by step (alias_score). */
	assert(e->t == 0 && e->live == 0);
	e->f.lazy = true;
	e->f.added = e->f.len;
}

void engine_sync_full(struct engine *e)
{
	full_catch_up(e);
}

void full_reach(struct engine *e, int p)
{
	struct full *f = &e->f;
	if (!full_holds(f, p)) {
		/* The old block's rows go into the scores before it is gone. */
		full_catch_up(e);
		full_block(e, p);
	}
}

void full_step(struct engine *e, int p, struct cache_record *r)
{
	struct full *f = &e->f;
	full_reach(e, p);
	const int row = p - f->first;
	const double *w = f->w + (size_t)row * (size_t)e->sc->n;
	f->len = p + 1;
	if (!f->lazy) {
		f->score[p] = 0.0;
		kernel_add(f->score, w, f->len);
	}
	*r = (struct cache_record){
	        .n_attended = f->len,
	        .attended = f->iota,
	        .attn = w,
	        .group_attn = w,
	        .scores = f->lazy ? NULL : f->score,
	        .max = f->max[row],
	        .sum = f->sum[row],
	        .cutoff_pos = -1,
	        .out = e->sc->v ? f->out + (size_t)row * (size_t)e->sc->dim : NULL,
	};
}
