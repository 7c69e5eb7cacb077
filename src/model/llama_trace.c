/*
 * llama_trace: a sequence through the full cache, its attention inputs copied
 * out (llama_trace.h).
 *
 * One run steps position after position and never evicts, so after the
 * step at position i each key/value head's cache holds positions 0 .. i,
 * and its last slot is position i's key and value; the query of each head
 * is the run's own. Nothing here is arithmetic of its own but the choice
 * of the next token.
 */
#include "h2o/llama_trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"

float llama_rng_coin(uint64_t *state)
{
	uint64_t s = *state;
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	*state = s;
	const uint32_t u = (uint32_t)((s * UINT64_C(0x2545F4914F6CDD1D)) >> 32);
	return (float)(u >> 8) / 16777216.0f;
}

/* The first of the highest logits. */
static int argmax(const float *x, int n)
{
	int best = 0;
	for (int i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}

/* A token drawn from softmax(X / T) with the next coin; WORK holds N. */
static int draw(const float *x, int n, float t, uint64_t *state, float *work)
{
	for (int i = 0; i < n; i++)
		work[i] = x[i] / t;
	float max = work[0];
	for (int i = 1; i < n; i++)
		if (work[i] > max)
			max = work[i];
	float sum = 0.0f;
	for (int i = 0; i < n; i++) {
		work[i] = expf(work[i] - max);
		sum += work[i];
	}
	for (int i = 0; i < n; i++)
		work[i] /= sum;
	const float coin = llama_rng_coin(state);
	float cdf = 0.0f;
	for (int i = 0; i < n; i++) {
		cdf += work[i];
		if (coin < cdf)
			return i;
	}
	return n - 1;
}

int llama_trace(const struct llama_model *m, int *tokens, int n_given, int n,
                const struct llama_sampling *sampling, float *q, float *k, float *v,
                char err[LLAMA_ERR_MAX])
{
	const struct llama_config *c = llama_model_config(m);
	const int L = c->n_layers, H = c->n_heads, G = c->n_kv_heads, hs = c->head_size;

	if (n_given < 1 || n_given > n)
		return model_fail(err, "%d tokens given of %d, expected 1 to %d", n_given, n, n);
	if (n > c->seq_len)
		return model_fail(err, "%d tokens, more than the model's context of %d (seq_len)",
		                  n, c->seq_len);
	for (int i = 0; i < n_given; i++)
		if (tokens[i] < 0 || tokens[i] >= c->vocab_size)
			return model_fail(err,
			                  "token %d at position %d is not in the vocabulary of %d",
			                  tokens[i], i, c->vocab_size);
	const float t = sampling ? sampling->temperature : 0.0f;
	uint64_t state = sampling ? sampling->seed : 0;
	float *work = t > 0.0f ? malloc((size_t)c->vocab_size * sizeof *work) : NULL;
	struct llama_run *r = llama_run_new(m);
	if (r == NULL || (t > 0.0f && work == NULL)) {
		llama_run_free(r);
		free(work);
		return model_fail(err, "out of memory for a run of the model");
	}
	const size_t row = (size_t)hs * sizeof(float), block = (size_t)n * (size_t)hs;
	for (int i = 0; i < n; i++) {
		if (llama_step(m, r, tokens[i], i) != 0) { /* checked above: cannot fail */
			llama_run_free(r);
			free(work);
			return model_fail(err, "step %d failed", i);
		}
		for (int l = 0; l < L; l++) {
			for (int h = 0; q != NULL && h < H; h++)
				memcpy(q + ((size_t)l * H + h) * block + (size_t)i * hs,
				       llama_run_query(r, l, h), row);
			for (int g = 0; g < G; g++) {
				const size_t at = ((size_t)l * G + g) * block + (size_t)i * hs;
				const size_t last = (size_t)(llama_run_len(r, l, g) - 1) * hs;
				if (k != NULL)
					memcpy(k + at, llama_run_keys(r, l, g) + last, row);
				if (v != NULL)
					memcpy(v + at, llama_run_values(r, l, g) + last, row);
			}
		}
		if (i + 1 < n && i + 1 >= n_given) {
			const float *logits = llama_logits(r);
			tokens[i + 1] = t > 0.0f ? draw(logits, c->vocab_size, t, &state, work)
			                         : argmax(logits, c->vocab_size);
		}
	}
	llama_run_free(r);
	free(work);
	return 0;
}
