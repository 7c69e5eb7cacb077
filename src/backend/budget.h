/*
 * budget: the budgets a run uses, from the scene and the command line:
 * what the options ask of budget_make (h2o/budget.h, which makes and
 * checks the choice: heavy and recent given, as ratios of the prompt, or
 * the scene's; the sinks; the prompt and interval the options override),
 * its refusals as usage errors, the split of a swept budget, and
 * --budget-sweep's list of total budgets.
 */
#ifndef H2O_BUDGET_H
#define H2O_BUDGET_H

#include "h2o/budget.h"
#include "h2o/report.h"
#include "h2o/scene.h"
#include "options.h"

/* What the options make of SCENE's budgets. */
struct budget_choice {
	struct budget budget;      /* the user's choice */
	struct report_split split; /* the sweep's split of each budget */
	char split_source[64];     /* what split.source points to */
};

/* Resolve O's budgets against SCENE into *C (C->split.source points into
 * C, which must not move after). SCENE is left as it loaded: --prompt and
 * --interval are C->budget's. Returns -1, or EXIT_USAGE after the
 * message. */
int budget_resolve(const struct options *o, const struct scene *scene, struct budget_choice *c);

/* The most budgets --budget-sweep's LIST may hold on a scene of N tokens. */
int budget_sweep_max(int n);

/* --budget-sweep's LIST ("" for 1..n, or powers of two and n past 64
 * tokens) into *BUDGETS (COUNT of them, to free). An entry with a '.' is
 * a fraction of the token count (0 < f <= 1), rounded, at least 1.
 * Returns -1, or the exit status of a bad list (after its message). */
int budget_sweep_list(const struct scene *scene, const char *list, int **budgets, int *count);

#endif
