/*
 * test_gguf: the GGUF reader (src/model/gguf.c) on files built in memory:
 * a good file read back entry by entry, then the same file broken one way
 * at a time, each refused with its own line; every prefix of the good file
 * refused without reading past it (the sanitizers watch).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/gguf.h"
#include "gguf_build.h"

/* Ways to break the good file. */
enum brk {
	OK,
	B_MAGIC,
	B_VERSION,
	B_NTENSORS,
	B_NKV,
	B_VALTYPE,
	B_NESTED,
	B_BOOL,
	B_DUPKEY,
	B_ALIGN,
	B_NDIMS,
	B_DIM0,
	B_TYPE,
	B_BLOCKS,
	B_OFFSET,
	B_TRAILING,
	B_DUPTENSOR,
	B_KEYLEN,
	B_ARRLEN,
	B_ALIGN64,
	B_NAMELEN,
	B_V2,
};

static struct gb build(enum brk b)
{
	struct gb g = {0};
	static const char *const toks[3] = {"a", "", "bcd"};
	static const int32_t types[3] = {1, 3, 6};
	const size_t align = b == B_ALIGN64 ? 64 : 32;

	gb_header(&g,
	          b == B_VERSION ? 1
	          : b == B_V2    ? 2
	                         : 3,
	          b == B_NTENSORS ? 1000 : 2,
	          b == B_NKV ? 1000 : 6 + (b == B_ALIGN || b == B_ALIGN64 || b == B_KEYLEN));
	if (b == B_MAGIC)
		memcpy(g.b, "GGUG", 4);
	gb_kv_str(&g, "general.architecture", "llama");
	if (b == B_VALTYPE) {
		gb_str(&g, "llama.block_count");
		gb_u32(&g, 13);
		gb_u32(&g, 2);
	} else {
		gb_kv_u32(&g, b == B_DUPKEY ? "general.architecture" : "llama.block_count", 2);
	}
	gb_kv_f32(&g, "llama.rope.freq_base", 10000.5f);
	if (b == B_BOOL) {
		gb_str(&g, "tokenizer.ggml.add_bos_token");
		gb_u32(&g, 7);
		gb_le(&g, 2, 1);
	} else {
		gb_kv_bool(&g, "tokenizer.ggml.add_bos_token", 1);
	}
	if (b == B_NESTED) {
		gb_str(&g, "tokenizer.ggml.tokens");
		gb_u32(&g, 9);
		gb_u32(&g, 9);
		gb_u64(&g, 0);
	} else if (b == B_ARRLEN) {
		gb_str(&g, "tokenizer.ggml.tokens");
		gb_u32(&g, 9);
		gb_u32(&g, 8);
		gb_u64(&g, (uint64_t)1 << 40);
	} else {
		gb_kv_arr_str(&g, "tokenizer.ggml.tokens", toks, 3);
	}
	gb_kv_arr_i32(&g, "tokenizer.ggml.token_type", types, 3);
	if (b == B_ALIGN)
		gb_kv_u32(&g, "general.alignment", 48);
	if (b == B_ALIGN64)
		gb_kv_u32(&g, "general.alignment", 64);
	if (b == B_KEYLEN) {
		gb_u64(&g, 60000);
		return g;
	}

	const uint64_t ne_w[2] = {4, 2}, ne_q[2] = {32, 2}, ne_bad[5] = {4, 2, 1, 1, 1};
	const uint64_t ne_0[2] = {4, 0}, ne_blk[2] = {16, 4};
	if (b == B_NDIMS)
		gb_tensor(&g, "w", 5, ne_bad, 0, 0);
	else if (b == B_DIM0)
		gb_tensor(&g, "w", 2, ne_0, 0, 0);
	else if (b == B_NAMELEN)
		gb_tensor(&g, "a.name.that.is.far.too.long.for.ggml.which.allows.63.bytes.at.most",
		          2, ne_w, 0, 0);
	else
		gb_tensor(&g, "w", 2, ne_w, b == B_TYPE ? 13 : 0, 0);
	const uint64_t q_off = align;
	gb_tensor(&g, b == B_DUPTENSOR ? "w" : "q", 2, b == B_BLOCKS ? ne_blk : ne_q, 8,
	          b == B_OFFSET ? 40 : q_off);
	gb_pad(&g, align);
	for (int i = 0; i < 8; i++)
		gb_f32(&g, (float)i * 0.5f);
	gb_pad(&g, align);
	for (int r = 0; r < 2; r++) {
		gb_le(&g, 0x3c00, 2); /* scale 1.0 in half precision */
		for (int j = 0; j < 32; j++)
			gb_le(&g, (uint64_t)(uint8_t)(int8_t)(j - 16 + r), 1);
	}
	gb_pad(&g, align);
	if (b == B_TRAILING)
		gb_bytes(&g, "junk", 4);
	return g;
}

static void test_good(void **state)
{
	(void)state;
	for (int v = 0; v < 3; v++) {
		const enum brk b = v == 0 ? OK : v == 1 ? B_ALIGN64 : B_V2;
		struct gb g = build(b);
		struct gguf_file *f;
		char err[LLAMA_ERR_MAX] = "";
		assert_int_equal(gguf_open_bytes(g.b, g.len, &f, err), 0);
		assert_int_equal(gguf_version(f), b == B_V2 ? 2 : 3);
		assert_int_equal(gguf_alignment(f), b == B_ALIGN64 ? 64 : 32);
		assert_int_equal(gguf_n_kv(f), b == B_ALIGN64 ? 7 : 6);

		const char *s;
		size_t len;
		int i = gguf_find(f, "general.architecture");
		assert_int_equal(i, 0);
		assert_int_equal(gguf_get_str(f, i, &s, &len), 0);
		assert_int_equal(len, 5);
		assert_memory_equal(s, "llama", 5);
		int64_t iv;
		assert_int_equal(gguf_get_int(f, i, &iv), -1);

		i = gguf_find(f, "llama.block_count");
		assert_int_equal(gguf_kv_type(f, i), GGUF_UINT32);
		assert_int_equal(gguf_get_int(f, i, &iv), 0);
		assert_int_equal(iv, 2);
		double d;
		assert_int_equal(gguf_get_float(f, i, &d), 0);
		assert_true(d == 2.0);
		assert_int_equal(gguf_get_float(f, gguf_find(f, "llama.rope.freq_base"), &d), 0);
		assert_true(d == 10000.5);
		assert_int_equal(gguf_get_int(f, gguf_find(f, "tokenizer.ggml.add_bos_token"), &iv),
		                 0);
		assert_int_equal(iv, 1);
		assert_int_equal(gguf_find(f, "llama"), -1);
		assert_int_equal(gguf_find(f, "general.architecturex"), -1);

		enum gguf_type et;
		uint64_t n;
		i = gguf_find(f, "tokenizer.ggml.tokens");
		assert_int_equal(gguf_get_arr(f, i, &et, &n), 0);
		assert_int_equal(et, GGUF_STRING);
		assert_int_equal(n, 3);
		assert_int_equal(gguf_get_arr_str(f, i, 2, &s, &len), 0);
		assert_int_equal(len, 3);
		assert_memory_equal(s, "bcd", 3);
		assert_int_equal(gguf_get_arr_str(f, i, 1, &s, &len), 0);
		assert_int_equal(len, 0);
		assert_int_equal(gguf_get_arr_str(f, i, 3, &s, &len), -1);
		assert_int_equal(gguf_get_arr_int(f, i, 0, &iv), -1);
		i = gguf_find(f, "tokenizer.ggml.token_type");
		assert_int_equal(gguf_get_arr_int(f, i, 2, &iv), 0);
		assert_int_equal(iv, 6);
		assert_int_equal(gguf_get_arr_float(f, i, 1, &d), 0);
		assert_true(d == 3.0);
		assert_int_equal(gguf_get_arr_str(f, i, 0, &s, &len), -1);

		assert_int_equal(gguf_n_tensors(f), 2);
		const struct gguf_tensor *w = gguf_find_tensor(f, "w");
		assert_non_null(w);
		assert_int_equal(w->n_dims, 2);
		assert_int_equal(w->ne[0], 4);
		assert_int_equal(w->ne[1], 2);
		assert_int_equal(w->ne[2], 1);
		assert_int_equal(w->type, GGML_F32);
		assert_int_equal(w->bytes, 32);
		float x;
		memcpy(&x, w->data + 4 * 5, 4);
		assert_true(x == 2.5f);
		const struct gguf_tensor *q = gguf_find_tensor(f, "q");
		assert_non_null(q);
		assert_ptr_equal(q, gguf_tensor(f, 1));
		assert_int_equal(q->type, GGML_Q8_0);
		assert_int_equal(q->bytes, 68);
		assert_int_equal(q->offset, b == B_ALIGN64 ? 64 : 32);
		assert_int_equal((size_t)(q->data - g.b) % gguf_alignment(f), 0);
		assert_int_equal(q->data[2], (unsigned char)(int8_t)-16);
		assert_null(gguf_find_tensor(f, "x"));
		gguf_close(f);
		free(g.b);
	}
}

struct bad_case {
	enum brk b;
	const char *err;
};

static const struct bad_case bad_cases[] = {
        {B_MAGIC, "byte 0: not a GGUF file (its first bytes are not \"GGUF\")"},
        {B_VERSION, "byte 4: GGUF version 1, only 2 and 3 are read"},
        {B_NTENSORS, "byte 8: 1000 tensors cannot fit in the file's"},
        {B_NKV, "byte 16: 1000 metadata entries cannot fit in the file's"},
        {B_VALTYPE, "metadata \"llama.block_count\": value type 13 is not one of GGUF's"},
        {B_NESTED, "metadata \"tokenizer.ggml.tokens\": arrays of arrays are not supported"},
        {B_BOOL, "metadata \"tokenizer.ggml.add_bos_token\": bool 2, must be 0 or 1"},
        {B_DUPKEY, "metadata entries 0 and 1 are both \"general.architecture\""},
        {B_ALIGN, "metadata \"general.alignment\" must be a uint32 power of two up to 65536"},
        {B_NDIMS, "tensor \"w\": 5 dimensions, must be 1 to 4"},
        {B_DIM0, "tensor \"w\": dimension 1 is 0, must be 1 to"},
        {B_TYPE, "tensor \"w\": type Q5_K is not supported (F32, F16, BF16, Q4_0, Q8_0, "
                 "Q4_K and Q6_K are)"},
        {B_BLOCKS, "tensor \"q\": rows of 16 elements are not whole blocks of 32 (Q8_0)"},
        {B_OFFSET, "tensor \"q\": data at offset 40, expected 32 (tensors follow one another, "
                   "aligned to 32)"},
        {B_TRAILING, "4 bytes after the last tensor's data"},
        {B_DUPTENSOR, "tensors 0 and 1 are both \"w\""},
        {B_KEYLEN, "the key of metadata entry 6 is 60000 bytes long, past the file's end"},
        {B_ARRLEN, "metadata \"tokenizer.ggml.tokens\": 1099511627776 elements of at least 8 "
                   "bytes each, past the file's end"},
        {B_NAMELEN, "the name of tensor 0 is 66 bytes long, over 63"},
};

static void test_bad(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof bad_cases / sizeof *bad_cases; k++) {
		struct gb g = build(bad_cases[k].b);
		struct gguf_file *f = (struct gguf_file *)&g;
		char err[LLAMA_ERR_MAX] = "";
		const int rc = gguf_open_bytes(g.b, g.len, &f, err);
		if (rc != -1 || strstr(err, bad_cases[k].err) == NULL)
			fail_msg("case %zu: rc %d, \"%s\", wanted \"%s\"", k, rc, err,
			         bad_cases[k].err);
		assert_null(f);
		assert_null(strchr(err, '\n'));
		free(g.b);
	}
}

/* Every prefix of a good file that cuts into its last tensor's data or
 * before is refused, and read no further than it ends (a copy of exactly
 * that many bytes, for the sanitizers); the padding after may be cut. */
static void test_prefixes(void **state)
{
	(void)state;
	struct gb g = build(OK);
	struct gguf_file *good;
	char e[LLAMA_ERR_MAX];
	assert_int_equal(gguf_open_bytes(g.b, g.len, &good, e), 0);
	const struct gguf_tensor *last = gguf_tensor(good, 1);
	const size_t end = (size_t)(last->data - g.b) + (size_t)last->bytes;
	gguf_close(good);
	assert_true(end < g.len);
	for (size_t n = end; n <= g.len; n++) {
		assert_int_equal(gguf_open_bytes(g.b, n, &good, e), 0);
		gguf_close(good);
	}
	for (size_t n = 0; n < end; n++) {
		unsigned char *p = malloc(n + 1);
		assert_non_null(p);
		memcpy(p, g.b, n);
		struct gguf_file *f;
		char err[LLAMA_ERR_MAX] = "";
		assert_int_equal(gguf_open_bytes(p, n, &f, err), -1);
		assert_true(err[0] != '\0');
		free(p);
	}
	free(g.b);
}

/* Hostile names are shown escaped in errors, never raw. */
static void test_hostile_name(void **state)
{
	(void)state;
	struct gb g = {0};
	const uint64_t ne[1] = {4};
	gb_header(&g, 3, 1, 0);
	gb_tensor(&g, "\x1b[2J\"x", 1, ne, 9, 0);
	struct gguf_file *f;
	char err[LLAMA_ERR_MAX] = "";
	assert_int_equal(gguf_open_bytes(g.b, g.len, &f, err), -1);
	assert_non_null(strstr(err, "tensor \"\\x1b[2J\\x22x\": type Q8_1 is not supported"));
	free(g.b);
}

/* The same file through a descriptor: mapped, read, unmapped. */
static void test_fd(void **state)
{
	(void)state;
	struct gb g = build(OK);
	FILE *t = tmpfile();
	assert_non_null(t);
	assert_int_equal(fwrite(g.b, 1, g.len, t), g.len);
	assert_int_equal(fflush(t), 0);
	struct gguf_file *f;
	char err[LLAMA_ERR_MAX] = "";
	assert_int_equal(gguf_open_fd(fileno(t), &f, err), 0);
	const struct gguf_tensor *w = gguf_find_tensor(f, "w");
	assert_non_null(w);
	float x;
	memcpy(&x, w->data + 4 * 7, 4);
	assert_true(x == 3.5f);
	gguf_close(f);
	assert_int_equal(gguf_open_fd(-1, &f, err), -1);
	assert_non_null(strstr(err, "cannot stat"));
	fclose(t);
	free(g.b);
}

/* tokenizer.ggml.* as a vocabulary spec; and its bad values refused. */
static struct gb vocab_file(int variant)
{
	struct gb g = {0};
	static const char *const toks[4] = {"<unk>",
	                                    "\xc4\xa0"
	                                    "a",
	                                    "b", "ab"};
	static const char *const merges[1] = {"a b"};
	static const float scores[4] = {0.0f, -1.0f, -2.0f, -0.5f};
	static const int32_t types[4] = {2, 1, 1, 1};
	const int32_t bad_types[4] = {2, 1, 7, 1};
	gb_header(&g, 3, 0, 9);
	gb_kv_str(&g, "tokenizer.ggml.model", variant == 1 ? "bert" : "gpt2");
	gb_kv_str(&g, "tokenizer.ggml.pre", "qwen2");
	gb_kv_arr_str(&g, "tokenizer.ggml.tokens", toks, 4);
	gb_kv_arr_f32(&g, "tokenizer.ggml.scores", scores, variant == 2 ? 3 : 4);
	gb_kv_arr_i32(&g, "tokenizer.ggml.token_type", variant == 3 ? bad_types : types, 4);
	gb_kv_arr_str(&g, "tokenizer.ggml.merges", merges, 1);
	gb_kv_u32(&g, "tokenizer.ggml.bos_token_id", variant == 4 ? 4 : 3);
	gb_kv_u32(&g, "tokenizer.ggml.eos_token_id", 2);
	gb_kv_bool(&g, "tokenizer.ggml.add_bos_token", 0);
	return g;
}

static void test_vocab(void **state)
{
	(void)state;
	static const char *const errs[5] = {
	        NULL,
	        "tokenizer \"bert\" is not supported (\"llama\" and \"gpt2\" are)",
	        "metadata \"tokenizer.ggml.scores\" must be 4 float32s, one per token",
	        "metadata \"tokenizer.ggml.token_type\": token 2 has type 7, must be 0 to 6",
	        "metadata \"tokenizer.ggml.bos_token_id\" is 4, not a token of the 4",
	};
	for (int k = 0; k < 5; k++) {
		struct gb g = vocab_file(k);
		struct gguf_file *f;
		char err[LLAMA_ERR_MAX] = "";
		assert_int_equal(gguf_open_bytes(g.b, g.len, &f, err), 0);
		struct gguf_vocab v;
		const int rc = gguf_vocab_read(f, &v, err);
		if (errs[k] != NULL) {
			assert_int_equal(rc, -1);
			assert_string_equal(err, errs[k]);
			assert_null(v.mem);
		} else {
			assert_int_equal(rc, 0);
			const struct llama_vocab_spec *s = &v.spec;
			assert_int_equal(s->kind, LLAMA_VOCAB_BPE);
			assert_int_equal(s->n_tokens, 4);
			assert_int_equal(s->token_len[1], 3);
			assert_memory_equal(s->tokens[1],
			                    "\xc4\xa0"
			                    "a",
			                    3);
			assert_true(s->scores[3] == -0.5f);
			assert_int_equal(s->types[0], LLAMA_TOKEN_TYPE_UNKNOWN);
			assert_int_equal(s->n_merges, 1);
			assert_int_equal(s->merge_len[0], 3);
			assert_memory_equal(s->merges[0], "a b", 3);
			assert_string_equal(s->pre, "qwen2");
			assert_int_equal(s->bos, 3);
			assert_int_equal(s->eos, 2);
			assert_int_equal(s->unk, -1);
			assert_int_equal(s->pad, -1);
			assert_false(s->add_bos);
			assert_false(s->add_space_prefix);
			gguf_vocab_free(&v);
		}
		gguf_close(f);
		free(g.b);
	}
	/* A file without a tokenizer says so. */
	struct gb g = build(OK);
	struct gguf_file *f;
	char err[LLAMA_ERR_MAX] = "";
	struct gguf_vocab v;
	assert_int_equal(gguf_open_bytes(g.b, g.len, &f, err), 0);
	assert_int_equal(gguf_vocab_read(f, &v, err), -1);
	assert_string_equal(err, "metadata \"tokenizer.ggml.model\" is missing: the file has no "
	                         "tokenizer");
	gguf_close(f);
	free(g.b);
}

static void test_type_names(void **state)
{
	(void)state;
	char buf[16];
	assert_string_equal(gguf_type_name(0, buf), "F32");
	assert_string_equal(gguf_type_name(30, buf), "BF16");
	assert_string_equal(gguf_type_name(23, buf), "IQ4_XS");
	assert_string_equal(gguf_type_name(4, buf), "type 4");
	assert_string_equal(gguf_type_name(1000, buf), "type 1000");
	assert_int_equal(ggml_block_bytes(GGML_Q6_K), 210);
	assert_int_equal(ggml_block_elems(GGML_Q4_K), 256);
	assert_int_equal(ggml_block_bytes(GGML_Q4_0), 18);
	assert_int_equal(ggml_block_elems(13), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_good),       cmocka_unit_test(test_bad),
	        cmocka_unit_test(test_prefixes),   cmocka_unit_test(test_hostile_name),
	        cmocka_unit_test(test_type_names), cmocka_unit_test(test_fd),
	        cmocka_unit_test(test_vocab),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
