/*
 * test_gguf_llamacpp: h2o-tui's GGUF models against llama.cpp's recorded
 * logits (tests/model/gguf/, written by tools/llama_cpp_compare.sh; the
 * README there says where each file comes from and why each tolerance).
 *
 * For each model: its logits over tokens.txt's ids, position by position,
 * against llama.cpp's; the figure compared is the largest |h2o - llama.cpp|
 * at a position over the largest |llama.cpp logit| there (1 when smaller),
 * which must stay within the model's tolerance. stories260K.gguf, made by
 * llama.cpp's own converter from the llama2.c checkpoint, must also give
 * the checkpoint's logits to 1e-5. Every model's batched steps equal its
 * single steps to the bit. The figures are printed for the record.
 *
 * Usage: test_gguf_llamacpp SOURCE_ROOT
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
#include <unistd.h>

#include "h2o/llama.h"
#include "h2o/tokenizer.h"

static const char *root = ".";

#define DIR     "tests/model/gguf/"
#define MAX_TOK 64

static int read_tokens(int *ids)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/" DIR "tokens.txt", root);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	int n = 0;
	while (n < MAX_TOK && fscanf(f, "%d", &ids[n]) == 1)
		n++;
	fclose(f);
	assert_true(n > 0);
	return n;
}

static struct llama_model *load(const char *rel)
{
	char path[1024], err[LLAMA_ERR_MAX] = "";
	struct llama_model *m = NULL;
	snprintf(path, sizeof path, "%s/%s", root, rel);
	if (llama_load(path, &m, err) != 0)
		fail_msg("%s: %s", rel, err);
	return m;
}

/* The model's logits over IDS, N positions x vocab, from single steps; and
 * checked equal to the bit to a batch of three runs. */
static float *run(struct llama_model *m, const int *ids, int n)
{
	const int V = llama_model_config(m)->vocab_size;
	float *out = malloc((size_t)n * (size_t)V * sizeof *out);
	struct llama_run *r = llama_run_new(m), *b[3];
	assert_non_null(out);
	assert_non_null(r);
	for (int i = 0; i < 3; i++) {
		b[i] = llama_run_new(m);
		assert_non_null(b[i]);
	}
	for (int p = 0; p < n; p++) {
		assert_int_equal(llama_step(m, r, ids[p], p), 0);
		memcpy(out + (size_t)p * (size_t)V, llama_logits(r), (size_t)V * sizeof *out);
		const int t[3] = {ids[p], ids[p], ids[p]};
		assert_int_equal(llama_step_batch(m, b, 3, t, p), 0);
		for (int i = 0; i < 3; i++)
			assert_memory_equal(llama_logits(b[i]), llama_logits(r),
			                    (size_t)V * sizeof(float));
	}
	for (int i = 0; i < 3; i++)
		llama_run_free(b[i]);
	llama_run_free(r);
	return out;
}

/* The largest relative error of GOT against WANT over N positions. */
static double worst(const float *got, const float *want, int n, int V)
{
	double w = 0.0;
	for (int p = 0; p < n; p++) {
		double scale = 1.0, diff = 0.0;
		for (int v = 0; v < V; v++) {
			const double x = want[(size_t)p * (size_t)V + (size_t)v];
			const double d = fabs(got[(size_t)p * (size_t)V + (size_t)v] - x);
			scale = fabs(x) > scale ? fabs(x) : scale;
			diff = d > diff ? d : diff;
		}
		w = diff / scale > w ? diff / scale : w;
	}
	return w;
}

static float *read_logits(const char *name, int n, int V)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/" DIR "expected/%s.logits", root, name);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		fail_msg("%s: missing", path);
	float *x = malloc((size_t)n * (size_t)V * sizeof *x);
	assert_non_null(x);
	for (size_t i = 0; i < (size_t)n * (size_t)V; i++)
		if (fscanf(f, "%f", &x[i]) != 1)
			fail_msg("%s: short at value %zu", path, i);
	fclose(f);
	return x;
}

struct oracle_case {
	const char *name;
	double tol;
};

/* The tolerances tests/model/gguf/README.md justifies. */
static const struct oracle_case cases[] = {
        {"stories260K", 1e-5}, {"llama_f32", 1e-5},    {"llama_rope", 1e-5}, {"qwen2_f32", 1e-5},
        {"llama_f16", 2e-3},   {"llama_bf16", 1.5e-2}, {"llama_q8_0", 4e-2}, {"llama_q4_0", 4e-2},
        {"llama_q4_k", 4e-2},  {"llama_q6_k", 4e-2},
};

static void test_oracle(void **state)
{
	(void)state;
	int ids[MAX_TOK];
	const int n = read_tokens(ids);
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		char rel[256];
		snprintf(rel, sizeof rel, DIR "%s.gguf", cases[k].name);
		struct llama_model *m = load(rel);
		const int V = llama_model_config(m)->vocab_size;
		float *got = run(m, ids, n);
		float *want = read_logits(cases[k].name, n, V);
		const double w = worst(got, want, n, V);
		printf("%-12s worst |h2o - llama.cpp| / max|logit| = %.3g (tolerance %.2g)\n",
		       cases[k].name, w, cases[k].tol);
		if (!(w <= cases[k].tol))
			fail_msg("%s: %g over %g", cases[k].name, w, cases[k].tol);
		free(got);
		free(want);
		llama_free(m);
	}
}

/* The queries a run keeps before RoPE (llama_run_keep_prerope), turned by
 * the rotation llama_rope_of describes, are the queries after RoPE, bit
 * for bit: llama's adjacent pairs (stories260K, llama_f32), a GGUF's
 * frequency divisors and scale (llama_rope), Qwen2's halves (qwen2_f32,
 * qwen3_f32 after its per-head norm), at every position of a span and of
 * single steps. */
static void test_prerope_turns_to_query(void **state)
{
	(void)state;
	int ids[MAX_TOK];
	const int n = read_tokens(ids) < 24 ? read_tokens(ids) : 24;
	const char *names[] = {"stories260K", "llama_f32", "llama_rope", "qwen2_f32", "qwen3_f32"};
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		char rel[256];
		snprintf(rel, sizeof rel, DIR "%s.gguf", names[k]);
		struct llama_model *m = load(rel);
		const struct llama_config *c = llama_model_config(m);
		const int hs = c->head_size, half = hs / 2;
		float *freq = malloc((size_t)hs * sizeof *freq), *div = freq + half, scale;
		float *row = malloc((size_t)hs * sizeof *row);
		int neox;
		assert_non_null(freq);
		assert_non_null(row);
		llama_rope_of(m, freq, div, &scale, &neox);
		struct llama_run *r = llama_run_new_len(m, n);
		assert_non_null(r);
		assert_int_equal(llama_run_keep_prerope(r), 0);
		float *qs = malloc((size_t)n * (size_t)c->n_layers * (size_t)c->n_heads *
		                   (size_t)hs * sizeof *qs);
		assert_non_null(qs);
		/* A span of eight, then single steps. */
		assert_int_equal(llama_step_span(m, r, ids, 8, 0, qs, NULL, NULL), 0);
		for (int p = 8; p < n; p++) {
			assert_int_equal(llama_step(m, r, ids[p], p), 0);
			for (int l = 0; l < c->n_layers; l++)
				for (int h = 0; h < c->n_heads; h++)
					memcpy(qs + (((size_t)p * c->n_layers + l) * c->n_heads +
					             h) * hs,
					       llama_run_query(r, l, h), (size_t)hs * sizeof *qs);
		}
		for (int p = 0; p < n; p++)
			for (int l = 0; l < c->n_layers; l++)
				for (int h = 0; h < c->n_heads; h++) {
					const float *pre =
					        llama_run_prerope(r, l, h) + (size_t)p * hs;
					for (int i = 0; i < half; i++) {
						float val = p * freq[i];
						val *= scale;
						val /= div[i];
						const float fcr = cosf(val), fci = sinf(val);
						const int a = neox ? i : 2 * i,
						          b = neox ? i + half : 2 * i + 1;
						row[a] = pre[a] * fcr - pre[b] * fci;
						row[b] = pre[a] * fci + pre[b] * fcr;
					}
					const float *want =
					        qs + (((size_t)p * c->n_layers + l) * c->n_heads +
					              h) * hs;
					if (memcmp(row, want, (size_t)hs * sizeof *row) != 0)
						fail_msg("%s: position %d, layer %d, head %d: the "
						         "query "
						         "before RoPE, turned, is not the query",
						         names[k], p, l, h);
				}
		printf("%-12s queries before RoPE turn into the queries (%s pairs)\n", names[k],
		       neox ? "NeoX" : "adjacent");
		free(qs);
		free(row);
		free(freq);
		llama_run_free(r);
		llama_free(m);
	}
}

/* llama.cpp's conversion of stories260K gives the checkpoint's logits. */
static void test_stories_converted(void **state)
{
	(void)state;
	int ids[MAX_TOK];
	const int n = read_tokens(ids);
	struct llama_model *a = load("models/stories260K/stories260K.bin");
	struct llama_model *b = load(DIR "stories260K.gguf");
	const int V = llama_model_config(a)->vocab_size;
	assert_int_equal(llama_model_config(b)->vocab_size, V);
	float *x = run(a, ids, n), *y = run(b, ids, n);
	double diff = 0.0;
	for (size_t i = 0; i < (size_t)n * (size_t)V; i++)
		diff = fabs(x[i] - y[i]) > diff ? fabs(x[i] - y[i]) : diff;
	printf("stories260K: llama2.c checkpoint vs llama.cpp's GGUF conversion, max |diff| "
	       "= %.3g\n",
	       diff);
	assert_true(diff <= 1e-5);
	free(x);
	free(y);
	llama_free(a);
	llama_free(b);
}

/* llama-perplexity's figure, computed as it computes it: the text's ids
 * (its tokenizer's, BOS first) in chunks of 64, each chunk's first id made
 * BOS, the second half of each chunk scored (each position's next id). */
static void test_perplexity(void **state)
{
	(void)state;
	enum { CTX = 64, MAX_IDS = 4096 };
	char path[1024];
	static int ids[MAX_IDS];
	int n = 0;
	snprintf(path, sizeof path, "%s/" DIR "ppl_tokens.txt", root);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (n < MAX_IDS && fscanf(f, "%d", &ids[n]) == 1)
		n++;
	fclose(f);
	double want;
	snprintf(path, sizeof path, "%s/" DIR "expected/stories260K.ppl", root);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lf", &want), 1);
	fclose(f);

	struct llama_model *m = load(DIR "stories260K.gguf");
	const int V = llama_model_config(m)->vocab_size;
	struct llama_run *r = llama_run_new(m);
	assert_non_null(r);
	double nll = 0.0;
	int count = 0;
	for (int c = 0; c + 1 <= n / CTX; c++) {
		int chunk[CTX];
		memcpy(chunk, ids + c * CTX, sizeof chunk);
		chunk[0] = 1; /* BOS */
		llama_run_reset(r);
		for (int j = 0; j < CTX - 1; j++) {
			assert_int_equal(llama_step(m, r, chunk[j], j), 0);
			if (j < CTX / 2)
				continue;
			const float *lg = llama_logits(r);
			double mx = lg[0], sum = 0.0;
			for (int v = 1; v < V; v++)
				mx = lg[v] > mx ? lg[v] : mx;
			for (int v = 0; v < V; v++)
				sum += exp(lg[v] - mx);
			nll -= lg[chunk[j + 1]] - mx - log(sum);
			count++;
		}
	}
	const double ppl = exp(nll / count);
	printf("stories260K perplexity over %d scored tokens: h2o-tui %.4f, llama-perplexity "
	       "%.4f (%.3f%%)\n",
	       count, ppl, want, 100.0 * fabs(ppl - want) / want);
	assert_int_equal(count, 4 * 31);
	assert_true(fabs(ppl - want) <= 1e-3 * want);
	llama_run_free(r);
	llama_free(m);
}

/* The tokenizer read from stories260K.gguf gives llama.cpp's ids. */
static void test_tokenizer(void **state)
{
	(void)state;
	enum { MAX_IDS = 4096 };
	static int want[MAX_IDS], got[MAX_IDS];
	char path[1024], err[LLAMA_ERR_MAX] = "", text[8192];
	int n = 0;
	snprintf(path, sizeof path, "%s/" DIR "ppl_tokens.txt", root);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (n < MAX_IDS && fscanf(f, "%d", &want[n]) == 1)
		n++;
	fclose(f);
	snprintf(path, sizeof path, "%s/" DIR "ppl_text.txt", root);
	f = fopen(path, "rb");
	assert_non_null(f);
	const size_t len = fread(text, 1, sizeof text, f);
	fclose(f);
	struct llama_tokenizer *t;
	snprintf(path, sizeof path, "%s/" DIR "stories260K.gguf", root);
	if (llama_tokenizer_load(path, 512, &t, err) != 0)
		fail_msg("%s", err);
	const int m = llama_tokenizer_encode(t, text, len, 1, 0, got, MAX_IDS, err);
	printf("stories260K.gguf's tokenizer: %d ids, llama.cpp's %d\n", m, n);
	assert_int_equal(m, n);
	assert_memory_equal(got, want, (size_t)n * sizeof *got);
	llama_tokenizer_free(t);
}

/* A Hugging Face folder (config.json, safetensors, sharded or not) gives
 * the logits of the GGUF file it was made from (tools/hf_tiny.py), and so
 * llama.cpp's. */
static void test_hf_folders(void **state)
{
	(void)state;
	static const char *const pairs[2][2] = {{"tests/model/hf/llama", DIR "llama_f32.gguf"},
	                                        {"tests/model/hf/qwen2", DIR "qwen2_f32.gguf"}};
	int ids[MAX_TOK];
	const int n = read_tokens(ids);
	for (int k = 0; k < 2; k++) {
		struct llama_model *a = load(pairs[k][0]), *b = load(pairs[k][1]);
		const int V = llama_model_config(b)->vocab_size;
		assert_int_equal(llama_model_config(a)->vocab_size, V);
		assert_int_equal(llama_model_config(a)->shared_classifier,
		                 llama_model_config(b)->shared_classifier);
		float *x = run(a, ids, n), *y = run(b, ids, n);
		const double w = worst(x, y, n, V);
		printf("%s vs %s: worst relative difference %.3g\n", pairs[k][0], pairs[k][1], w);
		assert_true(w <= 1e-5);
		free(x);
		free(y);
		llama_free(a);
		llama_free(b);
	}
}

/* FILE (a path under ROOT) loaded with H2O_WEIGHTS=FORM and the model
 * kernels' variant KERNEL (NULL: the widest); NULL when this processor
 * cannot run KERNEL. */
static struct llama_model *load_as(const char *rel, const char *form, const char *kernel)
{
	if (kernel != NULL && llama_kernel_select(kernel) != 0)
		return NULL;
	setenv("H2O_WEIGHTS", form, 1);
	struct llama_model *m = load(rel);
	unsetenv("H2O_WEIGHTS");
	llama_kernel_select(NULL);
	return m;
}

/* Every form of the weights gives the same logits, bit for bit, on one
 * thread and on two: read from the mapping (dequantised inside the
 * products), unpacked into floats once, the same bytes loaded from memory
 * (the default form), and the compact forms (model_pack.c: bytes and
 * scales, halves) under every variant of the kernels this processor runs
 * (each variant's products made the same way). */
static void test_mapped_equals_unpacked(void **state)
{
	(void)state;
	static const char *const names[] = {"llama_f16",  "llama_bf16", "llama_q8_0",
	                                    "llama_q4_0", "llama_q4_k", "llama_q6_k"};
	static const char *const kernels[] = {"avx512", "avx2", "portable"};
	int ids[MAX_TOK];
	const int n = read_tokens(ids);
	for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
		char rel[256], path[1024], err[LLAMA_ERR_MAX] = "";
		snprintf(rel, sizeof rel, DIR "%s.gguf", names[k]);
		snprintf(path, sizeof path, "%s/%s", root, rel);
		struct llama_model *m[6] = {load_as(rel, "mapped", NULL),
		                            load_as(rel, "unpacked", NULL), NULL};
		const char *what[6] = {"mapped", "unpacked", "from memory"};
		FILE *f = fopen(path, "rb");
		assert_non_null(f);
		assert_int_equal(fseek(f, 0, SEEK_END), 0);
		const long size = ftell(f);
		rewind(f);
		unsigned char *bytes = malloc((size_t)size);
		assert_non_null(bytes);
		assert_int_equal(fread(bytes, 1, (size_t)size, f), (size_t)size);
		fclose(f);
		if (llama_load_bytes(bytes, (size_t)size, &m[2], err) != 0)
			fail_msg("%s: %s", rel, err);
		free(bytes);
		for (int v = 0; v < 3; v++) {
			m[3 + v] = load_as(rel, "compact", kernels[v]);
			what[3 + v] = kernels[v];
		}
		const int V = llama_model_config(m[0])->vocab_size;
		for (int threads = 0; threads < 2; threads++) {
			const enum llama_threads mode =
			        threads ? LLAMA_THREADS_TWO : LLAMA_THREADS_ONE;
			llama_set_threads(m[0], mode);
			float *a = run(m[0], ids, n);
			for (int j = 1; j < 6; j++) {
				if (m[j] == NULL)
					continue;
				llama_set_threads(m[j], mode);
				float *b = run(m[j], ids, n);
				if (memcmp(a, b, (size_t)n * (size_t)V * sizeof *a) != 0)
					fail_msg("%s: the logits %s differ from the mapped ones",
					         names[k], what[j]);
				free(b);
			}
			free(a);
		}
		for (int j = 0; j < 6; j++)
			llama_free(m[j]);
	}
}

/* Bad folders: one line each. */
static void test_hf_bad(void **state)
{
	(void)state;
	static const struct {
		const char *config, *st, *err;
	} cases[] = {
	        {"{\"model_type\": \"llama\"}", NULL, "config.json: \"hidden_size\" is missing"},
	        {"[1]", NULL, "config.json: not a JSON object"},
	        {"{\"model_type\": \"gemma3\", \"hidden_size\": 4, \"intermediate_size\": 4, "
	         "\"num_hidden_layers\": 1, \"num_attention_heads\": 2}",
	         "{}", "architecture \"gemma3\" is not supported (llama, qwen2 and qwen3 are)"},
	        {"{\"model_type\": \"llama\", \"hidden_size\": 4, \"intermediate_size\": 4, "
	         "\"num_hidden_layers\": 1, \"num_attention_heads\": 2}",
	         "{\"x\": {\"dtype\": \"I8\", \"shape\": [4], \"data_offsets\": [0, 4]}}",
	         "model.safetensors: tensor \"x\": dtype \"I8\" is not supported (F32, F16 and "
	         "BF16 are)"},
	        {"{\"model_type\": \"llama\", \"hidden_size\": 4, \"intermediate_size\": 4, "
	         "\"num_hidden_layers\": 1, \"num_attention_heads\": 2}",
	         "{\"model.norm.weight\": {\"dtype\": \"F32\", \"shape\": [4], "
	         "\"data_offsets\": [0, 64]}}",
	         "model.safetensors: tensor \"output_norm.weight\": data_offsets do not hold its 4 "
	         "elements within the file's 16 bytes of data"},
	        /* Names and types from the file reach the line escaped: no
	         * control character, no DEL, no broken UTF-8 (a fuzzer's find). */
	        {"{\"model_type\": \"llama\", \"hidden_size\": 4, \"intermediate_size\": 4, "
	         "\"num_hidden_layers\": 1, \"num_attention_heads\": 2}",
	         "{\"\\u001b[2J\\u007f\\\"x\": {\"dtype\": \"F32\", \"shape\": [4], "
	         "\"data_offsets\": [0, 64]}}",
	         "model.safetensors: tensor \"\\x1b[2J\\x7f\\x22x\": data_offsets do not hold"},
	        {"{\"model_type\": \"llama\", \"hidden_size\": 4, \"intermediate_size\": 4, "
	         "\"num_hidden_layers\": 1, \"num_attention_heads\": 2}",
	         "{\"x\": {\"dtype\": \"\\u0007\\u00e9\", \"shape\": [4], \"data_offsets\": [0, "
	         "16]}}",
	         "model.safetensors: tensor \"x\": dtype \"\\x07\\xc3\\xa9\" is not supported"},
	};
	char dir[] = "/tmp/h2o-hf-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char cfg[512], st[512];
	snprintf(cfg, sizeof cfg, "%s/config.json", dir);
	snprintf(st, sizeof st, "%s/model.safetensors", dir);
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		FILE *f = fopen(cfg, "w");
		assert_non_null(f);
		fputs(cases[k].config, f);
		fclose(f);
		remove(st);
		if (cases[k].st != NULL) {
			f = fopen(st, "wb");
			assert_non_null(f);
			const uint64_t n = strlen(cases[k].st);
			unsigned char len[8];
			for (int i = 0; i < 8; i++)
				len[i] = (unsigned char)(n >> (8 * i));
			fwrite(len, 1, 8, f);
			fputs(cases[k].st, f);
			static const float data[4] = {1, 1, 1, 1};
			fwrite(data, 4, 4, f);
			fclose(f);
		}
		struct llama_model *m = NULL;
		char err[LLAMA_ERR_MAX] = "";
		const int rc = llama_load(dir, &m, err);
		if (rc != -1 || strstr(err, cases[k].err) == NULL)
			fail_msg("case %zu: rc %d, \"%s\"", k, rc, err);
		assert_null(m);
	}
	remove(st);
	remove(cfg);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		root = argv[1];
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_stories_converted),
	        cmocka_unit_test(test_oracle),
	        cmocka_unit_test(test_prerope_turns_to_query),
	        cmocka_unit_test(test_mapped_equals_unpacked),
	        cmocka_unit_test(test_perplexity),
	        cmocka_unit_test(test_tokenizer),
	        cmocka_unit_test(test_hf_folders),
	        cmocka_unit_test(test_hf_bad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
