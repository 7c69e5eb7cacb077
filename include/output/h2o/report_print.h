/*
 * report_print: the report and the sweep (report.h) written out, as a
 * table, JSON or CSV; with a model scene's real drop (drop_print.h)
 * inside. The writers measure nothing; report.h's functions measure and
 * write nothing.
 */
#ifndef H2O_REPORT_PRINT_H
#define H2O_REPORT_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "h2o/report.h"

/* The output formats. */
enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_CSV };

/* A model scene's real drop (drop.h), written inside the report or the
 * sweep: one table after the other as text, one JSON object (under
 * "model"), one CSV (its figures as further columns). */
struct report_model {
	const struct drop_result *drop; /* the report's: the run at its budget */
	const struct drop_sweep *sweep; /* the sweep's: a run per budget */
	const char *title;              /* the model's name */
	double ratio;                   /* its target, ppl=R */
};

/* Write RUN (or SWEEP) in FORMAT; PER_HEAD adds a row (or an object) per
 * head when RUN kept them. The CSV of a run has a row per step and policy
 * (and head, with PER_HEAD) and needs the steps kept; the sweep's, a row
 * per budget and policy. Return 0, or -1 when OUT fails. */
int report_print(const struct report_run *run, enum report_format format, bool per_head, FILE *out);
int report_sweep_print(const struct report_sweep *sweep, enum report_format format, bool per_head,
                       FILE *out);
/* The same with MODEL's figures (NULL: none) inside. The text tables list
 * the full cache first and then the other policies best first by the
 * target's figure (ties in the order of POLICIES); JSON and CSV keep the
 * order of POLICIES. */
int report_print_model(const struct report_run *run, const struct report_model *model,
                       enum report_format format, bool per_head, FILE *out);
int report_sweep_print_model(const struct report_sweep *sweep, const struct report_model *model,
                             enum report_format format, bool per_head, FILE *out);

/* The report of SCENE at budget B with the default target, as a table or
 * JSON (measure and print in one). Returns 0, or -1 when out of memory or
 * OUT fails. */
int report_write(const struct scene *scene, const struct budget *b, bool json, FILE *out,
                 const struct progress *progress);
/* The sweep with the default target, H2O splitting B into heavy B / 2 and
 * recent B - B / 2. */
int report_sweep(const struct scene *scene, const int *budgets, int count, int sinks, bool json,
                 FILE *out, const struct progress *progress);

#endif
