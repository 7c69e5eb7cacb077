/*
 * frame: the cell grid, and the one function that lets scene text in.
 *
 * Untrusted text is decoded here and nowhere else. Decoding is strict UTF-8
 * (no overlongs, no surrogates, nothing above U+10FFFF); each bad byte
 * becomes U+FFFD. Display width comes from wcwidth on the decoded code point,
 * so the caller must run with a UTF-8 LC_CTYPE (main sees to it); the text
 * backend and the ncurses backend then agree on every column.
 */
#include "h2o/frame.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define REPLACEMENT 0xFFFDu

/* One unit of decoded text as drawn: a glyph (cp + optional combining mark,
 * width 1 or 2) or an escape shown as up to four ASCII glyphs. */
struct unit {
	uint32_t cp[4];
	uint32_t comb;
	int n;     /* glyphs in cp[] */
	int width; /* columns */
};

/* Decode one code point from S (at most END); returns bytes used, and
 * U+FFFD for a byte that does not start a valid sequence. */
static int utf8_decode(const unsigned char *s, const unsigned char *end, uint32_t *cp)
{
	const unsigned char c = s[0];
	int len;
	uint32_t min, v;
	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if (c >= 0xC2 && c <= 0xDF) {
		len = 2, min = 0x80, v = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3, min = 0x800, v = c & 0x0F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4, min = 0x10000, v = c & 0x07;
	} else {
		*cp = REPLACEMENT;
		return 1;
	}
	if (end - s < len) {
		*cp = REPLACEMENT;
		return 1;
	}
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80) {
			*cp = REPLACEMENT;
			return 1;
		}
		v = (v << 6) | (s[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
		*cp = REPLACEMENT;
		return 1;
	}
	*cp = v;
	return len;
}

static int utf8_encode(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	} else if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	} else if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Zero-width characters that are not combining marks: format controls
 * (zero-width space and joiners, bidirectional overrides and isolates, word
 * joiner, BOM), variation selectors and tags. Terminals disagree on how
 * they affect the columns after them, so they are dropped. */
static int is_invisible(uint32_t cp)
{
	return (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
	       (cp >= 0x2060 && cp <= 0x206F) || (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFEFF ||
	       cp == 0x180E || cp == 0x00AD || (cp >= 0xE0000 && cp <= 0xE0FFF) ||
	       (cp >= 0x1F3FB && cp <= 0x1F3FF);
}

static void unit_ascii(struct unit *u, const char *s)
{
	u->n = 0;
	u->comb = 0;
	while (*s && u->n < 4)
		u->cp[u->n++] = (unsigned char)*s++;
	u->width = u->n;
}

/*
 * Next unit of S. Returns false at the end. Zero-width code points are
 * attached to the unit before (one combining mark) or dropped, so a unit
 * always has a width.
 */
static bool next_unit(const unsigned char **s, const unsigned char *end, bool ascii, struct unit *u)
{
	while (*s < end) {
		uint32_t cp;
		*s += utf8_decode(*s, end, &cp);
		if (cp < 0x20) {
			char esc[3] = {'^', (char)(cp + 0x40), 0};
			unit_ascii(u, esc);
		} else if (cp == 0x7F) {
			unit_ascii(u, "^?");
		} else if (cp >= 0x80 && cp < 0xA0) {
			char esc[5];
			snprintf(esc, sizeof esc, "<%02X>", (unsigned)cp);
			unit_ascii(u, esc);
		} else if (cp < 0x80) {
			u->cp[0] = cp, u->n = 1, u->width = 1, u->comb = 0;
		} else if (ascii) {
			int w = wcwidth((wchar_t)cp);
			if (w == 0)
				continue; /* a combining mark on a '?' adds nothing */
			unit_ascii(u, "?");
		} else {
			int w = is_invisible(cp) ? 0 : wcwidth((wchar_t)cp);
			if (w == 0)
				continue; /* handled by the caller's look-ahead */
			if (w < 0) {
				cp = REPLACEMENT;
				w = 1;
			}
			u->cp[0] = cp, u->n = 1, u->width = w, u->comb = 0;
		}
		/* Attach the first combining mark that follows a plain glyph;
		 * drop any further zero-width code points. */
		while (*s < end && !ascii) {
			uint32_t next;
			int len = utf8_decode(*s, end, &next);
			if (next < 0xA0 || wcwidth((wchar_t)next) != 0)
				break;
			*s += len;
			if (!is_invisible(next) && u->n == 1 && u->comb == 0 && u->cp[0] >= 0x20)
				u->comb = next;
		}
		return true;
	}
	return false;
}

struct frame *frame_new(int cols, int rows, bool ascii)
{
	if (cols < 1 || rows < 1)
		return NULL;
	struct frame *f = malloc(sizeof *f);
	if (!f)
		return NULL;
	f->cols = cols;
	f->rows = rows;
	f->ascii = ascii;
	f->cells = malloc((size_t)cols * (size_t)rows * sizeof *f->cells);
	if (!f->cells) {
		free(f);
		return NULL;
	}
	frame_clear(f);
	return f;
}

void frame_free(struct frame *f)
{
	if (!f)
		return;
	free(f->cells);
	free(f);
}

void frame_clear(struct frame *f)
{
	const size_t count = (size_t)f->cols * (size_t)f->rows;
	for (size_t i = 0; i < count; i++)
		f->cells[i] = (struct cell){.cp = ' ', .comb = 0, .style = STYLE_NORMAL};
}

struct cell *frame_cell(struct frame *f, int x, int y)
{
	if (x < 0 || y < 0 || x >= f->cols || y >= f->rows)
		return NULL;
	return &f->cells[(size_t)y * (size_t)f->cols + (size_t)x];
}

const struct cell *frame_cell_const(const struct frame *f, int x, int y)
{
	return frame_cell((struct frame *)f, x, y);
}

/* Overwriting half of a wide glyph blanks the other half, so no cell is
 * ever left pointing at a glyph that is gone. */
static void unlink_wide(struct frame *f, int x, int y)
{
	struct cell *c = frame_cell(f, x, y);
	if (c->cp == 0) {
		struct cell *head = frame_cell(f, x - 1, y);
		if (head)
			head->cp = ' ', head->comb = 0;
	}
	struct cell *next = frame_cell(f, x + 1, y);
	if (next && next->cp == 0)
		next->cp = ' ';
}

static void set_glyph(struct frame *f, int x, int y, uint32_t cp, uint32_t comb, int width,
                      enum frame_style style)
{
	struct cell *c = frame_cell(f, x, y);
	if (!c)
		return;
	unlink_wide(f, x, y);
	if (width == 2) {
		struct cell *right = frame_cell(f, x + 1, y);
		if (!right)
			return;
		unlink_wide(f, x + 1, y);
		*right = (struct cell){.cp = 0, .comb = 0, .style = (uint8_t)style};
	}
	*c = (struct cell){.cp = cp, .comb = comb, .style = (uint8_t)style};
}

void frame_put(struct frame *f, int x, int y, uint32_t cp, enum frame_style style)
{
	set_glyph(f, x, y, cp, 0, 1, style);
}

void frame_fill(struct frame *f, int x, int y, int w, uint32_t cp, enum frame_style style)
{
	for (int i = 0; i < w; i++)
		frame_put(f, x + i, y, cp, style);
}

void frame_style(struct frame *f, int x, int y, int w, enum frame_style style)
{
	for (int i = 0; i < w; i++) {
		struct cell *c = frame_cell(f, x + i, y);
		if (c)
			c->style = (uint8_t)style;
	}
}

int frame_text_width(const char *text, bool ascii)
{
	const unsigned char *s = (const unsigned char *)text, *end = s + strlen(text);
	struct unit u;
	int w = 0;
	while (next_unit(&s, end, ascii, &u))
		w += u.width;
	return w;
}

static void draw_unit(struct frame *f, int x, int y, const struct unit *u, enum frame_style style)
{
	if (u->n == 1) {
		set_glyph(f, x, y, u->cp[0], u->comb, u->width, style);
		return;
	}
	for (int i = 0; i < u->n; i++)
		set_glyph(f, x + i, y, u->cp[i], 0, 1, style);
}

int frame_text(struct frame *f, int x, int y, int maxw, const char *text, enum frame_style style)
{
	if (maxw <= 0 || y < 0 || y >= f->rows)
		return 0;
	const bool ascii = f->ascii;
	const int total = frame_text_width(text, ascii);
	/* Text that does not fit keeps one column for the ellipsis. */
	const int limit = total <= maxw ? maxw : maxw - 1;
	const unsigned char *s = (const unsigned char *)text, *end = s + strlen(text);
	struct unit u;
	int used = 0;
	while (next_unit(&s, end, ascii, &u)) {
		if (used + u.width > limit)
			break;
		draw_unit(f, x + used, y, &u, style);
		used += u.width;
	}
	if (total > maxw) {
		frame_put(f, x + used, y, frame_glyph(f, GLYPH_ELLIPSIS), style);
		used++;
	}
	return used;
}

int frame_printf(struct frame *f, int x, int y, int maxw, enum frame_style style, const char *fmt,
                 ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return frame_text(f, x, y, maxw, buf, style);
}

uint32_t frame_glyph(const struct frame *f, enum frame_glyph g)
{
	static const uint32_t unicode[GLYPH_COUNT] = {
	        [GLYPH_HLINE] = 0x2500,       [GLYPH_VLINE] = 0x2502,
	        [GLYPH_ELLIPSIS] = 0x2026,    [GLYPH_BULLET] = 0x00B7,
	        [GLYPH_ARROW_RIGHT] = 0x2192, [GLYPH_ARROW_LEFT] = 0x2190,
	        [GLYPH_NEW] = 0x25B8,         [GLYPH_GONE] = 0x2717,
	        [GLYPH_PROMOTED] = 0x2191,    [GLYPH_SELECTED] = 0x00BB,
	        [GLYPH_CORNER_TL] = 0x250C,   [GLYPH_CORNER_TR] = 0x2510,
	        [GLYPH_CORNER_BL] = 0x2514,   [GLYPH_CORNER_BR] = 0x2518,
	};
	static const uint32_t ascii[GLYPH_COUNT] = {
	        [GLYPH_HLINE] = '-',     [GLYPH_VLINE] = '|',       [GLYPH_ELLIPSIS] = '~',
	        [GLYPH_BULLET] = '.',    [GLYPH_ARROW_RIGHT] = '>', [GLYPH_ARROW_LEFT] = '<',
	        [GLYPH_NEW] = '>',       [GLYPH_GONE] = 'x',        [GLYPH_PROMOTED] = '^',
	        [GLYPH_SELECTED] = '*',  [GLYPH_CORNER_TL] = '+',   [GLYPH_CORNER_TR] = '+',
	        [GLYPH_CORNER_BL] = '+', [GLYPH_CORNER_BR] = '+',
	};
	return f->ascii ? ascii[g] : unicode[g];
}

void frame_bar(struct frame *f, int x, int y, int w, double value, double max,
               enum frame_style style)
{
	if (w <= 0 || !(max > 0.0) || !(value > 0.0))
		return;
	double frac = value / max;
	if (frac > 1.0)
		frac = 1.0;
	long eighths = (long)(frac * w * 8 + 0.5);
	if (eighths < 1)
		eighths = 1; /* a positive score never looks like nothing */
	const int full = (int)(eighths / 8), part = (int)(eighths % 8);
	if (f->ascii) {
		frame_fill(f, x, y, full, '#', style);
		if (part >= 4)
			frame_put(f, x + full, y, '+', style);
		else if (full == 0)
			frame_put(f, x, y, '.', style);
		return;
	}
	frame_fill(f, x, y, full, 0x2588, style);
	/* U+258F is one eighth, U+2589 seven eighths. */
	if (part > 0)
		frame_put(f, x + full, y, 0x2590u - (uint32_t)part, style);
}

char *frame_to_text(const struct frame *f)
{
	/* A cell is at most two code points of four bytes. */
	const size_t cap = (size_t)f->rows * ((size_t)f->cols * 8 + 1) + 1;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	size_t len = 0;
	for (int y = 0; y < f->rows; y++) {
		size_t line_end = len; /* end of the last non-space glyph */
		for (int x = 0; x < f->cols; x++) {
			const struct cell *c = frame_cell_const(f, x, y);
			if (c->cp == 0)
				continue;
			len += (size_t)utf8_encode(c->cp, out + len);
			if (c->comb)
				len += (size_t)utf8_encode(c->comb, out + len);
			if (c->cp != ' ')
				line_end = len;
		}
		len = line_end;
		out[len++] = '\n';
	}
	out[len] = '\0';
	return out;
}
