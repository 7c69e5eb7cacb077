/*
 * tui_draw: the ncurses backend's drawing (private to src/backend/):
 * styles as colours and attributes, and a frame put on the screen cell by
 * cell (tui_draw.c), for the loops of tui.c (the app) and tui_load.c (the
 * loading frame), with what those two share. It draws nothing the frame
 * does not hold and sends no control character whatever the frame holds.
 * With tui.c, tui_load.c and tui_signals.c it is the only code that includes
 * <curses.h>.
 */
#ifndef H2O_TUI_DRAW_H
#define H2O_TUI_DRAW_H

#include <stdbool.h>
#include <stdint.h>
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

struct view_loading;
/* Draw the loading frame of L at the current terminal size (tui_load.c).
 * Returns -1 when out of memory. */
int tui_draw_loading(struct tui *t, const struct view_loading *l);

/* ---- shared by tui.c and tui_load.c ---- */

/* The screen of the process, between tui_start and tui_end. */
extern struct tui tui_screen;

enum tui_wait {
	TUI_KEY,     /* *key holds a key for app_key */
	TUI_MOUSE,   /* *mouse holds a mouse event for app_mouse */
	TUI_TIMEOUT, /* no key in time, or an ignored one, or a signal */
	TUI_GONE,    /* the terminal went away */
};

struct key_mouse;
/* Wait up to TIMEOUT_MS for a key (or a mouse event) of T's terminal. */
enum tui_wait tui_wait_key(struct tui *t, int timeout_ms, uint32_t *key, struct key_mouse *mouse);

/* After a stop and fg: the next refresh takes the terminal back and
 * repaints every cell. */
void tui_resume(void);

#endif
