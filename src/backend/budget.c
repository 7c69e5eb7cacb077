/*
 * budget: a run's budgets from the scene and the options (see budget.h).
 */
#include "budget.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Budgets a list may hold beyond the scene's token count. */
#define SWEEP_EXTRA_BUDGETS 63

int budget_resolve(const struct options *o, const struct scene *scene, struct budget_choice *c)
{
	/* The scene's settings, then --policy-opt's over them. */
	struct policy_settings set = {0};
	char msg[256];
	for (int i = 0; i < scene->n_policy_settings; i++)
		(void)policy_settings_set(&set, scene->policy_settings[i], msg, sizeof msg);
	for (int i = 0; i < o->n_policy_opts; i++)
		(void)policy_settings_set(&set, o->policy_opts[i], msg, sizeof msg);
	const struct budget_ask ask = {
	        .heavy = o->heavy,
	        .recent = o->recent,
	        .heavy_ratio = o->heavy_ratio,
	        .recent_ratio = o->recent_ratio,
	        .sinks = o->sinks,
	        .prompt = o->prompt,
	        .interval = o->interval,
	        .settings = set,
	};
	switch (budget_make(scene, &ask, &c->budget)) {
	case BUDGET_OK:
		break;
	case BUDGET_PROMPT_TOO_LONG:
		fprintf(stderr,
		        "h2o-tui: --prompt %d: the scene has only %d tokens\n"
		        "Try 'h2o-tui --help' for more information.\n",
		        o->prompt, scene->n);
		return EXIT_USAGE;
	case BUDGET_RATIO_NO_PROMPT:
		return options_usage_error("%s", "--heavy-ratio and --recent-ratio are fractions "
		                                 "of the prompt, and the scene has none: give "
		                                 "--prompt P");
	case BUDGET_EMPTY:
		return options_usage_error(
		        "%s", "--heavy and --recent: heavy + recent must be at least 1");
	case BUDGET_SINKS:
		return options_usage_error("%s", "--sinks: must be less than heavy + recent");
	}
	const int heavy = c->budget.heavy, recent = c->budget.recent;
	/* The sweep splits each budget as --split says, or as --heavy and
	 * --recent do. */
	c->split = (struct report_split){.heavy = 0.5};
	if (o->split >= 0) {
		snprintf(c->split_source, sizeof c->split_source, "--split %.40s", o->split_arg);
		c->split = (struct report_split){o->split, c->split_source};
	} else if (o->heavy >= 0 || o->recent >= 0 || o->heavy_ratio >= 0 || o->recent_ratio >= 0) {
		snprintf(c->split_source, sizeof c->split_source, "heavy %d : recent %d", heavy,
		         recent);
		c->split = (struct report_split){(double)heavy / (heavy + recent), c->split_source};
	}
	return -1;
}

int budget_sweep_max(int n)
{
	return n + SWEEP_EXTRA_BUDGETS;
}

/* The entries of LIST, comma-separated. */
static long count_entries(const char *list)
{
	long k = 1;
	for (const char *p = list; (p = strchr(p, ',')); p++)
		k++;
	return k;
}

/* The list's entry at P into *B, and the end of its number into *END.
 * False when it is not a budget from 1 to SCENE_MAX_BUDGET or a fraction
 * of the N tokens. */
static bool parse_entry(const char *p, int n, long *b, char **end)
{
	errno = 0;
	const size_t len = strcspn(p, ",");
	*b = -1;
	if (memchr(p, '.', len) != NULL) {
		const double f = strtod(p, end);
		if (!errno && *end != p && f > 0 && f <= 1)
			*b = lround(f * n) > 1 ? lround(f * n) : 1;
	} else {
		*b = strtol(p, end, 10);
	}
	return !errno && *end != p && (**end == '\0' || **end == ',') && *b >= 1 &&
	       *b <= SCENE_MAX_BUDGET;
}

int budget_sweep_list(const struct scene *scene, const char *list, int **budgets, int *count)
{
	const int n = scene->n;
	const int most = budget_sweep_max(n);
	if (*list != '\0' && count_entries(list) > most) {
		fprintf(stderr,
		        "h2o-tui: --budget-sweep: the list is too long: %ld budgets, at most %d "
		        "on a scene of %d tokens (its tokens and %d more)\n"
		        "Try 'h2o-tui --help' for more information.\n",
		        count_entries(list), most, n, SWEEP_EXTRA_BUDGETS);
		return EXIT_USAGE;
	}
	int *out = malloc(((size_t)most + 1) * sizeof *out);
	if (!out) {
		fprintf(stderr, "h2o-tui: out of memory while computing the budget sweep\n");
		return EXIT_MEMORY;
	}
	int k = 0;
	if (*list == '\0') {
		for (int b = 1; b <= n; b = n <= 64 ? b + 1 : b * 2)
			out[k++] = b;
		if (out[k - 1] != n)
			out[k++] = n;
	}
	for (const char *p = list; *p; k++) {
		char *end;
		long b;
		if (!parse_entry(p, n, &b, &end)) {
			free(out);
			char msg[160];
			snprintf(msg, sizeof msg,
			         "--budget-sweep: expected budgets from 1 to %d, or fractions of "
			         "the "
			         "tokens (0 to 1, e.g. 0.1), comma-separated, got '%%s'",
			         SCENE_MAX_BUDGET);
			return options_usage_error(msg, list);
		}
		out[k] = (int)b;
		p = *end ? end + 1 : end;
	}
	*budgets = out;
	*count = k;
	return -1;
}
