/*
 * gguf_impl: what the GGUF reader's two files share (private to
 * src/model/): gguf.c reads a file's header, metadata and tensor table
 * from untrusted bytes into a struct gguf_file; gguf_access.c answers
 * questions about the tables read, and makes tables in memory
 * (gguf_synth_*). Nothing here reads past the bytes gguf.c checked.
 */
#ifndef H2O_GGUF_IMPL_H
#define H2O_GGUF_IMPL_H

#include <stdint.h>

#include "h2o/gguf.h"

#define GGUF_DEFAULT_ALIGNMENT 32

struct kv {
	const char *key;
	size_t key_len;
	enum gguf_type type;
	/* Scalars and strings: the value's bytes (a string's after its
	 * length). Arrays: the first element's. */
	const unsigned char *val;
	uint64_t len;           /* a string's length */
	enum gguf_type el_type; /* arrays */
	uint64_t n;             /* arrays: elements */
	uint64_t *str_off;      /* string arrays: each element's length field */
};

struct gguf_file {
	const unsigned char *base;
	uint64_t size;
	void *map; /* ours to unmap, or NULL */
	uint32_t version;
	uint64_t alignment;
	int n_kv, n_tensors;
	struct kv *kv;
	struct gguf_tensor *tensors;
	/* Tables made in memory (gguf_synth_*): what they own. */
	int cap_kv, cap_tensors, n_owned;
	void **owned;
	struct {
		void *p;
		size_t size;
	} maps[GGUF_SYNTH_MAX_MAPS];
	int n_maps;
};

/* The little-endian number of N bytes at B. */
static inline uint64_t rd_le(const unsigned char *b, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

/* Bytes of one value of scalar type T, 0 for strings and arrays, -1 for
 * a number GGUF does not define. */
static inline int scalar_bytes(uint32_t t)
{
	switch (t) {
	case GGUF_UINT8:
	case GGUF_INT8:
	case GGUF_BOOL:
		return 1;
	case GGUF_UINT16:
	case GGUF_INT16:
		return 2;
	case GGUF_UINT32:
	case GGUF_INT32:
	case GGUF_FLOAT32:
		return 4;
	case GGUF_UINT64:
	case GGUF_INT64:
	case GGUF_FLOAT64:
		return 8;
	case GGUF_STRING:
	case GGUF_ARRAY:
		return 0;
	default:
		return -1;
	}
}

#endif
