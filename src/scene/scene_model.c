/*
 * scene_model: a scene that names a model instead of giving its tokens.
 *
 * "model" and "tokenizer" name a llama2.c checkpoint and its tokenizer
 * (files under the same folder rule as .npy files); "text" (a string) or
 * "text_file" is the text, teacher-forced, or "prompt_text" with
 * "generate": N the prompt of N tokens the model chooses. The checks open
 * and check the model (its own loader's message becomes the scene's
 * error line, at the string that named the file), the tokenizer against
 * the model's vocabulary, and the text's tokens against the model's
 * context; the last pass (scene_model_build.c) runs the forward pass over
 * every token with a full cache and copies what each layer's attention
 * took in: the scene is then an ordinary vector scene of the model's
 * layers, heads, key/value heads and head size.
 *
 * The command line's model scene (scene_load_model, h2o-tui --model)
 * takes the same path with the files named directly.
 */
#include "scene_impl.h"
#include "scene_model_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h2o/gguf.h"
#include "h2o/llama.h"
#include "h2o/tokenizer.h"
#include "h2o/llama_trace.h"

/* The most a "temperature" may be: logits divided by more are noise. */
#define MODEL_MAX_TEMPERATURE 100.0

void scene_model_done(struct plan *p)
{
	struct model_plan *mp = p->model;
	if (mp == NULL)
		return;
	llama_free(mp->model);
	llama_tokenizer_free(mp->tok);
	free(mp->tokens);
	free(mp->model_path);
	free(mp->tokenizer_path);
	free(mp);
	p->model = NULL;
}

/* The model's layout against what a scene may hold; MSG says why not. */
int scene_model_check_shape(const struct llama_model *m, char *msg, size_t size)
{
	const struct llama_config *c = llama_model_config(m);
	if (c->head_size > SCENE_MAX_DIM)
		snprintf(msg, size,
		         "head size %d (dim %d / %d heads), more than the %d a scene allows",
		         c->head_size, c->dim, c->n_heads, SCENE_MAX_DIM);
	else if (c->n_heads > SCENE_MAX_HEADS)
		snprintf(msg, size, "%d query heads in a layer, more than the %d a scene allows",
		         c->n_heads, SCENE_MAX_HEADS);
	else if ((long)c->n_layers * c->n_heads > SCENE_MAX_QUERY_HEADS)
		snprintf(msg, size,
		         "%d layers x %d heads = %ld query heads, more than the %d a scene allows",
		         c->n_layers, c->n_heads, (long)c->n_layers * c->n_heads,
		         SCENE_MAX_QUERY_HEADS);
	else
		return 0;
	return -1;
}

/* LEN bytes of TEXT without ASCII white space at either end. */
static const char *trim(const char *text, size_t *len)
{
	static const char space[] = " \t\n\v\f\r";
	while (*len > 0 && memchr(space, text[0], sizeof space - 1) != NULL) {
		text++;
		(*len)--;
	}
	while (*len > 0 && memchr(space, text[*len - 1], sizeof space - 1) != NULL)
		(*len)--;
	return text;
}

/* The text's tokens, BOS first, into MP with room for GENERATE more.
 * -1 and MSG when the text is empty, too long or cannot be encoded;
 * *AT_GENERATE tells whether "generate" is what went past the context. */
/* The load's progress: the text's encoding is its first part (scene.h). */
#define ENCODE_SHARE SCENE_TOLD_ENCODE

/* The loader's told, of the encoding: *STOPPED when it asked to stop. */
struct encode_told {
	int (*told)(void *, double, double);
	void *ctx;
	bool stopped;
};

static int tell_bytes(void *ctx, size_t done, size_t total)
{
	struct encode_told *et = ctx;
	if (et->told(et->ctx, total > 0 ? ENCODE_SHARE * (double)done / (double)total : 0, 1) == 0)
		return 0;
	et->stopped = true;
	return 1;
}

static int encode(struct model_plan *mp, const char *text, size_t len, int generate,
                  const char *model_name, char *msg, size_t size, bool *at_generate,
                  struct encode_told *et)
{
	const struct llama_config *c = llama_model_config(mp->model);
	const int seq = c->seq_len, most = llama_tokenizer_max_piece(mp->tok);

	*at_generate = false;
	if (len == 0) {
		snprintf(msg, size, "expected a text, got an empty one");
		return -1;
	}
	if (len > SCENE_MAX_MODEL_TEXT_BYTES) {
		snprintf(msg, size, "expected at most %d bytes of text, got %zu",
		         SCENE_MAX_MODEL_TEXT_BYTES, len);
		return -1;
	}
	if (memchr(text, '\0', len) != NULL) {
		snprintf(msg, size, "byte %zu of the text is a NUL byte",
		         (size_t)((const char *)memchr(text, '\0', len) - text));
		return -1;
	}
	/* Each token is at most MOST bytes: a text that cannot fit is told
	 * before the encoding, which takes time with the square of its bytes. */
	const size_t least = 1 + (len + 1 + (size_t)most - 1) / (size_t)most;
	if (least > (size_t)seq) {
		snprintf(msg, size,
		         "the text's %zu bytes are at least %zu tokens, more than the context of "
		         "%s (seq_len %d)",
		         len, least, model_name, seq);
		return -1;
	}
	/* The tokenizer's own bound: a model file's vocabulary may give more
	 * tokens than bytes (a byte-level fallback, added pieces). */
	const size_t cap = llama_tokenizer_max_tokens(mp->tok, len);
	if (cap > (size_t)INT_MAX) {
		snprintf(msg, size, "expected at most %d bytes of text, got %zu",
		         SCENE_MAX_MODEL_TEXT_BYTES, len);
		return -1;
	}
	mp->tokens = malloc((cap + (size_t)generate) * sizeof *mp->tokens);
	if (mp->tokens == NULL) {
		snprintf(msg, size, "cannot load: out of memory");
		return -1;
	}
	char e[LLAMA_ERR_MAX];
	const struct llama_tok_told tt = {et->told ? tell_bytes : NULL, et};
	const int n =
	        llama_tokenizer_encode_told(mp->tok, text, len, 1, 0, mp->tokens, (int)cap, e, &tt);
	if (n < 0 && et->stopped) {
		snprintf(msg, size, "stopped before the model ran");
		return -1;
	}
	if (n < 0) {
		snprintf(msg, size, "cannot encode the text: %s", e);
		return -1;
	}
	if (n > seq) {
		snprintf(msg, size,
		         "the text is %d tokens (BOS first), more than the context of %s "
		         "(seq_len %d)",
		         n, model_name, seq);
		return -1;
	}
	if (generate > seq - n) {
		*at_generate = true;
		snprintf(msg, size,
		         "the prompt's %d tokens and %d to generate are %ld, more than the "
		         "context of %s (seq_len %d)",
		         n, generate, (long)n + generate, model_name, seq);
		return -1;
	}
	mp->given = n;
	mp->n = n + generate;
	/* A run's caches hold the text's positions, not the model's context. */
	const size_t run = llama_run_bytes_len(mp->model, mp->n), mib = 1024 * 1024;
	if (run > (size_t)SCENE_MAX_MODEL_RUN_BYTES) {
		snprintf(msg, size,
		         "a run of %s over the text takes %zu MiB (%d layers x %d key/value heads "
		         "of %d slots), more than the %ld MiB a model scene allows",
		         model_name, (run + mib - 1) / mib, c->n_layers, c->n_kv_heads, mp->n,
		         SCENE_MAX_MODEL_RUN_BYTES / (long)mib);
		return -1;
	}
	return 0;
}

/* The plan's layout from the loaded model. */
static void plan_layout(struct plan *p)
{
	const struct llama_config *c = llama_model_config(p->model->model);
	p->dim = c->head_size;
	p->layers = c->n_layers;
	p->heads = c->n_heads;
	p->kv_heads = c->n_kv_heads;
	p->n = p->model->n;
	p->mode = SCENE_VECTOR;
	p->has_v = true;
	p->scale = 1.0 / sqrt((double)c->head_size);
	p->default_prompt = p->model->given < p->model->n ? p->model->given : 0;
}

/* The base name of PATH, for messages about the model. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* Whether the scene keeps its queries before RoPE: a policy that reads
 * them (scene_options.policy_queries) runs, of the caller's choice, else
 * of the scene's "policies", else of every policy. */
bool scene_model_keeps_prerope(const struct loader *ld, const struct plan *p)
{
	const unsigned run = ld->policies ? ld->policies : p->policies;
	return run ? (run & ld->policy_queries) != 0 : ld->policy_queries != 0;
}

/* The memory of the model scene's last pass against MAX (0: no bound):
 * the model, a run of it and its tokenizer, and the q, k and v rows of
 * every layer (with PREROPE the queries before RoPE too, and the run's
 * copy of them), as floats from the run and as the scene's doubles. 0, or
 * -1 with WHAT saying what and *BYTES how much. */
static int run_fits(const struct model_plan *mp, bool prerope, double max, const char *shown,
                    double *bytes, char *what, size_t size)
{
	if (!(max > 0))
		return 0;
	const struct llama_config *c = llama_model_config(mp->model);
	const double heads = prerope ? 2.0 * c->n_heads : c->n_heads;
	const double rows = (double)c->n_layers * (heads + 2.0 * c->n_kv_heads) * mp->n;
	*bytes = (double)llama_model_bytes(mp->model) +
	         (double)llama_run_bytes_len(mp->model, mp->n) + mp->tokenizer_bytes +
	         rows * c->head_size * (sizeof(float) + sizeof(double)) +
	         (prerope ? (double)llama_run_prerope_bytes(mp->model, mp->n) : 0.0);
	if (*bytes <= max)
		return 0;
	snprintf(what, size,
	         "the model%s%s run over %d tokens: its weights, a run's caches, its tokenizer "
	         "and every layer's q, k, v%s",
	         shown ? " " : "", shown ? shown : "", mp->n,
	         prerope ? " and its queries before RoPE" : "");
	return -1;
}

/* Whether TOLD (of the loader's options) stops the load before the text is
 * encoded: *STOPPED and ERR say so. */
static bool stopped(int (*told)(void *, double, double), void *ctx, char *err, bool *flag)
{
	if (told == NULL || told(ctx, 0, 1) == 0)
		return false;
	snprintf(err, SCENE_ERROR_MAX, "stopped before the model ran");
	*flag = true;
	return true;
}

/* ---- the JSON scene -------------------------------------------------- */

/* A field only a generation scene has. */
static int needs_generate(const struct loader *ld, const struct plan *p, enum root_field id)
{
	const struct field *f = p->root;
	if (f[id].node == NULL || f[R_GENERATE].node != NULL)
		return 0;
	return scene_fail_field(ld, &p->w_root, f[id].index,
	                        "\"%s\" belongs to a generation scene, which has \"prompt_text\" "
	                        "and \"generate\"",
	                        scene_root_names[id]);
}

/* The fields' kinds and how they go together, before any file is opened. */
static int check_fields(const struct loader *ld, struct plan *p, int *generate)
{
	const struct field *f = p->root;
	static const enum root_field texts[] = {R_TEXT, R_TEXT_FILE, R_PROMPT_TEXT};
	int first = -1;

	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		if (f[texts[i]].node == NULL)
			continue;
		if (first >= 0) {
			const bool later = f[texts[i]].index > f[first].index;
			const int a = later ? first : (int)texts[i],
			          b = later ? (int)texts[i] : first;
			return scene_fail_field(
			        ld, &p->w_root, f[b].index,
			        "has both \"%s\" and \"%s\"; a model scene gives its "
			        "text one way: \"text\", \"text_file\", or "
			        "\"prompt_text\" with \"generate\"",
			        scene_root_names[a], scene_root_names[b]);
		}
		first = (int)texts[i];
	}
	if (first < 0)
		return scene_fail_value(ld, &p->w_root,
		                        "missing required field \"text\" (or \"text_file\", or "
		                        "\"prompt_text\" with \"generate\")");
	if (f[R_GENERATE].node != NULL && first != R_PROMPT_TEXT)
		return scene_fail_field(ld, &p->w_root, f[R_GENERATE].index,
		                        "\"generate\" continues a \"prompt_text\"; a \"%s\" is "
		                        "teacher-forced",
		                        scene_root_names[first]);
	if (first == R_PROMPT_TEXT && f[R_GENERATE].node == NULL)
		return scene_fail_field(ld, &p->w_root, f[R_PROMPT_TEXT].index,
		                        "\"prompt_text\" needs \"generate\", the number of tokens "
		                        "the model adds to it");
	if (needs_generate(ld, p, R_TEMPERATURE) != 0 || needs_generate(ld, p, R_SEED) != 0)
		return -1;
	if (f[R_SCALE].node != NULL)
		return scene_fail_field(ld, &p->w_root, f[R_SCALE].index,
		                        "\"scale\" is the model's own in a model scene, 1/sqrt of "
		                        "its head size");
	static const enum root_field strings[] = {R_TEXT, R_PROMPT_TEXT};
	for (size_t j = 0; j < sizeof strings / sizeof strings[0]; j++) {
		const enum root_field i = strings[j];
		if (f[i].node == NULL)
			continue;
		const struct where w =
		        scene_where_field(&p->w_root, f[i].index, scene_root_names[i]);
		if (!cJSON_IsString(f[i].node))
			return scene_fail_got(ld, &w, f[i].node, "expected a string (the text)");
		if (scene_holds_nul(ld, &w))
			return scene_fail_value(ld, &w,
			                        "expected a text, got one holding \\u0000 (a NUL "
			                        "character)");
	}
	*generate = 0;
	if (f[R_GENERATE].node != NULL) {
		const struct where w =
		        scene_where_field(&p->w_root, f[R_GENERATE].index, "generate");
		if (scene_check_int(ld, f[R_GENERATE].node, &w, 1, LLAMA_MAX_SEQ, generate) != 0)
			return -1;
	}
	p->model->temperature = 0.0f;
	p->model->seed = 1;
	if (f[R_TEMPERATURE].node != NULL) {
		const struct where w =
		        scene_where_field(&p->w_root, f[R_TEMPERATURE].index, "temperature");
		const cJSON *t = f[R_TEMPERATURE].node;
		if (scene_check_number(ld, t, &w) != 0)
			return -1;
		if (!(t->valuedouble >= 0.0 && t->valuedouble <= MODEL_MAX_TEMPERATURE))
			return scene_fail_got(ld, &w, t, "expected a number from 0 to %g",
			                      MODEL_MAX_TEMPERATURE);
		p->model->temperature = (float)t->valuedouble;
	}
	if (f[R_SEED].node != NULL) {
		const struct where w = scene_where_field(&p->w_root, f[R_SEED].index, "seed");
		int seed;
		if (scene_check_int(ld, f[R_SEED].node, &w, 1, INT_MAX, &seed) != 0)
			return -1;
		p->model->seed = (uint64_t)seed;
	}
	return 0;
}

int scene_check_model(const struct loader *ld, struct plan *p)
{
	const struct field *f = p->root;
	char model_shown[160], file_shown[160] = "";
	int generate;

	if ((p->model = calloc(1, sizeof *p->model)) == NULL)
		return scene_fail_nomem(ld);
	if (check_fields(ld, p, &generate) != 0 ||
	    scene_model_open_model(ld, p, model_shown, sizeof model_shown) != 0 ||
	    scene_model_open_tokenizer(ld, p, model_shown) != 0)
		return -1;

	const enum root_field id = f[R_TEXT_FILE].node ? R_TEXT_FILE
	                           : f[R_TEXT].node    ? R_TEXT
	                                               : R_PROMPT_TEXT;
	const struct where w = scene_where_field(&p->w_root, f[id].index, scene_root_names[id]);
	const char *text;
	size_t len;
	if (id == R_TEXT_FILE) {
		if (scene_model_read_text_file(ld, p, &w, file_shown, sizeof file_shown) != 0)
			return -1;
		len = p->text_len;
		text = trim(p->text_file ? p->text_file : "", &len);
	} else {
		text = f[id].node->valuestring;
		len = strlen(text);
	}
	char msg[SCENE_ERROR_MAX / 2];
	bool at_generate;
	if (stopped(ld->told, ld->told_ctx, ld->err, &p->stopped))
		return -1;
	struct encode_told et = {ld->told, ld->told_ctx, false};
	if (encode(p->model, text, len, generate, model_shown, msg, sizeof msg, &at_generate,
	           &et) != 0) {
		if (et.stopped) {
			snprintf(ld->err, SCENE_ERROR_MAX, "%s", msg);
			p->stopped = true;
			return -1;
		}
		if (at_generate) {
			const struct where wg =
			        scene_where_field(&p->w_root, f[R_GENERATE].index, "generate");
			return scene_fail_value(ld, &wg, "%s", msg);
		}
		if (id == R_TEXT_FILE)
			return scene_fail_value(ld, &w, "%s: %s", file_shown, msg);
		return scene_fail_value(ld, &w, "%s", msg);
	}
	double bytes;
	if (run_fits(p->model, scene_model_keeps_prerope(ld, p), ld->max_memory, model_shown,
	             &bytes, msg, sizeof msg) != 0) {
		p->too_large = true;
		return scene_fail_too_large(ld->err, SCENE_ERROR_MAX, ld->needed, bytes, msg);
	}
	plan_layout(p);
	return 0;
}

/* ---- the command line's model scene ------------------------------------ */

int scene_load_model(const struct scene_model_args *a, struct scene **out,
                     char err[SCENE_ERROR_MAX])
{
	struct plan p;
	struct loader ld = {.name = a->model,
	                    .text = "",
	                    .len = 0,
	                    .err = err,
	                    .told = a->told,
	                    .told_ctx = a->told_ctx,
	                    .policy_queries = a->policy_queries,
	                    .policies = a->policies};
	char e[LLAMA_ERR_MAX], msg[SCENE_ERROR_MAX / 2];
	int rc = -1;

	*out = NULL;
	err[0] = '\0';
	memset(&p, 0, sizeof p);
	for (int i = 0; i < 3; i++)
		p.npy[i].file.fd = -1;
	p.source = SRC_MODEL;
	p.heavy = a->heavy;
	p.recent = a->recent;
	struct model_plan *mp = p.model = calloc(1, sizeof *p.model);
	if (mp == NULL)
		return scene_fail_file(err, a->model, "cannot load: out of memory");
	mp->temperature = (float)a->temperature;
	mp->seed = a->seed ? a->seed : 1;
	struct llama_limit limit = {.max_bytes = a->max_memory};
	const int lrc = llama_load_within(a->model, &limit, &mp->model, e);
	if (lrc == LLAMA_TOO_LARGE) {
		/* The caller names the file (escaped: the name is the user's). */
		snprintf(msg, sizeof msg, "the model: %s", e);
		scene_fail_too_large(err, SCENE_ERROR_MAX, a->needed, limit.needed, msg);
		rc = SCENE_TOO_LARGE;
		goto done;
	}
	if (lrc != 0) {
		scene_fail_file(err, a->model, "%s", e);
		goto done;
	}
	const struct llama_config *c = llama_model_config(mp->model);
	if (scene_model_check_shape(mp->model, msg, sizeof msg) != 0) {
		scene_fail_file(err, a->model, "%s", msg);
		goto done;
	}
	struct stat tst;
	if (stat(a->tokenizer, &tst) == 0 && S_ISREG(tst.st_mode) &&
	    scene_model_tokenizer_too_big(&tst, msg, sizeof msg)) {
		scene_fail_file(err, a->tokenizer, "%s", msg);
		goto done;
	}
	if (stat(a->tokenizer, &tst) == 0)
		mp->tokenizer_bytes = (double)tst.st_size;
	if (llama_tokenizer_load(a->tokenizer, c->vocab_size, &mp->tok, e) != 0) {
		scene_fail_file(err, a->tokenizer, "for the %d tokens of %s: %s", c->vocab_size,
		                base_name(a->model), e);
		goto done;
	}
	mp->model_path = strdup(a->model);
	mp->tokenizer_path = strdup(a->tokenizer);
	if (!mp->model_path || !mp->tokenizer_path) {
		scene_fail_file(err, a->model, "cannot load: out of memory");
		goto done;
	}
	const char *text = a->text, *text_name = "h2o-tui: --text-string";
	size_t len = a->text_len;
	if (a->text_file != NULL) {
		text_name = a->text_file;
		const int fd = open(a->text_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		struct stat st;
		if (fd < 0) {
			scene_fail_file(err, a->text_file, "cannot open: %s", strerror(errno));
			goto done;
		}
		const char *why = fstat(fd, &st) != 0          ? strerror(errno)
		                  : !S_ISREG(st.st_mode)       ? "not a regular file"
		                  : fcntl(fd, F_SETFL, 0) != 0 ? strerror(errno)
		                                               : NULL;
		if (why != NULL) {
			close(fd);
			scene_fail_file(err, a->text_file, "cannot open: %s", why);
			goto done;
		}
		if (scene_model_text_too_big(&st, msg, sizeof msg)) {
			close(fd);
			scene_fail_file(err, a->text_file, "%s", msg);
			goto done;
		}
		rc = scene_read_all(fd, (size_t)st.st_size, SCENE_MAX_MODEL_TEXT_BYTES,
		                    &p.text_file, &p.text_len, msg, sizeof msg);
		close(fd);
		if (rc != 0) {
			scene_fail_file(err, a->text_file, "%s", msg);
			goto done;
		}
		len = p.text_len;
		text = trim(p.text_file ? p.text_file : "", &len);
	}
	bool at_generate;
	if (stopped(a->told, a->told_ctx, err, &p.stopped)) {
		rc = SCENE_STOPPED;
		goto done;
	}
	struct encode_told et = {a->told, a->told_ctx, false};
	rc = encode(mp, text ? text : "", text ? len : 0, a->generate, base_name(a->model), msg,
	            sizeof msg, &at_generate, &et);
	if (rc != 0 && et.stopped) {
		snprintf(err, SCENE_ERROR_MAX, "%s", msg);
		rc = SCENE_STOPPED;
		goto done;
	}
	if (rc != 0) {
		scene_fail_file(err, at_generate ? "h2o-tui: --generate" : text_name, "%s", msg);
		goto done;
	}
	double bytes;
	if (run_fits(mp, scene_model_keeps_prerope(&ld, &p), a->max_memory, NULL, &bytes, msg,
	             sizeof msg) != 0) {
		scene_fail_too_large(err, SCENE_ERROR_MAX, a->needed, bytes, msg);
		rc = SCENE_TOO_LARGE;
		goto done;
	}
	plan_layout(&p);
	p.prompt = p.default_prompt;
	rc = scene_build(&ld, &p, out);
	if (rc != 0 && p.stopped)
		rc = SCENE_STOPPED;
	if (rc == 0) {
		struct scene *sc = *out;
		char title[256], desc[512];
		const char *from = a->text_file ? base_name(a->text_file) : "a text";
		snprintf(title, sizeof title, "%s: %s", base_name(a->model),
		         a->generate ? "a generated story" : from);
		snprintf(desc, sizeof desc,
		         "%d tokens%s through %s, run here (%d layers x %d heads, %d key/value "
		         "heads): q, k, v of its full cache",
		         sc->n, a->generate ? " (the prompt, then the model's own)" : "",
		         base_name(a->model), c->n_layers, c->n_heads, c->n_kv_heads);
		char *t = strdup(title), *d = strdup(desc);
		if (t == NULL || d == NULL) {
			free(t);
			free(d);
			scene_free(sc);
			*out = NULL;
			rc = scene_fail_file(err, a->model, "cannot load: out of memory");
		} else {
			free(sc->title);
			free(sc->description);
			sc->title = t;
			sc->description = d;
		}
	}
done:
	free(p.text_file);
	scene_model_done(&p);
	return rc;
}
