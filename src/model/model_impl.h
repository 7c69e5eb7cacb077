/*
 * model_impl: what the loader, the kernels and the forward pass share.
 *
 * Matrices are stored packed in panels of MODEL_PANEL rows: panel p holds
 * rows MODEL_PANEL * p ... + MODEL_PANEL - 1, column after column, so that
 * one column of a panel is MODEL_PANEL consecutive floats (64 bytes, one
 * cache line, aligned). A vector kernel then computes MODEL_PANEL output
 * rows at once, each lane summing its own row from column 0 up: the order
 * of a plain dot product, lane by lane. Rows past the matrix's last are
 * zeros and never written out.
 */
#ifndef H2O_MODEL_IMPL_H
#define H2O_MODEL_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "h2o/gguf.h"
#include "h2o/llama.h"

#define MODEL_PANEL 16
/* Runs one pass over a matrix serves at once (its accumulators). */
#define MODEL_GROUP 8

/* Columns of a quantised matrix's panel dequantised at a time (a multiple
 * of every block size). */
#define MODEL_CHUNK 256

/*
 * A matrix, in one of four forms, each giving every weight the same float
 * (ggml's dequantised value), so the products are those of the packed
 * floats, bit for bit:
 * - W: packed floats;
 * - Q (a GGUF file kept mapped): the rows as the file stores them,
 *   ROW_BYTES apart, of ggml type QTYPE, which the kernel dequantises a
 *   chunk of a panel at a time into the packed layout;
 * - I8 (quantised types, model_pack.c): the quants packed as the floats
 *   are, one signed byte a weight, MODEL_PANEL a column of a panel, and
 *   per panel and group of GROUP columns MODEL_PANEL floats SCALE (and
 *   MIN, Q4_K's, or NULL): the weight is q * scale, or scale * q - min,
 *   as ggml computes it;
 * - H16 (F16 and BF16, QTYPE says which): the halves packed the same way,
 *   two bytes a weight, widened exactly.
 */
struct packed {
	const float *w; /* panels(rows) * cols * MODEL_PANEL floats, 64-byte aligned */
	int rows, cols;
	const unsigned char *q; /* or NULL: the rows in the file */
	int qtype;
	size_t row_bytes;
	const int8_t *i8;         /* or NULL: panels(rows) * cols * MODEL_PANEL quants */
	const float *scale, *min; /* panels * (cols / group) * MODEL_PANEL each */
	int group;                /* columns a scale covers: 16 or 32 */
	const uint16_t *h16;      /* or NULL: panels(rows) * cols * MODEL_PANEL halves */
};

/* Whether a compact form (I8 or H16, model_pack.c) holds ggml type TYPE
 * (an enum ggml_type); and the floats' worth of memory (64-byte aligned)
 * a ROWS x COLS matrix of it takes then. */
int model_compact_type(int type);
uint64_t model_compact_floats(int type, int rows, int cols);
/* The ROWS x COLS matrix of ggml type TYPE whose row r starts at
 * SRC + r * ROW_BYTES into the compact form at DST (model_compact_floats
 * of it, 64-byte aligned), M set to it: 0, or -1 out of memory. */
int model_pack_compact(int type, const unsigned char *src, size_t row_bytes, int rows, int cols,
                       float *dst, struct packed *m);
/* model_row_part of a matrix in a compact form. */
void model_compact_row_part(const struct packed *m, int i, size_t c0, size_t cw, float *dst);

static inline int packed_panels(int rows)
{
	return (rows + MODEL_PANEL - 1) / MODEL_PANEL;
}

/* W[i][j] of a packed matrix (not of a quantised one: model_row). */
static inline float packed_at(const struct packed *m, int i, int j)
{
	return m->w[((size_t)(i / MODEL_PANEL) * (size_t)m->cols + (size_t)j) * MODEL_PANEL +
	            (size_t)(i % MODEL_PANEL)];
}

/* Row I of M into DST (M's cols floats), whichever way M is stored; and
 * its columns [C0, C0 + CW), C0 a multiple of MODEL_CHUNK. */
void model_row(const struct packed *m, int i, float *dst);
void model_row_part(const struct packed *m, int i, size_t c0, size_t cw, float *dst);

/* OUT[p][i] = sum over j of W[i][j] * X[p][j], summed from j = 0 up, for
 * the rows of panels [PA, PB) and the NP <= MODEL_GROUP inputs. */
typedef void (*panels_fn)(const struct packed *w, int pa, int pb, const float *const *x,
                          float *const *out, int np);

/* ATT[t] = (Q . k_t) / sqrtf(HS) for the N slots of key tiles KT: tile
 * t / MODEL_PANEL holds HS rows of MODEL_PANEL lanes, slot t in lane
 * t % MODEL_PANEL; each summed from i = 0 up. */
typedef void (*scores_fn)(const float *kt, int n, const float *q, int hs, float *att);
/* OUT[i] = sum over t < N of A[t] * V[t * HS + i], summed from t = 0 up. */
typedef void (*values_fn)(const float *a, const float *v, int n, int hs, float *out);

struct kernels {
	const char *name;
	panels_fn panels;
	scores_fn scores;
	values_fn values;
};

/* The widest kernels this processor runs. */
void model_pick_kernels(struct kernels *k);

struct layer_weights {
	const float *rms_att, *rms_ffn; /* dim each */
	struct packed wq, wk, wv, wo, w1, w2, w3;
	/* GGUF models only, NULL when absent: q, k, v biases (qwen2), and the
	 * per-head RMSNorm weights of queries and keys (qwen3, head_size). */
	const float *bq, *bk, *bv, *q_norm, *k_norm;
};

/* What a GGUF model's metadata says beyond llama2.c's header; a llama2.c
 * checkpoint has rope_theta 10000, norm_eps 1e-5, q_dim dim, no scaling,
 * no factors, pairs of adjacent rows rotated. */
struct model_arch {
	int q_dim;               /* n_heads * head_size: the queries' width */
	float rope_theta;        /* RoPE's base */
	float rope_scale;        /* positions times this (linear scaling); 1: none */
	const float *rope_freqs; /* head_size / 2 divisors of the frequencies, or NULL */
	float norm_eps;
	int neox; /* rotate rows i and i + head_size / 2 (GPT-NeoX), not 2i and 2i+1 */
};

/* The angle pair K of a head of HS rows turns by at position POS
 * (rope.c), in float32. */
float model_rope_angle(const struct model_arch *a, int hs, int k, int pos);

struct model_pool;

struct gguf_file;

struct llama_model {
	struct llama_config c;
	struct model_arch a;
	struct gguf_file *gguf; /* the file a GGUF model came from, or NULL */
	float *mem;             /* every weight, one aligned block */
	size_t mem_bytes;       /* what was asked for it */
	size_t held_bytes;      /* all it holds (model_held_bytes) */
	struct packed emb, cls; /* the same matrix when the classifier is shared */
	struct layer_weights *layers;
	const float *rms_final;
	struct kernels k;
	enum llama_threads threads;
	struct model_pool *pool; /* NULL when it could not be made */
};

/* The helper thread for two-part jobs (model_pool.c). */
struct model_pool *model_pool_new(void);
void model_pool_free(struct model_pool *p);
/* Take P for one batch: false when another batch holds it. */
int model_pool_acquire(struct model_pool *p);
void model_pool_release(struct model_pool *p);
/* FN(ARG, 0) on this thread and FN(ARG, 1) on the helper (or here, when
 * the helper cannot be started or is slow to take it). Both have returned
 * when this does. The pool must be held. */
void model_pool_run(struct model_pool *p, void (*fn)(void *arg, int part), void *arg);
/* Whether P's helper thread runs (for tests/test_engine_helper.c). */
int model_pool_started(struct model_pool *p);

/* A half-precision float, exactly. */
float model_half(uint16_t h);
/* The little-endian 16-bit word at B. */
uint16_t model_le16(const unsigned char *b);
/* Group J's 6-bit scale *D and minimum *M of Q4_K's 12 packed bytes Q. */
void model_q4k_scale_min(int j, const unsigned char *q, int *d, int *m);
/* N values of a row of ggml type TYPE (an enum ggml_type of gguf.h) at SRC
 * into DST, as ggml defines them; N whole blocks of the type. */
void dequant_row(int type, const unsigned char *src, float *dst, size_t n);

/* The tokenizer of the GGUF file FD, for VOCAB_SIZE tokens: 1 when FD is
 * not a GGUF file, else 0 with *OUT or -1 with ERR filled. */
struct llama_tokenizer;
int gguf_tokenizer_if_gguf(int fd, int vocab_size, struct llama_tokenizer **out, char *err);

/* GGUF tables made in memory, for a model from other files (hf.c): the
 * metadata and tensors a GGUF file of the same model would hold, the
 * tensors' data in mappings the table unmaps when closed. Each returns 0,
 * or -1 when out of memory (or of mappings). */
#define GGUF_SYNTH_MAX_MAPS 64
struct gguf_file *gguf_synth_new(void);
int gguf_synth_u32(struct gguf_file *g, const char *key, uint32_t v);
int gguf_synth_f32(struct gguf_file *g, const char *key, float v);
int gguf_synth_str(struct gguf_file *g, const char *key, const char *v);
int gguf_synth_tensor(struct gguf_file *g, const char *name, int n_dims, const uint64_t *ne,
                      enum ggml_type type, const unsigned char *data);
int gguf_synth_map(struct gguf_file *g, void *p, size_t size);
/* A Hugging Face checkpoint folder DIR (config.json, safetensors). */
int hf_model_load(const char *dir, struct llama_limit *limit, struct llama_model **out, char *err);

/* A model from the GGUF file G, closed on failure; on success kept as
 * the model's (its vocabulary) when KEEP, else closed. */
int gguf_model_load(struct gguf_file *g, int keep, struct llama_limit *limit,
                    struct llama_model **out, char *err);
/*
 * The memory a model holds (llama_model_bytes), the same figure before its
 * weights are read (to refuse it against a limit) and after: the block of
 * BLOCK bytes (whole huge pages when large, model_alloc_weights), the
 * layers' table and the model itself, the MAPPED bytes of the file its
 * kernels read in place (every page of them is touched by the first pass,
 * and stays resident), and LOADING: what loading holds besides, at its
 * peak (the file's pages of the largest tensor being packed, or of its
 * metadata, before they are given back; the loader's scratch). Loading
 * comes before the first run, so the sum is an upper bound of the peak.
 */
size_t model_held_bytes(size_t block, uint64_t mapped, uint64_t loading, int n_layers);
/* And what a model running takes besides its block and its runs: the
 * helper thread's stack and allocator arena, the kernels' scratch on the
 * stack, the allocator's own pages. Measured at about 1 MiB
 * (tests/model/test_model_memory.c); twice that is counted. */
#define MODEL_RUNTIME_BYTES ((size_t)2 << 20)
/* The bytes of a mapped file's pages that reading LEN bytes of it may make
 * resident: whole windows of MODEL_FAULT_AROUND (a fault maps its
 * neighbours too, as far as Linux's fault_around_bytes), one more for a
 * range that straddles them. */
#define MODEL_FAULT_AROUND ((uint64_t)64 * 1024)
uint64_t model_pages(uint64_t len);
/* A model of WEIGHTS weights that will hold BYTES (model_held_bytes) held
 * as FORM says ("as float32") against LIMIT (NULL: no bound): 0, or
 * LLAMA_TOO_LARGE with LIMIT->needed and ERR filled. */
int model_check_limit(uint64_t weights, double bytes, const char *form, struct llama_limit *limit,
                      char *err);
/* The packed floats a ROWS x COLS matrix takes. */
uint64_t model_packed_floats(int rows, int cols);
/* What any model needs once its weights are in: kernels, threads, pool. */
void model_finish(struct llama_model *m);
/* The weights' block (64-byte aligned, huge pages when large). */
float *model_alloc_weights(size_t bytes);
/* MEM, of BYTES, from model_alloc_weights (NULL: nothing). */
void model_free_weights(float *mem, size_t bytes);

/* Untrusted text (a name from a file) for an error line: printable ASCII
 * as is, every other byte, '"' and '\\' as \xHH, at most 40 bytes of it
 * then "...". Returns BUF. */
#define MODEL_SHOWN_MAX 200
const char *model_shown(const char *s, size_t len, char buf[MODEL_SHOWN_MAX]);
/* The same for a C string. */
const char *model_shown_str(const char *s, char buf[MODEL_SHOWN_MAX]);

/* "what is wrong" into ERR (LLAMA_ERR_MAX bytes); returns -1. */
int model_fail(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Open PATH for reading if it is a regular file: 0 with *F and *SIZE, or
 * -1 with ERR filled. A FIFO or device never blocks the open. */
int model_open(const char *path, FILE **f, uint64_t *size, char *err);
/* The same for the caller's open FD, read from its start (the caller
 * keeps FD; *F reads a duplicate of it). */
int model_open_fd(int fd, FILE **f, uint64_t *size, char *err);

#endif
