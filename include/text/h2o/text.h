/*
 * text: untrusted UTF-8, decoded once and made safe to show.
 *
 * Scene text leaves the program by three doors: the cell grid (frame_text,
 * and from there a terminal), the JSON Lines trace, and the one-line error
 * about a bad scene, which quotes a piece of the file. All three need the
 * same strict decoding and the same knowledge of which code points a
 * terminal obeys, hides or reorders; this module is that knowledge, and
 * the only UTF-8 decoder in the project. Each door still shows what it
 * refuses in its own way (^X in a cell, \u001b in JSON, \x89 in a message),
 * so the classification comes as classes a caller picks from and the
 * escaper takes flags; the header of each says which caller needs what and
 * why.
 *
 * Display widths are the C library's wcwidth, so they follow LC_CTYPE,
 * which must be a UTF-8 one (text_locale_is_utf8; main sees to it): the
 * text backend and the terminal then agree on every column.
 */
#ifndef H2O_TEXT_H
#define H2O_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- decoding ---------------------------------------------------------- */

/* What a byte that starts no valid sequence reads as. */
#define TEXT_REPLACEMENT 0xFFFDu

/*
 * Decode the sequence at S (N bytes available, need not be NUL-terminated)
 * strictly: returns its length, 1 to 4, with its code point in *CP. Returns
 * 0, with *CP = TEXT_REPLACEMENT, when N is 0 or the byte at S starts no
 * valid sequence: a continuation byte, an overlong form, a surrogate, a
 * value above U+10FFFF, or a sequence cut short by the end or by a byte
 * that is not a continuation. A reader skips one byte then, so every bad
 * byte is one U+FFFD and the good text after it still decodes.
 */
size_t text_decode(const char *s, size_t n, uint32_t *cp);

/* Encode CP (at most U+10FFFF, not a surrogate) as UTF-8 into OUT; returns
 * its length, 1 to 4. */
size_t text_encode(uint32_t cp, char out[4]);

/* ---- what is unsafe ---------------------------------------------------- */

/*
 * The classes of code points that must not reach a terminal as they are.
 * A code point may be in several; text_class gives them all and each
 * caller refuses the ones its output needs refused:
 *
 *   frames     TEXT_CONTROL shown escaped (^[, ^?, <9B>), TEXT_INVISIBLE
 *              dropped: a cell must know its columns, and terminals
 *              disagree on those of an invisible code point; the rest of
 *              TEXT_DECEPTIVE dropped when it has no width and drawn as
 *              U+FFFD when it has one, so no cell can hide, blank out or
 *              reorder what a screen shows.
 *   trace      TEXT_CONTROL only: JSON allows every other code point raw
 *              and a JSON reader must get the token's text back; a control
 *              could act on the terminal that shows the file.
 *   messages   TEXT_CONTROL and TEXT_DECEPTIVE: a quoted piece of a hostile
 *              file must not hide, blank out or reorder the message around
 *              it, and a message has no need to be read back.
 */
enum text_class {
	/* C0 controls, DEL and C1 controls (U+0000..U+001F, U+007F..U+009F):
	 * a terminal obeys them (ESC and U+009B start sequences). */
	TEXT_CONTROL = 1u << 0,
	/* No glyph of their own and a width terminals disagree on: the soft
	 * hyphen, zero-width spaces and joiners, directional marks, overrides
	 * and isolates, line and paragraph separators, the word joiner and
	 * invisible operators, variation selectors, the BOM, the Mongolian
	 * vowel separator, tags, and the emoji skin tone modifiers. */
	TEXT_INVISIBLE = 1u << 1,
	/* What can hide or disguise text when echoed ("Trojan Source"):
	 * everything invisible above but the skin tone modifiers, and also
	 * the combining grapheme joiner, the Arabic letter mark, the Hangul
	 * and Khmer fillers and inherent vowels that show as blanks, the
	 * Mongolian free variation selectors, the interlinear annotation
	 * characters and other specials (U+FFF0..U+FFFF, the replacement
	 * character among them), the musical formatting controls,
	 * surrogates, the private use planes 15 and 16, and anything above
	 * U+10FFFF. */
	TEXT_DECEPTIVE = 1u << 2,
};

/* The classes CP is in (enum text_class bits), 0 for a code point that is
 * safe to show as it is. */
unsigned text_class(uint32_t cp);

/* ---- display width ----------------------------------------------------- */

/*
 * One unit of text as a cell grid draws it: a glyph (CP[0], width 1 or 2,
 * with at most one combining mark COMB drawn on it), or an escape shown as
 * N ASCII glyphs of width 1 each ("^[", "^?", "<9B>").
 */
struct text_glyph {
	uint32_t cp[4];
	uint32_t comb;
	int n;     /* glyphs in cp[] */
	int width; /* columns */
};

/*
 * Read the next unit of [*S, END) into *G and move *S past it; returns
 * false at the end. C0 controls show as ^X (DEL as ^?), C1 controls as
 * <XX>, invalid bytes, code points wcwidth gives no width and deceptive
 * ones with a width as U+FFFD; TEXT_INVISIBLE code points and deceptive
 * ones without a width are dropped, and so is every zero-width code
 * point after a glyph but the first combining mark, which goes into COMB.
 * With ASCII every other non-ASCII glyph is '?' and zero-width code points
 * are dropped. A unit always has a width, so a string's width is the sum.
 */
bool text_next_glyph(const char **s, const char *end, bool ascii, struct text_glyph *g);

/* The columns the LEN bytes of S take as units (text_next_glyph). */
int text_width(const char *s, size_t len, bool ascii);

/*
 * The longest run of whole units from the start of S (LEN bytes) that fits
 * in MAXW columns: returns its length in bytes, LEN when all of S fits, and
 * sets *WIDTH to its columns. Drawing the units of those bytes draws
 * exactly what fits; a unit is never split.
 */
size_t text_clip(const char *s, size_t len, int maxw, bool ascii, int *width);

/* ---- wrapping by words ------------------------------------------------- */

/* The longest line text_wrap_count measures, in bytes with its NUL. */
#define TEXT_WRAP_MAX 4096

/*
 * The next line of *AT in at most MAXW columns into LINE (SIZE bytes, at
 * most TEXT_WRAP_MAX for text_wrap_count to agree), moving *AT past it:
 * whole words joined by one space (spaces, tabs and carriage returns are
 * blanks), a line break in the text ending the line (two make an empty
 * line). A word wider than a line stands alone on it, for the drawing to
 * cut; one longer than SIZE is cut where a character starts and the rest
 * of it skipped. Returns false when nothing but blanks is left.
 */
bool text_wrap_next(const char **at, int maxw, bool ascii, char *line, size_t size);

/* The lines text_wrap_next makes of TEXT at MAXW columns. */
int text_wrap_count(const char *text, int maxw, bool ascii);

/* ---- escaping ---------------------------------------------------------- */

/*
 * How text_escape writes what it refuses. With no flag it writes the body
 * of a JSON string (RFC 8259) that a JSON reader reads back as the text:
 * '"' and '\' escaped, TEXT_CONTROL code points as \u00XX, every other
 * valid code point raw and every invalid byte as \ufffd. That is the
 * trace's TEXT_ESCAPE_JSON.
 */
enum text_escape_flags {
	/* \n, \t and \r rather than \u000a, \u0009 and \u000d: shorter to
	 * read in a message. */
	TEXT_ESCAPE_SHORT = 1u << 0,
	/* An invalid byte as \xNN rather than \ufffd: not JSON, but says
	 * exactly which byte of the file is wrong. */
	TEXT_ESCAPE_BYTES = 1u << 1,
	/* TEXT_DECEPTIVE code points as \uXXXX too (above U+FFFF as a
	 * surrogate pair, as JSON writes them). */
	TEXT_ESCAPE_DECEPTIVE = 1u << 2,
	/* S is JSON source text (a key as it stands in the file): its
	 * backslashes are escapes already and are copied as they are. */
	TEXT_ESCAPE_SOURCE = 1u << 3,
};

/* The trace's strings: JSON that reads back as the token's text. */
#define TEXT_ESCAPE_JSON 0u
/* A piece of an untrusted file quoted in an error message for a terminal. */
#define TEXT_ESCAPE_MESSAGE (TEXT_ESCAPE_SHORT | TEXT_ESCAPE_BYTES | TEXT_ESCAPE_DECEPTIVE)

/* Where text_escape writes: N bytes at P, to CTX. */
typedef void text_sink(void *ctx, const char *p, size_t n);

/*
 * Write S (LEN bytes) escaped by FLAGS to PUT, without the quotes around
 * it, stopping before the first unit that starts at or after MAX bytes (a
 * sequence that starts before MAX is written whole). Returns the bytes of S
 * written; less than LEN when MAX cut it.
 */
size_t text_escape(const char *s, size_t len, size_t max, unsigned flags, text_sink *put,
                   void *ctx);

/* ---- the locale -------------------------------------------------------- */

/* Whether LC_CTYPE, as setlocale left it, encodes UTF-8: the one check the
 * program and the terminal backend make. */
bool text_locale_is_utf8(void);

#endif
