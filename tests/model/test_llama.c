/*
 * test_llama: the model stage (src/model/): loader, forward pass, caches
 * and eviction, batches, tokenizer.
 *
 * A checkpoint small enough to compute by hand is built in memory; the
 * real stories260K (models/) is held to the logits tools/llama2c.py
 * computed in float64 (tests/model/stories260K_logits.txt); a plain forward
 * pass written here, run.c's operations over the positions a run keeps,
 * holds eviction to the bit, and the batch is held to llama_step to the
 * bit. Bad checkpoints and tokenizers are stories260K's own bytes broken
 * one way each.
 *
 * Usage: test_llama SOURCE_ROOT BUILD_DIR (temporary files go in BUILD_DIR).
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
#include <sys/stat.h>
#include <unistd.h>

#include "h2o/llama.h"
#include "h2o/llama_trace.h"
#include "h2o/tokenizer.h"
#include "kernel_env.h"

static const char *root = ".";
static const char *build_dir = ".";

/* ---- helpers ------------------------------------------------------------- */

static char *path_of(const char *rel)
{
	static char buf[4][1024];
	static int next;
	char *p = buf[next++ % 4];
	snprintf(p, sizeof buf[0], "%s/%s", root, rel);
	return p;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc(*len + 64);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, *len, f), *len);
	fclose(f);
	return b;
}

static void put32(unsigned char *b, int32_t v)
{
	const uint32_t u = (uint32_t)v;
	b[0] = (unsigned char)u;
	b[1] = (unsigned char)(u >> 8);
	b[2] = (unsigned char)(u >> 16);
	b[3] = (unsigned char)(u >> 24);
}

static void putf(unsigned char *b, float f)
{
	int32_t v;
	memcpy(&v, &f, 4);
	put32(b, v);
}

#define STORIES "models/stories260K/stories260K.bin"
#define TOK512  "models/stories260K/tok512.bin"

static struct llama_model *stories(void)
{
	char err[LLAMA_ERR_MAX] = "";
	struct llama_model *m = NULL;
	if (llama_load(path_of(STORIES), &m, err) != 0)
		fail_msg("%s: %s", STORIES, err);
	return m;
}

static struct llama_tokenizer *tok512(void)
{
	char err[LLAMA_ERR_MAX] = "";
	struct llama_tokenizer *t = NULL;
	if (llama_tokenizer_load(path_of(TOK512), 512, &t, err) != 0)
		fail_msg("%s: %s", TOK512, err);
	return t;
}

/* ---- the fixture ----------------------------------------------------------- */

struct fixture {
	char text[1024], story[4096];
	int n, ids[128];
	float logits[128][512];
	int story_n, story_ids[1024];
};

static int read_ints(char *s, int *out, int cap)
{
	char *end;
	const long n = strtol(s, &end, 10);
	assert_true(n > 0 && n <= cap);
	for (long i = 0; i < n; i++) {
		out[i] = (int)strtol(end, &end, 10);
	}
	return (int)n;
}

static struct fixture *load_fixture(void)
{
	struct fixture *fx = calloc(1, sizeof *fx);
	FILE *f = fopen(path_of("tests/model/stories260K_logits.txt"), "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	assert_non_null(fx);
	assert_non_null(f);
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (strncmp(line, "text ", 5) == 0) {
			snprintf(fx->text, sizeof fx->text, "%s", line + 5);
		} else if (strncmp(line, "story ", 6) == 0) {
			snprintf(fx->story, sizeof fx->story, "%s", line + 6);
		} else if (strncmp(line, "tokens ", 7) == 0) {
			fx->n = read_ints(line + 7, fx->ids, 128);
		} else if (strncmp(line, "story_tokens ", 13) == 0) {
			fx->story_n = read_ints(line + 13, fx->story_ids, 1024);
		} else if (strncmp(line, "logits ", 7) == 0) {
			char *end;
			const long p = strtol(line + 7, &end, 10);
			assert_true(p >= 0 && p < fx->n);
			for (int i = 0; i < 512; i++)
				fx->logits[p][i] = strtof(end, &end);
		}
	}
	free(line);
	fclose(f);
	assert_true(fx->n >= 30 && fx->story_n >= 100);
	return fx;
}

/* ---- a checkpoint by hand ------------------------------------------------- */

/*
 * dim 2, hidden 1, 1 layer, 1 head of size 2, 1 kv head, vocab 3, seq 2,
 * shared classifier: 38 floats after the header, 180 bytes.
 *   embedding: token 0 = (1, 0), token 1 = (0, 1), token 2 = (1, 1)
 *   every RMSNorm weight 1; wq = wk = wv = wo = I; w1 = w3 = (1 1);
 *   w2 = (1, -1)^T; the RoPE tables (4 floats) zero.
 *
 * Step 0, token 0 at position 0:
 *   x = (1, 0); rmsnorm: 1/sqrt((1 + 0)/2 + 1e-5) = 1.4141994, xb = (1.4141994, 0)
 *   q = k = v = xb; RoPE at 0 is the identity; one slot, weight 1
 *   attention out = v, x = (2.4141994, 0)
 *   FFN: rmsnorm -> (1.4142111, 0); h1 = h3 = 1.4142111;
 *        silu(h1) = h1 / (1 + e^-h1) = 1.1376341; h = 1.6088531
 *        x += w2 h = (h, -h): x = (4.0230525, -1.6088531)
 *   final rmsnorm: (1.3131050, -0.5251219)
 *   logits = E x: (1.3131050, -0.5251219, 0.7879831)
 * Step 1, token 1 at position 1 (RoPE angle 1 rad: cos 0.5403023, sin 0.8414710):
 *   xb = (0, 1.4141994); q = k1 = (-1.4141994 sin 1, 1.4141994 cos 1)
 *      = (-1.1900078, 0.7640952); k0 = (1.4141994, 0) as cached at step 0
 *   scores / sqrt 2: q.k0 = -1.1899959, q.k1 = 1.4141853
 *   softmax: (0.0688698, 0.9311302)
 *   attention out = 0.0688698 v0 + 0.9311302 v1 = (0.0973956, 1.3168038)
 *   x = (0.0973956, 2.3168038); FFN: rmsnorm -> (0.0593993, 1.4129629),
 *   h1 = h3 = 1.4723622, h = 1.7633646, x = (1.8607603, 0.5534391)
 *   final (1.3555237, 0.4031685); logits (1.3555237, 0.4031685, 1.7586922)
 * Step 1 with position 0 evicted: one slot, weight 1, attention out = v1 =
 *   (0, 1.4141994), x = (0, 2.4141994); FFN as step 0's mirrored: h = 1.6088531,
 *   x = (1.6088531, 0.8053463); final (1.2646178, 0.6330319);
 *   logits (1.2646178, 0.6330319, 1.8976497)
 */
#define TINY_BYTES 180

static void tiny_bytes(unsigned char *b)
{
	const int32_t header[7] = {2, 1, 1, 1, 1, 3, 2};
	const float w[38] = {
	        1, 0,  0, 1, 1, 1, /* embedding */
	        1, 1,              /* rms_att */
	        1, 0,  0, 1,       /* wq */
	        1, 0,  0, 1,       /* wk */
	        1, 0,  0, 1,       /* wv */
	        1, 0,  0, 1,       /* wo */
	        1, 1,              /* rms_ffn */
	        1, 1,              /* w1 */
	        1, -1,             /* w2 */
	        1, 1,              /* w3 */
	        1, 1,              /* rms_final */
	        0, 0,  0, 0,       /* RoPE tables */
	};
	for (int i = 0; i < 7; i++)
		put32(b + 4 * i, header[i]);
	for (int i = 0; i < 38; i++)
		putf(b + 28 + 4 * i, w[i]);
}

static void assert_logits(const float *got, const double *want, int n, double tol)
{
	for (int i = 0; i < n; i++)
		if (fabs(got[i] - want[i]) > tol)
			fail_msg("logit %d: %.9g, want %.9g", i, got[i], want[i]);
}

static void test_tiny_by_hand(void **state)
{
	(void)state;
	unsigned char b[TINY_BYTES];
	char err[LLAMA_ERR_MAX] = "";
	struct llama_model *m;

	tiny_bytes(b);
	if (llama_load_bytes(b, sizeof b, &m, err) != 0)
		fail_msg("%s", err);
	const struct llama_config *c = llama_model_config(m);
	assert_int_equal(c->head_size, 2);
	assert_true(c->shared_classifier);

	struct llama_run *r = llama_run_new(m);
	assert_non_null(r);
	assert_int_equal(llama_step(m, r, 0, 0), 0);
	assert_logits(llama_logits(r), (const double[]){1.3131050, -0.5251219, 0.7879831}, 3, 1e-6);
	assert_int_equal(llama_run_len(r, 0, 0), 1);
	assert_float_equal(llama_run_weights(r, 0, 0)[0], 1.0f, 0);

	assert_int_equal(llama_step(m, r, 1, 1), 0);
	assert_logits(llama_logits(r), (const double[]){1.3555237, 0.4031685, 1.7586922}, 3, 1e-6);
	assert_int_equal(llama_run_len(r, 0, 0), 2);
	assert_int_equal(llama_run_positions(r, 0, 0)[0], 0);
	assert_int_equal(llama_run_positions(r, 0, 0)[1], 1);
	assert_float_equal(llama_run_weights(r, 0, 0)[0], 0.0688698, 1e-6);
	assert_float_equal(llama_run_weights(r, 0, 0)[1], 0.9311302, 1e-6);
	assert_float_equal(llama_run_keys(r, 0, 0)[2], -1.1900078, 1e-6);
	assert_float_equal(llama_run_query(r, 0, 0)[1], 0.7640952, 1e-6);

	/* The same with position 0 evicted after step 0. */
	llama_run_reset(r);
	assert_int_equal(llama_step(m, r, 0, 0), 0);
	llama_run_keep(r, 0, 0, (const unsigned char[]){0});
	assert_int_equal(llama_run_len(r, 0, 0), 0);
	assert_int_equal(llama_step(m, r, 1, 1), 0);
	assert_int_equal(llama_run_len(r, 0, 0), 1);
	assert_int_equal(llama_run_positions(r, 0, 0)[0], 1);
	assert_logits(llama_logits(r), (const double[]){1.2646178, 0.6330319, 1.8976497}, 3, 1e-6);

	/* Misuse: token, position, order, another model's run. */
	assert_int_equal(llama_step(m, r, 0, 1), -1); /* not after position 1 */
	llama_run_reset(r);
	assert_int_equal(llama_step(m, r, 3, 0), -1); /* no token 3 */
	assert_int_equal(llama_step(m, r, -1, 0), -1);
	assert_int_equal(llama_step(m, r, 0, 2), -1); /* seq_len 2 */
	assert_int_equal(llama_step(m, r, 0, -1), -1);
	struct llama_run *runs[2] = {r, r};
	assert_int_equal(llama_step_batch(m, runs, 2, (const int[]){0, 0}, 0), -1);
	assert_int_equal(llama_step_batch(m, runs, 0, (const int[]){0}, 0), -1);
	assert_int_equal(llama_run_pos(r), -1);
	llama_run_free(r);
	llama_free(m);
}

/* ---- stories260K against NumPy ---------------------------------------------- */

static void test_stories_fixture(void **state)
{
	(void)state;
	struct fixture *fx = load_fixture();
	struct llama_model *m = stories();
	struct llama_run *r = llama_run_new(m), *rb = llama_run_new(m);
	double worst = 0;

	assert_non_null(r);
	assert_non_null(rb);
	for (int p = 0; p < fx->n; p++) {
		assert_int_equal(llama_step(m, r, fx->ids[p], p), 0);
		assert_int_equal(llama_step_batch(m, &rb, 1, &fx->ids[p], p), 0);
		const float *lg = llama_logits(r);
		for (int i = 0; i < 512; i++) {
			const double d = fabs(lg[i] - fx->logits[p][i]);
			if (d > worst)
				worst = d;
			if (d > 1e-4)
				fail_msg("position %d, logit %d: %.7f, NumPy %.7f", p, i, lg[i],
				         fx->logits[p][i]);
		}
		assert_memory_equal(lg, llama_logits(rb), 512 * sizeof(float));
	}
	print_message("stories260K: %d positions within %.1e of NumPy's logits\n", fx->n, worst);
	llama_run_free(r);
	llama_run_free(rb);
	llama_free(m);
	free(fx);
}

static void test_accuracy(void **state)
{
	(void)state;
	struct fixture *fx = load_fixture();
	struct llama_model *m = stories();
	struct llama_run *r = llama_run_new(m);
	int right = 0;

	for (int p = 0; p + 1 < fx->story_n; p++) {
		assert_int_equal(llama_step_batch(m, &r, 1, &fx->story_ids[p], p), 0);
		const float *lg = llama_logits(r);
		int best = 0;
		for (int i = 1; i < 512; i++)
			if (lg[i] > lg[best])
				best = i;
		right += best == fx->story_ids[p + 1];
	}
	const double acc = (double)right / (fx->story_n - 1);
	print_message("stories260K: next token right %d of %d (%.1f%%; chance 0.2%%)\n", right,
	              fx->story_n - 1, 100 * acc);
	assert_true(acc > 0.40);
	llama_run_free(r);
	llama_free(m);
	free(fx);
}

/* ---- eviction against a plain forward pass written here ---------------------- */

/* The checkpoint as run.c reads it: row-major matrices in the file. */
struct ref {
	int dim, hidden, layers, heads, kv_heads, vocab, seq, hs, kv_dim;
	const float *emb, *rms_att, *wq, *wk, *wv, *wo, *rms_ffn, *w1, *w2, *w3, *rms_final;
	float *kc, *vc;       /* layers x seq x kv_dim */
	unsigned char *alive; /* layers x kv_heads x seq */
	float x[64], xb[64], xb2[64], q[64], k[64], v[64], hb[172], hb2[172], att[512], logits[512];
	float *buf;
};

static void ref_init(struct ref *f, const unsigned char *bytes, size_t len)
{
	int32_t h[7];
	memcpy(h, bytes, sizeof h);
	f->dim = h[0], f->hidden = h[1], f->layers = h[2], f->heads = h[3], f->kv_heads = h[4];
	f->vocab = h[5], f->seq = h[6];
	f->hs = f->dim / f->heads;
	f->kv_dim = f->kv_heads * f->hs;
	assert_true(f->dim <= 64 && f->hidden <= 172 && f->vocab == 512);
	const size_t L = (size_t)f->layers, D = (size_t)f->dim, KV = (size_t)f->kv_dim;
	f->buf = malloc(len - 28);
	assert_non_null(f->buf);
	memcpy(f->buf, bytes + 28, len - 28);
	const float *p = f->buf;
	f->emb = p, p += (size_t)f->vocab * D;
	f->rms_att = p, p += L * D;
	f->wq = p, p += L * D * D;
	f->wk = p, p += L * KV * D;
	f->wv = p, p += L * KV * D;
	f->wo = p, p += L * D * D;
	f->rms_ffn = p, p += L * D;
	f->w1 = p, p += L * (size_t)f->hidden * D;
	f->w2 = p, p += L * (size_t)f->hidden * D;
	f->w3 = p, p += L * (size_t)f->hidden * D;
	f->rms_final = p;
	f->kc = calloc(L * (size_t)f->seq * KV, sizeof(float));
	f->vc = calloc(L * (size_t)f->seq * KV, sizeof(float));
	f->alive = calloc(L * (size_t)f->kv_heads * (size_t)f->seq, 1);
	assert_true(f->kc && f->vc && f->alive);
}

static void ref_free(struct ref *f)
{
	free(f->buf);
	free(f->kc);
	free(f->vc);
	free(f->alive);
}

static void ref_rmsnorm(float *o, const float *x, const float *w, int n)
{
	float ss = 0.0f;
	for (int j = 0; j < n; j++)
		ss += x[j] * x[j];
	ss /= n;
	ss += 1e-5f;
	ss = 1.0f / sqrtf(ss);
	for (int j = 0; j < n; j++)
		o[j] = w[j] * (ss * x[j]);
}

static void ref_matmul(float *out, const float *x, const float *w, int n, int d)
{
	for (int i = 0; i < d; i++) {
		float val = 0.0f;
		for (int j = 0; j < n; j++)
			val += w[(size_t)i * (size_t)n + (size_t)j] * x[j];
		out[i] = val;
	}
}

/* run.c's forward(), attending over the positions f->alive holds. */
static void ref_step(struct ref *f, int token, int pos)
{
	const int D = f->dim, KV = f->kv_dim, hs = f->hs, kv_mul = f->heads / f->kv_heads;
	memcpy(f->x, f->emb + (size_t)token * (size_t)D, (size_t)D * sizeof(float));
	for (int l = 0; l < f->layers; l++) {
		const size_t loff = (size_t)l * (size_t)f->seq * (size_t)KV;
		float *kr = f->kc + loff + (size_t)pos * (size_t)KV;
		float *vr = f->vc + loff + (size_t)pos * (size_t)KV;
		ref_rmsnorm(f->xb, f->x, f->rms_att + l * D, D);
		ref_matmul(f->q, f->xb, f->wq + (size_t)l * D * D, D, D);
		ref_matmul(kr, f->xb, f->wk + (size_t)l * KV * D, D, KV);
		ref_matmul(vr, f->xb, f->wv + (size_t)l * KV * D, D, KV);
		for (int i = 0; i < D; i += 2) {
			const int head_dim = i % hs;
			const float freq = 1.0f / powf(10000.0f, head_dim / (float)hs);
			const float val = pos * freq;
			const float fcr = cosf(val), fci = sinf(val);
			for (int w = 0; w < (i < KV ? 2 : 1); w++) {
				float *vec = w == 0 ? f->q : kr;
				const float v0 = vec[i], v1 = vec[i + 1];
				vec[i] = v0 * fcr - v1 * fci;
				vec[i + 1] = v0 * fci + v1 * fcr;
			}
		}
		for (int g = 0; g < f->kv_heads; g++)
			f->alive[((size_t)l * (size_t)f->kv_heads + (size_t)g) * (size_t)f->seq +
			         (size_t)pos] = 1;
		for (int h = 0; h < f->heads; h++) {
			const int g = h / kv_mul;
			const unsigned char *alive =
			        f->alive +
			        ((size_t)l * (size_t)f->kv_heads + (size_t)g) * (size_t)f->seq;
			const float *q = f->q + h * hs;
			int n = 0;
			for (int t = 0; t <= pos; t++) {
				if (!alive[t])
					continue;
				const float *k =
				        f->kc + loff + (size_t)t * (size_t)KV + (size_t)(g * hs);
				float score = 0.0f;
				for (int i = 0; i < hs; i++)
					score += q[i] * k[i];
				score /= sqrtf(hs);
				f->att[n++] = score;
			}
			float max_val = f->att[0], sum = 0.0f;
			for (int i = 1; i < n; i++)
				if (f->att[i] > max_val)
					max_val = f->att[i];
			for (int i = 0; i < n; i++) {
				f->att[i] = expf(f->att[i] - max_val);
				sum += f->att[i];
			}
			for (int i = 0; i < n; i++)
				f->att[i] /= sum;
			float *xb = f->xb + h * hs;
			memset(xb, 0, (size_t)hs * sizeof(float));
			n = 0;
			for (int t = 0; t <= pos; t++) {
				if (!alive[t])
					continue;
				const float *v =
				        f->vc + loff + (size_t)t * (size_t)KV + (size_t)(g * hs);
				const float a = f->att[n++];
				for (int i = 0; i < hs; i++)
					xb[i] += a * v[i];
			}
		}
		ref_matmul(f->xb2, f->xb, f->wo + (size_t)l * D * D, D, D);
		for (int i = 0; i < D; i++)
			f->x[i] += f->xb2[i];
		ref_rmsnorm(f->xb, f->x, f->rms_ffn + l * D, D);
		ref_matmul(f->hb, f->xb, f->w1 + (size_t)l * (size_t)f->hidden * D, D, f->hidden);
		ref_matmul(f->hb2, f->xb, f->w3 + (size_t)l * (size_t)f->hidden * D, D, f->hidden);
		for (int i = 0; i < f->hidden; i++) {
			float val = f->hb[i];
			val *= (1.0f / (1.0f + expf(-val)));
			val *= f->hb2[i];
			f->hb[i] = val;
		}
		ref_matmul(f->xb, f->hb, f->w2 + (size_t)l * (size_t)f->hidden * D, f->hidden, D);
		for (int i = 0; i < D; i++)
			f->x[i] += f->xb[i];
	}
	ref_rmsnorm(f->x, f->x, f->rms_final, D);
	ref_matmul(f->logits, f->x, f->emb, D, f->vocab);
}

/* Does policy POLICY keep position POS in layer L, kv head G, after step
 * STEP? 0 never evicts; the others keep a window, the sinks, or a scatter. */
static int keeps(int policy, int l, int g, int pos, int step)
{
	switch (policy) {
	case 0:
		return 1;
	case 1:
		return step - pos < 6 + l;
	case 2:
		return pos < 2 || step - pos < 4 + g;
	case 3:
		return (pos * 7 + l * 3 + g) % 5 != 0 || step - pos < 2;
	default:
		return pos % 2 == 0 || pos == step;
	}
}

/* Evict from R what POLICY drops after STEP; and from REF, when not NULL. */
static void evict(struct llama_run *r, struct ref *ref, int policy, int step)
{
	unsigned char keep[512];
	for (int l = 0; l < 5; l++)
		for (int g = 0; g < 4; g++) {
			const int n = llama_run_len(r, l, g);
			const int *pos = llama_run_positions(r, l, g);
			for (int i = 0; i < n; i++) {
				keep[i] = (unsigned char)keeps(policy, l, g, pos[i], step);
				if (ref != NULL && !keep[i])
					ref->alive[((size_t)l * 4 + (size_t)g) * 512 +
					           (size_t)pos[i]] = 0;
			}
			llama_run_keep(r, l, g, keep);
		}
}

static void test_evict_reference(void **state)
{
	(void)state;
	struct fixture *fx = load_fixture();
	struct llama_model *m = stories();
	size_t len;
	unsigned char *bytes = slurp(path_of(STORIES), &len);

	for (int policy = 0; policy < 5; policy++) {
		struct ref f;
		ref_init(&f, bytes, len);
		struct llama_run *r = llama_run_new(m);
		for (int p = 0; p < fx->n; p++) {
			ref_step(&f, fx->ids[p], p);
			assert_int_equal(llama_step(m, r, fx->ids[p], p), 0);
			if (memcmp(f.logits, llama_logits(r), sizeof f.logits) != 0)
				fail_msg(
				        "policy %d, position %d: logits differ from the plain loop",
				        policy, p);
			evict(r, &f, policy, p);
		}
		/* What was kept is what the policy says, in order. */
		const int n = llama_run_len(r, 1, 2);
		int want = 0;
		for (int p = 0; p < fx->n; p++)
			want += keeps(policy, 1, 2, p, fx->n - 1);
		assert_int_equal(n, want);
		for (int i = 1; i < n; i++)
			assert_true(llama_run_positions(r, 1, 2)[i - 1] <
			            llama_run_positions(r, 1, 2)[i]);
		llama_run_free(r);
		ref_free(&f);
	}
	free(bytes);
	llama_free(m);
	free(fx);
}

/* ---- batches: bit for bit the runs alone --------------------------------------- */

static void batch_against_plain(enum llama_threads threads)
{
	struct fixture *fx = load_fixture();
	struct llama_model *m = stories();
	llama_set_threads(m, threads);

	for (int n = 1; n <= 5; n++) {
		struct llama_run *b[5], *s[5];
		int tokens[5];
		for (int i = 0; i < n; i++) {
			b[i] = llama_run_new(m);
			s[i] = llama_run_new(m);
			assert_true(b[i] && s[i]);
		}
		for (int p = 0; p < fx->n; p++) {
			/* Different texts too: run i reads the fixture shifted by i. */
			for (int i = 0; i < n; i++)
				tokens[i] = fx->ids[(p + i) % fx->n];
			assert_int_equal(llama_step_batch(m, b, n, tokens, p), 0);
			for (int i = 0; i < n; i++) {
				assert_int_equal(llama_step(m, s[i], tokens[i], p), 0);
				if (memcmp(llama_logits(b[i]), llama_logits(s[i]),
				           512 * sizeof(float)))
					fail_msg("%d runs, run %d, position %d: the batch differs",
					         n, i, p);
				for (int l = 0; l < 5; l++)
					for (int h = 0; h < 8; h++)
						assert_memory_equal(
						        llama_run_weights(b[i], l, h),
						        llama_run_weights(s[i], l, h),
						        (size_t)llama_run_len(s[i], l, h / 2) *
						                sizeof(float));
				evict(b[i], NULL, i, p);
				evict(s[i], NULL, i, p);
			}
		}
		for (int i = 0; i < n; i++) {
			llama_run_free(b[i]);
			llama_run_free(s[i]);
		}
	}
	llama_free(m);
	free(fx);
}

/*
 * llama_step_span: a story's tokens a span at a time (1, 3, 16 and 64 a
 * span) give every position the queries, weights and logits, and the
 * caches the keys and values, that one llama_step a position gives, bit
 * for bit; and
 * the run after the span is the last step's (its logits and weights), on
 * one thread and two.
 */
static void span_against_plain(enum llama_threads threads)
{
	struct fixture *fx = load_fixture();
	struct llama_model *m = stories();
	llama_set_threads(m, threads);
	const struct llama_config *c = llama_model_config(m);
	const int n = fx->story_n < 200 ? fx->story_n : 200;
	const size_t V = (size_t)c->vocab_size, hs = (size_t)c->head_size;
	const size_t QL = (size_t)c->n_layers * c->n_heads * hs;
	float *lg = malloc(LLAMA_MAX_BATCH * V * sizeof *lg);
	float *qs = malloc(LLAMA_MAX_BATCH * QL * sizeof *qs);
	float *ws =
	        malloc(LLAMA_MAX_BATCH * (size_t)c->n_layers * c->n_heads * (size_t)n * sizeof *ws);
	assert_true(lg && qs && ws && n > 100);
	const int spans[] = {1, 3, 16, LLAMA_MAX_BATCH};
	for (size_t k = 0; k < sizeof spans / sizeof *spans; k++) {
		struct llama_run *a = llama_run_new_len(m, n), *b = llama_run_new_len(m, n);
		assert_true(a && b);
		for (int p = 0; p < n;) {
			const int count = n - p < spans[k] ? n - p : spans[k];
			assert_int_equal(llama_step_span(m, a, fx->story_ids + p, count, p,
			                                 k % 2 ? qs : NULL, lg, k % 2 ? NULL : ws),
			                 0);
			for (int j = 0; j < count; j++, p++) {
				assert_int_equal(llama_step(m, b, fx->story_ids[p], p), 0);
				if (memcmp(lg + (size_t)j * V, llama_logits(b), V * sizeof(float)))
					fail_msg("span %d, position %d: the logits differ",
					         spans[k], p);
				for (int l = 0; k % 2 == 0 && l < c->n_layers; l++)
					for (int h = 0; h < c->n_heads; h++)
						assert_memory_equal(
						        ws + ((size_t)j * c->n_layers * c->n_heads +
						              (size_t)l * c->n_heads + h) *
						                        (size_t)n,
						        llama_run_weights(b, l, h),
						        (size_t)(p + 1) * sizeof(float));
				for (int l = 0; k % 2 && l < c->n_layers; l++)
					for (int h = 0; h < c->n_heads; h++)
						assert_memory_equal(
						        qs + (size_t)j * QL +
						                ((size_t)l * c->n_heads + h) * hs,
						        llama_run_query(b, l, h),
						        hs * sizeof(float));
			}
			assert_int_equal(llama_run_pos(a), p - 1);
			assert_memory_equal(llama_logits(a), llama_logits(b), V * sizeof(float));
			for (int l = 0; l < c->n_layers; l++) {
				for (int h = 0; h < c->n_heads; h++) {
					assert_memory_equal(llama_run_query(a, l, h),
					                    llama_run_query(b, l, h),
					                    hs * sizeof(float));
					assert_memory_equal(llama_run_weights(a, l, h),
					                    llama_run_weights(b, l, h),
					                    (size_t)p * sizeof(float));
				}
				for (int g = 0; g < c->n_kv_heads; g++) {
					assert_int_equal(llama_run_len(a, l, g), p);
					assert_memory_equal(llama_run_keys(a, l, g),
					                    llama_run_keys(b, l, g),
					                    (size_t)p * hs * sizeof(float));
					assert_memory_equal(llama_run_values(a, l, g),
					                    llama_run_values(b, l, g),
					                    (size_t)p * hs * sizeof(float));
				}
			}
		}
		/* A span past the context, or of no tokens, changes nothing. */
		assert_int_equal(llama_step_span(m, a, fx->story_ids, 1, n, NULL, NULL, NULL), -1);
		assert_int_equal(llama_step_span(m, a, fx->story_ids, 0, 0, NULL, NULL, NULL), -1);
		llama_run_free(a);
		llama_run_free(b);
	}
	free(lg);
	free(qs);
	free(ws);
	llama_free(m);
	free(fx);
}

static void test_span_one_thread(void **state)
{
	(void)state;
	span_against_plain(LLAMA_THREADS_ONE);
}

static void test_span_two_threads(void **state)
{
	(void)state;
	span_against_plain(LLAMA_THREADS_TWO);
}

static void test_batch_auto(void **state)
{
	(void)state;
	batch_against_plain(LLAMA_THREADS_AUTO);
}

static void test_batch_one_thread(void **state)
{
	(void)state;
	batch_against_plain(LLAMA_THREADS_ONE);
}

static void test_batch_two_threads(void **state)
{
	(void)state;
	batch_against_plain(LLAMA_THREADS_TWO);
}

/* ---- the tokenizer --------------------------------------------------------- */

static void test_tokenizer_fixture(void **state)
{
	(void)state;
	struct fixture *fx = load_fixture();
	struct llama_tokenizer *t = tok512();
	int ids[4096];
	char err[LLAMA_ERR_MAX] = "";

	int n = llama_tokenizer_encode(t, fx->text, strlen(fx->text), 1, 0, ids, 4096, err);
	assert_int_equal(n, fx->n);
	assert_memory_equal(ids, fx->ids, (size_t)n * sizeof(int));
	n = llama_tokenizer_encode(t, fx->story, strlen(fx->story), 1, 0, ids, 4096, err);
	assert_int_equal(n, fx->story_n);
	assert_memory_equal(ids, fx->story_ids, (size_t)n * sizeof(int));
	llama_tokenizer_free(t);
	free(fx);
}

static void test_tokenizer_round_trip(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t len;
	} texts[] = {
	        {"Once upon a time", 16},
	        {" leading space, and  two", 24},
	        {"tab\there\nnew line", 17},
	        {"caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x8e\x89", 15}, /* café ☃ 🎉: bytes */
	        {"\x01\x7f\xff\xfe\x80 stray bytes", 17},
	        {"nul\0inside", 10},
	        {"<0x41> looks like a byte piece", 30},
	        {"x", 1},
	        {"", 0},
	};
	struct llama_tokenizer *t = tok512();
	char err[LLAMA_ERR_MAX] = "";

	for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
		int ids[256];
		char out[256];
		size_t used = 0;
		const int n =
		        llama_tokenizer_encode(t, texts[k].s, texts[k].len, 1, 1, ids, 256, err);
		assert_true(n >= 2);
		assert_int_equal(ids[0], LLAMA_TOKEN_BOS);
		assert_int_equal(ids[n - 1], LLAMA_TOKEN_EOS);
		for (int i = 1; i < n - 1; i++) {
			size_t len;
			const char *piece = llama_tokenizer_decode(t, ids[i - 1], ids[i], &len);
			assert_non_null(piece);
			assert_true(used + len <= sizeof out);
			memcpy(out + used, piece, len);
			used += len;
		}
		if (used != texts[k].len || memcmp(out, texts[k].s, used) != 0)
			fail_msg("text %zu: decode(encode(text)) is %zu bytes, not the text", k,
			         used);
	}
	/* Capacity: exactly enough, and one short. */
	int ids[8];
	assert_int_equal(llama_tokenizer_encode(t, "x", 1, 1, 1, ids, 4, err), 4);
	assert_int_equal(llama_tokenizer_encode(t, "x", 1, 1, 1, ids, 3, err), -1);
	assert_string_equal(err, "more than 3 tokens");
	/* Decode out of range. */
	size_t len = 9;
	assert_null(llama_tokenizer_decode(t, 1, 512, &len));
	assert_int_equal(len, 0);
	llama_tokenizer_free(t);
}

/* ---- bad checkpoints -------------------------------------------------------- */

static void load_fails(const unsigned char *b, size_t len, const char *want)
{
	char err[LLAMA_ERR_MAX] = "";
	struct llama_model *m = (struct llama_model *)&err;
	assert_int_equal(llama_load_bytes(b, len, &m, err), -1);
	assert_null(m);
	assert_string_equal(err, want);
}

static void with_field(const unsigned char *orig, size_t len, int field, int32_t v,
                       const char *want)
{
	unsigned char *b = malloc(len);
	assert_non_null(b);
	memcpy(b, orig, len);
	put32(b + 4 * field, v);
	load_fails(b, len, want);
	free(b);
}

static void test_bad_checkpoints(void **state)
{
	(void)state;
	size_t len;
	unsigned char *b = slurp(path_of(STORIES), &len);
	const char *size_msg = "file is %zu bytes, its header needs exactly 1056540 (dim 64, "
	                       "hidden 172, 5 layers, "
	                       "8 heads, 4 kv heads, vocab 512, seq_len 512, shared classifier)";
	char want[LLAMA_ERR_MAX];

	load_fails(b, 0, "file is 0 bytes, shorter than the 28-byte header");
	load_fails(b, 27, "file is 27 bytes, shorter than the 28-byte header");
	snprintf(want, sizeof want, size_msg, (size_t)1000);
	load_fails(b, 1000, want); /* truncated */
	snprintf(want, sizeof want, size_msg, len - 1);
	load_fails(b, len - 1, want);
	snprintf(want, sizeof want, size_msg, len + 4);
	load_fails(b, len + 4, want); /* one float too many */

	with_field(b, len, 0, 0, "header field dim (byte 0): 0, must be 1 to 8192");
	with_field(b, len, 0, 1 << 30, "header field dim (byte 0): 1073741824, must be 1 to 8192");
	with_field(b, len, 1, -5, "header field hidden_dim (byte 4): -5, must be 1 to 65536");
	with_field(b, len, 2, 1000, "header field n_layers (byte 8): 1000, must be 1 to 256");
	with_field(b, len, 5, INT32_MIN,
	           "header field vocab_size (byte 20): -2147483648, must be 1 to 1048576 "
	           "(negative: a separate classifier)");
	with_field(b, len, 6, 0x7fffffff,
	           "header field seq_len (byte 24): 2147483647, must be 1 to 65536");
	with_field(b, len, 3, 3, "header field n_heads (byte 12): 3 does not divide dim 64");
	with_field(b, len, 4, 3, "header field n_kv_heads (byte 16): 3 does not divide n_heads 8");
	with_field(b, len, 4, 16,
	           "header field n_kv_heads (byte 16): 16 does not divide n_heads 8");
	with_field(b, len, 3, 64,
	           "header field n_heads (byte 12): head size 1 (dim 64 / 64 heads) is odd, RoPE "
	           "rotates pairs");
	/* A separate classifier needs vocab * dim more floats. */
	snprintf(want, sizeof want,
	         "file is %zu bytes, its header needs exactly 1187612 (dim 64, hidden 172, 5 "
	         "layers, "
	         "8 heads, 4 kv heads, vocab 512, seq_len 512, own classifier)",
	         len);
	with_field(b, len, 5, -512, want);

	/* Huge dims within each field's limit: refused before any allocation. */
	unsigned char big[28];
	const int32_t huge[7] = {8192, 65536, 256, 256, 256, 1048576, 65536};
	for (int i = 0; i < 7; i++)
		put32(big + 4 * i, huge[i]);
	load_fails(big, sizeof big, "header: 489630474240 weights, over the limit of 4294967296");
	const int32_t long_run[7] = {256, 256, 256, 2, 2, 512, 65536};
	for (int i = 0; i < 7; i++)
		put32(big + 4 * i, long_run[i]);
	load_fails(big, sizeof big,
	           "header: a run's caches would take 51808316416 bytes, over the limit");

	/* Non-finite weights, named by byte, tensor, layer, row and column. */
	unsigned char *bad = malloc(len);
	assert_non_null(bad);
	memcpy(bad, b, len);
	putf(bad + 28, NAN);
	load_fails(bad, len, "byte 28: token_embedding, row 0, column 0, is nan");
	memcpy(bad, b, len);
	/* wq of layer 1, row 2, column 3: after the embedding (512 x 64), the
	 * attention norms (5 x 64) and layer 0's wq (64 x 64). */
	const size_t at = 28 + 4 * (512 * 64 + 5 * 64 + 64 * 64 + 2 * 64 + 3);
	putf(bad + at, INFINITY);
	snprintf(want, sizeof want, "byte %zu: wq of layer 1, row 2, column 3, is inf", at);
	load_fails(bad, len, want);
	memcpy(bad, b, len);
	putf(bad + 28 + 4 * (512 * 64 + 64 + 5), -INFINITY);
	snprintf(want, sizeof want, "byte %d: rms_att of layer 1, element 5, is -inf",
	         28 + 4 * (512 * 64 + 64 + 5));
	load_fails(bad, len, want);
	/* The RoPE tables are not weights: never read. */
	memcpy(bad, b, len);
	putf(bad + len - 4, NAN);
	struct llama_model *m;
	char err[LLAMA_ERR_MAX];
	assert_int_equal(llama_load_bytes(bad, len, &m, err), 0);
	llama_free(m);
	free(bad);

	/* The tiny one, broken. */
	unsigned char tiny[TINY_BYTES + 4];
	tiny_bytes(tiny);
	put32(tiny + 12, 2); /* 2 heads of size 1 */
	load_fails(tiny, TINY_BYTES,
	           "header field n_heads (byte 12): head size 1 (dim 2 / 2 heads) is odd, RoPE "
	           "rotates pairs");
	free(b);
}

static void test_bad_files(void **state)
{
	(void)state;
	char dir[1024], path[1100], err[LLAMA_ERR_MAX] = "";
	struct llama_model *m;
	struct llama_tokenizer *t;

	snprintf(dir, sizeof dir, "%s/test_llama.XXXXXX", build_dir);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(llama_load(path, &m, err), -1);
	assert_null(m);
	assert_string_equal(err, "not a regular file");
	assert_int_equal(llama_tokenizer_load(path, 512, &t, err), -1);
	assert_string_equal(err, "not a regular file");
	unlink(path);
	assert_int_equal(llama_load(dir, &m, err), -1);
	assert_string_equal(err, "not a regular file");
	assert_int_equal(llama_load(path, &m, err), -1);
	assert_string_equal(err, "cannot open: No such file or directory");

	/* A file whose header is fine but whose length is not. */
	snprintf(path, sizeof path, "%s/short.bin", dir);
	unsigned char tiny[TINY_BYTES];
	tiny_bytes(tiny);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(tiny, 1, TINY_BYTES - 8, f), TINY_BYTES - 8);
	fclose(f);
	assert_int_equal(llama_load(path, &m, err), -1);
	assert_string_equal(err,
	                    "file is 172 bytes, its header needs exactly 180 (dim 2, hidden 1, "
	                    "1 layers, 1 heads, 1 kv heads, vocab 3, seq_len 2, shared "
	                    "classifier)");
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(tiny, 1, TINY_BYTES, f), TINY_BYTES);
	fclose(f);
	assert_int_equal(llama_load(path, &m, err), 0);
	llama_free(m);
	unlink(path);
	rmdir(dir);
}

/* ---- bad tokenizers -------------------------------------------------------- */

static void tok_fails(const unsigned char *b, size_t len, int vocab, const char *want)
{
	char err[LLAMA_ERR_MAX] = "";
	struct llama_tokenizer *t = (struct llama_tokenizer *)&err;
	assert_int_equal(llama_tokenizer_load_bytes(b, len, vocab, &t, err), -1);
	assert_null(t);
	assert_string_equal(err, want);
}

static void test_bad_tokenizers(void **state)
{
	(void)state;
	size_t len;
	unsigned char *orig = slurp(path_of(TOK512), &len);
	unsigned char *b = malloc(len + 8);
	char want[LLAMA_ERR_MAX];
	assert_non_null(b);

	/* tok512.bin: max length 7 (byte 0); token 0's score at byte 4, its
	 * length at byte 8 (5: "<unk>"), its bytes from 12. */
	int32_t max_len;
	memcpy(&max_len, orig, 4);
	assert_int_equal(max_len, 7);

	tok_fails(orig, 3, 512, "file is 3 bytes, shorter than its 4-byte header");
	tok_fails(orig, len, 0, "vocabulary of 0 tokens, must be 1 to 1048576");
	tok_fails(orig, len - 1, 512,
	          "token 511 (byte 6224): its 3 bytes run past the end of the "
	          "file (6226 bytes)");
	tok_fails(orig, 100, 512,
	          "token 7 (byte 100): the file ends before its score and length "
	          "(512 tokens expected)");
	tok_fails(orig, len, 511, "byte 6216: 11 bytes after the last of 511 tokens");
	memcpy(b, orig, len);
	b[len] = 'x';
	tok_fails(b, len + 1, 512, "byte 6227: 1 bytes after the last of 512 tokens");

	memcpy(b, orig, len);
	put32(b, 0);
	tok_fails(b, len, 512, "max token length (byte 0): 0, must be 1 to 4096");
	put32(b, 1 << 20);
	tok_fails(b, len, 512, "max token length (byte 0): 1048576, must be 1 to 4096");

	memcpy(b, orig, len);
	put32(b + 8, 0x7fffffff); /* length overflow */
	tok_fails(b, len, 512,
	          "token 0 (byte 8): length 2147483647, must be 0 to the max token length 7");
	put32(b + 8, -1);
	tok_fails(b, len, 512, "token 0 (byte 8): length -1, must be 0 to the max token length 7");
	put32(b + 8, 7); /* within the maximum: the pieces after are misread */
	tok_fails(b, len, 512,
	          "token 1 (byte 23): length 1007288320, must be 0 to the max token "
	          "length 7");

	memcpy(b, orig, len);
	putf(b + 4, NAN);
	tok_fails(b, len, 512, "token 0 (byte 4): score is not finite");
	memcpy(b, orig, len);
	putf(b + 4, -INFINITY);
	tok_fails(b, len, 512, "token 0 (byte 4): score is not finite");

	/* Any bytes in a piece load, and decode raw. */
	memcpy(b, orig, len);
	memcpy(b + 12, "\x1b[2J\0", 5); /* token 0 "<unk>" becomes ESC [ 2 J NUL */
	struct llama_tokenizer *t;
	char err[LLAMA_ERR_MAX];
	assert_int_equal(llama_tokenizer_load_bytes(b, len, 512, &t, err), 0);
	size_t n;
	const char *piece = llama_tokenizer_decode(t, -1, 0, &n);
	assert_int_equal(n, 5);
	assert_memory_equal(piece, "\x1b[2J\0", 5);
	llama_tokenizer_free(t);

	/* A vocabulary without byte pieces cannot encode what it lacks. */
	memcpy(b, orig, len);
	/* token 3 is "<0x00>", after "<unk>", "\n<s>\n" and "\n</s>\n": rename it */
	const size_t at = 4 + (8 + 5) + (8 + 5) + (8 + 6) + 8;
	assert_memory_equal(b + at, "<0x00>", 6);
	b[at + 1] = 'X';
	assert_int_equal(llama_tokenizer_load_bytes(b, len, 512, &t, err), 0);
	int ids[16];
	assert_int_equal(llama_tokenizer_encode(t, "a\0", 2, 1, 0, ids, 16, err), -1);
	snprintf(want, sizeof want, "byte 0x00 at offset 1 has no piece <0x00>");
	assert_string_equal(err, want);
	llama_tokenizer_free(t);

	free(b);
	free(orig);
}

/* llama_rng_coin: the xorshift64* words of llama_trace.h from seed 1
 * (worked out by hand in Python's integers), and llama_trace's rows are
 * the run's own: a run stepped by hand gives the same query, key and
 * value at every position, and greedy tokens are the logits' argmax. */
static void test_trace(void **state)
{
	(void)state;
	uint64_t s = 1;
	assert_true(llama_rng_coin(&s) == 0.28083503246307373f);
	assert_true(s == UINT64_C(33554433));
	assert_true(llama_rng_coin(&s) == 0.6711372137069702f);
	assert_true(s == UINT64_C(1126174793148417));

	struct llama_model *m = stories();
	const struct llama_config *c = llama_model_config(m);
	/* More given tokens than a span of the trace takes (16), then its
	 * own choices. */
	enum { N = 40, GIVEN = 35 };
	int tokens[N] = {1, 403, 407, 261};
	for (int i = 4; i < GIVEN; i++)
		tokens[i] = (tokens[i - 1] * 7 + i) % c->vocab_size;
	const size_t hs = (size_t)c->head_size;
	float *q = malloc((size_t)c->n_layers * c->n_heads * N * hs * sizeof *q);
	float *k = malloc((size_t)c->n_layers * c->n_kv_heads * N * hs * sizeof *k);
	float *v = malloc((size_t)c->n_layers * c->n_kv_heads * N * hs * sizeof *v);
	char err[LLAMA_ERR_MAX];
	assert_int_equal(llama_trace(m, tokens, GIVEN, N, NULL, q, k, v, err), 0);
	struct llama_run *r = llama_run_new(m);
	assert_non_null(r);
	for (int i = 0; i < N; i++) {
		assert_int_equal(llama_step(m, r, tokens[i], i), 0);
		for (int l = 0; l < c->n_layers; l++) {
			for (int h = 0; h < c->n_heads; h++)
				assert_memory_equal(q + (((size_t)l * c->n_heads + h) * N + i) * hs,
				                    llama_run_query(r, l, h), hs * sizeof(float));
			for (int g = 0; g < c->n_kv_heads; g++) {
				const size_t at = (((size_t)l * c->n_kv_heads + g) * N + i) * hs;
				assert_memory_equal(k + at,
				                    llama_run_keys(r, l, g) + (size_t)i * hs,
				                    hs * sizeof(float));
				assert_memory_equal(v + at,
				                    llama_run_values(r, l, g) + (size_t)i * hs,
				                    hs * sizeof(float));
			}
		}
		if (i + 1 < N && i + 1 >= GIVEN) {
			const float *logits = llama_logits(r);
			int best = 0;
			for (int t = 1; t < c->vocab_size; t++)
				if (logits[t] > logits[best])
					best = t;
			assert_int_equal(tokens[i + 1], best);
		}
	}
	llama_run_free(r);
	/* Past the context, and a given token out of the vocabulary. */
	assert_int_equal(llama_trace(m, tokens, 1, c->seq_len + 1, NULL, NULL, NULL, NULL, err),
	                 -1);
	tokens[1] = c->vocab_size;
	assert_int_equal(llama_trace(m, tokens, 2, 2, NULL, NULL, NULL, NULL, err), -1);
	free(q);
	free(k);
	free(v);
	llama_free(m);
}

int main(int argc, char **argv)
{
	const int kernel_rc = model_kernel_from_env();
	if (kernel_rc >= 0)
		return kernel_rc;
	if (argc > 1)
		root = argv[1];
	if (argc > 2)
		build_dir = argv[2];
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_tiny_by_hand),
	        cmocka_unit_test(test_stories_fixture),
	        cmocka_unit_test(test_trace),
	        cmocka_unit_test(test_accuracy),
	        cmocka_unit_test(test_evict_reference),
	        cmocka_unit_test(test_batch_auto),
	        cmocka_unit_test(test_batch_one_thread),
	        cmocka_unit_test(test_batch_two_threads),
	        cmocka_unit_test(test_span_one_thread),
	        cmocka_unit_test(test_span_two_threads),
	        cmocka_unit_test(test_tokenizer_fixture),
	        cmocka_unit_test(test_tokenizer_round_trip),
	        cmocka_unit_test(test_bad_checkpoints),
	        cmocka_unit_test(test_bad_files),
	        cmocka_unit_test(test_bad_tokenizers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
