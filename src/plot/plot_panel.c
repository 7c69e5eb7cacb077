/*
 * plot_panel: a figure's panels (see plot_panel.h).
 */
#include "plot_panel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/policy.h"
#include "h2o/policy_settings.h"
#include "plot_style.h"
#include "plot_text.h"

static double axis_pos(const struct axis *a, double v)
{
	if (a->log2)
		return (log2(v) - log2(a->lo)) / (log2(a->hi) - log2(a->lo));
	return (v - a->lo) / (a->hi - a->lo);
}

double panel_x(const struct panel *p, double v)
{
	return p->x + axis_pos(&p->xa, v) * p->w;
}

double panel_y(const struct panel *p, double v)
{
	return p->y + p->h - axis_pos(&p->ya, v) * p->h;
}

/* A tick step of 1, 2 or 5 times a power of ten, about six ticks over
 * [LO, HI]. */
static double tick_step(double lo, double hi)
{
	const double raw = (hi - lo) / 6;
	const double mag = pow(10, floor(log10(raw)));
	const double f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* [LO, HI] padded to whole ticks around DATA's range. */
struct axis value_axis(double lo, double hi)
{
	if (!(hi - lo > 1e-9)) {
		const double pad = fabs(hi) > 1e-9 ? fabs(hi) * 0.05 : 0.05;
		lo -= pad;
		hi += pad;
	}
	const double step = tick_step(lo, hi);
	return (struct axis){floor(lo / step + 1e-9) * step, ceil(hi / step - 1e-9) * step, false};
}

void set_grey(cairo_t *cr, double g)
{
	cairo_set_source_rgb(cr, g, g, g);
}

void draw_frame(cairo_t *cr, const struct panel *p, const char *xlabel, const char *ylabel)
{
	char label[32];
	cairo_set_line_width(cr, 1);
	/* The grid and the ticks' labels. */
	const double ys = tick_step(p->ya.lo, p->ya.hi);
	/* From the first whole tick: an axis padded to a finer step than
	 * its span's starts between two. */
	for (double v = ceil(p->ya.lo / ys - 1e-6) * ys; v <= p->ya.hi + ys * 1e-6; v += ys) {
		const double y = panel_y(p, v);
		set_grey(cr, 0.88);
		cairo_move_to(cr, p->x, y);
		cairo_line_to(cr, p->x + p->w, y);
		cairo_stroke(cr);
		set_grey(cr, 0.2);
		snprintf(label, sizeof label, "%g", fabs(v) < ys * 1e-6 ? 0.0 : v);
		plot_put_text(cr, p->x - 6, y, 1, 0.5, 11, label);
	}
	if (p->xa.log2) {
		for (double v = 1; v <= p->xa.hi * 1.0001; v *= 2) {
			if (v < p->xa.lo * 0.9999)
				continue;
			const double x = panel_x(p, v);
			set_grey(cr, 0.88);
			cairo_move_to(cr, x, p->y);
			cairo_line_to(cr, x, p->y + p->h);
			cairo_stroke(cr);
			set_grey(cr, 0.2);
			snprintf(label, sizeof label, "%g", v);
			plot_put_text(cr, x, p->y + p->h + 6, 0.5, 0, 11, label);
		}
	} else {
		const double xs = tick_step(p->xa.lo, p->xa.hi);
		const double step = xs < 1 ? 1 : xs; /* steps and budgets are whole */
		for (double v = ceil(p->xa.lo / step) * step; v <= p->xa.hi + step * 1e-6;
		     v += step) {
			const double x = panel_x(p, v);
			set_grey(cr, 0.88);
			cairo_move_to(cr, x, p->y);
			cairo_line_to(cr, x, p->y + p->h);
			cairo_stroke(cr);
			set_grey(cr, 0.2);
			snprintf(label, sizeof label, "%g", v);
			plot_put_text(cr, x, p->y + p->h + 6, 0.5, 0, 11, label);
		}
	}
	set_grey(cr, 0);
	cairo_rectangle(cr, p->x, p->y, p->w, p->h);
	cairo_stroke(cr);
	plot_put_text(cr, p->x + p->w / 2, p->y + p->h + 24, 0.5, 0, 12, xlabel);
	cairo_save(cr);
	cairo_translate(cr, p->x - 56, p->y + p->h / 2);
	cairo_rotate(cr, -M_PI / 2);
	plot_put_text(cr, 0, 0, 0.5, 0.5, 12, ylabel);
	cairo_restore(cr);
}

/* The curve of policy P through COUNT points, clipped to the panel, with
 * about MARKERS markers along it. */
void draw_curve(cairo_t *cr, const struct panel *pa, int p, const double *xs, const double *ys,
                int count, int markers)
{
	cairo_save(cr);
	cairo_rectangle(cr, pa->x, pa->y, pa->w, pa->h);
	cairo_clip(cr);
	/* The curve in device space: the data's arrays stay as they are. */
	double *dx = malloc((size_t)count * 2 * sizeof *dx);
	if (dx) {
		double *dy = dx + count;
		for (int i = 0; i < count; i++) {
			dx[i] = panel_x(pa, xs[i]);
			dy[i] = panel_y(pa, ys[i]);
		}
		plot_style_curve(cr, p, dx, dy, count, markers);
		free(dx);
	}
	cairo_restore(cr);
}

/* A horizontal dashed line at VALUE, "target" at its right end and LABEL
 * at its left. */
void draw_level(cairo_t *cr, const struct panel *p, double value, const char *label)
{
	const double y = panel_y(p, value);
	set_grey(cr, 0.35);
	cairo_set_line_width(cr, 1.2);
	const double dash[] = {6, 4};
	cairo_set_dash(cr, dash, 2, 0);
	cairo_move_to(cr, p->x, y);
	cairo_line_to(cr, p->x + p->w, y);
	cairo_stroke(cr);
	cairo_set_dash(cr, NULL, 0, 0);
	plot_put_text(cr, p->x + p->w - 4, y - 3, 1, 1, 10, "target");
	plot_put_text(cr, p->x + 4, y - 3, 0, 1, 10, label);
}

void draw_target(cairo_t *cr, const struct panel *p, const struct report_target *t)
{
	char label[64];
	report_target_text(t, label, sizeof label);
	draw_level(cr, p, t->value, label);
}

/* The legend of a panel: the sample and the name of every policy of MASK,
 * from X, Y down; a policy whose curve is another's (SAME, NULL: none)
 * says so ("snapkv-win = window"), for its curve lies under that one.
 * Returns the Y below it. */
double draw_legend(cairo_t *cr, double x, double y, unsigned mask, const int *same)
{
	set_grey(cr, 0);
	plot_put_text(cr, x, y, 0, 1, 11, "policy");
	double ly = y + 1;
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (!(mask & (1u << p)))
			continue;
		ly += 15;
		plot_style_sample(cr, p, x, ly - 4);
		set_grey(cr, 0);
		char name[64];
		if (same && same[p] >= 0)
			snprintf(name, sizeof name, "%s = %s", policies[p]->name,
			         policies[same[p]]->name);
		else
			snprintf(name, sizeof name, "%s", policies[p]->name);
		plot_put_text(cr, x + 32, ly, 0, 1, 11, name);
	}
	return ly;
}

/* The legend's place beside panel PA. */
double legend_x(const struct panel *pa)
{
	return pa->x + pa->w + 18;
}

/* The settings of SET that differ from the defaults, a policy's together
 * ("settings: snapkv window=8 kernel=7 pool=max; snapkv-win window=8"),
 * cut with "..." where the figure ends; nothing with the defaults. */
static void draw_settings(cairo_t *cr, const struct policy_settings *set)
{
	struct policy_setting_item items[POLICY_SETTINGS_MAX];
	const int n = policy_settings_list(set, items, POLICY_SETTINGS_MAX);
	if (n <= 0)
		return;
	enum { MOST = 150 }; /* characters that fit the figure's width */
	char text[MOST + 8] = "settings:";
	size_t at = strlen(text);
	const char *last = "";
	size_t last_len = 0;
	for (int i = 0; i < n && i < POLICY_SETTINGS_MAX && at < MOST; i++) {
		const char *dot = strchr(items[i].key, '.');
		const size_t len = dot ? (size_t)(dot - items[i].key) : 0;
		const bool same = len == last_len && !strncmp(items[i].key, last, len);
		if (same)
			at += (size_t)snprintf(text + at, sizeof text - at, " %s=%s", dot + 1,
			                       items[i].value);
		else
			at += (size_t)snprintf(text + at, sizeof text - at, "%s %.*s %s=%s",
			                       i ? ";" : "", (int)len, items[i].key,
			                       dot ? dot + 1 : "", items[i].value);
		last = items[i].key;
		last_len = len;
	}
	if (at >= MOST)
		snprintf(text + MOST - 3, sizeof text - (MOST - 3), "...");
	plot_put_text(cr, MARGIN_L, 65, 0, 1, 10, text);
}

void draw_title(cairo_t *cr, const struct scene *sc, const char *subtitle,
                const struct policy_settings *set)
{
	struct buf title;
	plot_safe_text(sc->title, &title);
	set_grey(cr, 0);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
	plot_put_text(cr, MARGIN_L, 30, 0, 1, 16, title.s);
	cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
	set_grey(cr, 0.3);
	plot_put_text(cr, MARGIN_L, 50, 0, 1, 12, subtitle);
	if (set)
		draw_settings(cr, set);
}
