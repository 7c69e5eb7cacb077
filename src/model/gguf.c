/*
 * gguf: reading a GGUF file's tables from untrusted bytes (gguf.h).
 *
 * One pass over the header, the metadata and the tensor table with a
 * cursor that never reads past the file's end: every length is compared
 * with the bytes left before it is used, and every count with the least
 * the entries it announces could take (a metadata entry at least 13 bytes,
 * a tensor at least 32, an array element its size), so what is allocated
 * is bounded by the file's size. Only string arrays get an index (the
 * offset of each element), so that element J is found at once. Tensors
 * must follow one another from the data section's start, each aligned,
 * as ggml writes them; their data is not read here.
 */
#include "h2o/gguf.h"
#include "model_impl.h"
#include "gguf_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define GGUF_MAX_ALIGNMENT 65536
#define GGUF_MAX_KEY       65535
/* The least bytes a metadata entry and a tensor entry take. */
#define KV_MIN_BYTES     13
#define TENSOR_MIN_BYTES 32

struct cursor {
	const unsigned char *p;
	uint64_t off, size;
	char *err;
};

static uint64_t left(const struct cursor *c)
{
	return c->size - c->off;
}

static int need(struct cursor *c, uint64_t n, const char *what)
{
	if (left(c) < n)
		return model_fail(c->err, "byte %llu: the file ends inside %s",
		                  (unsigned long long)c->off, what);
	return 0;
}

static int rd_u32(struct cursor *c, uint32_t *v, const char *what)
{
	if (need(c, 4, what) != 0)
		return -1;
	*v = (uint32_t)rd_le(c->p + c->off, 4);
	c->off += 4;
	return 0;
}

static int rd_u64(struct cursor *c, uint64_t *v, const char *what)
{
	if (need(c, 8, what) != 0)
		return -1;
	*v = rd_le(c->p + c->off, 8);
	c->off += 8;
	return 0;
}

static int rd_str(struct cursor *c, const char **s, uint64_t *len, uint64_t max, const char *what)
{
	const uint64_t at = c->off;
	if (rd_u64(c, len, what) != 0)
		return -1;
	if (*len > max)
		return model_fail(c->err, "byte %llu: %s is %llu bytes long, over %llu",
		                  (unsigned long long)at, what, (unsigned long long)*len,
		                  (unsigned long long)max);
	if (*len > left(c))
		return model_fail(c->err,
		                  "byte %llu: %s is %llu bytes long, past the file's end at %llu",
		                  (unsigned long long)at, what, (unsigned long long)*len,
		                  (unsigned long long)c->size);
	*s = (const char *)c->p + c->off;
	c->off += *len;
	return 0;
}

static const char *const type_names[] = {
        [0] = "F32",         [1] = "F16",       [2] = "Q4_0",        [3] = "Q4_1",
        [6] = "Q5_0",        [7] = "Q5_1",      [8] = "Q8_0",        [9] = "Q8_1",
        [10] = "Q2_K",       [11] = "Q3_K",     [12] = "Q4_K",       [13] = "Q5_K",
        [14] = "Q6_K",       [15] = "Q8_K",     [16] = "IQ2_XXS",    [17] = "IQ2_XS",
        [18] = "IQ3_XXS",    [19] = "IQ1_S",    [20] = "IQ4_NL",     [21] = "IQ3_S",
        [22] = "IQ2_S",      [23] = "IQ4_XS",   [24] = "I8",         [25] = "I16",
        [26] = "I32",        [27] = "I64",      [28] = "F64",        [29] = "IQ1_M",
        [30] = "BF16",       [31] = "Q4_0_4_4", [32] = "Q4_0_4_8",   [33] = "Q4_0_8_8",
        [34] = "TQ1_0",      [35] = "TQ2_0",    [36] = "IQ4_NL_4_4", [37] = "IQ4_NL_4_8",
        [38] = "IQ4_NL_8_8",
};

const char *gguf_type_name(uint32_t type, char buf[16])
{
	if (type < sizeof type_names / sizeof *type_names && type_names[type] != NULL)
		return type_names[type];
	snprintf(buf, 16, "type %u", (unsigned)type);
	return buf;
}

int ggml_block_elems(uint32_t type)
{
	switch (type) {
	case GGML_F32:
	case GGML_F16:
	case GGML_BF16:
		return 1;
	case GGML_Q4_0:
	case GGML_Q8_0:
		return 32;
	case GGML_Q4_K:
	case GGML_Q6_K:
		return 256;
	default:
		return 0;
	}
}

int ggml_block_bytes(uint32_t type)
{
	switch (type) {
	case GGML_F32:
		return 4;
	case GGML_F16:
	case GGML_BF16:
		return 2;
	case GGML_Q4_0:
		return 18;
	case GGML_Q8_0:
		return 34;
	case GGML_Q4_K:
		return 144;
	case GGML_Q6_K:
		return 210;
	default:
		return 0;
	}
}

bool gguf_magic(const void *data, size_t len)
{
	return len >= 4 && memcmp(data, "GGUF", 4) == 0;
}

static int cmp_name(const char *a, size_t al, const char *b, size_t bl)
{
	const int r = memcmp(a, b, al < bl ? al : bl);
	return r != 0 ? r : al < bl ? -1 : al > bl ? 1 : 0;
}

struct named {
	const char *s;
	size_t len;
	int i;
};

static int cmp_named(const void *pa, const void *pb)
{
	const struct named *a = pa, *b = pb;
	const int r = cmp_name(a->s, a->len, b->s, b->len);
	return r != 0 ? r : (a->i > b->i) - (a->i < b->i);
}

/* -1 with ERR filled when two of the N names are equal. */
static int check_unique(struct named *v, int n, const char *what, char *err)
{
	char buf[MODEL_SHOWN_MAX];
	if (n < 2)
		return 0;
	qsort(v, (size_t)n, sizeof *v, cmp_named);
	for (int i = 1; i < n; i++)
		if (cmp_name(v[i - 1].s, v[i - 1].len, v[i].s, v[i].len) == 0)
			return model_fail(err, "%s %d and %d are both \"%s\"", what, v[i - 1].i,
			                  v[i].i, model_shown(v[i].s, v[i].len, buf));
	return 0;
}

static int read_kv(struct cursor *c, struct kv *kv, int index)
{
	char what[64], buf[MODEL_SHOWN_MAX];
	uint64_t klen;
	uint32_t t;

	snprintf(what, sizeof what, "the key of metadata entry %d", index);
	if (rd_str(c, &kv->key, &klen, GGUF_MAX_KEY, what) != 0)
		return -1;
	kv->key_len = (size_t)klen;
	if (klen == 0)
		return model_fail(c->err, "byte %llu: metadata entry %d has an empty key",
		                  (unsigned long long)(c->off - 8), index);
	const char *k = model_shown(kv->key, kv->key_len, buf);
	const uint64_t tat = c->off;
	snprintf(what, sizeof what, "the type of metadata entry %d", index);
	if (rd_u32(c, &t, what) != 0)
		return -1;
	const int sb = scalar_bytes(t);
	if (sb < 0)
		return model_fail(c->err,
		                  "byte %llu: metadata \"%s\": value type %u is not one of GGUF's",
		                  (unsigned long long)tat, k, (unsigned)t);
	kv->type = (enum gguf_type)t;
	snprintf(what, sizeof what, "the value of metadata entry %d", index);
	if (t == GGUF_STRING) {
		const char *s;
		if (rd_str(c, &s, &kv->len, UINT64_MAX, what) != 0)
			return -1;
		kv->val = (const unsigned char *)s;
		return 0;
	}
	if (t != GGUF_ARRAY) {
		const uint64_t at = c->off;
		if (need(c, (uint64_t)sb, what) != 0)
			return -1;
		kv->val = c->p + c->off;
		c->off += (uint64_t)sb;
		if (t == GGUF_BOOL && kv->val[0] > 1)
			return model_fail(c->err,
			                  "byte %llu: metadata \"%s\": bool %u, must be 0 or 1",
			                  (unsigned long long)at, k, kv->val[0]);
		return 0;
	}
	uint32_t et;
	const uint64_t eat = c->off;
	if (rd_u32(c, &et, what) != 0)
		return -1;
	const int eb = scalar_bytes(et);
	if (eb < 0)
		return model_fail(
		        c->err,
		        "byte %llu: metadata \"%s\": array element type %u is not one of GGUF's",
		        (unsigned long long)eat, k, (unsigned)et);
	if (et == GGUF_ARRAY)
		return model_fail(c->err,
		                  "byte %llu: metadata \"%s\": arrays of arrays are not supported",
		                  (unsigned long long)eat, k);
	kv->el_type = (enum gguf_type)et;
	const uint64_t nat = c->off;
	if (rd_u64(c, &kv->n, what) != 0)
		return -1;
	/* A string element takes at least its 8-byte length. */
	const uint64_t least = et == GGUF_STRING ? 8 : (uint64_t)eb;
	if (kv->n > left(c) / least)
		return model_fail(
		        c->err,
		        "byte %llu: metadata \"%s\": %llu elements of at least %llu bytes "
		        "each, past the file's end at %llu",
		        (unsigned long long)nat, k, (unsigned long long)kv->n,
		        (unsigned long long)least, (unsigned long long)c->size);
	kv->val = c->p + c->off;
	if (et != GGUF_STRING) {
		c->off += kv->n * (uint64_t)eb;
		for (uint64_t j = 0; et == GGUF_BOOL && j < kv->n; j++)
			if (kv->val[j] > 1)
				return model_fail(
				        c->err,
				        "byte %llu: metadata \"%s\": element %llu: bool %u, "
				        "must be 0 or 1",
				        (unsigned long long)(c->off - kv->n + j), k,
				        (unsigned long long)j, kv->val[j]);
		return 0;
	}
	kv->str_off = malloc((size_t)(kv->n > 0 ? kv->n : 1) * sizeof *kv->str_off);
	if (kv->str_off == NULL)
		return model_fail(c->err, "out of memory for %llu strings",
		                  (unsigned long long)kv->n);
	for (uint64_t j = 0; j < kv->n; j++) {
		const char *s;
		uint64_t len;
		kv->str_off[j] = c->off;
		snprintf(what, sizeof what, "element %llu of metadata entry %d",
		         (unsigned long long)j, index);
		if (rd_str(c, &s, &len, UINT64_MAX, what) != 0)
			return -1;
	}
	return 0;
}

static int read_tensor(struct cursor *c, struct gguf_tensor *t, int index)
{
	char what[64], buf[MODEL_SHOWN_MAX], tb[16];
	uint64_t len;
	uint32_t nd, type;

	snprintf(what, sizeof what, "the name of tensor %d", index);
	if (rd_str(c, &t->name, &len, GGUF_MAX_NAME, what) != 0)
		return -1;
	t->name_len = (size_t)len;
	const char *nm = model_shown(t->name, t->name_len, buf);
	const uint64_t dat = c->off;
	if (rd_u32(c, &nd, "a tensor's dimensions") != 0)
		return -1;
	if (nd < 1 || nd > GGUF_MAX_DIMS)
		return model_fail(c->err,
		                  "byte %llu: tensor \"%s\": %u dimensions, must be 1 to %d",
		                  (unsigned long long)dat, nm, (unsigned)nd, GGUF_MAX_DIMS);
	t->n_dims = (int)nd;
	uint64_t total = 1;
	for (int d = 0; d < GGUF_MAX_DIMS; d++) {
		t->ne[d] = 1;
		if (d >= t->n_dims)
			continue;
		const uint64_t at = c->off;
		if (rd_u64(c, &t->ne[d], "a tensor's dimensions") != 0)
			return -1;
		if (t->ne[d] == 0 || t->ne[d] > ((uint64_t)1 << 62) / total)
			return model_fail(
			        c->err,
			        "byte %llu: tensor \"%s\": dimension %d is %llu, must be 1 "
			        "to %llu",
			        (unsigned long long)at, nm, d, (unsigned long long)t->ne[d],
			        (unsigned long long)(((uint64_t)1 << 62) / total));
		total *= t->ne[d];
	}
	const uint64_t tat = c->off;
	if (rd_u32(c, &type, "a tensor's type") != 0)
		return -1;
	const int be = ggml_block_elems(type), bb = ggml_block_bytes(type);
	if (be == 0)
		return model_fail(c->err,
		                  "byte %llu: tensor \"%s\": type %s is not supported (F32, F16, "
		                  "BF16, Q4_0, Q8_0, Q4_K and Q6_K are)",
		                  (unsigned long long)tat, nm, gguf_type_name(type, tb));
	t->type = (enum ggml_type)type;
	if (t->ne[0] % (uint64_t)be != 0)
		return model_fail(c->err,
		                  "byte %llu: tensor \"%s\": rows of %llu elements are not whole "
		                  "blocks of %d (%s)",
		                  (unsigned long long)tat, nm, (unsigned long long)t->ne[0], be,
		                  gguf_type_name(type, tb));
	/* total <= 2^62 and bb / be <= 4.5: no overflow. */
	t->bytes = total / (uint64_t)be * (uint64_t)bb;
	return rd_u64(c, &t->offset, "a tensor's offset");
}

static void free_tables(struct gguf_file *g)
{
	for (int i = 0; i < g->n_owned; i++)
		free(g->owned[i]);
	free(g->owned);
	for (int i = 0; i < g->n_maps; i++)
		munmap(g->maps[i].p, g->maps[i].size);
	for (int i = 0; g->kv != NULL && i < g->n_kv; i++)
		free(g->kv[i].str_off);
	free(g->kv);
	free(g->tensors);
	g->kv = NULL;
	g->tensors = NULL;
}

static int parse(struct gguf_file *g, char *err)
{
	struct cursor c = {.p = g->base, .size = g->size, .err = err};
	uint64_t n_tensors, n_kv;
	char buf[MODEL_SHOWN_MAX];

	if (g->size < 4 || !gguf_magic(g->base, (size_t)g->size))
		return model_fail(err,
		                  "byte 0: not a GGUF file (its first bytes are not \"GGUF\")");
	c.off = 4;
	if (rd_u32(&c, &g->version, "the header") != 0)
		return -1;
	if (g->version != 2 && g->version != 3)
		return model_fail(err, "byte 4: GGUF version %u, only 2 and 3 are read",
		                  (unsigned)g->version);
	if (rd_u64(&c, &n_tensors, "the header") != 0 || rd_u64(&c, &n_kv, "the header") != 0)
		return -1;
	if (n_tensors > left(&c) / TENSOR_MIN_BYTES || n_tensors > INT32_MAX)
		return model_fail(err, "byte 8: %llu tensors cannot fit in the file's %llu bytes",
		                  (unsigned long long)n_tensors, (unsigned long long)g->size);
	if (n_kv > left(&c) / KV_MIN_BYTES || n_kv > INT32_MAX)
		return model_fail(
		        err, "byte 16: %llu metadata entries cannot fit in the file's %llu bytes",
		        (unsigned long long)n_kv, (unsigned long long)g->size);
	g->n_kv = (int)n_kv;
	g->n_tensors = (int)n_tensors;
	g->kv = calloc((size_t)n_kv + 1, sizeof *g->kv);
	g->tensors = calloc((size_t)n_tensors + 1, sizeof *g->tensors);
	struct named *names =
	        malloc(((size_t)(n_kv > n_tensors ? n_kv : n_tensors) + 1) * sizeof *names);
	if (g->kv == NULL || g->tensors == NULL || names == NULL) {
		free(names);
		return model_fail(err, "out of memory for the tables of %llu entries",
		                  (unsigned long long)(n_kv + n_tensors));
	}
	for (int i = 0; i < g->n_kv; i++) {
		if (read_kv(&c, &g->kv[i], i) != 0) {
			free(names);
			return -1;
		}
		names[i] = (struct named){g->kv[i].key, g->kv[i].key_len, i};
	}
	if (check_unique(names, g->n_kv, "metadata entries", err) != 0) {
		free(names);
		return -1;
	}
	g->alignment = GGUF_DEFAULT_ALIGNMENT;
	const int ia = gguf_find(g, "general.alignment");
	if (ia >= 0) {
		const struct kv *kv = &g->kv[ia];
		const uint64_t a = kv->type == GGUF_UINT32 ? rd_le(kv->val, 4) : 0;
		if (kv->type != GGUF_UINT32 || a == 0 || (a & (a - 1)) != 0 ||
		    a > GGUF_MAX_ALIGNMENT) {
			free(names);
			return model_fail(
			        err,
			        "byte %llu: metadata \"general.alignment\" must be a uint32 "
			        "power of two up to %d",
			        (unsigned long long)(kv->val - g->base), GGUF_MAX_ALIGNMENT);
		}
		g->alignment = a;
	}
	for (int i = 0; i < g->n_tensors; i++) {
		if (read_tensor(&c, &g->tensors[i], i) != 0) {
			free(names);
			return -1;
		}
		names[i] = (struct named){g->tensors[i].name, g->tensors[i].name_len, i};
	}
	const int dup = check_unique(names, g->n_tensors, "tensors", err);
	free(names);
	if (dup != 0)
		return -1;

	/* The data section: from the table's end, aligned. */
	const uint64_t A = g->alignment, table_end = c.off;
	const uint64_t data = (table_end + A - 1) / A * A;
	uint64_t expect = 0;
	for (int i = 0; i < g->n_tensors; i++) {
		struct gguf_tensor *t = &g->tensors[i];
		const char *nm = model_shown(t->name, t->name_len, buf);
		if (t->offset != expect)
			return model_fail(
			        err,
			        "tensor \"%s\": data at offset %llu, expected %llu (tensors "
			        "follow one another, aligned to %llu)",
			        nm, (unsigned long long)t->offset, (unsigned long long)expect,
			        (unsigned long long)A);
		if (data > g->size || t->bytes > g->size - data ||
		    t->offset > g->size - data - t->bytes)
			return model_fail(
			        err,
			        "tensor \"%s\": %llu bytes of data at byte %llu, past the "
			        "file's end at %llu",
			        nm, (unsigned long long)t->bytes,
			        (unsigned long long)(data + t->offset),
			        (unsigned long long)g->size);
		t->data = g->base + data + t->offset;
		expect = (t->offset + t->bytes + A - 1) / A * A;
	}
	const uint64_t end = g->n_tensors > 0 ? data + expect : data;
	if (g->size > end)
		return model_fail(err, "byte %llu: %llu bytes after the last tensor's data",
		                  (unsigned long long)end, (unsigned long long)(g->size - end));
	return 0;
}

int gguf_open_bytes(const void *data, size_t len, struct gguf_file **out, char err[LLAMA_ERR_MAX])
{
	*out = NULL;
	if (data == NULL && len > 0)
		return model_fail(err, "no data");
	struct gguf_file *g = calloc(1, sizeof *g);
	if (g == NULL)
		return model_fail(err, "out of memory");
	g->base = data != NULL ? data : (const unsigned char *)"";
	g->size = len;
	if (parse(g, err) != 0) {
		gguf_close(g);
		return -1;
	}
	*out = g;
	return 0;
}

int gguf_open_fd(int fd, struct gguf_file **out, char err[LLAMA_ERR_MAX])
{
	struct stat st;

	*out = NULL;
	if (fstat(fd, &st) != 0)
		return model_fail(err, "cannot stat: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return model_fail(err, "not a regular file");
	if (st.st_size < 24)
		return model_fail(err, "file is %lld bytes, shorter than GGUF's 24-byte header",
		                  (long long)st.st_size);
	if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX)
		return model_fail(err, "file is too large to map");
	const size_t size = (size_t)st.st_size;
	void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return model_fail(err, "cannot map: %s", strerror(errno));
	if (gguf_open_bytes(map, size, out, err) != 0) {
		munmap(map, size);
		return -1;
	}
	(*out)->map = map;
	return 0;
}

int gguf_open(const char *path, struct gguf_file **out, char err[LLAMA_ERR_MAX])
{
	*out = NULL;
	const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return model_fail(err, "cannot open: %s", strerror(errno));
	const int rc = gguf_open_fd(fd, out, err);
	close(fd);
	return rc;
}

/* Whether [P, P + LEN) lies in the LEN bytes of mapping MAP. */
static bool within(const void *map, uint64_t size, const unsigned char *p, uint64_t len)
{
	const unsigned char *b = map;
	return map != NULL && p >= b && len <= size && (uint64_t)(p - b) <= size - len;
}

void gguf_release(const struct gguf_file *g, const void *p, uint64_t len)
{
	const unsigned char *c = p;
	bool owned = within(g->map, g->size, c, len);
	for (int i = 0; i < g->n_maps && !owned; i++)
		owned = within(g->maps[i].p, g->maps[i].size, c, len);
	const long page = sysconf(_SC_PAGESIZE);
	if (!owned || len == 0 || page <= 0)
		return;
	const uintptr_t a = (uintptr_t)c / (uintptr_t)page * (uintptr_t)page;
	const uintptr_t e =
	        ((uintptr_t)c + len + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
	/* Read-only private pages never written: dropping them loses nothing. */
	madvise((void *)a, e - a, MADV_DONTNEED);
}

bool gguf_owns_pages(const struct gguf_file *g)
{
	return g->map != NULL || g->n_maps > 0;
}

uint64_t gguf_meta_bytes(const struct gguf_file *g)
{
	if (g->map == NULL)
		return 0; /* tables made in memory, or the caller's bytes */
	if (g->n_tensors == 0)
		return g->size;
	const struct gguf_tensor *t = &g->tensors[0];
	return (uint64_t)(t->data - t->offset - g->base);
}

void gguf_close(struct gguf_file *g)
{
	if (g == NULL)
		return;
	free_tables(g);
	if (g->map != NULL)
		munmap(g->map, (size_t)g->size);
	free(g);
}
