/*
 * plot: figures of the report drawn with cairo (see plot.h).
 */
#include "h2o/plot.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/policy.h"
#include "h2o/scene.h"
#include "h2o/text.h"
#include "plot_canvas.h"
#include "plot_panel.h"
#include "plot_style.h"
#include "plot_text.h"

/* ---- the report over its steps -------------------------------------------- */

/* The name of figure F, on every axis and legend that shows it. */
static const char *figure_label(enum report_figure f)
{
	switch (f) {
	case REPORT_ERR:
		return "output error ||o - o_full||";
	case REPORT_COS:
		return "output cosine";
	default:
		return "attention recall";
	}
}

/* The one name of a step axis and of a memory axis. */
#define STEP_AXIS "step"
#define HELD_AXIS "peak tokens held per kv head"

static int count_bits(unsigned mask)
{
	int n = 0;
	for (; mask; mask &= mask - 1)
		n++;
	return n;
}

/* The policies D ran, but the full cache: a curve each. */
static unsigned drop_mask(const struct drop_result *d)
{
	unsigned mask = 0;
	for (int p = 0; d && p < POLICY_COUNT; p++)
		if (p != POLICY_FULL && d->p[p].ran)
			mask |= 1u << p;
	return mask;
}

/* The log-probability policy P's run has lost against the full cache's
 * over the predictions 0 .. COUNT - 1, added up in order, into YS. */
static void lost_so_far(const struct drop_result *d, enum policy_id p, int count, double *ys)
{
	double sum = 0.0;
	for (int t = 0; t < count; t++) {
		sum += d->p[POLICY_FULL].logprob[t] - d->p[p].logprob[t];
		ys[t] = sum;
	}
}

/* The prompt's steps 1 .. P of a step axis shaded, its end a dotted line:
 * before it nothing is evicted and every policy is the full cache. */
static void draw_prompt_end(cairo_t *cr, const struct panel *pa, int prompt)
{
	if (prompt < 1 || prompt >= pa->xa.hi)
		return;
	const double x = panel_x(pa, prompt);
	cairo_save(cr);
	set_grey(cr, 0.95);
	cairo_rectangle(cr, pa->x, pa->y, x - pa->x, pa->h);
	cairo_fill(cr);
	set_grey(cr, 0.35);
	cairo_set_line_width(cr, 1);
	const double dash[] = {2, 3};
	cairo_set_dash(cr, dash, 2, 0);
	cairo_move_to(cr, x, pa->y);
	cairo_line_to(cr, x, pa->y + pa->h);
	cairo_stroke(cr);
	cairo_restore(cr);
	/* Its label half-way down, where the curves are not: before the
	 * prompt's end every figure is exact (at the top or the bottom). */
	char label[48];
	snprintf(label, sizeof label, "prompt: steps 1-%d", prompt);
	set_grey(cr, 0.3);
	cairo_text_extents_t e;
	cairo_set_font_size(cr, 10);
	cairo_text_extents(cr, label, &e);
	if (e.x_advance + 8 <= x - pa->x)
		plot_put_text(cr, x - 4, pa->y + pa->h / 2, 1, 0.5, 10, label);
	else /* a prompt too short to hold it: beside its end */
		plot_put_text(cr, x + 4, pa->y + pa->h / 2, 0, 0.5, 10, label);
}

/* The model's panel of the report, in PA (its x axis set): for each
 * policy run on the model, the nats it has lost so far at each step (the
 * prediction made after the step). XS holds the steps; CURVES room for
 * POLICY_COUNT curves of d->n points. */
static void draw_drop_panel(cairo_t *cr, struct panel *pa, const struct drop_result *d,
                            const double *xs, double *curves)
{
	const unsigned mask = drop_mask(d);
	const int count = d->given - 1, stride = d->n;
	/* The axis reaches twice the median policy's largest loss: one rule
	 * far worse than the others (key norms) would flatten them all. The
	 * policies above it are named. */
	double top[POLICY_COUNT], sorted[POLICY_COUNT], lo = 0;
	int k = 0;
	for (int p = 0; p < POLICY_COUNT; p++) {
		top[p] = 0;
		if (!(mask & (1u << p)))
			continue;
		double *ys = curves + (size_t)p * stride;
		lost_so_far(d, (enum policy_id)p, count, ys);
		for (int t = 0; t < count; t++) {
			lo = ys[t] < lo ? ys[t] : lo;
			top[p] = ys[t] > top[p] ? ys[t] : top[p];
		}
		/* Insertion, ascending. */
		int i = k++;
		for (; i > 0 && sorted[i - 1] > top[p]; i--)
			sorted[i] = sorted[i - 1];
		sorted[i] = top[p];
	}
	const double cap = 2 * sorted[(k - 1) / 2];
	double hi = 0;
	unsigned above = 0;
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (!(mask & (1u << p)))
			continue;
		if (cap > 0 && top[p] > cap)
			above |= 1u << p;
		else
			hi = top[p] > hi ? top[p] : hi;
	}
	pa->ya = value_axis(lo, hi);
	set_grey(cr, 0.3);
	plot_put_text(
	        cr, pa->x, pa->y - 10, 0, 1, 12,
	        "the model itself, every layer's cache evicted: the next tokens' log-probability "
	        "lost against the full cache, added up");
	draw_prompt_end(cr, pa, d->prompt);
	draw_frame(cr, pa, STEP_AXIS, "nats lost so far");
	int same[POLICY_COUNT];
	plot_style_same(curves, stride, count, mask, POLICY_COUNT, same);
	for (int p = 0; p < POLICY_COUNT; p++)
		if (mask & (1u << p))
			draw_curve(cr, pa, p, xs, curves + (size_t)p * stride, count, 10);
	double ly = draw_legend(cr, legend_x(pa), pa->y + 8, mask, same);
	if (above) {
		ly += 22;
		set_grey(cr, 0.3);
		plot_put_text(cr, legend_x(pa), ly, 0, 1, 11, "above the axis:");
		for (int p = 0; p < POLICY_COUNT; p++)
			if (above & (1u << p)) {
				ly += 14;
				plot_put_text(cr, legend_x(pa) + 8, ly, 0, 1, 11,
				              policies[p]->name);
			}
	}
}

/* One per-step panel of the report: figure F of every policy RUN shows,
 * smoothed over SMOOTH steps, in PA (its x axis set); CURVES holds
 * POLICY_COUNT curves of n points, TMP n. */
static void draw_step_panel(cairo_t *cr, struct panel *pa, const struct report_run *run,
                            enum report_figure f, int smoothing, const double *xs, double *curves,
                            double *tmp)
{
	const struct scene *sc = run->scene;
	const int n = sc->n;
	/* The axis spans the steps the figures are over (the decode steps
	 * by default): the prompt's, where every policy is exact, would
	 * only stretch it. */
	double lo = INFINITY, hi = -INFINITY;
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (!(run->policies & (1u << p)))
			continue;
		double *ys = curves + (size_t)p * n;
		for (int t = 0; t < n; t++)
			ys[t] = report_figure_of(f, &run->steps[(size_t)t * POLICY_COUNT + p]);
		plot_smooth(ys, n, smoothing, tmp);
		for (int t = run->from - 1; t < n; t++) {
			lo = ys[t] < lo ? ys[t] : lo;
			hi = ys[t] > hi ? ys[t] : hi;
		}
	}
	if (f == run->target.figure) {
		lo = run->target.value < lo ? run->target.value : lo;
		hi = run->target.value > hi ? run->target.value : hi;
	}
	pa->ya = value_axis(lo, hi);
	draw_prompt_end(cr, pa, run->budget.prompt);
	draw_frame(cr, pa, STEP_AXIS, figure_label(f));
	int same[POLICY_COUNT];
	plot_style_same(curves, n, n, run->policies, POLICY_COUNT, same);
	for (int p = 0; p < POLICY_COUNT; p++)
		if (run->policies & (1u << p))
			draw_curve(cr, pa, p, xs, curves + (size_t)p * n, n, 10);
	if (f == run->target.figure)
		draw_target(cr, pa, &run->target);
	draw_legend(cr, legend_x(pa), pa->y + 8, run->policies, same);
}

int plot_report(const struct report_run *run, const struct drop_result *model,
                const struct plot_options *opt, const char *path, struct plot_info *info, char *err,
                int size)
{
	const struct scene *sc = run->scene;
	if (!run->steps || sc->n < 1) {
		snprintf(err, (size_t)size, "no steps to plot");
		return -1;
	}
	/* The model's run is of the same tokens, with a prediction to lose. */
	if (model && (model->n != sc->n || model->given < 2 || !drop_mask(model)))
		model = NULL;
	enum report_figure figs[REPORT_FIGURE_COUNT];
	int panels = 0;
	figs[panels++] = REPORT_RECALL;
	if (sc->v) {
		figs[panels++] = REPORT_ERR;
		figs[panels++] = REPORT_COS;
	}
	enum { PANEL_H = 230, GAP = 60 };
	const int all = panels + (model != NULL);
	const double height = TITLE_H + all * PANEL_H + (all - 1) * GAP + BOTTOM;
	const int smoothing = opt && opt->smooth > 1 ? opt->smooth : 1;
	double *xs = malloc((size_t)sc->n * sizeof *xs), *tmp = malloc((size_t)sc->n * sizeof *tmp);
	double *curves = malloc((size_t)sc->n * POLICY_COUNT * sizeof *curves);
	if (!xs || !tmp || !curves) {
		free(xs);
		free(tmp);
		free(curves);
		snprintf(err, (size_t)size, "out of memory");
		return -1;
	}
	struct canvas c;
	if (canvas_open(&c, path, WIDTH, height, err, size) < 0) {
		free(xs);
		free(tmp);
		free(curves);
		return -1;
	}
	char subtitle[200], smoothed[48] = "";
	if (smoothing > 1)
		snprintf(smoothed, sizeof smoothed, "; each step the mean of %d around it",
		         smoothing);
	snprintf(subtitle, sizeof subtitle,
	         "%d tokens, budget %d (heavy %d + recent %d, %d sinks), every policy against the "
	         "full cache%s",
	         sc->n, run->budget.heavy + run->budget.recent, run->budget.heavy,
	         run->budget.recent, run->budget.sinks, smoothed);
	draw_title(c.cr, sc, subtitle, &run->budget.set);
	for (int t = 0; t < sc->n; t++)
		xs[t] = t + 1;
	for (int k = 0; k < all; k++) {
		struct panel pa = {
		        .x = MARGIN_L,
		        .y = TITLE_H + k * (PANEL_H + GAP),
		        .w = WIDTH - MARGIN_L - MARGIN_R - LEGEND_W,
		        .h = PANEL_H,
		        .xa = {sc->n > 1 ? 1 : 0.5, sc->n > 1 ? sc->n : 1.5, false},
		};
		if (k < panels)
			draw_step_panel(c.cr, &pa, run, figs[k], smoothing, xs, curves, tmp);
		else
			draw_drop_panel(c.cr, &pa, model, xs, curves);
	}
	free(xs);
	free(tmp);
	free(curves);
	*info = (struct plot_info){all, count_bits(run->policies),
	                           model ? count_bits(drop_mask(model)) : 0};
	return canvas_close(&c, err, size);
}

/* ---- the sweep -------------------------------------------------------------- */

struct point {
	double x, y;
};

static int by_x(const void *a, const void *b)
{
	const double x = ((const struct point *)a)->x, y = ((const struct point *)b)->x;
	return (x > y) - (x < y);
}

/* The policies MODEL ran, but the full cache: a curve each. */
static unsigned model_mask(const struct drop_sweep *model)
{
	unsigned mask = 0;
	for (int p = 0; model && model->count > 0 && p < POLICY_COUNT; p++)
		if (p != POLICY_FULL && model->runs[0].p[p].ran)
			mask |= 1u << p;
	return mask;
}

static double model_ppl(const struct drop_sweep *model, int i, enum policy_id p)
{
	const struct drop_result *r = &model->runs[i];
	return drop_perplexity(r, p, r->prompt > 0 ? r->prompt - 1 : 0, r->given - 1);
}

/* COUNT points in order of their memory, into XS and YS. */
static void sweep_curve(struct point *pts, int count, double *xs, double *ys)
{
	qsort(pts, (size_t)count, sizeof *pts, by_x);
	for (int i = 0; i < count; i++) {
		xs[i] = pts[i].x;
		ys[i] = pts[i].y;
	}
}

/* SAME (plot_style_same) of the policies of MASK whose N points (XS,
 * CURVES, a policy's at p * N) are equal: equal figures at unequal memory
 * are not the same curve. */
static void same_points(const double *xs, const double *curves, int n, unsigned mask, int *same)
{
	plot_style_same(curves, n, n, mask, POLICY_COUNT, same);
	for (int p = 0; p < POLICY_COUNT; p++)
		if (same[p] >= 0 && memcmp(xs + (size_t)p * n, xs + (size_t)same[p] * n,
		                           (size_t)n * sizeof *xs) != 0)
			same[p] = -1;
}

/* A log axis when the memory spans powers of two. */
static struct axis held_axis(double bmin, double bmax, bool powers)
{
	const bool log_x = bmin >= 1 && (bmax / bmin >= 32 || (powers && bmax / bmin >= 4));
	return (struct axis){bmax > bmin ? bmin : bmin - 0.5, bmax > bmin ? bmax : bmax + 0.5,
	                     log_x};
}

static const char *held_label(const struct axis *a)
{
	return a->log2 ? HELD_AXIS " (log scale)" : HELD_AXIS;
}

/* The model's panel of the sweep: perplexity after the prompt against the
 * memory each policy held (the H2O paper's figure), in PA; the y axis
 * reaches twice the full cache's perplexity at most, and the policies
 * above it are named. PTS, XS and CURVES hold COUNT points a policy. */
static void draw_model_panel(cairo_t *cr, struct panel *pa, const struct drop_sweep *model,
                             bool powers, struct point *pts, double *xs, double *curves)
{
	const unsigned mask = model_mask(model);
	const int n = model->count;
	const double full = drop_sweep_full(model), target = model->ratio * full;
	const double cap = 2 * (target > full ? target : full);
	double lo = full, hi = target, bmin = INFINITY, bmax = -INFINITY;
	unsigned above = 0;
	for (int i = 0; i < n; i++)
		for (int p = 0; p < POLICY_COUNT; p++) {
			if (!(mask & (1u << p)))
				continue;
			const double v = model_ppl(model, i, (enum policy_id)p);
			const double x = model->runs[i].p[p].held_peak;
			bmin = x < bmin ? x : bmin;
			bmax = x > bmax ? x : bmax;
			lo = v < lo ? v : lo;
			if (v > cap)
				above |= 1u << p;
			else
				hi = v > hi ? v : hi;
		}
	pa->xa = held_axis(bmin, bmax, powers);
	/* A little room below the full cache's line for its label. */
	pa->ya = value_axis(lo - 0.04 * (hi - lo), hi);
	const struct drop_result *r0 = &model->runs[0];
	char heading[160];
	snprintf(heading, sizeof heading,
	         "the model itself, every layer's cache evicted: perplexity of the %d tokens "
	         "after the prompt",
	         r0->given - 1 - (r0->prompt > 0 ? r0->prompt - 1 : 0));
	set_grey(cr, 0.3);
	plot_put_text(cr, pa->x, pa->y - 10, 0, 1, 12, heading);
	draw_frame(cr, pa, held_label(&pa->xa), "perplexity");
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (!(mask & (1u << p)))
			continue;
		for (int i = 0; i < n; i++)
			pts[i] = (struct point){model->runs[i].p[p].held_peak,
			                        model_ppl(model, i, (enum policy_id)p)};
		sweep_curve(pts, n, xs + (size_t)p * n, curves + (size_t)p * n);
	}
	int same[POLICY_COUNT];
	same_points(xs, curves, n, mask, same);
	for (int p = 0; p < POLICY_COUNT; p++)
		if (mask & (1u << p))
			draw_curve(cr, pa, p, xs + (size_t)p * n, curves + (size_t)p * n, n, n);
	/* The full cache: a line in its style, the same at every budget. */
	const double fy = panel_y(pa, full);
	cairo_save(cr);
	plot_style_line(cr, POLICY_FULL, 1.8);
	cairo_move_to(cr, pa->x, fy);
	cairo_line_to(cr, pa->x + pa->w, fy);
	cairo_stroke(cr);
	cairo_restore(cr);
	char label[96];
	snprintf(label, sizeof label, "full cache %.4f", full);
	set_grey(cr, 0);
	plot_put_text(cr, pa->x + 4, fy + 4, 0, 0, 10, label);
	char text[48];
	report_ppl_text(model->ratio, text, sizeof text);
	snprintf(label, sizeof label, "%s = %.4f", text, target);
	draw_level(cr, pa, target, label);
	/* The legend: the curves, then the target's line. */
	const double lx = legend_x(pa);
	double ly = draw_legend(cr, lx, pa->y + 8, mask | (1u << POLICY_FULL), same) + 16;
	set_grey(cr, 0.35);
	cairo_set_line_width(cr, 1.2);
	const double dash[] = {6, 4};
	cairo_set_dash(cr, dash, 2, 0);
	cairo_move_to(cr, lx, ly - 4);
	cairo_line_to(cr, lx + 26, ly - 4);
	cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
	set_grey(cr, 0);
	plot_put_text(cr, lx + 32, ly, 0, 1, 11, "target");
	if (above) {
		ly += 22;
		set_grey(cr, 0.3);
		plot_put_text(cr, lx, ly, 0, 1, 11, "above the axis:");
		for (int p = 0; p < POLICY_COUNT; p++)
			if (above & (1u << p)) {
				ly += 14;
				plot_put_text(cr, lx + 8, ly, 0, 1, 11, policies[p]->name);
			}
	}
}

int plot_sweep(const struct report_sweep *sw, const struct drop_sweep *model, const char *path,
               struct plot_info *info, char *err, int size)
{
	/* A text that ends at the prompt has no perplexity to draw. */
	if (model &&
	    (model->count != sw->count || model->count == 0 || !drop_judged(&model->runs[0])))
		model = NULL;
	enum { PANEL_H = 420, GAP = 90 };
	if (sw->count < 1) {
		snprintf(err, (size_t)size, "no budgets to plot");
		return -1;
	}
	const struct scene *sc = sw->runs[0].scene;
	const struct report_target *t = &sw->runs[0].target;
	const size_t points = (size_t)sw->count * POLICY_COUNT;
	struct point *pts = malloc((size_t)sw->count * sizeof *pts);
	double *xs = malloc(points * sizeof *xs);
	double *curves = malloc(points * sizeof *curves);
	if (!pts || !xs || !curves) {
		free(pts);
		free(xs);
		free(curves);
		snprintf(err, (size_t)size, "out of memory");
		return -1;
	}
	/* Every point at the memory its policy held (the peak tokens per kv
	 * cache), not at the budget it was given: a policy that kept every
	 * token after the prompt sits where its memory is. */
	double lo = t->value, hi = t->value, bmin = INFINITY, bmax = -INFINITY;
	for (int i = 0; i < sw->count; i++) {
		for (int p = 0; p < POLICY_COUNT; p++) {
			if (!(sw->policies & (1u << p)))
				continue;
			const double v = report_summary_mean(&sw->runs[i].sum[p], t->figure);
			const double x = report_held_peak(&sw->runs[i].sum[p]);
			bmin = x < bmin ? x : bmin;
			bmax = x > bmax ? x : bmax;
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
	}
	struct canvas c;
	const double height = TITLE_H + PANEL_H + (model ? GAP + PANEL_H : 0) + BOTTOM + 10;
	if (canvas_open(&c, path, WIDTH, height, err, size) < 0) {
		free(pts);
		free(xs);
		free(curves);
		return -1;
	}
	char subtitle[320], split[96];
	if (sw->split.source)
		snprintf(split, sizeof split, "heavy floor(%g B) (%s)", sw->split.heavy,
		         sw->split.source);
	else
		snprintf(split, sizeof split, "heavy B/2");
	if (sw->runs[0].decode)
		snprintf(subtitle, sizeof subtitle,
		         "budget sweep over %d tokens: the mean over the %d decode steps at the "
		         "memory each policy held; H2O keeps %s",
		         sc->n, sc->n - sw->runs[0].from + 1, split);
	else
		snprintf(subtitle, sizeof subtitle,
		         "budget sweep over %d tokens: the mean over all steps at the memory each "
		         "policy held; H2O keeps %s",
		         sc->n, split);
	draw_title(c.cr, sc, subtitle, &sw->runs[0].budget.set);
	/* Budgets that span powers of two read best on a log axis. */
	bool powers = true; /* every budget a power of two */
	for (int i = 0; i < sw->count; i++)
		powers = powers && (sw->budgets[i] & (sw->budgets[i] - 1)) == 0;
	struct panel pa = {
	        .x = MARGIN_L,
	        .y = TITLE_H,
	        .w = WIDTH - MARGIN_L - MARGIN_R - LEGEND_W,
	        .h = PANEL_H,
	        .xa = held_axis(bmin, bmax, powers),
	        .ya = value_axis(lo, hi),
	};
	char ylabel[64];
	snprintf(ylabel, sizeof ylabel, "mean %s%s", figure_label(t->figure),
	         sw->runs[0].decode ? ", decode" : "");
	draw_frame(c.cr, &pa, held_label(&pa.xa), ylabel);
	const int n = sw->count;
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (!(sw->policies & (1u << p)))
			continue;
		for (int i = 0; i < n; i++)
			pts[i] =
			        (struct point){report_held_peak(&sw->runs[i].sum[p]),
			                       report_summary_mean(&sw->runs[i].sum[p], t->figure)};
		sweep_curve(pts, n, xs + (size_t)p * n, curves + (size_t)p * n);
	}
	int same[POLICY_COUNT];
	same_points(xs, curves, n, sw->policies, same);
	for (int p = 0; p < POLICY_COUNT; p++)
		if (sw->policies & (1u << p))
			draw_curve(c.cr, &pa, p, xs + (size_t)p * n, curves + (size_t)p * n, n, n);
	draw_target(c.cr, &pa, t);
	draw_legend(c.cr, legend_x(&pa), TITLE_H + 8, sw->policies, same);
	if (model) {
		pa.y += PANEL_H + GAP;
		draw_model_panel(c.cr, &pa, model, powers, pts, xs, curves);
	}
	free(pts);
	free(xs);
	free(curves);
	*info = (struct plot_info){1 + (model != NULL), count_bits(sw->policies),
	                           model ? count_bits(model_mask(model)) : 0};
	return canvas_close(&c, err, size);
}
