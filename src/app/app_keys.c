/*
 * app_keys: what a key does, by table.
 *
 * A key goes through the modes that take keys of their own first, in
 * order (typing a number or a search, the heads overview, the help
 * pages; app_modes.c), each a small table of its keys; what no mode takes is looked up
 * in APP_BINDINGS and done by its action's handler, one short function per
 * action. Handlers change the state only: what loads files or builds
 * timelines (new budgets, another lesson) they leave as an intent, which
 * app_key performs once the key is applied.
 */
#include <stdio.h>
#include <string.h>

#include "h2o/heads.h"
#include "h2o/keys.h"
#include "h2o/scene.h"
#include "h2o/text.h"
#include "h2o/timeline.h"
#include "app_keys_impl.h"

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
	app->selected = list->pos[app_clamp(at, 0, list->len - 1)];
	app->span_len = 0;
}

/* --- The actions of APP_BINDINGS, one handler each. --- */

static unsigned act_step(struct app *app, const struct press *p, int by)
{
	(void)p;
	app_go(app, app->step + by);
	return APP_REDRAW;
}

/* A walked list takes the keys that move far: they move through it. */
static unsigned act_end(struct app *app, const struct press *p, int end)
{
	(void)p;
	if (app->walk != WALK_NONE)
		select_by(app, end < 0 ? -app->list.len - 1 : app->list.len + 1);
	else
		app_go(app, end < 0 ? 0 : app->scene->n);
	return APP_REDRAW;
}

static unsigned act_page(struct app *app, const struct press *p, int by)
{
	(void)p;
	if (app->walk != WALK_NONE)
		select_by(app, by * APP_LIST_PAGE);
	else
		app_go(app, app->step + by * 10);
	return APP_REDRAW;
}

static unsigned act_digit(struct app *app, const struct press *p, int arg)
{
	(void)arg;
	const char digit[2] = {(char)p->key, '\0'};
	app_entry_start(app, ENTRY_STEP, digit);
	return APP_REDRAW;
}

static unsigned act_entry(struct app *app, const struct press *p, int what)
{
	(void)p;
	app_entry_start(app, (enum app_entry)what, "");
	return APP_REDRAW;
}

/* New budgets mean new timelines, which app_key builds. */
static unsigned act_heavy(struct app *app, const struct press *p, int by)
{
	*p->want = (struct app_intent){
	        .what = APP_WANT_BUDGETS, .heavy = app->b.heavy + by, .recent = app->b.recent};
	return APP_REDRAW;
}

static unsigned act_recent(struct app *app, const struct press *p, int by)
{
	*p->want = (struct app_intent){
	        .what = APP_WANT_BUDGETS, .heavy = app->b.heavy, .recent = app->b.recent + by};
	return APP_REDRAW;
}

/* The scene's own budgets again, after [ ] { } moved them. */
static unsigned act_reset_budgets(struct app *app, const struct press *p, int arg)
{
	(void)arg;
	*p->want = (struct app_intent){.what = APP_WANT_BUDGETS,
	                               .heavy = app->scene->heavy,
	                               .recent = app->scene->recent,
	                               .reset = true};
	return APP_REDRAW;
}

static unsigned act_compare(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	/* H2O itself is always on the left; only the policies chosen
	 * (app_set_policies) come round, and with none of them the compared
	 * one stays. */
	for (int k = 1; k < POLICY_COUNT; k++) {
		const enum policy_id c = (enum policy_id)((app->compare + k) % POLICY_COUNT);
		if (app_comparable(c) && (app->policies & ENGINE_POLICY(c))) {
			app->compare = c;
			break;
		}
	}
	return APP_REDRAW;
}

static unsigned act_metric(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	if (app->scene->v)
		app->metric = app->metric == METRIC_OUT_ERR ? METRIC_RECALL : METRIC_OUT_ERR;
	else
		snprintf(app->notice, sizeof app->notice,
		         "this scene has no values: attention recall is the only measure");
	return APP_REDRAW;
}

static unsigned act_play(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	app->playing = !app->playing;
	if (app->playing && app->step == app->scene->n)
		app->step = 0; /* play from the start again */
	return APP_REDRAW;
}

static unsigned act_speed(struct app *app, const struct press *p, int by)
{
	(void)p;
	app->speed = app_clamp(app->speed + by, 0, APP_SPEED_COUNT - 1);
	return APP_REDRAW;
}

static unsigned act_select(struct app *app, const struct press *p, int by)
{
	(void)p;
	select_by(app, by);
	return APP_REDRAW;
}

static unsigned act_walk(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	app->walk = (enum app_walk)((app->walk + 1) % (WALK_COMPARED + 1));
	return APP_REDRAW;
}

static unsigned act_sort(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	app->sort = app->sort == SORT_POSITION ? SORT_SCORE : SORT_POSITION;
	snprintf(app->notice, sizeof app->notice, "lists by %s",
	         app->sort == SORT_SCORE ? "score, highest first"
	                                 : "position (evictions latest first)");
	return APP_REDRAW;
}

static unsigned act_search_again(struct app *app, const struct press *p, int dir)
{
	(void)p;
	app_search(app, dir);
	return APP_REDRAW;
}

static unsigned act_heat_left(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	const int from = app->heat_anchor >= 0 ? app->heat_anchor : app->step - 1;
	app->heat_anchor = app_clamp(from - 10, 0, app->scene->n - 1);
	return APP_REDRAW;
}

static unsigned act_heat_right(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	if (app->heat_anchor >= 0)
		app->heat_anchor += 10;
	if (app->heat_anchor >= app->step - 1)
		app->heat_anchor = -1; /* caught up: follow the step again */
	return APP_REDRAW;
}

static unsigned act_heat_selected(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	if (app->selected < 0)
		snprintf(app->notice, sizeof app->notice, "select a token first (up/down or j/k)");
	else
		app->heat_anchor = app->selected;
	return APP_REDRAW;
}

/* The head the overview's cursor or the panels show becomes AT. */
static void head_to(struct app *app, int at)
{
	if (app->overview)
		app->cursor = at;
	else
		app_show_head(app, at);
}

/* Within the layer: J and K go through the layers. */
static unsigned act_head(struct app *app, const struct press *p, int by)
{
	(void)p;
	const int per = heads_per_layer(app->scene);
	if (per == 1) {
		snprintf(app->notice, sizeof app->notice,
		         app->heads == 1 ? "this scene has one attention head"
		                         : "one head a layer: J and K go through the layers");
		return APP_REDRAW;
	}
	const int at = app->overview ? app->cursor : app->head;
	const int layer = at / per, h = at % per;
	head_to(app, layer * per + (h + (by > 0 ? 1 : per - 1)) % per);
	return APP_REDRAW;
}

static unsigned act_layer(struct app *app, const struct press *p, int by)
{
	(void)p;
	const int per = heads_per_layer(app->scene), layers = app->heads / per;
	if (layers == 1) {
		snprintf(app->notice, sizeof app->notice,
		         per == 1 ? "this scene has one layer and one head"
		                  : "this scene has one layer: Tab and Shift-Tab pick its "
		                    "heads");
		return APP_REDRAW;
	}
	const int at = app->overview ? app->cursor : app->head;
	const int layer = (at / per + (by > 0 ? 1 : layers - 1)) % layers;
	head_to(app, layer * per + at % per);
	return APP_REDRAW;
}

static unsigned act_overview(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	/* A grid of one cell would be an empty screen beside the panels. */
	if (app->heads == 1 && !app->overview) {
		snprintf(app->notice, sizeof app->notice,
		         "this scene has one attention head: o shows a grid of several");
		return APP_REDRAW;
	}
	app->overview = !app->overview;
	app->vectors = false;
	app->cursor = app->head;
	return APP_REDRAW;
}

static unsigned act_map(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	app->map = !app->map;
	app->model_view = false;
	return APP_REDRAW;
}

static unsigned act_model(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	if (!app->drop) {
		snprintf(app->notice, sizeof app->notice,
		         "no model here: t shows a model scene's text and perplexity");
		return APP_REDRAW;
	}
	app->model_view = !app->model_view;
	app->map = false;
	return APP_REDRAW;
}

static unsigned act_strip(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	app->strip_hidden = !app->strip_hidden;
	return APP_REDRAW;
}

/* The vectors need the shown head's query and key rows, or at least its
 * value rows (a scene that gives its weights): a scene of weights alone
 * has no vector to show, and the key says so. */
static unsigned act_vectors(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	if (!app->vectors && !app_has_vectors(app)) {
		snprintf(app->notice, sizeof app->notice,
		         "no q, k or v rows here: v shows a scene's vectors (lessons 5 to 7)");
		return APP_REDRAW;
	}
	app->vectors = !app->vectors;
	app->overview = false;
	return APP_REDRAW;
}

/* Another lesson loads its scene (and model), which app_key does. */
static unsigned act_lesson_by(struct app *app, const struct press *p, int by)
{
	(void)app;
	*p->want = (struct app_intent){.what = APP_WANT_LESSON, .lesson_by = by};
	return APP_REDRAW;
}

static unsigned act_lesson_text(struct app *app, const struct press *p, int arg)
{
	(void)arg;
	if (!*app->scene->watch && app->scene->n_notes == 0)
		snprintf(app->notice, sizeof app->notice,
		         "this scene has no lesson text (no \"watch\" or \"notes\")");
	else if (p->action == ACT_LESSON)
		app->lesson_hidden = !app->lesson_hidden;
	else
		app_pager_open(app);
	return APP_REDRAW;
}

static unsigned act_help(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	app->help = true;
	app->help_page = 0;
	return APP_REDRAW;
}

/* Esc closes the innermost thing open, one at a time, and never quits: a
 * user dismissing a notice or leaving a mode with Esc, as in htop or tig,
 * must not lose the screen. */
static unsigned act_close(struct app *app, const struct press *p, int arg)
{
	(void)p, (void)arg;
	if (app->overview)
		app->overview = false;
	else if (app->vectors)
		app->vectors = false;
	else if (app->walk != WALK_NONE)
		app->walk = WALK_NONE;
	else if (app->selected >= 0)
		app->selected = -1;
	else if (app->map)
		app->map = false;
	else if (app->model_view)
		app->model_view = false;
	return APP_REDRAW;
}

static unsigned act_quit(struct app *app, const struct press *p, int arg)
{
	(void)app, (void)p, (void)arg;
	return APP_QUIT;
}

static unsigned act_unbound(struct app *app, const struct press *p, int arg)
{
	(void)arg;
	char name[16];
	snprintf(app->notice, sizeof app->notice, "%s is not bound to anything: ? shows the keys",
	         keys_name(p->key, name, sizeof name));
	return APP_REDRAW;
}

/* Every action's handler and its argument. */
static const struct {
	key_fn *fn;
	int arg;
} actions[ACT_COUNT] = {
        [ACT_NONE] = {act_unbound, 0},
        [ACT_NEXT] = {act_step, +1},
        [ACT_PREV] = {act_step, -1},
        [ACT_FIRST] = {act_end, -1},
        [ACT_LAST] = {act_end, +1},
        [ACT_PAGE_NEXT] = {act_page, +1},
        [ACT_PAGE_PREV] = {act_page, -1},
        [ACT_DIGIT] = {act_digit, 0},
        [ACT_GOTO] = {act_entry, ENTRY_STEP},
        [ACT_HEAVY_DEC] = {act_heavy, -1},
        [ACT_HEAVY_INC] = {act_heavy, +1},
        [ACT_RECENT_DEC] = {act_recent, -1},
        [ACT_RECENT_INC] = {act_recent, +1},
        [ACT_RESET_BUDGETS] = {act_reset_budgets, 0},
        [ACT_COMPARE] = {act_compare, 0},
        [ACT_METRIC] = {act_metric, 0},
        [ACT_PLAY] = {act_play, 0},
        [ACT_FASTER] = {act_speed, +1},
        [ACT_SLOWER] = {act_speed, -1},
        [ACT_SELECT_PREV] = {act_select, -1},
        [ACT_SELECT_NEXT] = {act_select, +1},
        [ACT_WALK] = {act_walk, 0},
        [ACT_SORT] = {act_sort, 0},
        [ACT_SEARCH] = {act_entry, ENTRY_SEARCH},
        [ACT_SEARCH_NEXT] = {act_search_again, +1},
        [ACT_SEARCH_PREV] = {act_search_again, -1},
        [ACT_POSITION] = {act_entry, ENTRY_POSITION},
        [ACT_HEAT_LEFT] = {act_heat_left, 0},
        [ACT_HEAT_RIGHT] = {act_heat_right, 0},
        [ACT_HEAT_SELECTED] = {act_heat_selected, 0},
        [ACT_HEAD_NEXT] = {act_head, +1},
        [ACT_HEAD_PREV] = {act_head, -1},
        [ACT_LAYER_NEXT] = {act_layer, +1},
        [ACT_LAYER_PREV] = {act_layer, -1},
        [ACT_OVERVIEW] = {act_overview, 0},
        [ACT_MAP] = {act_map, 0},
        [ACT_MODEL] = {act_model, 0},
        [ACT_STRIP] = {act_strip, 0},
        [ACT_VECTORS] = {act_vectors, 0},
        [ACT_LESSON_NEXT] = {act_lesson_by, +1},
        [ACT_LESSON_PREV] = {act_lesson_by, -1},
        [ACT_LESSON] = {act_lesson_text, 0},
        [ACT_LESSON_ALL] = {act_lesson_text, 0},
        [ACT_HELP] = {act_help, 0},
        [ACT_CLOSE] = {act_close, 0},
        [ACT_QUIT] = {act_quit, 0},
};

/* KEY through mode M: its handler's flags, or PASS. */
static unsigned mode_apply(const struct mode *m, struct app *app, const struct press *p)
{
	for (size_t i = 0; i < m->count; i++) {
		const struct mode_key *k = &m->keys[i];
		if (k->key ? k->key == p->key : k->action == p->action)
			return k->fn(app, p, k->arg);
	}
	return m->other(app, p, 0);
}

/* The press P through the modes, then its action's handler. */
static unsigned apply(struct app *app, const struct press p)
{
	for (size_t i = 0; i < app_mode_count; i++) {
		if (!app_modes[i].on(app))
			continue;
		const unsigned flags = mode_apply(&app_modes[i], app, &p);
		if (flags != PASS)
			return flags;
	}
	/* An action without a handler would be a key that does nothing. */
	key_fn *fn = actions[p.action].fn ? actions[p.action].fn : act_unbound;
	return fn(app, &p, actions[p.action].arg);
}

unsigned app_keys_apply(struct app *app, uint32_t key, struct app_intent *want)
{
	*want = (struct app_intent){.what = APP_WANT_NOTHING};
	app->notice[0] = '\0';
	if (key == KEYC_RESIZE)
		return APP_REDRAW;
	return apply(app, (struct press){key, app_action_of(key), want});
}

unsigned app_keys_act(struct app *app, enum app_action action, struct app_intent *want)
{
	*want = (struct app_intent){.what = APP_WANT_NOTHING};
	app->notice[0] = '\0';
	return apply(app, (struct press){KEYC_NONE, action, want});
}
