/*
 * plot_panel: a figure's panels (private to the plot stage): their axes,
 * ticks and grid, the curves in their policies' styles (plot_style.h),
 * the target's level, the legend beside a panel and the figure's title.
 */
#ifndef H2O_PLOT_PANEL_H
#define H2O_PLOT_PANEL_H

#include <cairo.h>
#include <stdbool.h>

#include "h2o/report.h"
#include "h2o/scene.h"

/* Sizes in points (pixels in a PNG). */
enum { WIDTH = 920, LEGEND_W = 170, MARGIN_L = 80, MARGIN_R = 30, TITLE_H = 70, BOTTOM = 60 };

struct axis {
	double lo, hi;
	bool log2; /* a budget axis that spans powers of two */
};

/* A panel: its place on the canvas and its axes. */
struct panel {
	double x, y, w, h;
	struct axis xa, ya;
};

/* Where value V falls on PANEL's x and y axes, on the canvas. */
double panel_x(const struct panel *p, double v);
double panel_y(const struct panel *p, double v);

/* [LO, HI] padded to whole ticks around the data's range. */
struct axis value_axis(double lo, double hi);

void set_grey(cairo_t *cr, double g);

/* The panel's grid, ticks, their labels, its border and the axes' names. */
void draw_frame(cairo_t *cr, const struct panel *p, const char *xlabel, const char *ylabel);

/* The curve of policy P through COUNT points, clipped to the panel, with
 * about MARKERS markers along it. */
void draw_curve(cairo_t *cr, const struct panel *pa, int p, const double *xs, const double *ys,
                int count, int markers);

/* A horizontal dashed line at VALUE, "target" at its right end and LABEL
 * at its left; the report's target T as such a line. */
void draw_level(cairo_t *cr, const struct panel *p, double value, const char *label);
void draw_target(cairo_t *cr, const struct panel *p, const struct report_target *t);

/* The legend of a panel from X, Y down: every policy of MASK, and "= NAME"
 * after one whose curve is another's (SAME, NULL: none). Returns the Y
 * below it. */
double draw_legend(cairo_t *cr, double x, double y, unsigned mask, const int *same);

/* The legend's place beside panel PA. */
double legend_x(const struct panel *pa);

/* The scene's title and SUBTITLE at the top of the figure, and under them
 * the settings of SET that differ from the defaults (policy_settings.h),
 * when any do. */
void draw_title(cairo_t *cr, const struct scene *sc, const char *subtitle,
                const struct policy_settings *set);

#endif
