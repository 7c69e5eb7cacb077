/*
 * json_out: the output stage's one way of writing JSON values, for the
 * report, the sweep, the real drop and the trace alike. A number that is
 * not finite (a model whose activations overflowed) is written null:
 * never nan or inf, which no JSON reader takes.
 */
#ifndef H2O_JSON_OUT_H
#define H2O_JSON_OUT_H

#include <stdio.h>

/* X with 17 significant digits (%.17g), exact whatever it is. */
void json_exact(FILE *out, double x);
/* X with the fewest significant digits, 15 to 17, that read back as X:
 * 0.95 as the user wrote it, 0.07999999999999999 where it takes them. */
void json_shortest(FILE *out, double x);
/* S (untrusted text) as a JSON string, quotes included: valid UTF-8 as it
 * is, invalid bytes as U+FFFD, control characters (C0, DEL and C1: a
 * terminal may obey 0x9B) escaped. */
void json_string(FILE *out, const char *s);
/* A sink for text_escape (text.h) writing to the FILE * OUT. */
void json_file_sink(void *out, const char *p, size_t n);

#endif
