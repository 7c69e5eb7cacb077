/*
 * vocab: a tokenizer's vocabulary as a model file states it, whichever file
 * it came from (a GGUF file's tokenizer.ggml.* metadata, a Hugging Face
 * folder's tokenizer.json). The loaders fill a struct llama_vocab_spec
 * that points into their own memory; llama_tokenizer_from_vocab checks it
 * and copies what it keeps, so the spec may go once it returns.
 *
 * Kinds: SentencePiece-style (GGUF's tokenizer.ggml.model "llama": pieces
 * with "\xe2\x96\x81" for a space, merged by score) and GPT-2-style
 * byte-level BPE ("gpt2": pieces in GPT-2's byte-to-unicode alphabet,
 * merged by rank, after the pre-tokenizer PRE splits the text).
 */
#ifndef H2O_VOCAB_H
#define H2O_VOCAB_H

#include <stdbool.h>
#include <stddef.h>

#include "h2o/llama.h"

enum llama_vocab_kind { LLAMA_VOCAB_SPM, LLAMA_VOCAB_BPE };

/* llama.cpp's token types (GGUF tokenizer.ggml.token_type). */
enum llama_token_type {
	LLAMA_TOKEN_TYPE_UNDEFINED = 0,
	LLAMA_TOKEN_TYPE_NORMAL = 1,
	LLAMA_TOKEN_TYPE_UNKNOWN = 2,
	LLAMA_TOKEN_TYPE_CONTROL = 3,
	LLAMA_TOKEN_TYPE_USER_DEFINED = 4,
	LLAMA_TOKEN_TYPE_UNUSED = 5,
	LLAMA_TOKEN_TYPE_BYTE = 6,
};

struct llama_vocab_spec {
	enum llama_vocab_kind kind;
	int n_tokens;
	const char *const *tokens; /* n_tokens pieces, as the file stores them */
	const size_t *token_len;   /* their lengths in bytes */
	const float *scores;       /* SPM merge scores, or NULL */
	const int *types;          /* enum llama_token_type per token, or NULL */
	int n_merges;
	const char *const *merges; /* BPE: "left right", highest priority first */
	const size_t *merge_len;
	/* The BPE pre-tokenizer ("llama-bpe", "qwen2", "smollm", "gpt-2",
	 * "default", ...), NULL for SPM. */
	const char *pre;
	int bos, eos, unk, pad; /* token ids, -1 when none */
	bool add_bos, add_eos;
	bool add_space_prefix; /* SPM: a " " before the text */
};

struct llama_tokenizer;

/* A tokenizer for SPEC, for a model of VOCAB_SIZE tokens. 0 and *OUT, or
 * -1 with ERR filled (one line, no file name: the caller adds it). */
int llama_tokenizer_from_vocab(const struct llama_vocab_spec *spec, int vocab_size,
                               struct llama_tokenizer **out, char err[LLAMA_ERR_MAX]);

#endif
