/*
 * plot_canvas: the file a plot is drawn into (private to the plot stage).
 *
 * The canvas opens its file itself and hands cairo a stream into it, so
 * that a file that cannot be opened or written is told with the system's
 * reason ("missing/: No such file or directory", "No space left on
 * device"), not only cairo's status.
 */
#ifndef H2O_PLOT_CANVAS_H
#define H2O_PLOT_CANVAS_H

#include <cairo.h>
#include <stdio.h>

#include "h2o/plot.h"

struct canvas {
	cairo_surface_t *surface;
	cairo_t *cr;
	enum plot_format format;
	const char *path;
	FILE *file;
	int error; /* errno of the first write that failed; 0: none */
};

/* Open PATH (its format by its extension) as a white canvas W x H, in
 * points (pixels in a PNG). Returns 0, or -1 with the reason in ERR (SIZE
 * bytes) and nothing left open. */
int canvas_open(struct canvas *c, const char *path, double w, double h, char *err, int size);

/* Finish the drawing and write the file, then close it. Returns 0, or -1
 * with the reason in ERR. */
int canvas_close(struct canvas *c, char *err, int size);

#endif
