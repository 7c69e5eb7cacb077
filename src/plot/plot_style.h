/*
 * plot_style: how each policy's curve looks (private to the plot stage).
 *
 * A figure with a dozen policies has curves that lie on one another (a
 * prompt-only policy and the full cache, a window and SnapKV's window
 * form). Colour alone would hide all but the last drawn, and would fail a
 * reader who does not tell red from green; so every policy has a colour of
 * the Okabe-Ito palette (safe for colour-blind readers), a dash pattern and
 * a marker shape, and no two policies share all three. A curve equal to
 * one drawn before it says so in the legend ("snapkv-win = window").
 */
#ifndef H2O_PLOT_STYLE_H
#define H2O_PLOT_STYLE_H

#include <cairo.h>
#include <stdbool.h>

/* Set policy P's colour and dash pattern on CR, lines WIDTH wide. */
void plot_style_line(cairo_t *cr, int p, double width);

/* Policy P's marker, R in radius, centred on X, Y, in its colour. */
void plot_style_marker(cairo_t *cr, int p, double x, double y, double r);

/* The curve of policy P through COUNT points (X[i], Y[i]) in device
 * space: its line, then markers at about MARKERS places spread along it
 * (every point when COUNT <= MARKERS), each policy's shifted so that
 * curves on one another still show every policy's markers. */
void plot_style_curve(cairo_t *cr, int p, const double *x, const double *y, int count, int markers);

/* The legend's sample of policy P at X, Y (its left end, its mid-height):
 * a short line and a marker, as its curves are drawn. */
void plot_style_sample(cairo_t *cr, int p, double x, double y);

/* For the COUNT-point curves of the policies of MASK (YS[p * stride ..]),
 * SAME[p]: the first policy before P in MASK whose curve is equal to P's
 * at every point, or -1. */
void plot_style_same(const double *ys, int stride, int count, unsigned mask, int npolicies,
                     int *same);

/* Each of the COUNT values of YS the mean of the N around it (the (N - 1)
 * / 2 before it, itself and the N / 2 after; fewer at the ends), in
 * place; TMP holds COUNT. N <= 1 leaves YS as it is. */
void plot_smooth(double *ys, int count, int n, double *tmp);

#endif
