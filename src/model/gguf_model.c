/*
 * gguf_model: a llama-family model from a GGUF file (gguf.h) into the
 * model every other part of this stage runs (model_impl.h).
 *
 * Architectures: llama (Llama 2 and 3, SmolLM, TinyLlama; linear RoPE
 * scaling and Llama 3's rope_freqs), qwen2 (biases on q, k and v) and
 * qwen3 (queries and keys RMS-normed per head); any other is refused by
 * name. Everything the forward pass needs is read from the metadata
 * (ARCH.embedding_length, feed_forward_length, block_count,
 * attention.head_count, head_count_kv, key_length, value_length,
 * layer_norm_rms_epsilon, rope.freq_base, rope.dimension_count,
 * rope.scaling.*, context_length) and checked against the tensors' shapes;
 * a missing output.weight means the classifier is the token embedding.
 *
 * GGUF stores a llama model's Q and K rows permuted so that RoPE rotates
 * adjacent pairs, as llama2.c's run.c does; qwen2 and qwen3 keep the
 * Hugging Face order and rotate row i with row i + head_size / 2 (llama.cpp's
 * NEOX mode). So llama rotates pairs here and the qwens halves.
 *
 * The weights are checked finite row by row (quant.c) and packed into the
 * panels a llama2.c checkpoint is read into: F32 as floats, quantised and
 * half-precision matrices in their compact forms (model_pack.c), unless
 * H2O_WEIGHTS or the memory says otherwise (weights_form); the forward
 * pass and its kernels are shared.
 */
#include "h2o/gguf.h"
#include "model_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The positions a GGUF model's runs may hold: its context_length, up
 * to LLAMA_MAX_CONTEXT (llama.h); a run is sized to its text. */
#define GGUF_MAX_SEQ LLAMA_MAX_CONTEXT

enum arch { ARCH_LLAMA, ARCH_QWEN2, ARCH_QWEN3 };

struct ctx {
	struct gguf_file *g;
	const char *arch; /* its name, NUL-terminated */
	char *err;
	int used; /* tensors taken */
	unsigned char *taken;
	struct llama_limit *limit; /* the memory the model may take, or NULL */
	int keep;                  /* the file stays mapped as long as the model */
	int mapped;                /* and the weights are read from it (weights_form) */
	int compact;               /* quantised and half matrices compact (model_pack.c) */
};

/* ARCH.SUFFIX as an integer in [LO, HI]; DEF when missing (or -1 when
 * required: DEF < 0). */
static int meta_int(struct ctx *x, const char *suffix, int64_t lo, int64_t hi, int64_t def,
                    int *out)
{
	char key[128];
	int64_t v;

	snprintf(key, sizeof key, "%s.%s", x->arch, suffix);
	const int i = gguf_find(x->g, key);
	if (i < 0) {
		if (def < 0)
			return model_fail(x->err, "metadata \"%s\" is missing", key);
		*out = (int)def;
		return 0;
	}
	if (gguf_get_int(x->g, i, &v) != 0 || gguf_kv_type(x->g, i) == GGUF_BOOL)
		return model_fail(x->err, "metadata \"%s\" is not an integer", key);
	if (v < lo || v > hi)
		return model_fail(x->err, "metadata \"%s\" is %lld, must be %lld to %lld", key,
		                  (long long)v, (long long)lo, (long long)hi);
	*out = (int)v;
	return 0;
}

static int meta_float(struct ctx *x, const char *suffix, double lo, double hi, double def,
                      float *out)
{
	char key[128];
	double v;

	snprintf(key, sizeof key, "%s.%s", x->arch, suffix);
	const int i = gguf_find(x->g, key);
	if (i < 0) {
		*out = (float)def;
		return 0;
	}
	if (gguf_kv_type(x->g, i) == GGUF_BOOL || gguf_get_float(x->g, i, &v) != 0)
		return model_fail(x->err, "metadata \"%s\" is not a number", key);
	if (!(v >= lo && v <= hi))
		return model_fail(x->err, "metadata \"%s\" is %g, must be %g to %g", key, v, lo,
		                  hi);
	*out = (float)v;
	return 0;
}

/* The tensor NAME (printf-formatted with LAYER) of N_DIMS dimensions
 * NE0 x NE1, or NULL: absent (and not REQUIRED, else ERR), or of another
 * shape (ERR). *BAD is set on an error. */
static const struct gguf_tensor *tensor(struct ctx *x, const char *fmt, int layer, int required,
                                        uint64_t ne0, uint64_t ne1, int *bad)
{
	char name[96];

	snprintf(name, sizeof name, fmt, layer);
	const struct gguf_tensor *t = gguf_find_tensor(x->g, name);
	if (t == NULL) {
		if (required) {
			*bad = 1;
			model_fail(x->err, "tensor \"%s\" is missing", name);
		}
		return NULL;
	}
	const int nd = ne1 > 1 ? 2 : 1;
	if (!(t->n_dims == nd || (t->n_dims == 2 && nd == 1 && t->ne[1] == 1)) || t->ne[0] != ne0 ||
	    t->ne[1] != ne1) {
		*bad = 1;
		model_fail(x->err,
		           "tensor \"%s\" is %llu x %llu (%d dimensions), the metadata says "
		           "%llu x %llu",
		           name, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
		           t->n_dims, (unsigned long long)ne0, (unsigned long long)ne1);
		return NULL;
	}
	const int index = (int)(t - gguf_tensor(x->g, 0));
	if (!x->taken[index]) {
		x->taken[index] = 1;
		x->used++;
	}
	return t;
}

/* Row R of T, dequantised into DST (checked finite). */
static int row(struct ctx *x, const struct gguf_tensor *t, uint64_t r, float *dst)
{
	const uint64_t cols = t->ne[0];
	const uint64_t rb =
	        cols / (uint64_t)ggml_block_elems(t->type) * (uint64_t)ggml_block_bytes(t->type);
	dequant_row(t->type, t->data + r * rb, dst, (size_t)cols);
	for (uint64_t j = 0; j < cols; j++)
		if (!isfinite(dst[j])) {
			char tb[16], nb[MODEL_SHOWN_MAX];
			return model_fail(
			        x->err, "tensor \"%s\" (%s), row %llu, column %llu, is %s",
			        model_shown(t->name, t->name_len, nb), gguf_type_name(t->type, tb),
			        (unsigned long long)r, (unsigned long long)j,
			        isnan(dst[j]) ? "nan"
			        : dst[j] > 0  ? "inf"
			                      : "-inf");
		}
	return 0;
}

/* Whether T stays in the mapped file, read by the kernel as the file
 * stores it: the model reads its weights from the mapping (mapped_weights),
 * and T's type is not F32 (float rows are packed once either way). */
static int in_place(const struct ctx *x, const struct gguf_tensor *t)
{
	return x->mapped && t->type != GGML_F32;
}

/* Whether T is packed in its compact form (model_pack.c). */
static int compact(const struct ctx *x, const struct gguf_tensor *t)
{
	return x->compact && !in_place(x, t) && model_compact_type((int)t->type);
}

/*
 * How the quantised and half-precision matrices are held: packed in their
 * compact forms (model_pack.c: a byte or two a weight, the default), read
 * from the mapping of a model kept mapped (KEEP) when even those BYTES
 * would take more than half the machine's memory, or as H2O_WEIGHTS says
 * (compact, unpacked: float32 panels, 4 bytes a weight; mapped: KEEP
 * only). Every form gives the same logits, bit for bit (the tests hold
 * them to it); they differ in speed (docs/gguf.md).
 */
static void weights_form(struct ctx *x)
{
	const char *want = getenv("H2O_WEIGHTS");
	x->mapped = 0;
	x->compact = !(want != NULL && strcmp(want, "unpacked") == 0);
}

/* Whether, BYTES being the block's size in the form weights_form chose,
 * the weights are read from the mapping instead. */
static int weights_mapped(const struct ctx *x, uint64_t bytes)
{
	const char *want = getenv("H2O_WEIGHTS");
	if (!x->keep)
		return 0;
	if (want != NULL && *want != '\0')
		return strcmp(want, "mapped") == 0;
	const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	return pages > 0 && page > 0 && (double)bytes > (double)pages * (double)page / 2;
}

/* The floats T takes in the model's block: none in place. */
static uint64_t floats_of(const struct ctx *x, const struct gguf_tensor *t)
{
	if (t == NULL || in_place(x, t))
		return 0;
	if (compact(x, t))
		return model_compact_floats((int)t->type, (int)t->ne[1], (int)t->ne[0]);
	return model_packed_floats((int)t->ne[1], (int)t->ne[0]);
}

/* T (rows x cols) into the panels at DST, or (in place) its rows checked
 * finite and M pointing at them. */
static int pack(struct ctx *x, const struct gguf_tensor *t, float *dst, struct packed *m,
                float *tmp)
{
	const int rows = (int)t->ne[1], cols = (int)t->ne[0];
	m->w = dst;
	m->rows = rows;
	m->cols = cols;
	if (in_place(x, t)) {
		m->w = NULL;
		m->q = t->data;
		m->qtype = (int)t->type;
		m->row_bytes = (size_t)cols / (size_t)ggml_block_elems(t->type) *
		               (size_t)ggml_block_bytes(t->type);
		for (int r = 0; r < rows; r++)
			if (row(x, t, (uint64_t)r, tmp) != 0)
				return -1;
		return 0;
	}
	if (compact(x, t)) {
		const size_t rb = (size_t)cols / (size_t)ggml_block_elems(t->type) *
		                  (size_t)ggml_block_bytes(t->type);
		for (int r = 0; r < rows; r++)
			if (row(x, t, (uint64_t)r, tmp) != 0)
				return -1;
		if (model_pack_compact((int)t->type, t->data, rb, rows, cols, dst, m) != 0)
			return model_fail(x->err, "out of memory");
		return 0;
	}
	for (int p = 0; p < packed_panels(rows); p++) {
		const int r0 = p * MODEL_PANEL;
		const int nr = rows - r0 < MODEL_PANEL ? rows - r0 : MODEL_PANEL;
		for (int r = 0; r < nr; r++)
			if (row(x, t, (uint64_t)(r0 + r), tmp + (size_t)r * (size_t)cols) != 0)
				return -1;
		float *pan = dst + (size_t)p * (size_t)cols * MODEL_PANEL;
		for (int j = 0; j < cols; j++)
			for (int r = 0; r < MODEL_PANEL; r++)
				pan[(size_t)j * MODEL_PANEL + (size_t)r] =
				        r < nr ? tmp[(size_t)r * (size_t)cols + (size_t)j] : 0.0f;
	}
	return 0;
}

/* The tensors of one layer, or the model's own (layer -1). */
struct layer_tensors {
	const struct gguf_tensor *att_norm, *ffn_norm, *q, *k, *v, *o, *gate, *up, *down;
	const struct gguf_tensor *bq, *bk, *bv, *q_norm, *k_norm;
};

static int find_layer(struct ctx *x, enum arch arch, const struct llama_config *c, int q_dim, int l,
                      struct layer_tensors *t)
{
	const uint64_t D = (uint64_t)c->dim, Q = (uint64_t)q_dim, K = (uint64_t)c->kv_dim;
	const uint64_t H = (uint64_t)c->hidden_dim, hs = (uint64_t)c->head_size;
	int bad = 0;

	t->att_norm = tensor(x, "blk.%d.attn_norm.weight", l, 1, D, 1, &bad);
	if (!bad)
		t->q = tensor(x, "blk.%d.attn_q.weight", l, 1, D, Q, &bad);
	if (!bad)
		t->k = tensor(x, "blk.%d.attn_k.weight", l, 1, D, K, &bad);
	if (!bad)
		t->v = tensor(x, "blk.%d.attn_v.weight", l, 1, D, K, &bad);
	if (!bad)
		t->o = tensor(x, "blk.%d.attn_output.weight", l, 1, Q, D, &bad);
	if (!bad)
		t->ffn_norm = tensor(x, "blk.%d.ffn_norm.weight", l, 1, D, 1, &bad);
	if (!bad)
		t->gate = tensor(x, "blk.%d.ffn_gate.weight", l, 1, D, H, &bad);
	if (!bad)
		t->up = tensor(x, "blk.%d.ffn_up.weight", l, 1, D, H, &bad);
	if (!bad)
		t->down = tensor(x, "blk.%d.ffn_down.weight", l, 1, H, D, &bad);
	const int need_bias = arch == ARCH_QWEN2, need_norm = arch == ARCH_QWEN3;
	if (!bad)
		t->bq = tensor(x, "blk.%d.attn_q.bias", l, need_bias, Q, 1, &bad);
	if (!bad)
		t->bk = tensor(x, "blk.%d.attn_k.bias", l, need_bias, K, 1, &bad);
	if (!bad)
		t->bv = tensor(x, "blk.%d.attn_v.bias", l, need_bias, K, 1, &bad);
	if (!bad && (t->bq == NULL) != (t->bk == NULL))
		return model_fail(x->err, "layer %d has a bias for q or k but not both", l);
	if (!bad)
		t->q_norm = tensor(x, "blk.%d.attn_q_norm.weight", l, need_norm, hs, 1, &bad);
	if (!bad)
		t->k_norm = tensor(x, "blk.%d.attn_k_norm.weight", l, need_norm, hs, 1, &bad);
	if (!bad && (t->q_norm == NULL) != (t->k_norm == NULL))
		return model_fail(x->err, "layer %d has a norm for q or k but not both", l);
	return bad ? -1 : 0;
}

/* The metadata into C and A. */
static int read_config(struct ctx *x, enum arch arch, struct llama_config *c, struct model_arch *a)
{
	int v;

	if (meta_int(x, "embedding_length", 1, LLAMA_MAX_DIM, -1, &c->dim) != 0 ||
	    meta_int(x, "feed_forward_length", 1, LLAMA_MAX_HIDDEN, -1, &c->hidden_dim) != 0 ||
	    meta_int(x, "block_count", 1, LLAMA_MAX_LAYERS, -1, &c->n_layers) != 0 ||
	    meta_int(x, "attention.head_count", 1, LLAMA_MAX_HEADS, -1, &c->n_heads) != 0 ||
	    meta_int(x, "attention.head_count_kv", 1, LLAMA_MAX_HEADS, c->n_heads,
	             &c->n_kv_heads) != 0 ||
	    meta_int(x, "context_length", 1, INT32_MAX, -1, &v) != 0)
		return -1;
	c->seq_len = v < GGUF_MAX_SEQ ? v : GGUF_MAX_SEQ;
	if (c->n_heads % c->n_kv_heads != 0)
		return model_fail(x->err,
		                  "metadata \"%s.attention.head_count_kv\": %d does not divide "
		                  "the %d query heads",
		                  x->arch, c->n_kv_heads, c->n_heads);
	const int def_hs = c->dim % c->n_heads == 0 ? c->dim / c->n_heads : -1;
	if (meta_int(x, "attention.key_length", 2, 1024, def_hs, &c->head_size) != 0)
		return -1;
	if (meta_int(x, "attention.value_length", 2, 1024, c->head_size, &v) != 0)
		return -1;
	if (v != c->head_size)
		return model_fail(x->err,
		                  "metadata \"%s.attention.value_length\": %d, not the key length "
		                  "%d",
		                  x->arch, v, c->head_size);
	if (c->head_size % 2 != 0)
		return model_fail(x->err, "head size %d is odd, RoPE rotates pairs", c->head_size);
	if (meta_int(x, "rope.dimension_count", 1, 1024, c->head_size, &v) != 0)
		return -1;
	if (v != c->head_size)
		return model_fail(x->err,
		                  "metadata \"%s.rope.dimension_count\": %d, RoPE on part of a "
		                  "head (of %d) is not supported",
		                  x->arch, v, c->head_size);
	c->kv_dim = c->n_kv_heads * c->head_size;
	a->q_dim = c->n_heads * c->head_size;
	/* A Hugging Face checkpoint's llama keeps its Q/K rows unpermuted
	 * (hf.c says so): rotated as the qwens are. */
	a->neox = arch != ARCH_LLAMA || gguf_find(x->g, "h2o.hf_rows") >= 0;
	if (meta_float(x, "rope.freq_base", 1.0, 1e12, 10000.0, &a->rope_theta) != 0 ||
	    meta_float(x, "attention.layer_norm_rms_epsilon", 1e-12, 1.0, 1e-5, &a->norm_eps) != 0)
		return -1;
	a->rope_scale = 1.0f;
	char key[128];
	snprintf(key, sizeof key, "%s.rope.scaling.type", x->arch);
	const int it = gguf_find(x->g, key);
	const char *s = "none";
	size_t len = 4;
	if (it >= 0 && gguf_get_str(x->g, it, &s, &len) != 0)
		return model_fail(x->err, "metadata \"%s\" is not a string", key);
	float factor;
	if (meta_float(x, "rope.scaling.factor", 1e-6, 1e6, 0.0, &factor) != 0)
		return -1;
	if (len == 6 && memcmp(s, "linear", 6) == 0) {
		if (factor > 0.0f)
			a->rope_scale = 1.0f / factor;
	} else if (!(len == 4 && memcmp(s, "none", 4) == 0)) {
		return model_fail(x->err,
		                  "metadata \"%s\": RoPE scaling \"%.*s\" is not supported (none "
		                  "and linear are)",
		                  key, len > 20 ? 20 : (int)len, s);
	}
	return 0;
}

/* The model's block: VECTORS and the matrices as X holds them. */
static uint64_t block_floats(const struct ctx *x, const struct gguf_tensor *emb,
                             const struct gguf_tensor *out, const struct layer_tensors *lt,
                             int n_layers, uint64_t vectors)
{
	uint64_t block = vectors + floats_of(x, emb) + floats_of(x, out);
	for (int l = 0; l < n_layers; l++)
		block += floats_of(x, lt[l].q) + floats_of(x, lt[l].k) + floats_of(x, lt[l].v) +
		         floats_of(x, lt[l].o) + floats_of(x, lt[l].gate) +
		         floats_of(x, lt[l].down) + floats_of(x, lt[l].up);
	return block;
}

/* The bytes of the file the model reads in place, and keeps mapped: the
 * tensors its kernels read (every page of them touched by the first pass,
 * and by the load's check that they are finite) and, for a model keeping
 * its file, the metadata the tokenizer may read from it again. */
static uint64_t mapped_bytes(const struct ctx *x)
{
	if (!gguf_owns_pages(x->g))
		return 0; /* the caller's bytes */
	uint64_t bytes = x->keep ? model_pages(gguf_meta_bytes(x->g)) : 0;
	for (int i = 0; i < gguf_n_tensors(x->g); i++) {
		const struct gguf_tensor *t = gguf_tensor(x->g, i);
		if (in_place(x, t))
			bytes += model_pages(t->bytes);
	}
	return bytes;
}

/* What loading holds besides the block and the mapped tensors, at its
 * peak: the pages of the largest tensor copied (read, then given back,
 * gguf_release), a window of each before it (model_pages), the panel of
 * WIDEST floats it is read through and a compact form's scratch
 * (model_pack.c: a row's bytes and its scales). */
static uint64_t loading_bytes(const struct ctx *x, size_t widest)
{
	uint64_t largest = 0, copied = 0;
	for (int i = 0; gguf_owns_pages(x->g) && i < gguf_n_tensors(x->g); i++) {
		const struct gguf_tensor *t = gguf_tensor(x->g, i);
		if (in_place(x, t))
			continue;
		copied++;
		if (model_pages(t->bytes) > largest)
			largest = model_pages(t->bytes);
	}
	/* Reading a tensor maps the window before it again, of a tensor
	 * given back already: one window a tensor until the last sweep. */
	return largest + copied * MODEL_FAULT_AROUND +
	       (uint64_t)widest * MODEL_PANEL * sizeof(float) +
	       3 * (uint64_t)widest * sizeof(float);
}

/* Floats for the matrices of C (A's widths) and the vectors after them. */
static uint64_t weight_floats(const struct llama_config *c, const struct model_arch *a,
                              uint64_t vectors)
{
	const uint64_t L = (uint64_t)c->n_layers;
	uint64_t n = model_packed_floats(c->vocab_size, c->dim) * (c->shared_classifier ? 1 : 2);
	n += L *
	     (model_packed_floats(a->q_dim, c->dim) + 2 * model_packed_floats(c->kv_dim, c->dim) +
	      model_packed_floats(c->dim, a->q_dim) +
	      2 * model_packed_floats(c->hidden_dim, c->dim) +
	      model_packed_floats(c->dim, c->hidden_dim));
	return n + vectors;
}

static int build(struct ctx *x, enum arch arch, struct llama_model *m)
{
	struct llama_config *c = &m->c;
	struct model_arch *a = &m->a;
	int bad = 0;

	if (read_config(x, arch, c, a) != 0)
		return -1;
	const struct gguf_tensor *emb = gguf_find_tensor(x->g, "token_embd.weight");
	if (emb == NULL)
		return model_fail(x->err, "tensor \"token_embd.weight\" is missing");
	if (emb->ne[1] < 1 || emb->ne[1] > LLAMA_MAX_VOCAB)
		return model_fail(x->err,
		                  "tensor \"token_embd.weight\": %llu tokens, must be 1 to %d",
		                  (unsigned long long)emb->ne[1], LLAMA_MAX_VOCAB);
	c->vocab_size = (int)emb->ne[1];
	int v;
	if (meta_int(x, "vocab_size", c->vocab_size, c->vocab_size, c->vocab_size, &v) != 0)
		return -1;
	const uint64_t D = (uint64_t)c->dim, V = (uint64_t)c->vocab_size;
	emb = tensor(x, "token_embd.weight", 0, 1, D, V, &bad);
	const struct gguf_tensor *onorm =
	        bad ? NULL : tensor(x, "output_norm.weight", 0, 1, D, 1, &bad);
	const struct gguf_tensor *out = bad ? NULL : tensor(x, "output.weight", 0, 0, D, V, &bad);
	const struct gguf_tensor *freqs =
	        bad ? NULL
	            : tensor(x, "rope_freqs.weight", 0, 0, (uint64_t)c->head_size / 2, 1, &bad);
	if (bad)
		return -1;
	c->shared_classifier = out == NULL;

	struct layer_tensors *lt = calloc((size_t)c->n_layers, sizeof *lt);
	if (lt == NULL)
		return model_fail(x->err, "out of memory");
	uint64_t vectors = D + (freqs != NULL ? (uint64_t)c->head_size / 2 : 0);
	for (int l = 0; l < c->n_layers; l++) {
		if (find_layer(x, arch, c, a->q_dim, l, &lt[l]) != 0) {
			free(lt);
			return -1;
		}
		vectors += 2 * D;
		if (lt[l].bq != NULL)
			vectors += (uint64_t)a->q_dim + 2 * (uint64_t)c->kv_dim;
		else if (lt[l].bv != NULL)
			vectors += (uint64_t)c->kv_dim;
		if (lt[l].q_norm != NULL)
			vectors += 2 * (uint64_t)c->head_size;
	}
	if (x->used != gguf_n_tensors(x->g)) {
		for (int i = 0; i < gguf_n_tensors(x->g); i++)
			if (!x->taken[i]) {
				const struct gguf_tensor *t = gguf_tensor(x->g, i);
				char buf[MODEL_SHOWN_MAX];
				model_shown(t->name, t->name_len, buf);
				free(lt);
				return model_fail(x->err, "tensor \"%s\" is not part of a %s model",
				                  buf, x->arch);
			}
	}
	const uint64_t floats = weight_floats(c, a, vectors);
	if (floats > LLAMA_MAX_WEIGHTS) {
		free(lt);
		return model_fail(x->err, "%llu weights, over the limit of %llu",
		                  (unsigned long long)floats,
		                  (unsigned long long)LLAMA_MAX_WEIGHTS);
	}
	weights_form(x);
	uint64_t block = block_floats(x, emb, out, lt, c->n_layers, vectors);
	if (weights_mapped(x, block * sizeof(float))) {
		x->mapped = 1;
		block = block_floats(x, emb, out, lt, c->n_layers, vectors);
	}
	const size_t widest =
	        (size_t)(c->hidden_dim > c->dim ? c->hidden_dim : c->dim) > (size_t)a->q_dim
	                ? (size_t)(c->hidden_dim > c->dim ? c->hidden_dim : c->dim)
	                : (size_t)a->q_dim;
	/* What the model will hold in the form chosen, refused before any
	 * weight is read or the block allocated (a run is the caller's to
	 * count). */
	const size_t held = model_held_bytes((size_t)block * sizeof(float), mapped_bytes(x),
	                                     loading_bytes(x, widest), c->n_layers);
	const int too_large =
	        model_check_limit(floats, (double)held,
	                          x->mapped         ? "read from the file's mapping"
	                          : block == floats ? "as float32"
	                                            : "packed compact (a byte or two a weight)",
	                          x->limit, x->err);
	if (too_large != 0) {
		free(lt);
		return too_large;
	}
	m->mem = model_alloc_weights((size_t)block * sizeof(float));
	m->mem_bytes = (size_t)block * sizeof(float);
	m->held_bytes = held;
	m->layers = calloc((size_t)c->n_layers, sizeof *m->layers);
	float *tmp = malloc(widest * MODEL_PANEL * sizeof(float));
	if (m->mem == NULL || m->layers == NULL || tmp == NULL) {
		free(tmp);
		free(lt);
		return model_fail(x->err, "out of memory for %llu bytes of weights",
		                  (unsigned long long)block * 4);
	}
	float *at = m->mem, *vec = m->mem + (block - vectors);
	int rc = 0;
	/* Each tensor copied is given back to the file once copied. */
#define PACK(t, dst)                                                     \
	do {                                                             \
		if (rc == 0 && (rc = pack(x, (t), at, (dst), tmp)) == 0) \
			at += floats_of(x, (t));                         \
		if (!in_place(x, (t)))                                   \
			gguf_release(x->g, (t)->data, (t)->bytes);       \
	} while (0)
#define VEC(t, dst)                                                \
	do {                                                       \
		if (rc == 0 && (t) != NULL) {                      \
			rc = row(x, (t), 0, vec);                  \
			(dst) = vec;                               \
			vec += (t)->ne[0];                         \
			gguf_release(x->g, (t)->data, (t)->bytes); \
		}                                                  \
	} while (0)
	PACK(emb, &m->emb);
	for (int l = 0; l < c->n_layers; l++) {
		struct layer_weights *w = &m->layers[l];
		PACK(lt[l].q, &w->wq);
		PACK(lt[l].k, &w->wk);
		PACK(lt[l].v, &w->wv);
		PACK(lt[l].o, &w->wo);
		PACK(lt[l].gate, &w->w1);
		PACK(lt[l].down, &w->w2);
		PACK(lt[l].up, &w->w3);
		VEC(lt[l].att_norm, w->rms_att);
		VEC(lt[l].ffn_norm, w->rms_ffn);
		VEC(lt[l].bq, w->bq);
		VEC(lt[l].bk, w->bk);
		VEC(lt[l].bv, w->bv);
		VEC(lt[l].q_norm, w->q_norm);
		VEC(lt[l].k_norm, w->k_norm);
	}
	VEC(onorm, m->rms_final);
	VEC(freqs, a->rope_freqs);
	if (out != NULL)
		PACK(out, &m->cls);
	else
		m->cls = m->emb;
#undef PACK
#undef VEC
	/* The windows reading each tensor brought back of the one before. */
	for (int i = 0; i < gguf_n_tensors(x->g); i++) {
		const struct gguf_tensor *t = gguf_tensor(x->g, i);
		if (!in_place(x, t))
			gguf_release(x->g, t->data, t->bytes);
	}
	free(tmp);
	free(lt);
	return rc;
}

int gguf_model_load(struct gguf_file *g, int keep, struct llama_limit *limit,
                    struct llama_model **out, char *err)
{
	static const char *const names[] = {"llama", "qwen2", "qwen3"};
	char arch[32];
	const char *s;
	size_t len;

	*out = NULL;
	const int ia = gguf_find(g, "general.architecture");
	if (ia < 0 || gguf_get_str(g, ia, &s, &len) != 0) {
		gguf_close(g);
		return model_fail(err, "metadata \"general.architecture\" is %s",
		                  ia < 0 ? "missing" : "not a string");
	}
	int which = -1;
	for (int i = 0; i < 3; i++)
		if (len == strlen(names[i]) && memcmp(s, names[i], len) == 0)
			which = i;
	if (which < 0) {
		char buf[MODEL_SHOWN_MAX];
		model_shown(s, len, buf);
		gguf_close(g);
		return model_fail(
		        err, "architecture \"%s\" is not supported (llama, qwen2 and qwen3 are)",
		        buf);
	}
	snprintf(arch, sizeof arch, "%s", names[which]);

	struct llama_model *m = calloc(1, sizeof *m);
	struct ctx x = {.g = g, .arch = arch, .err = err, .limit = limit, .keep = keep};
	x.taken = calloc((size_t)gguf_n_tensors(g) + 1, 1);
	if (m == NULL || x.taken == NULL) {
		free(m);
		free(x.taken);
		gguf_close(g);
		return model_fail(err, "out of memory");
	}
	const int rc = build(&x, (enum arch)which, m);
	free(x.taken);
	if (rc != 0) {
		gguf_close(g);
		llama_free(m);
		return rc == LLAMA_TOO_LARGE ? rc : -1;
	}
	if (keep)
		m->gguf = g;
	else
		gguf_close(g);
	model_finish(m);
	*out = m;
	return 0;
}
