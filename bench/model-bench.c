/*
 * model-bench: how many forward passes per second the model stage runs
 * (src/model/), alone and in batches of runs, beside llama2.c's run.c.
 *
 * A forward pass is one token of one run; passes per second are tokens x
 * runs / time. Cases: stories260K (models/) and a checkpoint of the 15M
 * shape (dim 288, 6 layers, 6 heads, 6 kv heads, hidden 768, vocab 32000,
 * seq 256) whose seeded random weights the bench writes to a temporary
 * file, for P = 1 and P = 5 runs that never evict (run.c's work), and
 * P = 5 runs that keep a window of 64 positions. llama_step (the plain,
 * one-thread path) runs too, once per model.
 *
 * With --peer PATH, run.c built from llama2.c (gcc -O3 -march=native -o
 * /tmp/runc run.c -lm) generates greedily from the same 15M checkpoint
 * (with a tokenizer of 32000 dummy pieces, written beside it) and its own
 * "achieved tok/s" is printed with the ratio. A memory read probe says how
 * close the batch comes to the weights' bandwidth bound. Every figure is
 * the best of REPS runs (3 unless --reps says): other work on the machine
 * only ever slows a run down.
 *
 * With --gguf, two GGUF files of SmolLM2-135M's shape (random weights,
 * matrices in Q8_0 and in F16) are written and run the same way, their
 * weights in the compact forms (the default), and with --all-forms also
 * unpacked to float32 and read from the mapping (H2O_WEIGHTS); with
 * --llama-cpp DIR (the folder of a llama.cpp build's binaries) llama-bench
 * (one sequence) and llama-batched-bench (five at once) run on the same
 * files, two threads, interleaved with the compact cases, and the ratios
 * are printed. --only-gguf leaves out the other models.
 *
 * With --scene H2O_TUI (up to four, e.g. two builds to compare),
 * `H2O_TUI --report` of a model scene on the 15M checkpoint (205 tokens,
 * every policy run on the model) is timed whole process against each
 * --scene-peer RUN_C (up to four: llama2.c's run.c generating 205 tokens
 * from the same checkpoint), all interleaved, and the ratios printed in
 * one table.
 *
 * Usage: model-bench [--peer PATH] [--gguf] [--all-forms] [--only-gguf]
 *                    [--llama-cpp DIR] [--scene H2O_TUI]... [--scene-peer RUN_C]...
 *                    [--tokens N] [--reps N] [SOURCE_ROOT]
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "h2o/llama.h"

#include "gguf_build.h" /* tests/model/: gb_half */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [-a, a). */
static float rng_float(uint64_t *s, float a)
{
	return a * ((float)(rng_next(s) >> 40) / 8388608.0f - 1.0f);
}

static int put_floats(FILE *f, uint64_t *s, size_t n, float a, float fixed)
{
	float buf[4096];
	while (n > 0) {
		const size_t k = n < 4096 ? n : 4096;
		for (size_t i = 0; i < k; i++)
			buf[i] = a > 0 ? rng_float(s, a) : fixed;
		if (fwrite(buf, sizeof(float), k, f) != k)
			return -1;
		n -= k;
	}
	return 0;
}

/* The 15M shape with random weights; the embedding (the classifier) row of
 * BOS is zero so that greedy generation never stops at it. */
static int write_15m(const char *path)
{
	const int32_t h[7] = {288, 768, 6, 6, 6, 32000, 256};
	const size_t D = 288, H = 768, L = 6, V = 32000, S = 256, hs = 48;
	const float a = 1.0f / 17.0f; /* about 1 / sqrt(dim) */
	uint64_t s = 0x9E3779B97F4A7C15ULL;
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	int rc = fwrite(h, sizeof h, 1, f) == 1 ? 0 : -1;
	rc |= put_floats(f, &s, D, a, 0);             /* token 0 */
	rc |= put_floats(f, &s, D, 0, 0);             /* token 1, BOS */
	rc |= put_floats(f, &s, (V - 2) * D, a, 0);   /* the others */
	rc |= put_floats(f, &s, L * D, 0, 1);         /* rms_att */
	rc |= put_floats(f, &s, L * D * D * 4, a, 0); /* wq wk wv wo */
	rc |= put_floats(f, &s, L * D, 0, 1);         /* rms_ffn */
	rc |= put_floats(f, &s, L * H * D * 3, a, 0); /* w1 w2 w3 */
	rc |= put_floats(f, &s, D, 0, 1);             /* rms_final */
	rc |= put_floats(f, &s, S * hs, 0, 0);        /* RoPE tables */
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* A tokenizer.bin of 32000 pieces "t0", "t1", ... for run.c, with the
 * byte pieces "<0x00>" ... "<0xFF>" at 3 ... 258 as llama2.c's, so that
 * h2o-tui encodes any text with it. */
static int write_tokenizer(const char *path)
{
	FILE *f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	const int32_t max_len = 8;
	int rc = fwrite(&max_len, 4, 1, f) == 1 ? 0 : -1;
	for (int i = 0; i < 32000 && rc == 0; i++) {
		char piece[16];
		const float score = 0;
		const int32_t n = i >= 3 && i < 259
		                          ? snprintf(piece, sizeof piece, "<0x%02X>", i - 3)
		                          : snprintf(piece, sizeof piece, "t%d", i);
		if (fwrite(&score, 4, 1, f) != 1 || fwrite(&n, 4, 1, f) != 1 ||
		    fwrite(piece, 1, (size_t)n, f) != (size_t)n)
			rc = -1;
	}
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* ---- a GGUF file of SmolLM2-135M's shape ------------------------------------
 *
 * Width 576, 30 layers, 9 query heads on 3 key/value heads of 64, hidden
 * 1536, vocabulary 49152, tied output, RoPE base 100000: seeded random
 * weights, matrices in one type (F16 or Q8_0; norms F32, as llama.cpp's
 * converters write them), no vocabulary ("no_vocab", which llama.cpp
 * accepts for benchmarks). Written as llama.cpp writes GGUF version 3,
 * so that llama-bench and llama-batched-bench read the very same file. */

enum { G_D = 576, G_H = 1536, G_L = 30, G_Q = 9, G_KV = 3, G_V = 49152, G_HS = 64 };
enum { G_F32 = 0, G_F16 = 1, G_Q8_0 = 8 };

struct gguf_out {
	FILE *f;
	int rc;
};

static void g_bytes(struct gguf_out *o, const void *p, size_t n)
{
	if (o->rc == 0 && fwrite(p, 1, n, o->f) != n)
		o->rc = -1;
}

static void g_u32(struct gguf_out *o, uint32_t v)
{
	g_bytes(o, &v, 4); /* little-endian machines only, as this bench */
}

static void g_u64(struct gguf_out *o, uint64_t v)
{
	g_bytes(o, &v, 8);
}

static void g_str(struct gguf_out *o, const char *s)
{
	g_u64(o, strlen(s));
	g_bytes(o, s, strlen(s));
}

static void g_kv_u32(struct gguf_out *o, const char *k, uint32_t v)
{
	g_str(o, k);
	g_u32(o, 4);
	g_u32(o, v);
}

static void g_kv_f32(struct gguf_out *o, const char *k, float v)
{
	g_str(o, k);
	g_u32(o, 6);
	g_bytes(o, &v, 4);
}

static void g_kv_str(struct gguf_out *o, const char *k, const char *v)
{
	g_str(o, k);
	g_u32(o, 8);
	g_str(o, v);
}

struct g_tensor {
	char name[48];
	uint64_t ne0, ne1; /* ne1 1: a vector */
	uint32_t type;
};

static uint64_t g_tensor_bytes(const struct g_tensor *t)
{
	const uint64_t n = t->ne0 * t->ne1;
	return t->type == G_F32 ? 4 * n : t->type == G_F16 ? 2 * n : n / 32 * 34;
}

static void g_data(struct gguf_out *o, const struct g_tensor *t, uint64_t *s)
{
	const float a = 1.0f / 24.0f; /* about 1 / sqrt(width) */
	unsigned char buf[34 * 64];
	if (t->type == G_F32) {
		for (uint64_t i = 0; i < t->ne0 * t->ne1; i++) {
			const float one = 1.0f;
			g_bytes(o, &one, 4);
		}
		return;
	}
	if (t->type == G_F16) {
		for (uint64_t i = 0; i < t->ne0 * t->ne1; i++) {
			const uint16_t h = gb_half(rng_float(s, a));
			g_bytes(o, &h, 2);
		}
		return;
	}
	for (uint64_t b = 0; b < t->ne0 * t->ne1 / 32;) {
		size_t k = 0;
		for (; k < 64 && b < t->ne0 * t->ne1 / 32; k++, b++) {
			const uint16_t d = gb_half(a / 127.0f);
			memcpy(buf + 34 * k, &d, 2);
			for (int j = 0; j < 32; j++)
				buf[34 * k + 2 + (size_t)j] =
				        (unsigned char)(int8_t)(rng_next(s) % 255 - 127);
		}
		g_bytes(o, buf, 34 * k);
	}
}

static int write_135m(const char *path, uint32_t type)
{
	struct g_tensor t[2 + 9 * G_L];
	int n = 0;
	t[n++] = (struct g_tensor){"token_embd.weight", G_D, G_V, type};
	t[n++] = (struct g_tensor){"output_norm.weight", G_D, 1, G_F32};
	for (int l = 0; l < G_L; l++) {
		const struct {
			const char *name;
			uint64_t ne0, ne1;
		} m[9] = {{"attn_norm", G_D, 1},
		          {"attn_q", G_D, G_Q * G_HS},
		          {"attn_k", G_D, G_KV * G_HS},
		          {"attn_v", G_D, G_KV * G_HS},
		          {"attn_output", G_Q * G_HS, G_D},
		          {"ffn_norm", G_D, 1},
		          {"ffn_gate", G_D, G_H},
		          {"ffn_up", G_D, G_H},
		          {"ffn_down", G_H, G_D}};
		for (int k = 0; k < 9; k++) {
			snprintf(t[n].name, sizeof t[n].name, "blk.%d.%s.weight", l, m[k].name);
			t[n].ne0 = m[k].ne0;
			t[n].ne1 = m[k].ne1;
			t[n].type = m[k].ne1 == 1 ? G_F32 : type;
			n++;
		}
	}
	struct gguf_out o = {fopen(path, "wb"), 0};
	if (o.f == NULL)
		return -1;
	g_bytes(&o, "GGUF", 4);
	g_u32(&o, 3);
	g_u64(&o, (uint64_t)n);
	g_u64(&o, 11);
	g_kv_str(&o, "general.architecture", "llama");
	g_kv_u32(&o, "llama.embedding_length", G_D);
	g_kv_u32(&o, "llama.feed_forward_length", G_H);
	g_kv_u32(&o, "llama.block_count", G_L);
	g_kv_u32(&o, "llama.attention.head_count", G_Q);
	g_kv_u32(&o, "llama.attention.head_count_kv", G_KV);
	g_kv_u32(&o, "llama.context_length", 2048);
	g_kv_u32(&o, "llama.vocab_size", G_V);
	g_kv_f32(&o, "llama.rope.freq_base", 100000.0f);
	g_kv_f32(&o, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
	g_kv_str(&o, "tokenizer.ggml.model", "no_vocab");
	uint64_t off = 0;
	for (int i = 0; i < n; i++) {
		g_str(&o, t[i].name);
		g_u32(&o, t[i].ne1 == 1 ? 1 : 2);
		g_u64(&o, t[i].ne0);
		if (t[i].ne1 != 1)
			g_u64(&o, t[i].ne1);
		g_u32(&o, t[i].type);
		g_u64(&o, off);
		off += (g_tensor_bytes(&t[i]) + 31) / 32 * 32;
	}
	const long here = ftell(o.f);
	static const unsigned char zeros[32];
	g_bytes(&o, zeros, (size_t)((32 - here % 32) % 32));
	uint64_t s = 0x9E3779B97F4A7C15ULL;
	for (int i = 0; i < n; i++) {
		g_data(&o, &t[i], &s);
		g_bytes(&o, zeros, (size_t)((32 - g_tensor_bytes(&t[i]) % 32) % 32));
	}
	if (fclose(o.f) != 0)
		o.rc = -1;
	return o.rc;
}

/* P runs over TOKENS positions of a fixed token pattern; WINDOW > 0 keeps
 * that many newest positions in every cache. Returns passes per second. */
static double bench(const struct llama_model *m, int P, int tokens, int window, int plain)
{
	const struct llama_config *c = llama_model_config(m);
	struct llama_run *runs[8];
	int tok[8];
	unsigned char *keep = malloc((size_t)c->seq_len);

	if (keep == NULL)
		return 0;
	for (int i = 0; i < P; i++) {
		runs[i] = llama_run_new(m);
		if (runs[i] == NULL) {
			fprintf(stderr, "model-bench: out of memory\n");
			exit(1);
		}
	}
	const double t0 = now();
	for (int p = 0; p < tokens; p++) {
		for (int i = 0; i < P; i++)
			tok[i] = (p * 7 + i * 13 + 3) % c->vocab_size;
		if (plain) {
			for (int i = 0; i < P; i++)
				llama_step(m, runs[i], tok[i], p);
		} else if (llama_step_batch(m, runs, P, tok, p) != 0) {
			fprintf(stderr, "model-bench: a step failed\n");
			exit(1);
		}
		if (window <= 0)
			continue;
		for (int i = 0; i < P; i++)
			for (int l = 0; l < c->n_layers; l++)
				for (int g = 0; g < c->n_kv_heads; g++) {
					const int n = llama_run_len(runs[i], l, g);
					const int *pos = llama_run_positions(runs[i], l, g);
					for (int s = 0; s < n; s++)
						keep[s] = p - pos[s] < window;
					llama_run_keep(runs[i], l, g, keep);
				}
	}
	const double dt = now() - t0;
	for (int i = 0; i < P; i++)
		llama_run_free(runs[i]);
	free(keep);
	return (double)tokens * P / dt;
}

/* ---- the memory bound ------------------------------------------------------ */

struct probe {
	const uint64_t *a;
	size_t n;
	uint64_t sum;
};

static void *probe_part(void *arg)
{
	struct probe *p = arg;
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	for (size_t i = 0; i + 4 <= p->n; i += 4) {
		s0 += p->a[i];
		s1 += p->a[i + 1];
		s2 += p->a[i + 2];
		s3 += p->a[i + 3];
	}
	p->sum = s0 + s1 + s2 + s3;
	return NULL;
}

/* Bytes per second two threads read from a buffer far larger than the
 * caches (0 when it cannot be measured). */
static double read_bandwidth(void)
{
	const size_t n = (size_t)256 << 17; /* 256 MiB of uint64 */
	uint64_t *a = malloc(n * sizeof *a);
	if (a == NULL)
		return 0;
	for (size_t i = 0; i < n; i++)
		a[i] = i;
	double best = 0;
	for (int rep = 0; rep < 3; rep++) {
		struct probe p[2] = {{a, n / 2, 0}, {a + n / 2, n / 2, 0}};
		pthread_t th;
		const double t0 = now();
		if (pthread_create(&th, NULL, probe_part, &p[1]) != 0) {
			free(a);
			return 0;
		}
		probe_part(&p[0]);
		pthread_join(th, NULL);
		const double bw = (double)n * sizeof *a / (now() - t0);
		if (p[0].sum + p[1].sum == 0)
			best = -1; /* keep the sums alive */
		if (bw > best)
			best = bw;
	}
	free(a);
	return best;
}

/* run.c's own "achieved tok/s" on CKPT, or 0. */
static double run_peer_once(const char *peer, const char *ckpt, const char *tok, int tokens)
{
	char cmd[3 * 4200];
	if (strchr(peer, '\'') || strchr(ckpt, '\'') || strchr(tok, '\''))
		return 0;
	snprintf(cmd, sizeof cmd, "'%s' '%s' -z '%s' -n %d -t 0 -s 1 2>&1 >/dev/null", peer, ckpt,
	         tok, tokens);
	FILE *p = popen(cmd, "r");
	if (p == NULL)
		return 0;
	char line[512];
	double tps = 0;
	while (fgets(line, sizeof line, p) != NULL)
		if (sscanf(line, "achieved tok/s: %lf", &tps) == 1)
			break;
	pclose(p);
	return tps;
}

/* Seconds the shell command CMD takes, whole process; < 0 when it fails. */
static double timed(const char *cmd)
{
	const double t0 = now();
	const int rc = system(cmd);
	const double dt = now() - t0;
	return rc == 0 ? dt : -1;
}

/* The CPU seconds (user and system) of the children waited for so far. */
static double children_cpu(void)
{
	struct rusage u;
	if (getrusage(RUSAGE_CHILDREN, &u) != 0)
		return 0;
	return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
	       (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

/* timed, and into *CPU the CPU seconds of CMD's processes. */
static double timed_cpu(const char *cmd, double *cpu)
{
	const double c0 = children_cpu();
	const double t = timed(cmd);
	*cpu = children_cpu() - c0;
	return t;
}

/* The runs on the model a report of SCENE by H2O makes: the scene's
 * full-cache trace and one per row of the model's table (every policy
 * run); 0 when the report fails. Untimed: it also brings the files into
 * the page cache. */
static int scene_runs(const char *h2o, const char *scene)
{
	char cmd[9000], line[1024];
	snprintf(cmd, sizeof cmd, "'%s' --report '%s' 2>/dev/null", h2o, scene);
	FILE *p = popen(cmd, "r");
	if (p == NULL)
		return 0;
	int rows = -1;
	while (fgets(line, sizeof line, p) != NULL) {
		if (strncmp(line, "policy ", 7) == 0 && strstr(line, "ppl all") != NULL)
			rows = 0;
		else if (rows >= 0 && (line[0] == '\n' || strncmp(line, "not matched", 11) == 0))
			break;
		else if (rows >= 0)
			rows++;
	}
	const int rc = pclose(p);
	return rc == 0 && rows > 0 ? rows + 1 : 0;
}

/*
 * The model end to end (issue 26): `H2O --report` of a model scene on the
 * 15M checkpoint CKPT (text of 204 bytes: 205 tokens with BOS, heavy 16,
 * recent 16, prompt 64, every policy run on the model), for each build of
 * H2OS, against each run.c of PEERS generating 205 tokens from the same
 * checkpoint, whole process against whole process, each the best of REPS,
 * all interleaved in one run. A report's forward passes are 205 tokens
 * times its runs on the model (the trace and one per policy, however many
 * of their steps it shares); run.c's are its 205 tokens.
 */
static void scene_case(const char *const *h2os, int nh2o, const char *const *peers, int npeers,
                       const char *dir, const char *ckpt, const char *tok, int reps)
{
	char scene[4200], cmd[13000];
	snprintf(scene, sizeof scene, "%s/scene.json", dir);
	FILE *f = fopen(scene, "w");
	if (f == NULL || strchr(dir, '\'')) {
		if (f != NULL)
			fclose(f);
		fprintf(stderr, "model-bench: cannot write %s\n", scene);
		return;
	}
	char text[205];
	for (int i = 0; i < 204; i++)
		text[i] = i % 6 == 5 ? ' ' : (char)('a' + (i * 7) % 19);
	text[204] = '\0';
	fprintf(f,
	        "{\"title\": \"bench\", \"heavy\": 16, \"recent\": 16, \"prompt\": 64, "
	        "\"model\": \"random15M.bin\", \"tokenizer\": \"tokenizer.bin\", \"text\": "
	        "\"%s\"}\n",
	        text);
	fclose(f);
	double best[4] = {0}, pbest[4] = {0}, cpu[4] = {0}, pcpu[4] = {0};
	int runs[4] = {0};
	for (int k = 0; k < nh2o; k++)
		runs[k] = strchr(h2os[k], '\'') ? 0 : scene_runs(h2os[k], scene);
	for (int rep = 0; rep < reps; rep++) {
		for (int k = 0; k < nh2o; k++) {
			if (runs[k] == 0)
				continue;
			snprintf(cmd, sizeof cmd, "'%s' --report '%s' >/dev/null", h2os[k], scene);
			double c;
			const double t = timed_cpu(cmd, &c);
			if (t > 0 && (best[k] == 0 || t < best[k]))
				best[k] = t;
			if (t > 0 && (cpu[k] == 0 || c < cpu[k]))
				cpu[k] = c;
		}
		for (int k = 0; k < npeers; k++) {
			if (strchr(peers[k], '\''))
				continue;
			snprintf(cmd, sizeof cmd,
			         "'%s' '%s' -z '%s' -n 205 -t 0 -s 1 >/dev/null 2>&1", peers[k],
			         ckpt, tok);
			double c;
			const double p = timed_cpu(cmd, &c);
			if (p > 0 && (pbest[k] == 0 || p < pbest[k]))
				pbest[k] = p;
			if (p > 0 && (pcpu[k] == 0 || c < pcpu[k]))
				pcpu[k] = c;
		}
	}
	printf("\nmodel scene end to end: random 15M shape, 205 tokens, --report (every policy "
	       "on the model), whole process, best of %d, interleaved\n",
	       reps);
	printf("| program | runs | seconds | CPU seconds | tokens/s | forward passes/s |");
	for (int j = 0; j < npeers; j++)
		printf(" vs peer %d |", j + 1);
	printf("\n|---|---:|---:|---:|---:|---:|");
	for (int j = 0; j < npeers; j++)
		printf("---:|");
	printf("\n");
	for (int k = 0; k < nh2o; k++) {
		if (best[k] <= 0) {
			printf("| %s --report | failed | | | | |\n", h2os[k]);
			continue;
		}
		printf("| %s --report | %d | %.3f | %.3f | %.1f | %.0f |", h2os[k], runs[k],
		       best[k], cpu[k], 205 / best[k], 205.0 * runs[k] / best[k]);
		for (int j = 0; j < npeers; j++)
			if (pbest[j] > 0)
				printf(" %.2fx |", pbest[j] * runs[k] / best[k]);
			else
				printf(" - |");
		printf("\n");
	}
	for (int j = 0; j < npeers; j++) {
		if (pbest[j] <= 0)
			continue;
		printf("| peer %d: %s -n 205 | 1 | %.3f | %.3f | %.1f | %.0f |", j + 1, peers[j],
		       pbest[j], pcpu[j], 205 / pbest[j], 205 / pbest[j]);
		for (int i = 0; i < npeers; i++)
			printf(" %s |", i == j ? "1x" : "");
		printf("\n");
	}
	printf("(vs peer: a report's forward passes per second over the peer's, by the wall "
	       "clock; the report does runs times the peer's work. CPU seconds: the least of "
	       "the reps, every thread's, spinning included; on a loaded machine the wall "
	       "clock includes waiting for a core)\n");
	unlink(scene);
}

/* The first number after KEY ("avg_ts" or "speed_tg") in the output of
 * CMD, a llama.cpp bench writing CSV or JSON lines; 0 when there is none. */
static double llama_cpp_figure(const char *cmd, const char *key)
{
	FILE *p = popen(cmd, "r");
	if (p == NULL)
		return 0;
	char line[4096];
	double v = 0;
	while (fgets(line, sizeof line, p) != NULL) {
		const char *at = strstr(line, key);
		if (at != NULL && v == 0)
			sscanf(at + strlen(key) + 2, "%lf", &v); /* past `": ` or `",` */
	}
	pclose(p);
	return v;
}

/* llama.cpp on GGUF file FILE from its binaries in DIR: one sequence
 * generating TOKENS (llama-bench -n), and P sequences at once
 * (llama-batched-bench -npl P), tokens per second, two threads. */
static void llama_cpp_peer(const char *dir, const char *file, int tokens, int P, double *one,
                           double *batched)
{
	char cmd[9000];
	*one = *batched = 0;
	if (strchr(dir, '\'') || strchr(file, '\''))
		return;
	snprintf(cmd, sizeof cmd,
	         "'%s/llama-bench' -m '%s' -p 0 -n %d -t 2 -r 1 -o jsonl 2>/dev/null", dir, file,
	         tokens);
	*one = llama_cpp_figure(cmd, "\"avg_ts\"");
	snprintf(cmd, sizeof cmd,
	         "'%s/llama-batched-bench' -m '%s' -c %d -b 512 -ub 512 -npp 1 -ntg %d -npl %d "
	         "-t 2 -tb 2 --output-format jsonl 2>/dev/null",
	         dir, file, 2 * P * (tokens + 2), tokens, P);
	*batched = llama_cpp_figure(cmd, "\"speed_tg\"");
}

/* What run.c is given, when it runs; or llama.cpp's binaries' folder
 * LLAMA_CPP and the GGUF file it runs. */
struct peer {
	const char *path, *ckpt, *tok;
	const char *llama_cpp, *gguf;
};

/*
 * The cases on M, REPS times over: each repetition runs run.c once (PEER,
 * when not NULL) and then every case once, so that both meet the same
 * load; each figure is its best repetition. BW > 0: the read bandwidth.
 */
static void report(const char *name, const struct llama_model *m, int tokens, int reps, double bw,
                   const struct peer *peer)
{
	const struct llama_config *c = llama_model_config(m);
	const double weights = (double)c->n_layers * c->dim *
	                               (2.0 * c->dim + 2.0 * c->kv_dim + 3.0 * c->hidden_dim) +
	                       (double)c->vocab_size * c->dim;
	const struct {
		const char *what;
		int P, window, plain;
	} cases[] = {
	        {"llama_step, 1 run", 1, 0, 1},
	        {"batch, P = 1", 1, 0, 0},
	        {"batch, P = 5", 5, 0, 0},
	        {"batch, P = 5, window 64", 5, 64, 0},
	};
	enum { NCASES = sizeof cases / sizeof cases[0] };
	double best[NCASES] = {0}, peer_tps = 0, lc_one = 0, lc_five = 0;

	for (int rep = 0; rep < reps; rep++) {
		if (peer != NULL && peer->path != NULL) {
			const double t = run_peer_once(peer->path, peer->ckpt, peer->tok, tokens);
			peer_tps = t > peer_tps ? t : peer_tps;
		}
		if (peer != NULL && peer->llama_cpp != NULL) {
			double a, b;
			llama_cpp_peer(peer->llama_cpp, peer->gguf, tokens, 5, &a, &b);
			lc_one = a > lc_one ? a : lc_one;
			lc_five = b > lc_five ? b : lc_five;
		}
		for (int k = 0; k < NCASES; k++) {
			const int n = cases[k].plain && weights > 1e7 ? tokens / 4 : tokens;
			const double t = bench(m, cases[k].P, n, cases[k].window, cases[k].plain);
			best[k] = t > best[k] ? t : best[k];
		}
	}

	printf("\n%s: %.2fM weights (%.1f MB as float32), %d tokens from position 0, best of %d\n",
	       name, weights / 1e6, weights * 4 / 1e6, tokens, reps);
	if (peer != NULL && peer_tps > 0)
		printf("  run.c (%s), greedy from BOS: %.1f tok/s\n", peer->path, peer_tps);
	else if (peer != NULL && peer->path != NULL)
		printf("  run.c (%s): no \"achieved tok/s\" line\n", peer->path);
	if (peer != NULL && peer->llama_cpp != NULL)
		printf("  llama.cpp on the same file, two threads: llama-bench one sequence %.1f "
		       "tok/s, llama-batched-bench 5 sequences %.1f tok/s\n",
		       lc_one, lc_five);
	printf("  %-26s %12s %10s %12s %10s\n", "case", "passes/s", "ms/step", "weights GB/s",
	       "GFLOP/s");
	for (int k = 0; k < NCASES; k++) {
		const double pps = best[k], steps = pps / cases[k].P;
		/* A batch reads each weight once a step; llama_step once a run. */
		const double reads = cases[k].plain ? pps : steps;
		printf("  %-26s %12.0f %10.3f %12.2f %10.2f", cases[k].what, pps, 1e3 / steps,
		       reads * weights * 4 / 1e9, pps * weights * 2 / 1e9);
		if (peer_tps > 0)
			printf("   %.1fx run.c", pps / peer_tps);
		const double lc = cases[k].plain || cases[k].window ? 0
		                  : cases[k].P == 1                 ? lc_one
		                                                    : lc_five;
		if (lc > 0)
			printf("   %.2fx llama.cpp", pps / lc);
		printf("\n");
	}
	if (bw > 0)
		printf("  memory read bandwidth (two threads, 256 MiB): %.1f GB/s: a batch step of "
		       "this model takes at least %.3f ms to read its weights\n",
		       bw / 1e9, weights * 4 / bw * 1e3);
}

/* The GGUF cases: the 135M shape in TYPE (NAME), and llama.cpp beside
 * it when LLAMA_CPP names the folder of its binaries. */
static int gguf_case(const char *dir, const char *name, uint32_t type, int tokens, int reps,
                     double bw, const char *llama_cpp, int all_forms)
{
	char path[4200], err[LLAMA_ERR_MAX], title[128];
	struct llama_model *m;
	snprintf(path, sizeof path, "%s/random135M-%s.gguf", dir, name);
	if (write_135m(path, type) != 0) {
		fprintf(stderr, "model-bench: cannot write %s\n", path);
		unlink(path);
		return 1;
	}
	/* The compact forms (the default), unpacked to float32, and read from
	 * the mapping (what a model too large for memory does); llama.cpp
	 * runs beside the first, each repetition meeting the same load. */
	static const char *const forms[3] = {"compact", "unpacked", "mapped"};
	static const char *const said[3] = {"packed compact (the default)", "unpacked to float32",
	                                    "read from the mapping"};
	for (int f = 0; f < (all_forms ? 3 : 1); f++) {
		setenv("H2O_WEIGHTS", forms[f], 1);
		const int rc = llama_load(path, &m, err);
		unsetenv("H2O_WEIGHTS");
		if (rc != 0) {
			fprintf(stderr, "%s: %s\n", path, err);
			unlink(path);
			return 1;
		}
		snprintf(title, sizeof title, "random 135M shape, GGUF %s (weights %s)", name,
		         said[f]);
		const struct peer p = {NULL, NULL, NULL, llama_cpp, path};
		report(title, m, tokens, reps, bw, f == 0 && llama_cpp != NULL ? &p : NULL);
		llama_free(m);
	}
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	const char *peer = NULL, *root = ".", *llama_cpp = NULL;
	int tokens = 256, reps = 3, gguf = 0, all_forms = 0, only_gguf = 0, npeers = 0;
	const char *h2o = NULL, *h2os[4], *peers[4];
	int nh2o = 0;
	char err[LLAMA_ERR_MAX];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--peer") == 0 && i + 1 < argc)
			peer = argv[++i];
		else if (strcmp(argv[i], "--tokens") == 0 && i + 1 < argc)
			tokens = atoi(argv[++i]);
		else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (strcmp(argv[i], "--gguf") == 0)
			gguf = 1;
		else if (strcmp(argv[i], "--scene") == 0 && i + 1 < argc && nh2o < 4)
			h2o = h2os[nh2o++] = argv[++i];
		else if (strcmp(argv[i], "--scene-peer") == 0 && i + 1 < argc && npeers < 4)
			peers[npeers++] = argv[++i];
		else if (strcmp(argv[i], "--all-forms") == 0)
			all_forms = 1, gguf = 1;
		else if (strcmp(argv[i], "--only-gguf") == 0)
			only_gguf = 1, gguf = 1;
		else if (strcmp(argv[i], "--llama-cpp") == 0 && i + 1 < argc)
			llama_cpp = argv[++i], gguf = 1;
		else if (argv[i][0] != '-')
			root = argv[i];
		else {
			fprintf(stderr,
			        "usage: model-bench [--peer PATH] [--gguf] [--all-forms] "
			        "[--only-gguf] "
			        "[--llama-cpp DIR] [--scene H2O_TUI]... [--scene-peer RUN_C]... "
			        "[--tokens N] [--reps N] [SOURCE_ROOT]\n");
			return 2;
		}
	}
	if (tokens < 1 || tokens > 256 || reps < 1 || reps > 100) {
		fprintf(stderr, "model-bench: --tokens must be 1 to 256, --reps 1 to 100\n");
		return 2;
	}

	const double bw = read_bandwidth();

	char path[4096];
	struct llama_model *m;
	snprintf(path, sizeof path, "%s/models/stories260K/stories260K.bin", root);
	if (llama_load(path, &m, err) != 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 1;
	}
	if (!only_gguf && h2o == NULL)
		report("stories260K", m, tokens, reps, 0, NULL);
	llama_free(m);

	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[4096], ckpt[4200], tok[4200];
	snprintf(dir, sizeof dir, "%s/model-bench.XXXXXX", tmp);
	if (mkdtemp(dir) == NULL) {
		fprintf(stderr, "model-bench: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	snprintf(ckpt, sizeof ckpt, "%s/random15M.bin", dir);
	snprintf(tok, sizeof tok, "%s/tokenizer.bin", dir);
	int rc = 0;
	if (write_15m(ckpt) != 0 || write_tokenizer(tok) != 0) {
		fprintf(stderr, "model-bench: cannot write %s\n", dir);
		rc = 1;
	} else if (llama_load(ckpt, &m, err) != 0) {
		fprintf(stderr, "%s: %s\n", ckpt, err);
		rc = 1;
	} else if (only_gguf || h2o != NULL) {
		llama_free(m);
		if (h2o != NULL)
			scene_case(h2os, nh2o, peers, npeers, dir, ckpt, tok, reps);
	} else {
		const struct peer p = {peer, ckpt, tok, NULL, NULL};
		report("random 15M shape", m, tokens, reps, bw, peer != NULL ? &p : NULL);
		llama_free(m);
	}
	if (rc == 0 && gguf)
		rc = gguf_case(dir, "Q8_0", G_Q8_0, tokens, reps, bw, llama_cpp, all_forms) ||
		     gguf_case(dir, "F16", G_F16, tokens, reps, bw, llama_cpp, all_forms);
	unlink(ckpt);
	unlink(tok);
	rmdir(dir);
	return rc;
}
