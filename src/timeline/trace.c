/*
 * trace: design §5, one JSON object per step.
 */
#include "h2o/trace.h"

#include "h2o/cost.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/engine.h"
#include "h2o/heads.h"
#include "h2o/scene.h"
#include "h2o/text.h"

/* The shortest %.Ng (N = 15..17) that reads back as X. */
static void put_number(FILE *out, double x)
{
	char buf[32];
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(buf, sizeof buf, "%.*g", digits, x);
		if (strtod(buf, NULL) == x)
			break;
	}
	fputs(buf, out);
}

static void file_sink(void *out, const char *p, size_t n)
{
	fwrite(p, 1, n, out);
}

/* A JSON string that reads back as the token's text: valid UTF-8 passes
 * through, invalid bytes become U+FFFD, C0 and C1 control characters and
 * DEL are escaped. C1 controls are valid JSON, but a terminal that shows
 * the trace may obey them (0x9B is CSI). */
static void put_string(FILE *out, const char *s)
{
	fputc('"', out);
	text_escape(s, strlen(s), SIZE_MAX, TEXT_ESCAPE_JSON, file_sink, out);
	fputc('"', out);
}

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
		put_number(out, v[i]);
	}
	fputc(']', out);
}

static void put_metric(FILE *out, const char *key, double v)
{
	fprintf(out, ", \"%s\": ", key);
	put_number(out, v);
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
	put_numbers(out, "attn", r->attn, r->n_attended);
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

/* The full cache's object (design §5). */
static void put_full(FILE *out, const struct scene *sc, const struct cache_record *f)
{
	put_numbers(out, "attn", f->attn, f->n_attended);
	fputs(", ", out);
	put_numbers(out, "scores", f->scores, f->n_attended);
	if (f->out) {
		fputs(", ", out);
		put_numbers(out, "out", f->out, sc->dim);
	}
}

/* Policy P's object for one head: the full cache as design §5 has it, H2O
 * with its regions, the others with their own figures. With several heads
 * every object carries its head's figures. */
static void put_policy(FILE *out, const struct heads_run *run, int h, enum policy_id p)
{
	const struct scene *sc = &run->views[h];
	const struct step_record *rec = &run->rec[h];
	fputc('{', out);
	if (p == POLICY_FULL)
		put_full(out, sc, &rec->c[p]);
	else
		put_cache(out, sc, run->e[h], p, &rec->c[p], rec->step, p == POLICY_H2O);
	if (run->count > 1 || (p != POLICY_H2O && p != POLICY_FULL)) {
		fputs(", ", out);
		put_metrics(out, &rec->c[p].m);
	}
	fputc('}', out);
}

static void put_step(FILE *out, const struct scene *sc, const struct heads_run *run)
{
	const struct step_record *rec = &run->rec[0];
	fprintf(out, "{\"step\": %d, \"pos\": %d, \"token\": ", rec->step, rec->pos);
	put_string(out, sc->text[rec->pos]);
	/* Spec §5's h2o and full first, then every other policy; with heads,
	 * each key holds a list of per-head objects in head order. */
	enum policy_id order[POLICY_COUNT];
	int k = 0;
	order[k++] = POLICY_H2O;
	order[k++] = POLICY_FULL;
	for (int p = 0; p < POLICY_COUNT; p++)
		if (p != POLICY_H2O && p != POLICY_FULL)
			order[k++] = (enum policy_id)p;
	for (int i = 0; i < POLICY_COUNT; i++) {
		const enum policy_id p = order[i];
		fprintf(out, ", \"%s\": ", policies[p]->name);
		if (run->count > 1)
			fputc('[', out);
		for (int h = 0; h < run->count; h++) {
			if (h)
				fputs(", ", out);
			put_policy(out, run, h, p);
		}
		if (run->count > 1)
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
	fputs("}\n", out);
}

int trace_write(const struct scene *sc, const struct policy_budget *b, FILE *out,
                const struct progress *pr)
{
	struct heads_run run;
	if (heads_run_init(&run, sc, b) < 0)
		return -1;
	while (heads_run_step(&run)) {
		put_step(out, sc, &run);
		progress_tell(pr, run.rec[0].step, sc->n);
	}
	heads_run_done(&run);
	return ferror(out) ? -1 : 0;
}
