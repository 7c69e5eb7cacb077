/*
 * scene_model_open: a model scene's files opened and checked, for
 * scene_check_model (scene_model.c): the model at "model" against what the
 * scene says of its layout, the tokenizer at "tokenizer" (or the GGUF
 * model's own) and the text at "text_file".
 */
#include "scene_impl.h"
#include "scene_model_impl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h2o/gguf.h"
#include "h2o/llama.h"
#include "h2o/tokenizer.h"

/* "dim", "layers", "heads" or "kv_heads", when the scene gives it, must be
 * the model's. */
static int check_given(const struct loader *ld, const struct plan *p, enum root_field id, int want,
                       const char *what, const char *shown)
{
	const struct field *f = &p->root[id];
	if (f->node == NULL)
		return 0;
	const struct where w = scene_where_field(&p->w_root, f->index, scene_root_names[id]);
	int got;
	if (scene_check_int(ld, f->node, &w, 1, INT_MAX, &got) != 0)
		return -1;
	if (got == want)
		return 0;
	return scene_fail_value(ld, &w, "the model (%s) has %s %d, the scene says %d", shown, what,
	                        want, got);
}

/* Whether a text file of ST's size is past a model text's limit, told
 * from fstat before a byte is read (MSG says so): a file of gigabytes was
 * read up to the scene file's limit before the text's own was checked. */
bool scene_model_text_too_big(const struct stat *st, char *msg, size_t size)
{
	if (st->st_size <= SCENE_MAX_MODEL_TEXT_BYTES)
		return false;
	snprintf(msg, size, "expected at most %d bytes of text, the file has %lld",
	         SCENE_MAX_MODEL_TEXT_BYTES, (long long)st->st_size);
	return true;
}

/* The tokenizer file's size against the limit of any file a scene names,
 * from fstat before a byte is read: the tokenizer's own bound grows with
 * the vocabulary (4 KiB a token), gigabytes for a large one. */
bool scene_model_tokenizer_too_big(const struct stat *st, char *msg, size_t size)
{
	if (st->st_size <= SCENE_MAX_FILE_BYTES)
		return false;
	snprintf(msg, size, "cannot open: larger than %ld MiB",
	         SCENE_MAX_FILE_BYTES / (1024 * 1024));
	return true;
}

/* A file of a model's folder, for the model stage to read: the scene's
 * path rules hold for each (scene_open_in_folder). */
struct folder_ctx {
	const struct loader *ld;
	const char *dir;
};

static int open_in_folder(void *ctx, const char *name, char err[LLAMA_ERR_MAX])
{
	const struct folder_ctx *fc = ctx;
	return scene_open_in_folder(fc->ld, fc->dir, name, err, LLAMA_ERR_MAX);
}

/* The model at "model": opened, loaded, and its layout fit for a scene
 * and equal to what the scene says of it. */
int scene_model_open_model(const struct loader *ld, struct plan *p, char *shown, size_t shown_size)
{
	const struct field *f = &p->root[R_MODEL];
	const struct where w = scene_where_field(&p->w_root, f->index, "model");
	char path[4096], e[LLAMA_ERR_MAX], msg[SCENE_ERROR_MAX / 2];
	struct stat st;

	if (scene_check_file_name(ld, f->node, &w, "the name of a llama2.c checkpoint", shown,
	                          shown_size, path, sizeof path) != 0)
		return -1;
	struct llama_limit limit = {.max_bytes = ld->max_memory};
	int rc;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		/* A Hugging Face folder: each of its files under the scene's
		 * rules, as the one file of a GGUF or llama2.c model is. */
		struct folder_ctx fc = {.ld = ld, .dir = path};
		const struct llama_folder folder = {
		        .dir = path, .open = open_in_folder, .ctx = &fc};
		rc = llama_load_folder_within(&folder, &limit, &p->model->model, e);
		p->model->folder = true;
	} else {
		const int fd = scene_open_named(ld, &w, shown, path, &st);
		if (fd < 0)
			return -1;
		rc = llama_load_fd_within(fd, &limit, &p->model->model, e);
		close(fd);
	}
	if (rc == LLAMA_TOO_LARGE) {
		char what[SCENE_ERROR_MAX / 2];
		snprintf(what, sizeof what, "the model %s: %s", shown, e);
		p->too_large = true;
		return scene_fail_too_large(ld->err, SCENE_ERROR_MAX, ld->needed, limit.needed,
		                            what);
	}
	if (rc != 0)
		return scene_fail_value(ld, &w, "%s: %s", shown, e);
	if ((p->model->model_path = strdup(path)) == NULL)
		return scene_fail_nomem(ld);
	const struct llama_config *c = llama_model_config(p->model->model);
	if (scene_model_check_shape(p->model->model, msg, sizeof msg) != 0)
		return scene_fail_value(ld, &w, "%s: %s", shown, msg);
	if (check_given(ld, p, R_DIM, c->head_size, "head size (dim)", shown) != 0 ||
	    check_given(ld, p, R_LAYERS, c->n_layers, "layers", shown) != 0 ||
	    check_given(ld, p, R_HEADS, c->n_heads, "query heads (heads)", shown) != 0 ||
	    check_given(ld, p, R_KV_HEADS, c->n_kv_heads, "key/value heads (kv_heads)", shown) != 0)
		return -1;
	return 0;
}

/* No "tokenizer" beside a Hugging Face folder: the folder's
 * tokenizer.json, opened under the same rules as its other files. */
static int folder_tokenizer(const struct loader *ld, struct plan *p, const char *model_shown)
{
	char e[LLAMA_ERR_MAX], path[4200];
	struct stat st;

	const int fd =
	        scene_open_in_folder(ld, p->model->model_path, "tokenizer.json", e, sizeof e);
	if (fd < 0)
		return scene_fail_value(ld, &p->w_root, "%s: tokenizer.json: %s", model_shown, e);
	if (fstat(fd, &st) != 0 || scene_model_tokenizer_too_big(&st, e, sizeof e)) {
		close(fd);
		return scene_fail_value(ld, &p->w_root, "%s: tokenizer.json: %s", model_shown, e);
	}
	const int vocab = llama_model_config(p->model->model)->vocab_size;
	p->model->tokenizer_bytes = (double)st.st_size;
	const int rc = llama_tokenizer_load_fd(fd, vocab, &p->model->tok, e);
	close(fd);
	if (rc != 0)
		return scene_fail_value(ld, &p->w_root, "%s: tokenizer.json: %s", model_shown, e);
	snprintf(path, sizeof path, "%s/tokenizer.json", p->model->model_path);
	if ((p->model->tokenizer_path = strdup(path)) == NULL)
		return scene_fail_nomem(ld);
	return 0;
}

/* No "tokenizer": the model's own, when it is a GGUF file that has one. */
static int model_tokenizer(const struct loader *ld, struct plan *p, const char *model_shown)
{
	char e[LLAMA_ERR_MAX];

	if (p->model->folder)
		return folder_tokenizer(ld, p, model_shown);
	if (llama_model_gguf(p->model->model) == NULL)
		return scene_fail_value(ld, &p->w_root,
		                        "missing required field \"tokenizer\" (a model scene names "
		                        "the model's tokenizer beside its \"model\")");
	const int vocab = llama_model_config(p->model->model)->vocab_size;
	if (llama_tokenizer_load(p->model->model_path, vocab, &p->model->tok, e) != 0)
		return scene_fail_value(ld, &p->w_root, "%s: its tokenizer: %s", model_shown, e);
	if ((p->model->tokenizer_path = strdup(p->model->model_path)) == NULL)
		return scene_fail_nomem(ld);
	return 0;
}

int scene_model_open_tokenizer(const struct loader *ld, struct plan *p, const char *model_shown)
{
	const struct field *f = &p->root[R_TOKENIZER];
	if (f->node == NULL)
		return model_tokenizer(ld, p, model_shown);
	const struct where w = scene_where_field(&p->w_root, f->index, "tokenizer");
	char path[4096], shown[160], e[LLAMA_ERR_MAX];
	struct stat st;

	if (scene_check_file_name(ld, f->node, &w, "the name of a llama2.c tokenizer", shown,
	                          sizeof shown, path, sizeof path) != 0)
		return -1;
	const int fd = scene_open_named(ld, &w, shown, path, &st);
	if (fd < 0)
		return -1;
	if (scene_model_tokenizer_too_big(&st, e, sizeof e)) {
		close(fd);
		return scene_fail_value(ld, &w, "%s: %s", shown, e);
	}
	const int vocab = llama_model_config(p->model->model)->vocab_size;
	p->model->tokenizer_bytes = (double)st.st_size;
	const int rc = llama_tokenizer_load_fd(fd, vocab, &p->model->tok, e);
	close(fd);
	if (rc != 0)
		return scene_fail_value(ld, &w, "%s: for the %d tokens of %s: %s", shown, vocab,
		                        model_shown, e);
	if ((p->model->tokenizer_path = strdup(path)) == NULL)
		return scene_fail_nomem(ld);
	return 0;
}

/* "text_file": its bytes, read whole into the plan (trimmed later). */
int scene_model_read_text_file(const struct loader *ld, struct plan *p, const struct where *w,
                               char *shown, size_t shown_size)
{
	char path[4096], msg[128];
	struct stat st;

	if (scene_check_file_name(ld, p->root[R_TEXT_FILE].node, w, "the name of a text file",
	                          shown, shown_size, path, sizeof path) != 0)
		return -1;
	const int fd = scene_open_named(ld, w, shown, path, &st);
	if (fd < 0)
		return -1;
	if (scene_model_text_too_big(&st, msg, sizeof msg)) {
		close(fd);
		return scene_fail_value(ld, w, "%s: %s", shown, msg);
	}
	const int rc = scene_read_all(fd, (size_t)st.st_size, SCENE_MAX_MODEL_TEXT_BYTES,
	                              &p->text_file, &p->text_len, msg, sizeof msg);
	close(fd);
	if (rc != 0)
		return scene_fail_value(ld, w, "%s: %s", shown, msg);
	return 0;
}
