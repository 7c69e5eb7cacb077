/*
 * view_heat: the attention heat rows, H2O on the left, the compared policy
 * (the full cache unless the user picked another) on the right.
 *
 * A row per step (the latest steps, the current one last), a column per
 * position. Where columns are wide enough the weight is printed; otherwise a
 * glyph of eight heights shows it. A position H2O did not attend at that
 * step (evicted, or not yet arrived) is a gap. When the positions do not fit,
 * the columns follow the newest position.
 */
#include <math.h>
#include <stdio.h>

#include "view_panels.h"

#define LABEL_TEXT_W 7
#define NUMBER_W     5 /* "0.28" and a space */
#define MAX_CELL_W   6

struct heat_cols {
	int x, w;
	int label_w; /* step number, token text */
	int step_w;
	int cw;    /* columns per position */
	int first; /* first position shown */
	int count; /* positions shown */
};

static int digits(int v)
{
	int d = 1;
	for (; v >= 10; v /= 10)
		d++;
	return d;
}

static struct heat_cols heat_layout(const struct view *v, int x, int w)
{
	struct heat_cols h = {.x = x, .w = w};
	h.step_w = digits(v->n);
	h.label_w = 1 + h.step_w + 1 + LABEL_TEXT_W + 1;
	const int avail = w - h.label_w - 1;
	h.cw = avail / (v->n > 0 ? v->n : 1);
	h.cw = h.cw > MAX_CELL_W ? MAX_CELL_W : h.cw < 1 ? 1 : h.cw;
	h.count = avail / h.cw;
	if (h.count >= v->n) {
		h.count = v->n;
		h.first = 0;
	} else if (v->app->heat_anchor >= 0) {
		/* Keep the anchor (scrolled to, or the selected token) in the
		 * middle, the window full. */
		h.first = v->app->heat_anchor - h.count / 2;
		h.first = h.first > v->n - h.count ? v->n - h.count : h.first;
		h.first = h.first < 0 ? 0 : h.first;
	} else {
		/* Follow the newest position, keeping the window full. */
		h.first = v->t - h.count;
		h.first = h.first < 0 ? 0 : h.first;
	}
	return h;
}

/* Glyph cells are scaled to the row's largest visible weight (ROW_MAX):
 * on a long scene every weight is small, and the shape is what matters.
 * Printed numbers are the weights themselves. */
static void draw_cell(struct frame *f, const struct heat_cols *h, int x, int y, double w,
                      double row_max)
{
	if (w < 0.0)
		return;
	const double scaled = h->cw >= NUMBER_W || !(row_max > 0.0) ? w : w / row_max;
	int level = (int)ceil(scaled * 8.0);
	level = level < 1 ? 1 : level > 8 ? 8 : level;
	const enum frame_style style = (enum frame_style)(STYLE_HEAT0 + level - 1);
	if (h->cw >= NUMBER_W) {
		frame_printf(f, x, y, h->cw - 1, style, "%*.2f", h->cw - 1, w);
		return;
	}
	static const char ascii_ramp[] = ".:-=+*#@";
	const uint32_t glyph =
	        f->ascii ? (uint32_t)ascii_ramp[level - 1] : 0x2580u + (uint32_t)level;
	frame_fill(f, x, y, h->cw > 2 ? h->cw - 1 : h->cw, glyph, style);
}

static void draw_header(const struct view *v, struct frame *f, const struct heat_cols *h, int y,
                        const char *label)
{
	frame_text(f, h->x + 1, y, h->label_w - 1, label, STYLE_LABEL);
	const int x0 = h->x + h->label_w;
	for (int i = 0; i < h->count; i++) {
		const int pos = h->first + i, x = x0 + i * h->cw;
		if (h->cw >= NUMBER_W) {
			frame_text(f, x, y, h->cw - 1, v->sc->text[pos], STYLE_DIM);
		} else if (pos % 10 == 0 && x + digits(pos) <= h->x + h->w) {
			/* Position numbers every ten columns. */
			frame_printf(f, x, y, digits(pos), STYLE_DIM, "%d", pos);
		}
	}
}

static void draw_half(const struct view *v, struct frame *f, const struct heat_cols *h, int y0,
                      int rows, bool full)
{
	const enum policy_id policy = full ? v->app->compare : POLICY_H2O;
	draw_header(v, f, h, y0, policies[policy]->name);
	const int first_step = v->t - (rows - 1) + 1 > 1 ? v->t - (rows - 1) + 1 : 1;
	for (int s = first_step, y = y0 + 1; s <= v->t; s++, y++) {
		const enum frame_style style = s == v->t ? STYLE_NEW : STYLE_DIM;
		frame_printf(f, h->x + 1, y, h->step_w, style, "%*d", h->step_w, s);
		frame_text(f, h->x + 2 + h->step_w, y, LABEL_TEXT_W, v->sc->text[s - 1], style);
		double row_max = 0.0;
		for (int i = 0; i < h->count; i++) {
			const double w = timeline_weight(v->tl, policy, s, h->first + i);
			row_max = w > row_max ? w : row_max;
		}
		for (int i = 0; i < h->count; i++) {
			draw_cell(f, h, h->x + h->label_w + i * h->cw, y,
			          timeline_weight(v->tl, policy, s, h->first + i), row_max);
		}
	}
}

void panel_heat_draw(const struct view *v, struct frame *f, struct rect r)
{
	if (r.h < 2)
		return;
	for (int y = r.y; y < r.y + r.h; y++)
		frame_put(f, v->split, y, frame_glyph(f, GLYPH_VLINE), STYLE_BORDER);
	if (v->t == 0) {
		frame_text(f, r.x + 1, r.y, v->split - 2, "(no attention yet)", STYLE_DIM);
		return;
	}
	const struct heat_cols left = heat_layout(v, r.x, v->split - r.x);
	const struct heat_cols right = heat_layout(v, v->split + 1, r.x + r.w - v->split - 1);
	draw_half(v, f, &left, r.y, r.h, false);
	/* A selected token's story takes the place of the compared heat. */
	if (v->app->selected >= 0)
		panel_inspect_draw(v, f, (struct rect){right.x, r.y, right.w, r.h});
	else
		draw_half(v, f, &right, r.y, r.h, true);
}
