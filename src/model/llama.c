/*
 * llama: loading a llama2.c checkpoint from untrusted bytes (llama.h).
 *
 * The header's seven fields are checked one by one in file order, then how
 * they fit together (heads divide dim into an even head size, key/value
 * heads divide heads), then the sizes that follow from them, in 64-bit
 * arithmetic bounded by the limits: the weights' count, a run's caches,
 * and the file's exact length. Only then is anything allocated: one
 * aligned block for every weight, and a buffer of one panel's rows to
 * stream the file through. Each matrix is read panel by panel and packed
 * (model_impl.h); every float is checked finite as it is read, and an
 * error names its byte offset, its tensor, layer, row and column.
 */
#include "h2o/gguf.h"
#include "model_impl.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER_BYTES 28

/* Where the floats come from: a buffer, or a file being read. */
struct source {
	const unsigned char *mem;
	FILE *f;
	uint64_t off; /* bytes consumed, the header included */
	char *err;
	float *tmp;                /* MODEL_PANEL rows of the widest matrix */
	struct llama_limit *limit; /* the memory the model may take, or NULL */
};

static int32_t le32(const unsigned char *b)
{
	const uint32_t u =
	        (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	int32_t v;
	memcpy(&v, &u, sizeof v);
	return v;
}

static const char *const field_name[7] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                                          "n_kv_heads", "vocab_size", "seq_len"};
static const int field_max[7] = {LLAMA_MAX_DIM,   LLAMA_MAX_HIDDEN, LLAMA_MAX_LAYERS,
                                 LLAMA_MAX_HEADS, LLAMA_MAX_HEADS,  LLAMA_MAX_VOCAB,
                                 LLAMA_MAX_SEQ};

/* Floats of the packed matrices and the norm vectors of config C. */
static uint64_t packed_floats(int rows, int cols)
{
	return (uint64_t)packed_panels(rows) * MODEL_PANEL * (uint64_t)cols;
}

uint64_t model_packed_floats(int rows, int cols)
{
	return packed_floats(rows, cols);
}

static uint64_t model_floats(const struct llama_config *c)
{
	const uint64_t L = (uint64_t)c->n_layers;
	uint64_t n = packed_floats(c->vocab_size, c->dim) * (c->shared_classifier ? 1 : 2);
	n += L * (2 * packed_floats(c->dim, c->dim) + 2 * packed_floats(c->kv_dim, c->dim) +
	          2 * packed_floats(c->hidden_dim, c->dim) + packed_floats(c->dim, c->hidden_dim));
	return n + (2 * L + 1) * (uint64_t)c->dim;
}

/* Bytes of one run's caches and activations (forward.c allocates them). */
static uint64_t run_bytes(const struct llama_config *c)
{
	const uint64_t L = (uint64_t)c->n_layers, S = (uint64_t)c->seq_len;
	const uint64_t caches = L * (uint64_t)c->n_kv_heads, slots = caches * S;
	const uint64_t tiles = caches * (uint64_t)packed_panels(c->seq_len) * MODEL_PANEL;
	return 4 * (slots + (2 * slots + tiles) * (uint64_t)c->head_size +
	            L * (uint64_t)c->n_heads * S + L * (uint64_t)c->dim + 7 * (uint64_t)c->dim +
	            2 * (uint64_t)c->hidden_dim + (uint64_t)c->vocab_size);
}

static int check_header(const unsigned char *h, uint64_t len, struct llama_config *c, char *err)
{
	int v[7];

	if (len < HEADER_BYTES)
		return model_fail(err, "file is %llu bytes, shorter than the %d-byte header",
		                  (unsigned long long)len, HEADER_BYTES);
	for (int i = 0; i < 7; i++) {
		v[i] = le32(h + 4 * i);
		const int x = i == 5 && v[i] < 0 && v[i] != INT32_MIN ? -v[i] : v[i];
		if (x < 1 || x > field_max[i])
			return model_fail(err, "header field %s (byte %d): %d, must be 1 to %d%s",
			                  field_name[i], 4 * i, v[i], field_max[i],
			                  i == 5 ? " (negative: a separate classifier)" : "");
	}
	c->dim = v[0];
	c->hidden_dim = v[1];
	c->n_layers = v[2];
	c->n_heads = v[3];
	c->n_kv_heads = v[4];
	c->shared_classifier = v[5] > 0;
	c->vocab_size = v[5] > 0 ? v[5] : -v[5];
	c->seq_len = v[6];
	if (c->dim % c->n_heads != 0)
		return model_fail(err, "header field n_heads (byte 12): %d does not divide dim %d",
		                  c->n_heads, c->dim);
	c->head_size = c->dim / c->n_heads;
	if (c->head_size % 2 != 0)
		return model_fail(
		        err,
		        "header field n_heads (byte 12): head size %d (dim %d / %d heads) "
		        "is odd, RoPE rotates pairs",
		        c->head_size, c->dim, c->n_heads);
	if (c->n_heads % c->n_kv_heads != 0)
		return model_fail(
		        err, "header field n_kv_heads (byte 16): %d does not divide n_heads %d",
		        c->n_kv_heads, c->n_heads);
	c->kv_dim = c->n_kv_heads * c->head_size;

	/* Each product is below 2^40 under the limits: no overflow. */
	const uint64_t L = (uint64_t)c->n_layers, D = (uint64_t)c->dim;
	const uint64_t weights = (uint64_t)c->vocab_size * D * (c->shared_classifier ? 1 : 2) +
	                         L * (2 * D + 2 * D * D + 2 * (uint64_t)c->kv_dim * D +
	                              3 * (uint64_t)c->hidden_dim * D) +
	                         D;
	if (weights > LLAMA_MAX_WEIGHTS || model_floats(c) > LLAMA_MAX_WEIGHTS)
		return model_fail(err, "header: %llu weights, over the limit of %llu",
		                  (unsigned long long)weights,
		                  (unsigned long long)LLAMA_MAX_WEIGHTS);
	if (run_bytes(c) > 4 * (uint64_t)LLAMA_MAX_WEIGHTS)
		return model_fail(err,
		                  "header: a run's caches would take %llu bytes, over the limit",
		                  (unsigned long long)run_bytes(c));
	/* The two RoPE tables nothing reads: seq_len * head_size / 2 each. */
	const uint64_t rope = (uint64_t)c->seq_len * (uint64_t)c->head_size;
	const uint64_t want = HEADER_BYTES + 4 * (weights + rope);
	if (len != want)
		return model_fail(
		        err,
		        "file is %llu bytes, its header needs exactly %llu (dim %d, hidden %d, "
		        "%d layers, %d heads, %d kv heads, vocab %d, seq_len %d, %s)",
		        (unsigned long long)len, (unsigned long long)want, c->dim, c->hidden_dim,
		        c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len,
		        c->shared_classifier ? "shared classifier" : "own classifier");
	return 0;
}

/* Read N floats into DST, checking each finite; WHAT, LAYER (or -1) and
 * the first float's row and column (COLS per row) name them in errors. */
static int read_floats(struct source *s, float *dst, size_t n, const char *what, int layer,
                       int row0, int cols)
{
	const uint64_t at = s->off;

	if (s->mem != NULL) {
		memcpy(dst, s->mem + at, n * sizeof *dst);
	} else if (fread(dst, sizeof *dst, n, s->f) != n) {
		return model_fail(s->err, "byte %llu: the file ended while being read",
		                  (unsigned long long)at);
	}
	s->off += 4 * (uint64_t)n;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, dst + i, 4);
		u = __builtin_bswap32(u);
		memcpy(dst + i, &u, 4);
	}
#endif
	for (size_t i = 0; i < n; i++) {
		if (isfinite(dst[i]))
			continue;
		char in[32] = "";
		if (layer >= 0)
			snprintf(in, sizeof in, " of layer %d", layer);
		const char *val = isnan(dst[i]) ? "nan" : dst[i] > 0 ? "inf" : "-inf";
		const int row = row0 + (int)(i / (size_t)cols), col = (int)(i % (size_t)cols);
		if (cols == 1 || row0 < 0)
			return model_fail(s->err, "byte %llu: %s%s, element %zu, is %s",
			                  (unsigned long long)(at + 4 * i), what, in, i, val);
		return model_fail(s->err, "byte %llu: %s%s, row %d, column %d, is %s",
		                  (unsigned long long)(at + 4 * i), what, in, row, col, val);
	}
	return 0;
}

/* Read a ROWS x COLS matrix, row major, into the panels at DST. */
static int read_matrix(struct source *s, float *dst, struct packed *m, int rows, int cols,
                       const char *what, int layer)
{
	m->w = dst;
	m->rows = rows;
	m->cols = cols;
	for (int p = 0; p < packed_panels(rows); p++) {
		const int r0 = p * MODEL_PANEL;
		const int nr = rows - r0 < MODEL_PANEL ? rows - r0 : MODEL_PANEL;
		if (read_floats(s, s->tmp, (size_t)nr * (size_t)cols, what, layer, r0, cols) != 0)
			return -1;
		float *pan = dst + (size_t)p * (size_t)cols * MODEL_PANEL;
		for (int j = 0; j < cols; j++)
			for (int r = 0; r < MODEL_PANEL; r++)
				pan[(size_t)j * MODEL_PANEL + (size_t)r] =
				        r < nr ? s->tmp[(size_t)r * (size_t)cols + (size_t)j]
				               : 0.0f;
	}
	return 0;
}

/* Every tensor in file order, into M (whose config and block are set). */
static int read_weights(struct source *s, struct llama_model *m)
{
	const struct llama_config *c = &m->c;
	const int L = c->n_layers, D = c->dim, H = c->hidden_dim;
	float *at = m->mem;
	/* The norm vectors after the matrices, which stay 64-byte aligned. */
	float *norms = m->mem + (size_t)model_floats(c) - (2 * (size_t)L + 1) * (size_t)D;

#define MATRIX(field, rows, cols, name)                                                \
	for (int l = 0; l < L; l++) {                                                  \
		if (read_matrix(s, at, &m->layers[l].field, rows, cols, name, l) != 0) \
			return -1;                                                     \
		at += packed_floats(rows, cols);                                       \
	}
#define VECTORS(field, name)                                               \
	for (int l = 0; l < L; l++) {                                      \
		if (read_floats(s, norms, (size_t)D, name, l, -1, 1) != 0) \
			return -1;                                         \
		m->layers[l].field = norms;                                \
		norms += D;                                                \
	}

	if (read_matrix(s, at, &m->emb, c->vocab_size, D, "token_embedding", -1) != 0)
		return -1;
	at += packed_floats(c->vocab_size, D);
	VECTORS(rms_att, "rms_att")
	MATRIX(wq, D, D, "wq")
	MATRIX(wk, c->kv_dim, D, "wk")
	MATRIX(wv, c->kv_dim, D, "wv")
	MATRIX(wo, D, D, "wo")
	VECTORS(rms_ffn, "rms_ffn")
	MATRIX(w1, H, D, "w1")
	MATRIX(w2, D, H, "w2")
	MATRIX(w3, H, D, "w3")
#undef MATRIX
#undef VECTORS
	if (read_floats(s, norms, (size_t)D, "rms_final", -1, -1, 1) != 0)
		return -1;
	m->rms_final = norms;

	/* Skip the RoPE tables (not weights: never read, never checked). */
	const uint64_t rope = 4 * (uint64_t)c->seq_len * (uint64_t)c->head_size;
	if (s->mem == NULL && fseeko(s->f, (off_t)rope, SEEK_CUR) != 0)
		return model_fail(s->err, "byte %llu: cannot seek past the RoPE tables",
		                  (unsigned long long)s->off);
	s->off += rope;

	if (c->shared_classifier) {
		m->cls = m->emb;
		return 0;
	}
	return read_matrix(s, at, &m->cls, c->vocab_size, D, "classifier", -1);
}

/* The weights' block: 64-byte aligned, and in huge pages where the system
 * gives them on request: a step streams every weight, and 4 KiB pages would
 * cost a TLB miss every 4 KiB. A large block is a mapping of its own,
 * aligned to a huge page and whole huge pages long, so that no allocator's
 * header shares its first huge page and brings in one more
 * (model_held_bytes counts exactly those pages); model_free_weights gives
 * it back. */
#define HUGE_PAGE ((size_t)2 << 20)

float *model_alloc_weights(size_t bytes)
{
	if (bytes >= HUGE_PAGE) {
		const size_t size = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
		unsigned char *map = mmap(NULL, size + HUGE_PAGE, PROT_READ | PROT_WRITE,
		                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED)
			return NULL;
		const uintptr_t at = ((uintptr_t)map + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
		unsigned char *p = (unsigned char *)at;
		if (p > map)
			munmap(map, (size_t)(p - map));
		if (map + size + HUGE_PAGE > p + size)
			munmap(p + size, (size_t)(map + size + HUGE_PAGE - (p + size)));
#if defined(MADV_HUGEPAGE)
		madvise(p, size, MADV_HUGEPAGE); /* only a hint: failure is fine */
#endif
		return (float *)(void *)p;
	}
	return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

void model_free_weights(float *mem, size_t bytes)
{
	if (mem == NULL)
		return;
	if (bytes >= HUGE_PAGE)
		munmap(mem, (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
	else
		free(mem);
}

static int load(struct source *s, uint64_t len, struct llama_model **out)
{
	unsigned char h[HEADER_BYTES];
	struct llama_config c;

	*out = NULL;
	if (len >= HEADER_BYTES) {
		if (s->mem != NULL)
			memcpy(h, s->mem, HEADER_BYTES);
		else if (fread(h, 1, HEADER_BYTES, s->f) != HEADER_BYTES)
			return model_fail(s->err, "byte 0: the file ended while being read");
	}
	if (check_header(h, len, &c, s->err) != 0)
		return -1;
	s->off = HEADER_BYTES;

	struct llama_model *m = calloc(1, sizeof *m);
	if (m == NULL)
		return model_fail(s->err, "out of memory");
	m->c = c;
	m->a = (struct model_arch){
	        .q_dim = c.dim, .rope_theta = 10000.0f, .rope_scale = 1.0f, .norm_eps = 1e-5f};
	const size_t bytes = (size_t)model_floats(&c) * sizeof(float);
	const size_t widest = (size_t)(c.hidden_dim > c.dim ? c.hidden_dim : c.dim);
	/* Read through a stdio buffer into the block: the file's pages are
	 * the page cache's, not the process's; the scratch of a panel. */
	const size_t scratch = widest * MODEL_PANEL * sizeof(float) + BUFSIZ;
	const size_t held = model_held_bytes(bytes, 0, scratch, c.n_layers);
	const int too_large =
	        model_check_limit(model_floats(&c), (double)held, "as float32", s->limit, s->err);
	if (too_large != 0) {
		free(m);
		return too_large;
	}
	m->mem = model_alloc_weights(bytes);
	m->mem_bytes = bytes;
	m->held_bytes = held;
	m->layers = calloc((size_t)c.n_layers, sizeof *m->layers);
	s->tmp = malloc(widest * MODEL_PANEL * sizeof(float));
	if (m->mem == NULL || m->layers == NULL || s->tmp == NULL) {
		free(s->tmp);
		llama_free(m);
		return model_fail(s->err, "out of memory for %zu bytes of weights", bytes);
	}
	int rc = read_weights(s, m);
	free(s->tmp);
	if (rc == 0 && s->mem == NULL && fgetc(s->f) != EOF)
		rc = model_fail(s->err, "byte %llu: the file grew while being read",
		                (unsigned long long)len);
	if (rc != 0) {
		llama_free(m);
		return -1;
	}
	model_finish(m);
	*out = m;
	return 0;
}

int model_check_limit(uint64_t weights, double bytes, const char *form, struct llama_limit *limit,
                      char *err)
{
	if (limit == NULL || !(limit->max_bytes > 0))
		return 0;
	/* The model alone: a run's caches are the caller's to count, once
	 * it knows how long the run is (llama_run_bytes). */
	if (bytes <= limit->max_bytes)
		return 0;
	limit->needed = bytes;
	model_fail(err, "%.1f million weights %s", (double)weights / 1e6, form);
	return LLAMA_TOO_LARGE;
}

uint64_t model_pages(uint64_t len)
{
	/* A fault maps the pages around it too, up to Linux's fault_around_bytes
	 * (64 KiB) aligned: a range read may bring in a window more. */
	const uint64_t window = MODEL_FAULT_AROUND;
	return len == 0 ? 0 : (len + window - 1) / window * window + window;
}

size_t model_held_bytes(size_t block, uint64_t mapped, uint64_t loading, int n_layers)
{
	const size_t bytes = block >= HUGE_PAGE ? (block + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE
	                                        : (block + 63) / 64 * 64;
	return bytes + (size_t)n_layers * sizeof(struct layer_weights) +
	       sizeof(struct llama_model) + (size_t)mapped + (size_t)loading + MODEL_RUNTIME_BYTES;
}

size_t llama_model_bytes(const struct llama_model *m)
{
	return m->held_bytes;
}

void model_finish(struct llama_model *m)
{
	model_pick_kernels(&m->k);
	m->threads = LLAMA_THREADS_AUTO;
	m->pool = model_pool_new(); /* NULL: batches run on the calling thread */
}

int llama_load_bytes(const void *data, size_t len, struct llama_model **out,
                     char err[LLAMA_ERR_MAX])
{
	struct source s = {.mem = data, .err = err};

	if (data == NULL && len > 0)
		return model_fail(err, "no data");
	if (gguf_magic(data, len)) {
		struct gguf_file *g;
		*out = NULL;
		if (gguf_open_bytes(data, len, &g, err) != 0)
			return -1;
		/* DATA is the caller's: the model does not keep the file. */
		return gguf_model_load(g, 0, NULL, out, err);
	}
	return load(&s, len, out);
}

static int load_stream(struct source *s, uint64_t size, struct llama_model **out)
{
	const int rc = load(s, size, out);
	fclose(s->f);
	return rc;
}

/* A regular file FD that starts as GGUF files do: loaded as one. 1 when
 * it is not one (the llama2.c loader reads it), else the load's 0 or -1. */
static int load_if_gguf(int fd, struct llama_limit *limit, struct llama_model **out, char *err)
{
	struct stat st;
	unsigned char magic[4];

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    pread(fd, magic, sizeof magic, 0) != (ssize_t)sizeof magic ||
	    !gguf_magic(magic, sizeof magic))
		return 1;
	struct gguf_file *g;
	if (gguf_open_fd(fd, &g, err) != 0)
		return -1;
	return gguf_model_load(g, 1, limit, out, err);
}

int llama_load(const char *path, struct llama_model **out, char err[LLAMA_ERR_MAX])
{
	return llama_load_within(path, NULL, out, err);
}

int llama_load_within(const char *path, struct llama_limit *limit, struct llama_model **out,
                      char err[LLAMA_ERR_MAX])
{
	struct source s = {.err = err, .limit = limit};
	uint64_t size;
	struct stat st;

	*out = NULL;
	/* A folder with a config.json: a Hugging Face checkpoint. */
	char cfg[4096];
	snprintf(cfg, sizeof cfg, "%s/config.json", path);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && stat(cfg, &st) == 0)
		return hf_model_load(path, limit, out, err);
	if (model_open(path, &s.f, &size, err) != 0)
		return -1;
	const int rc = load_if_gguf(fileno(s.f), limit, out, err);
	if (rc != 1) {
		fclose(s.f);
		return rc;
	}
	return load_stream(&s, size, out);
}

int llama_load_fd(int fd, struct llama_model **out, char err[LLAMA_ERR_MAX])
{
	return llama_load_fd_within(fd, NULL, out, err);
}

int llama_load_fd_within(int fd, struct llama_limit *limit, struct llama_model **out,
                         char err[LLAMA_ERR_MAX])
{
	struct source s = {.err = err, .limit = limit};
	uint64_t size;

	*out = NULL;
	if (model_open_fd(fd, &s.f, &size, err) != 0)
		return -1;
	const int rc = load_if_gguf(fileno(s.f), limit, out, err);
	if (rc != 1) {
		fclose(s.f);
		return rc;
	}
	return load_stream(&s, size, out);
}

void llama_free(struct llama_model *m)
{
	if (m == NULL)
		return;
	model_pool_free(m->pool);
	gguf_close(m->gguf);
	free(m->layers);
	model_free_weights(m->mem, m->mem_bytes);
	free(m);
}

const struct llama_config *llama_model_config(const struct llama_model *m)
{
	return &m->c;
}

void llama_set_threads(struct llama_model *m, enum llama_threads mode)
{
	m->threads = mode;
}
