/*
 * layered_fixture: a random vector scene of LAYERS layers, each of HEADS
 * query heads sharing KV key/value heads, with a prompt of PROMPT tokens,
 * built in memory (q: one n x dim block per query head, layer after layer;
 * k and v: one per kv head), freed with scene_free.
 */
#ifndef H2O_TEST_LAYERED_FIXTURE_H
#define H2O_TEST_LAYERED_FIXTURE_H

#include "scene_fixture.h"

static inline double *layered_random(size_t count, unsigned long long *s)
{
	double *d = malloc(count * sizeof *d);
	for (size_t i = 0; i < count; i++) {
		*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
		d[i] = (double)(*s >> 11) / 9007199254740992.0 * 4.0 - 2.0;
	}
	return d;
}

static inline struct scene *fixture_layered(int n, int dim, int heavy, int recent, int layers,
                                            int heads, int kv, int prompt, unsigned seed)
{
	static const char *const words[] = {"The", "cat", "sat", "on",  "the",
	                                    "mat", "and", "it",  "was", "warm"};
	const char **text = malloc((size_t)n * sizeof *text);
	for (int i = 0; i < n; i++)
		text[i] = words[i % 10];
	struct scene *sc = fixture_base(n, dim, heavy, recent, SCENE_VECTOR, text);
	free(text);
	free(sc->title);
	sc->title = fixture_strdup("layered");
	sc->layers = layers;
	sc->heads = heads;
	sc->kv_heads = kv;
	sc->prompt = prompt;
	const size_t block = (size_t)n * (size_t)dim;
	unsigned long long s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	sc->q = layered_random((size_t)layers * (size_t)heads * block, &s);
	sc->k = layered_random((size_t)layers * (size_t)kv * block, &s);
	sc->v = layered_random((size_t)layers * (size_t)kv * block, &s);
	return sc;
}

#endif
