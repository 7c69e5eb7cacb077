/*
 * drop_plain: the real drop's figures the plain way, for the drop's tests
 * (test_drop.c, test_drop_kl.c): no sharing, no spans, one step at a time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drop_plain.h"
#include "h2o/llama.h"
#include "h2o/tokenizer.h"

int drop_fixture_setup(void **state, const char *root, const char *text)
{
	struct drop_fixture *f = calloc(1, sizeof *f);
	char path[1024], err[LLAMA_ERR_MAX];
	if (f == NULL)
		return -1;
	*state = f;
	snprintf(path, sizeof path, "%s/models/stories260K/stories260K.bin", root);
	if (llama_load(path, &f->m, err) != 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	struct llama_tokenizer *t;
	snprintf(path, sizeof path, "%s/models/stories260K/tok512.bin", root);
	if (llama_tokenizer_load(path, llama_model_config(f->m)->vocab_size, &t, err) != 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	f->n = llama_tokenizer_encode(t, text, strlen(text), 1, 0, f->tokens, 512, err);
	llama_tokenizer_free(t);
	return f->n > 0 ? 0 : -1;
}

int drop_fixture_teardown(void **state)
{
	struct drop_fixture *f = *state;
	if (f != NULL)
		llama_free(f->m);
	free(f);
	return 0;
}

/* ln p(NEXT) of LOGITS written out: the largest, the exp sum in id order,
 * then logit - max - ln sum, as the drop computes it. */
double plain_logprob(const struct llama_config *cfg, const float *logits, int next)
{
	double m = -INFINITY, sum = 0.0;
	for (int i = 0; i < cfg->vocab_size; i++)
		m = (double)logits[i] > m ? logits[i] : m;
	for (int i = 0; i < cfg->vocab_size; i++)
		sum += exp((double)logits[i] - m);
	return (double)logits[next] - m - log(sum);
}

/* ---- H2O's real drop the plain way -------------------------------------- */

static const double *sort_score;
static const int *sort_pos;
static int stronger_first(const void *a, const void *b)
{
	const int i = *(const int *)a, j = *(const int *)b;
	if (sort_score[i] != sort_score[j])
		return sort_score[i] > sort_score[j] ? -1 : 1;
	return sort_pos[i] - sort_pos[j];
}

/*
 * One H2O run written out: every layer and kv head accumulates the mean of
 * its group's weights, and at the prompt's end and every INTERVAL-th step
 * after it (every step for 1) keeps its recent newest and, of the others,
 * its heavy largest scores (sorted; a tie keeps the lower position). Its
 * log-probabilities of the text's tokens into LP and, unless LOGITS is
 * NULL, its logits after each step into LOGITS (n x vocab).
 */
void plain_h2o(const struct llama_model *m, const int *tokens, int n, int prompt, int heavy,
               int recent, int interval, double *lp, float *logits)
{
	const struct llama_config *cfg = llama_model_config(m);
	const int group = cfg->n_heads / cfg->n_kv_heads, caches = cfg->n_layers * cfg->n_kv_heads;
	struct llama_run *run = llama_run_new(m);
	static double score[64][1024];
	assert_true(caches <= 64 && cfg->seq_len <= 1024);
	memset(score, 0, sizeof score);
	for (int t = 0; t < n; t++) {
		assert_int_equal(llama_step(m, run, tokens[t], t), 0);
		if (logits)
			memcpy(logits + (size_t)t * (size_t)cfg->vocab_size, llama_logits(run),
			       (size_t)cfg->vocab_size * sizeof *logits);
		if (t + 1 < n)
			lp[t] = plain_logprob(cfg, llama_logits(run), tokens[t + 1]);
		for (int l = 0; l < cfg->n_layers; l++)
			for (int g = 0; g < cfg->n_kv_heads; g++) {
				double *sc = score[l * cfg->n_kv_heads + g];
				const int len = llama_run_len(run, l, g);
				double mean[1024];
				for (int j = 0; j < len; j++)
					mean[j] = 0.0;
				for (int i = 0; i < group; i++) {
					const float *w = llama_run_weights(run, l, g * group + i);
					for (int j = 0; j < len; j++)
						mean[j] += (double)w[j];
				}
				sc[len - 1] = 0.0;
				for (int j = 0; j < len; j++)
					sc[j] += mean[j] / group;
				/* Step t + 1 compresses from the prompt's end on,
				 * a whole number of intervals after it. */
				if (t + 1 < prompt || (t + 1 - prompt) % interval != 0 ||
				    len <= heavy + recent)
					continue;
				int idx[1024];
				const int cand = len - recent;
				for (int j = 0; j < cand; j++)
					idx[j] = j;
				sort_score = sc;
				sort_pos = llama_run_positions(run, l, g);
				qsort(idx, (size_t)cand, sizeof *idx, stronger_first);
				unsigned char keep[1024];
				for (int j = 0; j < len; j++)
					keep[j] = j >= cand;
				for (int j = 0; j < heavy && j < cand; j++)
					keep[idx[j]] = 1;
				int kept = 0;
				for (int j = 0; j < len; j++)
					if (keep[j])
						sc[kept++] = sc[j];
				llama_run_keep(run, l, g, keep);
			}
	}
	llama_run_free(run);
}
