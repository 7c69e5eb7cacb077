/*
 * plot_canvas: a plot's file, opened, written and closed with the
 * system's reason for every failure (see plot_canvas.h).
 */
#include "plot_canvas.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <errno.h>
#include <fontconfig/fontconfig.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

int plot_format_of(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (!dot || strchr(dot, '/'))
		return -1;
	if (!strcasecmp(dot, ".png"))
		return PLOT_PNG;
	if (!strcasecmp(dot, ".svg"))
		return PLOT_SVG;
	if (!strcasecmp(dot, ".pdf"))
		return PLOT_PDF;
	return -1;
}

static int failed(char *err, int size, const char *what, cairo_status_t status)
{
	snprintf(err, (size_t)size, "%s: %s", what, cairo_status_to_string(status));
	return -1;
}

/* PATH could not be opened, with errno E: the reason, naming PATH's folder
 * when that is what is missing. */
static int open_failed(const char *path, int e, char *err, int size)
{
	const char *slash = strrchr(path, '/');
	if ((e == ENOENT || e == ENOTDIR) && slash) {
		char dir[4096];
		struct stat st;
		const int len = (int)(slash - path) + 1;
		if (len < (int)sizeof dir) {
			memcpy(dir, path, (size_t)len);
			dir[len] = '\0';
			if (stat(dir, &st) != 0) {
				snprintf(err, (size_t)size, "cannot write: %.200s: %s", dir,
				         strerror(errno));
				return -1;
			}
		}
	}
	snprintf(err, (size_t)size, "cannot write: %s", strerror(e));
	return -1;
}

/* Cairo's output, into the canvas's file; the first failure's errno kept. */
static cairo_status_t write_file(void *closure, const unsigned char *data, unsigned int length)
{
	struct canvas *c = closure;
	if (c->error)
		return CAIRO_STATUS_WRITE_ERROR;
	errno = 0;
	if (fwrite(data, 1, length, c->file) != length) {
		c->error = errno ? errno : EIO;
		return CAIRO_STATUS_WRITE_ERROR;
	}
	return CAIRO_STATUS_SUCCESS;
}

int canvas_open(struct canvas *c, const char *path, double w, double h, char *err, int size)
{
	const int format = plot_format_of(path);
	if (format < 0) {
		snprintf(err, (size_t)size, "not .svg, .png or .pdf");
		return -1;
	}
	*c = (struct canvas){.format = (enum plot_format)format, .path = path};
	c->file = fopen(path, "wb");
	if (!c->file)
		return open_failed(path, errno, err, size);
	switch (c->format) {
	case PLOT_PNG:
		c->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)w, (int)h);
		break;
	case PLOT_SVG:
		c->surface = cairo_svg_surface_create_for_stream(write_file, c, w, h);
		break;
	case PLOT_PDF:
		c->surface = cairo_pdf_surface_create_for_stream(write_file, c, w, h);
		break;
	}
	const cairo_status_t status = cairo_surface_status(c->surface);
	if (status != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(c->surface);
		fclose(c->file);
		return c->error ? open_failed(path, c->error, err, size)
		                : failed(err, size, "cannot write", status);
	}
	c->cr = cairo_create(c->surface);
	cairo_set_source_rgb(c->cr, 1, 1, 1);
	cairo_paint(c->cr);
	cairo_select_font_face(c->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
	                       CAIRO_FONT_WEIGHT_NORMAL);
	return 0;
}

int canvas_close(struct canvas *c, char *err, int size)
{
	cairo_status_t status = cairo_status(c->cr);
	cairo_destroy(c->cr);
	if (status == CAIRO_STATUS_SUCCESS && c->format == PLOT_PNG)
		status = cairo_surface_write_to_png_stream(c->surface, write_file, c);
	cairo_surface_finish(c->surface);
	if (status == CAIRO_STATUS_SUCCESS)
		status = cairo_surface_status(c->surface);
	cairo_surface_destroy(c->surface);
	/* What stdio still holds reaches the file now: a full disk shows
	 * here or at the close. */
	errno = 0;
	if (fflush(c->file) != 0 && !c->error)
		c->error = errno ? errno : EIO;
	errno = 0;
	if (fclose(c->file) != 0 && !c->error)
		c->error = errno ? errno : EIO;
	/* A plot is drawn once a run: give back cairo's and fontconfig's
	 * caches, which the sanitizer and valgrind runs would otherwise
	 * report as leaks. */
	cairo_debug_reset_static_data();
	FcFini();
	if (c->error) {
		snprintf(err, (size_t)size, "cannot write: %s", strerror(c->error));
		return -1;
	}
	return status == CAIRO_STATUS_SUCCESS ? 0 : failed(err, size, "cannot write", status);
}
