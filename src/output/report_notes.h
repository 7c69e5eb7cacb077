/*
 * report_notes: the lines under the report's text table (private to the
 * output stage): each policy that held more than its budget and what it
 * held ("not matched: ..."), a policy that keeps a copy per query head
 * ("copies: ..."), and on an attention scene the policies left out
 * because they read keys ("not run: ...").
 */
#ifndef H2O_REPORT_NOTES_H
#define H2O_REPORT_NOTES_H

#include <stdio.h>

#include "h2o/report.h"

void report_print_notes(FILE *out, const struct report_run *run);

#endif
