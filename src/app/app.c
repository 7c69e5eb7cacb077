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
#include "h2o/keys.h"
#include "h2o/lessons.h"
#include "h2o/scene.h"
#include "h2o/text.h"
#include "h2o/timeline.h"
#include "app_impl.h"

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

static struct policy_budget budget_of(int heavy, int recent, int sinks_given,
                                      const struct scene *sc)
{
	return (struct policy_budget){
	        .heavy = heavy,
	        .recent = recent,
	        .sinks = policy_sinks_for(sinks_given, heavy + recent),
	        .n = sc->n,
	        .prompt = sc->prompt,
	        .layers = sc->layers,
	        .interval = sc->interval,
	        .kv_heads = sc->kv_heads,
	};
}

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

/* Free timelines TLS of the heads (and their POOL, which owns them). */
/* The timelines of a budget, and then the plans they shared (B's). */
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

/* A budget's layer-wide plans, shared by every head's engines (plan.h):
 * false when out of memory. */
static bool plan_budget(const struct scene *scene, struct policy_budget *b)
{
	b->plans = engine_plans_new(scene, b);
	return b->plans != NULL;
}

/* Seek the shown step: what the view reads (app.h, shown and list). */
static void settle(struct app *app)
{
	if (app->overview)
		app_overview_settle(app);
	app->shown = timeline_seek_lite(app->tl, app->step, &app->shown_rec);
	app_list_build(app);
}

static int init(struct app *app, const struct scene *scene, int heavy, int recent, int sinks,
                enum policy_id compare, bool background)
{
	memset(app, 0, sizeof *app);
	app->background = background;
	app->goal = -1;
	app->scene = scene;
	app->sinks_given = sinks;
	app->b = budget_of(heavy, recent, sinks, scene);
	if (!plan_budget(scene, &app->b))
		return -1;
	app->compare = compare;
	app->policies = ENGINE_ALL_POLICIES;
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
	if (build_timelines(app, &app->b, app->tls, &app->pool) < 0)
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
	return init(app, scene, heavy, recent, sinks, compare, false);
}

int app_init_background(struct app *app, const struct scene *scene, int heavy, int recent,
                        int sinks, enum policy_id compare)
{
	return init(app, scene, heavy, recent, sinks, compare, true);
}

void app_set_policies(struct app *app, unsigned policies)
{
	app->policies = policies ? policies & ENGINE_ALL_POLICIES : ENGINE_ALL_POLICIES;
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
	free_timelines(app, app->tls, app->pool, app->b.plans);
	app->b.plans = NULL;
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
	struct policy_budget b = budget_of(heavy, recent, app->sinks_given, app->scene);
	struct timeline **tls = calloc((size_t)app->heads, sizeof *tls);
	struct timeline_pool *pool = NULL;
	if (!tls || !plan_budget(app->scene, &b) || build_timelines(app, &b, tls, &pool) < 0) {
		free(tls);
		engine_plans_free(b.plans);
		snprintf(app->notice, sizeof app->notice, "out of memory: budgets unchanged");
		return;
	}
	app_lesson_keep_baseline(app);
	free_timelines(app, app->tls, app->pool, app->b.plans);
	app->tls = tls;
	app->pool = pool;
	app->tl = tls[app->head];
	app->list.valid = false;
	app->b = b;
	app->was_building = app->background;
	app->build_began = app->clock = seconds_now();
	go(app, app->goal >= 0 ? app->goal : app->step);
	if (app_model_measure(app) != 0) {
		snprintf(app->notice, sizeof app->notice,
		         "out of memory: the model's figures are still the old budgets'");
		return;
	}
	snprintf(app->notice, sizeof app->notice, "budgets now heavy %d + recent %d: recomputed",
	         heavy, recent);
}

/* Move the selection by DELTA rows through the leading list; with nothing
 * selected (or the selection not arrived yet), as if it sat just before
 * the top (DELTA > 0) or just after the bottom. */
static void select_by(struct app *app, int delta)
{
	const struct app_list *list = &app->list;
	if (list->len == 0) {
		snprintf(app->notice, sizeof app->notice, "no token yet: step forward first");
		return;
	}
	const int sel = app->selected;
	int at = sel >= 0 && sel < app->scene->n ? list->index[sel] : -1;
	if (at < 0)
		at = delta > 0 ? delta - 1 : list->len + delta;
	else
		at += delta;
	app->selected = list->pos[clamp(at, 0, list->len - 1)];
}

/* The number typed so far. */
static long entry_number(const struct app *app)
{
	long want = 0;
	for (const char *c = app->entry; *c; c++)
		want = want * 10 + (*c - '0');
	return want;
}

static void entry_done(struct app *app)
{
	const enum app_entry what = app->entering;
	app->entering = ENTRY_NONE;
	if (what == ENTRY_SEARCH) {
		/* Enter alone searches again for the last text. */
		if (app->entry[0])
			snprintf(app->query, sizeof app->query, "%s", app->entry);
		if (app->query[0])
			app_search(app, +1);
		return;
	}
	if (!app->entry[0])
		return;
	const long want = entry_number(app);
	if (what == ENTRY_POSITION) {
		app_go_position(app, want);
		return;
	}
	if (want > app->scene->n)
		snprintf(app->notice, sizeof app->notice, "no step %ld: the last step is %d", want,
		         app->scene->n);
	go(app, (int)(want > app->scene->n ? app->scene->n : want));
}

/* Keys while something is typed. Returns true when handled. */
static bool entry_key(struct app *app, uint32_t key)
{
	size_t len = strlen(app->entry);
	const bool text = app->entering == ENTRY_SEARCH;
	/* Text takes printable characters (no controls, no surrogates). */
	const bool printable = key >= ' ' && key != 0x7F && (key < 0x80 || key >= 0xA0) &&
	                       (key < 0xD800 || key > 0xDFFF) && key < KEYC_BASE;
	if (text ? printable : key >= '0' && key <= '9') {
		char bytes[4];
		/* Numbers up to nine digits; text while its bytes fit. */
		const size_t add = text ? text_encode(key, bytes) : 1;
		if (!text)
			bytes[0] = (char)key;
		if (len + add < sizeof app->entry && (text || len < 9)) {
			memcpy(app->entry + len, bytes, add);
			app->entry[len + add] = '\0';
		}
		return true;
	}
	if (key == KEYC_BACKSPACE) {
		if (len == 0) {
			app->entering = ENTRY_NONE;
			return true;
		}
		/* A whole character: back over its continuation bytes. */
		while (len > 1 && ((unsigned char)app->entry[len - 1] & 0xC0) == 0x80)
			len--;
		app->entry[len - 1] = '\0';
		return true;
	}
	if (key == KEYC_ENTER) {
		entry_done(app);
		return true;
	}
	if (key == KEYC_ESC) {
		app->entering = ENTRY_NONE;
		return true;
	}
	/* Any other key ends the entry and does what it always does. */
	app->entering = ENTRY_NONE;
	return false;
}

static void start_entry(struct app *app, enum app_entry what, const char *first)
{
	app->entering = what;
	snprintf(app->entry, sizeof app->entry, "%s", first);
}

/* Open lesson INDEX of the path in place of the scene shown, with its own
 * budgets, keeping the compared policy and how the lesson text shows. A
 * lesson that cannot be opened leaves everything as it was, with a notice
 * saying why. */
static void open_lesson(struct app *app, int index)
{
	char path[4096], err[SCENE_ERROR_MAX];
	struct scene *sc;
	lessons_path(app->lessons, index, path, sizeof path);
	if (scene_load_file(path, &sc, err) != 0) {
		snprintf(app->notice, sizeof app->notice, "lesson %d: %.130s", index + 1, err);
		return;
	}
	struct app next;
	if (init(&next, sc, sc->heavy, sc->recent, -1, app->compare, app->background) != 0) {
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
	next.policies = app->policies;
	next.lessons = app->lessons;
	next.lesson = index;
	next.lesson_hidden = app->lesson_hidden;
	next.lesson_all = app->lesson_all;
	app_done(app);
	*app = next;
}

static void lesson_by(struct app *app, int by)
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

/* Show query head HEAD's panels: its timeline, at the step shown. */
static void show_head(struct app *app, int head)
{
	app->head = head;
	app->tl = app->tls[head];
	if (app->pool)
		timeline_pool_prefer(app->pool, head);
	/* Its build may be behind the step shown: wait for it there. */
	go(app, app->goal >= 0 ? app->goal : app->step);
}

/* The overview's keys: the arrows move its cursor over the grid (rows
 * are layers, columns the heads of a layer), Enter opens the head under
 * it. Returns true when KEY was one of them. */
static bool overview_key(struct app *app, uint32_t key)
{
	const int per = heads_per_layer(app->scene), layers = app->heads / per;
	int layer = app->cursor / per, h = app->cursor % per;
	switch (key) {
	case KEYC_LEFT:
		h = h > 0 ? h - 1 : 0;
		break;
	case KEYC_RIGHT:
		h = h < per - 1 ? h + 1 : per - 1;
		break;
	case KEYC_UP:
		layer = layer > 0 ? layer - 1 : 0;
		break;
	case KEYC_DOWN:
		layer = layer < layers - 1 ? layer + 1 : layers - 1;
		break;
	case KEYC_ENTER:
		app->overview = false;
		show_head(app, app->cursor);
		return true;
	default:
		return false;
	}
	app->cursor = layer * per + h;
	return true;
}

static unsigned apply_key(struct app *app, uint32_t key)
{
	app->notice[0] = '\0';
	if (key == KEYC_RESIZE)
		return APP_REDRAW;
	if (app->entering && entry_key(app, key))
		return APP_REDRAW;
	const enum app_action action = app_action_of(key);
	if (app->overview && !app->help && overview_key(app, key))
		return APP_REDRAW;
	if (app->help) {
		/* Help is modal: the keys that step turn its pages (on past the
		 * last closes it), q quits, any other key closes it. */
		if (action == ACT_NEXT || action == ACT_PAGE_NEXT || action == ACT_SELECT_NEXT) {
			app->help = ++app->help_page < APP_HELP_PAGES;
			return APP_REDRAW;
		}
		if (action == ACT_PREV || action == ACT_PAGE_PREV || action == ACT_SELECT_PREV) {
			app->help_page -= app->help_page > 0;
			return APP_REDRAW;
		}
		app->help = false;
		return action == ACT_QUIT ? APP_QUIT : APP_REDRAW;
	}
	const int n = app->scene->n;
	switch (action) {
	case ACT_NEXT:
		go(app, app->step + 1);
		break;
	case ACT_PREV:
		go(app, app->step - 1);
		break;
	/* A walked list takes the keys that move far: they move through it. */
	case ACT_FIRST:
		if (app->walk != WALK_NONE)
			select_by(app, -app->list.len - 1);
		else
			go(app, 0);
		break;
	case ACT_LAST:
		if (app->walk != WALK_NONE)
			select_by(app, app->list.len + 1);
		else
			go(app, n);
		break;
	case ACT_PAGE_NEXT:
		if (app->walk != WALK_NONE)
			select_by(app, APP_LIST_PAGE);
		else
			go(app, app->step + 10);
		break;
	case ACT_PAGE_PREV:
		if (app->walk != WALK_NONE)
			select_by(app, -APP_LIST_PAGE);
		else
			go(app, app->step - 10);
		break;
	case ACT_DIGIT: {
		const char digit[2] = {(char)key, '\0'};
		start_entry(app, ENTRY_STEP, digit);
		break;
	}
	case ACT_GOTO:
		start_entry(app, ENTRY_STEP, "");
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
		/* H2O itself is always on the left; only the policies chosen
		 * (app_set_policies) come round, and with none of them the
		 * compared one stays. */
		for (int k = 1; k < POLICY_COUNT; k++) {
			const enum policy_id p =
			        (enum policy_id)((app->compare + k) % POLICY_COUNT);
			if (app_comparable(p) && (app->policies & ENGINE_POLICY(p))) {
				app->compare = p;
				break;
			}
		}
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
	case ACT_WALK:
		app->walk = (enum app_walk)((app->walk + 1) % (WALK_COMPARED + 1));
		break;
	case ACT_SORT:
		app->sort = app->sort == SORT_POSITION ? SORT_SCORE : SORT_POSITION;
		snprintf(app->notice, sizeof app->notice, "lists by %s",
		         app->sort == SORT_SCORE ? "score, highest first"
		                                 : "position (evictions latest first)");
		break;
	case ACT_SEARCH:
		start_entry(app, ENTRY_SEARCH, "");
		break;
	case ACT_SEARCH_NEXT:
	case ACT_SEARCH_PREV:
		app_search(app, action == ACT_SEARCH_NEXT ? +1 : -1);
		break;
	case ACT_POSITION:
		start_entry(app, ENTRY_POSITION, "");
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
	case ACT_HEAD_PREV: {
		/* Within the layer: J and K go through the layers. */
		const int per = heads_per_layer(app->scene);
		if (per == 1) {
			snprintf(app->notice, sizeof app->notice,
			         app->heads == 1
			                 ? "this scene has one attention head"
			                 : "one head a layer: J and K go through the layers");
			break;
		}
		const int at = app->overview ? app->cursor : app->head;
		const int layer = at / per, h = at % per;
		const int to = layer * per + (h + (action == ACT_HEAD_NEXT ? 1 : per - 1)) % per;
		if (app->overview)
			app->cursor = to;
		else
			show_head(app, to);
		break;
	}
	case ACT_LAYER_NEXT:
	case ACT_LAYER_PREV: {
		const int per = heads_per_layer(app->scene), layers = app->heads / per;
		if (layers == 1) {
			snprintf(app->notice, sizeof app->notice,
			         per == 1 ? "this scene has one layer and one head"
			                  : "this scene has one layer: Tab and Shift-Tab pick its "
			                    "heads");
			break;
		}
		const int at = app->overview ? app->cursor : app->head;
		const int layer = (at / per + (action == ACT_LAYER_NEXT ? 1 : layers - 1)) % layers;
		if (app->overview)
			app->cursor = layer * per + at % per;
		else
			show_head(app, layer * per + at % per);
		break;
	}
	case ACT_OVERVIEW:
		/* A grid of one cell would be an empty screen beside the panels. */
		if (app->heads == 1 && !app->overview) {
			snprintf(app->notice, sizeof app->notice,
			         "this scene has one attention head: o shows a grid of several");
			break;
		}
		app->overview = !app->overview;
		app->cursor = app->head;
		break;
	case ACT_MAP:
		app->map = !app->map;
		app->model_view = false;
		break;
	case ACT_MODEL:
		if (!app->drop) {
			snprintf(app->notice, sizeof app->notice,
			         "no model here: t shows a model scene's text and perplexity");
			break;
		}
		app->model_view = !app->model_view;
		app->map = false;
		break;
	case ACT_LESSON_NEXT:
		lesson_by(app, +1);
		break;
	case ACT_LESSON_PREV:
		lesson_by(app, -1);
		break;
	case ACT_LESSON:
	case ACT_LESSON_ALL:
		if (!*app->scene->watch && app->scene->n_notes == 0)
			snprintf(app->notice, sizeof app->notice,
			         "this scene has no lesson text (no \"watch\" or \"notes\")");
		else if (action == ACT_LESSON)
			app->lesson_hidden = !app->lesson_hidden;
		else {
			/* Asking for all of it shows it. */
			app->lesson_all = app->lesson_hidden || !app->lesson_all;
			app->lesson_hidden = false;
		}
		break;
	case ACT_HELP:
		app->help = true;
		app->help_page = 0;
		break;
	case ACT_CLOSE:
		/* Esc closes the innermost thing open, one at a time, and never
		 * quits: a user dismissing a notice or leaving a mode with Esc, as
		 * in htop or tig, must not lose the screen. */
		if (app->overview)
			app->overview = false;
		else if (app->walk != WALK_NONE)
			app->walk = WALK_NONE;
		else if (app->selected >= 0)
			app->selected = -1;
		else if (app->map)
			app->map = false;
		else if (app->model_view)
			app->model_view = false;
		else if (app->lesson_all)
			app->lesson_all = false;
		break;
	case ACT_QUIT:
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
	app->clock = seconds_now();
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
