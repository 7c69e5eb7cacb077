/*
 * jsonloc_impl: what the JSON locator's two files share (private to
 * src/scene/): jsonloc.c scans raw JSON as cJSON reads it; jsonloc_out.c
 * writes what it finds for a message (quoted text, a byte described, a
 * line and column, the path of what was being read). Neither allocates
 * more than the scanner's stack.
 */
#ifndef H2O_JSONLOC_IMPL_H
#define H2O_JSONLOC_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "jsonloc.h"

/* A UTF-8 byte order mark, which may open a file. */
#define JSONLOC_BOM "\xEF\xBB\xBF"

struct scan_level {
	unsigned char kind; /* '{' or '[' */
	long index;         /* member being read; -1 before an object's first key */
	size_t key;         /* offset of that member's raw key, past its quote */
	size_t key_len;
};

struct scan {
	const unsigned char *s;
	size_t len, pos;
	struct scan_level *stack;
	int depth, cap;
	unsigned char root; /* first byte of the root value */

	/* jsonloc_find's target, when seeking. */
	bool seeking;
	const int *steps;
	int nsteps;
	size_t found_key, found_value;

	size_t comma; /* the last ',' read, for trailing-comma errors */

	/* The last string read. cJSON lets a string run over line breaks, so a
	 * missing closing quote shows up as an error somewhere after the next
	 * quote; when that error follows such a string directly, the string is
	 * the one to blame. */
	size_t str_start, str_end;
	bool str_newline;

	struct jsonloc_error *err; /* NULL when only looking */
};

static inline bool is_blank(unsigned char c)
{
	return c >= 1 && c <= 32; /* cJSON's whitespace: every control byte but NUL */
}

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The path of what SC is reading, for an error line, in BUF: the
 * innermost member only when MEMBER (jsonloc_out.c says how it is cut). */
void jsonloc_format_path(const struct scan *sc, bool member, char *buf, size_t size);

#endif
