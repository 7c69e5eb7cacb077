/*
 * report_csv: the report and the sweep as CSV (see report_print.h), with
 * the model's columns when a model scene's real drop ran.
 */
#include <math.h>
#include <stdio.h>

#include "h2o/drop.h"
#include "h2o/report.h"
#include "h2o/scene.h"
#include "h2o/settings_print.h"
#include "report_csv.h"

/* Whether policy P is among the policies of MASK (--policies). */
static bool shown(unsigned mask, int p)
{
	return (mask >> p) & 1u;
}

/* A CSV number after its comma: exact (%.17g, as the JSON), empty when
 * the scene has no values to measure it on or it is not finite (null in
 * the JSON). */
static void put_csv_number(FILE *out, bool has, double v)
{
	if (has && isfinite(v))
		fprintf(out, ",%.17g", v);
	else
		fputc(',', out);
}

/* A matched_form cell: the matched form of policy P (policy.h) when its
 * run was not MATCHED (the full cache is neither), else empty. */
static void put_csv_form(FILE *out, enum policy_id p, bool matched)
{
	fputc(',', out);
	if (p != POLICY_FULL && !matched && policy_matched_form(p) >= 0)
		fputs(policies[policy_matched_form(p)]->name, out);
}

static void put_csv_step(FILE *out, int step, enum policy_id p, const char *head,
                         const struct step_metrics *m)
{
	fprintf(out, "%d,%s", step, policies[p]->name);
	if (head)
		fprintf(out, ",%s", head);
	fprintf(out, ",%d,%ld", m->tokens, m->kv);
	put_csv_number(out, m->has_out, m->out_err);
	put_csv_number(out, m->has_out, m->out_cos);
	put_csv_number(out, true, m->attn_recall);
	fprintf(out, ",%d", m->overlap_h2o);
}

/* The model's columns of step STEP's row of policy P: its log-probability
 * of the next token and its likeliest next token, empty where the run
 * has none (a policy not run on the model, a head's row, the last step). */
static void put_csv_model_step(FILE *out, const struct drop_result *d, int step, enum policy_id p,
                               bool head)
{
	const struct drop_policy *dp = d ? &d->p[p] : NULL;
	if (!d)
		return;
	if (head || !dp->ran) {
		fputs(",,,,,", out);
		return;
	}
	/* A log-probability of the text's next token: none after the text's
	 * last, nor for the model's own tokens. */
	put_csv_number(out, step < d->given, dp->logprob[step - 1]);
	fprintf(out, ",%d,", dp->top[step - 1]);
	/* The full cache's model's top on the text this run read, and the
	 * divergence from it: where every run read the same text, and
	 * generating, at each step that wrote this run's own (drop.h). */
	const int full_top = drop_full_top(d, p, step - 1);
	if (full_top >= 0)
		fprintf(out, "%d", full_top);
	const bool kl = dp->kl && (step < d->given || (dp->full_top && step < d->n));
	put_csv_number(out, kl, kl ? dp->kl[step - 1] : 0.0);
	put_csv_form(out, p, drop_matched(d, p));
}

/* A row per step and policy, then per head with PER_HEAD; with the model's
 * run D, its columns too. */
int report_csv_run(const struct report_run *run, bool per_head, const struct drop_result *d,
                   FILE *out)
{
	if (!run->steps)
		return -1;
	per_head = per_head && run->head_steps && run->heads > 1;
	settings_print_csv(out, &run->budget.set);
	fprintf(out,
	        "step,policy%s,tokens,kv,out_err,out_cos,attn_recall,overlap_h2o,matched_form%s\n",
	        per_head ? ",head" : "",
	        d ? ",model_logprob,model_top,model_full_top,model_kl,model_matched_form" : "");
	for (int t = 1; t <= run->scene->n; t++) {
		for (int p = 0; p < POLICY_COUNT; p++) {
			if (!shown(run->policies, p))
				continue;
			put_csv_step(out, t, (enum policy_id)p, per_head ? "all" : NULL,
			             &run->steps[(size_t)(t - 1) * POLICY_COUNT + p]);
			put_csv_form(out, (enum policy_id)p,
			             report_matched(run, (enum policy_id)p));
			put_csv_model_step(out, d, t, (enum policy_id)p, false);
			fputc('\n', out);
			for (int h = 0; per_head && h < run->heads; h++) {
				char head[16];
				snprintf(head, sizeof head, "%d", h);
				put_csv_step(out, t, (enum policy_id)p, head,
				             &run->head_steps[((size_t)(t - 1) * run->heads + h) *
				                                      POLICY_COUNT +
				                              p]);
				put_csv_form(out, (enum policy_id)p,
				             report_matched(run, (enum policy_id)p));
				put_csv_model_step(out, d, t, (enum policy_id)p, true);
				fputc('\n', out);
			}
		}
	}
	return ferror(out) ? -1 : 0;
}

static void put_csv_summary(FILE *out, const struct report_run *run, enum policy_id p,
                            const struct report_summary *f)
{
	const struct scene *sc = run->scene;
	fprintf(out, ",%d,%ld", f->tokens, f->kv);
	put_csv_number(out, true, report_held_peak(f));
	put_csv_number(out, true, report_held_mean(f));
	put_csv_number(out, true, report_bytes_peak(f));
	put_csv_number(out, true, report_bytes_mean(f));
	fprintf(out, ",%s", p == POLICY_FULL ? "" : report_matched(run, p) ? "true" : "false");
	put_csv_form(out, p, report_matched(run, p));
	put_csv_number(out, sc->v != NULL, report_summary_mean(f, REPORT_ERR));
	put_csv_number(out, sc->v != NULL, f->err_max);
	put_csv_number(out, sc->v != NULL, report_summary_mean(f, REPORT_COS));
	put_csv_number(out, true, report_summary_mean(f, REPORT_RECALL));
	fputc(',', out);
	if (f->first_miss)
		fprintf(out, "%d", f->first_miss);
}

/* The model's columns of budget I's row of policy P: its perplexity after
 * the prompt and whether it meets the model's target, empty where the
 * sweep has no run (a policy not run on the model, a head's row). */
static void put_csv_model_budget(FILE *out, const struct drop_sweep *ds, int i, enum policy_id p,
                                 bool head)
{
	if (!ds)
		return;
	if (head || i >= ds->count || !ds->runs[i].p[p].ran) {
		fputs(",,,", out);
		return;
	}
	const struct drop_result *r = &ds->runs[i];
	const double ppl = drop_perplexity(r, p, r->prompt > 0 ? r->prompt - 1 : 0, r->given - 1);
	if (!drop_judged(r))
		fputs(",,", out);
	else {
		put_csv_number(out, true, ppl);
		fprintf(out, ",%s",
		        report_ppl_meets(ppl, drop_sweep_full(ds), ds->ratio) ? "true" : "false");
	}
	put_csv_form(out, p, drop_matched(r, p));
}

/* A row per budget and policy, then per head with PER_HEAD; with the
 * model's sweep DS, its columns too. */
int report_csv_sweep(const struct report_sweep *sw, bool per_head, const struct drop_sweep *ds,
                     FILE *out)
{
	per_head = per_head && sw->runs[0].head_sum && sw->runs[0].heads > 1;
	const char *over = sw->runs[0].decode ? "_decode" : "";
	settings_print_csv(out, &sw->runs[0].budget.set);
	fprintf(out,
	        "budget,heavy,recent,sinks,policy%s,tokens,kv,peak_per_kv_head,mean_per_kv_head,"
	        "peak_bytes,mean_bytes,matched,matched_form,mean_out_err%s,max_out_err%s,"
	        "mean_out_cos%s,"
	        "mean_attn_recall%s,first_loss_step%s\n",
	        per_head ? ",head" : "", over, over, over, over,
	        ds ? ",model_ppl_decode,model_meets_target,model_matched_form" : "");
	for (int i = 0; i < sw->count; i++) {
		const struct report_run *run = &sw->runs[i];
		const struct policy_budget *b = &run->budget;
		for (int p = 0; p < POLICY_COUNT; p++) {
			if (!shown(sw->policies, p))
				continue;
			for (int h = -1; h < (per_head ? run->heads : 0); h++) {
				fprintf(out, "%d,%d,%d,%d,%s", sw->budgets[i], b->heavy, b->recent,
				        b->sinks, policies[p]->name);
				if (per_head && h < 0)
					fputs(",all", out);
				else if (per_head)
					fprintf(out, ",%d", h);
				put_csv_summary(
				        out, run, (enum policy_id)p,
				        h < 0 ? &run->sum[p]
				              : &run->head_sum[(size_t)h * POLICY_COUNT + p]);
				put_csv_model_budget(out, ds, i, (enum policy_id)p, h >= 0);
				fputc('\n', out);
			}
		}
	}
	return ferror(out) ? -1 : 0;
}
