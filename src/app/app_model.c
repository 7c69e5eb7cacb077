/*
 * app_model: a model scene's real drop, kept at the app's budgets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_impl.h"
#include "h2o/app.h"
#include "h2o/drop.h"
#include "h2o/llama.h"
#include "h2o/scene.h"
#include "h2o/tokenizer.h"

static void vocab_free(struct app *app)
{
	for (int i = 0; app->vocab && i < app->vocab_size; i++)
		free(app->vocab[i]);
	free(app->vocab);
	app->vocab = NULL;
	app->vocab_size = 0;
}

void app_model_done(struct app *app)
{
	if (app->drop)
		drop_result_free(app->drop);
	free(app->drop);
	app->drop = NULL;
	vocab_free(app);
	app->model = NULL;
}

/* The model runs the policies c cycles through (app_set_policies), H2O
 * and the full cache: the panel shows H2O and the compared one against
 * the full cache. */
int app_model_measure(struct app *app)
{
	if (!app->model)
		return 0;
	struct drop_result *r = calloc(1, sizeof *r);
	char err[DROP_ERR_MAX];
	if (!r ||
	    drop_measure(app->model, app->tokens, app->scene->n, app->given, app->scene->prompt,
	                 &app->b, drop_policies_run(app->policies | ENGINE_POLICY(POLICY_H2O)), r,
	                 err) != 0) {
		free(r);
		return -1;
	}
	if (app->drop)
		drop_result_free(app->drop);
	free(app->drop);
	app->drop = r;
	return 0;
}

int app_set_model(struct app *app, const struct llama_model *m, const struct llama_tokenizer *t,
                  const int *tokens, int given)
{
	app_model_done(app);
	const int vocab = llama_model_config(m)->vocab_size;
	app->vocab = calloc((size_t)vocab, sizeof *app->vocab);
	if (!app->vocab)
		return -1;
	app->vocab_size = vocab;
	/* Each id's text as it reads in the middle of a text (after a token
	 * that is not BOS): the untrusted bytes, drawn only by frame_text. */
	for (int i = 0; i < vocab; i++) {
		size_t len = 0;
		const char *piece = llama_tokenizer_decode(t, LLAMA_TOKEN_EOS, i, &len);
		app->vocab[i] = malloc(len + 1);
		if (!app->vocab[i]) {
			app_model_done(app);
			return -1;
		}
		if (len)
			memcpy(app->vocab[i], piece, len);
		app->vocab[i][len] = '\0';
	}
	app->model = m;
	app->tokens = tokens;
	app->given = given;
	if (app_model_measure(app) != 0) {
		app_model_done(app);
		return -1;
	}
	return 0;
}

int app_open_model(struct app *app, const struct scene *sc, char *err, size_t size)
{
	if (!sc->model)
		return 0;
	/* The scene loaded and checked them, and keeps them. */
	if (app_set_model(app, sc->model, sc->tokenizer, sc->tokens, sc->given) != 0) {
		snprintf(err, size, "out of memory while running the model");
		return -1;
	}
	return 0;
}
