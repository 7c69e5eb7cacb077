/*
 * drop_print: the real drop (drop.h) written out, as a table or a JSON
 * object; the model's file name escaped as every untrusted text is.
 */
#ifndef H2O_DROP_PRINT_H
#define H2O_DROP_PRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "h2o/drop.h"

/*
 * The real drop as a table (or one JSON object when JSON) against the
 * model's target ppl=RATIO (report.h): per policy the perplexity of the
 * text over every prediction and over those after the prompt, its change
 * against the full cache, how often its next-token choice is the full
 * cache's, the first step where it is not, and whether it meets the
 * target. TITLE names the model. The text's rows are the full cache and
 * then the lowest perplexity after the prompt first (ties in the order of
 * POLICIES); the JSON object (policies in the order of POLICIES, each with
 * "meets_target") ends without a newline, to sit inside another.
 */
int drop_print_target(const struct drop_result *r, const char *title, double ratio, bool json,
                      FILE *out);

/* A row per budget, a column per policy: the perplexity after the prompt
 * (the H2O paper's figure); then the smallest budget that meets the target.
 * One JSON object when JSON. */
int drop_sweep_print(const struct drop_sweep *s, bool json, FILE *out);
/* drop_sweep_print's JSON object without the newline, to sit inside
 * another. */
int drop_sweep_print_object(const struct drop_sweep *s, FILE *out);
#endif
