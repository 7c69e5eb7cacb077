/*
 * trace: the JSON Lines record of every step (design §5).
 *
 * One object per step, written as the engine produces it. Numbers are
 * printed with the fewest digits that read back to the same double, so a
 * trace round-trips the engine exactly. Token text is escaped so the output
 * is valid JSON whatever bytes the scene holds.
 */
#ifndef H2O_TRACE_H
#define H2O_TRACE_H

#include <stdbool.h>
#include <stdio.h>

#include "h2o/budget.h"
#include "h2o/policy.h"

struct drop_result;
struct progress;
struct scene;

/* Write the trace of SCENE with budget B to OUT: design §5's keys, and beside
 * "h2o" and "full" one key per other policy of policy.h. Returns 0, or -1
 * when out of memory or OUT fails. */
int trace_write(const struct scene *scene, const struct budget *b, FILE *out,
                const struct progress *progress);

/* The same for a model scene with its real drop DROP (drop.h, at budget B),
 * or NULL: every step also carries a "model" object, design §5; and only
 * the keys of the policies of the mask SHOWN (ENGINE_POLICY; "h2o" and
 * "full", design §5's, always), only what they need computed
 * (report_policies_run); and only the steps t with STEPS[t] (STEPS has
 * scene->n + 1 entries, from step 1), or every step when STEPS is NULL.
 * The engines run every step up to the last one written (each step's
 * caches come from the steps before it), none past it. */
int trace_write_drop(const struct scene *scene, const struct budget *b,
                     const struct drop_result *drop, unsigned shown, const bool *steps, FILE *out,
                     const struct progress *progress);

#endif
