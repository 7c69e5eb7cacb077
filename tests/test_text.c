/*
 * Unit tests of the text module: strict decoding, what is unsafe, display
 * widths and clipping, and the two escapes (the trace's JSON and the error
 * messages' quotes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "h2o/text.h"

/* Decode the N bytes of S and check the length and code point. */
static void expect_decode(const char *s, size_t n, size_t want_len, uint32_t want_cp)
{
	uint32_t cp = 0;
	assert_int_equal(text_decode(s, n, &cp), want_len);
	assert_int_equal(cp, want_cp);
}

static void expect_invalid(const char *s, size_t n)
{
	expect_decode(s, n, 0, TEXT_REPLACEMENT);
}

static void test_decode_valid(void **state)
{
	(void)state;
	expect_decode("A", 1, 1, 'A');
	expect_decode("\x7f", 1, 1, 0x7F);
	expect_decode("\xc2\x80", 2, 2, 0x80);
	expect_decode("\xc3\xa9", 2, 2, 0xE9);
	expect_decode("\xdf\xbf", 2, 2, 0x7FF);
	expect_decode("\xe0\xa0\x80", 3, 3, 0x800);
	expect_decode("\xe7\x8c\xab", 3, 3, 0x732B); /* 猫 */
	expect_decode("\xed\x9f\xbf", 3, 3, 0xD7FF); /* just below the surrogates */
	expect_decode("\xee\x80\x80", 3, 3, 0xE000); /* just above them */
	expect_decode("\xef\xbf\xbf", 3, 3, 0xFFFF);
	expect_decode("\xf0\x90\x80\x80", 4, 4, 0x10000);
	expect_decode("\xf0\x9f\x98\x80", 4, 4, 0x1F600);
	expect_decode("\xf4\x8f\xbf\xbf", 4, 4, 0x10FFFF);
	/* A literal U+FFFD is valid, and told apart from a bad byte. */
	expect_decode("\xef\xbf\xbd", 3, 3, 0xFFFD);
	/* Only the first sequence is read. */
	expect_decode("\xc3\xa9xyz", 5, 2, 0xE9);
}

static void test_decode_invalid(void **state)
{
	(void)state;
	expect_invalid("", 0);
	expect_invalid("\x80", 1);         /* a continuation byte alone */
	expect_invalid("\xbf\xbf", 2);     /* so is this */
	expect_invalid("\xc3\x41", 2);     /* a lead byte without its continuation */
	expect_invalid("\xe7\x8c\x41", 3); /* one short, then ASCII */
	expect_invalid("\xf5\x80\x80\x80", 4);
	expect_invalid("\xff", 1);
	expect_invalid("\xfe", 1);
	/* Above U+10FFFF. */
	expect_invalid("\xf4\x90\x80\x80", 4);
	expect_invalid("\xf7\xbf\xbf\xbf", 4);
}

static void test_decode_overlong(void **state)
{
	(void)state;
	expect_invalid("\xc0\xaf", 2); /* '/' in two bytes */
	expect_invalid("\xc1\xbf", 2);
	expect_invalid("\xc0\x80", 2); /* NUL in two bytes ("modified UTF-8") */
	expect_invalid("\xe0\x80\xaf", 3);
	expect_invalid("\xe0\x9f\xbf", 3); /* U+07FF in three bytes */
	expect_invalid("\xf0\x80\x80\xaf", 4);
	expect_invalid("\xf0\x8f\xbf\xbf", 4); /* U+FFFF in four bytes */
}

static void test_decode_surrogate(void **state)
{
	(void)state;
	expect_invalid("\xed\xa0\x80", 3); /* U+D800 */
	expect_invalid("\xed\xaf\xbf", 3); /* U+DBFF */
	expect_invalid("\xed\xb0\x80", 3); /* U+DC00 */
	expect_invalid("\xed\xbf\xbf", 3); /* U+DFFF */
	/* CESU-8's pair for U+1F600 is two invalid halves. */
	expect_invalid("\xed\xa0\xbd\xed\xb8\x80", 6);
}

static void test_decode_truncated(void **state)
{
	(void)state;
	/* The end of the buffer cuts the sequence: never read past N. */
	expect_invalid("\xc3\xa9", 1);
	expect_invalid("\xe7\x8c\xab", 1);
	expect_invalid("\xe7\x8c\xab", 2);
	expect_invalid("\xf0\x9f\x98\x80", 3);
	/* A NUL where a continuation is due. */
	expect_invalid("\xe7\x8c\0", 3);
}

static void test_encode_round_trip(void **state)
{
	(void)state;
	static const uint32_t cps[] = {0,      'A',    0x7F,   0x80,    0x7FF,   0x800,   0xD7FF,
	                               0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF};
	for (size_t i = 0; i < sizeof cps / sizeof cps[0]; i++) {
		char buf[4];
		uint32_t back;
		size_t n = text_encode(cps[i], buf);
		assert_int_equal(text_decode(buf, n, &back), n);
		assert_int_equal(back, cps[i]);
	}
}

static void test_class_controls(void **state)
{
	(void)state;
	assert_int_equal(text_class(0x00), TEXT_CONTROL);
	assert_int_equal(text_class(0x07), TEXT_CONTROL); /* BEL */
	assert_int_equal(text_class(0x1B), TEXT_CONTROL); /* ESC */
	assert_int_equal(text_class(0x1F), TEXT_CONTROL);
	assert_int_equal(text_class(0x7F), TEXT_CONTROL); /* DEL */
	assert_int_equal(text_class(0x80), TEXT_CONTROL);
	assert_int_equal(text_class(0x85), TEXT_CONTROL); /* NEL */
	assert_int_equal(text_class(0x9B), TEXT_CONTROL); /* CSI */
	assert_int_equal(text_class(0x9F), TEXT_CONTROL);
	/* Printable neighbours. */
	assert_int_equal(text_class(0x20), 0);
	assert_int_equal(text_class('~'), 0);
	assert_int_equal(text_class(0xA0), 0);
	assert_int_equal(text_class(0xE9), 0);
}

static void test_class_invisible_and_deceptive(void **state)
{
	(void)state;
	const unsigned both = TEXT_INVISIBLE | TEXT_DECEPTIVE;
	/* Bidirectional controls: marks, embeddings and overrides, isolates. */
	assert_int_equal(text_class(0x200E), both); /* LRM */
	assert_int_equal(text_class(0x200F), both); /* RLM */
	assert_int_equal(text_class(0x202A), both); /* LRE */
	assert_int_equal(text_class(0x202E), both); /* RLO */
	assert_int_equal(text_class(0x2066), both); /* LRI */
	assert_int_equal(text_class(0x2069), both); /* PDI */
	/* Zero-width and format characters. */
	assert_int_equal(text_class(0x00AD), both);
	assert_int_equal(text_class(0x200B), both);
	assert_int_equal(text_class(0x200D), both); /* ZWJ */
	assert_int_equal(text_class(0x2028), both);
	assert_int_equal(text_class(0x2060), both);
	assert_int_equal(text_class(0xFE0F), both);
	assert_int_equal(text_class(0xFEFF), both);
	assert_int_equal(text_class(0x180E), both);
	assert_int_equal(text_class(0xE0041), both); /* TAG LATIN CAPITAL A */
	/* Hidden in a message, but a frame shows or attaches them. */
	assert_int_equal(text_class(0x034F), TEXT_DECEPTIVE);
	assert_int_equal(text_class(0x061C), TEXT_DECEPTIVE); /* ALM */
	assert_int_equal(text_class(0x115F), TEXT_DECEPTIVE);
	assert_int_equal(text_class(0x3164), TEXT_DECEPTIVE);
	assert_int_equal(text_class(0xFFA0), TEXT_DECEPTIVE);
	assert_int_equal(text_class(0xFFF9), TEXT_DECEPTIVE);
	assert_int_equal(text_class(0xFFFF), TEXT_DECEPTIVE);
	/* Even U+FFFD itself: in a message it would pass for a bad byte. */
	assert_int_equal(text_class(0xFFFD), TEXT_DECEPTIVE);
	assert_int_equal(text_class(0x1D173), TEXT_DECEPTIVE);
	assert_int_equal(text_class(0xF0000), TEXT_DECEPTIVE);
	assert_int_equal(text_class(0x10FFFF), TEXT_DECEPTIVE);
	assert_int_equal(text_class(0xD800), TEXT_DECEPTIVE);
	assert_int_equal(text_class(0x110000), TEXT_DECEPTIVE);
	assert_int_equal(text_class(UINT32_MAX), TEXT_DECEPTIVE);
	/* Skin tone modifiers change a terminal's columns, not a message. */
	assert_int_equal(text_class(0x1F3FB), TEXT_INVISIBLE);
	assert_int_equal(text_class(0x1F3FF), TEXT_INVISIBLE);
	/* Safe: letters, CJK, emoji, combining marks, BMP private use. */
	assert_int_equal(text_class(0x05D0), 0);
	assert_int_equal(text_class(0x0301), 0);
	assert_int_equal(text_class(0x4E00), 0);
	assert_int_equal(text_class(0x1F600), 0);
	assert_int_equal(text_class(0xFFEF), 0);
	assert_int_equal(text_class(0xE000), 0);
	assert_int_equal(text_class(0x1F3FA), 0);
	assert_int_equal(text_class(0x1F400), 0);
}

/* The first unit of S. */
static struct text_glyph first_glyph(const char *s, bool ascii, size_t *used)
{
	struct text_glyph g = {{0}, 0, 0, 0};
	const char *p = s, *end = s + strlen(s);
	assert_true(text_next_glyph(&p, end, ascii, &g));
	*used = (size_t)(p - s);
	return g;
}

static void test_glyphs(void **state)
{
	(void)state;
	size_t used;
	struct text_glyph g;

	g = first_glyph("\xe7\x8c\xab!", false, &used); /* 猫 */
	assert_int_equal(g.n, 1);
	assert_int_equal(g.cp[0], 0x732B);
	assert_int_equal(g.width, 2);
	assert_int_equal(used, 3);
	/* e + acute + circumflex: the first mark is kept, the second dropped. */
	g = first_glyph("e\xcc\x81\xcc\x82x", false, &used);
	assert_int_equal(g.cp[0], 'e');
	assert_int_equal(g.comb, 0x301);
	assert_int_equal(g.width, 1);
	assert_int_equal(used, 5);
	/* Controls are escapes of ASCII glyphs. */
	g = first_glyph("\x1b[2J", false, &used);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.cp[0], '^');
	assert_int_equal(g.cp[1], '[');
	assert_int_equal(g.width, 2);
	g = first_glyph("\xc2\x9b", false, &used);
	assert_int_equal(g.n, 4);
	assert_int_equal(g.width, 4);
	assert_int_equal(g.cp[1], '9');
	/* A bad byte, and a code point with no width (unassigned U+0378). */
	g = first_glyph("\xff", false, &used);
	assert_int_equal(g.cp[0], TEXT_REPLACEMENT);
	assert_int_equal(g.width, 1);
	g = first_glyph("\xcd\xb8", false, &used);
	assert_int_equal(g.cp[0], TEXT_REPLACEMENT);
	/* An invisible code point is dropped, not attached. */
	g = first_glyph("a\xe2\x80\xae", false, &used); /* a + RLO */
	assert_int_equal(g.comb, 0);
	assert_int_equal(used, 4);
	g = first_glyph("\xe2\x80\x8b"
	                "b",
	                false, &used); /* ZWSP + b */
	assert_int_equal(g.cp[0], 'b');
	/* A deceptive code point without a width is dropped too, never
	 * attached (the Arabic letter mark, a bidi control; the combining
	 * grapheme joiner); one with a width shows as U+FFFD (a Hangul
	 * filler, which draws as a blank). */
	g = first_glyph("a\xd8\x9c", false, &used); /* a + ALM */
	assert_int_equal(g.comb, 0);
	assert_int_equal(used, 3);
	g = first_glyph("e\xcd\x8fx", false, &used); /* e + CGJ */
	assert_int_equal(g.comb, 0);
	g = first_glyph("\xe3\x85\xa4", false, &used); /* U+3164 */
	assert_int_equal(g.cp[0], TEXT_REPLACEMENT);
	assert_int_equal(g.width, 1);
	/* ASCII: '?' for anything else, marks dropped. */
	g = first_glyph("\xe7\x8c\xab", true, &used);
	assert_int_equal(g.cp[0], '?');
	assert_int_equal(g.width, 1);
	/* Nothing left: only zero-width code points. */
	const char *s = "\xcc\x81\xe2\x80\x8b", *end = s + strlen(s);
	assert_false(text_next_glyph(&s, end, false, &g));
	assert_ptr_equal(s, end);
}

static void test_width(void **state)
{
	(void)state;
	assert_int_equal(text_width("", 0, false), 0);
	assert_int_equal(text_width("cat", 3, false), 3);
	assert_int_equal(text_width("\xe7\x8c\xab\xe3\x81\xae", 6, false), 4); /* 猫の */
	assert_int_equal(text_width("\xe7\x8c\xab\xe3\x81\xae", 6, true), 2);
	assert_int_equal(text_width("e\xcc\x81", 3, false), 1);
	assert_int_equal(text_width("e\xcc\x81", 3, true), 1);
	assert_int_equal(text_width("a\x1b"
	                            "b",
	                            3, false),
	                 4);                                   /* a^[b */
	assert_int_equal(text_width("\x7f", 1, false), 2);     /* ^? */
	assert_int_equal(text_width("\xc2\x85", 2, false), 4); /* <85> */
	assert_int_equal(text_width("a\xe2\x80\x8b"
	                            "b",
	                            5, false),
	                 2); /* ZWSP dropped */
	assert_int_equal(text_width("\xff\xfe", 2, false), 2);
	/* LEN bounds the text, not a NUL. */
	assert_int_equal(text_width("cat", 2, false), 2);
}

static void test_clip(void **state)
{
	(void)state;
	const char *s = "ab\xe7\x8c\xab"
	                "cd"; /* ab猫cd: 6 columns, 7 bytes */
	int w = -1;

	assert_int_equal(text_clip(s, 7, 100, false, &w), 7);
	assert_int_equal(w, 6);
	assert_int_equal(text_clip(s, 7, 6, false, &w), 7);
	assert_int_equal(w, 6);
	/* A wide glyph is never split. */
	assert_int_equal(text_clip(s, 7, 3, false, &w), 2);
	assert_int_equal(w, 2);
	assert_int_equal(text_clip(s, 7, 4, false, &w), 5);
	assert_int_equal(w, 4);
	assert_int_equal(text_clip(s, 7, 0, false, &w), 0);
	assert_int_equal(w, 0);
	/* A combining mark stays with its glyph. */
	assert_int_equal(text_clip("e\xcc\x81x", 4, 1, false, &w), 3);
	assert_int_equal(w, 1);
	/* Nor is an escape split. */
	assert_int_equal(text_clip("a\x1b", 2, 2, false, &w), 1);
	assert_int_equal(w, 1);
	/* ASCII: 猫 is one '?'. */
	assert_int_equal(text_clip(s, 7, 3, true, &w), 5);
	assert_int_equal(w, 3);
}

struct buf {
	char s[256];
	size_t len;
};

static void buf_put(void *ctx, const char *p, size_t n)
{
	struct buf *b = ctx;
	assert_true(b->len + n < sizeof b->s);
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void expect_escape(const char *s, size_t max, unsigned flags, const char *want,
                          size_t want_used)
{
	struct buf b = {{0}, 0};
	assert_int_equal(text_escape(s, strlen(s), max, flags, buf_put, &b), want_used);
	assert_string_equal(b.s, want);
}

static void expect_json(const char *s, const char *want)
{
	expect_escape(s, SIZE_MAX, TEXT_ESCAPE_JSON, want, strlen(s));
}

static void expect_message(const char *s, const char *want)
{
	expect_escape(s, SIZE_MAX, TEXT_ESCAPE_MESSAGE, want, strlen(s));
}

static void test_escape_json(void **state)
{
	(void)state;
	expect_json("", "");
	expect_json("cat", "cat");
	expect_json("a\"b\\c/d", "a\\\"b\\\\c/d");
	expect_json("\n\t\r", "\\u000a\\u0009\\u000d");
	expect_json("\x1b[2J\x7f", "\\u001b[2J\\u007f");
	/* C1 is valid JSON, escaped all the same (U+009B is CSI). */
	expect_json("x\xc2\x9b"
	            "y",
	            "x\\u009by");
	/* Invalid UTF-8: one U+FFFD per bad byte. */
	expect_json("\xff", "\\ufffd");
	expect_json("\xc0\xaf", "\\ufffd\\ufffd");
	expect_json("\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd");
	expect_json("a\xe7\x8c", "a\\ufffd\\ufffd");
	/* Everything else raw, so a JSON reader gets the text back. */
	expect_json("\xe7\x8c\xab", "\xe7\x8c\xab");
	expect_json("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");
	expect_json("\xe2\x80\xae", "\xe2\x80\xae");
	expect_json("\xef\xbf\xbd", "\xef\xbf\xbd");
}

static void test_escape_message(void **state)
{
	(void)state;
	expect_message("a\"b\\c", "a\\\"b\\\\c");
	expect_message("\n\t\r\x01", "\\n\\t\\r\\u0001");
	expect_message("\xc2\x9b", "\\u009b");
	/* The bad byte itself, not U+FFFD. */
	expect_message("a\xff"
	               "b",
	               "a\\xffb");
	expect_message("\xed\xa0\x80", "\\xed\\xa0\\x80");
	/* Bidi and invisible code points, above U+FFFF as a surrogate pair. */
	expect_message("\xe2\x80\xae"
	               "abc",
	               "\\u202eabc");
	expect_message("\xe2\x81\xa6", "\\u2066");
	expect_message("\xd8\x9c", "\\u061c");
	expect_message("\xf3\xa0\x81\x81", "\\udb40\\udc41");
	expect_message("\xf4\x8f\xbf\xbf", "\\udbff\\udfff");
	expect_message("\xef\xbf\xbd", "\\ufffd");
	expect_message("\xe7\x8c\xab \xf0\x9f\x98\x80", "\xe7\x8c\xab \xf0\x9f\x98\x80");
	/* JSON source text: its backslashes are escapes already. */
	expect_escape("a\\nb\"", SIZE_MAX, TEXT_ESCAPE_MESSAGE | TEXT_ESCAPE_SOURCE, "a\\nb\\\"",
	              5);
}

static void test_escape_max(void **state)
{
	(void)state;
	expect_escape("abcdef", 3, TEXT_ESCAPE_MESSAGE, "abc", 3);
	expect_escape("abc", 3, TEXT_ESCAPE_MESSAGE, "abc", 3);
	expect_escape("abc", 0, TEXT_ESCAPE_MESSAGE, "", 0);
	/* A sequence that starts before MAX is written whole. */
	expect_escape("a\xe7\x8c\xab"
	              "b",
	              2, TEXT_ESCAPE_MESSAGE, "a\xe7\x8c\xab", 4);
	expect_escape("a\xe2\x80\xae"
	              "b",
	              2, TEXT_ESCAPE_MESSAGE, "a\\u202e", 4);
}

static void test_locale(void **state)
{
	(void)state;
	assert_true(text_locale_is_utf8());
	assert_non_null(setlocale(LC_CTYPE, "C"));
	assert_false(text_locale_is_utf8());
	assert_non_null(setlocale(LC_CTYPE, "C.UTF-8"));
	assert_true(text_locale_is_utf8());
}

/* The lines of TEXT wrapped at MAXW, joined by '|', into OUT. */
static const char *wrapped(const char *text, int maxw, bool ascii, char *out, size_t size)
{
	char line[TEXT_WRAP_MAX];
	size_t len = 0;
	out[0] = '\0';
	while (text_wrap_next(&text, maxw, ascii, line, sizeof line))
		len += (size_t)snprintf(out + len, size - len, "%s%s", len ? "|" : "", line);
	return out;
}

static void test_wrap(void **state)
{
	(void)state;
	char out[256];
	/* Whole words, one space between them, as many as fit. */
	assert_string_equal(wrapped("the cat  sat\ton the\rmat", 7, false, out, sizeof out),
	                    "the cat|sat on|the mat");
	assert_int_equal(text_wrap_count("the cat  sat\ton the\rmat", 7, false), 3);
	/* Exactly the width fits; one column more goes on. */
	assert_string_equal(wrapped("abc def", 7, false, out, sizeof out), "abc def");
	assert_string_equal(wrapped("abc def", 6, false, out, sizeof out), "abc|def");
	/* A line break ends a line; two make an empty one. */
	assert_string_equal(wrapped("one\ntwo\n\nthree", 40, false, out, sizeof out),
	                    "one|two||three");
	assert_int_equal(text_wrap_count("one\ntwo\n\nthree", 40, false), 4);
	/* A word wider than the line stands alone. */
	assert_string_equal(wrapped("a abcdefgh b", 4, false, out, sizeof out), "a|abcdefgh|b");
	/* Columns, not bytes: each of these takes two (and one in ASCII, as
	 * '?'). */
	assert_string_equal(wrapped("\u732b \u732b \u732b", 5, false, out, sizeof out),
	                    "\u732b \u732b|\u732b");
	assert_string_equal(wrapped("\u732b \u732b \u732b", 5, true, out, sizeof out),
	                    "\u732b \u732b \u732b");
	/* Blanks only: no line at all. */
	assert_int_equal(text_wrap_count(" \t \r ", 10, false), 0);
	assert_int_equal(text_wrap_count("", 10, false), 0);
	/* A word longer than the buffer is cut where a character starts. */
	char small[6];
	const char *at = "ab\u00e9\u00e9\u00e9 x";
	assert_true(text_wrap_next(&at, 80, false, small, sizeof small));
	assert_string_equal(small, "ab\u00e9");
	assert_true(text_wrap_next(&at, 80, false, small, sizeof small));
	assert_string_equal(small, "x");
	assert_false(text_wrap_next(&at, 80, false, small, sizeof small));
}

int main(void)
{
	/* Widths come from the C library's UTF-8 tables. */
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		return 1;
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_decode_valid),
	        cmocka_unit_test(test_decode_invalid),
	        cmocka_unit_test(test_decode_overlong),
	        cmocka_unit_test(test_decode_surrogate),
	        cmocka_unit_test(test_decode_truncated),
	        cmocka_unit_test(test_encode_round_trip),
	        cmocka_unit_test(test_class_controls),
	        cmocka_unit_test(test_class_invisible_and_deceptive),
	        cmocka_unit_test(test_glyphs),
	        cmocka_unit_test(test_width),
	        cmocka_unit_test(test_clip),
	        cmocka_unit_test(test_wrap),
	        cmocka_unit_test(test_escape_json),
	        cmocka_unit_test(test_escape_message),
	        cmocka_unit_test(test_escape_max),
	        cmocka_unit_test(test_locale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
