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

/* The policies R ran into ORDER: the full cache, then the matched ones
 * (drop_matched) the lowest KEY first, then those that held more, the
 * lowest KEY first too; a tie in the order of POLICIES. Returns how many. */
static int order_by(const struct drop_result *r, const double key[POLICY_COUNT],
                    int order[POLICY_COUNT])
{
	int count = 0, kind[POLICY_COUNT];
	if (r->p[POLICY_FULL].ran)
		order[count++] = POLICY_FULL;
	for (int p = 0; p < POLICY_COUNT; p++)
		kind[p] = drop_matched(r, (enum policy_id)p) ? 0 : 1;
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (p == POLICY_FULL || !r->p[p].ran)
			continue;
		/* Insertion after every row that is no worse: a tie keeps
		 * the table's order. */
		int i = count;
		const int pinned = r->p[POLICY_FULL].ran ? 1 : 0;
		while (i > pinned &&
		       (kind[order[i - 1]] > kind[p] ||
		        (kind[order[i - 1]] == kind[p] && key[order[i - 1]] > key[p]))) {
			order[i] = order[i - 1];
			i--;
		}
		order[i] = p;
		count++;
	}
	return count;
}

/* The budget column: "all" for the full cache, the bound of a policy that
 * evicts while decoding, the budget B the prompt was cut to for one that
 * keeps every new token (its held columns say what it held). */
static void budget_text(const struct drop_result *r, enum policy_id p, char *buf, size_t size)
{
	const int capacity = policy_capacity(p, &r->budget);
	if (p == POLICY_FULL)
		snprintf(buf, size, "all");
	else if (capacity >= 0 && !policies[p]->grows)
		snprintf(buf, size, "%d", capacity);
	else
		snprintf(buf, size, "%d", r->budget.heavy + r->budget.recent);
}

static const char *matched_text(const struct drop_result *r, enum policy_id p)
{
	return p == POLICY_FULL ? "ref" : drop_matched(r, p) ? "yes" : "NO";
}

/* "policy budget peak/kv mean/kv matched" and a row's start. */
static void put_held_head(FILE *out)
{
	fprintf(out, "%-13s %6s %8s %8s %7s", "policy", "budget", "peak/kv", "mean/kv", "matched");
}

static void put_held_row(FILE *out, const struct drop_result *r, enum policy_id p)
{
	char budget[16];
	budget_text(r, p, budget, sizeof budget);
	fprintf(out, "%-13s %6s %8.0f %8.1f %7s", policies[p]->name, budget, r->p[p].held_peak,
	        r->p[p].held_mean, matched_text(r, p));
}

/* A line for each policy whose run held more than its budget. */
static void put_unmatched(FILE *out, const struct drop_result *r)
{
	const int bound = report_matched_bound(&r->budget);
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (p == POLICY_FULL || !r->p[p].ran || drop_matched(r, (enum policy_id)p))
			continue;
		fprintf(out, "not matched: %s %s: holds %.0f, not %d", policies[p]->name,
		        policies[p]->grows ? "keeps every token after the prompt"
		                           : "holds more than its budget",
		        r->p[p].held_peak, bound);
		if (policy_matched_form((enum policy_id)p) >= 0)
			fprintf(out, " (matched form: %s)",
			        policies[policy_matched_form((enum policy_id)p)]->name);
		fputc('\n', out);
	}
}

static void put_json_held(FILE *out, const struct drop_result *r, enum policy_id p)
{
	fputs(", \"held\": {\"peak_per_kv_head\": ", out);
	json_exact(out, r->p[p].held_peak);
	fputs(", \"mean_per_kv_head\": ", out);
	json_exact(out, r->p[p].held_mean);
	fprintf(out, "}, \"matched\": %s",
	        p == POLICY_FULL     ? "null"
	        : drop_matched(r, p) ? "true"
	                             : "false");
	if (p != POLICY_FULL && !drop_matched(r, p) && policy_matched_form(p) >= 0)
		fprintf(out, ", \"matched_form\": \"%s\"", policies[policy_matched_form(p)]->name);
}

/* KL's spread as JSON: {"mean", "median", "p99", "max"}, or null when
 * there is none. */
static void put_json_kl(FILE *out, bool has, const struct drop_kl *kl)
{
	if (!has) {
		fputs("null", out);
		return;
	}
	fputs("{\"mean\": ", out);
	json_exact(out, kl->mean);
	fputs(", \"median\": ", out);
	json_exact(out, kl->median);
	fputs(", \"p99\": ", out);
	json_exact(out, kl->p99);
	fputs(", \"max\": ", out);
	json_exact(out, kl->max);
	fputc('}', out);
}

/* Generating: each policy's own text judged by the model with a full
 * cache (drop_text_perplexity), where it parts from the full cache's
 * text and what they share, and at each step that wrote it how the
 * policy's next-token distribution differs from the full cache's model's
 * on the same text (drop_text_kl, drop_text_agreement); the model's
 * target judges teacher-forced text only. */
static int put_generated(const struct drop_result *r, const char *title, double ratio, bool json,
                         FILE *out)
{
	const int made = r->n - r->given, last = r->given - 1;
	double text[POLICY_COUNT];
	for (int p = 0; p < POLICY_COUNT; p++)
		text[p] = drop_text_perplexity(r, (enum policy_id)p);
	const double full = text[POLICY_FULL];
	int order[POLICY_COUNT];
	int count = 0;
	if (json) {
		fprintf(out, "{\"tokens\": %d, \"prompt\": %d, \"generated\": %d, ", r->n,
		        r->prompt, made);
		if (policy_interval(&r->budget) > 1)
			fprintf(out, "\"interval\": %d, ", policy_interval(&r->budget));
		put_json_ppl_target(out, ratio);
		fputs(", \"policies\": [", out);
		for (int p = 0; p < POLICY_COUNT; p++)
			if (r->p[p].ran)
				order[count++] = p;
	} else {
		fputs("\nThe model writing, every layer's cache evicted by each policy (", out);
		text_escape(title, strlen(title), SIZE_MAX, TEXT_ESCAPE_MESSAGE, json_file_sink,
		            out);
		if (policy_interval(&r->budget) > 1)
			fprintf(out, ", compressed every %d steps", policy_interval(&r->budget));
		fprintf(out,
		        "):\n"
		        "each policy's own %d generated tokens read back by the model with a full "
		        "cache: their perplexity (text ppl) and its change against the full "
		        "cache's own text; the step that first reads a token other than the full "
		        "cache's text (parts at) and the generated tokens the two share before "
		        "it; at each step that wrote its text, how often its likeliest next token "
		        "was another than the full cache's model's reading the same text (top-1 "
		        "diff) and its KL divergence from that model's next-token distribution, "
		        "in nats (KL mean, KL p99); the perplexity of the %d predictions inside "
		        "the prompt (ppl prompt); memory held per kv cache (peak, mean) from the "
		        "prompt's end\n"
		        "rows: full, then the policies that held their budget (matched), the "
		        "lowest text ppl first, then those that held more\n\n",
		        made, last > 0 ? last : 0);
		put_held_head(out);
		fprintf(out, " %10s %9s %9s %9s %7s %10s %9s %9s\n", "ppl prompt", "text ppl",
		        "vs full", "parts at", "common", "top-1 diff", "KL mean", "KL p99");
		count = order_by(r, text, order);
	}
	for (int k = 0; k < count; k++) {
		const enum policy_id p = (enum policy_id)order[k];
		const double prompt = drop_perplexity(r, p, 0, last);
		const int parts = drop_divergence(r, p), common = drop_common_prefix(r, p);
		struct drop_kl kl;
		const bool has_kl = drop_text_kl(r, p, &kl) == 0;
		const double agree = drop_text_agreement(r, p);
		if (json) {
			fprintf(out, "%s{\"name\": \"%s\"", k ? ", " : "", policies[p]->name);
			put_json_held(out, r, p);
			fputs(", \"ppl_prompt\": ", out);
			json_exact(out, prompt);
			/* No text after the prompt to judge against: no verdict. */
			fputs(", \"ppl_decode\": null, \"meets_target\": null", out);
			fputs(", \"generated\": {\"ppl_by_full\": ", out);
			put_number_or_null(out, made > 0, text[p]);
			fputs(", \"first_divergence_step\": ", out);
			if (parts >= 0)
				fprintf(out, "%d", parts + 1);
			else
				fputs("null", out);
			fprintf(out, ", \"common_prefix\": %d, \"top1_differs\": ", common);
			json_exact(out, 1.0 - agree);
			fputs(", \"kl\": ", out);
			put_json_kl(out, has_kl, &kl);
			fputs("}}", out);
			continue;
		}
		char vs[16] = "-", at[24] = "never";
		if (p != POLICY_FULL && made > 0)
			snprintf(vs, sizeof vs, "%+.1f%%", 100.0 * (text[p] / full - 1.0));
		if (parts >= 0)
			snprintf(at, sizeof at, "step %d", parts + 1);
		put_held_row(out, r, p);
		char klm[16] = "-", klp[16] = "-";
		if (has_kl) {
			snprintf(klm, sizeof klm, "%.4f", kl.mean);
			snprintf(klp, sizeof klp, "%.4f", kl.p99);
		}
		fprintf(out, " %10.4f %9.4f %9s %9s %7d %9.1f%% %9s %9s\n", prompt, text[p], vs, at,
		        common, 100.0 * (1.0 - agree), klm, klp);
	}
	if (json)
		fputs("]}", out);
	else
		put_unmatched(out, r);
	return ferror(out) ? -1 : 0;
}

int drop_print_target(const struct drop_result *r, const char *title, double ratio, bool json,
                      FILE *out)
{
	if (r->generate && r->p[POLICY_FULL].ran && r->p[POLICY_FULL].full_logprob)
		return put_generated(r, title, ratio, json, out);
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
		        "its KL divergence from the full cache's next-token distribution after "
		        "the prompt, in nats (mean, 99th percentile); "
		        "whether it meets the model's target, %s (ppl decode; --target ppl=R); "
		        "memory held per kv cache (peak, mean) from the prompt's end\n"
		        "rows: full, then the policies that held their budget (matched), the "
		        "lowest ppl decode first, then those that held more\n\n",
		        when, last > 0 ? last : 0, last - from > 0 ? last - from : 0, target);
		put_held_head(out);
		fprintf(out, " %9s %11s %9s %9s %9s %10s %9s %9s %13s %7s\n", "ppl all",
		        "ppl decode", "vs full", "mean drop", "max drop", "top-1 diff", "KL mean",
		        "KL p99", "first change", "target");
		count = order_by(r, after, order);
	}
	for (int k = 0; k < count; k++) {
		const int p = order[k];
		const double all = drop_perplexity(r, (enum policy_id)p, 0, last);
		const double agree = drop_agreement(r, (enum policy_id)p, 0, r->n);
		const int change = drop_first_change(r, (enum policy_id)p);
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
		struct drop_kl kl;
		const bool has_kl =
		        judged && drop_kl_stats(r, (enum policy_id)p, from, last, &kl) == 0;
		if (json) {
			fprintf(out, "%s{\"name\": \"%s\"", k ? ", " : "", policies[p]->name);
			put_json_held(out, r, (enum policy_id)p);
			fputs(", \"ppl\": ", out);
			json_exact(out, all);
			fputs(", \"ppl_decode\": ", out);
			put_number_or_null(out, judged, after[p]);
			fputs(", \"mean_logprob_drop\": ", out);
			json_exact(out, mean_drop);
			fputs(", \"max_logprob_drop\": ", out);
			json_exact(out, max_drop);
			fputs(", \"top1_differs\": ", out);
			json_exact(out, 1.0 - agree);
			fputs(", \"kl_decode\": ", out);
			put_json_kl(out, has_kl, &kl);
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
		char vs[16], first[24], decode[16] = "-", klm[16] = "-", klp[16] = "-";
		if (has_kl) {
			snprintf(klm, sizeof klm, "%.4f", kl.mean);
			snprintf(klp, sizeof klp, "%.4f", kl.p99);
		}
		if (judged)
			snprintf(decode, sizeof decode, "%.4f", after[p]);
		if (p == POLICY_FULL || !judged)
			snprintf(vs, sizeof vs, "-");
		else
			snprintf(vs, sizeof vs, "%+.1f%%", 100.0 * (after[p] / full_after - 1.0));
		if (change >= 0)
			snprintf(first, sizeof first, "step %d", change + 1);
		else
			snprintf(first, sizeof first, "never");
		put_held_row(out, r, (enum policy_id)p);
		fprintf(out, " %9.4f %11s %9s %9.4f %9.4f %9.1f%% %9s %9s %13s %7s\n", all, decode,
		        vs, mean_drop, max_drop, 100.0 * (1.0 - agree), klm, klp, first,
		        !judged ? "-"
		        : meets ? "met"
		                : "missed");
	}
	if (json)
		fputs("]}", out);
	else
		put_unmatched(out, r);
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
		/* What each run held, and whether that was its budget. */
		fputs(", \"peak_per_kv_head\": {", out);
		for (int p = 1, k = 0; p < POLICY_COUNT; p++)
			if (r0->p[p].ran) {
				fprintf(out, "%s\"%s\": ", k++ ? ", " : "", policies[p]->name);
				json_exact(out, s->runs[i].p[p].held_peak);
			}
		fputs("}, \"matched\": {", out);
		for (int p = 1, k = 0; p < POLICY_COUNT; p++)
			if (r0->p[p].ran)
				fprintf(out, "%s\"%s\": %s", k++ ? ", " : "", policies[p]->name,
				        drop_matched(&s->runs[i], (enum policy_id)p) ? "true"
				                                                     : "false");
		fputs("}}", out);
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
			fprintf(out, " %13s", policies[p]->name);
	fputc('\n', out);
	for (int i = 0; i < s->count; i++) {
		fprintf(out, "%-8d", s->budgets[i]);
		for (int p = 1; p < POLICY_COUNT; p++) {
			/* A run that held more than the budget is marked. */
			const char *mark = drop_matched(&s->runs[i], (enum policy_id)p) ? " " : "*";
			if (r0->p[p].ran && judged)
				fprintf(out, " %12.4f%s",
				        drop_perplexity(&s->runs[i], (enum policy_id)p, from,
				                        n - 1),
				        mark);
			else if (r0->p[p].ran)
				fprintf(out, " %12s%s", "-", mark);
		}
		fputc('\n', out);
	}
	/* What the marked runs held, policy by policy in budget order. */
	bool any = false;
	for (int p = 1; p < POLICY_COUNT; p++) {
		bool first = true;
		for (int i = 0; r0->p[p].ran && i < s->count; i++) {
			if (drop_matched(&s->runs[i], (enum policy_id)p))
				continue;
			if (!any)
				fputs("* held more than the budget, peak tokens per kv cache:",
				      out);
			if (first)
				fprintf(out, "%s%s", any ? "; " : " ", policies[p]->name);
			fprintf(out, "%s%.0f", first ? " " : ", ", s->runs[i].p[p].held_peak);
			any = true;
			first = false;
		}
	}
	if (any)
		fputc('\n', out);
	fprintf(out,
	        "\nsmallest budget meeting the model's target, %s (ppl decode), matched runs only:",
	        target);
	if (!judged) {
		fputs(" none to judge, the text has no tokens after the prompt\n", out);
		return ferror(out) ? -1 : 0;
	}
	bool ever[POLICY_COUNT] = {false};
	int never = 0;
	for (int p = 1, k = 0; p < POLICY_COUNT; p++) {
		if (!r0->p[p].ran)
			continue;
		for (int i = 0; i < s->count; i++)
			ever[p] = ever[p] || drop_matched(&s->runs[i], (enum policy_id)p);
		if (!ever[p]) {
			never++;
			continue;
		}
		fputs(k++ ? ", " : " ", out);
		if (s->good[p])
			fprintf(out, "%s %d", policies[p]->name, s->good[p]);
		else
			fprintf(out, "%s none", policies[p]->name);
	}
	fputc('\n', out);
	if (never) {
		fputs("held more than the budget at every budget (not matched):", out);
		for (int p = 1, k = 0; p < POLICY_COUNT; p++)
			if (r0->p[p].ran && !ever[p]) {
				fprintf(out, "%s%s", k++ ? ", " : " ", policies[p]->name);
				if (policy_matched_form((enum policy_id)p) >= 0)
					fprintf(out, " (matched form: %s)",
					        policies[policy_matched_form((enum policy_id)p)]
					                ->name);
			}
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}
