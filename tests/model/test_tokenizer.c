/*
 * test_tokenizer: tokenizers from a model file's vocabulary (vocab.h) and
 * the merge llama2.c's tokenizer shares with them.
 *
 * - llama.cpp's own test vectors (tests/model/vocab/, from llama.cpp's
 *   models/ folder, MIT licence: see the README there): every case of
 *   every vocabulary gives llama.cpp's tokens exactly;
 * - small vocabularies worked by hand: scores, byte fallback, the space
 *   before the text, control tokens never made from text, user-defined
 *   tokens matched whole, BOS and EOS as the vocabulary says;
 * - the priority-queue merge against run.c's rescan of every pair, on
 *   random vocabularies and texts;
 * - bad vocabularies refused with one line, and a llama2.c vocabulary too
 *   small to have BOS and EOS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/tokenizer.h"
#include "h2o/vocab.h"
#include "vocab_file.h"

static const char *root = ".";

/* ---- llama.cpp's test vectors ------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	const long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	if (b != NULL && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	if (b != NULL)
		b[n] = '\0';
	*len = (size_t)n;
	return b;
}

/* Append the JSON string of the LEN bytes at S to *OUT (at *AT). */
static void json_string(char **out, size_t *at, size_t *cap, const char *s, size_t len)
{
	if (*at + 6 * len + 8 > *cap) {
		*cap = 2 * (*cap + 6 * len + 8);
		*out = realloc(*out, *cap);
		assert_non_null(*out);
	}
	char *o = *out;
	o[(*at)++] = '"';
	for (size_t i = 0; i < len; i++) {
		const unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			o[(*at)++] = '\\';
			o[(*at)++] = (char)c;
		} else if (c < 0x20) {
			*at += (size_t)snprintf(o + *at, 7, "\\u%04x", c);
		} else {
			o[(*at)++] = (char)c;
		}
	}
	o[(*at)++] = '"';
}

static void append(char **out, size_t *at, size_t *cap, const char *s)
{
	json_string(out, at, cap, "", 0); /* room */
	*at -= 2;
	const size_t n = strlen(s);
	if (*at + n + 1 > *cap) {
		*cap = 2 * (*at + n + 1);
		*out = realloc(*out, *cap);
		assert_non_null(*out);
	}
	memcpy(*out + *at, s, n);
	*at += n;
}

/* VF's BPE vocabulary written as a Hugging Face tokenizer.json with the
 * pre-tokenizer PRE (JSON), its length in *LEN. */
static char *as_tokenizer_json(const struct vocab_file *vf, const char *pre, size_t *len)
{
	size_t at = 0, cap = 1 << 20;
	char *o = malloc(cap);
	assert_non_null(o);
	append(&o, &at, &cap, "{\"added_tokens\": [");
	bool first = true;
	for (int i = 0; i < vf->spec.n_tokens; i++) {
		const int type = vf->spec.types ? vf->spec.types[i] : 1;
		if (type != LLAMA_TOKEN_TYPE_CONTROL && type != LLAMA_TOKEN_TYPE_USER_DEFINED)
			continue;
		char head[64];
		snprintf(head, sizeof head, "%s{\"id\": %d, \"content\": ", first ? "" : ", ", i);
		append(&o, &at, &cap, head);
		json_string(&o, &at, &cap, vf->tokens[i], vf->token_len[i]);
		append(&o, &at, &cap,
		       type == LLAMA_TOKEN_TYPE_CONTROL ? ", \"special\": true}"
		                                        : ", \"special\": false}");
		first = false;
	}
	append(&o, &at, &cap, "], \"normalizer\": null, \"pre_tokenizer\": ");
	append(&o, &at, &cap, pre);
	append(&o, &at, &cap, ", \"post_processor\": {\"type\": \"ByteLevel\"}, ");
	append(&o, &at, &cap, "\"model\": {\"type\": \"BPE\", \"vocab\": {");
	for (int i = 0; i < vf->spec.n_tokens; i++) {
		if (i > 0)
			append(&o, &at, &cap, ", ");
		json_string(&o, &at, &cap, vf->tokens[i], vf->token_len[i]);
		char id[24];
		snprintf(id, sizeof id, ": %d", i);
		append(&o, &at, &cap, id);
	}
	append(&o, &at, &cap, "}, \"merges\": [");
	for (int i = 0; i < vf->spec.n_merges; i++) {
		if (i > 0)
			append(&o, &at, &cap, ", ");
		json_string(&o, &at, &cap, vf->merges[i], vf->merge_len[i]);
	}
	append(&o, &at, &cap, "]}}");
	*len = at;
	return o;
}

/* Every case of NAME's .inp gives its line of .out, with the tokenizer
 * built from the GGUF file's vocabulary, or with HF_PRE from the same
 * vocabulary written as a tokenizer.json with that pre-tokenizer. Returns
 * the cases. */
static int check_vectors_as(const char *name, const char *hf_pre)
{
	char path[512];
	struct vocab_file vf;
	snprintf(path, sizeof path, "%s/tests/model/vocab/ggml-vocab-%s.gguf", root, name);
	assert_int_equal(vocab_file_read(path, &vf), 0);
	struct llama_tokenizer *t = NULL;
	char err[LLAMA_ERR_MAX] = "";
	if (hf_pre != NULL) {
		size_t jl;
		char *json = as_tokenizer_json(&vf, hf_pre, &jl);
		if (llama_tokenizer_load_hf_bytes(json, jl, vf.spec.n_tokens, &t, err) != 0)
			fail_msg("%s as tokenizer.json: %s", name, err);
		free(json);
	} else if (llama_tokenizer_from_vocab(&vf.spec, vf.spec.n_tokens, &t, err) != 0) {
		fail_msg("%s: %s", name, err);
	}

	size_t in_len, out_len;
	snprintf(path, sizeof path, "%s/tests/model/vocab/ggml-vocab-%s.gguf.inp", root, name);
	char *in = slurp(path, &in_len);
	snprintf(path, sizeof path, "%s/tests/model/vocab/ggml-vocab-%s.gguf.out", root, name);
	char *out = slurp(path, &out_len);
	assert_non_null(in);
	assert_non_null(out);

	static const char sep[] = "\n__ggml_vocab_test__\n";
	const size_t sl = strlen(sep);
	size_t at = 0;
	char *line = out;
	int cases = 0;
	while (at < in_len) {
		const char *next = strstr(in + at, sep);
		const size_t len = next ? (size_t)(next - (in + at)) : in_len - at;
		char *eol = strchr(line, '\n');
		assert_non_null(eol);
		*eol = '\0';

		int want[1024], nw = 0;
		for (char *p = line, *end; nw < 1024; p = end) {
			const long v = strtol(p, &end, 10);
			if (end == p)
				break;
			want[nw++] = (int)v;
		}
		int got[1024];
		const int n = llama_tokenizer_encode(t, in + at, len, 0, 0, got, 1024, err);
		if (n != nw || memcmp(got, want, (size_t)nw * sizeof *got) != 0) {
			fprintf(stderr, "%s case %d: \"%.*s\"\n want:", name, cases, (int)len,
			        in + at);
			for (int i = 0; i < nw; i++)
				fprintf(stderr, " %d", want[i]);
			fprintf(stderr, "\n  got:");
			for (int i = 0; i < n; i++)
				fprintf(stderr, " %d", got[i]);
			fprintf(stderr, "%s%s\n", n < 0 ? " " : "", n < 0 ? err : "");
			fail();
		}
		/* Decoding gives the text back (these vocabularies have a piece
		 * or a byte for every character). */
		char text[4096];
		size_t tl = 0;
		for (int i = 0; i < n; i++) {
			size_t pl;
			const char *p =
			        llama_tokenizer_decode(t, i > 0 ? got[i - 1] : -1, got[i], &pl);
			assert_non_null(p);
			assert_true(tl + pl <= sizeof text);
			memcpy(text + tl, p, pl);
			tl += pl;
		}
		assert_int_equal(tl, len);
		assert_memory_equal(text, in + at, len);

		cases++;
		line = eol + 1;
		at += len + (next ? sl : 0);
	}
	free(in);
	free(out);
	llama_tokenizer_free(t);
	vocab_file_free(&vf);
	return cases;
}

static int check_vectors(const char *name)
{
	return check_vectors_as(name, NULL);
}

/* The same vocabularies as Hugging Face's tokenizer.json states them:
 * GPT-2's pre-tokenizer is ByteLevel's own expression, StarCoder's is
 * digits apart first. */
static void test_hf_json_vectors(void **state)
{
	(void)state;
	assert_true(check_vectors_as("gpt-2", "{\"type\": \"ByteLevel\", \"add_prefix_space\": "
	                                      "false, \"use_regex\": true}") > 30);
	assert_true(check_vectors_as("starcoder",
	                             "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": "
	                             "\"Digits\", \"individual_digits\": true}, {\"type\": "
	                             "\"ByteLevel\", \"use_regex\": true}]}") > 30);
}

static void test_llama_spm_vectors(void **state)
{
	(void)state;
	assert_true(check_vectors("llama-spm") > 30);
}

static void test_phi3_vectors(void **state)
{
	(void)state;
	assert_true(check_vectors("phi-3") > 30);
}

static void test_gpt2_vectors(void **state)
{
	(void)state;
	assert_true(check_vectors("gpt-2") > 30);
}

/* StarCoder's vocabulary has the pre-tokenizer of SmolLM (digits apart). */
static void test_starcoder_vectors(void **state)
{
	(void)state;
	assert_true(check_vectors("starcoder") > 30);
}

/* ---- small vocabularies by hand ------------------------------------------ */

#define SP "\xe2\x96\x81"

struct small {
	const char *tokens[16];
	float scores[16];
	int types[16];
	size_t len[16];
	struct llama_vocab_spec spec;
};

/* <unk> <s> </s>, the two byte pieces <0xC3> <0xA9>, then the rest. */
static void small_spm(struct small *v)
{
	static const char *const pieces[] = {"<unk>", "<s>", "</s>", "<0xC3>", "<0xA9>", SP,
	                                     "a",     "b",   "ab",   SP "a",   SP "ab",  "<",
	                                     "s",     ">",   "<s",   "<|u|>"};
	static const float scores[] = {0, 0, 0, 0, 0, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, 0};
	static const int types[] = {2, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4};
	memset(v, 0, sizeof *v);
	for (int i = 0; i < 16; i++) {
		v->tokens[i] = pieces[i];
		v->len[i] = strlen(pieces[i]);
		v->scores[i] = scores[i];
		v->types[i] = types[i];
	}
	v->spec = (struct llama_vocab_spec){.kind = LLAMA_VOCAB_SPM,
	                                    .n_tokens = 16,
	                                    .tokens = v->tokens,
	                                    .token_len = v->len,
	                                    .scores = v->scores,
	                                    .types = v->types,
	                                    .bos = 1,
	                                    .eos = 2,
	                                    .unk = 0,
	                                    .pad = -1,
	                                    .add_bos = true,
	                                    .add_space_prefix = true};
}

static int encode(const struct llama_vocab_spec *spec, const char *text, int bos, int eos, int *ids)
{
	struct llama_tokenizer *t = NULL;
	char err[LLAMA_ERR_MAX];
	if (llama_tokenizer_from_vocab(spec, 20, &t, err) != 0)
		fail_msg("%s", err);
	const int n = llama_tokenizer_encode(t, text, strlen(text), bos, eos, ids, 64, err);
	if (n < 0)
		fail_msg("%s", err);
	llama_tokenizer_free(t);
	return n;
}

static void test_spm_by_hand(void **state)
{
	(void)state;
	struct small v;
	int ids[64];
	small_spm(&v);

	/* " ab ab" -> ▁ a b ▁ a b. The best pair is ▁a (-5) over ab (-4)?
	 * No: ab scores -4, better than ▁a's -5, so a b merge first (both,
	 * the left first), then ▁ ab into ▁ab (-6): [▁ab ▁ab], BOS first. */
	assert_int_equal(encode(&v.spec, "ab ab", 1, 1, ids), 3);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 10);
	assert_int_equal(ids[2], 10);

	/* No space before the text: a b -> ab; "ba" stays b a. */
	v.spec.add_space_prefix = false;
	assert_int_equal(encode(&v.spec, "ab", 0, 0, ids), 1);
	assert_int_equal(ids[0], 8);
	assert_int_equal(encode(&v.spec, "ba", 0, 0, ids), 2);
	assert_int_equal(ids[0], 7);
	assert_int_equal(ids[1], 6);

	/* A character without a piece falls back on its bytes. */
	assert_int_equal(encode(&v.spec, "\xc3\xa9", 0, 0, ids), 2);
	assert_int_equal(ids[0], 3);
	assert_int_equal(ids[1], 4);

	/* "<s>" as text: < s merge into "<s" but never into the control
	 * token <s>. */
	assert_int_equal(encode(&v.spec, "<s>", 0, 0, ids), 2);
	assert_int_equal(ids[0], 14);
	assert_int_equal(ids[1], 13);

	/* A user-defined token is matched whole; the text after it gets the
	 * space SentencePiece puts after a token. */
	v.spec.add_space_prefix = true;
	assert_int_equal(encode(&v.spec, "a<|u|>a", 0, 0, ids), 3);
	assert_int_equal(ids[0], 9);
	assert_int_equal(ids[1], 15);
	assert_int_equal(ids[2], 9);

	/* EOS only where the vocabulary adds it; BOS not when it does not. */
	v.spec.add_eos = true;
	v.spec.add_bos = false;
	assert_int_equal(encode(&v.spec, "a", 1, 1, ids), 2);
	assert_int_equal(ids[0], 9);
	assert_int_equal(ids[1], 2);
	assert_int_equal(encode(&v.spec, "", 1, 1, ids), 1);
}

static void test_spm_decode(void **state)
{
	(void)state;
	struct small v;
	struct llama_tokenizer *t = NULL;
	char err[LLAMA_ERR_MAX];
	size_t len;
	small_spm(&v);
	assert_int_equal(llama_tokenizer_from_vocab(&v.spec, 16, &t, err), 0);
	assert_int_equal(llama_tokenizer_bos(t), 1);
	assert_int_equal(llama_tokenizer_eos(t), 2);

	const char *s = llama_tokenizer_decode(t, 7, 10, &len); /* ▁ab after b */
	assert_int_equal(len, 3);
	assert_memory_equal(s, " ab", 3);
	s = llama_tokenizer_decode(t, 1, 10, &len); /* after BOS: no space */
	assert_int_equal(len, 2);
	assert_memory_equal(s, "ab", 2);
	s = llama_tokenizer_decode(t, 7, 3, &len); /* <0xC3> */
	assert_int_equal(len, 1);
	assert_int_equal((unsigned char)s[0], 0xC3);
	s = llama_tokenizer_decode(t, 7, 2, &len); /* </s>: nothing */
	assert_non_null(s);
	assert_int_equal(len, 0);
	s = llama_tokenizer_decode(t, 7, 15, &len); /* user-defined: its text */
	assert_int_equal(len, 5);
	assert_null(llama_tokenizer_decode(t, 7, 16, &len));
	assert_null(llama_tokenizer_decode(t, 7, -1, &len));
	llama_tokenizer_free(t);
}

static void expect_refused(const struct llama_vocab_spec *spec, int vocab_size, const char *want);

/* GPT-2's byte alphabet: a space is U+0120 (Ġ), 0xFF is U+00FF. */
#define G "\xc4\xa0"

struct small_bpe {
	const char *tokens[10];
	size_t len[10];
	int types[10];
	const char *merges[4];
	size_t merge_len[4];
	struct llama_vocab_spec spec;
};

static void small_bpe(struct small_bpe *v)
{
	static const char *const pieces[] = {"a",  "b",   "c",   G,       "ab",
	                                     "bc", G "a", "abc", "<|u|>", "\xc3\xbf"};
	static const char *const merges[] = {"b c", "a b", G " a", "a bc"};
	memset(v, 0, sizeof *v);
	for (int i = 0; i < 10; i++) {
		v->tokens[i] = pieces[i];
		v->len[i] = strlen(pieces[i]);
		v->types[i] = i == 8 ? LLAMA_TOKEN_TYPE_USER_DEFINED : LLAMA_TOKEN_TYPE_NORMAL;
	}
	for (int i = 0; i < 4; i++) {
		v->merges[i] = merges[i];
		v->merge_len[i] = strlen(merges[i]);
	}
	v->spec = (struct llama_vocab_spec){.kind = LLAMA_VOCAB_BPE,
	                                    .n_tokens = 10,
	                                    .tokens = v->tokens,
	                                    .token_len = v->len,
	                                    .types = v->types,
	                                    .n_merges = 4,
	                                    .merges = v->merges,
	                                    .merge_len = v->merge_len,
	                                    .pre = "gpt-2",
	                                    .bos = -1,
	                                    .eos = 7,
	                                    .unk = -1,
	                                    .pad = -1};
}

static void test_bpe_by_hand(void **state)
{
	(void)state;
	struct small_bpe v;
	int ids[64];
	small_bpe(&v);

	/* a b c: "b c" is rank 0, before "a b" (1); then "a bc" (3). */
	assert_int_equal(encode(&v.spec, "abc", 1, 1, ids), 1);
	assert_int_equal(ids[0], 7);
	/* " ab" is one word: "a b" (1) before "Ġ a" (2), and "Ġ ab" is no
	 * merge. */
	assert_int_equal(encode(&v.spec, " ab", 0, 0, ids), 2);
	assert_int_equal(ids[0], 3);
	assert_int_equal(ids[1], 4);
	/* "ab cab": words "ab", " cab": no merge across a word's edge. */
	assert_int_equal(encode(&v.spec, "ab ca", 0, 0, ids), 4);
	assert_int_equal(ids[0], 4);
	assert_int_equal(ids[1], 3);
	assert_int_equal(ids[2], 2);
	assert_int_equal(ids[3], 0);
	/* A user-defined token whole; a byte that is not UTF-8 on its own. */
	assert_int_equal(encode(&v.spec, "a<|u|>b\xff", 0, 0, ids), 4);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 8);
	assert_int_equal(ids[2], 1);
	assert_int_equal(ids[3], 9);

	struct llama_tokenizer *t = NULL;
	char err[LLAMA_ERR_MAX];
	size_t len;
	assert_int_equal(llama_tokenizer_from_vocab(&v.spec, 12, &t, err), 0);
	const char *s = llama_tokenizer_decode(t, -1, 6, &len);
	assert_int_equal(len, 2);
	assert_memory_equal(s, " a", 2);
	s = llama_tokenizer_decode(t, -1, 9, &len);
	assert_int_equal(len, 1);
	assert_int_equal((unsigned char)s[0], 0xFF);
	assert_null(llama_tokenizer_decode(t, -1, 10, &len)); /* past the vocabulary */
	/* A byte without a piece. */
	assert_int_equal(llama_tokenizer_encode(t, "d", 1, 0, 0, ids, 64, err), -1);
	assert_string_equal(err, "byte 0x64 of the text has no piece");
	llama_tokenizer_free(t);

	/* Without "a bc", "abc" is a bc; Llama 3's pre-tokenizer takes a
	 * word that is a piece whole. */
	v.spec.n_merges = 3;
	assert_int_equal(encode(&v.spec, "abc", 0, 0, ids), 2);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 5);
	v.spec.pre = "llama-bpe";
	assert_int_equal(encode(&v.spec, "abc", 0, 0, ids), 1);
	assert_int_equal(ids[0], 7);
}

static void test_bad_bpe(void **state)
{
	(void)state;
	struct small_bpe v;
	small_bpe(&v);
	v.spec.pre = "nope";
	expect_refused(&v.spec, 10, "pre-tokenizer \"nope\" is not one this program knows");
	small_bpe(&v);
	v.merge_len[2] = 1;
	expect_refused(&v.spec, 10, "merge 2 is not two pieces and a space");
	small_bpe(&v);
	v.spec.merges = NULL;
	expect_refused(&v.spec, 10, "4 merges without their list");
}

/* tests/model/tok_small.json: small_bpe's vocabulary as Llama 3 states
 * one (a Split expression, ignore_merges, BOS from the post-processor). */
static void test_hf_small(void **state)
{
	(void)state;
	char path[512], err[LLAMA_ERR_MAX];
	struct llama_tokenizer *t = NULL;
	int ids[16];
	size_t len;
	snprintf(path, sizeof path, "%s/tests/model/tok_small.json", root);
	if (llama_tokenizer_load_hf_json(path, 12, &t, err) != 0)
		fail_msg("%s", err);
	assert_int_equal(llama_tokenizer_bos(t), 10);
	assert_int_equal(llama_tokenizer_eos(t), -1);
	/* "abc" is a piece: whole, though no merge makes it; BOS first. */
	assert_int_equal(llama_tokenizer_encode(t, "abc", 3, 1, 1, ids, 16, err), 2);
	assert_int_equal(ids[0], 10);
	assert_int_equal(ids[1], 7);
	/* " ab" is one word, not a piece: "a b" before "Ġ a". */
	assert_int_equal(llama_tokenizer_encode(t, " ab", 3, 0, 0, ids, 16, err), 2);
	assert_int_equal(ids[0], 3);
	assert_int_equal(ids[1], 4);
	/* The user-defined token whole; the control token never from text. */
	assert_int_equal(llama_tokenizer_encode(t, "a<|u|>b", 7, 0, 0, ids, 16, err), 3);
	assert_int_equal(ids[1], 8);
	assert_int_equal(llama_tokenizer_encode(t, "<|begin|>", 9, 0, 0, ids, 16, err), -1);
	assert_string_equal(err, "byte 0x3C of the text has no piece");
	assert_non_null(llama_tokenizer_decode(t, -1, 10, &len));
	assert_int_equal(len, 0);
	llama_tokenizer_free(t);
	/* Its 11 tokens do not fit a model of 10. */
	assert_int_equal(llama_tokenizer_load_hf_json(path, 10, &t, err), -1);
	assert_string_equal(err, "the tokenizer has 11 tokens, must be 1 to the model's 10");
}

/* Each tests/bad/model/tok_NAME.json is refused with the line in its
 * .err file. */
static void test_hf_bad(void **state)
{
	(void)state;
	static const char *const names[] = {"not_json",      "wordpiece",  "vocab_id",
	                                    "vocab_twice",   "bad_regex",  "merge",
	                                    "byte_fallback", "added_past", "control_behavior"};
	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
		char path[512], err[LLAMA_ERR_MAX] = "";
		struct llama_tokenizer *t = (struct llama_tokenizer *)&t;
		snprintf(path, sizeof path, "%s/tests/bad/model/tok_%s.json", root, names[k]);
		assert_int_equal(llama_tokenizer_load_hf_json(path, 16, &t, err), -1);
		assert_null(t);
		snprintf(path, sizeof path, "%s/tests/bad/model/tok_%s.err", root, names[k]);
		size_t n;
		char *want = slurp(path, &n);
		if (want == NULL) {
			printf("%s: %s\n", names[k], err);
			fail_msg("no %s", path);
		}
		if (n > 0 && want[n - 1] == '\n')
			want[n - 1] = '\0';
		assert_string_equal(err, want);
		assert_null(strchr(err, '\n'));
		free(want);
	}
}

/* ---- bad vocabularies ------------------------------------------------------ */

static void expect_refused(const struct llama_vocab_spec *spec, int vocab_size, const char *want)
{
	struct llama_tokenizer *t = (struct llama_tokenizer *)&t;
	char err[LLAMA_ERR_MAX] = "";
	assert_int_equal(llama_tokenizer_from_vocab(spec, vocab_size, &t, err), -1);
	assert_null(t);
	assert_string_equal(err, want);
	assert_null(strchr(err, '\n'));
}

static void test_bad_vocabs(void **state)
{
	(void)state;
	struct small v;
	small_spm(&v);
	expect_refused(&v.spec, 15, "the tokenizer has 16 tokens, must be 1 to the model's 15");
	expect_refused(&v.spec, 0, "vocabulary of 0 tokens, must be 1 to 1048576");
	v.scores[4] = NAN;
	expect_refused(&v.spec, 16, "token 4: score is not finite");
	small_spm(&v);
	v.types[5] = 7;
	expect_refused(&v.spec, 16, "token 5: type 7, must be 0 to 6");
	small_spm(&v);
	v.spec.bos = 16;
	expect_refused(&v.spec, 16, "BOS token 16, must be -1 (none) or 0 to 15");
	small_spm(&v);
	v.spec.bos = -1;
	expect_refused(&v.spec, 16, "the tokenizer adds a BOS token but names none");
	small_spm(&v);
	v.len[6] = LLAMA_TOK_MAX_PIECE + 1;
	expect_refused(&v.spec, 16, "token 6 is 4097 bytes, longer than 4096");
	small_spm(&v);
	v.spec.n_tokens = 0;
	expect_refused(&v.spec, 16, "the tokenizer has 0 tokens, must be 1 to the model's 16");
	small_spm(&v);
	v.spec.kind = (enum llama_vocab_kind)7;
	expect_refused(&v.spec, 16, "tokenizer kind 7 is neither SentencePiece nor BPE");
}

/* A llama2.c tokenizer of one token has no BOS (1) or EOS (2): encoding
 * with them is refused, not a read past the vocabulary. */
static void test_llama2c_one_token(void **state)
{
	(void)state;
	/* max length 1; score 0, length 1, "a". */
	static const unsigned char file[] = {1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 'a'};
	struct llama_tokenizer *t = NULL;
	char err[LLAMA_ERR_MAX];
	int ids[8];
	assert_int_equal(llama_tokenizer_load_bytes(file, sizeof file, 1, &t, err), 0);
	assert_int_equal(llama_tokenizer_encode(t, "a", 1, 1, 0, ids, 8, err), -1);
	assert_string_equal(err, "a vocabulary of 1 tokens has no BOS (token 1): llama2.c's "
	                         "tokenizers have at least 3");
	assert_int_equal(llama_tokenizer_encode(t, "a", 1, 0, 1, ids, 8, err), -1);
	assert_string_equal(err, "a vocabulary of 1 tokens has no EOS (token 2): llama2.c's "
	                         "tokenizers have at least 3");
	assert_int_equal(llama_tokenizer_encode(t, "aa", 2, 0, 0, ids, 8, err), 2);
	assert_int_equal(ids[0], 0);
	llama_tokenizer_free(t);
}

/* ---- the priority queue against run.c's rescan --------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* A llama2.c tokenizer.bin of VOCAB pieces over the letters "ab ":
 * <unk>, BOS, EOS, " ", "a", "b", then random strings of 2 to 5 letters
 * with random scores (some equal, to test the leftmost of equals). */
static size_t random_file(unsigned char *b, int vocab, char pieces[][8])
{
	size_t at = 4;
	b[0] = 6, b[1] = b[2] = b[3] = 0;
	for (int i = 0; i < vocab; i++) {
		static const char *const fixed[] = {"<unk>", "\n<s>\n", "\n</s>\n", " ", "a", "b"};
		if (i < 6) {
			snprintf(pieces[i], 8, "%s", fixed[i]);
		} else {
			const int n = 2 + (int)(next() % 4);
			for (int k = 0; k < n; k++)
				pieces[i][k] = "ab "[next() % 3];
			pieces[i][n] = '\0';
		}
		const float score = i < 6 ? 0.0f : (float)(next() % 8);
		const uint32_t len = (uint32_t)strlen(pieces[i]);
		memcpy(b + at, &score, 4);
		memcpy(b + at + 4, &len, 4);
		memcpy(b + at + 8, pieces[i], len);
		at += 8 + len;
	}
	return at;
}

/* run.c's encoding, rescanning every pair after every merge. */
static int rescan(char pieces[][8], int vocab, const float *scores, const char *text, int *ids)
{
	int n = 0;
	ids[n++] = 1;
	ids[n++] = 3;
	for (const char *c = text; *c; c++)
		for (int i = 0; i < vocab; i++)
			if (strlen(pieces[i]) == 1 && pieces[i][0] == *c) {
				ids[n++] = i;
				break;
			}
	for (;;) {
		float best = -1e10f;
		int at = -1, id = -1;
		for (int i = 0; i + 1 < n; i++) {
			char buf[16];
			snprintf(buf, sizeof buf, "%s%s", pieces[ids[i]], pieces[ids[i + 1]]);
			for (int k = 0; k < vocab; k++)
				if (strcmp(pieces[k], buf) == 0) {
					if (scores[k] > best) {
						best = scores[k];
						at = i;
						id = k;
					}
					break;
				}
		}
		if (at < 0)
			return n;
		ids[at] = id;
		memmove(ids + at + 1, ids + at + 2, (size_t)(n - at - 2) * sizeof *ids);
		n--;
	}
}

static void test_merge_equals_rescan(void **state)
{
	(void)state;
	for (int round = 0; round < 200; round++) {
		const int vocab = 8 + (int)(next() % 40);
		unsigned char file[64 * 16];
		char pieces[64][8];
		const size_t len = random_file(file, vocab, pieces);
		float scores[64];
		for (int i = 0, at = 4; i < vocab; i++) {
			memcpy(&scores[i], file + at, 4);
			at += 8 + (int)strlen(pieces[i]);
		}
		struct llama_tokenizer *t = NULL;
		char err[LLAMA_ERR_MAX];
		assert_int_equal(llama_tokenizer_load_bytes(file, len, vocab, &t, err), 0);
		char text[48];
		const int tl = 1 + (int)(next() % 40);
		for (int k = 0; k < tl; k++)
			text[k] = "ab "[next() % 3];
		text[tl] = '\0';
		int got[64], want[64];
		const int n = llama_tokenizer_encode(t, text, (size_t)tl, 1, 0, got, 64, err);
		const int m = rescan(pieces, vocab, scores, text, want);
		assert_int_equal(n, m);
		assert_memory_equal(got, want, (size_t)n * sizeof *got);
		llama_tokenizer_free(t);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		root = argv[1];
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_llama_spm_vectors),
	        cmocka_unit_test(test_phi3_vectors),
	        cmocka_unit_test(test_gpt2_vectors),
	        cmocka_unit_test(test_starcoder_vectors),
	        cmocka_unit_test(test_hf_json_vectors),
	        cmocka_unit_test(test_hf_small),
	        cmocka_unit_test(test_hf_bad),
	        cmocka_unit_test(test_bpe_by_hand),
	        cmocka_unit_test(test_bad_bpe),
	        cmocka_unit_test(test_spm_by_hand),
	        cmocka_unit_test(test_spm_decode),
	        cmocka_unit_test(test_bad_vocabs),
	        cmocka_unit_test(test_llama2c_one_token),
	        cmocka_unit_test(test_merge_equals_rescan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
