/*
 * engine: spec §2, one step at a time, for every policy's cache.
 *
 * Every cache is kept in ascending position order, so "the recent newest
 * positions" are the tail of its arrays and every sum runs in position
 * order. The logits of a step are computed once, over the full cache, and
 * every other cache reads its positions' logits from that row: the caches
 * differ only in what they hold. The order of floating-point operations is
 * part of the contract with the timeline: engine_logit and the softmax
 * normalisers in the record let it recompute any past weight bit for bit.
 */
#include "h2o/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/scene.h"

/* One policy's cache, and the record arrays of its last step. */
struct cache {
	int cap, len;
	int *pos;
	double *score;
	/* The last step, before eviction. */
	int *att_pos;
	double *att_w, *att_score;
	int *ev_pos;
	double *ev_score, *ev_w;
	unsigned char *gone;
	double *out;
};

struct engine {
	const struct scene *sc;
	struct policy_budget b;
	int t; /* steps done */
	struct cache c[POLICY_COUNT];
	double *logit; /* this step's logits over positions 0..p */
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

static void cache_done(struct cache *c)
{
	free(c->pos);
	free(c->score);
	free(c->att_pos);
	free(c->att_w);
	free(c->att_score);
	free(c->ev_pos);
	free(c->ev_score);
	free(c->ev_w);
	free(c->gone);
	free(c->out);
}

static bool cache_init(struct cache *c, int cap, int dim)
{
	const size_t n = (size_t)cap;
	c->cap = cap;
	c->pos = malloc(n * sizeof *c->pos);
	c->score = malloc(n * sizeof *c->score);
	c->att_pos = malloc(n * sizeof *c->att_pos);
	c->att_w = malloc(n * sizeof *c->att_w);
	c->att_score = malloc(n * sizeof *c->att_score);
	c->ev_pos = malloc(n * sizeof *c->ev_pos);
	c->ev_score = malloc(n * sizeof *c->ev_score);
	c->ev_w = malloc(n * sizeof *c->ev_w);
	c->gone = malloc(n);
	c->out = malloc((size_t)dim * sizeof *c->out);
	return c->pos && c->score && c->att_pos && c->att_w && c->att_score && c->ev_pos &&
	       c->ev_score && c->ev_w && c->gone && c->out;
}

struct engine *engine_new(const struct scene *sc, const struct policy_budget *b)
{
	struct engine *e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->sc = sc;
	e->b = *b;
	e->b.n = sc->n;
	/* A cache never holds more than budget + 1 tokens, nor more than the
	 * scene has: a huge budget is not trusted with memory. */
	long cap = (long)b->heavy + b->recent + 1;
	cap = cap < sc->n ? cap : sc->n;
	e->logit = malloc((size_t)sc->n * sizeof *e->logit);
	bool ok = e->logit != NULL;
	for (int p = 0; p < POLICY_COUNT && ok; p++)
		ok = cache_init(&e->c[p], p == POLICY_FULL ? sc->n : (int)cap, sc->dim);
	if (!ok) {
		engine_free(e);
		return NULL;
	}
	return e;
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	for (int p = 0; p < POLICY_COUNT; p++)
		cache_done(&e->c[p]);
	free(e->logit);
	free(e);
}

int engine_step_count(const struct engine *e)
{
	return e->t;
}

const struct policy_budget *engine_budget(const struct engine *e)
{
	return &e->b;
}

int engine_len(const struct engine *e, enum policy_id p)
{
	return e->c[p].len;
}

const int *engine_positions(const struct engine *e, enum policy_id p)
{
	return e->c[p].pos;
}

const double *engine_scores(const struct engine *e, enum policy_id p)
{
	return e->c[p].score;
}

/*
 * Spec §2 steps 1-5 for one cache: append P, softmax of this step's logits
 * over the positions held, the output, and the scores. The record's
 * attended arrays are copies, because eviction rewrites the cache.
 */
static void attend(const struct engine *e, struct cache *c, int p, struct cache_record *r)
{
	const struct scene *sc = e->sc;
	c->pos[c->len] = p;
	c->score[c->len] = 0.0;
	c->len++;
	double *w = c->att_w;
	double m = -INFINITY;
	for (int i = 0; i < c->len; i++) {
		w[i] = e->logit[c->pos[i]];
		if (w[i] > m)
			m = w[i];
	}
	double s = 0.0;
	for (int i = 0; i < c->len; i++) {
		w[i] = exp(w[i] - m);
		s += w[i];
	}
	for (int i = 0; i < c->len; i++) {
		w[i] /= s;
		c->score[i] += w[i];
		c->att_pos[i] = c->pos[i];
		c->att_score[i] = c->score[i];
	}
	r->n_attended = c->len;
	r->attended = c->att_pos;
	r->attn = c->att_w;
	r->scores = c->att_score;
	r->max = m;
	r->sum = s;
	r->out = NULL;
	if (!sc->v)
		return;
	const size_t d = (size_t)sc->dim;
	memset(c->out, 0, d * sizeof *c->out);
	for (int i = 0; i < c->len; i++) {
		const double *v = sc->v + (size_t)c->pos[i] * d;
		for (size_t k = 0; k < d; k++)
			c->out[k] += w[i] * v[k];
	}
	r->out = c->out;
}

/* Spec §2 step 6 under policy P: mark, record and remove. */
static void evict(const struct engine *e, enum policy_id p, struct cache *c, struct cache_record *r)
{
	const struct policy *pol = policies[p];
	memset(c->gone, 0, (size_t)c->len);
	const struct policy_cache view = {c->len, c->pos, c->score, c->att_w};
	int cut = -1;
	pol->evict(&e->b, &view, c->gone, &cut);
	r->cutoff_pos = cut >= 0 ? c->pos[cut] : -1;
	r->cutoff_value = cut >= 0 ? (pol->by_weight ? c->att_w[cut] : c->score[cut]) : 0.0;
	int kept = 0, n_ev = 0;
	for (int i = 0; i < c->len; i++) {
		if (c->gone[i]) {
			c->ev_pos[n_ev] = c->pos[i];
			c->ev_score[n_ev] = c->score[i];
			c->ev_w[n_ev] = c->att_w[i];
			n_ev++;
			continue;
		}
		c->pos[kept] = c->pos[i];
		c->score[kept] = c->score[i];
		kept++;
	}
	c->len = kept;
	r->n_evicted = n_ev;
	r->evicted = c->ev_pos;
	r->evicted_scores = c->ev_score;
	r->evicted_weights = c->ev_w;
}

/* Positions held by both ascending arrays. */
static int overlap(const int *a, int na, const int *b, int nb)
{
	int i = 0, j = 0, both = 0;
	while (i < na && j < nb) {
		if (a[i] == b[j])
			both++, i++, j++;
		else if (a[i] < b[j])
			i++;
		else
			j++;
	}
	return both;
}

static void measure(const struct engine *e, enum policy_id p, struct cache_record *r,
                    const struct cache_record *full)
{
	const struct scene *sc = e->sc;
	const struct cache *c = &e->c[p], *h2o = &e->c[POLICY_H2O];
	struct step_metrics *m = &r->m;
	m->tokens = c->len;
	m->kv = (long)c->len * 2 * sc->dim;
	m->overlap_h2o = overlap(c->pos, c->len, h2o->pos, h2o->len);
	double recall = 0.0;
	for (int i = 0; i < r->n_attended; i++)
		recall += full->attn[r->attended[i]];
	m->attn_recall = recall;
	m->has_out = sc->v != NULL;
	m->out_err = 0.0;
	m->out_cos = 1.0;
	if (!m->has_out)
		return;
	double diff = 0.0, hh = 0.0, ff = 0.0, hf = 0.0;
	for (int k = 0; k < sc->dim; k++) {
		const double a = r->out[k], b = full->out[k];
		diff += (a - b) * (a - b);
		hh += a * a;
		ff += b * b;
		hf += a * b;
	}
	m->out_err = sqrt(diff);
	if (hh == 0.0 || ff == 0.0)
		m->out_cos = hh == ff ? 1.0 : 0.0;
	else
		m->out_cos = hf / (sqrt(hh) * sqrt(ff));
}

bool engine_step(struct engine *e, struct step_record *rec)
{
	const struct scene *sc = e->sc;
	if (e->t >= sc->n)
		return false;
	const int p = e->t;
	rec->step = p + 1;
	rec->pos = p;
	for (int j = 0; j <= p; j++)
		e->logit[j] = engine_logit(sc, p, j);
	for (int i = 0; i < POLICY_COUNT; i++) {
		attend(e, &e->c[i], p, &rec->c[i]);
		evict(e, (enum policy_id)i, &e->c[i], &rec->c[i]);
	}
	e->t++;
	/* Figures compare against the full cache and H2O, so they come
	 * after every cache has stepped. */
	for (int i = 0; i < POLICY_COUNT; i++)
		measure(e, (enum policy_id)i, &rec->c[i], &rec->c[POLICY_FULL]);
	return true;
}

/* Snapshot layout: t, then per cache len, pos[len], score[len]. */
size_t engine_snapshot_size(const struct engine *e)
{
	size_t size = sizeof(int);
	for (int i = 0; i < POLICY_COUNT; i++)
		size += sizeof(int) + (size_t)e->c[i].len * (sizeof(int) + sizeof(double));
	return size;
}

void engine_snapshot(const struct engine *e, void *buf)
{
	unsigned char *b = buf;
	memcpy(b, &e->t, sizeof(int));
	b += sizeof(int);
	for (int i = 0; i < POLICY_COUNT; i++) {
		const struct cache *c = &e->c[i];
		memcpy(b, &c->len, sizeof(int));
		b += sizeof(int);
		memcpy(b, c->pos, (size_t)c->len * sizeof(int));
		b += (size_t)c->len * sizeof(int);
		memcpy(b, c->score, (size_t)c->len * sizeof(double));
		b += (size_t)c->len * sizeof(double);
	}
}

void engine_restore(struct engine *e, const void *buf)
{
	const unsigned char *b = buf;
	memcpy(&e->t, b, sizeof(int));
	b += sizeof(int);
	for (int i = 0; i < POLICY_COUNT; i++) {
		struct cache *c = &e->c[i];
		memcpy(&c->len, b, sizeof(int));
		b += sizeof(int);
		memcpy(c->pos, b, (size_t)c->len * sizeof(int));
		b += (size_t)c->len * sizeof(int);
		memcpy(c->score, b, (size_t)c->len * sizeof(double));
		b += (size_t)c->len * sizeof(double);
	}
}
