/*
 * report_notes: the lines under the report's table that say which rows
 * are not like the others (see report_notes.h).
 */
#include "report_notes.h"

#include "h2o/engine.h"
#include "h2o/heads.h"
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

/* On a scene that runs every other policy, a line naming the policies left
 * out because the scene cannot run them (engine_policy_refused): on an
 * attention scene those that read keys, on a model scene those that read
 * the queries before RoPE. */
static void put_not_run(FILE *out, const struct report_run *run)
{
	char names[128] = "";
	size_t len = 0;
	int count = 0;
	for (int p = 0; p < POLICY_COUNT; p++) {
		const bool refused = engine_policy_refused(run->scene, (enum policy_id)p) != NULL;
		if (!refused && !(run->policies >> p & 1u))
			return; /* a choice of policies: it says what it runs */
		if (refused && !(run->policies >> p & 1u) && len < sizeof names) {
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%s",
			                        len ? ", " : "", policies[p]->name);
			count++;
		}
	}
	if (!len)
		return;
	if (run->scene->mode == SCENE_ATTENTION)
		fprintf(out, "not run: %s (%s keys, which an attention scene has none of)\n", names,
		        count > 1 ? "they read" : "it reads");
	else
		fprintf(out,
		        "not run: %s (%s the queries before RoPE, which a model scene does not "
		        "keep)\n",
		        names, count > 1 ? "they read" : "it reads");
}

/* A line for a policy with a cache per query head under grouped heads
 * (pyramidkv.granularity=query_head): its memory per kv head is the copies
 * of that kv head's query heads, as KVCache-Factory's repeat_kv holds. */
static void put_copies(FILE *out, const struct report_run *run)
{
	const int group = heads_group(run->scene);
	for (int p = 0; p < POLICY_COUNT; p++)
		if ((run->policies >> p & 1u) && group > 1 &&
		    heads_cache_group(run->scene, &run->budget.set, (enum policy_id)p) == 1)
			fprintf(out,
			        "copies: %s keeps a cache per query head (granularity=query_head): "
			        "its memory per kv head is %d copies, one per query head of the "
			        "group\n",
			        policies[p]->name, group);
}

void report_print_notes(FILE *out, const struct report_run *run)
{
	put_copies(out, run);
	put_unmatched(out, run);
	put_not_run(out, run);
}
