/*
 * view: the whole screen of an app, drawn into a frame.
 *
 * view_draw is a pure function of the app state and the frame size: it
 * reads the step the app has sought (app.h, shown) and lets each panel
 * draw its rectangle; it changes nothing but the frame. view_pick answers
 * what is drawn where, for the mouse. Both backends call it, so the headless text and the terminal
 * show the same characters.
 */
#ifndef H2O_VIEW_H
#define H2O_VIEW_H

#include "h2o/app.h"

struct frame;

/* The smallest frame the layout needs; smaller frames show a message. */
#define VIEW_MIN_COLS 80
#define VIEW_MIN_ROWS 24

void view_draw(const struct app *app, struct frame *f);

/* What view_draw shows at ROW, COL of a frame the size of F (0-based, as
 * the terminal's mouse reports them, less one): a token's row of a cache
 * panel, a heat cell, the help overlay, or nothing (app.h, struct
 * app_spot). The same layout as drawing, so the cell it names is the cell
 * that was drawn; it reads F's size and glyph set only. */
struct app_spot view_pick(const struct app *app, const struct frame *f, int row, int col);

#endif
