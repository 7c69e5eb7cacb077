/*
 * vocab_file: the tokenizer.ggml.* metadata of a GGUF file as a struct
 * llama_vocab_spec, for the tokenizer's tests only (llama.cpp's vocabulary
 * files in tests/model/vocab/). It reads the header's key-value pairs and
 * stops before the tensor table; the files are trusted test fixtures, but
 * every length is still checked against the file so a broken one fails
 * the test instead of reading past it.
 */
#ifndef H2O_TEST_VOCAB_FILE_H
#define H2O_TEST_VOCAB_FILE_H

#include "h2o/vocab.h"

struct vocab_file {
	struct llama_vocab_spec spec;
	unsigned char *data;
	size_t size;
	const char **tokens;
	size_t *token_len;
	float *scores;
	int *types;
	const char **merges;
	size_t *merge_len;
	char pre[64];
};

/* Read PATH into VF. 0, or -1 with a message on stderr. */
int vocab_file_read(const char *path, struct vocab_file *vf);
void vocab_file_free(struct vocab_file *vf);

#endif
