/*
 * scene_fixture: scenes built in memory for unit tests, freed with
 * scene_free like loaded ones.
 */
#ifndef H2O_TEST_SCENE_FIXTURE_H
#define H2O_TEST_SCENE_FIXTURE_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/engine.h"
#include "h2o/scene.h"

/* Field by field: the struct has padding, so memcmp would compare noise. */
static inline int fixture_metrics_equal(const struct step_metrics *a, const struct step_metrics *b)
{
	return a->tokens == b->tokens && a->kv == b->kv && a->has_out == b->has_out &&
	       a->out_err == b->out_err && a->out_cos == b->out_cos &&
	       a->attn_recall == b->attn_recall && a->overlap_h2o == b->overlap_h2o;
}

static inline char *fixture_strdup(const char *s)
{
	char *d = malloc(strlen(s) + 1);
	strcpy(d, s);
	return d;
}

/* A copy of N doubles, or NULL for NULL. */
static inline double *fixture_copy(const double *src, size_t n)
{
	if (!src)
		return NULL;
	double *d = malloc(n * sizeof *d);
	memcpy(d, src, n * sizeof *d);
	return d;
}

/* What every fixture scene has: budgets, sizes and token texts (TEXT may
 * be NULL: every token is "t"). */
static inline struct scene *fixture_base(int n, int dim, int heavy, int recent,
                                         enum scene_mode mode, const char *const *text)
{
	struct scene *sc = calloc(1, sizeof *sc);
	sc->title = fixture_strdup("fixture");
	sc->description = fixture_strdup("");
	sc->watch = fixture_strdup(""); /* never NULL, as the loader promises */
	sc->heavy = heavy;
	sc->recent = recent;
	sc->dim = dim;
	sc->n = n;
	sc->mode = mode;
	sc->scale = 1.0 / sqrt((double)dim);
	sc->text = calloc((size_t)n, sizeof *sc->text);
	for (int i = 0; i < n; i++)
		sc->text[i] = fixture_strdup(text ? text[i] : "t");
	return sc;
}

/* An attention scene from packed rows (row i has i + 1 weights). V may be
 * NULL. */
static inline struct scene *fixture_attention(int n, int dim, int heavy, int recent,
                                              const double *rows, const double *v,
                                              const char *const *text)
{
	struct scene *sc = fixture_base(n, dim, heavy, recent, SCENE_ATTENTION, text);
	sc->attn = fixture_copy(rows, scene_attn_offset(n));
	sc->v = fixture_copy(v, (size_t)n * (size_t)dim);
	return sc;
}

/* A vector scene; q, k, v are n x dim. */
static inline struct scene *fixture_vector(int n, int dim, int heavy, int recent, double scale,
                                           const double *q, const double *k, const double *v)
{
	struct scene *sc = fixture_base(n, dim, heavy, recent, SCENE_VECTOR, NULL);
	const size_t cells = (size_t)n * (size_t)dim;
	sc->scale = scale;
	sc->q = fixture_copy(q, cells);
	sc->k = fixture_copy(k, cells);
	sc->v = fixture_copy(v, cells);
	return sc;
}

/* A random vector scene: a small LCG, so runs are the same everywhere. */
static inline struct scene *fixture_random(int n, int dim, int heavy, int recent, unsigned seed)
{
	const size_t cells = (size_t)n * (size_t)dim;
	double *buf = malloc(3 * cells * sizeof *buf);
	unsigned long long s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	for (size_t i = 0; i < 3 * cells; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		buf[i] = (double)(s >> 11) / 9007199254740992.0 * 4.0 - 2.0;
	}
	struct scene *sc = fixture_vector(n, dim, heavy, recent, 1.0 / sqrt((double)dim), buf,
	                                  buf + cells, buf + 2 * cells);
	free(buf);
	return sc;
}

/* A random attention scene (rows normalised; UNIFORM gives equal weights),
 * with random values when VALUES. */
static inline struct scene *fixture_random_attention(int n, int dim, bool values, bool uniform,
                                                     unsigned seed)
{
	double *rows = malloc(scene_attn_offset(n) * sizeof *rows);
	double *v = values ? malloc((size_t)n * (size_t)dim * sizeof *v) : NULL;
	unsigned long long s = seed;
	for (int i = 0; i < n; i++) {
		double *row = rows + scene_attn_offset(i), sum = 0.0;
		for (int j = 0; j <= i; j++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			row[j] = uniform ? 1.0 : 0.05 + (double)(s >> 11) / 9007199254740992.0;
			sum += row[j];
		}
		for (int j = 0; j <= i; j++)
			row[j] /= sum;
	}
	for (int i = 0; values && i < n * dim; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		v[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
	}
	struct scene *sc = fixture_attention(n, dim, 0, 0, rows, v, NULL);
	free(rows);
	free(v);
	return sc;
}

/* A random vector scene: LAYERS x HEADS query heads over KV kv heads. */
static inline struct scene *fixture_random_layers(int layers, int heads, int kv, int n, int dim,
                                                  int prompt, unsigned long long seed)
{
	struct scene *sc = fixture_base(n, dim, 0, 0, SCENE_VECTOR, NULL);
	sc->layers = layers;
	sc->heads = heads;
	sc->kv_heads = kv;
	sc->prompt = prompt;
	const size_t qn = (size_t)layers * (size_t)heads * (size_t)n * (size_t)dim;
	const size_t kn = (size_t)layers * (size_t)kv * (size_t)n * (size_t)dim;
	sc->q = malloc(qn * sizeof *sc->q);
	sc->k = malloc(kn * sizeof *sc->k);
	sc->v = malloc(kn * sizeof *sc->v);
	for (size_t i = 0; i < qn + 2 * kn; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		const double u = (double)(seed >> 11) / 9007199254740992.0 * 4.0 - 2.0;
		if (i < qn)
			sc->q[i] = u;
		else if (i < qn + kn)
			sc->k[i - qn] = u;
		else
			sc->v[i - qn - kn] = u;
	}
	return sc;
}

#endif
