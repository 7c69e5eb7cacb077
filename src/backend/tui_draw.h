/*
 * tui_draw: the ncurses backend's drawing (private to src/backend/):
 * styles as colours and attributes, and a frame put on the screen cell by
 * cell (tui_draw.c), for the loop of tui.c. It draws nothing the frame
 * does not hold and sends no control character whatever the frame holds.
 * With tui.c and tui_signals.c it is the only code that includes
 * <curses.h>.
 */
#ifndef H2O_TUI_DRAW_H
#define H2O_TUI_DRAW_H

#include <stdbool.h>
#include <stdio.h>

/* The wide-character curses API (cchar_t, wget_wch, mvadd_wch) is only
 * declared with NCURSES_WIDECHAR; _XOPEN_SOURCE >= 500 implies it, but say
 * so in case the build flags change. */
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>

#include "h2o/app.h"
#include "h2o/frame.h"

/* The state of one run: the screen, how cells are drawn, the frame. */
struct tui {
	SCREEN *screen;
	FILE *in;         /* where keys come from: stdin, or /dev/tty */
	int quick_errors; /* reads in a row that failed without waiting */
	bool utf8;        /* the locale encodes all of Unicode */
	bool ascii;       /* frames use ASCII glyphs */
	bool mouse;       /* the terminal reports the mouse (not --no-mouse) */
	short pair[STYLE_COUNT];
	attr_t attr[STYLE_COUNT];
	struct frame *frame;
};

/* The styles' colour pairs and attributes in T, for this terminal, its
 * colours and NO_COLOR. */
void tui_colors_init(struct tui *t);

/* Draw the app at the current terminal size. Returns -1 when out of
 * memory. */
int tui_draw(struct tui *t, struct app *app);

#endif
