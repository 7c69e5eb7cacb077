/*
 * npy: strict reading of NumPy .npy files of float16, float32 or float64 numbers.
 *
 * A vector scene may take q, k and v from files written by numpy.save
 * (docs/scene-format.md, "Vectors from .npy files"). The files are as
 * untrusted as the scene, so this module reads the format's header itself
 * (versions 1.0, 2.0 and 3.0: the magic, the version, the header length
 * and a Python dict literal with exactly 'descr', 'fortran_order' and
 * 'shape') and accepts only what it can read exactly: little-endian
 * float16, float32 or float64 in C order, with exactly as many data bytes as the
 * shape needs. It checks sizes before the caller allocates anything, and
 * converts the data to doubles a chunk at a time, refusing NaN and
 * infinities. It never prints, and knows nothing about scenes: what shape a
 * scene wants is scene_npy.c's business. Messages are short phrases without
 * the file name ("truncated: ..."), for scene_npy.c to prefix with where the
 * file was named.
 */
#ifndef H2O_NPY_H
#define H2O_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* numpy.load refuses headers longer than this by default (max_header_size). */
#define NPY_MAX_HEADER 10000
/* numpy 2 allows 64 dimensions; nothing longer is a real file. */
#define NPY_MAX_RANK 64
#define NPY_MSG_MAX  256
/* The largest magnitude a number may have (a scene's SCENE_MAX_MAGNITUDE). */
#define NPY_MAX_MAGNITUDE 1e30

struct npy_header {
	int major, minor; /* format version: 1.0, 2.0 or 3.0 */
	int elem_size;    /* 2 (float16), 4 (float32) or 8 (float64) */
	int rank;         /* entries of shape */
	uint64_t shape[NPY_MAX_RANK];
	uint64_t count;     /* product of shape: numbers in the file */
	size_t data_offset; /* bytes before the data */
};

/*
 * Parse the header at the start of BUF (LEN bytes: the whole header, or
 * more). Returns 0 and fills *H; returns 1 when BUF is too short and sets
 * *NEED to the bytes the header takes (when that is known yet, else 12);
 * returns -1 with a message in MSG when the header is not one this module
 * reads. Does not look at the data.
 */
int npy_parse_header(const unsigned char *buf, size_t len, struct npy_header *h, size_t *need,
                     char msg[NPY_MSG_MAX]);

/* Write the shape as Python does: "(100, 64)", "(5,)", "()". */
void npy_format_shape(const struct npy_header *h, char *buf, size_t size);

/* An open .npy file whose header has been read and whose size matches. */
struct npy_file {
	int fd;
	struct npy_header h;
};

/*
 * Open PATH, read and check its header, and check that the file holds
 * exactly the data the shape needs (a short file is "truncated", a long one
 * holds more than one array). Allocates nothing. Returns 0 (close F with
 * npy_close), or -1 with a message and nothing left open.
 */
int npy_open(const char *path, struct npy_file *f, char msg[NPY_MSG_MAX]);

/* The same for FD, opened by the caller, which F then owns (closed on
 * failure too): for a caller that checks where the file is before it
 * reads it. */
int npy_open_fd(int fd, struct npy_file *f, char msg[NPY_MSG_MAX]);

/*
 * Read all F's numbers (f->h.count of them) into OUT as doubles. Returns 0,
 * or -1 with a message when a number is not finite ("element [3, 17] is
 * NaN") or the file cannot be read to its end.
 */
int npy_read(struct npy_file *f, double *out, char msg[NPY_MSG_MAX]);

void npy_close(struct npy_file *f);

#endif
