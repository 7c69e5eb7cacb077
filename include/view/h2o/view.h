/*
 * view: the whole screen of an app, drawn into a frame.
 *
 * view_draw is a pure function of the app state and the frame size: it
 * reads the step the app has sought (app.h, shown) and lets each panel
 * draw its rectangle; it changes nothing but the frame. Both backends call it, so the headless text and the terminal
 * show the same characters.
 */
#ifndef H2O_VIEW_H
#define H2O_VIEW_H

struct app;
struct frame;

/* The smallest frame the layout needs; smaller frames show a message. */
#define VIEW_MIN_COLS 80
#define VIEW_MIN_ROWS 24

void view_draw(const struct app *app, struct frame *f);

#endif
