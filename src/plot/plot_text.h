/*
 * plot_text.h: the plot stage's text helpers (plot_text.c), private to it.
 */
#ifndef H2O_PLOT_TEXT_H
#define H2O_PLOT_TEXT_H

#include <cairo.h>
#include <stddef.h>

/* Room for a line of scene text made safe to draw. */
struct buf {
	char s[512];
	size_t n;
};

/* Scene text as a message shows it: valid UTF-8, controls and deceptive
 * code points escaped, at most about 120 bytes. */
void plot_safe_text(const char *s, struct buf *out);

/* Text at X, Y: ALIGN 0 left, 0.5 centred, 1 right; VALIGN likewise
 * (0 top, 0.5 middle, 1 baseline). */
void plot_put_text(cairo_t *cr, double x, double y, double align, double valign, double size,
                   const char *s);

#endif
