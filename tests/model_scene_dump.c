/*
 * model_scene_dump: a loaded scene's numbers, for tests/model_scene_test.sh
 * to compare with tools/llama2c.py trace.
 *
 *   model_scene_dump SCENE.json OUT
 *
 * writes OUT.json ({"n", "layers", "heads", "kv_heads", "dim", "prompt",
 * "given", "generated", "tokens", "text", "model_path", "tokenizer_path"})
 * and OUT_q.f64, OUT_k.f64, OUT_v.f64: q, k and v as the scene holds them
 * (block l * heads + h, or l * kv_heads + g, of n rows of dim doubles),
 * native doubles; and OUT_qpre.f64, the queries before RoPE laid out as
 * q (the scene is loaded as one that runs expected, which reads them).
 * A scene that does not load prints its error, exit 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/scene.h"

static int write_doubles(const char *out, const char *part, const double *x, size_t count)
{
	char name[4096];
	snprintf(name, sizeof name, "%s_%s.f64", out, part);
	FILE *f = fopen(name, "wb");
	if (f == NULL || fwrite(x, sizeof *x, count, f) != count || fclose(f) != 0) {
		fprintf(stderr, "model_scene_dump: cannot write %s\n", name);
		return -1;
	}
	return 0;
}

/* S as a JSON string: the bytes a token's text holds, each control
 * character and every byte past ASCII as \u00XX of the byte (the reader
 * turns them back into bytes). */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20 || *c >= 0x7f)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: model_scene_dump SCENE.json OUT\n");
		return 2;
	}
	char err[SCENE_ERROR_MAX];
	struct scene *sc;
	const char *const names[] = {"expected", NULL};
	const struct scene_options load = {.policy_names = names, .policy_queries = 1u};
	if (scene_load_file_opts(argv[1], &load, &sc, err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 3;
	}
	const size_t rows = (size_t)sc->n * (size_t)sc->dim;
	const size_t qb = (size_t)sc->layers * (size_t)sc->heads;
	const size_t kb = (size_t)sc->layers * (size_t)sc->kv_heads;
	int rc = write_doubles(argv[2], "q", sc->q, qb * rows) ||
	         write_doubles(argv[2], "k", sc->k, kb * rows) ||
	         write_doubles(argv[2], "v", sc->v, kb * rows) ||
	         (sc->q_pre && write_doubles(argv[2], "qpre", sc->q_pre, qb * rows));
	char name[4096];
	snprintf(name, sizeof name, "%s.json", argv[2]);
	FILE *f = rc ? NULL : fopen(name, "w");
	if (f != NULL) {
		fprintf(f,
		        "{\"n\": %d, \"layers\": %d, \"heads\": %d, \"kv_heads\": %d, \"dim\": %d, "
		        "\"prompt\": %d, \"given\": %d, \"generated\": %d, \"scale\": %.17g, "
		        "\"model_path\": ",
		        sc->n, sc->layers, sc->heads, sc->kv_heads, sc->dim, sc->prompt, sc->given,
		        sc->generated, sc->scale);
		put_string(f, sc->model_path ? sc->model_path : "");
		fputs(", \"tokenizer_path\": ", f);
		put_string(f, sc->tokenizer_path ? sc->tokenizer_path : "");
		fputs(", \"tokens\": [", f);
		for (int i = 0; sc->tokens && i < sc->n; i++)
			fprintf(f, "%s%d", i ? ", " : "", sc->tokens[i]);
		fputs("], \"text\": [", f);
		for (int i = 0; i < sc->n; i++) {
			if (i)
				fputs(", ", f);
			put_string(f, sc->text[i]);
		}
		fputs("]}\n", f);
		rc = fclose(f) != 0;
	} else {
		rc = 1;
	}
	scene_free(sc);
	return rc ? 1 : 0;
}
