/*
 * drop_evict: the rules' step on one policy's run in the real drop (the
 * scores its caches add, the window it observes, the rule run through
 * policy_run and the slots it cuts), and a run's state and scratch made
 * and freed. drop.c drives them step by step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "drop_query.h"
#include "drop_state.h"
#include "h2o/llama.h"
#include "h2o/policy.h"

/* Mark for keeping what the rule did not mark GONE (LEN entries) in kv
 * head G; cuts_apply keeps it once every rule of the step has decided,
 * none of them reading a cache that another's cut changed. */
static void keep_unmarked(struct run_state *st, int l, int g, int kv, int len,
                          const unsigned char *gone, size_t cap)
{
	if (!memchr(gone, 1, (size_t)len))
		return;
	unsigned char *keep = st->keep + (size_t)(l * kv + g) * cap;
	for (int j = 0; j < len; j++)
		keep[j] = !gone[j];
	st->cut[l * kv + g] = 1;
}

/* Into MEAN the weights of query heads FIRST .. FIRST + COUNT - 1 of layer
 * L on the LEN positions their cache holds, summed in head order from 0.0
 * and divided by COUNT: design §2's group mean. */
static void head_mean(const struct run_state *st, int l, int first, int count, int len,
                      double *mean)
{
	for (int j = 0; j < len; j++)
		mean[j] = 0.0;
	for (int h = first; h < first + count; h++) {
		const float *w = weights_of(st, l, h);
		for (int j = 0; j < len; j++)
			mean[j] += (double)w[j];
	}
	for (int j = 0; j < len; j++)
		mean[j] /= count;
}

/* The L2 norm of each of the LEN keys of layer L's kv head G (after RoPE,
 * each the square root of its squares summed in index order). */
static void key_norms(const struct llama_config *cfg, const struct llama_run *run, int l, int g,
                      int len, double *norm)
{
	const float *k = llama_run_keys(run, l, g);
	for (int j = 0; j < len; j++) {
		double sq = 0.0;
		for (int i = 0; i < cfg->head_size; i++) {
			const double x = k[(size_t)j * (size_t)cfg->head_size + (size_t)i];
			sq += x * x;
		}
		norm[j] = sqrt(sq);
	}
}

/* Into ROWS the LEN keys of layer L's kv head G (after RoPE), as doubles. */
static void key_rows(const struct llama_config *cfg, const struct llama_run *run, int l, int g,
                     int len, double *rows)
{
	const float *k = llama_run_keys(run, l, g);
	for (size_t i = 0; i < (size_t)len * (size_t)cfg->head_size; i++)
		rows[i] = k[i];
}

/*
 * The window's attention after step S: while S - 1 is one of the prompt's
 * last WINDOW positions, every query head's weights add to its row (the
 * cache then holds every position up to S - 1: nothing goes before the
 * prompt's end); at the prompt's end the sums are divided by WINDOW. The
 * rows are then what the engine's observation gives (policy.h): each
 * query's softmax over the positions up to its own, summed in query order
 * from 0.0, 0 where a query comes before the entry.
 */
static void observe(const struct llama_config *cfg, struct run_state *st, int s, int prompt)
{
	const int q = s - 1;
	if (!st->observed || q < prompt - st->window || q >= prompt)
		return;
	const size_t rows = (size_t)cfg->n_layers * (size_t)cfg->n_heads, len = (size_t)prompt;
	for (int l = 0; l < cfg->n_layers; l++)
		for (int h = 0; h < cfg->n_heads; h++) {
			const float *w = weights_of(st, l, h);
			double *o =
			        st->observed + ((size_t)l * (size_t)cfg->n_heads + (size_t)h) * len;
			for (int j = 0; j <= q; j++)
				o[j] += (double)w[j];
		}
	if (q == prompt - 1)
		for (size_t i = 0; i < rows * len; i++)
			st->observed[i] /= st->window;
}

/*
 * After step S of policy ST's run: every cache's scores add its group's
 * mean weights, then the driver runs the rule (policy_run: at the prompt's
 * end and at every step the interval compresses after it). A layer-wide
 * rule decides once per layer on the weights averaged over every query
 * head, for all its kv heads; a per_kv_head rule once per layer for each
 * kv head at once, from the observation of all the layer's query heads.
 */
void drop_evict_step(const struct llama_config *cfg, struct run_state *st, int s,
                     const struct policy_budget *b, struct drop_scratch *x, size_t cap)
{
	const struct policy *pol = policies[st->id];
	const int kv = cfg->n_kv_heads, group = cfg->n_heads / kv;
	const bool layer_wide = pol->layer_wide && cfg->n_heads > 1;
	observe(cfg, st, s, b->prompt);
	const int window = policy_run_window(st->id, b, s);
	const size_t plen = (size_t)b->prompt;
	for (int l = 0; l < cfg->n_layers; l++) {
		const int len = len_of(st, l, 0);
		const double *lobs =
		        window > 0 ? st->observed + (size_t)l * (size_t)cfg->n_heads * plen : NULL;
		for (int g = 0; g < kv; g++) {
			double *score = st->score[l * kv + g];
			const int glen = len_of(st, l, g);
			head_mean(st, l, g * group, group, glen, x->mean);
			score[glen - 1] = 0.0;
			for (int j = 0; j < glen; j++)
				score[j] += x->mean[j];
			/* A per_kv_head rule decides for the layer at the prompt's
			 * end; one that holds its share (adakv-win) then decides
			 * for each kv head here, on its own positions. */
			if (layer_wide || (pol->per_kv_head && (lobs || pol->grows)))
				continue;
			if (pol->by_key_norm)
				key_norms(cfg, st->run, l, g, glen, x->norm);
			if (pol->by_keys)
				key_rows(cfg, st->run, l, g, glen, x->keys);
			struct policy_cache view = {.len = glen,
			                            .pos = llama_run_positions(st->run, l, g),
			                            .score = score,
			                            .w = x->mean,
			                            .key_norm = pol->by_key_norm ? x->norm : NULL,
			                            .rank = x->rank,
			                            .heads = group,
			                            .layer = l,
			                            .kv_heads = 1,
			                            .order = x->order,
			                            .keys = pol->by_keys ? x->keys : NULL,
			                            .dim = cfg->head_size,
			                            .anchor = x->anchor,
			                            .kv_head = g};
			if (lobs) {
				view.observed = lobs + (size_t)g * (size_t)group * plen;
				view.window = window;
			}
			if (pol->by_queries && x->qv)
				drop_queries_view(x->qv, st->run, l, g, s, glen, &view);
			double value;
			policy_run(st->id, b, s, &view, x->gone, &value);
			keep_unmarked(st, l, g, kv, glen, x->gone, cap);
		}
		if (layer_wide) {
			/* Every kv head of the layer holds the same positions. */
			head_mean(st, l, 0, cfg->n_heads, len, x->lmean);
			const struct policy_cache view = {.len = len,
			                                  .pos = llama_run_positions(st->run, l, 0),
			                                  .score = st->score[l * kv],
			                                  .w = x->lmean,
			                                  .layer = l};
			double value;
			policy_run(st->id, b, s, &view, x->gone, &value);
			for (int g = 0; g < kv; g++)
				keep_unmarked(st, l, g, kv, len, x->gone, cap);
		} else if (pol->per_kv_head) {
			/* Until the rule has run every kv head holds the same
			 * positions; after it, the rule keeps every new one. */
			if (!lobs)
				continue;
			const struct policy_cache view = {.len = len,
			                                  .pos = llama_run_positions(st->run, l, 0),
			                                  .observed = lobs,
			                                  .heads = cfg->n_heads,
			                                  .window = window,
			                                  .rank = x->rank,
			                                  .layer = l,
			                                  .kv_heads = kv,
			                                  .order = x->order};
			double value;
			policy_run(st->id, b, s, &view, x->gone, &value);
			for (int g = 0; g < kv; g++)
				keep_unmarked(st, l, g, kv, len, x->gone + (size_t)g * (size_t)len,
				              cap);
		}
	}
}

void drop_states_free(struct run_state *st, int count, const struct llama_config *cfg)
{
	for (int i = 0; i < count; i++) {
		llama_run_free(st[i].own);
		free(st[i].cut);
		free(st[i].keep);
		for (int c = 0; st[i].score && c < cfg->n_layers * cfg->n_kv_heads; c++)
			free(st[i].score[c]);
		free(st[i].score);
		free(st[i].observed);
	}
}

void drop_scratch_free(struct drop_scratch *x)
{
	free(x->mean);
	free(x->lmean);
	free(x->norm);
	free(x->rank);
	free(x->order);
	free(x->keys);
	free(x->anchor);
	free(x->gone);
	free(x->keep);
	drop_queries_free(x->qv);
}

/* Room for caches of up to CAP positions in KV kv heads of DIM numbers. */
bool drop_scratch_new(struct drop_scratch *x, size_t cap, size_t kv, size_t dim)
{
	*x = (struct drop_scratch){
	        .mean = malloc(cap * sizeof *x->mean),
	        .lmean = malloc(cap * sizeof *x->lmean),
	        .norm = malloc(cap * sizeof *x->norm),
	        .rank = malloc(cap * kv * sizeof *x->rank),
	        .order = malloc(cap * kv * sizeof *x->order),
	        .keys = malloc(cap * dim * sizeof *x->keys),
	        .anchor = malloc(dim * sizeof *x->anchor),
	        .gone = malloc(cap * kv),
	        .keep = malloc(cap),
	};
	return x->mean && x->lmean && x->norm && x->rank && x->order && x->keys && x->anchor &&
	       x->gone && x->keep;
}

/* Policy P's run under B over N positions: its model run, its caches'
 * scores and, for a rule that reads the prompt's last queries, the room
 * for their attention. False when out of memory (what was made is ST's to
 * free). */
bool drop_state_new(struct run_state *st, enum policy_id p, const struct llama_model *m,
                    const struct policy_budget *b, int n)
{
	const struct llama_config *cfg = llama_model_config(m);
	const size_t caches = (size_t)cfg->n_layers * (size_t)cfg->n_kv_heads;
	*st = (struct run_state){.id = p, .own = llama_run_new_len(m, n)};
	st->run = st->own;
	st->score = calloc(caches, sizeof *st->score);
	st->cut = calloc(caches, 1);
	st->keep = malloc(caches * (size_t)n);
	bool ok = st->run && st->score && st->cut && st->keep;
	for (size_t c = 0; ok && c < caches; c++)
		ok = (st->score[c] = calloc((size_t)n, sizeof **st->score)) != NULL;
	st->window = policy_run_window(p, b, b->prompt);
	if (ok && st->window > 0) {
		const size_t rows = (size_t)cfg->n_layers * (size_t)cfg->n_heads;
		st->observed = calloc(rows * (size_t)b->prompt, sizeof *st->observed);
		ok = st->observed != NULL;
	}
	return ok;
}
