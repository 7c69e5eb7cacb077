/*
 * forward: the forward pass that steps runs (llama.h; a run and its KV
 * caches are run.c's).
 *
 * A step is llama2.c's forward() with the cache made of slots: each layer
 * and key/value head holds (position, key row, value row) slots in
 * ascending position order, the new token's appended at the end, and
 * attention goes over the slots held, whatever was evicted in between.
 * Every operation outside the matrix products is run.c's, in its order;
 * llama_step and llama_step_batch share them (rmsnorm, rope_table,
 * attend, swiglu) and differ only in how the products are scheduled: a
 * plain dot product per output in llama_step, panels of sixteen rows for
 * up to eight runs at once in the batch (model_kernel.c), summing each
 * output in the same order, so both give the same bits.
 */
#include "run_impl.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The vectors one position of a step works in: a run's own, or one of a
 * span's lanes (llama_step_span), each position of the span its own. */
struct lane {
	float *x, *xb, *xb2, *q, *k, *v, *hb, *hb2, *logits;
	float *fcr, *fci; /* the position's RoPE cos and sin */
	float *query;     /* n_layers * q_dim: the queries after RoPE */
	/* A span's copy of the position's weights, or NULL: n_layers *
	 * n_heads rows of ATT_STRIDE floats. */
	float *att;
	size_t att_stride;
};

static struct lane run_lane(struct llama_run *r)
{
	return (struct lane){.x = r->x,
	                     .xb = r->xb,
	                     .xb2 = r->xb2,
	                     .q = r->q,
	                     .k = r->k,
	                     .v = r->v,
	                     .hb = r->hb,
	                     .hb2 = r->hb2,
	                     .logits = r->logits,
	                     .fcr = r->fcr,
	                     .fci = r->fci,
	                     .query = r->query};
}

/* ---- run.c's operations --------------------------------------------------- */

static void rmsnorm(float *o, const float *x, const float *weight, int size, float eps)
{
	float ss = 0.0f;
	for (int j = 0; j < size; j++)
		ss += x[j] * x[j];
	ss /= size;
	ss += eps;
	ss = 1.0f / sqrtf(ss);
	for (int j = 0; j < size; j++)
		o[j] = weight[j] * (ss * x[j]);
}

static void softmax(float *x, int size)
{
	float max_val = x[0];
	for (int i = 1; i < size; i++)
		if (x[i] > max_val)
			max_val = x[i];
	float sum = 0.0f;
	for (int i = 0; i < size; i++) {
		x[i] = expf(x[i] - max_val);
		sum += x[i];
	}
	for (int i = 0; i < size; i++)
		x[i] /= sum;
}

/* The rotation of each pair of a head at position POS. */
static void rope_table(const struct llama_model *m, struct lane *ln, int pos)
{
	const int hs = m->c.head_size;
	const struct model_arch *a = &m->a;
	for (int i = 0; i < hs; i += 2) {
		const float val = model_rope_angle(a, hs, i / 2, pos);
		ln->fcr[i / 2] = cosf(val);
		ln->fci[i / 2] = sinf(val);
	}
}

static void rope(const struct llama_run *r, const struct lane *ln, float *vec)
{
	if (r->m->a.neox) {
		const int half = r->m->c.head_size / 2;
		for (int i = 0; i < half; i++) {
			const float fcr = ln->fcr[i], fci = ln->fci[i];
			const float v0 = vec[i], v1 = vec[i + half];
			vec[i] = v0 * fcr - v1 * fci;
			vec[i + half] = v0 * fci + v1 * fcr;
		}
		return;
	}
	for (int i = 0; i < r->m->c.head_size; i += 2) {
		const float fcr = ln->fcr[i / 2], fci = ln->fci[i / 2];
		const float v0 = vec[i], v1 = vec[i + 1];
		vec[i] = v0 * fcr - v1 * fci;
		vec[i + 1] = v0 * fci + v1 * fcr;
	}
}

static void embed(const struct llama_model *m, int token, float *x)
{
	model_row(&m->emb, token, x);
}

/*
 * Layer LAYER, key/value head G of run R at position POS, once q, k and v
 * are computed: rotate the group's query rows and its key row, append the
 * slot, and attend each query head of the group over the slots held, into
 * its part of xb.
 */
static void attend(struct llama_run *r, const struct lane *ln, int layer, int g, int pos)
{
	const struct llama_config *c = &r->m->c;
	const int hs = c->head_size, kv_mul = c->n_heads / c->n_kv_heads;
	struct cache *ca = cache_of(r, layer, g);

	rope(r, ln, ln->k + g * hs);
	const int s = ca->n++;
	ca->pos[s] = pos;
	memcpy(ca->k + (size_t)s * (size_t)hs, ln->k + g * hs, (size_t)hs * sizeof(float));
	memcpy(ca->v + (size_t)s * (size_t)hs, ln->v + g * hs, (size_t)hs * sizeof(float));
	put_tile(ca, s, ln->k + g * hs, (size_t)hs);

	for (int h = g * kv_mul; h < (g + 1) * kv_mul; h++) {
		float *q = ln->q + h * hs;
		float *att = (float *)llama_run_weights(r, layer, h);
		if (r->prerope != NULL)
			memcpy((float *)llama_run_prerope(r, layer, h) + (size_t)pos * (size_t)hs,
			       q, (size_t)hs * sizeof(float));
		rope(r, ln, q);
		memcpy(ln->query + (size_t)layer * (size_t)r->m->a.q_dim + (size_t)h * (size_t)hs,
		       q, (size_t)hs * sizeof(float));
		/* run.c: score = sum of q[i] * k[i], then score /= sqrtf(head_size);
		 * xb[i] = sum over t of att[t] * v[t][i]; the kernels do just that. */
		r->m->k.scores(ca->kt, ca->n, q, hs, att);
		softmax(att, ca->n);
		if (ln->att != NULL)
			memcpy(ln->att + ((size_t)layer * (size_t)c->n_heads + (size_t)h) *
			                         ln->att_stride,
			       att, (size_t)ca->n * sizeof *att);
		r->m->k.values(att, ca->v, ca->n, hs, ln->xb + h * hs);
	}
}

static void add(float *x, const float *y, int n)
{
	for (int i = 0; i < n; i++)
		x[i] += y[i];
}

/* After the q, k, v products of layer L: the biases and the per-head
 * norms a GGUF model may have (none in a llama2.c checkpoint). */
static void qkv_extra(const struct llama_model *m, const struct lane *r, int l)
{
	const struct layer_weights *w = &m->layers[l];
	const int hs = m->c.head_size;
	if (w->bq != NULL) {
		add(r->q, w->bq, m->a.q_dim);
		add(r->k, w->bk, m->c.kv_dim);
	}
	if (w->bv != NULL)
		add(r->v, w->bv, m->c.kv_dim);
	if (w->q_norm != NULL) {
		for (int h = 0; h < m->c.n_heads; h++)
			rmsnorm(r->q + h * hs, r->q + h * hs, w->q_norm, hs, m->a.norm_eps);
		for (int h = 0; h < m->c.n_kv_heads; h++)
			rmsnorm(r->k + h * hs, r->k + h * hs, w->k_norm, hs, m->a.norm_eps);
	}
}

static void swiglu(float *hb, const float *hb2, int n)
{
	for (int i = 0; i < n; i++) {
		float val = hb[i];
		val *= (1.0f / (1.0f + expf(-val)));
		val *= hb2[i];
		hb[i] = val;
	}
}

static int check_step(const struct llama_model *m, const struct llama_run *r, int token, int pos)
{
	if (r == NULL || r->m != m || token < 0 || token >= m->c.vocab_size || pos < 0 ||
	    pos >= r->cap || pos <= r->pos)
		return -1;
	return 0;
}

/* ---- one run: plain dot products ------------------------------------------ */

static void matvec(float *out, const struct packed *w, const float *x)
{
	if (w->w == NULL) {
		/* Quantised or half rows: a chunk at a time, in the same order. */
		float part[MODEL_CHUNK];
		for (int i = 0; i < w->rows; i++) {
			float val = 0.0f;
			for (size_t c0 = 0; c0 < (size_t)w->cols; c0 += MODEL_CHUNK) {
				const size_t left = (size_t)w->cols - c0;
				const size_t cw = left < MODEL_CHUNK ? left : MODEL_CHUNK;
				model_row_part(w, i, c0, cw, part);
				for (size_t j = 0; j < cw; j++)
					val += part[j] * x[c0 + j];
			}
			out[i] = val;
		}
		return;
	}
	for (int i = 0; i < w->rows; i++) {
		const float *row = w->w +
		                   (size_t)(i / MODEL_PANEL) * (size_t)w->cols * MODEL_PANEL +
		                   i % MODEL_PANEL;
		float val = 0.0f;
		for (int j = 0; j < w->cols; j++)
			val += row[(size_t)j * MODEL_PANEL] * x[j];
		out[i] = val;
	}
}

int llama_step(const struct llama_model *m, struct llama_run *r, int token, int pos)
{
	const struct llama_config *c = &m->c;
	const int D = c->dim;
	const float c_eps = m->a.norm_eps;

	if (check_step(m, r, token, pos) != 0)
		return -1;
	struct lane ln = run_lane(r);
	embed(m, token, r->x);
	rope_table(m, &ln, pos);
	for (int l = 0; l < c->n_layers; l++) {
		const struct layer_weights *w = &m->layers[l];
		rmsnorm(r->xb, r->x, w->rms_att, D, c_eps);
		matvec(r->q, &w->wq, r->xb);
		matvec(r->k, &w->wk, r->xb);
		matvec(r->v, &w->wv, r->xb);
		qkv_extra(m, &ln, l);
		for (int g = 0; g < c->n_kv_heads; g++)
			attend(r, &ln, l, g, pos);
		matvec(r->xb2, &w->wo, r->xb);
		add(r->x, r->xb2, D);
		rmsnorm(r->xb, r->x, w->rms_ffn, D, c_eps);
		matvec(r->hb, &w->w1, r->xb);
		matvec(r->hb2, &w->w3, r->xb);
		swiglu(r->hb, r->hb2, c->hidden_dim);
		matvec(r->xb, &w->w2, r->hb);
		add(r->x, r->xb, D);
	}
	rmsnorm(r->x, r->x, m->rms_final, D, c_eps);
	matvec(r->logits, &m->cls, r->x);
	r->pos = pos;
	return 0;
}

/* ---- several runs: panels, on two threads ---------------------------------- */

/* A step of several runs uses the helper from this many multiplies on. */
#define MODEL_THREADS_WORK 4e6

/* Panels (a multiple of four) each group of runs goes over before the next
 * group takes them: a batch of more than MODEL_GROUP runs. */
#define MODEL_REUSE_PANELS 8

/* Up to three products of the same input width, for every run. */
struct products {
	int nmat;
	const struct packed *w[3];
	float *out[3][LLAMA_MAX_BATCH];
	const float *in[LLAMA_MAX_BATCH];
	int total; /* panels of all the matrices */
};

struct batch {
	const struct llama_model *m;
	/* N runs, lane i run i's own; or one run (SPAN) and N lanes, lane i
	 * its position POS + i */
	struct llama_run *const *runs;
	struct lane *lanes;
	bool span;
	int n, pos, layer;
	struct products pr;
	void (*job)(struct batch *b, int part);
};

/* Part PART of the products: the first or second half of all panels. */
static void products_part(struct batch *b, int part)
{
	const struct products *pr = &b->pr;
	const int half = (pr->total / 2 + 1) / 2 * 2; /* even: panels go in pairs */
	const int from = part == 0 ? 0 : half, to = part == 0 ? half : pr->total;
	int base = 0;

	for (int i = 0; i < pr->nmat; i++) {
		const int np = packed_panels(pr->w[i]->rows);
		const int a = from > base ? from - base : 0;
		const int z = to - base < np ? to - base : np;
		/* More runs than a pass serves: the groups of runs go over a few
		 * panels at a time, so that the later groups read them from the
		 * cache rather than from memory. */
		for (int c0 = a; c0 < z; c0 += MODEL_REUSE_PANELS) {
			const int c1 = z - c0 < MODEL_REUSE_PANELS ? z : c0 + MODEL_REUSE_PANELS;
			for (int r0 = 0; r0 < b->n; r0 += MODEL_GROUP) {
				const int g = b->n - r0 < MODEL_GROUP ? b->n - r0 : MODEL_GROUP;
				b->m->k.panels(pr->w[i], c0, c1, pr->in + r0, pr->out[i] + r0, g);
			}
		}
		base += np;
	}
}

/* Part PART of the attention: half of the (run, kv head) pairs. */
static void attention_part(struct batch *b, int part)
{
	const int G = b->m->c.n_kv_heads;
	if (b->span) {
		/* Each kv head's cache takes the span's positions in order, each
		 * attending over those before it and itself. */
		const int half = (G + 1) / 2;
		for (int g = part == 0 ? 0 : half; g < (part == 0 ? half : G); g++)
			for (int j = 0; j < b->n; j++)
				attend(b->runs[0], &b->lanes[j], b->layer, g, b->pos + j);
		return;
	}
	const int items = b->n * G, half = (items + 1) / 2;
	for (int i = part == 0 ? 0 : half; i < (part == 0 ? half : items); i++)
		attend(b->runs[i / G], &b->lanes[i / G], b->layer, i % G, b->pos);
}

static void run_part(void *arg, int part)
{
	struct batch *b = arg;
	b->job(b, part);
}

static void run_job(struct batch *b, struct model_pool *pool, void (*job)(struct batch *, int))
{
	b->job = job;
	if (pool != NULL) {
		model_pool_run(pool, run_part, b);
	} else {
		job(b, 0);
		job(b, 1);
	}
}

/* The vectors of a run the products read and write. */
enum vec { V_X, V_XB, V_XB2, V_Q, V_K, V_V, V_HB, V_HB2, V_LOGITS };

static float *vec(const struct lane *r, enum vec v)
{
	switch (v) {
	case V_X:
		return r->x;
	case V_XB:
		return r->xb;
	case V_XB2:
		return r->xb2;
	case V_Q:
		return r->q;
	case V_K:
		return r->k;
	case V_V:
		return r->v;
	case V_HB:
		return r->hb;
	case V_HB2:
		return r->hb2;
	case V_LOGITS:
		break;
	}
	return r->logits;
}

/* Set up the products of the NMAT matrices W into the runs' vectors OUT,
 * from their vector IN. */
static void products(struct batch *b, int nmat, const struct packed *const *w, const enum vec *out,
                     enum vec in)
{
	struct products *pr = &b->pr;

	pr->nmat = nmat;
	pr->total = 0;
	for (int i = 0; i < nmat; i++) {
		pr->w[i] = w[i];
		for (int r = 0; r < b->n; r++)
			pr->out[i][r] = vec(&b->lanes[r], out[i]);
		pr->total += packed_panels(w[i]->rows);
	}
	for (int r = 0; r < b->n; r++)
		pr->in[r] = vec(&b->lanes[r], in);
}

static void product(struct batch *b, const struct packed *w, enum vec out, enum vec in)
{
	products(b, 1, &w, &out, in);
}

/* The helper for a step of N lanes, when it pays and is free; NULL for
 * the calling thread alone. Release it with model_pool_release. */
static struct model_pool *step_pool(const struct llama_model *m, int n)
{
	const struct llama_config *c = &m->c;
	const int D = c->dim;
	/* The helper pays once a step multiplies enough weights. */
	const double work =
	        (double)n * ((double)c->n_layers * D *
	                             (2.0 * m->a.q_dim + 2.0 * c->kv_dim + 3.0 * c->hidden_dim) +
	                     (double)c->vocab_size * D);
	if (m->threads == LLAMA_THREADS_TWO ||
	    (m->threads == LLAMA_THREADS_AUTO && work >= MODEL_THREADS_WORK))
		return model_pool_acquire(m->pool) ? m->pool : NULL;
	return NULL;
}

/* B's lanes through every layer and the classifier, each lane's x its
 * token's embedding and its RoPE table made. */
static void layers(struct batch *b, struct model_pool *pool)
{
	const struct llama_model *m = b->m;
	const struct llama_config *c = &m->c;
	const int D = c->dim, n = b->n;
	const float c_eps = m->a.norm_eps;
	struct lane *ln = b->lanes;

	for (int l = 0; l < c->n_layers; l++) {
		const struct layer_weights *w = &m->layers[l];
		b->layer = l;
		for (int i = 0; i < n; i++)
			rmsnorm(ln[i].xb, ln[i].x, w->rms_att, D, c_eps);
		const struct packed *qkv[3] = {&w->wq, &w->wk, &w->wv};
		products(b, 3, qkv, (const enum vec[]){V_Q, V_K, V_V}, V_XB);
		run_job(b, pool, products_part);
		for (int i = 0; i < n; i++)
			qkv_extra(m, &ln[i], l);
		run_job(b, pool, attention_part);
		product(b, &w->wo, V_XB2, V_XB);
		run_job(b, pool, products_part);
		for (int i = 0; i < n; i++) {
			add(ln[i].x, ln[i].xb2, D);
			rmsnorm(ln[i].xb, ln[i].x, w->rms_ffn, D, c_eps);
		}
		const struct packed *ffn[2] = {&w->w1, &w->w3};
		products(b, 2, ffn, (const enum vec[]){V_HB, V_HB2}, V_XB);
		run_job(b, pool, products_part);
		for (int i = 0; i < n; i++)
			swiglu(ln[i].hb, ln[i].hb2, c->hidden_dim);
		product(b, &w->w2, V_XB, V_HB);
		run_job(b, pool, products_part);
		for (int i = 0; i < n; i++)
			add(ln[i].x, ln[i].xb, D);
	}
	for (int i = 0; i < n; i++)
		rmsnorm(ln[i].x, ln[i].x, m->rms_final, D, c_eps);
	product(b, &m->cls, V_LOGITS, V_X);
	run_job(b, pool, products_part);
}

int llama_step_batch(const struct llama_model *m, struct llama_run *const *runs, int n,
                     const int *tokens, int pos)
{
	if (n < 1 || n > LLAMA_MAX_BATCH)
		return -1;
	for (int i = 0; i < n; i++) {
		if (check_step(m, runs[i], tokens[i], pos) != 0)
			return -1;
		for (int j = 0; j < i; j++)
			if (runs[j] == runs[i])
				return -1;
	}
	struct lane lanes[LLAMA_MAX_BATCH];
	struct batch b = {.m = m, .runs = runs, .lanes = lanes, .n = n, .pos = pos};
	for (int i = 0; i < n; i++) {
		lanes[i] = run_lane(runs[i]);
		embed(m, tokens[i], lanes[i].x);
		rope_table(m, &lanes[i], pos);
	}
	struct model_pool *pool = step_pool(m, n);
	layers(&b, pool);
	if (pool != NULL)
		model_pool_release(pool);
	for (int i = 0; i < n; i++)
		runs[i]->pos = pos;
	return 0;
}

int llama_step_span(const struct llama_model *m, struct llama_run *r, const int *tokens, int count,
                    int pos, float *query, float *logits, float *weights)
{
	const struct llama_config *c = &m->c;
	if (count < 1 || count > LLAMA_MAX_BATCH)
		return -1;
	for (int i = 0; i < count; i++)
		if (check_step(m, r, tokens[i], pos + i) != 0)
			return -1;
	const size_t D = (size_t)c->dim, Q = (size_t)m->a.q_dim, W = D > Q ? D : Q;
	const size_t KV = (size_t)c->kv_dim, H = (size_t)c->hidden_dim;
	const size_t hs2 = (size_t)c->head_size / 2, V = (size_t)c->vocab_size;
	const size_t QL = (size_t)c->n_layers * Q;
	/* Each lane's vectors; the logits and queries the caller's when given. */
	const size_t per =
	        2 * D + W + Q + 2 * KV + 2 * H + 2 * hs2 + (logits ? 0 : V) + (query ? 0 : QL);
	float *mem = malloc((size_t)count * per * sizeof *mem);
	if (mem == NULL)
		return -1;
	struct lane lanes[LLAMA_MAX_BATCH];
	float *f = mem;
	for (int i = 0; i < count; i++) {
		struct lane *ln = &lanes[i];
#define TAKE(field, n)         \
	do {                   \
		ln->field = f; \
		f += (n);      \
	} while (0)
		TAKE(x, D);
		TAKE(xb, W);
		TAKE(xb2, D);
		TAKE(q, Q);
		TAKE(k, KV);
		TAKE(v, KV);
		TAKE(hb, H);
		TAKE(hb2, H);
		TAKE(fcr, hs2);
		TAKE(fci, hs2);
		if (logits != NULL)
			ln->logits = logits + (size_t)i * V;
		else
			TAKE(logits, V);
		if (query != NULL)
			ln->query = query + (size_t)i * QL;
		else
			TAKE(query, QL);
		ln->att_stride = (size_t)r->cap;
		ln->att = weights != NULL ? weights + (size_t)i * (size_t)c->n_layers *
		                                              (size_t)c->n_heads * ln->att_stride
		                          : NULL;
#undef TAKE
		embed(m, tokens[i], ln->x);
		rope_table(m, ln, pos + i);
	}
	struct llama_run *const runs[1] = {r};
	struct batch b = {
	        .m = m, .runs = runs, .lanes = lanes, .span = true, .n = count, .pos = pos};
	struct model_pool *pool = step_pool(m, count);
	layers(&b, pool);
	if (pool != NULL)
		model_pool_release(pool);
	/* The run as the last position's step leaves it. */
	const struct lane *last = &lanes[count - 1];
	memcpy(r->x, last->x, D * sizeof *r->x);
	memcpy(r->logits, last->logits, V * sizeof *r->logits);
	memcpy(r->query, last->query, QL * sizeof *r->query);
	memcpy(r->fcr, last->fcr, hs2 * sizeof *r->fcr);
	memcpy(r->fci, last->fci, hs2 * sizeof *r->fci);
	r->pos = pos + count - 1;
	free(mem);
	return 0;
}
