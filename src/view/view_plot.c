/*
 * view_plot: H2O's output error (or attention recall) and the compared
 * policy's, over the whole timeline, under the panels.
 *
 * The rule above them carries the measure's name and a marker over the
 * current step's column (m switches the measure), so the user sees at a
 * glance where one policy falls behind the other. A column stands for one
 * step, or for a bucket of steps on a long scene: its worst value (the
 * largest error, the smallest recall), so a bad step is never averaged
 * away. Both series share one scale (recall on 0 to 1, the error from 0 to
 * its largest), which the rule states. With three rows each series is a
 * sparkline; with more, each is a chart of several rows (eighths of a row
 * high) with a y axis, and the last row carries step ticks.
 */
#include <stdio.h>

#include "view_panels.h"

#define LABEL_W    11 /* "streaming " */
#define VALUE_W    8
#define YLABEL_W   6 /* "1.21" and the axis */
#define MAX_STEP_W 6 /* columns a step at most, on a short scene */

static double metric_of(const struct view *v, enum policy_id p, int s)
{
	const struct step_metrics *m = &timeline_summary(v->tl, s)->c[p].m;
	return v->app->metric == METRIC_OUT_ERR ? m->out_err : m->attn_recall;
}

/* The worst value of policy P over steps [from, to]. */
static double bucket(const struct view *v, enum policy_id p, int from, int to)
{
	const bool err = v->app->metric == METRIC_OUT_ERR;
	double worst = metric_of(v, p, from);
	for (int s = from + 1; s <= to; s++) {
		const double x = metric_of(v, p, s);
		worst = err ? (x > worst ? x : worst) : (x < worst ? x : worst);
	}
	return worst;
}

/* The plot's columns: W of them, SW a step when the steps are fewer than
 * the room (a wider bar each), else one a bucket of steps. */
struct plot_cols {
	int n, w, sw;
};

static struct plot_cols plot_cols(int n, int room)
{
	struct plot_cols c = {.n = n, .w = room < n ? room : n, .sw = 1};
	if (n > 0 && room > n) {
		c.sw = room / n > MAX_STEP_W ? MAX_STEP_W : room / n;
		c.w = n * c.sw;
	}
	return c;
}

/* Steps [*from, *to] that column COL stands for. */
static void column_steps(const struct plot_cols *c, int col, int *from, int *to)
{
	if (c->sw > 1) {
		*from = *to = col / c->sw + 1;
		return;
	}
	*from = (int)((long)col * c->n / c->w) + 1;
	*to = (int)((long)(col + 1) * c->n / c->w);
	if (*to < *from)
		*to = *from;
}

/* The first column holding step S (1..n), and the middle one. */
static int column_of(const struct plot_cols *c, int s)
{
	return c->sw > 1 ? (s - 1) * c->sw : (int)((long)(s - 1) * c->w / c->n);
}

static int column_mid(const struct plot_cols *c, int s)
{
	return column_of(c, s) + (c->sw - 1) / 2;
}

/* One cell of a bar EIGHTHS high (0..8) from its bottom. */
static uint32_t eighths_glyph(const struct frame *f, int eighths)
{
	static const char ascii_ramp[] = "_.-=+*#";
	if (eighths <= 0)
		return ' ';
	if (eighths >= 8)
		return f->ascii ? '#' : 0x2588;
	return f->ascii ? (uint32_t)ascii_ramp[eighths - 1] : 0x2580u + (uint32_t)eighths;
}

/* "0.94", "1.2", "12": the scale's top in at most YLABEL_W - 1 columns. */
static void format_top(double top, char *buf, size_t size)
{
	if (top >= 99.5)
		snprintf(buf, size, "%.0f", top);
	else if (top >= 9.95)
		snprintf(buf, size, "%.1f", top);
	else
		snprintf(buf, size, "%.2f", top);
}

/* Columns at least between two step ticks: the widest label and a gap. */
static int tick_gap(int n)
{
	int d = 1;
	for (; n >= 10; n /= 10)
		d++;
	return d + 2 > 4 ? d + 2 : 4;
}

/* Steps between two ticks: 1, 2 or 5 times a power of ten, the smallest
 * that keeps ticks tick_gap columns apart. */
static int tick_every(const struct plot_cols *c)
{
	for (long d = 1;; d *= 10)
		for (int m = 0; m < 3; m++) {
			const long step = d * (m == 0 ? 1 : m == 1 ? 2 : 5);
			if (step >= c->n || step * c->w >= (long)tick_gap(c->n) * c->n)
				return (int)step;
		}
}

static void draw_ticks(const struct view *v, struct frame *f, const struct plot_cols *c, int x0,
                       int y, int label_x)
{
	frame_text(f, label_x, y, LABEL_W - 1, "step", STYLE_DIM);
	const int every = tick_every(c);
	/* Step 1 starts the axis when the first round tick leaves room. */
	const bool one = every == 1 || column_mid(c, every) - column_mid(c, 1) >= tick_gap(c->n);
	int free_from = 0; /* the first column a label may use */
	for (long s = one ? 1 : every; s <= v->n; s = s == 1 && every > 1 ? every : s + every) {
		char buf[24];
		const int len = snprintf(buf, sizeof buf, "%ld", s);
		const int col = column_mid(c, (int)s);
		if (col < free_from || col + len > c->w + VALUE_W)
			continue;
		frame_text(f, x0 + col, y, len, buf, STYLE_DIM);
		free_from = col + len + 1;
	}
}

void panel_plot_draw(const struct view *v, struct frame *f, struct rect r)
{
	if (r.h < 3)
		return;
	const enum policy_id series[2] = {POLICY_H2O, v->app->compare};
	const bool err = v->app->metric == METRIC_OUT_ERR;
	/* Three rows: a sparkline per series; more: a chart each, a y axis
	 * and a row of step ticks. */
	const bool tall = r.h >= 6;
	const int k = tall ? (r.h - 2) / 2 : 1; /* rows per series */
	const int axis_w = tall ? YLABEL_W : 0;
	const int x0 = r.x + 1 + LABEL_W + axis_w, w0 = r.w - 2 - LABEL_W - axis_w - VALUE_W;
	const struct plot_cols c = plot_cols(v->n, w0);
	const int w = c.w;

	/* One scale for both: recall on [0, 1], error up to its largest. */
	double top = 1.0;
	if (err) {
		top = 0.0;
		for (int i = 0; i < 2; i++)
			for (int s = 1; s <= v->built; s++) {
				const double x = metric_of(v, series[i], s);
				top = x > top ? x : top;
			}
	}
	char top_s[16];
	format_top(top, top_s, sizeof top_s);

	view_rule(f, r.x, r.y, r.w, NULL);
	/* The label stays left of the chart, clear of the marker; the scale
	 * sits over the values. */
	frame_text(f, r.x + 1, r.y, LABEL_W - 1, err ? "out err" : "recall", STYLE_LABEL);
	if (!tall)
		frame_printf(f, r.x + r.w - VALUE_W, r.y, VALUE_W - 1, STYLE_DIM,
		             f->ascii ? "0-%s" : "0\u2013%s", top_s);
	if (w <= 0)
		return;

	for (int i = 0; i < 2; i++) {
		const int y_top = r.y + 1 + i * k, y_bottom = y_top + k - 1;
		frame_text(f, r.x + 1, y_top, LABEL_W - 1,
		           i == 0 ? "H2O" : policies[series[i]]->name,
		           i == 0 ? STYLE_HEAVY : STYLE_RECENT);
		if (tall) {
			const int ax = x0 - 1;
			frame_printf(f, ax - (YLABEL_W - 1), y_top, YLABEL_W - 1, STYLE_DIM, "%*s",
			             YLABEL_W - 1, top_s);
			frame_printf(f, ax - (YLABEL_W - 1), y_bottom, YLABEL_W - 1, STYLE_DIM,
			             "%*s", YLABEL_W - 1, "0");
			for (int y = y_top; y <= y_bottom; y++)
				frame_put(f, ax, y,
				          frame_glyph(f, y == y_top || y == y_bottom
				                                 ? GLYPH_AXIS_TICK
				                                 : GLYPH_AXIS_Y),
				          STYLE_BORDER);
		}
		for (int col = 0; col < w; col++) {
			int from, to;
			column_steps(&c, col, &from, &to);
			if (from > v->built)
				break; /* not built yet */
			to = to < v->built ? to : v->built;
			const double x = bucket(v, series[i], from, to);
			/* Eighths of the chart's height; a built step never
			 * looks like nothing. */
			int height = top > 0.0 ? (int)(x / top * 8.0 * k + 0.5) : 0;
			height = height < 1 ? 1 : height > 8 * k ? 8 * k : height;
			const enum frame_style style = to < v->t || (from <= v->t && v->t <= to)
			                                       ? STYLE_NORMAL
			                                       : STYLE_DIM;
			/* Wide steps keep a gap between their bars. */
			if (c.sw > 2 && col % c.sw == c.sw - 1)
				continue;
			for (int row = 0; row < k; row++) {
				const int e = height - 8 * row;
				if (e > 0)
					frame_put(f, x0 + col, y_bottom - row, eighths_glyph(f, e),
					          style);
			}
		}
		if (v->t > 0)
			frame_printf(f, x0 + w + 1, y_top, VALUE_W - 1, STYLE_NORMAL, "%.4f",
			             metric_of(v, series[i], v->t));
	}
	if (tall)
		draw_ticks(v, f, &c, x0, r.y + 1 + 2 * k, r.x + 1);
	/* The marker: over the column holding the current step. */
	if (v->t > 0)
		frame_put(f, x0 + column_mid(&c, v->t), r.y, frame_glyph(f, GLYPH_MARKER),
		          STYLE_NEW);
}
