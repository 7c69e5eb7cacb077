/*
 * gguf_vocab: a GGUF file's tokenizer.ggml.* metadata as the vocabulary
 * spec the tokenizer is built from (gguf.h, vocab.h).
 *
 * Every entry is checked for its type and range here, so that the spec
 * handed on is well formed: tokens a string array of 1 to LLAMA_MAX_VOCAB
 * pieces; scores (float32) and token_type (int32) arrays, when present, of
 * one element per token, scores finite and types 0 to 6; merges a string
 * array (BPE); special ids within the vocabulary. The pieces and merges
 * point into the file; the arrays of pointers, lengths, scores and types
 * are one allocation V owns.
 */
#include "h2o/gguf.h"
#include "model_impl.h"

#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int str_eq(const char *s, size_t len, const char *lit)
{
	return len == strlen(lit) && memcmp(s, lit, len) == 0;
}

/* Entry KEY as a string array of at most MAX elements: its index and count,
 * or -1 with ERR filled when it is not one (REQUIRED: when missing too). */
static int str_array(const struct gguf_file *g, const char *key, uint64_t max, int required,
                     uint64_t *n, char *err)
{
	enum gguf_type t;
	const int i = gguf_find(g, key);
	*n = 0;
	if (i < 0)
		return required ? model_fail(err, "metadata \"%s\" is missing", key) : -2;
	if (gguf_get_arr(g, i, &t, n) != 0 || t != GGUF_STRING)
		return model_fail(err, "metadata \"%s\" is not an array of strings", key);
	if (*n < (uint64_t)(required ? 1 : 0) || *n > max)
		return model_fail(err, "metadata \"%s\" has %llu elements, must be %d to %llu", key,
		                  (unsigned long long)*n, required ? 1 : 0,
		                  (unsigned long long)max);
	return i;
}

/* Token id KEY into *OUT (DEF when missing), within [0, N). */
static int token_id(const struct gguf_file *g, const char *key, int n, int def, int *out, char *err)
{
	int64_t v;
	const int i = gguf_find(g, key);
	*out = def;
	if (i < 0)
		return 0;
	if (gguf_kv_type(g, i) == GGUF_BOOL || gguf_get_int(g, i, &v) != 0)
		return model_fail(err, "metadata \"%s\" is not an integer", key);
	/* llama.cpp's converters write "none" as -1 or as a uint32's largest. */
	if (v == -1 || v == UINT32_MAX) {
		*out = -1;
		return 0;
	}
	if (v < 0 || v >= n)
		return model_fail(err, "metadata \"%s\" is %lld, not a token of the %d", key,
		                  (long long)v, n);
	*out = (int)v;
	return 0;
}

static int flag(const struct gguf_file *g, const char *key, bool def, bool *out, char *err)
{
	const int i = gguf_find(g, key);
	int64_t v;
	*out = def;
	if (i < 0)
		return 0;
	if (gguf_kv_type(g, i) != GGUF_BOOL || gguf_get_int(g, i, &v) != 0)
		return model_fail(err, "metadata \"%s\" is not a bool", key);
	*out = v != 0;
	return 0;
}

int gguf_vocab_read(const struct gguf_file *g, struct gguf_vocab *v, char err[LLAMA_ERR_MAX])
{
	struct llama_vocab_spec *s = &v->spec;
	const char *str;
	size_t len;
	uint64_t n, nm;

	memset(v, 0, sizeof *v);
	const int im = gguf_find(g, "tokenizer.ggml.model");
	if (im < 0)
		return model_fail(err, "metadata \"tokenizer.ggml.model\" is missing: the file has "
		                       "no tokenizer");
	if (gguf_get_str(g, im, &str, &len) != 0)
		return model_fail(err, "metadata \"tokenizer.ggml.model\" is not a string");
	if (str_eq(str, len, "llama")) {
		s->kind = LLAMA_VOCAB_SPM;
	} else if (str_eq(str, len, "gpt2")) {
		s->kind = LLAMA_VOCAB_BPE;
	} else {
		char buf[MODEL_SHOWN_MAX];
		model_shown(str, len, buf);
		return model_fail(
		        err, "tokenizer \"%s\" is not supported (\"llama\" and \"gpt2\" are)", buf);
	}
	const int it = str_array(g, "tokenizer.ggml.tokens", LLAMA_MAX_VOCAB, 1, &n, err);
	if (it < 0)
		return -1;
	int imerge = str_array(g, "tokenizer.ggml.merges", INT32_MAX, 0, &nm, err);
	if (imerge == -1)
		return -1;
	if (imerge < 0)
		nm = 0;
	const int isc = gguf_find(g, "tokenizer.ggml.scores");
	const int ity = gguf_find(g, "tokenizer.ggml.token_type");
	enum gguf_type et;
	uint64_t cnt;
	if (isc >= 0 && (gguf_get_arr(g, isc, &et, &cnt) != 0 || et != GGUF_FLOAT32 || cnt != n))
		return model_fail(
		        err,
		        "metadata \"tokenizer.ggml.scores\" must be %llu float32s, one per "
		        "token",
		        (unsigned long long)n);
	if (ity >= 0 && (gguf_get_arr(g, ity, &et, &cnt) != 0 || et != GGUF_INT32 || cnt != n))
		return model_fail(err,
		                  "metadata \"tokenizer.ggml.token_type\" must be %llu int32s, one "
		                  "per token",
		                  (unsigned long long)n);

	/* Pointers and lengths of the tokens and merges, scores, types, pre. */
	const size_t N = (size_t)n, M = (size_t)nm;
	const size_t bytes = (N + M) * (sizeof(char *) + sizeof(size_t)) + N * sizeof(float) +
	                     N * sizeof(int) + 64;
	unsigned char *mem = malloc(bytes);
	if (mem == NULL)
		return model_fail(err, "out of memory for a vocabulary of %zu tokens", N);
	v->mem = mem;
	const char **tokens = (const char **)(void *)mem;
	const char **merges = tokens + N;
	size_t *tlen = (size_t *)(void *)(merges + M), *mlen = tlen + N;
	float *scores = (float *)(void *)(mlen + M);
	int *types = (int *)(void *)(scores + N);
	char *pre = (char *)(types + N);

	for (size_t i = 0; i < N; i++)
		gguf_get_arr_str(g, it, i, &tokens[i], &tlen[i]);
	for (size_t i = 0; i < M; i++)
		gguf_get_arr_str(g, imerge, i, &merges[i], &mlen[i]);
	for (size_t i = 0; isc >= 0 && i < N; i++) {
		double d;
		gguf_get_arr_float(g, isc, i, &d);
		if (!isfinite(d)) {
			gguf_vocab_free(v);
			return model_fail(err,
			                  "metadata \"tokenizer.ggml.scores\": token %zu's score "
			                  "is not finite",
			                  i);
		}
		scores[i] = (float)d;
	}
	for (size_t i = 0; ity >= 0 && i < N; i++) {
		int64_t t;
		gguf_get_arr_int(g, ity, i, &t);
		if (t < 0 || t > LLAMA_TOKEN_TYPE_BYTE) {
			gguf_vocab_free(v);
			return model_fail(
			        err,
			        "metadata \"tokenizer.ggml.token_type\": token %zu has type "
			        "%lld, must be 0 to 6",
			        i, (long long)t);
		}
		types[i] = (int)t;
	}
	pre[0] = '\0';
	const int ip = gguf_find(g, "tokenizer.ggml.pre");
	if (ip >= 0) {
		if (gguf_get_str(g, ip, &str, &len) != 0 || len > 63) {
			gguf_vocab_free(v);
			return model_fail(err,
			                  "metadata \"tokenizer.ggml.pre\" is not a string of up "
			                  "to 63 bytes");
		}
		memcpy(pre, str, len);
		pre[len] = '\0';
	}
	s->n_tokens = (int)N;
	s->tokens = tokens;
	s->token_len = tlen;
	s->scores = isc >= 0 ? scores : NULL;
	s->types = ity >= 0 ? types : NULL;
	s->n_merges = (int)M;
	s->merges = M > 0 ? merges : NULL;
	s->merge_len = M > 0 ? mlen : NULL;
	s->pre = s->kind == LLAMA_VOCAB_BPE ? (ip >= 0 ? pre : "default") : NULL;
	const int spm = s->kind == LLAMA_VOCAB_SPM;
	if (token_id(g, "tokenizer.ggml.bos_token_id", s->n_tokens, spm ? 1 : -1, &s->bos, err) ||
	    token_id(g, "tokenizer.ggml.eos_token_id", s->n_tokens, spm ? 2 : -1, &s->eos, err) ||
	    token_id(g, "tokenizer.ggml.unknown_token_id", s->n_tokens, spm ? 0 : -1, &s->unk,
	             err) ||
	    token_id(g, "tokenizer.ggml.padding_token_id", s->n_tokens, -1, &s->pad, err) ||
	    flag(g, "tokenizer.ggml.add_bos_token", spm, &s->add_bos, err) ||
	    flag(g, "tokenizer.ggml.add_eos_token", false, &s->add_eos, err) ||
	    flag(g, "tokenizer.ggml.add_space_prefix", spm, &s->add_space_prefix, err)) {
		gguf_vocab_free(v);
		return -1;
	}
	/* SPM's defaults name tokens the vocabulary may not have. */
	if (s->bos >= s->n_tokens || s->eos >= s->n_tokens || s->unk >= s->n_tokens) {
		gguf_vocab_free(v);
		return model_fail(err, "a vocabulary of %d tokens lacks the default special ids",
		                  s->n_tokens);
	}
	return 0;
}

void gguf_vocab_free(struct gguf_vocab *v)
{
	free(v->mem);
	memset(v, 0, sizeof *v);
}

const struct gguf_file *llama_model_gguf(const struct llama_model *m)
{
	return m->gguf;
}

/* Whether the regular file FD starts as a GGUF file does. */
static bool fd_is_gguf(int fd)
{
	struct stat st;
	unsigned char magic[4];
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	       pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
	       gguf_magic(magic, sizeof magic);
}

bool llama_file_is_gguf(const char *path)
{
	const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	const bool yes = fd_is_gguf(fd);
	close(fd);
	return yes;
}

int gguf_tokenizer_if_gguf(int fd, int vocab_size, struct llama_tokenizer **out, char *err)
{
	struct gguf_file *g;
	struct gguf_vocab v;

	if (!fd_is_gguf(fd))
		return 1;
	if (gguf_open_fd(fd, &g, err) != 0)
		return -1;
	int rc = gguf_vocab_read(g, &v, err);
	if (rc == 0) {
		rc = llama_tokenizer_from_vocab(&v.spec, vocab_size, out, err);
		gguf_vocab_free(&v);
	}
	gguf_close(g);
	return rc;
}
