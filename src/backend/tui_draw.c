/*
 * tui_draw: putting a frame on the terminal with ncurses (tui_draw.h):
 * what each style looks like with 8, 256 or no colours, and every cell of
 * the frame written as a glyph the terminal can show at the width the
 * frame gave it, nothing else.
 */
#include "tui_draw.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "h2o/text.h"
#include "h2o/view.h"
#include "h2o/view_loading.h"

/* What a style looks like on an 8-colour and on a 256-colour terminal (a
 * foreground colour, -1 for the terminal's own, and attributes) and without
 * colour (monochrome, NO_COLOR, TERM=dumb): attributes only. */
struct tui_look {
	short fg8;
	attr_t attr8;
	short fg256;
	attr_t attr256;
	attr_t mono;
};

/* Heavy, recent and evicted each have a colour of their own; without
 * colour the sections and the text already tell them apart, and the
 * attributes only add emphasis. The heat styles are a sequential ramp,
 * dark to light: on 256 colours viridis (purple, blue, teal, green,
 * yellow) at its nearest xterm colours, picked so that lightness rises at
 * every level, with none of the region colours' orange, sky blue or red;
 * on 8 colours blue, magenta and white, dim to bold, the colours the
 * regions leave free. The glyphs carry the level too, so monochrome only
 * dims the faintest and brightens the strongest. */
static const struct tui_look tui_looks[STYLE_COUNT] = {
        [STYLE_NORMAL] = {-1, A_NORMAL, -1, A_NORMAL, A_NORMAL},
        [STYLE_TITLE] = {COLOR_CYAN, A_BOLD, 45, A_BOLD, A_BOLD},
        [STYLE_LABEL] = {-1, A_BOLD, -1, A_BOLD, A_BOLD},
        [STYLE_DIM] = {-1, A_DIM, 245, A_NORMAL, A_DIM},
        [STYLE_BORDER] = {COLOR_BLUE, A_NORMAL, 60, A_NORMAL, A_NORMAL},
        [STYLE_HEAVY] = {COLOR_YELLOW, A_BOLD, 214, A_BOLD, A_BOLD},
        [STYLE_RECENT] = {COLOR_CYAN, A_NORMAL, 38, A_NORMAL, A_NORMAL},
        [STYLE_EVICTED] = {COLOR_RED, A_NORMAL, 167, A_NORMAL, A_DIM},
        [STYLE_NEW] = {COLOR_GREEN, A_BOLD, 41, A_BOLD, A_BOLD},
        [STYLE_GONE] = {COLOR_RED, A_BOLD | A_UNDERLINE, 196, A_BOLD | A_UNDERLINE, A_UNDERLINE},
        [STYLE_KEY] = {COLOR_GREEN, A_BOLD, 114, A_BOLD, A_BOLD},
        [STYLE_WARN] = {COLOR_YELLOW, A_BOLD, 220, A_BOLD, A_BOLD},
        [STYLE_SELECT] = {-1, A_REVERSE, -1, A_REVERSE, A_REVERSE},
        [STYLE_HEAT0] = {COLOR_BLUE, A_DIM, 53, A_NORMAL, A_DIM},
        [STYLE_HEAT1] = {COLOR_BLUE, A_NORMAL, 91, A_NORMAL, A_DIM},
        [STYLE_HEAT2] = {COLOR_BLUE, A_BOLD, 61, A_NORMAL, A_NORMAL},
        [STYLE_HEAT3] = {COLOR_MAGENTA, A_NORMAL, 30, A_NORMAL, A_NORMAL},
        [STYLE_HEAT4] = {COLOR_MAGENTA, A_BOLD, 36, A_NORMAL, A_NORMAL},
        [STYLE_HEAT5] = {COLOR_WHITE, A_DIM, 77, A_NORMAL, A_NORMAL},
        [STYLE_HEAT6] = {COLOR_WHITE, A_NORMAL, 184, A_NORMAL, A_NORMAL},
        [STYLE_HEAT7] = {COLOR_WHITE, A_BOLD, 226, A_BOLD, A_BOLD},
};

/* NO_COLOR (https://no-color.org): any non-empty value turns colour off. */
static bool tui_colors_wanted(void)
{
	const char *no_color = getenv("NO_COLOR");
	const char *term = getenv("TERM");

	if (no_color && *no_color)
		return false;
	if (term && strcmp(term, "dumb") == 0)
		return false;
	return has_colors();
}

void tui_colors_init(struct tui *t)
{
	short bg = -1;
	bool wide;

	for (int s = 0; s < STYLE_COUNT; s++) {
		t->pair[s] = 0;
		t->attr[s] = tui_looks[s].mono;
	}
	if (!tui_colors_wanted() || start_color() == ERR || COLOR_PAIRS <= STYLE_COUNT)
		return;
	/* Keep the terminal's own background (and foreground for plain
	 * text); a terminal that cannot gets black, the usual default. */
	if (use_default_colors() == ERR)
		bg = COLOR_BLACK;
	wide = COLORS >= 256;
	for (int s = 0; s < STYLE_COUNT; s++) {
		short fg = wide ? tui_looks[s].fg256 : tui_looks[s].fg8;

		t->attr[s] = wide ? tui_looks[s].attr256 : tui_looks[s].attr8;
		if (fg < 0 && bg < 0)
			continue;
		if (fg < 0)
			fg = COLOR_WHITE;
		if (init_pair((short)(s + 1), fg, bg) == OK)
			t->pair[s] = (short)(s + 1);
	}
}

/* Whether the terminal can show code point CP in one wcwidth cell run:
 * the locale must encode it (a non-UTF-8 locale may not) and libc must
 * give it a width, or curses would misplace everything after it. Returns
 * the width (1 or 2), or 0 when it cannot be shown. */
static int tui_glyph_width(const struct tui *t, uint32_t cp)
{
	char buf[MB_LEN_MAX];
	mbstate_t st;
	int w;

	/* The frame escapes control characters already; this is the last line
	 * of defence, so no C0, DEL or C1 byte ever reaches the terminal. */
	if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp > 0x10ffff)
		return 0;
	if (cp < 0x7f)
		return 1;
	if (!t->utf8) {
		memset(&st, 0, sizeof st);
		if (wcrtomb(buf, (wchar_t)cp, &st) == (size_t)-1)
			return 0;
	}
	w = wcwidth((wchar_t)cp);
	return w == 1 || w == 2 ? w : 0;
}

/* A combining mark is drawn only when the terminal can encode it and libc
 * agrees that it takes no column; otherwise it is dropped, never shown as
 * a column of its own. */
static bool tui_mark_ok(const struct tui *t, uint32_t comb)
{
	char buf[MB_LEN_MAX];
	mbstate_t st;

	if (comb < 0xa0 || comb > 0x10ffff || wcwidth((wchar_t)comb) != 0)
		return false;
	if (!t->utf8) {
		memset(&st, 0, sizeof st);
		if (wcrtomb(buf, (wchar_t)comb, &st) == (size_t)-1)
			return false;
	}
	return true;
}

/* Put one glyph at y, x. Writing the bottom-right cell makes curses try to
 * scroll and return ERR although the cell is written: that ERR is
 * expected, and no other write can fail with the frame sized to the
 * screen, so the result is ignored. */
static void tui_put(const struct tui *t, int y, int x, uint32_t cp, uint32_t comb, uint8_t style)
{
	wchar_t wstr[3];
	cchar_t cc;
	int n = 0;

	if (style >= STYLE_COUNT)
		style = STYLE_NORMAL;
	wstr[n++] = (wchar_t)cp;
	if (comb)
		wstr[n++] = (wchar_t)comb;
	wstr[n] = L'\0';
	if (setcchar(&cc, wstr, t->attr[style], t->pair[style], NULL) == ERR)
		return;
	(void)mvadd_wch(y, x, &cc);
}

/*
 * Copy the frame into stdscr cell by cell. A wide glyph is one write that
 * covers its continuation cell. Where the frame and the terminal disagree
 * on a glyph (not encodable in the locale, or libc gives it another width)
 * a '?' is drawn in its place and the row is padded so every later cell
 * stays in its column.
 */
static void tui_flush(const struct tui *t, const struct frame *f)
{
	for (int y = 0; y < f->rows; y++) {
		int x = 0;

		while (x < f->cols) {
			const struct cell *c = frame_cell_const(f, x, y);
			bool wide = x + 1 < f->cols && frame_cell_const(f, x + 1, y)->cp == 0;
			uint32_t cp = c->cp;
			uint32_t comb = c->comb;
			int fw = wide ? 2 : 1;
			int w;

			if (cp == 0) {
				/* A continuation cell with no wide glyph
				 * before it: show it blank. */
				tui_put(t, y, x, ' ', 0, c->style);
				x++;
				continue;
			}
			w = tui_glyph_width(t, cp);
			if (w != fw && !(w == 1 && fw == 2)) {
				cp = '?';
				w = 1;
			}
			if (comb && !tui_mark_ok(t, comb))
				comb = 0;
			tui_put(t, y, x, cp, comb, c->style);
			if (fw == 2 && w == 1)
				tui_put(t, y, x + 1, ' ', 0, c->style);
			x += fw;
		}
	}
}

/* T's frame at the terminal's size, cleared: NULL when out of memory. */
static struct frame *tui_sized_frame(struct tui *t)
{
	int rows, cols;

	getmaxyx(stdscr, rows, cols);
	if (rows < 1)
		rows = 1;
	if (cols < 1)
		cols = 1;
	if (!t->frame || t->frame->rows != rows || t->frame->cols != cols) {
		frame_free(t->frame);
		t->frame = frame_new(cols, rows, t->ascii);
		if (!t->frame)
			return NULL;
	}
	frame_clear(t->frame);
	return t->frame;
}

/* The frame out: no erase, as every cell is rewritten, and curses sends
 * only what changed since the last refresh. */
static void tui_show(struct tui *t)
{
	tui_flush(t, t->frame);
	wnoutrefresh(stdscr);
	doupdate();
}

int tui_draw(struct tui *t, struct app *app)
{
	struct frame *f = tui_sized_frame(t);

	if (!f)
		return -1;
	app_set_screen(app, f->cols, f->rows, t->ascii);
	view_draw(app, f);
	tui_show(t);
	return 0;
}

int tui_draw_loading(struct tui *t, const struct view_loading *l)
{
	struct frame *f = tui_sized_frame(t);

	if (!f)
		return -1;
	view_loading_draw(l, f);
	tui_show(t);
	return 0;
}
