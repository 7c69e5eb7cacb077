/*
 * check_text: does h2o-tui's text output keep the terminal safe?
 *
 * Reads stdin and checks what tests/hostile_test.sh promises for every
 * output a scene's text can reach: no C0 control byte but the newline, no
 * DEL, no C1 control (U+0080..U+009F, raw or encoded), only valid UTF-8,
 * and, for headless frames, exactly ROWS lines per frame under a
 * "--- step ..." header with no line wider than COLS columns by wcswidth in
 * C.UTF-8 (how a terminal places the glyph after it). A C program rather
 * than a script so the test needs nothing a fresh machine lacks, and so the
 * widths are the C library's, the same the TUI's terminal uses.
 *
 * Usage: check_text COLS ROWS   headless frames of COLSxROWS
 *        check_text 0 0         any text: bytes and UTF-8 only
 * Exit status 0 when all holds, 1 with the first fault on stderr, 2 on bad
 * usage.
 */
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Why LINE fails, or NULL when it is fine. With MEASURE, WIDTH gets its
 * display width and a character without one (unassigned, a line separator)
 * fails too: a frame must escape it, or the terminal and the frame would
 * disagree on the columns. Plain text (a trace) may carry it. */
static const char *check_line(const char *line, size_t len, bool measure, int *width)
{
	mbstate_t st;
	size_t i = 0;

	memset(&st, 0, sizeof st);
	*width = 0;
	while (i < len) {
		unsigned char c = (unsigned char)line[i];
		wchar_t wc;
		size_t n;
		int w;

		if (c < 0x20)
			return "C0 control byte";
		if (c == 0x7f)
			return "DEL byte";
		n = mbrtowc(&wc, line + i, len - i, &st);
		if (n == (size_t)-1 || n == (size_t)-2 || n == 0)
			return "invalid UTF-8 (or a raw C1 byte)";
		if (wc >= 0x80 && wc <= 0x9f)
			return "C1 control character";
		w = wcwidth(wc);
		if (w < 0 && measure)
			return "character with no display width (non-printable)";
		*width += w > 0 ? w : 0;
		i += n;
	}
	return NULL;
}

static bool is_header(const char *line)
{
	int t, n;
	char tail[8];

	/* "--- step T/N ---" or "--- step T/N after KEY ---". */
	if (sscanf(line, "--- step %d/%d %7s", &t, &n, tail) != 3)
		return false;
	return strcmp(tail, "---") == 0 || strcmp(tail, "after") == 0;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	long cols, rows, lineno = 0, in_frame = 0, frames = 0;
	int width;

	if (argc != 3 || (cols = strtol(argv[1], NULL, 10)) < 0 ||
	    (rows = strtol(argv[2], NULL, 10)) < 0) {
		fprintf(stderr, "usage: check_text COLS ROWS (0 0: no frame checks)\n");
		return 2;
	}
	if (!setlocale(LC_ALL, "C.UTF-8") && !setlocale(LC_ALL, "en_US.UTF-8")) {
		fprintf(stderr, "check_text: no UTF-8 locale\n");
		return 2;
	}
	while ((got = getline(&line, &cap, stdin)) > 0) {
		size_t len = (size_t)got;
		const char *why;

		lineno++;
		if (line[len - 1] != '\n') {
			fprintf(stderr, "line %ld: no newline at the end of the output\n", lineno);
			return 1;
		}
		line[--len] = '\0';
		if (memchr(line, '\0', len)) {
			fprintf(stderr, "line %ld: NUL byte\n", lineno);
			return 1;
		}
		why = check_line(line, len, rows != 0, &width);
		if (why) {
			fprintf(stderr, "line %ld: %s: %s\n", lineno, why, line);
			return 1;
		}
		if (rows == 0)
			continue;
		if (in_frame == 0) {
			if (!is_header(line)) {
				fprintf(stderr, "line %ld: expected a '--- step' header: %s\n",
				        lineno, line);
				return 1;
			}
			in_frame = rows;
			frames++;
			continue;
		}
		if (width > cols) {
			fprintf(stderr, "line %ld: %d columns in a frame of %ld: %s\n", lineno,
			        width, cols, line);
			return 1;
		}
		in_frame--;
	}
	free(line);
	if (in_frame != 0) {
		fprintf(stderr, "the last frame has %ld lines, expected %ld\n", rows - in_frame,
		        rows);
		return 1;
	}
	if (rows != 0 && frames == 0) {
		fprintf(stderr, "no frame in the output\n");
		return 1;
	}
	return 0;
}
