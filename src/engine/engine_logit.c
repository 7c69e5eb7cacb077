/*
 * engine_logit: a logit and a weight one at a time, and the logits of one
 * query against a set of keys, computed exactly as a step computes them
 * (engine.h, engine_replay.h): the timeline recomputes past steps with
 * them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_exp.h"
#include "engine_kernel.h"
#include "h2o/engine.h"
#include "h2o/engine_replay.h"
#include "h2o/scene.h"

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

double engine_weight(double logit, double max, double sum)
{
	return engine_exp(logit - max) / sum;
}

struct engine_keys {
	const struct scene *sc;
	int count, tiles;
	double *keys;  /* tiles * KERNEL_LANES * dim, kernel_put_key's layout */
	double *logit; /* tiles * KERNEL_LANES */
};

struct engine_keys *engine_keys_new(const struct scene *sc, const int *pos, int count)
{
	struct engine_keys *ks = calloc(1, sizeof *ks);
	if (!ks)
		return NULL;
	const size_t dim = (size_t)sc->dim;
	ks->sc = sc;
	ks->count = count;
	ks->tiles = (count + KERNEL_LANES - 1) / KERNEL_LANES;
	ks->keys = calloc((size_t)ks->tiles * KERNEL_LANES * dim, sizeof *ks->keys);
	ks->logit = malloc(((size_t)ks->tiles * KERNEL_LANES + 1) * sizeof *ks->logit);
	if (!ks->keys || !ks->logit) {
		engine_keys_free(ks);
		return NULL;
	}
	for (int i = 0; i < count; i++)
		if (pos[i] >= 0 && pos[i] < sc->n) /* else a zero key */
			kernel_put_key(ks->keys, i, sc->k + (size_t)pos[i] * dim, sc->dim);
	return ks;
}

void engine_keys_logits(const struct engine_keys *ks, int q, double *out)
{
	const struct scene *sc = ks->sc;
	kernel_slot_logits(ks->keys, ks->tiles, sc->dim, sc->q + (size_t)q * (size_t)sc->dim,
	                   sc->scale, ks->logit);
	memcpy(out, ks->logit, (size_t)ks->count * sizeof *out);
}

void engine_keys_free(struct engine_keys *ks)
{
	if (!ks)
		return;
	free(ks->keys);
	free(ks->logit);
	free(ks);
}
