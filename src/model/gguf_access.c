/*
 * gguf_access: questions about a GGUF file's tables once gguf.c has read
 * and checked them (gguf.h): metadata by key and type, array elements,
 * tensors by name; and tables made in memory for tests and for models
 * converted on load (gguf_synth_*), which gguf_close frees the same way.
 */
#include "h2o/gguf.h"
#include "model_impl.h"
#include "gguf_impl.h"

#include <stdlib.h>
#include <string.h>

uint32_t gguf_version(const struct gguf_file *g)
{
	return g->version;
}

uint64_t gguf_alignment(const struct gguf_file *g)
{
	return g->alignment;
}

int gguf_n_kv(const struct gguf_file *g)
{
	return g->n_kv;
}

const char *gguf_key(const struct gguf_file *g, int i, size_t *len)
{
	*len = g->kv[i].key_len;
	return g->kv[i].key;
}

int gguf_find(const struct gguf_file *g, const char *key)
{
	const size_t n = strlen(key);
	for (int i = 0; i < g->n_kv; i++)
		if (g->kv[i].key_len == n && memcmp(g->kv[i].key, key, n) == 0)
			return i;
	return -1;
}

enum gguf_type gguf_kv_type(const struct gguf_file *g, int i)
{
	return g->kv[i].type;
}

/* A scalar of type T at B as an integer: 0, or -1 for other types. */
static int as_int(enum gguf_type t, const unsigned char *b, int64_t *v)
{
	switch (t) {
	case GGUF_UINT8:
	case GGUF_BOOL:
		*v = b[0];
		return 0;
	case GGUF_INT8:
		*v = (int8_t)b[0];
		return 0;
	case GGUF_UINT16:
		*v = (int64_t)rd_le(b, 2);
		return 0;
	case GGUF_INT16:
		*v = (int16_t)(uint16_t)rd_le(b, 2);
		return 0;
	case GGUF_UINT32:
		*v = (int64_t)rd_le(b, 4);
		return 0;
	case GGUF_INT32:
		*v = (int32_t)(uint32_t)rd_le(b, 4);
		return 0;
	case GGUF_UINT64:
		if (rd_le(b, 8) > INT64_MAX)
			return -1;
		*v = (int64_t)rd_le(b, 8);
		return 0;
	case GGUF_INT64: {
		const uint64_t u = rd_le(b, 8);
		memcpy(v, &u, 8);
		return 0;
	}
	default:
		return -1;
	}
}

static int as_float(enum gguf_type t, const unsigned char *b, double *v)
{
	if (t == GGUF_FLOAT32) {
		const uint32_t u = (uint32_t)rd_le(b, 4);
		float f;
		memcpy(&f, &u, 4);
		*v = f;
		return 0;
	}
	if (t == GGUF_FLOAT64) {
		const uint64_t u = rd_le(b, 8);
		memcpy(v, &u, 8);
		return 0;
	}
	int64_t i;
	if (t == GGUF_BOOL || as_int(t, b, &i) != 0)
		return -1;
	*v = (double)i;
	return 0;
}

int gguf_get_int(const struct gguf_file *g, int i, int64_t *v)
{
	return as_int(g->kv[i].type, g->kv[i].val, v);
}

int gguf_get_u64(const struct gguf_file *g, int i, uint64_t *v)
{
	int64_t s;
	if (g->kv[i].type == GGUF_UINT64) {
		*v = rd_le(g->kv[i].val, 8);
		return 0;
	}
	if (as_int(g->kv[i].type, g->kv[i].val, &s) != 0 || s < 0)
		return -1;
	*v = (uint64_t)s;
	return 0;
}

int gguf_get_float(const struct gguf_file *g, int i, double *v)
{
	return as_float(g->kv[i].type, g->kv[i].val, v);
}

int gguf_get_str(const struct gguf_file *g, int i, const char **s, size_t *len)
{
	if (g->kv[i].type != GGUF_STRING)
		return -1;
	*s = (const char *)g->kv[i].val;
	*len = (size_t)g->kv[i].len;
	return 0;
}

int gguf_get_arr(const struct gguf_file *g, int i, enum gguf_type *type, uint64_t *n)
{
	if (g->kv[i].type != GGUF_ARRAY)
		return -1;
	*type = g->kv[i].el_type;
	*n = g->kv[i].n;
	return 0;
}

int gguf_get_arr_str(const struct gguf_file *g, int i, uint64_t j, const char **s, size_t *len)
{
	const struct kv *kv = &g->kv[i];
	if (kv->type != GGUF_ARRAY || kv->el_type != GGUF_STRING || j >= kv->n)
		return -1;
	const uint64_t at = kv->str_off[j];
	*len = (size_t)rd_le(g->base + at, 8);
	*s = (const char *)g->base + at + 8;
	return 0;
}

static const unsigned char *element(const struct kv *kv, uint64_t j)
{
	if (kv->type != GGUF_ARRAY || kv->el_type == GGUF_STRING || j >= kv->n)
		return NULL;
	return kv->val + j * (uint64_t)scalar_bytes(kv->el_type);
}

int gguf_get_arr_int(const struct gguf_file *g, int i, uint64_t j, int64_t *v)
{
	const unsigned char *b = element(&g->kv[i], j);
	return b == NULL ? -1 : as_int(g->kv[i].el_type, b, v);
}

int gguf_get_arr_float(const struct gguf_file *g, int i, uint64_t j, double *v)
{
	const unsigned char *b = element(&g->kv[i], j);
	return b == NULL ? -1 : as_float(g->kv[i].el_type, b, v);
}

int gguf_n_tensors(const struct gguf_file *g)
{
	return g->n_tensors;
}

const struct gguf_tensor *gguf_tensor(const struct gguf_file *g, int i)
{
	return &g->tensors[i];
}

const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *g, const char *name)
{
	const size_t n = strlen(name);
	for (int i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].name_len == n && memcmp(g->tensors[i].name, name, n) == 0)
			return &g->tensors[i];
	return NULL;
}

/* ---- tables made in memory ---------------------------------------------- */

struct gguf_file *gguf_synth_new(void)
{
	struct gguf_file *g = calloc(1, sizeof *g);
	if (g != NULL) {
		g->base = (const unsigned char *)"";
		g->version = 3;
		g->alignment = GGUF_DEFAULT_ALIGNMENT;
	}
	return g;
}

/* A copy of N bytes at P that G frees, or NULL. */
static void *own(struct gguf_file *g, const void *p, size_t n)
{
	void **o = realloc(g->owned, ((size_t)g->n_owned + 1) * sizeof *o);
	if (o == NULL)
		return NULL;
	g->owned = o;
	void *c = malloc(n + 1);
	if (c == NULL)
		return NULL;
	memcpy(c, p, n);
	((char *)c)[n] = '\0';
	g->owned[g->n_owned++] = c;
	return c;
}

static struct kv *synth_kv(struct gguf_file *g, const char *key, enum gguf_type t, const void *val,
                           size_t len)
{
	if (g->n_kv == g->cap_kv) {
		const int cap = g->cap_kv ? 2 * g->cap_kv : 16;
		struct kv *k = realloc(g->kv, (size_t)cap * sizeof *k);
		if (k == NULL)
			return NULL;
		g->kv = k;
		g->cap_kv = cap;
	}
	struct kv *kv = &g->kv[g->n_kv];
	memset(kv, 0, sizeof *kv);
	kv->key = own(g, key, strlen(key));
	kv->val = own(g, val, len);
	if (kv->key == NULL || kv->val == NULL)
		return NULL;
	kv->key_len = strlen(key);
	kv->type = t;
	kv->len = len;
	g->n_kv++;
	return kv;
}

int gguf_synth_u32(struct gguf_file *g, const char *key, uint32_t v)
{
	unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
	                      (unsigned char)(v >> 24)};
	return synth_kv(g, key, GGUF_UINT32, b, 4) != NULL ? 0 : -1;
}

int gguf_synth_f32(struct gguf_file *g, const char *key, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	unsigned char b[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16),
	                      (unsigned char)(u >> 24)};
	return synth_kv(g, key, GGUF_FLOAT32, b, 4) != NULL ? 0 : -1;
}

int gguf_synth_str(struct gguf_file *g, const char *key, const char *v)
{
	return synth_kv(g, key, GGUF_STRING, v, strlen(v)) != NULL ? 0 : -1;
}

int gguf_synth_tensor(struct gguf_file *g, const char *name, int n_dims, const uint64_t *ne,
                      enum ggml_type type, const unsigned char *data)
{
	if (g->n_tensors == g->cap_tensors) {
		const int cap = g->cap_tensors ? 2 * g->cap_tensors : 64;
		struct gguf_tensor *t = realloc(g->tensors, (size_t)cap * sizeof *t);
		if (t == NULL)
			return -1;
		g->tensors = t;
		g->cap_tensors = cap;
	}
	struct gguf_tensor *t = &g->tensors[g->n_tensors];
	memset(t, 0, sizeof *t);
	t->name = own(g, name, strlen(name));
	if (t->name == NULL)
		return -1;
	t->name_len = strlen(name);
	t->n_dims = n_dims;
	uint64_t total = 1;
	for (int d = 0; d < GGUF_MAX_DIMS; d++) {
		t->ne[d] = d < n_dims ? ne[d] : 1;
		total *= t->ne[d];
	}
	t->type = type;
	t->bytes = total / (uint64_t)ggml_block_elems(type) * (uint64_t)ggml_block_bytes(type);
	t->data = data;
	g->n_tensors++;
	return 0;
}

int gguf_synth_map(struct gguf_file *g, void *p, size_t size)
{
	if (g->n_maps == GGUF_SYNTH_MAX_MAPS)
		return -1;
	g->maps[g->n_maps].p = p;
	g->maps[g->n_maps].size = size;
	g->n_maps++;
	return 0;
}
