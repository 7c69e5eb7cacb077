/*
 * report: every policy's figures over a whole scene, as a table or JSON.
 *
 * The report runs the engine once and summarises each policy: its budget,
 * what it holds at the end, its mean and worst output error, its mean
 * attention recall and the first step at which it lost more than 10% of
 * the full cache's attention mass. The budget sweep repeats that for a list
 * of budgets, so a user can read off the budget each policy needs.
 */
#ifndef H2O_REPORT_H
#define H2O_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "h2o/policy.h"

struct progress;
struct scene;

/* The recall below which a policy counts as having lost attention. */
#define REPORT_LOSS_RECALL 0.9
/* The mean recall the sweep looks for. */
#define REPORT_GOOD_RECALL 0.95

/* Write the report of SCENE at budget B (JSON when JSON), telling PROGRESS
 * (NULL: no one) step by step. Returns 0, or -1 when out of memory or OUT
 * fails. */
int report_write(const struct scene *scene, const struct policy_budget *b, bool json, FILE *out,
                 const struct progress *progress);

/* The same for each total budget of BUDGETS (COUNT of them): H2O splits a
 * budget B into heavy B / 2 and recent B - B / 2, StreamingLLM keeps
 * SINKS sinks (-1: its default). */
int report_sweep(const struct scene *scene, const int *budgets, int count, int sinks, bool json,
                 FILE *out, const struct progress *progress);

#endif
