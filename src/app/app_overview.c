/*
 * app_overview: the whole model's figures at the shown step, for the
 * overview (design §2, the rule of heads_run_total_of): tokens and KV
 * numbers summed over every layer and kv head (a kv head's cache counted
 * once, by the first query head of its group, not once per query head
 * reading it; a policy with a cache per query head, pyramidkv with
 * granularity=query_head, counted for each), output error and cosine over every query head's output
 * side by side, attention recall averaged over the query heads.
 *
 * The timelines keep each head's figures but not the full cache's output
 * at a step (timeline_seek_lite), so it is recomputed here from the full
 * cache's weights, o_F = sum_j w_j v_j in position order, as §2 defines
 * it. The view only reads what this leaves in the app.
 */
#include <math.h>
#include <stdlib.h>

#include "h2o/heads.h"
#include "h2o/scene.h"
#include "h2o/timeline.h"
#include "app_impl.h"

struct sums {
	double diff, aa, ff, af, recall;
};

void app_overview_settle(struct app *app)
{
	const struct scene *sc = app->scene;
	const int t = app->step, dim = sc->dim;
	/* The query heads that share a cache, per policy (heads_cache_group). */
	int group[POLICY_COUNT];
	for (int p = 0; p < POLICY_COUNT; p++)
		group[p] = heads_cache_group(sc, &app->choice.settings, (enum policy_id)p);
	struct sums sums[POLICY_COUNT] = {{0}};
	double *full = sc->v ? malloc((size_t)dim * sizeof *full) : NULL;
	for (int p = 0; p < POLICY_COUNT; p++)
		app->overview_total[p] = (struct step_metrics){.has_out = full != NULL};
	app->overview_heads = 0;
	if (t == 0 || (sc->v && !full)) {
		free(full);
		return;
	}
	for (int h = 0; h < app->heads; h++) {
		struct timeline *tl = app->tls[h];
		if (timeline_built(tl) < t)
			continue; /* its build has not reached the step yet */
		const struct step_record *rec;
		timeline_seek_lite(tl, t, &rec);
		const struct scene *view = &app->views[h];
		if (full) {
			for (int k = 0; k < dim; k++)
				full[k] = 0.0;
			for (int j = 0; j < t; j++) {
				const double w = timeline_weight(tl, POLICY_FULL, t, j);
				const double *v = view->v + (size_t)j * (size_t)dim;
				for (int k = 0; k < dim; k++)
					full[k] += w * v[k];
			}
		}
		app->overview_heads++;
		for (int p = 0; p < POLICY_COUNT; p++) {
			const struct cache_record *r = &rec->c[p];
			struct step_metrics *total = &app->overview_total[p];
			if (view->view_head % group[p] == 0) {
				total->tokens += r->m.tokens;
				total->kv += r->m.kv;
				total->overlap_h2o += r->m.overlap_h2o;
			}
			sums[p].recall += r->m.attn_recall;
			/* The full cache's own output is the one recomputed. */
			const double *out = p == POLICY_FULL ? full : r->out;
			for (int k = 0; full && out && k < dim; k++) {
				const double a = out[k], f = full[k];
				sums[p].diff += (a - f) * (a - f);
				sums[p].aa += a * a;
				sums[p].ff += f * f;
				sums[p].af += a * f;
			}
		}
	}
	free(full);
	for (int p = 0; p < POLICY_COUNT && app->overview_heads > 0; p++) {
		struct step_metrics *total = &app->overview_total[p];
		const struct sums *s = &sums[p];
		total->attn_recall = s->recall / app->overview_heads;
		total->out_err = sqrt(s->diff);
		if (s->aa == 0.0 || s->ff == 0.0)
			total->out_cos = s->aa == s->ff ? 1.0 : 0.0;
		else
			total->out_cos = s->af / (sqrt(s->aa) * sqrt(s->ff));
	}
}
