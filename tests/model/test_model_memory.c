/*
 * test_model_memory: the memory a model and its runs are predicted to take
 * (llama_model_bytes, llama_run_bytes_len: what --max-memory is held to)
 * against the memory they take, for every way weights are held: a llama2.c
 * checkpoint (float32), and GGUF files of F32, F16 and Q8_0 matrices packed
 * compact, unpacked to float32 and read from the mapping (H2O_WEIGHTS).
 *
 * Each case runs in a child process: its peak resident memory is reset
 * (/proc/self/clear_refs, 5), the model loaded, RUNS runs stepped over
 * every position, and the peak's growth read from /proc/self/status
 * (VmHWM less the VmRSS before; file pages the process maps count, as the
 * mapped form's tensors do). The growth must stay at or below the
 * prediction, and the prediction within SLACK_RATIO of the growth plus
 * SLACK_BYTES: the prediction is an upper bound, not an equality. It
 * counts the largest tensor copied as held at once with everything else,
 * 2 MiB for the program's own pages while a model runs (MODEL_RUNTIME_BYTES,
 * measured at about 1 MiB), and a 64 KiB window of the file on each side of
 * every tensor read (a fault maps its neighbours): for the 38 tensors of
 * these files, 4.75 MiB. A fixed 6 MiB and a quarter more than measured
 * cover those terms; more would mean the prediction counts something the
 * model does not hold.
 *
 * With --write PATH TYPE DIM LAYERS HIDDEN [HEADS KV_HEADS VOCAB], it writes
 * a GGUF file of that shape (TYPE f32, f16 or q8_0; heads of 64 and a
 * vocabulary of 512, stories260K's tokenizer's, unless given: another
 * vocabulary is written into the file, byte pieces and fillers) for the
 * measurements of docs/gguf.md, and exits. With --measure PATH FORM RUNS N
 * it measures one model as the tests do and prints the figures; with
 * --predict PATH N it loads PATH and prints what the model and a run per
 * policy over N positions are predicted to take (drop_predict_memory).
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "gguf_build.h"
#include "h2o/drop.h"
#include "h2o/engine.h"
#include "h2o/llama.h"

/* The prediction may be at most this much above the growth, times it. */
#define SLACK_RATIO 1.25
#define SLACK_BYTES (6.0 * 1024 * 1024)

enum { T_F32 = 0, T_F16 = 1, T_Q8_0 = 8 };

struct shape {
	int dim, layers, heads, kv_heads, hidden, vocab, seq;
};

static uint64_t rng = 0x2545F4914F6CDD1DULL;

/* A number in (-A, A). */
static float rnd(float a)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return a * ((float)(rng >> 40) / (float)(1u << 24) * 2.0f - 1.0f);
}

static uint64_t type_bytes(int type, uint64_t n)
{
	return type == T_F32 ? 4 * n : type == T_F16 ? 2 * n : n / 32 * 34;
}

/* N weights of TYPE, random within A (ones for a norm). */
static void put_data(FILE *f, int type, uint64_t n, float a, int norm)
{
	for (uint64_t i = 0; i < n;) {
		if (type == T_F32) {
			const float v = norm ? 1.0f : rnd(a);
			fwrite(&v, 4, 1, f);
			i++;
		} else if (type == T_F16) {
			const uint16_t h = gb_half(rnd(a));
			fwrite(&h, 2, 1, f);
			i++;
		} else {
			unsigned char b[34];
			const uint16_t d = gb_half(a / 127.0f);
			memcpy(b, &d, 2);
			for (int j = 0; j < 32; j++)
				b[2 + j] = (unsigned char)(int8_t)rnd(127.0f);
			fwrite(b, 34, 1, f);
			i += 32;
		}
	}
}

/* A llama GGUF file of shape S, its matrices of TYPE (norms F32), tied
 * output, at PATH: 0, or -1. */
static int write_gguf(const char *path, const struct shape *s, int type)
{
	struct tensor {
		char name[48];
		uint64_t ne0, ne1;
		int type;
	};
	const int n = 2 + 9 * s->layers;
	struct tensor *t = calloc((size_t)n, sizeof *t);
	if (t == NULL)
		return -1;
	const uint64_t D = (uint64_t)s->dim, hs = D / (uint64_t)s->heads;
	int k = 0;
	t[k++] = (struct tensor){"token_embd.weight", D, (uint64_t)s->vocab, type};
	t[k++] = (struct tensor){"output_norm.weight", D, 1, T_F32};
	for (int l = 0; l < s->layers; l++) {
		const struct {
			const char *name;
			uint64_t ne0, ne1;
		} m[9] = {{"attn_norm", D, 1},
		          {"attn_q", D, D},
		          {"attn_k", D, (uint64_t)s->kv_heads * hs},
		          {"attn_v", D, (uint64_t)s->kv_heads * hs},
		          {"attn_output", D, D},
		          {"ffn_norm", D, 1},
		          {"ffn_gate", D, (uint64_t)s->hidden},
		          {"ffn_up", D, (uint64_t)s->hidden},
		          {"ffn_down", (uint64_t)s->hidden, D}};
		for (int j = 0; j < 9; j++, k++) {
			snprintf(t[k].name, sizeof t[k].name, "blk.%d.%s.weight", l, m[j].name);
			t[k].ne0 = m[j].ne0;
			t[k].ne1 = m[j].ne1;
			t[k].type = m[j].ne1 == 1 ? T_F32 : type;
		}
	}
	struct gb g = {0};
	/* Past stories260K's 512 tokens, a SentencePiece-style vocabulary of
	 * the file's own: the byte pieces and fillers. */
	const int own_vocab = s->vocab != 512;
	gb_header(&g, 3, (uint64_t)n, own_vocab ? 11 : 10);
	gb_kv_str(&g, "general.architecture", "llama");
	gb_kv_u32(&g, "llama.embedding_length", (uint32_t)s->dim);
	gb_kv_u32(&g, "llama.feed_forward_length", (uint32_t)s->hidden);
	gb_kv_u32(&g, "llama.block_count", (uint32_t)s->layers);
	gb_kv_u32(&g, "llama.attention.head_count", (uint32_t)s->heads);
	gb_kv_u32(&g, "llama.attention.head_count_kv", (uint32_t)s->kv_heads);
	gb_kv_u32(&g, "llama.context_length", (uint32_t)s->seq);
	gb_kv_f32(&g, "llama.rope.freq_base", 10000.0f);
	gb_kv_f32(&g, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
	if (own_vocab) {
		char **tok = calloc((size_t)s->vocab, sizeof *tok);
		if (tok == NULL)
			abort();
		for (int i = 0; i < s->vocab; i++) {
			tok[i] = malloc(16);
			if (tok[i] == NULL)
				abort();
			if (i < 3)
				snprintf(tok[i], 16, "%s",
				         i == 0   ? "<unk>"
				         : i == 1 ? "<s>"
				                  : "</s>");
			else if (i < 3 + 256)
				snprintf(tok[i], 16, "<0x%02X>", i - 3);
			else
				snprintf(tok[i], 16, "t%d", i);
		}
		gb_kv_str(&g, "tokenizer.ggml.model", "llama");
		gb_kv_arr_str(&g, "tokenizer.ggml.tokens", (const char *const *)tok, s->vocab);
		for (int i = 0; i < s->vocab; i++)
			free(tok[i]);
		free(tok);
	} else {
		gb_kv_str(&g, "tokenizer.ggml.model", "no_vocab");
	}
	uint64_t off = 0;
	for (int i = 0; i < n; i++) {
		const uint64_t ne[2] = {t[i].ne0, t[i].ne1};
		gb_tensor(&g, t[i].name, t[i].ne1 == 1 ? 1 : 2, ne, (uint32_t)t[i].type, off);
		off += (type_bytes(t[i].type, t[i].ne0 * t[i].ne1) + 31) / 32 * 32;
	}
	gb_pad(&g, 32);
	FILE *f = fopen(path, "wb");
	if (f == NULL) {
		free(g.b);
		free(t);
		return -1;
	}
	fwrite(g.b, 1, g.len, f);
	free(g.b);
	static const unsigned char zeros[32];
	for (int i = 0; i < n; i++) {
		const uint64_t bytes = type_bytes(t[i].type, t[i].ne0 * t[i].ne1);
		put_data(f, t[i].type, t[i].ne0 * t[i].ne1, 0.05f, t[i].ne1 == 1);
		fwrite(zeros, 1, (size_t)((32 - bytes % 32) % 32), f);
	}
	free(t);
	return fclose(f) == 0 ? 0 : -1;
}

/* A llama2.c checkpoint (version 0, shared classifier) of shape S. */
static int write_llama2c(const char *path, const struct shape *s)
{
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	const int32_t h[7] = {s->dim,      s->hidden, s->layers, s->heads,
	                      s->kv_heads, s->vocab,  s->seq};
	fwrite(h, 4, 7, f);
	const uint64_t D = (uint64_t)s->dim, L = (uint64_t)s->layers, H = (uint64_t)s->hidden;
	const uint64_t kv = D / (uint64_t)s->heads * (uint64_t)s->kv_heads;
	const uint64_t hs = D / (uint64_t)s->heads;
	put_data(f, T_F32, (uint64_t)s->vocab * D, 0.05f, 0);
	put_data(f, T_F32, L * D, 0, 1);
	put_data(f, T_F32, L * (2 * D * D + 2 * D * kv), 0.05f, 0);
	put_data(f, T_F32, L * D, 0, 1);
	put_data(f, T_F32, L * 3 * D * H, 0.05f, 0);
	put_data(f, T_F32, D, 0, 1);
	put_data(f, T_F32, (uint64_t)s->seq * hs, 0.05f, 0); /* RoPE tables, unused */
	return fclose(f) == 0 ? 0 : -1;
}

/* /proc/self/status's FIELD in bytes, or -1. */
static double status_bytes(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double v = -1;
	const size_t n = strlen(field);
	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			v = 1024.0 * strtod(line + n + 1, NULL);
	if (f != NULL)
		fclose(f);
	return v;
}

/* Whether this process's peak resident memory can be reset. */
static int reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (f == NULL)
		return -1;
	const int ok = fputs("5", f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

struct measure {
	double grown, predicted, model;
	int ok;
};

/* PATH loaded with H2O_WEIGHTS FORM (NULL: unset), RUNS runs stepped over
 * N positions each, in a child: what it measured. */
static struct measure measure(const char *path, const char *form, int runs, int n)
{
	struct measure r = {0};
	int fd[2];
	if (pipe(fd) != 0)
		return r;
	const pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		struct measure c = {0};
		if (form != NULL)
			setenv("H2O_WEIGHTS", form, 1);
		struct llama_model *m;
		struct llama_run *run[8];
		char err[LLAMA_ERR_MAX];
		const double base = reset_peak() == 0 ? status_bytes("VmRSS") : -1;
		if (base > 0 && runs <= 8 && llama_load(path, &m, err) == 0) {
			c.model = (double)llama_model_bytes(m);
			c.predicted = c.model + runs * (double)llama_run_bytes_len(m, n);
			int made = 0;
			while (made < runs && (run[made] = llama_run_new_len(m, n)) != NULL)
				made++;
			int tokens[8], rc = made == runs ? 0 : -1;
			for (int pos = 0; rc == 0 && pos < n; pos++) {
				for (int i = 0; i < runs; i++)
					tokens[i] =
					        (pos * 7 + i) % llama_model_config(m)->vocab_size;
				rc = llama_step_batch(m, run, runs, tokens, pos);
			}
			c.grown = status_bytes("VmHWM") - base;
			c.ok = rc == 0;
			for (int i = 0; i < made; i++)
				llama_run_free(run[i]);
			llama_free(m);
		} else if (base > 0) {
			fprintf(stderr, "%s: %s\n", path, err);
		}
		if (write(fd[1], &c, sizeof c) != (ssize_t)sizeof c)
			_exit(1);
		_exit(0);
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &r, sizeof r) != (ssize_t)sizeof r)
		r.ok = 0;
	close(fd[0]);
	int status;
	if (pid > 0)
		waitpid(pid, &status, 0);
	return r;
}

static char dir[] = "/tmp/h2o-model-memory-XXXXXX";

/* Under AddressSanitizer or ThreadSanitizer the allocator's shadow memory,
 * red zones and quarantine grow the resident memory: the peak measures the
 * sanitizer, not the model, so there the bounds are not checked (the runs
 * still must succeed, and the figures print). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#ifndef UNDER_SANITIZER
#define UNDER_SANITIZER 0
#endif

static void check(const char *what, const char *path, const char *form, int runs, int n)
{
	const struct measure r = measure(path, form, runs, n);
	const double mib = 1024.0 * 1024.0;
	print_message("%-34s model %7.2f MiB, predicted %7.2f MiB, peak growth %7.2f MiB\n", what,
	              r.model / mib, r.predicted / mib, r.grown / mib);
	assert_true(r.ok);
	if (UNDER_SANITIZER)
		return;
	if (!(r.grown <= r.predicted))
		fail_msg("%s: the peak grew by %.0f bytes, more than the %.0f predicted", what,
		         r.grown, r.predicted);
	if (!(r.predicted <= SLACK_RATIO * r.grown + SLACK_BYTES))
		fail_msg("%s: %.0f bytes predicted, more than %.2f x the %.0f measured + %.0f",
		         what, r.predicted, SLACK_RATIO, r.grown, SLACK_BYTES);
}

static const struct shape gguf_shape = {384, 4, 6, 2, 1024, 512, 512};

static void test_llama2c(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s/m.bin", dir);
	/* Weights first, then a model whose runs outweigh its weights. */
	const struct shape wide = {384, 4, 6, 6, 1024, 512, 256};
	assert_int_equal(write_llama2c(path, &wide), 0);
	check("llama2.c float32, 2 runs x 256", path, NULL, 2, 256);
	const struct shape runs = {64, 8, 8, 8, 128, 512, 1024};
	assert_int_equal(write_llama2c(path, &runs), 0);
	check("llama2.c float32, 3 runs x 1024", path, NULL, 3, 1024);
	unlink(path);
}

static void gguf_forms(const char *name, int type)
{
	char path[256], what[64];
	snprintf(path, sizeof path, "%s/%s.gguf", dir, name);
	assert_int_equal(write_gguf(path, &gguf_shape, type), 0);
	static const char *const forms[] = {"compact", "unpacked", "mapped"};
	for (int f = 0; f < 3; f++) {
		if (type == T_F32 && f > 0)
			break; /* float rows are packed once in every form */
		snprintf(what, sizeof what, "GGUF %s %s, 2 runs x 128", name, forms[f]);
		check(what, path, forms[f], 2, 128);
	}
	unlink(path);
}

static void test_gguf_f32(void **state)
{
	(void)state;
	gguf_forms("f32", T_F32);
}

static void test_gguf_f16(void **state)
{
	(void)state;
	gguf_forms("f16", T_F16);
}

static void test_gguf_q8_0(void **state)
{
	(void)state;
	gguf_forms("q8_0", T_Q8_0);
}

/* The figure before loading is the figure after: a limit one byte short
 * of what the model holds refuses it, the figure itself loads it. */
static void test_limit_is_the_figure(void **state)
{
	(void)state;
	char path[256], err[LLAMA_ERR_MAX];
	snprintf(path, sizeof path, "%s/q.gguf", dir);
	assert_int_equal(write_gguf(path, &gguf_shape, T_Q8_0), 0);
	static const char *const forms[] = {"compact", "unpacked", "mapped"};
	for (int f = 0; f < 3; f++) {
		setenv("H2O_WEIGHTS", forms[f], 1);
		struct llama_model *m;
		assert_int_equal(llama_load(path, &m, err), 0);
		const double held = (double)llama_model_bytes(m);
		llama_free(m);
		struct llama_limit short_of = {.max_bytes = held - 1};
		assert_int_equal(llama_load_within(path, &short_of, &m, err), LLAMA_TOO_LARGE);
		assert_true(short_of.needed == held);
		struct llama_limit at = {.max_bytes = held};
		assert_int_equal(llama_load_within(path, &at, &m, err), 0);
		llama_free(m);
	}
	unsetenv("H2O_WEIGHTS");
	unlink(path);
}

int main(int argc, char **argv)
{
	if ((argc == 7 || argc == 10) && strcmp(argv[1], "--write") == 0) {
		const int type = strcmp(argv[3], "f32") == 0   ? T_F32
		                 : strcmp(argv[3], "f16") == 0 ? T_F16
		                                               : T_Q8_0;
		const int dim = atoi(argv[4]);
		const struct shape s = {dim,
		                        atoi(argv[5]),
		                        argc == 10 ? atoi(argv[7]) : dim / 64,
		                        argc == 10 ? atoi(argv[8]) : dim / 64,
		                        atoi(argv[6]),
		                        argc == 10 ? atoi(argv[9]) : 512,
		                        4096};
		return write_gguf(argv[2], &s, type) == 0 ? 0 : 1;
	}
	if (argc == 6 && strcmp(argv[1], "--measure") == 0) {
		const struct measure r = measure(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
		const double mb = 1e6;
		printf("%s (%s, %s runs x %s): model %.1f MB, predicted %.1f MB, peak growth %.1f "
		       "MB\n",
		       argv[2], argv[3], argv[4], argv[5], r.model / mb, r.predicted / mb,
		       r.grown / mb);
		return r.ok ? 0 : 1;
	}
	if (argc == 4 && strcmp(argv[1], "--predict") == 0) {
		struct llama_model *m;
		char err[LLAMA_ERR_MAX];
		if (llama_load(argv[2], &m, err) != 0) {
			fprintf(stderr, "%s: %s\n", argv[2], err);
			return 1;
		}
		const int n = atoi(argv[3]);
		const double mb = 1e6, model = (double)llama_model_bytes(m);
		const double runs = drop_predict_memory(m, n, 0, false, ENGINE_ALL_POLICIES);
		printf("%s over %d positions: model %.1f MB, a run %.1f MB, the %d policies' runs "
		       "%.1f MB, together %.1f MB\n",
		       argv[2], n, model / mb, (double)llama_run_bytes_len(m, n) / mb, POLICY_COUNT,
		       runs / mb, (model + runs) / mb);
		llama_free(m);
		return 0;
	}
	if (reset_peak() != 0) {
		printf("cannot reset the peak resident memory (/proc/self/clear_refs): skipped\n");
		return 77;
	}
	if (mkdtemp(dir) == NULL)
		return 1;
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_llama2c),
	        cmocka_unit_test(test_gguf_f32),
	        cmocka_unit_test(test_gguf_f16),
	        cmocka_unit_test(test_gguf_q8_0),
	        cmocka_unit_test(test_limit_is_the_figure),
	};
	const int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
