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

/* The given tokens a trace steps at once. */
#define LLAMA_TRACE_SPAN 16

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

/* A token drawn from softmax(X / T) with the next coin; WORK holds N. X is
 * finite (checked by the caller). A temperature so small that X / T
 * overflows float32 is past the point where the softmax can be formed: its
 * limit as T goes to 0 is all the weight on the highest logit, which is
 * what it gets (the first of equals, as at T = 0), and no coin is drawn. */
static int draw(const float *x, int n, float t, uint64_t *state, float *work)
{
	for (int i = 0; i < n; i++)
		work[i] = x[i] / t;
	float max = work[0];
	for (int i = 1; i < n; i++)
		if (work[i] > max)
			max = work[i];
	if (!isfinite(max))
		return argmax(x, n);
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

/* A non-finite number's name: "nan", "inf" or "-inf". */
static const char *nonfinite_name(float x)
{
	return isnan(x) ? "nan" : x > 0 ? "inf" : "-inf";
}

/* The index of the first of N floats at X that is not finite, or -1. */
static int first_nonfinite(const float *x, int n)
{
	for (int i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return i;
	return -1;
}

/* Whether the step at position I left every query, key and value its
 * attention used, and the logits, finite; ERR says where not. Finite
 * weights can still overflow float32 on the way (a norm's weight near
 * FLT_MAX), and a NaN or infinity must stop here, at its position, rather
 * than reach the engine's figures as NaN. */
static int check_finite(const struct llama_model *m, const struct llama_run *r, int i,
                        const int *tokens, const float *query, const float *logits,
                        char err[LLAMA_ERR_MAX])
{
	const struct llama_config *c = llama_model_config(m);
	const int hs = c->head_size;
	for (int l = 0; l < c->n_layers; l++) {
		for (int h = 0; h < c->n_heads; h++) {
			const float *row = query + ((size_t)l * c->n_heads + h) * hs;
			const int j = first_nonfinite(row, hs);
			if (j >= 0)
				return model_fail(err,
				                  "position %d (token %d): the query of layer %d, "
				                  "head %d holds %s (element %d): the model's "
				                  "activations are not finite",
				                  i, tokens[i], l, h, nonfinite_name(row[j]), j);
		}
		for (int g = 0; g < c->n_kv_heads; g++) {
			/* Nothing is evicted: position i is slot i. */
			const size_t last = (size_t)i * (size_t)hs;
			const float *key = llama_run_keys(r, l, g) + last;
			const float *value = llama_run_values(r, l, g) + last;
			int j = first_nonfinite(key, hs);
			const char *what = "key";
			if (j < 0) {
				j = first_nonfinite(value, hs);
				what = "value";
				key = value;
			}
			if (j >= 0)
				return model_fail(err,
				                  "position %d (token %d): the %s of layer %d, "
				                  "key/value head %d holds %s (element %d): the "
				                  "model's activations are not finite",
				                  i, tokens[i], what, l, g, nonfinite_name(key[j]),
				                  j);
		}
	}
	const int j = first_nonfinite(logits, c->vocab_size);
	if (j >= 0)
		return model_fail(err,
		                  "position %d (token %d): the logit of token %d is %s: the "
		                  "model's activations are not finite",
		                  i, tokens[i], j, nonfinite_name(logits[j]));
	return 0;
}

int llama_trace(const struct llama_model *m, int *tokens, int n_given, int n,
                const struct llama_sampling *sampling, float *q, float *k, float *v,
                char err[LLAMA_ERR_MAX])
{
	return llama_trace_told(m, tokens, n_given, n, sampling, q, k, v, NULL, err, NULL);
}

int llama_trace_told(const struct llama_model *m, int *tokens, int n_given, int n,
                     const struct llama_sampling *sampling, float *q, float *k, float *v,
                     float *q_pre, char err[LLAMA_ERR_MAX], const struct llama_told *told)
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
	const size_t V = (size_t)c->vocab_size, QL = (size_t)L * H * hs;
	float *work = t > 0.0f ? malloc(V * sizeof *work) : NULL;
	float *lg = malloc(LLAMA_TRACE_SPAN * V * sizeof *lg);
	float *qs = malloc(LLAMA_TRACE_SPAN * QL * sizeof *qs);
	struct llama_run *r = llama_run_new_len(m, n);
	if (r == NULL || (t > 0.0f && work == NULL) || lg == NULL || qs == NULL ||
	    (q_pre != NULL && llama_run_keep_prerope(r) != 0)) {
		llama_run_free(r);
		free(work);
		free(lg);
		free(qs);
		return model_fail(err, "out of memory for a run of the model");
	}
	const size_t row = (size_t)hs * sizeof(float), block = (size_t)n * (size_t)hs;
	int rc = 0;
	for (int i = 0; i < n && rc == 0;) {
		if (told != NULL && told->tell != NULL && told->tell(told->ctx, i, n) != 0) {
			model_fail(err, "stopped at position %d of %d", i, n);
			rc = LLAMA_STOPPED;
			break;
		}
		/* The given tokens a span at a time (every weight read once for
		 * all of them, on two threads); after them one position a step,
		 * each the choice of the logits before it. The same bits as one
		 * llama_step a position (the tests hold them equal). */
		int count = n_given - i;
		count = count > LLAMA_TRACE_SPAN ? LLAMA_TRACE_SPAN : count < 1 ? 1 : count;
		if (llama_step_span(m, r, &tokens[i], count, i, qs, lg, NULL) != 0) {
			rc = model_fail(err, "step %d failed", i); /* checked above */
			break;
		}
		for (int j = 0; j < count && rc == 0; j++, i++) {
			const float *query = qs + (size_t)j * QL, *logits = lg + (size_t)j * V;
			if (check_finite(m, r, i, tokens, query, logits, err) != 0) {
				rc = -1;
				break;
			}
			for (int l = 0; l < L; l++) {
				for (int h = 0; q != NULL && h < H; h++)
					memcpy(q + ((size_t)l * H + h) * block + (size_t)i * hs,
					       query + ((size_t)l * H + h) * hs, row);
				for (int g = 0; g < G; g++) {
					const size_t at =
					        ((size_t)l * G + g) * block + (size_t)i * hs;
					if (k != NULL)
						memcpy(k + at,
						       llama_run_keys(r, l, g) + (size_t)i * hs,
						       row);
					if (v != NULL)
						memcpy(v + at,
						       llama_run_values(r, l, g) + (size_t)i * hs,
						       row);
				}
			}
			if (i + 1 < n && i + 1 >= n_given)
				tokens[i + 1] =
				        t > 0.0f ? draw(logits, c->vocab_size, t, &state, work)
				                 : argmax(logits, c->vocab_size);
		}
	}
	/* The run is N positions long: its rows before RoPE are Q's layout. */
	if (rc == 0 && q_pre != NULL)
		memcpy(q_pre, llama_run_prerope(r, 0, 0), (size_t)L * H * block * sizeof(float));
	llama_run_free(r);
	free(work);
	free(lg);
	free(qs);
	if (rc != 0)
		return rc;
	if (told != NULL && told->tell != NULL)
		told->tell(told->ctx, n, n);
	return 0;
}
