/*
 * steps: --trace-steps' LIST, the steps a trace writes.
 *
 * LIST is comma-separated: a step N, or a range A-B (A at most B, both
 * included), steps counted from 1 as the trace's "step" key counts them.
 * The form is checked when the command line is read (with the largest
 * number of steps a scene may have), the steps against the scene once it
 * has loaded.
 */
#ifndef H2O_STEPS_H
#define H2O_STEPS_H

#include <stdbool.h>

/* Read LIST against a scene of N steps: WANT[t] set for each step t it
 * names (WANT has N + 1 entries, WANT[0] unused), or only LIST checked
 * when WANT is NULL. Returns -1, or EXIT_USAGE after the message: a LIST
 * not of that form, or a step past N. */
int steps_parse(const char *list, int n, bool *want);

#endif
