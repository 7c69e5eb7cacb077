/*
 * drop_query: the queries before RoPE a rule reads in the real drop
 * (drop_query.h).
 */
#include "drop_query.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct drop_queries {
	int dim, group;
	const double **rows; /* group pointers into buf, cap rows of dim each */
	double *buf, *values, *work;
	float *freq, *div;
	struct policy_rope rope;
	double scale;
};

/* The doubles of a drop_queries of M for CAP positions: the group's rows,
 * the values, the rule's room (policy_cache.work). */
static double doubles_of(const struct llama_config *c, double cap)
{
	const double dim = c->head_size, group = (double)c->n_heads / c->n_kv_heads;
	return (group + 1.0) * cap * dim + POLICY_WORK_DOUBLES(dim, cap);
}

double drop_queries_bytes(const struct llama_model *m, int cap)
{
	const struct llama_config *c = llama_model_config(m);
	const double group = (double)c->n_heads / c->n_kv_heads;
	return doubles_of(c, cap) * sizeof(double) + group * sizeof(double *) +
	       (double)c->head_size * sizeof(float) + sizeof(struct drop_queries);
}

void drop_queries_free(struct drop_queries *q)
{
	if (q == NULL)
		return;
	free(q->rows);
	free(q->buf);
	free(q->freq);
	free(q);
}

struct drop_queries *drop_queries_new(const struct llama_model *m, int cap)
{
	const struct llama_config *c = llama_model_config(m);
	struct drop_queries *q = calloc(1, sizeof *q);
	if (q == NULL)
		return NULL;
	q->dim = c->head_size;
	q->group = c->n_heads / c->n_kv_heads;
	const size_t dim = (size_t)q->dim, n = (size_t)cap;
	q->rows = malloc((size_t)q->group * sizeof *q->rows);
	q->buf = malloc((size_t)doubles_of(c, (double)cap) * sizeof *q->buf);
	q->freq = malloc(dim * sizeof *q->freq + 1);
	if (!q->rows || !q->buf || !q->freq) {
		drop_queries_free(q);
		return NULL;
	}
	for (int h = 0; h < q->group; h++)
		q->rows[h] = q->buf + (size_t)h * n * dim;
	q->values = q->buf + (size_t)q->group * n * dim;
	q->work = q->values + n * dim;
	q->div = q->freq + dim / 2;
	llama_rope_of(m, q->freq, q->div, &q->rope.scale, &q->rope.neox);
	q->rope.freq = q->freq;
	q->rope.div = q->div;
	/* The model scene's logit scale (scene_model.c). */
	q->scale = 1.0 / sqrt((double)c->head_size);
	return q;
}

void drop_queries_view(struct drop_queries *q, const struct llama_run *r, int l, int g, int seen,
                       int len, struct policy_cache *view)
{
	const size_t dim = (size_t)q->dim;
	const int from = seen > POLICY_QUERIES_READ ? seen - POLICY_QUERIES_READ : 0;
	for (int h = 0; h < q->group; h++) {
		const float *src = llama_run_prerope(r, l, g * q->group + h);
		double *dst = (double *)q->rows[h];
		for (size_t i = (size_t)from * dim; i < (size_t)seen * dim; i++)
			dst[i] = src[i];
	}
	const float *v = llama_run_values(r, l, g);
	const int *pos = llama_run_positions(r, l, g);
	for (int j = 0; j < len; j++)
		for (size_t i = 0; i < dim; i++)
			q->values[(size_t)pos[j] * dim + i] = v[(size_t)j * dim + i];
	view->queries = q->rows;
	view->heads = q->group;
	view->seen = seen;
	view->values = q->values;
	view->scale = q->scale;
	view->work = q->work;
	view->rope = &q->rope;
}
