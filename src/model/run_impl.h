/*
 * run_impl.h: what a run is (llama.h's struct llama_run), shared by the
 * runs' own code (run.c: made, copied, read, evicted) and the forward pass
 * that steps them (forward.c). Private to the model stage.
 */
#ifndef H2O_MODEL_RUN_IMPL_H
#define H2O_MODEL_RUN_IMPL_H

#include <stddef.h>

#include "model_impl.h"

/* One layer's key/value head's cache: N slots of capacity cap. The
 * keys twice: as rows, and in tiles of MODEL_PANEL slots for the scores
 * (model_impl.h, scores_fn). */
struct cache {
	int n;
	int *pos;
	float *k, *v; /* head_size floats per slot */
	float *kt;    /* head_size x MODEL_PANEL floats per tile */
};

struct llama_run {
	const struct llama_model *m;
	int pos;             /* the last step's, -1 before the first */
	int cap;             /* slots per cache: positions 0 .. cap - 1 */
	struct cache *cache; /* n_layers * n_kv_heads */
	float *att;          /* n_layers * n_heads * cap weights */
	float *query;        /* n_layers * dim, after RoPE */
	/* With llama_run_keep_prerope: every position's queries before RoPE,
	 * n_layers * n_heads rows of cap * head_size floats; else NULL. */
	float *prerope;
	float *x, *xb, *xb2, *q, *k, *v, *hb, *hb2, *logits;
	float *fcr, *fci; /* this step's RoPE cos and sin, head_size / 2 each */
	float *mem;
	int *ipos;
};

/* Slot S's key K into the tiles. */
static inline void put_tile(struct cache *ca, int s, const float *k, size_t hs)
{
	float *t =
	        ca->kt + (size_t)(s / MODEL_PANEL) * hs * MODEL_PANEL + (size_t)(s % MODEL_PANEL);
	for (size_t i = 0; i < hs; i++)
		t[i * MODEL_PANEL] = k[i];
}

static inline struct cache *cache_of(const struct llama_run *r, int layer, int kv_head)
{
	return &r->cache[layer * r->m->c.n_kv_heads + kv_head];
}

#endif
