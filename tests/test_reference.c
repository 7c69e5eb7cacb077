/*
 * The optimised engine against a straightforward one.
 *
 * The reference below is design §2 written the plain way: per step and per
 * cache, every logit from the scene (a dot product in index order), the
 * softmax with a sequential sum, the output, the scores, and each policy's
 * rule re-derived by sorting. It shares nothing with src/ but the scene
 * struct and the policy table's names. On random scenes of many shapes
 * (dims that are and are not multiples of the vector width, budgets from
 * zero-heavy to larger than the scene, ties, attention scenes with and
 * without values, long enough for the full cache's blocks and threads), every
 * number of every record must be equal, bit for bit, at every step.
 *
 * With H2O_KERNEL set (avx512, avx2, portable), the engine runs that
 * variant of its kernels and exp (engine_kernel_select): tests/meson.build
 * runs this test once per variant, so that every variant this machine can
 * execute is held to the same bits. One it cannot execute skips (77).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/engine.h"
#include "h2o/heads.h"
#include "h2o/engine_replay.h"
#include "scene_fixture.h"

/* ---- the reference ------------------------------------------------------ */

struct ref_cache {
	int len;
	int pos[4096];
	double score[4096];
	/* the last step */
	int n_att, att[4096];
	double w[4096], att_score[4096], max, sum, out[256];
	int n_ev, ev[4096];
	double ev_score[4096], ev_w[4096];
	int cutoff_pos;
	double cutoff_value;
	/* adakv-win: what the head holds after the prompt's end (0: B). */
	int share;
};

struct ref {
	const struct scene *sc;
	struct policy_budget b;
	int t;
	struct ref_cache c[POLICY_COUNT];
};

static double ref_logit(const struct scene *sc, int q, int j)
{
	if (sc->mode == SCENE_ATTENTION)
		return log(sc->attn[scene_attn_offset(q) + (size_t)j]);
	double s = 0.0;
	for (int i = 0; i < sc->dim; i++)
		s += sc->q[(size_t)q * (size_t)sc->dim + (size_t)i] *
		     sc->k[(size_t)j * (size_t)sc->dim + (size_t)i];
	return sc->scale * s;
}

/* The L2 norm of key row J of kv head KVH, the plain way. */
static double ref_norm(const struct scene *sc, int kvh, int j)
{
	const double *k = sc->k + ((size_t)kvh * (size_t)sc->n + (size_t)j) * (size_t)sc->dim;
	double s = 0.0;
	for (int i = 0; i < sc->dim; i++)
		s += k[i] * k[i];
	return sqrt(s);
}

/* Key norm's rule: minus the norms as the key to keep the largest of (the
 * smallest norms); an attention scene, without keys, keeps the newest.
 * Returns the cut-off and sets *VALUE to its norm. */
static int ref_knorm(const struct scene *sc, int kvh, const struct ref_cache *c, int budget,
                     unsigned char *gone, double *value);

/* Sort key for "keep the largest, a tie keeps the lower position". */
static const double *sort_key;
static const int *sort_pos;
static int stronger_first(const void *a, const void *b)
{
	const int i = *(const int *)a, j = *(const int *)b;
	if (sort_key[i] != sort_key[j])
		return sort_key[i] > sort_key[j] ? -1 : 1;
	return sort_pos[i] - sort_pos[j];
}

/* Keep the KEEP strongest of entries 0 .. cand - 1 by KEY; mark the rest
 * in GONE; return the weakest kept entry, or -1. */
static int keep_strongest(const struct ref_cache *c, const double *key, int cand, int keep,
                          unsigned char *gone)
{
	int idx[4096];
	for (int i = 0; i < cand; i++)
		idx[i] = i;
	sort_key = key;
	sort_pos = c->pos;
	qsort(idx, (size_t)cand, sizeof *idx, stronger_first);
	for (int i = keep; i < cand; i++)
		gone[idx[i]] = 1;
	return keep > 0 ? idx[keep - 1] : -1;
}

static int ref_knorm(const struct scene *sc, int kvh, const struct ref_cache *c, int budget,
                     unsigned char *gone, double *value)
{
	if (sc->mode == SCENE_ATTENTION) {
		for (int i = 0; i < c->len - budget; i++)
			gone[i] = 1;
		return -1;
	}
	double neg[4096];
	for (int i = 0; i < c->len; i++)
		neg[i] = -ref_norm(sc, kvh, c->pos[i]);
	const int cut = keep_strongest(c, neg, c->len, budget, gone);
	if (cut >= 0)
		*value = -neg[cut];
	return cut;
}

/* The random policy's draw for position POS of layer L's kv head G:
 * splitmix64 (its increment and two multiply-xorshift rounds) seeded with
 * 42 XOR (L << 48 | G << 32 | POS), the top 53 bits over 2^53. */
static double ref_draw(int l, int g, int pos)
{
	uint64_t z = 42u ^ ((uint64_t)l << 48 | (uint64_t)g << 32 | (uint64_t)pos);
	z += 0x9e3779b97f4a7c15u;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	z ^= z >> 31;
	return (double)(z >> 11) / 9007199254740992.0;
}

/* The random rule: the draws as the key to keep the largest of. */
static int ref_random(int l, int g, const struct ref_cache *c, int budget, unsigned char *gone,
                      double *value)
{
	double draw[4096];
	for (int i = 0; i < c->len; i++)
		draw[i] = ref_draw(l, g, c->pos[i]);
	const int cut = keep_strongest(c, draw, c->len, budget, gone);
	if (cut >= 0)
		*value = draw[cut];
	return cut;
}

/* KeyDiff's rule over kv head KVH's keys: each key's norm, the mean of the
 * keys over their norms (each component summed in cache order, divided by
 * the count), and minus each key's cosine to it as the key to keep the
 * largest of; an attention scene keeps the newest. */
static int ref_keydiff(const struct scene *sc, int kvh, const struct ref_cache *c, int budget,
                       unsigned char *gone, double *value)
{
	if (sc->mode == SCENE_ATTENTION) {
		for (int i = 0; i < c->len - budget; i++)
			gone[i] = 1;
		return -1;
	}
	const int dim = sc->dim;
	double norm[4096], anchor[256], neg[4096];
	const double *row[4096];
	for (int i = 0; i < c->len; i++) {
		row[i] = sc->k + ((size_t)kvh * (size_t)sc->n + (size_t)c->pos[i]) * (size_t)dim;
		norm[i] = ref_norm(sc, kvh, c->pos[i]);
	}
	double asq = 0.0;
	for (int d = 0; d < dim; d++) {
		double sum = 0.0;
		for (int i = 0; i < c->len; i++)
			sum += row[i][d] / fmax(norm[i], 1e-12);
		anchor[d] = sum / c->len;
		asq += anchor[d] * anchor[d];
	}
	for (int i = 0; i < c->len; i++) {
		double dot = 0.0;
		for (int d = 0; d < dim; d++)
			dot += row[i][d] * anchor[d];
		neg[i] = -dot / fmax(norm[i] * sqrt(asq), 1e-8);
	}
	const int cut = keep_strongest(c, neg, c->len, budget, gone);
	if (cut >= 0)
		*value = neg[cut];
	return cut;
}

/* Expected Attention's rule over kv head KVH's cache at step SEEN (the
 * queries of positions 0 .. SEEN - 1 asked), the query heads QH0 ..
 * QH0 + HEADS - 1 its group: the first four entries are sinks; for each
 * head and each later entry, the projections q . k of the last 64 queries
 * from position 4 on, their mean and variance (mu . k and k' S k for the
 * queries' mean mu and covariance S), mean s + variance s s / 2, their
 * softmax, the heads' mean, times the value's norm; the sinks one more
 * than the best; the largest kept.
 * An attention scene keeps the newest. */
static int ref_expected(const struct scene *sc, int kvh, int qh0, int heads, int seen,
                        const struct ref_cache *c, int budget, unsigned char *gone, double *value)
{
	const int ns = 4, dim = sc->dim;
	const size_t n = (size_t)sc->n;
	if (sc->mode == SCENE_ATTENTION || c->len <= ns) {
		if (sc->mode == SCENE_ATTENTION)
			for (int i = 0; i < c->len - budget; i++)
				gone[i] = 1;
		else
			for (int i = budget; i < c->len; i++)
				gone[i] = 1;
		return -1;
	}
	static double score[4096], z[4096], proj[64];
	for (int i = 0; i < c->len; i++)
		score[i] = 0.0;
	for (int h = 0; h < heads; h++) {
		const double *q = sc->q + (size_t)(qh0 + h) * n * (size_t)dim;
		const int from = seen - 64 > ns ? seen - 64 : ns, m = seen - from;
		double top = -INFINITY, total = 0.0;
		for (int i = ns; i < c->len; i++) {
			const double *k =
			        sc->k + ((size_t)kvh * n + (size_t)c->pos[i]) * (size_t)dim;
			for (int p = from; p < seen; p++) {
				double dot = 0.0;
				for (int a = 0; a < dim; a++)
					dot += q[(size_t)p * (size_t)dim + (size_t)a] * k[a];
				proj[p - from] = dot;
			}
			double mean = 0.0, var = 0.0;
			for (int r = 0; r < m; r++)
				mean += proj[r];
			mean /= m;
			for (int r = 0; r < m; r++)
				var += (proj[r] - mean) * (proj[r] - mean);
			var /= m;
			z[i] = mean * sc->scale + var * (sc->scale * sc->scale) / 2.0;
			top = fmax(top, z[i]);
		}
		for (int i = ns; i < c->len; i++) {
			z[i] = exp(z[i] - top);
			total += z[i];
		}
		for (int i = ns; i < c->len; i++)
			score[i] += z[i] / total;
	}
	double best = -INFINITY;
	for (int i = ns; i < c->len; i++) {
		score[i] /= heads;
		if (sc->v) {
			const double *v =
			        sc->v + ((size_t)kvh * n + (size_t)c->pos[i]) * (size_t)dim;
			double sq = 0.0;
			for (int a = 0; a < dim; a++)
				sq += v[a] * v[a];
			score[i] = (score[i] + 0.0) * sqrt(sq);
		}
		best = fmax(best, score[i]);
	}
	for (int i = 0; i < ns; i++)
		score[i] = best + 1.0;
	const int cut = keep_strongest(c, score, c->len, budget, gone);
	if (cut >= 0)
		*value = score[cut];
	return cut;
}

static void ref_step(struct ref *r)
{
	const struct scene *sc = r->sc;
	const int p = r->t, budget = r->b.heavy + r->b.recent;
	for (int id = 0; id < POLICY_COUNT; id++) {
		struct ref_cache *c = &r->c[id];
		c->pos[c->len] = p;
		c->score[c->len] = 0.0;
		c->len++;
		double m = -INFINITY;
		for (int i = 0; i < c->len; i++) {
			c->w[i] = ref_logit(sc, p, c->pos[i]);
			m = c->w[i] > m ? c->w[i] : m;
		}
		double s = 0.0;
		for (int i = 0; i < c->len; i++) {
			c->w[i] = exp(c->w[i] - m);
			s += c->w[i];
		}
		for (int i = 0; i < c->len; i++) {
			c->w[i] /= s;
			c->score[i] += c->w[i];
			c->att[i] = c->pos[i];
			c->att_score[i] = c->score[i];
		}
		c->n_att = c->len;
		c->max = m;
		c->sum = s;
		if (sc->v) {
			for (int k = 0; k < sc->dim; k++) {
				double o = 0.0;
				for (int i = 0; i < c->len; i++)
					o += c->w[i] *
					     sc->v[(size_t)c->pos[i] * (size_t)sc->dim + (size_t)k];
				c->out[k] = o;
			}
		}
		/* Each rule, the plain way, at the steps that compress: these
		 * scenes have no prompt, so every INTERVAL-th step (every step
		 * for an interval of 0 or 1). */
		unsigned char gone[4096] = {0};
		int cut = -1;
		bool by_weight = false;
		double norm = 0.0;
		const int every = r->b.interval > 1 ? r->b.interval : 1;
		if ((p + 1) % every != 0) {
			/* the cache waits for the next compression */
		} else if (id == POLICY_H2O && c->len > budget) {
			cut = keep_strongest(c, c->score, c->len - r->b.recent, r->b.heavy, gone);
		} else if (id == POLICY_WINDOW) {
			for (int i = 0; i < c->len - budget; i++)
				gone[i] = 1;
		} else if (id == POLICY_STREAMING && c->len > budget) {
			int sinks = 0;
			while (sinks < c->len && c->pos[sinks] < r->b.sinks)
				sinks++;
			for (int i = sinks; i < c->len - (budget - sinks); i++)
				gone[i] = 1;
		} else if (id == POLICY_TOVA && c->len > budget) {
			cut = keep_strongest(c, c->w, c->len, budget, gone);
			by_weight = true;
		} else if (id == POLICY_KNORM && c->len > budget) {
			cut = ref_knorm(sc, 0, c, budget, gone, &norm);
		} else if (id == POLICY_RANDOM && c->len > budget) {
			cut = ref_random(0, 0, c, budget, gone, &norm);
		} else if (id == POLICY_KEYDIFF && c->len > budget) {
			cut = ref_keydiff(sc, 0, c, budget, gone, &norm);
		} else if (id == POLICY_EXPECTED && c->len > budget) {
			cut = ref_expected(sc, 0, 0, 1, p + 1, c, budget, gone, &norm);
		} else if (id == POLICY_SNAPKV_WINDOW || id == POLICY_PYRAMIDKV_WINDOW ||
		           id == POLICY_ADAKV_WINDOW) {
			/* These scenes have no prompt: nothing is ever selected,
			 * and the bounded SnapKV, PyramidKV and AdaKV are a window
			 * (SnapKV itself keeps everything). */
			for (int i = 0; i < c->len - budget; i++)
				gone[i] = 1;
		} else if (id == POLICY_OBSERVED_WINDOW && c->len > budget) {
			/* Each score over the p + 1 - pos queries that saw it. */
			static double mean[4096];
			for (int i = 0; i < c->len; i++)
				mean[i] = c->score[i] / (double)(p + 1 - c->pos[i]);
			cut = keep_strongest(c, mean, c->len, budget, gone);
			norm = cut >= 0 ? mean[cut] : 0.0;
		}
		c->cutoff_pos = cut >= 0 ? c->pos[cut] : -1;
		c->cutoff_value = cut >= 0 ? (by_weight ? c->w[cut] : c->score[cut]) : 0.0;
		if ((id == POLICY_KNORM || id == POLICY_RANDOM || id == POLICY_KEYDIFF ||
		     id == POLICY_OBSERVED_WINDOW || id == POLICY_EXPECTED) &&
		    cut >= 0)
			c->cutoff_value = norm;
		int kept = 0;
		c->n_ev = 0;
		for (int i = 0; i < c->len; i++) {
			if (gone[i]) {
				c->ev[c->n_ev] = c->pos[i];
				c->ev_score[c->n_ev] = c->score[i];
				c->ev_w[c->n_ev] = c->w[i];
				c->n_ev++;
			} else {
				c->pos[kept] = c->pos[i];
				c->score[kept] = c->score[i];
				kept++;
			}
		}
		c->len = kept;
	}
	r->t++;
}

/* ---- comparing ---------------------------------------------------------- */

#define SAME(a, b, n) assert_memory_equal((a), (b), (size_t)(n) * sizeof *(a))

/* What cache ID holds now. */
static void check_state(const struct ref *r, int id, const struct engine *e)
{
	const struct ref_cache *c = &r->c[id];
	assert_int_equal(engine_len(e, id), c->len);
	SAME(engine_positions(e, id), c->pos, c->len);
	SAME(engine_scores(e, id), c->score, c->len);
}

static void check_cache(const struct ref *r, int id, const struct cache_record *got,
                        const struct engine *e)
{
	const struct ref_cache *c = &r->c[id];
	assert_int_equal(got->n_attended, c->n_att);
	SAME(got->attended, c->att, c->n_att);
	SAME(got->attn, c->w, c->n_att);
	SAME(got->scores, c->att_score, c->n_att);
	assert_true(got->max == c->max && got->sum == c->sum);
	assert_int_equal(got->n_evicted, c->n_ev);
	SAME(got->evicted, c->ev, c->n_ev);
	SAME(got->evicted_scores, c->ev_score, c->n_ev);
	SAME(got->evicted_weights, c->ev_w, c->n_ev);
	assert_int_equal(got->cutoff_pos, c->cutoff_pos);
	assert_true(got->cutoff_value == c->cutoff_value);
	if (r->sc->v)
		SAME(got->out, c->out, r->sc->dim);
	else
		assert_null(got->out);
	check_state(r, id, e);
}

/* The figures, from the reference's records. */
static void check_metrics(const struct ref *r, int id, const struct step_metrics *m)
{
	const struct scene *sc = r->sc;
	const struct ref_cache *c = &r->c[id], *f = &r->c[POLICY_FULL], *h = &r->c[POLICY_H2O];
	assert_int_equal(m->tokens, c->len);
	assert_int_equal(m->kv, (long)c->len * 2 * sc->dim);
	double recall = 0.0;
	for (int i = 0; i < c->n_att; i++)
		recall += f->w[c->att[i]];
	assert_true(m->attn_recall == recall);
	int both = 0;
	for (int i = 0; i < c->len; i++)
		for (int j = 0; j < h->len; j++)
			both += c->pos[i] == h->pos[j];
	assert_int_equal(m->overlap_h2o, both);
	assert_int_equal(m->has_out, sc->v != NULL);
	if (!sc->v)
		return;
	double diff = 0.0, hh = 0.0, ff = 0.0, hf = 0.0;
	for (int k = 0; k < sc->dim; k++) {
		const double a = c->out[k], b = f->out[k];
		diff += (a - b) * (a - b);
		hh += a * a;
		ff += b * b;
		hf += a * b;
	}
	assert_true(m->out_err == sqrt(diff));
	const double cos =
	        hh == 0.0 || ff == 0.0 ? (hh == ff ? 1.0 : 0.0) : hf / (sqrt(hh) * sqrt(ff));
	assert_true(m->out_cos == cos);
}

/* Run SC with budget (heavy, recent) compressing every INTERVAL steps
 * through both and compare every step; also engines running one policy
 * each, and a snapshot round trip. */
static void compare_every(const struct scene *sc, int heavy, int recent, int interval)
{
	const struct policy_budget rb = {heavy,    recent, policy_default_sinks(heavy + recent),
	                                 sc->n,    0,      0,
	                                 interval, 0,      {{{0}}}};
	const struct budget b = {heavy,    recent,     policy_default_sinks(heavy + recent),
	                         interval, sc->prompt, {{{0}}}};
	struct ref *r = calloc(1, sizeof *r);
	r->sc = sc;
	r->b = rb;
	struct engine *e = engine_new(sc, &b);
	struct engine *one[POLICY_COUNT];
	for (int p = 0; p < POLICY_COUNT; p++)
		one[p] = engine_new_only(sc, &b, ENGINE_POLICY(p));
	struct step_record rec, orec;
	void *snap = NULL;
	int snap_at = sc->n / 2;
	while (engine_step(e, &rec)) {
		ref_step(r);
		assert_int_equal(rec.step, r->t);
		for (int p = 0; p < POLICY_COUNT; p++) {
			check_cache(r, p, &rec.c[p], e);
			check_metrics(r, p, &rec.c[p].m);
			/* Alone, a policy does exactly the same. */
			assert_true(engine_step(one[p], &orec));
			check_cache(r, p, &orec.c[p], one[p]);
			for (int q = 0; q < POLICY_COUNT; q++)
				if (q != p)
					assert_int_equal(orec.c[q].n_attended, 0);
		}
		if (r->t == snap_at) {
			snap = malloc(engine_snapshot_size(e));
			engine_snapshot(e, snap);
		}
	}
	/* Back to the middle, and forward again: the same records. */
	if (snap) {
		engine_restore(e, snap);
		struct ref *r2 = calloc(1, sizeof *r2);
		r2->sc = sc;
		r2->b = rb;
		while (r2->t < snap_at)
			ref_step(r2);
		while (engine_step(e, &rec)) {
			ref_step(r2);
			for (int p = 0; p < POLICY_COUNT; p++)
				check_cache(r2, p, &rec.c[p], e);
		}
		free(r2);
		free(snap);
	}
	for (int p = 0; p < POLICY_COUNT; p++)
		engine_free(one[p]);
	engine_free(e);
	free(r);
}

static void compare(const struct scene *sc, int heavy, int recent)
{
	compare_every(sc, heavy, recent, 1);
}

static void test_vector_scenes(void **state)
{
	(void)state;
	/* n, dim, heavy, recent: dims around the vector width of 8, a
	 * budget with no heavy part, none recent, one larger than the
	 * scene. */
	const int shapes[][4] = {
	        {1, 1, 1, 0},     {40, 1, 2, 2},    {60, 3, 4, 3},    {70, 7, 5, 0},
	        {90, 8, 0, 6},    {100, 9, 6, 5},   {130, 17, 8, 8},  {80, 16, 100, 100},
	        {150, 64, 10, 6}, {120, 33, 3, 12}, {200, 5, 20, 20},
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		struct scene *sc =
		        fixture_random(shapes[i][0], shapes[i][1], 0, 0, (unsigned)i + 1);
		compare(sc, shapes[i][2], shapes[i][3]);
		scene_free(sc);
	}
}

/* Long enough that the full cache computes blocks on two threads and its
 * rows cross the kernels' key tiles. */
static void test_long_scene(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(2100, 27, 0, 0, 99);
	compare(sc, 16, 16);
	scene_free(sc);
}

static void test_attention_scenes(void **state)
{
	(void)state;
	struct scene *sc = fixture_random_attention(90, 5, true, false, 3);
	compare(sc, 4, 3);
	scene_free(sc);
	sc = fixture_random_attention(70, 9, false, false, 4);
	compare(sc, 0, 5);
	scene_free(sc);
	sc = fixture_random_attention(60, 2, true, true, 5);
	compare(sc, 3, 2);
	scene_free(sc);
}

/*
 * Stepping with records, stepping for the state only, jumping ahead (short
 * jumps one step at a time, long ones on two threads), snapshots and
 * restores, mixed at random: whatever came before, a record and the state
 * are the reference's. The engine computes steps with outputs ahead of
 * the ones it has handed out; none of that may show.
 */
static void mixed(const struct scene *sc, int heavy, int recent, unsigned policies, unsigned seed)
{
	const struct policy_budget rb = {
	        heavy, recent, policy_default_sinks(heavy + recent), sc->n, 0, 0, 0, 0, {{{0}}}};
	const struct budget b = {heavy, recent,     policy_default_sinks(heavy + recent),
	                         0,     sc->prompt, {{{0}}}};
	struct engine *e = engine_new_only(sc, &b, policies);
	struct ref *r = calloc(1, sizeof *r);
	r->sc = sc;
	r->b = rb;
	void *snap = malloc(engine_snapshot_size(e));
	engine_snapshot(e, snap);
	int snap_t = 0, steps = 0, restores = 0;
	unsigned long long x = seed;
	for (int act = 0; act < 800; act++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		const int t = engine_step_count(e);
		/* At the end, back to the snapshot (taken in the first half). */
		const int what = t == sc->n ? 9 : (int)(x >> 33) % 10;
		struct step_record rec;
		if (what < 5) {
			assert_true(engine_step(e, &rec));
			ref_step(r);
			for (int p = 0; p < POLICY_COUNT; p++)
				if (policies & ENGINE_POLICY(p))
					check_cache(r, p, &rec.c[p], e);
			steps++;
			continue;
		}
		if (what == 5) {
			assert_true(engine_advance(e));
			ref_step(r);
		} else if (what <= 7) {
			const int far = what == 7 ? 150 : 5;
			int to = t + 1 + (int)(x >> 40) % far;
			to = to < sc->n ? to : sc->n;
			engine_advance_to(e, to);
			while (r->t < to)
				ref_step(r);
		} else if (what == 8 && t < sc->n / 2) {
			free(snap);
			snap = malloc(engine_snapshot_size(e));
			engine_snapshot(e, snap);
			snap_t = t;
		} else if (what == 9) {
			engine_restore(e, snap);
			memset(r, 0, sizeof *r);
			r->sc = sc;
			r->b = rb;
			while (r->t < snap_t)
				ref_step(r);
			restores++;
		}
		assert_int_equal(engine_step_count(e), r->t);
		for (int p = 0; p < POLICY_COUNT; p++)
			if (policies & ENGINE_POLICY(p))
				check_state(r, p, e);
	}
	assert_true(steps > 300 && restores > 5);
	free(snap);
	engine_free(e);
	free(r);
}

static void test_mixed_stepping(void **state)
{
	(void)state;
	struct scene *sc = fixture_random(300, 32, 0, 0, 7);
	mixed(sc, 40, 24, ENGINE_ALL_POLICIES, 1);
	mixed(sc, 40, 24, ENGINE_ALL_POLICIES & ~ENGINE_POLICY(POLICY_FULL), 2);
	mixed(sc, 40, 24, ENGINE_POLICY(POLICY_H2O), 3);
	mixed(sc, 5, 0, ENGINE_POLICY(POLICY_H2O) | ENGINE_POLICY(POLICY_TOVA), 4);
	scene_free(sc);
	sc = fixture_random_attention(300, 6, true, false, 8);
	mixed(sc, 6, 5, ENGINE_ALL_POLICIES, 5);
	mixed(sc, 6, 5, ENGINE_POLICY(POLICY_WINDOW), 6);
	scene_free(sc);
}

/* ---- layers, grouped heads and a prompt --------------------------------- */

/*
 * The same reference for a whole model (design §2): layer l's kv head g
 * has a cache per policy; each query head of its group takes its softmax
 * over that cache; the score adds the mean of the group's weights (summed
 * over the group in order from 0.0, divided by its size); no eviction
 * before the prompt's end; TOVA decides per layer on the mean over all the
 * layer's query heads. Compared, bit for bit, with every query head's
 * engine of a heads_run.
 */
struct ref_model {
	const struct scene *sc;
	struct policy_budget b;
	int layers, heads, kv, group, t;
	struct ref_cache *c; /* [layers][kv][POLICY_COUNT] */
	double *w;           /* [heads][4096]: a layer's heads' weights */
	double *hmax, *hsum; /* [heads] */
	double *out;         /* [layers * heads][dim] */
	double *hw;          /* [layers * heads][POLICY_COUNT][4096]: each head's */
	double *hm, *hs;     /* [layers * heads][POLICY_COUNT] */
};

static struct ref_cache *model_cache(const struct ref_model *r, int l, int g, int id)
{
	return &r->c[((size_t)l * (size_t)r->kv + (size_t)g) * POLICY_COUNT + (size_t)id];
}

static double model_logit(const struct scene *sc, int qh, int kvh, int q, int j)
{
	const size_t n = (size_t)sc->n, dim = (size_t)sc->dim;
	if (sc->mode == SCENE_ATTENTION)
		return log(sc->attn[(size_t)qh * scene_attn_offset(sc->n) + scene_attn_offset(q) +
		                    (size_t)j]);
	double s = 0.0;
	for (size_t i = 0; i < dim; i++)
		s += sc->q[((size_t)qh * n + (size_t)q) * dim + i] *
		     sc->k[((size_t)kvh * n + (size_t)j) * dim + i];
	return sc->scale * s;
}

static int ref_snap(const struct ref_model *r, int id, int l, int g, const struct ref_cache *c,
                    int budget, unsigned char *gone, double *value);
/* Policy ID's observation window: --policy-opt's window, else 64, capped
 * by the prompt P. */
static int ref_window(const struct ref_model *r, int id, int P);
static int ref_ada(const struct ref_model *r, int id, int l, int prompt, int budget,
                   unsigned char *gone, double *value);

/*
 * PyramidKV's budget of layer L of LAYERS, window included, as
 * KVCache-Factory's PyramidKVCluster.update_kv computes it with
 * max_capacity_prompt B, window W = min(64, P) and beta 20: B when the
 * prompt is shorter than 2 (B - W) (or B <= W, or one layer); else
 * min = (B - W) / 20, max = 2 (B - W) - min, both moved so that max is at
 * most P - W, and layer L keeps max - L * ((max - min) / (LAYERS - 1)),
 * plus the window.
 */
static int ref_pyramid(int budget, int prompt, int layers, int l, int w)
{
	if (budget <= w || prompt < 2 * (budget - w) || layers < 2)
		return budget;
	int lo = (budget - w) / 20, hi = 2 * (budget - w) - lo;
	if (hi >= prompt - w) {
		hi = prompt - w;
		lo = 2 * (budget - w) - hi;
	}
	return hi - l * ((hi - lo) / (layers - 1)) + w;
}

/*
 * pyramidkv-win's budget of layer L: each layer's ref_pyramid with its own
 * window, then the positions by which they add up to more than LAYERS x B
 * taken back one at a time, from layer 0 up and round again.
 */
static int ref_pyramid_held(const struct ref_model *r, int budget, int prompt, int l)
{
	const int w = ref_window(r, POLICY_PYRAMIDKV_WINDOW, prompt);
	int keep[256], excess = -r->layers * budget;
	for (int k = 0; k < r->layers; k++) {
		keep[k] = ref_pyramid(budget, prompt, r->layers, k, w);
		excess += keep[k];
	}
	for (int k = 0; excess > 0; k = (k + 1) % r->layers, excess--)
		keep[k]--;
	return keep[l];
}

static void model_step(struct ref_model *r)
{
	const struct scene *sc = r->sc;
	const int p = r->t, s = r->t + 1, budget = r->b.heavy + r->b.recent;
	const size_t dim = (size_t)sc->dim, n = (size_t)sc->n;
	for (int l = 0; l < r->layers; l++) {
		for (int id = 0; id < POLICY_COUNT; id++) {
			/* Every kv head's cache appends p and its heads weigh it. */
			for (int g = 0; g < r->kv; g++) {
				struct ref_cache *c = model_cache(r, l, g, id);
				c->pos[c->len] = p;
				c->score[c->len] = 0.0;
				c->len++;
				for (int i = 0; i < c->len; i++)
					c->w[i] = 0.0;
				for (int hi = 0; hi < r->group; hi++) {
					const int h = g * r->group + hi, qh = l * r->heads + h;
					double *w = r->w + (size_t)h * 4096, m = -INFINITY,
					       sum = 0.0;
					for (int i = 0; i < c->len; i++) {
						w[i] = model_logit(sc, qh, l * r->kv + g, p,
						                   c->pos[i]);
						m = w[i] > m ? w[i] : m;
					}
					for (int i = 0; i < c->len; i++) {
						w[i] = exp(w[i] - m);
						sum += w[i];
					}
					for (int i = 0; i < c->len; i++) {
						w[i] /= sum;
						c->w[i] += w[i];
					}
					const size_t at = (size_t)qh * POLICY_COUNT + (size_t)id;
					memcpy(r->hw + at * 4096, w, (size_t)c->len * sizeof *w);
					r->hm[at] = m;
					r->hs[at] = sum;
					for (size_t k = 0; sc->v && k < dim; k++) {
						double o = 0.0;
						for (int i = 0; i < c->len; i++)
							o += w[i] *
							     sc->v[((size_t)(l * r->kv + g) * n +
							            (size_t)c->pos[i]) *
							                   dim +
							           k];
						r->out[at * dim + k] = o;
					}
				}
				for (int i = 0; i < c->len; i++) {
					c->w[i] /= r->group; /* the group's mean */
					c->score[i] += c->w[i];
					c->att[i] = c->pos[i];
					c->att_score[i] = c->score[i];
				}
				c->n_att = c->len;
			}
			/* TOVA's key: the mean over all the layer's heads. */
			double lmean[4096];
			const int len = model_cache(r, l, 0, id)->len;
			for (int i = 0; i < len; i++) {
				lmean[i] = 0.0;
				for (int h = 0; h < r->heads; h++)
					lmean[i] += r->w[(size_t)h * 4096 + (size_t)i];
				lmean[i] /= r->heads;
			}
			/* AdaKV decides for the layer's kv heads at once: a row of
			 * marks per kv head, one cut-off for all. */
			static unsigned char ada_gone[16][4096];
			int ada_cut = -1;
			double ada_value = 0.0;
			const bool ada = (id == POLICY_ADAKV || id == POLICY_ADAKV_WINDOW) &&
			                 s == sc->prompt && len > budget;
			if (ada) {
				memset(ada_gone, 0, sizeof ada_gone);
				ada_cut =
				        ref_ada(r, id, l, len, budget, &ada_gone[0][0], &ada_value);
			}
			for (int g = 0; g < r->kv; g++) {
				struct ref_cache *c = model_cache(r, l, g, id);
				const double *key =
				        id == POLICY_TOVA && r->heads > 1 ? lmean : c->w;
				unsigned char gone[4096] = {0};
				int cut = -1;
				bool by_weight = false;
				double norm = 0.0;
				/* The rules run at the prompt's end and every
				 * INTERVAL steps after it. */
				const int every = r->b.interval > 1 ? r->b.interval : 1;
				/* What the bounded forms hold after the prompt. */
				const int held =
				        id == POLICY_PYRAMIDKV_WINDOW
				                ? ref_pyramid_held(r, budget, sc->prompt, l)
				        : id == POLICY_ADAKV_WINDOW && c->share > 0 ? c->share
				                                                    : budget;
				if (ada) {
					memcpy(gone, ada_gone[g], (size_t)c->len);
					cut = ada_cut;
					norm = ada_value;
				} else if (s < sc->prompt || (s - sc->prompt) % every != 0 ||
				           id == POLICY_FULL) {
					/* nothing goes */
				} else if (id == POLICY_H2O && c->len > budget) {
					cut = keep_strongest(c, c->score, c->len - r->b.recent,
					                     r->b.heavy, gone);
				} else if (id == POLICY_WINDOW) {
					for (int i = 0; i < c->len - budget; i++)
						gone[i] = 1;
				} else if (id == POLICY_STREAMING && c->len > budget) {
					int sinks = 0;
					while (sinks < c->len && c->pos[sinks] < r->b.sinks)
						sinks++;
					for (int i = sinks; i < c->len - (budget - sinks); i++)
						gone[i] = 1;
				} else if (id == POLICY_TOVA && c->len > budget) {
					cut = keep_strongest(c, key, c->len, budget, gone);
					by_weight = true;
				} else if (id == POLICY_KNORM && c->len > budget) {
					cut = ref_knorm(sc, l * r->kv + g, c, budget, gone, &norm);
				} else if (id == POLICY_RANDOM && c->len > budget) {
					cut = ref_random(l, g, c, budget, gone, &norm);
				} else if (id == POLICY_KEYDIFF && c->len > budget) {
					cut = ref_keydiff(sc, l * r->kv + g, c, budget, gone,
					                  &norm);
				} else if (id == POLICY_EXPECTED && c->len > budget) {
					cut = ref_expected(sc, l * r->kv + g,
					                   l * r->heads + g * r->group, r->group, s,
					                   c, budget, gone, &norm);
				} else if ((id == POLICY_SNAPKV || id == POLICY_SNAPKV_WINDOW) &&
				           s == sc->prompt && c->len > budget) {
					cut = ref_snap(r, id, l, g, c, budget, gone, &norm);
				} else if (id == POLICY_PYRAMIDKV && s == sc->prompt &&
				           c->len > ref_pyramid(budget, sc->prompt, r->layers, l,
				                                ref_window(r, id, sc->prompt))) {
					cut = ref_snap(r, id, l, g, c,
					               ref_pyramid(budget, sc->prompt, r->layers, l,
					                           ref_window(r, id, sc->prompt)),
					               gone, &norm);
				} else if (id == POLICY_OBSERVED && s == sc->prompt &&
				           c->len > budget) {
					/* Each score over the queries that saw it. */
					static double mean[4096];
					for (int i = 0; i < c->len; i++)
						mean[i] = c->score[i] /
						          (double)(sc->prompt - c->pos[i]);
					cut = keep_strongest(c, mean, c->len, budget, gone);
					norm = cut >= 0 ? mean[cut] : 0.0;
				} else if (id == POLICY_PYRAMIDKV_WINDOW && s == sc->prompt &&
				           c->len > ref_pyramid_held(r, budget, sc->prompt, l)) {
					cut = ref_snap(r, id, l, g, c,
					               ref_pyramid_held(r, budget, sc->prompt, l),
					               gone, &norm);
				} else if (id == POLICY_OBSERVED_WINDOW && c->len > budget) {
					/* Each score over the p + 1 - pos queries that
					 * saw it, at the prompt's end and after it. */
					static double mean[4096];
					for (int i = 0; i < c->len; i++)
						mean[i] = c->score[i] / (double)(p + 1 - c->pos[i]);
					cut = keep_strongest(c, mean, c->len, budget, gone);
					norm = cut >= 0 ? mean[cut] : 0.0;
				} else if ((id == POLICY_SNAPKV_WINDOW ||
				            id == POLICY_PYRAMIDKV_WINDOW ||
				            id == POLICY_ADAKV_WINDOW) &&
				           s != sc->prompt && c->len > held) {
					/* The selected stay, and the newest of the rest
					 * (AdaKV's window: no larger than B). */
					const int w = ref_window(r, id, sc->prompt);
					const int cap = id == POLICY_ADAKV_WINDOW ? budget : held;
					const int before = sc->prompt - (w < cap ? w : cap);
					int sel = 0;
					while (sel < c->len && c->pos[sel] < before)
						sel++;
					if (sel > held)
						sel = 0;
					for (int i = sel; i < c->len - (held - sel); i++)
						gone[i] = 1;
				}
				c->cutoff_pos = cut >= 0 ? c->pos[cut] : -1;
				c->cutoff_value =
				        cut >= 0 ? (by_weight ? key[cut] : c->score[cut]) : 0.0;
				if ((id == POLICY_KNORM || id == POLICY_RANDOM ||
				     id == POLICY_KEYDIFF || id == POLICY_EXPECTED ||
				     id == POLICY_SNAPKV || id == POLICY_SNAPKV_WINDOW ||
				     id == POLICY_PYRAMIDKV || id == POLICY_ADAKV ||
				     id == POLICY_ADAKV_WINDOW || id == POLICY_OBSERVED ||
				     id == POLICY_PYRAMIDKV_WINDOW ||
				     id == POLICY_OBSERVED_WINDOW) &&
				    cut >= 0)
					c->cutoff_value = norm;
				int kept = 0;
				c->n_ev = 0;
				for (int i = 0; i < c->len; i++) {
					if (gone[i]) {
						c->ev[c->n_ev] = c->pos[i];
						c->ev_score[c->n_ev] = c->score[i];
						c->ev_w[c->n_ev] = key[i];
						c->n_ev++;
					} else {
						c->pos[kept] = c->pos[i];
						c->score[kept] = c->score[i];
						kept++;
					}
				}
				c->len = kept;
				/* adakv-win holds its head's share of the layer's
				 * G x B after the prompt's end cut it. */
				if (id == POLICY_ADAKV_WINDOW && ada)
					c->share = kept;
			}
		}
	}
	r->t++;
}

/*
 * SnapKV at the prompt's end, for layer L's kv head G (its cache C holds
 * 0 .. P - 1): W = min(64, P); each query head of the group weighs
 * positions 0 .. q for every q of the window (P - W .. P - 1), the plain
 * softmax; their mean over the window's queries, position by position;
 * before the window, a pool of five (zeros outside) divided by 5, then
 * the mean over the group's heads; the window stays and the B - W best
 * before it, or only the B newest when B <= W. *VALUE: the cut-off's score.
 */
static int ref_window(const struct ref_model *r, int id, int P)
{
	const int w = r->b.set.p[id].window > 0 ? r->b.set.p[id].window : 64;
	return w < P ? w : P;
}

/* With --policy-opt's kernel K (else 5): the pool's K terms over K; with
 * pool=max the largest of the positions within K / 2 before the window. */
static void ref_snap_scores(const struct ref_model *r, int id, int l, int g, int P, double *score)
{
	const struct scene *sc = r->sc;
	const int w = ref_window(r, id, P), older = P - w;
	const int k = r->b.set.p[id].kernel > 0 ? r->b.set.p[id].kernel : 5;
	const bool max = r->b.set.p[id].pool == POLICY_POOL_MAX;
	static double obs[16][4096];
	for (int hi = 0; hi < r->group; hi++) {
		const int qh = l * r->heads + g * r->group + hi;
		for (int j = 0; j < P; j++)
			obs[hi][j] = 0.0;
		for (int q = P - w; q < P; q++) {
			double x[4096], m = -INFINITY, sum = 0.0;
			for (int j = 0; j <= q; j++) {
				x[j] = model_logit(sc, qh, l * r->kv + g, q, j);
				m = x[j] > m ? x[j] : m;
			}
			for (int j = 0; j <= q; j++) {
				x[j] = exp(x[j] - m);
				sum += x[j];
			}
			for (int j = 0; j <= q; j++)
				obs[hi][j] += x[j] / sum;
		}
		for (int j = 0; j < P; j++)
			obs[hi][j] /= w;
	}
	for (int j = 0; j < older; j++) {
		double total = 0.0;
		for (int hi = 0; hi < r->group; hi++) {
			double pool = max ? -INFINITY : 0.0;
			for (int d = j - k / 2; d <= j + k / 2; d++) {
				const double o = d >= 0 && d < older ? obs[hi][d] : 0.0;
				if (!max)
					pool += o;
				else if (d >= 0 && d < older && o > pool)
					pool = o;
			}
			total += max ? pool : pool / k;
		}
		score[j] = total / r->group;
	}
}

static int ref_snap(const struct ref_model *r, int id, int l, int g, const struct ref_cache *c,
                    int budget, unsigned char *gone, double *value)
{
	const int P = c->len, w = ref_window(r, id, P), older = P - w;
	if (budget <= w) {
		for (int i = 0; i < P - budget; i++)
			gone[i] = 1;
		return -1;
	}
	double score[4096];
	ref_snap_scores(r, id, l, g, P, score);
	if (older <= budget - w)
		return -1;
	const int cut = keep_strongest(c, score, older, budget - w, gone);
	if (cut >= 0)
		*value = score[cut];
	return cut;
}

/* Weakest first over a flattened layer: the lower score, and on a tie the
 * later index (the later head, then the later position). */
static const double *flat_key;
static int weakest_first(const void *a, const void *b)
{
	const int i = *(const int *)a, j = *(const int *)b;
	if (flat_key[i] != flat_key[j])
		return flat_key[i] < flat_key[j] ? -1 : 1;
	return j - i;
}

/*
 * AdaKV at the prompt's end for layer L, as kvpress' AdaKVPress.compress
 * over SnapKVPress.score: a row of P scores per kv head, SnapKV's before
 * the window and the layer's largest plus 1 on it; each row's int(B x
 * 0.2) best (a tie keeps the lower position) set to DBL_MAX; the kv x
 * (P - B) lowest of all the rows go. B <= W keeps each head's B newest.
 * GONE holds a row of 4096 marks per kv head. Returns the cut-off (the
 * lowest kept: its position) and sets *VALUE to its score.
 */
static int ref_ada(const struct ref_model *r, int id, int l, int P, int budget, unsigned char *gone,
                   double *value)
{
	const int w = ref_window(r, id, P), older = P - w, kv = r->kv;
	if (budget <= w) {
		for (int g = 0; g < kv; g++)
			for (int i = 0; i < P - budget; i++)
				gone[g * 4096 + i] = 1;
		return -1;
	}
	static double key[16 * 4096];
	static int idx[16 * 4096];
	double top = -INFINITY;
	for (int g = 0; g < kv; g++) {
		ref_snap_scores(r, id, l, g, P, key + g * P);
		for (int j = 0; j < older; j++)
			top = key[g * P + j] > top ? key[g * P + j] : top;
	}
	const int safe = (int)(budget * 0.2);
	for (int g = 0; g < kv; g++) {
		double *row = key + g * P;
		for (int j = older; j < P; j++)
			row[j] = top + 1.0;
		/* The row's best SAFE: strongest first, a tie the lower first. */
		int order[4096];
		for (int j = 0; j < P; j++)
			order[j] = j;
		sort_key = row;
		static int ident[4096];
		for (int j = 0; j < P; j++)
			ident[j] = j;
		sort_pos = ident;
		qsort(order, (size_t)P, sizeof *order, stronger_first);
		for (int i = 0; i < safe; i++)
			row[order[i]] = DBL_MAX;
	}
	for (int i = 0; i < kv * P; i++)
		idx[i] = i;
	flat_key = key;
	qsort(idx, (size_t)(kv * P), sizeof *idx, weakest_first);
	const int pruned = kv * (P - budget);
	for (int i = 0; i < pruned; i++)
		gone[(idx[i] / P) * 4096 + idx[i] % P] = 1;
	*value = key[idx[pruned]];
	return idx[pruned] % P;
}

/* Query head QH's record of policy ID against the reference. */
static void check_model_head(const struct ref_model *r, const struct heads_run *run, int qh, int id)
{
	const int l = qh / r->heads, g = (qh % r->heads) / r->group;
	const struct ref_cache *c = model_cache(r, l, g, id);
	const struct cache_record *got = &run->rec[qh].c[id];
	const size_t at = (size_t)qh * POLICY_COUNT + (size_t)id;
	assert_int_equal(got->n_attended, c->n_att);
	SAME(got->attended, c->att, c->n_att);
	SAME(got->attn, r->hw + at * 4096, c->n_att);
	assert_true(got->max == r->hm[at] && got->sum == r->hs[at]);
	if (r->sc->v)
		SAME(got->out, r->out + at * (size_t)r->sc->dim, r->sc->dim);
	if (id == POLICY_FULL)
		return; /* its scores are its own head's column sums */
	SAME(got->group_attn, c->w, c->n_att);
	SAME(got->scores, c->att_score, c->n_att);
	assert_int_equal(got->n_evicted, c->n_ev);
	SAME(got->evicted, c->ev, c->n_ev);
	SAME(got->evicted_scores, c->ev_score, c->n_ev);
	SAME(got->evicted_weights, c->ev_w, c->n_ev);
	assert_int_equal(got->cutoff_pos, c->cutoff_pos);
	assert_true(got->cutoff_value == c->cutoff_value);
	assert_int_equal(engine_len(run->e[qh], id), c->len);
	SAME(engine_positions(run->e[qh], id), c->pos, c->len);
	SAME(engine_scores(run->e[qh], id), c->score, c->len);
}

static double model_rand(unsigned long long *s, bool ties)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	const double u = (double)(*s >> 11) / 9007199254740992.0;
	return ties ? (double)((int)(u * 3.0) - 1) : u * 4.0 - 2.0;
}

/* A random model: LAYERS x HEADS query heads over KV kv heads each. */
static struct scene *model_scene(int layers, int heads, int kv, int n, int dim, int prompt,
                                 bool attention, bool ties, unsigned seed)
{
	struct scene *sc =
	        fixture_base(n, dim, 0, 0, attention ? SCENE_ATTENTION : SCENE_VECTOR, NULL);
	sc->layers = layers;
	sc->heads = heads;
	sc->kv_heads = kv;
	sc->prompt = prompt;
	unsigned long long s = seed;
	const size_t qn = (size_t)layers * (size_t)heads * (size_t)n * (size_t)dim;
	const size_t kn = (size_t)layers * (size_t)kv * (size_t)n * (size_t)dim;
	sc->v = malloc(kn * sizeof *sc->v);
	for (size_t i = 0; i < kn; i++)
		sc->v[i] = model_rand(&s, false);
	if (attention) {
		const size_t rows = scene_attn_offset(n);
		sc->attn = malloc((size_t)layers * (size_t)heads * rows * sizeof *sc->attn);
		for (int qh = 0; qh < layers * heads; qh++)
			for (int i = 0; i < n; i++) {
				double *row = sc->attn + (size_t)qh * rows + scene_attn_offset(i),
				       sum = 0;
				for (int j = 0; j <= i; j++)
					sum += row[j] = ties ? 1.0 + (model_rand(&s, true) + 1.0)
					                     : 0.05 + fabs(model_rand(&s, false));
				for (int j = 0; j <= i; j++)
					row[j] /= sum;
			}
		return sc;
	}
	sc->q = malloc(qn * sizeof *sc->q);
	sc->k = malloc(kn * sizeof *sc->k);
	for (size_t i = 0; i < qn; i++)
		sc->q[i] = model_rand(&s, ties);
	for (size_t i = 0; i < kn; i++)
		sc->k[i] = model_rand(&s, ties);
	return sc;
}

/* The reference of SC with the budget RB, before its first step. */
static struct ref_model *ref_model_new(const struct scene *sc, const struct policy_budget *rb)
{
	struct ref_model *r = calloc(1, sizeof *r);
	r->sc = sc;
	r->b = *rb;
	r->layers = sc->layers;
	r->heads = heads_per_layer(sc);
	r->kv = heads_kv_count(sc);
	r->group = heads_group(sc);
	const size_t qhs = (size_t)r->layers * (size_t)r->heads;
	r->c = calloc((size_t)r->layers * (size_t)r->kv * POLICY_COUNT, sizeof *r->c);
	r->w = calloc((size_t)r->heads * 4096, sizeof *r->w);
	r->out = calloc(qhs * POLICY_COUNT * (size_t)sc->dim, sizeof *r->out);
	r->hw = calloc(qhs * POLICY_COUNT * 4096, sizeof *r->hw);
	r->hm = calloc(qhs * POLICY_COUNT, sizeof *r->hm);
	r->hs = calloc(qhs * POLICY_COUNT, sizeof *r->hs);
	return r;
}

static void ref_model_free(struct ref_model *r)
{
	if (!r)
		return;
	free(r->c);
	free(r->w);
	free(r->out);
	free(r->hw);
	free(r->hm);
	free(r->hs);
	free(r);
}

/*
 * SC as pyramidkv.granularity=query_head sees it (KVCache-Factory's
 * repeat_kv before update_kv): every query head with a copy of its key/
 * value head's keys and values, as many kv heads as query heads, so that
 * the reference keeps a cache per query head scored by that head alone.
 */
static struct scene *repeat_kv_scene(const struct scene *sc)
{
	struct scene *rs = fixture_base(sc->n, sc->dim, 0, 0, sc->mode, NULL);
	const int heads = heads_per_layer(sc), group = heads_group(sc);
	const int kv = heads / group;
	rs->layers = sc->layers;
	rs->heads = heads;
	rs->kv_heads = heads;
	rs->prompt = sc->prompt;
	rs->scale = sc->scale;
	const size_t block = (size_t)sc->n * (size_t)sc->dim;
	const size_t qhs = (size_t)sc->layers * (size_t)heads;
	if (sc->attn)
		rs->attn = fixture_copy(sc->attn, qhs * scene_attn_offset(sc->n));
	if (sc->q)
		rs->q = fixture_copy(sc->q, qhs * block);
	double **to[] = {&rs->k, &rs->v};
	const double *from[] = {sc->k, sc->v};
	for (int a = 0; a < 2; a++) {
		if (!from[a])
			continue;
		*to[a] = malloc(qhs * block * sizeof **to[a]);
		for (size_t qh = 0; qh < qhs; qh++) {
			const size_t l = qh / (size_t)heads, h = qh % (size_t)heads;
			memcpy(*to[a] + qh * block,
			       from[a] + (l * (size_t)kv + h / (size_t)group) * block,
			       block * sizeof **to[a]);
		}
	}
	return rs;
}

/* The engine against the reference with SET's settings (--policy-opt).
 * With pyramidkv.granularity=query_head on grouped heads PyramidKV's
 * caches are checked against the reference of repeat_kv_scene. */
static void compare_model_set(const struct scene *sc, int heavy, int recent, int interval,
                              const struct policy_settings *set)
{
	const struct policy_budget rb = {heavy,    recent, policy_default_sinks(heavy + recent),
	                                 sc->n,    0,      0,
	                                 interval, 0,      *set};
	const struct budget b = {heavy,    recent,     policy_default_sinks(heavy + recent),
	                         interval, sc->prompt, *set};
	struct ref_model *r = ref_model_new(sc, &rb), *rq = NULL;
	struct scene *rs = NULL;
	if (set->p[POLICY_PYRAMIDKV].granularity == POLICY_GRANULARITY_QUERY_HEAD &&
	    heads_group(sc) > 1) {
		rs = repeat_kv_scene(sc);
		rq = ref_model_new(rs, &rb);
	}
	struct heads_run run;
	assert_int_equal(heads_run_init(&run, sc, &b), 0);
	int steps = 0;
	while (heads_run_step(&run)) {
		model_step(r);
		if (rq)
			model_step(rq);
		for (int qh = 0; qh < run.count; qh++)
			for (int id = 0; id < POLICY_COUNT; id++)
				check_model_head(rq && id == POLICY_PYRAMIDKV ? rq : r, &run, qh,
				                 id);
		steps++;
	}
	assert_int_equal(steps, sc->n);
	heads_run_done(&run);
	ref_model_free(r);
	ref_model_free(rq);
	if (rs)
		scene_free(rs);
}

static void compare_model(const struct scene *sc, int heavy, int recent, int interval)
{
	const struct policy_settings none = {0};
	compare_model_set(sc, heavy, recent, interval, &none);
}

static void test_model_scenes(void **state)
{
	(void)state;
	/* layers, heads, kv heads, n, dim, prompt, heavy, recent,
	 * attention, ties: groups of 1, 2 and 4; prompts shorter and longer
	 * than the budget, and the whole scene; no heavy part, none recent;
	 * SnapKV's window (64) within the budget. */
	const int shapes[][10] = {
	        {1, 2, 1, 30, 3, 0, 2, 2, 0, 0},
	        {2, 4, 2, 40, 8, 12, 3, 3, 0, 0},
	        {3, 4, 1, 35, 5, 3, 2, 4, 0, 1},
	        {2, 2, 2, 50, 9, 20, 4, 2, 0, 0},
	        {1, 8, 2, 45, 4, 45, 3, 3, 0, 0},
	        {2, 4, 4, 40, 6, 10, 0, 5, 0, 1},
	        {2, 4, 2, 40, 1, 8, 5, 0, 1, 0},
	        {1, 6, 3, 50, 2, 25, 3, 2, 1, 1},
	        {1, 1, 1, 30, 4, 9, 2, 2, 0, 0},
	        {2, 4, 2, 70, 17, 30, 6, 6, 0, 0},
	        /* Prompts longer than SnapKV's window of 64 and budgets
	         * larger than it, so that it scores and selects. */
	        {2, 4, 2, 130, 5, 100, 40, 30, 0, 0},
	        {1, 4, 1, 120, 3, 90, 35, 35, 1, 0},
	        {2, 2, 2, 110, 2, 100, 34, 34, 0, 1},
	        {1, 2, 1, 100, 4, 80, 40, 26, 1, 1},
	        /* PyramidKV where P - W bounds its schedule: 90, 80, 70 kept. */
	        {3, 2, 1, 110, 3, 90, 40, 40, 0, 0},
	        /* AdaKV's heads sharing a layer's budget: groups of 1 and 2,
	         * ties, attention. */
	        {2, 4, 4, 100, 3, 90, 35, 35, 0, 0},
	        {1, 4, 2, 96, 2, 88, 36, 34, 0, 1},
	        {2, 6, 3, 100, 4, 92, 40, 30, 1, 0},
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const int *x = shapes[i];
		struct scene *sc = model_scene(x[0], x[1], x[2], x[3], x[4], x[5], x[8], x[9],
		                               (unsigned)i + 7);
		compare_model(sc, x[6], x[7], 1);
		scene_free(sc);
	}
	/* AdaKV's safeguard at work: kv head 1 attends only to the four
	 * newest positions, so every score it has before the window is lower
	 * than kv head 0's, and equal to each other; 2 (630 - 340) = 580 of
	 * the 2 x 566 go, more than its 566 - 4, so it keeps its int(0.2 x
	 * 340) - 64 = 4 and kv head 0 the rest. */
	struct scene *sc = model_scene(1, 2, 2, 640, 1, 630, true, false, 99);
	for (int i = 0; i < sc->n; i++) {
		double *row = sc->attn + scene_attn_offset(sc->n) + scene_attn_offset(i), sum = 0.0;
		for (int j = 0; j <= i; j++)
			sum += row[j] = j >= i - 3 ? 1.0 : 1e-6;
		for (int j = 0; j <= i; j++)
			row[j] /= sum;
	}
	compare_model(sc, 170, 170, 1);
	scene_free(sc);
}

/* Compressing at an interval (design §2): every INTERVAL-th step from the
 * prompt's end, on vector and attention scenes of one head (no prompt)
 * and on layered, grouped scenes with prompts, intervals 2 to 9 against
 * budgets below, at and above them. */
static void test_interval_scenes(void **state)
{
	(void)state;
	/* n, dim, heavy, recent, interval */
	const int heads[][5] = {
	        {40, 3, 2, 2, 2},
	        {60, 8, 0, 5, 3},
	        {70, 9, 4, 0, 5},
	        {50, 2, 1, 1, 9},
	};
	for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
		const int *x = heads[i];
		struct scene *sc = fixture_random(x[0], x[1], 0, 0, (unsigned)i + 31);
		compare_every(sc, x[2], x[3], x[4]);
		scene_free(sc);
	}
	struct scene *sc = fixture_random_attention(45, 2, true, false, 41);
	compare_every(sc, 3, 2, 4);
	scene_free(sc);
	sc = fixture_random_attention(45, 2, true, true, 42);
	compare_every(sc, 2, 2, 3);
	scene_free(sc);
	/* layers, heads, kv heads, n, dim, prompt, heavy, recent, attention,
	 * ties, interval */
	const int models[][11] = {
	        {2, 4, 2, 40, 8, 12, 3, 3, 0, 0, 3},     {1, 2, 1, 30, 3, 0, 2, 2, 0, 0, 4},
	        {3, 4, 1, 35, 5, 3, 2, 4, 0, 1, 2},      {2, 4, 4, 40, 6, 10, 0, 5, 0, 1, 7},
	        {2, 4, 2, 40, 1, 8, 5, 0, 1, 0, 5},      {1, 6, 3, 50, 2, 25, 3, 2, 1, 1, 6},
	        {2, 4, 2, 130, 5, 100, 40, 30, 0, 0, 8}, {1, 8, 2, 45, 4, 45, 3, 3, 0, 0, 2},
	};
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
		const int *x = models[i];
		sc = model_scene(x[0], x[1], x[2], x[3], x[4], x[5], x[8], x[9], (unsigned)i + 51);
		compare_model(sc, x[6], x[7], x[10]);
		scene_free(sc);
	}
}

/* --policy-opt's window, kernel and max pooling on every SnapKV-scored
 * policy, on prompts past the window they set: the engine and the
 * reference choose alike with them. */
static void test_settings_scenes(void **state)
{
	(void)state;
	static const enum policy_id snap[] = {POLICY_SNAPKV,    POLICY_SNAPKV_WINDOW,
	                                      POLICY_PYRAMIDKV, POLICY_PYRAMIDKV_WINDOW,
	                                      POLICY_ADAKV,     POLICY_ADAKV_WINDOW};
	/* layers, heads, kv heads, n, dim, prompt, heavy, recent, attention,
	 * window, kernel, max pooling, pyramidkv's cache per query head
	 * (query_head: groups of 2 and 4, vector and attention scenes, and
	 * one query head per kv head, where it is kv_head's). */
	const int shapes[][13] = {
	        {2, 4, 2, 40, 5, 24, 8, 6, 0, 8, 3, 0, 0},
	        {1, 4, 2, 50, 3, 40, 10, 10, 1, 12, 1, 1, 0},
	        {2, 4, 4, 110, 4, 90, 40, 30, 0, 0, 7, 1, 0},
	        {2, 4, 2, 40, 5, 24, 8, 6, 0, 8, 3, 0, 1},
	        {3, 4, 1, 50, 3, 40, 10, 10, 1, 12, 1, 1, 1},
	        {2, 8, 2, 60, 4, 48, 12, 10, 0, 6, 3, 1, 1},
	        {2, 4, 4, 40, 4, 30, 6, 6, 0, 4, 1, 0, 1},
	};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const int *x = shapes[i];
		struct policy_settings set = {0};
		for (size_t k = 0; k < sizeof snap / sizeof snap[0]; k++)
			set.p[snap[k]] = (struct policy_setting){
			        x[9], x[10], x[11] ? POLICY_POOL_MAX : POLICY_POOL_MEAN,
			        POLICY_ALLOC_KVPRESS, POLICY_GRANULARITY_KV_HEAD};
		set.p[POLICY_PYRAMIDKV].granularity =
		        x[12] ? POLICY_GRANULARITY_QUERY_HEAD : POLICY_GRANULARITY_KV_HEAD;
		struct scene *sc = model_scene(x[0], x[1], x[2], x[3], x[4], x[5], x[8], false,
		                               (unsigned)i + 61);
		compare_model_set(sc, x[6], x[7], 1, &set);
		scene_free(sc);
	}
}

int main(void)
{
	const char *kernel = getenv("H2O_KERNEL");
	if (kernel && *kernel) {
		const int rc = engine_kernel_select(kernel);
		if (rc == -1) {
			printf("H2O_KERNEL=%s: this machine cannot execute it, skipped\n", kernel);
			return 77;
		}
		if (rc < 0 || strcmp(engine_kernel_name(), kernel) != 0) {
			fprintf(stderr, "H2O_KERNEL=%s: not a variant of the kernels\n", kernel);
			return 1;
		}
	}
	printf("kernels: %s\n", engine_kernel_name());
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_vector_scenes),    cmocka_unit_test(test_long_scene),
	        cmocka_unit_test(test_attention_scenes), cmocka_unit_test(test_mixed_stepping),
	        cmocka_unit_test(test_model_scenes),     cmocka_unit_test(test_interval_scenes),
	        cmocka_unit_test(test_settings_scenes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
