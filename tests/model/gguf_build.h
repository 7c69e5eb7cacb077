/*
 * gguf_build: GGUF files written in memory for the tests, byte by byte as
 * the format lays them out (header, metadata, tensor table, padding, data),
 * so that a test can build a good file and then break it one way.
 */
#ifndef H2O_TEST_GGUF_BUILD_H
#define H2O_TEST_GGUF_BUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct gb {
	unsigned char *b;
	size_t len, cap;
};

static inline void gb_bytes(struct gb *g, const void *p, size_t n)
{
	if (g->len + n > g->cap) {
		g->cap = (g->len + n) * 2 + 64;
		g->b = realloc(g->b, g->cap);
		if (g->b == NULL)
			abort();
	}
	if (n > 0)
		memcpy(g->b + g->len, p, n);
	g->len += n;
}

static inline void gb_le(struct gb *g, uint64_t v, int n)
{
	unsigned char b[8];
	for (int i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	gb_bytes(g, b, (size_t)n);
}

static inline void gb_u32(struct gb *g, uint32_t v)
{
	gb_le(g, v, 4);
}

static inline void gb_u64(struct gb *g, uint64_t v)
{
	gb_le(g, v, 8);
}

static inline void gb_f32(struct gb *g, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	gb_u32(g, u);
}

static inline void gb_str(struct gb *g, const char *s)
{
	gb_u64(g, strlen(s));
	gb_bytes(g, s, strlen(s));
}

static inline void gb_header(struct gb *g, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
	gb_bytes(g, "GGUF", 4);
	gb_u32(g, version);
	gb_u64(g, n_tensors);
	gb_u64(g, n_kv);
}

/* Metadata entries: the key, the type (GGUF numbers), the value. */
static inline void gb_kv_u32(struct gb *g, const char *key, uint32_t v)
{
	gb_str(g, key);
	gb_u32(g, 4);
	gb_u32(g, v);
}

static inline void gb_kv_f32(struct gb *g, const char *key, float v)
{
	gb_str(g, key);
	gb_u32(g, 6);
	gb_f32(g, v);
}

static inline void gb_kv_bool(struct gb *g, const char *key, int v)
{
	gb_str(g, key);
	gb_u32(g, 7);
	gb_le(g, (uint64_t)v, 1);
}

static inline void gb_kv_str(struct gb *g, const char *key, const char *v)
{
	gb_str(g, key);
	gb_u32(g, 8);
	gb_str(g, v);
}

static inline void gb_kv_arr_str(struct gb *g, const char *key, const char *const *v, int n)
{
	gb_str(g, key);
	gb_u32(g, 9);
	gb_u32(g, 8);
	gb_u64(g, (uint64_t)n);
	for (int i = 0; i < n; i++)
		gb_str(g, v[i]);
}

static inline void gb_kv_arr_i32(struct gb *g, const char *key, const int32_t *v, int n)
{
	gb_str(g, key);
	gb_u32(g, 9);
	gb_u32(g, 5);
	gb_u64(g, (uint64_t)n);
	for (int i = 0; i < n; i++)
		gb_u32(g, (uint32_t)v[i]);
}

static inline void gb_kv_arr_f32(struct gb *g, const char *key, const float *v, int n)
{
	gb_str(g, key);
	gb_u32(g, 9);
	gb_u32(g, 6);
	gb_u64(g, (uint64_t)n);
	for (int i = 0; i < n; i++)
		gb_f32(g, v[i]);
}

/* A tensor table entry: name, dimensions, ggml type, offset. */
static inline void gb_tensor(struct gb *g, const char *name, int nd, const uint64_t *ne,
                             uint32_t type, uint64_t offset)
{
	gb_str(g, name);
	gb_u32(g, (uint32_t)nd);
	for (int d = 0; d < nd; d++)
		gb_u64(g, ne[d]);
	gb_u32(g, type);
	gb_u64(g, offset);
}

/* Zeros up to a multiple of ALIGN. */
static inline void gb_pad(struct gb *g, size_t align)
{
	static const unsigned char z[64];
	while (g->len % align != 0)
		gb_bytes(g, z, 1);
}

/* F as a half-precision number (IEEE binary16) for F16 weights and Q8_0
 * scales: rounded toward zero, a signed zero below the smallest normal
 * half; F must be under 65504 in magnitude, which every caller keeps. */
static inline uint16_t gb_half(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	const uint32_t sign = (u >> 16) & 0x8000u;
	const int e = (int)((u >> 23) & 0xff) - 127 + 15;
	if (e <= 0)
		return (uint16_t)sign;
	return (uint16_t)(sign | (uint32_t)e << 10 | (u >> 13 & 0x3ffu));
}

#endif
