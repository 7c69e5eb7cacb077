/*
 * plot_write: --plot's file drawn (src/plot/) and the line on stderr that
 * says what was drawn, or why the file could not be written.
 */
#ifndef H2O_PLOT_WRITE_H
#define H2O_PLOT_WRITE_H

#include <stdbool.h>

#include "h2o/drop.h"
#include "h2o/report.h"

/* Draw RUN (a report; with DROP, a model scene's real drop) or else SWEEP
 * (with MODEL, the model's sweep) into PATH, the report's per-step panels
 * smoothed over SMOOTH steps (--smooth; 0: as measured), and unless QUIET say on
 * stderr what it drew. The one file this program writes. Returns 0, or
 * EXIT_WRITE after one line "h2o-tui: PATH: cannot write: REASON". */
int plot_write(const char *path, bool quiet, int smooth, const struct report_run *run,
               const struct drop_result *drop, const struct report_sweep *sweep,
               const struct drop_sweep *model);

#endif
