/*
 * plot_style: how each policy's curve looks (see plot_style.h).
 */
#include "plot_style.h"

#include <math.h>
#include <string.h>

/* The Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2008)
 * but its black, which the axes use: orange, sky blue, bluish green,
 * yellow, blue, vermillion, reddish purple. */
static const double okabe_ito[][3] = {
        {0.902, 0.624, 0.000}, {0.337, 0.706, 0.914}, {0.000, 0.620, 0.451}, {0.941, 0.894, 0.259},
        {0.000, 0.447, 0.698}, {0.835, 0.369, 0.000}, {0.800, 0.475, 0.655},
};

enum dash { SOLID, DASHED, DOTTED, DASH_DOT };
enum marker { CIRCLE, SQUARE, TRIANGLE, DIAMOND, CROSS };

struct style {
	unsigned char colour, dash, marker;
};

/* By policy, in the order of POLICIES: the full cache blue and H2O
 * vermillion, both solid; the policies that often draw the same curve as
 * another (the window and SnapKV's window form, SnapKV and PyramidKV, the
 * full cache and ObservedAttention) apart in colour and dash alike. No two
 * entries share both colour and dash. */
static const struct style styles[] = {
        {4, SOLID, CIRCLE},    {5, SOLID, SQUARE},    {1, SOLID, TRIANGLE}, {2, DASHED, DIAMOND},
        {6, SOLID, CROSS},     {3, DASHED, CIRCLE},   {0, DASHED, SQUARE},  {1, DOTTED, DIAMOND},
        {0, DOTTED, TRIANGLE}, {2, DASH_DOT, CROSS},  {4, DASHED, SQUARE},  {6, DASH_DOT, DIAMOND},
        {5, DOTTED, DIAMOND},  {6, DASHED, TRIANGLE}, {3, SOLID, SQUARE},   {2, DOTTED, CIRCLE},
        {1, DASH_DOT, CROSS},
};
#define STYLE_COUNT ((int)(sizeof styles / sizeof styles[0]))

static const struct style *style_of(int p)
{
	return &styles[(p % STYLE_COUNT + STYLE_COUNT) % STYLE_COUNT];
}

static void set_colour(cairo_t *cr, int p)
{
	const double *c = okabe_ito[style_of(p)->colour];
	cairo_set_source_rgb(cr, c[0], c[1], c[2]);
}

void plot_style_line(cairo_t *cr, int p, double width)
{
	static const double dashed[] = {7, 3}, dotted[] = {1, 3}, dash_dot[] = {8, 3, 1, 3};
	set_colour(cr, p);
	cairo_set_line_width(cr, width);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	/* Round caps turn the dotted pattern's short dashes into dots. */
	cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
	switch ((enum dash)style_of(p)->dash) {
	case DASHED:
		cairo_set_dash(cr, dashed, 2, 0);
		break;
	case DOTTED:
		cairo_set_dash(cr, dotted, 2, 0);
		break;
	case DASH_DOT:
		cairo_set_dash(cr, dash_dot, 4, 0);
		break;
	default:
		cairo_set_dash(cr, NULL, 0, 0);
	}
}

void plot_style_marker(cairo_t *cr, int p, double x, double y, double r)
{
	set_colour(cr, p);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_new_sub_path(cr);
	switch ((enum marker)style_of(p)->marker) {
	case SQUARE:
		cairo_rectangle(cr, x - r * 0.9, y - r * 0.9, r * 1.8, r * 1.8);
		cairo_fill(cr);
		break;
	case TRIANGLE:
		cairo_move_to(cr, x, y - r * 1.2);
		cairo_line_to(cr, x + r * 1.1, y + r * 0.8);
		cairo_line_to(cr, x - r * 1.1, y + r * 0.8);
		cairo_close_path(cr);
		cairo_fill(cr);
		break;
	case DIAMOND:
		cairo_move_to(cr, x, y - r * 1.3);
		cairo_line_to(cr, x + r, y);
		cairo_line_to(cr, x, y + r * 1.3);
		cairo_line_to(cr, x - r, y);
		cairo_close_path(cr);
		cairo_fill(cr);
		break;
	case CROSS:
		/* Two bars, filled like the other marks: a marker has no
		 * stroke, so a figure's strokes are its lines alone. */
		for (int k = 0; k < 2; k++) {
			cairo_save(cr);
			cairo_translate(cr, x, y);
			cairo_rotate(cr, (k ? -1 : 1) * M_PI / 4);
			cairo_rectangle(cr, -r * 1.3, -0.8, r * 2.6, 1.6);
			cairo_restore(cr);
		}
		cairo_fill(cr);
		break;
	default:
		cairo_arc(cr, x, y, r, 0, 2 * M_PI);
		cairo_fill(cr);
	}
}

void plot_style_curve(cairo_t *cr, int p, const double *x, const double *y, int count, int markers)
{
	cairo_save(cr);
	plot_style_line(cr, p, 1.8);
	cairo_new_path(cr);
	for (int i = 0; i < count; i++)
		cairo_line_to(cr, x[i], y[i]);
	cairo_stroke(cr);
	if (count <= markers) {
		for (int i = 0; i < count; i++)
			plot_style_marker(cr, p, x[i], y[i], 3);
	} else if (markers > 0) {
		/* Evenly spaced, each policy's a fifth of a space on from the
		 * one before it. */
		const double step = (double)(count - 1) / markers;
		const double shift = step * (double)(p % 5) / 5;
		for (double at = shift; at <= count - 1; at += step) {
			const int i = (int)lround(at);
			plot_style_marker(cr, p, x[i], y[i], 3);
		}
	}
	cairo_restore(cr);
}

void plot_style_sample(cairo_t *cr, int p, double x, double y)
{
	cairo_save(cr);
	plot_style_line(cr, p, 2.2);
	cairo_move_to(cr, x, y);
	cairo_line_to(cr, x + 26, y);
	cairo_stroke(cr);
	plot_style_marker(cr, p, x + 13, y, 3);
	cairo_restore(cr);
}

void plot_style_same(const double *ys, int stride, int count, unsigned mask, int npolicies,
                     int *same)
{
	for (int p = 0; p < npolicies; p++) {
		same[p] = -1;
		if (!(mask & (1u << p)))
			continue;
		for (int q = 0; q < p && same[p] < 0; q++)
			if ((mask & (1u << q)) && same[q] < 0 &&
			    memcmp(ys + (size_t)p * stride, ys + (size_t)q * stride,
			           (size_t)count * sizeof *ys) == 0)
				same[p] = q;
	}
}

void plot_smooth(double *ys, int count, int n, double *tmp)
{
	if (n <= 1)
		return;
	memcpy(tmp, ys, (size_t)count * sizeof *tmp);
	const int before = (n - 1) / 2, after = n / 2;
	for (int t = 0; t < count; t++) {
		const int a = t - before < 0 ? 0 : t - before;
		const int b = t + after >= count ? count - 1 : t + after;
		double sum = 0;
		for (int i = a; i <= b; i++)
			sum += tmp[i];
		ys[t] = sum / (b - a + 1);
	}
}
