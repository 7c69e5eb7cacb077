/* report_print: the report and the sweep written as text, JSON or CSV (see
 * report_print.h); report.c measures them; settings_print.c the settings. */
#include "h2o/report_print.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/cost.h"
#include "h2o/drop.h"
#include "h2o/drop_print.h"
#include "h2o/engine.h"
#include "h2o/heads.h"
#include "h2o/report.h"
#include "h2o/scene.h"
#include "h2o/settings_print.h"
#include "json_out.h"
#include "report_csv.h"
#include "report_notes.h"

static int loss_width(const struct report_target *t)
{
	char miss[48];
	report_target_miss_text(t, miss, sizeof miss);
	const int w = (int)strlen(miss);
	return w > 12 ? w : 12;
}

/* A figure column's name: "recall decode" over the steps after the
 * prompt, "mean recall" over every step (REPORT_WITH_PROMPT). */
static void figure_name(const struct report_run *run, const char *word, bool mean, char *buf,
                        size_t size)
{
	if (run->decode)
		snprintf(buf, size, "%s decode", word);
	else
		snprintf(buf, size, "%s %s", mean ? "mean" : "max", word);
}

static void put_table_head(FILE *out, const struct report_run *run)
{
	char miss[48], name[32];
	report_target_miss_text(&run->target, miss, sizeof miss);
	fprintf(out, "%-13s %6s %8s %8s %10s %7s", "policy", "budget", "peak/kv", "mean/kv",
	        "peak bytes", "matched");
	if (run->scene->v) {
		figure_name(run, "err", true, name, sizeof name);
		fprintf(out, " %10s", name);
		figure_name(run, "err", false, name, sizeof name);
		fprintf(out, " %*s", run->decode ? 14 : 10, run->decode ? "max err decode" : name);
	}
	if (run->scene->v && run->target.figure == REPORT_COS) {
		figure_name(run, "cos", true, name, sizeof name);
		fprintf(out, " %10s", name);
	}
	figure_name(run, "recall", true, name, sizeof name);
	fprintf(out, " %13s %*s\n", name, loss_width(&run->target), miss);
}

/* The budget column: the full cache's "all", a policy that evicts while
 * decoding its bound (B + interval - 1), one that keeps every new token
 * the budget B its prompt was cut to. */
static void budget_text(const struct report_run *run, enum policy_id p, char *buf, size_t size)
{
	const int capacity = policy_capacity(p, &run->budget);
	if (p == POLICY_FULL)
		snprintf(buf, size, "all");
	else if (capacity >= 0 && !policies[p]->grows)
		snprintf(buf, size, "%d", capacity);
	else
		snprintf(buf, size, "%d", run->budget.heavy + run->budget.recent);
}

/* A row's "matched": "ref" for the full cache, the reference; "yes" for
 * the whole run's row of a policy that held no more than the others were
 * given, "NO" otherwise; a layer's or a head's row repeats its policy's. */
static const char *matched_text(const struct report_run *run, enum policy_id p)
{
	return p == POLICY_FULL ? "ref" : report_matched(run, p) ? "yes" : "NO";
}

static void put_table_row(FILE *out, const struct report_run *run, const char *name,
                          enum policy_id p, const struct report_summary *f)
{
	const struct scene *sc = run->scene;
	char budget[16], loss[24], bytes[32];
	budget_text(run, p, budget, sizeof budget);
	if (f->first_miss)
		snprintf(loss, sizeof loss, "step %d", f->first_miss);
	else
		snprintf(loss, sizeof loss, "never");
	cost_format_bytes(report_bytes_peak(f), bytes, sizeof bytes);
	fprintf(out, "%-13s %6s %8.0f %8.1f %10s %7s", name, budget, report_held_peak(f),
	        report_held_mean(f), bytes, matched_text(run, p));
	if (sc->v)
		fprintf(out, " %10.4f %*.4f", report_summary_mean(f, REPORT_ERR),
		        run->decode ? 14 : 10, f->err_max);
	if (sc->v && run->target.figure == REPORT_COS)
		fprintf(out, " %10.4f", report_summary_mean(f, REPORT_COS));
	fprintf(out, " %13.4f %*s\n", report_summary_mean(f, REPORT_RECALL),
	        loss_width(&run->target), loss);
}

/* A per-head row's name: "  head 3", or "  L2 head 3" with layers. */
static void head_name(const struct scene *sc, int h, char *name, size_t size)
{
	const int per = heads_per_layer(sc);
	if (sc->layers > 1)
		snprintf(name, size, "  L%d head %d", h / per + 1, h % per + 1);
	else
		snprintf(name, size, "  head %d", h + 1);
}

/* Whether policy P is among the policies of MASK (--policies). */
static bool shown(unsigned mask, int p)
{
	return (mask >> p) & 1u;
}

/* The text's rows: the full cache, then the matched policies (those that
 * held the memory they were given) best mean of the target's figure
 * first, then those that held more, best first too; a tie in the order
 * of POLICIES; only the policies shown. Ranking the two kinds together
 * would rank memory. Returns how many. */
static int table_order(const struct report_run *run, int order[POLICY_COUNT])
{
	const enum report_figure f = run->target.figure;
	const bool high = report_figure_high(f);
	double key[POLICY_COUNT];
	int kind[POLICY_COUNT];
	for (int p = 0; p < POLICY_COUNT; p++) {
		const double mean = report_summary_mean(&run->sum[p], f);
		key[p] = high ? -mean : mean; /* the lower the better */
		kind[p] = report_matched(run, (enum policy_id)p) ? 0 : 1;
	}
	int count = 0;
	const int first = shown(run->policies, POLICY_FULL);
	if (first)
		order[count++] = POLICY_FULL;
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (p == POLICY_FULL || !shown(run->policies, p))
			continue;
		int i = count;
		while (i > first &&
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

/* What the figures are over and how the rows are ordered. */
static void put_order_text(FILE *out, const struct report_run *run)
{
	const struct report_target *t = &run->target;
	const int n = run->scene->n, steps = n - run->from + 1;
	char good[48];
	report_target_text(t, good, sizeof good);
	if (run->decode && run->from == 1)
		fprintf(out, "attention figures over the %d decode steps (1 to %d: no prompt)",
		        steps, n);
	else if (run->decode)
		fprintf(out,
		        "attention figures over the %d decode steps (%d to %d, after the prompt; "
		        "--with-prompt: every step)",
		        steps, run->from, n);
	else if (run->budget.prompt >= n && run->budget.prompt > 0)
		fprintf(out, "attention figures over all %d steps (no step after the prompt)", n);
	else
		fprintf(out, "attention figures over all %d steps%s", n,
		        run->budget.prompt > 0 ? ", the prompt's too (--with-prompt)" : "");
	fprintf(out,
	        "; memory held per kv cache (peak, mean) from step %d on, and the peak's bytes "
	        "(float32, every cache)\n",
	        run->held_from);
	fprintf(out,
	        "rows: %sthe policies that held their budget (matched), the %s mean "
	        "%s first (the attention target, %s), then those that held more\n",
	        shown(run->policies, POLICY_FULL) ? "full, then " : "",
	        report_figure_high(t->figure) ? "highest" : "lowest", report_figure_word(t->figure),
	        good);
}

static void put_table(FILE *out, const struct report_run *run, bool per_head)
{
	put_table_head(out, run);
	int order[POLICY_COUNT];
	const int rows = table_order(run, order);
	for (int k = 0; k < rows; k++) {
		const int p = order[k];
		put_table_row(out, run, policies[p]->name, (enum policy_id)p, &run->sum[p]);
		for (int l = 0; run->layer_sum && l < run->layers; l++) {
			char name[24];
			snprintf(name, sizeof name, "  layer %d", l + 1);
			put_table_row(out, run, name, (enum policy_id)p,
			              &run->layer_sum[(size_t)l * POLICY_COUNT + p]);
		}
		for (int h = 0; per_head && run->head_sum && run->heads > 1 && h < run->heads;
		     h++) {
			char name[40];
			head_name(run->scene, h, name, sizeof name);
			put_table_row(out, run, name, (enum policy_id)p,
			              &run->head_sum[(size_t)h * POLICY_COUNT + p]);
		}
	}
	report_print_notes(out, run);
}

/* A figure's JSON and CSV key: "mean_attn_recall_decode" over the steps
 * after the prompt, "mean_attn_recall" over every step: named as the text
 * names it ("recall decode", "mean recall"). */
static void figure_key(const struct report_run *run, const char *key, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", key, run->decode ? "_decode" : "");
}

static void put_json_number_key(FILE *out, const struct report_run *run, const char *key, double v)
{
	char name[48];
	figure_key(run, key, name, sizeof name);
	fprintf(out, ", \"%s\": ", name);
	json_exact(out, v);
}

static void put_json_summary(FILE *out, const struct report_run *run, enum policy_id p,
                             const struct report_summary *f)
{
	const struct scene *sc = run->scene;
	fprintf(out, "\"tokens\": %d, \"kv\": %ld", f->tokens, f->kv);
	fputs(", \"held\": {\"peak_per_kv_head\": ", out);
	json_exact(out, report_held_peak(f));
	fputs(", \"mean_per_kv_head\": ", out);
	json_exact(out, report_held_mean(f));
	fputs(", \"peak_bytes\": ", out);
	json_exact(out, report_bytes_peak(f));
	fputs(", \"mean_bytes\": ", out);
	json_exact(out, report_bytes_mean(f));
	fprintf(out, "}, \"matched\": %s",
	        p == POLICY_FULL         ? "null"
	        : report_matched(run, p) ? "true"
	                                 : "false");
	/* An unmatched row points to its matched form, when there is one. */
	if (p != POLICY_FULL && !report_matched(run, p) && policy_matched_form(p) >= 0)
		fprintf(out, ", \"matched_form\": \"%s\"", policies[policy_matched_form(p)]->name);
	if (sc->v) {
		put_json_number_key(out, run, "mean_out_err", report_summary_mean(f, REPORT_ERR));
		put_json_number_key(out, run, "max_out_err", f->err_max);
	}
	put_json_number_key(out, run, "mean_attn_recall", report_summary_mean(f, REPORT_RECALL));
	fputs(", \"first_loss_step\": ", out);
	if (f->first_miss)
		fprintf(out, "%d", f->first_miss);
	else
		fputs("null", out);
	if (sc->v)
		put_json_number_key(out, run, "mean_out_cos", report_summary_mean(f, REPORT_COS));
}

static void put_json_policies(FILE *out, const struct report_run *run, bool per_head)
{
	fputs("[", out);
	for (int p = 0, k = 0; p < POLICY_COUNT; p++) {
		if (!shown(run->policies, p))
			continue;
		fprintf(out, "%s{\"name\": \"%s\", ", k++ ? ", " : "", policies[p]->name);
		put_json_summary(out, run, (enum policy_id)p, &run->sum[p]);
		if (run->layer_sum) {
			fputs(", \"layers\": [", out);
			for (int l = 0; l < run->layers; l++) {
				fputs(l ? ", {" : "{", out);
				put_json_summary(out, run, (enum policy_id)p,
				                 &run->layer_sum[(size_t)l * POLICY_COUNT + p]);
				fputc('}', out);
			}
			fputc(']', out);
		}
		if (per_head && run->head_sum && run->heads > 1) {
			fputs(", \"heads\": [", out);
			for (int h = 0; h < run->heads; h++) {
				fputs(h ? ", {" : "{", out);
				put_json_summary(out, run, (enum policy_id)p,
				                 &run->head_sum[(size_t)h * POLICY_COUNT + p]);
				fputc('}', out);
			}
			fputc(']', out);
		}
		fputc('}', out);
	}
	fputs("]", out);
}

/* Which steps the figures are over: "figures": {"over": "decode" or
 * "all", "from": F, "to": n, "held_from": H}. */
static void put_json_steps(FILE *out, const struct report_run *run)
{
	fprintf(out,
	        ", \"figures\": {\"over\": \"%s\", \"from\": %d, \"to\": %d, \"held_from\": %d}",
	        run->decode ? "decode" : "all", run->from, run->scene->n, run->held_from);
}

static void put_json_budget(FILE *out, const struct policy_budget *b)
{
	fprintf(out, "{\"total\": %d, \"heavy\": %d, \"recent\": %d, \"sinks\": %d",
	        b->heavy + b->recent, b->heavy, b->recent, b->sinks);
	/* Said only when the caches do not compress at every step. */
	if (policy_interval(b) > 1)
		fprintf(out, ", \"interval\": %d", policy_interval(b));
	fputc('}', out);
}

/* LEAD and "compressed every N steps" for an interval N above 1 (design
 * §2), else nothing: the words the report and the sweep add. */
static void put_interval_text(FILE *out, const char *lead, const struct policy_budget *b)
{
	if (policy_interval(b) > 1)
		fprintf(out, "%scompressed every %d steps", lead, policy_interval(b));
}

static void put_json_target(FILE *out, const struct report_target *t)
{
	/* The value as the user wrote it (0.95). */
	fprintf(out, "\"target\": {\"figure\": \"%s\", \"at_least\": %s, \"value\": ",
	        report_figure_key(t->figure), report_figure_high(t->figure) ? "true" : "false");
	json_shortest(out, t->value);
	fputc('}', out);
}

int report_print(const struct report_run *run, enum report_format format, bool per_head, FILE *out)
{
	return report_print_model(run, NULL, format, per_head, out);
}

int report_print_model(const struct report_run *run, const struct report_model *model,
                       enum report_format format, bool per_head, FILE *out)
{
	const struct scene *sc = run->scene;
	const struct policy_budget *b = &run->budget;
	const struct drop_result *drop = model ? model->drop : NULL;
	if (format == REPORT_CSV)
		return report_csv_run(run, per_head, drop, out);
	if (format == REPORT_JSON) {
		fprintf(out, "{\"tokens\": %d, ", sc->n);
		put_json_target(out, &run->target);
		put_json_steps(out, run);
		fputs(", \"budget\": ", out);
		put_json_budget(out, b);
		settings_print_json(out, &b->set);
		fputs(", \"policies\": ", out);
		put_json_policies(out, run, per_head);
		if (drop) {
			fputs(", \"model\": ", out);
			drop_print_target(drop, model->title, model->ratio, true, out);
		}
		fputs("}\n", out);
		return ferror(out) ? -1 : 0;
	}
	char miss[48];
	report_target_miss_text(&run->target, miss, sizeof miss);
	fprintf(out, "%d tokens", sc->n);
	if (sc->layers > 1)
		fprintf(out, ", %d layers", sc->layers);
	if (heads_per_layer(sc) > 1)
		fprintf(out, ", %d heads%s", heads_per_layer(sc), sc->layers > 1 ? " each" : "");
	if (heads_group(sc) > 1)
		fprintf(out, " sharing %d kv heads", heads_kv_count(sc));
	if (b->prompt > 0)
		fprintf(out, ", prompt %d", b->prompt);
	fprintf(out, ", budget %d (heavy %d + recent %d, %d %s)", b->heavy + b->recent, b->heavy,
	        b->recent, b->sinks, b->sinks == 1 ? "sink" : "sinks");
	put_interval_text(out, ", ", b);
	fprintf(out, ", loss = %s\n", miss);
	settings_print_text(out, &b->set);
	put_order_text(out, run);
	fputc('\n', out);
	put_table(out, run, per_head);
	if (drop)
		drop_print_target(drop, model->title, model->ratio, false, out);
	return ferror(out) ? -1 : 0;
}

int report_write(const struct scene *sc, const struct budget *b, bool json, FILE *out,
                 const struct progress *pr)
{
	struct report_run run;
	const struct report_target target = REPORT_DEFAULT_TARGET;
	if (report_measure(sc, b, &target, 0, &run, pr, 0, sc->n) < 0)
		return -1;
	const int rc = report_print(&run, json ? REPORT_JSON : REPORT_TEXT, false, out);
	report_run_done(&run);
	return rc;
}

static void put_json_good(FILE *out, const char *key, const struct report_sweep *sw)
{
	fprintf(out, ", \"%s\": {", key);
	for (int p = 0, k = 0; p < POLICY_COUNT; p++) {
		if (!shown(sw->policies, p))
			continue;
		fprintf(out, "%s\"%s\": ", k++ ? ", " : "", policies[p]->name);
		if (sw->good[p])
			fprintf(out, "%d", sw->good[p]);
		else
			fputs("null", out);
	}
	fputc('}', out);
}

static void put_split_text(FILE *out, const struct report_sweep *sw)
{
	if (!sw->split.source)
		fputs("H2O splits a budget B into heavy B/2 + recent B - B/2", out);
	else
		fprintf(out, "H2O splits a budget B into heavy floor(%g B) + recent the rest (%s)",
		        sw->split.heavy, sw->split.source);
}

int report_sweep_print(const struct report_sweep *sw, enum report_format format, bool per_head,
                       FILE *out)
{
	return report_sweep_print_model(sw, NULL, format, per_head, out);
}

int report_sweep_print_model(const struct report_sweep *sw, const struct report_model *model,
                             enum report_format format, bool per_head, FILE *out)
{
	if (sw->count < 1)
		return 0;
	const struct scene *sc = sw->runs[0].scene;
	const struct report_target *t = &sw->runs[0].target;
	const struct drop_sweep *ds = model ? model->sweep : NULL;
	const bool json = format == REPORT_JSON;
	if (format == REPORT_CSV)
		return report_csv_sweep(sw, per_head, ds, out);
	if (json) {
		fprintf(out, "{\"tokens\": %d, ", sc->n);
		put_json_target(out, t);
		put_json_steps(out, &sw->runs[0]);
		settings_print_json(out, &sw->runs[0].budget.set);
		fputs(", \"sweep\": [", out);
	} else {
		fprintf(out, "%d tokens; ", sc->n);
		put_split_text(out, sw);
		put_interval_text(out, "; every cache ", &sw->runs[0].budget);
		fputc('\n', out);
		settings_print_text(out, &sw->runs[0].budget.set);
		put_order_text(out, &sw->runs[0]);
		fputc('\n', out);
	}
	for (int i = 0; i < sw->count; i++) {
		const struct report_run *run = &sw->runs[i];
		const struct policy_budget *b = &run->budget;
		if (json) {
			fputs(i ? ", {\"budget\": " : "{\"budget\": ", out);
			put_json_budget(out, b);
			fputs(", \"policies\": ", out);
			put_json_policies(out, run, per_head);
			fputc('}', out);
			continue;
		}
		fprintf(out, "B = %d (heavy %d + recent %d, %d %s)\n", sw->budgets[i], b->heavy,
		        b->recent, b->sinks, b->sinks == 1 ? "sink" : "sinks");
		put_table(out, run, per_head);
		fputc('\n', out);
	}
	char good[48];
	report_target_text(t, good, sizeof good);
	if (json) {
		fputc(']', out);
		/* Also under the key that came before targets, when it is the
		 * default target it names. */
		if (t->figure == REPORT_RECALL && t->value == 0.95)
			put_json_good(out, "budget_for_recall_0.95", sw);
		put_json_good(out, "budget_for_target", sw);
		if (ds) {
			fputs(", \"model\": ", out);
			drop_sweep_print_object(ds, out);
		}
		fputs("}\n", out);
		return ferror(out) ? -1 : 0;
	}
	fprintf(out,
	        "smallest budget meeting the attention target, mean %s (%s), matched rows only:",
	        good, sw->runs[0].decode ? "decode steps" : "every step");
	int never = 0;
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (sw->unlimited[p] || !shown(sw->policies, p))
			continue;
		if (!sw->ever_matched[p])
			never++;
		else if (sw->good[p])
			fprintf(out, "  %s %d", policies[p]->name, sw->good[p]);
		else
			fprintf(out, "  %s none", policies[p]->name);
	}
	fputc('\n', out);
	if (never) {
		fputs("held more than the budget at every budget (not matched):", out);
		for (int p = 0; p < POLICY_COUNT; p++)
			if (!sw->unlimited[p] && shown(sw->policies, p) && !sw->ever_matched[p]) {
				fprintf(out, "  %s", policies[p]->name);
				if (policy_matched_form((enum policy_id)p) >= 0)
					fprintf(out, " (matched form: %s)",
					        policies[policy_matched_form((enum policy_id)p)]
					                ->name);
			}
		fputc('\n', out);
	}
	if (ds)
		drop_sweep_print(ds, false, out);
	return ferror(out) ? -1 : 0;
}

int report_sweep(const struct scene *sc, const int *budgets, int count, int sinks, bool json,
                 FILE *out, const struct progress *pr)
{
	struct report_sweep sw;
	const struct report_split split = {.heavy = 0.5};
	const struct report_target target = REPORT_DEFAULT_TARGET;
	/* The scene's prompt and interval; the split makes heavy and recent. */
	const struct budget b = budget_scene(sc, 0, 0, sinks);
	if (report_sweep_measure(sc, &b, budgets, count, &split, &target, 0, &sw, pr) < 0)
		return -1;
	const int rc = report_sweep_print(&sw, json ? REPORT_JSON : REPORT_TEXT, false, out);
	report_sweep_done(&sw);
	return rc;
}
