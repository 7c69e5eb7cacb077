/*
 * llama_trace: a whole sequence through a model's full cache, and what every
 * layer's attention took in.
 *
 * llama_trace feeds tokens one by one at positions 0, 1, ... to a run
 * that never evicts (llama.h), and copies out, for every position, layer
 * and head, the query row (after RoPE) of each query head and the key
 * (after RoPE) and value rows of each key/value head, exactly the floats
 * that step's attention used. The first N_GIVEN tokens are given (teacher
 * forcing); the rest, up to N, are chosen from the logits of the step
 * before: the highest (the first of equals) when the temperature is 0,
 * else drawn as below. A model scene (src/scene/scene_model.c) is this
 * trace converted to doubles; tools/llama2c.py trace writes the same rows.
 *
 * Sampling, for a temperature T > 0, is llama2.c's run.c without top-p:
 * the logits divided by T in float32, a softmax (expf, the maximum
 * subtracted first, summed from token 0 up), and one coin c in [0, 1) per
 * token: the first token whose running sum of probabilities passes c (the
 * last token if rounding leaves none). The coins come from llama_rng_coin,
 * a portable generator with no state but its 64-bit word, so a seed gives
 * the same tokens on every machine (the same libm's expf assumed). When a
 * logit divided by T overflows float32 there is no softmax to draw from:
 * the token is its limit as T goes to 0, the highest logit (the first of
 * equals), and no coin is used.
 */
#ifndef H2O_LLAMA_TRACE_H
#define H2O_LLAMA_TRACE_H

#include <stdint.h>

#include "h2o/llama.h"

/*
 * The next coin in [0, 1) from *STATE, a xorshift64* generator (the one
 * run.c uses): STATE ^= STATE >> 12; STATE ^= STATE << 25;
 * STATE ^= STATE >> 27; then u = (STATE * 0x2545F4914F6CDD1D) >> 32, and
 * the coin is (u >> 8) / 2^24, exact in float32. A state of 0 stays 0
 * (every coin 0): seed it with a nonzero word.
 */
float llama_rng_coin(uint64_t *state);

/* How tokens past the given ones are chosen. */
struct llama_sampling {
	float temperature; /* 0: the highest logit; > 0: drawn, as above */
	uint64_t seed;     /* the generator's first state, nonzero */
};

/*
 * Run TOKENS[0 .. N) through M with a full cache. TOKENS has room for N
 * ids; the first N_GIVEN (1 <= N_GIVEN <= N) are read, the others written
 * (SAMPLING may be NULL: the highest logit). Q gets n_layers x n_heads
 * blocks of N rows of head_size floats (block l * n_heads + h, row i the
 * query of head h of layer l at position i), K and V n_layers x n_kv_heads
 * such blocks (block l * n_kv_heads + g); any of them may be NULL. Returns
 * 0, or -1 with ERR filled when N is past seq_len, a given token is out of
 * the vocabulary, memory runs out, or a step leaves a query, key, value or
 * logit that is not finite (ERR names the position and where).
 */
int llama_trace(const struct llama_model *m, int *tokens, int n_given, int n,
                const struct llama_sampling *sampling, float *q, float *k, float *v,
                char err[LLAMA_ERR_MAX]);

/*
 * llama_trace telling TOLD->tell(ctx, DONE, N) before each position (DONE
 * positions run of N) and once at the end: a long run's progress. A tell
 * that returns nonzero stops the run before its next position:
 * LLAMA_STOPPED, ERR saying where (a caller that quits does not wait for
 * the rest of the text). TOLD may be NULL. Q_PRE, when not NULL, gets the
 * queries before RoPE, laid out as Q.
 */
#define LLAMA_STOPPED (-3)
struct llama_told {
	int (*tell)(void *ctx, int done, int total);
	void *ctx;
};
int llama_trace_told(const struct llama_model *m, int *tokens, int n_given, int n,
                     const struct llama_sampling *sampling, float *q, float *k, float *v,
                     float *q_pre, char err[LLAMA_ERR_MAX], const struct llama_told *told);

#endif
