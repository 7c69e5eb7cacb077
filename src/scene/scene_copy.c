/*
 * scene_copy: the last pass, a checked scene copied into its arrays.
 *
 * Only a scene that passed every check gets here, so the file itself has
 * proven every size; what can still fail is memory, and the .npy files'
 * numbers, which are read only now.
 */
#include "scene_impl.h"

#include <stdint.h>
#include <stdio.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* N doubles, or NULL; N was bounded by the checks but is checked again
 * rather than trusted to a multiplication that could wrap. */
static double *alloc_doubles(size_t rows, size_t cols)
{
	if (cols != 0 && rows > SIZE_MAX / sizeof(double) / cols)
		return NULL;
	return malloc(rows * cols * sizeof(double) + (rows * cols == 0));
}

static void copy_row(double *dst, const cJSON *arr)
{
	for (const cJSON *e = arr->child; e != NULL; e = e->next)
		*dst++ = e->valuedouble;
}

static char *dup_string(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	if (d != NULL)
		memcpy(d, s, n);
	return d;
}

/* The heads' names: the file's (one per head of a layer, used for every
 * layer, or one per head), or for a generated scene the character of each
 * head; layers x heads of them. False when memory runs out. */
static bool start_head_names(const struct plan *p, struct scene *sc)
{
	const cJSON *names = p->root[R_HEAD_NAMES].node;
	const int all = p->layers * p->heads;
	if (all == 1 || (names == NULL && p->source != SRC_GENERATE))
		return true;
	sc->head_names = calloc((size_t)all, sizeof *sc->head_names);
	if (sc->head_names == NULL)
		return false;
	const cJSON *e = names ? names->child : NULL;
	for (int i = 0; i < all; i++) {
		if (names != NULL && e == NULL)
			e = names->child; /* one per head of a layer: again for the next */
		const char *name =
		        e ? e->valuestring : generate_head_character_at(i / p->heads, i % p->heads);
		if ((sc->head_names[i] = dup_string(name)) == NULL)
			return false;
		if (e != NULL)
			e = e->next;
	}
	return true;
}

/* The scene with its header fields and its arrays allocated (text
 * entries NULL), or NULL when memory runs out. */
static struct scene *scene_start(const struct loader *ld, const struct plan *p)
{
	const size_t n = (size_t)p->n, dim = (size_t)p->dim;
	struct scene *sc = calloc(1, sizeof *sc);

	if (sc == NULL)
		return NULL;
	sc->heavy = p->heavy;
	sc->recent = p->recent;
	sc->dim = p->dim;
	sc->n = p->n;
	sc->mode = p->mode;
	sc->scale = p->scale;
	sc->layers = p->layers;
	sc->heads = p->heads;
	sc->kv_heads = p->kv_heads;
	sc->prompt = p->prompt;
	sc->interval = p->interval;
	sc->policies = p->policies;
	memcpy(sc->policy_settings, p->settings, sizeof sc->policy_settings);
	sc->n_policy_settings = p->n_settings;

	const cJSON *title = p->root[R_TITLE].node, *desc = p->root[R_DESCRIPTION].node;
	const cJSON *watch = p->root[R_WATCH].node;
	if (title != NULL) {
		sc->title = dup_string(title->valuestring);
	} else {
		/* The file's base name; a name ending in '/' keeps all of it. */
		const char *slash = strrchr(ld->name, '/');
		sc->title = dup_string(slash && slash[1] ? slash + 1 : ld->name);
	}
	sc->description = dup_string(desc ? desc->valuestring : "");
	sc->watch = dup_string(watch ? watch->valuestring : "");
	sc->lesson = cJSON_IsTrue(p->root[R_LESSON].node);
	sc->text = calloc(n, sizeof *sc->text);
	/* One block per query head (q, attn) or key/value head (k, v), layer
	 * after layer (heads.h). */
	const size_t heads = (size_t)p->layers * (size_t)p->heads;
	const size_t kv_heads = (size_t)p->layers * (size_t)p->kv_heads;
	if (p->has_v)
		sc->v = alloc_doubles(kv_heads * n, dim);
	if (p->mode == SCENE_VECTOR) {
		sc->q = alloc_doubles(heads * n, dim);
		sc->k = alloc_doubles(kv_heads * n, dim);
	} else {
		sc->attn = alloc_doubles(heads, scene_attn_offset(p->n));
	}
	const cJSON *notes = p->root[R_NOTES].node;
	const int n_notes = notes ? scene_count_children(notes) : 0;
	if (n_notes > 0) {
		sc->note_step = calloc((size_t)n_notes, sizeof *sc->note_step);
		sc->note_text = calloc((size_t)n_notes, sizeof *sc->note_text);
		if (!sc->note_step || !sc->note_text) {
			scene_free(sc);
			return NULL;
		}
		/* Checked: each key is a step number, each value a string. */
		for (const cJSON *m = notes->child; m != NULL; m = m->next) {
			sc->note_step[sc->n_notes] = atoi(m->string);
			sc->note_text[sc->n_notes] = dup_string(m->valuestring);
			if (!sc->note_text[sc->n_notes++]) {
				scene_free(sc);
				return NULL;
			}
		}
	}
	if (!start_head_names(p, sc)) {
		scene_free(sc);
		return NULL;
	}
	if (!sc->title || !sc->description || !sc->watch || !sc->text || (p->has_v && !sc->v) ||
	    (p->mode == SCENE_VECTOR ? !sc->q || !sc->k : !sc->attn)) {
		scene_free(sc);
		return NULL;
	}
	return sc;
}

/* Element I of the array NODE, or NODE itself when the array would have
 * only one (COUNT == 1). */
static const cJSON *nth(const cJSON *node, int count, int i)
{
	if (count == 1)
		return node;
	const cJSON *e = node->child;
	while (i-- > 0)
		e = e->next;
	return e;
}

/* Token field NODE's array for layer L and head H of COUNT in a layer. */
static const cJSON *head_of(const cJSON *node, const struct plan *p, int count, int l, int h)
{
	return nth(nth(node, p->layers, l), count, h);
}

static int build_tokens(const struct loader *ld, const struct plan *p, struct scene *sc)
{
	const cJSON *tokens = p->root[R_TOKENS].node;
	const size_t dim = (size_t)p->dim;
	size_t i = 0;

	for (const cJSON *t = tokens->child; t != NULL; t = t->next, i++) {
		struct field f[T_COUNT];
		scene_scan_fields(ld, t, &p->w_tokens, scene_token_names, T_COUNT, f); /* checked */
		if ((sc->text[i] = dup_string(f[T_TEXT].node->valuestring)) == NULL)
			return scene_fail_nomem(ld);
		const size_t block = (size_t)p->n * dim, tri = scene_attn_offset(p->n);
		for (int l = 0; l < p->layers; l++) {
			for (int h = 0; h < p->heads; h++) {
				const size_t qh = (size_t)l * (size_t)p->heads + (size_t)h;
				const cJSON *row =
				        head_of(f[p->mode == SCENE_VECTOR ? T_Q : T_ATTN].node, p,
				                p->heads, l, h);
				if (p->mode == SCENE_VECTOR)
					copy_row(sc->q + qh * block + i * dim, row);
				else
					copy_row(sc->attn + qh * tri + scene_attn_offset((int)i),
					         row);
			}
			for (int g = 0; g < p->kv_heads; g++) {
				const size_t kv = (size_t)l * (size_t)p->kv_heads + (size_t)g;
				if (p->has_v)
					copy_row(sc->v + kv * block + i * dim,
					         head_of(f[T_V].node, p, p->kv_heads, l, g));
				if (p->mode == SCENE_VECTOR)
					copy_row(sc->k + kv * block + i * dim,
					         head_of(f[T_K].node, p, p->kv_heads, l, g));
			}
		}
	}
	return 0;
}

/* Every query head from the same model, each with its own character and
 * random stream (generate_head_at); the first query head of a group gives
 * its key/value head's k and v, the others only their q. Layer 0's head 0
 * names the tokens. A scene of one head in one layer is the model as the
 * file gives it. */
static int build_generated(const struct loader *ld, const struct plan *p, struct scene *sc)
{
	const size_t block = (size_t)p->n * (size_t)p->dim;
	const int group = p->heads / p->kv_heads;
	const bool one = p->layers * p->heads == 1;
	int rc = 0;
	for (int l = 0; l < p->layers && rc == 0; l++) {
		for (int h = 0; h < p->heads && rc == 0; h++) {
			struct generate_params g = p->gen;
			if (!one)
				generate_head_at(&g, l, h);
			const size_t qi = (size_t)l * (size_t)p->heads + (size_t)h;
			const size_t kv = (size_t)l * (size_t)p->kv_heads + (size_t)(h / group);
			const bool first = h % group == 0;
			rc = generate_fill(
			        &g, sc->q + qi * block, first ? sc->k + kv * block : NULL,
			        first ? sc->v + kv * block : NULL, qi == 0 ? sc->text : NULL);
		}
	}
	return rc != 0 ? scene_fail_nomem(ld) : 0;
}

/* One .npy file read into its array, on a thread of its own. */
struct npy_job {
	struct npy_file *file;
	double *out;
	int rc;
	char msg[NPY_MSG_MAX];
};

static void *npy_job_run(void *arg)
{
	struct npy_job *job = arg;
	job->rc = npy_read(job->file, job->out, job->msg);
	return NULL;
}

static int build_npy(const struct loader *ld, struct plan *p, struct scene *sc)
{
	double *const arrays[3] = {sc->q, sc->k, sc->v};
	const cJSON *text = p->root[R_TEXT].node;

	/* q, k and v side by side: a model's trace is hundreds of megabytes,
	 * and most of its time is the pages of the arrays being made. A
	 * thread that cannot start is read here; the first error in the
	 * order q, k, v is the one told. */
	struct npy_job jobs[3];
	pthread_t thread[3];
	bool started[3] = {false, false, false};
	for (int i = 0; i < 3; i++) {
		jobs[i] = (struct npy_job){.file = &p->npy[i].file, .out = arrays[i]};
		if (i > 0)
			started[i] = pthread_create(&thread[i], NULL, npy_job_run, &jobs[i]) == 0;
	}
	for (int i = 0; i < 3; i++)
		if (!started[i])
			npy_job_run(&jobs[i]);
	for (int i = 1; i < 3; i++)
		if (started[i])
			pthread_join(thread[i], NULL);
	for (int i = 0; i < 3; i++)
		if (jobs[i].rc != 0)
			return scene_fail_value(ld, &p->npy[i].w, "%s: %s", p->npy[i].shown,
			                        jobs[i].msg);
	/* No text file: no pointer arithmetic on NULL either. */
	const char *at = p->text_file, *end = at ? at + p->text_len : NULL;
	const cJSON *e = text && cJSON_IsArray(text) ? text->child : NULL;
	for (int i = 0; i < p->n; i++) {
		if (p->text_file != NULL) {
			size_t len;
			const char *line = scene_next_line(&at, end, &len);
			if ((sc->text[i] = malloc(len + 1)) != NULL) {
				memcpy(sc->text[i], line, len);
				sc->text[i][len] = '\0';
			}
		} else if (e != NULL) {
			sc->text[i] = dup_string(e->valuestring);
			e = e->next;
		} else {
			char name[16];
			snprintf(name, sizeof name, "t%d", i);
			sc->text[i] = dup_string(name);
		}
		if (sc->text[i] == NULL)
			return scene_fail_nomem(ld);
	}
	return 0;
}

/* The last pass: the scene's arrays, filled from where the tokens come. */
int scene_build(const struct loader *ld, struct plan *p, struct scene **out)
{
	struct scene *sc = scene_start(ld, p);
	int rc;

	if (sc == NULL)
		return scene_fail_nomem(ld);
	switch (p->source) {
	case SRC_GENERATE:
		rc = build_generated(ld, p, sc);
		break;
	case SRC_NPY:
		rc = build_npy(ld, p, sc);
		break;
	case SRC_MODEL:
		rc = scene_build_model(ld, p, sc);
		break;
	default:
		rc = build_tokens(ld, p, sc);
		break;
	}
	if (rc != 0) {
		scene_free(sc);
		return -1;
	}
	*out = sc;
	return 0;
}
