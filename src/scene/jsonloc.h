/*
 * jsonloc: positions in raw JSON text, which cJSON does not keep.
 *
 * cJSON hands back a tree without source positions, yet a scene error must
 * say FILE:LINE:COLUMN and name a JSON path. This module walks the raw text
 * itself, accepting exactly the grammar cJSON accepts (its lenient number and
 * string rules included, NUL bytes excepted), to answer three questions:
 * where is the value at a given path (jsonloc_find), where and why does a
 * text that cJSON rejected go wrong and inside which path (jsonloc_check),
 * and which line and column is a byte offset (jsonloc_linecol). It never
 * allocates more than its path stack, never prints, and knows nothing about
 * scenes: scene.c decides what is an error, jsonloc only says where.
 */
#ifndef H2O_JSONLOC_H
#define H2O_JSONLOC_H

#include <stddef.h>

/* cJSON refuses containers nested deeper than this (CJSON_NESTING_LIMIT);
 * scene.c checks the two agree. */
#define JSONLOC_MAX_DEPTH 1000

#define JSONLOC_PATH_MAX    160
#define JSONLOC_MESSAGE_MAX 200

/* The first syntax error in a text, as found by jsonloc_check. */
struct jsonloc_error {
	size_t offset;                     /* the byte the error is reported at */
	char path[JSONLOC_PATH_MAX];       /* "$", "tokens[3].k", ...: what was being read */
	char message[JSONLOC_MESSAGE_MAX]; /* "syntax error: expected ',' or '}', got ']'" */
};

/*
 * Check TEXT (LEN bytes, need not be NUL-terminated) against cJSON's grammar
 * with nothing but whitespace after the root value and no NUL byte anywhere.
 * Returns 0 when it is well-formed, 1 with *ERR filled at the first error,
 * and -1 when the path stack cannot be allocated.
 */
int jsonloc_check(const char *text, size_t len, struct jsonloc_error *err);

/*
 * Find the value reached from the root by STEPS: each step is the index of a
 * member in an object (in text order, so duplicate keys are told apart) or
 * of an element in an array. Sets *VALUE to the offset of the value's first
 * byte and *KEY to the offset of its key's opening quote (the value's offset
 * when the value is an array element or the root). Returns 0, or -1 when the
 * text has no such value or is malformed before reaching it.
 */
int jsonloc_find(const char *text, size_t len, const int *steps, int nsteps, size_t *key,
                 size_t *value);

/* 1-based line and column of byte OFFSET; columns count UTF-8 code points
 * (any byte that is not a continuation byte), and a leading BOM is not one. */
void jsonloc_linecol(const char *text, size_t len, size_t offset, long *line, long *col);

/* Length of the number literal cJSON reads at OFFSET, 0 when none. */
size_t jsonloc_number_len(const char *text, size_t len, size_t offset);

/*
 * Write S (LEN bytes) into BUF as a double-quoted, escaped string that is
 * safe to print on a terminal: control characters, invisible or
 * direction-changing code points and bytes that are not UTF-8 are escaped,
 * and anything past MAX input bytes is cut and marked with "...". Always
 * NUL-terminates BUF (SIZE > 0); returns BUF.
 */
char *jsonloc_quote(char *buf, size_t size, const char *s, size_t len, size_t max);

/* Describe the character at OFFSET for a "got ..." message: 'x', 'word',
 * '“' (U+201C), byte 0x89, a NUL byte, end of file. Returns BUF. */
char *jsonloc_describe(char *buf, size_t size, const char *text, size_t len, size_t offset);

#endif
