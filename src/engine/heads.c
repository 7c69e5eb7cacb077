/*
 * heads: one head of a multi-head scene as a scene of its own.
 */
#include "h2o/heads.h"

#include <math.h>

int heads_count(const struct scene *sc)
{
	return sc->heads > 1 ? sc->heads : 1;
}

void heads_view(const struct scene *sc, int h, struct scene *view)
{
	*view = *sc;
	view->heads = 1;
	view->head_names = NULL;
	const size_t block = (size_t)sc->n * (size_t)sc->dim;
	const size_t off = (size_t)h * block;
	if (sc->q)
		view->q = sc->q + off;
	if (sc->k)
		view->k = sc->k + off;
	if (sc->v)
		view->v = sc->v + off;
	if (sc->attn)
		view->attn = sc->attn + (size_t)h * scene_attn_offset(sc->n);
}

const char *heads_name(const struct scene *sc, int h)
{
	return sc->head_names && sc->head_names[h] ? sc->head_names[h] : "";
}

int heads_run_init(struct heads_run *run, const struct scene *sc, const struct policy_budget *b)
{
	run->count = heads_count(sc);
	for (int h = 0; h < run->count; h++) {
		heads_view(sc, h, &run->views[h]);
		run->e[h] = engine_new(&run->views[h], b);
		if (!run->e[h]) {
			run->count = h;
			heads_run_done(run);
			return -1;
		}
	}
	return 0;
}

void heads_run_done(struct heads_run *run)
{
	for (int h = 0; h < run->count; h++)
		engine_free(run->e[h]);
	run->count = 0;
}

bool heads_run_step(struct heads_run *run)
{
	bool more = true;
	for (int h = 0; h < run->count; h++)
		more = engine_step(run->e[h], &run->rec[h]) && more;
	return more;
}

void heads_run_total(const struct heads_run *run, enum policy_id p, struct step_metrics *total)
{
	const int dim = run->views[0].dim;
	double diff = 0.0, aa = 0.0, ff = 0.0, af = 0.0, recall = 0.0;
	*total = (struct step_metrics){.has_out = run->rec[0].c[p].m.has_out};
	for (int h = 0; h < run->count; h++) {
		const struct cache_record *r = &run->rec[h].c[p],
		                          *full = &run->rec[h].c[POLICY_FULL];
		total->tokens += r->m.tokens;
		total->kv += r->m.kv;
		total->overlap_h2o += r->m.overlap_h2o;
		recall += r->m.attn_recall;
		for (int k = 0; r->out && k < dim; k++) {
			const double a = r->out[k], f = full->out[k];
			diff += (a - f) * (a - f);
			aa += a * a;
			ff += f * f;
			af += a * f;
		}
	}
	total->attn_recall = recall / run->count;
	total->out_err = sqrt(diff);
	if (aa == 0.0 || ff == 0.0)
		total->out_cos = aa == ff ? 1.0 : 0.0;
	else
		total->out_cos = af / (sqrt(aa) * sqrt(ff));
}
