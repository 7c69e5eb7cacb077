/*
 * trace: design §5, one JSON object per step.
 */
#include "h2o/trace.h"

#include "h2o/cost.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/drop.h"
#include "h2o/engine.h"
#include "h2o/heads.h"
#include "h2o/report.h"
#include "h2o/scene.h"
#include "h2o/text.h"
#include "h2o/settings_print.h"
#include "json_out.h"

static void put_ints(FILE *out, const char *key, const int *v, int n)
{
	fprintf(out, "\"%s\": [", key);
	for (int i = 0; i < n; i++)
		fprintf(out, i ? ",%d" : "%d", v[i]);
	fputc(']', out);
}

static void put_numbers(FILE *out, const char *key, const double *v, int n)
{
	fprintf(out, "\"%s\": [", key);
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		json_shortest(out, v[i]);
	}
	fputc(']', out);
}

static void put_metric(FILE *out, const char *key, double v)
{
	fprintf(out, ", \"%s\": ", key);
	json_shortest(out, v);
}

/* The positions of policy P's cache in region R after step T. */
static void put_region(FILE *out, const char *key, const struct engine *e, enum policy_id p, int t,
                       enum policy_region r)
{
	const struct policy *pol = policies[p];
	const int len = engine_len(e, p);
	const int *pos = engine_positions(e, p);
	fprintf(out, "\"%s\": [", key);
	for (int i = 0, first = 1; i < len; i++) {
		if (pol->region(engine_budget(e), t, pos[i]) != r)
			continue;
		fprintf(out, first ? "%d" : ",%d", pos[i]);
		first = 0;
	}
	fputc(']', out);
}

/* The keys every cache has: what it attended, evicted and kept (with
 * H2O's heavy and recent regions when REGIONS), and its output. */
static void put_cache(FILE *out, const struct scene *sc, const struct engine *e, enum policy_id p,
                      const struct cache_record *r, int step, bool regions)
{
	put_ints(out, "attended", r->attended, r->n_attended);
	fputs(", ", out);
	put_numbers(out, "attn", r->group_attn, r->n_attended);
	fputs(", ", out);
	put_numbers(out, "scores", r->scores, r->n_attended);
	fputs(", ", out);
	/* The engine reports evictions in ascending position order. */
	put_ints(out, "evicted", r->evicted, r->n_evicted);
	fputs(", ", out);
	put_ints(out, "kept", engine_positions(e, p), engine_len(e, p));
	if (regions) {
		fputs(", ", out);
		put_region(out, "heavy", e, p, step, POLICY_REGION_OLD);
		fputs(", ", out);
		put_region(out, "recent", e, p, step, POLICY_REGION_RECENT);
	}
	if (r->out) {
		fputs(", ", out);
		put_numbers(out, "out", r->out, sc->dim);
	}
}

static void put_metrics(FILE *out, const struct step_metrics *m)
{
	fprintf(out, "\"metrics\": {\"tokens\": %d, \"kv\": %ld", m->tokens, m->kv);
	if (m->has_out) {
		put_metric(out, "out_err", m->out_err);
		put_metric(out, "out_cos", m->out_cos);
	}
	put_metric(out, "attn_recall", m->attn_recall);
	fprintf(out, ", \"overlap_h2o\": %d}", m->overlap_h2o);
}

/* The full cache's object (design §5); for a group of several query
 * heads (FIRST .. FIRST + GROUP - 1), their mean weights and scores. */
static void put_full(FILE *out, const struct heads_run *run, int first, int group, double *mean)
{
	const struct scene *sc = &run->views[first];
	const struct cache_record *f = &run->rec[first].c[POLICY_FULL];
	if (group == 1) {
		put_numbers(out, "attn", f->attn, f->n_attended);
		fputs(", ", out);
		put_numbers(out, "scores", f->scores, f->n_attended);
		if (f->out) {
			fputs(", ", out);
			put_numbers(out, "out", f->out, sc->dim);
		}
		return;
	}
	for (int k = 0; k < 2; k++) {
		for (int j = 0; j < f->n_attended; j++) {
			mean[j] = 0.0;
			for (int h = first; h < first + group; h++) {
				const struct cache_record *r = &run->rec[h].c[POLICY_FULL];
				mean[j] += k == 0 ? r->attn[j] : r->scores[j];
			}
			mean[j] /= group;
		}
		if (k)
			fputs(", ", out);
		put_numbers(out, k == 0 ? "attn" : "scores", mean, f->n_attended);
	}
}

/* Policy P's object for one key/value head, whose group is the query heads
 * FIRST .. FIRST + GROUP - 1: the full cache as design §5 has it, H2O with
 * its regions, the others with their own figures. With several heads
 * every object carries its head's figures (over its group). */
static void put_policy(FILE *out, const struct heads_run *run, int first, int group,
                       enum policy_id p, double *mean)
{
	const struct scene *sc = &run->views[first];
	const struct step_record *rec = &run->rec[first];
	fputc('{', out);
	if (p == POLICY_FULL) {
		put_full(out, run, first, group, mean);
	} else {
		struct cache_record r = rec->c[p];
		if (group > 1)
			r.out = NULL; /* one per query head: in the figures only */
		put_cache(out, sc, run->e[first], p, &r, rec->step, p == POLICY_H2O);
	}
	if (run->count > 1 || (p != POLICY_H2O && p != POLICY_FULL)) {
		struct step_metrics m = rec->c[p].m;
		if (group > 1)
			heads_run_total_of(run, first, group, p, &m);
		fputs(", ", out);
		put_metrics(out, &m);
	}
	fputc('}', out);
}

/* Policy P's entry for layer L: the one kv head's object when the layer has
 * one query head, else a list of per-kv-head objects in order (per query
 * head for a policy with a cache per query head). */
static void put_layer(FILE *out, const struct scene *sc, const struct heads_run *run, int l,
                      enum policy_id p, double *mean)
{
	/* A cache per kv head, or per query head (heads_cache_group). */
	const int per = heads_per_layer(sc), group = heads_cache_group(sc, &run->b.settings, p),
	          kv = per / group;
	if (per > 1)
		fputc('[', out);
	for (int g = 0; g < kv; g++) {
		if (g)
			fputs(", ", out);
		put_policy(out, run, l * per + g * group, group, p, mean);
	}
	if (per > 1)
		fputc(']', out);
}

/* A model scene's step: per policy run on the model, the log-probability
 * of the text's next token (of its own choice when generating; null after
 * the last token) and its likeliest next token. */
static void put_model(FILE *out, const struct drop_result *d, int pos)
{
	fputs(", \"model\": {\"logprob\": {", out);
	for (int p = 0, k = 0; p < POLICY_COUNT; p++) {
		if (!d->p[p].ran)
			continue;
		fprintf(out, "%s\"%s\": ", k++ ? ", " : "", policies[p]->name);
		if (pos + 1 >= d->n)
			fputs("null", out);
		else
			json_shortest(out, pos + 1 < d->given ? d->p[p].logprob[pos]
			                                      : d->p[p].top_logprob[pos]);
	}
	fputs("}, \"top1\": {", out);
	for (int p = 0, k = 0; p < POLICY_COUNT; p++)
		if (d->p[p].ran)
			fprintf(out, "%s\"%s\": %d", k++ ? ", " : "", policies[p]->name,
			        d->p[p].top[pos]);
	/* Generating: the full cache's model's likeliest next token on the
	 * text each policy's run read (drop_full_top). */
	for (int p = 0, k = 0; d->generate && d->p[POLICY_FULL].full_top && p < POLICY_COUNT; p++)
		if (d->p[p].ran)
			fprintf(out, "%s\"%s\": %d", k++ ? ", " : "}, \"full_top1\": {",
			        policies[p]->name, drop_full_top(d, (enum policy_id)p, pos));
	/* KL(full || policy) of the next-token distributions, where every
	 * run read the same text (teacher-forced) and, generating, at each
	 * step that wrote a policy's own text (the full cache's model reading
	 * it: drop.h); else null. */
	fputs("}, \"kl\": {", out);
	for (int p = 0, k = 0; p < POLICY_COUNT; p++) {
		if (!d->p[p].ran)
			continue;
		fprintf(out, "%s\"%s\": ", k++ ? ", " : "", policies[p]->name);
		if (d->p[p].kl && (pos + 1 < d->given || (d->p[p].full_top && pos + 1 < d->n)))
			json_shortest(out, d->p[p].kl[pos]);
		else
			fputs("null", out);
	}
	fputs("}}", out);
}

static void put_step(FILE *out, const struct scene *sc, const struct heads_run *run, double *mean,
                     const struct drop_result *drop, unsigned shown,
                     const struct policy_settings *set)
{
	const struct step_record *rec = &run->rec[0];
	fprintf(out, "{\"step\": %d, \"pos\": %d, \"token\": ", rec->step, rec->pos);
	json_string(out, sc->text[rec->pos]);
	/* Spec §5's h2o and full first, then every other policy; with heads,
	 * each key holds a list of per-kv-head objects in head order, and with
	 * layers a list of those, one per layer. */
	enum policy_id order[POLICY_COUNT];
	int k = 0;
	order[k++] = POLICY_H2O;
	order[k++] = POLICY_FULL;
	for (int p = 0; p < POLICY_COUNT; p++)
		if (p != POLICY_H2O && p != POLICY_FULL && (shown & ENGINE_POLICY(p)))
			order[k++] = (enum policy_id)p;
	const int layers = sc->layers > 1 ? sc->layers : 1;
	for (int i = 0; i < k; i++) {
		const enum policy_id p = order[i];
		fprintf(out, ", \"%s\": ", policies[p]->name);
		if (layers > 1)
			fputc('[', out);
		for (int l = 0; l < layers; l++) {
			if (l)
				fputs(", ", out);
			put_layer(out, sc, run, l, p, mean);
		}
		if (layers > 1)
			fputc(']', out);
		if (p == POLICY_FULL) {
			/* Spec §5's figures (over every head when there are several). */
			struct step_metrics mh, mf;
			heads_run_total(run, POLICY_H2O, &mh);
			heads_run_total(run, POLICY_FULL, &mf);
			fprintf(out,
			        ", \"metrics\": {\"tokens_h2o\": %d, \"tokens_full\": %d, "
			        "\"kv_h2o\": %ld, \"kv_full\": %ld",
			        mh.tokens, mf.tokens, mh.kv, mf.kv);
			if (mh.has_out) {
				put_metric(out, "out_err", mh.out_err);
				put_metric(out, "out_cos", mh.out_cos);
			}
			put_metric(out, "attn_recall", mh.attn_recall);
			fputc('}', out);
		}
	}
	if (drop)
		put_model(out, drop, rec->pos);
	settings_print_json(out, set);
	fputs("}\n", out);
}

int trace_write_drop(const struct scene *sc, const struct budget *b, const struct drop_result *drop,
                     unsigned shown, const bool *steps, FILE *out, const struct progress *pr)
{
	struct heads_run run;
	/* The last step written: the engines need not go past it. */
	int last = sc->n;
	while (steps && last > 0 && !steps[last])
		last--;
	double *mean = malloc((size_t)sc->n * sizeof *mean);
	if (!mean || heads_run_init_only(&run, sc, b, report_policies_run(shown)) < 0) {
		free(mean);
		return -1;
	}
	while (heads_run_step(&run)) {
		const int t = run.rec[0].step;
		if (!steps || steps[t])
			put_step(out, sc, &run, mean, drop, shown, &b->settings);
		progress_tell(pr, t, last);
		if (t >= last)
			break;
	}
	heads_run_done(&run);
	free(mean);
	return ferror(out) ? -1 : 0;
}

int trace_write(const struct scene *sc, const struct budget *b, FILE *out,
                const struct progress *pr)
{
	return trace_write_drop(sc, b, NULL, ENGINE_ALL_POLICIES, NULL, out, pr);
}
