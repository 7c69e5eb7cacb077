/*
 * test_gguf_model: models from GGUF files (src/model/gguf_model.c,
 * quant.c) against the llama2.c path and against ggml's definitions.
 *
 * stories260K's llama2.c checkpoint is rewritten here as a GGUF file (its
 * float32 tensors under llama.cpp's names, llama's metadata) and must give
 * the checkpoint's logits bit for bit: one forward pass below both loaders.
 * The dequantisation of each type is held to values worked by hand, and
 * bad models (an architecture not supported, a missing or misshapen or
 * foreign tensor, RoPE scaling not supported) are refused with their line.
 *
 * Usage: test_gguf_model SOURCE_ROOT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/model/model_impl.h"
#include "gguf_build.h"
#include "h2o/gguf.h"
#include "h2o/llama.h"
#include "kernel_env.h"

static const char *root = ".";

static unsigned char *slurp(const char *rel, size_t *len)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc(*len + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

/* A tensor to write: its name, shape, type and data. */
struct td {
	char name[64];
	uint64_t ne[2];
	int nd;
	uint32_t type;
	const unsigned char *data;
	size_t bytes;
};

/* Metadata entries are written by KV(G) before the tensors. */
static struct gb gguf_of(void (*kv)(struct gb *, void *), int n_kv, void *arg, const struct td *t,
                         int n)
{
	struct gb g = {0};
	gb_header(&g, 3, (uint64_t)n, (uint64_t)n_kv);
	kv(&g, arg);
	uint64_t off = 0;
	for (int i = 0; i < n; i++) {
		gb_tensor(&g, t[i].name, t[i].nd, t[i].ne, t[i].type, off);
		off = (off + t[i].bytes + 31) / 32 * 32;
	}
	gb_pad(&g, 32);
	for (int i = 0; i < n; i++) {
		gb_bytes(&g, t[i].data, t[i].bytes);
		gb_pad(&g, 32);
	}
	return g;
}

struct shape {
	int dim, hidden, layers, heads, kv_heads, vocab, seq;
	const char *arch;
	const char *scaling;
};

static void llama_kv(struct gb *g, void *arg)
{
	const struct shape *s = arg;
	char key[96];
	gb_kv_str(g, "general.architecture", s->arch);
#define U32(suffix, v)                                            \
	do {                                                      \
		snprintf(key, sizeof key, "%s." suffix, s->arch); \
		gb_kv_u32(g, key, (uint32_t)(v));                 \
	} while (0)
	U32("embedding_length", s->dim);
	U32("feed_forward_length", s->hidden);
	U32("block_count", s->layers);
	U32("attention.head_count", s->heads);
	U32("attention.head_count_kv", s->kv_heads);
	U32("context_length", s->seq);
#undef U32
	snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", s->arch);
	gb_kv_f32(g, key, 1e-5f);
	snprintf(key, sizeof key, "%s.rope.scaling.type", s->arch);
	gb_kv_str(g, key, s->scaling);
}

#define STORIES_KV 9

/* stories260K's checkpoint as GGUF tensors: NT of them into T. */
static int stories_tensors(const unsigned char *bin, struct shape *s, struct td *t)
{
	int32_t h[7];
	memcpy(h, bin, sizeof h);
	*s = (struct shape){h[0], h[1], h[2], h[3], h[4], h[5], h[6], "llama", "none"};
	const size_t D = (size_t)s->dim, H = (size_t)s->hidden, L = (size_t)s->layers;
	const size_t K = D / (size_t)s->heads * (size_t)s->kv_heads, V = (size_t)s->vocab;
	const unsigned char *p = bin + 28;
	int n = 0;

#define T(nm, layer, c, r)                                        \
	do {                                                      \
		snprintf(t[n].name, sizeof t[n].name, nm, layer); \
		t[n].ne[0] = (c);                                 \
		t[n].ne[1] = (r);                                 \
		t[n].nd = (r) > 1 ? 2 : 1;                        \
		t[n].type = GGML_F32;                             \
		t[n].bytes = 4 * (size_t)(c) * (size_t)(r);       \
		n++;                                              \
	} while (0)
	/* The checkpoint's order: each kind of tensor for every layer. */
	T("%s", "token_embd.weight", D, V);
	t[n - 1].data = p;
	p += t[n - 1].bytes;
	const char *kinds[9] = {
	        "blk.%d.attn_norm.weight", "blk.%d.attn_q.weight",      "blk.%d.attn_k.weight",
	        "blk.%d.attn_v.weight",    "blk.%d.attn_output.weight", "blk.%d.ffn_norm.weight",
	        "blk.%d.ffn_gate.weight",  "blk.%d.ffn_down.weight",    "blk.%d.ffn_up.weight"};
	const size_t cols[9] = {D, D, D, D, D, D, D, H, D}, rows[9] = {1, D, K, K, D, 1, H, D, H};
	for (int k = 0; k < 9; k++)
		for (size_t l = 0; l < L; l++) {
			T("%s", "", cols[k], rows[k]);
			snprintf(t[n - 1].name, sizeof t[n - 1].name, kinds[k], (int)l);
			t[n - 1].data = p;
			p += t[n - 1].bytes;
		}
	T("%s", "output_norm.weight", D, 1);
	t[n - 1].data = p;
#undef T
	return n;
}

static void test_stories_bitwise(void **state)
{
	(void)state;
	size_t len;
	unsigned char *bin = slurp("models/stories260K/stories260K.bin", &len);
	struct shape s;
	struct td *t = calloc(64, sizeof *t);
	assert_non_null(t);
	const int n = stories_tensors(bin, &s, t);
	struct gb g = gguf_of(llama_kv, STORIES_KV, &s, t, n);

	struct llama_model *a, *b;
	char err[LLAMA_ERR_MAX] = "";
	assert_int_equal(llama_load_bytes(bin, len, &a, err), 0);
	if (llama_load_bytes(g.b, g.len, &b, err) != 0)
		fail_msg("%s", err);
	const struct llama_config *ca = llama_model_config(a), *cb = llama_model_config(b);
	assert_int_equal(ca->dim, cb->dim);
	assert_int_equal(ca->hidden_dim, cb->hidden_dim);
	assert_int_equal(ca->n_layers, cb->n_layers);
	assert_int_equal(ca->n_kv_heads, cb->n_kv_heads);
	assert_int_equal(ca->vocab_size, cb->vocab_size);
	assert_int_equal(ca->seq_len, cb->seq_len);
	assert_true(cb->shared_classifier);
	assert_int_equal(llama_run_bytes(a), llama_run_bytes(b));

	struct llama_run *ra = llama_run_new(a), *rb = llama_run_new(b);
	struct llama_run *rb2 = llama_run_new(b);
	assert_non_null(ra);
	assert_non_null(rb);
	assert_non_null(rb2);
	const int toks[6] = {1, 403, 407, 261, 378, 2};
	for (int i = 0; i < 6; i++) {
		assert_int_equal(llama_step(a, ra, toks[i], i), 0);
		assert_int_equal(llama_step(b, rb, toks[i], i), 0);
		assert_int_equal(llama_step_batch(b, &rb2, 1, &toks[i], i), 0);
		assert_memory_equal(llama_logits(ra), llama_logits(rb),
		                    (size_t)ca->vocab_size * sizeof(float));
		assert_memory_equal(llama_logits(ra), llama_logits(rb2),
		                    (size_t)ca->vocab_size * sizeof(float));
	}
	llama_run_free(ra);
	llama_run_free(rb);
	llama_run_free(rb2);
	llama_free(a);
	llama_free(b);
	free(g.b);
	free(t);
	free(bin);
}

/* Each way a good GGUF llama model (stories260K's) can be made bad. */
static void test_bad_models(void **state)
{
	(void)state;
	size_t len;
	unsigned char *bin = slurp("models/stories260K/stories260K.bin", &len);
	struct shape s;
	struct td *t = calloc(64, sizeof *t);
	assert_non_null(t);
	const int n = stories_tensors(bin, &s, t);
	static const unsigned char zero[64 * 4];
	struct {
		const char *arch, *scaling, *err;
		int drop, reshape, extra, heads;
	} cases[] = {
	        {"gemma3", "none",
	         "architecture \"gemma3\" is not supported (llama, qwen2 and qwen3 are)", -1, -1, 0,
	         8},
	        {"llama", "yarn", "RoPE scaling \"yarn\" is not supported (none and linear are)",
	         -1, -1, 0, 8},
	        {"llama", "none", "tensor \"blk.0.attn_k.weight\" is missing", 11, -1, 0, 8},
	        {"llama", "none",
	         "tensor \"blk.0.attn_q.weight\" is 64 x 32 (2 dimensions), the metadata says 64 "
	         "x 64",
	         -1, 6, 0, 8},
	        {"llama", "none", "tensor \"blk.9.extra\" is not part of a llama model", -1, -1, 1,
	         8},
	        {"llama", "none",
	         "metadata \"llama.attention.head_count_kv\": 4 does not divide the 3 query heads",
	         -1, -1, 0, 3},
	};
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		struct td u[64];
		int m = 0;
		for (int i = 0; i < n; i++) {
			if (i == cases[k].drop)
				continue;
			u[m] = t[i];
			if (i == cases[k].reshape)
				u[m].ne[1] /= 2, u[m].bytes /= 2;
			m++;
		}
		if (cases[k].extra) {
			u[m] = (struct td){.name = "blk.9.extra",
			                   .ne = {64, 1},
			                   .nd = 1,
			                   .data = zero,
			                   .bytes = sizeof zero};
			m++;
		}
		struct shape sh = s;
		sh.arch = cases[k].arch;
		sh.scaling = cases[k].scaling;
		sh.heads = cases[k].heads;
		struct gb g = gguf_of(llama_kv, STORIES_KV, &sh, u, m);
		struct llama_model *mo = NULL;
		char err[LLAMA_ERR_MAX] = "";
		const int rc = llama_load_bytes(g.b, g.len, &mo, err);
		if (rc != -1 || strstr(err, cases[k].err) == NULL)
			fail_msg("case %zu: rc %d, \"%s\"", k, rc, err);
		assert_null(mo);
		free(g.b);
	}
	free(t);
	free(bin);
}

static uint16_t half_bits(float f)
{
	/* Exact for the values used here (normal, few mantissa bits). */
	uint32_t u;
	memcpy(&u, &f, 4);
	return (uint16_t)((u >> 16 & 0x8000) | (((u >> 23 & 0xff) - 112) << 10) |
	                  (u >> 13 & 0x3ff));
}

static void test_half(void **state)
{
	(void)state;
	assert_true(model_half(0x3c00) == 1.0f);
	assert_true(model_half(0xc000) == -2.0f);
	assert_true(model_half(0x0001) == 0x1p-24f);
	assert_true(model_half(0x03ff) == 1023 * 0x1p-24f);
	assert_true(model_half(0x7bff) == 65504.0f);
	assert_true(isinf(model_half(0x7c00)));
	assert_true(isnan(model_half(0x7e00)));
	assert_true(model_half(0x8000) == 0.0f && signbit(model_half(0x8000)));
	assert_int_equal(half_bits(0.375f), 0x3600);
}

static void test_dequant(void **state)
{
	(void)state;
	unsigned char b[256];
	float y[256];

	/* Q8_0: d * q. */
	const uint16_t d = half_bits(0.5f);
	b[0] = (unsigned char)d;
	b[1] = (unsigned char)(d >> 8);
	for (int j = 0; j < 32; j++)
		b[2 + j] = (unsigned char)(int8_t)(j - 16);
	dequant_row(GGML_Q8_0, b, y, 32);
	for (int j = 0; j < 32; j++)
		assert_true(y[j] == 0.5f * (float)(j - 16));

	/* Q4_0: the low nibbles are values 0..15, the high ones 16..31, less 8. */
	for (int j = 0; j < 16; j++)
		b[2 + j] = (unsigned char)(j | (15 - j) << 4);
	dequant_row(GGML_Q4_0, b, y, 32);
	for (int j = 0; j < 16; j++) {
		assert_true(y[j] == 0.5f * (float)(j - 8));
		assert_true(y[j + 16] == 0.5f * (float)(7 - j));
	}

	/* BF16 and F16 widen; F32 is read little-endian. */
	const unsigned char bf[4] = {0xc0, 0x3f, 0x00, 0xc0}; /* 1.5, -2 */
	dequant_row(GGML_BF16, bf, y, 2);
	assert_true(y[0] == 1.5f && y[1] == -2.0f);
	dequant_row(GGML_F16, (const unsigned char[]){0x00, 0x36}, y, 1);
	assert_true(y[0] == 0.375f);
	dequant_row(GGML_F32, (const unsigned char[]){0x00, 0x00, 0xc0, 0x3f}, y, 1);
	assert_true(y[0] == 1.5f);

	/* Q4_K: group 0 has scale 3 and min 2 (bytes 0 and 4), group 5 scale
	 * 1 | 2 << 4 = 33 (byte 9's low nibble, byte 1's top bits) and min
	 * 4 | 1 << 4 = 20; d = 0.5, dmin = 0.25. Value = d*sc*q - dmin*m. */
	memset(b, 0, 144);
	const uint16_t dm = half_bits(0.25f);
	b[0] = (unsigned char)d;
	b[1] = (unsigned char)(d >> 8);
	b[2] = (unsigned char)dm;
	b[3] = (unsigned char)(dm >> 8);
	b[4 + 0] = 3;
	b[4 + 4] = 2;
	b[4 + 1] = 2 << 6;
	b[4 + 5] = 1 << 6;
	b[4 + 9] = 1 | 4 << 4;
	for (int l = 0; l < 128; l++)
		b[16 + l] = (unsigned char)((l % 16) | (15 - l % 16) << 4);
	dequant_row(GGML_Q4_K, b, y, 256);
	for (int l = 0; l < 32; l++)
		assert_true(y[l] == 0.5f * 3.0f * (float)(l % 16) - 0.25f * 2.0f);
	/* Group 5: the high nibbles of bytes 64..95 of qs, values 160..191. */
	for (int l = 0; l < 32; l++)
		assert_true(y[160 + l] ==
		            0.5f * 33.0f * (float)(15 - (64 + l) % 16) - 0.25f * 20.0f);

	/* Q6_K: value 64 * n + 32 * k + l (n < 2 halves, k < 4) takes the low
	 * or high nibble of ql and two bits of qh, less 32, times scale
	 * sc[8n + 2k + l / 16] and d. */
	memset(b, 0, 210);
	for (int i = 0; i < 128; i++)
		b[i] = (unsigned char)(i * 7);
	for (int i = 0; i < 64; i++)
		b[128 + i] = (unsigned char)(i * 13);
	for (int i = 0; i < 16; i++)
		b[192 + i] = (unsigned char)(int8_t)(i - 8);
	b[208] = (unsigned char)d;
	b[209] = (unsigned char)(d >> 8);
	dequant_row(GGML_Q6_K, b, y, 256);
	for (int n = 0; n < 2; n++)
		for (int k = 0; k < 4; k++)
			for (int l = 0; l < 32; l++) {
				const unsigned char ql = b[64 * n + l + (k & 1) * 32];
				const int lo = k < 2 ? ql & 15 : ql >> 4;
				const int hi = b[128 + 32 * n + l] >> (2 * k) & 3;
				const int sc = (int8_t)b[192 + 8 * n + 2 * k + l / 16];
				const float want = 0.5f * (float)sc * (float)((lo | hi << 4) - 32);
				assert_true(y[128 * n + 32 * k + l] == want);
			}
}

int main(int argc, char **argv)
{
	const int kernel_rc = model_kernel_from_env();
	if (kernel_rc >= 0)
		return kernel_rc;
	if (argc > 1)
		root = argv[1];
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_stories_bitwise),
	        cmocka_unit_test(test_bad_models),
	        cmocka_unit_test(test_half),
	        cmocka_unit_test(test_dequant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
