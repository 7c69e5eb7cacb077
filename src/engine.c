/*
 * engine: spec §2, one step at a time, for the H2O cache and the full cache.
 *
 * Both caches are kept in ascending position order, so "the recent newest
 * positions" are the tail of the H2O arrays and every sum runs in position
 * order. The order of floating-point operations is part of the contract
 * with the timeline: engine_logit and the softmax normalisers in the step
 * record let the timeline recompute any past weight bit for bit.
 */
#include "h2o/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/scene.h"

struct engine {
	const struct scene *sc;
	int heavy, recent;
	int cap; /* heavy + recent + 1: the most H ever holds */
	int t;   /* steps done */

	/* The H2O cache. */
	int h_len;
	int *h_pos;
	double *h_score;

	/* The full cache: positions 0..t-1, so only its scores are state. */
	double *f_score;

	/* The last step's record and the arrays it points into. */
	int *att_pos;
	double *att_w, *att_score;
	unsigned char *gone; /* eviction marks, one per H entry */
	int *ev_pos_buf;
	double *ev_score_buf;
	double *f_w;
	double *out_h, *out_f;
};

static double dot(const double *a, const double *b, int n)
{
	double s = 0.0;
	for (int i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

double engine_logit(const struct scene *sc, int q, int j)
{
	if (sc->mode == SCENE_ATTENTION)
		return log(sc->attn[scene_attn_offset(q) + (size_t)j]);
	const size_t d = (size_t)sc->dim;
	return sc->scale * dot(sc->q + (size_t)q * d, sc->k + (size_t)j * d, sc->dim);
}

struct engine *engine_new(const struct scene *sc, int heavy, int recent)
{
	struct engine *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->sc = sc;
	e->heavy = heavy;
	e->recent = recent;
	/* A budget at least as large as the scene never evicts: cap the
	 * arrays at n + 1 rather than trusting a huge budget. */
	long cap = (long)heavy + recent + 1;
	if (cap > (long)sc->n + 1)
		cap = sc->n + 1;
	e->cap = (int)cap;
	const size_t c = (size_t)e->cap, n = (size_t)sc->n, d = (size_t)sc->dim;
	e->h_pos = malloc(c * sizeof *e->h_pos);
	e->h_score = malloc(c * sizeof *e->h_score);
	e->att_pos = malloc(c * sizeof *e->att_pos);
	e->att_w = malloc(c * sizeof *e->att_w);
	e->att_score = malloc(c * sizeof *e->att_score);
	e->ev_pos_buf = malloc(c * sizeof *e->ev_pos_buf);
	e->ev_score_buf = malloc(c * sizeof *e->ev_score_buf);
	e->gone = malloc(c);
	e->f_score = calloc(n, sizeof *e->f_score);
	e->f_w = malloc(n * sizeof *e->f_w);
	e->out_h = malloc(d * sizeof *e->out_h);
	e->out_f = malloc(d * sizeof *e->out_f);
	if (!e->h_pos || !e->h_score || !e->att_pos || !e->att_w || !e->att_score ||
	    !e->ev_pos_buf || !e->ev_score_buf || !e->gone || !e->f_score || !e->f_w || !e->out_h ||
	    !e->out_f) {
		engine_free(e);
		return NULL;
	}
	return e;
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	free(e->h_pos);
	free(e->h_score);
	free(e->att_pos);
	free(e->att_w);
	free(e->att_score);
	free(e->ev_pos_buf);
	free(e->ev_score_buf);
	free(e->gone);
	free(e->f_score);
	free(e->f_w);
	free(e->out_h);
	free(e->out_f);
	free(e);
}

int engine_step_count(const struct engine *e)
{
	return e->t;
}

int engine_heavy(const struct engine *e)
{
	return e->heavy;
}

int engine_recent(const struct engine *e)
{
	return e->recent;
}

int engine_h2o_len(const struct engine *e)
{
	return e->h_len;
}

const int *engine_h2o_positions(const struct engine *e)
{
	return e->h_pos;
}

const double *engine_h2o_scores(const struct engine *e)
{
	return e->h_score;
}

int engine_h2o_recent_len(const struct engine *e)
{
	return e->recent < e->h_len ? e->recent : e->h_len;
}

const double *engine_full_scores(const struct engine *e)
{
	return e->f_score;
}

/*
 * Spec §2 steps 2-4 over one cache: logits of query P against POS[0..len),
 * softmax into W, and the output into OUT (when the scene has values).
 * Returns the max logit and the sum of exponentials through *MAX, *SUM.
 */
static void attend(const struct scene *sc, int p, const int *pos, int len, double *w, double *out,
                   double *max, double *sum)
{
	double m = -INFINITY;
	for (int i = 0; i < len; i++) {
		w[i] = engine_logit(sc, p, pos ? pos[i] : i);
		if (w[i] > m)
			m = w[i];
	}
	double s = 0.0;
	for (int i = 0; i < len; i++) {
		w[i] = exp(w[i] - m);
		s += w[i];
	}
	for (int i = 0; i < len; i++)
		w[i] /= s;
	*max = m;
	*sum = s;
	if (!sc->v)
		return;
	const size_t d = (size_t)sc->dim;
	memset(out, 0, d * sizeof *out);
	for (int i = 0; i < len; i++) {
		const double *v = sc->v + (size_t)(pos ? pos[i] : i) * d;
		for (size_t c = 0; c < d; c++)
			out[c] += w[i] * v[c];
	}
}

/* Index, among the first CANDIDATES entries of the H2O cache that are not
 * yet marked, of the one to evict next: the lowest score, and on a tie the
 * higher position (the lower one is kept). */
static int weakest(const struct engine *e, int candidates, const unsigned char *gone)
{
	int best = -1;
	for (int i = 0; i < candidates; i++) {
		if (gone[i])
			continue;
		/* Ascending positions: on a tie, a later index is the higher
		 * position, so <= moves to it. */
		if (best < 0 || e->h_score[i] <= e->h_score[best])
			best = i;
	}
	return best;
}

/* Spec §2 step 6: evict from H down to heavy + recent. */
static void evict(struct engine *e, struct step_record *rec)
{
	rec->n_evicted = 0;
	rec->cutoff_pos = -1;
	rec->cutoff_score = 0.0;
	const int budget = e->heavy + e->recent;
	if (e->h_len <= budget)
		return;
	const int candidates = e->h_len - e->recent; /* the rest are protected */
	const int remove = candidates - e->heavy;
	unsigned char *gone = e->gone;
	memset(gone, 0, (size_t)e->h_len);
	for (int r = 0; r < remove; r++)
		gone[weakest(e, candidates, gone)] = 1;
	if (e->heavy > 0) {
		int cut = weakest(e, candidates, gone);
		rec->cutoff_pos = e->h_pos[cut];
		rec->cutoff_score = e->h_score[cut];
	}
	int kept = 0, n_ev = 0;
	for (int i = 0; i < e->h_len; i++) {
		if (gone[i]) {
			e->ev_pos_buf[n_ev] = e->h_pos[i];
			e->ev_score_buf[n_ev] = e->h_score[i];
			n_ev++;
			continue;
		}
		e->h_pos[kept] = e->h_pos[i];
		e->h_score[kept] = e->h_score[i];
		kept++;
	}
	e->h_len = kept;
	rec->n_evicted = n_ev;
}

static double norm(const double *a, int n)
{
	return sqrt(dot(a, a, n));
}

static void measure(const struct engine *e, struct step_record *rec)
{
	const struct scene *sc = e->sc;
	struct step_metrics *m = &rec->m;
	m->tokens_h = e->h_len;
	m->tokens_f = rec->pos + 1;
	m->kv_h = (long)m->tokens_h * 2 * sc->dim;
	m->kv_f = (long)m->tokens_f * 2 * sc->dim;
	double recall = 0.0;
	for (int i = 0; i < rec->n_attended; i++)
		recall += e->f_w[rec->attended[i]];
	m->attn_recall = recall;
	m->has_out = sc->v != NULL;
	m->out_err = 0.0;
	m->out_cos = 1.0;
	if (!m->has_out)
		return;
	double diff = 0.0;
	for (int c = 0; c < sc->dim; c++) {
		double d = e->out_h[c] - e->out_f[c];
		diff += d * d;
	}
	m->out_err = sqrt(diff);
	const double nh = norm(e->out_h, sc->dim), nf = norm(e->out_f, sc->dim);
	if (nh == 0.0 && nf == 0.0)
		m->out_cos = 1.0;
	else if (nh == 0.0 || nf == 0.0)
		m->out_cos = 0.0;
	else
		m->out_cos = dot(e->out_h, e->out_f, sc->dim) / (nh * nf);
}

bool engine_step(struct engine *e, struct step_record *rec)
{
	const struct scene *sc = e->sc;
	if (e->t >= sc->n)
		return false;
	const int p = e->t;
	memset(rec, 0, sizeof *rec);
	rec->step = p + 1;
	rec->pos = p;

	/* H2O: append, attend, accumulate, then evict. */
	e->h_pos[e->h_len] = p;
	e->h_score[e->h_len] = 0.0;
	e->h_len++;
	attend(sc, p, e->h_pos, e->h_len, e->att_w, e->out_h, &rec->h_max, &rec->h_sum);
	for (int i = 0; i < e->h_len; i++) {
		e->h_score[i] += e->att_w[i];
		e->att_pos[i] = e->h_pos[i];
		e->att_score[i] = e->h_score[i];
	}
	rec->n_attended = e->h_len;
	rec->attended = e->att_pos;
	rec->attn = e->att_w;
	rec->scores = e->att_score;
	evict(e, rec);
	rec->evicted = e->ev_pos_buf;
	rec->evicted_scores = e->ev_score_buf;

	/* Full cache: positions 0..p, never evicts. */
	attend(sc, p, NULL, p + 1, e->f_w, e->out_f, &rec->f_max, &rec->f_sum);
	for (int j = 0; j <= p; j++)
		e->f_score[j] += e->f_w[j];
	rec->full_attn = e->f_w;
	rec->full_scores = e->f_score;

	rec->out_h = sc->v ? e->out_h : NULL;
	rec->out_f = sc->v ? e->out_f : NULL;
	e->t++;
	measure(e, rec);
	return true;
}

/* Snapshot layout: t, h_len, then h_pos[h_len], h_score[h_len], f_score[t]. */
size_t engine_snapshot_size(const struct engine *e)
{
	return 2 * sizeof(int) + (size_t)e->h_len * (sizeof(int) + sizeof(double)) +
	       (size_t)e->t * sizeof(double);
}

void engine_snapshot(const struct engine *e, void *buf)
{
	unsigned char *b = buf;
	memcpy(b, &e->t, sizeof(int));
	b += sizeof(int);
	memcpy(b, &e->h_len, sizeof(int));
	b += sizeof(int);
	memcpy(b, e->h_pos, (size_t)e->h_len * sizeof(int));
	b += (size_t)e->h_len * sizeof(int);
	memcpy(b, e->h_score, (size_t)e->h_len * sizeof(double));
	b += (size_t)e->h_len * sizeof(double);
	memcpy(b, e->f_score, (size_t)e->t * sizeof(double));
}

void engine_restore(struct engine *e, const void *buf)
{
	const unsigned char *b = buf;
	memcpy(&e->t, b, sizeof(int));
	b += sizeof(int);
	memcpy(&e->h_len, b, sizeof(int));
	b += sizeof(int);
	memcpy(e->h_pos, b, (size_t)e->h_len * sizeof(int));
	b += (size_t)e->h_len * sizeof(int);
	memcpy(e->h_score, b, (size_t)e->h_len * sizeof(double));
	b += (size_t)e->h_len * sizeof(double);
	memcpy(e->f_score, b, (size_t)e->t * sizeof(double));
	/* Positions not yet reached accumulate from zero again. */
	memset(e->f_score + e->t, 0, (size_t)(e->sc->n - e->t) * sizeof(double));
}
