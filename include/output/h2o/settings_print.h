/*
 * settings_print: the policy settings a table used (--policy-opt,
 * h2o/policy_settings.h), written beside it. Only the settings that
 * differ from the defaults are written, and nothing at all when none
 * does, so a run with the defaults reads as it always has.
 */
#ifndef H2O_SETTINGS_PRINT_H
#define H2O_SETTINGS_PRINT_H

#include <stdio.h>

#include "h2o/policy.h"

/* "settings: snapkv.window=8 snapkv.pool=max (every other setting
 * kvpress' default)\n", a line of text. */
void settings_print_text(FILE *out, const struct policy_settings *s);

/* ", \"settings\": {\"snapkv.window\": 8, \"snapkv.pool\": \"max\"}", a
 * key of the JSON object being written. */
void settings_print_json(FILE *out, const struct policy_settings *s);

/* "# settings: snapkv.window=8 snapkv.pool=max\n", a comment line before
 * a CSV's header (pandas: comment='#'). */
void settings_print_csv(FILE *out, const struct policy_settings *s);

#endif
