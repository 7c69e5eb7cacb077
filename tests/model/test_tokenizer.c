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

/* Every case of NAME's .inp gives its line of .out. Returns the cases. */
static int check_vectors(const char *name)
{
	char path[512];
	struct vocab_file vf;
	snprintf(path, sizeof path, "%s/tests/model/vocab/ggml-vocab-%s.gguf", root, name);
	assert_int_equal(vocab_file_read(path, &vf), 0);
	struct llama_tokenizer *t = NULL;
	char err[LLAMA_ERR_MAX] = "";
	if (llama_tokenizer_from_vocab(&vf.spec, vf.spec.n_tokens, &t, err) != 0)
		fail_msg("%s: %s", name, err);

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
	        cmocka_unit_test(test_spm_by_hand),
	        cmocka_unit_test(test_spm_decode),
	        cmocka_unit_test(test_bad_vocabs),
	        cmocka_unit_test(test_llama2c_one_token),
	        cmocka_unit_test(test_merge_equals_rescan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
