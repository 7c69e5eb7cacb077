/*
 * json_out: JSON values written one way (see json_out.h).
 */
#include "json_out.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/text.h"

void json_exact(FILE *out, double x)
{
	if (isfinite(x))
		fprintf(out, "%.17g", x);
	else
		fputs("null", out);
}

void json_shortest(FILE *out, double x)
{
	if (!isfinite(x)) {
		fputs("null", out);
		return;
	}
	char buf[32];
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof buf, "%.*g", digits, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fputs(buf, out);
}

void json_file_sink(void *out, const char *p, size_t n)
{
	fwrite(p, 1, n, out);
}

void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	text_escape(s, strlen(s), SIZE_MAX, TEXT_ESCAPE_JSON, json_file_sink, out);
	fputc('"', out);
}
