/*
 * app_lesson: what a lesson's experiment is measured against.
 *
 * In a scene that teaches ("lesson": true), the first budget change keeps
 * what H2O did at the budgets the scene opened with, before their
 * timelines go: every head's attention recall at every step built, and the
 * step at which it evicted each position. The step sentence then compares
 * the shown step with it (view_lesson.c), so that `{ {` in a lesson says
 * in words what losing the recent window did. Nothing here draws.
 */
#include <stdlib.h>

#include "h2o/scene.h"
#include "h2o/timeline.h"
#include "app_impl.h"

void app_lesson_keep_baseline(struct app *app)
{
	const struct scene *sc = app->scene;
	if (!sc->lesson || app->baseline)
		return;
	struct app_baseline *base = calloc(1, sizeof *base);
	const size_t n = (size_t)sc->n, heads = (size_t)app->heads;
	if (!base)
		return;
	base->heavy = app->b.heavy;
	base->recent = app->b.recent;
	base->built = calloc(heads, sizeof *base->built);
	base->recall = calloc(heads * (n + 1), sizeof *base->recall);
	base->evicted_at = calloc(heads * n, sizeof *base->evicted_at);
	if (!base->built || !base->recall || !base->evicted_at) {
		app_lesson_free(base);
		return;
	}
	for (size_t h = 0; h < heads; h++) {
		const struct timeline *tl = app->tls[h];
		const int built = timeline_built(tl);
		base->built[h] = built;
		for (int t = 1; t <= built; t++)
			base->recall[h * (n + 1) + (size_t)t] =
			        timeline_summary(tl, t)->c[POLICY_H2O].m.attn_recall;
		for (size_t pos = 0; pos < n; pos++)
			base->evicted_at[h * n + pos] =
			        timeline_evicted_at(tl, POLICY_H2O, (int)pos);
	}
	app->baseline = base;
}

void app_lesson_free(struct app_baseline *base)
{
	if (!base)
		return;
	free(base->built);
	free(base->recall);
	free(base->evicted_at);
	free(base);
}
