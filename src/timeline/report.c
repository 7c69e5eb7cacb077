/*
 * report: per-policy figures over a whole scene (see report.h).
 */
#include "h2o/report.h"

#include "h2o/cost.h"
#include "h2o/drop.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/engine.h"
#include "h2o/heads.h"
#include "h2o/scene.h"

static const struct {
	const char *word, *key;
	bool high; /* the larger the better */
} figure_info[REPORT_FIGURE_COUNT] = {
#define X(id, word, high, key) [id] = {word, key, high},
        REPORT_FIGURES
#undef X
};

const char *report_figure_word(enum report_figure f)
{
	return figure_info[f].word;
}

const char *report_figure_key(enum report_figure f)
{
	return figure_info[f].key;
}

bool report_figure_high(enum report_figure f)
{
	return figure_info[f].high;
}

bool report_target_parse(const char *s, struct report_target *t)
{
	const char *eq = strchr(s, '=');
	if (!eq)
		return false;
	for (int f = 0; f < REPORT_FIGURE_COUNT; f++) {
		const size_t len = strlen(figure_info[f].word);
		if ((size_t)(eq - s) != len || strncmp(s, figure_info[f].word, len) != 0)
			continue;
		char *end;
		errno = 0;
		const double v = strtod(eq + 1, &end);
		if (errno || end == eq + 1 || *end || !isfinite(v) || v < 0 ||
		    (f != REPORT_ERR && v > 1))
			return false;
		*t = (struct report_target){(enum report_figure)f, v};
		return true;
	}
	return false;
}

double report_figure_of(enum report_figure f, const struct step_metrics *m)
{
	switch (f) {
	case REPORT_ERR:
		return m->out_err;
	case REPORT_COS:
		return m->out_cos;
	default:
		return m->attn_recall;
	}
}

bool report_target_missed(const struct report_target *t, double value)
{
	return figure_info[t->figure].high ? value < t->value : value > t->value;
}

void report_target_text(const struct report_target *t, char *buf, int size)
{
	snprintf(buf, (size_t)size, "%s %s %g", figure_info[t->figure].word,
	         figure_info[t->figure].high ? ">=" : "<=", t->value);
}

bool report_ppl_parse(const char *s, double *ratio)
{
	if (strncmp(s, "ppl=", 4) != 0)
		return false;
	char *end;
	errno = 0;
	const double v = strtod(s + 4, &end);
	if (errno || end == s + 4 || *end || !isfinite(v) || v < 1)
		return false;
	*ratio = v;
	return true;
}

bool report_ppl_meets(double ppl, double full, double ratio)
{
	return ppl <= ratio * full;
}

void report_ppl_text(double ratio, char *buf, int size)
{
	snprintf(buf, (size_t)size, "ppl <= %g x full", ratio);
}

void report_target_miss_text(const struct report_target *t, char *buf, int size)
{
	snprintf(buf, (size_t)size, "%s %s %g", figure_info[t->figure].word,
	         figure_info[t->figure].high ? "<" : ">", t->value);
}

double report_summary_mean(const struct report_summary *s, enum report_figure f)
{
	const double sum = f == REPORT_ERR   ? s->err_sum
	                   : f == REPORT_COS ? s->cos_sum
	                                     : s->recall_sum;
	return s->steps > 0 ? sum / s->steps : 0.0;
}

double report_held_peak(const struct report_summary *s)
{
	return s->caches > 0 ? (double)s->held_peak / s->caches : 0.0;
}

double report_held_mean(const struct report_summary *s)
{
	return s->caches > 0 && s->held_steps > 0 ? s->held_sum / s->held_steps / s->caches : 0.0;
}

double report_bytes_peak(const struct report_summary *s)
{
	return (double)s->kv_peak * REPORT_KV_BYTES;
}

double report_bytes_mean(const struct report_summary *s)
{
	/* A cache's KV numbers are its tokens x 2 x dim: in proportion. */
	if (s->held_peak <= 0 || s->held_steps <= 0)
		return 0.0;
	return report_bytes_peak(s) / s->held_peak * (s->held_sum / s->held_steps);
}

int report_matched_bound(const struct policy_budget *b)
{
	return b->heavy + b->recent + policy_interval(b) - 1;
}

bool report_matched(const struct report_run *run, enum policy_id p)
{
	const struct report_summary *s = &run->sum[p];
	return (long)s->held_peak <= (long)report_matched_bound(&run->budget) * s->caches;
}

/* Step STEP's figures M into F: the memory from HELD_FROM on, the
 * attention figures from FROM on. */
static void summary_add(struct report_summary *f, const struct step_metrics *m,
                        const struct report_target *t, int step, int from, int held_from)
{
	f->tokens = m->tokens;
	f->kv = m->kv;
	if (step >= held_from) {
		if (m->tokens > f->held_peak) {
			f->held_peak = m->tokens;
			f->kv_peak = m->kv;
		}
		f->held_sum += m->tokens;
		f->held_steps++;
	}
	if (step < from)
		return;
	f->steps++;
	f->err_sum += m->out_err;
	f->err_max = m->out_err > f->err_max ? m->out_err : f->err_max;
	f->cos_sum += m->out_cos;
	f->recall_sum += m->attn_recall;
	if (!f->first_miss && report_target_missed(t, report_figure_of(t->figure, m)))
		f->first_miss = step;
}

void report_run_done(struct report_run *run)
{
	free(run->head_sum);
	free(run->layer_sum);
	run->layer_sum = NULL;
	free(run->steps);
	free(run->head_steps);
	run->head_sum = NULL;
	run->steps = NULL;
	run->head_steps = NULL;
}

double report_keep_bytes(const struct scene *sc, unsigned keep)
{
	const double heads = heads_count(sc), n = sc->n > 0 ? sc->n : 1;
	double bytes = 0;
	if (keep & REPORT_KEEP_HEADS)
		bytes += heads * POLICY_COUNT * sizeof(struct report_summary);
	if (keep & REPORT_KEEP_LAYERS)
		bytes += (sc->layers > 1 ? sc->layers : 1) * POLICY_COUNT *
		         sizeof(struct report_summary);
	if (keep & REPORT_KEEP_STEPS)
		bytes += n * POLICY_COUNT * sizeof(struct step_metrics) *
		         (keep & REPORT_KEEP_HEADS ? 1 + heads : 1);
	return bytes;
}

unsigned report_policies_run(unsigned shown)
{
	return (shown | ENGINE_POLICY(POLICY_FULL) | ENGINE_POLICY(POLICY_H2O)) &
	       ENGINE_ALL_POLICIES;
}

int report_measure(const struct scene *sc, const struct budget *b,
                   const struct report_target *target, unsigned keep, struct report_run *run,
                   const struct progress *pr, double done, double total)
{
	return report_measure_only(sc, b, target, keep, ENGINE_ALL_POLICIES, run, pr, done, total);
}

/* Layer L's PER heads of RUN's report, stepped together: their own
 * summaries, their layer's, and their part of every step's sums over all
 * heads (SUMS: a row per step, or one row with one layer), which the last
 * layer's steps turn into the figures over all heads. */
static int measure_layer(const struct scene *sc, const struct budget *b,
                         const struct report_target *target, unsigned computed, int l, int per,
                         struct heads_sum *sums, struct report_run *run, const struct progress *pr,
                         double done, double total)
{
	struct heads_run hr;
	if (heads_run_init_range(&hr, sc, b, computed, l * per, per) < 0)
		return -1;
	const bool last = l == run->layers - 1;
	while (heads_run_step(&hr)) {
		const int step = hr.rec[0].step;
		progress_tell(pr, done + ((double)l * sc->n + step) / run->layers, total);
		struct heads_sum *row =
		        sums + (run->layers > 1 ? (size_t)(step - 1) : 0) * POLICY_COUNT;
		for (int p = 0; p < POLICY_COUNT; p++) {
			if (!(computed & ENGINE_POLICY(p)))
				continue;
			struct step_metrics m;
			heads_run_add(&hr, 0, per, (enum policy_id)p, &row[p]);
			if (last) {
				heads_sum_metrics(&row[p], &m);
				row[p] = (struct heads_sum){0};
				summary_add(&run->sum[p], &m, target, step, run->from,
				            run->held_from);
				if (run->steps)
					run->steps[(size_t)(step - 1) * POLICY_COUNT + p] = m;
			}
			if (run->layer_sum) {
				heads_run_total_of(&hr, 0, per, (enum policy_id)p, &m);
				summary_add(&run->layer_sum[(size_t)l * POLICY_COUNT + p], &m,
				            target, step, run->from, run->held_from);
			}
			for (int i = 0; run->head_sum && i < per; i++) {
				const int h = l * per + i;
				summary_add(&run->head_sum[(size_t)h * POLICY_COUNT + p],
				            &hr.rec[i].c[p].m, target, step, run->from,
				            run->held_from);
				if (run->head_steps)
					run->head_steps[((size_t)(step - 1) * run->heads + h) *
					                        POLICY_COUNT +
					                p] = hr.rec[i].c[p].m;
			}
		}
	}
	heads_run_done(&hr);
	return 0;
}

int report_measure_only(const struct scene *sc, const struct budget *b,
                        const struct report_target *target, unsigned keep, unsigned shown,
                        struct report_run *run, const struct progress *pr, double done,
                        double total)
{
	*run = (struct report_run){.scene = sc,
	                           .policies = shown,
	                           .budget = policy_budget_of(sc, b),
	                           .target = *target};
	const unsigned computed = report_policies_run(shown);
	run->heads = heads_count(sc);
	run->layers = sc->layers > 1 ? sc->layers : 1;
	const int prompt = b->prompt > 0 ? b->prompt : 0;
	run->decode = !(keep & REPORT_WITH_PROMPT) && prompt < sc->n;
	run->from = run->decode ? prompt + 1 : 1;
	run->held_from = prompt > 1 ? prompt : 1;
	const int kv = heads_kv_count(sc);
	for (int p = 0; p < POLICY_COUNT; p++)
		run->sum[p].caches = run->layers * kv;
	if (keep & REPORT_KEEP_LAYERS) {
		run->layer_sum = calloc((size_t)run->layers * POLICY_COUNT, sizeof *run->layer_sum);
		if (!run->layer_sum)
			return -1;
		for (size_t i = 0; i < (size_t)run->layers * POLICY_COUNT; i++)
			run->layer_sum[i].caches = kv;
	}
	if (keep & REPORT_KEEP_HEADS) {
		run->head_sum = calloc((size_t)run->heads * POLICY_COUNT, sizeof *run->head_sum);
		if (!run->head_sum) {
			report_run_done(run);
			return -1;
		}
		for (size_t i = 0; i < (size_t)run->heads * POLICY_COUNT; i++)
			run->head_sum[i].caches = 1;
	}
	if (keep & REPORT_KEEP_STEPS) {
		run->steps =
		        calloc((size_t)(sc->n > 0 ? sc->n : 1) * POLICY_COUNT, sizeof *run->steps);
		if (run->head_sum)
			run->head_steps =
			        calloc((size_t)(sc->n > 0 ? sc->n : 1) * run->heads * POLICY_COUNT,
			               sizeof *run->head_steps);
		if (!run->steps || (run->head_sum && !run->head_steps)) {
			report_run_done(run);
			return -1;
		}
	}
	/* A layer at a time: only the sums over all heads need every head's
	 * step, and they add head by head in the scene's order (heads_sum),
	 * so each layer's engines are freed before the next one's start. */
	const int per = heads_per_layer(sc), n = sc->n > 0 ? sc->n : 1;
	const size_t rows = run->layers > 1 ? (size_t)n : 1;
	struct heads_sum *sums = calloc(rows * POLICY_COUNT, sizeof *sums);
	if (!sums) {
		report_run_done(run);
		return -1;
	}
	for (int l = 0; l < run->layers; l++) {
		if (measure_layer(sc, b, target, computed, l, per, sums, run, pr, done, total) <
		    0) {
			free(sums);
			report_run_done(run);
			return -1;
		}
	}
	free(sums);
	return 0;
}

void report_sweep_done(struct report_sweep *sw)
{
	for (int i = 0; sw->runs && i < sw->count; i++)
		report_run_done(&sw->runs[i]);
	free(sw->runs);
	free(sw->budgets);
	sw->runs = NULL;
	sw->budgets = NULL;
}

int report_sweep_measure(const struct scene *sc, const struct budget *want, const int *budgets,
                         int count, const struct report_split *split,
                         const struct report_target *target, unsigned keep, struct report_sweep *sw,
                         const struct progress *pr)
{
	return report_sweep_measure_only(sc, want, budgets, count, split, target, keep,
	                                 ENGINE_ALL_POLICIES, sw, pr);
}

int report_sweep_measure_only(const struct scene *sc, const struct budget *want, const int *budgets,
                              int count, const struct report_split *split,
                              const struct report_target *target, unsigned keep, unsigned shown,
                              struct report_sweep *sw, const struct progress *pr)
{
	*sw = (struct report_sweep){.split = *split, .policies = shown};
	sw->runs = calloc((size_t)(count > 0 ? count : 1), sizeof *sw->runs);
	sw->budgets = malloc((size_t)(count > 0 ? count : 1) * sizeof *sw->budgets);
	if (!sw->runs || !sw->budgets) {
		report_sweep_done(sw);
		return -1;
	}
	for (int i = 0; i < count; i++) {
		const struct budget b = budget_split(want, budgets[i], split->heavy);
		if (report_measure_only(sc, &b, target, keep, shown, &sw->runs[i], pr,
		                        (double)i * sc->n, (double)count * sc->n) < 0) {
			report_sweep_done(sw);
			return -1;
		}
		sw->budgets[i] = budgets[i];
		sw->count = i + 1;
	}
	for (int i = 0; i < count; i++) {
		const struct report_run *run = &sw->runs[i];
		for (int p = 0; p < POLICY_COUNT; p++) {
			if (!(shown & ENGINE_POLICY(p)))
				continue;
			const double mean = report_summary_mean(&run->sum[p], target->figure);
			/* Only at the memory every policy was given: a policy
			 * that held more meets nothing at this budget. */
			const bool matched = report_matched(run, (enum policy_id)p);
			sw->ever_matched[p] = sw->ever_matched[p] || matched;
			if (matched && !report_target_missed(target, mean) &&
			    (!sw->good[p] || budgets[i] < sw->good[p]))
				sw->good[p] = budgets[i];
			sw->unlimited[p] = p == POLICY_FULL;
		}
	}
	return 0;
}
