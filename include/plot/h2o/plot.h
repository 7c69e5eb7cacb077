/*
 * plot: the report's figures drawn as a figure for a paper, with cairo.
 *
 * The plot stage sits above the timeline and reads what the report
 * measured (struct report_run, struct report_sweep): the figures of every
 * policy over the steps, or the sweep's mean of the target figure over the
 * budgets with the target as a line. It draws axes, ticks, a legend and
 * the scene's title into an SVG, PNG or PDF file chosen by the file name's
 * extension. It is the one module that writes a file, and only the file
 * it is given; only the command line (src/backend/plot_write.c) calls it. Scene text (the
 * title) is escaped by the text module before cairo sees it.
 */
#ifndef H2O_PLOT_H
#define H2O_PLOT_H

#include "h2o/drop.h"
#include "h2o/report.h"

enum plot_format { PLOT_PNG, PLOT_SVG, PLOT_PDF };

/* The format PATH's extension names (.png, .svg, .pdf, in any case), or
 * -1. */
int plot_format_of(const char *path);

/* What a plot drew. */
struct plot_info {
	int panels;       /* figures drawn, one panel each */
	int curves;       /* curves in each panel of the report's figures: one per
	             * policy */
	int model_curves; /* curves in the model's panel (a policy run on the
	                   * model each, the full cache a line beside them);
	                   * 0: no such panel */
};

/* How the report's figures are drawn. */
struct plot_options {
	/* Each point of a per-step panel the mean of the SMOOTH steps around
	 * it (fewer at the ends); 0 or 1: as measured. The model's panel,
	 * a running sum, is drawn as measured. */
	int smooth;
};

/* Draw RUN's figures over its steps (RUN must have kept its steps: one
 * panel each for attention recall, and output error and cosine when the
 * scene has values; the target as a dashed line in its panel) into PATH.
 * With MODEL (a model scene's real drop at the same budget; NULL: none),
 * one panel more: the log-probability each policy run on the model has
 * lost against the full cache's, added up over the steps so far. Every
 * panel shades the prompt's steps and has its legend; OPT (NULL: the
 * defaults) smooths the per-step panels. Returns 0, or -1 with a reason
 * in ERR (SIZE bytes). */
int plot_report(const struct report_run *run, const struct drop_result *model,
                const struct plot_options *opt, const char *path, struct plot_info *info, char *err,
                int size);

/* Draw the sweep's mean of the target figure against the budget, a curve
 * per policy and the target as a dashed line, into PATH. With MODEL (a
 * model scene's real drop at the same budgets; NULL: none), a second panel
 * below: the H2O paper's perplexity against the budget, a curve per policy
 * run on the model, the full cache's perplexity as a line and the model's
 * target (ratio x the full cache's) dashed. */
int plot_sweep(const struct report_sweep *sweep, const struct drop_sweep *model, const char *path,
               struct plot_info *info, char *err, int size);

#endif
