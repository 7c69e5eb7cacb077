/*
 * test_npy: the .npy header parser and reader (src/npy.c).
 *
 * Headers are built in memory, so every branch of the grammar is reached
 * without a file; the reader is tried on the files of tests/bad/npy/ (written
 * by tests/bad/npy/make.sh) and on sparse temporary files for sizes that would
 * be too large to commit. What a scene makes of a header (its shape against
 * dim, q against k and v) is tested in test_scene.c and tests/bad/npy_*.
 *
 * Usage: test_npy SOURCE_ROOT (or H2O_SOURCE_ROOT in the environment).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/scene/npy.h"

/* A version-1.0 (or MAJOR) file's first bytes with header DICT, as numpy
 * writes it: padded with spaces and a newline to a multiple of 64. */
static size_t header(unsigned char *buf, int major, const char *dict)
{
	const size_t prefix = major == 1 ? 10 : 12;
	size_t len = prefix + strlen(dict) + 1;
	const size_t pad = (64 - len % 64) % 64;
	const size_t hlen = strlen(dict) + pad + 1;

	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)major;
	buf[7] = 0;
	buf[8] = (unsigned char)(hlen & 0xFF);
	buf[9] = (unsigned char)(hlen >> 8);
	if (prefix == 12)
		buf[10] = buf[11] = 0;
	memcpy(buf + prefix, dict, strlen(dict));
	memset(buf + prefix + strlen(dict), ' ', pad);
	buf[prefix + hlen - 1] = '\n';
	return prefix + hlen;
}

static void parse_ok(int major, const char *dict, int elem, int rank, const uint64_t *shape)
{
	unsigned char buf[512];
	struct npy_header h;
	size_t need;
	char msg[NPY_MSG_MAX] = "";
	const size_t len = header(buf, major, dict);
	const int rc = npy_parse_header(buf, len, &h, &need, msg);
	if (rc != 0)
		print_error("%s: %s\n", dict, msg);
	assert_int_equal(rc, 0);
	assert_int_equal(h.major, major);
	assert_int_equal(h.elem_size, elem);
	assert_int_equal(h.rank, rank);
	uint64_t count = 1;
	for (int i = 0; i < rank; i++) {
		assert_true(h.shape[i] == shape[i]);
		count *= shape[i];
	}
	assert_true(h.count == count);
	assert_int_equal(h.data_offset, len);
	assert_int_equal(h.data_offset % 64, 0);
}

static void parse_err(int major, const char *dict, const char *want)
{
	unsigned char buf[512];
	struct npy_header h;
	size_t need;
	char msg[NPY_MSG_MAX] = "";
	const size_t len = header(buf, major, dict);
	const int rc = npy_parse_header(buf, len, &h, &need, msg);
	if (rc != -1)
		print_error("%s: parsed (%d)\n", dict, rc);
	assert_int_equal(rc, -1);
	if (strcmp(msg, want) != 0)
		print_error("%s:\n  want: %s\n  got:  %s\n", dict, want, msg);
	assert_string_equal(msg, want);
}

static void test_headers_good(void **state)
{
	(void)state;
	parse_ok(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (100, 64), }", 4, 2,
	         (const uint64_t[]){100, 64});
	parse_ok(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", 8, 2,
	         (const uint64_t[]){3, 2});
	parse_ok(3, "{\"shape\":(7,),\"descr\":\"<f8\",\"fortran_order\":False}", 8, 1,
	         (const uint64_t[]){7});
	parse_ok(1, "{ 'descr' : '<f4' ,\n 'fortran_order' : False , 'shape' : ( ) }", 4, 0, NULL);
	parse_ok(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5,), }", 4, 2,
	         (const uint64_t[]){0, 5});
	parse_ok(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }", 4, 3,
	         (const uint64_t[]){2, 3, 4});
	parse_ok(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (12, 12, 4096, 64), }", 2, 4,
	         (const uint64_t[]){12, 12, 4096, 64});

	struct npy_header h = {.rank = 1, .shape = {5}};
	char s[64];
	npy_format_shape(&h, s, sizeof s);
	assert_string_equal(s, "(5,)");
	h.rank = 0;
	npy_format_shape(&h, s, sizeof s);
	assert_string_equal(s, "()");
	h = (struct npy_header){.rank = 2, .shape = {100, 64}};
	npy_format_shape(&h, s, sizeof s);
	assert_string_equal(s, "(100, 64)");
}

static void test_headers_bad(void **state)
{
	(void)state;
	parse_err(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (3, 2), }",
	          "dtype '>f8' is big-endian; save it little-endian, e.g. a.astype('<f8')");
	parse_err(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 2), }",
	          "dtype '|u1' is not supported: expected float16 ('<f2'), float32 ('<f4') or "
	          "float64 ('<f8')");
	parse_err(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (3, 2), }",
	          "dtype '>f2' is big-endian; save it little-endian, e.g. a.astype('<f2')");
	parse_err(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }",
	          "Fortran order (fortran_order is True); save a C-ordered array, e.g. "
	          "numpy.ascontiguousarray(a)");
	parse_err(1, "{'descr': '<f4', 'fortran_order': false, 'shape': (3, 2), }",
	          "bad header: expected True or False at byte 44, got 'f'");
	parse_err(1, "{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3, 2), }",
	          "bad header: expected True or False at byte 44, got 'F'");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': [3, 2], }",
	          "bad header: expected '(' starting the shape tuple at byte 60, got '['");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3 2), }",
	          "bad header: expected ',' or ')' in the shape at byte 63, got '2'");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, -2), }",
	          "bad header: expected a dimension (a whole number) at byte 64, got '-'");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (03, 2), }",
	          "bad header: a dimension with a leading zero at byte 61");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 2), }",
	          "bad header: expected ',' or ')' after a dimension at byte 62, got 'L'");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1_000, 2), }",
	          "bad header: expected ',' or ')' after a dimension at byte 62, got '_'");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808, 2)}",
	          "bad header: a dimension of the shape at byte 61 is 2^63 or more");
	parse_err(1,
	          "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, "
	          "4294967296)}",
	          "the shape is too large to read");
	parse_err(1, "{'descr': '<f4' 'fortran_order': False, 'shape': (3, 2)}",
	          "bad header: expected ',' or '}' in the dict at byte 26, got '''");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2)} x",
	          "bad header: expected only spaces after the dict at byte 68, got 'x'");
	parse_err(1, "{'descr': 'a\\'b', 'fortran_order': False, 'shape': (3, 2)}",
	          "bad header: expected printable text inside a string at byte 22, got '\\'");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), 'descr': '<f8'}",
	          "bad header: key 'descr' given twice");
	parse_err(1, "{'descr': '<f4', 'shape': (3, 2)}", "bad header: no 'fortran_order' key");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), 'dtype': 1}",
	          "bad header: unknown key 'dtype' (expected 'descr', 'fortran_order' and "
	          "'shape')");
	parse_err(1, "{'descr': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'}",
	          "bad header: a string longer than 32 bytes at byte 53");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), \x01}",
	          "bad header: expected a quoted string at byte 68, got byte 0x01");
	parse_err(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2)",
	          "bad header: expected ',' or '}' in the dict at byte 128, got the end of the "
	          "header");
	char many[600] = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
	for (int i = 0; i < 65; i++)
		strcat(many, "1, ");
	strcat(many, ")}");
	parse_err(1, many, "bad header: more than 64 dimensions");
}

static void test_prefix(void **state)
{
	(void)state;
	unsigned char buf[512];
	struct npy_header h;
	size_t need = 0;
	char msg[NPY_MSG_MAX];
	const size_t len =
	        header(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }");

	/* Short reads ask for more: first the prefix, then the header. */
	assert_int_equal(npy_parse_header(buf, 4, &h, &need, msg), 1);
	assert_int_equal(need, 12);
	assert_int_equal(npy_parse_header(buf, 9, &h, &need, msg), 1);
	assert_int_equal(need, 10);
	assert_int_equal(npy_parse_header(buf, 10, &h, &need, msg), 1);
	assert_int_equal(need, len);
	assert_int_equal(npy_parse_header(buf, len - 1, &h, &need, msg), 1);
	assert_int_equal(npy_parse_header(buf, len, &h, &need, msg), 0);

	memcpy(buf, "\x93NUMPX", 6);
	assert_int_equal(npy_parse_header(buf, 4, &h, &need, msg), 1); /* cannot tell yet */
	assert_int_equal(npy_parse_header(buf, 8, &h, &need, msg), -1);
	assert_string_equal(msg, "not a .npy file (it does not start with \"\\x93NUMPY\")");
	memcpy(buf, "\x93NUMPY\x01\x01", 8);
	assert_int_equal(npy_parse_header(buf, 8, &h, &need, msg), -1);
	assert_string_equal(msg, "unsupported .npy format version 1.1 (expected 1.0, 2.0 or 3.0)");
	memcpy(buf, "\x93NUMPY\x02\x00\x11\x27\x00\x00", 12); /* 10001 bytes */
	assert_int_equal(npy_parse_header(buf, 12, &h, &need, msg), -1);
	assert_string_equal(msg, "header of 10001 bytes is longer than the 10000 that numpy reads");
	memcpy(buf, "\x93NUMPY\x02\x00\x00\x00\x00\x01", 12); /* 2^24 bytes */
	assert_int_equal(npy_parse_header(buf, 12, &h, &need, msg), -1);
}

static void test_files(void **state)
{
	(void)state;
	struct npy_file f;
	char msg[NPY_MSG_MAX];
	double x[6];

	assert_int_equal(npy_open("tests/bad/npy/good_q_f4.npy", &f, msg), 0);
	assert_int_equal(f.h.elem_size, 4);
	assert_int_equal(npy_read(&f, x, msg), 0);
	npy_close(&f);
	const double q[] = {1, 0, 0, 1, 0.5, 0.5};
	for (int i = 0; i < 6; i++)
		assert_true(x[i] == q[i]);

	assert_int_equal(npy_open("tests/bad/npy/good_v_v3.npy", &f, msg), 0);
	assert_int_equal(f.h.major, 3);
	assert_int_equal(f.h.elem_size, 8);
	assert_int_equal(npy_read(&f, x, msg), 0);
	npy_close(&f);
	const double v[] = {2, 0, 0, 1, 1, 1};
	for (int i = 0; i < 6; i++)
		assert_true(x[i] == v[i]);

	/* float16, exactly: 1, 0.5, 2, -1, the smallest subnormal, the largest. */
	assert_int_equal(npy_open("tests/bad/npy/float16.npy", &f, msg), 0);
	assert_int_equal(f.h.elem_size, 2);
	assert_int_equal(npy_read(&f, x, msg), 0);
	npy_close(&f);
	const double h[] = {1, 0.5, 2, -1, 0x1p-24, 65504};
	for (int i = 0; i < 6; i++)
		assert_true(x[i] == h[i]);
	assert_int_equal(npy_open("tests/bad/npy/float16_inf.npy", &f, msg), 0);
	assert_int_equal(npy_read(&f, x, msg), -1);
	assert_string_equal(msg, "expected finite numbers, element [1, 0] is inf");
	npy_close(&f);

	/* Opening checks the size, reading checks the numbers. */
	assert_int_equal(npy_open("tests/bad/npy/truncated.npy", &f, msg), -1);
	assert_int_equal(f.fd, -1);
	assert_int_equal(npy_open("tests/bad/npy/nan.npy", &f, msg), 0);
	assert_int_equal(npy_read(&f, x, msg), -1);
	assert_string_equal(msg, "expected finite numbers, element [1, 1] is NaN");
	npy_close(&f);
	npy_close(&f); /* twice is harmless */
	assert_int_equal(npy_open("/dev/null", &f, msg), -1);
	assert_string_equal(msg, "cannot open: not a regular file");

	/* A large, sparse file: its data is read in chunks, all zeros. */
	char path[] = "/tmp/h2o-npy-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unsigned char buf[512];
	size_t len =
	        header(buf, 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (40000, 3), }");
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	assert_int_equal(ftruncate(fd, (off_t)(len + 40000 * 3 * 8)), 0);
	close(fd);
	assert_int_equal(npy_open(path, &f, msg), 0);
	double *big = malloc(40000 * 3 * sizeof *big);
	assert_int_equal(npy_read(&f, big, msg), 0);
	assert_true(big[0] == 0.0 && big[40000 * 3 - 1] == 0.0);
	free(big);
	npy_close(&f);
	/* One byte short of that is truncated. */
	assert_int_equal(truncate(path, (off_t)(len + 40000 * 3 * 8 - 1)), 0);
	assert_int_equal(npy_open(path, &f, msg), -1);
	assert_string_equal(msg, "truncated: shape (40000, 3) of float64 needs 960000 bytes of "
	                         "data, the file has 959999");
	unlink(path);
}

/* A (layers, heads, n, dim) float16 file written here: every kind of half
 * (normal, subnormal, zero of either sign, negative) comes back exact, and
 * NaN is refused with its index in all four dimensions. */
static void test_float16(void **state)
{
	(void)state;
	static const uint16_t bits[16] = {0x3C00, 0x3800, 0x4000, 0xBC00, 0x0001, 0x03FF,
	                                  0x0400, 0x7BFF, 0x0000, 0x8000, 0xC500, 0x3555,
	                                  0x2E66, 0x8001, 0x5640, 0xFBFF};
	const double want[16] = {1,
	                         0.5,
	                         2,
	                         -1,
	                         0x1p-24,
	                         1023 * 0x1p-24,
	                         0x1p-14,
	                         65504,
	                         0,
	                         -0.0,
	                         -5,
	                         1365 * 0x1p-12, /* 1/3 to half precision */
	                         1638 * 0x1p-14, /* 0.1 likewise */
	                         -0x1p-24,
	                         100,
	                         -65504};
	char path[] = "/tmp/h2o-npy-XXXXXX";
	unsigned char buf[512];
	const size_t len =
	        header(buf, 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2, 2, 2), }");
	for (int i = 0; i < 16; i++) {
		buf[len + 2 * (size_t)i] = (unsigned char)(bits[i] & 0xFF);
		buf[len + 2 * (size_t)i + 1] = (unsigned char)(bits[i] >> 8);
	}
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len + 32), (ssize_t)(len + 32));
	close(fd);
	struct npy_file f;
	char msg[NPY_MSG_MAX];
	double x[16];
	assert_int_equal(npy_open(path, &f, msg), 0);
	assert_int_equal(f.h.rank, 4);
	assert_true(f.h.count == 16);
	assert_int_equal(npy_read(&f, x, msg), 0);
	npy_close(&f);
	for (int i = 0; i < 16; i++) {
		if (!(x[i] == want[i]))
			print_error("half 0x%04x: got %.17g, want %.17g\n", bits[i], x[i], want[i]);
		assert_true(x[i] == want[i]);
	}
	assert_true(signbit(x[9]) && !signbit(x[8]));

	/* A NaN at [1, 0, 1, 1]. */
	buf[len + 2 * 11] = 0x01;
	buf[len + 2 * 11 + 1] = 0x7E;
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len + 32), (ssize_t)(len + 32));
	close(fd);
	assert_int_equal(npy_open(path, &f, msg), 0);
	assert_int_equal(npy_read(&f, x, msg), -1);
	assert_string_equal(msg, "expected finite numbers, element [1, 0, 1, 1] is NaN");
	npy_close(&f);
	unlink(path);
}

int main(int argc, char **argv)
{
	const char *root = argc > 1 ? argv[1] : getenv("H2O_SOURCE_ROOT");
	if (root == NULL || chdir(root) != 0) {
		fprintf(stderr, "usage: test_npy SOURCE_ROOT (or set H2O_SOURCE_ROOT)\n");
		return 2;
	}
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_headers_good), cmocka_unit_test(test_headers_bad),
	        cmocka_unit_test(test_prefix),       cmocka_unit_test(test_files),
	        cmocka_unit_test(test_float16),
	};
	return cmocka_run_group_tests_name("npy", tests, NULL, NULL);
}
