/*
 * app_lesson: what a lesson's experiment is measured against.
 *
 * In a scene that teaches ("lesson": true), the first budget change keeps
 * what H2O did at the budgets the scene opened with, before their
 * timelines go: every head's attention recall at every step built, and the
 * step at which it evicted each position. The step sentence then compares
 * the shown step with it (view_lesson.c), so that `{ {` in a lesson says
 * in words what losing the recent window did. Nothing here draws.
 *
 * And the lesson path: . and , open the next and the previous lesson in
 * place of the scene shown, each told against the memory the run may take
 * (app.max_memory) before it is built.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "h2o/cost.h"
#include "h2o/heads.h"
#include "h2o/lessons.h"
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

/* ---- opening a lesson ------------------------------------------------- */

void app_set_memory(struct app *app, double bytes, bool given)
{
	app->max_memory = bytes > 0 ? bytes : 0;
	app->max_given = given && bytes > 0;
}

struct budget app_lesson_budget(const struct scene *sc)
{
	/* As the app sets its budgets for a scene opened at its own, sinks at
	 * their default. */
	return budget_scene(sc, sc->heavy, sc->recent, -1);
}

void app_lesson_cost_words(const struct scene *sc, char *buf, size_t size)
{
	const int n = sc->n, heads = heads_count(sc);
	snprintf(buf, size, "%d token%s, %d head%s", n, n == 1 ? "" : "s", heads,
	         heads == 1 ? "" : "s");
}

double app_lesson_held(const struct app *app, int threads)
{
	if (app->scene == NULL)
		return 0;
	return cost_of(app->scene, &app->choice, COST_SCREENS, app->policies, NULL, 0, threads)
	        .bytes;
}

double app_lesson_bound(double max_memory, double held)
{
	if (!(max_memory > 0))
		return 0;
	/* Nothing left: a bound no lesson fits (0 would be none). */
	return max_memory - held > 1 ? max_memory - held : 1;
}

void app_lesson_refuse(struct app *app, int index, double needed, double held, const char *what)
{
	char need[32], have[32], beside[64] = "";
	/* What the lesson needs with what the scene shown holds meanwhile. */
	cost_format_bytes(needed + held, need, sizeof need);
	cost_format_bytes(app->max_memory, have, sizeof have);
	if (held > 0) {
		char h[32];
		cost_format_bytes(held, h, sizeof h);
		snprintf(beside, sizeof beside, "%s of it the scene shown holds; ", h);
	}
	/* The figures first: a long WHAT is what the notice's width cuts. */
	if (app->max_given)
		snprintf(
		        app->notice, sizeof app->notice,
		        "lesson %d not opened: it needs about %s of memory, more than --max-memory "
		        "%s allows (%s%s)",
		        index + 1, need, have, beside, what);
	else
		snprintf(app->notice, sizeof app->notice,
		         "lesson %d not opened: it needs about %s of memory, more than the %s free "
		         "(%s%s)",
		         index + 1, need, have, beside, what);
}

void app_lesson_swap(struct app *app, struct app *next, int index)
{
	next->chosen = app->chosen;
	next->policies = engine_policies_for(next->scene, app->chosen);
	next->lessons = app->lessons;
	next->lesson = index;
	next->lesson_hidden = app->lesson_hidden;
	next->cols = app->cols;
	next->rows = app->rows;
	next->ascii = app->ascii;
	next->strip_hidden = app->strip_hidden;
	/* The vectors stay open from one lesson to the next that has them. */
	next->vectors = app->vectors && app_has_vectors(next);
	next->max_memory = app->max_memory;
	next->max_given = app->max_given;
	app_done(app);
	*app = *next;
}

/* Builds at once when APP builds in the background: a thread per core. */
static int build_threads(const struct app *app)
{
	const long cores = app->background ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
	return cores > 0 ? (int)cores : 1;
}

/* Open lesson INDEX of the path in place of the scene shown, with its own
 * budgets, keeping the compared policy and how the lesson text shows. Its
 * cost is told before it is built: a lesson whose model or screens need
 * more memory than app.max_memory is not opened. On the terminal the
 * loading and the model's runs are a job (app_model.c) the tick finishes;
 * a lesson that cannot be opened leaves everything as it was, with a
 * notice saying why. */
static void open_lesson(struct app *app, int index)
{
	char path[4096], err[SCENE_ERROR_MAX];
	lessons_path(app->lessons, index, path, sizeof path);
	if (app->background) {
		if (app_model_open_lesson(app, path, index, build_threads(app)) != 0)
			snprintf(app->notice, sizeof app->notice,
			         app->job ? "lesson %d: another lesson is opening"
			                  : "lesson %d: out of memory while opening it",
			         index + 1);
		return;
	}
	struct scene *sc;
	double needed = 0;
	/* The scene shown is held until the lesson replaces it: the lesson
	 * has what it leaves of the bound. */
	const double held = app->max_memory > 0 ? app_lesson_held(app, build_threads(app)) : 0;
	const double bound = app_lesson_bound(app->max_memory, held);
	const struct scene_options opts = {.max_memory = bound, .needed = &needed};
	const int rc = scene_load_file_opts(path, &opts, &sc, err);
	if (rc == SCENE_TOO_LARGE) {
		app_lesson_refuse(app, index, needed, held, err);
		return;
	}
	if (rc != 0) {
		snprintf(app->notice, sizeof app->notice, "lesson %d: %.130s", index + 1, err);
		return;
	}
	const struct budget b = app_lesson_budget(sc);
	/* What the lesson will run: the policies chosen that its scene can
	 * (app_lesson_swap), not those the scene shown runs. */
	const double bytes =
	        cost_of(sc, &b, COST_SCREENS, app->chosen, NULL, 0, build_threads(app)).bytes;
	if (bound > 0 && bytes > bound) {
		app_lesson_cost_words(sc, err, sizeof err);
		app_lesson_refuse(app, index, bytes, held, err);
		scene_free(sc);
		return;
	}
	struct app next;
	if (app_init_only(&next, sc, &b, app->compare, false, app->chosen) != 0) {
		app_done(&next);
		scene_free(sc);
		snprintf(app->notice, sizeof app->notice,
		         "lesson %d: out of memory while opening it", index + 1);
		return;
	}
	next.owned = sc;
	char why[160];
	if (app_open_model(&next, sc, why, sizeof why) != 0) {
		app_done(&next);
		snprintf(app->notice, sizeof app->notice, "lesson %d: %.130s", index + 1, why);
		return;
	}
	app_lesson_swap(app, &next, index);
}

void app_lesson_by(struct app *app, int by)
{
	if (app->lesson < 0) {
		snprintf(
		        app->notice, sizeof app->notice,
		        "this scene is not a lesson of scenes/lessons.txt (h2o-tui alone opens the "
		        "first)");
		return;
	}
	const int to = app->lesson + by, count = app->lessons->count;
	if (to < 0 || to >= count) {
		snprintf(app->notice, sizeof app->notice, "lesson %d of %d is the %s",
		         app->lesson + 1, count, to < 0 ? "first" : "last");
		return;
	}
	open_lesson(app, to);
}
