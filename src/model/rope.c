/*
 * rope: the angles of a model's rotary position embedding (llama.h,
 * llama_rope_of), one formula for the forward pass and for whoever
 * reproduces its rotation.
 *
 * Pair k of a head of HS rows turns at position pos by
 * ((pos * f_k) * scale) / d_k, f_k = 1 / theta^(2k / HS) and every step
 * in float32, as llama2.c's run.c computes it (with a GGUF model's linear
 * scale and its frequency divisors when it has them; 1 otherwise, which
 * leaves the bits unchanged).
 */
#include "model_impl.h"

#include <math.h>

static float rope_freq(const struct model_arch *a, int hs, int k)
{
	return 1.0f / powf(a->rope_theta, (2 * k) / (float)hs);
}

float model_rope_angle(const struct model_arch *a, int hs, int k, int pos)
{
	float val = pos * rope_freq(a, hs, k);
	if (a->rope_scale != 1.0f)
		val *= a->rope_scale;
	if (a->rope_freqs != NULL)
		val /= a->rope_freqs[k];
	return val;
}

void llama_rope_of(const struct llama_model *m, float *freq, float *div, float *scale, int *neox)
{
	const struct model_arch *a = &m->a;
	const int hs = m->c.head_size;
	*neox = a->neox != 0;
	*scale = a->rope_scale;
	for (int k = 0; k < hs / 2; k++) {
		freq[k] = rope_freq(a, hs, k);
		div[k] = a->rope_freqs != NULL ? a->rope_freqs[k] : 1.0f;
	}
}
