/*
 * scene_model_build: a model scene's last pass. The forward pass runs over
 * every token with a full cache (include/model/h2o/llama_trace.h), and
 * what each layer's attention took in (q, k, v, and the queries before
 * RoPE when a policy reads them) is copied into the scene, with each
 * token's text as the tokenizer decodes it.
 */
#include "scene_impl.h"
#include "scene_model_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/llama.h"
#include "h2o/llama_trace.h"
#include "h2o/tokenizer.h"

/* The loader's told, as the forward pass tells (llama_trace_told): the
 * part of the load after the encoding. */
static int tell_positions(void *ctx, int done, int total)
{
	const struct loader *ld = ctx;
	const double part = total > 0 ? (double)done / total : 0;
	return ld->told(ld->told_ctx, SCENE_TOLD_ENCODE + (1 - SCENE_TOLD_ENCODE) * part, 1);
}

/* N floats, or NULL. */
static float *alloc_floats(size_t blocks, size_t n, size_t hs)
{
	if (hs != 0 && n != 0 && blocks > SIZE_MAX / sizeof(float) / n / hs)
		return NULL;
	return malloc(blocks * n * hs * sizeof(float) + 1);
}

/* Token I's text: its piece as decoded after the token before (BOS as
 * "<s>", as tools/llama2c.py writes it); a piece that decodes to a NUL
 * byte keeps its stored form <0x00>. */
static char *token_text(const struct llama_tokenizer *t, const int *tokens, int i)
{
	size_t len;
	const char *s;
	if (tokens[i] == LLAMA_TOKEN_BOS) {
		s = "<s>";
		len = 3;
	} else {
		s = llama_tokenizer_decode(t, i > 0 ? tokens[i - 1] : -1, tokens[i], &len);
		if (s != NULL && memchr(s, '\0', len) != NULL)
			s = llama_tokenizer_piece(t, tokens[i], &len);
		if (s == NULL || memchr(s, '\0', len) != NULL) {
			s = "";
			len = 0;
		}
	}
	char *out = malloc(len + 1);
	if (out != NULL) {
		memcpy(out, s, len);
		out[len] = '\0';
	}
	return out;
}

int scene_build_model(const struct loader *ld, struct plan *p, struct scene *sc)
{
	struct model_plan *mp = p->model;
	const struct llama_config *c = llama_model_config(mp->model);
	const size_t n = (size_t)mp->n, hs = (size_t)c->head_size;
	const size_t qb = (size_t)c->n_layers * (size_t)c->n_heads;
	const size_t kb = (size_t)c->n_layers * (size_t)c->n_kv_heads;

	sc->tokens = malloc(n * sizeof *sc->tokens);
	sc->model_path = strdup(mp->model_path);
	sc->tokenizer_path = strdup(mp->tokenizer_path);
	float *q = alloc_floats(qb, n, hs), *k = alloc_floats(kb, n, hs),
	      *v = alloc_floats(kb, n, hs);
	float *q_pre = NULL;
	if (scene_model_keeps_prerope(ld, p)) {
		q_pre = alloc_floats(qb, n, hs);
		sc->q_pre = malloc(qb * n * hs * sizeof *sc->q_pre + 1);
		sc->rope_freq = malloc(hs / 2 * sizeof *sc->rope_freq + 1);
		sc->rope_div = malloc(hs / 2 * sizeof *sc->rope_div + 1);
	}
	if (!sc->tokens || !sc->model_path || !sc->tokenizer_path || !q || !k || !v ||
	    (scene_model_keeps_prerope(ld, p) &&
	     (!q_pre || !sc->q_pre || !sc->rope_freq || !sc->rope_div))) {
		free(q);
		free(k);
		free(v);
		free(q_pre);
		return scene_fail_nomem(ld);
	}
	if (q_pre)
		llama_rope_of(mp->model, sc->rope_freq, sc->rope_div, &sc->rope_scale,
		              &sc->rope_neox);
	memcpy(sc->tokens, mp->tokens, (size_t)mp->given * sizeof *sc->tokens);
	const struct llama_sampling sampling = {mp->temperature, mp->seed};
	char e[LLAMA_ERR_MAX];
	const struct llama_told told = {ld->told ? tell_positions : NULL, (void *)ld};
	int rc = llama_trace_told(mp->model, sc->tokens, mp->given, mp->n, &sampling, q, k, v,
	                          q_pre, e, &told);
	if (rc == LLAMA_STOPPED)
		p->stopped = true;
	if (rc == 0) {
		for (size_t i = 0; i < qb * n * hs; i++)
			sc->q[i] = q[i];
		for (size_t i = 0; q_pre && i < qb * n * hs; i++)
			sc->q_pre[i] = q_pre[i];
		for (size_t i = 0; i < kb * n * hs; i++) {
			sc->k[i] = k[i];
			sc->v[i] = v[i];
		}
		for (int i = 0; i < mp->n && rc == 0; i++)
			if ((sc->text[i] = token_text(mp->tok, sc->tokens, i)) == NULL)
				rc = scene_fail_nomem(ld);
	} else {
		scene_fail_file(ld->err, ld->name, "cannot load: %s", e);
	}
	free(q);
	free(k);
	free(v);
	free(q_pre);
	sc->given = mp->given;
	sc->generated = mp->n - mp->given;
	sc->temperature = sc->generated > 0 ? mp->temperature : 0.0;
	sc->seed = sc->generated > 0 && mp->temperature > 0.0f ? mp->seed : 0;
	if (rc == 0) {
		/* The scene keeps what it loaded and checked. */
		sc->model = mp->model;
		sc->tokenizer = mp->tok;
		mp->model = NULL;
		mp->tok = NULL;
	}
	return rc;
}
