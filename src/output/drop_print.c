/*
 * drop_print: the real drop's tables and JSON objects (see drop_print.h);
 * drop.c measures them.
 */
#include "h2o/drop_print.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/drop.h"
#include "h2o/report.h"
#include "h2o/text.h"
#include "json_out.h"

/* X, or null when not KNOWN. */
static void put_number_or_null(FILE *out, bool known, double x)
{
	if (known)
		json_exact(out, x);
	else
		fputs("null", out);
}

static void put_json_ppl_target(FILE *out, double ratio)
{
	fputs("\"target\": {\"figure\": \"ppl_decode\", \"at_most_times_full\": ", out);
	json_shortest(out, ratio);
	fputc('}', out);
}

/* The policies R ran into ORDER: the full cache, then the lowest KEY
 * first, a tie in the order of POLICIES. Returns how many. */
static int order_by(const struct drop_result *r, const double key[POLICY_COUNT],
                    int order[POLICY_COUNT])
{
	int count = 0;
	if (r->p[POLICY_FULL].ran)
		order[count++] = POLICY_FULL;
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (p == POLICY_FULL || !r->p[p].ran)
			continue;
		/* Insertion after every row that is no worse: a tie keeps
		 * the table's order. */
		int i = count;
		const int pinned = r->p[POLICY_FULL].ran ? 1 : 0;
		while (i > pinned && key[order[i - 1]] > key[p]) {
			order[i] = order[i - 1];
			i--;
		}
		order[i] = p;
		count++;
	}
	return count;
}

int drop_print_target(const struct drop_result *r, const char *title, double ratio, bool json,
                      FILE *out)
{
	const int last = r->given - 1, from = r->prompt > 0 ? r->prompt - 1 : 0;
	const double full_after = drop_perplexity(r, POLICY_FULL, from, last);
	/* An interval other than 1 is said; at 1 the text is as it always was. */
	const int every = policy_interval(&r->budget);
	char when[48] = "";
	if (every > 1)
		snprintf(when, sizeof when, ", compressed every %d steps", every);
	double after[POLICY_COUNT];
	for (int p = 0; p < POLICY_COUNT; p++)
		after[p] = drop_perplexity(r, (enum policy_id)p, from, last);
	int order[POLICY_COUNT];
	int count;
	char target[48];
	report_ppl_text(ratio, target, sizeof target);
	if (json) {
		fprintf(out, "{\"tokens\": %d, \"prompt\": %d, ", r->n, r->prompt);
		if (every > 1)
			fprintf(out, "\"interval\": %d, ", every);
		put_json_ppl_target(out, ratio);
		fputs(", \"policies\": [", out);
		count = 0;
		for (int p = 0; p < POLICY_COUNT; p++)
			if (r->p[p].ran)
				order[count++] = p;
	} else {
		/* The title is a file's name: untrusted text, escaped. */
		fputs("\nThe model itself, every layer's cache evicted by each policy (", out);
		text_escape(title, strlen(title), SIZE_MAX, TEXT_ESCAPE_MESSAGE, json_file_sink,
		            out);
		fprintf(out,
		        "%s):\n"
		        "perplexity of the text's next tokens, over all %d and over the %d after "
		        "the prompt; how many nats less likely each token was than under the full "
		        "cache (mean, max); how often its likeliest next token was another; "
		        "whether it meets the model's target, %s (ppl decode; --target ppl=R)\n"
		        "rows: full, then the lowest ppl decode first\n\n"
		        "%-10s %6s %9s %11s %9s %9s %9s %10s %13s %7s\n",
		        when, last > 0 ? last : 0, last - from > 0 ? last - from : 0, target,
		        "policy", "budget", "ppl all", "ppl decode", "vs full", "mean drop",
		        "max drop", "top-1 diff", "first change", "target");
		count = order_by(r, after, order);
	}
	for (int k = 0; k < count; k++) {
		const int p = order[k];
		const double all = drop_perplexity(r, (enum policy_id)p, 0, last);
		const double agree = drop_agreement(r, (enum policy_id)p, 0, r->n);
		const int change = drop_first_change(r, (enum policy_id)p);
		const int capacity = policy_capacity((enum policy_id)p, &r->budget);
		/* No text after the prompt (a prompt the model writes after):
		 * nothing to judge. */
		const bool judged = last > from;
		const bool meets = report_ppl_meets(after[p], full_after, ratio);
		double mean_drop = 0.0, max_drop = 0.0;
		for (int t = 0; t < last; t++) {
			const double d = r->p[POLICY_FULL].logprob[t] - r->p[p].logprob[t];
			mean_drop += d;
			max_drop = d > max_drop ? d : max_drop;
		}
		mean_drop = last > 0 ? mean_drop / last : 0.0;
		if (json) {
			fprintf(out, "%s{\"name\": \"%s\", \"ppl\": ", k ? ", " : "",
			        policies[p]->name);
			json_exact(out, all);
			fputs(", \"ppl_decode\": ", out);
			put_number_or_null(out, judged, after[p]);
			fputs(", \"mean_logprob_drop\": ", out);
			json_exact(out, mean_drop);
			fputs(", \"max_logprob_drop\": ", out);
			json_exact(out, max_drop);
			fputs(", \"top1_differs\": ", out);
			json_exact(out, 1.0 - agree);
			fprintf(out, ", \"meets_target\": %s, \"first_change_step\": ",
			        !judged ? "null"
			        : meets ? "true"
			                : "false");
			if (change >= 0)
				fprintf(out, "%d}", change + 1);
			else
				fputs("null}", out);
			continue;
		}
		char budget[16], vs[16], first[24], decode[16] = "-";
		if (judged)
			snprintf(decode, sizeof decode, "%.4f", after[p]);
		if (capacity < 0)
			snprintf(budget, sizeof budget, "all");
		else
			snprintf(budget, sizeof budget, "%d", capacity);
		if (p == POLICY_FULL || !judged)
			snprintf(vs, sizeof vs, "-");
		else
			snprintf(vs, sizeof vs, "%+.1f%%", 100.0 * (after[p] / full_after - 1.0));
		if (change >= 0)
			snprintf(first, sizeof first, "step %d", change + 1);
		else
			snprintf(first, sizeof first, "never");
		fprintf(out, "%-10s %6s %9.4f %11s %9s %9.4f %9.4f %9.1f%% %13s %7s\n",
		        policies[p]->name, budget, all, decode, vs, mean_drop, max_drop,
		        100.0 * (1.0 - agree), first,
		        !judged ? "-"
		        : meets ? "met"
		                : "missed");
	}
	if (json)
		fputs("]}", out);
	return ferror(out) ? -1 : 0;
}

int drop_sweep_print_object(const struct drop_sweep *s, FILE *out)
{
	if (s->count == 0) {
		fputs("null", out);
		return ferror(out) ? -1 : 0;
	}
	const struct drop_result *r0 = &s->runs[0];
	const int n = r0->given, from = r0->prompt > 0 ? r0->prompt - 1 : 0;
	const bool judged = drop_judged(r0);
	fputs("{\"ppl_full\": ", out);
	put_number_or_null(out, judged, drop_sweep_full(s));
	fputs(", \"target_ratio\": ", out);
	json_shortest(out, s->ratio);
	fputs(", ", out);
	put_json_ppl_target(out, s->ratio);
	fputs(", \"budgets\": [", out);
	for (int i = 0; i < s->count; i++) {
		fprintf(out, "%s{\"total\": %d", i ? ", " : "", s->budgets[i]);
		for (int p = 1; p < POLICY_COUNT; p++)
			if (r0->p[p].ran) {
				fprintf(out, ", \"%s\": ", policies[p]->name);
				put_number_or_null(out, judged,
				                   drop_perplexity(&s->runs[i], (enum policy_id)p,
				                                   from, n - 1));
			}
		fputc('}', out);
	}
	fputs("], \"smallest\": {", out);
	for (int p = 1, k = 0; p < POLICY_COUNT; p++) {
		if (!r0->p[p].ran)
			continue;
		fprintf(out, "%s\"%s\": ", k++ ? ", " : "", policies[p]->name);
		if (s->good[p])
			fprintf(out, "%d", s->good[p]);
		else
			fputs("null", out);
	}
	fputs("}}", out);
	return ferror(out) ? -1 : 0;
}

int drop_sweep_print(const struct drop_sweep *s, bool json, FILE *out)
{
	if (s->count == 0)
		return 0;
	const struct drop_result *r0 = &s->runs[0];
	const int n = r0->given, from = r0->prompt > 0 ? r0->prompt - 1 : 0;
	const double full = drop_sweep_full(s);
	if (json) {
		if (drop_sweep_print_object(s, out) < 0)
			return -1;
		fputc('\n', out);
		return ferror(out) ? -1 : 0;
	}
	char target[48];
	report_ppl_text(s->ratio, target, sizeof target);
	const bool judged = drop_judged(r0);
	char full_text[16] = "-";
	if (judged)
		snprintf(full_text, sizeof full_text, "%.4f", full);
	fprintf(out,
	        "\nThe model itself at each budget (every layer's cache evicted): perplexity of "
	        "the %d tokens after the prompt (ppl decode); the full cache's is %s\n\n%-8s",
	        judged ? n - 1 - from : 0, full_text, "budget");
	for (int p = 1; p < POLICY_COUNT; p++)
		if (r0->p[p].ran)
			fprintf(out, " %10s", policies[p]->name);
	fputc('\n', out);
	for (int i = 0; i < s->count; i++) {
		fprintf(out, "%-8d", s->budgets[i]);
		for (int p = 1; p < POLICY_COUNT; p++)
			if (r0->p[p].ran && judged)
				fprintf(out, " %10.4f",
				        drop_perplexity(&s->runs[i], (enum policy_id)p, from,
				                        n - 1));
			else if (r0->p[p].ran)
				fprintf(out, " %10s", "-");
		fputc('\n', out);
	}
	fprintf(out, "\nsmallest budget meeting the model's target, %s (ppl decode):", target);
	if (!judged) {
		fputs(" none to judge, the text has no tokens after the prompt\n", out);
		return ferror(out) ? -1 : 0;
	}
	for (int p = 1, k = 0; p < POLICY_COUNT; p++) {
		if (!r0->p[p].ran)
			continue;
		fputs(k++ ? ", " : " ", out);
		if (s->good[p])
			fprintf(out, "%s %d", policies[p]->name, s->good[p]);
		else
			fprintf(out, "%s none", policies[p]->name);
	}
	fputc('\n', out);
	return ferror(out) ? -1 : 0;
}
