/*
 * llama: a llama2.c checkpoint's forward pass, with KV caches that the
 * caller evicts from.
 *
 * A model is loaded once from untrusted bytes (llama_load,
 * llama_load_bytes): every header field and size is checked before
 * anything is allocated, the file must be exactly as long as its header
 * says, and every weight must be finite. Errors fill the caller's buffer
 * with one line saying what is wrong; nothing here prints or exits.
 *
 * A run (struct llama_run) is one sequence through the model: its KV caches
 * and activations. Each step feeds one token at one position: every layer
 * appends the token's key and value rows to each of its key/value heads'
 * caches and attends over what those caches hold, and the last layer's
 * output gives the logits. Between steps the caller may evict from any
 * cache (llama_run_keep), per layer and key/value head, as an eviction
 * policy does: the next step of every layer sees only what was kept. A key
 * is rotated (RoPE) by its own position when it is cached, so an evicted
 * neighbour never moves it.
 *
 * Arithmetic: float32 throughout, the very operations of llama2.c's run.c
 * in the same order (RMSNorm with eps 1e-5, RoPE, softmax with expf,
 * SwiGLU, every dot product summed from index 0 up), so that a run that
 * never evicts gives run.c's logits bit for bit when both are built with
 * -ffp-contract=off (and the same libm: expf, powf, cosf, sinf). The
 * attention weights a step exposes are those floats, exactly as they
 * multiplied the value rows.
 *
 * The accessors below take a layer in [0, n_layers), a query head in
 * [0, n_heads) and a key/value head in [0, n_kv_heads), and do not check.
 *
 * llama_step_batch runs several runs at the same position at once (one per
 * eviction policy, say), passing each weight matrix once for all of them,
 * on two threads when that pays. Each run's results are bit-identical to
 * llama_step's: the same sums in the same order, only interleaved.
 *
 * Checkpoints are little-endian, as llama2.c writes them.
 */
#ifndef H2O_LLAMA_H
#define H2O_LLAMA_H

#include <stdbool.h>
#include <stddef.h>

/* The size of an error buffer, terminator included. */
#define LLAMA_ERR_MAX 256

/* Limits on a checkpoint's header, checked before any allocation. */
#define LLAMA_MAX_DIM    8192
#define LLAMA_MAX_HIDDEN 65536
#define LLAMA_MAX_LAYERS 256
#define LLAMA_MAX_HEADS  256
#define LLAMA_MAX_VOCAB  1048576
#define LLAMA_MAX_SEQ    65536
/* A GGUF or Hugging Face model's context: its context_length
 * (max_position_embeddings), at most this many positions. Runs are sized
 * to the text they run (llama_run_new_len), not to this. */
#define LLAMA_MAX_CONTEXT 65536
/* At most this many float32 weights in a checkpoint (16 GiB). */
#define LLAMA_MAX_WEIGHTS ((size_t)1 << 32)

/* At most this many runs in one llama_step_batch. */
#define LLAMA_MAX_BATCH 64

/* A checkpoint's header, with what follows from it. */
struct llama_config {
	int dim;        /* model width */
	int hidden_dim; /* FFN width */
	int n_layers;
	int n_heads;    /* query heads */
	int n_kv_heads; /* key/value heads; query head h reads h / (n_heads / n_kv_heads) */
	int vocab_size;
	int seq_len;            /* positions 0 .. seq_len - 1 (the context) */
	int head_size;          /* dim / n_heads */
	int kv_dim;             /* n_kv_heads * head_size */
	bool shared_classifier; /* the classifier is the token embedding */
};

struct llama_model;
struct llama_run;

/* Load the checkpoint at PATH (a regular file, read whole into memory the
 * model owns). 0 and *OUT on success; -1 with ERR filled on failure. */
int llama_load(const char *path, struct llama_model **out, char err[LLAMA_ERR_MAX]);
/* The same from the open file FD, read from its start; FD stays the
 * caller's (a loader that checked which file it opened reads that one). */
int llama_load_fd(int fd, struct llama_model **out, char err[LLAMA_ERR_MAX]);
/* The same from LEN bytes at DATA, which the model does not keep. */
int llama_load_bytes(const void *data, size_t len, struct llama_model **out,
                     char err[LLAMA_ERR_MAX]);
void llama_free(struct llama_model *m);

/*
 * Loading within a bound on memory: the loaders know from a checkpoint's
 * header (a GGUF file's metadata and tensor table, a Hugging Face folder's
 * config and safetensors headers) what the model will hold, in the form
 * its weights will be held (llama_model_bytes, to the byte), and refuse a
 * model past MAX_BYTES before allocating or reading any weight:
 * LLAMA_TOO_LARGE, NEEDED the bytes, ERR what they are ("61.2 million
 * weights as float32", "... packed compact (a byte or two a weight)"). A run's
 * caches are the caller's to add (llama_run_bytes). MAX_BYTES 0 (or a
 * NULL limit): no bound.
 */
#define LLAMA_TOO_LARGE (-2)
struct llama_limit {
	double max_bytes;
	double needed;
};
int llama_load_within(const char *path, struct llama_limit *limit, struct llama_model **out,
                      char err[LLAMA_ERR_MAX]);
int llama_load_fd_within(int fd, struct llama_limit *limit, struct llama_model **out,
                         char err[LLAMA_ERR_MAX]);
/*
 * A Hugging Face checkpoint folder (config.json, model.safetensors or the
 * shards model.safetensors.index.json names), each of its files opened
 * through OPEN(CTX, NAME, ERR) when OPEN is given: a loader that allows
 * only certain files (a scene's folder and nothing a link leads out to)
 * checks every name before it is read. OPEN returns a descriptor to read,
 * or -1 with ERR saying why ("cannot open: ..."), which the error prefixes
 * with NAME. Without OPEN, DIR/NAME is opened as it is.
 * llama_load_within routes a folder holding a config.json here.
 */
struct llama_folder {
	const char *dir;
	int (*open)(void *ctx, const char *name, char err[LLAMA_ERR_MAX]);
	void *ctx;
};
int llama_load_folder_within(const struct llama_folder *f, struct llama_limit *limit,
                             struct llama_model **out, char err[LLAMA_ERR_MAX]);
/* The bytes M holds at most, resident: its weights' block in their form
 * (float32, compact or, read from the file, none), the file's pages its
 * kernels read in place, what loading held at its peak and a running
 * model's own (model_held_bytes, src/model/model_impl.h). A run's are
 * llama_run_bytes_len's. */
size_t llama_model_bytes(const struct llama_model *m);

const struct llama_config *llama_model_config(const struct llama_model *m);

/* The forward pass's kernels: "avx512", "avx2" or "portable" (the same
 * vector code compiled for the baseline instruction set). Every variant
 * gives the same bits. A model uses the widest this processor runs unless
 * llama_kernel_select names another before it loads, for every model the
 * process loads from then on (NULL or "auto": the widest). Returns 0, -1
 * when this processor cannot run that variant, -2 for a name that is none
 * of them; the choice stays when it fails. The model reads no
 * environment: the program and the tests pass H2O_KERNEL here. */
int llama_kernel_select(const char *name);
/* The variant models load with now. */
const char *llama_kernel_name(void);

/* Threads for llama_step_batch: LLAMA_THREADS_AUTO (the default: a helper
 * thread on the second core once a step's matrices are large enough to pay
 * for it), LLAMA_THREADS_ONE (the calling thread only) or LLAMA_THREADS_TWO
 * (the helper for every step). Results never depend on it. Not to be
 * changed while a step runs. */
enum llama_threads { LLAMA_THREADS_AUTO, LLAMA_THREADS_ONE, LLAMA_THREADS_TWO };
void llama_set_threads(struct llama_model *m, enum llama_threads mode);

/* PART(ARG, 0) and PART(ARG, 1): the second on M's helper thread when M
 * may use two (llama_set_threads) and the helper is free, else both here;
 * both have run when this returns. For work beside the model's steps
 * whose two parts write apart: which thread runs a part changes nothing
 * it computes. */
void llama_run_two(const struct llama_model *m, void (*part)(void *arg, int part), void *arg);

/* A run of M with empty caches, M to outlive it; NULL when out of memory.
 * Its caches hold up to seq_len slots per layer and key/value head. */
struct llama_run *llama_run_new(const struct llama_model *m);
/* A run whose caches hold POSITIONS slots (positions 0 .. POSITIONS - 1;
 * seq_len when POSITIONS is not in [1, seq_len]): a run sized to the text
 * it will run, not to the model's whole context (tens of thousands of
 * positions for a GGUF or Hugging Face model). */
struct llama_run *llama_run_new_len(const struct llama_model *m, int positions);
/* The bytes llama_run_new takes for a run of M (its caches hold seq_len
 * slots each, whatever the run will use): to refuse a model before. */
size_t llama_run_bytes(const struct llama_model *m);
/* The bytes llama_run_new_len takes for POSITIONS. */
size_t llama_run_bytes_len(const struct llama_model *m, int positions);
void llama_run_free(struct llama_run *r);
/* Empty every cache: the next step may start again at any position. */
void llama_run_reset(struct llama_run *r);
/* Make DST (a run of the same model and length as SRC) what SRC is: its
 * caches, last step's position, weights, queries and logits, so that the
 * next steps of the two give the same bits. 0, or -1 (DST unchanged) when
 * the two differ in model or length, or DST keeps queries before RoPE and
 * SRC does not (llama_run_keep_prerope). */
int llama_run_copy(struct llama_run *dst, const struct llama_run *src);

/*
 * Feed TOKEN at position POS to R (a run of M): 0 on success, -1 (and
 * nothing changed) when TOKEN is not in [0, vocab_size), POS not in
 * [0, seq_len) or not after the previous step's position, or R not a run
 * of M. On one thread, whatever llama_set_threads says.
 */
int llama_step(const struct llama_model *m, struct llama_run *r, int token, int pos);
/*
 * llama_step for each of the N distinct runs RUNS[i] of M with TOKENS[i],
 * all at position POS; each weight matrix is passed once for up to eight
 * runs. 0 on success; -1 (and nothing changed) when any llama_step would
 * fail or a run appears twice. Calls on one model from several threads at
 * once are safe (those that find the helper busy use their own thread).
 */
int llama_step_batch(const struct llama_model *m, struct llama_run *const *runs, int n,
                     const int *tokens, int pos);

/*
 * COUNT (1 to LLAMA_MAX_BATCH) llama_step calls on R at once: TOKENS[i] at
 * position POS + i, each weight matrix passed once for all of them, each
 * position attending over the cache as its own step would (the positions
 * before it and itself), with the same bits. QUERY, when not NULL, gets
 * each position's queries after RoPE (n_layers * n_heads * head_size
 * floats a position, llama_run_query's rows in layer and head order);
 * LOGITS, when not NULL, each position's vocab_size logits; WEIGHTS, when
 * not NULL, each position's attention weights (llama_run_weights after its
 * step): n_layers * n_heads rows of C floats a position, C the slots R's
 * caches hold (llama_run_new_len's POSITIONS), of which the first are the
 * row's slots. R is then what
 * the last position's step leaves: its logits, queries and weights. 0 on
 * success; -1 (and nothing changed) when a llama_step would fail or memory
 * ran out.
 */
int llama_step_span(const struct llama_model *m, struct llama_run *r, const int *tokens, int count,
                    int pos, float *query, float *logits, float *weights);

/* After a step: the vocab_size logits. */
const float *llama_logits(const struct llama_run *r);
/* The position of the last step, -1 before the first. */
int llama_run_pos(const struct llama_run *r);

/*
 * The cache of layer LAYER, key/value head KV_HEAD: the number of slots it
 * holds and their positions, ascending; their key rows (after RoPE) and
 * value rows, head_size floats each, slot after slot. Valid until the next
 * step, keep or reset.
 */
int llama_run_len(const struct llama_run *r, int layer, int kv_head);
const int *llama_run_positions(const struct llama_run *r, int layer, int kv_head);
const float *llama_run_keys(const struct llama_run *r, int layer, int kv_head);
const float *llama_run_values(const struct llama_run *r, int layer, int kv_head);

/*
 * The last step's attention in layer LAYER, query head HEAD: its softmax
 * weights, one float per slot of the cache that head reads (kv head
 * HEAD / (n_heads / n_kv_heads)), in the order of llama_run_positions; they
 * are the floats that multiplied the value rows and sum to 1 up to
 * rounding. After a keep on that cache, the kept slots' weights, in order.
 * And the head's query row (after RoPE), head_size floats.
 */
const float *llama_run_weights(const struct llama_run *r, int layer, int head);
const float *llama_run_query(const struct llama_run *r, int layer, int head);

/* Keep, from R's next step on, every position's queries before RoPE (for
 * a rule that reads them, such as kvpress' ExpectedAttentionPress): 0, or
 * -1 when memory ran out. They take llama_run_prerope_bytes; a copy
 * (llama_run_copy) into a run that keeps them takes them along (and is
 * refused from a run that does not); one into a run that does not keep
 * them leaves them behind. */
int llama_run_keep_prerope(struct llama_run *r);
size_t llama_run_prerope_bytes(const struct llama_model *m, int positions);
/* Query head HEAD of LAYER's queries before RoPE, position p's head_size
 * floats at p * head_size (positions the run has stepped since it keeps
 * them), or NULL when R does not keep them. */
const float *llama_run_prerope(const struct llama_run *r, int layer, int head);
/* M's rotary embedding as its forward pass applies it: pair k of a head
 * (rows 2k and 2k + 1, or with *NEOX rows k and k + head_size / 2, as
 * GPT-NeoX and Qwen2 pair them) turns at position p by the float32
 * ((p * FREQ[k]) * *SCALE) / DIV[k]; FREQ and DIV get head_size / 2
 * floats. */
void llama_rope_of(const struct llama_model *m, float *freq, float *div, float *scale, int *neox);

/*
 * Evict from the cache of layer LAYER, key/value head KV_HEAD: keep only
 * the slots i < llama_run_len for which KEEP[i] != 0, in their order. The
 * next step of that layer attends over what is kept.
 */
void llama_run_keep(struct llama_run *r, int layer, int kv_head, const unsigned char *keep);

#endif
