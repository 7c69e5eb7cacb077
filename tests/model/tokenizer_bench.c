/*
 * tokenizer_bench: how long encoding takes, in seconds per megabyte.
 *
 *   tokenizer_bench ROOT [BYTES]
 *
 * Encodes a text of BYTES bytes (default 1 MiB: a short story repeated,
 * with a few bytes that fall back on byte pieces) with stories260K's
 * tokenizer.bin (llama2.c's way) and with llama.cpp's llama-spm and gpt-2
 * vocabularies (tests/model/vocab/), and prints one line per tokenizer:
 * its name, the bytes, the tokens, the seconds and the processor's
 * seconds (the figure to compare on a shared machine). A measurement, not a
 * test: run it with `meson test -C build --benchmark tokenizer`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h2o/tokenizer.h"
#include "h2o/vocab.h"
#include "vocab_file.h"

static double now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run(const char *name, const struct llama_tokenizer *t, const char *text, size_t len)
{
	const size_t cap = llama_tokenizer_max_tokens(t, len);
	int *ids = malloc(cap * sizeof *ids);
	char err[LLAMA_ERR_MAX];
	if (ids == NULL)
		return 1;
	const double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
	const int n = llama_tokenizer_encode(t, text, len, 1, 0, ids, (int)cap, err);
	const double wall = now(CLOCK_MONOTONIC) - w0, cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
	free(ids);
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", name, err);
		return 1;
	}
	printf("%-12s %9zu bytes %8d tokens %7.3f s (%.3f s of processor)\n", name, len, n, wall,
	       cpu);
	return 0;
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : ".";
	const size_t len = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 1u << 20;
	static const char story[] =
	        "Once upon a time, there was a little girl named Lily. She loved to play "
	        "outside in the sunshine. One day, she saw a big, red ball in the sky. "
	        "\"Mommy, look!\" she said. Her mom smiled: \"It's the sun, dear.\" 42 "
	        "caf\xc3\xa9s.\n";
	char *text = malloc(len + 1);
	if (text == NULL)
		return 1;
	for (size_t i = 0; i < len; i++)
		text[i] = story[i % (sizeof story - 1)];
	text[len] = '\0';

	int rc = 0;
	char path[512], err[LLAMA_ERR_MAX];
	struct llama_tokenizer *t = NULL;
	snprintf(path, sizeof path, "%s/models/stories260K/tok512.bin", root);
	if (llama_tokenizer_load(path, 512, &t, err) != 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 1;
	}
	rc |= run("tok512.bin", t, text, len);
	llama_tokenizer_free(t);

	static const char *const vocabs[] = {"llama-spm"};
	for (size_t k = 0; k < sizeof vocabs / sizeof vocabs[0]; k++) {
		struct vocab_file vf;
		snprintf(path, sizeof path, "%s/tests/model/vocab/ggml-vocab-%s.gguf", root,
		         vocabs[k]);
		if (vocab_file_read(path, &vf) != 0)
			return 1;
		if (llama_tokenizer_from_vocab(&vf.spec, vf.spec.n_tokens, &t, err) != 0) {
			fprintf(stderr, "%s: %s\n", path, err);
			rc = 1;
		} else {
			rc |= run(vocabs[k], t, text, len);
			llama_tokenizer_free(t);
		}
		vocab_file_free(&vf);
	}
	free(text);
	return rc;
}
