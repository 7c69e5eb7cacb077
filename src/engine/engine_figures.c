/*
 * engine_figures: the figures of one cache at one step (design §2
 * "Figures"), measured against the full cache and H2O.
 */
#include <math.h>

#include "engine_impl.h"
#include "h2o/scene.h"

/* Positions held by both ascending arrays. */
static int overlap(const int *a, int na, const int *b, int nb)
{
	int i = 0, j = 0, both = 0;
	while (i < na && j < nb) {
		if (a[i] == b[j])
			both++, i++, j++;
		else if (a[i] < b[j])
			i++;
		else
			j++;
	}
	return both;
}

void figures_measure(const struct engine *e, enum policy_id p, struct cache_record *r,
                     const struct cache_record *full, const struct cache_record *same,
                     bool same_kept)
{
	const struct scene *sc = e->sc;
	struct step_metrics *m = &r->m;
	if (same) {
		/* The same weights and output over the same positions. */
		*m = same->m;
		m->tokens = engine_len(e, p);
		m->kv = (long)m->tokens * 2 * sc->dim;
		if (!same_kept && runs(e, POLICY_H2O))
			m->overlap_h2o = p == POLICY_H2O
			                         ? m->tokens
			                         : overlap(engine_positions(e, p), m->tokens,
			                                   engine_positions(e, POLICY_H2O),
			                                   engine_len(e, POLICY_H2O));
		return;
	}
	m->tokens = engine_len(e, p);
	m->kv = (long)m->tokens * 2 * sc->dim;
	if (!runs(e, POLICY_H2O))
		m->overlap_h2o = 0;
	else if (p == POLICY_H2O)
		m->overlap_h2o = m->tokens;
	else if (p == POLICY_FULL)
		/* The full cache holds every position H2O may hold. */
		m->overlap_h2o = engine_len(e, POLICY_H2O);
	else
		m->overlap_h2o =
		        overlap(engine_positions(e, p), m->tokens, engine_positions(e, POLICY_H2O),
		                engine_len(e, POLICY_H2O));
	m->has_out = sc->v != NULL;
	if (!full) {
		m->attn_recall = m->out_err = m->out_cos = NAN;
		return;
	}
	double recall = 0.0;
	if (p == POLICY_FULL) {
		/* The same sum, of every weight in position order, made
		 * while the weights were: a chain of n adds here would cost
		 * more than the rest of the step. */
		recall = e->f.wsum[e->t - 1 - e->f.first];
	} else {
		for (int i = 0; i < r->n_attended; i++)
			recall += full->attn[r->attended[i]];
	}
	m->attn_recall = recall;
	m->out_err = 0.0;
	m->out_cos = 1.0;
	if (!m->has_out)
		return;
	double diff = 0.0, hh = 0.0, ff = 0.0, hf = 0.0;
	for (int k = 0; k < sc->dim; k++) {
		const double a = r->out[k], b = full->out[k];
		diff += (a - b) * (a - b);
		hh += a * a;
		ff += b * b;
		hf += a * b;
	}
	m->out_err = sqrt(diff);
	if (hh == 0.0 || ff == 0.0)
		m->out_cos = hh == ff ? 1.0 : 0.0;
	else
		m->out_cos = hf / (sqrt(hh) * sqrt(ff));
}
