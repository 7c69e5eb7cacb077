/*
 * report_notes: the lines under the report's table that say which rows
 * are not like the others (see report_notes.h).
 */
#include "report_notes.h"

#include "h2o/policy.h"
#include "h2o/scene.h"

/* A line for each policy that held more than its budget: what it held. */
static void put_unmatched(FILE *out, const struct report_run *run)
{
	const int bound = report_matched_bound(&run->budget);
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (p == POLICY_FULL || !(run->policies >> p & 1u) ||
		    report_matched(run, (enum policy_id)p))
			continue;
		fprintf(out, "not matched: %s %s: holds %.0f, not %d", policies[p]->name,
		        policies[p]->grows ? "keeps every token after the prompt"
		                           : "holds more than its budget",
		        report_held_peak(&run->sum[p]), bound);
		if (policy_matched_form((enum policy_id)p) >= 0)
			fprintf(out, " (matched form: %s)",
			        policies[policy_matched_form((enum policy_id)p)]->name);
		fputc('\n', out);
	}
}

/* On an attention scene that runs every other policy, a line naming the
 * policies left out because they read keys. */
static void put_not_run(FILE *out, const struct report_run *run)
{
	if (run->scene->mode != SCENE_ATTENTION)
		return;
	char names[128] = "";
	size_t len = 0;
	for (int p = 0; p < POLICY_COUNT; p++) {
		const bool keys = policy_reads_keys((enum policy_id)p);
		if (!keys && !(run->policies >> p & 1u))
			return; /* a choice of policies: it says what it runs */
		if (keys && !(run->policies >> p & 1u) && len < sizeof names)
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
			                        len ? ", " : "", policies[p]->name);
	}
	if (len)
		fprintf(out, "not run: %s (they read keys, which an attention scene has none of)\n",
		        names);
}

void report_print_notes(FILE *out, const struct report_run *run)
{
	put_unmatched(out, run);
	put_not_run(out, run);
}
