/*
 * progress: how far a long mode (--report, --trace, --budget-sweep) has
 * come, as one line on stderr redrawn in place, with the time left at the
 * rate so far. Shown only when stderr is a terminal and --quiet is not
 * given.
 */
#ifndef H2O_PROGRESS_H
#define H2O_PROGRESS_H

#include <stdbool.h>

#include "h2o/cost.h"

struct meter {
	const char *what;
	double start, last;
	bool shown;
	struct progress progress; /* what the measuring stages call */
};

/* The progress of WHAT, kept in *M: &M->progress, or NULL (none) when
 * QUIET or stderr is not a terminal. */
const struct progress *progress_start(struct meter *m, bool quiet, const char *what);

/* Clear the progress line of *M, if one was shown. */
void progress_done(const struct meter *m);

/* One part of a mode's work told to TO as its own share: the part's DONE
 * of TOTAL becomes FROM + SHARE x DONE / TOTAL of the whole (the engines'
 * figures, then the model's runs, one line from 0 to 100 %). */
struct progress_phase {
	struct progress progress;
	const struct progress *to;
	double from, share;
};
/* &PH->progress for that part, or NULL when TO is NULL. */
const struct progress *progress_phase(struct progress_phase *ph, const struct progress *to,
                                      double from, double share);

#endif
