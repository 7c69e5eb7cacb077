/*
 * app: the update function. Every change of what the user sees starts here.
 */
#include "h2o/app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2o/heads.h"
#include "h2o/keys.h"
#include "h2o/scene.h"
#include "h2o/timeline.h"

static const struct app_binding bindings[] = {
#define X(key, action) {key, ACT_##action},
        APP_BINDINGS(X)
#undef X
};

static const char *const action_help[ACT_COUNT] = {[ACT_NONE] = "",
#define X(name, help) [ACT_##name] = help,
                                                   APP_ACTIONS(X)
#undef X
};

static const int speeds_ms[APP_SPEED_COUNT] = APP_SPEEDS;

const struct app_binding *app_bindings(size_t *count)
{
	*count = sizeof bindings / sizeof bindings[0];
	return bindings;
}

enum app_action app_action_of(uint32_t key)
{
	for (size_t i = 0; i < sizeof bindings / sizeof bindings[0]; i++)
		if (bindings[i].key == key)
			return bindings[i].action;
	return ACT_NONE;
}

const char *app_action_help(enum app_action action)
{
	if (action == ACT_COMPARE) {
		static _Thread_local char help[256];
		char names[192];
		snprintf(help, sizeof help, "%s: %s", action_help[action],
		         app_comparable_names(names, sizeof names));
		return help;
	}
	return action >= 0 && action < ACT_COUNT ? action_help[action] : "";
}

bool app_comparable(enum policy_id p)
{
	return p != POLICY_H2O;
}

const char *app_comparable_names(char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int p = 0; p < POLICY_COUNT && len < size; p++)
		if (app_comparable((enum policy_id)p))
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
			                        policies[p]->name);
	return buf;
}

static struct policy_budget budget_of(int heavy, int recent, int sinks_given, int n)
{
	return (struct policy_budget){
	        .heavy = heavy,
	        .recent = recent,
	        .sinks = policy_sinks_for(sinks_given, heavy + recent),
	        .n = n,
	};
}

/* Every head's timeline for budget B into TLS (and, in the background,
 * *POOL, which owns them); on failure nothing is left allocated. */
static int build_timelines(const struct app *app, const struct policy_budget *b,
                           struct timeline **tls, struct timeline_pool **pool)
{
	*pool = NULL;
	if (app->background) {
		*pool = timeline_pool_start(app->views, app->heads, b, app->head);
		if (!*pool)
			return -1;
		for (int h = 0; h < app->heads; h++)
			tls[h] = timeline_pool_get(*pool, h);
		return 0;
	}
	for (int h = 0; h < app->heads; h++) {
		tls[h] = timeline_new(&app->views[h], b);
		if (!tls[h]) {
			while (h-- > 0)
				timeline_free(tls[h]);
			return -1;
		}
	}
	return 0;
}

/* Free timelines TLS of the heads (and their POOL, which owns them). */
static void free_timelines(const struct app *app, struct timeline **tls, struct timeline_pool *pool)
{
	if (pool)
		timeline_pool_free(pool);
	else
		for (int h = 0; tls && h < app->heads; h++)
			timeline_free(tls[h]);
	free(tls);
}

/* Seek the shown step: what the view reads (app.h, shown). */
static void settle(struct app *app)
{
	app->shown = timeline_seek_lite(app->tl, app->step, &app->shown_rec);
}

static int init(struct app *app, const struct scene *scene, int heavy, int recent, int sinks,
                enum policy_id compare, bool background)
{
	memset(app, 0, sizeof *app);
	app->background = background;
	app->goal = -1;
	app->scene = scene;
	app->sinks_given = sinks;
	app->b = budget_of(heavy, recent, sinks, scene->n);
	app->compare = compare;
	app->selected = -1;
	app->heat_anchor = -1;
	app->metric = scene->v ? METRIC_OUT_ERR : METRIC_RECALL;
	app->speed = APP_SPEED_DEFAULT;
	app->heads = heads_count(scene);
	app->views = calloc((size_t)app->heads, sizeof *app->views);
	app->tls = calloc((size_t)app->heads, sizeof *app->tls);
	if (!app->views || !app->tls)
		return -1;
	for (int h = 0; h < app->heads; h++)
		heads_view(scene, h, &app->views[h]);
	if (build_timelines(app, &app->b, app->tls, &app->pool) < 0)
		return -1;
	app->tl = app->tls[0];
	settle(app);
	/* A tick comes at least once: the first frame may show a build
	 * that has ended since. */
	app->was_building = background;
	return 0;
}

int app_init(struct app *app, const struct scene *scene, int heavy, int recent, int sinks,
             enum policy_id compare)
{
	return init(app, scene, heavy, recent, sinks, compare, false);
}

int app_init_background(struct app *app, const struct scene *scene, int heavy, int recent,
                        int sinks, enum policy_id compare)
{
	return init(app, scene, heavy, recent, sinks, compare, true);
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

void app_done(struct app *app)
{
	free_timelines(app, app->tls, app->pool);
	free(app->views);
	app->pool = NULL;
	app->tls = NULL;
	app->views = NULL;
	app->tl = NULL;
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
static void rebudget(struct app *app, int heavy, int recent)
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
		snprintf(app->notice, sizeof app->notice, "budget is already at its limit");
		return;
	}
	const struct policy_budget b = budget_of(heavy, recent, app->sinks_given, app->scene->n);
	struct timeline **tls = calloc((size_t)app->heads, sizeof *tls);
	struct timeline_pool *pool = NULL;
	if (!tls || build_timelines(app, &b, tls, &pool) < 0) {
		free(tls);
		snprintf(app->notice, sizeof app->notice, "out of memory: budgets unchanged");
		return;
	}
	free_timelines(app, app->tls, app->pool);
	app->tls = tls;
	app->pool = pool;
	app->tl = tls[app->head];
	app->b = b;
	app->was_building = app->background;
	go(app, app->goal >= 0 ? app->goal : app->step);
	snprintf(app->notice, sizeof app->notice, "budgets now heavy %d + recent %d: recomputed",
	         heavy, recent);
}

/*
 * The positions of the H2O panel at the current step, in its order: the
 * kept heavy hitters and recent tokens by position, then the evicted ones,
 * latest first. Returns how many were written to ORDER (room for n).
 */
static int panel_order(const struct app *app, int *order)
{
	const int t = app->step;
	int count = 0;
	for (int r = REGION_OLD; r <= REGION_RECENT; r++)
		for (int pos = 0; pos < t; pos++)
			if (timeline_region(app->tl, POLICY_H2O, t, pos) == (enum region)r)
				order[count++] = pos;
	for (int i = timeline_evictions_until(app->tl, POLICY_H2O, t) - 1; i >= 0; i--)
		order[count++] = timeline_eviction(app->tl, POLICY_H2O, i)->pos;
	return count;
}

/* Move the selection by DELTA through the panel's order. */
static void select_by(struct app *app, int delta)
{
	int *order = malloc((size_t)app->scene->n * sizeof *order);
	if (!order) {
		snprintf(app->notice, sizeof app->notice, "out of memory");
		return;
	}
	const int count = panel_order(app, order);
	if (count == 0) {
		snprintf(app->notice, sizeof app->notice, "no token yet: step forward first");
		free(order);
		return;
	}
	int at = -1;
	for (int i = 0; i < count; i++)
		if (order[i] == app->selected)
			at = i;
	if (at < 0)
		at = delta > 0 ? 0 : count - 1; /* start from an end */
	else
		at = clamp(at + delta, 0, count - 1);
	app->selected = order[at];
	free(order);
}

/* Keys while a step number is being typed. Returns true when handled. */
static bool entry_key(struct app *app, uint32_t key)
{
	size_t len = strlen(app->entry);
	if (key >= '0' && key <= '9') {
		if (len + 1 < sizeof app->entry && len < 9) {
			app->entry[len] = (char)key;
			app->entry[len + 1] = '\0';
		}
		return true;
	}
	if (key == KEYC_BACKSPACE) {
		if (len > 0)
			app->entry[len - 1] = '\0';
		else
			app->entering = false;
		return true;
	}
	if (key == KEYC_ENTER) {
		app->entering = false;
		if (len == 0)
			return true;
		long want = 0;
		for (size_t i = 0; i < len; i++)
			want = want * 10 + (app->entry[i] - '0');
		if (want > app->scene->n)
			snprintf(app->notice, sizeof app->notice,
			         "no step %ld: the last step is %d", want, app->scene->n);
		go(app, (int)(want > app->scene->n ? app->scene->n : want));
		return true;
	}
	if (key == KEYC_ESC) {
		app->entering = false;
		return true;
	}
	/* Any other key ends the entry and does what it always does. */
	app->entering = false;
	return false;
}

static unsigned apply_key(struct app *app, uint32_t key)
{
	app->notice[0] = '\0';
	if (key == KEYC_RESIZE)
		return APP_REDRAW;
	if (app->entering && entry_key(app, key))
		return APP_REDRAW;
	const enum app_action action = app_action_of(key);
	if (app->help) {
		/* Help is modal: any key closes it, q still quits. */
		app->help = false;
		return action == ACT_QUIT && key != KEYC_ESC ? APP_QUIT : APP_REDRAW;
	}
	const int n = app->scene->n;
	switch (action) {
	case ACT_NEXT:
		go(app, app->step + 1);
		break;
	case ACT_PREV:
		go(app, app->step - 1);
		break;
	case ACT_FIRST:
		go(app, 0);
		break;
	case ACT_LAST:
		go(app, n);
		break;
	case ACT_PAGE_NEXT:
		go(app, app->step + 10);
		break;
	case ACT_PAGE_PREV:
		go(app, app->step - 10);
		break;
	case ACT_DIGIT:
		app->entering = true;
		app->entry[0] = (char)key;
		app->entry[1] = '\0';
		break;
	case ACT_GOTO:
		app->entering = true;
		app->entry[0] = '\0';
		break;
	case ACT_HEAVY_DEC:
		rebudget(app, app->b.heavy - 1, app->b.recent);
		break;
	case ACT_HEAVY_INC:
		rebudget(app, app->b.heavy + 1, app->b.recent);
		break;
	case ACT_RECENT_DEC:
		rebudget(app, app->b.heavy, app->b.recent - 1);
		break;
	case ACT_RECENT_INC:
		rebudget(app, app->b.heavy, app->b.recent + 1);
		break;
	case ACT_COMPARE:
		/* H2O itself is always on the left. */
		do
			app->compare = (enum policy_id)((app->compare + 1) % POLICY_COUNT);
		while (!app_comparable(app->compare));
		break;
	case ACT_METRIC:
		if (app->scene->v)
			app->metric =
			        app->metric == METRIC_OUT_ERR ? METRIC_RECALL : METRIC_OUT_ERR;
		else
			snprintf(app->notice, sizeof app->notice,
			         "this scene has no values: attention recall is the only measure");
		break;
	case ACT_PLAY:
		app->playing = !app->playing;
		if (app->playing && app->step == n)
			app->step = 0; /* play from the start again */
		break;
	case ACT_FASTER:
		app->speed = clamp(app->speed + 1, 0, APP_SPEED_COUNT - 1);
		break;
	case ACT_SLOWER:
		app->speed = clamp(app->speed - 1, 0, APP_SPEED_COUNT - 1);
		break;
	case ACT_SELECT_PREV:
		select_by(app, -1);
		break;
	case ACT_SELECT_NEXT:
		select_by(app, +1);
		break;
	case ACT_HEAT_LEFT: {
		const int from = app->heat_anchor >= 0 ? app->heat_anchor : app->step - 1;
		app->heat_anchor = clamp(from - 10, 0, n - 1);
		break;
	}
	case ACT_HEAT_RIGHT:
		if (app->heat_anchor >= 0)
			app->heat_anchor += 10;
		if (app->heat_anchor >= app->step - 1)
			app->heat_anchor = -1; /* caught up: follow the step again */
		break;
	case ACT_HEAT_SELECTED:
		if (app->selected < 0)
			snprintf(app->notice, sizeof app->notice,
			         "select a token first (up/down or j/k)");
		else
			app->heat_anchor = app->selected;
		break;
	case ACT_HEAD_NEXT:
	case ACT_HEAD_PREV:
		if (app->heads == 1) {
			snprintf(app->notice, sizeof app->notice,
			         "this scene has one attention head");
			break;
		}
		app->head =
		        (app->head + (action == ACT_HEAD_NEXT ? 1 : app->heads - 1)) % app->heads;
		app->tl = app->tls[app->head];
		if (app->pool)
			timeline_pool_prefer(app->pool, app->head);
		/* Its build may be behind the step shown: wait for it there. */
		go(app, app->goal >= 0 ? app->goal : app->step);
		break;
	case ACT_OVERVIEW:
		app->overview = !app->overview;
		break;
	case ACT_MAP:
		app->map = !app->map;
		break;
	case ACT_HELP:
		app->help = true;
		break;
	case ACT_QUIT:
		if (key == KEYC_ESC && app->overview) {
			app->overview = false; /* Esc closes the overview first */
			break;
		}
		if (key == KEYC_ESC && app->selected >= 0) {
			app->selected = -1; /* Esc closes the inspector first */
			break;
		}
		return APP_QUIT;
	case ACT_NONE:
	case ACT_COUNT: {
		char name[16];
		snprintf(app->notice, sizeof app->notice,
		         "%s is not bound to anything: ? shows the keys",
		         keys_name(key, name, sizeof name));
		break;
	}
	}
	return APP_REDRAW;
}

unsigned app_key(struct app *app, uint32_t key)
{
	const unsigned flags = apply_key(app, key);
	settle(app);
	return flags;
}

void app_goto(struct app *app, int step)
{
	go(app, step);
	settle(app);
}

static unsigned tick(struct app *app)
{
	const bool building = app_building(app);
	const int built = app_built(app);
	/* While a build runs, and once after, its progress is shown. */
	unsigned flags = building || app->was_building ? APP_REDRAW : 0;
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
	return app->playing || app->goal >= 0 || app_building(app) || app->was_building;
}

int app_tick_ms(const struct app *app)
{
	if (!app->playing)
		return APP_BUILD_TICK_MS;
	return speeds_ms[clamp(app->speed, 0, APP_SPEED_COUNT - 1)];
}
