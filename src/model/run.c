/*
 * run: a run of a model and its KV caches (llama.h): made for a number of
 * positions, copied, reset and freed; what its last step left (logits,
 * weights, queries, the slots' positions, keys and values) read; and its
 * slots evicted (llama_run_keep). The forward pass that steps a run is
 * forward.c's.
 */
#include "run_impl.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The floats a run of M with caches of CAP slots takes. */
static size_t run_floats(const struct llama_model *m, size_t cap)
{
	const struct llama_config *c = &m->c;
	const size_t S = cap, hs = (size_t)c->head_size, D = (size_t)c->dim;
	const size_t Q = (size_t)m->a.q_dim, W = D > Q ? D : Q;
	const size_t caches = (size_t)c->n_layers * (size_t)c->n_kv_heads;
	const size_t tiles = (size_t)packed_panels((int)cap) * MODEL_PANEL * hs;
	return caches * (2 * S * hs + tiles) + (size_t)c->n_layers * (size_t)c->n_heads * S +
	       (size_t)c->n_layers * Q + 5 * D + W + Q + 2 * (size_t)c->hidden_dim +
	       (size_t)c->vocab_size;
}

/* POSITIONS within [1, seq_len], or seq_len. */
static size_t run_cap(const struct llama_model *m, int positions)
{
	return (size_t)(positions >= 1 && positions < m->c.seq_len ? positions : m->c.seq_len);
}

size_t llama_run_bytes_len(const struct llama_model *m, int positions)
{
	const size_t S = run_cap(m, positions);
	const size_t caches = (size_t)m->c.n_layers * (size_t)m->c.n_kv_heads;
	return run_floats(m, S) * sizeof(float) + caches * S * sizeof(int) +
	       caches * sizeof(struct cache);
}

size_t llama_run_bytes(const struct llama_model *m)
{
	return llama_run_bytes_len(m, m->c.seq_len);
}

struct llama_run *llama_run_new(const struct llama_model *m)
{
	return llama_run_new_len(m, m->c.seq_len);
}

struct llama_run *llama_run_new_len(const struct llama_model *m, int positions)
{
	const struct llama_config *c = &m->c;
	const size_t S = run_cap(m, positions), hs = (size_t)c->head_size, D = (size_t)c->dim;
	const size_t Q = (size_t)m->a.q_dim, W = D > Q ? D : Q;
	const size_t caches = (size_t)c->n_layers * (size_t)c->n_kv_heads;
	const size_t tiles = (size_t)packed_panels((int)S) * MODEL_PANEL * hs;
	/* The loaders proved this fits the limits (llama.c, run_bytes). */
	const size_t floats = run_floats(m, S);
	struct llama_run *r = calloc(1, sizeof *r);
	if (r == NULL)
		return NULL;
	r->m = m;
	r->cap = (int)S;
	r->cache = calloc(caches, sizeof *r->cache);
	r->mem = calloc(floats, sizeof *r->mem);
	r->ipos = calloc(caches * S, sizeof *r->ipos);
	if (r->cache == NULL || r->mem == NULL || r->ipos == NULL) {
		llama_run_free(r);
		return NULL;
	}
	float *f = r->mem;
	for (size_t i = 0; i < caches; i++) {
		r->cache[i].pos = r->ipos + i * S;
		r->cache[i].k = f;
		r->cache[i].v = f + S * hs;
		r->cache[i].kt = f + 2 * S * hs;
		f += 2 * S * hs + tiles;
	}
#define TAKE(field, count)    \
	do {                  \
		r->field = f; \
		f += (count); \
	} while (0)
	TAKE(att, (size_t)c->n_layers * (size_t)c->n_heads * S);
	TAKE(query, (size_t)c->n_layers * Q);
	TAKE(x, D);
	TAKE(xb, W);
	TAKE(xb2, D);
	TAKE(q, Q);
	TAKE(k, (size_t)c->kv_dim);
	TAKE(v, (size_t)c->kv_dim);
	TAKE(fcr, hs / 2);
	TAKE(fci, hs / 2);
	TAKE(hb, (size_t)c->hidden_dim);
	TAKE(hb2, (size_t)c->hidden_dim);
	TAKE(logits, (size_t)c->vocab_size);
#undef TAKE
	llama_run_reset(r);
	return r;
}

void llama_run_free(struct llama_run *r)
{
	if (r == NULL)
		return;
	free(r->ipos);
	free(r->prerope);
	free(r->mem);
	free(r->cache);
	free(r);
}

void llama_run_reset(struct llama_run *r)
{
	const struct llama_config *c = &r->m->c;
	for (int i = 0; i < c->n_layers * c->n_kv_heads; i++)
		r->cache[i].n = 0;
	r->pos = -1;
}

/* The floats of R's queries before RoPE (llama_run_keep_prerope). */
static size_t prerope_floats(const struct llama_run *r)
{
	const struct llama_config *c = &r->m->c;
	return (size_t)c->n_layers * (size_t)c->n_heads * (size_t)r->cap * (size_t)c->head_size;
}

int llama_run_copy(struct llama_run *dst, const struct llama_run *src)
{
	if (dst == src)
		return 0;
	if (dst->m != src->m || dst->cap != src->cap || (dst->prerope && !src->prerope))
		return -1;
	const struct llama_model *m = src->m;
	const size_t caches = (size_t)m->c.n_layers * (size_t)m->c.n_kv_heads;
	if (dst->prerope)
		memcpy(dst->prerope, src->prerope, prerope_floats(src) * sizeof *dst->prerope);
	memcpy(dst->mem, src->mem, run_floats(m, (size_t)src->cap) * sizeof *dst->mem);
	memcpy(dst->ipos, src->ipos, caches * (size_t)src->cap * sizeof *dst->ipos);
	for (size_t i = 0; i < caches; i++)
		dst->cache[i].n = src->cache[i].n;
	dst->pos = src->pos;
	return 0;
}

size_t llama_run_prerope_bytes(const struct llama_model *m, int positions)
{
	const struct llama_config *c = &m->c;
	return (size_t)c->n_layers * (size_t)c->n_heads * run_cap(m, positions) *
	       (size_t)c->head_size * sizeof(float);
}

int llama_run_keep_prerope(struct llama_run *r)
{
	if (r->prerope == NULL)
		r->prerope = calloc(prerope_floats(r), sizeof *r->prerope);
	return r->prerope ? 0 : -1;
}

const float *llama_run_prerope(const struct llama_run *r, int layer, int head)
{
	if (r->prerope == NULL)
		return NULL;
	const size_t row = (size_t)r->cap * (size_t)r->m->c.head_size;
	return r->prerope + ((size_t)layer * (size_t)r->m->c.n_heads + (size_t)head) * row;
}

const float *llama_logits(const struct llama_run *r)
{
	return r->logits;
}

int llama_run_pos(const struct llama_run *r)
{
	return r->pos;
}

int llama_run_len(const struct llama_run *r, int layer, int kv_head)
{
	return cache_of(r, layer, kv_head)->n;
}

const int *llama_run_positions(const struct llama_run *r, int layer, int kv_head)
{
	return cache_of(r, layer, kv_head)->pos;
}

const float *llama_run_keys(const struct llama_run *r, int layer, int kv_head)
{
	return cache_of(r, layer, kv_head)->k;
}

const float *llama_run_values(const struct llama_run *r, int layer, int kv_head)
{
	return cache_of(r, layer, kv_head)->v;
}

const float *llama_run_weights(const struct llama_run *r, int layer, int head)
{
	const struct llama_config *c = &r->m->c;
	return r->att + ((size_t)layer * (size_t)c->n_heads + (size_t)head) * (size_t)r->cap;
}

const float *llama_run_query(const struct llama_run *r, int layer, int head)
{
	const struct llama_config *c = &r->m->c;
	return r->query + (size_t)layer * (size_t)r->m->a.q_dim +
	       (size_t)head * (size_t)c->head_size;
}

void llama_run_keep(struct llama_run *r, int layer, int kv_head, const unsigned char *keep)
{
	const struct llama_config *c = &r->m->c;
	const size_t hs = (size_t)c->head_size;
	const int kv_mul = c->n_heads / c->n_kv_heads;
	struct cache *ca = cache_of(r, layer, kv_head);
	int first = 0;

	while (first < ca->n && keep[first])
		first++;
	/* Each run of kept slots after the first eviction moves as a block. */
	int n = first;
	for (int i = first; i < ca->n;) {
		if (!keep[i]) {
			i++;
			continue;
		}
		int j = i;
		while (j < ca->n && keep[j])
			j++;
		const size_t len = (size_t)(j - i);
		memmove(ca->pos + n, ca->pos + i, len * sizeof *ca->pos);
		memmove(ca->k + (size_t)n * hs, ca->k + (size_t)i * hs, len * hs * sizeof(float));
		memmove(ca->v + (size_t)n * hs, ca->v + (size_t)i * hs, len * hs * sizeof(float));
		for (int h = kv_head * kv_mul; h < (kv_head + 1) * kv_mul; h++) {
			float *w = (float *)llama_run_weights(r, layer, h);
			memmove(w + n, w + i, len * sizeof *w);
		}
		n += (int)len;
		i = j;
	}
	/* The tiles from the first slot that moved on. */
	for (int s = first; s < n; s++)
		put_tile(ca, s, ca->k + (size_t)s * hs, hs);
	ca->n = n;
}
