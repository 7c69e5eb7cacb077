/*
 * scene_model_impl.h: what scene_model.c and scene_model_open.c share, the
 * checks' model plan and the helpers each calls in the other.
 */
#ifndef H2O_SCENE_MODEL_IMPL_H
#define H2O_SCENE_MODEL_IMPL_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "scene_impl.h"

struct llama_model;
struct llama_tokenizer;

/* What the checks of a model scene loaded, for the last pass. */
struct model_plan {
	struct llama_model *model;
	struct llama_tokenizer *tok;
	int *tokens; /* n ids: the text's given, then room for the generated */
	int given, n;
	float temperature;
	uint64_t seed;
	char *model_path, *tokenizer_path;
	double tokenizer_bytes; /* its file's size: about what it holds */
	bool folder;            /* the model is a Hugging Face folder */
};

/* scene_model.c: the model's layout against what a scene may hold (MSG
 * says why not). */
int scene_model_check_shape(const struct llama_model *m, char *msg, size_t size);
/* Whether the scene keeps its queries before RoPE: a policy that reads
 * them runs (scene_options.policy_queries). */
bool scene_model_keeps_prerope(const struct loader *ld, const struct plan *p);

/* scene_model_open.c: the model at "model", its tokenizer and the text at
 * "text_file", opened and checked. */
int scene_model_open_model(const struct loader *ld, struct plan *p, char *shown, size_t shown_size);
int scene_model_open_tokenizer(const struct loader *ld, struct plan *p, const char *model_shown);
/* Whether a text file or a tokenizer file of ST's size is past its limit
 * (MSG says so), from fstat before a byte is read. */
bool scene_model_text_too_big(const struct stat *st, char *msg, size_t size);
bool scene_model_tokenizer_too_big(const struct stat *st, char *msg, size_t size);
int scene_model_read_text_file(const struct loader *ld, struct plan *p, const struct where *w,
                               char *shown, size_t shown_size);

#endif
