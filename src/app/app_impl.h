/*
 * app_impl: what the update function's files share (private to src/app/):
 * app.c holds the state, builds timelines and ticks; app_keys.c is what
 * each key does; app_list.c builds the cache lists a user walks and
 * searches.
 */
#ifndef H2O_APP_IMPL_H
#define H2O_APP_IMPL_H

#include "h2o/app.h"

/* What a key asks for beyond a change of state: what loads files or
 * builds timelines, which app_key does once the key is applied. */
enum app_want { APP_WANT_NOTHING, APP_WANT_BUDGETS, APP_WANT_LESSON };
struct app_intent {
	enum app_want what;
	int heavy, recent; /* BUDGETS: the budgets asked for */
	bool reset;        /* BUDGETS: they are the scene's own (r) */
	int lesson_by;     /* LESSON: +1 the next lesson, -1 the previous */
};

/* Apply KEY to the state (app_keys.c), the modes first, then the
 * bindings; what it asks for beyond that in WANT. Returns APP_ flags. */
unsigned app_keys_apply(struct app *app, uint32_t key, struct app_intent *want);

/* app_pager.c: E opens the pager (a notice when the scene has no lesson
 * text); while it is open, KEY (bound to ACTION) scrolls or closes it,
 * and its flags are returned, or 0 for a key it leaves to the help. */
void app_pager_open(struct app *app);
unsigned app_pager_key(struct app *app, uint32_t key, enum app_action action);

/* Do ACTION as its key would (app_keys.c), through the modes first. */
unsigned app_keys_act(struct app *app, enum app_action action, struct app_intent *want);

/* What an update asked for beyond the state (WANT: new budgets, another
 * lesson) done, then the shown step sought again (app.c). Returns FLAGS. */
unsigned app_finish(struct app *app, unsigned flags, const struct app_intent *want);

/* Go to STEP (clamped); one the timelines have not reached yet becomes
 * the goal, which app_tick follows as they build. */
void app_go(struct app *app, int step);

/* The leading policy's list at the shown step (app->list), built again
 * only when what it depends on changed. */
void app_list_build(struct app *app);
/* Select the next (DIR 1) or previous (DIR -1) match of the last search
 * in the list, wrapping round, and say where it stands in the notice. */
void app_search(struct app *app, int dir);
/* Select position POS and walk its list there (a notice if it cannot). */
void app_go_position(struct app *app, long pos);

/* The whole model's figures at the shown step into app->overview_total
 * (app_overview.c), when the overview is open. Seeks every head's
 * timeline: the caller seeks the shown head's after it. */
void app_overview_settle(struct app *app);

/* app_model.c: the real drop at the app's budgets, again (0, or -1 out of
 * memory, the old one kept); and everything of a model freed. */
int app_model_measure(struct app *app);
void app_model_done(struct app *app);

/* A lesson's model scene opened by . or ,: the model and tokenizer the
 * scene loaded (and keeps), then app_set_model. 0 (also for a scene
 * without a model), or -1 with one line in ERR. */
int app_open_model(struct app *app, const struct scene *sc, char *err, size_t size);

/* The lesson at PATH (INDEX on the path) opened by a job in the
 * background: loaded within app.max_memory, told against it with THREADS
 * builds at once, its model run; app_model_poll puts it in place. -1 when
 * a lesson is opening already or no job can start. */
int app_model_open_lesson(struct app *app, const char *path, int index, int threads);
/* At a tick: a job that has finished put in place (the real drop, or the
 * lesson opened, or a notice why not). APP_REDRAW while a job runs or when
 * one ended. */
unsigned app_model_poll(struct app *app);

/* app_lesson.c: . and , (BY +1 or -1 on the path); a lesson's budgets as
 * the app sets them; its size in words ("391 tokens, 40 heads"); the
 * notice of a lesson not opened because it NEEDED more than app.max_memory
 * for WHAT; and NEXT, a lesson's app, put in APP's place. */
void app_lesson_by(struct app *app, int by);
struct budget app_lesson_budget(const struct scene *sc);
void app_lesson_cost_words(const struct scene *sc, char *buf, size_t size);
/* What APP's scene holds while a lesson opens (its screens' cost, as
 * cost.h counts it, THREADS builds at once), and the bound MAX_MEMORY
 * leaves a lesson beside HELD (0: none). */
double app_lesson_held(const struct app *app, int threads);
double app_lesson_bound(double max_memory, double held);
void app_lesson_refuse(struct app *app, int index, double needed, double held, const char *what);
void app_lesson_swap(struct app *app, struct app *next, int index);

/* In a lesson, before the first budget change: keep what H2O does at the
 * budgets the scene opened with (app->baseline, app_lesson.c). */
void app_lesson_keep_baseline(struct app *app);
void app_lesson_free(struct app_baseline *base);

#endif
