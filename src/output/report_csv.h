/*
 * report_csv: the report's and the sweep's CSV (private to the output
 * stage; report_print.c picks it for REPORT_CSV).
 */
#ifndef H2O_REPORT_CSV_H
#define H2O_REPORT_CSV_H

#include <stdbool.h>
#include <stdio.h>

struct drop_result;
struct drop_sweep;
struct report_run;
struct report_sweep;

/* A row per step and policy, then per head with PER_HEAD; with the model's
 * run D (NULL: none), its columns too. 0, or -1 on a write error or when
 * RUN kept no steps. */
int report_csv_run(const struct report_run *run, bool per_head, const struct drop_result *d,
                   FILE *out);
/* A row per budget and policy, then per head with PER_HEAD; with the
 * model's sweep DS (NULL: none), its columns too. */
int report_csv_sweep(const struct report_sweep *sw, bool per_head, const struct drop_sweep *ds,
                     FILE *out);

#endif
