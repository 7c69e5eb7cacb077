/*
 * Unit tests of the frame: the text choke point (escaping, widths,
 * clipping) and the text backend.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/frame.h"

/* The text of row Y after drawing TEXT in MAXW columns at x = 1. */
static char *draw(const char *text, int maxw, bool ascii, int *used)
{
	struct frame *f = frame_new(40, 1, ascii);
	*used = frame_text(f, 1, 0, maxw, text, STYLE_NORMAL);
	char *out = frame_to_text(f);
	frame_free(f);
	return out;
}

static void expect(const char *text, int maxw, bool ascii, const char *want, int want_used)
{
	int used;
	char *got = draw(text, maxw, ascii, &used);
	assert_string_equal(got, want);
	assert_int_equal(used, want_used);
	free(got);
}

static void test_plain_and_clipped(void **state)
{
	(void)state;
	expect("because", 10, false, " because\n", 7);
	expect("because", 7, false, " because\n", 7);
	expect("because", 5, false, " beca\u2026\n", 5);
	expect("because", 5, true, " beca~\n", 5);
	expect("", 5, false, "\n", 0);
}

static void test_controls_escaped(void **state)
{
	(void)state;
	/* ESC [ 2 J would clear a terminal: it must arrive as text. */
	expect("a\x1b[2Jb", 20, false, " a^[[2Jb\n", 7);
	expect("tab\there", 20, false, " tab^Ihere\n", 9);
	expect("del\x7f", 20, false, " del^?\n", 5);
	/* C1 CSI (U+009B) and an OSC introducer. */
	expect("x\xc2\x9by", 20, false, " x<9B>y\n", 6);
	expect("\xc2\x9d"
	       "0;t\x07",
	       20, false, " <9D>0;t^G\n", 9);
	/* Escapes are never split by the ellipsis. */
	expect("ab\x1b", 3, false, " ab\u2026\n", 3);
}

static void test_invalid_utf8(void **state)
{
	(void)state;
	expect("a\xff"
	       "b",
	       10, false, " a\uFFFDb\n", 3);
	expect("\xc0\xaf", 10, false, " \uFFFD\uFFFD\n", 2);           /* overlong '/' */
	expect("\xed\xa0\x80", 10, false, " \uFFFD\uFFFD\uFFFD\n", 3); /* surrogate */
	expect("\xe2\x82", 10, false, " \uFFFD\uFFFD\n", 2);           /* truncated */
	expect("a\xff", 10, true, " a?\n", 2);
}

static void test_wide_and_combining(void **state)
{
	(void)state;
	/* CJK and emoji take two columns; a wide glyph never straddles the
	 * edge. */
	expect("\u732b\u732b", 10, false, " \u732b\u732b\n", 4);
	expect("\u732b\u732b\u732b", 4, false, " \u732b\u2026\n", 3);
	expect("\U0001F600!", 10, false, " \U0001F600!\n", 3);
	/* A combining mark rides on its base; zero-width joiners and bidi
	 * overrides are dropped. */
	expect("e\u0301t\u00e9", 10, false, " e\u0301t\u00e9\n", 3);
	expect("a\u200db\u202ec", 10, false, " abc\n", 3);
	expect("\u732b", 10, true, " ?\n", 1);
	int used;
	char *s = draw("x\u0301\u0302\u0303", 10, false, &used);
	assert_string_equal(s, " x\u0301\n");
	free(s);
}

static void test_width_matches_drawing(void **state)
{
	(void)state;
	const char *texts[] = {"plain", "\u732b\U0001F600", "a\x1b[31mred", "e\u0301", "\xff\xfe"};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		int used;
		char *s = draw(texts[i], 38, false, &used);
		assert_int_equal(used, frame_text_width(texts[i], false));
		free(s);
	}
}

static void test_overwrite_half_of_wide(void **state)
{
	(void)state;
	struct frame *f = frame_new(6, 1, false);
	frame_text(f, 0, 0, 6, "\u732b\u732b", STYLE_NORMAL);
	frame_put(f, 1, 0, 'x', STYLE_NORMAL); /* the right half of the first */
	char *s = frame_to_text(f);
	assert_string_equal(s, " x\u732b\n");
	free(s);
	frame_free(f);
}

static void test_bars(void **state)
{
	(void)state;
	struct frame *f = frame_new(10, 3, false);
	frame_bar(f, 0, 0, 4, 1.0, 1.0, STYLE_NORMAL);  /* full */
	frame_bar(f, 0, 1, 4, 0.5, 1.0, STYLE_NORMAL);  /* 16 eighths */
	frame_bar(f, 0, 2, 4, 0.01, 1.0, STYLE_NORMAL); /* never nothing */
	char *s = frame_to_text(f);
	assert_string_equal(s, "\u2588\u2588\u2588\u2588\n\u2588\u2588\n\u258f\n");
	free(s);
	frame_free(f);
	f = frame_new(10, 2, true);
	frame_bar(f, 0, 0, 4, 0.65, 1.0, STYLE_NORMAL); /* 2.6 cells */
	frame_bar(f, 0, 1, 4, 0.01, 1.0, STYLE_NORMAL);
	s = frame_to_text(f);
	assert_string_equal(s, "##+\n.\n");
	free(s);
	frame_free(f);
}

static void test_to_text_trims(void **state)
{
	(void)state;
	struct frame *f = frame_new(8, 3, false);
	frame_text(f, 2, 1, 6, "hi", STYLE_NORMAL);
	char *s = frame_to_text(f);
	assert_string_equal(s, "\n  hi\n\n");
	free(s);
	frame_free(f);
}

int main(void)
{
	/* Widths come from the C library's UTF-8 tables. */
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		return 1;
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_plain_and_clipped),
	        cmocka_unit_test(test_controls_escaped),
	        cmocka_unit_test(test_invalid_utf8),
	        cmocka_unit_test(test_wide_and_combining),
	        cmocka_unit_test(test_width_matches_drawing),
	        cmocka_unit_test(test_overwrite_half_of_wide),
	        cmocka_unit_test(test_bars),
	        cmocka_unit_test(test_to_text_trims),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
