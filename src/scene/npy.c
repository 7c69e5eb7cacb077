/*
 * npy: a strict reader of .npy files (see npy.h).
 *
 * The format (numpy's NEP 1): the magic "\x93NUMPY", a major and a minor
 * version byte, the header's length (2 bytes little-endian in version 1.0,
 * 4 bytes in 2.0 and 3.0), then the header: a Python dict literal such as
 * {'descr': '<f4', 'fortran_order': False, 'shape': (100, 64), } padded
 * with spaces and a newline, then the numbers. The header is parsed here
 * by a small grammar rather than by guessing at substrings, so that a
 * damaged or foreign file is refused with a reason instead of read wrong.
 * Bytes are assembled little-endian by hand, so the reader works the same
 * on any host. Nothing is allocated: the header fits a fixed buffer, and
 * the data goes straight from the file into the caller's doubles.
 */
#include "npy.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* The longest string the header may hold: keys and a dtype are short. */
#define NPY_STRING_MAX 32

static int fail(char msg[NPY_MSG_MAX], const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, NPY_MSG_MAX, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- the header's dict ------------------------------------------------ */

struct hp {
	const unsigned char *s;
	size_t len, pos;
	size_t base; /* offset of s in the file, for messages */
	char *msg;
};

/* The byte at the parser's position, for "got ...": never raw. */
static void describe(const struct hp *p, char *buf, size_t size)
{
	if (p->pos >= p->len)
		snprintf(buf, size, "the end of the header");
	else if (p->s[p->pos] > 0x20 && p->s[p->pos] < 0x7F)
		snprintf(buf, size, "'%c'", p->s[p->pos]);
	else
		snprintf(buf, size, "byte 0x%02x", p->s[p->pos]);
}

static int hp_expected(struct hp *p, const char *what)
{
	char got[32];

	describe(p, got, sizeof got);
	return fail(p->msg, "bad header: expected %s at byte %zu, got %s", what, p->base + p->pos,
	            got);
}

static void hp_blank(struct hp *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
	                           p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

static bool hp_accept(struct hp *p, char c)
{
	hp_blank(p);
	if (p->pos < p->len && p->s[p->pos] == (unsigned char)c) {
		p->pos++;
		return true;
	}
	return false;
}

/* A quoted string of printable ASCII without escapes: all numpy writes. */
static int hp_string(struct hp *p, char out[NPY_STRING_MAX + 1])
{
	hp_blank(p);
	if (p->pos >= p->len || (p->s[p->pos] != '\'' && p->s[p->pos] != '"'))
		return hp_expected(p, "a quoted string");
	const unsigned char quote = p->s[p->pos++];
	size_t n = 0;
	while (p->pos < p->len && p->s[p->pos] != quote) {
		const unsigned char c = p->s[p->pos];
		if (c < 0x20 || c >= 0x7F || c == '\\')
			return hp_expected(p, "printable text inside a string");
		if (n == NPY_STRING_MAX)
			return fail(p->msg, "bad header: a string longer than %d bytes at byte %zu",
			            NPY_STRING_MAX, p->base + p->pos);
		out[n++] = (char)c;
		p->pos++;
	}
	if (p->pos >= p->len)
		return hp_expected(p, "the string's closing quote");
	p->pos++;
	out[n] = '\0';
	return 0;
}

static bool is_word_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static int hp_bool(struct hp *p, bool *out)
{
	hp_blank(p);
	for (int v = 0; v < 2; v++) {
		const char *word = v ? "True" : "False";
		const size_t n = strlen(word);
		if (p->len - p->pos >= n && memcmp(p->s + p->pos, word, n) == 0 &&
		    (p->pos + n == p->len || !is_word_byte(p->s[p->pos + n]))) {
			p->pos += n;
			*out = v;
			return 0;
		}
	}
	return hp_expected(p, "True or False");
}

/* A non-negative decimal integer as Python writes it (no leading zeros). */
static int hp_int(struct hp *p, uint64_t *out)
{
	hp_blank(p);
	const size_t start = p->pos;
	uint64_t v = 0;

	while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
		const unsigned d = p->s[p->pos] - '0';
		if (v > (UINT64_MAX / 2 - d) / 10) /* keep within 2^63 */
			return fail(p->msg,
			            "bad header: a dimension of the shape at byte %zu is "
			            "2^63 or more",
			            p->base + start);
		v = v * 10 + d;
		p->pos++;
	}
	if (p->pos == start)
		return hp_expected(p, "a dimension (a whole number)");
	if (p->s[start] == '0' && p->pos - start > 1)
		return fail(p->msg, "bad header: a dimension with a leading zero at byte %zu",
		            p->base + start);
	if (p->pos < p->len && is_word_byte(p->s[p->pos]))
		return hp_expected(p, "',' or ')' after a dimension");
	*out = v;
	return 0;
}

/* A tuple of dimensions: "()", "(5,)", "(100, 64)", "(100, 64,)". */
static int hp_shape(struct hp *p, struct npy_header *h)
{
	if (!hp_accept(p, '('))
		return hp_expected(p, "'(' starting the shape tuple");
	h->rank = 0;
	if (hp_accept(p, ')'))
		return 0;
	for (;;) {
		uint64_t d = 0;
		if (hp_int(p, &d) != 0)
			return -1;
		if (h->rank == NPY_MAX_RANK)
			return fail(p->msg, "bad header: more than %d dimensions", NPY_MAX_RANK);
		h->shape[h->rank++] = d;
		const bool comma = hp_accept(p, ',');
		if (hp_accept(p, ')')) {
			/* Python reads "(5)" as the number 5: a tuple of one needs the comma. */
			if (h->rank == 1 && !comma)
				return fail(p->msg,
				            "bad header: the shape (%llu) is not a tuple "
				            "(a tuple of one dimension is written (%llu,))",
				            (unsigned long long)d, (unsigned long long)d);
			return 0;
		}
		if (!comma)
			return hp_expected(p, "',' or ')' in the shape");
	}
}

static int check_descr(const char *descr, int *elem_size, char *msg)
{
	if (strcmp(descr, "<f2") == 0 || strcmp(descr, "<f4") == 0 || strcmp(descr, "<f8") == 0) {
		*elem_size = descr[2] - '0';
		return 0;
	}
	if (strcmp(descr, ">f2") == 0 || strcmp(descr, ">f4") == 0 || strcmp(descr, ">f8") == 0)
		return fail(msg,
		            "dtype '%s' is big-endian; save it little-endian, e.g. "
		            "a.astype('<f%c')",
		            descr, descr[2]);
	return fail(msg,
	            "dtype '%s' is not supported: expected float16 ('<f2'), float32 ('<f4') or "
	            "float64 ('<f8')",
	            descr);
}

/* The dict: exactly 'descr', 'fortran_order' and 'shape', once each. */
static int parse_dict(struct hp *p, struct npy_header *h)
{
	static const char *const keys[3] = {"descr", "fortran_order", "shape"};
	bool seen[3] = {false, false, false};
	bool fortran = false;
	char descr[NPY_STRING_MAX + 1] = "";

	if (!hp_accept(p, '{'))
		return hp_expected(p, "'{' starting the header's dict");
	while (!hp_accept(p, '}')) {
		char key[NPY_STRING_MAX + 1];
		if (hp_string(p, key) != 0)
			return -1;
		int k = 0;
		while (k < 3 && strcmp(key, keys[k]) != 0)
			k++;
		if (k == 3)
			return fail(p->msg,
			            "bad header: unknown key '%s' (expected 'descr', "
			            "'fortran_order' and 'shape')",
			            key);
		if (seen[k])
			return fail(p->msg, "bad header: key '%s' given twice", key);
		seen[k] = true;
		if (!hp_accept(p, ':'))
			return hp_expected(p, "':' after a key");
		int rc = k == 0   ? hp_string(p, descr)
		         : k == 1 ? hp_bool(p, &fortran)
		                  : hp_shape(p, h);
		if (rc != 0)
			return -1;
		if (hp_accept(p, ','))
			continue;
		if (!hp_accept(p, '}'))
			return hp_expected(p, "',' or '}' in the dict");
		break;
	}
	hp_blank(p);
	if (p->pos != p->len)
		return hp_expected(p, "only spaces after the dict");
	for (int k = 0; k < 3; k++)
		if (!seen[k])
			return fail(p->msg, "bad header: no '%s' key", keys[k]);
	if (check_descr(descr, &h->elem_size, p->msg) != 0)
		return -1;
	if (fortran)
		return fail(p->msg,
		            "Fortran order (fortran_order is True); save a C-ordered array, "
		            "e.g. numpy.ascontiguousarray(a)");
	return 0;
}

int npy_parse_header(const unsigned char *buf, size_t len, struct npy_header *h, size_t *need,
                     char msg[NPY_MSG_MAX])
{
	memset(h, 0, sizeof *h);
	*need = 12;
	if (memcmp(buf, magic, len < sizeof magic ? len : sizeof magic) != 0)
		return fail(msg, "not a .npy file (it does not start with \"\\x93NUMPY\")");
	if (len < 8)
		return 1;
	h->major = buf[6];
	h->minor = buf[7];
	if (h->major < 1 || h->major > 3 || h->minor != 0)
		return fail(msg, "unsupported .npy format version %d.%d (expected 1.0, 2.0 or 3.0)",
		            h->major, h->minor);
	const size_t prefix = h->major == 1 ? 10 : 12;
	*need = prefix;
	if (len < prefix)
		return 1;
	unsigned long hlen = (unsigned long)buf[8] | (unsigned long)buf[9] << 8;
	if (prefix == 12)
		hlen |= (unsigned long)buf[10] << 16 | (unsigned long)buf[11] << 24;
	if (hlen > NPY_MAX_HEADER)
		return fail(msg, "header of %lu bytes is longer than the %d that numpy reads", hlen,
		            NPY_MAX_HEADER);
	*need = prefix + hlen;
	if (len < *need)
		return 1;

	struct hp p = {buf + prefix, hlen, 0, prefix, msg};
	if (parse_dict(&p, h) != 0)
		return -1;
	/* The numbers and bytes the shape needs, refusing what wraps. */
	uint64_t count = 1;
	bool huge = false, empty = false;
	for (int i = 0; i < h->rank; i++) {
		if (h->shape[i] == 0)
			empty = true;
		else if (count > UINT64_MAX / h->shape[i])
			huge = true;
		else
			count *= h->shape[i];
	}
	/* A zero anywhere empties the array, however large the rest. */
	if (empty) {
		count = 0;
		huge = false;
	}
	if (huge || count > (uint64_t)SIZE_MAX / 8 - *need)
		return fail(msg, "the shape is too large to read");
	h->count = count;
	h->data_offset = *need;
	return 0;
}

void npy_format_shape(const struct npy_header *h, char *buf, size_t size)
{
	size_t used = 0;

	used += (size_t)snprintf(buf, size, "(");
	for (int i = 0; i < h->rank && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%llu", i ? ", " : "",
		                         (unsigned long long)h->shape[i]);
	if (used < size)
		snprintf(buf + used, size - used, "%s)", h->rank == 1 ? "," : "");
}

/* ---- the file --------------------------------------------------------- */

/* Read exactly LEN bytes at OFFSET; returns the bytes read, -1 on error. */
static ssize_t read_at(int fd, unsigned char *buf, size_t len, off_t offset)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, buf + got, len - got, offset + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static const char *dtype_name(const struct npy_header *h)
{
	return h->elem_size == 2 ? "float16" : h->elem_size == 4 ? "float32" : "float64";
}

int npy_open(const char *path, struct npy_file *f, char msg[NPY_MSG_MAX])
{
	/* O_NONBLOCK: opening a FIFO with no writer would otherwise wait for
	 * ever, before the regular-file check below could refuse it. Reads of
	 * a regular file ignore the flag. */
	f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (f->fd < 0)
		return fail(msg, "cannot open: %s", strerror(errno));
	return npy_open_fd(f->fd, f, msg);
}

int npy_open_fd(int fd, struct npy_file *f, char msg[NPY_MSG_MAX])
{
	struct stat st;
	unsigned char buf[12 + NPY_MAX_HEADER];
	size_t need = 12;

	f->fd = fd;
	if (fstat(f->fd, &st) != 0) {
		fail(msg, "cannot open: %s", strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		fail(msg, "cannot open: %s", strerror(EISDIR));
		goto fail;
	}
	/* A FIFO or a device could block or never end. */
	if (!S_ISREG(st.st_mode)) {
		fail(msg, "cannot open: not a regular file");
		goto fail;
	}
	const uint64_t size = (uint64_t)st.st_size;
	if (size == 0) {
		fail(msg, "not a .npy file (it is empty)");
		goto fail;
	}
	for (;;) {
		const size_t want = size < need ? (size_t)size : need;
		ssize_t got = read_at(f->fd, buf, want, 0);
		if (got < 0) {
			fail(msg, "cannot read: %s", strerror(errno));
			goto fail;
		}
		int rc = npy_parse_header(buf, (size_t)got, &f->h, &need, msg);
		if (rc < 0)
			goto fail;
		if (rc == 0)
			break;
		/* The header goes on past what was read: read more, unless
		 * that was the whole file. */
		if ((size_t)got < want || (uint64_t)got == size) {
			fail(msg,
			     "truncated header: the file ends after %zd bytes, the header "
			     "takes %s%zu",
			     got, need <= 12 ? "at least " : "", need);
			goto fail;
		}
	}

	const uint64_t data = f->h.count * (uint64_t)f->h.elem_size;
	const uint64_t have = size - f->h.data_offset;
	char shape[64];
	npy_format_shape(&f->h, shape, sizeof shape);
	if (have < data) {
		fail(msg, "truncated: shape %s of %s needs %llu bytes of data, the file has %llu",
		     shape, dtype_name(&f->h), (unsigned long long)data, (unsigned long long)have);
		goto fail;
	}
	if (have > data) {
		fail(msg,
		     "%llu bytes after the data of shape %s of %s (one array per file: save each "
		     "with its own numpy.save)",
		     (unsigned long long)(have - data), shape, dtype_name(&f->h));
		goto fail;
	}
	return 0;

fail:
	close(f->fd);
	f->fd = -1;
	return -1;
}

/* The IEEE half-precision number of bits U as a double, exactly: every
 * half is a small integer times a power of two that a double holds. The
 * infinities and NaNs come out as such, for the caller to refuse. */
static double half_to_double(uint16_t u)
{
	const int exponent = (u >> 10) & 0x1F, mantissa = u & 0x3FF;
	double x;

	if (exponent == 0x1F) {
		x = mantissa ? NAN : INFINITY;
	} else if (exponent == 0) {
		x = (double)mantissa * 0x1p-24; /* subnormal: m x 2^-24, exact */
	} else {
		/* The same exponent and the mantissa's 10 bits at the top of
		 * the double's 52: the very same number. */
		const uint64_t bits = (uint64_t)(exponent - 15 + 1023) << 52 | (uint64_t)mantissa
		                                                                       << 42;
		memcpy(&x, &bits, sizeof x);
	}
	return u & 0x8000 ? -x : x;
}

/* "[3, 17]": the index of flat element I in the file's shape. */
static void format_index(const struct npy_header *h, uint64_t i, char *buf, size_t size)
{
	uint64_t idx[NPY_MAX_RANK];
	size_t used = 0;

	for (int d = h->rank - 1; d >= 0; d--) {
		idx[d] = h->shape[d] ? i % h->shape[d] : 0;
		i = h->shape[d] ? i / h->shape[d] : 0;
	}
	used += (size_t)snprintf(buf, size, "[");
	for (int d = 0; d < h->rank && used < size; d++)
		used += (size_t)snprintf(buf + used, size - used, "%s%llu", d ? ", " : "",
		                         (unsigned long long)idx[d]);
	if (used < size)
		snprintf(buf + used, size - used, "]");
}

int npy_read(struct npy_file *f, double *out, char msg[NPY_MSG_MAX])
{
	enum { CHUNK = 1 << 16 };
	unsigned char buf[CHUNK];
	const size_t es = (size_t)f->h.elem_size;
	uint64_t done = 0;

	while (done < f->h.count) {
		uint64_t left = f->h.count - done;
		size_t n = left < CHUNK / es ? (size_t)left : CHUNK / es;
		ssize_t got =
		        read_at(f->fd, buf, n * es, (off_t)(f->h.data_offset + (size_t)done * es));
		if (got < 0)
			return fail(msg, "cannot read: %s", strerror(errno));
		if ((size_t)got < n * es)
			return fail(msg, "truncated: the file ended while its data was read "
			                 "(did it change?)");
		for (size_t i = 0; i < n; i++) {
			const unsigned char *b = buf + i * es;
			double x;
			if (es == 2) {
				x = half_to_double((uint16_t)(b[0] | b[1] << 8));
			} else if (es == 4) {
				uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 |
				             (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
				float fl;
				memcpy(&fl, &u, sizeof fl);
				x = fl;
			} else {
				uint64_t u = 0;
				for (int j = 7; j >= 0; j--)
					u = u << 8 | b[j];
				memcpy(&x, &u, sizeof x);
			}
			if (isfinite(x) && fabs(x) > NPY_MAX_MAGNITUDE) {
				char at[128];
				format_index(&f->h, done + i, at, sizeof at);
				return fail(msg,
				            "expected numbers from -1e30 to 1e30, element %s is %g",
				            at, x);
			}
			if (!isfinite(x)) {
				char at[128];
				format_index(&f->h, done + i, at, sizeof at);
				return fail(msg, "expected finite numbers, element %s is %s", at,
				            isnan(x) ? "NaN"
				            : x > 0  ? "inf"
				                     : "-inf");
			}
			out[done + i] = x;
		}
		done += n;
	}
	return 0;
}

void npy_close(struct npy_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}
