/*
 * report: per-policy figures over a whole scene (see report.h).
 */
#include "h2o/report.h"

#include "h2o/cost.h"

#include <stdlib.h>

#include "h2o/engine.h"
#include "h2o/heads.h"
#include "h2o/scene.h"

struct figures {
	int tokens;
	long kv;
	double err_sum, err_max, recall_sum;
	int first_loss; /* first step with recall < REPORT_LOSS_RECALL, 0 if none */
};

/* Run the engine over the scene (every head) and fill FIG for every
 * policy, from each step's figures over all heads. */
static int measure(const struct scene *sc, const struct policy_budget *b,
                   struct figures fig[POLICY_COUNT], const struct progress *pr, double done,
                   double total)
{
	struct heads_run run;
	if (heads_run_init(&run, sc, b) < 0)
		return -1;
	for (int p = 0; p < POLICY_COUNT; p++)
		fig[p] = (struct figures){0};
	while (heads_run_step(&run)) {
		progress_tell(pr, done + run.rec[0].step, total);
		for (int p = 0; p < POLICY_COUNT; p++) {
			struct step_metrics m;
			heads_run_total(&run, (enum policy_id)p, &m);
			struct figures *f = &fig[p];
			f->tokens = m.tokens;
			f->kv = m.kv;
			f->err_sum += m.out_err;
			f->err_max = m.out_err > f->err_max ? m.out_err : f->err_max;
			f->recall_sum += m.attn_recall;
			if (!f->first_loss && m.attn_recall < REPORT_LOSS_RECALL)
				f->first_loss = run.rec[0].step;
		}
	}
	heads_run_done(&run);
	return 0;
}

static void put_table_head(FILE *out, bool values)
{
	fprintf(out, "%-10s %6s %7s %9s", "policy", "budget", "tokens", "KV");
	if (values)
		fprintf(out, " %10s %10s", "mean err", "max err");
	fprintf(out, " %11s %12s\n", "mean recall", "recall < 0.9");
}

static void put_table_row(FILE *out, const struct scene *sc, const struct policy_budget *b,
                          enum policy_id p, const struct figures *f)
{
	char budget[16], loss[24];
	const int capacity = policy_capacity(p, b);
	if (capacity < 0)
		snprintf(budget, sizeof budget, "all");
	else
		snprintf(budget, sizeof budget, "%d", capacity);
	if (f->first_loss)
		snprintf(loss, sizeof loss, "step %d", f->first_loss);
	else
		snprintf(loss, sizeof loss, "never");
	fprintf(out, "%-10s %6s %7d %9ld", policies[p]->name, budget, f->tokens, f->kv);
	if (sc->v)
		fprintf(out, " %10.4f %10.4f", f->err_sum / sc->n, f->err_max);
	fprintf(out, " %11.4f %12s\n", f->recall_sum / sc->n, loss);
}

static void put_json_policies(FILE *out, const struct scene *sc, const struct figures *fig)
{
	fputs("[", out);
	for (int p = 0; p < POLICY_COUNT; p++) {
		const struct figures *f = &fig[p];
		fprintf(out, "%s{\"name\": \"%s\", \"tokens\": %d, \"kv\": %ld", p ? ", " : "",
		        policies[p]->name, f->tokens, f->kv);
		if (sc->v)
			fprintf(out, ", \"mean_out_err\": %.17g, \"max_out_err\": %.17g",
			        f->err_sum / sc->n, f->err_max);
		fprintf(out, ", \"mean_attn_recall\": %.17g, \"first_loss_step\": ",
		        f->recall_sum / sc->n);
		if (f->first_loss)
			fprintf(out, "%d}", f->first_loss);
		else
			fputs("null}", out);
	}
	fputs("]", out);
}

static void put_json_budget(FILE *out, const struct policy_budget *b)
{
	fprintf(out, "{\"total\": %d, \"heavy\": %d, \"recent\": %d, \"sinks\": %d}",
	        b->heavy + b->recent, b->heavy, b->recent, b->sinks);
}

int report_write(const struct scene *sc, const struct policy_budget *b, bool json, FILE *out,
                 const struct progress *pr)
{
	struct figures fig[POLICY_COUNT];
	if (measure(sc, b, fig, pr, 0, sc->n) < 0)
		return -1;
	if (json) {
		fprintf(out, "{\"tokens\": %d, \"budget\": ", sc->n);
		put_json_budget(out, b);
		fputs(", \"policies\": ", out);
		put_json_policies(out, sc, fig);
		fputs("}\n", out);
		return ferror(out) ? -1 : 0;
	}
	fprintf(out,
	        "%d tokens, budget %d (heavy %d + recent %d, %d sinks), loss = recall < %.1f\n\n",
	        sc->n, b->heavy + b->recent, b->heavy, b->recent, b->sinks, REPORT_LOSS_RECALL);
	put_table_head(out, sc->v != NULL);
	for (int p = 0; p < POLICY_COUNT; p++)
		put_table_row(out, sc, b, (enum policy_id)p, &fig[p]);
	return ferror(out) ? -1 : 0;
}

static struct policy_budget sweep_budget(const struct scene *sc, int total, int sinks)
{
	return (struct policy_budget){
	        .heavy = total / 2,
	        .recent = total - total / 2,
	        .sinks = policy_sinks_for(sinks, total),
	        .n = sc->n,
	};
}

/* Every budget is measured before a line is written, so running out of
 * memory (-1) leaves no partial table behind. */
int report_sweep(const struct scene *sc, const int *budgets, int count, int sinks, bool json,
                 FILE *out, const struct progress *pr)
{
	/* POLICY_COUNT figures per budget. */
	struct figures *all = malloc((size_t)(count > 0 ? count : 1) * POLICY_COUNT * sizeof *all);
	if (!all)
		return -1;
	for (int i = 0; i < count; i++) {
		const struct policy_budget b = sweep_budget(sc, budgets[i], sinks);
		if (measure(sc, &b, &all[(size_t)i * POLICY_COUNT], pr, (double)i * sc->n,
		            (double)count * sc->n) < 0) {
			free(all);
			return -1;
		}
	}
	/* The smallest budget at which each policy's mean recall reaches
	 * REPORT_GOOD_RECALL, or 0. */
	int good[POLICY_COUNT] = {0};
	/* A policy that keeps everything needs no budget: the text leaves
	 * it out of that line. */
	bool unlimited[POLICY_COUNT] = {0};
	if (json)
		fprintf(out, "{\"tokens\": %d, \"sweep\": [", sc->n);
	else
		fprintf(out, "%d tokens; H2O splits a budget B into heavy B/2 + recent B - B/2\n\n",
		        sc->n);
	for (int i = 0; i < count; i++) {
		const int total = budgets[i];
		const struct policy_budget b = sweep_budget(sc, total, sinks);
		const struct figures *fig = &all[(size_t)i * POLICY_COUNT];
		for (int p = 0; p < POLICY_COUNT; p++) {
			if (!good[p] && fig[p].recall_sum / sc->n >= REPORT_GOOD_RECALL)
				good[p] = total;
			unlimited[p] = policy_capacity((enum policy_id)p, &b) < 0;
		}
		if (json) {
			fputs(i ? ", {\"budget\": " : "{\"budget\": ", out);
			put_json_budget(out, &b);
			fputs(", \"policies\": ", out);
			put_json_policies(out, sc, fig);
			fputc('}', out);
			continue;
		}
		fprintf(out, "B = %d (heavy %d + recent %d, %d sinks)\n", total, b.heavy, b.recent,
		        b.sinks);
		put_table_head(out, sc->v != NULL);
		for (int p = 0; p < POLICY_COUNT; p++)
			put_table_row(out, sc, &b, (enum policy_id)p, &fig[p]);
		fputc('\n', out);
	}
	free(all);
	if (json) {
		fputs("], \"budget_for_recall_0.95\": {", out);
		for (int p = 0; p < POLICY_COUNT; p++) {
			fprintf(out, "%s\"%s\": ", p ? ", " : "", policies[p]->name);
			if (good[p])
				fprintf(out, "%d", good[p]);
			else
				fputs("null", out);
		}
		fputs("}}\n", out);
		return ferror(out) ? -1 : 0;
	}
	fprintf(out, "smallest budget with mean recall >= %.2f:", REPORT_GOOD_RECALL);
	for (int p = 0; p < POLICY_COUNT; p++) {
		if (unlimited[p])
			continue;
		if (good[p])
			fprintf(out, "  %s %d", policies[p]->name, good[p]);
		else
			fprintf(out, "  %s none", policies[p]->name);
	}
	fputc('\n', out);
	return ferror(out) ? -1 : 0;
}
