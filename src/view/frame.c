/*
 * frame: the cell grid, and the one function that lets scene text in.
 *
 * Untrusted text is cut into units by the text module (h2o/text.h): strict
 * UTF-8, each bad byte U+FFFD, controls escaped, invisible code points
 * dropped, widths from wcwidth under a UTF-8 LC_CTYPE (main sees to it), so
 * the text backend and the ncurses backend agree on every column. The frame
 * only places the units in cells and adds the ellipsis.
 */
#include "h2o/frame.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/text.h"

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
	return text_width(text, strlen(text), ascii);
}

static void draw_glyph(struct frame *f, int x, int y, const struct text_glyph *g,
                       enum frame_style style)
{
	if (g->n == 1) {
		set_glyph(f, x, y, g->cp[0], g->comb, g->width, style);
		return;
	}
	for (int i = 0; i < g->n; i++)
		set_glyph(f, x + i, y, g->cp[i], 0, 1, style);
}

int frame_text(struct frame *f, int x, int y, int maxw, const char *text, enum frame_style style)
{
	if (maxw <= 0 || y < 0 || y >= f->rows)
		return 0;
	const bool ascii = f->ascii;
	const size_t len = strlen(text);
	int used;
	size_t fits = text_clip(text, len, maxw, ascii, &used);
	/* Text that does not fit keeps one column for the ellipsis. */
	const bool cut = fits < len;
	if (cut)
		fits = text_clip(text, len, maxw - 1, ascii, &used);
	const char *s = text;
	struct text_glyph g;
	int at = x;
	while (text_next_glyph(&s, text + fits, ascii, &g)) {
		draw_glyph(f, at, y, &g, style);
		at += g.width;
	}
	if (cut) {
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
	        [GLYPH_MORE_LEFT] = 0x25C2,   [GLYPH_MORE_RIGHT] = 0x25B8,
	        [GLYPH_HEAT0] = 0x2591,       [GLYPH_HEAT1] = 0x2591,
	        [GLYPH_HEAT2] = 0x2591,       [GLYPH_HEAT3] = 0x2592,
	        [GLYPH_HEAT4] = 0x2592,       [GLYPH_HEAT5] = 0x2593,
	        [GLYPH_HEAT6] = 0x2593,       [GLYPH_HEAT7] = 0x2588,
	        [GLYPH_MARKER] = 0x25BC,      [GLYPH_AXIS_Y] = 0x2502,
	        [GLYPH_AXIS_TICK] = 0x2524,
	};
	/* The ASCII heat ramp leaves out '#', which draws the score bars. */
	static const uint32_t ascii[GLYPH_COUNT] = {
	        [GLYPH_HLINE] = '-',      [GLYPH_VLINE] = '|',       [GLYPH_ELLIPSIS] = '~',
	        [GLYPH_BULLET] = '.',     [GLYPH_ARROW_RIGHT] = '>', [GLYPH_ARROW_LEFT] = '<',
	        [GLYPH_NEW] = '>',        [GLYPH_GONE] = 'x',        [GLYPH_PROMOTED] = '^',
	        [GLYPH_SELECTED] = '*',   [GLYPH_CORNER_TL] = '+',   [GLYPH_CORNER_TR] = '+',
	        [GLYPH_CORNER_BL] = '+',  [GLYPH_CORNER_BR] = '+',   [GLYPH_MORE_LEFT] = '<',
	        [GLYPH_MORE_RIGHT] = '>', [GLYPH_HEAT0] = '.',       [GLYPH_HEAT1] = ':',
	        [GLYPH_HEAT2] = '-',      [GLYPH_HEAT3] = '=',       [GLYPH_HEAT4] = '+',
	        [GLYPH_HEAT5] = '*',      [GLYPH_HEAT6] = '%',       [GLYPH_HEAT7] = '@',
	        [GLYPH_MARKER] = 'v',     [GLYPH_AXIS_Y] = '|',      [GLYPH_AXIS_TICK] = '+',
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
			len += text_encode(c->cp, out + len);
			if (c->comb)
				len += text_encode(c->comb, out + len);
			if (c->cp != ' ')
				line_end = len;
		}
		len = line_end;
		out[len++] = '\n';
	}
	out[len] = '\0';
	return out;
}
