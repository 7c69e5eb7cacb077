/*
 * gguf: a GGUF file (versions 2 and 3) read strictly: its header, its
 * metadata (key, typed value) and its tensor table, every count, length,
 * offset and size checked against the file's size before anything is
 * allocated, and the tensors' data left in place (a read-only mapping of
 * the file, or the caller's bytes).
 *
 * What is refused, each with one line naming the byte where it is found:
 * a bad magic, a version other than 2 or 3, a count or a length that the
 * rest of the file cannot hold, a value type or array element type ggml
 * does not define, arrays of arrays, a bool other than 0 or 1, two keys or
 * two tensors of one name, a general.alignment that is not a power of two
 * up to 2^16 or not a uint32, a tensor with 0 or over 4 dimensions, a
 * dimension of 0 or a product over 2^62 elements, a row that is not whole
 * blocks of its type, a tensor type this program does not dequantise
 * (named: F32, F16, BF16, Q4_0, Q8_0, Q4_K and Q6_K are read), tensors
 * whose data is not laid out one after the other from the data section's
 * start (each at an offset aligned as general.alignment says), and a file
 * shorter than its last tensor's data or longer than that padded to the
 * alignment.
 *
 * Strings are not NUL-terminated: each comes with its length, and points
 * into the file. Numbers are little-endian in the file, as GGUF writes them
 * on every machine this program runs on.
 */
#ifndef H2O_GGUF_H
#define H2O_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "h2o/llama.h"
#include "h2o/vocab.h"

/* Metadata value types, as GGUF numbers them. */
enum gguf_type {
	GGUF_UINT8 = 0,
	GGUF_INT8 = 1,
	GGUF_UINT16 = 2,
	GGUF_INT16 = 3,
	GGUF_UINT32 = 4,
	GGUF_INT32 = 5,
	GGUF_FLOAT32 = 6,
	GGUF_BOOL = 7,
	GGUF_STRING = 8,
	GGUF_ARRAY = 9,
	GGUF_UINT64 = 10,
	GGUF_INT64 = 11,
	GGUF_FLOAT64 = 12,
};

/* The tensor types this program reads, numbered as ggml numbers them. */
enum ggml_type {
	GGML_F32 = 0,
	GGML_F16 = 1,
	GGML_Q4_0 = 2,
	GGML_Q8_0 = 8,
	GGML_Q4_K = 12,
	GGML_Q6_K = 14,
	GGML_BF16 = 30,
};

/* At most this many dimensions per tensor (ggml's limit). */
#define GGUF_MAX_DIMS 4
/* At most this many bytes in a tensor's name, as ggml allows. */
#define GGUF_MAX_NAME 63

struct gguf_tensor {
	const char *name;
	size_t name_len;
	int n_dims;
	uint64_t ne[GGUF_MAX_DIMS]; /* ne[0] is the row length; 1 past n_dims */
	enum ggml_type type;
	uint64_t offset;           /* from the data section's start */
	uint64_t bytes;            /* of data */
	const unsigned char *data; /* in the file */
};

struct gguf_file;

/* Open PATH (a regular file), map it read-only and read its tables: 0 and
 * *OUT, or -1 with ERR filled. */
int gguf_open(const char *path, struct gguf_file **out, char err[LLAMA_ERR_MAX]);
/* The same for the caller's open file FD (which stays the caller's). */
int gguf_open_fd(int fd, struct gguf_file **out, char err[LLAMA_ERR_MAX]);
/* The same over LEN bytes at DATA, which must outlive *OUT. */
int gguf_open_bytes(const void *data, size_t len, struct gguf_file **out, char err[LLAMA_ERR_MAX]);
void gguf_close(struct gguf_file *g);
/* Give back to the system the pages of the LEN bytes at P (whole pages,
 * rounded outward) when they lie in a mapping G owns (gguf_open's file, a
 * safetensors file it holds): the pages stay mapped and are read again
 * from the file if touched, so this costs only time. The bytes of a
 * caller's memory (gguf_open_bytes) are left alone. */
void gguf_release(const struct gguf_file *g, const void *p, uint64_t len);
/* Whether G holds its bytes in mappings of its own (gguf_release gives
 * their pages back), not in the caller's memory. */
bool gguf_owns_pages(const struct gguf_file *g);
/* The bytes of G's own file before its data section (header, metadata,
 * tensor table: what parsing touched besides the tensors), 0 for tables
 * made in memory or the caller's bytes. */
uint64_t gguf_meta_bytes(const struct gguf_file *g);

/* True when the LEN bytes at DATA start as a GGUF file does ("GGUF"). */
bool gguf_magic(const void *data, size_t len);

uint32_t gguf_version(const struct gguf_file *g);
uint64_t gguf_alignment(const struct gguf_file *g);

/* ---- metadata ---------------------------------------------------------- */

int gguf_n_kv(const struct gguf_file *g);
/* The key of entry I in [0, gguf_n_kv). */
const char *gguf_key(const struct gguf_file *g, int i, size_t *len);
/* The entry whose key is KEY (a C string), or -1. */
int gguf_find(const struct gguf_file *g, const char *key);
enum gguf_type gguf_kv_type(const struct gguf_file *g, int i);

/* Entry I as an integer: any integer type or bool. 0, or -1 when it holds
 * another type. */
int gguf_get_int(const struct gguf_file *g, int i, int64_t *v);
/* Entry I as a uint64 (UINT64 may exceed INT64_MAX): 0 or -1. */
int gguf_get_u64(const struct gguf_file *g, int i, uint64_t *v);
/* Entry I as a number: a float or any integer type. 0 or -1. */
int gguf_get_float(const struct gguf_file *g, int i, double *v);
/* Entry I as a string: 0 with *S and *LEN, or -1 when not a string. */
int gguf_get_str(const struct gguf_file *g, int i, const char **s, size_t *len);

/* Entry I as an array: its element type and count, 0; -1 when not one. */
int gguf_get_arr(const struct gguf_file *g, int i, enum gguf_type *type, uint64_t *n);
/* Element J of array entry I, a string array: *S and *LEN. 0 or -1. */
int gguf_get_arr_str(const struct gguf_file *g, int i, uint64_t j, const char **s, size_t *len);
/* Element J of array entry I as an integer (integer or bool elements) or a
 * number (float or integer elements). 0 or -1. */
int gguf_get_arr_int(const struct gguf_file *g, int i, uint64_t j, int64_t *v);
int gguf_get_arr_float(const struct gguf_file *g, int i, uint64_t j, double *v);

/* ---- tensors ------------------------------------------------------------- */

int gguf_n_tensors(const struct gguf_file *g);
const struct gguf_tensor *gguf_tensor(const struct gguf_file *g, int i);
/* The tensor named NAME (a C string), or NULL. */
const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *g, const char *name);

/* ggml's name of tensor type TYPE ("F32", "Q8_0", ...; "type N" for a
 * number ggml does not define, in BUF of 16 bytes). */
const char *gguf_type_name(uint32_t type, char buf[16]);
/* Elements per block and bytes per block of a type this program reads;
 * 0 for any other. */
int ggml_block_elems(uint32_t type);
int ggml_block_bytes(uint32_t type);

/* ---- the vocabulary ------------------------------------------------------ */

/*
 * The tokenizer a GGUF file states (tokenizer.ggml.*): model ("llama" is
 * SentencePiece-style, "gpt2" byte-level BPE; any other is refused by
 * name), pre, tokens, scores, token_type, merges, the bos, eos, unknown
 * and padding ids and add_bos_token, add_eos_token, add_space_prefix, each
 * of the type GGUF gives it and in range. SPEC points into the file and
 * into memory V owns: valid while both are.
 */
struct gguf_vocab {
	struct llama_vocab_spec spec;
	void *mem;
};
int gguf_vocab_read(const struct gguf_file *g, struct gguf_vocab *v, char err[LLAMA_ERR_MAX]);
void gguf_vocab_free(struct gguf_vocab *v);

/* Whether the file at PATH is a regular file that starts as GGUF files do
 * (its tokenizer may then be read from it: llama_tokenizer_load reads a
 * GGUF file's vocabulary). */
bool llama_file_is_gguf(const char *path);

/* The GGUF file model M was loaded from by llama_load or llama_load_fd (its
 * metadata, its vocabulary), or NULL: a llama2.c checkpoint, or bytes. */
const struct gguf_file *llama_model_gguf(const struct llama_model *m);

#endif
