/*
 * app: the update function. Every change of what the user sees starts here.
 */
#include "h2o/app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h2o/heads.h"
#include "h2o/plan.h"
#include "h2o/lessons.h"
#include "h2o/scene.h"
#include "h2o/timeline.h"
#include "app_impl.h"

static const int speeds_ms[APP_SPEED_COUNT] = APP_SPEEDS;

/* The monotonic clock in seconds: when builds began and ticks came, for
 * the time a build has left (the view only reads what the app keeps). */
static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double app_time_left(const struct app *app)
{
	const int built = app_built(app), n = app->scene->n;
	const double elapsed = app->clock - app->build_began;
	if (built <= 0 || built >= n || elapsed < 1.0 || !timeline_building(app->tl))
		return -1;
	/* Step t costs the full cache t keys and each cache that evicts at
	 * most B + N (N the interval, design §2): steps 1..t cost about
	 * t^2 / 2 + (POLICY_COUNT - 1) * (B + N) * t keys, and the rest of the
	 * scene what that leaves. */
	const double cap = (double)app->b.heavy + app->b.recent + policy_interval(&app->b);
	const double per = (POLICY_COUNT - 1) * (cap < n ? cap : n);
	const double done = (double)built * built / 2 + per * built;
	const double all = (double)n * n / 2 + per * n;
	return elapsed * (all - done) / done;
}

/* Every head's timeline for budget B and its PLANS into TLS (and, in the
 * background, *POOL, which owns them); on failure nothing is left
 * allocated. */
static int build_timelines(const struct app *app, const struct budget *b,
                           struct engine_plans *plans, struct timeline **tls,
                           struct timeline_pool **pool)
{
	*pool = NULL;
	if (app->background) {
		*pool = timeline_pool_start_only(app->views, app->heads, b, plans, app->head,
		                                 app->policies);
		if (!*pool)
			return -1;
		for (int h = 0; h < app->heads; h++)
			tls[h] = timeline_pool_get(*pool, h);
		return 0;
	}
	for (int h = 0; h < app->heads; h++) {
		tls[h] = timeline_new_only(&app->views[h], b, plans, app->policies);
		if (!tls[h]) {
			/* Each freed one forgotten too: the caller's app_done frees
			 * what TLS still holds. */
			while (h-- > 0) {
				timeline_free(tls[h]);
				tls[h] = NULL;
			}
			return -1;
		}
	}
	return 0;
}

/* Free timelines TLS of the heads (and their POOL, which owns them), and
 * then the PLANS they shared. */
static void free_timelines(const struct app *app, struct timeline **tls, struct timeline_pool *pool,
                           struct engine_plans *plans)
{
	if (pool)
		timeline_pool_free(pool);
	else
		for (int h = 0; tls && h < app->heads; h++)
			timeline_free(tls[h]);
	free(tls);
	engine_plans_free(plans);
}

/* Seek the shown step: what the view reads (app.h, shown and list). */
static void settle(struct app *app)
{
	if (app->overview)
		app_overview_settle(app);
	app->shown = timeline_seek_lite(app->tl, app->step, &app->shown_rec);
	app_list_build(app);
}

static int init(struct app *app, const struct scene *scene, const struct budget *b,
                enum policy_id compare, bool background, unsigned shown)
{
	memset(app, 0, sizeof *app);
	app->background = background;
	app->goal = -1;
	app->scene = scene;
	app->choice = *b;
	app->b = policy_budget_of(scene, b);
	/* The budget's layer-wide plans, shared by every head's engines. */
	app->plans = engine_plans_new(scene, b);
	if (!app->plans)
		return -1;
	app->compare = compare;
	app->chosen = shown & ENGINE_ALL_POLICIES;
	app->policies = engine_policies_for(scene, shown);
	app->selected = -1;
	app->heat_anchor = -1;
	app->lesson = -1;
	app->metric = scene->v ? METRIC_OUT_ERR : METRIC_RECALL;
	app->speed = APP_SPEED_DEFAULT;
	app->heads = heads_count(scene);
	app->views = calloc((size_t)app->heads, sizeof *app->views);
	app->tls = calloc((size_t)app->heads, sizeof *app->tls);
	const size_t n = scene->n > 0 ? (size_t)scene->n : 1;
	app->list.pos = malloc(n * sizeof *app->list.pos);
	app->list.index = malloc(n * sizeof *app->list.index);
	app->scratch = malloc(n * sizeof *app->scratch);
	if (!app->views || !app->tls || !app->list.pos || !app->list.index || !app->scratch)
		return -1;
	for (size_t i = 0; i < n; i++)
		app->list.index[i] = -1;
	for (int h = 0; h < app->heads; h++)
		heads_view(scene, h, &app->views[h]);
	if (build_timelines(app, &app->choice, app->plans, app->tls, &app->pool) < 0)
		return -1;
	app->tl = app->tls[0];
	settle(app);
	/* A tick comes at least once: the first frame may show a build
	 * that has ended since. */
	app->was_building = background;
	app->build_began = app->clock = seconds_now();
	return 0;
}

int app_init(struct app *app, const struct scene *scene, int heavy, int recent, int sinks,
             enum policy_id compare)
{
	const struct budget b = budget_scene(scene, heavy, recent, sinks);
	return init(app, scene, &b, compare, false, ENGINE_ALL_POLICIES);
}

int app_init_background(struct app *app, const struct scene *scene, int heavy, int recent,
                        int sinks, enum policy_id compare)
{
	const struct budget b = budget_scene(scene, heavy, recent, sinks);
	return init(app, scene, &b, compare, true, ENGINE_ALL_POLICIES);
}

int app_init_only(struct app *app, const struct scene *scene, const struct budget *b,
                  enum policy_id compare, bool background, unsigned policies)
{
	return init(app, scene, b, compare, background, policies);
}

bool app_has_vectors(const struct app *app)
{
	const struct scene *sc = &app->views[app->head];
	return (sc->q && sc->k) || sc->v;
}

void app_set_policies(struct app *app, unsigned policies)
{
	app->chosen = policies & ENGINE_ALL_POLICIES;
	app->policies = engine_policies_for(app->scene, policies);
}

int app_built(const struct app *app)
{
	return timeline_built(app->tl);
}

bool app_building(const struct app *app)
{
	for (int h = 0; h < app->heads; h++)
		if (timeline_building(app->tls[h]))
			return true;
	return false;
}

void app_set_lessons(struct app *app, const struct lessons *lessons, int index)
{
	app->lessons = lessons;
	app->lesson = lessons ? index : -1;
}

void app_done(struct app *app)
{
	free_timelines(app, app->tls, app->pool, app->plans);
	app->plans = NULL;
	app_model_done(app);
	free(app->views);
	app->pool = NULL;
	free(app->list.pos);
	free(app->list.index);
	free(app->scratch);
	app_lesson_free(app->baseline);
	app->baseline = NULL;
	app->tls = NULL;
	app->views = NULL;
	app->tl = NULL;
	app->list = (struct app_list){0};
	app->scratch = NULL;
	/* Last: the timelines (and their builder threads) read it. */
	scene_free(app->owned);
	app->owned = NULL;
}

static int clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Go to STEP; one the timelines have not reached yet becomes the goal,
 * which app_tick follows as they build. */
static void go(struct app *app, int step)
{
	step = clamp(step, 0, app->scene->n);
	const int built = app_built(app);
	app->goal = step > built ? step : -1;
	app->step = step > built ? built : step;
}

/* New budgets: a new timeline from step 0, shown at the same step. */
static void rebudget(struct app *app, int heavy, int recent, bool reset)
{
	const int max = app->scene->n > SCENE_MAX_BUDGET ? SCENE_MAX_BUDGET : app->scene->n;
	heavy = clamp(heavy, 0, max);
	recent = clamp(recent, 0, max);
	if (heavy + recent < 1) {
		snprintf(app->notice, sizeof app->notice,
		         "heavy + recent must be at least 1: the cache needs a slot");
		return;
	}
	if (heavy == app->b.heavy && recent == app->b.recent) {
		if (reset)
			snprintf(app->notice, sizeof app->notice,
			         "budgets are the scene's own already: heavy %d + recent %d", heavy,
			         recent);
		else
			snprintf(app->notice, sizeof app->notice, "budget is already at its limit");
		return;
	}
	/* The same choice with new heavy and recent: the sinks asked for are
	 * capped below the new B (policy_sinks_for). */
	struct budget b = app->choice;
	b.heavy = heavy;
	b.recent = recent;
	struct timeline **tls = calloc((size_t)app->heads, sizeof *tls);
	struct timeline_pool *pool = NULL;
	struct engine_plans *plans = tls ? engine_plans_new(app->scene, &b) : NULL;
	if (!plans || build_timelines(app, &b, plans, tls, &pool) < 0) {
		free(tls);
		engine_plans_free(plans);
		snprintf(app->notice, sizeof app->notice, "out of memory: budgets unchanged");
		return;
	}
	app_lesson_keep_baseline(app);
	free_timelines(app, app->tls, app->pool, app->plans);
	app->plans = plans;
	app->tls = tls;
	app->pool = pool;
	app->tl = tls[app->head];
	app->list.valid = false;
	app->choice = b;
	app->b = policy_budget_of(app->scene, &b);
	app->was_building = app->background;
	app->build_began = app->clock = seconds_now();
	go(app, app->goal >= 0 ? app->goal : app->step);
	if (app_model_measure(app) != 0) {
		snprintf(app->notice, sizeof app->notice,
		         "out of memory: the model's figures are still the old budgets'");
		return;
	}
	snprintf(app->notice, sizeof app->notice,
	         reset ? "budgets back to the scene's own, heavy %d + recent %d: recomputed"
	               : "budgets now heavy %d + recent %d: recomputed",
	         heavy, recent);
}

/* The key's change of state (app_keys.c), then what it asked for that
 * loads files or builds timelines, then the shown step sought again. */
unsigned app_finish(struct app *app, unsigned flags, const struct app_intent *want)
{
	if (want->what == APP_WANT_BUDGETS)
		rebudget(app, want->heavy, want->recent, want->reset);
	else if (want->what == APP_WANT_LESSON)
		app_lesson_by(app, want->lesson_by);
	settle(app);
	return flags;
}

unsigned app_key(struct app *app, uint32_t key)
{
	struct app_intent want;
	const unsigned flags = app_keys_apply(app, key, &want);
	return app_finish(app, flags, &want);
}

void app_go(struct app *app, int step)
{
	go(app, step);
}

void app_goto(struct app *app, int step)
{
	go(app, step);
	settle(app);
}

static unsigned tick(struct app *app)
{
	/* The model's job, finished, put in place (a lesson may open). */
	const unsigned job = app_model_poll(app);
	app->clock = seconds_now();
	const bool building = app_building(app);
	const int built = app_built(app);
	/* While a build runs, and once after, its progress is shown. */
	unsigned flags = building || app->was_building ? APP_REDRAW | job : job;
	app->was_building = building;
	if (app->goal >= 0) {
		flags = APP_REDRAW;
		app->step = app->goal < built ? app->goal : built;
		if (app->step == app->goal)
			app->goal = -1;
		else if (!building) {
			snprintf(app->notice, sizeof app->notice,
			         "out of memory: the timeline ends at step %d", built);
			app->goal = -1;
		}
	}
	if (app->playing) {
		/* At the edge of the build, playing waits for it. */
		if (app->step < built)
			app->step++;
		if (app->step >= app->scene->n)
			app->playing = false;
		flags = APP_REDRAW;
	}
	return flags;
}

unsigned app_tick(struct app *app)
{
	const unsigned flags = tick(app);
	settle(app);
	return flags;
}

bool app_ticking(const struct app *app)
{
	/* One more tick after a build ends, to show it ended. */
	return app->playing || app->goal >= 0 || app_building(app) || app->was_building ||
	       app->job != NULL;
}

int app_tick_ms(const struct app *app)
{
	if (!app->playing)
		return APP_BUILD_TICK_MS;
	return speeds_ms[clamp(app->speed, 0, APP_SPEED_COUNT - 1)];
}
