/*
 * vocab_file: a GGUF file's tokenizer metadata for the tests (vocab_file.h).
 *
 * GGUF (versions 2 and 3, little-endian): "GGUF", a uint32 version, uint64
 * tensor and key-value counts, then each pair: a string key (uint64 length
 * and bytes), a uint32 value type and the value; an array is a uint32 item
 * type, a uint64 count and the items. Defaults where a key is absent are
 * llama.cpp's for the two kinds.
 */
#include "vocab_file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR, T_U64, T_I64, T_F64 };

struct cursor {
	const unsigned char *p;
	size_t at, size;
	int bad;
};

static const unsigned char *take(struct cursor *c, size_t n)
{
	if (c->bad || n > c->size - c->at) {
		c->bad = 1;
		return NULL;
	}
	const unsigned char *r = c->p + c->at;
	c->at += n;
	return r;
}

static uint64_t u64(struct cursor *c, size_t n)
{
	const unsigned char *b = take(c, n);
	uint64_t v = 0;
	for (size_t i = 0; b != NULL && i < n; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static size_t type_size(uint32_t t)
{
	static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
	return t < sizeof sizes / sizeof sizes[0] ? sizes[t] : 0;
}

/* A scalar of type T as an integer (floats are not asked for). */
static int64_t scalar(struct cursor *c, uint32_t t)
{
	const size_t n = type_size(t);
	if (n == 0 || t == T_F32 || t == T_F64) {
		c->bad = 1;
		return 0;
	}
	uint64_t v = u64(c, n);
	if ((t == T_I8 || t == T_I16 || t == T_I32) && (v >> (8 * n - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * n);
	int64_t s;
	memcpy(&s, &v, sizeof s);
	return s;
}

static void skip_value(struct cursor *c, uint32_t t)
{
	if (t == T_STR) {
		take(c, (size_t)u64(c, 8));
	} else if (t == T_ARR) {
		const uint32_t it = (uint32_t)u64(c, 4);
		const uint64_t n = u64(c, 8);
		for (uint64_t i = 0; i < n && !c->bad; i++)
			skip_value(c, it);
	} else if (type_size(t) > 0) {
		take(c, type_size(t));
	} else {
		c->bad = 1;
	}
}

/* A string array into *S and *LEN (pointing into the file). */
static int strings(struct cursor *c, const char ***s, size_t **len, int *count)
{
	if (u64(c, 4) != T_STR)
		return -1;
	const uint64_t n = u64(c, 8);
	if (c->bad || n > c->size / 8)
		return -1;
	*s = malloc((size_t)(n ? n : 1) * sizeof **s);
	*len = malloc((size_t)(n ? n : 1) * sizeof **len);
	if (*s == NULL || *len == NULL)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		(*len)[i] = (size_t)u64(c, 8);
		(*s)[i] = (const char *)take(c, (*len)[i]);
		if (c->bad)
			return -1;
	}
	*count = (int)n;
	return 0;
}

int vocab_file_read(const char *path, struct vocab_file *vf)
{
	memset(vf, 0, sizeof *vf);
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "%s: cannot open\n", path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	const long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	vf->data = malloc(size > 0 ? (size_t)size : 1);
	if (vf->data == NULL || size < 24 || fread(vf->data, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		fprintf(stderr, "%s: cannot read\n", path);
		return -1;
	}
	fclose(f);
	vf->size = (size_t)size;

	struct llama_vocab_spec *sp = &vf->spec;
	struct cursor c = {.p = vf->data, .size = vf->size};
	if (memcmp(take(&c, 4), "GGUF", 4) != 0) {
		fprintf(stderr, "%s: not a GGUF file\n", path);
		return -1;
	}
	const uint32_t version = (uint32_t)u64(&c, 4);
	u64(&c, 8);
	const uint64_t n_kv = u64(&c, 8);
	if (version < 2 || version > 3) {
		fprintf(stderr, "%s: GGUF version %u\n", path, version);
		return -1;
	}
	int n_scores = -1, n_types = -1, add_bos = -1, add_eos = -1, add_prefix = -1;
	int bos = -2, eos = -2, unk = -2, pad = -2;
	char model[32] = "";
	for (uint64_t k = 0; k < n_kv && !c.bad; k++) {
		const size_t kl = (size_t)u64(&c, 8);
		const char *key = (const char *)take(&c, kl);
		const uint32_t t = (uint32_t)u64(&c, 4);
		if (c.bad)
			break;
#define IS(name) (kl == strlen(name) && memcmp(key, name, kl) == 0)
		if (IS("tokenizer.ggml.tokens")) {
			if (t != T_ARR || strings(&c, &vf->tokens, &vf->token_len, &sp->n_tokens))
				c.bad = 1;
		} else if (IS("tokenizer.ggml.merges")) {
			if (t != T_ARR || strings(&c, &vf->merges, &vf->merge_len, &sp->n_merges))
				c.bad = 1;
		} else if (IS("tokenizer.ggml.scores") || IS("tokenizer.ggml.token_type")) {
			const int scores = IS("tokenizer.ggml.scores");
			const uint32_t it = (uint32_t)u64(&c, 4);
			const uint64_t n = u64(&c, 8);
			if (t != T_ARR || it != (scores ? T_F32 : T_I32) || n > vf->size / 4) {
				c.bad = 1;
				break;
			}
			const unsigned char *b = take(&c, (size_t)n * 4);
			if (b == NULL)
				break;
			if (scores) {
				vf->scores = malloc((size_t)(n ? n : 1) * sizeof *vf->scores);
				if (vf->scores != NULL)
					memcpy(vf->scores, b, (size_t)n * 4);
				n_scores = (int)n;
			} else {
				vf->types = malloc((size_t)(n ? n : 1) * sizeof *vf->types);
				if (vf->types != NULL)
					memcpy(vf->types, b, (size_t)n * 4);
				n_types = (int)n;
			}
		} else if (IS("tokenizer.ggml.model") || IS("tokenizer.ggml.pre")) {
			char *dst = IS("tokenizer.ggml.model") ? model : vf->pre;
			const size_t cap =
			        IS("tokenizer.ggml.model") ? sizeof model : sizeof vf->pre;
			const size_t n = t == T_STR ? (size_t)u64(&c, 8) : 0;
			const unsigned char *b = take(&c, n);
			if (t != T_STR || b == NULL || n >= cap) {
				c.bad = 1;
				break;
			}
			memcpy(dst, b, n);
			dst[n] = '\0';
		} else if (IS("tokenizer.ggml.bos_token_id")) {
			bos = (int)scalar(&c, t);
		} else if (IS("tokenizer.ggml.eos_token_id")) {
			eos = (int)scalar(&c, t);
		} else if (IS("tokenizer.ggml.unknown_token_id")) {
			unk = (int)scalar(&c, t);
		} else if (IS("tokenizer.ggml.padding_token_id")) {
			pad = (int)scalar(&c, t);
		} else if (IS("tokenizer.ggml.add_bos_token")) {
			add_bos = (int)scalar(&c, t);
		} else if (IS("tokenizer.ggml.add_eos_token")) {
			add_eos = (int)scalar(&c, t);
		} else if (IS("tokenizer.ggml.add_space_prefix")) {
			add_prefix = (int)scalar(&c, t);
		} else {
			skip_value(&c, t);
		}
#undef IS
	}
	if (c.bad || vf->tokens == NULL || (n_scores >= 0 && n_scores != sp->n_tokens) ||
	    (n_types >= 0 && n_types != sp->n_tokens)) {
		fprintf(stderr, "%s: broken tokenizer metadata\n", path);
		return -1;
	}
	const int spm = strcmp(model, "llama") == 0;
	if (!spm && strcmp(model, "gpt2") != 0) {
		fprintf(stderr, "%s: tokenizer model \"%s\"\n", path, model);
		return -1;
	}
	sp->kind = spm ? LLAMA_VOCAB_SPM : LLAMA_VOCAB_BPE;
	sp->tokens = vf->tokens;
	sp->token_len = vf->token_len;
	sp->scores = vf->scores;
	sp->types = vf->types;
	sp->merges = vf->merges;
	sp->merge_len = vf->merge_len;
	sp->pre = spm ? NULL : vf->pre[0] ? vf->pre : "default";
	/* llama.cpp's defaults: SPM 1, 2, 0; GPT-2 11 for BOS and EOS. */
	sp->bos = bos != -2 ? bos : spm ? 1 : 11;
	sp->eos = eos != -2 ? eos : spm ? 2 : 11;
	sp->unk = unk != -2 ? unk : spm ? 0 : -1;
	sp->pad = pad != -2 ? pad : -1;
	sp->add_bos = add_bos >= 0 ? add_bos != 0 : spm;
	sp->add_eos = add_eos >= 0 ? add_eos != 0 : false;
	sp->add_space_prefix = add_prefix >= 0 ? add_prefix != 0 : spm;
	if (sp->bos >= sp->n_tokens)
		sp->bos = -1, sp->add_bos = false;
	if (sp->eos >= sp->n_tokens)
		sp->eos = -1, sp->add_eos = false;
	return 0;
}

void vocab_file_free(struct vocab_file *vf)
{
	free(vf->data);
	free(vf->tokens);
	free(vf->token_len);
	free(vf->scores);
	free(vf->types);
	free(vf->merges);
	free(vf->merge_len);
	memset(vf, 0, sizeof *vf);
}
