/*
 * plot_text: the plot stage's text (private to it): scene text made safe
 * to draw, as a message shows it, and text put at a point with cairo.
 */
#include "plot_text.h"

#include <string.h>

#include "h2o/text.h"

static void buf_put(void *ctx, const char *p, size_t n)
{
	struct buf *b = ctx;
	if (n > sizeof b->s - 1 - b->n)
		n = sizeof b->s - 1 - b->n;
	memcpy(b->s + b->n, p, n);
	b->n += n;
	b->s[b->n] = '\0';
}

/* Scene text as a message shows it: valid UTF-8, controls and deceptive
 * code points escaped, at most about 120 bytes. */
void plot_safe_text(const char *s, struct buf *out)
{
	out->n = 0;
	out->s[0] = '\0';
	const size_t len = strlen(s);
	if (text_escape(s, len, 120, TEXT_ESCAPE_MESSAGE, buf_put, out) < len)
		buf_put(out, "...", 3);
}

/* Text at X, Y: ALIGN 0 left, 0.5 centred, 1 right; VALIGN likewise
 * (0 top, 0.5 middle, 1 baseline). */
void plot_put_text(cairo_t *cr, double x, double y, double align, double valign, double size,
                   const char *s)
{
	cairo_text_extents_t e;
	cairo_set_font_size(cr, size);
	cairo_text_extents(cr, s, &e);
	cairo_move_to(cr, x - align * e.x_advance, y - (1 - valign) * e.y_bearing);
	cairo_show_text(cr, s);
}
