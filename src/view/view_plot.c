/*
 * view_plot: H2O's output error (or attention recall) and the compared
 * policy's, over the whole timeline, as two sparklines under the panels.
 *
 * The rule above them carries the measure's name and a marker over the
 * current step's column (m switches the measure), so the user sees at a glance where one policy falls
 * behind the other. A column stands for one step, or for a bucket of steps
 * on a long scene: its worst value (the largest error, the smallest
 * recall), so a bad step is never averaged away.
 */
#include <stdio.h>

#include "view_panels.h"

#define LABEL_W 11 /* "streaming " */
#define VALUE_W 8

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

/* Steps [*from, *to] that column COL of W stands for. */
static void column_steps(int n, int w, int col, int *from, int *to)
{
	*from = (int)((long)col * n / w) + 1;
	*to = (int)((long)(col + 1) * n / w);
	if (*to < *from)
		*to = *from;
}

void panel_plot_draw(const struct view *v, struct frame *f, struct rect r)
{
	if (r.h < 3)
		return;
	const enum policy_id series[2] = {POLICY_H2O, v->app->compare};
	const bool err = v->app->metric == METRIC_OUT_ERR;
	const int x0 = r.x + 1 + LABEL_W, w0 = r.w - 2 - LABEL_W - VALUE_W;
	const int w = w0 < v->n ? w0 : v->n; /* a column per step when they fit */
	/* The label stays left of the sparklines, clear of the marker. */
	view_rule(f, r.x, r.y, r.w, NULL);
	frame_text(f, r.x + 1, r.y, LABEL_W - 1, err ? "out err" : "recall", STYLE_LABEL);
	if (w <= 0)
		return;

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
	static const char ascii_ramp[] = "_.-=+*#@";
	for (int i = 0; i < 2; i++) {
		const int y = r.y + 1 + i;
		frame_text(f, r.x + 1, y, LABEL_W - 1, i == 0 ? "H2O" : policies[series[i]]->name,
		           i == 0 ? STYLE_HEAVY : STYLE_RECENT);
		for (int col = 0; col < w; col++) {
			int from, to;
			column_steps(v->n, w, col, &from, &to);
			if (from > v->built)
				break; /* not built yet */
			to = to < v->built ? to : v->built;
			const double x = bucket(v, series[i], from, to);
			int level = top > 0.0 ? (int)(x / top * 8.0 + 0.5) : 0;
			level = level < 1 ? 1 : level > 8 ? 8 : level;
			const uint32_t glyph = f->ascii ? (uint32_t)ascii_ramp[level - 1]
			                                : 0x2580u + (uint32_t)level;
			frame_put(f, x0 + col, y, glyph,
			          to < v->t || (from <= v->t && v->t <= to) ? STYLE_NORMAL
			                                                    : STYLE_DIM);
		}
		if (v->t > 0)
			frame_printf(f, x0 + w + 1, y, VALUE_W - 1, STYLE_NORMAL, "%.4f",
			             metric_of(v, series[i], v->t));
	}
	/* The marker: over the column holding the current step. */
	if (v->t > 0) {
		const int col = (int)((long)(v->t - 1) * w / v->n);
		frame_put(f, x0 + col, r.y, f->ascii ? 'v' : 0x25BC, STYLE_NEW);
	}
}
