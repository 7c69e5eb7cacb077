/*
 * view_heat: the attention heat rows, H2O on the left, the compared policy
 * (the full cache unless the user picked another) on the right, and the
 * heat scale every panel shares.
 *
 * A row per step (the latest steps, the current one last), a column per
 * position. The scale is absolute and logarithmic: a weight has one level
 * (about half a decade: below 0.0003, to 0.001, 0.003, 0.01, 0.03, 0.1, 0.3
 * and above), so one colour and one glyph, whatever the size of the terminal and
 * whatever else is on screen; the legend on the rule says so. A full block
 * (@ in ASCII) is 0.3 and more: attention that dominates its row. Where columns
 * are wide enough the weight is printed after its glyph. A position a cache
 * did not attend at that step (evicted, or not yet arrived) is a gap.
 *
 * The two halves share one layout: the same column width, the same first
 * position, so a column means the same position on both sides. When the
 * positions do not fit, the columns follow the newest position (or the
 * anchor the user scrolled to), and each row says how much of its attention
 * falls outside them: "◂0.97" on the left, "0.12▸" on the right. A
 * position outside them that this step gives 0.1 or more (an attention
 * sink, a needle asked for again) gets a pinned column of its own at the
 * left, headed by its position, so the strong weights are always in view.
 */
#include <math.h>
#include <stdio.h>

#include "view_panels.h"

#define LABEL_TEXT_W  7
#define NARROW_TEXT_W 5 /* ... in a half narrower than WIDE_HALF that scrolls */
#define WIDE_HALF     50
#define NUMBER_W      6 /* a glyph, "0.28" and a space */
#define MAX_CELL_W    6
#define MORE_W        6 /* "◂0.97" and a space */
#define MAX_PINS      3
#define PIN_WEIGHT    0.1 /* a weight that earns a column of its own */

/* The level boundaries: 1 and 3 in every decade from 0.0003 to 0.3 (each
 * level about half a decade), exactly the numbers the legend prints. */
static const double heat_edges[VIEW_HEAT_LEVELS - 1] = {
        3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1,
};

int view_heat_level(double w)
{
	int level = 0;
	while (level < VIEW_HEAT_LEVELS - 1 && w >= heat_edges[level])
		level++;
	return level;
}

enum frame_style view_heat_style(double w)
{
	return (enum frame_style)(STYLE_HEAT0 + view_heat_level(w));
}

uint32_t view_heat_glyph(const struct frame *f, double w)
{
	return frame_glyph(f, (enum frame_glyph)(GLYPH_HEAT0 + view_heat_level(w)));
}

/* The legend: the levels each glyph covers, each in its colour, then the
 * glyph's upper bound. Returns the columns it takes (drawn only when F is
 * not NULL; SHAPE says which glyphs). */
static int legend(struct frame *f, const struct frame *shape, int x, int y)
{
	static const struct {
		int from, to; /* levels */
		const char *bound, *ascii_bound;
	} groups[] = {
	        {0, 2, "<.003", "<.003"},
	        {3, 4, "<.03", "<.03"},
	        {5, 6, "<.3", "<.3"},
	        {7, 7, "\u2265.3", ">=.3"},
	};
	/* A weight inside each level, to draw it with. */
	static const double samples[VIEW_HEAT_LEVELS] = {1e-4, 5e-4, 2e-3, 5e-3,
	                                                 2e-2, 5e-2, 0.2,  0.5};
	int used = frame_text_width(" log scale ", false);
	if (f)
		frame_text(f, x, y, used, " log scale ", STYLE_LABEL);
	for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
		for (int level = groups[g].from; level <= groups[g].to; level++, used++)
			if (f)
				frame_put(f, x + used, y, view_heat_glyph(shape, samples[level]),
				          view_heat_style(samples[level]));
		const char *bound = shape->ascii ? groups[g].ascii_bound : groups[g].bound;
		const int bw = frame_text_width(bound, shape->ascii) + 2;
		if (f)
			frame_printf(f, x + used, y, bw, STYLE_DIM, " %s ", bound);
		used += bw;
	}
	return used;
}

void view_heat_rule(struct frame *f, struct rect r, const char *const *labels, int count)
{
	view_rule(f, r.x, r.y, r.w, NULL);
	const int lw = legend(NULL, f, 0, 0);
	const int lx = r.x + r.w - 2 - lw;
	if (lx > r.x + 2)
		legend(f, f, lx, r.y);
	/* The longest label that leaves the legend clear. */
	const int room = (lx > r.x + 2 ? lx - 1 : r.x + r.w - 2) - (r.x + 2);
	for (int i = 0; i < count; i++) {
		const int w = frame_text_width(labels[i], f->ascii) + 2;
		if (w <= room || i == count - 1) {
			frame_printf(f, r.x + 2, r.y, room, STYLE_LABEL, " %s ", labels[i]);
			return;
		}
	}
}

struct heat_cols {
	int label_w; /* step number, token text */
	int step_w, text_w;
	int cw;         /* columns per position */
	int first;      /* first position shown */
	int count;      /* positions shown */
	int more_left;  /* columns kept for the mass left of them: 0 or MORE_W */
	int more_right; /* ... and right of them */
	/* Positions outside the columns that draw a strong weight at this
	 * step, shown in columns of their own before the others. */
	int pins;
	int pin[MAX_PINS];
	int pin_w;  /* columns per pin: its number and a gap */
	int pins_w; /* all of them */
};

static int digits(int v)
{
	int d = 1;
	for (; v >= 10; v /= 10)
		d++;
	return d;
}

static bool pinned(const struct heat_cols *h, int pos)
{
	for (int i = 0; i < h->pins; i++)
		if (h->pin[i] == pos)
			return true;
	return false;
}

/* The positions outside [first, first + count) to which this step gives
 * PIN_WEIGHT or more in H2O or in the compared cache, the strongest first,
 * at most MAX_PINS, then put in position order. */
static void find_pins(const struct view *v, struct heat_cols *h)
{
	const enum policy_id shown[2] = {POLICY_H2O, v->app->compare};
	double best[MAX_PINS];
	h->pins = 0;
	for (int pos = 0; pos < v->t; pos++) {
		if (pos >= h->first && pos < h->first + h->count)
			continue;
		double w = -1.0;
		for (int i = 0; i < 2; i++) {
			const double x = timeline_weight(v->tl, shown[i], v->t, pos);
			w = x > w ? x : w;
		}
		if (w < PIN_WEIGHT)
			continue;
		/* A free slot, or (all taken) the weakest one's, if W beats it. */
		const bool full = h->pins == MAX_PINS;
		if (full && best[MAX_PINS - 1] >= w)
			continue;
		int at = full ? MAX_PINS - 1 : h->pins++;
		for (; at > 0 && best[at - 1] < w; at--) {
			best[at] = best[at - 1];
			h->pin[at] = h->pin[at - 1];
		}
		best[at] = w;
		h->pin[at] = pos;
	}
	/* Position order, so that the pins read left to right. */
	for (int i = 1; i < h->pins; i++)
		for (int j = i; j > 0 && h->pin[j - 1] > h->pin[j]; j--) {
			const int t = h->pin[j];
			h->pin[j] = h->pin[j - 1];
			h->pin[j - 1] = t;
		}
}

/* The window of COUNT positions: around the anchor, or up to the newest. */
static int window_first(const struct view *v, int count)
{
	int first;
	if (v->app->heat_anchor >= 0) {
		/* Keep the anchor (scrolled to, or the selected token) in the
		 * middle, the window full. */
		first = v->app->heat_anchor - count / 2;
		first = first > v->n - count ? v->n - count : first;
	} else {
		/* Follow the newest position, keeping the window full. */
		first = v->t - count;
	}
	return first < 0 ? 0 : first;
}

/* One layout for both halves, W columns wide each. */
static struct heat_cols heat_layout(const struct view *v, int w)
{
	struct heat_cols h = {0};
	h.step_w = digits(v->n);
	h.text_w = LABEL_TEXT_W;
	/* A narrow half that must scroll keeps two more columns for them. */
	if (w < WIDE_HALF && w - (1 + h.step_w + 1 + LABEL_TEXT_W + 1) - 1 < v->n)
		h.text_w = NARROW_TEXT_W;
	h.label_w = 1 + h.step_w + 1 + h.text_w + 1;
	int avail = w - h.label_w - 1;
	h.cw = avail / (v->n > 0 ? v->n : 1);
	h.cw = h.cw > MAX_CELL_W ? MAX_CELL_W : h.cw < 1 ? 1 : h.cw;
	if (avail / h.cw >= v->n) {
		h.count = v->n;
		h.first = 0;
		return h;
	}
	/* The positions do not fit: room for the mass left of the columns
	 * always (they follow the newest position), right of them only when
	 * scrolled back. */
	h.more_left = MORE_W;
	h.more_right = v->app->heat_anchor >= 0 ? MORE_W : 0;
	avail -= h.more_left + h.more_right;
	h.count = avail / h.cw > 1 ? avail / h.cw : 1;
	h.first = window_first(v, h.count);
	if (v->t == 0)
		return h;
	/* Strong weights outside the window get columns of their own (an
	 * attention sink, a needle found again), taken from the window's
	 * far end, as long as half the window stays. */
	find_pins(v, &h);
	int widest = 0;
	for (int i = 0; i < h.pins; i++)
		widest = digits(h.pin[i]) > widest ? digits(h.pin[i]) : widest;
	h.pin_w = widest + 1 > h.cw ? widest + 1 : h.cw;
	while (h.pins > 0 && avail - h.pins * h.pin_w < avail / 2)
		h.pins--;
	h.pins_w = h.pins * h.pin_w;
	h.count = (avail - h.pins_w) / h.cw > 1 ? (avail - h.pins_w) / h.cw : 1;
	h.first = window_first(v, h.count);
	return h;
}

/* A cell of W columns (the last one a gap when W > 2) for weight WEIGHT. */
static void draw_cell(struct frame *f, int x, int y, int w, double weight)
{
	if (weight < 0.0)
		return;
	const enum frame_style style = view_heat_style(weight);
	const uint32_t glyph = view_heat_glyph(f, weight);
	if (w >= NUMBER_W) {
		frame_put(f, x, y, glyph, style);
		frame_printf(f, x + 1, y, w - 2, style, "%*.2f", w - 2, weight);
		return;
	}
	frame_fill(f, x, y, w > 2 ? w - 1 : w, glyph, style);
}

/* The attention policy P gave, at step S, to the positions [from, to) it
 * held and does not show in a pinned column; *HELD says whether there were
 * any. */
static double mass(const struct view *v, const struct heat_cols *h, enum policy_id p, int s,
                   int from, int to, bool *held)
{
	double sum = 0.0;
	*held = false;
	for (int j = from; j < to; j++) {
		const double w = timeline_weight(v->tl, p, s, j);
		if (w >= 0.0 && !pinned(h, j)) {
			sum += w;
			*held = true;
		}
	}
	return sum;
}

static void draw_header(const struct view *v, struct frame *f, const struct heat_cols *h, int x,
                        int w, int y, const char *label)
{
	frame_text(f, x + 1, y, h->label_w - 1, label, STYLE_LABEL);
	for (int i = 0; i < h->pins; i++)
		frame_printf(f, x + h->label_w + i * h->pin_w, y, h->pin_w - 1, STYLE_LABEL, "%d",
		             h->pin[i]);
	const int x0 = x + h->label_w + h->pins_w + h->more_left;
	for (int i = 0; i < h->count; i++) {
		const int pos = h->first + i, cx = x0 + i * h->cw;
		if (h->cw >= NUMBER_W) {
			frame_text(f, cx, y, h->cw - 1, v->sc->text[pos], STYLE_DIM);
		} else if (pos % 10 == 0 && cx + digits(pos) <= x + w) {
			/* Position numbers every ten columns. */
			frame_printf(f, cx, y, digits(pos), STYLE_DIM, "%d", pos);
		}
	}
}

static void draw_half(const struct view *v, struct frame *f, const struct heat_cols *h, int x,
                      int w, int y0, int rows, bool other)
{
	const enum policy_id policy = other ? v->app->compare : POLICY_H2O;
	draw_header(v, f, h, x, w, y0, policies[policy]->name);
	const int x0 = x + h->label_w + h->pins_w + h->more_left;
	const int last = h->first + h->count; /* one past the last position shown */
	const int first_step = v->t - (rows - 1) + 1 > 1 ? v->t - (rows - 1) + 1 : 1;
	for (int s = first_step, y = y0 + 1; s <= v->t; s++, y++) {
		const enum frame_style style = s == v->t ? STYLE_NEW : STYLE_DIM;
		/* Labelled by the token the step appended: its position. */
		frame_printf(f, x + 1, y, h->step_w, style, "%*d", h->step_w, s - 1);
		frame_text(f, x + 2 + h->step_w, y, h->text_w, v->sc->text[s - 1], style);
		for (int i = 0; i < h->pins; i++)
			draw_cell(f, x + h->label_w + i * h->pin_w, y, h->pin_w > 2 ? h->pin_w : 1,
			          timeline_weight(v->tl, policy, s, h->pin[i]));
		for (int i = 0; i < h->count; i++)
			draw_cell(f, x0 + i * h->cw, y, h->cw,
			          timeline_weight(v->tl, policy, s, h->first + i));
		bool held;
		if (h->more_left && h->first > 0) {
			const double m = mass(v, h, policy, s, 0, h->first, &held);
			if (held) {
				frame_put(f, x0 - MORE_W, y, frame_glyph(f, GLYPH_MORE_LEFT),
				          view_heat_style(m));
				frame_printf(f, x0 - MORE_W + 1, y, MORE_W - 2, view_heat_style(m),
				             "%.2f", m);
			}
		}
		if (h->more_right && last < s) {
			const double m = mass(v, h, policy, s, last, s, &held);
			const int rx = x0 + h->count * h->cw + (h->cw > 2 ? 0 : 1);
			if (held) {
				frame_printf(f, rx, y, MORE_W - 2, view_heat_style(m), "%.2f", m);
				frame_put(f, rx + MORE_W - 2, y, frame_glyph(f, GLYPH_MORE_RIGHT),
				          view_heat_style(m));
			}
		}
	}
}

void panel_heat_draw(const struct view *v, struct frame *f, struct rect r)
{
	static const char *const labels[] = {
	        "attention: a row per step (its new token), a column per position",
	        "attention: a row per step, a column per position",
	        "attention: a row per step",
	        "attention",
	};
	view_heat_rule(f, r, labels, (int)(sizeof labels / sizeof labels[0]));
	r.y++;
	r.h--;
	if (r.h < 2)
		return;
	/* A selected token's story takes the place of the compared heat; in
	 * a half narrower than its sentences, the whole heat area. */
	const int rw = r.x + r.w - v->split - 1;
	if (v->app->selected >= 0 && v->t > 0 && rw < INSPECT_HALF_W) {
		panel_inspect_draw(v, f, r);
		return;
	}
	for (int y = r.y; y < r.y + r.h; y++)
		frame_put(f, v->split, y, frame_glyph(f, GLYPH_VLINE), STYLE_BORDER);
	if (v->t == 0) {
		frame_text(f, r.x + 1, r.y, v->split - 2, "(no attention yet)", STYLE_DIM);
		return;
	}
	/* Both halves as wide as the narrower, so their columns line up. */
	const int lw = v->split - r.x;
	const int w = lw < rw ? lw : rw;
	const struct heat_cols h = heat_layout(v, w);
	draw_half(v, f, &h, r.x, w, r.y, r.h, false);
	if (v->app->selected >= 0)
		panel_inspect_draw(v, f, (struct rect){v->split + 1, r.y, rw, r.h});
	else
		draw_half(v, f, &h, v->split + 1, w, r.y, r.h, true);
}

/* The position of the column at COL of a half laid out by H from X, or
 * -1 (a label, the mass beside the columns, a gap). */
static int column_pos(const struct heat_cols *h, int x, int col)
{
	const int pins_x = x + h->label_w;
	if (col >= pins_x && col < pins_x + h->pins_w)
		return h->pin[(col - pins_x) / h->pin_w];
	const int x0 = pins_x + h->pins_w + h->more_left;
	if (col < x0)
		return -1;
	const int i = (col - x0) / h->cw;
	return i < h->count ? h->first + i : -1;
}

struct app_spot view_heat_pick(const struct view *v, struct rect r, int row, int col)
{
	struct app_spot spot = {.kind = SPOT_NONE, .p = POLICY_H2O, .pos = -1, .step = -1};
	/* Below the rule, as panel_heat_draw lays the rows out. */
	r.y++;
	r.h--;
	const int rw = r.x + r.w - v->split - 1;
	if (r.h < 2 || v->t == 0 || row < r.y || row >= r.y + r.h ||
	    (v->app->selected >= 0 && rw < INSPECT_HALF_W))
		return spot;
	const int lw = v->split - r.x;
	const int w = lw < rw ? lw : rw;
	int x;
	if (col >= r.x && col < r.x + w) {
		x = r.x;
	} else if (col > v->split && col < v->split + 1 + w && v->app->selected < 0) {
		x = v->split + 1;
		spot.p = v->app->compare;
	} else {
		return spot; /* the rule between the halves, or the inspector */
	}
	const struct heat_cols h = heat_layout(v, w);
	const int pos = column_pos(&h, x, col);
	if (row == r.y) {
		/* The header names positions: a click there picks the token. */
		if (pos >= 0 && pos < v->t) {
			spot.kind = SPOT_TOKEN;
			spot.pos = pos;
		}
		return spot;
	}
	const int first_step = v->t - (r.h - 1) + 1 > 1 ? v->t - (r.h - 1) + 1 : 1;
	const int s = first_step + (row - r.y - 1);
	if (s > v->t)
		return spot;
	spot.kind = SPOT_HEAT;
	spot.step = s;
	spot.pos = pos;
	return spot;
}
